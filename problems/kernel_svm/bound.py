"""Certificate side of the hinge-loss kernel SVM (numpy only: what ``approxpath verify`` builds).

A stored piece is :math:`(\\alpha, b, b_{slope})`: :math:`w = y\\circ\\alpha`, the bias
:math:`b + b_{slope}\\tau` (linear in the bandwidth on a piece of a bandwidth path) and
:math:`\\xi = \\max(0, 1 - y\\circ(K_\\tau w + b))`, so the gap at :math:`\\tau` is
:math:`\\alpha^\\top Q_\\tau \\alpha + C\\,\\mathbf 1^\\top\\xi - \\mathbf 1^\\top\\alpha` with
:math:`Q_\\tau = K_\\tau \\circ yy^\\top`.  A piece of a bandwidth path may hold a *moving* pair
(:mod:`.moving`): :math:`\\alpha` replaced by :math:`(1 - \\theta(\\tau))\\alpha + \\theta(\\tau)\\alpha_b`.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from approxpath.bound import KernelBound, Option
from approxpath.envelopes import Envelope, envelope_entry_error, hermite_lower, hermite_upper, max_hinge_sum
from approxpath.numerics import fp_margin
from approxpath.validate import binary_labels

from .moving import Motion, motion_errors, moving_bound, moving_dual_floor, moving_point, point_allowance

__all__ = ["SVMBound", "SVMPrimal", "SVMDual", "BIAS_RULES", "DUAL_RESTORATIONS", "Motion", "digest"]

#: Bias restorations of the primal (see ``KernelSVM``).
BIAS_RULES = ("fixed", "dynamic", "optimal")
#: Pairs of an interpolating bandwidth path: moving (:mod:`.moving`) or fixed on a piece (a
#: search option, recorded so that versions before moving pairs refuse such a file).
DUAL_RESTORATIONS = ("moving", "fixed")
# Kernel products use only the support vectors' kernel columns when they are fewer than this
# share of n (gathering the rows costs a copy; a1a, n = 1605: all columns 4.2 ms, 0.8 of them
# 4.0 ms, 0.9 of them 4.6 ms)
_SUPPORT_SHARE = 0.8
# Sub-intervals over which the gap bound of a piece is maximized (ionosphere / diabetes / a1a
# at eps = 0.125: 33 / 46 / 45 pieces with 4, 31 / 41 / 44 with 8, 31 / 41 / 43 with 16,
# 31 / 41 / 42 with 32; the cost is an (n, 6) x (6, 17) product)
_NODES = 16
# Group sums kept for the next pieces of a verification: consecutive pieces of one segment share
# their two duals and a piece end (a search keeps its own, larger cache: .cache)
_RECENT = 4


@dataclass(frozen=True)
class SVMPrimal:
    """Primal point: ``w`` (n,), bias ``b + b_slope * t`` (linear in the bandwidth ``t`` on a
    piece of a bandwidth path; ``b_slope`` is 0 at a point and on the C path); slacks ``xi``
    (n,) once evaluated at a parameter (``KernelSVM.primal_at``, which also fixes the bias
    there: ``b`` at ``t`` and ``b_slope = 0``)."""

    w: np.ndarray
    b: float
    xi: np.ndarray = None
    b_slope: float = 0.0
    #: A moving pair's :class:`~.moving.Motion` (then ``w`` is :math:`y\\circ\\alpha` of the first dual).
    motion: Motion = field(default=None, compare=False, repr=False)

    def bias(self, t):
        """The bias at bandwidth ``t`` (``b`` exactly when ``b_slope`` is 0)."""
        return self.b + self.b_slope * t


@dataclass(frozen=True)
class SVMDual:
    """Dual point: ``alpha`` (n,); with ``motion`` (:class:`~.moving.Motion`) a moving dual
    :math:`(1 - \\theta(t))\\alpha + \\theta(t)\\alpha_b`.

    ``mix`` (not part of the certificate) records that ``alpha`` equals
    ``(1 - theta) alpha_a + theta alpha_b`` *exactly*, as ``(alpha_a, alpha_b, theta)``, so a
    search computes kernel products of ``alpha`` as combinations of the parents'.
    """

    alpha: np.ndarray
    mix: tuple = field(default=None, compare=False, repr=False)
    motion: Motion = field(default=None, compare=False, repr=False)

    def __reduce__(self):  # the parents in ``mix`` are a cache: do not ship them
        return (SVMDual, (self.alpha, None, self.motion))


def digest(a):
    """A key for the content of the array ``a`` (cache keys: equal arrays give equal keys)."""
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


class SVMBound(KernelBound):
    """Gap bounds of the kernel SVM over the bandwidth ``t`` (fixed ``c``) or over ``c`` (fixed
    ``bandwidth``).

    On a bandwidth piece every class sum :math:`P_i(x) = \\sum_{j: y_j = y_i}\\alpha_j e^{-xD_{ij}}`
    (and :math:`N_i`, the other class) is completely monotone, so it lies between quintic
    Hermite polynomials (:mod:`approxpath.envelopes`); the gap is maximized over the piece from
    those (:meth:`gap`).  On the C path the gap is affine in C: its ends bound it.
    """

    name = "kernel_svm"
    Primal = SVMPrimal
    Dual = SVMDual
    parameters = ("bandwidth", "c")
    weight = "c"
    blocked_ok = True
    _transient = KernelBound._transient + ("_recent",)
    OPTIONS = dict(c=Option("positive"), bias=Option("choice", BIAS_RULES, "optimal"),
                   dual_restoration=Option("choice", DUAL_RESTORATIONS, "moving"),
                   bandwidth=Option("positive", default=None))

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.labels, self.y = binary_labels(self.y)
        self.c = self.options["c"]
        self._recent = OrderedDict()

    # -------------------------------------------------------------- class sums
    def _group_sums(self, alphas, x, order=2):
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
        """:meth:`_group_sums` of the two duals of a moving pair, the last few kept (consecutive
        pieces of a path share them: a verification computes each node once)."""
        if self._recent is None:  # after unpickling
            self._recent = OrderedDict()
        key = (digest(alpha_a), digest(alpha_b), float(x))
        hit = self._recent.get(key)
        if hit is None:
            hit = self._recent[key] = self._group_sums((alpha_a, alpha_b), x)
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return hit

    def _sums(self, dual, x, order=2):
        """:meth:`_group_sums` of ``dual.alpha`` alone, the first ``order + 1``."""
        return self._group_sums((dual.alpha,), x, order)[0]

    def _margins(self, dual):
        """How many rounding margins a bound of ``dual`` adds (1; a search adds more where it
        combines cached products)."""
        return 1

    def Kw(self, dual, x):
        """:math:`K_x w` with :math:`w = y \\circ \\alpha` (:math:`\\alpha(x)` of a moving dual),
        shape (n,)."""
        if dual.motion is not None:
            return moving_point(self, dual, x)[1]
        F = self._sums(dual, x, order=0)[0]
        return F[:, 0] - F[:, 1]

    # -------------------------------------------------------------- feasibility
    def errors(self, primal, dual, lo, hi):
        a = np.asarray(dual.alpha, dtype=float)
        C = self.sweep.weight_floor(lo)
        if a.shape != (self.n,) or not np.all(np.isfinite(a)):
            return [f"alpha must be {self.n} finite numbers"]
        errors = []
        if a.min() < 0:
            errors.append(f"alpha has a negative entry ({a.min():.3g})")
        if a.max() > C:
            errors.append(f"alpha exceeds C = {C:.6g} (max {a.max():.17g})")
        if math.fsum(self.y * a) != 0.0:
            errors.append(f"y'alpha = {math.fsum(self.y * a):.3g} is not exactly 0")
        if not np.array_equal(primal.w, self.y * a):
            errors.append("w differs from y * alpha")
        if not (np.isfinite(primal.b) and np.isfinite(primal.b_slope)):
            errors.append("bias is not finite")
        if primal.b_slope and not self.sweep.along_bandwidth:
            errors.append("the bias varies only along a bandwidth path")
        if dual.motion is not None:
            if not self.sweep.along_bandwidth:
                return errors + ["a pair moves only along a bandwidth path"]
            errors += motion_errors(dual.motion, primal.motion, self.y, C, lo, hi)
        elif primal.motion is not None:
            errors.append("the primal moves, the dual does not")
        return errors

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        m = dual.motion
        return {"dual": np.asarray(dual.alpha, dtype=float), "bias": float(primal.b),
                "bias_slope": float(primal.b_slope),
                # a fixed pair: no second dual and a zero weight line
                "dual_b": np.zeros(self.n) if m is None else np.asarray(m.alpha_b, dtype=float),
                "theta": np.zeros(3) if m is None else np.asarray(m.theta, dtype=float),
                "theta_at": np.zeros(2) if m is None else np.asarray(m.span, dtype=float)}

    def from_arrays(self, arrays):
        alpha = np.asarray(arrays["dual"], dtype=float)
        # certificates written before the bias could vary on a piece have no bias_slope, and
        # before pairs could move no dual_b, theta, theta_at
        slope = float(arrays["bias_slope"]) if "bias_slope" in arrays else 0.0
        motion = None
        if "dual_b" in arrays:
            fields = [np.asarray(arrays[k], dtype=float) for k in ("dual_b", "theta", "theta_at")]
            # a fixed pair stores zeros; anything else is a moving pair, which errors() checks
            # (a fixed piece with a stray second dual or weight is refused, not read as fixed)
            if any(np.any(f != 0) for f in fields):
                motion = Motion(fields[0], tuple(map(float, fields[1])), tuple(map(float, fields[2])))
        return (SVMPrimal(w=self.y * alpha, b=float(arrays["bias"]), b_slope=slope, motion=motion),
                SVMDual(alpha=alpha, motion=motion))

    # -------------------------------------------------------------- model selection
    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None, signs=False):
        """Where every exact optimum's decision values at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`)."""
        from .enclosure import prediction_enclosure

        return prediction_enclosure(self, primal, gap_bound, lo, hi, X_new, rows=rows, signs=signs)

    # -------------------------------------------------------------- gap bounds
    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        alpha = np.asarray(dual.alpha, dtype=float)
        if dual.motion is not None:
            if hi != lo:
                return moving_bound(self, primal, dual, lo, hi)
            alpha = alpha + dual.motion.alpha_b  # the magnitude below: 1'alpha(t) <= 1'alpha + 1'alpha_b
        elif self.sweep.along_bandwidth and hi != lo:
            return self._bandwidth_bound(dual, primal, lo, hi)
        # C path: alpha, w, b and xi do not depend on C and the primal is affine in C, so the
        # gap is affine in C and its maximum on [lo, hi] is at an end point.
        C = self.sweep.at(hi)[1]
        b = abs(primal.b) + abs(primal.b_slope) * self.sweep.at(hi)[0]  # the bias as computed, and its terms
        mag = alpha.sum() ** 2 + C * self.n * (2.0 + b + alpha.sum()) + alpha.sum()
        gap = max(self._point_gap(primal, dual, tau) for tau in sorted({lo, hi}))
        return gap + self._margins(dual) * self._margin(mag) + (point_allowance(self, dual, lo) if dual.motion else 0.0)

    def _point_gap(self, primal, dual, tau):
        """The gap at ``tau`` (as computed): :math:`w^\\top K w + C\\,1^\\top\\xi - 1^\\top\\alpha`
        from the class sums when :math:`w = y \\circ \\alpha` (every restored pair), else from
        :math:`\\tfrac12 w^\\top K w + C 1^\\top\\xi + \\tfrac12\\alpha^\\top Q\\alpha - 1^\\top\\alpha`."""
        bw, C = self.sweep.at(tau)
        if dual.motion is not None:  # (errors() checks that the primal moves with it)
            alpha, Kw = moving_point(self, dual, tau)
            xi = np.maximum(0.0, 1.0 - self.y * (Kw + primal.bias(bw)))
            return float((self.y * alpha) @ Kw) + C * float(xi.sum()) - float(alpha.sum())
        alpha = dual.alpha
        w = self.y * alpha
        if not np.array_equal(primal.w, w):
            Kw = (self.kernels.products(bw, primal.w, order=0)[0] if self.blocked else self.gram(tau) @ primal.w)
            xi = np.maximum(0.0, 1.0 - self.y * (Kw + primal.bias(bw)))
            return (0.5 * float(primal.w @ Kw) + C * float(np.sum(xi))
                    + 0.5 * float(w @ self.Kw(dual, tau)) - float(np.sum(alpha)))
        Kw = self.Kw(dual, tau)
        xi = np.maximum(0.0, 1.0 - self.y * (Kw + primal.bias(bw)))
        return float(w @ Kw) + C * float(xi.sum()) - float(alpha.sum())

    def _margin(self, magnitude):
        """Rounding allowance of a bound whose terms are at most ``magnitude``."""
        return fp_margin(8 * self.n, magnitude) + self.entry_error * magnitude

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
        derivatives at the two ends (:meth:`_group_sums`)."""
        rows = np.arange(self.n)
        same = np.where(self.y > 0, 0, 1)

        def env(col):
            return Envelope(lo, hi, S_lo[0][rows, col], S_hi[0][rows, col], S_lo[1][rows, col],
                            S_hi[1][rows, col], S_lo[2][rows, col], S_hi[2][rows, col])

        return env(same), env(1 - same)

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        alpha = np.asarray(dual.alpha, dtype=float)
        if dual.motion is not None:
            return moving_dual_floor(self, dual, lo, hi)
        if not self.sweep.along_bandwidth or hi == lo:
            d = -0.5 * float((self.y * alpha) @ self.Kw(dual, lo)) + float(np.sum(alpha))
            mag = alpha.sum() ** 2 + alpha.sum()
        else:
            # alpha' Q alpha = alpha'P - alpha'N is below the largest coefficient of its upper
            # polynomial (convex hull of the Bernstein coefficients)
            P, N, q = self._class_envelopes(dual, lo, hi)
            d = alpha.sum() - 0.5 * float(q.max()) - 0.5 * self._entry_allowance(alpha.sum(), 0.0, lo, hi)
            mag = float(np.abs(q).max()) + float(alpha @ (P.magnitude() + N.magnitude())) + alpha.sum()
        return d - self._margin(mag)

    def _entry_allowance(self, a1, C, lo, hi):
        """How far the kernel entries' rounding can move a piece's bound of
        :math:`\\alpha^\\top Q \\alpha + C \\sum_i \\max(0, r_i)`, with ``a1`` :math:`= 1^\\top\\alpha`.

        Every Bernstein coefficient of a class sum's polynomials is off by at most
        :func:`~approxpath.envelopes.envelope_entry_error` per unit of the coefficients summed
        (whatever the entries' size: at large t the computed sums, and the magnitudes of
        :meth:`_margin`, can be far below :math:`1^\\top\\alpha`, and the derivative entries
        carry factors w/lo), so the quadratic term's by that times ``a1**2`` and each hinge
        argument's by that times ``a1``; node values move by at most 1.04 times a
        coefficient's error (convex combinations plus the lift, see
        :func:`~approxpath.envelopes.max_hinge_sum`).
        """
        return 1.05 * envelope_entry_error(lo, hi, self.entry_terms) * a1 * (a1 + C * self.n)

    def _bandwidth_bound(self, dual, primal, lo, hi):
        """Bound of the gap on [lo, hi] from the envelopes of :meth:`_class_envelopes`.

        :math:`\\alpha^\\top Q_x \\alpha = \\alpha^\\top P - \\alpha^\\top N` is below a quintic
        :math:`q`, each margin :math:`m_i = P_i - N_i` above a quintic, so each hinge argument
        :math:`1 - y_i (b + b_{slope} x) - m_i` is below a quintic :math:`r_i`, and
        :math:`q + C \\sum_i \\max(0, r_i) - 1^\\top\\alpha` is maximized over the piece
        (:func:`~approxpath.envelopes.max_hinge_sum`).  Off by :math:`O(w^5)` where chords and
        tangents are off by :math:`O(w^2)` (ionosphere, eps = 0.125: the bound is ~1 % above
        the largest of 17 sampled gaps where chords and tangents were 2x; 70 -> 31 pieces).
        """
        C = self.c
        alpha = np.asarray(dual.alpha, dtype=float)
        P, N, q = self._class_envelopes(dual, lo, hi)
        bias = primal.bias(lo) + (np.arange(6) / 5) * (primal.bias(hi) - primal.bias(lo))  # a line in Bernstein form
        r = 1.0 - self.y[:, None] * bias - (hermite_lower(P) - hermite_upper(N))
        best, scale = max_hinge_sum(q, r, C, _NODES)
        magnitude = (
            scale
            + float(alpha @ (P.magnitude() + N.magnitude()))
            + C * float(np.sum(P.magnitude() + N.magnitude()))
            + alpha.sum()
            + C * self.n * (abs(primal.b) + abs(primal.b_slope) * hi)  # the bias line's end values, rounded
        )
        return best - alpha.sum() + self._margins(dual) * self._margin(magnitude) + self._entry_allowance(alpha.sum(), C, lo, hi)
