"""Malformed user input gets an InputError (CLI: exit 2) naming the argument; a malformed
certificate is a failed verification (exit 1, "FAILED: ..."), never OK, never a traceback."""

import warnings

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.cli import main
from approxpath.data import make_classification, make_sinc
from approxpath.exact.crosscheck import crosscheck, write_claimed
from approxpath.certificate.format import FORMAT_VERSION
from certificate_helpers import tamper


# ---------------------------------------------------------------------------- crosscheck
@pytest.fixture(scope="module")
def robust():
    X, y = make_sinc(n=20, seed=0)
    return approxpath.get_problem("robust_l1")(X, y, lam=0.1)


@pytest.mark.parametrize("samples", [0, -1, 2.5, "8", True])
def test_crosscheck_samples_must_be_positive_integer(robust, samples):
    with pytest.raises(InputError, match="samples must be a positive integer"):
        crosscheck(robust, [1.0, 2.0], {"beta": np.zeros((2, robust.n))}, linear=True, samples=samples)


def test_crosscheck_samples_kernel_svm():
    X, y = make_classification(n=20, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    with pytest.raises(InputError, match="samples must be a positive integer"):
        crosscheck(problem, [1.0, 2.0], {"w": np.zeros((2, 20)), "b": np.zeros(2)}, linear=True, samples=0)


def test_cli_crosscheck_samples_zero(tmp_path, capsys):
    X, y = make_sinc(n=20, seed=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    write_claimed(tmp_path / "p.npz", [1.0, 2.0], {"beta": np.zeros((2, 20))})
    code = main(["crosscheck", "robust_l1", "--data", str(tmp_path / "d.csv"), "--format", "csv", "--lam", "0.1",
                 "--path", str(tmp_path / "p.npz"), "--linear", "--samples", "0"])
    assert code == 2
    assert "samples must be a positive integer" in capsys.readouterr().err


@pytest.mark.parametrize("beta,match", [
    (np.zeros(5), "must be \\(points x n\\)"),
    (np.full(20, np.inf), "contains NaN or inf"),
    (np.r_[np.zeros(19), np.nan], "contains NaN or inf"),
    (1.0, "must be \\(points x n\\)"),
])
def test_crosscheck_primal_objects_get_the_dict_checks(robust, beta, match):
    primal = type(robust).Primal
    with pytest.raises(InputError, match=match):
        crosscheck(robust, [1.0, 2.0], [primal(beta=beta), primal(beta=beta)], linear=True)
    arrays = {"beta": np.stack([np.asarray(beta, dtype=float)] * 2)}
    with pytest.raises(InputError, match=match):  # the same message as for dict input
        crosscheck(robust, [1.0, 2.0], arrays, linear=True)


def test_crosscheck_primal_objects_still_work(robust):
    primal = type(robust).Primal
    report = crosscheck(robust, [1.0, 2.0], [primal(beta=np.zeros(robust.n))] * 2, linear=True, samples=2)
    assert len(report.points) == 2 and len(report.segments) == 1


def test_crosscheck_primal_objects_of_another_problem(robust):
    X, y = make_classification(n=20, seed=0)
    svm = approxpath.get_problem("kernel_svm")(X, y)
    with pytest.raises(InputError, match="RobustL1Primal"):
        crosscheck(svm, [1.0, 2.0], [type(robust).Primal(beta=np.zeros(20))] * 2)


# ---------------------------------------------------------------------------- certificates
@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    """A klasso certificate in ``root/sub`` whose data file is recorded as ``sinc.csv`` (relative
    to ``sub``, the folder it was written from)."""
    root = tmp_path_factory.mktemp("root")
    (root / "sub").mkdir()
    X, y = make_sinc(n=30, seed=0)
    np.savetxt(root / "sub" / "sinc.csv", np.column_stack([X, y]), delimiter=",")
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    path = approxpath.approximate_path(problem, eps=0.05, interval=(0.25, 8.0),
                                       meta=dict(data_file="sinc.csv", format="csv", preprocessing="none"))
    return root, path.save(root / "sub" / "kl.npz"), X, y


def _forge(src, dst, edit):
    """``src`` edited by ``edit(arrays, meta)``, the content hash recomputed (a careful forger),
    naming the data file by its absolute path (the CLI finds it from anywhere)."""
    def edit_and_point(arrays, meta):
        edit(arrays, meta)
        meta["data_file"] = str(src.parent / "sinc.csv")

    return tamper(src, dst, edit_and_point, rehash=True)


def _set(key, f):
    return lambda a, m: a.__setitem__(key, f(a[key]))


# ("{n}": the certificate's number of pieces, "{m}": one fewer)
MALFORMED = {
    "lo as strings": (_set("lo", lambda v: v.astype(str)), "array 'lo' must be float"),
    "lo 3-D": (_set("lo", lambda v: v[:, None, None]), "array 'lo' has shape \\({n}, 1, 1\\), expected \\({n},\\)"),
    "gap_bound short": (_set("gap_bound", lambda v: v[:-1]), "array 'gap_bound' has shape \\({m},\\), expected \\({n},\\)"),
    "gap_bound as strings": (_set("gap_bound", lambda v: v.astype(str)), "array 'gap_bound' must be float"),
    "lo missing": (lambda a, m: a.pop("lo"), "certificate lacks array 'lo'"),
    "hi missing": (lambda a, m: a.pop("hi"), "certificate lacks array 'hi'"),
    "lo short": (_set("lo", lambda v: v[:-1]), "array 'lo' has shape \\({m},\\), expected \\({n},\\)"),
    "hi short": (_set("hi", lambda v: v[:-1]), "array 'hi' has shape \\({m},\\), expected \\({n},\\)"),
    "kind short": (_set("kind", lambda v: v[:-1]), "array 'kind' has shape \\({m},\\), expected \\({n},\\)"),
    "kind as numbers": (_set("kind", lambda v: np.zeros(v.size)), "array 'kind' must be text"),
    "beta short": (_set("primal_beta", lambda v: v[:-1]), "array 'primal_beta' has {m} rows, expected {n}"),
    "beta as strings": (_set("primal_beta", lambda v: v.astype(str)), "array 'primal_beta' must be float"),
    "beta missing": (lambda a, m: a.pop("primal_beta"), "certificate lacks array 'primal_beta'"),
    "format 99": (lambda a, m: m.__setitem__("format_version", 99),
                  f"written by a newer approxpath \\(format 99\\); this version reads formats <= {FORMAT_VERSION}"),
    "format as text": (lambda a, m: m.__setitem__("format_version", "1"), "format_version"),
    "eps missing": (lambda a, m: m.pop("eps"), "meta lacks 'eps'"),
    "interval as text": (lambda a, m: m.__setitem__("interval", "ab"), "meta 'interval'"),
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_verify_fails_on_malformed_certificate(cert, tmp_path, capsys, what):
    root, file, X, y = cert
    edit, match = MALFORMED[what]
    with np.load(file) as arrays:  # (the stored count, without verifying the file again per case)
        n = arrays["lo"].size
    match = match.replace("{n}", str(n)).replace("{m}", str(n - 1))
    bad = _forge(file, tmp_path / "bad.npz", edit)
    report = approxpath.verify(bad, X, y)
    assert not report.ok
    assert any(__import__("re").search(match, f) for f in report.failures), report.failures
    assert main(["verify", str(bad)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("FAILED: ") and "Traceback" not in out + err
    with pytest.raises(InputError, match="not a valid certificate|does not verify"):
        approxpath.load_path(bad, X, y)


def test_verify_fails_on_a_file_that_is_no_certificate(cert, tmp_path, capsys):
    root, file, X, y = cert
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip file")
    assert not approxpath.verify(junk, X, y).ok
    assert main(["verify", str(junk), "--data", str(root / "sub" / "sinc.csv"), "--format", "csv"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("FAILED: ") and "Traceback" not in out + err
    nometa = tmp_path / "nometa.npz"
    np.savez(nometa, lo=np.zeros(1))
    assert main(["verify", str(nometa)]) == 1
    assert "lacks 'meta'" in capsys.readouterr().out


def test_verify_still_accepts_the_original(cert, capsys, monkeypatch):
    root, file, X, y = cert
    assert approxpath.verify(file, X, y).ok
    monkeypatch.chdir(root / "sub")
    assert main(["verify", "kl.npz"]) == 0


def test_verify_finds_relative_data_next_to_the_certificate(cert, capsys, monkeypatch):
    root, file, X, y = cert
    monkeypatch.chdir(root)
    assert main(["verify", "sub/kl.npz"]) == 0
    assert capsys.readouterr().out.startswith("OK: ")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "kl.npz").write_bytes(file.read_bytes())
    assert main(["verify", "elsewhere/kl.npz"]) == 2  # neither place has sinc.csv: both are named
    err = capsys.readouterr().err
    assert "'sinc.csv'" in err and "'elsewhere/sinc.csv'" in err and "--data" in err


# ---------------------------------------------------------------------------- options, X, y
@pytest.fixture(scope="module")
def svm_data():
    return make_classification(n=20, seed=0)


@pytest.mark.parametrize("c", ["1", None, [1.0], True])
def test_kernel_svm_c_not_a_number(svm_data, c):
    with pytest.raises(InputError, match="c must be a number"):
        approxpath.get_problem("kernel_svm")(*svm_data, c=c)


@pytest.mark.parametrize("name,options", [
    ("klasso", dict(lam="0.1")),
    ("robust_l1", dict(lam=[0.1])),
    ("klasso", dict(parameter="lam", bandwidth="1")),
    ("kernel_svm", dict(parameter="c", bandwidth="1")),
])
def test_path_parameter_options_not_a_number(name, options):
    X, y = make_classification(n=20, seed=0)
    key = "bandwidth" if "bandwidth" in options else "lam"
    with pytest.raises(InputError, match=f"{key} must be a number"):
        approxpath.get_problem(name)(X, y, **options)


def test_y_with_none():
    X, y = make_sinc(n=20, seed=0)
    y = y.astype(object)
    y[3] = None
    with pytest.raises(InputError, match="y contains None \\(first at index 3\\)"):
        approxpath.get_problem("klasso")(X, y, lam=0.1)


def test_complex_values():
    """No silent cut to the real part (numpy only warns): X and y both."""
    X, y = make_sinc(n=20, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="X must be numeric"):
            approxpath.get_problem("klasso")(X + 1j, y, lam=0.1)
        with pytest.raises(InputError, match="y must be real numbers"):
            approxpath.get_problem("klasso")(X, y + 1j, lam=0.1)
        yo = y.astype(object)
        yo[0] = 1 + 2j
        with pytest.raises(InputError, match="y must be real numbers"):
            approxpath.get_problem("robust_l1")(X, yo, lam=0.1)


@pytest.mark.parametrize("as_array", [True, False])
def test_kernel_svm_mixed_label_types(svm_data, as_array):
    X, _ = svm_data
    y = ["a", 1] * 10
    y = np.array(y, dtype=object) if as_array else y
    with pytest.raises(InputError, match="y mixes value types \\(int, str\\)"):
        approxpath.get_problem("kernel_svm")(X, y)


def test_numeric_object_y_is_fine(svm_data):
    X, y = svm_data
    p = approxpath.get_problem("kernel_svm")(X, np.array([int(v) for v in y], dtype=object))
    np.testing.assert_array_equal(p.y, y)


def test_x_with_strings():
    X, y = make_sinc(n=20, seed=0)
    X = X.astype(object)
    X[2, 0] = "x"
    with pytest.raises(InputError, match="X must be numeric"):
        approxpath.get_problem("klasso")(X, y, lam=0.1)


def test_csv_with_text_cells(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("x,y\n1,2\n3,abc\n5,6\n")
    with pytest.raises(InputError, match="d.csv"):
        approxpath.data.load_data(tmp_path / "d.csv", "csv")
    assert main(["path", "klasso", "--data", str(tmp_path / "d.csv"), "--format", "csv", "--lam", "0.1"]) == 2
    assert "not a number" in capsys.readouterr().err


# ---------------------------------------------------------------------------- numbers beyond double precision
@pytest.mark.parametrize("call, match", [
    (lambda P, X, y: P(X, y, c=10**400), "c must be a positive finite number"),
    (lambda P, X, y: P(X, y, c=1.0, kernel="ard", feature_weights=(10**400, 1)), "finite nonnegative numbers"),
    (lambda P, X, y: P(np.array([[10**400, 1]] * 20, dtype=object), y, c=1.0), "X must be numeric"),
    (lambda P, X, y: approxpath.approximate_path(P(X, y, c=1.0), eps=10**400), "eps"),
    (lambda P, X, y: approxpath.approximate_path(P(X, y, c=1.0), eps=0.1, interval=(1, 10**400)), "interval"),
])
def test_a_python_int_beyond_double_precision_is_an_input_error(call, match):
    """float() of such an int raises OverflowError, which escaped as a traceback."""
    X, y = make_classification(n=20, d=2, seed=0)
    with pytest.raises(InputError, match=match):
        call(approxpath.get_problem("kernel_svm"), X, y)


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "1e400", "abc"])
def test_a_memory_budget_that_is_no_positive_number_is_refused(value, monkeypatch, capsys, tmp_path):
    """-1 and 0 were taken as budgets ("more than the 0 B available"), nan and inf ignored."""
    monkeypatch.setenv("APPROXPATH_MEMORY", value)
    X, y = make_sinc(n=20, seed=0)
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["path", "klasso", "--data", str(data), "--lam", "0.1", "--no-progress"]) == 2
    assert "APPROXPATH_MEMORY must be a positive finite number of bytes" in capsys.readouterr().err
