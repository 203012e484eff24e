"""Exact solves of the SVM dual by scikit-learn's libSVM (SMO) on the precomputed kernel: 20-100x
faster than an interior point on these dense QPs; tol 1e-7 leaves certified gaps of ~1e-8
relative.  (The ``sklearn`` extra.)"""

from __future__ import annotations

import warnings

import numpy as np

from approxpath.solvers import current_settings

from .bound import SVMDual, SVMPrimal

__all__ = ["libsvm_candidate"]

# libSVM stopping tolerance (KKT violation) and kernel cache for exact solves.
_LIBSVM_TOL = 1e-7
_LIBSVM_CACHE_MB = 500
# The tighter round (approxpath.solvers.SolveSettings): a KKT tolerance 100x smaller.
_LIBSVM_TIGHT_TOL = 1e-9
# libSVM cannot be interrupted, so a time limit does not reach it; this iteration cap bounds a
# solve instead (a4a, n = 4781, C = 0.1: 1.6e3 to 1.8e4 SMO iterations for t in [2^-5, 8]).
_LIBSVM_MAX_ITER = 10_000_000


def libsvm_candidate(K, y, C):
    """``(SVMPrimal, SVMDual)`` from libSVM on the kernel ``K`` (n, n), labels ``y`` in {-1, +1},
    box ``C`` (not yet exactly feasible: the problem restores it)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    tol = _LIBSVM_TIGHT_TOL if current_settings().tight else _LIBSVM_TOL
    model = SVC(C=C, kernel="precomputed", tol=tol, cache_size=_LIBSVM_CACHE_MB, max_iter=_LIBSVM_MAX_ITER)
    with warnings.catch_warnings():  # stopped at the cap: the certified gap judges the point
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(K, y)
    alpha = np.zeros(y.size)
    alpha[model.support_] = np.abs(model.dual_coef_[0])
    # decision f = sum_j dual_coef_j K(x_j, .) + intercept_, positive for classes_[1] = +1
    return SVMPrimal(w=y * alpha, b=float(model.intercept_[0])), SVMDual(alpha=alpha)
