"""The conformance battery (:mod:`approxpath.testing`) on every registered problem: a problem
added to ``problems/`` (or through the entry point) is tested the moment it is registered."""

import pytest

from approxpath.registry import available_problems, get_problem
from approxpath.testing import CHECKS, check_problem, parametrize_with_checks
from approxpath.testing.checks import check_tampered_certificates_fail, examples_of


@parametrize_with_checks([get_problem(name) for name in available_problems()])
def test_conformance(example, check):
    check(example)


def test_check_problem_runs_every_check_on_every_example():
    from approxpath.testing import ToyProjection

    assert check_problem(ToyProjection) == len(CHECKS) * len(ToyProjection.examples())


def test_a_bound_that_lies_fails_the_battery(monkeypatch):
    """The negative check bites: a bound that under-reports every gap lets a forged certificate
    through, and the battery says so."""
    cls = get_problem("toy_projection")
    monkeypatch.setattr(cls.Bound, "gap", lambda self, p, d, lo, hi=None: 0.0)
    with pytest.raises(AssertionError, match="verifies"):
        check_tampered_certificates_fail(examples_of(cls)[0])


def test_the_tests_plug_ins_are_in_the_battery():
    """The problems the tests declare as plug-ins are registered before collection, so the
    battery above covers them whatever order the test files run in."""
    from plugin_problems import PROBLEMS

    assert {cls.name for cls in PROBLEMS} <= set(available_problems())
