"""Smoke test of examples/feature_selection_friedman.py (a small training set)."""

import importlib.util
from pathlib import Path

import numpy as np

from approxpath.data import make_friedman1

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "feature_selection_friedman.py"


def test_feature_selection_example_runs_certifies_and_draws(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("feature_selection_friedman", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    png = tmp_path / "fp.png"
    out = module.main(["--n", "60", "--kappa", "0.5", "--detail", "5", "--out", str(png)])
    assert png.stat().st_size > 10_000
    path, i = out["path"], out["index"]
    assert path.report.ok and path.report.max_rel_gap <= 1e-8 and path.report.max_kkt <= 1e-6
    # the relevant features x1..x5 carry most of the selected point's budget
    assert path.beta[i, :5].sum() >= 0.8 * path.D[i]
    assert out["test_mse"] < 0.5 * np.var(make_friedman1(500, 0.0, np.random.default_rng(1))[1])
    assert "selected by validation" in capsys.readouterr().out
