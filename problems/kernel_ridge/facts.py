"""Rigorous linear algebra at one bandwidth or lambda of kernel ridge regression (numpy and scipy
only): the facts the closed-form criteria (:mod:`.criteria`) enclose from, with
:math:`\\tilde K = K_t + \\lambda I`.

:func:`point_facts` takes a Cholesky factor
:math:`\\hat L` and an approximate inverse :math:`X`, with their residuals bounded *including*
the rounding of computing them and of the kernel entries (:math:`F` bounds the Frobenius norm of
the computed :math:`\\tilde K` minus the exact one).  :math:`\\log\\det` from :math:`\\hat L\\hat
L^\\top = \\tilde K + E`, where Cholesky's backward error (Higham, *Accuracy and Stability of
Numerical Algorithms*, Thm 10.3; any order of the inner products, so LAPACK's blocked variants
too) is :math:`|E - \\Delta| \\le \\gamma_{n+1}|\\hat L||\\hat L^\\top|` entrywise
(:math:`\\Delta` the kernel's rounding), so :math:`\\lVert E\\rVert_F \\le \\gamma_{n+1}\\lVert\\hat
L\\rVert_F^2 + F` without forming :math:`\\hat L\\hat L^\\top`, and :math:`|\\log\\det\\tilde K -
2\\sum\\log\\hat L_{ii}| \\le \\sqrt n\\lVert E\\rVert_F / (\\lambda - \\lVert E\\rVert_F)`.  The diagonal and
the trace of :math:`\\tilde K^{-1} = X + \\tilde K^{-1}S`, :math:`S = I - \\tilde KX`
(:math:`|e_i^\\top\\tilde K^{-1}Se_i| \\le \\lVert Se_i\\rVert/\\lambda`), with :math:`S` computed in
one product whose rounding :math:`\\gamma_{n+1}(I + |\\tilde K||X|)` has columns of norm at most
:math:`\\gamma_{n+1}(1 + \\lVert\\tilde K\\rVert_F\\lVert Xe_i\\rVert)`; and the derivative
:math:`h = \\tfrac{d}{dt}\\log\\det\\tilde K_t = -\\mathrm{tr}(\\tilde K^{-1}(D\\circ K_t))`.  Where the
derivative is not wanted, the diagonal and the trace come from the factor's triangular inverse
and its residual instead (:func:`_factor_diagonal`: a third less work).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from approxpath.compute.parallelism import blas_threads
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, kernel_entry_error

__all__ = ["Facts", "Spectrum", "cached_facts", "point_facts", "remember", "spectral_facts", "spectrum"]

# Facts at this many parameter values are kept (a branch and bound revisits the middles).
_CACHE = 4096
# Triangular products of fewer rows are one BLAS call (below it the blocks gain nothing: 0.37 ms
# either way at n = 200).
_BLOCKED_PRODUCT = 256


@dataclass(frozen=True)
class Facts:
    """Rigorous enclosures at one parameter value (``[lo, hi]`` pairs)."""

    trace: tuple
    diag_lo: np.ndarray
    diag_hi: np.ndarray
    logdet: tuple
    slope: tuple  # d/dt log det (bandwidth path), else None
    # the computed optimum c = K~^-1 y from the same factor (a point, not an enclosure: the gap
    # bound of a pair built from it certifies it), or None where the factorization failed
    solution: np.ndarray = None
    # its derivative along the bandwidth, dc/dt = K~^-1 (D o K_t) c (the same factor; a point
    # too), or None (a lambda path, log det alone, or where the factorization failed)
    derivative: np.ndarray = None


def _frob(M):
    """An upper bound of the Frobenius norm of ``M`` (its computed value moved up)."""
    return float(np.sqrt(np.sum(M * M))) * (1.0 + fp_margin(M.size, 1.0))


def point_facts(bound, tau, slope=True, inverse=True, derivative=None):
    """:class:`Facts` of :math:`\\tilde K = K_t + \\lambda I` at the path parameter ``tau``
    (see the module docstring), computed with one BLAS thread.

    Parameters
    ----------
    bound : RidgeBound
    tau : float
        The path parameter (a bandwidth, or λ on the λ path).
    slope : bool, default True
        Also enclose :math:`\\tfrac{d}{dt}\\log\\det\\tilde K_t` (bandwidth path only; needs ``inverse``).
    inverse : bool, default True
        Enclose the inverse's diagonal and trace; without it only :math:`\\log\\det` and the optimum (the Cholesky
        factor alone: no inverse, no slope).
    derivative : bool, optional
        Also the optimum's derivative along the bandwidth (two triangular solves; bandwidth path only); default
        ``inverse``.

    Returns
    -------
    Facts
        Those not asked for stay uninformative (trace ``(0, inf)``, diagonal 0 to inf; slope None, or ``(-inf, inf)``
        without ``inverse``).  Everything uninformative and ``solution`` None where the factorization fails or its
        error is not certified below λ/2, or, with ``inverse``, where the inverse fails or is not certified.
    """
    # one BLAS thread: OpenBLAS's threads on matrices of a few dozen rows spin (dpotri at n = 60:
    # 0.2 s with two threads against 30 us with one)
    with blas_threads(1):
        return _point_facts(bound, tau, slope and inverse, inverse, inverse if derivative is None else derivative)


def _point_facts(bound, tau, slope, inverse, with_derivative):
    bw, lam = bound.sweep.at(tau)
    n, d = bound.n, bound.entry_terms
    D = bound.kernels.D
    K = bound.gram(tau)
    A = K + lam * np.eye(n)
    # |A - exact| entrywise: the kernel entries off the diagonal (exp(0) = 1 is exact), 1 + lam once rounded on it
    # (hypot: a float's ** 2 raises OverflowError for lam ~ 1e200, where F itself is far from overflowing;
    # times 1 + 8u: at least the sum of squares' value, which it may round up to 2 ulps below)
    F = math.hypot(math.sqrt(n * (n - 1)) * kernel_entry_error(d), math.sqrt(n) * UNIT_ROUNDOFF * (1.0 + lam)) \
        * (1.0 + 8.0 * UNIT_ROUNDOFF)
    g = fp_margin(n + 1, 1.0)  # gamma_{n+1} of a computed product, residual or Cholesky factor
    try:
        cf = scipy.linalg.cho_factor(A, lower=True)
    except np.linalg.LinAlgError:  # rounding made A indefinite: nothing can be certified here
        return _nothing(n)
    L = np.tril(cf[0])
    # Cholesky's backward error (Higham, Thm 10.3): |L L' - A| <= gamma_{n+1} |L||L'| entrywise, in any
    # order of the inner products (the blocked LAPACK variants included), and || |L||L'| ||_F <= ||L||_F^2;
    # twice that for good measure (a slack of one unit of gamma costs nothing: E is ~1e-10 at n = 1000)
    E = 2.0 * g * _frob(L) ** 2 + F
    if not E < 0.5 * lam:  # the factorization is too inaccurate to say anything
        return _nothing(n)
    solution = scipy.linalg.cho_solve(cf, bound.y)
    # (K_t + lam I) c = y differentiated in t, with dK_t/dt = -D o K_t (not with log det alone: the
    # marginal likelihood predicts no optimum, and it costs a fifth of a factorization at n = 1000)
    derivative = scipy.linalg.cho_solve(cf, (D * K) @ solution) if with_derivative and bound.sweep.along_bandwidth \
        else None
    logs = np.log(np.diag(L))
    ld = 2.0 * float(np.sum(logs))
    ld_err = 2.0 * (fp_margin(n, float(np.sum(np.abs(logs)))) + 2 * UNIT_ROUNDOFF * float(np.sum(np.abs(logs))))
    ld_err += math.sqrt(n) * E / (lam - E)
    if not inverse:
        return dataclasses.replace(_nothing(n), logdet=(ld - ld_err, ld + ld_err), solution=solution,
                                   derivative=derivative)
    if not (slope and bound.sweep.along_bandwidth):
        diagonal = _factor_diagonal(L, lam, E, g)
        return _nothing(n) if diagonal is None else Facts(*diagonal, (ld - ld_err, ld + ld_err), None, solution,
                                                          derivative)
    X, info = scipy.linalg.lapack.dpotri(L, lower=1)  # the inverse from the factor (lower triangle)
    if info != 0:
        return _nothing(n)
    X = np.tril(X) + np.tril(X, -1).T
    S = np.eye(n) - A @ X
    # rounding of the computed residual: |fl(S) - S| <= gamma_{n+1} (I + |A||X|) entrywise, whose i-th
    # column has the 2-norm at most gamma_{n+1} (1 + ||A||_F ||X e_i||) (|| |A| ||_2 <= ||A||_F)
    x_col = np.sqrt(np.sum(X * X, axis=0))
    a_frob = _frob(A)
    col = (np.sqrt(np.sum(S * S, axis=0)) + g * (1.0 + a_frob * x_col) + F * x_col) * (1.0 + fp_margin(n, 1.0))
    S_F = _frob(S) + g * (math.sqrt(n) + a_frob * _frob(X)) + F * _frob(X)
    if not S_F < 0.5 * lam:  # the inverse is too inaccurate to say anything
        return _nothing(n)
    diag = np.diag(X)
    tr = float(np.sum(diag))
    tr_err = math.sqrt(n) * S_F / lam + fp_margin(n, float(np.sum(np.abs(diag))))
    out = dict(trace=(tr - tr_err, tr + tr_err), diag_lo=diag - col / lam, diag_hi=diag + col / lam,
               logdet=(ld - ld_err, ld + ld_err), slope=None, solution=solution, derivative=derivative)
    if slope and bound.sweep.along_bandwidth:
        B = D * K
        absX = np.abs(X)
        entry = 3.0 * kernel_entry_error(d) / bw  # D exp(-t D) as computed (approxpath.envelopes)
        h = -float(np.sum(X * B))
        h_err = (fp_margin(n * n, float(np.sum(absX * B))) + entry * float(np.sum(absX))
                 + S_F * (_frob(B) + n * entry) / lam)
        out["slope"] = (h - h_err, h + h_err)
    return Facts(**out)


def _lower_product(L, W):
    """:math:`LW` for lower triangular ``L`` and ``W`` (n, n), by 2 x 2 blocks whose zero block is
    skipped (at n = 1000, one thread: 16 ms against 30 ms for one ``dtrmm``, which treats ``W``
    as full).  Every entry is a sum of the same products as in any other order, so the rounding
    bound of a computed product holds as it is."""
    n = L.shape[0]
    if n < _BLOCKED_PRODUCT:
        return scipy.linalg.blas.dtrmm(1.0, L, W, lower=1)
    h = n // 2
    out = np.zeros((n, n))
    out[:h, :h] = _lower_product(L[:h, :h], W[:h, :h])
    out[h:, h:] = _lower_product(L[h:, h:], W[h:, h:])
    out[h:, :h] = scipy.linalg.blas.dtrmm(1.0, W[:h, :h], L[h:, :h], side=1, lower=1) + \
        scipy.linalg.blas.dtrmm(1.0, L[h:, h:], W[h:, :h], lower=1)
    return out


def _factor_diagonal(L, lam, E, g):
    """``(trace, diag_lo, diag_hi)`` of :math:`\\tilde K^{-1}` from the computed Cholesky factor
    :math:`\\hat L` (``L``; :math:`\\lVert\\hat L\\hat L^\\top - \\tilde K\\rVert_F \\le` ``E``, the kernel's rounding
    included) and its computed triangular inverse :math:`W`, or None when they say nothing.

    With :math:`R = I - \\hat L W`, :math:`\\hat L^{-1} = W + \\hat L^{-1}R` and :math:`\\lVert\\hat L^{-1}\\rVert_2
    \\le (\\lambda - E)^{-1/2}`, so the column :math:`\\hat L^{-1}e_i`, whose squared norm is
    :math:`[(\\hat L\\hat L^\\top)^{-1}]_{ii}`, is within :math:`\\rho_i = \\lVert Re_i\\rVert/\\sqrt{\\lambda - E}` of
    :math:`We_i`; and :math:`|[\\tilde K^{-1}]_{ii} - [(\\hat L\\hat L^\\top)^{-1}]_{ii}| \\le E/(\\lambda(\\lambda - E))`.
    :math:`R` is computed in one triangular product (:func:`_lower_product`), rounded by at most
    :math:`\\gamma_{n+1}(I + |\\hat L||W|)` entrywise (columns of norm at most :math:`\\gamma_{n+1}(1 +
    \\lVert\\hat L\\rVert_F\\lVert We_i\\rVert)`): at n = 1000 the triangular inverse and this product
    take 16 + 16 ms against 32 + 55 ms for the whole inverse and its residual (one thread)."""
    n = L.shape[0]
    W, info = scipy.linalg.lapack.dtrtri(L, lower=1)
    if info != 0:
        return None
    R = np.eye(n) - _lower_product(L, W)
    norm = 1.0 + fp_margin(n + 1, 1.0)  # a sum of n squares and its square root, as computed
    w = np.sqrt(np.sum(W * W, axis=0))
    rho = (np.sqrt(np.sum(R * R, axis=0)) * norm + g * (1.0 + _frob(L) * w * norm)) / math.sqrt(lam - E) * norm
    if not float(rho.max()) < 0.5 * float(w.min()):  # the inverse is too inaccurate to say anything
        return None
    shift = E / (lam * (lam - E)) * (1.0 + 8 * UNIT_ROUNDOFF)
    # 16 u covers the squares', the products' and the differences' roundings (a few u each)
    pad = 16 * UNIT_ROUNDOFF
    lo = (w / norm - rho) ** 2 * (1.0 - pad) - shift * (1.0 + pad)
    hi = (w * norm + rho) ** 2 * (1.0 + pad) + shift * (1.0 + pad)
    trace = (float(np.sum(lo)) - fp_margin(n, float(np.sum(np.abs(lo)))),
             float(np.sum(hi)) + fp_margin(n, float(np.sum(hi))))
    return trace, lo, hi


@dataclass(frozen=True)
class Spectrum:
    """An eigendecomposition :math:`K_t \\approx VMV^\\top` of the computed kernel at one bandwidth
    and what bounds its error (:func:`spectrum`): the facts at every λ follow in O(n²)
    (:func:`spectral_facts`).

    Attributes
    ----------
    tau : float
    mu : ndarray (n,)
        The computed eigenvalues, ascending, clamped at 0 (:math:`M`).
    V, V2 : ndarray (n, n)
        The computed eigenvectors (columns) and their entries squared.
    Vy : ndarray (n,)
        :math:`V^\\top y`.
    f : float
        :math:`\\ge \\lVert K_t - VMV^\\top\\rVert_F` (the exact kernel; the kernel's rounding, the
        product's and the clamping included).
    h : float
        :math:`\\ge \\lVert I - V^\\top V\\rVert_F` (:math:`= \\lVert I - VV^\\top\\rVert_F`: V is square).
    """

    tau: float
    mu: np.ndarray
    V: np.ndarray
    V2: np.ndarray
    Vy: np.ndarray
    f: float
    h: float


def spectrum(bound, tau, eigh=np.linalg.eigh):
    """The :class:`Spectrum` of :math:`K_t` (``bound.gram(tau)``) at the path parameter ``tau`` (one ``eigh`` and two
    products: about three Cholesky factorizations' work, once for every λ), with one BLAS thread.  ``eigh(K)``
    (default :func:`numpy.linalg.eigh`) returns the eigenvalues (ascending) and eigenvectors; the bounds hold for
    whatever it returns."""
    with blas_threads(1):  # (as point_facts)
        n = bound.n
        K = bound.gram(tau)
        mu, V = eigh(K)
        mu = np.maximum(mu, 0.0)  # K is positive semidefinite; the clamping is part of K - VMV' below
        g = fp_margin(n + 1, 1.0)
        # ||K - VMV'||_F: the computed difference, the product's rounding (|fl(P) - P| <= g |V|M|V|', whose
        # Frobenius norm is at most sum_k mu_k ||v_k||^2) and the kernel entries' (off the diagonal)
        P = (V * mu) @ V.T
        col = np.sum(V * V, axis=0)
        f = _frob(K - P) + g * float(mu @ col) * (1.0 + fp_margin(n, 1.0)) + \
            math.sqrt(n * (n - 1)) * kernel_entry_error(bound.entry_terms)
        # ||I - V'V||_F: the computed one and its rounding (|V'||V| has Frobenius norm <= ||V||_F^2)
        h = _frob(np.eye(n) - V.T @ V) + g * float(np.sum(col)) * (1.0 + fp_margin(n, 1.0))
        return Spectrum(float(tau), mu, V, V * V, V.T @ bound.y, f * (1.0 + 2 * UNIT_ROUNDOFF), h)


def spectral_facts(bound, tau, spec):
    """:class:`Facts` (the inverse's diagonal and trace, log det, the optimum and its derivative
    along the bandwidth; no slope) of :math:`\\tilde K = K_t + \\lambda I` at ``bound``'s λ from the
    :class:`Spectrum` ``spec`` of :math:`K_t` (:func:`spectrum` at ``tau``, not checked; λ is
    ``bound.sweep.at(tau)[1]``), in O(n²); the derivative None off the bandwidth path.

    With :math:`X = V(M + \\lambda)^{-1}V^\\top`, :math:`K = VMV^\\top + F` and :math:`V^\\top V = I - H`:
    :math:`S = I - \\tilde KX = (I - VV^\\top) + VMH(M + \\lambda)^{-1}V^\\top - FX`, so
    :math:`\\lVert S\\rVert_F \\le h + (1 + h)(h\\mu_{\\max} + f)/\\lambda` (:math:`\\lVert V\\rVert_2^2 \\le 1 + h`,
    :math:`\\lVert X\\rVert_2 \\le (1 + h)/\\lambda`), and as for :func:`point_facts`, :math:`|[\\tilde K^{-1}]_{ii}
    - X_{ii}| \\le \\lVert S\\rVert_F/\\lambda` and :math:`|\\mathrm{tr}\\tilde K^{-1} - \\mathrm{tr}X| \\le
    \\sqrt n\\lVert S\\rVert_F/\\lambda`.  The eigenvalues: Ostrowski's theorem puts those of :math:`VMV^\\top`
    at :math:`\\theta_k\\mu_k`, :math:`\\theta_k \\in [1 - h, 1 + h]`, and Weyl's those of K within f of them
    (both in sorted order), so :math:`\\log\\det\\tilde K` lies between :math:`\\sum_k\\log(\\max(\\mu_k(1 - h) - f,
    0) + \\lambda)` and :math:`\\sum_k\\log(\\mu_k(1 + h) + f + \\lambda)`."""
    n, lam = bound.n, bound.sweep.at(tau)[1]
    mu, h, f = spec.mu, spec.h, spec.f
    inv = 1.0 / (mu + lam)
    s = (h + (1.0 + h) * (h * float(mu[-1]) + f) / lam) * (1.0 + 8 * UNIT_ROUNDOFF)
    # X_ii = sum_k V_ik^2 / (mu_k + lam): positive terms, each inverse within 2u
    x = spec.V2 @ inv
    rel = fp_margin(n, 1.0) + 3 * UNIT_ROUNDOFF
    err = s / lam * (1.0 + 2 * UNIT_ROUNDOFF)
    diag_lo, diag_hi = x * (1.0 - rel) - err, x * (1.0 + rel) + err
    tr = float(np.sum(x))
    tr_err = fp_margin(n, tr) + rel * tr + math.sqrt(n) * err
    down, up = 1.0 - 4 * UNIT_ROUNDOFF, 1.0 + 4 * UNIT_ROUNDOFF
    low = np.log((np.maximum(mu * (1.0 - h) - f, 0.0) + lam) * down)
    high = np.log((mu * (1.0 + h) + f + lam) * up)
    ld = (float(np.sum(low)) - fp_margin(n, float(np.sum(np.abs(low)))) - 2 * UNIT_ROUNDOFF * float(np.sum(np.abs(low))),
          float(np.sum(high)) + fp_margin(n, float(np.sum(np.abs(high)))) + 2 * UNIT_ROUNDOFF * float(np.sum(np.abs(high))))
    solution = spec.V @ (inv * spec.Vy)
    derivative = None
    if bound.sweep.along_bandwidth:  # dc/dt = K~^-1 (D o K_t) c, a point for the predictions (as point_facts)
        w = (bound.kernels.D * bound.gram(tau)) @ solution
        derivative = spec.V @ (inv * (spec.V.T @ w))
    return Facts((tr - tr_err, tr + tr_err), diag_lo, diag_hi, ld, None, solution, derivative)


def _nothing(n):
    inf = np.full(n, np.inf)
    return Facts((0.0, np.inf), np.zeros(n), inf, (-np.inf, np.inf), (-np.inf, np.inf))


def remember(cache, tau, facts, level=1):
    """Keep ``facts`` at ``tau`` in ``cache`` as :func:`cached_facts` keeps its own, replacing any there
    (``level`` as there: what they hold)."""
    cache[float(tau)] = (level, facts)


def cached_facts(bound, tau, cache, level=2):
    """:func:`point_facts` at ``tau`` up to ``level`` (0: log det and the optimum, 1: and the inverse's diagonal and
    trace, 2: and the slope), from ``cache`` when it holds them at that level or above.  ``cache``: a dict
    ``{tau: (level, Facts)}`` that computed facts are put in (the oldest entry dropped at 4096 entries), or None
    (computed, not kept)."""
    key = float(tau)
    if cache is None:
        return point_facts(bound, key, slope=level >= 2, inverse=level >= 1)
    if cache.get(key, (-1, None))[0] < level:
        if len(cache) >= _CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = (level, point_facts(bound, key, slope=level >= 2, inverse=level >= 1))
    return cache[key][1]
