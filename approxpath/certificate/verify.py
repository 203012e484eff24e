"""Re-checking a certificate with numpy alone.

The verifier builds only the problem's certificate side (:func:`approxpath.get_bound`: no
solver, no search code), from the data and the options the file records, checks every field of
the file against its domain (the options and the interval against the problem's, the pieces
inside the interval, the data's size and hash against the file's), and for every piece rebuilds
the stored pair, checks its exact feasibility on the whole piece (``Bound.errors``), recomputes
the gap bound over the whole piece (certified pieces) or at its sampled points (sampled pieces)
and compares it with the stored ``gap_bound`` and with the piece's target (:func:`~approxpath.certificate.claims.target`, the
one definition the driver uses too); it also checks that the pieces tile the interval.  The
report says what was certified (problem, options, eps, interval, data hash), and a caller may
require a claim at least as strong as its own (``eps``, ``interval``, ``data_sha256``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..compute.parallelism import managed
from ..errors import InputError
from ..progress import count_bar
from ..validate import file_name
from .claims import claim_failures, target
from .requirements import check_requirements, requirement_failures
from .fields import layout_errors, meta_errors, unknown_arrays
from .inputs import (BadOptions, DataMismatch, bound_from_meta, carried_data_failures, embedded_data, given_data,
                     kernel_failures, shape_of)
from .format import DATA_FIELDS, FORMAT_VERSION, KINDS, PIECE_FIELDS, content_sha256, read_certificate, size_mismatches
from .legacy import upgrade
from .report import VerifyReport, claim_of, describe_claim, failed_report
from .selection import is_selection, selection_layout_errors, selection_meta_errors, verify_selection
from .surface import is_surface, surface_layout_errors, surface_meta_errors, verify_surface
from .surface_selection import (is_surface_selection, surface_selection_layout_errors, surface_selection_meta_errors,
                                verify_surface_selection)

__all__ = ["verify", "verify_path", "VerifyReport", "failed_report", "read_for_verify", "any_meta_errors", "claim_of",
           "describe_claim"]


# A file may say its sampled pieces claim at most 2**8 + 1 points each (more is no sampling a
# writer uses, and would only make verification slow).
_MAX_LEVELS = 8


def read_for_verify(file, shape=None):
    """``(arrays, meta, failures)``: the certificate ``file`` and why it cannot be verified at all
    (unreadable, or :func:`~approxpath.certificate.fields.layout_errors`; empty when it can be).
    ``shape``: ``(n, d)`` of the data it will be verified on, which bound its layout
    (:func:`~approxpath.certificate.format.read_certificate`).  ``arrays`` and ``meta`` are None
    where the file cannot be read (the :class:`InputError` of reading is the failure); else the
    failures are a surface's (:func:`~approxpath.certificate.surface.surface_layout_errors`) or a
    path's layout errors.  A missing file's ``FileNotFoundError`` is not caught."""
    try:
        arrays, meta = read_certificate(file, shape=shape)
    except InputError as exc:
        return None, None, [str(exc)]
    if is_surface(meta):
        return arrays, meta, surface_layout_errors(arrays, meta)
    if is_selection(meta):
        return arrays, meta, selection_layout_errors(arrays, meta)
    if is_surface_selection(meta):
        return arrays, meta, surface_selection_layout_errors(arrays, meta)
    return arrays, meta, layout_errors(arrays, meta)


def any_meta_errors(meta):
    """What is wrong with a certificate's ``meta``, each field against its domain, as the kind it says it
    is (a surface's, a choice's over one or both parameters, else a path's); empty when sound."""
    errors = (surface_meta_errors if is_surface(meta) else selection_meta_errors if is_selection(meta) else
              surface_selection_meta_errors if is_surface_selection(meta) else meta_errors)
    return errors(meta)


def _field_failures(meta, bound, arrays, t_lo, t_hi):
    """The relations between fields (and with the data) that no single domain states."""
    out = []
    n, d = bound.X.shape
    out += size_mismatches(meta, n, d)
    if meta.get("parameter", bound.parameter) != bound.parameter:
        out.append(f"meta 'parameter' = {meta['parameter']!r} but the options say {bound.parameter!r}")
    kernels = getattr(bound, "kernels", None)
    if kernels is not None and not kernels.checks()[0]:
        out.append("the data's squared distances overflow double precision: no kernel bound holds on them")
    out += carried_data_failures(arrays, meta)
    outside = [x for x in meta.get("solve_points", []) if not t_lo <= x <= t_hi]
    if outside:
        out.append(f"meta 'solve_points' has {len(outside)} point(s) outside the interval (first {outside[0]!r})")
    for key in ("anchor_lo", "anchor_hi"):
        a = arrays[key]
        bad = np.flatnonzero(~np.isnan(a) & ~((t_lo <= a) & (a <= t_hi)))
        if bad.size:
            out.append(f"array {key!r}: piece {int(bad[0])}'s exact solve {float(a[bad[0]])!r} is outside the interval")
    return out


@managed
def verify(file, X=None, y=None, *, eps=None, relative=False, interval=None, data_sha256=None, box=None,
           progress=False):
    """Re-check the certificate ``file`` on the data ``X, y`` (preprocessed as recorded): a
    path's, or a surface's (:func:`~approxpath.certificate.surface.verify_surface`, counting cells).

    A file that is not a well-formed certificate (unreadable, arrays missing or of the wrong
    dtype or shape, a field outside its domain, a newer format, options or an interval outside
    the problem's domain) fails verification.

    Parameters
    ----------
    file : str or Path
    X, y : array_like, optional
        The data; omitted, the data the certificate carries (written by ``Path.save`` from
        Python when no data file is known).
    eps : float, optional
        Require the claim to be at least this strong: its eps at most ``eps`` (and relative
        exactly when ``relative``).
    relative : bool
    interval : (float, float), optional
        Require the claim's interval (a surface's bandwidths) to contain this one.
    data_sha256 : str, optional
        Require the claim to be about the data with this hash.
    box : ((float, float), (float, float)), optional
        Require a surface's box to contain this one.
    progress : bool
        A bar over the pieces (or cells) on stderr (the ``progress`` extra, tqdm).

    Returns
    -------
    VerifyReport

    Raises
    ------
    InputError
        Data that are no data, that do not match the certificate (:class:`DataMismatch`), or
        a requirement that is not well formed (``eps`` not a positive number, ``relative`` not a
        bool or without ``eps``, an interval or box side with ``lo > hi``, a hash that is not
        text: :func:`~approxpath.certificate.requirements.check_requirements`), or a ``file``
        that is no file name (None, a number).
    """
    check_requirements(eps, relative, interval, data_sha256, box)  # a usage error before the file is read
    file_name("the certificate", file)
    given_data(X, y)
    arrays, meta, malformed = read_for_verify(file, None if X is None or y is None else shape_of(X, y))
    if malformed:
        if isinstance(meta, dict) and content_sha256(arrays, meta) != meta.get("content_sha256"):
            malformed.append("the file was modified after it was written (content sha256 differs)")
        return failed_report(*malformed)
    if X is not None and y is not None:
        return _verify_on(arrays, meta, X, y, "as given", eps, relative, interval, data_sha256, box, progress)
    carried = embedded_data(arrays)
    if carried is None:
        raise InputError(f"{str(file)!r} carries no data and none were given: pass X, y (the CLI: --data FILE)")
    source = "carried in the certificate"
    try:  # the data are the file's: what is wrong with them is a failure of the file
        return _verify_on(arrays, meta, *carried, source, eps, relative, interval, data_sha256, box, progress)
    except DataMismatch:
        why = "the data the certificate carries do not match its data_sha256"
    except InputError as exc:
        why = f"the data the certificate carries: {exc}"
    return failed_report(why, claim=claim_of(meta, source))


def _verify_on(arrays, meta, X, y, source, eps, relative, interval, data_sha256, box, progress):
    """:func:`verify` of a well-formed certificate on the data ``X, y`` (from ``source``)."""
    if is_surface(meta):
        report = verify_surface(arrays, meta, X, y, eps=eps, relative=relative, box=box, interval=interval,
                                data_sha256=data_sha256, progress=progress)
        return replace(report, claim=dict(report.claim, data=source))
    if is_selection(meta):
        return verify_selection(arrays, meta, X, y, source=source, eps=eps, relative=relative, interval=interval,
                                data_sha256=data_sha256, box=box)
    if is_surface_selection(meta):
        return verify_surface_selection(arrays, meta, X, y, source=source, eps=eps, relative=relative,
                                        interval=interval, data_sha256=data_sha256, box=box)
    return verify_path(arrays, meta, X, y, source, eps, relative, interval, data_sha256, box, progress)


def verify_path(arrays, meta, X, y, source, eps=None, relative=False, interval=None, data_sha256=None, box=None,
                progress=False):
    """:func:`verify` of a path's certificate already read (``arrays``, ``meta``, whose layout
    :func:`~approxpath.certificate.fields.layout_errors` accepts) on the data ``X, y`` (from ``source``,
    said in the report)."""
    claim = claim_of(meta, source)
    try:
        bound = bound_from_meta(meta, X, y)
    except BadOptions as exc:
        return failed_report(str(exc), claim=claim)
    t_lo, t_hi = (float(v) for v in meta["interval"])
    try:
        bound.check_interval(t_lo, t_hi)
    except InputError as exc:
        return failed_report(f"meta: {exc}", claim=claim)
    levels = meta.get("sample_levels", 1)
    if not (isinstance(levels, int) and not isinstance(levels, bool) and 1 <= levels <= _MAX_LEVELS):
        return failed_report(f"meta 'sample_levels' must be an integer in [1, {_MAX_LEVELS}]; got {levels!r}", claim=claim)
    eps_claim = float(meta["eps"])
    relative_claim = bool(meta["relative"])
    lo, hi, stored, kind = arrays["lo"], arrays["hi"], arrays["gap_bound"], arrays["kind"]
    failures = requirement_failures(meta, eps, relative, interval, data_sha256)
    if box is not None:  # (a path covers one parameter: a box required of it is not met, never ignored)
        over = meta.get("parameter", "bandwidth")
        failures.append(f"required a box of both parameters, but the certificate is a path over {over}, not a surface")
    failures += _field_failures(meta, bound, arrays, t_lo, t_hi)
    kernel_bad, notes = kernel_failures(bound, meta)
    failures += kernel_bad
    if content_sha256(arrays, meta) != meta.get("content_sha256"):
        failures.append("the file was modified after it was written (content sha256 differs)")
    m = lo.size
    if m == 0:
        return failed_report("the certificate has no pieces", *failures, claim=claim)
    if lo[0] != t_lo or hi[-1] != t_hi:
        failures.append(f"pieces cover [{float(lo[0])!r}, {float(hi[-1])!r}], not the interval [{t_lo!r}, {t_hi!r}]")
    for k in np.flatnonzero(hi[:-1] != lo[1:]):
        failures.append(f"pieces {k} and {k + 1} do not meet: hi = {float(hi[k])!r}, next lo = {float(lo[k + 1])!r}")
    for k in np.flatnonzero(~(lo <= hi)):
        failures.append(f"piece {k}: lo = {float(lo[k])!r} > hi = {float(hi[k])!r}")
    if "piece_kinds" in meta and list(map(str, kind)) != meta["piece_kinds"]:  # (provenance: may be left out)
        failures.append("the kinds in 'meta' differ from the 'kind' array")
    counts = dict.fromkeys(KINDS, 0)
    try:  # files of formats 1 and 2 store each problem's pairs in its own older layout
        pairs = upgrade(bound, arrays) if meta["format_version"] < FORMAT_VERSION else arrays
    except KeyError as exc:
        return failed_report(f"certificate lacks array {exc.args[0]!r} (needed by {bound.name})", *failures,
                             claim=claim)
    except ValueError as exc:
        return failed_report(f"cannot read its pairs ({exc})", *failures, claim=claim)
    per_piece = {k: v for k, v in pairs.items() if k not in PIECE_FIELDS and k not in DATA_FIELDS}
    if meta["format_version"] == FORMAT_VERSION:  # (older layouts keep arrays their upgrade leaves unread)
        failures += unknown_arrays(per_piece, bound)
    bar = count_bar(progress, m, "verify", "pieces")
    for i in range(m):
        if bar is not None and i:
            bar.done()  # (the pieces before i)
        k = str(kind[i])
        if k not in KINDS:
            failures.append(f"piece {i}: unknown kind {k!r}")
            continue
        counts[k] += 1
        if k == "uncovered":
            failures.append(f"piece {i} [{lo[i]:.6g}, {hi[i]:.6g}] is uncovered (gap {stored[i]:.3g} > eps)")
            continue
        where = f"piece {i} [{lo[i]:.6g}, {hi[i]:.6g}]"
        if not (t_lo <= lo[i] <= hi[i] <= t_hi):
            failures.append(f"{where}: not a sub-interval of [{t_lo:.6g}, {t_hi:.6g}]; its gap is not evaluated")
            continue
        try:
            primal, dual = bound.piece_from_arrays({key: v[i] for key, v in per_piece.items()}, float(lo[i]),
                                                   float(hi[i]))
        except KeyError as exc:  # the same for every piece: say it once
            failures.append(f"certificate lacks array {exc.args[0]!r} (needed by {bound.name})")
            counts[k] -= 1
            break
        except Exception as exc:
            failures.append(f"{where}: cannot rebuild its pair ({exc})")
            continue
        try:  # (an overflow on an absurd pair ends as inf or NaN, which fails the claim: numpy's warning says no more)
            with np.errstate(over="ignore", invalid="ignore"):
                bad, good = claim_failures(bound, primal, dual, k, float(lo[i]), float(hi[i]), float(stored[i]),
                                           lambda a, b, d=dual: target(bound, d, a, b, eps_claim, relative_claim),
                                           eps_claim, meta.get("library_version", "0.1 or earlier"), levels)
        except Exception as exc:  # a pair the bound cannot evaluate is not verified; say why, go on
            bad, good = [f"its bound cannot be evaluated ({type(exc).__name__}: {exc})"], []
        failures += [f"{where}: {e}" for e in bad]
        notes += [f"{where}: {e}" for e in good]
    if bar is not None:
        bar.done()
        bar.close()
    if bound.interval_bound and counts["sampled"]:  # approxpath writes such pieces certified
        notes.append(f"{counts['sampled']} piece(s) claim their gap only at sampled points, although {bound.name}'s "
                     "bound holds on whole pieces: a weakened file? --require-certified refuses it")
    ok = not failures
    return VerifyReport(ok, counts["certified"], counts["sampled"], counts["uncovered"], tuple(failures),
                        float(np.max(stored)), tuple(notes), claim, claims_hold=len(failures) == counts["uncovered"])
