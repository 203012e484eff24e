"""The estimators' ``fit`` decorator (:func:`fitting`): a fit starts and, when it fails, ends with
nothing fitted, and the warnings it says are said again at the caller's line in the estimator's words
(the ``sklearn`` extra)."""

from __future__ import annotations

import functools
import re
import threading
import warnings

from .selection import RangeWarning, ShortfallWarning, SortedFoldsWarning

__all__ = ["fitting"]


def fitting(fit):
    """Decorator of the estimators' ``fit``: what an earlier fit left is removed first, and the
    warnings of the fit are issued again at the caller's line (a choice at a side of the range
    and a selection's shortfall naming the estimator's parameters) once it ends; the warnings of
    deprecation keep their own place.  The wrapper calls ``self._reset()``, then ``fit``, and
    returns what ``fit`` returns.  A fit that raises, or whose warnings a filter turns into errors,
    leaves no fitted attribute (``NotFittedError`` after it); a fit's own exception is raised, not
    a warning issued again after it.  A fit outside the main thread (joblib's threading backend, a
    threaded scheduler) keeps the warnings as they are said: ``catch_warnings`` swaps process-wide
    state, and fits overlapping in threads restored it out of order, silencing every later warning."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        self._reset()
        if threading.current_thread() is not threading.main_thread():
            try:
                return fit(self, *args, **kwargs)
            except BaseException:
                self._reset()
                raise
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = fit(self, *args, **kwargs)
        except BaseException:
            self._reset()
            for w in caught:  # (said, but a filter's error must not replace the fit's own)
                try:
                    _said_again(w, self.__class__.__name__, self._range_name, self._TOL, self._RANGE)
                except Warning:
                    pass
            raise
        try:
            for w in caught:
                _said_again(w, self.__class__.__name__, self._range_name, self._TOL, self._RANGE)
        except Warning:  # (a filter made one an error: the fit is not kept)
            self._reset()
            raise
        return out

    return wrapper


def _said_again(w, who, range_name, tol, weight_range):
    """Issue the warning ``w`` a fit caught again, at the caller of its ``fit``, in the words of the
    estimator ``who`` (its ``range_name(parameter)``, tolerance and weight range's names), three frames
    up: this function, the wrapper, the caller."""
    if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    elif isinstance(w.message, RangeWarning):
        # a choice of both parameters names the weight as the problem does (c): here as the estimator does (C;
        # an estimator without a weight range chooses the bandwidth alone)
        choice = w.message.choice if weight_range is None else \
            re.sub(r", \w+ = ", f", {weight_range.removesuffix('_range')} = ", w.message.choice, count=1)
        said = RangeWarning(str(w.message), choice, w.message.sides, w.message.undecided, w.message.flat)
        warnings.warn(RangeWarning(said.text(who, range_name), choice, said.sides, said.undecided, said.flat),
                      stacklevel=3)
    elif isinstance(w.message, SortedFoldsWarning):  # (no shuffle=: a splitter shuffles)
        how = f"a shuffled splitter as cv, e.g. KFold({w.message.k}, shuffle=True, random_state=0)"
        warnings.warn(SortedFoldsWarning(w.message.feature, w.message.k, how), stacklevel=3)
    elif isinstance(w.message, ShortfallWarning):  # (a selection's shortfall, kept: strict=False)
        warnings.warn(w.message.renamed(who=who, tol=tol, smaller=f"narrow {weight_range} or t_range",
                                        interval="a t_range"), stacklevel=3)
    else:
        warnings.warn(w.message, stacklevel=3)
