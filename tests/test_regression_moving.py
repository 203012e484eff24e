"""Moving robust l1 pairs on bandwidth pieces: rigorous bounds against independent references
(tight CVXPY solves at random parameters inside a piece, dense sampling), feasibility on the
whole piece, the certificate layout, and the old layout still read."""

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.problems.robust_l1.bound import RobustL1Bound, RobustL1Dual, RobustL1Primal
from approxpath.solvers.conic import solve_cvxpy

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
    pair = p.restore(*p.interpolate(a[1], b[1], theta), lo, hi)
    assert pair[1].slope is not None and pair[0].slope is not None  # it moves
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
    assert p.bound.errors(primal, dual, lo, hi) == []
    bound = p.bound.gap(primal, dual, lo, hi)
    rng = np.random.default_rng(int(theta * 100))
    for tau in np.concatenate([[lo, hi], rng.uniform(lo, hi, 6)]):
        assert p.dual_violation(dual, tau) == 0.0
        decl = p.cvxpy_primal(tau)
        solve_cvxpy(decl.problem)
        opt = decl.problem.value
        primal_value = p.primal_objective(primal, tau)
        dual_value = p.dual_objective(dual, tau)
        assert dual_value <= opt + 1e-6 <= primal_value + 2e-6
        assert bound >= primal_value - opt - 1e-6
        assert bound >= primal_value - dual_value >= 0.0


def test_moving_residual_bounds_dominate_dense_sampling(segment):
    """sum_i |y_i - K_t(beta + x(t) w)_i| sampled at 400 bandwidths stays below the bound of
    the sub-interval around each (random beta, w, offset and rates, both signs)."""
    p, _, _ = segment
    rng = np.random.default_rng(5)
    beta, w = rng.normal(size=p.n) * (rng.random(p.n) < 0.3), rng.normal(size=p.n)
    lo, hi, at, offset = 0.9, 1.4, 1.1, 0.3
    rates = np.array([-2.0, 0.0, 0.7, 3.0])
    xs, ends, margin = p.bound.moving_residual_bounds(beta, w, offset, rates, at, lo, hi)
    top = ends.max(axis=-1) + margin[:, None]  # (r, m - 1): a bound per sub-interval
    for k, rate in enumerate(rates):
        for t in np.linspace(lo, hi, 400):
            j = min(np.searchsorted(xs, t, side="right") - 1, len(xs) - 2)
            r = p.y - p.gram(t) @ (beta + (offset + rate * (t - at)) * w)
            assert np.abs(r).sum() <= top[k, j]
    # and it is tight: within a few percent of the sampled maximum on a narrow piece
    xs, ends, margin = p.bound.moving_residual_bounds(beta, w, offset, rates[2:3], at, 1.0, 1.01)
    sampled = max(np.abs(p.y - p.gram(t) @ (beta + (offset + 0.7 * (t - at)) * w)).sum()
                  for t in np.linspace(1.0, 1.01, 50))
    assert ends.max() + margin[0] <= 1.02 * sampled


def test_scaled_up_moving_dual_is_rejected(segment):
    """errors() checks the moving dual on the whole piece: 2 % more scale or a steeper rate
    than the one chosen (near the feasibility limit) is flagged."""
    p, a, b = segment
    lo, hi = 1.05, 1.12
    primal, dual = _moving_pair(p, a, b, 0.5, lo, hi)
    from dataclasses import replace

    bigger = replace(dual, scale=dual.scale * 1.02)
    assert any("infeasible" in e or "exceeds 1" in e for e in p.bound.errors(primal, bigger, lo, hi))
    violated = any(p.dual_violation(bigger, tau) > 0 for tau in np.linspace(lo, hi, 200))
    assert violated  # the rejection is real: the scaled dual leaves the dual set somewhere
    assert p.bound.errors(primal, replace(dual, slope=np.full(p.n, np.nan)), lo, hi)


def test_certificate_layout_round_trip(segment, data):
    """A moving pair survives to_arrays/from_arrays bit for bit; the verifier's bound (fresh,
    no memo) gives the search's gap (to rounding: the search bounds several candidates at
    once); the layout before moving pairs (beta and dual only) reads as
    a fixed pair with scale 1."""
    p, a, b = segment
    lo, hi = 1.05, 1.12
    primal, dual = _moving_pair(p, a, b, 0.5, lo, hi)
    verifier = RobustL1Bound(*data, lam=0.1)
    p2, d2 = verifier.from_arrays(p.bound.to_arrays(primal, dual))
    assert p2 == primal and d2 == dual
    assert verifier.gap(p2, d2, lo, hi) == pytest.approx(p.bound.gap(primal, dual, lo, hi), rel=1e-12)
    old = verifier.from_arrays({"beta": primal.beta, "dual": dual.u})
    assert old == (RobustL1Primal(beta=primal.beta), RobustL1Dual(u=dual.u))


def test_moving_path_verifies_with_fewer_solves(data, tmp_path):
    """The default (moving) path is certified, verifies from its file, agrees with tight CVXPY
    solves at random bandwidths, and needs fewer exact solves than the paper's projection
    (n = 40: 13 against 37, with 175 against 167 pieces)."""
    from approxpath.certificate.verify import verify
    from regression_helpers import check_against_cvxpy

    interval, eps = (0.5, 4.0), 0.05
    moving = approxpath.approximate_path(RobustL1(*data, lam=0.1), eps=eps, interval=interval)
    projected = approxpath.approximate_path(RobustL1(*data, lam=0.1, dual_restoration="projection"),
                                            eps=eps, interval=interval)
    assert moving.certified and projected.certified
    assert any(piece.dual.slope is not None for piece in moving.pieces)
    assert moving.exact_solves < projected.exact_solves
    out = tmp_path / "moving.npz"
    moving.save(out)
    report = verify(out, *data)
    assert report.ok, report
    check_against_cvxpy(RobustL1(*data, lam=0.1), moving, interval, eps, 11, RobustL1Primal)
