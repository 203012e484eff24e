"""The problem registry: built-in problems from ``approxpath.problems`` and third-party ones
from the entry-point group ``approxpath.problems``.

A built-in problem is a package ``approxpath.problems.<name>`` with a ``bound`` module (the
certificate side) and a ``problem`` module (the search side, which registers the class); a
small one may be a single module.  :func:`get_bound` imports only the certificate side of a
built-in problem, so the verifier never loads search code.

A name registered twice by two different classes is an error naming both sources; the same
class registered again is ignored.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from .errors import DuplicateProblemError, did_you_mean

__all__ = ["ENTRY_POINT_GROUP", "register", "get_problem", "get_bound", "available_problems"]

#: Entry-point group through which third-party packages add problems.
ENTRY_POINT_GROUP = "approxpath.problems"

_REGISTRY: dict = {}  # name -> (class, source)
_loaded = False


def _source(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def register(cls=None, *, source=None):
    """Register a :class:`~approxpath.Problem` subclass under ``cls.name``.

    Usable as a class decorator.  ``source`` names where the class came from (for the
    duplicate-name error); it defaults to the class's module path.
    """
    from .problem import Problem

    def _do(c):
        if not (isinstance(c, type) and issubclass(c, Problem)):
            raise TypeError(f"{c!r} is not a subclass of approxpath.Problem")
        name = getattr(c, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{_source(c)} has no registry name (class attribute `name`)")
        here = source or _source(c)
        if name in _REGISTRY:
            old, old_source = _REGISTRY[name]
            if old is c:
                return c
            raise DuplicateProblemError(
                f"problem name {name!r} is registered twice: by {old_source} and by {here}"
            )
        _REGISTRY[name] = (c, here)
        return c

    return _do(cls) if cls is not None else _do


def _builtin_modules():
    """``(name, is_package)`` of the built-in problems (private modules start with ``_``)."""
    import approxpath.problems as builtin

    return [(m.name, m.ispkg) for m in pkgutil.iter_modules(builtin.__path__) if not m.name.startswith("_")]


def _load():
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name, ispkg in _builtin_modules():
        importlib.import_module(f"approxpath.problems.{name}" + (".problem" if ispkg else ""))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        obj = ep.load()
        dist = getattr(ep, "dist", None)
        where = f"entry point {ep.name!r} = {ep.value}" + (f" of {dist.name}" if dist else "")
        register(obj, source=where)


def available_problems():
    """Sorted names of every registered problem."""
    _load()
    return sorted(_REGISTRY)


def get_problem(name):
    """The problem class registered as ``name``.

    Raises
    ------
    KeyError
        Naming the closest registered names.
    """
    _load()
    try:
        return _REGISTRY[name][0]
    except KeyError:
        raise KeyError(f"unknown problem {name!r}{did_you_mean(name, _REGISTRY, n=3)} "
                       f"(registered: {', '.join(sorted(_REGISTRY))})") from None


def get_bound(name):
    """The certificate side (:class:`~approxpath.bound.Bound` subclass) of problem ``name``.

    For a built-in problem only its ``bound`` module is imported (no search code, no solver);
    for a registered or plug-in problem, ``get_problem(name).Bound``.
    """
    if (name, True) in _builtin_modules():
        from .bound import Bound

        module = importlib.import_module(f"approxpath.problems.{name}.bound")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Bound) and getattr(value, "name", None) == name:
                return value
    return get_problem(name).Bound
