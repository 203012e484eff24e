"""How much memory a path or a verification needs, how much the machine gives, and the refusal
when the first exceeds the second, before anything large is allocated.

The estimate is one function per task (:func:`path_bytes`, :func:`verify_bytes`): an engineer who
changes what a run keeps (blocked kernels, a smaller cache) updates it here.  Numpy only (the
verifier uses it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import InputError

__all__ = ["Estimate", "path_bytes", "verify_bytes", "available_bytes", "check_fits", "human"]

#: Bytes of one dense n x n float64 array, in units of which the parts below are counted.
_ENTRY = 8
# The libraries a run imports (numpy, scipy, cvxpy, the solvers): measured 0.21-0.29 GB of
# resident memory before any data (kernel_ridge at n = 500; kernel_svm at n = 2000).
_LIBRARIES = 300e6
# The squared distances: D itself, and pdist's condensed half (n^2 / 2 entries) while squareform
# copies it out (a transient of half an n x n array).
_DISTANCES = 1.5
# The lattice index of binary/integer features (uint8, one byte per entry), counted always: it is
# only known after the distances are computed.
_LATTICE = 1 / _ENTRY
# Working set of an exact solve, in n x n float64 arrays beyond the cached kernel it reads:
# libSVM on the precomputed kernel reads the cached kernel and keeps its own 500 MB row cache
# (problems/kernel_svm/libsvm.py); a Cholesky solve factors one copy; a conic solve (CVXPY,
# Clarabel, SCS) holds the quadratic form in sparse form (12 bytes per entry), its KKT system and
# factor: measured 12 arrays' worth for klasso's Gram QP at n = 2000 (24 in all, 12 of them
# the kernel cache), taken as the bound for every conic backend.
_SOLVER = {"libsvm": 0.0, "cholesky": 2.0}
_SOLVER_CONIC = 12.0
_LIBSVM_CACHE = 500e6
# Refuse when the estimate exceeds this share of what is available: the estimate counts the
# large arrays only (the pieces, restorations and bounds add O(n) per piece).
_HEADROOM = 0.9


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


def human(nbytes):
    """``nbytes`` as ``"1.5 GB"`` (decimal units, as ``free -h --si``)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} B"


def _cached_kernels(n):
    """Kernels a :class:`~approxpath.kernels.KernelCache` holds: those it keeps (its own sizing
    rule, without the lattice exception: the lattice is not known before the distances are) and
    the evicted one it keeps as a buffer for the next (n = 20000: 2 + 1 kernels of 3.2 GB, with
    the distances the 15 GB a run was seen to take)."""
    from .kernels import CACHE_BYTES, _CACHE_MAX

    return int(min(_CACHE_MAX, max(2, CACHE_BYTES // max(_ENTRY * n * n, 1)))) + 1


def path_bytes(problem, workers=1):
    """An :class:`Estimate` of the memory a path of ``problem`` needs: for a problem on a kernel
    :math:`\\exp(-tD)` (anything with ``kernels``), per process the distances, the kernel cache,
    the exact solver's working set and the libraries; ``workers`` processes each build their own.

    Parameters
    ----------
    problem : approxpath.Problem
    workers : int
        Worker processes besides this one (0 or 1: none).
    """
    n = int(problem.n)
    if not hasattr(type(problem), "kernels"):
        return Estimate((("libraries", _LIBRARIES),))
    square = float(_ENTRY) * n * n
    backend = problem.backends[0] if getattr(problem, "backends", ()) else "clarabel"
    solver = _SOLVER.get(backend, _SOLVER_CONIC) * square + (_LIBSVM_CACHE if backend == "libsvm" else 0.0)
    k = _cached_kernels(n)
    per_process = (("distances", (_DISTANCES + _LATTICE) * square), (f"{k} kernels (cache)", k * square),
                   (f"exact solver ({backend})", solver), ("libraries", _LIBRARIES))
    copies = 1 + (workers if workers > 1 else 0)
    if copies == 1:
        return Estimate(per_process)
    return Estimate(tuple((f"{what} x {copies} processes", copies * b) for what, b in per_process))


def verify_bytes(n, stored_bytes):
    """An :class:`Estimate` of the memory :func:`approxpath.verify` needs for a certificate whose
    arrays take ``stored_bytes`` on data of ``n`` samples: the arrays, the distances and one
    kernel (the bounds use products with blocks of it, the point gaps of some problems a whole
    kernel)."""
    square = float(_ENTRY) * n * n
    return Estimate((("certificate arrays", float(stored_bytes)), ("distances", (_DISTANCES + _LATTICE) * square),
                     ("a kernel", square), ("libraries", _LIBRARIES / 3)))


def _meminfo_available():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024, "free memory (MemAvailable)"
    except OSError:
        pass
    return None


def _cgroup_available():
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as fh:
            used = float(fh.read().strip())
        return float(limit) - used, f"the container's memory limit ({human(float(limit))})"
    except (OSError, ValueError):
        return None


def _rlimit_available():
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Unix
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    used = 0.0
    try:  # the address space already taken (RLIMIT_AS counts virtual memory)
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    used = float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(soft) - used, f"the address-space limit (ulimit -v {soft // 1024})"


def _override():
    value = os.environ.get("APPROXPATH_MEMORY")
    if not value:
        return None
    try:
        return float(value), "APPROXPATH_MEMORY"
    except ValueError:
        raise InputError(f"APPROXPATH_MEMORY must be a number of bytes (e.g. 8e9); got {value!r}") from None


def available_bytes():
    """``(bytes, what limits them)``: the least of the free memory, a container's memory limit,
    the process's address-space limit (``ulimit -v``) net of what is in use, and the environment
    variable ``APPROXPATH_MEMORY`` (bytes, e.g. ``8e9``: a cap a user sets below what the machine
    reports); ``(None, None)`` where none can be read."""
    found = [a for a in (_meminfo_available(), _cgroup_available(), _rlimit_available(), _override()) if a is not None]
    if not found:
        return None, None
    return min(found)


def check_fits(estimate, task, fix):
    """:class:`~approxpath.errors.InputError` when ``estimate`` exceeds what is available.

    Parameters
    ----------
    estimate : Estimate
    task : str
        What needs it (``"kernel_svm with n = 20000"``).
    fix : str
        What the user can do (``"use fewer samples"``).
    """
    have, what = available_bytes()
    if have is None or estimate.total <= _HEADROOM * have:
        return
    raise InputError(f"{task} needs about {human(estimate.total)} of memory ({estimate.describe()}), more than "
                     f"the {human(max(have, 0.0))} available under {what}: {fix}")
