"""The bound of F(tau) + tau N(tau) over a piece of a weight path (problems/_weight_path.py),
against closed forms: a quadratic F and a convex piecewise linear N whose maximum is known
exactly, dense samples, values known only within bands, and a node that cannot be evaluated."""

import numpy as np
import pytest

from approxpath.problems._weight_path import kinks, weight_path_bound

LO, HI = 0.5, 2.0


def _case(seed):
    """A convex quadratic F, N = sum_i |a_i + b_i x| (convex, piecewise linear) in the position
    x in [0, 1], and their kinks: vectorized evaluators as the problems hand them."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, 3) + np.array([0.0, 0.0, 1.5])  # F = c0 + c1 x + c2 x^2, c2 > 0
    a, b = rng.normal(size=6), rng.normal(size=6)

    def F(x):
        x = np.asarray(x, dtype=float)
        return c[0] + c[1] * x + c[2] * x * x

    def N(x):
        x = np.asarray(x, dtype=float)
        return np.abs(a[:, None] + np.outer(b, x)).sum(axis=0)

    cuts = kinks(np.column_stack([a, a + b]))
    return F, N, cuts


def _exact_max(F, N):
    """max of F + tau N on a grid of 200,001 positions (within ~1e-10 of the true maximum here)."""
    x = np.linspace(0.0, 1.0, 200001)
    return float(np.max(F(x) + (LO + x * (HI - LO)) * N(x)))


@pytest.mark.parametrize("seed", range(8))
def test_the_bound_is_the_maximum_up_to_rounding(seed):
    F, N, cuts = _case(seed)
    bound = weight_path_bound(lambda x: (F(x), np.zeros(np.shape(x))), N, cuts, LO, HI, quadratic=True)
    best = _exact_max(F, N)
    assert best <= bound <= best + 1e-6 * (1.0 + abs(best))


@pytest.mark.parametrize("seed", range(4))
def test_values_known_within_bands_are_covered(seed):
    """F handed as values off by up to their bands: the bound still covers the true maximum."""
    F, N, cuts = _case(seed)
    band = 1e-3
    rng = np.random.default_rng(100 + seed)

    def F_at(x):
        return F(x) + rng.uniform(-band, band, np.shape(x)), np.full(np.shape(x), band)

    assert weight_path_bound(F_at, N, cuts, LO, HI, quadratic=True) >= _exact_max(F, N)


def test_piecewise_linear_f_takes_its_chord():
    """A convex piecewise linear F (its kinks among the cuts): the bound is the maximum."""
    a, b = np.array([0.3, -0.2]), np.array([-1.0, 0.9])

    def F(x):
        return np.abs(a[:, None] + np.outer(b, np.asarray(x, dtype=float))).sum(axis=0)

    def N(x):
        return np.full(np.shape(x), 2.0)

    bound = weight_path_bound(lambda x: (F(x), np.zeros(np.shape(x))), N, kinks(np.column_stack([a, a + b])), LO,
                              HI, quadratic=False)
    best = _exact_max(F, N)
    assert best <= bound <= best + 1e-9


def test_a_node_that_cannot_be_evaluated_gives_no_finite_bound():
    """F is NaN at one middle node only: the bound is NaN (no certificate), never the maximum
    of the other nodes."""
    F, N, cuts = _case(0)

    def F_at(x):
        values = F(x)
        values[np.asarray(x) == 0.5] = np.nan
        return values, np.zeros(np.shape(x))

    assert np.isnan(weight_path_bound(F_at, N, np.array([]), LO, HI, quadratic=True))
