"""Certificate side of the kernelized LASSO (numpy only: what ``approxpath verify`` builds).

A stored piece is :math:`(\\beta, \\beta_0)` and a dual :math:`s\\,u` (``1'u = 0`` exactly) or a
*moving* dual :math:`s\\,(u + (o + \\rho(t - a))v)` on a bandwidth piece.  For every :math:`\\tau` of the
piece the dual is feasible (:math:`\\max_\\tau\\lVert K_\\tau d\\rVert_\\infty \\le \\lambda`, rigorous)
and the gap :math:`\\tfrac12\\lVert y - K_\\tau\\beta - \\beta_0\\rVert^2 + \\lambda\\lVert\\beta\\rVert_1 -
(y^\\top d - \\tfrac12\\lVert d\\rVert^2)` is bounded over the piece from the residuals' Hermite
enclosures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF, fp_margin

from .._regression import RegressionBound

__all__ = ["KLassoBound", "KLassoPrimal", "KLassoDual"]


@dataclass(frozen=True)
class KLassoPrimal:
    """Primal point: coefficients ``beta`` (n,) and intercept ``beta0``."""

    beta: np.ndarray
    beta0: float


@dataclass(frozen=True)
class KLassoDual:
    """Dual point ``scale * u``: ``u`` (n,) with ``1'u = 0`` exactly, ``scale >= 0``.

    A *moving* dual (``slope`` set; bandwidth path) is :math:`s\\,(u + (o + \\rho\\,(t - a))\\,v)`
    at the bandwidth ``t``, with ``s = scale``, ``v = slope`` (``1'v = 0`` exactly), ``o =
    offset``, :math:`\\rho` = ``rate`` and ``a = at``: the combination of two exact solves'
    duals ``u`` and ``u + v`` whose weight moves with ``t`` (:meth:`KLasso.restore`; files
    written before 0.4.1 have no offset: 0).  ``parents`` (search only, not part of the
    certificate): the vectors ``(u, v)`` of the moving duals between the two exact solves an
    interpolated dual combines, and its weight.
    """

    u: np.ndarray
    scale: float = 1.0
    slope: np.ndarray = None
    rate: float = 0.0
    at: float = 0.0
    offset: float = 0.0
    parents: tuple = field(default=None, compare=False, repr=False)

    def __reduce__(self):  # the parents are only needed where the pair is restored: do not ship them
        return (KLassoDual, (self.u, self.scale, self.slope, self.rate, self.at, self.offset))

    def weight(self, t):
        """The weight :math:`o + \\rho\\,(t - a)` of ``slope`` at the bandwidth ``t``."""
        return float(self.offset) + float(self.rate) * (float(t) - float(self.at))

    def value(self, t):
        """The dual vector at the bandwidth ``t``, shape (n,)."""
        u = np.asarray(self.u, dtype=float)
        if self.slope is None:
            return float(self.scale) * u
        return float(self.scale) * (u + self.weight(t) * np.asarray(self.slope, dtype=float))


class KLassoBound(RegressionBound):
    """Gap bounds of the kernelized LASSO over the bandwidth (fixed ``lam``) or over ``lam``
    (fixed ``bandwidth``); ``dual_restoration`` is ``"moving"`` or ``"scaling"``."""

    name = "klasso"
    Primal = KLassoPrimal
    Dual = KLassoDual
    DUAL_RESTORATIONS = ("moving", "scaling")

    def errors(self, primal, dual, lo, hi):
        u, s = np.asarray(dual.u, dtype=float), float(dual.scale)
        beta = np.asarray(primal.beta, dtype=float)
        if u.shape != (self.n,) or not np.all(np.isfinite(u)):
            return [f"u must be {self.n} finite numbers"]
        if beta.shape != (self.n,) or not np.all(np.isfinite(beta)) or not np.isfinite(primal.beta0):
            return [f"beta must be {self.n} finite numbers and beta0 finite"]
        errors = []
        if not (np.isfinite(s) and s >= 0):
            errors.append(f"dual scale must be finite and >= 0; got {s!r}")
        if math.fsum(u) != 0.0:
            errors.append(f"1'u = {math.fsum(u):.3g} is not exactly 0")
        if dual.slope is not None:
            v = np.asarray(dual.slope, dtype=float)
            if not self.sweep.along_bandwidth:
                return errors + ["a moving dual (slope) is only defined on the bandwidth path"]
            if v.shape != (self.n,) or not np.all(np.isfinite(v)) or not np.isfinite(dual.rate) \
                    or not np.isfinite(dual.at) or not np.isfinite(dual.offset):
                return errors + [f"the dual's slope must be {self.n} finite numbers, its rate, at and offset finite"]
            if math.fsum(v) != 0.0:
                errors.append(f"1'slope = {math.fsum(v):.3g} is not exactly 0")
            bound = s * float(self.moving_sup_norms(u, v, [dual.rate], dual.at, lo, hi, offset=dual.offset)[0])
        else:
            bound = s * self.kernel_sup_norm(u, lo, hi)
        if not bound <= self.sweep.weight_floor(lo):
            errors.append(f"dual infeasible on the piece: scale * max ||K u||_inf <= {bound:.17g} "
                          f"exceeds lambda = {self.sweep.weight_floor(lo):.17g}")
        return errors

    # -------------------------------------------------------------- model selection
    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None):
        """Where every exact optimum's predictions at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`)."""
        from .enclosure import prediction_enclosure

        return prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows)

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        # every piece stores a slope (zeros for a fixed dual): pieces stack into one array per field
        slope = np.zeros(self.n) if dual.slope is None else np.asarray(dual.slope, dtype=float)
        return {"beta": np.asarray(primal.beta, dtype=float), "beta0": float(primal.beta0),
                "dual": np.asarray(dual.u, dtype=float), "dual_scale": float(dual.scale),
                "dual_slope": slope, "dual_rate": float(dual.rate), "dual_at": float(dual.at),
                "dual_offset": float(dual.offset)}

    def from_arrays(self, arrays):
        # certificates written before the dual could move have no slope, before 0.4.1 no offset
        slope = np.asarray(arrays["dual_slope"], dtype=float) if "dual_slope" in arrays else None
        moving = slope is not None and bool(np.any(slope))
        offset = float(arrays["dual_offset"]) if moving and "dual_offset" in arrays else 0.0
        dual = KLassoDual(u=np.asarray(arrays["dual"], dtype=float), scale=float(arrays["dual_scale"]),
                          slope=slope if moving else None, rate=float(arrays["dual_rate"]) if moving else 0.0,
                          at=float(arrays["dual_at"]) if moving else 0.0, offset=offset)
        return KLassoPrimal(beta=np.asarray(arrays["beta"], dtype=float), beta0=float(arrays["beta0"])), dual

    # -------------------------------------------------------------- gap bounds
    def _dual_value_bound(self, dual):
        """(dual objective, rounding allowance)."""
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        d = s * float(self.y @ u) - 0.5 * s * s * float(u @ u)
        return d, fp_margin(2 * self.n, s * float(np.abs(self.y) @ np.abs(u)) + s * s * float(u @ u))

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        if dual.slope is not None:  # concave in t: least at an end
            values, margin = self._moving_dual_values(dual.u, dual.slope, dual.scale, dual.rate, dual.at,
                                                      np.array([lo, hi], dtype=float), dual.offset)
            return float(values.min()) - margin
        d, margin = self._dual_value_bound(dual)  # the dual objective depends on neither parameter
        return d - margin

    def _moving_dual_values(self, u, slope, scale, rate, at, xs, offset=0.0):
        """Dual objectives of the moving dual :math:`s(u + (o + \\rho(t - a))v)` (``o = offset``)
        at the bandwidths ``xs`` (k,) and their rounding allowance: a concave quadratic in
        :math:`x = o + \\rho(t - a)`,
        :math:`s(y^\\top u + x\\, y^\\top v) - \\tfrac12 s^2 (u^\\top u + 2x\\, u^\\top v + x^2 v^\\top v)`
        (the allowance covers the dot products, the few operations after them and the
        rounding of ``x``).  ``scale`` and ``rate`` may be arrays of shape (r,) (several duals
        along the same ``u`` and ``v``): values (r, k) and allowances (r,)."""
        u, v = np.asarray(u, dtype=float), np.asarray(slope, dtype=float)
        s, rate = np.asarray(scale, dtype=float)[..., None], np.asarray(rate, dtype=float)[..., None]
        x = offset + rate * (np.asarray(xs, dtype=float) - at)
        yu, yv, uu, uv, vv = (float(a @ b) for a, b in ((self.y, u), (self.y, v), (u, u), (u, v), (v, v)))
        values = s * (yu + x * yv) - 0.5 * s * s * (uu + 2 * x * uv + x * x * vv)
        X = np.abs(x).max(axis=-1, keepdims=True)
        au, av, ay = np.abs(u), np.abs(v), np.abs(self.y)
        yau, yav, aa, ab, bb = (float(a @ b) for a, b in ((ay, au), (ay, av), (au, au), (au, av), (av, av)))
        magnitude = s * (yau + X * yav) + s * s * (aa + 2 * X * ab + X * X * bb)
        x_error = 4 * UNIT_ROUNDOFF * (np.abs(rate) * (float(np.abs(xs).max()) + abs(at)) + abs(offset))
        slope_bound = s * yav + s * s * (ab + X * bb)  # |d values / dx|
        margin = (fp_margin(2 * self.n + 16, 1.0) * magnitude + x_error * slope_bound)[..., 0]
        return values, margin if margin.ndim else float(margin)

    def _primal_nodes(self, primal, lo, hi, lam):
        """``(xs, sq, reg, margin)``: the primal objective on the piece ``[lo, hi]`` at ``lam`` is
        at most ``sq + reg`` at the nodes ``xs`` and convex between them (rounding: ``margin``
        on top): with the residual enclosures of :meth:`residual_envelopes`,
        :math:`\\tfrac12 r_i^2 \\le \\tfrac12\\max(\\text{low}_i^2, \\text{up}_i^2)` (interpolated)."""
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y - float(primal.beta0), lo, hi)
        sq = 0.5 * np.maximum(low * low, up * up).sum(axis=0)
        reg = lam * float(np.abs(beta).sum())
        return xs, sq, reg, fp_margin(2 * self.n, float(sq.max()) + reg)

    def _primal_upper(self, primal, lo, hi, lam):
        """Upper bound of the primal objective on the piece ``[lo, hi]`` at ``lam``, rounding
        included (:meth:`_primal_nodes`, maximized over the nodes)."""
        xs, sq, reg, margin = self._primal_nodes(primal, lo, hi, lam)
        return float(sq.max()) + reg + margin

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        if dual.slope is not None:
            # the primal bound is convex between the nodes and the moving dual's objective
            # concave in t: their difference is largest at a node
            xs, sq, reg, margin = self._primal_nodes(primal, lo, hi, self.sweep.at(hi)[1])
            d, d_margin = self._moving_dual_values(dual.u, dual.slope, dual.scale, dual.rate, dual.at, xs,
                                                   dual.offset)
            gap = sq + reg - d
            return float(gap.max()) + margin + d_margin + fp_margin(2, float(np.abs(gap).max() + np.abs(d).max()))
        d, margin = self._dual_value_bound(dual)
        # on the lambda path the primal is increasing in lambda and the dual does not depend on it
        p = self._primal_upper(primal, lo, hi, self.sweep.at(hi)[1])
        return p - d + margin
