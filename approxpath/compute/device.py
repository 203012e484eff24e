"""Kernel products on an accelerator (a GPU through CuPy or PyTorch), written against the array API.

:class:`DeviceKernels` answers :meth:`~approxpath.compute.kernels.Kernels.products`
(:math:`E_x C`, :math:`(D\\circ E_x)C`, :math:`(D^2\\circ E_x)C` with :math:`E_x = \\exp(-xD)`)
with the entrywise work and the matrix products on the device: blocks of rows of :math:`D`
(held on the device, or computed there from the data) are exponentiated and multiplied in
place, and only the (n, p) results come back; :meth:`DeviceKernels.kernel_rows` gives the
entries a warm SMO reads (the SVM's exact solves, without a whole kernel on the host).
Everything else (whole kernels for the other solvers, hashes, lattice histograms) is the CPU
provider's.  The code uses the array API standard only (through ``array-api-compat``), so the
same lines run on numpy and ``array-api-strict`` in the tests.

Rounding.  The products are those of the CPU provider up to rounding:

* ``exp``: the CUDA C Programming Guide states a maximum error of 1 ulp for double precision
  ``exp`` (its table of double-precision standard library functions; CuPy's and PyTorch's
  float64 ``exp`` call it), measured from the correctly rounded result: at most 1.5 ulp from the
  exact value (:math:`u = 2^{-53}`; an ulp of a result in :math:`[2^e, 2^{e+1})` is
  :math:`2^{e-52}`), within the 2 ulp, :math:`4u` relative, of the ``exp`` term of
  :func:`~approxpath.numerics.kernel_entry_error`.  The vendor's figures come from extensive,
  not exhaustive, tests: the verifier's recomputation on the CPU is what a certificate rests on.
  The product :math:`-x D_{ij}` is one IEEE multiplication, correctly rounded on the device as
  on the CPU (no addition for a fused multiply-add to contract).
* matrix products: cuBLAS sums in its own order (blocked, split over threads) and may use fused
  multiply-adds.  A sum of m products computed in any order, with or without FMA, is within
  :math:`\\gamma_m \\sum_i |a_i b_i|` of the exact sum (Higham, *Accuracy and Stability of
  Numerical Algorithms*, 2nd ed., section 3.1: the bound depends on the number of terms, not on
  their order; an FMA only drops a rounding), the :func:`~approxpath.numerics.fp_margin` the
  bounds take for an n-term product.  Adding the blocks' partial sums is part of the same sum.
* distances computed on the device (the blocked mode): the same differences, squares and sums
  over the features as on the CPU, each within the :func:`~approxpath.kernel_families.entry_terms`
  roundings of exact.

A certificate is recomputed by the verifier from the data with numpy alone: a GPU-made one
verifies on a machine without a GPU.  Both computations are within the allowance m of the
exact bound, so they may differ by 2m: a bound computed from device products adds
:data:`~approxpath.numerics.ELSEWHERE_MARGINS` = 3 margins instead of one
(:attr:`DeviceKernels.rounded_elsewhere`, :func:`~approxpath.numerics.margins_of`;
:data:`~approxpath.numerics.STORED_PAD`, made for last bits of sums in another order, was
exceeded on an H200: 3 of 100 pieces at n = 16,000).
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Accelerator", "DeviceKernels", "find_accelerator"]

# Bytes of one block of rows on the device (each of its two buffers): large enough that a block's
# products fill the device, small against its memory (n = 16,000: 2,097 rows; n = 100,000: 335)
_BLOCK_BYTES = 1 << 28
# Device memory kept free beside held distances: a pass holds at most four blocks at once (a
# block of D taken by index, its exponential, the power of D times it, a product's operand:
# 1 GiB) and the array libraries' pools and CUDA context a few hundred MB; 16 blocks leave 4x
# that.  A share of the free memory instead (half, before) left n = 100,000 (80 GB) to be
# computed anew at every pass on a 141 GB GPU.
_WORK_BYTES = 16 * _BLOCK_BYTES


@dataclass(frozen=True)
class Accelerator:
    """Where device arrays live and how they come back.

    Attributes
    ----------
    xp : module
        An array API namespace (``array_api_compat``'s wrapper of CuPy or PyTorch; numpy or
        ``array_api_strict`` in the tests).
    device : object
        The device arrays are placed on (``xp.asarray(..., device=device)``).
    host : object
        The device numpy reads (``"cpu"``; ``array_api_strict``: its CPU device).
    name : str
        What the device is, for messages.
    free_bytes : callable or None
        The device's free memory in bytes, where the library says.
    """

    xp: Any
    device: Any
    host: Any = "cpu"
    name: str = "device"
    free_bytes: Callable = None

    def put(self, a):
        """A numpy array ``a`` on the device (float64 stays float64)."""
        return self.xp.asarray(np.ascontiguousarray(a), device=self.device)

    def get(self, a):
        """A device array as a numpy array."""
        from array_api_compat import to_device

        return np.asarray(to_device(a, self.host))


@functools.lru_cache(maxsize=1)
def find_accelerator():
    """The first GPU found by presence, checked once: CuPy with a CUDA device, else PyTorch
    with CUDA; None without either (nothing is imported unless its package is installed)."""
    if importlib.util.find_spec("array_api_compat") is None:
        return None
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy
            import array_api_compat.cupy as xp

            if cupy.cuda.runtime.getDeviceCount() > 0:
                return Accelerator(xp, cupy.cuda.Device(0), "cpu", "CUDA (CuPy)",
                                   lambda: float(cupy.cuda.runtime.memGetInfo()[0]))
        except Exception:  # noqa: BLE001 - a broken CUDA install: no device, the CPU runs
            pass
    if importlib.util.find_spec("torch") is not None:
        try:
            import torch
            import array_api_compat.torch as xp

            if torch.cuda.is_available():
                return Accelerator(xp, torch.device("cuda"), "cpu", "CUDA (PyTorch)",
                                   lambda: float(torch.cuda.mem_get_info()[0]))
        except Exception:  # noqa: BLE001
            pass
    return None


class DeviceKernels:
    """A kernel provider whose products run on ``accelerator``; everything else is ``base``'s.

    Parameters
    ----------
    base : approxpath.compute.kernels.Kernels
        The CPU provider (dense, or without whole kernels): its distances, if it stores them,
        are copied to the device where they fit its free memory with :data:`_WORK_BYTES` to
        spare; else the device computes :math:`D` from ``X``, ``family`` and ``weights``, once
        if it holds it (n = 100,000: 80 GB on a 141 GB GPU), else block by block at every pass
        (n = 100,000 on an 80 GB GPU).
    accelerator : Accelerator
    X : ndarray of shape (n, d), optional
    family : str
    weights : sequence of float, optional
    """

    #: Its products are not rounded as the verifier's numpy rounds them (another ``exp``, another
    #: order of sums): a search-side bound computed from them adds the margins by which a
    #: verifier's recomputation may exceed it (:func:`approxpath.numerics.margins_of`).
    rounded_elsewhere = True

    def __init__(self, base, accelerator, X=None, family="gaussian", weights=None):
        self.base, self.accelerator = base, accelerator
        self.family = family
        xp, n = accelerator.xp, base.n
        self._xp, self._rows = xp, max(1, _BLOCK_BYTES // (8 * n))
        self._D = self._X = self._w = None
        stored = None if base.mode == "blocked" else base.D  # (blocked: never stored)
        free = accelerator.free_bytes() if accelerator.free_bytes is not None else None
        room = free is None or 8.0 * n * n + _WORK_BYTES <= free
        if stored is not None and room:
            self._D = accelerator.put(stored)
            return
        self._X = accelerator.put(X)  # with family="precomputed": D itself, read by rows
        self._w = None if weights is None else accelerator.put(np.asarray(weights, dtype=float))
        if room and family != "precomputed":  # computed here once, held for every pass
            D = xp.empty((n, n), dtype=self._X.dtype, device=accelerator.device)
            for a in range(0, n, self._rows):
                rows = slice(a, min(a + self._rows, n))
                D[rows, :] = self._block(rows)
            self._D = D

    def __getattr__(self, name):  # kernels, columns, summary, hold, mode, lattice, n: the CPU provider's
        return getattr(self.base, name)

    def _block(self, idx, cols=None):
        """Rows ``idx`` (a slice, or a device array of indices) of :math:`D` on the device, at the
        columns ``cols`` (a device array of indices; all if None)."""
        xp = self._xp
        if self._D is not None:
            if cols is not None:  # the entries themselves, by flat index (not whole rows first)
                flat = xp.reshape(idx, (-1, 1)) * self.base.n + xp.reshape(cols, (1, -1))
                return xp.reshape(xp.take(xp.reshape(self._D, (-1,)), xp.reshape(flat, (-1,)), axis=0), flat.shape)
            return self._D[idx, :] if isinstance(idx, slice) else xp.take(self._D, idx, axis=0)
        X = self._X
        Xb = X[idx, :] if isinstance(idx, slice) else xp.take(X, idx, axis=0)
        if self.family == "precomputed":
            return Xb if cols is None else xp.take(Xb, cols, axis=1)
        Xc = X if cols is None else xp.take(X, cols, axis=0)
        out = xp.zeros((Xb.shape[0], Xc.shape[0]), dtype=X.dtype, device=self.accelerator.device)
        for j in range(X.shape[1]):  # the features in order, as pdist/cdist sum them
            t = Xb[:, j:j + 1] - Xc[:, j]
            if self.family == "laplacian":
                t = xp.abs(t)
            elif self._w is None:
                t = t * t
            else:  # (w (a - b)) (a - b): pdist's order of the operations
                t = t * (self._w[j] * t)
            out = out + t
        return out

    def kernel_rows(self, x, rows, cols=None):
        """:math:`\\exp(-xD)` at the rows ``rows`` and the columns ``cols`` (all if None),
        computed on the device (the same operations as :meth:`products`' entries): a numpy
        array (len(rows), len(cols)).  What the SVM's SMO reads instead of a whole kernel."""
        acc_ = self.accelerator
        cols = None if cols is None else acc_.put(np.asarray(cols, dtype=np.int64))
        Db = self._block(acc_.put(np.asarray(rows, dtype=np.int64)), cols)
        return acc_.get(self._xp.exp(Db * (-float(x))))

    def product_chain(self):
        """The most roundings a term of :meth:`products` undergoes: its product and D, D^2 factors
        (3), a block's matrix product (its rows, in any order), the blocks' sums added in order;
        or the CPU provider's, if longer (a verifier recomputes with it: a bound's allowance
        covers both)."""
        n = self.base.n
        return max(min(n + 4, self._rows + 2 + -(-n // self._rows)), self.base.product_chain())

    def products(self, x, C, rows=None, order=2):
        """As :meth:`approxpath.compute.kernels.Kernels.products` (the same quantities, rounded within
        the same allowances: see the module), computed on the device; lattice data (histograms)
        stay on the CPU provider."""
        if self.base.lattice is not None:
            return self.base.products(x, C, rows, order)
        xp, acc_ = self._xp, self.accelerator
        C = np.asarray(C, dtype=float)
        C2 = C[:, None] if C.ndim == 1 else C
        k, n, p = C2.shape[0], self.base.n, C2.shape[1]
        Cd = acc_.put(C2)
        Rd = None if rows is None else acc_.put(np.asarray(rows, dtype=np.int64))
        acc = [xp.zeros((p, n), dtype=Cd.dtype, device=acc_.device) for _ in range(order + 1)]
        for a in range(0, k, self._rows):
            b = min(a + self._rows, k)
            Db = self._block(slice(a, b) if rows is None else Rd[a:b])
            E = xp.exp(Db * (-float(x)))
            Ct = xp.matrix_transpose(Cd[a:b, :])
            acc[0] = acc[0] + xp.matmul(Ct, E)
            T = E
            for j in range(1, order + 1):
                T = T * Db
                acc[j] = acc[j] + xp.matmul(Ct, T)
        return tuple(acc_.get(m).T.reshape((n,) + C.shape[1:]) for m in acc)
