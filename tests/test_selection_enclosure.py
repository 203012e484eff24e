"""Enclosures of the exact optimum's predictions and validation losses (approxpath.selection):
at 30 random parameters per problem, the optimum from an independent tight CVXPY solve of the
problem written here (not the problem's own declarations) predicts inside the enclosure of the
piece's pair, and its validation loss lies inside the loss bounds."""

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_classification, make_sinc
from approxpath.selection.losses import loss_totals
from approxpath.selection.predictions import cross_products, expansion_cover

from selection_helpers import kernel as _kernel, klasso_predict as _klasso_predict, svm_predict as _svm_predict

# Independent solves reach ~1e-9; predictions of such a solve may sit this far outside.
_SOLVE_TOL = 1e-6


pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _ridge_predict(X, y, t, lam, Xv, family="gaussian"):
    # closed form, numpy's dense solver
    c = np.linalg.solve(_kernel(X, X, t, family) + lam * np.eye(len(y)), y)
    return _kernel(Xv, X, t, family) @ c


def _svm_case():
    X, y = make_classification(n=60, d=2, seed=3)
    Xt, yt, Xv, yv = X[:40], y[:40], X[40:], y[40:]
    problem = approxpath.get_problem("kernel_svm")(Xt, yt, c=1.0)
    return problem, (0.2, 8.0), 0.02, Xv, yv, "error", lambda t: _svm_predict(Xt, yt, t, 1.0, Xv)


def _svm_c_case():
    X, y = make_classification(n=60, d=2, seed=5)
    Xt, yt, Xv, yv = X[:40], y[:40], X[40:], y[40:]
    problem = approxpath.get_problem("kernel_svm")(Xt, yt, c=1.0, bandwidth=1.0, parameter="c")
    return problem, (0.3, 3.0), 0.05, Xv, yv, "error", lambda C: _svm_predict(Xt, yt, 1.0, C, Xv)


def _svm_laplacian_case():
    X, y = make_classification(n=60, d=2, seed=7)
    Xt, yt, Xv, yv = X[:40], y[:40], X[40:], y[40:]
    problem = approxpath.get_problem("kernel_svm")(Xt, yt, c=1.0, kernel="laplacian")
    return problem, (0.2, 8.0), 0.02, Xv, yv, "error", lambda t: _svm_predict(Xt, yt, t, 1.0, Xv, family="laplacian")


def _svm_lattice_case():
    rng = np.random.default_rng(8)
    X = (rng.random((60, 6)) < 0.4).astype(float)  # binary features: distances on a lattice
    y = np.where(X[:, 0] + X[:, 1] + 0.4 * rng.normal(size=60) > 0.8, 1.0, -1.0)
    Xt, yt, Xv, yv = X[:40], y[:40], X[40:], y[40:]
    problem = approxpath.get_problem("kernel_svm")(Xt, yt, c=1.0)
    return problem, (0.05, 4.0), 0.02, Xv, yv, "error", lambda t: _svm_predict(Xt, yt, t, 1.0, Xv)


def _klasso_case():
    X, y = make_sinc(n=40, noise=0.1, seed=3)
    Xt, yt, Xv, yv = X[:28], y[:28], X[28:], y[28:]
    problem = approxpath.get_problem("klasso")(Xt, yt, lam=0.1)
    return problem, (0.3, 4.0), 1e-4, Xv, yv, "mse", lambda t: _klasso_predict(Xt, yt, t, 0.1, Xv)


def _klasso_lam_case():
    X, y = make_sinc(n=32, noise=0.1, seed=4)
    Xt, yt, Xv, yv = X[:22], y[:22], X[22:], y[22:]
    problem = approxpath.get_problem("klasso")(Xt, yt, bandwidth=1.0, parameter="lam")
    return problem, (0.1, 0.5), 1e-4, Xv, yv, "mae", lambda lam: _klasso_predict(Xt, yt, 1.0, lam, Xv)


def _ridge_case():
    X, y = make_sinc(n=50, noise=0.1, seed=5)
    Xt, yt, Xv, yv = X[:35], y[:35], X[35:], y[35:]
    problem = approxpath.get_problem("kernel_ridge")(Xt, yt, lam=0.05)
    return problem, (0.1, 10.0), 1e-3, Xv, yv, "mse", lambda t: _ridge_predict(Xt, yt, t, 0.05, Xv)


def _ridge_laplacian_case():
    X, y = make_sinc(n=50, noise=0.1, seed=7)
    Xt, yt, Xv, yv = X[:35], y[:35], X[35:], y[35:]
    problem = approxpath.get_problem("kernel_ridge")(Xt, yt, lam=0.05, kernel="laplacian")
    return problem, (0.1, 10.0), 1e-3, Xv, yv, "mse", lambda t: _ridge_predict(Xt, yt, t, 0.05, Xv, "laplacian")


def _ridge_lam_case():
    X, y = make_sinc(n=50, noise=0.1, seed=6)
    Xt, yt, Xv, yv = X[:35], y[:35], X[35:], y[35:]
    problem = approxpath.get_problem("kernel_ridge")(Xt, yt, lam=1.0, bandwidth=2.0, parameter="lam")
    return problem, (0.01, 1.0), 1e-3, Xv, yv, "mae", lambda lam: _ridge_predict(Xt, yt, 2.0, lam, Xv)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("case", [_svm_case, _svm_c_case, _svm_laplacian_case, _svm_lattice_case, _klasso_case,
                                  _klasso_lam_case, _ridge_case, _ridge_laplacian_case, _ridge_lam_case],
                         ids=lambda c: c.__name__[1:-5])
def test_exact_optimum_inside_enclosure_at_30_random_parameters(case):
    problem, interval, eps, Xv, yv, loss, exact = case()
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    assert path.certified
    rng = np.random.default_rng(0)
    widths = []
    for t in np.exp(rng.uniform(*np.log(interval), 30)):
        piece = path.piece_at(t)
        edges, low, up = problem.bound.prediction_enclosure(piece.primal, piece.dual, piece.gap_bound,
                                                            piece.lo, piece.hi, Xv)
        assert edges[0] == piece.lo and edges[-1] == piece.hi and low.shape == up.shape == (len(yv), edges.size - 1)
        assert edges.size == 3 or problem.parameter == "bandwidth" or problem.name == "kernel_ridge"  # (two halves)
        j = min(int(np.searchsorted(edges, t, side="right")) - 1, edges.size - 2)
        f = exact(t)
        scale = _SOLVE_TOL * (1.0 + np.abs(f))
        assert np.all(low[:, j] - scale <= f) and np.all(f <= up[:, j] + scale), t
        lo, hi = loss_totals(loss, yv, low[:, [j]] - scale[:, None], up[:, [j]] + scale[:, None])
        value = loss_totals(loss, yv, f[:, None], f[:, None])[0][0]
        assert lo[0] <= value <= hi[0] * (1 + 1e-12)
        widths.append(float(np.max(up[:, j] - low[:, j])))
    assert np.all(np.isfinite(widths))


def test_lattice_products_of_new_points_equal_the_exponentials():
    """Held-out points on the training distances' lattice: their products go through one
    histogram per coefficient vector, equal to the exponentials' to rounding at every x; a new
    distance off the lattice (a real-valued point) leaves the exponentials in charge."""
    from approxpath.selection.predictions import cross_products, lattice_products, new_distances, new_lattice

    problem, _, _, Xv, _, _, _ = _svm_lattice_case()
    bound, rng = problem.bound, np.random.default_rng(1)
    levels, index = new_lattice(bound, Xv)
    D = new_distances(bound, Xv)
    assert np.array_equal(levels[index], D)
    cols = np.sort(rng.choice(D.shape[1], 25, replace=False))
    for C in (rng.random(25), rng.random((25, 3))):
        got, ref = lattice_products(levels, index), cross_products(D)
        for x in (0.1, 0.7, 3.0):
            for a, b in zip(got(x, C, cols), ref(x, C, cols)):
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    off = Xv + 0.3 * rng.random(Xv.shape)
    assert new_lattice(bound, off) is None


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_svm_every_optimal_bias():
    """``midpoint_bias=False`` encloses every optimal bias: CVXPY's own (an interior point of
    the optimal set when it is not unique) is inside."""
    problem, interval, eps, Xv, _, _, _ = _svm_case()
    Xt, yt = problem.X, problem.y
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    from approxpath.problems.kernel_svm.enclosure import prediction_enclosure

    for t in (0.3, 1.0, 5.0):
        piece = path.piece_at(t)
        edges, low, up = prediction_enclosure(problem.bound, piece.primal, piece.gap_bound, t, t, Xv,
                                              midpoint_bias=False)
        f = _svm_predict(Xt, yt, t, 1.0, Xv, midpoint=False)
        assert np.all(low[:, 0] - 1e-6 <= f) and np.all(f <= up[:, 0] + 1e-6)


def test_enclosure_narrows_with_the_gap():
    """The radius comes from the gap: a path at a smaller eps gives narrower enclosures (ridge:
    the RKHS radius sqrt(g / (2 lam)) dominates)."""
    problem, interval, _, Xv, _, _, _ = _ridge_case()
    width = {}
    for eps in (1e-2, 1e-4):
        path = approxpath.approximate_path(problem, eps=eps, interval=interval)
        piece = path.piece_at(1.0)
        _, low, up = problem.bound.prediction_enclosure(piece.primal, piece.dual, piece.gap_bound, 1.0, 1.0, Xv)
        width[eps] = float(np.max(up - low))
    assert width[1e-4] < 0.2 * width[1e-2]


def test_expansion_cover_encloses_dense_values():
    """The Hermite cover of a signed kernel expansion holds at 2000 points of the piece (dense
    numpy values), and at a point it is the value up to rounding."""
    rng = np.random.default_rng(1)
    X, Xn, c = rng.normal(size=(30, 3)), rng.normal(size=(7, 3)), rng.normal(size=30)
    Dc = ((Xn[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    edges, low, up = expansion_cover(cross_products(Dc), c, 0.4, 0.9, 3, 30)
    for t in np.linspace(0.4, 0.9, 2000):
        j = min(int(np.searchsorted(edges, t, side="right")) - 1, edges.size - 2)
        f = np.exp(-t * Dc) @ c
        assert np.all(low[:, j] <= f) and np.all(f <= up[:, j])
    edges, low, up = expansion_cover(cross_products(Dc), c, 0.5, 0.5, 3, 30)
    assert np.allclose(low[:, 0], np.exp(-0.5 * Dc) @ c, atol=1e-12) and np.all(up[:, 0] - low[:, 0] < 1e-12)
    # q intervals at once (two expansions): each holds the dense values and is the single cover
    C = np.stack([c, rng.normal(size=30)], axis=1)
    lo, hi = np.array([0.2, 0.4, 0.9]), np.array([0.4, 0.9, 3.0])
    edges, low, up = expansion_cover(cross_products(Dc), C, lo, hi, 3, 30)
    assert edges.shape == (3, 19) and low.shape == up.shape == (7, 2, 3, 18)
    for i in range(3):
        one = expansion_cover(cross_products(Dc), C, lo[i], hi[i], 3, 30)
        assert np.array_equal(edges[i], one[0])
        assert np.allclose(low[:, :, i], one[1], rtol=1e-14, atol=1e-14)
        assert np.allclose(up[:, :, i], one[2], rtol=1e-14, atol=1e-14)
        for t in np.linspace(lo[i], hi[i], 500):
            j = min(int(np.searchsorted(edges[i], t, side="right")) - 1, 17)
            f = np.exp(-t * Dc) @ C
            assert np.all(low[:, :, i, j] <= f) and np.all(f <= up[:, :, i, j])


def test_loss_totals_bounds():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    low = np.array([[0.5], [-2.0], [-0.1], [0.2]])
    up = np.array([[1.0], [-1.0], [0.3], [0.4]])
    lo, hi = loss_totals("error", y, low, up)
    assert (lo[0], hi[0]) == (1.0, 2.0)  # point 4 surely wrong, point 3 undecided
    lo, hi = loss_totals("mae", np.array([0.0, 1.0]), np.array([[-1.0], [2.0]]), np.array([[1.0], [3.0]]))
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(3.0)
    lo, hi = loss_totals("mse", np.array([0.0]), np.array([[1.0]]), np.array([[2.0]]))
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(4.0)


@pytest.mark.parametrize("R", [0.0, 0.01, 0.1, 1.0, 10.0])
def test_svm_bias_order_statistics_over_a_band_against_all_training_points(R):
    """The band of training points gives the order statistics of all of them (sorted here in
    full: the mean of the P-th and (P+1)-th smallest, and each alone with midpoint_bias=False),
    and signs=True is wider only where no sign is decided: the same signs are decided."""
    from approxpath.problems.kernel_svm.enclosure import optimal_decisions

    rng = np.random.default_rng(int(R * 100))
    n, m, J, t = 70, 30, 5, 0.7
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    Dc = rng.uniform(0.0, 3.0, (m, n))
    m_mid, f_mid = rng.normal(0.0, 0.5, (n, J)), rng.normal(0.0, 0.5, (m, J))
    m_low, m_up = m_mid - rng.uniform(0, 0.05, (n, J)), m_mid + rng.uniform(0, 0.05, (n, J))
    f_low, f_up = f_mid - rng.uniform(0, 0.05, (m, J)), f_mid + rng.uniform(0, 0.05, (m, J))
    rho = R * np.sqrt(2.0 - 2.0 * np.exp(-t * Dc))[:, :, None]
    g_low = np.sort(y[None, :, None] + f_low[:, None, :] - m_up[None] - rho, axis=1)
    g_up = np.sort(y[None, :, None] + f_up[:, None, :] - m_low[None] + rho, axis=1)
    p = int(np.sum(y > 0))
    for midpoint in (True, False):
        ref_low = 0.5 * (g_low[:, p - 1] + g_low[:, p]) if midpoint else g_low[:, p - 1]
        ref_up = 0.5 * (g_up[:, p - 1] + g_up[:, p]) if midpoint else g_up[:, p]
        low, up = optimal_decisions(y, f_low, f_up, m_low, m_up, R, Dc, t, 2, midpoint)
        scale = 1e-12 * (1.0 + np.abs(ref_low) + np.abs(ref_up))
        assert np.all(low <= ref_low) and np.all(ref_low - low <= scale)  # outward, by rounding's allowance
        assert np.all(up >= ref_up) and np.all(up - ref_up <= scale)
        s_low, s_up = optimal_decisions(y, f_low, f_up, m_low, m_up, R, Dc, t, 2, midpoint, signs=True)
        assert np.all(s_low <= low) and np.all(s_up >= up)
        assert np.array_equal(s_low > 0, low > 0) and np.array_equal(s_up <= 0, up <= 0)


@pytest.mark.parametrize("midpoint", [True, False])
def test_svm_sign_deciding_counts_against_a_full_sort(midpoint):
    """With only signs wanted, counts against the mark replace the selection: the same signs are
    decided as by the sorted values (marks on the values themselves, between two of them, and
    with columns outside the band at -inf / +inf), and each bound returned lies between the mark
    and the value it bounds."""
    from approxpath.problems.kernel_svm.enclosure import _deciding

    rng = np.random.default_rng(5)
    J, r, c = 6, 40, 25
    g = np.round(rng.normal(0.0, 1.0, (J, r, c)), 1)  # (rounded: ties among the values and the marks)
    g[:, :, :3], g[:, :, -3:] = -np.inf, np.inf
    at = rng.integers(3, c - 5, J)
    srt = np.sort(g, axis=-1)
    first, second = srt[np.arange(J), :, at], srt[np.arange(J), :, at + 1]  # (J, r): the at-th, (at+1)-th
    picks = srt[np.arange(J)[:, None], np.arange(r)[None, :], rng.integers(3, c - 3, (J, r))]
    for mark in (picks, picks + 0.05, 0.5 * (first + second), first, second):
        for side in (0, 1):
            value = 0.5 * (first + second) if midpoint else (second if side else first)
            got = _deciding(g, at, mark, side, midpoint)
            decided = value > mark if side == 0 else value <= mark
            assert np.array_equal(~np.isnan(got), decided)
            if side == 0:
                assert np.all(got[decided] <= value[decided]) and np.all(got[decided] > mark[decided])
            else:
                assert np.all(got[decided] >= value[decided]) and np.all(got[decided] <= mark[decided])


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_svm_enclosures_through_the_product_cache_equal_fresh_ones():
    """A search's calls (a piece, its halves, its quarters, points; changing row subsets) through
    one ProductMemo give the enclosures of fresh calls (the new points' products of a row subset
    are a BLAS product of other shape: equal up to rounding, far inside the allowances), reuse
    the products at shared ends, and hold the exact optimum of an independent tight solve."""
    from approxpath.compute.caches import PRODUCT_BYTES, ProductMemo

    problem, interval, eps, Xv, _, _, exact = _svm_case()
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    bound, cache, rng = problem.bound, ProductMemo(max_bytes=PRODUCT_BYTES), np.random.default_rng(2)
    calls = 0
    for piece in path.pieces[::3]:
        a, b = piece.lo, piece.hi
        halves, quarters = np.linspace(a, b, 3), np.linspace(a, b, 5)  # (the middle twice, bit for bit)
        cells = [(a, b), *zip(halves[:-1], halves[1:]), *zip(quarters[:-1], quarters[1:]), (halves[1], halves[1])]
        for s, e in cells:  # (rows enough for the new points' products to be kept: more than half)
            size = int(rng.integers(len(Xv) // 2 + 1, len(Xv) + 1))
            rows = np.sort(rng.choice(len(Xv), size=size, replace=False))
            args = (piece.primal, piece.dual, piece.gap_bound, s, e, Xv)
            got = bound.prediction_enclosure(*args, rows=rows, signs=True, cache=cache)
            fresh = bound.prediction_enclosure(*args, rows=rows, signs=True)
            calls += 1
            assert np.array_equal(got[0], fresh[0])
            for g, f in zip(got[1:], fresh[1:]):
                assert g.shape == f.shape == (rows.size, got[0].size - 1)
                assert np.allclose(g, f, rtol=1e-13, atol=1e-13)
            t = float(np.exp(rng.uniform(np.log(s), np.log(e)))) if e > s else s
            j = min(int(np.searchsorted(got[0], t, side="right")) - 1, got[0].size - 2)
            f = exact(t)[rows]
            scale = _SOLVE_TOL * (1.0 + np.abs(f))
            assert np.all(got[1][:, j] - scale <= f) and np.all(f <= got[2][:, j] + scale), (s, e, t)
    # per piece and side (new, training points) the products at its 5 distinct ends and at the
    # point, once each: 12 kernel passes where 8 fresh calls make 30
    assert calls == 8 * len(path.pieces[::3]) and len(cache) == 12 * len(path.pieces[::3])
    # a few rows (here one of 20): their products are computed for them alone, not kept
    kept = len(cache)
    for piece in path.pieces[::3]:
        args = (piece.primal, piece.dual, piece.gap_bound, piece.lo, piece.hi, Xv)
        rows = np.array([len(Xv) - 1])
        got = bound.prediction_enclosure(*args, rows=rows, signs=True, cache=cache)
        fresh = bound.prediction_enclosure(*args, rows=rows, signs=True)
        assert all(np.array_equal(g, f) for g, f in zip(got, fresh))
    assert len(cache) == kept


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("case", [_svm_case, _svm_c_case], ids=["bandwidth", "c"])
def test_svm_enclosures_of_many_intervals_at_once_equal_single_ones(case):
    """``prediction_enclosures`` of q disjoint intervals of a piece (one call) gives each
    interval's cover as ``prediction_enclosure`` alone does, up to the rounding of products of
    another shape, and holds the exact optimum of an independent tight solve; so do q points;
    reversed intervals, and intervals mixed with points, are refused.  Over C, each interval's
    cover is its two halves (a selection splits a cell through them)."""
    problem, interval, eps, Xv, _, _, exact = case()
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    bound, rng = problem.bound, np.random.default_rng(5)
    rows = np.arange(0, len(Xv), 2)
    for piece in path.pieces[::2]:
        cuts = np.sort(np.exp(rng.uniform(np.log(piece.lo), np.log(piece.hi), 6)))
        lo, hi = cuts[0::2], cuts[1::2]  # three disjoint intervals, two sharing no end
        lo[1] = hi[0]  # and two sharing one
        args = (piece.primal, piece.dual, piece.gap_bound)
        edges, low, up = bound.prediction_enclosures(*args, lo, hi, Xv, rows=rows, signs=True)
        assert edges.shape[0] == 3 and low.shape == up.shape == (rows.size, 3, edges.shape[1] - 1)
        assert problem.parameter == "bandwidth" or edges.shape[1] == 3
        for i in range(3):
            one = bound.prediction_enclosure(*args, lo[i], hi[i], Xv, rows=rows, signs=True)
            assert np.array_equal(edges[i], one[0])
            assert np.allclose(low[:, i], one[1], rtol=1e-13, atol=1e-13)
            assert np.allclose(up[:, i], one[2], rtol=1e-13, atol=1e-13)
            t = float(np.exp(rng.uniform(np.log(lo[i]), np.log(hi[i]))))
            j = min(int(np.searchsorted(edges[i], t, side="right")) - 1, edges.shape[1] - 2)
            f = exact(t)[rows]
            scale = _SOLVE_TOL * (1.0 + np.abs(f))
            assert np.all(low[:, i, j] - scale <= f) and np.all(f <= up[:, i, j] + scale), (lo[i], hi[i], t)
        # q points of the piece: each point's cover as alone, holding the exact optimum
        ts = np.sort(np.exp(rng.uniform(np.log(piece.lo), np.log(piece.hi), 4)))
        edges, low, up = bound.prediction_enclosures(*args, ts, ts, Xv, rows=rows, signs=True)
        assert edges.shape == (4, 2) and low.shape == up.shape == (rows.size, 4, 1)
        for i, t in enumerate(ts):
            one = bound.prediction_enclosure(*args, t, t, Xv, rows=rows, signs=True)
            assert np.array_equal(edges[i], one[0]) and np.array_equal(one[0], [t, t])
            assert np.allclose(low[:, i], one[1], rtol=1e-13, atol=1e-13)
            assert np.allclose(up[:, i], one[2], rtol=1e-13, atol=1e-13)
            f = exact(float(t))[rows]
            scale = _SOLVE_TOL * (1.0 + np.abs(f))
            assert np.all(low[:, i, 0] - scale <= f) and np.all(f <= up[:, i, 0] + scale), t
    piece = path.pieces[0]
    args = (piece.primal, piece.dual, piece.gap_bound)
    mid = float(np.sqrt(piece.lo * piece.hi))
    for lo, hi in (([piece.hi], [piece.lo]), ([piece.lo, mid], [mid, mid])):  # reversed; an interval and a point
        with pytest.raises(approxpath.InputError, match="intervals lo < hi, or points"):
            bound.prediction_enclosures(*args, np.array(lo), np.array(hi), Xv)


def test_combination_hull_is_the_interval_products_sum():
    """Each weight's range times its term's enclosure, summed: the same numbers as the smallest
    and largest of all four corner products (weights of both signs, zero, and point intervals),
    and every combination sampled inside lies in the hull."""
    from approxpath.numerics import fp_margin
    from approxpath.selection.predictions import combination_hull

    rng = np.random.default_rng(11)
    m, K, J = 40, 3, 6
    a, b = rng.normal(0.0, 1.0, (J, K)), rng.normal(0.0, 1.0, (J, K))
    ranges = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=-1)  # (J, K, 2)
    ranges[0, 0] = 0.0
    ranges[1, 1] = (-0.5, 0.25)
    low = rng.normal(0.0, 10.0, (m, K, J))
    up = low + rng.random((m, K, J)) * (rng.random((m, K, J)) > 0.2)  # some point intervals
    got_lo, got_hi = combination_hull(ranges, low, up)
    wl, wu = ranges[..., 0].T[None], ranges[..., 1].T[None]
    corners = np.stack([wl * low, wl * up, wu * low, wu * up])
    pad = fp_margin(2 * K + 2, 1.0) * np.abs(corners).max(axis=0).sum(axis=1)
    np.testing.assert_array_equal(got_lo, corners.min(axis=0).sum(axis=1) - pad)
    np.testing.assert_array_equal(got_hi, corners.max(axis=0).sum(axis=1) + pad)
    for _ in range(200):
        w = wl + rng.random(wl.shape) * (wu - wl)
        f = low + rng.random(low.shape) * (up - low)
        value = (w * f).sum(axis=1)
        assert np.all(got_lo <= value) and np.all(value <= got_hi)


@pytest.mark.parametrize("columns", [161, 40])
def test_klasso_choice_of_a_is_the_best_ridge_solution_solved_directly(columns):
    """kLASSO's ``a`` per point, chosen in the eigenbasis of M'M, has the smallest radius among
    the 15 ridge solutions solved directly (``(M'M + mu I) z = phi``, ``a = M z``, the radius of
    that ``a`` computed from it), up to the choice's rounding; with more columns than points
    (M rank-deficient) as well."""
    from approxpath.problems.klasso.enclosure import _RIDGES, _approximations

    rng = np.random.default_rng(5)
    x, xt = np.sort(rng.uniform(-4, 4, 160)), rng.uniform(-4, 4, 40)
    xs = x[rng.choice(160, columns - 1, replace=False)]
    M = np.column_stack([np.exp(-(x[:, None] - xs[None, :]) ** 2), np.ones(160)])
    phi = np.vstack([np.exp(-(xs[:, None] - xt[None, :]) ** 2), np.ones(40)])
    R, Delta, mean = 0.35, 56.0, 0.1

    def radius(a):
        e = phi - M.T @ a
        return R * np.linalg.norm(a, axis=0) + Delta * np.abs(e[:-1]).max(axis=0) + np.abs(e[-1]) * (Delta + mean)

    G = M.T @ M
    direct = np.min([radius(M @ np.linalg.solve(G + mu * np.eye(columns), phi))
                     for mu in _RIDGES * np.linalg.eigvalsh(G).max()], axis=0)
    chosen = radius(_approximations(M, phi, R, Delta, mean))
    assert np.all(chosen <= direct * (1 + 1e-6)) and np.all(chosen >= direct * (1 - 1e-6))


def test_the_error_loss_on_real_targets_says_to_use_a_regression_loss():
    """It said "needs labels in {-1, +1}: map the classes first" for a regression's targets."""
    from approxpath.selection.losses import check_loss

    with pytest.raises(InputError, match="take more than two values; use mae or mse"):
        check_loss("error", np.linspace(-1.0, 1.0, 7))
    with pytest.raises(InputError, match="map the classes first"):
        check_loss("error", np.array([0.0, 1.0, 1.0]))
