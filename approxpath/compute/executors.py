"""Handing work to an executor and waiting for it: a local process pool or a Dask client.

:func:`check_executor` refuses what cannot take work (a closed client, workers of another
approxpath version), :func:`capacity` says how many tasks run at once, :func:`submit` and
:func:`result` hand a task over and wait for it, interruptibly, with
:class:`~approxpath.errors.ClusterError` where the work is lost (a worker died, the client
closed, the scheduler went away, the cluster has had no workers) rather than waiting forever or
blaming the next backend.  The driver's workers, a selection's folds and the split kernel
products (:mod:`approxpath.compute.distributed`) all wait here.  Search side: the verifier never
imports this module.
"""

from __future__ import annotations

import pickle
import time

from ..errors import ClusterError, InputError

__all__ = ["check_executor", "capacity", "submit", "result"]

# A wait on a Dask future looks at its cluster this often, and gives up once the cluster has had
# no workers this long: a nanny restarts a killed worker within seconds, and 30 s is also how long
# the command line waits for a scheduler to answer; tasks of a cluster without workers would
# otherwise wait forever.
_POLL_S = 2.0
# A local future is polled in sleeps growing by _WAIT_GROWTH from _FIRST_WAIT_S to _WAIT_S (a
# result is seen at most a quarter of the time waited, or 50 ms, after it came): a signal the
# system delivers to another thread (the pool's) runs its handler only when the main thread wakes
# (a plain wait slept until the task ended: SIGTERM of a run of chunks took 48 s), and the poll
# reads the future's state without its lock. concurrent.futures.wait takes that lock: a Ctrl-C
# landing just after it was taken left it held, the pool's thread, which takes it to fail the
# future, waited for it for ever, and so did the interpreter's exit (a test raises
# KeyboardInterrupt at every line of the wait); in Condition.wait, it raised "release unlocked
# lock" instead.
_FIRST_WAIT_S = 1e-4
_WAIT_GROWTH = 1.25
_WAIT_S = 0.05
_NO_WORKERS_S = 30.0


def check_executor(executor):
    """:class:`InputError` unless ``executor`` can take work: an object with ``submit`` (a
    ``concurrent.futures`` executor, a ``dask.distributed.Client``) that is not a closed client,
    and for a client, whose workers import this version of approxpath (a worker with another,
    or without it, made a split path fail with a misleading refusal of the next backend; the first such worker is
    named).  A client is an object with ``run`` (its workers are asked for their version); a closing one is refused."""
    if not callable(getattr(executor, "submit", None)):
        raise InputError(f"executor must be a concurrent.futures executor or a dask.distributed.Client (e.g. "
                         f"Client('tcp://host:8786')); got {type(executor).__name__} {executor!r}")
    if getattr(executor, "status", None) in ("closing", "closed"):
        raise InputError("executor: this Dask client is closed; connect a new one (Client(address))")
    if callable(getattr(executor, "run", None)):  # a Dask client: its workers run our code
        from .. import __version__

        found = executor.run(_version, on_error="return")
        other = {w: _said_version(v) for w, v in found.items() if v != __version__}
        if other:
            worker, version = sorted(other.items())[0]
            raise InputError(f"executor: the Dask worker {worker} runs {version}, this process approxpath "
                             f"{__version__} ({len(other)} of {len(found)} workers differ): install this version "
                             "on the workers (their products and paths must be this version's)")


def capacity(executor):
    """How many tasks ``executor`` runs at once (at least 1): a Dask client's worker threads (the sum of its
    ``nthreads()``; 1 once it is closing or closed), a ``concurrent.futures`` pool's workers, else 1."""
    nthreads = getattr(executor, "nthreads", None)
    if callable(nthreads):  # (a closed client: 1, and check_executor refuses it before any work)
        return 1 if getattr(executor, "status", None) in ("closing", "closed") else max(1, sum(nthreads().values()))
    # (the standard library's pools keep their size there, and say it nowhere else)
    return max(1, int(getattr(executor, "_max_workers", 1) or 1))


# Why a process pool's work is lost (a worker died): said where a task is handed over and where
# its result is read.
_POOL_DIED = ("a worker process of this run died before returning its work: killed (by the system's out-of-memory "
              "killer?) or unable to load the problem (where workers start with 'spawn' or 'forkserver', Python "
              "3.14's default, a problem's class must be importable by its module's name); run with fewer "
              "workers, or without them")


def submit(executor, fn, *args, **options):
    """``executor.submit(fn, *args, **options)`` (``options``: a Dask client's, such as
    ``workers``), with :class:`ClusterError` where the executor can take no
    more work: a process pool broken by a worker's death or shut down, a Dask client closed or
    its scheduler gone (each raised by ``submit`` itself, before :func:`result` could say it); its other exceptions
    are raised as they are.  ``fn`` is picklable for a process pool or a cluster.  The future of a pool of
    :func:`approxpath.driver.parallel.pool` (``approxpath_own``) has ``approxpath_pool`` set to it: :func:`result`
    watches its workers."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        future = executor.submit(fn, *args, **options)
    except BrokenProcessPool:
        raise ClusterError(_POOL_DIED) from None
    except RuntimeError as exc:  # (the standard library's pools: "cannot schedule new futures after shutdown")
        if "shutdown" not in str(exc):
            raise
        raise ClusterError(f"the executor was shut down during the run ({exc})") from None
    except Exception as exc:
        if not callable(getattr(executor, "nthreads", None)):
            raise
        from distributed.comm.core import CommClosedError

        # (a closed client raises ClosedClientError, or before distributed 2024 a plain Exception)
        if not (getattr(executor, "status", "running") in ("closing", "closed") or isinstance(exc, CommClosedError)):
            raise
        raise ClusterError(f"the Dask client or its scheduler went away during the run ({_flat(exc)})") from None
    if getattr(executor, "approxpath_own", False):  # a pool of parallel.pool (never retires a worker):
        future.approxpath_pool = executor  # result() watches its workers
    return future


def _flat(exc):
    """``"TypeName: its message"`` on one line (Dask's messages span lines)."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def _unpicklable(exc):
    """Whether ``exc`` was raised while pickling the work for a worker process: by its type, or by the pickler's
    frames in its traceback (Python 3.13 raises a plain AttributeError, "Can't get local object ...", from
    there), never by its words: a task's own AttributeError comes from the worker, with no such frame here,
    whatever it says."""
    if isinstance(exc, pickle.PicklingError):
        return True
    frame = exc.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_name in ("dump", "dumps") and code.co_filename.endswith(("reduction.py", "pickle.py")):
            return True
        frame = frame.tb_next
    return False


def result(future):
    """``future.result()`` (``future`` as :func:`submit` returns it), polled every ``_WAIT_S`` at most
    (interruptible, no lock held; a Dask future ``_POLL_S`` at a time, its client looked at in between), with
    :class:`ClusterError` where its work is lost: a process pool's worker died (the pool is
    broken, or a worker of a :func:`approxpath.driver.parallel.pool` pool exited nonzero), or for a Dask future,
    its workers died (the future is cancelled, or a task killed workers), its client closed during the wait, or
    its cluster has had no workers for ``_NO_WORKERS_S`` (instead of waiting
    forever).  The task's own exceptions are raised as they are."""
    from concurrent.futures import CancelledError
    from concurrent.futures.process import BrokenProcessPool

    client = getattr(future, "client", None)
    if client is None or not callable(getattr(client, "nthreads", None)):
        delay = _FIRST_WAIT_S
        while not _done(future):
            if _lost_worker(getattr(future, "approxpath_pool", None)):
                raise ClusterError(_POOL_DIED)
            time.sleep(delay)
            delay = min(_WAIT_GROWTH * delay, _WAIT_S)
        try:
            return future.result()
        except BrokenProcessPool:
            raise ClusterError(_POOL_DIED) from None
        except (AttributeError, TypeError, pickle.PicklingError) as exc:  # ("Can't pickle local object", ...)
            if not _unpicklable(exc):
                raise
            raise InputError(f"the work cannot be sent to the worker processes ({_flat(exc)}): define the problem's "
                             "class at the top level of a module, or run without workers") from None
    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    def closed():
        return getattr(client, "status", "running") in ("closing", "closed")

    def lost(exc, who="its scheduler went away"):
        return ClusterError(f"the Dask cluster lost work of this run ({_flat(exc)}): {who}; run again on a cluster "
                            "that stays up, or without it")

    alone = None
    while True:
        try:
            return future.result(timeout=_POLL_S)
        except TimeoutError:
            pass
        except (CancelledError, KilledWorker) as exc:
            if closed():  # (the client's own futures are cancelled as it closes)
                raise ClusterError("the Dask client was closed during the run") from None
            raise lost(exc, "its scheduler went away" if "scheduler" in str(exc) else "its workers died") from None
        except CommClosedError as exc:  # (an OSError: the command line would call it a file's)
            raise lost(exc) from None
        if closed():
            raise ClusterError("the Dask client was closed during the run")
        try:
            workers = client.nthreads()
        except (CommClosedError, OSError) as exc:
            raise lost(exc) from None
        if workers:
            alone = None
        elif alone is None:
            alone = time.monotonic()
        elif time.monotonic() - alone >= _NO_WORKERS_S:
            raise ClusterError(f"the Dask cluster has had no workers for {_NO_WORKERS_S:.0f} s: the run's tasks "
                               "cannot run; start workers, or run without the cluster")


def _lost_worker(pool):
    """Whether a worker of the local process ``pool`` (one of ``parallel.pool``'s, whose workers
    end only with it) has died while the pool still counts it: the pool finds that itself,
    except where the worker was killed while writing a result, which leaves the pool reading it
    forever.  (A pool with ``max_tasks_per_child`` retires workers with status 0: not a death.)"""
    processes = getattr(pool, "_processes", None) or {}
    return any(process.exitcode not in (None, 0) for process in list(processes.values()))


def _done(future):
    """Whether a local ``future`` is done, read without taking its lock where it is a
    ``concurrent.futures.Future`` (why: the comment on ``_WAIT_S``); other futures' ``done()``."""
    from concurrent.futures import _base

    if isinstance(future, _base.Future):
        return future._state in (_base.FINISHED, _base.CANCELLED, _base.CANCELLED_AND_NOTIFIED)
    return future.done()


def _said_version(answer):
    """A worker's answer to :func:`_version` in words: its version, or no approxpath, or one
    without this version's modules (older: it cannot load :func:`_version` from its module)."""
    if isinstance(answer, str):
        return answer
    why = f"{type(answer).__name__}: {answer}"
    if (isinstance(answer, ImportError) and answer.name != "approxpath") or isinstance(answer, AttributeError):
        return f"another approxpath, without this version's {__name__} ({why})"
    return f"no approxpath ({why})"


def _version():
    """The approxpath version a Dask worker imports (:func:`check_executor`)."""
    from .. import __version__

    return __version__
