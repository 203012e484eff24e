"""Exact solves of the SVM dual by SMO started from a nearby solve (search side, numpy).

libSVM starts every solve from alpha = 0: with C = 0.1 most alpha end at C, so its SMO spends
about n/2 iterations moving them there, at every one of a path's exact solves (n = 16000: 7000
to 10000 iterations, 2.5-3 CPU s a solve).  Between neighbouring solves of a path few alpha
change: started from the nearest solve's alpha, the same algorithm (libSVM's second-order
working set selection and two-variable update, Fan, Chen and Lin 2005) stops after a few
hundred iterations (n = 4000: 60-530 instead of 1800-2100).  Its result is only a candidate:
the exact solve accepts it by the gap approxpath certifies, else falls through to libSVM.
"""

from __future__ import annotations

import numpy as np

__all__ = ["warm_smo"]

# Curvature floor of a working pair (libSVM's TAU).
_TAU = 1e-12
# Iterations at most, per sample: a warm start needs a few hundred in all; past this the point
# reached goes to the certified gap like any candidate.
_ITERATIONS_PER_SAMPLE = 2
# A warm alpha this close (relative to C) to a bound is put on it: the restoration rounds
# alpha down to a dyadic grid (2**-42 relative), and SMO would spend an iteration per such
# entry moving it back.
_SNAP = 1e-9


def warm_smo(K, y, C, alpha, tol):
    """Minimize :math:`\\tfrac12\\alpha^\\top Q\\alpha - 1^\\top\\alpha`, :math:`Q = yy^\\top\\circ K`,
    over :math:`0 \\le \\alpha \\le C` with :math:`y^\\top\\alpha` fixed, from ``alpha``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel (rows are read).
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
    a = np.asarray(alpha, dtype=float).copy()
    a[a >= C * (1 - _SNAP)] = C
    a[a <= C * _SNAP] = 0.0
    diag = np.diag(K).copy()
    unit = bool(np.all(diag == 1.0))  # (a gaussian kernel: diag[i] + diag is 2 exactly)
    yG = -y * (y * (K @ (y * a)) - 1.0)  # -y_t grad_t
    up = np.where(y > 0, a < C, a > 0)  # alpha_t may move to raise y_t alpha_t
    low = np.where(y > 0, a > 0, a < C)
    b, quad, gain, pos = np.empty(n), np.empty(n), np.empty(n), np.empty(n, dtype=bool)
    it = 0
    while it < _ITERATIONS_PER_SAMPLE * n:
        i = int(np.argmax(np.where(up, yG, -np.inf)))
        m = yG[i]
        if m - np.min(np.where(low, yG, np.inf)) < tol:
            break
        Ki = K[i]
        np.subtract(m, yG, out=b)
        # the curvature diag_i + diag - 2 K_i, floored, in that order of operations
        np.multiply(2.0, Ki, out=quad)
        np.subtract(2.0 if unit else diag[i] + diag, quad, out=quad)
        np.maximum(quad, _TAU, out=quad)
        # the pair of largest gain b^2 / quad among the alpha that may fall (the first of ties)
        np.multiply(b, b, out=gain)
        np.divide(gain, quad, out=gain)
        np.logical_and(low, np.greater(b, 0.0, out=pos), out=pos)
        j = int(np.argmax(np.where(pos, gain, -np.inf)))
        ai, aj = _pair_update(a[i], a[j], y[i], y[j], -y[i] * yG[i], -y[j] * yG[j], float(quad[j]), C)
        di, dj = ai - a[i], aj - a[j]
        a[i], a[j] = ai, aj
        yG -= y[i] * di * Ki + y[j] * dj * K[j]
        for k in (i, j):
            up[k] = a[k] < C if y[k] > 0 else a[k] > 0
            low[k] = a[k] > 0 if y[k] > 0 else a[k] < C
        it += 1
    free = (a > 0) & (a < C)
    if free.any():
        b = float(np.mean(yG[free]))  # -mean(y grad) over the free alpha
    else:
        b = 0.5 * float(np.max(np.where(up, yG, -np.inf)) + np.min(np.where(low, yG, np.inf)))
    return a, b, it


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
