"""Hinge-loss kernel SVM over the Gaussian bandwidth or over C.

.. math::

    \\min_{w, b, \\xi}\\; \\tfrac12 w^\\top K_t w + C\\,\\mathbf 1^\\top \\xi
    \\quad\\text{s.t.}\\quad y \\circ (K_t w + b) \\ge 1 - \\xi,\\; \\xi \\ge 0,

    \\max_{\\alpha}\\; -\\tfrac12 \\alpha^\\top (K_t \\circ yy^\\top)\\alpha + \\mathbf 1^\\top\\alpha
    \\quad\\text{s.t.}\\quad 0 \\le \\alpha \\le C,\\; y^\\top \\alpha = 0,

with :math:`K_t = \\exp(-tD)`.  At the optimum :math:`w = y\\circ\\alpha`.  A path point is
carried as :math:`(\\alpha, b)`: :math:`w = y \\circ \\alpha` and
:math:`\\xi = \\max(0, 1 - y\\circ(K_\\tau w + b))`, the bias linear in :math:`\\tau` on a
piece of a bandwidth path, so the gap at :math:`\\tau` is
:math:`\\alpha^\\top Q_\\tau \\alpha + C\\,\\mathbf 1^\\top\\xi - \\mathbf 1^\\top\\alpha`.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from approxpath.bounds import Envelope, bernstein_values, envelope_entry_error, hermite_lower, hermite_upper, max_hinge_sum
from approxpath.kernels import cross_sq_distances, gaussian, kernel_entry_error
from approxpath.problem import Declaration, InputError, Problem, did_you_mean, fp_margin, scale_mid
from approxpath.registry import register
from approxpath.solvers import QP, current_settings, solve_qp

__all__ = ["KernelSVM", "SVMPrimal", "SVMDual"]

# alpha is stored on a dyadic grid 2**-42 * 2**floor(log2 C): sums of such numbers are exact
# in double precision (n * C / q < 2**53 for n < 2**10 * ... any realistic n), so y'alpha = 0
# holds exactly and a verifier checks it with math.fsum.  2**-42 relative keeps the gap
# perturbation below n * 1e-12 * C.
_GRID_BITS = 42
# Interpolation weights are rounded to multiples of 2**-8: a combination of two alphas on the
# 2**-42 grid is then computed exactly (products below 2**51 ulps) and stays exactly feasible.
_THETA_BITS = 8
# libSVM stopping tolerance (KKT violation) and kernel cache for exact solves.
_LIBSVM_TOL = 1e-7
_LIBSVM_CACHE_MB = 500
# The tighter round (approxpath.solvers.SolveSettings): a KKT tolerance 100x smaller.
_LIBSVM_TIGHT_TOL = 1e-9
# libSVM cannot be interrupted, so a time limit does not reach it; this iteration cap bounds a
# solve instead (a4a, n = 4781, C = 0.1: 1.6e3 to 1.8e4 SMO iterations for t in [2^-5, 8]).
_LIBSVM_MAX_ITER = 10_000_000
# A dual that is a mix of two parents has its class sums combined from the parents' (cached)
# sums, rounded differently from the direct products a verifier computes from the stored alpha.
# Both bounds are within one rounding margin m of the exact formula, so they differ by at most
# 2m: the mix's bound adds 3m instead of m and stays above the verifier's (found by the stress
# benchmark: a recomputed bound 1.65535e-06 above the stored one by more than its 1e-9 pad).
_MIX_MARGINS = 3
# Kernel products use only the support vectors' kernel columns when they are fewer than this
# share of n (gathering the rows costs a copy; a1a, n = 1605: all columns 4.2 ms, 0.8 of them
# 4.0 ms, 0.9 of them 4.6 ms)
_SUPPORT_SHARE = 0.8
# Kernel products alpha -> exp(-xD) alpha kept for this many (alpha, x) pairs.
_SUMS_CACHE = 512
# Sub-intervals over which the gap bound of a piece is maximized (ionosphere / diabetes / a1a
# at eps = 0.125: 33 / 46 / 45 pieces with 4, 31 / 41 / 44 with 8, 31 / 41 / 43 with 16,
# 31 / 41 / 42 with 32; the cost is an (n, 6) x (6, 17) product)
_NODES = 16
# alpha_i counts as a free support vector (the dynamic bias rule) when it is this far
# (relative to C) from both bounds; interior-point solutions sit ~1e-10 from active bounds.
_FREE_TOL = 1e-6


@dataclass(frozen=True)
class SVMPrimal:
    """Primal point: ``w`` (n,), bias ``b + b_slope * t`` (linear in the bandwidth ``t`` on a
    piece of a bandwidth path; ``b_slope`` is 0 at a point and on the C path); slacks ``xi``
    (n,) once evaluated at a parameter (:meth:`KernelSVM.primal_at`, which also fixes the
    bias there: ``b`` at ``t`` and ``b_slope = 0``)."""

    w: np.ndarray
    b: float
    xi: np.ndarray = None
    b_slope: float = 0.0

    def bias(self, t):
        """The bias at bandwidth ``t`` (``b`` exactly when ``b_slope`` is 0)."""
        return self.b + self.b_slope * t


@dataclass(frozen=True)
class SVMDual:
    """Dual point: ``alpha`` (n,).

    ``mix`` (not part of the certificate) records that ``alpha`` equals
    ``(1 - theta) alpha_a + theta alpha_b`` *exactly*, as ``(alpha_a, alpha_b, theta)``, so
    kernel products of ``alpha`` are combinations of cached products of the two parents.
    """

    alpha: np.ndarray
    mix: tuple = field(default=None, compare=False, repr=False)

    def __reduce__(self):  # the parents in ``mix`` are a cache: do not ship them
        return (SVMDual, (self.alpha,))


def _balance_down(m, target):
    """Nonnegative integers ``<= m`` elementwise that sum to ``target <= m.sum()`` exactly."""
    total = int(m.sum())
    if target >= total:
        return m.copy()
    new = np.floor(m * (target / total)).astype(np.int64) if total else m.copy()
    new = np.minimum(new, m)
    deficit = target - int(new.sum())
    while deficit != 0:
        if deficit > 0:
            room = m - new
            idx = np.argsort(-room, kind="stable")[:deficit]
            idx = idx[room[idx] > 0]
            new[idx] += 1
        else:
            idx = np.argsort(-new, kind="stable")[:-deficit]
            idx = idx[new[idx] > 0]
            new[idx] -= 1
        deficit = target - int(new.sum())
    return new


def _optimal_bias(m, y):
    """argmin_b sum_i max(0, 1 - y_i (m_i + b)) (convex, piecewise linear; O(n)).

    Term i has its kink at :math:`k_i = y_i - m_i`; the slope of the sum at ``b`` is the
    number of negatives with :math:`k_i < b` minus the number of positives with
    :math:`k_i > b`, i.e. (kinks below ``b``) minus (positives): it turns nonnegative at the
    P-th smallest kink, P the number of positives.  ``m`` of shape (n,) or (n, k) (one
    minimizer per column).
    """
    p = max(1, int(np.count_nonzero(y > 0)))  # two classes: p >= 1 anyway
    kinks = (y if m.ndim == 1 else y[:, None]) - m
    return np.partition(kinks, p - 1, axis=0)[p - 1]


@register
class KernelSVM(Problem):
    """Hinge-loss SVM with a Gaussian kernel; path over the bandwidth ``t`` or over ``C``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Two classes. ``{-1, +1}`` is used as is; any other two labels (``{0, 1}``,
        ``{1, 2}``, strings) are mapped to -1 (the smaller) and +1 (the larger) with a warning.
    c : float, default 1.0
        Regularization weight ``C`` (fixed when ``parameter="bandwidth"``).
    bias : {"fixed", "dynamic", "optimal"}, default "optimal"
        Primal bias restoration: ``fixed`` carries the exact solve's bias; ``dynamic`` is the
        paper's median of :math:`(y - K_\\tau w)_i` over free support vectors; ``optimal``
        minimizes the hinge sum exactly (never worse than the others).  On a certified piece
        of the bandwidth path the rule is applied at the piece's two ends and the bias is the
        line through the two values (:meth:`restore_primal`).
    bandwidth : float, optional
        Fixed ``t`` of the kernel when ``parameter="c"`` (required then).
    parameter : {"bandwidth", "c"}
    """

    name = "kernel_svm"
    parameters = ("bandwidth", "c")
    has_interval_bound = True
    dual_set_depends_on = frozenset({"c"})
    criteria = ("error",)
    Primal = SVMPrimal
    Dual = SVMDual
    BIAS_RULES = ("fixed", "dynamic", "optimal")
    exact_solvers = ("libsvm", "clarabel", "scs")

    def __init__(self, X, y, *, c=1.0, bias="optimal", bandwidth=None, parameter="bandwidth"):
        super().__init__(X, y, parameter=parameter)
        self.labels, self.y = self._map_labels(self.y)
        if not (np.isfinite(c) and c > 0):
            raise InputError(f"c must be a positive finite number; got {c!r}")
        if bias not in self.BIAS_RULES:
            raise InputError(f"unknown bias rule {bias!r}{did_you_mean(bias, self.BIAS_RULES)}"
                             f" (choose one of {', '.join(self.BIAS_RULES)})")
        if parameter == "c":
            if bandwidth is None or not (np.isfinite(bandwidth) and bandwidth > 0):
                raise InputError("parameter='c' needs a fixed positive bandwidth=t of exp(-t||x-x'||^2)")
        elif bandwidth is not None:
            raise InputError("bandwidth= fixes t only for parameter='c'; the bandwidth path sweeps t")
        self.c = float(c)
        self.bias = bias
        self.bandwidth = None if bandwidth is None else float(bandwidth)

    _transient = Problem._transient + ("_sums_cache", "_grid_cache")

    def _init_transient(self):
        super()._init_transient()
        self._sums_cache = OrderedDict()
        self._grid_cache = OrderedDict()

    @staticmethod
    def _map_labels(y):
        values = np.unique(y)
        if values.size != 2:
            raise InputError(
                f"kernel_svm needs exactly two classes in y; found {values.size} "
                f"({', '.join(map(str, values[:5]))}{', ...' if values.size > 5 else ''})"
            )
        try:
            if set(values.astype(float).tolist()) == {-1.0, 1.0}:
                return values, np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            pass
        import warnings

        low, high = values.tolist()  # Python scalars: 0, not np.int64(0)
        warnings.warn(f"kernel_svm: labels {low!r} -> -1 and {high!r} -> +1", stacklevel=3)
        return values, np.where(y == values[1], 1.0, -1.0)

    def options(self):
        out = dict(c=self.c, bias=self.bias, parameter=self.parameter)
        if self.bandwidth is not None:
            out["bandwidth"] = self.bandwidth
        return out

    def default_interval(self):
        return (2.0**-10, 2.0**10) if self.parameter == "bandwidth" else (1e-3 * self.c, self.c)

    @classmethod
    def examples(cls):
        from approxpath.data import make_classification

        X, y = make_classification(n=30, d=2, seed=3)
        out = [(cls(X, y, c=1.0, bias=rule), (2.0**-3, 2.0**3), 0.5) for rule in cls.BIAS_RULES]
        out.append((cls(X, y, c=1.0, bandwidth=1.0, parameter="c"), (0.05, 5.0), 0.5))
        # binary features: integer distances, so kernel products go through level histograms
        Xb, yb = make_classification(n=30, d=6, seed=4)
        out.append((cls((Xb > 0.5).astype(float), yb, c=1.0), (2.0**-3, 2.0**3), 0.5))
        return out

    # -------------------------------------------------------------- parameter plumbing
    def _bw_c(self, tau):
        """(bandwidth t, C) at path parameter ``tau``."""
        return (float(tau), self.c) if self.parameter == "bandwidth" else (self.bandwidth, float(tau))

    def _kernel(self, tau):
        return self.kernels.get(self._bw_c(tau)[0])

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, C = self._bw_c(t)
        K = self._kernel(t)
        w = cp.Variable(self.n, name="w")
        b = cp.Variable(name="b")
        xi = cp.Variable(self.n, name="xi")
        obj = 0.5 * cp.quad_form(w, cp.psd_wrap(K)) + C * cp.sum(xi)
        cons = [cp.multiply(self.y, K @ w + b) >= 1 - xi, xi >= 0]
        return Declaration(cp.Problem(cp.Minimize(obj), cons), dict(w=w, b=b, xi=xi))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, C = self._bw_c(t)
        Q = self._kernel(t) * np.outer(self.y, self.y)
        a = cp.Variable(self.n, name="alpha")
        obj = -0.5 * cp.quad_form(a, cp.psd_wrap(Q)) + cp.sum(a)
        cons = [a >= 0, a <= C, self.y @ a == 0]
        return Declaration(cp.Problem(cp.Maximize(obj), cons), dict(alpha=a))

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        bw, C = self._bw_c(tau)
        w = self.y * dual.alpha
        Kw = self._kernel(tau) @ w
        xi = cp.Variable(self.n)
        b = cp.Variable() if self.bias == "optimal" else self._rule_bias(primal, dual, Kw, C, bw)
        prob = cp.Problem(cp.Minimize(C * cp.sum(xi)), [xi >= 1 - cp.multiply(self.y, Kw + b), xi >= 0])
        from approxpath.solvers import solve_cvxpy

        solve_cvxpy(prob)
        b = float(b.value) if isinstance(b, cp.Variable) else b
        return SVMPrimal(w=w, b=b, xi=np.maximum(np.asarray(xi.value), 0.0))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        from approxpath.solvers import solve_cvxpy

        bw, C = self._bw_c(tau)
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.parameter == "bandwidth":
            a = cp.Variable(self.n)  # projection onto {0 <= a <= C, y'a = 0}
            prob = cp.Problem(cp.Minimize(cp.sum_squares(a - alpha)), [a >= 0, a <= C, self.y @ a == 0])
            solve_cvxpy(prob)
            return SVMDual(alpha=np.asarray(a.value))
        s = cp.Variable(nonneg=True)  # best scaling s * alpha inside the box [0, C]
        Q = self._kernel(tau) * np.outer(self.y, self.y)
        quad = float(alpha @ Q @ alpha)
        prob = cp.Problem(cp.Maximize(-0.5 * quad * cp.square(s) + s * alpha.sum()), [s * alpha.max() <= C])
        solve_cvxpy(prob)
        return SVMDual(alpha=float(s.value) * alpha)

    # -------------------------------------------------------------- exact solve
    def exact_qp(self, t):
        """The dual as a QP in Clarabel/SCS form: min 1/2 a'Qa - 1'a, y'a = 0, 0 <= a <= C."""
        bw, C = self._bw_c(t)
        n = self.n
        Q = self._kernel(t) * np.outer(self.y, self.y)
        P = sp.csc_matrix(np.triu(Q))
        A = sp.vstack([sp.csr_matrix(self.y[None, :]), -sp.eye(n), sp.eye(n)]).tocsc()
        b = np.concatenate(([0.0], np.zeros(n), np.full(n, C)))
        return QP(P=P, q=-np.ones(n), A=A, b=b, zero=1, nonneg=2 * n)

    def _solve_with(self, name, t):
        bw, C = self._bw_c(t)
        if name == "libsvm":
            # scikit-learn's libSVM (SMO) on the precomputed kernel: 20-100x faster than an
            # interior point on these dense QPs (benchmarks/solvers.py); tol 1e-7 leaves
            # certified gaps of ~1e-8 relative.
            from sklearn.exceptions import ConvergenceWarning
            from sklearn.svm import SVC

            tol = _LIBSVM_TIGHT_TOL if current_settings().tight else _LIBSVM_TOL
            model = SVC(C=C, kernel="precomputed", tol=tol, cache_size=_LIBSVM_CACHE_MB, max_iter=_LIBSVM_MAX_ITER)
            with warnings.catch_warnings():  # stopped at the cap: the certified gap judges the point
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(self._kernel(t), self.y)
            alpha = np.zeros(self.n)
            alpha[model.support_] = np.abs(model.dual_coef_[0])
            # decision f = sum_j dual_coef_j K(x_j, .) + intercept_, positive for classes_[1] = +1
            return SVMPrimal(w=self.y * alpha, b=float(model.intercept_[0])), SVMDual(alpha=alpha)
        sol = solve_qp(self.exact_qp(t), solvers=(name,))
        # Stationarity Qa - 1 + z0 y - z_lo + z_hi = 0 makes z0 the primal bias b.
        return SVMPrimal(w=self.y * sol.x, b=float(sol.z[0])), SVMDual(alpha=sol.x)

    # -------------------------------------------------------------- numpy maps
    @staticmethod
    def _grid(C):
        return 2.0 ** (math.floor(math.log2(C)) - _GRID_BITS)

    def _exactly_feasible(self, alpha, C):
        """alpha inside [0, C] with y'alpha = 0 exactly."""
        return (alpha.shape == (self.n,) and np.all(alpha >= 0) and np.all(alpha <= C)
                and math.fsum(self.y * alpha) == 0.0)

    def _repair(self, alpha, C):
        """Exactly feasible alpha near ``alpha``: 0 <= alpha <= C and y'alpha = 0 exactly."""
        q = self._grid(C)
        top = math.floor(C / q)
        m = np.clip(np.rint(np.nan_to_num(np.asarray(alpha, dtype=float)) / q), 0, top).astype(np.int64)
        pos = self.y > 0
        sp_, sn = int(m[pos].sum()), int(m[~pos].sum())
        if sp_ > sn:
            m[pos] = _balance_down(m[pos], sn)
        elif sn > sp_:
            m[~pos] = _balance_down(m[~pos], sp_)
        return m.astype(float) * q

    def interpolate(self, a, b, theta):
        """Exact convex combination of two duals on the grid (theta rounded to 2**-8)."""
        th = round(float(theta) * 2**_THETA_BITS) / 2**_THETA_BITS
        if th <= 0.0 or th >= 1.0:
            return a if th <= 0.0 else b
        # the parents themselves, not views: their cached class sums are found by identity
        # (np.asarray(..., dtype=float) makes a view of an unpickled float64 array)
        aa, ab = a[1].alpha, b[1].alpha
        alpha = (1.0 - th) * aa + th * ab
        # exact when both parents are exactly feasible multiples of the grid q of C
        exact = self.parameter == "bandwidth" and self._on_grid(aa) and self._on_grid(ab)
        bias = (1.0 - th) * float(a[0].b) + th * float(b[0].b)
        return SVMPrimal(w=self.y * alpha, b=bias), SVMDual(alpha=alpha, mix=(aa, ab, th) if exact else None)

    def _on_grid(self, alpha):
        """Whether ``alpha`` is exactly feasible and a multiple of the grid of C.  Remembered
        by identity: the parents of every mix are the same few anchors (a1a: 670 checks, 10 %
        of the certification time, for 13 arrays)."""
        hit = self._grid_cache.get(id(alpha))
        if hit is None or hit[0] is not alpha:
            hit = (alpha, self._exactly_feasible(alpha, self.c) and bool(np.all(np.mod(alpha, self._grid(self.c)) == 0)))
            self._grid_cache[id(alpha)] = hit
            while len(self._grid_cache) > _SUMS_CACHE:
                self._grid_cache.popitem(last=False)
        return hit[1]

    def restore_dual(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.parameter == "bandwidth":
            if dual.mix is not None or self._exactly_feasible(alpha, self.c):
                # an exact mix is feasible (see interpolate); the dual keeps its identity (and
                # mix): cached kernel products stay valid
                return dual
            return SVMDual(alpha=self._repair(alpha, self.c))
        # C path: the box [0, C] must hold on all of [lo, hi], i.e. alpha <= lo.  Best scaling
        # of alpha (the dual objective does not depend on C): s = min(lo / max alpha, 1'a/a'Qa).
        top = alpha.max() if alpha.size else 0.0
        if top <= 0:
            return SVMDual(alpha=np.zeros_like(alpha))
        quad = float(alpha @ (self.y * (self._kernel(lo) @ (self.y * alpha))))
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
        return float(_optimal_bias(Kw, self.y))

    def restore_primal(self, primal, dual, lo, hi=None):
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
        if hi == lo or self.parameter != "bandwidth" or self.bias == "fixed":
            Kw = self._Kw(dual, lo) if hi == lo else 0.5 * (self._Kw(dual, lo) + self._Kw(dual, hi))
            mid = self._bw_c(scale_mid(lo, hi, self.scale))
            return SVMPrimal(w=w, b=self._rule_bias(primal, dual, Kw, mid[1], mid[0]))
        b_lo, b_hi = (self._rule_bias(primal, dual, self._Kw(dual, x), self.c, x) for x in (lo, hi))
        slope = (b_hi - b_lo) / (hi - lo)
        return SVMPrimal(w=w, b=b_lo - slope * lo, b_slope=slope)

    def dual_from_primal(self, primal, tau):
        """At the optimum w = y * alpha, so alpha = y * w (clipped and balanced by restore_dual)."""
        return SVMDual(alpha=np.asarray(self.y * primal.w, dtype=float))

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """Vectorized over ``thetas``: two kernel products at ``tau`` (or, with ``around``,
        their Hermite estimates from the products at its ends: no kernel at ``tau``), then
        O(n) per theta."""
        if self.parameter != "bandwidth" or self.bias == "dynamic":
            return super().interpolation_gaps(a, b, thetas, tau, around)
        wa, wb = self.y * a[1].alpha, self.y * b[1].alpha
        alphas = (a[1].alpha, b[1].alpha)
        if around is not None and around[0] < around[1]:
            ma, mb = self._Kw_between(alphas, tau, *around)
        else:
            ma, mb = (F[:, 0] - F[:, 1] for F, *_ in self._sums_of(alphas, tau))
        th = np.asarray(thetas, dtype=float)
        M = np.outer(ma, 1 - th) + np.outer(mb, th)  # K w_theta, one column per theta
        quad = (1 - th) ** 2 * (wa @ ma) + 2 * th * (1 - th) * (wa @ mb) + th**2 * (wb @ mb)
        suma = (1 - th) * a[1].alpha.sum() + th * b[1].alpha.sum()
        if self.bias == "fixed":
            bias = np.full(th.size, float(a[0].b))
        else:
            bias = _optimal_bias(M, self.y)
        xi = np.maximum(0.0, 1.0 - self.y[:, None] * (M + bias))
        return quad + self.c * xi.sum(axis=0) - suma

    def _Kw_between(self, alphas, tau, lo, hi):
        """:math:`K_\\tau w` for each of ``alphas`` estimated from the class sums at ``lo``
        and ``hi``: the middle of their Hermite enclosure at ``tau``
        (:func:`~approxpath.bounds.hermite_upper`), off by :math:`O((hi - lo)^5)`."""
        key = (tuple(map(id, alphas)), (tau, lo, hi))  # the two weight grids of one choice
        hit = self._sums_cache.get(key)
        if hit is not None and all(h is a for h, a in zip(hit[0], alphas)):
            return hit[1]
        # the enclosure is linear in the six end values: its middle at tau weighs them by
        # the middle of the two polynomials of unit data (derivatives in units of the piece)
        width = hi - lo
        weights = bernstein_values(_hermite_middle(), [(tau - lo) / width])[:, 0] * np.array(
            [1.0, 1.0, width, width, width * width, width * width])
        out = []
        for S_lo, S_hi in zip(self._sums_of(alphas, lo), self._sums_of(alphas, hi)):
            data = (S_lo[0], S_hi[0], S_lo[1], S_hi[1], S_lo[2], S_hi[2])  # the Envelope order
            F = sum(w * x for w, x in zip(weights, data))
            out.append(F[:, 0] - F[:, 1])
        self._sums_cache[key] = (tuple(alphas), out)
        return out

    def primal_at(self, primal, tau):
        Kw = self._kernel(tau) @ primal.w
        b = primal.bias(self._bw_c(tau)[0])
        return replace(primal, b=b, b_slope=0.0, xi=np.maximum(0.0, 1.0 - self.y * (Kw + b)))

    def primal_objective(self, primal, tau):
        bw, C = self._bw_c(tau)
        return 0.5 * float(primal.w @ (self._kernel(tau) @ primal.w)) + C * float(np.sum(primal.xi))

    def dual_objective(self, dual, tau):
        # K w from the cached class sums (no kernel at tau)
        return -0.5 * float((self.y * dual.alpha) @ self._Kw(dual, tau)) + float(np.sum(dual.alpha))

    def primal_violation(self, primal, tau):
        margin = self.y * (self._kernel(tau) @ primal.w + primal.bias(self._bw_c(tau)[0]))
        return float(max(0.0, np.max(-primal.xi), np.max(1.0 - primal.xi - margin)))

    def dual_violation(self, dual, tau):
        bw, C = self._bw_c(tau)
        a = dual.alpha
        return float(max(0.0, -a.min(), a.max() - C, abs(math.fsum(self.y * a))))

    def certificate_errors(self, primal, dual, lo, hi):
        a = np.asarray(dual.alpha, dtype=float)
        C = self.c if self.parameter == "bandwidth" else lo
        errors = []
        if a.shape != (self.n,) or not np.all(np.isfinite(a)):
            return [f"alpha must be {self.n} finite numbers"]
        if a.min() < 0:
            errors.append(f"alpha has a negative entry ({a.min():.3g})")
        if a.max() > C:
            errors.append(f"alpha exceeds C = {C:.6g} (max {a.max():.17g})")
        if math.fsum(self.y * a) != 0.0:
            errors.append(f"y'alpha = {math.fsum(self.y * a):.3g} is not exactly 0")
        if not np.array_equal(primal.w, self.y * a):
            errors.append("w differs from y * alpha")
        if not (np.isfinite(primal.b) and np.isfinite(primal.b_slope)):
            errors.append("bias is not finite")
        if primal.b_slope and self.parameter != "bandwidth":
            errors.append("the bias varies only along a bandwidth path")
        return errors

    def decision_function(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j w_j k_t(x_j, x) + b` at the rows of ``X_new`` (m, d): shape (m,)."""
        bw, _ = self._bw_c(tau)
        return gaussian(cross_sq_distances(X_new, self.X), bw) @ primal.w + primal.bias(bw)

    def predict(self, primal, tau, X_new):
        """The decision values (:meth:`decision_function`); their sign is the class."""
        return self.decision_function(primal, tau, X_new)

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        return {"dual": np.asarray(dual.alpha, dtype=float), "bias": float(primal.b),
                "bias_slope": float(primal.b_slope)}

    def from_arrays(self, arrays):
        alpha = np.asarray(arrays["dual"], dtype=float)
        # certificates written before the bias could vary on a piece have no bias_slope
        slope = float(arrays["bias_slope"]) if "bias_slope" in arrays else 0.0
        return SVMPrimal(w=self.y * alpha, b=float(arrays["bias"]), b_slope=slope), SVMDual(alpha=alpha)

    # -------------------------------------------------------------- gap bounds
    def gap_bound(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.parameter == "bandwidth" and hi != lo:
            return self._bandwidth_bound(dual, primal, lo, hi)
        # C path: alpha, w, b and xi do not depend on C and the primal is affine in C, so the
        # gap is affine in C and its maximum on [lo, hi] is at an end point.
        C = self._bw_c(hi)[1]
        b = abs(primal.b) + abs(primal.b_slope) * self._bw_c(hi)[0]  # the bias as computed, and its terms
        mag = alpha.sum() ** 2 + C * self.n * (2.0 + b + alpha.sum()) + alpha.sum()
        return max(self._point_gap(primal, dual, tau) for tau in sorted({lo, hi})) + _margins(dual) * self._margin(mag)

    def _point_gap(self, primal, dual, tau):
        """The gap at ``tau`` (as computed): :math:`w^\\top K w + C\\,1^\\top\\xi - 1^\\top\\alpha`
        from the cached class sums when :math:`w = y \\circ \\alpha` (a restored pair)."""
        alpha = dual.alpha
        w = self.y * alpha
        if not np.array_equal(primal.w, w):
            return self.gap(self.primal_at(primal, tau), dual, tau)
        Kw = self._Kw(dual, tau)
        xi = np.maximum(0.0, 1.0 - self.y * (Kw + primal.bias(self._bw_c(tau)[0])))
        return float(w @ Kw) + self._bw_c(tau)[1] * float(xi.sum()) - float(alpha.sum())

    def _margin(self, magnitude):
        """Rounding allowance of a bound whose terms are at most ``magnitude``."""
        d = self.X.shape[1]
        return fp_margin(8 * self.n, magnitude) + kernel_entry_error(d) * magnitude

    def _sums_of(self, alphas, x):
        """Class sums of each array of ``alphas`` at ``x`` and their first two derivatives in
        ``x``: one triple per array.

        ``S[k][:, 0] = d^k/dx^k exp(-xD) (alpha on the positive class)``, ``S[k][:, 1]`` the
        same over the negative class.  The arrays share one pass over the kernel (the two
        parents of a mix: the pass costs the same for four columns as for two).  Cached by
        (array identities, x); a group is always computed together, so values do not depend on
        the cache's history and a run is reproducible bit for bit.
        """
        x = float(x)
        key = (tuple(map(id, alphas)), x)
        hit = self._sums_cache.get(key)
        if hit is not None and all(h is a for h, a in zip(hit[0], alphas)):
            self._sums_cache.move_to_end(key)
            return hit[1]
        coef = np.zeros((self.n, 2 * len(alphas)))
        for k, alpha in enumerate(alphas):
            coef[:, 2 * k] = np.where(self.y > 0, alpha, 0.0)
            coef[:, 2 * k + 1] = np.where(self.y < 0, alpha, 0.0)
        rows = np.flatnonzero(coef.any(axis=1))  # only the support vectors' columns of the kernel count
        rows, coef = (None, coef) if rows.size > _SUPPORT_SHARE * self.n else (rows, coef[rows])
        if self.parameter == "c":  # the kernel is fixed on the C path: no derivatives
            F = self.kernels.products(self._bw_c(x)[0], coef, rows, order=0)[0]
            sums = (F, np.zeros_like(F), np.zeros_like(F))
        else:
            sums = tuple((-1) ** k * M for k, M in enumerate(self.kernels.products(x, coef, rows)))
        sums = [tuple(M[:, 2 * k:2 * k + 2] for M in sums) for k in range(len(alphas))]
        self._sums_cache[key] = (tuple(alphas), sums)
        while len(self._sums_cache) > _SUMS_CACHE:
            self._sums_cache.popitem(last=False)
        return sums

    def _sums(self, dual, x, order=2):
        """:meth:`_sums_of` for a dual, the first ``order + 1`` of them; always computed up to
        the second derivative (every point where a gap is taken becomes the end of a piece
        whose bound needs them).  An exact mix combines its parents' sums (computed
        together)."""
        if dual.mix is not None:
            aa, ab, th = dual.mix
            pa, pb = self._sums_of((aa, ab), x)
            return tuple((1.0 - th) * Sa + th * Sb for Sa, Sb in zip(pa[: order + 1], pb[: order + 1]))
        return self._sums_of((dual.alpha,), x)[0][: order + 1]

    def _Kw(self, dual, x):
        """:math:`K_x w` with :math:`w = y \\circ \\alpha`."""
        F = self._sums(dual, x, order=0)[0]
        return F[:, 0] - F[:, 1]

    def _class_envelopes(self, dual, lo, hi):
        """Envelopes of the class sums on [lo, hi].

        With :math:`P_i(x) = \\sum_{j: y_j = y_i} \\alpha_j e^{-xD_{ij}}` and :math:`N_i` the
        sum over the other class, :math:`y_i(K_x w)_i = P_i - N_i` and
        :math:`\\alpha^\\top Q_x \\alpha = \\sum_i \\alpha_i (P_i - N_i)`.  Every
        :math:`P_i, N_i` is a nonnegative exponential sum (:mod:`approxpath.bounds`).
        Returns ``(P, N, q)``: ``q`` the Bernstein coefficients (6,) of a quintic above
        :math:`\\alpha^\\top Q_x \\alpha = \\alpha^\\top P - \\alpha^\\top N` on the piece.
        """
        alpha = np.asarray(dual.alpha, dtype=float)
        S_lo, S_hi = self._sums(dual, lo), self._sums(dual, hi)
        rows = np.arange(self.n)
        same = np.where(self.y > 0, 0, 1)

        def env(col):
            return Envelope(lo, hi, S_lo[0][rows, col], S_hi[0][rows, col], S_lo[1][rows, col],
                            S_hi[1][rows, col], S_lo[2][rows, col], S_hi[2][rows, col])

        P, N = env(same), env(1 - same)
        return P, N, hermite_upper(P.combine(alpha)) - hermite_lower(N.combine(alpha))

    def dual_lower_bound(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.parameter == "c" or hi == lo:
            d = self.dual_objective(dual, lo)
            mag = alpha.sum() ** 2 + alpha.sum()
        else:
            # alpha' Q alpha = alpha'P - alpha'N is below the largest coefficient of its upper
            # polynomial (convex hull of the Bernstein coefficients)
            P, N, q = self._class_envelopes(dual, lo, hi)
            d = alpha.sum() - 0.5 * float(q.max()) - 0.5 * self._entry_allowance(alpha.sum(), 0.0, lo, hi)
            mag = float(np.abs(q).max()) + float(alpha @ (P.magnitude() + N.magnitude())) + alpha.sum()
        return d - self._margin(mag)

    def _entry_allowance(self, a1, C, lo, hi):
        """How far the kernel entries' rounding can move a piece's bound of
        :math:`\\alpha^\\top Q \\alpha + C \\sum_i \\max(0, r_i)`, with ``a1`` :math:`= 1^\\top\\alpha`.

        Every Bernstein coefficient of a class sum's polynomials is off by at most
        :func:`~approxpath.bounds.envelope_entry_error` per unit of the coefficients summed
        (whatever the entries' size: at large t the computed sums, and the magnitudes of
        :meth:`_margin`, can be far below :math:`1^\\top\\alpha`, and the derivative entries
        carry factors w/lo), so the quadratic term's by that times ``a1**2`` and each hinge
        argument's by that times ``a1``; node values move by at most 1.04 times a
        coefficient's error (convex combinations plus the lift, see
        :func:`~approxpath.bounds.max_hinge_sum`).
        """
        return 1.05 * envelope_entry_error(lo, hi, self.X.shape[1]) * a1 * (a1 + C * self.n)

    def _bandwidth_bound(self, dual, primal, lo, hi):
        """Bound of the gap on [lo, hi] from the envelopes of :meth:`_class_envelopes`.

        Every class sum is completely monotone in the bandwidth, so it lies between two
        polynomials of degree 5 that match its value and slopes at both ends
        (:func:`~approxpath.bounds.hermite_upper`, :func:`~approxpath.bounds.hermite_lower`):
        :math:`\\alpha^\\top Q_x \\alpha = \\alpha^\\top P - \\alpha^\\top N` is below
        a quintic :math:`q`, each margin :math:`m_i = P_i - N_i` above a quintic, so each hinge
        argument :math:`1 - y_i (b + b_{slope} x) - m_i` is below a quintic :math:`r_i`, and
        :math:`q + C \\sum_i \\max(0, r_i) - 1^\\top\\alpha` is maximized over the piece
        (:func:`~approxpath.bounds.max_hinge_sum`).  Off by :math:`O(w^5)` where chords and
        tangents are off by :math:`O(w^2)` (ionosphere, eps = 0.125: the bound is ~1 % above
        the largest of 17 sampled gaps where chords and tangents were 2x; 70 -> 31 pieces).
        """
        C = self.c
        alpha = np.asarray(dual.alpha, dtype=float)
        P, N, q = self._class_envelopes(dual, lo, hi)
        bias = primal.bias(lo) + (np.arange(6) / 5) * (primal.bias(hi) - primal.bias(lo))  # a line in Bernstein form
        r = 1.0 - self.y[:, None] * bias - (hermite_lower(P) - hermite_upper(N))
        best, scale = max_hinge_sum(q, r, C, _NODES)
        magnitude = (
            scale
            + float(alpha @ (P.magnitude() + N.magnitude()))
            + C * float(np.sum(P.magnitude() + N.magnitude()))
            + alpha.sum()
            + C * self.n * (abs(primal.b) + abs(primal.b_slope) * hi)  # the bias line's end values, rounded
        )
        return best - alpha.sum() + _margins(dual) * self._margin(magnitude) + self._entry_allowance(alpha.sum(), C, lo, hi)


@lru_cache(maxsize=1)
def _hermite_middle():
    """(6, 6): the Bernstein coefficients (columns) of the middle of :func:`hermite_upper` and
    :func:`hermite_lower` for each unit end value (rows, in the order of :class:`Envelope`) on
    a piece of width 1; on width ``w`` the derivative rows scale by ``w`` and ``w**2``."""
    unit = Envelope(0.0, 1.0, *np.eye(6))
    return 0.5 * (hermite_upper(unit) + hermite_lower(unit))


def _margins(dual):
    """How many rounding margins a bound of ``dual`` adds (see ``_MIX_MARGINS``)."""
    return _MIX_MARGINS if dual.mix is not None else 1
