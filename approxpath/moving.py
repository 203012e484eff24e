"""A point that moves with the path parameter across a piece: the one representation of every
problem's moving pairs (numpy only: the verifier imports it).

A moving point is a combination of a few stored points whose weights are polynomials in the
path parameter :math:`t`, in Bernstein form on a stated span :math:`[t_0, t_1]`:

.. math::

    x(t) = \\sum_{k=1}^{K} w_k(t)\\, p_k, \\qquad
    w_k(t) = \\sum_{j=0}^{m} W_{kj} \\binom{m}{j} s^j (1 - s)^{m-j}, \\quad s = \\frac{t - t_0}{t_1 - t_0},

taken field by field over the problem's ``Primal`` or ``Dual`` dataclass (every array or number
field; fields that are None stay None).  The stored numbers define the point exactly; a value
computed at a ``t`` is within :meth:`Moving.allowance` of it per weight.  Bernstein form is what a
bound over a piece needs: on any sub-interval the coefficients (:meth:`Moving.restrict`) enclose
the weight polynomial (convex hull), so a convex feasible set that holds every point of a
combination with nonnegative weights summing to at most 1 holds the point on the whole span.

This module owns, for every problem: evaluation (:meth:`Moving.value`, :func:`value_at`) and the
domain of the stored fields (:meth:`Moving.errors`); their certificate layout and their bytes for a
piece's fingerprint are :mod:`approxpath.moving_layout`'s.  A problem's
:class:`~approxpath.bound.Bound` keeps only its mathematics: feasibility over a piece and the gap
bound of such a pair.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .bernstein import affine_weights, bernstein_at, casteljau, coefficient_rounding

__all__ = ["Moving", "is_moving", "value_at", "constant", "combine", "interpolate", "weight_ranges", "columns", "parts",
           "MAX_POINTS", "MAX_DEGREE"]

#: At most this many stored points per moving point, and weights of at most this degree (the
#: built-in problems use 2 points with degree-1 weights and 3 with degree 2; a file may not ask a
#: verifier for more).
MAX_POINTS = 4
MAX_DEGREE = 3


@dataclass(frozen=True, eq=False)
class Moving:
    """A point :math:`\\sum_k w_k(t)\\, p_k` of the path parameter ``t`` on ``span``.

    Attributes
    ----------
    points : tuple
        The :math:`K` stored points: instances of one ``Primal`` or ``Dual`` dataclass.
    weights : ndarray of shape (K, m + 1)
        Bernstein coefficients of each point's weight on ``span`` (degree ``m``).
    span : tuple of float
        :math:`(t_0, t_1)`, ``t0 < t1``; the point is defined on it (a piece must lie inside).
    """

    points: tuple
    weights: np.ndarray
    span: tuple

    def __post_init__(self):
        object.__setattr__(self, "points", tuple(self.points))
        object.__setattr__(self, "weights", np.atleast_2d(np.asarray(self.weights, dtype=float)))
        object.__setattr__(self, "span", tuple(float(x) for x in self.span))

    def __repr__(self):
        return (f"Moving({type(self.points[0]).__name__} x {len(self.points)}, degree {self.degree}, "
                f"span [{self.span[0]:.6g}, {self.span[1]:.6g}])")

    @property
    def degree(self):
        """The weights' degree ``m``."""
        return self.weights.shape[1] - 1

    def _positions(self, t):
        t0, t1 = self.span
        t = np.asarray(t, dtype=float)
        if self.degree == 0 or not t1 > t0:  # (a constant needs no position)
            return np.zeros(t.shape)
        return np.clip((t - t0) / (t1 - t0), 0.0, 1.0)

    def weights_at(self, t):
        """The weights at ``t`` (a number: shape (K,); an array of shape (T,): (K, T)), as
        computed (within :meth:`allowance` of the exact ones inside the span)."""
        if self.degree == 0 and np.ndim(t) == 0:  # (constant: the stored weights themselves)
            return self.weights[:, 0].copy()
        return bernstein_at(self.weights, self._positions(t))

    def allowance(self):
        """Shape (K,): how far a weight computed by :meth:`weights_at`, or a coefficient by
        :meth:`restrict`, can be from the exact one, for any ``t`` of the span
        (:func:`~approxpath.bernstein.coefficient_rounding`)."""
        return coefficient_rounding(self.weights)

    def restrict(self, lo, hi):
        """Bernstein coefficients (K, m + 1) of the weights on ``[lo, hi]`` (inside the span), as
        computed (within :meth:`allowance`; the stored ones where ``(lo, hi)`` is the span).

        Coefficient ``j`` is the blossom of the weight at ``m - j`` copies of the position of
        ``lo`` and ``j`` of ``hi``: a convex combination of the stored coefficients."""
        if (float(lo), float(hi)) == self.span:
            return self.weights.copy()
        m = self.degree
        s_lo, s_hi = self._positions(lo), self._positions(hi)
        cols = [casteljau(self.weights, [s_lo] * (m - j) + [s_hi] * j) for j in range(m + 1)]
        return np.stack(cols, axis=-1) if cols else self.weights.copy()

    def value(self, t):
        """The plain point at ``t``: every stored field combined with the weights at ``t``."""
        return _combine_fields(self.points, self.weights_at(float(t)))

    def errors(self, lo, hi):
        """Why this is not a well-formed moving point on the piece ``[lo, hi]``: a list (empty
        when it is).  Checked: the number of points and the degree within the limits, the
        weights finite, the span two finite numbers ``t0 < t1`` whose difference is finite (a
        span whose width overflows makes every position 0), the piece inside the span, the
        points of one type whose fields agree in shape and are finite."""
        w = self.weights
        k = len(self.points)
        if w.ndim != 2 or w.shape[0] != k or not 1 <= k <= MAX_POINTS or not 0 <= w.shape[1] - 1 <= MAX_DEGREE:
            return [f"a moving point needs 1 to {MAX_POINTS} points and their weights of degree 0 to {MAX_DEGREE} "
                    f"(shape (points, degree + 1)); got {k} points and weights of shape {w.shape}"]
        errors = []
        if not np.all(np.isfinite(w)):
            errors.append("the weights are not all finite")
        span = self.span
        if len(span) != 2 or not all(math.isfinite(x) for x in span):
            return errors + [f"the span {span!r} is not 2 finite numbers"]
        t0, t1 = span
        if not ((t0 < t1 or (t0 == t1 and self.degree == 0)) and math.isfinite(t1 - t0)):
            errors.append(f"the span [{t0!r}, {t1!r}] is not an interval of finite positive width")
        if not (t0 <= lo and hi <= t1):
            errors.append(f"the piece [{lo!r}, {hi!r}] is not inside the span [{t0!r}, {t1!r}]")
        kinds = {type(p) for p in self.points}
        if len(kinds) != 1 or not dataclasses.is_dataclass(self.points[0]):
            return errors + ["the points are not of one point type"]
        for name in _field_names(self.points[0]):
            values = [getattr(p, name) for p in self.points]
            if all(v is None for v in values):
                continue
            if any(v is None for v in values):
                errors.append(f"field {name!r} is set on some points only")
                continue
            arrays = [np.asarray(v, dtype=float) for v in values]
            if len({a.shape for a in arrays}) != 1:
                errors.append(f"field {name!r} has different shapes on different points")
            elif not all(np.all(np.isfinite(a)) for a in arrays):
                errors.append(f"field {name!r} is not finite on every point")
        return errors


def _field_names(point):
    """The names of a point's stored fields (``compare=True``; the others are search caches)."""
    return [f.name for f in dataclasses.fields(point) if f.compare]


def _combine_fields(points, weights):
    """The plain point :math:`\\sum_k` ``weights[k] * points[k]`` field by field (None stays None)."""
    first = points[0]
    values = {}
    for name in _field_names(first):
        parts = [getattr(p, name) for p in points]
        if parts[0] is None:
            values[name] = None
            continue
        total = float(weights[0]) * np.asarray(parts[0], dtype=float)
        for w, v in zip(weights[1:], parts[1:]):
            total = total + float(w) * np.asarray(v, dtype=float)
        values[name] = float(total) if total.ndim == 0 else total
    return type(first)(**values)


def is_moving(x):
    """Whether ``x`` (a stored point of a piece) is a :class:`Moving` point."""
    return isinstance(x, Moving)


def value_at(x, t):
    """The plain point at ``t`` (float) of a stored point ``x``: a fixed point (an instance of a
    problem's ``Primal`` or ``Dual`` dataclass) is its own value; a :class:`Moving` one gives
    :meth:`Moving.value`, every field :math:`\\sum_k w_k(t)\\, p_k` (``t`` clipped to its span), an instance of
    the points' class."""
    return x.value(t) if isinstance(x, Moving) else x


def constant(point, lo, hi):
    """A fixed ``point`` as a :class:`Moving` one with the constant weight 1 on the span
    ``[lo, hi]`` (degree 0: ``Moving((point,), [[1.0]], (lo, hi))``); a moving one as it is."""
    return point if isinstance(point, Moving) else Moving((point,), np.ones((1, 1)), (lo, hi))


def combine(points, weights, span):
    """:class:`Moving` of ``points`` (fixed points) with ``weights`` (K, m + 1) on ``span``; the
    plain point itself where one point has the constant weight 1 (the same value at every t).

    Parameters
    ----------
    points : sequence of K points
        Fixed points, instances of one ``Primal`` or ``Dual`` dataclass.
    weights : array_like of shape (K, m + 1)
        Bernstein coefficients of each point's weight on ``span`` (a 1-d array is one row).
    span : (float, float)
        :math:`(t_0, t_1)`, the interval of the path parameter the weights are given on.

    Returns
    -------
    Moving, or point
        :math:`\\sum_k w_k(t)\\, p_k`; ``points[0]`` where it is the only point and every
        coefficient of its weight is 1.
    """
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    if len(points) == 1 and np.all(weights == 1.0):
        return points[0]
    return Moving(tuple(points), weights, span)


def interpolate(pair_a, pair_b, thetas, ts, degree):
    """The pair :math:`(1 - \\theta(t))\\, a + \\theta(t)\\, b` of two pairs (the driver's
    interpolation between two exact solves, restored by the problem afterwards), both sides with
    the same weights on the span ``[ts[0], ts[2]]``.

    Parameters
    ----------
    pair_a, pair_b : tuple
        ``(primal, dual)`` of points constant in t (fixed, or constant combinations).
    thetas : sequence of 3 floats
        The weight of ``b`` wanted at ``ts`` (a piece's ends and a point between, increasing).
    ts : sequence of 3 floats
    degree : {1, 2}
        2: :math:`\\theta` is the quadratic through the three weights, its coefficients clipped
        to [0, 1] (the weights then stay in [0, 1] on the span); 1: the line through the middle
        weight with the slope of the chord of the two others (not clipped).

    Returns
    -------
    (Moving, Moving)
        Weights ``[1 - theta, theta]`` with :math:`1 - \\theta` rounded down coefficient by
        coefficient, so that the two sum to at most 1.
    """
    (th0, th1, th2), (t0, t1, t2) = (float(x) for x in thetas), (float(t) for t in ts)
    if degree >= 2:
        s = (t1 - t0) / (t2 - t0)
        # (a piece a few floats wide may put its middle on an end: then the line through the ends)
        middle = (th1 - th0 * (1 - s) ** 2 - th2 * s * s) / (2 * s * (1 - s)) if 0.0 < s < 1.0 else 0.5 * (th0 + th2)
        theta = np.clip([th0, middle, th2], 0.0, 1.0)
    else:
        slope = (th2 - th0) / (t2 - t0)
        theta = np.array([th1 + slope * (t0 - t1), th1 + slope * (t2 - t1)])
    weights = affine_weights(theta)
    # (an exact solve's point that is a constant combination, e.g. a scaled dual, enters as its value)
    return tuple(Moving((value_at(a, t0), value_at(b, t0)), weights, (t0, t2)) for a, b in zip(pair_a, pair_b))


def columns(point, name):
    """The field ``name`` of a stored point's points (itself for a fixed point) as the columns of
    one array: shape (n, K), (1, K) for a scalar field.

    Parameters
    ----------
    point : point or Moving
        A stored point: fixed (one point, K = 1) or :class:`Moving` (its K points).
    name : str
        A field of the points' dataclass holding an array of shape (n,) or a number (set, not
        None, on every point).

    Returns
    -------
    ndarray of shape (n, K), or (1, K)
        Column ``k`` is the field of point ``k``, as floats.
    """
    points = point.points if is_moving(point) else (point,)
    return np.column_stack([np.atleast_1d(np.asarray(getattr(p, name), dtype=float)) for p in points])


def parts(point, name, lo, hi, linear=False, rounded=False):
    """``(V, W, err)`` of a stored point on the piece ``[lo, hi]``: :func:`columns` ``V``, the
    weights' Bernstein coefficients ``W`` (K, m + 1) there and how far they are from exact ``err``
    (K,) (0 on the whole span; a fixed point: itself with the constant weight 1, exact).
    ``linear``: weights of degree 0 raised to degree 1 (the same constant twice), for bounds that
    take weights of degree 1; ``rounded``: ``err`` also covers a weight's value computed at a
    position of the piece (:func:`~approxpath.bernstein.coefficient_rounding`; a fixed point's weight 1 is exact).

    Parameters
    ----------
    point : point or Moving
        A stored point: fixed, or :class:`Moving` with K points and weights of degree ``m``.
    name : str
        The field taken (:func:`columns`).
    lo, hi : float
        The piece, in the path parameter (inside a moving point's span; ``lo == hi``: one
        parameter).
    linear : bool, default False
        Raise weights of degree 0 to degree 1.
    rounded : bool, default False
        Add the rounding of a weight's value computed at a position of the piece to ``err``.

    Returns
    -------
    V : ndarray of shape (n, K), or (1, K)
        :func:`columns` of ``name``.
    W : ndarray of shape (K, m + 1)
        The weights' Bernstein coefficients on ``[lo, hi]`` (:meth:`Moving.restrict`; degree 0
        raised to 1 with ``linear``); a fixed point: ones of shape (1, 1), or (1, 2) with ``linear``.
    err : ndarray of shape (K,)
        How far each row of ``W`` (with ``rounded``, also a weight's computed value) can be from
        the exact one; zeros where exact.
    """
    V = columns(point, name)
    if not is_moving(point):
        W, err = np.ones((1, 1)), np.zeros(1)
    else:
        W = point.restrict(lo, hi)
        err = np.zeros(len(point.points)) if (float(lo), float(hi)) == point.span else point.allowance()
    W = np.repeat(W, 2, axis=1) if linear and W.shape[1] == 1 else W
    if rounded and is_moving(point):
        err = err + coefficient_rounding(W)
    return V, W, err


def weight_ranges(point, edges):
    """``(points, ranges)``: the stored points of ``point`` and, for each sub-interval
    ``[edges[j], edges[j + 1]]`` (inside the span), a rigorous ``[min, max]`` of each weight there,
    shape (J, K, 2): the convex hull of the weight's coefficients on the sub-interval
    (:meth:`Moving.restrict`), widened by their rounding.  A fixed point: itself, weight 1.
    ``edges`` of shape (q, J' + 1): the sub-intervals of q covers, row after row (J = q J').

    Parameters
    ----------
    point : point or Moving
        A stored point: fixed, or :class:`Moving` with K points.
    edges : array_like of shape (J + 1,), or (q, J' + 1)
        Ends of consecutive sub-intervals in the path parameter, increasing along the last axis,
        inside the span of a moving ``point``.

    Returns
    -------
    points : tuple
        The K stored points (``(point,)`` for a fixed point, K = 1).
    ranges : ndarray of shape (J, K, 2)
        ``ranges[j, k]``: a lower and an upper bound of the weight :math:`w_k(t)` for every
        :math:`t` of sub-interval ``j`` (``[1, 1]`` for a fixed point).
    """
    edges = np.asarray(edges, dtype=float)
    s_lo, s_hi = edges[..., :-1].ravel(), edges[..., 1:].ravel()  # (J,): every sub-interval's ends
    if not isinstance(point, Moving):
        return (point,), np.ones((s_lo.size, 1, 2))
    err = point.allowance()[:, None]  # (K, 1)
    # every sub-interval at once: coefficient i of each is the blossom of :meth:`Moving.restrict`
    # (m - i positions of its left end, i of its right one), the same arithmetic per entry
    m = point.degree
    s_lo, s_hi = point._positions(s_lo), point._positions(s_hi)
    W = np.stack([casteljau(point.weights, [s_lo] * (m - i) + [s_hi] * i) for i in range(m + 1)], axis=-1)
    W = np.broadcast_to(W.reshape(len(point.points), -1, m + 1), (len(point.points), s_lo.size, m + 1))
    return point.points, np.stack([W.min(axis=-1) - err, W.max(axis=-1) + err], axis=-1).transpose(1, 0, 2)
