"""Rigorous envelopes of exponential sums on a parameter interval.

For nonnegative coefficients :math:`c_k` and :math:`d_k \\ge 0`, the sum
:math:`S(x) = \\sum_k c_k e^{-x d_k}` is decreasing and convex in :math:`x`.  On
:math:`[lo, hi]` it therefore lies below its chord and above both end tangents:

.. math::

    \\max(S(lo) + S'(lo)(x - lo),\\; S(hi) + S'(hi)(x - hi)) \\le S(x) \\le
    S(lo) + \\frac{x - lo}{hi - lo}(S(hi) - S(lo)).

Both sides are piecewise linear and touch :math:`S` at the end points.  A difference
:math:`f = P - N` of two such sums is bounded by combining them (chord of one minus tangents
of the other), and also by its own chord and curvature: :math:`P''` and :math:`N''` are
decreasing, so :math:`f'' \\le P''(lo) - N''(hi)` and

.. math::

    f(x) \\ge \\operatorname{chord}_f(x) - \\tfrac18 (hi - lo)^2 \\max(0, P''(lo) - N''(hi)),

(and symmetrically from above), which keeps the cancellation between :math:`P` and
:math:`N` that the first bound loses.  :func:`difference_lines` returns all these lines;
the max (lower bound) or min (upper bound) of them is piecewise linear and exact at both ends
up to the curvature term.

All derivatives of :math:`S` alternate in sign, so the Hermite interpolants of
:math:`S, S', S''` at the two ends bound :math:`S` from above and below with errors
:math:`O((hi - lo)^5)` instead of :math:`O((hi - lo)^2)` (:func:`hermite_upper`,
:func:`hermite_lower`, in Bernstein form); :func:`max_hinge_sum` maximizes a gap assembled
from such polynomials (a polynomial plus hinges of polynomials) over the piece.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb

import numpy as np

from .kernels import kernel_entry_error

__all__ = [
    "Envelope",
    "envelope",
    "split_envelope",
    "difference_lines",
    "max_abs_difference",
    "envelope_entry_error",
    "lines_min",
    "crossings",
    "pl_points",
    "hermite_upper",
    "hermite_lower",
    "bernstein_values",
    "max_hinge_sum",
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

    def chord(self, x):
        """Upper bound at ``x`` (broadcasts over sums)."""
        if self.hi == self.lo:
            return self.f_lo + 0.0 * x
        return self.f_lo + (x - self.lo) * ((self.f_hi - self.f_lo) / (self.hi - self.lo))

    def tangent_lo(self, x):
        return self.f_lo + self.df_lo * (x - self.lo)

    def tangent_hi(self, x):
        return self.f_hi + self.df_hi * (x - self.hi)

    def lower(self, x):
        """Lower bound at ``x``: the larger end tangent."""
        return np.maximum(self.tangent_lo(x), self.tangent_hi(x))

    def kink(self):
        """Where the two tangents cross, clipped to ``[lo, hi]`` (``lo`` where they are parallel)."""
        num = self.f_hi - self.f_lo + self.df_lo * self.lo - self.df_hi * self.hi
        den = self.df_lo - self.df_hi
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(den < 0, num / np.where(den < 0, den, 1.0), self.lo)
        return np.clip(x, self.lo, self.hi)

    def kink_scale(self):
        """Scale of the rounding error of :meth:`kink` times the slope change there (per sum)."""
        return np.abs(self.f_lo) + np.abs(self.f_hi) + self.hi * (np.abs(self.df_lo) + np.abs(self.df_hi))

    def magnitude(self):
        """Largest absolute value any of the envelope lines takes on ``[lo, hi]`` (per sum)."""
        w = self.width
        return (np.abs(self.f_lo) + np.abs(self.f_hi) + w * (np.abs(self.df_lo) + np.abs(self.df_hi))
                + 0.125 * w * w * (np.abs(self.d2f_lo) + np.abs(self.d2f_hi)))

    def combine(self, weights):
        """The envelope of the weighted sums ``weights @ S`` (weights nonnegative, shape (m,))."""
        return Envelope(self.lo, self.hi, *(weights @ getattr(self, f) if np.ndim(getattr(self, f)) else
                                            np.sum(weights) * getattr(self, f) for f in _FIELDS))


_FIELDS = ("f_lo", "f_hi", "df_lo", "df_hi", "d2f_lo", "d2f_hi")


def difference_lines(P, N):
    """Lines bounding :math:`f = P - N` on ``[lo, hi]``, as values at ``(lo, hi)``.

    Returns ``(lower, upper)``, arrays of shape ``(..., 3, 2)``: :math:`f` is at least the
    largest of the ``lower`` lines and at most the smallest of the ``upper`` lines at every
    point of the interval.
    """
    w = P.hi - P.lo
    curv = 0.125 * w * w
    chord = (P.f_lo - N.f_lo, P.f_hi - N.f_hi)
    down = curv * np.maximum(0.0, P.d2f_lo - N.d2f_hi)  # f'' <= P''(lo) - N''(hi)
    up = curv * np.maximum(0.0, N.d2f_lo - P.d2f_hi)  # -f'' <= N''(lo) - P''(hi)
    lower = [
        (P.f_lo - N.f_lo, P.f_lo + P.df_lo * w - N.f_hi),  # tangent of P at lo minus chord of N
        (P.f_hi - P.df_hi * w - N.f_lo, P.f_hi - N.f_hi),  # tangent of P at hi minus chord of N
        (chord[0] - down, chord[1] - down),
    ]
    upper = [
        (P.f_lo - N.f_lo, P.f_hi - N.f_lo - N.df_lo * w),  # chord of P minus tangent of N at lo
        (P.f_lo - N.f_hi + N.df_hi * w, P.f_hi - N.f_hi),
        (chord[0] + up, chord[1] + up),
    ]
    pack = lambda ls: np.stack([np.stack(np.broadcast_arrays(*v), axis=-1) for v in ls], axis=-2)  # noqa: E731
    return pack(lower), pack(upper)


def lines_min(lines, x, lo, hi):
    """The smallest of ``lines`` (..., k, 2) at points ``x`` (..., p): shape (..., p).

    Line by line (a minimum over a short last axis is slow in numpy, and this never builds
    the (..., p, k) array of all values)."""
    x = np.asarray(x, dtype=float)
    r = np.zeros_like(x) if hi == lo else (x - lo) / (hi - lo)
    out = None
    for j in range(lines.shape[-2]):
        v_lo, v_hi = lines[..., j, 0][..., None], lines[..., j, 1][..., None]
        v = v_lo + r * (v_hi - v_lo)
        out = v if out is None else np.minimum(out, v, out=out)
    return out


def crossings(lines, lo, hi):
    """Where each pair of ``lines`` (..., k, 2) crosses inside ``[lo, hi]`` (else ``lo``):
    shape (..., k(k-1)/2)."""
    k = lines.shape[-2]
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            d = lines[..., i, :] - lines[..., j, :]
            out.append(_root(d[..., 0], d[..., 1], lo, hi))
    if not out:
        return np.full(lines.shape[:-2] + (0,), lo)
    return np.stack(out, axis=-1)


def _root(v_lo, v_hi, lo, hi):
    with np.errstate(divide="ignore", invalid="ignore"):
        x = lo + (hi - lo) * (v_lo / (v_lo - v_hi))
    return np.where((v_lo > 0) != (v_hi > 0), np.clip(x, lo, hi), lo)


def envelope(products, C, lo, hi, cols=None):
    """Envelopes of :math:`S(x) = \\exp(-xD)\\,C` (matrix product) at ``lo`` and ``hi``.

    Parameters
    ----------
    products : callable
        ``products(x, C, cols)`` returns :math:`(E C, (D \\circ E) C, (D^2 \\circ E) C)` with
        :math:`E = \\exp(-xD)` restricted to the columns ``cols`` (all if None), each of shape
        (m,) or (m, p) (:meth:`approxpath.kernels.KernelCache.products`).
    C : ndarray of shape (k,) or (k, p)
        Nonnegative coefficients.
    lo, hi : float
        ``0 <= lo <= hi``.
    cols : ndarray of int, optional
        The columns of the kernel that ``C`` weights (k of them); all if omitted.

    Returns
    -------
    Envelope
        With arrays of shape (m,) or (m, p).
    """
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
    c : ndarray of shape (k,)
        Signed coefficients; only the nonzero ones are used.
    lo, hi : float

    Returns
    -------
    (P, N) : Envelope, Envelope
        Arrays of shape (m,): :math:`S = P - N` with :math:`P` the sum over ``c > 0`` and
        :math:`N` the sum of :math:`|c|` over ``c < 0``.
    """
    c = np.asarray(c, dtype=float)
    cols = np.flatnonzero(c)
    C = np.stack([np.maximum(c[cols], 0.0), np.maximum(-c[cols], 0.0)], axis=-1)
    env = envelope(products, C, lo, hi, cols=cols)
    return tuple(Envelope(lo, hi, *(getattr(env, f)[:, k] for f in _FIELDS)) for k in (0, 1))


def max_abs_difference(P, N):
    """Per sum, an upper bound of :math:`\\max_{x \\in [lo, hi]} |P(x) - N(x)|` (as computed,
    no rounding allowance).  Exact when ``lo == hi``.

    The smaller of two bounds: (1) the smallest upper line of :func:`difference_lines` and
    minus the largest lower line are concave piecewise linear, so their maxima are at ``lo``,
    ``hi`` or a crossing of two lines; (2) with the bracket
    :math:`m = P''(hi) - N''(lo) \\le f'' \\le M = P''(lo) - N''(hi)` of :math:`f = P - N`,
    :math:`f - \\tfrac m2 x^2` is convex, so :math:`f(x) \\le \\text{chord}(x) +
    \\tfrac{\\max(0, -m)}2 (x - lo)(hi - x)`, a concave quadratic maximized in closed form
    (likewise :math:`-f` with :math:`M`).  (2) is below the curvature line of (1) everywhere
    but at the middle, which halves the bound's excess where :math:`f` is flat near its
    maximum (a projected dual: ``robust_l1``).

    Returns
    -------
    bound : ndarray
    lines : ndarray
        The lines of (1) (for the caller's rounding allowance; (2) is covered by
        :meth:`Envelope.magnitude`).
    """
    lo, hi = P.lo, P.hi
    lower, upper = difference_lines(P, N)
    lines = np.concatenate([upper, -lower], axis=-2)
    best = None
    for group in (upper, -lower):
        pts = pl_points(lo, hi, crossings(group, lo, hi))
        top = lines_min(group, pts, lo, hi).max(axis=-1)
        best = top if best is None else np.maximum(best, top)
    if hi == lo:
        return best, lines
    w = hi - lo
    f_lo = P.f_lo - N.f_lo
    slope = (P.f_hi - N.f_hi - f_lo) / w

    def top(a, b, c):
        """max over z in [0, w] of a + b z + c z (w - z), c >= 0: the vertex value
        a + (b + c w)^2 / (4c) if the vertex is inside (no rounded position enters), else
        the larger end."""
        ends = np.maximum(a, a + b * w)
        g = b + c * w
        inside = (c > 0) & (g > 0) & (g < 2.0 * c * w)
        with np.errstate(divide="ignore", invalid="ignore"):
            vertex = a + g * g / np.where(inside, 4.0 * c, 1.0)
        return np.where(inside, np.maximum(vertex, ends), ends)

    quadratic = np.maximum(top(f_lo, slope, 0.5 * np.maximum(0.0, N.d2f_lo - P.d2f_hi)),
                           top(-f_lo, -slope, 0.5 * np.maximum(0.0, P.d2f_lo - N.d2f_hi)))
    return np.minimum(best, quadratic), lines


def envelope_entry_error(lo, hi, d):
    """Absolute error, per unit of coefficient, of any line of :func:`difference_lines` due to
    the rounding of the kernel entries (summation rounding is separate: ``fp_margin``).

    A line uses :math:`e^{-aD}` (error at most :func:`~approxpath.kernels.kernel_entry_error`
    per unit), :math:`D e^{-aD}` times :math:`|x - a| \\le w = hi - lo` and
    :math:`D^2 e^{-aD}` times :math:`w^2/8`, at :math:`a \\in \\{lo, hi\\}`.  With relative
    errors :math:`(d+2)u` of :math:`D` and :math:`(d+3)u\\,aD + 2u` of :math:`e^{-aD}`, and
    :math:`z^k e^{-z} \\le (k/e)^k`, :math:`D e^{-aD}` is within
    :math:`((d+5)/e + 4(d+3)/e^2)\\,u/a \\le 3\\,\\text{kernel\\_entry\\_error}(d)/a` and
    :math:`D^2 e^{-aD}` within :math:`((2d+7)4/e^2 + 27(d+3)/e^3)\\,u/a^2 \\le
    8\\,\\text{kernel\\_entry\\_error}(d)/a^2` of the exact values, for every ``d``.  So a line
    is within ``kernel_entry_error(d) * (1 + 3 w / lo + (w / lo)**2)`` per unit of coefficient.
    """
    r = (hi - lo) / lo if hi > lo else 0.0
    return kernel_entry_error(d) * (1.0 + 3.0 * r + r * r)


def pl_points(lo, hi, *breaks):
    """Sorted evaluation points ``[lo, breaks..., hi]`` per row, breaks clipped into the interval.

    Each of ``breaks`` is an array of shape (m,) or (m, j) (use ``lo`` for "no break").
    Returns shape (m, total breaks + 2).
    """
    cols = [np.atleast_2d(np.asarray(b, dtype=float).T).T if np.ndim(b) else np.array([[b]]) for b in breaks]
    m = max((c.shape[0] for c in cols), default=1)
    cols = [np.broadcast_to(c, (m, c.shape[1])) for c in cols]
    allc = np.concatenate([np.full((m, 1), lo)] + [np.clip(c, lo, hi) for c in cols] + [np.full((m, 1), hi)], axis=1)
    return np.sort(allc, axis=1)


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
    """
    w = E.hi - E.lo
    a, b, d = w * E.df_lo, w * E.df_hi, w * w * E.d2f_hi
    f0, f1 = E.f_lo, E.f_hi
    q = [f0, f0 + a / 4, f1 - b / 2 + d / 12, f1 - b / 4, f1]  # degree 4
    # degree elevation: c_j = (j/5) q_{j-1} + (1 - j/5) q_j
    return _stack([q[0]] + [(j * q[j - 1] + (_DEGREE - j) * q[j]) / _DEGREE for j in range(1, _DEGREE)] + [q[4]])


def _stack(cols):
    return np.stack(np.broadcast_arrays(*cols), axis=-1)


def _node_values(coef, m):
    """Values at the ``m + 1`` nodes ``s = k/m`` of polynomials with Bernstein coefficients
    ``coef`` (..., 6), plus ``h^2/8 max(0, -min p'')`` (``h = 1/m``), which lifts the
    interpolant between two nodes above the polynomial there: :math:`p(s) - L(s) =
    -\\tfrac12 p''(\\xi)(s - s_k)(s_{k+1} - s)`."""
    second = _DEGREE * (_DEGREE - 1) * (coef[..., 2:] - 2 * coef[..., 1:-1] + coef[..., :-2])
    lift = np.maximum(0.0, -second.min(axis=-1)) / (8.0 * m * m)
    return coef @ _node_basis(m) + lift[..., None]


@lru_cache
def _node_basis(m):
    return _basis(np.arange(m + 1) / m)


def _basis(s):
    return np.array([comb(_DEGREE, j) * s**j * (1 - s) ** (_DEGREE - j) for j in range(_DEGREE + 1)])


def bernstein_values(coef, s):
    """Values (..., k) at the points ``s`` (k,) of [0, 1] of the polynomials with Bernstein
    coefficients ``coef`` (..., 6)."""
    return coef @ _basis(np.asarray(s, dtype=float))


def max_hinge_sum(q, r, c, nodes=16):
    """Upper bound of :math:`\\max_{s \\in [0, 1]}\\; q(s) + c \\sum_i \\max(0, r_i(s))`.

    Between two nodes each polynomial is below its interpolant lifted by
    ``h^2/8 max(0, -min p'')`` (:func:`_node_values`); the lifted sum is convex between the
    nodes (a line plus hinges of lines), so its maximum over each is at a node.

    Parameters
    ----------
    q : ndarray of shape (6,)
        Bernstein coefficients of :math:`q`.
    r : ndarray of shape (n, 6)
        Bernstein coefficients of the :math:`r_i`.
    c : float
        Nonnegative weight.
    nodes : int
        Number of sub-intervals (a power of two keeps the nodes exact).

    Returns
    -------
    best : float
        The bound (as computed).
    scale : float
        The magnitude a rounding allowance must cover: the largest absolute coefficients of
        ``q`` and of every ``c r_i``, summed.
    """
    scale = np.abs(q).max() + c * float(np.abs(r).max(axis=1).sum())
    # (no row is dropped where its coefficients are <= 0: the bound stays continuous in the
    # data, so sums rounded differently, as a verifier's, move it by rounding only)
    total = _node_values(q, nodes) + c * np.maximum(0.0, _node_values(r, nodes)).sum(axis=0)
    return float(total.max()), float(scale)
