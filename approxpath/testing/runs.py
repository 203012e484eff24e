"""Conformance checks of whole runs (part of :data:`~approxpath.testing.checks.CHECKS`)."""

from __future__ import annotations

import tempfile
from pathlib import Path as FsPath

import numpy as np

__all__ = ["check_resumed_run_equals_uninterrupted"]

# What may differ between two runs' certificates: their timings (and the hash over them).
_TIMING = ("wall_s", "solve_s", "certify_s", "content_sha256")


def check_resumed_run_equals_uninterrupted(ex):
    """A run stopped half-way (its budget of exact solves spent) and resumed from its checkpoint
    gives the uninterrupted run's certificate bit for bit: whatever the search keeps beside an
    exact solve and uses later (a warm start, a basis) is stored with it (``anchor_state`` and
    ``with_anchor_state``, where a problem has such state)."""
    from ..certificate.format import read_certificate
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
        (a, ma), (b, mb) = (read_certificate(p.save(FsPath(tmp) / f"{k}.npz")) for k, p in (("a", whole), ("b", resumed)))
    assert sorted(a) == sorted(b), f"the resumed run's certificate has other arrays: {sorted(set(a) ^ set(b))}"
    differ = [k for k in a if not np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind in "fc")]
    differ += [k for k in ma if k not in _TIMING and ma[k] != mb.get(k)]
    assert not differ, (f"the resumed run differs from the uninterrupted one in {differ} ({resumed.exact_solves} "
                        f"against {whole.exact_solves} exact solves, {len(resumed.pieces)} against "
                        f"{len(whole.pieces)} pieces): state the search keeps beside an exact solve is lost "
                        "on resume (give the problem anchor_state/with_anchor_state)")
