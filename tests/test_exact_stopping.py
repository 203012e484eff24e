"""The lambda-path's stopping rules (Wang, Qin and Huang §3: landmark count, prediction accuracy,
lambda) and its degenerate inputs, against the unstopped path, independent MSEs and CVXPY."""

import numpy as np
import pytest

from approxpath import InputError
from approxpath.exact import certify, lambda_path
from approxpath.exact.figures import wang_sinc as wang_split
from approxpath.compute.distances import cross_sq_distances
from approxpath.compute.kernels import gaussian
from exact_helpers import cvx_klasso, objective, wang_sinc


@pytest.fixture(scope="module")
def split():
    return wang_split(0)


@pytest.fixture(scope="module")
def full(split):
    X, y, _, _ = split
    return lambda_path(X, y, 1.0, lam_min=1e-4)


def _val_mse(X, Xv, yv, beta, beta0, t=1.0):
    e = yv - gaussian(cross_sq_distances(Xv, X), t) @ beta - beta0
    return float(e @ e) / e.size


@pytest.mark.parametrize("k", [1, 3, 6])
def test_max_landmarks_stops_where_the_next_point_would_join(split, full, k):
    X, y, _, _ = split
    p = lambda_path(X, y, 1.0, lam_min=1e-4, max_landmarks=k)
    assert p.stop_reason.startswith(f"max_landmarks = {k}")
    assert np.abs(p.signs).sum(axis=1).max() == k  # never more, and reached
    assert np.count_nonzero(p.beta, axis=1).max() <= k
    # the same path as without the rule down to there, where the full path grows to k + 1
    lam_stop = p.t[0]
    keep = full.t >= lam_stop
    np.testing.assert_allclose(p.t, full.t[keep], rtol=1e-12)
    np.testing.assert_allclose(p.beta, full.beta[keep], atol=1e-10)
    first = next(i for i, e in enumerate(full.events) if e.t == lam_stop and e.kind == "joined")
    sizes = np.cumsum([1 if e.kind == "joined" else -1 for e in full.events])
    assert sizes[first] == k + 1 and sizes[:first].max() <= k
    assert certify(p, tol=1e-8, relative=True).ok


@pytest.mark.parametrize("target", [0.05, 0.02, 0.01])
def test_target_mse_stops_exactly_where_the_validation_mse_reaches_it(split, full, target):
    X, y, Xv, yv = split
    p = lambda_path(X, y, 1.0, lam_min=1e-4, target_mse=target, X_val=Xv, y_val=yv)
    assert p.stop_reason.startswith("target_mse")
    lam_stop = p.t[0]
    assert _val_mse(X, Xv, yv, p.beta[0], p.beta0[0]) == pytest.approx(target, rel=1e-9)
    assert all(_val_mse(X, Xv, yv, b, b0) > target for b, b0 in zip(p.beta[1:], p.beta0[1:]))
    # the largest lambda with MSE <= target: on a fine grid of the unstopped path above it, none
    grid = np.linspace(lam_stop, full.t[-1], 400)[1:]
    assert all(_val_mse(X, Xv, yv, full(g).beta, full(g).beta0) > target for g in grid)
    # the stopping solution is the kLASSO optimum there (independent CVXPY solve)
    ref, _, _ = cvx_klasso(X, y, 1.0, lam_stop)
    assert objective(X, y, 1.0, lam_stop, p.beta[0], p.beta0[0]) == pytest.approx(ref, rel=1e-7)
    assert certify(p, tol=1e-8, relative=True).ok


def test_target_mse_never_reached_runs_to_lam_min(split):
    X, y, Xv, yv = split
    p = lambda_path(X, y, 1.0, lam_min=1e-3, target_mse=1e-6, X_val=Xv, y_val=yv)
    assert p.stop_reason == "lam_min" and p.t[0] == 1e-3
    q = lambda_path(X, y, 1.0, lam_min=1e-3, target_mse=10.0, X_val=Xv, y_val=yv)  # reached at lambda_max
    assert q.t.size == 1 and not q.events and q.stop_reason.startswith("target_mse")


def test_max_events():
    X, y = wang_sinc(0)
    p = lambda_path(X, y, 1.0, max_events=0)
    lam_max = np.abs(gaussian(cross_sq_distances(X, X), 1.0) @ (y - y.mean())).max()
    assert p.events == () and p.t.size == 1 and p.stop_reason == "max_events = 0"
    assert p.t[0] == pytest.approx(lam_max, rel=1e-14) and np.all(p.beta == 0) and p.beta0[0] == y.mean()
    q = lambda_path(X, y, 1.0, max_events=3)
    assert len(q.events) == 3 and q.stop_reason == "max_events = 3"
    assert lambda_path(X, y, 1.0, max_landmarks=0).events == ()


def test_constant_features_give_lambda_max_exactly_zero():
    rng = np.random.default_rng(0)
    X = np.full((20, 3), 0.7)
    y = rng.standard_normal(20) * 3 + 1
    p = lambda_path(X, y, 1.0)
    assert p.t.tolist() == [0.0] and p.events == () and p.stop_reason.startswith("lam_min >= lam_max = 0")
    assert np.all(p.beta == 0) and p.beta0[0] == y.mean()
    assert p(0.5).valid and p(1e-9).valid
    q = lambda_path(X, y, 1.0, lam_min=0.1)
    assert q.t.tolist() == [0.1] and certify(q, tol=1e-8, relative=True).ok
    # beta = 0 is optimal at any lambda > 0: an independent solve agrees
    ref, _, _ = cvx_klasso(X, y, 1.0, 0.1)
    assert objective(X, y, 1.0, 0.1, q.beta[0], q.beta0[0]) == pytest.approx(ref, rel=1e-8)


def test_lam_min_above_lambda_max_is_the_zero_solution_there():
    X, y = wang_sinc(0)
    p = lambda_path(X, y, 1.0, lam_min=100.0)
    assert p.t.tolist() == [100.0] and p.events == () and np.all(p.beta == 0)
    assert certify(p, tol=1e-8, relative=True).ok


@pytest.mark.parametrize("kwargs,match", [
    (dict(max_landmarks=-1), "max_landmarks"),
    (dict(max_landmarks=2.5), "max_landmarks"),
    (dict(max_landmarks=True), "max_landmarks"),
    (dict(max_events=-2), "max_events"),
    (dict(target_mse=0.01), "validation data"),
    (dict(target_mse=-0.01, X_val=np.zeros((3, 1)), y_val=np.zeros(3)), "target_mse"),
    (dict(X_val=np.zeros((3, 1)), y_val=np.zeros(3)), "target_mse only"),
    (dict(target_mse=0.01, X_val=np.zeros((3, 2)), y_val=np.zeros(3)), "X_val must be"),
    (dict(target_mse=0.01, X_val=np.zeros((3, 1)), y_val=np.array([0.0, np.nan, 1.0])), "finite"),
])
def test_bad_stopping_rules_are_refused(kwargs, match):
    X, y = wang_sinc(0)
    with pytest.raises(InputError, match=match):
        lambda_path(X, y, 1.0, **kwargs)


def test_the_kernel_path_stops_where_two_copies_of_a_point_are_active():
    """A copy of point 0 (the λ-path start stops at copies too, so the start is CVXPY's): the
    kernel path stops where both copies are active, naming them, and what it returned before is
    certified."""
    from approxpath.exact import kernel_path

    X, y = wang_sinc(2)
    X, y = np.vstack([X, X[:1]]), np.concatenate([y, y[:1]])
    p = kernel_path(X, y, 0.05, (0.5, 4.0), start_solution="cvxpy")
    assert "points 0 and 50 are copies" in p.stop_reason
    assert certify(p, tol=1e-6).ok
