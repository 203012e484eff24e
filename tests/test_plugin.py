"""The plug-in example (examples/plugin_kernel_ridge), installed from a clean state.

The package is copied to a temporary folder (so the build leaves nothing in the source tree),
installed with pip into a temporary target (no dependencies, no build isolation, no index:
offline and without touching the environment), put on ``sys.path``, and found by the registry
through its entry point.  Then the conformance suite runs on it, a certified bandwidth path
comes out, the CLI uses it, and its fast LOOCV matches brute-force leave-one-out.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import approxpath
from approxpath import registry
from approxpath.data import make_sinc

from conftest import check_weak_duality
from test_conformance import run_conformance

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugin_kernel_ridge"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    src = tmp_path_factory.mktemp("src") / "plugin_kernel_ridge"
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
           "--target", str(target), str(src)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return target


@pytest.fixture
def plugin(installed, monkeypatch):
    """The registry as a fresh process would see it with the plug-in installed; the class."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_loaded", False)
    assert "kernel_ridge" not in registry.available_problems()  # clean state: not installed
    for name in [m for m in sys.modules if m.startswith("approxpath_kernel_ridge")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(installed))
    monkeypatch.setattr(registry, "_loaded", False)
    cls = approxpath.get_problem("kernel_ridge")
    check_weak_duality(monkeypatch)
    yield cls
    for name in [m for m in sys.modules if m.startswith("approxpath_kernel_ridge")]:
        del sys.modules[name]


def test_registry_finds_the_installed_plugin(plugin, installed):
    assert "kernel_ridge" in approxpath.available_problems()
    assert plugin.__name__ == "KernelRidge" and plugin.__module__ == "approxpath_kernel_ridge.kernel_ridge"
    assert Path(sys.modules[plugin.__module__].__file__).is_relative_to(installed)  # the installed copy
    assert registry._REGISTRY["kernel_ridge"][1].endswith("of approxpath-kernel-ridge")


def test_conformance_suite_passes_on_the_plugin(plugin, tmp_path):
    assert run_conformance(plugin, tmp_path) >= 6


def test_certified_bandwidth_path_is_eps_optimal(plugin):
    X, y = make_sinc(n=40, noise=0.1, seed=4)
    problem = plugin(X, y, lam=0.05)
    eps = 0.01
    path = approxpath.approximate_path(problem, eps=eps, interval=(0.1, 10.0))
    assert path.certified and path.max_gap_bound <= eps
    # independent reference: the optimum from numpy's dense solver of (K + lam I) c = y
    for t in np.geomspace(0.1, 10.0, 15):
        K = np.exp(-t * (X - X.T) ** 2)
        c_star = np.linalg.solve(K + 0.05 * np.eye(40), y)
        opt = 0.05 * c_star @ K @ c_star + np.sum((K @ c_star - y) ** 2)
        sub = problem.primal_objective(path.primal(t), t) - opt
        assert -1e-9 <= sub <= path.gap_bound(t) <= eps


def test_cli_runs_the_plugin(plugin, tmp_path, capsys):
    from approxpath.cli import main

    X, y = make_sinc(n=30, seed=5)
    f = tmp_path / "sinc.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    assert main(["problems"]) == 0
    assert "kernel_ridge" in capsys.readouterr().out
    cert = tmp_path / "cert.npz"
    assert main(["path", "kernel_ridge", "--data", str(f), "--format", "csv", "--lam", "0.1", "--eps", "0.05",
                 "--range", "2^-2", "2^3", "--out", str(cert), "--no-progress"]) == 0
    assert main(["verify", str(cert), "--require-certified"]) == 0


def _brute_force_loocv(X, y, t, lam):
    n = len(y)
    K = np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    res = []
    for i in range(n):
        keep = np.arange(n) != i
        c = np.linalg.solve(K[np.ix_(keep, keep)] + lam * np.eye(n - 1), y[keep])
        res.append(y[i] - K[i, keep] @ c)
    return float(np.mean(np.square(res)))


def test_fast_loocv_matches_brute_force_along_the_path(plugin):
    from approxpath_kernel_ridge import loocv, loocv_curve

    X, y = make_sinc(n=30, noise=0.1, seed=6)
    problem = plugin(X, y, lam=0.1)
    for t in (0.2, 1.0, 5.0):
        assert loocv(problem, t) == pytest.approx(_brute_force_loocv(X, y, t, 0.1), rel=1e-8)
    path = approxpath.approximate_path(problem, eps=1e-3, interval=(0.1, 10.0))
    curve = loocv_curve(path, ts=np.concatenate([np.geomspace(0.1, 10.0, 9), path.solve_points]))
    brute = np.array([_brute_force_loocv(X, y, t, 0.1) for t in curve.t])
    assert np.all(np.abs(curve.loss - brute) <= curve.loss_error + 1e-10)
    # as a selection criterion: the t chosen on the path is, by brute force, within the
    # certified error bars of the best t of the same grid
    sel = loocv_curve(path, selection="grid", n_grid=30)
    brute = np.array([_brute_force_loocv(X, y, t, 0.1) for t in sel.t])
    assert brute[sel.best_index] <= brute.min() + 2 * sel.loss_error.max()
