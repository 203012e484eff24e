"""Opt-in (``pytest -m slow``): certified 5-fold cross-validation of the SVM on ionosphere with
the paper's settings (C = 0.1, t in [2^-10, 2^10], global min-max), through the estimator and
the CLI; scikit-learn's SVC (libSVM, the same folds) is the independent reference."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
_common = pytest.importorskip("_common")

pytestmark = pytest.mark.slow

TOL = 0.02


@pytest.fixture(scope="module")
def ionosphere():
    if not (_common.LIBSVM_DIR / "ionosphere_scale").is_file():
        pytest.skip("the LIBSVM files are not available")
    return _common.load("ionosphere_scale")


def _libsvm_cv_error(X, y, t):
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    wrong = 0
    for tr, va in StratifiedKFold(5).split(X, y):
        clf = SVC(C=_common.C, gamma=t, tol=1e-8).fit(X[tr], y[tr])
        wrong += int(np.sum(np.where(clf.decision_function(X[va]) > 0, 1.0, -1.0) != y[va]))
    return wrong / len(y)


def test_kernel_path_svc_cv5_on_ionosphere(ionosphere):
    from approxpath.sklearn import KernelPathSVC

    X, y = ionosphere
    clf = KernelPathSVC(C=_common.C, t_range=_common.INTERVAL, cv=5, cv_tol=TOL).fit(X, y)
    s = clf.selection_
    assert s.kind == "certified" and s.reached and s.delta <= TOL
    labels = np.where(y == clf.classes_[1], 1.0, -1.0)
    assert s.value[0] <= _libsvm_cv_error(X, labels, s.t) <= s.value[1]
    grid = np.geomspace(*_common.INTERVAL, 60)
    assert min(_libsvm_cv_error(X, labels, t) for t in grid) >= s.value[1] - s.delta - 1e-12


def test_cli_select_on_ionosphere(ionosphere, capsys):
    from approxpath.cli import main

    rc = main(["select", "kernel_svm", "--data", str(_common.LIBSVM_DIR / "ionosphere_scale"), "--preprocess",
               "global-minmax", "--c", "0.1", "--cv", "5", "--range", "2^-10", "2^10", "--tol", str(TOL), "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["reached"] and out["delta"] <= TOL and out["folds"] == 5
