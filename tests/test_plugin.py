"""The plug-in tutorial (examples/plugin_ridge), installed from a clean state.

The package is copied to a temporary folder (so the build leaves nothing in the source tree),
installed with pip into a temporary target (no dependencies, no build isolation, no index:
offline and without touching the environment), put on ``sys.path``, and found by the registry
through its entry point.  Then the conformance battery runs on it, a certified lambda path is
eps-optimal against the closed form, and the CLI uses it (including ``verify``).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import approxpath
from approxpath import registry

from conftest import check_weak_duality
from approxpath.testing import check_problem

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugin_ridge"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    src = tmp_path_factory.mktemp("src") / "plugin_ridge"
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
    assert "ridge" not in registry.available_problems()  # clean state: not installed
    for name in [m for m in sys.modules if m.startswith("approxpath_ridge")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(installed))
    monkeypatch.setattr(registry, "_loaded", False)
    cls = approxpath.get_problem("ridge")
    check_weak_duality(monkeypatch)
    yield cls
    for name in [m for m in sys.modules if m.startswith("approxpath_ridge")]:
        del sys.modules[name]


def test_registry_finds_the_installed_plugin(plugin, installed):
    assert "ridge" in approxpath.available_problems()
    assert plugin.__name__ == "Ridge" and plugin.__module__ == "approxpath_ridge.problem"
    assert Path(sys.modules[plugin.__module__].__file__).is_relative_to(installed)  # the installed copy
    assert registry._REGISTRY["ridge"][1].endswith("of approxpath-ridge 0.2.0")  # (its distribution and version)
    assert approxpath.get_bound("ridge") is plugin.Bound


def test_conformance_battery_passes_on_the_plugin(plugin):
    from approxpath.testing import CHECKS

    assert check_problem(plugin) == len(CHECKS)


def test_certified_lambda_path_is_eps_optimal(plugin):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 6))
    y = X @ rng.standard_normal(6) + 0.3 * rng.standard_normal(40)
    problem = plugin(X, y)
    eps = 0.01
    path = approxpath.approximate_path(problem, eps=eps, interval=(0.01, 100.0))
    assert path.certified and path.max_gap_bound <= eps
    # the certificate names where the problem came from: the entry point, its distribution and version
    assert path.certificate()[1]["problem_source"].endswith("approxpath_ridge.problem:Ridge of approxpath-ridge 0.2.0")
    # independent reference: the optimum from numpy's dense solver of (X'X + lam I) w = X'y
    for lam in np.exp(rng.uniform(np.log(0.01), np.log(100.0), 15)):
        w = np.linalg.solve(X.T @ X + lam * np.eye(6), X.T @ y)
        opt = float(np.sum((X @ w - y) ** 2) + lam * w @ w)
        sub = problem.primal_objective(path.primal(lam), lam) - opt
        assert -1e-9 <= sub <= path.gap_bound(lam) <= eps


def test_cli_runs_the_plugin(plugin, tmp_path, capsys):
    from approxpath.cli import main

    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 3))
    f = tmp_path / "train.csv"
    np.savetxt(f, np.column_stack([X, X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(30)]), delimiter=",")
    assert main(["problems"]) == 0
    assert "ridge" in capsys.readouterr().out
    cert = tmp_path / "cert.npz"
    assert main(["path", "ridge", "--data", str(f), "--format", "csv", "--eps", "0.05",
                 "--range", "1e-3", "1e3", "--out", str(cert), "--no-progress"]) == 0
    assert main(["verify", str(cert), "--require-certified"]) == 0


def test_select_chooses_a_plugin_s_parameter_sampled(plugin, tmp_path, capsys):
    """``select`` on a plug-in (a bound sweeping no kernel) raised AttributeError ('sweep', and
    on the command line the class's 'weight'); it chooses λ by the folds' loss of the path's
    models at each piece's middle, a sampled choice whose value is the folds' pooled MSE there
    (held against the closed-form optimum of each fold: the models are ε-close)."""
    from approxpath.cli import main

    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.standard_normal(40)
    s = approxpath.select(plugin(X, y), cv=4, eps=1e-3, interval=(1e-2, 1e2))
    assert s.kind == "sampled" and np.isnan(s.delta) and 1e-2 <= s.t <= 1e2
    sq = 0.0
    for k in range(4):  # (unshuffled: blocks of 10 points)
        test = np.arange(10 * k, 10 * k + 10)
        train = np.setdiff1d(np.arange(40), test)
        w = np.linalg.solve(X[train].T @ X[train] + s.t * np.eye(3), X[train].T @ y[train])
        sq += np.sum((X[test] @ w - y[test]) ** 2)
    assert abs(s.value[1] - sq / 40) <= 1e-3 * sq / 40
    f = tmp_path / "train.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    data = ["--data", str(f), "--format", "csv", "--cv", "4", "--range", "1e-2", "1e2", "--no-progress"]
    assert main(["select", "ridge", *data, "--eps", "1e-3"]) == 0
    assert "sampled" in capsys.readouterr().out
    assert main(["select", "ridge", *data]) == 2
    assert capsys.readouterr().err == "approxpath: error: ridge has no null_objective(): pass --eps\n"
    assert main(["select", "ridge", *data, "--eps", "1e-3", "--over", "lam,bandwidth", "--weights", "1", "2"]) == 2
    assert "ridge's path has one parameter, which select chooses: drop them" in capsys.readouterr().err


def test_a_surface_of_a_plugin_is_refused_in_one_line(plugin, tmp_path, capsys):
    """Both surfaces' entry points raised AttributeError ('sweep') on a problem with one parameter."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((20, 2))
    problem = plugin(X, X @ [1.0, 2.0])
    for run in (lambda: approxpath.select_surface(problem, cv=3, weights=(0.1, 1.0)),
                lambda: approxpath.approximate_surface(problem, 0.1, (0.1, 1.0), (0.5, 2.0))):
        with pytest.raises(approxpath.InputError, match="ridge has one path parameter: use approximate_path or"):
            run()
    from approxpath.cli import main

    f = tmp_path / "train.csv"
    np.savetxt(f, np.column_stack([X, X @ [1.0, 2.0]]), delimiter=",")
    assert main(["surface", "ridge", "--data", str(f), "--format", "csv", "--eps", "0.1", "--weights", "0.1", "1"]) == 2
    assert capsys.readouterr().err.endswith("ridge has one path parameter: use approxpath path or select\n")


def test_a_plugin_without_criteria_is_asked_for_one(plugin):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((20, 2))
    bare = type("Bare", (plugin,), {"criteria": ()})(X, X @ [1.0, 2.0])
    with pytest.raises(approxpath.InputError, match="ridge names no criteria: pass criterion= one of error, mae, mse"):
        approxpath.select(bare, cv=2, eps=1e-3, interval=(0.1, 1.0))
