"""Re-checking a certificate with numpy alone (no solver is imported or called).

For every piece the verifier rebuilds the stored pair, checks its exact feasibility
(``Problem.certificate_errors``), recomputes the gap bound over the whole piece (certified
pieces) or at its sampled points (sampled pieces) and compares it with the stored
``gap_bound`` and with eps; it also checks that the pieces tile the interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .path import KINDS, PIECE_FIELDS, content_sha256, layout_errors, problem_from_meta, read_certificate
from .problem import InputError, scale_mid

__all__ = ["verify", "VerifyReport", "STORED_PAD", "failed_report", "read_for_verify", "claimed_on", "claim_failures"]

#: Stored gap bounds are the computed bound rounded up by this relative amount, so a verifier
#: whose BLAS sums in another order (last-bit differences) still finds its own rigorous bound
#: below the stored one; claims only get weaker.
STORED_PAD = 1e-9


# A stored bound may exceed the verifier's recomputation by the pad and by a few rounding
# margins (a bound computed from cached products of a mix adds 3 margins instead of 1, see
# problems/kernel_svm.py); more than this share of (bound + eps) is noted (a looser bound, e.g.
# written by an older version whose bound was less tight): a weaker claim, still proven.
_INFLATION = 1e-6


def stored_bound(bound):
    """The value written as ``gap_bound`` for a computed bound."""
    return float(bound + STORED_PAD * abs(bound) + 1e-300)


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


def claimed_on(problem, kind, lo, hi):
    """Where a piece of ``kind`` claims its gap bound: ``[(lo, hi)]`` for a certified piece (the
    whole of it), the points ``(x, x)`` at its ends and middle for a sampled one."""
    if kind == "certified":
        return [(lo, hi)]
    return [(x, x) for x in sorted({lo, scale_mid(lo, hi, problem.scale), hi})]


def claim_failures(problem, primal, dual, kind, lo, hi, stored, target_of, eps, version):
    """``(failures, notes)`` of one piece's claim: why the pair does not hold it (its exact
    feasibility, then its gap bound recomputed where the piece claims it, against the ``stored``
    bound and ``target_of(a, b)``), and true claims worth a note (a stored bound looser than
    ours).  ``version`` wrote the stored bound (named when only the stored number fails)."""
    errors = problem.certificate_errors(primal, dual, lo, hi)
    if errors:
        return list(errors), []
    failures, notes = [], []
    for a, b in claimed_on(problem, kind, lo, hi):
        bound = problem.gap_bound(primal, dual, a, b)
        target = target_of(a, b)
        if not bound <= stored:
            # a claim we cannot re-prove fails, even when eps itself holds (say so: a file
            # written by another version's tighter bound is not a forgery)
            holds = f"; this version's bound meets the eps target {target:.6g}, the stored number is not re-proven " \
                f"(written by approxpath {version})" if bound <= target else ""
            failures.append(f"recomputed gap bound {bound:.6g} on [{a:.6g}, {b:.6g}] exceeds the stored {stored:.6g}{holds}")
        elif kind == "certified" and not stored <= bound + _INFLATION * (abs(bound) + eps):
            notes.append(f"stored gap bound {stored:.6g} is looser than the recomputed {bound:.6g}")
        if not stored <= target:
            failures.append(f"stored gap bound {stored:.6g} exceeds eps target {target:.6g}")
    return failures, notes


def failed_report(*failures):
    """The :class:`VerifyReport` of a file that cannot be checked at all (unreadable, malformed)."""
    return VerifyReport(False, 0, 0, 0, tuple(failures), float("nan"))


def read_for_verify(file):
    """``(arrays, meta, failures)``: the certificate ``file`` and why it cannot be verified at all
    (unreadable, or :func:`~approxpath.path.layout_errors`; empty when it can be)."""
    try:
        arrays, meta = read_certificate(file)
    except InputError as exc:
        return None, None, [str(exc)]
    return arrays, meta, layout_errors(arrays, meta)


def verify(file, X, y):
    """Re-check the certificate ``file`` on the data ``X, y`` (preprocessed as recorded).

    A file that is not a well-formed certificate (unreadable, arrays missing or of the wrong
    dtype or shape, a newer format) fails verification.

    Returns
    -------
    VerifyReport
    """
    arrays, meta, malformed = read_for_verify(file)
    if malformed:
        if isinstance(meta, dict) and content_sha256(arrays, meta) != meta.get("content_sha256"):
            malformed.append("the file was modified after it was written (content sha256 differs)")
        return failed_report(*malformed)
    problem = problem_from_meta(meta, X, y)
    eps = float(meta["eps"])
    relative = bool(meta["relative"])
    t_lo, t_hi = (float(v) for v in meta["interval"])
    lo, hi, stored, kind = arrays["lo"], arrays["hi"], arrays["gap_bound"], arrays["kind"]
    failures, notes = [], []
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
            primal, dual = problem.from_arrays({key: v[i] for key, v in per_piece.items()})
        except KeyError as exc:  # the same for every piece: say it once
            failures.append(f"certificate lacks array {exc.args[0]!r} (needed by {problem.name})")
            counts[k] -= 1
            break
        except Exception as exc:
            failures.append(f"{where}: cannot rebuild its pair ({exc})")
            continue
        target_of = (lambda a, b, d=dual: eps * max(0.0, problem.dual_lower_bound(d, a, b))) if relative \
            else (lambda a, b: eps)
        bad, good = claim_failures(problem, primal, dual, k, float(lo[i]), float(hi[i]), float(stored[i]), target_of,
                                   eps, meta.get("library_version", "0.1 or earlier"))
        failures += [f"{where}: {e}" for e in bad]
        notes += [f"{where}: {e}" for e in good]
    ok = not failures
    return VerifyReport(ok, counts["certified"], counts["sampled"], counts["uncovered"], tuple(failures),
                        float(np.max(stored)), tuple(notes))
