"""Where the exact SVM optimum's predictions lie, from a piece's certified gap (numpy only).

With :math:`f = \\tilde f + b`, :math:`\\tilde f = \\sum_j w_j k_t(x_j, \\cdot)` in the RKHS
:math:`H` of :math:`k_t`, the primal is :math:`\\tfrac12\\lVert\\tilde f\\rVert_H^2 + C\\sum_i
\\max(0, 1 - y_i f(x_i))`: the hinge part is convex in :math:`(\\tilde f, b)` and the first part
1-strongly convex in :math:`\\tilde f`, so :math:`P(w, b) - P^* \\ge \\tfrac12\\lVert\\tilde f_w -
\\tilde f^*\\rVert_H^2`.  The dual :math:`\\mathbf 1^\\top\\alpha - \\tfrac12\\lVert\\tilde f_\\alpha\\rVert_H^2`
(:math:`\\tilde f_\\alpha = \\sum_j y_j\\alpha_j k_t(x_j, \\cdot)`) is a concave quadratic maximized
over a convex set at :math:`\\alpha^*` with :math:`\\tilde f_{\\alpha^*} = \\tilde f^*`, so
:math:`D^* - D(\\alpha) \\ge \\tfrac12\\lVert\\tilde f_\\alpha - \\tilde f^*\\rVert_H^2`.  A path's pair
has :math:`w = y\\circ\\alpha` (one function :math:`\\tilde f`), and the two add up to the gap:
:math:`\\lVert\\tilde f - \\tilde f^*\\rVert_H \\le R = \\sqrt{gap}`.

The unpenalized bias gets no strong convexity.  Given :math:`\\tilde f^*`, every optimal bias
minimizes :math:`\\sum_i \\max(0, 1 - y_i(\\tilde f^*(x_i) + b))`, whose minimizers are exactly
:math:`[k_{(P)}, k_{(P+1)}]`, the P-th and (P+1)-th smallest of the kinks :math:`k_i = y_i -
\\tilde f^*(x_i)` (P positive labels; the slope right of b is #{k_i <= b} - P).  Without a free
support vector that interval is wide and the optimum's predictions are not unique: *the* exact
optimum here takes its middle, :math:`b^* = \\tfrac12(k_{(P)} + k_{(P+1)})`, as libSVM does
(``midpoint_bias=False`` encloses every optimal bias instead).  So :math:`f^*(x) = \\tilde
f^*(x) + b^*` is the mean of the P-th and the (P+1)-th smallest of :math:`g_i = y_i +
\\tilde f^*(x) - \\tilde f^*(x_i)`, and
:math:`\\tilde f^*(x) - \\tilde f^*(x_i) = \\langle \\tilde f^*, k_x - k_{x_i}\\rangle_H` is within
:math:`R\\lVert k_x - k_{x_i}\\rVert_H = R\\sqrt{2 - 2k_t(x, x_i)}` of the path's value: order
statistics are monotone in every argument, so the bounds of the :math:`g_i` give the bounds
of :math:`f^*(x)`; as the gap vanishes they meet.  On a bandwidth piece :math:`\\tilde f(x)`, :math:`\\tilde f(x_i)` move with the
kernel and are enclosed per node sub-interval
(:func:`approxpath.selection.predictions.expansion_cover`); for a moving pair (:mod:`.moving`)
every point's expansion is, and their combination with the weights' ranges on the sub-interval
(:func:`~approxpath.selection.predictions.combination_hull`).
"""

from __future__ import annotations

import numpy as np

from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin, kernel_entry_error
from approxpath.selection.predictions import combination_hull, cross_products, expansion_cover, new_distances, sqrt_up

__all__ = ["prediction_enclosure"]


def prediction_enclosure(bound, primal, gap, lo, hi, X_new, midpoint_bias=True):
    """Enclosures of the exact optimum's decision values :math:`f^*_\\tau(x)` (its bias the
    middle of the optimal biases; every optimal bias with ``midpoint_bias=False``) at the rows of
    ``X_new``, for every :math:`\\tau \\in [lo, hi]`, given a primal whose gap is at most ``gap``
    there (see the module docstring).

    Returns
    -------
    edges : ndarray of shape (J + 1,)
    low, up : ndarray of shape (m, J)
    """
    y = bound.y
    points = primal.points if is_moving(primal) else (primal,)
    keep = [k for k, q in enumerate(points) if np.any(q.w)] or [0]  # (bias-only points: no expansion)
    w = np.stack([np.asarray(points[k].w, dtype=float) for k in keep], axis=1)  # every point's in one pass
    R = sqrt_up(gap) if np.isfinite(gap) else np.inf
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    d, n = bound.entry_terms, bound.n
    Dc = new_distances(bound, X_new)  # (m, n)
    edges, f_low, f_up = expansion_cover(cross_products(Dc), w, t_lo, t_hi, d, n)  # (m, J)
    _, m_low, m_up = expansion_cover(bound.kernels.products, w, t_lo, t_hi, d, n)  # (n, J)
    if not bound.sweep.along_bandwidth:  # one sub-interval: the piece's weights (C), not the bandwidth
        edges = np.array([lo, hi], dtype=float)
    ranges = weight_ranges(primal, edges)[1][:, keep]  # (J, K, 2): each weight's range per sub-interval
    (f_low, f_up), (m_low, m_up) = (combination_hull(ranges, *lu) for lu in ((f_low, f_up), (m_low, m_up)))
    # ||k_x - k_xi||_H = sqrt(2 - 2 k_t(x, x_i)), largest at the largest bandwidth
    k = np.maximum(np.exp(-t_hi * Dc) - kernel_entry_error(d), 0.0)
    rho = np.sqrt(2.0 - 2.0 * k) * (1.0 + fp_margin(4, 1.0))  # (m, n)
    spread = R * rho[:, :, None]
    g_low = y[None, :, None] + f_low[:, None, :] - m_up[None, :, :] - spread  # (m, n, J)
    g_up = y[None, :, None] + f_up[:, None, :] - m_low[None, :, :] + spread
    mag = 1.0 + np.abs(f_low)[:, None, :] + np.abs(f_up)[:, None, :] + np.abs(m_low)[None] + np.abs(m_up)[None] + spread
    pad = fp_margin(4, 1.0) * mag  # four roundings per term
    p = int(np.count_nonzero(y > 0))  # two classes: 1 <= p < n
    g_low = np.partition(g_low - pad, (p - 1, p), axis=1)
    g_up = np.partition(g_up + pad, (p - 1, p), axis=1)
    if midpoint_bias:  # the mean of the two order statistics, each enclosed
        low = 0.5 * (g_low[:, p - 1, :] + g_low[:, p, :])
        up = 0.5 * (g_up[:, p - 1, :] + g_up[:, p, :])
        low, up = low - fp_margin(2, 1.0) * np.abs(low), up + fp_margin(2, 1.0) * np.abs(up)
    else:
        low, up = g_low[:, p - 1, :], g_up[:, p, :]
    return edges, low, up
