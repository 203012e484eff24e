"""The enclosures of :math:`f(\\sigma) = \\sum_k w_k(\\sigma) L_k(\\sigma)` between two nodes that
the moving pairs of the regression problems rest on (``KernelEnclosures._combinations``): weights
and lines linear in :math:`\\sigma \\in [0, 1]`, each line anywhere between its lower and upper
ends.  References: closed forms where the product bends (a weight changing sign), and the
extremes over the choices of lines sampled at 2,001 positions."""

import numpy as np
import pytest

from approxpath.problems._regression import KernelEnclosures

SIGMA = np.linspace(0.0, 1.0, 2001)


def _interp(ends, s=SIGMA):
    return ends[..., :1] * (1 - s) + ends[..., 1:] * s


def _extremes(w, low, up):
    """``(largest, smallest)`` (r, n, 2001): :math:`\\sum_k \\max/\\min(w_k U_k, w_k L_k)` on the one
    sub-interval of ``w`` (r, K, 2), ``low, up`` (n, K, 2), at every sampled position."""
    W = _interp(w)[:, None]  # (r, 1, K, S)
    U, L = _interp(up)[None], _interp(low)[None]  # (1, n, K, S)
    return np.maximum(W * U, W * L).sum(axis=2), np.minimum(W * U, W * L).sum(axis=2)


def _check(w, low, up):
    upper, lower = KernelEnclosures._combinations(w, low, up)
    _, _, e_up, e_low, b_up, b_low = KernelEnclosures._combinations(w, low, up, ends=True)
    big, small = _extremes(w, low, up)
    slack = 1e-12 * (1 + np.abs(big).max() + np.abs(small).max())  # (the samples' own rounding)
    assert np.all(big <= upper + slack) and np.all(small >= lower - slack)
    assert np.all(big <= _interp(e_up[:, :, 0]) + b_up + slack)  # (the convex form: chord plus bend)
    assert np.all(small >= _interp(e_low[:, :, 0]) - b_low - slack)
    return upper, lower, b_up, b_low


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_weight_changing_sign_bends_the_product_past_its_chord(sign):
    """w from 1 to -1 times the line -1 to 1 is -(1 - 2 sigma)^2: -1 at both ends, 0 in the middle;
    times the line 1 to -1, (1 - 2 sigma)^2: 1 at the ends, 0 in the middle.  The ends alone miss
    the middle by 1, which the curvature term max(0, -/+ c2)/4 = 4/4 gives back exactly."""
    w = np.array([[[1.0, -1.0]]])  # (r=1, K=1, 2)
    line = sign * np.array([[[-1.0, 1.0]]])  # (n=1, K=1, 2): one line, its lower and upper alike
    upper, lower, b_up, b_low = _check(w, line, line)
    if sign > 0:  # concave: the largest value 0 is 1 above the chord
        assert upper[0, 0, 0] == 0.0 and b_up[0, 0, 0] == 1.0 and lower[0, 0, 0] == -1.0
    else:  # convex: the smallest value 0 is 1 below the chord
        assert lower[0, 0, 0] == 0.0 and b_low[0, 0, 0] == 1.0 and upper[0, 0, 0] == 1.0


def test_random_combinations_are_enclosed_at_every_sampled_position():
    """Random weights (both signs, many changing sign), lines of random width, 3 points, 2
    candidates, 5 rows: the sampled extremes over the choices stay inside both forms."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        w = rng.uniform(-2.0, 2.0, (2, 3, 2))
        mid = rng.normal(0.0, 3.0, (5, 3, 2))
        half = rng.uniform(0.0, 1.0, (5, 3, 2)) * rng.integers(0, 2, (5, 3, 1))  # some lines exact
        _check(w, mid - half, mid + half)

