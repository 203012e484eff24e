"""``approxpath figure``'s input handling: bad input is one line on standard error and exit
status 2 before any path runs, and a certificate the command writes verifies as written."""

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_classification, make_sinc

# The kernel_svm runs here: a short bandwidth range and a coarse eps (a few exact solves).
_SVM_RUN = ["--range", "1", "4", "--eps", "0.5", "--no-progress"]


def _csv(path, X, y):
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return str(path)


@pytest.fixture
def cls_csv(tmp_path):
    """40 points of two classes labelled -1 and +1."""
    return _csv(tmp_path / "cls.csv", *make_classification(n=40, d=2, seed=0))


@pytest.fixture
def sinc_csv(tmp_path):
    return _csv(tmp_path / "sinc.csv", *make_sinc(n=40, seed=0))


@pytest.fixture
def no_run(monkeypatch):
    """Any path run is a failure: the input is refused before it."""
    import approxpath.driver

    def run(*args, **kwargs):
        raise AssertionError("a path was computed")

    monkeypatch.setattr(approxpath.driver, "approximate_path", run)


def _refused(capsys, argv, *words):
    """``argv`` exits with status 2 and one line on standard error holding ``words``."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize("labels", ["three", "real"])
def test_validation_labels_that_are_not_the_training_classes_are_refused(tmp_path, cls_csv, capsys, no_run,
                                                                         labels):
    """Labels 0, 1, 2 (or real targets) in --val-data gave an error rate, status 0: every label
    other than +1 counted as -1."""
    X, _ = make_classification(n=30, d=2, seed=1)
    y = np.arange(30) % 3 if labels == "three" else np.random.default_rng(1).normal(size=30)
    val = _csv(tmp_path / "val.csv", X, y)
    found = "found 3 value(s) (0, 1, 2)" if labels == "three" else "found 30 value(s)"
    _refused(capsys, ["figure", "validation", "kernel_svm", "--data", cls_csv, "--val-data", val, *_SVM_RUN],
             "training classes (-1, 1)", found)


def test_validation_labels_are_mapped_as_the_training_labels(tmp_path, capsys):
    """Training and validation labels {0, 1}: both mapped 0 -> -1 and 1 -> +1 (a run, status 0)."""
    X, y = make_classification(n=50, d=2, seed=0)
    y01 = (y > 0).astype(float)
    train, val = _csv(tmp_path / "t.csv", X[:35], y01[:35]), _csv(tmp_path / "v.csv", X[35:], y01[35:])
    for criterion in ("error", "mse"):  # (mse too: the predictions are against +-1)
        capsys.readouterr()
        assert main(["figure", "validation", "kernel_svm", "--data", train, "--val-data", val, "--criterion",
                     criterion, *_SVM_RUN]) == 0
        assert f"{criterion} = " in capsys.readouterr().out
    # ... and validation labels -1, +1 are not the training classes 0, 1
    pm = _csv(tmp_path / "pm.csv", X[35:], y[35:])
    _refused(capsys, ["figure", "validation", "kernel_svm", "--data", train, "--val-data", pm, *_SVM_RUN],
             "training classes (0, 1)")


def test_a_certificate_of_a_split_verifies_as_written(tmp_path, cls_csv, capsys):
    """``--out`` of a split recorded the whole file (n = 40) for a path over its training part
    (n = 30): ``verify`` failed on it.  The training part is carried in the file now."""
    cert = tmp_path / "v.npz"
    assert main(["figure", "validation", "kernel_svm", "--data", cls_csv, "--out", str(cert), *_SVM_RUN]) == 0
    capsys.readouterr()
    assert main(["verify", str(cert), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK") and "n = 30" in out and "carried in the certificate" in out


def test_a_certificate_of_the_built_in_set_verifies_as_written(tmp_path, capsys, monkeypatch):
    """Without --data the certificate recorded "synthetic two-class (seeded)" as its data file:
    ``verify`` said it does not exist."""
    import approxpath.cli.figures as figures

    small = 40  # the built-in set's 120 (and 400) points, fewer here: the file is what is tested
    monkeypatch.setattr(figures, "make_classification", lambda n, d, seed: make_classification(n=small, d=d, seed=seed))
    cert = tmp_path / "w.npz"
    assert main(["figure", "validation", "kernel_svm", "--out", str(cert), *_SVM_RUN]) == 0
    capsys.readouterr()
    assert main(["verify", str(cert), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("OK")


@pytest.mark.parametrize("argv,flag", [
    (["--data", "{data}", "kernel_svm", "--eps", "1"], "--data"),
    (["--data", "{data}", "--eps", "1", "kernel_svm"], "--eps"),
])
def test_solves_a_problem_name_after_a_flag_of_several_values(cls_csv, capsys, no_run, argv, flag):
    """``figure solves --data F kernel_svm`` said "data file 'kernel_svm' does not exist"."""
    argv = ["figure", "solves", *[a.format(data=cls_csv) for a in argv], "--range", "1", "4"]
    _refused(capsys, argv, f"argument {flag}: 'kernel_svm' is a problem name", "put the problem name before --data")


def test_solves_usage_shows_the_problem_first(capsys):
    assert main(["figure", "solves", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: approxpath figure solves [-h] [problem] --data FILE")


@pytest.mark.parametrize("rng", [("2", "1e-2"), ("0", "1")])
def test_exact_path_range_is_checked_as_exact_checks_it(sinc_csv, capsys, monkeypatch, rng):
    """``--range 2 1e-2`` printed "[np.float64(2.0), 0.01] does not meet ..."; ``--range 0 1``
    ran 2000 events to status 1 (``approxpath exact`` refuses both)."""
    from approxpath.exact import _lambda

    def no_path(*args, **kwargs):
        raise AssertionError("an exact path was computed")

    monkeypatch.setattr(_lambda, "lambda_path", no_path)
    err = _refused(capsys, ["figure", "exact-path", "--data", sinc_csv, "--parameter", "lam", "--bandwidth", "1",
                            "--range", *rng], "--range must satisfy 0 < lo < hi < inf")
    assert "np.float64" not in err


def test_validation_n_grid_is_checked_and_refused_without_a_grid(cls_csv, capsys, no_run):
    """A bad --n-grid was refused whatever --selection; one given without --selection grid was
    ignored (86 pieces evaluated): it is refused now."""
    _refused(capsys, ["figure", "validation", "kernel_svm", "--data", cls_csv, "--selection", "grid",
                      "--n-grid", "0", *_SVM_RUN], "--n-grid must be an integer >= 2; got 0")
    _refused(capsys, ["figure", "validation", "kernel_svm", "--data", cls_csv, "--selection", "pieces",
                      "--n-grid", "20", *_SVM_RUN], "--n-grid sets the grid of --selection grid")


def test_a_validation_fraction_that_leaves_no_training_part(cls_csv, capsys, no_run):
    """0.99 of 40 samples said "need at least 2 samples, got 0", naming no option."""
    _refused(capsys, ["figure", "validation", "kernel_svm", "--data", cls_csv, "--validation-fraction", "0.99",
                      *_SVM_RUN], "--validation-fraction 0.99 leaves 0 of the 40 samples", "at least 2")


@pytest.mark.parametrize("argv", [
    ["figure", "cond", "--n", "5", "--d", "2", "--points", "3"],
    ["figure", "validation", "kernel_svm", "--data", "{data}", *_SVM_RUN],
    ["figure", "exact-path", "--max-events", "1"],
])
def test_a_negative_seed_is_named(cls_csv, capsys, no_run, argv):
    """``--seed -1`` said "expected non-negative integer" (numpy's words, no option named)."""
    _refused(capsys, [a.format(data=cls_csv) for a in argv] + ["--seed", "-1"],
             "--seed must be a non-negative integer; got -1")
