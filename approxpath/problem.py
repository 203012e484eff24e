"""The search side of a problem: what a path search needs beyond the certificate.

A problem is a :class:`Problem` subclass with a certificate side, its :class:`~approxpath.bound.Bound`
(the data, the options and the rigorous bounds), and on top of it

* the specification: the primal and the dual in CVXPY at a parameter value
  (:meth:`Problem.cvxpy_primal`, :meth:`Problem.cvxpy_dual`), whose variable names are the
  field names of the ``Primal`` and ``Dual`` dataclasses; solving them is the default exact
  solve (:meth:`Problem.candidate`), a problem may add faster backends;
* :meth:`Problem.restore`: a pair made feasible for every parameter of a piece;
* numpy objectives and violations.

Optional capabilities, found by presence and checked by the part that needs them:
``interpolate`` / ``interpolation_gaps`` / ``weighing_depth`` (the interpolating strategy; a
generic convex combination otherwise; pairs that move across a piece come from the driver where
the bound bounds them, ``Bound.moving_degrees``), ``dual_from_primal`` (the cross-check), ``predict`` and
``criteria`` (model selection), ``segment_gap_bound`` (claimed-linear segments),
``cvxpy_restore_primal`` / ``cvxpy_restore_dual`` (the conformance checks compare the numpy
restoration with these declarations).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .moving import value_at

__all__ = ["Problem", "Declaration", "convex_combination", "restored_gaps"]


@dataclass(frozen=True)
class Declaration:
    """A CVXPY problem and its variables by name (the names of a ``Primal``/``Dual`` field)."""

    problem: Any
    variables: dict


class Problem(abc.ABC):
    """Base class of every path-followed problem.

    Subclasses set :attr:`Bound`, write a constructor whose keyword arguments are the options
    of ``Bound.OPTIONS`` (``super().__init__(X, y, **options)``) and implement the abstract
    methods.  Every option is then an attribute (``problem.c``) and the bound is
    ``problem.bound``.

    Attributes
    ----------
    name : str
        Registry key: the package's name for a built-in problem (``kernel_svm`` in
        ``problems/kernel_svm/``), the entry point's name for a plug-in, and ``Bound.name``.
        The registry refuses a class whose ``Bound`` has another name, and skips (with a
        warning) an entry point named otherwise.
    Bound : type
        The certificate side (:class:`~approxpath.bound.Bound`).
    backends : tuple of str
        Exact solvers tried in turn by :meth:`solve` (names :meth:`candidate` understands).
    """

    name: ClassVar[str]
    Bound: ClassVar[type]
    backends: ClassVar[tuple] = ("clarabel", "scs")

    def __new__(cls, *args, **kwargs):
        # an unknown keyword gets a clear error with the closest name (not Python's TypeError)
        params = inspect.signature(cls.__init__).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            from .errors import InputError, did_you_mean

            accepted = [k for k in params if k not in ("self", "X", "y")]
            for key in kwargs:
                if key not in params:
                    raise InputError(f"{cls.name}: unknown option {key!r}{did_you_mean(key, accepted)}"
                                     f" (options: {', '.join(accepted)})")
        return super().__new__(cls)

    def __init__(self, X, y, **options):
        self.bound = self.make_bound(X, y, options)
        for key, value in self.bound.options.items():
            setattr(self, key, value)

    def make_bound(self, X, y, options):
        """The bound of this instance (a search may use a subclass with caches)."""
        return self.Bound(X, y, **options)

    @classmethod
    def check_options(cls, given):
        """The constructor's defaults updated by ``given``, with names and domains checked
        (before any data is loaded)."""
        defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
                    if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
        return cls.Bound.check_options({**defaults, **given})

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "Bound" in vars(cls):  # the pair's dataclasses, shared with the certificate side
            cls.Primal, cls.Dual = cls.Bound.Primal, cls.Bound.Dual
        for name in _POINT_MAPS:  # a stored moving point is taken at the parameter
            f = vars(cls).get(name)
            if f is not None and not getattr(f, "takes_stored_points", False):
                setattr(cls, name, _at_parameter(f))

    X = property(lambda self: self.bound.X)
    y = property(lambda self: self.bound.y)
    n = property(lambda self: self.bound.n)

    def options(self):
        """Keyword arguments that rebuild this instance: ``type(p)(X, y, **p.options())``."""
        return {k: v for k, v in self.bound.options.items() if v is not None}

    def path_options(self):
        """The options a path over :attr:`parameter` uses: all but ``parameter`` and the
        parameter's own fixed value (which the path replaces)."""
        return {k: v for k, v in self.options().items() if k not in ("parameter", self.parameter)}

    def describe(self, chosen=None):
        """One line for summaries: problem, parameter and the options the path uses; with
        ``chosen``, an option chosen with the parameter (a surface's weight: left out of them)."""
        opts = "".join(f"; {k}={v!r}" for k, v in self.path_options().items() if k != chosen)
        over = self.parameter if chosen is None else f"the {self.parameter} and {chosen}"
        return f"{self.name} over {over} (n={self.n}{opts})"

    def default_interval(self):
        """A sensible ``(lo, hi)`` for the path parameter."""
        return (2.0**-10, 2.0**10)

    @classmethod
    @abc.abstractmethod
    def examples(cls):
        """Small instances for the conformance checks: ``[(problem, (lo, hi), eps), ...]``
        covering every path parameter and option that changes the maps; each well under a second."""

    # ------------------------------------------------------------------ specification
    @abc.abstractmethod
    def cvxpy_primal(self, t):
        """The primal at ``t`` as a :class:`Declaration` (variables named like ``Primal``'s fields)."""

    @abc.abstractmethod
    def cvxpy_dual(self, t):
        """The dual at ``t`` as a :class:`Declaration` (variables named like ``Dual``'s fields)."""

    def primal_values(self, primal):
        """Values of the CVXPY primal variables at ``primal`` (default: its fields)."""
        return {f.name: getattr(primal, f.name) for f in dataclasses.fields(primal) if f.compare}

    def dual_values(self, dual):
        """Values of the CVXPY dual variables at ``dual`` (default: its fields)."""
        return {f.name: getattr(dual, f.name) for f in dataclasses.fields(dual) if f.compare}

    # ------------------------------------------------------------------ exact solve
    def solve(self, t, solver=None, time_limit=None, warm=None, enough=None, need=None):
        """An optimal pair at ``t``, exactly feasible, accepted by our own certified gap
        (:func:`approxpath.solvers.solve_exact`: the backends in turn, each with tighter settings when its pair misses);
        ``warm``: an optimal pair nearby (the driver passes its nearest exact solve's);
        ``enough(pair)``: a gap that also suffices (the driver's share of its target);
        ``need(pair)``: the largest gap the caller can use (the driver's anchor share)."""
        from .solvers import solve_exact

        return solve_exact(self, t, self.backend_names(solver), time_limit, warm, enough, need)

    def backend_names(self, solver=None):
        """``solver`` (a name or several; default :attr:`backends`) as a checked list."""
        from .errors import InputError
        from .validate import choice

        if solver is None:
            return list(self.backends)
        try:
            names = [solver] if isinstance(solver, str) else list(solver)
        except TypeError:  # (a number: list() of it failed deep inside the run)
            names = []
        if not names:
            raise InputError(f"solver must be a name or a non-empty sequence of names ({', '.join(self.backends)}) for "
                             f"{self.name}; got {solver!r}")
        return [choice(f"exact solver for {self.name}", name, self.backends) for name in names]

    def candidate(self, backend, t, warm=None):
        """A candidate pair at ``t`` from ``backend`` (it need not be exactly feasible: the
        caller restores it); ``warm`` (a pair nearby, or None) may start it.  Default: the CVXPY
        declarations solved by Clarabel or SCS."""
        from .solvers.conic import solve_cvxpy

        pair = []
        for decl, cls in ((self.cvxpy_primal(t), self.Bound.Primal), (self.cvxpy_dual(t), self.Bound.Dual)):
            solve_cvxpy(decl.problem, (backend,))
            pair.append(cls(**{k: v.value if v.ndim else float(v.value) for k, v in decl.variables.items()}))
        return tuple(pair)

    # ------------------------------------------------------------------ numpy maps
    @abc.abstractmethod
    def restore(self, primal, dual, lo, hi=None):
        """A pair feasible for every :math:`\\tau \\in [lo, hi]` (``hi`` omitted: at ``lo``).
        Either side may be a :class:`~approxpath.moving.Moving` point (the driver's
        interpolation, where the bound bounds moving pairs) and may come back as one."""

    def primal_at(self, primal, tau):
        """Fill the fields of a primal point that are functions of :math:`\\tau` (e.g. slacks).

        This and the other numpy maps (objectives, violations, ``predict``) take a point at
        ``tau``; a stored :class:`~approxpath.moving.Moving` point is taken there first."""
        return value_at(primal, tau)

    def dual_at(self, dual, tau):
        """Fill the fields of a dual point that are functions of :math:`\\tau` (as :meth:`primal_at`)."""
        return value_at(dual, tau)

    @abc.abstractmethod
    def primal_objective(self, primal, tau):
        """Primal objective at ``tau`` of a (completed) primal point, in numpy."""

    @abc.abstractmethod
    def dual_objective(self, dual, tau):
        """Dual objective at ``tau``, in numpy."""

    @abc.abstractmethod
    def primal_violation(self, primal, tau):
        """Largest constraint violation of a (completed) primal point at ``tau`` (0 if feasible)."""

    @abc.abstractmethod
    def dual_violation(self, dual, tau):
        """Largest constraint violation of a dual point at ``tau`` (0 if feasible)."""

    def gap(self, primal, dual, tau):
        """Duality gap of a pair at ``tau`` as computed in floating point (no rounding allowance)."""
        return self.primal_objective(self.primal_at(primal, tau), tau) - self.dual_objective(dual, tau)


#: The numpy maps whose first argument is a point at the parameter ``tau`` (the second): each
#: also accepts a stored :class:`~approxpath.moving.Moving` point, taken at ``tau``.
_POINT_MAPS = ("primal_at", "dual_at", "primal_objective", "dual_objective", "primal_violation", "dual_violation", "predict",
               "decision_function")


def _at_parameter(f):
    """``f(self, point, tau, ...)`` with a stored moving ``point`` replaced by its value at ``tau``."""
    @functools.wraps(f)
    def at(self, point, tau, *args, **kwargs):
        return f(self, value_at(point, tau), tau, *args, **kwargs)

    at.takes_stored_points = True
    return at


def convex_combination(a, b, theta):
    """``(1 - theta) a + theta b`` of two pairs, field by field (fields that are None are left
    out): the interpolation of a problem without its own ``interpolate`` (restore it after).

    Parameters
    ----------
    a, b : (Primal, Dual)
        Two pairs of the same problem (dataclasses of arrays and numbers).
    theta : float
        In [0, 1]: 0 gives ``a``, 1 gives ``b``.

    Returns
    -------
    (Primal, Dual)
    """
    def mix(u, v):
        return type(u)(**{
            f.name: (1.0 - theta) * np.asarray(getattr(u, f.name)) + theta * np.asarray(getattr(v, f.name))
            for f in dataclasses.fields(u)
            if getattr(u, f.name) is not None and f.compare
        })
    return mix(a[0], b[0]), mix(a[1], b[1])


def restored_gaps(problem, a, b, thetas, tau):
    """Point gaps at ``tau`` (as computed) of the restored combinations of the pairs ``a`` and
    ``b`` for each of ``thetas`` (k,): the guide for choosing a combination of a problem without
    its own vectorized ``interpolation_gaps`` (the chosen pair is restored and bounded after).
    Shape (k,): ``problem.gap`` of ``problem.restore`` at ``tau`` of each combination, with ``theta`` the weight of
    ``b`` (``problem.interpolate(a, b, theta)``, else :func:`convex_combination`)."""
    interpolate = getattr(problem, "interpolate", None) or convex_combination
    out = []
    for th in thetas:
        p, d = problem.restore(*interpolate(a, b, th), tau)
        out.append(problem.gap(p, d, tau))
    return np.array(out)
