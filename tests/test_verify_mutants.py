"""Files that each check of the verifier alone refuses: a mutation review of
:mod:`approxpath.certificate` (a comparison flipped, a domain check dropped, one at a time) left
these checks without a test that fails when they are gone.  Each case edits one field of an honest
certificate (the content hash recomputed, as a careful forger would) and names the message the
verifier gives; the edits come from the review, each checked against the mutant it kills."""

import numpy as np
import pytest

import approxpath
from approxpath.certificate import verify
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.kernel_families import DESCRIPTIONS

from certificate_helpers import tamper


@pytest.fixture(scope="module")
def svm(tmp_path_factory):
    """A 4-piece kernel SVM path over the bandwidth, with and without its data carried."""
    X, y = make_classification(n=12, d=2, seed=1)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.5,
                                       interval=(0.5, 8.0))
    folder = tmp_path_factory.mktemp("svm")
    path.save(folder / "honest.npz", embed_data=False)
    path.save(folder / "carried.npz")
    return folder, X, y


def _set(key, value):
    def edit(a, m):
        (m if key in m else a)[key] = value
    return edit


def _gap_between_pieces(a, m):
    a["lo"][1] = 0.5 * (a["lo"][1] + a["hi"][1])


def _unknown_kind(a, m):
    a["kind"][1] = "proven"
    m.pop("piece_kinds")


def _first_anchor(a, m):
    a["anchor_lo"][0] = 100.0


def _solve_point(a, m):
    m["solve_points"][0] = 0.25


def _ulp_above_eps(a, m):
    a["gap_bound"][0] = np.nextafter(0.5, 1.0)


def _sampled_below_its_points(a, m):  # piece 0's gaps at its sampled points reach 6.2e-3
    a["kind"][0] = m["piece_kinds"][0] = "sampled"
    a["gap_bound"][0] = 0.004


def _single_precision(a, m):
    a["dual_count"] = a["dual_count"].astype(np.float32)


def _other_kernel(a, m):  # the options build a gaussian
    m["kernel"] = DESCRIPTIONS["laplacian"]
    m.pop("distances_sha256")


def _upper_case_hash(a, m):
    m["data_sha256"] = m["data_sha256"].upper()


def _option(name, value):
    def edit(a, m):
        m["options"][name] = value
    return edit


@pytest.mark.parametrize("edit,said", [
    (_gap_between_pieces, "pieces 0 and 1 do not meet: hi = 0.7071067811865476, next lo = 1.35355"),
    (_unknown_kind, "piece 1: unknown kind 'proven'"),
    (_set("sample_levels", 0), "meta 'sample_levels' must be an integer in [1, 8]; got 0"),
    (_solve_point, "meta 'solve_points' has 1 point(s) outside the interval (first 0.25)"),
    (_first_anchor, "array 'anchor_lo': piece 0's exact solve 100.0 is outside the interval"),
    (_ulp_above_eps, "piece 0 [0.5, 0.707107]: stored gap bound 0.5000000000000001 exceeds eps target 0.5"),
    (_sampled_below_its_points, "exceeds the stored 0.004"),
    (_single_precision, "array 'dual_count' must be float64"),
    (_set("format_version", 4), "written by a newer approxpath (format 4)"),
    (_other_kernel, "the file's kernel \"laplacian: k_t"),
    (_upper_case_hash, "meta 'data_sha256' must be a sha256 in hex"),
    # options that are no option of the problem: "X" crashed the verifier (a keyword given twice),
    # "cache" reached the bound unchecked and the file verified
    (_option("X", 1.0), "options: 'X' is not an option of kernel_svm (its options: bandwidth, bias, c, "),
    (_option("cache", {"any": ["thing"]}), "options: 'cache' is not an option of kernel_svm"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_one_field_edited_fails_verification_saying_which(svm, edit, said, tmp_path):
    folder, X, y = svm
    assert verify(folder / "honest.npz", X, y).ok
    report = verify(tamper(folder / "honest.npz", tmp_path / "forged.npz", edit, rehash=True), X, y)
    assert not report.ok and any(said in f for f in report.failures), report.failures


def test_a_failed_verdict_gives_its_counts_and_bound_as_the_files_claim(svm, tmp_path):
    """A FAILED verdict's first line said '9 certified ...; max gap bound' of a forged file, as if proven."""
    folder, X, y = svm

    def shrink(a, m):
        a["gap_bound"] = a["gap_bound"] * 0.01

    report = verify(tamper(folder / "honest.npz", tmp_path / "forged.npz", shrink, rehash=True), X, y)
    head = str(report).splitlines()[0]
    assert not report.ok and head.startswith(f"FAILED: the file claims {report.certified} certified"), head
    assert str(verify(folder / "honest.npz", X, y)).startswith("OK: 4 certified")


def test_an_edit_without_the_hash_and_carried_data_edited_fail(svm, tmp_path):
    folder, X, y = svm
    edited = tamper(folder / "honest.npz", tmp_path / "edited.npz", _set("strategy", "edited"), rehash=False)
    assert "the file was modified after it was written (content sha256 differs)" in verify(edited, X, y).failures[0]

    def flip(a, m):
        a["data_y"][0] = -a["data_y"][0]

    carried = verify(tamper(folder / "carried.npz", tmp_path / "carried.npz", flip, rehash=True), X, y)
    assert not carried.ok and any("the data the certificate carries do not match its data_sha256" in f
                                  for f in carried.failures)


def test_a_version_of_zero_and_an_eps_of_zero_are_refused(svm, tmp_path):
    folder, X, y = svm
    with pytest.raises(InputError, match="eps must be a positive finite number"):
        verify(folder / "honest.npz", X, y, eps=0.0)
    report = verify(tamper(folder / "honest.npz", tmp_path / "v0.npz", _set("format_version", 0), rehash=True), X, y)
    assert not report.ok and "meta 'format_version' must be a positive integer; got 0" in report.failures[0]


@pytest.fixture(scope="module")
def ridge(tmp_path_factory):
    X, y = make_sinc(n=12, seed=2)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    folder = tmp_path_factory.mktemp("ridge")
    approxpath.approximate_path(problem, eps=2e-3, interval=(0.5, 4.0)).save(folder / "abs.npz", embed_data=False)
    approxpath.approximate_path(problem, eps=0.5, relative=True,
                                interval=(0.5, 4.0)).save(folder / "rel.npz", embed_data=False)
    return folder, problem


def test_a_gap_bound_that_is_nan_fails(ridge, tmp_path):
    """A finite, absurd primal whose recomputed bound is NaN (a comparison written ``r > s``
    lets NaN through)."""
    folder, problem = ridge
    report = verify(tamper(folder / "abs.npz", tmp_path / "nan.npz", _set_entry("primal_c", 1e308), rehash=True),
                    problem.X, problem.y)
    assert not report.ok and any(f.startswith("piece 0 ") and "recomputed gap bound nan" in f
                                 for f in report.failures), report.failures


def _set_entry(key, value):
    def edit(a, m):
        a[key][0] = value
    return edit


def test_a_relative_target_of_a_negative_floor_is_zero(ridge, tmp_path):
    """A relative eps above 1 on a pair whose dual floor is negative: the target is eps times the
    floor's positive part, 0 (its absolute value would make the target positive, and the file
    verify)."""
    folder, problem = ridge

    def far_off(a, m):
        a["primal_c"][0] *= 1e3
        a["dual_a"][0] *= 1e3
        fields = {k: v[0] for k, v in a.items() if k.startswith(("primal_", "dual_"))}
        p, d = problem.bound.piece_from_arrays(fields, a["lo"][0], a["hi"][0])
        gap, floor = problem.bound.gap(p, d, a["lo"][0], a["hi"][0]), problem.bound.dual_floor(d, a["lo"][0],
                                                                                                a["hi"][0])
        assert floor < 0 < gap
        m["eps"] = 2 * gap / abs(floor)
        a["gap_bound"][0] = gap * 1.001

    report = verify(tamper(folder / "rel.npz", tmp_path / "rel.npz", far_off, rehash=True), problem.X, problem.y)
    assert not report.ok and any(f.startswith("piece 0 ") and "exceeds eps target 0" in f for f in report.failures)
