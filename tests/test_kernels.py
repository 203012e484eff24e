"""Kernel columns, memoized products and products summed in chunks on several threads, against
the kernel formed explicitly."""

import numpy as np
import pytest

import approxpath.kernels as kernels
from approxpath.blocked_kernels import BlockedKernels
from approxpath.data import make_sinc
from approxpath.distances import sq_distances
from approxpath.kernel_caches import KernelCache, ProductMemo
from approxpath.kernels import Kernels, gaussian, threads


@pytest.fixture(scope="module")
def data():
    X, _ = make_sinc(n=200, noise=0.1, seed=3)
    return X, sq_distances(X)


def test_columns_are_the_kernels_columns_bit_for_bit(data):
    """``columns(x, idx)`` exponentiates only the rows idx of D (or reads a stored kernel): the
    entries of the whole kernel, bit for bit, in every mode."""
    X, D = data
    idx = np.array([3, 17, 18, 150])
    cache = KernelCache(D)
    cache.get(0.7)  # stored: read from it
    for k in (Kernels(D), cache, BlockedKernels(X)):
        for x in (0.7, 2.5):
            cols = k.columns(x, idx)
            assert cols.shape == (D.shape[0], idx.size)
            np.testing.assert_array_equal(cols, gaussian(D, x)[:, idx])
            np.testing.assert_allclose(cols, np.exp(-x * D[:, idx]), rtol=1e-15)


def test_product_memo_returns_the_products_and_tells_contents_apart(data):
    """A memoized product is the product (the same arrays); a coefficient or a row that differs
    in one entry, another point or another order is computed anew."""
    _, D = data
    k = Kernels(D)
    calls = []

    def products(x, C, rows=None, order=2):
        calls.append(x)
        return k.products(x, C, rows, order)

    memo = ProductMemo(products, size=3)
    rng = np.random.default_rng(0)
    C = rng.random((D.shape[0], 4))
    first = memo(0.5, C)
    for A, B in zip(first, k.products(0.5, C)):
        np.testing.assert_array_equal(A, B)
    assert memo(0.5, C.copy()) is first and len(calls) == 1
    C2 = C.copy()
    C2[7, 1] = np.nextafter(C2[7, 1], 2.0)
    memo(0.5, C2)
    memo(0.5, C, order=1)
    memo(np.nextafter(0.5, 1.0), C)
    assert len(calls) == 4
    rows = np.arange(0, D.shape[0], 2)
    out = memo(0.5, C[rows], rows)
    assert memo(0.5, C[rows], rows + 0) is out and memo(0.5, C[rows], rows[::-1].copy()) is not out
    assert len(calls) == 6
    memo(0.5, C)  # evicted by now (size 3): computed again
    assert len(calls) == 7


def test_chunked_products_do_not_depend_on_the_threads(data, monkeypatch):
    """Products summed in chunks of rows on several threads: the same numbers on one thread and
    on two, bit for bit, and the products of the kernel formed explicitly to rounding."""
    _, D = data
    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 48)  # five chunks of the 200 rows
    monkeypatch.setattr(kernels, "_THREADED_MIN", 1)
    k = Kernels(D)
    C = np.random.default_rng(1).standard_normal((D.shape[0], 3))
    with threads(1):
        one = k.products(1.3, C)
    with threads(2):
        two = k.products(1.3, C)
    E = np.exp(-1.3 * D)
    for j, (A, B) in enumerate(zip(one, two)):
        np.testing.assert_array_equal(A, B)
        np.testing.assert_allclose(A, (D**j * E) @ C, rtol=1e-12, atol=1e-12)
