"""The CLI on the regression problems (klasso, robust_l1): paths, certificates, verify."""

import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_sinc


@pytest.fixture
def sinc_csv(tmp_path):
    X, y = make_sinc(n=30, noise=0.1, outliers=0.1, seed=1)
    f = tmp_path / "sinc.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    return f


@pytest.fixture
def sinc_libsvm(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = make_sinc(n=30, noise=0.1, seed=2)
    f = tmp_path / "sinc.libsvm"
    dump_svmlight_file(X, y, str(f))
    return f


def _json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.parametrize("problem,extra", [
    ("klasso", ["--lam", "0.1", "--range", "0.5", "4", "--eps", "0.1"]),
    ("robust_l1", ["--lam", "0.1", "--range", "0.5", "4", "--eps", "0.5"]),
    ("klasso", ["--parameter", "lam", "--bandwidth", "1", "--range", "0.01", "1", "--eps", "0.05"]),
    ("robust_l1", ["--parameter", "lam", "--bandwidth", "1", "--lam", "1", "--eps", "0.2",
                   "--option", "dual_restoration=scaling"]),
])
def test_path_verify_and_tamper(sinc_csv, tmp_path, capsys, problem, extra):
    cert = tmp_path / "cert.npz"
    rc = main(["path", problem, "--data", str(sinc_csv), "--format", "csv", *extra, "--out", str(cert), "--json"])
    assert rc == 0
    out = _json(capsys)
    assert out["certified"] and out["problem"] == problem
    if "--lam" in extra and "lam" in extra[:2]:  # lambda path with --lam: default range (1e-3 lam, lam)
        assert out["range"] == pytest.approx([1e-3, 1.0])
    z = dict(np.load(cert))
    assert {"primal_beta", "dual_u"} <= set(z) and z["primal_beta"].shape[-1] == z["dual_u"].shape[-1]
    if problem == "klasso":
        assert {"primal_beta0", "dual_weights"} <= set(z)
    assert main(["verify", str(cert), "--require-certified"]) == 0
    assert "OK" in capsys.readouterr().out
    # a perturbed dual breaks exact feasibility (klasso: 1'u = 0; robust_l1: the kernel bound)
    z["dual_u"] = z["dual_u"].copy()
    z["dual_u"][0, 0, 0] += 1e-3 if problem == "klasso" else 1.0
    np.savez(tmp_path / "bad.npz", **z)
    assert main(["verify", str(tmp_path / "bad.npz"), "--data", str(sinc_csv), "--format", "csv"]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_libsvm_regression_file(sinc_libsvm, capsys):
    rc = main(["path", "klasso", "--data", str(sinc_libsvm), "--lam", "0.1", "--range", "1", "2", "--eps", "0.1", "--json"])
    assert rc == 0 and _json(capsys)["certified"]


@pytest.mark.parametrize("argv,match", [
    (["path", "klasso"], "needs a fixed positive --lam;"),
    (["path", "klasso", "--parameter", "lam"], "needs a fixed positive --bandwidth t"),
    (["path", "klasso", "--lam", "0.1", "--bandwidth", "1"], "--bandwidth fixes t only for --parameter 'lam'"),
    (["path", "robust_l1", "--lam", "0.1", "--option", "dual_restoration=clip"], "unknown dual_restoration"),
    (["path", "klasso", "--lam", "0.1", "--c", "1"], "unrecognized arguments: --c 1"),
])
def test_bad_input_exits_2(sinc_csv, capsys, argv, match):
    assert main(argv[:2] + ["--data", str(sinc_csv), "--format", "csv"] + argv[2:]) == 2
    assert match in capsys.readouterr().err


def test_solvers_out_of_time_exit_4_naming_them(sinc_csv, capsys):
    argv = ["path", "klasso", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--range", "0.5", "4",
            "--eps", "0.1", "--no-progress", "--solve-time-limit", "1e-7"]
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "solver failure" in err and "MaxTime" in err


@pytest.mark.parametrize("problem, weight", [("klasso", "lam"), ("robust_l1", "lam"), ("kernel_ridge", "lam")])
def test_a_weight_paths_own_weight_beside_its_range_is_refused(sinc_csv, capsys, problem, weight):
    """``--parameter lam --lam 5 --range 0.1 1``: the 5 only sets the default range's top, and
    was ignored without a word."""
    assert main(["path", problem, "--data", str(sinc_csv), "--format", "csv", "--parameter", weight, "--bandwidth",
                 "1", f"--{weight}", "5", "--range", "0.1", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == (f"approxpath: error: --{weight} 5 is not used: the path runs over "
                                               f"{weight} in --range 0.1 1; drop --{weight} (alone it sets the "
                                               "range's top)")
