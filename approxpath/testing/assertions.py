"""What the conformance checks (:mod:`approxpath.testing.checks`) share: the parameters they sample,
the scale of a tolerance, and the assertions of feasibility, weak duality and closeness.

:func:`random_taus` draws a check's parameters (log-uniform over an interval, seeded);
:func:`dual_scale` is the scale its tolerances are relative to (:math:`1 + |\\text{dual objective}|`);
:func:`evaluate_declaration` evaluates a problem's CVXPY declaration at given values (the
independent reference the checks compare the numpy maps with); the ``assert_*`` functions raise
``AssertionError`` saying what is wrong.  Not part of the package's interface
(:mod:`approxpath.testing` exports the checks only).
"""

from __future__ import annotations

import numpy as np

from ..certificate.claims import WEAK_DUALITY_TOL

__all__ = ["random_taus", "dual_scale", "assert_weak_duality", "assert_feasible", "evaluate_declaration",
           "assert_close"]

# Weak duality: no computed gap may be below -_WEAK * (1 + |dual objective|), and no rigorous
# bound (a problem with ``interval_bound``) below 0: verify's tolerance, one definition.
_WEAK = WEAK_DUALITY_TOL


def random_taus(interval, k, seed):
    """``k`` parameters drawn log-uniformly from ``interval`` by a generator seeded with ``seed``."""
    lo, hi = interval
    return np.exp(np.random.default_rng(seed).uniform(np.log(lo), np.log(hi), k))


def dual_scale(problem, dual, t):
    """The scale of a check's tolerances at ``t``: 1 + the absolute dual objective of ``dual`` there."""
    return 1.0 + abs(problem.dual_objective(dual, t))


def assert_weak_duality(problem, g, scale):
    """Weak duality of a computed gap ``g``: never negative for a rigorous bound, at least
    ``-_WEAK * scale`` for another (a negative gap disproves the problem's dual)."""
    floor = 0.0 if problem.bound.interval_bound else -_WEAK * scale
    assert g == g, "the gap is NaN: the bound's gap() returned NaN for a feasible pair"
    assert g >= floor, f"gap {g!r} < {floor!r}: weak duality fails, the problem's dual is not a dual of its primal"


def assert_feasible(problem, primal, dual, t, tol, what):
    """``primal`` (completed) and ``dual`` violate the problem's constraints at ``t`` by at most ``tol``."""
    for side, off in (("primal", problem.primal_violation(primal, t)), ("dual", problem.dual_violation(dual, t))):
        assert off <= tol, f"{what} at {t:.6g}: its {side} violates the constraints by {off!r} > {tol:.3g}"


def evaluate_declaration(decl, values, tolerant=False):
    """``(objective, largest constraint violation)`` of a CVXPY declaration at ``values``; ``tolerant``:
    the violation beyond the tolerance a CVXPY-declared bound grants
    (:func:`~approxpath.cvxpy_bound.excess`), as its pairs are feasible to that alone."""
    from ..cvxpy_bound import excess

    for name, var in decl.variables.items():
        var.value = np.asarray(values[name], dtype=float).reshape(var.shape)
    constraints = decl.problem.constraints
    violation = excess(constraints) if tolerant else max((float(np.max(c.violation())) for c in constraints),
                                                         default=0.0)
    return float(decl.problem.objective.value), max(violation, 0.0)


def assert_close(a, b, rel, abs_, why=""):
    """``a`` within ``abs_ + rel * |b|`` of ``b``; else an ``AssertionError`` ending with ``why``."""
    assert abs(a - b) <= abs_ + rel * abs(b), f"{a!r} != {b!r} (rel {rel}, abs {abs_}){why}"
