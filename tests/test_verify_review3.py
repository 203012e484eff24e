"""A third hostile review of ``verify`` (each test fails on the code before it): a claim read
twice from one meta, a requirement left unchecked, old-format files whose arrays have another
shape, stored fields outside their domains, carried data that are not the file's, and verdicts
that say why they fail."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.certificate.format import read_certificate
from approxpath.cli import main
from approxpath.data import load_data, make_classification, make_sinc
from certificate_helpers import tamper

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def weak_duality():
    """Overrides conftest's weak-duality wrapper: forged pairs are for verify to refuse."""
    yield


@pytest.fixture
def cert(tmp_path, sinc_csv):
    """(certificate, X, y): a certified klasso bandwidth path over [1, 4] on 30 sinc points."""
    X, y = load_data(sinc_csv, "csv")
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=0.2, interval=(1.0, 4.0))
    return path.save(tmp_path / "c.npz", embed_data=False), X, y


def _with_raw_meta(src, dst, text):
    """``src`` with its meta replaced by the JSON ``text`` as written (keys given twice stay)."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
    np.savez(dst, meta=np.array(text), **arrays)
    return dst


def test_a_claim_given_twice_in_meta_fails(cert, tmp_path, sinc_csv, capsys):
    """Python's json keeps the last of two equal keys, other readers the first: eps = 1e-4
    written before the true eps = 0.2 was a false claim for them, and verify said OK."""
    file, X, y = cert
    meta = read_certificate(file)[1]
    text = json.dumps(meta, sort_keys=True)
    assert '"eps": 0.2' in text
    forged = _with_raw_meta(file, tmp_path / "twice.npz", text.replace('"eps": 0.2', '"eps": 0.0001, "eps": 0.2'))
    report = approxpath.verify(forged, X, y)
    assert not report.ok and "the key 'eps' is given twice" in report.failures[0]
    capsys.readouterr()
    assert main(["verify", str(forged), "--data", str(sinc_csv), "--format", "csv"]) == 1
    assert "given twice" in capsys.readouterr().out


def test_a_surface_meets_both_a_required_box_and_a_required_interval(tmp_path):
    """``interval`` was ignored where ``box`` was given too."""
    X, y = make_sinc(n=12, seed=2)
    surface = approxpath.approximate_surface(approxpath.get_problem("klasso")(X, y, lam=0.1), 0.05, (0.05, 0.2),
                                             (0.5, 2.0))
    file = surface.save(tmp_path / "s.npz", embed_data=False)
    box = ((0.5, 2.0), (0.05, 0.2))
    assert approxpath.verify(file, X, y, box=box, interval=(0.5, 2.0)).ok
    report = approxpath.verify(file, X, y, box=box, interval=(0.25, 2.0))
    assert not report.ok and "required the box [0.25, 2]" in report.failures[0]


@pytest.mark.parametrize("name,key", [("kernel_svm_bandwidth_0_4_1", "bias"), ("klasso_bandwidth_0_4_1", "dual_scale"),
                                      ("klasso_bandwidth_0_4_1", "beta0"), ("robust_l1_bandwidth_0_4_1", "dual_scale")])
def test_an_old_format_number_per_piece_with_an_extra_axis_fails_cleanly(tmp_path, capsys, name, key):
    """0.5.0 before: a TypeError out of ``verify`` and exit status 70 (an internal error)."""
    src = DATA / f"{name}.npz"
    if key not in read_certificate(src)[0]:
        pytest.skip(f"{name} stores no {key}")
    forged = tamper(src, tmp_path / "wide.npz", lambda a, m: a.__setitem__(key, np.stack([a[key], a[key]], 1)), True)
    report = approxpath.verify(forged)
    assert not report.ok and f"array {key!r} must hold one number per piece" in report.failures[-1]
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 1
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("key", ["primal_count", "dual_degree"])
def test_a_count_or_degree_with_an_extra_axis_fails(cert, tmp_path, key):
    """A moving point's count or degree stored as (pieces, 1): verify took each row of shape (1,)
    as its number (numpy's deprecated conversion, a DeprecationWarning) and passed the file."""
    file, X, y = cert
    forged = tamper(file, tmp_path / "axis.npz", lambda a, m: a.__setitem__(key, a[key][:, None]), True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        report = approxpath.verify(forged, X, y)
    assert not report.ok and f"array {key!r} must hold one number per piece; got shape (1,)" in " ".join(
        report.failures)


def test_an_old_format_pair_missing_a_field_names_it(tmp_path):
    """kernel_ridge 0.4.1 without its ``dual_a``: a TypeError from the dual's constructor before."""
    forged = tamper(DATA / "kernel_ridge_bandwidth_0_4_1.npz", tmp_path / "lacks.npz", lambda a, m: a.pop("dual_a"), True)
    report = approxpath.verify(forged)
    assert not report.ok and "certificate lacks array 'dual_a'" in " ".join(report.failures)


def test_a_fixed_point_of_infinite_span_and_a_distances_hash_that_is_none_fail(sinc_csv, tmp_path):
    """The format page's domains: a span of finite width, a sha256 in hex (both passed before)."""
    X, y = load_data(sinc_csv, "csv")
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1, dual_restoration="scaling")
    file = approxpath.approximate_path(problem, eps=0.2, interval=(1.0, 4.0)).save(tmp_path / "c.npz", embed_data=False)
    assert approxpath.verify(file, X, y).ok
    fixed = np.flatnonzero(read_certificate(file)[0]["primal_count"] == 1)
    assert fixed.size  # with the scaling restoration klasso's primal is fixed on its pieces

    def widen(a, m):
        a["primal_span"][fixed[0]] = [-1e308, 1e308]

    report = approxpath.verify(tamper(file, tmp_path / "span.npz", widen, True), X, y)
    assert not report.ok and "is not of finite width" in " ".join(report.failures)
    hashed = tamper(file, tmp_path / "sha.npz", lambda a, m: m.__setitem__("distances_sha256", 5), True)
    report = approxpath.verify(hashed, X, y)
    assert not report.ok and "meta 'distances_sha256' must be a sha256 in hex" in report.failures[0]


def test_carried_data_that_do_not_match_fail_the_file(tmp_path, capsys):
    """Before: an InputError in Python and exit status 2 (a usage error) for a file whose own data
    do not match its hash."""
    X, y = make_classification(n=20, d=2, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.5, interval=(0.5, 2.0))
    file = path.save(tmp_path / "c.npz")
    assert approxpath.verify(file).ok

    def other_labels(a, m):
        a["data_y"] = -a["data_y"]

    forged = tamper(file, tmp_path / "y.npz", other_labels, True)
    report = approxpath.verify(forged)
    assert not report.ok and report.failures == ("the data the certificate carries do not match its data_sha256",)
    assert report.claim["data"] == "carried in the certificate"
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 1
    assert capsys.readouterr().out.startswith("FAILED")
    flat = tamper(file, tmp_path / "flat.npz", lambda a, m: a.__setitem__("data_y", a["data_y"][:, None]), True)
    report = approxpath.verify(flat)
    assert not report.ok and report.failures[0].startswith("the data the certificate carries")
    half = tamper(file, tmp_path / "half.npz", lambda a, m: a.pop("data_y"), True)
    assert main(["verify", str(half)]) == 1
    assert "needs both data_X and data_y" in capsys.readouterr().out


def test_require_certified_says_why_it_fails(cert, tmp_path, sinc_csv, capsys):
    """Before: "OK: ..." (``"ok": true``) printed, and exit status 1 without a word."""
    file, X, y = cert

    def sampled(a, m):
        a["kind"][0] = "sampled"
        m["piece_kinds"][0] = "sampled"

    weaker = tamper(file, tmp_path / "sampled.npz", sampled, True)
    data = ["--data", str(sinc_csv), "--format", "csv"]
    capsys.readouterr()
    assert main(["verify", str(weaker), *data]) == 0  # a true, weaker claim
    capsys.readouterr()
    assert main(["verify", str(weaker), *data, "--require-certified"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED") and "--require-certified: 1 sampled and 0 uncovered pieces" in out
    assert main(["verify", str(weaker), *data, "--require-certified", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_a_certificate_without_a_data_hash_and_requirements_of_no_hash(cert, tmp_path, sinc_csv, capsys):
    file, X, y = cert
    bare = tamper(file, tmp_path / "bare.npz", lambda a, m: m.pop("data_sha256"), True)
    capsys.readouterr()
    assert main(["verify", str(bare), "--data", str(sinc_csv), "--format", "csv"]) == 1
    assert "records no 'data_sha256'" in capsys.readouterr().out
    for bad in ("", "abc", "g" * 64):
        with pytest.raises(InputError, match="64 hex digits"):
            approxpath.verify(file, X, y, data_sha256=bad)
    assert approxpath.verify(file, X, y, data_sha256=read_certificate(file)[1]["data_sha256"].upper()).ok


def test_other_data_are_named_as_such(cert, tmp_path):
    """The size check blamed the file ("is not a certificate") for data of another size."""
    file, X, y = cert
    report = approxpath.verify(file, X[:20], y[:20])
    assert not report.ok and "not a certificate" not in report.failures[0]
    assert "the certificate is for data with n = 30, but the data given have n = 20" in report.failures[0]


def test_a_surface_whose_carried_data_are_not_its_own_fails_and_says_what_it_claimed(tmp_path):
    X, y = make_classification(n=12, d=2, seed=1)
    surface = approxpath.approximate_surface(approxpath.get_problem("kernel_svm")(X, y, c=1.0), 1.0, (0.5, 2.0),
                                             (0.5, 2.0))
    file = surface.save(tmp_path / "s.npz")
    assert approxpath.verify(file).ok
    forged = tamper(file, tmp_path / "y.npz", lambda a, m: a.__setitem__("data_y", -a["data_y"]), True)
    report = approxpath.verify(forged)
    assert not report.ok and report.claim["box"] == [[0.5, 2.0], [0.5, 2.0]]
    assert "t in [0.5, 2] x c in [0.5, 2]" in str(report)  # (the path's claim format failed on it)


def test_the_verdict_does_not_give_the_certificates_hash_to_other_data(tmp_path, capsys):
    """``verify cert --data one_class.csv`` printed ``data: sha256 <the certificate's> (...; from
    one_class.csv ...)``, as if the file given had that hash (the data failed before their hash
    was compared)."""
    X, y = make_classification(n=30, seed=0)
    data, other = tmp_path / "two.csv", tmp_path / "one_class.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    np.savetxt(other, np.column_stack([X, np.ones_like(y)]), delimiter=",")
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(*load_data(data, "csv"), c=0.1), eps=0.5,
                                       interval=(1.0, 4.0), meta={"data_file": str(data), "format": "csv"})
    file = path.save(tmp_path / "c.npz")
    assert main(["verify", str(file), "--data", str(other), "--format", "csv", "--no-progress"]) == 1
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("data:"))
    recorded = json.loads(str(np.load(file)["meta"]))["data_sha256"]
    assert f"sha256 {recorded} recorded" in line and f"checked against the data from {other}" in line


def test_a_verdict_lists_the_first_failures_and_counts_the_rest(tmp_path):
    """A forged surface printed every one of its 1,150 - 1,930 failing cells; the text now lists
    20 and counts the rest, the JSON all of them."""
    X, y = make_sinc(n=30, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=0.01,
                                       interval=(0.25, 16.0))
    file = path.save(tmp_path / "c.npz", embed_data=False)
    forged = tamper(file, tmp_path / "forged.npz", lambda a, m: a.update(gap_bound=a["gap_bound"] * 0.5), True)
    report = approxpath.verify(forged, X, y)
    assert len(report.failures) > 20 and len(report.to_json()["failures"]) == len(report.failures)
    listed = [ln for ln in str(report).splitlines() if ln.startswith("  - ")]
    assert len(listed) == 21 and listed[:20] == [f"  - {f}" for f in report.failures[:20]]
    assert listed[-1] == (f"  - ... and {len(report.failures) - 20} more failures (--json, or the report's failures, "
                          "lists them all)")
