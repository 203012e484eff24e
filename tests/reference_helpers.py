"""The tests' independent optima: a CVXPY problem solved by Clarabel at tight tolerances, and
libSVM's optimality test of an SVM dual on a kernel formed in numpy."""

import math
import warnings

import cvxpy as cp
import numpy as np


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


def svm_dual_optimum(K, y, C, tol=1e-11):
    """The SVM dual max 1'a - a'Qa / 2, Q = yy' * K, over 0 <= a <= C, y'a = 0, solved by
    :func:`tight_solve` at ``tol``: ``(value, alpha)``."""
    a = cp.Variable(y.size)
    value = tight_solve(cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap(K * np.outer(y, y)))),
                                   [a >= 0, a <= C, y @ a == 0]), tol)
    return value, np.asarray(a.value)


def assert_svm_dual_optimal(K, y, C, alpha, tol):
    """``alpha`` is optimal for the SVM dual on the kernel ``K`` (formed by the test) by libSVM's
    own stopping rule: no pair violates the KKT conditions by more than ``tol`` (up to rounding),
    inside the box ``[0, C]``, and ``y'alpha = 0`` to rounding (the restoration makes it exact)."""
    a = alpha
    G = -y * ((K * np.outer(y, y)) @ a - 1.0)
    up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
    low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
    assert G[up].max() - G[low].min() <= tol * (1 + 1e-9)
    assert np.all((a >= 0) & (a <= C)) and abs(math.fsum(y * a)) <= 1e-12
