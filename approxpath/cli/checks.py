"""Checks of the command line's arguments shared by the commands: the data format, the output
files (before a long run), and errors in the command line's spelling of an option."""

from __future__ import annotations

from ..errors import InputError
from . import problem_kwargs

__all__ = ["data_format", "check_outputs", "as_flags", "build_problem"]


def data_format(file, given=None, recorded=None):
    """The format of a data file: as given, else as a certificate records it, else ``csv`` for a
    ``.csv`` name and ``libsvm`` otherwise."""
    return given or recorded or ("csv" if str(file).lower().endswith(".csv") else "libsvm")


def check_outputs(args, inputs):
    """Refuse, before a long run, outputs that cannot be written: a directory, a device, an
    input file, a missing folder (see :func:`~approxpath.certificate.format.check_output`)."""
    from ..certificate.format import check_output

    for name in ("out", "checkpoint", "plot"):
        file = getattr(args, name, None)
        if file is not None:
            check_output(file, inputs)
    if getattr(args, "out", None) and getattr(args, "checkpoint", None) and str(args.out) == str(args.checkpoint):
        raise InputError("--out and --checkpoint name the same file: give the checkpoint another name")


def as_flags(message, cls):
    """``message`` with the Python spelling of the options of ``cls`` (``lam=``) as the command
    line's (``--lam``)."""
    import re

    for name in [*cls.Bound.OPTIONS, "parameter"]:
        flag = f"--{name.replace('_', '-')}"
        message = re.sub(rf"(?<![\w-]){name}=(?=[\s;,)]|$)", flag, message)  # "lam=;" -> "--lam;"
        message = re.sub(rf"(?<![\w-]){name}=", f"{flag} ", message)  # "bandwidth=t" -> "--bandwidth t"
    return message


def build_problem(cls, X, y, args, options=None):
    """``cls(X, y, **options)`` (default: the options given as flags), errors in flag spelling."""
    try:
        return cls(X, y, **(problem_kwargs(cls, args) if options is None else options))
    except InputError as exc:
        raise InputError(as_flags(str(exc), cls)) from None
