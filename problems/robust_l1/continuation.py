"""The search side of a robust l1 pair that moves with the bandwidth across a piece: the
interpolated pair of two exact solves whose combination weight drifts with ``t``
(:func:`moving_restore`), the vectorized weight guide (:func:`interpolation_gaps`) and a bound
that memoizes kernel products (:class:`SearchBound`).

Between two exact solves at :math:`t_a < t_b` (the same simplex basis, or nearly) the solution
path is close to the combination :math:`(1 - \\theta)\\,z_a + \\theta z_b` with :math:`\\theta`
moving like :math:`\\log t`.  A *fixed* pair loses at first order in the piece's width on both
sides: the residuals interpolated to zero leave zero (the primal's kinks) and the active dual
constraints :math:`|(K_t u)_j| = \\lambda` drift (the dual's scaling); the pair whose weight
drifts, :math:`\\theta(t) = \\theta_0 + \\rho (t - m)`, follows both to second order.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from approxpath.numerics import log_mid

from .._regression import SAFETY
from .bound import RobustL1Bound, RobustL1Dual, RobustL1Primal
from .moving import box_norms, moving_gaps

__all__ = ["SearchBound", "moving_restore", "interpolation_gaps", "RATE_FACTORS"]

#: Drift rates tried per piece, in units of the natural one, 1/(m log(t_b/t_a)) (the weight
#: moving like log t): 0 (a fixed pair) and around 1.
RATE_FACTORS = np.array([0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0])
# kernel products memoized (one entry: the three products at one point for one set of
# coefficient columns): the two ends of every piece of a segment and a few more
_MEMO = 64


class SearchBound(RobustL1Bound):
    """:class:`RobustL1Bound` whose kernel products are memoized by content: the moving pairs
    of one segment combine the same two exact solves, so each node of the segment is one kernel
    pass, shared by the pieces that end there, by the choice of a drift and by the bound of the
    chosen pair (the same values, bit for bit)."""

    _transient = RobustL1Bound._transient + ("_memo",)

    def _products(self):
        memo = getattr(self, "_memo", None)
        if memo is None:
            memo = self._memo = OrderedDict()
        products = self.kernels.products

        def cached(x, C, cols=None, order=2):
            C = np.ascontiguousarray(C, dtype=float)
            key = (float(x), order, C.shape, hash(C.tobytes()), None if cols is None else hash(np.asarray(cols).tobytes()))
            hit = memo.get(key)
            if hit is not None and np.array_equal(hit[0], C) and (cols is None or np.array_equal(hit[1], cols)):
                memo.move_to_end(key)
                return hit[2]
            out = products(x, C, cols, order)
            memo[key] = (C, None if cols is None else np.array(cols), out)
            if len(memo) > _MEMO:
                memo.popitem(last=False)
            return out

        return cached


def _parents(problem, primal, dual):
    """``(beta_a, beta_b, u_a, u_b, theta, t_a, t_b)`` of an interpolated pair, or None."""
    if dual.parents is None or primal.parents is None:
        return None
    u_a, u_b, theta, t_a, t_b = dual.parents
    if t_a is None or t_b is None or not t_b > t_a:
        return None
    return primal.parents[0], primal.parents[1], u_a, u_b, theta, t_a, t_b


def moving_restore(problem, primal, dual, lo, hi):
    """The interpolated pair of ``primal``/``dual`` (with their parents) as a pair moving with
    ``t`` across the bandwidth piece ``[lo, hi]``: :math:`\\beta_a + x(t)(\\beta_b - \\beta_a)` and
    :math:`s(u_a + x(t)(u_b - u_a))`, :math:`x(t) = \\theta + \\rho (t - m)` with ``m`` the
    piece's middle; of the rates :data:`RATE_FACTORS` times the natural one, the one with the
    smallest gap bound, with the largest scale ``s <= 1`` feasible on the whole piece (box
    and :math:`\\lVert K_t u(t)\\rVert_\\infty \\le \\lambda`, rigorous).  None where the pair has
    no parents."""
    parents = _parents(problem, primal, dual)
    if parents is None:
        return None
    beta_a, beta_b, u_a, u_b, theta, t_a, t_b = parents
    bound = problem.bound
    at = log_mid(lo, hi)
    rates = RATE_FACTORS / (at * np.log(t_b / t_a))
    w, v = beta_b - beta_a, u_b - u_a
    box = box_norms(u_a, v, theta, rates, at, lo, hi)
    sups = bound.moving_sup_norms(u_a, v, rates, at, lo, hi, offset=theta)
    limit = bound.sweep.weight_floor(lo) * (1.0 - SAFETY)
    with np.errstate(divide="ignore"):
        scales = np.minimum(np.minimum(1.0, (1.0 - SAFETY) / box), limit / sups)
    p = RobustL1Primal(beta=beta_a, slope=w, offset=theta, rate=0.0, at=at)
    d = RobustL1Dual(u=u_a, scale=1.0, slope=v, offset=theta, rate=0.0, at=at)
    gaps = moving_gaps(bound, p, d, rates, rates, scales, lo, hi)
    k = int(np.argmin(gaps))
    return (RobustL1Primal(beta=beta_a, slope=w, offset=float(theta), rate=float(rates[k]), at=float(at)),
            RobustL1Dual(u=u_a, scale=float(scales[k]), slope=v, offset=float(theta), rate=float(rates[k]),
                         at=float(at)))


def interpolation_gaps(problem, a, b, thetas, tau):
    """Point gaps at ``tau`` (as computed, no rounding allowance) of the combinations
    :math:`(1 - \\theta) z_a + \\theta z_b` of the exact pairs ``a`` and ``b`` for each of
    ``thetas`` (k,), each dual scaled feasible at ``tau``: two kernel products per side, then
    O(n) per weight (the generic guide restores each weight: a kernel product each)."""
    lam = problem.sweep.at(tau)[1]
    th = np.asarray(thetas, dtype=float)
    mix = np.stack([1.0 - th, th])  # (2, k)
    U = np.column_stack([d.value(tau) for _, d in (a, b)])
    B = np.column_stack([p.value(tau) for p, _ in (a, b)])
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
