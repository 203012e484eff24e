"""Problems declared in CVXPY only: write the primal and the dual at a ``cp.Parameter`` and get a path.

>>> class ElasticNet(approxpath.CvxpyProblem):            # doctest: +SKIP
...     name, parameters = "elastic_net", ("lam",)
...     variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")
...     OPTIONS = dict(mix=Option("between", default=0.5, bounds=(0.0, 1.0)))
...     @staticmethod
...     def declare(X, y, lam, mix):
...         ...
...         return primal, dual

Subclassing :class:`CvxpyProblem` makes the certificate side (a
:class:`~approxpath.cvxpy_bound.CvxpyBound`), the ``Primal``/``Dual`` dataclasses (fields: the
variables' names) and, unless the class writes one, the constructor
``(X, y, *, <OPTIONS>, parameter=...)``.  Exact solves are CVXPY solves of the declarations
(Clarabel, then SCS).  The restoration of a pair for a piece re-optimizes the variables that are
not ``carried`` and a nonnegative scale of the carried ones (fixed up to that scale), with the
constraints imposed at every point of the piece the claim is made at, by one CVXPY solve per
side; where a side's constraints involve the parameter, each of those points gets its own
variables and scale (the pair is stored per point).  A side whose variables are all carried and
already feasible at those points is kept as it is (no solve).

Verifying such a certificate needs the declaration: the class must be registered in the
verifying process (``approxpath.register(ElasticNet)``, or an entry point of a plug-in package,
which the command line loads); cvxpy evaluates the expressions, no solver is called.
See ``docs/cvxpy-problems.md``.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .bound import REQUIRED
from .cvxpy_bound import CvxpyBound
from .errors import SolverError
from .problem import Declaration, Problem

__all__ = ["CvxpyProblem"]

# A pair at a point is kept as is (no restoring solve) when it is feasible there and its gap is
# at most this times 1 + |dual objective|: an exact solve's own pair (the exact-solve acceptance,
# approxpath.solvers.EXACT_GAP).
_KEEP_GAP = 1e-7


@dataclass
class _Restorer:
    """A cached CVXPY restoration problem of one side over ``m`` points: the problem, the
    parameter of each point, the carried values' parameters, the dual's offsets (the primal
    objective at each point) and each point's variables by name."""

    problem: Any
    ts: list
    carried: dict
    offsets: Any
    variables: list


def _pair_type(owner, kind, names):
    """A frozen dataclass ``owner.<kind>`` with one field per name and ``at`` (the points of the
    copied variables' values, or None), picklable by reference."""
    cls = dataclasses.make_dataclass(kind, [(n, Any) for n in names] + [("at", Any, None)], frozen=True)
    cls.__qualname__ = f"{owner.__qualname__}.{kind}"
    cls.__module__ = owner.__module__
    cls.__doc__ = (f"{kind} point of {owner.name}: " + ", ".join(names) + " (the CVXPY variables' values) and at "
                   "(None, or the parameter values of the copied variables' values).")
    return cls


def _constructor(cls):
    """``__init__(self, X, y, *, <options>, parameter=...)`` for ``cls`` (its options' defaults)."""
    def __init__(self, X, y, **options):
        Problem.__init__(self, X, y, **options)

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("self", "X", "y")]
    for key, spec in cls.OPTIONS.items():
        default = inspect.Parameter.empty if spec.default is REQUIRED else spec.default
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default))
    params.append(inspect.Parameter("parameter", inspect.Parameter.KEYWORD_ONLY, default=cls.parameters[0]))
    __init__.__signature__ = inspect.Signature(params)
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _makes_its_bound(cls):
    """Whether ``cls`` gets its own Bound: it declares its problem, or it renames an inherited
    declaration (a Bound bears its problem's name: the registry refuses another)."""
    return "declare" in vars(cls) or ("name" in vars(cls) and hasattr(cls, "declare"))


def _check_options(cls):
    """:class:`InputError` unless ``cls.declare(X, y, t, **options)`` can be called with the
    options of ``cls.OPTIONS`` by name (a name in one and not the other would fail at the first
    solve, with Python's ``TypeError``)."""
    from .errors import InputError

    signature = inspect.signature(cls.declare)
    try:
        signature.bind(None, None, None, **dict.fromkeys(cls.OPTIONS))
    except TypeError as exc:
        raise InputError(f"{cls.__qualname__}: declare{signature} does not take the options of OPTIONS "
                         f"({', '.join(cls.OPTIONS) or 'none'}) by name: {exc}") from None


class CvxpyProblem(Problem):
    """Base of the problems declared in CVXPY only (see the module docstring).

    Subclasses set

    * ``name`` (the registry key) and ``parameters`` (path parameter names, a positive scale);
    * ``declare``: a static method ``declare(X, y, t, **options) -> (primal, dual)``, two
      ``cp.Problem`` at the ``cp.Parameter`` ``t`` (``cp.Minimize`` and ``cp.Maximize``) whose
      variables are named (``cp.Variable(n, name="beta")``);
    * ``variables`` and ``dual_variables``: those names; ``carried``: the names (of either side)
      the restoration keeps up to a scale, the others being re-optimized;
    * optionally ``OPTIONS`` (:class:`~approxpath.bound.Option` domains of ``declare``'s
      keyword options), ``examples()`` and ``default_interval()``.
    """

    variables: ClassVar[tuple] = ()
    dual_variables: ClassVar[tuple] = ()
    carried: ClassVar[tuple] = ()
    parameters: ClassVar[tuple] = ("t",)
    OPTIONS: ClassVar[dict] = {}
    backends = ("clarabel", "scs")
    # each weight tried by the interpolation guide costs a restoring solve: interpolate linearly
    weighing_depth = 0
    _transient = ("_solve_decl", "_restorers")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if not _makes_its_bound(cls):
            return
        _check_options(cls)
        both = tuple(cls.variables) + tuple(cls.dual_variables)
        if len(set(both)) != len(both) or not set(cls.carried) <= set(both) or "at" in both:
            raise TypeError(f"{cls.__qualname__}: variable names must be distinct across the primal and the dual "
                            f"(and not 'at'), and carried ({cls.carried}) a subset of them ({both})")
        bound = type(f"{cls.__name__}Bound", (CvxpyBound,), dict(
            name=cls.name, parameters=tuple(cls.parameters), OPTIONS=dict(cls.OPTIONS),
            declare=inspect.getattr_static(cls, "declare"),
            variables=tuple(cls.variables), dual_variables=tuple(cls.dual_variables), carried=tuple(cls.carried),
            __module__=cls.__module__, __qualname__=f"{cls.__qualname__}.Bound"))
        bound.Primal = _pair_type(cls, "Primal", cls.variables)
        bound.Dual = _pair_type(cls, "Dual", cls.dual_variables)
        cls.Bound, cls.Primal, cls.Dual = bound, bound.Primal, bound.Dual
        if "__init__" not in vars(cls):
            cls.__init__ = _constructor(cls)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._transient}

    @classmethod
    def examples(cls):
        """No conformance examples unless the class gives some."""
        return []

    # -------------------------------------------------------------- specification
    def _declaration(self):
        decl = self.__dict__.get("_solve_decl")
        if decl is None:
            decl = self._solve_decl = self.bound.declare_new()
        return decl

    def cvxpy_primal(self, t):
        decl = self._declaration()
        decl.t.value = float(t)
        return Declaration(decl.primal, decl.primal_vars)

    def cvxpy_dual(self, t):
        decl = self._declaration()
        decl.t.value = float(t)
        return Declaration(decl.dual, decl.dual_vars)

    def candidate(self, backend, t, warm=None):
        """Both declarations at ``t`` solved by ``backend`` (Clarabel or SCS)."""
        from .solvers.conic import solve_cvxpy

        pair = []
        for decl, cls in ((self.cvxpy_primal(t), self.Primal), (self.cvxpy_dual(t), self.Dual)):
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*not DPP")
                solve_cvxpy(decl.problem, (backend,))
            pair.append(cls(**{k: _value(v) for k, v in decl.variables.items()}))
        return tuple(pair)

    # -------------------------------------------------------------- restoration
    def restore(self, primal, dual, lo, hi=None):
        """The pair re-optimized for ``[lo, hi]`` (see the module docstring): the primal for the
        mean of its objectives at the piece's points
        (:meth:`~approxpath.cvxpy_bound.CvxpyBound.restore_points`), then the dual for the
        largest smallest ``d - f`` there, each feasible at all of them.  A side whose variables
        are all carried and feasible at those points is kept, and so is a pair at a point that
        is feasible there with an exact solve's gap; where a restoring solve fails the pair
        comes back as given (the bound then rejects it where it is infeasible)."""
        bound = self.bound
        pts = bound.restore_points(lo, hi)
        if hi is None and not bound.errors(primal, dual, lo, lo):
            if bound.gap(primal, dual, lo) <= _KEEP_GAP * (1.0 + abs(self.dual_objective(dual, lo))):
                return primal, dual
        try:
            p = primal if self._kept("primal", primal, pts) else self._restore("primal", primal, pts)
            if self._kept("dual", dual, pts):
                return p, dual
            offsets = [bound.side_at("primal", p, x)[0] for x in pts]
            return p, self._restore("dual", dual, pts, offsets)
        except SolverError:
            return primal, dual

    def _kept(self, side, point, pts):
        """Whether ``point`` stays as it is: every variable of its side is carried and it is
        feasible at all of ``pts`` (no solve then: the pair of an exact solve, or a combination
        of two, on a problem whose feasible set does not move)."""
        names = self.variables if side == "primal" else self.dual_variables
        if not set(names) <= set(self.carried):
            return False
        for x in set(pts):
            value, excess = self.bound.side_at(side, point, x)
            if value is None or excess > 0:
                return False
        return True

    def _restorer(self, side, m):
        """The restoration problem of ``side`` over ``m`` points (built once, then re-solved
        with new parameter values): one declaration per point, the carried variables a
        nonnegative multiple of their carried values, and either the variables equal across the
        declarations (one point for the piece) or, where the side copies its variables, each
        point its own, with its own multiple."""
        import cvxpy as cp

        cache = self.__dict__.setdefault("_restorers", {})
        if (side, m) in cache:
            return cache[side, m]
        decls = [self.bound.declare_new() for _ in range(m)]
        probs = [d.primal if side == "primal" else d.dual for d in decls]
        vars_ = [d.primal_vars if side == "primal" else d.dual_vars for d in decls]
        copied = bool(self.bound.copied[side])  # the constraints involve t: each point has its own
        carried = {n: cp.Parameter(v.shape) for n, v in vars_[0].items() if n in self.carried}
        constraints = list(probs[0].constraints)
        for k in range(1, m):
            if copied:
                constraints += probs[k].constraints
            else:
                constraints += [vars_[k][n] == vars_[0][n] for n in vars_[0]]
        for k in range(m if copied else 1) if carried else ():
            scale = cp.Variable(nonneg=True)  # one per point where the points have their own
            constraints += [vars_[k][n] == scale * par for n, par in carried.items()]
        offsets = None
        if side == "primal":
            objective = cp.Minimize(sum(p.objective.expr for p in probs) / m)
        else:
            offsets = cp.Parameter(m)
            z = cp.Variable()
            constraints += [z <= probs[k].objective.expr - offsets[k] for k in range(m)]
            objective = cp.Maximize(z)
        cache[side, m] = _Restorer(cp.Problem(objective, constraints), [d.t for d in decls], carried, offsets, vars_)
        return cache[side, m]

    def _restore(self, side, point, pts, offsets=None):
        """One restoring solve of ``side`` for the points ``pts`` (see :meth:`_restorer`)."""
        r = self._restorer(side, len(pts))
        for t, x in zip(r.ts, pts):
            t.value = float(x)
        for n, par in r.carried.items():
            par.value = np.asarray(getattr(point, n), dtype=float).reshape(par.shape)
        if offsets is not None:
            r.offsets.value = np.asarray(offsets, dtype=float)
        _solve_restoration(r.problem, self.backends)
        cls = self.Primal if side == "primal" else self.Dual
        copied = self.bound.copied[side] if len(pts) > 1 else ()
        values = {n: (np.stack([_value(vs[n], project=True) for vs in r.variables]) if n in copied
                      else _value(v, project=True)) for n, v in r.variables[0].items()}
        return cls(**values, at=np.asarray(pts, dtype=float) if copied else None)

    # -------------------------------------------------------------- numpy maps
    def primal_at(self, primal, tau):
        """The primal at ``tau``: as it is without copies; the copy at ``tau``; else (a parameter
        value between a sampled piece's points, where nothing is claimed) the copy nearest in log
        scale restored at ``tau`` by a solve."""
        return self._side_at("primal", primal, tau)

    def dual_at(self, dual, tau):
        """The dual at ``tau``, as :meth:`primal_at`."""
        return self._side_at("dual", dual, tau)

    def _side_at(self, side, point, tau):
        if point.at is None or not self.bound.copied[side]:
            return point
        at = np.asarray(point.at, dtype=float)
        k = int(np.argmin(np.abs(np.log(at) - np.log(tau))))
        single = (self.Primal if side == "primal" else self.Dual)(**self.bound.values_at(side, point, float(at[k])))
        if at[k] == tau:
            return single
        try:
            return self._restore(side, single, [tau])
        except SolverError:
            return single

    def primal_objective(self, primal, tau):
        value = self.bound.side_at("primal", primal, tau)[0]
        return np.nan if value is None else value

    def dual_objective(self, dual, tau):
        value = self.bound.side_at("dual", dual, tau)[0]
        return np.nan if value is None else value

    def primal_violation(self, primal, tau):
        """The largest constraint violation beyond the feasibility tolerance (0 within it)."""
        value, excess = self.bound.side_at("primal", primal, tau)
        return np.inf if value is None else max(0.0, excess)

    def dual_violation(self, dual, tau):
        value, excess = self.bound.side_at("dual", dual, tau)
        return np.inf if value is None else max(0.0, excess)


def _solve_restoration(problem, backends):
    """Solve a restoration ``problem``: the first backend whose status is optimal, also
    "inaccurate" (Clarabel stops short of its 1e-10 tolerances on many restorations: their point
    is checked by the bound anyway, feasibility and gap, so a solver's status decides nothing)."""
    import cvxpy as cp

    from .solvers import SolveSettings, settings
    from .solvers.conic import solve_cvxpy

    with warnings.catch_warnings():  # a declaration that is not DPP is compiled at every solve: known
        warnings.filterwarnings("ignore", message=".*not DPP")
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        for name in backends:
            try:
                with settings(SolveSettings()):
                    solve_cvxpy(problem, (name,))
                return
            except SolverError:
                if problem.status == cp.OPTIMAL_INACCURATE and all(v.value is not None for v in problem.variables()):
                    return
        raise SolverError(f"restoration: no solver succeeded ({problem.status})")


def _value(v, project=False):
    """A variable's value as a float array (a float for a scalar), projected onto the variable's
    attributes (``nonneg``, ...) with ``project``."""
    value = np.asarray(v.project(v.value) if project else v.value, dtype=float)
    return float(value) if value.ndim == 0 else value
