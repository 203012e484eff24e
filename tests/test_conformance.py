"""The conformance battery (:mod:`approxpath.testing`) on every registered problem: a problem
added to ``problems/`` (or through the entry point) is tested the moment it is registered."""

import numpy as np
import pytest

from approxpath.registry import available_problems, get_problem
from approxpath.testing import CHECKS, check_problem, parametrize_with_checks
from approxpath.testing.checks import (check_altered_pairs_are_refused_or_bounded, check_tampered_certificates_fail,
                                      examples_of)


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


def _complete_squares(self, primal, dual, t):
    """The toy's gap with its squares completed: exact wherever x and mu are complementary
    (every pair a solve or a restoration makes), too small elsewhere."""
    return 0.5 * float(np.sum((primal.x - t * self.c - dual.mu) ** 2))


@pytest.mark.parametrize("attribute,broken,match", [
    ("_gap", _complete_squares, "not a bound for every feasible pair"),
    ("errors", lambda self, primal, dual, lo, hi: [], "misses a constraint"),
])
def test_a_bound_right_only_on_solved_pairs_fails_the_battery(monkeypatch, attribute, broken, match):
    """A plug-in whose gap formula holds only at the pairs the driver makes, or whose errors()
    forgets a constraint, passes every check that looks at solved pairs, and its verifier then
    accepts a forged certificate; the check on altered pairs says so."""
    cls = get_problem("toy_projection")
    check_altered_pairs_are_refused_or_bounded(examples_of(cls)[0])  # the toy itself passes
    monkeypatch.setattr(cls.Bound, attribute, broken)
    with pytest.raises(AssertionError, match=match):
        check_altered_pairs_are_refused_or_bounded(examples_of(cls)[0])


def test_a_fast_backend_with_a_wrong_map_fails_the_battery(monkeypatch):
    """A plug-in's own backend whose dual map is off by a factor: the general solvers after it
    made every solve succeed, so only the backend-by-backend check sees it."""
    from approxpath.testing import ToyProjection
    from approxpath.testing.checks import check_exact_pair_is_optimal_and_feasible
    from approxpath.testing.toy import ToyDual, ToyPrimal

    def candidate(self, backend, t, warm=None):
        if backend != "closed_form":
            return ToyProjection.candidate(self, backend, t, warm)
        return ToyPrimal(x=np.maximum(0.0, t * self.c)), ToyDual(mu=2.0 * np.maximum(0.0, -t * self.c))

    monkeypatch.setattr(ToyProjection, "backends", ("closed_form", "clarabel", "scs"))
    monkeypatch.setattr(ToyProjection, "candidate", candidate)
    example = examples_of(ToyProjection)[0]
    assert example.problem.solve(1.0) is not None  # the fallback hides it
    with pytest.raises(AssertionError, match="backend 'closed_form' alone gives a pair with certified gap"):
        check_exact_pair_is_optimal_and_feasible(example)


def test_the_tests_plug_ins_are_in_the_battery():
    """The problems the tests declare as plug-ins are registered before collection, so the
    battery above covers them whatever order the test files run in."""
    from plugin_problems import PROBLEMS

    assert {cls.name for cls in PROBLEMS} <= set(available_problems())


@pytest.mark.parametrize("lose", ["basis", "warm start"])
def test_state_lost_on_resume_fails_the_battery(monkeypatch, lose):
    """robust_l1 resumed from a checkpoint without its anchors' simplex bases (all that 0.5.0
    stored before) placed other solves and 10-20 % more pieces: certified, but not the
    uninterrupted run's certificate; a CVXPY declaration warm-started from its own last solve
    gave other last bits after a resume (here a stand-in for such state, whatever the solver)."""
    from approxpath.testing.checks import check_resumed_run_equals_uninterrupted

    if lose == "basis":
        cls = get_problem("robust_l1")
        monkeypatch.setattr(cls, "anchor_state", None)
    else:
        # a stand-in for a warm start's last bits that does not depend on the solver (cvxpy 1.4
        # with Clarabel gives the same bits with warm_start=True): each solution is moved by about
        # as many ulps as the process made solves before it
        import cvxpy as cp

        cls = get_problem("lasso_cvxpy")
        real, made = cp.Problem.solve, []

        def solve(self, *args, **kw):
            out = real(self, *args, **kw)
            for v in self.variables():
                if v.value is not None:
                    v.value = v.value * (1.0 + len(made) * 2.0**-52)
            made.append(None)
            return out

        monkeypatch.setattr(cp.Problem, "solve", solve)
    example = examples_of(cls)[0]
    with pytest.raises(AssertionError, match="lost on resume"):
        check_resumed_run_equals_uninterrupted(example)


_NO_EXAMPLES = '''
from approxpath.testing import ToyBound, ToyProjection, parametrize_with_checks


class NoExamplesBound(ToyBound):
    name = "toy_no_examples"


class NoExamples(ToyProjection):
    name = "toy_no_examples"
    Bound = NoExamplesBound

    @classmethod
    def examples(cls):
        return []


@parametrize_with_checks([NoExamples])
def test_conformance(example, check):
    check(example)
'''


def test_parametrize_with_checks_fails_a_class_without_examples(tmp_path):
    """A plug-in's suite whose class has no examples() was "1 skipped", exit status 0, with
    nothing checked; it fails (check_problem's message)."""
    import subprocess
    import sys

    (tmp_path / "test_plugin_suite.py").write_text(_NO_EXAMPLES)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plugin_suite.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout + done.stderr
    assert "toy_no_examples has no examples()" in done.stdout and "nothing to check" in done.stdout


def test_an_exception_inside_a_check_becomes_an_assertion_naming_the_check(monkeypatch):
    """A restore returning the pair swapped raised the solver's SolverError (after every backend's
    retries) out of the battery; the battery's contract is an AssertionError naming the check,
    the example and the exception, chained (here a violation map that raises)."""
    from approxpath.testing import ToyProjection

    def broken(self, primal, tau):
        raise RuntimeError("no violation map here")

    monkeypatch.setattr(ToyProjection, "primal_violation", broken)
    with pytest.raises(AssertionError, match=r"^check_exact_pair_is_optimal_and_feasible on toy_projection-t: "
                                             r"RuntimeError: no violation map here") as err:
        check_problem(ToyProjection)
    assert isinstance(err.value.__cause__, RuntimeError)
    # the same through parametrize_with_checks, whose ids still name the check
    [param] = [p for p in parametrize_with_checks([ToyProjection]).args[1]
               if p.id.endswith("-exact_pair_is_optimal_and_feasible")]
    example, check = param.values
    assert check.__name__ == "check_exact_pair_is_optimal_and_feasible"
    with pytest.raises(AssertionError, match="^check_exact_pair_is_optimal_and_feasible on toy_projection-t: "
                                             "RuntimeError"):
        check(example)


@pytest.mark.parametrize("swapped", [False, True], ids=["raises", "refused"])
def test_a_backend_that_raises_or_whose_pairs_are_refused_fails_the_battery(monkeypatch, swapped):
    """A plug-in's fast backend that raised (a plug-in of a review: an AttributeError in its closed form) was taken
    as declining and skipped, as was one whose every pair the exact solve refused (restore()
    swapping the pair): the general solvers after it made the path.  A backend declines with
    SolverError; anything else fails the battery, naming the backend."""
    from approxpath.errors import SolverError
    from approxpath.testing import ToyProjection
    from approxpath.testing.checks import check_exact_pair_is_optimal_and_feasible

    original = ToyProjection.candidate

    def candidate(self, backend, t, warm=None):
        if backend == "declines":
            raise SolverError("not for this size")
        if backend == "closed_form" and not swapped:
            raise AttributeError("'Toy' object has no attribute 'c_'")
        pair = original(self, "clarabel", t, warm)
        return pair[::-1] if swapped and backend == "closed_form" else pair

    monkeypatch.setattr(ToyProjection, "backends", ("declines", "closed_form", "clarabel"))
    monkeypatch.setattr(ToyProjection, "candidate", candidate)
    example = examples_of(ToyProjection)[0]
    match = ("backend 'closed_form' makes a pair at .* that no exact solve accepts: toy_projection at t = " if swapped
             else "backend 'closed_form' raises AttributeError: 'Toy' object has no attribute 'c_' at .*: a backend "
                  "that does not solve a problem declines with approxpath.errors.SolverError")
    with pytest.raises(AssertionError, match=match):
        check_exact_pair_is_optimal_and_feasible(example)


@pytest.mark.parametrize("shift,match", [
    (1.0, "restore\\(\\) on a piece does not tend to its pair at a point as the piece narrows"),
    (-1e-6, "the pair restored on \\[.*\\] at .*: its primal violates the constraints"),
], ids=["away", "infeasible"])
def test_a_restoration_wrong_on_pieces_only_fails_the_battery(monkeypatch, shift, match):
    """check_restoration looked at pairs restored at points only: a plug-in's restore() that moved
    the pair on pieces (a path then split pieces to dust) or left it infeasible there passed
    it.  Pieces are checked too: feasible at their ends and middle, tending to the point's pair."""
    from approxpath.testing import ToyProjection
    from approxpath.testing.checks import check_restoration
    from approxpath.testing.toy import ToyPrimal

    example = examples_of(ToyProjection)[0]
    check_restoration(example)  # the toy itself passes
    restore = ToyProjection.restore

    def on_pieces(self, primal, dual, lo, hi=None):
        p, d = restore(self, primal, dual, lo, hi)
        return (p if hi is None or hi == lo else ToyPrimal(x=p.x + shift)), d

    monkeypatch.setattr(ToyProjection, "restore", on_pieces)
    with pytest.raises(AssertionError, match=match):
        check_restoration(example)


def test_a_dual_declaration_without_its_constraint_fails_the_battery():
    """A dual declaration whose constraint is too loose: its optimum (a tight solve) is above the primal's,
    which no check of the primal declaration alone sees."""
    import cvxpy as cp

    from approxpath.testing.checks import check_declarations_agree_with_numpy

    from plugin_problems import NonNegativeLasso

    class Loose(NonNegativeLasso):  # (X'a <= 10 lam: a constraint dropped in part)
        @staticmethod
        def declare(X, y, lam):
            primal, dual = NonNegativeLasso.declare(X, y, lam)
            return primal, cp.Problem(dual.objective, [dual.constraints[0].args[0] <= 10 * lam])

    check_declarations_agree_with_numpy(examples_of(NonNegativeLasso)[0])  # the sound declarations pass
    with pytest.raises(AssertionError, match="dual declaration's optimum .* not a primal and its dual"):
        check_declarations_agree_with_numpy(examples_of(Loose)[0])


def test_a_restored_pair_of_the_wrong_layout_is_named(monkeypatch):
    """A plug-in's restore() returning x as a column: gap() cannot read it; the exact solve says what its
    own errors() says of the pair, not a bare TypeError from inside gap()."""
    from approxpath.testing import ToyProjection
    from approxpath.testing.toy import ToyDual, ToyPrimal

    def restore(self, primal, dual, lo, hi=None):
        return ToyPrimal(x=np.maximum(primal.x, 0.0)[:, None]), ToyDual(mu=np.maximum(dual.mu, 0.0))

    problem = examples_of(ToyProjection)[0].problem
    monkeypatch.setattr(ToyProjection, "restore", restore)
    with pytest.raises(RuntimeError, match="restore\\(\\) returned a pair its bound refuses \\(x and mu must be"):
        problem.solve(1.0)


def test_zeros_scaled_are_no_alteration():
    from approxpath.testing.checks import _alterations

    got = [what for what, _ in _alterations({"z": np.zeros(3), "v": np.ones(2)}, np.random.default_rng(0))]
    assert not any(w.startswith("z scaled") for w in got) and any(w.startswith("v scaled") for w in got)
    assert any(w.startswith("z shifted up") for w in got)
