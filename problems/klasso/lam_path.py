"""The gap bound of a kLASSO pair moving linearly in lambda on a piece of the lambda path (numpy
only: the certificate side, :class:`.bound.KLassoBound`, uses it).

At a fixed bandwidth the kernel is fixed, and between two breakpoints the exact lambda path is
linear (Wang et al.): the combination of two exact solves whose weights are linear in
:math:`\\lambda`, :math:`(\\beta, \\beta_0)(\\lambda) = \\sum_k w_k(\\lambda)(\\beta_k, \\beta_{0k})` and
:math:`d(\\lambda) = \\sum_k v_k(\\lambda) u_k`, is the path itself on such a segment, and its gap
is small wherever the segment holds few breakpoints.  The gap is

.. math::

    g(\\lambda) = F(\\lambda) + \\lambda\\lVert\\beta(\\lambda)\\rVert_1,\\qquad
    F = \\tfrac12\\lVert y - K\\beta(\\lambda) - \\beta_0(\\lambda)\\rVert^2 - y^\\top d + \\tfrac12\\lVert d\\rVert^2,

with :math:`F` a convex quadratic in :math:`\\lambda` and :math:`\\lVert\\beta(\\lambda)\\rVert_1` convex
and piecewise linear (kinks where a coefficient changes sign): the form
:func:`.._weight_path.weight_path_bound` bounds over a piece.
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import bernstein_at
from approxpath.moving import columns, parts
from approxpath.numerics import fp_margin

from .._weight_path import kinks, l1_upper, weight_path_bound

__all__ = ["lam_gap", "weight_columns"]


def weight_columns(point, lo, hi, names):
    """``(columns (n, K) per field name, W (K, 2) on [lo, hi], err (K,))`` of a stored point
    with weights of degree <= 1 (a fixed point: itself with the constant weight 1); ``err``
    bounds how far a weight computed at a position of the piece is from exact.  ``names``: the
    fields (:func:`~approxpath.moving.columns`; a scalar field's: (1, K)), the weights read with the
    first; ``[lo, hi]`` inside a moving point's span; ``W`` the weights' Bernstein coefficients
    (degree 0 raised to 1)."""
    _, W, err = parts(point, names[0], lo, hi, linear=True, rounded=True)
    return [columns(point, f) for f in names], W, err


def lam_gap(bound, primal, dual, lo, hi):
    """A rigorous upper bound of the gap of a pair moving linearly in lambda (either side, with
    weights of degree at most 1; the other fixed) at every lambda of ``[lo, hi]`` (see the module
    docstring), ``bound`` on the lambda path (the bandwidth fixed).

    Returns
    -------
    float
        :func:`.._weight_path.weight_path_bound` of :math:`F` (quadratic) and
        :math:`N = \\lVert\\beta(\\lambda)\\rVert_1` (:func:`.._weight_path.l1_upper`), split where a coefficient
        changes sign.
    """
    y, n = bound.y, bound.n
    (B, B0), Wp, ep = weight_columns(primal, lo, hi, ("beta", "beta0"))
    (U,), Wd, ed = weight_columns(dual, lo, hi, ("u",))
    K = bound.gram(lo)  # (the bandwidth is fixed on the lambda path)
    aB = np.abs(B)
    # how far a computed (K beta_k)_i is from exact: the sum's rounding and the kernel entries'
    dKB = fp_margin(n, 1.0) * (K @ aB) * (1.0 + fp_margin(n, 1.0)) + bound.entry_error * aB.sum(axis=0)
    fit = K @ B + B0  # (n, Kp): K beta_k + beta0_k

    def F_at(x):
        """F as computed at the positions ``x`` (T,) of the piece and its rounding, each (T,)."""
        wp, wd = bernstein_at(Wp, x), bernstein_at(Wd, x)
        r = y[:, None] - fit @ wp
        rho = (dKB @ np.abs(wp) + (np.abs(fit) @ ep)[:, None]
               + fp_margin(Wp.shape[0] + 1, 1.0) * (np.abs(y)[:, None] + np.abs(fit) @ np.abs(wp)))
        d = U @ wd
        dd = fp_margin(Wd.shape[0], 1.0) * (np.abs(U) @ np.abs(wd)) + (np.abs(U) @ ed)[:, None]
        rr, dd2 = np.einsum("it,it->t", r, r), np.einsum("it,it->t", d, d)
        value = 0.5 * rr - y @ d + 0.5 * dd2
        band = (np.einsum("it,it->t", np.abs(r), rho) + 0.5 * np.einsum("it,it->t", rho, rho)
                + np.einsum("it,it->t", np.abs(y)[:, None] + np.abs(d), dd) + 0.5 * np.einsum("it,it->t", dd, dd)
                + fp_margin(2 * n + 4, 1.0) * (0.5 * rr + np.abs(y) @ np.abs(d) + 0.5 * dd2))
        return value, band

    return weight_path_bound(F_at, l1_upper(B, Wp, ep), kinks(B @ Wp), lo, hi, quadratic=True)
