"""The anchor-plus-direction combination bound of robust l1 (problems/robust_l1/moving.py):
the same values as the generic two-point bound it replaces for such pairs, and the gap bounds
it gives cover gaps computed from explicitly formed kernels and tight CVXPY solves."""

import numpy as np
import pytest

import approxpath
from approxpath import moving
from approxpath.data import make_sinc
from approxpath.bernstein import bernstein_at
from approxpath.moving import is_moving, value_at
from approxpath.problems._regression import KernelEnclosures
from approxpath.problems.robust_l1 import bound as bound_module
from approxpath.problems.robust_l1.bound import RobustL1Bound
from approxpath.problems.robust_l1.moving import anchored, anchored_combinations
from approxpath.solvers.conic import solve_cvxpy

RobustL1 = approxpath.get_problem("robust_l1")


def _case(seed, ordered):
    """Random lines (n, 2, J + 1) and anchor-plus-direction weights at the nodes (r, 2, J + 1):
    anchors of weight 1, a scale or a scale computed with rounding (not exactly constant),
    directions of both signs, crossing zero inside or at a node, or 0."""
    rng = np.random.default_rng(seed)
    n, J = 30, 18
    up = rng.normal(size=(n, 2, J + 1))
    low = up - np.abs(rng.normal(size=up.shape)) * 10.0 ** rng.integers(-8, 0, size=up.shape)
    if not ordered:  # a few nodes where rounding left the upper line below the lower one
        flip = rng.random(up.shape) < 0.05
        up, low = np.where(flip, low, up), np.where(flip, up, low)
    s = np.linspace(0.0, 1.0, J + 1)
    anchors = [(1.0, 1.0), (0.7, 0.7), (0.3, 0.3 * (1 + 2.0**-52)), (0.0, 0.0)]
    directions = [(-0.01, 0.02), (0.0, 0.0), (0.03, -0.01), (-0.5, -0.1), (0.2, 0.4), (-0.1, 0.1)]
    W = np.array([[a, d] for a in anchors for d in directions])  # (r, 2, 2)
    return bernstein_at(W, s), low, up


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("ends", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_anchored_combinations_equal_the_generic_bound(seed, ordered, ends):
    """Every array equal to the generic two-point bound's (which enumerates both points' lines
    per sub-interval), in both modes, with and without rounding-crossed lines."""
    w, low, up = _case(seed, ordered)
    assert anchored(w)
    generic = KernelEnclosures._combinations(w, low, up, ends=ends)
    fast = anchored_combinations(w, low, up, ends=ends)
    assert len(generic) == len(fast)
    for g, f in zip(generic, fast):
        if g is None:
            assert f is None
        else:
            np.testing.assert_array_equal(f, g)


def test_not_anchored_falls_back():
    """An anchor weight below 0 somewhere, or more than two points: the generic bound."""
    w, low, up = _case(3, True)
    w = w.copy()
    w[0, 0, 5] = -1e-3
    assert not anchored(w)
    for g, f in zip(KernelEnclosures._combinations(w, low, up), RobustL1Bound._combinations(w, low, up)):
        np.testing.assert_array_equal(f, g)
    assert not anchored(np.ones((2, 3, 4)))


@pytest.fixture(scope="module")
def setup():
    X, y = make_sinc(n=50, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=7)
    p = RobustL1(X, y, lam=0.1)
    ta, tb = 0.6, 0.75
    return (X, y), p, (ta, p.solve(ta)), (tb, p.solve(tb))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_anchored_bound_covers_explicit_gaps(setup, seed, monkeypatch):
    """A random piece between two exact solves, the pair the search restores on it (an anchor
    and a direction, bounded by the anchored bound): feasible at 40 bandwidths of the piece
    with K formed explicitly, its gap there at most the piece's bound, and the bound at least
    the primal's distance to a tight CVXPY optimum at two random bandwidths."""
    (X, y), p, a, b = setup
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)  # squared distances, formed here
    rng = np.random.default_rng(seed)
    calls = []
    original = bound_module.anchored_combinations

    def counted(*args, **kw):
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(bound_module, "anchored_combinations", counted)
    lo = float(np.exp(rng.uniform(np.log(a[0]), np.log(b[0]) - 0.05)))
    hi = lo * float(np.exp(rng.uniform(0.005, 0.05)))
    m = np.sqrt(lo * hi)

    def position(t):
        return np.log(t / a[0]) / np.log(b[0] / a[0])

    carrier = moving.interpolate(a[1], b[1], (position(lo), position(m), position(hi)), (lo, m, hi), 1)
    verifier = RobustL1Bound(X, y, lam=0.1)  # fresh: no memoized products, no cached choice
    primal, dual = p.restore(*carrier, lo, hi)
    assert is_moving(primal) and is_moving(dual)
    assert verifier.check(primal, dual, lo, hi) == []
    bound = verifier.gap(primal, dual, lo, hi)
    assert calls  # the anchored bound was the one used
    for tau in np.concatenate([[lo, hi], rng.uniform(lo, hi, 38)]):
        K = np.exp(-tau * D)  # the Gaussian kernel at bandwidth tau
        beta, u = value_at(primal, tau).beta, value_at(dual, tau).u
        assert np.max(np.abs(u)) <= 1.0 and np.max(np.abs(K @ u)) <= 0.1
        gap = np.abs(y - K @ beta).sum() + 0.1 * np.abs(beta).sum() - y @ u
        assert gap <= bound
    for tau in rng.uniform(lo, hi, 2):
        decl = p.cvxpy_primal(tau)
        solve_cvxpy(decl.problem)
        assert bound >= p.primal_objective(value_at(primal, tau), tau) - decl.problem.value - 1e-6


def test_box_norm_of_stacked_weights_bounds_every_rate():
    """The search's box norms of r candidate rates at once: each one at least the largest
    |u(t)| on a fine grid of the piece (exact rationals of the weights, evaluated in float with a
    tiny slack), and within rounding of the one-rate bound the certificate computes."""
    from approxpath.problems.robust_l1.moving import box_norm

    rng = np.random.default_rng(5)
    U = rng.uniform(-1.0, 1.0, size=(40, 2))
    rates = np.array([0.0, 0.5, 1.0, 2.0, 7.5])
    W = np.stack([np.ones((rates.size, 2)), np.stack([-0.3 * rates, 0.4 * rates], axis=1)], axis=1)  # (r, 2, 2)
    err = np.array([0.0, 1e-12])
    stacked = box_norm(U, W, err)
    assert stacked.shape == (rates.size,)
    s = np.linspace(0.0, 1.0, 401)
    for k in range(rates.size):
        single = box_norm(U, W[k], err)
        assert stacked[k] == pytest.approx(single, rel=1e-14, abs=0.0)
        values = U @ bernstein_at(W[k], s)  # (n, 401)
        assert np.abs(values).max() <= stacked[k]
