"""Kernel ridge over λ: pairs that move linearly in λ -- their gap bound and dual floor against
extended-precision references at every sampled λ, their held-out predictions' enclosures against
dense solves -- and the certificate of a choice of λ by a validation loss, re-proven by ``verify``
and its claim checked against the exact k-fold loss of numpy's dense solves."""

from __future__ import annotations

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.moving import Moving
from approxpath.problems.kernel_ridge.bound import RidgeDual, RidgePrimal

from selection_helpers import command_line_choice, forged, kernel, ridge_cv_loss

pytestmark = pytest.mark.usefixtures("one_blas_thread")

_LAMS = (1e-3, 1.0)
_BW = 1.0


def _data(n=60):
    X, y = make_sinc(n=n, seed=0)
    order = np.random.default_rng(0).permutation(n)  # (make_sinc sorts by x: folds spread over it)
    return X[order], y[order]


def _folds(n, k=3):
    return [(np.flatnonzero(np.arange(n) % k != j), np.flatnonzero(np.arange(n) % k == j)) for j in range(k)]


def _lam_problem(X, y):
    return approxpath.get_problem("kernel_ridge")(X, y, bandwidth=_BW, lam=0.1, parameter="lam")


def _exact(X, y, lam):
    return np.linalg.solve(kernel(X, X, _BW) + lam * np.eye(len(y)), y)


# ------------------------------------------------------------------------------ the bounds
def _long_kernel(X):
    Xl = X.astype(np.longdouble)
    return np.exp(-_BW * ((Xl[:, None, :] - Xl[None, :, :]) ** 2).sum(-1))


def _at(points, W, span, lam):
    """A moving point's field at ``lam`` in long double (its weights linear on ``span``)."""
    s = (np.longdouble(lam) - span[0]) / (np.longdouble(span[1]) - span[0])
    w = W[:, 0].astype(np.longdouble) * (1 - s) + W[:, 1].astype(np.longdouble) * s
    return sum(wk * p.astype(np.longdouble) for wk, p in zip(w, points))


def _pairs(X, y):
    """(label, primal, dual, c(lam), a(lam), piece): the λ path's pair of two exact solves, pairs of
    random points and weights, and one side fixed."""
    rng = np.random.default_rng(5)
    n, (l0, l1) = len(y), (0.01, 0.05)
    c0, c1 = _exact(X, y, l0), _exact(X, y, l1)
    line = np.array([[1.0, 0.0], [0.0, 1.0]])
    out = [("the path's", (c0, c1), (l0 * c0, l1 * c1), line, (l0, l1), (l0, l1))]
    for k in range(3):
        cs, as_ = tuple(rng.normal(size=(2, n)) * 0.3), tuple(rng.normal(size=(2, n)) * 0.05)
        out.append((f"random {k}", cs, as_, rng.uniform(-0.5, 1.5, size=(2, 2)), (l0, l1), (0.015, 0.04)))
    out.append(("fixed dual", (c0, c1), (l0 * c0,), line, (l0, l1), (0.02, 0.03)))
    for label, cs, as_, W, span, piece in out:
        primal = Moving(tuple(RidgePrimal(c=c) for c in cs), W, span)
        dual = Moving(tuple(RidgeDual(a=a) for a in as_), W, span) if len(as_) == 2 else RidgeDual(a=as_[0])
        c_at = lambda lam, cs=cs, W=W, span=span: _at(cs, W, span, lam)
        a_at = (lambda lam, as_=as_, W=W, span=span: _at(as_, W, span, lam)) if len(as_) == 2 else \
            (lambda lam, a=as_[0]: a.astype(np.longdouble))
        yield label, primal, dual, c_at, a_at, piece


def test_pairs_moving_in_lam_are_bounded_at_every_lam():
    """The gap bound over a piece is above the gap at 41 λ of it, computed in long double from the
    objectives (no completed squares), and the dual floor below the dual objective there; on the
    λ path's own pair (two exact solves, weights linear in λ; λ from 0.01 to 0.05) the bound is within
    1.5x of the largest sampled gap."""
    X, y = _data(40)
    bound = _lam_problem(X, y).bound
    K, yl = _long_kernel(X), y.astype(np.longdouble)
    for label, primal, dual, c_at, a_at, (lo, hi) in _pairs(X, y):
        g, floor = bound.gap(primal, dual, lo, hi), bound.dual_floor(dual, lo, hi)
        gaps = []
        for lam in np.linspace(lo, hi, 41):
            c, a, lam_l = c_at(lam), a_at(lam), np.longdouble(lam)
            r = K @ c - yl
            primal_value = lam_l * (c @ K @ c) + r @ r
            dual_value = 2 * (a @ yl) - a @ a - (a @ K @ a) / lam_l
            gaps.append(float(primal_value - dual_value))
            assert floor <= float(dual_value), (label, lam)
        assert max(gaps) <= g, (label, max(gaps), g)
        if label == "the path's":
            assert g <= 1.5 * max(gaps), (g, max(gaps))


def test_a_reversed_piece_is_refused_and_a_narrow_one_has_ordered_parts():
    """A piece [hi, lo] is no piece (the bounds read λ's smallest value at lo): refused; a piece a
    few floats wide gets parts in order inside it (geomspace's rounding is not)."""
    X, y = _data(20)
    problem = _lam_problem(X, y)
    pair = (RidgePrimal(c=np.ones(20)), RidgeDual(a=np.zeros(20)))
    moving = tuple(Moving((p, p), np.eye(2), (0.1, 0.2)) for p in pair)
    for call in (lambda: problem.bound.gap(*moving, 0.2, 0.1), lambda: problem.bound.dual_floor(moving[1], 0.2, 0.1)):
        with pytest.raises(ValueError, match="lo <= hi"):
            call()
    lo = 1.36e-7
    hi = np.nextafter(np.nextafter(np.nextafter(lo, 1), 1), 1)
    narrow = tuple(Moving((p, p), np.eye(2), (lo, hi)) for p in pair)
    gap = problem.bound.gap(*narrow, lo, hi)
    edges, low, up = problem.bound.prediction_enclosure(*narrow, gap, lo, hi, X[:3])
    assert edges[0] == lo and edges[-1] == hi and np.all(np.diff(edges) >= 0) and np.all(low <= up)


def test_a_lam_piece_encloses_the_optimum_s_held_out_predictions():
    """On every piece of a λ path (moving pairs), the held-out predictions of the exact optimum at 5
    random λ of each piece lie in the enclosure of the part holding λ."""
    X, y = _data(60)
    train, held = np.arange(45), np.arange(45, 60)
    problem = _lam_problem(X[train], y[train])
    path = approxpath.approximate_path(problem, eps=1e-3, interval=(0.01, 1.0))
    assert any(isinstance(p.primal, Moving) for p in path.pieces)
    rng = np.random.default_rng(2)
    for p in path.pieces:
        edges, low, up = problem.bound.prediction_enclosure(p.primal, p.dual, p.gap_bound, p.lo, p.hi, X[held])
        assert edges[0] == p.lo and edges[-1] == p.hi and low.shape == (held.size, edges.size - 1)
        for lam in np.exp(rng.uniform(np.log(p.lo), np.log(p.hi), 5)):
            f = kernel(X[held], X[train], _BW) @ _exact(X[train], y[train], lam)
            j = min(int(np.searchsorted(edges, lam, side="right")) - 1, edges.size - 2)
            assert np.all(low[:, j] - 1e-9 <= f) and np.all(f <= up[:, j] + 1e-9), (p.lo, p.hi, lam)


# ------------------------------------------------------------------------------ the choice's file
@pytest.fixture(scope="module")
def lam_file(tmp_path_factory):
    X, y = _data()
    s = approxpath.select(_lam_problem(X, y), "mse", cv=_folds(60), interval=_LAMS, tol=0.002)
    file = tmp_path_factory.mktemp("lam_choice") / "lam.npz"
    return X, y, s, file, s.save(file)


def test_the_file_verifies_and_its_claim_holds_against_dense_solves(lam_file):
    """Each fold's cells are written as a λ path of pairs moving between the exact optima at their ends
    (the choice one of them: its value as tight as the search's); ``verify`` re-proves the claim, which
    proves the search's δ, and the exact 3-fold MSE lies in the value at the choice and is not below it
    by more than δ at 12 random λ."""
    X, y, s, file, claim = lam_file
    assert s.paths == () and claim["t"] == s.t and claim["delta"] <= s.delta
    assert claim["value"][1] - claim["value"][0] <= 1e-6
    report = approxpath.verify(file)
    assert report.ok and not report.failures and report.claim["folds"] == 3, report.failures
    assert "3-fold mse of the exact optima: at lam =" in str(report)
    chosen = ridge_cv_loss(X, y, _folds(60), _BW, s.t)
    assert claim["value"][0] - 1e-9 <= chosen <= claim["value"][1] + 1e-9
    for lam in np.exp(np.random.default_rng(3).uniform(*np.log(_LAMS), 12)):
        assert ridge_cv_loss(X, y, _folds(60), _BW, float(lam)) >= claim["value"][0] - claim["delta"] - 1e-9, lam


def test_a_kept_choice_holds_no_cells():
    """A finished search drops its cells' spectra and edges: the file needs the folds' problems alone."""
    X, y = _data()
    s = approxpath.select(_lam_problem(X, y), "mse", cv=3, interval=_LAMS, tol=0.01)
    assert s.proof.nodes._nodes is None
    assert all(fold.bound.__dict__.get("_kernels") is None for fold in s.proof.problems)


@pytest.mark.parametrize("edit, says", [
    (lambda a, m: a.update({"fold1.gap_bound": a["fold1.gap_bound"] / 2}), "exceeds the stored"),
    (lambda a, m: a["fold0.primal_c"].__setitem__((0, 0), a["fold0.primal_c"][0, 0] + 1.0),
     "fold 1: piece 0 [0.001, "),
    (lambda a, m: m.update(delta=m["delta"] / 2), "prove only"),
    (lambda a, m: m.update(t=0.5), "does not contain the recomputed"),
])
def test_forged_files_are_refused(lam_file, tmp_path, edit, says):
    *_, file, _ = lam_file
    report = approxpath.verify(forged(file, tmp_path / "forged.npz", edit))
    assert not report.ok and any(says in f for f in report.failures), report.failures


def test_a_holdout_choice_by_the_mae_verifies_and_holds(tmp_path):
    X, y = _data()
    s = approxpath.select(_lam_problem(X[:40], y[:40]), "mae", X_val=X[40:], y_val=y[40:], interval=_LAMS,
                          tol=0.002)
    claim = s.save(tmp_path / "holdout.npz")
    report = approxpath.verify(tmp_path / "holdout.npz")
    assert report.ok and report.claim["folds"] == 1, report.failures
    mae = ridge_cv_loss(X, y, [(np.arange(40), np.arange(40, 60))], _BW, s.t, "mae") * 60 / 20  # (per held-out)
    assert claim["value"][0] - 1e-9 <= mae <= claim["value"][1] + 1e-9


def test_the_command_line_writes_and_verifies_it(tmp_path):
    command_line_choice(tmp_path, *_data(), ["kernel_ridge", "--parameter", "lam", "--bandwidth", "1", "--criterion",
                                             "mse", "--cv", "3", "--shuffle", "0", "--range", "1e-3", "1", "--tol",
                                             "0.005"])
