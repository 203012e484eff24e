"""The cross-check of exact paths against a hostile review (each test fails on the code before):
a tolerance relative to a unit that shrank with the data let a path of zeros pass, a coefficient
of 1e308 crashed it, complex coefficients and nonpositive parameters passed as numbers, and an
exact path's file given to ``verify`` was reported field by field."""

import json

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.cli import main
from approxpath.exact import crosscheck, lambda_path

from exact_helpers import sinc_csv


@pytest.fixture(autouse=True)
def weak_duality():
    """Overrides conftest's weak-duality wrapper: a huge claimed coefficient makes a gap NaN on
    purpose here, which the cross-check must flag itself."""
    yield


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(X, y / 1e5, the exact lambda-path on them): the data's scale far below 1."""
    from approxpath.data import load_data

    X, y = load_data(sinc_csv(tmp_path_factory.mktemp("tiny") / "s.csv"), "csv")
    y = y * 1e-5
    return X, y, lambda_path(X, y, 1.0, 1e-3 * 1e-5)


def test_a_path_of_zeros_on_small_targets_is_flagged_relative_to_the_objectives_scale(tiny):
    X, y, path = tiny
    problem = path.problem()
    arrays = path.primal_arrays()
    zeros = dict(beta=np.zeros_like(arrays["beta"]), beta0=np.full_like(arrays["beta0"], y.mean()))
    report = crosscheck(problem, path.t, zeros, tol=1e-8, relative=True)
    assert not report.ok  # 0.5.0: OK, its gap 5.6e-10 against 1e-8 x (1 + a dual objective of ~1e-9)
    assert report.max_relative_gap > 0.5  # near the whole zero model's objective at the small lambdas
    honest = crosscheck(problem, path.t, arrays, tol=1e-8, relative=True)
    assert honest.ok, str(honest)


def test_hostile_coefficients_and_parameters(tmp_path, capsys):
    data = sinc_csv(tmp_path / "s.csv")
    good = tmp_path / "lam.npz"
    assert main(["exact", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam", "--bandwidth", "1",
                 "--range", "1e-3", "2", "--out", str(good), "--json"]) == 0
    capsys.readouterr()
    with np.load(good) as z:
        arrays = {k: z[k] for k in z.files}
    args = ["crosscheck", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam", "--bandwidth", "1"]

    def run(name, edit):
        a = {k: v.copy() for k, v in arrays.items()}
        edit(a)
        np.savez(tmp_path / name, **a)
        return main([*args, "--path", str(tmp_path / name)]), capsys.readouterr()

    def huge(a):
        a["beta"][3, 5] = 1e308

    code, out = run("huge.npz", huge)  # 0.5.0: OverflowError, exit 70
    assert code == 1 and "cannot be evaluated" in out.out and "Traceback" not in out.err, out.err[-2000:]

    def complex_beta(a):
        a["beta"] = a["beta"].astype(complex)
        a["beta"][3, 5] += 5j

    code, out = run("complex.npz", complex_beta)  # 0.5.0: OK, the imaginary parts dropped with a warning
    assert code == 2 and "array 'beta' must hold real numbers" in out.err
    for value in (0.0, -0.5):
        def nonpositive(a, value=value):
            a["t"][0] = value

        code, out = run("t.npz", nonpositive)  # 0.5.0: gaps computed, numpy warnings, exit 1
        assert code == 2 and "t must be positive" in out.err
    with pytest.raises(InputError, match="t must be positive"):
        crosscheck(approxpath.get_problem("klasso")(*approxpath.data.load_data(data, "csv"), lam=0.1), [0.0, 1.0],
                   dict(beta=arrays["beta"][:2], beta0=arrays["beta0"][:2]))
    assert main(["verify", str(good), "--data", str(data), "--format", "csv"]) == 1
    assert "an exact path's file (approxpath exact --out), not a certificate" in capsys.readouterr().out


def test_the_figure_cuts_the_lambda_path_at_the_ranges_upper_end(tmp_path, capsys):
    """``figure exact-path --range LO HI`` drew the path up to lambda_max (``exact`` cuts at HI)."""
    data = sinc_csv(tmp_path / "s.csv")
    assert main(["figure", "exact-path", "--data", str(data), "--format", "csv", "--parameter", "lam",
                 "--bandwidth", "1", "--range", "1e-3", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["range"][1] <= 0.5 and out["relative"] is False


def test_a_path_that_stops_early_fails_a_required_interval(tiny, tmp_path, capsys):
    """A path cut short (its last 20 points dropped) said only "OK: 97 points": the report now
    names the interval its points cover, and ``interval=`` / ``--interval`` fail a shorter one."""
    X, y, path = tiny
    problem, arrays = path.problem(), path.primal_arrays()
    whole = (float(path.t.min()), float(path.t.max()))
    cut = {k: v[:-20] for k, v in arrays.items()}
    short = crosscheck(problem, path.t[:-20], cut, tol=1e-6, interval=whole)
    assert not short.ok and not short.flagged and short.short
    assert short.interval == (whole[0], float(path.t[:-20].max()))
    assert "not the required" in str(short) and "not the required" in short.to_json()["flagged"][0]
    full = crosscheck(problem, path.t, arrays, tol=1e-6, interval=whole)
    assert full.ok and full.to_json()["interval"] == list(whole), str(full)
    assert crosscheck(problem, path.t, arrays, tol=1e-6).to_json()["required_interval"] is None
    with pytest.raises(InputError, match="the required interval must satisfy lo <= hi"):
        crosscheck(problem, path.t, arrays, interval=(whole[1], whole[0]))
    data = tmp_path / "tiny.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    np.savez(tmp_path / "cut.npz", t=path.t[:-20], linear=True, **cut)
    args = ["crosscheck", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam", "--bandwidth", "1",
            "--path", str(tmp_path / "cut.npz")]
    assert main(args) == 0
    assert f"over lam in [{whole[0]:.8g}, " in capsys.readouterr().out
    assert main(args + ["--interval", f"{whole[0]!r}", f"{whole[1]!r}"]) == 1
    assert "not the required" in capsys.readouterr().out
