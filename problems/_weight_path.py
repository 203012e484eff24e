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

from approxpath.bernstein import bernstein_at
from approxpath.numerics import fp_margin

__all__ = ["kinks", "l1_upper", "weight_path_bound"]

# At most this many sub-intervals per piece (the kinks, merged to quantiles beyond that): the
# chords stay exact between true kinks; the bound holds for any subdivision.
_MAX_SPLITS = 64
# The positions of the splits are multiples of 2**-_GRID_BITS (their middles are then exact).
_GRID_BITS = 20


def kinks(ends):
    """Positions in [0, 1] where the linear functions with values ``ends`` (m, 2) at the piece's
    ends (positions 0 and 1) change sign (where a hinge or an absolute value has its kink).

    Returns
    -------
    ndarray of shape (c,)
        :math:`e_0/(e_0 - e_1)` for the c rows whose ends have strictly opposite signs (a zero: no kink), in row order.
    """
    ends = np.asarray(ends, dtype=float)
    change = np.flatnonzero(ends[:, 0] * ends[:, 1] < 0)
    return ends[change, 0] / (ends[change, 0] - ends[change, 1])


def l1_upper(B, W, err):
    """``N_at`` (:func:`weight_path_bound`) of :math:`N = \\lVert\\beta(x)\\rVert_1`, :math:`\\beta(x)
    = \\sum_k w_k(x) B_{:k}`: upper bounds at the positions ``x`` (T,), the combination's
    rounding, the weights' error and the n-term sum's included.

    Parameters
    ----------
    B : ndarray of shape (n, K)
        The points (columns).
    W : ndarray of shape (K, m + 1)
        The weights' Bernstein coefficients on the piece.
    err : ndarray of shape (K,)
        How far a weight computed from ``W`` may be from the exact one (:func:`~approxpath.moving.parts`, ``rounded``).

    Returns
    -------
    callable
        ``N_at(x)``, ``x`` (T,) in [0, 1] -> (T,): with :math:`w` =
        :func:`~approxpath.bernstein.bernstein_at` ``(W, x)``,
        :math:`\\sum_i (|Bw| + \\mathrm{fp\\_margin}(K, 1)|B||w| + |B|\\,\\mathrm{err})_i` times
        :math:`1 + \\mathrm{fp\\_margin}(n, 1)`.
    """
    aB = np.abs(B)

    def N_at(x):
        w = bernstein_at(W, x)
        total = np.sum(np.abs(B @ w) + fp_margin(W.shape[0], 1.0) * (aB @ np.abs(w)) + (aB @ err)[:, None], axis=0)
        return total + fp_margin(B.shape[0], 1.0) * total

    return N_at


def weight_path_bound(F_at, N_at, cuts, lo, hi, quadratic):
    """An upper bound of :math:`F(\\tau) + \\tau N(\\tau)` over ``[lo, hi]`` (see the module docstring).

    Parameters
    ----------
    F_at : callable
        ``F_at(x) -> (values, bands)`` at the positions ``x`` (T,) in [0, 1] of the piece, each
        of shape (T,): :math:`F` at ``x[j]`` is within ``bands[j]`` of ``values[j]``.
    N_at : callable
        ``N_at(x) -> upper`` (T,): upper bounds of :math:`N` at the positions ``x``.
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
    a, b = nodes[:-1], nodes[1:]
    # every node, and the middles (exact: a and b are on the dyadic grid), in one evaluation
    xs = np.concatenate([nodes, 0.5 * (a + b)]) if quadratic else nodes
    F, w = (np.asarray(v, dtype=float) for v in F_at(xs))
    N = np.asarray(N_at(xs), dtype=float)
    U, J = F + w, a.size
    Ua, Ub, wa, wb, Na, Nb = U[:J], U[1:J + 1], w[:J], w[1:J + 1], N[:J], N[1:J + 1]
    if quadratic:
        Uc = U[J + 1:]
        q0, q1, q2 = Ua, -3 * Ua + 4 * Uc - Ub, 2 * Ua - 4 * Uc + 2 * Ub
        extra, mag_F = (wa + wb) / 4, np.abs(Ua) + 4 * np.abs(Uc) + np.abs(Ub)
    else:
        q0, q1, q2 = Ua, Ub - Ua, np.zeros(J)
        extra, mag_F = np.zeros(J), np.abs(Ua) + np.abs(Ub)
    h = hi - lo
    la, lb = lo + a * h, lo + b * h  # the parameter at the sub-intervals' ends
    # F's polynomial plus tau(s) times N's chord, in s in [0, 1]: coefficients of 1, s, s^2
    h0 = q0 + la * Na
    h1 = q1 + la * (Nb - Na) + (lb - la) * Na
    h2 = q2 + (lb - la) * (Nb - Na)
    top = np.maximum(h0, h0 + h1 + h2)
    concave, s = h2 < 0, np.zeros(J)
    s[concave] = -h1[concave] / (2 * h2[concave])
    inside = concave & (s > 0) & (s < 1)  # a maximum at the vertex
    top = np.maximum(top, np.where(inside, h0 + h1 * s + h2 * s * s, -np.inf))
    magnitude = mag_F + (np.abs(la) + np.abs(lb)) * (np.abs(Na) + np.abs(Nb))
    return float(np.max(top + extra + fp_margin(24, 1.0) * magnitude))
