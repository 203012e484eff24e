"""The certificate file: an ``.npz`` of per-piece arrays and a JSON ``meta``.

Arrays (one entry per piece): ``lo``, ``hi``, ``gap_bound``, ``kind`` (``certified``,
``sampled`` or ``uncovered``), ``anchor_lo``, ``anchor_hi`` (the exact solves the piece's pair
came from) and the problem's own arrays (``Bound.to_arrays``; e.g. ``dual`` and ``bias`` for
``kernel_svm``).  ``meta``: problem, options, eps, relative, interval, kernel, preprocessing,
data file and sha256, strategy, exact solves, piece kinds, timings, the library version that
wrote it and a sha256 of everything else in the file.  See ``docs/certificate-format.md``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..validate import is_real

__all__ = ["KINDS", "FORMAT_VERSION", "KERNEL", "PIECE_FIELDS", "write_npz", "read_certificate", "content_sha256",
           "layout_errors"]

#: Piece kinds: ``certified`` (bound valid for every t in the piece), ``sampled`` (gap checked
#: at the piece's end points and middle only), ``uncovered`` (nothing reached eps there).
KINDS = ("certified", "sampled", "uncovered")
#: Version of the certificate layout, stored in ``meta``.
FORMAT_VERSION = 1
#: Kernel definition written into every certificate.
KERNEL = "gaussian: k_t(x, x') = exp(-t * ||x - x'||^2)"
#: Per-piece arrays every certificate has (the problem adds its own, see ``Bound.to_arrays``).
PIECE_FIELDS = ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi")


def write_npz(file, arrays, meta):
    """Write ``arrays`` and ``meta`` (JSON) to ``file`` atomically: a temporary file in the
    same folder, flushed to disk, then renamed over the target (never a half-written file)."""
    file = Path(file)
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".npz", dir=file.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, file)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return file


def content_sha256(arrays, meta):
    """sha256 over a certificate's arrays (in name order) and its ``meta`` (canonical JSON,
    without the ``content_sha256`` entry itself): any edit of any field changes it."""
    import hashlib

    h = hashlib.sha256()
    for key in sorted(arrays):
        if key == "meta":
            continue
        a = np.ascontiguousarray(arrays[key])
        h.update(key.encode())
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    h.update(json.dumps({k: v for k, v in meta.items() if k != "content_sha256"}, sort_keys=True).encode())
    return h.hexdigest()


def read_certificate(file):
    """The raw arrays and the parsed ``meta`` of a certificate file: ``(arrays, meta)``.

    Nothing but the container is checked here (see :func:`layout_errors` for a certificate's
    arrays and fields; checkpoints are read with this function too).

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        The file is no ``.npz`` (or a damaged one), or has no JSON ``meta``.
    """
    try:
        with np.load(file, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except Exception as exc:  # not a zip file, truncated, pickled objects, ...
        raise InputError(f"{str(file)!r} is not a readable certificate (.npz written by approxpath): "
                         f"{type(exc).__name__}: {exc}") from None
    if "meta" not in arrays:
        raise InputError(f"{str(file)!r} lacks 'meta': not a certificate written by approxpath")
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except ValueError as exc:
        raise InputError(f"{str(file)!r}: 'meta' is not JSON ({exc})") from None
    return arrays, meta


#: Per-piece arrays of text (the others, and every problem array, are float).
_TEXT_FIELDS = ("kind",)


def _meta_errors(meta):
    """What keeps ``verify`` from reading the ``meta`` of a certificate: a list of messages."""
    if not isinstance(meta, dict):
        return [f"'meta' is not a JSON object but {type(meta).__name__}"]
    errors = []
    version = meta.get("format_version")
    if version is None:
        errors.append("meta lacks 'format_version'")
    elif not isinstance(version, int) or isinstance(version, bool) or version < 1:
        errors.append(f"meta 'format_version' must be a positive integer; got {version!r}")
    elif version > FORMAT_VERSION:
        errors.append(f"written by a newer approxpath (format {version}); this version reads formats "
                      f"<= {FORMAT_VERSION}: upgrade approxpath to verify it")
    wanted = {
        "problem": (lambda v: isinstance(v, str), "a problem name"),
        "options": (lambda v: isinstance(v, dict), "an object of options"),
        "eps": (lambda v: is_real(v) and np.isfinite(v) and v > 0, "a positive number"),
        "relative": (lambda v: isinstance(v, bool), "true or false"),
        "interval": (lambda v: isinstance(v, list) and len(v) == 2 and all(is_real(x) for x in v),
                     "a pair [lo, hi] of numbers"),
    }
    for key, (ok, what) in wanted.items():
        if key not in meta:
            errors.append(f"meta lacks {key!r}")
        elif not ok(meta[key]):
            errors.append(f"meta {key!r} must be {what}; got {meta[key]!r}")
    kinds = meta.get("piece_kinds", [])
    if not (isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
        errors.append(f"meta 'piece_kinds' must be a list of kinds; got {kinds!r}")
    return errors


def layout_errors(arrays, meta):
    """What makes a certificate's arrays and ``meta`` unusable, before any of them is used:
    missing arrays, wrong dtypes or shapes, missing or malformed ``meta`` fields, a format
    newer than :data:`FORMAT_VERSION`.

    Parameters
    ----------
    arrays : dict of ndarray
    meta : dict
        As returned by :func:`read_certificate`.

    Returns
    -------
    list of str
        Empty when the layout is sound (the contents are checked by ``verify``).
    """
    errors = _meta_errors(meta)
    missing = [k for k in PIECE_FIELDS if k not in arrays]
    errors += [f"certificate lacks array {k!r}" for k in missing]
    rows = [a.shape[0] for a in arrays.values() if a.ndim >= 1]
    pieces = max(rows, key=rows.count) if rows else None  # the number of pieces most arrays agree on
    for key, a in arrays.items():
        text = key in _TEXT_FIELDS
        if text and a.dtype.kind != "U":
            errors.append(f"array {key!r} must be text ({', '.join(KINDS)}); got dtype {a.dtype}")
        elif not text and a.dtype.kind != "f":
            errors.append(f"array {key!r} must be float; got dtype {a.dtype}")
        if key in PIECE_FIELDS:
            if pieces is None or a.shape != (pieces,):
                errors.append(f"array {key!r} has shape {a.shape}, expected ({'pieces' if pieces is None else pieces},)")
        elif a.ndim == 0 or (pieces is not None and a.shape[0] != pieces):
            errors.append(f"array {key!r} has {a.shape[0] if a.ndim else 'no'} rows, expected "
                          f"{'one' if pieces is None else pieces} (one per piece)")
    return errors
