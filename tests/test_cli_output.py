"""What the command line writes: one JSON document on the standard output whatever native code
prints, JSON without Infinity, and its exit status kept when the reader of its output leaves early."""
import json

import numpy as np

from approxpath.cli import main
from approxpath.data import make_classification, make_sinc


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
