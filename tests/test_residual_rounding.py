"""The residual enclosures of the regression bounds account for rounding: against residuals
computed in extended precision (numpy's ``longdouble``, 64-bit mantissa on x86), with integer
features (the squared distances exact) and large coefficients of both signs whose products cancel
against the targets, so that the float64 residuals are off by as much as their size."""

import numpy as np
import pytest

import approxpath

pytestmark = pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18,
                                reason="numpy's longdouble is double precision on this platform")


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    n = 40
    X = rng.integers(0, 4, (n, 2)).astype(float)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1).astype(np.longdouble)  # (exact: small integers)
    beta = rng.normal(0.0, 1e6, n)
    problem = approxpath.get_problem("klasso")(X, rng.normal(size=n), lam=0.1)
    return problem, D, beta


def _residuals(D, beta, a, t):
    """:math:`a - K_t\\beta` in extended precision (n,)."""
    return a.astype(np.longdouble) - np.exp(-np.longdouble(t) * D) @ beta.astype(np.longdouble)


def test_at_a_bandwidth_the_enclosure_holds_the_extended_precision_residual(setup):
    p, D, beta = setup
    t = 0.5
    a = np.asarray(np.exp(-np.longdouble(t) * D) @ beta.astype(np.longdouble), dtype=float)  # r ~ 1e-10
    exact = _residuals(D, beta, a, t)
    computed = a - np.exp(-t * D.astype(float)) @ beta
    assert np.abs(computed - exact).max() > 1e-11  # (float64 alone misses it: by up to ~1e-9 here)
    xs, low, up = p.bound.residual_envelopes(beta, a, t)
    assert xs.tolist() == [t] and np.all(low[:, 0] <= exact) and np.all(exact <= up[:, 0])


def test_on_a_piece_the_interpolants_hold_the_extended_precision_residuals(setup):
    """Between the nodes the linear interpolants of the enclosure hold :math:`r_i(t)` at 301
    bandwidths of the piece [0.5, 0.55]."""
    p, D, beta = setup
    lo, hi = 0.5, 0.55
    a = np.asarray(np.exp(-np.longdouble(0.52) * D) @ beta.astype(np.longdouble), dtype=float)
    xs, low, up = p.bound.residual_envelopes(beta, a, lo, hi)
    for t in np.linspace(lo, hi, 301):
        exact = _residuals(D, beta, a, t)
        lower = np.array([np.interp(t, xs, row) for row in low])
        upper = np.array([np.interp(t, xs, row) for row in up])
        assert np.all(lower <= exact) and np.all(exact <= upper)
