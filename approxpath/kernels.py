"""Gaussian kernels and the floating-point facts certificates rely on.

The kernel of every built-in problem is :math:`K_t = \\exp(-t D)` with
:math:`D_{ij} = \\lVert x_i - x_j \\rVert^2`, so :math:`0 < (K_t)_{ij} \\le 1` and every entry
is decreasing and convex in :math:`t`.
"""

from __future__ import annotations

import os

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform

__all__ = ["UNIT_ROUNDOFF", "sq_distances", "cross_sq_distances", "gaussian", "kernel_entry_error", "KernelCache"]

#: Unit roundoff of IEEE double precision (half the machine epsilon).
UNIT_ROUNDOFF = 2.0**-53


def sq_distances(X):
    """Squared Euclidean distances between the rows of ``X``.

    Computed from coordinate differences (``scipy.spatial.distance.pdist``), not from
    :math:`\\lVert x\\rVert^2 + \\lVert x'\\rVert^2 - 2x^\\top x'`, so every entry carries a
    relative error of at most :math:`(d + 2)u` and the diagonal is exactly zero.

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    D : ndarray of shape (n, n)
    """
    X = np.asarray(X, dtype=float)
    if X.shape[0] < 2:
        return np.zeros((X.shape[0], X.shape[0]))
    return squareform(pdist(X, "sqeuclidean"))


def cross_sq_distances(A, B):
    """Squared Euclidean distances between the rows of ``A`` (m, d) and ``B`` (k, d): shape (m, k)."""
    return cdist(np.asarray(A, dtype=float), np.asarray(B, dtype=float), "sqeuclidean")


#: Threads for the elementwise kernel work on large matrices (numpy's ufuncs release the GIL);
#: worker processes of a parallel path set it to 1.
THREADS = max(1, min(4, os.cpu_count() or 1))
# below this many entries threads cost more than they save
_THREADED_MIN = 1 << 18


def _rowwise(fn, shape):
    """Run ``fn(rows)`` over row blocks, in :data:`THREADS` threads when the matrix is large."""
    n = shape[0] if len(shape) else 1
    if THREADS == 1 or int(np.prod(shape)) < _THREADED_MIN or n < 2 * THREADS:
        fn(slice(None))
        return
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, n, THREADS + 1).astype(int)
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(fn, [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]))


def gaussian(D, t):
    """:math:`\\exp(-t D)` entrywise; ``D`` of any shape, ``t > 0``."""
    D = np.asarray(D, dtype=float)
    out = np.empty_like(D)

    def rows(sl):
        np.multiply(D[sl], -float(t), out=out[sl])
        np.exp(out[sl], out=out[sl])

    _rowwise(rows, D.shape)
    return out


def _times_D(D, M):
    """``D * M`` entrywise (threaded like :func:`gaussian`)."""
    out = np.empty_like(M)
    _rowwise(lambda sl: np.multiply(D[sl], M[sl], out=out[sl]), M.shape)
    return out


def kernel_entry_error(d):
    """Absolute error bound of one computed kernel entry :math:`\\exp(-tD_{ij})`.

    ``D_ij`` has relative error :math:`(d+2)u`, the product :math:`tD_{ij}` one more
    :math:`u`, and ``exp`` at most :math:`2u` relative (glibc and numpy's SIMD ``exp`` are
    accurate to a few tenths of an ulp; 2 ulp leaves room).  An argument error
    :math:`\\delta\\, tD` changes :math:`e^{-tD}` by at most :math:`\\delta\\, tD\\, e^{-tD}
    \\le \\delta / e`, so every entry is within :math:`((d+3)/e + 2)u` of the exact kernel.

    Parameters
    ----------
    d : int
        Number of features.
    """
    return ((d + 3) / np.e + 2.0) * UNIT_ROUNDOFF


class KernelCache:
    """The last few kernels :math:`E_x = \\exp(-xD)` and :math:`D^k \\circ E_x` (the
    magnitudes of its derivatives in :math:`x`), by ``x``.

    Certifying a path evaluates the kernel at the ends of many adjacent pieces, and at each
    end for several candidate pairs; caching the full matrices turns those repeats into
    matrix-vector products.

    Parameters
    ----------
    D : ndarray of shape (n, n)
    size : int
        Number of ``x`` kept (least recently used goes first); each costs up to three n x n
        arrays.
    """

    def __init__(self, D, size=6):
        self.D = D
        self.size = size
        self._store = {}

    def get(self, x, order=0):
        """``E_x`` if ``order == 0``, else the list ``[E_x, D * E_x, ..., D**order * E_x]``."""
        x = float(x)
        entry = self._store.pop(x, None)
        if entry is None:
            entry = [gaussian(self.D, x)]
        while len(entry) <= order:
            entry.append(_times_D(self.D, entry[-1]))
        self._store[x] = entry  # most recent last
        while len(self._store) > self.size:
            self._store.pop(next(iter(self._store)))
        return entry[0] if order == 0 else entry[: order + 1]
