"""Kernel ridge regression over the Gaussian bandwidth or over lambda: the search side (exact
solves by one Cholesky factorization, restoration by the best scaling).  The certificate side is
:mod:`.bound`; leave-one-out cross-validation along a path is :mod:`.loocv`.

.. math::

    \\min_c\\; \\lambda\\, c^\\top K_t c + \\lVert K_t c - y \\rVert^2,
    \\qquad
    \\max_a\\; 2 a^\\top y - \\lVert a \\rVert^2 - \\tfrac1\\lambda a^\\top K_t a.
"""

from __future__ import annotations

import numpy as np

from approxpath.compute.parallelism import load_blas
from approxpath.kernel_problem import KernelProblem
from approxpath.moving import Moving, is_moving, value_at
from approxpath.numerics import log_mid
from approxpath.problem import Declaration
from approxpath.registry import register

from .bound import RidgeBound, RidgeDual, RidgePrimal

__all__ = ["KernelRidge"]


def _best_scale(num, den):
    """argmax_s 2 s num - s^2 den (den >= 0); 1 (keep the point) when den = 0."""
    return num / den if den > 0 else 1.0


@register
class KernelRidge(KernelProblem):
    """Kernel ridge regression with a kernel exp(-tD); path over the bandwidth ``t`` or ``lam``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float, default 0.1
        Ridge weight :math:`\\lambda` (fixed when ``parameter="bandwidth"``; the top of the default
        interval on the lambda path).
    bandwidth : float, optional
        Fixed ``t`` of the kernel when ``parameter="lam"`` (required then).
    parameter : {"bandwidth", "lam"}
        The path parameter.
    kernel : {"gaussian", "laplacian", "ard", "precomputed"}, default "gaussian"
        The distances D of the kernel exp(-tD): squared Euclidean, l1, feature-weighted squared
        Euclidean, or given (then X is D, n x n; docs/kernels.md).
    feature_weights : sequence of float, optional
        The weights w_k >= 0 of kernel="ard": D = sum_k w_k (x_k - x'_k)^2.
    """

    name = "kernel_ridge"
    Bound = RidgeBound
    backends = ("cholesky", "clarabel")  # (not SCS: the declaration has no constraint rows, which SCS refuses)

    def __init__(self, X, y, *, lam=0.1, bandwidth=None, parameter="bandwidth",
                 kernel="gaussian", feature_weights=None):
        super().__init__(X, y, lam=lam, bandwidth=bandwidth, parameter=parameter,
                         kernel=kernel, feature_weights=feature_weights)

    def make_bound(self, X, y, options):
        # kernels and products from a cache (the same values, bit for bit): a search meets the
        # same few bandwidths again and again (piece ends, the guide's middles, the restorations)
        return self.Bound(X, y, cache=True, **options)

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=30, seed=2)
        return [(cls(X, y, lam=0.1), (2.0**-3, 2.0**3), 0.05),
                (cls(X, y, lam=0.1, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05)]

    def smallest_weight(self):
        """:math:`n e`, with :math:`e` the rounding error of one computed kernel entry
        (``bound.entry_error``): the computed :math:`K_t` is within :math:`\\lVert\\Delta
        K\\rVert_2 \\le \\lVert\\Delta K\\rVert_F \\le n e` of the exact one, so a ridge
        :math:`\\lambda I` no larger is within the kernel's own rounding: the problem is
        numerically the unpenalized interpolation, whose exact solves crawl or fail (a path at
        lam = 1e-16 on 100 sinc points sat at its first bandwidth for minutes)."""
        return self.n * self.bound.entry_error

    def null_objective(self):
        """The objective of the zero model (c = 0): ``||y||^2``, the unit of a scale-free eps."""
        return float(self.y @ self.y)

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        K = self.gram(t)
        c = cp.Variable(self.n, name="c")
        obj = lam * cp.quad_form(c, cp.psd_wrap(K)) + cp.sum_squares(K @ c - self.y)
        return Declaration(cp.Problem(cp.Minimize(obj)), dict(c=c))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        a = cp.Variable(self.n, name="a")
        obj = 2 * (self.y @ a) - cp.sum_squares(a) - cp.quad_form(a, cp.psd_wrap(self.gram(t))) / lam
        return Declaration(cp.Problem(cp.Maximize(obj)), dict(a=a))

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        from approxpath.solvers.conic import solve_cvxpy

        bw, lam = self.sweep.at(tau)
        Kc = self.gram(tau) @ primal.c
        s = cp.Variable()  # nothing is constrained: the best multiple of the carried c
        solve_cvxpy(cp.Problem(cp.Minimize(lam * float(primal.c @ Kc) * cp.square(s) + cp.sum_squares(s * Kc - self.y))))
        return RidgePrimal(c=float(s.value) * primal.c)

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        from approxpath.solvers.conic import solve_cvxpy

        bw, lam = self.sweep.at(tau)
        a = dual.a
        s = cp.Variable()  # the best multiple of the carried a
        quad = float(a @ a) + float(a @ (self.gram(tau) @ a)) / lam
        solve_cvxpy(cp.Problem(cp.Maximize(2 * float(a @ self.y) * s - quad * cp.square(s))))
        return RidgeDual(a=float(s.value) * a)

    # -------------------------------------------------------------- exact solve
    def candidate(self, backend, t, warm=None):
        """``cholesky``: the closed form, one Cholesky factorization of :math:`K_t + \\lambda I`;
        ``clarabel``/``scs``: the CVXPY declarations (the generic route, a fallback)."""
        if backend != "cholesky":
            return super().candidate(backend, t, warm)
        bw, lam = self.sweep.at(t)
        K = self.gram(t)
        import scipy.linalg  # (here: `approxpath problems` lists the problem without it, ~0.2 s)

        load_blas()  # (scipy's OpenBLAS on one thread from this first use on)
        c = scipy.linalg.cho_solve(scipy.linalg.cho_factor(K + lam * np.eye(self.n)), self.y)
        # a = lam c (equal to y - K c at the optimum) leaves only the solve's residual in the gap,
        # ||(K + lam I) c - y||^2; a = y - K c would leave (1/lam) r'K r, far larger at small lam
        return RidgePrimal(c=c), RidgeDual(a=lam * c)

    # -------------------------------------------------------------- numpy maps
    def restore(self, primal, dual, lo, hi=None):
        """The best multiples of the carried ``c`` and ``a`` at the piece's (log-scale) middle
        (neither side has constraints: any pair is feasible everywhere).  A pair moving across
        the piece (the driver's interpolation of two exact solves) keeps its primal and gets the
        dual :math:`a(t) = \\lambda c(t)` (the same weights; :math:`\\lambda c = y - K c` at the
        optimum), which leaves only the residual :math:`\\lVert (K_t + \\lambda I)c(t) - y\\rVert^2`
        in the gap.  On the λ path a moving pair is kept as it is (feasible): the driver's interpolation
        of two exact solves, its dual's points :math:`\\lambda_k c_k` (:mod:`.weight_path`)."""
        if (is_moving(primal) or is_moving(dual)) and not self.sweep.along_bandwidth:
            return primal, dual
        if is_moving(primal) and self.sweep.along_bandwidth:
            points = tuple(RidgeDual(a=self.sweep.weight * np.asarray(p.c, dtype=float)) for p in primal.points)
            return primal, Moving(points, primal.weights, primal.span)
        return self._restore_primal(primal, lo, hi), self._restore_dual(value_at(dual, lo), lo, hi)

    def _restore_primal(self, primal, lo, hi=None):
        mid = log_mid(lo, lo if hi is None else hi)
        bw, lam = self.sweep.at(mid)
        Kc = self.gram(mid) @ primal.c
        return RidgePrimal(c=_best_scale(float(self.y @ Kc), lam * float(primal.c @ Kc) + float(Kc @ Kc)) * primal.c)

    def _restore_dual(self, dual, lo, hi=None):
        mid = log_mid(lo, lo if hi is None else hi)
        bw, lam = self.sweep.at(mid)
        a = dual.a
        return RidgeDual(a=_best_scale(float(a @ self.y), float(a @ a) + float(a @ (self.gram(mid) @ a)) / lam) * a)

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """:func:`~approxpath.problem.restored_gaps` vectorized over ``thetas`` (k,): the kernel
        products of the combinations are the combinations of the two ends' (one product with
        four columns), then each weight's best scalings of c and a at ``tau`` and its gap in
        O(n), as computed."""
        bw, lam = self.sweep.at(tau)
        th = np.asarray(thetas, dtype=float)
        mix = np.stack([1.0 - th, th])  # (2, k)
        ends = np.column_stack([np.asarray(value_at(p, tau).c, dtype=float) for p, _ in (a, b)]
                               + [np.asarray(value_at(d, tau).a, dtype=float) for _, d in (a, b)])
        K_ends = self.kernels.products(bw, ends, order=0)[0]  # one pass over exp(-tD), four columns
        C, A, KC, KA = ends[:, :2] @ mix, ends[:, 2:] @ mix, K_ends[:, :2] @ mix, K_ends[:, 2:] @ mix
        y = self.y
        yKc, cKc, KcKc = y @ KC, np.einsum("ik,ik->k", C, KC), np.einsum("ik,ik->k", KC, KC)
        ay, aa, aKa = y @ A, np.einsum("ik,ik->k", A, A), np.einsum("ik,ik->k", A, KA)
        den_c, den_a = lam * cKc + KcKc, aa + aKa / lam
        with np.errstate(divide="ignore", invalid="ignore"):  # as _best_scale: 1 where the denominator is 0
            s1 = np.where(den_c > 0, yKc / den_c, 1.0)
            s2 = np.where(den_a > 0, ay / den_a, 1.0)
        r = s1 * KC - y[:, None]
        primal = lam * s1 * s1 * cKc + np.einsum("ik,ik->k", r, r)
        dual = 2.0 * s2 * ay - s2 * s2 * aa - s2 * s2 * aKa / lam
        return primal - dual

    def dual_from_primal(self, primal, tau):
        """The residual ``y - K c`` (the optimal dual at the optimum)."""
        return RidgeDual(a=self.y - self.gram(tau) @ primal.c)

    def primal_objective(self, primal, tau):
        bw, lam = self.sweep.at(tau)
        Kc = self.gram(tau) @ primal.c
        return lam * float(primal.c @ Kc) + float(np.sum((Kc - self.y) ** 2))

    def dual_objective(self, dual, tau):
        bw, lam = self.sweep.at(tau)
        a = dual.a
        return 2.0 * float(a @ self.y) - float(a @ a) - float(a @ (self.gram(tau) @ a)) / lam

    def primal_violation(self, primal, tau):
        return 0.0 if np.all(np.isfinite(primal.c)) else np.inf  # unconstrained

    def dual_violation(self, dual, tau):
        return 0.0 if np.all(np.isfinite(dual.a)) else np.inf  # unconstrained

    def predict(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j c_j k_t(x_j, x)` at the rows of ``X_new`` (m, d): shape (m,)."""
        return self.cross_kernel(tau, X_new) @ primal.c
