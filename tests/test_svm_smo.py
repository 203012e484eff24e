"""The SVM's warm-started SMO (problems/kernel_svm/smo.py): its optimum against a tight CVXPY
solve of the dual, from a nearby solve and from zero, and its place first in the backends."""

import math

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification
from approxpath.problems.kernel_svm import solves
from approxpath.problems.kernel_svm.smo import warm_smo
from approxpath.solvers import EXACT_GAP
from approxpath.solvers.conic import solve_cvxpy

from device_helpers import needs_strict_devices, strict

KernelSVM = approxpath.get_problem("kernel_svm")


@pytest.fixture(scope="module")
def problem():
    X, y = make_classification(n=120, d=3, seed=7)
    return KernelSVM(X, y, c=0.5)


def _dual_value(p, alpha, t):
    K = p.gram(t)
    w = p.y * alpha
    return float(alpha.sum() - 0.5 * w @ K @ w)


def _assert_optimal_over_all(p, alpha, t, tol):
    """``alpha``'s KKT violation, from a gradient computed anew, is below ``tol`` (twice, for
    rounding), and its dual value is a tight CVXPY solve's."""
    g = -p.y * (p.y * (p.gram(t) @ (p.y * alpha)) - 1.0)
    up = np.where(p.y > 0, alpha < p.c, alpha > 0)
    low = np.where(p.y > 0, alpha > 0, alpha < p.c)
    assert g[up].max() - g[low].min() < 2 * tol
    decl = p.cvxpy_dual(t)
    solve_cvxpy(decl.problem)
    assert _dual_value(p, alpha, t) == pytest.approx(decl.problem.value, abs=1e-7)


@pytest.mark.parametrize("start", ["nearby", "zero", "cold"])
def test_warm_smo_reaches_the_tight_cvxpy_optimum(problem, start):
    from approxpath.problems.kernel_svm.smo import cold_start

    p, t = problem, 1.3
    alpha0 = {"nearby": lambda: p.solve(1.0)[1].alpha, "zero": lambda: np.zeros(p.n),
              "cold": lambda: cold_start(p.gram(t), p.y, p.c)}[start]()
    alpha, b, iterations = warm_smo(p.gram(t), p.y, p.c, alpha0, 1e-9)
    assert alpha.min() >= 0 and alpha.max() <= p.c and abs(math.fsum(p.y * alpha)) < 1e-12
    decl = p.cvxpy_dual(t)
    solve_cvxpy(decl.problem)
    assert _dual_value(p, alpha, t) == pytest.approx(decl.problem.value, abs=1e-7)
    assert 0 < iterations < 2 * p.n


def test_warm_smo_with_a_diagonal_other_than_one_reaches_a_tight_qp_optimum(problem):
    """A kernel whose diagonal is not all 1 (a precomputed distance with a nonzero diagonal) takes
    the curvature's general form: its optimum against a tight CVXPY solve of that dual."""
    import cvxpy as cp

    p, rng = problem, np.random.default_rng(3)
    K = p.gram(1.3) + np.diag(rng.uniform(0.0, 0.3, p.n))
    alpha, _, _ = warm_smo(K, p.y, p.c, np.zeros(p.n), 1e-9)
    a = cp.Variable(p.n)
    L = np.linalg.cholesky(K + 1e-12 * np.eye(p.n)) * p.y[:, None]  # (y a)' K (y a) = ||L' a||^2
    qp = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)), [a >= 0, a <= p.c, p.y @ a == 0])
    solve_cvxpy(qp)
    w = p.y * alpha
    assert alpha.min() >= 0 and alpha.max() <= p.c and abs(math.fsum(w)) < 1e-12
    assert float(alpha.sum() - 0.5 * w @ K @ w) == pytest.approx(qp.value, abs=1e-6)


def test_a_solve_starts_from_the_nearest_solve_or_from_the_cold_start(problem, monkeypatch):
    """A path's first solve: SMO from :func:`cold_start` (no solve nearby); the next from it."""
    p = problem
    monkeypatch.setattr(solves, "SMO_MIN_N", 100)  # (n = 120 here)
    used = []
    real = type(p).candidate

    def spy(self, name, t, warm=None):
        used.append((name, warm is not None))
        return real(self, name, t, warm)

    monkeypatch.setattr(type(p), "candidate", spy)
    cold = p.solve(1.0)
    assert used == [("smo", False)]  # no solve nearby: SMO from the cold start, accepted
    assert p.bound.gap(*cold, 1.0) <= EXACT_GAP * (1 + abs(p.dual_objective(cold[1], 1.0)))
    used.clear()
    pair = p.solve(1.2, warm=cold)
    assert used == [("smo", True)]
    assert p.bound.gap(*pair, 1.2) <= EXACT_GAP * (1 + abs(p.dual_objective(pair[1], 1.2)))


def test_small_problems_solve_by_libsvm_alone(problem, monkeypatch):
    """Up to SMO_MIN_N samples SMO declines even with a nearby solve (libSVM is faster there): a
    SolverError, so from the nearby solve and then from scratch (as any refusal of a warm start)."""
    p = problem
    used = []
    real = type(p).candidate
    monkeypatch.setattr(type(p), "candidate", lambda self, name, t, warm=None: (used.append(name), real(self, name, t, warm))[1])
    p.solve(1.2, warm=p.solve(1.0))
    assert used == ["smo", "libsvm", "smo", "smo", "libsvm"]


def test_libsvm_single_precision_floor_is_polished_by_float64_smo(monkeypatch):
    """At large C libSVM's optimum (its kernel cache is single precision) certifies a gap above
    the acceptance mark whatever its tolerance; the tight try takes it on by float64 SMO, which is
    accepted before Clarabel, and its dual value agrees with a tight CVXPY solve."""
    from approxpath.solvers import current_settings

    X, y = make_classification(n=100, d=3, seed=0)
    p, t = KernelSVM(X, y, c=32.0), 1.0
    calls = []
    real = type(p).candidate

    def spy(self, name, t, warm=None):
        calls.append((name, current_settings().tight))
        return real(self, name, t, warm)

    monkeypatch.setattr(type(p), "candidate", spy)
    loose = p.restore(*real(p, "libsvm", t), t)
    mark = EXACT_GAP * (1 + abs(p.dual_objective(loose[1], t)))
    assert p.bound.gap(*loose, t) > mark  # the floor this is about (3.7e-7 relative here)
    pair = p.solve(t, solver=("libsvm", "clarabel"))
    assert calls == [("libsvm", False), ("libsvm", True)]
    assert p.bound.gap(*pair, t) <= mark
    decl = p.cvxpy_dual(t)
    solve_cvxpy(decl.problem)
    assert _dual_value(p, pair[1].alpha, t) == pytest.approx(decl.problem.value, rel=1e-8)


def test_shrinking_iterates_on_few_samples_and_is_optimal_over_all(monkeypatch):
    """The iterations run on a fraction of the samples, and the result is optimal over all of
    them: its KKT violation, from a gradient computed anew, is below the tolerance, and its
    value is a tight CVXPY solve's.  (From t = 0.05 to 0.5 at C = 1 samples left out at first
    become violators later: without bringing their gradient up to date the violation ends at
    5e-3.)"""
    from approxpath.problems.kernel_svm import smo

    X, y = make_classification(n=400, d=5, seed=2)
    p = KernelSVM(X, y, c=1.0)
    sizes, plain = [], smo._iterate

    def spy(K, A, *args):
        sizes.append(A.size)
        return plain(K, A, *args)

    monkeypatch.setattr(smo, "_iterate", spy)
    t, tol = 0.5, 1e-9
    alpha, _, iterations = warm_smo(p.gram(t), p.y, p.c, p.solve(0.05)[1].alpha, tol)
    assert len(sizes) > 2 and min(sizes) < p.n / 4 and iterations > smo._ROUND, (sizes, iterations)
    _assert_optimal_over_all(p, alpha, t, tol)


@needs_strict_devices
@pytest.mark.parametrize("start", ["nearby", "zero"])
def test_smo_on_a_devices_kernel_entries_reaches_the_tight_cvxpy_optimum(start, monkeypatch):
    """SMO reading a device's kernel entries (array-api-strict on a device of its own) instead of
    a kernel in memory: kernel blocks for small iterated sets and single rows for larger ones
    (the size between them lowered to exercise both), the first gradient and the update of the
    samples left out as device products.  Its optimum is a tight CVXPY solve's, and its KKT
    violation, from a gradient computed anew on the host, is below the tolerance."""
    from approxpath.compute.device import DeviceKernels
    from approxpath.problems.kernel_svm import smo

    X, y = make_classification(n=400, d=5, seed=2)
    p, t, tol = KernelSVM(X, y, c=1.0), 0.5, 1e-9
    monkeypatch.setattr(smo, "_BLOCK_SIDE", 60)
    monkeypatch.setattr(smo, "_LIKELY", 4)  # (few rows read ahead: single rows are read too)
    device = DeviceKernels(p.bound.kernels, strict(), p.X)
    reads = []
    real = DeviceKernels.kernel_rows
    monkeypatch.setattr(DeviceKernels, "kernel_rows", lambda self, x, rows, cols=None: (
        reads.append(cols is None), real(self, x, rows, cols))[1])
    alpha0 = p.solve(0.05)[1].alpha if start == "nearby" else np.zeros(p.n)
    alpha, _, iterations = warm_smo(smo.ComputedKernel(device, t), p.y, p.c, alpha0, tol)
    assert True in reads and False in reads  # rows and blocks both read
    assert alpha.min() >= 0 and alpha.max() <= p.c and abs(math.fsum(p.y * alpha)) < 1e-12
    _assert_optimal_over_all(p, alpha, t, tol)
    assert 0 < iterations < 2 * p.n


@needs_strict_devices
def test_rows_read_ahead_give_the_iterations_of_rows_read_one_by_one(monkeypatch):
    """The rows of a round's likeliest pairs (the largest violators on each side) read in one
    device call at its start give the same iterations as every row read in a call of its own --
    the same alpha, bias and iteration count, bit for bit -- in far fewer calls (each a round
    trip to the device)."""
    from approxpath.compute.device import DeviceKernels
    from approxpath.problems.kernel_svm import smo

    X, y = make_classification(n=400, d=5, seed=2)
    p, t, tol = KernelSVM(X, y, c=1.0), 0.5, 1e-9
    monkeypatch.setattr(smo, "_BLOCK_SIDE", 60)  # (single rows from 61 samples iterated on)
    device = DeviceKernels(p.bound.kernels, strict(), p.X)
    calls, real = [], DeviceKernels.kernel_rows
    monkeypatch.setattr(DeviceKernels, "kernel_rows", lambda self, *args: (calls.append(1), real(self, *args))[1])
    alpha0 = p.solve(0.05)[1].alpha
    runs = []
    for likely in (0, 16):
        monkeypatch.setattr(smo, "_LIKELY", likely)
        calls.clear()
        runs.append((warm_smo(smo.ComputedKernel(device, t), p.y, p.c, alpha0, tol), len(calls)))
    ((a0, b0, it0), n0), ((a1, b1, it1), n1) = runs
    np.testing.assert_array_equal(a1, a0)
    assert b1 == b0 and it1 == it0 > smo._ROUND
    assert 2 * n1 < n0, (n0, n1)  # (158 calls against 50 when written)
    _assert_optimal_over_all(p, a1, t, tol)


@pytest.mark.parametrize("C, t, kept", [(0.1, 2.0**-10, True), (0.1, 1.0, True), (10.0, 1.0, False)])
def test_the_cold_start_is_feasible_and_kept_only_above_zeros_objective(C, t, kept):
    """The start without a nearby solve: the smaller class at C, the larger at the same total,
    kept where its dual objective (computed here from the kernel) is positive; SMO from it
    reaches the optimum SMO reaches from zero, in fewer iterations at small C."""
    from approxpath.problems.kernel_svm.smo import cold_start

    X, y = make_classification(n=400, d=5, seed=4)
    p = KernelSVM(X, y, c=C)
    K = p.gram(t)
    a = cold_start(K, p.y, C)
    w = p.y * a
    assert a.min() >= 0 and a.max() <= C and abs(math.fsum(w)) <= 1e-12 * C * p.n
    assert (a.max() == C) == kept and (a.sum() - 0.5 * w @ K @ w > 0) == kept
    if kept:
        small = (p.y > 0) if (p.y > 0).sum() <= (p.y < 0).sum() else (p.y < 0)
        assert np.all(a[small] == C)
        np.testing.assert_allclose(a[~small], C * small.sum() / (~small).sum(), rtol=1e-15)
        cold, _, it_cold = warm_smo(K, p.y, C, a, 1e-9)
        zero, _, it_zero = warm_smo(K, p.y, C, np.zeros(p.n), 1e-9)
        assert it_cold < it_zero
        assert _dual_value(p, cold, t) == pytest.approx(_dual_value(p, zero, t), abs=1e-7)


def test_rows_read_ahead_are_of_samples_that_may_move():
    """The read-ahead takes each side's extremes among the samples that may move that way, and
    no others where a side has fewer than :data:`_LIKELY` of them."""
    from approxpath.problems.kernel_svm.smo import _LIKELY, _likely

    rng = np.random.default_rng(0)
    g = rng.standard_normal(500)
    up, low = np.zeros(500, bool), np.ones(500, bool)
    up[:10] = True
    got = _likely(g, up, low)
    bottom = np.argsort(g)[:_LIKELY]
    np.testing.assert_array_equal(got, np.union1d(np.arange(10), bottom))
    assert _likely(g, np.zeros(500, bool), np.zeros(500, bool)).size == 0
