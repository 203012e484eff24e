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

from approxpath.moving import bernstein_at, columns, parts
from approxpath.numerics import fp_margin

from .._weight_path import kinks, l1_upper, weight_path_bound

__all__ = ["lam_gap", "weight_columns"]


def weight_columns(point, lo, hi, names):
    """``(columns, W, err)`` of a stored point with weights of degree <= 1 (a fixed point:
    itself with the constant weight 1) on ``[lo, hi]``.

    Parameters
    ----------
    point : point or Moving
        A stored point.
    lo, hi : float
        The piece, inside a moving point's span.
    names : sequence of str
        The fields taken (:func:`~approxpath.moving.columns`); the weights are read with the first.

    Returns
    -------
    columns : list of ndarray of shape (n, K)
        One per name (a scalar field: (1, K)).
    W : ndarray of shape (K, 2)
        The weights' Bernstein coefficients on ``[lo, hi]`` (degree 0 raised to 1).
    err : ndarray of shape (K,)
        How far a weight computed at a position of the piece is from exact.
    """
    _, W, err = parts(point, names[0], lo, hi, linear=True, rounded=True)
    return [columns(point, f) for f in names], W, err


def lam_gap(bound, primal, dual, lo, hi):
    """A rigorous upper bound of the gap of a pair moving linearly in lambda (either side; the
    other fixed) at every lambda of ``[lo, hi]`` (see the module docstring).

    Parameters
    ----------
    bound : KLassoBound
        On the lambda path (the bandwidth fixed).
    primal : KLassoPrimal or Moving
    dual : KLassoDual or Moving
        Weights of degree at most 1 in lambda.
    lo, hi : float
        The piece's ends in lambda.

    Returns
    -------
    float
        :func:`.._weight_path.weight_path_bound` of :math:`F` (quadratic) and
        :math:`N = \\lVert\\beta(\\lambda)\\rVert_1` (:func:`.._weight_path.l1_upper`), split where a
        coefficient changes sign.
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
