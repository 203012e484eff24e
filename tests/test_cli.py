import json
import re

import numpy as np
import pytest

from approxpath.cli import main, parse_number
from approxpath.data import make_classification


@pytest.fixture
def libsvm_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = make_classification(n=40, d=3, seed=2)
    f = tmp_path / "train.libsvm"
    dump_svmlight_file(X, y, str(f))
    return f


def test_parse_number():
    assert parse_number("2^-10") == 2.0**-10 and parse_number("2**3") == 8.0
    assert parse_number("1e-3") == 1e-3 and parse_number("0.5") == 0.5
    # a power's sign is outside it, as in mathematics; float("-2") ** 0.5 was a complex number
    assert parse_number("-2^0.5") == -(2.0**0.5) and parse_number("-2^2") == -4.0 and parse_number("+2^3") == 8.0


def test_n_features_is_recorded_and_verify_reads_the_data_with_it(libsvm_file, tmp_path):
    """A LIBSVM file read with --n-features (the a-series' convention): the certificate records it,
    and a plain ``verify`` reads the file as the run did (it failed on d before)."""
    cert = tmp_path / "nf.npz"
    assert main(["path", "kernel_svm", "--data", str(libsvm_file), "--n-features", "7", "--c", "1", "--eps", "0.5",
                 "--range", "2^-1", "2^2", "--out", str(cert), "--no-progress"]) == 0
    with np.load(cert) as z:
        meta = json.loads(str(z["meta"]))
    assert meta["n_features"] == 7 and meta["d"] == 7
    assert main(["verify", str(cert), "--no-progress"]) == 0


def test_verify_reads_the_recorded_file_whose_data_match(tmp_path, monkeypatch, capsys):
    """A file of the recorded name in the current folder with other data does not hide the one
    next to the certificate; where no candidate matches, the message names the file read."""
    from approxpath.data import make_classification

    sub, other = tmp_path / "sub", tmp_path / "other"
    sub.mkdir(), other.mkdir()
    for folder, n, seed in ((sub, 40, 3), (other, 30, 0)):
        X, y = make_classification(n=n, d=2, seed=seed)
        np.savetxt(folder / "d.csv", np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="")
    monkeypatch.chdir(sub)
    assert main(["path", "kernel_svm", "--data", "d.csv", "--c", "0.1", "--eps", "0.5", "--range", "0.5", "8",
                 "--out", "c.npz", "--no-progress"]) == 0
    monkeypatch.chdir(other)
    capsys.readouterr()
    assert main(["verify", "../sub/c.npz", "--no-progress"]) == 0
    assert "../sub/d.csv" in capsys.readouterr().out
    (sub / "d.csv").unlink()
    assert main(["verify", "../sub/c.npz", "--no-progress"]) == 1
    assert "the data were read from 'd.csv', the file the certificate records" in capsys.readouterr().out


def test_data_is_written_as_data_reads_it_and_a_checkpoint_is_an_npz(tmp_path, monkeypatch, capsys):
    """``data --out s.txt`` wrote CSV, which ``--data s.txt`` reads as LIBSVM; a checkpoint named
    ``.csv`` was an npz archive."""
    monkeypatch.chdir(tmp_path)
    assert main(["data", "sinc", "--n", "30", "--out", "s.txt"]) == 0
    assert "--format libsvm" in capsys.readouterr().out and open("s.txt").readline().split()[1].startswith("1:")
    assert main(["path", "klasso", "--data", "s.txt", "--lam", "0.1", "--range", "1", "2", "--no-progress"]) == 0
    assert main(["path", "klasso", "--data", "s.txt", "--lam", "0.1", "--checkpoint", "c.csv", "--no-progress"]) == 2
    assert "a checkpoint is written as .npz" in capsys.readouterr().err


def test_negative_power_is_refused_in_words(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n" + "".join(f"{i / 10},{i % 3}\n" for i in range(12)))
    assert main(["path", "klasso", "--data", str(data), "--lam=-2^0.5", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "-1.414" in err and "j)" not in err


def test_path_json_verify_and_tamper(libsvm_file, tmp_path, capsys):
    cert = tmp_path / "cert.npz"
    rc = main(["path", "kernel_svm", "--data", str(libsvm_file), "--preprocess", "global-minmax", "--c", "1",
               "--bias", "dynamic", "--eps", "0.5", "--range", "2^-3", "2^4", "--out", str(cert), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {"problem", "eps", "range", "exact_solves", "pieces", "max_gap_bound", "certified", "wall_s"} <= set(out)
    assert out["certified"] and out["problem"] == "kernel_svm" and out["range"] == [0.125, 16.0]
    # verify re-reads the data file and preprocessing recorded in the certificate
    assert main(["verify", str(cert)]) == 0
    assert "OK" in capsys.readouterr().out
    z = dict(np.load(cert))
    z["dual_alpha"] = z["dual_alpha"].copy()
    z["dual_alpha"][0, 0, 0] += 1e-3
    np.savez(tmp_path / "bad.npz", **z)
    assert main(["verify", str(tmp_path / "bad.npz"), "--data", str(libsvm_file), "--preprocess", "global-minmax"]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_path_summary_and_plot(libsvm_file, tmp_path, capsys):
    png = tmp_path / "bounds.png"
    rc = main(["path", "kernel_svm", "--data", str(libsvm_file), "--c", "1", "--eps", "1",
               "--range", "0.5", "4", "--plot", str(png), "--no-progress"])
    assert rc == 0 and png.stat().st_size > 1000
    out = capsys.readouterr().out
    assert "exact solves" in out and "c=1.0" in out.splitlines()[0]
    # over C, the fixed C the path replaces is not shown as an option of the run
    assert main(["path", "kernel_svm", "--data", str(libsvm_file), "--parameter", "c", "--bandwidth", "1",
                 "--eps", "1", "--range", "0.5", "4", "--no-progress"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("kernel_svm over c (") and "bandwidth=1.0" in head and "c=" not in head


@pytest.mark.parametrize("argv,match", [
    (["path", "kernel_svn"], "did you mean 'kernel_svm'"),
    (["path", "kernel_svm", "--option", "gama=1"], "unknown option 'gama'"),
    # a keyword set twice: the later was taken without a word
    (["path", "kernel_svm", "--c", "0.5", "--option", "c=2"], "--c and --option c=2 both set 'c': give it once"),
    (["path", "kernel_svm", "--option", "c=1", "--option", "c=2"], "--option c=... and --option c=2 both set 'c'"),
    # an output named for another format: an npz certificate named .csv, a CSV table named .tsv
    (["path", "kernel_svm", "--out", "cert.csv"], "--out cert.csv: the file is written as .npz; name it so"),
    (["path", "kernel_svm", "--export", "t.tsv"], "--export t.tsv: a table is written as .csv (or .txt) or .dat"),
    (["path", "kernel_svm", "--eps", "0"], "eps must be"),
    (["path", "kernel_svm", "--range", "4", "1"], "lo < hi"),
    (["path", "kernel_svm", "--bias", "median"], "invalid choice: 'median'"),
    (["path", "kernel_svm", "--max-pieces", "0"], "--max-pieces must be"),
    (["path", "kernel_svm", "--solve-time-limit", "-1"], "--solve-time-limit must be"),
    # past a budget: exit 2 with what to change, no certificate claimed
    (["path", "kernel_svm", "--eps", "0.01", "--max-pieces", "3", "--no-progress"], "--relative"),
    (["path", "kernel_svm", "--eps", "0.01", "--max-solves", "2", "--no-progress"], "more than --max-solves = 2"),
])
def test_bad_input_exits_2_with_a_message(libsvm_file, capsys, argv, match):
    argv = argv[:2] + ["--data", str(libsvm_file)] + argv[2:]
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_missing_file(capsys):
    assert main(["path", "kernel_svm", "--data", "/nonexistent/file"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_problems_lists_the_registry(capsys):
    assert main(["problems"]) == 0
    assert "kernel_svm" in capsys.readouterr().out


def test_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "certified" in out
    assert (tmp_path / "demo_certificate.npz").exists() and (tmp_path / "demo_bounds.png").exists()
    assert main(["verify", "demo_certificate.npz"]) == 0
    # a long path shows one piece in k, and says so; a short one shows them all, silently
    assert main(["demo", "--no-progress", "--eps", "0.05", "--out", "fine.npz"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.endswith(tuple("0123456789")) and "certified " in line]
    step, total = map(int, re.search(r"\(one piece in (\d+) of (\d+) shown\)", out).groups())
    assert step > 1 and len(rows) == -(-total // step)


def test_option_names_are_checked_by_the_problem_class():
    """``--option`` keys go through the problem's own check (``Bound.OPTIONS``, the one its
    constructor runs): an unknown key or a value outside its domain fails before any data is read."""
    import argparse

    from approxpath import get_problem
    from approxpath.cli import problem_kwargs
    from approxpath.errors import InputError

    args = argparse.Namespace(option=["gama=1"], opt_c=None, opt_bias=None, opt_bandwidth=None, opt_parameter=None)
    svm = get_problem("kernel_svm")
    with pytest.raises(InputError, match="unknown option 'gama'"):
        problem_kwargs(svm, args)

    # declared options pass, JSON values parsed (a number) or taken as text
    assert problem_kwargs(svm, argparse.Namespace(**{**vars(args), "option": ["c=0.5", "bias=fixed"]})) == \
        {"c": 0.5, "bias": "fixed"}
    with pytest.raises(InputError, match="c must be a positive"):
        problem_kwargs(svm, argparse.Namespace(**{**vars(args), "option": ["c=-1"]}))


@pytest.mark.parametrize("module,command,args", [
    ("commands", "cmd_path", ["path", "kernel_svm", "--c", "1", "--range", "0.5", "2", "--no-progress"]),
    ("verify", "cmd_verify", ["verify"]),
    ("select", "cmd_select", ["select", "kernel_svm", "--c", "1", "--cv", "3", "--range", "0.5", "2", "--tol", "0.2",
                                  "--no-progress"]),
    ("surface", "cmd_surface", ["surface", "kernel_svm", "--eps", "0.5", "--weights", "0.5", "2", "--range", "0.5",
                                "2"]),
    ("exact", "cmd_exact", ["exact", "klasso", "--parameter", "bandwidth", "--lam", "0.1", "--range", "1", "1.5"]),
])
def test_n_jobs_sets_the_kernel_threads_of_every_long_command(module, command, args, libsvm_file, sinc_csv, tmp_path,
                                                              monkeypatch, capsys):
    """``--n-jobs`` is the kernel threads while the command runs (joblib's convention; the
    default otherwise), and a bad count is one line with exit 2 before any work."""
    import importlib

    from approxpath.compute import kernel_threads

    monkeypatch.delenv("APPROXPATH_NUM_THREADS", raising=False)
    cert = tmp_path / "c.npz"
    assert main(["path", "kernel_svm", "--data", str(libsvm_file), "--c", "1", "--range", "0.5", "2", "--out",
                 str(cert), "--no-progress"]) == 0
    data = (["--data", str(sinc_csv), "--format", "csv"] if command == "cmd_exact" else
            [str(cert)] if command == "cmd_verify" else ["--data", str(libsvm_file)])
    mod = importlib.import_module(f"approxpath.cli.{module}")
    real, seen = getattr(mod, command), []
    monkeypatch.setattr(mod, command, lambda a: (seen.append(kernel_threads()), real(a))[1])
    for flags, expected in ((["--n-jobs", "1"], 1), (["--n-jobs", "-1"], kernel_threads()), ([], kernel_threads())):
        assert main([*args, *data, *flags]) in (0, 1)  # select may stop above --tol: still ran
        assert seen.pop() == expected and not seen
    capsys.readouterr()
    assert main([*args, *data, "--n-jobs", "0"]) == 2 and not seen
    assert capsys.readouterr().err.strip().splitlines() == [
        "approxpath: error: --n-jobs must be a nonzero integer (-1: every core, -2: all but one); got 0"]


@pytest.mark.parametrize("args", [
    ["path", "kernel_svm", "--c", "1", "--range", "0.5", "2", "--no-progress"],
    ["select", "kernel_svm", "--c", "1", "--cv", "3", "--range", "0.5", "2", "--no-progress"],
    ["surface", "kernel_svm", "--eps", "0.5", "--weights", "0.5", "2", "--range", "0.5", "2"],
])
def test_plot_without_matplotlib_is_refused_before_the_run(args, libsvm_file, tmp_path, monkeypatch, capsys):
    """Without matplotlib, ``--plot`` is one line and exit 2 before any work (it was an
    internal error after the whole run); the demo skips its default figure with a note, and
    refuses a ``--plot`` given as the other commands do (it skipped that one too)."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "c.npz"
    extra = ["--out", str(out)] if args[0] != "select" else []
    assert main([*args, "--data", str(libsvm_file), "--plot", str(tmp_path / "f.png"), *extra]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "approxpath: error: --plot needs matplotlib: pip install 'approxpath[plot]' (or leave --plot out)"]
    assert not out.exists() and not (tmp_path / "f.png").exists()
    files = [str(tmp_path / name) for name in ("d.npz", "d.csv", "d.png")]
    assert main(["demo", "--no-progress", "--out", files[0], "--data-out", files[1], "--plot", files[2]]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "approxpath: error: --plot needs matplotlib: pip install 'approxpath[plot]' (or leave --plot out)"]
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-progress", "--out", files[0], "--data-out", files[1]]) == 0
    assert "install the plot extra" in capsys.readouterr().out and not (tmp_path / "demo_bounds.png").exists()


@pytest.mark.parametrize("command", [["path", "kernel_svm", "--eps", "0.5", "--range", "1", "2"],
                                     ["select", "kernel_svm", "--cv", "2", "--range", "1", "2"],
                                     ["surface", "kernel_svm", "--eps", "0.5", "--weights", "1", "2", "--range", "1", "2"]])
def test_a_figure_format_matplotlib_cannot_write_is_refused_first(tmp_path, capsys, command):
    """``--plot p.xyz`` failed in matplotlib after the whole run (and after ``--out`` was written);
    refused before any work now, one line, exit 2, nothing written."""
    pytest.importorskip("matplotlib")
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "c.npz"
    argv = [*command[:2], "--data", str(data), *command[2:], "--plot", str(tmp_path / "p.xyz")]
    argv += ["--out", str(out)] if command[0] != "select" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot write .xyz" in err and ".png" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_verify_refuses_requirements_no_certificate_can_meet(tmp_path, capsys):
    """``verify --eps -1`` failed the certificate (exit 1) and ``--relative`` without ``--eps``
    was ignored; both are usage errors now."""
    cert = tmp_path / "none.npz"  # (refused before the file is read)
    assert main(["verify", str(cert), "--eps", "-1"]) == 2
    assert "--eps must be a positive" in capsys.readouterr().err
    assert main(["verify", str(cert), "--relative"]) == 2
    assert "--relative qualifies a required --eps" in capsys.readouterr().err


def test_figure_solves_checks_every_input_before_the_first_path(tmp_path, capsys, monkeypatch):
    """``figure solves --data A B`` ran A's paths before finding B missing (or an eps of 0)."""
    import approxpath.driver as driver

    def no_path(*args, **kwargs):
        raise AssertionError("a path was computed")

    monkeypatch.setattr(driver, "approximate_path", no_path)
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    base = ["figure", "solves", "--c", "0.1", "--range", "1", "4", "--data", str(data)]
    assert main(base + [str(tmp_path / "none.csv"), "--eps", "1"]) == 2
    assert "none.csv' does not exist" in capsys.readouterr().err
    assert main(base + ["--eps", "1", "0"]) == 2
    assert "--eps takes positive finite numbers" in capsys.readouterr().err
    # a problem's option named as its flag (it said "lam=")
    assert main(["figure", "solves", "klasso", "--data", str(data), "--eps", "1", "--range", "1", "4"]) == 2
    assert "--lam" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["select", "klasso", "--lam", "0.1", "--cv", "3"],
                                  ["crosscheck", "klasso", "--lam", "0.1", "--path", "p.npz"],
                                  ["surface", "klasso", "--weights", "0.1", "1", "--range", "1", "2", "--eps", "1"]])
def test_a_precomputed_kernel_where_no_distances_are_taken_says_so(tmp_path, capsys, monkeypatch, argv):
    """These commands list --kernel precomputed among the problem's options but take no
    --distances: the problem said "takes the distance matrix D (n x n) as X; got shape (40, 1)"."""
    monkeypatch.chdir(tmp_path)
    assert main(["data", "sinc", "--out", "s.csv", "--n", "20"]) == 0
    capsys.readouterr()
    assert main([*argv[:2], "--data", "s.csv", "--kernel", "precomputed", *argv[2:]]) == 2
    assert capsys.readouterr().err.strip() == (
        "approxpath: error: --kernel precomputed takes D from --distances FILE.npy, an option of approxpath path and "
        f"verify only; approxpath {argv[0]} needs the features (--data) and a kernel of them")


def test_a_budget_spent_with_a_checkpoint_says_how_to_go_on(sinc_csv, tmp_path, capsys):
    """The budget's error said nothing of the checkpoint it left; resuming with a larger budget
    goes on from it."""
    ckpt = tmp_path / "run.npz"
    args = ["path", "klasso", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--range", "0.25", "16",
            "--eps", "0.01", "--checkpoint", str(ckpt), "--no-progress"]
    assert main(args + ["--max-solves", "3"]) == 2
    err = capsys.readouterr().err
    assert f"the checkpoint {ckpt} keeps the work so far: add --resume with a larger --max-solves" in err
    assert err.count("\n") == 1 and ckpt.exists()
    assert main(args + ["--max-solves", "500", "--resume"]) == 0


def test_a_pgf_figure_without_its_tex_is_refused_first(tmp_path, capsys, monkeypatch):
    """``--plot p.pgf`` without a TeX install: a 32-frame traceback after the run (exit 70, the
    certificate and table written); now one line before any work."""
    pytest.importorskip("matplotlib")
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "c.npz"
    assert main(["path", "kernel_svm", "--data", str(data), "--out", str(out), "--plot", str(tmp_path / "p.pgf")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("approxpath: error: --plot ") and "matplotlib writes .pgf files through" in err, err
    assert len(err.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("command, module, kept", [
    ("path", "commands", " (a checkpoint, if any, keeps the finished work: --resume)"),
    ("select", "select", ""),  # (it advised --resume, which select does not take)
])
def test_an_interrupt_advises_resume_only_where_a_command_takes_it(monkeypatch, capsys, libsvm_file, command,
                                                                   module, kept):
    import importlib

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(f"approxpath.cli.{module}"), f"cmd_{command}", interrupted)
    folds = ["--cv", "2"] if command == "select" else []
    assert main([command, "kernel_svm", "--data", str(libsvm_file), *folds]) == 130
    assert capsys.readouterr().err == f"approxpath: interrupted{kept}\n"


def test_a_cluster_s_lost_work_names_the_checkpoint_where_the_command_takes_one(monkeypatch, capsys, libsvm_file):
    """A path whose cluster died said only "run again on a cluster that stays up": its checkpoint
    (OUT.partial.npz) kept the finished work."""
    from approxpath import ClusterError
    from approxpath.cli import commands

    def lost(args):
        raise ClusterError("the Dask cluster lost work of this run")

    monkeypatch.setattr(commands, "cmd_path", lost)
    assert main(["path", "kernel_svm", "--data", str(libsvm_file)]) == 6
    assert capsys.readouterr().err == ("approxpath: error: the Dask cluster lost work of this run (a checkpoint, if "
                                       "any, keeps the finished work: --resume)\n")
