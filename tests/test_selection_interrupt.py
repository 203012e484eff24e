"""Ctrl-C during a selection's search: ``SelectionInterrupted`` (a ``KeyboardInterrupt``) carries
the choice of the last round the search finished — the same result, field for field, as a search
limited to that many rounds — whose claims hold against dense numpy references; before the search
begins it is a plain ``KeyboardInterrupt``.  The command line prints that choice and exits 130.
(The interruption is raised here where the signal's handler would raise it: inside a round.)"""

import json
import pickle
import warnings

import numpy as np
import pytest

import approxpath
from approxpath import SelectionInterrupted
from approxpath.cli import main
from approxpath.data import make_sinc
from approxpath.selection.branch import Search

from ridge_helpers import dense_criteria
from selection_helpers import ridge_cv_loss

# (the sinc points are sorted: unshuffled folds are warned of, and are what the references use)
pytestmark = [pytest.mark.usefixtures("one_blas_thread"), pytest.mark.filterwarnings("ignore:the points are sorted")]

LAM = 0.1


def _interrupt_at(monkeypatch, owner, name, call):
    """``owner.name`` raises ``KeyboardInterrupt`` at its ``call``-th call (counted from 1)."""
    real, calls = getattr(owner, name), []

    def stopped(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, stopped)


def _same(a, b, fields):
    for f in fields:
        x, y = getattr(a, f), getattr(b, f)
        assert np.array_equal(np.asarray(x), np.asarray(y)), f


def _ridge():
    X, y = make_sinc(n=30, noise=0.1, seed=2)
    return X, y, approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)


def _select(problem):
    return approxpath.select(problem, "mse", cv=3, eps=1e-4, interval=(0.2, 20.0), tol=1e-6, strict=False)


def test_a_search_over_one_parameter_stopped_in_its_third_round_returns_its_second_whole(monkeypatch):
    import approxpath.selection.search as search_module
    from sklearn.model_selection import KFold

    X, y, problem = _ridge()
    replaced, real = [], Search._replace

    def counted(self, *args):
        replaced.append(1)
        return real(self, *args)

    with monkeypatch.context() as m, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (delta > tol after a round or two)
        m.setattr(search_module, "_MAX_ROUNDS", 0)
        first = _select(problem)
        m.setattr(search_module, "_MAX_ROUNDS", 2)
        m.setattr(Search, "_replace", counted)
        two = _select(problem)
    assert two.edges.size > first.edges.size and two.delta < first.delta  # (two rounds were made)
    # mid-round: the third round has replaced one cell when the interruption comes
    _interrupt_at(monkeypatch, Search, "_replace", len(replaced) + 2)
    with pytest.raises(SelectionInterrupted) as info:
        _select(problem)
    s = info.value.selection
    assert isinstance(info.value, KeyboardInterrupt)
    assert str(info.value).startswith(f"interrupted after {s.exact_solves} exact solves; the choice so far: mse")
    _same(s, two, ["t", "value", "delta", "edges", "lo", "hi", "kind", "refinements", "tol"])
    assert s.exact_solves > two.exact_solves  # (the solves the interrupted round made are counted)
    assert s.kind == "certified" and not s.reached
    # its claims, against the dense folds: the choice's enclosure, and no t better by more than delta
    folds = list(KFold(3).split(X))
    at = ridge_cv_loss(X, y, folds, s.t, LAM)
    assert s.value[0] <= at <= s.value[1]
    grid = np.geomspace(0.2, 20.0, 200)
    assert min(ridge_cv_loss(X, y, folds, t, LAM) for t in grid) >= s.value[1] - s.delta - 1e-12
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, SelectionInterrupted) and again.selection.t == s.t


def test_before_the_search_begins_it_is_a_plain_keyboard_interrupt(monkeypatch):
    _, _, problem = _ridge()
    _interrupt_at(monkeypatch, Search, "__init__", 1)
    with pytest.raises(KeyboardInterrupt) as info:
        _select(problem)
    assert not isinstance(info.value, SelectionInterrupted)


def _box_select(problem):
    return approxpath.select_surface(problem, "gcv", bandwidths=(0.5, 16.0), weights=(0.01, 1.0), tol=1e-6,
                                     strict=False)


def test_a_search_over_both_without_paths_stopped_in_its_second_round_returns_its_first(monkeypatch):
    import approxpath.surface.nodes as nodes_module

    X, y = make_sinc(n=40, noise=0.2, seed=3)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    with monkeypatch.context() as m:
        m.setattr(nodes_module, "_MAX_ROUNDS", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = _box_select(problem)
    _interrupt_at(monkeypatch, nodes_module, "_refine", 2)
    with pytest.raises(SelectionInterrupted) as info:
        _box_select(problem)
    s = info.value.selection
    _same(s, one, ["t", "w", "value", "delta", "t_edges", "w_edges", "lo", "hi", "exact_solves", "refinements",
                   "cells"])
    assert s.refinements == one.refinements == 1 and not s.reached
    assert s.value[0] <= dense_criteria(X, y, s.t, s.w)["gcv"] <= s.value[1]
    grid = [dense_criteria(X, y, t, w)["gcv"] for t in np.geomspace(0.5, 16.0, 12) for w in np.geomspace(0.01, 1, 12)]
    assert min(grid) >= s.value[1] - s.delta - 1e-12


def test_a_search_over_both_with_paths_stopped_in_its_second_round_returns_its_first(monkeypatch):
    """Stopped in the second round's tiling of the second fold (the first fold's cells already
    replaced): the first round's choice and cells; the interrupted fold's new cells are not
    enclosed (that took up to 10 s of held-out enclosures, for a round then dropped)."""
    import approxpath.surface.select as select_module
    from approxpath.data import make_classification

    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    tile, replace, tiled, replaced, stop = select_module.tile, select_module._Fold.replace, [], [], None

    def run():
        return approxpath.select_surface(problem, cv=2, eps=0.2, relative=True, tol=1e-3, strict=False,
                                         bandwidths=(1.0, 2.0), weights=(1.0, 2.0))

    def counted_tile(engine, k, *args):
        tiled.append(k)
        if stop is not None and len(tiled) > stop and k == 1:
            raise KeyboardInterrupt
        return tile(engine, k, *args)

    def counted_replace(fold, *args):
        replaced.append(fold.k)
        return replace(fold, *args)

    monkeypatch.setattr(select_module, "tile", counted_tile)
    monkeypatch.setattr(select_module._Fold, "replace", counted_replace)
    with monkeypatch.context() as m:
        m.setattr(select_module, "_MAX_ROUNDS", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = run()
    stop, first_round = len(tiled), list(replaced)  # (the tiles of the first surfaces and the first round)
    tiled.clear()
    replaced.clear()
    with pytest.raises(SelectionInterrupted) as info:
        run()
    s = info.value.selection
    assert s.refinements == one.refinements == 1 and not s.reached
    # (the solves of the interrupted round's tiles, made before the interruption, are counted)
    _same(s, one, ["t", "w", "value", "delta", "t_edges", "w_edges", "lo", "hi", "refinements", "cells"])
    assert first_round == [0, 1] and replaced == [0, 1, 0]  # fold 1's second round: not replaced


def test_the_command_line_prints_the_choice_so_far_and_exits_130(monkeypatch, sinc_csv, capsys):
    args = ["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--cv", "3",
            "--tol", "1e-6", "--no-progress"]
    _interrupt_at(monkeypatch, Search, "step", 3)
    assert main(args) == 130
    out, err = capsys.readouterr()
    assert "mae (lowest is best" in out and "delta = " in out
    assert "approxpath: interrupted after " in err and "the choice printed is the search's last finished round" in err
    _interrupt_at(monkeypatch, Search, "step", 3)  # (counted afresh)
    assert main(args + ["--json"]) == 130
    document = json.loads(capsys.readouterr().out)
    assert document["interrupted"] is True and document["delta"] > document["tol"] == 1e-6


def test_the_command_line_over_both_prints_the_choice_so_far_and_exits_130(monkeypatch, sinc_csv, capsys):
    import approxpath.surface.nodes as nodes_module

    _interrupt_at(monkeypatch, nodes_module, "_refine", 2)
    rc = main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--over", "lam,bandwidth",
               "--weights", "0.01", "1", "--range", "0.5", "16", "--criterion", "gcv", "--tol", "1e-6",
               "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 130 and "gcv" in out and "approxpath: interrupted after " in err
