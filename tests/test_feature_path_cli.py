"""`approxpath features DATA`: the feature path from a data file, its files re-checked
independently (the npz through crosscheck_feature_path, the table against the path's arrays),
exit statuses."""

import json
import re
import sys

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.exact import crosscheck_feature_path
from approxpath.exact.feature_path import normalize_columns, read_feature_path
from approxpath.export import read_table

from exact_helpers import friedman1


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory):
    X, y = friedman1(40, 7, 2, raw=True)
    f = tmp_path_factory.mktemp("data") / "friedman.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",", header=",".join([f"x{j}" for j in range(7)] + ["y"]),
               comments="")
    return f, X, y


def _json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_features_writes_a_path_that_rechecks_and_a_table(data_csv, tmp_path, capsys):
    f, X, y = data_csv
    out, table = tmp_path / "fp.npz", tmp_path / "fp.csv"
    rc = main(["features", str(f), "--kappa", "0.5", "--max-events", "4", "--segments", "--out", str(out),
               "--export", str(table), "--json"])
    res = _json(capsys)
    assert rc == (0 if res["segments"]["certified_fraction"] == 1.0 else 1)
    assert res["events"] == 4 and res["flagged"] == [] and res["max_rel_gap"] <= 1e-8
    yc2 = float(np.sum((y - y.mean()) ** 2))
    assert res["C"] == pytest.approx(0.5 * yc2, rel=1e-12)
    a = read_feature_path(out)
    assert a["meta"]["scaling"] == "paper" and a["meta"]["data_file"] == str(f)
    assert f"numpy {np.__version__}" in a["meta"]["machine"]["packages"]  # which machine made it
    rep = crosscheck_feature_path(normalize_columns(X), y, a["D"], a["beta"], a["alpha"], a["alpha0"], C=res["C"])
    assert rep.ok and len(rep.checks) == res["points"]
    t = read_table(table)
    np.testing.assert_array_equal(t["D"], a["D"])
    np.testing.assert_array_equal(np.column_stack([t[f"beta{j + 1}"] for j in range(7)]), a["beta"])
    assert np.all(np.isnan(t["segment_gap"][-1:])) and np.all(t["segment_gap"][:-1] >= 0)
    assert int(np.sum(t["event"] != 0)) == 4 and set(t["event"].tolist()) <= {-1.0, 0.0, 1.0}
    # verify, which checks certificates, says what the file is and how to re-check it (it listed
    # seven missing meta fields and a kernel complaint)
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr().out.strip().splitlines()
    assert said == ["FAILED: nothing was checked", "  - a feature path's file (approxpath features --out), not a "
                    "certificate: re-check it in Python with approxpath.exact.crosscheck_feature_path on the arrays of "
                    "approxpath.exact.feature_path.read_feature_path(FILE)"]


def test_features_exit_status_one_when_flagged(data_csv, capsys):
    f, _, _ = data_csv
    # an inner gap of 1e-30 ||Hy||^2 cannot be certified in double precision: every point flagged
    assert main(["features", str(f), "--max-events", "1", "--tol", "1e-30", "--json"]) == 1
    assert not _json(capsys)["ok"]
    # the text summary names the first flagged points and why
    assert main(["features", str(f), "--max-events", "1", "--tol", "1e-30"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"    point 0 \(D = [0-9.e+-]+\): inner gap .*\n    point 1 ", out) and "more (their indices" in out


@pytest.mark.parametrize("argv, code, words", [
    (["--C", "1", "--kappa", "1"], 2, "--C or --kappa"),
    (["--kappa", "-1"], 2, "--kappa"),
    (["--kernel", "ard-polynomial", "--degree", "0"], 2, "degree"),
    (["--C", "1e12"], 4, "solver failure"),
])
def test_features_errors_are_one_line(data_csv, capsys, argv, code, words):
    f, _, _ = data_csv
    assert main(["features", str(f), "--max-events", "1", *argv]) == code
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1


def test_features_missing_file_and_help(tmp_path, capsys):
    assert main(["features", str(tmp_path / "none.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        from approxpath.cli import build_parser

        build_parser(["--help"]).parse_args(["--help"])
    assert "features" in capsys.readouterr().out


def test_constant_targets_are_refused_by_name(tmp_path, capsys):
    """Constant targets made the default C = 2 ||y - mean(y)||^2 zero, refused as "C must be a
    positive finite number; got 0.0" although no --C was given."""
    rng = np.random.default_rng(0)
    data = tmp_path / "const.csv"
    np.savetxt(data, np.column_stack([rng.normal(size=(20, 3)), np.ones(20)]), delimiter=",")
    assert main(["features", str(data)]) == 2
    assert "targets" in capsys.readouterr().err


def test_segment_pieces_is_named_as_its_flag(data_csv, capsys):
    """``--segment-pieces 0`` said "max_pieces must be a positive integer"."""
    assert main(["features", str(data_csv[0]), "--segments", "--segment-pieces", "0"]) == 2
    assert "--segment-pieces must be a positive integer" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["--segment-eps", "0.1"], ["--segment-pieces", "8"]])
def test_segment_options_without_segments_are_refused(data_csv, capsys, flag):
    """``--segment-eps`` / ``--segment-pieces`` without ``--segments`` were silently unused."""
    assert main(["features", str(data_csv[0]), *flag]) == 2
    assert f"{flag[0]} sets how the segments are certified: it needs --segments" in capsys.readouterr().err


def test_the_segments_show_progress(data_csv, capsys, monkeypatch):
    """``features --segments`` was silent for its tens of seconds: a bar over the segments on
    stderr where it is a terminal, none with --no-progress, none where stderr is a pipe or a file."""
    pytest.importorskip("tqdm")
    argv = ["features", str(data_csv[0]), "--segments", "--segment-pieces", "2"]
    shown = main(argv)
    assert "segments:" not in capsys.readouterr().err  # (capsys' stderr is no terminal)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(argv) == shown
    assert "segments:" in capsys.readouterr().err
    assert main(argv + ["--no-progress"]) == shown  # the same run, silent
    assert "segments:" not in capsys.readouterr().err


def test_a_degenerate_start_at_a_huge_c_says_what_to_change(tmp_path, capsys):
    # kappa = 1e8: the start was "degenerate" with nothing to change named
    from approxpath.data import make_friedman1

    X, y = make_friedman1(n=60)
    f = tmp_path / "f.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    assert main(["features", str(f), "--kappa", "1e8", "--no-progress"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the start is degenerate (at C = " in err and "a smaller C" in err
    assert main(["features", str(f), "--kappa", "2", "--max-events", "2", "--no-progress", "--json"]) == 0


def test_degree_without_the_polynomial_kernel_is_refused(data_csv, capsys):
    """``--degree 3`` with the default ard-gaussian kernel was ignored without a word."""
    assert main(["features", str(data_csv[0]), "--degree", "3"]) == 2
    assert capsys.readouterr().err.strip() == ("approxpath: error: --degree is the power of --kernel ard-polynomial; "
                                               "the ard-gaussian kernel has none")


def test_a_duplicate_feature_ends_the_path_short_with_exit_4(tmp_path, capsys):
    """A copy of a feature made the path singular at its first event: 1 point of a path that goes
    to D = 18.9 without the copy, reported ``"ok": true``, exit 0."""
    from approxpath.data import make_friedman1

    X, y = make_friedman1(n=60, seed=1)
    plain, data = tmp_path / "plain.csv", tmp_path / "dup.csv"
    np.savetxt(plain, np.column_stack([X, y]), delimiter=",")
    np.savetxt(data, np.column_stack([X, X[:, 3], y]), delimiter=",")
    assert main(["features", str(plain), "--no-progress", "--json"]) == 0  # (without the copy)
    assert json.loads(capsys.readouterr().out)["failed"] is False
    assert main(["features", str(data), "--no-progress"]) == 4
    out, err = capsys.readouterr()
    assert err.startswith("approxpath: incomplete feature path: it ends at D = ") and err.count("\n") == 1
    assert "the path is incomplete" in out
    assert main(["features", str(data), "--no-progress", "--json"]) == 4
    got = json.loads(capsys.readouterr().out)
    assert got["ok"] is False and got["failed"] is True


@pytest.mark.parametrize("scale", [1e160, 1e-300])
def test_the_papers_scaling_does_not_depend_on_a_columns_units(scale):
    """A column times 1e160 had an infinite norm and became all zeros (never selected, exit 0);
    times 1e-300 its squares underflowed and it was taken for a constant."""
    X = np.random.default_rng(0).standard_normal((30, 4))
    scaled = X.copy()
    scaled[:, 2] *= scale
    np.testing.assert_allclose(normalize_columns(scaled), normalize_columns(X), rtol=1e-13, atol=1e-15)
