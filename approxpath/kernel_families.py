"""Kernel families :math:`K_t = \\exp(-tD)`: which matrix :math:`D` a kernel problem uses.

Every bound of the package rests only on :math:`D \\ge 0` entrywise (each entry
:math:`e^{-tD_{ij}}` is completely monotone in :math:`t`), so any such :math:`D` gives
certified paths.  The families:

``gaussian``
    :math:`D_{ij} = \\lVert x_i - x_j\\rVert_2^2` (the default; what 0.3.2 certificates mean).
``laplacian``
    :math:`D_{ij} = \\lVert x_i - x_j\\rVert_1`.
``ard``
    :math:`D_{ij} = \\sum_k w_k (x_{ik} - x_{jk})^2` with fixed weights :math:`w_k \\ge 0`
    (automatic relevance determination with the relevances given).
``precomputed``
    :math:`D` given: ``X`` *is* the (n, n) matrix :math:`D` (symmetric, nonnegative, zero
    diagonal), and predictions take the (m, n) cross distances :math:`D_{new}` where the other
    families take the new points (the convention of scikit-learn's ``kernel="precomputed"``).

A problem whose convexity needs :math:`K_t \\succeq 0` (the SVM, kernel ridge) refuses a
precomputed :math:`D` that is not conditionally negative definite (:func:`check_cnd`): by
Schoenberg's theorem :math:`\\exp(-tD) \\succeq 0` for every :math:`t > 0` iff :math:`D` (symmetric,
zero diagonal) is conditionally negative definite, i.e. :math:`JDJ \\preceq 0` with
:math:`J = I - \\mathbf 1\\mathbf 1^\\top/n`.  Squared Euclidean, weighted squared Euclidean and
:math:`\\ell_1` distances are, so the computed families need no check.

Numpy and scipy only: the verifier imports this module.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib

import numpy as np

from .errors import InputError
from .numerics import UNIT_ROUNDOFF
from .compute.distances import cross_sq_distances, pairwise, sq_distances

__all__ = ["FAMILIES", "DESCRIPTIONS", "distances", "cross_distances", "entry_terms", "check_weights",
           "check_precomputed", "cnd_excess", "check_cnd", "submatrices_of_checked", "distances_sha256",
           "loewner_factor"]

#: The kernel families, the default first.
FAMILIES = ("gaussian", "laplacian", "ard", "precomputed")

#: What a certificate's ``kernel`` field says for each family (the gaussian text is the one every
#: certificate carried before there were families).
DESCRIPTIONS = {
    "gaussian": "gaussian: k_t(x, x') = exp(-t * ||x - x'||^2)",
    "laplacian": "laplacian: k_t(x, x') = exp(-t * ||x - x'||_1)",
    "ard": "ard: k_t(x, x') = exp(-t * sum_k w_k (x_k - x'_k)^2), w = feature_weights",
    "precomputed": "precomputed: K_t = exp(-t * D), D the data matrix X (n x n)",
}

# A precomputed D counts as conditionally negative definite when the largest eigenvalue of JDJ is
# at most _CND_UNITS * (n + 4) units of roundoff times ||D||_F: the eigensolver's own error (a
# modest multiple of n u ||JDJ||_2 <= n u ||D||_F) and forming JDJ (4 roundings an entry).  The
# certificates take D as given, so a D whose JDJ has a positive eigenvalue in exact arithmetic
# makes exp(-tD) indefinite and the SVM's and kernel ridge's objectives unbounded below: only the
# eigensolver's error is allowed.  Distances computed from differences (scipy's cdist, pdist;
# scikit-learn's pairwise_distances) measured 0.17 n u ||D||_F at most (n = 20 - 2000, d = 1 - 50);
# 4 leaves a margin of 20.  (It was 2**-36 = 1.3e5 u, which let a D perturbed by 1e-12 pass and
# certify a path of a kernel ridge with no minimum; distances as ||x||^2 + ||z||^2 - 2x.z of points
# away from the origin reach 250 n u and are refused now: they are not CND.)
_CND_UNITS = 4
# True while a checked D's principal submatrices are built (submatrices_of_checked).
_SUBMATRIX = contextvars.ContextVar("approxpath_cnd_submatrix", default=False)


def check_weights(weights, d):
    """``weights`` as a float array of shape (d,), or :class:`InputError` unless they are ``d``
    finite nonnegative numbers, not all zero.

    Parameters
    ----------
    weights : array_like
        The feature weights :math:`w_k` of ``kernel="ard"``, ``d`` numbers (in any shape: flattened).
    d : int
        The number of features (columns of ``X``).

    Returns
    -------
    ndarray of shape (d,)
    """
    w = np.asarray(weights, dtype=float).reshape(-1)
    if w.shape != (d,):
        raise InputError(f"feature_weights must have one weight per feature ({d}); got {w.size}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)) or not np.any(w > 0):
        raise InputError("feature_weights must be finite, nonnegative and not all 0; "
                         f"got min {w.min():g}, max {w.max():g}")
    return w


def check_precomputed(D, what="D"):
    """``D`` (n, n) checked: finite, nonnegative, exactly symmetric with an exactly zero diagonal;
    :class:`InputError` naming the first violation and the fix.

    Parameters
    ----------
    D : array_like of shape (n, n)
        A precomputed distance matrix (the ``X`` of ``kernel="precomputed"``).
    what : str, default "D"
        How the messages name ``D``.

    Returns
    -------
    ndarray of shape (n, n)
        ``D`` as a float64 array (``D`` itself where it is one).
    """
    D = np.asarray(D, dtype=float)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise InputError(f"kernel='precomputed' takes the distance matrix D (n x n) as X; got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        raise InputError(f"{what} contains NaN or inf: a precomputed D must be finite")
    if D.size and D.min() < 0:
        i, j = np.unravel_index(int(np.argmin(D)), D.shape)
        raise InputError(f"{what} has a negative entry D[{i}, {j}] = {D[i, j]:g}: exp(-tD) needs D >= 0")
    if not np.array_equal(D, D.T):
        raise InputError(f"{what} is not exactly symmetric (max |D - D'| = {np.abs(D - D.T).max():g}): "
                         "pass (D + D.T) / 2")
    if np.any(np.diag(D) != 0):
        raise InputError(f"{what} has a nonzero diagonal (max {np.abs(np.diag(D)).max():g}): "
                         "a distance from a point to itself is 0")
    return D


def distances(X, family="gaussian", weights=None):
    """The matrix :math:`D` (n, n) of the family on the rows of ``X`` (n, d), exactly symmetric
    with a zero diagonal.

    ``gaussian``: :func:`~approxpath.compute.distances.sq_distances`; ``laplacian`` and ``ard``:
    :func:`~approxpath.compute.distances.pairwise` (``cityblock``; ``sqeuclidean`` with weights ``w``);
    ``precomputed``: ``X`` itself, checked (:func:`check_precomputed`).

    Parameters
    ----------
    X : array_like of shape (n, d)
        The samples; with ``family="precomputed"`` the matrix :math:`D` (n, n) itself.
    family : str, default "gaussian"
        One of :data:`FAMILIES`; :class:`InputError` for another.
    weights : array_like of shape (d,), optional
        The feature weights :math:`w_k` (:func:`check_weights`); read only by ``ard``.

    Returns
    -------
    ndarray of shape (n, n)
    """
    if family == "gaussian":
        return sq_distances(X)
    if family == "precomputed":
        return check_precomputed(X)
    X = np.asarray(X, dtype=float)
    if X.shape[0] < 2:
        return np.zeros((X.shape[0], X.shape[0]))
    if family == "laplacian":
        return pairwise(X, "cityblock")
    if family == "ard":
        return pairwise(X, weights=check_weights(weights, X.shape[1]))
    raise InputError(f"unknown kernel family {family!r} (choose one of {', '.join(FAMILIES)})")


def cross_distances(X_new, X, family="gaussian", weights=None):
    """:math:`D` between the rows of ``X_new`` (m, d) and of ``X`` (n, d): shape (m, n).  For a
    precomputed kernel ``X_new`` is that matrix (the distances of m new points to the n
    training points), checked: finite, nonnegative, n columns.

    Parameters
    ----------
    X_new : array_like of shape (m, d)
        The new points (shape (m,): one feature); with ``family="precomputed"`` the distances
        :math:`D_{new}` (m, n).
    X : array_like of shape (n, d)
        The training points; with ``family="precomputed"`` the (n, n) :math:`D` (only its
        number of rows is read).
    family, weights
        As for :func:`distances`.

    Returns
    -------
    ndarray of shape (m, n)
        :math:`D_{new}`: the family's distance from each new point to each training point.
    """
    X_new = np.asarray(X_new, dtype=float)
    if family == "precomputed":
        n = np.asarray(X).shape[0]
        if X_new.ndim != 2 or X_new.shape[1] != n:
            raise InputError(f"kernel='precomputed' predicts from the distances D_new (m x {n}) of the new points to "
                             f"the {n} training points; got shape {X_new.shape}")
        if not (np.all(np.isfinite(X_new)) and np.all(X_new >= 0)):
            raise InputError("D_new must be finite and nonnegative")
        return X_new
    if X_new.ndim == 1:
        X_new = X_new[:, None]
    if family == "gaussian":
        return cross_sq_distances(X_new, X)
    from scipy.spatial.distance import cdist  # (the entries of pairwise(); see there)

    if family == "laplacian":
        return cdist(X_new, np.asarray(X, dtype=float), "cityblock")
    if family == "ard":
        X = np.asarray(X, dtype=float)
        return cdist(X_new, X, "sqeuclidean", w=check_weights(weights, X.shape[1]))
    raise InputError(f"unknown kernel family {family!r} (choose one of {', '.join(FAMILIES)})")


def entry_terms(family, d):
    """The argument of :func:`~approxpath.numerics.kernel_entry_error` for the family on ``d``
    features: a computed distance has relative error at most ``(entry_terms + 2) u``.

    ``gaussian``: ``d`` (a difference, a square and a sum of d terms: :math:`(d + 2)u`).
    ``laplacian``: ``d`` (one rounding per absolute difference and a sum of d nonnegative
    terms, in any order: :math:`d\\,u`, below the :math:`(d + 2)u` allowed).  ``ard``: ``d + 1``
    (scipy computes each term as ``w * diff * diff``: four roundings, then the sum:
    :math:`(d + 3)u`).  ``precomputed``: 0 (``D`` is exact data; the allowance then covers
    :math:`2u` that nothing uses).

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    d : int
        The number of features (columns of ``X``).

    Returns
    -------
    int
    """
    return {"gaussian": d, "laplacian": d, "ard": d + 1, "precomputed": 0}[family]


def loewner_factor(family, X, weights, ratio):
    """A number c with :math:`K_t \\preceq c\\,K_{t'}` whenever :math:`t \\le t' \\le` ``ratio`` t
    (``ratio`` ≥ 1), for the family on the rows of ``X`` (n, d); ``inf`` where none is known.

    By Bochner's theorem :math:`a^\\top K_t a = \\int |\\hat a(\\omega)|^2 p_t(\\omega)\\,d\\omega` with the
    kernel's spectral density :math:`p_t \\ge 0`, so a bound :math:`p_t \\le c\\,p_{t'}` everywhere gives
    it.  ``gaussian`` on d features: :math:`p_t \\propto t^{-d/2}e^{-\\lVert\\omega\\rVert^2/(4t)}`, so
    :math:`p_t/p_{t'} \\le (t'/t)^{d/2}`: c = ``ratio`` :sup:`d/2`; ``ard`` the same with d the features
    of positive weight; ``laplacian``, a product over the features of :math:`t/(\\pi(t^2 +
    \\omega_k^2))`, each ratio at most :math:`t'/t`: c = ``ratio`` :sup:`d`.  ``precomputed``: ``inf``
    (nothing is known of its D).  Rounded up.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    X : array_like of shape (n, d)
        The samples (only the number of features d is read, by ``gaussian`` and ``laplacian``).
    weights : array_like of shape (d,), or None
        The feature weights of ``ard`` (only the number of nonzero ones is read); None otherwise.
    ratio : float
        The largest :math:`t'/t` covered, at least 1 (a piece's ``hi / lo`` in the bandwidth).

    Returns
    -------
    float
        ``ratio`` :sup:`d/2` (``ard``: d the positive weights) or ``ratio`` :sup:`d` (``laplacian``)
        times :math:`1 + 2^{-40}`; ``inf`` for ``precomputed`` (or where the power overflows).
    """
    if family == "precomputed":
        return np.inf
    d = np.count_nonzero(weights) if family == "ard" else np.shape(X)[1]
    dims = d if family == "laplacian" else d / 2
    with np.errstate(over="ignore"):
        return float(np.float64(ratio) ** dims) * (1.0 + 2.0**-40)  # (a few roundings of pow, far inside)


def cnd_excess(D):
    """``(lambda_max, tol)``: the largest eigenvalue of :math:`JDJ` (:math:`J = I -
    \\mathbf 1\\mathbf 1^\\top/n`; 0 for ``n <= 1``) and the tolerance it is compared with (:data:`_CND_UNITS`
    :math:`(n + 4)\\,u\\,\\lVert D\\rVert_F`), both computed on D scaled by its largest entry (no overflow or
    underflow: unscaled, the squares of ``numpy.linalg.norm`` overflowed to ``inf`` from entries ~1e154 / n, and
    every D passed).  All symmetric
    eigenvalues, :math:`O(n^3)`: 0.01 s at n = 351, 0.2 s at n = 1000 on one core (measured; a BLAS with threads on
    a busy machine can take far longer).

    Parameters
    ----------
    D : array_like of shape (n, n)
        Symmetric distances (:math:`JDJ` is formed from the row means; its lower triangle is read).
    """
    D = np.asarray(D, dtype=float)
    scale = float(np.max(np.abs(D))) if D.size else 0.0
    if not scale > 0 or D.shape[0] <= 1:
        return 0.0, 0.0
    S = D / scale  # (the row means of D itself overflow once n max(D) passes 1.8e308)
    row = S.mean(axis=1)
    C = S - row[:, None] - row[None, :] + row.mean()  # J S J for a symmetric S (its lower triangle is read)
    top = float(np.linalg.eigvalsh(C)[-1])
    with np.errstate(over="ignore"):  # (only where top / max(D) >= 1 / (4n): far above the tolerance, refused)
        return top * scale, _CND_UNITS * (D.shape[0] + 4) * UNIT_ROUNDOFF * float(np.linalg.norm(S)) * scale


@contextlib.contextmanager
def submatrices_of_checked():
    """Problems built inside take a principal submatrix of a D that passed :func:`check_cnd`
    (a fold's training rows and columns) and do not check it again: it is conditionally
    negative definite as the whole is (:math:`v^\\top D_S v = v^\\top D v` for :math:`v` zero off
    the subset), while its own tolerance, of a smaller n and norm, could refuse it."""
    token = _SUBMATRIX.set(True)
    try:
        yield
    finally:
        _SUBMATRIX.reset(token)


def check_cnd(D, who):
    """:class:`InputError` unless the precomputed ``D`` is conditionally negative definite (so
    that :math:`\\exp(-tD) \\succeq 0` for every :math:`t > 0`, which ``who`` needs); not
    checked within :func:`submatrices_of_checked`.

    Parameters
    ----------
    D : ndarray of shape (n, n)
        The precomputed distances, symmetric (:func:`check_precomputed`).
    who : str
        The problem that needs :math:`\\exp(-tD) \\succeq 0`, named in the message.

    Returns
    -------
    None
    """
    if _SUBMATRIX.get():
        return
    top, tol = cnd_excess(D)
    if top > tol:
        raise InputError(f"{who} needs exp(-tD) positive semidefinite, but the precomputed D is not conditionally "
                         f"negative definite (J D J has the eigenvalue {top:.3g} > {tol:.3g}, the eigensolver's "
                         "error): use a Euclidean, squared Euclidean or l1 distance computed from the differences "
                         "(scipy.spatial.distance.cdist; ||x||^2 + ||z||^2 - 2x.z loses more than that to "
                         "cancellation), or a problem that does not need it (klasso, robust_l1)")


def distances_sha256(D, shape=None):
    """sha256 of the matrix ``D`` (its shape and its float64 bytes); ``D`` may instead be its
    row blocks in order (an iterable of arrays, computed as they are hashed) with the whole
    matrix's ``shape``.

    Parameters
    ----------
    D : array_like of shape (n, m), or iterable of ndarray
        The matrix, or its row blocks in order (each of shape (r, m)).
    shape : tuple of int, optional
        The whole matrix's shape; required with row blocks (None: ``D``'s own).

    Returns
    -------
    str
        The 64 hexadecimal digits of the sha256 of ``repr(tuple(shape))`` followed by the float64
        bytes of ``D`` in row-major order.
    """
    if shape is None:
        D = np.ascontiguousarray(D, dtype=float)
        shape, D = D.shape, (D,)
    h = hashlib.sha256(repr(tuple(shape)).encode())
    for block in D:  # each array's own buffer: D.tobytes() is a copy (n = 16,000: 5.5 s against 1.1 s)
        h.update(np.ascontiguousarray(block, dtype=float))
    return h.hexdigest()
