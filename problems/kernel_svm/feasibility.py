"""What makes a stored SVM pair infeasible (the certificate's domain checks, numpy only):
every stored dual exactly in :math:`\\{0 \\le \\alpha \\le C,\\ y^\\top\\alpha = 0\\}`, a moving
dual a combination of them with nonnegative weights summing to at most 1, and the primal's ``w``
equal to :math:`y\\circ\\alpha(\\tau)` at every :math:`\\tau` (:func:`pair_errors`, read through
:meth:`.bound.SVMBound.errors`)."""

from __future__ import annotations

import math

import numpy as np

from approxpath.moving import is_moving

from .c_path import box_errors

__all__ = ["pair_errors"]


def _dual_errors(bound, alpha, C, what="alpha"):
    """Why ``alpha`` is not exactly in the SVM's dual set: :math:`0 \\le \\alpha \\le C`,
    :math:`y^\\top\\alpha = 0` by ``math.fsum`` (a list)."""
    a = np.asarray(alpha, dtype=float)
    if a.shape != (bound.n,) or not np.all(np.isfinite(a)):
        return [f"{what} must be {bound.n} finite numbers"]
    errors = []
    if a.min() < 0:
        errors.append(f"{what} has a negative entry ({a.min():.3g})")
    if a.max() > C:
        errors.append(f"{what} exceeds C = {C:.6g} (max {a.max():.17g})")
    if math.fsum(bound.y * a) != 0.0:
        errors.append(f"y'{what} = {math.fsum(bound.y * a):.3g} is not exactly 0")
    return errors


def pair_errors(bound, primal, dual, lo, hi):
    """Every stored dual exactly feasible (:math:`0 \\le \\alpha_k \\le C`, :math:`y^\\top\\alpha_k = 0`
    by ``math.fsum``); a moving dual's weights nonnegative with every coefficient column
    summing to at most 1 (``math.fsum``), so that :math:`\\alpha(\\tau)` is a combination of
    feasible duals with nonnegative weights summing to at most 1 at every :math:`\\tau` of the
    span (convex hull; 0 is feasible); the primal's ``w`` equal to :math:`y\\circ\\alpha(\\tau)`
    exactly (:func:`_primal_errors`); the bias finite.

    A dual moving in C (the C path) instead has its points only nonnegative and exactly
    zero-sum, and the combination's box checked at the piece's ends (:func:`.c_path.box_errors`);
    its weights' coefficient columns too sum to at most 1 (the allowances for the weights'
    rounding bound :math:`1^\\top\\alpha(C)` by the points' sums).

    Parameters
    ----------
    bound : SVMBound
    primal, dual : SVMPrimal and SVMDual, or Moving
    lo, hi : float
        The piece in the path parameter; C is ``bound.sweep.weight_floor(lo)`` (a C path: ``lo``).

    Returns
    -------
    list of str
        The reasons, empty where the pair is feasible; the duals' own errors alone where there are any.
    """
    C = bound.sweep.weight_floor(lo)
    duals = dual.points if is_moving(dual) else (dual,)
    c_moving = is_moving(dual) and not bound.sweep.along_bandwidth
    errors = []
    for k, d in enumerate(duals):  # (moving in C: each point's box is the combination's, below)
        errors += _dual_errors(bound, d.alpha, math.inf if c_moving else C,
                               "alpha" if len(duals) == 1 else f"alpha_{k}")
    if errors:
        return errors
    if c_moving:
        errors += box_errors(dual, lo, hi)
    if is_moving(dual):  # (the allowances of the weights' rounding take 1'alpha(tau) <= sum_k 1'alpha_k)
        W = dual.weights
        if W.min() < 0 and not c_moving:  # (box_errors names a negative weight of the C path)
            errors.append(f"a weight of the moving dual has a negative coefficient ({W.min():.3g})")
        if any(math.fsum([*col, -1.0]) > 0.0 for col in W.T):  # exactly (fsum(col) rounds to 1.0)
            errors.append("the moving dual's weights sum to more than 1 (a coefficient column)")
    return errors + _primal_errors(bound, primal, dual)


def _primal_errors(bound, primal, dual):
    """The primal's ``w`` is :math:`y\\circ\\alpha(\\tau)` at every :math:`\\tau`: its points
    with a nonzero ``w`` are, in order, :math:`(y\\circ\\alpha_k, b_k)` for the dual's points
    with the dual's weights (a fixed dual: one point whose weight is the constant 1); the other
    points carry only a bias.  Every ``b_k`` finite."""
    points = primal.points if is_moving(primal) else (primal,)
    if any(np.asarray(p.w).shape != (bound.n,) for p in points):
        return [f"w must be {bound.n} numbers"]
    if any(np.shape(p.b) != () for p in points):
        return ["bias must be one number"]
    if not all(np.isfinite(float(p.b)) for p in points):
        return ["bias is not finite"]
    carry = [k for k, p in enumerate(points) if np.any(p.w)]
    duals = [(j, d) for j, d in enumerate(dual.points if is_moving(dual) else (dual,)) if np.any(d.alpha)]
    if len(carry) != len(duals) or not all(
            np.array_equal(points[k].w, bound.y * d.alpha) for k, (_, d) in zip(carry, duals)):
        return ["w differs from y * alpha (point by point)"]
    if not carry:
        return []
    if not is_moving(dual):
        W = primal.weights[carry[0]] if is_moving(primal) else np.ones(1)
        return [] if np.all(W == 1.0) else ["the primal's w moves, the dual does not"]
    if not is_moving(primal) or primal.span != dual.span or primal.degree != dual.degree or not all(
            np.array_equal(primal.weights[k], dual.weights[j]) for k, (j, _) in zip(carry, duals)):
        return ["the primal's w does not move with the dual (same span, degree and weights)"]
    return []
