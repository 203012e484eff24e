"""How many threads the kernel work and the BLAS get: the one place that decides.

Two kinds of threads compete for the cores of a process: the *kernel threads* (our pool, which
runs the entrywise work and the per-block products of a kernel pass: numpy's ufuncs release
the GIL) and the BLAS library's own threads (OpenBLAS, MKL).  Each alone can use every core;
both at once oversubscribe them, and OpenBLAS's idle threads spin (system time): on a 2-core
machine its default threads made the small factorizations of the exact paths and active-set
solvers 10-50x slower (Householder QR of 1000 x 12: 4.6 ms against 0.1-0.25 ms) and a kernel
pass at n = 16,000 27x slower (its skinny products spread over its threads).

The rule, applied by every entry point of the library (:func:`managed`): the kernel threads
get the cores (:func:`kernel_threads`: the user's setting, else ``APPROXPATH_NUM_THREADS``,
else ``OMP_NUM_THREADS`` as the process started with it, else :func:`cores`), and BLAS runs on
one thread, inside our threaded passes and around them.
Worker processes run one kernel thread (:func:`worker_threads`): their parallelism is the
processes.

A setting follows joblib's ``n_jobs`` convention (:func:`resolve`): a positive count, ``-1``
for every core, ``-2`` for all but one, ...; ``None`` for the default.  BLAS threads are set
through threadpoolctl, the scientific Python stack's way.
"""

from __future__ import annotations

import contextvars
import functools
import os
import sys
import threading
from contextlib import contextmanager

__all__ = ["cores", "resolve", "threads", "kernel_threads", "blas_threads", "load_blas", "managed", "worker_threads",
           "parallel_map", "background", "SOLVER_THREADS"]

#: The threads of the exact solvers' own pools (Clarabel's factorization on rayon, HiGHS's
#: simplex): one.  Their parallel factorizations gained nothing here (Clarabel on the SVM's dual at
#: n = 1200: 1.21-1.33 s on one thread, 1.03-1.37 s on two, whose CPU time was their wall time:
#: docs/benchmarks.md); on one thread a solver's point does not depend on the machine's cores or
#: on ``n_jobs`` (on rayon's threads Clarabel's differed in the last bits from n = 600 on), and a
#: worker process forked after the first solves has no pool to wait for (Clarabel's first
#: parallel factorization waited forever there).
SOLVER_THREADS = 1

_DEFAULT = contextvars.ContextVar("approxpath_kernel_threads", default=None)
_POOL_NAME = "approxpath-kernels"
_POOLS = {}  # (process id, kernel threads beside the caller) -> ThreadPoolExecutor
_INSIDE = threading.local()  # .items: this thread is running parallel_map's items


@functools.lru_cache(maxsize=1)
def cores():
    """The CPUs this process may use: its affinity mask (``taskset``, a container's cpuset),
    capped by a cgroup CPU quota (a container's ``--cpus``), at least 1; read once (every
    parallel pass asks)."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        count = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(count, quota) if quota else count)


def _cgroup_quota():
    """A cgroup's CPU quota in whole CPUs (rounded up), or None: v2's ``cpu.max``
    (``"200000 100000"``), else v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``."""
    for quota_file, period_file in (("/sys/fs/cgroup/cpu.max", None),
                                    ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")):
        try:
            with open(quota_file) as fh:
                fields = fh.read().split()
            if period_file is not None:
                with open(period_file) as fh:
                    fields.append(fh.read().strip())
            quota, period = fields[0], float(fields[1])
            if quota in ("max", "-1") or period <= 0:
                return None
            return max(1, -(-int(quota) // int(period)))
        except (OSError, ValueError, IndexError):
            continue
    return None


def resolve(n_jobs, default=None, name="n_jobs"):
    """A thread (or process) count from ``n_jobs`` in joblib's convention: a positive integer as
    given, ``-1`` every core (:func:`cores`), ``-k`` all but ``k - 1`` (at least 1: ``max(1, cores() + 1 + n_jobs)``),
    ``None`` ``default`` (a count, taken as it is, or :func:`cores` when that is None too).  An integer is anything
    with ``__index__`` but a bool; ``name`` is the setting's name in the refusal (``workers``).

    Raises
    ------
    InputError
        ``0``, a bool or a non-integer.
    """
    if n_jobs is None:
        return cores() if default is None else int(default)
    from ..errors import InputError

    if isinstance(n_jobs, bool) or not hasattr(n_jobs, "__index__") or int(n_jobs) == 0:
        raise InputError(f"{name} must be a nonzero integer or None (-1: every core, -2: all but one); got {n_jobs!r}")
    n_jobs = int(n_jobs)
    return n_jobs if n_jobs > 0 else max(1, cores() + 1 + n_jobs)


def _environment_default():
    """``APPROXPATH_NUM_THREADS`` as :func:`resolve` reads it, or None when unset."""
    value = os.environ.get("APPROXPATH_NUM_THREADS", "").strip()
    if not value:
        return None
    try:
        return resolve(int(value))
    except ValueError:
        from ..errors import InputError

        raise InputError(f"APPROXPATH_NUM_THREADS must be a nonzero integer (-1: every core); got {value!r}") from None


def _openmp_default():
    """``OMP_NUM_THREADS`` as the process started with it (its first level, at most
    :func:`cores`), or None when unset or not a positive count: the variable joblib's process
    workers (scikit-learn's ``n_jobs``) and Dask's worker processes start with, set to the cores
    each may use, and which OpenMP and BLAS libraries read when they load.  A value set later is
    not read, as it is not by them: Dask's ``LocalCluster`` sets it to 1 in the process that
    creates it, which would have left that process's own paths on one thread.  Not approxpath's
    variable: a value it cannot read is left to its owners, not refused."""
    first = _started_with("OMP_NUM_THREADS").split(",")[0].strip()
    return min(int(first), cores()) if first.isdigit() and int(first) > 0 else None


@functools.lru_cache(maxsize=None)
def _started_with(name):
    """The environment variable ``name`` as the process started with it ("" when unset): from
    ``/proc/self/environ`` on Linux, else as it was when first asked."""
    try:
        with open("/proc/self/environ", "rb") as f:
            start = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    except OSError:
        return os.environ.get(name, "")
    return start.get(name.encode(), b"").decode(errors="replace")


def kernel_threads():
    """The kernel threads of the calling context: :func:`threads`' setting, else
    ``APPROXPATH_NUM_THREADS``, else ``OMP_NUM_THREADS`` as the process started with it
    (:func:`_openmp_default`), else :func:`cores`."""
    count = _DEFAULT.get()
    if count is None:
        count = _environment_default()
    if count is None:
        count = _openmp_default()
    return cores() if count is None else count


@contextmanager
def threads(n_jobs):
    """Run the kernel work of a ``with`` block on :func:`resolve` ``(n_jobs)`` threads (a bad ``n_jobs`` refused
    before the block; ``None``: the default of :func:`kernel_threads`: ``APPROXPATH_NUM_THREADS``,
    ``OMP_NUM_THREADS``, :func:`cores`).  The setting holds in the block's context (a context variable), reset after."""
    token = _DEFAULT.set(None if n_jobs is None else resolve(n_jobs))
    try:
        yield
    finally:
        _DEFAULT.reset(token)


class _Controller:
    """threadpoolctl's controller of the loaded native libraries, found again only after new
    modules were imported (finding them reads every loaded library: ~1.4 ms a call with
    ``threadpool_limits``, ~40 us with a kept controller)."""

    modules = -1
    controller = None

    @classmethod
    def get(cls):
        if cls.modules != len(sys.modules):
            from threadpoolctl import ThreadpoolController

            cls.controller, cls.modules = ThreadpoolController(), len(sys.modules)
        return cls.controller


class _Managed:
    """The state of :func:`managed` calls in this process: how deep, and every BLAS library it
    put on one thread with its count before (restored when the outermost call returns)."""

    lock = threading.RLock()
    depth = 0
    saved = {}  # library path -> (its controller, its thread count before)
    modules = -1

    @classmethod
    def pin(cls):
        """Inside a managed call: the BLAS libraries loaded since the last look on one thread too
        (scipy's own OpenBLAS is loaded with ``scipy.linalg``, often after the call began)."""
        with cls.lock:
            if not cls.depth or cls.modules == len(sys.modules):
                return
            cls.modules = len(sys.modules)
            for lib in _Controller.get().select(user_api="blas").lib_controllers:
                if lib.filepath not in cls.saved:
                    cls.saved[lib.filepath] = (lib, lib.get_num_threads())
                    lib.set_num_threads(1)
                    if lib.get_num_threads() != 1:
                        _unpinned(lib)

    @classmethod
    @contextmanager
    def scope(cls):
        with cls.lock:
            cls.depth += 1
        try:
            cls.pin()
            yield
        finally:
            with cls.lock:
                cls.depth -= 1
                if not cls.depth:
                    for lib, count in cls.saved.values():
                        lib.set_num_threads(count)
                    cls.saved, cls.modules = {}, -1


_SAID = set()  # the BLAS libraries whose threads this process could not set (said once each)


def _unpinned(lib):
    """Say once that ``lib`` kept its threads: OpenBLAS (0.3.30 and 0.3.31 at least) ignores a thread
    count set from a thread other than the main one.  Every bound is proven the same; the dense
    solves may be slower (up to 64x a small QR on 2 cores) and their last bits the machine's."""
    if lib.filepath in _SAID:
        return
    _SAID.add(lib.filepath)
    import warnings

    warnings.warn(f"approxpath: the BLAS library {os.path.basename(lib.filepath)} kept {lib.get_num_threads()} "
                  "threads (set from a thread other than the main one, which OpenBLAS ignores): start Python with "
                  "OPENBLAS_NUM_THREADS=1, or call approxpath from the main thread, for its dense solves on one "
                  "thread", RuntimeWarning, stacklevel=4)


def load_blas():
    """Import scipy's linear algebra (its OpenBLAS is loaded with it) and, inside a :func:`managed`
    call, put it on one thread now: an exact solver's first use of it, which would otherwise run on
    the library's default threads until the next look (the first solves of a command line, whose
    last bits then depended on the machine's cores).  Called where a solver imports scipy, not
    before every solve: the SVM's libSVM solves need no scipy (~0.2 s of a small command line)."""
    import importlib

    importlib.import_module("scipy.linalg")  # (loads the library)
    _Managed.pin()


@contextmanager
def blas_threads(count=1, openmp=False):
    """The BLAS libraries loaded in the process (and with ``openmp`` the OpenMP runtimes) on
    ``count`` threads (threadpoolctl's ``limits``) inside the ``with`` block; their settings before it after it.
    Inside a :func:`managed` call the BLAS libraries loaded since its last look are first put on one
    thread (for the rest of that call)."""
    _Managed.pin()
    controller = _Controller.get()
    with controller.limit(limits=count, user_api="blas"):
        if openmp:
            with controller.limit(limits=count, user_api="openmp"):
                yield
        else:
            yield


def managed(func):
    """Decorator of the library's entry points: ``func`` runs with BLAS on one thread, the
    kernel threads having the cores (see the module).  A BLAS library loaded during the call
    (scipy's, with ``scipy.linalg``) is put on one thread at the next kernel pass
    (:func:`parallel_map`), :func:`blas_threads` or managed call inside it; every library gets
    its setting back when the outermost managed call returns.  ``APPROXPATH_NUM_THREADS`` is
    checked when the call starts unless :func:`threads` set the count (a bad value refused with
    :class:`InputError` before any work, not at the first kernel pass of a large problem).  The
    wrapper is :func:`functools.wraps` of ``func``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        # (a setting given, threads(), --n-jobs or the call's own n_jobs, is read before the variable)
        if _DEFAULT.get() is None and kwargs.get("n_jobs") is None:
            _environment_default()
        with _Managed.scope():
            return func(*args, **kwargs)

    return wrapper


@contextmanager
def worker_threads():
    """One kernel thread and one BLAS thread inside the ``with`` block: a worker process's
    setting (its parallelism is the processes)."""
    with blas_threads(1), threads(1):
        yield


def parallel_map(fn, items, threaded=True):
    """``[fn(item) for item in items]``, on the kernel threads (:func:`kernel_threads`) when
    ``threaded`` (else in the calling thread) and there are several items: the calling thread is one
    of them (it takes items as the pool's threads do, rather than wait: an idle core can take ~1 ms
    to wake, as long as a pass of a few milliseconds).  The threads are kept for the next calls (a path makes
    thousands: starting threads each time cost ~1 ms a call); a process forked from this one
    starts its own.  An item's own parallel work runs in its thread (a pool's thread waiting on
    the pool could deadlock; the caller would wait for the other threads' items).  The first
    exception raised, in the items' order, is raised again here once every thread has stopped."""
    items = list(items)
    # a BLAS library loaded since the last look (scipy's, at a lazy `import scipy.linalg`) on one
    # thread before the pass: its idle threads would spin beside ours (kernel ridge at n = 1000:
    # 7.7 CPU s for 4.6 s wall, against 5.3 for the same wall with it on one thread)
    _Managed.pin()
    most = kernel_threads() if threaded else 1
    count = min(most, len(items))
    if count < 2 or getattr(_INSIDE, "items", False):
        return [fn(item) for item in items]
    # one pool per setting (a pass of fewer items takes fewer of its threads: a pool per count of
    # items left dozens of idle pools behind)
    key = (os.getpid(), most - 1)
    pool = _POOLS.get(key)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor

        pool = _POOLS[key] = ThreadPoolExecutor(most - 1, thread_name_prefix=_POOL_NAME)
    results, errors, lock, left = [None] * len(items), {}, threading.Lock(), iter(range(len(items)))

    def drain():  # items one after another, until none is left or one has failed
        _INSIDE.items = True
        try:
            while not errors:
                with lock:
                    i = next(left, None)
                if i is None:
                    return
                try:
                    results[i] = fn(items[i])
                except BaseException as exc:  # noqa: BLE001 - raised again below, in the caller's thread
                    errors[i] = exc
        finally:
            _INSIDE.items = False

    helpers = [pool.submit(drain) for _ in range(count - 1)]
    drain()
    for helper in helpers:  # a helper not started yet has nothing left to do: not waited for
        if not helper.cancel():
            helper.result()
    if errors:
        raise errors[min(errors)]
    return results


_PENDING = set()  # futures of background work still running in this process


def background(fn, *args):
    """Run ``fn(*args)`` on a thread of its own, for work that releases the GIL and whose result
    is needed later (the sha256 of the distances: 1.1 s at n = 16,000, wanted only for the
    certificate at the end of a path), in the caller's context (its kernel threads setting holds there too).
    Returns a :class:`concurrent.futures.Future`: its ``result()`` waits for the value, or raises the exception in
    the caller's thread.  A process forks only once its background work has finished (a forked child has no such
    thread and would wait for ever)."""
    from concurrent.futures import Future

    future = Future()

    def run():
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - raised again by result(), in the caller's thread
            future.set_exception(exc)
        finally:
            _PENDING.discard(future)

    _PENDING.add(future)
    # in the caller's context: its kernel threads setting (threads(n), a worker's one) holds there too
    threading.Thread(target=contextvars.copy_context().run, args=(run,), name="approxpath-background",
                     daemon=True).start()
    return future


def _finish_background():
    if _PENDING:  # (then concurrent.futures is imported already)
        from concurrent.futures import wait

        wait(list(_PENDING))


os.register_at_fork(before=_finish_background)
