"""Hermite bounds of completely monotone sums (approxpath.envelopes.hermite_upper / hermite_lower)
and the node maximization of a hinge sum (max_hinge_sum), against dense evaluation of the
exact functions."""

from math import comb

import numpy as np
import pytest

from approxpath.bernstein import max_hinge_sum
from approxpath.envelopes import Envelope, hermite_lower, hermite_upper


def _sum_and_derivatives(c, d, x):
    """S, S', S'' of S(x) = sum_k c_k exp(-x d_k) (shape (m,) for c, d of shape (m, k))."""
    e = c * np.exp(-x * d)
    return e.sum(-1), -(e * d).sum(-1), (e * d * d).sum(-1)


def _envelope(c, d, lo, hi):
    (f0, g0, h0), (f1, g1, h1) = _sum_and_derivatives(c, d, lo), _sum_and_derivatives(c, d, hi)
    return Envelope(lo, hi, f0, f1, g0, g1, h0, h1)


def _bernstein(coef, s):
    """Values (..., len(s)) of the degree-5 polynomials with Bernstein coefficients coef (..., 6)."""
    basis = np.array([comb(5, j) * s**j * (1 - s) ** (5 - j) for j in range(6)])
    return coef @ basis


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lo, hi", [(0.1, 0.12), (1.0, 1.5), (0.5, 4.0), (2.0, 20.0)])
def test_hermite_polynomials_enclose_the_sum_and_match_the_ends(seed, lo, hi):
    rng = np.random.default_rng(seed)
    c = rng.random((20, 30)) * (rng.random((20, 30)) < 0.6)
    d = rng.exponential(2.0, size=(20, 30)) * rng.choice([0.1, 1.0, 10.0], size=(20, 30))
    E = _envelope(c, d, lo, hi)
    up, low = hermite_upper(E), hermite_lower(E)
    s = np.linspace(0.0, 1.0, 401)
    true = np.stack([_sum_and_derivatives(c, d, lo + t * (hi - lo))[0] for t in s], axis=-1)
    tol = 1e-12 * (1.0 + c.sum(-1, keepdims=True))
    assert np.all(_bernstein(low, s) <= true + tol)
    assert np.all(_bernstein(up, s) >= true - tol)
    for coef in (up, low):  # exact at both ends
        np.testing.assert_allclose(coef[:, 0], E.f_lo, rtol=1e-14, atol=0)
        np.testing.assert_allclose(coef[:, -1], E.f_hi, rtol=1e-14, atol=0)


def test_hermite_enclosure_shrinks_like_a_high_power_of_the_width():
    """On a narrow piece the enclosure is orders tighter than chord and tangents: halving the
    width divides its width by ~2**5 (the lower quartic's error), against 4 for the chord."""
    rng = np.random.default_rng(0)
    c, d = rng.random(40), rng.exponential(3.0, 40)
    widths = []
    for w in (0.2, 0.1):
        E = _envelope(c, d, 1.0, 1.0 + w)
        middle = _bernstein(np.stack([hermite_upper(E), hermite_lower(E)]), np.array([0.5]))[:, 0]
        chord = 0.5 * (E.f_lo + E.f_hi) - max(E.f_lo + 0.5 * w * E.df_lo, E.f_hi - 0.5 * w * E.df_hi)
        widths.append((middle[0] - middle[1], chord))
    (hermite_wide, chord_wide), (hermite_narrow, _) = widths
    assert hermite_wide < 1e-3 * chord_wide
    assert hermite_wide / hermite_narrow > 16


def _dense_max(q, r, c, s):
    return np.max(_bernstein(q, s) + c * np.maximum(0.0, _bernstein(r, s)).sum(axis=0))


@pytest.mark.parametrize("seed", range(6))
def test_max_hinge_sum_dominates_dense_evaluation_and_is_close(seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(6)
    r = rng.standard_normal((50, 6)) + rng.uniform(-1.5, 0.5, size=(50, 1))
    s = np.linspace(0.0, 1.0, 4001)
    true = _dense_max(q, r, 0.7, s)
    bound, scale = max_hinge_sum(q, r, 0.7)
    assert true <= bound <= true + 0.05 * scale
    assert scale >= np.abs(q).max()


def test_max_hinge_sum_catches_a_peak_between_nodes():
    """A narrow concave bump between two nodes (nodes at k/16): node values alone would miss
    its top; the lift between nodes must cover it."""
    peak = 1.0 / 32
    # q(s) = -(s - peak)^2 * 40 + 1 on [0, 1], in Bernstein form (degree raised from 2 to 5)
    a, b, cc = -40.0, 80.0 * peak, 1.0 - 40.0 * peak**2  # q = a s^2 + b s + cc
    mono = np.array([cc, b, a, 0, 0, 0])
    # monomial -> Bernstein: beta_j = sum_{i <= j} C(j, i) / C(5, i) m_i
    q = np.array([sum(comb(j, i) / comb(5, i) * mono[i] for i in range(j + 1)) for j in range(6)])
    np.testing.assert_allclose(_bernstein(q, np.array([peak])), [1.0])
    bound, _ = max_hinge_sum(q, np.full((1, 6), -1.0), 1.0)
    assert bound >= 1.0


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((6,), (5,)), ((3,), (7, 6)), ((7, 3), (7, 6)), ((4, 1, 2), (3, 4))])
def test_bernstein_product_is_the_product_of_the_polynomials(shapes):
    """The product's coefficients, evaluated, are a(s) b(s) (closed form: both polynomials
    evaluated at 101 points of [0, 1] by de Casteljau's steps), broadcast over the leading axes."""
    from approxpath.bernstein import bernstein_at, bernstein_product

    rng = np.random.default_rng(len(shapes[0]) + shapes[1][-1])
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    c = bernstein_product(a, b)
    assert c.shape == np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + (a.shape[-1] + b.shape[-1] - 1,)
    s = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(bernstein_at(c, s), bernstein_at(a, s) * bernstein_at(b, s), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("shape", [(7,), (300,), (40, 3)])
def test_combine_is_the_weighted_sum_of_each_field_within_its_chain(shape):
    """``Envelope.combine``: each field the weighted sum of its rows (against ``math.fsum``, within
    ``sum_chain`` roundings of the products' absolute sum), with every field an array or with the
    second derivatives left at their scalar default (each field summed alone): the same values to
    the last bit either way."""
    import math

    from approxpath.numerics import fp_margin, sum_chain

    rng = np.random.default_rng(shape[0])
    fields = [rng.uniform(0.0, 2.0, shape) for _ in range(6)]
    w = rng.uniform(0.0, 1.0, shape[0])
    full = Envelope(0.5, 1.5, *fields).combine(w)
    scalar = Envelope(0.5, 1.5, *fields[:4]).combine(w)
    for k, name in enumerate(("f_lo", "f_hi", "df_lo", "df_hi", "d2f_lo", "d2f_hi")):
        got = np.atleast_1d(getattr(full, name))
        terms = (w.reshape(w.shape + (1,) * (len(shape) - 1)) * fields[k]).reshape(shape[0], -1)
        for j in range(terms.shape[1]):
            exact = math.fsum(terms[:, j])
            assert abs(got[j] - exact) <= fp_margin(sum_chain(shape[0]), np.abs(terms[:, j]).sum()), (name, j)
        if k < 4:
            assert np.array_equal(getattr(scalar, name), getattr(full, name)), name
    assert scalar.d2f_lo == 0.0 and scalar.d2f_hi == 0.0
