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

from dataclasses import dataclass

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF, fp_margin
from approxpath.selection.predictions import sqrt_up

from .criteria import END_LEVEL, interval_facts, lml_bounds, node_pair, optimal_value, residual_box, residual_criterion

__all__ = ["Edge", "edge", "box_enclosure"]


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
    """The :class:`Edge` of the bandwidths ``[lo, hi]`` at ``bound``'s λ, from the exact optima
    at the ends of ``span`` around it (default ``(lo, hi)``; the pair and the facts as
    :func:`.criteria.node_pair` and :func:`.criteria.criterion_enclosure` take them; ``cache``:
    the bound's point factorizations, a dict)."""
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
    the same bandwidths), both of ``bound``'s data (module docstring)."""
    lam1, lam2 = first.lam, second.lam
    if not lam1 <= lam2 or first.name != second.name:
        raise ValueError(f"box_enclosure: edges of one criterion at lam_1 <= lam_2; got {first.name} at {lam1!r} and "
                         f"{second.name} at {lam2!r}")
    if not (np.isfinite(first.gap) and np.isfinite(second.gap)):
        return -np.inf, np.inf
    n = bound.n
    # each fact's hull over the two edges: lambda d_i (n,), lambda tr, log det
    d_i, l_tr, ld = ((np.minimum(a[0], b[0]), np.maximum(a[1], b[1])) for a, b in zip(first.facts, second.facts))
    if first.name == "lml":
        return lml_bounds(n, (second.value[0] / lam2, first.value[1] / lam1), ld)
    r_lo, r_hi = np.minimum(first.residual[0], second.residual[0]), np.maximum(first.residual[1], second.residual[1])
    # the chord's distance (module docstring), moved up past its few roundings
    chord = ((lam2 - lam1) / lam1) ** 2 * float(np.linalg.norm(bound.y)) / 27.0 * (1.0 + fp_margin(n + 8, 1.0))
    ball = (max(sqrt_up(first.gap), sqrt_up(second.gap)) + chord) * (1.0 + 2 * UNIT_ROUNDOFF)
    return residual_criterion(first.name, n, r_lo, r_hi, ball, d_i, (float(l_tr[0]), float(l_tr[1])))
