import json
import re

import numpy as np
import pytest

from approxpath.cli import main, parse_number
from approxpath.data import make_classification, make_sinc


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
    ("commands", "cmd_verify", ["verify"]),
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


_NOISY_RUN = """
import ctypes, os, sys
import approxpath.cli as cli
import approxpath.cli.commands as commands
real = commands.load_data
def noisy(*args, **kwargs):
    os.write(1, b"ERROR: native noise\\n")  # as a solver's C code writes to the process's stdout
    print("ERROR: noise through Python")  # as SCS prints (PySys_WriteStdout: sys.stdout)
    ctypes.CDLL(None).printf(b"ERROR: buffered noise\\n")  # C's stdio: buffered on a pipe until the exit
    return real(*args, **kwargs)
commands.load_data = noisy
sys.argv = ["approxpath", *sys.argv[1:]]
sys.exit(cli.main())
"""


def test_json_output_stays_one_document_when_native_code_prints(tmp_path):
    """A solver's C code writing to file descriptor 1 ("ERROR: could not determine problem
    status." from SCS, printed through ``sys.stdout``) once came before the JSON on stdout, which
    then did not parse; with ``--json`` such output goes to stderr, the command's document alone
    to stdout."""
    import subprocess
    import sys

    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    argv = ["path", "kernel_svm", "--data", str(data), "--eps", "0.5", "--range", "1", "2"]
    done = subprocess.run([sys.executable, "-c", _NOISY_RUN, *argv, "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["certified"]
    assert all(f"ERROR: {noise}" in done.stderr for noise in ("native noise", "noise through Python", "buffered noise"))
    plain = subprocess.run([sys.executable, "-c", _NOISY_RUN, *argv], capture_output=True, text=True, timeout=120)
    assert "native noise" in plain.stdout  # without --json nothing is moved


def test_warnings_are_one_line(tmp_path, capsys, monkeypatch):
    """A warning on the command line is one ``approxpath: warning:`` line, not Python's file,
    line number and source line."""
    import warnings

    import approxpath.cli.commands as commands

    real = commands.load_data

    def warns(*args, **kwargs):
        warnings.warn("the data look odd", UserWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(commands, "load_data", warns)
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["path", "kernel_svm", "--data", str(data), "--eps", "0.5", "--range", "1", "2", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "approxpath: warning: the data look odd" in err
    assert "UserWarning" not in err and ".py:" not in err


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


def test_a_selection_s_advice_names_the_flags(tmp_path, capsys):
    """``select`` stopped short said "raise max_solves ... or pass strict=False to keep this
    result" (Python's words; the command keeps the result already)."""
    X, y = make_classification(n=40, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["select", "kernel_svm", "--data", str(data), "--cv", "2", "--range", "1", "2", "--tol", "1e-9",
                 "--max-solves", "8", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "--max-solves" in err and "--tol" in err and "strict=False" not in err


def test_sorted_points_are_told_to_shuffle_with_the_flag(tmp_path, capsys):
    """The warning of unshuffled folds of sorted points said "shuffle=SEED, --shuffle SEED, or a
    splitter": the command line's way alone is --shuffle; with it, no warning."""
    X, y = make_sinc(n=40, seed=0)
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    argv = ["select", "kernel_ridge", "--data", str(data), "--format", "csv", "--criterion", "mse", "--cv", "3",
            "--range", "0.5", "2", "--tol", "1", "--no-progress"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "sorted by feature 1" in err and "shuffle them (--shuffle SEED)" in err and "shuffle=" not in err
    assert main(argv + ["--shuffle", "0"]) == 0
    assert "sorted by feature" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["path", "kernel_svm", "--data", "x.csv", "--bais", "dynamic"],
     "approxpath path: error: unrecognized arguments: --bais dynamic; did you mean '--bias'?"),
    (["verify", "x.npz", "--epz", "1"], "approxpath verify: error: unrecognized arguments: --epz 1; did you mean '--eps'?"),
    (["path", "kernel_svm", "--data", "x.csv", "extra"], "approxpath path: error: unrecognized arguments: extra"),
    (["path", "kernel_svm", "--data", "x.csv", "--bias", "dynamc"],
     "approxpath path: error: argument --bias: invalid choice: 'dynamc'"),
    (["path", "kernel_svm", "--data", "x.csv", "--eps", "abc"], "approxpath path: error: argument --eps: not a finite"),
    (["pth"], "approxpath: error: argument command: invalid choice: 'pth'"),
    (["path", "kernel_svm", "--data", "x.csv", "--kernel", "ard", "--feature-weights", "-1,2"],
     "approxpath path: error: argument --feature-weights: expected one argument; write a value that starts with '-' "
     "as --feature-weights=VALUE"),
    (["path", "kernel_svm", "--data", "x.csv", "--eps"], "approxpath path: error: argument --eps: expected one argument ("),
])
def test_a_usage_error_is_one_line_naming_the_closest_flag(argv, expected, capsys):
    """argparse printed its usage block (3 to 19 lines) before the error, and no closest name."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected), err
    assert err.rstrip().endswith("--help)")


def test_a_flag_that_starts_like_one_names_it(capsys):
    """difflib finds '--data' too unlike '--data-file' (and 'tol' unlike 'tolerance')."""
    assert main(["verify", "x.npz", "--data-file", "d.csv"]) == 2
    assert "did you mean '--data'?" in capsys.readouterr().err


def test_a_selections_advice_names_the_flags():
    """The command line said "widen the interval" where its flags are --range and --weights,
    and "raise max_solves or tol" where they are --max-solves and --tol; ends that differ past 6
    digits read alike (both "0.1")."""
    from approxpath.cli.checks import as_advice
    from approxpath.selection import RangeWarning, ShortfallWarning

    edge = RangeWarning("select: ...", "the chosen t = 2", [("bandwidth", "upper", 2.0)])
    assert as_advice(edge).endswith("at the upper end of --range, 2: the criterion may be better beyond it; widen "
                                    "--range past it")
    box = RangeWarning("select: ...", "the choice", [("bandwidth", "lower", 0.5), ("c", "upper", 8.0)])
    assert as_advice(box, box=True).endswith("at the lower end of --range, 0.5 and the upper end of --weights, 8: the "
                                             "criterion may be better beyond them; widen --range and --weights past "
                                             "them")
    assert as_advice(box).endswith("widen --range past them")  # (select over C: --range is C's)
    near = RangeWarning("select: ...", "the choice", [("c", "lower", 0.1), ("c", "upper", 0.1000001)])
    assert "the lower end of --weights, 0.1 and the upper end of --weights, 0.1000001:" in as_advice(near, box=True)
    short = ShortfallWarning("{who}: delta = 1 > {tol} = 0.1: {why}; raise {max_solves} or {tol}, or {smaller}",
                             1.0, 0.1, True, dict(why="spent {braces}"))
    assert str(short) == ("select: delta = 1 > tol = 0.1: spent {braces}; raise max_solves or tol, or choose over a "
                          "smaller box")
    assert as_advice(short) == ("select: delta = 1 > --tol = 0.1: spent {braces}; raise --max-solves or --tol, or "
                                "choose a smaller --range or --weights")
    assert as_advice(UserWarning("other")) == "other"
    # an end left undecided (held-out points no exact solve settles): widening would not help
    undecided = RangeWarning("select: ...", "the chosen t = 2", [("bandwidth", "upper", 1024.0)], undecided=True)
    assert as_advice(undecided).endswith("at the upper end of --range, 1024, where the exact solves leave the "
                                         "criterion undecided: a better value there or beyond it is not ruled out, "
                                         "and widening --range would not decide it; narrow --range to leave that end "
                                         "out if it is of no interest")
    import pickle  # (scikit-learn's workers send warnings back pickled: they failed to unpickle)

    from approxpath.selection import SortedFoldsWarning

    for w in (edge, box, undecided, short, short.renamed(tol="cv_tol"), SortedFoldsWarning(1, 5, "a custom way")):
        back = pickle.loads(pickle.dumps(w))
        assert type(back) is type(w) and str(back) == str(w) and vars(back) == vars(w)


def _status_with_the_reader_gone(argv):
    """The exit status of ``approxpath ARGV | true``: the pipe's reader closes before the first write."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "approxpath.cli", *argv], stdout=write, stderr=subprocess.PIPE,
                              timeout=120).returncode
    finally:
        os.close(write)


def test_a_reader_that_leaves_early_does_not_change_the_status(tmp_path):
    """``approxpath path ... | head -1`` exited 3 (an output that cannot be written) after the run
    had certified every piece and written its certificate; now a command runs on without its
    reader and its status is its own: 0 for a certified path, 1 for a certificate that fails."""
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    cert = tmp_path / "cert.npz"
    argv = ["path", "kernel_svm", "--data", str(data), "--eps", "0.5", "--range", "1", "2", "--no-progress"]
    assert _status_with_the_reader_gone([*argv, "--out", str(cert)]) == 0
    assert _status_with_the_reader_gone([*argv, "--json"]) == 0
    assert _status_with_the_reader_gone(["verify", str(cert), "--no-progress"]) == 0
    z = dict(np.load(cert))
    z["dual_alpha"] = z["dual_alpha"] + 1e-3
    np.savez(tmp_path / "bad.npz", **z)
    assert _status_with_the_reader_gone(["verify", str(tmp_path / "bad.npz"), "--no-progress"]) == 1


def test_misleading_errors_name_the_option_given(tmp_path, capsys, monkeypatch):
    """Each once blamed something else: numpy's "expected non-negative integer" for --seed -1;
    "got 0.0" for a range end that underflows; --kernel precomputed (not an option of verify)
    for --distances on a gaussian certificate; an unreadable data file for --n-features."""
    monkeypatch.chdir(tmp_path)

    def error(argv):
        assert main(argv) == 2
        return capsys.readouterr().err.strip()

    assert error(["data", "sinc", "--out", "s.csv", "--seed", "-1"]) == (
        "approxpath: error: --seed must be a non-negative integer; got -1")
    assert main(["data", "classification", "--out", "c.csv", "--n", "30"]) == 0
    for low in ("2^-1100", "1e-400"):
        assert f"argument --range: '{low}' is below the smallest positive double" in error(
            ["path", "kernel_svm", "--data", "c.csv", "--range", low, "1"])
    assert main(["path", "kernel_svm", "--data", "c.csv", "--eps", "0.5", "--range", "1", "2", "--out", "c.npz",
                 "--no-progress"]) == 0
    np.save("D.npy", np.zeros((30, 30)))
    assert error(["verify", "c.npz", "--distances", "D.npy"]) == (
        "approxpath: error: --distances is for a certificate of --kernel precomputed; this one's kernel is gaussian: "
        "drop --distances")
    assert error(["verify", "c.npz", "--n-features", "3"]).endswith(
        "is not readable as csv data with --n-features 3: pass --data FILE or drop --n-features")


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


def test_json_has_no_infinity_and_figure_exact_path_writes_it_to_stdout(tmp_path, capsys):
    """An uncovered piece's bound (inf) was written as Infinity, which JSON readers refuse; ``figure
    exact-path --json`` printed its document to standard error."""
    import json

    from approxpath.cli.output import emit_json

    emit_json({"max_gap_bound": float("inf"), "cells": [1.0, float("nan"), {"g": -np.inf}], "n": 3})
    line = capsys.readouterr().out
    assert json.loads(line) == {"max_gap_bound": None, "cells": [1.0, None, {"g": None}], "n": 3}

    data = tmp_path / "sinc.csv"
    np.savetxt(data, np.column_stack(make_sinc(n=30, seed=0)), delimiter=",")
    assert main(["figure", "exact-path", "--data", str(data), "--parameter", "bandwidth", "--lam", "0.1", "--range",
                 "0.5", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["algorithm"] and "{" not in err


def test_recorded_warnings_are_said_once_each_in_order():
    """numpy's overflow warnings, recorded with "always", reached select's JSON 262,818 times."""
    import warnings

    from approxpath.cli.checks import said_once

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for text in ("overflow", "edge", "overflow", "overflow", "budget"):
            warnings.warn(text, RuntimeWarning)
    assert [str(w.message) for w in said_once(caught)] == ["overflow", "edge", "budget"]


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
