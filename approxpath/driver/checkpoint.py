"""Checkpoints: the finished work of a run, so an interrupted run resumes where it stopped.

The file is an ``.npz`` in the certificate's container: the exact solves (``anchor_t`` and the
pairs' arrays prefixed ``anchor__``), the finished pieces (prefixed ``piece__``) and the
strategy's state at the end of its last finished segment.  It is first written right after the
first exact solve, then rewritten atomically after exact solves and finished segments, at most
every :data:`EVERY` seconds and so that writing takes at most 1/:data:`_COST_SHARE` of the run
(an interruption by Ctrl-C or SIGTERM writes the latest state first).  A resumed run replays
the strategy from the stored state, taking each stored exact solve bit for bit when it reaches
it instead of solving again, so its result equals an uninterrupted run's; every resumed piece
is re-proven first.  A run holds a lock on its checkpoint (``.NAME.lock`` next to it, an
``flock`` the system releases when the process ends, however it ends): a second run on the same
checkpoint is refused at once.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np

from ..certificate.format import FORMAT_VERSION, content_sha256, read_certificate, remove_stale_temps, write_npz
from ..certificate.claims import claim_failures
from ..data import data_sha256
from ..errors import InputError
from ..path_file import pieces_from_arrays, pieces_to_arrays
from ..validate import file_name, is_real

__all__ = ["Checkpoint", "EVERY", "discard_checkpoint"]

#: Seconds between two writes of a checkpoint at most (a kill loses at most this much work, and
#: the first exact solve is written at once).
EVERY = 2.0
# ... and at least this many times the last write's duration: writing takes at most 1/20 = 5 %
# of a run whatever the file's size (a rewrite is synced to disk).
_COST_SHARE = 20
# Written uncompressed: doubles compress poorly, and zlib took 0.2 s of a 0.22 s write (klasso,
# sinc n = 200, 352 pieces; 0.03 s uncompressed, files twice as large).
_COMPRESS = False


class Checkpoint:
    """The checkpoint ``file`` of a run of ``problem`` with the settings ``run_key`` (eps,
    relative, interval, strategy): a checkpoint of another run is refused."""

    def __init__(self, file, problem, run_key, inputs=()):
        self.file = file_name("the checkpoint", file)
        if self.file.is_dir():
            raise InputError(f"the checkpoint {self.file} is a folder: name a file in it (e.g. {self.file / 'run.npz'})")
        self.problem = problem
        self.inputs = tuple(inputs)
        self.key = dict(run_key, problem=problem.name, options=problem.options(),
                        data_sha256=data_sha256(problem.X, problem.y))
        self._last = None  # (time of the last write, its duration)
        self._started = time.perf_counter()
        self.earlier_wall_s = 0.0  # wall seconds of the runs this one resumes (:meth:`load`)
        self._pending = None  # (run, pieces, state) not yet written
        self._lock = _lock(self.file)
        # what the search keeps beside an exact solve (a warm start), stored with it: a problem's
        # ``anchor_state(pair)`` -> {name: array} and ``with_anchor_state(pair, t, state)``
        kept = (getattr(problem, "anchor_state", None), getattr(problem, "with_anchor_state", None))
        self._states = kept if all(kept) else None
        remove_stale_temps(self.file)

    def release(self):
        """Let another run use the checkpoint (the end of this run)."""
        if self._lock is not None:
            _unlock(self._lock)
            self._lock = None

    def save(self, run, pieces, state, placed=(), force=False):
        """Record the exact solves of ``run``, the finished ``pieces``, the strategy ``state`` and
        the exact solves ``placed`` by then (a resumed run starts with these; the later ones wait
        until the replay asks for them): written now if ``force``, if nothing was written yet, or
        if the last write is :data:`EVERY` seconds and 20 of its durations ago; else kept for the
        next write (:meth:`flush`)."""
        self._pending = (run, pieces, state, list(placed))
        now = time.perf_counter()
        if force or self._last is None or now - self._last[0] >= max(EVERY, _COST_SHARE * self._last[1]):
            self.flush()

    def flush(self):
        """Write what :meth:`save` kept, if anything."""
        if self._pending is None:
            return
        run, pieces, state, placed = self._pending
        self._pending = None
        t0 = time.perf_counter()
        self._write(run, pieces, state, placed)
        t1 = time.perf_counter()
        self._last = (t1, t1 - t0)

    def _write(self, run, pieces, state, placed):
        bound = self.problem.bound
        solved = {**run.stored, **run.anchors}  # a resumed run's stored solves not reached yet too
        ts = sorted(solved)
        arrays = {"anchor_t": np.array(ts, dtype=float)}
        if ts:
            for k, v in bound.pieces_to_arrays([(*solved[t], t, t) for t in ts]).items():
                arrays[f"anchor__{k}"] = v
            if self._states is not None:
                arrays.update(_stacked_states([self._states[0](solved[t]) for t in ts]))
        if pieces:
            for k, v in pieces_to_arrays(bound, pieces).items():
                arrays[f"piece__{k}"] = v
        meta = dict(run=self.key, state=state, placed=placed, solve_s=run.solve_s, certify_s=run.certify_s,
                    wall_s=self.earlier_wall_s + time.perf_counter() - self._started, layout=FORMAT_VERSION)
        write_npz(self.file, arrays, dict(meta, content_sha256=content_sha256(arrays, meta)), inputs=self.inputs,
                  compress=_COMPRESS)

    def load(self, run):
        """Fill ``run`` with the stored exact solves; ``(state, pieces)`` of the strategy (None
        when the file holds no state)."""
        if not self.file.exists():
            return None
        try:
            arrays, meta = read_certificate(self.file, layout=False)
        except InputError as exc:  # truncated, empty or foreign files (read_certificate names the cause)
            raise InputError(f"{self.file} is not a readable checkpoint ({exc}): {_AFRESH}") from None
        if isinstance(meta, dict) and "format_version" in meta and "run" not in meta:
            raise InputError(f"{self.file} is a certificate (a finished run's output), not a checkpoint: {_AFRESH}")
        key, saved = json.loads(json.dumps(self.key)), meta.get("run") if isinstance(meta, dict) else None
        if key != saved:
            differ = [k for k in key if k in saved and key[k] != saved[k]] if isinstance(saved, dict) else []
            said = " and ".join(differ) if differ else "problem, options, data, eps, interval or strategy"
            raise InputError(f"{self.file} is a checkpoint of another run (they differ in {said}): {_AFRESH}")
        if content_sha256(arrays, meta) != meta.get("content_sha256"):
            raise InputError(f"{self.file} was modified after it was written (content sha256 differs): {_AFRESH}")
        if meta.get("layout") != FORMAT_VERSION:
            raise InputError(f"{self.file} is a checkpoint written by another approxpath version (layout "
                             f"{meta.get('layout', 'before 3')!r}): {_AFRESH}")
        bound = self.problem.bound
        per = {k[len("anchor__"):]: v for k, v in arrays.items() if k.startswith("anchor__")}
        placed = set(meta.get("placed", arrays["anchor_t"].tolist()))  # files without the list: all
        states = _unstacked_states(arrays)
        for i, t in enumerate(arrays["anchor_t"]):  # the later ones are taken when the replay asks for them
            pair = bound.piece_from_arrays({k: v[i] for k, v in per.items()}, float(t), float(t))
            if self._states is not None:
                pair = self._states[1](pair, float(t), states[i])
            (run.anchors if float(t) in placed else run.stored)[float(t)] = pair
        stored = {k[len("piece__"):]: v for k, v in arrays.items() if k.startswith("piece__")}
        pieces = pieces_from_arrays(bound, stored) if stored else []
        for i, piece in enumerate(pieces):  # a resumed claim is re-proven, never trusted
            why = _unproven(run, piece)
            if why:
                raise InputError(f"{self.file}: resumed piece {i} [{piece.lo:.6g}, {piece.hi:.6g}] does not re-prove "
                                 f"({why}): {_AFRESH}")
        state = meta.get("state") or None
        why = _position_error(run, pieces, state)
        if why:  # (the sha256 finds accidents, not an edit that re-hashes the file)
            raise InputError(f"{self.file}: {why}: {_AFRESH}")
        run.solve_s, run.certify_s = meta.get("solve_s", 0.0), meta.get("certify_s", 0.0)
        self.earlier_wall_s = float(meta.get("wall_s", 0.0))
        return None if state is None else (state, pieces)

    def remove(self):
        """Delete the checkpoint (the path is complete and stored) and any temporary file of it."""
        self._pending = None
        discard_checkpoint(self.file)


# What a message about a checkpoint that cannot be resumed advises: never to delete the user's
# file (it may be the only copy of a long run's work).
_AFRESH = "keep it, and start a new run with another checkpoint (--checkpoint FILE, or another --out)"


def _stacked_states(states):
    """Arrays of the anchors' states (dicts of equal keys and shapes, or ``{}``): a mask
    ``anchor_state`` of those that have one and each field stacked (zeros where none)."""
    first = next((s for s in states if s), None)
    out = {"anchor_state": np.array([bool(s) for s in states])}
    for k, v in (first or {}).items():
        v = np.asarray(v)
        out[f"anchor_state__{k}"] = np.stack([np.asarray(s[k], dtype=v.dtype) if s else np.zeros_like(v) for s in states])
    return out


def _unstacked_states(arrays):
    """Each anchor's state from :func:`_stacked_states`' arrays (``{}`` where none, and for a
    file without them)."""
    has = arrays.get("anchor_state", np.zeros(arrays["anchor_t"].size, dtype=bool))
    fields = {k[len("anchor_state__"):]: v for k, v in arrays.items() if k.startswith("anchor_state__")}
    return [{k: v[i] for k, v in fields.items()} if has[i] else {} for i in range(has.size)]


def discard_checkpoint(file):
    """Delete the checkpoint ``file`` and the temporary files of killed writers of it: the run is
    complete and its result stored (see ``keep_checkpoint`` of
    :func:`~approxpath.driver.approximate_path`).  A missing ``file`` is no error: its temporary files
    ``.<name>.<pid>.tmp`` are removed still."""
    file = Path(file)
    if file.exists():
        file.unlink()
    remove_stale_temps(file)


def _lock(file):
    """An open lock file ``.NAME.lock`` next to the checkpoint ``file``, held with ``flock``
    (released by the system when the process ends, however it ends); :class:`InputError` when
    another process holds it.  None where the system has no ``flock`` (Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock on this system: no lock
        return None
    path = file.parent / f".{file.name}.lock"
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:  # no such folder, read-only: say so about the user's file
            raise OSError(exc.errno, f"cannot write {str(file)!r}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"another run is using the checkpoint {file} (it holds {path}): wait for it to end, "
                             "or give this run another checkpoint (--checkpoint FILE, or another --out)") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file its last holder removed while this one opened it
            return fd, path
        os.close(fd)


def _unlock(lock):
    fd, path = lock
    try:
        os.unlink(path)
    except OSError:
        pass
    os.close(fd)


def _position_error(run, pieces, state):
    """Why the stored ``pieces`` and the strategy's ``state`` (its position ``a`` and ``step``: the
    search goes on from ``a``) are not a run stopped part-way, or None: the pieces must run
    without a gap from the run's start, and ``a`` be where they end (else the resumed path would
    leave ``[end, a]`` without pieces, or claim it twice)."""
    pieces = sorted(pieces, key=lambda p: p.lo)
    end = run.lo
    for piece in pieces:
        if piece.lo != end:
            return f"its pieces leave [{end:.6g}, {piece.lo:.6g}] uncovered (or overlap there)"
        end = piece.hi
    if state is None:
        return f"it holds pieces up to {end:.6g} but no position to go on from" if pieces else None
    if not isinstance(state, dict) or not all(is_real(state.get(k)) and math.isfinite(state[k]) for k in ("a", "step")):
        return f"its saved state {state!r:.80} is not a position a and a step (numbers)"
    if state["a"] != end or not state["step"] > 0:
        return (f"its saved position {state['a']!r} is not where its pieces end ({end!r}), or its step is not "
                "positive")
    return None


def _unproven(run, piece):
    """Why ``piece`` (read back from a file) does not hold its claim on ``run``'s problem, or
    None (:func:`~approxpath.certificate.claims.claim_failures`, against the run's target)."""
    if piece.kind == "uncovered":
        return None  # claims nothing
    if not (run.lo <= piece.lo <= piece.hi <= run.hi):
        return f"not inside [{run.lo:.6g}, {run.hi:.6g}]"
    pair = (piece.primal, piece.dual)
    from .. import __version__

    failures, _ = claim_failures(run.bound, *pair, piece.kind, piece.lo, piece.hi, piece.gap_bound,
                                 lambda a, b: run.target(pair, a, b), run.eps, __version__)
    return "; ".join(failures) or None
