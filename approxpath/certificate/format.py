"""The certificate file: an ``.npz`` of per-piece arrays and a JSON ``meta``.

Arrays (one entry per piece): ``lo``, ``hi``, ``gap_bound``, ``kind`` (``certified``,
``sampled`` or ``uncovered``), ``anchor_lo``, ``anchor_hi`` (the exact solves the piece's pair
came from) and the stored pairs (``Bound.pieces_to_arrays``: per side ``primal_<field>`` and
``dual_<field>`` of each stored point, ``*_weights``, ``*_count``, ``*_degree``, ``*_span``, the one
layout of :mod:`approxpath.moving`); optionally the data themselves (``data_X``, ``data_y``: format 2).  ``meta``:
problem, options, eps, relative, interval, kernel, preprocessing, data file and sha256, strategy,
exact solves, piece kinds, timings, the library version that wrote it and a sha256 of everything
else in the file.  See ``docs/certificate-format.md``.

Reading checks the archive before decompressing anything (every member's declared size against
its array header and the layout, the total against the memory available); writing
(:mod:`.output`) goes through a temporary file in the target folder and an atomic rename, never
over a non-regular file or an input.
"""

from __future__ import annotations

import json
import math
import zipfile

import numpy as np

from ..errors import InputError
from ..moving import MAX_DEGREE, MAX_POINTS
from ..validate import file_name, is_stored_count
from .output import check_output, remove_stale_temps, write_npz  # noqa: F401 (the writing half of the format)

__all__ = ["KINDS", "FORMAT_VERSION", "MAX_MEMBERS", "KERNEL", "PIECE_FIELDS", "DATA_FIELDS", "write_npz",
           "size_mismatches", "check_output", "remove_stale_temps", "read_certificate", "read_meta", "content_sha256",
           "npz_headers", "read_member"]

#: Piece kinds: ``certified`` (bound valid for every t in the piece), ``sampled`` (gap checked
#: at the piece's end points and middle only), ``uncovered`` (nothing reached eps there).
KINDS = ("certified", "sampled", "uncovered")
#: Newest version of the certificate layout this version reads and the one it writes (stored in
#: ``meta``): 1 (0.1-0.4.1), 2 (0.4.x, a file that carries its data, ``DATA_FIELDS``) and 3 (0.5:
#: every problem's pairs in the one layout of :mod:`approxpath.moving`, data optional).  Files of
#: formats 1 and 2 are read through :mod:`.legacy`.
FORMAT_VERSION = 3
#: Kernel definition written into every certificate.
KERNEL = "gaussian: k_t(x, x') = exp(-t * ||x - x'||^2)"
#: Per-piece arrays every certificate has (the pairs add theirs, see ``Bound.pieces_to_arrays``).
PIECE_FIELDS = ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi")
#: The data a certificate may carry (the preprocessed ``X`` (n, d) and ``y`` (n,)).
DATA_FIELDS = ("data_X", "data_y")

# 'meta' is JSON in a 0-d text array (4 bytes per character): a fixed part (options, provenance)
# and per piece a kind (at most 13 characters with quotes and separator) and at most two solve
# points (25 characters each); 1 M characters and 256 per piece leave room for user metadata.
_META_CHARS = 1 << 20
_META_CHARS_PER_PIECE = 256
# ... nested at most this deep: approxpath writes 3 levels (meta, options, a list of weights), a
# checkpoint 4; 32 leave room for a caller's own provenance and stay far below Python's
# recursion limit (1000), which deeper JSON would exhaust in the parser or in hashing.
_META_DEPTH = 32
# Members of an archive at most: a certificate has 6 piece arrays, a problem's own (up to ~20, a
# CVXPY-declared problem one per variable and side), 2 data arrays and 'meta'; a checkpoint the
# problem's arrays twice; a selection those of a path per fold (17 for the SVM's) and 5 more.
# 2,048 holds a selection of 100 folds; the count is read from the archive's last record before
# its directory is parsed (100,000 members took 58 s to refuse in 0.4.1).
#: Members of a certificate's archive at most.
MAX_MEMBERS = 2048


def content_sha256(arrays, meta):
    """sha256 (hex) over a certificate's arrays (in name order, each its name, dtype, shape and bytes;
    an entry ``"meta"`` skipped) and its ``meta`` (canonical JSON with sorted keys, without the
    ``content_sha256`` entry itself): any edit of any field changes it."""
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


# ---------------------------------------------------------------------------------- reading
def _not_a_certificate(file, why):
    return InputError(f"{str(file)!r} is not a certificate (.npz written by approxpath): {why}")


def _member_count(fh):
    """The number of members a zip archive declares in its end-of-central-directory record (the
    last 22 bytes plus a comment of at most 64 KiB), or None where that record is not found (a
    damaged archive: :class:`zipfile.ZipFile` says why).  Zip64 archives record 0xFFFF there:
    at least that many members."""
    import struct

    size = fh.seek(0, 2)
    fh.seek(max(0, size - (22 + 0xFFFF)))
    tail = fh.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return None
    return struct.unpack("<H", tail[at + 10:at + 12])[0]


def npz_headers(zf, file, fail=None):
    """``{name: (shape, dtype, bytes, zip info)}`` of every member of the open ``.npz`` ``zf``,
    from the ``.npy`` headers alone (a few hundred bytes decompressed per member): every member
    one array, none repeated, none of Python objects (pickles are never loaded), its declared
    size that of its header's shape and dtype.  ``fail(file, why)`` makes the error of a file
    that is not that (by default: not a certificate); the one home of these checks, for
    certificates and the other ``.npz`` files approxpath reads.  Names lack ``.npy``; shape is a
    tuple, bytes the data's size (header excluded), the info a :class:`zipfile.ZipInfo`.

    Raises
    ------
    InputError
        (Or what ``fail`` makes.)  Over 256 members, a member not one ``.npy`` or repeated, an
        unreadable header, Python objects, or a declared size other than the header's.
    """
    fail = fail or _not_a_certificate
    out = {}
    if len(zf.infolist()) > MAX_MEMBERS:
        raise fail(file, f"{len(zf.infolist())} members (at most {MAX_MEMBERS} are read)")
    for info in zf.infolist():
        name = info.filename
        if not name.endswith(".npy") or name[:-4] in out:
            raise fail(file, f"member {name!r} is not one array of an .npz (or is repeated)")
        try:
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(fh)
                header = fh.tell()
        except Exception as exc:  # truncated, encrypted, not .npy, a bad compression stream
            raise fail(file, f"member {name!r} is no readable array ({type(exc).__name__}: {exc})") from None
        if dtype.hasobject:
            raise fail(file, f"member {name!r} holds Python objects (pickles are never loaded)")
        size = math.prod(shape) * dtype.itemsize
        if info.file_size != header + size:
            raise fail(file, f"member {name!r} declares {info.file_size} bytes but its header "
                       f"says shape {shape} of {dtype} ({header + size} bytes)")
        out[name[:-4]] = (shape, dtype, size, info)
    return out


def read_member(zf, info):
    """The array of the member ``info`` (as :func:`npz_headers` lists it) of the open ``.npz``
    ``zf`` (never a pickle)."""
    with zf.open(info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _depth_errors(meta):
    """Why ``meta`` is nested deeper than :data:`_META_DEPTH` (empty when it is not); iterative,
    so that no depth exhausts the stack."""
    stack = [(meta, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > _META_DEPTH:
            return [f"'meta' is nested deeper than {_META_DEPTH} levels"]
        if isinstance(value, dict):
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
    return []


def size_mismatches(meta, n, d):
    """Why data with ``n`` samples and ``d`` features are not those ``meta`` records (its
    ``n`` and ``d`` where it has them): a list of messages, one per differing value, empty when they agree."""
    return [f"the certificate is for data with {key} = {meta[key]!r}, but the data given have {key} = {value} "
            "(other data?)" for key, value in (("n", n), ("d", d)) if key in meta and meta[key] != value]


def _size_errors(heads, meta, shape=None):
    """Members larger than the layout allows: ``m`` pieces (the rows of ``lo`` or the number of
    piece kinds in ``meta``, the larger) times ``n`` entries for a per-piece array, ``n`` times
    ``d`` for the data, with ``(n, d)`` the data's ``shape`` where they are known (else as
    ``meta`` records them, which must then agree with the data the file carries); the exact
    shapes are checked after reading, by :func:`~approxpath.certificate.fields.layout_errors`."""
    n, d = meta.get("n"), meta.get("d")
    if shape is not None:
        n, d = shape
    if not (is_stored_count(n) and is_stored_count(d)):
        return []  # older files: the memory guard alone
    kinds = meta.get("piece_kinds")
    claimed = [heads["lo"][0][0]] if "lo" in heads and len(heads["lo"][0]) == 1 else []
    claimed += [len(kinds)] if isinstance(kinds, list) else []
    if not claimed:
        return []
    m = max(claimed)
    # a sampled piece of a CVXPY-declared problem may store one value per sampled point: at most
    # 2**levels + 1 of them, levels <= 8 (checked by verify); a moving point at most MAX_POINTS
    # points and MAX_DEGREE + 1 weights each
    levels = meta.get("sample_levels", 1)
    points = max(2 ** min(levels, 8) + 1 if is_stored_count(levels) else 3, MAX_POINTS)
    errors = []
    for key, (dims, _, _, _) in heads.items():
        limit = n * d if key == "data_X" else (n if key == "data_y" else m * max(n, d, MAX_DEGREE + 1) * points)
        if math.prod(dims) > limit:
            errors.append(f"array {key!r} has shape {dims}: more entries than the layout's "
                          + (f"n x d = {n} x {d}" if key in DATA_FIELDS else
                             f"{m} pieces x max(n, d) = {max(n, d)} x {points} sampled points"))
    return errors


def _open_archive(file):
    """The zip archive of the certificate ``file``, opened after the checks that need no parsing
    of its directory: a regular file, a zip's signature, at most :data:`MAX_MEMBERS` members."""
    path = file_name("a certificate", file)
    if not path.exists():
        raise FileNotFoundError(f"certificate {str(file)!r} does not exist")
    if not path.is_file():
        raise _not_a_certificate(file, "it is a directory, a device or a pipe")
    with open(path, "rb") as fh:
        head = fh.read(4)
        count = _member_count(fh)
    if head not in (b"PK\x03\x04", b"PK\x05\x06"):
        text = head.decode("latin-1")
        hint = " (a data file? pass it with --data)" if text and all(c.isprintable() or c.isspace() for c in text) else ""
        raise _not_a_certificate(file, f"not a zip archive{hint}")
    if count is not None and count > MAX_MEMBERS:
        more = "at least " if count == 0xFFFF else ""
        raise _not_a_certificate(file, f"{more}{count} members (a certificate has at most {MAX_MEMBERS})")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _not_a_certificate(file, f"a damaged zip archive ({exc})") from None


def _meta_of(zf, heads, file):
    """The parsed ``meta`` member (popped from ``heads``): at most 1 M characters plus 256 per
    piece, nested at most :data:`_META_DEPTH` levels."""
    if "meta" not in heads:
        raise InputError(f"{str(file)!r} lacks 'meta': not a certificate written by approxpath")
    shape, dtype, size, info = heads.pop("meta")
    pieces = max((h[0][0] for k, h in heads.items() if h[0] and k not in DATA_FIELDS), default=0)
    limit = _META_CHARS + _META_CHARS_PER_PIECE * pieces
    if shape != () or dtype.kind != "U" or dtype.itemsize // 4 > limit:
        raise _not_a_certificate(file, f"'meta' must be JSON text of at most {limit} characters; got shape "
                                 f"{shape} of {dtype}")
    try:
        text = str(read_member(zf, info))
    except MemoryError:
        raise
    except Exception as exc:  # a bad CRC, a truncated or damaged stream (as for the arrays)
        raise _not_a_certificate(file, f"a damaged member 'meta' ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise InputError(f"{str(file)!r}: 'meta' is nested deeper than {_META_DEPTH} levels") from None
    except ValueError as exc:
        raise InputError(f"{str(file)!r}: 'meta' is not JSON ({exc})") from None
    errors = _depth_errors(meta)
    if errors:
        raise InputError(f"{str(file)!r}: {errors[0]}")
    return meta


def _unique_keys(pairs):
    """A JSON object's dict; ValueError for a key given twice (Python keeps the last value, other
    readers the first: two claims in one file, and the content hash sees only one of them)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {twice!r} is given twice")
    return out


def read_meta(file):
    """``(meta, names)``: the parsed ``meta`` of a certificate file (a dict for a certificate) and the
    names of its other members (without ``.npy``), with nothing else decompressed (the checks of
    :func:`read_certificate` that need no layout).  For deciding how to verify a file before its
    arrays are read.

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        No ``.npz`` (or a damaged one), no JSON ``meta`` within its limits, or members that
        :func:`npz_headers` refuses.
    """
    with _open_archive(file) as zf:
        heads = npz_headers(zf, file)
        return _meta_of(zf, heads, file), tuple(heads)


def read_certificate(file, layout=True, shape=None):
    """The raw arrays and the parsed ``meta`` of a certificate file: ``(arrays, meta)``.

    Nothing is decompressed before every member's declared size matches its array header and,
    with ``layout``, its size fits the certificate's layout (``m`` pieces from ``lo``, ``n`` and
    ``d`` of the data: at most m x n entries, the data n x d), and the whole fits in the memory
    available (:mod:`approxpath.memory`): a small file cannot ask for gigabytes.  ``meta`` itself
    is read first, at most 1 M characters plus 256 per piece and 32 levels deep; an archive of
    more than 256 members is refused before its directory is read.  Checkpoints are read with
    ``layout=False`` (the size checks and the memory guard only).

    Parameters
    ----------
    file : str or Path
    layout : bool
    shape : (int, int), optional
        ``(n, d)`` of the data the file will be verified on: the layout is bounded by them
        (and ``meta``'s ``n`` and ``d`` must be them) instead of by what ``meta`` records.

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        The file is no ``.npz`` (or a damaged one), has no JSON ``meta``, members whose sizes do
        not match, or needs more memory than there is.
    """
    from ..memory import Estimate, check_fits, verify_bytes

    with _open_archive(file) as zf:
        heads = npz_headers(zf, file)
        # nothing is decompressed before the whole fits in memory
        check_fits(Estimate((("stored arrays", float(sum(h[2] for h in heads.values()))),)), f"reading {str(file)!r}",
                   "read it on a machine with more memory")
        meta = _meta_of(zf, heads, file)
        stored = float(sum(h[2] for h in heads.values()))
        if layout and isinstance(meta, dict):
            wrong = [] if shape is None else size_mismatches(meta, *shape)
            if wrong:  # other data than the certificate's: not the file's fault
                held_out = isinstance(meta.get("folds"), list) and len(meta["folds"]) == 1  # (a hold-out choice)
                if held_out and meta.get("n") != shape[0]:
                    wrong.append("a hold-out choice's data are its training points followed by the held-out ones"
                                 + ("; the file carries them: leave the data out" if "data_X" in heads else ""))
                raise InputError(f"{str(file)!r}: {'; '.join(wrong)}")
            errors = _size_errors(heads, meta, shape)
            if errors:
                raise _not_a_certificate(file, "; ".join(errors))
            n, d = shape if shape is not None else (meta.get("n"), meta.get("d"))
            n, d = (v if is_stored_count(v) else 0 for v in (n, d))
            check_fits(verify_bytes(n, stored, _blocked_ok(meta.get("problem")), d), f"verifying {str(file)!r}",
                       "verify on a machine with more memory")
        try:
            arrays = {k: read_member(zf, h[3]) for k, h in heads.items()}
        except Exception as exc:  # a bad CRC, a truncated stream
            raise _not_a_certificate(file, f"a damaged member ({type(exc).__name__}: {exc})") from None
    return arrays, meta


def _blocked_ok(name):
    """Whether the bound of problem ``name`` can verify without n x n arrays (False for a name
    that is not a known problem: the verifier reports that later)."""
    from ..registry import get_bound

    if not isinstance(name, str):
        return False
    try:
        return bool(getattr(get_bound(name), "blocked_ok", False))
    except (InputError, ImportError, KeyError):  # an unknown problem: the dense estimate, the error later
        return False
