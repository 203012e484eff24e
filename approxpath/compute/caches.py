"""The caches of a path search around :class:`~approxpath.compute.kernels.Kernels`: the last few kernels
and lattice histograms (:class:`KernelCache`), and kernel products remembered by the content of
their arguments (:class:`ProductMemo`).  Values are those of :class:`~approxpath.compute.kernels.Kernels`
bit for bit; the verifier does not use these caches.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import threading
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from ..numerics import margins_of
from .kernels import Kernels

__all__ = ["CACHE_BYTES", "PRODUCT_BYTES", "KernelCache", "ProductMemo", "kept_kernels", "share_budget", "sharing"]

#: Memory the kernel caches of one machine's processes may use (bytes): 1.2 GB would keep six
#: kernels of n = 4781 (real-valued features) in one process; a local worker pool's processes
#: share it (:func:`share_budget`).
CACHE_BYTES = 1_200_000_000
_SHARERS = [1]  # the processes this one shares CACHE_BYTES with, itself included (a worker's setting)
_POOLED = [0]  # ... and the workers of the pools this process owns now (every thread's: :func:`sharing`)
_POOLED_LOCK = threading.Lock()
# ... but no more than this many: a path revisits only the ends of the last few pieces
_CACHE_MAX = 12
#: Bytes of kernel products a search's :class:`ProductMemo` keeps: at n = 281 (ionosphere's folds)
#: an answer is ~40 kB and a search's refinements reuse a few hundred; at a4a's n = 4781, ~0.7 MB,
#: still ~90 answers.
PRODUCT_BYTES = 64 << 20
# Lattice histograms kept: at least this many (one per coefficient column: the class sums of
# the few duals a path evaluates at a time, two columns each) ...
_HISTOGRAMS = 16
# ... and as many as fit in this many bytes (n x levels floats each): a selection's round moves
# between a fold's pieces, each with its own columns (a2a select --cv 5, n = 1812 per fold, 28
# levels: 963 histograms built keeping 16, 444 keeping 32, 332 keeping 40 or more, of 11,962
# asked; a4a, n = 3825 per fold: 2,952 of 39,080 built keeping 37 (32 MB), 1,264 keeping 80, 786
# at best; 64 MB keeps 74 a fold: 221 -> 201 s for 160 MB more at the peak, 1.74 GB)
_HISTOGRAM_BYTES = 64 << 20


def kept_kernels(n, processes=None):
    """Kernels of ``n`` samples a :class:`KernelCache` keeps on real-valued features: as many as
    fit in this process's share of :data:`CACHE_BYTES` (``processes`` sharing it; by default as
    :func:`share_budget` last set), between 2 and 12: ``min(12, max(2, (CACHE_BYTES // processes) // (8 n^2)))``
    (a kernel is 8 n^2 bytes)."""
    share = CACHE_BYTES // max(1, int(processes or _SHARERS[0] + _POOLED[0]))
    return int(min(_CACHE_MAX, max(2, share // max(8 * n * n, 1))))


def share_budget(processes):
    """Let ``processes`` processes of this machine (this one included; at least 1 is taken) share
    :data:`CACHE_BYTES`; returns the count it replaces (to restore it with).  A local worker pool
    sets it in each worker (its initializer) and in the process that owns the pool while the pool
    lives (robust l1's path at n = 4000 on two workers: 5.6-5.7 instead of 8.0 GB in its three
    processes, in 336-342 against 333 s; the SVM's at n = 4000: 7.2-7.3 instead of 8.3-9.7 s, its
    main process 680 instead of 1430 MB).  The kernel caches built before shrink at their next new
    kernel."""
    before, _SHARERS[0] = _SHARERS[0], max(1, int(processes))
    return before


def _forked():  # a process forked from this one owns none of its pools (nor a lock held in another thread)
    global _POOLED_LOCK
    _POOLED[0], _POOLED_LOCK = 0, threading.Lock()


os.register_at_fork(after_in_child=_forked)


@contextmanager
def sharing(processes):
    """While the ``with`` block runs, this process shares :data:`CACHE_BYTES` with ``processes - 1``
    more (a worker pool it owns); pools owned by several threads at once add up, and each block
    takes back only its own (a count set and restored would keep another thread's)."""
    extra = max(0, int(processes) - 1)
    with _POOLED_LOCK:
        _POOLED[0] += extra
    try:
        yield
    finally:
        with _POOLED_LOCK:
            _POOLED[0] -= extra


class KernelCache(Kernels):
    """:class:`Kernels` with the caches a path search needs: the last few kernels by ``x`` (for
    exact solves and declarations; products read a stored kernel instead of exponentiating) and
    the lattice histograms by content.  Values are those of :class:`Kernels`, bit for bit.

    The kernel evicted for a new one is overwritten by it when nobody else holds it, so the
    cache never holds more than ``size`` kernels, not even for a moment (a fresh n x n
    allocation also costs page faults comparable to the exp itself).

    Parameters
    ----------
    D : ndarray of shape (n, n)
    size : int, optional
        Number of ``x`` kept (least recently used goes first); by default as many as fit in
        this process's share of :data:`CACHE_BYTES` (:func:`kept_kernels`, read at each new
        kernel), and 2 on a lattice.
    """

    def __init__(self, D, size=None):
        super().__init__(D)
        self._size = size
        self._store = {}
        self._histograms = OrderedDict()
        levels = 0 if self.lattice is None else self.lattice[0].size
        self._histograms_kept = max(_HISTOGRAMS, _HISTOGRAM_BYTES // max(8 * self.n * levels, 1))

    @property
    def size(self):
        """The number of kernels kept."""
        # on a lattice products never read a cached kernel: keep two (an exact solve's and
        # the one before); each kernel kept beyond them was a fresh allocation whose page
        # faults the solves paid, ~0.1 s each at a4a's size (a4a path keeping 6: 9.4-9.9 s,
        # peak 1.8 GiB; keeping 2: 8.1-8.5 s, 1.1 GiB)
        return self._size or (2 if self.lattice is not None else kept_kernels(self.n))

    def get(self, x):
        """:math:`E_x = \\exp(-xD)`, shape (n, n), kept for the next calls (read only)."""
        x = float(x)
        E = self._store.pop(x, None)
        if E is None:
            buffer = None
            while len(self._store) >= self.size:  # room first: the last evicted kernel becomes the new one
                old = self._store.pop(next(iter(self._store)))
                # reuse only what no caller still references (``old`` and getrefcount's own)
                buffer = old if sys.getrefcount(old) <= 2 else None
                del old
            E = super().get(x, out=buffer)
        self._store[x] = E  # most recent last
        return E

    def release(self):
        """Forget the kept kernels (up to ``size`` n x n arrays): a caller leaving this problem for
        a while frees their memory (a selection's folds, one path at a time); the next
        :meth:`get` computes its kernel again."""
        self._store.clear()

    def _cached(self, x):
        return self._store.get(float(x))

    def _histogram_of(self, full, step):
        """Cached by content: a dual's class sums reuse it with any other columns and any
        superset of rows."""
        key = hashlib.blake2b(full.tobytes(), digest_size=16).digest()
        H = self._histograms.get(key)
        if H is not None:
            self._histograms.move_to_end(key)
            return H
        H = self._histograms[key] = super()._histogram_of(full, step)
        while len(self._histograms) > self._histograms_kept:
            self._histograms.popitem(last=False)
        return H


class ProductMemo:
    """Kernel products remembered by the content of their arguments: a bound that evaluates the
    same coefficients at the same point again (the pieces of a path that meet there, a search
    refining a cell into halves) gets the same arrays, bit for bit, without another pass over
    :math:`D`.  Calling the memo is ``products`` memoized; :meth:`wrap` memoizes other callables
    in the same store.  An answer is used only for the same callable's owners, the same point
    and arguments equal to the stored ones (keys by ``id`` and hash only find it); the least
    recently used answers go first beyond ``size`` of them or ``max_bytes`` of products.

    Parameters
    ----------
    products : callable, optional
        ``products(x, C, rows=None, order=2)`` (:meth:`Kernels.products`), what a call answers.
    size : int, optional
        Answers kept at most; no limit if omitted.
    max_bytes : int, optional
        Bytes of products kept at most (the newest answer stays, whatever its size); no limit if
        omitted.
    """

    def __init__(self, products=None, size=None, max_bytes=None):
        self.products, self.bytes = products, 0
        self.size = math.inf if size is None else int(size)
        self.max_bytes = math.inf if max_bytes is None else int(max_bytes)
        self._memo = OrderedDict()

    def __len__(self):
        """The number of answers kept."""
        return len(self._memo)

    @property
    def rounded_elsewhere(self):
        """Whether its answers are rounded otherwise than a verifier's numpy (those of a device's
        ``products``): :func:`~approxpath.numerics.margins_of`."""
        return margins_of(self.products) > 1

    def __call__(self, x, C, rows=None, order=2):
        return self._answer(self.products, (), x, C, rows, order)

    def wrap(self, products, owners, rows=None):
        """``products(x, C, cols)`` through the memo: ``owners``, a tuple of the objects that fix
        what it computes (the pair, the distances; held while an answer lives, so their ``id``
        is not reused); with ``rows``, the rows ``rows`` of the full products (computed for
        every row once)."""
        owners = tuple(owners)

        def memoized(x, C, cols=None):
            out = self._answer(products, owners, x, C, cols)
            return out if rows is None else tuple(a[rows] for a in out)

        memoized.rounded_elsewhere = margins_of(products) > 1  # (what bounds of it add: margins_of)
        return memoized

    def _answer(self, products, owners, x, C, rows, *more):
        C = np.ascontiguousarray(C, dtype=float)
        rows = None if rows is None else np.ascontiguousarray(rows)
        key = (tuple(map(id, owners)), float(x), more, C.shape, hash(C.tobytes()),
               None if rows is None else hash(rows.tobytes()))
        hit = self._memo.get(key)
        if (hit is not None and all(a is b for a, b in zip(hit[0], owners)) and np.array_equal(hit[1], C)
                and (rows is None or np.array_equal(hit[2], rows))):
            self._memo.move_to_end(key)
            return hit[3]
        out = products(x, C, rows, *more)
        if hit is not None:  # a hash's other content: replaced
            self._drop(key)
        self._memo[key] = (owners, C, rows, out)
        self.bytes += sum(a.nbytes for a in out)
        while len(self._memo) > self.size or (self.bytes > self.max_bytes and len(self._memo) > 1):
            self._drop(next(iter(self._memo)))
        return out

    def _drop(self, key):
        self.bytes -= sum(a.nbytes for a in self._memo.pop(key)[3])
