"""A bound whose terms do not shrink with a piece's width (rounding allowances) above eps.

Where the point gaps meet eps but no piece, however narrow, can be certified, a path is refused
at once with EpsilonTooSmallError (it used to add exact solves and halve pieces towards
2**-30 of the interval until a budget ran out), and a cover that cannot add solves stops
halving once the bound no longer shrinks: sampled pieces, not millions of them."""

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification
from approxpath.errors import EpsilonTooSmallError
from approxpath.testing import ToyBound, ToyProjection
from approxpath.testing.toy import ToyDual, ToyPrimal

import plugin_problems

_FLOOR = 1e-3  # the width-independent term every piece's bound carries (point gaps carry none)
_RANGE = (0.5, 2.0)


class _FlooredBound(ToyBound):
    name = "toy_floored"

    def gap(self, primal, dual, lo, hi=None):  # still a bound: the toy's plus a constant
        g = super().gap(primal, dual, lo, hi)
        return g + (_FLOOR if hi is not None and hi != lo else 0.0)


class _Floored(ToyProjection):
    name = "toy_floored"
    Bound = _FlooredBound


def _problem():
    rng = np.random.default_rng(3)
    return _Floored(rng.standard_normal((12, 1)), rng.standard_normal(12))


@pytest.mark.parametrize("strategy", ["interpolate", "two-sided", "grid"])
def test_eps_below_the_bounds_floor_is_refused_at_once(strategy):
    # before: BudgetExceededError once the pieces' or the solves' budget was spent
    with pytest.raises(EpsilonTooSmallError, match="however narrow") as info:
        approxpath.approximate_path(_problem(), 0.5 * _FLOOR, _RANGE, strategy=strategy, max_solves=300,
                                    max_pieces=3000)
    exc = info.value
    assert exc.gap > exc.allowed > 0 and _RANGE[0] <= exc.t <= _RANGE[1]
    assert "use eps >= " in str(exc)
    need = float(str(exc).rsplit("use eps >= ", 1)[1])
    assert approxpath.approximate_path(_problem(), need, _RANGE).certified  # the eps it names is enough


@pytest.mark.parametrize("strategy", ["interpolate", "two-sided", "grid", "paper"])
def test_eps_above_the_floor_is_certified_and_holds(strategy):
    problem = _problem()
    path = approxpath.approximate_path(problem, 4 * _FLOOR, _RANGE, strategy=strategy)
    assert path.certified
    for t in np.geomspace(*_RANGE, 23):  # against the closed-form optimum
        x = path.primal(t).x
        assert x.min() >= 0
        value = 0.5 * float(np.sum((x - t * problem.c) ** 2))
        assert value - problem.optimum(t) <= 4 * _FLOOR * (1 + 1e-9)


def test_a_cover_that_cannot_add_solves_stops_halving_once_the_bound_stalls():
    # the paper's strategy covers between its solves without adding any: below eps's floor
    # its pieces are sampled (checked at their points), not halved to 2**-30 of the interval
    problem = _problem()
    path = approxpath.approximate_path(problem, 0.5 * _FLOOR, _RANGE, strategy="paper", max_pieces=20_000)
    kinds = {p.kind for p in path.pieces}
    assert kinds == {"sampled"} and not path.certified  # before: BudgetExceededError (max_pieces)
    for piece in path.pieces:  # a sampled piece's pair meets eps at its ends and middle
        for t in (piece.lo, np.sqrt(piece.lo * piece.hi), piece.hi):
            assert problem.gap(piece.primal, piece.dual, t) <= 0.5 * _FLOOR


def test_a_selection_over_c_goes_on_where_one_path_cannot_tighten():
    """The cross-validated error over C at a fixed bandwidth: cells whose enclosure stayed wide
    asked for ever smaller eps, below the SVM bound's rounding floor, and the selection never
    returned; then it stopped at the first refusal with delta = 0.3.  Now a refused refinement
    leaves its cell as it is and the others go on: delta meets tol, and every cell and the
    choice hold the error of independent tight solves (the bias the middle of the optimal ones)."""
    from sklearn.model_selection import StratifiedKFold

    from selection_helpers import cells_hold_cv_error

    from approxpath.selection import branch

    X, y = make_classification(n=60)
    problem = approxpath.get_problem("kernel_svm")(X, y, parameter="c", bandwidth=1.0)
    deltas, best = [], branch.Search.best
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore")  # (the choice may lie at the interval's lower end)
        mp.setattr(branch.Search, "best", lambda self: deltas.append(best(self)[2]) or best(self))
        s = approxpath.select(problem, cv=3, tol=0.05, max_pieces=20_000)
    assert len(deltas) > 2 and all(b <= a for a, b in zip(deltas, deltas[1:]))  # delta never grows
    k = round(s.delta * 60)  # a count of the 60 held-out points over 60: the double just at or above k / 60
    assert float(Fraction(k, 60)) <= s.delta <= np.nextafter(float(Fraction(k, 60)), np.inf)
    assert s.parameter == "c" and s.kind == "certified" and s.reached and s.delta <= 0.05
    assert s.exact_solves < 500
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool, warnings.catch_warnings():  # refusals come back from an executor too
        warnings.simplefilter("ignore")
        there = approxpath.select(problem, cv=3, tol=0.05, max_pieces=20_000, executor=pool)
    assert (there.t, there.value, there.delta, there.exact_solves) == (s.t, s.value, s.delta, s.exact_solves)
    folds = list(StratifiedKFold(3).split(X, y))  # what check_cv(3) gives for labels
    assert cells_hold_cv_error(s, X, y, folds, [s.t, *np.geomspace(1e-3, 1.0, 12)], 1.0) >= 10


def test_a_refinement_past_its_own_cap_is_refused_alone():
    """Pairs linear in C between exact solves are exact between the path's kinks, so a piece's
    gap can be near the rounding of its solves; a refinement asking ¼ of it ran past all the
    solves left (1,856 on ionosphere) and ended the search with δ = 0.051.  A refinement may now
    take at most 8 times the exact solves its range had (64 at least); past that it is refused
    alone, as one below the solves' floor is, and the search reaches tol.  Every cell holds the
    error of independent tight solves."""
    from sklearn.model_selection import StratifiedKFold

    from selection_helpers import cells_hold_cv_error

    from approxpath.numerics import sum_chain
    from approxpath.problems.kernel_svm import bound as svm_bound, c_path
    from approxpath.selection import refine

    X, y = make_classification(n=60, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, parameter="c", bandwidth=3.0)
    rounds, run_paths = [], refine.run_paths

    def spy(*args):
        rounds.append(args[6] if len(args) > 6 else [])  # (a round of refinements: its refused paths)
        return run_paths(*args)

    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore")  # (the choice may lie at an end of the interval)
        mp.setattr(refine, "run_paths", spy)
        # the SVM's rounding allowance as it was when this was found (8n operations; the solves'
        # floor is where the gaps of these pieces end up)
        mp.setattr(svm_bound, "_CHAIN", 8 * problem.n - problem.bound.kernels.product_chain() - sum_chain(problem.n))
        # (and without the weights' evaluation inside a C piece, charged since: the floor rose above
        # where these refinements run past their cap, and they are refused by the floor instead)
        mp.setattr(c_path, "coefficient_rounding", lambda W: np.zeros(np.shape(W)[:-1]))
        # (eps: the absolute first eps the default was before it became relative over C, whose
        # paths reach such gaps here)
        s = approxpath.select(problem, cv=3, interval=(1e-3, 100.0), eps=0.06, max_solves=2000)
    capped = [exc.cap for refused in rounds for _, exc in refused if getattr(exc, "cap", None) is not None]
    assert capped and min(capped) >= 64 and s.reached and s.kind == "certified" and s.exact_solves < 2000
    folds = list(StratifiedKFold(3).split(X, y))
    assert cells_hold_cv_error(s, X, y, folds, [s.t, *np.geomspace(1e-3, 100.0, 9)], 3.0) >= 7


def test_a_floor_that_no_eps_meets_gives_no_eps_to_use():
    """Identical points (a constant kernel) whose exact solve lay in K's null space (c = 0, as
    optimal as y / lam): no piece next to it met a relative eps (its bound against a target of
    0), and the error advised "use eps >= inf".  Which optimum a solver returns there depends on
    the platform's rounding, so the run's error is made at the exact solve directly."""
    from approxpath.driver.run import Budget, Run

    X, y = make_classification(n=20, seed=0)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    for relative in (False, True):
        run = Run(problem, 0.025, relative, 0.5, 2.0, None, Budget(10, 10, None))
        run.exact(0.5)
        err = str(run.below_floor(0.5, math.inf))
        assert "cannot be met: no piece next to the exact solve at t = 0.5 is certified however narrow" in err
        assert not re.search(r"\binf\b", err) and "use eps" not in err  # (no "eps >= inf")
        assert "use eps >= " in str(run.below_floor(0.5, 3.0))  # (a finite ratio: the eps that would do)


def _toy_data():
    return np.random.default_rng(0).standard_normal((12, 1)), np.random.default_rng(1).standard_normal(12)


class _AwayOnPieces(ToyProjection):
    """A plug-in's restoration that is right at points and moves the primal by 1 on every piece
    (feasible, but far from the point's pair however narrow the piece)."""

    def restore(self, primal, dual, lo, hi=None):
        p, d = super().restore(primal, dual, lo, hi)
        return (p if hi is None or hi == lo else type(p)(x=p.x + 1.0)), d


class _SampledAwayOnPieces(_AwayOnPieces):
    Bound = plugin_problems.SampledToyBound


@pytest.mark.parametrize("cls", [_AwayOnPieces, _SampledAwayOnPieces], ids=["certified", "sampled"])
def test_a_restoration_that_is_wrong_on_pieces_is_named_not_split_to_dust(cls):
    """A sampled plug-in whose restore() was wrong on pieces only was split for hours: every piece
    halved down to 2**-30 of the interval, and exact solves added down to 2**-20 (the pieces'
    sampled gaps gave no ratio, so no halving was seen to stall).  Now the sampled gaps' ratio
    to the target stops it at the first exact solve, as a bound's floor does, and the error names
    the restoration (reference: the toy's own restoration certifies the same path)."""
    X, y = _toy_data()
    assert approxpath.approximate_path(ToyProjection(X, y), eps=0.05, interval=(0.1, 3.0)).certified
    with pytest.raises(EpsilonTooSmallError, match="however narrow") as info:
        approxpath.approximate_path(cls(X, y), eps=0.05, interval=(0.1, 3.0), max_solves=60)
    said = str(info.value)
    assert "restore() gives on pieces may not tend to the exact solve's own as the pieces narrow" in said
    assert ("rounding allowances" in said) == (cls is _AwayOnPieces) and info.value.t == 0.1


class _InfiniteOutside(ToyBound):
    def gap(self, primal, dual, lo, hi=None):  # (as a CVXPY plug-in's: inf where a constraint is violated)
        return np.inf if self.errors(primal, dual, lo, lo if hi is None else hi) else super().gap(primal, dual, lo, hi)


class _Outside(ToyProjection):
    """A plug-in whose own solve() gives the optimal pair and whose restore() puts the dual
    outside its set (mu >= 0) everywhere."""

    Bound = _InfiniteOutside

    def solve(self, t, **settings):
        return ToyPrimal(x=np.maximum(t * self.c, 0.0)), ToyDual(mu=np.maximum(-t * self.c, 0.0))

    def restore(self, primal, dual, lo, hi=None):
        p, d = super().restore(primal, dual, lo, hi)
        return p, ToyDual(mu=d.mu - 1.0)


def test_an_infinite_gap_at_an_exact_solve_is_named_not_an_eps_of_inf():
    """An exact solve whose gap bound is infinite was "too small: ... certifies a gap of inf; use
    eps >= inf" (a sampled plug-in whose restore() made the pair infeasible, a Bound that
    overflows); now no eps is advised, and the cause is named (a restoration that the Bound
    refuses is already refused by the solvers)."""
    with pytest.raises(EpsilonTooSmallError) as info:
        approxpath.approximate_path(_Outside(*_toy_data()), eps=0.05, interval=(0.1, 3.0))
    said = str(info.value)
    assert said.startswith("eps = 0.05 cannot be met: the exact solve's pair at t = 0.1 has a gap bound of inf: "
                           "toy_projection's restore() leaves it infeasible there (mu has a negative entry)")
    assert "no eps helps" in said and "eps >=" not in said


def test_relative_eps_at_a_pair_the_solvers_left_short_says_so(monkeypatch):
    """The SVM at C = 1e10 (libSVM at its iteration limit) read "not proven positive ... e.g.
    targets y all 0": a pair whose dual objective is 0 because it is far from optimal, not
    because the optimum is 0, is named as such (the optimum here is positive)."""
    from approxpath.errors import InputError

    rng = np.random.default_rng(0)
    toy = ToyProjection(rng.standard_normal((8, 1)), rng.standard_normal(8))
    zeros = (ToyPrimal(x=np.zeros(8)), ToyDual(mu=np.zeros(8)))  # dual objective 0, gap 0.5 |t c|^2
    monkeypatch.setattr(toy, "solve", lambda t, **kw: zeros)
    assert toy.optimum(1.0) > 0
    with pytest.raises(InputError, match=r"not proven positive at t = 1 \(the best pair the solvers found there is "
                       r"not optimal: its gap bound is [\d.]+, and the exact solve's dual objective there, its proven "
                       r"lower bound, is 0\): use an absolute eps"):
        approxpath.approximate_path(toy, eps=0.05, interval=(1.0, 2.0), relative=True)
