"""Gaussian kernels and the floating-point facts certificates rely on.

The kernel of every built-in problem is :math:`K_t = \\exp(-t D)` with
:math:`D_{ij} = \\lVert x_i - x_j \\rVert^2`, so :math:`0 < (K_t)_{ij} \\le 1` and every entry
is decreasing and convex in :math:`t`.
"""

from __future__ import annotations

import os
import sys

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
#: Memory the kernel cache may use (bytes): 1.2 GB keeps a4a (n = 4781) at two cached kernels.
CACHE_BYTES = 1_200_000_000
# rows per block of the blocked elementwise work: blocks of D stay in cache between the
# multiply and the exp
_BLOCK = 256


def _blocked(fn, out, symmetric):
    """Apply ``fn(rows, cols)`` (which fills ``out[rows, cols]``) block-row by block-row.

    With ``symmetric`` only the upper triangle (and the diagonal blocks) is computed and the
    lower triangle is copied from it: half the arithmetic, and exactly symmetric results.
    """
    n, m = out.shape[0], out.shape[1] if out.ndim > 1 else 1
    starts = list(range(0, n, _BLOCK))

    def work(k):
        a, b = starts[k], min(starts[k] + _BLOCK, n)
        fn(slice(a, b), slice(a, None) if symmetric else slice(None))

    threads = THREADS if n * m >= _THREADED_MIN else 1
    if threads > 1 and len(starts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, range(len(starts))))
    else:
        for k in range(len(starts)):
            work(k)
    if symmetric:
        for a in starts:
            b = min(a + _BLOCK, n)
            out[b:, a:b] = out[a:b, b:].T
    return out


def gaussian(D, t, symmetric=False, out=None):
    """:math:`\\exp(-t D)` entrywise; ``D`` of shape (n, m), ``t > 0``.

    ``symmetric=True`` (``D`` symmetric, e.g. from :func:`sq_distances`) computes the upper
    triangle only and mirrors it.
    """
    D = np.asarray(D, dtype=float)
    if D.ndim != 2:
        return np.exp(-float(t) * D)
    out = np.empty_like(D) if out is None else out

    def fill(rows, cols):
        np.multiply(D[rows, cols], -float(t), out=out[rows, cols])
        np.exp(out[rows, cols], out=out[rows, cols])

    return _blocked(fill, out, symmetric)


def _times_D(D, M, out=None, symmetric=False):
    """``D * M`` entrywise (blocked like :func:`gaussian`; upper triangle only if symmetric)."""
    out = np.empty_like(M) if out is None else out
    return _blocked(lambda rows, cols: np.multiply(D[rows, cols], M[rows, cols], out=out[rows, cols]), out, symmetric)


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
    matrix-vector products.  Evicted matrices that nobody else holds are reused as buffers
    (fresh n x n allocations cost page faults comparable to the exp itself).

    Parameters
    ----------
    D : ndarray of shape (n, n)
        Symmetric squared distances.
    size : int, optional
        Number of ``x`` kept (least recently used goes first); by default as many as fit in
        :data:`CACHE_BYTES` (three n x n arrays each), between 2 and 6.
    """

    def __init__(self, D, size=None):
        self.D = D
        # only the upper triangle is computed for symmetric D (squared distances of one set)
        self.symmetric = D.ndim == 2 and D.shape[0] == D.shape[1] and bool(np.array_equal(D, D.T))
        per_x = 3 * 8 * D.size
        self.size = size or int(min(6, max(2, CACHE_BYTES // max(per_x, 1))))
        self._store = {}
        self._free = []

    def _buffer(self):
        return self._free.pop() if self._free else np.empty_like(self.D)

    def get(self, x, order=0):
        """``E_x`` if ``order == 0``, else the list ``[E_x, D * E_x, ..., D**order * E_x]``."""
        x = float(x)
        entry = self._store.pop(x, None)
        if entry is None:
            entry = [gaussian(self.D, x, symmetric=self.symmetric, out=self._buffer())]
        while len(entry) <= order:
            entry.append(_times_D(self.D, entry[-1], out=self._buffer(), symmetric=self.symmetric))
        self._store[x] = entry  # most recent last
        while len(self._store) > self.size:
            for arr in self._store.pop(next(iter(self._store))):
                # reuse only what no caller still references (the list and getrefcount's own)
                if sys.getrefcount(arr) <= 3 and len(self._free) < 3:
                    self._free.append(arr)
        return entry[0] if order == 0 else entry[: order + 1]
