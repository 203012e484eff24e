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

import math

import numpy as np

from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin, kernel_entry_error, log_mid
from approxpath.selection.predictions import (combination_hull, cross_products, expansion_cover, lattice_products,
                                             new_distances, new_lattice, sqrt_up, stacked_products)

__all__ = ["prediction_enclosure", "optimal_decisions"]

# Entries of one selection of the order statistics (nodes x rows x band columns, 8 bytes each):
# many nodes in one numpy call where the arrays are small (ionosphere: a few nodes x 70 x 100),
# one node at a time where a node's array alone is this large (32 MB).
_SELECT_ENTRIES = 1 << 22
# With a cache, the new points' products are kept for every row (a later call asks for other
# rows) unless the call wants at most 1/_FEW_ROWS of them: those few are cheaper computed at
# each call (a search's later calls mostly want the few points whose sign is still open).
_FEW_ROWS = 4


def prediction_enclosure(bound, primal, gap, lo, hi, X_new, midpoint_bias=True, rows=None, signs=False, cache=None):
    """Enclosures of the exact optimum's decision values :math:`f^*_\\tau(x)` (its bias the
    middle of the optimal biases; every optimal bias with ``midpoint_bias=False``) at the rows of
    ``X_new``, for every :math:`\\tau \\in [lo, hi]`, given a primal whose gap is at most ``gap``
    there (see the module docstring).

    Parameters
    ----------
    bound : SVMBound
    primal : SVMPrimal or Moving
        Its ``w`` (points with a nonzero ``w``; a moving primal: combined with its weights' ranges); the dual is not
        needed (:math:`w = y\\circ\\alpha`).
    gap : float
        The pair's gap bound on the piece (not finite: unbounded enclosures).
    lo, hi : float, or ndarray of shape (q,)
        The piece in the path parameter; arrays, each ``lo < hi`` on a bandwidth path: q intervals of the piece at
        once (one call's overhead for all; each interval's cover as alone).  On the C path the sub-intervals are the
        halves of ``[lo, hi]`` in log C.
    X_new : ndarray of shape (m, d)
        The new points (with ``kernel="precomputed"``, their distances
        :func:`~approxpath.selection.predictions.new_distances` reads).
    midpoint_bias : bool, default True
    rows : ndarray of int, optional
        Only ``X_new[rows]`` (then m is their number).
    signs : bool, default False
        Only the signs are wanted (the 0-1 error): a value whose sign is not decided keeps the cheaper, wider
        enclosure, and a decided one may be bounded between the value and 0 (:func:`optimal_decisions`).
    cache : ProductMemo, optional
        Keeps the kernel products at ``lo`` and ``hi`` for later calls with the same ``primal`` and ``X_new`` (the
        same numbers; :class:`~approxpath.compute.caches.ProductMemo`).

    Returns
    -------
    edges : ndarray of shape (J + 1,), or (q, J + 1)
    low, up : ndarray of shape (m, J), or (m, q, J)
    """
    y = bound.y
    points = primal.points if is_moving(primal) else (primal,)
    keep = [k for k, q in enumerate(points) if np.any(q.w)] or [0]  # (bias-only points: no expansion)
    w = np.stack([np.asarray(points[k].w, dtype=float) for k in keep], axis=1)  # every point's in one pass
    R = sqrt_up(gap) if np.isfinite(gap) else np.inf
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    d, n = bound.entry_terms, bound.n
    Dc = new_distances(bound, X_new, rows)  # (m, n)
    train, lattice = bound.kernels.products, new_lattice(bound, X_new)
    if lattice is None:
        cross = cross_products(Dc)
    else:  # on the training lattice: one histogram over the levels per coefficient vector, for both ends
        cross = lattice_products(lattice[0], lattice[1] if rows is None else lattice[1][rows])
    if cache is not None:
        train = cache.wrap(train, (primal, bound.kernels))
        D_all = new_distances(bound, X_new)
        if lattice is None and Dc.shape[0] * _FEW_ROWS > D_all.shape[0]:  # every row's products once per bandwidth
            cross = cache.wrap(cross_products(D_all), (primal, D_all), rows)
    # the new points' and the training points' expansions in one cover (row by row the same
    # arithmetic and allowances as two)
    edges, e_low, e_up = expansion_cover(stacked_products(cross, train), w, t_lo, t_hi, d, n)  # (m+n, K, [q,] J)
    if not bound.sweep.along_bandwidth:  # the kernel is fixed: the halves of [lo, hi] in C narrow only the
        # ranges of the pair's weights (one expansion for every sub-interval), and let a selection split a cell
        edges = _c_halves(lo, hi)
        e_low, e_up = (np.repeat(v, edges[..., 1:].size, axis=-1) for v in (e_low, e_up))
    J = edges.shape[-1] - 1
    shape = e_low.shape[:2] + (-1,)  # q intervals' sub-intervals one after the other: (m + n, K, q J)
    ranges = weight_ranges(primal, edges)[1][:, keep]  # (q J, K, 2): each weight's range per sub-interval
    e_low, e_up = combination_hull(ranges, e_low.reshape(shape), e_up.reshape(shape))  # (m + n, q J)
    m = Dc.shape[0]
    f_low, f_up, m_low, m_up = e_low[:m], e_up[:m], e_low[m:], e_up[m:]
    t = np.repeat(np.broadcast_to(t_hi, np.shape(lo)).ravel(), J)  # each sub-interval's interval's largest bandwidth
    low, up = optimal_decisions(y, f_low, f_up, m_low, m_up, R, Dc, t, d, midpoint_bias, signs)
    if np.ndim(lo):
        return edges, low.reshape(m, -1, J), up.reshape(m, -1, J)
    return edges, low, up


def _c_halves(lo, hi):
    """The sub-intervals of ``[lo, hi]`` in C (scalars, or q intervals ``lo < hi`` or q points):
    its two halves in the log scale, a point alone; shape (3,) or (2,), or (q, 3) or (q, 2)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if np.all(lo == hi):
        return np.stack([lo, hi], axis=-1)
    return np.stack([lo, log_mid(lo, hi), hi], axis=-1)


def optimal_decisions(y, f_low, f_up, m_low, m_up, R, Dc, t, d, midpoint_bias=True, signs=False):
    """The exact optimum's decision values from enclosures of :math:`\\tilde f^*` (module docstring).

    :math:`f^*(x)` is the mean of the P-th and (P+1)-th smallest over i of :math:`g_i = y_i +
    \\tilde f^*(x) - \\tilde f^*(x_i)`, enclosed by :math:`y_i + f_{low}(x) - m_{up,i} - R\\rho_i(x)`
    and :math:`y_i + f_{up}(x) - m_{low,i} + R\\rho_i(x)`, :math:`\\rho_i(x) = \\sqrt{2 - 2k_t(x, x_i)}`.
    The term of x alone leaves the order statistics, and as :math:`0 \\le R\\rho_i \\le S =
    R\\sqrt 2` only the training points with :math:`c_i = y_i - m_{up,i}` (or :math:`y_i -
    m_{low,i}`) in :math:`[c_{(P)} - S, c_{(P+1)} + S]` can hold the P-th or the (P+1)-th
    place: those below it count, those above do not, and the band alone is searched (its size
    shrinks with R; the whole of it at a wide gap).  The order statistics of the :math:`c_i`
    alone bound the result within S: with ``signs``, a value whose sign those bounds leave
    undecidable keeps them (the band is searched only where a sign may be decided), and in the
    band counts against the value that would decide the sign replace the selection
    (:func:`_deciding`: the same signs decided, a decided value bounded by the nearest band
    value across that mark).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    f_low, f_up : ndarray of shape (m, J)
        :math:`\\tilde f^*` at the new points, per sub-interval (before the gap's radius).
    m_low, m_up : ndarray of shape (n, J)
        The same at the training points.
    R : float
        :math:`\\lVert\\tilde f - \\tilde f^*\\rVert_H` at most.
    Dc : ndarray of shape (m, n)
        The kernel family's distances of the new points to the training points.
    t : float or ndarray of shape (J,)
        The largest bandwidth of the sub-intervals (:math:`\\rho` is largest there), or of
        each sub-interval.
    d : int
        Rounded terms per distance (:func:`~approxpath.numerics.kernel_entry_error`).
    midpoint_bias, signs : bool

    Returns
    -------
    low, up : ndarray of shape (m, J)
    """
    m, J = f_low.shape
    p = int(np.count_nonzero(y > 0))  # two classes: 1 <= p < n
    if not np.isfinite(R):
        return np.full((m, J), -np.inf), np.full((m, J), np.inf)
    # rho as computed is at most sqrt(2) (1 + fp_margin(4)); S bounds every computed R rho, and
    # the selection below is exact for the computed values when their ranges [c - S2, c] (or
    # [c, c + S2]) include the rounding of c -/+ R rho
    S = R * math.sqrt(2.0) * (1.0 + fp_margin(6, 1.0))
    rel = fp_margin(4, 1.0)
    # the x terms, the mean and every rounding: the order statistics of the computed values are
    # within their largest error of the exact ones'; eight roundings of the largest magnitude
    mag = (1.0 + np.abs(f_low) + np.abs(f_up) + np.max(np.abs(m_low) + np.abs(m_up), axis=0)[None, :] + S)
    pad = fp_margin(8, 1.0) * mag
    C = np.stack([y[:, None] - m_up, y[:, None] - m_low])  # (2, n, J): the low and the up side
    sign = np.array([-1.0, 1.0])
    S2 = S + rel * (np.max(np.abs(C), axis=1) + S)  # (2, J)
    kth = np.partition(C, (p - 1, p), axis=1)
    first, second = kth[:, p - 1], kth[:, p]  # (2, J): the P-th and (P+1)-th smallest
    # the value without the spread, and with all of it: the result lies between
    near = 0.5 * (first + second) if midpoint_bias else np.stack([first[0], second[1]])
    far = near + sign[:, None] * S2
    inside = (C >= (first - S2)[:, None]) & (C <= (second + S2)[:, None])  # (2, n, J): the bands
    q = p - 1 - np.count_nonzero(C < (first - S2)[:, None], axis=1)  # (2, J): band place of the P-th
    low, up = np.repeat(far[:1], m, axis=0), np.repeat(far[1:], m, axis=0)
    if signs:  # select where the sign is not decided by the bounds without the spread but may be with it
        known = (f_low + far[0] - pad > 0) | (f_up + far[1] + pad <= 0)
        may = (f_low + near[0] + pad > 0) | (f_up + near[1] - pad <= 0)
        todo = may & ~known  # (m, J)
    else:
        todo = np.ones((m, J), dtype=bool)
    nodes = np.flatnonzero(todo.any(axis=0))
    if nodes.size == 0:
        return f_low + low - pad, f_up + up + pad
    # ||k_x - k_xi||_H (an upper bound) on the columns some band holds and the rows some node
    # searches: rho does not depend on j
    cols, rows = np.flatnonzero(inside[:, :, nodes].any(axis=(0, 2))), np.flatnonzero(todo.any(axis=1))
    Ds = Dc[np.ix_(rows, cols)]
    t = np.broadcast_to(np.asarray(t, dtype=float), (J,))

    def rho_at(js):  # (1 or J', r, c): R rho at each node's bandwidth (one array per distinct one)
        ts, which = np.unique(t[js], return_inverse=True)
        k = np.maximum(np.exp(-ts[:, None, None] * Ds) - kernel_entry_error(d), 0.0)
        rho = R * (np.sqrt(2.0 - 2.0 * k) * (1.0 + fp_margin(4, 1.0)))
        return rho if ts.size == 1 else rho[which]

    # many nodes in one selection: a column outside node j's band is -inf below it (it counts
    # among the smallest), +inf above; the P-th smallest is then at q + (columns below) of the
    # band in order (the same values as a selection within the band alone)
    per = max(1, _SELECT_ENTRIES // max(Ds.size, 1))
    for a in range(0, nodes.size, per):
        js = nodes[a:a + per]
        rho = rho_at(js)
        g = np.empty(np.broadcast_shapes(rho.shape, (js.size, 1, 1)))  # (J', r, c), one buffer for both sides
        for side, out in ((0, low), (1, up)):
            Cs = C[side][np.ix_(cols, js)].T  # (J', c)
            band = inside[side][np.ix_(cols, js)].T
            below = ~band & (Cs < second[side, js][:, None])  # outside the band and below: below first - S2
            Cs = np.where(band, Cs, np.where(below, -np.inf, np.inf))  # (rho is finite: they stay infinite)
            (np.subtract if side == 0 else np.add)(Cs[:, None, :], rho, out=g)
            at = q[side, js] + np.count_nonzero(below, axis=1)  # (J',)
            sub = np.ix_(rows, js)
            if signs:  # counts against the value that decides the sign: no selection
                mark = (pad - f_low if side == 0 else -f_up - pad)[sub].T  # (J', r)
                value = _deciding(g, at, mark, side, midpoint_bias).T
                out[sub] = np.where(todo[sub] & ~np.isnan(value), value, out[sub])
                continue
            lo_, hi_ = np.empty((2, js.size, g.shape[1]))  # (J', r): the at-th and (at+1)-th smallest
            for k in np.unique(at):  # a selection, not a sort (at a4a's size a sort was half the search)
                same = at == k
                part = np.partition(g[same], (k, k + 1), axis=-1)
                lo_[same], hi_[same] = part[..., k], part[..., k + 1]
            lo_, hi_ = lo_.T, hi_.T  # (r, J')
            value = 0.5 * (lo_ + hi_) if midpoint_bias else (hi_ if side else lo_)
            out[sub] = np.where(todo[sub], value, out[sub])
    return f_low + low - pad, f_up + up + pad


def _deciding(g, at, mark, side, midpoint_bias):
    """A bound of the order-statistic value that decides its sign, or NaN where none does.

    ``g`` (J', r, c) holds the values whose ``at``-th and ``(at + 1)``-th smallest (0-based,
    ``at`` of shape (J',)) make the value: their mean, or with ``midpoint_bias=False`` the first
    (``side`` 0) or the second (``side`` 1).  ``mark`` (J', r): the value decides the sign when
    it is above it (``side`` 0, a lower bound) or at most it (``side`` 1, an upper bound).  With
    ``c`` values at most ``mark``, the at-th smallest is above it when ``c <= at`` (then the
    smallest value above ``mark`` bounds it from below), the (at+1)-th is at most it when ``c >= at
    + 2`` (the largest value at most ``mark`` bounds it from above), and when ``c == at + 1`` the
    two are those values exactly.  So the signs decided are the selection's, without one; the
    values nearest the mark are found only where a sign may be decided (a few of the rows).
    """
    le = g <= mark[..., None]
    c = np.count_nonzero(le, axis=-1)
    at = np.broadcast_to(at[:, None], c.shape)
    # where the sign may be decided: c <= at (+ 1 for the mean) for a lower bound, c >= at + 2 (- 1)
    may = c <= at + midpoint_bias if side == 0 else c >= at + 2 - midpoint_bias
    value = np.full(c.shape, np.nan)
    if not may.any():
        return value
    gs, ls, c, at, mark = g[may], le[may], c[may], at[may], mark[may]

    def nearest(above, rows=slice(None)):  # the smallest value above the mark, or the largest at most it
        if above:
            return np.min(np.where(ls[rows], np.inf, gs[rows]), axis=-1)
        return np.max(np.where(ls[rows], gs[rows], -np.inf), axis=-1)

    bound = nearest(side == 0)  # the side's own bound: the smallest above (lower), the largest below (upper)
    got = np.where(c <= at, bound, np.nan) if side == 0 else np.where(c >= at + 2, bound, np.nan)
    tie = c == at + 1
    if midpoint_bias and tie.any():  # the mark between the two: their mean, exactly
        other = nearest(side == 1, tie)
        mean = 0.5 * ((other + bound[tie]) if side == 0 else (bound[tie] + other))
        decides = mean > mark[tie] if side == 0 else mean <= mark[tie]
        got[tie] = np.where(decides, mean, got[tie])
    value[may] = got
    return value
