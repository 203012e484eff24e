"""The point at t is the certified point, for every built-in problem over the bandwidth and over
its weight, on data used nowhere else in the tests (scikit-learn's Friedman #2 and the wine
data): the objective a user computes with plain numpy from the fields of ``path.primal(t)``
equals ``path.objectives(t)[0]`` to rounding, the dual point's objective equals the second, and
the primal point is within eps of an independent tight optimum (a CVXPY problem written here,
solved by Clarabel at tight tolerances).  The default suite checks 200 random t per path and a
tight optimum at 6 of them; the slow one a tight optimum at all 200."""

import numpy as np
import pytest

import approxpath
from reference_helpers import svm_dual_optimum, tight_solve

cp = pytest.importorskip("cvxpy")
datasets = pytest.importorskip("sklearn.datasets")


def _minmax(X):
    X = np.asarray(X, dtype=float)
    return (X - X.min(axis=0)) / np.maximum(X.max(axis=0) - X.min(axis=0), 1e-12)


@pytest.fixture(scope="module")
def wine():
    X, y = datasets.load_wine(return_X_y=True)
    keep = y < 2  # the first two cultivars: 130 samples, 13 features
    return _minmax(X[keep]), np.where(y[keep] == 0, -1.0, 1.0)


@pytest.fixture(scope="module")
def friedman2():
    X, y = datasets.make_friedman2(n_samples=60, noise=0.1, random_state=3)
    return _minmax(X), (y - y.mean()) / y.std()


def _kernel(X, t):
    return np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))


# ------------------------------------------------------------------ the objectives, from the fields
def _svm_objective(X, y, point, bw, c):
    K = _kernel(X, bw)
    Kw = K @ point.w
    return 0.5 * point.w @ Kw + c * np.maximum(0.0, 1.0 - y * (Kw + point.b)).sum()


def _svm_dual(X, y, point, bw, c):
    a = point.alpha
    return a.sum() - 0.5 * (y * a) @ _kernel(X, bw) @ (y * a)


def _klasso_objective(X, y, point, bw, lam):
    r = y - _kernel(X, bw) @ point.beta - point.beta0
    return 0.5 * r @ r + lam * np.abs(point.beta).sum()


def _klasso_dual(X, y, point, bw, lam):
    return y @ point.u - 0.5 * point.u @ point.u


def _robust_objective(X, y, point, bw, lam):
    return np.abs(y - _kernel(X, bw) @ point.beta).sum() + lam * np.abs(point.beta).sum()


def _robust_dual(X, y, point, bw, lam):
    return y @ point.u


def _ridge_objective(X, y, point, bw, lam):
    Kc = _kernel(X, bw) @ point.c
    return lam * point.c @ Kc + (Kc - y) @ (Kc - y)


def _ridge_dual(X, y, point, bw, lam):
    a = point.a
    return 2 * a @ y - a @ a - a @ _kernel(X, bw) @ a / lam


# ------------------------------------------------------------------ independent tight optima
def _tight(problem):
    return tight_solve(problem, 1e-10)


def _svm_optimum(X, y, bw, c):
    return svm_dual_optimum(_kernel(X, bw), y, c, 1e-10)[0]


def _klasso_optimum(X, y, bw, lam):
    beta, beta0 = cp.Variable(len(y)), cp.Variable()
    K = _kernel(X, bw)
    return _tight(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ beta - beta0) + lam * cp.norm1(beta))))


def _robust_optimum(X, y, bw, lam):
    beta = cp.Variable(len(y))
    return _tight(cp.Problem(cp.Minimize(cp.norm1(y - _kernel(X, bw) @ beta) + lam * cp.norm1(beta))))


def _ridge_optimum(X, y, bw, lam):
    K = _kernel(X, bw)
    c = np.linalg.solve(K + lam * np.eye(len(y)), y)  # the closed form, checked against its own gap
    return lam * c @ K @ c + (K @ c - y) @ (K @ c - y)


# name -> (problem, data, options, interval, eps, objective, dual, optimum)
_CASES = {
    "kernel_svm-bandwidth": ("kernel_svm", "wine", dict(c=1.0), (2.0**-6, 2.0**2), 0.5,
                             _svm_objective, _svm_dual, _svm_optimum),
    "kernel_svm-c": ("kernel_svm", "wine", dict(bandwidth=0.1, parameter="c"), (0.5, 4.0), 1.0,
                     _svm_objective, _svm_dual, _svm_optimum),
    "klasso-bandwidth": ("klasso", "friedman2", dict(lam=0.05), (0.2, 5.0), 0.1,
                         _klasso_objective, _klasso_dual, _klasso_optimum),
    "klasso-lam": ("klasso", "friedman2", dict(bandwidth=1.0, parameter="lam"), (0.02, 1.0), 0.1,
                   _klasso_objective, _klasso_dual, _klasso_optimum),
    "robust_l1-bandwidth": ("robust_l1", "friedman2", dict(lam=0.1), (0.3, 3.0), 0.5,
                            _robust_objective, _robust_dual, _robust_optimum),
    "robust_l1-lam": ("robust_l1", "friedman2", dict(bandwidth=1.0, parameter="lam"), (0.05, 1.0), 0.2,
                      _robust_objective, _robust_dual, _robust_optimum),
    "kernel_ridge-bandwidth": ("kernel_ridge", "friedman2", dict(lam=0.1), (0.1, 10.0), 0.05,
                               _ridge_objective, _ridge_dual, _ridge_optimum),
    "kernel_ridge-lam": ("kernel_ridge", "friedman2", dict(bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05,
                         _ridge_objective, _ridge_dual, _ridge_optimum),
}


@pytest.fixture(scope="module")
def paths(wine, friedman2):
    data = {"wine": wine, "friedman2": friedman2}
    out = {}
    for case, (name, which, options, interval, eps, *_) in _CASES.items():
        X, y = data[which]
        problem = approxpath.get_problem(name)(X, y, **options)
        out[case] = (X, y, problem, approxpath.approximate_path(problem, eps=eps, interval=interval))
    return out


def _check(paths, case, tight):
    name, _, options, interval, eps, objective, dual, optimum = _CASES[case]
    X, y, problem, path = paths[case]
    assert path.certified
    rng = np.random.default_rng(11)
    ts = np.exp(rng.uniform(*np.log(interval), 200))
    for k, t in enumerate(ts):
        bw, weight = problem.sweep.at(t)
        primal, dual_point = path.primal(t), path.dual(t)
        upper, lower = path.objectives(t)
        mine = objective(X, y, primal, bw, weight)
        assert mine == pytest.approx(upper, rel=1e-9, abs=1e-9), (case, t)
        assert dual(X, y, dual_point, bw, weight) == pytest.approx(lower, rel=1e-9, abs=1e-9), (case, t)
        assert upper - lower <= path.gap_bound(t) * (1 + 1e-9) + 1e-12
        if k < tight:
            assert mine - optimum(X, y, bw, weight) <= eps + 1e-6 * (1 + abs(mine)), (case, t)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_point_at_t_is_the_certified_point(paths, case):
    _check(paths, case, tight=6)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_point_at_t_is_eps_optimal_at_200_random_t(paths, case):
    _check(paths, case, tight=200)
