"""Tables of exact and approximate paths: written as csv and pgfplots .dat, read back exactly, and
their columns against independent computations."""

import numpy as np
import pytest

import approxpath
from approxpath.errors import InputError
from approxpath.exact import certify, kernel_path, lambda_path
from approxpath.export import exact_path_table, export_table, read_table
from approxpath.compute.distances import cross_sq_distances
from approxpath.compute.kernels import gaussian
from exact_helpers import objective, wang_sinc


@pytest.fixture(scope="module")
def data():
    return wang_sinc(0)


@pytest.fixture(scope="module")
def lam_path(data):
    return lambda_path(*data, 1.0, lam_min=1e-3)


def _equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and (np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


@pytest.mark.parametrize("fmt", ["csv", "dat"])
def test_exact_path_table_round_trip_and_columns(data, lam_path, tmp_path, fmt):
    X, y = data
    Xv, yv = wang_sinc(1)
    report = certify(lam_path, tol=1e-8, relative=True)
    f = export_table(lam_path, tmp_path / f"lam.{fmt}", report=report, X_val=Xv, y_val=yv)
    written = exact_path_table(lam_path, report=report, X_val=Xv, y_val=yv)
    back = read_table(f)
    assert list(back) == ["t", "active", "events", "beta0", "l1", "objective", "train_mse", "cond", "gap", "val_mse"]
    assert all(_equal(back[k], written[k]) for k in written)  # 17 digits: every float comes back exactly
    np.testing.assert_array_equal(back["t"], lam_path.t)
    np.testing.assert_array_equal(back["beta0"], lam_path.beta0)
    np.testing.assert_array_equal(back["gap"], [c.gap for c in report.points])
    assert back["events"].sum() == len(lam_path.events)
    np.testing.assert_array_equal(back["active"], np.abs(lam_path.signs).sum(axis=1))
    for k in (0, lam_path.t.size // 2, lam_path.t.size - 1):
        lam, b, b0 = lam_path.t[k], lam_path.beta[k], lam_path.beta0[k]
        assert back["objective"][k] == pytest.approx(objective(X, y, 1.0, lam, b, b0), rel=1e-12)
        e = yv - gaussian(cross_sq_distances(Xv, X), 1.0) @ b - b0
        assert back["val_mse"][k] == pytest.approx(np.mean(e * e), rel=1e-12)
    text = f.read_text().splitlines()
    if fmt == "dat":  # pgfplots: a comment line, a header of names, whitespace-separated numbers
        assert text[0].startswith("# approxpath lambda-path") and text[1].split() == list(back)
        assert "," not in "".join(text[1:])
    else:
        assert text[0].split(",") == list(back)


def test_kernel_path_table(data, tmp_path):
    X, y = data
    kp = kernel_path(X, y, 0.1, (0.5, 2.0))
    back = read_table(export_table(kp, tmp_path / "kernel.dat"))
    np.testing.assert_array_equal(back["t"], kp.t)
    assert "gap" not in back and "val_mse" not in back
    k = kp.t.size // 3
    assert back["objective"][k] == pytest.approx(objective(X, y, kp.t[k], 0.1, kp.beta[k], kp.beta0[k]), rel=1e-12)


@pytest.mark.parametrize("fmt", ["csv", "dat"])
def test_approximate_path_piece_table_round_trip(data, tmp_path, fmt):
    problem = approxpath.get_problem("klasso")(*data, lam=0.1, parameter="bandwidth")
    path = approxpath.approximate_path(problem, eps=1e-2, interval=(0.5, 2.0))
    back = read_table(export_table(path, tmp_path / f"pieces.{fmt}"))
    assert list(back) == ["lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi"]
    np.testing.assert_array_equal(back["lo"], [p.lo for p in path.pieces])
    np.testing.assert_array_equal(back["hi"], [p.hi for p in path.pieces])
    np.testing.assert_array_equal(back["gap_bound"], [p.gap_bound for p in path.pieces])
    assert back["kind"].tolist() == [p.kind for p in path.pieces]
    np.testing.assert_array_equal(back["anchor_lo"], [p.anchors[0] for p in path.pieces])
    assert back["hi"][-1] == 2.0 and np.all(back["gap_bound"] <= 1e-2)


def test_format_from_the_suffix_and_bad_input(data, lam_path, tmp_path):
    export_table(lam_path, tmp_path / "x.dat")
    assert (tmp_path / "x.dat").read_text().startswith("# ")  # .dat from the suffix
    export_table(lam_path, tmp_path / "x.txt")
    assert (tmp_path / "x.txt").read_text().startswith("t,active,")  # csv otherwise
    assert read_table(tmp_path / "x.txt")["t"].size == read_table(tmp_path / "x.dat")["t"].size == lam_path.t.size
    with pytest.raises(InputError, match="format"):
        export_table(lam_path, tmp_path / "x.csv", format="xlsx")
    with pytest.raises(InputError, match=r"x.tsv: a table is written as .csv \(or .txt\) or .dat \(pgfplots\), not "
                                         r".tsv"):  # (comma-separated before, without a word)
        export_table(lam_path, tmp_path / "x.tsv")
    assert not (tmp_path / "x.tsv").exists()
    with pytest.raises(InputError, match="exact path"):
        export_table({"t": [1.0]}, tmp_path / "x.csv")
    other = lambda_path(*data, 2.0)
    with pytest.raises(InputError, match="report must be certify"):
        export_table(lam_path, tmp_path / "x.csv", report=certify(other))
    with pytest.raises(InputError, match="both X_val and y_val"):
        export_table(lam_path, tmp_path / "x.csv", X_val=data[0])
    with pytest.raises(FileNotFoundError):
        read_table(tmp_path / "missing.csv")
    (tmp_path / "ragged.dat").write_text("# a table\na b\n1 2\n3\n")
    with pytest.raises(InputError, match="row 2 has 1 entries"):
        read_table(tmp_path / "ragged.dat")
