"""The search side of a robust l1 pair that moves with the bandwidth across a piece
(:func:`moving_restore`), the projection of a dual on its free coordinates
(:func:`free_projection`), the vectorized weight guide of ``dual_restoration="scaling"``
(:func:`interpolation_gaps`) and the search's bound, which knows the chosen pair's
(:class:`SearchBound`).

Between two exact solves at :math:`t_a < t_b` the solution path is close to the combination
:math:`(1 - \\theta)\\,z_a + \\theta z_b` with :math:`\\theta` moving like :math:`\\log t`.  A
*fixed* pair loses at first order in the piece's width on both sides: the residuals
interpolated to zero leave zero (the primal's kinks) and the active dual constraints
:math:`|(K_t u)_j| = \\lambda` drift (the dual's scaling).  The moving pair follows both to first
order: the primal along the chord :math:`\\beta_b - \\beta_a`, the dual along the secant between
its projections at the piece's two ends (each feasible there: the secant keeps the rows active at
both ends near :math:`\\lambda` between them, where a tangent at the middle leaves them a second-
order distance off at both ends: on sinc with 10 % outliers, n = 100 to 4000, 3.7-6.2x fewer
pieces).
Where the simplex basis changes inside a piece neither is exact: such pieces stay short.
"""

from __future__ import annotations

import numpy as np

from approxpath.compute.parallelism import load_blas
from approxpath.moving import Moving, is_moving, value_at
from approxpath.numerics import log_mid

from .._regression import SAFETY, combination_slack
from .bound import RobustL1Bound, RobustL1Dual, RobustL1Primal
from .moving import box_norm, moving_gaps

__all__ = ["SearchBound", "free_coordinates", "free_projection", "moving_restore", "lambda_restore", "interpolation_gaps",
           "RATE_FACTORS"]

#: The primal's drift rates tried per piece, in units of the natural one (the weight moving like
#: log t), around 1: on the sinc path (n = 1000, 10 % outliers, relative eps 1e-2) these five
#: give 145 pieces, the natural rate alone 153, three (3/4 to 5/4) 147, seven (1/4 to 2) 145.
RATE_FACTORS = np.array([0.5, 0.75, 1.0, 1.25, 1.5])


class SearchBound(RobustL1Bound):
    """:class:`RobustL1Bound` that knows the bound of the pair :func:`moving_restore` just chose
    (:meth:`known_gap`), so that the certifier does not compute it again."""

    _transient = RobustL1Bound._transient + ("_chosen",)

    def known_gap(self, primal, dual, lo, hi):
        """The bound of the pair :func:`moving_restore` just chose on the piece ``[lo, hi]``
        (computed there with the other rates, the same arithmetic per candidate); None for
        any other pair or piece.  A caller need not screen such a pair at the piece's ends
        first: its bound costs nothing more."""
        chosen = getattr(self, "_chosen", None)
        if chosen is not None and chosen[0] is primal and chosen[1] is dual and chosen[2] == (lo, hi):
            return chosen[3]
        return None

    def gap(self, primal, dual, lo, hi=None):
        known = self.known_gap(primal, dual, lo, hi)
        return super().gap(primal, dual, lo, hi) if known is None else known


# A dual coordinate below (1 - _FREE) times the largest is free (its residual is interpolated:
# a basic variable of the exact solve); the exact solves' fixed coordinates are all equal to
# rounding (at +-1, or all scaled alike by the restoration, by 1 - 1e-10 or more), the free
# ones further inside (sinc: 4e-3 and more from the box).
_FREE = 1e-7
# Rows of K u with |(K u)_j| at least this fraction of lambda enter the projection at once (a
# row the projected point violates is added and it is re-solved, at most _ROUNDS times: one or
# two are typical; the final scaling makes the point feasible in any case).
_NEAR_ACTIVE = 0.9
_ROUNDS = 8
# ... and a program whose least-distance residual's last entry is above -_FEASIBLE is infeasible
# (moves of |x| up to ~3e4 count as feasible: far beyond the box)
_FEASIBLE = 1e-9
# NNLS iterations per column (scipy's default is 3; the programs here have ~100 columns)
_NNLS_ITERATIONS = 50


def free_coordinates(*duals):
    """Mask (n,) of the coordinates free (strictly inside the box) in any of the exact ``duals``."""
    mask = None
    for d in duals:
        u = np.abs(np.asarray(d.u, dtype=float))
        free = u < (1.0 - _FREE) * u.max() if u.max() > 0 else np.zeros(u.shape, dtype=bool)
        mask = free if mask is None else mask | free
    return mask


def free_projection(problem, u, free, tau):
    """The Euclidean projection of ``u`` onto :math:`\\{v: |v| \\le 1, \\lVert K_\\tau v\\rVert_\\infty \\le
    \\lambda\\}` moving only the ``free`` coordinates (the others, at their signs, stay): a
    least-distance program in |free| variables solved by NNLS (Lawson and Hanson, ch. 23),
    with the rows of :math:`K_\\tau` near a bound, by that side only (a side violated at the
    result added, and it re-solved); where the free coordinates cannot bring the violated rows
    down to :math:`\\lambda` (far from the exact solves) it keeps every row at most where it is,
    :math:`|(K_\\tau v)_j| \\le \\max(\\lambda, |(K_\\tau u)_j|)`.  The interpolation of two exact
    duals violates the rows active in both at second order in the distance between them; moving
    the free coordinates alone restores them at a fraction of a full projection's cost (sinc,
    n = 100: the same gaps, 0.3-0.5 ms instead of 10-20 ms) where scaling all coordinates loses
    ~5x more.  Feasibility on a piece is made rigorous afterwards by scaling.

    ``u``, ``free`` (:func:`free_coordinates`) of shape (n,); ``problem``'s kernel at ``tau`` and λ
    (``sweep.weight_floor(tau)``).  Returns the projection (n,) as computed (not certified: rows the free
    coordinates cannot bring down stay above λ); ``u`` itself where no coordinate is free or no row is near a
    bound; the last point found where NNLS stops at its iteration limit.
    """
    from scipy.optimize import nnls

    load_blas()  # (scipy's OpenBLAS on one thread from this first use on)
    Z = np.flatnonzero(free)
    if not Z.size:
        return u
    lam = problem.sweep.weight_floor(tau)
    K = problem.gram(tau)
    Ku = K @ u
    # constraints by side, 2 j + 1 for (K v)_j <= bound_j and 2 j for -(K v)_j <= bound_j: a row
    # near one bound enters with that side only (the other is ~2 lambda away), the other side
    # only if the point found violates it
    near = np.flatnonzero(np.abs(Ku) >= _NEAR_ACTIVE * lam)
    S = S0 = 2 * near + (Ku[near] > 0)
    if not S.size:
        return u
    v, eye = u, np.eye(Z.size)
    f = np.zeros(Z.size + 1)
    f[-1] = 1.0
    strict, rounds = True, 0
    while True:
        if rounds == _ROUNDS:  # the rows keep growing: treat the program as infeasible
            if not strict:
                break
            strict, rounds, v, S = False, 0, u, S0
        rounds += 1
        R, sign = S // 2, np.where(S % 2 == 1, 1.0, -1.0)
        bound = np.full(R.size, lam) if strict else np.maximum(lam, np.abs(Ku[R]))
        # G x <= h for the change x of u_Z: sign (K u + K_RZ x)_R <= bound, |u_Z + x| <= 1
        G = np.vstack([sign[:, None] * K[np.ix_(R, Z)], eye, -eye])
        h = np.concatenate([bound - sign * Ku[R], 1.0 - u[Z], 1.0 + u[Z]])
        E = np.vstack([-G.T, -h[None, :]])
        try:
            w, _ = nnls(E, f, maxiter=_NNLS_ITERATIONS * G.shape[0])
        except RuntimeError:  # iteration limit: keep the last point, the scaling still applies
            break
        res = E @ w - f
        # infeasible (the free coordinates cannot fix the violated rows): res[-1] is -1/(1 + |x|^2)
        # for a feasible program, 0 to rounding for an infeasible one
        if not res[-1] < -_FEASIBLE:
            if not strict:  # (cannot happen: x = 0 is feasible then)
                break
            strict, rounds, v, S = False, 0, u, S0  # ... then only keep them from getting worse
            continue
        x = -res[:-1] / res[-1]
        v = u.copy()
        v[Z] += x
        limit = lam if strict else np.maximum(lam, np.abs(Ku))
        # K v = K u + K[:, Z] x: n |Z| products instead of n^2 (K is symmetric: its rows Z)
        Kv = Ku + x @ K[Z, :]
        over = np.flatnonzero(np.abs(Kv) > limit)
        grown = np.union1d(S, 2 * over + (Kv[over] > 0))
        if grown.size == S.size:
            break
        S = grown
    return v


def moving_restore(problem, primal, dual, lo, hi):
    """The driver's interpolation of two exact solves (a :class:`~approxpath.moving.Moving`
    pair whose points are the two solves' pairs) as a pair moving with ``t`` across the
    bandwidth piece ``[lo, hi]``: with ``m`` the piece's middle, :math:`\\beta_m + \\rho (t - m)(\\beta_b -
    \\beta_a)` and :math:`s(\\tilde u_m + (t - m) v)`, :math:`\\beta_m` the interpolation at ``m``,
    :math:`v = (\\tilde u_{hi} - \\tilde u_{lo})/(hi - lo)` the secant between the interpolated duals
    projected at the piece's ends (:func:`free_projection`) and :math:`\\tilde u_m` its point at ``m``;
    of the primal's rates :data:`RATE_FACTORS` times the natural one, :math:`1/(m \\log(t_b/t_a))` (the
    weight moving like :math:`\\log t`, as the strategy interpolates), the one with the smallest gap
    bound, and the largest scale ``s <= 1`` feasible on the whole piece (box and
    :math:`\\lVert K_t u(t)\\rVert_\\infty \\le \\lambda`, rigorous).  None where the pair is not an
    interpolation of two exact solves (not two moving points each, a dual point without ``tau``, its solve's
    bandwidth, or both with the same).

    Returns ``(primal, dual)``, each two points (the value at ``m`` and the direction) with weights of degree 1
    on ``(lo, hi)``, ``lo < hi``.  Where ``problem``'s bound is a :class:`SearchBound` the chosen pair's gap bound
    is recorded there (:meth:`SearchBound.known_gap`).
    """
    if not (is_moving(primal) and is_moving(dual) and len(primal.points) == len(dual.points) == 2):
        return None
    (pa, pb), (da, db) = primal.points, dual.points
    if da.tau is None or db.tau is None or da.tau == db.tau:
        return None
    bound = problem.bound
    m = log_mid(lo, hi)
    free = free_coordinates(da, db)
    u_lo, u_hi = (free_projection(problem, np.asarray(value_at(dual, t).u, dtype=float), free, t) for t in (lo, hi))
    v = (u_hi - u_lo) / (hi - lo)
    U = np.column_stack([u_lo + (m - lo) * v, v])
    beta = np.asarray(value_at(primal, m).beta, dtype=float)
    B = np.column_stack([beta, np.asarray(pb.beta, dtype=float) - np.asarray(pa.beta, dtype=float)])
    Wp = _drifting(RATE_FACTORS / (m * np.log(db.tau / da.tau)), m, lo, hi)
    zero = np.zeros(Wp.shape[:2])
    Wd = _drifting([1.0], m, lo, hi)
    box, sup = box_norm(U, Wd, np.zeros(2)), bound.moving_sup_norms(U, Wd, zero[:1], lo, hi)  # (1,) each
    limit = bound.sweep.weight_floor(lo) * (1.0 - SAFETY)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.minimum(np.minimum(1.0, (1.0 - SAFETY) / box), limit / sup)
    Wd = np.repeat(np.where(np.isfinite(scale), scale, 0.0)[:, None, None] * Wd, len(Wp), axis=0)
    gaps = moving_gaps(bound, B, Wp, zero, U, Wd, zero, lo, hi)
    k = int(np.argmin(gaps))
    pair = (Moving((RobustL1Primal(beta=beta), RobustL1Primal(beta=B[:, 1])), Wp[k], (lo, hi)),
            Moving((RobustL1Dual(u=U[:, 0]), RobustL1Dual(u=v)), Wd[k], (lo, hi)))
    if isinstance(bound, SearchBound):
        bound._chosen = (*pair, (lo, hi), float(gaps[k]))
    return pair


def lambda_restore(problem, primal, dual, lo, hi):
    """The driver's interpolation of two exact solves on a piece of the lambda path (weights
    linear in lambda): the primal as it is, the dual's weights scaled at each end of the
    piece by the largest factor at most 1 that keeps it in the box and
    :math:`\\lVert K u\\rVert_\\infty \\le \\lambda` there (feasibility at both ends is feasibility on
    the piece: the constraints are convex in lambda and the dual linear).

    Each factor is the least of 1, ``(1 - SAFETY) / max|d|`` and ``lam (1 - SAFETY) / sup``,
    ``d`` the combination at that end and ``sup`` its
    :meth:`~problems._regression.KernelEnclosures.kernel_sup_norm` plus
    :func:`~problems._regression.combination_slack` (a NaN bound gives a NaN factor).  Returns ``(primal,
    dual)``, the dual a :class:`~approxpath.moving.Moving` of the same points with their weights at ``lo`` and
    ``hi`` scaled, as degree-1 coefficients on ``(lo, hi)``.
    """
    U = np.column_stack([np.asarray(d.u, dtype=float) for d in dual.points])
    W = dual.weights_at(np.array([lo, hi], dtype=float))  # (2, 2): the weights at the ends
    scales = []
    for e, lam in enumerate((lo, hi)):
        d = U @ W[:, e]
        # (the sup with the slack of a verifier's bound of the stored combination)
        box, sup = float(np.max(np.abs(d))), problem.bound.kernel_sup_norm(d, lam) + combination_slack(U, W[:, e])
        # (np.min: a NaN bound scales to NaN, and the run names the overflow; Python's min drops it)
        scales.append(float(np.min([1.0, (1.0 - SAFETY) / box if box > 0 else 1.0,
                                    lam * (1.0 - SAFETY) / sup if not sup <= 0 else 1.0])))
    points = tuple(RobustL1Dual(u=np.asarray(d.u, dtype=float)) for d in dual.points)
    return primal, Moving(points, W * np.array(scales), (lo, hi))


def _drifting(rates, m, lo, hi):
    """Weights (r, 2, 2), one set per rate: the first point with the weight 1, the second with
    :math:`\\rho (t - m)` (Bernstein coefficients of degree 1 on ``[lo, hi]``)."""
    rates = np.asarray(rates, dtype=float)
    ones = np.ones((rates.size, 2))
    return np.stack([ones, np.stack([rates * (lo - m), rates * (hi - m)], axis=1)], axis=1)


def interpolation_gaps(problem, a, b, thetas, tau):
    """Point gaps at ``tau`` (as computed, no rounding allowance) of the combinations
    :math:`(1 - \\theta) z_a + \\theta z_b` of the exact pairs ``a`` and ``b`` for each of
    ``thetas`` (k,), each dual scaled feasible at ``tau``: two kernel products per side, then
    O(n) per weight (the generic guide restores each weight: a kernel product each).  ``a``, ``b``:
    ``(primal, dual)`` pairs, fixed or moving (their values at ``tau``).

    Returns
    -------
    ndarray of shape (k,)
        :math:`\\lVert y - K\\beta\\rVert_1 + \\lambda\\lVert\\beta\\rVert_1 - s\\,y^\\top u` of each combination, ``s``
        the largest scale at most 1 with :math:`\\lVert su\\rVert_\\infty \\le 1` and :math:`\\lVert K su\\rVert_\\infty
        \\le \\lambda(1 - \\mathrm{SAFETY})` (0 where not finite).
    """
    lam = problem.sweep.at(tau)[1]
    th = np.asarray(thetas, dtype=float)
    mix = np.stack([1.0 - th, th])  # (2, k)
    U = np.column_stack([value_at(d, tau).u for _, d in (a, b)])
    B = np.column_stack([value_at(p, tau).beta for p, _ in (a, b)])
    K = problem.gram(tau)
    KU, KB = K @ U, K @ B
    Um, KUm = U @ mix, KU @ mix
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.minimum(1.0 / np.abs(Um).max(axis=0), lam * (1.0 - SAFETY) / np.abs(KUm).max(axis=0))
    s = np.where(np.isfinite(s), np.minimum(s, 1.0), 0.0)
    dual = s * (problem.y @ Um)
    r = problem.y[:, None] - KB @ mix
    primal = np.abs(r).sum(axis=0) + lam * np.abs(B @ mix).sum(axis=0)
    return primal - dual
