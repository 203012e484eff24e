"""The certificate of kernel ridge's choice of the bandwidth by a validation loss, which encloses the loss
on cells between exact optima with no path: each fold's cells written as a path of their pairs (certified
by gap bounds computed when written), re-proven by ``verify`` with numpy alone, and the claim checked
against the exact k-fold loss of numpy's dense solves (an independent reference) at the choice and at
random bandwidths."""

from __future__ import annotations

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc

from selection_helpers import command_line_choice, forged, ridge_cv_loss

pytestmark = pytest.mark.usefixtures("one_blas_thread")

_INTERVAL = (0.5, 8.0)


def _data():
    X, y = make_sinc(n=60, seed=0)
    order = np.random.default_rng(0).permutation(60)  # (make_sinc sorts by x: folds spread over it)
    return X[order], y[order]


def _folds(n, k=3):
    return [(np.flatnonzero(np.arange(n) % k != j), np.flatnonzero(np.arange(n) % k == j)) for j in range(k)]


@pytest.fixture(scope="module")
def ridge_file(tmp_path_factory):
    X, y = _data()
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    s = approxpath.select(problem, "mse", cv=_folds(60), interval=_INTERVAL, tol=0.002)
    file = tmp_path_factory.mktemp("ridge_choice") / "ridge.npz"
    return X, y, s, file, s.save(file)


def test_the_file_verifies_and_its_claim_holds_against_dense_solves(ridge_file):
    """The folds' cells are written as paths of their pairs (the cell holding the choice split there, an
    exact optimum: the value at the choice is as tight as the search's); ``verify`` re-proves the claim,
    and the exact 3-fold MSE lies in the value at the choice and is not below it by more than δ at 12
    random bandwidths."""
    X, y, s, file, claim = ridge_file
    assert s.paths == () and claim["t"] == s.t
    assert claim["value"][0] <= s.value[0] and s.value[1] <= claim["value"][1]
    assert claim["value"][1] - claim["value"][0] <= 1e-6  # (the optimum at the choice: no cell's width)
    report = approxpath.verify(file)
    assert report.ok and not report.failures and report.claim["folds"] == 3, report.failures
    assert "3-fold mse of the exact optima" in str(report)
    chosen = ridge_cv_loss(X, y, _folds(60), s.t, 0.1)
    assert claim["value"][0] - 1e-9 <= chosen <= claim["value"][1] + 1e-9  # (the dense solves' accuracy)
    for t in np.exp(np.random.default_rng(3).uniform(*np.log(_INTERVAL), 12)):
        assert ridge_cv_loss(X, y, _folds(60), float(t), 0.1) >= claim["value"][0] - claim["delta"] - 1e-9, t


def test_a_holdout_choice_by_the_mae_verifies_and_holds(tmp_path):
    X, y = _data()
    problem = approxpath.get_problem("kernel_ridge")(X[:40], y[:40], lam=0.1)
    s = approxpath.select(problem, "mae", X_val=X[40:], y_val=y[40:], interval=_INTERVAL, tol=0.002)
    claim = s.save(tmp_path / "holdout.npz")
    report = approxpath.verify(tmp_path / "holdout.npz")
    assert report.ok and report.claim["folds"] == 1, report.failures
    mae = ridge_cv_loss(X, y, [(np.arange(40), np.arange(40, 60))], s.t, 0.1, "mae") * 60 / 20  # (per held-out)
    assert claim["value"][0] - 1e-9 <= mae <= claim["value"][1] + 1e-9


@pytest.mark.parametrize("edit, says", [
    (lambda a, m: a.update({"fold1.gap_bound": a["fold1.gap_bound"] / 2}), "exceeds the stored"),
    (lambda a, m: a["fold0.dual_a"].__setitem__((0, 0), a["fold0.dual_a"][0, 0] + 1.0),
     "fold 1: piece 0 [0.5, "),
    (lambda a, m: m.update(delta=m["delta"] / 2), "prove only"),
])
def test_forged_files_are_refused(ridge_file, tmp_path, edit, says):
    *_, file, _ = ridge_file
    report = approxpath.verify(forged(file, tmp_path / "forged.npz", edit))
    assert not report.ok and any(says in f for f in report.failures), report.failures


def test_the_command_line_writes_and_verifies_it(tmp_path):
    command_line_choice(tmp_path, *_data(), ["kernel_ridge", "--lam", "0.1", "--criterion", "mse", "--cv", "3",
                                             "--shuffle", "0", "--range", "0.5", "8", "--tol", "0.005"])


def test_new_optima_make_the_file_prove_the_search_s_delta(monkeypatch, tmp_path):
    """The search's cells kept the enclosures of every cover they were refined from; the file's pieces
    alone proved less on 120 points (δ 0.00064 in the search), so the writer adds exact optima in the
    pieces that kept δ above it: the file then proves at least as much, verifies, and the search's own
    folds keep their optima."""
    from approxpath.selection.nodes import BandwidthFolds

    added, real = [], BandwidthFolds.with_optima
    monkeypatch.setattr(BandwidthFolds, "with_optima", lambda self, points: added.append(len(points)) or real(
        self, points))
    X, y = make_sinc(n=120, seed=0)
    s = approxpath.select(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), "mse", cv=5, shuffle=0,
                          interval=(2.0**-3, 2.0**5), tol=0.001)
    solves = s.proof.nodes.solves
    claim = s.save(tmp_path / "ridge.npz")
    assert added and claim["delta"] <= s.delta and s.proof.nodes.solves == solves
    assert approxpath.verify(tmp_path / "ridge.npz").ok


def test_a_fold_of_zero_targets_claims_a_positive_eps(tmp_path):
    """A fold trained on targets all 0 has exact optima c = 0 and gap bounds 0: its path claims the
    smallest positive eps (a path's eps must be positive), and the file verifies."""
    X, y = make_sinc(n=60, seed=0)
    y = np.where(np.arange(60) >= 40, y, 0.0)  # (the third unshuffled fold holds out the only nonzero targets)
    s = approxpath.select(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), "mse", cv=3, interval=_INTERVAL,
                          tol=0.01)
    s.save(tmp_path / "zeros.npz")
    report = approxpath.verify(tmp_path / "zeros.npz")
    assert report.ok, report.failures


def test_a_kept_choice_holds_no_fold_kernels():
    """The folds' stored kernels (hundreds of MB at n = 1000) are dropped when the search ends: a choice
    kept by the caller (an estimator's ``selection_``) holds its folds' data and pairs, not their kernels."""
    X, y = _data()
    s = approxpath.select(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), "mse", cv=3, interval=_INTERVAL,
                          tol=0.01)
    assert all(fold.bound.__dict__.get("_kernels") is None for fold in s.proof.problems)
