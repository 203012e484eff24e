"""A toy problem with a closed-form optimal path, for testing the driver end to end.

.. math::

    \\min_{x \\ge 0} \\tfrac12 \\lVert x - t c \\rVert^2, \\qquad
    \\max_{\\mu \\ge 0} -\\tfrac12 \\lVert \\mu \\rVert^2 - t\\, c^\\top \\mu,

with ``c = y``. The optimum is :math:`x^* = \\max(0, tc)`, :math:`\\mu^* = \\max(0, -tc)`.
Both feasible sets are fixed, so pairs carry unchanged; the gap of a fixed pair is a convex
quadratic in :math:`t`, so its maximum on a piece is at an end point (an exact interval bound).
"""

from dataclasses import dataclass

import numpy as np

from approxpath.problem import Declaration, Problem, fp_margin
from approxpath.solvers import solve_cvxpy


@dataclass(frozen=True)
class ToyPrimal:
    x: np.ndarray


@dataclass(frozen=True)
class ToyDual:
    mu: np.ndarray


class ToyProjection(Problem):
    """Projection of t*c onto the nonnegative orthant (closed-form path; tests only)."""

    name = "toy_projection"
    parameters = ("t",)
    has_interval_bound = True
    Primal = ToyPrimal
    Dual = ToyDual

    def __init__(self, X, y, *, parameter="t"):
        super().__init__(X, y, parameter=parameter)
        self.c = np.asarray(y, dtype=float)

    def options(self):
        return dict(parameter=self.parameter)

    def default_interval(self):
        return (0.1, 10.0)

    @classmethod
    def examples(cls):
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((12, 1)), rng.standard_normal(12)
        return [(cls(X, y), (0.1, 10.0), 0.05)]

    def optimum(self, t):
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

        x = cp.Variable(self.n)  # nothing is free: the carried x is already feasible
        solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(x - primal.x)), [x >= 0]))
        return ToyPrimal(x=np.maximum(x.value, 0.0))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        mu = cp.Variable(self.n)
        solve_cvxpy(cp.Problem(cp.Minimize(cp.sum_squares(mu - dual.mu)), [mu >= 0]))
        return ToyDual(mu=np.maximum(mu.value, 0.0))

    def solve(self, t, solver=None):
        decl = self.cvxpy_primal(t)
        solve_cvxpy(decl.problem)
        x = np.maximum(decl.variables["x"].value, 0.0)
        return ToyPrimal(x=x), ToyDual(mu=np.maximum(0.0, x - t * self.c))

    def restore_primal(self, primal, dual, lo, hi=None):
        return ToyPrimal(x=np.maximum(primal.x, 0.0))

    def restore_dual(self, dual, lo, hi=None):
        return ToyDual(mu=np.maximum(dual.mu, 0.0))

    def primal_objective(self, primal, tau):
        return 0.5 * float(np.sum((primal.x - tau * self.c) ** 2))

    def dual_objective(self, dual, tau):
        return -0.5 * float(dual.mu @ dual.mu) - tau * float(self.c @ dual.mu)

    def primal_violation(self, primal, tau):
        return float(max(0.0, -primal.x.min()))

    def dual_violation(self, dual, tau):
        return float(max(0.0, -dual.mu.min()))

    def gap_bound(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        g = max(self.gap(primal, dual, lo), self.gap(primal, dual, hi))  # convex in t
        scale = np.sum((np.abs(primal.x) + hi * np.abs(self.c)) ** 2) + np.sum(np.abs(dual.mu) * (np.abs(dual.mu) + hi * np.abs(self.c)))
        return g + fp_margin(4 * self.n, scale)

    def dual_lower_bound(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        d = min(self.dual_objective(dual, lo), self.dual_objective(dual, hi))  # linear in t
        return d - fp_margin(4 * self.n, np.sum(np.abs(dual.mu) * (np.abs(dual.mu) + hi * np.abs(self.c))))
