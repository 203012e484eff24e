"""Python-API arguments that used to change the meaning of a call without a word, or fail deep
inside numpy: each is refused at once with one line naming it."""

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_classification, make_sinc
from approxpath.selection import validation_curve


@pytest.fixture(scope="module")
def ridge_path():
    X, y = make_sinc(n=30, seed=0)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    return approxpath.approximate_path(problem, eps=0.5, interval=(0.25, 4.0))


def _ridge():
    X, y = make_sinc(n=30, seed=0)
    return approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)


@pytest.mark.parametrize("value", ["no", "False", 0, 1, float("nan"), None])
def test_relative_must_be_a_bool(value):
    """``relative="no"`` was truthy: a relative eps where an absolute one was meant."""
    kr = _ridge()
    calls = [lambda: approxpath.approximate_path(kr, eps=0.5, interval=(0.25, 4.0), relative=value),
             lambda: approxpath.select(kr, "mse", cv=3, eps=0.5, interval=(0.25, 4.0), relative=value),
             lambda: approxpath.approximate_surface(kr, 0.5, weights=(0.05, 0.5), bandwidths=(0.5, 4.0),
                                                    relative=value),
             lambda: approxpath.select_surface(kr, "mse", cv=3, eps=0.5, weights=(0.05, 0.5), bandwidths=(0.5, 4.0),
                                               relative=value)]
    for call in calls:
        with pytest.raises(InputError, match="relative must be True or False"):
            call()


def test_select_refuses_keywords_it_would_drop():
    kr = _ridge()
    with pytest.raises(TypeError, match=r"select\(\) got an unexpected keyword argument 'max_solve'.*'max_solves'"):
        approxpath.select(kr, "mse", cv=3, interval=(0.25, 8.0), max_solve=1)
    with pytest.raises(TypeError, match="'tolerance'; did you mean 'tol'"):  # (a prefix, not similar enough for difflib)
        approxpath.select(kr, "mse", cv=3, interval=(0.25, 8.0), tolerance=1e-6)
    for call in (lambda: approxpath.select(kr, "mse", cv=3, interval=(0.25, 8.0), relative=True),
                 lambda: approxpath.select_surface(kr, "mse", cv=3, weights=(0.05, 0.5), bandwidths=(0.5, 4.0),
                                                   relative=True)):
        with pytest.raises(InputError, match="relative=True needs eps= as well"):
            call()


def test_validation_data_must_be_finite_and_nonempty(ridge_path):
    kr = _ridge()
    Xv, yv = make_sinc(n=15, seed=1)
    bad = yv.copy()
    bad[3] = np.nan
    calls = [lambda: approxpath.select(kr, "mse", X_val=Xv, y_val=bad, interval=(0.25, 8.0)),
             lambda: approxpath.select_surface(kr, "mse", X_val=Xv, y_val=bad, weights=(0.05, 0.5),
                                               bandwidths=(0.5, 4.0)),
             lambda: validation_curve(ridge_path, Xv, bad)]
    for call in calls:
        with pytest.raises(InputError, match="y_val contains NaN or inf .first at flat index 3"):
            call()
    with pytest.raises(InputError, match="the same m >= 1"):
        validation_curve(ridge_path, np.empty((0, 1)), np.empty(0))
    with pytest.raises(InputError, match="map class labels to numbers"):
        validation_curve(ridge_path, Xv, np.where(yv > 0, "a", "b"))
    for ts in ([], [1.0, np.nan]):  # (an empty list crashed in best_t)
        with pytest.raises(InputError, match="ts must hold at least one finite parameter value"):
            validation_curve(ridge_path, Xv, yv, ts=ts)


def test_an_estimator_refuses_nan_validation_targets():
    from approxpath.sklearn import KernelPathRegressor

    X, y = make_sinc(n=40, seed=0)
    Xv, yv = make_sinc(n=20, seed=1)
    yv[0] = np.nan
    with pytest.raises(InputError, match="y_val contains NaN"):
        KernelPathRegressor(eps=0.1, t_range=(0.25, 4.0), random_state=0).fit(X, y, X_val=Xv, y_val=yv)


def test_predictions_check_their_points_and_parameter(ridge_path):
    problem, primal = ridge_path.problem, ridge_path.primal(1.0)
    with pytest.raises(InputError, match="the new points have 5 columns; kernel_ridge was given 1 features"):
        problem.predict(primal, 1.0, np.ones((3, 5)))
    with pytest.raises(InputError, match="bandwidth must be a positive finite number; got -1.0"):
        problem.predict(primal, -1.0, np.ones((2, 1)))
    with pytest.raises(InputError, match="X contains NaN"):
        problem.predict(primal, 1.0, np.array([[np.nan]]))
    assert problem.predict(primal, 1.0, np.ones((2, 1))).shape == (2,)
    for t in ("1", np.array([1.0, 2.0]), None):
        for read in (ridge_path.objectives, ridge_path.primal, ridge_path.gap_bound):
            with pytest.raises(InputError, match="t must be one number"):
                read(t)


@pytest.mark.parametrize("call,match", [
    (lambda: make_sinc(n=-1), "n must be a positive integer"),
    (lambda: make_sinc(n=10, outliers=2.0), "outliers is a fraction"),
    (lambda: make_classification(n=10, d=0), "d must be a positive integer"),
])
def test_synthetic_data_arguments(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_targets_whose_squares_overflow_are_refused_at_once():
    """0.5.0 ran every solver for ~40 s on y * 1e200 before a SolverError listing them all."""
    X, y = make_sinc(n=30, seed=0)
    with pytest.raises(InputError, match="y's squares overflow double precision"):
        approxpath.get_problem("kernel_ridge")(X, y * 1e200, lam=0.1)
    approxpath.get_problem("kernel_ridge")(X, y * 1e100, lam=0.1)  # large but representable: accepted here


@pytest.mark.parametrize("name", ["klasso", "robust_l1", "kernel_ridge"])
def test_targets_whose_squares_underflow_are_refused_at_once(name):
    """klasso on y * 1e-159 (squares subnormal) stopped with a WeakDualityError blaming its own
    bound (a gap bound of -1e-323); all-zero targets and tiny but normal squares stay accepted."""
    X, y = make_sinc(n=20, outliers=0.1, seed=9)
    with pytest.raises(InputError, match="y's squares underflow double precision"):
        approxpath.get_problem(name)(X, y * 1e-159, lam=0.1)
    problem = approxpath.get_problem(name)(X, y * 1e-100, lam=1e-101)
    if name == "klasso":  # certified as on y itself
        path = approxpath.approximate_path(problem, eps=0.5, relative=True, interval=(0.5, 5))
        assert path.certified
    approxpath.get_problem(name)(X, 0.0 * y, lam=0.1)

def test_an_interval_is_two_numbers_not_text():
    """eps="0.5" was refused while interval=("0.25", "4") was read as numbers."""
    kr = _ridge()
    for call in (lambda: approxpath.approximate_path(kr, eps=0.5, interval=("0.25", "4")),
                 lambda: approxpath.select(kr, "mse", cv=3, eps=0.5, interval=("0.25", "4")),
                 lambda: approxpath.approximate_surface(kr, 0.5, weights=("0.05", "0.5"), bandwidths=(0.5, 4.0))):
        with pytest.raises(InputError, match=r"must be a pair \(lo, hi\) of"):
            call()
    path = approxpath.approximate_path(kr, eps=0.5, interval=np.array([0.25, 4.0]))  # numpy numbers are numbers
    assert path.interval == (0.25, 4.0)


@pytest.mark.parametrize("required, match", [
    (dict(eps="0.5"), "eps must be a positive finite number"),        # raised TypeError deep inside
    (dict(eps=float("nan")), "eps must be a positive finite number"),  # a "failed" verification
    (dict(eps=-1.0), "eps must be a positive finite number"),
    (dict(eps=0.5, relative="no"), "relative must be True or False"),  # read as relative
    (dict(relative=True), "relative qualifies a required eps"),
    (dict(interval=("0.25", "4")), r"interval must be a pair \(lo, hi\)"),  # read as numbers
    (dict(interval=(4.0, 0.25)), "swap the ends"),
    (dict(box=((4.0, 0.5), (0.05, 0.5))), "the required box must be"),  # required nothing
    (dict(box=(("0.5", "4"), (0.05, 0.5))), "the required box must be"),  # raised TypeError
    (dict(box=5), "the required box must be"),
    (dict(data_sha256=5), "data_sha256 must be the data's sha256, 64 hex digits"),
])
def test_what_verify_is_asked_to_require_is_well_formed(ridge_path, tmp_path, required, match):
    """A malformed requirement is a usage error, not a failed (or a passed) verification."""
    ridge_path.save(tmp_path / "path.npz")
    X, y = make_sinc(n=30, seed=0)
    with pytest.raises(InputError, match=match):
        approxpath.verify(tmp_path / "path.npz", X, y, **required)
    report = approxpath.verify(tmp_path / "path.npz", X, y, eps=0.5, relative=False, interval=(0.5, 2.0),
                               data_sha256=ridge_path.meta["data_sha256"])
    assert report.ok


def test_a_surface_checks_its_required_box(tmp_path):
    X, y = make_sinc(n=30, seed=0)
    surface = approxpath.approximate_surface(_ridge(), 0.5, weights=(0.1, 1.0), bandwidths=(0.5, 2.0))
    surface.save(tmp_path / "s.npz")
    with pytest.raises(InputError, match="the required box must be"):
        approxpath.verify(tmp_path / "s.npz", X, y, box=((2.0, 0.5), (0.1, 1.0)))
    assert approxpath.verify(tmp_path / "s.npz", X, y, box=((0.5, 1.0), (0.1, 1.0))).ok
    assert not approxpath.verify(tmp_path / "s.npz", X, y, box=((0.25, 1.0), (0.1, 1.0))).ok  # wider than its box


@pytest.mark.parametrize("meta, match", [
    ({"machine": "my laptop"}, "meta may not set 'machine': approxpath records it itself"),  # verify then failed
    ({"problem": "kernel_svm"}, "meta may not set 'problem'"),  # a file that claimed another problem
    ({"n": 5}, "meta may not set 'n'"),
    ({"format": "xls"}, "meta 'format' must be libsvm or csv; got 'xls'"),
    ({"run": object()}, "meta must be JSON"),  # raised TypeError when the path was saved, after the run
    ({"run": float("nan")}, "meta must be JSON"),
    ([("run", 1)], "meta must be a dict of provenance; got list"),
])
def test_meta_is_checked_before_the_run(meta, match):
    """``meta=`` may add a caller's provenance and the data's origin, never replace a field
    approxpath records (the certificate then failed ``verify``), and is refused before any solve."""
    problem = approxpath.get_problem("klasso")(*make_sinc(n=30, seed=0), lam=0.1)
    for run in (lambda: approxpath.approximate_path(problem, eps=0.2, interval=(1.0, 2.0), meta=meta),
                lambda: approxpath.approximate_surface(problem, 0.2, (0.05, 0.5), (1.0, 2.0), meta=meta)):
        with pytest.raises(InputError, match=match):
            run()
    path = approxpath.approximate_path(problem, eps=0.2, interval=(1.0, 2.0),
                                       meta={"run": "figure 3", "data_file": None, "format": "csv"})
    assert path.meta["run"] == "figure 3" and path.meta["problem"] == "klasso" and "machine" in path.meta


@pytest.mark.parametrize("seeds", ["x", [1.0, 2.0], 3, {"a": 1}])
def test_seeds_must_be_a_dict_of_parameter_values(seeds):
    """``seeds="x"`` (or a list of t) failed with ``AttributeError: 'str' object has no attribute 'items'``."""
    problem = approxpath.get_problem("klasso")(*make_sinc(n=20, seed=0), lam=0.1)
    with pytest.raises(InputError, match=r"seeds must be a dict \{parameter value: \(primal, dual\)\}"):
        approxpath.approximate_path(problem, eps=0.2, interval=(1.0, 2.0), seeds=seeds)


@pytest.mark.parametrize("file", [None, 3, "", b"cert.npz"])
def test_save_needs_a_file_name(ridge_path, file):
    """``path.save(None)`` raised pathlib's TypeError; ``save("")`` said "'.' is a directory"."""
    with pytest.raises(InputError, match=r"an output file must be a file name \(a non-empty str or path\)"):
        ridge_path.save(file)


@pytest.mark.parametrize("call", [
    lambda f: approxpath.verify(f),
    lambda f: approxpath.load_path(f),
    lambda f: approxpath.approximate_path(_ridge(), eps=0.5, interval=(0.25, 4.0), checkpoint=f),
])
@pytest.mark.parametrize("file", [3, b"cert.npz"])
def test_files_read_need_a_file_name(call, file):
    """A certificate or checkpoint given as a number or bytes raised pathlib's TypeError."""
    with pytest.raises(InputError, match=r"must be a file name \(a non-empty str or path\)"):
        call(file)


_I = np.arange(30)


@pytest.mark.parametrize("cv, match", [
    ([(_I[:20], np.array([20, 99])), (_I[10:], _I[:10])], "cv fold 1: test index 99 is not one of the 30 points"),
    ([(_I[:20] * 1.0, _I[20:]), (_I[10:], _I[:10])], "cv fold 1: its training indices must be a nonempty 1-d array "
                                                      "of integers; got shape \\(20,\\) of float64"),
    ([(_I, _I[:10]), (_I, _I[10:])], "cv fold 1: point\\(s\\) 0, 1, 2, 3, 4 are both trained on and held out"),
    ([(_I[:20], _I[:0]), (_I[10:], _I[:10])], "cv fold 1: its test indices must be a nonempty"),
    ([(_I[:20], np.array([25, 25])), (_I[10:], _I[:10])], "cv fold 1: its test indices repeat a point"),
    ([1, 2], "cv: cannot unpack"),
])
def test_explicit_folds_are_checked(cv, match):
    """Folds given as index arrays went unchecked: an index out of range or a float index was
    numpy's IndexError, and folds that train on their test points were accepted and certified
    (the training loss, choosing the smallest lambda)."""
    problem = approxpath.get_problem("kernel_ridge")(*make_sinc(n=30, seed=0), bandwidth=1.0, parameter="lam")
    with pytest.raises(InputError, match=match):
        approxpath.select(problem, "mse", cv=cv, interval=(1e-3, 1.0))
    with pytest.raises(InputError, match=match):
        approxpath.select_surface(approxpath.get_problem("kernel_ridge")(*make_sinc(n=30, seed=0), lam=0.1), "mse",
                                  cv=cv, bandwidths=(0.5, 2.0), weights=(0.01, 0.1))


@pytest.mark.parametrize("cv, criterion, need", [(3, "mse", "60 exact solves \\(5 bandwidths x 4 weights x 3 folds\\)"),
                                                 (None, "loocv", "12 exact solves \\(3 bandwidths x 4 weights\\)")])
def test_a_budget_below_the_first_grid_of_a_search_with_no_path_is_refused(cv, criterion, need):
    """Kernel ridge's search over both parameters with no path made its first grid whatever
    max_solves said (63 exact solves for max_solves=5) and returned as if within it."""
    problem = approxpath.get_problem("kernel_ridge")(*make_sinc(n=40, seed=0), lam=0.1)
    box = dict(weights=(0.01, 0.1), bandwidths=(1.0, 2.0), strict=False)
    with pytest.raises(approxpath.BudgetExceededError, match=f"the first grid needs {need}, more than max_solves = 5"):
        approxpath.select_surface(problem, criterion, cv=cv, max_solves=5, **box)
    assert approxpath.select_surface(problem, criterion, cv=cv, max_solves=1000, **box).exact_solves <= 1000


def test_boolean_masks_are_folds_too():
    """Boolean masks of the points, accepted before the folds were checked, are their indices."""
    problem = approxpath.get_problem("kernel_ridge")(*make_sinc(n=20, seed=0), lam=0.1)
    half = np.arange(20) >= 10
    masks = approxpath.select(problem, "mse", cv=[(half, ~half), (~half, half)], interval=(0.5, 4.0))
    indices = approxpath.select(problem, "mse", cv=[(np.flatnonzero(half), np.flatnonzero(~half)),
                                                    (np.flatnonzero(~half), np.flatnonzero(half))], interval=(0.5, 4.0))
    assert masks.t == indices.t and masks.value == indices.value
