"""The data a selection looks at: the folds' problems with their held-out points, and the
criterion asked for (checked against the problem's), for :func:`approxpath.select` and
:func:`approxpath.select_surface` alike."""

from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["default_criterion", "fold_problems"]


def default_criterion(problem, criterion, validation, closed):
    """The criterion to use: ``criterion`` checked (a validation loss with ``validation``, else one
    of the problem's closed forms ``closed``), or the problem's default."""
    from ..validate import choice

    if validation:
        from .losses import LOSSES

        criterion = problem.criteria[0] if criterion is None else criterion
        if criterion in closed:
            raise InputError(f"criterion {criterion!r} is a criterion of the whole data: drop cv/X_val")
        return choice("validation criterion", criterion, LOSSES)
    if not closed:
        raise InputError(f"{problem.name} has no closed-form criterion: pass cv=5 (or X_val, y_val) "
                         "for a validation loss")
    return choice(f"{problem.name} criterion (without cv)", criterion or next(iter(closed)), tuple(closed))


def fold_problems(problem, cv, X_val, y_val, groups, criterion):
    """``(problems, X_vals, y_vals)``: the folds' problems and their held-out data (one hold-out
    set ``X_val, y_val``, or the splits of ``cv``)."""
    from .losses import check_loss

    X, y = problem.X, problem.y
    if X_val is not None:
        if cv is not None:
            raise InputError("pass cv or X_val/y_val, not both")
        if y_val is None:
            raise InputError("X_val was given without y_val: pass both")
        X_val = np.asarray(X_val, dtype=float)
        X_val = X_val[:, None] if X_val.ndim == 1 else X_val
        y_val = np.asarray(y_val, dtype=float)
        if X_val.shape[1:] != X.shape[1:] or y_val.shape != (X_val.shape[0],):
            raise InputError(f"validation data must be X_val (m, {X.shape[1]}) and y_val (m,); "
                             f"got {X_val.shape} and {y_val.shape}")
        check_loss(criterion, y_val)
        return [problem], [X_val], [y_val]
    try:
        from sklearn.model_selection import check_cv
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("cross-validation needs scikit-learn: pip install 'approxpath[sklearn]'") from exc
    splitter = check_cv(cv, y, classifier=criterion == "error")
    folds = list(splitter.split(X, y, groups))
    if len(folds) < 2:
        raise InputError(f"cv must give at least 2 folds; got {len(folds)}")
    check_loss(criterion, y)
    if problem.options().get("kernel") == "precomputed":  # X is D: a fold's D and D_new take its columns
        problems = [type(problem)(X[np.ix_(tr, tr)], y[tr], **problem.options()) for tr, _ in folds]
        return problems, [X[np.ix_(va, tr)] for tr, va in folds], [y[va] for _, va in folds]
    problems = [type(problem)(X[tr], y[tr], **problem.options()) for tr, _ in folds]
    return problems, [X[va] for _, va in folds], [y[va] for _, va in folds]
