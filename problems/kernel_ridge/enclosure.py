"""Where the exact kernel ridge optimum's predictions lie, from a piece's certified gap (numpy only).

The primal :math:`\\lambda c^\\top K c + \\lVert K c - y\\rVert^2` is quadratic: for
:math:`\\delta = c - c^*`, :math:`P(c) - P(c^*) = \\delta^\\top(\\lambda K + K^2)\\delta \\ge
\\lambda\\,\\delta^\\top K \\delta = \\lambda \\lVert f - f^*\\rVert_H^2`.  The dual is an unconstrained concave quadratic:
:math:`D^* - D(a) = (a - a^*)^\\top(I + K/\\lambda)(a - a^*) \\ge \\lambda\\lVert f_{a/\\lambda} -
f^*\\rVert_H^2` (:math:`a^* = \\lambda c^*`).  The two add up to the gap ``g``, and by the
parallelogram law :math:`f^*` lies in the RKHS ball of radius :math:`\\sqrt{g/(2\\lambda)}` around the
midpoint :math:`\\tfrac12(f_c + f_{a/\\lambda})`; as :math:`k_t(x, x) = 1`, every prediction
:math:`f^*(x)` is within that radius of the midpoint's.  On a bandwidth piece :math:`f(x)` is
enclosed per node sub-interval (:func:`approxpath.selection.predictions.expansion_cover`); on
the λ path the radius uses the piece's smallest λ.
"""

from __future__ import annotations

import numpy as np

from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin
from approxpath.selection.predictions import combination_hull, cross_products, expansion_cover, new_distances, sqrt_up

__all__ = ["prediction_enclosure"]


def prediction_enclosure(bound, primal, dual, gap, lo, hi, X_new, rows=None):
    """Enclosures of the exact optimum's predictions at the rows of ``X_new`` for every
    :math:`\\tau \\in [lo, hi]` (see the module docstring): ``(edges (J + 1,), low (m, J), up (m, J))``."""
    lam = bound.sweep.weight_floor(lo)
    # the midpoint of the primal's and the dual's functions (each a combination of its points),
    # on one kernel pass
    c_points = primal.points if is_moving(primal) else (primal,)
    a_points = dual.points if is_moving(dual) else (dual,)
    coef = 0.5 * np.column_stack([np.asarray(q.c, dtype=float) for q in c_points]
                                 + [np.asarray(q.a, dtype=float) / lam for q in a_points])
    R = sqrt_up(0.5 * gap / lam) * (1.0 + fp_margin(2, 1.0)) if np.isfinite(gap) else np.inf  # the quotients' rounding
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    edges, low, up = expansion_cover(cross_products(new_distances(bound, X_new, rows)), coef, t_lo, t_hi,
                                     bound.entry_terms, bound.n)
    cuts = edges if bound.sweep.along_bandwidth else np.array([lo, hi], dtype=float)
    ranges = np.concatenate([weight_ranges(primal, cuts)[1], weight_ranges(dual, cuts)[1]], axis=1)
    low, up = combination_hull(np.broadcast_to(ranges, (low.shape[-1],) + ranges.shape[1:]), low, up)  # (m, J)
    mag = np.abs(low) + np.abs(up) + R
    low, up = low - R - fp_margin(2, 1.0) * mag, up + R + fp_margin(2, 1.0) * mag
    if not bound.sweep.along_bandwidth:
        edges = np.array([lo, hi], dtype=float)
    return edges, low, up
