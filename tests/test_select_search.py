"""The selection search's refinement policy (approxpath.selection.branch): a chosen point wider
than tol / 2 tightens the chosen cell and only the active cells whose enclosure at their
middle is as wide (the others are halved), and that middle test stops enclosing folds once its
answer is known.  References: the exact optima's 3-fold error from a tight CVXPY solve per
fold at random t, and the full point cover for the middle test."""

import re

import numpy as np
import pytest

import approxpath
from approxpath.cli.checks import as_advice
from approxpath.data import make_classification
from approxpath.numerics import round_up
from approxpath.selection import branch
from approxpath.selection import search as search_module
from approxpath.selection import select
from approxpath.selection.validation import Validation

from selection_helpers import cells_hold_cv_error, svm_cv_error

pytestmark = pytest.mark.usefixtures("one_blas_thread")

INTERVAL = (0.1, 10.0)


@pytest.fixture(scope="module")
def spied():
    """A selection whose search took both branches, with what its middle tests answered next to
    the width of the full point cover at the same t (every fold enclosed)."""
    seen = {"chosen": 0, "stall": [], "asks": []}
    step, wide_at = branch.Search.step, Validation.wide_at

    def spy_step(self, value, only=None):
        before = len(self.widths)
        out = step(self, value, only)
        seen["chosen"] += len(self.widths) - before
        return out

    def spy_wide_at(self, asks):
        answers = wide_at(self, asks)
        for answer, (t, _, _, width) in zip(answers, asks):
            _, lo, hi, _ = self.cover(t, t)
            seen["stall"].append((answer, float(hi[0] - lo[0]), width))
        seen["asks"].append(len(asks))
        return answers

    X, y = make_classification(n=45, d=2, seed=4)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(branch.Search, "step", spy_step)
        mp.setattr(Validation, "wide_at", spy_wide_at)
        s = select(problem, cv=3, eps=0.2, interval=INTERVAL, tol=0.03)
    return X, problem.y, s, seen


def test_stall_test_answers_as_the_full_point_cover(spied):
    *_, seen = spied
    assert len(seen["stall"]) >= 10  # the test ran, with both answers, many cells in one call
    assert max(seen["asks"]) > 1
    assert {answer for answer, _, _ in seen["stall"]} == {True, False}
    for answer, full, width in seen["stall"]:
        if abs(full - width) > 1e-9:  # (the full cover's width is padded by its rounding)
            assert answer == (full >= width), (answer, full, width)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_chosen_cell_tightening_keeps_the_guarantee(spied):
    """Every random t's exact 3-fold error lies in its cell's enclosure and is not below the
    chosen value by more than delta; the chosen t's inside the chosen enclosure."""
    from sklearn.model_selection import StratifiedKFold

    X, y, s, seen = spied
    assert seen["chosen"] >= 1  # the chosen point was wider than tol / 2 at least once
    assert s.kind == "certified" and s.reached and s.delta <= 0.03
    folds = list(StratifiedKFold(3).split(X, y))  # what check_cv(3) gives for labels
    at, _ = svm_cv_error(X, y, folds, s.t, 1.0)
    assert s.value[0] <= at + 1e-15 and at - 1e-15 <= s.value[1]
    ts = np.exp(np.random.default_rng(7).uniform(*np.log(INTERVAL), 25))
    assert cells_hold_cv_error(s, X, y, folds, ts, 1.0) >= 20


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_covers_of_many_cells_at_once_equal_one_cell_at_a_time():
    """A round's cells covered together (a fold's cells inside one piece enclosed in one call)
    give the covers of the same cells covered one after the other, round after round (what is
    known from earlier rounds included); and the batched calls happen."""
    from approxpath.selection.cover import Tracks
    from approxpath.selection.folds import fold_problems

    X, y = make_classification(n=60, d=2, seed=6)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    problems, X_vals, y_vals, _ = fold_problems(problem, 3, None, None, None, "error")
    paths = [approxpath.approximate_path(p, eps=0.05, interval=INTERVAL) for p in problems]
    together, alone = (Validation(Tracks(problems, paths), X_vals, y_vals, "error") for _ in range(2))
    bound_type = type(problems[0].bound)
    calls = []
    many = bound_type.prediction_enclosures

    def spy(self, *args, **kwargs):
        calls.append(len(args[3]))
        return many(self, *args, **kwargs)

    edges = np.geomspace(*INTERVAL, 5)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bound_type, "prediction_enclosures", spy)
        for _ in range(4):  # each round covers the halves of the last round's cells
            cells = list(zip(edges[:-1], edges[1:]))
            got = together.covers(cells)
            for (a, b), g in zip(cells, got):
                ref = alone.cover(a, b)
                assert np.array_equal(g[0], ref[0]) and np.array_equal(g[3], ref[3])
                assert np.allclose(g[1], ref[1], rtol=1e-12, atol=1e-12)
                assert np.allclose(g[2], ref[2], rtol=1e-12, atol=1e-12)
            edges = np.sort(np.concatenate([edges, np.sqrt(edges[:-1] * edges[1:])]))
    assert calls and max(calls) >= 2




class _Piece:
    def __init__(self, lo, hi, gap_bound):
        self.lo, self.hi, self.gap_bound, self.interval = lo, hi, gap_bound, (lo, hi)


class _Stalling:
    """A criterion tightened by paths whose enclosure of a cell is its exact range, |log t| / 10
    + 0.3, widened by the gap below and by at least ``jump`` above (a held-out prediction at 0
    on every cell: no gap decides it)."""

    sense = "min"

    def __init__(self, jump):
        self.jump, self.tracks, self.gap = jump, self, 0.1

    def __len__(self):
        return 1

    def over(self, k, a, b):
        return [(_Piece(a, b, self.gap), a, b)]

    def replace(self, k, path):
        self.gap = min(self.gap, path.gap_bound)

    def cover(self, a, b):
        cuts = np.array([a, b]) if a == b else np.array([a, np.sqrt(a * b), b])
        lo, hi = [], []
        for u, v in zip(cuts[:-1], cuts[1:]):
            f = [abs(np.log(x)) / 10 + 0.3 for x in (u, v)]
            lo.append((0.3 if u <= 1.0 <= v else min(f)) - self.gap)
            hi.append(max(f) + max(self.gap, self.jump))
        return cuts, np.array(lo), np.array(hi), np.ones(len(lo), dtype=bool)


def test_a_choice_stalled_at_every_point_gives_up_with_its_cause():
    """Where the chosen point's enclosure stops narrowing as the gaps shrink (a held-out
    prediction at 0 there), the search halves its cell and chooses another point; where that
    happens at every point it gives up after four, saying why (the gaps keep shrinking)."""
    crit = _Stalling(0.02)
    search = branch.Search(crit, 0.25, 4.0, 0.01, lambda jobs: [(k, _Piece(a, b, e)) for k, a, b, e in jobs])
    t, value, delta = search.best()
    steps = 0
    while delta > 0.01 and steps < 60 and search.step(value):
        t, value, delta = search.best()
        steps += 1
    assert delta > 0.01 and steps < 60 and search.moves == branch._MOVES
    assert "stopped narrowing" in search.reason and "at 4 points in turn" in search.reason
    assert crit.gap < 1e-6  # the gaps shrank all along


@pytest.mark.parametrize("gap", [None, 0.01])
def test_a_stall_that_ended_is_no_cause(gap):
    """The chosen point's stall was kept once the search had moved on and the enclosure narrowed
    again: the first refusal of a refinement anywhere then stopped the search (a stall and a
    refusal together) and the warning gave the old stall as its cause.  The next point's
    enclosure narrows below tol / 2 at once, or (its gaps wider: ``gap``) as its gaps do."""
    crit = _Stalling(0.02)
    search = branch.Search(crit, 0.25, 4.0, 1e-4, lambda jobs: [(k, _Piece(a, b, e)) for k, a, b, e in jobs])
    t, value, delta = search.best()
    while search.moves == 0 and search.step(value):
        t, value, delta = search.best()
    assert search.moves == 1 and "stopped narrowing" in search.reason
    crit.jump, crit.gap = 0.0, crit.gap if gap is None else gap  # no held-out prediction at 0 any more
    steps, judged = 0, []
    while delta > 1e-4 and steps < 60 and search.step(value):
        t, value, delta = search.best()
        judged.append((search.reason is None, len(search.widths)))
        steps += 1
    assert delta <= 1e-4 and search.moves == 1 and search.reason is None
    cleared = next(w for none, w in judged if none)
    # cleared once its enclosure was narrow (after the one tightening it had), or as it narrowed in 3 tightenings
    assert cleared == (1 if gap is None else 3)


class _Unsplittable(_Stalling):
    """A criterion whose cover of a cell is that cell, as wide as ever, and narrow at its points
    (as the SVM's cover over C was: one cell per piece): halving and tightening change nothing."""

    def cover(self, a, b):
        if a == b:
            return np.array([a, b]), np.array([0.5]), np.array([0.5]), np.ones(1, dtype=bool)
        return np.array([a, b]), np.array([0.0]), np.array([1.0]), np.ones(1, dtype=bool)


@pytest.mark.parametrize("tracks", [True, False])
def test_a_round_that_changes_nothing_ends_the_search(tracks):
    """Cells that a cover can neither split nor narrow were replaced by themselves round after
    round, each round counted as progress: a selection over C on 40 points ran its 400 rounds
    (601 s).  Such a cover now marks its cells stalled once, and a round that changes nothing
    ends the search."""
    crit = _Unsplittable(0.0)
    if not tracks:
        crit.tracks = None
    search = branch.Search(crit, 0.25, 4.0, 0.01, lambda jobs: [])
    t, value, delta = search.best()
    steps = 0
    while search.step(value) and steps < 60:
        t, value, delta = search.best()
        steps += 1
    assert steps <= 2 and delta > 0.01


class _Undecided(_Unsplittable):
    """Halved covers of |log t| / 10 + 0.3 whose width shrinks as ``width ** power`` (0.3: by
    19 % per halving; 1: Lipschitz), and on cells meeting a stretch ``(a, b, low)`` of
    ``stretches`` [low, 1] however narrow (held-out predictions at 0 there: no cell decides them)."""

    def __init__(self, power, stretches=((2.0, 3.0, 0.0),)):
        super().__init__(0.0)
        self.power, self.stretches, self.tracks = power, stretches, None

    def cover(self, a, b):
        cuts = np.array([a, b]) if a == b else np.array([a, np.sqrt(a * b), b])
        f = np.abs(np.log(np.sqrt(cuts[:-1] * cuts[1:]))) / 10 + 0.3
        spread = 0.2 * np.log(cuts[1:] / cuts[:-1]) ** self.power
        lo, hi = f - spread, f + spread
        for start, end, low in self.stretches:
            undecided = (cuts[1:] >= start) & (cuts[:-1] <= end)
            lo, hi = np.where(undecided, low, lo), np.where(undecided, 1.0, hi)
        return cuts, lo, hi, np.ones(f.size, dtype=bool)


def _searched(crit, steps):
    search = branch.Search(crit, 0.25, 4.0, 0.01, lambda jobs: [])
    t, value, delta = search.best()
    done = 0
    while done < steps and search.lo.size < 2 ** 16 and search.step(value):  # (cells doubling: a bound)
        t, value, delta = search.best()
        done += 1
    return search, value, delta, done


def test_cells_that_never_narrow_are_left_and_the_search_stops():
    """Cells halved again and again without narrowing doubled every round: a 40-point SVM
    selection over bandwidths where every held-out prediction is within 1e-4 of 0 took 555 CPU s
    and 195,907 cells for the δ it had after 10 s.  A cell refined _DEPTH times in a row without
    narrowing is now left as it is; once such cells hold the smallest lower bound, the search
    stops (δ stays what they allow: nothing was dropped)."""
    search, value, delta, done = _searched(_Undecided(1.0), 3 * branch._DEPTH)
    assert done <= branch._DEPTH + 2 and search.lo.size < 2 ** (branch._DEPTH + 3)
    cells, a, b, times, lo_run, hi_run, stretches = search.parked
    assert times == branch._DEPTH and cells > 0 and 1.5 < a <= 3.0 and 2.0 <= b < 4.0 and stretches == 1
    assert lo_run <= a and b <= hi_run and 1.5 < lo_run and hi_run < 4.0  # (the undecided run around them)
    # the run is every cell that may still beat the choice around them, and no more: its neighbours are settled
    open_ = search.lo < value[1] - 0.01
    i, j = np.searchsorted(search.edges, [lo_run, hi_run])
    assert search.edges[i] == lo_run and search.edges[j] == hi_run and np.all(open_[i:j])
    assert (i == 0 or not open_[i - 1]) and (j == open_.size or not open_[j])
    said = str(search_module._shortfall(search, [], 10, 2000, delta, 0.01, 2.0))
    assert f"on {cells} cells between t = {a:.6g} and {b:.6g} did not narrow" in said
    assert cells == np.count_nonzero(search.depth >= branch._DEPTH)
    assert search.lo.min() == 0.0 and delta == pytest.approx(value[1])  # the undecided cells still count
    outside = (search.edges[1:] < 2.0) | (search.edges[:-1] > 3.0)
    assert np.all(search.depth[outside] < branch._DEPTH)


def test_parked_cells_in_two_stretches_are_said_so():
    """Parked cells in two stretches were said as "N cells between" the first and the last (t =
    0.3 to 3 here, though the cells between them narrow as they are refined): the message says
    how many stretches they form."""
    crit = _Undecided(1.0, stretches=((0.3, 0.4, 0.05), (2.0, 3.0, 0.0)))
    search, value, delta, done = _searched(crit, 3 * branch._DEPTH)
    cells, a, b, times, lo_run, hi_run, stretches = search.parked
    deep = search.depth >= branch._DEPTH
    middles = np.sqrt(search.edges[:-1] * search.edges[1:])
    assert cells == np.count_nonzero(deep) and stretches == 2 and np.all(search.depth[(middles > 0.5) & (middles < 1.5)]
                                                                         < branch._DEPTH)
    assert 0.25 < a < 0.4 and 2.0 < b < 4.0 and lo_run <= a and b <= hi_run
    said = str(search_module._shortfall(search, [], 10, 2000, delta, 0.01, 2.0))
    assert f"on {cells} cells in 2 stretches between t = {a:.6g} and {b:.6g} did not narrow" in said


def test_a_cover_of_several_cells_counts_each_cell_from_its_own():
    """One cover replacing several cells counts each new cell's refinements from the old cell
    it lies in (the new edges were read before: the halves of a cell refined 5 times took the
    count of its neighbour's); a cell covered again as it was is not counted as refined."""
    search = branch.Search(_Unsplittable(0.0), 0.25, 4.0, 0.01, lambda jobs: [])
    search.edges, search.lo, search.hi = np.array([0.25, 1.0, 4.0]), np.array([0.2, 0.3]), np.array([0.3, 0.4])
    search.cert, search.parent = np.ones(2, dtype=bool), np.full(2, np.inf)
    search.depth, search.base = np.array([5, 0]), search.hi - search.lo
    halves = np.array([0.25, 0.5, 1.0, 2.0, 4.0])
    assert search._replace(0.25, 4.0, (halves, np.array([0.2, 0.2, 0.3, 0.3]), np.array([0.3, 0.3, 0.4, 0.4]),
                                       np.ones(4, dtype=bool)))
    assert search.depth.tolist() == [6, 6, 1, 1]
    again = (np.array([0.25, 0.5, 1.0, 1.5, 2.0, 4.0]), np.array([0.2, 0.2, 0.3, 0.3, 0.3]),
             np.array([0.3, 0.3, 0.32, 0.32, 0.4]), np.ones(5, dtype=bool))  # cell [1, 2] halved and narrowed
    assert search._replace(0.25, 4.0, again)
    assert search.depth.tolist() == [6, 6, 0, 0, 1]  # (the cells covered as they were keep their count)
    for k in range(3):  # the last cell covered again on its own edges, 1 % narrower each time: not narrowing
        w = 0.1 * 0.99 ** (k + 1)
        assert search._replace(2.0, 4.0, (np.array([2.0, 4.0]), np.array([0.35 - w / 2]), np.array([0.35 + w / 2]),
                                          np.ones(1, dtype=bool)))
    assert search.depth.tolist() == [6, 6, 0, 0, 4]


def test_cells_that_narrow_slowly_are_refined_to_tol():
    """A cover narrowing by 19 % per halving (below 0.7 of its width every second one) needs
    about 18 halvings at the minimum: it is refined as long as it narrows, no cell is left, and
    δ reaches tol."""
    search, value, delta, done = _searched(_Undecided(0.3, stretches=()), 200)
    assert delta <= 0.01 and search.parked is None and search.depth.max() < branch._DEPTH
    assert np.log2(np.diff(np.log(search.edges)).max() / np.diff(np.log(search.edges)).min()) > branch._DEPTH


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.filterwarnings("ignore::approxpath.selection.RangeWarning")  # (a choice at the interval's end)
def test_a_selection_where_predictions_are_near_zero_ends_saying_where():
    """The SVM at large bandwidths predicts about its bias (within 1e-4 of 0 on 40 scaled points):
    the search leaves those cells, says where they are, and its cells still hold the exact 3-fold
    error at random t (tight CVXPY solves per fold; the region was split for minutes before)."""
    from sklearn.model_selection import StratifiedKFold

    from approxpath.data import preprocess
    from approxpath.selection import ShortfallWarning

    X, y = make_classification(n=40, d=6, seed=0)
    X = preprocess(X, "global-minmax")
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.1)
    interval = (2**7.5, 2**8.5)
    with pytest.warns(ShortfallWarning, match=f"refined {branch._DEPTH} times in a row") as got:
        s = select(problem, cv=3, interval=interval, tol=0.01, strict=False)
    said = [w.message for w in got if isinstance(w.message, ShortfallWarning)][0]
    message = str(said)
    assert "; an interval without that stretch may avoid it; " in message
    assert message.endswith(f"; more exact solves do not narrow it, so raise tol to {round_up(s.delta, 2):g} or more "
                            "(the delta reached)")
    # said in an estimator's and the command line's names for the range searched
    assert "; a t_range without that stretch may" in str(said.renamed(interval="a t_range"))
    assert "; a --range without that stretch may" in as_advice(said)
    a, b = (float(v) for v in re.search(r"cells in \d+ stretches between t = (\S+) and (\S+) did not",
                                        message).groups())
    assert interval[0] <= a < b <= interval[1] and s.delta > 0.01 and s.edges.size < 20_000
    lo_run, hi_run = (float(v) for v in re.search(r"reach from t = (\S+) to (\S+);", message).groups())
    assert interval[0] <= lo_run <= a and b <= hi_run <= interval[1]
    # the cells from lo_run to the first parked one, and from the last to hi_run, may still beat the
    # choice (those inside by more than the message's 6 digits)
    undecided = s.lo < s.value[1] - 0.01
    for u, v in ((lo_run, a), (b, hi_run)):
        inside = (s.edges[:-1] >= u * (1 + 1e-5)) & (s.edges[1:] <= v * (1 - 1e-5))
        assert np.all(undecided[inside])
    folds = list(StratifiedKFold(3).split(X, problem.y))
    ts = np.exp(np.random.default_rng(3).uniform(*np.log(interval), 24))
    assert cells_hold_cv_error(s, X, problem.y, folds, ts, 0.1) >= 6


class _Coarse(_Unsplittable):
    """Cells [a, b] as one cell of loose bounds, except a point's (0.5): a coarse cover, as the
    pieces of tightened paths give, which knows less of a cell than its finer cells did."""

    def cover(self, a, b):
        if a == b:
            return np.array([a, b]), np.array([0.5]), np.array([0.5]), np.ones(1, dtype=bool)
        return np.array([a, b]), np.array([0.1]), np.array([0.9]), np.ones(1, dtype=bool)


def test_a_coarser_cover_keeps_what_finer_cells_proved():
    """A range re-covered from tightened paths (coarser cells than the search had refined) lost
    the finer cells' bounds, and δ could grow between rounds (the helper of the search now
    intersects both on the cells of both edge sets); an uncertified cover keeps the certified
    cells' bounds and is not claimed certified where they were not."""
    search = branch.Search(_Coarse(0.0), 0.25, 4.0, 0.01, lambda jobs: [])
    search.edges = np.array([0.25, 0.5, 1.0, 2.0, 4.0])
    search.lo, search.hi = np.array([0.2, 0.3, 0.4, 0.5]), np.array([0.25, 0.35, 0.45, 0.55])
    search.cert, search.parent = np.array([True, True, False, True]), np.full(4, np.inf)
    search.depth, search.base = np.zeros(4, dtype=int), search.hi - search.lo
    assert search._replace(0.5, 4.0, (np.array([0.5, 1.5, 4.0]), np.array([0.0, 0.42]), np.array([1.0, 0.5]),
                                      np.array([True, True])))
    assert np.array_equal(search.edges, [0.25, 0.5, 1.0, 1.5, 2.0, 4.0])
    assert np.array_equal(search.lo, [0.2, 0.3, 0.0, 0.42, 0.5])  # cell 2 was not certified: the new one holds
    assert np.array_equal(search.hi, [0.25, 0.35, 1.0, 0.5, 0.5])
    assert search.cert.all()
    before = (search.edges.copy(), search.lo.copy(), search.hi.copy())
    loose = (np.array([0.5, 4.0]), np.array([0.0]), np.array([1.0]), np.array([False]))
    search._replace(0.5, 4.0, loose)  # (marks the cells stalled, once)
    assert not search._replace(0.5, 4.0, loose)
    assert all(np.array_equal(x, y) for x, y in zip(before, (search.edges, search.lo, search.hi)))


def test_a_delta_of_the_error_is_a_count_over_the_points():
    """The pooled 0-1 error of N held-out points takes the values k / N: δ = 0.0100000000000016
    with N = 100 (the enclosures' rounding) kept a search with tol = 0.01 going for minutes; it is
    the largest k / N not above δ, as a double not below k / N."""
    from fractions import Fraction

    from approxpath.selection.losses import error_levels

    assert error_levels(0.0100000000000016, 100) == 0.01
    assert error_levels(1.4e-15, 60) == 0.0 and error_levels(0.02, None) == 0.02
    rng = np.random.default_rng(0)
    for _ in range(300):
        levels = int(rng.integers(1, 5000))
        delta = float(rng.uniform(0, 1))
        got = error_levels(delta, levels)
        k = int(Fraction(delta) * levels)  # floor, exactly
        assert got <= delta and Fraction(got) >= Fraction(k, levels) and got == error_levels(got, levels)
        assert float(Fraction(k, levels)) <= got <= np.nextafter(float(Fraction(k, levels)), np.inf)


def test_middle_test_with_a_fold_not_yet_enclosed_on_the_cell():
    """A fold with nothing known on a cell has an infinite cap: the caps left after it were
    ``inf - inf`` (numpy's "invalid value encountered in scalar subtract" on a user's terminal,
    and a nan that disabled the early answer).  Now the caps of the folds not yet enclosed are
    summed: no warning, and the answers are those of every fold's width at the point."""
    from approxpath.selection.validation import _Known

    crit = Validation.__new__(Validation)
    crit.name, crit.y_val, crit.total = "mae", [np.zeros(2)] * 3, 6.0
    crit.known = [_Known(2) for _ in range(3)]
    for k in (0, 1):  # folds 0 and 1 known on [1, 2]: each point's prediction within 0.5 of 0
        crit.known[k].record(np.array([1.0, 2.0]), np.full((2, 1), -0.5), np.full((2, 1), 0.5), np.array([1.0, 2.0]))
    at_point = {0: 0.6, 1: 0.3, 2: 0.9}  # each fold's loss width at the point (summed over its points)
    calls = []

    def folds(k, cells):
        calls.append(k)
        return [(np.array([t, t]), np.array([0.0]), np.array([at_point[k]]), np.array([True])) for t, _ in cells]

    crit._folds = folds
    full = sum(at_point.values()) / crit.total  # 0.3
    asks = [(1.5, 1.0, 2.0, width) for width in (0.1, 0.25, 0.31, 5.0)]
    with np.errstate(invalid="raise"):  # (inf - inf raises FloatingPointError here)
        answers = crit.wide_at(asks)
    assert answers == [w <= full for *_, w in asks] == [True, True, False, False]
    assert calls[0] == 2  # the unknown fold (infinite cap) first


def test_a_rounds_budget_is_shared_smallest_caps_first():
    """Each refinement gets at most its cap and an equal share of what the smaller caps left,
    whatever the order of the refinements (so the round spends about the solves left)."""
    from approxpath.selection import refine

    assert refine._shares([64, 64, 1000], 600) == [64, 64, 472]
    assert refine._shares([1000, 64, 64], 600) == [472, 64, 64]
    assert refine._shares([64, 64, 64], 10) == [3, 3, 4]  # (floor shares: the last takes what is left)
    assert refine._shares([64], 1) == [2]  # (a path's two ends at least)


def test_a_refinement_past_its_cap_says_the_cap_and_how_it_is_set():
    from approxpath.errors import BudgetExceededError
    from approxpath.selection import refine

    exc = BudgetExceededError("more than 512 exact solves")
    exc.cap = 512
    said = refine.no_smaller_gap(exc, "bandwidth")
    assert said.startswith("a refinement of one fold's path needed more than 512 exact solves, the most one may take "
                           f"({refine._JOB_GROWTH} times those its range had, {refine._JOB_MIN} at least)")
