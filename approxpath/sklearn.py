"""scikit-learn estimators (the ``sklearn`` extra) that fit a certified bandwidth path and
select the bandwidth along it.

``fit(X, y)`` splits off a validation part (or takes ``X_val, y_val``), computes the certified
ε-path over the Gaussian bandwidth t of :math:`k_t(x, x') = \\exp(-t\\lVert x - x'\\rVert^2)`
on the rest (dense or scipy sparse ``X``, e.g. from ``load_svmlight_file``: densified, as the
kernel is dense; ``n_jobs`` worker processes; ``progress`` shows a bar), evaluates the validation loss of the path's model at every piece (or on a grid)
and keeps the best t.  ``predict(X)`` uses the path's model at that t; ``predict(X, t=...)``
any other t of the path.  ``path_`` is the :class:`approxpath.Path` (the certificate) and
``best_gap_bound_`` the certified bound on the training objective's suboptimality at
``best_t_``.

>>> from approxpath.data import make_classification
>>> from approxpath.sklearn import KernelPathSVC
>>> X, y = make_classification(n=80, seed=0)
>>> clf = KernelPathSVC(random_state=0).fit(X, y)
>>> clf.path_.certified and clf.best_gap_bound_ <= clf.eps_
True
"""

from __future__ import annotations

import numpy as np

try:
    from sklearn.base import ClassifierMixin, RegressorMixin
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError("approxpath.sklearn needs scikit-learn: pip install 'approxpath[sklearn]'",
                              name="sklearn") from exc
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from ._estimator_base import SPARSE, KernelPathBase, dense
from ._estimator_fitting import fitting
from .selection.losses import default_tol
from ._ridge_estimator import KernelPathRidge
from .validate import as_training_labels, choice, positive, positive_range

__all__ = ["KernelPathSVC", "KernelPathRegressor", "KernelPathRidge"]

class KernelPathSVC(ClassifierMixin, KernelPathBase):
    """Binary hinge-loss SVM with a Gaussian kernel, fitted along a certified bandwidth path.

    .. math::

        \\min_{w, b, \\xi}\\; \\tfrac12 w^\\top K_t w + C\\,\\mathbf 1^\\top \\xi
        \\quad\\text{s.t.}\\quad y \\circ (K_t w + b) \\ge 1 - \\xi,\\; \\xi \\ge 0,
        \\qquad K_t = \\exp(-t D),

    solved ε-approximately for every t in ``t_range`` (problem ``kernel_svm``); the bandwidth
    with the smallest validation error is selected.

    Parameters
    ----------
    C : float or None, default 1.0
        None: chosen with the bandwidth by ``cv``, else on the validation part, over ``C_range``
        (:func:`approxpath.select_surface`, certified within ``selection_.delta`` of the best of
        the whole box); ``best_C_`` is it.  Costly: minutes on a hundred points with the default
        ``cv_tol`` (40 points and 40 held out, C and t in [0.5, 2]: the 20,000 default solves in
        about 5 minutes, delta 0.1); start from a small box, a larger ``cv_tol`` or ``max_solves``,
        and ``progress=True``.
    C_range : (float, float), optional
        With ``C=None``: the range of C (required; checked whatever C is).
    bias : {"optimal", "dynamic", "fixed"}, default "optimal"
        Bias restoration along the path (see ``kernel_svm``).
    eps : float, default 0.01
        Admissible suboptimality of the training objective at every t, as a fraction (below 1)
        of the objective of the zero model (``C * n_train``): scale-free; ``eps_`` is the
        absolute value used (the paper's eps).
    t_range : (float, float), optional
        Bandwidth interval.  Default: ``gamma / 64`` to ``8 * gamma`` with scikit-learn's
        ``gamma = 1 / (n_features * X.var())``.
    selection : {"pieces", "grid"}, default "pieces"
        Evaluate the validation error at the middle of every piece, or on ``n_grid`` points
        evenly spaced in log t.
    n_grid : int, default 100
    validation_fraction : float, default 0.25
        Share of the training data split off (stratified) for selection when ``fit`` gets no
        ``X_val, y_val``.  The path is fitted on the rest.
    random_state : int, RandomState or None
        Seed of the split.
    cv : int, cross-validation splitter or iterable, optional
        Select by k-fold cross-validation instead of one split (scikit-learn's ``cv``: an int
        is a stratified k-fold): the bandwidth whose pooled cross-validation error of the
        exact optima is certified within ``selection_.delta`` of the best over ``t_range``
        (:func:`approxpath.selection.select`); the model at ``best_t_`` is then one exact
        solve on all the data, and ``path_`` (on all the data) is computed when first read.
    cv_tol : float, optional
        The ``delta`` to reach with ``cv`` or ``C=None`` (default 0.02, two points in a hundred; a
        warning says so if the search's budget ends first).  Checked without them too.
    max_solves : int, optional
        Exact solves allowed to the selection with ``cv`` (all folds together; default 2,000
        over the bandwidth, 20,000 over the bandwidth and C): spent, the selection stops with
        the ``delta`` it reached and warns, or, if spent before the folds' first surfaces
        covered the box (``C=None``), raises ``BudgetExceededError``.  Unused without ``cv``
        but with ``C=None``.
        Checked between rounds of solves: the folds' first paths and a round once started run
        to their end, so a run may exceed it (small data with the default ``eps``: ~1.5x).
    n_jobs : int or None, default None
        Worker processes for the path and, with ``cv``, the folds' paths (joblib's convention:
        None is 1, -1 all cores); with ``C=None`` the folds' surfaces are computed in this
        process and ``n_jobs`` serves ``path_`` only.  With more than one the exact solves are
        placed ahead of the workers' segments, where ``n_jobs=1`` places each one after the
        segment before it: the two place them at different bandwidths, so their paths differ
        (the path is the same for every ``n_jobs > 1``, which may use a few more exact solves).
        Every piece is certified within ``eps`` either way, but the models along the two paths
        differ (each within ``eps`` of the optimum), so the bandwidth of the smallest validation
        error, ``best_t_``, may differ between ``n_jobs=1`` and ``n_jobs > 1``: each is the
        best piece of a certified path.  With ``cv`` the choice does not depend on ``n_jobs``
        (each fold's paths are computed in one process, the folds shared among the workers).
    progress : bool, default False
        Show a progress bar (the ``progress`` extra, tqdm).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    path_ : approxpath.Path
        The certified path (fitted on the training part, with ``cv`` on all the data and
        computed at its first read; ``path_.save(file)`` writes the certificate).
    best_t_ : float
        Selected bandwidth; ties go to the smallest t (the smoothest model).
    best_loss_ : float
        Validation error rate at ``best_t_``; with ``cv``, the middle of the enclosure of the
        exact optimum's pooled cross-validated error there.
    best_gap_bound_ : float
        Certified bound on the duality gap (hence the suboptimality) at ``best_t_``.
    validation_curve_ : approxpath.selection.ValidationCurve
        (None with ``cv``.)
    selection_ : approxpath.selection.Selection or approxpath.SurfaceSelection
        With ``cv`` or ``C=None``: the chosen t (and C with ``C=None``), the enclosure of its
        cross-validation (or validation) error and ``delta``.
    best_C_ : float
        The C of ``path_`` (chosen with ``C=None``).
    eps_, t_range_ : the values used.
    n_features_in_ : int
    """

    _RANGE = "C_range"

    def __init__(self, C=1.0, bias="optimal", eps=0.01, t_range=None, selection="pieces", n_grid=100,
                 validation_fraction=0.25, random_state=None, n_jobs=None, progress=False, cv=None,
                 cv_tol=None, C_range=None, max_solves=None):
        self.max_solves = max_solves
        self.n_jobs = n_jobs
        self.progress = progress
        self.C = C
        self.C_range = C_range
        self.bias = bias
        self.eps = eps
        self.t_range = t_range
        self.selection = selection
        self.n_grid = n_grid
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.cv = cv
        self.cv_tol = cv_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _criterion(self):
        return "error"

    def _default_cv_tol(self, y):
        return 0.02  # two misclassified points in a hundred

    def _encode(self, y):
        """Classes to the problem's labels -1 (``classes_[0]``) and +1 (``classes_[1]``)."""
        y_pm, unknown = as_training_labels(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y_val contains labels not seen in y: {unknown[:5]}")
        return y_pm

    def _check_training_targets(self, y):
        if np.unique(y).size < 2:
            raise ValueError("the training part has only one class: pass more samples of each class or X_val, y_val")

    def _check_params(self):
        super()._check_params()
        if self.C is not None:
            positive("C", self.C)

    @fitting
    def fit(self, X, y, X_val=None, y_val=None):
        """Compute the certified path on the training data and select the bandwidth.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        X_val, y_val : array-like, optional
            Validation data; without them ``validation_fraction`` of ``X, y`` is split off.  In the
            estimator's own input space: inside a ``Pipeline`` (``<step>__X_val=...``) the
            earlier steps do not transform them; transform them yourself (``pipe[:-1].transform``).

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(self, X, y, ensure_min_samples=2, accept_sparse=SPARSE)
        X = dense(X)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            one = np.asarray(self.classes_[0]).item()  # (as the user wrote it, not numpy's repr)
            raise ValueError(f"KernelPathSVC needs two classes; y has one class ({one!r})")
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        yy = self._encode(y)
        if self.C is None:
            return self._fit_both(X, yy, X_val, y_val)
        self.best_C_ = float(self.C)
        return self._fit(X, yy, X_val, y_val, "kernel_svm", dict(c=self.best_C_, bias=self.bias), stratify=yy)

    def _fit_both(self, X, y, X_val, y_val):
        """``C=None``: C and the bandwidth chosen together by ``cv``, or on the validation part
        (``X_val, y_val``, else ``validation_fraction`` of ``X`` split off: the model on the rest)."""
        if self.cv is not None and (X_val is not None or y_val is not None):
            raise ValueError("cv= selects by cross-validation: do not pass X_val, y_val as well")
        weights = positive_range("C_range", self.C_range, "C=None needs C_range=(lo, hi) of positive numbers")
        if self.cv is None:
            X, y, X_val, y_val = self._split(X, y, X_val, y_val, y)
            self._check_training_targets(y)
        self.best_C_ = self._choose_both(X, y, "kernel_svm", dict(bias=self.bias), "c", weights, "error", self.cv,
                                         X_val, y_val)
        return self

    def decision_function(self, X, t=None):
        """:math:`f(x) = \\sum_j w_j k_t(x_j, x) + b` of the path's model at ``t`` (default
        ``best_t_``); positive means ``classes_[1]``.  Shape (n_samples,)."""
        return self._decision(X, t)

    def predict(self, X, t=None):
        """Class labels of the path's model at ``t`` (default ``best_t_``)."""
        f = self.decision_function(X, t)
        return self.classes_[(f > 0).astype(int)]


#: Losses of :class:`KernelPathRegressor` (registered problem names).
_LOSSES = ("klasso", "robust_l1")


class KernelPathRegressor(RegressorMixin, KernelPathBase):
    """Sparse kernel regression with a Gaussian kernel, fitted along a certified bandwidth path.

    ``loss="klasso"``:

    .. math::  \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K_t\\beta - \\beta_0\\mathbf 1\\rVert_2^2 + \\lambda\\lVert\\beta\\rVert_1

    ``loss="robust_l1"`` (the Giesen et al. paper's section 5):

    .. math::  \\min_{\\beta}\\; \\lVert y - K_t\\beta\\rVert_1 + \\lambda\\lVert\\beta\\rVert_1

    with :math:`K_t = \\exp(-tD)`, solved ε-approximately for every t in ``t_range``;
    predictions :math:`f(x) = \\sum_j \\beta_j k_t(x_j, x) (+ \\beta_0)`; the bandwidth with
    the smallest validation loss is selected.

    Parameters
    ----------
    loss : {"klasso", "robust_l1"}, default "klasso"
    lam : float, default 0.1
        :math:`\\lambda`, in the units of the objective (not relative, unlike ``eps``): for
        targets of another scale than ~1 scale it with them (klasso: with ``|y|``; ``y * 1e4``
        at ``lam=0.1`` is ``y`` at ``1e-5``, a nearly unregularized and ill-conditioned fit whose
        exact solves take seconds).
    eps : float, default 0.05
        Admissible suboptimality, as a fraction (below 1) of the zero model's objective
        (``0.5 * sum((y - mean y)^2)`` for klasso, ``sum |y|`` for robust_l1); ``eps_`` is the
        absolute value used.  (Larger than the classifier's default: the regression paths need
        more exact solves per unit of eps, and each solve costs more.)
    t_range : (float, float), optional
        As in :class:`KernelPathSVC`.
    criterion : {"mae", "mse"}, default "mae"
        Validation loss.
    selection, n_grid, validation_fraction, random_state, progress
        As in :class:`KernelPathSVC` (the split is not stratified).
    n_jobs : int or None, default None
        As in :class:`KernelPathSVC`: without ``cv``, ``n_jobs=1`` and ``n_jobs > 1`` place the
        exact solves differently, so their certified paths, and the ``best_t_`` chosen along
        them, may differ (sinc, n = 60, ``random_state=0``: 0.78 and 0.84), each certified.
    cv : int, cross-validation splitter or iterable, optional
        As in :class:`KernelPathSVC` (an int is a k-fold); ``loss="robust_l1"`` has no
        enclosure of its optimum's predictions: its cross-validation curve is sampled
        (``selection_.kind == "sampled"``, no ``delta``).  Costly: every fold's enclosures
        need many exact solves (docs/selection.md).
    cv_tol : float, optional
        The ``delta`` to reach with ``cv``; default 1 % of the targets' variance (``mse``) or
        standard deviation (``mae``).
    max_solves : int, optional
        As in :class:`KernelPathSVC`.

    Attributes
    ----------
    path_, best_t_, best_loss_, best_gap_bound_, validation_curve_, selection_, eps_, t_range_, n_features_in_
        As in :class:`KernelPathSVC`.
    """

    def __init__(self, loss="klasso", lam=0.1, eps=0.05, t_range=None, criterion="mae", selection="pieces",
                 n_grid=100, validation_fraction=0.25, random_state=None, n_jobs=None, progress=False, cv=None,
                 cv_tol=None, max_solves=None):
        self.max_solves = max_solves
        self.n_jobs = n_jobs
        self.progress = progress
        self.loss = loss
        self.lam = lam
        self.eps = eps
        self.t_range = t_range
        self.criterion = criterion
        self.selection = selection
        self.n_grid = n_grid
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.cv = cv
        self.cv_tol = cv_tol

    def _criterion(self):
        return self.criterion

    def _default_cv_tol(self, y):
        return default_tol(self.criterion, y)

    def _check_params(self):
        choice("loss", self.loss, _LOSSES)
        choice("criterion", self.criterion, ("mae", "mse"))
        positive("lam", self.lam)
        super()._check_params()

    @fitting
    def fit(self, X, y, X_val=None, y_val=None):
        """Compute the certified path on the training data and select the bandwidth.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        X_val, y_val : array-like, optional
            Validation data; without them ``validation_fraction`` of ``X, y`` is split off.  In the
            estimator's own input space: inside a ``Pipeline`` (``<step>__X_val=...``) the
            earlier steps do not transform them; transform them yourself (``pipe[:-1].transform``).

        Returns
        -------
        self
        """
        self._check_params()
        X, y = validate_data(self, X, y, ensure_min_samples=2, y_numeric=True, accept_sparse=SPARSE)
        X = dense(X)
        return self._fit(X, np.asarray(y, dtype=float), X_val, y_val, self.loss, dict(lam=float(self.lam)))

    def predict(self, X, t=None):
        """Predictions of the path's model at ``t`` (default ``best_t_``), shape (n_samples,)."""
        return self._decision(X, t)
