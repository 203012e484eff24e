"""Certification of exact paths by the registered problems' duality gaps, the cross-check of
claimed solutions (any problem), and the exact vs approximate path agreement."""

import dataclasses

import numpy as np
import pytest

import approxpath
from approxpath.moving import value_at
from approxpath import InputError
from approxpath.data import make_classification, make_sinc
from approxpath.exact import certify, crosscheck, kernel_path, lambda_path, read_claimed, write_claimed
from approxpath.problems.klasso.restore import scaled_dual
from exact_helpers import wang_sinc

KLasso = approxpath.get_problem("klasso")


@pytest.fixture(scope="module")
def wang():
    return wang_sinc()


@pytest.fixture(scope="module")
def kernel_paths(wang):
    """Wang et al.'s kernel paths: lam in {1, 0.1, 0.01}, sigma from 10 to 0.1, theta 0.95, eps 1e-6,
    started from the lambda-path at sigma = 10."""
    X, y = wang
    return {lam: kernel_path(X, y, lam, (0.1, 10.0), theta=0.95, eps=1e-6) for lam in (1.0, 0.1, 0.01)}


def test_lambda_path_breakpoints_are_certified(wang):
    X, y = wang
    for t in (0.1, 1.0, 10.0):  # Wang's sigma = 10, 1, 0.1
        lp = lambda_path(X, y, t, lam_min=1e-3)
        report = certify(lp, tol=1e-8, relative=True)
        assert report.ok, str(report)
        assert len(report.points) == lp.t.size and report.max_relative_gap <= 1e-8
        assert all(c.status == "certified" for c in report.points)
        assert report.max_cond == pytest.approx(np.nanmax(lp.cond))


@pytest.mark.parametrize("lam", [1.0, 0.1, 0.01])
def test_wang_kernel_path_runs_to_the_end_and_is_certified(kernel_paths, lam):
    path = kernel_paths[lam]
    assert path.stop_reason == "end of range" and path.interval == (0.1, 10.0)
    n = path.beta.shape[1]
    events = len(path.events)
    # Wang et al. saw between 0.5 n and 5 n events; at lam = 1 "only very few points enter the
    # active set" (18 events here, 0.36 n)
    assert 1 <= events <= 5 * n
    if lam <= 0.1:
        assert events >= 0.5 * n
    report = certify(path, tol=1e-6, relative=True)
    assert report.ok, str(report)
    assert len(report.points) == path.t.size and report.max_relative_gap <= 1e-6
    assert not report.segments  # a kernel path is not linear between its points


def _agreement(X, y, lam, path, eps, k=50, seed=0):
    problem = KLasso(X, y, lam=lam, parameter="bandwidth")
    approx = approxpath.approximate_path(problem, eps=eps, interval=(0.1, 10.0))
    assert approx.certified
    rng = np.random.default_rng(seed)
    worst = 0.0
    for sigma in np.exp(rng.uniform(np.log(0.1), np.log(10.0), k)):
        t = 1.0 / sigma
        exact = path(t)
        assert exact.valid
        p_exact = problem.primal_objective(problem.Primal(exact.beta, exact.beta0), t)
        p_approx = problem.primal_objective(approx.primal(t), t)
        # approx is eps-optimal, exact is optimal (certified to ~1e-10): within eps either way
        assert -1e-8 <= p_approx - p_exact <= eps
        worst = max(worst, p_approx - p_exact)
    return worst, approx


def test_approximate_path_agrees_with_exact_kernel_path(wang, kernel_paths):
    worst, approx = _agreement(*wang, 0.1, kernel_paths[0.1], eps=1e-2)
    assert 0 < worst <= 1e-2


@pytest.mark.slow
@pytest.mark.parametrize("lam", [1.0, 0.1, 0.01])
def test_approximate_path_agrees_with_exact_kernel_path_eps_1e3(wang, kernel_paths, lam):
    _agreement(*wang, lam, kernel_paths[lam], eps=1e-3)


# ---------------------------------------------------------------------------- cross-check
@pytest.fixture(scope="module")
def lam_path():
    X, y = make_sinc(n=30, low=-3.0, high=3.0, noise=0.08, seed=1)
    return lambda_path(X, y, 1.0, lam_min=1e-2)


def _corrupt(arrays, point, index, delta):
    bad = {k: np.array(v, copy=True) for k, v in arrays.items()}
    bad["beta"][point, index] += delta
    return bad


def test_crosscheck_flags_one_corrupted_coefficient(lam_path):
    problem = lam_path.problem()
    arrays = lam_path.primal_arrays()
    good = crosscheck(problem, lam_path.t, arrays, tol=1e-8, relative=True, linear=True)
    assert good.ok and len(good.segments) == lam_path.t.size - 1
    k = lam_path.t.size // 2
    active = np.flatnonzero(lam_path.signs[k])
    bad = crosscheck(problem, lam_path.t, _corrupt(arrays, k, active[0], 1e-3), tol=1e-8, relative=True, linear=True)
    assert not bad.ok
    flagged_points = [c.index for c in bad.flagged if c.kind == "point"]
    flagged_segments = sorted(c.index for c in bad.flagged if c.kind == "segment")
    assert flagged_points == [k]  # exactly the corrupted breakpoint ...
    assert flagged_segments == [k - 1, k]  # ... and the two segments touching it
    assert f"point {k}" in str(bad) and "over the whole segment" in str(bad)
    assert all(c.status == "certified" for c in bad.segments)  # klasso's rigorous segment bound
    # a wrong intercept alone is flagged too (the claimed beta0 is used as given)
    arrays_b0 = {"beta": arrays["beta"], "beta0": arrays["beta0"].copy()}
    arrays_b0["beta0"][0] += 1e-3
    assert [c.index for c in crosscheck(problem, lam_path.t, arrays_b0, tol=1e-8, relative=True).flagged] == [0]


def test_a_segment_bound_that_fails_leaves_the_segment_sampled_and_says_why(lam_path, monkeypatch):
    """A numerical failure of the problem's segment bound: the segment is sampled, its note says
    why; a bug in it (TypeError) is raised, not hidden as a sampled segment."""
    problem = lam_path.problem()
    arrays = lam_path.primal_arrays()

    def fails(self, *args):
        raise np.linalg.LinAlgError("singular")

    monkeypatch.setattr(type(problem), "segment_gap_bound", fails)
    report = crosscheck(problem, lam_path.t, arrays, tol=1e-8, relative=True, linear=True)
    assert report.segments and all(c.status == "sampled" for c in report.segments)
    assert all(c.note.startswith("segment bound failed (LinAlgError: singular); sampled") for c in report.segments)

    def bug(self, *args):
        raise TypeError("a bug")

    monkeypatch.setattr(type(problem), "segment_gap_bound", bug)
    with pytest.raises(TypeError, match="a bug"):
        crosscheck(problem, lam_path.t, arrays, tol=1e-8, relative=True, linear=True)

def test_lambda_path_segments_are_certified(wang):
    X, y = wang
    report = certify(lambda_path(X, y, 1.0, lam_min=1e-3), tol=1e-8, relative=True)
    assert report.ok and report.segments and all(c.status == "certified" for c in report.segments)
    assert report.to_json()["segment_check"] == "certified"


def test_klasso_segment_bound_dominates_the_gap_along_the_segment(lam_path):
    """The bound holds at every lambda of the segment for the interpolated primal and the
    interpolated restored duals (which it describes), also for primals that are not a path
    (sign changes, wrong coefficients), and it bounds the distance to a CVXPY optimum."""
    from exact_helpers import cvx_klasso

    problem = lam_path.problem()
    K = np.exp(-problem.D)  # bandwidth 1
    rng = np.random.default_rng(3)
    k = lam_path.t.size // 2
    pairs = [(k, lam_path.primal_arrays()["beta"][k], lam_path.primal_arrays()["beta"][k + 1])]
    for _ in range(3):  # arbitrary claimed segments: random signs, random sizes
        pairs.append((k, rng.standard_normal(30) * 0.1, rng.standard_normal(30) * 0.1))
    for k, ba, bb in pairs:
        lo, hi = lam_path.t[k], lam_path.t[k + 1]
        pa = problem.Primal(ba, float(lam_path.beta0[k]))
        pb = problem.Primal(bb, float(lam_path.beta0[k + 1]) + 0.01 * rng.standard_normal())
        bound = problem.segment_gap_bound(pa, pb, lo, hi)
        da = scaled_dual(problem, problem.dual_from_primal(pa, lo), lo)
        db = scaled_dual(problem, problem.dual_from_primal(pb, hi), hi)
        for th in np.linspace(0.0, 1.0, 41):
            lam = lo + th * (hi - lo)
            x = problem.interpolate((pa, da), (pb, db), th)[0]
            v = (1 - th) * value_at(da, lo).u + th * value_at(db, hi).u
            assert np.abs(K @ v).max() <= lam * (1 + 1e-12)
            gap = problem.primal_objective(x, lam) - (problem.y @ v - 0.5 * v @ v)
            assert gap <= bound
        for th in (0.3, 0.7):
            lam = lo + th * (hi - lo)
            x = problem.interpolate((pa, da), (pb, db), th)[0]
            assert problem.primal_objective(x, lam) - cvx_klasso(problem.X, problem.y, 1.0, lam)[0] <= bound + 1e-9
    assert problem.segment_gap_bound(pa, pb, hi, hi) is None  # a point is not a segment
    bw = KLasso(problem.X, problem.y, lam=0.1)
    assert bw.segment_gap_bound(pa, pb, 0.5, 1.0) is None  # no segment bound on the bandwidth path


def test_crosscheck_flags_a_corrupted_kernel_path(kernel_paths):
    path = kernel_paths[0.1]
    k = int(np.argmax(np.abs(path.signs).sum(axis=1)))
    j = int(np.flatnonzero(path.signs[k])[0])
    bad = crosscheck(path.problem(), path.t, _corrupt(path.primal_arrays(), k, j, 1e-4), tol=1e-6, relative=True)
    assert [c.index for c in bad.flagged] == [k] and bad.flagged[0].rows == ()
    # given in decreasing t (a homotopy's order), the flagged point names its row as given too
    down = {name: a[::-1] for name, a in _corrupt(path.primal_arrays(), k, j, 1e-4).items()}
    back = crosscheck(path.problem(), path.t[::-1], down, tol=1e-6, relative=True)
    row = len(path.t) - 1 - k
    assert [(c.index, c.rows) for c in back.flagged] == [(k, (row,))]
    assert back.flagged[0].describe(1e-6, True).startswith(f"point {k} (row {row} as given) at t = ")


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_claimed_path_files_round_trip(lam_path, tmp_path, suffix):
    f = tmp_path / f"path{suffix}"
    write_claimed(f, lam_path.t, lam_path.primal_arrays(), **({"linear": np.array(True)} if suffix == ".npz" else {}))
    arrays = read_claimed(f)
    np.testing.assert_array_equal(arrays["t"], lam_path.t)
    np.testing.assert_array_equal(arrays["beta"], lam_path.beta)  # %.17g round-trips doubles
    np.testing.assert_array_equal(arrays["beta0"], lam_path.beta0)
    report = crosscheck(lam_path.problem(), arrays["t"], {k: arrays[k] for k in ("beta", "beta0")}, tol=1e-8,
                        relative=True)
    assert report.ok


def test_crosscheck_refuses_malformed_input(lam_path, tmp_path):
    problem = lam_path.problem()
    with pytest.raises(InputError, match="beta0"):
        crosscheck(problem, lam_path.t, {"beta": lam_path.beta})
    with pytest.raises(InputError, match="points x n"):
        crosscheck(problem, lam_path.t, {"beta": lam_path.beta[:, :5], "beta0": lam_path.beta0})
    with pytest.raises(InputError, match="one row per parameter"):
        crosscheck(problem, lam_path.t[:-1], lam_path.primal_arrays())
    (tmp_path / "bad.csv").write_text("t,beta0,beta[1]\n0.1,0,0\n")
    with pytest.raises(InputError, match="numbered"):
        read_claimed(tmp_path / "bad.csv")
    np.savez(tmp_path / "no_t.npz", beta=lam_path.beta)
    with pytest.raises(InputError, match="no array 't'"):
        read_claimed(tmp_path / "no_t.npz")


@pytest.mark.parametrize("parameter", ["c", "bandwidth"])
def test_crosscheck_bounds_the_claimed_svm_w_not_its_restored_dual_s(parameter):
    """The SVM's gap reads w = y∘alpha from the dual, and the cross-check's dual is the claimed w
    restored (clipped, balanced, and over C rescaled): a claimed w times 1.001, or divided by C
    (the alpha-in-[0, 1] convention), passed with the gap of the exact optimum (7.9e-10 against a
    true suboptimality of 0.03 and 290).  Now each point's bound is at least its suboptimality
    against the exact solve's primal (a lower bound of the true one)."""
    X, y = make_classification(n=30, d=2, seed=3)
    options = dict(bandwidth=0.5, parameter="c") if parameter == "c" else dict(c=1.0)
    problem = approxpath.get_problem("kernel_svm")(X, y, **options)
    ts = np.geomspace(0.25, 4.0, 5)
    sols = [problem.solve(t)[0] for t in ts]
    w, b = np.array([s.w for s in sols]), np.array([s.b for s in sols])
    assert crosscheck(problem, ts, {"w": w, "b": b}, tol=1e-6, relative=True).ok
    weights = ts if parameter == "c" else np.ones_like(ts)
    for claimed in (w * 1.001, w / weights[:, None] if parameter == "c" else w * 0.999):
        report = crosscheck(problem, ts, {"w": claimed, "b": b}, tol=1e-6, relative=True)
        assert not report.ok
        for check, t, c, s in zip(report.points, ts, claimed, sols):
            above = problem.primal_objective(problem.primal_at(type(s)(w=c, b=s.b), t), t) - \
                problem.primal_objective(problem.primal_at(s, t), t)
            assert check.gap >= above


def test_crosscheck_is_generic_kernel_svm():
    """The same door for another registered problem: kernel_svm's primal (w, b) over the bandwidth."""
    X, y = make_classification(n=30, d=2, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    ts = np.geomspace(0.25, 4.0, 5)
    sols = [problem.solve(t)[0] for t in ts]
    arrays = {"w": np.array([s.w for s in sols]), "b": np.array([s.b for s in sols])}
    assert crosscheck(problem, ts, arrays, tol=1e-6, relative=True).ok
    arrays["w"][2, int(np.argmax(np.abs(arrays["w"][2])))] *= 0.9
    bad = crosscheck(problem, ts, arrays, tol=1e-6, relative=True)
    assert [c.index for c in bad.flagged] == [2]
    # no rigorous segment bound for kernel_svm: claimed-linear segments are sampled, and say so
    lin = crosscheck(problem, ts, arrays, tol=1.0, linear=True, samples=4)
    assert lin.segments and all(c.status == "sampled" for c in lin.segments)
    assert "sampled at 4 interior points" in str(lin) and lin.to_json()["segment_check"] == "sampled"
    # primal objects work as well as arrays
    sols[3] = dataclasses.replace(sols[3], b=sols[3].b + 0.1)
    assert [c.index for c in crosscheck(problem, ts, sols, tol=1e-6, relative=True).flagged] == [3]
