"""What a selection keeps between its rounds and how it labels and reports its cells: the known
enclosures of a fold's held-out predictions, the certified-or-sampled label of each cell, the
cells an uncovered piece leaves, the chosen point's rectangle, the sides warned of, the refused
refinements (each test fails on a mutant of the code that the suite let pass)."""

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.selection.cover import ClosedForm, Tracks, merge_covers
from approxpath.selection.curve import ValidationCurve, evaluation_points, validation_loss
from approxpath.selection.predictions import halves
from approxpath.selection.refine import Refinements
from approxpath.selection.validation import Validation, _Known
from approxpath.surface.nodes import at_sides
from approxpath.surface.select import _Fold

from selection_helpers import svm_predict


def _known(*records):
    known = _Known(1)
    for edges, lows, ups in records:
        edges = np.array(edges, dtype=float)
        known.record(edges, np.array([lows], dtype=float), np.array([ups], dtype=float), edges)
    return known


def _hull(known, a, b):
    return [float(v[0]) for v in known.hull(a, b)]


def test_nothing_is_known_of_a_range_the_known_cells_do_not_cover():
    known = _known(([0, 1], [0], [1]), ([2, 3], [0], [1]))
    for a, b in ((0.0, 3.0), (0.5, 2.5), (0.0, 1.5)):  # a hole at (1, 2); known only up to 1
        assert _hull(known, a, b) == [-np.inf, np.inf]


def test_known_cells_stay_sorted_and_disjoint_when_a_range_inside_them_is_recorded():
    known = _known(([0, 1, 2], [0, 10], [1, 11]), ([0.5, 1, 1.5], [0.2, 10.2], [0.8, 10.8]))
    assert known.los == sorted(known.los) and all(h <= lo for h, lo in zip(known.his[:-1], known.los[1:]))
    assert _hull(known, 0.5, 0.9) == [0.2, 0.8] and _hull(known, 1.6, 1.9) == [10.0, 11.0]
    assert _hull(known, 0.1, 0.4) == [0.0, 1.0]  # the part of the straddled cell left of the new range


def test_a_known_cell_touching_a_range_only_at_its_end_is_not_taken():
    known = _known(([0, 1, 2], [0, 10], [1, 11]))
    assert _hull(known, 1.0, 2.0) == [10.0, 11.0]
    assert _hull(known, 1.0, 1.0) == [0.0, 11.0]  # a point: both cells holding it


def _ridge_with_a_sampled_piece():
    """A kernel ridge fold's path whose second piece is marked sampled, and the held-out points."""
    X, y = make_sinc(n=40, noise=0.1, seed=3)
    problem = approxpath.get_problem("kernel_ridge")(X[:28], y[:28], lam=0.1)
    path = approxpath.approximate_path(problem, eps=1e-3, interval=(0.3, 4.0))
    pieces = list(path.pieces)
    pieces[1] = dataclasses.replace(pieces[1], kind="sampled")
    return problem, X[28:], y[28:], pieces, dataclasses.replace(path, pieces=tuple(pieces))


def _inside(edges, piece):
    mids = 0.5 * (edges[:-1] + edges[1:])
    return (mids > piece.lo) & (mids < piece.hi)


def test_cells_over_a_sampled_piece_are_not_certified():
    """Held-out losses and closed-form criteria: a cell is certified only over certified pieces."""
    problem, X_val, y_val, pieces, path = _ridge_with_a_sampled_piece()
    for criterion in (Validation(Tracks([problem], [path]), [X_val], [y_val], "mse"),
                      ClosedForm(Tracks([problem], [path]), "loocv", "min")):
        edges, _, _, certified = criterion.cover(0.3, 4.0)
        inside = _inside(edges, pieces[1])
        assert inside.any() and not certified[inside].any() and certified[~inside].all()
    assert not ClosedForm(Tracks([problem], [path]), "loocv", "min").cover(pieces[1].lo, pieces[1].hi)[3].any()


def test_merged_covers_are_certified_only_where_every_fold_is():
    a = (np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([True, False]))
    b = (np.array([0.0, 0.5, 2.0]), np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([True, True]))
    edges, lo, hi, certified = merge_covers([a, b])
    assert edges.tolist() == [0.0, 0.5, 1.0, 2.0] and certified.tolist() == [True, True, False]
    assert np.all(lo <= 2.0) and np.all(hi >= 4.0)


def test_the_pieces_over_a_range_have_width():
    problem, _, _, pieces, path = _ridge_with_a_sampled_piece()
    over = Tracks([problem], [path]).over(0, pieces[0].hi, pieces[2].hi)
    assert [(p.lo, a, b) for p, a, b in over] == [(pieces[1].lo, pieces[1].lo, pieces[1].hi),
                                                  (pieces[2].lo, pieces[2].lo, pieces[2].hi)]


def test_halves_keep_every_sub_interval():
    edges, lo, hi = halves(np.arange(5.0), (np.array([[5.0, 0.0, 0.0, 5.0]]), np.array([[6.0, 9.0, 9.0, 6.0]])))
    assert edges.tolist() == [0.0, 2.0, 4.0] and lo.tolist() == [[0.0, 0.0]] and hi.tolist() == [[9.0, 9.0]]


def test_a_zero_prediction_is_class_minus_one_and_curves_name_tied_ends():
    assert validation_loss("error", np.array([-1.0, 1.0]), np.array([0.0, 0.0])) == 0.5
    curve = ValidationCurve(t=np.array([1.0, 2.0, 3.0]), loss=np.array([0.1, 0.2, 0.1]), gap_bound=np.zeros(3),
                            kind=np.array(["certified"] * 3), criterion="mse")
    assert curve.best_index == 0 and curve.edge_sides() == ["lower", "upper"]
    pieces = [SimpleNamespace(lo=1.0, hi=4.0), SimpleNamespace(lo=4.0, hi=16.0)]
    assert np.allclose(evaluation_points(SimpleNamespace(pieces=pieces, interval=(1.0, 16.0))), [2.0, 8.0])


def test_an_svm_fold_encloses_held_out_points_off_its_training_lattice():
    """Binary training features (squared distances on a lattice), held-out points off it."""
    rng = np.random.default_rng(8)
    X = (rng.random((40, 6)) < 0.4).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + 0.4 * rng.normal(size=40) > 0.8, 1.0, -1.0)
    X_val = (rng.random((15, 6)) < 0.4) + 0.3 * rng.random((15, 6))
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    path = approxpath.approximate_path(problem, eps=0.02, interval=(0.05, 4.0))
    for t in (0.1, 0.5, 2.0):
        p = path.piece_at(t)
        edges, low, up = problem.bound.prediction_enclosure(p.primal, p.dual, p.gap_bound, p.lo, p.hi, X_val)
        j = min(int(np.searchsorted(edges, t, side="right")) - 1, edges.size - 2)
        f = svm_predict(X, y, t, 1.0, X_val)
        slack = 1e-6 * (1 + np.abs(f))  # (the reference's own solve)
        assert np.all(low[:, j] - slack <= f) and np.all(f <= up[:, j] + slack), t


def test_a_surface_cell_is_the_hull_of_its_sub_intervals_and_an_uncovered_one_may_be_all_wrong():
    low, up = np.array([[0.0, 2.0]]), np.array([[1.0, 3.0]])  # one held-out point, y = 0
    engine = SimpleNamespace(cells=[SimpleNamespace(prediction_enclosure=lambda *a: (np.array([1.0, 1.5, 2.0]), low,
                                                                                      up))])
    cell = SimpleNamespace(kind="certified", primal=None, dual=None, gap_bound=0.0, t_lo=1.0, t_hi=2.0, w_lo=1.0,
                           w_hi=2.0)
    lo, hi = _Fold(engine, 0, np.zeros((1, 1)), np.array([0.0]), "mse")._cover(cell)
    assert lo <= 0.0 and hi >= 9.0
    lo, hi = _Fold(None, 0, np.zeros((3, 1)), np.array([1.0, -1.0, 1.0]), "error")._cover(
        SimpleNamespace(kind="uncovered", t_lo=1.0, t_hi=2.0))
    assert (lo, hi) == (0.0, 3.0)


@pytest.fixture(scope="module")
def mae_surface():
    """A choice over both of the SVM's parameters by its held-out mean absolute error."""
    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    folds = [(np.flatnonzero(np.arange(32) % 4 // 2 != k), np.flatnonzero(np.arange(32) % 4 // 2 == k))
             for k in (0, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return approxpath.select_surface(approxpath.get_problem("kernel_svm")(X, y, c=1.0), "mae", cv=folds, eps=0.1,
                                         relative=True, tol=0.4, strict=False, bandwidths=(0.5, 4.0),
                                         weights=(0.5, 4.0), max_solves=400)


def test_a_real_valued_loss_delta_is_not_snapped_to_counts(mae_surface):
    s = mae_surface
    assert s.delta >= s.value[1] - np.min(s.lo)  # every point of the box has a loss of at least min(lo)


def test_the_chosen_point_lies_in_the_rectangle_whose_enclosure_is_reported(mae_surface):
    s = mae_surface
    i, j = int(np.searchsorted(s.t_edges, s.t)) - 1, int(np.searchsorted(s.w_edges, s.w)) - 1
    assert s.t_edges[i] < s.t < s.t_edges[i + 1] and s.w_edges[j] < s.w < s.w_edges[j + 1]
    assert s.hi[j, i] == s.value[1] == s.hi.min() and s.lo[j, i] == s.value[0]


def test_the_sides_of_the_chosen_cell_and_of_cells_tied_with_it_are_named():
    cells = np.array([[1.0, 2.0, 1.0, 2.0], [2.0, 3.0, 1.0, 2.0], [1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 2.0, 3.0]])
    box = (1.0, 3.0, 1.0, 3.0)
    assert at_sides(cells, np.array([0.5, 0.9, 0.9, 0.9]), 0.5, 0, box) == ["lower bandwidth", "lower weight"]
    assert at_sides(cells, np.array([0.5, 0.9, 0.9, 0.5]), 0.5, 0, box) == ["lower bandwidth", "upper bandwidth",
                                                                           "lower weight", "upper weight"]


def test_a_refinement_inside_a_refused_one_at_no_larger_eps_is_not_asked_again():
    refinements = Refinements(None, None, None, {}, 100)
    refinements.floors.append((0, 1.0, 2.0, 0.1))
    assert refinements._refused_before(0, 1.2, 1.8, 0.05) and refinements._refused_before(0, 1.0, 2.0, 0.1)
    assert not refinements._refused_before(0, 1.2, 1.8, 0.2) and not refinements._refused_before(1, 1.2, 1.8, 0.05)
