"""Certificates written by approxpath 0.3.2 (tests/data) still verify, and the verifier loads
no solver and no search code."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import approxpath
from approxpath.data import make_classification, make_sinc

DATA = Path(__file__).resolve().parent / "data"

# the seeded data each 0.3.2 certificate was computed on
_DATA = {
    "kernel_svm_bandwidth.npz": lambda: make_classification(n=30, d=2, seed=11),
    "kernel_svm_c.npz": lambda: make_classification(n=30, d=2, seed=11),
    "klasso_bandwidth.npz": lambda: make_sinc(n=30, noise=0.1, seed=12),
    "klasso_lam.npz": lambda: make_sinc(n=30, noise=0.1, seed=12),
    "robust_l1_bandwidth.npz": lambda: make_sinc(n=30, noise=0.1, outliers=0.1, seed=13),
}


@pytest.mark.parametrize("name", sorted(_DATA))
def test_certificates_of_0_3_2_verify(name):
    from approxpath.certificate.format import read_certificate

    _, meta = read_certificate(DATA / name)
    assert meta["library_version"] == "0.3.2"
    report = approxpath.verify(DATA / name, *_DATA[name]())
    assert report.ok and report.certified > 0 and not report.notes, str(report)


def test_a_0_3_2_certificate_loads_with_its_data():
    X, y = _DATA["klasso_bandwidth.npz"]()
    path = approxpath.load_path(DATA / "klasso_bandwidth.npz", X, y)
    assert path.certified and path.problem.name == "klasso"
    t = path.pieces[2].lo
    assert path.problem.bound.gap(path.piece_at(t).primal, path.piece_at(t).dual, t) <= path.gap_bound(t)


# Modules the verifier must not load: solvers, the search side of the problems, the driver.
_SEARCH = ("cvxpy", "clarabel", "scs", "sklearn", "approxpath.driver", "approxpath.solvers", "approxpath.problem",
           "approxpath.kernel_problem", "approxpath.registry_search")


def test_verify_loads_no_solver_and_no_search_code():
    code = (
        "import sys, json\n"
        "from approxpath.certificate import verify\n"
        "from approxpath.data import make_sinc\n"
        f"report = verify({str(DATA / 'klasso_bandwidth.npz')!r}, *make_sinc(n=30, noise=0.1, seed=12))\n"
        "print(json.dumps([report.ok, sorted(sys.modules)]))\n"
    )
    ok, modules = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                            check=True).stdout)
    assert ok
    loaded = [m for m in modules if m.split(".")[0] in ("cvxpy", "clarabel", "scs", "sklearn")
              or m.startswith(("approxpath.driver", "approxpath.solvers"))
              or m in ("approxpath.problem", "approxpath.kernel_problem")
              or (m.startswith("approxpath.problems.") and not m.endswith((".bound", "_regression"))
                  and m.count(".") == 3)]
    assert loaded == [], loaded
    assert "approxpath.problems.klasso.bound" in modules and "approxpath.problems.klasso.problem" not in modules


def test_cli_verify_loads_no_solver_and_no_search_code(tmp_path):
    X, y = _DATA["klasso_bandwidth.npz"]()
    import numpy as np

    data = tmp_path / "sinc.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    code = (
        "import sys, json\n"
        "from approxpath.cli import main\n"
        f"rc = main(['verify', {str(DATA / 'klasso_bandwidth.npz')!r}, '--data', {str(data)!r}, '--format', 'csv'])\n"
        "print(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    rc, modules = json.loads(out.splitlines()[-1])
    assert rc == 0
    assert not [m for m in modules if m.split(".")[0] in ("cvxpy", "clarabel", "scs")
                or m.startswith(("approxpath.driver", "approxpath.solvers")) or m == "approxpath.problem"
                or m == "approxpath.problems.klasso.problem"]
