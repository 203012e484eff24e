import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

import approxpath
from approxpath.moving import Moving, is_moving
from approxpath import InputError
from approxpath.data import make_classification
from approxpath.numerics import ELSEWHERE_MARGINS
from approxpath.problems.kernel_svm.repair import optimal_bias
from approxpath.solvers.conic import solve_cvxpy

KernelSVM = approxpath.get_problem("kernel_svm")


def test_labels_are_mapped_with_a_warning(svm_data):
    X, y = svm_data
    with pytest.warns(UserWarning, match="-> -1"):
        p01 = KernelSVM(X, (y > 0).astype(int))
    with pytest.warns(UserWarning):
        pstr = KernelSVM(X, np.where(y > 0, "yes", "no"))
    np.testing.assert_array_equal(p01.y, y)
    np.testing.assert_array_equal(pstr.y, y)  # "no" < "yes"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelSVM(X, y)  # {-1, +1}: no warning


@pytest.mark.parametrize("labels,match", [(np.ones(40), "two classes"), (np.arange(40) % 3, "two classes")])
def test_bad_labels(svm_data, labels, match):
    with pytest.raises(InputError, match=match):
        KernelSVM(svm_data[0], labels)


@pytest.mark.parametrize("kw,match", [(dict(c=-1.0), "c must be"), (dict(c=float("nan")), "c must be"),
                                      (dict(bias="median"), "unknown bias .median."), (dict(parameter="c"), "bandwidth"),
                                      (dict(parameter="gamma"), "unknown parameter"),
                                      (dict(bandwidth=1.0), "only for parameter='c'")])
def test_bad_options(svm_data, kw, match):
    with pytest.raises(InputError, match=match):
        KernelSVM(*svm_data, **kw)


def test_exact_dual_is_exactly_feasible_and_bias_is_optimal(svm_data):
    p = KernelSVM(*svm_data, c=10.0, bias="fixed")
    primal, dual = p.solve(0.7)
    a = dual.alpha
    assert a.min() >= 0 and a.max() <= 10.0
    assert math.fsum(p.y * a) == 0.0  # exactly, not up to rounding
    free = (a > 1e-4) & (a < 10 - 1e-4)
    assert free.any()
    m = p.gram(0.7) @ primal.w
    # the solver's multiplier of y'a = 0 is the primal bias: free SVs sit on the margin
    np.testing.assert_allclose(p.y[free] * (m[free] + primal.b), 1.0, atol=1e-6)


def test_bias_rules_at_a_moved_parameter(svm_data):
    t, tau = 0.5, 2.0
    pairs = {rule: KernelSVM(*svm_data, c=1.0, bias=rule) for rule in KernelSVM.Bound.OPTIONS["bias"].choices}
    anchor = pairs["fixed"].solve(t)
    gaps = {}
    for rule, p in pairs.items():
        primal, dual = p.restore(*anchor, tau)
        gaps[rule] = p.gap(primal, dual, tau)
        if rule == "dynamic":
            a = dual.alpha
            free = (a > 1e-6) & (a < 1 - 1e-6)
            m = p.gram(tau) @ primal.w
            assert primal.b == pytest.approx(np.median((p.y - m)[free]))
        if rule == "fixed":
            assert primal.b == anchor[0].b
    assert gaps["optimal"] <= gaps["dynamic"] + 1e-12 and gaps["optimal"] <= gaps["fixed"] + 1e-12


@pytest.mark.parametrize("rule", KernelSVM.Bound.OPTIONS["bias"].choices)
def test_piece_bias_is_the_line_through_the_rule_at_both_ends(svm_data, rule):
    """On a piece the bias is the line through the rule's values at the ends (a point of the
    primal that carries only the bias, its weight the line), the point at t (what Path.primal
    returns) has the bias there, and the piece's bound covers any bias line."""
    p = KernelSVM(*svm_data, c=1.0, bias=rule)
    anchor = p.solve(0.5)
    lo, hi = 0.8, 1.3
    primal, dual = p.restore(*anchor, lo, hi)
    for x in (lo, hi):
        at_point = p.restore(*anchor, x)[0]
        full = p.primal_at(primal, x)  # the user's point: the bias at x
        assert full.b == pytest.approx(at_point.b, abs=1e-12)
        np.testing.assert_allclose(p.decision_function(primal, x, p.X), p.gram(x) @ full.w + full.b)
    assert is_moving(primal) != (rule == "fixed")
    # the bound covers a moving bias, the rule's line and any other: dense point gaps stay below it
    w = p.y * dual.alpha
    for b_lo, b_hi in ((0.0, 0.0), (0.3, -0.4), (-1.0, 1.0), (2.0, -1.0)):
        moved = Moving((type(anchor[0])(w=w, b=0.0), type(anchor[0])(w=np.zeros_like(w), b=1.0)),
                       [[1.0, 1.0], [b_lo, b_hi]], (lo, hi))
        assert p.bound.check(moved, dual, lo, hi) == []
        bound = p.bound.gap(moved, dual, lo, hi)
        assert max(p.gap(moved, dual, x) for x in np.linspace(lo, hi, 101)) <= bound


def test_optimal_bias_matches_brute_force():
    rng = np.random.default_rng(0)
    grid = np.linspace(-5, 5, 20001)
    for k in range(40):
        y = np.where(rng.random(15) < 0.5, -1.0, 1.0)
        y[:2] = (-1.0, 1.0)
        m = rng.standard_normal(15) if k % 2 else rng.integers(-2, 3, 15).astype(float)  # ties too
        b = optimal_bias(m, y)
        f = lambda bb: np.maximum(0, 1 - y * (m + bb)).sum()  # noqa: E731
        assert f(b) <= min(f(g) for g in grid) + 1e-9
    M = rng.standard_normal((15, 6))  # one minimizer per column
    np.testing.assert_array_equal(optimal_bias(M, y), [optimal_bias(M[:, j], y) for j in range(6)])


def test_decision_function(svm_data):
    p = KernelSVM(*svm_data, c=1.0)
    primal, dual = p.solve(1.0)
    np.testing.assert_allclose(p.decision_function(primal, 1.0, p.X), p.gram(1.0) @ primal.w + primal.b)


def test_c_path_restores_dual_into_the_smallest_box(svm_data):
    p = KernelSVM(*svm_data, c=1.0, bandwidth=1.0, parameter="c")
    pair = p.solve(2.0)
    primal, dual = p.restore(*pair, 0.3, 0.6)
    assert dual.alpha.max() <= 0.3 and math.fsum(p.y * dual.alpha) == 0.0
    assert p.bound.errors(primal, dual, 0.3, 0.6) == []


@pytest.mark.parametrize("kw,interval", [(dict(c=1.0, bias="dynamic"), (2.0**-3, 2.0**4)),
                                         (dict(c=1.0, bandwidth=2.0, parameter="c"), (0.01, 10.0))])
def test_path_against_pointwise_cvxpy(svm_data, kw, interval):
    """At 30 random parameter values the path's primal is feasible and within eps of a tight
    CVXPY optimum computed independently (from the dual declaration: the primal one in w is
    ill-conditioned when K_t is nearly singular)."""
    p = KernelSVM(*svm_data, **kw)
    eps = 0.25
    path = approxpath.approximate_path(p, eps=eps, interval=interval)
    assert path.certified
    rng = np.random.default_rng(1)
    lo, hi = interval
    for t in np.exp(rng.uniform(np.log(lo), np.log(hi), 30)):
        decl = p.cvxpy_dual(t)
        solve_cvxpy(decl.problem)
        point = path.primal(t)
        assert p.primal_violation(point, t) <= 1e-9
        assert p.dual_violation(path.dual(t), t) <= 1e-12
        assert p.primal_objective(point, t) - decl.problem.value <= eps + 1e-7


def test_dual_from_primal_recovers_alpha(svm_data):
    p = KernelSVM(*svm_data, c=1.0)
    primal, dual = p.solve(1.0)
    again = p._restore_dual(p.dual_from_primal(primal, 1.0), 1.0)
    np.testing.assert_array_equal(again.alpha, dual.alpha)


def test_a_mix_bound_stays_above_the_verifiers_recomputation():
    """The driver bounds a mix of two solves from its parents' cached class sums; a verifier
    recomputes from the stored alpha, rounded differently.  The mix's bound must never be
    the lower one (found by the stress benchmark: a certificate failing verification)."""
    X, y = make_classification(n=60, d=3, seed=1)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    a, b = 0.35, 0.47
    pa, pb = p.solve(a), p.solve(b)
    checked = 0
    for theta in np.linspace(0.05, 0.95, 7):
        for lo, hi in ((0.36, 0.37), (0.40, 0.41), (0.44, 0.452), (0.40, 0.40)):
            primal, dual = p.restore(*p.interpolate(pa, pb, theta), lo, hi)
            assert dual.mix is not None
            plain = replace(dual, alpha=dual.alpha.copy(), mix=None)  # what a verifier rebuilds
            assert p.bound.gap(primal, dual, lo, hi) >= p.bound.gap(primal, plain, lo, hi)
            checked += 1
    assert checked == 28


def test_the_rounding_part_of_a_gap_is_what_separates_it_from_the_objectives():
    """``gap - rounding`` at a point is the primal minus the dual objective, computed here from
    the kernel directly; the rounding part is positive and, from a device's products,
    ELSEWHERE_MARGINS margins instead of one."""
    X, y = make_classification(n=200, d=3, seed=5)
    problem = KernelSVM(X, y, c=2.0)
    t = 0.7
    primal, dual = problem.solve(t)
    K = np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    w = y * dual.alpha
    Kw = K @ w
    xi = np.maximum(0.0, 1.0 - y * (K @ primal.w + primal.b))
    difference = (0.5 * w @ Kw + 2.0 * xi.sum()) - (dual.alpha.sum() - 0.5 * w @ Kw)
    bound = problem.bound
    margin = bound.rounding(primal, dual, t)
    assert 0.0 < margin < 1e-6
    assert bound.gap(primal, dual, t) - margin == pytest.approx(difference, abs=1e-9)

    base = bound.kernels

    class _Elsewhere:  # products rounded elsewhere (a device), here the same numbers
        rounded_elsewhere = True

        def __getattr__(self, name):
            return getattr(base, name)

    with bound.kernels_from(_Elsewhere()):
        assert bound.rounding(primal, dual, t) == pytest.approx(ELSEWHERE_MARGINS * margin, rel=1e-12)


def test_an_exact_solve_is_judged_without_the_rounding_allowance(monkeypatch):
    """Where the bound's rounding allowance alone exceeds every mark (the SVM's at n = 100,000),
    the first backend's pair is accepted by its gap less the allowance, not passed on to slower
    backends (libSVM from zero, a dense QP) that cannot reduce it."""
    from approxpath.problems.kernel_svm.bound import SVMBound

    X, y = make_classification(n=120, d=3, seed=5)
    problem = KernelSVM(X, y, c=0.5)
    monkeypatch.setattr(SVMBound, "rounding_margin", lambda self, magnitude, dual: 1.0)
    tried, candidate = [], problem.candidate
    monkeypatch.setattr(problem, "candidate", lambda name, *a: tried.append(name) or candidate(name, *a))
    primal, dual = problem.solve(1.0, enough=lambda pair: 1e-4)
    assert tried == ["smo", "libsvm"]  # SMO declines n <= 1000; libSVM's pair is accepted
    gap = problem.bound.gap(primal, dual, 1.0)
    assert 1.0 < gap < 1.0 + 1e-4


@pytest.mark.parametrize("parameter", ["bandwidth", "c"])
def test_from_a_large_c_solves_after_one_that_reached_the_interior_point_try_it_first(monkeypatch, parameter):
    """libSVM's single-precision kernel cannot reach the solvers' mark at large C, and where the
    classes overlap SMO's iterations grow with C: from INTERIOR_FIRST_C on, a solve started from
    one that reached Clarabel tries Clarabel first (its pair against a tight CVXPY optimum of the
    dual written here), for RETRY_CHAIN * C / INTERIOR_FIRST_C solves in a row, then libSVM's
    chain again; below INTERIOR_FIRST_C, from no solve or one of libSVM's, and with a solver the
    caller names, the chain."""
    from approxpath.problems.kernel_svm.solves import INTERIOR_FIRST_C, RETRY_CHAIN
    from reference_helpers import svm_dual_optimum

    X, y = make_classification(n=80, d=3, seed=2)
    C = 2.0 * INTERIOR_FIRST_C
    problem = KernelSVM(X, y, c=C, **({"bandwidth": 1.0, "parameter": "c"} if parameter == "c" else {}))
    t = C if parameter == "c" else 1.0
    tried, candidate = [], problem.candidate
    monkeypatch.setattr(problem, "candidate", lambda name, *a: tried.append(name) or candidate(name, *a))

    def first(warm_streak, at=t, **options):
        tried.clear()
        warm = None if warm_streak is None else (None, replace(problem.solve(at / 2)[1], interior=warm_streak))
        tried.clear()
        pair = problem.solve(at, warm=warm, **options)
        return tried[0], pair

    name, (primal, dual) = first(1)
    assert name == "clarabel" and dual.interior == 2, (tried, dual.interior)
    opt = svm_dual_optimum(problem.gram(t), y, C)[0]
    assert abs(problem.dual_objective(dual, t) - opt) <= 1e-6 * abs(opt)
    assert problem.bound.gap(primal, dual, t) <= 1e-6 * abs(opt)
    retry = RETRY_CHAIN * C / INTERIOR_FIRST_C
    assert first(int(retry) - 1)[0] == "clarabel"
    chain = "smo"  # (the chain's first: it declines n <= 1000, then libSVM)
    for streak in (None, 0, int(retry)):  # no solve nearby, one of libSVM's, the streak's end
        assert first(streak)[0] == chain
    assert first(1, solver=["libsvm", "clarabel"])[0] == "libsvm"
    if parameter == "c":
        assert first(1, at=C / 4)[0] == chain  # below INTERIOR_FIRST_C

    # a chain that reaches the interior point starts a new streak
    def missing(name, *a):
        tried.append(name)
        if name != "clarabel":
            raise ValueError(f"{name} missed")
        return candidate(name, *a)

    monkeypatch.setattr(problem, "candidate", missing)
    name, (_, dual) = first(int(retry))
    assert name == chain and tried[-1] == "clarabel" and dual.interior == 1, tried


def test_a_resumed_run_at_a_large_c_orders_its_solves_as_the_uninterrupted_one():
    """Which backend a solve tries first depends on the solve it starts from (SVMDual.interior):
    a checkpoint stores it (anchor_state), so the resumed run's certificate is the same bit for
    bit; the pickled dual (sent to worker processes) keeps it too."""
    import pickle
    from types import SimpleNamespace

    from approxpath.problems.kernel_svm.solves import INTERIOR_FIRST_C
    from approxpath.testing.runs import check_resumed_run_equals_uninterrupted

    X, y = make_classification(n=60, d=2, seed=4)
    problem = KernelSVM(X, y, c=4.0 * INTERIOR_FIRST_C)
    streaks, solve, candidate = [], problem.solve, problem.candidate

    def chain(name, t, *a):
        """libSVM's chain misses at one t in five (by its digits) and elsewhere makes a pair of
        other bits than Clarabel's, accepted."""
        if name == "clarabel":
            return candidate(name, t, *a)
        if int(t * 1000) % 5 == 0:
            raise ValueError(f"{name} missed")
        primal, dual = candidate("clarabel", t)
        problem._interior_tries -= 1  # (not an interior point's pair)
        return primal, replace(dual, alpha=dual.alpha * (1.0 - 1e-9))

    problem.candidate = chain
    problem.solve = lambda *a, **k: (lambda pair: streaks.append(pair[1].interior) or pair)(solve(*a, **k))
    check_resumed_run_equals_uninterrupted(SimpleNamespace(problem=problem, eps=5.0, interval=(0.5, 2.0)))
    assert max(streaks) >= 2, streaks  # solves that went to Clarabel first, from one that reached it
    dual = replace(problem.solve(1.0)[1], interior=3)
    assert pickle.loads(pickle.dumps(dual)).interior == 3


def test_a_c_beyond_double_precision_is_refused_before_any_solve():
    """C n above 2**500: the bounds' magnitudes, ~(C n)^2, would leave double precision (C ~ 1e300
    hung in the exact solvers); refused at once, on a bandwidth path and at a C path's top."""
    X, y = make_classification(n=40, d=2, seed=0)
    SVM = approxpath.get_problem("kernel_svm")
    with pytest.raises(InputError, match=r"c = 1e\+300 is above 8\.18e\+148"):
        approxpath.approximate_path(SVM(X, y, c=1e300), eps=0.5, interval=(0.5, 8.0))
    with pytest.raises(InputError, match="use c <= 8.18e"):
        approxpath.approximate_path(SVM(X, y, bandwidth=1.0, parameter="c"), eps=0.5, interval=(1.0, 1e200))
    SVM(X, y, c=2.0**500 / 40).check_weights(0.5, 8.0)  # the edge itself is allowed
