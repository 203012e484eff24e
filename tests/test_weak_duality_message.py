"""The weak-duality failure names what to fix for the kind of problem: a CVXPY declaration of
the dual, or a hand-written Bound (a plug-in whose dual is infeasible was told about "a declared
problem's declaration of the dual")."""

from approxpath.certificate.claims import weak_duality_violation
from approxpath.testing import ToyProjection

from plugin_problems import Lasso, regression


def test_a_plugin_bound_is_told_about_its_bound_not_a_declaration():
    toy = ToyProjection.examples()[0][0]
    message = weak_duality_violation(toy.bound, -1.0, None, 1.0, 2.0)
    assert message.startswith("weak duality fails on [1, 2]: the gap bound is -1 < 0, so toy_projection's Bound is "
                              "wrong: errors() accepts a pair that is not feasible")
    assert "declar" not in message


def test_a_cvxpy_declared_problem_is_told_about_its_declaration_of_the_dual():
    lasso = Lasso(*regression(n=10, d=3))
    message = weak_duality_violation(lasso.bound, -1.0, None, 1.0, 2.0)
    assert message.endswith("so lasso_cvxpy's dual is not a dual of its primal (its declaration of the dual is wrong)")
