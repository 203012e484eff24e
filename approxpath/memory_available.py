"""How much memory the machine gives a run: the least of the free memory, a container's limit, the
process's address-space limit and the user's cap (``APPROXPATH_MEMORY``), and bytes written for a
reader.  :mod:`approxpath.memory` weighs its estimates against it.  Standard library only.
"""

from __future__ import annotations

import math
import os

from .errors import InputError

__all__ = ["available_bytes", "human"]


def human(nbytes):
    """``nbytes`` as ``"1.5 GB"`` (decimal units, as ``free -h --si``): three significant digits in the largest
    of TB, GB, MB and kB not above ``nbytes``, else whole bytes (``"512 B"``)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} B"


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
        budget = float(value)
    except ValueError:
        budget = math.nan
    if not 0 < budget < math.inf:  # (0, negatives and NaN were taken as a budget or ignored without a word)
        raise InputError(f"APPROXPATH_MEMORY must be a positive finite number of bytes (e.g. 8e9); got {value!r}")
    return budget, "APPROXPATH_MEMORY"


def available_bytes():
    """``(bytes, what limits them)``: the least of the free memory, a container's memory limit,
    the process's address-space limit (``ulimit -v``) net of what is in use, and the environment
    variable ``APPROXPATH_MEMORY`` (bytes, e.g. ``8e9``: a cap a user sets below what the machine
    reports); ``(None, None)`` where none can be read."""
    found = [a for a in (_meminfo_available(), _cgroup_available(), _rlimit_available(), _override()) if a is not None]
    if not found:
        return None, None
    return min(found)
