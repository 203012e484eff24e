"""Exact solves of the kLASSO: the Gram-form QP for a conic solver, and the active-set polish
of a solver's point.

Given an active set :math:`A` and signs :math:`\\sigma`, the optimality conditions
:math:`K_A^\\top r = \\lambda\\sigma`, :math:`\\mathbf 1^\\top r = 0`,
:math:`r = y - K_A\\beta_A - \\beta_0` are a linear system (:func:`kkt_point`).  Where
:math:`K_t` is nearly singular (small t and lambda, :math:`\\lVert\\beta\\rVert_1` in the
thousands) a solver's point is only accurate to ~1e-4 relative in
:math:`\\lVert K r\\rVert_\\infty` and its small coefficients are unreliable; :func:`polish`
takes active-set steps from several starting sets instead of trusting one threshold.
"""

from __future__ import annotations

import numpy as np

from approxpath.solvers.conic import QP

__all__ = ["gram_qp", "polish", "kkt_point"]

# Solver output: coefficient j counts as active when |(K r)_j| >= lam (1 - 1e-6); an inactive
# one below 1e-6 of max |beta| is an interior-point remnant (Clarabel at 1e-10 leaves up to
# ~1e-8 where the dual slack is ~1e-3) and is set exactly to 0, so the support, and the cost
# of the interval bounds, is the true one.  The gap is computed afterwards either way.
_ACTIVE_TOL = 1e-6
# Polish: the active sets |(K r)_j| >= lam (1 - 10**-k) and |beta_j| > 10**-k max |beta| for
# these k start the active-set steps (the solver's residual can be off by ~1e-4 relative
# where K_t is nearly singular, so no single threshold is right everywhere).
_POLISH_DIGITS = (2, 3, 4, 5, 6)
# ... and an active set whose [K_A, 1] has |R_jj| below 1e-13 max |R_jj| is rank deficient.
_RANK_TOL = 1e-13
# Active-set steps per starting set (one or two are typical; each costs a QR of n x |A|).
_POLISH_STEPS = 4


def gram_qp(K, y, lam):
    """Gram form in ``x = [beta (n), beta0, a (n)]``, ``|beta| <= a``: min 1/2 z'M'Mz - (M'y)'z +
    lam 1'a with ``z = [beta; beta0]``, ``M = [K, 1]`` (10-35x faster for an interior point than
    an explicit residual equality).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,)
    lam : float

    Returns
    -------
    approxpath.solvers.conic.QP
    """
    import scipy.sparse as sp  # (here: `approxpath problems` lists the problem without it)

    n = y.size
    k1 = K.sum(axis=0)
    G = np.zeros((n + 1, n + 1))
    G[:n, :n] = K @ K
    G[:n, n] = k1
    G[n, n] = n
    P = sp.block_diag([sp.csc_matrix(np.triu(G)), sp.csc_matrix((n, n))]).tocsc()
    q = np.concatenate((-(K @ y), [-y.sum()], np.full(n, lam)))
    eye = sp.eye(n)
    zero_col = sp.csc_matrix((n, 1))
    A = sp.vstack([sp.hstack([eye, zero_col, -eye]), sp.hstack([-eye, zero_col, -eye])]).tocsc()
    return QP(P=P, q=q, A=A, b=np.zeros(2 * n), zero=0, nonneg=2 * n)


def polish(K, y, lam, beta):
    """Candidate coefficients from a solver's ``beta`` (n,): ``[(beta, u or None), ...]``, the
    solver's own (inactive remnants zeroed, ``u`` None: build the dual from the primal) and every
    point of the active-set steps (``u`` the residual of the KKT system).

    The steps drop a coefficient whose sign disagrees or add the most violated constraint,
    starting from the sets :math:`|K r| \\ge \\lambda(1 - 10^{-k})` (signs of :math:`K r`) and
    from the supports :math:`|\\beta| > 10^{-k}\\max|\\beta|` (signs of :math:`\\beta`), k = 2..6
    (:math:`r` the solver's residual, centred: with its best intercept), at most 4 steps from
    each distinct active set (the later start's signs where two share one); a singular system
    ends a start's steps.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel.
    y : ndarray of shape (n,)
    lam : float
    beta : ndarray of shape (n,)
        The solver's coefficients (not modified).

    Returns
    -------
    list of tuple
        ``(beta, u)``: first the solver's (a copy), then each :func:`kkt_point` ``(beta, r)`` of the steps.
    """
    n = y.size
    beta = beta.copy()
    r = y - K @ beta
    g = K @ (r - r.mean())
    support = np.abs(beta) > _ACTIVE_TOL * np.max(np.abs(beta), initial=0.0)
    beta[~support & (np.abs(g) < lam * (1.0 - _ACTIVE_TOL))] = 0.0
    candidates = [(beta, None)]
    starts = {}
    for k in _POLISH_DIGITS:  # active sets by the solver's |K r| and by its support
        for active, sign in ((np.abs(g) >= lam * (1.0 - 10.0**-k), np.sign(g)),
                             (np.abs(beta) > 10.0**-k * np.max(np.abs(beta), initial=0.0), np.sign(beta))):
            starts[active.tobytes()] = (active, sign)
    for active, sign in starts.values():
        for _ in range(_POLISH_STEPS):  # one change per step: drop a wrong sign, else add a violation
            cand, u = kkt_point(K, y, active, sign, lam)
            if cand is None:
                break
            candidates.append((cand, u))
            wrong = np.flatnonzero(active & (np.sign(cand) != sign))
            gu = K @ u
            over = np.flatnonzero(~active & (np.abs(gu) > lam))
            active = active.copy()
            if wrong.size:  # the one the solver found least active
                active[wrong[np.argmin(np.abs(g[wrong]))]] = False
            elif over.size:
                j = over[np.argmax(np.abs(gu[over]))]
                active[j], sign = True, np.where(np.arange(n) == j, np.sign(gu), sign)
            else:
                break
    return candidates


def kkt_point(K, y, active, sign, lam):
    """``(beta, r)`` solving the optimality conditions on the active set by a QR factorization
    :math:`[K_A, \\mathbf 1] = QR`: with :math:`R^\\top w = c`, :math:`c = (\\lambda\\sigma_A, 0)`,
    the residual is :math:`r = y - QQ^\\top y + Qw` (accurate even when :math:`\\beta` is huge)
    and :math:`Rz = Q^\\top y - w`.  ``(None, None)`` when the system is singular.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,)
    active : ndarray of bool of shape (n,)
    sign : ndarray of shape (n,)
        Signs of the active coefficients.
    lam : float
    """
    from scipy.linalg import solve_triangular

    n = y.size
    A = np.flatnonzero(active)
    M = np.column_stack([K[:, A], np.ones(n)])
    Q, R = np.linalg.qr(M)
    diag = np.abs(np.diag(R))
    if A.size >= n or not diag.min() > _RANK_TOL * diag.max():
        return None, None
    w = solve_triangular(R, np.concatenate((lam * sign[A], [0.0])), trans="T")
    qy = Q.T @ y
    z = solve_triangular(R, qy - w)
    beta = np.zeros(n)
    beta[A] = z[:-1]
    r = y - Q @ qy + Q @ w
    ok = np.all(np.isfinite(beta)) and np.all(np.isfinite(r))
    return (beta, r) if ok else (None, None)
