"""Certificate side of the kernelized LASSO (numpy only: what ``approxpath verify`` builds).

A stored piece is a primal :math:`(\\beta, \\beta_0)` (on a bandwidth piece it may move:
:math:`\\sum_k w_k(\\tau)(\\beta_k, \\beta_{0k})` with weights linear in :math:`\\tau`) and a dual
:math:`d = \\sum_k w_k(\\tau)\\, u_k` with :math:`\\mathbf 1^\\top u_k = 0` exactly: a fixed
:math:`u` (weight 1), a scaled one :math:`s\\,u` (constant weight ``s``) or, on a bandwidth
piece, a *moving* dual whose weights are linear in :math:`\\tau`
(:class:`~approxpath.moving.Moving`).  For every :math:`\\tau` of the piece the dual is feasible
(:math:`\\max_\\tau\\lVert K_\\tau d\\rVert_\\infty \\le \\lambda`, rigorous) and the gap
:math:`\\tfrac12\\lVert y - K_\\tau\\beta - \\beta_0\\rVert^2 + \\lambda\\lVert\\beta\\rVert_1 -
(y^\\top d - \\tfrac12\\lVert d\\rVert^2)` is bounded over the piece from the residuals' Hermite
enclosures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from approxpath.bernstein import bernstein_at, coefficient_rounding
from approxpath.moving import columns, is_moving, parts
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin

from .._regression import RegressionBound
from .lam_path import lam_gap

__all__ = ["KLassoBound", "KLassoPrimal", "KLassoDual"]


@dataclass(frozen=True)
class KLassoPrimal:
    """Primal point: coefficients ``beta`` (n,) and intercept ``beta0``."""

    beta: np.ndarray
    beta0: float


@dataclass(frozen=True)
class KLassoDual:
    """Dual point: ``u`` (n,).  A stored dual's points have ``1'u = 0`` exactly (on the zero-sum
    grid); a scaled or moving dual is a :class:`~approxpath.moving.Moving` combination of them."""

    u: np.ndarray


class KLassoBound(RegressionBound):
    """Gap bounds of the kernelized LASSO over the bandwidth (fixed ``lam``) or over ``lam``
    (fixed ``bandwidth``); ``dual_restoration`` is ``"moving"`` or ``"scaling"``."""

    name = "klasso"
    Primal = KLassoPrimal
    Dual = KLassoDual
    DUAL_RESTORATIONS = ("moving", "scaling")

    def errors(self, primal, dual, lo, hi):
        if is_moving(primal) and self.sweep.along_bandwidth and not hi > lo:
            return ["a moving primal needs a piece wider than one bandwidth"]
        for p in primal.points if is_moving(primal) else (primal,):
            beta = np.asarray(p.beta, dtype=float)
            if beta.shape != (self.n,) or not np.all(np.isfinite(beta)) or np.shape(p.beta0) != () \
                    or not np.isfinite(p.beta0):
                return [f"beta must be {self.n} finite numbers and beta0 finite"]
        points = dual.points if is_moving(dual) else (dual,)
        errors = []
        for k, p in enumerate(points):
            u = np.asarray(p.u, dtype=float)
            if u.shape != (self.n,) or not np.all(np.isfinite(u)):
                return [f"u must be {self.n} finite numbers"]
            if math.fsum(u) != 0.0:
                errors.append(f"1'u{'' if len(points) == 1 else f'_{k}'} = {math.fsum(u):.3g} is not exactly 0")
        if errors:
            return errors
        if not self.sweep.along_bandwidth and is_moving(dual) and dual.degree > 0:
            # K is fixed and |(K d(lam))_i| - lam is convex in lam (d linear): its ends suffice
            for end in (lo, hi):
                bound = self.dual_sup_norm(dual, end, end)
                if not bound <= end:
                    errors.append(f"dual infeasible at lambda = {end:.17g}: ||K d||_inf <= {bound:.17g}")
            return errors
        bound = self.dual_sup_norm(dual, lo, hi)
        if not bound <= self.sweep.weight_floor(lo):
            errors.append(f"dual infeasible on the piece: max ||K d||_inf <= {bound:.17g} "
                          f"exceeds lambda = {self.sweep.weight_floor(lo):.17g}")
        return errors

    def dual_sup_norm(self, dual, lo, hi):
        """A rigorous upper bound of :math:`\\max_{\\tau \\in [lo, hi]} \\lVert K_\\tau d(\\tau)\\rVert_\\infty`."""
        U, W, err = parts(dual, "u", lo, hi)
        if W.shape[1] == 1:  # a constant combination: s ||K u|| (one more rounding where s != 1)
            if U.shape[1] == 1:
                s = float(W[0, 0])
                sup = abs(s) * self.kernel_sup_norm(U[:, 0], lo, hi)
                return sup if s in (0.0, 1.0, -1.0) else sup * (1.0 + 2.0**-52)
            W = np.repeat(W, 2, axis=1)
        if hi == lo:  # the combination as computed, and how far it is from exact (|K| <= 1)
            w = W[:, 0]
            delta = fp_margin(U.shape[1], 1.0) * (np.abs(U) @ np.abs(w)) + np.abs(U) @ (err + coefficient_rounding(W))
            return self.kernel_sup_norm(U @ w, lo, hi) + float(delta.sum())
        return float(self.moving_sup_norms(U, W[None], err[None], lo, hi)[0])

    # -------------------------------------------------------------- model selection
    def prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows=None, weight_range=None):
        """Where every exact optimum's predictions at the rows of ``X_new`` lie for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there:
        ``(edges, low, up)`` (:mod:`.enclosure`).  With ``weight_range`` ``(λ_lo, λ_hi)`` (a cell
        of :mod:`approxpath.cells`, whose dual is feasible at ``λ_lo``) it holds for every λ of
        the range: the bound on :math:`\\lVert\\beta^*\\rVert_1` and the screening are weakest at the
        smallest λ, which is used."""
        from .enclosure import prediction_enclosure

        return prediction_enclosure(self, primal, dual, gap_bound, lo, hi, X_new, rows,
                                    None if weight_range is None else float(weight_range[0]))

    # -------------------------------------------------------------- gap bounds
    def dual_values(self, U, W, err, positions):
        """Dual objectives :math:`y^\\top d - \\tfrac12\\lVert d\\rVert^2` of :math:`d = \\sum_k w_k u_k`
        (the columns of ``U`` (n, K)) for candidates of weights ``W`` (r, K, m + 1) at the
        ``positions`` (T,) of the piece, and their rounding allowances: values (r, T), margins
        (r,).  With ``G = U'U``, :math:`\\sum_k w_k\\, y^\\top u_k - \\tfrac12 \\sum_{kl} w_k w_l G_{kl}`;
        the allowance covers the dot products, the few operations after them and the weights'
        error ``err`` (r, K) plus their evaluation (:func:`~approxpath.bernstein.coefficient_rounding`),
        times the largest derivative in a weight."""
        W = np.asarray(W, dtype=float)
        w = bernstein_at(W, np.asarray(positions, dtype=float))  # (r, K, T)
        yU, G = self.y @ U, U.T @ U
        aU = np.abs(U)
        yaU, aG = np.abs(self.y) @ aU, aU.T @ aU
        lin = np.einsum("rkt,k->rt", w, yU)
        quad = np.einsum("rkt,kl,rlt->rt", w, G, w)
        values = lin - 0.5 * quad
        top = np.abs(w).max(axis=-1)  # (r, K)
        magnitude = top @ yaU + np.einsum("rk,kl,rl->r", top, aG, top)
        moving = W.shape[-1] > 1
        err = np.asarray(err, dtype=float) + coefficient_rounding(W)
        derivative = yaU[None, :] + top @ aG  # (r, K): |d values / d w_k|
        margin = fp_margin(2 * self.n + (16 if moving else 0), 1.0) * magnitude + 1.01 * (err * derivative).sum(axis=-1)
        return values, margin

    def _scaled_value(self, dual):
        """``(dual objective, rounding allowance)`` of a dual ``s u`` constant on its piece (a
        point, or one point with a constant weight), or None for another dual."""
        if is_moving(dual) and (dual.degree > 0 or len(dual.points) > 1):
            return None
        s, u = (float(dual.weights[0, 0]), dual.points[0].u) if is_moving(dual) else (1.0, dual.u)
        u = np.asarray(u, dtype=float)
        d = s * float(self.y @ u) - 0.5 * s * s * float(u @ u)
        return d, fp_margin(2 * self.n, abs(s) * float(np.abs(self.y) @ np.abs(u)) + s * s * float(u @ u))

    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        scaled = self._scaled_value(dual)  # the dual objective depends on neither parameter
        if scaled is not None:
            return scaled[0] - scaled[1]
        U, W, err = parts(dual, "u", lo, hi)
        # constant, or concave in t (d linear in t): least at an end
        values, margin = self.dual_values(U, W[None], err[None], [0.0, 1.0] if W.shape[1] > 1 else [0.0])
        return float(values.min() - margin[0])

    def _scaled_parts(self, dual, lo, hi, base):
        """``(U, W, err)`` of :func:`_parts` for the dual scaled by :math:`s = \\lambda / base`
        (:meth:`scaled_gap`): the weights times ``s`` as computed, ``err`` widened by the rounding
        of ``s`` and of the products (one unit roundoff each, relative)."""
        U, W, err = parts(dual, "u", lo, hi)
        s = self.sweep.weight / float(base)
        W = s * W
        return U, W, s * err + 2.02 * UNIT_ROUNDOFF * np.abs(W).max(axis=1)

    def scaled_gap(self, primal, dual, lo, hi, base):
        """A bound of the gap at this bound's λ over ``[lo, hi]`` of the pair whose dual is the
        stored one scaled by :math:`s = \\lambda / base` (a cell ``[lo, hi] x [base, λ]`` of
        :mod:`approxpath.cells` lets the dual grow with λ): :math:`s\\,d` is feasible at λ where
        :math:`d` is at ``base`` (:math:`\\lVert K s d\\rVert_\\infty \\le s\\, base`, :math:`1^\\top s d = 0`), and its
        objective :math:`s\\, y^\\top d - \\tfrac{s^2}2\\lVert d\\rVert^2` is that of the dual with its weights
        times ``s`` (:meth:`dual_values`).  At an optimum for ``base`` the gap is
        :math:`\\tfrac12\\lVert r\\rVert^2(s - 1)^2`, where a dual held fixed pays
        :math:`(\\lambda - base)\\lVert\\beta\\rVert_1`."""
        U, W, err = self._scaled_parts(dual, lo, hi, base)
        lam = self.sweep.weight
        if is_moving(primal) and hi > lo:
            W = W if W.shape[1] > 1 else np.repeat(W, 2, axis=1)  # (a constant weight as a line)
            return self._moving_primal_gap(primal, U, W, err, lo, hi, lam)
        if W.shape[1] > 1 and hi > lo:  # as gap(): the primal convex between nodes, the dual concave
            xs, sq, reg, margin = self.primal_nodes(primal, lo, hi, lam)
            d, d_margin = self.dual_values(U, W[None], err[None], (xs - lo) / (hi - lo))
            gap = sq + reg - d[0]
            return float(gap.max()) + margin + float(d_margin[0]) + fp_margin(2, float(np.abs(gap).max() + np.abs(d).max()))
        d, d_margin = self.dual_values(U, W[None], err[None], [0.0])
        p = self._primal_upper(primal, lo, hi, lam)
        return p - float(d[0, 0]) + float(d_margin[0]) + fp_margin(2, abs(p) + abs(float(d[0, 0])))

    def scaled_dual_floor(self, dual, lo, hi, base):
        """:meth:`dual_floor` of the dual scaled by :math:`\\lambda / base` (:meth:`scaled_gap`)."""
        U, W, err = self._scaled_parts(dual, lo, hi, base)
        values, margin = self.dual_values(U, W[None], err[None], [0.0, 1.0] if W.shape[1] > 1 else [0.0])
        return float(values.min() - margin[0])

    def primal_nodes(self, primal, lo, hi, lam):
        """``(xs, sq, reg, margin)``: the primal objective on the piece ``[lo, hi]`` at ``lam`` is
        at most ``sq + reg`` at the nodes ``xs`` and convex between them (rounding: ``margin``
        on top): with the residual enclosures of :meth:`residual_envelopes`,
        :math:`\\tfrac12 r_i^2 \\le \\tfrac12\\max(\\text{low}_i^2, \\text{up}_i^2)` (interpolated)."""
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y - float(primal.beta0), lo, hi)
        sq = 0.5 * np.maximum(low * low, up * up).sum(axis=0)
        reg = lam * float(np.abs(beta).sum())
        return xs, sq, reg, fp_margin(2 * self.n, float(sq.max()) + reg)

    def _primal_upper(self, primal, lo, hi, lam):
        """Upper bound of the primal objective on the piece ``[lo, hi]`` at ``lam``, rounding
        included (:meth:`primal_nodes`, maximized over the nodes).  A moving primal (only at a
        point here: its pieces are bounded by :meth:`moving_primal_ends`) is its value there as
        computed, and the objective of the exact combination is at most
        :math:`P + \\lVert\\tilde r\\rVert\\rho + \\rho^2/2 + \\lambda e` (:meth:`_point_of`), with
        :math:`\\lVert\\tilde r\\rVert \\le \\sqrt{2P}` for the computed point's bound :math:`P`."""
        if is_moving(primal):
            point, rho, e = self._point_of(primal, lo)
            p = self._primal_upper(point, lo, hi, lam)
            return p + 1.01 * (math.sqrt(2.0 * max(p, 0.0)) * rho + 0.5 * rho * rho + lam * e)
        xs, sq, reg, margin = self.primal_nodes(primal, lo, hi, lam)
        return float(sq.max()) + reg + margin

    def moving_primal_ends(self, primal, lo, hi, lam):
        """``(xs, top, margin)``: on a bandwidth piece ``lo < hi``, the objective of a moving
        primal :math:`\\beta(t) = \\sum_k w_k(t)\\beta_k`, :math:`\\beta_0(t) = \\sum_k w_k(t)\\beta_{0k}`
        (weights linear in ``t``) is, on the sub-interval between the nodes ``xs[j]`` and
        ``xs[j + 1]`` (J + 1,), at most a convex function whose values at the two ends are
        ``top[j]`` (J, 2), less the rounding ``margin`` of the sums.

        :meth:`_combinations` bounds :math:`(K_t\\beta(t))_i` there by a line plus a curvature
        term from above and from below (each the larger, the smaller, of the choices' end values,
        which the chord of the choices' largest end values dominates), widened by the rounding
        allowance of :meth:`_lines`; :math:`\\beta_0(t)` is linear.  So :math:`r_i(t) = y_i -
        \\beta_0(t) - (K_t\\beta(t))_i` lies between two lines, :math:`r_i^2` below the larger of their
        squares (convex), and :math:`\\lambda\\lVert\\beta(t)\\rVert_1` is convex: the sum is largest at
        an end of the sub-interval, where the values are computed and widened by the weights'
        error (:func:`~approxpath.bernstein.coefficient_rounding`) and their rounding.
        """
        B, W, err = parts(primal, "beta", lo, hi, linear=True)
        c = columns(primal, "beta0")[0]  # (K,): the points' intercepts
        xs, low, up, w, allowance = self._lines(B, W[None], err[None], lo, hi)
        _, _, e_up, e_low, b_up, b_low = self._combinations(w, low, up, ends=True)
        upper = e_up[0] + (b_up[0] + allowance[0][:, None])[..., None]  # (n, J, 2)
        lower = e_low[0] - (b_low[0] + allowance[0][:, None])[..., None]
        w = w[0]  # (K, J + 1): the weights at the nodes, each within E of exact
        E = np.asarray(err, dtype=float) + coefficient_rounding(W)
        b0 = c @ w
        b0_err = float(E @ np.abs(c)) + fp_margin(c.size, float(np.abs(c) @ np.abs(w).max(axis=1)))
        b0 = np.stack([b0[:-1], b0[1:]], axis=-1)  # (J, 2): at each sub-interval's ends
        y = self.y[:, None, None]
        R = np.maximum(np.abs(y - b0 - lower), np.abs(y - b0 - upper))  # |r_i| at the ends
        R = R + b0_err + fp_margin(4, 1.0) * (np.abs(y) + np.abs(b0) + np.maximum(np.abs(upper), np.abs(lower)))
        aB = np.abs(B)
        l1 = (np.abs(B @ w).sum(axis=0) + float(E @ aB.sum(axis=0))
              + fp_margin(self.n + c.size, 1.0) * (aB @ np.abs(w)).sum(axis=0))
        top = 0.5 * (R * R).sum(axis=0) + lam * np.stack([l1[:-1], l1[1:]], axis=-1)
        return xs, top, fp_margin(self.n + 4, float(top.max()))

    def _point_of(self, primal, x):
        """``(point, rho, e)``: a moving primal's value at the bandwidth ``x`` as computed, ``e`` a
        bound of :math:`\\lVert\\delta\\beta\\rVert_1` (the computed against the exact combination)
        and :math:`\\rho = \\sqrt n\\,(e + |\\delta\\beta_0|)`, a bound of the residual's change
        :math:`\\lVert\\delta r\\rVert` (entries of :math:`K_x` are at most 1)."""
        B, W, err = parts(primal, "beta", x, x)
        w, E = W[:, 0], np.asarray(err, dtype=float) + coefficient_rounding(W)
        c = columns(primal, "beta0")[0]
        aB, K = np.abs(B), c.size
        e = float(E @ aB.sum(axis=0)) + fp_margin(self.n + K, float((aB @ np.abs(w)).sum()))
        e0 = float(E @ np.abs(c)) + fp_margin(K, float(np.abs(c) @ np.abs(w)))
        return KLassoPrimal(beta=B @ w, beta0=float(c @ w)), math.sqrt(self.n) * (e + e0), e

    def gap(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        # (a moving primal of degree 0 too: a weighted constant point, which the scaled-dual
        # bound below, reading a point's fields, does not take)
        if not self.sweep.along_bandwidth and (is_moving(primal) or (is_moving(dual) and dual.degree > 0)):
            return lam_gap(self, primal, dual, lo, hi)
        if is_moving(primal) and hi > lo:  # the primal moves with the bandwidth
            U, W, err = parts(dual, "u", lo, hi, linear=True)
            return self._moving_primal_gap(primal, U, W, err, lo, hi, self.sweep.weight)
        U, W, err = parts(dual, "u", lo, hi) if is_moving(dual) and dual.degree > 0 else (None, np.ones((1, 1)), None)
        if W.shape[1] > 1 and hi > lo:
            # the primal bound is convex between the nodes and the moving dual's objective
            # concave in t: their difference is largest at a node
            xs, sq, reg, margin = self.primal_nodes(primal, lo, hi, self.sweep.at(hi)[1])
            d, d_margin = self.dual_values(U, W[None], err[None], (xs - lo) / (hi - lo))
            gap = sq + reg - d[0]
            return float(gap.max()) + margin + float(d_margin[0]) + fp_margin(2, float(np.abs(gap).max() + np.abs(d).max()))
        # a constant dual (at a point, the moving one there): on the lambda path the primal is
        # increasing in lambda and the dual does not depend on it
        scaled = self._scaled_value(dual)
        if scaled is None:
            d, margin = self.dual_values(U, W[None], err[None], [0.0])
            scaled = float(d[0, 0]), float(margin[0])
        p = self._primal_upper(primal, lo, hi, self.sweep.at(hi)[1])
        return p - scaled[0] + scaled[1]

    def _moving_primal_gap(self, primal, U, W, err, lo, hi, lam):
        """The gap bound on ``[lo, hi]`` of a moving primal (:meth:`moving_primal_ends`) and the
        dual :math:`\\sum_k w_k u_k` (``U`` (n, K), ``W`` (K, 2), ``err`` (K,)), whose objective is
        concave in ``t``: on each sub-interval the difference is convex, largest at an end."""
        xs, top, margin = self.moving_primal_ends(primal, lo, hi, lam)
        d, d_margin = self.dual_values(U, W[None], err[None], (xs - lo) / (hi - lo))
        d = np.stack([d[0, :-1], d[0, 1:]], axis=-1)
        gap = top - d
        return float(gap.max()) + margin + float(d_margin[0]) + fp_margin(2, float(np.abs(top).max() + np.abs(d).max()))
