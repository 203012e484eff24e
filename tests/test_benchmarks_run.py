"""The benchmark scripts still run on the current code, at their smallest settings (opt-in: -m
slow, ~1 minute).  docs/benchmarks.md names them as the commands that reproduce its tables;
three had rotted (a moved function, a renamed test helper, the old problem contract) and nobody
saw it until they were run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

RUNS = {
    "fast_solvers": ["--n", "60", "--every", "16", "--clarabel-points", "1", "--paths", "60", "--basis", "60"],
    "plugin": ["--repeat", "1"],
    "svm_large": ["--n", "200", "--dual-restoration", "moving", "fixed", "--kernels", "blocked", "--out", "rows.jsonl"],
    "three_anchors": ["--n", "100"],
    "robust_regression_solves": ["--problem", "robust_l1", "klasso", "--n", "60", "--eps", "1", "--strategy",
                                 "interpolate"],
    "robust_l1_pieces": ["--n", "100", "--repeat", "1"],
    "lml_floor": ["--n", "100", "--points", "201"],
    "checkpoint_cost": ["--n", "60", "--eps", "0.05", "--repeats", "1"],
    "feature_selection": ["--trials", "1", "--sets", "1", "--settings", "clean", "--kappa", "8", "--diabetes-folds", "0"],
    "svm_large_c": ["--n", "60", "--c", "2000", "--eps", "0.1", "--solves-n", "60"],
    "scaling": ["--pass-n", "200", "--threads", "1", "--rounds", "1", "--path-n", "200", "--n-jobs", "1",
                "--out", "scaling"],
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(RUNS))
def test_a_benchmark_runs(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), *RUNS[script]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stdout, done.stdout[-3000:]
