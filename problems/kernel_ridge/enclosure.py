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
its midpoint does not move).
"""

from __future__ import annotations

import numpy as np

from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin
from approxpath.selection.predictions import combination_hull, cross_products, expansion_cover, new_distances, sqrt_up

__all__ = ["prediction_enclosure"]


def prediction_enclosure(bound, primal, dual, gap, lo, hi, X_new, rows=None, weight_range=None):
    """Enclosures of the exact optimum's predictions at the rows of ``X_new`` for every
    :math:`\\tau \\in [lo, hi]` (see the module docstring): ``(edges (J + 1,), low (m, J), up (m, J))``, ``edges``
    the sub-intervals' ends (the node sub-intervals on a bandwidth piece, ``[lo, hi]`` on the λ path).

    On a bandwidth piece λ is the bound's; on the λ path every λ of the piece ``[lo, hi]``, where
    the pair is held fixed: the midpoint :math:`\\tfrac12(f_c + f_a/\\lambda)` takes :math:`1/\\lambda` in
    :math:`[1/\\lambda_{hi}, 1/\\lambda_{lo}]` (the dual's weights' ranges times it) and the radius
    :math:`\\sqrt{g/(2\\lambda)}` its largest value, at :math:`\\lambda_{lo}`.  With ``weight_range``
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
    R = sqrt_up(0.5 * gap / lam_lo) * (1.0 + fp_margin(2, 1.0)) if np.isfinite(gap) else np.inf  # the quotients' rounding
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    edges, low, up = expansion_cover(cross_products(new_distances(bound, X_new, rows)), coef, t_lo, t_hi,
                                     bound.entry_terms, bound.n)
    cuts = edges if bound.sweep.along_bandwidth else np.array([lo, hi], dtype=float)
    inverse = np.array([1.0 / lam_hi, 1.0 / lam_lo]) * np.array([1.0 - fp_margin(1, 1.0), 1.0 + fp_margin(1, 1.0)])
    a_ranges = weight_ranges(dual, cuts)[1][..., :, None] * inverse  # (J, K, 2 ends, 2 inverses)
    a_ranges = np.stack([a_ranges.min(axis=(-2, -1)), a_ranges.max(axis=(-2, -1))], axis=-1)
    a_ranges = np.stack([a_ranges[..., 0] - fp_margin(1, 1.0) * np.abs(a_ranges[..., 0]),
                         a_ranges[..., 1] + fp_margin(1, 1.0) * np.abs(a_ranges[..., 1])], axis=-1)
    ranges = np.concatenate([weight_ranges(primal, cuts)[1], a_ranges], axis=1)
    low, up = combination_hull(np.broadcast_to(ranges, (low.shape[-1],) + ranges.shape[1:]), low, up)  # (m, J)
    mag = np.abs(low) + np.abs(up) + R
    low, up = low - R - fp_margin(2, 1.0) * mag, up + R + fp_margin(2, 1.0) * mag
    if not bound.sweep.along_bandwidth:
        edges = np.array([lo, hi], dtype=float)
    return edges, low, up
