"""Gap bounds of pairs that move linearly in the weight (C or lambda) on a piece of a weight path,
shared by the problems (numpy only; the certificate side uses it).

At a fixed bandwidth the kernel is fixed, and between two breakpoints the exact weight path is
(piecewise) linear; the combination of two exact solves whose weights are linear in the path
parameter :math:`\\tau` follows it.  For every built-in problem the gap of such a pair has the
form

.. math::

    g(\\tau) \\le F(\\tau) + \\tau\\,N(\\tau),

with :math:`F` convex (a quadratic, or piecewise linear) and :math:`N \\ge 0` convex and piecewise
linear: kLASSO's :math:`\\lVert\\beta(\\lambda)\\rVert_1`, the SVM's hinge sum :math:`\\sum_i\\xi_i(C)`.  On
a sub-interval :math:`[a, b]` of the piece (split where :math:`N` or :math:`F` has a kink, so that the
chords are exact there) :math:`N` is below its chord, and :math:`F` is below its chord (piecewise
linear :math:`F`) or is the quadratic through its values at :math:`a`, the middle :math:`c` and
:math:`b` (quadratic :math:`F`).  With :math:`F` known only within bands :math:`\\pm w_j` at the nodes
(rounding), the interpolant :math:`p` of the upper values satisfies :math:`F \\le p + (w_a + w_b)/4`
(the end nodes' Lagrange basis functions are at least :math:`-1/8` on the sub-interval, the middle
one nonnegative, and the upper values exceed the true ones by at most :math:`2w_j`); the chord of
the upper values needs nothing more.  So :math:`g \\le p + \\tau\\,\\mathrm{chord}_N (+ (w_a + w_b)/4)`,
a quadratic whose maximum on the sub-interval is at an end or at its vertex.  Splitting where the
kinks are only tightens the chords: the bound holds for any subdivision, so the splits are put on
a dyadic grid (whose middles are exact) and merged beyond a few dozen.
"""

from __future__ import annotations

import numpy as np

from approxpath.numerics import fp_margin

__all__ = ["kinks", "weight_path_bound"]

# At most this many sub-intervals per piece (the kinks, merged to quantiles beyond that): the
# chords stay exact between true kinks; the bound holds for any subdivision.
_MAX_SPLITS = 64
# The positions of the splits are multiples of 2**-_GRID_BITS (their middles are then exact).
_GRID_BITS = 20


def kinks(ends):
    """Positions in [0, 1] where the linear functions with values ``ends`` (m, 2) at the piece's
    ends change sign (where a hinge or an absolute value has its kink)."""
    ends = np.asarray(ends, dtype=float)
    change = np.flatnonzero(ends[:, 0] * ends[:, 1] < 0)
    return ends[change, 0] / (ends[change, 0] - ends[change, 1])


def weight_path_bound(F_at, N_at, cuts, lo, hi, quadratic):
    """An upper bound of :math:`F(\\tau) + \\tau N(\\tau)` over ``[lo, hi]`` (see the module docstring).

    Parameters
    ----------
    F_at : callable
        ``F_at(x) -> (value, band)`` at the position ``x`` in [0, 1] of the piece: :math:`F` there
        is within ``band`` of ``value``.
    N_at : callable
        ``N_at(x) -> upper``: an upper bound of :math:`N` at the position ``x``.
    cuts : ndarray
        Positions of the kinks of :math:`N` (and of :math:`F` when it is piecewise linear).
    lo, hi : float
    quadratic : bool
        :math:`F` is a quadratic (interpolated through three nodes per sub-interval), else
        convex piecewise linear with its kinks among ``cuts`` (its chord).
    """
    cuts = np.unique(np.clip(np.asarray(cuts, dtype=float), 0.0, 1.0))
    if cuts.size > _MAX_SPLITS:
        cuts = np.quantile(cuts, np.linspace(0.0, 1.0, _MAX_SPLITS))
    cuts = np.round(cuts * 2.0**_GRID_BITS) / 2.0**_GRID_BITS
    nodes = np.unique(np.concatenate([[0.0, 1.0], cuts]))
    memo = {}

    def at(x):
        if x not in memo:
            memo[x] = (*F_at(x), N_at(x))
        return memo[x]

    h, best = hi - lo, -np.inf
    for a, b in zip(nodes[:-1], nodes[1:]):
        (Fa, wa, Na), (Fb, wb, Nb) = at(a), at(b)
        Ua, Ub = Fa + wa, Fb + wb
        if quadratic:
            Fc, wc, _ = at(0.5 * (a + b))  # (an exact middle: a and b are on the dyadic grid)
            Uc = Fc + wc
            q0, q1, q2 = Ua, -3 * Ua + 4 * Uc - Ub, 2 * Ua - 4 * Uc + 2 * Ub
            extra, mag_F = (wa + wb) / 4, abs(Ua) + 4 * abs(Uc) + abs(Ub)
        else:
            q0, q1, q2 = Ua, Ub - Ua, 0.0
            extra, mag_F = 0.0, abs(Ua) + abs(Ub)
        la, lb = lo + a * h, lo + b * h  # the parameter at the sub-interval's ends
        # F's polynomial plus tau(s) times N's chord, in s in [0, 1]: coefficients of 1, s, s^2
        h0 = q0 + la * Na
        h1 = q1 + la * (Nb - Na) + (lb - la) * Na
        h2 = q2 + (lb - la) * (Nb - Na)
        candidates = [h0, h0 + h1 + h2]
        if h2 < 0 and 0 < -h1 / (2 * h2) < 1:
            s = -h1 / (2 * h2)
            candidates.append(h0 + h1 * s + h2 * s * s)
        magnitude = mag_F + (abs(la) + abs(lb)) * (abs(Na) + abs(Nb))
        best = max(best, max(candidates) + extra + fp_margin(24, magnitude))
    return float(best)
