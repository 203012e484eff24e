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

On a bandwidth piece either side may *move* (:class:`~approxpath.moving.Moving`, weights linear in
the bandwidth): the driver's interpolation of two exact solves, :math:`c(t) = \\sum_k w_k(t) c_k`
and :math:`a(t) = \\sum_k w_k(t)\\,\\lambda c_k`, keeps :math:`e = \\lambda c - a` at zero (up to the
rounding of :math:`\\lambda c_k`) and follows the solution path to second order, so its gap, the
squared residual :math:`\\lVert (K_t + \\lambda I)c(t) - y\\rVert^2`, is fourth order in the distance
to the solves where a fixed pair's is second order (:meth:`RidgeBound._moving_gap`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from approxpath.bound import Option
from approxpath.bernstein import bernstein_at, coefficient_rounding
from approxpath.moving import is_moving, parts
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin

from .._regression import CHAIN, KernelEnclosures
from .selecting import ClosedFormSelection

__all__ = ["RidgeBound", "RidgePrimal", "RidgeDual", "product_error", "linear_floor", "quadratic_ceiling"]


def product_error(K, v, entry_error):
    """``(Kv, delta)``: the computed product of the computed kernel ``K`` (n, n; entries within
    ``entry_error`` of the exact kernel's, in [0, 1]) with ``v`` (n,), and a bound (n,) of its distance
    to the exact product, :math:`\\delta_i = \\gamma_n(\\hat K|v|)_i(1 + \\gamma_n) + \\epsilon\\lVert v\\rVert_1`
    (:math:`\\gamma_n` = ``fp_margin(n, 1)``).  The computed :math:`v^\\top Kv` is then within
    :math:`\\sum_i |v_i|(\\delta_i + \\gamma_n|(Kv)_i|)` of exact."""
    gn, av = fp_margin(len(v), 1.0), np.abs(v)
    return K @ v, gn * (K @ av) * (1.0 + gn) + entry_error * float(av.sum())


def linear_floor(y, a, da):
    """A lower bound of :math:`2a^{*\\top} y - \\lVert a^*\\rVert^2` (the dual objective's terms free of the
    kernel) for every :math:`a^*` within ``da`` (n,) of ``a`` (n,): the value as computed, less its rounding
    and the points' distance."""
    aa = np.abs(a)
    value = 2.0 * float(a @ y) - float(a @ a)
    shift = float(np.sum(2.0 * np.abs(y) * da + 2.0 * aa * da + da * da))
    return value - shift - fp_margin(2 * len(a), 2.0 * float(aa @ np.abs(y)) + float(a @ a))


def quadratic_ceiling(K, a, da, entry_error):
    """An upper bound of :math:`a^{*\\top} K^* a^*` for the exact kernel :math:`K^*` (``K`` computed, as
    in :func:`product_error`) and every :math:`a^*` within ``da`` (n,) of ``a`` (n,): the value as
    computed plus its rounding and the points' distance (:math:`\\lVert a^*\\rVert_1 \\le \\lVert a\\rVert_1 +
    \\lVert da\\rVert_1`, entries of :math:`K^*` at most 1)."""
    aa = np.abs(a)
    sa, sd = float(aa.sum()), float(da.sum())
    slack = fp_margin(2 * len(a), float(aa @ (K @ aa))) + entry_error * sa * sa + 2.0 * sa * sd + sd * sd
    return float(a @ (K @ a)) + slack


@dataclass(frozen=True)
class RidgePrimal:
    """Primal point: expansion coefficients ``c`` (n,)."""

    c: np.ndarray


@dataclass(frozen=True)
class RidgeDual:
    """Dual point: ``a`` (n,), the residual ``y - K c`` at the optimum."""

    a: np.ndarray


class RidgeBound(ClosedFormSelection, KernelEnclosures):
    """Gap bounds of kernel ridge regression over the bandwidth (fixed ``lam``) or over ``lam``
    (fixed ``bandwidth``); pairs moving linearly in the bandwidth (:meth:`_moving_gap`) or in ``lam``
    (:mod:`.weight_path`); the closed-form selection criteria (:class:`.selecting.ClosedFormSelection`)."""

    name = "kernel_ridge"
    Primal = RidgePrimal
    Dual = RidgeDual
    parameters = ("bandwidth", "lam")
    weight = "lam"
    OPTIONS = dict(lam=Option("positive"), bandwidth=Option("positive", default=None))
    # pairs moving linearly in either parameter (over λ: .weight_path)
    moving_degrees = {"bandwidth": 1, "lam": 1}
    # Cells of (t, lam) (approxpath.cells): for a pair fixed in lam, e'K_t e/lam = lam c'K_t c -
    # 2 c'K_t a + a'K_t a/lam is convex in lam (K_t is positive semidefinite) and the residual
    # term does not depend on it; the dual objective's -a'K_t a/lam is concave in lam; no
    # constraints.
    weight_convex = True

    def errors(self, primal, dual, lo, hi):
        errors = []
        for side, point in (("c", primal), ("a", dual)):
            for p in point.points if is_moving(point) else (point,):
                v = np.asarray(getattr(p, side))
                if v.shape != (self.n,) or not np.all(np.isfinite(v)):
                    return [f"{side} must be {self.n} finite numbers"]
        return errors

    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None, weight_range=None):
        """Where the exact optimum's predictions at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]`` (and, with ``weight_range``, every λ of that range: a cell of
        :mod:`approxpath.cells`, whose dual grows with λ), given a pair whose gap is at most
        ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`)."""
        from .enclosure import prediction_enclosure

        return prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows, weight_range)

    def _gap_terms(self, c, a, tau):
        """The gap as the sum of its two nonnegative terms (see the module docstring), as
        computed, and a rigorous bound on its rounding.

        With :math:`\\hat K` the computed kernel (entries within ``entry_error`` of exact, in
        [0, 1]) and :math:`\\gamma_m = 1.01\\,mu`: a computed :math:`(Kv)_i` is within
        :math:`\\delta_i = \\gamma_n (\\hat K|v|)_i(1 + \\gamma_n) + \\epsilon\\lVert v\\rVert_1` of exact, so
        :math:`e^\\top Ke` within :math:`\\sum_i |e_i|(\\delta^e_i + \\gamma_n|(Ke)_i|)` and each
        :math:`r_i = (Kc)_i - z_i` within :math:`\\rho_i = \\delta^c_i + \\gamma_2(|(Kc)_i| + |z_i|)`, hence
        :math:`\\lVert r\\rVert^2` within :math:`\\sum_i (2|r_i|\\rho_i + \\rho_i^2) + \\gamma_n\\lVert r\\rVert^2`.
        The allowance is linear in the residual: tiny at an exact solve (where bounding the terms'
        magnitudes instead rejected Cholesky's solutions at n = 400)."""
        bw, lam = self.sweep.at(tau)
        K = self.gram(tau)
        n = self.n
        e, z = lam * c - a, self.y - a
        (Ke, d_e), (Kc, d_c) = product_error(K, e, self.entry_error), product_error(K, c, self.entry_error)
        r = Kc - z
        q1, q2 = float(e @ Ke), float(r @ r)
        g = q1 / lam + q2
        gn = fp_margin(n, 1.0)
        rho = d_c + fp_margin(2, 1.0) * (np.abs(Kc) + np.abs(z))
        err1 = float(np.abs(e) @ (d_e + gn * np.abs(Ke)))
        err2 = float(np.sum(2.0 * np.abs(r) * rho + rho * rho)) + gn * q2
        allowance = err1 / lam + err2
        return g, (allowance + fp_margin(4, g + allowance)) * (1.0 + 2.0**-40)

    def _margin(self, magnitude):
        """Rounding allowance: the sums (``fp_margin``) and the kernel entries, each within
        ``kernel_entry_error`` of exact, which move e'Ke/lam by at most that times
        ``sum|e|^2/lam`` and each r_i^2 by at most 3x that times ``(sum|c| + |z_i|)^2``."""
        return fp_margin(8 * self.n, magnitude) + 4 * self.entry_error * magnitude

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        if is_moving(primal) or is_moving(dual):
            if hi == lo:
                return self._moving_point_gap(primal, dual, lo)
            if not self.sweep.along_bandwidth:
                from .weight_path import moving_gap

                return moving_gap(self, primal, dual, lo, hi)
            return self._moving_gap(primal, dual, lo, hi)
        c, a = np.asarray(primal.c, dtype=float), np.asarray(dual.a, dtype=float)
        (g_lo, m_lo), (g_hi, m_hi) = self._gap_terms(c, a, lo), self._gap_terms(c, a, hi)  # m: their rounding
        if hi == lo or not self.sweep.along_bandwidth:
            # lam path: e'Ke/lam = lam c'Kc - 2 c'Ka + a'Ka/lam is convex in lam and the other
            # term does not depend on it, so the gap is convex in lam: its maximum is at an end.
            return max(g_lo + m_lo, g_hi + m_hi)
        # the chord of the end values plus the curvature term: the end values' rounding added to
        # both, and that of the few operations of the maximum
        bound = self._bandwidth_bound(c, a, lo, hi, g_lo + m_lo, g_hi + m_hi)
        return bound + fp_margin(16, abs(bound) + g_lo + g_hi + m_lo + m_hi)

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

    def dual_floor(self, dual, lo, hi=None, cover=None):
        """As :meth:`approxpath.bound.Bound.dual_floor`; ``cover``: for a moving dual on a bandwidth
        piece, the :func:`~approxpath.selection.predictions.expansion_cover` of its points' ``a`` (as
        columns) over the piece when the caller computed it already (in one kernel pass with others)."""
        hi = lo if hi is None else hi
        if is_moving(dual):
            if hi != lo and not self.sweep.along_bandwidth:
                from .weight_path import moving_dual_floor

                return moving_dual_floor(self, dual, lo, hi)
            return self._moving_dual_floor(dual, lo, hi, cover=cover)
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

    # -------------------------------------------------------------- cells: a dual growing with lam
    def _scaled_parts(self, dual, lo, hi, scale):
        """``(A, Q, errq)`` of :func:`~approxpath.moving.parts` (weights of degree 1) for the dual
        scaled by ``scale``: the weights times it as computed, ``errq`` widened by the rounding of
        ``scale`` and of the products (one unit roundoff each, relative); unchanged for
        ``scale == 1``."""
        A, Q, errq = parts(dual, "a", lo, hi, linear=True)
        if scale == 1.0:
            return A, Q, errq
        Q = scale * Q
        return A, Q, scale * errq + 2.02 * UNIT_ROUNDOFF * np.abs(Q).max(axis=1)

    def scaled_gap(self, primal, dual, lo, hi, base):
        """A bound of the gap at this bound's λ over ``[lo, hi]`` of the pair whose dual is the
        stored one scaled by :math:`s = \\lambda / base` (a cell ``[lo, hi] x [base, λ]`` of
        :mod:`approxpath.cells`; no constraints, so any scale is feasible).  With the driver's
        pairs, :math:`a(t) = base\\cdot c(t)`, the scaled dual is :math:`\\lambda c(t)`: :math:`e = 0` and
        the gap is the squared residual :math:`\\lVert(K_t + \\lambda I)c(t) - y\\rVert^2`, second order
        in :math:`\\lambda - base` at an optimum (a dual held fixed pays :math:`e^\\top K e/\\lambda` with
        :math:`e = (\\lambda - base)c`, bounded by :math:`\\lVert e\\rVert_1^2/\\lambda` on a piece).
        :meth:`_moving_gap` (any pair, fixed points as constant combinations) with the dual's
        weights times ``s``."""
        s = self.sweep.weight / float(base)
        if hi > lo:
            return self._moving_gap(primal, dual, lo, hi, s)
        return self._moving_point_gap(primal, dual, lo, s)

    def scaled_dual_floor(self, dual, lo, hi, base):
        """:meth:`dual_floor` of the dual scaled by :math:`\\lambda / base` (:meth:`scaled_gap`)."""
        return self._moving_dual_floor(dual, lo, hi, self.sweep.weight / float(base))

    # -------------------------------------------------------------- moving pairs
    def _moving_gap(self, primal, dual, lo, hi, scale=1.0):
        """Bound of the gap of a pair moving on the bandwidth piece ``[lo, hi]``.

        The residual :math:`r(t) = K_t c(t) - y + a(t)`: :math:`K_t c(t)` lies on each
        sub-interval between the nodes below the largest of a few lines plus a curvature term
        and above the smallest minus one (:meth:`_combinations`), :math:`a(t)` is linear, so
        :math:`|r_i(t)|` is below a convex function whose values at the sub-interval's ends are
        computed, and so is :math:`\\sum_i r_i^2`: its bound on a sub-interval is the larger of
        its two end values.  The other term, :math:`\\tfrac1\\lambda e^\\top K_t e` with
        :math:`e(t) = \\lambda c(t) - a(t)` linear, is at most :math:`\\tfrac1\\lambda \\lVert e\\rVert_1^2`
        (entries of :math:`K_t` in [0, 1]), :math:`\\lVert e\\rVert_1` largest at an end (0 for the
        driver's interpolation, up to the rounding of :math:`\\lambda c_k`)."""
        lam, y, n = self.sweep.weight, self.y, self.n
        C, P, errp = parts(primal, "c", lo, hi, linear=True)
        A, Q, errq = self._scaled_parts(dual, lo, hi, scale)
        xs, low, up, w, allowance = self._lines(C, P[None], errp[None], lo, hi)
        _, _, ends_up, ends_low, bend_up, bend_low = self._combinations(w, low, up, ends=True)
        q = bernstein_at(Q, (xs - lo) / (hi - lo))  # (Kq, J + 1): the dual's weights at the nodes
        s = y[:, None] - A @ q  # (n, J + 1): y - a(t) at the nodes, as computed ...
        aA = np.abs(A)
        s_err = fp_margin(A.shape[1] + 1, 1.0) * (np.abs(y)[:, None] + aA @ np.abs(q)) + (aA @ (errq + coefficient_rounding(Q)))[:, None]
        ends_s = np.stack([s[:, :-1], s[:, 1:]], axis=-1)  # (n, J, 2)
        over = ends_up[0] - ends_s + bend_up[0][..., None]  # K c(t) - (y - a(t)), above
        under = ends_s - ends_low[0] + bend_low[0][..., None]  # ... and below
        slack = allowance[0][:, None, None] + np.maximum(s_err[:, :-1], s_err[:, 1:])[..., None] \
            + fp_margin(CHAIN + 8, 1.0) * np.abs(ends_s)
        phi = np.maximum(over, under) + slack  # >= |r_i| at the ends, convex between them
        squares = (phi * phi).sum(axis=0)  # (J, 2)
        e1 = self._e_norm(C, P, errp, A, Q, errq, lam)
        top = float(squares.max())
        return e1 * e1 / lam + top + fp_margin(2 * n + 4, top + e1 * e1 / lam)

    def _e_norm(self, C, P, errp, A, Q, errq, lam):
        """An upper bound of :math:`\\max_t \\lVert \\lambda c(t) - a(t)\\rVert_1` (linear in t: at an end)."""
        aC, aA = np.abs(C), np.abs(A)
        rounding = lam * (aC @ (errp + coefficient_rounding(P))) + aA @ (errq + coefficient_rounding(Q))
        best = 0.0
        for end in (0, 1):
            p, q = P[:, end], Q[:, end]
            e = lam * (C @ p) - A @ q
            slack = fp_margin(C.shape[1] + A.shape[1] + 2, 1.0) * (lam * (aC @ np.abs(p)) + aA @ np.abs(q))
            best = max(best, float(np.sum(np.abs(e) + slack + rounding)))
        return best + fp_margin(self.n, best)

    def _moving_point_gap(self, primal, dual, x, scale=1.0):
        """The gap at the point ``x`` of a moving pair: the point gap of its values as computed,
        plus how far the exact values' gap can be (:math:`|K| \\le 1`: a change ``dc`` of c and
        ``da`` of a moves :math:`e` by at most :math:`\\lambda|dc| + |da|` and each :math:`r_i` by
        :math:`\\lVert dc\\rVert_1 + |da_i|`)."""
        lam = self.sweep.at(x)[1]
        C, P, errp = parts(primal, "c", x, x, linear=True)
        A, Q, errq = self._scaled_parts(dual, x, x, scale)
        p, q = P[:, 0], Q[:, 0]
        c, a = C @ p, A @ q
        dc = fp_margin(C.shape[1], 1.0) * (np.abs(C) @ np.abs(p)) + np.abs(C) @ (errp + coefficient_rounding(P))
        da = fp_margin(A.shape[1], 1.0) * (np.abs(A) @ np.abs(q)) + np.abs(A) @ (errq + coefficient_rounding(Q))
        g, rounding = self._gap_terms(c, a, x)
        e = lam * c - a
        r = self.gram(x) @ c - self.y + a
        de = float(np.sum(lam * dc + da))
        dr = float(np.sum(dc)) + da
        shift = (2.0 * float(np.abs(e).sum()) * de + de * de) / lam + float(np.sum(2.0 * np.abs(r) * dr + dr * dr))
        return g + rounding + shift * (1.0 + 2.0**-40)

    def _moving_dual_floor(self, dual, lo, hi, scale=1.0, cover=None):
        """A lower bound of :math:`2a^\\top y - \\lVert a\\rVert^2 - \\tfrac1\\lambda a^\\top K_t a` over the
        piece for :math:`a(t)` moving linearly: on each sub-interval between the nodes of the
        kernel products' enclosures (:func:`~approxpath.selection.predictions.expansion_cover`),
        the first two terms are concave in t (least at an end of the sub-interval) and
        :math:`a^\\top K_t a \\le \\sum_i \\max` of the corner products of the ranges of :math:`a_i(t)`
        and :math:`(K_t a(t))_i` there; at a point, the value as computed less the effect of the
        combination's rounding."""
        from approxpath.moving import weight_ranges
        from approxpath.selection.predictions import combination_hull, expansion_cover

        lam, y, n = self.sweep.at(lo)[1], self.y, self.n
        A, Q, errq = self._scaled_parts(dual, lo, hi, scale)
        aA = np.abs(A)
        err = errq + coefficient_rounding(Q)

        def at(q):  # the dual's point at the weights q, and its distance from exact (the combination's rounding)
            return A @ q, fp_margin(A.shape[1], 1.0) * (aA @ np.abs(q)) + aA @ err

        if hi == lo:
            a, da = at(Q[:, 0])
            return linear_floor(y, a, da) - quadratic_ceiling(self.gram(lo), a, da, self.entry_error) / lam
        edges, low, up = expansion_cover(self.kernels.products, A, lo, hi, self.entry_terms, n) if cover is None else cover
        ranges = weight_ranges(dual, edges)[1]  # (J, K, 2)
        if scale != 1.0:  # the scaled weights' ranges, widened by the rounding of s and of the products
            ranges = scale * ranges
            ranges = ranges + np.array([-1.0, 1.0]) * 2.02 * UNIT_ROUNDOFF * np.abs(ranges)
        K_low, K_up = combination_hull(ranges, low, up)  # (n, J): K_t a(t) on each sub-interval
        corners = np.stack([A[:, :, None] * ranges[..., 0].T[None], A[:, :, None] * ranges[..., 1].T[None]])
        a_low, a_up = corners.min(axis=0).sum(axis=1), corners.max(axis=0).sum(axis=1)  # (n, J): a_i(t)
        pad = fp_margin(A.shape[1] + 1, 1.0) * np.abs(corners).max(axis=0).sum(axis=1)
        a_low, a_up = a_low - pad, a_up + pad
        products = np.stack([a_low * K_low, a_low * K_up, a_up * K_low, a_up * K_up])
        quad = products.max(axis=0).sum(axis=0)  # (J,): above a'K a on each sub-interval
        quad += fp_margin(n + 4, 1.0) * np.abs(products).max(axis=0).sum(axis=0)
        ends = np.array([linear_floor(y, *at(q)) for q in bernstein_at(Q, (edges - lo) / (hi - lo)).T])  # (J + 1,)
        return float((np.minimum(ends[:-1], ends[1:]) - quad / lam).min())
