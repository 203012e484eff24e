"""The exact kLASSO paths of Wang et al. against independent CVXPY solves and closed forms."""

import cvxpy as cp
import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_sinc
from approxpath.exact import ExactPathError, kernel_path, lambda_path
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import gaussian
from exact_helpers import cvx_klasso, objective, wang_sinc
from reference_helpers import tight_solve


@pytest.fixture(scope="module")
def small():
    return make_sinc(n=30, low=-3.0, high=3.0, noise=0.08, seed=1)


@pytest.fixture(scope="module")
def lam_path(small):
    X, y = small
    return lambda_path(X, y, bandwidth=1.0, lam_min=1e-3)


def test_lambda_path_matches_cvxpy_between_breakpoints(small, lam_path):
    X, y = small
    bp = lam_path.t
    assert lam_path.stop_reason == "lam_min" and bp[0] == 1e-3 and len(lam_path.events) > 10
    rng = np.random.default_rng(0)
    segs = rng.choice(np.flatnonzero(np.diff(bp) > 0), size=20)
    for k in segs:  # 20 random lambda strictly inside segments
        lam = bp[k] + rng.uniform(0.05, 0.95) * (bp[k + 1] - bp[k])
        p = lam_path(lam)
        ref, _, _ = cvx_klasso(X, y, 1.0, lam)
        assert p.valid
        assert objective(X, y, 1.0, lam, p.beta, p.beta0) == pytest.approx(ref, rel=1e-7)


def test_lambda_path_is_linear_and_kkt_holds_at_breakpoints(small, lam_path):
    X, y = small
    K = gaussian(sq_distances(X), 1.0)
    for k, lam in enumerate(lam_path.t):
        beta, beta0, s = lam_path.beta[k], lam_path.beta0[k], lam_path.signs[k]
        r = y - K @ beta - beta0
        g = K @ r
        assert abs(r.sum()) < 1e-10  # beta0 = mean(y - K beta), eq. (4)
        act = s != 0
        np.testing.assert_allclose(g[act], s[act] * lam, rtol=1e-8, atol=1e-10)  # (10)
        assert np.all(np.abs(g[~act]) <= lam * (1 + 1e-8))  # (11)
        assert np.all(s[act] * beta[act] >= 0) and np.all(beta[~act] == 0)
    # the callable is the linear interpolation between consecutive breakpoints
    k = int(np.argmax(np.diff(lam_path.t)))
    mid = 0.5 * (lam_path.t[k] + lam_path.t[k + 1])
    np.testing.assert_allclose(lam_path(mid).beta, 0.5 * (lam_path.beta[k] + lam_path.beta[k + 1]))


def test_a_point_that_left_may_join_again_on_the_other_side():
    """A point that left with sign s was barred from joining on either side during the next
    segment: its g crossed -s lambda unseen, and 11 of 100 random paths were wrong (KKT residual
    0.48 lambda) with ``failed`` False.  Only the side it left on is barred now."""
    from approxpath.exact import certify

    rng = np.random.default_rng(1079)
    n, d = int(rng.integers(10, 60)), int(rng.integers(1, 4))
    X, y, bw = rng.normal(size=(n, d)), rng.normal(size=n), float(10 ** rng.uniform(-1, 1))
    path = lambda_path(X, y, bw)
    left = {e.index: e.sign for e in path.events if e.kind == "left"}
    assert any(e.kind == "joined" and left.get(e.index) == -e.sign for e in path.events)
    for lam in (0.006, 0.0015, 0.0012):  # below the point's second join, on the other side
        ref, _, _ = cvx_klasso(X, y, bw, lam)
        p = path(lam)
        assert p.valid and objective(X, y, bw, lam, p.beta, p.beta0) == pytest.approx(ref, rel=1e-7, abs=1e-9)
    for seed in range(1000, 1060):  # (6 of these 60 were wrong)
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(10, 60)), int(rng.integers(1, 4))
        X, y, bw = rng.normal(size=(n, d)), rng.normal(size=n), float(10 ** rng.uniform(-1, 1))
        assert certify(lambda_path(X, y, bw)).ok, seed


def test_a_lambda_path_that_cycles_at_one_lambda_stops_as_singular():
    """Down to lam_min = 1e-12 the active set of sinc n = 50 saturates (condition number 2e18):
    points joined and left in turn at one lambda, 2,217 times, until the 50 n event limit, and
    the path said ``failed`` False."""
    X, y = make_sinc(n=50, low=-3.0, high=3.0, noise=0.08, seed=0)
    path = lambda_path(X, y, 1.0, lam_min=1e-12)
    at_end = [e for e in path.events if e.t == path.t[0]]
    assert path.failed and "would join or leave a third time at this lambda" in path.stop_reason
    assert "use a larger lam_min or a ridge term nu > 0" in path.stop_reason
    per_point = [sum(e.index == i for e in at_end) for i in {e.index for e in at_end}]
    assert max(per_point) <= 2 and len(path.events) < 400 and path.t[0] > 1e-12  # (each point: at most twice)


def test_a_kernel_path_at_a_saturated_active_set_says_so():
    """n = 9: the active set reaches every point at a swap near t = 0.596 and the event cannot be
    resolved; the message blamed rounding and advised a larger eps or nu > 0, neither of which helps."""
    rng = np.random.default_rng(57)
    n, d = int(rng.integers(8, 30)), int(rng.integers(1, 4))
    X, y, lam = rng.normal(size=(n, d)), rng.normal(size=n), float(10 ** rng.uniform(-2, 0))
    path = kernel_path(X, y, lam, (0.05, 3.0))
    assert path.failed and f"of the {n} points: this algorithm cannot resolve" in path.stop_reason
    assert "use the approximate path" in path.stop_reason and "rounding" not in path.stop_reason


def test_lambda_max_closed_form_and_lambda_convention(small, lam_path):
    """lambda_max = ||K (y - ybar)||_inf: for lam >= lambda_max the optimum is beta = 0.  With the
    papers' scaling this equals the klasso objective's (no factor 2, no 1/n)."""
    X, y = small
    K = gaussian(sq_distances(X), 1.0)
    lam_max = np.abs(K @ (y - y.mean())).max()
    assert lam_path.t[-1] == pytest.approx(lam_max, rel=1e-14)
    assert lam_path.events[0].kind == "joined" and lam_path.events[0].t == lam_path.t[-1]
    p = lam_path(1.5 * lam_max)
    assert np.all(p.beta == 0) and p.beta0 == pytest.approx(y.mean()) and p.valid
    _, beta, _ = cvx_klasso(X, y, 1.0, 1.001 * lam_max)
    assert np.abs(beta).max() < 1e-7
    _, beta, _ = cvx_klasso(X, y, 1.0, 0.9 * lam_max)
    assert np.abs(beta).max() > 1e-3  # just below lambda_max the first coefficient is active


@pytest.fixture(scope="module")
def wang():
    return wang_sinc()


@pytest.fixture(scope="module")
def kpath(wang):
    X, y = wang
    return kernel_path(X, y, 0.1, (0.1, 10.0), theta=0.95, eps=1e-6)


def test_kernel_path_reaches_the_end_with_valid_solutions(wang, kpath):
    assert kpath.stop_reason == "end of range"
    assert kpath.t[0] == 0.1 and kpath.t[-1] == 10.0 and np.all(np.diff(kpath.t) > 0)
    assert 0.5 * 50 <= len(kpath.events) <= 5 * 50  # Wang et al.: between 0.5 n and 5 n
    assert all(kpath(t).valid for t in kpath.t[:: max(1, kpath.t.size // 60)])
    # sigma = 1/t moved by the decay rate: every accepted step is sigma <- sigma * 0.95^(2^-k)
    steps = np.log(kpath.t[1:] / kpath.t[:-1]) / np.log(1 / 0.95)
    event_ts = {e.t for e in kpath.events}
    plain = np.array([t not in event_ts for t in kpath.t[1:]]) & (kpath.t[1:] < 10.0)
    k = np.log2(steps[plain])
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)


def test_kernel_path_matches_cvxpy_at_random_sigma(wang, kpath):
    """Objective of the callable's exact solution at random sigma = 1/t vs a CVXPY solve with
    K = exp(-||x - x'||^2 / sigma) written in Wang's sigma (the t <-> sigma conversion)."""
    X, y = wang
    rng = np.random.default_rng(1)
    D = sq_distances(X)
    for sigma in np.exp(rng.uniform(np.log(0.1), np.log(10.0), 6)):
        p = kpath(1.0 / sigma)
        K = np.exp(-D / sigma)  # Wang's kernel, written in sigma
        beta, beta0 = cp.Variable(50), cp.Variable()
        prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ beta - beta0) + 0.1 * cp.norm1(beta)))
        tight_solve(prob)
        assert p.valid
        assert objective(X, y, 1.0 / sigma, 0.1, p.beta, p.beta0) == pytest.approx(prob.value, rel=1e-7, abs=1e-9)


def test_kernel_path_both_directions_agree(wang, kpath):
    X, y = wang
    both = kernel_path(X, y, 0.1, (0.1, 10.0), start=1.0)  # from the middle, sigma up and down
    assert both.stop_reason == "end of range" and both.t[0] == 0.1 and both.t[-1] == 10.0
    for t in (0.13, 0.7, 3.3, 9.0):
        a, b = kpath(t), both(t)
        assert a.valid and b.valid
        np.testing.assert_allclose(a.beta, b.beta, atol=1e-7)
    # events found in both directions: the same points join/leave (up to the order of ties)
    up = [(e.index, e.kind) for e in kpath.events if e.t > 1.0]
    mine = [(e.index, e.kind) for e in both.events if e.t > 1.0]
    assert sorted(up) == sorted(mine)


def test_marginal_speed_up_finds_the_same_events(wang, kpath):
    X, y = wang
    fast = kernel_path(X, y, 0.1, (0.1, 10.0), marginal=0.5)
    assert [(e.index, e.kind) for e in fast.events] == [(e.index, e.kind) for e in kpath.events]
    np.testing.assert_allclose(fast.beta[-1], kpath.beta[-1], atol=1e-8)


def test_cvxpy_start_and_ridge(wang):
    X, y = wang
    value, beta, beta0 = cvx_klasso(X, y, 0.5, 0.1)
    a = kernel_path(X, y, 0.1, (0.5, 0.6), start_solution=(beta, beta0))
    b = kernel_path(X, y, 0.1, (0.5, 0.6))
    np.testing.assert_allclose(a.beta[-1], b.beta[-1], atol=1e-8)
    # ridge nu: the solution of kLASSO + nu/2 ||beta||^2 (an independent CVXPY solve)
    nu = 1e-3
    r = kernel_path(X, y, 0.1, (0.5, 0.6), nu=nu)  # starts from the lambda-path with the same nu
    ref, _, _ = cvx_klasso(X, y, 0.6, 0.1, nu=nu)
    assert objective(X, y, 0.6, 0.1, r.beta[-1], r.beta0[-1], nu=nu) == pytest.approx(ref, rel=1e-7)


def test_lambda_path_with_ridge_matches_cvxpy(small):
    X, y = small
    nu = 1e-2
    lp = lambda_path(X, y, 1.0, lam_min=0.01, nu=nu)
    lam = 0.5 * (lp.t[2] + lp.t[3])
    p = lp(lam)
    ref, _, _ = cvx_klasso(X, y, 1.0, lam, nu=nu)
    assert objective(X, y, 1.0, lam, p.beta, p.beta0, nu=nu) == pytest.approx(ref, rel=1e-7)


def test_bad_input_is_refused(small):
    X, y = small
    with pytest.raises(InputError, match="bandwidth"):
        lambda_path(X, y, -1.0)
    with pytest.raises(InputError, match="lo < hi"):
        kernel_path(X, y, 0.1, (2.0, 1.0))
    with pytest.raises(InputError, match="theta"):
        kernel_path(X, y, 0.1, (1.0, 2.0), theta=1.5)
    with pytest.raises(InputError, match="start"):
        kernel_path(X, y, 0.1, (1.0, 2.0), start=3.0)
    with pytest.raises(InputError, match="start_solution"):
        kernel_path(X, y, 0.1, (1.0, 2.0), start_solution="magic")
    with pytest.raises(ExactPathError, match="active set"):  # a point that is not a solution
        kernel_path(X, y, 0.1, (1.0, 2.0), start_solution=(np.ones(30), 0.0))
    with pytest.raises(ValueError, match="below"):
        lambda_path(X, y, 1.0, lam_min=0.5)(0.1)


@pytest.mark.parametrize("path, kwargs, match", [
    ("kernel", dict(max_events=-1), "max_events must be a non-negative integer"),
    ("kernel", dict(screen="no"), "screen must be True or False"),
    ("kernel", dict(start="x"), "start must be a positive finite number"),
    ("kernel", dict(marginal="x"), r"marginal \(xi\) must lie in \(0, 1\)"),
    ("kernel", dict(theta="x"), r"theta must lie in \(0, 1\)"),
    ("lambda", dict(bandwidth=True), "bandwidth must be a positive finite number; got True"),
    ("lambda", dict(nu="0"), "ridge nu must be >= 0 and finite"),
])
def test_bad_arguments_of_the_exact_paths_are_one_line(path, kwargs, match):
    """Each ran (max_events=-1 stopped after one event; "no" screened; True was t = 1) or failed
    deep inside (TypeError, numpy's "could not convert string to float")."""
    X, y = wang_sinc()
    with pytest.raises(InputError, match=match):
        if path == "kernel":
            kernel_path(X, y, 0.1, (1.0, 1.5), **kwargs)
        else:
            lambda_path(X, y, kwargs.pop("bandwidth", 1.0), 0.5, **kwargs)


def test_bad_claims_and_condition_numbers_of_crosscheck_are_one_line():
    """primals=None was a TypeError from list(); cond of another length an IndexError."""
    from approxpath.exact import crosscheck

    X, y = wang_sinc()
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    claims = {"beta": np.zeros((2, y.size)), "beta0": np.zeros(2)}
    with pytest.raises(InputError, match="^primals must be the claimed solutions"):
        crosscheck(problem, [1.0, 2.0], None)
    for cond in ([1.0], "x"):
        with pytest.raises(InputError, match=r"^cond must hold one number per point \(2\)"):
            crosscheck(problem, [1.0, 2.0], claims, cond=cond)
