"""Model selection along a path: a validation loss at every piece (or on a fine grid), the
best parameter value and the certified gap there.

The model evaluated at ``t`` is the path's own primal point at ``t`` — the point its
certificate speaks about — so the selected model carries the gap bound of its piece: its
training objective is within that bound of the optimum at the selected ``t`` (for every ``t``
of a certified piece; at the sampled points only for a sampled one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compute.parallelism import managed
from ..errors import InputError
from ..validate import check_validation
from ..numerics import log_mid
from .advice import RangeWarning

__all__ = ["CRITERIA", "SELECTIONS", "ValidationCurve", "evaluation_points", "validation_curve", "validation_loss"]

#: Validation losses (lower is better): ``error`` is the misclassification rate of the sign of
#: the decision function against labels in {-1, +1}; ``mae`` and ``mse`` the mean absolute and
#: mean squared error of the predictions.
CRITERIA = ("error", "mae", "mse")
#: Where the loss is evaluated: the middle of every piece (in log scale) or an evenly spaced
#: grid (in log scale).
SELECTIONS = ("pieces", "grid")


@dataclass(frozen=True)
class ValidationCurve:
    """A validation loss along a path.

    Attributes
    ----------
    t : ndarray of shape (k,)
        Parameter values, increasing.
    loss : ndarray of shape (k,)
        The loss of the path's model at each ``t`` (lower is better).
    gap_bound : ndarray of shape (k,)
        The path's gap bound at each ``t`` (that of the piece containing it).
    kind : ndarray of shape (k,)
        The kind of that piece (``certified``, ``sampled`` or ``uncovered``).
    criterion : str
    loss_error : ndarray of shape (k,) or None
        Where known, a bound on the difference between ``loss`` and the loss of the exact
        optimum at ``t`` (e.g. LOOCV of kernel ridge regression).
    parameter : str
        The path's parameter (``"bandwidth"``, ``"c"``, ``"lam"``): what ``t`` is.
    """

    t: np.ndarray
    loss: np.ndarray
    gap_bound: np.ndarray
    kind: np.ndarray
    criterion: str
    loss_error: np.ndarray = None
    parameter: str = "bandwidth"

    @property
    def best_index(self):
        """Index of the smallest loss; ties go to the smallest ``t`` (the widest kernel, the
        smoothest model)."""
        return int(np.argmin(self.loss))

    @property
    def best_t(self):
        return float(self.t[self.best_index])

    @property
    def best_loss(self):
        return float(self.loss[self.best_index])

    @property
    def best_gap_bound(self):
        return float(self.gap_bound[self.best_index])

    @property
    def best_kind(self):
        return str(self.kind[self.best_index])

    def edge_sides(self):
        """The ends of the curve (``"lower"``, ``"upper"``) whose loss equals the best one, ties
        included: the loss may keep falling past such an end (the best index alone misses a tie
        at the upper end, since ties go to the smallest ``t``)."""
        if self.t.size < 2:
            return []
        return [side for side, i in (("lower", 0), ("upper", -1)) if self.loss[i] <= self.best_loss]

    def range_warning(self, choice, interval):
        """A :class:`~.advice.RangeWarning` naming ``choice`` (the choice in words) and the ends of
        ``interval`` (lo, hi) at :meth:`edge_sides`, or None where there are none."""
        ends = dict(zip(("lower", "upper"), interval))
        sides = [(self.parameter, side, ends[side]) for side in self.edge_sides()]
        # (0 everywhere, the least a loss can be: a tie no wider range breaks; the same larger loss
        # everywhere may still fall beyond a narrow range)
        flat = bool(np.max(self.loss) <= 0.0)
        return RangeWarning(choice, choice, sides, flat=flat) if sides else None


def evaluation_points(path, selection="pieces", n_grid=100):
    """Parameter values at which to evaluate a loss: the middle of every piece of ``path`` (in
    log scale) or ``n_grid`` evenly spaced values (in log scale) over its interval: shape
    (pieces,), or (n_grid,) from ``lo`` to ``hi`` (clipped into the interval).

    Raises
    ------
    InputError
        An unknown ``selection``, or for ``"grid"`` an ``n_grid`` that is not an integer >= 2.
    """
    if selection == "pieces":
        return np.array([log_mid(p.lo, p.hi) for p in path.pieces])
    if selection == "grid":
        if not (isinstance(n_grid, (int, np.integer)) and n_grid >= 2):
            raise InputError(f"n_grid must be an integer >= 2; got {n_grid!r}")
        lo, hi = path.interval
        ts = np.exp(np.linspace(np.log(lo), np.log(hi), int(n_grid)))
        return np.clip(ts, lo, hi)
    raise InputError(f"unknown selection {selection!r}; choose one of {', '.join(SELECTIONS)}")


def validation_loss(criterion, y_true, f):
    """The loss ``criterion`` (one of :data:`CRITERIA`) of predictions ``f`` against ``y_true``, both
    of shape (m,): the mean of the misclassifications (``"error"``: labels in {-1, +1}, the class
    +1 where ``f > 0``, else -1), absolute errors or squared errors.

    Raises
    ------
    InputError
        An unknown ``criterion``.
    """
    y_true = np.asarray(y_true, dtype=float)
    if criterion == "error":
        return float(np.mean(np.where(f > 0, 1.0, -1.0) != y_true))
    if criterion == "mae":
        return float(np.mean(np.abs(f - y_true)))
    if criterion == "mse":
        return float(np.mean((f - y_true) ** 2))
    raise InputError(f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")


@managed
def validation_curve(path, X_val, y_val, criterion=None, selection="pieces", n_grid=100, ts=None):
    """The validation loss of the path's models along the path.

    Parameters
    ----------
    path : Path
        With its problem (computed here or loaded with the data).
    X_val : ndarray of shape (m, d)
    y_val : ndarray of shape (m,)
        Targets; for ``criterion="error"`` labels in {-1, +1} (as the problem sees them).
    criterion : str, optional
        One of :data:`CRITERIA`; the problem's first ``criteria`` entry by default.
    selection : {"pieces", "grid"}
        See :func:`evaluation_points`; ignored when ``ts`` is given.
    n_grid : int
    ts : array_like, optional
        Explicit parameter values (inside the path's interval).

    Returns
    -------
    ValidationCurve
    """
    problem = path.require_problem()
    criterion = problem.criteria[0] if criterion is None else criterion
    if criterion not in CRITERIA:
        raise InputError(f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")
    X_val, y_val = check_validation(X_val, y_val, problem.X.shape[1])
    if criterion == "error" and not np.all(np.isin(y_val, (-1.0, 1.0))):
        raise InputError("criterion 'error' needs validation labels in {-1, +1}: map the classes first")
    if ts is None:
        ts = evaluation_points(path, selection, n_grid)
    else:
        ts = np.sort(np.asarray(ts, dtype=float).ravel())
        if ts.size == 0 or not np.all(np.isfinite(ts)):
            raise InputError(f"ts must hold at least one finite parameter value; got {ts.size} values")
    loss = np.array([validation_loss(criterion, y_val, problem.predict(path.primal(t), t, X_val)) for t in ts])
    pieces = [path.piece_at(t) for t in ts]
    return ValidationCurve(t=ts, loss=loss, gap_bound=np.array([p.gap_bound for p in pieces]),
                           kind=np.array([p.kind for p in pieces]), criterion=criterion,
                           parameter=problem.parameter)
