"""The folds of a certified selection (approxpath.selection.select): an integer cv gives
scikit-learn's (stratified for the 0-1 error) folds without importing it, shuffle= its shuffled
ones, splitters and hold-out sets as given; folds that would mislead (sorted points in blocks,
a class of one sample, a splitter needing groups) and options that would be ignored are said
in one line."""


import warnings

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.selection import select


LAM = 0.1


pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=30, noise=0.1, seed=2)


def test_splitter_objects_holdout_and_classification():
    from sklearn.model_selection import KFold

    X, y = make_classification(n=40, d=2, seed=1)
    svm = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    s = select(svm, cv=KFold(3, shuffle=True, random_state=0), eps=0.01, interval=(0.1, 10.0), tol=0.05)
    assert s.criterion == "error" and s.reached and s.kind == "certified"
    # a hold-out set: one fold
    problem = approxpath.get_problem("kernel_svm")(X[:30], y[:30], c=1.0)
    h = select(problem, X_val=X[30:], y_val=svm.y[30:], eps=0.01, interval=(0.1, 10.0), tol=0.11, max_solves=300)
    assert h.folds == 1 and h.delta <= 0.11 and 0.0 <= h.value[0] <= h.value[1] <= 1.0


def _fold_case(n, positives):
    """``(X, svm, ridge)``: n random points, ``positives`` of them labelled +1 for the SVM."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 2))
    labels = np.where(rng.permutation(n) < positives, 1.0, -1.0)
    return X, approxpath.get_problem("kernel_svm")(X, labels, c=1.0), approxpath.get_problem("kernel_ridge")(
        X, X[:, 0], lam=LAM)


def _assert_folds(X_vals, y_vals, want, X, y):
    """The held-out data are those of the ``(train, test)`` splits ``want``, in their order."""
    assert len(X_vals) == len(y_vals) == len(want)
    for X_val, y_val, (_, test) in zip(X_vals, y_vals, want):
        np.testing.assert_array_equal(X_val, X[test])
        np.testing.assert_array_equal(y_val, y[test])


@pytest.mark.parametrize("n, k, positives", [(30, 3, 10), (47, 5, 9), (23, 4, 20), (12, 5, 3)])
def test_integer_cv_gives_scikit_learns_folds_without_importing_it(n, k, positives):
    from sklearn.model_selection import check_cv

    from approxpath.selection.folds import fold_problems

    X, svm, ridge = _fold_case(n, positives)
    for problem, criterion, classifier in ((svm, "error", True), (ridge, "mse", False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, X_vals, y_vals, _ = fold_problems(problem, k, None, None, None, criterion)
            want = list(check_cv(k, problem.y, classifier=classifier).split(X, problem.y))
        _assert_folds(X_vals, y_vals, want, X, problem.y)
        # scikit-learn warns when a class has fewer points than folds; so do we, once
        warned = sum("fewer than cv" in str(w.message) for w in caught)
        assert warned == (classifier and min(positives, n - positives) < k)
    with pytest.raises(approxpath.InputError, match="more than the points of every class"):
        fold_problems(svm, n, None, None, None, "error")


@pytest.mark.parametrize("n, k, positives", [(30, 3, 10), (47, 5, 9), (23, 4, 20)])
@pytest.mark.parametrize("seed", [0, 11, 2**32 - 1])
@pytest.mark.filterwarnings("ignore:.*(fewer than cv|least populated class):UserWarning")
def test_shuffle_gives_scikit_learns_shuffled_folds(n, k, positives, seed):
    """``shuffle=seed`` with an int cv: the folds of ``KFold`` / ``StratifiedKFold(k,
    shuffle=True, random_state=seed)``, each fold's points in their order."""
    from sklearn.model_selection import KFold, StratifiedKFold

    from approxpath.selection.folds import fold_problems

    X, svm, ridge = _fold_case(n, positives)
    for problem, criterion, splitter in ((svm, "error", StratifiedKFold), (ridge, "mse", KFold)):
        _, X_vals, y_vals, _ = fold_problems(problem, k, None, None, None, criterion, shuffle=seed)
        want = list(splitter(k, shuffle=True, random_state=seed).split(X, problem.y))
        _assert_folds(X_vals, y_vals, want, X, problem.y)
        unshuffled = fold_problems(problem, k, None, None, None, criterion)[1]
        assert any(not np.array_equal(a, b) for a, b in zip(X_vals, unshuffled))


def test_unshuffled_folds_of_sorted_points_warn_of_extrapolation(sinc):
    """make_sinc's points are sorted by x: unshuffled blocks each hold out one stretch of it.  Shuffled
    folds, a splitter, unsorted points and a sorted binary feature say nothing."""
    import warnings

    from sklearn.model_selection import KFold

    from approxpath.selection.folds import fold_problems

    X, y = sinc
    sorted_ = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    order = np.random.default_rng(0).permutation(y.size)
    binary = np.column_stack([X[order], np.arange(y.size) >= y.size // 2])  # (a 0/1 column in order)
    mixed = approxpath.get_problem("kernel_ridge")(binary, y[order], lam=LAM)
    for problem, kw, warned in ((sorted_, dict(cv=5), True), (sorted_, dict(cv=5, shuffle=0), False),
                                (sorted_, dict(cv=KFold(5)), False), (mixed, dict(cv=5), False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fold_problems(problem, kw["cv"], None, None, None, "mse", shuffle=kw.get("shuffle"))
        said = [str(w.message) for w in caught if "extrapolation" in str(w.message)]
        assert len(said) == int(warned), (kw, said)
    assert "sorted by feature 1" in str(_sorted_warning(sorted_))
    for run in (lambda: select(sorted_, "mse", cv=3, interval=(0.2, 20.0), tol=1.0),
                lambda: approxpath.select_surface(sorted_, "mse", cv=3, bandwidths=(0.5, 2.0), weights=(0.05, 0.2),
                                                  tol=1.0)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        assert [w.filename for w in caught if "extrapolation" in str(w.message)] == [__file__]  # (the caller's line)


def _sorted_warning(problem):
    # (the default advice names the folds' own number: 3)
    with pytest.warns(approxpath.selection.SortedFoldsWarning, match=r"the 3 folds are blocks .*\(shuffle=SEED, or a "
                      r"splitter such as KFold\(3, shuffle=True, random_state=0\)\)$") as caught:
        select(problem, "mse", cv=3, interval=(0.2, 20.0), tol=1.0)
    return next(w.message for w in caught if "extrapolation" in str(w.message))


def test_a_splitter_that_needs_groups_says_how_to_give_them(sinc):
    """GroupKFold without groups was refused in scikit-learn's words alone ("The 'groups'
    parameter should not be None"): the error now names groups= and the splits as cv (an
    estimator's fit takes no groups).  With groups, the folds are GroupKFold's own."""
    from sklearn.model_selection import GroupKFold

    from approxpath.selection.folds import fold_problems
    from approxpath.sklearn import KernelPathRidge

    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    groups = np.arange(y.size) % 4
    for run in (lambda: select(problem, "mse", cv=GroupKFold(3), interval=(0.5, 2.0), tol=1.0),
                lambda: KernelPathRidge(cv=GroupKFold(3)).fit(X, y)):
        with pytest.raises(approxpath.InputError, match=r"^cv=GroupKFold\(.*needs groups: pass groups=, or its "
                                                        r"splits as cv .*cv=list\(splitter.split\(X, y, groups\)\)"):
            run()
    _, X_vals, _, _ = fold_problems(problem, GroupKFold(3), None, None, groups, "mse")
    want = [X[test] for _, test in GroupKFold(3).split(X, y, groups)]
    assert len(X_vals) == 3 and all(np.array_equal(a, b) for a, b in zip(X_vals, want))


def test_shuffle_is_refused_where_it_would_be_ignored(sinc):
    from sklearn.model_selection import KFold

    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    for kw, match in [(dict(shuffle=1), "pass cv=K"), (dict(cv=KFold(3), shuffle=1), "shuffle the splitter itself"),
                      (dict(X_val=X, y_val=y, shuffle=1), "X_val has none"), (dict(cv=3, shuffle=-1), "0 to 2..32 - 1"),
                      (dict(cv=3, shuffle=0.5), "seed"), (dict(cv=3, shuffle=True), "seed")]:
        criterion = "mse" if "X_val" in kw or "cv" in kw else "loocv"
        with pytest.raises(approxpath.InputError, match=match):
            select(problem, criterion, eps=1e-3, interval=(0.2, 20.0), **kw)
        with pytest.raises(approxpath.InputError, match=match):
            approxpath.select_surface(problem, criterion, bandwidths=(0.2, 20.0), weights=(0.01, 1.0), **kw)


def test_a_hold_out_half_is_refused_not_ignored(sinc):
    """A y_val without X_val (or the reverse) was ignored: the closed-form LOOCV ran instead."""
    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    for kw, alone in [(dict(y_val=y), "y_val"), (dict(X_val=X), "X_val")]:
        with pytest.raises(approxpath.InputError, match=f"pass X_val and y_val together \\(got {alone} alone\\)"):
            select(problem, eps=1e-3, interval=(0.2, 20.0), **kw)
        with pytest.raises(approxpath.InputError, match=f"got {alone} alone"):
            approxpath.select_surface(problem, bandwidths=(0.2, 20.0), weights=(0.01, 1.0), **kw)


def test_integer_cv_needs_no_scikit_learn():
    import subprocess
    import sys

    code = ("import sys, approxpath\n"
            "from approxpath.data import make_classification\n"
            "from approxpath.selection.folds import fold_problems\n"
            "X, y = make_classification(n=20, d=2, seed=0)\n"
            "p = approxpath.get_problem('kernel_svm')(X, y, c=1.0)\n"
            "assert len(fold_problems(p, 4, None, None, None, 'error')[0]) == 4\n"
            "print('sklearn' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_class_of_one_sample_is_named_not_fewer_folds_advised():
    """29 samples of one class and 1 of the other, cv=3: a fold without the one trains on one
    class whatever the number of folds, and the advice was "use fewer folds"."""
    X, _ = make_classification(n=30, d=2, seed=0)
    y = np.ones(30)
    y[7] = -1.0
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(approxpath.InputError, match=r"trains on 20 point\(s\): .*; the class -1 of y has 1 sample: "
                                                    r"give each class at least 2$"):
        with pytest.warns(UserWarning, match=r"^the smallest class has 1 point, fewer than cv=3 folds$"):
            select(problem, "error", cv=3, eps=0.5, interval=(1.0, 2.0))


@pytest.mark.parametrize("cv", [2.5, "5", True])
def test_a_cv_that_is_no_number_of_folds_nor_a_splitter_is_one_line(cv):
    """scikit-learn answered with its own words ("n_splits=1" for True) or a TypeError."""
    X, y = make_sinc(n=20, seed=0)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    with pytest.raises(approxpath.InputError, match=r"^cv must be a number of folds \(an int >= 2\), a scikit-learn "
                                                    r"splitter or an iterable of \(train, test\) index arrays; got "):
        select(problem, "mae", cv=cv)
