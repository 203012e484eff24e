"""Certificate side of sparse robust l1 kernel regression (numpy only: what ``approxpath verify``
builds).

A stored piece is a primal :math:`\\beta` and a dual :math:`u` with :math:`\\lVert u\\rVert_\\infty \\le 1`
and :math:`\\max_\\tau\\lVert K_\\tau u\\rVert_\\infty \\le \\lambda` on the piece (rigorous); the gap
:math:`\\lVert y - K_\\tau\\beta\\rVert_1 + \\lambda\\lVert\\beta\\rVert_1 - y^\\top u` is bounded over the
piece from the residuals' Hermite enclosures.

On a bandwidth piece either side may *move* with the bandwidth :math:`t`
(:class:`~approxpath.moving.Moving`, weights linear in :math:`t`): :math:`\\beta(t) = \\sum_k
w_k(t)\\,\\beta_k` and :math:`u(t) = \\sum_k v_k(t)\\, u_k`, the combination of two exact solves whose
weight drifts with ``t``, which keeps the interpolated pair near the solution path across the
piece (:mod:`.moving`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from approxpath.bernstein import coefficient_rounding
from approxpath.moving import is_moving, parts
from approxpath.numerics import fp_margin

from .._regression import RegressionBound
from .moving import anchored, anchored_combinations, box_norm, dual_values, lam_gap, moving_gaps

__all__ = ["RobustL1Bound", "RobustL1Primal", "RobustL1Dual"]


@dataclass(frozen=True)
class RobustL1Primal:
    """Primal point: coefficients ``beta`` (n,)."""

    beta: np.ndarray


@dataclass(frozen=True)
class RobustL1Dual:
    """Dual point ``u`` (n,).

    Not part of the certificate: ``basis``, the optimal simplex basis of the exact solve it
    came from (a warm start for the next); ``tau``, the parameter of that solve; ``parents``,
    the two exact pairs an interpolated dual combines."""

    u: np.ndarray
    basis: object = field(default=None, compare=False, repr=False)
    tau: float = field(default=None, compare=False, repr=False)
    parents: tuple = field(default=None, compare=False, repr=False)


class RobustL1Bound(RegressionBound):
    """Gap bounds of sparse robust l1 kernel regression over the bandwidth (fixed ``lam``) or
    over ``lam`` (fixed ``bandwidth``); ``dual_restoration`` is ``"moving"``, ``"projection"``
    or ``"scaling"``."""

    name = "robust_l1"
    Primal = RobustL1Primal
    Dual = RobustL1Dual
    DUAL_RESTORATIONS = ("moving", "projection", "scaling")

    def errors(self, primal, dual, lo, hi):
        for side, point, name in (("beta", primal, "beta"), ("u", dual, "u")):
            for p in point.points if is_moving(point) else (point,):
                v = np.asarray(getattr(p, name), dtype=float)
                if v.shape != (self.n,) or not np.all(np.isfinite(v)):
                    return [f"{side} must be {self.n} finite numbers"]
        U, W, err = parts(dual, "u", lo, hi)
        errors = []
        box = box_norm(U, W, err)
        if box > 1.0:
            errors.append(f"|u| exceeds 1 on the piece (max {box:.17g})")
        if W.shape[1] > 1 and not self.sweep.along_bandwidth:
            # lambda path: K is fixed and |(K u(lam))_i| - lam is convex in lam (u linear): the ends
            for end, w in ((lo, W[:, 0]), (hi, W[:, -1])):
                delta = fp_margin(U.shape[1], 1.0) * (np.abs(U) @ np.abs(w)) + np.abs(U) @ err
                sup = self.kernel_sup_norm(U @ w, end) + float(delta.sum())
                if not sup <= end:
                    errors.append(f"dual infeasible at lambda = {end:.17g}: ||K u||_inf <= {sup:.17g}")
            return errors
        if W.shape[1] == 1 and U.shape[1] == 1:  # s u: s ||K u||, one more rounding where s is not 1
            s = float(W[0, 0])
            sup = abs(s) * self.kernel_sup_norm(U[:, 0], lo, hi)
            sup = sup if s in (0.0, 1.0, -1.0) else sup * (1.0 + 2.0**-52)
        elif hi == lo:  # the combination as computed, and how far it is from exact (|K| <= 1)
            w = W[:, 0]
            delta = fp_margin(U.shape[1], 1.0) * (np.abs(U) @ np.abs(w)) + np.abs(U) @ (err + coefficient_rounding(W))
            sup = self.kernel_sup_norm(U @ w, lo, hi) + float(delta.sum())
        else:
            W = W if W.shape[1] == 2 else np.repeat(W, 2, axis=1)
            sup = float(self.moving_sup_norms(U, W[None], err[None], lo, hi)[0])
        lam = self.sweep.weight_floor(lo)
        if not sup <= lam:
            errors.append(f"dual infeasible on the piece: max ||K u||_inf <= {sup:.17g} exceeds lambda = {lam:.17g}")
        return errors

    @staticmethod
    def _combinations(w, low, up, ends=False):
        # an anchor and a direction (the pairs the search builds): the same values, cheaper
        if anchored(w):
            return anchored_combinations(w, low, up, ends)
        return RegressionBound._combinations(w, low, up, ends)

    # -------------------------------------------------------------- gap bounds
    def dual_floor(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        U, W, err = parts(dual, "u", lo, hi)
        # linear in t (constant for a fixed dual): least at an end
        values, margin = dual_values(self.y, U, W[None], err[None], [0.0, 1.0] if W.shape[1] > 1 else [0.0])
        return float(values.min() - margin[0])

    def gap(self, primal, dual, lo, hi=None):
        """Constant pair: :math:`|r_i| \\le \\max(|\\text{low}_i|, |\\text{up}_i|)` with the residual
        enclosures of :meth:`residual_envelopes`, summed and maximized over the breakpoints
        (convex between them); on the lambda path the primal is increasing in lambda: its value
        at ``hi``.  A moving pair: :func:`.moving.moving_gaps`."""
        hi = lo if hi is None else hi
        B, Wp, errp = parts(primal, "beta", lo, hi)
        U, Wd, errd = parts(dual, "u", lo, hi)
        if max(Wp.shape[1], Wd.shape[1]) > 1 and hi > lo and not self.sweep.along_bandwidth:
            return lam_gap(self, primal, dual, lo, hi)
        if max(Wp.shape[1], Wd.shape[1]) > 1 and hi > lo:
            Wp, Wd = (W if W.shape[1] == 2 else np.repeat(W, 2, axis=1) for W in (Wp, Wd))
            return float(moving_gaps(self, B, Wp[None], errp[None], U, Wd[None], errd[None], lo, hi)[0])
        # constant on the piece (at a point: the pair there)
        if Wp.shape == (1, 1) and Wp[0, 0] == 1.0:
            beta, extra = B[:, 0], 0.0
        else:  # the combination as computed, and how far it is from exact
            w = Wp[:, 0]
            beta = B @ w
            extra = float(np.sum(fp_margin(B.shape[1], 1.0) * (np.abs(B) @ np.abs(w))
                                 + np.abs(B) @ (errp + coefficient_rounding(Wp))))
        xs, low, up = self.residual_envelopes(beta, self.y, lo, hi)
        loss = float(np.maximum(np.abs(low), np.abs(up)).sum(axis=0).max())
        lam = self.sweep.at(hi)[1]
        reg = lam * float(np.abs(beta).sum())
        d, d_margin = dual_values(self.y, U, Wd[None], errd[None], [0.0])
        d = float(d[0, 0])
        # the primal combination's rounding moves the loss by at most n and the regularizer by
        # lam per unit of its entries' sum (|K| <= 1)
        shift = (self.n + lam) * extra
        return loss + reg - d + fp_margin(2 * self.n, loss + reg + abs(d)) + float(d_margin[0]) + shift
