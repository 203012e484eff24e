"""The feature-selection path of Li & Sminchisescu (2010), L1KR, with certified points.

Feature weights β ≥ 0 of an ARD kernel are learned jointly with kernel ridge regression under
an ℓ1 budget, problem (1) of the paper,

.. math::

    \\min_{\\alpha, \\alpha_0, \\beta \\ge 0}\\; \\lVert y - K(\\beta)\\alpha - \\alpha_0\\mathbf 1\\rVert^2
    \\quad\\text{s.t.}\\quad \\alpha^\\top K(\\beta)\\alpha \\le C,\\;\\; \\lVert\\beta\\rVert_1 \\le D,

and :func:`feature_path` follows its KKT points from D ≈ 0 (Algorithm 1: the first feature by
Lemma 1, continuation along the null direction of the Jacobian (6), events E1/E2 located and
corrected by Newton's method (10), both directions probed after E2).  The problem is not convex
in β: every point is certified for what can be certified (:mod:`.certify`): the inner kernel
ridge problem at the point's β to a rigorous duality gap, and the KKT system (5) with the sign
and maximality conditions of Theorem 1 to stated residuals; global optimality is not claimed.
:func:`crosscheck_feature_path` certifies a path computed elsewhere the same way.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from approxpath.compute.parallelism import managed
from approxpath.errors import InputError
from approxpath.validate import check_X_y, count, positive

from ._homotopy import follow
from ._kernels import KERNELS, kernel_degree, make_kernel
from ._kkt import System
from .certify import RESIDUALS, STATEMENT, FeaturePathReport, PointCheck, crosscheck_feature_path
from .io import read_feature_path, write_feature_path
from .plot import plot_feature_path
from .result import FeatureEvent, FeaturePath, SegmentCheck, SegmentReport
from .segments import certify_segments

__all__ = [
    "KERNELS",
    "RESIDUALS",
    "STATEMENT",
    "FeatureEvent",
    "FeaturePath",
    "FeaturePathReport",
    "PointCheck",
    "SegmentCheck",
    "SegmentReport",
    "certify_segments",
    "crosscheck_feature_path",
    "feature_path",
    "normalize_columns",
    "plot_feature_path",
    "read_feature_path",
    "write_feature_path",
]


def normalize_columns(X, reference=None):
    """The paper's scaling: every column centred and of unit Euclidean norm.

    Parameters
    ----------
    X : array_like of shape (n, d)
    reference : array_like of shape (n_ref, d), optional
        Take the centres and norms from these rows (the training inputs) and apply them to X
        (validation or test inputs).

    Returns
    -------
    ndarray of shape (n, d)
        Constant columns become 0.
    """
    X = np.asarray(X, dtype=float)
    R = X if reference is None else np.asarray(reference, dtype=float)
    if X.ndim != 2 or R.ndim != 2 or X.shape[1] != R.shape[1]:
        raise InputError(f"X must be 2-D with the reference's columns; got shapes {X.shape} and {R.shape}")
    centre = R.mean(axis=0)
    # the norm of each column divided by its largest entry, times that entry: the squares of a column
    # of 1e160 overflowed (its norm inf, the column all 0) and those of 1e-300 underflowed (a "constant")
    top = np.max(np.abs(R - centre), axis=0)
    top = np.where(top > 0, top, 1.0)
    norm = top * np.linalg.norm((R - centre) / top, axis=0)
    return (X - centre) / np.where(norm > 0, norm, 1.0)


@managed
def feature_path(X, y, *, C, kernel="ard-gaussian", degree=None, d_max=None, max_events=None, max_steps=2000,
                 g_tol=1e-8, certify=True, tol=1e-8, kkt_tol=1e-6):
    """Follow the L1KR feature-selection path of problem (1) from D ≈ 0.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training inputs, scaled as the paper does (:func:`normalize_columns`); the
        ARD-polynomial kernel needs every :math:`|x| \\le 1`.
    y : array_like of shape (n,)
    C : float
        The bound of :math:`\\alpha^\\top K(\\beta)\\alpha \\le C` (scales with
        :math:`\\lVert y - \\bar y\\rVert^2`; larger C fits closer).  The constraint must be
        active along the path (λ > 0); a C above the K-norm of the least-squares fit raises
        :class:`~approxpath.errors.SolverError` at the start.
    kernel : {"ard-gaussian", "ard-polynomial"}
        :math:`\\exp(-\\sum_k\\beta_k(x_k - z_k)^2)` or
        :math:`(1 + \\sum_k\\beta_k x_k z_k/(1 + \\sum_k\\beta_k))^m`.
    degree : int, optional
        m of the ARD-polynomial kernel (default 2); the ARD-Gaussian kernel has none.
    d_max : float, optional
        Stop when :math:`\\lVert\\beta\\rVert_1` reaches ``d_max`` (the last point is there).
    max_events : int, optional
        Stop after this many events (E1 and E2).
    max_steps : int
        Stop after this many continuation steps.
    g_tol : float
        Stop when :math:`\\lambda\\eta = \\max_j(-\\partial L/\\partial\\beta_j)` falls below
        ``g_tol`` times :math:`\\lVert y - \\bar y\\rVert^2` (the paper's end: a stationary point
        of the problem without the ℓ1 budget); for the ARD-Gaussian kernel times the largest
        centred column's squared norm too (1 in the paper's scaling: the end does not depend on
        the features' units).  The path also ends where η crosses 0.
    certify : bool
        Certify every point (:func:`crosscheck_feature_path`) into ``result.report``.
    tol, kkt_tol : float
        Tolerances of the certificates (relative inner gap, KKT residuals).

    Returns
    -------
    FeaturePath

    Notes
    -----
    At β = 0 the kernel is the all-ones matrix and :math:`\\alpha^\\top K\\alpha = 0` for every
    α with :math:`\\mathbf 1^\\top\\alpha = 0`, so the constraint cannot be active there (λ → 0
    and α → ∞ as β → 0).  The path starts at :math:`\\beta = b_0 e_i`, i the feature of
    Lemma 1 (largest :math:`|\\alpha^\\top\\partial_iK(0)\\alpha|`, i.e. largest
    :math:`|x_i^\\top Hy|`), :math:`b_0` such that the kernel differs from all-ones by 0.1 %
    (smaller if another feature already leads there); nothing happens between 0 and
    :math:`b_0` except that the one-feature path is not recorded.
    """
    X, y = check_X_y(X, y)
    y = np.asarray(y, dtype=float)
    if kernel not in KERNELS:
        raise InputError(f"unknown kernel {kernel!r}: use one of {', '.join(KERNELS)}")
    degree = kernel_degree(kernel, degree)
    kern_degree = int(degree) if kernel == "ard-polynomial" else None  # (stored: the Gaussian has none)
    C = positive("C", C)
    d_max = None if d_max is None else positive("d_max", d_max)
    max_events = None if max_events is None else count("max_events", max_events)
    max_steps = count("max_steps", max_steps)
    g_tol = positive("g_tol", g_tol)
    if not np.any(y != y[0]):
        raise InputError("y is constant: there is nothing to fit (the path needs y - mean(y) != 0)")
    if C < np.finfo(float).tiny:  # (subnormal: C's digits are lost, and its square root underflows)
        raise InputError(f"C must be at least {np.finfo(float).tiny:.3g} (a normal double); got {C!r}")
    with np.errstate(over="ignore"):  # the certificates' dual holds C times the squared residuals
        if not np.isfinite(C * float(np.sum((y - y.mean()) ** 2))):
            raise InputError(f"C ||y - mean(y)||^2 overflows double precision (C = {C:.3g}, largest |y| = "
                             f"{float(np.max(np.abs(y))):.3g}): scale the targets, and C with their square")
    if not np.any(X != X[0]):  # (every column constant: the "C too large" of the start would mislead)
        raise InputError(f"every feature of X is constant ({X.shape[1]} columns): the ARD kernel is the same constant "
                         "matrix for every beta, so no feature can be selected; drop or fix the constant columns")
    kern = make_kernel(kernel, X, degree)
    system = System(kern, y, C)
    t0 = time.perf_counter()
    run = follow(system, d_max=d_max, max_events=max_events, max_steps=max_steps, g_tol=g_tol)
    wall = time.perf_counter() - t0
    alpha, beta, lam, alpha0, active, calls = (np.array(v) for v in zip(*run.records))
    D = beta.sum(axis=1)
    events = tuple(FeatureEvent(index=int(i), D=float(D[i]), feature=int(j), kind=kind) for kind, j, i in run.events)
    path = FeaturePath(kernel=kernel, degree=kern_degree, C=C, X=X, y=y, D=D, beta=beta, alpha=alpha, alpha0=alpha0,
                       lam=lam, active=active, events=events, jacobian_calls=system.jacobian_calls,
                       jacobian_calls_at=calls.astype(int), stop_reason=run.stop_reason, failed=run.failed,
                       steps=run.n_steps,
                       rejected=run.n_rejected, wall_s=wall)
    return dataclasses.replace(path, report=path.certify(tol=tol, kkt_tol=kkt_tol)) if certify else path
