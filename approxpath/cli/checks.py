"""Checks of the command line's arguments shared by the commands: the data format, the output
files (before a long run), and errors in the command line's spelling of an option."""

from __future__ import annotations

from ..errors import InputError
from . import problem_kwargs

__all__ = ["data_format", "check_outputs", "as_flags", "as_advice", "check_seed", "build_problem"]


def data_format(file, given=None, recorded=None):
    """The format of a data file: as given, else as a certificate records it, else ``csv`` for a
    ``.csv`` name and ``libsvm`` otherwise."""
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
    named with a suffix not in ``out_suffixes`` (a certificate named ``.csv`` was an npz file)
    and an ``--export`` table's suffix neither ``.csv`` nor ``.dat`` too."""
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


def as_flags(message, cls):
    """``message`` with the Python spelling of the options of ``cls`` (``lam=``) as the command
    line's (``--lam``)."""
    import re

    for name in [*cls.Bound.OPTIONS, "parameter"]:
        flag = f"--{name.replace('_', '-')}"
        message = re.sub(rf"(?<![\w-]){name}=(?=[\s;,)]|$)", flag, message)  # "lam=;" -> "--lam;"
        message = re.sub(rf"(?<![\w-]){name}=", f"{flag} ", message)  # "bandwidth=t" -> "--bandwidth t"
    return message


def as_advice(message):
    """A selection's message (``select``, ``select_surface``) with the command line's words: its
    budget, tolerance and range as the flags ``--max-solves``, ``--tol`` and ``--range``, and without the advice to
    pass ``strict=False`` (the command keeps the result reached and says so)."""
    import re

    message = re.sub(r",? or pass strict=False to keep this result", "", str(message))
    message = re.sub(r"\bwiden the box past", "widen --range or --weights past", message)
    message = re.sub(r"\bwiden the interval past", "widen --range past", message)
    message = re.sub(r"\braise max_solves or tol\b", "raise --max-solves or --tol", message)
    message = re.sub(r"\braise max_solves\b", "raise --max-solves", message)
    return re.sub(r"\braise tol\b", "raise --tol", message)


def check_seed(seed):
    """``--seed`` is a non-negative integer (numpy's generators refuse others without naming it)."""
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer; got {seed}")


def build_problem(cls, X, y, args, options=None):
    """``cls(X, y, **options)`` (default: the options given as flags), errors in flag spelling."""
    options = problem_kwargs(cls, args) if options is None else options
    if options.get("kernel") == "precomputed" and not hasattr(args, "distances"):
        raise InputError(f"--kernel precomputed takes D from --distances FILE.npy, an option of approxpath path and "
                         f"verify only; approxpath {args.command} needs the features (--data) and a kernel of them")
    try:
        return cls(X, y, **options)
    except InputError as exc:
        raise InputError(as_flags(str(exc), cls)) from None
