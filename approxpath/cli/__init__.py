"""The ``approxpath`` command line.

Each problem's options become flags of the commands that build it (``approxpath path
kernel_svm --c 0.1 --bias dynamic``; ``approxpath path PROBLEM --help`` lists them), generated
from the problem's constructor signature, its ``Bound.OPTIONS`` (domains, choices) and its
docstring (help text) by :mod:`approxpath.cli.options` (importable from here too).

Exit status: 0 success; 1 a path has uncovered pieces or a certificate fails to verify;
2 bad input or usage; 3 a file cannot be read or written; 4 no exact solver produced a pair;
5 out of memory; 70 an internal error (a bug: the traceback is printed); 130 / 143 interrupted
(Ctrl-C / SIGTERM; a checkpoint keeps the finished work).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from contextlib import ExitStack, contextmanager, suppress

from .. import __version__
from ..errors import (BudgetExceededError, ClusterError, EpsilonTooSmallError, InputError, SolverError, brief,
                      did_you_mean)
from .options import add_problem_options, parse_number, problem_kwargs
from .output import reader_may_leave, stdout_for_results

__all__ = ["main", "build_parser", "parse_number", "EXIT_CODES", "add_problem_options", "problem_kwargs"]

#: Exit statuses of :func:`main`.
EXIT_CODES = {"ok": 0, "failed": 1, "usage": 2, "io": 3, "solver": 4, "memory": 5, "cluster": 6, "internal": 70,
              "interrupted": 130, "terminated": 143}
_EPILOG = ("exit status: 0 ok; 1 a result short of what was asked (uncovered pieces or cells, a failed "
           "verification, a flagged point or segment, a choice above --tol); 2 bad input or usage; "
           "3 a file cannot be read or written; 4 no exact solver produced a pair, or an exact or feature path "
           "stopped where it could not go on; 5 out of memory; "
           "6 a worker process or the Dask cluster lost the run's work; "
           "70 internal error (please report it); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)")
# Commands whose first positional argument names a problem (its options become flags).
_PROBLEM_COMMANDS = ("path", "crosscheck", "select", "surface")
_PROBLEM_FIGURES = ("solves", "validation")


def _problem_named(argv):
    """The problem a command line names, or None: the first positional after ``path`` /
    ``crosscheck`` / ``figure solves|validation``."""
    if len(argv) >= 2 and argv[0] in _PROBLEM_COMMANDS and not argv[1].startswith("-"):
        return argv[1]
    if len(argv) >= 3 and argv[0] == "figure" and argv[1] in _PROBLEM_FIGURES and not argv[2].startswith("-"):
        return argv[2]
    if len(argv) >= 2 and argv[0] == "figure" and argv[1] == "solves":
        return "kernel_svm"  # its default problem
    return None


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, ``approxpath CMD: error: ...`` (not
    the usage block first), an unknown flag with the closest one of its command."""

    command = None  # the root's: the parser of the command named on the line (its flags)
    argv = ()  # the root's and its command's: the command line

    def _dash_value_after(self, flag):
        """Whether ``flag`` is followed on the line by a word that starts with '-'."""
        argv = list(self.argv)
        return any(a == flag and b.startswith("-") for a, b in zip(argv, argv[1:]))

    def error(self, message):
        prog = self.prog
        unknown = re.match(r"unrecognized arguments: ([^\s=]*)", message)
        if unknown and self.command is not None:  # (argparse finds them at the root, after the command)
            prog = self.command.prog
            if unknown.group(1).startswith("-"):
                message += did_you_mean(unknown.group(1), [f for a in self.command._actions for f in a.option_strings])
        missing = re.match(r"argument (--[\w-]+)(?:/\S+)?: expected one argument", message)
        if missing and self._dash_value_after(missing.group(1)):  # argparse reads "-1,2" as a flag
            message += f"; write a value that starts with '-' as {missing.group(1)}=VALUE"
        self.exit(2, f"{prog}: error: {message} (see {prog} --help)\n")


def build_parser(argv=()):
    """The argument parser; the problem named in ``argv`` (if any) adds its option flags.
    ``argv``: the command line without the program's name.  Every command is listed, but only the
    one ``argv[0]`` names gets its arguments; the problem is the first positional after ``path``,
    ``crosscheck``, ``select``, ``surface`` or ``figure solves|validation`` (an unknown one raises
    :func:`~approxpath.registry.get_problem`'s ``KeyError``).  The root parser's usage errors are
    one line, an unknown flag with the closest one."""
    from . import commands, datasets, exact, features, figures
    from . import select as select_command
    from . import surface as surface_command

    cls = None
    name = _problem_named(list(argv))
    if name is not None:
        from ..registry import get_problem

        cls = get_problem(name)  # KeyError names the close ones
    parser = _Parser(prog="approxpath", description="Certified eps-approximate solution paths.", allow_abbrev=False,
                     epilog=_EPILOG)
    parser.argv = tuple(argv)
    parser.add_argument("--version", action="version", version=f"approxpath {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    # every command is listed; only the one named gets its arguments (and imports what they need)
    for name, (text, fill) in {**commands.COMMANDS, **exact.COMMANDS, **features.COMMANDS, **select_command.COMMANDS,
                               **surface_command.COMMANDS, **figures.COMMANDS, **datasets.COMMANDS}.items():
        p = sub.add_parser(name, allow_abbrev=False, help=text)
        if argv and argv[0] == name:
            fill(p, cls, argv)
            parser.command, p.argv = p, parser.argv
    return parser


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` blocks run (temporary files are
    removed, a checkpoint keeps the latest state)."""


# Seconds a SIGTERM waits for the main thread to unwind before the process exits anyway: Python
# runs its handler only between bytecodes, and a native solve (HiGHS, Clarabel, LAPACK) that
# releases the GIL may run for minutes first (robust_l1 at n = 4000: Clarabel never returned).
_TERM_GRACE = 10.0
# ... looking this often whether the main thread swallowed the exception (in a __del__)
_RAISE_AGAIN_S = 0.05


def _term_watchdog(fd, done, swallowed):
    """Wait on the signal wake-up pipe ``fd``; after a SIGTERM or SIGINT (Ctrl-C), give the main
    thread :data:`_TERM_GRACE` seconds to unwind, then exit with status 143 or 130 (the checkpoint
    saved at the last exact solve stays on disk).  Where the main thread swallowed the exception
    (``swallowed`` set: it was raised inside a ``__del__``), raise it there again."""
    import _thread
    import signal

    while not done.is_set():
        got = os.read(fd, 64)
        signum = next((s for s in (signal.SIGTERM, signal.SIGINT) if s in got), None)
        if done.is_set() or signum is None:
            continue
        end = time.monotonic() + _TERM_GRACE
        while time.monotonic() < end and not done.wait(_RAISE_AGAIN_S):
            if swallowed.is_set():
                swallowed.clear()
                _thread.interrupt_main(signum)
        if not done.is_set():
            what = "terminated" if signum == signal.SIGTERM else "interrupted"
            print(f"approxpath: {what}: native code (a solver, a linear-algebra call) held the run for "
                  f"{_TERM_GRACE:g} s after {signal.Signals(signum).name} (a checkpoint, if any, keeps the work "
                  f"up to its last exact solve: --resume)", file=sys.stderr, flush=True)
            os._exit(EXIT_CODES[what])


@contextmanager
def _sigterm_unwinds():
    """SIGTERM raises :class:`_Terminated` in the main thread (SIGINT, as always,
    KeyboardInterrupt); a watchdog thread (woken through :func:`signal.set_wakeup_fd`, which
    needs no GIL) raises either again where a ``__del__`` swallowed it, and ends the process if the
    main thread is held in native code for more than :data:`_TERM_GRACE` seconds."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated()

    def unraisable(info, previous=sys.unraisablehook):
        # raised inside a __del__ (or a callback), where Python prints it and goes on: the
        # watchdog raises it again (a libSVM model's __del__ swallowed one, and the run went on
        # until the grace ran out)
        if isinstance(info.exc_value, (_Terminated, KeyboardInterrupt)):
            swallowed.set()
        else:
            previous(info)

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # pragma: no cover - no signals here
        yield
        return
    old_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    r, w = os.pipe()
    os.set_blocking(w, False)
    old_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    done, swallowed = threading.Event(), threading.Event()
    watchdog = threading.Thread(target=_term_watchdog, args=(r, done, swallowed), daemon=True,
                                name="approxpath-sigterm")
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        sys.unraisablehook = old_hook
        signal.set_wakeup_fd(old_fd)
        signal.signal(signal.SIGTERM, old)
        with suppress(BlockingIOError):  # (a pipe full of signal bytes wakes it as well)
            os.write(w, b"\0")  # wake the watchdog: it sees ``done`` and returns
        watchdog.join()
        os.close(r)
        os.close(w)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning on the command line: one line, ``approxpath: warning: ...`` (not Python's
    file, line and source)."""
    print(f"approxpath: warning: {message}", file=sys.stderr if file is None else file)


def _os_text(exc):
    """An error's message; an ``OSError``'s without its errno ("[Errno 5] ..." is for programs,
    not readers), with the file it names."""
    if not (isinstance(exc, OSError) and exc.strerror):
        return str(exc)
    return exc.strerror + (f": {exc.filename!r}" if exc.filename else "")


def _plugin_site(exc):
    """``"problem.py:57, in primal_objective"``: where ``exc`` was raised in a registered plug-in
    problem's own code (its innermost frame of approxpath's or a plug-in's is the plug-in's: a
    library it called may lie below), or None (approxpath's own, or no plug-in's)."""
    from ..registry import plugin_modules

    mine, site = plugin_modules(), None
    tb = exc.__traceback__
    while tb is not None:
        top = tb.tb_frame.f_globals.get("__name__", "").split(".")[0]
        if top in mine:
            code = tb.tb_frame.f_code
            site = f"{os.path.basename(code.co_filename)}:{tb.tb_lineno}, in {code.co_name}"
        elif top == "approxpath":  # (approxpath's code below the plug-in's: not the plug-in's error)
            site = None
        tb = tb.tb_next
    return site


def _error(text, code):
    print(f"approxpath: {text}", file=sys.stderr)
    return EXIT_CODES[code]


def main(argv=None):
    """Run the command line; returns the exit status (see :data:`EXIT_CODES`).  Run as the
    process's command (``argv`` None: on ``sys.argv[1:]``) it first sets the process's allocator
    policy (:func:`~approxpath.compute.allocator.keep_freed_memory`); then with ``--json`` only the
    document reaches standard output (:func:`~approxpath.cli.output.stdout_for_results`), and the
    output's reader may leave early (:func:`~approxpath.cli.output.reader_may_leave`).  The status
    is the command's own, or argparse's for ``--help``, ``--version`` and a usage error; each error
    is one line ``approxpath: ...`` on standard error, mapped to its status (bad input 2, a file 3,
    a solver 4, memory 5, the cluster 6, interrupted 130, terminated 143; any other exception is a
    bug: the traceback and 70)."""
    if argv is None:
        from ..compute.allocator import keep_freed_memory

        keep_freed_memory()
    process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    kept = ""  # what an interrupted command keeps: a checkpoint where it takes one (path)
    try:
        with _sigterm_unwinds(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            # other libraries' deprecations are for their callers' developers, not for a command's reader (they
            # show only where filters were changed: pyparsing's, at matplotlib 3.6's first import under pytest)
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            try:
                args = build_parser(argv).parse_args(argv)
            except SystemExit as exc:  # --help, --version, or a usage error argparse has printed
                return exc.code
            if hasattr(args, "resume"):
                kept = " (a checkpoint, if any, keeps the finished work: --resume)"
            with ExitStack() as stack:
                if process and getattr(args, "json", False):
                    stack.enter_context(stdout_for_results())
                if process:
                    stack.enter_context(reader_may_leave())
                if getattr(args, "n_jobs", None) is not None:
                    from ..compute.parallelism import threads

                    stack.enter_context(threads(args.n_jobs))  # --n-jobs: every command's kernel work
                return args.func(args)
    except (InputError, KeyError, ValueError, FileNotFoundError, EpsilonTooSmallError, BudgetExceededError) as exc:
        from .checks import as_flags

        site = None if isinstance(exc, (InputError, EpsilonTooSmallError, BudgetExceededError)) else _plugin_site(exc)
        if site is not None:  # (a plug-in's check of its input, or its bug: where, for its author)
            return _error(f"error: {brief(exc)} (raised in a plug-in problem's own code, {site})", "usage")

        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else _os_text(exc)
        return _error(f"error: {as_flags(str(msg))}", "usage")
    except BrokenPipeError:  # the reader has gone, found outside sys.stdout's writes: nothing left to say to it
        if process:  # (and nothing for the interpreter to flush there at its exit)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CODES["io"]
    except OSError as exc:  # a file that exists cannot be read, or the output cannot be written
        return _error(f"error: {_os_text(exc)}", "io")
    except SolverError as exc:
        return _error(f"solver failure: {exc}", "solver")
    except ClusterError as exc:
        return _error(f"error: {exc}{kept}", "cluster")
    except MemoryError as exc:  # the allocation numpy could not make, if it says (no estimate is blamed)
        said = f" ({exc})" if str(exc) else ""
        return _error(f"error: out of memory{said}: use fewer samples, fewer workers, or a machine with more memory",
                      "memory")
    except KeyboardInterrupt:
        return _error(f"interrupted{kept}", "interrupted")
    except _Terminated:
        return _error(f"terminated{kept}", "terminated")
    except Exception as exc:  # a bug: say so, with the traceback, and do not look like a failed verification
        import traceback

        traceback.print_exc()
        site = _plugin_site(exc)
        if site is not None:
            return _error(f"error in a plug-in problem's own code ({site}): {brief(exc)}; report it to the plug-in's "
                          "authors with the traceback above", "internal")
        return _error(f"internal error in approxpath {__version__}: please report it with the traceback above",
                      "internal")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
