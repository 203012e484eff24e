"""Checks of the command line's arguments shared by the commands: the data format, the output
files (before a long run), and errors in the command line's spelling of an option."""

from __future__ import annotations

from ..errors import InputError
from . import EXIT_CODES
from .options import problem_kwargs

__all__ = ["data_format", "check_outputs", "as_flags", "as_advice", "said_once", "selecting", "interrupted",
           "check_seed", "build_problem"]


def data_format(file, given=None, recorded=None):
    """The format of a data file: as given (``--format``), else as a certificate records it, else
    ``csv`` for a ``.csv`` name and ``libsvm`` otherwise."""
    return given or recorded or ("csv" if str(file).lower().endswith(".csv") else "libsvm")


#: The arguments that name an output file, and those that name an input file (a name or a list).
_OUTPUTS = ("out", "checkpoint", "export", "plot", "data_out")
_INPUTS = ("data", "val_data", "distances", "certificate", "path")


def check_outputs(args, inputs=(), extra=(), plot_optional=False, out_suffixes=(".npz",)):
    """Refuse, before a long run, outputs that cannot be written: a directory, a device, a
    missing or read-only folder, an input file of the run (``--data``, ``--val-data``,
    ``--distances``, and ``inputs``), or the same file as another output (``extra``: more
    ``(flag, file)`` outputs, such as the default checkpoint); see
    :func:`~approxpath.certificate.output.check_outputs`.  A ``--plot`` without matplotlib
    installed is refused too, unless the command skips its figure then (``plot_optional``), and
    so is a ``--plot`` file whose extension matplotlib cannot write (found after the run, it
    cost the run's figure and, in some commands, left the other outputs written); an ``--out``
    named with a suffix not in ``out_suffixes`` (a certificate named ``.csv`` was an npz file), a
    ``--checkpoint`` with a suffix other than ``.npz``
    and an ``--export`` table's suffix neither ``.csv`` nor ``.dat`` too.  :class:`InputError` for
    those (a ``.pgf`` ``--plot`` also without matplotlib's TeX system), ``FileNotFoundError`` for a
    missing folder, ``OSError`` for one that takes no new file (read-only, full, no permission).
    The outputs and inputs of ``args`` are ``_OUTPUTS`` and ``_INPUTS`` (those it lacks, and an
    ``extra`` file None, are skipped); ``out_suffixes`` are lowercase."""
    import importlib.util
    from pathlib import Path

    from ..certificate.output import check_outputs as check

    plot = getattr(args, "plot", None)
    drawn = plot and importlib.util.find_spec("matplotlib") is not None
    if plot and not drawn and not plot_optional:
        raise InputError("--plot needs matplotlib: pip install 'approxpath[plot]' (or leave --plot out)")

    given = []
    for name in _INPUTS:
        value = getattr(args, name, None)
        given += value if isinstance(value, list) else [value]
    outputs = [(f"--{name.replace('_', '-')}", getattr(args, name, None)) for name in _OUTPUTS]
    check([*outputs, *extra], [v for v in (*given, *inputs) if isinstance(v, str)])
    out = getattr(args, "out", None)
    if out and Path(out).suffix and Path(out).suffix.lower() not in out_suffixes:
        raise InputError(f"--out {out}: the file is written as {' or '.join(out_suffixes)}; name it so")
    checkpoint = getattr(args, "checkpoint", None)
    if checkpoint and Path(checkpoint).suffix and Path(checkpoint).suffix.lower() != ".npz":
        raise InputError(f"--checkpoint {checkpoint}: a checkpoint is written as .npz; name it so")
    if getattr(args, "export", None):
        from ..export import table_format

        table_format(args.export, flag="--export")
    if drawn:
        from matplotlib.backend_bases import FigureCanvasBase

        kinds = FigureCanvasBase.get_supported_filetypes()
        kind = Path(plot).suffix.lower().lstrip(".")
        if kind and kind not in kinds:
            raise InputError(f"--plot {plot}: matplotlib cannot write .{kind} files; use one of "
                             f"{', '.join('.' + k for k in sorted(kinds))}")
        if kind == "pgf":  # (matplotlib measures the text with TeX: without it, a traceback after the run)
            import shutil

            import matplotlib

            tex = matplotlib.rcParams["pgf.texsystem"]
            if shutil.which(tex) is None:
                raise InputError(f"--plot {plot}: matplotlib writes .pgf files through {tex}, which is not "
                                 "installed; use .pdf or .svg")


#: The driver's and the selections' options the command line also takes, said bare in advice
#: ("raise max_solves") as well as with a value.
_RUN_OPTIONS = ("max_solves", "max_pieces", "solve_time_limit", "n_jobs")
#: Python phrases of the library's errors and the command line's words for them: what is only a
#: keyword there (``max_cells``: the command line keeps its default) is left out of the advice.
_PHRASES = {"relative=True": "--relative", "cv/X_val": "--cv or --val-data", "eps must be": "--eps must be",
            "interval must satisfy lo < hi": "--range must satisfy lo < hi",  # (the path's; verify's below)
            "the required interval must": "--interval must", "bandwidths must satisfy": "--range must satisfy",
            ", or raise max_cells": "", "choose over a smaller box": "choose a smaller --range or --weights",
            "null_objective(): pass eps": "null_objective(): pass --eps",
            "a nonzero integer or None": "a nonzero integer", "seconds or None": "seconds",  # (None: no flag)
            "run without resume=True (the command line: without --resume)": "run without --resume"}


def as_flags(message, cls=None):
    """``message`` with the Python spelling of options (``lam=``) as the command line's (``--lam``):
    those of ``cls.Bound.OPTIONS`` (a problem class, if given), ``parameter``, ``eps``, ``criterion``, the
    driver's budgets (also bare: ``raise max_solves``), underscores as dashes, ``bandwidth=t`` as
    ``--bandwidth t`` (a budget's value: ``--max-solves = 5``), and a few phrases (:data:`_PHRASES`)."""
    import re

    for phrase, words in _PHRASES.items():
        message = re.sub(("(?<![\\w-])" if phrase[0].isalpha() else "") + re.escape(phrase), words, message)
    for name in [*(cls.Bound.OPTIONS if cls is not None else ()), "parameter", "eps", "criterion", *_RUN_OPTIONS]:
        flag = f"--{name.replace('_', '-')}"
        if name in _RUN_OPTIONS:  # "max_solves=5 exact solves", "raise max_solves"
            message = re.sub(rf"(?<![\w-]){name} ?= ?", f"{flag} = ", message)
            message = re.sub(rf"(?<![\w-]){name}(?!\w)", flag, message)
            continue
        message = re.sub(rf"(?<![\w-]){name}=(?=[\s;,)]|$)", flag, message)  # "lam=;" -> "--lam;"
        message = re.sub(rf"(?<![\w-]){name}=", f"{flag} ", message)  # "bandwidth=t" -> "--bandwidth t"
    return message


def as_advice(message, box=False, who="select"):
    """A selection's warning (``select``, ``select_surface`` with ``box``; said by ``who``) in the
    command line's words: its budget and tolerance as ``--max-solves`` and ``--tol``, the range
    searched as ``--range`` (a box's weights: ``--weights``, the bandwidth's still ``--range``),
    unshuffled folds of sorted points shuffled by ``--shuffle``; any other warning as it is."""
    from ..selection.advice import RangeWarning, ShortfallWarning, SortedFoldsWarning

    if isinstance(message, SortedFoldsWarning):
        return message.text("--shuffle SEED")
    if isinstance(message, ShortfallWarning):
        return message.text(tol="--tol", max_solves="--max-solves", smaller="choose a smaller --range or --weights",
                            interval="a --range")
    if isinstance(message, RangeWarning):
        return message.text(who, lambda name: "--range" if not box or name == "bandwidth" else "--weights")
    return str(message)


def said_once(caught):
    """The recorded warnings ``caught`` with each message once, in the order first said (numpy's
    overflow warnings of a bound, recorded with ``"always"``, came by the hundred thousand)."""
    return list({str(w.message): w for w in caught}.values())


def selecting(call):
    """``(selection, warnings, stopped)`` of a selection ``call()``: its result and the warnings it
    gave (:func:`said_once`); on Ctrl-C once its search began
    (:class:`~approxpath.errors.SelectionInterrupted`), the choice of its last finished round and
    ``stopped`` True (:func:`interrupted` says so)."""
    import warnings

    from ..errors import SelectionInterrupted

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            s, stopped = call(), False
        except SelectionInterrupted as exc:
            s, stopped = exc.selection, True
    return s, said_once(caught), stopped


def written_note(args, written):
    """The line saying where a choice's certificate went (``written``: its claim) and how to check it."""
    # (a hold-out choice's file carries its data: the training points, then the held-out ones)
    data = "" if getattr(args, "val_data", None) else f" --data {args.data}"
    return (f"certificate written to {args.out}: delta = {written['delta']:.4g} (check it: approxpath verify "
            f"{args.out}{data})")


def interrupted(s):
    """Say on standard error that the selection ``s`` printed is an interrupted search's last
    finished round; the exit status of an interruption (130, as for any Ctrl-C)."""
    import sys

    print(f"approxpath: interrupted after {s.exact_solves} exact solves: the choice printed is the search's last "
          f"finished round (delta = {s.delta:.4g}, tol {s.tol:g})", file=sys.stderr)
    return EXIT_CODES["interrupted"]


def check_seed(seed):
    """``--seed`` is a non-negative integer (numpy's generators refuse others without naming it);
    :class:`InputError` otherwise."""
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer; got {seed}")


def build_problem(cls, X, y, args, options=None):
    """``cls(X, y, **options)`` (default: the options given as flags), errors in flag spelling.
    ``X``: the features (n, d), or the squared distances ``D`` (n, n) of ``--kernel precomputed``
    (an :class:`InputError` in a command without ``--distances``); ``y`` (n,); the flags: ``args``'
    ``opt_*`` and ``--option KEY=VALUE`` (:func:`~approxpath.cli.options.problem_kwargs`).  The problem's
    own :class:`InputError` is raised again with its options spelled as flags (:func:`as_flags`)."""
    options = problem_kwargs(cls, args) if options is None else options
    if options.get("kernel") == "precomputed" and not hasattr(args, "distances"):
        raise InputError(f"--kernel precomputed takes D from --distances FILE.npy, an option of approxpath path and "
                         f"verify only; approxpath {args.command} needs the features (--data) and a kernel of them")
    try:
        return cls(X, y, **options)
    except InputError as exc:
        raise InputError(as_flags(str(exc), cls)) from None
