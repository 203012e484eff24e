"""The feature path at the edges of its inputs: the units of the features, a budget that stops
binding, targets and C beyond double precision, paths without certificates, and what a summary
lists of a path that oscillates."""

import numpy as np
import pytest

from approxpath import InputError
from approxpath.cli import main
from approxpath.exact.feature_path import (certify_segments, feature_path, normalize_columns, plot_feature_path,
                                           read_feature_path)
from exact_helpers import friedman1


def _small():
    rng = np.random.default_rng(0)
    X = normalize_columns(rng.uniform(size=(30, 3)))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    return X, y, float(np.sum((y - y.mean()) ** 2))


def test_the_end_does_not_depend_on_the_features_units():
    """X x s is the same problem with beta / s^2; lambda eta scales as s^2, and compared with a
    fixed g_tol ||Hy||^2 the path at s = 1e-6 ended at its second point, "stationary"."""
    X, y, C = _small()
    paths = [feature_path(X * s, y, C=C, certify=False) for s in (1.0, 1e-3, 1e-6)]
    assert all("g_tol reached" in p.stop_reason for p in paths)
    ends = [p.D[-1] * s * s for p, s in zip(paths, (1.0, 1e-3, 1e-6))]  # (before: 2.89, 1.29 and the start)
    assert max(ends) - min(ends) <= 1e-2 * max(ends) and max(map(len, paths)) - min(map(len, paths)) <= 2


def test_a_budget_that_stops_binding_is_named_as_the_cause():
    """C = 100 ||Hy||^2: the least-squares fit's K-norm reaches C (lambda 8.8e-10) and the step
    size underflows; the stop blamed duplicate or nearly collinear features."""
    X, y = friedman1(40, 10, seed=0)
    path = feature_path(X, y, C=100 * float(np.sum((y - y.mean()) ** 2)), certify=False)
    assert path.failed and "barely binds" in path.stop_reason and "singular" not in path.stop_reason
    K = np.exp(-sum(b * (x[:, None] - x[None, :]) ** 2 for b, x in zip(path.beta[-1], X.T)))
    M = K - K.mean(axis=0)
    w, Q = np.linalg.eigh(M - M.mean(axis=1)[:, None])
    c = Q.T @ (y - y.mean())
    keep = w > 1e-13 * w[-1]
    assert float(np.sum(c[keep] ** 2 / w[keep])) >= 0.999 * path.C  # (the independent reason)


def test_c_and_targets_beyond_double_precision_are_input_errors():
    """C = 1e-320 was "math domain error"; |y| ~ 1e80 with C ~ ||Hy||^2 flagged every (correct)
    point: C u'Ku overflowed in the certificate's dual."""
    X, y, C = _small()
    with pytest.raises(InputError, match="C must be at least 2.23e-308"):
        feature_path(X, y, C=1e-320)
    with pytest.raises(InputError, match=r"C \|\|y - mean\(y\)\|\|\^2 overflows double precision"):
        feature_path(X, y * 1e80, C=C * 1e160)


def test_the_command_line_on_constant_targets_gives_no_advice_that_fails(tmp_path, capsys):
    data = tmp_path / "const.csv"
    np.savetxt(data, np.column_stack([np.random.default_rng(0).uniform(size=(12, 2)), np.full(12, 3.0)]),
               delimiter=",")
    assert main(["features", str(data)]) == 2
    err = capsys.readouterr().err
    assert "are all equal: no feature explains a constant" in err and "--C" not in err


def test_a_file_says_what_is_certified_and_holds_the_segments_report(tmp_path, capsys):
    """Its meta said "certified": true of a path whose segments were 6 % certified."""
    X, y = friedman1(30, 10, seed=0)
    data = tmp_path / "f.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "f.npz"
    assert main(["features", str(data), "--segments", "--segment-eps", "1e-6", "--segment-pieces", "1",
                 "--out", str(out), "--no-progress"]) == 1
    meta = read_feature_path(out)["meta"]
    assert "certified" not in meta and meta["points_certified"] is True
    assert meta["segments"]["certified_fraction"] < 1 and meta["segments"]["uncertified"]


def test_a_path_without_certificates_is_drawn_as_unchecked_not_flagged():
    pytest.importorskip("matplotlib")
    X, y, C = _small()
    path = feature_path(X, y, C=C, certify=False)
    labels = [t.get_text() for t in plot_feature_path(path).axes[0].get_legend().get_texts()]
    assert "points not checked (certify=False)" in labels and not any("flagged" in lab for lab in labels)


@pytest.mark.parametrize("index", [-1, "last", 2.0, True])
def test_segment_indices_are_checked(index):
    """-1 checked a "segment" from the last point back to the first; len - 1 raised IndexError."""
    X, y, C = _small()
    path = feature_path(X, y, C=C)
    last = len(path) - 1  # (segments 0 to last - 1)
    with pytest.raises(InputError, match=f"integers from 0 to {last - 1}"):
        certify_segments(path, indices=[last if index == "last" else index])


def test_a_summary_lists_twenty_turns_and_counts_the_rest():
    """A low-rank polynomial kernel spins at one D: the summary's turns line had no end."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, (24, 4)).astype(float)
    y = X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.1 * rng.standard_normal(24)
    Xc = X - X.mean(0)
    path = feature_path(Xc / np.abs(Xc).max(0), y, C=2 * np.sum((y - y.mean()) ** 2), kernel="ard-polynomial")
    assert len(path.turns) > 20
    line = next(line for line in path.summary().splitlines() if "turns in D" in line)
    assert line.count("(back)") + line.count("(forward)") == 20 and f"and {len(path.turns) - 20} more" in line
