r"""Certificate side of ridge regression over lambda (numpy only).

.. math::

    \min_w\; \lVert Xw - y\rVert^2 + \lambda\lVert w\rVert^2, \qquad
    \max_a\; 2a^\top y - \lVert a\rVert^2 - \tfrac1\lambda \lVert X^\top a\rVert^2.

Completing squares, the gap of any pair is
:math:`g_\lambda(w, a) = \tfrac1\lambda\lVert\lambda w - X^\top a\rVert^2 + \lVert Xw - y + a\rVert^2`:
the first term is :math:`\lambda\lVert w\rVert^2 - 2w^\top X^\top a + \lVert X^\top a\rVert^2/\lambda`,
convex in :math:`\lambda > 0`, the second does not depend on it.  So the gap of a fixed pair is
convex in :math:`\lambda` and its largest value on a piece is at an end: that is the piece bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from approxpath.bound import Bound
from approxpath.numerics import fp_margin

__all__ = ["RidgeBound", "RidgePrimal", "RidgeDual"]


@dataclass(frozen=True)
class RidgePrimal:
    """Coefficients ``w`` (d,)."""

    w: np.ndarray


@dataclass(frozen=True)
class RidgeDual:
    """Dual point ``a`` (n,): the residual ``y - Xw`` at the optimum."""

    a: np.ndarray


class RidgeBound(Bound):
    """Gap bounds of ridge regression over ``lam`` (the only path parameter, no other option)."""

    name = "ridge"
    Primal = RidgePrimal
    Dual = RidgeDual
    parameters = ("lam",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.y = np.asarray(self.y, dtype=float)

    def _gap(self, w, a, lam):
        """The gap at ``lam`` (as computed) and a magnitude that dominates every term summed."""
        aX, aw, aa = np.abs(self.X), np.abs(w), np.abs(a)
        e, r = lam * w - self.X.T @ a, self.X @ w - self.y + a
        magnitude = float(np.sum((lam * aw + aX.T @ aa) ** 2)) / lam + float(np.sum((aX @ aw + np.abs(self.y) + aa) ** 2))
        return float(e @ e) / lam + float(r @ r), magnitude

    def errors(self, primal, dual, lo, hi):
        w, a = np.asarray(primal.w, dtype=float), np.asarray(dual.a, dtype=float)
        d = self.X.shape[1]
        if w.shape != (d,) or a.shape != (self.n,) or not (np.all(np.isfinite(w)) and np.all(np.isfinite(a))):
            return [f"w must be {d} and a {self.n} finite numbers"]
        return []  # neither side has constraints

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        (g_lo, m_lo), (g_hi, m_hi) = (self._gap(primal.w, dual.a, lam) for lam in (lo, hi))
        # convex in lam: the larger end value bounds the piece; the sums have at most n + d terms
        return max(g_lo, g_hi) + fp_margin(2 * (self.n + self.X.shape[1]), max(m_lo, m_hi))

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        a = np.asarray(dual.a, dtype=float)
        Xa = self.X.T @ a
        # concave in lam (-|X'a|^2 / lam): least at an end
        d = min(2.0 * float(a @ self.y) - float(a @ a) - float(Xa @ Xa) / lam for lam in (lo, hi))
        aa = np.abs(a)
        magnitude = 2.0 * float(aa @ np.abs(self.y)) + float(a @ a) + float(np.sum((np.abs(self.X).T @ aa) ** 2)) / lo
        return d - fp_margin(2 * (self.n + self.X.shape[1]), magnitude)
