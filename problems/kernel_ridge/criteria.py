"""Closed-form selection criteria of kernel ridge regression, enclosed over a piece (numpy only).

With :math:`\\tilde K = K_t + \\lambda I` (:math:`\\lambda_{\\min}(\\tilde K) \\ge \\lambda`: the
Gaussian kernel is positive semidefinite), the exact optimum :math:`c^* = \\tilde K^{-1}y` and
its residual :math:`\\rho^* = y - K_t c^* = \\lambda c^*` (Bindel's notes on kernel selection):

* LOOCV :math:`= \\frac1n\\sum_i (r^{(-i)})^2`, :math:`r^{(-i)} = c^*_i/[\\tilde K^{-1}]_{ii}
  = \\rho^*_i / (\\lambda[\\tilde K^{-1}]_{ii})`;
* GCV :math:`= n\\lVert\\rho^*\\rVert^2 / (\\lambda\\,\\mathrm{tr}\\,\\tilde K^{-1})^2` (the
  hat matrix is :math:`I - \\lambda\\tilde K^{-1}`);
* the log marginal likelihood of the GP with noise λ, :math:`-\\tfrac12 y^\\top\\tilde K^{-1}y -
  \\tfrac12\\log\\det\\tilde K - \\tfrac n2\\log 2\\pi`, whose data term is the optimal value:
  :math:`P^* = \\min_c \\lambda c^\\top K c + \\lVert Kc - y\\rVert^2 = \\lambda\\, y^\\top\\tilde K^{-1} y`.

From the path: the certified pair of a piece encloses :math:`P^*` (dual floor, primal value)
and, as :math:`P(c) - P^* = \\delta^\\top(\\lambda K + K^2)\\delta \\ge \\lVert K\\delta\\rVert^2`,
puts :math:`\\rho^*` in the 2-norm ball of radius :math:`\\sqrt{gap}` around the path's residual.

From rigorous linear algebra at a point (:func:`point_facts`): a Cholesky factor
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

Over a bandwidth interval :math:`[a, b]` (:func:`_interval_facts`): :math:`K_s = e^{-sD}` is
positive semidefinite with unit diagonal for every :math:`s \\ge 0` (the kernel families, and a
precomputed :math:`D` checked conditionally negative definite), and :math:`K_t = K_a\\circ
K_{t-a}` for :math:`t \\ge a`.  :math:`\\Phi(M) = M\\circ K_{t-a}` is a positive (Schur's product
theorem), unital (:math:`I\\circ K_{t-a} = I`) and trace-preserving map with :math:`\\Phi(\\tilde
K_a) = \\tilde K_t`.  Choi's inequality :math:`\\Phi(M)^{-1} \\preceq \\Phi(M^{-1})` gives
:math:`\\tilde K_t^{-1} \\preceq \\tilde K_a^{-1}\\circ K_{t-a}`, whose diagonal is that of
:math:`\\tilde K_a^{-1}`: every :math:`d_i = [\\tilde K_t^{-1}]_{ii}` and the trace *decrease* with
t; and as the eigenvalues of :math:`\\Phi(M)` are majorized by those of :math:`M` (Ando, 1989),
:math:`\\sum_i g(\\lambda_i(\\tilde K_t)) \\le \\sum_i g(\\lambda_i(\\tilde K_a))` for the convex
:math:`g = -\\log`: :math:`\\log\\det\\tilde K_t` *increases* with t.  So on a cell each lies
between its enclosures at the two ends.  The log marginal likelihood also takes, on cells narrow
enough for it to help, a second-order Taylor enclosure about the middle :math:`m`
(:func:`_lml_taylor`): with :math:`B_t = D\\circ K_t` (entries decreasing in t, so
:math:`\\lVert B_t\\rVert_2 \\le \\beta` = the largest row sum at the left end),
:math:`|h'| = |\\mathrm{tr}(\\tilde K^{-1}C) - \\lVert\\tilde K^{-1/2}B\\tilde K^{-1/2}\\rVert_F^2| \\le
(n/\\lambda)(\\beta^2/\\lambda + \\gamma)` (:math:`C = D^2\\circ K_t`, :math:`\\gamma`
its largest row sum).  Over a λ interval the kernel is fixed and everything is monotone:
:math:`[\\tilde K^{-1}]_{ii}`, the trace decrease, :math:`\\log\\det` and
:math:`\\lambda[\\tilde K^{-1}]_{ii}`, :math:`\\lambda\\,\\mathrm{tr}\\tilde K^{-1}` increase
(:math:`\\tfrac{d}{d\\lambda}\\lambda\\tilde K^{-1} = \\tilde K^{-1}K\\tilde K^{-1} \\succeq 0`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from approxpath.compute.parallelism import blas_threads
from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, kernel_entry_error
from approxpath.selection.predictions import combination_hull, expansion_cover, sqrt_up

__all__ = ["CLOSED_FORM", "criterion_enclosure", "node_pair", "point_facts"]

#: Criteria with a closed form and whether they are minimized or maximized.
CLOSED_FORM = {"loocv": "min", "gcv": "min", "lml": "max"}
# Final enclosures are widened by this relative amount: the few scalar operations after the
# rigorous parts (products, quotients, exp, sqrt: each within a unit roundoff), 64 u in all.
_PAD = 64 * UNIT_ROUNDOFF
# Facts at this many parameter values are kept (a branch and bound revisits the middles).
_CACHE = 4096
# Rows whose sums decide whether a cell's Taylor enclosure can help before all n are summed: a gate
# only (skipping the Taylor enclosure is always sound); 16 evenly spaced rows cost ~2 % of all n at n = 1000.
_GATE_ROWS = 16


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


def _frob(M):
    """An upper bound of the Frobenius norm of ``M`` (its computed value moved up)."""
    return float(np.sqrt(np.sum(M * M))) * (1.0 + fp_margin(M.size, 1.0))


def point_facts(bound, tau, slope=True, inverse=True):
    """:class:`Facts` of :math:`\\tilde K = K_t + \\lambda I` at the path parameter ``tau``
    (see the module docstring); ``slope`` also encloses :math:`\\tfrac{d}{dt}\\log\\det\\tilde K_t`;
    without ``inverse`` only :math:`\\log\\det` (the Cholesky factor alone: no inverse, no slope)."""
    # one BLAS thread: OpenBLAS's threads on matrices of a few dozen rows spin (dpotri at n = 60:
    # 0.2 s with two threads against 30 us with one)
    with blas_threads(1):
        return _point_facts(bound, tau, slope and inverse, inverse)


def _point_facts(bound, tau, slope, inverse):
    bw, lam = bound.sweep.at(tau)
    n, d = bound.n, bound.entry_terms
    D = bound.kernels.D
    K = bound.gram(tau)
    A = K + lam * np.eye(n)
    # |A - exact| entrywise: the kernel entries off the diagonal (exp(0) = 1 is exact), 1 + lam once rounded on it
    F = math.sqrt(n * (n - 1) * kernel_entry_error(d) ** 2 + n * (UNIT_ROUNDOFF * (1.0 + lam)) ** 2)
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
    logs = np.log(np.diag(L))
    ld = 2.0 * float(np.sum(logs))
    ld_err = 2.0 * (fp_margin(n, float(np.sum(np.abs(logs)))) + 2 * UNIT_ROUNDOFF * float(np.sum(np.abs(logs))))
    ld_err += math.sqrt(n) * E / (lam - E)
    if not inverse:
        return dataclasses.replace(_nothing(n), logdet=(ld - ld_err, ld + ld_err), solution=solution)
    if not (slope and bound.sweep.along_bandwidth):
        diagonal = _factor_diagonal(L, lam, E, g)
        return _nothing(n) if diagonal is None else Facts(*diagonal, (ld - ld_err, ld + ld_err), None, solution)
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
               logdet=(ld - ld_err, ld + ld_err), slope=None, solution=solution)
    if slope and bound.sweep.along_bandwidth:
        B = D * K
        absX = np.abs(X)
        entry = 3.0 * kernel_entry_error(d) / bw  # D exp(-t D) as computed (approxpath.envelopes)
        h = -float(np.sum(X * B))
        h_err = (fp_margin(n * n, float(np.sum(absX * B))) + entry * float(np.sum(absX))
                 + S_F * (_frob(B) + n * entry) / lam)
        out["slope"] = (h - h_err, h + h_err)
    return Facts(**out)


def _factor_diagonal(L, lam, E, g):
    """``(trace, diag_lo, diag_hi)`` of :math:`\\tilde K^{-1}` from the computed Cholesky factor
    :math:`\\hat L` (``L``; :math:`\\lVert\\hat L\\hat L^\\top - \\tilde K\\rVert_F \\le` ``E``, the kernel's rounding
    included) and its computed triangular inverse :math:`W`, or None when they say nothing.

    With :math:`R = I - \\hat L W`, :math:`\\hat L^{-1} = W + \\hat L^{-1}R` and :math:`\\lVert\\hat L^{-1}\\rVert_2
    \\le (\\lambda - E)^{-1/2}`, so the column :math:`\\hat L^{-1}e_i`, whose squared norm is
    :math:`[(\\hat L\\hat L^\\top)^{-1}]_{ii}`, is within :math:`\\rho_i = \\lVert Re_i\\rVert/\\sqrt{\\lambda - E}` of
    :math:`We_i`; and :math:`|[\\tilde K^{-1}]_{ii} - [(\\hat L\\hat L^\\top)^{-1}]_{ii}| \\le E/(\\lambda(\\lambda - E))`.
    :math:`R` is computed in one triangular product, rounded by at most :math:`\\gamma_{n+1}(I + |\\hat L||W|)`
    entrywise (columns of norm at most :math:`\\gamma_{n+1}(1 + \\lVert\\hat L\\rVert_F\\lVert We_i\\rVert)`): at
    n = 1000 the triangular inverse and this product take 18 + 39 ms against 32 + 55 ms for the
    whole inverse and its residual (one thread)."""
    n = L.shape[0]
    W, info = scipy.linalg.lapack.dtrtri(L, lower=1)
    if info != 0:
        return None
    R = np.eye(n) - scipy.linalg.blas.dtrmm(1.0, L, W, lower=1)
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


def _nothing(n):
    inf = np.full(n, np.inf)
    return Facts((0.0, np.inf), np.zeros(n), inf, (-np.inf, np.inf), (-np.inf, np.inf))


def _row_sum_bounds(bound, t, rows=slice(None)):
    """Upper bounds of the largest row sums of :math:`D\\circ e^{-tD}` and :math:`D^2\\circ e^{-tD}`
    among ``rows`` (default all: then they bound the spectral norms of those matrices at every
    bandwidth >= t), from one pass of exponentials."""
    D = bound.kernels.D[rows]
    E = np.exp(-t * D)
    out = []
    for power, allowance in ((1, 3.0), (2, 8.0)):  # D^k exp(-t D) as computed (approxpath.envelopes)
        entry = allowance * kernel_entry_error(bound.entry_terms) / t**power
        sums = (D**power * E).sum(axis=1)
        out.append(float(sums.max()) * (1.0 + fp_margin(bound.n, 1.0)) + bound.n * entry)
    return tuple(out)


def _facts(bound, tau, cache, level=2):
    """The facts at ``tau`` up to ``level`` (0: log det, 1: and the inverse's diagonal and trace,
    2: and the slope), from ``cache`` (a dict) when it holds them at that level or above."""
    key = float(tau)
    if cache is None:
        return point_facts(bound, key, slope=level >= 2, inverse=level >= 1)
    if cache.get(key, (-1, None))[0] < level:
        if len(cache) >= _CACHE:
            cache.pop(next(iter(cache)))
        cache[key] = (level, point_facts(bound, key, slope=level >= 2, inverse=level >= 1))
    return cache[key][1]


def node_pair(bound, lo, hi, cache):
    """The pair of ``[lo, hi]`` built from the computed optima at its ends (the factorizations
    :func:`_facts` keeps for the inverse's diagonal): :math:`c(t)` their interpolation linear in t and
    :math:`a(t) = \\lambda c(t)` (a fixed pair at ``lo == hi``), or None where a factorization
    failed.  Its gap over the interval is fourth order in the width (:mod:`.bound`)."""
    from approxpath.moving import interpolate

    from .bound import RidgeDual, RidgePrimal

    ends = [_facts(bound, x, cache, 1).solution for x in ((lo,) if hi == lo else (lo, hi))]
    if any(c is None for c in ends):
        return None
    lam = bound.sweep.weight
    pairs = [(RidgePrimal(c=c), RidgeDual(a=lam * c)) for c in ends]
    if hi == lo:
        return pairs[0]
    return interpolate(pairs[0], pairs[1], (0.0, 0.5, 1.0), (lo, 0.5 * (lo + hi), hi), 1)


def _interval_facts(bound, lo, hi, cache, level=1):
    """Enclosures over ``[lo, hi]`` of :math:`\\lambda d_i` (n,), :math:`\\lambda T` and
    :math:`\\log\\det` (each a ``(low, high)`` pair) from the facts at the two ends: all three are
    monotone along either path (module docstring); ``level`` as :func:`_facts` (0: only
    :math:`\\log\\det` is wanted, the others are then ``(0, inf)``)."""
    fa, fb = _facts(bound, lo, cache, level), _facts(bound, hi, cache, level)
    if not bound.sweep.along_bandwidth:
        # lambda d_i and lambda tr increase with lambda, log det increases
        return ((lo * fa.diag_lo, hi * fb.diag_hi), (lo * fa.trace[0], hi * fb.trace[1]),
                (fa.logdet[0], fb.logdet[1]))
    lam = bound.sweep.weight
    # d_i and tr decrease with the bandwidth, log det increases (a lambda times each, one rounding)
    up, down = 1.0 + 2 * UNIT_ROUNDOFF, 1.0 - 2 * UNIT_ROUNDOFF
    return ((lam * fb.diag_lo * down, lam * fa.diag_hi * up), (lam * fb.trace[0] * down, lam * fa.trace[1] * up),
            (fa.logdet[0], fb.logdet[1]))


def _lml_bandwidth(bound, primal, dual, gap, lo, hi, cache):
    """The log marginal likelihood over a bandwidth interval: its data term
    :math:`-\\tfrac12 P^*/\\lambda` enclosed by the piece's pair over the interval and
    :math:`\\log\\det` between its values at the ends (monotone, module docstring); on a cell
    narrow enough that it can help, intersected with a second-order Taylor enclosure about the
    middle (:func:`_lml_taylor`)."""
    lam, n = bound.sweep.weight, bound.n
    const = 0.5 * n * math.log(2.0 * math.pi)
    # log det only: a Cholesky factor each; first, so that the kernel products at the two ends read
    # the kernels these keep (the same entries) instead of exponentiating them again
    fa, fb = _facts(bound, lo, cache, 0), _facts(bound, hi, cache, 0)
    primal_cover = dual_cover = None
    if hi > lo and is_moving(dual):  # the primal's and the dual's kernel products in one pass
        C, A = _columns(primal, "c"), _columns(dual, "a")
        edges, low, up = expansion_cover(bound.kernels.products, np.column_stack([C, A]), lo, hi,
                                         bound.entry_terms, n)
        k = C.shape[1]
        primal_cover, dual_cover = (edges, low[:, :k], up[:, :k]), (edges, low[:, k:], up[:, k:])
    r_lo, r_hi, cKc = _residual_box(bound, primal, lo, hi, primal_cover)
    p_high = (lam * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
    p_low = max(bound.dual_floor(dual, lo, hi, cover=dual_cover), 0.0)
    v_lo = -0.5 * p_high / lam - 0.5 * fb.logdet[1] - const
    v_hi = -0.5 * p_low / lam - 0.5 * fa.logdet[0] - const
    if hi > lo:
        # |LML''| <= M on the interval, with tr K~^-1 <= n / lam (its eigenvalues are >= lam)
        trace = n / lam * (1.0 + 2 * UNIT_ROUNDOFF)

        def curvature(beta, gamma):
            return 0.5 * (p_high / lam**2) * (2.0 * beta * beta / lam + gamma) + 0.5 * trace * (beta * beta / lam + gamma)

        s = 0.5 * (hi - lo)
        # the Taylor enclosure may be the narrower (one more node) only where 0.5 M s^2 < v_hi - v_lo; a few
        # rows' sums are at most the largest, so where their M already rules it out, all n rows' would too
        few = np.linspace(0, n - 1, min(n, _GATE_ROWS)).astype(int)
        if 0.5 * curvature(*_row_sum_bounds(bound, lo, few)) * s * s < v_hi - v_lo:
            beta, gamma = _row_sum_bounds(bound, lo)
            M = curvature(beta, gamma)
            if 0.5 * M * s * s < v_hi - v_lo:
                t_lo, t_hi = _lml_taylor(bound, primal, dual, gap, 0.5 * (lo + hi), s, beta, M, cache)
                v_lo, v_hi = max(v_lo, t_lo), min(v_hi, t_hi)
    pad = _PAD * (abs(v_lo) + abs(v_hi))
    return v_lo - pad, v_hi + pad


def _lml_taylor(bound, primal, dual, gap, m, s, beta, M, cache):
    """The log marginal likelihood on ``[m - s, m + s]`` by a second-order Taylor enclosure about
    ``m``: value and slope at ``m`` enclosed from the piece's pair and the point facts,
    :math:`|LML''| \\le M` on the interval (module docstring), so :math:`LML(t) \\in LML(m) +
    LML'(m)(t - m) \\pm M(t - m)^2/2`.

    :math:`LML' = -\\tfrac12 c^{*\\top} B c^* - \\tfrac12 h` with :math:`c^* = \\rho^*/\\lambda`,
    :math:`\\rho^*` within :math:`\\sqrt{gap}` of the path's residual; :math:`LML'' = -\\tfrac12
    (y^\\top\\tilde K^{-1}y)'' - \\tfrac12 h'` with :math:`|(y^\\top\\tilde K^{-1}y)''| = |2c^\\top
    B\\tilde K^{-1}Bc - c^\\top Cc| \\le \\lVert c\\rVert^2(2\\beta^2/\\lambda + \\gamma)` and
    :math:`\\lVert c\\rVert^2 \\le y^\\top\\tilde K^{-1}y/\\lambda = P^*/\\lambda^2`.
    """
    lam, n = bound.sweep.weight, bound.n
    f = _facts(bound, m, cache)
    const = 0.5 * n * math.log(2.0 * math.pi)
    r_lo, r_hi, cKc = _residual_box(bound, primal, m, m)
    p_high = (lam * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
    p_low = max(bound.dual_floor(dual, m), 0.0)
    v_lo = -0.5 * p_high / lam - 0.5 * f.logdet[1] - const
    v_hi = -0.5 * p_low / lam - 0.5 * f.logdet[0] - const
    # slope at m: rho* = rhat + v with ||v|| <= rad (the box's half-widths and the gap's ball)
    rhat, half = 0.5 * (r_lo + r_hi), 0.5 * (r_hi - r_lo)
    rad = float(np.sqrt(np.sum(half * half))) * (1.0 + fp_margin(n, 1.0)) + sqrt_up(gap)
    B = bound.kernels.D * bound.gram(m)
    entry = 3.0 * kernel_entry_error(bound.entry_terms) / m  # D exp(-m D) as computed
    Br = B @ rhat
    a1 = float(np.sum(np.abs(rhat)))
    q = float(rhat @ Br)
    q_err = entry * a1 * a1 + fp_margin(2 * n, float(np.abs(rhat) @ (B @ np.abs(rhat))))
    norm_Br = float(np.sqrt(Br @ Br)) * (1.0 + fp_margin(2 * n, 1.0)) + entry * a1 * math.sqrt(n)
    q_err += 2.0 * norm_Br * rad + beta * rad * rad
    slope = max(abs(-0.5 * (q - q_err) / lam**2 - 0.5 * f.slope[1]),
                abs(-0.5 * (q + q_err) / lam**2 - 0.5 * f.slope[0]))
    move = slope * s + 0.5 * M * s * s
    return v_lo - move, v_hi + move


def _columns(point, name):
    """The field ``name`` of a point's points (one for a fixed point) as columns (n, K)."""
    points = point.points if is_moving(point) else (point,)
    return np.column_stack([np.asarray(getattr(q, name), dtype=float) for q in points])


def _residual_box(bound, primal, lo, hi, cover=None):
    """Entrywise bounds of :math:`y - K_t c(t)` and an upper bound of :math:`c(t)^\\top K_t c(t)`
    over the piece, for the stored primal (fixed, or moving: every point's expansion enclosed,
    combined with the weights' ranges, :func:`~approxpath.selection.predictions.combination_hull`);
    ``cover``: that expansion cover when the caller computed it already (a bandwidth piece)."""
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    C = _columns(primal, "c")
    # (the bound's memo of products: a gap bound of the same pair on the same piece took them already)
    edges, low, up = expansion_cover(bound.remembered_products(), C, t_lo, t_hi, bound.entry_terms, bound.n) \
        if cover is None else cover
    cuts = edges if bound.sweep.along_bandwidth and hi > lo else np.array([lo, hi], dtype=float)
    ranges = np.broadcast_to(weight_ranges(primal, cuts)[1], (low.shape[-1], C.shape[1], 2))
    kl, ku = (v for v in combination_hull(ranges, low, up))
    kl, ku = kl.min(axis=-1), ku.max(axis=-1)
    whole = weight_ranges(primal, [lo, hi])[1][0]  # (K, 2): each weight's range on the piece
    corners = np.stack([C * whole[:, 0], C * whole[:, 1]])
    c_lo, c_hi = corners.min(axis=0).sum(axis=1), corners.max(axis=0).sum(axis=1)  # c(t) entrywise
    c_lo, c_hi = c_lo - fp_margin(C.shape[1], 1.0) * np.abs(corners).max(axis=0).sum(axis=1), \
        c_hi + fp_margin(C.shape[1], 1.0) * np.abs(corners).max(axis=0).sum(axis=1)
    y = bound.y
    pad = fp_margin(1, 1.0) * (np.abs(y) + np.abs(kl) + np.abs(ku))
    products = np.stack([c_lo * kl, c_lo * ku, c_hi * kl, c_hi * ku])
    cKc = float(np.sum(products.max(axis=0)))
    cKc += fp_margin(bound.n, float(np.sum(np.abs(products).max(axis=0))))
    return y - ku - pad, y - kl + pad, cKc


def criterion_enclosure(bound, name, primal, dual, gap, lo, hi, cache=None):
    """An enclosure ``(low, high)`` of the criterion ``name`` (one of :data:`CLOSED_FORM`) of
    the exact optimum for every parameter of ``[lo, hi]``, given the piece's pair and its gap
    bound there (see the module docstring).  ``cache`` (a dict) keeps point factorizations."""
    if name not in CLOSED_FORM:
        raise KeyError(f"kernel_ridge has no closed-form criterion {name!r}; choose one of {', '.join(CLOSED_FORM)}")
    n = bound.n
    if not np.isfinite(gap):
        return -np.inf, np.inf
    lam_lo, lam_hi = bound.sweep.at(lo)[1], bound.sweep.at(hi)[1]
    if name == "lml":
        if bound.sweep.along_bandwidth:
            return _lml_bandwidth(bound, primal, dual, gap, lo, hi, cache)
        p_low = bound.dual_floor(dual, lo, hi)
        r_lo, r_hi, cKc = _residual_box(bound, primal, lo, hi)
        p_high = (lam_hi * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
        ld = _interval_facts(bound, lo, hi, cache, 0)[2]
        const = 0.5 * n * math.log(2.0 * math.pi)
        low = -0.5 * p_high / lam_lo - 0.5 * ld[1] - const
        high = -0.5 * max(p_low, 0.0) / lam_hi - 0.5 * ld[0] - const
        pad = _PAD * (abs(low) + abs(high))
        return low - pad, high + pad
    r_lo, r_hi, _ = _residual_box(bound, primal, lo, hi)
    ball = sqrt_up(gap)  # ||rho* - rho|| <= sqrt(gap)
    big = np.maximum(r_lo * r_lo, r_hi * r_hi)
    near = np.maximum(np.maximum(r_lo, -r_hi), 0.0) ** 2
    ld_i, l_tr, _ = _interval_facts(bound, lo, hi, cache)
    if name == "loocv":
        if not np.all(ld_i[0] > 0):
            return 0.0, np.inf
        w_lo, w_hi = 1.0 / ld_i[1], 1.0 / ld_i[0]
        top = math.sqrt(float(np.sum(w_hi * w_hi * big))) + float(w_hi.max()) * ball
        bottom = max(math.sqrt(float(np.sum(w_lo * w_lo * near))) - float(w_hi.max()) * ball, 0.0)
        low, high = bottom * bottom / n, top * top / n
    else:  # gcv
        if not l_tr[0] > 0:
            return 0.0, np.inf
        top = math.sqrt(float(np.sum(big))) + ball
        bottom = max(math.sqrt(float(np.sum(near))) - ball, 0.0)
        low, high = n * bottom * bottom / l_tr[1] ** 2, n * top * top / l_tr[0] ** 2
    pad = _PAD + fp_margin(n, 1.0)  # the n-term sums of squares
    return low * (1.0 - pad), high * (1.0 + pad)
