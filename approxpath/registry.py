"""The problem registry: built-in problems from ``approxpath.problems`` and third-party ones
from the entry-point group ``approxpath.problems``.

A name registered twice by two different classes is an error naming both sources; the same
class registered again is ignored.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from .problem import did_you_mean

__all__ = ["ENTRY_POINT_GROUP", "register", "get_problem", "available_problems", "DuplicateProblemError"]

#: Entry-point group through which third-party packages add problems.
ENTRY_POINT_GROUP = "approxpath.problems"

_REGISTRY: dict = {}  # name -> (class, source)
_loaded = False


class DuplicateProblemError(ValueError):
    """Two different classes claim the same registry name."""


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


def _load():
    global _loaded
    if _loaded:
        return
    _loaded = True
    import approxpath.problems as builtin

    for mod in pkgutil.iter_modules(builtin.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"approxpath.problems.{mod.name}")
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
