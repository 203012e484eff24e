"""A known-answer problem with a closed-form optimal path: the driver's end-to-end reference.

.. math::

    \\min_{x \\ge 0} \\tfrac12 \\lVert x - t c \\rVert^2, \\qquad
    \\max_{\\mu \\ge 0} -\\tfrac12 \\lVert \\mu \\rVert^2 - t\\, c^\\top \\mu,

with ``c = y``.  The optimum is :math:`x^* = \\max(0, tc)`, :math:`\\mu^* = \\max(0, -tc)`, the
optimal value :math:`\\tfrac12\\lVert\\min(0, tc)\\rVert^2` (:meth:`ToyProjection.optimum`).
Both feasible sets are fixed, so pairs carry unchanged; the gap of a fixed pair is a convex
quadratic in :math:`t`, so its maximum on a piece is at an end point (an exact interval bound).
Not registered: register it where a test needs it (``approxpath.register(ToyProjection)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bound import Bound
from ..numerics import fp_margin
from ..problem import Declaration, Problem

__all__ = ["ToyProjection", "ToyBound", "ToyPrimal", "ToyDual"]


@dataclass(frozen=True)
class ToyPrimal:
    """Primal point ``x`` (n,), ``x >= 0``."""

    x: np.ndarray


@dataclass(frozen=True)
class ToyDual:
    """Dual point ``mu`` (n,), ``mu >= 0``."""

    mu: np.ndarray


class ToyBound(Bound):
    """Certificate side of :class:`ToyProjection`."""

    name = "toy_projection"
    Primal = ToyPrimal
    Dual = ToyDual
    parameters = ("t",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.c = np.asarray(self.y, dtype=float)

    def _gap(self, primal, dual, t):
        return 0.5 * float(np.sum((primal.x - t * self.c) ** 2)) + 0.5 * float(dual.mu @ dual.mu) \
            + t * float(self.c @ dual.mu)

    def errors(self, primal, dual, lo, hi):
        x, mu = np.asarray(primal.x, dtype=float), np.asarray(dual.mu, dtype=float)
        if x.shape != (self.n,) or mu.shape != (self.n,) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(mu))):
            return [f"x and mu must be {self.n} finite numbers each"]
        return [f"{name} has a negative entry" for name, v in (("x", x), ("mu", mu)) if v.min() < 0]

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        g = max(self._gap(primal, dual, lo), self._gap(primal, dual, hi))  # convex in t
        scale = np.sum((np.abs(primal.x) + hi * np.abs(self.c)) ** 2) + np.sum(np.abs(dual.mu) * (np.abs(dual.mu) + hi * np.abs(self.c)))
        return g + fp_margin(4 * self.n, scale)

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        d = min(-0.5 * float(dual.mu @ dual.mu) - t * float(self.c @ dual.mu) for t in (lo, hi))  # linear in t
        return d - fp_margin(4 * self.n, np.sum(np.abs(dual.mu) * (np.abs(dual.mu) + hi * np.abs(self.c))))


class ToyProjection(Problem):
    """Projection of t*c onto the nonnegative orthant (closed-form path; a test fixture).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Unused (the data of a problem).
    y : ndarray of shape (n,)
        The direction ``c``.
    parameter : {"t"}
        The path parameter.
    """

    name = "toy_projection"
    Bound = ToyBound

    def __init__(self, X, y, *, parameter="t"):
        super().__init__(X, y, parameter=parameter)

    c = property(lambda self: self.bound.c)

    def default_interval(self):
        return (0.1, 10.0)

    @classmethod
    def examples(cls):
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((12, 1)), rng.standard_normal(12)
        return [(cls(X, y), (0.1, 10.0), 0.05)]

    def optimum(self, t):
        """The optimal value at ``t`` (closed form)."""
        return 0.5 * float(np.sum(np.minimum(0.0, t * self.c) ** 2))

    def cvxpy_primal(self, t):
        import cvxpy as cp

        x = cp.Variable(self.n, name="x")
        return Declaration(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - t * self.c)), [x >= 0]), dict(x=x))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        mu = cp.Variable(self.n, name="mu")
        obj = -0.5 * cp.sum_squares(mu) - t * (self.c @ mu)
        return Declaration(cp.Problem(cp.Maximize(obj), [mu >= 0]), dict(mu=mu))

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        from ..solvers.conic import solve_cvxpy

        x = cp.Variable(self.n)  # nothing is free: the carried x is already feasible
        solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(x - primal.x)), [x >= 0]))
        return ToyPrimal(x=np.maximum(x.value, 0.0))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        from ..solvers.conic import solve_cvxpy

        mu = cp.Variable(self.n)
        solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(mu - dual.mu)), [mu >= 0]))
        return ToyDual(mu=np.maximum(mu.value, 0.0))

    def restore(self, primal, dual, lo, hi=None):
        return ToyPrimal(x=np.maximum(primal.x, 0.0)), ToyDual(mu=np.maximum(dual.mu, 0.0))

    def primal_objective(self, primal, tau):
        return 0.5 * float(np.sum((primal.x - tau * self.c) ** 2))

    def dual_objective(self, dual, tau):
        return -0.5 * float(dual.mu @ dual.mu) - tau * float(self.c @ dual.mu)

    def primal_violation(self, primal, tau):
        return float(max(0.0, -primal.x.min()))

    def dual_violation(self, dual, tau):
        return float(max(0.0, -dual.mu.min()))
