"""The machinery :class:`~approxpath.sklearn.KernelPathSVC` and
:class:`~approxpath.sklearn.KernelPathRegressor` share: the validation split or the folds, the
certified path and the selection along it, the default bandwidth range, prediction at a
bandwidth of the path (the ``sklearn`` extra)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .driver import approximate_path
from .errors import BudgetExceededError, EpsilonTooSmallError, InputError
from .numerics import round_up
from .registry import get_problem
from .selection import SELECTIONS, select, validation_curve
from .selection.search import default_eps
from .validate import choice, count, flag, is_count, is_real, positive, positive_range

__all__ = ["EPS_FLOOR", "SPARSE", "T_RANGE", "KernelPathBase", "dense"]

# Default bandwidth range: from gamma / 2^6 to gamma * 2^3 around scikit-learn's
# gamma="scale" = 1 / (n_features * X.var()).  The exact solves crowd at large t (narrow
# kernels, over-fitting), so the range reaches further towards wide kernels, where the path
# is cheap and the smooth models often validate best.
T_RANGE = (2.0**-6, 2.0**3)
# Absolute eps when the zero model's objective is 0 (constant targets: the zero model is
# optimal); the exact solves reach gaps of ~1e-9, so this is comfortably achievable.
EPS_FLOOR = 1e-6
# Sparse formats accepted (and densified: the kernel exp(-tD) is dense whatever X is).
SPARSE = ("csr", "csc", "coo")


def dense(X):
    """``X`` as a dense float array (a scipy sparse matrix is densified): ``X.toarray()``, else
    ``X`` (n, d) itself, not copied nor converted (the callers pass float already,
    :func:`~sklearn.utils.validation.validate_data`'s output)."""
    return X.toarray() if hasattr(X, "toarray") else X


def _far_from_training(X, X_val):
    """Warn where most validation points lie outside the training points' range by more than its
    width, in a feature the training points vary in: ``X_val`` not transformed as ``X`` was (a
    ``Pipeline`` passes fit parameters past its earlier steps), whose kernel rows are then ~0 and whose
    choice is the range's end at chance error (scaled by 100 and shifted by 500, as a reviewer found)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    varies = hi > lo
    width = (hi - lo)[varies]
    outside = np.any((X_val[:, varies] < lo[varies] - width) | (X_val[:, varies] > hi[varies] + width), axis=1)
    if 2 * int(outside.sum()) > len(X_val):
        warnings.warn(f"X_val: {int(outside.sum())} of {len(X_val)} points lie outside the training points' range "
                      "by more than its width: was X_val transformed as X was? (in a Pipeline, fit's X_val skips the "
                      "earlier steps: pass pipe[:-1].transform(X_val))", UserWarning, stacklevel=2)


class KernelPathBase(BaseEstimator):
    """Shared machinery: validation split, path, selection, prediction.

    With ``cv`` the choice needs no path on all of the data: the model at ``best_t_`` is one
    exact solve there (its gap certified at that point, ``best_gap_bound_``), and ``path_`` is
    computed at its first use (reading it, or predicting at another ``t``).
    """

    def __dir__(self):
        """The attributes, without ``path_`` while it is deferred: listing them (scikit-learn's HTML
        display of a fitted estimator, ``inspect.getmembers``, tab completion) reads each one, and
        reading ``path_`` computes the whole path."""
        names = object.__dir__(self)  # (scikit-learn's __dir__ keeps the names hasattr finds: it reads them all)
        if "_deferred_path" in self.__dict__ and "_path" not in self.__dict__:
            names = [name for name in names if name != "path_"]
        with warnings.catch_warnings():  # then scikit-learn's filter (its methods hidden by available_if)
            warnings.filterwarnings("ignore", category=FutureWarning)
            return [name for name in names if hasattr(self, name)]

    @property
    def path_(self):
        """The certified path over ``t_range_`` on the fitted data (computed at the first read
        after a fit with ``cv``)."""
        if "_path" not in self.__dict__:
            if "_deferred_path" not in self.__dict__:
                raise AttributeError(f"{type(self).__name__} has no path_ before fit")
            problem, options = self._deferred_path
            self._path = self._certified_path(problem, **options)
        return self._path

    def _certified_path(self, problem, **options):
        """:func:`approximate_path` at ``eps_``, its :class:`EpsilonTooSmallError` in this
        estimator's units (``eps``: a fraction of the zero model's objective), not the problem's,
        and its :class:`BudgetExceededError` in this estimator's parameters (a path's budget is
        not ``max_solves``, which is the selection's)."""
        try:
            return approximate_path(problem, **options)
        except BudgetExceededError as exc:
            lo, hi = options["interval"]
            what = {"max_solves": "exact solves", "max_pieces": "pieces"}.get(getattr(exc, "limit", None))
            if what is None:
                raise
            said = BudgetExceededError(
                f"{type(self).__name__}: the path over t_range = [{lo:.6g}, {hi:.6g}] at eps = {self.eps:g} (a gap of "
                f"{self.eps_:.3g}) needs more than the {exc.budget} {what} a path may take: use a larger eps or a "
                "narrower t_range")
            said.limit, said.budget = exc.limit, exc.budget
            raise said from exc
        except EpsilonTooSmallError as exc:
            null, needed = problem.null_objective(), getattr(exc, "needed", None)
            if not (null > 0 and needed is not None):
                raise
            raise EpsilonTooSmallError(
                f"{type(self).__name__}: eps = {self.eps:g} (of the zero model's objective {null:.3g}, so a gap of "
                f"{self.eps_:.3g}) is too small: at or next to the exact solve at t = {exc.t:.6g} the gap bound is "
                f"{exc.gap:.3g}; " + (f"use eps >= {round_up(needed / null):.3g}" if needed < null else
                                      "no eps below 1 carries it (the zero model's objective is that small)")) from exc

    @path_.setter
    def path_(self, path):
        self._path, self._deferred_path, self._best_model = path, None, None

    def _defer_path(self, problem, workers, progress):
        """After a choice by ``cv``: the model at ``best_t_`` from one exact solve on all of the
        data, restored (the problem's ``optimum_model`` where it has one: the model whose criterion
        the choice enclosed) and its gap bounded at that point; ``path_`` left for its first read."""
        t = self.best_t_
        primal, dual = problem.restore(*problem.solve(t), t)
        optimum = getattr(problem, "optimum_model", None)  # (the model whose criterion the choice enclosed)
        primal = primal if optimum is None else optimum(primal, t)
        self.best_gap_bound_ = float(problem.bound.gap(primal, dual, t))
        self.__dict__.pop("_path", None)
        self._deferred_path = (problem, dict(eps=self.eps_, interval=self.t_range_, workers=workers,
                                             progress=progress))
        self._best_model = (problem, primal)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    #: The names of the estimator's tolerance (the ``delta`` to reach) and of its weight's range.
    _TOL, _RANGE = "cv_tol", None

    def _reset(self):
        """Remove what an earlier fit left: the fitted attributes (ending in ``_``) and the
        path, deferred or computed, and the model at ``best_t_``."""
        for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, key)
        for key in ("_path", "_deferred_path", "_best_model"):
            self.__dict__.pop(key, None)

    def _check_params(self):
        """:class:`~approxpath.errors.InputError` for a bad parameter, whatever the others are
        (one that a fit does not use included)."""
        if positive("eps", self.eps) >= 1:  # (the zero model is within 100 % of its own objective: nothing proven)
            raise InputError(f"eps is a fraction of the zero model's objective and must be below 1 (the zero model "
                             f"itself is within it); got {self.eps!r}")
        if self.t_range is not None:
            positive_range("t_range", self.t_range, "t_range must be a pair (lo, hi) of positive numbers or None")
        if self._RANGE is not None and getattr(self, self._RANGE) is not None:
            positive_range(self._RANGE, getattr(self, self._RANGE))
            weight = self._RANGE[:-len("_range")]  # C_range: C; lam_range: lam
            if getattr(self, weight) is not None:  # a range no fit reads, silently
                raise InputError(f"{self._RANGE} is the range of {weight}=None, chosen with the bandwidth; got "
                                 f"{weight}={getattr(self, weight)!r}: set {weight}=None or drop {self._RANGE}")
        seed = self.random_state
        if not (seed is None or isinstance(seed, np.random.RandomState)
                or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed < 2**32)):
            raise InputError(f"random_state must be None, an int in [0, 2**32) or a numpy RandomState; got {seed!r}")
        fraction = self.validation_fraction
        if not (is_real(fraction) and 0 <= fraction < 1):
            raise InputError(f"validation_fraction must be a number in [0, 1); got {fraction!r}")
        if getattr(self, self._TOL) is not None:
            positive(self._TOL, getattr(self, self._TOL))
        if self.max_solves is not None:
            count("max_solves", self.max_solves)
        if hasattr(self, "n_grid"):
            choice("selection", self.selection, SELECTIONS)
            if not (is_count(self.n_grid) and self.n_grid >= 2):
                raise InputError(f"n_grid must be an integer >= 2; got {self.n_grid!r}")
        self._check_run_params()

    def _range_name(self, parameter):
        """The estimator's name of the range searched over ``parameter`` (``t_range``, ``C_range``,
        ``lam_range``)."""
        return "t_range" if parameter == "bandwidth" else self._RANGE

    def _budget(self):
        """``max_solves`` for a certified selection (none given: the selection's default)."""
        return {} if self.max_solves is None else dict(max_solves=int(self.max_solves))

    def _split(self, X, y, X_val, y_val, stratify):
        if X_val is not None:
            if y_val is None:
                raise ValueError("X_val was given without y_val: pass both or neither (fit(X, y, X_val, y_val) takes "
                                 "no sample weights: a third argument is X_val)")
            X_val = dense(validate_data(self, X_val, reset=False, accept_sparse=SPARSE))
            _far_from_training(dense(X), X_val)
            y_val = np.asarray(y_val)
            if y_val.ndim == 2 and y_val.shape[1] == 1:  # a column: flattened with a warning, as y is
                y_val = column_or_1d(y_val, warn=True)
            return X, y, X_val, self._encode(y_val)
        if y_val is not None:
            raise ValueError("y_val was given without X_val: pass both or neither")
        if self.validation_fraction == 0:
            raise ValueError("no validation data: pass X_val and y_val to fit, or set validation_fraction > 0")
        n_val = int(np.ceil(self.validation_fraction * X.shape[0]))
        if X.shape[0] - n_val < 2:
            raise ValueError(f"n_samples = {X.shape[0]} is too few to split off a validation part "
                             f"(validation_fraction={self.validation_fraction}): pass X_val, y_val or more samples")
        if stratify is not None and (np.min(np.unique(stratify, return_counts=True)[1]) < 2
                                     or n_val < np.unique(stratify).size):
            stratify = None
        X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=n_val, random_state=self.random_state,
                                                  stratify=stratify)
        return X_tr, y_tr, X_va, y_va

    def _check_run_params(self):
        """``(workers, progress)`` from ``n_jobs`` (joblib's convention: None is 1, -1 all cores,
        -2 all but one; :func:`approxpath.compute.resolve`) and ``progress``."""
        from .compute import resolve

        return resolve(self.n_jobs, default=1), flag("progress", self.progress)

    def _fit(self, X, y, X_val, y_val, name, options, stratify=None):
        workers, progress = self._check_run_params()
        if self.cv is not None:
            return self._fit_certified(X, y, X_val, y_val, name, options, workers, progress)
        X_tr, y_tr, X_va, y_va = self._split(X, y, X_val, y_val, stratify)
        self._check_training_targets(y_tr)
        problem = get_problem(name)(X_tr, y_tr, **options)
        self.t_range_ = self._t_range(problem)
        self.eps_ = self._eps(problem)
        self.path_ = self._certified_path(problem, eps=self.eps_, interval=self.t_range_, workers=workers,
                                          progress=progress)
        curve = validation_curve(self.path_, X_va, y_va, criterion=self._criterion(), selection=self.selection,
                                 n_grid=self.n_grid)
        self.validation_curve_ = curve
        edge = curve.range_warning(f"the chosen t = {curve.best_t:.6g}", self.t_range_)
        if edge is not None:  # the loss may keep falling past that end
            warnings.warn(edge)
        self.best_t_ = curve.best_t
        self.best_loss_ = curve.best_loss
        self.best_gap_bound_ = curve.best_gap_bound
        return self

    def _fit_certified(self, X, y, X_val, y_val, name, options, workers, progress):
        """``cv=``, or a validation part ``X_val, y_val`` (kernel ridge), or a closed-form criterion
        (neither): the bandwidth with a certified criterion (within ``selection_.delta`` of the best
        over ``t_range_``, :func:`approxpath.selection.select`), then the model there on ``X, y``."""
        if self.cv is not None and (X_val is not None or y_val is not None):
            raise ValueError("cv= selects by cross-validation: do not pass X_val, y_val as well")
        self._check_training_targets(y)
        problem = get_problem(name)(X, y, **options)
        self.t_range_ = self._t_range(problem)
        self.selection_ = select(problem, self._criterion(), cv=self.cv, X_val=X_val, y_val=y_val,
                                 eps=self._first_eps(problem), interval=self.t_range_, tol=self._tol(y), strict=False,
                                 workers=workers, progress=progress, **self._budget())
        self._finish_choice(problem, workers, progress)
        return self

    def _choose_both(self, X, y, name, options, weight, weights, criterion, cv, X_val=None, y_val=None):
        """The bandwidth and the weight ``weight`` (``c``, ``lam``) chosen together over
        ``t_range_`` x ``weights`` (:func:`approxpath.select_surface`; by ``cv`` folds, the
        validation data ``X_val, y_val`` or a closed-form criterion), then the model at the
        choice on all of ``X, y`` (``path_``: at the chosen weight).  Returns the weight.  The
        selection runs in this process (``select_surface`` has no workers); ``n_jobs`` is for
        ``path_``."""
        from .surface import select_surface

        workers, progress = self._check_run_params()
        problem = get_problem(name)(X, y, **options, **{weight: weights[0]})
        self.t_range_ = self._t_range(problem)
        try:
            self.selection_ = select_surface(problem, criterion, cv=cv, X_val=X_val, y_val=y_val,
                                             eps=self._first_eps(problem), bandwidths=self.t_range_, weights=weights,
                                             tol=self._tol(y), strict=False, progress=progress, **self._budget())
        except BudgetExceededError as exc:  # (strict=False: spent before the first choice)
            budget = self.max_solves or inspect.signature(select_surface).parameters["max_solves"].default
            raise BudgetExceededError(
                f"{type(self).__name__}: the first surfaces over t_range x {self._RANGE} (every fold's, or the "
                f"training part's) need more than max_solves = {budget} exact solves, before any choice: raise "
                f"max_solves, or narrow {self._RANGE} or t_range") from exc
        chosen = self.selection_.w
        self._finish_choice(get_problem(name)(X, y, **options, **{weight: chosen}), workers, progress)
        return chosen

    def _first_eps(self, problem):
        """The gap of a selection's first paths (or surfaces): ``eps`` in the problem's units, at
        most :func:`~approxpath.selection.search.default_eps` (enclosures from larger gaps decide
        little; the search refines where it matters)."""
        return min(self._eps(problem), default_eps(problem))

    def _eps(self, problem):
        """``eps`` (a fraction of the zero model's objective) in the problem's units."""
        null = problem.null_objective()
        return float(self.eps) * null if null > 0 else EPS_FLOOR

    def _finish_choice(self, problem, workers, progress):
        """After a certified choice (``selection_``): ``best_t_``, ``best_loss_`` (the middle of
        the enclosure; its negative for a criterion maximized, as the log marginal likelihood),
        ``eps_`` and the model at ``best_t_`` on ``problem`` (all of the data)."""
        self.best_t_ = self.selection_.t
        middle = 0.5 * (self.selection_.value[0] + self.selection_.value[1])
        self.best_loss_ = -middle if self.selection_.sense == "max" else middle
        self.eps_ = self._eps(problem)
        self._defer_path(problem, workers, progress)
        self.validation_curve_ = None

    def _tol(self, y):
        """The ``delta`` a certified selection is to reach."""
        return self.cv_tol if self.cv_tol is not None else self._default_cv_tol(y)

    def _t_range(self, problem):
        """``t_range``, or the default around scikit-learn's ``gamma`` of the problem's data
        (:class:`~approxpath.errors.InputError` where their squared distances overflow: scale the
        features)."""
        from .driver import check_scale

        check_scale(problem)
        if self.t_range is None:
            X = problem.X
            var = float(X.var())
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
            if not np.isfinite(gamma * T_RANGE[1]):  # (features ~1e-160: their variance is subnormal)
                raise InputError(f"the features' variance {var:.3g} is too small for the default t_range (1 / "
                                 "(n_features Var X) overflows): scale the features, or give t_range")
            return (gamma * T_RANGE[0], gamma * T_RANGE[1])
        return tuple(float(v) for v in self.t_range)

    def _check_training_targets(self, y):
        pass

    def _encode(self, y):
        """``y_val`` as it is: the selection checks it with the validation data (numbers, finite)."""
        return np.asarray(y)

    def _decision(self, X, t):
        check_is_fitted(self)
        X = dense(validate_data(self, X, reset=False, accept_sparse=SPARSE))
        if t is None:
            t = self.best_t_
        if not is_real(t):
            raise InputError(f"t must be one number (a bandwidth of t_range_); got {t!r}")
        if t == self.best_t_ and getattr(self, "_best_model", None) is not None:
            problem, primal = self._best_model
            return problem.predict(primal, t, X)
        lo, hi = self.t_range_  # (the path's interval: checked before a deferred path is computed)
        if not lo <= t <= hi:
            raise InputError(f"t must be a number in the path's interval [{lo:.6g}, {hi:.6g}]; got {t!r}")
        t = float(t)
        return self.path_.problem.predict(self.path_.primal(t), t, X)
