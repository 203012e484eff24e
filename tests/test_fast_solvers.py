"""The fast exact solvers (approxpath.solvers.lasso, approxpath.solvers.lp) against tight
CVXPY (Clarabel) solves of the same problems, against their own cold solves, and through the
problems' own certified gap (restore, then the bound's gap), including ill-conditioned kernels."""

import importlib.util

import numpy as np
import scipy.sparse as sp
import pytest

import approxpath
from approxpath.errors import InputError
from approxpath.data import make_sinc
from approxpath.problems.klasso.bound import KLassoDual, KLassoPrimal
from approxpath.problems.robust_l1.bound import RobustL1Dual, RobustL1Primal
from approxpath.solvers.lasso import solve_klasso
from approxpath.solvers.lp import LP_SOLVERS, solve_robust_l1
from reference_helpers import tight_solve

# what an exact solve must reach (Problem.solve's acceptance: EXACT_GAP relative)
EXACT = 1e-7
LAM = 0.1
# bandwidths: 0.01 and 0.05 make K_t nearly singular on sinc data (cond ~1e17), where
# interior-point solves needed klasso's active-set polish; the rest span the usual path
BANDWIDTHS = (0.01, 0.05, 0.3, 2.0, 25.0)


@pytest.fixture(scope="module")
def data():
    return make_sinc(n=40, noise=0.1, outliers=0.1, seed=3)


def _klasso_cvxpy(K, y, lam):
    """Optimal value and dual point (the residual) of the kLASSO by CVXPY/Clarabel, tight."""
    import cvxpy as cp

    beta, beta0 = cp.Variable(y.size), cp.Variable()
    r = y - K @ beta - beta0
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(r) + lam * cp.norm1(beta)))
    tight_solve(prob, 1e-10)
    return prob.value, y - K @ beta.value - beta0.value


def _robust_cvxpy(K, y, lam):
    import cvxpy as cp

    beta = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(cp.norm1(y - K @ beta) + lam * cp.norm1(beta)))
    tight_solve(prob, 1e-10)
    return prob.value


def _klasso_objective(K, y, lam, beta, beta0):
    r = y - K @ beta - beta0
    return 0.5 * float(r @ r) + lam * float(np.abs(beta).sum())


def _klasso_relgap(problem, sol, t):
    pair = problem.restore(KLassoPrimal(sol.beta, sol.beta0), KLassoDual(sol.u), t)
    return problem.bound.gap(*pair, t) / (1.0 + abs(problem.dual_objective(pair[1], t)))


def _robust_relgap(problem, sol, t):
    pair = problem.restore(RobustL1Primal(sol.beta), RobustL1Dual(sol.u), t)
    return problem.bound.gap(*pair, t) / (1.0 + abs(problem.dual_objective(pair[1], t)))


# ---------------------------------------------------------------------------- kLASSO
@pytest.mark.parametrize("t", BANDWIDTHS)
def test_klasso_matches_cvxpy_and_certifies(data, t):
    X, y = data
    problem = approxpath.get_problem("klasso")(X, y, lam=LAM)
    K = problem.gram(t)
    sol = solve_klasso(K, y, LAM)
    assert sol.converged and sol.violation <= 1e-12
    value, u_ref = _klasso_cvxpy(K, y, LAM)
    ours = _klasso_objective(K, y, LAM, sol.beta, sol.beta0)
    assert ours <= value + 1e-8 * (1.0 + abs(value))  # at least as good as the tight IPM
    assert ours == pytest.approx(value, rel=1e-6)
    # the dual is unique (strongly concave): the residuals agree
    np.testing.assert_allclose(sol.u, u_ref, atol=1e-4 * np.abs(u_ref).max())
    assert abs(sol.u.sum()) <= 1e-9 * np.abs(sol.u).sum()
    assert _klasso_relgap(problem, sol, t) <= EXACT


def test_klasso_warm_equals_cold_along_a_path(data):
    X, y = data
    problem = approxpath.get_problem("klasso")(X, y, lam=LAM)
    warm = None
    for t in np.geomspace(0.02, 30.0, 12):
        K = problem.gram(t)
        cold = solve_klasso(K, y, LAM)
        hot = solve_klasso(K, y, LAM, warm=warm)
        assert hot.converged and cold.converged
        np.testing.assert_allclose(hot.u, cold.u, atol=1e-9 * (1.0 + np.abs(cold.u).max()))
        np.testing.assert_array_equal(hot.active, cold.active)
        assert _klasso_relgap(problem, hot, t) <= EXACT
        warm = hot


def test_klasso_warm_start_from_a_far_point_and_an_array(data):
    """A start far from the optimum (the solution at another bandwidth, or arbitrary
    coefficients given as an array) still ends at the optimum."""
    X, y = data
    problem = approxpath.get_problem("klasso")(X, y, lam=LAM)
    K = problem.gram(1.0)
    cold = solve_klasso(K, y, LAM)
    far = solve_klasso(problem.gram(20.0), y, LAM)
    rng = np.random.default_rng(1)
    for warm in (far, far.beta, rng.standard_normal(y.size)):
        hot = solve_klasso(K, y, LAM, warm=warm)
        assert hot.converged
        np.testing.assert_allclose(hot.u, cold.u, atol=1e-9 * (1.0 + np.abs(cold.u).max()))


def test_klasso_duplicate_points_rank_deficient(data):
    """Repeated inputs make columns of K identical ([1, K_A] rank deficient if both enter)."""
    X, y = data
    X2, y2 = np.vstack([X, X[:5]]), np.concatenate([y, y[:5] + 0.3])
    problem = approxpath.get_problem("klasso")(X2, y2, lam=LAM)
    for t in (0.05, 2.0):
        K = problem.gram(t)
        sol = solve_klasso(K, y2, LAM, warm=np.where(np.arange(y2.size) % 7 == 0, 1.0, 0.0))
        value, _ = _klasso_cvxpy(K, y2, LAM)
        assert _klasso_objective(K, y2, LAM, sol.beta, sol.beta0) == pytest.approx(value, rel=1e-6)
        assert _klasso_relgap(problem, sol, t) <= EXACT


@pytest.mark.parametrize("y_kind", ["zero", "constant"])
def test_klasso_constant_targets_zero_solution(data, y_kind):
    X, _ = data
    y = np.zeros(len(X)) if y_kind == "zero" else np.full(len(X), 2.5)
    K = approxpath.get_problem("klasso")(X, y + 1e-3 * np.arange(len(X)), lam=LAM).gram(1.0)
    sol = solve_klasso(K, y, LAM)
    np.testing.assert_array_equal(sol.beta, 0.0)
    assert sol.beta0 == pytest.approx(y.mean(), abs=1e-14)
    np.testing.assert_allclose(sol.u, 0.0, atol=1e-14)
    assert sol.converged and sol.active.size == 0


def test_klasso_above_lambda_max_closed_form(data):
    X, y = data
    problem = approxpath.get_problem("klasso")(X, y, lam=LAM)
    t = 0.7
    lam_max = problem.lam_max(t)
    for lam in (lam_max * (1 + 1e-9), 3 * lam_max):
        sol = solve_klasso(problem.gram(t), y, lam)
        np.testing.assert_array_equal(sol.beta, 0.0)
        assert sol.beta0 == pytest.approx(y.mean(), rel=1e-14)
    below = solve_klasso(problem.gram(t), y, 0.9 * lam_max)
    assert below.active.size >= 1  # just below lam_max something enters


def test_klasso_two_points():
    X, y = np.array([[0.0], [1.0]]), np.array([1.0, -2.0])
    problem = approxpath.get_problem("klasso")(X, y, lam=LAM)
    for t in (0.1, 1.0, 10.0):
        K = problem.gram(t)
        sol = solve_klasso(K, y, LAM)
        value, _ = _klasso_cvxpy(K, y, LAM)
        assert _klasso_objective(K, y, LAM, sol.beta, sol.beta0) == pytest.approx(value, rel=1e-7, abs=1e-10)
        assert _klasso_relgap(problem, sol, t) <= EXACT


@pytest.mark.parametrize("args,match", [
    ((np.ones((3, 2)), np.ones(3), 0.1), "square K"),
    ((np.eye(3), np.ones(4), 0.1), "square K"),
    ((np.eye(3), np.ones(3), 0.0), "lam"),
    ((np.eye(3), np.array([1.0, np.nan, 0.0]), 0.1), "finite"),
])
def test_klasso_bad_input(args, match):
    with pytest.raises(InputError, match=match):
        solve_klasso(*args)
    with pytest.raises(InputError, match=match):
        solve_robust_l1(*args)


def test_klasso_bad_warm():
    with pytest.raises(InputError, match="warm"):
        solve_klasso(np.eye(3), np.ones(3), 0.1, warm=np.ones(4))


# ---------------------------------------------------------------------------- robust l1 LP
def _lp_solvers():
    return [name for name in LP_SOLVERS
            if name != "highspy" or importlib.util.find_spec("highspy")]


@pytest.mark.parametrize("solver", _lp_solvers())
@pytest.mark.parametrize("t", BANDWIDTHS)
def test_robust_l1_matches_cvxpy_and_certifies(data, t, solver):
    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    K = problem.gram(t)
    sol = solve_robust_l1(K, y, LAM, solver=solver)
    assert np.max(np.abs(sol.u)) <= 1.0
    value = _robust_cvxpy(K, y, LAM)
    primal = float(np.abs(y - K @ sol.beta).sum() + LAM * np.abs(sol.beta).sum())
    assert primal == pytest.approx(value, rel=1e-7)
    assert float(y @ sol.u) == pytest.approx(value, rel=1e-7)  # strong duality of the LP
    assert _robust_relgap(problem, sol, t) <= EXACT


@pytest.mark.parametrize("solver", _lp_solvers())
@pytest.mark.parametrize("lam", [2e-3, 1e-2])
def test_robust_l1_at_a_small_lambda_meets_the_mark(solver, lam):
    """Between lam = 2^-10 and ~0.03 HiGHS's vertex on the unscaled rows certified ~1e-6 of the
    optimum at most bandwidths (sinc, n = 100), and every such solve went on to Clarabel; the rows
    scaled to lam in [0.5, 1) meet it with room (~1e-9; unscaled 1e-7 - 2e-6 here), and the
    optimal value agrees with a tight CVXPY solve."""
    X, y = make_sinc(n=100, noise=0.1, outliers=0.1, seed=0)
    problem = approxpath.get_problem("robust_l1")(X, y, lam=lam)
    for t in (0.5, 2.0, 8.0):
        K = problem.gram(t)
        sol = solve_robust_l1(K, y, lam, solver=solver)
        assert _robust_relgap(problem, sol, t) <= EXACT / 10, t
        primal = float(np.abs(y - K @ sol.beta).sum() + lam * np.abs(sol.beta).sum())
        assert primal == pytest.approx(_robust_cvxpy(K, y, lam), rel=1e-7)


def test_robust_l1_warm_basis_equals_cold(data):
    pytest.importorskip("highspy")
    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    warm = None
    for t in np.geomspace(0.02, 30.0, 10):
        K = problem.gram(t)
        cold = solve_robust_l1(K, y, LAM, solver="highspy")
        hot = solve_robust_l1(K, y, LAM, solver="highspy", warm=warm)
        assert hot.basis is not None
        assert float(y @ hot.u) == pytest.approx(float(y @ cold.u), rel=1e-9)
        assert _robust_relgap(problem, hot, t) <= EXACT
        warm = hot



def test_robust_l1_pool_reuses_one_highs_bit_for_bit(data):
    """Solves through a HighsPool (one instance, reused) give what a new instance per solve
    gives, bit for bit, along a warm chain; the pool pickles empty (a worker keeps its own)."""
    pytest.importorskip("highspy")
    import pickle

    from approxpath.solvers.lp import HighsPool

    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    pool, runs = HighsPool(), []
    for given in (None, pool):
        warm, out = None, []
        for t in (0.3, 0.35, 0.5, 2.0, 0.4):
            sol = solve_robust_l1(problem.gram(t), y, LAM, solver="highspy", warm=warm, pool=given)
            out.append((sol.beta, sol.u, sol.basis.col_status, sol.basis.row_status, sol.iterations))
            warm = sol.basis
            assert len(pool) == (given is not None)  # the one instance, given back after each solve
        runs.append(out)
    for a, b in zip(*runs):
        for x, z in zip(a, b):
            np.testing.assert_array_equal(x, z)
    assert len(pickle.loads(pickle.dumps(pool))) == 0 and len(pool) == 1
    pool.clear()
    assert len(pool) == 0


def test_robust_l1_problem_keeps_its_highs_between_solves_and_releases_it(data):
    """robust_l1's exact solves keep one HiGHS instance between them; the problem still pickles
    (worker processes), without it, and ``release`` frees it."""
    pytest.importorskip("highspy")
    import pickle

    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    first = problem.candidate("highs", 0.5)
    problem.candidate("highs", 0.6, warm=first)
    assert len(problem._highs) == 1
    assert len(pickle.loads(pickle.dumps(problem))._highs) == 0
    problem.release()
    assert len(problem._highs) == 0


def test_robust_l1_warm_basis_of_another_count_is_passed_as_alien(data):
    """A warm basis without n basic variables (not one HiGHS gave) is checked and repaired by
    HiGHS: the optimum of the cold solve."""
    pytest.importorskip("highspy")
    from approxpath.solvers.lp import LPBasis

    X, y = data
    K = approxpath.get_problem("robust_l1")(X, y, lam=LAM).gram(0.7)
    cold = solve_robust_l1(K, y, LAM, solver="highspy")
    odd = LPBasis(np.ones(y.size, dtype=np.int8), np.ones(y.size, dtype=np.int8))  # 2n basic
    hot = solve_robust_l1(K, y, LAM, solver="highspy", warm=odd)
    assert float(y @ hot.u) == pytest.approx(float(y @ cold.u), rel=1e-9)

def _lp_matrix(lp, shape):
    """The constraint matrix HiGHS holds for ``lp`` (its column-wise arrays), dense."""
    a = lp.a_matrix_
    return sp.csc_matrix((np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)), shape=shape).toarray()


def test_robust_l1_lp_through_a_highslp_is_the_same_lp(data):
    """A highspy without the numpy overload of passModel gets the LP through a HighsLp: the
    same model (matrix, bounds, costs) and the same solution, bit for bit."""
    highspy = pytest.importorskip("highspy")
    from approxpath.solvers.lp import _pass_lp

    class _OldHighs:  # passModel(HighsLp) only
        def __init__(self, h):
            self.h = h

        def passModel(self, *args):
            if len(args) != 1:
                raise TypeError("incompatible function arguments")
            return self.h.passModel(*args)

    X, y = data
    K = approxpath.get_problem("robust_l1")(X, y, lam=LAM).gram(0.7)
    solved = []
    for wrap in (lambda h: h, _OldHighs):
        h = highspy.Highs()
        h.silent()
        _pass_lp(highspy, wrap(h), K, y, LAM)
        lp = h.getLp()
        h.run()
        solved.append((_lp_matrix(lp, K.shape), np.asarray(lp.row_lower_), np.asarray(lp.row_upper_), np.asarray(lp.col_lower_),
                       np.asarray(lp.col_upper_), np.asarray(lp.col_cost_),
                       np.asarray(h.getSolution().col_value), np.asarray(h.getSolution().row_dual)))
    # K itself, less the entries HiGHS drops as zeros (|a| <= its small_matrix_value, 1e-9)
    np.testing.assert_array_equal(solved[0][0], np.where(np.abs(K) > 1e-9, K, 0.0))
    np.testing.assert_array_equal(solved[0][5], -y)
    assert np.all(solved[0][1] == -LAM) and np.all(solved[0][2] == LAM)
    assert np.all(solved[0][3] == -1.0) and np.all(solved[0][4] == 1.0)
    for a, b in zip(*solved):
        np.testing.assert_array_equal(a, b)


def test_robust_l1_lp_with_entries_highs_drops_is_passed_once(data):
    """A kernel with entries below HiGHS's zero (1e-9) makes passModel warn, not fail: the LP
    goes to HiGHS once, from the arrays, and the model is K less those entries."""
    highspy = pytest.importorskip("highspy")
    from approxpath.solvers.lp import _pass_lp

    class _Counting:
        def __init__(self, h):
            self.h, self.calls = h, []

        def passModel(self, *args):
            self.calls.append(len(args))
            return self.h.passModel(*args)

    X, y = data
    K = approxpath.get_problem("robust_l1")(X, y, lam=LAM).gram(200.0)
    assert np.any(np.abs(K) <= 1e-9) and np.any(np.abs(K) > 1e-9)
    h = highspy.Highs()
    h.silent()
    counting = _Counting(h)
    _pass_lp(highspy, counting, K, y, LAM)
    assert len(counting.calls) == 1 and counting.calls[0] > 1  # one call, the array overload
    np.testing.assert_array_equal(_lp_matrix(h.getLp(), K.shape), np.where(np.abs(K) > 1e-9, K, 0.0))


def test_robust_l1_zero_targets_and_above_lambda_max(data):
    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    t = 0.7
    K = problem.gram(t)
    for solver in _lp_solvers():
        zero = solve_robust_l1(K, np.zeros_like(y), LAM, solver=solver)
        np.testing.assert_allclose(zero.beta, 0.0, atol=1e-12)
        # lam_max = ||K sign(y)||_inf: beta = 0 is optimal, the objective is ||y||_1
        big = solve_robust_l1(K, y, 1.5 * problem.lam_max(t), solver=solver)
        np.testing.assert_allclose(big.beta, 0.0, atol=1e-12)
        assert float(y @ big.u) == pytest.approx(np.abs(y).sum(), rel=1e-12)


def test_robust_l1_two_points():
    X, y = np.array([[0.0], [1.0]]), np.array([1.0, -2.0])
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    for t in (0.1, 1.0, 10.0):
        K = problem.gram(t)
        sol = solve_robust_l1(K, y, LAM)
        assert float(y @ sol.u) == pytest.approx(_robust_cvxpy(K, y, LAM), rel=1e-7)
        assert _robust_relgap(problem, sol, t) <= EXACT


def test_robust_l1_bad_solver_and_warm():
    with pytest.raises(InputError, match="unknown LP solver"):
        solve_robust_l1(np.eye(3), np.ones(3), 0.1, solver="glpk")
    with pytest.raises(InputError, match="warm"):
        solve_robust_l1(np.eye(3), np.ones(3), 0.1, warm="basis")


@pytest.mark.parametrize("t", (0.05, 0.3, 2.0, 25.0))
def test_robust_l1_basis_pair_carries_the_optimum(data, t):
    """The optimal basis carried to a nearby bandwidth (basis_primal, basis_dual): the solve's
    own point at its bandwidth, and, while the basis stays optimal (0.001 % away), the optimum
    there: a fresh LP solve's value and a certified gap at the exact-solve level."""
    pytest.importorskip("highspy")
    from approxpath.solvers.lp import basis_dual, basis_primal

    X, y = data
    problem = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    sol = solve_robust_l1(problem.gram(t), y, LAM, solver="highspy")
    K = problem.gram(t)
    scale = 1.0 + np.abs(sol.beta).max()
    np.testing.assert_allclose(basis_primal(K, y, sol.basis), sol.beta, atol=1e-6 * scale)
    # HiGHS stops at primal/dual feasibility 1e-7 (its defaults); the basis's own vertex is
    # solved exactly, so the two agree to about that, times the basis matrix's conditioning
    np.testing.assert_allclose(basis_dual(K, LAM, sol.basis, sol.u), sol.u, atol=1e-6)
    tau = t * (1 + 1e-5)
    K = problem.gram(tau)
    beta, u = basis_primal(K, y, sol.basis), basis_dual(K, LAM, sol.basis, sol.u)
    fresh = solve_robust_l1(K, y, LAM, solver="highspy")
    assert float(y @ u) == pytest.approx(float(y @ fresh.u), rel=1e-9)
    pair = problem.restore(RobustL1Primal(beta), RobustL1Dual(u), tau)
    assert problem.bound.gap(*pair, tau) <= EXACT * (1.0 + abs(problem.dual_objective(pair[1], tau)))
    # the anchor's own pair, restored at tau, is far worse: the carried basis is what helps
    anchor = problem.restore(RobustL1Primal(sol.beta), RobustL1Dual(sol.u), tau)
    assert problem.bound.gap(*anchor, tau) > 10 * problem.bound.gap(*pair, tau)
