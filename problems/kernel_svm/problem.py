"""Hinge-loss kernel SVM over the Gaussian bandwidth or over C: the search side (exact solves,
restoration, interpolation).  The certificate side is :mod:`.bound`.

.. math::

    \\min_{w, b, \\xi}\\; \\tfrac12 w^\\top K_t w + C\\,\\mathbf 1^\\top \\xi
    \\quad\\text{s.t.}\\quad y \\circ (K_t w + b) \\ge 1 - \\xi,\\; \\xi \\ge 0,

    \\max_{\\alpha}\\; -\\tfrac12 \\alpha^\\top (K_t \\circ yy^\\top)\\alpha + \\mathbf 1^\\top\\alpha
    \\quad\\text{s.t.}\\quad 0 \\le \\alpha \\le C,\\; y^\\top \\alpha = 0,

with :math:`K_t = \\exp(-tD)`.  At the optimum :math:`w = y\\circ\\alpha`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from approxpath.envelopes import Envelope, bernstein_values, hermite_lower, hermite_upper
from approxpath.errors import InputError
from approxpath.kernel_problem import KernelProblem
from approxpath.numerics import dyadic_quantum, log_mid
from approxpath.problem import Declaration, restored_gaps
from approxpath.registry import register
from approxpath.solvers.conic import QP, solve_cvxpy, solve_qp

from .bound import BIAS_RULES, SVMBound, SVMDual, SVMPrimal
from .cache import CachedSVMBound, digest
from .repair import balance_down, optimal_bias

__all__ = ["KernelSVM"]

# Interpolation weights are rounded to multiples of 2**-8: a combination of two alphas on the
# 2**-42 grid is then computed exactly (products below 2**51 ulps) and stays exactly feasible.
_THETA_BITS = 8
# alpha_i counts as a free support vector (the dynamic bias rule) when it is this far
# (relative to C) from both bounds; interior-point solutions sit ~1e-10 from active bounds.
_FREE_TOL = 1e-6


@register
class KernelSVM(KernelProblem):
    """Hinge-loss SVM with a Gaussian kernel; path over the bandwidth ``t`` or over ``C``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Two classes. ``{-1, +1}`` is used as is; any other two labels (``{0, 1}``,
        ``{1, 2}``, strings) are mapped to -1 (the smaller) and +1 (the larger) with a warning.
    c : float, default 1.0
        Regularization weight ``C`` (fixed when ``parameter="bandwidth"``; the top of the default
        interval on the C path).
    bias : {"fixed", "dynamic", "optimal"}, default "optimal"
        Primal bias restoration: ``fixed`` carries the exact solve's bias; ``dynamic`` is the
        paper's median of :math:`(y - K_\\tau w)_i` over free support vectors; ``optimal``
        minimizes the hinge sum exactly (never worse than the others).  On a certified piece
        of the bandwidth path the rule is applied at the piece's two ends and the bias is the
        line through the two values.
    bandwidth : float, optional
        Fixed ``t`` of the kernel when ``parameter="c"`` (required then).
    parameter : {"bandwidth", "c"}
        The path parameter.
    kernel : {"gaussian", "laplacian", "ard", "precomputed"}, default "gaussian"
        The distances D of the kernel exp(-tD): squared Euclidean, l1, feature-weighted squared
        Euclidean, or given (then X is D, n x n; docs/kernels.md).
    feature_weights : sequence of float, optional
        The weights w_k >= 0 of kernel="ard": D = sum_k w_k (x_k - x'_k)^2.
    """

    name = "kernel_svm"
    Bound = SVMBound
    criteria = ("error",)
    backends = ("libsvm", "clarabel", "scs")

    def __init__(self, X, y, *, c=1.0, bias="optimal", bandwidth=None, parameter="bandwidth",
                 kernel="gaussian", feature_weights=None):
        super().__init__(X, y, c=c, bias=bias, bandwidth=bandwidth, parameter=parameter,
                         kernel=kernel, feature_weights=feature_weights)
        self._grid_cache = OrderedDict()

    def make_bound(self, X, y, options):
        return CachedSVMBound(X, y, cache=True, **options)

    labels = property(lambda self: self.bound.labels)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._grid_cache = OrderedDict()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_grid_cache"}

    @classmethod
    def examples(cls):
        from approxpath.data import make_classification

        X, y = make_classification(n=30, d=2, seed=3)
        out = [(cls(X, y, c=1.0, bias=rule), (2.0**-3, 2.0**3), 0.5) for rule in BIAS_RULES]
        out.append((cls(X, y, c=1.0, bandwidth=1.0, parameter="c"), (0.05, 5.0), 0.5))
        # binary features: integer distances, so kernel products go through level histograms
        Xb, yb = make_classification(n=30, d=6, seed=4)
        out.append((cls((Xb > 0.5).astype(float), yb, c=1.0), (2.0**-3, 2.0**3), 0.5))
        return out

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, C = self.sweep.at(t)
        K = self.gram(t)
        w = cp.Variable(self.n, name="w")
        b = cp.Variable(name="b")
        xi = cp.Variable(self.n, name="xi")
        obj = 0.5 * cp.quad_form(w, cp.psd_wrap(K)) + C * cp.sum(xi)
        cons = [cp.multiply(self.y, K @ w + b) >= 1 - xi, xi >= 0]
        return Declaration(cp.Problem(cp.Minimize(obj), cons), dict(w=w, b=b, xi=xi))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, C = self.sweep.at(t)
        Q = self.gram(t) * np.outer(self.y, self.y)
        a = cp.Variable(self.n, name="alpha")
        obj = -0.5 * cp.quad_form(a, cp.psd_wrap(Q)) + cp.sum(a)
        cons = [a >= 0, a <= C, self.y @ a == 0]
        return Declaration(cp.Problem(cp.Maximize(obj), cons), dict(alpha=a))

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        bw, C = self.sweep.at(tau)
        w = self.y * dual.alpha
        Kw = self.gram(tau) @ w
        xi = cp.Variable(self.n)
        b = cp.Variable() if self.bias == "optimal" else self._rule_bias(primal, dual, Kw, C, bw)
        prob = cp.Problem(cp.Minimize(C * cp.sum(xi)), [xi >= 1 - cp.multiply(self.y, Kw + b), xi >= 0])
        solve_cvxpy(prob)
        b = float(b.value) if isinstance(b, cp.Variable) else b
        return SVMPrimal(w=w, b=b, xi=np.maximum(np.asarray(xi.value), 0.0))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        bw, C = self.sweep.at(tau)
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.sweep.along_bandwidth:
            a = cp.Variable(self.n)  # projection onto {0 <= a <= C, y'a = 0}
            prob = cp.Problem(cp.Minimize(cp.sum_squares(a - alpha)), [a >= 0, a <= C, self.y @ a == 0])
            solve_cvxpy(prob)
            return SVMDual(alpha=np.asarray(a.value))
        s = cp.Variable(nonneg=True)  # best scaling s * alpha inside the box [0, C]
        Q = self.gram(tau) * np.outer(self.y, self.y)
        quad = float(alpha @ Q @ alpha)
        prob = cp.Problem(cp.Maximize(-0.5 * quad * cp.square(s) + s * alpha.sum()), [s * alpha.max() <= C])
        solve_cvxpy(prob)
        return SVMDual(alpha=float(s.value) * alpha)

    # -------------------------------------------------------------- exact solve
    def exact_qp(self, t):
        """The dual as a QP in Clarabel/SCS form: min 1/2 a'Qa - 1'a, y'a = 0, 0 <= a <= C."""
        bw, C = self.sweep.at(t)
        n = self.n
        Q = self.gram(t) * np.outer(self.y, self.y)
        P = sp.csc_matrix(np.triu(Q))
        A = sp.vstack([sp.csr_matrix(self.y[None, :]), -sp.eye(n), sp.eye(n)]).tocsc()
        b = np.concatenate(([0.0], np.zeros(n), np.full(n, C)))
        return QP(P=P, q=-np.ones(n), A=A, b=b, zero=1, nonneg=2 * n)

    def candidate(self, backend, t, warm=None):
        if backend == "libsvm":
            from .libsvm import libsvm_candidate, libsvm_rbf_candidate

            bw, C = self.sweep.at(t)
            if self.bound.blocked:  # no n x n kernel here: libSVM computes and caches its own
                return libsvm_rbf_candidate(self._rbf_features(), self.y, C, bw, self.kernels.mode == "distances")
            return libsvm_candidate(self.gram(t), self.y, C)
        sol = solve_qp(self.exact_qp(t), backend)
        # Stationarity Qa - 1 + z0 y - z_lo + z_hi = 0 makes z0 the primal bias b.
        return SVMPrimal(w=self.y * sol.x, b=float(sol.z[0])), SVMDual(alpha=sol.x)

    def _rbf_features(self):
        """Features on which libSVM's RBF kernel :math:`\\exp(-\\gamma\\lVert u - u'\\rVert^2)` with
        :math:`\\gamma = t` is :math:`K_t` (the blocked mode): ``X`` for the gaussian family,
        :math:`\\sqrt{w_k} x_k` for ``ard``; :class:`InputError` for the others."""
        if self.kernel == "gaussian":
            return self.X
        if self.kernel == "ard":
            return self.X * np.sqrt(np.asarray(self.feature_weights, dtype=float))
        raise InputError(f"kernel_svm with kernel={self.kernel!r} at n = {self.n} needs the n x n kernel for libSVM "
                         "(its own kernel is gaussian), which does not fit the memory budget: raise "
                         "APPROXPATH_MEMORY (bytes), use fewer samples, or kernel='gaussian' / 'ard'")

    def _Kv(self, v, tau):
        """:math:`K_\\tau v` for ``v`` (n,): from the cached kernel, or in the blocked mode from
        one blocked product (the same entries, summed block by block)."""
        if self.bound.blocked:
            return self.kernels.products(self.sweep.at(tau)[0], v, order=0)[0]
        return self.gram(tau) @ v

    # -------------------------------------------------------------- numpy maps
    def _exactly_feasible(self, alpha, C):
        """alpha inside [0, C] with y'alpha = 0 exactly."""
        return (alpha.shape == (self.n,) and np.all(alpha >= 0) and np.all(alpha <= C)
                and math.fsum(self.y * alpha) == 0.0)

    def _repair(self, alpha, C):
        """Exactly feasible alpha near ``alpha``: 0 <= alpha <= C and y'alpha = 0 exactly, on the
        dyadic grid of C (sums of grid multiples are exact)."""
        q = dyadic_quantum(C)
        top = math.floor(C / q)
        m = np.clip(np.rint(np.nan_to_num(np.asarray(alpha, dtype=float)) / q), 0, top).astype(np.int64)
        pos = self.y > 0
        sp_, sn = int(m[pos].sum()), int(m[~pos].sum())
        if sp_ > sn:
            m[pos] = balance_down(m[pos], sn)
        elif sn > sp_:
            m[~pos] = balance_down(m[~pos], sp_)
        return m.astype(float) * q

    def interpolate(self, a, b, theta):
        """Exact convex combination of two duals on the grid (theta rounded to 2**-8)."""
        th = round(float(theta) * 2**_THETA_BITS) / 2**_THETA_BITS
        if th <= 0.0 or th >= 1.0:
            return a if th <= 0.0 else b
        aa, ab = a[1].alpha, b[1].alpha
        alpha = (1.0 - th) * aa + th * ab
        # exact when both parents are exactly feasible multiples of the grid q of C
        exact = self.sweep.along_bandwidth and self._on_grid(aa) and self._on_grid(ab)
        bias = (1.0 - th) * float(a[0].b) + th * float(b[0].b)
        return SVMPrimal(w=self.y * alpha, b=bias), SVMDual(alpha=alpha, mix=(aa, ab, th) if exact else None)

    def _on_grid(self, alpha):
        """Whether ``alpha`` is exactly feasible and a multiple of the grid of C.  Remembered
        by content: the parents of every mix are the same few anchors (a1a: 670 checks, 10 %
        of the certification time, for 13 arrays)."""
        return self.bound.remember(("grid", digest(alpha)), lambda: bool(
            self._exactly_feasible(alpha, self.c) and np.all(np.mod(alpha, dyadic_quantum(self.c)) == 0)))

    def restore(self, primal, dual, lo, hi=None):
        dual = self._restore_dual(dual, lo, hi)
        return self._restore_primal(primal, dual, lo, hi), dual

    def _restore_dual(self, dual, lo, hi=None):
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.sweep.along_bandwidth:
            if dual.mix is not None or self._exactly_feasible(alpha, self.c):
                # an exact mix is feasible (see interpolate); the dual keeps its mix: its
                # kernel products come from the parents'
                return dual
            return SVMDual(alpha=self._repair(alpha, self.c))
        # C path: the box [0, C] must hold on all of [lo, hi], i.e. alpha <= lo.  Best scaling
        # of alpha (the dual objective does not depend on C): s = min(lo / max alpha, 1'a/a'Qa).
        top = alpha.max() if alpha.size else 0.0
        if top <= 0:
            return SVMDual(alpha=np.zeros_like(alpha))
        quad = float(alpha @ (self.y * self._Kv(self.y * alpha, lo)))
        s = lo / top
        if quad > 0:
            s = min(s, alpha.sum() / quad)
        return SVMDual(alpha=self._repair(s * alpha, lo))

    def _rule_bias(self, primal, dual, Kw, C, bw):
        """The bias rule's ``b`` given :math:`K_\\tau w`, the box top ``C`` and the bandwidth
        ``bw`` at ``tau``."""
        if self.bias == "fixed":
            return float(primal.bias(bw))
        if self.bias == "dynamic":
            alpha = dual.alpha
            free = (alpha > _FREE_TOL * C) & (alpha < (1 - _FREE_TOL) * C)
            if free.any():
                return float(np.median((self.y - Kw)[free]))
        return float(optimal_bias(Kw, self.y))

    def _restore_primal(self, primal, dual, lo, hi=None):
        """Keep ``w = y * alpha``; pick the bias by the rule.

        At a point the rule sees :math:`K_\\tau w`.  On a piece of a bandwidth path it is
        applied at both ends (the kernel products the piece's bound needs anyway) and the bias
        is the line through the two values, :math:`b + b_{slope} t`: a line adds nothing to the
        degree of the hinge arguments' polynomials, so the bound costs the same, and the bias
        follows the optimum (ionosphere: a constant bias left the median end gap at 3x the
        end's best).
        On the C path (no kernel change) the rule sees the average of the two ends.
        """
        hi = lo if hi is None else hi
        w = self.y * dual.alpha
        Kw = self.bound.Kw
        if hi == lo or not self.sweep.along_bandwidth or self.bias == "fixed":
            mean = Kw(dual, lo) if hi == lo else 0.5 * (Kw(dual, lo) + Kw(dual, hi))
            mid = self.sweep.at(log_mid(lo, hi))
            return SVMPrimal(w=w, b=self._rule_bias(primal, dual, mean, mid[1], mid[0]))
        b_lo, b_hi = (self._rule_bias(primal, dual, Kw(dual, x), self.c, x) for x in (lo, hi))
        slope = (b_hi - b_lo) / (hi - lo)
        return SVMPrimal(w=w, b=b_lo - slope * lo, b_slope=slope)

    def dual_from_primal(self, primal, tau):
        """At the optimum w = y * alpha, so alpha = y * w (clipped and balanced by restore)."""
        return SVMDual(alpha=np.asarray(self.y * primal.w, dtype=float))

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """Vectorized over ``thetas``: two kernel products at ``tau`` (or, with ``around``,
        their Hermite estimates from the products at its ends: no kernel at ``tau``), then
        O(n) per theta."""
        if not self.sweep.along_bandwidth:
            return restored_gaps(self, a, b, thetas, tau)
        wa, wb = self.y * a[1].alpha, self.y * b[1].alpha
        alphas = (a[1].alpha, b[1].alpha)
        if around is not None and around[0] < around[1]:
            ma, mb = self._Kw_between(alphas, tau, *around)
        else:
            ma, mb = (F[:, 0] - F[:, 1] for F, *_ in self.bound._group_sums(alphas, tau))
        th = np.asarray(thetas, dtype=float)
        M = np.outer(ma, 1 - th) + np.outer(mb, th)  # K w_theta, one column per theta
        quad = (1 - th) ** 2 * (wa @ ma) + 2 * th * (1 - th) * (wa @ mb) + th**2 * (wb @ mb)
        suma = (1 - th) * a[1].alpha.sum() + th * b[1].alpha.sum()
        if self.bias == "fixed":
            bias = np.full(th.size, float(a[0].b))
        elif self.bias == "dynamic":
            bias = self._dynamic_biases(a[1].alpha, b[1].alpha, th, M)
        else:
            bias = optimal_bias(M, self.y)
        xi = np.maximum(0.0, 1.0 - self.y[:, None] * (M + bias))
        return quad + self.c * xi.sum(axis=0) - suma

    def _dynamic_biases(self, alpha_a, alpha_b, thetas, M):
        """The dynamic rule (:meth:`_rule_bias`) for each combination ``(1 - theta) alpha_a + theta
        alpha_b`` with margins ``M`` (n, k): the median of ``(y - K w)_i`` over its free support
        vectors, the optimal bias where it has none; vectorized over the k weights."""
        C = self.c
        alphas = np.outer(alpha_a, 1 - thetas) + np.outer(alpha_b, thetas)  # (n, k)
        free = (alphas > _FREE_TOL * C) & (alphas < (1 - _FREE_TOL) * C)
        none = ~free.any(axis=0)
        medians = np.empty(thetas.size)
        if not none.all():  # (nanmedian warns on a column without a free vector: those are below)
            medians[~none] = np.nanmedian(np.where(free[:, ~none], self.y[:, None] - M[:, ~none], np.nan), axis=0)
        if none.any():
            medians[none] = optimal_bias(M[:, none], self.y)
        return medians

    def _Kw_between(self, alphas, tau, lo, hi):
        """:math:`K_\\tau w` for each of ``alphas`` estimated from the class sums at ``lo``
        and ``hi``: the middle of their Hermite enclosure at ``tau``
        (:func:`~approxpath.envelopes.hermite_upper`), off by :math:`O((hi - lo)^5)`."""
        def compute():
            # the enclosure is linear in the six end values: its middle at tau weighs them by
            # the middle of the two polynomials of unit data (derivatives in units of the piece)
            width = hi - lo
            weights = bernstein_values(_hermite_middle(), [(tau - lo) / width])[:, 0] * np.array(
                [1.0, 1.0, width, width, width * width, width * width])
            out = []
            for S_lo, S_hi in zip(self.bound._group_sums(alphas, lo), self.bound._group_sums(alphas, hi)):
                data = (S_lo[0], S_hi[0], S_lo[1], S_hi[1], S_lo[2], S_hi[2])  # the Envelope order
                F = sum(w * x for w, x in zip(weights, data))
                out.append(F[:, 0] - F[:, 1])
            return out
        # the two weight grids of one choice ask for the same estimate
        return self.bound.remember(("between", tuple(map(digest, alphas)), (tau, lo, hi)), compute)

    def primal_at(self, primal, tau):
        bw = self.sweep.at(tau)[0]
        Kw = self._Kv(primal.w, tau)
        b = primal.bias(bw)
        return replace(primal, b=b, b_slope=0.0, xi=np.maximum(0.0, 1.0 - self.y * (Kw + b)))

    def primal_objective(self, primal, tau):
        C = self.sweep.at(tau)[1]
        return 0.5 * float(primal.w @ self._Kv(primal.w, tau)) + C * float(np.sum(primal.xi))

    def dual_objective(self, dual, tau):
        # K w from the cached class sums (no kernel at tau)
        return -0.5 * float((self.y * dual.alpha) @ self.bound.Kw(dual, tau)) + float(np.sum(dual.alpha))

    def primal_violation(self, primal, tau):
        margin = self.y * (self._Kv(primal.w, tau) + primal.bias(self.sweep.at(tau)[0]))
        return float(max(0.0, np.max(-primal.xi), np.max(1.0 - primal.xi - margin)))

    def dual_violation(self, dual, tau):
        C = self.sweep.at(tau)[1]
        a = dual.alpha
        return float(max(0.0, -a.min(), a.max() - C, abs(math.fsum(self.y * a))))

    def decision_function(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j w_j k_t(x_j, x) + b` at the rows of ``X_new`` (m, d): shape (m,)."""
        return self.cross_kernel(tau, X_new) @ primal.w + primal.bias(self.sweep.at(tau)[0])

    def predict(self, primal, tau, X_new):
        """The decision values (:meth:`decision_function`); their sign is the class."""
        return self.decision_function(primal, tau, X_new)

    def null_objective(self):
        """The objective of the zero model (w = 0, b = 0: every slack 1), ``C n``: the unit of a
        scale-free eps (the estimators)."""
        return self.c * self.n


@lru_cache(maxsize=1)
def _hermite_middle():
    """(6, 6): the Bernstein coefficients (columns) of the middle of :func:`hermite_upper` and
    :func:`hermite_lower` for each unit end value (rows, in the order of :class:`Envelope`) on
    a piece of width 1; on width ``w`` the derivative rows scale by ``w`` and ``w**2``."""
    unit = Envelope(0.0, 1.0, *np.eye(6))
    return 0.5 * (hermite_upper(unit) + hermite_lower(unit))
