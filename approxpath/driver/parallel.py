"""Running a path's work on several processes (or a Dask cluster), without shared state.

Two modes (see :func:`approxpath.approximate_path`): the adaptive strategies place the exact
solves here and hand each segment between two of them to a worker (:func:`segment_in_worker`);
otherwise the interval is cut into chunks of equal width in log scale, computed concurrently and
merged (:func:`chunks`).  Workers run with one BLAS and one kernel thread.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from ..compute.allocator import task_memory
from ..compute.caches import share_budget, sharing
from ..compute.executors import check_executor, result, submit
from ..compute.parallelism import resolve, worker_threads
from ..data import data_sha256
from ..errors import InputError

__all__ = ["one_place", "pool", "single_threaded", "segment_in_worker", "chunks", "path_in_worker",
           "task_in_worker", "map_paths"]

# An interrupted pool's manager thread is given this long to end (it does once its terminated
# workers are reaped, in milliseconds) before the exception goes on: where it still ran at the
# interpreter's exit, Python 3.10-3.11 woke it through a pipe it was closing, and a run stopped by
# Ctrl-C printed "OSError: Bad file descriptor" with a traceback (seen once in CI, under load).
_MANAGER_END_S = 2.0


# A worker looks this often whether the process that started it is still there (a second: a
# dead parent's workers end within it; the look costs microseconds).
_PARENT_CHECK_S = 1.0


def one_place(workers, executor):
    """:class:`InputError` for ``workers > 1`` beside an ``executor``: its own workers run the
    tasks, so the count would be ignored."""
    if executor is not None and workers > 1:
        raise InputError(f"workers ({workers} processes) and executor: give one of them (the executor's own workers "
                         "run the tasks)")


@contextmanager
def pool(workers, executor, wanted=True, sharers=None):
    """``executor`` if given (checked by :func:`~approxpath.compute.executors.check_executor`), else a local
    ``ProcessPoolExecutor`` of ``workers`` (shut down on exit; its workers terminated at once where the block raises)
    whose processes and this one share the kernel caches' memory
    (:func:`~approxpath.compute.caches.sharing`: ``sharers`` processes, by default the
    workers and this one, which keeps kernels meanwhile, while the pool lives); None when not
    ``wanted``.  Both ``workers > 1`` and ``executor`` are refused (:func:`one_place`), as is an executor that
    cannot take work (:class:`InputError`)."""
    one_place(workers, executor)
    if not wanted or executor is not None:
        if wanted:
            check_executor(executor)
        yield executor if wanted else None
        return
    from concurrent.futures import ProcessPoolExecutor

    sharers = workers + 1 if sharers is None else sharers
    with sharing(sharers):
        with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(sharers,)) as p:
            p.approxpath_own = True  # (its workers end only with it: compute.executors.result watches them)
            try:
                yield p
            except BaseException:  # interrupted, terminated, failed: the workers stop now, not after their tasks
                # (Python 3.14: terminate_workers(); shutdown forgets the processes and the queues, so first)
                processes = list((getattr(p, "_processes", None) or {}).values())
                for process in processes:
                    process.terminate()
                manager = getattr(p, "_executor_manager_thread", None)
                results, calls = getattr(p, "_result_queue", None), getattr(p, "_call_queue", None)
                p.shutdown(wait=False, cancel_futures=True)
                if manager is not None:  # its end closes the pipe the interpreter's exit writes to
                    manager.join(_MANAGER_END_S)
                    if manager.is_alive() and results is not None:
                        # it reads a result a worker killed while writing it left half-written, and would
                        # wait forever (and the interpreter's exit with it): with every worker gone, closing
                        # this end of the results' pipe ends the read
                        for process in processes:
                            process.join(_MANAGER_END_S)
                        results._writer.close()
                        # Python 3.10 (3.11 does it itself, CPython gh-94777): a broken pool's thread waits for
                        # the tasks' queue to write a task no worker is left to read (a pipe full), and would
                        # wait forever; with this, the last reader, closed, the write fails and the wait ends
                        if calls is not None:
                            calls._reader.close()
                        manager.join(_MANAGER_END_S)
                raise


def _start_worker(sharers):
    """A worker process's start: the signals' default actions (a process forked from a command
    would keep its SIGTERM handler, which a task catches: ``kill`` could not stop it; Ctrl-C is
    its parent's to act on), its share of the kernel caches' budget, and a watch on its parent:
    a parent killed outright (SIGKILL, the out-of-memory killer) cannot stop its workers, which
    would go on holding their kernels' memory; they end once it is gone."""
    import os
    import signal
    import threading

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.set_wakeup_fd(-1)
    share_budget(sharers)
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:  # (an orphan is given another parent)
            time.sleep(_PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="approxpath-parent-watch", daemon=True).start()


def single_threaded(fn, *args):
    """``fn(*args)`` with one BLAS thread and one kernel thread, so that workers do not compete."""
    with worker_threads():
        return fn(*args)


def _task(fn, *args):
    """``fn(*args)`` as a worker's task: single-threaded, with the worker's allocator keeping
    freed temporaries (:func:`~approxpath.compute.allocator.task_memory`)."""
    with task_memory():
        return single_threaded(fn, *args)


class _WarmProblem:
    """The last problem a worker process certified segments of, with its warm kernel cache:
    the segments of one path arrive one by one, each with a fresh copy of the same problem
    (keyed by class, options and data hash, so a new path never reuses another's caches)."""

    key = None
    problem = None

    @classmethod
    def get(cls, problem):
        key = (type(problem).__qualname__, repr(problem.options()), data_sha256(problem.X, problem.y))
        if key != cls.key:
            cls.key, cls.problem = key, problem
        return cls.problem


def segment_in_worker(problem, settings, anchors, interpolate):
    """Certify the segment between the two exact solves ``anchors`` (a worker's task).

    ``settings``: the run's ``(eps, relative, lo, hi, solver, budget)`` (as :class:`~approxpath.driver.run.Run` takes
    them); ``anchors``: ``{t: (primal, dual)}`` at the segment's ends; ``interpolate``: cover with ``Interpolate``'s
    pairs, else ``TwoSided``'s.  The worker's last problem of the same class, options and data hash (with its warm
    kernel cache) stands in for the copy ``problem``.

    Returns ``(pieces, new exact-solve points, solve_s, certify_s, failed)``: :class:`~approxpath.result.PathPiece`
    list, floats, seconds, and the points where no solver produced a pair (dict of float to str: why).
    """
    from .run import Run
    from .strategies import Interpolate, TwoSided

    problem = _WarmProblem.get(problem)
    eps, relative, lo, hi, solver, budget = settings
    run = Run(problem, eps, relative, lo, hi, solver, budget, anchors=anchors)
    strategy = (Interpolate if interpolate else TwoSided)(run)
    a, b = sorted(anchors)
    pieces, _ = _task(strategy.segment, a, b)
    return pieces, [t for t in run.anchors if t not in anchors], run.solve_s, run.certify_s, run.failed


def chunks(run_chunk, problem, lo, hi, args, count, workers, executor, bar=None):
    """``count`` chunks of ``[lo, hi]`` (``0 < lo < hi``) of equal width in log scale, computed concurrently (on
    ``executor``, else on at most ``count`` local ``workers``) by ``run_chunk(problem, a, b, *args)``
    (:func:`approxpath.driver.run_chunk`, which returns the same four for ``[a, b]``) and merged in their order:
    ``(pieces, exact-solve points, solve_s, certify_s)``, the seconds summed; ``bar`` (with
    ``done()``, optional) counts the finished chunks, in their order (the workers draw none).

    Neighbouring chunks both solve at their common cut (one extra solve per cut; the cut is listed twice); every
    chunk's pieces are certified on their own, so the union is a valid path.
    """
    import numpy as np

    s_lo, s_hi = float(np.log(lo)), float(np.log(hi))
    cuts = [lo] + [float(np.exp(s_lo + k * (s_hi - s_lo) / count)) for k in range(1, count)] + [hi]
    with pool(min(workers, count), executor) as p:
        futures = [submit(p, _task, run_chunk, problem, a, b, *args) for a, b in zip(cuts[:-1], cuts[1:])]
        results = []
        for f in futures:
            results.append(result(f))
            if bar is not None:
                bar.done()
    pieces, anchors = [], []
    for got, ts, _, _ in results:
        pieces += got
        anchors += ts  # a cut solved by both neighbours counts twice: it was solved twice
    return pieces, anchors, sum(r[2] for r in results), sum(r[3] for r in results)


def path_in_worker(fn, problem, eps, interval, options):
    """``fn(problem, eps, interval, **options)`` single-threaded (a task of ``map_paths``; ``fn``:
    :func:`approxpath.approximate_path`, or a function with its first three arguments)."""
    return _task(lambda: fn(problem, eps, interval, **options))


def task_in_worker(fn, *args):
    """``fn(*args)`` as a worker's task (a selection's enclosures): single-threaded, with the
    worker's allocator keeping freed temporaries (:func:`~approxpath.compute.allocator.task_memory`)."""
    return _task(fn, *args)


def map_paths(problems, eps, interval=None, *, workers=1, executor=None, **options):
    """Paths of several problems (a grid of fixed options: several C or lambda, cross-validation
    folds, ...) computed concurrently, one per task.

    Parameters
    ----------
    problems : sequence of Problem
    eps, interval, **options
        As for :func:`~approxpath.approximate_path` (the same for every problem).
    workers : int
        Local processes (not with ``executor``; -1 one per core, as ``n_jobs``).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional

    Returns
    -------
    list of Path
        In the order of ``problems``.
    """
    from ..progress import count_bar
    from . import approximate_path

    problems = list(problems)
    workers = resolve(workers, default=1, name="workers")
    one_place(workers, executor)
    progress = options.pop("progress", False)  # one bar here, none in the workers
    k = max(1, min(int(workers), len(problems)))
    bar = count_bar(progress, len(problems), "paths", "paths")
    with pool(k, executor, sharers=k) as p:  # this process only waits: k share the caches' memory
        try:
            futures = [submit(p, path_in_worker, approximate_path, q, eps, interval, options)
                       for q in problems]
            results = []
            for f in futures:
                results.append(result(f))
                if bar is not None:
                    bar.done()
            return results
        finally:
            if bar is not None:
                bar.close()
