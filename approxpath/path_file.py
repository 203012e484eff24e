"""A path's certificate file: its pieces as arrays and back (the layout of
:mod:`approxpath.certificate.format`), and :func:`load_path`."""

from __future__ import annotations

import numpy as np

from .certificate.fields import layout_errors
from .certificate.format import DATA_FIELDS, FORMAT_VERSION, PIECE_FIELDS, read_certificate
from .certificate.legacy import upgrade
from .errors import InputError
from .result import Path, PathPiece, check_claims

__all__ = ["load_path", "pieces_to_arrays", "pieces_from_arrays", "problem_from_meta"]


def pieces_to_arrays(bound, pieces):
    """The certificate arrays of ``pieces``: the common per-piece fields (one entry per piece: ``lo``, ``hi``,
    ``gap_bound``, ``kind``, ``anchor_lo`` and ``anchor_hi``, the first and last anchor, NaN for a piece without)
    and the problem's pair arrays (``bound.pieces_to_arrays``, given ``(primal, dual, lo, hi)`` per piece).

    Raises
    ------
    ValueError
        The bound's arrays use a reserved name (a per-piece field, or ``meta``).
    """
    arrays = bound.pieces_to_arrays([(p.primal, p.dual, p.lo, p.hi) for p in pieces]) if pieces else {}
    clash = (set(PIECE_FIELDS) | {"meta"}) & set(arrays)
    if clash:
        raise ValueError(f"{bound.name}.to_arrays uses reserved names {sorted(clash)}")
    arrays.update(
        lo=np.array([p.lo for p in pieces], dtype=float),
        hi=np.array([p.hi for p in pieces], dtype=float),
        gap_bound=np.array([p.gap_bound for p in pieces], dtype=float),
        kind=np.array([p.kind for p in pieces], dtype="<U9"),
        anchor_lo=np.array([p.anchors[0] if p.anchors else np.nan for p in pieces], dtype=float),
        anchor_hi=np.array([p.anchors[-1] if p.anchors else np.nan for p in pieces], dtype=float),
    )
    return arrays


def pieces_from_arrays(bound, arrays, version=FORMAT_VERSION):
    """Inverse of :func:`pieces_to_arrays` (pairs are None without a bound, else read by
    ``bound.piece_from_arrays``; ``data_X`` and ``data_y`` are not read): one :class:`PathPiece` per entry of
    ``lo``, with anchors ``()`` where ``anchor_lo`` is NaN, one where both are equal, else both.  ``version``: the
    file's format (older layouts are read through :func:`~approxpath.certificate.legacy.upgrade`, where a bound is
    given)."""
    if bound is not None and version < FORMAT_VERSION:
        arrays = upgrade(bound, arrays)
    per_piece = {k: v for k, v in arrays.items() if k not in PIECE_FIELDS and k not in DATA_FIELDS}
    pieces = []
    for i in range(arrays["lo"].size):
        if bound is not None:
            lo, hi = float(arrays["lo"][i]), float(arrays["hi"][i])
            primal, dual = bound.piece_from_arrays({k: v[i] for k, v in per_piece.items()}, lo, hi)
        else:
            primal = dual = None
        a, b = float(arrays["anchor_lo"][i]), float(arrays["anchor_hi"][i])
        anchors = () if np.isnan(a) else ((a,) if a == b else (a, b))
        pieces.append(PathPiece(float(arrays["lo"][i]), float(arrays["hi"][i]), primal, dual,
                                float(arrays["gap_bound"][i]), str(arrays["kind"][i]), anchors))
    return pieces


def problem_from_meta(meta, X, y):
    """Rebuild the certificate's problem on data ``X, y`` (checked against the stored hash)."""
    from .certificate.inputs import check_data
    from .registry import get_problem

    return check_data(meta, get_problem(meta["problem"])(X, y, **meta["options"]))


def load_path(file, X=None, y=None, verify=True):
    """Read a certificate written by :meth:`Path.save`.

    With the data (``X, y``, or the data the file carries) the claims are verified first
    (:func:`approxpath.verify`) and the path has its problem; without them the pieces, bounds
    and metadata are there, the path is marked unverified (``verified=False``, hence not
    ``certified``) and ``primal(t)`` needs the data.

    Parameters
    ----------
    file : str or Path
    X, y : array_like, optional
    verify : bool
        Verify the claims when the data are available (``False``: load them unchecked, as an
        unverified path).

    Raises
    ------
    InputError
        The file is not a readable, well-formed certificate (:func:`layout_errors`), or it does
        not verify.
    """
    from .certificate.inputs import embedded_data, given_data
    from .certificate.selection import is_selection
    from .certificate.surface_selection import is_surface_selection
    from .certificate.surface import is_surface
    from .validate import flag

    given_data(X, y)
    verify = flag("verify", verify)
    arrays, meta = read_certificate(file)
    if is_surface(meta):  # (its meta's errors as a path's would be listed otherwise)
        raise InputError(f"{str(file)!r} is a surface certificate, not a path's: read it with approxpath.load_surface")
    if is_selection(meta) or is_surface_selection(meta):
        raise InputError(f"{str(file)!r} is a selection's certificate, not a path's: check it with approxpath.verify")
    errors = layout_errors(arrays, meta)
    if errors:
        raise InputError(f"{str(file)!r} is not a valid certificate: " + "; ".join(errors))
    if X is None and embedded_data(arrays) is not None:
        X, y = embedded_data(arrays)
    problem = problem_from_meta(meta, X, y) if X is not None else None
    verified = False
    if problem is not None and verify:
        check_claims(file, X, y)
        verified = True
    try:
        pieces = pieces_from_arrays(problem.bound if problem is not None else None, arrays,
                                    int(meta.get("format_version", 1)))
    except KeyError as exc:
        raise InputError(f"{str(file)!r} is not a valid certificate: certificate lacks array {exc.args[0]!r} "
                         f"(needed by {problem.name})") from None
    except ValueError as exc:
        raise InputError(f"{str(file)!r} is not a valid certificate: {exc}") from None
    return Path(
        problem=problem,
        eps=float(meta["eps"]),
        relative=bool(meta["relative"]),
        interval=tuple(meta["interval"]),
        pieces=tuple(pieces),
        exact_solves=int(meta.get("exact_solves", 0)),
        solve_points=tuple(meta.get("solve_points", ())),
        strategy=meta.get("strategy", "?"),
        wall_s=float(meta.get("wall_s", 0.0)),
        solve_s=float(meta.get("solve_s", 0.0)),
        certify_s=float(meta.get("certify_s", 0.0)),
        meta=meta,
        verified=verified,
    )
