"""Search side of ridge regression over lambda: the CVXPY specification, the exact solve (one
linear system) and the restoration (the carried pair as is: neither side has constraints)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from approxpath.problem import Declaration, Problem

from .bound import RidgeBound, RidgeDual, RidgePrimal

__all__ = ["Ridge"]


class Ridge(Problem):
    """Ridge regression over its regularization weight lambda.

    :math:`\\min_w \\lVert Xw - y\\rVert^2 + \\lambda\\lVert w\\rVert^2`, with the dual
    :math:`\\max_a 2a^\\top y - \\lVert a\\rVert^2 - \\lVert X^\\top a\\rVert^2/\\lambda`.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    parameter : {"lam"}
        The path parameter.
    """

    name = "ridge"
    Bound = RidgeBound
    backends = ("cholesky", "clarabel", "scs")
    criteria = ("mse", "mae")

    def __init__(self, X, y, *, parameter="lam"):
        super().__init__(X, y, parameter=parameter)

    def default_interval(self):
        return (1e-3, 1e3)

    @classmethod
    def examples(cls):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((30, 5))
        y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(30)
        return [(cls(X, y), (0.01, 10.0), 0.05)]

    def cvxpy_primal(self, lam):
        import cvxpy as cp

        w = cp.Variable(self.X.shape[1], name="w")
        return Declaration(cp.Problem(cp.Minimize(cp.sum_squares(self.X @ w - self.y) + lam * cp.sum_squares(w))),
                           dict(w=w))

    def cvxpy_dual(self, lam):
        import cvxpy as cp

        a = cp.Variable(self.n, name="a")
        obj = 2 * (self.y @ a) - cp.sum_squares(a) - cp.sum_squares(self.X.T @ a) / lam
        return Declaration(cp.Problem(cp.Maximize(obj)), dict(a=a))

    def candidate(self, backend, lam, warm=None):
        """``cholesky``: :math:`(X^\\top X + \\lambda I) w = X^\\top y`; else the CVXPY declarations."""
        if backend != "cholesky":
            return super().candidate(backend, lam, warm)
        A = self.X.T @ self.X + lam * np.eye(self.X.shape[1])
        w = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), self.X.T @ self.y)
        return RidgePrimal(w=w), RidgeDual(a=self.y - self.X @ w)

    def restore(self, primal, dual, lo, hi=None):
        return primal, dual  # unconstrained on both sides: feasible for every lambda

    def primal_objective(self, primal, lam):
        r = self.X @ primal.w - self.y
        return float(r @ r) + lam * float(primal.w @ primal.w)

    def dual_objective(self, dual, lam):
        Xa = self.X.T @ dual.a
        return 2.0 * float(dual.a @ self.y) - float(dual.a @ dual.a) - float(Xa @ Xa) / lam

    def primal_violation(self, primal, lam):
        return 0.0 if np.all(np.isfinite(primal.w)) else np.inf

    def dual_violation(self, dual, lam):
        return 0.0 if np.all(np.isfinite(dual.a)) else np.inf

    def predict(self, primal, lam, X_new):
        """:math:`f(x) = x^\\top w` for the rows of ``X_new`` (m, d): shape (m,)."""
        return np.asarray(X_new, dtype=float) @ primal.w
