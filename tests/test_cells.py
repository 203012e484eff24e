"""Cells of (bandwidth, weight) (approxpath.cells, approxpath.surface): at 30 random points of
random cells of a certified surface of every built-in problem, the surface's pair there (its
primal, and its dual scaled by w / w_lo where the dual grows with the weight) is feasible and
within the cell's gap bound of an independent optimum at that (t, w): a CVXPY problem written here,
solved by Clarabel at tight tolerances (kernel ridge: its closed form).  Objectives and
feasibility are computed here from the points' fields, not by the package."""

import numpy as np
import pytest

import approxpath
from approxpath.cells import CellBound
from approxpath.data import make_classification, make_sinc
from approxpath.moving import Moving, combine, is_moving, value_at
from reference_helpers import svm_dual_optimum, tight_solve

cp = pytest.importorskip("cvxpy")

pytestmark = pytest.mark.usefixtures("one_blas_thread")

# Tight solves reach ~1e-9 of the optimal value: a bound may be exceeded by this much.
_SOLVE_TOL = 1e-7


def _kernel(X, t):
    return np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))


def _svm(X, y, t, C, primal, dual):
    K = _kernel(X, t)
    Kw = K @ primal.w
    P = 0.5 * primal.w @ Kw + C * np.maximum(0.0, 1.0 - y * (Kw + primal.b)).sum()
    a = dual.alpha
    D = a.sum() - 0.5 * (y * a) @ K @ (y * a)
    violation = max(-a.min(), a.max() - C, abs(y @ a)) / C
    return P, D, violation, svm_dual_optimum(K, y, C)[0]


def _klasso(X, y, t, lam, primal, dual):
    K = _kernel(X, t)
    r = y - K @ primal.beta - primal.beta0
    P = 0.5 * r @ r + lam * np.abs(primal.beta).sum()
    u = dual.u
    D = y @ u - 0.5 * u @ u
    violation = max(np.abs(K @ u).max() / lam - 1.0, abs(u.sum()))
    beta, beta0 = cp.Variable(len(y)), cp.Variable()
    opt = tight_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ beta - beta0) + lam * cp.norm1(beta))))
    return P, D, violation, opt


def _robust(X, y, t, lam, primal, dual):
    K = _kernel(X, t)
    P = np.abs(y - K @ primal.beta).sum() + lam * np.abs(primal.beta).sum()
    u = dual.u
    D = y @ u
    violation = max(np.abs(u).max() - 1.0, np.abs(K @ u).max() / lam - 1.0)
    beta = cp.Variable(len(y))
    opt = tight_solve(cp.Problem(cp.Minimize(cp.norm1(y - K @ beta) + lam * cp.norm1(beta))))
    return P, D, violation, opt


def _ridge(X, y, t, lam, primal, dual):
    K = _kernel(X, t)
    Kc = K @ primal.c
    P = lam * primal.c @ Kc + (Kc - y) @ (Kc - y)
    a = dual.a
    D = 2 * a @ y - a @ a - a @ K @ a / lam
    c = np.linalg.solve(K + lam * np.eye(len(y)), y)  # the closed form
    return P, D, 0.0, lam * c @ K @ c + (K @ c - y) @ (K @ c - y)


# name -> (problem, data, options, weights, bandwidths, eps, reference)
_CASES = {
    "kernel_svm": ("kernel_svm", "classes", dict(c=1.0), (0.5, 4.0), (0.3, 3.0), 0.3, _svm),
    "klasso": ("klasso", "sinc", dict(lam=0.1), (0.05, 0.2), (0.5, 2.0), 0.02, _klasso),
    "robust_l1": ("robust_l1", "sinc", dict(lam=0.1), (0.08, 0.15), (0.5, 1.5), 0.3, _robust),
    "kernel_ridge": ("kernel_ridge", "sinc", dict(lam=0.1), (0.05, 0.3), (0.3, 3.0), 0.01, _ridge),
}


def _grown(cells, dual, t, w, w_lo):
    """The plain dual a cell starting at ``w_lo`` holds at the weight ``w`` (bandwidth ``t``)."""
    return value_at(combine([value_at(dual, t)], [[cells.dual_scale(w, w_lo)]], (t, t)), t)


def _data(kind):
    return make_classification(n=30, d=2, seed=0) if kind == "classes" else make_sinc(n=30, noise=0.1, seed=0)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("case", list(_CASES))
def test_cell_bound_holds_against_tight_optima_at_30_random_points(case):
    name, kind, options, weights, bandwidths, eps, reference = _CASES[case]
    X, y = _data(kind)
    problem = approxpath.get_problem(name)(X, y, **options)
    surface = approxpath.approximate_surface(problem, eps, weights=weights, bandwidths=bandwidths)
    assert surface.certified and surface.max_gap_bound <= eps
    assert len({(c.w_lo, c.w_hi) for c in surface.cells}) > 1  # the weight was cut: cells of several bands
    rng = np.random.default_rng(1)
    yy = problem.y
    for cell in rng.choice(np.array(surface.cells, dtype=object), 30):
        t = float(np.exp(rng.uniform(np.log(cell.t_lo), np.log(cell.t_hi))))
        w = float(np.exp(rng.uniform(np.log(cell.w_lo), np.log(cell.w_hi))))
        assert surface.cell_at(t, w).gap_bound <= eps
        P, D, violation, opt = reference(X, yy, t, w, surface.primal(t, w), surface.dual(t, w))
        slack = _SOLVE_TOL * (1.0 + abs(opt))
        assert violation <= 1e-12, (case, t, w, violation)
        assert P - opt <= cell.gap_bound + slack, (case, t, w, P - opt, cell.gap_bound)
        assert opt - D <= cell.gap_bound + slack, (case, t, w, opt - D, cell.gap_bound)


def test_a_cell_of_one_weight_is_the_bandwidth_bound():
    """On a cell of zero width in the weight the cell's bound is the bandwidth path's own."""
    X, y = _data("classes")
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    path = approxpath.approximate_path(problem, 0.3, (0.3, 3.0))
    cells = CellBound(approxpath.get_bound("kernel_svm")(X, y, **problem.options()))
    for piece in path.pieces:
        assert cells.gap(piece.primal, piece.dual, piece.lo, piece.hi, 1.0, 1.0) == \
            cells.at(1.0).gap(piece.primal, piece.dual, piece.lo, piece.hi)


def test_growing_duals_beat_duals_held_fixed():
    """A dual growing with C has a gap second order in C - C_lo at an exact solve (q/2 (s - 1)^2),
    one held fixed a first-order one ((C - C_lo) 1'xi): the scaled cell bound is the smaller."""
    X, y = _data("classes")
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    primal, dual = problem.solve(1.0)
    bound = problem.bound.with_weight(1.2)
    fixed, grown = bound.gap(primal, dual, 1.0), bound.scaled_gap(primal, dual, 1.0, 1.0, 1.0)
    q = float(primal.w @ problem.gram(1.0) @ primal.w)
    assert grown < 0.1 * fixed
    assert grown == pytest.approx(0.5 * q * 0.2**2, rel=0.05, abs=1e-6)


def test_a_problem_without_cells_is_refused():
    from approxpath import InputError
    from approxpath.testing import ToyProjection

    X, y = make_sinc(n=12, seed=2)
    with pytest.raises(InputError, match="bounds no cells"):
        CellBound(ToyProjection(X, y).bound)


def test_a_float32_point_gets_the_cell_and_the_pair_of_its_value():
    """As a path's pieces: a float32 (t, w) compared with the cells' float64 edges rounded them,
    and a point just past an edge could get the cell before it; a string or an array was a
    TypeError or numpy's "truth value is ambiguous"."""
    X, y = _data("sinc")
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    surface = approxpath.approximate_surface(problem, 0.02, weights=(0.05, 0.2), bandwidths=(0.5, 2.0))
    for c in surface.cells:
        t32 = np.nextafter(np.float32(c.t_hi), np.float32(10.0))
        w32 = np.float32(np.sqrt(c.w_lo * c.w_hi))
        t, w = float(t32), float(w32)
        if not (t <= surface.box[0][1] and surface.box[1][0] <= w <= surface.box[1][1]):
            continue
        assert surface.cell_at(t32, w32) is surface.cell_at(t, w)
        np.testing.assert_array_equal(surface.primal(t32, w32).beta, surface.primal(t, w).beta)
    for bad in ("1", np.array([1.0, 1.5])):
        with pytest.raises(approxpath.InputError, match="must be one number each"):
            surface.cell_at(bad, 0.1)
    with pytest.raises(approxpath.InputError, match="outside the surface's box"):
        surface.gap_bound(3.0, 0.1)


def test_a_surface_certificate_given_to_load_path_is_named(tmp_path):
    """load_path listed the surface's meta as a path's errors ("meta lacks 'interval'; ..."),
    while load_surface of a path's certificate already named it."""
    X, y = _data("sinc")
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    file = approxpath.approximate_surface(problem, 0.3, weights=(0.05, 0.1), bandwidths=(0.5, 1.0)).save(
        tmp_path / "s.npz")
    with pytest.raises(approxpath.InputError, match="is a surface certificate, not a path's: read it with "
                                                    "approxpath.load_surface$"):
        approxpath.load_path(file)
    assert approxpath.load_surface(file).certified


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("case", list(_CASES))
def test_a_cell_accepts_only_pairs_feasible_across_it_and_bounds_their_gap_at_both_weights(case):
    """Exact pairs of either weight end, on the cell of the two weights at one bandwidth: a pair
    the cell's check accepts is feasible at every weight of it (the dual scaled where it grows),
    its gap P - D (this file's numpy references) is below the cell's bound and its dual objective
    above the cell's floor.  A pair optimal at the upper weight has its largest gap at the lower
    one (kernel ridge: a bound read at the upper end alone misses it); the other problems' duals
    there leave the lower weight's feasible set (a check at the upper weight alone accepts them)."""
    name, kind, options, (w_lo, w_hi), _, _, reference = _CASES[case]
    X, y = _data(kind)
    problem = approxpath.get_problem(name)(X, y, **options)
    cells, t = CellBound(problem.bound), 1.0
    accepted = 0
    for w_exact in (w_lo, w_hi):
        exact = problem.with_weight(w_exact)
        primal, dual = exact.restore(*exact.solve(t), t, t)
        if cells.check(primal, dual, t, t, w_lo, w_hi):
            # (its dual's bound is the upper weight: alpha up to C, |K u| up to lambda; ridge's dual is free)
            assert w_exact == w_hi and case != "kernel_ridge"
            continue
        accepted += 1
        gap, floor = cells.gap(primal, dual, t, t, w_lo, w_hi), cells.dual_floor(dual, t, t, w_lo, w_hi)
        for w in np.geomspace(w_lo, w_hi, 5):
            at = problem.with_weight(w)
            P, D, violation = reference(X, problem.y, t, w, at.primal_at(primal, t),
                                        at.dual_at(_grown(cells, dual, t, w, w_lo), t))[:3]
            assert violation <= 1e-12 and P - D <= gap and D >= floor, (case, w_exact, w, violation, P - D, gap,
                                                                        D, floor)
    assert accepted == (2 if case == "kernel_ridge" else 1)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("case", ["klasso", "kernel_ridge"])
def test_a_growing_dual_optimal_at_the_upper_weight_is_bounded_at_the_lower_one(case):
    """The exact pair of the upper weight, its dual stored scaled by w_lo / w_hi so that the cell
    grows it back to the optimum there: the gap at the upper weight is ~0 and the largest is at
    the lower one, which the cell's bound must cover (a bound read at the upper weight alone
    misses it).  (The SVM's w is y * alpha: its primal would shrink with the dual.)"""
    name, kind, options, (w_lo, w_hi), _, _, reference = _CASES[case]
    X, y = _data(kind)
    problem = approxpath.get_problem(name)(X, y, **options)
    cells, t = CellBound(problem.bound), 1.0
    assert cells.scaled
    exact = problem.with_weight(w_hi)
    primal, dual = exact.restore(*exact.solve(t), t, t)
    r = w_lo / w_hi
    stored = Moving(dual.points, dual.weights * r, dual.span) if is_moving(dual) else combine([dual], [[r]], (t, t))
    assert cells.check(primal, stored, t, t, w_lo, w_hi) == []
    gap = cells.gap(primal, stored, t, t, w_lo, w_hi)
    ends = []
    for w in (w_lo, w_hi):
        at = problem.with_weight(w)
        P, D = reference(X, problem.y, t, w, at.primal_at(primal, t),
                         at.dual_at(_grown(cells, stored, t, w, w_lo), t))[:2]
        ends.append(P - D)
    assert ends[1] < 1e-3 * ends[0] and ends[0] <= gap, (case, ends, gap)
