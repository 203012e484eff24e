"""Rigorous envelopes of exponential sums on a parameter interval, and the maximum of a sum
of piecewise-linear functions.

For nonnegative coefficients :math:`c_k` and :math:`d_k \\ge 0`, the sum
:math:`S(x) = \\sum_k c_k e^{-x d_k}` is decreasing and convex in :math:`x`.  On
:math:`[lo, hi]` it therefore lies below its chord and above both end tangents:

.. math::

    \\max(S(lo) + S'(lo)(x - lo),\\; S(hi) + S'(hi)(x - hi)) \\le S(x) \\le
    S(lo) + \\frac{x - lo}{hi - lo}(S(hi) - S(lo)).

Both sides are piecewise linear and touch :math:`S` at the end points, so a gap bound
assembled from them is exact at ``lo`` and ``hi`` and loses only :math:`O((hi-lo)^2)`
inside.  The gap bounds of the built-in problems are sums of such piecewise-linear pieces
(and of ``max(0, .)`` of them); :func:`max_pl_sum` maximizes such a sum exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import kernel_entry_error

__all__ = [
    "Envelope",
    "envelope",
    "split_envelope",
    "max_abs_difference",
    "envelope_entry_error",
    "pl_points",
    "max_pl_sum",
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
        return np.abs(self.f_lo) + np.abs(self.f_hi) + w * (np.abs(self.df_lo) + np.abs(self.df_hi))


def envelope(D, C, lo, hi):
    """Envelopes of :math:`S(x) = \\exp(-xD)\\,C` (matrix product) at ``lo`` and ``hi``.

    Parameters
    ----------
    D : ndarray of shape (m, k)
        Nonnegative exponents (squared distances).
    C : ndarray of shape (k,) or (k, p)
        Nonnegative coefficients.
    lo, hi : float
        ``0 <= lo <= hi``.

    Returns
    -------
    Envelope
        With arrays of shape (m,) or (m, p).
    """
    out = []
    for x in (lo, hi) if hi != lo else (lo,):
        E = np.exp(-x * D)
        out.append((E @ C, -((D * E) @ C)))
    if len(out) == 1:
        out.append(out[0])
    (f_lo, df_lo), (f_hi, df_hi) = out
    return Envelope(lo, hi, f_lo, f_hi, df_lo, df_hi)


def split_envelope(D, c, lo, hi):
    """Envelopes of the two nonnegative parts of :math:`S(x) = \\exp(-xD)\\,c` for signed ``c``.

    Parameters
    ----------
    D : ndarray of shape (m, k)
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
    env = envelope(D[:, cols], C, lo, hi)
    fields = ("f_lo", "f_hi", "df_lo", "df_hi")
    return tuple(Envelope(lo, hi, *(getattr(env, f)[:, k] for f in fields)) for k in (0, 1))


def max_abs_difference(P, N):
    """Per sum, an upper bound of :math:`\\max_{x \\in [lo, hi]} |P(x) - N(x)|` (as computed, no
    rounding allowance).

    :math:`P - N \\le \\text{chord}(P) - \\text{tangents}(N)` is concave with one kink (where
    :math:`N`'s tangents cross), so its maximum is at ``lo``, that kink or ``hi``; likewise
    for :math:`N - P`.  Exact when ``lo == hi``.
    """
    vals = [A.chord(x) - B.lower(x) for A, B in ((P, N), (N, P)) for x in (P.lo, B.kink(), P.hi)]
    return np.max(vals, axis=0)


def envelope_entry_error(lo, hi, d):
    """Absolute error, per unit of coefficient, of any envelope line of :func:`envelope` due to
    the rounding of the kernel entries (summation rounding is separate: ``fp_margin``).

    A line :math:`S(a) + S'(a)(x - a)` with :math:`|x - a| \\le w = hi - lo` uses
    :math:`e^{-aD}` (error at most :func:`~approxpath.kernels.kernel_entry_error` per unit)
    and :math:`D e^{-aD}` times :math:`w`.  With relative errors :math:`(d+2)u` of :math:`D`
    and :math:`(d+3)u\\,aD + 2u` of :math:`e^{-aD}`, and :math:`D e^{-aD} \\le 1/(e a)`,
    :math:`aD^2 e^{-aD} \\le 4/(e^2 a)`, the product is within
    :math:`((d+5)/e + 4(d+3)/e^2)\\,u/a \\le 3\\,\\text{kernel\\_entry\\_error}(d)/a` of the
    exact one, for every ``d``.  So the line is within
    ``kernel_entry_error(d) * (1 + 3 w / lo)`` per unit of coefficient.
    """
    return kernel_entry_error(d) * (1.0 + (3.0 * (hi - lo) / lo if hi > lo else 0.0))


def pl_points(lo, hi, *breaks):
    """Sorted evaluation points ``[lo, breaks..., hi]`` per row, breaks clipped into the interval.

    Each of ``breaks`` is an array of shape (m,) (use ``lo`` for "no break").  Returns shape
    (m, len(breaks) + 2).
    """
    m = np.broadcast(*breaks).shape if breaks else ()
    cols = [np.full(m, lo, dtype=float)]
    cols += [np.clip(np.broadcast_to(b, m), lo, hi) for b in breaks]
    cols.append(np.full(m, hi, dtype=float))
    return np.sort(np.stack(cols, axis=-1), axis=-1)


def max_pl_sum(points, values):
    """Maximum over ``x`` of the sum of piecewise-linear functions.

    Row ``r`` is the function interpolating ``values[r]`` linearly at ``points[r]``;
    ``points`` rows are sorted, and all start at the same ``lo`` and end at the same ``hi``.
    The sum is piecewise linear with kinks only at the points, so its maximum is found by a
    sweep over all points in :math:`O(N \\log N)`.

    Returns
    -------
    best : float
        The maximum of the sum (as computed in floating point).
    x_best : float
        Where it is attained.
    scale : float
        Sum over rows of the largest ``|value|`` plus the width times the absolute slope
        changes: the magnitude a rounding allowance must cover.
    """
    points = np.asarray(points, dtype=float)
    values = np.asarray(values, dtype=float)
    lo, hi = points[0, 0], points[0, -1]
    v0 = values[:, 0].sum()
    scale = np.abs(values).max(axis=1).sum()
    if hi == lo:
        return v0, lo, scale
    lengths = np.diff(points, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(lengths > 0, np.diff(values, axis=1) / np.where(lengths > 0, lengths, 1.0), 0.0)
    deltas = np.diff(slopes, axis=1).ravel()
    ex = points[:, 1:-1].ravel()
    order = np.argsort(ex, kind="stable")
    ex, deltas = ex[order], deltas[order]
    xs = np.concatenate(([lo], ex, [hi]))
    seg_slope = slopes[:, 0].sum() + np.concatenate(([0.0], np.cumsum(deltas)))
    G = v0 + np.concatenate(([0.0], np.cumsum(seg_slope * np.diff(xs))))
    k = int(np.argmax(G))
    scale += (hi - lo) * np.abs(slopes).sum()
    return float(G[k]), float(xs[k]), float(scale)
