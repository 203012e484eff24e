"""An elastic-net path over lambda declared in CVXPY only: no numpy maps written.

    1/(2n) ||y - X beta||^2 + lam (mix ||beta||_1 + (1 - mix)/2 ||beta||^2)

Every piece is "sampled" (a CVXPY-declared problem is checked to solver tolerances, not proven);
as lam enters the objective only as a weight, the claims hold between the sampled points too, up
to those tolerances (docs/cvxpy-problems.md).  Run: python examples/elastic_net_cvxpy.py (writes
elastic_net_cvxpy.npz and verifies it).
"""

import cvxpy as cp
import numpy as np

import approxpath
from approxpath.bound import Option


@approxpath.register
class ElasticNet(approxpath.CvxpyProblem):
    """Elastic net over lam; mix in (0, 1) weighs the l1 against the squared l2 penalty."""

    name, parameters = "elastic_net_cvxpy", ("lam",)
    variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")
    # as narrow as the math: the dual divides by 1 - mix, and beyond 1 the penalty is not convex
    OPTIONS = dict(mix=Option("between", default=0.5, bounds=(0.0, 1.0)))

    @staticmethod
    def declare(X, y, lam, mix):
        n, d = X.shape
        beta, u = cp.Variable(d, name="beta"), cp.Variable(n, name="u")
        penalty = mix * cp.norm1(beta) + (1 - mix) / 2 * cp.sum_squares(beta)
        primal = cp.Problem(cp.Minimize(cp.sum_squares(y - X @ beta) / (2 * n) + lam * penalty))
        # Fenchel dual: h*(z) = sum_j (|z_j| - lam mix)_+^2 / (2 lam (1 - mix))
        excess = cp.sum_squares(cp.pos(cp.abs(X.T @ u) - lam * mix)) / (2 * lam * (1 - mix))
        dual = cp.Problem(cp.Maximize(y @ u - n / 2 * cp.sum_squares(u) - excess))
        return primal, dual


def main():
    """The path on seeded data, its certificate verified; 0 when nothing is uncovered."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    y = X @ np.array([1.5, -2.0, 0, 0, 1.0, 0, 0, 0]) + 0.3 * rng.standard_normal(60)
    problem = ElasticNet(X, y, mix=0.5)
    path = approxpath.approximate_path(problem, eps=1e-3, interval=(1e-3, 1.0))
    print(path.summary())
    print(approxpath.verify(path.save("elastic_net_cvxpy.npz"), X, y))
    return 1 if path.uncovered() else 0


if __name__ == "__main__":
    raise SystemExit(main())
