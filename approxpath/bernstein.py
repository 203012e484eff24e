"""Polynomials in Bernstein form on [0, 1], in floating point with their rounding stated: the
weights of a moving point (:mod:`approxpath.moving`; numpy only, the verifier imports it).

A polynomial of degree :math:`m` with coefficients :math:`W_0, \\dots, W_m` is

.. math::

    w(s) = \\sum_{j=0}^{m} W_j \\binom{m}{j} s^j (1 - s)^{m-j}, \\qquad s \\in [0, 1];

its values and its coefficients on a sub-interval come from de Casteljau's steps
(:func:`casteljau`), within :func:`coefficient_rounding` of exact; :func:`cap_columns` makes
weights of a combination sum to at most 1 exactly.  A polynomial lies in the convex hull of its
coefficients, a product's coefficients are convex combinations of the factors' products
(:func:`bernstein_product`), and between nodes a polynomial lies below its values there lifted by
a curvature term (:func:`lifted_values`): :func:`max_hinge_sum` bounds a polynomial plus hinges
of polynomials over [0, 1] with them.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .numerics import UNIT_ROUNDOFF, block_sum

__all__ = ["affine_weights", "bernstein_at", "bernstein_product", "bernstein_values", "cap_columns", "casteljau",
           "coefficient_rounding", "lifted_values", "max_hinge_sum", "node_set"]


def bernstein_at(W, s):
    """Values of the polynomials with Bernstein coefficients ``W`` (..., m + 1) at the positions
    ``s`` (a number, or an array of shape (T,)) of [0, 1]: shape (...) or (..., T), as computed
    by de Casteljau's steps (within :func:`coefficient_rounding` of the exact values).

    Parameters
    ----------
    W : array_like of shape (..., m + 1)
        Bernstein coefficients of degree ``m`` on [0, 1], one polynomial per leading index (a
        :class:`~approxpath.moving.Moving` point's ``weights`` (K, m + 1), or their
        :meth:`~approxpath.moving.Moving.restrict`).
    s : float, or array_like of shape (T,)
        Positions in [0, 1] (:math:`s = (t - t_0)/(t_1 - t_0)` for a path parameter :math:`t`).

    Returns
    -------
    ndarray of shape (...), or (..., T)
        :math:`\\sum_{j=0}^{m} W_{\\cdot j} \\binom{m}{j} s^j (1 - s)^{m-j}` at each position.
    """
    W = np.asarray(W, dtype=float)
    s = np.asarray(s, dtype=float)
    if W.shape[-1] == 1:
        return W[..., 0].reshape(W.shape[:-1] + (1,) * s.ndim) * np.ones(s.shape)
    return casteljau(W, [s] * (W.shape[-1] - 1))


def coefficient_rounding(W):
    """How far a value of the polynomials ``W`` computed at a position of [0, 1]
    (:func:`bernstein_at`, :meth:`~approxpath.moving.Moving.weights_at`), or a coefficient on a
    sub-interval (:meth:`~approxpath.moving.Moving.restrict`), can be from the exact one.

    A position :math:`s = (t - t_0)/(t_1 - t_0)` in [0, 1] is computed within :math:`3.01u`
    (two subtractions and a quotient, relative; exact where a result is subnormal); the
    polynomial's derivative in :math:`s` (or the blossom's in each of its ``m`` arguments, times
    ``m``) is at most :math:`m \\max_j |W_{j+1} - W_j|`, so the positions move it by at most
    :math:`3.01\\,m\\,u \\max_j|W_{j+1} - W_j|`.  De Casteljau's ``m`` levels of
    :math:`(1 - s)a + sb` (three roundings each, :math:`1 - s` included) stay within
    :math:`\\gamma_{3m} \\sum_j |W_j| B_j(s) \\le 3.01\\,m\\,u \\max_j|W_j|` of the value at the
    computed positions (Farouki and Rajan).  Degree 0: exact.

    Parameters
    ----------
    W : array_like of shape (..., m + 1)
        Bernstein coefficients of degree ``m``, one polynomial per leading index.

    Returns
    -------
    ndarray of shape (...)
        :math:`3.02\\,m\\,u\\,(\\max_j |W_j| + \\max_j |W_{j+1} - W_j|)` (the terms above, 3.02 for 3.01); 0 at m = 0.
    """
    W = np.asarray(W, dtype=float)
    m = W.shape[-1] - 1
    if m == 0:
        return np.zeros(W.shape[:-1])
    steps = np.abs(np.diff(W, axis=-1)).max(axis=-1)
    return 3.02 * m * UNIT_ROUNDOFF * (np.abs(W).max(axis=-1) + steps)


def casteljau(W, positions):
    """De Casteljau's steps at ``positions`` (each a number or an array of shape (T,)) on the
    coefficients ``W`` (..., m + 1): after ``len(positions)`` levels, the first coefficient (one
    value per polynomial, per T)."""
    c = np.asarray(W, dtype=float)
    shape = np.broadcast(*positions).shape if positions else ()
    c = c.reshape(c.shape + (1,) * len(shape)) * np.ones(shape)
    axis = c.ndim - len(shape) - 1  # the coefficients' axis
    for s in positions:
        lead, tail = [slice(None)] * axis, [slice(None)] * len(shape)
        c = (1.0 - s) * c[tuple(lead + [slice(None, -1)] + tail)] + s * c[tuple(lead + [slice(1, None)] + tail)]
    return c[tuple([slice(None)] * axis + [0])]


def affine_weights(theta):
    """The weights ``[1 - theta, theta]`` of a combination of two points from the coefficients
    ``theta`` of the second one's: ``1 - theta`` rounded down coefficient by coefficient
    (:func:`cap_columns`), so that each column sums to at most 1 exactly (a combination of
    feasible points with nonnegative weights summing to at most 1 stays in a convex feasible set
    that holds 0).

    Parameters
    ----------
    theta : array_like of shape (m + 1,)
        Bernstein coefficients of the second point's weight.

    Returns
    -------
    ndarray of shape (2, m + 1)
        ``[1 - theta, theta]``, ``1 - theta`` stepped one float down where it plus ``theta`` tests above 1.
    """
    theta = np.asarray(theta, dtype=float)
    return cap_columns(np.stack([1.0 - theta, theta]), row=0)


def cap_columns(W, row=None):
    """``W`` with every column summing to at most 1 in exact arithmetic: an entry of a column
    whose exact sum (:func:`math.fsum`) exceeds 1 stepped one float down at a time (entry ``row``,
    else the column's largest) until it does not.  Smaller nonnegative weights keep a combination
    of feasible points in a convex feasible set that holds 0.

    Parameters
    ----------
    W : ndarray of shape (K, m)
        Nonnegative weights, a column per node or end.
    row : int, optional
        The entry to step down (default: each column's largest).

    Returns
    -------
    ndarray of shape (K, m)
        A copy of ``W``, capped.
    """
    W = np.array(W, dtype=float)
    for e in range(W.shape[1]):
        # (fsum gives the exact sum's sign: an excess below half an ulp of 1 rounds back to 1.0 in a float sum)
        while math.fsum([*W[:, e], -1.0]) > 0.0:
            k = int(np.argmax(W[:, e])) if row is None else row
            W[k, e] = math.nextafter(W[k, e], -math.inf)
    return W


def node_set(s, degree):
    """Bernstein basis values of ``degree`` (degree + 1, k) at the nodes ``s`` (k,) of [0, 1], and
    ``h^2/8`` per node with ``h`` the longer of its two neighbouring gaps."""
    gaps = np.diff(s)
    return _basis(s, degree), np.maximum(np.r_[0.0, gaps], np.r_[gaps, 0.0]) ** 2 / 8


@lru_cache
def _uniform_nodes(m, degree):
    """:func:`node_set` of the ``m + 1`` nodes ``k/m`` (exact in binary for a power of two)."""
    return node_set(np.arange(m + 1) / m, degree)


def lifted_values(coef, nodes):
    """Values at the nodes of ``nodes`` (a :func:`node_set` of the coefficients' degree) of
    polynomials with Bernstein coefficients ``coef`` (..., m + 1), each plus
    ``h^2/8 max(0, -min p'')``, which lifts the interpolant between two nodes above the
    polynomial there: :math:`p(s) - L(s) = -\\tfrac12 p''(\\xi)(s - s_k)(s_{k+1} - s)`
    (:math:`p''` is m(m - 1) times the polynomial of degree m - 2 whose coefficients are the
    second differences of ``coef``, so ``min p''`` is bounded by theirs: convex hull)."""
    basis, lift = nodes
    m = coef.shape[-1] - 1
    # one matrix product for all the polynomials (a stack of small ones is ~4x slower)
    values = (coef.reshape(-1, m + 1) @ basis).reshape(coef.shape[:-1] + basis.shape[1:])
    if m < 2:
        return values
    second = m * (m - 1) * (coef[..., 2:] - 2 * coef[..., 1:-1] + coef[..., :-2])
    low = second[..., 0]  # their least (a reduction over a short last axis is slow)
    for k in range(1, m - 1):
        low = np.minimum(low, second[..., k])
    values += np.maximum(0.0, -low)[..., None] * lift
    return values


def _basis(s, degree):
    """The Bernstein basis polynomials of ``degree`` at ``s`` (k,): shape (degree + 1, k)."""
    return np.array([math.comb(degree, j) * s**j * (1 - s) ** (degree - j) for j in range(degree + 1)])


def bernstein_values(coef, s):
    """Values (..., k) at the points ``s`` (k,) of [0, 1] of the polynomials with Bernstein
    coefficients ``coef`` (..., m + 1), by one product with the basis matrix: estimates, with no
    stated rounding (:func:`bernstein_at` gives values within :func:`coefficient_rounding`).

    Parameters
    ----------
    coef : ndarray of shape (..., m + 1)
        Bernstein coefficients of degree ``m``, one polynomial per leading index.
    s : array_like of shape (k,)
        Points of [0, 1].

    Returns
    -------
    ndarray of shape (..., k)
        :math:`\\sum_{j=0}^{m} c_j \\binom{m}{j} s^j (1 - s)^{m-j}` at each point.
    """
    return coef @ _basis(np.asarray(s, dtype=float), coef.shape[-1] - 1)


def bernstein_product(a, b):
    """Bernstein coefficients (..., m + k + 1) of the product of the polynomials with
    coefficients ``a`` (..., m + 1) and ``b`` (..., k + 1) (broadcast):
    :math:`c_l = \\sum_{i + j = l} \\binom{m}{i}\\binom{k}{j} / \\binom{m + k}{l}\\, a_i b_j`, a convex
    combination of the products :math:`a_i b_j` (the weights of each :math:`c_l` sum to 1).

    Parameters
    ----------
    a : array_like of shape (..., m + 1)
        Bernstein coefficients of degree ``m`` on [0, 1].
    b : array_like of shape (..., k + 1)
        Bernstein coefficients of degree ``k`` on [0, 1]; the leading axes broadcast with ``a``'s.

    Returns
    -------
    ndarray of shape (..., m + k + 1)
        The coefficients :math:`c_l` of the product (degree m + k), the leading axes broadcast.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    m, k = a.shape[-1] - 1, b.shape[-1] - 1
    outer = a[..., :, None] * b[..., None, :]  # the products a_i b_j, (..., m + 1, k + 1)
    return outer.reshape(outer.shape[:-2] + ((m + 1) * (k + 1),)) @ _product_weights(m, k)


@lru_cache
def _product_weights(m, k):
    """The weights of :func:`bernstein_product`, ((m + 1)(k + 1), m + k + 1): row (i, j) holds
    :math:`\\binom{m}{i}\\binom{k}{j} / \\binom{m + k}{i + j}` in column i + j (read only)."""
    W = np.zeros((m + 1, k + 1, m + k + 1))
    for i in range(m + 1):
        for j in range(k + 1):
            W[i, j, i + j] = math.comb(m, i) * math.comb(k, j) / math.comb(m + k, i + j)
    W = W.reshape((m + 1) * (k + 1), m + k + 1)
    W.flags.writeable = False
    return W


def max_hinge_sum(q, r, c, nodes=16):
    """Upper bound of :math:`\\max_{s \\in [0, 1]}\\; q(s) + c \\sum_i \\max(0, r_i(s))`.

    Between two nodes each polynomial is below its interpolant lifted by
    ``h^2/8 max(0, -min p'')`` (:func:`lifted_values`); the lifted sum is convex between the
    nodes (a line plus hinges of lines), so its maximum over each is at a node.

    Parameters
    ----------
    q : ndarray of shape (m + 1,)
        Bernstein coefficients of :math:`q` (degree m; 5 for a fixed SVM pair).
    r : ndarray of shape (n, k + 1)
        Bernstein coefficients of the :math:`r_i` (degree k).
    c : float
        Nonnegative weight.
    nodes : int
        Number of sub-intervals (a power of two keeps the nodes exact).

    Returns
    -------
    best : float
        The bound (as computed).
    scale : float
        The magnitude a rounding allowance must cover: the largest absolute coefficients of
        ``q`` and of every ``c r_i``, summed.
    """
    scale = np.abs(q).max() + c * float(np.abs(r).max(axis=1).sum())
    # (no row is dropped where its coefficients are <= 0: the bound stays continuous in the
    # data, so sums rounded differently, as a verifier's, move it by rounding only)
    total = (lifted_values(q, _uniform_nodes(nodes, q.shape[-1] - 1))
             + c * block_sum(np.maximum(0.0, lifted_values(r, _uniform_nodes(nodes, r.shape[-1] - 1)))))
    return float(total.max()), float(scale)
