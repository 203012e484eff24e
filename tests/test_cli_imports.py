"""What a command-line run imports: a ``path kernel_svm`` run (with and without ``--out``) loads no
CVXPY, no matplotlib, no Dask, no scipy.spatial (~0.2 s), no other problem, no entry-point scan, and no scikit-learn
and no scipy at all (~0.1 s) when the LIBSVM authors' binding is installed; the registry finds plug-ins all the same."""

import json
import subprocess
import sys
import types

import numpy as np
import pytest

from approxpath import registry
from approxpath.data import make_classification
from approxpath.problems.kernel_svm.libsvm import official_available

_HEAVY = ("cvxpy", "matplotlib", "dask", "distributed") + (("sklearn",) if official_available() else ())


def _modules_after(argv):
    """(exit status, sorted sys.modules, entry-point scans) of ``approxpath.cli.main(argv)`` in a
    fresh process (scipy imports importlib.metadata itself: the scans are counted)."""
    code = ("import sys, json\nimport importlib.metadata as md\nscans = []\nreal = md.entry_points\n"
            "md.entry_points = lambda *a, **k: scans.append(1) or real(*a, **k)\n"
            "from approxpath.cli import main\n"
            f"rc = main({argv!r})\nprint(json.dumps([rc, sorted(sys.modules), len(scans)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("out", [False, True])
def test_cli_svm_path_imports_nothing_heavy(tmp_path, out):
    X, y = make_classification(n=40, d=2, seed=0)
    data = tmp_path / "two.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    argv = ["path", "kernel_svm", "--data", str(data), "--format", "csv", "--c", "0.1", "--eps", "0.5",
            "--range", "2^-2", "2^4", "--no-progress", "--json"]
    if out:
        argv += ["--out", str(tmp_path / "cert.npz")]
    rc, modules, scans = _modules_after(argv)
    assert rc == 0
    assert (tmp_path / "cert.npz").is_file() == out
    assert [m for m in modules if m.split(".")[0] in _HEAVY] == []
    assert [m for m in modules if m.startswith("scipy.spatial")] == []
    # only the named problem, and no scan of the installed distributions
    assert "approxpath.problems.kernel_svm.problem" in modules
    assert not [m for m in modules if m.startswith(("approxpath.problems.klasso", "approxpath.problems.robust_l1",
                                                    "approxpath.problems.kernel_ridge"))]
    assert scans == 0
    if official_available():
        assert "libsvm.svm" in modules  # the exact solves went through the official binding
        assert [m for m in modules if m.split(".")[0] == "scipy"] == []


def test_cli_problems_lists_the_plugins_too():
    """``approxpath problems`` still loads every built-in problem and scans the entry points, and
    no scipy."""
    rc, modules, scans = _modules_after(["problems"])
    assert rc == 0 and scans == 1
    assert {"approxpath.problems.klasso.problem", "approxpath.problems.robust_l1.problem"} <= set(modules)
    # ... and no scipy: the solvers import it where they solve (scipy.linalg alone took ~0.2 s
    # of the 0.45 s this command took)
    assert [m for m in modules if m.split(".")[0] == "scipy"] == []


def _entry_point(name, cls):
    return types.SimpleNamespace(name=name, value="pkg.mod:Other", load=lambda: cls,
                                 dist=types.SimpleNamespace(name="pkg"))


def test_plugin_found_by_name_without_listing_first(monkeypatch):
    """A name that is not built in scans the entry points (no earlier available_problems())."""
    base = registry.get_problem("kernel_svm")
    bound = type("OtherBound", (base.Bound,), {"name": "late_plugin", "__module__": "x"})
    cls = type("Other", (base,), {"name": "late_plugin", "Bound": bound, "__module__": "x"})
    monkeypatch.setattr(registry, "entry_points", lambda group: [_entry_point("late_plugin", cls)])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    assert registry.get_problem("late_plugin") is cls and registry._loaded


def test_builtin_lookup_skips_the_scan(monkeypatch):
    """A built-in name imports that problem alone; a plug-in claiming the same name is skipped
    with a warning once everything is loaded (available_problems, or any other name)."""
    clash = type("Other", (registry.get_problem("kernel_svm"),), {"name": "kernel_svm", "__module__": "x"})
    monkeypatch.setattr(registry, "entry_points", lambda group: [_entry_point("kernel_svm", clash)])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_REGISTRY", {"kernel_svm": registry._REGISTRY["kernel_svm"]})
    assert registry.get_problem("kernel_svm").__module__ == "approxpath.problems.kernel_svm.problem"
    assert list(registry._REGISTRY) == ["kernel_svm"] and not registry._loaded
    monkeypatch.setattr(registry, "_BROKEN", {})
    with pytest.warns(UserWarning, match="skipped the plug-in problem entry point 'kernel_svm'"):
        assert registry.available_problems() == ["kernel_svm"]
    assert registry.get_problem("kernel_svm").__module__ == "approxpath.problems.kernel_svm.problem"


def test_a_submodule_is_an_attribute_on_first_use():
    """``import approxpath; approxpath.data.make_classification(...)`` raised AttributeError
    unless ``approxpath.data`` had been imported; a submodule is now imported on first use (and
    only then), an unknown name is still an AttributeError, and a submodule whose dependency is
    missing says which."""
    code = ("import sys, approxpath\nassert 'approxpath.data' not in sys.modules\n"
            "X, y = approxpath.data.make_classification(n=6)\nassert X.shape == (6, 2)\n"
            "assert not hasattr(approxpath, 'no_such_module') and not hasattr(approxpath, '_private')\n"
            "sys.modules['sklearn'] = None  # (scikit-learn not installed, as the import system reads it)\n"
            "try:\n    approxpath.sklearn\nexcept ModuleNotFoundError as exc:\n    print('missing', exc.name, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "missing sklearn approxpath.sklearn needs scikit-learn: pip install 'approxpath[sklearn]'"


def test_cli_exact_imports_no_scipy_optimize(tmp_path):
    """``approxpath exact klasso`` needs scipy's linear algebra only: not scipy.optimize and what it
    pulls in (scipy.spatial, scipy.sparse.linalg: ~0.15 s of a half-second command), which only the
    feature path's inner ridge solve uses."""
    from approxpath.data import make_sinc

    X, y = make_sinc(30, noise=0.1, seed=0)
    data = tmp_path / "sinc.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    rc, modules, _ = _modules_after(["exact", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam",
                                     "--bandwidth", "1", "--range", "1e-2", "1", "--json"])
    assert rc == 0
    assert "scipy.linalg" in modules  # (the exact path's factorizations)
    assert [m for m in modules if m.startswith(("scipy.optimize", "scipy.spatial"))] == []
