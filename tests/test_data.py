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


@pytest.mark.parametrize("index", ["\u00b2", "\u0661", "\uff11"])
def test_a_libsvm_index_of_non_ascii_digits_is_refused(tmp_path, index):
    """``str.isdigit`` took '²' (then int() failed: a bare ValueError) and '١' (read as 1)."""
    from approxpath.errors import InputError

    f = tmp_path / "d.libsvm"
    f.write_text(f"1 1:2\n-1 {index}:3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: .* is not index:value"):
        load_data(f)


def test_a_validation_file_counts_its_indices_as_the_training_file_does(tmp_path):
    """Read alone, a 0-based set's validation file without an index 0 counted from 1: every
    column shifted by one, silently."""
    from approxpath.data import load_train_validation
    from approxpath.errors import InputError

    train, val, one = tmp_path / "train", tmp_path / "val", tmp_path / "one"
    train.write_text("1 0:1 1:2\n-1 0:3 1:4\n")
    val.write_text("1 1:2\n-1 1:4\n")
    one.write_text("1 1:1 2:2\n-1 1:3 2:4\n")
    np.testing.assert_array_equal(load_data(val)[0], [[2.0], [4.0]])  # (alone: from 1)
    X, y, X_val, y_val = load_train_validation(train, val)
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(X_val, [[0.0, 2.0], [0.0, 4.0]])
    np.testing.assert_array_equal(y_val, [1.0, -1.0])
    np.testing.assert_array_equal(load_train_validation(one, val)[2], [[2.0, 0.0], [4.0, 0.0]])  # 1-based both
    with pytest.raises(InputError, match=r"'.*one', line 1: feature index 0 where indices count from 1"):
        load_train_validation(val, train.rename(one))  # (a 1-based training file, a validation file with index 0)


def test_validation_data_are_scaled_as_the_training_data():
    """``--val-data`` was scaled by its own minimum and range: the model saw other features."""
    X = np.array([[1.0, 5.0], [3.0, -1.0]])
    V = np.array([[2.0, 2.0], [0.0, 9.0]])
    np.testing.assert_allclose(preprocess(V, "global-minmax", like=X), (V + 1.0) / 6.0)
    np.testing.assert_array_equal(preprocess(X, "global-minmax", like=X), preprocess(X, "global-minmax"))
    from approxpath.errors import InputError

    for bad in (np.empty((0, 2)), np.array([[np.nan, 1.0]])):
        with pytest.raises(InputError, match="^like .* must be non-empty and finite$"):
            preprocess(V, "global-minmax", like=bad)


def test_the_command_line_reads_and_scales_val_data_as_data(tmp_path):
    """``--val-data`` with ``--preprocess global-minmax``: each file was scaled by its own
    minimum and range, and read with its own LIBSVM indexing."""
    import argparse

    from approxpath.cli.commands import load_with_validation

    train, val = tmp_path / "train", tmp_path / "val"
    train.write_text("1 0:1 1:5\n-1 0:3 1:-1\n")
    val.write_text("1 1:2\n-1 1:9\n")
    args = argparse.Namespace(data=str(train), val_data=str(val), format="libsvm", n_features=None,
                              preprocess="global-minmax")
    X, y, X_val, y_val, fmt, prep = load_with_validation(args)
    np.testing.assert_allclose(X, (np.array([[1.0, 5.0], [3.0, -1.0]]) + 1.0) / 6.0)
    np.testing.assert_allclose(X_val, (np.array([[0.0, 2.0], [0.0, 9.0]]) + 1.0) / 6.0)
    assert (fmt, prep) == ("libsvm", "global-minmax") and list(y_val) == [1.0, -1.0]
