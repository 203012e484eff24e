"""Kernels :math:`K_t = \\exp(-tD)` and their products: the plug-in API's name for
:mod:`approxpath.compute.kernels` and :mod:`approxpath.compute.caches` (where they live since
0.5.0; plug-ins written for 0.4 import ``KernelCache`` and ``ProductMemo`` from here)."""

from .compute.caches import CACHE_BYTES, KernelCache, ProductMemo
from .compute.distances import cross_sq_distances, pairwise, sq_distances  # here before 0.4.1
from .compute.kernels import Kernels, block_products, gaussian, kernel_rows, product_chunks, product_step, threads

__all__ = ["gaussian", "kernel_rows", "Kernels", "KernelCache", "ProductMemo", "CACHE_BYTES", "threads",
           "product_step", "product_chunks", "block_products", "sq_distances", "cross_sq_distances", "pairwise"]
