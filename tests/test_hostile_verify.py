"""Hostile files against ``verify`` and the conformance checks (each test fails on 0.4.1): false
claims (a reversed required interval, a declared dual that is no dual), files that ask for
memory or time by their layout, nesting or member count, and what the messages say."""

import io
import json
import subprocess
import sys
import zipfile

import cvxpy as cp
import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.bound import Option
from approxpath.certificate import format as fmt
from approxpath.certificate.format import read_certificate
from approxpath.cli import main
from approxpath.data import make_sinc
from approxpath.testing import check_problem
from certificate_helpers import member_data_start, tamper
from process_helpers import PEAK_KB

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def weak_duality():
    """Overrides conftest's weak-duality wrapper: a dual that is no dual makes gaps negative on
    purpose here, which the driver, verify and the conformance checks must refuse themselves."""
    yield


@pytest.fixture
def cert(sinc_csv, tmp_path):
    """(certificate, data file): a certified klasso path over [1, 4] on 30 sinc points (CSV)."""
    out = tmp_path / "cert.npz"
    assert main(["path", "klasso", "--data", str(sinc_csv), "--lam", "0.1", "--eps", "0.2", "--range", "1", "4",
                 "--no-progress", "--out", str(out)]) == 0
    return out, sinc_csv


# ---------------------------------------------------------------------------- false claims
def test_a_reversed_required_interval_is_refused(cert, capsys):
    """0.4.1: `verify --interval 100 0.5` said OK (exit 0) on a certificate covering [1, 4]."""
    file, data = cert
    capsys.readouterr()
    assert main(["verify", str(file), "--interval", "100", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "lo <= hi" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(InputError, match="lo <= hi"):
        approxpath.verify(file, *make_sinc(n=30, seed=0), interval=(100, 0.5))
    assert main(["verify", str(file), "--interval", "2", "3"]) == 0  # a true requirement still holds


def _huber(factor, huber_name):
    """Huber regression with a ridge over t, its dual declared with ``factor`` n ||u||^2 (the
    conjugate of (1/n) sum huber(r_i, M) is n/4 ||u||^2 on |u_i| <= 2M/n: 1/4 is right, 1/8 a
    dual that is no dual)."""

    class Huber(approxpath.CvxpyProblem):
        name = huber_name
        variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")
        OPTIONS = dict(M=Option("positive", default=1.0))

        @staticmethod
        def declare(X, y, t, M):
            n, d = X.shape
            beta, u = cp.Variable(d, name="beta"), cp.Variable(n, name="u")
            primal = cp.Problem(cp.Minimize(cp.sum(cp.huber(y - X @ beta, M)) / n + t / 2 * cp.sum_squares(beta)))
            dual = cp.Problem(cp.Maximize(y @ u - factor * n * cp.sum_squares(u) - cp.sum_squares(X.T @ u) / (2 * t)),
                              [cp.abs(u) <= 2 * M / n])
            return primal, dual

        @classmethod
        def examples(cls):
            X, y = _huber_data()
            return [(cls(X, y), (0.1, 10.0), 0.05)]

    return Huber


def _huber_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    return X, X @ np.array([1.0, -1.0, 0.5]) + rng.standard_normal(30)


# registered where a test needs it, not at import: modules collected later enumerate the
# registered problems' examples
HUBER_OK = _huber(0.25, "huber_cvxpy")
HUBER_WRONG = _huber(0.125, "wrong_huber_cvxpy")


def test_a_declared_dual_that_is_no_dual_stops_the_driver():
    """0.4.1 ran it and reported 'max gap bound -0.08274'."""
    X, y = _huber_data()
    assert approxpath.approximate_path(HUBER_OK(X, y), eps=0.05, interval=(0.1, 10.0)).max_gap_bound >= 0
    with pytest.raises(InputError, match="weak duality fails") as info:
        approxpath.approximate_path(HUBER_WRONG(X, y), eps=0.05, interval=(0.1, 10.0))
    assert "declaration" in str(info.value) and "\n" not in str(info.value)


def test_verify_fails_a_negative_gap(tmp_path, monkeypatch):
    """A certificate of the wrong declaration (written with the driver's check off) fails
    verification on every piece whose gap is negative (0.4.1: OK)."""
    from approxpath.driver import run

    monkeypatch.setattr(run, "weak_duality_violation", lambda *a: None)
    approxpath.register(HUBER_WRONG)  # verify finds the declaration in the registry
    X, y = _huber_data()
    path = approxpath.approximate_path(HUBER_WRONG(X, y), eps=0.05, interval=(0.1, 10.0))
    negative = [p for p in path.pieces if p.gap_bound < 0]
    assert negative
    report = approxpath.verify(path.save(tmp_path / "wrong.npz"), X, y)
    assert not report.ok
    assert sum("weak duality fails" in f for f in report.failures) >= len(negative)


def test_check_problem_refuses_a_dual_that_is_no_dual():
    from approxpath.testing.checks import check_exact_pair_is_optimal_and_feasible, examples_of

    check_exact_pair_is_optimal_and_feasible(examples_of(HUBER_OK)[0])  # the same check passes the right dual
    with pytest.raises(AssertionError, match="weak duality"):
        check_problem(HUBER_WRONG)


def test_check_problem_without_examples_is_no_pass():
    """0.4.1 returned 0 checks run for a class without examples(): a check that cannot fail."""
    class Bare(HUBER_WRONG):
        name = "bare_huber_cvxpy"

        @classmethod
        def examples(cls):
            return []

    with pytest.raises(AssertionError, match="no examples"):
        check_problem(Bare)


def test_a_negative_rigorous_bound_is_a_contradiction():
    """For a problem with interval bounds any negative gap bound fails, however small."""
    from approxpath.certificate.claims import weak_duality_violation

    problem = approxpath.get_problem("klasso")(*make_sinc(n=12, seed=2), lam=0.1)
    primal, dual = problem.solve(1.0)
    assert weak_duality_violation(problem.bound, -1e-300, dual, 1.0, 2.0) is not None
    assert weak_duality_violation(problem.bound, 0.0, dual, 1.0, 2.0) is None
    sampled = HUBER_OK(*_huber_data())
    primal, dual = sampled.solve(1.0)
    assert weak_duality_violation(sampled.bound, -1e-12, dual, 1.0) is None  # within the declared rounding
    assert weak_duality_violation(sampled.bound, -1e-3, dual, 1.0) is not None


# ---------------------------------------------------------------------------- memory and time
def _npy(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _rewritten(src, dst, meta_edit=None, zeros=None):
    """``src`` with its meta edited by ``meta_edit`` and, with ``zeros = (member, shape)``, that
    member replaced by zeros streamed into the archive (a few hundred KB on disk however large);
    the content hash is left as it was (these files are refused before it is checked)."""
    _, meta = read_certificate(src)
    if meta_edit is not None:
        meta_edit(meta)
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            name = info.filename
            if name == "meta.npy":
                out.writestr(name, _npy(np.array(json.dumps(meta))))
            elif zeros is not None and name == f"{zeros[0]}.npy":
                with out.open(name, "w", force_zip64=True) as fh:
                    np.lib.format.write_array_header_1_0(fh, dict(descr="<f8", fortran_order=False, shape=zeros[1]))
                    left, block = 8 * int(np.prod(zeros[1])), bytes(1 << 24)
                    while left:
                        fh.write(block[:min(left, len(block))])
                        left -= min(left, len(block))
            else:
                out.writestr(name, z.read(name))
    return dst


def test_the_layout_is_bounded_by_the_data_not_by_the_file(cert, tmp_path):
    """meta says n = 6000 and 1000 pieces (the data have n = 30), and one array is 1000 x 30000
    zeros (240 MB that compress to 0.2 MB): within the layout the file declares, so 0.4.1
    decompressed it (1.99 GB from a 1.9 MB file, 19 s) before finding that the data do not
    match.  The layout is now bounded by the data: nothing is decompressed."""
    file, data = cert
    pieces, wide = 1000, 6000
    forged = _rewritten(file, tmp_path / "wide.npz", lambda m: m.update(n=wide, piece_kinds=["certified"] * pieces),
                        ("beta", (pieces, 5 * wide)))
    assert forged.stat().st_size < 2e6
    code = PEAK_KB + ("import json, approxpath, numpy as np\n"
            "base = peak_kb()\n"
            f"X = np.loadtxt({str(data)!r}, delimiter=',')\n"
            f"report = approxpath.verify({str(forged)!r}, X[:, :-1], X[:, -1])\n"
            "print(json.dumps([report.ok, list(report.failures), peak_kb() - base]))\n")
    ok, failures, grown_kb = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                       check=True, timeout=120).stdout)
    assert not ok and "the certificate is for data with n = 6000, but the data given have n = 30" in failures[0]
    assert grown_kb < 100_000  # 0.4.1: 240 MB more


def test_verify_reads_no_member_beyond_the_meta_of_a_mismatched_file(cert, tmp_path, monkeypatch):
    file, data = cert
    forged = _rewritten(file, tmp_path / "n.npz", lambda m: m.update(n=31))
    read = []
    real = fmt.read_member
    monkeypatch.setattr(fmt, "read_member", lambda zf, info: (read.append(info.filename), real(zf, info))[1])
    report = approxpath.verify(forged, *make_sinc(n=30, seed=0))
    assert not report.ok and "but the data given have n = 30" in report.failures[0]
    assert read == ["meta.npy"]


def _many_members(dst, count):
    buf = io.BytesIO()
    np.save(buf, np.zeros(1))
    with zipfile.ZipFile(dst, "w") as z:
        for k in range(count):
            z.writestr(f"a{k}.npy", buf.getvalue())
    return dst


def test_an_archive_of_many_members_is_refused_before_its_directory_is_read(tmp_path, monkeypatch):
    """0.4.1 opened every member's header first (100,000 members: 58 s); now the count in the
    archive's last record decides, before zipfile parses the directory."""
    many = _many_members(tmp_path / "many.npz", 3000)
    monkeypatch.setattr(fmt.zipfile, "ZipFile", lambda *a, **k: pytest.fail("the directory was parsed"))
    report = approxpath.verify(many, *make_sinc(n=30, seed=0))
    assert not report.ok and "3000 members (a certificate has at most 2048)" in report.failures[0]


@pytest.mark.slow
def test_100000_members_are_refused_before_the_directory_is_read(tmp_path, monkeypatch):
    """0.4.1 parsed the whole directory first: 10 s here, 58 s on a loaded machine."""
    import zipfile

    def no_directory(*args, **kwargs):
        raise AssertionError("the zip directory was parsed")

    many = _many_members(tmp_path / "many.npz", 100_000)
    monkeypatch.setattr(zipfile, "ZipFile", no_directory)
    report = approxpath.verify(many, *make_sinc(n=30, seed=0))
    assert not report.ok and "at least 65535 members" in report.failures[0]


def _deep(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_meta_is_refused_cleanly(cert, tmp_path, capsys, depth):
    """0.4.1: a RecursionError traceback (exit 70) in verify and --resume."""
    file, data = cert
    forged = tmp_path / "deep.npz"
    with zipfile.ZipFile(file) as z, zipfile.ZipFile(forged, "w") as out:
        for info in z.infolist():
            if info.filename == "meta.npy":
                meta = read_certificate(file)[1]
                text = json.dumps(meta)[:-1] + ', "x": ' + "[" * depth + "0" + "]" * depth + "}"
                buf = io.BytesIO()
                np.save(buf, np.array(text))
                out.writestr(info.filename, buf.getvalue())
            else:
                out.writestr(info.filename, z.read(info.filename))
    capsys.readouterr()
    assert main(["verify", str(forged), "--data", str(data)]) == 1
    out, err = capsys.readouterr()
    assert "nested deeper than 32 levels" in out and "Traceback" not in err
    checkpoint = tmp_path / "resume.npz"
    forged.rename(checkpoint)
    code = main(["path", "klasso", "--data", str(data), "--lam", "0.1", "--eps", "0.2", "--range", "1", "4",
                 "--no-progress", "--checkpoint", str(checkpoint), "--resume"])
    err = capsys.readouterr().err
    assert code == 2 and "nested deeper" in err and "Traceback" not in err


# ---------------------------------------------------------------------------- messages
def test_verify_on_other_data_fails_with_status_1(cert, tmp_path, capsys):
    """0.4.1: exit 2 (a usage error) for a certificate that simply is not about these data."""
    file, data = cert
    other = tmp_path / "other.csv"
    X, y = make_sinc(n=30, seed=1)
    np.savetxt(other, np.column_stack([X, y]), delimiter=",")
    capsys.readouterr()
    assert main(["verify", str(file), "--data", str(other)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED") and "do not match the certificate" in out


def test_a_forged_data_file_is_not_echoed(cert, tmp_path, capsys):
    """0.4.1 read the file a forged certificate named and printed part of it in the error."""
    file, data = cert
    secret = tmp_path / "secret.txt"
    secret.write_text("1,2\nhunter2-SECRET-TOKEN,3\n")  # its second line is no CSV row: 0.4.1 quoted it
    forged = tamper(file, tmp_path / "forged.npz", lambda a, m: m.__setitem__("data_file", str(secret)), rehash=True)
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 2
    out, err = capsys.readouterr()
    assert "SECRET" not in out + err and "pass --data FILE" in err


def test_verify_messages_show_numbers_not_numpy_reprs(cert, tmp_path):
    file, data = cert
    forged = tamper(file, tmp_path / "gap.npz", lambda a, m: a["hi"].__setitem__(0, a["hi"][0] * 1.01), rehash=True)
    report = approxpath.verify(forged, *make_sinc(n=30, seed=0))
    assert not report.ok and "do not meet" in str(report) and "np.float64" not in str(report)


def test_a_klasso_offset_stored_as_an_array_is_refused_cleanly(cert, tmp_path):
    """beta0 stored with an extra axis fails verification with a message, not an exception."""
    file, data = cert

    def widen(a, m):
        a["primal_beta0"] = np.stack([a["primal_beta0"], a["primal_beta0"]], axis=-1)

    from approxpath.data import load_data

    X, y = load_data(data, "csv")
    report = approxpath.verify(tamper(file, tmp_path / "wide.npz", widen, True), X, y)
    assert not report.ok and report.failures


def test_a_flipped_byte_in_any_member_fails_verify_cleanly(cert, capsys):
    """A byte flipped anywhere in a member's compressed data: ``verify`` says the file is damaged
    (exit 1, one line), or the content is unchanged (a bit the decompressor ignores) and it
    verifies.  A bad CRC of ``meta`` left the reader as an internal error (exit 70)."""
    file, data = cert
    raw, (arrays, meta) = file.read_bytes(), read_certificate(file)
    flipped = file.with_name("flipped.npz")
    outcomes = set()
    with zipfile.ZipFile(file) as z:
        members = z.infolist()
    for member in members:
        start = member_data_start(raw, member)
        for offset in np.linspace(0, member.compress_size - 1, 12).astype(int):
            bad = bytearray(raw)
            bad[start + offset] ^= 0xFF
            flipped.write_bytes(bytes(bad))
            code = main(["verify", str(flipped), "--data", str(data), "--no-progress"])
            out = capsys.readouterr()
            assert "Traceback" not in out.err and "internal error" not in out.err, (member.filename, offset, out.err)
            if code == 0:  # the same content, bit for bit
                again, again_meta = read_certificate(flipped)
                assert again_meta == meta and again.keys() == arrays.keys()
                assert all(np.array_equal(again[k], arrays[k]) for k in arrays)
            else:
                assert code == 1 and "is not a certificate" in out.out, (member.filename, offset, out.out)
            outcomes.add(code)
    assert 1 in outcomes


@pytest.mark.parametrize("end, factor", [("lo", 1.01), ("hi", 0.99)])
def test_pieces_short_of_the_interval_are_refused(cert, tmp_path, end, factor):
    """A careful forger's shorter path (the first piece starting inside the interval, or the last
    ending inside it; the hash recomputed, every piece still certified): the pieces no longer
    cover [t_lo, t_hi], which nothing but the coverage check sees."""
    file, data = cert
    k = 0 if end == "lo" else -1
    forged = tamper(file, tmp_path / "short.npz", lambda a, m: a[end].__setitem__(k, a[end][k] * factor), rehash=True)
    report = approxpath.verify(forged, *make_sinc(n=30, seed=0))
    assert not report.ok and [f for f in report.failures if f.startswith("pieces cover [")], report.failures
