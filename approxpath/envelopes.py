"""Rigorous envelopes of exponential sums on a parameter interval.

For nonnegative coefficients :math:`c_k` and :math:`d_k \\ge 0`, the sum
:math:`S(x) = \\sum_k c_k e^{-x d_k}` is completely monotone in :math:`x`: all its
derivatives alternate in sign, :math:`(-1)^j S^{(j)} \\ge 0`.  So the Hermite interpolants of
:math:`S, S', S''` at the two ends of :math:`[lo, hi]` bound :math:`S` from above and below with
errors :math:`O((hi - lo)^5)`, where its chord and end tangents are off by
:math:`O((hi - lo)^2)` (:func:`hermite_upper`, :func:`hermite_lower`, in Bernstein form).

A difference :math:`f = P - N` of two such sums (a kernel times a signed vector) lies between
the polynomials ``hermite_lower(P) - hermite_upper(N)`` and ``hermite_upper(P) -
hermite_lower(N)``; :func:`difference_nodes` turns them into piecewise linear bounds through
equally spaced nodes (values lifted by a curvature term between the nodes), and
:func:`max_abs_difference` bounds :math:`\\max |f|` with them
(:func:`~approxpath.bernstein.max_hinge_sum` maximizes a gap assembled from such polynomials).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bernstein import lifted_values, node_set
from .numerics import SUM_BLOCK, block_sum, kernel_entry_error

__all__ = [
    "Envelope",
    "envelope",
    "split_envelope",
    "max_abs_difference",
    "difference_nodes",
    "envelope_entry_error",
    "hermite_upper",
    "hermite_lower",
]


@dataclass(frozen=True)
class Envelope:
    """Values and slopes of exponential sums at the two ends of ``[lo, hi]``.

    Every array has the same shape (one entry per sum).
    """

    lo: float
    hi: float
    f_lo: np.ndarray
    f_hi: np.ndarray
    df_lo: np.ndarray
    df_hi: np.ndarray
    d2f_lo: np.ndarray = 0.0
    d2f_hi: np.ndarray = 0.0

    @property
    def width(self):
        return self.hi - self.lo

    def magnitude(self):
        """:math:`|f| + w|f'| + \\tfrac18 w^2|f''|` summed over both ends (per sum; ``w = hi - lo``):
        at least the absolute value of every Bernstein coefficient of :func:`hermite_upper` and
        :func:`hermite_lower` (their weights on :math:`w f'` and :math:`w^2 f''` are at most 1/2
        and 1/12), hence of every value of those polynomials on the piece."""
        w = self.width
        return (np.abs(self.f_lo) + np.abs(self.f_hi) + w * (np.abs(self.df_lo) + np.abs(self.df_hi))
                + 0.125 * w * w * (np.abs(self.d2f_lo) + np.abs(self.d2f_hi)))

    def combine(self, weights):
        """The envelope of the weighted sums ``weights @ S`` (weights nonnegative, shape (m,)),
        each a :func:`~approxpath.numerics.block_sum` of the products (a rounding chain of
        ``sum_chain(m)`` after them)."""
        weights = np.asarray(weights, dtype=float)
        fields = [np.asarray(getattr(self, f), dtype=float) for f in _FIELDS]
        if fields[0].ndim and weights.size <= SUM_BLOCK and all(F.shape == fields[0].shape for F in fields):
            # (the six sums in one call where each is one block: each field's terms summed as alone, to
            # the last bit, with one call's overhead)
            w = weights.reshape(weights.shape + (1,) * (fields[0].ndim - 1))
            return Envelope(self.lo, self.hi, *block_sum(w * np.stack(fields), axis=1))

        def combined(F):
            F = np.asarray(F, dtype=float)
            if not F.ndim:
                return block_sum(weights) * F
            return block_sum(weights.reshape(weights.shape + (1,) * (F.ndim - 1)) * F)

        return Envelope(self.lo, self.hi, *(combined(getattr(self, f)) for f in _FIELDS))


_FIELDS = ("f_lo", "f_hi", "df_lo", "df_hi", "d2f_lo", "d2f_hi")


def envelope(products, C, lo, hi, cols=None):
    """Envelopes of :math:`S(x) = \\exp(-xD)\\,C` (matrix product) at ``lo`` and ``hi``.

    Parameters
    ----------
    products : callable
        ``products(x, C, cols)`` returns :math:`(E C, (D \\circ E) C, (D^2 \\circ E) C)` with
        :math:`E = \\exp(-xD)` restricted to the columns ``cols`` (all if None), each of shape
        (m,) or (m, p) (:meth:`approxpath.compute.kernels.Kernels.products`).
    C : ndarray of shape (k,) or (k, p)
        Nonnegative coefficients.
    lo, hi : float, or ndarray of shape (q,)
        ``0 <= lo <= hi``; arrays: q intervals at once (one products call per distinct end).
    cols : ndarray of int, optional
        The columns of the kernel that ``C`` weights (k of them); all if omitted.

    Returns
    -------
    Envelope
        With arrays of shape (m,) or (m, p); (m, q) or (m, p, q) for q intervals.
    """
    if np.ndim(lo):
        at = {x: products(x, C, cols) for x in np.unique(np.concatenate([lo, hi]))}
        f_lo, df_lo, d2f_lo, f_hi, df_hi, d2f_hi = (
            np.stack([at[x][i] for x in ends], axis=-1) for ends in (lo, hi) for i in range(3))
        return Envelope(np.asarray(lo), np.asarray(hi), f_lo, f_hi, -df_lo, -df_hi, d2f_lo, d2f_hi)
    out = []
    for x in (lo, hi) if hi != lo else (lo,):
        f, df, d2f = products(x, C, cols)
        out.append((f, -df, d2f))
    if len(out) == 1:
        out.append(out[0])
    (f_lo, df_lo, d2f_lo), (f_hi, df_hi, d2f_hi) = out
    return Envelope(lo, hi, f_lo, f_hi, df_lo, df_hi, d2f_lo, d2f_hi)



def split_envelope(products, c, lo, hi):
    """Envelopes of the two nonnegative parts of :math:`S(x) = \\exp(-xD)\\,c` for signed ``c``.

    Parameters
    ----------
    products : callable
        As for :func:`envelope`.
    c : ndarray of shape (k,) or (k, p)
        Signed coefficients (``p`` vectors: one kernel pass for all); only the rows with a
        nonzero entry are used.
    lo, hi : float, or ndarray of shape (q,)
        As for :func:`envelope`.

    Returns
    -------
    (P, N) : Envelope, Envelope
        Arrays of shape (m,), or (m, p) for 2-D ``c`` (and a last axis q for q intervals):
        :math:`S = P - N` with :math:`P` the sum over ``c > 0`` and :math:`N` the sum of
        :math:`|c|` over ``c < 0``.
    """
    c = np.asarray(c, dtype=float)
    c2 = c[:, None] if c.ndim == 1 else c
    cols = np.flatnonzero(np.any(c2 != 0, axis=1))
    parts = []
    for j in range(c2.shape[1]):
        parts += [np.maximum(c2[cols, j], 0.0), np.maximum(-c2[cols, j], 0.0)]
    env = envelope(products, np.stack(parts, axis=-1), lo, hi, cols=cols)
    pick = 0 if c.ndim == 1 else slice(None)  # column k of (P0, N0, P1, N1, ...)
    return tuple(Envelope(lo, hi, *(getattr(env, f)[:, k::2][:, pick] for f in _FIELDS)) for k in (0, 1))


def envelope_entry_error(lo, hi, d):
    """Absolute error, per unit of coefficient, of any Bernstein coefficient of
    :func:`hermite_upper` or :func:`hermite_lower` due to the rounding of the kernel entries
    (summation rounding is separate: ``fp_margin``).

    A coefficient is :math:`f(a) + \\alpha\\, w f'(a) + \\beta\\, w^2 f''(a)`, or a convex
    combination of such, at :math:`a \\in \\{lo, hi\\}`, :math:`w = hi - lo`,
    :math:`|\\alpha| \\le 1/2`, :math:`|\\beta| \\le 1/12`: it uses :math:`e^{-aD}` (error
    at most :func:`~approxpath.numerics.kernel_entry_error` per unit), :math:`D e^{-aD}` times
    at most :math:`w/2` and :math:`D^2 e^{-aD}` times at most :math:`w^2/12`.  With relative
    errors :math:`(d+2)u` of :math:`D` and :math:`(d+3)u\\,aD + 4u` of :math:`e^{-aD}`, and
    :math:`z^k e^{-z} \\le (k/e)^k`, :math:`D e^{-aD}` is within
    :math:`((d+7)/e + 4(d+3)/e^2)\\,u/a \\le 3\\,\\text{kernel\\_entry\\_error}(d)/a` and
    :math:`D^2 e^{-aD}` within :math:`((2d+10)4/e^2 + 27(d+3)/e^3)\\,u/a^2 \\le
    8\\,\\text{kernel\\_entry\\_error}(d)/a^2` of the exact values, for every ``d``.  So a
    coefficient is within ``kernel_entry_error(d) * (1 + 1.5 w / lo + (2/3) (w / lo)**2)``
    per unit of coefficient; the value returned, ``kernel_entry_error(d) * (1 + 3 w / lo +
    (w / lo)**2)``, is larger.  The polynomial of the exact entries differs from the computed
    one by a polynomial with such coefficients, so by at most as much anywhere on the piece
    (convex hull).

    Parameters
    ----------
    lo, hi : float, or ndarray of shape (q,)
        The piece's ends in the kernel parameter :math:`x` of :math:`e^{-xD}`, ``0 < lo <= hi``
        (``lo = 0`` only where ``hi == lo``); arrays: q pieces.
    d : int
        The rounded terms per distance entry (the argument of
        :func:`~approxpath.numerics.kernel_entry_error`: the number of features for squared
        Euclidean distances).

    Returns
    -------
    float, or ndarray of shape (q,)
        :math:`\\kappa(d)\\,(1 + 3r + r^2)` with :math:`r = (hi - lo)/lo` (0 where ``hi == lo``) and
        :math:`\\kappa` = :func:`~approxpath.numerics.kernel_entry_error`.
    """
    if np.ndim(lo):  # q intervals: one value each
        r = np.where(hi > lo, (hi - lo) / np.where(hi > lo, lo, 1.0), 0.0)
    else:
        r = (hi - lo) / lo if hi > lo else 0.0
    return kernel_entry_error(d) * (1.0 + 3.0 * r + r * r)


# Hermite bounds of a completely monotone sum, in Bernstein form of degree 5 on s in [0, 1]
# (x = lo + s (hi - lo)).  A polynomial with Bernstein coefficients c lies in their convex hull,
# and its second derivative is 20 times a cubic with coefficients the second differences of c.
_DEGREE = 5


def hermite_upper(E):
    """Bernstein coefficients (..., 6) of a quintic above :math:`S` on ``[E.lo, E.hi]``.

    :math:`S(x) = \\sum_k c_k e^{-x d_k}` with :math:`c_k, d_k \\ge 0` is completely
    monotone: :math:`(-1)^j S^{(j)} \\ge 0`.  The quintic Hermite interpolant :math:`H` of
    :math:`S, S', S''` at both ends leaves :math:`S(x) - H(x) = S^{(6)}(\\xi)/6!\\,
    (x - lo)^3 (x - hi)^3 \\le 0`: an upper bound exact at both ends, off by
    :math:`O(w^6)` inside (against :math:`O(w^2)` for the chord).

    Parameters
    ----------
    E : Envelope
        Values and first two derivatives at ``lo`` and ``hi`` (arrays of shape (...)).
    """
    w = E.hi - E.lo
    a, b = w * E.df_lo, w * E.df_hi
    c, d = w * w * E.d2f_lo, w * w * E.d2f_hi
    f0, f1 = E.f_lo, E.f_hi
    return _stack([f0, f0 + a / 5, f0 + 2 * a / 5 + c / 20, f1 - 2 * b / 5 + d / 20, f1 - b / 5, f1])


def hermite_lower(E):
    """Bernstein coefficients (..., 6) of a quartic below :math:`S` on ``[E.lo, E.hi]``
    (degree raised to 5).

    The Hermite interpolant of :math:`S, S'` at ``lo`` and :math:`S, S', S''` at ``hi``
    leaves :math:`S(x) - H(x) = S^{(5)}(\\xi)/5!\\,(x - lo)^2 (x - hi)^3 \\ge 0`
    (:math:`S^{(5)} \\le 0`): a lower bound exact at both ends, off by :math:`O(w^5)`.

    Parameters
    ----------
    E : Envelope
        Values and first two derivatives at ``lo`` and ``hi`` (shape (...)); the second at ``lo`` is not used.

    Returns
    -------
    ndarray of shape (..., 6)
        The quartic's Bernstein coefficients on :math:`s = (x - lo)/w \\in [0, 1]`, :math:`w = hi - lo`,
        :math:`[f_0,\\ f_0 + w f'_0/4,\\ f_1 - w f'_1/2 + w^2 f''_1/12,\\ f_1 - w f'_1/4,\\ f_1]`,
        raised to degree 5 (:math:`c_j = (j/5)\\, q_{j-1} + (1 - j/5)\\, q_j`).
    """
    w = E.hi - E.lo
    a, b, d = w * E.df_lo, w * E.df_hi, w * w * E.d2f_hi
    f0, f1 = E.f_lo, E.f_hi
    q = [f0, f0 + a / 4, f1 - b / 2 + d / 12, f1 - b / 4, f1]  # degree 4
    # degree elevation: c_j = (j/5) q_{j-1} + (1 - j/5) q_j
    return _stack([q[0]] + [(j * q[j - 1] + (_DEGREE - j) * q[j]) / _DEGREE for j in range(1, _DEGREE)] + [q[4]])


def _stack(cols):
    first = cols[0]
    if all(type(c) is np.ndarray and c.shape == first.shape for c in cols):  # (the usual case: no views)
        out = np.empty(first.shape + (len(cols),))
        for j, c in enumerate(cols):
            out[..., j] = c
        return out
    return np.stack(np.broadcast_arrays(*cols), axis=-1)


# Nodes of difference_nodes on s in [0, 1]: k/16, and 2**-12 from each end, so that the end
# nodes, where a bound on a path piece is usually largest, carry a curvature term 2**-16 times
# that of the others (the term scales with the square of the neighbouring gaps).
_DIFFERENCE_NODES = np.concatenate(([0.0, 2.0**-12], np.arange(1, 16) / 16, [1 - 2.0**-12, 1.0]))
_DIFFERENCE_SET = node_set(_DIFFERENCE_NODES, _DEGREE)


def difference_nodes(P, N):
    """Piecewise linear bounds of :math:`f = P - N` on ``[lo, hi]``, as their values at 19
    nodes (as computed, no rounding allowance).

    :math:`f` lies between the quintics ``hermite_lower(P) - hermite_upper(N)`` and
    ``hermite_upper(P) - hermite_lower(N)``.  The upper one is lifted by
    :math:`h^2/8 \\max(0, -\\min p'')` (:func:`~approxpath.bernstein.lifted_values`; ``h`` the longer gap next to
    the node), so that its interpolant between two nodes stays above it; the lower one is
    lowered by the mirror term :math:`h^2/8 \\max(0, \\max p'')`.  The nodes are ``lo + s (hi
    - lo)`` for ``s = k/16`` and ``s = 2**-12, 1 - 2**-12``: the curvature term is
    :math:`2^{-11}` of :math:`\\max |p''|` in ``s`` (1/256 of a chord's error) inside and
    :math:`2^{-27}` at the ends, where the polynomials are exact; between nodes they are off
    by :math:`O(w^5)` where chords and tangents are off by :math:`O(w^2)`.

    Parameters
    ----------
    P, N : Envelope
        Of nonnegative exponential sums on the same piece (arrays of shape (...)), with first
        and second derivatives; or on q pieces (``lo``, ``hi`` of shape (q,), arrays of shape
        (..., q)).

    Returns
    -------
    xs : ndarray of shape (19,), or (q, 19)
        The nodes (``lo`` and ``hi`` exactly at the ends).
    low, up : ndarray of shape (..., 19), or (..., q, 19)
        The linear interpolants of ``low`` and ``up`` through ``xs`` enclose :math:`f`.
    """
    up = lifted_values(hermite_upper(P) - hermite_lower(N), _DIFFERENCE_SET)
    low = -lifted_values(hermite_upper(N) - hermite_lower(P), _DIFFERENCE_SET)
    lo, hi = np.asarray(P.lo, dtype=float)[..., None], np.asarray(P.hi, dtype=float)
    xs = lo + _DIFFERENCE_NODES * (hi[..., None] - lo)
    xs[..., -1] = hi
    return xs, low, up


def max_abs_difference(P, N):
    """Per sum, an upper bound of :math:`\\max_{x \\in [lo, hi]} |P(x) - N(x)|` (as computed, no
    rounding allowance): the larger of ``up`` and ``-low`` of :func:`difference_nodes` over the
    nodes (both interpolants are linear between nodes, so their extremes are at nodes).  Every
    value is a combination of Bernstein coefficients with weights of sum 1 + O(u) plus a lift
    of at most 10/256 of the largest (1/25), and every coefficient is at most
    :meth:`Envelope.magnitude` of ``P`` plus that of ``N``.

    Parameters
    ----------
    P, N : Envelope
        As for :func:`difference_nodes`: nonnegative exponential sums on the same piece (arrays
        of shape (...)), or on q pieces (arrays of shape (..., q)).

    Returns
    -------
    ndarray of shape (...), or (..., q)
        The bound of :math:`\\max |P - N|` per sum (and piece).
    """
    _, low, up = difference_nodes(P, N)
    return np.maximum(up, -low).max(axis=-1)
