"""Distances between samples: the matrices :math:`D` of the kernels :math:`\\exp(-tD)`.

Numpy loops for small matrices (the verifier and every command-line run compute them);
``scipy.spatial.distance.cdist`` in row blocks on the kernel threads for large ones.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pairwise", "sq_distances", "cross_sq_distances"]


def pairwise(X, metric="sqeuclidean", weights=None):
    """Distances between the rows of ``X`` (n, d), from coordinate differences summed over the
    features in order: :math:`\\sum_j (x_{ij} - x_{lj})^2` (``"sqeuclidean"``),
    :math:`\\sum_j w_j (x_{ij} - x_{lj})^2` with ``weights`` w, or :math:`\\sum_j |x_{ij} - x_{lj}|`
    (``"cityblock"``).

    Not from :math:`\\lVert x\\rVert^2 + \\lVert x'\\rVert^2 - 2x^\\top x'`: every entry carries a
    relative error of at most :math:`(d + 2)u`, the diagonal is exactly zero and the matrix
    exactly symmetric (the differences only change sign).  The entries are those of
    ``squareform(scipy.spatial.distance.pdist(X, metric))`` bit for bit on builds without fused
    multiply-add (the same terms summed in the same order).  Small problems (up to
    :data:`_LOOP_MAX` entries times features: ionosphere, heart, diabetes) are summed by a numpy
    loop over the features, which saves ``scipy.spatial``'s import (~0.2 s of a command-line run
    on ionosphere, whose loop takes ~10 ms); larger ones go to ``cdist`` in row blocks on the
    kernel threads (:func:`~approxpath.compute.parallelism.parallel_map`), each block written in
    place: n = 16,000, d = 20 takes 1.4 s on one thread where ``squareform(pdist(X))`` takes
    1.9-7.6 s (its condensed vector, then the copy into the square), and 0.75 s on two.

    Parameters
    ----------
    X : array_like of shape (n, d)
        The samples, one per row (shape (n,): one feature).
    metric : {"sqeuclidean", "cityblock"}, default "sqeuclidean"
        The distance (scipy's name for it).
    weights : array_like of shape (d,), optional
        Nonnegative feature weights :math:`w_j` of ``"sqeuclidean"`` (``kernel="ard"``); None:
        unweighted.

    Returns
    -------
    D : ndarray of shape (n, n)
    """
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    if X.shape[0] ** 2 * X.shape[1] > _LOOP_MAX:
        kw = {} if weights is None else {"w": np.asarray(weights, dtype=float)}
        return _cdist_rows(X, X, metric, kw)
    return _summed(X, X, metric, weights)


def _cdist_rows(A, B, metric, kw):
    """``scipy.spatial.distance.cdist(A, B, metric, **kw)`` computed in blocks of rows on the
    kernel threads (``cdist`` releases the GIL), each into its rows of one output: every entry
    is computed alone, so the result is the same bits on any number of threads."""
    from scipy.spatial.distance import cdist

    from .parallelism import parallel_map

    A, B = np.ascontiguousarray(A, dtype=float), np.ascontiguousarray(B, dtype=float)
    out = np.empty((A.shape[0], B.shape[0]))

    def block(a):
        rows = slice(a, a + _CDIST_ROWS)
        cdist(A[rows], B, metric, out=out[rows], **kw)

    parallel_map(block, range(0, A.shape[0], _CDIST_ROWS))
    return out


def _summed(A, B, metric, weights):
    """:func:`pairwise`'s sums between the rows of ``A`` (m, d) and of ``B`` (k, d) by a numpy
    loop over the features (the terms and the order of ``pdist`` and ``cdist``)."""
    BT = np.ascontiguousarray(B.T)  # (d, k): each feature read contiguously
    w = None if weights is None else np.asarray(weights, dtype=float)
    m, k = A.shape[0], B.shape[0]
    out = np.zeros((m, k))
    step = max(1, _DISTANCE_BLOCK // max(k, 1))
    tmp = np.empty((min(step, m), k))
    for a in range(0, m, step):
        rows = slice(a, min(a + step, m))
        t = tmp[:rows.stop - a]
        for j in range(A.shape[1]):
            np.subtract(A[rows, j, None], BT[j], out=t)
            if metric == "cityblock":
                np.abs(t, out=t)
            elif w is None:
                np.multiply(t, t, out=t)
            else:  # (w (a - b)) (a - b): pdist's order of the operations
                np.multiply(t, w[j] * t, out=t)
            out[rows] += t
    return out


def sq_distances(X):
    """Squared Euclidean distances between the rows of ``X`` (:func:`pairwise`).

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    D : ndarray of shape (n, n)
    """
    return pairwise(X)


def cross_sq_distances(A, B):
    """Squared Euclidean distances between the rows of ``A`` (m, d) and ``B`` (k, d): shape (m, k),
    the entries of :func:`pairwise` (``scipy.spatial.distance.cdist``'s; by the same numpy loop
    where it is small).

    Parameters
    ----------
    A : array_like of shape (m, d)
        Samples, one per row.
    B : array_like of shape (k, d)
        Samples, one per row, with the same d features.

    Returns
    -------
    ndarray of shape (m, k)
        :math:`D_{ij} = \\sum_l (a_{il} - b_{jl})^2`.
    """
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.shape[0] * B.shape[0] * A.shape[1] > _LOOP_MAX:
        return _cdist_rows(A, B, "sqeuclidean", {})
    return _summed(A, B, "sqeuclidean", None)


# Entries times features up to which :func:`pairwise` sums by a numpy loop rather than importing
# scipy.spatial (~0.2 s on an idle machine): the loop costs 3-10 ns per term (~0.05-0.15 s here)
_LOOP_MAX = 1 << 24
# Rows per block of :func:`_cdist_rows`, whatever the thread count (the same blocks on any): at
# n = 16,000 a block is 32 MB, one C call long against its Python overhead, and 63 of them to
# share among up to 16 threads
_CDIST_ROWS = 256
# Entries per block of :func:`pairwise` (rows x columns): the block's temporary (2 MB) stays
# in cache while the features are summed into it (n = 4000, d = 20: blocks of 16, 64 and 256
# rows took 3.2, 1.8 and 1.0 s)
_DISTANCE_BLOCK = 1 << 20
