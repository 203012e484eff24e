"""Re-checking a certificate with numpy alone.

The verifier builds only the problem's certificate side (:func:`approxpath.get_bound`: no
solver, no search code), from the data and the options the file records, and for every piece
rebuilds the stored pair, checks its exact feasibility on the whole piece (``Bound.errors``),
recomputes the gap bound over the whole piece (certified pieces) or at its sampled points
(sampled pieces) and compares it with the stored ``gap_bound`` and with the piece's target
(:func:`target`, the one definition the driver uses too); it also checks that the pieces tile
the interval and that the interval lies in the parameter's domain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import data_sha256
from ..errors import InputError
from ..numerics import log_mid
from .format import KINDS, PIECE_FIELDS, content_sha256, layout_errors, read_certificate

__all__ = ["verify", "VerifyReport", "target", "claimed_on", "claim_failures", "kernel_failures", "SAMPLE_LEVELS", "sample_points",
           "failed_report", "read_for_verify", "bound_from_meta"]

# A stored bound may exceed the verifier's recomputation by the pad and by a few rounding
# margins (a bound computed from cached products of a mix adds 3 margins instead of 1, see
# problems/kernel_svm/problem.py); more than this share of (bound + eps) is noted (a looser
# bound, e.g. written by an older version whose bound was less tight): a weaker claim, still
# proven.
_INFLATION = 1e-6


class _BadOptions(InputError):
    """The options a file records are outside the problem's domain."""


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`verify`.

    ``ok`` is true when every claim of the file holds: certified pieces for every parameter
    value, sampled pieces at their sampled points, and no piece is uncovered.
    """

    ok: bool
    certified: int
    sampled: int
    uncovered: int
    failures: tuple
    max_gap_bound: float
    notes: tuple = ()  # true claims worth knowing about (stored bounds looser than ours)

    def __str__(self):
        head = (f"{'OK' if self.ok else 'FAILED'}: {self.certified} certified, {self.sampled} sampled, "
                f"{self.uncovered} uncovered pieces; max gap bound {self.max_gap_bound:.4g}")
        return "\n".join([head] + [f"  - {f}" for f in self.failures] + [f"  note: {n}" for n in self.notes])


def target(bound, dual, lo, hi, eps, relative, pad=0.0):
    """The largest gap bound a piece ``[lo, hi]`` may claim: ``eps``, or with ``relative``
    ``eps`` times a lower bound of the optimal value on the piece (``bound.dual_floor``), made
    ``pad`` smaller (relative) -- the driver aims ``STORED_PAD`` below what a verifier whose
    BLAS rounds the last bits differently recomputes."""
    if not relative:
        return eps
    return eps * max(0.0, bound.dual_floor(dual, lo, hi)) * (1 - pad)


#: A sampled piece claims its gap at the 2**SAMPLE_LEVELS + 1 points of this many bisections of
#: the piece in log scale: its ends, quartiles and middle.  Between them nothing is proven; the
#: points are where a gap that is convex, or has at most one hump, between the ends would show a
#: violation (five point gaps per piece where 0.3.2 took three).  Certificates record it
#: (``sample_levels``); files without it were written with 1 (ends and middle).
SAMPLE_LEVELS = 2


def claimed_on(kind, lo, hi, levels=SAMPLE_LEVELS):
    """Where a piece of ``kind`` claims its gap bound: ``[(lo, hi)]`` for a certified piece (the
    whole of it), the points ``(x, x)`` of ``levels`` bisections in log scale
    (:func:`~approxpath.numerics.log_mid`, the driver's middle) for a sampled one: its ends and
    ``2**levels - 1`` interior points, increasing."""
    if kind == "certified":
        return [(lo, hi)]
    return [(x, x) for x in sorted(set(sample_points(lo, hi, levels)))]


def sample_points(lo, hi, levels=SAMPLE_LEVELS):
    """The ``2**levels + 1`` points of ``levels`` bisections of ``[lo, hi]`` in log scale, in
    order (a point repeats where a piece is too narrow to bisect in floating point)."""
    pts = [lo, hi]
    for _ in range(levels):
        pts = [x for a, b in zip(pts[:-1], pts[1:]) for x in (a, log_mid(a, b))] + [hi]
    return pts


# A file may say its sampled pieces claim at most 2**8 + 1 points each (more is no sampling a
# writer uses, and would only make verification slow).
_MAX_LEVELS = 8


def kernel_failures(bound, meta):
    """``(failures, notes)`` of the kernel a file records against the one its options build here:
    the family's definition (``kernel``) must match, and the sha256 of :math:`D`
    (``distances_sha256``, from 0.4.0) must match for a precomputed :math:`D` (data); a computed
    :math:`D` whose last bits differ from the writer's (another scipy, another summation order)
    is only noted, since every bound allows for the rounding of :math:`D`.  Files without the
    fields (0.3.2 and older) are gaussian and have nothing to compare."""
    describe = getattr(bound, "kernel_meta", None)
    if describe is None or ("kernel" not in meta and "distances_sha256" not in meta):
        return [], []
    mine = describe()
    failures, notes = [], []
    if "kernel" in meta and meta["kernel"] != mine["kernel"]:
        failures.append(f"the file's kernel {meta['kernel']!r} is not the one its options build ({mine['kernel']!r})")
    recorded = meta.get("distances_sha256")
    if recorded is not None and recorded != mine["distances_sha256"]:
        if bound.family == "precomputed":
            failures.append("the precomputed D differs from the one the certificate was written with (sha256)")
        else:
            notes.append(f"the {bound.family} distances computed here differ in their last bits from the writer's "
                         "(sha256); the bounds allow for that rounding")
    return failures, notes


def claim_failures(bound, primal, dual, kind, lo, hi, stored, target_of, eps, version, levels=SAMPLE_LEVELS):
    """``(failures, notes)`` of one piece's claim: why the pair does not hold it (its exact
    feasibility, then its gap bound recomputed where the piece claims it, against the ``stored``
    bound and ``target_of(a, b)``), and true claims worth a note (a stored bound looser than
    ours).  ``version`` wrote the stored bound (named when only the stored number fails);
    ``levels``: the sampling of sampled pieces (:func:`claimed_on`)."""
    if kind == "certified" and lo != hi and not bound.interval_bound:
        return [f"{bound.name} has no bound valid on a whole piece: its pieces are sampled, not certified"], []
    errors = bound.errors(primal, dual, lo, hi)
    if errors:
        return list(errors), []
    failures, notes = [], []
    for a, b in claimed_on(kind, lo, hi, levels):
        recomputed = bound.gap(primal, dual, a, b)
        goal = target_of(a, b)
        if not recomputed <= stored:
            # a claim we cannot re-prove fails, even when eps itself holds (say so: a file
            # written by another version's tighter bound is not a forgery)
            holds = f"; this version's bound meets the eps target {goal:.6g}, the stored number is not re-proven " \
                f"(written by approxpath {version})" if recomputed <= goal else ""
            failures.append(f"recomputed gap bound {recomputed:.6g} on [{a:.6g}, {b:.6g}] exceeds the stored {stored:.6g}{holds}")
        elif kind == "certified" and not stored <= recomputed + _INFLATION * (abs(recomputed) + eps):
            notes.append(f"stored gap bound {stored:.6g} is looser than the recomputed {recomputed:.6g}")
        if not stored <= goal:
            failures.append(f"stored gap bound {stored:.6g} exceeds eps target {goal:.6g}")
    return failures, notes


def failed_report(*failures):
    """The :class:`VerifyReport` of a file that cannot be checked at all (unreadable, malformed)."""
    return VerifyReport(False, 0, 0, 0, tuple(failures), float("nan"))


def read_for_verify(file):
    """``(arrays, meta, failures)``: the certificate ``file`` and why it cannot be verified at all
    (unreadable, or :func:`~approxpath.certificate.format.layout_errors`; empty when it can be)."""
    try:
        arrays, meta = read_certificate(file)
    except InputError as exc:
        return None, None, [str(exc)]
    return arrays, meta, layout_errors(arrays, meta)


def bound_from_meta(meta, X, y):
    """The certificate side of the file's problem on data ``X, y`` (checked against the stored
    hash), with the file's options.

    Raises
    ------
    InputError
        Bad data, an unknown problem, options outside their domains (a failure of the file, not
        of the data: the message starts with "options"), or data that do not match the file.
    """
    from ..registry import get_bound
    from ..validate import check_X_y

    X, y = check_X_y(X, y)
    try:
        cls = get_bound(meta["problem"])
    except KeyError as exc:
        raise InputError(exc.args[0]) from None
    try:
        bound = cls(X, y, **meta["options"])
    except InputError as exc:
        raise _BadOptions(f"options: {exc}") from None
    digest = data_sha256(bound.X, bound.y)
    if digest != meta.get("data_sha256"):
        raise InputError(
            "the data do not match the certificate (sha256 of the preprocessed arrays differs): "
            f"certificate {meta.get('data_sha256')}, data {digest}; check the file and --preprocess"
        )
    return bound


def verify(file, X, y):
    """Re-check the certificate ``file`` on the data ``X, y`` (preprocessed as recorded).

    A file that is not a well-formed certificate (unreadable, arrays missing or of the wrong
    dtype or shape, a newer format, options or an interval outside the problem's domain) fails
    verification.

    Returns
    -------
    VerifyReport
    """
    arrays, meta, malformed = read_for_verify(file)
    if malformed:
        if isinstance(meta, dict) and content_sha256(arrays, meta) != meta.get("content_sha256"):
            malformed.append("the file was modified after it was written (content sha256 differs)")
        return failed_report(*malformed)
    try:
        bound = bound_from_meta(meta, X, y)
    except _BadOptions as exc:
        return failed_report(str(exc))
    t_lo, t_hi = (float(v) for v in meta["interval"])
    try:
        bound.check_interval(t_lo, t_hi)
    except InputError as exc:
        return failed_report(f"meta: {exc}")
    levels = meta.get("sample_levels", 1)
    if not (isinstance(levels, int) and not isinstance(levels, bool) and 1 <= levels <= _MAX_LEVELS):
        return failed_report(f"meta 'sample_levels' must be an integer in [1, {_MAX_LEVELS}]; got {levels!r}")
    eps = float(meta["eps"])
    relative = bool(meta["relative"])
    lo, hi, stored, kind = arrays["lo"], arrays["hi"], arrays["gap_bound"], arrays["kind"]
    failures, notes = kernel_failures(bound, meta)
    if content_sha256(arrays, meta) != meta.get("content_sha256"):
        failures.append("the file was modified after it was written (content sha256 differs)")
    m = lo.size
    if m == 0:
        return VerifyReport(False, 0, 0, 0, ("the certificate has no pieces",), float("nan"))
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        failures.append("piece ends are not finite")
    if lo[0] != t_lo or hi[-1] != t_hi:
        failures.append(f"pieces cover [{lo[0]!r}, {hi[-1]!r}], not the interval [{t_lo!r}, {t_hi!r}]")
    for k in np.flatnonzero(hi[:-1] != lo[1:]):
        failures.append(f"pieces {k} and {k + 1} do not meet: hi = {hi[k]!r}, next lo = {lo[k + 1]!r}")
    for k in np.flatnonzero(lo > hi):
        failures.append(f"piece {k}: lo = {lo[k]!r} > hi = {hi[k]!r}")
    if list(map(str, kind)) != list(meta.get("piece_kinds", [])):
        failures.append("the kinds in 'meta' differ from the 'kind' array")
    per_piece = {k: v for k, v in arrays.items() if k not in PIECE_FIELDS}
    counts = dict.fromkeys(KINDS, 0)
    for i in range(m):
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
            primal, dual = bound.from_arrays({key: v[i] for key, v in per_piece.items()})
        except KeyError as exc:  # the same for every piece: say it once
            failures.append(f"certificate lacks array {exc.args[0]!r} (needed by {bound.name})")
            counts[k] -= 1
            break
        except Exception as exc:
            failures.append(f"{where}: cannot rebuild its pair ({exc})")
            continue
        bad, good = claim_failures(bound, primal, dual, k, float(lo[i]), float(hi[i]), float(stored[i]),
                                   lambda a, b, d=dual: target(bound, d, a, b, eps, relative),
                                   eps, meta.get("library_version", "0.1 or earlier"), levels)
        failures += [f"{where}: {e}" for e in bad]
        notes += [f"{where}: {e}" for e in good]
    ok = not failures
    return VerifyReport(ok, counts["certified"], counts["sampled"], counts["uncovered"], tuple(failures),
                        float(np.max(stored)), tuple(notes))
