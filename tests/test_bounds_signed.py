"""Envelopes of signed exponential sums (approxpath.envelopes.split_envelope, difference_nodes,
max_abs_difference): the piecewise linear bounds of S on a piece enclose dense samples, the
bound of max |S| is exact at a point and stays tight where the positive and negative parts
cancel."""

import numpy as np
import pytest

from approxpath.envelopes import (Envelope, difference_nodes, hermite_lower, hermite_upper, max_abs_difference,
                                  split_envelope)
from approxpath.compute.distances import sq_distances
from approxpath.compute.caches import KernelCache
from approxpath.compute.kernels import Kernels


def _sampled_max(D, c, lo, hi):
    return np.max([np.abs(np.exp(-x * D) @ c) for x in np.linspace(lo, hi, 401)], axis=0)


@pytest.mark.parametrize("seed", range(5))
def test_bound_dominates_samples_and_is_exact_at_a_point(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 20, size=30)
    D = (x[:, None] - x[None, :]) ** 2 / 20
    c = rng.standard_normal(30) * (rng.random(30) < 0.7)
    products = KernelCache(D).products
    for lo, hi in ((0.1, 0.2), (0.5, 0.55), (1.0, 3.0), (2.0, 2.0)):
        P, N = split_envelope(products, c, lo, hi)
        bound = max_abs_difference(P, N)
        assert np.all(bound >= _sampled_max(D, c, lo, hi) - 1e-12 * (1 + np.abs(c).sum()))
        if lo == hi:
            np.testing.assert_allclose(bound, np.abs(np.exp(-lo * D) @ c), rtol=1e-12)


def test_tight_under_cancellation():
    """Coefficients +-1 on nearby points (a robust-regression dual): P and N are ~6-12 while
    |P - N| is ~0.5; on a 10 % piece the bound exceeds the true maximum by under 1e-6 of it
    (Hermite polynomials of the difference at 19 nodes: measured 1e-11 to 4e-7; the chords,
    tangents and curvature lines before them: up to 2.4e-3)."""
    x = np.linspace(-3, 3, 40)
    D = (x[:, None] - x[None, :]) ** 2
    products = KernelCache(D).products
    for c in (np.where(np.arange(40) % 2 == 0, 1.0, -1.0), np.sign(np.sin(3 * x))):
        for lo, hi in ((1.0, 1.1), (0.2, 0.22)):
            P, N = split_envelope(products, c, lo, hi)
            true = _sampled_max(D, c, lo, hi)
            bound = max_abs_difference(P, N)
            assert np.max(bound - true) <= 1e-6 * np.max(true)


def _bernstein(coef, s):
    from math import comb

    return coef @ np.array([comb(5, j) * s**j * (1 - s) ** (5 - j) for j in range(6)])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lo, hi", [(0.05, 0.5), (0.5, 0.55), (1.0, 3.0), (2.0, 16.0)])
def test_difference_nodes_enclose_dense_samples(seed, lo, hi):
    """The linear interpolants through the 19 nodes of difference_nodes enclose S = K c at
    4001 points (rounding aside), equal S at both ends up to a curvature term 2**-16 of the
    inner nodes', and the check has teeth: the polynomials' own node values (without the
    curvature terms) are crossed between nodes."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, size=40)
    D = (x[:, None] - x[None, :]) ** 2
    c = rng.standard_normal(40) * (rng.random(40) < 0.7)
    P, N = split_envelope(KernelCache(D).products, c, lo, hi)
    xs, low, up = difference_nodes(P, N)
    assert xs.shape == (19,) and xs[0] == lo and xs[-1] == hi and np.all(np.diff(xs) > 0)
    assert low.shape == up.shape == (40, 19)
    ts = np.unique(np.concatenate([np.linspace(lo, hi, 4001), xs]))
    true = np.stack([np.exp(-t * D) @ c for t in ts], axis=-1)
    interp = lambda v: np.array([np.interp(ts, xs, row) for row in v])  # noqa: E731
    tol = 1e-13 * (1.0 + np.abs(c).sum())
    assert np.all(interp(low) <= true + tol) and np.all(interp(up) >= true - tol)
    # at both ends the polynomials equal S: the bounds are S moved by the curvature terms
    # h^2/8 max(0, -+ min p'') (h = 2**-12 there, p'' = 20 x second differences of the
    # coefficients), 2**-27 of the largest curvature where the inner nodes' is 2**-11
    for sign, v, coef in ((1, up, hermite_upper(P) - hermite_lower(N)), (-1, low, hermite_lower(P) - hermite_upper(N))):
        second = 20.0 * np.diff(sign * coef, 2, axis=-1)
        lift = np.maximum(0.0, -second.min(axis=-1)) * 2.0**-27
        for k in (0, -1):
            np.testing.assert_allclose(v[:, k], true[:, k] + sign * lift, rtol=1e-12, atol=tol)
    if hi - lo > 1.0:  # wide pieces curve enough between nodes for the lift to matter
        s = (xs - lo) / (hi - lo)
        bare_up = _bernstein(hermite_upper(P) - hermite_lower(N), s)
        bare_low = _bernstein(hermite_lower(P) - hermite_upper(N), s)
        assert np.any(interp(bare_up) < true - tol) or np.any(interp(bare_low) > true + tol)


@pytest.mark.parametrize("shape", [(), (3,), (0, 2), (4, 2, 3)])
def test_difference_nodes_of_a_batch_are_those_of_each_sum(shape):
    """Any shape of sums (a scalar, none, several axes) gives 19 nodes per sum, each sum's the
    same as when it is bounded alone, to a few units in the last place of the sums' size (a
    product with one row rounds in another order than one with many)."""
    rng = np.random.default_rng(len(shape))
    scales = (1.0, 0.9, -1.0, -0.8, 1.0, 0.7)  # f, f at hi, f', f' at hi, f'', f'' at hi
    p_fields, n_fields = ([rng.random(shape) * s for s in scales] for _ in range(2))
    xs, low, up = difference_nodes(Envelope(0.5, 0.6, *p_fields), Envelope(0.5, 0.6, *n_fields))
    assert xs.shape == (19,) and low.shape == up.shape == shape + (19,)
    for i in np.ndindex(shape):
        _, one_low, one_up = difference_nodes(Envelope(0.5, 0.6, *(f[i] for f in p_fields)),
                                              Envelope(0.5, 0.6, *(f[i] for f in n_fields)))
        np.testing.assert_allclose(one_low, low[i], rtol=0, atol=1e-15)  # (sums of size ~1)
        np.testing.assert_allclose(one_up, up[i], rtol=0, atol=1e-15)


def test_kernel_products_against_explicit_matrices_and_the_cache():
    # products() exponentiates its rows on the fly unless the kernel is cached: both routes
    # give the same bits (runs do not depend on the cache's history), and equal the products
    # of the explicit matrices up to summation order
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    D = sq_distances(X)
    C = rng.random((120, 3))
    rows = np.sort(rng.choice(300, 120, replace=False))
    for x in (0.01, 0.7, 30.0):
        E = np.exp(-x * D)[:, rows]
        want = (E @ C, (D[:, rows] * E) @ C, (D[:, rows] ** 2 * E) @ C)
        fresh = KernelCache(D).products(x, C, rows)
        cache = KernelCache(D)
        cache.get(x)
        cached = cache.products(x, C, rows)
        for f, c, w in zip(fresh, cached, want):
            np.testing.assert_array_equal(f, c)
            np.testing.assert_allclose(f, w, rtol=1e-12, atol=1e-12 * np.abs(w).max())


@pytest.mark.parametrize("values", [(0.0, 1.0), (0.0, 0.5, 1.0), (0.0, 1.0, 2.0, 7.0)])
def test_lattice_products_equal_direct_products(values):
    # binary, dyadic and integer features: distances on a lattice, products through level
    # histograms; the same entries summed in another order
    rng = np.random.default_rng(len(values))
    X = rng.choice(values, size=(200, 3 if max(values) > 2 else 12))  # at most 198 levels
    D = sq_distances(X)
    lattice, direct = KernelCache(D), KernelCache(D)
    direct.D  # (held before the lattice is dropped: a lattice keeps D only as its levels)
    direct.lattice = None  # the blocked route over D
    assert lattice.lattice is not None
    levels, index = lattice.lattice
    np.testing.assert_array_equal(levels[index], D)
    C = rng.random((80, 3))
    rows = np.sort(rng.choice(200, 80, replace=False))
    for x in (0.01, 0.7, 30.0):
        for order in (0, 2):
            got, want = lattice.products(x, C, rows, order), direct.products(x, C, rows, order)
            assert len(got) == len(want) == order + 1
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14 * np.abs(w).max())
        # a coefficient vector (1-D) and all columns
        np.testing.assert_allclose(lattice.products(x, C[:, 0], rows)[1], direct.products(x, C[:, 0], rows)[1],
                                   rtol=1e-13)
        c = rng.random(200)
        np.testing.assert_allclose(lattice.products(x, c)[2], direct.products(x, c)[2], rtol=1e-13)
        # whole kernels gathered from the levels' exponentials: numpy's exp of the same products
        # (within one rounding of exp where it rounds a value differently by its position)
        np.testing.assert_array_max_ulp(lattice.get(x), np.exp(-x * D), maxulp=1)
        np.testing.assert_array_max_ulp(Kernels(D).get(x), np.exp(-x * D), maxulp=1)


def test_whole_lattice_kernels_gathered_by_blocks_of_rows():
    """More rows than one gathering block (and a caller's buffer): every entry is exp(-t D)."""
    from approxpath.compute.lattice import lattice_kernel

    rng = np.random.default_rng(7)
    levels = np.arange(12) * 0.25
    index = rng.integers(0, 12, (600, 600)).astype(np.uint8)
    D = levels[index]
    for t in (0.03, 2.0):
        np.testing.assert_array_max_ulp(lattice_kernel((levels, index), t), np.exp(-t * D), maxulp=1)
        buffer = np.full((600, 600), np.nan)
        assert lattice_kernel((levels, index), t, out=buffer) is buffer
        np.testing.assert_array_max_ulp(buffer, np.exp(-t * D), maxulp=1)


def test_lattice_distances_kept_as_levels_and_gathered_on_read():
    """On a lattice the distances are not held (the levels and the uint8 index hold them); the
    summary (finite, largest, sha256) is that of D, and D read back is D bit for bit."""
    from approxpath.kernel_families import distances_sha256

    rng = np.random.default_rng(3)
    D = sq_distances(rng.choice((0.0, 1.0), size=(60, 8)))
    k = KernelCache(D)
    assert k.lattice is not None and k._D is None and k.n == 60
    assert k.summary() == (True, float(D.max()), distances_sha256(D))
    assert k._D is None  # the summary was taken from D before it was dropped
    np.testing.assert_array_equal(k.D, D)
    assert k.D is k.D  # gathered once, then kept


def test_lattice_only_where_exact():
    rng = np.random.default_rng(0)
    assert KernelCache(sq_distances(rng.random((50, 3)))).lattice is None  # real-valued
    assert KernelCache(sq_distances(rng.integers(0, 3, (50, 3)) / 3.0)).lattice is None  # thirds: not exact
    assert KernelCache(sq_distances(rng.integers(0, 40, (5, 3)).astype(float))).lattice is None  # levels >= n
    assert KernelCache(sq_distances(np.ones((6, 2)))).lattice is None  # all distances zero
    levels, index = KernelCache(sq_distances(rng.integers(0, 2, (50, 4)) * 3.0)).lattice  # gcd 9, not 1
    assert levels[1] == 9.0 and index.dtype == np.uint8
    # products on a lattice never read a cached kernel: two are kept (an exact solve's), not
    # as many as memory allows (each new one costs page faults)
    assert KernelCache(sq_distances(rng.integers(0, 2, (50, 4)).astype(float))).size == 2
    assert KernelCache(sq_distances(rng.random((50, 3)))).size == 12
