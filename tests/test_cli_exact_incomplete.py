"""`approxpath exact` on a path that stops before what was asked for, for a reason other than the
user's own stopping rules (0.5.0: "OK", exit 0 and `"ok": true` on data with duplicated points,
whose path stops at the first breakpoint where two copies are active): exit status 4, the stop
reason in one line on stderr, the solutions computed still printed and written, `--json` with
`"ok": false` and `"complete": false`.  A path that ends where it was asked to still exits 0."""

import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.exact import read_claimed

from exact_helpers import sinc_csv


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """``(sinc50.csv, dup.csv)``: dup.csv is the first 20 rows of sinc50.csv twice."""
    root = tmp_path_factory.mktemp("exact_incomplete")
    return sinc_csv(root / "sinc50.csv"), sinc_csv(root / "dup.csv", rows=np.tile(np.arange(20), 2))


def _exact(data_file, *args):
    return main(["exact", "klasso", "--data", str(data_file), "--format", "csv", *args])


def test_duplicated_points_stop_the_lambda_path_with_status_4(data, tmp_path, capsys):
    _, dup = data
    out = tmp_path / "dup_lam.npz"
    capsys.readouterr()
    assert _exact(dup, "--parameter", "lam", "--bandwidth", "1", "--out", str(out)) == 4
    text, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("approxpath: incomplete exact path: it ends at lam = "), err
    assert "above lam_min" in err and "singular system" in err and "are copies" in err and str(out) in err
    assert "Traceback" not in err
    # the certified points it did compute: printed and written
    assert "stopped: singular system" in text and f"path written to {out}" in text
    arrays = read_claimed(out)
    assert arrays["t"].size >= 2 and arrays["beta"].shape == (arrays["t"].size, 40)


def test_duplicated_points_json_says_incomplete(data, capsys):
    _, dup = data
    capsys.readouterr()
    assert _exact(dup, "--parameter", "lam", "--bandwidth", "1", "--json") == 4
    out, err = capsys.readouterr()
    res = json.loads(out.strip())  # one valid JSON line on stdout, the stop on stderr
    assert res["ok"] is False and res["complete"] is False and res["flagged"] == []
    assert res["stop_reason"].startswith("singular system at lam = ") and res["points"] >= 2
    assert res["range"][0] > 0.1  # far above lam_min = 1e-3 lam_max
    assert err.count("\n") == 1 and "singular system" in err


def test_duplicated_points_stop_the_kernel_path_with_status_4(data, capsys):
    _, dup = data
    capsys.readouterr()
    assert _exact(dup, "--parameter", "bandwidth", "--lam", "0.01", "--range", "0.5", "2", "--start", "cvxpy",
                  "--json") == 4
    out, err = capsys.readouterr()
    res = json.loads(out.strip())
    assert res["complete"] is False and res["ok"] is False and res["range"][1] < 2
    assert err.count("\n") == 1 and "it covers t in [0.5, " in err and "not [0.5, 2]" in err and "copies" in err


def test_a_range_above_where_the_path_stopped_is_status_4(data, capsys):
    """0.5.0: "[0.58, 0.3] does not meet the path's range", status 2: the path stopped above it."""
    _, dup = data
    capsys.readouterr()
    assert _exact(dup, "--parameter", "lam", "--bandwidth", "1", "--range", "1e-3", "0.3") == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "above the requested range [0.001, 0.3]" in err and "singular system" in err


def test_the_default_event_limit_is_not_a_complete_path(data, capsys, monkeypatch):
    """The default max_events (50 n, against runaway loops) is no stopping rule the user chose."""
    from approxpath.exact import _lambda

    sinc, _ = data
    monkeypatch.setattr(_lambda, "EVENTS_PER_POINT", 0.1)  # 5 events for n = 50
    capsys.readouterr()
    assert _exact(sinc, "--parameter", "lam", "--bandwidth", "1", "--json") == 4
    out, err = capsys.readouterr()
    res = json.loads(out.strip())
    assert res["complete"] is False and res["stop_reason"].startswith("max_events = 5")
    assert err.count("\n") == 1 and "raise it with --max-events" in err


@pytest.mark.parametrize("args,stop", [
    (["--parameter", "lam", "--bandwidth", "1", "--range", "1e-3", "2"], "lam_min"),
    (["--parameter", "lam", "--bandwidth", "1", "--range", "10", "20"], "lam_min >= lam_max"),
    (["--parameter", "lam", "--bandwidth", "1", "--max-events", "5"], "max_events = 5"),
    (["--parameter", "lam", "--bandwidth", "1", "--max-landmarks", "3"], "max_landmarks = 3"),
    (["--parameter", "bandwidth", "--lam", "0.1", "--range", "0.5", "2"], "end of range"),
    (["--parameter", "bandwidth", "--lam", "0.1", "--range", "0.5", "2", "--max-events", "2"], "max_events = 2"),
])
def test_a_path_that_ends_where_asked_still_exits_0(data, capsys, args, stop):
    sinc, _ = data
    capsys.readouterr()
    assert _exact(sinc, *args, "--json") == 0
    out, err = capsys.readouterr()
    res = json.loads(out.strip())
    assert res["ok"] is True and res["complete"] is True and stop in res["stop_reason"]
    assert err == ""


def test_duplicated_points_with_a_ridge_reach_lam_min(data, capsys):
    """The fix the stop reason names (nu > 0): the path is complete (the gaps then measure the
    ridge term as suboptimality, so the points may be flagged: exit 1, not 4)."""
    _, dup = data
    capsys.readouterr()
    rc = _exact(dup, "--parameter", "lam", "--bandwidth", "1", "--ridge", "1e-3", "--json")
    res = json.loads(capsys.readouterr().out.strip())
    assert res["complete"] is True and res["stop_reason"] == "lam_min" and rc == (0 if res["ok"] else 1)


def test_the_path_says_it_failed(data):
    """The command reads ``ExactPath.failed`` (set where the path could not continue), not the
    wording of ``stop_reason``."""
    from approxpath.data import load_data
    from approxpath.exact import kernel_path, lambda_path

    (sinc, dup) = data
    X, y = load_data(dup, "csv")
    assert lambda_path(X, y, 1.0, 1e-3).failed
    assert kernel_path(X, y, 0.01, (0.5, 2.0), start_solution="cvxpy").failed
    Xs, ys = load_data(sinc, "csv")
    assert not lambda_path(Xs, ys, 1.0, 1e-2).failed and not kernel_path(Xs, ys, 0.1, (0.5, 2.0)).failed


def test_the_exact_path_figure_of_a_failed_path_exits_4(data, capsys):
    """``figure exact-path`` draws what was computed and says why it stops (it exited 0)."""
    _, dup = data
    capsys.readouterr()
    assert main(["figure", "exact-path", "--data", str(dup), "--bandwidth", "1"]) == 4
    assert "incomplete exact path: singular system" in capsys.readouterr().err


def test_a_reversed_range_is_one_line(data, capsys):
    """``--range 2 1e-3`` said "[np.float64(2.0), 0.001] does not meet the path's range"."""
    sinc, _ = data
    capsys.readouterr()
    assert _exact(sinc, "--parameter", "lam", "--bandwidth", "1", "--range", "2", "1e-3") == 2
    assert "--range must satisfy 0 < lo < hi < inf; got [2.0, 0.001]" in capsys.readouterr().err


def test_the_exact_commands_advise_in_flags(data, capsys):
    """Their advice said start_solution='cvxpy' and "pass X_val and y_val" (Python's words)."""
    sinc, _ = data
    capsys.readouterr()
    assert _exact(sinc, "--parameter", "bandwidth", "--lam", "1e-12", "--range", "0.1", "10") == 4
    assert "use --start cvxpy" in capsys.readouterr().err
    assert main(["figure", "exact-path", "--data", str(sinc), "--target-mse", "0.01"]) == 2
    assert "--target-mse needs validation data: --val-data" in capsys.readouterr().err


def test_a_restriction_outside_the_path_prints_plain_numbers():
    """The message showed numpy's reprs (``np.float64(2.0)``) of the ends."""
    from approxpath.errors import InputError
    from approxpath.exact import lambda_path
    from exact_helpers import wang_sinc

    X, y = wang_sinc()
    path = lambda_path(X, y, 1.0, 0.5)
    top = float(path.t[-1])
    with pytest.raises(InputError) as info:
        path.restrict(2 * top, 3 * top)
    assert "np." not in str(info.value) and f"[{2 * top:.6g}, {top:.6g}] does not meet the path's range [" in str(
        info.value)
