"""One BLAS thread for small dense algebra.

Active-set solvers and exact path followers factor and multiply small or skinny matrices
(n x |A| with |A| a few dozen) thousands of times.  OpenBLAS spreads each call over its
threads, and on a 2-core machine that was measured 10-30x slower than one thread (Householder
QR of 1000 x 12: 4.6 ms against 0.1-0.25 ms; the kLASSO's warm solves at n = 1000: 0.35 s
against 0.017 s) and not faster on an idle one.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

__all__ = ["one_blas_thread", "with_one_blas_thread"]


@contextmanager
def one_blas_thread():
    """Run the ``with`` block with the BLAS libraries loaded in the process on one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def with_one_blas_thread(func):
    """Decorator: ``func`` runs inside :func:`one_blas_thread`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return func(*args, **kwargs)

    return wrapper
