"""The scikit-learn estimators: scikit-learn's own conformance checks, and model selection along
the certified path against independent references."""

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.metrics import accuracy_score
from sklearn.utils.estimator_checks import estimator_checks_generator

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.sklearn import KernelPathRegressor, KernelPathRidge, KernelPathSVC

#: Checks that cannot apply, with the reason: none, every check of scikit-learn passes.
EXPECTED_FAILED_CHECKS = {}
def _estimator_checks():
    """Every check of scikit-learn on the four estimators with their defaults (and the ridge's
    validation split: its other route); robust_l1's
    (its LP solves are the slowest: ~2 min in all) run with ``-m slow``.  The two
    KernelPathRegressors share every line of estimator code, only their problem differs."""
    cases = []
    for est in (KernelPathSVC(), KernelPathRegressor(loss="klasso"), KernelPathRegressor(loss="robust_l1"),
                KernelPathRidge(), KernelPathRidge(criterion="mse")):
        slow = getattr(est, "loss", None) == "robust_l1"
        for estimator, check in estimator_checks_generator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS,
                                                           mark="xfail"):
            variant = "".join(f",{k}={v}" for k, v in sorted(check.keywords.items()))
            cases.append(pytest.param(estimator, check, id=f"{est!r}-{check.func.__name__}{variant}",
                                      marks=[pytest.mark.slow] if slow else []))
    return cases


@pytest.mark.parametrize("estimator,check", _estimator_checks())
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
    (dict(eps=None), {}, "eps must be"),
    (dict(t_range=(2.0, 1.0)), {}, "t_range must satisfy"),
    (dict(t_range="ab"), {}, "t_range must be a pair"),
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


@pytest.mark.parametrize("loss,criterion", [("klasso", "mse"), ("robust_l1", "mae")])
def test_regressor_selection_prediction_and_optimality(loss, criterion):
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    X, y = make_sinc(n=48, noise=0.1, outliers=0.1, seed=2)
    X_val, y_val = make_sinc(n=60, noise=0.1, seed=3)
    reg = KernelPathRegressor(loss=loss, lam=0.1, eps=0.05, t_range=(0.5, 8.0), criterion=criterion)
    reg.fit(X, y, X_val=X_val, y_val=y_val)
    path, curve = reg.path_, reg.validation_curve_
    assert path.certified and reg.best_gap_bound_ <= reg.eps_
    metric = {"mse": mean_squared_error, "mae": mean_absolute_error}[criterion]
    for k in (0, curve.best_index, curve.t.size - 1):
        assert curve.loss[k] == pytest.approx(metric(y_val, reg.predict(X_val, t=curve.t[k])))
    assert reg.best_loss_ == curve.loss.min()
    # predictions are the kernel expansion of the path's point (klasso: plus its intercept)
    t = reg.best_t_
    point = path.primal(t)
    K = np.exp(-t * (X_val - X.T) ** 2)
    np.testing.assert_allclose(reg.predict(X_val), K @ point.beta + getattr(point, "beta0", 0.0), rtol=1e-10, atol=1e-12)
    # the selected model is within its certified gap of an independent CVXPY optimum
    decl = path.problem.cvxpy_primal(t)
    decl.problem.solve(solver="CLARABEL")
    sub = path.problem.primal_objective(path.primal(t), t) - decl.problem.value
    assert -1e-6 <= sub <= reg.best_gap_bound_ + 1e-6


def test_regressor_rejects_unknown_loss_and_criterion():
    X, y = make_sinc(n=20, seed=0)
    with pytest.raises(ValueError, match="unknown loss 'huber'"):
        KernelPathRegressor(loss="huber").fit(X, y)
    with pytest.raises(ValueError, match="unknown criterion"):
        KernelPathRegressor(criterion="r2").fit(X, y)


@pytest.mark.filterwarnings("ignore:.*may be matched")
def test_a_refit_leaves_nothing_of_the_earlier_fit():
    """Refitted without cv, the classifier kept the earlier fit's selection_ (and its deferred
    path): every fit removes what an earlier one left."""
    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    clf = KernelPathSVC(t_range=(0.5, 2.0), cv=2, cv_tol=0.5).fit(X, y)
    assert hasattr(clf, "selection_") and clf.validation_curve_ is None
    clf.set_params(cv=None, random_state=0).fit(X, y)
    assert not hasattr(clf, "selection_") and clf.validation_curve_ is not None
    assert clf.path_.problem.n < 24  # the path of this fit (on the part not split off), not the deferred one


@pytest.mark.filterwarnings("ignore:.*may be matched")
def test_numpy_integers_are_numbers():
    """np.int64(1) was refused as lam and eps ("must be a positive number"), so a grid search over
    np.array([1, 2]) failed every fit (eps, a fraction below 1, is now a numpy float here)."""
    from sklearn.model_selection import GridSearchCV

    X, y = make_sinc(n=24, seed=0)
    reg = KernelPathRegressor(lam=np.int64(1), eps=np.float32(0.5), t_range=(0.5, 2.0), random_state=0).fit(X, y)
    assert reg.eps_ > 0
    search = GridSearchCV(KernelPathRidge(t_range=(0.5, 2.0)), {"lam": np.array([1, 2])}, cv=2).fit(X, y)
    assert search.best_params_["lam"] in (1, 2)
    Xc, yc = make_classification(n=24, d=2, seed=0)
    assert KernelPathSVC(C=np.int64(1), eps=np.float32(0.5), t_range=(0.5, 2.0), random_state=0).fit(Xc, yc).best_C_ == 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(validation_fraction="a"), r"validation_fraction must be a number in \[0, 1\); got 'a'"),
    (dict(cv_tol=-5), "cv_tol must be a positive finite number; got -5"),  # without cv: checked all the same
    (dict(C_range="junk"), "C_range must be a pair"),  # with a given C: checked all the same
    (dict(max_solves=0), "max_solves must be a positive integer"),
    (dict(n_grid=1), "n_grid must be an integer >= 2"),  # selection="pieces": checked all the same
    (dict(selection="grids"), "unknown selection 'grids'"),
    (dict(eps=True), "eps must be a number; got True"),
    (dict(eps=100), "eps is a fraction of the zero model's objective and must be below 1"),  # (certified 3080 > 60)
    (dict(C="a"), "C must be a number"),
    (dict(progress="yes"), "progress must be True or False"),
    (dict(random_state="a"), r"random_state must be None, an int in \[0, 2\*\*32\) or a numpy RandomState"),
    (dict(random_state=-5, X_val_given=True), "random_state must be None"),  # (unused: checked all the same)
])
def test_every_parameter_is_checked_in_one_line(two_class, kwargs, match):
    X, y = two_class
    given = (X, y) if kwargs.pop("X_val_given", False) else ()
    with pytest.raises(approxpath.InputError, match=match):
        KernelPathSVC(**kwargs).fit(X, y, *given)


@pytest.mark.filterwarnings("ignore:.*may be matched")
def test_predict_at_t_takes_one_number(two_class):
    """t="a" raised TypeError ('<=' not supported) and, after a cv fit, an array "the truth value
    of an array is ambiguous"."""
    X, y = two_class
    clf = KernelPathSVC(t_range=(0.5, 2.0), cv=2, cv_tol=0.5).fit(X[:24], y[:24])
    for t in ("a", np.array([1.0, 2.0]), [1.0]):
        with pytest.raises(approxpath.InputError, match="t must be one number"):
            clf.predict(X, t=t)
    assert clf.predict(X, t=np.float32(1.0)).shape == (X.shape[0],)


def test_regressor_n_jobs_is_checked_and_max_solves_is_a_parameter():
    X, y = make_sinc(n=20, seed=0)
    assert KernelPathRegressor().get_params()["max_solves"] is None
    with pytest.raises(approxpath.InputError, match="n_jobs"):
        KernelPathRegressor(n_jobs=0).fit(X, y)
    with pytest.raises(approxpath.InputError, match="unknown loss 'huber'"):
        KernelPathRegressor(loss="huber", lam="a").fit(X, y)


def test_an_eps_too_small_is_told_in_the_estimators_units():
    # y x 1e12 at lam = 0.1: the driver's advice "use eps >= 1.3e+24" was in the problem's units
    # (a gap), while the estimator's eps is a fraction of the zero model's objective
    X, y = make_sinc(n=60)
    est = KernelPathRegressor(lam=0.1, eps=1e-9)
    with pytest.raises(approxpath.EpsilonTooSmallError, match="KernelPathRegressor: eps = 1e-09") as info:
        est.fit(X, 1e12 * y)
    exc = info.value
    needed = float(str(exc).rsplit("use eps >= ", 1)[1])
    null = float(str(exc).split("zero model's objective ", 1)[1].split(",")[0])  # (of the training part)
    assert needed == pytest.approx(exc.__cause__.needed / null, rel=1e-2) and 1e-9 < needed < 1.0


@pytest.mark.parametrize("limit", ["max_solves", "max_pieces"])
def test_a_path_past_its_budget_is_told_in_the_estimators_parameters(limit):
    """Without cv the estimator's max_solves is unused (a selection's), yet a path past the
    driver's own budget said "more than max_solves=10000 ...: raise max_solves, ... relative=True"
    (neither is the estimator's); it now names eps and t_range.  The driver's default budget is
    lowered here so that the run is short."""
    from approxpath.driver import approximate_path

    X, y = make_classification(n=40, seed=0)
    est = KernelPathSVC(eps=1e-6, max_solves=50)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(approximate_path.__wrapped__.__kwdefaults__, limit, 3)
        with pytest.raises(approxpath.BudgetExceededError) as info:
            est.fit(X, y)
    text, what = str(info.value), "exact solves" if limit == "max_solves" else "pieces"
    assert text.startswith("KernelPathSVC: the path over t_range = [") and "at eps = 1e-06" in text
    assert f"needs more than the 3 {what} a path may take: use a larger eps or a narrower t_range" in text
    assert "max_solves" not in text and "relative" not in text
    assert info.value.limit == info.value.__cause__.limit == limit and info.value.budget == 3


def test_sorted_points_are_told_to_shuffle_with_a_splitter():
    """The warning of unshuffled folds of sorted points advised shuffle=SEED or --shuffle SEED,
    neither an estimator's: an estimator names a shuffled splitter as cv; the folds it warns of
    are those that a shuffled KFold does not warn of."""
    from sklearn.model_selection import KFold

    from approxpath.selection import SortedFoldsWarning

    X, y = make_sinc(n=60, seed=0)
    with pytest.warns(SortedFoldsWarning) as caught:
        KernelPathRidge(cv=5).fit(X, y)
    said = [w for w in caught if isinstance(w.message, SortedFoldsWarning)]
    assert len(said) == 1 and said[0].filename == __file__
    text = str(said[0].message)
    assert "sorted by feature 1" in text and "cv, e.g. KFold(5, shuffle=True, random_state=0)" in text
    assert "shuffle=SEED" not in text and "--shuffle" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", SortedFoldsWarning)
        KernelPathRidge(cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)


@pytest.mark.parametrize("est", [KernelPathSVC(cv=3, C_range=(0.1, 10.0)),
                                 KernelPathRidge(criterion="lml", lam_range=(1e-4, 1.0))], ids=["svc", "ridge"])
def test_a_weight_range_with_a_fixed_weight_is_refused(est):
    # it was silently unused: best_C_ = 1.0, best_lam_ = 0.1, whatever the range said
    X, y = make_classification(n=40, seed=2)
    weight = "C" if isinstance(est, KernelPathSVC) else "lam"
    with pytest.raises(approxpath.InputError, match=f"^{weight}_range is the range of {weight}=None"):
        est.fit(X, y)


@pytest.mark.parametrize("t_range, side", [((50.0, 100.0), "lower"), ((0.1, 1.0), "upper")])
def test_a_choice_at_an_end_of_t_range_is_warned_about_without_cv(t_range, side):
    """Without cv the choice at the first or last point evaluated was kept silently (t in
    [50, 100]: the middle of the first piece, the validation error still falling towards 50)."""
    X, y = make_classification(n=60, d=2, seed=0)
    end = t_range[0] if side == "lower" else t_range[1]
    with pytest.warns(approxpath.selection.RangeWarning,
                      match=rf"KernelPathSVC: the chosen t = .* may be matched at the {side} end of t_range, {end:g}: "
                            "the criterion may be better beyond it; widen t_range") as caught:
        clf = KernelPathSVC(t_range=t_range, random_state=0).fit(X, y)
    assert caught[0].filename == __file__  # at the line that called fit
    curve = clf.validation_curve_
    assert curve.best_index == (0 if side == "lower" else curve.t.size - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a choice inside the range: no warning
        inside = KernelPathSVC(t_range=(0.05, 20.0), random_state=0).fit(X, y)
    assert 0 < inside.validation_curve_.best_index < inside.validation_curve_.t.size - 1


def test_a_loss_the_same_everywhere_is_warned_about_as_a_tie_not_a_slope():
    """Targets every model fits alike: the validation loss is 0 at every t, and the warning said "the
    criterion may be better beyond them; widen t_range past them", which cannot help; the same larger
    loss everywhere over a narrow range still says widen (it may fall beyond)."""
    X = np.random.default_rng(0).uniform(size=(10, 1))
    with pytest.warns(approxpath.selection.RangeWarning) as caught:
        model = KernelPathRegressor(random_state=0).fit(X, np.ones(10))
    assert np.ptp(model.validation_curve_.loss) == 0.0
    said = [w.message for w in caught if isinstance(w.message, approxpath.selection.RangeWarning)]
    assert len(said) == 1 and said[0].flat and str(said[0]).startswith(
        "KernelPathRegressor: the criterion is 0, the least it can be, at every value evaluated over t_range, so "
        "the chosen t = ")
    assert "widening t_range would only move the tie" in str(said[0]) and "better beyond" not in str(said[0])
    assert pickle.loads(pickle.dumps(said[0])).flat
    X, y = make_classification(n=40, seed=3)
    with pytest.warns(approxpath.selection.RangeWarning) as caught:
        model = KernelPathSVC(t_range=(200.0, 210.0), random_state=0).fit(X, y)
    said = [w.message for w in caught if isinstance(w.message, approxpath.selection.RangeWarning)]
    assert np.ptp(model.validation_curve_.loss) == 0.0 and model.best_loss_ == 0.5  # (flat, not at 0)
    assert not said[0].flat and "widen t_range past them" in str(said[0])


def test_validation_labels_not_seen_in_training_are_refused(two_class):
    X, y = two_class
    y_val = np.array(["yes", "maybe", "no", "never"])
    with pytest.raises(ValueError, match=r"^y_val contains labels not seen in y: \['maybe' 'never'\]$"):
        KernelPathSVC(C=1.0, t_range=(0.5, 2.0)).fit(X, y, X_val=X[:4], y_val=y_val)


def test_a_selection_short_of_cv_tol_names_cv_tol_not_select_s_words():
    """The warning said "delta = 0.15 > tol = 0.001 ... raise tol to 0.16 ..., or pass strict=False
    to keep this result": neither ``tol`` nor ``strict`` is a parameter of the estimator."""
    X, y = make_classification(n=60, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        KernelPathSVC(cv=3, max_solves=20, cv_tol=0.001).fit(X, y)
    short = [str(w.message) for w in caught if "delta = " in str(w.message)]
    assert len(short) == 1 and short[0].startswith("KernelPathSVC: delta = "), short
    assert [w.category for w in caught if "delta = " in str(w.message)] == [approxpath.selection.ShortfallWarning]
    assert "> cv_tol = 0.001" in short[0] and "raise cv_tol to " in short[0] and "strict" not in short[0], short


@pytest.mark.parametrize("cv", [None, 3])  # (leave-one-out's cells, and the folds': "certified" with delta NaN)
def test_a_t_range_of_extreme_ends_stops_in_one_line_without_overflow_warnings(cv):
    """``t_range=(1e-200, 1e200)``: OverflowError from the ratio of its ends (a traceback), then
    numpy's overflow warnings from bounds at t = 1e200; now the logs of the ends, and the bounds'
    overflow stops the search naming its cause, as a path's does."""
    from approxpath.driver.run import NonFiniteBound

    X, y = make_sinc(n=20, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(NonFiniteBound, match="kernel_ridge: the criterion's bounds on .* are NaN: the largest "
                                                 "squared distance between samples is"):
            KernelPathRidge(t_range=(1e-200, 1e200), max_solves=300, cv=cv).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


@pytest.mark.parametrize("y_val, match", [
    (["a"] * 10, "X_val and y_val must be numeric arrays"),
    (np.ones((10, 2)), r"validation data must be X_val \(m, 1\) and y_val \(m,\) with the same m >= 1; got \(10, 1\) "
                       r"and \(10, 2\)"),
    ([np.nan] + [0.0] * 9, "y_val contains NaN or inf"),
])
def test_regression_validation_targets_are_checked(y_val, match):
    """``fit(X, y, X_val, ["a"] * 10)``: numpy's "could not convert string to float" from inside
    (two columns and NaN: guards of the same one-line check, which they met before too)."""
    X, y = make_sinc(n=30, seed=0)
    with pytest.raises(ValueError, match=match):
        KernelPathRegressor().fit(X, y, X[:10], y_val)


def test_a_third_argument_is_said_to_be_x_val_not_sample_weights():
    """``fit(X, y, sample_weight)`` (scikit-learn's third argument elsewhere) bound the weights to
    ``X_val`` and said only that ``y_val`` was missing."""
    X, y = make_sinc(n=30, seed=0)
    with pytest.raises(ValueError, match=r"X_val was given without y_val: .* takes no sample weights: a third "
                                         r"argument is X_val"):
        KernelPathRegressor().fit(X, y, np.ones(30))


def test_a_column_of_validation_targets_is_flattened_as_y_is():
    """``y_val`` of shape (m, 1) was refused where ``y`` of shape (n, 1) is flattened with
    scikit-learn's DataConversionWarning; now both are, to the same fit."""
    from sklearn.exceptions import DataConversionWarning

    X, y = make_sinc(n=30, seed=0)
    flat = KernelPathRegressor(t_range=(0.5, 2.0)).fit(X, y, X_val=X[:10], y_val=y[:10])
    with pytest.warns(DataConversionWarning):
        column = KernelPathRegressor(t_range=(0.5, 2.0)).fit(X, y, X_val=X[:10], y_val=y[:10, None])
    assert column.best_t_ == flat.best_t_
    np.testing.assert_array_equal(column.predict(X), flat.predict(X))


def test_the_model_after_a_choice_by_cv_is_the_optimum_whose_error_was_enclosed():
    """The cross-validated error is certified for *the* exact optimum, the bias in the middle of the
    optimal ones (libSVM's); the model at best_t_ took an end of that interval: its decisions were
    0.22 off scikit-learn's SVC with the same C and gamma, its predictions 35 % different."""
    from sklearn.svm import SVC

    X, y = make_classification(n=60, d=2, seed=4)
    clf = KernelPathSVC(C=1.0, cv=3).fit(X, y)
    ref = SVC(C=1.0, gamma=clf.best_t_, tol=1e-10).fit(X, y)  # (its primal is approxpath's)
    X_new, _ = make_classification(n=500, d=2, seed=104)
    offset = clf.decision_function(X_new) - ref.decision_function(X_new)
    assert np.max(np.abs(offset)) < 1e-5 and clf.best_gap_bound_ < 1e-8
    assert np.array_equal(clf.predict(X_new), ref.predict(X_new))


def test_features_too_small_for_the_default_t_range_say_so():
    X, y = make_classification(n=30, d=2, seed=0)
    with pytest.raises(approxpath.InputError, match="features' variance .* too small for the default t_range"):
        KernelPathSVC().fit(X * 1e-160, y)


def test_a_fit_that_fails_leaves_no_fitted_estimator(two_class):
    """A fit that raises (at once, or a refit after a good fit) leaves nothing fitted: predict says
    NotFittedError, not a missing attribute."""
    from sklearn.exceptions import NotFittedError

    X, y = two_class
    c = KernelPathSVC(eps=1e-12, t_range=(0.5, 1.0))
    with pytest.raises(approxpath.EpsilonTooSmallError):
        c.fit(X, y)
    with pytest.raises(NotFittedError):
        c.predict(X)
    c = KernelPathSVC(t_range=(0.5, 2.0)).fit(X, y)
    with pytest.raises(ValueError):
        c.fit(X, y, X_val=X[:5], y_val=np.full(5, 7))  # (a class the training lacks)
    with pytest.raises(NotFittedError):
        c.predict(X)


def test_warnings_made_errors_do_not_replace_the_fit_s_error_nor_keep_its_fit(two_class):
    """Under ``warnings.simplefilter("error")`` a failing fit raises its own error (not a warning it
    said before failing), and a fit whose warning a filter makes an error is not kept."""
    from sklearn.exceptions import NotFittedError

    X, y = two_class
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(approxpath.EpsilonTooSmallError):
            KernelPathSVC(eps=1e-12, t_range=(0.5, 1.0)).fit(X, y[:, None])  # (a column y: a conversion warning)
        # (its choice at an end of the range: a RangeWarning; random_state: without one the validation part is
        # drawn anew each fit, and on some draws the choice was inside the range)
        c = KernelPathSVC(t_range=(0.2, 0.3), random_state=0)
        with pytest.raises(approxpath.selection.RangeWarning):
            c.fit(X, y)
    with pytest.raises(NotFittedError):
        c.predict(X)


def test_a_used_up_generator_as_cv_says_so():
    from sklearn.model_selection import KFold

    X, y = make_classification(n=40, d=2, seed=1)
    e = KernelPathSVC(cv=KFold(3, shuffle=True, random_state=0).split(X), t_range=(0.5, 2.0), cv_tol=0.5)
    e.fit(X, y)
    with pytest.raises(approxpath.InputError, match="generator, used up by its first use.*list\\(splitter.split"):
        e.fit(X, y)


def test_a_t_outside_the_range_is_refused_before_a_deferred_path_is_computed():
    X, y = make_classification(n=40, d=2, seed=1)
    e = KernelPathSVC(cv=3, t_range=(0.5, 2.0), cv_tol=0.5).fit(X, y)
    with pytest.raises(approxpath.InputError, match="path's interval"):
        e.predict(X, t=50.0)
    assert "_path" not in vars(e)  # (still deferred)


def test_an_untransformed_x_val_in_a_pipeline_is_named():
    """A Pipeline passes fit's X_val past its scaler: raw validation points far outside the scaled
    training points chose the range's end at chance error, silently; it is named now (and scaled
    validation points are not)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n=60, d=2, seed=0)
    Xv, yv = make_classification(n=60, d=2, seed=1)
    X, Xv = X * 100 + 500, Xv * 100 + 500
    pipe = make_pipeline(StandardScaler(), KernelPathSVC(t_range=(0.1, 10.0)))
    with pytest.warns(UserWarning, match="was X_val transformed as X was"):
        pipe.fit(X, y, kernelpathsvc__X_val=Xv, kernelpathsvc__y_val=yv)
    scaled = pipe[:-1].transform(Xv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y, kernelpathsvc__X_val=scaled, kernelpathsvc__y_val=yv)
    assert not [w for w in caught if "transformed as X was" in str(w.message)]


def test_a_choice_of_both_names_c_as_the_estimator_does():
    """C=None's choice at a side of the box was said as 'the choice (t = ..., c = ...)', the problem's name,
    in a warning that names the estimator's C_range."""
    X, y = make_classification(n=60, d=2, seed=3)
    with pytest.warns(approxpath.selection.RangeWarning, match=r"^KernelPathSVC: the choice \(t = [\d.]+, C = [\d.]+\) "
                      r"may be matched at the upper end of C_range, 1: .* widen C_range past it$"):
        KernelPathSVC(C=None, cv=3, eps=0.2, random_state=0, C_range=(0.5, 1.0), t_range=(0.5, 1.0),
                      cv_tol=0.2).fit(X, y)
