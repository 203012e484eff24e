"""Conformance checks of whole runs and their certificates (part of :data:`~approxpath.testing.checks.CHECKS`)."""

from __future__ import annotations

import tempfile
from pathlib import Path as FsPath

import numpy as np

__all__ = ["check_path_is_certified_and_verifies", "check_tampered_certificates_fail",
           "check_resumed_run_equals_uninterrupted", "certificate_differences", "TIMING"]

#: Meta fields that differ between runs of the same path (times, and the hash that covers them).
TIMING = frozenset({"wall_s", "solve_s", "certify_s", "content_sha256"})


def check_path_is_certified_and_verifies(ex):
    """The default strategy tiles the interval; with a piece bound every piece is certified;
    the certificate verifies."""
    from ..certificate import verify
    from ..driver import approximate_path

    problem = ex.problem
    path = approximate_path(problem, eps=ex.eps, interval=ex.interval)
    assert path.pieces[0].lo == ex.interval[0] and path.pieces[-1].hi == ex.interval[1], "the pieces miss an end"
    assert all(a.hi == b.lo for a, b in zip(path.pieces[:-1], path.pieces[1:])), "the pieces do not tile the interval"
    if problem.bound.interval_bound:
        assert path.certified, path.summary()
    assert path.max_gap_bound <= ex.eps, f"max gap bound {path.max_gap_bound!r} > eps {ex.eps!r}"
    with tempfile.TemporaryDirectory() as tmp:
        report = verify(path.save(FsPath(tmp) / "cert.npz"), problem.X, problem.y)
    assert report.ok, str(report)


def check_tampered_certificates_fail(ex):
    """Negative check: a certificate whose stored pair is changed (each problem array in turn,
    scaled and shifted; every moving piece's weights, span and points together; a span whose
    width overflows; its content hash recomputed so that only the math can catch it), or whose
    stored gap bounds are lowered, fails verification."""
    from ..certificate import verify
    from ..certificate.format import PIECE_FIELDS, content_sha256, read_certificate, write_npz
    from ..driver import approximate_path

    problem = ex.problem
    path = approximate_path(problem, eps=ex.eps, interval=ex.interval)
    with tempfile.TemporaryDirectory() as tmp:
        arrays, meta = read_certificate(path.save(FsPath(tmp) / "cert.npz"))
        forgeries = {"gap_bound": dict(arrays, gap_bound=arrays["gap_bound"] * 0.5 - 1e-3)}
        for key, a in arrays.items():
            if key not in PIECE_FIELDS and a.dtype.kind == "f" and np.any(a):
                forgeries[key] = dict(arrays, **{key: a * 1.7 + 0.3 * (np.abs(a).max() + 1.0)})
        for side in ("primal", "dual"):
            degree = arrays.get(f"{side}_degree")
            moving_rows = np.flatnonzero(degree > 0) if degree is not None else np.array([], dtype=int)
            if moving_rows.size:
                span = arrays[f"{side}_span"].copy()
                span[moving_rows] = [-1.5e308, 1.5e308]  # finite ends whose difference overflows
                forgeries[f"{side}_span overflow"] = dict(arrays, **{f"{side}_span": span})
                weights = arrays[f"{side}_weights"].copy()
                weights[moving_rows] *= -3.0  # every moving weight at once
                forgeries[f"{side} moving weights"] = dict(arrays, **{f"{side}_weights": weights})
        for key, forged in forgeries.items():
            forged_meta = dict(meta, content_sha256=content_sha256(forged, meta))
            file = write_npz(FsPath(tmp) / f"forged-{key}.npz", forged, forged_meta)
            report = verify(file, problem.X, problem.y)
            assert not report.ok, f"a certificate with a forged {key!r} verifies: {report}"


def certificate_differences(a, b):
    """The arrays and meta fields (:data:`TIMING` aside) in which the certificate files ``a`` and
    ``b`` differ, bit for bit (NaN equal to NaN); an array in one file only counts too.  A list of
    names: the arrays in one file only, then those in both that differ (:func:`numpy.array_equal`,
    NaN equal to NaN for float and complex arrays), then the meta fields that differ or are in
    one file only, each part sorted (files read by
    :func:`~approxpath.certificate.format.read_certificate`)."""
    from ..certificate.format import read_certificate

    (xa, ma), (xb, mb) = read_certificate(a), read_certificate(b)
    differ = sorted(set(xa) ^ set(xb))
    differ += [k for k in sorted(set(xa) & set(xb))
               if not np.array_equal(xa[k], xb[k], equal_nan=xa[k].dtype.kind in "fc" and xb[k].dtype.kind in "fc")]
    return differ + sorted(k for k in set(ma) | set(mb) if k not in TIMING and ma.get(k) != mb.get(k))


def check_resumed_run_equals_uninterrupted(ex):
    """A run stopped half-way (its budget of exact solves spent) and resumed from its checkpoint
    gives the uninterrupted run's certificate bit for bit: whatever the search keeps beside an
    exact solve and uses later (a warm start, a basis) is stored with it (``anchor_state`` and
    ``with_anchor_state``, where a problem has such state).  ``ex``: the :class:`Example` (problem,
    interval, eps); a run of fewer than 3 exact solves is not checked; the stopped run's budget is
    half the uninterrupted run's exact solves.  ``AssertionError`` when the stopped run left no
    checkpoint or the certificates differ (:func:`certificate_differences`, naming the fields)."""
    from ..driver import approximate_path
    from ..errors import BudgetExceededError

    problem = ex.problem
    whole = approximate_path(problem, eps=ex.eps, interval=ex.interval)
    if whole.exact_solves < 3:  # nothing to stop half-way
        return
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = FsPath(tmp) / "run.partial.npz"
        try:
            approximate_path(problem, eps=ex.eps, interval=ex.interval, checkpoint=checkpoint,
                             max_solves=whole.exact_solves // 2)
        except BudgetExceededError:
            pass
        assert checkpoint.exists(), "a run stopped by its budget left no checkpoint"
        resumed = approximate_path(problem, eps=ex.eps, interval=ex.interval, checkpoint=checkpoint, resume=True)
        differ = certificate_differences(whole.save(FsPath(tmp) / "a.npz"), resumed.save(FsPath(tmp) / "b.npz"))
    assert not differ, (f"the resumed run differs from the uninterrupted one in {differ} ({resumed.exact_solves} "
                        f"against {whole.exact_solves} exact solves, {len(resumed.pieces)} against "
                        f"{len(whole.pieces)} pieces): state the search keeps beside an exact solve is lost "
                        "on resume (give the problem anchor_state/with_anchor_state)")
