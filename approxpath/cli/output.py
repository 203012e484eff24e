"""Where a command's output goes: ``--json``'s document alone on standard output
(:func:`emit_json`, :func:`stdout_for_results`), a reader that leaves early (``| head``)
changing nothing (:func:`reader_may_leave`), and progress bars on a terminal only
(:func:`progress_wanted`)."""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager

__all__ = ["emit_json", "stdout_for_results", "reader_may_leave", "progress_wanted"]


def progress_wanted(args):
    """Whether the command draws its progress bar: not with ``--no-progress`` or ``--json``, and
    only where standard error is a terminal (in a pipe or a log file a bar's carriage returns are
    noise)."""
    if getattr(args, "no_progress", False) or getattr(args, "json", False):
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


#: Where :func:`emit_json` writes (None: ``sys.stdout``): the process's standard output while its
#: own command runs with ``--json`` (:func:`stdout_for_results`).
_results = None


def emit_json(document):
    """Print ``--json``'s document: the one thing a command writes to standard output then.  A
    number that is not finite (an uncovered piece's bound: inf) is written as null: JSON has no
    Infinity or NaN (Python's ``json`` would write them, and other readers refuse the line); so at
    any depth of dicts, lists and tuples.  One line, to the process's standard output while its
    command runs with ``--json`` (:func:`stdout_for_results`), else to ``sys.stdout``."""
    print(json.dumps(_finite(document), allow_nan=False), file=_results or sys.stdout)


def _finite(value):
    """``value`` with every float that is not finite, at any depth, replaced by None."""
    if isinstance(value, float):
        return value if value - value == 0.0 else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


@contextmanager
def stdout_for_results():
    """While a command runs with ``--json``: everything written to the process's standard output
    -- native code's (a solver's messages, e.g. Clarabel's) and Python's (``sys.stdout``: SCS
    prints through it) -- goes to standard error, and only :func:`emit_json`'s document to
    standard output.  For the process's own command only (file descriptor 1 is the process's)."""
    import io

    global _results
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    old = sys.stdout
    _results = _ReaderMayLeave(io.TextIOWrapper(io.FileIO(saved, "w", closefd=False), encoding=old.encoding or "utf-8",
                                                line_buffering=True))
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _results.flush()
        _results = None
        sys.stdout = old
        _flush_c_streams()  # (a solver's buffered printf would reach the restored descriptor at exit)
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_streams():
    """Flush the C library's output buffers (``fflush(NULL)``): native code's ``printf`` to a
    file or pipe is buffered until the process exits, after file descriptor 1 is restored."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or None).fflush(None)
    except (OSError, AttributeError):  # no C library found by that name (not a POSIX libc)
        pass


class _ReaderMayLeave:
    """The process's standard output, once its reader has gone (``| head``), silently sent to
    the null device: the command runs on and its status is its own, not a write failure."""

    def __init__(self, stream):
        self._stream = stream

    def _gone(self):
        os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def reader_may_leave():
    """While the process's own command runs: its standard output may lose its reader
    (:class:`_ReaderMayLeave`)."""
    old = sys.stdout
    sys.stdout = _ReaderMayLeave(old)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = old
