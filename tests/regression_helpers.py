"""Independent references shared by the path tests (a tight CVXPY optimum; checks of the
klasso and robust_l1 paths against it)."""

import numpy as np

from approxpath.errors import SolverError
from approxpath.solvers.conic import solve_cvxpy


def tight_optimum(problem, t):
    """The optimal value at ``t`` from a tight CVXPY solve of the problem's own dual declaration
    (the primal one if the dual solve is inaccurate)."""
    for decl in (problem.cvxpy_dual(t), problem.cvxpy_primal(t)):
        try:
            solve_cvxpy(decl.problem)
            return decl.problem.value
        except SolverError:
            continue
    raise AssertionError(f"no tight reference solve at t = {t}")


def check_against_cvxpy(problem, path, interval, eps, seed, primal_type):
    """At 30 random parameter values the path's primal is feasible and within eps of a tight,
    independent CVXPY optimum of the primal declaration; its dual is feasible."""
    rng = np.random.default_rng(seed)
    lo, hi = interval
    for t in np.exp(rng.uniform(np.log(lo), np.log(hi), 30)):
        decl = problem.cvxpy_primal(t)
        solve_cvxpy(decl.problem)
        point = path.primal(t)
        assert isinstance(point, primal_type) and point.beta.shape == (problem.n,)
        assert problem.primal_violation(point, t) == 0.0
        assert problem.dual_violation(path.dual(t), t) == 0.0
        assert problem.primal_objective(point, t) - decl.problem.value <= eps + 1e-7


def check_piece_against_cvxpy(problem, primal, dual, lo, hi, taus, tol, feasible=True):
    """At each of ``taus`` (inside ``[lo, hi]``): the pair's dual objective is at most a tight CVXPY
    optimum of the primal declaration and its primal objective at least (to ``tol``), the piece's
    bound covers the primal's distance to that optimum and the computed gap, and (``feasible``)
    the dual's value is feasible in numpy.  Returns the piece's bound."""
    from approxpath.moving import value_at

    bound = problem.bound.gap(primal, dual, lo, hi)
    for tau in taus:
        decl = problem.cvxpy_primal(tau)
        solve_cvxpy(decl.problem)
        opt = decl.problem.value
        if feasible:
            assert problem.dual_violation(value_at(dual, tau), tau) == 0.0
        pv = problem.primal_objective(value_at(primal, tau), tau)
        dv = problem.dual_objective(value_at(dual, tau), tau)
        assert dv <= opt + tol <= pv + 2 * tol
        assert bound >= pv - opt - tol
        assert bound >= pv - dv >= 0.0
    return bound


def bound_slack_on_pieces(problem, path, samples=40):
    """On every piece the gap sampled at ``samples`` points stays below the piece's bound;
    returns the bound minus the sampled maximum, per piece."""
    slack = []
    for piece in path.pieces:
        gaps = [problem.gap(piece.primal, piece.dual, tau) for tau in np.geomspace(piece.lo, piece.hi, samples)]
        assert max(gaps) <= piece.gap_bound
        slack.append(piece.gap_bound - max(gaps))
    return np.array(slack)
