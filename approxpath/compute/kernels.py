"""Kernels :math:`K_t = \\exp(-tD)` and their products.

The kernel of every built-in problem is :math:`K_t = \\exp(-t D)` with :math:`D \\ge 0`
entrywise (today :math:`D_{ij} = \\lVert x_i - x_j \\rVert^2`), so :math:`0 < (K_t)_{ij} \\le 1` and
every entry is completely monotone in :math:`t`: every bound of the package rests on that.

:class:`Kernels` computes what a bound asks for (a kernel, or products with it and its
derivatives in :math:`t`) from scratch, numpy only: the verifier uses it.
:class:`~approxpath.compute.caches.KernelCache` adds the caches a path search needs (the last
few kernels, histograms of coefficients over lattice distances); distances on a small lattice take
the routes of :mod:`approxpath.compute.lattice`.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .block_terms import block_products, exponentiate
from .lattice import find_lattice, histogram, lattice_entries, lattice_kernel
from .parallelism import background, blas_threads, kernel_threads, parallel_map, threads

__all__ = ["gaussian", "matvec", "kernel_rows", "Kernels", "threads",
           "product_step", "product_chunks", "block_products"]


# below this many entries threads cost more than they save
_THREADED_MIN = 1 << 18
# Kernel products of at least this many entries run on one BLAS thread: OpenBLAS spreads the
# skinny products of a block (p x m times m x n, p a few columns) over its threads, measured
# 27.7 s against 1.0 s for one pass at n = 16000, p = 4 on 2 cores (limiting costs ~0.3 ms a
# call: a pass at this size takes ~10 ms)
_ONE_BLAS_MIN = 1 << 22
# rows of E and D per block of KernelCache.products: a block and its temporary (~2 x 256 KB)
# stay in a core's L2 cache between the three products
_PRODUCT_BLOCK_BYTES = 1 << 18
# ... and at least 16 rows, as long as they take at most this much (else 8 to 15 rows): one pass
# at n = 16000, p = 4, idle machine: 16 rows (2 MB) 0.46 s, 12 rows 0.37 s, 8 rows 0.37 s; at
# n = 8000, 16 rows (1 MB) 0.087 s, 12 rows 0.089 s, 8 rows 0.107 s
_PRODUCT_BLOCK_MAX = 3 << 19
# rows per chunk of a product summed on one thread (Kernels.products): two chunks from
# n = 2049 on, so both cores work at n = 4000 (the sums of smaller products keep the order of
# one pass, bit for bit) ...
_PRODUCT_CHUNK = 2048
# ... and half as many rows above this many, so that 16 cores have a chunk each at n = 16,000
# (16 chunks instead of 8; products of at most this many rows keep their chunks bit for bit)
_PRODUCT_CHUNK_FINE = 8192
# the stored terms of a window of blocks computed side by side (_in_order): a few MB, so that
# one window holds a whole chunk at n <= 1000 and stays small against the product's reads
_WINDOW_BYTES = 1 << 23
# rows per block of the blocked elementwise work: blocks of D stay in cache between the
# multiply and the exp
_BLOCK = 256


def _blocked(fn, out):
    """Apply ``fn(rows)`` (which fills ``out[rows]``) block-row by block-row, threaded.

    (Computing only the upper triangle of a symmetric result and mirroring it was measured
    slower: 7.4 vs 4.9 ms for exp at n = 1605, 4.8 vs 2.0 ms for a product; the transposed copy
    costs more than the arithmetic it saves.  The full result is exactly symmetric anyway when
    its input is: the entrywise operations do not depend on an entry's position.)
    """
    parallel_map(fn, _row_blocks(out.shape[0]), threaded=out.size >= _THREADED_MIN)
    return out


def _row_blocks(n):
    """Slices of :data:`_BLOCK` rows covering ``range(n)``."""
    return [slice(a, min(a + _BLOCK, n)) for a in range(0, n, _BLOCK)]


def matvec(M, v):
    """:math:`Mv` for ``M`` of shape (n, m) and ``v`` of shape (m,), by blocks of rows on the
    kernel threads, each a one-thread BLAS product into its rows of the result.  A product
    with a whole kernel reads all of it (2 GB at n = 16,000: 0.1 s on one core, the memory's
    speed, not the arithmetic's), once per exact solve of the SVM; the blocks do not depend on
    the thread count, so neither do the bits.

    Parameters
    ----------
    M : ndarray of shape (n, m)
        The matrix, read by blocks of rows (the SVM's: its kernel :math:`K_t`, (n, n)).
    v : ndarray of shape (m,)
        The vector.

    Returns
    -------
    ndarray of shape (n,)
    """
    out = np.empty(M.shape[0])

    def rows(b):
        np.dot(M[b], v, out=out[b])

    parallel_map(rows, _row_blocks(M.shape[0]), threaded=M.size >= _THREADED_MIN)
    return out


def _symmetric(D):
    """Whether ``D`` (n, n) equals its transpose, by blocks of rows against the same columns on
    the kernel threads (one ``array_equal(D, D.T)`` reads the transpose across the whole
    matrix: 1.6-2.3 s at n = 16,000, where blocks take 0.8 s on two threads)."""
    return all(parallel_map(lambda b: np.array_equal(D[b], D[:, b].T), _row_blocks(D.shape[0]),
                            threaded=D.size >= _THREADED_MIN))


def gaussian(D, t, out=None):
    """:math:`\\exp(-t D)` entrywise; ``D`` of shape (n, m), ``t > 0``.

    Parameters
    ----------
    D : array_like of shape (n, m)
        Distances, entrywise nonnegative (an array of another number of axes is exponentiated in
        one call, ``out`` unused).
    t : float
        The kernel parameter, ``t > 0``.
    out : ndarray of shape (n, m), optional
        A float64 array the kernel is written into (by blocks of rows, threaded); a new one if
        None.

    Returns
    -------
    ndarray of the shape of ``D``
        :math:`e^{-tD_{ij}}` per entry (``out`` where it is given).
    """
    D = np.asarray(D, dtype=float)
    if D.ndim != 2:
        with np.errstate(over="ignore"):  # -t D overflowing to -inf gives exp = 0, the true value's rounding
            return np.exp(-float(t) * D)
    out = np.empty_like(D) if out is None else out
    return _blocked(lambda rows: exponentiate(D[rows], -float(t), out[rows]), out)


def kernel_rows(D, t, W, rows=None):
    """:math:`\\exp(-t D_{R,:})\\, W` without forming the (k, n) kernel rows: blocks of rows of
    ``D`` (at most 256 kB each: they stay in cache) exponentiated and multiplied at once, one
    run of blocks per kernel thread.  The blocks depend on the shape of ``D`` only, so the
    result does not depend on the number of threads.

    Parameters
    ----------
    D : ndarray of shape (n, m)
    t : float
    W : ndarray of shape (m,) or (m, p)
    rows : ndarray of int of shape (k,), optional
        The rows :math:`R` of ``D`` (all if None).

    Returns
    -------
    ndarray of shape (k,) or (k, p)
    """
    W = np.asarray(W, dtype=float)
    k, m = (D.shape[0] if rows is None else len(rows)), D.shape[1]
    out = np.empty((k,) + W.shape[1:])
    step = max(1, _PRODUCT_BLOCK_BYTES // (8 * max(m, 1)))
    starts = range(0, k, step)  # blocks fixed by k: a BLAS product's last bits depend on its shape
    runs = kernel_threads() if k * m >= _THREADED_MIN else 1
    per = max(1, -(-len(starts) // runs))  # (k = 0: no block, one empty run)

    def run(first):  # blocks first .. first + per, through one buffer
        buffer = np.empty((min(step, k), m))
        for a in starts[first:first + per]:
            b = min(a + step, k)
            Db = D[a:b] if rows is None else D[rows[a:b]]
            np.matmul(gaussian(Db, t, out=buffer[:b - a]), W, out=out[a:b])

    parallel_map(run, range(0, max(len(starts), 1), per))
    return out


def product_step(n):
    """Rows of :math:`D` per block of :meth:`Kernels.products` on ``n`` samples (a block's partial
    sums are added in this order: :mod:`approxpath.compute.distributed` cuts its tasks at these blocks): the rows
    (8 n bytes each) that fit in ``_PRODUCT_BLOCK_BYTES`` (2**18 bytes) where they are at least 16, else those that
    fit in ``_PRODUCT_BLOCK_MAX`` (3 * 2**19 bytes), clipped to 8 to 16."""
    rows = _PRODUCT_BLOCK_BYTES // (8 * n)
    # at least 16 rows a block, 8 to 15 where 16 rows would pass _PRODUCT_BLOCK_MAX (measured there)
    return rows if rows >= 16 else max(8, min(16, _PRODUCT_BLOCK_MAX // (8 * n)))


def product_chunks(k):
    """The runs of coefficient rows (ranges of ``range(k)``) that :meth:`Kernels.products` sums
    separately, block by block from zero, before adding the runs' sums in order: they depend on
    ``k`` alone, so the result does not depend on how many threads or workers compute them.  Consecutive runs of
    2,048 rows (1,024 where ``k`` > 8,192), the last one shorter; none for ``k = 0``."""
    size = _PRODUCT_CHUNK if k <= _PRODUCT_CHUNK_FINE else _PRODUCT_CHUNK // 2
    return [range(a, min(a + size, k)) for a in range(0, k, size)]


def _in_order(run, blocks, shape, count):
    """The sum of the blocks' terms (each of ``shape``) in the blocks' order, the same bits as
    ``run(blocks)``, the terms computed by ``run(some, store)`` on ``count`` kernel threads, a
    window of consecutive blocks at a time (its terms stored: at most :data:`_WINDOW_BYTES`, or
    one block a thread)."""
    per = max(1, min(-(-len(blocks) // count), _WINDOW_BYTES // (8 * count * int(np.prod(shape)))))
    store, acc = np.empty((count * per,) + shape), np.zeros(shape)
    for w in range(0, len(blocks), count * per):
        window = blocks[w:w + count * per]
        parallel_map(lambda i: run(window[i:i + per], store[i:i + per]), range(0, len(window), per))
        for terms in store[:len(window)]:
            acc += terms
    return acc


class Kernels:
    """Kernels :math:`E_x = \\exp(-xD)` and products with them, computed from scratch.

    Parameters
    ----------
    D : ndarray of shape (n, n)
        Symmetric, entrywise nonnegative (e.g. :func:`sq_distances`).

    Attributes
    ----------
    lattice : (ndarray, ndarray of uint8) or None
        The levels and level indices of ``D`` when its entries lie on a small lattice (binary
        or integer features): products then go through histograms of the coefficients over the
        levels, the same entries :math:`e^{-x d_k}` summed in another order.
    """

    def __init__(self, D):
        if D.ndim != 2 or D.shape[0] != D.shape[1] or not _symmetric(D):
            raise ValueError("Kernels needs symmetric distances (n, n)")  # products() relies on it
        self._D = D
        self.lattice = find_lattice(D)
        self._checks = self._summary = self._sha256 = None
        if self.lattice is not None:
            # the levels and their uint8 index hold D exactly in an eighth of its memory (a4a's
            # five folds: 585 MB of distances): D is gathered again only where a caller reads it
            self.summary()
            self._D = None

    #: ``"dense"`` here; ``"distances"`` or ``"blocked"`` without whole kernels (:mod:`approxpath.compute.blocked`).
    mode = "dense"

    @property
    def D(self):
        """The distances (n, n); on a lattice gathered from it at the first read, then kept."""
        if self._D is None:
            levels, index = self.lattice
            self._D = levels[index]
        return self._D

    @property
    def n(self):
        """The number of samples."""
        return (self._D if self._D is not None else self.lattice[1]).shape[0]

    def product_chain(self):
        """The most roundings a term of :meth:`products` undergoes on these n samples, for any
        k <= n coefficient rows and any number of threads (the Dask workers' split products add
        the same blocks in the same order): its product and D, D^2 factors (3), a block's matrix
        product (``product_step(n)`` rows, in any order), the blocks of a chunk added in order
        (at most 2048 / step), the chunks' sums added in order (at most n / 1024).  Through a
        lattice's histograms: bins of ``step`` rows added block after block (step + n / step),
        then at most 256 levels' entries, each rounded 3 times, and their products (260).  At
        most n + 4: k terms summed in any order are added at most k - 1 times."""
        n, step = self.n, product_step(self.n)
        if self.lattice is not None:
            return min(n + 4, step + -(-n // step) + 260)
        return min(n + 4, step + 2 + -(-_PRODUCT_CHUNK // step) + -(-n // (_PRODUCT_CHUNK // 2)))

    def rows(self, idx):
        """The rows ``idx`` of :math:`D` (a slice or integer indices): shape (k, n)."""
        return self.D[idx]

    def checks(self):
        """``(finite, largest)`` of :math:`D`: whether every entry is finite and the largest entry
        (computed once, by blocks on the kernel threads: ``D`` is read only).  Starts its
        :func:`~approxpath.kernel_families.distances_sha256` in the background
        (:func:`~approxpath.compute.parallelism.background`), which :meth:`summary` collects."""
        from ..kernel_families import distances_sha256

        if self._checks is None:
            D = self.D
            self._sha256 = background(distances_sha256, D)
            # by blocks on the kernel threads (in one piece: 0.6 s at n = 16,000)
            self._checks = self._scan(D.__getitem__, _row_blocks(D.shape[0]), threaded=D.size >= _THREADED_MIN)
        return self._checks

    @staticmethod
    def _scan(read, blocks, threaded=True):
        """``(finite, largest)`` over the row blocks ``read(b)`` of :math:`D`, ``b`` in
        ``blocks``, on the kernel threads (where ``threaded``)."""
        def block(b):
            R = read(b)
            return bool(np.all(np.isfinite(R))), np.max(R)

        parts = parallel_map(block, blocks, threaded=threaded)
        top = float(np.max([t for _, t in parts])) if parts else 0.0  # NaN if any block's is
        return all(f for f, _ in parts), top

    def summary(self):
        """``(finite, largest, sha256)`` of :math:`D`: :meth:`checks` and the sha256 of ``D``,
        waited for (a path asks for it at its end, for its certificate)."""
        if self._summary is None:
            self._summary = (*self.checks(), self._sha256.result())
            self._sha256 = None
        return self._summary

    def get(self, x, out=None):
        """:math:`E_x = \\exp(-xD)`, shape (n, n) (into ``out`` when given)."""
        if self.lattice is None:
            return gaussian(self.D, float(x), out=out)
        return lattice_kernel(self.lattice, float(x), out=out)

    def _cached(self, x):
        """A stored :math:`E_x` (None: nothing is stored here)."""
        return None

    def columns(self, x, idx):
        """The columns ``idx`` of :math:`E_x` (integer indices): shape (n, k), read from a
        stored kernel if there is one, else exponentiated from the rows ``idx`` of the
        symmetric :math:`D` (the same entries; n x k work instead of n x n)."""
        cached = self._cached(float(x))
        if cached is not None:
            return cached[:, idx]
        return gaussian(self.rows(idx), float(x)).T

    def products(self, x, C, rows=None, order=2):
        """:math:`(E_x C,\\ (D \\circ E_x) C,\\ (D^2 \\circ E_x) C)` (the first
        ``order + 1`` of them) with ``C`` weighting the columns ``rows`` of the kernel (all if
        None).

        One pass over :math:`D` in blocks of rows that stay in cache: each block of
        :math:`E_x` is exponentiated there and used at once (or read, if :math:`E_x` is
        cached: the entries are the same either way), so neither the kernel nor the
        derivative matrices are ever stored, and only the rows ``rows`` are exponentiated
        (a product is memory-bound: this reads one n x n array instead of three and writes
        none; certifying a path evaluates products at many points where no kernel is needed
        otherwise).  By symmetry :math:`E_x[:, r]\\, C = (C^\\top E_x[r, :])^\\top`, the
        fast orientation of a product with few columns.  The entries and the sums are
        computed in a fixed order: results depend on nothing but the inputs (and the first
        product not on ``order``) where BLAS runs on one thread, as the library's entry points
        run it (OpenBLAS 0.3.21 rounds a product with one column differently on two threads).

        Parameters
        ----------
        x : float
        C : ndarray of shape (k,) or (k, p)
        rows : ndarray of int of shape (k,), optional
        order : {0, 1, 2}

        Returns
        -------
        tuple of ``order + 1`` ndarrays of shape (n,) or (n, p)
        """
        C = np.asarray(C, dtype=float)
        C2 = C[:, None] if C.ndim == 1 else C
        k, n = C2.shape[0], self.n
        step = product_step(n)
        if self.lattice is not None:
            W = lattice_entries(self.lattice[0], x, order)
            acc = np.stack([self._histogram(C2[:, c], rows, step) @ W for c in range(C2.shape[1])], axis=1)
            return tuple(acc[:, :, j].reshape((n,) + C.shape[1:]) for j in range(order + 1))
        cached, minus_x = self._cached(x), -float(x)
        shape = (order + 1, C2.shape[1], n)

        def run(blocks, store=None):  # consecutive blocks' terms: summed in order, or each into its slot of store
            # every block in the same buffers: a fresh block-sized array each time was mapped and
            # faulted in anew (n = 8000: one pass 1.6 s against 0.86 s, much of it system time)
            Eb, Tb = np.empty((step, n)), np.empty((step, n))
            acc, out = (np.zeros(shape), np.empty(shape)) if store is None else (None, None)
            for i, (a, b) in enumerate(blocks):
                idx = slice(a, b) if rows is None else rows[a:b]
                Db = self.rows(idx)
                r = Db.shape[0]
                # the same entries as a cached kernel
                E = cached[idx] if cached is not None else exponentiate(Db, minus_x, Eb[:r])
                terms = block_products(C2[a:b].T, Db, E, order, out=out if store is None else store[i], T=Tb[:r])
                if store is None:
                    acc += terms
            return acc

        # chunks of rows summed on the kernel threads, then added in their order: the chunks
        # depend on k only, so the sums do not depend on the number of threads (one chunk, the
        # blocks' order of a single pass, up to _PRODUCT_CHUNK rows); fewer chunks than threads:
        # each chunk's blocks on all of them, their terms added in the same order
        chunks = [[(a, min(a + step, c.stop)) for a in range(c.start, c.stop, step)] for c in product_chunks(k)]
        count = kernel_threads() if k * n >= _THREADED_MIN else 1
        with blas_threads(1) if k * n >= _ONE_BLAS_MIN else nullcontext():
            if len(chunks) >= count:
                parts = parallel_map(run, chunks, threaded=count > 1)
            else:
                parts = [_in_order(run, blocks, shape, count) for blocks in chunks]
        acc = parts[0] if parts else np.zeros(shape)
        for more in parts[1:]:
            acc += more
        return tuple(m.T.reshape((n,) + C.shape[1:]) for m in acc)

    def _histogram(self, c, rows, step):
        """``H`` of shape (n, levels): ``H[i, k]`` is the sum of ``c[j]`` over the ``j`` (of
        ``rows``) with ``D[i, j] = levels[k]``."""
        full = np.zeros(self.n)
        full[slice(None) if rows is None else rows] = c
        return self._histogram_of(full, step)

    def _histogram_of(self, full, step):
        """:meth:`_histogram` of a column scattered to length n (computed, never stored here)."""
        return histogram(self.lattice, full, step)
