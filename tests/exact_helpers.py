"""Shared by the exact-path tests: Wang et al.'s sinc set-up and an independent CVXPY kLASSO solve."""

import cvxpy as cp
import numpy as np

from approxpath.data import make_sinc
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import gaussian


def wang_sinc(seed=0):
    """Wang et al.'s set-up: 100 points on [-3, 3], noise sd 0.08, a random half for training."""
    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=seed)
    train = np.random.default_rng(seed).permutation(100)[:50]
    return X[train], y[train]


def cvx_klasso(X, y, t, lam, nu=0.0):
    """Independent tight solve of 1/2||y - K_t beta - beta0||^2 + lam ||beta||_1 (+ nu/2 ||beta||^2):
    (value, beta, beta0)."""
    K = gaussian(sq_distances(X), t)
    beta, beta0 = cp.Variable(y.size), cp.Variable()
    obj = 0.5 * cp.sum_squares(y - K @ beta - beta0) + lam * cp.norm1(beta) + 0.5 * nu * cp.sum_squares(beta)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert prob.status == cp.OPTIMAL
    return prob.value, beta.value, float(beta0.value)


def objective(X, y, t, lam, beta, beta0, nu=0.0):
    r = y - gaussian(sq_distances(X), t) @ beta - beta0
    return 0.5 * float(r @ r) + lam * float(np.abs(beta).sum()) + 0.5 * nu * float(beta @ beta)
