"""A moving point's arrays in a certificate (numpy only: the verifier imports it).

Per side (``primal``/``dual``) and piece, every stored field of the points of a
:class:`~approxpath.moving.Moving` point, its Bernstein weights, count, degree and span, stacked
over the pieces (:func:`pack`; one piece back: :func:`unpack`), and a stored point's bytes for a
piece's fingerprint (:func:`fingerprint`).  A fixed point is one point with the constant weight 1.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .moving import MAX_DEGREE, MAX_POINTS, Moving, constant

__all__ = ["stored_fields", "array_names", "pack", "unpack", "fingerprint", "one_number"]


def stored_fields(point_type, example=None):
    """The fields of ``point_type`` a certificate stores: every compare field that is set on
    ``example`` (a point of the path; the fields it leaves None, e.g. slacks filled in at each
    parameter, are not stored).

    Parameters
    ----------
    point_type : type
        A problem's ``Primal`` or ``Dual`` dataclass.
    example : point or Moving, optional
        A stored point of the path (fixed, or :class:`Moving`: its first point is read); None:
        every compare field.

    Returns
    -------
    list of str
        The field names, in the dataclass's order.
    """
    names = [f.name for f in dataclasses.fields(point_type) if f.compare]
    if example is None:
        return names
    first = example.points[0] if isinstance(example, Moving) else example
    return [name for name in names if getattr(first, name) is not None]


#: The arrays of a side's layout besides its points' fields (:func:`pack`).
_LAYOUT = ("weights", "count", "degree", "span")


def array_names(side, point_type):
    """Every array name under which :func:`pack` may store one side (``"primal"`` or ``"dual"``)
    of points of ``point_type``: its compare fields and the layout's own arrays (set of str)."""
    return {f"{side}_{name}" for name in (*stored_fields(point_type), *_LAYOUT)}


def pack(side, stored, fields, pieces):
    """The arrays of one side (``"primal"`` or ``"dual"``) of every piece, in the one layout.

    Every piece holds a moving point with ``count`` points and weights of ``degree``; a fixed
    point is one point with the constant weight 1 on the piece.  Pieces are stacked to the
    largest count and degree: points beyond a piece's count and coefficients beyond its degree
    are zeros.

    Parameters
    ----------
    side : str
    stored : sequence
        Each piece's point (fixed or :class:`Moving`).
    fields : sequence of str
        The fields stored (:func:`stored_fields`).
    pieces : sequence of (float, float)
        Each piece's ``(lo, hi)`` (the span of a fixed point).

    Returns
    -------
    dict of ndarray
        ``{side}_{field}`` (pieces, K, ...), ``{side}_weights`` (pieces, K, m + 1),
        ``{side}_count``, ``{side}_degree`` (pieces,), ``{side}_span`` (pieces, 2).
    """
    movers = [constant(x, lo, hi) for x, (lo, hi) in zip(stored, pieces)]
    K = max((len(m.points) for m in movers), default=1)
    M = max((m.degree for m in movers), default=0)
    out = {f"{side}_weights": np.zeros((len(movers), K, M + 1)),
           f"{side}_count": np.array([len(m.points) for m in movers], dtype=float),
           f"{side}_degree": np.array([m.degree for m in movers], dtype=float),
           f"{side}_span": np.array([m.span for m in movers], dtype=float).reshape(len(movers), 2)}
    for i, m in enumerate(movers):
        out[f"{side}_weights"][i, :len(m.points), :m.degree + 1] = m.weights
    for name in fields:
        rows = []
        for m in movers:
            vals = [np.asarray(getattr(p, name), dtype=float) for p in m.points]
            pad = [np.zeros_like(vals[0])] * (K - len(vals))
            rows.append(np.stack(vals + pad))
        out[f"{side}_{name}"] = np.stack(rows) if rows else np.zeros((0, K))
    return out


def unpack(side, arrays, point_type, fields, lo, hi):
    """Inverse of :func:`pack` for one piece (``arrays``: that piece's rows): the fixed point
    (one point, the constant weight 1) or the :class:`Moving` point.

    Parameters
    ----------
    side : str
        ``"primal"`` or ``"dual"``: the prefix of the arrays read.
    arrays : dict of ndarray
        The piece's row of each array of the layout: ``{side}_weights`` (K, M + 1),
        ``{side}_count`` and ``{side}_degree`` (numbers), ``{side}_span`` (2,) and
        ``{side}_{field}`` (K, ...) for each of ``fields``.
    point_type : type
        The dataclass of the side's points (the problem's ``Primal`` or ``Dual``).
    fields : sequence of str
        The fields stored (:func:`stored_fields`).
    lo, hi : float
        The piece, which the stored span must contain.

    Returns
    -------
    point or Moving
        An instance of ``point_type`` where the piece holds one point with the constant weight 1,
        else a :class:`Moving` point of its ``count`` points and weights (count, degree + 1).

    Raises
    ------
    KeyError
        An array of the layout is missing (named).
    ValueError
        The count, degree or padding is outside the layout, or the span does not contain the
        piece (say what): the zeros beyond a piece's count and degree, and the span of a fixed
        point too, are part of what a certificate claims.
    """
    W = np.asarray(arrays[f"{side}_weights"], dtype=float)
    count, degree = one_number(arrays, f"{side}_count"), one_number(arrays, f"{side}_degree")
    span = np.asarray(arrays[f"{side}_span"], dtype=float)
    if W.ndim != 2 or span.shape != (2,):
        raise ValueError(f"{side}: weights must be (points, degree + 1) and the span 2 numbers per piece")
    K, M = W.shape[0], W.shape[1] - 1
    if not (count.is_integer() and 1 <= count <= min(K, MAX_POINTS) and degree.is_integer()
            and 0 <= degree <= min(M, MAX_DEGREE)):
        raise ValueError(f"{side}: count {count!r} and degree {degree!r} must be integers in [1, "
                         f"{min(K, MAX_POINTS)}] and [0, {min(M, MAX_DEGREE)}]")
    k, m = int(count), int(degree)
    values = {name: np.asarray(arrays[f"{side}_{name}"], dtype=float) for name in fields}
    if np.any(W[k:]) or np.any(W[:, m + 1:]) or any(v.shape[:1] != (K,) or np.any(v[k:]) for v in values.values()):
        raise ValueError(f"{side}: entries beyond the piece's {k} point(s) and degree {m} must be zeros")
    t0, t1 = float(span[0]), float(span[1])
    if not (t0 <= lo and hi <= t1 and np.isfinite(t1 - t0)):  # (NaN fails too; a moving point's span is
        # checked in full by Moving.errors)
        raise ValueError(f"{side}: the span [{t0!r}, {t1!r}] does not contain the piece [{lo!r}, {hi!r}] "
                         "or is not of finite width")
    points = tuple(point_type(**{name: (float(v[j]) if v.ndim == 1 else v[j]) for name, v in values.items()})
                   for j in range(k))
    weights = W[:k, :m + 1]
    if k == 1 and m == 0 and weights[0, 0] == 1.0:
        return points[0]
    return Moving(points, weights, (t0, t1))


def one_number(row, key):
    """The number ``row[key]`` (a piece's row of an array of one number per piece): ValueError
    for anything else, e.g. a row of shape (1,) that ``float`` would take.

    Parameters
    ----------
    row : mapping of str to array_like
        One piece's row of each array of a certificate (the array indexed at the piece).
    key : str
        The array's name.

    Returns
    -------
    float
    """
    value = np.asarray(row[key], dtype=float)
    if value.ndim:
        raise ValueError(f"array {key!r} must hold one number per piece; got shape {value.shape} per piece")
    return float(value)


def fingerprint(x):
    """The bytes of a stored point (fixed or moving): equal points give equal bytes (a piece's
    part of a path's fingerprint).  The weights' and the span's bytes, then each point's stored fields in order as
    float64 (``b"-"`` for a field that is None); a fixed point is taken as a :class:`Moving` of weight ``[[1.0]]``
    on the span (0, 1)."""
    m = x if isinstance(x, Moving) else Moving((x,), np.ones((1, 1)), (0.0, 1.0))
    parts = [m.weights.tobytes(), np.asarray(m.span).tobytes()]
    for p in m.points:
        for name in stored_fields(type(p)):
            v = getattr(p, name)
            parts.append(b"-" if v is None else np.ascontiguousarray(np.asarray(v, dtype=float)).tobytes())
    return b"".join(parts)
