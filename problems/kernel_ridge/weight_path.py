"""Kernel ridge's pairs that move linearly in λ on the λ path (a fixed bandwidth): their gap bound
and their dual objective's floor over a piece (numpy only).

The driver's interpolation of the exact solves at :math:`\\lambda_0 < \\lambda_1` (the piece's span),
:math:`c(\\lambda) = (1 - \\theta)c_0 + \\theta c_1` and :math:`a(\\lambda) = (1 - \\theta)\\lambda_0 c_0 +
\\theta\\lambda_1 c_1` with :math:`\\theta = (\\lambda - \\lambda_0)/(\\lambda_1 - \\lambda_0)`, has the residual
:math:`r = K c + a - y = (1 - \\theta)r_0 + \\theta r_1`, zero up to the solves' own residuals, and
:math:`e = \\lambda c - a = (\\lambda - \\lambda_0)(\\lambda_1 - \\lambda)(c_0 - c_1)/(\\lambda_1 - \\lambda_0)`,
second order in the piece's width: the gap :math:`\\tfrac1\\lambda e^\\top K e + \\lVert r\\rVert^2` is fourth
order, where a fixed pair's is second.  The bounds below hold for any pair whose two sides' weights
have degree at most 1 (:attr:`RidgeBound.moving_degrees`).
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import coefficient_rounding
from approxpath.moving import parts
from approxpath.numerics import fp_margin
from approxpath.selection.predictions import sqrt_up

from .bound import linear_floor, product_error, quadratic_ceiling

__all__ = ["moving_gap", "moving_dual_floor"]

# Parts of a piece on which e'Ke / lam is bounded apart (its largest norm over a part with the part's
# smallest lam; a piece's lam may span a factor of a few: a cell of a choice's first cover, e wide)
_PARTS = 8


def _ends(point, name, lo, hi):
    """``(values, err)`` (n, 2): the field ``name`` of a stored point at ``lo`` and at ``hi`` as
    computed (its points times its weights' Bernstein coefficients on the piece, degree 1) and how
    far each entry can be from the exact one (the products' rounding, the coefficients').
    ValueError for a piece whose ends are reversed (the bounds take λ's smallest value at ``lo``)."""
    if not lo <= hi:
        raise ValueError(f"a piece [lo, hi] of the lam path with lo <= hi; got [{lo!r}, {hi!r}]")
    V, W, err = parts(point, name, lo, hi, linear=True)
    if W.shape[1] != 2:
        raise ValueError(f"a moving {name} on the lam path must have weights of degree <= 1; got {W.shape[1] - 1}")
    aV = np.abs(V)
    return V @ W, fp_margin(V.shape[1], 1.0) * (aV @ np.abs(W)) + (aV @ (err + coefficient_rounding(W)))[:, None]


def _norm_up(bound, K, v, dv):
    """An upper bound of :math:`\\sqrt{v^{*\\top} K^* v^*}` for the exact kernel :math:`K^*` and any
    :math:`v^*` within ``dv`` of ``v`` (n,): the computed quadratic form with its rounding
    (:func:`~.bound.product_error`), then :math:`\\lVert dv\\rVert_1` (entries of
    :math:`K^*` in [0, 1], so :math:`\\lVert w\\rVert_{K^*} \\le \\lVert w\\rVert_1`)."""
    gn = fp_margin(bound.n, 1.0)
    Kv, delta = product_error(K, v, bound.entry_error)
    quad = float(v @ Kv) + float(np.abs(v) @ (delta + gn * np.abs(Kv)))
    return sqrt_up(quad + fp_margin(4, quad)) + float(dv.sum()) * (1.0 + fp_margin(bound.n, 1.0))


def moving_gap(bound, primal, dual, lo, hi):
    """A bound of the gap of ``(primal, dual)`` for every λ of the piece ``[lo, hi]`` (``lo < hi``),
    each side fixed or moving with weights of degree at most 1.

    The residual :math:`r(\\lambda) = Kc + a - y` is linear in λ, so each :math:`|r_i|` is at most its
    larger end, with the rounding of the products (:meth:`RidgeBound._gap_terms`) and the points'.
    :math:`e(\\lambda) = \\lambda c - a` is quadratic, with Bernstein coefficients
    :math:`E_0 = \\lambda_{lo}c_{lo} - a_{lo}`, :math:`E_1 = \\tfrac12(\\lambda_{lo}c_{hi} + \\lambda_{hi}c_{lo}
    - a_{lo} - a_{hi})`, :math:`E_2 = \\lambda_{hi}c_{hi} - a_{hi}`; by the triangle inequality in the
    kernel's seminorm :math:`\\lVert e\\rVert_K \\le \\sum_k B_k \\lVert E_k\\rVert_K`, a quadratic with
    nonnegative coefficients whose maximum on a part of the piece is at most the largest of its
    coefficients there; and :math:`e^\\top K e/\\lambda` is at most that squared over the part's
    smallest λ, on each of :data:`_PARTS` parts."""
    lo, hi = float(lo), float(hi)
    n, y = bound.n, bound.y
    K = bound.gram(lo)  # (the bandwidth is fixed on the lam path)
    (c, dc), (a, da) = _ends(primal, "c", lo, hi), _ends(dual, "a", lo, hi)
    gn = fp_margin(n, 1.0)
    Kc = K @ c
    r = Kc + a - y[:, None]
    ac = np.abs(c)
    rho = (gn * (K @ ac) * (1.0 + gn) + bound.entry_error * ac.sum(axis=0) + dc.sum(axis=0) + da
           + fp_margin(3, 1.0) * (np.abs(Kc) + np.abs(a) + np.abs(y)[:, None]))
    top = np.max(np.abs(r) + rho, axis=1)
    residual = float(top @ top)
    residual += fp_margin(n + 2, residual)
    E = np.column_stack([lo * c[:, 0] - a[:, 0], 0.5 * (lo * c[:, 1] + hi * c[:, 0] - a[:, 0] - a[:, 1]),
                         hi * c[:, 1] - a[:, 1]])
    dE = np.column_stack([lo * dc[:, 0] + da[:, 0], 0.5 * (lo * dc[:, 1] + hi * dc[:, 0] + da[:, 0] + da[:, 1]),
                          hi * dc[:, 1] + da[:, 1]])
    dE += fp_margin(4, 1.0) * np.column_stack([lo * ac[:, 0] + np.abs(a[:, 0]),
                                               lo * ac[:, 1] + hi * ac[:, 0] + np.abs(a[:, 0]) + np.abs(a[:, 1]),
                                               hi * ac[:, 1] + np.abs(a[:, 1])])
    n0, n1, n2 = (_norm_up(bound, K, E[:, k], dE[:, k]) for k in range(3))
    # on each of _PARTS parts [a, b] of [0, 1], sum_k B_k(s) n_k is at most the largest of its values at a
    # and b and its blossom at (a, b) (its coefficients there; all terms nonnegative), and 1/lam at most
    # 1/lam(a), rounded down
    a_, b_ = np.linspace(0.0, 1.0, _PARTS + 1)[:-1], np.linspace(0.0, 1.0, _PARTS + 1)[1:]
    q = [n0 * (1 - u) * (1 - v) + n1 * ((1 - u) * v + u * (1 - v)) + n2 * u * v
         for u, v in ((a_, a_), (a_, b_), (b_, b_))]
    most = np.maximum(np.maximum(q[0], q[1]), q[2]) * (1.0 + fp_margin(8, 1.0))
    lam_a = (lo + a_ * (hi - lo)) * (1.0 - fp_margin(3, 1.0))
    e_term = float(np.max(most * most / lam_a))
    total = e_term + residual
    return total + fp_margin(8, total)


def moving_dual_floor(bound, dual, lo, hi):
    """A lower bound of the dual objective :math:`2a^\\top y - \\lVert a\\rVert^2 - \\tfrac1\\lambda a^\\top K a`
    for every λ of ``[lo, hi]`` of a dual moving linearly in λ: the first two terms are concave in λ
    (least at an end), :math:`a^\\top K a` is convex (largest at an end) and :math:`1/\\lambda \\le
    1/\\lambda_{lo}`; each end's value as computed, less its rounding and the point's."""
    lo, hi = float(lo), float(hi)
    y = bound.y
    K = bound.gram(lo)
    A, dA = _ends(dual, "a", lo, hi)
    linear = [linear_floor(y, a, da) for a, da in zip(A.T, dA.T)]
    quad = [quadratic_ceiling(K, a, da, bound.entry_error) for a, da in zip(A.T, dA.T)]
    floor = min(linear) - max(quad) / lo
    return floor - fp_margin(4, abs(min(linear)) + max(quad) / lo)
