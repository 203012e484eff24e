"""Certificate side of sparse robust l1 kernel regression (numpy only: what ``approxpath verify``
builds).

A stored piece is :math:`\\beta` and a dual :math:`u` with :math:`\\lVert u\\rVert_\\infty \\le 1` and
:math:`\\max_\\tau\\lVert K_\\tau u\\rVert_\\infty \\le \\lambda` on the piece (rigorous); the gap
:math:`\\lVert y - K_\\tau\\beta\\rVert_1 + \\lambda\\lVert\\beta\\rVert_1 - y^\\top u` is bounded over the
piece from the residuals' Hermite enclosures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from approxpath.numerics import fp_margin

from .._regression import RegressionBound

__all__ = ["RobustL1Bound", "RobustL1Primal", "RobustL1Dual"]


@dataclass(frozen=True)
class RobustL1Primal:
    """Primal point: coefficients ``beta`` (n,)."""

    beta: np.ndarray


@dataclass(frozen=True)
class RobustL1Dual:
    """Dual point: ``u`` (n,) with ``|u| <= 1``.  ``basis`` (not part of the certificate): the
    optimal simplex basis of the exact solve it came from, a warm start for the next."""

    u: np.ndarray
    basis: object = field(default=None, compare=False, repr=False)


class RobustL1Bound(RegressionBound):
    """Gap bounds of sparse robust l1 kernel regression over the bandwidth (fixed ``lam``) or
    over ``lam`` (fixed ``bandwidth``); ``dual_restoration`` is ``"projection"`` or ``"scaling"``."""

    name = "robust_l1"
    Primal = RobustL1Primal
    Dual = RobustL1Dual
    DUAL_RESTORATIONS = ("projection", "scaling")

    def errors(self, primal, dual, lo, hi):
        u = np.asarray(dual.u, dtype=float)
        beta = np.asarray(primal.beta, dtype=float)
        if u.shape != (self.n,) or not np.all(np.isfinite(u)):
            return [f"u must be {self.n} finite numbers"]
        if beta.shape != (self.n,) or not np.all(np.isfinite(beta)):
            return [f"beta must be {self.n} finite numbers"]
        errors = []
        if np.max(np.abs(u)) > 1.0:
            errors.append(f"|u| exceeds 1 (max {np.max(np.abs(u)):.17g})")
        sup, lam = self.kernel_sup_norm(u, lo, hi), self.sweep.weight_floor(lo)
        if not sup <= lam:
            errors.append(f"dual infeasible on the piece: max ||K u||_inf <= {sup:.17g} exceeds lambda = {lam:.17g}")
        return errors

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        return {"beta": np.asarray(primal.beta, dtype=float), "dual": np.asarray(dual.u, dtype=float)}

    def from_arrays(self, arrays):
        return (RobustL1Primal(beta=np.asarray(arrays["beta"], dtype=float)),
                RobustL1Dual(u=np.asarray(arrays["dual"], dtype=float)))

    # -------------------------------------------------------------- gap bounds
    def _dual_margin(self, dual):
        return fp_margin(self.n, float(np.abs(self.y) @ np.abs(dual.u)))

    def dual_floor(self, dual, lo, hi=None):
        return float(self.y @ dual.u) - self._dual_margin(dual)  # depends on neither parameter

    def gap(self, primal, dual, lo, hi=None):
        """:math:`|r_i| \\le \\max(|\\text{low}_i|, |\\text{up}_i|)` with the residual enclosures of
        :meth:`residual_envelopes`, summed and maximized over the breakpoints (convex between
        them); on the lambda path the primal is increasing in lambda: its value at ``hi``."""
        hi = lo if hi is None else hi
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y, lo, hi)
        loss = float(np.maximum(np.abs(low), np.abs(up)).sum(axis=0).max())
        reg = self.sweep.at(hi)[1] * float(np.abs(beta).sum())
        d = float(self.y @ dual.u)
        return loss + reg - d + fp_margin(2 * self.n, loss + reg + abs(d)) + self._dual_margin(dual)
