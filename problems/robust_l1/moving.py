"""Gap bounds of a robust l1 pair that moves with the bandwidth on a piece (numpy only; the
certificate side, :class:`.bound.RobustL1Bound`, and the search's choice of a drift use them).

On a bandwidth piece :math:`[lo, hi]` the pair is :math:`\\beta(t) = \\beta + x_p(t)\\, w` and
:math:`u(t) = s\\,(u + x_d(t)\\, v)` with :math:`x(t) = o + \\rho (t - a)` linear (each side its
own).  The gap :math:`\\lVert y - K_t\\beta(t)\\rVert_1 + \\lambda\\lVert\\beta(t)\\rVert_1 - y^\\top
u(t)` is bounded on each sub-interval between the residual enclosures' nodes by a convex
function of ``t`` (:meth:`~problems._regression.RegressionBound.moving_residual_bounds` for the
loss, :math:`\\lambda\\lVert\\beta(t)\\rVert_1` convex, the dual objective linear): its maximum there
is at an end.
"""

from __future__ import annotations

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF, fp_margin

__all__ = ["box_norms", "moving_gaps"]


def _x_error(offset, rates, at, lo, hi):
    """Rounding of ``o + rho (t - a)`` computed at a node ``t`` of ``[lo, hi]``: (r,)."""
    return 4 * UNIT_ROUNDOFF * (np.abs(rates) * (abs(lo) + abs(hi) + abs(at)) + abs(offset))


def box_norms(u, v, offset, rates, at, lo, hi):
    """Rigorous upper bounds, one per rate of ``rates`` (r,), of :math:`\\max_{t \\in [lo, hi]}
    \\max_i |u_i + (o + \\rho (t - a)) v_i|`: linear in ``t``, so largest at an end (each value
    widened by its rounding and that of ``x``)."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    rates = np.asarray(rates, dtype=float)
    au, av = np.abs(u), np.abs(v)
    x_error = _x_error(offset, rates, at, lo, hi)[:, None]
    best = np.zeros(rates.shape)
    for t in (lo, hi):
        x = (offset + rates * (t - at))[:, None]  # (r, 1)
        value = np.abs(u + x * v) + fp_margin(2, 1.0) * (au + np.abs(x) * av) + x_error * av
        best = np.maximum(best, value.max(axis=1))
    return best


def moving_gaps(bound, primal, dual, p_rates, d_rates, scales, lo, hi, loss=None):
    """Upper bounds, rounding included, of the gap of a moving pair on the bandwidth piece
    ``[lo, hi]``, one per candidate ``(p_rates[k], d_rates[k], scales[k])`` (the rates of the
    primal and the dual and the dual's scale replace the pair's own; the other fields are the
    pair's; a side without a slope is fixed).

    Parameters
    ----------
    bound : RobustL1Bound
    primal, dual : RobustL1Primal, RobustL1Dual
    p_rates, d_rates, scales : ndarray of shape (r,)
    lo, hi : float
    loss : tuple, optional
        :meth:`~problems._regression.RegressionBound.moving_residual_bounds` of the primal
        with ``p_rates``, if already computed.

    Returns
    -------
    ndarray of shape (r,)
    """
    n, y = bound.n, bound.y
    lam = bound.sweep.at(hi)[1]
    beta = np.asarray(primal.beta, dtype=float)
    w = np.zeros(n) if primal.slope is None else np.asarray(primal.slope, dtype=float)
    p_rates = np.zeros(len(scales)) if primal.slope is None else np.asarray(p_rates, dtype=float)
    po, pat = float(primal.offset), float(primal.at)
    u = np.asarray(dual.u, dtype=float)
    v = np.zeros(n) if dual.slope is None else np.asarray(dual.slope, dtype=float)
    d_rates = np.zeros(len(scales)) if dual.slope is None else np.asarray(d_rates, dtype=float)
    do, dat = float(dual.offset), float(dual.at)
    s = np.asarray(scales, dtype=float)

    if loss is None:
        loss = bound.moving_residual_bounds(beta, w, po, p_rates, pat, lo, hi)
    xs, loss, loss_margin = loss  # loss: (r, m-1, 2)
    # regularizer at the nodes: lam ||beta + x w||_1 (convex in t)
    S = np.flatnonzero((beta != 0) | (w != 0))
    xp = po + p_rates[:, None] * (xs - pat)  # (r, m)
    reg = lam * np.abs(beta[S] + xp[..., None] * w[S]).sum(axis=-1)
    Xp = np.abs(xp).max(axis=-1)
    nb, nw = float(np.abs(beta).sum()), float(np.abs(w).sum())
    reg_margin = (fp_margin(len(S) + 8, 1.0) * lam * (nb + Xp * nw)
                  + lam * _x_error(po, p_rates, pat, lo, hi) * nw)
    # dual objective at the nodes: s (y'u + x y'v) (linear in t)
    yu, yv = float(y @ u), float(y @ v)
    ay = np.abs(y)
    yau, yav = float(ay @ np.abs(u)), float(ay @ np.abs(v))
    xd = do + d_rates[:, None] * (xs - dat)
    dual_vals = s[:, None] * (yu + xd * yv)
    Xd = np.abs(xd).max(axis=-1)
    dual_margin = fp_margin(n + 8, 1.0) * s * (yau + Xd * yav) + s * _x_error(do, d_rates, dat, lo, hi) * yav
    G = reg - dual_vals  # (r, m)
    ends = loss + np.stack([G[:, :-1], G[:, 1:]], axis=-1)
    top = ends.max(axis=(-2, -1))
    magnitude = np.abs(loss).max(axis=(-2, -1)) + np.abs(reg).max(axis=-1) + np.abs(dual_vals).max(axis=-1)
    return top + loss_margin + reg_margin + dual_margin + fp_margin(4, 1.0) * magnitude
