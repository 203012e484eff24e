"""Files of claimed paths (npz or CSV) for :func:`approxpath.exact.crosscheck`: ``t`` and one
array per field of the problem's ``Primal`` (see :mod:`approxpath.exact.crosscheck`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ._common import InputError

__all__ = ["read_claimed", "write_claimed"]

_COLUMN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


def read_claimed(file):
    """Arrays of a claimed path from ``.npz`` or ``.csv`` (see the module docstring).

    Returns
    -------
    dict
        ``t`` and the other arrays (``beta`` (points × n), ``beta0``, ...); npz files may carry
        more (``linear``, ``cond``, ...).
    """
    file = Path(file)
    if not file.is_file():
        raise FileNotFoundError(f"path file {str(file)!r} does not exist")
    if file.suffix.lower() == ".csv":
        with open(file) as fh:
            header = fh.readline().strip().split(",")
        data = np.loadtxt(file, delimiter=",", skiprows=1, ndmin=2)
        if data.shape[1] != len(header):
            raise InputError(f"{str(file)!r}: {len(header)} header names but {data.shape[1]} columns")
        groups = {}
        for col, name in enumerate(header):
            m = _COLUMN.match(name.strip())
            if not m:
                raise InputError(f"{str(file)!r}: bad column name {name!r}; use t, scalar names and name[i] for vectors")
            groups.setdefault(m.group(1), []).append((None if m.group(2) is None else int(m.group(2)), col))
        arrays = {}
        for name, cols in groups.items():
            if cols[0][0] is None:
                arrays[name] = data[:, cols[0][1]]
            else:
                idx = sorted(cols)
                if [i for i, _ in idx] != list(range(len(idx))):
                    raise InputError(f"{str(file)!r}: columns {name}[i] must be numbered 0..{len(idx) - 1}")
                arrays[name] = data[:, [c for _, c in idx]]
    else:
        with np.load(file, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    if "t" not in arrays:
        raise InputError(f"{str(file)!r} has no array 't' (the parameter values of the claimed solutions)")
    return arrays


def write_claimed(file, t, arrays, **extra):
    """Write a claimed path: ``.csv`` (``t`` and ``arrays``) or ``.npz`` (also ``extra``),
    atomically (:func:`~approxpath.certificate.output.write_atomic`)."""
    from ..certificate.output import write_atomic

    file = Path(file)
    t = np.asarray(t, dtype=float)
    if file.suffix.lower() == ".csv":
        names, cols = ["t"], [t[:, None]]
        for name, a in arrays.items():
            a = np.asarray(a, dtype=float)
            if a.ndim == 1:
                names.append(name)
                cols.append(a[:, None])
            else:
                names += [f"{name}[{i}]" for i in range(a.shape[1])]
                cols.append(a)
        table = np.hstack(cols)
        return write_atomic(file, lambda fh: np.savetxt(fh, table, delimiter=",", header=",".join(names), comments="",
                                                        fmt="%.17g"))
    extra = {k: (np.array(json.dumps(v)) if isinstance(v, dict) else v) for k, v in extra.items()}
    return write_atomic(file, lambda fh: np.savez_compressed(fh, t=t, **arrays, **extra))
