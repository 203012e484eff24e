"""Moving robust l1 pairs on bandwidth pieces: rigorous bounds against independent references
(tight CVXPY solves at random parameters inside a piece, dense sampling), feasibility on the
whole piece, the certificate layout, and the old layout still read."""

import numpy as np
import pytest

import approxpath
from approxpath import moving, moving_layout
from approxpath.data import make_sinc
from approxpath.moving import Moving, is_moving, value_at
from approxpath.problems.robust_l1.bound import RobustL1Bound, RobustL1Primal
from regression_helpers import check_piece_against_cvxpy

RobustL1 = approxpath.get_problem("robust_l1")


@pytest.fixture(scope="module")
def data():
    return make_sinc(n=40, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=3)


@pytest.fixture(scope="module")
def segment(data):
    """A problem and two exact solves of the bandwidth path."""
    p = RobustL1(*data, lam=0.1)
    ta, tb = 1.0, 1.2
    return p, (ta, p.solve(ta)), (tb, p.solve(tb))


def _moving_pair(p, a, b, theta, lo, hi):
    """The driver's interpolation of the two exact solves on [lo, hi] (the weight ``theta`` in
    the middle, the log-position's slope), restored: a pair that moves."""
    def position(t):
        return np.log(t / a[0]) / np.log(b[0] / a[0])

    m = np.sqrt(lo * hi)
    carrier = moving.interpolate(a[1], b[1], (position(lo), theta, position(hi)), (lo, m, hi), 1)
    pair = p.restore(*carrier, lo, hi)
    assert is_moving(pair[0]) and is_moving(pair[1])  # it moves
    return pair


@pytest.mark.parametrize("theta,width", [(0.3, 0.02), (0.5, 0.06), (0.8, 0.15)])
def test_moving_pair_against_tight_cvxpy(segment, theta, width):
    """At 8 random bandwidths inside the piece: the moving dual is feasible (box and
    |K_t u(t)| <= lam, in numpy), its objective below and the primal's above a tight CVXPY
    optimum, and the piece's bound at least the true gap to that optimum (>= 0)."""
    p, a, b = segment
    m = np.exp((1 - theta) * np.log(a[0]) + theta * np.log(b[0]))
    lo, hi = m * (1 - width / 2), m * (1 + width / 2)
    primal, dual = _moving_pair(p, a, b, theta, lo, hi)
    assert p.bound.check(primal, dual, lo, hi) == []
    rng = np.random.default_rng(int(theta * 100))
    check_piece_against_cvxpy(p, primal, dual, lo, hi, np.concatenate([[lo, hi], rng.uniform(lo, hi, 6)]), 1e-6)


def test_moving_residual_bounds_dominate_dense_sampling(segment):
    """sum_i |y_i - K_t(beta + x(t) w)_i| sampled at 400 bandwidths stays below the bound of
    the sub-interval around each (random beta, w, offset and rates, both signs)."""
    p, _, _ = segment
    rng = np.random.default_rng(5)
    beta, w = rng.normal(size=p.n) * (rng.random(p.n) < 0.3), rng.normal(size=p.n)
    lo, hi, at, offset = 0.9, 1.4, 1.1, 0.3
    rates = np.array([-2.0, 0.0, 0.7, 3.0])
    C = np.column_stack([beta, w])

    def weights(rates, lo, hi):  # beta with the weight 1, w with offset + rate (t - at)
        return np.stack([np.ones((len(rates), 2)),
                         np.stack([offset + rates * (lo - at), offset + rates * (hi - at)], 1)], 1)

    xs, ends, margin = p.bound.moving_residual_bounds(C, weights(rates, lo, hi), np.zeros((4, 2)), lo, hi)
    top = ends.max(axis=-1) + margin[:, None]  # (r, m - 1): a bound per sub-interval
    for k, rate in enumerate(rates):
        for t in np.linspace(lo, hi, 400):
            j = min(np.searchsorted(xs, t, side="right") - 1, len(xs) - 2)
            r = p.y - p.gram(t) @ (beta + (offset + rate * (t - at)) * w)
            assert np.abs(r).sum() <= top[k, j]
    # and it is tight: within a few percent of the sampled maximum on a narrow piece
    xs, ends, margin = p.bound.moving_residual_bounds(C, weights(rates[2:3], 1.0, 1.01), np.zeros((1, 2)), 1.0, 1.01)
    sampled = max(np.abs(p.y - p.gram(t) @ (beta + (offset + 0.7 * (t - at)) * w)).sum()
                  for t in np.linspace(1.0, 1.01, 50))
    assert ends.max() + margin[0] <= 1.02 * sampled


def test_scaled_up_moving_dual_is_rejected(segment):
    """check() refuses the moving dual on the whole piece: 2 % more weight than chosen (near
    the feasibility limit) is flagged, and a point that is not finite."""
    p, a, b = segment
    lo, hi = 1.05, 1.12
    primal, dual = _moving_pair(p, a, b, 0.5, lo, hi)
    bigger = Moving(dual.points, dual.weights * 1.02, dual.span)
    assert any("infeasible" in e or "exceeds 1" in e for e in p.bound.check(primal, bigger, lo, hi))
    violated = any(p.dual_violation(value_at(bigger, tau), tau) > 0 for tau in np.linspace(lo, hi, 200))
    assert violated  # the rejection is real: the scaled dual leaves the dual set somewhere
    nan = Moving((dual.points[0], type(dual.points[1])(u=np.full(p.n, np.nan))), dual.weights, dual.span)
    assert p.bound.check(primal, nan, lo, hi)


def test_weights_of_a_degree_the_bound_does_not_bound_are_refused(segment):
    """The same moving pair with its weights raised to degree 2 (Bernstein degree elevation: the
    same values at every bandwidth, so feasible) is refused by check(): the bound's arithmetic is
    proven for weights of degree 1 only."""
    p, a, b = segment
    lo, hi = 1.05, 1.12
    primal, dual = _moving_pair(p, a, b, 0.5, lo, hi)
    assert p.bound.moving_degrees["bandwidth"] == 1 and dual.degree == primal.degree == 1

    def raised(x):
        W = x.weights
        return Moving(x.points, np.column_stack([W[:, 0], 0.5 * (W[:, 0] + W[:, 1]), W[:, 1]]), x.span)

    primal2, dual2 = raised(primal), raised(dual)
    for tau in np.linspace(lo, hi, 7):
        np.testing.assert_allclose(value_at(dual2, tau).u, value_at(dual, tau).u, rtol=0, atol=1e-14)
    errors = p.bound.check(primal2, dual2, lo, hi)
    assert any("weights have degree 2; robust_l1 bounds degree <= 1" in e for e in errors), errors


def test_certificate_layout_round_trip(segment, data):
    """A moving pair survives the layout bit for bit; the verifier's bound (fresh, no memo)
    gives the search's gap (to rounding: the search bounds several candidates at once)."""
    p, a, b = segment
    lo, hi = 1.05, 1.12
    primal, dual = _moving_pair(p, a, b, 0.5, lo, hi)
    verifier = RobustL1Bound(*data, lam=0.1)
    arrays = p.bound.pieces_to_arrays([(primal, dual, lo, hi)])
    p2, d2 = verifier.piece_from_arrays({k: v[0] for k, v in arrays.items()}, lo, hi)
    assert moving_layout.fingerprint(p2) == moving_layout.fingerprint(primal) and moving_layout.fingerprint(d2) == moving_layout.fingerprint(dual)
    assert verifier.gap(p2, d2, lo, hi) == pytest.approx(p.bound.gap(primal, dual, lo, hi), rel=1e-12)


def test_moving_path_verifies_with_fewer_solves(data, tmp_path):
    """The default (moving) path is certified, verifies from its file, agrees with tight CVXPY
    solves at random bandwidths, and needs fewer exact solves than the paper's projection
    (n = 40: 13 against 37, with 175 against 167 pieces)."""
    from approxpath.certificate.verify import verify
    from regression_helpers import check_against_cvxpy

    interval, eps = (0.5, 4.0), 0.05
    moving_path = approxpath.approximate_path(RobustL1(*data, lam=0.1), eps=eps, interval=interval)
    projected = approxpath.approximate_path(RobustL1(*data, lam=0.1, dual_restoration="projection"),
                                            eps=eps, interval=interval)
    assert moving_path.certified and projected.certified
    assert any(is_moving(piece.dual) for piece in moving_path.pieces)
    assert moving_path.exact_solves < projected.exact_solves
    out = tmp_path / "moving.npz"
    moving_path.save(out)
    report = verify(out, *data)
    assert report.ok, report
    check_against_cvxpy(RobustL1(*data, lam=0.1), moving_path, interval, eps, 11, RobustL1Primal)
