"""kLASSO's restoration: the pair a piece holds, feasible on the whole piece, from the driver's
pair (an exact solve's, or the interpolation of two) -- a scaled dual, the primal with its intercept
refitted at the piece's middle, and between two exact solves a dual and a primal that move with
the bandwidth (:func:`bandwidth_restore`) or with lambda (:func:`lambda_restore`).  The methods of
:class:`.problem.KLasso` call these.
"""

from __future__ import annotations

import numpy as np

from approxpath.moving import Moving, combine, is_moving, value_at
from approxpath.numerics import log_mid, zero_sum

from .._regression import SAFETY, combination_slack
from .bound import KLassoDual, KLassoPrimal

__all__ = ["DRIFTS", "best_scale", "scaled_dual", "middle_primal", "moving_primal", "bandwidth_restore",
           "lambda_restore"]

# How far the combination weight of an interpolated dual may move across a bandwidth piece
# (:func:`bandwidth_restore` keeps the best): 0 (a fixed dual) and 2**-4 .. 1 (sinc, n = 100: smaller
# drifts, 2**-6 and 2**-5, or steps of sqrt(2) certify the same pieces, give or take 2 %)
DRIFTS = np.array([0.0] + [2.0**-k for k in range(4, -1, -1)])


def best_scale(d, y, limit, sup):
    """The best feasible scales of dual directions ``d`` (..., n): the maximizer
    :math:`s = \\min(y^\\top d/\\lVert d\\rVert^2, \\text{limit}/\\text{sup})` of :math:`s\\,y^\\top d - s^2
    \\lVert d\\rVert^2/2` subject to :math:`s\\,\\text{sup} \\le \\text{limit}` (``sup`` (...,): a bound
    of :math:`\\lVert K d\\rVert_\\infty`), 0 where :math:`d = 0` or :math:`y^\\top d \\le 0`.  A NaN
    bound gives NaN (np.minimum keeps it): the run then says why."""
    dd, yd = np.einsum("...i,...i->...", d, d), d @ y
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((dd > 0) & (yd > 0), np.minimum(yd / dd, np.divide(limit, sup)), 0.0)


def scaled_dual(problem, dual, lo, hi=None):
    """Best scaling :math:`s\\,u` of ``u`` (put on the zero-sum grid) feasible for every
    parameter in ``[lo, hi]``: the point ``u`` with the constant weight ``s``."""
    hi = lo if hi is None else hi
    u = zero_sum(value_at(dual, lo).u)
    limit = problem.sweep.weight_floor(lo) * (1.0 - SAFETY)
    s = best_scale(u, problem.y, limit, problem.bound.kernel_sup_norm(u, lo, hi))
    return combine((KLassoDual(u=u),), [[float(s)]], (lo, hi))


def middle_primal(problem, primal, dual, lo, hi=None):
    """The primal's value at the piece's (log-scale) middle ``m``, held fixed on the piece, with
    the intercept refitted there: :math:`\\beta_0 = \\text{mean}(y - K_m\\beta)` (``dual`` is not
    read)."""
    hi = lo if hi is None else hi
    beta = np.asarray(value_at(primal, log_mid(lo, hi)).beta, dtype=float)
    return KLassoPrimal(beta=beta, beta0=_intercept(problem, beta, log_mid(lo, hi)))


def _intercept(problem, beta, x):
    """The intercept refitted to ``beta`` (n,) at the path parameter ``x``: :math:`\\text{mean}(y -
    K_x\\beta)`, from the kernel's columns of the nonzero entries."""
    S = np.flatnonzero(beta)
    return float(np.mean(problem.y - problem.kernels.columns(problem.sweep.at(x)[0], S) @ beta[S]))


def moving_primal(problem, primal, lo, hi):
    """The driver's interpolated primal moving on the bandwidth piece ``[lo, hi]``:
    :math:`\\beta(t) = \\beta_a + \\theta(t)(\\beta_b - \\beta_a)` with :math:`\\theta` the
    interpolation's weight of ``b`` at the piece's ends (linear between), and
    :math:`\\beta_0(t)` refitted, :math:`\\text{mean}(y - K_t\\beta(t))`, at both ends (linear
    between: across a segment of sinc, n = 100, lambda = 1e-3, the refitted intercept moves
    from 4.33 to 2.18, linearly to 3 digits).  None where :math:`\\theta` is the same at both
    ends."""
    theta = primal.restrict(lo, hi)[1]
    theta = (float(theta[0]), float(theta[-1]))
    if not theta[1] != theta[0]:
        return None
    beta_a, beta_b = (np.asarray(p.beta, dtype=float) for p in primal.points)
    slope = beta_b - beta_a
    fits = [_intercept(problem, beta_a + th * slope, x) for x, th in zip((lo, hi), theta)]
    rate = (fits[1] - fits[0]) / (theta[1] - theta[0])
    points = (KLassoPrimal(beta=beta_a, beta0=fits[0] - theta[0] * rate), KLassoPrimal(beta=slope, beta0=rate))
    return Moving(points, np.array([[1.0, 1.0], theta]), (lo, hi))


def bandwidth_restore(problem, primal, dual, lo, hi):
    """:meth:`.problem.KLasso.restore` on a bandwidth piece of the driver's interpolation of two
    exact solves (a moving pair of two points): a moving dual, the drift of the weights with the
    smallest gap bound of :data:`DRIFTS`, and the primal of :func:`moving_primal` (on a piece wider
    than a point where the weight moves, else :func:`middle_primal`)."""
    moving = moving_primal(problem, primal, lo, hi) if hi > lo and is_moving(primal) and primal.degree >= 1 \
        and len(primal.points) == 2 else None
    primal = moving or middle_primal(problem, primal, dual, lo, hi)
    at = log_mid(lo, hi)
    u, slope = problem.bound.moving_basis(*dual.points)
    theta = float(dual.weights_at(at)[1])  # the weight of the second solve at the middle
    w = u + theta * slope  # the dual at the piece's middle
    uu, yu = float(w @ w), float(problem.y @ w)
    if uu == 0.0 or yu <= 0.0 or not slope.any():
        return primal, scaled_dual(problem, value_at(dual, at), lo, hi)
    U = np.column_stack([u, slope])
    limit = problem.sweep.weight_floor(lo) * (1.0 - SAFETY)
    if hi > lo:
        rates = DRIFTS / (hi - lo)
        thetas = theta + rates[:, None] * (np.array([lo, hi]) - at)  # (r, 2): the slope's weight at the ends
        d = u + thetas[..., None] * slope  # (r, 2, n): the dual's direction at each end
        sups = np.stack([problem.bound.point_sup_norm(u, slope, thetas[:, e], x) for e, x in enumerate((lo, hi))], 1)
        ends = best_scale(d, problem.y, limit, sups)
        W = np.stack([ends, ends * thetas], axis=1)  # (r, 2, 2): each end's best feasible point, linear between
        sups = problem.bound.moving_sup_norms(U, W, np.zeros((rates.size, 2)), lo, hi)
        with np.errstate(divide="ignore", invalid="ignore"):  # (a NaN bound scales to NaN: the run says why)
            W = W * np.where(sups <= limit, 1.0, limit / sups)[:, None, None]
    else:  # a point (the driver's checks and guides): the combination at rate 0
        scale = best_scale(w, problem.y, limit, problem.bound.point_sup_norm(u, slope, theta, lo))
        W = np.array([[[1.0], [theta]]]) * scale
    lam = problem.sweep.at(hi)[1]
    if moving is not None:  # the primal's bound at both ends of each sub-interval
        xs, top, _ = problem.bound.moving_primal_ends(moving, lo, hi, lam)
        values = problem.bound.dual_values(U, W, np.zeros(W.shape[:2]), (xs - lo) / (hi - lo))[0]
        k = int(np.argmin((top - np.stack([values[:, :-1], values[:, 1:]], axis=-1)).max(axis=(1, 2))))
    else:
        xs, sq, reg, _ = problem.bound.primal_nodes(primal, lo, hi, lam)
        values = problem.bound.dual_values(U, W, np.zeros(W.shape[:2]), (xs - lo) / (hi - lo) if hi > lo else [0.0])[0]
        k = int(np.argmin((sq + reg - values).max(axis=1)))
    return primal, combine((KLassoDual(u=u), KLassoDual(u=slope)), W[k], (lo, hi))


def lambda_restore(problem, primal, dual, lo, hi):
    """A pair of the driver's interpolation that moves linearly in lambda (the lambda path):
    the primal as it is (:math:`(\\beta, \\beta_0)(\\lambda)`, the two solves' with weights linear in
    lambda: the exact path on a segment without breakpoints), the dual :math:`u_a + \\theta(\\lambda)
    (u_b - u_a)` on the zero-sum grid, scaled at each end of the piece by the best scale
    feasible there (the weights stay linear in lambda; feasibility at both ends is feasibility
    on the piece, :mod:`.lam_path`)."""
    u, v = problem.bound.moving_basis(*dual.points)
    thetas = dual.weights_at(np.array([lo, hi], dtype=float))[1]  # the second solve's weight at the ends
    d = u + thetas[:, None] * v  # (2, n): the dual's direction at each end
    UV = np.column_stack([u, v])
    # each end's bound, and the slack of a verifier's bound of the stored combination
    # (absolute: it matters where lambda is small)
    sups = np.array([problem.bound.kernel_sup_norm(d[e], lam) + combination_slack(UV, np.array([1.0, thetas[e]]))
                     for e, lam in enumerate((lo, hi))])
    scales = best_scale(d, problem.y, np.array([lo, hi]) * (1.0 - SAFETY), sups)
    W = np.stack([scales, scales * thetas])
    return primal, Moving((KLassoDual(u=u), KLassoDual(u=v)), W, (lo, hi))
