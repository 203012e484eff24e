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
half-way and resumed from its checkpoint gives the uninterrupted run's certificate.  A failure is
an ``AssertionError`` naming the check and the example (any other exception a check meets is
turned into one, naming its type and first line); a class without examples fails.
:class:`ToyProjection` is a known-answer problem (closed-form optimum) for testing drivers and strategies.
"""

from __future__ import annotations

import functools

from ..errors import brief
from .checks import CHECKS, Example, examples_of
from .toy import ToyBound, ToyProjection

__all__ = ["check_problem", "parametrize_with_checks", "CHECKS", "Example", "ToyProjection", "ToyBound"]


def check_problem(cls):
    """Run every check on every example of ``cls`` (registering ``cls`` if it is not yet: the
    verifier finds a problem's certificate side through the registry).  Raises
    ``AssertionError`` naming the check and the example (any other exception inside a check
    becomes one, naming the exception's type and first line, chained), or saying that ``cls``
    has no examples (nothing checked is no pass) or that its ``examples()`` raised; returns the
    number of checks run."""
    from ..registry import register

    register(cls)
    cases = _cases(cls)
    for _, example, check in cases:
        check(example)
    return len(cases)


def parametrize_with_checks(classes):
    """A ``pytest.mark.parametrize`` decorator over ``(example, check)`` for every example of
    every class in ``classes`` (registered first) and every check; ids name both.  ``check``
    raises as :func:`check_problem` does; a class without examples, or whose ``examples()``
    raises, gets one case that fails saying so.  ``classes``: :class:`~approxpath.Problem`
    subclasses (:func:`~approxpath.registry.register`).  One :class:`Example` and one check of
    :data:`CHECKS` per case; ids ``NAME-K-PARAMETER-CHECK`` (``K``: the example's index;
    ``NAME-examples-examples`` for the failing case)."""
    import pytest

    from ..registry import register

    params = []
    for cls in classes:
        register(cls)
        for k, example, check in _cases(cls):
            where = "examples" if k is None else f"{k}-{example.problem.parameter}"
            params.append(pytest.param(example, check, id=f"{cls.name}-{where}-{check.__name__[len('check_'):]}"))
    return pytest.mark.parametrize("example, check", params)


def _cases(cls):
    """``[(k, example, check), ...]``: every check (:func:`_named`) on the ``k``-th example of
    ``cls``, for every example; else one case ``(None, cls, check_examples)`` whose check fails
    saying that ``cls`` has no examples, or that its ``examples()`` raised."""
    try:
        examples = examples_of(cls)
    except Exception as exc:  # the class's mistake, reported as the battery reports one
        return [(None, cls, _failing(f"{cls.name}.examples() raised {brief(exc)}", exc))]
    if not examples:  # nothing checked is no pass
        return [(None, cls, _failing(f"{cls.name} has no examples(): give at least one (problem, interval, eps), "
                                      "or the checks have nothing to check"))]
    return [(k, example, _named(check)) for k, example in enumerate(examples) for check in CHECKS]


def _failing(message, cause=None):
    """A check that fails with ``message`` (chained to ``cause``) whatever it is given."""
    def check_examples(_):
        raise AssertionError(message) from cause

    return check_examples


def _named(check):
    """``check`` raising ``AssertionError`` naming the check and the example; any other
    exception raised inside it (a solver's, a map's) becomes one, naming its type and its
    first line, chained."""
    @functools.wraps(check)
    def run(example):
        try:
            return check(example)
        except AssertionError as exc:
            raise AssertionError(f"{check.__name__} on {example!r}: {exc}") from exc
        except Exception as exc:
            raise AssertionError(f"{check.__name__} on {example!r}: {brief(exc)}") from exc

    return run
