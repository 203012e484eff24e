"""How much memory a path or a verification needs, how much the machine gives, and the refusal
when the first exceeds the second, before anything large is allocated.

The estimate is one function per task (:func:`path_bytes`, :func:`verify_bytes`): an engineer who
changes what a run keeps (blocked kernels, a smaller cache) updates it here.  Numpy only (the
verifier uses it).  What the machine gives (:func:`available_bytes`) and how bytes are written
(:func:`human`) are :mod:`approxpath.memory_available`'s, imported here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import InputError
from .memory_available import available_bytes, human

__all__ = ["Estimate", "path_bytes", "verify_bytes", "exact_bytes", "check_exact_fits", "check_problem_fits",
           "available_bytes", "check_fits", "human", "kernels_mode", "KERNEL_MODES", "libsvm_cache_bytes",
           "split_worker_bytes", "solve_kernel_fits"]

#: Bytes of one dense n x n float64 array, in units of which the parts below are counted.
_ENTRY = 8
# The libraries a run imports (numpy, scipy, cvxpy, the solvers): measured 0.21-0.29 GB of
# resident memory before any data (kernel_ridge at n = 500; kernel_svm at n = 2000).
_LIBRARIES = 300e6
# The squared distances: D itself (written in place since 0.5.0; squareform(pdist) added a
# transient half), and half an array more kept as headroom for what the parts here do not count
# (pieces, class sums, the threads' blocks): the SVM at n = 16,000 peaked at 7.05 GB against an
# estimate of 8.2 GB, which would be 7.2 GB without it
_DISTANCES = 1.5
# The lattice index of binary/integer features (uint8, one byte per entry), counted always: it is
# only known after the distances are computed.
_LATTICE = 1 / _ENTRY
# Working set of an exact solve, in n x n float64 arrays beyond the cached kernel it reads:
# libSVM on the precomputed kernel reads the cached kernel and keeps its own 500 MB row cache
# (problems/kernel_svm/libsvm.py); a Cholesky solve factors one copy; a conic solve (CVXPY,
# Clarabel, SCS) holds the quadratic form in sparse form (12 bytes per entry), its KKT system and
# factor: measured 12 arrays' worth for klasso's Gram QP at n = 2000 (24 in all, 12 of them
# the kernel cache), taken as the bound for every conic backend.  The SVM's SMO reads the cached
# kernel (in the blocked mode, entries computed from rows of the distances) and keeps O(n)
# vectors; libSVM, its fallback, is counted with its cache (the safe side: it is not loaded
# while SMO's candidates are accepted, the first solve's from the cold start included).
_SOLVER = {"smo": 0.0, "libsvm": 0.0, "cholesky": 2.0}
# backends whose estimate counts libSVM's row cache (SMO: its fallback)
_LIBSVM_CACHED = ("smo", "libsvm")
_SOLVER_CONIC = 12.0
_LIBSVM_CACHE = 500e6
# The official libSVM binding copies the kernel into its nodes up to this many samples
# (problems/kernel_svm/libsvm.py, _OFFICIAL_COLD_MAX_N)
_OFFICIAL_NODES_MAX_N = 3200
# Refuse when the estimate exceeds this share of what is available: the estimate counts the
# large arrays only (the pieces, restorations and bounds add O(n) per piece).
_HEADROOM = 0.9
#: How kernel products are computed (:func:`kernels_mode`), from the most memory to the least.
KERNEL_MODES = ("dense", "distances", "blocked")
# The blocked mode (approxpath.compute.blocked), per sample, in bytes: the class sums a search
# caches (problems/kernel_svm/cache.py: 512 groups of 3 arrays of n x 4 floats, 49 kB per
# sample) and the pieces and anchors of a path (two n-vectors each; a few hundred pieces at
# eps = 0.125: counted as 1000, 16 kB per sample).
_BLOCKED_SUMS = 512 * 3 * 4 * _ENTRY
_BLOCKED_PIECES = 1000 * 2 * _ENTRY
# libSVM's own kernel cache in the blocked mode: at least this much (its working set for the
# gradient reconstruction and shrinking is O(n); 100 MB is libSVM's default x 1000 rows), at
# most the whole kernel it caches (float32 columns: 4 n^2 bytes) plus 10 % for its bookkeeping,
# and else half of what the budget leaves (the rest covers what the estimate does not count).
_LIBSVM_CACHE_MIN = 100e6
# The libraries of the blocked mode, which never imports the conic solvers or CVXPY: numpy,
# scipy, scikit-learn and approxpath measured 125 MB of peak resident memory (cvxpy and
# clarabel add 17 MB).
_LIBRARIES_BLOCKED = 150e6
_LIBSVM_CACHE_SLACK = 1.1
# A worker of split kernel products (approxpath.compute.distributed) keeps the terms of a task until the
# running sum of the rows before it arrives: per row, (order + 1) x p / 16 rows of n floats
# (blocks of 16 rows; kernel_svm: order 2, p = 4 columns for a dual's two parents: 0.75).  A
# worker may run ahead of the chain by its whole share (n = 8000, 2 workers on a loaded machine:
# peaks 0.58-0.62 GiB against 0.41 GiB for rows, libraries and 3 waiting tasks), so all of its
# rows count.  (Since the tasks add their blocks' terms as they go they hold running sums of
# (order + 1) p n floats instead, far less; kept on the safe side until a worker's peak is
# measured again.)
_SPLIT_TERMS = 0.75
# The exact paths (approxpath.exact), in n x n float64 arrays: peak resident memory of
# `approxpath exact klasso` on sinc data at n = 1000, 2000 and 3000 grows as 7.8 arrays for the
# lambda-path (the distances, the kernel, the factor and its updates) and 14-15.5 for the
# kernel path (the kernel and its derivatives in t, the bordered systems); the libraries 50-60 MB
# (no conic solver is imported), counted as the others' 300 MB.
_EXACT_ARRAYS = {"lam": ("lambda-path", 8.0), "bandwidth": ("kernel path", 16.0)}


@dataclass(frozen=True)
class Estimate:
    """Bytes a task needs, by part.

    Attributes
    ----------
    parts : tuple of (str, float)
        What needs the memory and how many bytes.
    """

    parts: tuple

    @property
    def total(self):
        """Bytes in all."""
        return float(sum(b for _, b in self.parts))

    def describe(self):
        """``"distances 3.2 GB, 2 cached kernels 6.4 GB, ..."``."""
        return ", ".join(f"{what} {human(b)}" for what, b in self.parts if b > 0)


def _solver_bytes(n, backend):
    """The working set of an exact solve by ``backend`` beyond the cached kernel it reads."""
    square = float(_ENTRY) * n * n
    cache = _libsvm_row_cache(n) if backend in _LIBSVM_CACHED else 0.0
    # the official binding's copy of the kernel (16 bytes an entry) up to the n it is used for
    cache += 16.0 * n * n if backend in _LIBSVM_CACHED and n <= _OFFICIAL_NODES_MAX_N else 0.0
    return _SOLVER.get(backend, _SOLVER_CONIC) * square + cache


def _dense_path_parts(n, backends, processes=1):
    """The parts of a dense path (stored distances, a kernel cache) in one of ``processes`` that
    share the kernel caches' memory; the exact solver's is the largest of ``backends`` (those
    the solves may try first: one is loaded at a time, the others' memory returned)."""
    square = float(_ENTRY) * n * n
    solver = max(_solver_bytes(n, name) for name in backends)
    from .compute.caches import kept_kernels

    # the KernelCache's own sizing rule, without its lattice exception (the lattice is not known
    # before the distances are); a new kernel overwrites the one it evicts, so no spare (n = 16000:
    # 2 kernels of 2 GB and the distances, 7.15 GiB peak with libSVM's cache and the libraries)
    k = kept_kernels(n, processes)
    return (("distances", (_DISTANCES + _LATTICE) * square), (f"{k} kernels (cache)", k * square),
            (f"exact solver ({', '.join(backends)})", solver), ("libraries", _LIBRARIES))


def _dense_verify_parts(n):
    square = float(_ENTRY) * n * n
    return (("distances", (_DISTANCES + _LATTICE) * square), ("a kernel", square), ("libraries", _LIBRARIES / 3))


def _fits(total, have):
    return have is None or total <= _HEADROOM * have


def _blocked_fixed(n, d):
    """The parts of the modes without whole kernels besides libSVM's cache and the distances:
    the libraries, the data (X and libSVM's copy), the row blocks of a product (a few of 2**18
    bytes, :mod:`approxpath.compute.kernels`; 2**21 entries while the distances are hashed), the cached
    class sums and the pieces."""
    return (("libraries", _LIBRARIES_BLOCKED), ("data (2 copies)", 2.0 * _ENTRY * n * d),
            ("row blocks", 2.0 * _ENTRY * (1 << 21)), ("cached class sums", float(_BLOCKED_SUMS) * n),
            ("pieces", float(_BLOCKED_PIECES) * n))


def split_worker_bytes(rows, n, d):
    """An :class:`Estimate` of what one Dask worker of split kernel products holds
    (:mod:`approxpath.compute.distributed`): its ``rows`` rows of :math:`D` (``n`` columns; ``8 rows n`` bytes), the
    terms of its tasks waiting for the running sum (at most all of its rows' terms; 0.75 times the rows' bytes),
    the data (``d`` features; ``8 n d``), row blocks (``2 * 8 * 2**21``) and the libraries (150 MB)."""
    share = float(_ENTRY) * rows * n
    return Estimate((("rows of the distances", share), ("waiting terms", _SPLIT_TERMS * share),
                     ("data", float(_ENTRY) * n * d), ("row blocks", 2.0 * _ENTRY * (1 << 21)),
                     ("libraries", _LIBRARIES_BLOCKED)))


def _verify_blocked(n, d):
    # row blocks: two, and two more per kernel thread (each thread's block and its window; measured:
    # 142 MB at one thread, 178 at two, 250 at four, up to 360 at eight and 363 at sixteen, where
    # two blocks in all were counted)
    from .compute.parallelism import kernel_threads

    blocks = 2.0 * (1 + kernel_threads())
    return (("data", float(_ENTRY) * n * d), ("row blocks", blocks * _ENTRY * (1 << 21)), ("libraries", _LIBRARIES / 3))


def _stored_distances(n):
    # D and the headroom of _DISTANCES (no lattice index: these modes sum without histograms)
    return (("distances", _DISTANCES * _ENTRY * n * n),)


def kernels_mode(n, search=True, blocked_ok=True):
    """How a kernel bound on ``n`` samples gets its kernel products: ``"dense"`` for one that
    needs whole kernels (not ``blocked_ok``); for one that can do without them, given the memory
    available (:func:`available_bytes`, ``APPROXPATH_MEMORY`` included): ``"dense"`` (stored
    distances and, in a search, cached kernels) when the dense mode's arrays fit (a path's with
    the libSVM backend if ``search``, else a verification's), else ``"distances"`` (the
    distances stored, no kernel) when those fit with libSVM's smallest cache, else
    ``"blocked"`` (nothing n x n: :class:`~approxpath.compute.blocked.BlockedKernels`).  The
    environment variable ``APPROXPATH_KERNELS`` (one of the three, :data:`KERNEL_MODES`; read only where
    ``blocked_ok``) overrides the choice; any other value is refused (:class:`InputError`)."""
    if not blocked_ok:
        return "dense"
    forced = os.environ.get("APPROXPATH_KERNELS")
    if forced:
        if forced not in KERNEL_MODES:
            raise InputError(f"APPROXPATH_KERNELS must be one of {', '.join(KERNEL_MODES)}; got {forced!r}")
        return forced
    n = int(n)
    have = available_bytes()[0]
    dense = _dense_path_parts(n, ("libsvm",)) if search else _dense_verify_parts(n)
    if _fits(Estimate(dense).total, have):
        return "dense"
    rest = (_blocked_fixed(n, 0) + (("libSVM kernel cache", min(_LIBSVM_CACHE_MIN, 4.0 * n * n)),) if search
            else _verify_blocked(n, 0))
    return "distances" if _fits(Estimate(_stored_distances(n) + rest).total, have) else "blocked"


def libsvm_cache_bytes(n, d, stored=False):
    """The kernel cache libSVM gets without whole kernels (bytes): its whole kernel (float32) if
    the budget allows, else half of what the budget leaves beyond :func:`_blocked_fixed` (and
    the distances if ``stored``, mode ``"distances"``) but at least 100 MB, on ``n`` samples and ``d`` features:
    ``min(W, max(100e6, (0.9 A - F) / 2))`` with ``W = 1.1 * 4 n^2`` (the whole kernel and 10 % for its
    bookkeeping), ``A`` the available bytes (:func:`available_bytes`; ``W`` where ``A`` is unknown) and ``F`` the
    fixed parts.  Never more than ``W``: below 100 MB for a small n."""
    whole = _LIBSVM_CACHE_SLACK * 4.0 * n * n
    have = available_bytes()[0]
    if have is None:
        return whole
    left = _HEADROOM * have - Estimate(_blocked_fixed(n, d) + (_stored_distances(n) if stored else ())).total
    return float(min(whole, max(_LIBSVM_CACHE_MIN, 0.5 * left)))


def _libsvm_row_cache(n):
    """libSVM's row cache on a precomputed kernel: up to its size or to the whole kernel it
    caches (float32 columns)."""
    return min(_LIBSVM_CACHE, _LIBSVM_CACHE_SLACK * 4.0 * n * n)


def _solve_kernel(n):
    """One kernel for the exact solves of the ``"distances"`` mode and libSVM's row cache on it
    (filled up to its size or to the whole kernel in float32)."""
    return (("a kernel for the exact solves", float(_ENTRY) * n * n),
            ("libSVM row cache", _libsvm_row_cache(n)))


def solve_kernel_fits(n, d):
    """Whether a path in the ``"distances"`` mode also holds one kernel :math:`\\exp(-tD)` (n x n)
    for its exact solves, formed anew at each solve: libSVM then reads its entries instead of
    computing its own from the features (n = 8000, 20 features: 0.6-0.9 against 1.5-3.1 CPU s a
    solve): whether the distances, the fixed parts of :func:`_blocked_fixed` (``d`` features), the kernel and
    libSVM's row cache on it take at most 90 % of the available bytes (True where unknown)."""
    have = available_bytes()[0]
    parts = _stored_distances(n) + _blocked_fixed(n, d) + _solve_kernel(n)
    return _fits(Estimate(parts).total, have)


def path_bytes(problem, workers=1):
    """An :class:`Estimate` of the memory a path of ``problem`` needs: for a problem on a kernel
    :math:`\\exp(-tD)` (anything with ``kernels``), per process the distances, the kernel cache,
    the exact solver's working set (the largest of the backends a solve tries first: the
    problem's ``first_backends`` where it has them, else the first of its ``backends``) and the
    libraries; ``workers`` processes each build their own
    (the kernel caches sharing one budget, :func:`~approxpath.compute.caches.share_budget`).
    Without whole kernels (:func:`kernels_mode`, a bound with ``blocked_ok``): the data, row
    blocks, the cached class sums, the pieces, libSVM's own kernel cache
    (:func:`libsvm_cache_bytes`) and, in the ``"distances"`` mode, the distances.

    Parameters
    ----------
    problem : approxpath.Problem
    workers : int
        Worker processes besides this one (0 or 1: none).
    """
    n = int(problem.n)
    if not hasattr(type(problem), "kernels"):
        return Estimate((("libraries", _LIBRARIES),))
    # the backends a solve may try first (their fallbacks run only where these miss)
    first = getattr(problem, "first_backends", None) or tuple(getattr(problem, "backends", ()))[:1] or ("clarabel",)
    mode = kernels_mode(n, blocked_ok=getattr(problem.bound, "blocked_ok", False))
    copies = 1 + (workers if workers > 1 else 0)
    if mode == "dense":
        per_process = _dense_path_parts(n, first, copies)
    else:
        d, stored = int(problem.X.shape[1]), mode == "distances"
        per_process = ((_stored_distances(n) if stored else ()) + _blocked_fixed(n, d)
                       + (_solve_kernel(n) if stored and solve_kernel_fits(n, d) else
                          (("libSVM kernel cache", libsvm_cache_bytes(n, d, stored)),)))
    if copies == 1:
        return Estimate(per_process)
    return Estimate(tuple((f"{what} x {copies} processes", copies * b) for what, b in per_process))


def check_problem_fits(problem, workers=1):
    """:func:`check_fits` of :func:`path_bytes`: what a path, a surface or a selection without
    paths (their exact optima, cached kernels and distances are a path's) needs of ``problem``'s
    data, refused with the estimate before anything large is allocated."""
    check_fits(path_bytes(problem, workers), f"{problem.name} with n = {problem.n}",
               "use fewer samples, fewer workers, or a machine with more memory")


def exact_bytes(n, parameter):
    """An :class:`Estimate` of the memory of an exact kLASSO path (:mod:`approxpath.exact`) on
    ``n`` samples over ``parameter`` (``"lam"``: the lambda-path; ``"bandwidth"``: the kernel
    path)."""
    what, arrays = _EXACT_ARRAYS[parameter]
    return Estimate(((f"the {what}'s n x n arrays", arrays * float(_ENTRY) * n * n), ("libraries", _LIBRARIES)))


def check_exact_fits(n, parameter):
    """:func:`check_fits` of :func:`exact_bytes`: an exact kLASSO path refused with its estimate
    before its n x n arrays exist."""
    check_fits(exact_bytes(n, parameter), f"the exact {_EXACT_ARRAYS[parameter][0]} with n = {n}",
               "use fewer samples or a machine with more memory")


def verify_bytes(n, stored_bytes, blocked_ok=False, d=0):
    """An :class:`Estimate` of the memory :func:`approxpath.verify` needs for a certificate whose
    arrays take ``stored_bytes`` on data of ``n`` samples: the arrays, the distances and one
    kernel (the bounds use products with blocks of it, the point gaps of some problems a whole
    kernel); for a problem whose bound needs no whole kernel (``blocked_ok``, on ``d``
    features) where that does not fit (:func:`kernels_mode`), the arrays, the data, row blocks
    and (mode ``"distances"``) the distances."""
    arrays = (("certificate arrays", float(stored_bytes)),)
    mode = kernels_mode(n, search=False, blocked_ok=blocked_ok)
    if mode == "dense":
        return Estimate(arrays + _dense_verify_parts(n))
    return Estimate(arrays + (_stored_distances(n) if mode == "distances" else ()) + _verify_blocked(n, d))


def check_fits(estimate, task, fix, available=None):
    """:class:`~approxpath.errors.InputError` when ``estimate`` exceeds what is available.

    Parameters
    ----------
    estimate : Estimate
    task : str
        What needs it (``"kernel_svm with n = 20000"``).
    fix : str
        What the user can do (``"use fewer samples"``).
    available : (float, str), optional
        ``(bytes, what limits them)`` elsewhere (a Dask worker's); by default :func:`available_bytes`.
    """
    have, what = available_bytes() if available is None else available
    if have is None or estimate.total <= _HEADROOM * have:
        return
    raise InputError(f"{task} needs about {human(estimate.total)} of memory ({estimate.describe()}), more than "
                     f"{_HEADROOM:.0%} of the {human(max(have, 0.0))} available under {what}: {fix}")
