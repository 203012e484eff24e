"""The machine a path was computed on, as its certificate records it (``meta["machine"]``).

A path's pieces depend on the last bits of its kernel products, and those on the BLAS kernels
the processor runs (OpenBLAS picks one per processor) and on the numeric packages' versions:
the same inputs give the same path, bit for bit, on one machine, and may give a few pieces more
or fewer on another (every certificate still verifies on any machine).  The record says which
machine, processor, BLAS and packages made a file, so that two runs can be told apart.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

__all__ = ["PACKAGES", "describe"]

# the last description, by the number of modules loaded when it was made (a BLAS library is
# loaded with a module: scipy's own OpenBLAS comes with scipy.linalg); finding the libraries
# takes ~3 ms and the versions ~5 ms, per path otherwise
_LAST = {}

#: The packages whose versions change a path's numbers (kernels and bounds: numpy; the exact
#: solves: scipy, HiGHS, Clarabel, SCS, libSVM through scikit-learn), recorded where installed.
PACKAGES = ("numpy", "scipy", "highspy", "clarabel", "scs", "scikit-learn")


def describe():
    """This process's machine: a dict of strings.

    Returns
    -------
    dict
        ``python`` (its version), ``system`` (operating system and architecture),
        ``processor`` (the model name, where the system says it), ``blas`` (each BLAS library
        loaded: implementation, version and the kernels it chose for this processor)
        and ``packages`` (the versions of :data:`PACKAGES` installed).
    """
    modules = len(sys.modules)
    if modules not in _LAST:
        _LAST.clear()
        _LAST[modules] = _describe()
    return dict(_LAST[modules])


def _describe():
    from threadpoolctl import threadpool_info

    blas = []
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            name = f"{lib.get('internal_api')} {lib.get('version')}"
            if lib.get("architecture"):
                name += f" {lib['architecture']}"
            if name not in blas:
                blas.append(name)
    return {
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
        "processor": _processor(),
        "blas": "; ".join(sorted(blas)) or "none found",  # (sorted: the libraries load in the order imports ran)
        "packages": ", ".join(f"{p} {v}" for p, v in ((p, _version(p)) for p in PACKAGES) if v),
    }


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _processor():
    """The processor's model name: Linux's /proc/cpuinfo, else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
