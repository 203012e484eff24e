"""Kernel ridge regression whose bandwidth (and, when asked, lambda) is chosen with a certificate by
leave-one-out CV, generalized CV or the marginal likelihood in closed form, or by a validation
loss (the ``sklearn`` extra; public as :class:`approxpath.sklearn.KernelPathRidge`)."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import validate_data

from ._estimator_base import SPARSE, KernelPathBase, dense
from ._estimator_fitting import fitting
from .selection.losses import default_tol
from .validate import choice, positive, positive_range

__all__ = ["KernelPathRidge"]

#: Criteria of the exact optimum in closed form: no validation data, no path.
_CLOSED = ("loocv", "gcv", "lml")
#: Validation losses (a split off part, or ``cv`` folds), as :class:`KernelPathRegressor`'s.
_LOSSES = ("mae", "mse")
# Default delta of the log marginal likelihood, in nats: a likelihood ratio of e = 2.7, below the
# 3.2 that Jeffreys' scale of evidence calls substantial.
_LML_TOL = 1.0


class KernelPathRidge(RegressorMixin, KernelPathBase):
    """Kernel ridge regression with a Gaussian kernel, its bandwidth (and λ) chosen with a proof.

    .. math::

        \\min_c\\; \\lambda\\, c^\\top K_t c + \\lVert K_t c - y \\rVert_2^2,
        \\qquad K_t = \\exp(-tD),\\quad f(x) = \\textstyle\\sum_j c_j k_t(x_j, x)

    (problem ``kernel_ridge``; the model of scikit-learn's ``KernelRidge(kernel="rbf",
    gamma=t, alpha=lam)``, without an intercept: center ``y`` whose mean is far from 0).
    ``criterion="loocv"`` (the default without ``cv``), ``"gcv"`` or ``"lml"`` is a function of the exact
    optimum in closed form: the bandwidth is certified within ``selection_.delta`` of the best of
    the whole of ``t_range`` from exact optima alone, with no validation split and no path
    (:func:`approxpath.selection.select`); ``lam=None`` chooses λ over ``lam_range`` with it, the
    pair certified over the whole box (:func:`approxpath.select_surface`).  ``"mae"`` and
    ``"mse"`` are validation losses, of ``cv`` folds or of a validation part (split off, or
    ``X_val, y_val``), certified the same way between exact optima with no path, at a given λ or
    (``lam=None``) over the box.

    Parameters
    ----------
    lam : float or None, default 0.1
        :math:`\\lambda`; None: chosen with the bandwidth over ``lam_range`` (``best_lam_``).
    criterion : {"loocv", "gcv", "lml", "mae", "mse"} or None, default None
        Leave-one-out CV's mean squared error, generalized CV's, the log marginal likelihood
        :math:`-\\tfrac12 y^\\top \\tilde K^{-1} y - \\tfrac12 \\log\\det \\tilde K - \\tfrac n2 \\log 2\\pi`
        of the Gaussian process with covariance :math:`\\tilde K = K_t + \\lambda I`
        (maximized), or a validation loss.  None: ``"loocv"``, or ``"mse"`` with ``cv`` or
        validation data ``X_val, y_val`` (as scikit-learn's ``RidgeCV``); ``criterion_`` is
        the one used.
    lam_range : (float, float), optional
        With ``lam=None``: the range of λ (required; checked whatever ``lam`` is).
    tol : float, optional
        The ``delta`` to reach: default 1 % of the targets' variance (``loocv``, ``gcv``,
        ``mse``) or standard deviation (``mae``), 1 nat for ``lml``.
    eps : float, default 0.05
        Admissible suboptimality of the path (``path_``), as a fraction (below 1) of the zero
        model's objective ``sum(y**2)``; ``eps_`` is the absolute value.
    t_range : (float, float), optional
        As in :class:`KernelPathSVC`.
    validation_fraction, random_state, cv, progress
        As in :class:`KernelPathRegressor`, for ``mae`` and ``mse`` (``cv`` with a closed-form
        criterion is refused: it needs no folds; with ``criterion=None`` it means ``mse``); without
        ``cv`` the model is fitted on the part not split off.
    n_jobs : int or None, default None
        Worker processes for ``cv``'s folds (the choice is the same for every ``n_jobs``) and
        for ``path_``; with ``lam=None`` the selection runs in this process and ``n_jobs``
        serves ``path_`` only.
    max_solves : int, optional
        Exact solves allowed to the selection (default 2,000 over the bandwidth, 20,000 with
        ``lam=None``): spent, it stops with the ``delta`` it reached and warns.

    Attributes
    ----------
    best_t_, best_lam_ : float
        The choice (``best_lam_`` is ``lam`` unless ``lam=None``).
    criterion_ : str
        The criterion used (``criterion``, or what None stands for).
    best_loss_ : float
        The middle of the criterion's enclosure at the choice; for ``lml`` its negative (the
        negative log marginal likelihood, a loss).
    selection_ : approxpath.selection.Selection or approxpath.SurfaceSelection
        The choice, its enclosure and ``delta``.
    path_ : approxpath.Path
        The certified path over ``t_range_`` at ``best_lam_`` on all of the data (on the part not
        split off after a validation split), computed at its first read; the model at
        ``best_t_`` is one exact solve.
    best_gap_bound_, eps_, t_range_, n_features_in_
        As in :class:`KernelPathRegressor` (``validation_curve_`` is None: nothing is sampled).

    Examples
    --------
    >>> from approxpath.data import make_sinc
    >>> from approxpath.sklearn import KernelPathRidge
    >>> X, y = make_sinc(n=60, seed=0)
    >>> ridge = KernelPathRidge(criterion="loocv").fit(X, y)
    >>> ridge.selection_.delta <= ridge.selection_.tol
    True
    """

    _TOL, _RANGE = "tol", "lam_range"

    def __init__(self, lam=0.1, criterion=None, lam_range=None, tol=None, eps=0.05, t_range=None,
                 validation_fraction=0.25, random_state=None, cv=None, n_jobs=None, progress=False,
                 max_solves=None):
        self.max_solves = max_solves
        self.lam = lam
        self.criterion = criterion
        self.lam_range = lam_range
        self.tol = tol
        self.eps = eps
        self.t_range = t_range
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.cv = cv
        self.n_jobs = n_jobs
        self.progress = progress

    def _criterion(self):
        return self.criterion_

    def _tol(self, y):
        if self.tol is not None:
            return self.tol
        return _LML_TOL if self.criterion_ == "lml" else default_tol(self.criterion_, y)

    def _check_params(self):
        if self.criterion is not None:
            choice("criterion", self.criterion, _CLOSED + _LOSSES)
        if self.lam is not None:
            positive("lam", self.lam)
        super()._check_params()

    @fitting
    def fit(self, X, y, X_val=None, y_val=None):
        """Choose the bandwidth (and λ with ``lam=None``) and fit the model there.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        X_val, y_val : array-like, optional
            Validation data for ``mae`` and ``mse`` without ``cv``, in the estimator's own input space
            (inside a ``Pipeline`` the earlier steps do not transform them: ``pipe[:-1].transform``).

        Returns
        -------
        self
        """
        self._check_params()
        validation = self.cv is not None or X_val is not None or y_val is not None
        criterion = self.criterion if self.criterion is not None else ("mse" if validation else "loocv")
        closed = criterion in _CLOSED
        if closed and validation:
            raise ValueError(f"criterion={criterion!r} needs no validation data: drop cv, X_val and y_val "
                             "(or choose 'mae' or 'mse')")
        X, y = validate_data(self, X, y, ensure_min_samples=2, y_numeric=True, accept_sparse=SPARSE)
        self.criterion_ = criterion
        X, y = dense(X), np.asarray(y, dtype=float)
        if not (closed or self.cv is not None):  # a validation part: the model on the rest
            X, y, X_val, y_val = self._split(X, y, X_val, y_val, None)
        if self.lam is None:
            weights = positive_range("lam_range", self.lam_range, "lam=None needs lam_range=(lo, hi) of positive numbers")
            self.best_lam_ = self._choose_both(X, y, "kernel_ridge", {}, "lam", weights, self.criterion_, self.cv,
                                               X_val, y_val)
            return self
        self.best_lam_ = float(self.lam)
        workers, progress = self._check_run_params()
        return self._fit_certified(X, y, X_val, y_val, "kernel_ridge", dict(lam=self.best_lam_), workers, progress)

    def predict(self, X, t=None):
        """Predictions of the model at ``t`` (default ``best_t_``), shape (n_samples,)."""
        return self._decision(X, t)
