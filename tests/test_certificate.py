"""verify() accepts what the driver writes and rejects tampering, also when the forger
recomputes the content hash (then only the mathematics can catch it)."""

import os

import numpy as np
import pytest

import approxpath
from approxpath.certificate.format import read_certificate
from certificate_helpers import tamper


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    from approxpath.data import make_classification

    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0, bias="dynamic")
    path = approxpath.approximate_path(problem, eps=0.5, interval=(2.0**-3, 2.0**4))
    file = path.save(tmp_path_factory.mktemp("cert") / "cert.npz")
    return path, file, X, y


def test_accepts_its_own_certificate(written):
    path, file, X, y = written
    report = approxpath.verify(file, X, y)
    assert report.ok and report.certified == len(path.pieces) and report.sampled == report.uncovered == 0
    assert not [f for f in os.listdir(file.parent) if f.startswith(".")]  # atomic write left no temp file


def _widen(a, m):
    k = len(a["lo"]) // 2
    new = a["lo"][k + 1] + 0.7 * (a["hi"][k + 1] - a["lo"][k + 1])
    a["hi"][k], a["lo"][k + 1] = new, new


def _change_alpha(a, m):
    k = len(a["lo"]) // 2
    a["dual_alpha"][k, 0, int(np.argmax(a["dual_alpha"][k, 0]))] *= 0.9


def _move_alpha_within_a_class(a, m):
    """Keeps y'alpha = 0, the box and w = y * alpha (the primal's first point changed alike):
    only the bound can tell."""
    k = len(a["lo"]) // 2
    alpha = a["dual_alpha"][k, 0]
    pos = np.flatnonzero(alpha > 0.2 * alpha.max())[:2]
    alpha[pos[0]] -= 0.1 * alpha[pos[0]]
    alpha[pos[1]] += 0.1 * alpha[pos[0]] / 0.9
    w = a["primal_w"][k, 0]
    a["primal_w"][k, 0] = np.where(w != 0, np.sign(w), 0.0) * alpha
    assert np.all(np.sign(w)[pos] != 0)  # (both positions are support vectors: their labels are known)


TAMPERS = {
    "alpha": _change_alpha,
    "alpha-balanced": _move_alpha_within_a_class,
    "bias": lambda a, m: a["primal_b"].__setitem__((len(a["lo"]) // 2, 0), a["primal_b"][len(a["lo"]) // 2, 0] + 1.0),
    "widened piece": _widen,
    "gap bound": lambda a, m: a["gap_bound"].__setitem__(0, a["gap_bound"][0] * 0.5),
    "eps": lambda a, m: m.__setitem__("eps", 0.25 * m["eps"]),
    "kind": lambda a, m: m.__setitem__("piece_kinds", ["sampled"] + m["piece_kinds"][1:]),
    "dropped piece": lambda a, m: [a.__setitem__(k, np.delete(v, 1, axis=0)) for k, v in list(a.items())],
}


@pytest.mark.parametrize("rehash", [False, True], ids=["plain", "forged-hash"])
@pytest.mark.parametrize("what", sorted(TAMPERS))
def test_rejects_tampering(written, tmp_path, what, rehash):
    path, file, X, y = written
    bad = tamper(file, tmp_path / "bad.npz", TAMPERS[what], rehash)
    report = approxpath.verify(bad, X, y)
    assert not report.ok, what
    if rehash:
        assert not any("content sha256" in f for f in report.failures)


def test_rejects_other_data(written):
    path, file, X, y = written
    with pytest.raises(ValueError, match="do not match"):
        approxpath.verify(file, X + 1e-9, y)


def test_x_or_y_alone_is_refused_not_ignored(written):
    """A certificate carrying its data was checked on those when only X (or only y) was given:
    the caller's other data were never compared."""
    path, file, X, y = written
    for args, missing in (((X + 1.0, None), "y"), ((None, -y), "X")):
        for load in (approxpath.verify, approxpath.load_path):
            with pytest.raises(approxpath.InputError, match=rf"^{missing} is missing: pass both X and y, or neither"):
                load(file, *args)


def test_load_path_round_trip(written, tmp_path):
    path, file, X, y = written
    loaded = approxpath.load_path(file, X, y)
    assert loaded.exact_solves == path.exact_solves and len(loaded.pieces) == len(path.pieces)
    for t in np.geomspace(2.0**-3, 2.0**4, 17):
        a, b = path.primal(t), loaded.primal(t)
        np.testing.assert_array_equal(a.w, b.w)
        assert a.b == b.b
        assert loaded.gap_bound(t) == path.gap_bound(t)
    bare = approxpath.load_path(path.save(tmp_path / "bare.npz", embed_data=False))
    assert bare.problem is None and bare.max_gap_bound == path.max_gap_bound
    assert not bare.verified and not bare.certified and "UNVERIFIED" in bare.summary()
    with pytest.raises(RuntimeError, match="without its data"):
        bare.primal(1.0)


@pytest.mark.parametrize("name", ["zzz", "dual_extra", "primal_weight"])
def test_an_array_no_check_reads_is_refused(written, tmp_path, name):
    """An array the layout does not define (one row per piece, the hash recomputed) was accepted
    without a word: content in a certificate that nothing checked."""
    path, file, X, y = written
    extra = tamper(file, tmp_path / "extra.npz", lambda a, m: a.__setitem__(name, np.ones(len(path.pieces))), True)
    report = approxpath.verify(extra, X, y)
    assert not report.ok and report.failures == (
        f"array {name!r} is no field of a kernel_svm certificate: nothing would check it",)


def test_meta_s_copy_of_the_kinds_may_be_left_out(written, tmp_path):
    """``piece_kinds`` repeats the ``kind`` array (provenance: verify needs only the claim's
    fields); a file without it was refused as if the two differed."""
    path, file, X, y = written
    report = approxpath.verify(tamper(file, tmp_path / "bare.npz", lambda a, m: m.pop("piece_kinds"), True), X, y)
    assert report.ok and report.certified == len(path.pieces)


def test_a_looser_stored_bound_is_a_true_claim(written, tmp_path):
    """A certificate written with a less tight bound (an older version of the library: stored
    bounds above ours but below eps) still proves what it claims: OK, with a note."""
    path, file, X, y = written
    eps = path.eps

    def loosen(a, m):
        a["gap_bound"][:] = np.minimum(1.5 * a["gap_bound"], eps)

    report = approxpath.verify(tamper(file, tmp_path / "loose.npz", loosen, True), X, y)
    assert report.ok and report.notes and "looser" in report.notes[0]
    assert "note:" in str(report)


def test_a_tighter_stored_bound_fails_and_says_whether_eps_holds(written, tmp_path):
    """A stored bound below what this version proves is a claim we cannot re-prove (a forgery,
    or a file written by another version's bound): it fails, and the failure says that eps
    itself is met and which version wrote the file."""
    path, file, X, y = written
    assert read_certificate(file)[1]["library_version"] == approxpath.__version__

    def tighten(a, m):
        a["gap_bound"][0] *= 0.5
        m["library_version"] = "0.0.9"

    report = approxpath.verify(tamper(file, tmp_path / "tight.npz", tighten, True), X, y)
    assert not report.ok and len(report.failures) == 1
    assert "meets the eps target" in report.failures[0] and "0.0.9" in report.failures[0]


def test_stored_bounds_survive_a_verifier_summing_in_another_order(tmp_path, monkeypatch):
    """A gap bound is a difference of sums of the optimal value's size: a bound far below them
    moves by their last bits where the verifier's BLAS sums in another order.  Stored bounds
    are padded by 1e-9 of the target (eps = 0.05: 5e-11), so a verifier whose every bound is
    2e-11 higher still re-proves them; padded by 1e-9 of the bound alone, the smallest bound
    here (0.0074: 7.4e-12) would fail."""
    from approxpath.testing import ToyBound, ToyProjection

    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((20, 1)), rng.standard_normal(20)
    path = approxpath.approximate_path(ToyProjection(X, y), eps=0.05, interval=(0.1, 10.0))
    assert min(p.gap_bound for p in path.pieces) < 0.01  # a piece whose own-scale pad is < 1e-11
    file = path.save(tmp_path / "toy.npz")
    original = ToyBound.gap
    monkeypatch.setattr(ToyBound, "gap", lambda self, *a, **k: original(self, *a, **k) + 2e-11)
    report = approxpath.verify(file, X, y)
    assert report.ok, report.failures[:1]


@pytest.mark.parametrize("field", ["primal_b", "primal_w"])
def test_a_scalar_field_stored_with_another_shape_is_refused_cleanly(written, tmp_path, field):
    """A bias stored as an array where a number belongs (a forger's, or a damaged file's) fails
    verification with a message, not an exception from inside the bound."""
    path, file, X, y = written

    def widen(a, m):
        a[field] = np.stack([a[field], a[field]], axis=-1)

    report = approxpath.verify(tamper(file, tmp_path / "wide.npz", widen, True), X, y)
    assert not report.ok and report.failures


@pytest.mark.parametrize("options,shown", [({"parameter": "lam"}, ""), ({"parameter": "lam", "c": 0.1}, " (c=0.1)")])
def test_a_claim_without_options_prints_no_empty_parentheses(options, shown):
    from approxpath.certificate.verify import describe_claim

    claim = dict(problem="lasso_plug", options=options, eps=0.01, relative=False, interval=(0.1, 10.0), parameter="lam")
    assert describe_claim(claim)[0] == f"claim: lasso_plug over lam in [0.1, 10]{shown}: gap <= eps = 0.01 (absolute)"


def test_the_file_says_which_machine_made_it(written, tmp_path):
    """meta["machine"] records this process's machine (the versions as installed, the BLAS it
    loaded), verify shows it, and a value outside its domain fails with one line."""
    from importlib import metadata

    from threadpoolctl import threadpool_info

    path, file, X, y = written
    made = read_certificate(file)[1]["machine"]
    assert f"numpy {metadata.version('numpy')}" in made["packages"] and f"scipy {metadata.version('scipy')}" in made["packages"]
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert all(f"{lib['internal_api']} {lib['version']}" in made["blas"] for lib in blas)
    assert made["blas"].split("; ") == sorted(made["blas"].split("; "))  # (not the order the imports loaded them)
    report = approxpath.verify(file, X, y)
    assert f"  made on: {made['processor']}; {made['system']}; {made['blas']}; {made['packages']}" in str(report).splitlines()
    for bad in (5, {"blas": 5}, ["openblas"]):
        forged = tamper(file, tmp_path / "machine.npz", lambda a, m, bad=bad: m.__setitem__("machine", bad), True)
        report = approxpath.verify(forged, X, y)
        assert not report.ok and f"meta 'machine' must be an object of strings; got {bad!r}" in report.failures
