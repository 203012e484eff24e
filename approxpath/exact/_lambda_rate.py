"""The moving rate of the exact λ-path (eq. (18)): the linear algebra behind
:func:`approxpath.exact.lambda_path`, one solve per segment between breakpoints.

The reduced system of :mod:`approxpath.exact._linalg` is kept as a Cholesky factor that is
up/down-dated as points join and leave (``factor="update"``, the default), or the papers'
bordered system is refactored by LU at every breakpoint (``factor="lu"``, kept for comparison).
"""

from __future__ import annotations

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF

from ._linalg import ActiveFactor, FactorBroken, column_copies, kkt_matrix, refuse_copies, kkt_solve

__all__ = ["FACTORS", "RateEngine"]

# The updated factor's rate is accepted when the residual of H r = s is below this multiple of
# (n + m) u ||H||_inf ||r||_inf: the rounding of computing that residual is about (n + m) u
# ||H|| ||r||, a fresh Cholesky solve leaves ~m u ||H|| ||r|| (measured: below 1 (n + m) u
# ||H|| ||r|| on the test sets, fresh or updated), so 16 only catches a factor that drifted.
_RESIDUAL_FACTOR = 16.0
# g is moved along each segment (g - d a) and recomputed from the residual at every
# _G_REFRESH-th breakpoint, so its rounding cannot accumulate over more than that many steps
# (the difference to the recomputed g, measured on sinc sets n = 50-400, bandwidths 0.1-30: below
# 4e-14 lam_max within 16 steps, 5e-13 lam_max over whole paths without recomputing); the
# recomputation costs O(n^2), the move O(n).
_G_REFRESH = 16
FACTORS = ("update", "lu")


class RateEngine:
    """The moving rate of eq. (18), the slope ``a`` of g along a segment, and g after a step.

    ``factor="lu"``: the papers' bordered matrix formed and factored by LU at every breakpoint,
    :math:`a = K(K_{\\mathcal A}r_{\\mathcal A} + r_0\\mathbf 1)` and g recomputed as
    :math:`K(y - K_{\\mathcal A}\\beta_{\\mathcal A} - \\beta_0\\mathbf 1)`: :math:`O(nm^2 + m^3 + n^2)`
    per breakpoint.  ``factor="update"``: the reduced system's Cholesky factor, up/down-dated;
    :math:`a = (K^2)_{\\mathcal A}^\\top r_{\\mathcal A} + r_0 K\\mathbf 1` from rows of
    :math:`K^2` computed when a point first joins (Wang, Qin and Huang's lazy entries of H);
    g moved along the segment, :math:`g \\leftarrow g - d\\,a` (exact on a segment), and
    recomputed from the residual every :data:`_G_REFRESH` breakpoints: :math:`O(nm + m^2)`.
    """

    def __init__(self, K, nu, factor):
        self.K = K
        self.nu = nu
        self.factor = factor
        self.lu_fallbacks = 0
        self.steps = 0
        self.copy_of = column_copies(K) if nu == 0 else None
        if factor == "update":
            n = K.shape[0]
            self.colmean = K.mean(axis=0)
            self.KcT = np.ascontiguousarray((K - self.colmean).T)  # row j: column j of K with its mean removed
            self.k1 = K.sum(axis=1)
            self.KK = np.empty((n, n))  # rows of K^2 = K'K, filled when a point first joins
            self.have = np.zeros(n, dtype=bool)
            self.active = ActiveFactor(self.KcT, nu)
            self.stale = False  # the factor missed an update (rebuilt at the next rate)

    def joined(self, j):
        if self.factor == "update" and not self.stale:
            try:
                self.active.append(j)
            except FactorBroken:
                self._refactor_or_stale()

    def left(self, i):
        if self.factor == "update" and not self.stale:
            self.active.delete(i)

    def _refactor_or_stale(self):
        try:
            self.active.refactor()
        except FactorBroken:
            self.stale = True

    def rate(self, signs):
        """``(act, rA, r0, a, cond, solves)``: the active points (ascending), the rate of their
        coefficients and of the bias, the slope a of g (:math:`g(\\lambda - d) = g - d a`),
        the condition estimate and the linear solves it took."""
        act = np.flatnonzero(signs)
        if self.copy_of is not None:
            refuse_copies(self.copy_of, act)
        if self.factor == "update":
            if self.stale:
                self._rebuild(act)
            got = None if self.stale else self._rate_from_factor(signs, act)
            if got is not None:
                rA, r0, cond, used = got
                missing = act[~self.have[act]]
                if missing.size:  # rows of K^2 = K K[:, j] (K symmetric) for new points
                    self.KK[missing] = (self.K @ self.K[:, missing]).T
                    self.have[missing] = True
                return act, rA, r0, self.KK[act].T @ rA + r0 * self.k1, cond, used
        c = np.concatenate(([0.0], signs[act].astype(float)))
        KA = self.K[:, act]
        rate, cond = kkt_solve(kkt_matrix(KA, self.nu), c)
        return act, rate[1:], float(rate[0]), self.K @ (KA @ rate[1:] + rate[0]), cond, 1

    def _rebuild(self, act):
        """A fresh factor of the active points ``act``: every one joins (a bordering that breaks
        is refactored with the point in it, or leaves the factor stale: LU decides then)."""
        self.active = ActiveFactor(self.KcT, self.nu)
        self.stale = False
        for j in act:
            self.joined(j)

    def _rate_from_factor(self, signs, act):
        f = self.active
        order = np.asarray(f.order)
        s = signs[order].astype(float)
        for attempt in (0, 1):  # the updated factor, then (if its residual is too large) a fresh one
            x = f.solve(s)
            res = float(np.abs(s - f.H @ x).max())
            tol = _RESIDUAL_FACTOR * (self.K.shape[0] + order.size) * UNIT_ROUNDOFF * float(
                np.abs(f.H).sum(axis=1).max() * np.abs(x).max())
            if np.all(np.isfinite(x)) and res <= tol:
                perm = np.argsort(order)
                return x[perm], -float(self.colmean[order] @ x), f.cond(), 1 + attempt
            if attempt == 0 and f.updates:
                try:
                    f.refactor()
                    continue
                except FactorBroken:
                    pass
            break
        self.stale = True  # rebuilt at the next breakpoint; this segment's rate comes from LU
        self.lu_fallbacks += 1
        return None

    def g_after(self, g, d, a, data, beta, beta0, signs):
        """g at the next breakpoint (after a step d along the segment with slope a)."""
        self.steps += 1
        if self.factor == "update" and self.steps % _G_REFRESH:
            return g - d * a
        act = np.flatnonzero(signs)
        return self.K @ data.residual(self.K[:, act], beta[act], beta0)
