"""Runs that hung, crashed or said the wrong thing in 0.4.1 (each test fails there): Ctrl-C
inside SCS, a penalty below double precision's reach, a pipe as the distances, data of labels
only, the exact kLASSO paths at a tiny lambda, ignored flags and the out-of-memory message."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.cli import main
from approxpath.data import make_sinc
from process_helpers import default_sigint


# ---------------------------------------------------------------------------- Ctrl-C inside SCS
_SCS_RUN = """
import sys, scs, approxpath
from approxpath.data import make_sinc
init, iterate = scs.SCS.__init__, scs.SCS.solve


def endless(self, data, cone, **settings):  # iterates until interrupted (no tolerance is met, no limit)
    init(self, data, cone, **dict(settings, eps_abs=1e-300, eps_rel=1e-300, max_iters=10**9, time_limit_secs=0))


def announced(self, *args, **kwargs):  # says when SCS's iterations begin (its setup is over)
    print("solving", flush=True)
    return iterate(self, *args, **kwargs)


scs.SCS.__init__, scs.SCS.solve = endless, announced
problem = approxpath.get_problem("klasso")(*make_sinc(n=30, seed=0), lam=1e-9)
try:
    approxpath.approximate_path(problem, eps=0.1, interval=(1.0, 4.0), solver="scs")
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


def test_ctrl_c_stops_a_run_inside_scs():
    """SCS catches SIGINT itself while it iterates and returns "interrupted"; 0.4.1 took that for
    a failed solve and went on with the next points (still running 300 s after Ctrl-C).  The
    signal lands in SCS's iterations: each solve here iterates until interrupted, and the signal
    is sent once the first one has begun.  (A SIGINT during SCS's setup, ``scs.SCS(...)``, is
    taken by SCS's handler and dropped, by SCS; and a solve of this problem can end in 0.8 s: a
    CI run that signalled 1 s after the run began, under load, timed out.)"""
    proc = subprocess.Popen([sys.executable, "-c", _SCS_RUN], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, preexec_fn=default_sigint)
    try:
        assert proc.stdout.readline().strip() == "solving"
        time.sleep(0.5)  # inside the first SCS solve's iterations, which go on until interrupted
        proc.send_signal(signal.SIGINT)
        # exits with 130 (a run going on to its next solves would never end: each iterates until interrupted)
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------- meaningless weights
@pytest.mark.parametrize("argv", [["klasso", "--lam", "1e-300", "--range", "1", "4"],
                                  ["robust_l1", "--lam", "1e-300", "--range", "1", "4"],
                                  ["kernel_ridge", "--lam", "1e-16", "--range", "1", "4"],
                                  ["kernel_ridge", "--parameter", "lam", "--bandwidth", "1", "--range", "1e-300", "2"],
                                  ["klasso", "--parameter", "lam", "--bandwidth", "1", "--range", "1e-300", "2"]])
def test_a_penalty_below_double_precision_is_refused_at_once(sinc_csv, capsys, monkeypatch, argv):
    """0.4.1: klasso at lam = 1e-300 sat at the interval's first end for over 25 minutes
    (robust_l1 refused after 13 s, by accident: its exact solve was too poor for eps).  Refused
    before any exact solve is tried (a solve there takes 10-15 s)."""
    from approxpath.problem import Problem

    def no_solve(*args, **kwargs):
        raise AssertionError("an exact solve was tried")

    monkeypatch.setattr(Problem, "solve", no_solve)
    assert main(["path", argv[0], "--data", str(sinc_csv), *argv[1:], "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot be told from 0" in err and len(err.strip().splitlines()) == 1


def test_the_floor_is_the_rounding_of_the_gradient():
    from approxpath.numerics import weight_resolution

    X, y = make_sinc(n=30, seed=0)
    problem = approxpath.get_problem("klasso")(X, y, lam=1e-300)
    floor = problem.smallest_weight()
    assert floor == weight_resolution(y - y.mean()) and 1e-15 < floor < 1e-12
    with pytest.raises(InputError, match="cannot be told from 0"):
        approxpath.approximate_path(problem, eps=0.1, interval=(1.0, 4.0))
    tiny = approxpath.get_problem("klasso")(X, y, lam=2 * floor)
    tiny.check_weights(1.0, 4.0)  # above the floor: allowed (if slow)


def test_exact_klasso_at_a_tiny_lambda(sinc_csv, capsys):
    """0.4.1: `exact klasso --lam 1e-300` reported numpy's matmul error as a usage error (or
    exit 70): the lambda-path's rebuilt factor dropped active points."""
    from approxpath.exact import lambda_path

    X, y = make_sinc(n=100, seed=0)
    lam_max = float(np.max(np.abs(np.exp(-(X - X.T) ** 2) @ (y - y.mean()))))
    path = lambda_path(X, y, 1.0, 1e-9 * lam_max, max_events=300)  # 0.4.1: ValueError (matmul)
    assert path.t.size > 1
    capsys.readouterr()
    assert main(["exact", "klasso", "--data", str(sinc_csv), "--lam", "1e-300", "--range", "0.1", "10"]) == 2
    assert "cannot be told from 0" in capsys.readouterr().err


def test_an_exact_path_that_cannot_continue_is_a_solver_failure(sinc_csv, capsys, monkeypatch):
    """0.4.1: an ExactPathError was an internal error (exit 70, a traceback)."""
    from approxpath import exact
    from approxpath.exact import ExactPathError

    def stuck(*a, **k):
        raise ExactPathError("the lambda-path at t = 0.1 stopped above lam (max_events = 1500)")

    monkeypatch.setattr(exact, "kernel_path", stuck)
    capsys.readouterr()
    assert main(["exact", "klasso", "--data", str(sinc_csv), "--lam", "0.1", "--range", "0.1", "10"]) == 4
    err = capsys.readouterr().err
    assert "stopped above lam" in err and "Traceback" not in err


# ---------------------------------------------------------------------------- inputs
def test_a_pipe_as_the_distances_is_refused_before_it_is_opened(sinc_csv, tmp_path):
    """0.4.1 opened it and blocked forever."""
    fifo = tmp_path / "D.npy"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "approxpath.cli", "path", "klasso", "--data", str(sinc_csv),
                           "--lam", "0.1", "--kernel", "precomputed", "--distances", str(fifo), "--no-progress"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not a regular file" in done.stderr


def test_the_distances_must_be_one_square_array(tmp_path):
    from approxpath.data import load_distances

    np.save(tmp_path / "v.npy", np.zeros(5))
    with pytest.raises(InputError, match="the n x n matrix D"):
        load_distances(tmp_path / "v.npy")
    (tmp_path / "t.npy").write_text("0 1\n1 0\n")
    with pytest.raises(InputError, match="not a numpy .npy file"):
        load_distances(tmp_path / "t.npy")


def test_data_of_labels_only_are_refused(tmp_path, capsys):
    """0.4.1 certified a path on labels without features, which its own verify then refused."""
    data = tmp_path / "labels.txt"
    data.write_text("1\n-1\n1\n-1\n1\n-1\n")
    assert main(["path", "kernel_svm", "--data", str(data), "--c", "1", "--no-progress"]) == 2
    assert "no feature columns" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--validation-fraction", "1.5"], ["--validation-fraction", "0"],
                                   ["--validation-fraction", "0.3", "--val-data", "{data}"],
                                   ["--validation-fraction", "0.3", "--no-data"]])
def test_an_ignored_validation_fraction_is_refused(sinc_csv, capsys, monkeypatch, extra):
    """0.4.1 ignored 1.5 and 0 without --val-data... and any value with --val-data or the
    built-in sets.  Refused before the run starts."""
    import approxpath.driver

    def no_run(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(approxpath.driver, "approximate_path", no_run)
    argv = ["figure", "validation", "klasso", "--lam", "0.1", "--no-progress", "--data", str(sinc_csv)]
    if "--no-data" in extra:
        argv = argv[:-2]
        extra = extra[:-1]
    argv += [e.format(data=sinc_csv) for e in extra]
    assert main(argv) == 2
    assert "--validation-fraction" in capsys.readouterr().err


def test_out_of_memory_blames_no_estimate(sinc_csv, tmp_path, capsys, monkeypatch):
    """0.4.1 said "the estimate made before the run was too low" for every command, verify
    included, which makes no estimate."""
    import importlib

    verify_module = importlib.import_module("approxpath.certificate.verify")
    cert = tmp_path / "cert.npz"
    assert main(["path", "klasso", "--data", str(sinc_csv), "--lam", "0.1", "--range", "1", "4", "--no-progress",
                 "--out", str(cert)]) == 0

    def oom(*a, **k):
        raise MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000000000,)")

    monkeypatch.setattr(verify_module, "verify", oom)
    capsys.readouterr()
    assert main(["verify", str(cert)]) == 5
    err = capsys.readouterr().err
    assert "Unable to allocate 7.45 GiB" in err and "estimate" not in err


def test_the_ridge_floor_is_the_kernel_s_rounding():
    """kernel_ridge's floor is n e (e: one kernel entry's rounding): 1e-16 on 100 sinc points sat
    at the first bandwidth for minutes; refused now, and a lambda above the floor is allowed."""
    X, y = make_sinc(n=100, seed=0)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=1e-16)
    floor = problem.smallest_weight()
    assert floor == 100 * problem.bound.entry_error and 1e-14 < floor < 1e-13
    with pytest.raises(InputError, match="cannot be told from 0"):
        approxpath.approximate_path(problem, eps=0.5, interval=(1.0, 4.0))
    approxpath.get_problem("kernel_ridge")(X, y, lam=2 * floor).check_weights(1.0, 4.0)
