"""Kernel ridge's closed-form criteria enclosed over pieces (LOOCV, GCV, log marginal
likelihood): dense independent values at 50 random parameters lie inside, and the certified
maximizer of the marginal likelihood matches a fine grid search within its delta."""

import warnings

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.moving import value_at
from approxpath.problems.kernel_ridge.facts import point_facts
from approxpath.selection import select
from approxpath.selection.nodes import NodeClosedForm

from ridge_helpers import dense_criteria, gram
from selection_helpers import ridge_cv_loss

LAM = 0.05


pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _dense_lml(X, y, t, lam):
    A = gram(X, t) + lam * np.eye(len(y))
    return -0.5 * y @ np.linalg.solve(A, y) - 0.5 * np.linalg.slogdet(A)[1] - 0.5 * len(y) * np.log(2 * np.pi)


@pytest.fixture(scope="module")
def ridge_path():
    X, y = make_sinc(n=30, noise=0.1, seed=4)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    return X, y, problem, approxpath.approximate_path(problem, eps=1e-4, interval=(0.1, 20.0))


def test_enclosures_contain_dense_values_at_50_random_bandwidths(ridge_path):
    X, y, problem, path = ridge_path
    rng = np.random.default_rng(2)
    cache = {}
    for t in np.exp(rng.uniform(np.log(0.1), np.log(20.0), 50)):
        piece = path.piece_at(t)
        ref = dense_criteria(X, y, t, LAM)
        # on a small interval around t inside the piece and at the point itself
        for lo, hi in ((max(piece.lo, t * (1 - 1e-3)), min(piece.hi, t * (1 + 1e-3))), (t, t)):
            for name, value in ref.items():
                low, high = problem.bound.criterion_enclosure(name, piece.primal, piece.dual, piece.gap_bound,
                                                              lo, hi, cache)
                assert low <= value <= high, (name, t, low, value, high)
                if lo == hi:  # informative at a point: the gap's and the linear algebra's width
                    assert high - low < 0.05 * (1 + abs(value)), (name, t)


def test_enclosures_on_the_lambda_path():
    X, y = make_sinc(n=30, noise=0.1, seed=7)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=1.0, bandwidth=1.5, parameter="lam")
    path = approxpath.approximate_path(problem, eps=1e-4, interval=(0.01, 1.0))
    rng = np.random.default_rng(3)
    for lam in np.exp(rng.uniform(np.log(0.01), np.log(1.0), 10)):
        piece = path.piece_at(lam)
        ref = dense_criteria(X, y, 1.5, lam)
        for name, value in ref.items():
            low, high = problem.bound.criterion_enclosure(name, piece.primal, piece.dual, piece.gap_bound,
                                                          piece.lo, piece.hi)
            assert low <= value <= high, (name, lam)


@pytest.mark.parametrize("over", ["lam", "bandwidth"])
def test_interval_facts_enclose_the_exact_products_of_the_end_facts(over):
    """λ d_i and λ tr over a cell: each end's enclosure times its λ, rounded outward, holds the exact
    product (fractions) of the facts at the ends; one rounding to nearest missed it in about half the entries."""
    from fractions import Fraction

    from approxpath.problems.kernel_ridge.criteria import interval_facts

    X, y = make_sinc(n=30, noise=0.1, seed=7)
    keyword = dict(lam=1.0, bandwidth=1.5, parameter="lam") if over == "lam" else dict(lam=0.37)
    bound = approxpath.get_problem("kernel_ridge")(X, y, **keyword).bound
    lo, hi = (0.013, 0.71) if over == "lam" else (0.3, 2.9)
    cache = {}
    (d_lo, d_hi), (tr_lo, tr_hi), _ = interval_facts(bound, lo, hi, cache)
    fa, fb = cache[lo][1], cache[hi][1]  # the facts it factorized at the ends
    s_lo, s_hi = (Fraction(lo), Fraction(hi)) if over == "lam" else (Fraction(0.37),) * 2
    low, high = (fb, fa) if over == "bandwidth" else (fa, fb)
    assert all(Fraction(float(v)) <= s_lo * Fraction(float(x)) for v, x in zip(d_lo, low.diag_lo))
    assert all(Fraction(float(v)) >= s_hi * Fraction(float(x)) for v, x in zip(d_hi, high.diag_hi))
    assert Fraction(float(tr_lo)) <= s_lo * Fraction(float(low.trace[0]))
    assert Fraction(float(tr_hi)) >= s_hi * Fraction(float(high.trace[1]))


def test_point_facts_against_dense_linear_algebra(ridge_path):
    X, y, problem, _ = ridge_path
    for t in (0.2, 2.0, 15.0):
        f = point_facts(problem.bound, t)
        K = gram(X, t)
        A = K + LAM * np.eye(len(y))
        inv = np.linalg.inv(A)
        # with the slope: the whole inverse and its residual; without: the triangular inverse alone
        for g in (f, point_facts(problem.bound, t, slope=False)):
            assert g.trace[0] <= np.trace(inv) <= g.trace[1]
            assert np.all(g.diag_lo <= np.diag(inv)) and np.all(np.diag(inv) <= g.diag_hi)
            assert np.all(g.diag_hi - g.diag_lo <= 1e-6 * np.diag(inv))  # and tight
            assert g.trace[1] - g.trace[0] <= 1e-6 * np.trace(inv)
        assert f.logdet[0] <= np.linalg.slogdet(A)[1] <= f.logdet[1]
        D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        slope = -np.trace(inv @ (D * K))  # d/dt log det
        assert f.slope[0] <= slope <= f.slope[1]
        h = 1e-6  # and it is the derivative: a central difference of numpy's log det
        num = (np.linalg.slogdet(np.exp(-(t + h) * D) + LAM * np.eye(len(y)))[1]
               - np.linalg.slogdet(np.exp(-(t - h) * D) + LAM * np.eye(len(y)))[1]) / (2 * h)
        assert num == pytest.approx(slope, rel=1e-4, abs=1e-6)


def test_the_diagonal_from_blocked_triangular_products(ridge_path):
    """n = 600: the triangular residual product runs by 2 x 2 blocks (two levels); the diagonal
    and the trace of the inverse still enclose numpy's, tightly."""
    X, y = make_sinc(n=600, noise=0.2, seed=2)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=LAM)
    for t in (0.3, 4.0):
        inv = np.linalg.inv(gram(X, t) + LAM * np.eye(len(y)))
        g = point_facts(problem.bound, t, slope=False)
        assert np.all(g.diag_lo <= np.diag(inv)) and np.all(np.diag(inv) <= g.diag_hi)
        assert np.all(g.diag_hi - g.diag_lo <= 1e-6 * np.diag(inv))
        assert g.trace[0] <= np.trace(inv) <= g.trace[1]


def test_certified_lml_maximizer_matches_a_fine_grid(ridge_path):
    X, y, problem, _ = ridge_path
    s = select(problem, "lml", eps=1e-4, interval=(0.1, 20.0), tol=0.02)
    assert s.kind == "certified" and s.reached and s.sense == "max"
    grid = np.geomspace(0.1, 20.0, 2000)
    values = np.array([_dense_lml(X, y, t, LAM) for t in grid])
    at = _dense_lml(X, y, s.t, LAM)
    assert s.value[0] <= at <= s.value[1]
    assert values.max() <= at + s.delta + 1e-9  # no grid point beats the choice by more than delta
    assert abs(np.log(s.t / grid[values.argmax()])) < 0.5  # and it is near the grid's maximizer


def test_closed_form_criteria_without_cv_and_errors(ridge_path):
    X, y, problem, _ = ridge_path
    s = select(problem, "gcv", eps=1e-4, interval=(0.3, 3.0), tol=0.02)
    ref = dense_criteria(X, y, s.t, LAM)["gcv"]
    assert s.value[0] <= ref <= s.value[1] and s.sense == "min"
    with pytest.raises(approxpath.InputError, match="closed-form"):
        svm = approxpath.get_problem("kernel_svm")(X, np.where(y > 0, 1.0, -1.0), c=1.0)
        select(svm, eps=0.1)
    with pytest.raises(approxpath.InputError, match="criterion"):
        select(problem, "aic", eps=1e-3)
    with pytest.raises(KeyError, match="no closed-form criterion"):
        problem.bound.criterion_enclosure("aic", None, None, 0.0, 1.0, 1.0)


def test_inverse_diagonal_trace_and_log_det_are_monotone_in_the_bandwidth():
    """The facts the cell enclosures rest on (Choi's inequality, Ando's majorization), against
    numpy's inverse and slogdet on random data in three dimensions and random bandwidth pairs."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 3))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    for _ in range(30):
        a, b = np.sort(np.exp(rng.uniform(np.log(0.01), np.log(30.0), 2)))
        lam = float(np.exp(rng.uniform(np.log(1e-3), np.log(1.0))))
        Aa, Ab = np.exp(-a * D) + lam * np.eye(40), np.exp(-b * D) + lam * np.eye(40)
        da, db = np.diag(np.linalg.inv(Aa)), np.diag(np.linalg.inv(Ab))
        assert np.all(db <= da * (1 + 1e-9)), (a, b, lam)
        assert np.linalg.slogdet(Aa)[1] <= np.linalg.slogdet(Ab)[1] + 1e-9, (a, b, lam)


@pytest.mark.parametrize("name", ["loocv", "gcv", "lml"])
def test_enclosures_contain_dense_values_inside_random_wide_cells(ridge_path, name):
    """Cells up to a whole piece wide, each checked at 12 random bandwidths inside it."""
    X, y, problem, path = ridge_path
    rng = np.random.default_rng({"loocv": 5, "gcv": 6, "lml": 7}[name])
    cache = {}
    for piece in rng.choice(path.pieces, size=8, replace=False):
        u, v = np.sort(rng.uniform(np.log(piece.lo), np.log(piece.hi), 2))
        for lo, hi in ((piece.lo, piece.hi), (float(np.exp(u)), float(np.exp(v)))):
            low, high = problem.bound.criterion_enclosure(name, piece.primal, piece.dual, piece.gap_bound, lo, hi,
                                                          cache)
            for t in np.exp(rng.uniform(np.log(lo), np.log(hi), 12)):
                value = dense_criteria(X, y, t, LAM)[name]
                assert low <= value <= high, (name, lo, hi, t, low, value, high)


@pytest.mark.parametrize("name", ["loocv", "gcv"])
def test_certified_loocv_and_gcv_choices_are_within_delta_of_a_dense_grid(ridge_path, name):
    X, y, problem, _ = ridge_path
    s = select(problem, name, eps=1e-4, interval=(0.1, 20.0), tol=0.005)
    assert s.kind == "certified" and s.reached and s.sense == "min"
    grid = np.geomspace(0.1, 20.0, 300)
    values = np.array([dense_criteria(X, y, t, LAM)[name] for t in grid])
    at = dense_criteria(X, y, s.t, LAM)[name]
    assert s.value[0] <= at <= s.value[1]
    assert at <= values.min() + s.delta + 1e-12  # no grid point beats the choice by more than delta


@pytest.mark.parametrize("name", ["loocv", "gcv", "lml"])
def test_cells_from_the_optima_at_their_ends_need_no_path(ridge_path, name):
    """The closed-form criteria enclosed on cells between exact optima, whose pair moves from the
    optimum (or the optima's cubic Hermite prediction) at the cell's left end to the one at its
    right end: the pair is numpy's optimum at every optimum and close to it at every predicted
    point; at random bandwidths inside random cells the pair's gap is below its bound (its
    primal and dual objectives there, numpy) and the dense criterion lies in the cell's
    enclosure; a selection by that criterion then computes no path."""
    X, y, problem, _ = ridge_path
    sense = "max" if name == "lml" else "min"
    crit = NodeClosedForm(problem, name, sense, between=2)  # (the marginal likelihood's default: 1)
    rng = np.random.default_rng({"loocv": 8, "gcv": 9, "lml": 10}[name])
    predicted, edges = 0, None
    for j in range(6):
        a = float(np.exp(rng.uniform(np.log(0.1), np.log(15.0))))
        b = a * float(np.exp(rng.uniform(0.02, 0.6)))
        # the first cover of a wide interval as the search makes it, then cells refined inside it
        edges, low, high, certified = crit.cover(a, b) if j % 2 == 0 else crit.cover(*edges[1:3])
        assert certified.all() and len(low) >= 2
        for i in range(len(low)):
            u, v = edges[i], edges[i + 1]
            (primal, dual), span = crit.pair(u, v)
            for x in (u, v):
                exact = np.linalg.solve(gram(X, x) + LAM * np.eye(len(y)), y)
                if x in span:
                    assert np.allclose(value_at(primal, x).c, exact, rtol=1e-8)
                else:  # a prediction (the gap bound below certifies whatever it is; a good one is tight)
                    predicted += 1
                    assert np.linalg.norm(value_at(primal, x).c - exact) <= 0.05 * np.linalg.norm(exact)
            gap = problem.bound.gap(primal, dual, u, v)
            for t in np.exp(rng.uniform(np.log(u), np.log(v), 3)):
                g = problem.primal_objective(value_at(primal, t), t) - problem.dual_objective(value_at(dual, t), t)
                assert g <= gap, (u, v, t, g, gap)
                assert low[i] <= dense_criteria(X, y, t, LAM)[name] <= high[i], (name, u, v, t)
    s = select(problem, name, interval=(0.3, 3.0), tol=0.5 if name == "lml" else 0.02)
    assert s.kind == "certified" and s.paths == () and "no path" in s.summary()
    assert s.value[0] <= dense_criteria(X, y, s.t, LAM)[name] <= s.value[1]
    assert predicted > 0
    if name == "lml":  # one cell between optima, every refinement at a new one
        assert s.exact_solves >= s.lo.size + 1
    else:  # predicted points between optima
        assert s.exact_solves < s.lo.size + 1


@pytest.mark.parametrize("name", ["loocv", "gcv"])
def test_cells_between_predicted_points_at_n_400(name):
    """sinc n = 400: the selection's cells end at predicted points as well as at exact optima
    (more cells than optima), and its choice is within delta of a 160-point grid of the criterion
    computed with numpy's inverse (at n = 30 the same formulas are checked against n refits)."""
    X, y = make_sinc(n=400, noise=0.2, seed=1)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    s = select(problem, name, interval=(2.0**-3, 2.0**5), tol=0.01)
    assert s.kind == "certified" and s.reached and s.paths == ()
    assert s.lo.size > s.exact_solves

    def exact(t):
        A_inv = np.linalg.inv(gram(X, t) + 0.1 * np.eye(len(y)))
        c = A_inv @ y
        return np.mean((c / np.diag(A_inv)) ** 2) if name == "loocv" else len(y) * np.sum(c**2) / np.trace(A_inv) ** 2

    values = np.array([exact(t) for t in np.geomspace(2.0**-3, 2.0**5, 160)])
    assert s.value[0] <= exact(s.t) <= s.value[1]
    assert values.min() >= s.value[1] - s.delta - 1e-12


def test_the_duals_cover_scaled_from_the_primals(ridge_path):
    """Where a = fl(lam c) (the optima's pairs), the marginal likelihood takes the dual's kernel
    expansions from the primal's times lam: at random bandwidths of each sub-interval, numpy's
    K_t a lies inside the scaled bounds."""
    from approxpath.moving import columns
    from approxpath.problems.kernel_ridge.criteria import _scaled_cover
    from approxpath.selection.predictions import expansion_cover

    X, y, problem, _ = ridge_path
    crit = NodeClosedForm(problem, "lml", "max", between=2)
    rng = np.random.default_rng(11)
    for a, b in ((0.2, 0.35), (1.5, 2.1), (9.0, 13.0)):
        edges, *_ = crit.cover(a, b)
        for u, v in zip(edges[:-1], edges[1:]):
            (primal, dual), _ = crit.pair(u, v)
            C, A = columns(primal, "c"), columns(dual, "a")
            assert np.array_equal(A, LAM * C)
            cover = expansion_cover(problem.bound.remembered_products(), C, u, v, problem.bound.entry_terms, len(y))
            at, low, up = _scaled_cover(cover, A, LAM)
            for t in rng.uniform(u, v, 5):
                j = min(np.searchsorted(at, t, side="right") - 1, at.size - 2)
                exact = gram(X, t) @ A
                assert np.all(low[:, :, j] <= exact) and np.all(exact <= up[:, :, j])


def test_the_optimum_moves_with_its_derivative(ridge_path):
    """The factorization's derivative of the optimum along the bandwidth, dc/dt = K~^-1 (D o K_t) c
    (what the predicted points between optima use), against central differences of numpy's
    optima."""
    X, y, problem, _ = ridge_path
    for t in (0.2, 1.3, 9.0):
        facts = point_facts(problem.bound, t, slope=False)
        h = 1e-5 * t
        diff = [np.linalg.solve(gram(X, t + s) + LAM * np.eye(len(y)), y) for s in (h, -h)]
        assert np.allclose(facts.derivative, (diff[0] - diff[1]) / (2 * h), rtol=1e-5, atol=1e-7 * np.abs(diff[0]).max())


def test_a_lambda_below_the_factorizations_rounding_is_refused_at_once():
    """lam = 1e-12 at n = 30: no Cholesky factor of K_t + lam I has a rounding certified below
    lam / 2, so nothing can be enclosed: a one-line error naming lam, not 2000 useless solves."""
    X, y = make_sinc(n=30, noise=0.1, seed=4)
    tiny = approxpath.get_problem("kernel_ridge")(X, y, lam=1e-12)
    with pytest.raises(approxpath.InputError, match="lam = 1e-12 is too small"):
        select(tiny, "loocv", interval=(0.1, 20.0))


@pytest.mark.parametrize("name, tol", [("loocv", 2e-4), ("gcv", 2e-4), ("lml", 0.05)])
def test_lambda_is_chosen_with_no_path_within_delta_of_a_dense_grid(name, tol):
    """Over lambda at a fixed bandwidth the criterion is enclosed between exact optima (one
    spectrum), with no path; the choice's exact value lies in its enclosure and no lambda of a
    dense grid beats it by more than delta."""
    X, y = make_sinc(n=30, noise=0.1, seed=4)
    over_lam = approxpath.get_problem("kernel_ridge")(X, y, bandwidth=1.0, parameter="lam")
    s = select(over_lam, name, interval=(1e-3, 1.0), tol=tol)
    assert s.kind == "certified" and s.paths == () and "no path" in s.summary() and s.exact_solves < 60
    sign = 1.0 if s.sense == "min" else -1.0
    at = dense_criteria(X, y, 1.0, s.t)[name]
    assert s.value[0] - 1e-9 * abs(at) <= at <= s.value[1] + 1e-9 * abs(at)
    grid = [sign * dense_criteria(X, y, 1.0, lam)[name] for lam in np.geomspace(1e-3, 1.0, 200)]
    assert sign * at <= min(grid) + s.delta + 1e-12 and s.delta <= tol


@pytest.mark.parametrize("criterion", ["mse", "mae"])
def test_lambda_by_kfold_with_no_path_within_delta_of_dense_folds(criterion):
    """k-fold CV over lambda at a fixed bandwidth: every fold's exact optima at the cells' ends
    from one spectrum, the held-out predictions enclosed between them; the choice's exact pooled
    loss lies in its enclosure and no lambda of a dense grid beats it by more than delta."""
    from sklearn.model_selection import KFold

    X, y = make_sinc(n=45, noise=0.2, seed=6)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    over_lam = approxpath.get_problem("kernel_ridge")(X, y, bandwidth=0.8, parameter="lam")
    s = select(over_lam, criterion, cv=folds, interval=(1e-3, 1.0), tol=2e-3)
    assert s.kind == "certified" and s.paths == () and "3 folds, no path" in s.summary() and s.folds == 3
    at = ridge_cv_loss(X, y, folds, 0.8, s.t, criterion)
    assert s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9
    grid = [ridge_cv_loss(X, y, folds, 0.8, lam, criterion) for lam in np.geomspace(1e-3, 1.0, 120)]
    assert at <= min(grid) + s.delta + 1e-12 and s.delta <= 2e-3


@pytest.mark.parametrize("criterion", ["mse", "mae"])
def test_bandwidth_by_kfold_with_no_path_within_delta_of_dense_folds(criterion):
    """k-fold CV over the bandwidth at a fixed lambda: every fold's cells between exact optima
    (pairs moving between them, their gap bounds, the held-out predictions' enclosures); the
    choice's exact pooled loss lies in its enclosure and no t of a dense grid beats it by more
    than delta."""
    from sklearn.model_selection import KFold

    X, y = make_sinc(n=45, noise=0.2, seed=7)
    folds = list(KFold(3, shuffle=True, random_state=1).split(X))
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.05)
    s = select(problem, criterion, cv=folds, interval=(0.1, 20.0), tol=2e-3)
    assert s.kind == "certified" and s.paths == () and "3 folds, no path" in s.summary() and s.folds == 3
    at = ridge_cv_loss(X, y, folds, s.t, 0.05, criterion)
    assert s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9
    grid = [ridge_cv_loss(X, y, folds, t, 0.05, criterion) for t in np.geomspace(0.1, 20.0, 120)]
    assert at <= min(grid) + s.delta + 1e-12 and s.delta <= 2e-3


@pytest.mark.parametrize("over", ["lam", "bandwidth"])
def test_a_hold_out_set_with_no_path_within_delta_of_dense_values(over):
    """X_val, y_val: one 'fold', over lambda or over the bandwidth, with no path."""
    X, y = make_sinc(n=60, noise=0.2, seed=3)
    train, test = np.arange(40), np.arange(40, 60)
    ridge = approxpath.get_problem("kernel_ridge")
    if over == "lam":
        problem, interval = ridge(X[train], y[train], bandwidth=0.8, parameter="lam"), (1e-3, 1.0)
        exact = lambda x: ridge_cv_loss(X, y, [(train, test)], 0.8, x, "mse") * 60 / 20  # noqa: E731
    else:
        problem, interval = ridge(X[train], y[train], lam=0.05), (0.1, 20.0)
        exact = lambda x: ridge_cv_loss(X, y, [(train, test)], x, 0.05, "mse") * 60 / 20  # noqa: E731
    s = select(problem, "mse", X_val=X[test], y_val=y[test], interval=interval, tol=1e-3)
    assert s.paths == () and s.value[0] - 1e-9 <= exact(s.t) <= s.value[1] + 1e-9
    assert exact(s.t) <= min(exact(x) for x in np.geomspace(*interval, 150)) + s.delta + 1e-12


def test_lambda_alone_on_a_precomputed_kernel():
    """The no-path choice over lambda rebuilds the problem over the bandwidth from its options: a
    precomputed D gives the Gaussian kernel's choice (the dense reference from X)."""
    X, y = make_sinc(n=30, noise=0.2, seed=2)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    over_lam = approxpath.get_problem("kernel_ridge")(D, y, bandwidth=0.7, parameter="lam", kernel="precomputed")
    s = select(over_lam, "gcv", interval=(1e-3, 1.0), tol=1e-3)
    at = dense_criteria(X, y, 0.7, s.t)["gcv"]
    assert s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9
    assert at <= min(dense_criteria(X, y, 0.7, lam)["gcv"] for lam in np.geomspace(1e-3, 1.0, 100)) + s.delta


def test_a_wide_end_cell_is_refined_before_the_edge_warning():
    """sinc n = 200: LOOCV is 0.050 at t = 32 against about 0.034 near t = 0.57, but the last of
    the first cells, [22.6, 32], encloses it loosely: select refines that cell before it warns,
    and says nothing about the end (it did warn before); the choice stays within delta of a
    dense grid."""
    X, y = make_sinc(n=200, noise=0.2, seed=1)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = select(problem, "loocv", interval=(2.0**-3, 2.0**5), tol=0.01)
    assert s.reached and not [w for w in caught if "end" in str(w.message)]
    end = dense_criteria(X, y, 32.0, 0.1)["loocv"]
    assert end > s.value[1] + 0.01  # the end is really worse: no warning was due
    assert s.value[0] <= dense_criteria(X, y, s.t, 0.1)["loocv"] <= s.value[1]
