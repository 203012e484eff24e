"""The conformance suite: generic checks run on every registered problem.

A problem added to ``problems/`` (or through the entry point) is tested here the moment it is
registered; its ``examples()`` provide small instances.
"""

import dataclasses

import numpy as np
import pytest

import approxpath
from approxpath.problem import scale_mid
from approxpath.registry import available_problems, get_problem


def _cases():
    cases = []
    for name in available_problems():
        for k, (problem, interval, eps) in enumerate(get_problem(name).examples()):
            cases.append(pytest.param(problem, interval, eps, id=f"{name}-{k}-{problem.parameter}"))
    return cases


CASES = _cases()
REL = 1e-6  # agreement of numpy and CVXPY objective values (CVXPY solves to ~1e-8)
# Restoration declarations are often projections whose optimal value is ~0: an interior
# point method resolves such a point only to ~sqrt(tol) ~ 1e-5, so maps agree to that.
REL_MAP = 1e-5


def _taus(interval, k=4, seed=0):
    lo, hi = interval
    rng = np.random.default_rng(seed)
    return np.exp(rng.uniform(np.log(lo), np.log(hi), k))


def _scale(problem, pair, t):
    return 1.0 + abs(problem.dual_objective(pair[1], t))


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_exact_pair_is_optimal_and_feasible(problem, interval, eps):
    for t in _taus(interval, 3):
        primal, dual = problem.solve(t)
        full = problem.primal_at(primal, t)
        scale = _scale(problem, (primal, dual), t)
        assert problem.primal_violation(full, t) <= 1e-9 * scale
        assert problem.dual_violation(dual, t) <= 1e-9 * scale
        g = problem.gap_bound(primal, dual, t)
        assert -1e-9 * scale <= g <= 1e-6 * scale


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_declarations_agree_with_numpy_objectives_and_optimum(problem, interval, eps):
    t = _taus(interval, 1, seed=1)[0]
    primal, dual = problem.solve(t)
    full = problem.primal_at(primal, t)
    # the numpy objectives equal the CVXPY objective expressions at the same point
    for decl, values, numpy_value in (
        (problem.cvxpy_primal(t), problem.primal_values(full), problem.primal_objective(full, t)),
        (problem.cvxpy_dual(t), problem.dual_values(dual), problem.dual_objective(dual, t)),
    ):
        for name, var in decl.variables.items():
            var.value = np.asarray(values[name], dtype=float).reshape(var.shape)
        assert decl.problem.objective.value == pytest.approx(numpy_value, rel=REL, abs=REL)
    # the declarations' optimum equals the exact pair's objective
    primal_decl = problem.cvxpy_primal(t)
    primal_decl.problem.solve(solver="CLARABEL")
    assert primal_decl.problem.value == pytest.approx(problem.primal_objective(full, t), rel=REL, abs=REL)


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_restorations_feasible_and_equal_to_cvxpy(problem, interval, eps):
    t0 = _taus(interval, 1, seed=2)[0]
    pair = problem.solve(t0)
    for tau in _taus(interval, 3, seed=3):
        primal, dual = problem.restore(pair[0], pair[1], tau)
        full = problem.primal_at(primal, tau)
        scale = _scale(problem, (primal, dual), tau)
        assert problem.primal_violation(full, tau) <= 1e-9 * scale
        assert problem.dual_violation(dual, tau) <= 1e-9 * scale
        # numpy maps vs their CVXPY declarations: same objective values
        cvx_dual = problem.cvxpy_restore_dual(pair[1], tau)
        assert problem.dual_objective(dual, tau) == pytest.approx(
            problem.dual_objective(cvx_dual, tau), rel=REL_MAP, abs=REL_MAP * scale)
        cvx_primal = problem.primal_at(problem.cvxpy_restore_primal(pair[0], dual, tau), tau)
        assert problem.primal_objective(full, tau) == pytest.approx(
            problem.primal_objective(cvx_primal, tau), rel=REL_MAP, abs=REL_MAP * scale)
        assert problem.gap_bound(primal, dual, tau) >= -1e-9 * scale


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_interval_bound_dominates_point_gaps(problem, interval, eps):
    if not problem.has_interval_bound:
        pytest.skip("no interval bound: pieces are sampled")
    lo, hi = interval
    t0 = _taus(interval, 1, seed=4)[0]
    pair = problem.solve(t0)
    edges = np.geomspace(max(lo, t0 / 1.5), min(hi, t0 * 1.5), 4)
    for a, b in zip(edges[:-1], edges[1:]):
        primal, dual = problem.restore(pair[0], pair[1], a, b)
        bound = problem.gap_bound(primal, dual, a, b)
        for tau in np.geomspace(a, b, 25):
            assert problem.gap(primal, dual, tau) <= bound
            full = problem.primal_at(primal, tau)
            assert problem.primal_violation(full, tau) <= 1e-12 * _scale(problem, pair, tau)
            assert problem.dual_violation(dual, tau) <= 1e-12 * _scale(problem, pair, tau)
        assert problem.dual_lower_bound(dual, a, b) <= min(problem.dual_objective(dual, tau) for tau in np.geomspace(a, b, 25))
        # the bound is tight where the piece degenerates to a point
        m = scale_mid(a, b, problem.scale)
        assert problem.gap_bound(primal, dual, m, m) == pytest.approx(problem.gap(primal, dual, m), abs=1e-9 * _scale(problem, pair, m))


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_arrays_and_options_round_trip(problem, interval, eps):
    primal, dual = problem.solve(interval[0])
    if problem.has_interval_bound:  # a piece's pair (e.g. the SVM's bias line)
        primal, dual = problem.restore(primal, dual, interval[0], scale_mid(*interval, problem.scale))
    arrays = problem.to_arrays(primal, dual)
    p2, d2 = problem.from_arrays(arrays)
    for a, b in ((primal, p2), (dual, d2)):
        for f in dataclasses.fields(a):
            if getattr(a, f.name) is not None:
                np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name))
    again = type(problem)(problem.X, problem.y, **problem.options())
    assert again.options() == problem.options()
    assert problem.certificate_errors(primal, dual, interval[0], interval[0]) == []


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_path_end_to_end_and_verify(problem, interval, eps, tmp_path):
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    assert path.pieces[0].lo == interval[0] and path.pieces[-1].hi == interval[1]
    assert all(a.hi == b.lo for a, b in zip(path.pieces[:-1], path.pieces[1:]))
    if problem.has_interval_bound:
        assert path.certified, path.summary()
    assert path.max_gap_bound <= eps
    file = path.save(tmp_path / "cert.npz")
    report = approxpath.verify(file, problem.X, problem.y)
    assert report.ok, str(report)


@pytest.mark.parametrize("problem,interval,eps", CASES)
def test_interpolation_gaps_match_the_generic_restoration(problem, interval, eps):
    """A problem's own (vectorized) weight guide agrees with restoring each combination and
    taking its gap (:meth:`Problem.interpolation_gaps`) at a point between two exact solves."""
    lo, hi = _taus(interval, 2, seed=3)
    a, b = problem.solve(min(lo, hi)), problem.solve(max(lo, hi))
    tau = scale_mid(min(lo, hi), max(lo, hi), problem.scale)
    thetas = np.arange(9) / 8.0  # dyadic: kernel_svm rounds a weight to 2**-8
    own = problem.interpolation_gaps(a, b, thetas, tau)
    generic = approxpath.Problem.interpolation_gaps(problem, a, b, thetas, tau)
    scale = _scale(problem, a, tau)
    np.testing.assert_allclose(own, generic, rtol=0, atol=1e-7 * scale)


def run_conformance(cls, tmp_path):
    """Every check above on each of ``cls.examples()``: for a problem registered after
    collection (a plug-in installed by a test)."""
    import inspect

    checks = [f for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    for k, (problem, interval, eps) in enumerate(cls.examples()):
        for check in checks:
            kw = {}
            if "tmp_path" in inspect.signature(check).parameters:
                kw["tmp_path"] = tmp_path / f"{k}-{check.__name__}"
                kw["tmp_path"].mkdir()
            try:
                check(problem, interval, eps, **kw)
            except pytest.skip.Exception:
                pass
    return len(checks)

