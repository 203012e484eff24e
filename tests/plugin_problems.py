"""Problems the tests declare as a plug-in would: registered once, by ``conftest``, for the whole
session, so the registry-wide tests (the conformance battery, the independent check, the
properties) cover the same problems whatever order the test files run in.

* :class:`Lasso`: a lasso declared only in CVXPY, whose dual constraint moves with lam;
* :class:`Smoother`, :class:`ResidualSmoother`: a kernel smoother over the bandwidth, the
  second with a residual variable whose constraint moves with t;
* :class:`SampledToy`, :class:`SampledRidge`: the toy projection and kernel ridge regression
  with their interval bounds switched off (sampled paths)."""

import cvxpy as cp
import numpy as np
from scipy.spatial.distance import pdist, squareform

import approxpath
from approxpath.bound import Option
from approxpath.testing import ToyBound, ToyProjection

KernelRidge = approxpath.get_problem("kernel_ridge")


def regression(n=40, d=6, seed=0):
    """A seeded linear regression set: X (n, d), y (n,) from three active coefficients."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ np.r_[1.5, -2.0, np.zeros(d - 3), 1.0] + 0.3 * rng.standard_normal(n)
    return X, y


class Lasso(approxpath.CvxpyProblem):
    """The lasso over lam: its dual constraint ||X'u||_inf <= lam moves with lam (the
    restoration scales u at each end of a piece)."""

    name, parameters = "lasso_cvxpy", ("lam",)
    variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")

    @staticmethod
    def declare(X, y, lam):
        n, d = X.shape
        beta, u = cp.Variable(d, name="beta"), cp.Variable(n, name="u")
        primal = cp.Problem(cp.Minimize(cp.sum_squares(y - X @ beta) / (2 * n) + lam * cp.norm1(beta)))
        dual = cp.Problem(cp.Maximize(y @ u - n / 2 * cp.sum_squares(u)), [cp.norm_inf(X.T @ u) <= lam])
        return primal, dual

    @classmethod
    def examples(cls):
        X, y = regression(n=20, d=4, seed=3)
        return [(cls(X, y), (0.01, 1.0), 0.01)]


class NonNegativeLasso(approxpath.CvxpyProblem):
    """The lasso with w >= 0 over lam: its dual constraint X'a <= lam holds entry by entry (each
    entry feasible to the tolerance of its own size, as a solver's point is)."""

    name, parameters = "nonnegative_lasso_cvxpy", ("lam",)
    variables, dual_variables, carried = ("w",), ("a",), ("w", "a")

    @staticmethod
    def declare(X, y, lam):
        w, a = cp.Variable(X.shape[1], name="w"), cp.Variable(len(y), name="a")
        primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ w - y) + lam * cp.sum(w)), [w >= 0])
        dual = cp.Problem(cp.Maximize(y @ a - 0.5 * cp.sum_squares(a)), [X.T @ a <= lam])
        return primal, dual

    @classmethod
    def examples(cls):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((30, 5))
        y = X @ np.array([1.0, 0.0, 2.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(30)
        return [(cls(X, y), (0.5, 5.0), 0.05)]


class Smoother(approxpath.CvxpyProblem):
    """A kernel smoother with a ridge on its coefficients over the bandwidth: t inside exp(-tD)."""

    name, parameters = "smoother_cvxpy", ("bandwidth",)
    variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")
    OPTIONS = dict(lam=Option("positive", default=0.1))

    @staticmethod
    def declare(X, y, t, lam):
        K = cp.exp(-t * squareform(pdist(X, "sqeuclidean")))
        beta, u = cp.Variable(len(y), name="beta"), cp.Variable(len(y), name="u")
        primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ beta) + lam * cp.sum_squares(beta)))
        dual = cp.Problem(cp.Maximize(y @ u - 0.5 * cp.sum_squares(u) - cp.sum_squares(K @ u) / (4 * lam)))
        return primal, dual

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=12, seed=2)
        return [(cls(X, y, lam=0.1), (0.5, 8.0), 0.05)]


class ResidualSmoother(Smoother):
    """The same problem with the residual as a variable whose constraint moves with t: the
    primal is restored at each sampled point (beta carried up to a scale, r re-optimized)."""

    name = "residual_smoother_cvxpy"
    variables = ("beta", "r")

    @staticmethod
    def declare(X, y, t, lam):
        K = cp.exp(-t * squareform(pdist(X, "sqeuclidean")))
        beta, r, u = (cp.Variable(len(y), name=name) for name in ("beta", "r", "u"))
        primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(r) + lam * cp.sum_squares(beta)), [r == y - K @ beta])
        dual = cp.Problem(cp.Maximize(y @ u - 0.5 * cp.sum_squares(u) - cp.sum_squares(K @ u) / (4 * lam)))
        return primal, dual


class SampledToyBound(ToyBound):
    name = "toy_sampled"
    interval_bound = False


class SampledToy(ToyProjection):
    """The toy projection with its interval bound switched off."""

    name = "toy_sampled"
    Bound = SampledToyBound


class SampledRidgeBound(KernelRidge.Bound):
    name = "kernel_ridge_sampled"
    interval_bound = False


class SampledRidge(KernelRidge):
    """Kernel ridge regression with its interval bound switched off."""

    name = "kernel_ridge_sampled"
    Bound = SampledRidgeBound


#: What ``conftest`` registers, in this order.
PROBLEMS = (Lasso, NonNegativeLasso, Smoother, ResidualSmoother, SampledToy, SampledRidge)
