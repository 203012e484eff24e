"""The SVM's two libSVM bindings (problems/kernel_svm/libsvm.py): the LIBSVM authors' own and
scikit-learn's give the same bits; each solves the dual (against a tight CVXPY solve); which one
a solve uses."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from approxpath.data import make_classification
from approxpath.problems.kernel_svm import libsvm as backend
from approxpath.solvers import SolveSettings, settings
from reference_helpers import tight_solve

needs_both = pytest.mark.skipif(
    not backend.official_available() or backend.importlib.util.find_spec("sklearn") is None,
    reason="needs the libsvm and sklearn extras")


def _kernel(n, t, seed, first):
    """Gaussian kernel (n, n) of two overlapping classes at bandwidth t; labels reordered so
    that the first point has label ``first``."""
    X, y = make_classification(n=n, d=3, seed=seed)
    i = int(np.flatnonzero(y == first)[0])
    order = np.r_[i, np.delete(np.arange(n), i)]
    X, y = X[order], y[order]
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-t * D), y


@needs_both
@pytest.mark.parametrize("first", [-1.0, 1.0])
@pytest.mark.parametrize("t,C", [(2.0**-6, 100.0), (1.0, 1.0), (2.0**5, 10.0), (2.0**12, 1.0)])
@pytest.mark.parametrize("tight", [False, True])
def test_official_binding_gives_sklearn_bits(first, t, C, tight):
    """Same alpha and b, bit for bit, whichever label comes first (the two bindings order the
    classes differently), at a bandwidth where kernel entries underflow to 0 (t = 2^12: libSVM
    reads precomputed entries by position, so zeros must be kept), and in the tight round."""
    K, y = _kernel(60, t, seed=3, first=first)
    if t > 1000:
        assert (K == 0).any()
    tol = backend.LIBSVM_TIGHT_TOL if tight else backend.LIBSVM_TOL
    a_off, b_off = backend._official_fit(K, y, C, tol)
    a_skl, b_skl = backend._sklearn_fit(K, y, C, tol)
    assert np.array_equal(a_off, a_skl) and b_off == b_skl
    assert (a_off > 0).any() and (a_off < C).any()  # a real solve: support vectors, some inside the box


def _dual_objective(K, y, alpha):
    Q = K * np.outer(y, y)
    return float(alpha.sum() - 0.5 * alpha @ Q @ alpha)


@pytest.mark.skipif(not backend.official_available(), reason="needs the libsvm extra")
def test_official_binding_reports_to_c_code_not_a_python_callback(monkeypatch):
    """The binding's quiet print function is a Python callback: a SIGTERM landing in it printed
    "Exception ignored ... Traceback" and the solve went on.  libSVM is handed a C function."""
    import ctypes

    import libsvm.svm

    handed = []
    original = libsvm.svm.libsvm.svm_set_print_string_function
    monkeypatch.setattr(libsvm.svm.libsvm, "svm_set_print_string_function", lambda f: handed.append(f) or original(f))
    K, y = _kernel(40, 1.0, seed=5, first=1.0)
    alpha, _ = backend._official_fit(K, y, 1.0, backend.LIBSVM_TOL)
    assert alpha.max() > 0 and handed
    address = ctypes.cast(ctypes.CDLL(None).strlen, ctypes.c_void_p).value
    assert ctypes.cast(handed[-1], ctypes.c_void_p).value == address  # what svm_train handed libSVM last
    assert ctypes.cast(libsvm.svm.ctypes_print_null, ctypes.c_void_p).value != address


@pytest.mark.skipif(not backend.official_available(), reason="needs the libsvm extra")
@pytest.mark.parametrize("t,C", [(1.0, 10.0), (4.0, 2.0)])
def test_official_binding_solves_the_dual(t, C):
    """Against CVXPY (Clarabel, tight): max 1'a - a'Qa/2, y'a = 0, 0 <= a <= C; the dual value
    agrees to 1e-6 relative, the point is feasible, and the bias b makes the decision values of
    free support vectors equal their labels (KKT)."""
    import cvxpy as cp

    K, y = _kernel(40, t, seed=5, first=1.0)
    alpha, b = backend._official_fit(K, y, C, backend.LIBSVM_TIGHT_TOL)
    a = cp.Variable(y.size)
    Q = K * np.outer(y, y)
    L = np.linalg.cholesky(Q + 1e-12 * np.eye(y.size))
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)), [y @ a == 0, a >= 0, a <= C])
    ref = tight_solve(prob, 1e-12)
    assert abs(_dual_objective(K, y, alpha) - ref) <= 1e-6 * max(1.0, abs(ref))
    assert alpha.min() >= 0 and alpha.max() <= C and abs(y @ alpha) <= 1e-9 * C * y.size
    free = (alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6))
    assert free.any()
    f = K[free] @ (y * alpha) + b
    np.testing.assert_allclose(f * y[free], 1.0, atol=1e-5)


@pytest.mark.skipif(not backend.official_available(), reason="needs the libsvm extra")
def test_which_binding_a_solve_uses(monkeypatch):
    """The official binding up to n = _OFFICIAL_MAX_N (its node copy stays within the memory the
    estimate counts), scikit-learn's above when installed; the tight round's tolerance reaches
    either."""
    used = []
    monkeypatch.setattr(backend, "_official_fit", lambda K, y, C, tol: used.append(("official", tol)) or
                        (np.zeros(y.size), 0.0))
    monkeypatch.setattr(backend, "_sklearn_fit", lambda K, y, C, tol: used.append(("sklearn", tol)) or
                        (np.zeros(y.size), 0.0))
    K, y = _kernel(20, 1.0, seed=1, first=1.0)
    backend.libsvm_candidate(K, y, 1.0)
    monkeypatch.setattr(backend, "_OFFICIAL_MAX_N", 10)
    backend.libsvm_candidate(K, y, 1.0)
    with settings(SolveSettings(None, True)):
        backend.libsvm_candidate(K, y, 1.0)
    has_sklearn = backend.importlib.util.find_spec("sklearn") is not None
    big = "sklearn" if has_sklearn else "official"
    assert used[0] == ("official", backend.LIBSVM_TOL)
    # above _OFFICIAL_MAX_N: still the official binding while scikit-learn is not imported (its
    # imports cost more than the copy up to _OFFICIAL_COLD_MAX_N), else scikit-learn's
    cold = "official" if "sklearn.svm" not in sys.modules else big
    assert used[1:] == [(cold, backend.LIBSVM_TOL), (cold, backend.LIBSVM_TIGHT_TOL)]
    used.clear()
    monkeypatch.setattr(backend, "_OFFICIAL_COLD_MAX_N", 10)
    backend.libsvm_candidate(K, y, 1.0)
    monkeypatch.setattr(backend, "_OFFICIAL_COLD_MAX_N", 20)
    monkeypatch.setitem(sys.modules, "sklearn.svm", sys.modules.get("sklearn.svm", object()))
    backend.libsvm_candidate(K, y, 1.0)
    assert used == [(big, backend.LIBSVM_TOL), (big, backend.LIBSVM_TOL)]


@pytest.mark.skipif(not backend.official_available(), reason="needs the libsvm extra")
def test_official_binding_imported_without_scipy_keeps_its_converters():
    """The binding imported without scipy (a fresh process) solves from numpy arrays through its
    own converters afterwards, loading scipy then, as if imported with it."""
    import subprocess

    code = ("import sys\nimport numpy as np\n"
            "from approxpath.problems.kernel_svm.libsvm import _official\n"
            "_official()\nbefore = 'scipy' in sys.modules\n"
            "from libsvm.svmutil import svm_problem, svm_train, svm_predict\n"
            "X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]); y = np.array([1.0, -1.0, 1.0, -1.0])\n"
            "model = svm_train(svm_problem(y, X), '-q -t 0 -c 10')\n"
            "labels = svm_predict(y, X, model, '-q')[0]\n"
            "print(before, 'scipy.sparse' in sys.modules, labels)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[:2] == ["False", "True"]
    assert out.split(None, 2)[2].strip() == "[1.0, -1.0, 1.0, -1.0]"


def test_without_either_binding_the_svm_says_so_once_and_clarabel_solves(tmp_path):
    """An install without the ``libsvm`` and ``sklearn`` extras: the SVM's exact solves fall to
    Clarabel (10-30x slower), which was silent.  The command line now says it in one warning
    line, once for all the solves, naming the extras; the path is certified as before."""
    X, y = make_classification(n=60, d=2, seed=3)
    data = tmp_path / "two.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["sklearn"] = sys.modules["libsvm"] = None  # (neither installed, as the import system reads it)
        from approxpath.cli import main
        sys.exit(main(["path", "kernel_svm", "--data", {str(data)!r}, "--format", "csv", "--c", "1",
                       "--range", "2^-4", "2^4", "--eps", "0.1", "--json"]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warned == ["approxpath: warning: kernel_svm: exact solver 'libsvm' not installed (pip install "
                      "'approxpath[libsvm]' or 'approxpath[sklearn]'; without it the SVM's exact solves run on "
                      "Clarabel, 10-30x slower); the next one solves in its place"], done.stderr
    summary = json.loads(done.stdout)
    assert summary["certified"] and summary["exact_solves"] > 3, summary
