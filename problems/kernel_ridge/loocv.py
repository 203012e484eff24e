"""Leave-one-out cross-validation (LOOCV) of kernel ridge regression along a path.

Bindel's notes ("Fast LOOCV for kernels"): with :math:`\\tilde K = K_t + \\lambda I` and the
fit :math:`c = \\tilde K^{-1} y` to all points, the residual at :math:`x_i` of the fit to all
points but :math:`x_i` is

.. math::  r^{(-i)} = \\frac{c_i}{[\\tilde K^{-1}]_{ii}}
           = \\frac{(y - K_t c)_i}{\\lambda [\\tilde K^{-1}]_{ii}},

so one Cholesky factorization gives all :math:`n` refits.  Along a path the second form is
evaluated with the path's own ``c``: as :math:`f(c) - f(c^*) = (c - c^*)^\\top(\\lambda K +
K^2)(c - c^*) \\ge \\lVert K(c - c^*)\\rVert^2` and the gap bounds :math:`f(c) - f(c^*)`, the
residual vector is within :math:`\\sqrt{g}` (2-norm) of the exact one, so the root mean square
LOO residual is within :math:`\\sqrt{g/n}\\,/\\min_i \\lambda[\\tilde K^{-1}]_{ii}` of the exact
one: a certified error bar on the path's LOOCV against the exact LOOCV at the same ``t`` (up to the rounding of the
factorization, which is backward stable with :math:`\\mathrm{cond}(\\tilde K) \\le (n +
\\lambda)/\\lambda`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from approxpath.errors import InputError
from approxpath.selection import ValidationCurve, evaluation_points

from .problem import KernelRidge

__all__ = ["loocv", "loocv_curve"]


def _factor(problem, t):
    """(K_t, lambda, diag of (K_t + lambda I)^-1, Cholesky factor)."""
    bw, lam = problem.sweep.at(t)
    K = problem.gram(t)
    cf = scipy.linalg.cho_factor(K + lam * np.eye(problem.n))
    return K, lam, np.diag(scipy.linalg.cho_solve(cf, np.eye(problem.n))), cf


def loocv(problem, t):
    """The exact LOOCV statistic :math:`\\frac1n \\sum_i (r^{(-i)})^2` of kernel ridge
    regression at ``t`` by the fast formula (one factorization).

    Parameters
    ----------
    problem : KernelRidge
    t : float
        The path parameter (bandwidth or lambda, as ``problem.parameter`` says).
    """
    K, lam, inv_diag, cf = _factor(problem, t)
    c = scipy.linalg.cho_solve(cf, problem.y)
    return float(np.mean((c / inv_diag) ** 2))


def loocv_curve(path, ts=None, selection="pieces", n_grid=100):
    """LOOCV of the path's models along a kernel ridge path, with certified error bars.

    Parameters
    ----------
    path : approxpath.Path
        A path of ``kernel_ridge``.
    ts : array_like, optional
        Parameter values; default: the middle of every piece (``selection="pieces"``) or
        ``n_grid`` values evenly spaced in log scale (``"grid"``).

    Returns
    -------
    approxpath.selection.ValidationCurve
        ``criterion="loocv"``; ``loss_error[k]`` bounds ``|loss[k] - loocv(problem, t[k])|``
        (from the certified gap; ``inf`` where the piece is not certified).
    """
    problem = path.require_problem()
    if not isinstance(problem, KernelRidge):
        raise InputError(f"loocv_curve needs a kernel_ridge path; got {problem.name}")
    ts = evaluation_points(path, selection, n_grid) if ts is None else np.sort(np.asarray(ts, dtype=float))
    loss, err, bound, kind = [], [], [], []
    for t in ts:
        piece = path.piece_at(t)
        K, lam, inv_diag, _ = _factor(problem, t)
        r = (problem.y - K @ path.primal(t).c) / (lam * inv_diag)
        g = piece.gap_bound if piece.kind == "certified" else np.inf
        # ||W (r - r*)|| <= max(W) sqrt(g) with W = diag(1 / (lam [K~^-1]_ii)), so the root
        # mean square LOO residual is within b = max(W) sqrt(g / n) of the exact one
        b = np.sqrt(max(g, 0.0) / problem.n) / (lam * inv_diag.min())
        rms = np.sqrt(np.mean(r * r))
        loss.append(float(rms * rms))
        err.append(float(2.0 * rms * b + b * b))
        bound.append(piece.gap_bound)
        kind.append(piece.kind)
    return ValidationCurve(t=ts, loss=np.array(loss), gap_bound=np.array(bound), kind=np.array(kind),
                           criterion="loocv", loss_error=np.array(err))
