"""Gap bounds of the SVM's *fixed* pairs on a bandwidth piece (numpy only; the certificate side,
:class:`.bound.SVMBound`, uses it).

On a piece :math:`[lo, hi]` of the bandwidth every class sum
:math:`P_i(x) = \\sum_{j: y_j = y_i}\\alpha_j e^{-xD_{ij}}` (and :math:`N_i`, the other class) is
completely monotone, so it lies between quintic Hermite polynomials (:mod:`approxpath.envelopes`);
``SVMBound`` computes these envelopes of a fixed dual (``P``, ``N`` and ``q``, a quintic above
:math:`\\alpha^\\top Q_x\\alpha = \\alpha^\\top P - \\alpha^\\top N`) and this module bounds the gap
(:func:`fixed_bound`) and the dual objective (:func:`fixed_dual_floor`) over the piece from them.
Pairs whose weights move along the piece: :mod:`.moving`; the C path: :mod:`.c_path`.
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import max_hinge_sum
from approxpath.envelopes import hermite_lower, hermite_upper
from approxpath.numerics import block_sum

__all__ = ["fixed_bound", "fixed_dual_floor"]

# Sub-intervals over which the gap bound of a piece is maximized (ionosphere / diabetes / a1a
# at eps = 0.125: 33 / 46 / 45 pieces with 4, 31 / 41 / 44 with 8, 31 / 41 / 43 with 16,
# 31 / 41 / 42 with 32; the cost is an (n, 6) x (6, 17) product)
_NODES = 16


def fixed_bound(bound, primal, dual, lo, hi, envelopes, scale=1.0):
    """Bound of the gap of a fixed pair on the bandwidth piece [lo, hi] from the envelopes of its
    class sums.

    :math:`\\alpha^\\top Q_x \\alpha = \\alpha^\\top P - \\alpha^\\top N` is below a quintic
    :math:`q`, each margin :math:`m_i = P_i - N_i` above a quintic, so each hinge argument
    :math:`1 - y_i b(x) - m_i` is below a quintic :math:`r_i` (the bias polynomial raised to
    degree 5), and :math:`q + C \\sum_i \\max(0, r_i) - 1^\\top\\alpha` is maximized over the piece
    (:func:`~approxpath.bernstein.max_hinge_sum`).  Off by :math:`O(w^5)` where chords and
    tangents are off by :math:`O(w^2)` (ionosphere, eps = 0.125: the bound is ~1 % above
    the largest of 17 sampled gaps where chords and tangents were 2x; 70 -> 31 pieces).
    With the dual scaled by ``scale`` (``SVMBound.scaled_gap``) :math:`q` enters times
    :math:`\\tfrac12(1 + s^2)` and :math:`1^\\top\\alpha` times ``s``.

    Parameters
    ----------
    bound : SVMBound
        The bound (its C, labels, bias polynomial and rounding allowances).
    primal, dual : SVMPrimal, SVMDual
        The pair, both fixed on the piece.
    lo, hi : float
        The piece of the bandwidth, ``lo < hi``.
    envelopes : tuple
        ``(P, N, q)`` of the dual on the piece: the :class:`~approxpath.envelopes.Envelope` of each
        row's sum over its own class and over the other class, and the Bernstein coefficients (6,)
        of a quintic above :math:`\\alpha^\\top Q_x\\alpha`.
    scale : float, optional
        The factor of the dual (1: the stored pair).

    Returns
    -------
    float
        The gap bound, rounding and the kernel entries' rounding allowed for.
    """
    C = bound.c
    quad = 0.5 * (1.0 + scale * scale)
    alpha = np.asarray(dual.alpha, dtype=float)
    P, N, q = envelopes
    bias, bias_err, bias_top = bound.bias_polynomial(primal, lo, hi, 5)
    r = 1.0 - bound.y[:, None] * bias - (hermite_lower(P) - hermite_upper(N))
    best, lift = max_hinge_sum(quad * q, r, C, _NODES)
    magnitude = (
        lift
        + quad * float(alpha @ (P.magnitude() + N.magnitude()))
        + C * float(np.sum(P.magnitude() + N.magnitude()))
        + scale * alpha.sum()
        + C * bound.n * bias_top  # the bias polynomial's coefficients, rounded
    )
    return (best - scale * block_sum(alpha) + bound.rounding_margin(magnitude, dual)
            + bound.entry_allowance(alpha.sum(), C, lo, hi, quad) + C * bound.n * bias_err)


def fixed_dual_floor(bound, dual, lo, hi, envelopes, scale=1.0):
    """A lower bound of the dual objective :math:`s\\,1^\\top\\alpha - \\tfrac{s^2}2 \\alpha^\\top Q_x\\alpha`
    of a fixed dual on the bandwidth piece [lo, hi]: :math:`\\alpha^\\top Q_x \\alpha` is below the
    largest coefficient of its upper polynomial ``q`` (convex hull of the Bernstein coefficients).

    Parameters
    ----------
    bound : SVMBound
        The bound (its rounding allowances).
    dual : SVMDual
        The dual, fixed on the piece.
    lo, hi : float
        The piece of the bandwidth, ``lo < hi``.
    envelopes : tuple
        ``(P, N, q)`` of the dual on the piece, as for :func:`fixed_bound`.
    scale : float, optional
        The factor :math:`s` of the dual (1: the stored one).

    Returns
    -------
    float
        The floor, less the rounding and the kernel entries' rounding allowances.
    """
    alpha = np.asarray(dual.alpha, dtype=float)
    half = 0.5 * scale * scale
    P, N, q = envelopes
    d = scale * block_sum(alpha) - half * float(q.max()) - half * bound.entry_allowance(alpha.sum(), 0.0, lo, hi)
    mag = (2.0 * half * (float(np.abs(q).max()) + float(alpha @ (P.magnitude() + N.magnitude())))
           + scale * alpha.sum())
    return d - bound.rounding_margin(mag, dual)
