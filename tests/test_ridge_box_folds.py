"""Kernel ridge's validation losses (k-fold CV, hold-out) over both the bandwidth and λ, with no
path: every fold's cells between exact optima, the held-out predictions enclosed on each cell from
its λ edges and a chord in λ.  References: exact optima by numpy solves at random points of random
cells (the RKHS change the chord needs, every held-out prediction, the pooled loss), and the
choice against a dense grid of exact k-fold losses."""

import json
import math

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.surface.folds import BoxFolds

from ridge_helpers import gram

pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def data():
    from sklearn.model_selection import KFold

    X, y = make_sinc(n=45, noise=0.2, seed=8)
    return X, y, list(KFold(3, shuffle=True, random_state=2).split(X))


def _exact(X, y, train, t, lam):
    """The exact optimum's coefficients on the rows ``train`` at ``(t, lam)`` (a numpy solve)."""
    K = gram(X[train], t)
    return K, np.linalg.solve(K + lam * np.eye(len(train)), y[train])


def _cross(X_new, X, t):
    return np.exp(-t * ((X_new[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def _dense_loss(X, y, folds, t, lam, criterion):
    """The pooled k-fold loss of the exact optima (numpy solves)."""
    total = 0.0
    for train, test in folds:
        r = y[test] - _cross(X[test], X[train], t) @ _exact(X, y, train, t, lam)[1]
        total += float(np.sum(r * r if criterion == "mse" else np.abs(r)))
    return total / len(y)


def _log_uniform(rng, lo, hi, size=None):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


@pytest.mark.parametrize("kernel", ["gaussian", "precomputed"])
def test_the_change_across_lambda_against_exact_optima(data, kernel):
    """The bound of ||f*(t, lam_2) - f*(t, lam_1)||_H on an edge's bandwidths holds at random t
    (exact optima by numpy), and at a single bandwidth it is the exact norm (up to the gaps):
    from the kernel's spectral density, or entrywise for a precomputed D."""
    from approxpath.problems.kernel_ridge.box import _change

    X, y, folds = data
    train, test = folds[0]
    rng = np.random.default_rng(0)
    if kernel == "precomputed":
        D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        base = approxpath.get_problem("kernel_ridge")(D[np.ix_(train, train)], y[train], lam=0.1, kernel=kernel)
        X_new = D[np.ix_(test, train)]
    else:
        base = approxpath.get_problem("kernel_ridge")(X[train], y[train], lam=0.1)
        X_new = X[test]
    for _ in range(6):
        t1 = float(_log_uniform(rng, 0.2, 20.0))
        t2 = t1 * math.exp(rng.uniform(0.05, 0.5))
        w1 = float(_log_uniform(rng, 1e-3, 1.0))
        w2 = w1 * math.exp(rng.uniform(0.1, 1.5))
        edges = []
        for w in (w1, w2):
            bound = base.with_weight(w).bound
            cache = {}
            for t in (t1, t2):
                bound.node_optimum(t, cache)
            edges.append((bound, bound.prediction_edge(t1, t2, cache, X_new)))
        (b1, first), (_, second) = edges
        change = _change(b1, first, second) + first.radius + second.radius
        for t in np.geomspace(t1, t2, 9):
            K, c1 = _exact(X, y, train, t, w1)
            d = _exact(X, y, train, t, w2)[1] - c1
            assert math.sqrt(max(d @ K @ d, 0.0)) <= change * (1 + 1e-9) + 1e-12
        # at one bandwidth: the norm of the two optima's difference itself
        points = []
        for w in (w1, w2):
            bound = base.with_weight(w).bound
            cache = {}
            bound.node_optimum(t1, cache)
            points.append(bound.prediction_edge(t1, t1, cache, X_new))
        K, c1 = _exact(X, y, train, t1, w1)
        d = _exact(X, y, train, t1, w2)[1] - c1
        exact = math.sqrt(d @ K @ d)
        assert abs(_change(b1, *points) - exact) <= 1e-6 * exact + points[0].radius + points[1].radius


@pytest.mark.parametrize("criterion", ["mse", "mae"])
def test_cells_contain_every_prediction_and_the_loss_at_random_points(data, criterion):
    """Random cells of the (t, lam) plane: every held-out prediction of the exact optimum at random
    points of the cell lies in its fold's enclosure, and the pooled loss in the cell's."""
    X, y, folds = data
    rng = np.random.default_rng(1 + (criterion == "mae"))
    problems = [approxpath.get_problem("kernel_ridge")(X[train], y[train], lam=0.1) for train, _ in folds]
    box = BoxFolds(problems, [X[test] for _, test in folds], [y[test] for _, test in folds], criterion)
    widths = []
    for _ in range(6):
        t1 = float(_log_uniform(rng, 0.2, 20.0))
        t2 = t1 * math.exp(rng.uniform(0.02, 0.4))
        w1 = float(_log_uniform(rng, 1e-3, 1.0))
        w2 = w1 * math.exp(rng.uniform(0.05, 1.0))
        low, high, _ = box.cell(t1, t2, w1, w2)
        widths.append(high - low)
        enclosures = [problems[k].with_weight(w1).bound.prediction_box(box.edge(k, t1, t2, w1),
                                                                        box.edge(k, t1, t2, w2))
                      for k in range(len(folds))]
        for _ in range(5):
            t, w = float(_log_uniform(rng, t1, t2)), float(_log_uniform(rng, w1, w2))
            for (train, test), (lo, up) in zip(folds, enclosures):
                f = _cross(X[test], X[train], t) @ _exact(X, y, train, t, w)[1]
                assert np.all(lo.min(axis=1) <= f + 1e-12) and np.all(f <= up.max(axis=1) + 1e-12)
            assert low - 1e-12 <= _dense_loss(X, y, folds, t, w, criterion) <= high + 1e-12
    assert min(widths) < 0.05  # (not vacuous: narrow cells are enclosed narrowly)


@pytest.mark.parametrize("criterion", ["mse", "mae"])
def test_both_parameters_by_kfold_with_no_path_within_delta_of_dense_folds(data, criterion):
    """The choice of (t, lam) by k-fold CV: its exact pooled loss lies in its enclosure, no point
    of a dense grid beats it by more than delta, and every grid point lies in its rectangle's
    enclosure."""
    X, y, folds = data
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    s = approxpath.select_surface(problem, criterion, cv=folds, bandwidths=(0.3, 10.0), weights=(0.01, 1.0),
                                  tol=0.01)
    assert s.reached and s.folds == 3 and not s.surfaces and "3 folds, no path" in s.summary()
    at = _dense_loss(X, y, folds, s.t, s.w, criterion)
    assert s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9
    ts, ws = np.geomspace(0.3, 10.0, 15), np.geomspace(0.01, 1.0, 15)
    grid = np.array([[_dense_loss(X, y, folds, t, w, criterion) for t in ts] for w in ws])
    assert np.all(grid >= s.value[1] - s.delta - 1e-12)
    for j, w in enumerate(ws):
        for i, t in enumerate(ts):
            a = min(np.searchsorted(s.t_edges, t, side="right") - 1, s.t_edges.size - 2)
            b = min(np.searchsorted(s.w_edges, w, side="right") - 1, s.w_edges.size - 2)
            assert s.lo[b, a] - 1e-12 <= grid[j, i] <= s.hi[b, a] + 1e-12


def test_a_hold_out_set_over_both_parameters(data):
    X, y, folds = data
    train, test = folds[1]
    problem = approxpath.get_problem("kernel_ridge")(X[train], y[train], lam=0.1)
    s = approxpath.select_surface(problem, "mse", X_val=X[test], y_val=y[test], bandwidths=(0.3, 10.0),
                                  weights=(0.01, 1.0), tol=0.01)
    assert s.reached and s.folds == 1 and "no path" in s.summary()
    at = _dense_loss(X, y, [(train, test)], s.t, s.w, "mse") * len(y) / len(test)
    assert s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9


def test_the_command_line_chooses_both_by_kfold(data, tmp_path, capsys):
    from approxpath.cli import main

    X, y, _ = data
    csv = tmp_path / "sinc.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    rc = main(["select", "kernel_ridge", "--data", str(csv), "--format", "csv", "--criterion", "mse", "--cv", "3",
               "--over", "lam,bandwidth", "--weights", "0.01", "1", "--range", "0.3", "10", "--tol", "0.02", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["reached"] and out["weight"] == "lam" and out["folds"] == 3
    from sklearn.model_selection import KFold

    at = _dense_loss(X, y, list(KFold(3).split(X)), out["t"], out["w"], "mse")
    assert out["value"][0] - 1e-9 <= at <= out["value"][1] + 1e-9
