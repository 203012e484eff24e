"""Files of claimed paths (npz or CSV) for :func:`approxpath.exact.crosscheck`: ``t`` and one
array per field of the problem's ``Primal`` (see :mod:`approxpath.exact.crosscheck`).

A file that is not such a path file (empty, truncated, a folder, a single ``.npy`` array, a
CSV named ``.npz`` or binary bytes named ``.csv``, a header without rows) is refused with an
:class:`~approxpath.errors.InputError` naming the file and what is wrong with it (command line:
status 2); one that exists but cannot be read (permission denied) with an ``OSError`` (status 3).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from ._common import InputError

__all__ = ["read_claimed", "write_claimed"]

_COLUMN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first record, or the end record of an empty one
_NPY_MAGIC = b"\x93NUMPY"
_WHAT = "a path file (.npz or .csv of t and the primal fields)"


def _not_a_path_file(file, why):
    return InputError(f"{str(file)!r} is not {_WHAT}: {why}")


def _head(file, size=512):
    """The first ``size`` bytes of the regular file ``file`` (``FileNotFoundError`` when there is
    none, :class:`InputError` for a folder, a device or a pipe, ``OSError`` when it cannot be read)."""
    if not file.exists():
        raise FileNotFoundError(f"path file {str(file)!r} does not exist")
    if file.is_dir():
        raise _not_a_path_file(file, "it is a directory")
    if not file.is_file():
        raise _not_a_path_file(file, "it is not a regular file (a device, a pipe or a socket)")
    try:
        with open(file, "rb") as fh:
            return fh.read(size)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot read path file {str(file)!r}: {exc.strerror}") from None


def _is_text(head):
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the end of the sample is text
        if exc.start < len(head) - 3:
            return False
        text = head[:exc.start].decode("utf-8")
    return all(c.isprintable() or c.isspace() for c in text.lstrip("\ufeff"))


def _read_npz(file):
    """The arrays of an ``.npz`` path file: every member a numpy array (never a pickle), the whole
    fitting in memory before anything is decompressed."""
    from ..certificate.format import npz_headers, read_member
    from ..memory import Estimate, check_fits

    head = _head(file)
    if not head:
        raise _not_a_path_file(file, "it is empty (0 bytes)")
    if head.startswith(_NPY_MAGIC):
        raise _not_a_path_file(file, "it holds one .npy array, not an .npz archive of named arrays (write one with "
                                     "numpy.savez(FILE, t=..., beta=..., ...))")
    if head[:4] not in _ZIP_MAGIC:
        why = ("it is text, not an .npz (zip) archive (a CSV path file? its name must end in .csv)" if _is_text(head)
               else "it is not an .npz (zip) archive")
        raise _not_a_path_file(file, why)
    try:
        zf = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
        raise _not_a_path_file(file, f"a damaged or truncated zip archive ({exc})") from None
    with zf:
        heads = npz_headers(zf, file, _not_a_path_file)  # (the certificates' checks of every member)
        check_fits(Estimate((("the arrays of the path file", float(sum(h[2] for h in heads.values()))),)),
                   f"reading {str(file)!r}", "read it on a machine with more memory")
        arrays = {}
        for key, (_, _, _, info) in heads.items():
            try:
                arrays[key] = read_member(zf, info)
            except MemoryError:
                raise
            except Exception as exc:  # a bad CRC, a truncated stream
                raise _not_a_path_file(file, f"member {info.filename!r} is damaged ({type(exc).__name__}: "
                                             f"{exc})") from None
    return arrays


def _read_csv(file):
    """The arrays of a ``.csv`` path file: a header ``t,name,name[0],...`` and one row of numbers
    per point."""
    from ..data import read_text

    head = _head(file)
    if head[:4] in _ZIP_MAGIC:
        raise _not_a_path_file(file, "it is a zip archive, not CSV text (an .npz path file? its name must end in .npz)")
    text = read_text(file, "path", "a CSV path file is a header t,name,name[i],... and one row of numbers per point")
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
             if ln.strip() and not ln.lstrip().startswith("#")]  # blank lines and '#' comments skipped
    if not lines:
        raise _not_a_path_file(file, "it is empty (no header line t,name,name[i],... and no rows)")
    (_, header), rows = lines[0], lines[1:]
    header = [name.strip() for name in header.split(",")]
    groups = {}
    for col, name in enumerate(header):
        m = _COLUMN.match(name)
        if not m:
            raise InputError(f"{str(file)!r}: bad column name {name!r} in the header (its first line); use t, scalar "
                             f"names and name[i] for vectors")
        groups.setdefault(m.group(1), []).append((None if m.group(2) is None else int(m.group(2)), col))
    for name, cols in groups.items():
        if len(cols) > 1 and any(i is None for i, _ in cols):
            raise InputError(f"{str(file)!r}: column {name!r} is repeated or also given as {name}[i]")
    if not rows:
        raise _not_a_path_file(file, "it has a header but no rows (no points)")
    try:
        data = np.loadtxt(io.StringIO("\n".join(ln for _, ln in rows)), delimiter=",", ndmin=2, comments=None)
    except ValueError as exc:
        for lineno, ln in rows:  # the first bad line, by its number in the file
            cells = ln.split(",")
            if len(cells) != len(header):
                raise InputError(f"{str(file)!r}, line {lineno}: {len(cells)} values but the header names "
                                 f"{len(header)} columns") from None
            for cell in cells:
                try:
                    float(cell)
                except ValueError:
                    raise InputError(f"{str(file)!r}, line {lineno}: {cell.strip()!r} is not a number") from None
        raise InputError(f"{str(file)!r}: {exc}") from None
    if data.shape[1] != len(header):
        raise InputError(f"{str(file)!r}, line {rows[0][0]}: {data.shape[1]} values but the header names "
                         f"{len(header)} columns")
    arrays = {}
    for name, cols in groups.items():
        if cols[0][0] is None:
            arrays[name] = data[:, cols[0][1]]
        else:
            idx = sorted(cols)
            numbers = [i for i, _ in idx]
            if numbers != list(range(len(idx))):
                repeated = sorted({i for i in numbers if numbers.count(i) > 1})
                missing = sorted(set(range(max(numbers) + 1)) - set(numbers))
                what = (f"{name}[{repeated[0]}] is repeated" if repeated else f"{name}[{missing[0]}] is missing")
                raise InputError(f"{str(file)!r}: columns {name}[i] must be numbered 0, 1, 2, ... once each: {what}")
            arrays[name] = data[:, [c for _, c in idx]]
    return arrays


def read_claimed(file):
    """Arrays of a claimed path from ``.npz`` or ``.csv`` (a name ending in ``.csv``, any case; see the
    module docstring).

    Returns
    -------
    dict
        ``t`` and the other arrays (``beta`` (points × n), ``beta0``, ...); npz files may carry
        more (``linear``, ``cond``, ...).

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        Not a path file (the message names the file and what is wrong with it): a folder, an
        empty, truncated or damaged file, not an ``.npz`` archive / not UTF-8 CSV text, a bad
        header, a row that is not numbers, no array ``t``, a ``t`` not of real numbers, a ``cond``
        not of one number per point, a ``linear`` not one number.
    OSError
        The file exists but cannot be read.
    """
    file = Path(file)
    arrays = _read_csv(file) if file.suffix.lower() == ".csv" else _read_npz(file)
    if "t" not in arrays:
        raise InputError(f"{str(file)!r} has no array 't' (the parameter values of the claimed solutions)")
    t = arrays["t"]
    if t.dtype.kind not in "biuf":
        raise InputError(f"{str(file)!r}: array 't' must hold real numbers; got {t.dtype}")
    if "cond" in arrays and (arrays["cond"].dtype.kind not in "biuf" or arrays["cond"].size != t.size):
        raise InputError(f"{str(file)!r}: array 'cond' must hold one number per point ({t.size}); got shape "
                         f"{arrays['cond'].shape} of {arrays['cond'].dtype}")
    if "linear" in arrays and (arrays["linear"].dtype.kind not in "biuf" or arrays["linear"].size != 1):
        raise InputError(f"{str(file)!r}: 'linear' must be one boolean (true: the path is linear between its points); "
                         f"got shape {arrays['linear'].shape} of {arrays['linear'].dtype}")
    return arrays


def write_claimed(file, t, arrays, **extra):
    """Write a claimed path: ``.csv`` (``t`` and ``arrays``) or ``.npz`` (also ``extra``),
    atomically (:func:`~approxpath.certificate.output.write_atomic`, whose return and errors these
    are).  CSV where the name ends in ``.csv`` (any case), else compressed ``.npz``.  ``t`` has shape
    ``(k,)``, each of ``arrays`` ``(k,)`` or ``(k, m)``: a CSV column ``name``, or columns ``name[0]`` to
    ``name[m-1]`` (written ``%.17g``); an ``extra`` dict is stored as its JSON text."""
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
