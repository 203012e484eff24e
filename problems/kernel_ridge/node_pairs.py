"""The pair of a cell of kernel ridge's bandwidth path from the exact optima at the ends of a span
around it (:func:`node_pair`), the pair whose certified gap the closed-form criteria
(:mod:`.criteria`) are enclosed from where no path was computed.

The optima come from the factorizations :func:`.facts.cached_facts` keeps at the span's ends; inside
the span they are predicted by the cubic Hermite interpolant of the optima and their derivatives in
the bandwidth (linear where the factorizations took no derivative), and the pair moves linearly
between its values at the cell's ends (a :class:`~approxpath.moving.Moving` pair stored as an
anchor and a direction).  Numpy only; re-exported by :mod:`.criteria`.
"""

from __future__ import annotations

import numpy as np

from approxpath.errors import InputError

from .facts import cached_facts

__all__ = ["node_pair"]


def node_pair(bound, name, lo, hi, cache, span=None):
    """The pair of ``[lo, hi]`` from the optima at the ends of ``span = (a, b)`` (default ``(lo,
    hi)``; :math:`a \\le lo \\le hi \\le b`) that the factorizations :func:`.facts.cached_facts`
    keeps there for the criterion ``name`` give (an :class:`~approxpath.errors.InputError` where
    none is accurate enough): :math:`c(t) = c_{lo} + \\theta(t)(c_{hi} - c_{lo})`, :math:`\\theta`
    linear from 0 at ``lo`` to 1 at ``hi``, and :math:`a(t) = \\lambda c(t)` (a fixed pair at
    ``lo == hi``), where :math:`c_{lo}, c_{hi}` are the optima at ``lo`` and ``hi`` when those are
    the ends of ``span``, else the cubic Hermite interpolant of the optima and their derivatives
    :math:`dc/dt = \\tilde K^{-1}(D\\circ K_t)c` at ``a`` and ``b`` there (a prediction, not an
    optimum: the pair's gap bound certifies whatever it is; the linear one where the
    factorizations took no derivative, as for the marginal likelihood's log det alone).
    ``bound`` is on a bandwidth path (λ fixed: ``bound.sweep.weight``), ``name`` a key of
    :data:`.criteria.END_LEVEL` (the level of facts factorized at the ends), ``cache`` a dict, filled as needed.

    Its gap over the interval is fourth order in the width (:mod:`.bound`) plus the square of the
    prediction's error, eighth order in the width of ``span``: a span split at Hermite points
    is enclosed as tightly as one split at as many exact optima (sinc n = 1000, t = 1: a cell
    0.35 wide in log t in two halves at its predicted middle, gap bounds 9.4e-3, against 1.2e-2
    from the optimum there), without the factorization.  Stored as the anchor :math:`c_{lo}`
    and the direction :math:`c_{hi} - c_{lo}` (weights 1 and :math:`\\theta`), not as the two
    ends: the enclosures of :math:`K_t c(t)` combine each point's expansion with its weight's
    range on a sub-interval, and two optima that nearly cancel (weights :math:`1 - \\theta,
    \\theta`) left a floor of 0.12 per entry at n = 1000 however narrow the cell.

    Returns
    -------
    primal, dual : RidgePrimal, RidgeDual, or Moving
        A fixed pair at ``lo == hi``; else two :class:`~approxpath.moving.Moving` on ``(lo, hi)`` with the points
        (anchor, direction) and the weights' Bernstein coefficients ``[[1, 1], [0, 1]]``.

    Raises
    ------
    InputError
        No factorization at an end of ``span`` is certified (λ too small for n).
    """
    from approxpath.moving import Moving

    from .bound import RidgeDual, RidgePrimal
    from .criteria import END_LEVEL  # (here: criteria re-exports node_pair, a module-level import would be circular)

    lam = bound.sweep.weight
    a, b = (lo, hi) if span is None else span
    facts = []
    for x in (a,) if b == a else (a, b):
        facts.append(cached_facts(bound, x, cache, END_LEVEL[name]))
        if facts[-1].solution is None:
            raise InputError(f"kernel_ridge: lam = {lam:g} is too small for n = {bound.n}: K_t + lam I at t = {x:.6g} "
                             f"has no factorization whose rounding is certified below lam / 2; raise lam")
    ends = [_hermite(facts, a, b, x) for x in ((lo,) if hi == lo else (lo, hi))]
    if hi == lo:
        return RidgePrimal(c=ends[0]), RidgeDual(a=lam * ends[0])
    anchor, direction = ends[0], ends[1] - ends[0]
    weights = np.array([[1.0, 1.0], [0.0, 1.0]])  # Bernstein coefficients of 1 and theta on [lo, hi]
    return (Moving((RidgePrimal(c=anchor), RidgePrimal(c=direction)), weights, (lo, hi)),
            Moving((RidgeDual(a=lam * anchor), RidgeDual(a=lam * direction)), weights, (lo, hi)))


def _hermite(facts, a, b, x):
    """The optimum at ``x`` where ``x`` is ``a`` or ``b`` (``facts`` there), else the cubic
    Hermite interpolant of the optima and their derivatives at ``a`` and ``b`` (linear where the
    facts have no derivative)."""
    if x == a or x == b:
        return facts[0 if x == a else -1].solution
    fa, fb = facts
    h, s = b - a, (x - a) / (b - a)
    if fa.derivative is None or fb.derivative is None:
        return fa.solution + s * (fb.solution - fa.solution)
    return ((1 + 2 * s) * (1 - s) ** 2 * fa.solution + s * s * (3 - 2 * s) * fb.solution
            + h * s * (1 - s) ** 2 * fa.derivative - h * s * s * (1 - s) * fb.derivative)
