"""Exact solves of the SVM dual by libSVM (SMO) on the precomputed kernel: 20-100x faster than
an interior point on these dense QPs; tol 1e-7 leaves certified gaps of ~1e-8 relative.

Two bindings of the same C++ solver, chosen per solve:

* the LIBSVM authors' own (``libsvm-official``, the ``libsvm`` extra): a
  ctypes binding that imports in ~6 ms (without scipy, see :func:`_official`), so a command-line
  run does not pay for scikit-learn's imports (~0.5 s);
* scikit-learn's ``SVC(kernel="precomputed")`` (the ``sklearn`` extra).

Both run the same algorithm with the same settings (tolerance, 500 MB row cache, shrinking on,
10^7 iterations at most, one thread) on the training points in the same order, and return
bit-identical ``alpha`` and ``b`` (tests/test_libsvm_backends.py checks it).

Where the n x n kernel does not fit (the blocked mode, :mod:`approxpath.compute.blocked`),
scikit-learn's libSVM computes its own RBF kernel :math:`\\exp(-\\gamma\\lVert x - x'\\rVert^2)`,
:math:`\\gamma = t`, and caches its columns (``cache_size`` from the memory budget,
:func:`approxpath.memory.libsvm_cache_bytes`).  Its entries are rounded differently from
:math:`\\exp(-tD)` (it expands the squared norm); that moves the candidate only, never a
certificate, which is recomputed from :math:`D`.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import warnings

import numpy as np

from approxpath.compute.parallelism import blas_threads
from approxpath.solvers import current_settings

from .points import SVMDual, SVMPrimal

__all__ = ["libsvm_candidate", "libsvm_rbf_candidate", "official_available", "LIBSVM_TOL", "LIBSVM_TIGHT_TOL"]

# libSVM stopping tolerance (KKT violation) and kernel cache for exact solves.
LIBSVM_TOL = 1e-7
_LIBSVM_CACHE_MB = 500
# The tighter round (approxpath.solvers.SolveSettings): a KKT tolerance 100x smaller.
LIBSVM_TIGHT_TOL = 1e-9
# libSVM cannot be interrupted, so a time limit does not reach it; this iteration cap bounds a
# solve instead (a4a, n = 4781, C = 0.1: 1.6e3 to 1.8e4 SMO iterations for t in [2^-5, 8]).
# The official binding has it built in (max(10^7, 100 n): the same cap up to n = 10^5).
_LIBSVM_MAX_ITER = 10_000_000
# The official binding reads the kernel from libSVM's nodes (16 bytes per entry: an int index
# padded to 8 bytes and a double), a copy that scikit-learn's dense binding does not make, built
# anew for every solve.  Per solve against scikit-learn's (medians, one process, interleaved, a
# busy 2-core machine): 0.8x at n = 351, 1.8x at 768 (+17 ms), 1.25-1.4x at 1605 (+50 ms),
# 1.6x at 3185 (+0.5 s); the imports it saves, ~0.5 s, are paid once.  Used up to n = 1000,
# where a path of ~15 solves still gains; the copy is then <= 16 MB.
_OFFICIAL_MAX_N = 1000
# ... and up to this many samples while scikit-learn is not imported yet: above 1000 samples the
# warm SMO makes a path's solves and libSVM runs twice (the 4 a-sets: 2 calls a path), where the
# copy costs +0.02-0.12 s a solve up to a3a (n = 3185; +0.35 s at a4a) against scikit-learn's
# imports, 0.5-0.8 s on an idle machine (1.9 s of an a1a command line on a busy one)
_OFFICIAL_COLD_MAX_N = 3200


# Neither binding installed (the SVM's exact solves on 100-1000 points then took 10-30x as long on Clarabel)
_MISSING = ("pip install 'approxpath[libsvm]' or 'approxpath[sklearn]'; without it the SVM's exact solves run on "
            "Clarabel, 10-30x slower")


def official_available():
    """True when the LIBSVM authors' binding (``libsvm-official``, the ``libsvm`` extra) is installed."""
    return importlib.util.find_spec("libsvm") is not None


def libsvm_candidate(K, y, C):
    """``(SVMPrimal, SVMDual)`` from libSVM on the kernel ``K`` (n, n), labels ``y`` in {-1, +1},
    box ``C`` (not yet exactly feasible: the problem restores it): ``w = y * alpha`` and libSVM's
    bias (``xi`` None), ``alpha`` (n,).

    The official binding when installed and n <= 1000, or n <= 3200 while scikit-learn is not
    imported (or it is not installed); scikit-learn's otherwise; the two give the same bits.
    The tolerance is :data:`LIBSVM_TIGHT_TOL` in a tight round
    (:func:`approxpath.solvers.current_settings`), else :data:`LIBSVM_TOL`.

    Raises
    ------
    ModuleNotFoundError
        Neither binding is installed.
    """
    tol = LIBSVM_TIGHT_TOL if current_settings().tight else LIBSVM_TOL
    cold = y.size <= _OFFICIAL_COLD_MAX_N and "sklearn.svm" not in sys.modules
    no_sklearn = importlib.util.find_spec("sklearn") is None
    if no_sklearn and not official_available():
        raise ModuleNotFoundError(_MISSING, name="sklearn")
    official = official_available() and (y.size <= _OFFICIAL_MAX_N or cold or no_sklearn)
    if official:
        alpha, b = _official_fit(K, y, C, tol)
    else:
        alpha, b = _sklearn_fit(K, y, C, tol)
    return SVMPrimal(w=y * alpha, b=b), SVMDual(alpha=alpha)


def libsvm_rbf_candidate(X, y, C, gamma, stored=False):
    """``(SVMPrimal, SVMDual)`` from scikit-learn's libSVM on its own kernel
    :math:`\\exp(-\\gamma\\lVert x_i - x_j\\rVert^2)` (:math:`\\gamma` the bandwidth t) of the rows of ``X``
    (n, d), labels ``y`` in {-1, +1}, box ``C``, with the kernel cache
    :func:`~approxpath.memory.libsvm_cache_bytes` allows (in MiB, libSVM's unit; at least 1;
    ``stored``: the distances are held besides, less memory for the cache): ``w = y * alpha`` and
    libSVM's bias (``xi`` None), ``alpha`` (n,), not yet exactly feasible.

    Raises
    ------
    ModuleNotFoundError
        scikit-learn is not installed.
    """
    from approxpath.memory import libsvm_cache_bytes

    tol = LIBSVM_TIGHT_TOL if current_settings().tight else LIBSVM_TOL
    cache_mb = max(1, int(libsvm_cache_bytes(*X.shape, stored) // 2**20))
    alpha, b = _sklearn_fit(X, y, C, tol, kernel="rbf", gamma=float(gamma), cache_size=cache_mb)
    return SVMPrimal(w=y * alpha, b=b), SVMDual(alpha=alpha)


def _sklearn_fit(data, y, C, tol, kernel="precomputed", cache_size=_LIBSVM_CACHE_MB, **options):
    """``(alpha (n,), b)`` from scikit-learn's binding on ``data`` (the kernel, or the points
    for libSVM's own ``kernel``)."""
    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import SVC
    except ModuleNotFoundError as exc:  # (libSVM on its own kernel: scikit-learn's binding alone)
        raise ModuleNotFoundError("pip install 'approxpath[sklearn]'", name="sklearn") from exc

    model = SVC(C=C, kernel=kernel, tol=tol, cache_size=cache_size, max_iter=_LIBSVM_MAX_ITER, **options)
    with warnings.catch_warnings():  # stopped at the cap: the certified gap judges the point
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(data, y)
    alpha = np.zeros(y.size)
    alpha[model.support_] = np.abs(model.dual_coef_[0])
    # decision f = sum_j dual_coef_j K(x_j, .) + intercept_, positive for classes_[1] = +1
    return alpha, float(model.intercept_[0])


def _official_fit(K, y, C, tol):
    """``(alpha (n,), b)`` from the official binding, on the same problem as scikit-learn's.

    scikit-learn hands libSVM the labels encoded 0 (for -1) and 1 (for +1), and its libSVM
    orders classes by value, so class -1 is libSVM's first (its internal +1) and its points come
    first.  The official libSVM orders classes by first occurrence, except that a -1/+1 pair is
    put +1 first; labels ``-y`` make the original class -1 first in every case, so both solve
    the same problem with the points in the same order (and hence the same SMO iterations).
    """
    svm_node, svm_parameter, svm_problem, svm_train = _official()
    n = y.size
    problem = _precomputed_problem(svm_problem, svm_node, K, -y)
    param = svm_parameter(f"-s 0 -t 4 -c {float(C)!r} -e {float(tol)!r} -m {_LIBSVM_CACHE_MB} -q")
    param.print_func = _silent_print(type(param.print_func)) or param.print_func
    # The official build is OpenMP-parallel over the entries of a kernel row: on a busy machine
    # its spinning threads made an ionosphere path 10x slower, and one SMO step's row (n entries)
    # is too little work to share.  One thread, as scikit-learn's binding runs.
    with blas_threads(1, openmp=True):
        model = svm_train(problem, param)
    first = model.get_labels()[0]  # libSVM's internal +1, in the labels -y it was given
    sv = np.ctypeslib.as_array(model.sv_indices, (model.l,)) - 1  # 1-based training indices
    coef = np.ctypeslib.as_array(model.sv_coef[0], (model.l,))
    alpha = np.zeros(n)
    alpha[sv] = np.abs(coef)
    # decision f = sum_j coef_j K(x_j, .) - rho, positive for `first` (of -y): negate for y.
    return alpha, float(model.rho[0]) if first == 1 else -float(model.rho[0])


@functools.cache  # one C function pointer per process (libSVM keeps it)
def _silent_print(prototype):
    """A print function for libSVM that is C code: libc's ``strlen`` (reads the message, writes
    nothing) as a ``prototype`` (``void (*)(const char *)``), where the C library is reachable by
    name, else None (the caller keeps the binding's own, a Python callback).

    libSVM reports progress through its print function during the solve; the binding's quiet
    one is a Python function called back from C, and a SIGTERM landing there raised inside the
    callback, which Python can only print ("Exception ignored ... Traceback") before the solve
    went on; C code has no Python frame to raise in."""
    import ctypes

    try:
        return ctypes.cast(ctypes.CDLL(None).strlen, prototype)  # the process's own symbols (POSIX)
    except (OSError, TypeError, AttributeError):  # pragma: no cover - no C library by name (Windows)
        return None


class _Later:
    """A module imported at its first attribute read (truthy, as a module is)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


def _official():
    """``(svm_node, svm_parameter, svm_problem, svm_train)`` of the official binding, imported
    without scipy where scipy is not loaded yet.

    The binding imports scipy at its own import (~0.1 s, a quarter of a path's command line on
    heart) only for its converters of numpy and sparse inputs, which this module does not use
    (it builds the problem itself).  Its names ``scipy`` and ``sparse`` then refer to modules
    imported at their first use, so the binding behaves as with scipy for any other caller."""
    if "libsvm.svmutil" not in sys.modules and "scipy" not in sys.modules:
        sys.modules["scipy"] = None  # the binding's ``import scipy`` fails, as without scipy
        try:
            import libsvm.svm
            import libsvm.svmutil
        finally:
            del sys.modules["scipy"]
        for module in (libsvm.svm, libsvm.svmutil):
            module.scipy, module.sparse = _Later("scipy"), _Later("scipy.sparse")
    from libsvm.svm import svm_node, svm_parameter, svm_problem
    from libsvm.svmutil import svm_train

    return svm_node, svm_parameter, svm_problem, svm_train


def _precomputed_problem(svm_problem, svm_node, K, labels):
    """libSVM's ``svm_problem`` for the precomputed kernel ``K`` (n, n), built in numpy.

    Row i is the nodes ``0:i+1 1:K_i1 ... n:K_in -1:`` (the serial number, the kernel row by
    position, explicit zeros kept, the terminator), all rows in one array of ``svm_node``
    (16 bytes per entry).  The binding's own converters go through a CSR matrix and copy row by
    row: 3x slower at n = 1605, which would cost more than the imports it saves.  The fields
    are those of ``struct svm_problem`` (l, y, x) and what ``svmutil.svm_train`` reads (n, the
    number of columns, and x_space, which keeps the nodes alive).
    """
    from ctypes import POINTER, c_double, c_uint64, cast

    n = labels.size
    nodes = np.empty((n, n + 2), dtype=svm_node)
    index, value = nodes["index"], nodes["value"]
    index[:, : n + 1] = np.arange(n + 1, dtype=np.int32)
    index[:, n + 1] = -1
    value[:, 0] = np.arange(1, n + 1)
    value[:, 1 : n + 1] = K
    value[:, n + 1] = 0.0
    problem = svm_problem.__new__(svm_problem)
    problem.l, problem.n, problem.x_space = n, n + 1, nodes
    problem.y = (c_double * n)()
    np.ctypeslib.as_array(problem.y, (n,))[:] = labels
    problem.x = (POINTER(svm_node) * n)()
    rows = np.ctypeslib.as_array(cast(problem.x, POINTER(c_uint64)), (n,))
    rows[:] = nodes.ctypes.data + np.arange(n, dtype=np.uint64) * np.uint64(nodes.strides[0])
    return problem
