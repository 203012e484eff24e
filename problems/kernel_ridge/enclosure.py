"""Where the exact kernel ridge optimum's predictions lie, from a piece's certified gap (numpy only).

The primal :math:`\\lambda c^\\top K c + \\lVert K c - y\\rVert^2` is quadratic: for
:math:`\\delta = c - c^*`, :math:`P(c) - P(c^*) = \\delta^\\top(\\lambda K + K^2)\\delta \\ge
\\lambda\\,\\delta^\\top K \\delta = \\lambda \\lVert f - f^*\\rVert_H^2`.  The dual is an unconstrained concave quadratic:
:math:`D^* - D(a) = (a - a^*)^\\top(I + K/\\lambda)(a - a^*) \\ge \\lambda\\lVert f_{a/\\lambda} -
f^*\\rVert_H^2` (:math:`a^* = \\lambda c^*`).  The two add up to the gap ``g``, and by the
parallelogram law :math:`f^*` lies in the RKHS ball of radius :math:`\\sqrt{g/(2\\lambda)}` around the
midpoint :math:`\\tfrac12(f_c + f_{a/\\lambda})`; as :math:`k_t(x, x) = 1`, every prediction
:math:`f^*(x)` is within that radius of the midpoint's.  On a bandwidth piece :math:`f(x)` is
enclosed per node sub-interval (:func:`approxpath.selection.predictions.expansion_cover`); over a
range of λ (the λ path's piece, or a cell of :mod:`approxpath.cells`) the radius uses the
smallest λ and the midpoint every :math:`1/\\lambda` of the range (a cell's dual grows with λ:
its midpoint does not move); the λ path's piece is enclosed on :data:`_PARTS` parts, each also
around the primal's function alone: :math:`P(c) - P^* \\le g` puts :math:`f^*` within
:math:`\\sqrt{g/\\lambda}` of :math:`f_c`.
"""

from __future__ import annotations

import numpy as np

from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin
from approxpath.selection.predictions import combination_hull, cross_products, expansion_cover, new_distances

__all__ = ["prediction_enclosure"]

# Parts of a λ path's piece enclosed apart (geometric): a moving pair's functions move across the
# piece and the held-out points' extremes are reached at different λ, so one enclosure of the whole
# piece decouples them (each part's moves 1/_PARTS as far; the products are computed once).
_PARTS = 16


def prediction_enclosure(bound, primal, dual, gap, lo, hi, X_new, rows=None, weight_range=None):
    """Enclosures of the exact optimum's predictions at the rows of ``X_new`` for every
    :math:`\\tau \\in [lo, hi]` (see the module docstring): ``(edges (J + 1,), low (m, J), up (m, J))``, ``edges``
    the sub-intervals' ends (the node sub-intervals on a bandwidth piece, :data:`_PARTS` geometric parts
    of ``[lo, hi]`` on the λ path).

    On a bandwidth piece λ is the bound's; on the λ path every λ of each part: the midpoint
    :math:`\\tfrac12(f_c + f_a/\\lambda)` takes :math:`1/\\lambda` in
    :math:`[1/\\lambda_{hi}, 1/\\lambda_{lo}]` (the dual's weights' ranges times it) and the radius
    :math:`\\sqrt{g/(2\\lambda)}` its largest value, at the part's smallest λ; and where the primal's
    weights have degree at most 1, the intersection with :func:`_intersect_primal`'s.  With ``weight_range``
    ``(λ_lo, λ_hi)``, every λ of a cell of :mod:`approxpath.cells`, whose dual grows with λ
    (``RidgeBound.scaled_gap``): at λ it is :math:`(\\lambda/\\lambda_{lo})\\,a`, so
    :math:`f_{a(\\lambda)/\\lambda} = f_{a/\\lambda_{lo}}` is the same at every λ and the radius is largest
    at :math:`\\lambda_{lo}`: the enclosure at :math:`\\lambda_{lo}` holds on the whole cell.

    The parameters are those of :func:`approxpath.problems.klasso.enclosure.prediction_enclosure`
    (``bound`` a ``RidgeBound``, the pair's points ``RidgePrimal`` and ``RidgeDual``), with
    ``weight_range`` ``(λ_lo, λ_hi)`` instead of ``lam``: a cell's, of which only ``λ_lo`` is read.
    """
    if weight_range is not None:
        lam_lo = lam_hi = float(weight_range[0])
    elif bound.sweep.along_bandwidth:
        lam_lo = lam_hi = bound.sweep.weight
    else:
        lam_lo, lam_hi = float(lo), float(hi)
    # the midpoint of the primal's and the dual's functions (each a combination of its points),
    # on one kernel pass; the dual's points enter with the weight 1/lam in [1/lam_hi, 1/lam_lo]
    c_points = primal.points if is_moving(primal) else (primal,)
    a_points = dual.points if is_moving(dual) else (dual,)
    coef = 0.5 * np.column_stack([np.asarray(q.c, dtype=float) for q in c_points]
                                 + [np.asarray(q.a, dtype=float) for q in a_points])
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    edges, low, up = expansion_cover(cross_products(new_distances(bound, X_new, rows)), coef, t_lo, t_hi,
                                     bound.entry_terms, bound.n)
    parted = not (bound.sweep.along_bandwidth or weight_range is not None or not hi > lo)
    if not parted:
        cuts = edges if bound.sweep.along_bandwidth else np.array([lo, hi], dtype=float)
        lam_los, lam_his = np.array([lam_lo]), np.array([lam_hi])
    else:  # the λ path's piece in _PARTS geometric parts: the kernel's products (one λ) serve every part
        # (increasing and inside [lo, hi] on a piece a few floats wide too, where geomspace's rounding is not)
        cuts = np.clip(np.maximum.accumulate(np.geomspace(lam_lo, lam_hi, _PARTS + 1)), lam_lo, lam_hi)
        cuts[0], cuts[-1] = lam_lo, lam_hi
        lam_los, lam_his = cuts[:-1], cuts[1:]
        f_low, f_up = low, up  # (m, K, 1): the points' functions
        low, up = np.repeat(low, _PARTS, axis=-1), np.repeat(up, _PARTS, axis=-1)
    # the radius at each part's smallest λ (the quotients' rounding)
    R = np.sqrt(np.maximum(0.5 * gap / lam_los, 0.0)) * (1.0 + fp_margin(4, 1.0)) if np.isfinite(gap) else \
        np.full(lam_los.size, np.inf)
    inverse = np.stack([1.0 / lam_his, 1.0 / lam_los], axis=-1) * np.array([1.0 - fp_margin(1, 1.0),
                                                                          1.0 + fp_margin(1, 1.0)])
    a_ranges = weight_ranges(dual, cuts)[1][..., :, None] * inverse[:, None, None, :]  # (J, K, 2 ends, 2 inverses)
    a_ranges = np.stack([a_ranges.min(axis=(-2, -1)), a_ranges.max(axis=(-2, -1))], axis=-1)
    a_ranges = np.stack([a_ranges[..., 0] - fp_margin(1, 1.0) * np.abs(a_ranges[..., 0]),
                         a_ranges[..., 1] + fp_margin(1, 1.0) * np.abs(a_ranges[..., 1])], axis=-1)
    ranges = np.concatenate([weight_ranges(primal, cuts)[1], a_ranges], axis=1)
    low, up = combination_hull(np.broadcast_to(ranges, (low.shape[-1],) + ranges.shape[1:]), low, up)  # (m, J)
    mag = np.abs(low) + np.abs(up) + R
    low, up = low - R - fp_margin(2, 1.0) * mag, up + R + fp_margin(2, 1.0) * mag
    if parted and (not is_moving(primal) or primal.degree <= 1):
        low, up = _intersect_primal(primal, cuts, f_low[:, :len(c_points)], f_up[:, :len(c_points)], gap, low, up)
    return (edges if bound.sweep.along_bandwidth else cuts), low, up


def _intersect_primal(primal, cuts, f_low, f_up, gap, low, up):
    """``(low, up)`` (m, J) on the parts between ``cuts`` intersected with the enclosures around the
    primal's function alone: :math:`P(c) - P^* \\ge \\lambda\\lVert f_c - f^*\\rVert_H^2` puts :math:`f^*` within
    :math:`\\sqrt{g/\\lambda}` of :math:`f_c`, whose weights have degree at most 1 in λ: each prediction
    is linear in λ on a part, between its values at the part's ends, each the combination of the
    points' functions (``f_low``, ``f_up``: (m, K, 1), half of each, the midpoint's columns) with
    the weights there.  Where the midpoint's dual half moves as much as the primal (a pair moving in
    λ), its weights' ranges and 1/λ's, taken apart, widen it by the size of the functions, not their
    change."""
    at = weight_ranges(primal, np.stack([cuts, cuts], axis=1))[1]  # (J + 1, K, 2): each weight at each cut
    J1 = cuts.size
    e_low, e_up = combination_hull(2.0 * at, np.repeat(f_low, J1, axis=-1), np.repeat(f_up, J1, axis=-1))
    p_low, p_up = np.minimum(e_low[:, :-1], e_low[:, 1:]), np.maximum(e_up[:, :-1], e_up[:, 1:])
    R = np.sqrt(np.maximum(gap / cuts[:-1], 0.0)) * (1.0 + fp_margin(4, 1.0)) if np.isfinite(gap) else \
        np.full(J1 - 1, np.inf)
    mag = np.abs(p_low) + np.abs(p_up) + R
    return (np.maximum(low, p_low - R - fp_margin(2, 1.0) * mag),
            np.minimum(up, p_up + R + fp_margin(2, 1.0) * mag))
