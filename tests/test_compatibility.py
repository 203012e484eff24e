"""Certificates written by approxpath 0.3.2 (tests/data) still verify, and the verifier loads
no solver and no search code."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import approxpath

DATA = Path(__file__).resolve().parent / "data"

# The data each 0.3.2 certificate was computed on, as stored in data_0_3_2.npz: the seeded sets
# make_classification(n=30, d=2, seed=11) ("svm"), make_sinc(n=30, noise=0.1, seed=12) ("sinc") and
# make_sinc(n=30, noise=0.1, outliers=0.1, seed=13) ("outliers").  Stored, not drawn again: np.sinc
# differs in the last bit between numpy versions (1.24 and 2.4: 11 of the 30 targets of "sinc"),
# and a certificate is bound to its data's bits.
_SETS = {"kernel_svm_bandwidth.npz": "svm", "kernel_svm_c.npz": "svm", "klasso_bandwidth.npz": "sinc",
         "klasso_lam.npz": "sinc", "robust_l1_bandwidth.npz": "outliers"}


def _data_of(name):
    """``(X, y)`` of the 0.3.2 certificate ``name``."""
    with np.load(DATA / "data_0_3_2.npz") as stored:
        return stored[f"X_{_SETS[name]}"], stored[f"y_{_SETS[name]}"]


@pytest.mark.parametrize("name", sorted(_SETS))
def test_certificates_of_0_3_2_verify(name):
    from approxpath.certificate.format import read_certificate

    _, meta = read_certificate(DATA / name)
    assert meta["library_version"] == "0.3.2"
    report = approxpath.verify(DATA / name, *_data_of(name))
    assert report.ok and report.certified > 0 and not report.notes, str(report)


# Certificates of 0.4.0 and 0.4.1 of every problem, parameter and pair kind (fixed pairs, bias
# lines, kLASSO's and robust l1's moving pairs, the SVM's quadratic moving weights), written
# from Python with the data carried in the file, by each version on these seeded sets:
# make_classification(n=30, d=2, seed=21) for kernel_svm, make_sinc(n=30, noise=0.1, seed=22)
# for klasso and kernel_ridge, make_sinc(n=30, noise=0.1, outliers=0.1, seed=23) for robust_l1.
_LATER = sorted(p.name for p in DATA.glob("*_0_4_[01].npz"))


@pytest.mark.parametrize("name", _LATER)
def test_certificates_of_0_4_verify(name):
    """Every claim of a 0.4.0 or 0.4.1 file is re-proven on the one layout it is read into, with
    no note (no stored bound looser than ours), and a moving pair is read as one."""
    from approxpath.certificate.format import read_certificate
    from approxpath.moving import is_moving

    _, meta = read_certificate(DATA / name)
    assert meta["library_version"] == ("0.4.0" if name.endswith("0_4_0.npz") else "0.4.1")
    report = approxpath.verify(DATA / name)
    assert report.ok and report.certified > 0 and not report.notes, str(report)
    path = approxpath.load_path(DATA / name)
    moves = any(is_moving(x) and x.degree > 0 for p in path.pieces for x in (p.primal, p.dual))
    assert moves == (name.split("_0_4")[0] in ("kernel_svm_bandwidth", "klasso_bandwidth", "robust_l1_bandwidth",
                                               "kernel_svm_bandwidth_fixed"))
    for t in np.geomspace(*path.interval, 7):  # the point at t is a plain point
        assert not is_moving(path.primal(t)) and not is_moving(path.dual(t))


def test_the_reviews_svm_forgery_of_a_0_4_1_file_fails(tmp_path):
    """The hostile review's forgery: an honest 0.4.1 kernel_svm bandwidth certificate (fixed
    pairs), one piece given a moving pair with the span [-1.5e308, 1.5e308] (finite ends whose
    difference overflows: 0.4.1 evaluated its weight as c0 everywhere), the weight (0, 1, 0) and a
    poor second dual, the hash recomputed: refused (0.4.1 said OK while the pair's gap was 15.8 eps)."""
    from certificate_helpers import tamper

    def forge(a, m):
        k = len(a["lo"]) // 2
        a["theta_at"][k] = [-1.5e308, 1.5e308]
        a["theta"][k] = [0.0, 1.0, 0.0]
        a["dual_b"][k] = 0.0  # feasible (y'0 = 0), and poor

    report = approxpath.verify(tamper(DATA / "kernel_svm_bandwidth_fixed_0_4_1.npz", tmp_path / "forged.npz",
                                      forge, True))
    assert not report.ok and any("finite" in f and "width" in f for f in report.failures), str(report)


def test_a_0_3_2_certificate_loads_with_its_data():
    X, y = _data_of("klasso_bandwidth.npz")
    path = approxpath.load_path(DATA / "klasso_bandwidth.npz", X, y)
    assert path.certified and path.problem.name == "klasso"
    t = path.pieces[2].lo
    assert path.problem.bound.gap(path.piece_at(t).primal, path.piece_at(t).dual, t) <= path.gap_bound(t)


# Modules the verifier must not load: solvers, the search side of the problems, the driver.
_SEARCH = ("cvxpy", "clarabel", "scs", "sklearn", "approxpath.driver", "approxpath.solvers", "approxpath.problem",
           "approxpath.kernel_problem", "approxpath.registry_search")


# The problems' certificate-side modules (numpy only): what a verification may import.
_CERTIFICATE_SIDE = ("bound", "moving", "fixed", "c_path", "lam_path", "_regression", "_weight_path", "weight_path",
                     "points", "feasibility", "selecting")


def test_verify_loads_no_solver_and_no_search_code():
    code = (
        "import sys, json\n"
        "import numpy as np\n"
        "from approxpath.certificate import verify\n"
        f"data = np.load({str(DATA / 'data_0_3_2.npz')!r})\n"
        f"report = verify({str(DATA / 'klasso_bandwidth.npz')!r}, data['X_sinc'], data['y_sinc'])\n"
        "print(json.dumps([report.ok, sorted(sys.modules)]))\n"
    )
    ok, modules = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                            check=True).stdout)
    assert ok
    loaded = [m for m in modules if m.split(".")[0] in ("cvxpy", "clarabel", "scs", "sklearn")
              or m.startswith(("approxpath.driver", "approxpath.solvers"))
              or m in ("approxpath.problem", "approxpath.kernel_problem")
              or (m.startswith("approxpath.problems.") and m.count(".") == 3
                  and m.rsplit(".", 1)[1] not in _CERTIFICATE_SIDE)]
    assert loaded == [], loaded
    assert "approxpath.problems.klasso.bound" in modules and "approxpath.problems.klasso.problem" not in modules


@pytest.mark.parametrize("name, options, data", [
    ("kernel_ridge", ["--lam", "0.1"], "sinc"), ("klasso", ["--lam", "0.1"], "sinc"),
    ("robust_l1", ["--lam", "0.1"], "sinc"), ("kernel_svm", ["--c", "1"], "classification")])
def test_every_built_in_problems_verification_loads_no_search_code(tmp_path, name, options, data):
    """A kernel_ridge certificate with moving pairs at a relative eps loaded the driver and the
    selection's search: its dual floor imports ``approxpath.selection.predictions`` (numpy only),
    whose package imported the search at once."""
    from approxpath.cli import main

    csv, cert = tmp_path / "data.csv", tmp_path / "cert.npz"
    assert main(["data", data, "--n", "40", "--out", str(csv)]) == 0
    assert main(["path", name, "--data", str(csv), *options, "--eps", "0.01", "--relative", "--range", "0.25", "4",
                 "--out", str(cert), "--no-progress"]) == 0
    code = ("import sys, json\nfrom approxpath.cli import main\n"
            f"rc = main(['verify', {str(cert)!r}, '--no-progress'])\nprint(json.dumps([rc, sorted(sys.modules)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    rc, modules = json.loads(out.splitlines()[-1])
    assert rc == 0
    loaded = [m for m in modules if m.split(".")[0] in ("cvxpy", "clarabel", "scs", "sklearn", "highspy")
              or m.startswith(("approxpath.driver", "approxpath.solvers", "approxpath.selection.search",
                               "approxpath.selection.refine"))
              or m in ("approxpath.problem", "approxpath.kernel_problem")
              or (m.startswith("approxpath.problems.") and m.count(".") == 3
                  and m.rsplit(".", 1)[1] not in _CERTIFICATE_SIDE)]
    assert loaded == [], loaded


def test_cli_verify_loads_no_solver_and_no_search_code(tmp_path):
    X, y = _data_of("klasso_bandwidth.npz")
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
