"""Exact solves of the SVM dual by SMO started from a nearby solve (search side, numpy).

libSVM starts every solve from alpha = 0: with C = 0.1 most alpha end at C, so its SMO spends
about n/2 iterations moving them there, at every one of a path's exact solves (n = 16000: 7000
to 10000 iterations, 2.5-3 CPU s a solve).  Between neighbouring solves of a path few alpha
change: started from the nearest solve's alpha, the same algorithm (libSVM's second-order
working set selection and two-variable update, Fan, Chen and Lin 2005) stops after a few
hundred iterations (n = 4000: 60-530 instead of 1800-2100).  Its result is only a candidate:
the exact solve accepts it by the gap approxpath certifies, else falls through to libSVM.

The kernel is a matrix in memory, or :class:`ComputedKernel`: entries computed where the kernel
products run (a GPU), or from rows of the distances (without whole kernels on the host), read by
blocks and rows, with no n x n kernel in host memory.  The first solve of a path, with no nearby
solve, starts from :func:`cold_start`.
"""

from __future__ import annotations

import numpy as np

from approxpath.compute.kernels import gaussian, matvec

__all__ = ["warm_smo", "cold_start", "ComputedKernel"]

# Curvature floor of a working pair (libSVM's TAU).
_TAU = 1e-12
# Iterations at most, per sample: a warm start needs a few hundred in all; past this the point
# reached goes to the certified gap like any candidate.
_ITERATIONS_PER_SAMPLE = 2
# A warm alpha this close (relative to C) to a bound is put on it: the restoration rounds
# alpha down to a dyadic grid (2**-42 relative), and SMO would spend an iteration per such
# entry moving it back.
_SNAP = 1e-9
# Iterations between choices of the samples iterated on (:func:`warm_smo`'s shrinking): each
# choice brings the others' gradient up to date from the rows of the alpha that moved (at most
# 50 here: ~0.3 ms at n = 16,000), and the set shrinks as the violation does.  Warm starts at
# n = 16,000 (326-1447 iterations), seconds a solve: 25 iterations a choice 0.09-0.17, 100
# 0.09-0.21, 200 0.15-0.25, without shrinking 0.14-0.27 (the same alpha, up to rounding)
_ROUND = 25
# A set iterated on of at most this many samples gets its kernel block from a provider that
# computes entries (:class:`ComputedKernel`, a GPU) in one call per round (8 MB); a larger one
# one row per call: a round reads 2 x 25 rows, and a call costs a device round trip (tens of us)
_BLOCK_SIDE = 1024
# ... except the rows of this many samples of largest violation on each side (may move up, may
# move down), read in one call at the round's start: the pairs of a round are mostly among them
# (through the device code, n = 4,000 / 8,000: 93 / 88 % of the rows read; 32: 81 / 77 %, 128:
# 99 / 95 %; more rows cost more transfer for fewer misses), and a call
# costs a round trip of 260-420 us on an H200 (n = 16,000: 22,844 reads took 6-9.6 s)
_LIKELY = 64


class _InMemory:
    """The kernel ``K`` (n, n) in memory, read by rows."""

    def __init__(self, K):
        self.K, self.diag = K, np.diag(K).copy()

    def first(self, v):
        """:math:`Kv` (on the kernel threads)."""
        return matvec(self.K, v)

    def combine(self, coef, idx):
        """:math:`\\sum_r c_r K_{idx_r,:}`, shape (n,): row after row into one vector (BLAS's
        axpy reads each row where it is; 50 rows at n = 16,000: 0.27 ms, against 0.71 ms for
        gathering them into a block first and multiplying)."""
        from scipy.linalg.blas import daxpy

        out = np.zeros(self.K.shape[1])
        for c, i in zip(coef, idx):
            out = daxpy(self.K[i], out, a=c)
        return out

    def rows_of(self, A, likely=None):
        """``row(i)``: :math:`K_{A_i, A}` (``likely``: see :meth:`ComputedKernel.rows_of`; rows
        in memory cost nothing to read)."""
        K = self.K
        return lambda i: K[A[i], A]


class ComputedKernel:
    """:math:`K = \\exp(-xD)` read from a provider that computes its entries where its products
    run (:meth:`approxpath.compute.device.DeviceKernels.kernel_rows`, a GPU), or else from its
    rows of the distances (:meth:`approxpath.compute.blocked.BlockedKernels.rows`: read where
    they are stored, else computed from the data): no n x n kernel in host memory.
    The first gradient is one of the provider's kernel products.  The update of the samples
    left out reads the rows of the alpha that moved (at most 50 a round): on a device it is a
    device product (n floats come back); from rows of the distances it is those rows' kernel,
    computed here as one block and multiplied, since a product of a provider whose
    rows live on Dask workers is a round trip to the cluster at every round (n = 1500 on two
    local workers: 37 s of exact solves instead of 1.1 s).  The rows the iterations read come
    back one round's block at a time (:data:`_BLOCK_SIDE`), else the likeliest rows of a round
    in one call (:data:`_LIKELY`) and the others row by row.

    Parameters
    ----------
    kernels : approxpath.compute.device.DeviceKernels or approxpath.compute.blocked.BlockedKernels
    x : float
        The bandwidth.
    """

    def __init__(self, kernels, x):
        self.kernels, self.x = kernels, float(x)
        self.diag = np.ones(kernels.n)  # exp(-x 0): every family's D has a zero diagonal
        self._device = getattr(kernels, "kernel_rows", None)
        self._entries = self._device or self._from_distances

    def _from_distances(self, x, rows, cols=None):
        return gaussian(self.kernels.rows(rows, cols), x)

    def first(self, v):
        return self.kernels.products(self.x, v, order=0)[0]

    def combine(self, coef, idx):
        if self._device is None:
            return coef @ self._from_distances(self.x, idx)
        return self.kernels.products(self.x, coef, idx, order=0)[0]

    def rows_of(self, A, likely=None):
        """``row(i)``: :math:`K_{A_i, A}`; the whole block in one call where ``A`` is small
        (:data:`_BLOCK_SIDE`), else the rows at the positions ``likely()`` returns in one call
        and any other row in a call of its own (the same entries either way)."""
        if A.size <= _BLOCK_SIDE:
            return self._entries(self.x, A, A).__getitem__
        first = np.empty(0, dtype=int) if likely is None else likely()
        got = dict(zip(first.tolist(), self._entries(self.x, A[first], A))) if first.size else {}

        def row(i):
            hit = got.get(i)
            return hit if hit is not None else self._entries(self.x, A[i:i + 1])[0, A]

        return row


def _access(K):
    """``K`` as its reads: a :class:`ComputedKernel` as it is, a matrix through :class:`_InMemory`."""
    return K if isinstance(K, ComputedKernel) else _InMemory(K)


def warm_smo(K, y, C, alpha, tol):
    """Minimize :math:`\\tfrac12\\alpha^\\top Q\\alpha - 1^\\top\\alpha`, :math:`Q = yy^\\top\\circ K`,
    over :math:`0 \\le \\alpha \\le C` with :math:`y^\\top\\alpha` fixed, from ``alpha``.

    Shrinking (libSVM's idea, Joachims 1999): with :math:`g_t = -y_t\\nabla_t`, the pair is
    :math:`i = \\arg\\max_{\\rm up} g` and a :math:`j` in low with :math:`g_j < g_i`, so a sample
    that may only move up with :math:`g_t < M = \\min_{\\rm low} g`, or only down with
    :math:`g_t > m = \\max_{\\rm up} g`, is not in the next pairs.  The iterations run on the
    others (the free alpha and the violators; in warm starts at n = 8000, where most alpha sit
    at a bound, thousands in the first rounds and 150-300 in the last), reading their entries
    of two kernel rows; every :data:`_ROUND` iterations, and when they are optimal among
    themselves, the gradient of the rest is brought up to date from the alpha that moved and
    the set is chosen again.  The result is optimal over all n samples to ``tol``.

    Parameters
    ----------
    K : ndarray of shape (n, n) or ComputedKernel
        The kernel, symmetric (rows are read), or where its entries are computed.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
    alpha : ndarray of shape (n,)
        The start, feasible (a nearby exact solve's dual).
    tol : float
        Stop when the largest KKT violation :math:`m - M` is below this (libSVM's tolerance).

    Returns
    -------
    alpha : ndarray of shape (n,)
    b : float
        The bias, libSVM's: minus the mean of :math:`y_i \\nabla_i` over the free alpha (without
        one, the middle of the last violation's range).
    iterations : int
    """
    n = y.size
    K = _access(K)
    a = np.asarray(alpha, dtype=float).copy()
    a[a >= C * (1 - _SNAP)] = C
    a[a <= C * _SNAP] = 0.0
    diag = K.diag
    unit = bool(np.all(diag == 1.0))  # (a gaussian kernel: diag[i] + diag is 2 exactly)
    yG = -y * (y * K.first(y * a) - 1.0)  # -y_t grad_t
    up = np.where(y > 0, a < C, a > 0)  # alpha_t may move to raise y_t alpha_t
    low = np.where(y > 0, a > 0, a < C)
    it, budget = 0, _ITERATIONS_PER_SAMPLE * n
    while True:
        m, M = _extremes(yG, up, low)
        if m - M < tol or it >= budget:
            break
        A = np.flatnonzero((up & (yG >= M)) | (low & (yG <= m)))  # the rest are not in the next pairs
        before = a[A]
        done = _iterate(K.rows_of(A, lambda: _likely(yG[A], up[A], low[A])), A, y, a, yG, up, low, diag, unit, C,
                        tol, min(_ROUND, budget - it))
        if not done:  # (cannot happen: both extremes are in A)
            break
        it += done
        changed = a[A] != before
        if A.size < n and changed.any():  # the gradient of the samples left out, from the alpha that moved
            rest = np.ones(n, dtype=bool)
            rest[A] = False
            moved = A[changed]
            yG[rest] -= K.combine(y[moved] * (a[moved] - before[changed]), moved)[rest]
    free = (a > 0) & (a < C)
    if free.any():
        b = float(np.mean(yG[free]))  # -mean(y grad) over the free alpha
    else:
        b = 0.5 * float(m + M)
    return a, b, it


def cold_start(K, y, C):
    """A feasible start without a nearby solve: every :math:`\\alpha` of the smaller class at C
    and the same total spread evenly over the larger one, where its dual objective
    :math:`1^\\top\\alpha - \\tfrac12 (y\\circ\\alpha)^\\top K (y\\circ\\alpha)` is above
    :math:`\\alpha = 0`'s (zero), else zero.  At small C most of the optimum's alpha are at C:
    from this start SMO took 0-716 iterations where it took 1950-2184 from zero (n = 4000, C =
    0.1, t from 2^-10 to 8); at C = 10 and t >= 1/8 the start's objective is negative and zero is
    kept.  Costs one product with K.

    Parameters
    ----------
    K : ndarray of shape (n, n) or ComputedKernel
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float

    Returns
    -------
    ndarray of shape (n,)
    """
    K = _access(K)
    pos = y > 0
    small = pos if pos.sum() <= (~pos).sum() else ~pos
    if small.all() or not small.any():  # one class: only alpha = 0 is feasible
        return np.zeros(y.size)
    a = np.where(small, C, C * small.sum() / (~small).sum())
    w = y * a
    return a if float(a.sum() - 0.5 * (w @ K.first(w))) > 0.0 else np.zeros(y.size)


def _likely(g, up, low):
    """Positions of the :data:`_LIKELY` samples of largest :math:`g` that may move up and of
    smallest that may move down (each side's extremes: the round's pairs start there); a side
    with fewer samples that may move gives only those."""
    k = min(_LIKELY, g.size - 1)
    if k <= 0:
        return np.empty(0, dtype=int)
    sides = []
    for key in (np.where(up, -g, np.inf), np.where(low, g, np.inf)):
        first = np.argpartition(key, k)[:k]
        sides.append(first[key[first] < np.inf])
    return np.union1d(*sides)


def _extremes(yG, up, low):
    """:math:`m = \\max_{\\rm up} g` and :math:`M = \\min_{\\rm low} g`."""
    return float(np.max(np.where(up, yG, -np.inf))), float(np.min(np.where(low, yG, np.inf)))


def _iterate(row, A, y, a, yG, up, low, diag, unit, C, tol, count):
    """At most ``count`` SMO iterations on the samples ``A`` (indices), reading ``row(i)``
    (:math:`K_{A_i, A}`), until they are optimal among themselves to ``tol``: ``a``, ``yG``,
    ``up`` and ``low`` are updated at ``A`` in place.  Returns the number of iterations."""
    yA, aA, gA, upA, lowA = y[A], a[A], yG[A], up[A], low[A]
    dA = None if unit else diag[A]
    k = A.size
    b, quad, gain, pos = np.empty(k), np.empty(k), np.empty(k), np.empty(k, dtype=bool)
    it = 0
    while it < count:
        i = int(np.argmax(np.where(upA, gA, -np.inf)))
        m = gA[i]
        if m - np.min(np.where(lowA, gA, np.inf)) < tol:
            break
        Ki = row(i)
        np.subtract(m, gA, out=b)
        # the curvature diag_i + diag - 2 K_i, floored, in that order of operations
        np.multiply(2.0, Ki, out=quad)
        np.subtract(2.0 if unit else dA[i] + dA, quad, out=quad)
        np.maximum(quad, _TAU, out=quad)
        # the pair of largest gain b^2 / quad among the alpha that may fall (the first of ties)
        np.multiply(b, b, out=gain)
        np.divide(gain, quad, out=gain)
        np.logical_and(lowA, np.greater(b, 0.0, out=pos), out=pos)
        j = int(np.argmax(np.where(pos, gain, -np.inf)))
        ai, aj = _pair_update(aA[i], aA[j], yA[i], yA[j], -yA[i] * gA[i], -yA[j] * gA[j], float(quad[j]), C)
        di, dj = ai - aA[i], aj - aA[j]
        aA[i], aA[j] = ai, aj
        gA -= yA[i] * di * Ki + yA[j] * dj * row(j)
        for t in (i, j):
            upA[t] = aA[t] < C if yA[t] > 0 else aA[t] > 0
            lowA[t] = aA[t] > 0 if yA[t] > 0 else aA[t] < C
        it += 1
    a[A], yG[A], up[A], low[A] = aA, gA, upA, lowA
    return it


def _pair_update(ai, aj, yi, yj, Gi, Gj, quad, C):
    """libSVM's update of the working pair (gradients ``Gi``, ``Gj`` of the objective): the
    unconstrained step along the equality constraint, clipped to the box."""
    if yi != yj:
        delta = (-Gi - Gj) / quad
        diff = ai - aj
        ai, aj = ai + delta, aj + delta
        if diff > 0:
            if aj < 0:
                aj, ai = 0.0, diff
        elif ai < 0:
            ai, aj = 0.0, -diff
        if diff > 0:
            if ai > C:
                ai, aj = C, C - diff
        elif aj > C:
            aj, ai = C, C + diff
    else:
        delta = (Gi - Gj) / quad
        total = ai + aj
        ai, aj = ai - delta, aj + delta
        if total > C:
            if ai > C:
                ai, aj = C, total - C
        elif aj < 0:
            aj, ai = 0.0, total
        if total > C:
            if aj > C:
                aj, ai = C, total - C
        elif ai < 0:
            ai, aj = 0.0, total
    return ai, aj
