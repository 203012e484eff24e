"""KernelPathRidge: certified choices of the bandwidth (and lambda) against dense numpy criteria on
grids, its model against scikit-learn's KernelRidge, and its one-line refusals."""

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.kernel_ridge import KernelRidge

from approxpath.data import make_sinc
from approxpath.sklearn import KernelPathRidge
from ridge_helpers import dense_criteria

T_RANGE = (2.0**-3, 2.0**3)


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=40, noise=0.2, seed=5)


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the choice may lie at a side: warned, tested elsewhere
        return KernelPathRidge(t_range=T_RANGE, **kw).fit(X, y)


@pytest.mark.parametrize("criterion", ["loocv", "gcv", "lml"])
def test_bandwidth_choice_is_within_delta_of_a_dense_grid(sinc, criterion):
    X, y = sinc
    ridge = _fit(X, y, criterion=criterion, lam=0.05)
    s = ridge.selection_
    sign = 1.0 if s.sense == "min" else -1.0
    at_choice = dense_criteria(X, y, ridge.best_t_, 0.05)[criterion]
    lo, hi = s.value
    assert lo - 1e-9 * abs(lo) <= at_choice <= hi + 1e-9 * abs(hi)
    grid = [sign * dense_criteria(X, y, t, 0.05)[criterion] for t in np.geomspace(*T_RANGE, 41)]
    assert sign * at_choice <= min(grid) + s.delta + 1e-9
    assert s.delta <= s.tol and ridge.best_lam_ == 0.05
    assert ridge.best_loss_ == pytest.approx(sign * 0.5 * (lo + hi))


@pytest.mark.parametrize("criterion", ["loocv", "lml"])
def test_lam_none_chooses_both_within_delta_of_a_dense_box(sinc, criterion):
    X, y = sinc
    ridge = _fit(X, y, criterion=criterion, lam=None, lam_range=(1e-3, 1.0),
                 tol=0.002 if criterion == "loocv" else 0.5)
    s = ridge.selection_
    assert 1e-3 <= ridge.best_lam_ <= 1.0 and T_RANGE[0] <= ridge.best_t_ <= T_RANGE[1]
    sign = 1.0 if s.sense == "min" else -1.0
    at_choice = dense_criteria(X, y, ridge.best_t_, ridge.best_lam_)[criterion]
    assert s.value[0] - 1e-9 * abs(s.value[0]) <= at_choice <= s.value[1] + 1e-9 * abs(s.value[1])
    box = [sign * dense_criteria(X, y, t, lam)[criterion]
           for t in np.geomspace(*T_RANGE, 13) for lam in np.geomspace(1e-3, 1.0, 10)]
    assert sign * at_choice <= min(box) + s.delta + 1e-9
    # the model is one exact solve at the choice; path_ is at the chosen lambda, on every t
    assert ridge.path_.problem.options()["lam"] == ridge.best_lam_ and ridge.path_.certified


def test_model_is_scikit_learns_kernel_ridge_at_the_choice(sinc):
    X, y = sinc
    ridge = _fit(X, y, lam=None, lam_range=(1e-2, 1.0), tol=0.005)
    ref = KernelRidge(kernel="rbf", gamma=ridge.best_t_, alpha=ridge.best_lam_).fit(X, y)
    X_new = np.linspace(-3, 3, 17)[:, None]
    np.testing.assert_allclose(ridge.predict(X_new), ref.predict(X_new), rtol=1e-6, atol=1e-8)
    assert ridge.best_gap_bound_ <= 1e-6 * float(y @ y)


def test_validation_losses_at_a_given_lam(sinc):
    X, y = sinc
    split = _fit(X, y, criterion="mse", random_state=0)
    assert split.validation_curve_ is None and split.selection_.paths == () and split.selection_.reached
    assert split.path_.problem.n == 30  # fitted on the part not split off (ceil(0.25 * 40) held out)
    from sklearn.model_selection import train_test_split

    X_tr, _, y_tr, _ = train_test_split(X, y, test_size=10, random_state=0)
    ref = KernelRidge(kernel="rbf", gamma=split.best_t_, alpha=0.1).fit(X_tr, y_tr)
    np.testing.assert_allclose(split.predict(X[:7]), ref.predict(X[:7]), rtol=1e-6, atol=1e-8)
    folds = _fit(X, y, criterion="mae", cv=3)
    assert folds.selection_.criterion == "mae" and folds.selection_.delta <= folds.selection_.tol


@pytest.mark.parametrize("cv", [3, None])
def test_lam_none_by_a_validation_loss_chooses_both(sinc, cv):
    """k-fold CV (or a validation part) over the box: the choice's exact loss (numpy solves per
    fold) lies in its enclosure, and the model is fitted at the choice on the data it says."""
    from sklearn.model_selection import KFold, train_test_split

    X, y = sinc
    ridge = _fit(X, y, criterion="mse", lam=None, lam_range=(1e-2, 1.0), cv=cv, tol=0.01, random_state=0)
    s = ridge.selection_
    assert s.folds == (3 if cv else 1) and not s.surfaces and s.reached
    parts = list(KFold(3).split(X)) if cv else [train_test_split(np.arange(40), test_size=10, random_state=0)]
    loss = 0.0
    for train, test in parts:
        ref = KernelRidge(kernel="rbf", gamma=ridge.best_t_, alpha=ridge.best_lam_).fit(X[train], y[train])
        loss += float(np.sum((ref.predict(X[test]) - y[test]) ** 2))
    loss /= sum(len(test) for _, test in parts)
    assert s.value[0] - 1e-6 <= loss <= s.value[1] + 1e-6
    assert ridge.path_.problem.n == (40 if cv else 30) and ridge.path_.problem.options()["lam"] == ridge.best_lam_


@pytest.mark.parametrize("kw, fit_kw, message", [
    (dict(criterion="loocv", cv=3), {}, "needs no validation data"),
    (dict(criterion="lml"), "val", "needs no validation data"),
    (dict(lam=None), {}, "lam_range"),
    (dict(lam=None, lam_range=(1, 0.1)), {}, "0 < lo < hi"),
    (dict(lam=-1.0), {}, "lam must be a positive finite number"),
    (dict(lam_range="junk"), {}, "lam_range must be a pair"),  # with a given lam: checked all the same
    (dict(tol=-1.0, criterion="lml"), {}, "tol must be a positive finite number"),
    (dict(criterion="r2"), {}, "unknown criterion 'r2'"),
    (dict(tol=0.0), {}, "tol"),
])
def test_bad_settings_are_refused_in_one_line(sinc, kw, fit_kw, message):
    X, y = sinc
    extra = dict(X_val=X[:5], y_val=y[:5]) if fit_kw == "val" else {}
    with pytest.raises(ValueError, match=message):
        KernelPathRidge(**kw).fit(X, y, **extra)


def test_features_too_large_for_double_precision_say_scale_them(sinc):
    """Features of 1e200 made the default t_range (0, 0): "interval lower end must be > 0 ... got
    0.0", about an interval the user never gave."""
    from approxpath import InputError

    X, y = sinc
    with pytest.raises(InputError, match="overflow double precision .*: scale the features"):
        KernelPathRidge().fit(X * 1e200, y)


def test_a_choice_at_an_end_of_t_range_is_warned_at_the_fit_naming_t_range():
    """The warning pointed at selection/search.py and said "widen the interval"."""
    X, y = make_sinc(n=30, noise=0.1, seed=2)  # its log marginal likelihood peaks near t = 0.47
    with pytest.warns(UserWarning, match=r"KernelPathRidge: the chosen t = .* may be matched at the upper end of "
                                         r"t_range, 0.4: .*; widen t_range past it") as caught:
        KernelPathRidge(lam=0.1, criterion="lml", t_range=(0.2, 0.4), tol=0.05).fit(X, y)
    assert [w.filename for w in caught if "t_range" in str(w.message)] == [__file__]


def test_lam_none_names_lam_range_at_a_side_of_the_box(sinc):
    X, y = sinc
    with pytest.warns(UserWarning, match=r"at the lower end of lam_range, 0.5.*; widen (t_range and )?lam_range") as caught:
        KernelPathRidge(lam=None, lam_range=(0.5, 1.0), t_range=T_RANGE).fit(X, y)
    assert all(w.filename == __file__ for w in caught)


def test_cv_without_a_criterion_means_mse_as_ridgecv():
    # KernelPathRidge(cv=3) raised "criterion='loocv' needs no validation data": the default
    # criterion is now loocv without validation data and mse with it (scikit-learn's RidgeCV)
    X, y = make_sinc(n=60, noise=0.2, seed=0)
    by_cv = KernelPathRidge(cv=3, t_range=(0.2, 5.0)).fit(X, y)
    explicit = KernelPathRidge(criterion="mse", cv=3, t_range=(0.2, 5.0)).fit(X, y)
    assert by_cv.criterion_ == "mse" and by_cv.best_t_ == explicit.best_t_
    assert by_cv.selection_.value == explicit.selection_.value
    plain = KernelPathRidge(t_range=(0.2, 5.0)).fit(X, y)
    loocv = KernelPathRidge(criterion="loocv", t_range=(0.2, 5.0)).fit(X, y)
    assert plain.criterion_ == "loocv" and plain.best_t_ == loocv.best_t_
    assert KernelPathRidge().get_params()["criterion"] is None
