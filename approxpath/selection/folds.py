"""The data a selection looks at: the folds' problems with their held-out points, and the
criterion asked for (checked against the problem's), for :func:`approxpath.select` and
:func:`approxpath.select_surface` alike."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..errors import InputError
from ..kernel_families import submatrices_of_checked
from ..validate import check_validation
from .advice import SortedFoldsWarning

__all__ = ["check_shuffle", "default_criterion", "fold_problems", "validation_given"]


def default_criterion(problem, criterion, validation, closed):
    """The criterion to use: ``criterion`` checked (a validation loss with ``validation``, else one
    of the problem's closed forms ``closed``), or the problem's default.  ``validation``: there is
    held-out data (``cv`` or ``X_val``); ``closed``: the bound's ``CLOSED_FORM_CRITERIA`` by name; the
    default (None) is ``problem.criteria[0]`` with validation, else the first of ``closed``.

    Raises
    ------
    InputError
        A closed-form criterion with ``validation``, an unknown criterion, or no validation and no closed form.
    """
    from ..validate import choice

    if validation:
        from .losses import LOSSES

        if not hasattr(problem, "predict"):
            raise InputError(f"{problem.name} has no predict(): a validation loss needs the model's predictions")
        if criterion is None and not getattr(problem, "criteria", None):
            raise InputError(f"{problem.name} names no criteria: pass criterion= one of {', '.join(LOSSES)}")
        criterion = problem.criteria[0] if criterion is None else criterion
        if criterion in closed:
            raise InputError(f"criterion {criterion!r} is a criterion of the whole data: drop cv/X_val")
        return choice("validation criterion", criterion, LOSSES)
    if not closed:
        raise InputError(f"{problem.name} has no closed-form criterion: pass cv=5 (or X_val, y_val) "
                         "for a validation loss")
    return choice(f"{problem.name} criterion (without cv)", criterion or next(iter(closed)), tuple(closed))


def check_shuffle(cv, X_val, shuffle):
    """:class:`InputError` unless ``shuffle`` is None or a seed (0 to 2**32 - 1) that an int ``cv`` uses
    (a hold-out set ``X_val`` has no folds to shuffle)."""
    if shuffle is None:
        return
    if X_val is not None or not _int_cv(cv):
        raise InputError("shuffle (a seed) shuffles the folds of an int cv; " + (
            "a hold-out set X_val has none" if X_val is not None else "pass cv=K" if cv is None else
            f"cv={cv!r} is not one: shuffle the splitter itself (e.g. KFold(5, shuffle=True, random_state=0))"))
    _random_state(shuffle)


def validation_given(cv, X_val, y_val, shuffle):
    """Whether the criterion is a validation loss (``cv`` or a hold-out set), after
    :class:`InputError` where ``X_val`` and ``y_val`` do not come together (a ``y_val`` alone
    would be ignored) or :func:`check_shuffle` refuses ``shuffle``."""
    if (X_val is None) != (y_val is None):
        raise InputError(f"pass X_val and y_val together (got {'y_val' if X_val is None else 'X_val'} alone)")
    check_shuffle(cv, X_val, shuffle)
    return cv is not None or X_val is not None


def fold_problems(problem, cv, X_val, y_val, groups, criterion, shuffle=None):
    """``(problems, X_vals, y_vals, splits)``: the folds' problems and their held-out data (one hold-out
    set ``X_val, y_val``: ``splits`` None; or the splits ``(train, test)`` (index arrays) of ``cv``,
    shuffled by the seed ``shuffle`` when ``cv`` is an int).  ``cv``: an int k (``StratifiedKFold(k)``
    splits for ``criterion="error"``, else ``KFold(k)``, without scikit-learn), a scikit-learn splitter
    (``groups`` for its ``split``), or ``(train, test)`` index arrays (or boolean masks).  A fold's problem
    has the options of ``problem`` (``[problem]`` for a hold-out set, ``X_val`` (m, d), ``y_val`` (m,));
    with ``kernel="precomputed"``, ``X_vals`` holds the rows of the held-out points and the columns of the
    fold's training points.
    ``criterion`` is checked against the targets (:func:`~approxpath.selection.losses.check_loss`).

    Raises
    ------
    InputError
        Both ``cv`` and ``X_val``, bad hold-out data or loss, bad folds (fewer than 2, indices outside the data,
        repeated, a point trained on and held out), or a fold whose training data the problem refuses.
    ImportError
        A ``cv`` that is not an int without scikit-learn.
    """
    from .losses import check_loss

    X, y = problem.X, problem.y
    if X_val is not None:
        if cv is not None:
            raise InputError("pass cv or X_val/y_val, not both")
        X_val, y_val = check_validation(X_val, y_val, X.shape[1])
        labels = getattr(problem, "labels", None)  # (a classifier: its targets are its classes as -1, +1)
        other = np.setdiff1d(y_val, [-1.0, 1.0])
        if labels is not None and other.size:
            raise InputError(f"y_val holds {', '.join(f'{v:g}' for v in other[:3])}: give it as the problem's targets, "
                             f"-1 and +1 (its classes {labels[0].item()!r} -> -1, {labels[1].item()!r} -> +1)")
        check_loss(criterion, np.concatenate([y, y_val]))  # (the training targets too, as a k-fold choice's)
        return [problem], [X_val], [y_val], None
    check_loss(criterion, y)
    folds = _checked(_splits(cv, X, y, groups, classify=criterion == "error", shuffle=shuffle), y.shape[0])
    precomputed = problem.options().get("kernel") == "precomputed"  # X is D: a fold's D and D_new take its columns
    if _int_cv(cv) and shuffle is None and not precomputed:
        _warn_sorted(X, int(cv))
    fix = "use fewer folds or more data"
    labels, counts = np.unique(y, return_counts=True)
    if criterion == "error" and counts.min() < 2:  # (fewer folds cannot help: a fold without it has one class)
        fix = f"the class {labels[counts.argmin()]:g} of y has 1 sample: give each class at least 2"
    with submatrices_of_checked():  # (a fold's D is a principal submatrix of the one the problem checked)
        problems = [_fold_problem(problem, X[np.ix_(tr, tr)] if precomputed else X[tr], y[tr], k, len(folds), fix)
                    for k, (tr, _) in enumerate(folds)]
    if precomputed:
        return problems, [X[np.ix_(va, tr)] for tr, va in folds], [y[va] for _, va in folds], folds
    return problems, [X[va] for _, va in folds], [y[va] for _, va in folds], folds


def _warn_sorted(X, k):
    """Warn where a feature of ``X`` (n, d) is sorted and takes many values (at least half as many as there are
    points: a binary feature sorted by chance does not count): unshuffled folds, blocks of consecutive points,
    then each hold out one stretch of it, and the criterion measures extrapolation, not prediction."""
    n = X.shape[0]
    for j in range(X.shape[1]):
        steps = np.diff(X[:, j])
        if (np.all(steps >= 0) or np.all(steps <= 0)) and np.unique(X[:, j]).size >= max(2 * k, n / 2):
            warnings.warn(SortedFoldsWarning(j + 1, k), stacklevel=5)  # (select's or select_surface's caller)
            return


def _fold_problem(problem, X, y, k, folds, fix):
    """The problem on fold ``k``'s training data; bad data of a fold (too few points, a single
    class) named as the fold's, not as the user's data, with ``fix``."""
    try:
        return type(problem)(X, y, **problem.options())
    except InputError as exc:
        raise InputError(f"fold {k + 1} of {folds} trains on {y.shape[0]} point(s): {exc}; {fix}") from None


def _splits(cv, X, y, groups, classify, shuffle=None):
    """The ``(train, test)`` index arrays of ``cv``.  An int k gives scikit-learn's
    ``check_cv(k, y, classifier=classify)`` splits without importing it (0.6 s of a small
    selection's time): ``StratifiedKFold(k)`` for class labels, else ``KFold(k)``, unshuffled, or
    with ``shuffle=True, random_state=shuffle`` where ``shuffle`` (a seed) is given; anything
    else goes through ``check_cv``."""
    if _int_cv(cv):
        k, n = int(cv), y.shape[0]
        if not 2 <= k <= n:
            raise InputError(f"cv must be from 2 folds to the number of points ({n}), or a splitter; got {k}")
        rng = None if shuffle is None else _random_state(shuffle)
        if classify:
            test = _stratified(k, y, rng)
        else:  # consecutive blocks (of the shuffled points), the first n % k one point longer
            order = np.arange(n)
            if rng is not None:
                rng.shuffle(order)
            test = np.empty(n, dtype=int)
            test[order] = np.repeat(np.arange(k), np.full(k, n // k) + (np.arange(k) < n % k))
        return [(np.flatnonzero(test != i), np.flatnonzero(test == i)) for i in range(k)]
    if isinstance(cv, (bool, str, numbers.Real)):  # (scikit-learn's words: "n_splits=1", or a TypeError)
        raise InputError(f"cv must be a number of folds (an int >= 2), a scikit-learn splitter or an iterable of "
                         f"(train, test) index arrays; got {cv!r}")
    try:
        from sklearn.model_selection import check_cv
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("a cross-validation splitter needs scikit-learn: pip install 'approxpath[sklearn]' "
                          "(or pass cv as an int)") from exc
    try:
        folds = list(check_cv(cv, y, classifier=classify).split(X, y, groups))
    except (TypeError, ValueError) as exc:  # an iterable of other things; a splitter refusing the data
        if groups is None and "groups" in str(exc):  # (scikit-learn's "The 'groups' parameter should not be None")
            raise InputError(f"cv={cv!r:.80} needs groups: pass groups=, or its splits as cv (an estimator's fit "
                             "takes no groups): cv=list(splitter.split(X, y, groups))") from None
        raise InputError(f"cv: {exc} (cv must be a number of folds, a scikit-learn splitter or an iterable of "
                         f"(train, test) index arrays; got {cv!r:.80})") from None
    if not folds and iter(cv) is cv:  # (a generator: used up by an earlier fit, or a clone's copy)
        raise InputError("cv gave no folds: it is a generator, used up by its first use (an earlier fit): pass the "
                         "splitter itself, or its splits as a list: cv=list(splitter.split(X, y))")
    return folds


def _checked(folds, n):
    """``folds`` as ``(train, test)`` sorted integer index arrays (boolean masks of the n points taken
    as their indices), or :class:`InputError` unless there are at least 2 and each holds indices
    of the n points, both sides nonempty, without repeats, and no point both trained on and held
    out (the held-out loss would be a training loss, and a choice certified for it the fit's, not
    the validation's)."""
    if len(folds) < 2:
        raise InputError(f"cv must give at least 2 folds; got {len(folds)}")
    out = []
    for k, fold in enumerate(folds, start=1):
        try:
            train, test = (np.asarray(side) for side in fold)
        except (TypeError, ValueError):
            raise InputError(f"cv fold {k} must be a pair (train, test) of index arrays; got {fold!r:.80}") from None
        # (boolean masks of the n points, as some splitters and users give them: their indices)
        train, test = (np.flatnonzero(side) if side.dtype == bool and side.shape == (n,) else side
                       for side in (train, test))
        for name, side in (("training", train), ("test", test)):
            if side.ndim != 1 or side.dtype.kind not in "iu" or side.size == 0:
                raise InputError(f"cv fold {k}: its {name} indices must be a nonempty 1-d array of integers; got "
                                 f"shape {side.shape} of {side.dtype}")
            if side.min() < 0 or side.max() >= n:
                raise InputError(f"cv fold {k}: {name} index {int(side.min() if side.min() < 0 else side.max())} is "
                                 f"not one of the {n} points (0 to {n - 1})")
            if np.unique(side).size != side.size:
                raise InputError(f"cv fold {k}: its {name} indices repeat a point")
        both = np.intersect1d(train, test)
        if both.size:
            raise InputError(f"cv fold {k}: point(s) {', '.join(map(str, both[:5].tolist()))} are both trained on "
                             "and held out: a fold's test points must be left out of its training")
        out.append((np.sort(train), np.sort(test)))  # (in order: a fold's problem is that of the data's rows)
    return out


def _int_cv(cv):
    """Whether ``cv`` is a number of folds (an int, not a bool), not a splitter."""
    return isinstance(cv, numbers.Integral) and not isinstance(cv, bool)


def _random_state(seed):
    """numpy's legacy ``RandomState(seed)``: scikit-learn's ``random_state`` draws the shuffles of
    its splitters from it, so a seed gives the same folds here and there."""
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed < 2**32):
        raise InputError(f"shuffle must be a seed from 0 to 2**32 - 1 (an integer); got {seed!r}")
    return np.random.RandomState(int(seed))


def _stratified(k, y, rng=None):
    """Each point's test fold as scikit-learn's ``StratifiedKFold(k)`` assigns it: the classes
    in order of first appearance, the fold sizes of each class dealt round robin over the sorted
    labels, and each class's points given to the folds in blocks, in their order (with ``rng``,
    ``shuffle=True``: each class's fold numbers shuffled by ``rng``, class by class)."""
    _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    code = np.argsort(np.argsort(first))[inverse]  # classes numbered by first appearance
    counts = np.bincount(code)
    if np.all(counts < k):
        raise InputError(f"cv={k} folds cannot be more than the points of every class ({counts.tolist()})")
    if np.any(counts < k):
        least = int(counts.min())
        warnings.warn(f"the smallest class has {least} point{'s' if least > 1 else ''}, fewer than cv={k} folds",
                      UserWarning, stacklevel=4)
    ordered = np.sort(code)
    share = np.array([np.bincount(ordered[i::k], minlength=counts.size) for i in range(k)])  # (k, classes)
    test = np.empty(y.shape[0], dtype=int)
    for c in range(counts.size):
        own = np.repeat(np.arange(k), share[:, c])
        if rng is not None:
            rng.shuffle(own)
        test[code == c] = own
    return test
