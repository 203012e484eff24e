"""kLASSO's moving primal on bandwidth pieces: its bound against independent references (tight
CVXPY optima at random bandwidths inside a piece, dense sampling of the objective), at a point,
and where it is refused."""

import numpy as np
import pytest

import approxpath
from approxpath import moving
from approxpath.data import make_sinc
from approxpath.moving import Moving, is_moving, value_at
from approxpath.problems.klasso.bound import KLassoPrimal
from approxpath.problems.klasso.restore import middle_primal
from regression_helpers import check_piece_against_cvxpy

KLasso = approxpath.get_problem("klasso")


@pytest.fixture(scope="module")
def segment():
    """A small lambda (the solution moves fast with the bandwidth) and two exact solves."""
    p = KLasso(*make_sinc(n=40, low=-3.0, high=3.0, noise=0.08, seed=11), lam=1e-3)
    ta, tb = 0.8, 0.84
    return p, (ta, p.solve(ta)), (tb, p.solve(tb))


def _carrier(a, b, theta, lo, hi):
    """The driver's interpolation of two exact solves on [lo, hi] (weight ``theta`` in the middle)."""
    def position(t):
        return np.log(t / a[0]) / np.log(b[0] / a[0])

    return moving.interpolate(a[1], b[1], (position(lo), theta, position(hi)), (lo, np.sqrt(lo * hi), hi), 1)


def _piece(segment, theta, width):
    p, a, b = segment
    m = np.exp((1 - theta) * np.log(a[0]) + theta * np.log(b[0]))
    lo, hi = float(m * (1 - width / 2)), float(m * (1 + width / 2))
    primal, dual = p.restore(*_carrier(a, b, theta, lo, hi), lo, hi)
    assert is_moving(primal) and primal.degree == 1 and is_moving(dual)  # both sides move
    return p, primal, dual, lo, hi


@pytest.mark.parametrize("theta,width", [(0.2, 0.01), (0.5, 0.03), (0.7, 0.05)])
def test_moving_primal_against_tight_cvxpy(segment, theta, width):
    """At the ends and 6 random bandwidths of the piece: the primal's objective is at least a tight
    CVXPY optimum and the dual's at most, the piece's bound covers the primal's distance to the
    optimum, and the bound at a point is the computed gap there (to rounding)."""
    p, primal, dual, lo, hi = _piece(segment, theta, width)
    assert p.bound.check(primal, dual, lo, hi) == []
    rng = np.random.default_rng(int(theta * 100))
    taus = np.concatenate([[lo, hi], rng.uniform(lo, hi, 6)])
    check_piece_against_cvxpy(p, primal, dual, lo, hi, taus, 1e-7)
    for tau in taus:
        pv = p.primal_objective(value_at(primal, tau), tau)
        dv = p.dual_objective(value_at(dual, tau), tau)
        at = p.bound.gap(primal, dual, tau, tau)  # the point's value and the rounding of it
        assert pv - dv <= at <= pv - dv + 1e-9 * (1.0 + abs(pv))


def test_moving_primal_bound_is_below_a_fixed_primals(segment):
    """Where the solution moves, the primal that moves with the bandwidth gets a smaller bound than
    the interpolation held at the piece's middle (the restoration before), with the same dual."""
    p, primal, dual, lo, hi = _piece(segment, 0.5, 0.03)
    fixed = middle_primal(p, value_at(primal, lo), dual, lo, hi)
    assert p.bound.gap(primal, dual, lo, hi) < 0.5 * p.bound.gap(fixed, dual, lo, hi)


@pytest.mark.parametrize("lam", [1e-3, 10.0])
def test_moving_primal_ends_dominate_dense_sampling(segment, lam):
    """The objective at ``lam`` of random moving primals (entries of both signs and large, as at a
    small lambda; random intercepts; weights moving fast) sampled at 400 bandwidths of a wide
    piece stays below the chord of the end values of the sub-interval around each (the bound is
    convex there)."""
    p = segment[0]
    rng = np.random.default_rng(5)
    lo, hi = 0.3, 1.2
    for trial in range(4):
        beta_a, slope = rng.normal(0, 50, p.n), rng.normal(0, 20, p.n)
        weights = np.array([[1.0, 1.0], rng.uniform(-5.0, 5.0, 2)])
        points = (KLassoPrimal(beta=beta_a, beta0=float(rng.normal())),
                  KLassoPrimal(beta=slope, beta0=float(rng.normal())))
        primal = Moving(points, weights, (lo, hi))
        xs, top, margin = p.bound.moving_primal_ends(primal, lo, hi, lam)
        for tau in np.linspace(lo, hi, 400):
            j = min(int(np.searchsorted(xs, tau, side="right")) - 1, len(xs) - 2)
            s = (tau - xs[j]) / (xs[j + 1] - xs[j])
            beta = value_at(primal, tau)
            r = p.y - p.gram(tau) @ beta.beta - beta.beta0
            assert 0.5 * r @ r + lam * np.abs(beta.beta).sum() <= (1 - s) * top[j, 0] + s * top[j, 1] + margin


@pytest.mark.parametrize("side", ["after a", "before b"])
def test_bound_covers_both_ends_of_pieces_next_to_a_solve(segment, side):
    """Pieces that start at one exact solve and move away from it (the gap grows toward the far
    end): the bound covers the gap at each of 9 bandwidths, the far end included."""
    p, a, b = segment
    for width in (0.005, 0.01, 0.02):
        lo, hi = (a[0], a[0] * (1 + width)) if side == "after a" else (b[0] * (1 - width), b[0])
        theta = np.log(np.sqrt(lo * hi) / a[0]) / np.log(b[0] / a[0])
        primal, dual = p.restore(*_carrier(a, b, theta, lo, hi), lo, hi)
        bound = p.bound.gap(primal, dual, lo, hi)
        for tau in np.linspace(lo, hi, 9):
            assert bound >= p.primal_objective(value_at(primal, tau), tau) - p.dual_objective(value_at(dual, tau), tau)


def test_moving_primal_on_a_point_is_refused(segment):
    p, primal, dual, lo, hi = _piece(segment, 0.5, 0.03)
    assert p.bound.check(primal, dual, lo, lo) == ["a moving primal needs a piece wider than one bandwidth"]


def test_path_pieces_carry_moving_primals_and_verify(segment, tmp_path):
    """A whole path at lambda = 1e-3: its pieces hold moving primals, the certificate verifies
    (numpy only), and the point at t is the stored combination's value."""
    p = segment[0]
    path = approxpath.approximate_path(p, eps=1e-3, relative=True, interval=(0.5, 2.0), progress=False)
    assert all(piece.kind == "certified" for piece in path.pieces)
    assert sum(is_moving(piece.primal) for piece in path.pieces) > len(path.pieces) // 2
    path.save(tmp_path / "c.npz")
    assert approxpath.verify(tmp_path / "c.npz", p.X, p.y).ok
    piece = next(q for q in path.pieces if is_moving(q.primal))
    t = float(np.sqrt(piece.lo * piece.hi))
    assert np.array_equal(path.primal(t).beta, value_at(piece.primal, t).beta)
