"""Certificate side of sparse robust l1 kernel regression (numpy only: what ``approxpath verify``
builds).

A stored piece is a primal :math:`\\beta` and a dual :math:`u` with :math:`\\lVert u\\rVert_\\infty \\le 1`
and :math:`\\max_\\tau\\lVert K_\\tau u\\rVert_\\infty \\le \\lambda` on the piece (rigorous); the gap
:math:`\\lVert y - K_\\tau\\beta\\rVert_1 + \\lambda\\lVert\\beta\\rVert_1 - y^\\top u` is bounded over the
piece from the residuals' Hermite enclosures.

On a bandwidth piece either side may *move* with the bandwidth :math:`t`:
:math:`\\beta(t) = \\beta + x(t)\\, w` and :math:`u(t) = s\\,(u + x(t)\\, v)` with
:math:`x(t) = o + \\rho (t - a)` (the fields ``slope``, ``offset``, ``rate``, ``at`` and the dual's
``scale``): the combination weight of two exact solves drifting with ``t``, which keeps the
interpolated pair near the solution path across the piece (:mod:`.moving`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from approxpath.numerics import fp_margin

from .._regression import RegressionBound
from .moving import box_norms, moving_gaps

__all__ = ["RobustL1Bound", "RobustL1Primal", "RobustL1Dual"]


def _at(point, t):
    """``o + rho (t - a)`` of a moving point."""
    return float(point.offset) + float(point.rate) * (float(t) - float(point.at))


@dataclass(frozen=True)
class RobustL1Primal:
    """Primal point: coefficients ``beta`` (n,); moving (``slope`` set, bandwidth path):
    :math:`\\beta + (o + \\rho(t - a))\\,w` with ``w = slope``, ``o = offset``, :math:`\\rho` = ``rate``,
    ``a = at``."""

    beta: np.ndarray
    slope: np.ndarray = None
    offset: float = 0.0
    rate: float = 0.0
    at: float = 0.0

    def value(self, t):
        """The coefficients at the bandwidth ``t``, shape (n,)."""
        beta = np.asarray(self.beta, dtype=float)
        return beta if self.slope is None else beta + _at(self, t) * np.asarray(self.slope, dtype=float)


@dataclass(frozen=True)
class RobustL1Dual:
    """Dual point ``scale * u`` with :math:`|u| \\le 1`; moving (``slope`` set, bandwidth path):
    :math:`s\\,(u + (o + \\rho(t - a))\\,v)` with ``s = scale``, ``v = slope``.

    Not part of the certificate: ``basis``, the optimal simplex basis of the exact solve it
    came from (a warm start for the next); ``tau``, the parameter of that solve; ``parents``,
    the two exact pairs an interpolated dual combines."""

    u: np.ndarray
    scale: float = 1.0
    slope: np.ndarray = None
    offset: float = 0.0
    rate: float = 0.0
    at: float = 0.0
    basis: object = field(default=None, compare=False, repr=False)
    tau: float = field(default=None, compare=False, repr=False)
    parents: tuple = field(default=None, compare=False, repr=False)

    def value(self, t):
        """The dual vector at the bandwidth ``t``, shape (n,)."""
        u = np.asarray(self.u, dtype=float)
        if self.slope is not None:
            u = u + _at(self, t) * np.asarray(self.slope, dtype=float)
        return float(self.scale) * u


class RobustL1Bound(RegressionBound):
    """Gap bounds of sparse robust l1 kernel regression over the bandwidth (fixed ``lam``) or
    over ``lam`` (fixed ``bandwidth``); ``dual_restoration`` is ``"moving"``, ``"projection"``
    or ``"scaling"``."""

    name = "robust_l1"
    Primal = RobustL1Primal
    Dual = RobustL1Dual
    DUAL_RESTORATIONS = ("moving", "projection", "scaling")

    @staticmethod
    def _moving(primal, dual):
        return primal.slope is not None or dual.slope is not None

    def errors(self, primal, dual, lo, hi):
        u = np.asarray(dual.u, dtype=float)
        beta = np.asarray(primal.beta, dtype=float)
        if u.shape != (self.n,) or not np.all(np.isfinite(u)):
            return [f"u must be {self.n} finite numbers"]
        if beta.shape != (self.n,) or not np.all(np.isfinite(beta)):
            return [f"beta must be {self.n} finite numbers"]
        s = float(dual.scale)
        if not (np.isfinite(s) and s >= 0):
            return [f"dual scale must be finite and >= 0; got {s!r}"]
        if self._moving(primal, dual):
            if not self.sweep.along_bandwidth:
                return ["a moving pair (slope) is only defined on the bandwidth path"]
            for side, point in (("beta", primal), ("dual", dual)):
                if point.slope is None:
                    continue
                v = np.asarray(point.slope, dtype=float)
                if v.shape != (self.n,) or not np.all(np.isfinite(v)) or not np.all(
                        np.isfinite([point.offset, point.rate, point.at])):
                    return [f"the {side}'s slope must be {self.n} finite numbers, its offset, rate and at finite"]
        errors = []
        if dual.slope is None:
            box = s * float(np.max(np.abs(u)))
            sup = s * self.kernel_sup_norm(u, lo, hi)
        else:
            v = np.asarray(dual.slope, dtype=float)
            box = s * float(box_norms(u, v, dual.offset, np.array([dual.rate]), dual.at, lo, hi)[0])
            sup = s * float(self.moving_sup_norms(u, v, np.array([dual.rate]), dual.at, lo, hi,
                                                  offset=float(dual.offset))[0])
        if s != 1.0:  # s * bound is rounded once (relative 2**-53): widen it by as much
            box, sup = box * (1.0 + 2.0**-52), sup * (1.0 + 2.0**-52)
        if box > 1.0:
            errors.append(f"|u| exceeds 1 on the piece (max {box:.17g})")
        lam = self.sweep.weight_floor(lo)
        if not sup <= lam:
            errors.append(f"dual infeasible on the piece: max ||K u||_inf <= {sup:.17g} exceeds lambda = {lam:.17g}")
        return errors

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        # every piece stores the moving fields (zeros for a fixed point): pieces stack into one array per field
        out = {"beta": np.asarray(primal.beta, dtype=float), "dual": np.asarray(dual.u, dtype=float),
               "dual_scale": float(dual.scale)}
        for side, point in (("beta", primal), ("dual", dual)):
            out[f"{side}_slope"] = np.zeros(self.n) if point.slope is None else np.asarray(point.slope, dtype=float)
            for name in ("offset", "rate", "at"):
                out[f"{side}_{name}"] = float(getattr(point, name)) if point.slope is not None else 0.0
        return out

    def from_arrays(self, arrays):
        # certificates written before pairs could move have the arrays beta and dual only
        def moving(side):
            key = f"{side}_slope"
            if key not in arrays or not np.any(arrays[key]):
                return {}
            return dict(slope=np.asarray(arrays[key], dtype=float),
                        **{name: float(arrays[f"{side}_{name}"]) for name in ("offset", "rate", "at")})

        scale = float(arrays["dual_scale"]) if "dual_scale" in arrays else 1.0
        return (RobustL1Primal(beta=np.asarray(arrays["beta"], dtype=float), **moving("beta")),
                RobustL1Dual(u=np.asarray(arrays["dual"], dtype=float), scale=scale, **moving("dual")))

    # -------------------------------------------------------------- gap bounds
    def _dual_margin(self, dual):
        s = float(dual.scale)  # (one more rounding, s * y'u, where s is not 1)
        return fp_margin(self.n + (s != 1.0), s * float(np.abs(self.y) @ np.abs(dual.u)))

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        s = float(dual.scale)
        if dual.slope is None:  # depends on neither parameter
            return s * float(self.y @ dual.u) - self._dual_margin(dual)
        # linear in t: least at an end
        v = np.asarray(dual.slope, dtype=float)
        yu, yv = float(self.y @ dual.u), float(self.y @ v)
        ay = np.abs(self.y)
        xs = [_at(dual, x) for x in (lo, hi)]
        reach = max(abs(x) for x in xs)
        x_error = 4 * 2.0**-53 * (abs(dual.rate) * (abs(lo) + abs(hi) + abs(dual.at)) + abs(dual.offset))
        margin = fp_margin(self.n + 8, s * (float(ay @ np.abs(dual.u)) + reach * float(ay @ np.abs(v)))) \
            + s * x_error * float(ay @ np.abs(v))
        return min(s * (yu + x * yv) for x in xs) - margin

    def gap(self, primal, dual, lo, hi=None):
        """Fixed pair: :math:`|r_i| \\le \\max(|\\text{low}_i|, |\\text{up}_i|)` with the residual
        enclosures of :meth:`residual_envelopes`, summed and maximized over the breakpoints
        (convex between them); on the lambda path the primal is increasing in lambda: its value
        at ``hi``.  A moving pair: :func:`.moving.moving_gaps`."""
        hi = lo if hi is None else hi
        if self._moving(primal, dual):
            return float(moving_gaps(self, primal, dual, np.array([primal.rate]), np.array([dual.rate]),
                                     np.array([float(dual.scale)]), lo, hi)[0])
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y, lo, hi)
        loss = float(np.maximum(np.abs(low), np.abs(up)).sum(axis=0).max())
        reg = self.sweep.at(hi)[1] * float(np.abs(beta).sum())
        s = float(dual.scale)
        d = s * float(self.y @ dual.u)
        if s == 1.0:  # (the layout before the scale was stored: the same bound, bit for bit)
            d = float(self.y @ dual.u)
        return loss + reg - d + fp_margin(2 * self.n, loss + reg + abs(d)) + self._dual_margin(dual)
