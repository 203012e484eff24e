"""The scikit-learn estimators: scikit-learn's own conformance checks, and model selection along
the certified path against independent references."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.metrics import accuracy_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import approxpath
from approxpath.data import make_classification
from approxpath.sklearn import KernelPathSVC

ESTIMATORS = [KernelPathSVC()]
#: Checks that cannot apply, with the reason (none: every check of scikit-learn passes).
EXPECTED_FAILED_CHECKS = {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(type(est).__name__, {}))
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def two_class():
    X, y = make_classification(n=90, d=2, seed=3)
    return X, np.where(y > 0, "yes", "no")  # string labels: classes_ are mapped, not assumed +-1


@pytest.fixture(scope="module")
def svc(two_class):
    X, y = two_class
    return KernelPathSVC(C=1.0, random_state=0).fit(X, y)


def test_svc_selects_the_best_piece_and_reports_its_certified_gap(svc, two_class):
    path, curve = svc.path_, svc.validation_curve_
    assert path.certified and svc.eps_ == pytest.approx(0.01 * 1.0 * path.problem.n)
    assert list(svc.classes_) == ["no", "yes"]
    # one evaluation per piece, at its middle; the best is the smallest validation error
    assert curve.t.size == len(path.pieces)
    assert all(p.lo <= t <= p.hi for p, t in zip(path.pieces, curve.t))
    assert svc.best_loss_ == curve.loss.min() and svc.best_t_ == curve.t[np.argmin(curve.loss)]
    assert svc.best_gap_bound_ == path.gap_bound(svc.best_t_) <= svc.eps_
    # the validation error is that of predict(X_val, t) (sklearn's accuracy as the reference)
    X, y = two_class
    from sklearn.model_selection import train_test_split

    _, X_val, _, y_val = train_test_split(X, y, test_size=23, random_state=0, stratify=y)
    for k in (0, curve.t.size // 2, curve.best_index):
        assert curve.loss[k] == pytest.approx(1 - accuracy_score(y_val, svc.predict(X_val, t=curve.t[k])))


def test_svc_model_is_eps_optimal_against_cvxpy(svc):
    """The model used at best_t_ is the path's point, within best_gap_bound_ of an independent
    CVXPY optimum of the declared primal."""
    problem, t = svc.path_.problem, svc.best_t_
    decl = problem.cvxpy_primal(t)
    decl.problem.solve(solver="CLARABEL")
    sub = problem.primal_objective(svc.path_.primal(t), t) - decl.problem.value
    assert -1e-6 <= sub <= svc.best_gap_bound_ + 1e-6


def test_svc_decision_function_is_the_kernel_expansion(svc, two_class):
    X, _ = two_class
    t = float(np.sqrt(svc.t_range_[0] * svc.t_range_[1]))
    point = svc.path_.primal(t)
    Xtr = svc.path_.problem.X
    K = np.exp(-t * ((X[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(svc.decision_function(X, t=t), K @ point.w + point.b, rtol=1e-12, atol=1e-12)
    assert set(svc.predict(X)) <= {"no", "yes"}


def test_grid_selection_and_explicit_validation_data(two_class):
    X, y = two_class
    clf = KernelPathSVC(selection="grid", n_grid=25, t_range=(0.5, 8.0)).fit(X[:60], y[:60], X_val=X[60:], y_val=y[60:])
    assert clf.path_.problem.n == 60  # the path is fitted on all of X when X_val is given
    assert clf.validation_curve_.t.size == 25
    np.testing.assert_allclose(clf.validation_curve_.t, np.geomspace(0.5, 8.0, 25), rtol=1e-12)
    assert clf.best_loss_ == pytest.approx(1 - clf.score(X[60:], y[60:]))


@pytest.mark.parametrize("kwargs,fit_kw,match", [
    (dict(validation_fraction=0.0), {}, "no validation data"),
    (dict(eps=-1.0), {}, "eps must be"),
    (dict(t_range=(2.0, 1.0)), {}, "t_range must satisfy"),
    (dict(), dict(X_val=np.zeros((2, 2))), "without y_val"),
])
def test_svc_bad_input(two_class, kwargs, fit_kw, match):
    X, y = two_class
    with pytest.raises(ValueError, match=match):
        KernelPathSVC(**kwargs).fit(X, y, **fit_kw)


def test_svc_rejects_multiclass_and_t_outside_the_path(svc, two_class):
    X, _ = two_class
    with pytest.raises(ValueError, match="Only binary classification"):
        KernelPathSVC().fit(X, np.arange(X.shape[0]) % 3)
    with pytest.raises(ValueError, match="t must be a number in the path's interval"):
        svc.predict(X, t=svc.t_range_[1] * 2)


def test_certificate_of_the_estimator_verifies(svc, tmp_path):
    file = svc.path_.save(tmp_path / "cert.npz")
    assert approxpath.verify(file, svc.path_.problem.X, svc.path_.problem.y).ok
