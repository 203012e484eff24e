"""Kernel ridge regression over the Gaussian bandwidth or over lambda, in the coefficient form
of Bindel's notes (CS 6241, "Kernel selection"):

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

which is what :meth:`KernelRidge.gap_bound` bounds over a whole piece.  Neither problem has
constraints, so both restorations are the best scaling of the carried point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from approxpath.kernels import cross_sq_distances, gaussian, kernel_entry_error
from approxpath.problem import Declaration, InputError, Problem, fp_margin, scale_mid

__all__ = ["KernelRidge", "RidgePrimal", "RidgeDual"]


@dataclass(frozen=True)
class RidgePrimal:
    """Primal point: expansion coefficients ``c`` (n,)."""

    c: np.ndarray


@dataclass(frozen=True)
class RidgeDual:
    """Dual point: ``a`` (n,), the residual ``y - K c`` at the optimum."""

    a: np.ndarray


def _best_scale(num, den):
    """argmax_s 2 s num - s^2 den (den >= 0); 1 (keep the point) when den = 0."""
    return num / den if den > 0 else 1.0


class KernelRidge(Problem):
    """Kernel ridge regression with a Gaussian kernel; path over the bandwidth ``t`` or ``lam``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float, default 0.1
        Ridge weight :math:`\\lambda` (fixed when ``parameter="bandwidth"``).
    bandwidth : float, optional
        Fixed ``t`` of the kernel when ``parameter="lam"`` (required then).
    parameter : {"bandwidth", "lam"}
    """

    name = "kernel_ridge"
    parameters = ("bandwidth", "lam")
    has_interval_bound = True
    criteria = ("mse", "mae")
    Primal = RidgePrimal
    Dual = RidgeDual
    exact_solvers = ("cholesky",)

    def __init__(self, X, y, *, lam=0.1, bandwidth=None, parameter="bandwidth"):
        super().__init__(X, y, parameter=parameter)
        self.y = np.asarray(self.y, dtype=float)
        if not np.all(np.isfinite(self.y)):
            raise InputError("y contains NaN or inf: clean the targets first")
        if not (np.isfinite(lam) and lam > 0):
            raise InputError(f"lam must be a positive finite number; got {lam!r}")
        if parameter == "lam":
            if bandwidth is None or not (np.isfinite(bandwidth) and bandwidth > 0):
                raise InputError("parameter='lam' needs a fixed positive bandwidth=t of exp(-t||x-x'||^2)")
        elif bandwidth is not None:
            raise InputError("bandwidth= fixes t only for parameter='lam'; the bandwidth path sweeps t")
        self.lam = float(lam)
        self.bandwidth = None if bandwidth is None else float(bandwidth)

    def options(self):
        out = dict(lam=self.lam, parameter=self.parameter)
        if self.bandwidth is not None:
            out["bandwidth"] = self.bandwidth
        return out

    def default_interval(self):
        return (2.0**-10, 2.0**10) if self.parameter == "bandwidth" else (1e-3 * self.lam, 1e3 * self.lam)

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=30, seed=2)
        return [(cls(X, y, lam=0.1), (2.0**-3, 2.0**3), 0.05),
                (cls(X, y, lam=0.1, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05)]

    # -------------------------------------------------------------- parameter plumbing
    def _bw_lam(self, tau):
        """(bandwidth t, lambda) at path parameter ``tau``."""
        return (float(tau), self.lam) if self.parameter == "bandwidth" else (self.bandwidth, float(tau))

    def _kernel(self, tau):
        return gaussian(self.D, self._bw_lam(tau)[0])

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, lam = self._bw_lam(t)
        K = self._kernel(t)
        c = cp.Variable(self.n, name="c")
        obj = lam * cp.quad_form(c, cp.psd_wrap(K)) + cp.sum_squares(K @ c - self.y)
        return Declaration(cp.Problem(cp.Minimize(obj)), dict(c=c))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, lam = self._bw_lam(t)
        a = cp.Variable(self.n, name="a")
        obj = 2 * (self.y @ a) - cp.sum_squares(a) - cp.quad_form(a, cp.psd_wrap(self._kernel(t))) / lam
        return Declaration(cp.Problem(cp.Maximize(obj)), dict(a=a))

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        from approxpath.solvers import solve_cvxpy

        bw, lam = self._bw_lam(tau)
        Kc = self._kernel(tau) @ primal.c
        s = cp.Variable()  # nothing is constrained: the best multiple of the carried c
        solve_cvxpy(cp.Problem(cp.Minimize(lam * float(primal.c @ Kc) * cp.square(s) + cp.sum_squares(s * Kc - self.y))))
        return RidgePrimal(c=float(s.value) * primal.c)

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        from approxpath.solvers import solve_cvxpy

        bw, lam = self._bw_lam(tau)
        a = dual.a
        s = cp.Variable()  # the best multiple of the carried a
        quad = float(a @ a) + float(a @ (self._kernel(tau) @ a)) / lam
        solve_cvxpy(cp.Problem(cp.Maximize(2 * float(a @ self.y) * s - quad * cp.square(s))))
        return RidgeDual(a=float(s.value) * a)

    # -------------------------------------------------------------- exact solve
    def _solve_with(self, name, t):
        """``cholesky``: the closed form, one Cholesky factorization of :math:`K_t + \\lambda I`
        (no QP solver); ``Problem.solve`` then restores the pair and certifies its gap."""
        if name != "cholesky":
            raise NotImplementedError(f"kernel_ridge has no exact solver {name!r} (it has: cholesky)")
        bw, lam = self._bw_lam(t)
        K = self._kernel(t)
        c = scipy.linalg.cho_solve(scipy.linalg.cho_factor(K + lam * np.eye(self.n)), self.y)
        return RidgePrimal(c=c), RidgeDual(a=self.y - K @ c)

    # -------------------------------------------------------------- numpy maps
    def restore_primal(self, primal, dual, lo, hi=None):
        mid = scale_mid(lo, lo if hi is None else hi, self.scale)
        bw, lam = self._bw_lam(mid)
        Kc = self._kernel(mid) @ primal.c
        return RidgePrimal(c=_best_scale(float(self.y @ Kc), lam * float(primal.c @ Kc) + float(Kc @ Kc)) * primal.c)

    def restore_dual(self, dual, lo, hi=None):
        mid = scale_mid(lo, lo if hi is None else hi, self.scale)
        bw, lam = self._bw_lam(mid)
        a = dual.a
        return RidgeDual(a=_best_scale(float(a @ self.y), float(a @ a) + float(a @ (self._kernel(mid) @ a)) / lam) * a)

    def dual_from_primal(self, primal, tau):
        """The residual ``y - K c`` (the optimal dual at the optimum)."""
        return RidgeDual(a=self.y - self._kernel(tau) @ primal.c)

    def primal_objective(self, primal, tau):
        bw, lam = self._bw_lam(tau)
        Kc = self._kernel(tau) @ primal.c
        return lam * float(primal.c @ Kc) + float(np.sum((Kc - self.y) ** 2))

    def dual_objective(self, dual, tau):
        bw, lam = self._bw_lam(tau)
        a = dual.a
        return 2.0 * float(a @ self.y) - float(a @ a) - float(a @ (self._kernel(tau) @ a)) / lam

    def primal_violation(self, primal, tau):
        return 0.0 if np.all(np.isfinite(primal.c)) else np.inf  # unconstrained

    def dual_violation(self, dual, tau):
        return 0.0 if np.all(np.isfinite(dual.a)) else np.inf  # unconstrained

    def certificate_errors(self, primal, dual, lo, hi):
        errors = []
        for side, v in (("c", primal.c), ("a", dual.a)):
            v = np.asarray(v)
            if v.shape != (self.n,) or not np.all(np.isfinite(v)):
                errors.append(f"{side} must be {self.n} finite numbers")
        return errors

    def predict(self, primal, tau, X_new):
        """:math:`f(x) = \\sum_j c_j k_t(x_j, x)` at the rows of ``X_new`` (m, d): shape (m,)."""
        return gaussian(cross_sq_distances(X_new, self.X), self._bw_lam(tau)[0]) @ primal.c

    # -------------------------------------------------------------- gap bounds
    def _gap_terms(self, c, a, tau):
        """The gap as the sum of its two nonnegative terms (see the module docstring), and the
        magnitude a rounding allowance must cover."""
        bw, lam = self._bw_lam(tau)
        K = self._kernel(tau)
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
        return fp_margin(8 * self.n, magnitude) + 4 * kernel_entry_error(self.X.shape[1]) * magnitude

    def gap_bound(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        c, a = np.asarray(primal.c, dtype=float), np.asarray(dual.a, dtype=float)
        (g_lo, m_lo), (g_hi, m_hi) = self._gap_terms(c, a, lo), self._gap_terms(c, a, hi)
        if hi == lo or self.parameter == "lam":
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
        lam = self.lam
        D = self.D
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
        M += fp_margin(8 * self.n + 760 * (self.X.shape[1] + 3), m_abs)
        h = hi - lo
        # maximum over s in [0, h] of g_lo + (g_hi - g_lo) s / h + M s (h - s) / 2
        s = h / 2 + (g_hi - g_lo) / (M * h) if M > 0 else (h if g_hi > g_lo else 0.0)
        s = min(max(s, 0.0), h)
        return g_lo + (g_hi - g_lo) * s / h + 0.5 * M * s * (h - s)

    def dual_lower_bound(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        bw_lo, lam_lo = self._bw_lam(lo)
        a = np.asarray(dual.a, dtype=float)
        aa = np.outer(a, a)
        if self.parameter == "bandwidth":
            # a'K_tau a over [lo, hi]: positive products at their largest (lo), negative at hi
            quad = float(np.sum(np.where(aa > 0, aa * np.exp(-lo * self.D), aa * np.exp(-hi * self.D)))) / self.lam
        else:  # -a'Ka/lam is increasing in lam: smallest at lo
            quad = float(a @ (self._kernel(lo) @ a)) / lam_lo
        d = 2.0 * float(a @ self.y) - float(a @ a) - quad
        sa = np.abs(a).sum()
        return d - self._margin(2 * sa * np.abs(self.y).max() + float(a @ a) + sa * sa / self._bw_lam(lo)[1])
