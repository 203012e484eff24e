"""The domains of a certificate's fields and the layout of its arrays: what ``verify`` checks
before it uses any of them (numpy only).  The file itself: :mod:`.format`."""

from __future__ import annotations

import json
import re

import numpy as np

from ..errors import InputError
from ..kernel_families import DESCRIPTIONS
from ..moving_layout import array_names
from ..validate import is_finite, is_stored_count
from .format import DATA_FIELDS, FORMAT_VERSION, KINDS, PIECE_FIELDS

__all__ = ["META_FIELDS", "PROVENANCE_FIELDS", "CALLER_FIELDS", "finite_number", "caller_meta", "meta_errors",
           "field_errors", "layout_errors", "number_array_errors", "unknown_arrays"]

#: Per-piece arrays of text (the others, and every problem array, are float64).
_TEXT_FIELDS = ("kind",)


def finite_number(v):
    """A real number (not a bool; :func:`~approxpath.validate.is_real`) that is finite."""
    return is_finite(v)


def _seconds(v):
    return finite_number(v) and v >= 0


#: Every field a certificate's ``meta`` may have, with its domain (``required``: fields without
#: which nothing can be checked).  Other keys are a caller's own provenance (``meta=``).
META_FIELDS = {  # name -> (required, domain check, what the domain is)
    "format_version": (True, lambda v: is_stored_count(v) and v >= 1, "a positive integer"),
    "problem": (True, lambda v: isinstance(v, str) and v != "", "a problem name"),
    "options": (True, lambda v: isinstance(v, dict), "an object of options"),
    "eps": (True, lambda v: finite_number(v) and v > 0, "a positive finite number"),
    "relative": (True, lambda v: isinstance(v, bool), "true or false"),
    "interval": (True, lambda v: isinstance(v, list) and len(v) == 2 and all(finite_number(x) for x in v),
                 "a pair [lo, hi] of finite numbers"),
    "piece_kinds": (False, lambda v: isinstance(v, list) and all(k in KINDS for k in v), "a list of piece kinds"),
    "parameter": (False, lambda v: isinstance(v, str), "a parameter name"),
    "kernel": (False, lambda v: v in DESCRIPTIONS.values(), "the definition of a kernel family "
               f"({', '.join(map(repr, DESCRIPTIONS.values()))})"),
    "n": (False, lambda v: is_stored_count(v) and v >= 2, "the number of samples"),
    "d": (False, lambda v: is_stored_count(v) and v >= 1, "the number of features"),
    "data_sha256": (False, lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is not None,
                    "a sha256 in hex"),
    "content_sha256": (False, lambda v: isinstance(v, str), "a sha256 in hex"),
    "distances_sha256": (False, lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is not None,
                         "a sha256 in hex"),
    "preprocessing": (False, lambda v: v in ("none", "global-minmax"), "none or global-minmax"),
    "format": (False, lambda v: v in ("libsvm", "csv"), "libsvm or csv"),
    "data_file": (False, lambda v: v is None or isinstance(v, str), "a file name"),
    "n_features": (False, lambda v: is_stored_count(v) and v >= 1, "a positive integer (LIBSVM's --n-features)"),
    "scale": (False, lambda v: v == "log", "log"),
    "library_version": (False, lambda v: isinstance(v, str), "a version"),
    "strategy": (False, lambda v: isinstance(v, str), "a strategy name"),
    "exact_solves": (False, is_stored_count, "a count"),
    "solve_points": (False, lambda v: isinstance(v, list) and all(finite_number(x) for x in v),
                     "a list of finite numbers"),
    "wall_s": (False, _seconds, "seconds"),
    "solve_s": (False, _seconds, "seconds"),
    "certify_s": (False, _seconds, "seconds"),
    "machine": (False, lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str)
                                                             for k, x in v.items()), "an object of strings"),
    "problem_source": (False, lambda v: isinstance(v, str) and bool(v), "a string (where a plug-in problem came "
                       "from)"),
}

#: The fields of :data:`META_FIELDS` every certificate file has in common -- a path's, a surface's
#: and a choice's: the layout, the problem with its options and data, and how the file was made.
#: Each kind of file checks these and its own (a surface adds ``eps``; a choice its claim).
PROVENANCE_FIELDS = ("format_version", "problem", "options", "kernel", "n", "d", "data_sha256", "distances_sha256",
                     "content_sha256", "preprocessing", "format", "data_file", "n_features", "library_version",
                     "wall_s", "exact_solves", "machine", "problem_source")

#: The fields of :data:`META_FIELDS` a caller's ``meta=`` may set (where the data came from, as the
#: command line records it); approxpath records the others itself.
CALLER_FIELDS = ("data_file", "format", "preprocessing", "n_features")


def caller_meta(meta):
    """``meta=`` of a path or surface run as a dict (None: empty), checked before the run: JSON
    text, no field approxpath records itself (its value would replace the true one and the
    file fail ``verify``), and the fields of :data:`CALLER_FIELDS` in their domains.  Returns a
    shallow copy.

    Raises
    ------
    InputError
        ``meta`` not a dict or not JSON (finite numbers only), or a field that fails a check above.
    """
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InputError(f"meta must be a dict of provenance; got {type(meta).__name__}")
    try:
        json.dumps(meta, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"meta must be JSON (strings, finite numbers, lists, dicts): {exc}") from None
    taken = [k for k in meta if k in META_FIELDS and k not in CALLER_FIELDS]
    if taken:
        raise InputError(f"meta may not set {taken[0]!r}: approxpath records it itself (give your own provenance "
                         "under other keys)")
    errors = field_errors(meta, {k: META_FIELDS[k] for k in CALLER_FIELDS})
    if errors:
        raise InputError(f"{errors[0]} (in meta=)")
    return dict(meta)


def meta_errors(meta):
    """What is wrong with the fields of a certificate's ``meta``, each against its domain
    (the relations between fields and with the data are checked by ``verify``); empty when all
    hold.  Checks stop at the first of: ``meta`` not a dict, the file another of approxpath's files
    (an exact or feature path, a checkpoint), a ``format_version`` above
    :data:`~approxpath.certificate.format.FORMAT_VERSION`; then :func:`field_errors` against
    :data:`META_FIELDS`."""
    if not isinstance(meta, dict):
        return [f"'meta' is not a JSON object but {type(meta).__name__}"]
    other = _other_file(meta)
    if other:
        return [other]
    version = meta.get("format_version")
    if is_stored_count(version) and version > FORMAT_VERSION:
        return [f"written by a newer approxpath (format {version}); this version reads formats "
                f"<= {FORMAT_VERSION}: upgrade approxpath to verify it"]
    return field_errors(meta, META_FIELDS)


def _other_file(meta):
    """Why the file of ``meta`` (a dict) is another of approxpath's files, not a certificate; or None."""
    if "format_version" in meta:
        return None
    if "algorithm" in meta:  # what ``approxpath exact --out`` writes
        return ("an exact path's file (approxpath exact --out), not a certificate: check it with approxpath "
                "crosscheck PROBLEM --data FILE --path FILE")
    if "jacobian_calls" in meta and "steps" in meta:  # what ``approxpath features --out`` writes
        return ("a feature path's file (approxpath features --out), not a certificate: re-check it in Python with "
                "approxpath.exact.crosscheck_feature_path on the arrays of "
                "approxpath.exact.feature_path.read_feature_path(FILE)")
    if "run" in meta and "state" in meta:  # a run's checkpoint (OUT.partial.npz)
        return ("the checkpoint of an unfinished run (--checkpoint, or OUT.partial.npz beside --out OUT), not a "
                "certificate: finish the run (the same command with --resume), then verify what it writes")
    return None


def field_errors(meta, fields):
    """What is wrong with ``meta`` against ``fields`` (:data:`META_FIELDS`' layout: name ->
    (required, domain check, what the domain is)), and whether ``solve_points`` lists one point
    per exact solve: the check a path's and a surface's meta share.  A message per missing required
    field and per value outside its domain; only when there are none, a ``solve_points`` length other
    than ``exact_solves``."""
    errors = []
    for key, (required, ok, what) in fields.items():
        if key not in meta:
            if required:
                errors.append(f"meta lacks {key!r}")
        elif not ok(meta[key]):
            got = repr(meta[key])  # (a long value, such as a list of the folds' meta, cut short)
            errors.append(f"meta {key!r} must be {what}; got {got if len(got) <= 200 else got[:200] + ' ...'}")
    if not errors and "solve_points" in meta and "exact_solves" in meta \
            and len(meta["solve_points"]) != meta["exact_solves"]:
        errors.append(f"meta 'solve_points' lists {len(meta['solve_points'])} points for "
                      f"{meta['exact_solves']} exact solves")
    return errors


def number_array_errors(key, a):
    """What is wrong with a stored array of numbers whatever its rows: a dtype other than
    float64, or NaN or inf in the data (``DATA_FIELDS``, which have no row per piece or cell).
    The checks a path's layout and a surface's share; at most one message, none when the rows
    may be checked."""
    if a.dtype != np.float64:
        return [f"array {key!r} must be float64 in the machine's byte order ({np.dtype(float).str!r}); got dtype "
                f"{a.dtype.str!r}"]
    if key in DATA_FIELDS and not np.all(np.isfinite(a)):
        return [f"array {key!r} holds NaN or inf"]
    return []


def layout_errors(arrays, meta):
    """What makes a certificate's arrays and ``meta`` unusable, before any of them is used:
    missing arrays, wrong dtypes or shapes, non-finite values where a number is claimed,
    missing or malformed ``meta`` fields (each against its domain, :func:`meta_errors`), a
    format newer than :data:`FORMAT_VERSION`.

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
    errors = meta_errors(meta)
    if isinstance(meta, dict) and _other_file(meta):  # (its arrays are not a certificate's either)
        return errors
    missing = [k for k in PIECE_FIELDS if k not in arrays]
    errors += [f"certificate lacks array {k!r}" for k in missing]
    rows = [a.shape[0] for k, a in arrays.items() if a.ndim >= 1 and k not in DATA_FIELDS]
    pieces = max(rows, key=rows.count) if rows else None  # the number of pieces most arrays agree on
    for key, a in arrays.items():
        text = key in _TEXT_FIELDS
        if text and a.dtype.kind != "U":
            errors.append(f"array {key!r} must be text ({', '.join(KINDS)}); got dtype {a.dtype}")
            continue
        if not text:
            wrong = number_array_errors(key, a)
            errors += wrong
            if wrong or key in DATA_FIELDS:
                continue
        if key in PIECE_FIELDS:
            if pieces is None or a.shape != (pieces,):
                errors.append(f"array {key!r} has shape {a.shape}, expected ({'pieces' if pieces is None else pieces},)")
                continue
        elif a.ndim == 0 or (pieces is not None and a.shape[0] != pieces):
            errors.append(f"array {key!r} has {a.shape[0] if a.ndim else 'no'} rows, expected "
                          f"{'one' if pieces is None else pieces} (one per piece)")
            continue
        if key in ("anchor_lo", "anchor_hi"):
            bad = ~np.isfinite(a) & ~np.isnan(a)  # NaN: a piece without exact solves
        elif key == "gap_bound" or text:
            bad = np.isnan(a) if not text else np.zeros(a.shape, bool)
        else:
            bad = ~np.isfinite(a)
        if np.any(bad):
            errors.append(f"array {key!r} holds {'NaN' if key == 'gap_bound' else 'NaN or inf'} "
                          f"(first at piece {int(np.argwhere(bad)[0][0])})")
    if any(k in arrays for k in DATA_FIELDS) and not set(DATA_FIELDS) <= set(arrays):
        errors.append(f"a certificate carrying its data needs both {' and '.join(DATA_FIELDS)}")
    if any(k in arrays for k in DATA_FIELDS) and isinstance(meta, dict) and meta.get("format_version") == 1:
        errors.append("a certificate of format 1 carries no data arrays")
    return errors


def unknown_arrays(per_piece, bound):
    """Messages for the arrays of ``per_piece`` (name -> array: a certificate's arrays but its
    pieces' or cells' and its data) under which no pair of ``bound``'s problem is stored
    (:func:`~approxpath.moving_layout.array_names`): content no check would read."""
    known = array_names("primal", bound.Primal) | array_names("dual", bound.Dual)
    return [f"array {k!r} is no field of a {bound.name} certificate: nothing would check it" for k in sorted(per_piece)
            if k not in known]
