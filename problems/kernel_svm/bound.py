"""Certificate side of the hinge-loss kernel SVM (numpy only: what ``approxpath verify`` builds).

A stored piece is a dual :math:`\\alpha` and a primal :math:`(w, b)` with :math:`w = y\\circ\\alpha`
and :math:`\\xi = \\max(0, 1 - y\\circ(K_\\tau w + b))`, so the gap at :math:`\\tau` is
:math:`\\alpha^\\top Q_\\tau \\alpha + C\\,\\mathbf 1^\\top\\xi - \\mathbf 1^\\top\\alpha` with
:math:`Q_\\tau = K_\\tau \\circ yy^\\top`.  On a piece of a bandwidth path either side may *move*
(:class:`~approxpath.moving.Moving`): the dual a combination :math:`\\sum_k f_k(\\tau)\\alpha_k` of
exactly feasible duals with nonnegative weight polynomials summing to at most 1 (:mod:`.moving`),
the primal the combination of the :math:`(y\\circ\\alpha_k, b_k)` with the same weights plus points
that carry only a bias: a bias polynomial in :math:`\\tau` (e.g. the line through the bias rule's
values at the piece's ends).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from approxpath.bound import KernelBound, Option
from approxpath.errors import InputError
from approxpath.bernstein import bernstein_product
from approxpath.envelopes import Envelope, envelope_entry_error, hermite_lower, hermite_upper
from approxpath.moving import is_moving
from approxpath.numerics import UNIT_ROUNDOFF, block_sum, fp_margin, sum_chain
from approxpath.validate import binary_labels

from .c_path import c_dual_floor, c_gap
from .feasibility import pair_errors
from .fixed import fixed_bound, fixed_dual_floor
from .moving import moving_bound, moving_dual_floor, weight_allowance
from .points import SVMDual, SVMPrimal, digest

__all__ = ["SVMBound", "BIAS_RULES", "DUAL_RESTORATIONS"]

#: Bias restorations of the primal (see ``KernelSVM``).
BIAS_RULES = ("fixed", "dynamic", "optimal")
#: Pairs of an interpolating bandwidth path: moving (:mod:`.moving`) or fixed on a piece (a
#: search option, recorded so that versions before moving pairs refuse such a file).
DUAL_RESTORATIONS = ("moving", "fixed")
# Dependent roundings along any value a bound of this module computes, beyond the class sums'
# chain (the provider's ``product_chain``: products with D and D^2 factors, sums in a known
# structure) and one sum over the samples (``sum_chain(n)``: alpha' P, the hinge sum, alpha' K w,
# each a ``block_sum``; a term rounded within gamma_a of its magnitude, then summed within
# gamma_b, is within gamma_{a + b}).  The longest, a moving pair's quadratic term on a bandwidth
# piece: the sums' signs and gathers into envelopes are exact; after the sum over the samples,
# the Hermite coefficients (8) and their difference (1), the weights' Bernstein products f_a f_a
# (9 terms, rounded weights, the products: 11) and with the quadratic term (30 terms: 32), the
# three terms' sum (2), the factor of the quadratic term and the linear term (3), a node value
# (10 terms; the basis values at k/16 exact) with its lift (6) and C times the hinge sum added
# (1): 79 (a hinge argument's, 49, and a point gap's, 15, are shorter; a mix of cached sums or
# moving points adds 3).  fp_margin adds 16.
_CHAIN = 96
# Kernel products use only the support vectors' kernel columns when they are fewer than this
# share of n (gathering the rows costs a copy; a1a, n = 1605: all columns 4.2 ms, 0.8 of them
# 4.0 ms, 0.9 of them 4.6 ms)
_SUPPORT_SHARE = 0.8
# Group sums kept for the next pieces of a verification: consecutive pieces of one segment share
# their two duals and a piece end (a search keeps its own, larger cache: .cache)
_RECENT = 4


def _weights(point, lo, hi):
    """``(points, coefficients (K, m + 1) on [lo, hi], their rounding (K,))`` of a stored point:
    a fixed one is itself with the constant weight 1 (exact)."""
    if not is_moving(point):
        return (point,), np.ones((1, 1)), np.zeros(1)
    return point.points, point.restrict(lo, hi), point.allowance()


class SVMBound(KernelBound):
    """Gap bounds of the kernel SVM over the bandwidth ``t`` (fixed ``c``) or over ``c`` (fixed
    ``bandwidth``).

    On a bandwidth piece every class sum :math:`P_i(x) = \\sum_{j: y_j = y_i}\\alpha_j e^{-xD_{ij}}`
    (and :math:`N_i`, the other class) is completely monotone, so it lies between quintic
    Hermite polynomials (:mod:`approxpath.envelopes`); the gap is maximized over the piece from
    those (:meth:`gap`, :mod:`.fixed`).  On the C path the gap is affine in C: its ends bound it.  Moving pairs
    (bandwidth path, weights of degree <= 2): :mod:`.moving`.
    """

    name = "kernel_svm"
    Primal = SVMPrimal
    Dual = SVMDual
    parameters = ("bandwidth", "c")
    weight = "c"
    blocked_ok = True
    moving_degrees = {"bandwidth": 2, "c": 1}
    # Cells of (t, C) (approxpath.cells): for a pair fixed in C, alpha, w, b and xi do not depend
    # on C, the gap is affine in C with slope 1'xi >= 0, the dual objective does not depend on C
    # and the box [0, C] only grows with C.  A cell's dual may also grow with C (scaled_gap).
    weight_convex = True
    weight_increasing = True
    _transient = KernelBound._transient + ("_recent",)
    OPTIONS = dict(c=Option("positive"), bias=Option("choice", BIAS_RULES, "optimal"),
                   dual_restoration=Option("choice", DUAL_RESTORATIONS, "moving"),
                   bandwidth=Option("positive", default=None))

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.labels, self.y = binary_labels(self.y)
        self._recent = OrderedDict()

    #: C (the option): the box of the dual and the weight of the hinge sum.
    c = property(lambda self: self.options["c"])

    # -------------------------------------------------------------- class sums
    def group_sums(self, alphas, x, order=2):
        """Class sums of each array of ``alphas`` at ``x`` and their first ``order`` derivatives
        in ``x``: one tuple per array, ``S[k][:, 0] = d^k/dx^k exp(-xD) (alpha on the positive
        class)``, ``S[k][:, 1]`` the same over the negative class.  The arrays share one pass
        over the kernel (a group is always computed together: values depend on the group only,
        the sums ``S[0]`` not on ``order``)."""
        x = float(x)
        coef = np.zeros((self.n, 2 * len(alphas)))
        for k, alpha in enumerate(alphas):
            coef[:, 2 * k] = np.where(self.y > 0, alpha, 0.0)
            coef[:, 2 * k + 1] = np.where(self.y < 0, alpha, 0.0)
        rows = np.flatnonzero(coef.any(axis=1))  # only the support vectors' columns of the kernel count
        rows, coef = (None, coef) if rows.size > _SUPPORT_SHARE * self.n else (rows, coef[rows])
        if not self.sweep.along_bandwidth:  # the kernel is fixed on the C path: no derivatives
            F = self.kernels.products(self.sweep.at(x)[0], coef, rows, order=0)[0]
            sums = (F, np.zeros_like(F), np.zeros_like(F))[: order + 1]
        else:
            sums = tuple((-1) ** k * M for k, M in enumerate(self.kernels.products(x, coef, rows, order)))
        return [tuple(M[:, 2 * k:2 * k + 2] for M in sums) for k in range(len(alphas))]

    def pair_sums(self, alpha_a, alpha_b, x):
        """:meth:`group_sums` of the two duals of a moving pair, the last few kept (consecutive
        pieces of a path share them: a verification computes each node once)."""
        if self._recent is None:  # after unpickling
            self._recent = OrderedDict()
        key = (digest(alpha_a), digest(alpha_b), float(x))
        hit = self._recent.get(key)
        if hit is None:
            hit = self._recent[key] = self.group_sums((alpha_a, alpha_b), x)
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return hit

    def _sums(self, dual, x, order=2):
        """:meth:`group_sums` of ``dual.alpha`` alone, the first ``order + 1``."""
        return self.group_sums((dual.alpha,), x, order)[0]

    def margin_count(self, dual):
        """How many rounding margins a bound of ``dual`` adds (1; a search adds more where it
        combines cached products)."""
        return 1

    def Kw(self, dual, x):
        """:math:`K_x w` with :math:`w = y \\circ \\alpha` for a fixed dual, shape (n,)."""
        F = self._sums(dual, x, order=0)[0]
        return F[:, 0] - F[:, 1]

    def dual_at_point(self, dual, x, scale=1.0):
        """``(alpha, Kw, rounding)`` of a (fixed or moving) dual at the path parameter ``x``, as
        computed: :math:`\\alpha(x)`, :math:`K_x y\\circ\\alpha(x)` from the stored duals' class
        sums, and how far the weights' rounding there can move the gap (of the pair whose dual
        is scaled by ``scale``: :meth:`scaled_gap`; :func:`.moving.weight_allowance`; 0 for a
        fixed dual)."""
        if not is_moving(dual):
            return np.asarray(dual.alpha, dtype=float), self.Kw(dual, x), 0.0
        w = dual.weights_at(x)
        A, B = (p.alpha for p in dual.points)
        Sa, Sb = self.pair_sums(A, B, x)
        Kw = w[0] * (Sa[0][:, 0] - Sa[0][:, 1]) + w[1] * (Sb[0][:, 0] - Sb[0][:, 1])
        return w[0] * A + w[1] * B, Kw, weight_allowance(self, dual, dual.allowance(), self.sweep.at(x)[1], scale)

    # -------------------------------------------------------------- the bias
    def bias_coefficients(self, primal, lo, hi):
        """``(coefficients, rounding)`` of the bias :math:`b(\\tau) = \\sum_k f_k(\\tau) b_k` on
        ``[lo, hi]`` in Bernstein form (degree of the primal's weights; a fixed primal: ``[b]``)
        and a bound on how far the computed coefficients are from the exact ones."""
        points, W, err = _weights(primal, lo, hi)
        b = np.array([float(p.b) for p in points])
        coef = b @ W
        mag = np.abs(b) @ np.abs(W)
        return coef, float(np.abs(b) @ err + fp_margin(len(points), float(mag.max())))

    def bias_at(self, primal, x):
        """``(bias, rounding)`` at the path parameter ``x``: the bias as computed and how far it can
        be from exact."""
        if not is_moving(primal):
            return float(primal.b), 0.0
        b = np.array([float(p.b) for p in primal.points])
        w = primal.weights_at(x)
        return float(b @ w), float(np.abs(b) @ primal.allowance() + fp_margin(b.size, float(np.abs(b) @ np.abs(w))))

    # -------------------------------------------------------------- feasibility
    def errors(self, primal, dual, lo, hi):
        """Every stored dual exactly feasible (:math:`0 \\le \\alpha_k \\le C`, :math:`y^\\top\\alpha_k = 0`
        by ``math.fsum``); a moving dual's weights nonnegative with every coefficient column
        summing to at most 1 (``math.fsum``), so that :math:`\\alpha(\\tau)` is a combination of
        feasible duals with nonnegative weights summing to at most 1 at every :math:`\\tau` of the
        span (convex hull; 0 is feasible); the primal's ``w`` equal to :math:`y\\circ\\alpha(\\tau)`
        exactly (:func:`.feasibility.pair_errors`); the bias finite."""
        return pair_errors(self, primal, dual, lo, hi)

    # -------------------------------------------------------------- model selection
    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None, signs=False,
                             weight_range=None, cache=None):
        """Where every exact optimum's decision values at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`).

        With ``weight_range`` ``(C_lo, C_hi)``, ``C_lo < C_hi`` (a cell of :mod:`approxpath.cells`,
        whose dual grows with C: :meth:`scaled_gap`), the dual's function is no longer the
        primal's, and the primal's part of the gap alone bounds the distance:
        :math:`P - P^* \\le` gap and :math:`P - P^* \\ge \\tfrac12\\lVert\\tilde f - \\tilde f^*\\rVert_H^2` give
        :math:`R = \\sqrt{2\\,gap}`.  C does not enter otherwise: the strong convexity does not
        involve it, and it scales the hinge sum whose minimizers are the optimal biases.
        ``cache``: a :class:`~approxpath.compute.caches.ProductMemo` kept across calls."""
        from .enclosure import prediction_enclosure

        if weight_range is not None and weight_range[1] > weight_range[0]:
            gap_bound = 2.0 * gap_bound
        return prediction_enclosure(self, primal, gap_bound, lo, hi, X_new, rows=rows, signs=signs, cache=cache)

    def prediction_enclosures(self, primal, dual, gap_bound, lo, hi, X_new, rows=None, signs=False, cache=None):
        """:meth:`prediction_enclosure` on q intervals of one piece at once (``lo``,
        ``hi`` of shape (q,), each ``lo < hi``), or at q points (``lo == hi``): ``edges``
        (q, J + 1), ``low, up`` (m, q, J), each interval's (point's) cover as
        :meth:`prediction_enclosure` gives it alone."""
        from .enclosure import prediction_enclosure

        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        if not (lo.ndim == 1 and lo.shape == hi.shape and (np.all(lo < hi) or np.all(lo == hi))):
            raise InputError("prediction_enclosures takes intervals lo < hi, or points lo == hi (arrays of one "
                             "shape)")
        return prediction_enclosure(self, primal, gap_bound, lo, hi, X_new, rows=rows, signs=signs, cache=cache)

    # -------------------------------------------------------------- gap bounds
    def gap(self, primal, dual, lo, hi=None):
        return self._gap(primal, dual, lo, hi, 1.0)

    def scaled_gap(self, primal, dual, lo, hi, base):
        """A bound of the gap at this bound's C over ``[lo, hi]`` of the pair whose dual is the
        stored one scaled by :math:`s = C / base` (the primal as stored): a cell
        ``[lo, hi] x [base, C]`` of :mod:`approxpath.cells` lets the dual grow with C.

        :math:`s\\alpha` is feasible at C where :math:`\\alpha` is at ``base`` (the box scales), and
        with :math:`q = \\alpha^\\top Q\\alpha = w^\\top K w` the gap is
        :math:`\\tfrac12(1 + s^2)\\,q + C\\,1^\\top\\xi - s\\,1^\\top\\alpha`: the fixed pair's bound with its
        quadratic term times :math:`\\tfrac12(1 + s^2)` and its linear term times ``s``.  At an
        optimum for ``base`` it is :math:`\\tfrac q2 (s - 1)^2`, second order in the weight where a
        dual held fixed pays :math:`(C - base)\\,1^\\top\\xi`.  ``s`` is computed (a quotient, within
        u relative of exact); the gap's slope in ``s``, :math:`|s q - 1^\\top\\alpha| \\le a + s a^2`
        (``a`` the stored duals' sums), covers the difference."""
        s = self.c / float(base)
        a = sum(float(np.sum(d.alpha)) for d in (dual.points if is_moving(dual) else (dual,)))
        return self._gap(primal, dual, lo, hi, s) + 1.01 * UNIT_ROUNDOFF * s * (a + 1.01 * s * a * a)

    def _gap(self, primal, dual, lo, hi, scale):
        """:meth:`gap` (``scale`` 1) or :meth:`scaled_gap` (the dual scaled by ``scale``)."""
        hi = lo if hi is None else hi
        if hi != lo and self.sweep.along_bandwidth:
            if is_moving(dual):
                return moving_bound(self, primal, dual, lo, hi, scale)
            return fixed_bound(self, primal, dual, lo, hi, self._class_envelopes(dual, lo, hi), scale)
        if hi != lo and (is_moving(dual) or is_moving(primal)):  # the C path (scale 1: cells are bandwidth paths)
            return c_gap(self, primal, dual, lo, hi)
        # a point, or the C path: alpha, w, b and xi do not depend on C and the primal is affine
        # in C, so the gap is affine in C and its maximum on [lo, hi] is at an end point.
        gaps = [self._point_gap(primal, dual, tau, scale) for tau in sorted({lo, hi})]
        return max(g for g, _ in gaps) + self.rounding(primal, dual, hi, scale) + max(r for _, r in gaps)

    def rounding(self, primal, dual, t, scale=1.0):
        """The rounding margins of a point gap at ``t`` (at the larger C of a C piece ending at
        ``t``), of the dual scaled by ``scale``."""
        C = self.sweep.at(t)[1]
        a_sum = sum(float(np.sum(d.alpha)) for d in (dual.points if is_moving(dual) else (dual,)))
        b = max(abs(float(p.b)) for p in (primal.points if is_moving(primal) else (primal,)))
        b *= float(np.abs(primal.weights).sum(axis=0).max()) if is_moving(primal) else 1.0
        mag = 0.5 * (1.0 + scale * scale) * a_sum ** 2 + C * self.n * (2.0 + b + a_sum) + scale * a_sum
        return self.rounding_margin(mag, dual)

    def _point_gap(self, primal, dual, tau, scale=1.0):
        """``(gap as computed, the weights' rounding)`` at ``tau``:
        :math:`w^\\top K w + C\\,1^\\top\\xi - 1^\\top\\alpha` from the class sums
        (:math:`w = y\\circ\\alpha`, which :meth:`errors` checks); with the dual scaled by
        ``scale`` (:meth:`scaled_gap`),
        :math:`\\tfrac12(1 + s^2)\\, w^\\top K w + C\\,1^\\top\\xi - s\\,1^\\top\\alpha`."""
        C = self.sweep.at(tau)[1]
        alpha, Kw, rounding = self.dual_at_point(dual, tau, scale)
        b, b_err = self.bias_at(primal, tau)
        xi = np.maximum(0.0, 1.0 - self.y * (Kw + b))
        return (0.5 * (1.0 + scale * scale) * float(block_sum(self.y * alpha * Kw)) + C * float(block_sum(xi))
                - scale * float(block_sum(alpha)), rounding + C * self.n * b_err)

    def claimed_excess(self, primal, dual, tau):
        """How far the objective of a claimed point ``primal`` :math:`(w, b)` at ``tau`` may exceed
        that of :math:`(y\\circ\\alpha, b)`, the primal :meth:`gap` reads from ``dual`` (a fixed
        :math:`\\alpha`; a stored pair has :math:`w = y\\circ\\alpha`, which :meth:`errors` checks, but
        a cross-check's claimed :math:`w` is not made from its restored dual): the two objectives'
        difference as computed, at least 0, plus their rounding (entries of :math:`K` at most 1,
        so :math:`|w|^\\top K|w| \\le \\lVert w\\rVert_1^2`)."""
        C = self.sweep.at(tau)[1]
        b = float(primal.b)

        def objective(w):
            Kw = self.Kw(SVMDual(alpha=self.y * w), tau)
            return 0.5 * float(block_sum(w * Kw)) + C * float(block_sum(np.maximum(0.0, 1.0 - self.y * (Kw + b))))

        claimed, read = np.asarray(primal.w, dtype=float), self.y * np.asarray(dual.alpha, dtype=float)
        a, c = float(np.abs(claimed).sum()), float(np.abs(read).sum())
        magnitude = 0.5 * (a * a + c * c) + C * self.n * (2.0 + 2.0 * abs(b) + a + c)
        return max(0.0, objective(claimed) - objective(read)) + 2.0 * self.rounding_margin(magnitude, dual)

    def rounding_margin(self, magnitude, dual):
        """Rounding allowance of a bound of ``dual`` whose terms are at most ``magnitude``: one
        margin, or :meth:`margin_count` of them where its sums were rounded otherwise than a
        verifier's (every bound of a pair takes its allowance here, fixed or moving, point or
        piece, bandwidth or C)."""
        chain = self.kernels.product_chain() + sum_chain(self.n) + _CHAIN
        return self.margin_count(dual) * (fp_margin(chain, magnitude) + self.entry_error * magnitude)

    def _class_envelopes(self, dual, lo, hi):
        """Envelopes of the class sums on [lo, hi].

        With :math:`P_i(x) = \\sum_{j: y_j = y_i} \\alpha_j e^{-xD_{ij}}` and :math:`N_i` the
        sum over the other class, :math:`y_i(K_x w)_i = P_i - N_i` and
        :math:`\\alpha^\\top Q_x \\alpha = \\sum_i \\alpha_i (P_i - N_i)`.  Every
        :math:`P_i, N_i` is a nonnegative exponential sum (:mod:`approxpath.envelopes`).
        Returns ``(P, N, q)``: ``q`` the Bernstein coefficients (6,) of a quintic above
        :math:`\\alpha^\\top Q_x \\alpha = \\alpha^\\top P - \\alpha^\\top N` on the piece.
        """
        alpha = np.asarray(dual.alpha, dtype=float)
        P, N = self.class_envelopes(self._sums(dual, lo), self._sums(dual, hi), lo, hi)
        return P, N, hermite_upper(P.combine(alpha)) - hermite_lower(N.combine(alpha))

    def class_envelopes(self, S_lo, S_hi, lo, hi):
        """``(P, N)``: the :class:`~approxpath.envelopes.Envelope` of each row's sum over its own
        class and over the other class on ``[lo, hi]``, from one dual's class sums and their
        derivatives at the two ends (:meth:`group_sums`)."""
        rows = np.arange(self.n)
        same = np.where(self.y > 0, 0, 1)

        def env(col):
            return Envelope(lo, hi, S_lo[0][rows, col], S_hi[0][rows, col], S_lo[1][rows, col],
                            S_hi[1][rows, col], S_lo[2][rows, col], S_hi[2][rows, col])

        return env(same), env(1 - same)

    def dual_floor(self, dual, lo, hi=None):
        return self._dual_floor(dual, lo, hi, 1.0)

    def scaled_dual_floor(self, dual, lo, hi, base):
        """:meth:`dual_floor` of the dual scaled by :math:`s = C / base` (:meth:`scaled_gap`):
        :math:`s\\,1^\\top\\alpha - \\tfrac{s^2}2 \\alpha^\\top Q\\alpha`, less the effect of the rounding of ``s``."""
        s = self.c / float(base)
        a = sum(float(np.sum(d.alpha)) for d in (dual.points if is_moving(dual) else (dual,)))
        return self._dual_floor(dual, lo, hi, s) - 1.01 * UNIT_ROUNDOFF * s * (a + 1.01 * s * a * a)

    def _dual_floor(self, dual, lo, hi, scale):
        hi = lo if hi is None else hi
        if is_moving(dual) and hi > lo and not self.sweep.along_bandwidth:
            return c_dual_floor(self, dual, lo, hi)
        if is_moving(dual):
            return moving_dual_floor(self, dual, lo, hi, scale)
        if self.sweep.along_bandwidth and hi != lo:
            return fixed_dual_floor(self, dual, lo, hi, self._class_envelopes(dual, lo, hi), scale)
        alpha = np.asarray(dual.alpha, dtype=float)
        half = 0.5 * scale * scale
        d = -half * float(block_sum(self.y * alpha * self.Kw(dual, lo))) + scale * float(block_sum(alpha))
        mag = 2.0 * half * alpha.sum() ** 2 + scale * alpha.sum()
        return d - self.rounding_margin(mag, dual)

    def entry_allowance(self, a1, C, lo, hi, quad=1.0):
        """How far the kernel entries' rounding can move a piece's bound of
        :math:`\\alpha^\\top Q \\alpha + C \\sum_i \\max(0, r_i)`, with ``a1`` :math:`= 1^\\top\\alpha`.

        Every Bernstein coefficient of a class sum's polynomials is off by at most
        :func:`~approxpath.envelopes.envelope_entry_error` per unit of the coefficients summed
        (whatever the entries' size: at large t the computed sums, and the magnitudes of
        :meth:`rounding_margin`, can be far below :math:`1^\\top\\alpha`, and the derivative entries
        carry factors w/lo), so the quadratic term's by that times ``a1**2`` and each hinge
        argument's by that times ``a1``; node values move by at most 1.04 times a
        coefficient's error (convex combinations plus the lift, see
        :func:`~approxpath.bernstein.max_hinge_sum`).  ``quad`` multiplies the quadratic term
        (:meth:`scaled_gap`).
        """
        return 1.05 * envelope_entry_error(lo, hi, self.entry_terms) * a1 * (quad * a1 + C * self.n)

    def bias_polynomial(self, primal, lo, hi, degree):
        """``(coefficients (degree + 1,), rounding, magnitude)``: the bias on ``[lo, hi]`` raised to
        ``degree`` (a constant bias exactly), the bound on the coefficients' error (the weights'
        rounding, the sums and the degree elevation: convex combinations) and their largest
        absolute value."""
        coef, err = self.bias_coefficients(primal, lo, hi)
        if coef.size == 1:
            return np.full(degree + 1, coef[0]), err, abs(float(coef[0]))
        top = float(np.abs(coef).max())
        raised = bernstein_product(coef, np.ones(degree - coef.size + 2))
        return raised, err + fp_margin(2 * degree + 2, top), top
