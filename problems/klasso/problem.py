"""Kernelized LASSO (kLASSO) over the Gaussian bandwidth or over lambda: the search side (exact
solves, restoration, interpolation).  The certificate side is :mod:`.bound`.

.. math::

    \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K_t\\beta - \\beta_0 \\mathbf 1\\rVert^2
    + \\lambda \\lVert\\beta\\rVert_1,

    \\max_{u}\\; y^\\top u - \\tfrac12 \\lVert u\\rVert^2
    \\quad\\text{s.t.}\\quad \\lVert K_t u\\rVert_\\infty \\le \\lambda,\\; \\mathbf 1^\\top u = 0,

with :math:`K_t = \\exp(-tD)`; at the optimum :math:`u` is the residual.  Both parameters
move the dual set, so the dual is restored by scaling: a carried dual is :math:`s\\,u` with
:math:`\\mathbf 1^\\top u = 0` exactly (``u`` on a dyadic grid) and the best feasible
:math:`s = \\min(y^\\top u/\\lVert u\\rVert^2, \\lambda / \\max_\\tau\\lVert K_\\tau u\\rVert_\\infty)`
on the piece; on a piece of the bandwidth path an interpolated dual instead moves with
:math:`t` (its combination weight drifts, :meth:`KLasso.restore`) and is scaled feasible on
the whole piece.  The primal interpolates the two exact solves' :math:`\\beta` there as well,
with :math:`\\beta_0 = \\text{mean}(y - K_\\tau\\beta)` refitted at the piece's ends; elsewhere it
keeps :math:`\\beta` and refits :math:`\\beta_0` once, at the piece's middle.
"""

from __future__ import annotations


import math

import numpy as np

from approxpath.kernel_problem import KernelProblem
from approxpath.moving import is_moving, value_at
from approxpath.numerics import fp_margin, log_mid, weight_resolution, zero_sum
from approxpath.problem import Declaration
from approxpath.registry import register
from approxpath.solvers import current_settings
from approxpath.solvers.conic import solve_cvxpy, solve_qp
from approxpath.solvers.lasso import solve_klasso

from .._regression import SAFETY
from .bound import KLassoBound, KLassoDual, KLassoPrimal
from .restore import bandwidth_restore, best_scale, lambda_restore, middle_primal, scaled_dual
from .search import SearchBound
from .solve import gram_qp, polish

__all__ = ["KLasso"]

@register
class KLasso(KernelProblem):
    """Kernelized LASSO; path over the bandwidth ``t`` (fixed ``lam``) or over ``lam`` (fixed ``bandwidth``).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        :math:`\\lambda` (required for ``parameter="bandwidth"``).
    bandwidth : float
        :math:`t` (required for ``parameter="lam"``).
    parameter : {"bandwidth", "lam"}
    dual_restoration : {"moving", "scaling"}, default "moving"
        ``moving``: on a piece of the bandwidth path an interpolated dual's combination weight
        moves with ``t`` (:meth:`restore`; sinc, n = 100, eps = 0.01: 5918 -> 330 pieces,
        same 109 exact solves, 9.5 -> 2.6 s).  ``scaling``: every dual is a fixed ``s u`` on its
        piece (the only restoration before 0.3.0).  Either way the dual is scaled feasible on
        the whole piece.
    kernel : {"gaussian", "laplacian", "ard", "precomputed"}, default "gaussian"
        The distances D of the kernel exp(-tD): squared Euclidean, l1, feature-weighted squared
        Euclidean, or given (then X is D, n x n; docs/kernels.md).
    feature_weights : sequence of float, optional
        The weights w_k >= 0 of kernel="ard": D = sum_k w_k (x_k - x'_k)^2.
    """

    name = "klasso"
    Bound = KLassoBound
    backends = ("feature_sign", "clarabel", "scs")

    def __init__(self, X, y, *, lam=None, bandwidth=None, parameter="bandwidth", dual_restoration="moving",
                 kernel="gaussian", feature_weights=None):
        super().__init__(X, y, lam=lam, bandwidth=bandwidth, parameter=parameter, dual_restoration=dual_restoration,
                         kernel=kernel, feature_weights=feature_weights)

    def make_bound(self, X, y, options):
        return SearchBound(X, y, cache=True, **options)

    def weight_max(self):
        return self.lam_max()

    def smallest_weight(self):
        """Below the rounding of :math:`K_t(y - \\bar y)` (:func:`~approxpath.numerics.weight_resolution`)."""
        return weight_resolution(self.y - self.y.mean())

    def lam_max(self, t=None):
        """:math:`\\lVert K_t(y - \\bar y)\\rVert_\\infty` (``t`` defaults to the fixed bandwidth): from
        there on :math:`\\beta = 0`, :math:`\\beta_0 = \\bar y` is optimal."""
        t = self.bandwidth if t is None else t
        return float(np.max(np.abs(self.kernels.get(t) @ (self.y - self.y.mean()))))

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=24, low=-3.0, high=3.0, noise=0.1, seed=5)
        return [
            (cls(X, y, lam=0.1), (0.5, 8.0), 0.05),
            (cls(X, y, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05),
        ]

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        K = self.gram(t)
        beta = cp.Variable(self.n, name="beta")
        beta0 = cp.Variable(name="beta0")
        obj = 0.5 * cp.sum_squares(self.y - K @ beta - beta0) + lam * cp.norm1(beta)
        return Declaration(cp.Problem(cp.Minimize(obj)), dict(beta=beta, beta0=beta0))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        u = cp.Variable(self.n, name="u")
        obj = self.y @ u - 0.5 * cp.sum_squares(u)
        cons = [cp.norm_inf(self.gram(t) @ u) <= lam, cp.sum(u) == 0]
        return Declaration(cp.Problem(cp.Maximize(obj), cons), dict(u=u))


    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        beta0 = cp.Variable()  # beta is carried; the intercept is refitted
        fit = self.y - self.gram(tau) @ primal.beta
        solve_cvxpy(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(fit - beta0))))
        return KLassoPrimal(beta=np.asarray(primal.beta, dtype=float), beta0=float(beta0.value))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        bw, lam = self.sweep.at(tau)
        u = zero_sum(value_at(dual, tau).u)
        s = cp.Variable(nonneg=True)  # best scaling s * u inside ||K_tau v||_inf <= lam
        sup = float(np.max(np.abs(self.gram(tau) @ u)))
        obj = s * float(self.y @ u) - 0.5 * float(u @ u) * cp.square(s)
        solve_cvxpy(cp.Problem(cp.Maximize(obj), [s * sup <= lam]))
        return KLassoDual(u=float(s.value) * u)

    # -------------------------------------------------------------- exact solve
    def exact_qp(self, t):
        """The Gram-form QP at ``t`` (:func:`.solve.gram_qp`)."""
        return gram_qp(self.gram(t), self.y, self.sweep.at(t)[1])

    def candidate(self, backend, t, warm=None):
        """``feature_sign`` (the default): the exact active-set solver
        (:func:`approxpath.solvers.lasso.solve_klasso`), warm-started from the nearest exact
        solve's coefficients.  ``clarabel``/``scs``: the Gram-form QP (:meth:`exact_qp`), then a
        polish by a few active-set steps (:func:`.solve.polish`); of every point met and the
        solver's own, the pair with the smallest gap bound wins."""
        bw, lam = self.sweep.at(t)
        K = self.gram(t)
        if backend == "feature_sign":
            sol = solve_klasso(K, self.y, lam, warm=None if warm is None else warm[0].beta,
                               time_limit=current_settings().time_limit)
            return KLassoPrimal(beta=sol.beta, beta0=sol.beta0), KLassoDual(u=sol.u)
        beta = solve_qp(self.exact_qp(t), backend).x[: self.n].copy()
        best = None
        for cand, u in polish(K, self.y, lam, beta):
            primal = middle_primal(self, KLassoPrimal(beta=cand, beta0=0.0), None, t)
            dual = self.dual_from_primal(primal, t) if u is None else KLassoDual(u=u)
            pair = (primal, scaled_dual(self, dual, t))
            gap = self.bound.gap(*pair, t)
            if best is None or gap < best[0]:
                best = (gap, pair)
        return best[1]

    # -------------------------------------------------------------- numpy maps
    def dual_from_primal(self, primal, tau):
        """The residual :math:`y - K_\\tau\\beta - \\beta_0` (the optimal dual at an optimal primal)."""
        r = self.y - self.gram(tau) @ np.asarray(primal.beta, dtype=float) - float(primal.beta0)
        return KLassoDual(u=r)

    def restore(self, primal, dual, lo, hi=None):
        """A pair feasible on ``[lo, hi]``; on a bandwidth piece a moving pair (the driver's
        interpolation :math:`(1 - \\theta(t)) z_a + \\theta(t) z_b` of two exact solves) becomes a
        *moving* dual.  With ``m`` the piece's middle, :math:`\\theta` the interpolation's weight
        there and a drift :math:`\\rho`, the direction at each end ``e`` is :math:`d_e = u_a +
        (\\theta + \\rho (e - m))(u_b - u_a)`, scaled by the best scale for that end alone,
        :math:`\\min(y^\\top d_e/\\lVert d_e\\rVert^2, \\lambda/\\lVert K_e d_e\\rVert_\\infty)`; the dual moves
        linearly between the two scaled ends, scaled once more where the piece needs it to be
        feasible throughout (:meth:`moving_sup_norms`).  Of the drifts :data:`.restore.DRIFTS`
        across the piece the one with the smallest gap bound is kept (rate 0 at a point); the
        primal moves too (:func:`.restore.moving_primal`; at a point, or where the weight does not
        move, the interpolation at ``m`` with the intercept refitted: a fixed primal's objective
        drifts at first order as ``t`` moves, and at lambda = 1e-3 it split each segment into ~24
        pieces).  Its vectors are the same on every piece between the two exact solves: their
        kernel products at a point are computed once (:class:`.search.SearchBound`).  (One scale
        for the whole piece, limited by its worst point, gave 1,040 pieces where the two ends' scales give 747: sinc, n = 1000, 10 %
        outliers, lambda = 0.1, eps = 0.05, t in [2**-3, 2**5].)

        A fixed dual loses feasibility at first order as ``t`` moves (the rows where
        :math:`|K_t u| = \\lambda` drift), and its scaling costs a gap linear in the piece's
        width; the combination of the two anchors' duals whose weight follows ``t`` stays
        nearly feasible across a segment (sinc, n = 100, gap at a fifth of a segment: 0.02-0.06
        against 0.07-0.25 for the best fixed weight).
        """
        hi = lo if hi is None else hi
        if not (is_moving(dual) and dual.degree >= 1 and len(dual.points) == 2):
            dual = scaled_dual(self, dual, lo, hi)
            return middle_primal(self, primal, dual, lo, hi), dual
        if not self.sweep.along_bandwidth:
            return lambda_restore(self, primal, dual, lo, hi)
        return bandwidth_restore(self, primal, dual, lo, hi)

    def interpolate(self, a, b, theta):
        """Convex combination of the pairs at their values (restore after)."""
        (pa, da), (pb, db) = a, b
        primal = KLassoPrimal(beta=(1 - theta) * pa.beta + theta * pb.beta,
                              beta0=(1 - theta) * pa.beta0 + theta * pb.beta0)
        ua, ub = (np.asarray(value_at(d, 0.0).u, dtype=float) for d in (da, db))
        return primal, KLassoDual(u=(1 - theta) * ua + theta * ub)

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """:func:`~approxpath.problem.restored_gaps` vectorized over ``thetas``
        (k,): the kernel products of the combinations are the combinations of the two ends'
        (with :math:`K_\\tau`: the moving duals' vectors, from the products :meth:`restore`
        uses, and the coefficients on their nonzero columns), then each weight's restoration at
        ``tau`` (best dual scale, refitted intercept) and gap in O(n), as computed.  A guide
        for choosing the weight (the chosen pair is restored and bounded after).  ``around``:
        the piece whose weight is chosen (its log-scale middle is used for ``tau``, where the
        piece would be split).  The generic version restores each of ~20 weights per choice
        (sinc, n = 100, eps = 0.05: 585 choices, 2.0 of the run's 5.9 profiled seconds)."""
        if around is not None:
            tau = log_mid(*around)
        bw, lam = self.sweep.at(tau)
        th = np.asarray(thetas, dtype=float)
        mix = np.stack([1.0 - th, th])  # (2, k): column j weighs the two ends for thetas[j]
        B = np.column_stack([np.asarray(p.beta, dtype=float) for p, _ in (a, b)])
        S = np.flatnonzero(np.any(B != 0, axis=1))
        KB = self.kernels.columns(bw, S) @ B[S]
        if self.sweep.along_bandwidth and self.dual_restoration == "moving":
            # the moving duals' vectors u, v (the combination u + theta v) and their products,
            # as restore computes them
            U = np.column_stack(self.bound.moving_basis(a[1], b[1]))
            P, N = self.bound.point_parts(U[:, 0], U[:, 1], bw)
            KU, dual_mix = P - N, np.stack([np.ones_like(th), th])
        else:
            U = np.column_stack([np.asarray(value_at(d, tau).u, dtype=float) for _, d in (a, b)])
            KU, dual_mix = self.gram(tau) @ U, mix
        KU, U = KU @ dual_mix, U @ dual_mix
        uu, yu = np.einsum("ik,ik->k", U, U), self.y @ U
        s = best_scale(U.T, self.y, self.sweep.weight_floor(tau) * (1.0 - SAFETY), np.abs(KU).max(axis=0))
        fit = self.y[:, None] - KB @ mix
        r = fit - fit.mean(axis=0)  # the refitted intercept
        primal = 0.5 * np.einsum("ik,ik->k", r, r) + lam * np.abs(B @ mix).sum(axis=0)
        return primal - (s * yu - 0.5 * s * s * uu)

    def segment_gap_bound(self, primal_a, primal_b, lo, hi):
        """Lambda path: a bound on the gap of the primal linear in lambda on ``[lo, hi]``.

        With :math:`\\theta = (\\lambda - lo)/(hi - lo)`: the residual of the interpolated
        primal is :math:`(1-\\theta) r_a + \\theta r_b`, its norm term
        :math:`\\lVert\\beta(\\theta)\\rVert_1 \\le (1-\\theta)N_a + \\theta N_b`, and the dual
        :math:`v(\\theta) = (1-\\theta)p + \\theta q` of the restored end duals (``p`` feasible
        at ``lo``, ``q`` at ``hi``) satisfies :math:`\\lVert K v\\rVert_\\infty \\le \\lambda` and
        :math:`\\mathbf 1^\\top v = 0` exactly.  The gap is then at most a quadratic in
        :math:`\\theta`, maximized exactly; the residuals enter through their rigorous enclosures
        (:meth:`residual_envelopes`).  Exact (up to the dual's safety factor) on a segment of
        the exact lambda-path, where signs do not change.  ``None`` on the bandwidth path.
        """
        if self.sweep.along_bandwidth or not hi > lo:
            return None
        mids, rads, norms, duals = [], [], [], []
        for primal, lam in ((primal_a, lo), (primal_b, hi)):
            beta = np.asarray(primal.beta, dtype=float)
            _, low, up = self.bound.residual_envelopes(beta, self.y - float(primal.beta0), lam, lam)
            mids.append(0.5 * (low[:, 0] + up[:, 0]))
            rads.append(float(np.linalg.norm(0.5 * (up[:, 0] - low[:, 0]))) * (1 + fp_margin(self.n, 1.0)))
            norms.append(float(np.abs(beta).sum()))
            d = scaled_dual(self, self.dual_from_primal(primal, lam), lam)
            duals.append(np.asarray(value_at(d, lam).u, dtype=float))
        (ma, mb), (p, q), (na, nb) = mids, duals, norms
        dl, dn = hi - lo, nb - na
        A, B, C = float(ma @ ma), float(ma @ mb), float(mb @ mb)
        P, PQ, Q = float(p @ p), float(p @ q), float(q @ q)
        yp, yq = float(self.y @ p), float(self.y @ q)
        # gap(theta) <= c0 + c1 theta + c2 theta^2 (+ the residual enclosure's radius below)
        c0 = 0.5 * A + lo * na - yp + 0.5 * P
        c1 = (B - A) + (lo * dn + dl * na) - (yq - yp) + (PQ - P)
        c2 = 0.5 * (A - 2 * B + C) + dl * dn + 0.5 * (P - 2 * PQ + Q)
        thetas = [0.0, 1.0] + ([-c1 / (2 * c2)] if c2 < 0 and 0 < -c1 / (2 * c2) < 1 else [])
        best = max(c0 + c1 * th + c2 * th * th for th in thetas)
        R = max(rads)  # ||r(theta)|| <= ||m(theta)|| + R, so 1/2||r||^2 <= 1/2||m||^2 + R max||m|| + R^2/2
        magnitude = A + C + P + Q + float(np.abs(self.y) @ (np.abs(p) + np.abs(q))) + hi * (na + nb)
        return best + R * max(A, C) ** 0.5 + 0.5 * R * R + fp_margin(4 * self.n, magnitude)

    def primal_objective(self, primal, tau):
        bw, lam = self.sweep.at(tau)
        r = self.y - self.gram(tau) @ primal.beta - primal.beta0
        return 0.5 * float(r @ r) + lam * float(np.abs(primal.beta).sum())

    def dual_objective(self, dual, tau):
        v = np.asarray(dual.u, dtype=float)
        return float(self.y @ v) - 0.5 * float(v @ v)

    def primal_violation(self, primal, tau):
        ok = np.all(np.isfinite(primal.beta)) and np.isfinite(primal.beta0)
        return 0.0 if ok else float("inf")

    def dual_violation(self, dual, tau):
        """The largest violation of :math:`\\lVert K_\\tau u\\rVert_\\infty \\le \\lambda` and of
        :math:`1^\\top u = 0` beyond the rounding of a point computed from exactly feasible
        stored points (``math.fsum``, less :math:`\\gamma_n \\sum|u|`)."""
        bw, lam = self.sweep.at(tau)
        v = np.asarray(dual.u, dtype=float)
        total = abs(math.fsum(v)) - fp_margin(self.n, float(np.abs(v).sum()))
        return float(max(0.0, np.max(np.abs(self.gram(tau) @ v)) - lam, total))

    def null_objective(self):
        """The objective of the zero model (beta = 0, beta0 = mean y): the unit of a scale-free eps."""
        return 0.5 * float(np.sum((self.y - self.y.mean()) ** 2))

    def predict(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j \\beta_j k_t(x_j, x) + \\beta_0` at the rows of ``X_new`` (m, d): shape (m,)."""
        return self.cross_kernel(tau, X_new) @ primal.beta + float(primal.beta0)
