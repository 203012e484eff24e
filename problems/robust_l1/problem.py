"""Sparse robust :math:`\\ell_1` kernel regression (the paper's section 5) over the Gaussian
bandwidth or over lambda.

.. math::

    \\min_{\\beta}\\; \\lVert y - K_t\\beta\\rVert_1 + \\lambda \\lVert\\beta\\rVert_1,
    \\qquad
    \\max_{u}\\; y^\\top u \\quad\\text{s.t.}\\quad \\lVert u\\rVert_\\infty \\le 1,\\;
    \\lVert K_t u\\rVert_\\infty \\le \\lambda,

with :math:`K_t = \\exp(-tD)`.  The paper swaps primal and dual so that the parameter-free
side is the "dual"; here both sides are restored instead: :math:`\\beta` is carried as is
(the primal has no constraints), and :math:`u` is restored by the paper's projection onto the
dual set at the piece's ends or by scaling alone; either way a final scaling
:math:`s = \\min(1, \\lambda/\\max_\\tau\\lVert K_\\tau u\\rVert_\\infty)` makes it feasible on the
whole piece.  On the bandwidth path the default, ``moving``, instead moves the interpolated pair
of two exact solves with ``t`` across a piece (:mod:`.continuation`), its dual projected
on the coordinates free in either solve.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from approxpath.errors import SolverError
from approxpath.kernel_problem import KernelProblem
from approxpath.moving import is_moving, value_at
from approxpath.numerics import UNIT_ROUNDOFF, log_mid, weight_resolution
from approxpath.problem import Declaration, restored_gaps
from approxpath.registry import register
from approxpath.solvers import current_settings
from approxpath.solvers.conic import QP, solve_cvxpy, solve_qp
from approxpath.solvers.lp import HighsPool, LPBasis, solve_robust_l1

from .._regression import SAFETY
from .bound import RobustL1Bound, RobustL1Dual, RobustL1Primal
from .continuation import (SearchBound, free_coordinates, free_projection, interpolation_gaps, lambda_restore,
                           moving_restore)
from .projection import project_dual

__all__ = ["RobustL1"]

# dual_from_primal: residuals and coefficients below this (relative) count as zero
_ZERO = 1e-6


@register
class RobustL1(KernelProblem):
    """Sparse robust l1 kernel regression; path over the bandwidth ``t`` (fixed ``lam``) or over ``lam`` (fixed ``bandwidth``).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        :math:`\\lambda` (required for ``parameter="bandwidth"``).
    bandwidth : float
        :math:`t` (required for ``parameter="lam"``).
    parameter : {"bandwidth", "lam"}
    dual_restoration : {"moving", "projection", "scaling"}, default "moving"
        ``moving``: on a bandwidth piece between two exact solves, their interpolated pair
        moves with ``t``: the primal along the chord of the two solves, the dual projected at
        the piece's middle onto the dual set moving only the coordinates free in either
        solve (a small program), then along the chord or the tangent that keeps its active
        rows active, scaled feasible on the whole piece (:mod:`.continuation`); at points,
        that projection and scaling; on the lambda path, scaling.  Sinc, n = 100, lambda =
        0.1, t in [1/8, 32], eps = 0.05: 55 exact solves and 569 pieces where projection
        needs 60 and 1244.
        ``projection``: the paper's Euclidean projection of :math:`u` onto
        :math:`\\{\\lVert v\\rVert_\\infty \\le 1, \\lVert K_\\tau v\\rVert_\\infty \\le \\lambda\\}` at
        both ends of the piece (declared in CVXPY; solved as a least-distance program by
        NNLS, ~10 ms at n = 100), then the scaling below.  ``scaling``: :math:`u \\mapsto s u`
        with the largest :math:`s \\le 1` feasible on the piece (numpy, microseconds).  Scaling
        shrinks every coordinate to fix the few active constraints, so its gap grows ~20x
        faster away from an exact solve: on the paper's set-up (n = 100, lambda = 0.1,
        t in [1, 4], eps = 1) it needs 173 exact solves (21 s) where projection needs 11 (3.4 s).
    kernel : {"gaussian", "laplacian", "ard", "precomputed"}, default "gaussian"
        The distances D of the kernel exp(-tD): squared Euclidean, l1, feature-weighted squared
        Euclidean, or given (then X is D, n x n; docs/kernels.md).
    feature_weights : sequence of float, optional
        The weights w_k >= 0 of kernel="ard": D = sum_k w_k (x_k - x'_k)^2.
    """

    name = "robust_l1"
    Bound = RobustL1Bound
    backends = ("highs", "clarabel", "scs")

    def make_bound(self, X, y, options):
        return SearchBound(X, y, cache=True, **options)

    def __init__(self, X, y, *, lam=None, bandwidth=None, parameter="bandwidth", dual_restoration="moving",
                 kernel="gaussian", feature_weights=None):
        super().__init__(X, y, lam=lam, bandwidth=bandwidth, parameter=parameter, dual_restoration=dual_restoration,
                         kernel=kernel, feature_weights=feature_weights)
        self._highs = HighsPool()  # the exact solves' HiGHS instances, kept between them

    def release(self):
        """Free what this problem keeps between exact solves (its idle HiGHS instances, each
        holding an LP of the kernel's n^2 entries): a caller leaving it for a while (a
        selection's folds, one path at a time)."""
        self._highs.clear()

    # Each weight tried costs a projection (NNLS): weighing at the segment's middle only needs
    # the same exact solves as four levels at a third to a half of the time (sinc data, n =
    # 100-300, relative eps 0.01-0.05: 14/14, 16/16, 23/23, 32/32 solves; n = 300: 57 -> 22 s;
    # n = 200: 28 -> 12 s); no weighing at all costs 0-2 more solves there, 4-9 more at an
    # absolute eps (n = 100 / 200, eps = 1 / 0.25: 15 / 30 / 17 / 33 -> 19 / 38 / 22 / 42).
    weighing_depth = 1
    # The moving pair's bound grows about linearly with its piece's width beyond its point gap
    # (sinc, n = 1000, relative eps 1e-3, four sub-intervals: pieces sized for order 1 take
    # 275 tries for 190 pieces, for order 2 304 for 183, halving 376 for 194).
    piece_bound_order = 1

    def weight_max(self):
        return self.lam_max()

    def smallest_weight(self):
        """Below the rounding of :math:`K_t\\,\\text{sign}(y)` (:func:`~approxpath.numerics.weight_resolution`)."""
        return weight_resolution(np.sign(self.y))

    def lam_max(self, t=None):
        """:math:`\\lVert K_t\\,\\text{sign}(y)\\rVert_\\infty` (``t`` defaults to the fixed bandwidth):
        from there on :math:`\\beta = 0` is optimal (the smallest such lambda when no
        :math:`y_i` is 0)."""
        t = self.bandwidth if t is None else t
        return float(np.max(np.abs(self.kernels.get(t) @ np.sign(self.y))))

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=24, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=7)
        return [
            (cls(X, y, lam=0.1), (0.5, 4.0), 0.3),
            (cls(X, y, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.1),
            (cls(X, y, lam=0.1, dual_restoration="scaling"), (1.0, 3.0), 0.3),
            (cls(X, y, lam=0.1, dual_restoration="projection"), (1.0, 3.0), 0.3),
        ]

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        beta = cp.Variable(self.n, name="beta")
        obj = cp.norm1(self.y - self.gram(t) @ beta) + lam * cp.norm1(beta)
        return Declaration(cp.Problem(cp.Minimize(obj)), dict(beta=beta))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, lam = self.sweep.at(t)
        u = cp.Variable(self.n, name="u")
        cons = [cp.norm_inf(u) <= 1, cp.norm_inf(self.gram(t) @ u) <= lam]
        return Declaration(cp.Problem(cp.Maximize(self.y @ u), cons), dict(u=u))

    def cvxpy_restore_primal(self, primal, dual, tau):
        # beta is carried and the primal has no other variable: nothing to re-optimize
        return RobustL1Primal(beta=np.asarray(primal.beta, dtype=float))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        bw, lam = self.sweep.at(tau)
        K = self.gram(tau)
        u = np.clip(np.asarray(value_at(dual, tau).u, dtype=float), -1.0, 1.0)
        fixed = None
        if self.dual_restoration == "moving" and getattr(dual, "tau", None) is not None:  # only the free ones move
            fixed = np.flatnonzero(~free_coordinates(dual))
        if self.dual_restoration == "projection" or fixed is not None:
            v = cp.Variable(self.n)
            fix = [v[fixed] == u[fixed]] if fixed is not None and fixed.size else []
            try:
                cons = [cp.abs(v) <= 1, cp.abs(K @ v) <= lam] + fix
                solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(v - u)), cons))
            except SolverError:  # (moving) the free coordinates cannot reach the set: no row gets worse
                if fixed is None:
                    raise
                cons = [cp.abs(v) <= 1, cp.abs(K @ v) <= np.maximum(lam, np.abs(K @ u))] + fix
                solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(v - u)), cons))
            if fixed is None:
                return RobustL1Dual(u=np.asarray(v.value))
            u = np.clip(np.asarray(v.value), -1.0, 1.0)
        s = cp.Variable(nonneg=True)  # the largest scaling s <= 1 with ||K_tau s u||_inf <= lam
        cons = [s <= 1, s * float(np.max(np.abs(K @ u))) <= lam]
        solve_cvxpy(cp.Problem(cp.Maximize(s * float(self.y @ u)), cons))
        return RobustL1Dual(u=float(s.value) * u)

    # -------------------------------------------------------------- exact solve
    def exact_qp(self, t):
        """The primal LP in ``x = [beta, e, a]`` (n each): min 1'e + lam 1'a with
        ``|y - K beta| <= e`` and ``|beta| <= a``.  Rows: ``-K beta - e <= -y`` (multiplier
        z1), ``K beta - e <= y`` (z2), ``beta - a <= 0``, ``-beta - a <= 0``; stationarity in
        ``e`` gives ``z1 + z2 = 1`` and in ``beta`` gives ``K(z1 - z2) = z3 - z4``, so
        ``u = z1 - z2`` is the dual point."""
        bw, lam = self.sweep.at(t)
        n = self.n
        import scipy.sparse as sp  # (here: `approxpath problems` lists the problem without it)

        K = sp.csc_matrix(self.gram(t))
        eye, zero = sp.eye(n), sp.csc_matrix((n, n))
        A = sp.vstack([
            sp.hstack([-K, -eye, zero]),
            sp.hstack([K, -eye, zero]),
            sp.hstack([eye, zero, -eye]),
            sp.hstack([-eye, zero, -eye]),
        ]).tocsc()
        b = np.concatenate((-self.y, self.y, np.zeros(2 * n)))
        q = np.concatenate((np.zeros(n), np.ones(n), np.full(n, lam)))
        return QP(P=None, q=q, A=A, b=b, zero=0, nonneg=4 * n)

    def candidate(self, backend, t, warm=None):
        """``highs`` (the default): the LP in its dual form by HiGHS' dual simplex
        (:func:`approxpath.solvers.lp.solve_robust_l1`), warm-started from the nearest exact
        solve's basis; ``clarabel``/``scs``: the primal LP (:meth:`exact_qp`) by an interior point."""
        if backend == "highs":
            sol = solve_robust_l1(self.gram(t), self.y, self.sweep.at(t)[1],
                                  warm=None if warm is None else warm[1].basis,
                                  time_limit=current_settings().time_limit, pool=self._highs)
            return RobustL1Primal(beta=sol.beta), RobustL1Dual(u=sol.u, basis=sol.basis)
        sol = solve_qp(self.exact_qp(t), backend)
        n = self.n
        return RobustL1Primal(beta=sol.x[:n].copy()), RobustL1Dual(u=sol.z[:n] - sol.z[n:2 * n])

    # -------------------------------------------------------------- numpy maps
    def anchor_state(self, pair):
        """What the search keeps beside an exact solve's pair and a checkpoint stores with it
        (a resumed run then places the same solves and pieces): its simplex basis, the next
        solves' warm start and the free coordinates of the moving duals.  ``{}`` without one."""
        basis = getattr(pair[1], "basis", None)
        return {} if basis is None else {"col_status": basis.col_status, "row_status": basis.row_status}

    def with_anchor_state(self, pair, t, state):
        """The exact solve's ``pair`` at ``t`` read from a checkpoint, with its
        :meth:`anchor_state` back (and its parameter, as :meth:`restore` records it)."""
        basis = LPBasis(*(np.asarray(state[k], dtype=np.int8) for k in ("col_status", "row_status"))) if state else None
        return pair[0], replace(pair[1], basis=basis, tau=t)

    def dual_from_primal(self, primal, tau):
        """The optimality conditions read backwards: :math:`u_i = \\text{sign}(r_i)` where the
        residual :math:`r = y - K_\\tau\\beta` is nonzero, and on the points it interpolates
        the least-squares solution of :math:`(K_\\tau u)_j = \\lambda\\,\\text{sign}(\\beta_j)` on the
        support of :math:`\\beta` (clipped to the box); :meth:`restore_dual` makes it feasible.
        (With 0 on the interpolated points the cross-check flagged exact solutions: gaps 1.5-3.8.)"""
        beta = np.asarray(primal.beta, dtype=float)
        K = self.gram(tau)
        r = self.y - K @ beta
        # residuals and coefficients this small (relative) are zero to the accuracy of a claimed
        # solution (the cross-check's default tolerance; Clarabel leaves ~1e-9 on both)
        zero = np.abs(r) <= _ZERO * (1.0 + np.abs(self.y).max())
        u = np.where(zero, 0.0, np.sign(r))
        support = np.abs(beta) > _ZERO * np.abs(beta).max()
        if zero.any() and support.any():
            rhs = self.sweep.at(tau)[1] * np.sign(beta[support]) - K[np.ix_(support, ~zero)] @ u[~zero]
            u[zero] = np.clip(np.linalg.lstsq(K[np.ix_(support, zero)], rhs, rcond=None)[0], -1.0, 1.0)
        return RobustL1Dual(u=u)

    def _project(self, u, lo, hi):
        """The paper's projection of ``u`` onto the dual set at both ends of the piece
        (:func:`.projection.project_dual`)."""
        return project_dual(self, u, lo, hi)

    def _restore_dual(self, dual, lo, hi=None):
        """``u`` clipped to the box (and projected, with ``dual_restoration="projection"``), then
        scaled by the largest :math:`s \\le 1` that keeps :math:`\\lVert K_\\tau u\\rVert_\\infty \\le
        \\lambda` for every parameter of ``[lo, hi]`` (rigorous, rounding included)."""
        hi = lo if hi is None else hi
        # (a moving dual held fixed: its value at the piece's start)
        u = np.clip(np.nan_to_num(np.asarray(value_at(dual, lo).u, dtype=float)), -1.0, 1.0)
        if self.dual_restoration == "projection":
            u = np.clip(self._project(u, lo, hi), -1.0, 1.0)
        elif self.dual_restoration == "moving":  # the free coordinates of the exact duals only
            exact = [d for d in _exact_duals(dual) if d.tau is not None]
            free = free_coordinates(*exact) if exact else None
            if free is not None:
                u = np.clip(free_projection(self, u, free, log_mid(lo, hi)), -1.0, 1.0)
        if float(self.y @ u) <= 0.0:
            return RobustL1Dual(u=np.zeros_like(u))
        limit = self.sweep.weight_floor(lo) * (1.0 - SAFETY)
        sup = self.bound.kernel_sup_norm(u, lo, hi)
        if sup <= limit:
            return RobustL1Dual(u=u)
        # One bound suffices (re-bounding the scaled vector took 2.6 passes per restoration):
        # fl(s u_i) = s u_i (1 + d_i) with |d_i| <= UNIT_ROUNDOFF and kernel entries in [0, 1],
        # so max ||K_t fl(s u)|| <= s (sup + UNIT_ROUNDOFF ||u||_1) <= limit, up to the rounding
        # of s itself (a few units in the last place, far inside SAFETY).  |s u_i| <= |u_i| <= 1.
        s = limit / (sup + UNIT_ROUNDOFF * float(np.abs(u).sum()))
        return RobustL1Dual(u=s * u)

    def primal_objective(self, primal, tau):
        bw, lam = self.sweep.at(tau)
        r = self.y - self.gram(tau) @ primal.beta
        return float(np.abs(r).sum()) + lam * float(np.abs(primal.beta).sum())

    def dual_objective(self, dual, tau):
        return float(self.y @ dual.u)

    def primal_violation(self, primal, tau):
        return 0.0 if np.all(np.isfinite(primal.beta)) else float("inf")

    def dual_violation(self, dual, tau):
        bw, lam = self.sweep.at(tau)
        u = np.asarray(dual.u, dtype=float)
        return float(max(0.0, np.max(np.abs(u)) - 1.0, np.max(np.abs(self.gram(tau) @ u)) - lam))

    def restore(self, primal, dual, lo, hi=None):
        """On a bandwidth piece with ``dual_restoration="moving"``, the driver's moving
        interpolation of two exact solves becomes a pair moving with ``t``
        (:func:`.continuation.moving_restore`); otherwise ``beta`` is carried as is (the primal
        has no constraints) and the dual restored by :meth:`_restore_dual`."""
        hi = lo if hi is None else hi
        if hi > lo and self.dual_restoration == "moving" and is_moving(dual) and len(dual.points) == 2:
            if not self.sweep.along_bandwidth:
                return lambda_restore(self, primal, dual, lo, hi)
            moved = moving_restore(self, primal, dual, lo, hi)
            if moved is not None:
                return moved
        # a point's pair remembers its parameter (an exact solve's: interpolate reads it); the
        # basis rides along
        restored = replace(self._restore_dual(dual, lo, hi), basis=getattr(dual, "basis", None),
                           tau=lo if hi == lo else None)
        return RobustL1Primal(beta=np.asarray(value_at(primal, lo).beta, dtype=float)), restored

    def interpolate(self, a, b, theta):
        """Convex combination of two fixed pairs (restore after); the dual keeps its parents (the
        exact solves, for their free coordinates) for :meth:`restore`."""
        (pa, da), (pb, db) = a, b
        ba, bb = (np.asarray(value_at(p, 0.0).beta, dtype=float) for p in (pa, pb))
        ua, ub = (np.asarray(value_at(d, 0.0).u, dtype=float) for d in (da, db))
        exact = getattr(da, "tau", None) is not None and getattr(db, "tau", None) is not None and db.tau != da.tau
        return (RobustL1Primal(beta=(1 - theta) * ba + theta * bb),
                RobustL1Dual(u=(1 - theta) * ua + theta * ub, parents=(a, b) if exact else None))

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """Point gaps of the combinations, vectorized over ``thetas``
        (:func:`.continuation.interpolation_gaps`)."""
        if self.dual_restoration != "scaling":  # each weight's dual projected (a program each)
            return restored_gaps(self, a, b, thetas, tau)
        return interpolation_gaps(self, a, b, thetas, tau)

    def null_objective(self):
        """The objective of the zero model (beta = 0): ``sum |y|``, the unit of a scale-free eps."""
        return float(np.sum(np.abs(self.y)))

    def predict(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j \\beta_j k_t(x_j, x)` at the rows of ``X_new`` (m, d): shape (m,)."""
        return self.cross_kernel(tau, X_new) @ value_at(primal, self.sweep.at(tau)[0]).beta


def _exact_duals(dual):
    """The exact solves' duals behind ``dual``: itself, the parents of a fixed combination, or
    the points of the driver's moving interpolation."""
    if is_moving(dual):
        return list(dual.points)
    if dual.parents is not None:
        return [d for _, d in dual.parents]
    return [dual]
