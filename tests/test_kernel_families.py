"""Kernel families K_t = exp(-tD): Laplacian, ARD and precomputed D on every kernel problem.

References: distances computed here with numpy broadcasting (and exactly, in rational
arithmetic, for the rounding allowance), and, for the paths, tight CVXPY solves of the problems'
own declarations on a precomputed D built here (not by the family layer)."""

from fractions import Fraction

import numpy as np
import pytest

import approxpath
from approxpath.certificate import verify
from approxpath.cli import main
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.kernel_families import cnd_excess, cross_distances, distances, entry_terms, loewner_factor
from approxpath.numerics import UNIT_ROUNDOFF

from certificate_helpers import tamper
from regression_helpers import tight_optimum

G = approxpath.get_problem


def _l1(A, B):
    return np.abs(A[:, None, :] - B[None, :, :]).sum(-1)


def _sq(A, B, w=None):
    w = np.ones(A.shape[1]) if w is None else np.asarray(w)
    return (w * (A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def _regression_data(seed=5, n=24):
    X, y = make_sinc(n=n, low=-3.0, high=3.0, noise=0.1, seed=seed)
    extra = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, 1))
    return np.column_stack([X, extra]), y


def _indefinite(n):
    """|i - j|^4 on a line: symmetric, nonnegative, zero diagonal, not conditionally negative
    definite (v = (1, -2, 1, 0, ...) has v'Dv = 24 > 0 with 1'v = 0)."""
    i = np.arange(n, dtype=float)
    return np.abs(i[:, None] - i[None, :]) ** 4 / n**4


# ---------------------------------------------------------------------------- distances
@pytest.mark.parametrize("family", ["gaussian", "laplacian", "ard"])
def test_distances_match_numpy_and_stay_within_their_rounding_allowance(family):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((9, 5)) * np.array([1e-3, 1.0, 10.0, 1.0, 3.0])
    w = np.array([0.5, 2.0, 0.1, 0.0, 1.3]) if family == "ard" else None
    D = distances(X, family, w)
    ref = {"gaussian": _sq(X, X), "laplacian": _l1(X, X), "ard": _sq(X, X, w)}[family]
    np.testing.assert_allclose(D, ref, rtol=1e-13, atol=0)
    assert np.array_equal(D, D.T) and not np.any(np.diag(D))
    # exact rational distances: the computed ones are within (entry_terms + 2) u relative
    allowed = (entry_terms(family, X.shape[1]) + 2) * UNIT_ROUNDOFF
    for i in range(X.shape[0]):
        for j in range(X.shape[0]):
            diffs = [Fraction(a) - Fraction(b) for a, b in zip(X[i], X[j])]
            weights = [Fraction(v) for v in (w if w is not None else np.ones(X.shape[1]))]
            exact = sum((abs(d) if family == "laplacian" else wk * d * d) for d, wk in zip(diffs, weights))
            assert abs(Fraction(D[i, j]) - exact) <= Fraction(allowed) * exact


def test_cross_distances_of_each_family():
    rng = np.random.default_rng(1)
    X, Z = rng.standard_normal((6, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(cross_distances(Z, X, "laplacian"), _l1(Z, X), rtol=1e-14)
    np.testing.assert_allclose(cross_distances(Z, X, "ard", (1.0, 0.5, 2.0)), _sq(Z, X, [1.0, 0.5, 2.0]), rtol=1e-14)
    D_new = _l1(Z, X)
    assert cross_distances(D_new, _l1(X, X), "precomputed") is not None
    with pytest.raises(InputError, match="D_new"):
        cross_distances(D_new[:, :-1], _l1(X, X), "precomputed")


def test_predictions_use_the_family():
    X, y = make_classification(n=20, d=2, seed=4)
    Z = X[:5] + 0.1
    for kernel, D_new, X_new in (("laplacian", _l1(Z, X), Z), ("precomputed", _l1(Z, X), _l1(Z, X))):
        data = X if kernel == "laplacian" else _l1(X, X)
        problem = G("kernel_ridge")(data, y, lam=0.1, kernel=kernel)
        np.testing.assert_allclose(problem.cross_kernel(0.7, X_new), np.exp(-0.7 * D_new), rtol=1e-14)


# ---------------------------------------------------------------------------- input checks
def test_bad_precomputed_distances_and_weights_are_refused():
    D = _l1(*(2 * (np.random.default_rng(2).standard_normal((5, 2)),)))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    Ridge = G("kernel_ridge")
    cases = [
        (D[:, :4], "n x n"),
        (D + np.diag(np.full(5, 0.1)), "nonzero diagonal"),
        (D - 1.0, "negative entry"),
        (D + np.triu(np.full((5, 5), 1e-3), 1), "not exactly symmetric"),
    ]
    for bad, message in cases:
        with pytest.raises(InputError, match=message):
            Ridge(bad, y, lam=0.1, kernel="precomputed")
    X = np.random.default_rng(2).standard_normal((5, 2))
    with pytest.raises(InputError, match="feature_weights= goes with kernel='ard'"):
        Ridge(X, y, lam=0.1, kernel="laplacian", feature_weights=(1.0, 2.0))
    with pytest.raises(InputError, match="feature_weights= goes with kernel='ard'"):
        Ridge(X, y, lam=0.1, kernel="ard")
    with pytest.raises(InputError, match="one weight per feature"):
        Ridge(X, y, lam=0.1, kernel="ard", feature_weights=(1.0, 2.0, 3.0))
    with pytest.raises(InputError, match="nonnegative"):
        Ridge(X, y, lam=0.1, kernel="ard", feature_weights="1,-2")
    with pytest.raises(InputError, match="feature_weights has an empty entry: '1,,3'"):  # (read as 2 weights before)
        Ridge(np.column_stack([X, X[:, 0]]), y, lam=0.1, kernel="ard", feature_weights="1,,3")
    assert Ridge(X, y, lam=0.1, kernel="ard", feature_weights=" 1, 0.5 ").feature_weights == (1.0, 0.5)
    with pytest.raises(InputError, match="unknown kernel"):
        Ridge(X, y, lam=0.1, kernel="polynomial")


def test_an_indefinite_D_is_refused_where_the_problem_needs_a_psd_kernel():
    n = 12
    D = _indefinite(n)
    top, tol = cnd_excess(D)
    assert top > 1e-3 and top > 1e6 * tol
    y = np.where(np.arange(n) % 2, 1.0, -1.0)
    for name, options in (("kernel_svm", dict(c=1.0)), ("kernel_ridge", dict(lam=0.1))):
        with pytest.raises(InputError, match="not conditionally negative definite"):
            G(name)(D, y, kernel="precomputed", **options)
    for name in ("klasso", "robust_l1"):  # convex for any kernel: accepted
        assert G(name)(D, y, lam=0.1, kernel="precomputed").kernel == "precomputed"


@pytest.mark.parametrize("make", [lambda X: _sq(X, X), lambda X: _l1(X, X), lambda X: np.sqrt(_sq(X, X))],
                         ids=["squared-euclidean", "l1", "euclidean"])
def test_conditionally_negative_definite_distances_pass(make):
    X, y = make_classification(n=30, d=3, seed=6)
    D = make(X)
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0.0)
    top, tol = cnd_excess(D)
    assert top <= tol
    assert G("kernel_svm")(D, y, c=1.0, kernel="precomputed").kernel == "precomputed"


# ---------------------------------------------------------------------------- paths
def _cases():
    Xc, yc = make_classification(n=24, d=2, seed=3)
    Xr, yr = _regression_data()
    Xo, yo = make_sinc(n=24, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=7)
    Xo = np.column_stack([Xo, np.random.default_rng(7).uniform(-1.0, 1.0, (24, 1))])
    return [("kernel_svm", Xc, yc, dict(c=1.0), (2.0**-3, 2.0**3), 0.5),
            ("klasso", Xr, yr, dict(lam=0.1), (0.5, 8.0), 0.05),
            ("robust_l1", Xo, yo, dict(lam=0.1), (0.5, 4.0), 0.3),
            ("kernel_ridge", Xr, yr, dict(lam=0.1), (2.0**-3, 2.0**3), 0.05)]


@pytest.mark.parametrize("family", ["laplacian", "precomputed"])
@pytest.mark.parametrize("name,X,y,options,interval,eps", _cases(), ids=[c[0] for c in _cases()])
def test_family_paths_are_certified_and_eps_close_to_tight_solves_at_30_random_t(name, X, y, options, interval, eps,
                                                                               family, tmp_path):
    cls = G(name)
    if family == "laplacian":
        problem = cls(X, y, kernel="laplacian", **options)
        reference = cls(_l1(X, X), y, kernel="precomputed", **options)  # the same D, built here
    else:
        D = np.sqrt(_sq(X, X)) if cls.Bound.kernel_psd else _indefinite(len(y))  # a CND D where PSD is needed
        problem = reference = cls(D, y, kernel="precomputed", **options)
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    assert path.certified, path.summary()
    assert path.meta["kernel"].startswith(family) and path.meta["options"]["kernel"] == family
    report = verify(path.save(tmp_path / "cert.npz"), problem.X, y)
    assert report.ok and report.certified == len(path.pieces) and not report.notes, str(report)
    worst = -np.inf
    for t in np.exp(np.random.default_rng(30).uniform(*np.log(interval), 30)):
        point = path.primal(t)
        scale = 1.0 + abs(problem.dual_objective(path.dual(t), t))
        assert problem.primal_violation(point, t) <= 1e-9 * scale
        sub = problem.primal_objective(point, t) - tight_optimum(reference, t)
        assert sub <= eps + 1e-6 * scale, (t, sub)
        worst = max(worst, sub)
    assert worst > 0.01 * eps  # the check has teeth: the path is not trivially exact


def test_ard_path_is_certified_and_differs_from_the_gaussian_one(tmp_path):
    X, y = make_classification(n=24, d=2, seed=3)
    ard = G("kernel_svm")(X, y, c=1.0, kernel="ard", feature_weights=(1.0, 0.25))
    path = approxpath.approximate_path(ard, eps=0.5, interval=(2.0**-3, 2.0**3))
    assert path.certified and verify(path.save(tmp_path / "ard.npz"), X, y).ok
    scaled = G("kernel_svm")(X * np.array([1.0, 0.5]), y, c=1.0)  # the same kernel, up to rounding
    np.testing.assert_allclose(ard.gram(1.3), scaled.gram(1.3), rtol=1e-12)
    assert not np.allclose(ard.gram(1.3), G("kernel_svm")(X, y, c=1.0).gram(1.3))


# ---------------------------------------------------------------------------- certificates
def _laplacian_certificate(tmp_path, family="laplacian"):
    X, y = _regression_data()
    data = X if family == "laplacian" else _l1(X, X)
    problem = G("klasso")(data, y, lam=0.1, kernel=family)
    path = approxpath.approximate_path(problem, eps=0.05, interval=(0.5, 8.0))
    return path.save(tmp_path / f"{family}.npz"), data, y


def test_the_certificate_records_the_family_and_verify_compares_it(tmp_path):
    cert, X, y = _laplacian_certificate(tmp_path)
    from approxpath.certificate.format import read_certificate
    from approxpath.kernel_families import distances_sha256

    _, meta = read_certificate(cert)
    assert meta["kernel"].startswith("laplacian") and meta["distances_sha256"] == distances_sha256(_l1(X, X))
    # the description must be the family's
    gaussian = "gaussian: k_t(x, x') = exp(-t * ||x - x'||^2)"
    forged = tamper(cert, tmp_path / "k.npz", lambda a, m: m.__setitem__("kernel", gaussian), rehash=True)
    report = verify(forged, X, y)
    assert not report.ok and "is not the one its options build" in report.failures[0]
    # a computed D whose bits differ from the writer's is noted (the bounds allow for its rounding)
    other = tamper(cert, tmp_path / "s.npz", lambda a, m: m.__setitem__("distances_sha256", "0" * 64), rehash=True)
    report = verify(other, X, y)
    assert report.ok and "differ in their last bits" in report.notes[0]
    # ... a precomputed one is data: a failure
    cert, D, y = _laplacian_certificate(tmp_path, "precomputed")
    other = tamper(cert, tmp_path / "p.npz", lambda a, m: m.__setitem__("distances_sha256", "0" * 64), rehash=True)
    report = verify(other, D, y)
    assert not report.ok and "precomputed D differs" in report.failures[0]
    # another D altogether does not match the data hash
    with pytest.raises(InputError, match="do not match"):
        verify(cert, D * 1.01, y)


def test_precomputed_predictions_name_d_new():
    """A NaN in D_new was "X contains NaN"; one point's distances as a 1-D array was "the new
    points have 1 columns" (and then "D_new has 1 column(s)", although it has 20 entries)."""
    X, y = make_classification(n=20, d=2, seed=1)
    D = np.sqrt(_sq(X, X))
    problem = G("kernel_svm")(D, y, c=1.0, kernel="precomputed")
    primal = approxpath.approximate_path(problem, eps=0.5, interval=(0.5, 2.0)).primal(1.0)
    bad = D[:3].copy()
    bad[0, 1] = np.nan
    with pytest.raises(InputError, match=r"^D_new contains NaN or inf \(first at row 0, column 1\)"):
        problem.predict(primal, 1.0, bad)
    with pytest.raises(InputError, match=r"D_new is 1-D \(20 entries\): the distances of one new point are the "
                       r"\(1, n\) array D_new\[None, :\]"):
        problem.predict(primal, 1.0, D[0])
    # as D_new[None, :] the point gets the decision value of the model, sum_j w_j exp(-t D_j) + b
    f = np.exp(-1.0 * D[0]) @ primal.w + primal.b
    assert problem.predict(primal, 1.0, D[0][None, :]) == pytest.approx([f], rel=1e-12)


def test_command_line_families(tmp_path, capsys):
    X, y = make_classification(n=30, d=2, seed=1)
    data = tmp_path / "cls.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    np.save(tmp_path / "D.npy", np.sqrt(_sq(X, X)))
    common = ["--data", str(data), "--format", "csv", "--c", "1", "--eps", "0.5", "--range", "2^-3", "2^3", "--json"]
    for extra in (["--kernel", "laplacian"], ["--kernel", "ard", "--feature-weights", "1,0.5"],
                  ["--kernel", "precomputed", "--distances", str(tmp_path / "D.npy")]):
        cert = tmp_path / f"{extra[1]}.npz"
        assert main(["path", "kernel_svm", *common, *extra, "--out", str(cert)]) == 0
        capsys.readouterr()
        assert main(["verify", str(cert)]) == 0  # the data file and, for precomputed, D.npy from the certificate
        assert capsys.readouterr().out.startswith("OK: ")
    assert main(["path", "kernel_svm", *common, "--kernel", "precomputed"]) == 2
    assert "--distances" in capsys.readouterr().err
    # --preprocess scales features that D does not use: refused, not recorded as if applied
    precomputed = ["--kernel", "precomputed", "--distances", str(tmp_path / "D.npy")]
    assert main(["path", "kernel_svm", *common, *precomputed, "--preprocess", "global-minmax"]) == 2
    assert "--preprocess global-minmax scales the features of --data" in capsys.readouterr().err
    # a folder is no distances file
    assert main(["path", "kernel_svm", *common, "--kernel", "precomputed", "--distances", str(tmp_path)]) == 2
    assert "is not a regular file (a folder, a pipe or a device)" in capsys.readouterr().err


@pytest.mark.parametrize("family, weights", [("gaussian", None), ("laplacian", None), ("ard", [2.0, 0.0, 0.5])])
def test_the_loewner_factor_bounds_the_kernel_at_a_smaller_bandwidth(family, weights):
    """K_t <= c K_t' for t <= t' <= ratio t: the generalized eigenvalues of (K_t, K_t') at random
    well-spread points stay at most c; and c is not far above what they reach (in one dimension
    and at a wide ratio the Gaussian's bound is nearly attained by close points)."""
    import scipy.linalg

    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(12, 3))
    D = distances(X, family, weights)
    for ratio in (1.1, 2.0, 8.0):
        c = loewner_factor(family, X, weights, ratio)
        for t in (0.1, 0.5):
            for s in np.linspace(1.0, ratio, 4):
                assert scipy.linalg.eigvalsh(np.exp(-t * D), np.exp(-t * s * D))[-1] <= c * (1 + 1e-9)
    assert loewner_factor("gaussian", X, None, 4.0) == pytest.approx(8.0)
    assert loewner_factor("precomputed", D, None, 2.0) == np.inf
    # in one dimension, points close together: (K_t, K_4t) reaches most of its bound 2
    x = np.linspace(0, 0.05, 6)[:, None]
    top = scipy.linalg.eigvalsh(np.exp(-(x - x.T) ** 2), np.exp(-4 * (x - x.T) ** 2))[-1]
    assert top > 1.2 and top <= loewner_factor("gaussian", x, None, 4.0)


def test_distances_sha256_hashes_the_shape_and_the_float64_bytes():
    """The digest of the array's own buffer: the sha256 of its shape's repr and its bytes, as
    certificates have recorded it since 0.4.0 (a non-contiguous or integer input as its
    contiguous float64 copy)."""
    import hashlib

    from approxpath.kernel_families import distances_sha256

    D = np.arange(12.0).reshape(3, 4) ** 1.5
    ref = hashlib.sha256(b"(3, 4)" + D.tobytes()).hexdigest()
    assert distances_sha256(D) == ref
    assert distances_sha256(np.asfortranarray(D)) == ref
    assert distances_sha256(np.arange(6).reshape(2, 3)) == hashlib.sha256(
        b"(2, 3)" + np.arange(6.0).reshape(2, 3).tobytes()).hexdigest()
