"""Two small exact computations of the SVM's restoration: integer counts rebalanced to a sum
(the zero-sum repair of an interpolated alpha on its dyadic grid), the bias minimizing the
hinge loss of fixed decision values, and the free support vectors the dynamic bias uses."""

from __future__ import annotations

import numpy as np

__all__ = ["balance_down", "optimal_bias", "free_vectors"]

# alpha_i counts as a free support vector (the dynamic bias rule) when it is this far
# (relative to C) from both bounds; interior-point solutions sit ~1e-10 from active bounds.
_FREE_TOL = 1e-6


def balance_down(m, target):
    """Nonnegative integers ``<= m`` (k,) elementwise that sum to ``target <= m.sum()`` exactly (``m``
    nonnegative counts, ``0 <= target``; a copy of ``m`` where ``target >= m.sum()``).

    Each entry is first scaled down in proportion (rounded down), then units are added where the
    most room is left (the first entries on ties), or taken from the largest where the rounding
    overshot, until the sum is ``target``."""
    total = int(m.sum())
    if target >= total:
        return m.copy()
    new = np.floor(m * (target / total)).astype(np.int64) if total else m.copy()
    new = np.minimum(new, m)
    deficit = target - int(new.sum())
    while deficit != 0:
        if deficit > 0:
            room = m - new
            idx = np.argsort(-room, kind="stable")[:deficit]
            idx = idx[room[idx] > 0]
            new[idx] += 1
        else:
            idx = np.argsort(-new, kind="stable")[:-deficit]
            idx = idx[new[idx] > 0]
            new[idx] -= 1
        deficit = target - int(new.sum())
    return new


def optimal_bias(m, y):
    """argmin_b sum_i max(0, 1 - y_i (m_i + b)) (convex, piecewise linear; O(n)).

    Term i has its kink at :math:`k_i = y_i - m_i`; the slope of the sum at ``b`` is the
    number of negatives with :math:`k_i < b` minus the number of positives with
    :math:`k_i > b`, i.e. (kinks below ``b``) minus (positives): it turns nonnegative at the
    P-th smallest kink, P the number of positives (at least 1).

    Parameters
    ----------
    m : ndarray of shape (n,) or (n, k)
        Decision values without the bias (one set per column).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.

    Returns
    -------
    float, or ndarray of shape (k,)
        The P-th smallest kink (one minimizer per column).
    """
    p = max(1, int(np.count_nonzero(y > 0)))  # two classes: p >= 1 anyway
    kinks = (y if m.ndim == 1 else y[:, None]) - m
    return np.partition(kinks, p - 1, axis=0)[p - 1]


def midpoint_bias(m, y):
    """The middle of the optimal biases of the decision values ``m`` (n,) without bias, labels ``y``
    (n,) in {-1, +1}: :math:`\\tfrac12(k_{(P)} + k_{(P+1)})` of the kinks :math:`k_i = y_i - m_i`,
    P the number of positives (the minimizers of the hinge sum are :math:`[k_{(P)}, k_{(P+1)}]`,
    :func:`optimal_bias` takes the left end); libSVM's choice, and *the* exact optimum's bias for
    the selection's criteria (:mod:`.enclosure`)."""
    p = max(1, int(np.count_nonzero(y > 0)))
    low, high = np.partition(y - m, (p - 1, p))[[p - 1, p]]
    return 0.5 * (float(low) + float(high))


def free_vectors(alpha, C):
    """Which entries of ``alpha`` (any shape) are free support vectors: inside (0, C) by more
    than 1e-6 C (``C`` a float or an array broadcasting with ``alpha``): a bool array of ``alpha``'s shape."""
    return (alpha > _FREE_TOL * C) & (alpha < (1 - _FREE_TOL) * C)
