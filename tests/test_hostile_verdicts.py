"""Exit codes, messages and verdicts on hostile input (each test fails on 0.3.2): clear exit
codes, one-line errors that name the cause, verdicts that say what they certify."""

import json

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.certificate.format import read_certificate
from approxpath.cli import main
from approxpath.data import load_data, make_classification, make_sinc
from certificate_helpers import tamper


def _path_cli(data, *extra):
    return ["path", "klasso", "--data", str(data), "--format", "csv", "--lam", "0.1", "--eps", "0.2",
            "--range", "1", "4", "--no-progress", *extra]


# ---------------------------------------------------------------------------- 1. exit codes
@pytest.mark.parametrize("argv", [["--eps", "10^400"], ["--range", "1", "10^400"]])
def test_overflowing_numbers_are_usage_errors(sinc_csv, capsys, argv):
    assert main(_path_cli(sinc_csv, *argv)) == 2  # the last --eps / --range given wins
    err = capsys.readouterr().err
    assert "not a finite number" in err and "Traceback" not in err


@pytest.mark.parametrize("line,match", [
    ("1 2147483648:1.0", "too large"),
    ("1 1:1.0 1:2.0", "appears twice"),
    ("1 1:x", "not a number"),
    ("1 a:1", "not index:value"),
    ("1 1:nan", "NaN or inf"),
])
def test_libsvm_errors_name_file_and_line(tmp_path, capsys, line, match):
    (tmp_path / "d.libsvm").write_text(f"-1 1:0.5\n{line}\n")
    assert main(["path", "kernel_svm", "--data", str(tmp_path / "d.libsvm")]) == 2
    err = capsys.readouterr().err
    assert "d.libsvm" in err and "line 2" in err and match in err and len(err.strip().splitlines()) == 1


def test_figure_cond_with_no_points(capsys):
    assert main(["figure", "cond", "--n", "0"]) == 2
    assert "--n must be a positive integer" in capsys.readouterr().err


@pytest.mark.parametrize("name,options,data", [
    ("kernel_svm", dict(c=1.0), "classes"), ("klasso", dict(lam=0.1), "sinc"),
    ("robust_l1", dict(lam=0.1), "sinc"), ("kernel_ridge", dict(lam=0.1), "sinc"),
])
def test_verify_of_a_piece_from_zero(tmp_path, capsys, name, options, data):
    X, y = make_classification(n=12, seed=0) if data == "classes" else make_sinc(n=12, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem(name)(X, y, **options), eps=0.5, interval=(0.5, 4.0))
    file = path.save(tmp_path / "c.npz")

    def from_zero(a, m):
        a["lo"][0] = 0.0
        m["interval"] = [0.0, m["interval"][1]]

    bad = tamper(file, tmp_path / "zero.npz", from_zero, True)
    report = approxpath.verify(bad, X, y)
    assert not report.ok and "lower end must be > 0" in report.failures[0]
    assert main(["verify", str(bad)]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_exit_codes_are_documented(capsys):
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for code in ("0 ok", "1 a result short of what was asked (uncovered pieces", "2 bad input", "3 a file",
                 "4 no exact solver", "or an exact or feature path stopped", "5 out of memory", "70", "130"):
        assert code in out


# ---------------------------------------------------------------------------- 2. messages
def test_budget_message_does_not_advise_relative_when_set():
    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(approxpath.BudgetExceededError) as err:
        approxpath.approximate_path(problem, eps=0.01, relative=True, interval=(0.1, 100.0), max_solves=2)
    assert "relative=True" not in str(err.value) and "eps = 0.01 relative" in str(err.value)
    with pytest.raises(approxpath.BudgetExceededError, match="relative=True"):
        approxpath.approximate_path(problem, eps=0.01, interval=(0.1, 100.0), max_solves=2)


def test_eps_advice_for_a_relative_eps_near_a_zero_optimum():
    from approxpath.driver.run import Budget, Run

    X, y = make_sinc(n=20, seed=0)
    run = Run(approxpath.get_problem("klasso")(X, y, lam=0.1), 0.01, True, 1.0, 2.0, None, Budget(10, 10, None))
    text = run._too_small(g=1e-6, goal=0.01 * 1e-9, t=1.5)  # optimum proven >= 1e-9 only
    assert "absolute eps >= 2e-06" in text and "e+" not in text
    assert "use eps >= 0.5" in run._too_small(g=1e-3, goal=0.01 * 0.004, t=1.5)


def test_the_eps_advised_is_never_below_the_eps_needed():
    """"use eps >= X": X is the eps needed rounded *up* to three digits (rounded to nearest, an
    eps needed of 0.012346 was told 0.0123, which the same solve refuses again)."""
    from approxpath.driver.run import _ANCHOR_SHARE, Budget, Run
    from approxpath.numerics import round_up

    X, y = make_sinc(n=20, seed=0)
    for relative in (False, True):
        run = Run(approxpath.get_problem("klasso")(X, y, lam=0.1), 0.01, relative, 1.0, 2.0, None, Budget(10, 10, None))
        for g in np.random.default_rng(1).uniform(1e-6, 1e-3, 50):
            goal = 0.01 * 0.5  # (relative: the optimum proven >= 0.5)
            need = g / _ANCHOR_SHARE / (0.5 if relative else 1.0)
            told = float(run._too_small(g=g, goal=goal, t=1.5).rsplit("use eps >= ", 1)[1])
            assert need <= told <= need * (1 + 1e-2) and told == float(f"{told:.3g}")
    assert round_up(0.0123456) == 0.0124 and round_up(0.0123) == 0.0123 and round_up(9.999e-3) == 0.01
    assert round_up(0.0) == 0.0 and round_up(np.inf) == np.inf


def test_eps_true_is_refused():
    X, y = make_sinc(n=20, seed=0)
    with pytest.raises(InputError, match="eps"):
        approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=True)


@pytest.mark.parametrize("events,code", [("-1", 2), ("0", 0), ("1", 0), ("3", 0)])
def test_max_events(sinc_csv, capsys, events, code):
    """``--max-events k`` records exactly k events (0: the first point, no event): the path ends
    at the breakpoint of the next one (0.3.2 recorded 2 events for 0)."""
    from approxpath.exact import lambda_path

    assert main(["exact", "klasso", "--parameter", "lam", "--data", str(sinc_csv), "--bandwidth", "1",
                 "--max-events", events, "--json"]) == code
    out, err = capsys.readouterr()
    if code:
        assert "--max-events must be a nonnegative integer" in err
        return
    k = int(events)
    assert json.loads(out.splitlines()[-1])["events"] == k
    X, y = load_data(sinc_csv, "csv")
    path = lambda_path(X, y, 1.0, max_events=k)
    assert len(path.events) == k and path.t.size == k + 1 and "max_events" in path.stop_reason


# ---------------------------------------------------------------------------- 3. the verdict
@pytest.fixture
def cert(tmp_path, sinc_csv):
    X, y = load_data(sinc_csv, "csv")
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=0.2, interval=(1.0, 4.0))
    return path.save(tmp_path / "c.npz"), X, y


def test_the_verdict_says_what_it_certified(cert, capsys):
    file, X, y = cert
    assert main(["verify", str(file)]) == 0
    out = capsys.readouterr().out
    meta = read_certificate(file)[1]
    for text in ("klasso", "lam=0.1", "eps = 0.2", "[1, 4]", meta["data_sha256"], "n = 30"):
        assert text in out, text


def test_a_weaker_true_claim_fails_what_the_user_requires(cert, tmp_path, capsys):
    file, X, y = cert
    weaker = tamper(file, tmp_path / "weaker.npz", lambda a, m: m.__setitem__("eps", 2 * m["eps"]), True)
    assert main(["verify", str(weaker)]) == 0  # a true claim ...
    assert main(["verify", str(weaker), "--eps", "0.2"]) == 1  # ... weaker than required
    assert "claims only eps = 0.4" in capsys.readouterr().out
    assert main(["verify", str(file), "--eps", "0.2", "--interval", "1", "4"]) == 0
    assert main(["verify", str(file), "--interval", "0.5", "4"]) == 1
    assert main(["verify", str(file), "--eps", "0.2", "--relative"]) == 1
    assert main(["verify", str(file), "--data-sha256", "0" * 64]) == 1
    assert main(["verify", str(file), "--data-sha256", read_certificate(file)[1]["data_sha256"]]) == 0


def test_load_path_of_a_forged_file(cert, tmp_path):
    file, X, y = cert
    halved = tamper(file, tmp_path / "halved.npz", lambda a, m: a.__setitem__("gap_bound", a["gap_bound"] / 2), True)
    with pytest.raises(InputError, match="does not verify"):
        approxpath.load_path(halved, X, y)
    unchecked = approxpath.load_path(halved, X, y, verify=False)
    assert not unchecked.certified and "UNVERIFIED" in repr(unchecked)
    assert approxpath.load_path(file, X, y).certified


# ---------------------------------------------------------------------------- 4. exact path
def test_the_lambda_path_of_constant_X_is_the_trivial_path():
    from approxpath.exact import certify, lambda_path

    X, y = make_sinc(n=20, seed=0)
    X[:] = 0.5
    path = lambda_path(X, y, 1.0)
    assert "lam_max = 0" in path.stop_reason and path.linear_solves == 0
    assert np.all(path.beta == 0) and path.beta0[0] == pytest.approx(y.mean())
    # lam_max = 0: the default end 1e-3 lam_max is 0 as well, outside klasso's domain (lam > 0);
    # with an end given, the single point beta = 0 is certified there
    trivial = lambda_path(X, y, 1.0, 0.01)
    assert trivial.t.tolist() == [0.01] and np.all(trivial.beta == 0)
    assert certify(trivial, tol=1e-9).ok
