"""Certificate side of a problem declared in CVXPY only (:class:`~approxpath.cvxpy_problem.CvxpyProblem`).

The user's ``declare(X, y, t, **options)`` returns the primal (``cp.Minimize``) and the dual
(``cp.Maximize``) of the problem at a ``cp.Parameter`` ``t``.  A :class:`CvxpyBound` evaluates
them in numpy (CVXPY computes the values of expressions; no solver is called): objectives, and
constraint violations, which count as feasible up to :data:`FEASIBILITY_TOL` (a point restored by
an interior-point solve is feasible to about 1e-10 of the data's scale, not exactly).

**Sampled, never certified.**  A certified piece needs a pair that is exactly feasible and a
gap whose rounding is bounded rigorously; CVXPY evaluates the user's expressions in floating point
without error bounds and a solver's point is feasible only to its tolerance, so every piece of a
CVXPY-declared problem is "sampled": the pair is feasible (to :data:`FEASIBILITY_TOL`) and its gap
meets the target at the piece's sampled points.  Where the parameter is only a weight of the
objective (``r(x) + t l(x)``, ``t`` in no constraint) the optimal value is concave in ``t`` and the
gap of a fixed primal point with the duals at the ends is convex between them, so such claims
extend to the whole piece up to those tolerances (``docs/cvxpy-problems.md``); write the
problem's own :class:`~approxpath.bound.Bound` to have it certified.

Rounding: CVXPY evaluates expressions in floating point without error bounds, so a relative
allowance :data:`ROUNDING` of the objectives is added instead of the built-in problems' rigorous
ones (see ``docs/cvxpy-problems.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .bound import Bound

__all__ = ["CvxpyBound", "FEASIBILITY_TOL", "ROUNDING", "excess"]

#: A constraint counts as satisfied when its violation (CVXPY's ``violation()``) is at most this
#: times 1 + the size of its sides, entry by entry (a cone's: the largest; :func:`_scale`):
#: restorations solve to Clarabel's feasibility tolerance 1e-10 relative to the data's scale,
#: 100x below this.
FEASIBILITY_TOL = 1e-8
#: Allowance for the rounding of CVXPY's evaluation of the objectives, times 1 + |f| + |d|
#: (2.3e-10, 2**21 units of roundoff): a sum of m terms is off by at most ~m u times the sum of
#: their absolute values, so this covers m = 1000 terms whose absolute values add up to 2000
#: times the objectives' size (cancellation).  It is not a proof (unlike the built-in problems'
#: allowances), and well below the exact-solve acceptance (1e-7) and any useful eps.
ROUNDING = 2.0**-32


@dataclass(frozen=True)
class Declared:
    """One declaration: the parameter, both problems and their variables by name."""

    t: Any
    primal: Any
    dual: Any
    primal_vars: dict
    dual_vars: dict


def excess(constraints):
    """The largest violation of ``constraints`` (CVXPY's, at their variables' values) beyond
    :data:`FEASIBILITY_TOL` times 1 + the size of their sides, entry by entry (:func:`_scale`):
    <= 0 where they hold as a :class:`CvxpyBound` counts them; -inf for none."""
    worst = -np.inf
    for c in constraints:
        violation = np.asarray(c.violation(), dtype=float)
        worst = max(worst, float(np.max(violation - FEASIBILITY_TOL * _scale(c, violation.shape))))
    return worst


def _scale(constraint, shape):
    """1 + the size of ``constraint``'s sides, entry by entry where they have its violation's
    ``shape`` (an elementwise constraint: each entry held to its own size, not to the largest,
    which let one entry of 1e9 excuse a 100 % violation of an entry of 10), else their largest
    (a cone: its violation is a norm of all of them).  An entry's size is the larger of its value
    and of its terms before they cancel, ``sum_j |d side_i / d x_j| |x_j|`` (:func:`_terms`): a
    solver's point is feasible to its tolerance relative to those."""
    sides = [np.maximum(np.abs(np.asarray(a.value, dtype=float)), _terms(a)) for a in constraint.args if a.size]
    if not sides:
        return 1.0
    try:
        return 1.0 + np.maximum.reduce([np.broadcast_to(v, shape) for v in sides])
    except ValueError:  # (sides of other shapes)
        return 1.0 + max(float(np.max(v)) for v in sides)


def _terms(expr):
    """``sum_j |d expr_i / d x_j| |x_j|`` over the variables ``x`` at their values (CVXPY's
    ``grad``), in ``expr``'s shape; 0 where CVXPY gives no gradient (the value alone then)."""
    try:
        grads = expr.grad or {}
    except NotImplementedError:  # (atoms without one: norm_inf, ...)
        return 0.0
    total = np.zeros(expr.size)
    for var, grad in grads.items():
        if grad is None:
            return 0.0
        total += np.asarray(abs(grad).T @ np.abs(np.ravel(var.value, order="F"))).ravel()
    return total.reshape(expr.shape, order="F")


def _has(expr, t):
    return any(p.id == t.id for p in expr.parameters())


def _check_dcp(name, primal, dual):
    """:class:`InputError` naming the declared problem (primal or dual) and its parts (the
    objective, the k-th constraint) that break CVXPY's DCP rules (``is_dcp()``): no solver
    takes it.  Not being DPP (``t / lam``, ``exp(-t D)``) is allowed: it only costs a
    compilation at every solve."""
    from .errors import InputError

    for side, problem in (("primal", primal), ("dual", dual)):
        if problem.is_dcp():
            continue
        parts = [("objective", problem.objective)] + [(f"constraint {k}", c) for k, c in enumerate(problem.constraints)]
        where = ", ".join(what for what, part in parts if not part.is_dcp()) or "as a whole"
        raise InputError(f"{name}: the declared {side} breaks CVXPY's DCP rules ({where}): CVXPY cannot prove it "
                         f"convex as written, so no solver takes it (problem.is_dcp() is False)")


class CvxpyBound(Bound):
    """The certificate side of a :class:`~approxpath.cvxpy_problem.CvxpyProblem` (one subclass per
    problem, made by it): numpy values of the user's CVXPY declarations.

    A pair's ``Primal`` and ``Dual`` hold the variables' values and ``at``: None, or the
    parameter values (m,) at which the side's *copied* variables have one value each (shape
    ``(m,) + variable shape``).  On a piece, a side whose constraints involve ``t`` has its
    variables copied (one point per parameter value the piece claims: its feasible set moves);
    every variable of a side whose constraints do not involve ``t`` has one value on the whole
    piece.

    Attributes
    ----------
    declare : staticmethod
        ``declare(X, y, t, **options) -> (primal, dual)``: ``cp.Problem`` objects at the
        ``cp.Parameter`` ``t``, ``cp.Minimize`` and ``cp.Maximize``.
    variables, dual_variables : tuple of str
        The names of the primal and the dual ``cp.Variable`` objects.
    carried : tuple of str
        The variables a piece keeps (up to a common scale per side).
    copied : dict
        Per instance: ``{"primal": names, "dual": names}`` of the copied variables (all or none
        of a side's).
    """

    declare: ClassVar = None
    variables: ClassVar[tuple] = ()
    dual_variables: ClassVar[tuple] = ()
    carried: ClassVar[tuple] = ()
    interval_bound = False
    # (pairs count as feasible to FEASIBILITY_TOL: the conformance checks hold the declarations to the same)
    feasibility_tol: ClassVar[float] = FEASIBILITY_TOL
    _transient = ("_decl",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self._decl = None
        decl = self.declared
        self.copied = {side: frozenset(names) if any(_has(c, decl.t) for c in problem.constraints) else frozenset()
                       for side, problem, names in (("primal", decl.primal, self.variables),
                                                    ("dual", decl.dual, self.dual_variables))}

    @property
    def user_options(self):
        """The options ``declare`` takes (all but ``parameter``)."""
        return {k: v for k, v in self.options.items() if k != "parameter"}

    def declare_new(self):
        """A fresh :class:`Declared` (new parameter and variables), its names checked."""
        import cvxpy as cp

        from .errors import InputError

        t = cp.Parameter(pos=True, name=self.parameter)
        primal, dual = type(self).declare(self.X, self.y, t, **self.user_options)
        if not isinstance(primal.objective, cp.Minimize) or not isinstance(dual.objective, cp.Maximize):
            raise InputError(f"{self.name}: declare() returns (primal, dual) with cp.Minimize and cp.Maximize objectives")
        _check_dcp(self.name, primal, dual)
        found = []
        for problem, names in ((primal, self.variables), (dual, self.dual_variables)):
            by_name = {v.name(): v for v in problem.variables()}
            if set(by_name) != set(names) or len(by_name) != len(problem.variables()):
                raise InputError(f"{self.name}: the declared variables are {sorted(v.name() for v in problem.variables())}"
                                 f", the class names {sorted(names)}: name each cp.Variable (name=...) as listed")
            found.append(by_name)
        ignored = [side for side, problem in (("primal", primal), ("dual", dual)) if not _has(problem, t)]
        if ignored:  # (its own cp.Parameter, or none: its values would not depend on the path's parameter)
            raise InputError(f"{self.name}: declare() must use the parameter t it is given ({self.parameter!r}) in "
                             f"both problems; the declared {' and '.join(ignored)} "
                             f"{'do' if len(ignored) > 1 else 'does'} not")
        return Declared(t, primal, dual, *found)

    @property
    def declared(self):
        """The :class:`Declared` used for evaluation (made on first use)."""
        if self._decl is None:
            self._decl = self.declare_new()
        return self._decl

    # -------------------------------------------------------------- evaluation
    def values_at(self, side, point, tau):
        """``{name: value}`` of ``point``'s variables at ``tau`` (the copy at ``tau`` of a copied
        variable), or a message saying why there is none (shape, not finite, no copy at ``tau``)."""
        decl = self.declared
        variables = decl.primal_vars if side == "primal" else decl.dual_vars
        at, copied = getattr(point, "at", None), self.copied[side]
        copy = None  # the index of the copies at tau
        if at is not None and copied:
            at = np.asarray(at, dtype=float).reshape(-1)
            hits = np.flatnonzero(at == tau)
            if not hits.size:
                return f"the {side} has no values at {tau:.17g}"
            copy = int(hits[0])
        out = {}
        for name, v in variables.items():
            value = np.asarray(getattr(point, name), dtype=float)
            if copy is not None and name in copied:
                if value.ndim == 0 or value.shape[0] != at.size:
                    return f"{name} must hold one value per point of 'at' ({at.size})"
                value = value[copy]
            if value.size != int(np.prod(v.shape)) or not np.all(np.isfinite(value)):
                return f"{name} must be {v.shape} finite numbers"
            out[name] = value.reshape(v.shape)
        return out

    def _assign(self, side, point, tau):
        """Set the side's variables to ``point``'s values at ``tau``; a message if they do not fit
        (:meth:`values_at`, or the variables' own attributes such as ``nonneg``, exactly)."""
        values = self.values_at(side, point, tau)
        if isinstance(values, str):
            return values
        variables = self.declared.primal_vars if side == "primal" else self.declared.dual_vars
        for name, value in values.items():
            v = variables[name]
            if not np.array_equal(np.asarray(v.project(value)), value):
                return f"{name} violates its variable's attributes"
            v.value = value
        return None

    def side_at(self, side, point, tau):
        """``(objective value, violation beyond the tolerance)`` of ``point`` at ``tau`` for
        ``side`` in ``{"primal", "dual"}``; ``(None, message)`` where the point does not fit."""
        decl = self.declared
        decl.t.value = float(tau)
        bad = self._assign(side, point, tau)
        if bad is not None:
            return None, bad
        problem = decl.primal if side == "primal" else decl.dual
        return float(problem.objective.value), excess(problem.constraints)

    def stored_point(self, side, point, lo, hi):
        """A point of a side that copies its variables, on a piece ``lo < hi``, as copies at every
        one of the piece's :meth:`restore_points` (a point kept as it is, an exact solve's,
        becomes that many equal copies): the same points, of one shape on every piece of a file.
        At a point (``lo == hi``: a checkpoint's exact solves) it is stored as it is."""
        if not self.copied[side] or getattr(point, "at", None) is not None or not lo < hi:
            return point
        at = np.asarray(self.restore_points(lo, hi), dtype=float)
        values = {name: np.stack([np.asarray(getattr(point, name), dtype=float)] * at.size) if name in self.copied[side]
                  else getattr(point, name) for name in (self.variables if side == "primal" else self.dual_variables)}
        return type(point)(**values, at=at)

    def restore_points(self, lo, hi=None):
        """The points a pair restored for ``[lo, hi]`` is made for (its copies' ``at``): ``lo``, or
        the piece's sampled points (:func:`~approxpath.certificate.claims.sample_points`, repeats
        included)."""
        if hi is None:
            return [lo]
        from .certificate.claims import sample_points

        return sample_points(lo, hi)

    def points(self, lo, hi=None):
        """Where a pair must be feasible on ``[lo, hi]`` and where its gap is taken
        (:meth:`restore_points` without repeats)."""
        return sorted(set(self.restore_points(lo, None if hi == lo else hi)))

    def errors(self, primal, dual, lo, hi):
        errors = []
        for tau in self.points(lo, hi):
            for side, point in (("primal", primal), ("dual", dual)):
                value, excess = self.side_at(side, point, tau)
                if value is None:
                    return [excess]
                if excess > 0:
                    errors.append(f"{side} infeasible at {tau:.6g}: a constraint is violated by {excess:.3g} beyond "
                                  f"the tolerance")
        return errors

    def _point_gap(self, primal, dual, tau):
        """``gap + rounding allowance`` at ``tau``; infinite where the pair is not feasible there."""
        f, fe = self.side_at("primal", primal, tau)
        d, de = self.side_at("dual", dual, tau)
        if f is None or d is None or fe > 0 or de > 0:
            return np.inf
        return f - d + ROUNDING * (1.0 + abs(f) + abs(d))

    def gap(self, primal, dual, lo, hi=None):
        """At a point, the gap; infinite on a piece (no interval bound) or where the pair is
        infeasible."""
        if hi is not None and hi != lo:
            return np.inf
        return max(self._point_gap(primal, dual, tau) for tau in self.points(lo, hi))

    def dual_floor(self, dual, lo, hi=None):
        """The dual objective at a point (no bound of the optimum between sampled points)."""
        if hi is not None and hi != lo:
            return -np.inf  # no bound of the optimum between sampled points
        out = np.inf
        for tau in self.points(lo, hi):
            d, de = self.side_at("dual", dual, tau)
            if d is None or de > 0:
                return -np.inf
            out = min(out, d - ROUNDING * (1.0 + abs(d)))
        return out
