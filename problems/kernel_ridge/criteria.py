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

From a pair with a certified gap on the cell (a path's piece, or the optima at the cell's ends:
:func:`node_pair`): its dual floor and primal value enclose :math:`P^*` and, as :math:`P(c) - P^*
= \\delta^\\top(\\lambda K + K^2)\\delta \\ge \\lVert K\\delta\\rVert^2`, it puts :math:`\\rho^*` in the
2-norm ball of radius :math:`\\sqrt{gap}` around the pair's residual.

From rigorous linear algebra at a point: :mod:`.facts` (a Cholesky factor, the inverse's
diagonal and trace, log det and its slope, each enclosed with its rounding).

Over a bandwidth interval :math:`[a, b]` (:func:`interval_facts`): :math:`K_s = e^{-sD}` is
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

import math

import numpy as np

from approxpath.moving import columns, is_moving, weight_ranges
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, kernel_entry_error, log_mid
from approxpath.selection.predictions import combination_hull, expansion_cover, sqrt_up

from .facts import cached_facts
from .node_pairs import node_pair

__all__ = ["CLOSED_FORM", "END_LEVEL", "PAD", "criterion_enclosure", "interval_facts", "lml_bounds", "node_pair",
           "optimal_value", "residual_box", "residual_criterion"]

#: Criteria with a closed form and whether they are minimized or maximized.
CLOSED_FORM = {"loocv": "min", "gcv": "min", "lml": "max"}
#: The facts each criterion takes at a cell's ends (:func:`.facts.cached_facts`' levels): the marginal
#: likelihood's log det alone, the others' the inverse's diagonal and trace too.
END_LEVEL = {"loocv": 1, "gcv": 1, "lml": 0}
#: Final enclosures are widened by this relative amount: the few scalar operations after the
#: rigorous parts (products, quotients, exp, sqrt: each within a unit roundoff), 64 u in all.
PAD = 64 * UNIT_ROUNDOFF
# Rows whose sums decide whether a cell's Taylor enclosure can help before all n are summed: a gate
# only (skipping the Taylor enclosure is always sound); 16 evenly spaced rows cost ~2 % of all n at n = 1000.
_GATE_ROWS = 16


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


def interval_facts(bound, lo, hi, cache, level=1):
    """Enclosures over ``[lo, hi]`` of :math:`\\lambda d_i` (n,), :math:`\\lambda T` and
    :math:`\\log\\det` (each a ``(low, high)`` pair) from the facts at the two ends: all three are
    monotone along either path (module docstring), so the ends of any interval around the cell
    serve as well (a ``span`` of :func:`criterion_enclosure`); ``level`` as
    :func:`.facts.cached_facts` (0: only :math:`\\log\\det` is wanted, the others are then ``(0, inf)``).
    ``lo, hi`` in the path parameter (bandwidths, or λ on the λ path); ``cache``: a dict of point
    factorizations, or None (computed, not kept)."""
    fa, fb = cached_facts(bound, lo, cache, level), cached_facts(bound, hi, cache, level)
    if not bound.sweep.along_bandwidth:
        # lambda d_i and lambda tr increase with lambda, log det increases
        return ((_down(lo, fa.diag_lo), _up(hi, fb.diag_hi)), (_down(lo, fa.trace[0]), _up(hi, fb.trace[1])),
                (fa.logdet[0], fb.logdet[1]))
    lam = bound.sweep.weight
    # d_i and tr decrease with the bandwidth, log det increases
    return ((_down(lam, fb.diag_lo), _up(lam, fa.diag_hi)), (_down(lam, fb.trace[0]), _up(lam, fa.trace[1])),
            (fa.logdet[0], fb.logdet[1]))


def _down(s, x):
    """A lower bound of the exact product ``s * x``: one rounding to nearest is within half a spacing,
    so the next float toward minus infinity is below it (either sign, subnormals too)."""
    return np.nextafter(s * x, -np.inf)


def _up(s, x):
    """An upper bound of the exact product ``s * x`` (:func:`_down`)."""
    return np.nextafter(s * x, np.inf)


def _lml_bandwidth(bound, primal, dual, gap, lo, hi, cache, span):
    """The log marginal likelihood over a bandwidth interval: its data term
    :math:`-\\tfrac12 P^*/\\lambda` enclosed by the piece's pair over the interval and
    :math:`\\log\\det` between its values at the ends (monotone, module docstring); on a cell
    narrow enough that it can help, intersected with a second-order Taylor enclosure about the
    middle (:func:`_lml_taylor`)."""
    lam, n = bound.sweep.weight, bound.n
    # log det only: a Cholesky factor each; first, so that the kernel products at the two ends read
    # the kernels these keep (the same entries) instead of exponentiating them again
    fa, fb = cached_facts(bound, span[0], cache, 0), cached_facts(bound, span[1], cache, 0)
    p_low, p_high = optimal_value(bound, primal, dual, lo, hi)
    v_lo, v_hi = lml_bounds(n, (p_low / lam, p_high / lam), (fa.logdet[0], fb.logdet[1]), padded=False)
    if hi > lo:
        # |LML''| <= M on the interval, with tr K~^-1 <= n / lam (its eigenvalues are >= lam)
        trace = n / lam * (1.0 + 2 * UNIT_ROUNDOFF)

        def curvature(beta, gamma):
            return 0.5 * (p_high / lam**2) * (2.0 * beta * beta / lam + gamma) + 0.5 * trace * (beta * beta / lam + gamma)

        # about the log-scale middle, where a cell is halved: its factorization there serves both halves
        m = log_mid(lo, hi)
        s = max(m - lo, hi - m)
        # the Taylor enclosure may be the narrower (one more node) only where 0.5 M s^2 < v_hi - v_lo; a few
        # rows' sums are at most the largest, so where their M already rules it out, all n rows' would too
        few = np.linspace(0, n - 1, min(n, _GATE_ROWS)).astype(int)
        if 0.5 * curvature(*_row_sum_bounds(bound, lo, few)) * s * s < v_hi - v_lo:
            beta, gamma = _row_sum_bounds(bound, lo)
            M = curvature(beta, gamma)
            if 0.5 * M * s * s < v_hi - v_lo:
                t_lo, t_hi = _lml_taylor(bound, primal, dual, gap, m, s, beta, M, cache)
                v_lo, v_hi = max(v_lo, t_lo), min(v_hi, t_hi)
    return _padded(v_lo, v_hi)


def lml_bounds(n, q, ld, padded=True):
    """``(low, high)``: the log marginal likelihood :math:`-\\tfrac12 y^\\top\\tilde K^{-1}y -
    \\tfrac12\\log\\det\\tilde K - \\tfrac n2\\log 2\\pi` (n training points) from :math:`y^\\top\\tilde
    K^{-1}y = P^*/\\lambda` in ``q`` and :math:`\\log\\det\\tilde K` in ``ld`` (``(low, high)`` pairs);
    ``padded``: widened by :data:`PAD` of its magnitudes for the few operations here."""
    const = 0.5 * n * math.log(2.0 * math.pi)
    low = -0.5 * float(q[1]) - 0.5 * float(ld[1]) - const
    high = -0.5 * float(q[0]) - 0.5 * float(ld[0]) - const
    return _padded(low, high) if padded else (low, high)


def _padded(low, high):
    """``(low, high)`` widened by :data:`PAD` of their magnitudes."""
    pad = PAD * (abs(low) + abs(high))
    return low - pad, high + pad


def optimal_value(bound, primal, dual, lo, hi):
    """``(low, high)``: :math:`P^*` at every bandwidth of ``[lo, hi]`` (``lo <= hi``, λ fixed: ``bound.sweep.weight``),
    between the pair's dual floor and its primal value there.

    Returns
    -------
    low, high : float
        ``bound.dual_floor`` on the piece, at least 0; :math:`\\lambda\\,c^\\top K_t c + \\lVert y - K_t c\\rVert^2`
        bounded above from :func:`residual_box`, widened by ``fp_margin(n + 2, 1)`` relative.
    """
    lam, n = bound.sweep.weight, bound.n
    primal_cover = dual_cover = None
    if hi > lo and is_moving(dual):
        # the primal's cover from the kernel products its gap bound took (the bound's memo), and the
        # dual's from it where a = lam c (the optima's pairs: a third of the time at n = 1000)
        C, A = columns(primal, "c"), columns(dual, "a")
        primal_cover = expansion_cover(bound.remembered_products(), C, lo, hi, bound.entry_terms, n)
        if np.array_equal(A, lam * C):
            dual_cover = _scaled_cover(primal_cover, A, lam)
    r_lo, r_hi, cKc = residual_box(bound, primal, lo, hi, primal_cover)
    p_high = (lam * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
    return max(bound.dual_floor(dual, lo, hi, cover=dual_cover), 0.0), p_high


def _scaled_cover(cover, A, lam):
    """The :func:`~approxpath.selection.predictions.expansion_cover` of the columns ``A`` (n, k)
    from ``cover``, that of ``C`` with ``A == fl(lam * C)`` entrywise: :math:`K_t a = \\lambda K_t c +
    K_t(a - \\lambda c)` with :math:`|a_j - \\lambda c_j| \\le u|a_j|` and kernel entries in [0, 1] (within a
    few units of roundoff), so each column is within :math:`1.01\\,u\\lVert a\\rVert_1` of
    :math:`\\lambda` times the other; the products by :math:`\\lambda` round by :math:`u` relative (2u
    allowed)."""
    edges, low, up = cover
    pad = 1.01 * UNIT_ROUNDOFF * np.abs(A).sum(axis=0)[None, :, None]  # (1, k, 1)
    low, up = lam * low, lam * up
    return edges, low - 2 * UNIT_ROUNDOFF * np.abs(low) - pad, up + 2 * UNIT_ROUNDOFF * np.abs(up) + pad


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
    f = cached_facts(bound, m, cache)
    r_lo, r_hi, cKc = residual_box(bound, primal, m, m)
    p_high = (lam * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
    p_low = max(bound.dual_floor(dual, m), 0.0)
    v_lo, v_hi = lml_bounds(n, (p_low / lam, p_high / lam), f.logdet, padded=False)
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


def residual_box(bound, primal, lo, hi, cover=None):
    """Entrywise bounds of :math:`y - K_t c(t)` and an upper bound of :math:`c(t)^\\top K_t c(t)`
    over the piece ``[lo, hi]`` (in the path parameter), for the stored primal (fixed, or moving: every point's
    expansion enclosed, combined with the weights' ranges, :func:`~approxpath.selection.predictions.combination_hull`);
    ``cover``: that expansion cover (:func:`~approxpath.selection.predictions.expansion_cover` of the primal's
    points on the piece) when the caller computed it already (a bandwidth piece).

    Returns
    -------
    r_lo, r_hi : ndarray of shape (n,)
        :math:`y - K_t c(t)` entrywise, rounding included.
    cKc : float
        :math:`\\ge c(t)^\\top K_t c(t)` on the piece.
    """
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    C = columns(primal, "c")
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


def criterion_enclosure(bound, name, primal, dual, gap, lo, hi, cache=None, span=None):
    """An enclosure ``(low, high)`` of the criterion ``name`` (one of :data:`CLOSED_FORM`) of
    the exact optimum for every parameter of ``[lo, hi]``, given the piece's pair and its gap
    bound ``gap`` there (see the module docstring; ``(-inf, inf)`` where ``gap`` is not finite).
    ``cache`` (a dict) keeps point factorizations (:func:`.facts.cached_facts`); ``span``: an
    interval around ``[lo, hi]`` whose ends' facts to use (default ``(lo, hi)``).

    Raises
    ------
    KeyError
        ``name`` is not one of :data:`CLOSED_FORM`.
    """
    span = (lo, hi) if span is None else span
    if name not in CLOSED_FORM:
        raise KeyError(f"kernel_ridge has no closed-form criterion {name!r}; choose one of {', '.join(CLOSED_FORM)}")
    n = bound.n
    if not np.isfinite(gap):
        return -np.inf, np.inf
    lam_lo, lam_hi = bound.sweep.at(lo)[1], bound.sweep.at(hi)[1]
    if name == "lml":
        if bound.sweep.along_bandwidth:
            return _lml_bandwidth(bound, primal, dual, gap, lo, hi, cache, span)
        p_low = bound.dual_floor(dual, lo, hi)
        r_lo, r_hi, cKc = residual_box(bound, primal, lo, hi)
        p_high = (lam_hi * cKc + float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))) * (1.0 + fp_margin(n + 2, 1.0))
        ld = interval_facts(bound, *span, cache, 0)[2]
        return lml_bounds(n, (max(p_low, 0.0) / lam_hi, p_high / lam_lo), ld)
    r_lo, r_hi, _ = residual_box(bound, primal, lo, hi)
    ld_i, l_tr, _ = interval_facts(bound, *span, cache)
    return residual_criterion(name, n, r_lo, r_hi, sqrt_up(gap), ld_i, l_tr)  # ||rho* - rho|| <= sqrt(gap)


def residual_criterion(name, n, r_lo, r_hi, ball, ld_i, l_tr):
    """LOOCV or GCV (``name``: ``"loocv"``, any other is GCV) enclosed from :math:`\\rho^*` in the box
    ``[r_lo, r_hi]`` (n,) plus the 2-norm ball of radius ``ball``, :math:`\\lambda d_i` in ``ld_i`` and
    :math:`\\lambda T` in ``l_tr`` (``(low, high)`` pairs), n training points.  Row by row for arrays of
    shape (m, n) (``l_tr``'s and ``ball`` of shape (m,)): then the ``(low, high)`` arrays of shape (m,).
    Widened by :data:`PAD` and ``fp_margin(n, 1)`` relative; ``(0, inf)`` where the lower bound of a
    :math:`\\lambda d_i` (LOOCV) or of :math:`\\lambda T` (GCV) is not positive."""
    rows = np.ndim(r_lo) == 2
    r_lo, r_hi = np.atleast_2d(r_lo), np.atleast_2d(r_hi)
    big = np.maximum(r_lo * r_lo, r_hi * r_hi)
    near = np.maximum(np.maximum(r_lo, -r_hi), 0.0) ** 2
    if name == "loocv":
        d_lo, d_hi = np.atleast_2d(ld_i[0]), np.atleast_2d(ld_i[1])
        usable = np.all(d_lo > 0, axis=1)
        w_lo, w_hi = 1.0 / d_hi, 1.0 / np.where(d_lo > 0, d_lo, 1.0)
        top = np.sqrt(np.sum(w_hi * w_hi * big, axis=1)) + w_hi.max(axis=1) * ball
        bottom = np.maximum(np.sqrt(np.sum(w_lo * w_lo * near, axis=1)) - w_hi.max(axis=1) * ball, 0.0)
        low, high = bottom * bottom / n, top * top / n
    else:  # gcv
        t_lo, t_hi = np.atleast_1d(l_tr[0]).astype(float), np.atleast_1d(l_tr[1]).astype(float)
        usable = t_lo > 0
        top = np.sqrt(np.sum(big, axis=1)) + ball
        bottom = np.maximum(np.sqrt(np.sum(near, axis=1)) - ball, 0.0)
        low, high = n * bottom * bottom / t_hi**2, n * top * top / np.where(usable, t_lo, 1.0) ** 2
    pad = PAD + fp_margin(n, 1.0)  # the n-term sums of squares
    low, high = np.where(usable, low * (1.0 - pad), 0.0), np.where(usable, high * (1.0 + pad), np.inf)
    return (low, high) if rows else (float(low[0]), float(high[0]))
