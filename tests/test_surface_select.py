"""Selection over two parameters (approxpath.surface.select): the enclosures of the pooled
cross-validation error hold against the exact optimum's error computed here, fold by fold, from a
tight CVXPY solve of the SVM dual at random points of the box (the bias the middle of the optimal
biases' interval, as the enclosure's documented convention); the chosen point's enclosure and δ
are consistent; the figure draws; bad input is refused."""

import re
import warnings

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_classification
from reference_helpers import svm_dual_optimum

pytest.importorskip("sklearn")

pytestmark = pytest.mark.usefixtures("one_blas_thread")

_BOX = dict(bandwidths=(0.5, 4.0), weights=(0.5, 4.0))
# Decision values closer to 0 than this may have either sign at a tight solve's accuracy.
_AMBIGUOUS = 1e-6


def _kernel(A, B, t):
    return np.exp(-t * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1))


def _exact_decisions(X, y, t, C, X_new):
    """The exact SVM optimum's decision values at ``X_new``: the dual solved tightly, the bias the
    middle of the P-th and (P+1)-th smallest kinks y_i - f(x_i) (P positive labels)."""
    K = _kernel(X, X, t)
    w = y * svm_dual_optimum(K, y, C, 1e-12)[1]
    kinks = np.sort(y - K @ w)
    P = int(np.sum(y > 0))
    b = 0.5 * (kinks[P - 1] + kinks[P])
    return _kernel(X_new, X, t) @ w + b


@pytest.fixture(scope="module")
def chosen():
    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    folds = [(np.flatnonzero(np.arange(32) % 4 // 2 != k), np.flatnonzero(np.arange(32) % 4 // 2 == k)) for k in (0, 1)]
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    s = approxpath.select_surface(problem, cv=folds, eps=0.1, relative=True, tol=0.4, strict=False, **_BOX)
    return X, y, folds, s


def _rectangle(s, t, w):
    i = min(np.searchsorted(s.t_edges, t, side="right") - 1, s.t_edges.size - 2)
    j = min(np.searchsorted(s.w_edges, w, side="right") - 1, s.w_edges.size - 2)
    return j, i


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_the_enclosures_hold_against_the_exact_optimum_at_random_points(chosen):
    X, y, folds, s = chosen
    rng = np.random.default_rng(0)
    points = [(s.t, s.w)] + [tuple(np.exp(rng.uniform(np.log(lo), np.log(hi))) for lo, hi in
                                   (_BOX["bandwidths"], _BOX["weights"])) for _ in range(8)]
    widths = []
    for t, w in points:
        sure = maybe = 0
        for tr, va in folds:
            f = _exact_decisions(X[tr], y[tr], t, w, X[va])
            wrong = np.sign(f) != y[va]
            sure += int(np.sum(wrong & (np.abs(f) > _AMBIGUOUS)))
            maybe += int(np.sum(wrong | (np.abs(f) <= _AMBIGUOUS)))
        j, i = _rectangle(s, t, w)
        assert s.lo[j, i] <= maybe / len(y) and sure / len(y) <= s.hi[j, i], (t, w, sure, maybe, s.lo[j, i], s.hi[j, i])
        widths.append(s.hi[j, i] - s.lo[j, i])
    assert min(widths) < 0.25  # enclosures that decide something (not [0, 1] everywhere)


def test_the_choice_and_its_delta_are_consistent(chosen):
    X, y, folds, s = chosen
    assert s.reached == (s.delta <= 0.4)
    assert s.value[1] == pytest.approx(float(s.hi.min())) and s.delta == pytest.approx(s.value[1] - float(s.lo.min()))
    j, i = _rectangle(s, s.t, s.w)
    assert (s.lo[j, i], s.hi[j, i]) == s.value
    assert s.undecided()[j, i] and s.exact_solves > 0 and s.folds == 2
    assert "delta" in s.summary() and s.to_json()["weight"] == "c"


def test_a_delta_of_the_error_is_a_count_over_the_held_out_points(chosen):
    """The pooled 0-1 error of the 32 held-out points takes the values k / 32: δ is the largest
    such value not above U - L (the enclosures' outward rounding kept it a few ulps above, so a
    tol of k / N was never reached)."""
    from fractions import Fraction

    X, y, folds, s = chosen
    k = round(s.delta * len(y))
    assert float(Fraction(k, len(y))) <= s.delta <= np.nextafter(float(Fraction(k, len(y))), np.inf)
    assert s.delta <= s.value[1] - float(s.lo.min()) < s.delta + 1e-12


def test_a_refused_refinement_keeps_its_cells_while_the_others_go_on(monkeypatch):
    """A fold's cells whose tiling at a smaller eps is refused (EpsilonTooSmallError: here faked
    for every cell at C below 1, where the choice lies) stay as they are and are not tried again; the other cells are
    still refined (the first refusal used to end the whole search)."""
    import approxpath.surface.select as select_module
    from approxpath.errors import EpsilonTooSmallError

    calls, real = [], select_module.tile

    def tile(engine, k, box, eps, *args):
        refused = eps < 0.1 and box[1][1] <= 1.0
        calls.append((k, box, refused))
        if refused:
            raise EpsilonTooSmallError("faked")
        return real(engine, k, box, eps, *args)

    monkeypatch.setattr(select_module, "tile", tile)
    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    # tol 1e-3 is below 1/32: the search ends on its budget, or where every cell that may still
    # win is refused (which first depends on the last bits of the enclosures)
    with pytest.warns(UserWarning, match=r"max_solves = 500 was spent|no cell could be made finer .*certify no smaller gap \(faked\)"):
        s = approxpath.select_surface(problem, cv=2, eps=0.1, relative=True, tol=1e-3, strict=False, max_solves=500,
                                      **_BOX)
    first = next(i for i, c in enumerate(calls) if c[2])
    assert any(not c[2] for c in calls[first + 1:])  # refinements after the first refusal
    refused = [c[:2] for c in calls if c[2]]
    assert len(refused) == len(set(refused))  # a refused cell is not tried again
    assert s.refinements >= 1 and s.value[0] <= s.value[1]


def test_a_refusal_names_the_gap_the_solves_certify_not_the_drivers_eps_advice():
    """Both searches say why a refinement is refused in one wording: the driver's "use eps >= ..."
    names the refinement's own eps, not one the user set (the search over both parameters
    quoted it)."""
    from approxpath.errors import EpsilonTooSmallError
    from approxpath.surface.select import no_smaller_gap

    exc = EpsilonTooSmallError("kernel_svm: the exact solve at t = 0.5 certifies 1e-06; use eps >= 1.01e-06")
    exc.t, exc.gap, exc.allowed = 0.5, 1e-6, 2.5e-7
    text = no_smaller_gap(exc, "bandwidth")
    assert "use eps" not in text
    assert "exact solve at t = 0.5 the gap bound is 1e-06, where the refinement needed 2.5e-07 or less" in text


def test_the_rectangles_holding_the_smallest_lower_bound_are_refined():
    """δ = U - L falls only if the rectangles holding L are refined: chosen by their enclosures'
    middles alone, wide ones (L = 24/270 but HI = 81/270 on heart) were never refined, and δ
    stayed at 24/270 through 8,000 exact solves."""
    from approxpath.surface.select import _promising

    rng = np.random.default_rng(0)
    LO = rng.integers(30, 40, (8, 10)) / 100.0
    HI = LO + 0.02
    LO[5, 7], HI[5, 7] = 0.20, 0.90  # the smallest lower bound, the widest enclosure
    stuck = np.zeros(LO.shape, dtype=bool)
    mask = _promising(LO, HI, 0.5, (0, 0), stuck)
    assert mask[5, 7] and mask[0, 0] and mask.sum() < LO.size
    stuck[5, 7] = stuck[0, 0] = True  # every fold's cell there final: not refined again
    mask = _promising(LO, HI, 0.5, (0, 0), stuck)
    assert not mask[5, 7] and not mask[0, 0] and mask.any()


def test_the_figure_draws(chosen):
    pytest.importorskip("matplotlib")
    from approxpath.surface import plot_surface_selection

    fig = plot_surface_selection(chosen[3])
    s, ax = chosen[3], fig.axes[0]
    # drawn at log2 t, log2 w on linear axes labelled as powers of 2 (a mesh on log axes is
    # transformed quad by quad in Python)
    assert ax.get_xlim() == pytest.approx(tuple(np.log2(s.t_edges[[0, -1]])))
    assert ax.xaxis.get_major_formatter()(1.0, 0) == "$2^{1}$"
    dimmed = [c for c in ax.collections if np.ma.isMaskedArray(c.get_array()) and c.get_alpha() is not None]
    assert len(dimmed) == 1 and np.array_equal(np.ma.getmaskarray(dimmed[0].get_array()).reshape(s.lo.shape),
                                               s.undecided())


def test_the_border_of_the_region_not_excluded_follows_the_rectangles():
    """A single rectangle is outlined by its four sides, two side by side by six, a full grid by
    the grid's border; nothing inside a region is drawn."""
    from approxpath.surface.figures import _outline

    x, y = np.array([1.0, 2.0, 4.0, 8.0]), np.array([1.0, 3.0, 9.0])
    one = np.zeros((2, 3), dtype=bool)
    one[1, 1] = True
    assert sorted(map(sorted, _outline(one, x, y).tolist())) == sorted(map(sorted, [
        [[2.0, 3.0], [2.0, 9.0]], [[4.0, 3.0], [4.0, 9.0]], [[2.0, 3.0], [4.0, 3.0]], [[2.0, 9.0], [4.0, 9.0]]]))
    two = np.zeros((2, 3), dtype=bool)
    two[0, :2] = True
    assert len(_outline(two, x, y)) == 6
    assert len(_outline(np.ones((2, 3), dtype=bool), x, y)) == 2 * (2 + 3)
    assert _outline(np.zeros((2, 3), dtype=bool), x, y).shape == (0, 2, 2)


def test_bad_input_is_refused():
    X, y = make_classification(n=20, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(InputError, match="validation loss"):
        approxpath.select_surface(problem, weights=(0.5, 2.0))
    with pytest.raises(InputError, match="weights"):
        approxpath.select_surface(problem, cv=2)
    with pytest.raises(InputError, match="0 < lo < hi"):
        approxpath.select_surface(problem, cv=2, weights=(2.0, 0.5))


def test_the_svc_chooses_c_and_the_bandwidth():
    pytest.importorskip("sklearn")
    from approxpath.sklearn import KernelPathSVC

    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    model = KernelPathSVC(C=None, C_range=(0.5, 2.0), t_range=(0.5, 2.0), cv=2, cv_tol=0.5).fit(X, y)
    assert 0.5 <= model.best_C_ <= 2.0 and 0.5 <= model.best_t_ <= 2.0
    assert model.path_.problem.bound.c == model.best_C_ and model.predict(X).shape == (24,)
    with pytest.raises(ValueError, match="C_range"):
        KernelPathSVC(C=None, cv=2).fit(X, y)


def test_the_svc_chooses_c_and_the_bandwidth_on_a_validation_part():
    """C=None without cv chose on held-out points as C given does (it refused: 'pass cv'): X_val, y_val, else
    validation_fraction of X split off; the choice is select_surface's on that hold-out, the model trained on
    the rest; X_val with cv is refused."""
    pytest.importorskip("sklearn")
    from approxpath.selection.search import default_eps
    from approxpath.sklearn import KernelPathSVC

    X, y = make_classification(n=40, d=2, separation=1.5, seed=3)
    X_val, y_val = make_classification(n=30, d=2, separation=1.5, seed=4)
    box = dict(C_range=(0.5, 1.0), t_range=(0.5, 1.0))
    model = KernelPathSVC(C=None, eps=0.2, cv_tol=0.2, **box).fit(X, y, X_val, y_val)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.5)
    eps = min(0.2 * problem.null_objective(), default_eps(problem))  # (the estimator's first eps)
    direct = approxpath.select_surface(problem, X_val=X_val, y_val=y_val, eps=eps, bandwidths=box["t_range"],
                                       weights=box["C_range"], tol=0.2, strict=False)
    assert (model.best_t_, model.best_C_, model.selection_.value) == (direct.t, direct.w, direct.value)
    assert model.path_.problem.n == 40 and model.path_.problem.bound.c == model.best_C_
    assert model.selection_.folds == 1 and model.selection_.proof is not None  # (a hold-out: its file can be saved)
    split = KernelPathSVC(C=None, eps=0.2, cv_tol=0.2, random_state=0, **box).fit(X, y)
    assert split.path_.problem.n == 30  # (validation_fraction 0.25 of 40 held out)
    with pytest.raises(ValueError, match="do not pass X_val, y_val as well"):
        KernelPathSVC(C=None, cv=2, **box).fit(X, y, X_val, y_val)


@pytest.mark.parametrize("budget", [7, 12])  # spent inside a strip's path (7), or before one starts (12)
def test_a_spent_budget_names_the_users_max_solves(budget):
    """The budget runs out while the folds' first surfaces are built: the error names the
    caller's max_solves (all folds together), not what one path had left of it."""
    from approxpath.errors import BudgetExceededError

    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    match = rf"more than max_solves={budget} exact solves needed \(every fold's surface together\)"
    with pytest.raises(BudgetExceededError, match=match):
        approxpath.select_surface(problem, cv=2, eps=0.01, relative=True, tol=0.4, max_solves=budget, **_BOX)


def test_strict_false_cannot_return_before_the_first_surfaces_and_says_so():
    """select_surface(strict=False) warns and returns when the budget is spent while refining;
    spent while the first surfaces are built there is no choice: it raises, and says why."""
    from approxpath.errors import BudgetExceededError

    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(BudgetExceededError, match=r"max_solves=5 .*raise max_solves.*while the first surfaces were "
                                                  r"built: there is no choice yet to return\)"):
        approxpath.select_surface(problem, cv=2, eps=0.01, relative=True, tol=0.4, max_solves=5, strict=False, **_BOX)


def test_the_svc_passes_its_eps_and_budget_and_names_its_parameters(monkeypatch):
    """KernelPathSVC(C=None) passed neither eps nor a budget to select_surface (it had no
    max_solves); a budget spent before any choice names the estimator's parameters."""
    import approxpath.surface
    from approxpath.errors import BudgetExceededError
    from approxpath.sklearn import KernelPathSVC

    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    model = KernelPathSVC(C=None, C_range=(0.5, 2.0), t_range=(0.5, 2.0), cv=2, eps=1e-4, max_solves=5)
    assert model.get_params()["max_solves"] == 5
    with pytest.raises(BudgetExceededError, match=r"KernelPathSVC: .* max_solves = 5 .*: raise max_solves, or narrow "
                                                  r"C_range or t_range"):
        model.fit(X, y)
    seen = {}

    def spy(problem, criterion, **kw):
        seen.update(kw, null=problem.null_objective())
        raise RuntimeError("stop")

    monkeypatch.setattr(approxpath.surface, "select_surface", spy)
    with pytest.raises(RuntimeError, match="stop"):
        model.fit(X, y)
    assert seen["max_solves"] == 5 and seen["eps"] == pytest.approx(1e-4 * seen["null"])  # eps of C_range's start
    seen.clear()
    with pytest.raises(RuntimeError, match="stop"):
        model.set_params(eps=0.5, max_solves=None).fit(X, y)
    assert "max_solves" not in seen  # select_surface's default
    assert seen["eps"] == pytest.approx(1e-3 * seen["null"])  # the first surfaces' gap: at most 1e-3 of it


def test_a_budget_spent_while_refining_says_so_and_keeps_the_result(capsys):
    """... and its progress bar, closed by the error, shows the delta it reached."""
    from approxpath.errors import BudgetExceededError

    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(BudgetExceededError, match=r"select: delta = .* > tol = 0.01 at \(.*\): the budget max_solves = "
                                                  r"400 was spent; raise max_solves or tol, or choose over a smaller box") as info:
        approxpath.select_surface(problem, cv=2, eps=0.1, relative=True, tol=0.01, max_solves=400, progress=True,
                                  **_BOX)
    kept = info.value.selection
    assert kept.delta > 0.01 and kept.exact_solves <= 400 and kept.value[0] <= kept.value[1]
    final = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert final.startswith("select kernel_svm over two parameters:") and "100%" not in final, final
    assert f"delta = {kept.delta:.4g} (tol 0.01)" in final, final


def test_the_bar_counts_the_first_surfaces_cells_before_the_first_delta(capsys, monkeypatch):
    """Before the first delta the bar says which fold's first surface is built and how far it got
    (minutes a fold on real data: it stood at "first surfaces" before)."""
    from approxpath import progress

    monkeypatch.setattr(progress, "_NOTE_EVERY_S", 0.0)
    monkeypatch.setenv("COLUMNS", "1000")  # tqdm < 4.68 cuts a bar to $COLUMNS where stderr is no terminal
    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    approxpath.select_surface(problem, cv=2, eps=0.1, relative=True, tol=0.2, progress=True, **_BOX)
    lines = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.strip()]
    notes = [i for i, line in enumerate(lines) if "first surface of fold" in line]
    first_delta = min(i for i, line in enumerate(lines) if "delta = " in line)
    assert notes and max(notes) < first_delta, lines
    assert re.search(r"first surface of fold 1/2: [1-9][0-9]* cells, [1-9][0-9]* exact solves", lines[notes[0]])
    assert any("first surface of fold 2/2: " in lines[i] for i in notes), lines


def test_a_large_grid_is_drawn_pooled_keeping_what_may_still_win():
    """A selection's grid of every fold's cell edges reached 1,387 x 10,918 rectangles (n = 80,
    5 folds, 20,000 solves): its meshes took 24 GB in matplotlib.  Drawn pooled into at most
    _DRAWN display cells per axis: a display cell shows the best bound in it and stays bright
    where any rectangle in it is undecided, so a single such rectangle is never lost."""
    from approxpath.surface.figures import _DRAWN, _pool, _pooled

    rng = np.random.default_rng(0)
    t = np.exp(np.sort(rng.uniform(-3.0, 3.0, 3001)))
    w = np.exp(np.sort(rng.uniform(-2.0, 2.0, 41)))
    drawn, cols = _pooled(t)
    assert drawn.size == _DRAWN + 1 and drawn[0] == t[0] and drawn[-1] == t[-1]
    assert np.all(np.diff(cols) >= 0) and cols[0] == 0 and cols[-1] <= t.size - 2
    assert _pooled(w)[1] is None and np.array_equal(_pooled(w)[0], w)  # few rectangles: drawn as they are
    values = rng.uniform(0.2, 0.9, (40, 3000))
    values[17, 1234] = 0.05
    mask = np.zeros((40, 3000), dtype=bool)
    mask[17, 1234] = True
    shown, bright = _pool(values, None, cols, np.minimum), _pool(mask, None, cols, np.logical_or)
    assert shown.shape == bright.shape == (40, _DRAWN)
    assert shown.min() == 0.05 and bright.sum() == 1 and bright[17].any()
    # every display cell is the best of rectangles that overlap it
    k = int(np.flatnonzero(bright[17])[0])
    assert t[1234] < drawn[k + 1] and t[1235] > drawn[k]


def test_a_single_surface_s_spent_budget_does_not_mention_folds():
    from approxpath.errors import BudgetExceededError

    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(BudgetExceededError, match=r"more than max_solves=3 exact solves needed: raise") as info:
        approxpath.approximate_surface(problem, 0.01, relative=True, max_solves=3, **_BOX)
    assert "fold" not in str(info.value)


def test_the_default_eps_has_one_home_and_holds_for_constant_targets():
    """Without ``eps``, ``select`` and ``select_surface`` start from
    ``default_eps``: 1e-3 of the zero model's objective, or 1e-3 where that objective is 0
    (the surface used to start from eps = 0 and refuse it as if the user had passed it)."""
    from approxpath.data import make_sinc
    from approxpath.selection.search import DEFAULT_EPS, default_eps

    X, y = make_sinc(n=30, seed=0)
    klasso = approxpath.get_problem("klasso")
    p = klasso(X, y, lam=0.1)
    assert default_eps(p) == pytest.approx(DEFAULT_EPS * 0.5 * np.sum((y - y.mean()) ** 2))
    flat = klasso(X, np.zeros(30), lam=0.1)
    assert flat.null_objective() == 0 and default_eps(flat) == DEFAULT_EPS
    with pytest.warns(approxpath.selection.RangeWarning, match=r"box's sides lower bandwidth \(0\.5\), .* and "
                      r"upper lam \(0\.5\): .* beyond them; widen the box past them"):
        s = approxpath.select_surface(flat, cv=3, bandwidths=(0.5, 2), weights=(0.05, 0.5))
    assert s.value[0] == 0 and s.delta <= s.tol  # zero targets: the zero model predicts them exactly
    with pytest.warns(approxpath.selection.RangeWarning):
        assert approxpath.select(flat, cv=3, interval=(0.5, 2)).value[0] == 0

    class _Unscaled:  # a problem with no zero model to take a fraction of
        name = "unscaled"

    with pytest.raises(InputError, match="unscaled has no null_objective\\(\\): pass eps"):
        default_eps(_Unscaled())


def test_the_svc_names_its_parameters_in_a_shortfall(monkeypatch):
    """The estimator reworded select_surface's "raise max_solves or tol, or choose over a
    smaller box" by pattern, leaving "tol" (not a parameter of it) and "a smaller box"."""
    import approxpath.surface
    from approxpath.selection import ShortfallWarning
    from approxpath.sklearn import KernelPathSVC

    def spy(problem, criterion, **kw):
        warnings.warn(ShortfallWarning("{who}: delta = 0.2 > {tol} = 0.05: {why}; raise {max_solves} or {tol}, or "
                                       "{smaller}", 0.2, 0.05, True, dict(why="spent")))
        raise RuntimeError("stop")

    monkeypatch.setattr(approxpath.surface, "select_surface", spy)
    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    with pytest.warns(ShortfallWarning) as caught, pytest.raises(RuntimeError, match="stop"):
        KernelPathSVC(C=None, C_range=(0.5, 2.0), t_range=(0.5, 2.0), cv=2).fit(X, y)
    assert [str(w.message) for w in caught] == ["KernelPathSVC: delta = 0.2 > cv_tol = 0.05: spent; raise max_solves "
                                                "or cv_tol, or narrow C_range or t_range"]
    assert caught[0].filename == __file__  # (the caller's line)


def test_the_engine_starts_each_solve_from_the_nearest_earlier_one():
    """The exact solves an engine keeps answer "which one is nearest" (``|log t - log t'| + |log w -
    log w'|``, the first one of the smallest distance, a key solved again keeping its place) as a loop
    over all of them does, and survive pickling."""
    import math
    import pickle

    from approxpath.surface.engine import Engine

    X, y = make_classification(n=12, d=2, seed=1)
    solves = Engine([approxpath.get_problem("kernel_svm")(X, y, c=1.0)]).solves[0]
    rng = np.random.default_rng(0)
    keys = [(float(t), float(w)) for t, w in np.exp(rng.uniform(-2, 2, (40, 2)))]
    keys += [keys[3], keys[7]]  # (solved again: a new pair, the same place)
    for j, key in enumerate(keys + [(2.0, 1.0), (0.5, 1.0)]):  # (two keys at one distance from t = 1, w = 1)
        solves[key] = j
    for kept in (solves, pickle.loads(pickle.dumps(solves))):
        assert dict(kept) == dict(solves) and list(kept) == list(solves)
        for t, w in [(1.0, 1.0), *np.exp(rng.uniform(-3, 3, (20, 2)))]:
            s, lw = math.log(t), math.log(w)
            best, key = None, None
            for (tt, ww), pair in kept.items():
                d = abs(math.log(tt) - s) + abs(math.log(ww) - lw)
                if key is None or d < key:
                    best, key = pair, d
            assert kept.nearest(s, lw) == (best, key)
