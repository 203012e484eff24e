"""Conformance checks of whole runs (part of :data:`~approxpath.testing.checks.CHECKS`)."""

from __future__ import annotations

import tempfile
from pathlib import Path as FsPath

import numpy as np

__all__ = ["check_resumed_run_equals_uninterrupted", "certificate_differences", "TIMING"]

#: Meta fields that differ between runs of the same path (times, and the hash that covers them).
TIMING = frozenset({"wall_s", "solve_s", "certify_s", "content_sha256"})


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
