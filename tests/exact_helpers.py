"""Shared by the exact-path tests: Wang et al.'s sinc set-up and an independent CVXPY kLASSO solve;
Friedman #1 and an independent CVXPY solve of the feature path's inner problem."""

import math

import cvxpy as cp
import numpy as np

from approxpath.data import make_sinc
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import gaussian
from approxpath.exact.feature_path import normalize_columns
from reference_helpers import tight_solve


def wang_sinc(seed=0):
    """Wang et al.'s set-up: 100 points on [-3, 3], noise sd 0.08, a random half for training."""
    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=seed)
    train = np.random.default_rng(seed).permutation(100)[:50]
    return X[train], y[train]


def sinc_csv(file, rows=None):
    """Write Wang et al.'s sinc set-up on 50 points (seed 0) to the CSV ``file`` (the target
    last), its rows ``rows`` (default all); returns ``file``."""
    X, y = make_sinc(n=50, low=-3.0, high=3.0, noise=0.08, seed=0)
    table = np.column_stack([X, y])
    np.savetxt(file, table if rows is None else table[rows], delimiter=",")
    return file


def cvx_klasso(X, y, t, lam, nu=0.0):
    """Independent tight solve of 1/2||y - K_t beta - beta0||^2 + lam ||beta||_1 (+ nu/2 ||beta||^2):
    (value, beta, beta0)."""
    K = gaussian(sq_distances(X), t)
    beta, beta0 = cp.Variable(y.size), cp.Variable()
    obj = 0.5 * cp.sum_squares(y - K @ beta - beta0) + lam * cp.norm1(beta) + 0.5 * nu * cp.sum_squares(beta)
    prob = cp.Problem(cp.Minimize(obj))
    return tight_solve(prob), beta.value, float(beta0.value)


def objective(X, y, t, lam, beta, beta0, nu=0.0):
    r = y - gaussian(sq_distances(X), t) @ beta - beta0
    return 0.5 * float(r @ r) + lam * float(np.abs(beta).sum()) + 0.5 * nu * float(beta @ beta)


def friedman1(n, d, seed, raw=False):
    """Friedman #1 (10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5) with d - 5 irrelevant
    uniform features, no noise; columns centred and of unit norm as in the paper (unless raw)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return (X if raw else normalize_columns(X)), y


def cvxpy_inner(K, y, C):
    """min ||y - K a - a0||^2 s.t. a'K a <= C by Clarabel, in the coordinates c = W^(1/2) Q'a of
    K = Q W Q' (the constraint is ||c|| <= sqrt(C), the fit B c with B = Q W^(1/2); the tiny
    eigenvalues of K near beta = 0 would make the a-form ill-posed for an interior-point solver):
    (objective, fitted values, intercept, multiplier lambda of a'K a <= C)."""
    w, Q = np.linalg.eigh(0.5 * (K + K.T))
    B = Q * np.sqrt(np.clip(w, 0.0, None))
    c, a0 = cp.Variable(y.size), cp.Variable()
    con = cp.norm(c) <= math.sqrt(C)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(y - B @ c - a0)), [con])
    tight_solve(prob, 1e-10)
    # ||y - B c - a0||^2 + mu (||c|| - sqrt C): stationarity 2 lambda c = mu c / ||c|| with ||c|| = sqrt C
    lam = float(np.ravel(con.dual_value)[0]) / (2 * math.sqrt(C))
    return prob.value, B @ c.value + float(a0.value), float(a0.value), lam
