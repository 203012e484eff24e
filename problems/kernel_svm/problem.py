"""Hinge-loss kernel SVM over the Gaussian bandwidth or over C: the search side (restoration,
interpolation; the exact solves in :mod:`.solves`).  The certificate side is :mod:`.bound`, the
points :mod:`.points`.

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

import numpy as np

from approxpath.kernel_problem import KernelProblem
from approxpath.bernstein import cap_columns, coefficient_rounding
from approxpath.moving import Moving, is_moving, value_at
from approxpath.numerics import dyadic_quantum, fp_margin, log_mid
from approxpath.problem import Declaration
from approxpath.registry import register
from approxpath.solvers.conic import solve_cvxpy

from .bound import BIAS_RULES, SVMBound
from .points import SVMDual, SVMPrimal
from .cache import CachedSVMBound
from .interpolation import SVMInterpolation
from .repair import balance_down, free_vectors, midpoint_bias, optimal_bias
from .solves import SVMExactSolves

__all__ = ["KernelSVM"]

# A dual moving in C is scaled this much (relative) below the box at an end of its piece, so that
# a verifier whose sums round the last bits differently still finds it inside (~1e-16 apart).
_C_SAFETY = 1e-12

@register
class KernelSVM(SVMExactSolves, SVMInterpolation, KernelProblem):
    """Hinge-loss SVM with a kernel exp(-tD); path over the bandwidth ``t`` or over ``C``.

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
    dual_restoration : {"moving", "fixed"}, default "moving"
        ``moving``: on a piece of an interpolating bandwidth path the combination weights of the
        two exact solves' duals move with ``t`` (:mod:`.moving`); ``fixed``: one weight per
        piece, as before moving pairs.
    """

    name = "kernel_svm"
    Bound = SVMBound
    criteria = ("error",)
    backends = ("smo", "libsvm", "clarabel", "scs")

    def __init__(self, X, y, *, c=1.0, bias="optimal", bandwidth=None, parameter="bandwidth",
                 kernel="gaussian", feature_weights=None, dual_restoration="moving"):
        super().__init__(X, y, c=c, bias=bias, bandwidth=bandwidth, parameter=parameter,
                         kernel=kernel, feature_weights=feature_weights, dual_restoration=dual_restoration)
        self._grid_cache = OrderedDict()
        self._kernel_buffer = None

    def largest_weight(self):
        """C n <= 2**500: the bounds' magnitudes, of the order of (C n)^2 times a few n (the
        rounding allowances' sums), stay below double precision's 2**1024 (above, a path ended in
        NaN bounds, or hung in the exact solvers from C ~ 1e290 on)."""
        return 2.0**500 / self.n

    def make_bound(self, X, y, options):
        return CachedSVMBound(X, y, cache=True, **options)

    labels = property(lambda self: self.bound.labels)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._grid_cache = OrderedDict()
        self._kernel_buffer = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("_grid_cache", "_kernel_buffer")}

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
        b = cp.Variable() if self.bias == "optimal" else self._rule_bias(primal, dual.alpha, Kw, C, bw)
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

    def _Kv(self, v, tau):
        """:math:`K_\\tau v` for ``v`` (n,): from the cached kernel, or in the blocked mode and
        on a device (``kernel_rows``: no whole kernel there) from one kernel product (the same
        entries, summed block by block)."""
        if self.bound.blocked or hasattr(self.kernels, "kernel_rows"):
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

    def restore(self, primal, dual, lo, hi=None):
        """The dual made exactly feasible on ``[lo, hi]`` (:meth:`_restore_dual`), the primal
        ``w = y * alpha`` with the bias rule's bias (:meth:`_restore_primal`).  With
        ``dual_restoration="fixed"`` the driver's moving interpolation of two exact solves is
        held at its weight in the piece's middle (an exact mix, :meth:`interpolate`)."""
        if is_moving(dual) and self.dual_restoration == "fixed":
            mid = log_mid(lo, lo if hi is None else hi)
            primal, dual = self.interpolate(*zip(primal.points, dual.points), float(dual.weights_at(mid)[1]))
        dual = self._restore_dual(dual, lo, hi)
        return self._restore_primal(primal, dual, lo, hi), dual

    def _restore_dual(self, dual, lo, hi=None):
        if is_moving(dual) and not self.sweep.along_bandwidth:
            return self._restore_moving_c(dual, lo, hi)
        if is_moving(dual):
            # a moving dual (the driver's interpolation of two exact solves: weights >= 0 summing
            # to at most 1) is feasible on its span once its points are; they keep their kernel
            # products (exact solves' duals are feasible as they are)
            points = tuple(d if self._feasible(d.alpha) else SVMDual(alpha=self._repair(d.alpha, self.c))
                           for d in dual.points)
            return dual if all(p is d for p, d in zip(points, dual.points)) else Moving(points, dual.weights, dual.span)
        alpha = np.asarray(dual.alpha, dtype=float)
        if self.sweep.along_bandwidth:
            if dual.mix is not None or self._exactly_feasible(alpha, self.c):
                # an exact mix is feasible (see interpolate); the dual keeps its parents: its
                # kernel products are theirs
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

    def _restore_moving_c(self, dual, lo, hi):
        """The driver's interpolation of two exact solves on a C piece (weights linear in C):
        its weights at each end of the piece scaled down where the combination leaves the box
        there (:func:`.c_path.box_errors` checks the ends; between them each entry minus C is
        linear); the points are the exact solves' duals, exactly feasible at their own C."""
        W = dual.restrict(lo, hi)
        W = np.maximum(W if W.shape[1] == 2 else np.repeat(W, 2, axis=1), 0.0)
        A = np.column_stack([np.asarray(d.alpha, dtype=float) for d in dual.points])
        # The verifier charges the returned weights' own allowance at both ends (box_errors), also
        # where they are the stored ones: on a piece spanning decades of C the far point's share,
        # u * max(alpha_b) ~ u * hi, exceeds _C_SAFETY * lo (C path [1e-10, 1e-3]: every
        # certificate failed verification).  Scaling a column moves an allowance's steps by at most
        # max |W|, so twice the allowance of W bounds that of the scaled weights.
        err = 2.0 * coefficient_rounding(W) + (dual.allowance() if (lo, hi) != dual.span else 0.0)
        scales = []
        for e, C in ((0, lo), (1, hi)):
            top = float(np.max(A @ W[:, e] + fp_margin(2, 1.0) * (A @ W[:, e]) + A @ err))
            limit = C * (1.0 - _C_SAFETY)
            scales.append(limit / top if top > limit else 1.0)
        # each column sums to at most 1 exactly (restrict's blossoms can round above)
        return Moving(dual.points, cap_columns(W * np.array(scales)), (lo, hi))

    def _rule_bias(self, primal, alpha, Kw, C, tau):
        """The bias rule's ``b`` at the path parameter ``tau``, given the dual ``alpha`` and
        :math:`K_\\tau w` there and the box top ``C``."""
        if self.bias == "fixed":
            return self.bound.bias_at(primal, tau)[0]
        if self.bias == "dynamic":
            free = free_vectors(alpha, C)
            if free.any():
                return float(np.median((self.y - Kw)[free]))
        return float(optimal_bias(Kw, self.y))

    def _restore_primal(self, primal, dual, lo, hi=None):
        """Keep ``w = y * alpha`` (point by point for a moving dual, with its weights); pick the
        bias by the rule.

        At a point the rule sees :math:`K_\\tau w`.  On a piece of a bandwidth path it is
        applied at both ends (the kernel products the piece's bound needs anyway) and the bias
        is the line through the two values (a point of the primal that carries only the bias,
        its weight the line in Bernstein form): a line adds nothing to the degree of the hinge
        arguments' polynomials, so the bound costs the same, and the bias follows the optimum
        (ionosphere: a constant bias left the median end gap at 3x the end's best).
        On the C path (no kernel change) the rule sees the average of the two ends for a fixed
        dual, and is applied at both ends for a dual that moves with C.
        """
        hi = lo if hi is None else hi
        at = self.bound.dual_at_point
        if hi == lo or self.bias == "fixed" or not (self.sweep.along_bandwidth or is_moving(dual)):
            mean = at(dual, lo)[1] if hi == lo else 0.5 * (at(dual, lo)[1] + at(dual, hi)[1])
            mid = log_mid(lo, hi)
            b = self._rule_bias(primal, value_at(dual, mid).alpha, mean, self.sweep.at(mid)[1], mid)
            return self._primal_of(dual, [b], lo, hi)
        b_lo, b_hi = (self._rule_bias(primal, *at(dual, x)[:2], self.sweep.at(x)[1], x) for x in (lo, hi))
        return self._primal_of(dual, [b_lo, b_hi], lo, hi)

    def _primal_of(self, dual, bias, lo, hi):
        """The primal with ``w = y * alpha`` point by point of ``dual`` and the bias through the
        values ``bias`` at ``lo`` (and ``hi``): a fixed point where both are constant; else the
        dual's points with its weights plus a point carrying the bias, whose weight is the line
        in Bernstein form on the dual's span (the piece, for a fixed dual)."""
        zeros = np.zeros(self.n)
        if not is_moving(dual):
            if len(bias) == 1 or bias[0] == bias[1]:
                return SVMPrimal(w=self.y * dual.alpha, b=float(bias[0]))
            return Moving((SVMPrimal(w=self.y * dual.alpha, b=0.0), SVMPrimal(w=zeros, b=1.0)),
                          [[1.0, 1.0], bias], (lo, hi))
        t0, t1 = dual.span
        b_lo, b_hi = (bias[0], bias[0]) if len(bias) == 1 else bias
        slope = (b_hi - b_lo) / (hi - lo) if hi > lo else 0.0
        ends = [b_lo + slope * (t0 - lo), b_hi + slope * (t1 - hi)]  # the line at the span's ends
        line = np.linspace(ends[0], ends[1], dual.degree + 1) if dual.degree else [b_lo]
        points = tuple(SVMPrimal(w=self.y * d.alpha, b=0.0) for d in dual.points) + (SVMPrimal(w=zeros, b=1.0),)
        return Moving(points, np.vstack([dual.weights, line]), dual.span)

    def dual_from_primal(self, primal, tau):
        """At the optimum w = y * alpha, so alpha = y * w (clipped and balanced by restore)."""
        return SVMDual(alpha=np.asarray(self.y * primal.w, dtype=float))

    def primal_at(self, primal, tau):
        """The primal at ``tau`` (a point): slacks filled in."""
        Kw = self._Kv(primal.w, tau)
        return replace(primal, xi=np.maximum(0.0, 1.0 - self.y * (Kw + primal.b)))

    def primal_objective(self, primal, tau):
        C = self.sweep.at(tau)[1]
        return 0.5 * float(primal.w @ self._Kv(primal.w, tau)) + C * float(np.sum(primal.xi))

    def dual_objective(self, dual, tau):
        # K w from the cached class sums (no kernel at tau)
        alpha, Kw, _ = self.bound.dual_at_point(dual, tau)
        return -0.5 * float((self.y * alpha) @ Kw) + float(np.sum(alpha))

    def primal_violation(self, primal, tau):
        margin = self.y * (self._Kv(primal.w, tau) + primal.b)
        return float(max(0.0, np.max(-primal.xi), np.max(1.0 - primal.xi - margin)))

    def dual_violation(self, dual, tau):
        C = self.sweep.at(tau)[1]
        a = dual.alpha
        return float(max(0.0, -a.min(), a.max() - C, abs(math.fsum(self.y * a))))

    def decision_function(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j w_j k_t(x_j, x) + b` at the rows of ``X_new`` (m, d): shape (m,),
        for the primal point at ``tau`` (a stored moving point is taken there)."""
        primal = value_at(primal, self.sweep.at(tau)[0])
        return self.cross_kernel(tau, X_new) @ primal.w + primal.b

    def predict(self, primal, tau, X_new):
        """The decision values (:meth:`decision_function`); their sign is the class."""
        return self.decision_function(primal, tau, X_new)

    def optimum_model(self, primal, tau):
        """The exact optimum's model as the selection's criteria enclose it, from the restored
        ``primal`` of an exact solve at ``tau``: its bias moved to the middle of the optimal
        biases (:func:`~.repair.midpoint_bias`, libSVM's).  The objective is the same at every
        optimal bias; the predictions are not (an end of the interval disagreed with the middle
        on 35 % of new points)."""
        primal = value_at(primal, self.sweep.at(tau)[0])
        Kw = self.cross_kernel(tau, self.X) @ primal.w
        return replace(primal, b=midpoint_bias(Kw, self.y))

    def null_objective(self):
        """The objective of the zero model (w = 0, b = 0: every slack 1), ``C n``: the unit of a
        scale-free eps (the estimators)."""
        return self.c * self.n
