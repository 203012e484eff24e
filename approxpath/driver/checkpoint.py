"""Checkpoints: the finished work of a run, so an interrupted run resumes where it stopped.

The file is an ``.npz`` in the certificate's container: the exact solves (``anchor_t`` and the
pairs' arrays prefixed ``anchor__``), the finished pieces (prefixed ``piece__``) and the
strategy's state, rewritten atomically after every exact solve or finished segment.  A resumed
run reuses the stored pairs bit for bit instead of solving again and continues from the stored
state, so its result equals an uninterrupted run's; every resumed piece is re-proven first.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..certificate.format import content_sha256, read_certificate, write_npz
from ..certificate.verify import claim_failures
from ..data import data_sha256
from ..errors import InputError
from ..result import pieces_from_arrays, pieces_to_arrays

__all__ = ["Checkpoint"]


class Checkpoint:
    """The checkpoint ``file`` of a run of ``problem`` with the settings ``run_key`` (eps,
    relative, interval, strategy): a checkpoint of another run is refused."""

    def __init__(self, file, problem, run_key):
        self.file = Path(file)
        self.problem = problem
        self.key = dict(run_key, problem=problem.name, options=problem.options(),
                        data_sha256=data_sha256(problem.X, problem.y))

    def save(self, run, pieces, state):
        """Write the anchors of ``run``, the finished ``pieces`` and the strategy ``state``."""
        bound = self.problem.bound
        ts = sorted(run.anchors)
        arrays = {"anchor_t": np.array(ts, dtype=float)}
        per = [bound.to_arrays(*run.anchors[t]) for t in ts]
        for k in per[0] if per else ():
            arrays[f"anchor__{k}"] = np.stack([np.asarray(d[k], dtype=float) for d in per])
        if pieces:
            for k, v in pieces_to_arrays(bound, pieces).items():
                arrays[f"piece__{k}"] = v
        meta = dict(run=self.key, state=state, solve_s=run.solve_s, certify_s=run.certify_s)
        write_npz(self.file, arrays, dict(meta, content_sha256=content_sha256(arrays, meta)))

    def load(self, run):
        """Fill ``run`` with the stored exact solves; ``(state, pieces)`` of the strategy (None
        when the file holds no state)."""
        if not self.file.exists():
            return None
        try:
            arrays, meta = read_certificate(self.file)
        except InputError as exc:  # truncated, empty or foreign files (read_certificate names the cause)
            raise InputError(f"{self.file} is not a readable checkpoint ({exc}): delete it and run again") from None
        if json.loads(json.dumps(self.key)) != meta.get("run"):
            raise InputError(f"{self.file} is a checkpoint of another run (problem, data, eps, interval or "
                             "strategy differ): delete it or drop --resume")
        if content_sha256(arrays, meta) != meta.get("content_sha256"):
            raise InputError(f"{self.file} was modified after it was written (content sha256 differs): "
                             "delete it and run again")
        bound = self.problem.bound
        per = {k[len("anchor__"):]: v for k, v in arrays.items() if k.startswith("anchor__")}
        for i, t in enumerate(arrays["anchor_t"]):
            run.anchors[float(t)] = bound.from_arrays({k: v[i] for k, v in per.items()})
        stored = {k[len("piece__"):]: v for k, v in arrays.items() if k.startswith("piece__")}
        pieces = pieces_from_arrays(bound, stored) if stored else []
        for i, piece in enumerate(pieces):  # a resumed claim is re-proven, never trusted
            why = _unproven(run, piece)
            if why:
                raise InputError(f"{self.file}: resumed piece {i} [{piece.lo:.6g}, {piece.hi:.6g}] does not re-prove "
                                 f"({why}): delete the checkpoint and run again")
        run.solve_s, run.certify_s = meta.get("solve_s", 0.0), meta.get("certify_s", 0.0)
        state = meta.get("state") or None
        return None if state is None else (state, pieces)

    def remove(self):
        if self.file.exists():
            self.file.unlink()


def _unproven(run, piece):
    """Why ``piece`` (read back from a file) does not hold its claim on ``run``'s problem, or
    None (:func:`~approxpath.certificate.verify.claim_failures`, against the run's target)."""
    if piece.kind == "uncovered":
        return None  # claims nothing
    if not (run.lo <= piece.lo <= piece.hi <= run.hi):
        return f"not inside [{run.lo:.6g}, {run.hi:.6g}]"
    pair = (piece.primal, piece.dual)
    from .. import __version__

    failures, _ = claim_failures(run.bound, *pair, piece.kind, piece.lo, piece.hi, piece.gap_bound,
                                 lambda a, b: run.target(pair, a, b), run.eps, __version__)
    return "; ".join(failures) or None
