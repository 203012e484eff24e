"""Kernel ridge's closed-form criteria enclosed on a cell of the (bandwidth, λ) plane (numpy only).

A cell :math:`[t_1, t_2] \\times [\\lambda_1, \\lambda_2]` is enclosed from its two λ edges
(:func:`edge`), each an ordinary bandwidth cell between exact optima (at its ends, or predicted
there from the optima around it: :func:`.criteria.node_pair`, its gap bound and the facts
:mod:`.facts` encloses at those optima):

* *The facts.*  :math:`\\lambda[\\tilde K^{-1}]_{ii}`, :math:`\\lambda\\,\\mathrm{tr}\\,\\tilde K^{-1}` and
  :math:`\\log\\det\\tilde K` are monotone in t (Choi's inequality and Ando's majorization,
  :mod:`.criteria`) and in λ (:math:`\\tfrac{d}{d\\lambda}\\lambda\\tilde K^{-1} = \\tilde K^{-1}K\\tilde
  K^{-1} \\succeq 0`, :math:`\\tfrac{d}{d\\lambda}\\log\\det\\tilde K = \\mathrm{tr}\\,\\tilde K^{-1} > 0`), so
  over the cell each lies in the hull of its enclosures on the two edges.
* *The residual.*  At a fixed t, with :math:`K_t = V\\mathrm{diag}(\\mu)V^\\top` (:math:`\\mu \\ge 0`),
  :math:`\\rho^*(\\lambda) = \\lambda\\tilde K^{-1}y = V\\mathrm{diag}(\\lambda/(\\mu + \\lambda))V^\\top y`.  Each
  :math:`f(\\lambda) = \\lambda/(\\mu + \\lambda)` has :math:`|f''| = 2\\mu/(\\mu + \\lambda)^3`, so its
  chord on :math:`[\\lambda_1, \\lambda_2]` (width Δ) is within :math:`\\tfrac{\\Delta^2}{8}\\max|f''| \\le
  \\tfrac{\\Delta^2}{4}\\max_{\\mu \\ge 0}\\mu/(\\mu + \\lambda_1)^3 = \\Delta^2/(27\\lambda_1^2)` of it (the maximum
  at :math:`\\mu = \\lambda_1/2`).  Hence :math:`\\rho^*(t, \\lambda) = (1 - \\phi)\\rho^*(t, \\lambda_1) +
  \\phi\\rho^*(t, \\lambda_2) + v`, :math:`\\phi = (\\lambda - \\lambda_1)/\\Delta \\in [0, 1]`,
  :math:`\\lVert v\\rVert \\le (\\Delta/\\lambda_1)^2\\lVert y\\rVert/27`; on each edge :math:`\\rho^*` lies in the
  box of its pair's residual plus the ball of radius :math:`\\sqrt{g_k}` (:mod:`.criteria`).  So on
  the cell :math:`\\rho^*` lies in the hull of the two boxes plus the ball of radius
  :math:`\\max_k\\sqrt{g_k} + (\\Delta/\\lambda_1)^2\\lVert y\\rVert/27`: second order in the cell's
  width in λ.
* *The marginal likelihood's data term* :math:`y^\\top\\tilde K^{-1}y = P^*/\\lambda` decreases with
  λ (:math:`\\tilde K^{-1}` does, in the Loewner order): between its lower enclosure on the
  :math:`\\lambda_2` edge and its upper one on the :math:`\\lambda_1` edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, kernel_entry_error
from approxpath.selection.predictions import sqrt_up

from .criteria import END_LEVEL, interval_facts, lml_bounds, node_pair, optimal_value, residual_box, residual_criterion

__all__ = ["Edge", "PredictionEdge", "box_enclosure", "edge", "prediction_box", "prediction_edge"]

# Sub-intervals of a cell's [lambda_1, lambda_2] on which the facts are pinched by their monotone
# parts (:func:`_pinched`): the LOOCV's residual and d_i both grow ~ lambda below the kernel's
# eigenvalues, so their ratio's enclosure is ~ lambda_2 / lambda_1 wide from the edges alone and
# ~ its PARTS-th root wide here.  (Sinc, lambda in [1e-3, 1]: the marginal likelihood at n = 200
# with 4, 8, 16, 32 parts took 940, 778, 579, 507 exact optima; at n = 1000 16 and 32 took 2,215
# and 1,685; LOOCV at n = 1000: 226, 216, 213 with 8, 16, 32.)
_PARTS = 32
# Outward roundings of a product or quotient of two floats (one rounding each, two for safety).
_UP, _DOWN = 1.0 + 2 * UNIT_ROUNDOFF, 1.0 - 2 * UNIT_ROUNDOFF
# phi of a sub-interval's ends widened by this: a lambda inside it has its phi inside (ulps)
_PHI_SLACK = 8 * UNIT_ROUNDOFF


@dataclass(frozen=True)
class Edge:
    """What a cell of the (t, λ) plane takes from one of its λ edges ``[lo, hi]`` at ``lam``:
    the pair's gap bound there, the facts' enclosures over it (``(low, high)`` pairs of
    :math:`\\lambda d_i` (n,), :math:`\\lambda T`, :math:`\\log\\det`), the residual's box (LOOCV,
    GCV) or :math:`P^*`'s enclosure (the marginal likelihood), and the criterion's own
    enclosure on the edge."""

    name: str
    lam: float
    gap: float
    facts: tuple
    residual: tuple = None
    value: tuple = None
    enclosure: tuple = (-np.inf, np.inf)


def edge(bound, name, lo, hi, cache, span=None):
    """The :class:`Edge` of the bandwidths ``[lo, hi]`` at ``bound``'s λ (``bound.sweep.weight``, fixed on its
    bandwidth path), from the exact optima at the ends of ``span`` ``(a, b)`` around it (``a <= lo <= hi <= b``,
    default ``(lo, hi)``; the pair and the facts as :func:`.criteria.node_pair` and
    :func:`.criteria.criterion_enclosure` take them; ``name``: the criterion, a key of :data:`.criteria.CLOSED_FORM`;
    ``cache``: the bound's point factorizations, a dict (:func:`.facts.cached_facts`), filled as needed).

    Returns
    -------
    Edge
        The pair's gap bound and ``facts`` (:func:`.criteria.interval_facts` over ``span``); where the gap bound is
        finite also, for ``"lml"``, :math:`P^*`'s enclosure ``value`` (:func:`.criteria.optimal_value`) and
        :func:`.criteria.lml_bounds`, else the ``residual``'s box (:func:`.criteria.residual_box`) and
        :func:`.criteria.residual_criterion` (the ball's radius :math:`\\sqrt{gap}`) as its ``enclosure``.
    """
    lam, n = bound.sweep.weight, bound.n
    span = (lo, hi) if span is None else span
    pair = node_pair(bound, name, lo, hi, cache, span)
    gap = bound.gap(*pair, lo, hi)
    facts = interval_facts(bound, *span, cache, END_LEVEL[name])
    if not np.isfinite(gap):
        return Edge(name, lam, gap, facts)
    if name == "lml":
        value = optimal_value(bound, *pair, lo, hi)
        return Edge(name, lam, gap, facts, value=value, enclosure=lml_bounds(n, (value[0] / lam, value[1] / lam),
                                                                             facts[2]))
    residual = residual_box(bound, pair[0], lo, hi)[:2]
    return Edge(name, lam, gap, facts, residual=residual,
                enclosure=residual_criterion(name, n, *residual, sqrt_up(gap), *facts[:2]))


def box_enclosure(bound, first, second):
    """``(low, high)``: the criterion of the exact optimum at every point of the cell between
    the edges ``first`` (at :math:`\\lambda_1`) and ``second`` (at :math:`\\lambda_2 \\ge \\lambda_1`,
    the same bandwidths), both of ``bound``'s data (module docstring): the hull of its
    enclosures on :data:`_PARTS` sub-intervals of :math:`[\\lambda_1, \\lambda_2]`; ``(-inf, inf)``
    where either edge's gap bound is not finite.

    Raises
    ------
    ValueError
        The edges are of different criteria, or ``first.lam > second.lam``.
    """
    lam1, lam2 = first.lam, second.lam
    if not lam1 <= lam2 or first.name != second.name:
        raise ValueError(f"box_enclosure: edges of one criterion at lam_1 <= lam_2; got {first.name} at {lam1!r} and "
                         f"{second.name} at {lam2!r}")
    if not (np.isfinite(first.gap) and np.isfinite(second.gap)):
        return -np.inf, np.inf
    n = bound.n
    la, lb = _parts(lam1, lam2)
    if first.name == "lml":
        # y' K~^{-1} y = P*/lambda decreases with lambda while P* >= 0 increases
        q_lo = np.maximum(max(second.value[0], 0.0) / lam2, max(first.value[0], 0.0) / lb) * _DOWN
        q_hi = np.minimum(first.value[1] / lam1, max(second.value[1], 0.0) / la) * _UP
        ld = _log_det(first.facts, second.facts, la, lb, lam1, lam2)
        return _hull(lml_bounds(n, (q, h), (a, b)) for q, h, a, b in zip(q_lo, q_hi, *ld))
    # lambda d_i (m, n) and lambda tr (m,) pinched on each sub-interval
    d_i = _pinched(first.facts[0], second.facts[0], la[:, None], lb[:, None], lam1, lam2)
    l_tr = _pinched(first.facts[1], second.facts[1], la, lb, lam1, lam2)
    r_lo, r_hi = _chord_hull(lam1, lam2, la, lb, first.residual, second.residual)  # the residual's chord
    (r1_lo, r1_hi), (r2_lo, r2_hi) = first.residual, second.residual
    width = lam2 - lam1
    # the chord's distance (module docstring), moved up past its few roundings: second order in the
    # width, or the sub-interval's share of the residual's change across the cell
    gaps = sqrt_up(first.gap) + sqrt_up(second.gap)
    change = float(np.linalg.norm(np.maximum(np.abs(r2_lo - r1_hi), np.abs(r2_hi - r1_lo)))) + gaps
    chord = np.minimum((width / lam1) ** 2 * float(np.linalg.norm(bound.y)) / 27.0, _share(la, lb, lam1, lam2) * change)
    ball = (max(sqrt_up(first.gap), sqrt_up(second.gap)) + chord * (1.0 + fp_margin(n + 8, 1.0))) \
        * (1.0 + 2 * UNIT_ROUNDOFF)
    low, high = residual_criterion(first.name, n, r_lo, r_hi, ball, d_i, l_tr)
    return float(low.min()), float(high.max())


@dataclass(frozen=True)
class PredictionEdge:
    """The exact optima at one λ over the bandwidths ``[lo, hi]`` (a point where they agree), for
    held-out predictions: the pair's coefficients ``ends`` (2, n) at ``lo`` and ``hi`` (linear
    between them in t, :func:`.criteria.node_pair`), the RKHS distance ``radius`` within which
    the exact optimum's function lies of the pair's at every t of the edge, and the enclosures
    ``low``, ``up`` (m, J) of the exact optimum's predictions at the held-out points on the J
    sub-intervals of ``[lo, hi]`` between ``cuts`` (J + 1,)."""

    lam: float
    lo: float
    hi: float
    ends: np.ndarray
    radius: float
    low: np.ndarray
    up: np.ndarray
    cuts: np.ndarray


def prediction_edge(bound, lo, hi, cache, X_new, span=None, rows=None):
    """The :class:`PredictionEdge` of the bandwidths ``[lo, hi]`` (a point where they agree) at ``bound``'s λ
    (``bound.sweep.weight``, fixed on its bandwidth path), from the pair of the optima at the ends of ``span``
    (default ``(lo, hi)``; as in :func:`edge`) that ``cache`` holds (:func:`.criteria.node_pair`; their derivatives
    where the edge has width), its certified gap and the predictions' enclosure (:mod:`.enclosure`: :math:`f^*`
    within :math:`\\sqrt{g/(2\\lambda)}` of the pair's :math:`f_c` in the RKHS, :math:`a = \\lambda c`) at the held-out
    points ``X_new`` (m, d) (with ``kernel="precomputed"``, their distances
    :func:`~approxpath.selection.predictions.new_distances` reads), or at its ``rows`` only (then m is their number).

    Returns
    -------
    PredictionEdge
        Its ``radius`` :math:`\\sqrt{g/(2\\lambda)}` rounded up (inf where the gap bound is not finite); ``ends`` the
        pair's coefficients at ``lo`` and ``hi`` (the anchor and the anchor plus the direction; the point's twice where
        ``lo == hi``); ``low``, ``up`` (m, J) and ``cuts`` (J + 1,) from :func:`.enclosure.prediction_enclosure`.
    """
    from .enclosure import prediction_enclosure

    lam = bound.sweep.weight
    # (a point wants the optimum alone: the marginal likelihood's level of facts)
    primal, dual = node_pair(bound, "lml" if lo == hi else "loocv", lo, hi, cache, span)
    gap = bound.gap(primal, dual, lo, hi)
    cuts, low, up = prediction_enclosure(bound, primal, dual, gap, lo, hi, X_new, rows)
    radius = sqrt_up(0.5 * gap / lam) * (1.0 + fp_margin(2, 1.0)) if np.isfinite(gap) else np.inf
    if lo == hi:
        ends = np.stack([primal.c, primal.c])
    else:
        anchor, direction = (np.asarray(q.c, dtype=float) for q in primal.points)
        ends = np.stack([anchor, anchor + direction])  # (the roundings of this sum: _change's margin)
    return PredictionEdge(lam, float(lo), float(hi), ends, radius, low, up, cuts)


def prediction_box(bound, first, second):
    """``(low, up)`` (m, P J, P = :data:`_PARTS`, 1 where :math:`\\lambda_1 = \\lambda_2`): the exact optimum's
    predictions at the held-out points of the :class:`PredictionEdge` s ``first`` (at :math:`\\lambda_1`) and
    ``second`` (at :math:`\\lambda_2 \\ge \\lambda_1`, the same bandwidths ``[lo, hi]`` and points; both of ``bound``'s
    data, its kernel at ``[lo, hi]``) at every :math:`(t, \\lambda)` of the cell, on :data:`_PARTS` sub-intervals of
    :math:`[\\lambda_1, \\lambda_2]` (geometric, the same for every pair of edges at these λ) times the edges' J
    sub-intervals of ``[lo, hi]`` (column p J + j: λ sub-interval p, t sub-interval j).

    At a fixed t, with :math:`c^*(\\lambda) = V\\mathrm{diag}(1/(\\mu + \\lambda))V^\\top y`, the chord of
    :math:`1/(\\mu + \\lambda)` misses it by at most :math:`s(\\lambda)` times its change across the cell
    (:func:`_share`), so the exact optimum's function is within :math:`s(\\lambda)\\lVert f^*(t, \\lambda_2)
    - f^*(t, \\lambda_1)\\rVert_H` of :math:`(1-\\phi)f^*(t, \\lambda_1) + \\phi f^*(t, \\lambda_2)` in the
    RKHS, and a prediction :math:`\\langle f, k_t(\\cdot, x)\\rangle_H` moves by at most that
    (:math:`k_t(x, x) = 1`).  The change is at most :math:`\\lVert f_{d(t)}\\rVert_H + r_1 + r_2`,
    :math:`d(t)` the difference of the edges' pairs (:func:`_change`); each edge's enclosure holds
    its exact optimum's predictions at every t, so the chord's lie in their combination.

    Raises
    ------
    ValueError
        The edges' ``[lo, hi]`` or their enclosures' shapes differ, or ``first.lam > second.lam``.
    """
    lam1, lam2 = first.lam, second.lam
    if not lam1 <= lam2 or (first.lo, first.hi) != (second.lo, second.hi) or first.low.shape != second.low.shape:
        raise ValueError(f"prediction_box: edges over the same bandwidths and points at lam_1 <= lam_2; got "
                         f"lam = {lam1!r} on {(first.lo, first.hi)} and {lam2!r} on {(second.lo, second.hi)}")
    m, J = first.low.shape
    la, lb = _parts(lam1, lam2)
    low, up = _chord_hull(lam1, lam2, la, lb, (first.low.ravel(), first.up.ravel()),
                          (second.low.ravel(), second.up.ravel()))  # (parts, m J)
    change = (_change(bound, first, second) + first.radius + second.radius) * (1.0 + fp_margin(4, 1.0))
    move = (_share(la, lb, lam1, lam2) * change)[:, None] * (1.0 + 2 * UNIT_ROUNDOFF)
    low, up = (x.reshape(la.size, m, J).transpose(1, 0, 2).reshape(m, la.size * J) for x in (low - move, up + move))
    return low, up


def _change(bound, first, second):
    """An upper bound of :math:`\\lVert f_{d(t)}\\rVert_H` at every t of the edges' ``[lo, hi]``,
    :math:`d(t) = (1 - \\theta)d_{lo} + \\theta d_{hi}` the difference of their pairs.  With
    :math:`K_t \\preceq cK_{hi}` (``bound.loewner_factor``: the kernel's spectral density),
    :math:`d^\\top K_t d \\le c\\,d^\\top K_{hi}d`, convex in θ, so at most c times its larger value at
    :math:`d_{lo}` and :math:`d_{hi}`.  Or entrywise: every :math:`e^{-tD_{ij}}` lies between its
    values at ``hi`` and ``lo``, so :math:`d^\\top K_t d \\le p^\\top K_{lo}p + q^\\top K_{lo}q - 2p^\\top
    K_{hi}q` with :math:`d = p - q`, :math:`p, q \\ge 0` (the products of one sign at their largest
    entries, of opposite signs at their smallest): no cancellation survives it (sinc n = 200, a
    cell at λ in [0.01, 0.025]: 157 against the spectral bound's 1.13 and the true 0.74), so it
    serves only where no spectral bound is known (a precomputed D)."""
    d = second.ends - first.ends  # (2, n): at lo and at hi
    # the products' roundings and the kernel entries' (|K| <= 1), over (sum |d|)^2 at most
    spread = float(np.max(np.sum(np.abs(d), axis=1))) ** 2
    rounding = (fp_margin(2 * bound.n + 8, 1.0) + kernel_entry_error(bound.entry_terms)) * spread
    K_hi, factor = bound.gram(first.hi), bound.loewner_factor(first.lo, first.hi)
    if np.isfinite(factor):  # (c times the exact d'K_hi d: its rounding scaled too, and the product's)
        norm2 = (float(np.max(np.sum(d * (d @ K_hi), axis=1))) + rounding) * factor * (1.0 + 2 * UNIT_ROUNDOFF)
    else:
        k, p, q = len(d), np.maximum(d, 0.0), np.maximum(-d, 0.0)
        low_t, high_t = np.concatenate([p, q]) @ bound.gram(first.lo), q @ K_hi
        norm2 = float(np.max(np.sum(p * low_t[:k] + q * low_t[k:] - 2.0 * p * high_t, axis=1))) + rounding
    # the ends' own roundings (anchor + direction; the dual's a / lam against c): a few ulps of each
    # coefficient, and a coefficient moves a function by at most its size in the RKHS (k(x, x) = 1)
    ends = float(np.max(np.sum(np.abs(first.ends) + np.abs(second.ends), axis=1)))
    return sqrt_up(max(norm2, 0.0)) + 8 * UNIT_ROUNDOFF * ends


def _parts(lam1, lam2):
    """``(la, lb)``: the ends of the :data:`_PARTS` sub-intervals of :math:`[\\lambda_1, \\lambda_2]`,
    geometric, exactly :math:`\\lambda_1` and :math:`\\lambda_2` at the ends (one where they agree)."""
    lam = np.geomspace(lam1, lam2, _PARTS + 1) if lam2 > lam1 else np.array([lam1, lam2])
    lam[0], lam[-1] = lam1, lam2
    return lam[:-1], lam[1:]


def _chord_hull(lam1, lam2, la, lb, first, second):
    """``(low, high)`` (parts, m): on each sub-interval ``[la, lb]``, every point
    :math:`(1-\\phi)x_1 + \\phi x_2` of the chord between the boxes ``first`` :math:`\\ni x_1` and
    ``second`` :math:`\\ni x_2` (``(low, high)`` pairs of shape (m,)), :math:`\\phi = (\\lambda -
    \\lambda_1)/\\Delta`: its hull at the sub-interval's two ends (linear in φ), φ widened by a few
    ulps (a λ of the sub-interval has its φ there), the roundings added."""
    width = lam2 - lam1
    phi = np.clip(np.stack([(la - lam1) / width - _PHI_SLACK, (lb - lam1) / width + _PHI_SLACK]), 0.0, 1.0) \
        if width > 0 else np.zeros((2, 1))
    (x1_lo, x1_hi), (x2_lo, x2_hi) = first, second
    ends_lo = (1.0 - phi)[..., None] * x1_lo + phi[..., None] * x2_lo  # (2, parts, m)
    ends_hi = (1.0 - phi)[..., None] * x1_hi + phi[..., None] * x2_hi
    slack = 4 * UNIT_ROUNDOFF * (np.abs(x1_lo) + np.abs(x1_hi) + np.abs(x2_lo) + np.abs(x2_hi))
    return ends_lo.min(axis=0) - slack, ends_hi.max(axis=0) + slack


def _share(la, lb, lam1, lam2):
    """The largest :math:`s(\\lambda) = (\\lambda - \\lambda_1)(\\lambda_2 - \\lambda)/(\\Delta\\lambda)` on
    each ``[la, lb]`` (rounded up).  The chord of :math:`f = \\lambda/(\\mu + \\lambda)` misses it by
    :math:`\\mu(\\lambda - \\lambda_1)(\\lambda_2 - \\lambda)/((\\mu + \\lambda_1)(\\mu + \\lambda_2)(\\mu +
    \\lambda)) \\le s(\\lambda)\\,(f(\\lambda_2) - f(\\lambda_1))`, so the residual's distance to its chord
    is at most :math:`s(\\lambda)\\lVert\\rho^*(\\lambda_2) - \\rho^*(\\lambda_1)\\rVert` (the same t)."""
    width = lam2 - lam1
    if not width > 0:
        return np.zeros(la.shape)
    peak = math.sqrt(lam1 * lam2)  # s is unimodal, largest at the geometric middle
    at = np.clip(peak, la, lb)
    s = (at - lam1) * (lam2 - at) / (width * at)
    return np.maximum(s, 0.0) * (1.0 + 16 * UNIT_ROUNDOFF) + 4 * UNIT_ROUNDOFF


def _pinched(first, second, la, lb, lam1, lam2):
    """A fact :math:`x = \\lambda g(\\lambda)` with :math:`x \\ge 0` increasing and :math:`g`
    decreasing in λ (:math:`\\lambda d_i`, :math:`\\lambda T`), enclosed on ``[la, lb]`` from its
    enclosures ``first`` at :math:`\\lambda_1` and ``second`` at :math:`\\lambda_2`: :math:`x(\\lambda)
    \\ge \\max(x(\\lambda_1), \\tfrac{\\lambda}{\\lambda_2} x(\\lambda_2))` and :math:`\\le
    \\min(x(\\lambda_2), \\tfrac{\\lambda}{\\lambda_1} x(\\lambda_1))`: exact at both ends, and where
    :math:`x \\propto \\lambda` (λ below the kernel's eigenvalues)."""
    low = np.maximum(first[0], la / lam2 * np.maximum(second[0], 0.0) * _DOWN)
    high = np.minimum(second[1], lb / lam1 * first[1] * _UP)
    return low, high


def _log_det(first, second, la, lb, lam1, lam2):
    """:math:`\\log\\det\\tilde K` on each ``[la, lb]``: increasing and concave in λ (its slope
    :math:`\\mathrm{tr}\\,\\tilde K^{-1}` decreases), so above its chord between the edges and
    below its tangents there (slopes from the edges' :math:`\\lambda T`, infinite when not known)."""
    (a_lo, a_hi), (b_lo, b_hi) = first[2], second[2]
    (_, ta_hi), (tb_lo, _) = first[1], second[1]
    width = lam2 - lam1
    if width > 0:
        phi = (la - lam1) / width - _PHI_SLACK
        chord = np.minimum(a_lo + phi * (b_lo - a_lo), a_lo + ((lb - lam1) / width + _PHI_SLACK) * (b_lo - a_lo))
        chord -= 4 * UNIT_ROUNDOFF * (abs(a_lo) + abs(b_lo))
    else:
        chord = np.full(la.shape, a_lo)
    with np.errstate(invalid="ignore"):  # an unknown slope: inf * 0 where lb = lam1
        rise = (lb - lam1) / lam1 * ta_hi * _UP * _UP
    rise = np.where(np.isnan(rise), np.inf, rise)
    fall = (lam2 - lb) / lam2 * max(tb_lo, 0.0) * _DOWN * _DOWN
    pad = 4 * UNIT_ROUNDOFF * (abs(a_hi) + abs(b_hi) + np.where(np.isfinite(rise), rise, 0.0) + fall)
    return np.maximum(chord, a_lo), np.minimum(np.minimum(a_hi + rise, b_hi - fall), b_hi) + pad


def _hull(enclosures):
    """The hull ``(low, high)`` of ``(low, high)`` pairs."""
    lows, highs = zip(*enclosures)
    return min(lows), max(highs)
