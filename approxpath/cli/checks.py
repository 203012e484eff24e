"""Checks of the command line's arguments shared by the commands: the data format, the output
files (before a long run), and errors in the command line's spelling of an option."""

from __future__ import annotations

from ..errors import InputError
from . import problem_kwargs

__all__ = ["data_format", "check_outputs", "as_flags", "as_advice", "check_seed", "build_problem"]


def data_format(file, given=None, recorded=None):
    """The format of a data file: as given, else as a certificate records it, else ``csv`` for a
    ``.csv`` name and ``libsvm`` otherwise.

    Parameters
    ----------
    file : str or path-like
        The data file.
    given : str, optional
        The format given on the command line (``--format``).
    recorded : str, optional
        The format a certificate records for its data.

    Returns
    -------
    str
        The first of ``given`` and ``recorded`` set, else ``"csv"`` or ``"libsvm"`` by the name.
    """
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
    and an ``--export`` table's suffix neither ``.csv`` nor ``.dat`` too.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line; its outputs are ``out``, ``checkpoint``, ``export``, ``plot``
        and ``data_out``, its inputs ``data``, ``val_data``, ``distances``, ``certificate`` and
        ``path`` (each a name or a list of names; those it lacks are skipped).
    inputs : sequence of str, default ()
        More input files no output may be.
    extra : sequence of (str, str), default ()
        More ``(flag, file)`` outputs (a ``file`` None is skipped).
    plot_optional : bool, default False
        Whether the command skips its figure without matplotlib (else ``--plot`` is refused).
    out_suffixes : tuple of str, default (".npz",)
        The lowercase suffixes an ``--out`` with a suffix may have.

    Raises
    ------
    InputError
        An output refused as above (a ``.pgf`` ``--plot`` also where matplotlib's TeX system is
        not installed).
    FileNotFoundError
        An output's folder does not exist.
    OSError
        An output's folder does not take a new file (read-only, full, no permission).
    """
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
    line's (``--lam``).

    Parameters
    ----------
    message : str
        An error message.
    cls : type
        The problem class; its ``Bound.OPTIONS`` and ``parameter`` are the options rewritten.

    Returns
    -------
    str
        ``message`` with ``NAME=`` as ``--NAME`` before a space, ``;``, ``,``, ``)`` or the end
        and ``--NAME `` before a value (``bandwidth=t`` as ``--bandwidth t``); underscores as dashes.
    """
    import re

    for name in [*cls.Bound.OPTIONS, "parameter"]:
        flag = f"--{name.replace('_', '-')}"
        message = re.sub(rf"(?<![\w-]){name}=(?=[\s;,)]|$)", flag, message)  # "lam=;" -> "--lam;"
        message = re.sub(rf"(?<![\w-]){name}=", f"{flag} ", message)  # "bandwidth=t" -> "--bandwidth t"
    return message


def as_advice(message, box=False):
    """A selection's warning (``select``, ``select_surface`` with ``box``) in the command line's
    words: its budget and tolerance as ``--max-solves`` and ``--tol``, the range searched as
    ``--range`` (a box's weights: ``--weights``); any other warning as it is.

    Parameters
    ----------
    message : Warning
        The warning (a :class:`~approxpath.selection.advice.ShortfallWarning`, a
        :class:`~approxpath.selection.advice.RangeWarning` or any other).
    box : bool, default False
        Whether it is ``select_surface``'s: a range warning names ``--range`` for the bandwidth
        and ``--weights`` for the other parameter.

    Returns
    -------
    str
        The warning's text.
    """
    from ..selection.advice import RangeWarning, ShortfallWarning

    if isinstance(message, ShortfallWarning):
        return message.text(tol="--tol", max_solves="--max-solves", smaller="choose a smaller --range or --weights")
    if isinstance(message, RangeWarning):
        return message.text("select", lambda name: "--range" if not box or name == "bandwidth" else "--weights")
    return str(message)


def check_seed(seed):
    """``--seed`` is a non-negative integer (numpy's generators refuse others without naming it).

    Parameters
    ----------
    seed : int
        The ``--seed`` given.

    Raises
    ------
    InputError
        ``seed < 0``.
    """
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer; got {seed}")


def build_problem(cls, X, y, args, options=None):
    """``cls(X, y, **options)`` (default: the options given as flags), errors in flag spelling.

    Parameters
    ----------
    cls : type
        The problem class.
    X : ndarray of shape (n, d), or (n, n)
        The features, or the squared distances ``D`` (``--kernel precomputed``).
    y : ndarray of shape (n,)
        The targets or labels.
    args : argparse.Namespace
        The parsed command line (its ``opt_*`` flags and ``--option KEY=VALUE``).
    options : dict, optional
        The constructor's options; default :func:`~approxpath.cli.problem_kwargs` of ``args``.

    Returns
    -------
    object
        The problem, an instance of ``cls``.

    Raises
    ------
    InputError
        ``kernel="precomputed"`` in a command without ``--distances``, or the problem's own
        :class:`~approxpath.errors.InputError`, its options spelled as flags (:func:`as_flags`).
    """
    options = problem_kwargs(cls, args) if options is None else options
    if options.get("kernel") == "precomputed" and not hasattr(args, "distances"):
        raise InputError(f"--kernel precomputed takes D from --distances FILE.npy, an option of approxpath path and "
                         f"verify only; approxpath {args.command} needs the features (--data) and a kernel of them")
    try:
        return cls(X, y, **options)
    except InputError as exc:
        raise InputError(as_flags(str(exc), cls)) from None
