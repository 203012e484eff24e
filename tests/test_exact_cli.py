"""`approxpath exact` and `approxpath crosscheck`: exact paths from here and from elsewhere
through the same door."""

import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_classification, make_sinc
from approxpath.exact import read_claimed, write_claimed
from exact_helpers import wang_sinc


@pytest.fixture(scope="module")
def sinc_csv(tmp_path_factory):
    X, y = wang_sinc()
    f = tmp_path_factory.mktemp("data") / "sinc.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    return f


def _last_json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_exact_lambda_path_then_crosscheck_then_corrupt(sinc_csv, tmp_path, capsys):
    out = tmp_path / "lam.npz"
    data = ["--data", str(sinc_csv), "--format", "csv"]
    rc = main(["exact", "klasso", "--parameter", "lam", *data, "--bandwidth", "1", "--range", "0.01", "2",
               "--out", str(out), "--json"])
    res = _last_json(capsys)
    assert rc == 0 and res["ok"]
    assert {"events", "breakpoints", "max_gap", "wall_s"} <= set(res)
    assert res["events"] > 5 and res["max_gap"] < 1e-8 and res["range"] == [0.01, 2.0]
    arrays = read_claimed(out)
    assert arrays["beta"].shape == (arrays["t"].size, 50) and bool(arrays["linear"])
    with np.load(out, allow_pickle=False) as f:  # the file says which machine made it
        assert f"numpy {np.__version__}" in json.loads(str(f["meta"]))["machine"]["packages"]
    # the same file through the cross-check: points and (sampled) linear segments
    cc = ["crosscheck", "klasso", *data, "--lam", "0.1", "--bandwidth", "1", "--parameter", "lam"]
    assert main([*cc, "--path", str(out), "--tol", "1e-8", "--json"]) == 0
    res = _last_json(capsys)
    assert res["ok"] and res["segments"] == res["points"] - 1 and res["segment_check"] == "certified"
    # one coefficient perturbed at one breakpoint: exit 1, the point named
    k = arrays["t"].size // 2
    arrays["beta"][k, np.flatnonzero(arrays["signs"][k])[0]] += 1e-4
    bad = tmp_path / "bad.csv"
    write_claimed(bad, arrays["t"], {"beta": arrays["beta"], "beta0": arrays["beta0"]})
    assert main([*cc, "--path", str(bad), "--tol", "1e-8", "--linear"]) == 1
    text = capsys.readouterr().out
    assert "FLAGGED" in text and f"point {k} at t = " in text and f"segment {k - 1}-{k}" in text


def test_exact_kernel_path_json_and_csv_round_trip(sinc_csv, tmp_path, capsys):
    out = tmp_path / "bw.csv"
    data = ["--data", str(sinc_csv), "--format", "csv"]
    rc = main(["exact", "klasso", *data, "--parameter", "bandwidth", "--lam", "1", "--bandwidth", "0.5",
               "--range", "0.25", "4", "--out", str(out), "--json"])
    res = _last_json(capsys)
    assert rc == 0 and res["ok"] and res["stop_reason"] == "end of range" and res["range"] == [0.25, 4.0]
    assert res["events"] >= 1 and res["max_cond"] >= 1
    assert main(["crosscheck", "klasso", *data, "--lam", "1", "--bandwidth", "0.5", "--parameter", "bandwidth",
                 "--path", str(out)]) == 0
    assert "segments: not checked" in capsys.readouterr().out


def test_crosscheck_kernel_svm_file(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file

    import approxpath

    X, y = make_classification(n=30, d=2, seed=3)
    f = tmp_path / "train.libsvm"
    dump_svmlight_file(X, y, str(f))
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    ts = np.array([0.5, 1.0, 2.0])
    sols = [problem.solve(t)[0] for t in ts]
    path = tmp_path / "svm.npz"
    w = np.array([s.w for s in sols])
    write_claimed(path, ts, {"w": w, "b": np.array([s.b for s in sols])})
    assert main(["crosscheck", "kernel_svm", "--data", str(f), "--c", "1", "--path", str(path), "--json"]) == 0
    w[1] *= 1.01
    write_claimed(path, ts, {"w": w, "b": np.array([s.b for s in sols])})
    assert main(["crosscheck", "kernel_svm", "--data", str(f), "--c", "1", "--path", str(path)]) == 1
    assert "point 1 at t = 1" in capsys.readouterr().out


@pytest.mark.parametrize("argv,match", [
    (["exact", "kernel_svm"], "unknown problem for exact paths 'kernel_svm'"),
    (["exact", "klasso", "--parameter", "lam"], "--bandwidth T"),
    (["exact", "klasso", "--lam", "0.1"], "--range LO HI"),
    (["exact", "klasso", "--range", "0.1", "1"], "--lam L"),
    (["crosscheck", "klasso", "--lam", "0.1", "--path", "/nonexistent.npz"], "does not exist"),
    # an option of the other path was ignored without a word
    (["exact", "klasso", "--lam", "0.1", "--range", "1", "1.2", "--max-landmarks", "3", "--target-mse", "0.1"],
     "error: --max-landmarks, --target-mse are for the lambda path only (--parameter lam); this is the kernel path"),
    (["exact", "klasso", "--parameter", "lam", "--bandwidth", "1", "--range", "0.01", "1", "--theta", "0.9",
      "--start", "cvxpy"], "error: --theta, --start are for the kernel path only (--parameter bandwidth); this is the "
                           "lambda path"),
    # the library's names (eps, theta) in the command line's
    (["exact", "klasso", "--lam", "0.1", "--range", "1", "1.2", "--breakpoint-tol", "0"],
     "error: --breakpoint-tol must lie in (0, 1 - theta); got 0.0"),
    (["exact", "klasso", "--lam", "0.1", "--range", "1", "1.2", "--theta", "2"], "error: --theta must lie in (0, 1)"),
])
def test_bad_input_exits_2_with_a_message(sinc_csv, capsys, argv, match):
    argv = argv[:2] + ["--data", str(sinc_csv), "--format", "csv"] + argv[2:]
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_exports_and_the_exact_path_figure_from_the_cli(sinc_csv, tmp_path, capsys):
    """``exact --export``, ``exact --max-landmarks``, ``path --export`` and ``figure exact-path``
    through the main command line; every table re-reads with the values it was written with."""
    from approxpath.export import read_table

    data = ["--data", str(sinc_csv), "--format", "csv"]
    dat = tmp_path / "lam.dat"
    assert main(["exact", "klasso", "--parameter", "lam", *data, "--bandwidth", "1", "--range", "0.01", "2",
                 "--max-landmarks", "6", "--export", str(dat), "--json"]) == 0
    res = _last_json(capsys)
    table = read_table(dat)
    assert table["t"].size == res["points"] and int(table["active"].max()) <= 6
    assert np.all(table["gap"] <= 1e-8)
    csv = tmp_path / "pieces.csv"
    assert main(["path", "klasso", *data, "--lam", "0.1", "--range", "0.5", "4", "--eps", "0.1", "--no-progress",
                 "--json", "--export", str(csv)]) == 0
    res = _last_json(capsys)
    pieces = read_table(csv)
    assert pieces["lo"].size == res["pieces"] and pieces["hi"][-1] == 4.0 and np.all(pieces["gap_bound"] <= 0.1)
    png, exported = tmp_path / "exact.png", tmp_path / "exact.csv"
    assert main(["figure", "exact-path", "--plot", str(png), "--export", str(exported), "--json"]) == 0
    assert png.stat().st_size > 10_000 and read_table(exported)["t"].size > 5


def test_a_constant_target_names_lambda_max_zero(tmp_path, capsys):
    """Constant y: lambda_max = 0 and the default end 1e-3 lambda_max = 0; the command said
    "t must be positive ... got 0.0" (the certification of a path at lambda = 0)."""
    data = tmp_path / "const.csv"
    X = np.random.default_rng(0).normal(size=(20, 2))
    np.savetxt(data, np.column_stack([X, np.full(20, 5.0)]), delimiter=",")
    assert main(["exact", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam",
                 "--bandwidth", "1"]) == 2
    err = capsys.readouterr().err
    assert "lambda_max = 0 (y is constant" in err and "--lam L or --range LO HI" in err and err.count("\n") == 1
    assert main(["exact", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam",
                 "--bandwidth", "1", "--lam", "0.1", "--json"]) == 0
    assert _last_json(capsys)["ok"]


@pytest.mark.parametrize("parameter, what, arrays", [("lam", "lambda-path", 8), ("bandwidth", "kernel path", 16)])
def test_exact_paths_are_refused_before_their_arrays_when_memory_is_short(parameter, what, arrays, monkeypatch,
                                                                        capsys, tmp_path):
    """An exact path that would not fit is refused before its n x n arrays exist, naming the
    estimate: 8 (lambda-path) or 16 (kernel path) arrays of n^2 floats, measured; it fits a
    budget above that."""
    from approxpath.exact import kernel_path, lambda_path
    from approxpath.errors import InputError
    from approxpath.memory import exact_bytes

    n = 400
    X, y = make_sinc(n=n, seed=0)
    assert exact_bytes(n, parameter).parts[0][1] == arrays * 8.0 * n * n
    budget = exact_bytes(n, parameter).total / 0.9
    # (the machine's own free memory left out: the run above the estimate is small)
    monkeypatch.setattr("approxpath.memory.available_bytes", lambda: (0.99 * budget, "a test's budget"))
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    fixed = (["--bandwidth", "1", "--range", "0.5", "1"] if parameter == "lam"
             else ["--lam", "0.1", "--range", "1", "1.01"])
    assert main(["exact", "klasso", "--data", str(data), "--parameter", parameter, *fixed]) == 2
    assert f"the exact {what} with n = {n} needs about" in capsys.readouterr().err
    run = (lambda: lambda_path(X, y, 1.0, 0.5)) if parameter == "lam" else (lambda: kernel_path(X, y, 0.1, (1.0, 1.01)))
    with pytest.raises(InputError, match=f"the {what}'s n x n arrays"):
        run()
    monkeypatch.setattr("approxpath.memory.available_bytes", lambda: (1.01 * budget, "a test's budget"))
    assert run().t.size >= 2
