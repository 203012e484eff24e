"""Kernel products without an n x n matrix: the distances are computed block by block from ``X``.

:class:`BlockedKernels` answers what :class:`~approxpath.compute.kernels.Kernels` answers for a bound
(:meth:`~approxpath.compute.kernels.Kernels.products`: :math:`E_x C`, :math:`(D\\circ E_x)C`,
:math:`(D^2\\circ E_x)C` with :math:`E_x = \\exp(-xD)`) while holding only O(n x block) floats:
each block of rows of :math:`D` is computed from the data when a product reaches it
(``scipy.spatial.distance.cdist``, whose entries equal ``pdist``'s bit for bit: the same
differences, squares and sums in the same order), exponentiated, multiplied and dropped.  The
products are those of :class:`~approxpath.compute.kernels.Kernels` on real-valued data bit for bit (the
same entries, blocks and summation order), so a certificate and every rounding allowance are
unchanged; data on a small lattice (binary features) are summed in another order (no histogram
here: it needs the n x n level index), within the same allowance.

The cost: the distances are recomputed at every pass (d operations per entry for d features),
where the dense mode reads them (n = 2000, 20 features: ``cdist`` took 40 of the 61 s of kernel
products).  Where the distances fit the budget but the kernels a dense search caches do not,
they are stored and read (mode ``"distances"``, :func:`approxpath.memory.kernels_mode`).  A
problem that needs whole kernels (``get``: an interior-point solve, a CVXPY declaration) cannot
run in either mode and says so in one line.

Numpy and scipy only: the verifier uses it.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..kernel_families import cross_distances, distances_sha256
from .kernels import Kernels
from .parallelism import background, kernel_threads, parallel_map

__all__ = ["BlockedKernels"]

# Rows of D per block of the passes that check and hash the distances: 2**21 entries (16 MB)
# per block, a few blocks at n = 16000, small against the libSVM cache.
_SUMMARY_ENTRIES = 1 << 21


class BlockedKernels(Kernels):
    """:class:`~approxpath.compute.kernels.Kernels` on distances that are never stored.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data (with ``family="precomputed"``: :math:`D` itself, read by rows).
    family : str
        The kernel family (:mod:`approxpath.kernel_families`).
    weights : sequence of float, optional
        The feature weights of ``family="ard"``.
    D : ndarray of shape (n, n), optional
        The distances, when the budget holds them but not the kernels a dense search caches
        (mode ``"distances"``: rows are read, not recomputed; the same numbers).

    Attributes
    ----------
    lattice : None
        Always None (the level index would be an n x n array).
    """

    def __init__(self, X, family="gaussian", weights=None, D=None):
        self.X = np.asarray(X, dtype=float)
        self.family, self.weights = family, weights
        self.lattice = None
        self._checks = self._summary = self._sha256 = None
        self._D = D
        self.mode = "blocked" if D is None else "distances"
        self._held = None

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def D(self):
        if self._D is not None:
            return self._D
        raise InputError(f"the blocked kernels (n = {self.n}) never store the {self.n} x {self.n} distances: "
                         "raise APPROXPATH_MEMORY (bytes) if the machine holds them")

    def rows(self, idx, cols=None):
        """The rows ``idx`` of :math:`D` (a slice or integer indices), computed (or read, if
        stored): shape (k, n); with ``cols`` (integer indices) only those columns, (k, len(cols))."""
        if self._D is not None or self.family == "precomputed":
            R = (self.X if self._D is None else self._D)[idx]
            return R if cols is None else R[:, cols]
        return cross_distances(self.X[idx], self.X if cols is None else self.X[cols], self.family, self.weights)

    def checks(self):
        """``(finite, largest)`` of :math:`D`: :meth:`Kernels.checks` where ``D`` is stored; else
        from its row blocks computed on the kernel threads, while the sha256 of the same blocks,
        computed again and hashed in order (:func:`~approxpath.kernel_families.distances_sha256`),
        runs on a thread of its own
        (:func:`~approxpath.compute.parallelism.background`) for :meth:`Kernels.summary` to
        collect, its blocks computed a window at a time on the kernel threads
        (:func:`_in_windows`).  (One pass doing both, on the main thread before the path, was the
        serial part: at n = 100,000 some 80 GB of distances hashed, ~1 minute.)"""
        if self._D is not None:
            return Kernels.checks(self)
        if self._checks is None:
            n = self.n
            step = max(1, _SUMMARY_ENTRIES // max(n, 1))
            blocks = [slice(a, min(a + step, n)) for a in range(0, n, step)]
            self._sha256 = background(distances_sha256, _in_windows(self.rows, blocks), (n, n))
            self._checks = self._scan(self.rows, blocks)
        return self._checks

    def hold(self, x, E):
        """Let products at ``x`` read ``E`` :math:`= \\exp(-xD)` (n x n, formed by the caller with
        :func:`~approxpath.compute.kernels.gaussian`: the entries a product exponentiates) instead of
        exponentiating, until the next call; ``hold(None, None)`` forgets it."""
        self._held = None if E is None else (float(x), E)

    def _cached(self, x):
        held = self._held
        return held[1] if held is not None and held[0] == float(x) else None

    def get(self, x):
        raise InputError(f"the kernel exp(-tD) is not formed in the blocked mode (n = {self.n}: {self.n} x {self.n} "
                         "floats do not fit the memory budget): use the libsvm backend, or raise APPROXPATH_MEMORY "
                         "(bytes) if the machine holds it")


def _in_windows(read, blocks):
    """``read(b)`` for each of ``blocks`` in order, computed :func:`kernel_threads` at a time
    side by side (a generator: one window of blocks held at a time).  The hash of the
    distances computed one block after another on its own thread took 2.7 s at n = 16,000
    (two cores), ~10 ns an entry, of which the sha256 takes 4: its blocks on the kernel threads
    leave it the hash's own time."""
    count = kernel_threads()
    for a in range(0, len(blocks), count):
        yield from parallel_map(read, blocks[a:a + count])
