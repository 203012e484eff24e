"""Hostile review of the kernel families (gaussian, laplacian, ard, precomputed) and of the
feature path's inputs.

References: distances built here with numpy broadcasting (not by the family layer), optima from
tight CVXPY solves of each problem written here from its definition (not the problems' own
declarations), eigenvalues of exp(-tD) for positive semidefiniteness, and the refusals a
one-line :class:`InputError` must give (exit status 2 on the command line)."""

import numpy as np
import pytest
import cvxpy as cp

import approxpath
from approxpath.certificate import verify
from approxpath.cli import main
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.exact.feature_path import feature_path

from certificate_helpers import tamper
from reference_helpers import tight_solve

G = approxpath.get_problem


def _ard(A, w):
    """sum_k w_k (a_ik - a_jk)^2 by broadcasting."""
    return (np.asarray(w) * (A[:, None, :] - A[None, :, :]) ** 2).sum(-1)


def _indefinite_on_a_scale(n):
    """A symmetric, nonnegative, zero-diagonal D that is not conditionally negative definite,
    with every off-diagonal entry between 1 and 4 (dense: its Frobenius norm is about n times
    its entries, so a scale of 1e153 overflows the sum of squares at n = 60 while D^2 does not)."""
    i = np.arange(float(n))
    return (1.0 + 3.0 * np.abs(i[:, None] - i[None, :]) ** 4 / n**4) * (1.0 - np.eye(n))


# ---------------------------------------------------------------------------- CND check
def test_the_cnd_check_does_not_depend_on_the_scale_of_D():
    """A huge indefinite D passed the check (||D||_F overflowed: tolerance inf) and a weight path
    at a bandwidth near 1/scale was then certified on an indefinite kernel, where the SVM's
    primal is unbounded below; a tiny Euclidean D was refused (||D||_F underflowed to 0)."""
    n, scale = 60, 1e153  # (see _indefinite_on_a_scale: entries ~1e153, squares ~1e306, their sum inf)
    D0 = _indefinite_on_a_scale(n)
    # the reference: exp(-tD) has a negative eigenvalue at t * scale = 0.3 (the kernel is not PSD)
    assert np.linalg.eigvalsh(np.exp(-0.3 * D0))[0] < -0.1
    _, y = make_classification(n=n, d=3, seed=1)
    for name, weight in (("kernel_svm", "c"), ("kernel_ridge", "lam")):
        for s in (1.0, scale):
            with pytest.raises(InputError, match="not conditionally negative definite"):
                G(name)(D0 * s, y, **{weight: 1.0}, parameter=weight, bandwidth=0.3 / s, kernel="precomputed")
    # a Euclidean D is conditionally negative definite at every scale (Schoenberg): accepted
    X = np.random.default_rng(0).normal(size=(n, 3))
    E = np.sqrt(_ard(X, np.ones(3)))
    assert np.linalg.eigvalsh(np.exp(-0.7 * E))[0] > 0
    for s in (1e-200, 1.0, 1e153):  # (1e-200: the squares of the entries underflow to 0)
        G("kernel_svm")(E * s, y, c=1.0, kernel="precomputed")


# ---------------------------------------------------------------------------- feature weights
def test_feature_weights_refuse_complex_and_boolean_values_in_one_line():
    X, y = make_classification(n=20, d=3, seed=1)
    svm = G("kernel_svm")
    # complex weights lost their imaginary part with a warning (1, 2, 3j) -> (1, 2, 0): a silent change
    for w in (np.array([1.0, 2.0, 3j]), (1.0, 2.0, 1 + 0j), (True, False, True), [1.0, np.True_, 2.0]):
        with pytest.raises(InputError, match="not True/False or complex") as info:
            svm(X, y, c=1.0, kernel="ard", feature_weights=w)
        assert "\n" not in str(info.value)
    assert svm(X, y, c=1.0, kernel="ard", feature_weights=(1.0, 2.0, 0.0)).options()["feature_weights"] == (1.0, 2.0, 0.0)
    # a long array's repr spans lines; the message must not
    wide = np.random.default_rng(2).uniform(size=(20, 30))
    for w in (np.full(30, np.nan), np.full(30, -1.0), np.full(30, 1j)):
        with pytest.raises(InputError) as info:
            svm(wide, y, c=1.0, kernel="ard", feature_weights=w)
        assert "\n" not in str(info.value), str(info.value)


# ---------------------------------------------------------------------------- ARD paths
def _optimum(name, K, y, weight):
    """The optimal value at the kernel K, from the problem's definition, by Clarabel."""
    n = len(y)
    if name == "kernel_svm":  # the dual: max 1'a - a'Qa/2, 0 <= a <= C, y'a = 0
        Q = K * np.outer(y, y)
        a = cp.Variable(n)
        problem = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap((Q + Q.T) / 2))),
                             [a >= 0, a <= weight, y @ a == 0])
    elif name == "klasso":
        b, b0 = cp.Variable(n), cp.Variable()
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ b - b0) + weight * cp.norm1(b)))
    elif name == "robust_l1":
        b = cp.Variable(n)
        problem = cp.Problem(cp.Minimize(cp.norm1(y - K @ b) + weight * cp.norm1(b)))
    else:  # kernel_ridge's dual: max 2y'a - ||a||^2 - a'Ka / lam
        a = cp.Variable(n)
        problem = cp.Problem(cp.Maximize(2 * y @ a - cp.sum_squares(a) - cp.quad_form(a, cp.psd_wrap((K + K.T) / 2)) / weight))
    return tight_solve(problem)


def _primal_value(name, K, y, weight, point):
    """The primal objective of the path's point, from the definition."""
    if name == "kernel_svm":
        return 0.5 * point.w @ K @ point.w + weight * np.maximum(0.0, 1.0 - y * (K @ point.w + point.b)).sum()
    if name == "klasso":
        return 0.5 * np.sum((y - K @ point.beta - point.beta0) ** 2) + weight * np.abs(point.beta).sum()
    if name == "robust_l1":
        return np.abs(y - K @ point.beta).sum() + weight * np.abs(point.beta).sum()
    return weight * point.c @ K @ point.c + np.sum((K @ point.c - y) ** 2)


_PROBLEMS = (("kernel_svm", "c", 1.0, 0.3), ("klasso", "lam", 0.1, 0.05), ("robust_l1", "lam", 0.1, 0.2),
             ("kernel_ridge", "lam", 0.1, 0.05))  # (name, weight, its value, eps)


@pytest.mark.parametrize("name,weight,value,eps", _PROBLEMS, ids=[p[0] for p in _PROBLEMS])
def test_ard_paths_with_a_zero_weight_are_eps_close_to_tight_solves_over_both_parameters(name, weight, value, eps,
                                                                                       tmp_path):
    n, w = 24, (1.5, 0.0, 0.4)  # a zero weight: the second feature must not count
    if name == "kernel_svm":
        X, y = make_classification(n=n, d=3, seed=2)
    else:
        X, y = make_sinc(n=n, low=-3.0, high=3.0, noise=0.1, seed=2, **({"outliers": 0.1} if name == "robust_l1" else {}))
        X = np.column_stack([X, np.random.default_rng(2).uniform(-1.0, 1.0, (n, 2))])
    D = _ard(X, w)
    rng = np.random.default_rng(7)
    for parameter in ("bandwidth", weight):
        if parameter == "bandwidth":
            problem, interval = G(name)(X, y, **{weight: value}, kernel="ard", feature_weights=w), (0.25, 4.0)
        else:
            problem = G(name)(X, y, **{weight: value}, parameter=weight, bandwidth=0.7, kernel="ard", feature_weights=w)
            interval = (0.05 * value, 2.0 * value)
        path = approxpath.approximate_path(problem, eps=eps, interval=interval)
        assert path.certified
        report = verify(path.save(tmp_path / f"{name}_{parameter}.npz"), X, y)
        assert report.ok and not report.notes, str(report)
        worst = 0.0
        for tau in np.exp(rng.uniform(*np.log(interval), 4)):  # (4 points per path: 32 solves in all)
            t, C = problem.sweep.at(tau)
            K = np.exp(-t * D)
            optimum = _optimum(name, K, y, C)
            sub = _primal_value(name, K, y, C, path.primal(tau)) - optimum
            bound = path.gap_bound(tau)
            assert bound <= eps and sub <= bound + 1e-7 * (1.0 + abs(optimum)), (parameter, tau, sub, bound)
            worst = max(worst, sub)
        assert worst > 1e-4 * eps  # (the comparison has teeth: the path is not trivially exact)


def test_tampered_ard_weights_fail_verification(tmp_path):
    X, y = make_classification(n=24, d=3, seed=2)
    problem = G("kernel_svm")(X, y, c=1.0, kernel="ard", feature_weights=(1.5, 0.0, 0.4))
    cert = approxpath.approximate_path(problem, eps=0.3, interval=(0.5, 4.0)).save(tmp_path / "ard.npz")
    assert verify(cert, X, y).ok
    for w in ([1.5, 0.0, 0.4000001], [15.0, 0.0, 4.0], [1.5, 1.0, 0.4]):
        forged = tamper(cert, tmp_path / "w.npz", lambda a, m: m["options"].__setitem__("feature_weights", w),
                        rehash=True)
        assert not verify(forged, X, y).ok, w
    gaussian = approxpath.kernel_families.DESCRIPTIONS["gaussian"]

    def to_gaussian(arrays, meta):
        meta["options"].update(kernel="gaussian", feature_weights=None)
        meta["kernel"] = gaussian

    assert not verify(tamper(cert, tmp_path / "g.npz", to_gaussian, rehash=True), X, y).ok


# ---------------------------------------------------------------------------- feature path
def test_the_feature_path_refuses_inputs_whose_features_are_all_constant(tmp_path, capsys):
    """Every feature constant: the kernel is one constant matrix for every beta.  The start
    failed with a SolverError (exit 4) telling to choose a smaller C, which cannot help."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=12)
    for X in (np.ones((12, 3)), np.zeros((12, 1))):
        for kernel in ("ard-gaussian", "ard-polynomial"):
            with pytest.raises(InputError, match="every feature of X is constant"):
                feature_path(X, y, C=1.0, kernel=kernel)
    data = tmp_path / "const.csv"
    np.savetxt(data, np.column_stack([np.full((12, 2), 0.5), y]), delimiter=",")
    assert main(["features", str(data), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "every feature of X is constant" in err and err.count("\n") == 1
    # one feature that varies is enough: the path starts and its points are certified
    X = np.column_stack([np.ones(12), rng.uniform(-0.3, 0.3, 12)])
    path = feature_path(X, y, C=0.5 * float(np.sum((y - y.mean()) ** 2)), max_steps=20)
    assert path.report.ok and path.events[0].feature == 1


def test_a_D_off_cnd_by_more_than_the_eigensolver_error_is_refused():
    """The tolerance was 2**-36 ||D||_F: a squared-distance D perturbed by 1e-12 of its largest
    entry along a centred direction v with X'v = 0 (v'Dv = 0 before, > 0 after: not CND, so
    exp(-tD) is indefinite and kernel ridge has no minimum) passed, and its path was certified."""
    from scipy.linalg import null_space
    from scipy.spatial.distance import cdist

    from approxpath.kernel_families import cnd_excess

    X = np.random.default_rng(3).normal(size=(20, 2))
    D0 = cdist(X, X, "sqeuclidean")
    v = null_space(np.vstack([np.ones(20), X.T]))[:, 0]  # 1'v = 0 and X'v = 0: v'D0v = 0 exactly
    P = np.outer(v, v)
    np.fill_diagonal(P, 0.0)
    D = D0 + 1e-12 * D0.max() * P
    D = np.maximum(0.5 * (D + D.T), 0.0)
    assert v @ D @ v > 1e3 * abs(v @ D0 @ v)  # (the perturbation's 1e-13, far above D0's rounding)
    top, tol = cnd_excess(D)
    assert 2.0**-36 * np.linalg.norm(D) > top > tol  # (passed before, refused now)
    y = np.sin(X[:, 0])
    with pytest.raises(InputError, match="not conditionally negative definite .*computed from the differences"):
        G("kernel_ridge")(D, y, lam=0.1, kernel="precomputed")
    assert cnd_excess(D0)[0] <= cnd_excess(D0)[1]  # the same D unperturbed: accepted


def test_a_fold_s_principal_submatrix_of_an_accepted_D_is_not_checked_again(monkeypatch):
    """A fold's D was checked with its own, smaller tolerance (its n and norm): a D accepted whole
    was refused in a fold during select ("use fewer folds or more data").  A principal submatrix
    of a conditionally negative definite D is one: the folds take the whole's check."""
    from scipy.spatial.distance import cdist

    import approxpath.kernel_families as kf
    from approxpath.selection.folds import fold_problems

    X, y = make_sinc(n=30, seed=2)
    problem = G("kernel_ridge")(cdist(X, X, "sqeuclidean"), y, lam=0.1, kernel="precomputed")
    monkeypatch.setattr(kf, "cnd_excess", lambda D: (1.0, 0.0))  # (any D checked now is refused)
    with pytest.raises(InputError, match="not conditionally negative definite"):
        G("kernel_ridge")(cdist(X, X, "sqeuclidean"), y, lam=0.1, kernel="precomputed")
    problems, D_vals, _, _ = fold_problems(problem, 3, None, None, None, "mse")
    assert len(problems) == 3 and all(p.X.shape == (20, 20) for p in problems)
    assert kf._SUBMATRIX.get() is False  # (the context ended with the folds)


def test_the_cnd_check_takes_d_near_the_largest_double():
    """D scaled to 1e307 at n = 30: its row means overflowed and the eigensolver failed
    ("Eigenvalues did not converge" as a traceback); it is checked on D scaled by its largest entry."""
    from scipy.spatial.distance import cdist

    from approxpath.kernel_families import cnd_excess

    X = np.random.default_rng(0).uniform(size=(30, 3))
    D = cdist(X, X) / cdist(X, X).max() * 1e307
    top, tol = cnd_excess(D)
    assert np.isfinite(tol) and top <= tol
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    assert G("kernel_svm")(D, y, c=1.0, kernel="precomputed").kernel == "precomputed"
    D[0, 1] = D[1, 0] = 0.01 * D[0, 1]  # (no longer a distance: not CND)
    with pytest.raises(InputError, match="not conditionally negative definite"):
        G("kernel_svm")(D, y, c=1.0, kernel="precomputed")


def test_overflowing_ard_distances_name_the_weights_and_a_1d_d_new_its_shape():
    """Weights of 1e308 on features in [0, 1] overflow D: the message said to min-max scale the
    features (already scaled).  A 1-D D_new of n entries was "1 column(s)"."""
    from scipy.spatial.distance import cdist

    X = np.random.default_rng(0).uniform(size=(30, 5))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    problem = G("kernel_svm")(X, y, c=1.0, kernel="ard", feature_weights=(1e308,) * 5)
    with pytest.raises(InputError, match="feature weights up to 1e[+]308.*use smaller feature_weights"):
        approxpath.approximate_path(problem, eps=0.1)
    D = cdist(X, X, "cityblock")
    ridge = G("kernel_ridge")(D, X[:, 0], lam=0.1, kernel="precomputed")
    with pytest.raises(InputError, match=r"D_new is 1-D \(30 entries\).*D_new\[None, :\]"):
        ridge.cross_kernel(1.0, D[0])
    assert ridge.cross_kernel(1.0, D[0][None, :]).shape == (1, 30)
