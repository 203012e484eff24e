"""Certificate side of the SVM's *moving* pairs on a bandwidth piece (numpy only).

Between two exact solves with duals :math:`\\alpha_a, \\alpha_b` the optimum moves with the
bandwidth, and a pair that stays fixed on a piece pays for that drift with a gap linear in the
piece's width.  A moving pair lets the combination weight follow the bandwidth:

.. math::

    \\alpha(t) = (1 - \\theta(t))\\,\\alpha_a + \\theta(t)\\,\\alpha_b,\\qquad
    w(t) = y \\circ \\alpha(t),

with :math:`\\theta` the quadratic with Bernstein coefficients :math:`c_0, c_1, c_2` on a span
:math:`[t_0, t_1]`: :math:`\\theta(t) = c_0(1 - s)^2 + 2c_1 s(1 - s) + c_2 s^2`,
:math:`s = (t - t_0)/(t_1 - t_0)` (the search puts it through the best weights at a piece's
ends and middle: the best weight is not linear in t).  The SVM's dual set
:math:`\\{0 \\le \\alpha \\le C,\\ y^\\top\\alpha = 0\\}` does not depend on :math:`t`, so
:math:`\\alpha(t)` is feasible wherever :math:`\\theta(t) \\in [0, 1]`: for every :math:`t` of the
span once every :math:`c_j \\in [0, 1]` (convex hull) and both duals are feasible (checked
exactly).  The gap bound (:func:`moving_bound`) multiplies the Hermite envelopes of both duals'
class sums by the nonnegative weight polynomials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from approxpath.envelopes import bernstein_product, hermite_lower, hermite_upper, max_hinge_sum
from approxpath.numerics import UNIT_ROUNDOFF

__all__ = ["Motion", "motion_errors", "moving_bound", "moving_point", "moving_dual_floor"]

# Sub-intervals over which a moving pair's gap bound is maximized (as for a fixed pair).
_NODES = 16
# Roundings in a weight computed from the stored coefficients, each of size at most 1: the
# positions s (3), 1 - s, a blossom or a value (8) and 1 - theta (1): at most 16 unit roundoffs
_WEIGHT_ROUNDINGS = 16


@dataclass(frozen=True)
class Motion:
    """How a pair moves with the bandwidth: the second dual ``alpha_b`` (n,) and the weight
    :math:`\\theta`, a quadratic with Bernstein coefficients ``theta`` (3) on ``span``
    :math:`(t_0, t_1)`; the pair at ``t`` is built from :math:`(1 - \\theta(t))\\alpha +
    \\theta(t)\\alpha_b`, ``alpha`` the pair's own dual."""

    alpha_b: np.ndarray
    theta: tuple
    span: tuple

    def _positions(self, *ts):
        t0, t1 = self.span
        return [(t - t0) / (t1 - t0) for t in ts]

    def coefficients(self, lo, hi):
        """Bernstein coefficients (3,) of :math:`\\theta` on ``[lo, hi]`` (inside the span): the
        blossom :math:`b(u, v) = c_0(1 - u)(1 - v) + c_1((1 - u)v + u(1 - v)) + c_2 uv` at
        :math:`(s_{lo}, s_{lo}), (s_{lo}, s_{hi}), (s_{hi}, s_{hi})`, convex combinations of the
        stored ones (computed; clipped to [0, 1], where the exact ones lie)."""
        if (lo, hi) == tuple(self.span):
            return np.array(self.theta, dtype=float)
        c0, c1, c2 = self.theta
        u, v = self._positions(lo, hi)

        def blossom(a, b):
            return c0 * (1 - a) * (1 - b) + c1 * ((1 - a) * b + a * (1 - b)) + c2 * a * b

        return np.clip([blossom(u, u), blossom(u, v), blossom(v, v)], 0.0, 1.0)

    def weight(self, t):
        """:math:`\\theta(t)` (computed; clipped to [0, 1])."""
        return float(self.coefficients(t, t)[0])

    def alpha(self, alpha_a, t):
        """:math:`\\alpha(t)` (n,), as computed."""
        th = self.weight(t)
        return (1.0 - th) * alpha_a + th * self.alpha_b


def motion_errors(motion, primal_motion, y, C, lo, hi):
    """Why a moving pair is not exactly feasible on ``[lo, hi]`` (a list; empty if it is):
    ``alpha_b`` feasible (``0 <= alpha_b <= C``, ``y'alpha_b = 0`` by ``math.fsum``), the weight's
    three coefficients in [0, 1], ``[lo, hi]`` inside the span, and the primal moving with the
    same data."""
    b = np.asarray(motion.alpha_b, dtype=float)
    if b.shape != y.shape or not np.all(np.isfinite(b)):
        return [f"alpha_b must be {y.size} finite numbers"]
    errors = []
    if b.min() < 0 or b.max() > C:
        errors.append(f"alpha_b leaves [0, C = {C:.6g}] ({b.min():.3g} .. {b.max():.17g})")
    if math.fsum(y * b) != 0.0:
        errors.append(f"y'alpha_b = {math.fsum(y * b):.3g} is not exactly 0")
    span, theta = tuple(motion.span), tuple(motion.theta)
    if len(span) != 2 or not np.all(np.isfinite(span)):
        return errors + [f"the weight's span {span!r} is not 2 finite numbers"]
    t0, t1 = span
    if len(theta) != 3 or not all(0.0 <= c <= 1.0 for c in theta):
        errors.append(f"the weight's coefficients {theta!r} are not 3 numbers in [0, 1]")
    if not (t0 < t1 and t0 <= lo and hi <= t1):
        errors.append(f"the piece [{lo!r}, {hi!r}] is not inside the weight's span [{t0!r}, {t1!r}]")
    if primal_motion is None or not (np.array_equal(primal_motion.alpha_b, b) and tuple(primal_motion.theta) == theta
                                     and tuple(primal_motion.span) == (t0, t1)):
        errors.append("the primal does not move with the dual (w = y * alpha(t))")
    return errors


def _weight_allowance(a_sum, C, n):
    """How far the gap can move when the weight is off by 16 roundings: the gap's derivative in
    theta is :math:`2v^\\top Q\\alpha + C\\sum_i |(K(y\\circ v))_i| + |1^\\top v|` at most, with
    :math:`v = \\alpha_b - \\alpha_a` and :math:`|Q_{ij}|, |K_{ij}| \\le 1`, so at most
    ``a_sum * (2 a_sum + C n + 1)`` for ``a_sum`` :math:`= 1^\\top\\alpha_a + 1^\\top\\alpha_b`."""
    return _WEIGHT_ROUNDINGS * UNIT_ROUNDOFF * a_sum * (2.0 * a_sum + C * n + 1.0)


def moving_point(bound, dual, x):
    """``(alpha, Kw)`` of the moving dual at the bandwidth ``x``, as computed: :math:`K_x w(x)`
    combined from both duals' class sums (shape (n,) each)."""
    m = dual.motion
    th = m.weight(x)
    Sa, Sb = bound.pair_sums(dual.alpha, m.alpha_b, x)
    Kw = (1.0 - th) * (Sa[0][:, 0] - Sa[0][:, 1]) + th * (Sb[0][:, 0] - Sb[0][:, 1])
    return m.alpha(dual.alpha, x), Kw


def point_allowance(bound, dual, x):
    """The weight's rounding at a point ``x`` (and that of :math:`1 - \\theta`)."""
    return _weight_allowance(dual.alpha.sum() + dual.motion.alpha_b.sum(), bound.c, bound.n)


def _envelopes(bound, dual, lo, hi):
    """``(Pa, Na, Pb, Nb, fa, fb)``: the class sums' envelopes of both duals on ``[lo, hi]`` and
    the weights' Bernstein coefficients (degree 2, in [0, 1]): :math:`1 - \\theta` and
    :math:`\\theta`."""
    m = dual.motion
    (Sa_lo, Sb_lo), (Sa_hi, Sb_hi) = (bound.pair_sums(dual.alpha, m.alpha_b, x) for x in (lo, hi))
    th = m.coefficients(lo, hi)
    return (*bound.class_envelopes(Sa_lo, Sa_hi, lo, hi), *bound.class_envelopes(Sb_lo, Sb_hi, lo, hi), 1.0 - th, th)


def _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb):
    """Bernstein coefficients (10,) of a polynomial above :math:`\\alpha(s)^\\top Q\\alpha(s)` and
    (10,) of :math:`1^\\top\\alpha(s)`:
    :math:`\\alpha^\\top Q\\alpha = (1-\\theta)^2 A^\\top Q A + 2\\theta(1-\\theta) A^\\top Q B
    + \\theta^2 B^\\top Q B` with :math:`A^\\top Q B = \\sum_i A_i (P^B_i - N^B_i)`, each term
    below its Hermite polynomials and the weights nonnegative."""
    def quad(P, N, w):
        return hermite_upper(P.combine(w)) - hermite_lower(N.combine(w))

    q = (bernstein_product(bernstein_product(fa, fa), quad(Pa, Na, A))
         + 2.0 * bernstein_product(bernstein_product(fa, fb), quad(Pb, Nb, A))
         + bernstein_product(bernstein_product(fb, fb), quad(Pb, Nb, B)))
    linear = bernstein_product(fa * A.sum() + fb * B.sum(), np.ones(8))  # degree raised to 9
    return q, linear


def _allowances(bound, dual, lo, hi, magnitude, C):
    """Rounding (one margin), the kernel entries' rounding per unit of the larger dual's sum
    (the weights sum to 1 in every coefficient) and the weights' rounding (the coefficients of
    :math:`1 - \\theta`, and of :math:`\\theta` off the span), for the gap (``C`` the SVM's) or the
    dual objective alone (``C = 0``)."""
    A, B = dual.alpha, dual.motion.alpha_b
    return (bound._margin(magnitude) + bound._entry_allowance(max(A.sum(), B.sum()), C, lo, hi)
            + _weight_allowance(A.sum() + B.sum(), C, bound.n))


def moving_bound(bound, primal, dual, lo, hi):
    """Upper bound of the moving pair's gap on every :math:`\\tau` of ``[lo, hi]`` (``lo < hi``).

    With :math:`s` the position in the piece, :math:`\\theta(s)` is a quadratic with
    coefficients in [0, 1], so :math:`y_i(K_\\tau w(\\tau))_i = (1 - \\theta)(P^A_i - N^A_i) +
    \\theta(P^B_i - N^B_i)` is above the degree-7 polynomial :math:`(1 - \\theta)(\\mathrm{lower}(P^A_i)
    - \\mathrm{upper}(N^A_i)) + \\theta(\\ldots B)`; each hinge argument :math:`1 - y_i b(\\tau) -
    y_i(K_\\tau w)_i` is below a polynomial :math:`r_i` and the rest of the gap below the degree-9
    :math:`q - 1^\\top\\alpha` (:func:`_objective_terms`); their maximum over the piece is bounded
    at 17 nodes with a curvature lift (:func:`~approxpath.envelopes.max_hinge_sum`).
    """
    A, B, C, y = dual.alpha, dual.motion.alpha_b, bound.c, bound.y
    Pa, Na, Pb, Nb, fa, fb = _envelopes(bound, dual, lo, hi)
    margin = (bernstein_product(fa, hermite_lower(Pa) - hermite_upper(Na))
              + bernstein_product(fb, hermite_lower(Pb) - hermite_upper(Nb)))  # (n, 8), below y * K w
    bias = primal.bias(lo) + (np.arange(8) / 7) * (primal.bias(hi) - primal.bias(lo))  # a line in Bernstein form
    r = 1.0 - y[:, None] * bias - margin
    q, linear = _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb)
    best, scale = max_hinge_sum(q - linear, r, C, _NODES)
    mags = Pa.magnitude() + Na.magnitude() + Pb.magnitude() + Nb.magnitude()
    magnitude = (scale + float((A + B) @ mags) + C * float(mags.sum()) + A.sum() + B.sum()
                 + C * bound.n * (abs(primal.b) + abs(primal.b_slope) * hi))
    return best + _allowances(bound, dual, lo, hi, magnitude, C)


def moving_dual_floor(bound, dual, lo, hi):
    """Lower bound of the moving dual's objective :math:`1^\\top\\alpha - \\tfrac12\\alpha^\\top
    Q\\alpha` on ``[lo, hi]``: the smallest Bernstein coefficient of ``linear - q/2`` (convex
    hull), less half the entries' allowance and the rounding."""
    A, B = dual.alpha, dual.motion.alpha_b
    if lo == hi:
        alpha, Kw = moving_point(bound, dual, lo)
        d = alpha.sum() - 0.5 * float((bound.y * alpha) @ Kw)
        a_sum = A.sum() + B.sum()
        return d - bound._margin(a_sum * a_sum + a_sum) - _weight_allowance(a_sum, 0.0, bound.n)
    Pa, Na, Pb, Nb, fa, fb = _envelopes(bound, dual, lo, hi)
    q, linear = _objective_terms(A, B, Pa, Na, Pb, Nb, fa, fb)
    mags = Pa.magnitude() + Na.magnitude() + Pb.magnitude() + Nb.magnitude()
    magnitude = float(np.abs(q).max()) + float((A + B) @ mags) + A.sum() + B.sum()
    return float((linear - 0.5 * q).min()) - _allowances(bound, dual, lo, hi, magnitude, 0.0)
