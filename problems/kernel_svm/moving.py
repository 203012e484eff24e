"""Gap bounds of the SVM's *moving* pairs on a bandwidth piece (numpy only).

Between two exact solves with duals :math:`\\alpha_a, \\alpha_b` the optimum moves with the
bandwidth, and a pair that stays fixed on a piece pays for that drift with a gap linear in the
piece's width.  A moving pair (:class:`~approxpath.moving.Moving`) lets the combination weights
follow the bandwidth:

.. math::

    \\alpha(t) = f_a(t)\\,\\alpha_a + f_b(t)\\,\\alpha_b,\\qquad w(t) = y \\circ \\alpha(t),

with :math:`f_a, f_b` polynomials (degree <= 2) in Bernstein form on the span.  The SVM's dual set
:math:`\\{0 \\le \\alpha \\le C,\\ y^\\top\\alpha = 0\\}` does not depend on :math:`t` and holds 0, so
:math:`\\alpha(t)` is feasible wherever :math:`f_a, f_b \\ge 0` and :math:`f_a + f_b \\le 1`: on the
whole span once both duals are exactly feasible, every coefficient is nonnegative and every
coefficient column sums to at most 1 (convex hull; ``SVMBound.errors``).  The gap bound
(:func:`moving_bound`) multiplies the Hermite envelopes of both duals' class sums by the
nonnegative weight polynomials; the bias is the primal's own polynomial.
"""

from __future__ import annotations

import numpy as np

from approxpath.bernstein import bernstein_product, max_hinge_sum
from approxpath.envelopes import hermite_lower, hermite_upper
from approxpath.numerics import block_sum

__all__ = ["moving_bound", "moving_dual_floor", "weight_allowance"]

# Sub-intervals over which a moving pair's gap bound is maximized (as for a fixed pair).
_NODES = 16


def weight_allowance(bound, dual, err, C=None, scale=1.0):
    """How far the gap (``C`` the SVM's) or the dual objective (``C = 0``) can move when each
    weight :math:`f_k` is off by at most ``err[k]``: the gap's derivative in :math:`f_k` is
    :math:`2\\alpha_k^\\top Q\\alpha + C\\sum_i |(K(y\\circ\\alpha_k))_i| + 1^\\top\\alpha_k` at most,
    with :math:`|Q_{ij}|, |K_{ij}| \\le 1` and :math:`1^\\top\\alpha \\le 1^\\top\\alpha_a +
    1^\\top\\alpha_b`, so at most :math:`1^\\top\\alpha_k\\,(2\\,a + Cn + 1)` with ``a`` the sum of both
    duals' sums (widened by 1.01 for the second-order terms).  With the dual scaled by ``scale``
    (``SVMBound.scaled_gap``) the quadratic term is times :math:`\\tfrac12(1 + s^2)` and the linear
    one times ``s``.  ``err`` (K,): as :meth:`~approxpath.moving.Moving.allowance`; ``C`` default ``bound.c``.

    Returns
    -------
    float
        :math:`1.01\\,(\\sum_k \\mathrm{err}_k a_k)\\,((1 + s^2)\\,a + Cn + s)`, :math:`a_k = 1^\\top\\alpha_k`,
        :math:`a = \\sum_k a_k`.
    """
    C = bound.c if C is None else C
    sums = np.array([float(np.sum(p.alpha)) for p in dual.points])
    return 1.01 * float(err @ sums) * ((1.0 + scale * scale) * sums.sum() + C * bound.n + scale)


def _envelopes(bound, dual, lo, hi):
    """``(Pa, Na, Pb, Nb, fa, fb, err)``: the class sums' envelopes of both duals on ``[lo, hi]``
    and the weights' Bernstein coefficients there (clipped at 0, where the exact ones lie) with
    their rounding."""
    A, B = (p.alpha for p in dual.points)
    (Sa_lo, Sb_lo), (Sa_hi, Sb_hi) = (bound.pair_sums(A, B, x) for x in (lo, hi))
    W = np.maximum(dual.restrict(lo, hi), 0.0)
    return (*bound.class_envelopes(Sa_lo, Sa_hi, lo, hi), *bound.class_envelopes(Sb_lo, Sb_hi, lo, hi),
            W[0], W[1], dual.allowance())


def _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb):
    """Bernstein coefficients of a polynomial above :math:`\\alpha(s)^\\top Q\\alpha(s)` and of
    :math:`1^\\top\\alpha(s)` (both raised to one degree):
    :math:`\\alpha^\\top Q\\alpha = f_a^2 A^\\top Q A + 2 f_a f_b A^\\top Q B + f_b^2 B^\\top Q B` with
    :math:`A^\\top Q B = \\sum_i A_i (P^B_i - N^B_i)`, each term below its Hermite polynomials and the
    weights nonnegative."""
    def quad(P, N, w):
        return hermite_upper(P.combine(w)) - hermite_lower(N.combine(w))

    q = (bernstein_product(bernstein_product(fa, fa), quad(Pa, Na, A))
         + 2.0 * bernstein_product(bernstein_product(fa, fb), quad(Pb, Nb, A))
         + bernstein_product(bernstein_product(fb, fb), quad(Pb, Nb, B)))
    linear = bernstein_product(fa * block_sum(A) + fb * block_sum(B), np.ones(q.size - fa.size + 1))  # raised to q's degree
    return q, linear


def _allowances(bound, dual, lo, hi, magnitude, C, err, scale):
    """Rounding (one margin), the kernel entries' rounding per unit of the larger dual's sum
    (the weights sum to at most 1 in every coefficient) and the weights' rounding, for the gap
    (``C`` the SVM's) or the dual objective alone (``C = 0``), of the dual scaled by ``scale``."""
    A, B = (p.alpha for p in dual.points)
    return (bound.rounding_margin(magnitude, dual)
            + bound.entry_allowance(max(A.sum(), B.sum()), C, lo, hi, 0.5 * (1.0 + scale * scale))
            + weight_allowance(bound, dual, err, C, scale))


def moving_bound(bound, primal, dual, lo, hi, scale=1.0):
    """Upper bound of the moving pair's gap on every :math:`\\tau` of ``[lo, hi]`` (``lo < hi``).

    With :math:`s` the position in the piece, :math:`y_i(K_\\tau w(\\tau))_i = f_a(P^A_i - N^A_i) +
    f_b(P^B_i - N^B_i)` is above the polynomial :math:`f_a(\\mathrm{lower}(P^A_i) -
    \\mathrm{upper}(N^A_i)) + f_b(\\ldots B)`; each hinge argument :math:`1 - y_i b(\\tau) -
    y_i(K_\\tau w)_i` is below a polynomial :math:`r_i` (the bias polynomial raised to its degree)
    and the rest of the gap below :math:`q - 1^\\top\\alpha` (:func:`_objective_terms`); their
    maximum over the piece is bounded at 17 nodes with a curvature lift
    (:func:`~approxpath.bernstein.max_hinge_sum`).  With the dual scaled by ``scale``
    (``SVMBound.scaled_gap``) :math:`q` enters times :math:`\\tfrac12(1 + s^2)` and
    :math:`1^\\top\\alpha` times ``s``.  ``bound`` on a bandwidth path; ``primal`` read for its bias
    polynomial (``bound.bias_polynomial``); ``dual``: two points :math:`\\alpha_a, \\alpha_b` with their weight
    polynomials.  The bound is :func:`~approxpath.bernstein.max_hinge_sum`'s plus the rounding, the kernel
    entries' and the weights' allowances and ``C n`` times the bias's rounding.
    """
    (A, B), C, y = (p.alpha for p in dual.points), bound.c, bound.y
    quad = 0.5 * (1.0 + scale * scale)
    Pa, Na, Pb, Nb, fa, fb, err = _envelopes(bound, dual, lo, hi)
    margin = (bernstein_product(fa, hermite_lower(Pa) - hermite_upper(Na))
              + bernstein_product(fb, hermite_lower(Pb) - hermite_upper(Nb)))  # below y * K w
    bias, bias_err, bias_top = bound.bias_polynomial(primal, lo, hi, margin.shape[1] - 1)
    r = 1.0 - y[:, None] * bias - margin
    q, linear = _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb)
    best, lift = max_hinge_sum(quad * q - scale * linear, r, C, _NODES)
    mags = Pa.magnitude() + Na.magnitude() + Pb.magnitude() + Nb.magnitude()
    magnitude = (lift + quad * float((A + B) @ mags) + C * float(mags.sum()) + scale * A.sum() + scale * B.sum()
                 + C * bound.n * bias_top)
    return best + _allowances(bound, dual, lo, hi, magnitude, C, err, scale) + C * bound.n * bias_err


def moving_dual_floor(bound, dual, lo, hi, scale=1.0):
    """Lower bound of the moving dual's objective :math:`1^\\top\\alpha - \\tfrac12\\alpha^\\top
    Q\\alpha` on ``[lo, hi]``: the smallest Bernstein coefficient of ``linear - q/2`` (convex
    hull), less half the entries' allowance and the rounding; at a point, its value there.  With
    ``scale`` s: the objective of the dual scaled by s, ``s linear - s^2 q / 2``.  In both cases also
    less :func:`weight_allowance` with C = 0.  ``dual``: two points with their weight polynomials;
    ``lo <= hi`` the piece's bandwidths (where they agree, a point of either path)."""
    A, B = (p.alpha for p in dual.points)
    err = dual.allowance()
    half = 0.5 * scale * scale
    if lo == hi:
        alpha, Kw, _ = bound.dual_at_point(dual, lo)
        d = scale * block_sum(alpha) - half * float(block_sum(bound.y * alpha * Kw))
        a_sum = A.sum() + B.sum()
        return (d - bound.rounding_margin(2.0 * half * a_sum * a_sum + scale * a_sum, dual)
                - weight_allowance(bound, dual, err, 0.0, scale))
    Pa, Na, Pb, Nb, fa, fb, err = _envelopes(bound, dual, lo, hi)
    q, linear = _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb)
    mags = Pa.magnitude() + Na.magnitude() + Pb.magnitude() + Nb.magnitude()
    magnitude = 2.0 * half * (float(np.abs(q).max()) + float((A + B) @ mags)) + scale * A.sum() + scale * B.sum()
    return float((scale * linear - half * q).min()) - _allowances(bound, dual, lo, hi, magnitude, 0.0, err, scale)
