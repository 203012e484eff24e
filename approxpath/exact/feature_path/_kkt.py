"""The KKT system (5) of Li & Sminchisescu, its Jacobian (6), and the inner kernel ridge solve.

With :math:`H = I - \\tfrac1n \\mathbf 1\\mathbf 1^\\top`, active features :math:`\\mathcal A =
(k_1, \\dots, k_p)` and :math:`q_j = \\alpha^\\top \\partial_j K \\alpha`, the unknowns
:math:`z = (\\alpha, \\beta_{\\mathcal A}, \\lambda)` (n + p + 1) satisfy the n + p equations

.. math::

    F_1 = (HK(\\beta) + \\lambda I)\\alpha - Hy = 0, \\qquad
    F_2 = (q_{k_i} - q_{k_{i+1}})_{i < p} = 0, \\qquad
    F_3 = \\alpha^\\top K(\\beta)\\alpha - C = 0,

so the solutions form a curve whose tangent spans the null space of the Jacobian

.. math::

    J = \\begin{bmatrix} HK + \\lambda I & H\\,\\partial_l K\\alpha & \\alpha \\\\
        2(\\partial_{k_i}K\\alpha - \\partial_{k_{i+1}}K\\alpha)^\\top &
        \\alpha^\\top(\\partial_{k_i}\\partial_l K - \\partial_{k_{i+1}}\\partial_l K)\\alpha & 0 \\\\
        2(K\\alpha)^\\top & q_l & 0 \\end{bmatrix}, \\quad l \\in \\mathcal A .

The *equation* features (the chain of equal :math:`q`) and the *variable* features (the β that
move) are the same list on a smooth piece; at an event they differ by one, which makes the
system square (Newton correction (10)): a joining feature j is an equation feature with
:math:`\\beta_j = 0` fixed, a leaving feature k keeps its equation with :math:`\\beta_k = 0` fixed.
The intercept is :math:`\\alpha_0 = \\operatorname{mean}(y - K\\alpha)` (its own stationarity);
:math:`F_1` then says :math:`\\lambda\\alpha = y - K\\alpha - \\alpha_0\\mathbf 1`.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from approxpath.errors import SolverError

__all__ = ["System", "Point", "inner_solve"]

# Eigenvalues of HKH below this multiple of the largest are treated as 0 when deciding whether
# the constraint alpha'K alpha <= C can be active (a rank-deficient kernel, e.g. polynomial).
_RANK_REL = 1e-13


class Point:
    """(α, β, λ) with the kernel evaluated at β: ``ev`` (see ``_kernels``), ``Ka`` = Kα and the
    forms ``q`` (d,) of all features."""

    __slots__ = ("alpha", "beta", "lam", "ev", "Ka", "q")

    def __init__(self, kern, alpha, beta, lam):
        self.alpha, self.beta, self.lam = alpha, beta, float(lam)
        self.ev = kern.at(beta)
        self.Ka = self.ev.K @ alpha
        self.q = self.ev.forms(alpha)

    def eta(self, eq):
        """The common value of :math:`q` over the equation features (their mean)."""
        return float(np.mean(self.q[list(eq)]))


class System:
    """The system (5) for training data ``(X, y)`` through a kernel object, budget ``C``."""

    def __init__(self, kern, y, C):
        self.kern, self.y, self.C = kern, np.asarray(y, dtype=float), float(C)
        self.yc = self.y - self.y.mean()
        self.n = self.y.size
        self.jacobian_calls = 0

    def point(self, alpha, beta, lam):
        return Point(self.kern, alpha, beta, lam)

    def intercept(self, p):
        return float(np.mean(self.y - p.Ka))

    # ------------------------------------------------------------------ variables
    def pack(self, p, var):
        return np.concatenate([p.alpha, p.beta[list(var)], [p.lam]])

    def unpack(self, z, base_beta, var):
        n = self.n
        beta = base_beta.copy()
        beta[list(var)] = z[n:n + len(var)]
        return self.point(z[:n].copy(), beta, z[-1])

    # ------------------------------------------------------------------ equations
    def row_scales(self, p, eq):
        """Scales of the three blocks of rows (fixed during one correction)."""
        qs = max(float(np.max(np.abs(p.q[list(eq)]))), 1e-300)
        return max(float(np.max(np.abs(self.yc))), 1e-300), qs, self.C

    def residual(self, p, eq, scales):
        s1, s2, s3 = scales
        f1 = (p.Ka - p.Ka.mean()) + p.lam * p.alpha - self.yc
        qe = p.q[list(eq)]
        f2 = qe[:-1] - qe[1:]
        f3 = p.alpha @ p.Ka - self.C
        return np.concatenate([f1 / s1, f2 / s2, [f3 / s3]])

    def jacobian(self, p, eq, var, scales):
        """The Jacobian (6) of :meth:`residual` in ``(α, β_var, λ)``, rows scaled."""
        self.jacobian_calls += 1
        s1, s2, s3 = scales
        n, K, a = self.n, p.ev.K, p.alpha
        eq, var = list(eq), list(var)
        bs = p.ev.first_vectors(a, eq)
        b = {k: bs[i] for i, k in enumerate(eq)}
        h = p.ev.second_forms(a, eq, var)
        J = np.zeros((n + len(eq), n + len(var) + 1))
        J[:n, :n] = K - K.mean(axis=0)[None, :]
        J[np.arange(n), np.arange(n)] += p.lam
        for c, l in enumerate(var):
            J[:n, n + c] = b[l] - b[l].mean()
        J[:n, -1] = a
        for i in range(len(eq) - 1):
            J[n + i, :n] = 2.0 * (b[eq[i]] - b[eq[i + 1]])
            J[n + i, n:n + len(var)] = h[i] - h[i + 1]
        J[-1, :n] = 2.0 * p.Ka
        J[-1, n:n + len(var)] = p.q[var]
        J[:n] /= s1
        J[n:-1] /= s2
        J[-1] /= s3
        return J


def inner_solve(K, y, C):
    """The kernel ridge regression with intercept at a fixed kernel, exactly:

    .. math::

        \\min_{\\alpha, \\alpha_0} \\lVert y - K\\alpha - \\alpha_0 \\mathbf 1\\rVert^2
        \\quad\\text{s.t.}\\quad \\alpha^\\top K\\alpha \\le C .

    With :math:`HKH = Q\\Lambda Q^\\top` and :math:`c = Q^\\top Hy`, the stationary point for
    multiplier λ is :math:`\\alpha = Q(\\Lambda + \\lambda I)^{-1}c` and
    :math:`\\alpha^\\top K\\alpha = \\sum_k \\Lambda_k c_k^2/(\\Lambda_k + \\lambda)^2`, decreasing
    in λ: one root (Brent's method on :math:`\\log\\lambda`).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD (:math:`HKH` is symmetrized and its negative eigenvalues clipped to 0).
    y : array_like of shape (n,)
    C : float
        The budget, > 0.

    Returns
    -------
    alpha : ndarray of shape (n,)
        With :math:`\\mathbf 1^\\top\\alpha = 0`.
    alpha0 : float
        :math:`\\operatorname{mean}(y - K\\alpha)`.
    lam : float
        The multiplier of the constraint (> 0).

    Raises
    ------
    SolverError
        When the constraint cannot be active (C at least the :math:`K`-norm of the
        least-squares fit): the path of (5) needs λ > 0; or no multiplier is found above
        :math:`e^{-200}` times the largest one searched (a constraint barely active).
    """
    y = np.asarray(y, dtype=float)
    yc = y - y.mean()
    M = K - K.mean(axis=0)[None, :]
    M = M - M.mean(axis=1)[:, None]
    M = 0.5 * (M + M.T)
    w, Q = scipy.linalg.eigh(M)
    w = np.clip(w, 0.0, None)
    c = Q.T @ yc
    big = w > _RANK_REL * max(float(w[-1]), 1e-300)
    if np.sum(c[big] ** 2 / w[big]) <= C:
        raise SolverError(f"alpha'K alpha <= C is not active (C = {C:g} is at least the K-norm of the least-squares "
                          "fit): the feature path needs the constraint active; choose a smaller C")

    def excess(mu):
        lam = math.exp(mu)
        return math.log(np.sum(w * c**2 / (w + lam) ** 2)) - math.log(C)

    # phi(lam) <= sum w c^2 / lam^2 < C there (0.01 past that point; 1e-300 keeps the log finite)
    hi = 0.5 * math.log(max(np.sum(w * c**2) / C, 1e-300)) + 0.01
    lo = hi - 5.0  # steps of a factor e^5 ~ 150 in lambda down to a sign change
    while excess(lo) < 0:
        lo -= 5.0
        if lo < hi - 200:  # exp(-200): nothing left to find in double precision
            raise SolverError("inner kernel ridge solve: no multiplier found (the constraint is barely active)")
    from scipy.optimize import brentq  # (here: `approxpath exact` and `crosscheck` need none of it, ~0.15 s)

    # log lambda to the last bits (brentq's smallest rtol); 200 iterations: far more than it takes
    mu = brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    lam = math.exp(mu)
    alpha = Q @ (c / (w + lam))
    alpha -= alpha.mean()
    return alpha, float(np.mean(y - K @ alpha)), lam
