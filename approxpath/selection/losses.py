"""Validation losses of an enclosed prediction: the smallest and the largest loss of any
predictions inside per-point intervals (numpy only).

If every prediction of the exact optimum at a validation point lies in ``[low_i, up_i]`` (for
every parameter of a sub-interval), its loss lies between the loss of the best and of the worst
choice inside the intervals, point by point:

* ``error`` (labels in {-1, +1}; the class is +1 where f > 0, as
  :func:`~approxpath.selection.curve.validation_loss`): a point is surely right or surely wrong
  when its interval lies on one side (``low > 0`` or ``up <= 0``), else undecided; the error
  count is between the surely wrong and the surely wrong plus the undecided;
* ``mae``, ``mse``: the distance of ``y_i`` to the interval (0 inside), and the larger distance
  to its two ends.

Totals (sums over points, not means) are returned so that folds of any sizes pool into one
cross-validation loss: the pooled loss is the sum over all held-out points divided by their
number.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..numerics import fp_margin

__all__ = ["LOSSES", "loss_totals", "check_loss", "error_levels", "default_tol", "pooled"]

#: Validation losses with enclosures (lower is better).
LOSSES = ("error", "mae", "mse")

# A selection's default tol is this share of a criterion's own scale: an error rate's (1), the
# nats of a log likelihood's (a likelihood ratio of 1.01), what predicting the targets' mean costs
# (a squared loss: their variance; the absolute loss: their standard deviation)
_TOL_SHARE = 0.01
# ... and this where the targets are constant (that cost is 0: the model predicting them is
# optimal, and its exact solves reach losses of ~1e-9)
_CONSTANT_TOL = 1e-6
# criteria in the targets' squared units (the mean squared held-out, leave-one-out or
# generalized cross-validation residual) and in their units
_SQUARED, _LINEAR = ("mse", "loocv", "gcv"), ("mae",)


def check_loss(criterion, y_val):
    """:class:`InputError` unless ``criterion`` is one of :data:`LOSSES` and fits ``y_val`` (the targets,
    shape (m,): labels in {-1, +1} for ``"error"``)."""
    if criterion not in LOSSES:
        raise InputError(f"unknown validation loss {criterion!r}; choose one of {', '.join(LOSSES)}")
    if criterion == "error" and not np.all(np.isin(y_val, (-1.0, 1.0))):
        if np.unique(y_val).size > 2:  # (real targets: a regression's, where error has no meaning)
            raise InputError("criterion 'error' is the 0-1 loss of classes in {-1, +1}: the targets here take more "
                             "than two values; use mae or mse")
        raise InputError("criterion 'error' needs labels in {-1, +1}: map the classes first")


def loss_totals(criterion, y, low, up):
    """Bounds of the summed loss over the points of ``y`` for predictions enclosed in
    ``[low, up]``.

    Parameters
    ----------
    criterion : str
        One of :data:`LOSSES`.
    y : ndarray of shape (m,)
    low, up : ndarray of shape (m, J)
        Per point and sub-interval.

    Returns
    -------
    lo, hi : ndarray of shape (J,)
        Rounding included (the error counts are exact integers).
    """
    y = np.asarray(y, dtype=float)[:, None]
    if criterion == "error":
        plus, minus = low > 0, up <= 0  # the prediction's sign is sure
        wrong = (plus & (y < 0)) | (minus & (y > 0))
        undecided = ~(plus | minus)
        return wrong.sum(axis=0).astype(float), (wrong | undecided).sum(axis=0).astype(float)
    near = np.maximum(np.maximum(low - y, y - up), 0.0)  # distance to the interval
    far = np.maximum(np.abs(low - y), np.abs(up - y))
    if criterion == "mse":
        near, far = near * near, far * far
    lo, hi = near.sum(axis=0), far.sum(axis=0)
    # each term is one or two roundings off (a difference, a square), then an m-term sum
    pad = fp_margin(y.shape[0] + 3, 1.0) * hi
    return np.maximum(lo - pad, 0.0), hi + pad


def pooled(lo, hi, count, terms):
    """The pooled loss's enclosure ``(lo / count, hi / count)`` from enclosures ``lo, hi`` of the
    sum of ``terms`` folds' loss totals (float arrays or floats, each summand a rigorous bound of
    its fold's total), moved outward by the sum's ``terms - 1`` roundings and the division's one
    (:func:`~approxpath.numerics.fp_margin`); the lower end clipped at 0 (a loss is not negative).
    (One step of the floats after the division alone, with totals that carry no allowance of their
    own, left the upper end a few ulps below the exact mean of five folds' totals in 1,706 of
    20,000 random cases.)"""
    pad = fp_margin(terms + 1, 1.0)
    lo, hi = np.divide(lo, count), np.divide(hi, count)
    return np.maximum(lo - pad * np.abs(lo), 0.0), hi + pad * np.abs(hi)


def error_levels(delta, levels):
    """``delta``, or where the criterion takes only the values ``k / levels`` (the 0-1 error of
    ``levels`` held-out points: ``levels`` an integer) the largest such value not above it: two
    values ``k / levels`` differ by a multiple of ``1 / levels``, so a difference at most
    ``delta`` is at most ``floor(delta levels) / levels`` (computed exactly, rounded up to a
    double).  The rounding allowances of the enclosures' sums no longer keep δ just above a
    ``tol`` such as 0.01 with 100 points (δ = 0.0100000000000016).  ``delta`` itself where ``levels``
    is None (or 0) or ``delta`` is negative or not finite."""
    if not levels or not np.isfinite(delta) or delta < 0:
        return delta
    k = math.floor(delta * levels)  # (delta * levels >= k exactly when it is computed >= k: rounding is monotone)
    snapped = k / levels
    while Fraction(snapped) < Fraction(k, int(levels)):
        snapped = float(np.nextafter(snapped, np.inf))
    return min(delta, snapped)


def default_tol(criterion, y):
    """A selection's ``tol`` where none is given: 1 % of the criterion's scale.  That is 0.01 for
    the 0-1 error and the log marginal likelihood (a rate, nats); for a regression loss, 1 % of
    what predicting the targets' mean costs: their variance (``mse``, ``loocv``, ``gcv``) or
    standard deviation (``mae``), 1e-6 for constant targets.  A fixed 0.01 was meaningless for
    targets of small scale (targets in ±0.01: 0.01 is 660 times their variance, and a "certified"
    choice 3.3 times the best MSE met it).  ``y``: the training targets, shape (n,)."""
    if criterion not in _SQUARED + _LINEAR:
        return _TOL_SHARE
    y = np.asarray(y, dtype=float)
    spread = float(np.std(y)) if criterion in _LINEAR else float(np.var(y))
    return _TOL_SHARE * spread if spread > 0 else _CONSTANT_TOL
