"""The problem registry: built-in problems from ``approxpath.problems`` and third-party ones
from the entry-point group ``approxpath.problems``.

A built-in problem is a package ``approxpath.problems.<name>`` with a ``bound`` module (the
certificate side) and a ``problem`` module (the search side, which registers the class); a
small one may be a single module.  :func:`get_bound` imports only the certificate side of a
built-in problem, so the verifier never loads search code.

A name registered twice by two different classes is an error naming both sources (a built-in
problem's name too, before that problem is imported); the same class registered again is
ignored, and a class of the same module and name replaces the one before (a notebook's cell
run again).  A class is refused (``TypeError``) where it leaves a method
of :class:`~approxpath.Problem` abstract or where its ``Bound`` has another ``name``: the module,
the registry key and the class agree.

An installed plug-in whose entry point cannot be loaded (its module or class is not there, its
import fails, its name is not the class's ``name``, :func:`register` refuses the class, the name
is a built-in's, or another installed entry point claims it too) is skipped with a one-line
warning naming the entry point, its distribution and the error; the other problems stay usable,
and :func:`get_problem` of the skipped name (unless a built-in's) raises an
:class:`~approxpath.errors.InputError` saying why.

:func:`get_problem` of a built-in name imports that problem alone (a command-line run does not
pay for the other problems' imports, nor for the scan of the installed distributions' entry
points, 50-100 ms): a plug-in claiming a built-in's name is told of by :func:`available_problems`
(``approxpath problems``) and by a lookup of a name that is not built in, and the built-in is used.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from collections import Counter

from .errors import DuplicateProblemError, InputError, brief, did_you_mean

__all__ = ["ENTRY_POINT_GROUP", "register", "get_problem", "get_bound", "available_problems", "built_in",
           "plugin_modules", "source_of"]

#: Entry-point group through which third-party packages add problems.
ENTRY_POINT_GROUP = "approxpath.problems"

_REGISTRY: dict = {}  # name -> (class, source)
_BROKEN: dict = {}  # entry-point name -> why it could not be loaded (the last full load's)
_loaded = False


def _source(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def register(cls=None, *, source=None):
    """Register a :class:`~approxpath.Problem` subclass under ``cls.name``.

    Usable as a class decorator (without ``cls``, ``register(source=...)`` returns one).
    ``source`` names where the class came from (for the duplicate-name error); it defaults to the
    class's module path (``module.QualName``).  Returns ``cls``; the same class again, or a
    non-built-in class of the same source defined again (it replaces the one before), is no error.

    Raises
    ------
    TypeError
        Not a :class:`~approxpath.Problem` subclass; no ``name``, an abstract method left, a ``Bound`` named otherwise.
    DuplicateProblemError
        Another class holds ``cls.name`` (a built-in's name too: its problem is imported first).
    """
    from .problem import Problem

    def _do(c):
        if not (isinstance(c, type) and issubclass(c, Problem)):
            raise TypeError(f"{c!r} is not a subclass of approxpath.Problem")
        name = getattr(c, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{_source(c)} has no registry name (class attribute `name`)")
        missing = sorted(getattr(c, "__abstractmethods__", ()))
        if missing:
            raise TypeError(f"{_source(c)} does not implement {', '.join(missing)} (required by approxpath.Problem)")
        bound_name = getattr(getattr(c, "Bound", None), "name", None)
        if bound_name != name:
            raise TypeError(f"{_source(c)} is named {name!r} but its Bound is named {bound_name!r}: the registry "
                            "key, the Problem's name and its Bound's name must agree")
        missing = sorted(getattr(c.Bound, "__abstractmethods__", ()))
        if missing:  # (it would fail at the first path, as approxpath's own error)
            raise TypeError(f"{_source(c.Bound)} does not implement {', '.join(missing)} "
                            "(required by approxpath.Bound)")
        here = source or _source(c)
        if name not in _REGISTRY and not c.__module__.startswith("approxpath.problems."):
            _load_builtin(name)  # (a built-in's name is taken before its problem is imported)
        if name in _REGISTRY:
            old, old_source = _REGISTRY[name]
            if old is c:
                return c
            if old_source == here == _source(c) and not here.startswith("approxpath.problems."):
                _REGISTRY[name] = (c, here)  # the same class defined again (a notebook's cell run again)
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


def entry_points(group):
    """The installed entry points of ``group`` (``importlib.metadata``, imported on first use:
    ~30 ms)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def _load_builtin(name):
    """Import the built-in problem ``name`` alone, if there is one (it registers itself)."""
    for module, ispkg in _builtin_modules():
        if module == name:
            importlib.import_module(f"approxpath.problems.{name}" + (".problem" if ispkg else ""))


def _load():
    """Import every built-in problem and load every entry point, once.  An entry point that
    cannot be loaded, or whose name another claims too, is skipped (:func:`_load_entry_point`)."""
    global _loaded, _BROKEN
    if _loaded:
        return
    for name, ispkg in _builtin_modules():
        importlib.import_module(f"approxpath.problems.{name}" + (".problem" if ispkg else ""))
    broken = {}
    found = list(entry_points(group=ENTRY_POINT_GROUP))
    claims = Counter(name for name, _ in {(ep.name, ep.value) for ep in found})  # (one class installed twice: one)
    for ep in found:
        if claims[ep.name] > 1:  # (which one a lookup got would depend on the order of installation)
            others = sorted({_where(e) for e in found if e.name == ep.name} - {_where(ep)})
            why = (f"{_where(ep)}: {claims[ep.name]} installed entry points claim the name {ep.name!r}, this one and "
                   f"{'; '.join(others)} (uninstall all but one)")
        else:
            why = _load_entry_point(ep)
        if why:
            broken[ep.name] = why
            warnings.warn(f"skipped the plug-in problem {why}", stacklevel=3)
    _BROKEN, _loaded = broken, True


def _load_entry_point(ep):
    """Register the class of the entry point ``ep``; None, or why it cannot be (one line naming
    the entry point, its distribution and the error)."""
    where = _where(ep)
    try:
        cls = ep.load()
        if not isinstance(cls, type):  # (a module, a function: "the class's name is None" said nothing)
            what = f"{type(cls).__name__} {getattr(cls, '__name__', cls)!r}"
            return f"{where}: it loads {what}, not a class (give module:Class)"
        name = getattr(cls, "name", None)
        if name != ep.name:
            return f"{where}: the entry point's name is {ep.name!r} but the class's name is {name!r} (they must agree)"
        register(cls, source=where)
    except DuplicateProblemError as exc:  # (a built-in's name, or one registered in this process: that one stays)
        return f"{where}: {exc}"
    except (Exception, SystemExit) as exc:  # a plug-in's own bug: not approxpath's, and not the other problems'
        return f"{where}: {brief(exc)}"
    return None


def _where(ep):
    """The entry point ``ep`` named for a warning: its name, value and distribution."""
    dist = getattr(ep, "dist", None)
    version = getattr(dist, "version", None)
    return f"entry point {ep.name!r} = {ep.value}" + (f" of {dist.name}" if dist else "") + (
        f" {version}" if version else "")


def built_in(cls):
    """Whether the problem class ``cls`` is approxpath's own (its problems, those of
    :mod:`approxpath.testing`), tested with approxpath: not a plug-in's."""
    return cls.__module__.startswith("approxpath.")


def source_of(name):
    """Where the registered problem ``name`` came from, for a certificate's provenance: None for a
    built-in one (or a name not registered); an installed plug-in's entry point, distribution and
    version; else the module and class that registered it."""
    cls, source = _REGISTRY.get(name, (None, None))
    return None if cls is None or built_in(cls) else source


def plugin_modules():
    """The top-level module names of the registered problems that are not built in (a plug-in's
    package, or ``__main__`` for a class a script registered): where their own code runs."""
    return {cls.__module__.split(".")[0] for cls, _ in _REGISTRY.values() if not built_in(cls)}


def available_problems():
    """Sorted names of every registered problem."""
    _load()
    return sorted(_REGISTRY)


def get_problem(name):
    """The problem class registered as ``name``.

    A built-in name imports that problem alone; another name loads every built-in problem and
    installed entry point first.

    Raises
    ------
    KeyError
        Naming the closest registered names.
    InputError
        ``name`` is an installed plug-in's entry point that could not be loaded (saying why).
    """
    if name not in _REGISTRY and not _loaded:
        _load_builtin(name)
    if name not in _REGISTRY:
        _load()
    if name in _BROKEN and name not in _REGISTRY:
        raise InputError(f"problem {name!r} could not be loaded: {_BROKEN[name]}")
    try:
        return _REGISTRY[name][0]
    except KeyError:
        raise KeyError(f"unknown problem {name!r}{did_you_mean(name, _REGISTRY, n=3)} "
                       f"(registered: {', '.join(sorted(_REGISTRY))}; a problem registered in another process is "
                       "known here only through an 'approxpath.problems' entry point)") from None


def get_bound(name):
    """The certificate side (:class:`~approxpath.bound.Bound` subclass) of problem ``name``.

    For a built-in problem only its ``bound`` module is imported (no search code, no solver);
    for a registered or plug-in problem, ``get_problem(name).Bound`` (and :func:`get_problem`'s
    ``KeyError`` or :class:`InputError`).
    """
    if (name, True) in _builtin_modules():
        from .bound import Bound

        module = importlib.import_module(f"approxpath.problems.{name}.bound")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Bound) and getattr(value, "name", None) == name:
                return value
    return get_problem(name).Bound
