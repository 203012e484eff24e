"""Conformance checks every problem must pass, shipped so that a plug-in package runs them too.

>>> from approxpath.testing import check_problem
>>> check_problem(MyProblem)                      # doctest: +SKIP

or, in a pytest suite, one test per example and check::

    from approxpath.testing import parametrize_with_checks

    @parametrize_with_checks([MyProblem])
    def test_conformance(example, check):
        check(example)

The checks (:data:`~approxpath.testing.checks.CHECKS`) run on each of ``MyProblem.examples()``:
options and bound agree, exact solves are optimal and feasible, the numpy maps match the CVXPY
declarations, a piece's bound dominates the gap inside it, arrays round-trip, the default path
is certified and verifies, tampered certificates fail verification, altered pairs the bound
accepts are feasible for the declarations and bounded, each backend alone makes an optimal pair,
the vectorized interpolation guide (where present) matches the generic one, and a run stopped
half-way and resumed from its checkpoint gives the uninterrupted run's certificate.  :class:`ToyProjection` is a
known-answer problem (closed-form optimum) for testing drivers and strategies.
"""

from __future__ import annotations

from .checks import CHECKS, Example, examples_of
from .toy import ToyBound, ToyProjection

__all__ = ["check_problem", "parametrize_with_checks", "CHECKS", "Example", "ToyProjection", "ToyBound"]


def check_problem(cls):
    """Run every check on every example of ``cls`` (registering ``cls`` if it is not yet: the
    verifier finds a problem's certificate side through the registry).  Raises
    ``AssertionError`` naming the check and the example (or saying that ``cls`` has no
    examples: nothing checked is no pass); returns the number of checks run."""
    from ..registry import register

    register(cls)
    examples = examples_of(cls)
    if not examples:  # nothing checked is no pass
        raise AssertionError(f"{cls.name} has no examples(): give at least one (problem, interval, eps), or the "
                             "checks have nothing to check")
    runs = 0
    for example in examples:
        for check in CHECKS:
            try:
                check(example)
            except AssertionError as exc:
                raise AssertionError(f"{check.__name__} on {example!r}: {exc}") from exc
            runs += 1
    return runs


def parametrize_with_checks(classes):
    """A ``pytest.mark.parametrize`` decorator over ``(example, check)`` for every example of
    every class in ``classes`` (registered first) and every check; ids name both."""
    import pytest

    from ..registry import register

    params = []
    for cls in classes:
        register(cls)
        for k, example in enumerate(examples_of(cls)):
            for check in CHECKS:
                params.append(pytest.param(example, check, id=f"{cls.name}-{k}-{example.problem.parameter}-"
                                                              f"{check.__name__[len('check_'):]}"))
    return pytest.mark.parametrize("example, check", params)
