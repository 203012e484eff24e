"""A user's first hour (each test fails on 0.3.2): short reprs, progress bars in t units, plots
that leave matplotlib's state alone, verify notes only beyond rounding, full provenance from
Python, one-line errors naming file and line, readable file modes, sparse input and n_jobs in the
estimators, the same selection from the CLI and Python, help for every option."""

import json
import os
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import approxpath
from approxpath.cli import main
from approxpath.data import load_data, make_classification, make_friedman1, make_sinc, preprocess
from certificate_helpers import tamper


@pytest.fixture(scope="module")
def svm_path():
    X, y = make_classification(n=40, d=2, seed=1)
    return approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.5,
                                       interval=(2.0**-3, 2.0**4))


# ---------------------------------------------------------------------------- 1. short repr
def test_repr_of_a_path_is_one_short_line(svm_path):
    text = repr(svm_path)
    assert "\n" not in text and len(text) < 200, text
    assert "kernel_svm" in text and "certified" in text and "eps=0.5" in text
    assert "\n" not in repr(svm_path.pieces[0]) and len(repr(svm_path.pieces[0])) < 150
    assert len(str(svm_path.summary())) < 1000  # summary() has the details


# ---------------------------------------------------------------------------- 2. progress
@pytest.mark.parametrize("workers, strategy", [(1, "interpolate"), (2, "interpolate"), (1, "paper")])
def test_progress_bar_counts_in_t_and_ends_cleanly(capfd, workers, strategy):
    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tqdm's "clamping frac to range [0, 1]" is a warning
        path = approxpath.approximate_path(problem, eps=0.125, interval=(2.0**-10, 2.0**10), progress=True,
                                           workers=workers, strategy=strategy)
    err = capfd.readouterr().err
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in final and "t = 1024 of [0.0009766, 1024]" in final, final
    # the exact solves so far (where pieces are narrow t moves slowly: the count shows the run working)
    assert f", {path.exact_solves} exact solves" in final, final
    assert "<-" not in err and "ln t" not in err and "13.86" not in err


def test_one_overall_bar_for_parallel_paths(capfd):
    X, y = make_classification(n=30, d=2, seed=1)
    problems = [approxpath.get_problem("kernel_svm")(X, y, c=c) for c in (0.5, 1.0)]
    approxpath.map_paths(problems, eps=0.5, interval=(0.5, 4.0), workers=2, progress=True)
    err = capfd.readouterr().err.replace("\r", "\n")
    assert "paths: 100%" in err and "2/2 paths" in err
    assert "kernel_svm:" not in err  # no bar per path (the workers draw none)


def test_verify_shows_a_bar_over_its_pieces(svm_path, tmp_path, capsys, monkeypatch):
    """verify of a large certificate ran a minute without a sign (n = 16,000: 64 s); the command line
    draws it where stderr is a terminal (none into a pipe or a log file)."""
    file = svm_path.save(tmp_path / "c.npz")
    X, y = make_classification(n=40, d=2, seed=1)
    assert approxpath.verify(file, X, y, progress=True).ok
    final = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    pieces = len(svm_path.pieces)
    assert "verify: 100%" in final and f"{pieces}/{pieces} pieces" in final, final
    assert main(["verify", str(file)]) == 0 and capsys.readouterr().err == ""  # (capsys' stderr: no terminal)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["verify", str(file)]) == 0 and f"{pieces}/{pieces} pieces" in capsys.readouterr().err
    for quiet in (["--no-progress"], ["--json"]):
        assert main(["verify", str(file), *quiet]) == 0 and capsys.readouterr().err == ""


def test_a_selection_shows_delta_down_to_tol(capsys):
    """select(progress=True): one bar from the first delta to tol, labelled with delta and the
    exact solves, ending at 100 % with the result's delta; the same result as without it."""
    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    quiet = approxpath.select(problem, cv=3, eps=0.2, interval=(0.1, 10.0), tol=0.05)
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no tqdm warning)
        shown = approxpath.select(problem, cv=3, eps=0.2, interval=(0.1, 10.0), tol=0.05, progress=True)
    err = capsys.readouterr().err
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert final.startswith("select kernel_svm: 100%"), final
    assert f"delta = {shown.delta:.4g} (tol 0.05), {shown.exact_solves} exact solves" in final, final
    assert (shown.t, shown.delta, shown.exact_solves) == (quiet.t, quiet.delta, quiet.exact_solves)


def test_a_selection_says_what_it_computes_before_delta_moves(capsys, monkeypatch):
    """Between two values of delta the bar names what runs: the first paths done, then each
    fold's held-out predictions piece by piece (minutes on a large fold: the bar stood still at
    "first paths" before); the bar still ends on delta."""
    from approxpath import progress

    monkeypatch.setattr(progress, "_NOTE_EVERY_S", 0.0)
    monkeypatch.setenv("COLUMNS", "1000")  # tqdm < 4.68 cuts a bar to $COLUMNS where stderr is no terminal
    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    shown = approxpath.select(problem, cv=3, eps=0.2, interval=(0.1, 10.0), tol=0.05, progress=True)
    lines = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.strip()]
    first = [line for line in lines if "first paths done" in line]
    assert first and "exact solves; enclosing the criterion" in first[0], lines
    pieces = [line for line in lines if "held-out predictions of fold" in line]
    assert any("fold 1/3: piece 1 of " in line for line in pieces), lines
    assert any("fold 3/3: piece " in line for line in pieces), lines
    assert lines.index(first[0]) < lines.index(pieces[0])
    assert lines[-1].startswith("select kernel_svm: 100%") and f"delta = {shown.delta:.4g}" in lines[-1], lines[-1]


def test_estimators_take_progress(capsys):
    from approxpath.sklearn import KernelPathSVC

    X, y = make_classification(n=40, d=2, seed=1)
    KernelPathSVC(eps=0.05, progress=True, random_state=0).fit(X, y)
    assert "100%" in capsys.readouterr().err


# ---------------------------------------------------------------------------- 3. plots
def test_plots_leave_the_backend_and_pyplot_alone(tmp_path):
    pytest.importorskip("matplotlib")
    code = (
        "import sys, matplotlib\n"
        "matplotlib.use('svg')\n"
        "import approxpath\n"
        "from approxpath.data import make_classification\n"
        "from approxpath.plotting import plot_bounds, save_figure\n"
        "X, y = make_classification(n=30, seed=0)\n"
        "path = approxpath.approximate_path(approxpath.get_problem('kernel_svm')(X, y), eps=0.5, interval=(0.5, 4))\n"
        f"save_figure(plot_bounds(path), {str(tmp_path / 'b.png')!r})\n"
        "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["svg", "False"]
    assert (tmp_path / "b.png").stat().st_size > 1000


# ---------------------------------------------------------------------------- 4. notes
def test_no_note_for_a_bound_looser_by_rounding_only(svm_path, tmp_path):
    """A search's stored bound may exceed the verifier's by a few rounding margins (a4a: up to
    8e-6 of bound + eps); that is no looser claim worth a note.  A bound 20 % looser is."""
    file = svm_path.save(tmp_path / "c.npz")
    X, y = svm_path.problem.X, svm_path.problem.y

    def inflate(share):
        return lambda a, m: a.__setitem__("gap_bound", a["gap_bound"] + share * (a["gap_bound"] + m["eps"]))

    rounding = approxpath.verify(tamper(file, tmp_path / "r.npz", inflate(8e-6), True), X, y)
    assert rounding.ok and rounding.notes == ()
    looser = approxpath.verify(tamper(file, tmp_path / "l.npz", lambda a, m: a.__setitem__(
        "gap_bound", np.minimum(1.2 * a["gap_bound"], m["eps"])), True), X, y)
    assert looser.ok and looser.notes


# ---------------------------------------------------------------------------- 5. provenance
def test_a_certificate_saved_from_python_verifies_with_nothing_extra(tmp_path, monkeypatch, capsys):
    X, y = make_sinc(n=30, seed=0)
    np.savetxt(tmp_path / "sinc.csv", np.column_stack([3.0 * X + 1.0, y]), delimiter=",")
    monkeypatch.chdir(tmp_path)
    Xf, yf = load_data("sinc.csv", "csv")
    Xp = preprocess(Xf, "global-minmax")
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(Xp, yf, lam=0.1), eps=0.1, interval=(1.0, 20.0))
    assert path.meta["data_file"] == "sinc.csv" and path.meta["preprocessing"] == "global-minmax"
    path.save("cert.npz")
    assert main(["verify", "cert.npz"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert out.startswith("OK") and "global-minmax" in out
    # data built in Python: the certificate carries them
    inmem = approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=0.1, interval=(1.0, 20.0))
    inmem.save("mem.npz")
    assert main(["verify", "mem.npz"]) == 0
    assert "carried in the certificate" in capsys.readouterr().out


def test_changed_targets_are_not_attributed_to_the_file(tmp_path, monkeypatch):
    X, y = make_sinc(n=30, seed=0)
    np.savetxt(tmp_path / "sinc.csv", np.column_stack([X, y]), delimiter=",")
    Xf, yf = load_data(tmp_path / "sinc.csv", "csv")
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(Xf, 2 * yf, lam=0.1), eps=0.1,
                                       interval=(1.0, 20.0))
    assert "data_file" not in path.meta  # y is not the file's: the certificate will carry the data
    assert approxpath.verify(path.save(tmp_path / "c.npz")).ok


# ---------------------------------------------------------------------------- 6. raw errors
def test_a_csv_read_as_libsvm_names_file_line_and_fix(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("x,y\n1,2\n3,4\n")
    assert main(["path", "klasso", "--data", str(tmp_path / "d.txt"), "--lam", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "d.txt" in err and "line 1" in err and "--format csv" in err and "b'" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_csv_file_is_read_as_csv_by_its_name(tmp_path, capsys):
    X, y = make_sinc(n=20, seed=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    assert main(["path", "klasso", "--data", str(tmp_path / "d.csv"), "--lam", "0.1", "--eps", "0.2",
                 "--range", "1", "4", "--no-progress"]) == 0


def test_verify_on_a_csv_says_what_it_is(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n")
    assert main(["verify", str(tmp_path / "d.csv")]) == 1
    out = capsys.readouterr().out
    assert "not a zip archive" in out and "--data" in out
    assert "allow_pickle" not in out and "nan" not in out


def test_a_missing_lambda_is_named_as_the_flag(tmp_path, capsys):
    X, y = make_sinc(n=20, seed=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    assert main(["path", "klasso", "--data", str(tmp_path / "d.csv")]) == 2
    err = capsys.readouterr().err
    assert "--lam" in err and "lam=" not in err


# ---------------------------------------------------------------------------- 7. data for the docs
def test_the_data_command_writes_what_the_examples_use(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["data", "sinc", "--out", "sinc.csv"]) == 0
    assert main(["data", "classification", "--out", "train.csv", "--n", "60"]) == 0
    assert main(["data", "classification", "--out", "train.libsvm", "--n", "60", "--format", "libsvm"]) == 0
    X, y = load_data("sinc.csv", "csv")
    assert X.shape == (100, 1) and np.array_equal((X, y)[1], make_sinc(n=100, seed=0)[1])
    np.testing.assert_array_equal(load_data("train.libsvm")[0], load_data("train.csv", "csv")[0])
    assert main(["path", "klasso", "--data", "sinc.csv", "--lam", "0.1", "--range", "2^-3", "2^5", "--eps", "0.05",
                 "--out", "k.npz", "--no-progress"]) == 0
    assert main(["verify", "k.npz"]) == 0
    # an option of the other set was ignored without a word: refused now
    capsys.readouterr()
    assert main(["data", "sinc", "--out", "s2.csv", "--d", "5"]) == 2
    assert "--d does not apply to the sinc set" in capsys.readouterr().err
    assert main(["data", "classification", "--out", "c2.csv", "--noise", "3"]) == 2
    assert "--noise does not apply" in capsys.readouterr().err
    # the feature path's set: its docs' example (on sinc, a set of one feature, it flagged points)
    capsys.readouterr()
    assert main(["data", "friedman1", "--out", "f.csv"]) == 0
    X, y = load_data("f.csv", "csv")
    assert X.shape == (100, 10) and np.array_equal(y, make_friedman1(n=100, seed=0)[1])
    hint = capsys.readouterr().out.split("(use it with approxpath ")[1].rstrip(")\n").split()
    assert hint == ["features", "f.csv", "--format", "csv"]  # the command it prints runs (it said --data f.csv)
    assert main([*hint, "--json"]) == 0
    # LIBSVM's format under a name read as CSV: the advice said "--data d.csv", which then failed
    capsys.readouterr()
    assert main(["data", "sinc", "--out", "d.csv", "--format", "libsvm", "--n", "30"]) == 0
    hint = capsys.readouterr().out.split("(use it with ")[1].rstrip(")\n").split()
    assert hint == ["--data", "d.csv", "--format", "libsvm"]
    assert main(["path", "klasso", "--lam", "0.1", "--range", "1", "2", "--eps", "0.5", "--no-progress", *hint]) == 0


# ---------------------------------------------------------------------------- 8. file modes
def test_certificates_get_the_umasks_mode(svm_path, tmp_path):
    old = os.umask(0o022)
    try:
        file = svm_path.save(tmp_path / "c.npz")
        assert stat.S_IMODE(file.stat().st_mode) == 0o644
        os.chmod(file, 0o640)
        svm_path.save(file)  # replacing a file keeps its permissions
        assert stat.S_IMODE(file.stat().st_mode) == 0o640
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------- 9. estimators
def test_estimators_take_sparse_input_and_n_jobs():
    sparse = pytest.importorskip("scipy.sparse")
    from approxpath.sklearn import KernelPathRegressor, KernelPathSVC

    X, y = make_classification(n=40, d=3, seed=2)
    X[:, 2] = 0.0
    dense = KernelPathSVC(eps=0.05, random_state=0).fit(X, y)
    csr = KernelPathSVC(eps=0.05, random_state=0).fit(sparse.csr_matrix(X), y)
    assert csr.best_t_ == dense.best_t_ and len(csr.path_.pieces) == len(dense.path_.pieces)
    np.testing.assert_array_equal(csr.predict(sparse.csr_matrix(X)), dense.predict(X))
    Xr, yr = make_sinc(n=30, seed=0)
    reg = KernelPathRegressor(eps=0.1, random_state=0).fit(sparse.csc_matrix(Xr), yr)
    assert reg.path_.certified
    with pytest.raises(ValueError, match="n_jobs"):
        KernelPathSVC(n_jobs=0).fit(X, y)
    with pytest.raises(ValueError, match="n_jobs"):
        KernelPathSVC(n_jobs=1.5).fit(X, y)


def test_sparse_X_in_the_python_api():
    sparse = pytest.importorskip("scipy.sparse")
    X, y = make_classification(n=20, d=2, seed=0)
    problem = approxpath.get_problem("kernel_svm")(sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(problem.X, X)


def test_the_same_certificate_for_every_worker_count_above_one(tmp_path):
    """Parallel runs place their exact solves ahead of the workers' segments, the same way for
    any number of workers (one worker places them after each segment: documented)."""
    X, y = make_classification(n=60, d=2, seed=7)
    files = []
    for workers in (2, 3):
        problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
        path = approxpath.approximate_path(problem, eps=0.2, interval=(2.0**-5, 2.0**6), workers=workers)
        files.append(path.save(tmp_path / f"w{workers}.npz"))
    from certificate_helpers import same_certificate

    same_certificate(*files)


# ---------------------------------------------------------------------------- 10. CLI consistency
def test_cli_validation_figure_selects_as_python_does(capsys):
    from approxpath.selection import validation_curve

    assert main(["figure", "validation", "kernel_svm", "--eps", "0.5", "--range", "2^-3", "2^4", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    X, y = make_classification(n=120, d=2, seed=0)
    X_val, y_val = make_classification(n=400, d=2, seed=1)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y), eps=0.5, interval=(2.0**-3, 2.0**4))
    assert cli["best_t"] == validation_curve(path, X_val, y_val).best_t


def test_problems_prints_no_markup(capsys):
    assert main(["problems"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":math:" not in out and ":class:" not in out


def _all_parsers(parser):
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _all_parsers(sub)


@pytest.mark.parametrize("argv", [["path", "kernel_svm"], ["path", "klasso"], ["path", "robust_l1"],
                                  ["path", "kernel_ridge"], ["verify"], ["demo"], ["exact"], ["crosscheck", "klasso"],
                                  ["problems"], ["data"], ["figure", "cond"], ["figure", "solves"],
                                  ["figure", "validation", "robust_l1"]])
def test_every_option_has_help(argv):
    from approxpath.cli import build_parser

    missing = [(p.prog, a.option_strings or a.dest) for p in _all_parsers(build_parser(argv))
               for a in p._actions if a.help in (None, "") and a.dest != "help"
               and not a.__class__.__name__.startswith("_SubParsers")]
    assert missing == []


def test_slow_tests_name_the_data_folder_variable():
    text = open(os.path.join(os.path.dirname(__file__), "test_reproduction.py")).read()
    skips = [line for line in text.splitlines() if "pytest.skip(" in line]
    assert skips and all("APPROXPATH_LIBSVM_DIR" in line for line in skips)


def test_a_long_one_core_path_says_workers_would_use_the_others(tmp_path, capsys, monkeypatch):
    """A path that kept one of several cores busy for long names --workers, on stderr after the
    summary; a short run, one core, a run whose kernel threads used the cores, a run with
    workers or with a chunked strategy (another path) does not."""
    from approxpath.cli import running

    monkeypatch.setattr("approxpath.compute.parallelism.cores", lambda: 2)
    for now, said in (((93.8, 94.4), "1.0"), ((81.7, 103.4), "1.3"), ((12.0, 12.0), None), ((93.8, 160.0), None)):
        monkeypatch.setattr(running, "clock", lambda now=now: now)
        line = running.one_core_note("path", (0.0, 0.0), "does it in {n} processes")
        assert line == (f"approxpath: this path kept {said} of 2 cores busy for {now[0]:.0f} s; --workers 2 does it "
                        "in 2 processes" if said else None)
    monkeypatch.setattr("approxpath.compute.parallelism.cores", lambda: 1)
    assert running.one_core_note("path", (0.0, 0.0), "") is None
    monkeypatch.undo()
    X, y = make_sinc(60, noise=0.1, seed=0)
    np.savetxt(tmp_path / "s.csv", np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    run = ["path", "robust_l1", "--data", str(tmp_path / "s.csv"), "--lam", "0.1", "--range", "1", "2",
           "--eps", "0.1", "--relative", "--no-progress"]
    monkeypatch.setattr(running, "_ONE_CORE_NOTE_S", 0.0)
    monkeypatch.setattr(running, "_ONE_CORE_RATIO", 1e9)
    monkeypatch.setattr("approxpath.compute.parallelism.cores", lambda: 4)
    assert main(run) == 0
    captured = capsys.readouterr()
    assert "exact solves" in captured.out and "--workers 4 certifies its segments in 4 processes" in captured.err
    for other in (["--workers", "2"], ["--strategy", "paper"]):
        assert main(run + other) == 0 and "busy" not in capsys.readouterr().err
    monkeypatch.setattr(running, "_ONE_CORE_NOTE_S", 1e9)
    assert main(run) == 0 and "--workers" not in capsys.readouterr().err
