"""Kernel products and the SVM's exact solves on a device through the array API, exercised with
numpy, array-api-strict and PyTorch's CPU standing in for a GPU: the same numbers as the CPU
provider within the stated allowances, paths that certify and verify with numpy alone."""

import importlib.util
import types

import numpy as np
import pytest

import approxpath
from approxpath import compute
from approxpath.compute.blocked import BlockedKernels
from approxpath.compute.device import Accelerator, DeviceKernels
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import Kernels
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError
from approxpath.numerics import fp_margin, kernel_entry_error

from device_helpers import STRICT_DEVICES, needs_array_api, needs_strict_devices, strict

# array-api-strict on a device of its own, where its devices work (numpy >= 2)
_STRICT = pytest.param(strict, marks=needs_strict_devices, id="array-api-strict")


def _torch_cpu():
    """PyTorch through array-api-compat on the CPU: the namespace a CUDA machine's PyTorch route
    uses, with its own device objects and dtype rules."""
    import array_api_compat.torch as xpt
    import torch

    return Accelerator(xpt, torch.device("cpu"), "cpu", "PyTorch on the CPU")


_TORCH = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs PyTorch")


def _numpy_device(name, **ops):
    """numpy through array-api-compat as a device named ``name``, with the operations ``ops``
    (``exp``, ``matmul``) in place of numpy's."""
    import array_api_compat.numpy as xnp

    names = {k: getattr(xnp, k) for k in dir(xnp) if not k.startswith("_")}
    return Accelerator(types.SimpleNamespace(**dict(names, **ops)), "cpu", "cpu", name)


def _perturbing(seed=0):
    """numpy through array-api-compat, with a device's documented rounding injected: every exp
    one ulp off (the CUDA maximum), in random directions, and matrix products summed in
    reversed order (another order than numpy's BLAS)."""
    rng = np.random.default_rng(seed)

    def exp(a):
        e = np.exp(a)
        return np.where(rng.random(e.shape) < 0.5, np.nextafter(e, 0.0), np.nextafter(e, np.inf))

    def matmul(A, B):
        out = np.zeros((A.shape[0], B.shape[1]))
        for j in range(A.shape[1] - 1, -1, -1):
            out += A[:, j:j + 1] * B[j]
        return out

    return _numpy_device("perturbed", exp=exp, matmul=matmul)


def _skewed(sign):
    """numpy through array-api-compat, every matrix product moved by half its rounding allowance
    (:math:`n u / 2` relative, n the terms summed: within any order's rounding) up (``sign``
    1) or down (-1): the most a bound can move by a device's sums, one way."""
    def matmul(A, B):
        return np.matmul(A, B) * (1.0 + sign * A.shape[-1] * 2.0**-54)

    return _numpy_device("skewed", matmul=matmul)


@pytest.fixture(scope="module")
def points():
    X = np.random.default_rng(2).standard_normal((150, 3))
    return X, sq_distances(X)


@needs_array_api
@pytest.mark.parametrize("make", [_STRICT, pytest.param(_torch_cpu, marks=_TORCH, id="pytorch")])
@pytest.mark.parametrize("where", ["copied", "computed-once", "computed-per-pass"])
def test_device_products_are_the_cpu_products_to_rounding(points, where, make, monkeypatch):
    """array-api-strict on a device of its own (nothing crosses without an explicit copy), and
    PyTorch where installed; D copied from the host, computed on the device and held, or
    computed at every pass (a device without room for it); rows subsets too, in blocks smaller
    than the data (forced)."""
    import dataclasses

    import approxpath.compute.device as device

    X, D = points
    monkeypatch.setattr(device, "_BLOCK_BYTES", 8 * 150 * 40)  # 40 rows per block
    base = Kernels(D) if where == "copied" else BlockedKernels(X)
    full = where == "computed-per-pass"
    accelerator = dataclasses.replace(make(), free_bytes=lambda: 0.0) if full else make()
    C = np.random.default_rng(3).standard_normal((150, 2))
    rows = np.arange(1, 150, 3)
    dk = DeviceKernels(base, accelerator, X)
    assert (dk._D is None) == full
    for r in (None, rows):
        c = C if r is None else C[r]
        for j, (A, B) in enumerate(zip(dk.products(0.6, c, r), Kernels(D).products(0.6, c, r))):
            np.testing.assert_allclose(A, B, rtol=1e-13, atol=1e-13 * np.abs(B).max())
    one = dk.products(0.6, C[:, 0], order=0)
    assert len(one) == 1 and one[0].shape == (150,)


@needs_array_api
@pytest.mark.parametrize("make", [_STRICT, pytest.param(_torch_cpu, marks=_TORCH, id="pytorch")])
@pytest.mark.parametrize("where", ["copied", "computed-once", "computed-per-pass"])
@pytest.mark.parametrize("family", ["gaussian", "laplacian"])
def test_kernel_rows_on_a_device_are_the_kernels_entries(where, make, family):
    """The entries a warm SMO reads on a device, at rows and columns in any order (and whole
    rows): :math:`\\exp(-xD)` at those entries, with D copied, computed there and held, or
    computed at every call."""
    import dataclasses

    from approxpath.compute.kernels import gaussian
    from approxpath.kernel_families import distances

    X = np.random.default_rng(4).standard_normal((90, 3))
    D = distances(X, family, None)
    full = where == "computed-per-pass"
    accelerator = dataclasses.replace(make(), free_bytes=lambda: 0.0) if full else make()
    base = Kernels(D) if where == "copied" else BlockedKernels(X, family)
    dk = DeviceKernels(base, accelerator, X, family)
    assert (dk._D is None) == full
    K = gaussian(D, 0.8)
    rows, cols = np.array([5, 0, 89, 5]), np.array([3, 88, 5, 0, 41])
    np.testing.assert_allclose(dk.kernel_rows(0.8, rows, cols), K[np.ix_(rows, cols)], rtol=1e-14, atol=0)
    np.testing.assert_allclose(dk.kernel_rows(0.8, rows[1:2]), K[rows[1:2]], rtol=1e-14, atol=0)
    assert dk.kernel_rows(0.8, rows, cols).shape == (4, 5)


@needs_array_api
@pytest.mark.parametrize("make", [_STRICT, pytest.param(lambda: _perturbing(2), id="perturbed"),
                                  pytest.param(_torch_cpu, marks=_TORCH, id="pytorch")])
def test_the_svms_exact_solves_run_on_the_device_without_a_host_kernel(tmp_path, make, monkeypatch):
    """Above the SMO's size (lowered here) a device path's exact solves are SMO on the device's
    kernel entries, the first from zero: no backend runs after it and the host never forms a
    kernel; the path certifies, and its certificate verifies with numpy alone."""
    from approxpath.compute.caches import KernelCache
    from approxpath.problems.kernel_svm import solves

    monkeypatch.setattr(solves, "SMO_MIN_N", 100)
    X, y = make_classification(n=160, d=3, seed=5)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.5)
    used, formed = [], []
    real_candidate, real_get = type(problem).candidate, KernelCache.get
    monkeypatch.setattr(type(problem), "candidate",
                        lambda self, name, t, warm=None: (used.append(name), real_candidate(self, name, t, warm))[1])
    monkeypatch.setattr(KernelCache, "get", lambda self, x: (formed.append(x), real_get(self, x))[1])
    path = approxpath.approximate_path(problem, eps=0.125, interval=(2**-3, 2**3), device=make())
    assert path.certified and path.exact_solves > 2
    assert set(used) == {"smo"} and len(used) == path.exact_solves and formed == []
    path.save(tmp_path / "device.npz")
    assert approxpath.verify(tmp_path / "device.npz", X, y).ok


@needs_array_api
def test_a_laplacian_svm_without_whole_kernels_solves_on_the_device(tmp_path, monkeypatch):
    """Without whole kernels on the host (the blocked mode, forced) the laplacian kernel has no
    libSVM solve (libSVM's own kernel is gaussian): at most SMO_MIN_N samples, where SMO does
    not run, the path stops at once with libSVM's one-line refusal.  Above, SMO reads the
    kernel's entries, on the device or computed from rows of the distances on the CPU, and the
    path certifies and verifies either way."""
    from approxpath.problems.kernel_svm import solves

    monkeypatch.setenv("APPROXPATH_KERNELS", "blocked")
    X, y = make_classification(n=160, d=3, seed=6)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.3, kernel="laplacian")
    with pytest.warns(UserWarning, match="APPROXPATH_KERNELS=blocked is set"):
        with pytest.raises(InputError, match="needs the n x n kernel for libSVM"):
            approxpath.approximate_path(problem, eps=0.125, interval=(2**-3, 2**2), device="cpu")
    monkeypatch.setattr(solves, "SMO_MIN_N", 100)
    for device in ("cpu", strict()) if STRICT_DEVICES else ("cpu",):
        problem = approxpath.get_problem("kernel_svm")(X, y, c=0.3, kernel="laplacian")
        with pytest.warns(UserWarning, match="APPROXPATH_KERNELS=blocked is set"):
            path = approxpath.approximate_path(problem, eps=0.125, interval=(2**-3, 2**2), device=device)
        assert problem.bound.kernels.mode == "blocked" and path.certified
        path.save(tmp_path / "laplacian.npz")
        assert approxpath.verify(tmp_path / "laplacian.npz", X, y).ok


@needs_array_api
def test_distances_are_held_where_they_fit_with_the_work_space_to_spare(points):
    """D is held on the device when it and the work space of a pass fit the free memory (an
    80 GB D on a 141 GB GPU), else computed at every pass."""
    import dataclasses

    import approxpath.compute.device as device

    X, D = points
    need = 8.0 * D.size + device._WORK_BYTES
    for free, held in ((need, True), (need - 1.0, False)):
        dk = DeviceKernels(Kernels(D), dataclasses.replace(strict(), free_bytes=lambda f=free: f), X)
        assert (dk._D is not None) == held
    assert 8.0 * 100_000**2 + device._WORK_BYTES < 141e9


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="no extended precision for the exact values")
def test_numpys_exp_is_within_the_ulp_the_kernel_entry_error_allows():
    """kernel_entry_error takes 4u relative, 2 ulp anywhere in a binade, for exp: measured
    against long double on 3 M arguments over the whole range a kernel entry's exponent takes
    (numpy 2: 0.69 ulp at most; numpy 1.24's SIMD exp: 1.49 ulp, above the 1 ulp allowed before)."""
    rng = np.random.default_rng(0)
    for low in (-745.0, -50.0, -1.0):
        z = rng.uniform(low, 0.0, 10**6)
        got = np.exp(z)
        normal = got >= np.finfo(float).tiny  # (a subnormal result has fewer digits: ulps say nothing there)
        exact = np.exp(z[normal].astype(np.longdouble))
        ulps = np.abs(got[normal].astype(np.longdouble) - exact) / np.spacing(got[normal]).astype(np.longdouble)
        assert float(ulps.max()) <= 2.0


@needs_array_api
def test_the_allowances_cover_a_devices_documented_rounding(points):
    """Products with every exp one ulp off and another summation order stay within what a
    bound allows for an n-term product (kernel_entry_error per unit of coefficient and
    fp_margin of the sum) of the exact products of the same D (in long double)."""
    X, D = points
    n, d = D.shape[0], X.shape[1]
    C = np.random.default_rng(6).standard_normal((n, 2))
    for seed in range(3):
        got = DeviceKernels(Kernels(D), _perturbing(seed), X).products(1.7, C, order=0)[0]
        E = np.exp(-np.longdouble(1.7) * D.astype(np.longdouble))
        for c in range(C.shape[1]):
            exact = (E * C[:, c].astype(np.longdouble)).sum(axis=1)
            magnitude = np.abs(C[:, c]).sum()
            allowance = kernel_entry_error(d) * magnitude + fp_margin(n, magnitude)
            assert float(np.max(np.abs(got[:, c] - exact))) <= allowance
            # the injection is felt: not the CPU's bits
            assert not np.array_equal(got[:, c], Kernels(D).products(1.7, C, order=0)[0][:, c])


@needs_array_api
@pytest.mark.parametrize("make", [_STRICT, pytest.param(lambda: _perturbing(1), id="perturbed"),
                                  pytest.param(_torch_cpu, marks=_TORCH, id="pytorch")])
def test_a_device_path_certifies_and_verifies_with_numpy_alone(tmp_path, make):
    accelerator = make()
    X, y = make_classification(n=120, d=3, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.1)
    path = approxpath.approximate_path(problem, eps=0.125, interval=(2**-3, 2**3), device=accelerator)
    assert path.certified
    path.save(tmp_path / "device.npz")
    assert approxpath.verify(tmp_path / "device.npz", X, y).ok


@needs_array_api
def test_device_choice(monkeypatch):
    import approxpath.compute.device as device

    X, y = make_classification(n=40, d=2, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=0.1)
    monkeypatch.setattr(device, "find_accelerator", lambda: None)
    with pytest.raises(InputError, match="device='gpu' needs"):
        with compute.products_on(problem, device="gpu"):
            pass
    with pytest.raises(InputError, match="device must be one of"):
        with compute.products_on(problem, device="tpu"):
            pass
    monkeypatch.setattr(device, "find_accelerator", strict)
    with compute.products_on(problem, device="auto") as kernels:  # below DEVICE_MIN_N: here
        assert kernels is None
    with compute.products_on(problem, device="gpu") as kernels:
        assert isinstance(kernels, DeviceKernels) and problem.bound.kernels is kernels
    assert not isinstance(problem.bound.kernels, DeviceKernels)
    monkeypatch.setattr(compute, "DEVICE_MIN_N", 40)
    with compute.products_on(problem, device="auto") as kernels:
        assert isinstance(kernels, DeviceKernels)
    with compute.products_on(problem, device="cpu") as kernels:
        assert kernels is None


@needs_array_api
def test_a_device_bound_is_stored_above_the_verifiers_recomputation():
    """A bound from a device's products (another exp, another order of sums) and the verifier's
    from numpy's differ by rounding: the device's adds the margins that cover the difference, so
    its stored value is never below what the verifier recomputes -- also where the stored pad is
    far below the rounding (level 0; on an H200 the pad relative to eps was exceeded)."""
    from approxpath.numerics import stored_bound

    X, y = make_classification(n=300, d=3, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=10.0)
    verifier = approxpath.get_bound("kernel_svm")(X, y, c=10.0)
    shortfalls = []
    for t in (0.05, 0.4, 3.0, 20.0):
        pair = problem.solve(t)
        for seed in range(3):
            with compute.products_on(problem, device=_perturbing(seed)):
                for lo, hi in ((t, t), (t, 1.05 * t)):
                    g = problem.bound.gap(*pair, lo, hi)
                    shortfalls.append(verifier.gap(*pair, lo, hi) - stored_bound(g))
    assert max(shortfalls) <= 0.0


@needs_array_api
@pytest.mark.parametrize("sweep", ["bandwidth", "c"])
def test_a_device_bound_of_a_moving_pair_is_stored_above_the_verifiers_recomputation(sweep):
    """As for fixed pairs, for the pairs a path certifies with by default: a dual moving between
    two exact solves, on bandwidth pieces and on C pieces (an H200's n = 16,000 certificate, all
    of its pieces moving, failed the CPU's verification at 1 of 100 while only fixed pairs'
    bounds added the margins).  Narrow pieces next to an exact solve have small bounds, so the
    stored pad is far below the sums' rounding there; the skewed device moves every sum by half
    its allowance, one way and the other."""
    from approxpath import moving
    from approxpath.numerics import stored_bound

    X, y = make_classification(n=300, d=3, seed=3)
    options = dict(c=10.0) if sweep == "bandwidth" else dict(c=1.0, parameter="c", bandwidth=0.4)
    problem = approxpath.get_problem("kernel_svm")(X, y, **options)
    verifier = approxpath.get_bound("kernel_svm")(X, y, **options)
    ends = [(0.05, 0.08), (0.4, 0.6), (3.0, 4.0)] if sweep == "bandwidth" else [(0.5, 1.0), (4.0, 6.0)]
    # (weights quadratic in the bandwidth, linear in C: a line through the middle weight)
    degree, weights = (2, ((0.2, 0.5, 0.9), (0.0, 0.0, 0.001))) if sweep == "bandwidth" else (1, ((0.2, 0.5, 0.9),
                                                                                              (0.0, 0.0005, 0.001)))
    shortfalls = []
    for a, b in ends:
        pa, pb = problem.solve(a), problem.solve(b)
        mid = 0.5 * (a + b)
        for thetas in weights:
            pair = moving.interpolate(pa, pb, thetas, (a, mid, b), degree)
            for lo, hi in ((a, b), (a, a * (1.0 + 1e-6))):
                restored = problem.restore(*pair, lo, hi)
                assert verifier.check(*restored, lo, hi) == []
                for device in (_perturbing(0), _perturbing(1), _skewed(1), _skewed(-1)):
                    searched = approxpath.get_problem("kernel_svm")(X, y, **options)  # (no sums cached)
                    with compute.products_on(searched, device=device):
                        g = searched.bound.gap(*restored, lo, hi)
                    shortfalls.append(verifier.gap(*restored, lo, hi) - stored_bound(g))
    assert max(shortfalls) <= 0.0


@needs_array_api
@pytest.mark.parametrize("name", ["klasso", "robust_l1", "kernel_ridge"])
@pytest.mark.parametrize("sweep", ["bandwidth", "lam"])
def test_a_regression_bound_from_device_products_is_stored_above_the_verifiers(name, sweep):
    """As for the SVM, for the regression problems, whose bounds over a bandwidth piece read the
    kernel products too (their envelopes, :func:`approxpath.numerics.margins_of`): with one
    margin, klasso's stored bound over [0.5, 0.8] from a skewed device's products was 1.7e-16
    below the verifier's recomputation (level 0: the pad far below the sums' rounding)."""
    from approxpath.numerics import stored_bound

    X, y = make_sinc(n=200, seed=3)
    options = dict(lam=0.01) if sweep == "bandwidth" else dict(lam=0.05, parameter="lam", bandwidth=1.0)
    ends = [(0.5, 0.8), (3.0, 4.0)] if sweep == "bandwidth" else [(0.01, 0.02), (0.1, 0.2)]
    problem = approxpath.get_problem(name)(X, y, **options)
    verifier = approxpath.get_bound(name)(X, y, **options)
    shortfalls = []
    for a, b in ends:
        pair = problem.solve(a)
        for lo, hi in ((a, a), (a, a * (1.0 + 1e-6)), (a, b)):
            restored = problem.restore(*pair, lo, hi)
            assert verifier.check(*restored, lo, hi) == []
            for device in (_perturbing(0), _perturbing(1), _skewed(1), _skewed(-1)):
                searched = approxpath.get_problem(name)(X, y, **options)
                with compute.products_on(searched, device=device):
                    g = searched.bound.gap(*restored, lo, hi)
                shortfalls.append(verifier.gap(*restored, lo, hi) - stored_bound(g))
    assert max(shortfalls) <= 0.0


@needs_strict_devices
@pytest.mark.parametrize("name", ["klasso", "kernel_svm"])
def test_a_run_uses_the_provider_it_is_given_whatever_ran_before(name, monkeypatch):
    """The regression bounds kept the provider of their first run in their memo of products, and
    the SVM its class sums: after a device run, a ``device="cpu"`` run of the same problem read
    the device's products (klasso: with the device's margins; the SVM: the device's sums with one
    margin).  Now a CPU run after a device run is the fresh CPU run, bit for bit, and a device
    run after a CPU run reads the device."""
    calls = []
    products = DeviceKernels.products
    monkeypatch.setattr(DeviceKernels, "products", lambda self, *a, **k: (calls.append(1), products(self, *a, **k))[1])
    data = make_classification(n=60, seed=0) if name == "kernel_svm" else make_sinc(n=60, seed=0)
    options = dict(c=1.0) if name == "kernel_svm" else dict(lam=0.1)
    run = dict(eps=0.05, relative=True, interval=(0.5, 4.0))
    fresh = approxpath.approximate_path(approxpath.get_problem(name)(*data, **options), device="cpu", **run)
    problem = approxpath.get_problem(name)(*data, **options)
    for device in (strict(), "cpu", strict(), "cpu"):
        calls.clear()
        path = approxpath.approximate_path(problem, device=device, **run)
        assert path.certified and (len(calls) > 0) == (device != "cpu")
        if device == "cpu":
            assert [p.gap_bound for p in path.pieces] == [p.gap_bound for p in fresh.pieces]


def test_the_margins_follow_device_products_through_their_wrappers():
    """A bound reading a device's products through a memo's or a stack's closure took one margin
    (the closures hid the provider); every wrapper now says what it wraps."""
    from approxpath.compute.caches import ProductMemo
    from approxpath.numerics import ELSEWHERE_MARGINS, margins_of
    from approxpath.selection.predictions import stacked_products

    class Provider:
        def __init__(self, elsewhere):
            self.rounded_elsewhere = elsewhere

        def products(self, x, C, cols=None):
            return (C,)

    device, cpu = Provider(True).products, Provider(False).products
    memo = ProductMemo()
    assert [margins_of(p) for p in (device, memo.wrap(device, ()), ProductMemo(device), stacked_products(cpu, device),
                                    stacked_products(memo.wrap(device, ()), cpu))] == [ELSEWHERE_MARGINS] * 5
    assert [margins_of(p) for p in (cpu, memo.wrap(cpu, ()), ProductMemo(cpu), stacked_products(cpu, cpu), None,
                                    np.exp)] == [1] * 6
