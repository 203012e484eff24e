import math

import numpy as np
import pytest

import approxpath
from approxpath import InputError, moving
from approxpath.data import make_sinc
from approxpath.compute.kernels import gaussian
from approxpath.moving import Moving, is_moving, value_at
from approxpath.numerics import zero_sum as _zero_sum
from approxpath.problems.klasso.bound import KLassoDual, KLassoPrimal
from approxpath.problems.klasso.restore import scaled_dual
from regression_helpers import bound_slack_on_pieces, check_against_cvxpy

KLasso = approxpath.get_problem("klasso")


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=40, low=-3.0, high=3.0, noise=0.08, seed=11)


@pytest.mark.parametrize("kw,match", [
    (dict(), "lam="),
    (dict(lam=-1.0), "lam must be a positive"),
    (dict(lam=0.1, bandwidth=1.0), "only for parameter='lam'"),
    (dict(parameter="lam"), "bandwidth="),
    (dict(parameter="lam", bandwidth=1.0, lam=-0.1), "positive finite"),
    (dict(lam=0.1, parameter="c"), "unknown parameter"),
])
def test_bad_options(sinc, kw, match):
    with pytest.raises(InputError, match=match):
        KLasso(*sinc, **kw)


def test_bad_targets(sinc):
    y = sinc[1].copy()
    y[3] = np.nan
    with pytest.raises(InputError, match="NaN"):
        KLasso(sinc[0], y, lam=0.1)


def test_zero_sum_grid_is_exact():
    rng = np.random.default_rng(0)
    for n in (2, 7, 50, 301):
        for scale in (1e-8, 1.0, 1e6):
            u = _zero_sum(scale * rng.standard_normal(n))
            assert math.fsum(u) == 0.0
            np.testing.assert_array_equal(_zero_sum(u), u)  # already on its grid: unchanged


def test_closed_form_above_lambda_max(sinc):
    """lam >= lam_max = ||K(y - mean y)||_inf: beta = 0 and beta0 = mean(y) are optimal."""
    t = 1.0
    p = KLasso(*sinc, bandwidth=t, parameter="lam")
    lam_max = p.lam_max()
    assert p.default_interval() == pytest.approx((1e-3 * lam_max, lam_max))
    assert KLasso(*sinc, bandwidth=t, parameter="lam", lam=0.5).default_interval() == pytest.approx((5e-4, 0.5))
    for lam in (1.001 * lam_max, 2 * lam_max):
        primal, dual = p.solve(lam)
        np.testing.assert_allclose(primal.beta, 0.0, atol=1e-8)
        assert primal.beta0 == pytest.approx(sinc[1].mean(), abs=1e-8)
        assert p.bound.gap(primal, dual, lam) <= 1e-8
    primal, _ = p.solve(0.5 * lam_max)
    assert np.abs(primal.beta).max() > 1e-3  # below lam_max the fit moves


def _scaled(dual):
    """``(s, u)`` of a fixed kLASSO dual s u (a point, or one point with a constant weight)."""
    if is_moving(dual):
        assert dual.degree == 0 and len(dual.points) == 1
        return float(dual.weights[0, 0]), dual.points[0].u
    return 1.0, dual.u


def test_exact_pair_kkt_and_dual_from_primal(sinc):
    """The dual is the residual: 1'u = 0 exactly, ||K u||_inf <= lam, and on the support
    (K u)_j = lam * sign(beta_j) (the KKT conditions, checked independently of the gap)."""
    p = KLasso(*sinc, lam=0.05)
    t = 2.0
    primal, dual = p.solve(t)
    K = p.gram(t)
    s, u0 = _scaled(dual)
    u = s * u0
    assert math.fsum(u0) == 0.0
    assert np.max(np.abs(K @ u)) <= 0.05
    r = sinc[1] - K @ primal.beta - primal.beta0
    np.testing.assert_allclose(u, r, atol=1e-6)
    S = primal.beta != 0
    assert S.any()
    np.testing.assert_allclose((K @ u)[S], 0.05 * np.sign(primal.beta[S]), atol=1e-6)
    # the residual of the primal, restored, is the solver's dual: the same numbers but for the
    # rounding of two computations (the solver's u and y - K beta - beta0), each put on the
    # grid of 2**-42 of its largest entry (a value near a grid point may round either way:
    # 2.8e-14 apart with numpy 2.5 on Python 3.13, the same bits with numpy 2.4)
    again = scaled_dual(p, p.dual_from_primal(primal, t), t)
    np.testing.assert_allclose(_scaled(again)[1], u0, rtol=0, atol=1e-12 * np.abs(u0).max())
    assert _scaled(again)[0] == pytest.approx(s, rel=1e-12)


def test_restored_dual_feasible_on_the_whole_piece(sinc):
    p = KLasso(*sinc, lam=0.1)
    pair = p.solve(1.0)
    lo, hi = 0.6, 1.7
    primal, dual = p.restore(*pair, lo, hi)
    assert p.bound.check(primal, dual, lo, hi) == []
    for tau in np.geomspace(lo, hi, 200):
        assert p.dual_violation(dual, tau) == 0.0
    # the same dual scaled up is NOT feasible on the piece: the check is not vacuous
    s, u = _scaled(dual)
    wide = Moving((KLassoDual(u=u),), [[s * 10]], (lo, hi))
    assert p.bound.check(primal, wide, lo, hi)


def test_bound_dominates_and_is_tight_on_path_pieces(sinc):
    """On every piece of a certified path the gap sampled at 40 points stays below the
    piece's bound, and the bound exceeds the sampled maximum by little (second-order tight)."""
    p = KLasso(*sinc, lam=0.1)
    path = approxpath.approximate_path(p, eps=0.05, interval=(0.25, 16.0))
    assert path.certified
    assert np.median(bound_slack_on_pieces(p, path)) <= 1e-3 * 0.05


@pytest.mark.parametrize("kw,interval", [(dict(lam=0.1), (2.0**-3, 2.0**5)),
                                         (dict(bandwidth=2.0, parameter="lam"), (1e-3, 1.0))])
def test_path_against_pointwise_cvxpy(sinc, kw, interval):
    """At 30 random parameter values the path's primal is within eps of a tight, independent
    CVXPY optimum of the primal declaration."""
    p = KLasso(*sinc, **kw)
    eps = 0.02
    path = approxpath.approximate_path(p, eps=eps, interval=interval)
    assert path.certified
    check_against_cvxpy(p, path, interval, eps, 2, KLassoPrimal)


def test_interpolate_mixes_the_effective_duals(sinc):
    """A convex combination of two feasible duals s_a u_a, s_b u_b (what interpolating
    strategies use) is the mix of the points themselves, not of u and scale separately."""
    p = KLasso(*sinc, lam=0.1)
    a, b = p.solve(1.0), p.solve(1.5)
    primal, dual = p.interpolate(a, b, 0.25)
    (sa, ua), (sb, ub) = _scaled(a[1]), _scaled(b[1])
    np.testing.assert_allclose(dual.u, 0.75 * sa * ua + 0.25 * sb * ub)
    np.testing.assert_allclose(primal.beta, 0.75 * a[0].beta + 0.25 * b[0].beta)
    primal, dual = p.restore(primal, dual, 1.2, 1.3)
    assert p.bound.check(primal, dual, 1.2, 1.3) == []
    assert p.bound.gap(primal, dual, 1.2, 1.3) >= max(p.gap(primal, dual, x) for x in np.geomspace(1.2, 1.3, 20))


@pytest.mark.parametrize("lo, hi", [(1.0, 1.02), (1.0, 1.5), (0.3, 3.0)])
def test_residual_envelopes_and_sup_norm_dominate_dense_samples(sinc, lo, hi):
    """The rigorous bounds of a bandwidth piece shared with robust_l1 (Hermite polynomials of
    the sign-split sums at 19 nodes): the linear interpolants of ``low`` and ``up`` through
    ``xs`` enclose the residuals a - K_x beta at 1001 bandwidths, and kernel_sup_norm is above
    max_x ||K_x u||_inf there, both with no tolerance (the allowance covers the samples'
    rounding too).  On the 2 % piece low and up are 1.1e-7 apart at most (chords and tangents:
    6.4e-5) and the sup bound is 3e-12 relative above the samples (its maximum is at an end,
    where the bounds are exact up to a curvature term of 2**-27)."""
    p = KLasso(*sinc, lam=0.05)
    primal, dual = p.solve(1.2)
    beta, a = primal.beta, sinc[1] - primal.beta0
    assert (beta > 0).any() and (beta < 0).any()
    xs, low, up = p.bound.residual_envelopes(beta, a, lo, hi)
    assert len(xs) == 19 and xs[0] == lo and xs[-1] == hi and low.shape == up.shape == (p.n, 19)
    ts = np.linspace(lo, hi, 1001)
    r = np.stack([a - gaussian(p.D, t) @ beta for t in ts], axis=1)
    interp = lambda v: np.array([np.interp(ts, xs, row) for row in v])  # noqa: E731
    assert np.all(interp(low) <= r) and np.all(r <= interp(up))
    u = _scaled(dual)[1]
    sup = max(np.max(np.abs(gaussian(p.D, t) @ u)) for t in ts)
    bound = p.bound.kernel_sup_norm(u, lo, hi)
    assert sup <= bound
    if hi - lo < 0.05:
        assert np.max(up - low) <= 1e-6 * np.max(np.abs(a))
        assert bound <= sup * (1 + 1e-9)


@pytest.mark.parametrize("offset", [0.0, 0.6])
@pytest.mark.parametrize("lo, hi, at, rate", [(1.0, 1.02, 1.01, 30.0), (1.0, 1.5, 1.2, -2.0), (0.3, 3.0, 5.0, 0.4)])
def test_moving_sup_norm_dominates_dense_samples(sinc, lo, hi, at, rate, offset):
    """The bound of max_t ||K_t (u + (offset + rate (t - at)) v)||_inf on a bandwidth piece (a
    moving dual) is above the value at 1001 bandwidths with no tolerance, whatever the sign of
    t - at, and close to it on a short piece; with rate 0 and no offset it is the fixed dual's
    bound, up to rounding."""
    p = KLasso(*sinc, lam=0.05)
    (_, da), (_, db) = p.solve(1.0), p.solve(1.6)
    ua, ub = value_at(da, 1.0).u, value_at(db, 1.6).u
    u, v = _zero_sum(ua), _zero_sum(ub - ua)
    bounds = p.bound.moving_sup_norms(np.column_stack([u, v]), _drift([rate, 0.0], at, offset, lo, hi),
                                      np.zeros((2, 2)), lo, hi)
    ts = np.linspace(lo, hi, 1001)
    sups = [max(np.max(np.abs(gaussian(p.D, t) @ (u + (offset + r * (t - at)) * v))) for t in ts) for r in (rate, 0.0)]
    assert sups[0] <= bounds[0] and sups[1] <= bounds[1]
    if hi - lo < 0.05:
        assert bounds[0] <= sups[0] * (1 + 1e-6) and bounds[1] <= sups[1] * (1 + 1e-6)
    if offset == 0.0:
        assert bounds[1] == pytest.approx(p.bound.kernel_sup_norm(u, lo, hi), rel=1e-9)


def _drift(rates, at, offset, lo, hi):
    """Weights (r, 2, 2) on [lo, hi]: u with 1, v with offset + rate (t - at)."""
    rates = np.asarray(rates, dtype=float)
    return np.stack([np.ones((rates.size, 2)), np.stack([offset + rates * (lo - at), offset + rates * (hi - at)], 1)], 1)


def test_point_sup_norm_of_a_combination_dominates_the_direct_one(sinc):
    """The search's bound of ||K_x (u + theta v)||_inf at a point, from the products of u and v
    it memoizes, is above the norm of the kernel formed explicitly times the combination, and
    equal to it up to rounding."""
    p = KLasso(*sinc, lam=0.05)
    (_, da), (_, db) = p.solve(1.0), p.solve(1.6)
    u, v = p.bound.moving_basis(da, db)
    for theta, x in [(0.0, 1.0), (0.3, 1.2), (1.0, 1.6), (0.7, 0.2)]:
        direct = np.max(np.abs(np.exp(-x * p.D) @ (u + theta * v)))
        bound = p.bound.point_sup_norm(u, v, theta, x)
        assert direct <= bound <= direct * (1 + 1e-12)
        # several weights at once: the same bounds, bit for bit
        thetas = np.array([theta, -theta, 2.0])
        np.testing.assert_array_equal(p.bound.point_sup_norm(u, v, thetas, x),
                                      [p.bound.point_sup_norm(u, v, th, x) for th in thetas])


def test_moving_sup_norm_pruning_is_exact(sinc):
    """Bounding only the rows that may reach the maximum gives the maximum over all rows bit
    for bit, and does skip rows (fixed and moving duals, drifts up to a whole segment)."""
    p = KLasso(*sinc, lam=0.05)
    (_, da), (_, db) = p.solve(1.0), p.solve(1.6)
    ua, ub = value_at(da, 1.0).u, value_at(db, 1.6).u
    C = np.column_stack([_zero_sum(ua), _zero_sum(ub - ua)])
    kept = []
    union1d = np.union1d

    def spy(a, b):
        kept.append(len(union1d(a, b)))
        return union1d(a, b)

    for lo, hi in [(1.0, 1.02), (1.0, 1.6), (0.4, 2.0)]:
        rates, at = np.array([0.0, 0.0625, 0.5, 1.0]) / (hi - lo), 0.5 * (lo + hi)
        W, err = _drift(rates, at, 0.0, lo, hi), np.zeros((4, 2))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(np, "union1d", spy)
            pruned = p.bound.moving_sup_norms(C, W, err, lo, hi)
        np.testing.assert_array_equal(pruned, p.bound.moving_sup_norms(C, W, err, lo, hi, prune=False))
    assert len(kept) == 3 and min(kept) < p.n


def test_moving_dual_certifies_what_a_fixed_dual_cannot(sinc):
    """Between two exact solves, the interpolated dual whose weight moves with t (the default
    restoration of the driver's moving interpolation on a bandwidth piece) has a smaller
    rigorous gap bound than the same combination held fixed; it is feasible at every sampled t,
    its bound dominates the sampled gaps, the layout keeps it, and forged weights or points are
    caught."""
    p = KLasso(*sinc, lam=0.1)
    a, b = p.solve(1.0), p.solve(1.5)
    lo, hi = 1.05, 1.4
    m = math.sqrt(lo * hi)
    carrier = moving.interpolate(a, b, (0.4, 0.5, 0.6), (lo, m, hi), 1)
    primal, dual = p.restore(*carrier, lo, hi)
    assert is_moving(dual) and dual.degree == 1 and all(math.fsum(q.u) == 0.0 for q in dual.points)
    # the points are the exact solves' (u_a and u_b - u_a, on the zero-sum grid); at the ends
    # the dual is u_a + (theta + rho (t - m)) v with the interpolation's weight theta = 0.5 at
    # the middle m and one drift rho across the piece
    u, v = (q.u for q in dual.points)
    np.testing.assert_array_equal(u, _zero_sum(value_at(a[1], 1.0).u))
    (s_lo, w_lo), (s_hi, w_hi) = dual.weights_at(lo), dual.weights_at(hi)
    rho = (w_hi / s_hi - w_lo / s_lo) / (hi - lo)
    assert w_lo / s_lo - rho * (lo - m) == pytest.approx(0.5, rel=1e-12)
    # and each end's scale is the best for that end alone (the maximizer of s y'd - s^2 |d|^2 / 2
    # within |K_t s d|_inf <= lam), times one factor <= 1 that keeps the dual feasible on the piece
    factors = []
    for s, t in ((s_lo, lo), (s_hi, hi)):
        d = u + (0.5 + rho * (t - m)) * v
        best = min(p.y @ d / (d @ d), 0.1 / np.max(np.abs(np.exp(-t * p.D) @ d)))
        factors.append(s / best)
    assert factors[0] == pytest.approx(factors[1], rel=1e-9) and factors[0] <= 1.0
    fixed = p.restore(*p.interpolate(a, b, 0.5), lo, hi)
    moving_bound, fixed_bound = p.bound.gap(primal, dual, lo, hi), p.bound.gap(*fixed, lo, hi)
    assert moving_bound < 0.5 * fixed_bound
    ts = np.geomspace(lo, hi, 60)
    assert all(p.dual_violation(value_at(dual, t), t) <= 1e-15 for t in ts)
    assert max(p.gap(primal, dual, t) for t in ts) <= moving_bound
    assert p.bound.dual_floor(dual, lo, hi) <= min(p.dual_objective(value_at(dual, t), t) for t in ts)
    assert p.bound.check(primal, dual, lo, hi) == []
    arrays = p.bound.pieces_to_arrays([(primal, dual, lo, hi)])
    back = p.bound.piece_from_arrays({k: v[0] for k, v in arrays.items()}, lo, hi)
    assert p.bound.gap(*back, lo, hi) == moving_bound
    steep = Moving(dual.points, dual.weights * np.array([[1.0, 1.0], [-20.0, 20.0]]), dual.span)
    assert any("infeasible" in e for e in p.bound.check(primal, steep, lo, hi))
    off = Moving((dual.points[0], KLassoDual(u=dual.points[1].u + 2.0**-30)), dual.weights, dual.span)
    assert any("1'u_1" in e for e in p.bound.check(primal, off, lo, hi))
