"""Numerically hostile data: each run either certifies claims that independent references confirm
(tight CVXPY optima, weak duality computed here, ``verify``) or refuses with one line."""

import math

import cvxpy as cp
import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError

from reference_helpers import tight_solve

# A certified gap bound may sit below the true suboptimality by the reference's own error: the
# tight solves reach ~1e-10 of the objective's scale (relative), far below every eps here.
_REFERENCE_SLACK = 1e-9


def _gram(X, t):
    """exp(-t ||x_i - x_j||^2), computed here from the differences (not by approxpath)."""
    X = np.asarray(X, dtype=float)
    return np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def _optimum(name, K, y, w):
    """The optimal value from a tight CVXPY solve of the problem's dual (the SVM's with alpha =
    C beta, so that a tiny C does not fall under the solver's absolute tolerance)."""
    n = y.size
    if name == "kernel_svm":
        beta = cp.Variable(n)
        Q = cp.psd_wrap(K * np.outer(y, y))
        problem = cp.Problem(cp.Maximize(cp.sum(beta) - 0.5 * w * cp.quad_form(beta, Q)),
                             [beta >= 0, beta <= 1, y @ beta == 0])
        return w * tight_solve(problem)
    if name == "klasso":
        u = cp.Variable(n)
        problem = cp.Problem(cp.Maximize(y @ u - 0.5 * cp.sum_squares(u)), [cp.norm_inf(K @ u) <= w, cp.sum(u) == 0])
    elif name == "robust_l1":
        u = cp.Variable(n)
        problem = cp.Problem(cp.Maximize(y @ u), [cp.norm_inf(u) <= 1, cp.norm_inf(K @ u) <= w])
    else:  # kernel_ridge
        a = cp.Variable(n)
        problem = cp.Problem(cp.Maximize(2 * y @ a - cp.sum_squares(a) - cp.quad_form(a, cp.psd_wrap(K)) / w))
    return tight_solve(problem)


def _objectives(name, K, y, w, primal, dual):
    """(primal objective, dual objective, dual infeasibility) of the path's pair, computed here."""
    if name == "kernel_svm":
        a = dual.alpha
        f = K @ primal.w + primal.b
        p = 0.5 * primal.w @ K @ primal.w + w * np.maximum(0.0, 1.0 - y * f).sum()
        return (p, a.sum() - 0.5 * (a * y) @ K @ (a * y),
                max(0.0, -a.min(), a.max() - w, abs(math.fsum(a * y)) / max(1.0, a.sum())))
    if name == "klasso":
        r, u = y - K @ primal.beta - primal.beta0, dual.u
        return (0.5 * r @ r + w * np.abs(primal.beta).sum(), y @ u - 0.5 * u @ u,
                max(0.0, np.abs(K @ u).max() - w, abs(math.fsum(u)) / max(1.0, np.abs(u).sum())))
    if name == "robust_l1":
        u = dual.u
        return (np.abs(y - K @ primal.beta).sum() + w * np.abs(primal.beta).sum(), y @ u,
                max(0.0, np.abs(u).max() - 1.0, np.abs(K @ u).max() - w))
    c, a = primal.c, dual.a
    return w * c @ K @ c + np.sum((K @ c - y) ** 2), 2 * a @ y - a @ a - a @ K @ a / w, 0.0


def _check_claims(name, X, y, problem, path, points, seed, tmp_path):
    """At ``points`` random parameters: the path's point is within its piece's bound of a tight
    optimum, the bound within eps; the pair's gap computed here within the bound; the saved
    certificate verifies."""
    rng = np.random.default_rng(seed)
    lo, hi = path.interval
    yy = np.asarray(problem.y, dtype=float)  # (the SVM's labels as -1/+1)
    for t in np.exp(rng.uniform(math.log(lo), math.log(hi), points)):
        bandwidth, w = problem.sweep.at(t)
        K = _gram(X, bandwidth)
        primal, dual, bound = path.primal(t), path.dual(t), path.gap_bound(t)
        p, d, infeasible = _objectives(name, K, yy, w, primal, dual)
        scale = max(abs(p), abs(d))
        assert bound <= (path.eps * max(d, 0.0) if path.relative else path.eps) * (1 + 1e-12) + 1e-300
        assert infeasible <= 1e-12 * max(w, 1.0)  # (rounding of the products computed here)
        assert p - d <= bound + _REFERENCE_SLACK * scale
        assert p - _optimum(name, K, yy, w) <= bound + _REFERENCE_SLACK * scale
    file = tmp_path / f"{name}.npz"
    path.save(file)
    report = approxpath.verify(str(file), X, y)
    assert report.ok, str(report)


def test_c_path_over_decades_of_a_tiny_c_verifies(tmp_path):
    """A C path whose pieces span decades of C ([1e-10, 1e-3]): its moving duals stay inside the
    box by the margin the verifier charges (before: u * max(alpha) of the piece's far end
    exceeded the 1e-12 relative safety at the near end, and every certificate failed verify)."""
    X, y = make_classification(n=30, d=2, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, parameter="c", bandwidth=1.0)
    path = approxpath.approximate_path(problem, eps=1e-2, relative=True, interval=(1e-10, 1e-3))
    assert path.certified
    _check_claims("kernel_svm", X, y, problem, path, 4, 0, tmp_path)


def _duplicated(X):
    half = X[: X.shape[0] // 2]
    return np.vstack([half, half])


_CLASSES = make_classification(n=24, d=2, seed=1)
_TARGETS = make_sinc(n=24, seed=1)


@pytest.mark.parametrize("name", ["kernel_svm", "klasso", "robust_l1", "kernel_ridge"])
@pytest.mark.parametrize("case", ["all rows equal", "half duplicated", "columns 1e-8 and 1e8", "n = 3",
                                  "t where the kernel is the identity", "t where the kernel is all ones"])
def test_hostile_data_certify_true_claims(name, case, tmp_path):
    X, y = _CLASSES if name == "kernel_svm" else _TARGETS
    options = dict(c=1.0) if name == "kernel_svm" else dict(lam=0.1)
    interval = (0.1, 10.0)
    if case == "all rows equal":
        X = np.ones_like(X)
    elif case == "half duplicated":
        X = _duplicated(X)
    elif case == "columns 1e-8 and 1e8":
        X = np.column_stack([X[:, 0] * 1e-8, X[:, -1] * 1e8])
        interval = (1e-17, 1e-15)  # where t * max D is near 1: a kernel that moves
    elif case == "n = 3":
        X, y = X[:3], (np.array([-1.0, 1.0, -1.0]) if name == "kernel_svm" else y[:3])
    elif case == "t where the kernel is the identity":
        interval = (1e8, 1e9)
    else:
        interval = (1e-12, 1e-11)
    problem = approxpath.get_problem(name)(X, y, **options)
    path = approxpath.approximate_path(problem, eps=0.05, interval=interval)
    assert path.certified
    _check_claims(name, X, y, problem, path, 2, 1, tmp_path)


@pytest.mark.parametrize("y, message", [
    (np.r_[np.ones(23), np.nan], "y contains NaN or inf"),
    (np.r_[np.ones(12), -np.ones(11), 0.999], "needs exactly two classes"),
    (np.ones(24), "needs exactly two classes"),
])
def test_hostile_labels_are_refused_in_one_line(y, message):
    X, _ = _CLASSES
    with pytest.raises(InputError, match=message) as info:
        approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    assert "\n" not in str(info.value)
