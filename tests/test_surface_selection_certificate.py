"""The certificate of a choice over both parameters: written from the folds' cells, re-proven by
``verify`` with numpy alone, its claim checked against the exact k-fold error of tight solves at the
choice and at random points of the box, and every forged claim refused (each forgery with its content
hash recomputed, as a forger would)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import approxpath
from approxpath.certificate.format import read_certificate
from approxpath.certificate.surface_selection import surface_selection_certificate, verify_surface_selection
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError

from selection_helpers import forged, svm_cv_error

pytest.importorskip("sklearn")

pytestmark = pytest.mark.usefixtures("one_blas_thread")

_BOX = dict(bandwidths=(0.5, 4.0), weights=(0.5, 4.0))


def _folds(n):
    return [(np.flatnonzero(np.arange(n) % 4 // 2 != k), np.flatnonzero(np.arange(n) % 4 // 2 == k)) for k in (0, 1)]


@pytest.fixture(scope="module")
def svm_file(tmp_path_factory):
    X, y = make_classification(n=32, d=2, separation=1.5, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    s = approxpath.select_surface(problem, cv=_folds(32), eps=0.1, relative=True, tol=0.4, strict=False, **_BOX)
    file = tmp_path_factory.mktemp("surface_choice") / "svm.npz"
    return X, problem.y, s, file, s.save(file)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_the_file_verifies_and_its_claim_holds_against_the_exact_cv_error(svm_file):
    """The file's claim is the search's choice; ``verify`` re-proves it; the exact 2-fold error (a tight
    solve per fold) at the choice lies in the file's value, and at random points of the box it is not
    below the choice's by more than the file's δ."""
    X, y, s, file, claim = svm_file
    assert (claim["t"], claim["w"]) == (s.t, s.w) and claim["delta"] >= s.delta
    assert claim["value"][0] <= s.value[0] and s.value[1] <= claim["value"][1]
    assert claim["delta"] == pytest.approx(s.delta, abs=1e-9)
    report = approxpath.verify(file)
    assert report.ok and report.certified == s.cells and not report.failures, report.failures
    assert report.claim["w"] == s.w and report.claim["folds"] == 2 and report.unit == "cells of the folds' surfaces"
    assert "2-fold error of the exact optima: at t = " in str(report) and "no point in t in [0.5, 4] x c" in str(report)
    chosen, closest = svm_cv_error(X, y, _folds(32), s.t, s.w)
    assert closest > 1e-6 and claim["value"][0] <= chosen <= claim["value"][1]
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(8):
        t, w = (float(np.exp(rng.uniform(np.log(lo), np.log(hi)))) for lo, hi in _BOX.values())
        value, closest = svm_cv_error(X, y, _folds(32), t, w)
        if closest > 1e-6:
            assert chosen - value <= claim["delta"] + 1e-15, (t, w)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("edit, says", [
    (lambda a, m: m.update(value=[m["value"][0], m["value"][0]]), "does not contain the recomputed"),
    (lambda a, m: m.update(delta=m["delta"] / 2), "the folds' cells prove only"),
    (lambda a, m: m.update(t=100.0), "outside the box"),
    (lambda a, m: m.update(w=0.1), "outside the box"),
    (lambda a, m: a.update({"fold1.gap_bound": a["fold1.gap_bound"] / 2}), "exceeds the stored"),
    (lambda a, m: m["folds"][0].update(box=[[0.5, 4.0], [0.5, 3.0]]), "fold 1: its problem, options or box differ"),
    (lambda a, m: m.update(box=[[0.5, 4.0], [0.5, 8.0]]), "fold 1: its problem, options or box differ"),
    (lambda a, m: a.update(train=a["train"] | a["test"]), "trains on a point it holds out"),
    (lambda a, m: a.update(test=a["test"] & np.array([[True], [False]])), "do not split the data"),
    (lambda a, m: m["folds"][1].update(format_version=2), "fold 2: meta 'format_version'"),
    (lambda a, m: m["folds"][0].update(data_sha256="0" * 64), "fold 1: it was not computed on the fold's training"),
    (lambda a, m: m.update(criterion="mse"), "does not contain the recomputed"),
    (lambda a, m: m.update(folds=m["folds"][:1]), "must be booleans of shape (1, n"),
    (lambda a, m: m.update(selection_format=9), "newer approxpath"),
    (lambda a, m: a.update(fold9_x=np.zeros(1)), "unknown array"),
    (lambda a, m: a.update(train=a["train"].astype(float)), "must be booleans"),
    (lambda a, m: m["folds"][0].update(certificate="selection"), "fold 1: meta 'certificate' must be 'surface'"),
    (lambda a, m: m["folds"][1].pop("certificate"), "fold 2: meta 'certificate' must be 'surface'"),
    (lambda a, m: m.update(search_delta=-5.0), "meta 'search_delta' must be a finite number >= 0"),
])
def test_forged_claims_are_refused(svm_file, tmp_path, edit, says):
    X, y, _, file, _ = svm_file
    report = approxpath.verify(forged(file, tmp_path / "forged.npz", edit))
    assert not report.ok and any(says in f for f in report.failures), report.failures


def test_every_field_all_certificates_share_is_checked(svm_file):
    from approxpath.certificate.fields import PROVENANCE_FIELDS
    from approxpath.certificate.surface import surface_meta_errors
    from approxpath.certificate.surface_selection import surface_selection_meta_errors

    meta = read_certificate(svm_file[3])[1]
    fold = meta["folds"][0]  # (a fold's meta is a surface's)
    assert surface_selection_meta_errors(meta) == [] and surface_meta_errors(fold) == []
    for key in PROVENANCE_FIELDS:  # a list of a list is in no field's domain
        for check, good in ((surface_selection_meta_errors, meta), (surface_meta_errors, fold)):
            errors = check({**good, key: [[]]})
            assert any(f"'{key}'" in e for e in errors), (check.__name__, key, errors)


def test_a_fold_missing_cells_fails_its_tiling(svm_file, tmp_path):
    def drop(a, m):
        keep = np.arange(a["fold0.t_lo"].size) != 0
        for key in [k for k in a if k.startswith("fold0.")]:
            a[key] = a[key][keep]
        m["folds"][0]["cell_kinds"] = m["folds"][0]["cell_kinds"][1:]

    report = approxpath.verify(forged(svm_file[3], tmp_path / "forged.npz", drop))
    assert not report.ok and any("do not tile the bandwidths" in f for f in report.failures), report.failures


def test_other_data_and_required_claims(svm_file):
    X, y, _, file, _ = svm_file
    arrays, meta = read_certificate(file)
    with pytest.raises(InputError, match="sha256"):
        verify_surface_selection(arrays, meta, X[::-1], y[::-1])
    assert verify_surface_selection(arrays, meta, X, y, box=((0.5, 4.0), (0.5, 4.0))).ok
    wider = verify_surface_selection(arrays, meta, X, y, box=((0.5, 8.0), (0.5, 4.0)))
    assert not wider.ok and "required the box" in wider.failures[0]
    eps = verify_surface_selection(arrays, meta, X, y, eps=0.1)
    assert not eps.ok and "it claims a delta" in eps.failures[0]
    with pytest.raises(InputError, match="selection's certificate, not a path's"):
        approxpath.load_path(file)


@pytest.mark.parametrize("kind", ["labels 0 and 1", "precomputed"])
def test_the_data_as_the_user_has_them(kind):
    """Labels 0/1 (the file's hash is of the problem's ±1) and a precomputed D (checked whole with the
    box's smallest weight: the file's options have none) verify on the data given."""
    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    y01 = np.where(y > 0, 1.0, 0.0)
    data = (((X[:, None] - X[None]) ** 2).sum(-1), y) if kind == "precomputed" else (X, y01)
    options = dict(kernel="precomputed") if kind == "precomputed" else {}
    problem = approxpath.get_problem("kernel_svm")(*data, c=1.0, **options)
    s = approxpath.select_surface(problem, cv=2, shuffle=0, eps=0.2, relative=True, tol=0.5, strict=False, **_BOX)
    arrays, meta = surface_selection_certificate(s)
    report = verify_surface_selection(arrays, meta, *data)
    assert report.ok, report.failures


def test_a_grid_beyond_the_memory_is_refused(monkeypatch):
    """The grid is the product of the folds' distinct edges: 400 cells in strips each way make 200 x 200
    rectangles; the memory check refuses them with a one-line error before any is allocated."""
    from approxpath.selection.surface_proof import overlay

    cuts = np.geomspace(0.5, 4.0, 201)
    strips = [np.column_stack([cuts[:-1], cuts[1:], np.full(200, 0.5), np.full(200, 4.0)]),
              np.column_stack([np.full(200, 0.5), np.full(200, 4.0), cuts[:-1], cuts[1:]])]
    totals = [np.zeros((200, 2))] * 2
    assert overlay(strips, totals, 10.0)[2].shape == (200, 200)
    monkeypatch.setenv("APPROXPATH_MEMORY", "1e6")
    with pytest.raises(InputError, match="200 x 200 rectangles"):
        overlay(strips, totals, 10.0)


def test_a_verifier_refuses_the_grid_before_it_encloses_any_cell(svm_file, monkeypatch):
    import approxpath.selection.surface_proof as proof

    arrays, meta = read_certificate(svm_file[3])
    monkeypatch.setenv("APPROXPATH_MEMORY", "1e3")
    monkeypatch.setattr(proof, "cell_totals", lambda *a: pytest.fail("a cell was enclosed"))
    report = verify_surface_selection(arrays, meta, svm_file[0], svm_file[1])
    assert not report.ok and "rectangles" in report.failures[0] and "more memory" in report.failures[0], report.failures


def test_a_regression_loss_over_lam_and_the_bandwidth():
    """klasso's mae: the writer's enclosure is the search's, the verifier's the writer's."""
    X, y = make_sinc(n=24, seed=1)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    s = approxpath.select_surface(problem, "mae", cv=2, shuffle=0, eps=0.2, relative=True, tol=0.5, strict=False,
                                  bandwidths=(0.5, 2.0), weights=(0.1, 0.5))
    arrays, meta = surface_selection_certificate(s)
    assert meta["value"][0] <= s.value[0] and s.value[1] <= meta["value"][1] and meta["delta"] >= s.delta
    assert verify_surface_selection(arrays, meta, problem.X, problem.y).ok


def test_a_choice_without_surfaces_says_why_it_has_no_file():
    ridge = approxpath.get_problem("kernel_ridge")(*make_sinc(n=24, seed=0), lam=0.1)
    boxed = approxpath.select_surface(ridge, "mse", cv=2, shuffle=0, tol=0.5, strict=False, bandwidths=(0.5, 2.0),
                                      weights=(0.05, 0.5))
    with pytest.raises(InputError, match="no certificate file: it has no surfaces"):
        surface_selection_certificate(boxed)


def test_the_command_line_writes_and_verifies_it(tmp_path):
    X, y = make_classification(n=24, d=2, separation=1.5, seed=3)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    run = [sys.executable, "-m", "approxpath.cli"]
    out = tmp_path / "choice.npz"
    done = subprocess.run(run + ["select", "kernel_svm", "--data", str(data), "--format", "csv", "--over",
                                 "c,bandwidth", "--weights", "0.5", "4", "--range", "0.5", "4", "--cv", "2",
                                 "--shuffle", "0", "--eps", "0.2", "--relative", "--tol", "0.5", "--out", str(out),
                                 "--json"],
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    got = json.loads(done.stdout)
    assert got["certificate"]["out"] == str(out) and got["certificate"]["w"] == got["w"]
    check = subprocess.run(run + ["verify", str(out), "--data", str(data), "--format", "csv"], capture_output=True,
                           text=True)
    assert check.returncode == 0 and check.stdout.startswith("OK"), check.stdout + check.stderr
    refused = subprocess.run(run + ["select", "kernel_ridge", "--data", str(data), "--format", "csv", "--over",
                                    "lam,bandwidth", "--weights", "0.05", "0.5", "--cv", "2", "--out",
                                    str(tmp_path / "x.npz")], capture_output=True, text=True)
    assert refused.returncode == 2 and ("--out: kernel_ridge chooses both parameters on boxes between exact optima"
                                        in refused.stderr)


def test_verifying_it_imports_no_search_and_no_solver(svm_file):
    file = svm_file[3]
    code = (f"import sys, approxpath\nr = approxpath.verify({str(file)!r})\nassert r.ok, r.failures\n"
            "bad = [m for m in sys.modules if m.startswith(('cvxpy', 'clarabel', 'scs', 'sklearn', 'highspy', "
            "'approxpath.selection.search', 'approxpath.selection.branch', 'approxpath.surface', "
            "'approxpath.driver', 'approxpath.solvers'))]\nprint(bad)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
