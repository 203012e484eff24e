"""An exact, warm-startable solver for the kernelized LASSO with an unpenalized intercept.

.. math::

    \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K\\beta - \\beta_0 \\mathbf 1\\rVert^2
    + \\lambda \\lVert\\beta\\rVert_1,
    \\qquad
    \\max_{u}\\; y^\\top u - \\tfrac12 \\lVert u\\rVert^2
    \\quad\\text{s.t.}\\quad \\lVert K u\\rVert_\\infty \\le \\lambda,\\; \\mathbf 1^\\top u = 0,

``K`` (n, n) dense and symmetric (a Gaussian kernel :math:`K_t = e^{-tD}`).  At the optimum
the dual point is the residual :math:`u = y - K\\beta - \\beta_0\\mathbf 1`.

*Feature-sign search* (Lee, Battle, Raina and Ng, NIPS 2006) from a start point (a
neighbouring bandwidth's solution, or 0): given an active set :math:`A` and signs
:math:`\\sigma`, the optimality conditions :math:`K_A^\\top r = \\lambda\\sigma`,
:math:`\\mathbf 1^\\top r = 0`, :math:`r = y - K_A\\beta_A - \\beta_0\\mathbf 1` are solved by a
QR factorization :math:`[\\mathbf 1, K_A] = QR` (:func:`_fit`: the residual comes out as
:math:`r = y - Q(Q^\\top y - w)`, accurate where :math:`K` is nearly singular and
:math:`\\lVert\\beta\\rVert_1` is in the thousands); a discrete line search toward that point
keeps the objective decreasing, so no active set is visited twice (finite termination), and
when the conditions hold on :math:`A` the most violated inactive coefficient enters.

Cost per step: one product with ``K`` (O(n^2)) and a QR of the n x (|A| + 1) active columns,
on one BLAS thread (:mod:`approxpath.blas`).  Warm solves along a bandwidth path take 30-300
steps at n = 1000 (13 bandwidths from 2^-3 to 2^5: 0.84 s in all).  An l1 homotopy from the
neighbour's solution (Asif and Romberg) was measured 5x slower at n = 1000 and 40x at n = 4000:
on densely sampled data the active coefficients hop from sample to sample as the bandwidth
changes, and the homotopy follows every hop (hundreds to thousands of breaks per solve).

Nothing here is trusted by a certificate: the caller restores the point and computes its
own duality gap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from approxpath.compute.parallelism import load_blas, managed
from approxpath.errors import InputError, SolverError
from approxpath.validate import check_gram_problem

__all__ = ["LassoSolution", "solve_klasso"]

# A column whose QR pivot |R_jj| is below this fraction of the largest pivot makes [1, K_A]
# numerically rank deficient (the same threshold as klasso's polish): it cannot enter.
_RANK_TOL = 1e-13
# Optimality: |(K r)_j| <= lam (1 + tol) for every inactive j.  1e-12 relative is a few
# thousand ulps of lam: the products K r themselves are only accurate to ~n u ||r||_1, and a
# violation this small moves the restored dual's scale, hence the gap, by ~1e-12 relative.
DEFAULT_TOL = 1e-12
# Feature-sign steps allowed per solve: each takes a coefficient in or out; a cold solve needs
# a few |A| of them, a warm one fewer.  20 + 4 n is
# far above either and only stops a loop that rounding keeps from settling.
_STEPS_PER_POINT = 4
_STEPS_BASE = 20



@dataclass(frozen=True)
class LassoSolution:
    """What :func:`solve_klasso` returns.

    Attributes
    ----------
    beta : ndarray (n,)
        Coefficients, exactly 0 off the active set.
    beta0 : float
        Intercept.
    u : ndarray (n,)
        The residual :math:`y - K\\beta - \\beta_0\\mathbf 1` (the dual point; :math:`\\mathbf
        1^\\top u = 0` up to rounding), computed from the factorization (accurate even when
        :math:`\\lVert\\beta\\rVert` is huge).
    active : ndarray of int
        The active set (indices of the nonzero coefficients), ascending.
    violation : float
        :math:`\\max_j |(K u)_j| / \\lambda - 1` (at most ``tol`` when ``converged``).
    converged : bool
        The optimality conditions hold to ``tol``; otherwise ``beta``/``u`` are the best point
        reached (still a candidate: the caller's gap decides).
    iterations : int
        Feature-sign steps taken (each one QR of [1, K_A]).
    seconds : float
    """

    beta: np.ndarray
    beta0: float
    u: np.ndarray
    active: np.ndarray
    violation: float
    converged: bool
    iterations: int
    seconds: float


def _factor(K, A):
    """QR of :math:`M = [\\mathbf 1, K_A]` (n, |A| + 1), or None when it is numerically rank deficient."""
    M = np.empty((K.shape[0], A.size + 1))
    M[:, 0] = 1.0
    M[:, 1:] = K[A].T  # K is symmetric: gathering rows reads contiguous memory
    from scipy.linalg import qr  # (here: `approxpath problems` lists klasso without scipy.linalg, ~0.2 s)

    load_blas()  # (scipy's OpenBLAS on one thread from this first use on)
    Q, R = qr(M, mode="economic", check_finite=False)
    diag = np.abs(R.diagonal())
    return (Q, R) if diag.min() > _RANK_TOL * diag.max() else None


def _fit(Q, R, y, c):
    """The point of the optimality conditions :math:`M^\\top r = c`, :math:`r = y - Mz` with
    :math:`M = QR`: ``(z, r)``.  With :math:`R^\\top w = c`: :math:`Rz = Q^\\top y - w` and
    :math:`r = y - Q(Q^\\top y - w)` (accurate even when ``z`` is huge)."""
    from scipy.linalg import solve_triangular

    w = solve_triangular(R, c, trans="T", check_finite=False)
    qy = Q.T @ y
    return solve_triangular(R, qy - w, check_finite=False), y - Q @ (qy - w)


def _sign_fit(K, y, A, sign, lam):
    """Minimizer of :math:`\\tfrac12\\lVert y - K_A b - b_0\\mathbf 1\\rVert^2 + \\lambda\\sigma^\\top b`
    (stationarity :math:`[\\mathbf 1, K_A]^\\top r = (0, \\lambda\\sigma)`, :func:`_fit`).

    Returns
    -------
    (b (|A|,), b0, r (n,)) or None when ``[1, K_A]`` is numerically rank deficient.
    """
    qr_ = _factor(K, A)
    if qr_ is None:
        return None
    z, r = _fit(*qr_, y, np.concatenate(([0.0], lam * sign)))
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(r))):
        return None
    return z[1:], float(z[0]), r


def _line_search(b, r, b_new, r_new, lam):
    """The best point of the segment from ``(b, r)`` to ``(b_new, r_new)`` among its end and
    the points where a coefficient of ``b`` crosses zero; the objective
    :math:`\\tfrac12\\lVert r\\rVert^2 + \\lambda\\lVert b\\rVert_1` is evaluated with the true
    absolute values (feature-sign search's discrete line search).  The residual is affine in
    the step.  Returns ``alpha``, the step in [0, 1]; a coefficient crossing zero at ``alpha``
    is set to 0 by the caller."""
    d = b_new - b
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = -b / d
    alphas = np.unique(np.concatenate(([1.0], cross[(b != 0) & (cross > 0) & (cross < 1)])))
    dr = r_new - r
    rr, rd, dd = float(r @ r), float(r @ dr), float(dr @ dr)
    l1 = np.abs(b[None, :] + alphas[:, None] * d[None, :]).sum(axis=1)
    values = 0.5 * (rr + 2 * alphas * rd + alphas * alphas * dd) + lam * l1
    return float(alphas[int(np.argmin(values))]), cross


def _check(K, y, lam, warm):
    K, y, lam = check_gram_problem("solve_klasso", K, y, lam)
    if warm is not None:
        beta = np.asarray(getattr(warm, "beta", warm), dtype=float)
        if beta.shape != y.shape or not np.all(np.isfinite(beta)):
            raise InputError(f"warm must be a LassoSolution or {y.size} finite coefficients; got shape {beta.shape}")
        warm = beta
    return K, y, float(lam), warm


def _check_clock(deadline):
    if time.perf_counter() > deadline:
        raise SolverError("feature-sign search: MaxTime (reached time_limit)")


def _feature_sign(K, y, lam, A, b, b0, r, tol, max_steps, deadline):
    """Feature-sign search (see the module docstring) from the point ``b`` on ``A`` (intercept
    ``b0``, residual ``r``) until :math:`|(K r)_j| \\le \\lambda(1 + tol)` after a full step.
    Returns ``(A, b, b0, r, steps)``."""
    n = y.size
    sign = np.sign(b)
    blocked = np.zeros(n, dtype=bool)  # entering made [1, K_A] rank deficient (until A shrinks)
    steps, optimal_on_A = 0, False
    while steps < max_steps:
        _check_clock(deadline)
        if optimal_on_A:  # let the most violated inactive coefficient in
            g = K @ r
            out = np.abs(g)
            out[A] = 0.0
            out[blocked] = 0.0
            j = int(np.argmax(out))
            if not out[j] > lam * (1.0 + tol):
                break
            A, b, sign = np.append(A, j), np.append(b, 0.0), np.append(sign, np.sign(g[j]))
        fit = _sign_fit(K, y, A, sign, lam)
        steps += 1
        if fit is None:
            if optimal_on_A:  # the newest column is (numerically) in the span of the others
                blocked[A[-1]] = True
                A, b, sign = A[:-1], b[:-1], sign[:-1]
            else:  # only a start's support can be rank deficient: start from beta = 0
                A, b, sign, b0 = A[:0], b[:0], sign[:0], float(y.mean())
                r, optimal_on_A = y - b0, True
            continue
        b_new, b0_new, r_new = fit
        alpha, cross = _line_search(b, r, b_new, r_new, lam)
        if alpha == 1.0:
            # the fit is optimal on A only if its signs are the ones it assumed
            optimal_on_A = bool(np.array_equal(np.sign(b_new), sign))
            b, b0, r = b_new, b0_new, r_new
            keep = b != 0.0
        else:
            hit = (b != 0) & (cross == alpha)
            b, b0, r = b + alpha * (b_new - b), b0 + alpha * (b0_new - b0), r + alpha * (r_new - r)
            b[hit] = 0.0
            keep, optimal_on_A = b != 0.0, False
        if not keep.all():
            A, b, blocked[:] = A[keep], b[keep], False
        sign = np.sign(b)
    return A, b, b0, r, steps


@managed
def solve_klasso(K, y, lam, *, warm=None, tol=DEFAULT_TOL, max_steps=None, time_limit=None):
    """Solve the kLASSO exactly (to rounding) by feature-sign search from the start point.

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric kernel matrix (only the columns of the active set and products with ``K``
        are used).
    y : ndarray (n,)
    lam : float
        :math:`\\lambda > 0`.
    warm : LassoSolution or ndarray (n,), optional
        A start point, typically the solution at a neighbouring bandwidth: its coefficients
        (support, signs and values) start the search.  Default: :math:`\\beta = 0`.
    tol : float
        Optimality: :math:`\\max_j |(K r)_j| \\le \\lambda (1 + tol)` (with signs that agree).
    max_steps : int, optional
        Limit on feature-sign steps (default ``20 + 4 n``).
    time_limit : float, optional
        Seconds; past it the search stops with a :class:`~approxpath.errors.SolverError`
        naming ``MaxTime`` (the conic backends' word for it).

    Returns
    -------
    LassoSolution
        ``converged`` is False when the limit or a rank-deficient active set stopped the
        search; the point is then the best reached.
    """
    t0 = time.perf_counter()
    deadline = np.inf if time_limit is None else t0 + float(time_limit)
    K, y, lam, warm = _check(K, y, lam, warm)
    n = y.size
    max_steps = _STEPS_BASE + _STEPS_PER_POINT * n if max_steps is None else int(max_steps)
    A = np.flatnonzero(warm) if warm is not None else np.zeros(0, dtype=int)
    b = warm[A] if warm is not None else np.zeros(0)
    fit = y - b @ K[A]
    b0 = float(fit.mean())
    A, b, b0, r, steps = _feature_sign(K, y, lam, A, b, b0, fit - b0, tol, max_steps, deadline)
    beta = np.zeros(n)
    beta[A] = b
    violation = float(np.max(np.abs(K @ r))) / lam - 1.0
    return LassoSolution(beta=beta, beta0=float(b0), u=r, active=np.sort(A), violation=violation,
                         converged=bool(violation <= tol), iterations=steps,
                         seconds=time.perf_counter() - t0)
