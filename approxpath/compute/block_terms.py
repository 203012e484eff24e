"""The terms one block of rows of :math:`D` adds to a kernel or a kernel product, on one thread.

:func:`exponentiate` is the one way every kernel entry :math:`e^{-tD_{ij}}` is computed (stored
kernels and the blocks of a product alike: the same bits), and
:func:`block_products` the terms :math:`C_b E_b`, :math:`C_b (D_b\\circ E_b)`, :math:`C_b (D_b^2\\circ
E_b)` of one block that :meth:`~approxpath.compute.kernels.Kernels.products` and the Dask workers
(:mod:`approxpath.compute.distributed`) add in a fixed order.  Neither splits its work nor reads
any setting: how blocks are cut, threaded and summed is :mod:`approxpath.compute.kernels`'
(which re-exports :func:`block_products`).  Numpy only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exponentiate", "block_products"]


def exponentiate(D, minus_t, out):
    """``out`` :math:`= \\exp(-tD)`, in the two steps every kernel entry is computed by (stored
    kernels and products' blocks alike: the same bits); no per-call work beyond them (a product
    calls it per block, on threads that wait for each other's GIL). A product ``-tD`` that overflows
    to -inf gives exp = 0, which is the true value's rounding: no warning."""
    with np.errstate(over="ignore"):
        return np.exp(np.multiply(D, minus_t, out=out), out=out)


def block_products(Cb, Db, E, order, out=None, T=None):
    """The terms one block of rows adds to :meth:`~approxpath.compute.kernels.Kernels.products`:
    :math:`[C_b E_b,\\ C_b (D_b \\circ E_b),\\ C_b (D_b^2 \\circ E_b)]`, the first ``order + 1``.

    Parameters
    ----------
    Cb : ndarray of shape (p, m)
        The coefficients of the block's rows, transposed.
    Db, E : ndarray of shape (m, n)
        The block's rows of :math:`D` and of :math:`E_x = \\exp(-xD)`.
    order : {0, 1, 2}
    out : ndarray of shape (order + 1, p, n), optional
        Where the terms go (the same numbers: the products are written, not accumulated).
    T : ndarray of shape (m, n), optional
        Scratch for :math:`D_b^j \\circ E_b` (a caller that reuses its buffers allocates nothing).

    Returns
    -------
    ndarray of shape (order + 1, p, n)
    """
    out = np.empty((order + 1, Cb.shape[0], E.shape[1])) if out is None else out
    np.matmul(Cb, E, out=out[0])
    if order:
        T = np.multiply(Db, E, out=T)
        for j in range(1, order + 1):
            if j > 1:
                T *= Db
            np.matmul(Cb, T, out=out[j])
    return out
