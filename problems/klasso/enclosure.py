"""Where the exact kLASSO optimum's predictions lie, from a piece's certified gap (numpy only).

The primal :math:`\\tfrac12\\lVert y - v\\rVert^2 + \\lambda\\lVert\\beta\\rVert_1` with the
fitted values :math:`v = K\\beta + \\beta_0\\mathbf 1` is 1-strongly convex in :math:`v`, not in
:math:`\\beta`: a pair within ``gap`` of the optimum has :math:`\\lVert v - v^*\\rVert \\le R =
\\sqrt{2\\,gap}`, and nothing pins :math:`\\beta^*` except its size,
:math:`\\lambda\\lVert\\beta^*\\rVert_1 = P^* - \\tfrac12\\lVert y - v^*\\rVert^2 \\le P(\\beta) -
\\tfrac12(\\lVert r\\rVert - R)_+^2`, so :math:`\\lVert\\beta^* - \\beta\\rVert_1 \\le \\Delta =
2\\lVert\\beta\\rVert_1 + R\\max(\\lVert r\\rVert, R)/\\lambda` (:math:`r = y - v`, the path's residual).

Safe screening narrows the set: the dual objective is 1-strongly concave, so the optimal dual
(the optimal residual :math:`u^* = y - v^*`) is within :math:`R` of the piece's feasible dual
:math:`u`, and where :math:`|(K u)_j| + \\lVert K e_j\\rVert R < \\lambda` on the whole piece the
optimality conditions (:math:`\\beta^*_j \\ne 0 \\Rightarrow |(Ku^*)_j| = \\lambda`) give
:math:`\\beta^*_j = 0`.  So :math:`\\beta^* - \\beta` lives on the columns ``S`` not screened out
plus the support of :math:`\\beta`.

A new point's prediction :math:`f(x) = k_x^\\top\\beta + \\beta_0` is then bounded by weak
duality of the support function of that set: with :math:`M = [K_{:S}, \\mathbf 1]`, for any
:math:`a \\in \\mathbb R^n`,

.. math::

    f^*(x) - f(x) = a^\\top(v^* - v) + (k_{x,S} - K_{:S}^\\top a)^\\top(\\beta^* - \\beta)_S
    + (1 - \\mathbf 1^\\top a)(\\beta^*_0 - \\beta_0),

so :math:`|f^*(x) - f(x)| \\le R\\lVert a\\rVert_2 + \\Delta\\lVert k_{x,S} - K_{:S}^\\top a\\rVert_\\infty
+ |1 - \\mathbf 1^\\top a|\\,(\\Delta + |\\bar r|)` (the optimal intercept is the mean of
:math:`y - K\\beta^*`, so :math:`|\\beta_0^* - \\beta_0| \\le \\Delta + |\\bar r|`).  Any ``a``
is rigorous; per half of the piece and point it is the ridge solution of :math:`M^\\top a =
(k_{x,S}, 1)` at the half's middle with the smallest radius there (a few columns: a
small system).  On a bandwidth piece the residual of those equations, :math:`f(x)` and
:math:`r` are enclosed per node sub-interval by Hermite envelopes.

The radius shrinks with :math:`R` when few columns survive the screening (a sparse optimum
and a small gap); with many, what the columns cannot represent of :math:`k_x` stays, and the
enclosure is wide (and honest).
"""

from __future__ import annotations

import math

import numpy as np

from approxpath.envelopes import Envelope, difference_nodes, envelope_entry_error, split_envelope
from approxpath.compute.kernels import gaussian
from approxpath.moving import is_moving, weight_ranges
from approxpath.numerics import fp_margin, kernel_entry_error, log_mid
from approxpath.selection.predictions import CHAIN, combination_hull, cross_products, expansion_cover, new_distances, sqrt_up

__all__ = ["prediction_enclosure"]

# The approximations are chosen once per half of a piece: the node sub-intervals 0-8 and 9-17
# (the 19 nodes of approxpath.envelopes.difference_nodes put s = 1/2 at node 9); a search
# keeps halves of pieces as its cells anyway (approxpath.selection.validation).
_GROUPS = (slice(0, 9), slice(9, None))
# Ridge weights tried for the approximation a (relative to the largest eigenvalue of M'M):
# 1 down to 1e-14, a decade apart (the radius's terms trade off along them).
_RIDGES = 10.0 ** -np.arange(0, 15)


def _approximations(M, phi, R, Delta, mean):
    """Per column of ``phi`` (k, m), the ``a`` (n, m) among the ridge solutions of
    :math:`M^\\top a = \\phi` (``M`` (n, k), last column the ones) whose radius
    :math:`R\\lVert a\\rVert + \\Delta\\lVert e_S\\rVert_\\infty + |e_0|(\\Delta + \\bar r)`,
    :math:`e = \\phi - M^\\top a`, is smallest (as computed: a choice, not a bound).

    In the eigenbasis :math:`G = M^\\top M = V\\,\\mathrm{diag}(w)\\,V^\\top` the ridge solution
    is :math:`a = MVc` with :math:`c = V^\\top\\phi / (w + \\mu)`, so :math:`\\lVert a\\rVert^2 =
    \\sum_i w_i c_i^2` and :math:`e = V (\\mu\\, V^\\top\\phi / (w + \\mu))`: one k x k product per
    ridge weight, and ``a`` formed once, for the chosen ones."""
    w, V = np.linalg.eigh(M.T @ M)
    w = np.maximum(w, 0.0)
    Vp = V.T @ phi
    best, choice = None, None
    for mu in _RIDGES * max(float(w.max()), 1e-300):
        c = Vp / (w + mu)[:, None]
        e = V @ (mu * c)  # phi - M'a
        radius = (R * np.sqrt(w @ (c * c)) + Delta * np.abs(e[:-1]).max(axis=0, initial=0.0)
                  + np.abs(e[-1]) * (Delta + mean))
        if best is None:
            best, choice = radius, c
        else:
            better = radius < best
            best = np.where(better, radius, best)
            choice = np.where(better[None, :], c, choice)
    return (M @ V) @ choice


def _screened(bound, dual, R, lam, lo, hi):
    """Columns ``j`` where :math:`\\beta^*_j` may be nonzero somewhere on the piece: not safely
    screened out by :math:`|(K_t u)_j| + \\lVert K_t e_j\\rVert R < \\lambda`."""
    d, n = bound.entry_terms, bound.n
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    points, ranges = weight_ranges(dual, [lo, hi])
    U = np.column_stack([np.asarray(q.u, dtype=float) for q in points])
    _, low, up = expansion_cover(bound.kernels.products, U, t_lo, t_hi, d, n)  # (n, K, J)
    top = np.abs(ranges[0]).max(axis=-1)  # (K,): the largest weight of each point on the piece
    Ku = (np.maximum(np.abs(low), np.abs(up)).max(axis=-1) @ top) * (1.0 + fp_margin(len(points) + 1, 1.0))
    E = gaussian(bound.kernels.D, 2.0 * t_lo)  # ||K_t e_j||^2 = sum_i exp(-2 t D_ij), largest at t_lo
    col = np.sqrt(E.sum(axis=0) + n * kernel_entry_error(d)) * (1.0 + fp_margin(n, 1.0))
    top = (Ku + col * R) * (1.0 + fp_margin(8, 1.0))
    return np.flatnonzero(top >= lam)


def _residual_sup(bound, A, S, Dt, t_lo, t_hi):
    """An upper bound of :math:`\\lVert k_{x,S} - K_{:S}^\\top a_x\\rVert_\\infty` for every
    bandwidth of ``[t_lo, t_hi]``, per point (column of ``A``), rounding included: ``(m,)``."""
    n, d = bound.n, bound.entry_terms
    if S.size == 0:
        return np.zeros(A.shape[1])
    a1 = np.abs(A).sum(axis=0)  # (m,)
    DS = bound.kernels.D[S]  # (|S|, n): rows S of the symmetric distances
    DtS = Dt[S]  # (|S|, m)
    if t_lo == t_hi:
        kx, KS = gaussian(DtS, t_lo), gaussian(DS, t_lo)
        e = kx - KS @ A
        allowance = kernel_entry_error(d) * (1.0 + a1) + fp_margin(n + 1, 1.0) * (kx + KS @ np.abs(A))
        return (np.abs(e) + allowance).max(axis=0)
    ends = []
    for t in (t_lo, t_hi):
        E = gaussian(DtS, t)
        T = DtS * E
        ends.append((E, -T, T * DtS))
    single = Envelope(t_lo, t_hi, ends[0][0], ends[1][0], ends[0][1], ends[1][1], ends[0][2], ends[1][2])
    PA, NA = split_envelope(cross_products(DS), A, t_lo, t_hi)
    fields = ("f_lo", "f_hi", "df_lo", "df_hi", "d2f_lo", "d2f_hi")
    P = Envelope(t_lo, t_hi, *(getattr(single, f) + getattr(NA, f) for f in fields))
    _, low, up = difference_nodes(P, PA)  # (|S|, m, nodes): k_x + K a^- - K a^+ on the rows S
    allowance = (envelope_entry_error(t_lo, t_hi, d) * (1.0 + a1)
                 + fp_margin(n + CHAIN, 1.0) * (P.magnitude() + PA.magnitude()))
    return (np.maximum(up, -low).max(axis=-1) + allowance).max(axis=0)


def prediction_enclosure(bound, primal, dual, gap, lo, hi, X_new, rows=None, lam=None):
    """Enclosures of every exact optimum's predictions at the rows of ``X_new`` for every
    parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap`` there (see the module
    docstring): ``(edges (J + 1,), low (m, J), up (m, J))``, ``edges`` the node sub-intervals' ends on
    a bandwidth piece.  Over λ, an interval's two halves (in log λ), each with its own smallest λ: a
    selection can split a cell (``edges`` ``[lo, mid, hi]``, the log middle; ``[lo, hi]`` at a point).

    Parameters
    ----------
    bound : KLassoBound
    primal : KLassoPrimal or Moving
        Its points' ``beta`` and ``beta0`` (a moving primal: their hull with its weights' ranges).
    dual : KLassoDual or Moving
        Feasible at ``lam`` (the screening's :math:`u`).
    gap : float
        The pair's gap bound on the piece (not finite: unbounded enclosures).
    lo, hi : float
        The piece in the path parameter.
    X_new : ndarray of shape (m, d)
        The new points (with ``kernel="precomputed"``, their distances
        :func:`~approxpath.selection.predictions.new_distances` reads).
    rows : ndarray of int, optional
        Only these rows of ``X_new`` (then m is their number).
    lam : float, optional
        The smallest λ where it must hold (default the piece's), at which the dual is feasible;
        over λ, each half's smallest λ where that is larger.
    """
    if not bound.sweep.along_bandwidth and hi > lo:
        mid = log_mid(lo, hi)
        halves = [_enclosure(bound, primal, dual, gap, a, b, X_new, rows, a if lam is None else max(lam, a))
                  for a, b in ((lo, mid), (mid, hi))]
        return (np.array([lo, mid, hi]), *(np.concatenate([h[i] for h in halves], axis=1) for i in (1, 2)))
    return _enclosure(bound, primal, dual, gap, lo, hi, X_new, rows, lam)


def _enclosure(bound, primal, dual, gap, lo, hi, X_new, rows=None, lam=None):
    """:func:`prediction_enclosure` of ``[lo, hi]`` as one sub-interval over λ (as many as the
    bandwidth's nodes need over the bandwidth)."""
    points = primal.points if is_moving(primal) else (primal,)  # a moving pair: its points' hull
    B = np.stack([np.asarray(q.beta, dtype=float) for q in points], axis=1)  # (n, K)
    b0 = np.array([float(q.beta0) for q in points])  # (K,)
    n, d, y = bound.n, bound.entry_terms, bound.y
    lam = bound.sweep.weight_floor(lo) if lam is None else lam
    t_lo, t_hi = bound.sweep.bandwidths(lo, hi)
    Dc = new_distances(bound, X_new, rows)
    edges, f_low, f_up = expansion_cover(cross_products(Dc), B, t_lo, t_hi, d, n)  # (m, K, J)
    _, k_low, k_up = expansion_cover(bound.kernels.products, B, t_lo, t_hi, d, n)  # (n, K, J)
    if not bound.sweep.along_bandwidth:  # one sub-interval: the piece's weights (lambda)
        edges = np.array([lo, hi], dtype=float)
    ranges = weight_ranges(primal, edges)[1]  # (J, K, 2)
    # f_k(x) + beta0_k and the fitted values (K beta_k)_i + beta0_k, then their combination's hull
    (f_low, f_up), (v_low, v_up) = (
        combination_hull(ranges, lw + b0[:, None] - fp_margin(1, 1.0) * (np.abs(lw) + np.abs(b0[:, None])),
                         up + b0[:, None] + fp_margin(1, 1.0) * (np.abs(up) + np.abs(b0[:, None])))
        for lw, up in ((f_low, f_up), (k_low, k_up)))
    if not np.isfinite(gap):
        return edges, np.full(f_low.shape, -np.inf), np.full(f_low.shape, np.inf)
    R = sqrt_up(2.0 * gap)
    pad = fp_margin(1, 1.0) * (np.abs(y)[:, None] + np.abs(v_low) + np.abs(v_up))
    r_low, r_up = y[:, None] - v_up - pad, y[:, None] - v_low + pad  # (n, J)
    r_norm = np.sqrt(np.sum(np.maximum(r_low * r_low, r_up * r_up), axis=0)) * (1.0 + fp_margin(n, 1.0))
    r_mean = np.maximum(np.abs(r_low.mean(axis=0)), np.abs(r_up.mean(axis=0))) * (1.0 + fp_margin(n, 1.0))
    top = np.abs(ranges).max(axis=-1)  # (J, K): each weight's largest size per sub-interval
    b1 = (top @ np.abs(B).sum(axis=0)) * (1.0 + fp_margin(n + len(points), 1.0))  # (J,): ||beta(t)||_1
    Delta = (2.0 * b1 + R * np.maximum(r_norm, R) / lam) * (1.0 + fp_margin(4, 1.0))  # (J,)
    S = np.union1d(_screened(bound, dual, R, lam, lo, hi), np.flatnonzero(np.any(B != 0, axis=1)))
    Dt = Dc.T  # (n, m)
    cuts = np.array([t_lo, t_hi]) if t_lo == t_hi else edges
    radius = np.empty(f_low.shape)
    for g in _GROUPS[: 1 if cuts.size == 2 else 2]:  # one approximation per half of the piece
        js = np.arange(f_low.shape[1])[g]
        a_, b_ = float(cuts[js[0]]), float(cuts[js[-1] + 1])
        tm = log_mid(a_, b_)
        D_g, mean_g = float(Delta[js].max()), float(r_mean[js].max())
        M = np.column_stack([gaussian(bound.kernels.D[:, S], tm), np.ones(n)])
        phi = np.vstack([gaussian(Dt[S], tm), np.ones(Dt.shape[1])])
        A = _approximations(M, phi, R, D_g, mean_g)
        e_sup = _residual_sup(bound, A, S, Dt, a_, b_)
        a2 = np.sqrt(np.sum(A * A, axis=0)) * (1.0 + fp_margin(n, 1.0))
        off = np.array([abs(1.0 - math.fsum(A[:, i])) for i in range(A.shape[1])])
        off += fp_margin(n, 1.0) * np.abs(A).sum(axis=0)  # fsum is exact up to its final rounding
        radius[:, js] = (R * a2 + D_g * e_sup + off * (D_g + mean_g))[:, None]
    radius *= 1.0 + fp_margin(4, 1.0)
    low, up = f_low - radius, f_up + radius
    mag = np.abs(f_low) + np.abs(f_up) + radius
    return edges, low - fp_margin(1, 1.0) * mag, up + fp_margin(1, 1.0) * mag
