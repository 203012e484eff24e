"""The kernel products of one path split across the workers of a Dask cluster.

:class:`SplitKernels` answers :meth:`~approxpath.compute.kernels.Kernels.products`
(:math:`E_x C`, :math:`(D\\circ E_x)C`, :math:`(D^2\\circ E_x)C` with :math:`E_x = \\exp(-xD)`)
with the rows of :math:`D` held by the workers of a ``dask.distributed.Client``: the data ``X``
is scattered to every worker once, and each worker computes and keeps its chunks of rows of
:math:`D` (dealt round-robin), so the cluster holds the n x n distances that one machine may
not.  A chunk is one run of :func:`~approxpath.compute.kernels.product_chunks` over all n rows
(2,048 rows, 1,024 above 8,192 samples): the rows whose block terms :math:`C_b^\\top E_b`,
:math:`C_b^\\top (D_b\\circ E_b)`, ... (:func:`~approxpath.compute.kernels.block_products`, the
blocks of :meth:`~approxpath.compute.kernels.Kernels.products`) one process sums from zero, block
by block, before adding the runs' sums in order.  So a product over all rows is one task per
run, on the worker that holds it, summing its blocks in that order, and the caller adds the
runs' sums in order.  A product over some rows (coefficients of rows anywhere) cuts a run where
its blocks' first rows change chunk, and the running sum of the run travels from task to task
in the order of the blocks (a block's rows outside its task's chunk are computed from ``X``).
The result is the single-process blocked mode's
(:class:`~approxpath.compute.blocked.BlockedKernels`), bit for bit, whatever the number of
workers or the order in which they finish: the same entries, the same terms, the same order of
additions; certificates and rounding allowances are unchanged.  (Bit for bit on a cluster whose
workers run the same numpy and BLAS on the same kind of CPU; elsewhere a worker's exp or matrix
product may round a last bit differently, within the allowances as for a verifier's own BLAS.)

Per product, with ``k`` rows of coefficients and ``p`` columns, ``8 k (p + 1)`` bytes go to the
workers (coefficients, row indices) and ``8 (order + 1) p n`` bytes come back per run (its sum),
and hop once more per cut of a run (a product over some rows); the rows of :math:`D` are never
shipped after they are computed.  The exact solves stay in the calling process, as in the blocked mode (SMO
reading kernel rows computed there from ``X``, its first gradient one product of the workers;
libSVM on its own kernel), and so does the one pass over :math:`D` that hashes it for the
certificate.  Search side: the verifier never imports this module.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import numpy as np

from .blocked import BlockedKernels
from .executors import check_executor, result, submit
from ..errors import InputError
from ..kernel_families import cross_distances
from .kernels import block_products, gaussian, product_chunks, product_step, threads

__all__ = ["SplitKernels", "split_products", "split_refusal"]


class SplitKernels(BlockedKernels):
    """:class:`~approxpath.compute.blocked.BlockedKernels` whose products run on Dask workers
    that hold the rows of :math:`D` (see the module).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data (not a precomputed :math:`D`: the workers compute their rows from ``X``).
    family : str
        The kernel family (:mod:`approxpath.kernel_families`).
    weights : sequence of float, optional
        The feature weights of ``family="ard"``.
    client : dask.distributed.Client
        Its workers at construction hold the rows; one thread per worker is enough (a task runs
        its elementwise work on one thread, and Dask starts worker processes with one BLAS
        thread: run one worker per core).

    Attributes
    ----------
    mode : str
        ``"split"`` (no whole kernel here: :attr:`approxpath.bound.KernelBound.blocked` holds).
    workers : list of str
        The workers' addresses, in the order chunks are dealt to them.
    chunk : int
        Rows of :math:`D` per chunk: a run of :func:`~approxpath.compute.kernels.product_chunks`
        over all rows.

    Raises
    ------
    InputError
        A precomputed :math:`D`, a cluster without workers, or a worker whose share of the
        distances does not fit its memory (:func:`approxpath.memory.split_worker_bytes`).
    """

    def __init__(self, X, family, weights, client):
        if family == "precomputed":
            raise InputError("split kernel products compute the rows of D on the workers from the data: "
                             "not for kernel='precomputed'")
        super().__init__(X, family, weights)
        self.mode = "split"
        self._client = client
        self.workers = sorted(client.nthreads())
        if not self.workers:
            raise InputError("split kernel products need a Dask cluster with workers; this client has none")
        n, count = self.n, len(self.workers)
        self._step = product_step(n)
        # (chunks of whole product blocks, at least two per worker, made a product a chain of
        # scheduler round trips: at n = 4000 on 2 workers the certifier took 20 s, one process 4-5 s)
        self.chunk = len(product_chunks(n)[0])
        starts = range(0, n, self.chunk)
        self._owners = [self.workers[c % count] for c in range(len(starts))]
        self._check_memory()
        # placement is a preference (allow_other_workers): where an owner is gone, Dask computes
        # its chunk again elsewhere instead of waiting for it
        self._X = client.scatter(self.X, broadcast=True, hash=False)
        self._held = [client.submit(_rows_of_D, self._X, a, min(a + self.chunk, n), family, weights,
                                    workers=[w], allow_other_workers=True, pure=False)
                      for a, w in zip(starts, self._owners)]

    def _check_memory(self):
        from ..memory import check_fits, split_worker_bytes

        n = self.n
        rows = Counter()
        for c, w in enumerate(self._owners):
            rows[w] += min(self.chunk, n - c * self.chunk)
        available = self._client.run(_worker_memory)
        for w, k in rows.items():
            check_fits(split_worker_bytes(k, n, self.X.shape[1]), f"split kernel products (n = {n}) on "
                       f"the Dask worker {w}", "add workers (or memory) to the cluster", tuple(available[w]))

    def products(self, x, C, rows=None, order=2):
        """As :meth:`approxpath.compute.kernels.Kernels.products` (the same numbers), computed by the
        workers: per run of :func:`~approxpath.compute.kernels.product_chunks`, tasks of
        consecutive blocks whose first rows lie in one chunk (one task for a product over all
        rows), on the worker that holds the chunk, each adding its blocks' terms to the run's
        running sum in their order; the runs' sums added in their order here."""
        C = np.asarray(C, dtype=float)
        rows = None if rows is None else np.asarray(rows)
        k, n = C.shape[0], self.n
        p = 1 if C.ndim == 1 else C.shape[1]
        sums = []
        for run in product_chunks(k):
            total = None
            for a, b in self._tasks(rows, run):
                first = a if rows is None else int(rows[a])
                c = first // self.chunk
                where = dict(workers=[self._owners[c]], allow_other_workers=True, pure=False)
                idx = None if rows is None else rows[a:b]
                # the rows of C in C's own memory order (Fortran order stays Fortran order): a
                # matrix product's last bits depend on its operands' order
                Cab = np.array(C[a:b], order="K")
                total = submit(self._client, _accumulate, total, self._held[c], c * self.chunk, self._X, self.family,
                               self.weights, x, Cab, first, idx, order, self._step, **where)
            sums.append(total)
        acc = np.zeros((order + 1, p, n))
        for i, total in enumerate(sums):  # (the first sum is acc exactly: 0 + s = s)
            acc = result(total) if i == 0 else acc + result(total)
        return tuple(m.T.reshape((n,) + C.shape[1:]) for m in acc)

    def _tasks(self, rows, run):
        """``(a, b)``: the coefficient rows of ``run`` (a range starting at a multiple of the
        block size) cut into runs ``[a, b)`` at multiples of the block size whose blocks' first
        rows lie in one chunk."""
        starts = np.arange(run.start, run.stop, self._step)
        chunks = (starts if rows is None else rows[starts]) // self.chunk
        cuts = np.flatnonzero(np.diff(chunks)) + 1
        ends = [int(starts[e]) for e in cuts] + [run.stop]
        return zip([run.start] + ends[:-1], ends) if len(run) else ()

    def close(self):
        """Let the workers drop the rows they hold (the provider cannot be used after): the
        futures are released, not cancelled, so that nothing that still depends on them fails."""
        self._X, self._held = None, []


def split_refusal(problem):
    """Why the kernel products of ``problem`` cannot run on Dask workers holding rows of the
    distances (:func:`split_products`; a phrase naming the problem or its kernel), or None when they can: its bounds
    need kernel products only (``blocked_ok``: ``kernel_svm``) and its kernel is gaussian or ard, since with the
    distances on the workers the exact solves run on libSVM's own (gaussian) kernel."""
    bound = problem.bound
    if not getattr(bound, "blocked_ok", False):
        return (f"{problem.name} forms whole kernels (split products serve bounds that need kernel products "
                "only: kernel_svm)")
    if bound.family not in ("gaussian", "ard"):
        return (f"kernel={bound.family!r} needs its n x n kernel in this process (split products serve the "
                "gaussian and ard kernels)")
    return None


@contextmanager
def split_products(problem, client):
    """Inside the ``with`` block, the kernel products of ``problem`` run on the workers of
    ``client`` (:class:`SplitKernels`); the rows of :math:`D` are released after it.

    Parameters
    ----------
    problem : approxpath.Problem
        A problem whose bounds need kernel products only (``blocked_ok``: ``kernel_svm``).
    client : dask.distributed.Client
    """
    refusal = split_refusal(problem)
    if refusal is not None:
        raise InputError(f"split_products=True: {refusal}; without it the executor's workers certify the "
                         "segments between exact solves")
    bound = problem.bound
    check_executor(client)
    if not all(hasattr(client, name) for name in ("scatter", "submit", "run", "nthreads")):
        raise InputError("split_products=True needs executor=dask.distributed.Client(...) (its workers hold the rows "
                         f"of D); got {type(client).__name__}")
    kernels = SplitKernels(problem.X, bound.family, bound.options["feature_weights"], client)
    try:
        with bound.kernels_from(kernels):
            yield kernels
    finally:
        kernels.close()


def _aligned(a):
    """``a``, or a copy of it (same layout) if its data is not aligned for its type: Dask may hand
    a task arrays at any byte offset of a message, and numpy multiplies unaligned matrices
    without BLAS, summing in another order (measured: last bits differ)."""
    return a if a.flags.aligned else a.copy(order="K")


def _rows_of_D(X, a, b, family, weights):
    """Rows ``a:b`` of :math:`D` (a worker's chunk): ``cross_distances``, whose entries are those
    of the blocked mode's row blocks bit for bit."""
    X = _aligned(X)
    return cross_distances(X[a:b], X, family, weights)


def _accumulate(total, held, start, X, family, weights, x, C, first, idx, order, step):
    """``total`` (None: zeros), shape (order + 1, p, n), plus the terms of one task's blocks in
    their order, as :meth:`~approxpath.compute.kernels.Kernels.products` adds a run's blocks:
    block ``i`` is rows ``first + i step ...`` of :math:`D` (or ``idx[i step: ...]``), read from
    ``held`` (rows ``start ...``) where it lies in it, else computed from ``X``; ``C`` (m,) or
    (m, p) holds their coefficients."""
    held, X, C = _aligned(held), _aligned(X), _aligned(C)
    C2 = C[:, None] if C.ndim == 1 else C  # as Kernels.products: the same operands, the same bits
    m, n = C2.shape[0], X.shape[0]
    acc = np.zeros((order + 1, C2.shape[1], n)) if total is None else _aligned(total).copy()
    # every block in the same buffers: Dask starts worker processes with glibc's
    # MALLOC_TRIM_THRESHOLD_=65536, under which each fresh block-sized array is mapped and
    # faulted in anew (measured at n = 2000: a chunk's terms 10.1 ms in a worker against 3.5 ms
    # in a plain process; 5.3 against 3.0 ms with these buffers)
    Eb, Tb, Rb = (np.empty((min(step, m), n)) for _ in range(3))
    out = np.empty_like(acc)
    # one kernel thread; BLAS as the worker has it (Dask's worker processes: one thread): a
    # threadpoolctl limit per task was measured at 9.5 ms, more than a chunk's terms (7.8 ms at
    # n = 4000, 512 rows), and the terms' small products do not use BLAS threads anyway
    with threads(1):
        for a in range(0, m, step):
            if idx is None:
                lo, hi = first + a - start, first + min(a + step, m) - start
                Db = held[lo:hi] if hi <= held.shape[0] else cross_distances(X[lo + start:hi + start], X, family,
                                                                             weights)
            else:
                local = idx[a:a + step] - start
                inside = local.min() >= 0 and local.max() < held.shape[0]  # (so "clip" never clips)
                Db = (np.take(held, local, axis=0, out=Rb[:local.size], mode="clip") if inside
                      else cross_distances(X[local + start], X, family, weights))
            r = Db.shape[0]
            E = gaussian(Db, x, out=Eb[:r])
            acc += block_products(C2[a:a + step].T, Db, E, order, out=out, T=Tb[:r])
    return acc


def _worker_memory(dask_worker):
    """``(bytes, what limits them)`` on a Dask worker: :func:`~approxpath.memory.available_bytes`,
    or less where the worker would spill its data to disk (its ``memory_limit`` times its
    target fraction)."""
    from ..memory import available_bytes, human

    have, what = available_bytes()
    manager = getattr(dask_worker, "memory_manager", None)
    limit = getattr(manager, "memory_limit", None)
    if limit:
        spill = float(limit) * (getattr(manager, "memory_target_fraction", None) or 1.0)
        if have is None or spill < have:
            return spill, f"the worker's spill threshold (memory_limit {human(float(limit))} x target fraction)"
    return have, what
