"""Distances on a small lattice: kernels and products through one exponential per level.

Binary, integer or dyadic features put every squared distance on a lattice
:math:`q\\,\\{0, 1, \\dots, L\\}` with few levels (a1a-a4a: :math:`L = 28`).  The distances are
then stored as uint8 level indices (an eighth of their memory), a kernel is gathered from one
exponential per level, and a product :math:`E_x c` is a histogram of :math:`c` over the levels
times the levels' entries: the same entries :math:`e^{-x d_k}` summed in another order.
:class:`~approxpath.compute.kernels.Kernels` finds the lattice (:func:`find_lattice`) and takes
these routes where it exists.
"""

from __future__ import annotations

import numpy as np

__all__ = ["find_lattice", "lattice_kernel", "lattice_entries", "histogram"]

# Distances on a lattice q * {0, 1, ..., L} with L at most this (binary or integer features:
# a1a-a4a have L = 28) are stored as uint8 level indices; products then go through histograms
# of the coefficients over the levels (a1a: histogram of 4 columns 35 ms once, then 0.4 ms per
# point instead of a 6-24 ms pass over D).
_LEVELS_MAX = 255
# rows per block when reading D or gathering a kernel: a block's int64 temporaries stay small
# (numpy casts a uint8 index to intp for ``take``: a whole a4a fold in one call is 117 MB)
_ROWS = 256


def _exp_levels(levels, x):
    """:math:`e^{-x d_k}` at each level: numpy's ``exp`` of the same product as the dense route's
    (:func:`~approxpath.compute.kernels.gaussian` multiplies each entry by :math:`-x`)."""
    return np.exp(np.asarray(levels, dtype=float) * -float(x))


def find_lattice(D):
    """``(levels, index)`` with ``levels[index] == D`` bit for bit when every entry of ``D`` is
    ``k q`` for integers ``0 <= k <= min(_LEVELS_MAX, n - 2)``, ``q`` a dyadic rational (binary,
    integer or dyadic features); None otherwise, found in the first row for real-valued data.

    Exact: ``D 2**j`` is integral for some ``j <= 10`` (a power of two scales exactly), ``q``
    is the gcd of those integers over ``2**j``.  Fewer levels than rows, else a histogram is
    no cheaper than a pass over ``D``.

    Rounding: in a histogram product a coefficient passes through the sums of its bin, one
    product with the level's kernel entry and the sum over the nonzero bins (adding a zero bin
    is exact); each other nonzero bin holds at least one other coefficient, so that is at most
    n + 1 roundings, as in the n-term sum of a direct product: the allowances of the bounds
    (:func:`~approxpath.numerics.fp_margin` with n terms) hold unchanged.

    Parameters
    ----------
    D : ndarray of shape (n, n)

    Returns
    -------
    (ndarray of shape (L + 1,), ndarray of uint8 of shape (n, n)) or None
    """
    n = D.shape[0]
    top = min(_LEVELS_MAX, n - 2)
    blocks = [slice(a, min(a + _ROWS, n)) for a in range(0, n, _ROWS)]
    if top < 1:
        return None
    first = D[0]
    # j <= 10: features on a grid of 1/32 or coarser (squared differences: 2**-10); finer grids
    # are real-valued data in practice, and the search stops early
    scale = next((2.0**j for j in range(11) if np.array_equal(np.rint(first * 2.0**j), first * 2.0**j)), None)
    g = 0
    for b in blocks if scale is not None else ():
        v = D[b] * scale
        # (2**40: well inside the integers float64 and int64 hold exactly, 2**53 and 2**63)
        if v.max() > 2.0**40 or not np.array_equal(np.rint(v), v):
            return None
        g = np.gcd.reduce(v.astype(np.int64), axis=None, initial=g)
    if not g:
        return None
    index = np.empty(D.shape, dtype=np.uint8)
    for b in blocks:
        k = (D[b] * scale).astype(np.int64) // g
        if k.max() > top:
            return None
        index[b] = k
    q = g / scale
    return q * np.arange(int(index.max()) + 1, dtype=float), index


def lattice_kernel(lattice, t, out=None):
    """:math:`\\exp(-t D)` of distances on a lattice (``(levels, index)``, ``levels[index] == D``
    bit for bit): one exponential per level, gathered (a2a: 24 against 64 ms).  Every entry is
    numpy's ``exp`` of the same product as in :func:`~approxpath.compute.kernels.gaussian`, so
    the same number wherever ``exp`` rounds a value the same in every position of an array (it
    does on the machines measured); within one rounding of ``exp`` of it anywhere, which the
    kernel entries' allowance (:func:`~approxpath.numerics.kernel_entry_error`) covers.

    Parameters
    ----------
    lattice : (ndarray of shape (L + 1,), ndarray of uint8 of shape (n, n))
        ``(levels, index)`` of :func:`find_lattice`: the distance levels and each entry's level.
    t : float
        The kernel parameter, ``t > 0``.
    out : ndarray of shape (n, n), optional
        A float64 array the kernel is written into; a new one if None.

    Returns
    -------
    ndarray of shape (n, n)
        :math:`e^{-t\\,\\mathrm{levels}[\\mathrm{index}_{ij}]}` per entry (``out`` where it is given).
    """
    levels, index = lattice
    values = _exp_levels(levels, t)
    out = np.empty(index.shape) if out is None else out
    # by blocks of rows (see _ROWS); mode "clip" (every index is in range) writes into ``out``
    # directly, where the default "raise" goes through a buffer (4x slower: 0.8 against 3.2 ms
    # a block of a4a)
    for a in range(0, index.shape[0], _ROWS):
        np.take(values, index[a:a + _ROWS], out=out[a:a + _ROWS], mode="clip")
    return out


def lattice_entries(levels, x, order=2):
    """The entries of a product's terms at each distance level, shape (levels, order + 1):
    :math:`e = e^{-x d}`, :math:`e d`, :math:`(e d) d` (the first ``order + 1``), as the direct
    route computes them entry by entry (:func:`~approxpath.compute.kernels.block_products`),
    bit for bit.

    Parameters
    ----------
    levels : ndarray of shape (L + 1,)
        The distance levels :math:`d_k` (the first array of :func:`find_lattice`'s result).
    x : float
        The kernel parameter of :math:`E_x = \\exp(-xD)`.
    order : {0, 1, 2}, default 2
        The highest power of :math:`d` taken.

    Returns
    -------
    ndarray of shape (L + 1, order + 1)
        Row ``k``: :math:`e^{-x d_k}`, :math:`e^{-x d_k} d_k`, :math:`(e^{-x d_k} d_k) d_k`, the
        first ``order + 1``.
    """
    W = [_exp_levels(levels, x)]
    for _ in range(order):
        W.append(W[-1] * levels)
    return np.stack(W, axis=1)


def histogram(lattice, full, step):
    """``H`` of shape (n, levels): ``H[i, k]`` is the sum of ``full[j]`` over the ``j`` with
    ``D[i, j] = levels[k]``; ``full`` of shape (n,), its nonzero entries binned ``step`` rows
    at a time.

    Parameters
    ----------
    lattice : (ndarray of shape (L + 1,), ndarray of uint8 of shape (n, n))
        ``(levels, index)`` of :func:`find_lattice` for a symmetric :math:`D`.
    full : ndarray of shape (n,)
        Coefficients, one per column of :math:`D` (zeros where a column is not weighted).
    step : int
        Nonzero coefficients binned per ``bincount`` call, at least 1
        (:func:`~approxpath.compute.kernels.product_step`).

    Returns
    -------
    ndarray of shape (n, L + 1)
        C-contiguous; :math:`H_{ik} = \\sum_{j:\\, D_{ij} = d_k} \\mathrm{full}_j`.
    """
    levels, index = lattice
    n, L = index.shape[0], levels.size
    H = np.zeros(L * n)
    at = np.arange(n)
    weighted = np.flatnonzero(full)
    for a in range(0, weighted.size, step):
        # by symmetry row j of the index holds D[i, j] for every i: bin (level, i)
        js = weighted[a:a + step]
        bins = (index[js].astype(np.intp) * n + at).ravel()
        H += np.bincount(bins, weights=np.repeat(full[js], n), minlength=L * n)
    return np.ascontiguousarray(H.reshape(L, n).T)
