"""Certificates of the points of a feature path, computed in numpy from the points alone.

**What is certified.**  Problem (1) of Li & Sminchisescu is not convex in β, so nothing here
says a point is globally optimal.  Every point :math:`(D, \\beta, \\alpha, \\alpha_0)` is checked
for

(a) *inner ε-optimality*: at the fixed kernel :math:`K = K(\\beta)` the kernel ridge regression
    with intercept

    .. math::

        P = \\min_{\\alpha, \\alpha_0} \\lVert y - K\\alpha - \\alpha_0\\mathbf 1\\rVert^2
        \\quad\\text{s.t.}\\quad \\alpha^\\top K\\alpha \\le C

    is convex, with the dual (write :math:`\\lVert r\\rVert^2 = \\max_u 2u^\\top r - \\lVert
    u\\rVert^2`, minimize over :math:`\\alpha_0` (forces :math:`\\mathbf 1^\\top u = 0`) and over α
    at multiplier λ, then over λ)

    .. math::

        \\max_{u:\\ \\mathbf 1^\\top u = 0}\\; 2u^\\top y - \\lVert u\\rVert^2 - 2\\sqrt{C\\,u^\\top K u}.

    For feasible :math:`\\alpha` and :math:`\\mathbf 1^\\top u = 0` the gap is the sum of two
    nonnegative terms (Cauchy-Schwarz in the K inner product),

    .. math::

        \\text{gap} = \\lVert r - u\\rVert^2 + 2\\bigl(\\sqrt{C\\,u^\\top K u} - u^\\top K\\alpha\\bigr),
        \\qquad r = y - K\\alpha - \\alpha_0\\mathbf 1 .

    The primal is the claimed :math:`(\\alpha, \\alpha_0)`, α shrunk just enough to make
    :math:`\\alpha^\\top K\\alpha \\le C` hold with rounding accounted for; the dual is the
    centred residual, best scaled, on a dyadic grid so that :math:`\\mathbf 1^\\top u = 0`
    exactly (:func:`approxpath.numerics.zero_sum`).  The reported gap is an upper bound with
    every rounding error of its evaluation added (:func:`approxpath.numerics.fp_margin`,
    kernel entries by the kernel's own entry error).

(b) *the KKT system (5) and Theorem 1* with :math:`q_j = \\alpha^\\top\\partial_j K\\alpha`, the
    active set :math:`\\mathcal A = \\{j: \\beta_j > 0\\}`, :math:`\\eta` the mean of
    :math:`q_{\\mathcal A}` and :math:`\\hat\\lambda = \\alpha^\\top r/\\alpha^\\top\\alpha` (the
    multiplier the point implies), each as a relative residual plus its rounding allowance:
    ``stationarity`` :math:`\\lVert r - \\hat\\lambda\\alpha\\rVert_\\infty / \\lVert Hy
    \\rVert_\\infty` (the first line of (5) with the intercept's own condition), ``budget``
    :math:`|\\alpha^\\top K\\alpha - C|/C`, ``equal`` :math:`(\\max_{\\mathcal A} q -
    \\min_{\\mathcal A} q)/\\max_j|q_j|` (the second line), ``maximality`` :math:`\\max(0,
    \\max_{j \\notin \\mathcal A} q_j - \\eta)/\\max_j|q_j|` (Theorem 1(a) for β ≥ 0; the unit
    is the largest :math:`|q_j|`, not η, which vanishes where a path ends), ``sign`` (1 unless
    :math:`\\hat\\lambda > 0`, :math:`\\eta \\ge 0`, β ≥ 0: Theorem 1(b)) and ``l1``
    :math:`|D - \\lVert\\beta\\rVert_1|/D`.

Between the points see :mod:`.segments` (the inner problem along straight segments).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from approxpath.compute.parallelism import managed
from approxpath.errors import InputError
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, zero_sum
from approxpath.validate import check_X_y, positive

from ._kernels import KERNELS, kernel_degree, make_kernel

__all__ = ["PointCheck", "FeaturePathReport", "crosscheck_feature_path", "check_point", "STATEMENT"]

#: What the certificates mean, in one paragraph (printed by the reports).
STATEMENT = ("certified per point: the inner kernel ridge problem at the point's beta is solved to the "
             "stated duality gap (rigorous, rounding included) and the KKT system (5) / Theorem 1 hold to the "
             "stated relative residuals; NOT certified: global optimality of the non-convex problem (1); between "
             "the points only what certify_segments reports (the inner problem along straight segments)")
#: KKT residual names, in the order of :attr:`PointCheck.residuals`.
RESIDUALS = ("stationarity", "budget", "equal", "maximality", "sign", "l1")


@dataclass(frozen=True)
class PointCheck:
    """The certificates of one point.

    Attributes
    ----------
    index : int
        The point's row in the path.
    D : float
        The claimed budget :math:`\\lVert\\beta\\rVert_1`.
    active : tuple of int
        Features with :math:`\\beta_j > 0`.
    gap, rel_gap : float
        Upper bound on the inner duality gap, and it divided by :math:`\\lVert Hy\\rVert^2` (the
        loss of the constant predictor).
    primal, dual : float
        The inner objective at the (feasible) claimed point, and the dual objective of the dual
        point, both as computed in floating point (not bounds: the rigorous quantity is ``gap``,
        which adds their rounding).
    shrink : float
        :math:`1 - s` for the factor s applied to α to make it provably feasible (0 if it was).
    lam : float
        :math:`\\hat\\lambda`, the multiplier the point implies.
    residuals : tuple of float
        Certified upper bounds of the KKT residuals, in the order of :data:`RESIDUALS`.
    flagged : bool
    reasons : tuple of str
    """

    index: int
    D: float
    active: tuple
    gap: float
    rel_gap: float
    primal: float
    dual: float
    shrink: float
    lam: float
    residuals: tuple
    flagged: bool
    reasons: tuple = ()

    @property
    def kkt(self):
        """The largest KKT residual."""
        return max(self.residuals)

    def residual(self, name):
        return self.residuals[RESIDUALS.index(name)]


@dataclass(frozen=True)
class FeaturePathReport:
    """Certificates of every point of a feature path (:func:`crosscheck_feature_path`)."""

    kernel: str
    C: float
    tol: float
    kkt_tol: float
    checks: tuple
    wall_s: float = 0.0

    @property
    def ok(self):
        return not any(c.flagged for c in self.checks)

    @property
    def flagged(self):
        """Indices of the flagged points."""
        return tuple(c.index for c in self.checks if c.flagged)

    @property
    def rel_gap(self):
        return np.array([c.rel_gap for c in self.checks])

    @property
    def kkt(self):
        return np.array([c.kkt for c in self.checks])

    @property
    def max_rel_gap(self):
        return float(np.max(self.rel_gap)) if self.checks else math.nan

    @property
    def max_kkt(self):
        return float(np.max(self.kkt)) if self.checks else math.nan

    def __repr__(self):
        return (f"FeaturePathReport({'ok' if self.ok else f'{len(self.flagged)} flagged'}, {len(self.checks)} points, "
                f"max relative gap {self.max_rel_gap:.2g}, max KKT residual {self.max_kkt:.2g})")

    def __str__(self):
        lines = [f"{'OK' if self.ok else 'FLAGGED'}: {len(self.checks)} points of a feature path ({self.kernel}, "
                 f"C = {self.C:g}); tolerances: inner gap {self.tol:g} x ||Hy||^2, KKT residual {self.kkt_tol:g}",
                 f"  largest relative inner gap {self.max_rel_gap:.3g}, largest KKT residual {self.max_kkt:.3g}"]
        if self.checks:
            worst = max(self.checks, key=lambda c: c.kkt)
            name = RESIDUALS[int(np.argmax(worst.residuals))]
            lines.append(f"  (the largest KKT residual is '{name}' at point {worst.index}, D = {worst.D:.6g})")
        lines += [f"  - point {c.index} (D = {c.D:.6g}): {'; '.join(c.reasons)}" for c in self.checks if c.flagged][:20]
        if len(self.flagged) > 20:
            lines.append(f"  ... and {len(self.flagged) - 20} more flagged points")
        lines.append("  " + STATEMENT)
        return "\n".join(lines)

    def to_json(self):
        """A dict for one JSON line."""
        return {"ok": self.ok, "kernel": self.kernel, "C": self.C, "points": len(self.checks), "tol": self.tol,
                "kkt_tol": self.kkt_tol, "max_rel_gap": self.max_rel_gap, "max_kkt": self.max_kkt,
                "flagged": list(self.flagged), "wall_s": round(self.wall_s, 4), "statement": STATEMENT}


def check_point(kern, y, C, D, beta, alpha, alpha0, *, index=0, tol=1e-8, kkt_tol=1e-6):
    """The certificates of one point (see the module docstring); ``kern`` from ``make_kernel``.

    ``y`` and ``alpha`` have shape ``(n,)``, ``beta`` ``(d,)`` (the active set where ``beta > 0``); ``C`` is
    the budget of :math:`\\alpha^\\top K\\alpha \\le C`, ``D`` the point's claimed :math:`\\lVert\\beta\\rVert_1`,
    ``alpha0`` the intercept, ``index`` the point's row in the path (recorded).  The :class:`PointCheck` is
    ``flagged`` where the inner gap relative to :math:`\\lVert y - \\bar y\\rVert^2` (absolute where that is 0)
    exceeds ``tol`` or a KKT residual ``kkt_tol`` (NaN too), each named in ``reasons``.
    """
    yc = y - y.mean()
    scale = float(yc @ yc)
    ev = kern.at(beta)
    K = ev.K
    eK = ev.entry_error()
    gap, primal, dual, shrink = _inner_gap(K, eK, y, C, alpha, alpha0)
    rel_gap = gap / scale if scale > 0 else gap
    res, lam = _kkt_residuals(ev, eK, y, yc, C, D, beta, alpha, alpha0)
    reasons = []
    if not rel_gap <= tol:
        reasons.append(f"inner gap {rel_gap:.3g} x ||Hy||^2 > {tol:g}")
    for name, value in zip(RESIDUALS, res):
        if not value <= kkt_tol:
            reasons.append(f"KKT residual '{name}' {value:.3g} > {kkt_tol:g}")
    return PointCheck(index=index, D=float(D), active=tuple(int(k) for k in np.flatnonzero(beta > 0)), gap=gap,
                      rel_gap=rel_gap, primal=primal, dual=dual, shrink=shrink, lam=lam, residuals=tuple(res),
                      flagged=bool(reasons), reasons=tuple(reasons))


def _quad_error(eK, K, a, b):
    """Rounding bound of a computed :math:`a^\\top K b` (K > 0 entrywise, as both kernels are):
    the entries' errors :math:`e_K \\lVert a\\rVert_1 \\lVert b\\rVert_1` plus two chained sums
    of length n over :math:`|a|^\\top K |b|` (computed, with room for its own rounding)."""
    n = a.size
    entries = eK * float(np.sum(np.abs(a))) * float(np.sum(np.abs(b)))
    mag = float(np.abs(a) @ (K @ np.abs(b))) * (1.0 + 4 * n * UNIT_ROUNDOFF) + entries
    return entries + fp_margin(2 * n, mag)


def _inner_gap(K, eK, y, C, alpha, alpha0):
    """(gap bound, primal, dual, shrink) of the inner problem at the claimed point."""
    n = y.size
    u_ = UNIT_ROUNDOFF
    a = np.asarray(alpha, dtype=float)
    # make alpha'K alpha <= C hold with every rounding error added: for a_f = fl(s a) = s a + d
    # with |d| <= u s |a|, sqrt(a_f'K a_f) <= s (sqrt(q_up) + u sqrt(|a|'K|a|)) (triangle
    # inequality in the K-norm), q_up the computed a'K a plus its allowance
    Ka = K @ a
    q_up = float(a @ Ka) + _quad_error(eK, K, a, a)
    shrink = 0.0
    if q_up > C:
        m_up = float(np.abs(a) @ (K @ np.abs(a))) * (1.0 + 4 * n * u_) + eK * float(np.sum(np.abs(a))) ** 2
        s = math.sqrt(C) / (math.sqrt(q_up) + u_ * math.sqrt(m_up)) * (1.0 - 8 * u_)  # covers its own 4 roundings
        a = s * a
        shrink = 1.0 - s
        Ka = K @ a
    a1 = float(np.sum(np.abs(a)))
    r = y - Ka - alpha0
    u0 = r - r.mean()
    nu = float(u0 @ u0)
    t = 0.0
    if nu > 0:
        t = max(0.0, (float(u0 @ y) - math.sqrt(C * max(float(u0 @ (K @ u0)), 0.0))) / nu)
    u = zero_sum(t * u0)
    Ku = K @ u
    qu = max(float(u @ Ku), 0.0)
    dqu = _quad_error(eK, K, u, u)
    d = r - u
    t1 = float(d @ d)
    # error of each computed r_i - u_i: K alpha (entries and sum), the two subtractions, one more
    dka = eK * a1 + fp_margin(n, float(np.max(K @ np.abs(a))) * (1.0 + 2 * n * u_))
    dr = dka + fp_margin(3, float(np.max(np.abs(y) + np.abs(Ka) + abs(alpha0) + np.abs(u))))
    t1_up = (math.sqrt(t1 + fp_margin(n, t1)) + math.sqrt(n) * dr) ** 2
    t2_up = math.sqrt(C * (qu + dqu)) * (1.0 + 4 * u_)
    t3 = float(u @ Ka)
    t3_lo = t3 - _quad_error(eK, K, u, a)
    body = t1_up + 2.0 * (t2_up - t3_lo)
    gap = body + fp_margin(4, t1_up + 2 * t2_up + 2 * abs(t3_lo))
    primal = float(r @ r)
    dual = 2.0 * float(u @ y) - float(u @ u) - 2.0 * math.sqrt(C * qu)
    return max(gap, 0.0), primal, dual, shrink


def _kkt_residuals(ev, eK, y, yc, C, D, beta, alpha, alpha0):
    """Certified upper bounds of the residuals :data:`RESIDUALS` and the implied λ."""
    n = y.size
    a = np.asarray(alpha, dtype=float)
    a1 = float(np.sum(np.abs(a)))
    Ka = ev.K @ a
    r = y - Ka - alpha0
    aa = float(a @ a)
    lam = float(a @ r) / aa if aa > 0 else math.nan
    ycmax = float(np.max(np.abs(yc))) * (1.0 - 4 * UNIT_ROUNDOFF)
    dka = eK * a1 + fp_margin(n, float(np.max(ev.K @ np.abs(a))) * (1.0 + 2 * n * UNIT_ROUNDOFF))
    stat = np.abs(r - lam * a)
    dstat = dka + fp_margin(4, float(np.max(np.abs(y) + np.abs(Ka) + abs(alpha0) + abs(lam) * np.abs(a))))
    stationarity = (float(np.max(stat)) + dstat) / ycmax if ycmax > 0 else math.inf
    qa = float(a @ Ka)
    budget = (abs(qa - C) + _quad_error(eK, ev.K, a, a)) / C
    q = ev.forms(a)
    dq = ev.form_error(a)
    act = np.flatnonzero(beta > 0)
    out = np.setdiff1d(np.arange(beta.size), act)
    equal = maximality = 0.0
    eta = deta = 0.0
    # the unit of the gradient residuals: the largest |q_j| (eta itself vanishes where the path
    # ends at a stationary point of the problem without the budget)
    qs = float(np.max(np.abs(q) - dq)) if q.size else 0.0
    if act.size:
        eta = float(np.mean(q[act]))
        deta = float(np.max(dq[act]))
        # qs <= 0: every q_j is 0 up to its rounding (a stationary point of the problem
        # without the budget, where a path may end): equal and maximal hold to rounding
        if qs > 0:
            if act.size > 1:  # one active feature: nothing to be equal to
                equal = (float(np.max(q[act]) - np.min(q[act])) + 2 * deta) / qs
            if out.size:
                maximality = max(0.0, float(np.max(q[out] + dq[out])) - (eta - deta)) / qs
    bmin = float(np.min(beta)) if beta.size else 0.0
    sign = max(0.0, -bmin) / max(float(D), 1e-300)
    if not (lam > 0) or (act.size and not eta + deta >= 0):
        sign = max(sign, 1.0)
    total = float(np.sum(beta))
    l1 = (abs(float(D) - total) + fp_margin(beta.size, np.sum(np.abs(beta)))) / max(abs(float(D)), 1e-300)
    return [stationarity, budget, equal, maximality, sign, l1], lam


@managed
def crosscheck_feature_path(X, y, D, beta, alpha, alpha0, *, C, kernel="ard-gaussian", degree=None, tol=1e-8,
                            kkt_tol=1e-6):
    """Certify a feature path computed anywhere (arrays), point by point.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training inputs, scaled exactly as when the path was computed.
    y : array_like of shape (n,)
    D : array_like of shape (m,)
        The budgets :math:`\\lVert\\beta\\rVert_1` of the points.
    beta : array_like of shape (m, d)
        Feature weights (β ≥ 0).
    alpha : array_like of shape (m, n)
        Expansion coefficients.
    alpha0 : array_like of shape (m,)
        Intercepts.
    C : float
        The bound of :math:`\\alpha^\\top K\\alpha \\le C`.
    kernel : {"ard-gaussian", "ard-polynomial"}
    degree : int, optional
        The power m of the ARD-polynomial kernel (default 2); the ARD-Gaussian kernel has none.
    tol : float
        A point is flagged when its inner gap exceeds ``tol`` times :math:`\\lVert Hy\\rVert^2`.
    kkt_tol : float
        ... or one of its KKT residuals exceeds ``kkt_tol``.

    Returns
    -------
    FeaturePathReport
    """
    t0 = time.perf_counter()
    X, y = check_X_y(X, y)
    y = np.asarray(y, dtype=float)
    C = positive("C", C)
    tol, kkt_tol = positive("tol", tol), positive("kkt_tol", kkt_tol)
    if kernel not in KERNELS:
        raise InputError(f"unknown kernel {kernel!r}: use one of {', '.join(KERNELS)}")
    degree = kernel_degree(kernel, degree)
    n, d = X.shape
    D = _rows("D", D, None, 1)
    m = D.shape[0]
    beta = _rows("beta", beta, m, 2, d)
    alpha = _rows("alpha", alpha, m, 2, n)
    alpha0 = _rows("alpha0", alpha0, m, 1)
    if np.any(beta < 0):
        i, j = np.argwhere(beta < 0)[0]
        raise InputError(f"beta must be >= 0 (the ARD kernels need nonnegative weights); beta[{i}, {j}] = "
                         f"{beta[i, j]!r}")
    kern = make_kernel(kernel, X, degree)
    checks = tuple(check_point(kern, y, C, D[i], beta[i], alpha[i], float(alpha0[i]), index=i, tol=tol,
                               kkt_tol=kkt_tol) for i in range(m))
    return FeaturePathReport(kernel=kernel, C=C, tol=tol, kkt_tol=kkt_tol, checks=checks,
                             wall_s=time.perf_counter() - t0)


def _rows(name, a, m, ndim, width=None):
    """``a`` as a finite float array of ``ndim`` dimensions, ``m`` rows and ``width`` columns."""
    try:
        a = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers ({exc})") from None
    if a.ndim != ndim:
        shape = "(points,)" if ndim == 1 else f"(points, {width})"
        raise InputError(f"{name} must have shape {shape}; got {a.shape}")
    if m is not None and a.shape[0] != m:
        raise InputError(f"{name} has {a.shape[0]} rows but D has {m} points: pass one row per point")
    if width is not None and a.shape[1] != width:
        raise InputError(f"{name} must have {width} columns (one per {'feature' if name == 'beta' else 'sample'}); "
                         f"got {a.shape[1]}")
    if a.shape[0] == 0:
        raise InputError(f"{name} is empty: the path has no points")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} contains NaN or inf")
    return a
