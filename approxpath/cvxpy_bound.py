"""Certificate side of a problem declared in CVXPY only (:class:`~approxpath.cvxpy_problem.CvxpyProblem`).

The user's ``declare(X, y, t, **options)`` returns the primal (``cp.Minimize``) and the dual
(``cp.Maximize``) of the problem at a ``cp.Parameter`` ``t``.  A :class:`CvxpyBound` evaluates
them in numpy (CVXPY computes the values of expressions; no solver is called): objectives, and
constraint violations, which count as feasible up to :data:`FEASIBILITY_TOL` (a point restored by
an interior-point solve is feasible to about 1e-10 of the data's scale, not exactly).

**Weight form.**  When ``t`` occurs in no primal constraint and the primal objective is affine in
``t`` for every fixed point (``r(x) + t l(x)``: :func:`weight_form` reads this off the
expression tree), the optimal value :math:`\\mathrm{opt}(t) = \\min_{x \\in C} r(x) + t\\,l(x)` is a
minimum of affine functions of :math:`t`, hence concave.  For a fixed feasible :math:`x`,
:math:`f_t(x) - \\mathrm{opt}(t)` is then convex in :math:`t` (affine minus concave), so on a piece
:math:`[lo, hi]` it is largest at an end, where weak duality bounds it by
:math:`f_e(x) - d_e(y)` for a dual point :math:`y` feasible at that end.  So the piece bound is
:math:`\\max_{e \\in \\{lo, hi\\}} f_e(x) - d_e(y)`: :math:`x` is feasible at every :math:`t` of the
piece and within that bound of the optimum there ("certified" pieces; the claim is about the
primal point).  Otherwise pieces are sampled: the pair must be feasible, and its gap meet the
target, at the piece's sampled points.

Rounding: CVXPY evaluates expressions in floating point without error bounds, so a relative
allowance :data:`ROUNDING` of the objectives is added instead of the built-in problems' rigorous
ones (see ``docs/cvxpy-problems.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .bound import Bound

__all__ = ["CvxpyBound", "weight_form", "FEASIBILITY_TOL", "ROUNDING"]

#: A constraint counts as satisfied when its violation (CVXPY's ``violation()``) is at most this
#: times 1 + the largest absolute value of its sides: restorations solve to Clarabel's feasibility
#: tolerance 1e-10 relative to the data's scale, 100x below this.
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


def _has(expr, t):
    return any(p.id == t.id for p in expr.parameters())


def _affine_scalar(expr, t):
    """Whether ``expr`` (no variables) is built from ``t`` and constants by sums, negation,
    products with constants and division by constants: affine in ``t``."""
    from cvxpy.atoms.affine.add_expr import AddExpression
    from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
    from cvxpy.atoms.affine.promote import Promote
    from cvxpy.atoms.affine.unary_operators import NegExpression
    from cvxpy.expressions.constants import Constant, Parameter

    if isinstance(expr, Parameter):
        return expr.id == t.id
    if isinstance(expr, Constant) or not _has(expr, t):
        return not expr.variables()
    if isinstance(expr, (AddExpression, NegExpression, Promote)):
        return all(_affine_scalar(a, t) for a in expr.args)
    if isinstance(expr, (MulExpression, multiply)):
        a, b = expr.args
        return (not _has(a, t) and _affine_scalar(b, t) and not a.variables()) or \
            (not _has(b, t) and _affine_scalar(a, t) and not b.variables())
    if isinstance(expr, DivExpression):
        return not _has(expr.args[1], t) and not expr.args[1].variables() and _affine_scalar(expr.args[0], t)
    return False


def _affine_in(expr, t):
    """Whether ``expr`` is certainly ``A(x) + sum_k a_k(t) B_k(x)`` with ``a_k`` affine in ``t``
    alone and ``A, B_k`` free of ``t`` (affine in ``t`` at every fixed ``x``); False where the tree
    does not show it (only ever a false "no": the pieces are then sampled)."""
    from cvxpy.atoms.affine.add_expr import AddExpression
    from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
    from cvxpy.atoms.affine.index import index
    from cvxpy.atoms.affine.promote import Promote
    from cvxpy.atoms.affine.sum import Sum
    from cvxpy.atoms.affine.unary_operators import NegExpression

    if not _has(expr, t):
        return True
    if not expr.variables():
        return _affine_scalar(expr, t)
    if isinstance(expr, (AddExpression, NegExpression, Sum, Promote, index)):
        return all(_affine_in(a, t) for a in expr.args)
    if isinstance(expr, (MulExpression, multiply)):
        a, b = expr.args
        for u, v in ((a, b), (b, a)):
            if not u.variables() and not _has(u, t) and _affine_in(v, t):  # constant times weight form
                return True
            if not u.variables() and _affine_scalar(u, t) and not _has(v, t):  # a(t) times B(x)
                return True
        return False
    if isinstance(expr, DivExpression):
        den = expr.args[1]
        return not den.variables() and not _has(den, t) and _affine_in(expr.args[0], t)
    return False


def weight_form(primal, t):
    """Whether the primal ``cp.Problem`` is of the weight form in the parameter ``t``: ``t`` in no
    constraint and the objective affine in ``t`` at every fixed point (see the module docstring)."""
    if any(_has(c, t) for c in primal.constraints):
        return False
    return _affine_in(primal.objective.expr, t)


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
    interval_bound : bool
        Per instance: the primal is of the weight form (:func:`weight_form`).
    dual_joint : bool
        Per instance: on a weight-form piece whose dual has values at both ends, the dual at a
        ``t`` between them is their linear interpolation, feasible with a gap below the bound
        (:meth:`_jointly_concave_dual`); otherwise the claim between the ends is the primal's.
    copied : dict
        Per instance: ``{"primal": names, "dual": names}`` of the copied variables (all or none
        of a side's).
    """

    declare: ClassVar = None
    variables: ClassVar[tuple] = ()
    dual_variables: ClassVar[tuple] = ()
    carried: ClassVar[tuple] = ()
    interval_bound = False
    _transient = ("_decl",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self._decl = None
        decl = self.declared
        self.interval_bound = weight_form(decl.primal, decl.t)
        self.dual_joint = self.interval_bound and self._jointly_concave_dual()
        self.copied = {side: frozenset(names) if any(_has(c, decl.t) for c in problem.constraints) else frozenset()
                       for side, problem, names in (("primal", decl.primal, self.variables),
                                                    ("dual", decl.dual, self.dual_variables))}

    def _jointly_concave_dual(self):
        """Whether the dual declared with ``t`` a variable is DCP: its objective jointly concave
        and its feasible set jointly convex in (dual point, t).  Then on a weight-form piece the
        dual moving linearly between its values at the ends is feasible at every ``t`` between,
        and its gap there is below the larger end gap (the objective is above the chord)."""
        import cvxpy as cp

        try:
            dual = type(self).declare(self.X, self.y, cp.Variable(pos=True), **self.user_options)[1]
            return bool(dual.is_dcp())
        except Exception:  # a declaration that needs t to be a parameter: not shown
            return False

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
        found = []
        for problem, names in ((primal, self.variables), (dual, self.dual_variables)):
            by_name = {v.name(): v for v in problem.variables()}
            if set(by_name) != set(names) or len(by_name) != len(problem.variables()):
                raise InputError(f"{self.name}: the declared variables are {sorted(v.name() for v in problem.variables())}"
                                 f", the class names {sorted(names)}: name each cp.Variable (name=...) as listed")
            found.append(by_name)
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
        weights = None  # of the copies, summing to 1
        if at is not None and copied:
            at = np.asarray(at, dtype=float).reshape(-1)
            weights = np.zeros(at.size)
            hits = np.flatnonzero(at == tau)
            if hits.size:
                weights[hits[0]] = 1.0
            elif side == "dual" and self.dual_joint and at.size == 2 and at[0] < tau < at[1]:
                theta = (tau - at[0]) / (at[1] - at[0])  # the moving dual (see _jointly_concave_dual)
                weights[:] = 1.0 - theta, theta
            else:
                return f"the {side} has no values at {tau:.17g}"
        out = {}
        for name, v in variables.items():
            value = np.asarray(getattr(point, name), dtype=float)
            if weights is not None and name in copied:
                if value.ndim == 0 or value.shape[0] != at.size:
                    return f"{name} must hold one value per point of 'at' ({at.size})"
                value = value[int(np.argmax(weights))] if weights.max() == 1.0 else np.tensordot(weights, value, 1)
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

    def _excess(self, problem):
        """The largest constraint violation beyond :data:`FEASIBILITY_TOL` (<= 0: feasible)."""
        worst = -np.inf
        for c in problem.constraints:
            size = max((float(np.max(np.abs(a.value))) for a in c.args if a.size), default=0.0)
            worst = max(worst, float(np.max(c.violation())) - FEASIBILITY_TOL * (1.0 + size))
        return worst

    def side_at(self, side, point, tau):
        """``(objective value, violation beyond the tolerance)`` of ``point`` at ``tau`` for
        ``side`` in ``{"primal", "dual"}``; ``(None, message)`` where the point does not fit."""
        decl = self.declared
        decl.t.value = float(tau)
        bad = self._assign(side, point, tau)
        if bad is not None:
            return None, bad
        problem = decl.primal if side == "primal" else decl.dual
        return float(problem.objective.value), self._excess(problem)

    def restore_points(self, lo, hi=None):
        """The points a pair restored for ``[lo, hi]`` is made for (its copies' ``at``): ``lo``;
        the ends of a weight-form piece; the sampled points of another piece
        (:func:`~approxpath.certificate.verify.sample_points`, repeats included)."""
        if hi is None:
            return [lo]
        if self.interval_bound:
            return [lo, hi]
        from .certificate.verify import sample_points

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
        """At a point, the gap; on a weight-form piece the larger end gap (see the module
        docstring); infinite on a piece of another problem (no interval bound) or where the
        pair is infeasible."""
        if hi is not None and hi != lo and not self.interval_bound:
            return np.inf
        return max(self._point_gap(primal, dual, tau) for tau in self.points(lo, hi))

    def dual_floor(self, dual, lo, hi=None):
        """The dual objective at a point; on a weight-form piece the smaller end value (the optimal
        value is concave in ``t``, so it is above that on the whole piece)."""
        if hi is not None and hi != lo and not self.interval_bound:
            return -np.inf  # no bound of the optimum between sampled points
        out = np.inf
        for tau in self.points(lo, hi):
            d, de = self.side_at("dual", dual, tau)
            if d is None or de > 0:
                return -np.inf
            out = min(out, d - ROUNDING * (1.0 + abs(d)))
        return out
