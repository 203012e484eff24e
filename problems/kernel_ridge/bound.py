"""Certificate side of kernel ridge regression (numpy only: what ``approxpath verify`` builds), in
the coefficient form of Bindel's notes on kernel selection:

.. math::

    \\min_c\\; \\lambda\\, c^\\top K_t c + \\lVert K_t c - y \\rVert^2,
    \\qquad
    \\max_a\\; 2 a^\\top y - \\lVert a \\rVert^2 - \\tfrac1\\lambda a^\\top K_t a,

with :math:`K_t = \\exp(-tD)`.  The optimum solves :math:`(K_t + \\lambda I)c = y` and
:math:`a = \\lambda c = y - K_t c` (the residual); predictions are
:math:`f(x) = \\sum_j c_j k_t(x_j, x)`.  Completing squares gives the gap of any pair as a sum
of two nonnegative terms,

.. math::

    g_t(c, a) = \\tfrac1\\lambda\\, e^\\top K_t e + \\lVert K_t c - z \\rVert^2,
    \\qquad e = \\lambda c - a,\\; z = y - a,

which is what :meth:`RidgeBound.gap` bounds over a whole piece.  Neither problem has
constraints, so both restorations are the best scaling of the carried point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from approxpath.bound import KernelBound, Option
from approxpath.numerics import fp_margin
from approxpath.validate import real_targets

__all__ = ["RidgeBound", "RidgePrimal", "RidgeDual"]


@dataclass(frozen=True)
class RidgePrimal:
    """Primal point: expansion coefficients ``c`` (n,)."""

    c: np.ndarray


@dataclass(frozen=True)
class RidgeDual:
    """Dual point: ``a`` (n,), the residual ``y - K c`` at the optimum."""

    a: np.ndarray


class RidgeBound(KernelBound):
    """Gap bounds of kernel ridge regression over the bandwidth (fixed ``lam``) or over ``lam``
    (fixed ``bandwidth``)."""

    name = "kernel_ridge"
    Primal = RidgePrimal
    Dual = RidgeDual
    parameters = ("bandwidth", "lam")
    weight = "lam"
    OPTIONS = dict(lam=Option("positive"), bandwidth=Option("positive", default=None))

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.y = real_targets(self.name, self.y)

    def errors(self, primal, dual, lo, hi):
        errors = []
        for side, v in (("c", primal.c), ("a", dual.a)):
            v = np.asarray(v)
            if v.shape != (self.n,) or not np.all(np.isfinite(v)):
                errors.append(f"{side} must be {self.n} finite numbers")
        return errors

    #: Closed-form selection criteria (:mod:`.criteria`): ``"min"`` or ``"max"`` is better.
    CLOSED_FORM_CRITERIA = {"loocv": "min", "gcv": "min", "lml": "max"}

    def criterion_enclosure(self, name, primal, dual, gap_bound, lo, hi, cache=None):
        """``(low, high)``: the closed-form criterion ``name`` of the exact optimum for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there
        (:func:`.criteria.criterion_enclosure`; ``cache`` a dict of point factorizations)."""
        from .criteria import criterion_enclosure

        return criterion_enclosure(self, name, primal, dual, gap_bound, lo, hi, cache)

    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None):
        """Where the exact optimum's predictions at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`)."""
        from .enclosure import prediction_enclosure

        return prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows)

    def _gap_terms(self, c, a, tau):
        """The gap as the sum of its two nonnegative terms (see the module docstring), and the
        magnitude a rounding allowance must cover."""
        bw, lam = self.sweep.at(tau)
        K = self.gram(tau)
        e, z = lam * c - a, self.y - a
        r = K @ c - z
        g = float(e @ (K @ e)) / lam + float(r @ r)
        sc, se = np.abs(c).sum(), np.abs(e).sum()
        magnitude = se * se / lam + float(np.sum((sc + np.abs(z)) ** 2))
        return g, magnitude

    def _margin(self, magnitude):
        """Rounding allowance: the sums (``fp_margin``) and the kernel entries, each within
        ``kernel_entry_error`` of exact, which move e'Ke/lam by at most that times
        ``sum|e|^2/lam`` and each r_i^2 by at most 3x that times ``(sum|c| + |z_i|)^2``."""
        return fp_margin(8 * self.n, magnitude) + 4 * self.entry_error * magnitude

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        c, a = np.asarray(primal.c, dtype=float), np.asarray(dual.a, dtype=float)
        (g_lo, m_lo), (g_hi, m_hi) = self._gap_terms(c, a, lo), self._gap_terms(c, a, hi)
        if hi == lo or not self.sweep.along_bandwidth:
            # lam path: e'Ke/lam = lam c'Kc - 2 c'Ka + a'Ka/lam is convex in lam and the other
            # term does not depend on it, so the gap is convex in lam: its maximum is at an end.
            return max(g_lo, g_hi) + self._margin(max(m_lo, m_hi))
        return self._bandwidth_bound(c, a, lo, hi, g_lo, g_hi) + self._margin(max(m_lo, m_hi))

    def _bandwidth_bound(self, c, a, lo, hi, g_lo, g_hi):
        """Bound of the gap on [lo, hi] from its values at the ends and a lower bound
        :math:`-M` of its second derivative: :math:`g \\le` chord :math:`+ M(\\tau - lo)(hi - \\tau)/2`.

        With :math:`K' = -D\\circ K`, :math:`K'' = D^2\\circ K` and :math:`r = K c - z`:
        :math:`g'' = \\tfrac1\\lambda e^\\top K'' e + 2\\lVert K'c\\rVert^2 + 2 r^\\top K'' c`.
        Every entry :math:`D^k e^{-\\tau D}` is decreasing in :math:`\\tau`, so it lies between
        its values at ``hi`` and ``lo``; splitting sums by sign bounds :math:`e^\\top K'' e` below
        and :math:`r_i`, :math:`(K''c)_i` in intervals, whose products are bounded below by the
        smallest corner.  :math:`r` vanishes at the exact solve, so :math:`M` shrinks with the
        distance to it and the bound is third-order tight there.
        """
        lam = self.sweep.weight
        D = self.kernels.D
        E_lo, E_hi = np.exp(-lo * D), np.exp(-hi * D)
        D2 = D * D
        e, z = lam * c - a, self.y - a
        ee = np.outer(e, e)
        neg = np.where(ee < 0, -ee, 0.0)
        pos = np.where(ee > 0, ee, 0.0)
        minus_quad = (float(np.sum(neg * D2 * E_lo)) - float(np.sum(pos * D2 * E_hi))) / lam
        cp, cm = np.maximum(c, 0.0), np.maximum(-c, 0.0)
        r_lo, r_hi = E_hi @ cp - E_lo @ cm - z, E_lo @ cp - E_hi @ cm - z
        W_lo, W_hi = D2 * E_lo, D2 * E_hi
        w_lo, w_hi = W_hi @ cp - W_lo @ cm, W_lo @ cp - W_hi @ cm
        corners = np.minimum(np.minimum(r_lo * w_lo, r_lo * w_hi), np.minimum(r_hi * w_lo, r_hi * w_hi))
        M = max(0.0, minus_quad - 2.0 * float(corners.sum()))
        # Rounding of M: the summands are bounded by these magnitudes; each entry D^2 exp(-x D)
        # carries a relative error below (2d + 8 + (d + 3) x D) u, and x D <= 745 wherever exp
        # does not underflow, hence 760 (d + 3) operations' worth on top of the 8n of the sums.
        m_abs = float(np.sum(np.abs(ee) * D2 * E_lo)) / lam + 2.0 * float(
            np.sum(np.maximum(np.abs(r_lo), np.abs(r_hi)) * np.maximum(np.abs(w_lo), np.abs(w_hi))))
        M += fp_margin(8 * self.n + 760 * (self.entry_terms + 3), m_abs)
        h = hi - lo
        # maximum over s in [0, h] of g_lo + (g_hi - g_lo) s / h + M s (h - s) / 2
        s = h / 2 + (g_hi - g_lo) / (M * h) if M > 0 else (h if g_hi > g_lo else 0.0)
        s = min(max(s, 0.0), h)
        return g_lo + (g_hi - g_lo) * s / h + 0.5 * M * s * (h - s)

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        bw_lo, lam_lo = self.sweep.at(lo)
        a = np.asarray(dual.a, dtype=float)
        aa = np.outer(a, a)
        D = self.kernels.D
        if self.sweep.along_bandwidth:
            # a'K_tau a over [lo, hi]: positive products at their largest (lo), negative at hi
            quad = float(np.sum(np.where(aa > 0, aa * np.exp(-lo * D), aa * np.exp(-hi * D)))) / self.sweep.weight
        else:  # -a'Ka/lam is increasing in lam: smallest at lo
            quad = float(a @ (self.gram(lo) @ a)) / lam_lo
        d = 2.0 * float(a @ self.y) - float(a @ a) - quad
        sa = np.abs(a).sum()
        return d - self._margin(2 * sa * np.abs(self.y).max() + float(a @ a) + sa * sa / lam_lo)
