"""Problem options and numbers on the command line: each problem's options become flags of the
commands that build it (:func:`add_problem_options`), generated from the problem's constructor
signature, its ``Bound.OPTIONS`` (domains, choices) and its docstring (help text), read back as
constructor options (:func:`problem_kwargs`); numbers are read by :func:`parse_number`.
Imported by :mod:`approxpath.cli` at start: the standard library only.
"""

from __future__ import annotations

import argparse
import json
import re

from ..errors import InputError

__all__ = ["parse_number", "add_problem_options", "problem_kwargs"]


def parse_number(text):
    """A float from ``0.1``, ``1e-3`` or a power ``2^-10`` (also ``2**-10``); finite.  Spaces are
    allowed around the operator.  :class:`argparse.ArgumentTypeError` where ``text`` is not a number,
    overflows, is not finite, or is a nonzero number that rounds to 0 (below the smallest positive
    double, about 5e-324: ``2^-1100``, ``1e-400``)."""
    # a power's sign is outside it, -2^2 = -(2^2) as in mathematics (float("-2") ** 0.5 is complex)
    m = re.fullmatch(r"\s*([+-]?)\s*([0-9.eE]+(?:[eE][+-]?[0-9]+)?)\s*(?:\^|\*\*)\s*([0-9.eE+-]+)\s*", str(text))
    try:
        value = (-1.0 if m.group(1) == "-" else 1.0) * float(m.group(2)) ** float(m.group(3)) if m else float(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r} (use e.g. 0.5, 1e-3 or 2^-10)") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r} (use e.g. 0.5, 1e-3 or 2^-10)")
    mantissa = (m.group(2) if m else str(text)).lower().split("e")[0]
    if value == 0 and any(c in "123456789" for c in mantissa):  # 2^-1100, 1e-400: rounded to 0
        raise argparse.ArgumentTypeError(f"{text!r} is below the smallest positive double (about 5e-324)")
    return value


def _docs_of(cls):
    """``{option: first sentence of its description}`` from the numpydoc "Parameters" of ``cls``."""
    import inspect

    # (indented as written until Python 3.12; 3.13 strips the common indentation when compiling)
    doc = inspect.cleandoc(cls.__doc__ or "")
    out, name = {}, None
    for line in doc.splitlines():
        m = re.match(r"^(\w+) : (.*)$", line)
        if m:
            name = m.group(1)
            out[name] = ""
        elif name and line.startswith("    ") and not out[name].endswith("."):
            out[name] = (out[name] + " " + line.strip()).strip()
    clean = {k: re.sub(r"\\\\?([A-Za-z]+)", r"\1", re.sub(r":math:`([^`]*)`|``([^`]*)``",
                                                       lambda m: m.group(1) or m.group(2), v)) for k, v in out.items()}
    return {k: v.split(". ")[0].rstrip(".") for k, v in clean.items()}


def add_problem_options(p, cls):
    """Flags ``--<option>`` for every keyword-only option of ``cls``'s constructor (numbers
    parsed by :func:`parse_number`, choices from ``Bound.OPTIONS``), and ``--option KEY=VALUE``
    for anything else (a constructor taking ``**kwargs``)."""
    import inspect

    specs = dict(cls.Bound.OPTIONS)
    docs = _docs_of(cls)
    group = p.add_argument_group(f"{cls.name} options")
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if param.kind is not param.KEYWORD_ONLY:
            continue
        spec = specs.get(name)
        kw = dict(default=None, dest=f"opt_{name}", metavar=name.upper(), help=docs.get(name, ""))
        if name == "parameter":
            kw.update(choices=cls.Bound.parameters, metavar=None)
        elif spec is not None and spec.kind == "choice":
            kw.update(choices=spec.choices, metavar=None)
        elif (spec is not None and spec.kind in ("positive", "between")) or isinstance(param.default, (int, float)):
            kw.update(type=parse_number)
        default = param.default if param.default is not param.empty else None
        if default is not None:
            kw["help"] = f"{kw['help']} (default {default})".strip()
        group.add_argument(f"--{name.replace('_', '-')}", **kw)
    group.add_argument("--option", action="append", metavar="KEY=VALUE", default=None,
                       help="any other constructor option (a JSON value or text)")


def problem_kwargs(cls, args):
    """The constructor options given on the command line (only those set), their names and
    domains checked before any data is loaded."""
    given = {k[len("opt_"):]: v for k, v in vars(args).items() if k.startswith("opt_") and v is not None}
    flags = set(given)
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--option expects KEY=VALUE; got {item!r}")
        if key in given:  # (the later would be taken without a word)
            first = f"--{key.replace('_', '-')}" if key in flags else f"--option {key}=..."
            raise InputError(f"{first} and --option {item} both set {key!r}: give it once")
        try:
            given[key] = json.loads(value)
        except ValueError:
            given[key] = value
    cls.check_options(given)
    return given
