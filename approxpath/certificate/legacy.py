"""Reading the pairs of certificates of formats 1 and 2 (approxpath 0.1 to 0.4.1): each built-in
problem stored its pairs in a layout of its own, and a pair that moved with the bandwidth in an
encoding of its own.  :func:`upgrade` turns those arrays into the one layout of
:mod:`approxpath.moving` (format 3), with the same points and the same motion:

* ``kernel_svm``: ``dual`` (α), ``bias`` and ``bias_slope`` (b + b_slope·t), and since 0.4.1
  ``dual_b``, ``theta`` and ``theta_at``: α(t) = (1 − θ(t))α + θ(t)α_b with θ the quadratic with
  Bernstein coefficients ``theta`` on the span ``theta_at`` (all zeros: a fixed dual);
* ``klasso``: ``beta``, ``beta0``, ``dual`` (u), ``dual_scale`` (s) and ``dual_slope`` (v),
  ``dual_rate`` (ρ), ``dual_at`` (a), ``dual_offset`` (o): the dual s(u + (o + ρ(t − a))v);
* ``robust_l1``: ``beta`` and ``dual`` with optional ``dual_scale``, ``beta_slope``/``dual_slope``
  and their ``offset``, ``rate``, ``at``: β + x_β(t)w and s(u + x_u(t)v);
* every other problem: ``primal_<field>`` and ``dual_<field>``, one fixed pair per piece.

A weight that is linear in t becomes its two values at the piece's ends; the weight
1 − θ is rounded down, so that the two weights of an SVM dual sum to at most 1 (the dual stays in
the box).  The pairs so read differ from the stored ones only by those roundings, which the
bounds' allowances and the stored bounds' pad cover (tests/test_compatibility.py verifies files of
each version and pair kind).  Numpy only.
"""

from __future__ import annotations

import numpy as np

from ..bernstein import affine_weights
from ..moving import Moving
from ..moving_layout import one_number
from .format import DATA_FIELDS, PIECE_FIELDS

__all__ = ["upgrade"]


def upgrade(bound, arrays):
    """The arrays of a certificate of format 1 or 2 with the pairs in the layout of format 3
    (the per-piece fields ``lo``, ``hi``, ... and the data kept as they are): a new dict, the old
    pair arrays (one row per piece, the layout picked by ``bound.name``: ``kernel_svm``, ``klasso``,
    ``robust_l1``, else ``primal_<field>`` and ``dual_<field>``) replaced by ``bound.pieces_to_arrays``
    of the pairs read; ``arrays`` itself where the bound's class overrides ``pieces_to_arrays`` (a
    layout of its own, as CVXPY-declared problems have).

    Raises
    ------
    KeyError
        An array the old layout needs is missing.
    ValueError
        An array of the wrong shape.
    """
    from ..bound import Bound

    if type(bound).pieces_to_arrays is not Bound.pieces_to_arrays:
        return arrays  # a bound with a layout of its own (CVXPY-declared problems): unchanged
    lo, hi = np.asarray(arrays["lo"], dtype=float), np.asarray(arrays["hi"], dtype=float)
    read = _READERS.get(bound.name, _default)
    own = {k: v for k, v in arrays.items() if k not in PIECE_FIELDS and k not in DATA_FIELDS and k != "meta"}
    pairs = [(*read(bound, {k: v[i] for k, v in own.items()}, float(lo[i]), float(hi[i])), float(lo[i]), float(hi[i]))
             for i in range(lo.size)]
    out = {k: v for k, v in arrays.items() if k not in own}
    out.update(bound.pieces_to_arrays(pairs))
    return out


def _scaled(point, s, lo, hi):
    """``s * point`` (the point itself where ``s`` is 1)."""
    return point if s == 1.0 else Moving((point,), [[s]], (lo, hi))


def _svm(bound, row, lo, hi):
    y = bound.y
    P, D = bound.Primal, bound.Dual
    alpha = np.asarray(row["dual"], dtype=float)
    b = one_number(row, "bias")
    slope = one_number(row, "bias_slope") if "bias_slope" in row else 0.0
    fields = [np.asarray(row[k], dtype=float) for k in ("dual_b", "theta", "theta_at") if k in row]
    moving = len(fields) == 3 and any(np.any(f != 0) for f in fields)
    if not moving:
        dual = D(alpha=alpha)
        if slope == 0.0:
            return P(w=y * alpha, b=b), dual
        primal = Moving((P(w=y * alpha, b=0.0), P(w=np.zeros_like(alpha), b=1.0)),
                        [[1.0, 1.0], [b + slope * lo, b + slope * hi]], (lo, hi))
        return primal, dual
    alpha_b, c, span = fields
    if c.shape != (3,) or span.shape != (2,):
        raise ValueError(f"kernel_svm: theta must be 3 numbers and theta_at 2; got shapes {c.shape}, {span.shape}")
    t0, t1 = float(span[0]), float(span[1])
    weights = affine_weights(c)  # 1 - theta rounded down: the weights sum to at most 1
    dual = Moving((D(alpha=alpha), D(alpha=alpha_b)), weights, (t0, t1))
    bias = [b + slope * t0, b + slope * (0.5 * (t0 + t1)), b + slope * t1] if slope else [b, b, b]
    primal = Moving((P(w=y * alpha, b=0.0), P(w=y * alpha_b, b=0.0), P(w=np.zeros_like(alpha), b=1.0)),
                    np.vstack([weights, bias]), (t0, t1))
    return primal, dual


def _weight(row, side, lo, hi):
    """The old moving weight ``o + rho (t - a)`` of ``side`` at the piece's ends."""
    o = one_number(row, f"{side}_offset") if f"{side}_offset" in row else 0.0
    rate, at = one_number(row, f"{side}_rate"), one_number(row, f"{side}_at")
    return o + rate * (lo - at), o + rate * (hi - at)


def _klasso(bound, row, lo, hi):
    primal = bound.Primal(beta=np.asarray(row["beta"], dtype=float), beta0=one_number(row, "beta0"))
    u, s = np.asarray(row["dual"], dtype=float), one_number(row, "dual_scale")
    slope = np.asarray(row["dual_slope"], dtype=float) if "dual_slope" in row else None
    if slope is None or not np.any(slope):
        return primal, _scaled(bound.Dual(u=u), s, lo, hi)
    x_lo, x_hi = _weight(row, "dual", lo, hi)
    dual = Moving((bound.Dual(u=u), bound.Dual(u=slope)), [[s, s], [s * x_lo, s * x_hi]], (lo, hi))
    return primal, dual


def _robust(bound, row, lo, hi):
    beta, u = np.asarray(row["beta"], dtype=float), np.asarray(row["dual"], dtype=float)
    s = one_number(row, "dual_scale") if "dual_scale" in row else 1.0
    w = np.asarray(row["beta_slope"], dtype=float) if "beta_slope" in row else None
    v = np.asarray(row["dual_slope"], dtype=float) if "dual_slope" in row else None
    P, D = bound.Primal, bound.Dual
    if w is None or not np.any(w):
        primal = P(beta=beta)
    else:
        primal = Moving((P(beta=beta), P(beta=w)), [[1.0, 1.0], list(_weight(row, "beta", lo, hi))], (lo, hi))
    if v is None or not np.any(v):
        dual = _scaled(D(u=u), s, lo, hi)
    else:
        x_lo, x_hi = _weight(row, "dual", lo, hi)
        dual = Moving((D(u=u), D(u=v)), [[s, s], [s * x_lo, s * x_hi]], (lo, hi))
    return primal, dual


def _default(bound, row, lo, hi):
    def build(point_type, side):
        import dataclasses

        kw = {}
        for f in dataclasses.fields(point_type):
            key = f"{side}_{f.name}"
            if f.compare and key in row:
                v = np.asarray(row[key], dtype=float)
                kw[f.name] = float(v) if v.ndim == 0 else v
            elif f.compare and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise KeyError(key)  # (verify: "certificate lacks array ...")
        return point_type(**kw)

    return build(bound.Primal, "primal"), build(bound.Dual, "dual")


_READERS = {"kernel_svm": _svm, "klasso": _klasso, "robust_l1": _robust}
