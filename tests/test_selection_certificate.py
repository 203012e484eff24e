"""A selection's certificate file: written from the folds' final pieces, re-proven by ``verify``
with numpy alone, its cells checked against the exact k-fold error of tight solves, and every
forged claim refused (each forgery with its content hash recomputed, as a forger would)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

import approxpath
from approxpath.certificate.format import content_sha256, read_certificate
from approxpath.certificate.selection import selection_certificate, verify_selection
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.selection import select
from approxpath.selection.proof import claims

from selection_helpers import cells_hold_cv_error, forged


@pytest.fixture(scope="module")
def svm_file(tmp_path_factory):
    X, y = make_classification(n=45, d=2, seed=4)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    s = select(problem, cv=3, eps=0.05, interval=(0.1, 10.0), tol=0.05)
    file = tmp_path_factory.mktemp("sel") / "svm.npz"
    return X, problem.y, s, file, s.save(file)


def test_the_file_verifies_and_its_cells_hold_the_exact_cv_error(svm_file):
    """The file's claim is the search's choice (its δ from the final pieces alone); ``verify`` re-proves it;
    at the competitors' cells and on a grid the exact 3-fold error (a tight solve per fold) lies in the
    file's enclosures and is not below the chosen value by more than the file's δ."""
    from sklearn.model_selection import StratifiedKFold

    X, y, s, file, claim = svm_file
    assert claim["t"] == s.t and 0 <= claim["delta"] <= 2 * s.tol
    report = approxpath.verify(file)
    assert report.ok and report.certified > 0 and not report.failures
    assert report.claim["delta"] == claim["delta"] and report.claim["folds"] == 3
    assert "3-fold error of the exact optima" in str(report)
    arrays, meta = read_certificate(file)
    cover = SimpleNamespace(edges=arrays["edges"], lo=arrays["cell_lo"], hi=arrays["cell_hi"], t=meta["t"],
                            value=tuple(meta["value"]), delta=meta["delta"], parameter="bandwidth")
    folds = list(StratifiedKFold(3).split(X, y))
    assert [np.flatnonzero(m).tolist() for m in arrays["test"]] == [te.tolist() for _, te in folds]
    cells = np.argsort(cover.lo)[:10]
    ts = [float(np.sqrt(cover.edges[i] * cover.edges[i + 1])) for i in cells] + list(np.geomspace(0.1, 10.0, 12))
    assert cells_hold_cv_error(cover, X, y, folds, ts, 1.0) >= 12


def test_cells_where_the_last_pieces_prove_less_are_halved():
    """The search kept enclosures of earlier versions of the folds' paths: on these 80 points its δ is
    0, while the final pieces prove only 1/80 on its own cells; the file's cells, halved where they
    must be (13 more of 908), prove 0 again, and verify."""
    X, y = make_classification(n=80, d=2, seed=0)
    s = select(approxpath.get_problem("kernel_svm")(X, y, c=0.1), cv=5, interval=(2.0**-6, 2.0**8))
    proof = s.proof
    parts = ([p.bound for p in proof.problems], proof.pieces, proof.X_vals, proof.y_vals, "error")
    assert s.delta == 0 and claims(*parts, s.edges, s.t)[4] == 1 / 80
    edges, lo, hi, value, delta = claims(*parts, s.edges, s.t, s.delta)
    assert s.edges.size < edges.size < s.edges.size + 40 and delta == 0
    assert [np.array_equal(a, b) for a, b in zip(claims(*parts, edges, s.t)[1:3], (lo, hi))] == [True, True]
    arrays, meta = selection_certificate(s)
    assert meta["delta"] == 0 and verify_selection(arrays, meta, X, y).ok


@pytest.mark.parametrize("forgery, says", [
    (lambda a, m: a["cell_lo"].__setitem__(np.argmin(a["cell_lo"]), a["cell_lo"].min() + 0.1), "does not contain"),
    (lambda a, m: m.update(delta=m["delta"] / 2 if m["delta"] else -0.0), "prove only"),
    (lambda a, m: m.update(value=[m["value"][0] + 1e-6, max(m["value"][1], m["value"][0] + 1e-6)]),
     "does not contain the recomputed"),
    (lambda a, m: m.update(t=m["interval"][1] * 2), "outside the interval"),
    (lambda a, m: a["fold1.gap_bound"].__imul__(0.5), "fold 2:"),
    (lambda a, m: a["test"].__setitem__((0, np.flatnonzero(a["train"][0])[0]), True), "trains on a point"),
    (lambda a, m: a["edges"].__setitem__(1, a["edges"][2]), "edges must increase"),
    (lambda a, m: m["folds"][0]["options"].update(c=2.0), "fold 1:"),
    (lambda a, m: a["test"].__setitem__((0, np.flatnonzero(a["test"][0])[0]), False), "do not split the data"),
    (lambda a, m: m["folds"][1].update(format_version=2), "fold 2: meta 'format_version'"),
    (lambda a, m: m["folds"][0].update(data_sha256="0" * 64), "not computed on the fold's training points"),
    (lambda a, m: m.update(parameter="c"), "meta 'parameter'"),
    (lambda a, m: m.update(folds=m["folds"][:1]), "must be booleans of shape (1, n"),
    (lambda a, m: m["folds"][0].update(certificate="surface"), "fold 1: meta 'certificate' must be absent (a path)"),
    (lambda a, m: m.update(search_delta=-1.0), "meta 'search_delta' must be a finite number >= 0"),
])
def test_a_forged_claim_fails(svm_file, tmp_path, forgery, says):
    *_, file, _ = svm_file
    report = approxpath.verify(forged(file, tmp_path / "forged.npz", forgery))
    assert not report.ok and any(says in f for f in report.failures), report.failures


def test_a_delta_of_zero_where_it_is_not_proven_fails(svm_file, tmp_path):
    *_, file, claim = svm_file
    if claim["delta"] == 0:
        pytest.skip("the search proved delta = 0")  # (not with this data: delta 1/45 or more)
    report = approxpath.verify(forged(file, tmp_path / "zero.npz", lambda a, m: m.update(delta=0.0)))
    assert not report.ok and any("prove only" in f for f in report.failures)


def test_the_layout_is_checked_before_anything_is_used(svm_file, tmp_path):
    *_, file, _ = svm_file
    cases = [(lambda a, m: a.pop("cell_hi"), "lacks array 'cell_hi'"),
             (lambda a, m: a.update(train=a["train"].astype(float)), "must be booleans"),
             (lambda a, m: a.update(fold7_lo=np.zeros(1)), "unknown array"),
             (lambda a, m: m.update(criterion="loocv"), "meta 'criterion'"),
             (lambda a, m: m.update(selection_format=9), "newer approxpath"),
             (lambda a, m: m.update(n_features="x"), "meta 'n_features'"),  # (verify --data would read it)
             (lambda a, m: a["cell_lo"].__setitem__(0, np.nan), "finite")]
    for edit, says in cases:
        report = approxpath.verify(forged(file, tmp_path / "bad.npz", edit))
        assert not report.ok and any(says in f for f in report.failures), (says, report.failures)


def test_other_data_and_required_claims(svm_file):
    X, y, s, file, _ = svm_file
    with pytest.raises(InputError, match="do not match"):
        approxpath.verify(file, X[::-1], y[::-1])
    assert approxpath.verify(file, X, y).ok
    required = approxpath.verify(file, X, y, interval=(0.05, 10.0))
    assert not required.ok and "required the interval" in required.failures[0]
    assert not approxpath.verify(file, X, y, eps=0.1).ok  # (a selection claims a delta, no eps)
    with pytest.raises(InputError, match="a selection's certificate, not a path's"):
        approxpath.load_path(file)


def test_labels_0_and_1_verify_on_the_data_as_given():
    """The file's hash is of the problem's labels (±1): the verifier maps the given 0/1 as the problem does."""
    X, y = make_classification(n=30, d=2, seed=4)
    y01 = np.where(y > 0, 1.0, 0.0)
    s = select(approxpath.get_problem("kernel_svm")(X, y01, c=1.0), cv=3, eps=0.1, interval=(0.5, 4.0), tol=0.5,
               strict=False)
    arrays, meta = selection_certificate(s)
    report = verify_selection(arrays, meta, X, y01)
    assert report.ok, report.failures


def test_klasso_over_lambda_by_mae():
    X, y = make_sinc(n=45, seed=2)
    problem = approxpath.get_problem("klasso")(X, y, bandwidth=1.0, parameter="lam")
    s = select(problem, "mae", cv=3, interval=(0.05, 1.0), tol=0.02, strict=False)
    arrays, meta = selection_certificate(s)
    assert meta["criterion"] == "mae" and meta["t"] == s.t and meta["parameter"] == "lam"
    report = verify_selection(arrays, meta, problem.X, problem.y)
    assert report.ok, report.failures
    meta = dict(meta, criterion="error")  # (targets that are no labels: the 0-1 error counts no point wrong)
    meta["content_sha256"] = content_sha256(arrays, meta)
    report = verify_selection(arrays, meta, problem.X, problem.y)
    assert not report.ok and "meta 'criterion'" in report.failures[0]


def test_folds_that_do_not_split_the_data_have_no_file():
    """ShuffleSplit holds some points out twice and others never: the pooled loss is no k-fold loss."""
    from sklearn.model_selection import ShuffleSplit

    X, y = make_classification(n=40, d=2, seed=1)
    s = select(approxpath.get_problem("kernel_svm")(X, y, c=1.0), cv=ShuffleSplit(3, test_size=0.3, random_state=0),
               eps=0.05, interval=(0.1, 10.0), tol=0.1, strict=False)
    with pytest.raises(InputError, match="do not split the data"):
        selection_certificate(s)


def test_selections_without_a_file_say_why():
    X, y = make_sinc(n=40, seed=1)
    ridge = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    s = select(ridge, criterion="loocv", interval=(0.5, 4.0), tol=0.5)
    assert s.proof is None
    with pytest.raises(InputError, match="not a validation loss"):
        s.save("never.npz")
    with pytest.raises(InputError, match="it holds no proof"):
        replace(select(ridge, cv=3, interval=(0.5, 4.0), tol=0.5, shuffle=0), proof=None).save("never.npz")


def test_the_command_line_writes_and_verifies(tmp_path):
    X, y = make_classification(n=40, d=2, seed=3)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="")
    out = tmp_path / "sel.npz"
    run = [sys.executable, "-m", "approxpath.cli"]
    done = subprocess.run(run + ["select", "kernel_svm", "--data", str(data), "--format", "csv", "--c", "1",
                                 "--cv", "3", "--range", "0.1", "10", "--tol", "0.08", "--eps", "0.05", "--json",
                                 "--out", str(out)], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    said = json.loads(done.stdout)
    assert said["certificate"]["out"] == str(out) and said["certificate"]["t"] == said["t"]
    check = subprocess.run(run + ["verify", str(out), "--data", str(data), "--format", "csv"], capture_output=True,
                           text=True)
    assert check.returncode == 0 and check.stdout.startswith("OK"), check.stdout + check.stderr
    refused = subprocess.run(run + ["select", "kernel_ridge", "--data", str(data), "--format", "csv",
                                    "--out", str(tmp_path / "x.npz")], capture_output=True, text=True)
    assert refused.returncode == 2 and ("--out: a certificate file is written for a choice by a validation loss: "
                                        "pass --cv K or --val-data FILE") in refused.stderr


def test_verifying_a_selection_imports_no_search_and_no_solver(svm_file):
    *_, file, _ = svm_file
    code = (f"import sys, approxpath\nr = approxpath.verify({str(file)!r})\nassert r.ok, r.failures\n"
            "bad = [m for m in sys.modules if m.startswith(('cvxpy', 'clarabel', 'scs', 'sklearn', 'highspy', "
            "'approxpath.selection.search', 'approxpath.selection.branch', 'approxpath.driver', "
            "'approxpath.solvers'))]\nprint(bad)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_precomputed_kernel_is_checked_whole_as_the_search_checked_it():
    """D is checked whole (the search checks it so, and its folds' D are principal submatrices); with two
    folds the blocks between them are held-out rows only, which only that check covers."""
    X, y = make_classification(n=45, d=2, seed=4)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    problem = approxpath.get_problem("kernel_svm")(D, y, c=1.0, kernel="precomputed")
    s = select(problem, cv=3, eps=0.05, interval=(0.1, 10.0), tol=0.05, strict=False)
    arrays, meta = selection_certificate(s)
    assert verify_selection(arrays, meta, D, problem.y).ok
    s2 = select(problem, cv=2, eps=0.05, interval=(0.1, 10.0), tol=0.2, strict=False)
    arrays, meta = selection_certificate(s2, embed_data=True)
    forged = np.array(arrays["data_X"])
    a, b = np.flatnonzero(arrays["test"][0]), np.flatnonzero(arrays["test"][1])
    forged[np.ix_(a, b)] *= 3.0  # (no longer symmetric: no kernel's distances)
    from approxpath.data import data_sha256

    arrays = dict(arrays, data_X=forged)
    meta = dict(meta, data_sha256=data_sha256(forged, arrays["data_y"]))
    meta["content_sha256"] = content_sha256(arrays, meta)
    report = verify_selection(arrays, meta, forged, arrays["data_y"])
    assert not report.ok and "symmetric" in report.failures[0]


def test_the_data_carried_and_their_size_are_checked(svm_file, tmp_path):
    X, y, _, file, _ = svm_file
    cases = [(lambda a, m: a["data_X"].__imul__(2.0), "the data the certificate carries do not match"),
             (lambda a, m: m.update(d=99), "d = 99")]
    for edit, says in cases:
        report = approxpath.verify(forged(file, tmp_path / "bad.npz", edit), X, y)
        assert not report.ok and any(says in f for f in report.failures), report.failures


def test_halving_stops_where_the_choice_itself_keeps_delta_high(svm_file):
    """A choice whose own enclosure keeps δ above the search's: halving cells cannot help, and stops
    after a round that leaves as many cells short (it went on to ~160,000 cells)."""
    import dataclasses

    *_, s, _, _ = svm_file
    moved = dataclasses.replace(s, t=10.0)  # (an end of the interval, far from the choice)
    arrays, meta = selection_certificate(moved)
    assert arrays["edges"].size <= 2 * np.unique(s.edges).size and meta["delta"] > s.delta
    assert verify_selection(arrays, meta, s.proof.problem.X, s.proof.problem.y).ok
