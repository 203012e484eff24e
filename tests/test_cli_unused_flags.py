"""Flags a command would ignore are refused, a directory named as an output is told with its flag,
and a usage error prints nothing on standard output."""

import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_sinc


@pytest.fixture(scope="module")
def sinc_csv(tmp_path_factory):
    X, y = make_sinc(n=40, seed=0)
    f = tmp_path_factory.mktemp("data") / "s.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    return str(f)


@pytest.mark.parametrize("argv, words", [
    (["figure", "exact-path", "--parameter", "lam", "--theta", "0.5"], "--theta is for the kernel path only"),
    (["figure", "validation", "robust_l1", "--lam", "0.1", "--eps", "1", "--n-grid", "10"],
     "--n-grid sets the grid of --selection grid; this is --selection pieces"),
    (["figure", "validation", "robust_l1", "--lam", "0.1", "--eps", "1", "--seed", "1"],
     "--seed seeds the split of --data"),
])
def test_a_flag_the_command_would_ignore_is_refused(argv, words, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert words in captured.err and captured.out == ""


def test_crosscheck_samples_of_a_path_checked_at_its_points_only(sinc_csv, tmp_path, capsys):
    out = str(tmp_path / "lam.npz")
    assert main(["exact", "klasso", "--data", sinc_csv, "--parameter", "lam", "--bandwidth", "1", "--range", "0.01",
                 "2", "--out", out]) == 0
    capsys.readouterr()
    base = ["crosscheck", "klasso", "--data", sinc_csv, "--bandwidth", "1", "--parameter", "lam", "--path", out]
    assert main([*base, "--not-linear", "--samples", "3"]) == 2
    assert "--samples samples the segments of a path claimed linear" in capsys.readouterr().err
    assert main([*base, "--samples", "3"]) == 0  # (the file says linear)


def test_figure_exact_path_json_says_an_incomplete_path_is_not_ok(tmp_path, capsys):
    """Its JSON said "ok": true (and had no "complete") where the command exited 4."""
    X, y = make_sinc(n=50, seed=0)
    data = tmp_path / "dup.csv"
    np.savetxt(data, np.column_stack([np.vstack([X, X[:1]]), np.append(y, y[0])]), delimiter=",")
    rc = main(["figure", "exact-path", "--data", str(data), "--format", "csv", "--parameter", "bandwidth", "--lam",
               "0.01", "--range", "0.1", "10", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 4 and out["ok"] is False and out["complete"] is False


@pytest.mark.parametrize("flag, example", [("--plot", "figure.png"), ("--export", "table.csv"), ("--out", "cert.npz")])
def test_a_directory_named_as_an_output_is_told_with_its_flag(flag, example, tmp_path, sinc_csv, capsys):
    """It said "output 'adir' is a directory: name a file, e.g. 'adir/cert.npz'" for a figure too."""
    folder = tmp_path / "adir"
    folder.mkdir()
    assert main(["path", "klasso", "--data", sinc_csv, "--format", "csv", "--lam", "0.1", "--no-progress", flag,
                 str(folder)]) == 2
    assert f"{flag} '{folder}' is a directory: name a file in it, e.g. '{folder / example}'" in capsys.readouterr().err


def test_data_and_demo_check_their_arguments_before_they_print(tmp_path, capsys):
    folder = tmp_path / "adir"
    folder.mkdir()
    assert main(["data", "sinc", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"--out '{folder}' is a directory: name a file in it, e.g. '{folder / 'data.csv'}'" in err
    assert main(["demo", "--eps", "-1", "--no-progress", "--data-out", str(tmp_path / "d.csv"),
                 "--out", str(tmp_path / "c.npz")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--eps must be a positive finite number" in captured.err


def test_resume_without_a_checkpoint_is_told_in_flags(sinc_csv, tmp_path, capsys):
    assert main(["path", "klasso", "--data", sinc_csv, "--format", "csv", "--lam", "0.1", "--no-progress", "--out",
                 str(tmp_path / "r.npz"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "run without --resume" in err and "resume=True" not in err
