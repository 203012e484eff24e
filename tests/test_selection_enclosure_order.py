"""The enclosures a selection reports are ordered: ``value[0] <= value[1]`` and ``lo <= hi`` on
every cell, for a sampled criterion (robust_l1's, from the path's models) as for certified ones.

A sampled criterion's cell holds each fold's loss at the middle of its piece there, not a bound
at the chosen point: the chosen point's value is its own sample (once intersected with its
cell's, its lower end came from the point and its upper end from the cell's lowest sample,
``value[0] > value[1]``)."""

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.selection import Selection, select

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _robust_l1(seed=0, n=30):
    X, y = make_sinc(n=n, noise=0.1, outliers=0.1, seed=seed)
    return X, y, approxpath.get_problem("robust_l1")(X, y, lam=0.1)


def _path_mae(X, y, paths, t, folds=3):
    """The pooled MAE of the folds' path models at ``t`` (unshuffled k-fold, scikit-learn's)."""
    from sklearn.model_selection import KFold

    total = 0.0
    for path, (_, va) in zip(paths, KFold(folds).split(X)):
        problem = path.problem
        total += float(np.sum(np.abs(problem.predict(path.primal(t), t, X[va]) - y[va])))
    return total / len(y)


def test_sampled_value_is_the_sample_at_the_choice():
    # (on the old code: value = [0.33214, 0.33183], its lower end from t, its upper from a cell)
    X, y, problem = _robust_l1()
    s = select(problem, "mae", cv=3, eps=0.5, interval=(0.5, 4.0))
    assert s.kind == "sampled" and np.isnan(s.delta)
    lo, hi = s.value
    assert lo <= hi, f"reversed enclosure {s.value}"
    at = _path_mae(X, y, s.paths, s.t)
    assert lo == pytest.approx(at, rel=1e-12) and hi == pytest.approx(at, rel=1e-12)
    assert f"its model's value {hi:.6g}; sampled" in s.summary()  # (no enclosure)
    assert s.to_json()["value"][0] <= s.to_json()["value"][1]


def _sampled(seed):
    return select(_robust_l1(seed)[2], "mae", cv=3, eps=0.5, interval=(0.125, 32.0))


def _ridge_cv():
    X, y = make_sinc(n=30, noise=0.1, seed=2)
    return select(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), "mse", cv=3, eps=1e-3,
                  interval=(0.5, 200.0), tol=0.01)


def _ridge_lml():  # a criterion to maximize
    X, y = make_sinc(n=30, noise=0.1, seed=2)
    return select(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), "lml", interval=(0.2, 20.0), tol=0.01)


@pytest.mark.parametrize("run", [lambda: _sampled(0), lambda: _sampled(1), lambda: _sampled(3), _ridge_cv, _ridge_lml],
                         ids=["sampled-0", "sampled-1", "sampled-3", "ridge-cv-mse", "ridge-lml"])
def test_every_enclosure_of_a_selection_is_ordered(run):
    s = run()
    assert s.value[0] <= s.value[1], f"reversed value {s.value}"
    assert s.lo.size == s.hi.size == s.edges.size - 1 > 0
    assert np.all(np.diff(s.edges) >= 0)
    reversed_ = np.flatnonzero(~(s.lo <= s.hi))
    assert reversed_.size == 0, f"cells with lo > hi: {[(s.lo[i], s.hi[i]) for i in reversed_[:5]]}"
    if s.kind == "certified":  # the chosen point's enclosure lies in its cell's
        i = min(max(int(np.searchsorted(s.edges, s.t, side="right")) - 1, 0), s.lo.size - 1)
        assert s.lo[i] <= s.value[1] and s.value[0] <= s.hi[i]


def test_a_reversed_enclosure_is_refused():
    edges, ok = np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2])
    base = dict(t=1.5, delta=float("nan"), criterion="mae", sense="min", tol=0.01, kind="sampled", edges=edges)
    Selection(value=(0.3, 0.3), lo=ok, hi=ok, **base)  # a point: lo == hi
    with pytest.raises(RuntimeError, match="lower end"):
        Selection(value=(0.31, 0.3), lo=ok, hi=ok, **base)
    with pytest.raises(RuntimeError, match="lo > hi"):
        Selection(value=(0.3, 0.3), lo=ok, hi=ok[::-1], **base)
