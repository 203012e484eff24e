"""Kernel columns, memoized products and products summed in chunks on several threads, against
the kernel formed explicitly."""

import numpy as np
import pytest

import approxpath.compute.kernels as kernels
from approxpath.compute.blocked import BlockedKernels
from approxpath.data import make_sinc
from approxpath.compute.distances import sq_distances
from approxpath.compute.caches import KernelCache, ProductMemo
from approxpath.compute.kernels import Kernels, gaussian, threads


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


def test_product_memo_wraps_owned_products_within_its_bytes(data):
    """Wrapped products: answered for the same owners only, the asked rows of the full products,
    and no more bytes kept than ``max_bytes`` (but the newest answer)."""
    _, D = data
    k = Kernels(D)
    calls = []

    def products(x, C, cols=None):
        calls.append(x)
        return k.products(x, C, cols)

    C = np.random.default_rng(1).random((D.shape[0], 2))
    one = sum(a.nbytes for a in k.products(0.5, C))
    memo = ProductMemo(max_bytes=2 * one)
    a, b = object(), object()
    rows = np.array([3, 1])
    first = memo.wrap(products, (a,))(0.5, C)
    assert memo.wrap(products, (a,))(0.5, C.copy()) is first and len(calls) == 1
    for A, B in zip(memo.wrap(products, (a,), rows)(0.5, C), first):
        np.testing.assert_array_equal(A, B[rows])
    memo.wrap(products, (b,))(0.5, C)  # another owner: computed anew
    assert len(calls) == 2 and len(memo) == 2 and memo.bytes == 2 * one
    memo.wrap(products, (a,))(0.25, C)  # over the bytes: the oldest goes
    assert len(memo) == 2 and memo.bytes == 2 * one
    memo.wrap(products, (a,))(0.5, C)
    assert len(calls) == 4
    small = ProductMemo(max_bytes=1)
    for x in (0.5, 0.25):
        small.wrap(products, (a,))(x, C)
    assert len(small) == 1 and small.bytes == one


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


def test_one_chunks_blocks_on_several_threads_add_up_in_the_order_of_one_pass(data, monkeypatch):
    """Fewer chunks than threads (here one chunk of the 200 rows, or of 90 of them, in blocks of
    20): the blocks' terms are computed on the threads, a few blocks' worth stored at a time, and added
    in the blocks' order: bit for bit the sum of :func:`block_products` block after block
    (written out here), on 1, 2 and 3 threads, exponentiated or read from a stored kernel."""
    _, D = data
    n = D.shape[0]
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_BYTES", 8 * n * 20)  # blocks of 20 rows
    step = kernels.product_step(n)
    monkeypatch.setattr(kernels, "_THREADED_MIN", 1)
    monkeypatch.setattr(kernels, "_WINDOW_BYTES", 8 * 3 * 2 * n * 5)  # five blocks' terms: several windows
    tasks, parallel_map = [], kernels.parallel_map
    monkeypatch.setattr(kernels, "parallel_map",
                        lambda fn, items, threaded=True: tasks.append(len(items)) or parallel_map(fn, items, threaded))
    rng = np.random.default_rng(7)
    stored = KernelCache(D)
    stored.get(0.8)
    for rows in (None, np.sort(rng.choice(n, 90, replace=False))):
        C = rng.standard_normal((n if rows is None else rows.size, 2))
        R = np.arange(n) if rows is None else rows
        acc = np.zeros((3, 2, n))
        for a in range(0, R.size, step):
            Db = D[R[a:a + step]]
            acc += kernels.block_products(C[a:a + step].T, Db, np.exp(-0.8 * Db), 2)
        for source in (Kernels(D), stored):
            for count in (1, 2, 3):
                tasks.clear()
                with threads(count):
                    got = source.products(0.8, C, rows)
                assert (max(tasks) > 1) == (count > 1)  # the blocks went to the threads
                for j, A in enumerate(got):
                    np.testing.assert_array_equal(A, acc[j].T)


def test_blocks_of_fewer_rows_where_sixteen_would_not_fit(data, monkeypatch):
    """Where 16 rows of D would take more than _PRODUCT_BLOCK_MAX (n > 12288; forced here at
    n = 200): blocks of 8 to 15 rows, the products those of the explicit kernel to rounding."""
    _, D = data
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_BYTES", 8 * 200 * 4)  # 4 rows: below 16
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_MAX", 8 * 200 * 11)
    assert kernels.product_step(200) == 11
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_MAX", 8 * 200 * 3)
    assert kernels.product_step(200) == 8
    C = np.random.default_rng(3).standard_normal((D.shape[0], 2))
    E = np.exp(-0.9 * D)
    for j, A in enumerate(Kernels(D).products(0.9, C)):
        np.testing.assert_allclose(A, (D**j * E) @ C, rtol=1e-12, atol=1e-12)


def test_products_read_from_a_cached_kernel_equal_the_computed_ones(data, monkeypatch):
    """All rows and a subset, with the kernel cached and without: the same numbers bit for bit."""
    _, D = data
    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 48)
    C = np.random.default_rng(2).standard_normal((D.shape[0], 4))
    rows = np.arange(3, D.shape[0], 3)
    cache = KernelCache(D, size=2)
    cache.get(0.8)
    for r in (None, rows):
        c = C if r is None else C[r]
        for A, B in zip(cache.products(0.8, c, r), Kernels(D).products(0.8, c, r)):
            np.testing.assert_array_equal(A, B)


def test_a_full_kernel_cache_overwrites_the_kernel_it_evicts(data):
    """The cache holds no more than ``size`` kernels: the evicted one's memory holds the new
    kernel, unless a caller still holds it (then it is left alone)."""
    _, D = data
    cache = KernelCache(D, size=2)
    first = id(cache.get(0.1))
    cache.get(0.2)
    third = cache.get(0.3)
    assert id(third) == first and cache._cached(0.1) is None
    np.testing.assert_array_equal(third, np.exp(-0.3 * D))
    held = cache.get(0.2)
    kept = cache.get(0.3)  # 0.2 is now the least recent: it goes next
    fourth = cache.get(0.4)  # evicts 0.2, which ``held`` still references
    assert fourth is not held and id(fourth) != id(kept)
    np.testing.assert_array_equal(held, np.exp(-0.2 * D))
    np.testing.assert_array_equal(fourth, np.exp(-0.4 * D))


def test_processes_sharing_the_budget_keep_fewer_kernels_and_a_cache_shrinks_to_its_share(data, monkeypatch):
    """kept_kernels against its arithmetic (the budget over the processes, between 2 and 12), and
    a cache made before the budget is shared holds no more than its share after its next kernel."""
    import approxpath.compute.caches as caches

    _, D = data
    n = D.shape[0]
    monkeypatch.setattr(caches, "CACHE_BYTES", 6 * 8 * n * n)  # six kernels of these data
    before = caches.share_budget(1)
    try:
        assert [caches.kept_kernels(n, p) for p in (1, 2, 3, 4, 100)] == [6, 3, 2, 2, 2]
        assert caches.kept_kernels(1) == 12
        cache = KernelCache(D)
        for x in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
            cache.get(x)
        assert len(cache._store) == 6
        assert caches.share_budget(2) == 1 and caches.kept_kernels(n) == 3
        E = cache.get(0.7)
        assert len(cache._store) == 3 and [cache._cached(x) is not None for x in (0.5, 0.6, 0.7)] == [True] * 3
        np.testing.assert_array_equal(E, np.exp(-0.7 * D))
        assert KernelCache(D, size=5).size == 5  # a size given is kept
    finally:
        caches.share_budget(before)


def test_pools_owned_by_several_threads_share_the_budget_and_each_takes_back_its_own(data, monkeypatch):
    """Two threads own a pool each (2 and 3 workers) and end in the order they began: while both
    live the budget is shared by 6 processes, then by 4, then by this one alone again (a count set
    and restored by each left the second's behind)."""
    import threading

    import approxpath.compute.caches as caches

    _, D = data
    n = D.shape[0]
    monkeypatch.setattr(caches, "CACHE_BYTES", 12 * 8 * n * n)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def first():
        with caches.sharing(3):
            first_in.set()
            second_in.wait()
            seen.append(caches.kept_kernels(n))
        first_out.set()

    def second():
        first_in.wait()
        with caches.sharing(4):
            second_in.set()
            first_out.wait()
            seen.append(caches.kept_kernels(n))

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [2, 3] and caches.kept_kernels(n) == 12  # 12 / 6, 12 / 4, 12 / 1


def _kept_in_this_process(n):
    import approxpath.compute.caches as caches

    return caches.kept_kernels(n)


def test_a_local_pool_shares_the_budget_with_its_owner_while_it_lives():
    """pool() sets the share in its workers and in this process, and gives this one its own back."""
    import approxpath.compute.caches as caches
    from approxpath.driver import parallel

    n = 4000  # 128 MB a kernel: 9 in the whole budget, 3 in a third of it
    assert caches.kept_kernels(n) == 9
    with parallel.pool(2, None) as p:
        assert caches.kept_kernels(n) == 3
        assert p.submit(_kept_in_this_process, n).result() == 3
    assert caches.kept_kernels(n) == 9
    with parallel.pool(2, None, sharers=2) as p:  # map_paths': its own process only waits
        assert p.submit(_kept_in_this_process, n).result() == 4


def test_the_plug_in_api_still_finds_everything_under_approxpath_kernels():
    """Kernels and their caches live in approxpath.compute since 0.5.0; code written for 0.4
    (plug-ins imported KernelCache and ProductMemo from approxpath.kernels) still finds them."""
    import approxpath.kernels as old
    from approxpath.compute import caches, distances

    assert old.KernelCache is caches.KernelCache and old.ProductMemo is caches.ProductMemo
    assert old.Kernels is kernels.Kernels and old.gaussian is kernels.gaussian and old.threads is kernels.threads
    assert old.sq_distances is distances.sq_distances
    assert all(hasattr(old, name) for name in old.__all__)


def test_lattice_histograms_kept_within_their_bytes_and_equal_fresh_ones(monkeypatch):
    """A selection's round asks for many coefficient columns: the cache keeps as many
    histograms as fit in its byte budget (here shrunk to 20 of them), each the same as a fresh
    Kernels' products, and builds none again while they fit."""
    import approxpath.compute.caches as caches

    rng = np.random.default_rng(5)
    Xb = (rng.random((60, 7)) > 0.5).astype(float)  # binary features: distances on a lattice
    D = sq_distances(Xb)
    plain = Kernels(D)
    levels = plain.lattice[0].size
    monkeypatch.setattr(caches, "_HISTOGRAM_BYTES", 20 * 8 * 60 * levels)
    cache = KernelCache(D)
    built = []
    real = Kernels._histogram_of
    monkeypatch.setattr(Kernels, "_histogram_of", lambda self, full, step: built.append(1) or real(self, full, step))
    columns = rng.random((60, 20))
    first = [cache.products(0.7, columns[:, k], order=1) for k in range(20)]
    assert len(built) == 20
    again = [cache.products(1.3, columns[:, k], order=1) for k in range(20)]  # another x: the same histograms
    assert len(built) == 20  # none built again
    for k in range(20):
        for A, B in zip(again[k], plain.products(1.3, columns[:, k], order=1)):
            np.testing.assert_array_equal(A, B)
        np.testing.assert_allclose(first[k][0], np.exp(-0.7 * D) @ columns[:, k], rtol=1e-12)
    cache.products(0.7, rng.random(60))  # a 21st: the oldest goes
    assert len(cache._histograms) == 20


def test_matvec_is_the_product_and_the_same_bits_on_any_thread_count(monkeypatch):
    """Blocks of rows (three of 256 and a last of 88 here), each a BLAS product: the product to
    rounding, and the same bits on one thread as on two."""
    from approxpath.compute.kernels import matvec

    rng = np.random.default_rng(7)
    M, v = rng.standard_normal((856, 700)), rng.standard_normal(700)
    with threads(1):
        one = matvec(M, v)
    with threads(2):
        two = matvec(M, v)
    np.testing.assert_array_equal(one, two)
    exact = np.array([np.sum(row * v, dtype=np.longdouble) for row in M], dtype=float)
    bound = 700 * np.finfo(float).eps * (np.abs(M) @ np.abs(v))  # n u sum |m_ij v_j|: a dot product's error
    assert np.all(np.abs(one - exact) <= bound) and one.shape == (856,)


@pytest.mark.parametrize("where", [(10, 600), (300, 2), (599, 598)])
def test_kernels_refuse_distances_asymmetric_in_one_entry_of_any_block(where):
    """The symmetry check compares blocks of rows with the same columns on the kernel threads:
    one entry changed in any block (the first, a middle one, the last) is found, and a NaN."""
    X, _ = make_sinc(n=601, noise=0.1, seed=1)
    D = sq_distances(X)
    Kernels(D)  # symmetric: accepted
    for value in (D[where] * (1 + 1e-15) + 1e-300, np.nan):
        bad = D.copy()
        bad[where] = value
        with threads(2), pytest.raises(ValueError, match="symmetric distances"):
            Kernels(bad)


def test_summary_by_blocks_is_the_whole_matrix_s():
    """Whether every entry is finite, the largest entry and the sha256, computed by blocks of
    rows on two threads: those of the whole matrix, with an infinite pair in the last block."""
    from approxpath.kernel_families import distances_sha256

    X, _ = make_sinc(n=601, noise=0.1, seed=2)
    D = sq_distances(X)
    with threads(2):
        assert Kernels(D).summary() == (True, float(D.max()), distances_sha256(D))
        D[590, 3] = D[3, 590] = np.inf
        assert Kernels(D).summary() == (False, np.inf, distances_sha256(D))


@pytest.mark.parametrize("shape", [(1,), (256,), (257,), (1000,), (5000, 3), (3, 5000), (100, 4), (4, 100)])
def test_block_sums_are_within_their_chains_rounding_of_the_exact_sums(shape):
    """``block_sum`` against ``math.fsum`` (the correctly rounded sum): within ``sum_chain(n)``
    roundings of the absolute sum, over either axis, whatever the padding of the last block."""
    import math

    from approxpath.numerics import block_sum, fp_margin, sum_chain

    rng = np.random.default_rng(len(shape) + shape[0])
    a = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3.0, 3.0, shape)  # (magnitudes mixed)
    axis = 0 if shape[0] >= shape[-1] else 1
    got = np.atleast_1d(block_sum(a, axis=axis))
    columns = a.T if axis == 0 else a
    columns = columns.reshape(-1, a.shape[axis])
    for value, terms in zip(got, columns):
        n = terms.size
        assert abs(value - math.fsum(terms)) <= fp_margin(sum_chain(n), np.abs(terms).sum())
    assert sum_chain(100000) < 700 and sum_chain(200) == 200


def test_a_products_terms_are_within_its_chains_rounding(data, monkeypatch):
    """``product_chain`` bounds the roundings of every term of ``products`` (here blocks of 20
    rows, chunks of 64: several blocks per chunk and several chunks): each product within
    ``fp_margin(product_chain)`` of its terms' absolute sum, the terms summed exactly
    (``math.fsum``) from the same kernel entries; the chain is below the n + 4 of any order at
    n = 100,000, and a device's is at least its CPU provider's."""
    import math

    from approxpath.compute.device import DeviceKernels
    from approxpath.numerics import fp_margin

    _, D = data
    n = D.shape[0]
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_BYTES", 8 * n * 20)
    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 64)
    k = Kernels(D)
    C = np.random.default_rng(3).standard_normal(n)
    x = 0.7
    E = gaussian(D, x)
    got = k.products(x, C)
    chain = k.product_chain()
    assert chain < n
    for j, M in enumerate(got):
        T = D**j * E if j else E  # (the entries as products computes them: D once, twice)
        if j == 2:
            T = (D * E) * D
        for i in range(0, n, 7):
            terms = T[i] * C
            assert abs(M[i] - math.fsum(terms)) <= fp_margin(chain, np.abs(terms).sum())
    monkeypatch.undo()
    big = type("Big", (), {"n": 100000, "lattice": None})()
    assert Kernels.product_chain(big) < 1000
    dk = DeviceKernels.__new__(DeviceKernels)
    dk.base, dk._rows = k, 3
    assert dk.product_chain() >= k.product_chain()
