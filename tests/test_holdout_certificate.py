"""The certificate of a choice on a hold-out set, over one parameter or both: its data are the training
points followed by the held-out ones, its one fold trains on the first; ``verify`` re-proves it with
numpy alone, its claim is checked against the exact hold-out error of tight solves, and forged masks or
held-out data are refused (each forgery with its content hash recomputed, as a forger would)."""

from __future__ import annotations

import numpy as np
import pytest

import approxpath
from approxpath.certificate.folds import split_failures
from approxpath.data import data_sha256, make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.selection import RangeWarning

from selection_helpers import forged, klasso_predict, svm_predict

pytestmark = pytest.mark.usefixtures("one_blas_thread")

_N, _M = 32, 16  # (training and held-out points)


def _holdout_error(X, y, t, C):
    """The exact SVM optimum's hold-out 0-1 error (trained on the first ``_N`` points) and the
    smallest |decision value| of a held-out point."""
    f = svm_predict(X[:_N], y[:_N], t, C, X[_N:])
    return float(np.mean(np.where(f > 0, 1.0, -1.0) != y[_N:])), float(np.min(np.abs(f)))


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n=_N + _M, d=2, separation=1.5, seed=3)
    return X, np.where(y > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def one_file(data, tmp_path_factory):
    X, y = data
    problem = approxpath.get_problem("kernel_svm")(X[:_N], y[:_N], c=1.0)
    with pytest.warns(RangeWarning):  # (the best bandwidths reach the interval's lower end)
        s = approxpath.select(problem, X_val=X[_N:], y_val=y[_N:], eps=0.1, relative=True, tol=0.2, strict=False,
                              interval=(0.5, 4.0))
    file = tmp_path_factory.mktemp("holdout") / "one.npz"
    return s, file, s.save(file)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_a_holdout_choice_over_the_bandwidth_verifies_and_holds(data, one_file):
    """The file carries the training and held-out points in that order; ``verify`` re-proves it and
    says it is a hold-out choice; the exact hold-out error at the choice lies in the file's value and
    at random bandwidths is not below it by more than the file's δ."""
    X, y = data
    s, file, claim = one_file
    assert s.folds == 1 and claim["t"] == s.t
    arrays, _ = approxpath.certificate.read_certificate(file)
    assert np.array_equal(arrays["data_X"], X) and np.array_equal(arrays["data_y"], y)
    assert np.array_equal(arrays["train"], [np.arange(_N + _M) < _N])
    assert np.array_equal(arrays["test"], ~arrays["train"])
    report = approxpath.verify(file)
    assert report.ok and report.claim["folds"] == 1 and not report.failures, report.failures
    assert "hold-out error of the exact optima" in str(report)
    chosen, closest = _holdout_error(X, y, s.t, 1.0)
    assert closest > 1e-6 and claim["value"][0] <= chosen <= claim["value"][1]
    checked = 0
    for t in np.exp(np.random.default_rng(0).uniform(np.log(0.5), np.log(4.0), 8)):
        value, closest = _holdout_error(X, y, float(t), 1.0)
        if closest > 1e-6:
            assert chosen - value <= claim["delta"] + 1e-15, t
            checked += 1
    assert checked >= 6


def test_verifying_with_the_training_data_alone_says_what_the_data_are(data, one_file):
    X, y = data
    report = approxpath.verify(one_file[1], X[:_N], y[:_N])
    assert not report.ok and "n = 48, but the data given have n = 32 (other data?); a hold-out choice's data are its " \
        "training points followed by the held-out ones; the file carries them: leave the data out" in report.failures[0]
    other = approxpath.verify(one_file[1], X[:, :1], y)  # (all the points, a feature short: no such hint)
    assert not other.ok and "d = 2, but the data given have d = 1" in other.failures[0]
    assert "hold-out" not in other.failures[0]


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_a_holdout_choice_over_both_parameters_verifies_and_holds(data, tmp_path):
    X, y = data
    problem = approxpath.get_problem("kernel_svm")(X[:_N], y[:_N], c=1.0)
    with pytest.warns(RangeWarning):
        s = approxpath.select_surface(problem, X_val=X[_N:], y_val=y[_N:], eps=0.1, relative=True, tol=0.4,
                                      strict=False, bandwidths=(0.5, 4.0), weights=(0.5, 4.0))
    claim = s.save(tmp_path / "both.npz")
    report = approxpath.verify(tmp_path / "both.npz")
    assert report.ok and report.certified == s.cells and report.claim["folds"] == 1, report.failures
    assert "hold-out error of the exact optima: at t = " in str(report)
    chosen, closest = _holdout_error(X, y, s.t, s.w)
    assert closest > 1e-6 and claim["value"][0] <= chosen <= claim["value"][1]


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_a_holdout_regression_choice_holds_against_tight_solves(tmp_path):
    """kLASSO by the hold-out MAE: the exact optimum's MAE at the choice (a tight CVXPY solve) lies in the
    verified file's value."""
    X, y = make_sinc(n=40, noise=0.1, seed=2)
    order = np.random.default_rng(1).permutation(40)  # (make_sinc sorts by x: a hold-out set spread over it)
    X, y = X[order], y[order]
    problem = approxpath.get_problem("klasso")(X[:28], y[:28], lam=0.1)
    s = approxpath.select(problem, "mae", X_val=X[28:], y_val=y[28:], eps=0.1, relative=True, tol=0.05,
                          strict=False, interval=(0.5, 16.0))
    claim = s.save(tmp_path / "klasso.npz")
    report = approxpath.verify(tmp_path / "klasso.npz")
    assert report.ok and report.claim["folds"] == 1, report.failures
    mae = float(np.mean(np.abs(klasso_predict(X[:28], y[:28], s.t, 0.1, X[28:]) - y[28:])))
    assert claim["value"][0] - 1e-6 <= mae <= claim["value"][1] + 1e-6  # (the reference solve's accuracy)


def _relabelled(arrays, meta):
    """A held-out point's label flipped, the data's hash recomputed: the claim is then enclosed on other data."""
    arrays["data_y"][-1] *= -1
    meta["data_sha256"] = data_sha256(arrays["data_X"], arrays["data_y"])


@pytest.mark.parametrize("edit, says", [
    (lambda a, m: a.update(train=a["train"] | a["test"]), "fold 1 trains on a point it holds out"),
    (lambda a, m: a["test"].__setitem__((0, -1), False), "each point must be trained on or held out"),
    (lambda a, m: a["data_y"].__setitem__(-1, -a["data_y"][-1]), "do not match its data_sha256"),
    (_relabelled, "does not contain the recomputed"),
    (lambda a, m: m.update(value=[m["value"][0] + 0.1, m["value"][1] + 0.1]), "does not contain the recomputed"),
])
def test_forged_holdout_files_are_refused(one_file, tmp_path, edit, says):
    s, file, _ = one_file
    report = approxpath.verify(forged(file, tmp_path / "forged.npz", edit))
    assert not report.ok and any(says in f for f in report.failures), report.failures


def test_the_masks_of_one_fold_split_the_data():
    train = np.array([[True, True, False]])
    assert split_failures(train, ~train) == []
    assert split_failures(train, np.array([[False, False, False]])) != []
    assert split_failures(np.array([[True, False, False]]), np.array([[False, True, True]])) == [
        "every fold must train on 2 points at least and hold out 1"]


def test_a_precomputed_holdout_choice_has_no_file(data, tmp_path):
    """A precomputed D's hold-out rows hold no kernel among the held-out points: no file, and why."""
    X, y = data
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    problem = approxpath.get_problem("kernel_svm")(D[:_N, :_N], y[:_N], c=1.0, kernel="precomputed")
    with pytest.warns(RangeWarning):
        s = approxpath.select(problem, X_val=D[_N:, :_N], y_val=y[_N:], eps=0.1, relative=True, tol=0.2,
                              strict=False, interval=(0.5, 4.0))
    with pytest.raises(InputError, match="no certificate file: a precomputed D's hold-out rows"):
        s.save(tmp_path / "D.npz")
    assert not (tmp_path / "D.npz").exists()


def test_holdout_targets_in_another_coding_are_refused_before_the_search(data):
    """A classifier trained on 0/1 labels (mapped to -1, +1) given 0/1 held-out targets: the loss would
    compare its decisions with 0; and the 0-1 error of a regression's real training targets: refused up
    front, as a k-fold choice is (its file did not verify)."""
    X, y = data
    svm = approxpath.get_problem("kernel_svm")
    with pytest.warns(UserWarning, match="labels 0.0 -> -1"):
        problem = svm(X[:_N], (y[:_N] > 0).astype(float), c=1.0)
    for loss in ("mae", "error"):
        with pytest.raises(InputError, match=r"y_val holds 0: give it as the problem's targets, -1 and \+1 \(its "
                                             r"classes 0.0 -> -1, 1.0 -> \+1\)"):
            approxpath.select(problem, loss, X_val=X[_N:], y_val=(y[_N:] > 0).astype(float), interval=(0.5, 4.0))
    Xs, ys = make_sinc(n=40, seed=0)
    klasso = approxpath.get_problem("klasso")(Xs[:30], ys[:30], lam=0.1)
    with pytest.raises(InputError, match="criterion 'error' is the 0-1 loss of classes"):
        approxpath.select(klasso, "error", X_val=Xs[30:], y_val=np.where(ys[30:] > 0, 1.0, -1.0), interval=(0.5, 4.0))


def _cli(*argv):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "approxpath", *map(str, argv)], capture_output=True, text=True)


def test_the_command_line_chooses_on_a_holdout_file_and_writes_its_certificate(data, tmp_path):
    """``approxpath select --val-data FILE``: the hold-out set read and scaled like ``--data``, its labels
    mapped as ``--data``'s (0/1 here); the file carries the data and verifies without ``--data``, over one
    parameter and over both."""
    X, y = data
    labels = (y > 0).astype(int)
    for name, rows in (("train.csv", slice(0, _N)), ("val.csv", slice(_N, None))):
        np.savetxt(tmp_path / name, np.column_stack([X[rows], labels[rows]]), delimiter=",")
    common = ["--data", tmp_path / "train.csv", "--val-data", tmp_path / "val.csv", "--preprocess", "global-minmax",
              "--range", "0.5", "4", "--no-progress"]
    for extra, out in ((["--c", "1", "--tol", "0.2"], "one.npz"),
                       (["--over", "c,bandwidth", "--weights", "0.5", "4", "--eps", "0.1", "--relative",
                         "--tol", "0.4"], "both.npz")):
        done = _cli("select", "kernel_svm", *common, *extra, "--out", tmp_path / out)
        assert done.returncode in (0, 1) and f"(check it: approxpath verify {tmp_path / out})" in done.stdout, (
            done.stdout + done.stderr)
        checked = _cli("verify", tmp_path / out)
        assert checked.returncode == 0 and "hold-out error of the exact optima" in checked.stdout, checked.stdout


def test_holdout_files_that_cannot_serve_are_refused_in_one_line(data, tmp_path):
    X, y = data
    np.savetxt(tmp_path / "train.csv", np.column_stack([X[:_N], y[:_N]]), delimiter=",")
    np.savetxt(tmp_path / "val.csv", np.column_stack([X[_N:], np.where(y[_N:] > 0, 2.0, -1.0)]), delimiter=",")
    both = _cli("select", "kernel_svm", "--data", tmp_path / "train.csv", "--val-data", tmp_path / "val.csv",
                "--cv", "3")
    assert both.returncode == 2 and "--val-data is a hold-out set in place of --cv K's folds" in both.stderr
    alien = _cli("select", "kernel_svm", "--data", tmp_path / "train.csv", "--val-data", tmp_path / "val.csv")
    assert alien.returncode == 2 and "--val-data has the label(s) 2.0, which --data has not" in alien.stderr, (
        alien.stderr)


def test_holdout_flags_are_named_in_the_command_line_s_words(tmp_path):
    """A whole-data criterion with --val-data says to drop --val-data (it said "drop --cv"); a validation
    CSV of other columns names the training file's (it said "not the 2 asked for")."""
    X, y = make_sinc(n=30, seed=0)
    np.savetxt(tmp_path / "train.csv", np.column_stack([X, y]), delimiter=",")
    np.savetxt(tmp_path / "val.csv", np.column_stack([X, X, y]), delimiter=",")
    np.savetxt(tmp_path / "same.csv", np.column_stack([X, y]), delimiter=",")
    closed = _cli("select", "kernel_ridge", "--data", tmp_path / "train.csv", "--val-data", tmp_path / "same.csv",
                  "--criterion", "loocv")
    assert closed.returncode == 2 and "criterion of the whole data: drop --cv or --val-data" in closed.stderr
    columns = _cli("select", "kernel_ridge", "--data", tmp_path / "train.csv", "--val-data", tmp_path / "val.csv")
    said = f"not the 1 of the training file {str(tmp_path / 'train.csv')!r}"
    assert columns.returncode == 2 and "has 2 feature column(s)" in columns.stderr and said in columns.stderr, (
        columns.stderr)
