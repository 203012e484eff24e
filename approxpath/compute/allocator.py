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
"""

from __future__ import annotations

import os
import sys

__all__ = ["keep_freed_memory"]

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


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds for this process (see the module); True when set.

    A no-op (False) off Linux, on a C library without ``mallopt`` (or one that refuses the
    values, as musl's stub does), and when the user set glibc's ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_TRIM_THRESHOLD_``.
    """
    if not sys.platform.startswith("linux") or any(name in os.environ for name in _ENVIRONMENT):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
