import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_sinc
from approxpath.problems.robust_l1.bound import RobustL1Dual, RobustL1Primal
from regression_helpers import bound_slack_on_pieces, check_against_cvxpy
from reference_helpers import tight_solve

RobustL1 = approxpath.get_problem("robust_l1")


@pytest.fixture(scope="module")
def data():
    return make_sinc(n=40, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=3)


@pytest.mark.parametrize("kw,match", [
    (dict(), "lam="),
    (dict(lam=0.1, dual_restoration="clip"), "dual_restoration"),
    (dict(parameter="lam"), "bandwidth="),
    (dict(lam=0.1, bandwidth=1.0), "only for parameter='lam'"),
])
def test_bad_options(data, kw, match):
    with pytest.raises(InputError, match=match):
        RobustL1(*data, **kw)


def test_closed_form_above_lambda_max(data):
    """No y_i is 0, so beta = 0 is optimal iff lam >= ||K sign(y)||_inf (u = sign(y) is forced)."""
    p = RobustL1(*data, bandwidth=1.0, parameter="lam")
    lam_max = p.lam_max()
    assert np.all(data[1] != 0)
    primal, dual = p.solve(1.01 * lam_max)
    np.testing.assert_allclose(primal.beta, 0.0, atol=1e-8)
    np.testing.assert_allclose(dual.u, np.sign(data[1]), atol=1e-8)
    primal, _ = p.solve(0.5 * lam_max)
    assert np.abs(primal.beta).max() > 1e-3


def test_exact_pair_multiplier_signs(data):
    """u = z1 - z2 from the LP's multipliers is the dual: y'u equals the primal optimum (strong
    duality), u = sign(r) where the residual is clearly nonzero, and (K u)_j = lam sign(beta_j)
    on the support of beta."""
    p = RobustL1(*data, lam=0.1)
    t = 1.5
    primal, dual = p.solve(t)
    K = p.gram(t)
    r = data[1] - K @ primal.beta
    assert p.dual_objective(dual, t) == pytest.approx(p.primal_objective(primal, t), abs=1e-7)
    big = np.abs(r) > 1e-6
    np.testing.assert_allclose(dual.u[big], np.sign(r[big]), atol=1e-7)
    S = np.abs(primal.beta) > 1e-6
    assert S.any()
    np.testing.assert_allclose((K @ dual.u)[S], 0.1 * np.sign(primal.beta[S]), atol=1e-7)
    # the cross-check's subgradient: feasible after restoration, and not far off
    d2 = p._restore_dual(p.dual_from_primal(primal, t), t)
    assert p.dual_violation(d2, t) == 0.0
    assert p.gap(primal, d2, t) >= -1e-9


@pytest.mark.parametrize("tau", [1.02, 1.3, 3.0])
def test_projection_equals_the_cvxpy_projection(data, tau):
    """The NNLS least-distance program (with rows added on demand) is the full projection of
    the paper, also far from the anchor where rows outside the starting set become active."""
    p = RobustL1(*data, lam=0.1, dual_restoration="projection")
    _, dual = p.solve(1.0)
    v = p._project(dual.u, tau, tau)
    ref = p.cvxpy_restore_dual(dual, tau).u
    np.testing.assert_allclose(v, ref, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(0.2, 0.5), (1.0, 3.0), (3.0, 10.0)])
def test_free_projection_equals_the_cvxpy_least_distance_program(data, ta, tb):
    """The continuation's projection of the interpolated dual, moving only the coordinates free
    in either exact dual (rows added on demand, their products updated from the moved
    coordinates alone), against CVXPY's least-distance program over those coordinates with
    every row of K."""
    import cvxpy as cp

    from approxpath.problems.robust_l1.continuation import free_coordinates, free_projection

    p = RobustL1(*data, lam=0.1)
    (_, da), (_, db) = p.solve(ta), p.solve(tb)
    m = float(np.sqrt(ta * tb))
    u = 0.5 * (np.asarray(da.u) + np.asarray(db.u))
    free = free_coordinates(da, db)
    K = p.gram(m)
    assert free.any() and np.abs(K @ u).max() > 0.1  # the interpolation violates rows: work to do
    v = free_projection(p, u, free, m)
    x = cp.Variable(int(free.sum()))  # the change of the free coordinates
    moved = u + np.eye(u.size)[:, free] @ x
    tight_solve(cp.Problem(cp.Minimize(cp.sum_squares(x)), [cp.abs(moved) <= 1, cp.abs(K @ moved) <= 0.1]), 1e-10)
    ref = u + np.eye(u.size)[:, free] @ x.value
    # rows far from their bound at u (outside the program's first rows) bind at the projection
    assert np.any((np.abs(K @ u) < 0.9 * 0.1) & (np.abs(K @ ref) > 0.1 * (1 - 1e-6)))
    np.testing.assert_array_equal(v[~free], u[~free])
    np.testing.assert_allclose(v, ref, atol=1e-6)
    assert np.abs(K @ v).max() <= 0.1 * (1 + 1e-9) and np.abs(v).max() <= 1 + 1e-12


@pytest.mark.parametrize("kw,interval", [(dict(lam=0.1), (0.5, 2.0)),
                                         (dict(bandwidth=1.0, parameter="lam"), (0.01, 1.0))])
def test_zero_targets(data, kw, interval):
    """y = 0: beta = 0 is optimal (value 0) and no projection row is near active (an empty
    program, which made SciPy's nnls abort the process)."""
    X, y = data
    p = RobustL1(X, np.zeros_like(y), **kw)
    path = approxpath.approximate_path(p, eps=0.1, interval=interval)
    assert path.certified
    for piece in path.pieces:
        np.testing.assert_allclose(path.primal(piece.lo).beta, 0.0, atol=1e-8)
        np.testing.assert_allclose(path.primal(piece.hi).beta, 0.0, atol=1e-8)
    assert np.array_equal(p._project(np.zeros_like(y), 1.0, 1.5), np.zeros_like(y))


def test_projection_certifies_further_than_scaling(data):
    proj = RobustL1(*data, lam=0.1, dual_restoration="projection")
    scal = RobustL1(*data, lam=0.1, dual_restoration="scaling")
    pair = proj.solve(1.0)
    for tau in (1.01, 1.1, 1.5):
        gp = proj.gap(*proj.restore(*pair, tau), tau)
        gs = scal.gap(*scal.restore(*pair, tau), tau)
        assert 0 <= gp < gs


@pytest.mark.parametrize("restoration", RobustL1.Bound.DUAL_RESTORATIONS)
def test_restored_dual_feasible_on_the_whole_piece(data, restoration):
    p = RobustL1(*data, lam=0.1, dual_restoration=restoration)
    pair = p.solve(1.0)
    lo, hi = 0.8, 1.4
    primal, dual = p.restore(*pair, lo, hi)
    assert p.bound.errors(primal, dual, lo, hi) == []
    assert np.max(np.abs(dual.u)) <= 1.0
    # one bound, one scaling: the largest feasible scale to ~SAFETY (the pair needs scaling here)
    assert p.bound.kernel_sup_norm(pair[1].u, lo, hi) > 0.1
    assert p.bound.kernel_sup_norm(dual.u, lo, hi) >= 0.1 * (1 - 1e-9)
    for tau in np.geomspace(lo, hi, 200):
        assert p.dual_violation(dual, tau) == 0.0
    assert p.bound.errors(primal, RobustL1Dual(u=pair[1].u * 1.5), lo, hi)


def test_moving_dual_is_the_secant_of_its_projections_at_the_piece_ends(data):
    """Between two exact solves the moving dual runs, scaled by one s <= 1, from the interpolated
    dual projected at the piece's lower end to its projection at the upper end (a tangent at the
    middle, as before, misses both), and it is feasible at 200 bandwidths of the piece, checked
    directly; its gap bound covers the point gaps there."""
    from approxpath.moving import interpolate, value_at
    from approxpath.problems.robust_l1.continuation import free_coordinates, free_projection

    p = RobustL1(*data, lam=0.1)
    ta, tb = 1.0, 1.3
    a, b = p.solve(ta), p.solve(tb)
    lo, hi = 1.1, 1.2
    theta = [np.log(t / ta) / np.log(tb / ta) for t in (lo, np.sqrt(lo * hi), hi)]
    primal, dual = interpolate(a, b, theta, (lo, np.sqrt(lo * hi), hi), 1)
    moved_primal, moved = p.restore(primal, dual, lo, hi)
    assert p.bound.errors(moved_primal, moved, lo, hi) == []
    scale = float(moved.weights[0, 0])
    assert 0.99 < scale <= 1.0
    free = free_coordinates(a[1], b[1])
    for t in (lo, hi):
        end = free_projection(p, np.asarray(value_at(dual, t).u, dtype=float), free, t)
        np.testing.assert_allclose(value_at(moved, t).u, scale * end, rtol=0, atol=1e-12)
    gap = p.bound.gap(moved_primal, moved, lo, hi)
    for t in np.geomspace(lo, hi, 200):
        assert p.dual_violation(value_at(moved, t), t) == 0.0
        assert p.gap(value_at(moved_primal, t), value_at(moved, t), t) <= gap
    # a fixed primal beside the moving dual is not an interpolation of two solves: restored as a fixed pair
    fixed_primal, restored = p.restore(value_at(primal, lo), dual, lo, hi)
    assert p.bound.errors(fixed_primal, restored, lo, hi) == []
    assert p.dual_violation(value_at(restored, hi), hi) == 0.0


def test_a_moving_duals_floor_is_its_least_objective_and_u_past_one_is_refused(data):
    """The floor of a moving dual's objective y'u(t) on its piece (linear in t: least at an end) is
    at most the objective at every t of the piece and within rounding of the smaller end's (the
    ends differ here, so a floor from the larger end fails); a dual with one |u_i| of 1 + 1e-9 is
    refused (a slack of 1e-6 in the box check would let it through)."""
    from approxpath.moving import interpolate, value_at

    p = RobustL1(*data, lam=0.1)
    ta, tb = 1.0, 1.3
    a, b = p.solve(ta), p.solve(tb)
    lo, hi = 1.05, 1.25
    theta = [np.log(t / ta) / np.log(tb / ta) for t in (lo, np.sqrt(lo * hi), hi)]
    _, moved = p.restore(*interpolate(a, b, theta, (lo, np.sqrt(lo * hi), hi), 1), lo, hi)
    objectives = [p.dual_objective(value_at(moved, t), t) for t in np.geomspace(lo, hi, 101)]
    floor = p.bound.dual_floor(moved, lo, hi)
    assert abs(objectives[0] - objectives[-1]) > 1e-6
    assert floor <= min(objectives) and floor >= min(objectives[0], objectives[-1]) - 1e-9
    primal, dual = p.restore(*a, ta, ta)
    assert p.bound.errors(primal, dual, ta, ta) == []
    u = np.asarray(dual.u, dtype=float).copy()
    i = int(np.argmax(np.abs(u)))
    u[i] = np.sign(u[i]) * (1.0 + 1e-9)
    assert any(e.startswith("|u| exceeds 1") for e in p.bound.errors(primal, RobustL1Dual(u=u), ta, ta))


def test_bound_dominates_and_is_tight_on_path_pieces(data):
    p = RobustL1(*data, lam=0.1)
    eps = 0.2
    path = approxpath.approximate_path(p, eps=eps, interval=(0.5, 4.0))
    assert path.certified
    assert np.median(bound_slack_on_pieces(p, path)) <= 1e-2 * eps


@pytest.mark.parametrize("kw,interval,eps", [(dict(lam=0.1), (0.5, 4.0), 0.2),
                                             (dict(bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05)])
def test_path_against_pointwise_cvxpy(data, kw, interval, eps):
    """At 30 random parameter values the path's primal is within eps of a tight, independent
    CVXPY optimum of the primal declaration."""
    p = RobustL1(*data, **kw)
    path = approxpath.approximate_path(p, eps=eps, interval=interval)
    assert path.certified
    check_against_cvxpy(p, path, interval, eps, 4, RobustL1Primal)


@pytest.mark.parametrize("kw,ts", [(dict(lam=0.1), [0.5, 1.0, 2.0]),
                                   (dict(bandwidth=1.0, parameter="lam"), [0.02, 0.1, 0.5])])
def test_crosscheck_confirms_exact_solutions(data, kw, ts):
    """The dual rebuilt from an exact primal alone (signs of the residual, and the support's
    optimality conditions on the interpolated points) certifies it: the signs alone left
    gaps of 1.5-3.8 on these points."""
    from approxpath.exact.crosscheck import crosscheck

    p = RobustL1(*data, **kw)
    betas = np.array([p.solve(t)[0].beta for t in ts])
    report = crosscheck(p, ts, {"beta": betas}, tol=1e-6)
    assert report.ok, str(report)


def test_marching_pieces_need_fewer_tries_than_halving(monkeypatch):
    # the moving pair's bound grows about linearly with the piece's width: pieces sized from
    # the last bound (piece_bound_order = 1) need ~1.3 tries each where halving needs ~2
    # (sinc, n = 60: 284 tries for 219 pieces against 426 for 217)
    import approxpath.driver.certifier as certifier

    X, y = make_sinc(n=60, outliers=0.1, seed=0)
    tries, original = [], certifier.Certifier._try_piece
    monkeypatch.setattr(certifier.Certifier, "_try_piece", lambda self, *a: tries.append(1) or original(self, *a))
    counts = {}
    for order in (None, 1):
        monkeypatch.setattr(RobustL1, "piece_bound_order", order)
        tries.clear()
        path = approxpath.approximate_path(RobustL1(X, y, lam=0.1), eps=0.05, interval=(0.5, 2.0))
        assert path.certified
        counts[order] = len(tries), len(path.pieces)
    assert counts[1][0] < 0.8 * counts[None][0]
    assert counts[1][0] < 1.4 * counts[1][1] and counts[None][0] > 1.8 * counts[None][1]


@pytest.mark.parametrize("scale, kw, interval", [
    (1e-12, dict(lam=0.1), (0.5, 5.0)),  # tiny targets: the LP's reduced costs within HiGHS's absolute tolerance
    (1e6, dict(lam=0.1), (0.5, 5.0)),
    (1.0, dict(lam=1e-4, bandwidth=1.0, parameter="lam"), (1e-6, 1e-4)),  # rows |K u| <= lam near the tolerance
])
def test_the_exact_solves_certify_whatever_the_scale(scale, kw, interval):
    """The exact solves are scaled by powers of two: y * 1e-12 stopped with EpsilonTooSmallError
    at relative 1e-3 (a relative gap of 0.12), lambda = 1e-6 too (7e-4), where y itself
    certifies.  The path's values are within 1e-3 of a tight CVXPY optimum of the unscaled data,
    scaled (the objective is homogeneous in y and beta at a fixed lambda)."""
    X, y = make_sinc(n=30, outliers=0.1, seed=6)
    problem = approxpath.get_problem("robust_l1")(X, y * scale, **kw)
    path = approxpath.approximate_path(problem, eps=1e-3, relative=True, interval=interval)
    assert path.certified
    unscaled = approxpath.get_problem("robust_l1")(X, y, **kw)
    for tau in np.geomspace(*interval, 4):
        optimum = scale * tight_solve(unscaled.cvxpy_primal(tau).problem)
        value = problem.primal_objective(path.primal(tau), tau)
        assert problem.primal_violation(path.primal(tau), tau) == 0.0
        assert value - optimum <= 1e-3 * optimum + 1e-7 * scale
