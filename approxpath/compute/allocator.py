"""The C allocator's policy of a command-line process: large temporaries reused, not mapped anew.

glibc serves an allocation above its *mmap threshold* (128 KiB at start, raised as such blocks
are freed, at most 32 MiB) with a fresh mapping of the system's, and gives free memory at the
top of its heap back to the system above its *trim threshold*.  A certified selection makes
~10^5 enclosure calls whose numpy temporaries are 1-30 MB each, so each call's pages were mapped
and faulted in again: a2a's ``select --cv 5`` took 490,000 minor page faults and spent 7 % of its
CPU in system time, a4a's 12 %.  With both thresholds raised once (:func:`keep_freed_memory`)
the freed blocks are reused: a2a 61,000 faults and 1.5 % system time at the same peak memory,
a4a 4.1 % at a peak 90 MB higher (1.71 GB).

The command line applies it at start (``approxpath`` commands own their process).  A library
call does not change its caller's allocator: a Python session gets the same by starting with
glibc's own variables, e.g. ``MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=268435456``
(docs/compute.md).

A task on a Dask worker (a segment, a chunk, a fold's path) runs inside
:func:`task_memory`: Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``,
which also fixes glibc's mmap threshold at 128 KiB, so that every temporary above it was mapped
and faulted in anew: robust l1's segments at n = 1000 spent as much CPU in the system as in
their own work, and took twice as long as on a local pool's workers.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from contextlib import contextmanager

__all__ = ["keep_freed_memory", "task_memory"]

# mallopt's parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks up to 1 GiB come from the heap: a4a's largest temporaries are ~120 MB, and robust l1's
# exact solves at n = 4000 (HiGHS's copies of a 128 MB dense LP) reuse each other's blocks
# (system time 14.4 -> 9.2 %, peak 2.74 -> 3.02 GB on [0.125, 0.5]; with 64 MiB, 10.1 % and
# 2.75 GB); only an n x n kernel from n ~ 11,600 on is mapped on its own
_MMAP_THRESHOLD = 1 << 30
# Free memory at the heap's top given back above 256 MiB: a selection's working set of
# temporaries stays mapped, a finished large phase still returns its memory
_TRIM_THRESHOLD = 1 << 28
# glibc's variables for the same settings: a user's own choice wins
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
# glibc's mmap threshold at start (DEFAULT_MMAP_THRESHOLD_MIN), where it stays once a threshold is
# set (its dynamic raise is off): what task_memory puts back
_GLIBC_MMAP_THRESHOLD = 128 * 1024
_TASKS = {"running": 0, "lock": threading.Lock()}  # task_memory blocks running in this process
# mallopt takes a C int
_INT_MAX = 2**31 - 1


def _forked():
    """A process forked while a task ran starts with no task running, and an unlocked lock."""
    _TASKS.update(running=0, lock=threading.Lock())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


@functools.lru_cache(maxsize=None)
def _libc(name):
    """The function ``name`` of this process's own C library (``mallopt``, ``malloc_trim``), or
    None (not Linux, a C library without it)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None


def _mallopt():
    """glibc's ``mallopt``, or None."""
    return _libc("mallopt")


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds for this process (see the module); True when set.

    A no-op (False) off Linux, on a C library without ``mallopt`` (or one that refuses the
    values, as musl's stub does), and when the user set glibc's ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_TRIM_THRESHOLD_``.
    """
    mallopt = None if any(name in os.environ for name in _ENVIRONMENT) else _mallopt()
    if mallopt is None:
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


def _on_dask_worker():
    """Whether this thread runs a task of a Dask worker that a nanny started: its process is the
    worker's, whose ``MALLOC_TRIM_THRESHOLD_`` the nanny set before glibc read it (a worker in a
    caller's process, ``LocalCluster(processes=False)``, has none)."""
    distributed = sys.modules.get("distributed")  # (a worker has imported it; nothing is imported here)
    if distributed is None:
        return False
    try:
        return bool(getattr(distributed.get_worker(), "nanny", None))
    except ValueError:
        return False


def _malloc_trim():
    """Give the free memory of glibc's heaps back to the system (``malloc_trim(0)``)."""
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)


@contextmanager
def task_memory():
    """Inside the ``with`` block (a task on a Dask worker), freed temporaries are reused as
    :func:`keep_freed_memory` has them, where the worker's environment fixed glibc's mmap
    threshold at its 128 KiB by setting ``MALLOC_TRIM_THRESHOLD_`` alone (Dask's nanny does).
    When the last such block of the process ends, both thresholds are put back and the free
    memory given back to the system (``malloc_trim``): the worker's own policy, as it was.
    Nothing changes elsewhere: outside a Dask worker's task (a local pool's workers inherit the
    command line's policy; a caller's process keeps its own), without that variable, with
    ``MALLOC_MMAP_THRESHOLD_`` set, off glibc."""
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "") if "MALLOC_MMAP_THRESHOLD_" not in os.environ else ""
    pinned = trim.isascii() and trim.isdigit() and int(trim) <= _INT_MAX and _on_dask_worker()
    mallopt = _mallopt() if pinned else None
    if mallopt is None:
        yield
        return
    with _TASKS["lock"]:
        _TASKS["running"] += 1
        if _TASKS["running"] == 1:
            mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    try:
        yield
    finally:
        with _TASKS["lock"]:
            _TASKS["running"] -= 1
            if _TASKS["running"] == 0:  # the worker's policy again, and the memory it would have given back
                mallopt(_M_MMAP_THRESHOLD, _GLIBC_MMAP_THRESHOLD)
                mallopt(_M_TRIM_THRESHOLD, int(trim))
                _malloc_trim()
