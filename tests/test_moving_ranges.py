"""weight_ranges: every sub-interval's weight ranges at once, against the weights themselves."""

import numpy as np
import pytest

from approxpath.moving import Moving, weight_ranges


@pytest.mark.parametrize("degree", [0, 1, 3])
def test_weight_ranges_hold_every_weight_and_match_restrict(degree):
    rng = np.random.default_rng(degree)
    W = rng.standard_normal((3, degree + 1))
    point = Moving(("a", "b", "c"), W, (0.5, 2.0))
    edges = np.geomspace(0.5, 2.0, 6)
    ranges = weight_ranges(point, edges)[1]  # (J, K, 2)
    assert ranges.shape == (5, 3, 2)
    for j, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        # the weights themselves (independent: evaluated, not restricted) lie inside
        at = point.weights_at(np.linspace(a, b, 41))  # (K, 41)
        assert np.all(at >= ranges[j, :, :1]) and np.all(at <= ranges[j, :, 1:])
        # and the ranges are the hull of the restricted coefficients, sub-interval by sub-interval
        R = point.restrict(a, b)
        err = point.allowance()
        np.testing.assert_array_equal(ranges[j], np.stack([R.min(axis=1) - err, R.max(axis=1) + err], axis=-1))
