"""Gap bounds of a robust l1 pair that moves with the bandwidth on a piece (numpy only; the
certificate side, :class:`.bound.RobustL1Bound`, and the search's choice of a drift use them).

On a bandwidth piece :math:`[lo, hi]` the pair is :math:`\\beta(t) = \\sum_k w_k(t)\\,\\beta_k` and
:math:`u(t) = \\sum_k v_k(t)\\, u_k` with weights linear in ``t`` (each side its own).  The gap
:math:`\\lVert y - K_t\\beta(t)\\rVert_1 + \\lambda\\lVert\\beta(t)\\rVert_1 - y^\\top u(t)` is bounded on
each sub-interval between the residual enclosures' nodes by a convex function of ``t``
(:meth:`~problems._regression.RegressionBound.moving_residual_bounds` for the loss,
:math:`\\lambda\\lVert\\beta(t)\\rVert_1` convex, the dual objective linear): its maximum there is at
an end.
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import bernstein_at, coefficient_rounding
from approxpath.moving import parts
from approxpath.numerics import fp_margin

from .._weight_path import kinks, l1_upper, weight_path_bound

__all__ = ["anchored", "anchored_combinations", "box_norm", "dual_values", "lam_gap", "moving_gaps"]


def box_norm(U, W, err):
    """A rigorous upper bound of :math:`\\max_t \\max_i |\\sum_k w_k(t) (U)_{ik}|` for weights of
    degree <= 1 on the piece: linear in ``t``, so largest at an end, where the weights are the
    end coefficients (each value widened by its rounding).

    Parameters
    ----------
    U : ndarray of shape (n, K)
        The points (columns).
    W : ndarray of shape (K, m + 1) or (r, K, m + 1)
        The weights' Bernstein coefficients on the piece; (r, K, m + 1): the r bounds at once, shape (r,) (a search's
        candidate rates: one product per end for all of them).
    err : ndarray of shape (K,), or (r, K)
        The weights' error (not read for one point with a constant weight: :math:`|s|\\max|u|`, one rounding).
    """
    U, W = np.asarray(U, dtype=float), np.asarray(W, dtype=float)
    if W.ndim == 3:
        aU = np.abs(U)
        widen = aU @ (err + coefficient_rounding(W)).T  # (n, r)
        best = np.zeros(W.shape[0])
        for e in {0, W.shape[2] - 1}:
            w = W[:, :, e]  # (r, K)
            value = np.abs(U @ w.T) + fp_margin(U.shape[1], 1.0) * (aU @ np.abs(w).T) + widen
            best = np.maximum(best, value.max(axis=0))
        return best
    if U.shape[1] == 1 and W.shape[1] == 1:  # s u: exact where |s| is 1, else one rounding of |s| max|u|
        s = abs(float(W[0, 0]))
        box = s * float(np.max(np.abs(U)))
        return box if s == 1.0 else box * (1.0 + 2.0**-52)
    return float(box_norm(U, W[None], err)[0])


def anchored(w):
    """Whether the weights ``w`` (r, K, J + 1) at the nodes are an anchor and a direction: two
    points, the first with a weight >= 0 at every node of every candidate (the pairs
    :func:`.continuation.moving_restore` builds: the anchor's weight 1 or the dual's scale, the
    direction's :math:`\\rho (t - m)`)."""
    return w.shape[1] == 2 and bool(np.all(w[:, 0] >= 0))


def _pick(ok0, x0, ok1, x1, merge):
    """``merge`` (np.maximum or np.minimum) of ``x0`` where ``ok0`` and ``x1`` where ``ok1`` (one
    of the two holds everywhere)."""
    return np.where(ok0, np.where(ok1, merge(x0, x1), x0), x1)


def anchored_combinations(w, low, up, ends=False):
    """:meth:`~problems._regression.KernelEnclosures._combinations` for an anchor and a direction
    (:func:`anchored`), the same values (signs of zeros aside) at a fraction of the cost.

    The anchor's weight :math:`w_0 \\ge 0` at both ends of every sub-interval leaves one choice
    of its lines (its upper line for the upper bound, its lower for the lower), so only the
    direction's two lines are enumerated; each line's products with the weights are taken once
    at the nodes (the generic form takes them per sub-interval end, the same products), and the
    extremes over the choices at an end are the anchor's term plus the extreme of the
    direction's terms (rounding is monotone: the same numbers as the extreme of the sums).  The
    curvature terms are :math:`\\max(0, \\mp c_2)/4` with :math:`c_2 = \\Delta w_0 \\Delta L_0 +
    \\Delta w_1 \\Delta L_1` (the division by 4 exact, monotone too).  A choice holds on a
    sub-interval as in the generic form: the direction's line in the bound's own direction
    unless its weight is <= 0 at both ends and not 0 at both, the other unless it is >= 0 at
    both.

    Parameters and returns as :meth:`~problems._regression.KernelEnclosures._combinations`.
    """
    w0, w1 = w[:, 0, None, :], w[:, 1, None, :]  # (r, 1, J + 1)
    a, b = w[:, 1, :-1], w[:, 1, 1:]
    nonneg = (a >= 0) & (b >= 0)
    ok_own = ~((a <= 0) & (b <= 0) & ~nonneg)[:, None, :]  # (r, 1, J): the line in the bound's direction
    ok_other = ~nonneg[:, None, :]
    dw0, dw1 = np.diff(w[:, 0], axis=-1)[:, None, :], (b - a)[:, None, :]  # (r, 1, J)
    X_up, X_low = w1 * up[None, :, 1], w1 * low[None, :, 1]  # (r, n, J + 1)
    # where the direction's upper line is at least its lower one (as computed: always, but for
    # rounding), w_1 U_1 >= w_1 L_1 exactly where w_1 >= 0 at a node (products with one factor
    # are monotone): the choice that holds on a sub-interval gives the extreme at its ends, and
    # where both hold the extreme is taken anyway
    ordered = bool(np.all(up[:, 1] >= low[:, 1]))
    c2_up, c2_low = dw1 * np.diff(up[:, 1], axis=-1)[None], dw1 * np.diff(low[:, 1], axis=-1)[None]
    out = {}
    for side, own, other, c_own, c_other, line0 in (("up", X_up, X_low, c2_up, c2_low, up[:, 0]),
                                                    ("low", X_low, X_up, c2_low, c2_up, low[:, 0])):
        merge = np.maximum if side == "up" else np.minimum
        bend_merge = np.minimum if side == "up" else np.maximum  # the c2 that gives the larger term
        A = w0 * line0[None]  # (r, n, J + 1): the anchor's term at the nodes
        if np.any(dw0):
            c0 = dw0 * np.diff(line0, axis=-1)[None]
            c_own, c_other = c0 + c_own, c0 + c_other
        sign = 1.0 if side == "up" else -1.0
        if ends:
            if ordered:  # the extreme of the direction's terms at each node: the choice's there
                x = A + merge(own, other)
                e0, e1 = x[..., :-1], x[..., 1:]
            else:
                e0 = A[..., :-1] + _pick(ok_own, own[..., :-1], ok_other, other[..., :-1], merge)
                e1 = A[..., 1:] + _pick(ok_own, own[..., 1:], ok_other, other[..., 1:], merge)
            bend = np.maximum(0.0, -sign * _pick(ok_own, c_own, ok_other, c_other, bend_merge)) / 4
            out[side] = (np.stack([e0, e1], axis=-1), bend)
        else:
            bounds = [merge(A[..., :-1] + x[..., :-1], A[..., 1:] + x[..., 1:]) + sign * (np.maximum(0.0, -sign * c) / 4)
                      for x, c in ((own, c_own), (other, c_other))]
            out[side] = _pick(ok_own, bounds[0], ok_other, bounds[1], merge)
    if not ends:
        return out["up"], out["low"]
    return None, None, out["up"][0], out["low"][0], out["up"][1], out["low"][1]


def dual_values(y, U, W, err, positions):
    """The dual objective :math:`y^\\top \\sum_k w_k u_k` (the columns of ``U`` (n, K)) of candidates of weights ``W``
    (r, K, m + 1) at the ``positions`` (T,) in [0, 1] of the piece: values (r, T) and rounding allowances (r,),
    one per candidate for all its positions (the dot products, the combination and the weights' error
    ``err`` (r, K) plus their evaluation)."""
    W = np.asarray(W, dtype=float)
    w = bernstein_at(W, np.asarray(positions, dtype=float))  # (r, K, T)
    yU, yaU = y @ U, np.abs(y) @ np.abs(U)
    values = np.einsum("rkt,k->rt", w, yU)
    top = np.abs(w).max(axis=-1)  # (r, K)
    margin = fp_margin(len(y) + U.shape[1] + 1, 1.0) * (top @ yaU) + (err + coefficient_rounding(W)) @ yaU
    return values, margin


def moving_gaps(bound, B, Wp, errp, U, Wd, errd, lo, hi, loss=None):
    """Upper bounds, rounding included, of the gap of pairs moving on the bandwidth piece
    ``[lo, hi]``, one per candidate ``r``.

    Parameters
    ----------
    bound : RobustL1Bound
    B : ndarray of shape (n, Kp)
        The primal's points (columns).
    Wp : ndarray of shape (r, Kp, 2)
        Each candidate's primal weights (Bernstein coefficients of degree 1 on the piece).
    errp : ndarray of shape (r, Kp)
        How far the exact weights may be from ``Wp``.
    U, Wd, errd
        The same for the dual.
    lo, hi : float
    loss : tuple, optional
        :meth:`~problems._regression.RegressionBound.moving_residual_bounds` of the primal
        with ``Wp``, if already computed.

    Returns
    -------
    ndarray of shape (r,)
    """
    y = bound.y
    lam = bound.sweep.at(hi)[1]
    if loss is None:
        loss = bound.moving_residual_bounds(B, Wp, errp, lo, hi)
    xs, loss, loss_margin = loss  # loss: (r, m-1, 2)
    pos = (xs - lo) / (hi - lo)
    # regularizer at the nodes: lam ||sum_k w_k beta_k||_1 (convex in t)
    S = np.flatnonzero(np.any(B != 0, axis=1))
    wp = bernstein_at(Wp, pos)  # (r, Kp, m)
    reg = lam * np.abs(np.einsum("rkm,ik->rmi", wp, B[S])).sum(axis=-1)  # (r, m)
    norms = np.abs(B).sum(axis=0)  # (Kp,)
    reg_margin = (fp_margin(len(S) + Wp.shape[1] + 8, 1.0) * lam * (np.abs(wp).max(axis=-1) @ norms)
                  + lam * ((errp + coefficient_rounding(Wp)) @ norms))
    # dual objective at the nodes (linear in t)
    dual, dual_margin = dual_values(y, U, Wd, errd, pos)
    G = reg - dual  # (r, m)
    ends = loss + np.stack([G[:, :-1], G[:, 1:]], axis=-1)
    top = ends.max(axis=(-2, -1))
    magnitude = np.abs(loss).max(axis=(-2, -1)) + np.abs(reg).max(axis=-1) + np.abs(dual).max(axis=-1)
    return top + loss_margin + reg_margin + dual_margin + fp_margin(4, 1.0) * magnitude


def lam_gap(bound, primal, dual, lo, hi):
    """A rigorous upper bound of the gap of a pair moving linearly in lambda (the lambda path: the
    kernel fixed; weights of degree at most 1) at every lambda of ``[lo, hi]``: :math:`F = \\lVert y -
    K\\beta(\\lambda)\\rVert_1 - y^\\top u(\\lambda)` is convex and piecewise linear (kinks where a residual
    changes sign) and :math:`N = \\lVert\\beta(\\lambda)\\rVert_1` too: the form of
    :func:`.._weight_path.weight_path_bound`, split at the kinks of :math:`N` and of the residuals."""
    y, n = bound.y, bound.n
    B, Wp, ep = parts(primal, "beta", lo, hi, linear=True, rounded=True)
    U, Wd, ed = parts(dual, "u", lo, hi, linear=True, rounded=True)
    K = bound.gram(lo)  # (the bandwidth is fixed on the lambda path)
    aB = np.abs(B)
    KB = K @ B
    dKB = fp_margin(n, 1.0) * (K @ aB) * (1.0 + fp_margin(n, 1.0)) + bound.entry_error * aB.sum(axis=0)

    def F_at(x):
        wp, wd = bernstein_at(Wp, x), bernstein_at(Wd, x)
        r = y[:, None] - KB @ wp
        rho = (dKB @ np.abs(wp) + (np.abs(KB) @ ep)[:, None]
               + fp_margin(Wp.shape[0] + 1, 1.0) * (np.abs(y)[:, None] + np.abs(KB) @ np.abs(wp)))
        d = U @ wd
        dd = fp_margin(Wd.shape[0], 1.0) * (np.abs(U) @ np.abs(wd)) + (np.abs(U) @ ed)[:, None]
        value = np.abs(r).sum(axis=0) - y @ d
        band = (rho.sum(axis=0) + np.abs(y) @ dd
                + fp_margin(2 * n + 2, 1.0) * (np.abs(r).sum(axis=0) + np.abs(y) @ np.abs(d)))
        return value, band

    cuts = np.concatenate([kinks(B @ Wp), kinks(y[:, None] - KB @ Wp)])
    return weight_path_bound(F_at, l1_upper(B, Wp, ep), cuts, lo, hi, quadratic=False)
