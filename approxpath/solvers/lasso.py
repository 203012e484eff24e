"""An exact, warm-startable solver for the kernelized LASSO with an unpenalized intercept.

.. math::

    \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K\\beta - \\beta_0 \\mathbf 1\\rVert^2
    + \\lambda \\lVert\\beta\\rVert_1,
    \\qquad
    \\max_{u}\\; y^\\top u - \\tfrac12 \\lVert u\\rVert^2
    \\quad\\text{s.t.}\\quad \\lVert K u\\rVert_\\infty \\le \\lambda,\\; \\mathbf 1^\\top u = 0,

``K`` (n, n) dense and symmetric (a Gaussian kernel :math:`K_t = e^{-tD}`).  At the optimum
the dual point is the residual :math:`u = y - K\\beta - \\beta_0\\mathbf 1`.

Two active-set stages, both built on one linear system: given an active set :math:`A` and
signs :math:`\\sigma`, the optimality conditions :math:`K_A^\\top r = \\lambda\\sigma`,
:math:`\\mathbf 1^\\top r = 0`, :math:`r = y - K_A\\beta_A - \\beta_0\\mathbf 1` are solved by a
QR factorization :math:`[\\mathbf 1, K_A] = QR` (:func:`_affine_fit`: the residual comes out
as :math:`r = y - Q(Q^\\top y - w)`, accurate where :math:`K` is nearly singular and
:math:`\\lVert\\beta\\rVert_1` is in the thousands).

1. :func:`_homotopy`: the start point (a neighbouring bandwidth's solution, or 0) is optimal
   for the kLASSO plus a linear term :math:`v^\\top\\beta`; the term is removed along
   :math:`\\mu \\in [0, 1]`, on which the solution is piecewise affine (one coefficient in or
   out per break; the QR is updated by one column).  Near the optimum there are few breaks.
2. :func:`_feature_sign`: *feature-sign search* (Lee, Battle, Raina and Ng, NIPS 2006),
   which decreases the objective at every step and so visits no active set twice (finite
   termination): it certifies the homotopy's end point in one step (from a fresh QR), or
   takes over where the homotopy met a numerically rank-deficient active set.

Cost per break or step: one product with ``K`` (O(n^2)) and an O(n |A|) QR update.  On
densely sampled data the active coefficients travel from sample to neighbouring sample as
the bandwidth changes, and every hop is two breaks: warm solves along a path take ~13
breaks at n = 100 and ~50-150 at n = 1000.

Nothing here is trusted by a certificate: the caller restores the point and computes its
own duality gap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, qr, qr_delete, qr_insert, solve_triangular

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
# Steps allowed per stage of a solve (homotopy events, feature-sign steps): each takes a
# coefficient in or out; a cold solve needs a few |A| of them, a warm one a few.  20 + 4 n is
# far above either and only stops a loop that rounding keeps from settling.
_STEPS_PER_POINT = 4
_STEPS_BASE = 20
# The homotopy updates the QR of [1, K_A] by one column per event (O(n |A|) instead of a new
# O(n |A|^2) factorization); every this many events it refactors from scratch so that the
# updates' rounding (orthogonality of Q drifting by ~u per update) cannot accumulate.  The
# final point is computed from a fresh factorization in any case (feature-sign's first step).
_REFACTOR_EVERY = 32


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
    Q, R = qr(M, mode="economic", check_finite=False)
    diag = np.abs(R.diagonal())
    return (Q, R) if diag.min() > _RANK_TOL * diag.max() else None


def _affine_fit(Q, R, y, c0, c1):
    """The point of the optimality conditions :math:`M^\\top r = c_0 + \\mu c_1`,
    :math:`r = y - Mz` as affine functions of :math:`\\mu`: ``(z0, z1, r0, r1)`` with
    :math:`z = z_0 + \\mu z_1`, :math:`r = r_0 + \\mu r_1`.

    With :math:`M = QR` and :math:`R^\\top w = c`: :math:`Rz = Q^\\top y - w` and
    :math:`r = y - Q(Q^\\top y - w)` (accurate even when ``z`` is huge)."""
    w0 = solve_triangular(R, c0, trans="T", check_finite=False)
    w1 = solve_triangular(R, c1, trans="T", check_finite=False)
    qy = Q.T @ y
    z0 = solve_triangular(R, qy - w0, check_finite=False)
    z1 = -solve_triangular(R, w1, check_finite=False)
    r0 = y - Q @ (qy - w0)
    r1 = Q @ w1
    return z0, z1, r0, r1


def _sign_fit(K, y, A, sign, lam):
    """Minimizer of :math:`\\tfrac12\\lVert y - K_A b - b_0\\mathbf 1\\rVert^2 + \\lambda\\sigma^\\top b`
    (stationarity :math:`[\\mathbf 1, K_A]^\\top r = (0, \\lambda\\sigma)`, :func:`_affine_fit`).

    Returns
    -------
    (b (|A|,), b0, r (n,)) or None when ``[1, K_A]`` is numerically rank deficient.
    """
    qr_ = _factor(K, A)
    if qr_ is None:
        return None
    z, _, r, _ = _affine_fit(*qr_, y, np.concatenate(([0.0], lam * sign)), np.zeros(A.size + 1))
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
        raise SolverError("homotopy: MaxTime (reached time_limit)")


def _homotopy(K, y, lam, A, b, max_events, deadline):
    """Follow the solution from the start point ``b`` (on the active set ``A``) to the optimum.

    The start is made optimal for a perturbed problem: with :math:`r` its residual (intercept
    refitted), :math:`g = K r` and offsets :math:`v_j = g_j - \\lambda\\,\\mathrm{sign}(b_j)` on
    ``A`` and :math:`v_j = g_j` off it where :math:`|g_j| > \\lambda` (0 elsewhere; a violated constraint
    starts strictly inside, not on its bound, where the many ties of a cold start would
    stall the path), the start solves
    :math:`\\min \\tfrac12\\lVert y - K\\beta - \\beta_0\\mathbf 1\\rVert^2 + \\lambda\\lVert\\beta
    \\rVert_1 + (1 - \\mu)\\, v^\\top\\beta` at :math:`\\mu = 0`, and :math:`\\mu = 1` is the
    kLASSO (Asif and Romberg's warm-started l1 homotopy).  While the active set and signs hold,
    :math:`K_A^\\top r = \\lambda\\sigma + (1 - \\mu) v_A` and :math:`\\mathbf 1^\\top r = 0`
    make :math:`\\beta` and :math:`r` affine in :math:`\\mu` (:func:`_affine_fit`); the path
    breaks where an active coefficient reaches 0 (it leaves) or an inactive
    :math:`h_j = (Kr)_j - (1 - \\mu) v_j` reaches :math:`\\pm\\lambda` (it enters).  A start near
    the optimum (a neighbouring bandwidth's solution) has small offsets and few breaks.

    Returns
    -------
    (A, b (|A|,), b0, r (n,), events) at :math:`\\mu = 1`, or None when an active set met on
    the way is numerically rank deficient or the event limit is reached.
    """
    n = y.size
    fit = y - b @ K[A]
    r = fit - fit.mean()
    g = K @ r
    v = np.where(np.abs(g) > lam, g, 0.0)  # a violated constraint starts inside: h_j(0) = 0
    sign = np.sign(b)
    v[A] = g[A] - lam * sign
    mu, events, fresh = 0.0, 0, -1  # fresh: the index that just entered or left
    qr_ = None
    while events < max_events:
        _check_clock(deadline)
        if qr_ is None or events % _REFACTOR_EVERY == 0:
            qr_ = _factor(K, A)
            if qr_ is None:
                return None
        events += 1
        z0, z1, r0, r1 = _affine_fit(*qr_, y, np.concatenate(([0.0], lam * sign + v[A])),
                                     np.concatenate(([0.0], -v[A])))
        H = K @ np.column_stack([r0, r1])
        ha, hb = H[:, 0] - v, H[:, 1] + v  # h(mu) = ha + mu hb
        with np.errstate(divide="ignore", invalid="ignore"):
            leave = -z0[1:] / z1[1:]
            enter = np.maximum((lam - ha) / hb, (-lam - ha) / hb)  # the bound h moves towards
        leave[~(leave > mu)] = np.inf
        inactive = np.ones(n, dtype=bool)
        inactive[A] = False
        enter[~(inactive & (enter > mu))] = np.inf
        if fresh >= 0:  # the index that just changed sits on its break point
            enter[fresh] = np.inf
            leave[A == fresh] = np.inf
        i, j = int(np.argmin(leave)) if A.size else -1, int(np.argmin(enter))
        step = min(leave[i] if A.size else np.inf, enter[j])
        if not step < 1.0:
            z, r = z0 + z1, r0 + r1
            if not (np.all(np.isfinite(z)) and np.all(np.isfinite(r))):
                return None
            return A, z[1:], float(z[0]), r, events
        mu = float(step)
        if A.size and leave[i] <= enter[j]:
            fresh = int(A[i])
            A, sign = np.delete(A, i), np.delete(sign, i)
            qr_ = qr_delete(*qr_, i + 1, 1, which="col", check_finite=False)  # column 0 is the intercept's
        else:
            fresh = j
            A, sign = np.append(A, j), np.append(sign, np.sign(ha[j] + mu * hb[j]))
            try:
                Q, R = qr_insert(*qr_, K[j], A.size, which="col", rcond=_RANK_TOL, check_finite=False)
            except LinAlgError:  # the entering column is (numerically) in the span of the others
                return None
            diag = np.abs(R.diagonal())
            if not diag.min() > _RANK_TOL * diag.max():
                return None
            qr_ = (Q, R)
    return None


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


def solve_klasso(K, y, lam, *, warm=None, tol=DEFAULT_TOL, max_steps=None, time_limit=None):
    """Solve the kLASSO exactly (to rounding): a homotopy from the start point, finished (and
    guaranteed) by feature-sign search.

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
        (support, signs and values) start the homotopy.  Default: :math:`\\beta = 0`.
    tol : float
        Optimality: :math:`\\max_j |(K r)_j| \\le \\lambda (1 + tol)` (with signs that agree).
    max_steps : int, optional
        Limit on homotopy events and on feature-sign steps (default ``20 + 4 n`` each).
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
    path = _homotopy(K, y, lam, A, b, max_steps, deadline)
    events = 0
    if path is not None:
        A, b, b0, r, events = path
        keep = b != 0.0
        A, b = A[keep], b[keep]
    else:
        fit = y - b @ K[A]
        b0 = float(fit.mean())
        r = fit - b0
    A, b, b0, r, steps = _feature_sign(K, y, lam, A, b, b0, r, tol, max_steps, deadline)
    beta = np.zeros(n)
    beta[A] = b
    violation = float(np.max(np.abs(K @ r))) / lam - 1.0
    return LassoSolution(beta=beta, beta0=float(b0), u=r, active=np.sort(A), violation=violation,
                         converged=bool(violation <= tol), iterations=events + steps,
                         seconds=time.perf_counter() - t0)
