"""The tests' independent optima: a CVXPY problem solved by Clarabel at tight tolerances."""

import warnings

import cvxpy as cp


def tight_solve(problem, tol=1e-11):
    """Solve ``problem`` by Clarabel at gap and feasibility tolerances ``tol``, else at ``10 tol``
    and ``100 tol``, and return its optimal value.

    Clarabel stops short of tolerances this close to double precision on some problems (a
    ``SolverError``, or an inaccurate status) depending on the rounding of the machine's BLAS,
    not on the problem (measured: a feature path's reference solve failed at 1e-10 alone and
    passed in the suite's order); each looser tolerance is still far below what the tests
    compare against it.  The last is met, or ends "optimal_inaccurate" (robust l1's LPs over
    lambda, degenerate at their optimum: the value the tests compared against before this
    helper).
    """
    for t in (tol, 10 * tol, 100 * tol):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "optimal_inaccurate" near the solver's floor: the next tolerance
            try:
                problem.solve(solver=cp.CLARABEL, tol_gap_abs=t, tol_gap_rel=t, tol_feas=t)
            except cp.error.SolverError:
                continue
        if problem.status == cp.OPTIMAL:
            return problem.value
    assert problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), problem.status
    return problem.value
