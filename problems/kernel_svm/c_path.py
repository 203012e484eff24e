"""The SVM's pairs that move linearly in C on a piece of the C path (numpy only; the certificate
side, :class:`.bound.SVMBound`, uses it).

At a fixed bandwidth the kernel is fixed.  A dual :math:`\\alpha(C) = \\sum_k w_k(C)\\alpha_k` whose
weights are linear in C, nonnegative, with every :math:`\\alpha_k \\ge 0` and :math:`y^\\top\\alpha_k = 0`
exactly, is feasible on the piece once :math:`\\alpha(C) \\le C` at both ends: each entry
:math:`\\alpha(C)_i - C` is linear in C (:func:`box_errors`).  Between two exact solves with the
weights of the linear interpolation in C, :math:`\\alpha(C) \\le w_a C_a + w_b C_b = C` for free; the
search scales the weights at an end where rounding or another weight leaves the box.

With :math:`w = y\\circ\\alpha` the gap is :math:`F(C) + C\\,N(C)`, :math:`F = \\alpha^\\top Q\\alpha -
1^\\top\\alpha` a convex quadratic in C and :math:`N = \\sum_i \\max(0, 1 - y_i((Kw)_i + b(C)))` convex
and piecewise linear (the bias linear in C too): the form
:func:`.._weight_path.weight_path_bound` bounds over a piece (:func:`c_gap`).
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import bernstein_at, coefficient_rounding
from approxpath.numerics import block_sum, fp_margin

from .._weight_path import kinks, weight_path_bound
from .moving import weight_allowance

__all__ = ["box_errors", "c_gap", "c_dual_floor"]


def _combination(bound, dual, lo, hi, x):
    """``(alpha, Kw, w)`` of the moving dual at the positions ``x`` (T,) of ``[lo, hi]``, as
    computed: ``alpha, Kw`` of shape (n, T) (from the class sums of its two points at the fixed
    bandwidth, shared by every piece), the weights ``w`` (2, T)."""
    w = bernstein_at(dual.restrict(lo, hi), np.asarray(x, dtype=float))
    A, B = (p.alpha for p in dual.points)
    # (any parameter of the C path maps to its one bandwidth: 1.0 keys the sums every piece shares)
    Sa, Sb = bound.pair_sums(A, B, 1.0)
    Kw = np.outer(Sa[0][:, 0] - Sa[0][:, 1], w[0]) + np.outer(Sb[0][:, 0] - Sb[0][:, 1], w[1])
    return np.outer(A, w[0]) + np.outer(B, w[1]), Kw, w


def box_errors(dual, lo, hi):
    """Why the moving dual (two points with weights of degree at most 1 in C) leaves :math:`[0, C]` somewhere on the
    C piece ``[lo, hi]`` (a list of str, empty where it stays in the box): nonnegative weights, and at both ends
    :math:`\\alpha(C) \\le C`, rigorously (the combination's rounding and the weights' included); one message for
    the points or the degree, or a negative weight coefficient, else one per end where :math:`\\alpha(C) \\le C` may
    fail.  Its points are taken as nonnegative (checked by the caller, :func:`.feasibility.pair_errors`)."""
    if len(dual.points) != 2 or dual.degree > 1:
        return ["a dual moving in C combines two points with weights linear in C"]
    if dual.weights.min() < 0:
        return [f"a weight of the moving dual has a negative coefficient ({dual.weights.min():.3g})"]
    W, err = dual.restrict(lo, hi), dual.allowance()
    W = W if W.shape[1] == 2 else np.repeat(W, 2, axis=1)
    A = np.column_stack([p.alpha for p in dual.points])
    errors = []
    for e, C in ((0, lo), (1, hi)):
        top = float(np.max(A @ W[:, e] + fp_margin(2, 1.0) * (A @ np.abs(W[:, e])) + A @ err))
        if not top <= C:
            errors.append(f"the moving dual exceeds C = {C:.17g} at that end of the piece (max {top:.17g})")
    return errors


def c_gap(bound, primal, dual, lo, hi):
    """A rigorous upper bound of the gap of a pair moving linearly in C at every C of ``[lo, hi]``
    (see the module docstring): :func:`.._weight_path.weight_path_bound` of :math:`F` (quadratic) and the hinge sum
    :math:`N`, split at the hinges' kinks.  ``bound`` on the C path (the bandwidth fixed); ``dual``: two points with
    weights linear in C; ``primal`` read for its bias (``bound.bias_coefficients``; degree 0 raised to 1)."""
    n, y = bound.n, bound.y
    sums = np.array([float(np.sum(p.alpha)) for p in dual.points])
    a_sum = float(sums.sum())
    # the weights at the positions x are computed from their coefficients on the piece (each within
    # allowance() of exact), by de Casteljau's steps at a computed position (coefficient_rounding)
    err = dual.allowance() + coefficient_rounding(dual.restrict(lo, hi))
    coef, bias_err = bound.bias_coefficients(primal, lo, hi)
    if coef.size == 1:
        coef = np.repeat(coef, 2)

    def F_at(x):
        alpha, Kw, _ = _combination(bound, dual, lo, hi, x)
        value = block_sum(y[:, None] * alpha * Kw) - block_sum(alpha)
        band = bound.rounding_margin(a_sum * a_sum + a_sum, dual) + weight_allowance(bound, dual, err, 0.0)
        return value, np.full(value.shape, band)

    def hinge_args(x):
        _, Kw, w = _combination(bound, dual, lo, hi, x)
        b = bernstein_at(coef, np.asarray(x, dtype=float))
        return 1.0 - y[:, None] * (Kw + b), b, w

    def N_at(x):
        h, b, w = hinge_args(x)
        # a computed K w and b within delta of exact: the class sums' rounding and the kernel
        # entries' per unit of each point's sum, the weights' error, the bias's
        delta = (sums @ np.abs(w) * bound.margin_count(dual) * (fp_margin(n + 2, 1.0) + bound.entry_error)
                 + float(err @ sums)
                 + bias_err + fp_margin(4, 1.0) * (1.0 + a_sum + np.abs(b)))
        total = np.maximum(h, 0.0).sum(axis=0) + n * delta
        return total + fp_margin(n, 1.0) * total

    return weight_path_bound(F_at, N_at, kinks(hinge_args([0.0, 1.0])[0]), lo, hi, quadratic=True)


def c_dual_floor(bound, dual, lo, hi):
    """A lower bound of the moving dual's objective :math:`1^\\top\\alpha - \\tfrac12\\alpha^\\top Q\\alpha`
    on the C piece ``[lo, hi]`` (``bound`` on the C path, ``dual`` two points with weights linear in C): concave in C
    (the weights linear), least at an end: the smaller of its values at the ends as computed, less the rounding
    (``bound.rounding_margin``) and :func:`.moving.weight_allowance` with C = 0."""
    sums = np.array([float(np.sum(p.alpha)) for p in dual.points])
    a_sum = float(sums.sum())
    alpha, Kw, _ = _combination(bound, dual, lo, hi, [0.0, 1.0])
    d = block_sum(alpha) - 0.5 * block_sum(bound.y[:, None] * alpha * Kw)
    return (float(d.min()) - bound.rounding_margin(a_sum * a_sum + a_sum, dual)
            - weight_allowance(bound, dual, dual.allowance(), 0.0))
