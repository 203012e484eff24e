import math

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_sinc
from approxpath.compute.kernels import gaussian
from approxpath.numerics import zero_sum as _zero_sum
from approxpath.problems.klasso.bound import KLassoDual, KLassoPrimal
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


def test_exact_pair_kkt_and_dual_from_primal(sinc):
    """The dual is the residual: 1'u = 0 exactly, ||K u||_inf <= lam, and on the support
    (K u)_j = lam * sign(beta_j) (the KKT conditions, checked independently of the gap)."""
    p = KLasso(*sinc, lam=0.05)
    t = 2.0
    primal, dual = p.solve(t)
    K = p.gram(t)
    u = dual.scale * dual.u
    assert math.fsum(dual.u) == 0.0
    assert np.max(np.abs(K @ u)) <= 0.05
    r = sinc[1] - K @ primal.beta - primal.beta0
    np.testing.assert_allclose(u, r, atol=1e-6)
    S = primal.beta != 0
    assert S.any()
    np.testing.assert_allclose((K @ u)[S], 0.05 * np.sign(primal.beta[S]), atol=1e-6)
    again = p._restore_dual(p.dual_from_primal(primal, t), t)
    np.testing.assert_array_equal(again.u, dual.u)
    assert again.scale == dual.scale


def test_restored_dual_feasible_on_the_whole_piece(sinc):
    p = KLasso(*sinc, lam=0.1)
    pair = p.solve(1.0)
    lo, hi = 0.6, 1.7
    primal, dual = p.restore(*pair, lo, hi)
    assert p.bound.errors(primal, dual, lo, hi) == []
    for tau in np.geomspace(lo, hi, 200):
        assert p.dual_violation(dual, tau) == 0.0
    # the same dual is NOT feasible on a much wider piece: the check is not vacuous
    wide = KLassoDual(u=dual.u, scale=dual.scale * 10)
    assert p.bound.errors(primal, wide, lo, hi)


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
    np.testing.assert_allclose(dual.scale * dual.u, 0.75 * a[1].scale * a[1].u + 0.25 * b[1].scale * b[1].u)
    np.testing.assert_allclose(primal.beta, 0.75 * a[0].beta + 0.25 * b[0].beta)
    primal, dual = p.restore(primal, dual, 1.2, 1.3)
    assert p.bound.errors(primal, dual, 1.2, 1.3) == []
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
    sup = max(np.max(np.abs(gaussian(p.D, t) @ dual.u)) for t in ts)
    bound = p.bound.kernel_sup_norm(dual.u, lo, hi)
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
    u, v = _zero_sum(da.scale * da.u), _zero_sum(db.scale * db.u - da.scale * da.u)
    bounds = p.bound.moving_sup_norms(u, v, [rate, 0.0], at, lo, hi, offset=offset)
    ts = np.linspace(lo, hi, 1001)
    sups = [max(np.max(np.abs(gaussian(p.D, t) @ (u + (offset + r * (t - at)) * v))) for t in ts) for r in (rate, 0.0)]
    assert sups[0] <= bounds[0] and sups[1] <= bounds[1]
    if hi - lo < 0.05:
        assert bounds[0] <= sups[0] * (1 + 1e-6) and bounds[1] <= sups[1] * (1 + 1e-6)
    if offset == 0.0:
        assert bounds[1] == pytest.approx(p.bound.kernel_sup_norm(u, lo, hi), rel=1e-9)


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


def test_moving_sup_norm_pruning_is_exact(sinc):
    """Bounding only the rows that may reach the maximum gives the maximum over all rows bit
    for bit, and does skip rows (fixed and moving duals, drifts up to a whole segment)."""
    p = KLasso(*sinc, lam=0.05)
    (_, da), (_, db) = p.solve(1.0), p.solve(1.6)
    u, v = _zero_sum(da.scale * da.u), _zero_sum(db.scale * db.u - da.scale * da.u)
    kept = []
    union1d = np.union1d

    def spy(a, b):
        kept.append(len(union1d(a, b)))
        return union1d(a, b)

    for lo, hi in [(1.0, 1.02), (1.0, 1.6), (0.4, 2.0)]:
        rates, at = np.array([0.0, 0.0625, 0.5, 1.0]) / (hi - lo), 0.5 * (lo + hi)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(np, "union1d", spy)
            pruned = p.bound.moving_sup_norms(u, v, rates, at, lo, hi)
        np.testing.assert_array_equal(pruned, p.bound.moving_sup_norms(u, v, rates, at, lo, hi, prune=False))
    assert len(kept) == 3 and min(kept) < p.n


def test_moving_dual_certifies_what_a_fixed_dual_cannot(sinc):
    """Between two exact solves, the interpolated dual whose weight moves with t (the default
    restoration on a bandwidth piece) has a smaller rigorous gap bound than the same
    combination held fixed; it is feasible at every sampled t, its bound dominates the sampled
    gaps, and a certificate round trip keeps it (a forged slope is caught)."""
    p = KLasso(*sinc, lam=0.1)
    a, b = p.solve(1.0), p.solve(1.5)
    lo, hi = 1.05, 1.4
    pair = p.interpolate(a, b, 0.5)
    primal, dual = p.restore(*pair, lo, hi)
    assert dual.slope is not None and dual.rate > 0 and math.fsum(dual.slope) == 0.0
    # the vectors are the exact solves' (u_a and u_b - u_a, on the zero-sum grid), the weight
    # at the piece's middle the offset
    assert dual.offset == 0.5 and dual.at == pytest.approx(math.sqrt(lo * hi))
    np.testing.assert_array_equal(dual.u, _zero_sum(a[1].scale * a[1].u))
    np.testing.assert_allclose(dual.value(dual.at) / dual.scale, pair[1].u, rtol=0, atol=1e-12)
    fixed = p.restore(pair[0], KLassoDual(u=pair[1].u), lo, hi)
    assert fixed[1].slope is None
    moving_bound, fixed_bound = p.bound.gap(primal, dual, lo, hi), p.bound.gap(*fixed, lo, hi)
    assert moving_bound < 0.5 * fixed_bound
    ts = np.geomspace(lo, hi, 60)
    assert all(p.dual_violation(dual, t) == 0.0 for t in ts)
    assert max(p.gap(primal, dual, t) for t in ts) <= moving_bound
    assert p.bound.dual_floor(dual, lo, hi) <= min(p.dual_objective(dual, t) for t in ts)
    assert p.bound.errors(primal, dual, lo, hi) == []
    back = p.bound.from_arrays(p.bound.to_arrays(primal, dual))
    assert p.bound.gap(*back, lo, hi) == moving_bound
    forged = KLassoDual(u=dual.u, scale=dual.scale, slope=dual.slope, rate=20 * dual.rate, at=dual.at)
    assert any("infeasible" in e for e in p.bound.errors(primal, forged, lo, hi))
    off = KLassoDual(u=dual.u, scale=dual.scale, slope=dual.slope + 2.0**-30, rate=dual.rate, at=dual.at)
    assert any("1'slope" in e for e in p.bound.errors(primal, off, lo, hi))
    # a file written before duals could move (no slope arrays) still reads as a fixed dual
    old = {k: v for k, v in p.bound.to_arrays(*fixed).items() if k not in ("dual_slope", "dual_rate", "dual_at")}
    assert p.bound.from_arrays(old)[1].slope is None
    # ... and one written before the offset (0.4.0) as a moving dual without it
    arrays = p.bound.to_arrays(primal, KLassoDual(u=dual.u, scale=dual.scale, slope=dual.slope, rate=dual.rate,
                                                  at=dual.at))
    back = p.bound.from_arrays({k: v for k, v in arrays.items() if k != "dual_offset"})[1]
    assert back.offset == 0.0 and back.rate == dual.rate and np.array_equal(back.slope, dual.slope)
