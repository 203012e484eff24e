"""Rigorous enclosures of kernel expansions on a piece, the building block of every problem's
``prediction_enclosure`` (numpy only).

A prediction of a kernel model at a point :math:`x` is :math:`f_\\tau(x) = \\sum_j c_j
e^{-t D_{xj}}` (plus a constant) with :math:`D_{xj} \\ge 0` the kernel family's distance
(:mod:`approxpath.kernel_families`; :math:`\\lVert x - x_j\\rVert^2` for the gaussian) and ``t`` the
bandwidth at the path parameter :math:`\\tau`.  On a bandwidth piece the positive and the
negative part of ``c`` give two completely monotone sums, enclosed by Hermite polynomials
(:mod:`approxpath.envelopes`, as the regression bounds enclose residuals); their difference is
enclosed by piecewise linear bounds through 19 nodes (:func:`~approxpath.envelopes.difference_nodes`),
and every node sub-interval gets the hull of its two ends.  On a weight path (C, λ) the kernel
does not move and a fixed expansion is one number per point.

The output of every enclosure here is a *cover*: ``edges`` (J + 1,) of the piece and
``low, up`` of shape (..., J) such that for every :math:`\\tau \\in [edges_j, edges_{j+1}]`
the enclosed quantity lies in ``[low[..., j], up[..., j]]``.  A point ``lo == hi`` has
``edges = [lo, lo]`` and J = 1.
"""

from __future__ import annotations

import math

import numpy as np

from ..envelopes import difference_nodes, envelope_entry_error, split_envelope
from ..kernel_families import cross_distances
from ..compute.kernels import gaussian
from ..compute.lattice import lattice_entries
from ..numerics import fp_margin, kernel_entry_error, margins_of

__all__ = ["combination_hull", "cross_products", "expansion_cover", "halves", "lattice_products", "new_distances",
           "new_lattice", "node_hull", "sqrt_up", "CHAIN", "stacked_products"]

#: Dependent operations after the n-term sums of an envelope (coefficients, the difference,
#: node values, lift): as in :mod:`approxpath.problems._regression` (``_CHAIN``, derived there).
CHAIN = 16


def cross_products(Dc):
    """The ``products(x, C, cols)`` callable of :func:`~approxpath.envelopes.envelope` for the
    rectangular distances ``Dc`` (m, n) between new points and the training points.

    Returns :math:`(E C, (D \\circ E) C, (D^2 \\circ E) C)` with :math:`E = \\exp(-x D_c)`
    restricted to the columns ``cols`` (all if None), each of shape (m,) or (m, p) for ``C`` of shape
    (k,) or (k, p); the entries are those of :func:`~approxpath.compute.kernels.gaussian` (so
    :func:`~approxpath.envelopes.envelope_entry_error` covers them as it covers the training kernel's).
    """
    Dc = np.asarray(Dc, dtype=float)

    def products(x, C, cols=None):
        Ds = Dc if cols is None else Dc[:, cols]
        E = gaussian(Ds, float(x))
        T = Ds * E
        C = np.asarray(C, dtype=float)
        return E @ C, T @ C, (T * Ds) @ C

    return products


def lattice_products(levels, index):
    """:func:`cross_products` for distances on a lattice: ``levels[index]`` (``levels`` (L,), index
    (m, n) of uint8) are the distances, bit for bit.

    A coefficient vector's sums per level (a histogram of shape (m, levels)) serve every ``x``:
    the envelopes ask for the same coefficients at both ends of an interval, so one pass over
    the index replaces an exponential of every entry at each end.  The entries are those of the
    direct route (:math:`e^{-x d}`, :math:`d e`, :math:`(d e) d` per level), summed in another
    order: a coefficient passes through its bin's sum and one product with the level's entry,
    at most n + 1 roundings as in the direct n-term sum (see :func:`approxpath.compute.lattice.find_lattice`).
    The histogram of the last ``C`` and ``cols`` is kept, recognized by identity (``is``): a caller
    must not change a ``C`` in place between calls.
    """
    L = levels.size
    last = {}  # the last coefficients (held, so that their identity is theirs) and their histogram

    def products(x, C, cols=None):
        C = np.asarray(C, dtype=float)
        if last.get("C") is not C or last.get("cols") is not cols:
            last.update(C=C, cols=cols, H=_level_sums(index if cols is None else index[:, cols], C, L))
        out = last["H"] @ lattice_entries(levels, float(x))  # (m, [p,] 3)
        return out[..., 0], out[..., 1], out[..., 2]

    return products


def _level_sums(index, C, L):
    """``H[i, (p,) k]``: the sum of ``C[j]`` over the columns j with ``index[i, j] == k``; ``index``
    (m, k) of uint8, ``C`` (k,) or (k, p)."""
    m, k = index.shape
    bins = (index.astype(np.intp) + L * np.arange(m)[:, None]).ravel()  # (row, level) of every entry
    cols = C.reshape(k, -1)
    H = np.stack([np.bincount(bins, weights=np.broadcast_to(c, (m, k)).ravel(), minlength=m * L).reshape(m, L)
                  for c in cols.T], axis=1)  # (m, p, L)
    return H[:, 0] if C.ndim == 1 else H


def stacked_products(*products):
    """One ``products(x, C, cols)`` callable from several (of the same coefficients): their
    results stacked row-wise in the given order (one envelope of all the rows), rounded
    elsewhere if any of them is (:func:`~approxpath.numerics.margins_of`)."""

    def stacked(x, C, cols=None):
        outs = [p(x, C, cols) for p in products]
        return tuple(np.concatenate(parts, axis=0) for parts in zip(*outs))

    stacked.rounded_elsewhere = any(margins_of(p) > 1 for p in products)
    return stacked


def sqrt_up(value):
    """An upper bound of :math:`\\sqrt{\\max(0, value)}`: the rounded root moved up two ulps
    (``np.sqrt`` is correctly rounded, so one would do; the second covers a caller's product)."""
    r = math.sqrt(max(0.0, float(value)))
    return math.nextafter(math.nextafter(r, math.inf), math.inf)


def node_hull(low, up):
    """Per node sub-interval, the hull of the two ends: ``(..., K)`` node values of piecewise
    linear bounds to ``(..., K - 1)`` sub-interval constants (a point, K = 1, stays): the smaller
    of the two ends' ``low``, the larger of their ``up``."""
    if low.shape[-1] == 1:
        return low, up
    return np.minimum(low[..., :-1], low[..., 1:]), np.maximum(up[..., :-1], up[..., 1:])


def halves(edges, *pairs):
    """Two cells from a finer cover: for each ``(low, up)`` of ``pairs`` (shape (..., J)), the
    hulls left and right of the edge of ``edges`` (J + 1,) nearest the middle; a cover of at
    most two cells is returned as it is.

    Returns
    -------
    edges : ndarray of shape (3,) (or the given edges)
    low, up, ... : ndarray of shape (..., 2)
    """
    if edges.size <= 3:
        return (edges, *(a for pair in pairs for a in pair))
    k = int(np.argmin(np.abs(edges[1:-1] - 0.5 * (edges[0] + edges[-1])))) + 1
    out = [np.array([edges[0], edges[k], edges[-1]])]
    for low, up in pairs:
        out += [np.stack([low[..., :k].min(axis=-1), low[..., k:].min(axis=-1)], axis=-1),
                np.stack([up[..., :k].max(axis=-1), up[..., k:].max(axis=-1)], axis=-1)]
    return tuple(out)


def expansion_cover(products, c, lo, hi, entry_terms, n_terms):
    """Rigorous bounds of :math:`S_\\tau = \\sum_j c_j e^{-\\tau D_{\\cdot j}}` for every bandwidth
    :math:`\\tau \\in [lo, hi]`, rounding included.

    Parameters
    ----------
    products : callable
        ``products(x, C, cols)`` of the distances (:meth:`approxpath.compute.kernels.Kernels.products`
        for the training points, :func:`cross_products` for new points).
    c : ndarray of shape (n,) or (n, p)
        Signed coefficients (p expansions in one kernel pass).
    lo, hi : float, or ndarray of shape (q,)
        Bandwidths, ``0 < lo <= hi``; arrays: q intervals at once, each with ``lo < hi`` (the
        products at each distinct end computed once), or q points (``lo == hi``).
    entry_terms : int
        Rounded terms per distance (the number of features).
    n_terms : int
        Terms per sum (the number of training points).

    Returns
    -------
    edges : ndarray of shape (J + 1,), or (q, J + 1) (J = 1 at points)
    low, up : ndarray of shape (m, J) or (m, p, J); (m, [p,] q, J) for q intervals or points
        For every :math:`\\tau` of sub-interval j, :math:`S_\\tau` lies in ``[low[..., j], up[..., j]]``
        (of interval i: ``[low[..., i, j], up[..., i, j]]``).
    """
    c = np.asarray(c, dtype=float)
    total = np.abs(c).sum(axis=0)  # (,) or (p,): the unit of the kernel entries' error
    if np.ndim(lo):  # per interval
        total = total[..., None]
    if np.all(np.equal(lo, hi)):  # a point, or q points: the sums there
        parts = np.stack([np.maximum(c, 0.0), np.maximum(-c, 0.0)], axis=-1)  # (n, [p,] 2)
        flat = parts.reshape(parts.shape[0], -1)
        F = np.stack([products(x, flat)[0].reshape((-1,) + parts.shape[1:]) for x in np.atleast_1d(lo)],
                     axis=-2)  # (m, [p,] q, 2)
        F = F if np.ndim(lo) else F[..., 0, :]
        value, size = F[..., 0] - F[..., 1], F[..., 0] + F[..., 1]
        allowance = margins_of(products) * (kernel_entry_error(entry_terms) * total + fp_margin(n_terms, 1.0) * size)
        return np.stack([lo, hi], axis=-1), (value - allowance)[..., None], (value + allowance)[..., None]
    P, N = split_envelope(products, c, lo, hi)
    xs, low, up = difference_nodes(P, N)
    # kernel entries (per unit of |c|), then the sums and the polynomials' arithmetic; more
    # margins for a device's products (margins_of)
    allowance = margins_of(products) * (envelope_entry_error(lo, hi, entry_terms) * total
                                        + fp_margin(n_terms + CHAIN, 1.0) * (P.magnitude() + N.magnitude()))[..., None]
    low, up = node_hull(low - allowance, up + allowance)
    return xs, low, up


def new_distances(bound, X_new, rows=None):
    """The kernel family's distances :math:`D` (m, n) of the rows of ``X_new`` to the training
    points of ``bound`` (a :class:`~approxpath.bound.KernelBound`; one feature: a column; with
    ``kernel="precomputed"``, ``X_new`` is that matrix); only the rows ``rows`` when given
    (``(len(rows), n)``).  A computed entry is within the relative error the training distances
    have (``bound.entry_terms``).

    The distances of the last ``X_new`` are kept on the bound (a search asks for the same held-out
    points again and again; at a4a's size they take 0.2-0.5 s to compute); not pickled.  ``X_new``
    is recognized by identity (``is``): not to be changed in place."""
    D = _held(bound, X_new)["D"]
    return D if rows is None else D[rows]


def new_lattice(bound, X_new):
    """``(levels, index)`` of :func:`new_distances` on the lattice of the training distances
    (``bound.kernels.lattice``: binary or integer features), ``levels[index]`` equal to them bit
    for bit (``levels`` (L,), ``index`` (m, n) of uint8); None where the training distances have no
    lattice, a new distance is not on it, or there are no new points (m = 0).
    Kept on the bound with the distances."""
    held = _held(bound, X_new)
    if "lattice" not in held:
        lattice, held["lattice"] = getattr(bound.kernels, "lattice", None), None
        if lattice is not None and held["D"].size:
            levels, D = lattice[0], held["D"]
            k = np.rint(D / (levels[1] if levels.size > 1 else 1.0))
            if k.min() >= 0 and k.max() < levels.size:
                index = k.astype(np.uint8)
                if np.array_equal(levels[index], D):
                    held["lattice"] = (levels, index)
    return held["lattice"]


def _held(bound, X_new):
    """What the bound keeps of the last ``X_new``: its distances ``D``, and its ``lattice`` once asked."""
    held = getattr(bound, "_new_points", None)
    if held is None or held["X"] is not X_new:
        D = cross_distances(X_new, bound.X, bound.family, bound.options["feature_weights"])
        held = bound._new_points = {"X": X_new, "D": D}
    return held


def combination_hull(ranges, low, up):
    """Enclosures ``(low, up)`` (m, J) of :math:`\\sum_k w_k f_k` on each sub-interval ``j``,
    given each weight's range ``ranges[j, k]`` (:func:`approxpath.moving.weight_ranges`, shape
    (J, K, 2)) and each :math:`f_k` in ``[low[:, k, j], up[:, k, j]]`` (shape (m, K, J), ``low <= up``):
    per term the smallest and largest of the four corner products (a product of two intervals),
    summed, and widened by the rounding of the products and the sum:
    :func:`~approxpath.numerics.fp_margin` ``(2K + 2, 1)`` times
    :math:`\\sum_k \\max|w_k| \\max(|low_k|, |up_k|)`."""
    wl, wu = ranges[..., 0].T[None], ranges[..., 1].T[None]  # (1, K, J)
    # with low <= up, w * low <= w * up for w >= 0 and the reverse for w < 0, rounded as well
    # (rounding is monotone): each weight's smaller and larger corner is one product, picked by
    # its sign, and the largest |corner| is max|w| max(|low|, |up|) (the same numbers as all four)
    smallest = np.minimum(wl * np.where(wl >= 0, low, up), wu * np.where(wu >= 0, low, up))
    largest = np.maximum(wl * np.where(wl >= 0, up, low), wu * np.where(wu >= 0, up, low))
    size = np.maximum(np.abs(wl), np.abs(wu)) * np.maximum(np.abs(low), np.abs(up))
    pad = fp_margin(2 * low.shape[1] + 2, 1.0) * size.sum(axis=1)
    return smallest.sum(axis=1) - pad, largest.sum(axis=1) + pad
