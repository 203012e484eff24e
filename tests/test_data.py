import numpy as np
import pytest

from approxpath.data import data_sha256, load_data, make_classification, make_sinc, preprocess


def test_csv_with_and_without_header(tmp_path):
    X, y = make_classification(n=10, d=2, seed=0)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    np.savetxt(a, np.column_stack([X, y]), delimiter=",", header="x1,x2,y", comments="")
    np.savetxt(b, np.column_stack([X, y]), delimiter=",")
    for f in (a, b):
        X2, y2 = load_data(f, "csv")
        np.testing.assert_allclose(X2, X)
        np.testing.assert_allclose(y2, y)


def test_csv_checks_n_features(tmp_path):
    from approxpath.errors import InputError

    X, y = make_classification(n=10, d=2, seed=0)
    f = tmp_path / "a.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    np.testing.assert_allclose(load_data(f, "csv", n_features=2)[0], X)
    with pytest.raises(InputError, match="has 2 feature column.* not the 3 asked for"):
        load_data(f, "csv", n_features=3)
    with pytest.raises(ValueError, match="n_features"):
        load_data(f, "csv", n_features=0)


def test_libsvm(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = make_classification(n=10, d=3, seed=0)
    f = tmp_path / "d.libsvm"
    dump_svmlight_file(X, y, str(f))
    X2, y2 = load_data(f)
    np.testing.assert_allclose(X2, X, rtol=1e-12)
    np.testing.assert_array_equal(y2, y)


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_data(tmp_path / "nope")
    (tmp_path / "x").write_text("1,2\n")
    with pytest.raises(ValueError, match="unknown data format"):
        load_data(tmp_path / "x", "arff")


def test_global_minmax_is_one_affine_map():
    X = np.array([[1.0, 5.0], [3.0, -1.0]])
    Z = preprocess(X, "global-minmax")
    assert Z.min() == 0.0 and Z.max() == 1.0
    np.testing.assert_allclose(Z, (X + 1.0) / 6.0)
    with pytest.raises(ValueError):
        preprocess(X, "zscore")


def test_sinc_is_seeded_and_has_outliers():
    X1, y1 = make_sinc(100, seed=3, outliers=0.1)
    X2, y2 = make_sinc(100, seed=3, outliers=0.1)
    np.testing.assert_array_equal(y1, y2)
    resid = np.abs(y1 - np.sinc(X1[:, 0]))
    assert (resid > 1.0).sum() == 10  # the 10 % outliers, far beyond the noise
    assert X1.shape == (100, 1) and np.all(np.diff(X1[:, 0]) >= 0)


def test_hash_sees_every_bit():
    X, y = make_classification(n=10, seed=0)
    Z = X.copy()
    Z[3, 1] = np.nextafter(Z[3, 1], 2.0)
    assert data_sha256(X, y) != data_sha256(Z, y)
