"""The exact kLASSO regularization (λ) path of Wang, Qin and Huang (§3) and its stopping rules.

Between breakpoints the solution moves linearly in λ with the moving rate of eq. (18); the
rate comes from the reduced system of :mod:`approxpath.exact._linalg`, whose Cholesky factor is
up/down-dated as points join and leave (``factor="update"``, the default) or from the papers'
bordered system refactored by LU at every breakpoint (``factor="lu"``, kept for comparison);
both are :class:`~approxpath.exact._lambda_rate.RateEngine`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from approxpath.compute.parallelism import managed
from approxpath.compute.distances import cross_sq_distances
from approxpath.compute.kernels import gaussian
from approxpath.numerics import fp_margin
from approxpath.validate import is_finite

from ._common import (EVENTS_PER_POINT, Event, ExactPath, ExactPathError, InputError, check_positive,
                      count_or_none, PathData)
from ._lambda_rate import FACTORS, RateEngine

__all__ = ["lambda_path"]


def lambda_path(X, y, bandwidth, lam_min=None, *, max_events=None, max_landmarks=None, target_mse=None,
                X_val=None, y_val=None, nu=0.0):
    """The exact kLASSO regularization path of Wang, Qin and Huang (§3), for fixed bandwidth.

    Starts at :math:`\\lambda_{max} = \\lVert K_t(y - \\bar y\\mathbf 1)\\rVert_\\infty` with
    β = 0, β0 = ȳ (the closed form for λ ≥ λ_max) and decreases λ.  Between breakpoints the
    solution moves linearly with the moving rate :math:`r = D^{-1}[0; s]` (eq. (18)); the next
    breakpoint is the nearest of "an active coefficient reaches 0" and "an inactive
    :math:`|g_j|` reaches λ" (eq. (22)), both in closed form; the update is eqs. (23)–(25).
    The rate's linear system is kept as a Cholesky factor that is bordered when a point joins
    and down-dated when one leaves (:math:`O(nm + m^2)` per breakpoint, m active points), and
    refactored when the residual of a solve shows that the updates lost accuracy.

    The path stops at the first of the paper's stopping rules (§3: "the landmark number, the
    prediction accuracy, the regularization value"): ``lam_min``, ``max_landmarks``,
    ``target_mse``, and ``max_events``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    bandwidth : float
        t of :math:`K_t = \\exp(-tD)` (Wang's σ = 1/t).
    lam_min : float, optional
        Stop at this λ (default :math:`10^{-3}\\lambda_{max}`); the last point is the exact
        solution there.
    max_events : int, optional
        Record at most this many events: the path ends at the breakpoint of the next one (default
        50 n; 0: the path is the point λ_max, no events).
    max_landmarks : int, optional
        Stop at the breakpoint where a point would join an active set ("landmarks") of this
        size: the active set never exceeds ``max_landmarks`` on the returned path.
    target_mse : float, optional
        Stop at the largest λ where the mean squared error on the validation data ``X_val``,
        ``y_val`` falls to ``target_mse`` (exact: the predictions are linear in λ between
        breakpoints, the MSE a quadratic).
    X_val : ndarray of shape (k, d), optional
    y_val : ndarray of shape (k,), optional
        Validation data for ``target_mse`` (required with it, refused without it).
    nu : float
        Ridge term ν of eqs. (22)–(23) of the kernel-path paper (0: plain kLASSO).

    Returns
    -------
    ExactPath
        ``parameter == "lam"``, points at λ_max, every breakpoint and the end, ``linear``;
        ``cond`` is LAPACK's 1-norm condition estimate of the reduced matrix
        :math:`\\tilde K_{\\mathcal A}^\\top\\tilde K_{\\mathcal A} + \\nu I` of each segment.
        When ``lam_min`` >= λ_max the path is the one point β = 0 at ``lam_min``.  When
        λ_max is below the rounding of its own computation (constant ``X``: β = 0 is optimal
        for every λ) it is set to 0: the same one point (at λ = 0 by default, where the
        ``klasso`` certificate cannot be evaluated; pass ``lam_min > 0``).
    """
    return _lambda_path(X, y, bandwidth, lam_min, max_events=max_events, max_landmarks=max_landmarks,
                        target_mse=target_mse, X_val=X_val, y_val=y_val, nu=nu)


class _Validation:
    """Predictions on validation data along a λ-path segment and where their MSE reaches a target."""

    def __init__(self, X, X_val, y_val, bandwidth, target):
        try:
            X_val, y_val = np.asarray(X_val, dtype=float), np.asarray(y_val, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"X_val and y_val must be numeric arrays ({exc})") from None
        X_val = X_val[:, None] if X_val.ndim == 1 else X_val
        if not (np.all(np.isfinite(X_val)) and np.all(np.isfinite(y_val))):
            raise InputError("X_val and y_val must be finite: clean or impute the validation data first")
        if X_val.ndim != 2 or y_val.ndim != 1 or X_val.shape != (y_val.size, X.shape[1]) or y_val.size == 0:
            raise InputError(f"X_val must be (k, {X.shape[1]}) and y_val (k,) with the same k >= 1; got "
                             f"{X_val.shape} and {y_val.shape}")
        self.K = gaussian(cross_sq_distances(X_val, X), bandwidth)
        self.y = np.asarray(y_val, dtype=float)
        self.target = target

    def mse(self, beta, beta0):
        e = self.y - self.K @ beta - beta0
        return float(e @ e) / e.size

    def first_reach(self, beta, beta0, act, rA, r0, d):
        """The smallest δ in [0, d] with MSE(λ - δ) <= target, or None: the residual on the
        validation set is e - δu, so the MSE is the quadratic :math:`A\\delta^2 + B\\delta + C`
        (shifted by the target) and δ its smaller root."""
        e = self.y - self.K[:, act] @ beta[act] - beta0
        u = self.K[:, act] @ rA + r0
        k = e.size
        A, B, C = float(u @ u) / k, -2.0 * float(e @ u) / k, float(e @ e) / k - self.target
        if C <= 0:
            return 0.0
        disc = B * B - 4.0 * A * C
        if not (A > 0 and B < 0 and disc >= 0):  # never reached along this direction
            return None
        q = 0.5 * (-B + math.sqrt(disc))  # the larger root is q / A, the smaller C / q (stable form)
        delta = C / q
        return delta if delta <= d else None


@managed
def _lambda_path(X, y, bandwidth, lam_min=None, *, max_events=None, max_landmarks=None, target_mse=None,
                 X_val=None, y_val=None, nu=0.0, factor="update"):
    """:func:`lambda_path` with the choice of the linear algebra: ``factor`` is ``"update"``
    (the up/down-dated Cholesky factor) or ``"lu"`` (the papers' bordered system refactored by
    LU at every breakpoint: the reference for the agreement test and the benchmark)."""
    t0 = time.perf_counter()
    if factor not in FACTORS:
        raise InputError(f"factor must be one of {FACTORS}; got {factor!r}")
    bw = check_positive("bandwidth", bandwidth)
    data = PathData(X, y, None, nu)
    n = data.n
    K = gaussian(data.D, bw)
    max_events = count_or_none("max_events", max_events)
    max_events = EVENTS_PER_POINT * n if max_events is None else max_events
    max_landmarks = count_or_none("max_landmarks", max_landmarks)
    val = None
    if target_mse is not None:
        target_mse = check_positive("target_mse", target_mse)
        if X_val is None or y_val is None:
            raise InputError("target_mse needs validation data: pass X_val and y_val")
        val = _Validation(data.X, X_val, y_val, bw, target_mse)
    elif X_val is not None or y_val is not None:
        raise InputError("X_val and y_val are used by target_mse only: pass target_mse (or drop them)")
    beta = np.zeros(n)
    beta0 = data.ybar
    g = K @ (data.y - beta0)
    lam = float(np.max(np.abs(g)))
    # the rounding of ybar, y - ybar and K (y - ybar) (|K_ij| <= 1): below it lambda_max cannot
    # be told from 0, which it is exactly when K's columns are all alike (constant X)
    if lam <= fp_margin(2 * n, np.abs(data.y).sum() + np.abs(data.y - beta0).sum() + n * abs(beta0)):
        lam = 0.0
    lam_min = 1e-3 * lam if lam_min is None else lam_min
    if not (is_finite(lam_min) and lam_min >= 0):
        raise InputError(f"lam_min must be >= 0 and finite; got {lam_min!r}")
    lam_min = float(lam_min)
    signs = np.zeros(n, dtype=np.int8)
    events = []
    engine = RateEngine(K, data.nu, factor)
    solves, max_cond = 0, 1.0
    # a point is [lambda, beta, beta0, signs, cond]: the signs and the condition number of the
    # system of the segment below it (towards smaller lambda; the last point: the one above)
    points = [[max(lam, lam_min), beta.copy(), beta0, signs.copy(), 1.0]]
    failed = False
    if lam <= lam_min:
        stop = f"lam_min >= lam_max = {lam:.6g}: beta = 0 on the whole range"
    elif max_events == 0:
        stop = "max_events = 0"
    elif max_landmarks == 0:
        stop = "max_landmarks = 0"
    elif val is not None and val.mse(beta, beta0) <= target_mse:
        stop = f"target_mse: validation MSE {val.mse(beta, beta0):.6g} at lam_max"
    else:
        stop = None
        j = int(np.argmax(np.abs(g)))
        signs[j] = 1 if g[j] > 0 else -1  # eqs. (12)-(13)
        events.append(Event(lam, j, "joined", int(signs[j])))
        engine.joined(j)
        points[-1][3:] = [signs.copy(), np.nan]
        just_joined, just_left = {j}, {}
    changes = {}  # events of each point at the current lambda (a point changes at most twice there)
    while stop is None:
        try:
            act, rA, r0, a, cond, used = engine.rate(signs)  # moving rate, eq. (18)
        except ExactPathError as exc:
            stop, failed = f"singular system at lam = {lam:.6g}: {exc}", True
            break
        solves += used
        max_cond = max(max_cond, cond)
        points[-1][4] = cond
        # g(lam - d) = g - d a; a_i = s_i + nu r_i on the active set
        # "a coefficient reaches 0": beta_i + d r_i = 0, d > 0 (moving towards zero)
        toward = (signs[act] * rA < 0) & ~np.isin(act, list(just_joined))
        d_leave = np.full(act.size, np.inf)
        d_leave[toward] = np.abs(beta[act][toward]) / np.abs(rA[toward])
        # "an inactive |g_j| reaches lambda", eq. (22): g_j - d a_j = +-(lam - d)
        # (a point that just left has |g_i| = lam on the side it left: it may join again on the
        # other side within this segment, not at once on its own)
        inact = np.flatnonzero(signs == 0)
        d_join = np.full((2, inact.size), np.inf)
        for row, sgn in enumerate((1.0, -1.0)):
            den = 1.0 - sgn * a[inact]
            ok = (den > 0) & ~np.isin(inact, [i for i, side in just_left.items() if side == sgn])
            d_join[row, ok] = np.maximum(lam - sgn * g[inact][ok], 0.0) / den[ok]
        d_l = d_leave.min(initial=np.inf)
        d_j = d_join.min(initial=np.inf)
        d = min(d_l, d_j)
        if lam - d <= lam_min:
            d, stop = lam - lam_min, "lam_min"
        if val is not None:
            delta = val.first_reach(beta, beta0, act, rA, r0, d)
            if delta is not None:
                d, stop = delta, f"target_mse: validation MSE {target_mse:.6g} reached"
        if stop is None and d_j < d_l and max_landmarks is not None and act.size >= max_landmarks:
            stop = f"max_landmarks = {max_landmarks}: the next point would join here"
        if stop is None and len(events) >= max_events:  # the segment ends where the next event would be
            stop = f"max_events = {max_events}"
        beta[act] += d * rA  # eq. (24)
        beta0 += d * r0  # eq. (25)
        lam = lam_min if stop == "lam_min" else lam - d  # eq. (23)
        if stop is not None:
            points.append([lam, beta.copy(), beta0, signs.copy(), cond])
            break
        just_joined, just_left = set(), {}
        changes = changes if d == 0 else {}
        leaving = d_l <= d_j  # a tie is taken as a leave
        if leaving:
            i = int(act[int(np.argmin(d_leave))])
        else:
            row, k = np.unravel_index(int(np.argmin(d_join)), d_join.shape)
            i = int(inact[k])
        changes[i] = changes.get(i, 0) + 1
        if changes[i] > 2:  # joining and leaving in turn at one lambda: the system cannot tell the signs
            stop = (f"singular system at lam = {lam:.6g}: point {i} would join or leave a third time at this "
                    f"lambda (KKT system condition number {cond:.2g}: the signs of near-zero coefficients are "
                    "likely rounding noise); use a larger lam_min or a ridge term nu > 0")
            failed = True
            points.append([lam, beta.copy(), beta0, signs.copy(), cond])
            break
        if leaving:
            events.append(Event(lam, i, "left", int(signs[i])))
            just_left = {i: float(signs[i])}
            beta[i] = 0.0
            signs[i] = 0
            engine.left(i)
        else:
            signs[i] = 1 if row == 0 else -1
            events.append(Event(lam, i, "joined", int(signs[i])))
            engine.joined(i)
            just_joined = {i}
        points.append([lam, beta.copy(), beta0, signs.copy(), np.nan])
        g = engine.g_after(g, d, a, data, beta, beta0, signs)
    return _result(data, K, bw, points, events, solves, max_cond, stop, t0, engine,
                   dict(bandwidth=bw, lam_min=lam_min, max_events=max_events, max_landmarks=max_landmarks,
                        target_mse=target_mse, nu=data.nu, factor=factor), failed)


def _result(data, K, bw, points, events, solves, max_cond, stop, t0, engine, settings, failed=False):
    """The ExactPath of a traced λ-path (``points`` in decreasing λ)."""
    points.reverse()  # ascending lambda
    lam_pts = np.array([p[0] for p in points])
    betas = np.array([p[1] for p in points])
    beta0s = np.array([p[2] for p in points])
    signs_pts = np.array([p[3] for p in points], dtype=np.int8)
    conds = np.array([p[4] for p in points])
    n = data.n
    if engine.factor == "update":
        settings.update(refactorizations=engine.active.refactors, lu_fallbacks=engine.lu_fallbacks)

    def solution(lam_q):
        if not lam_q >= lam_pts[0]:
            raise ValueError(f"lambda = {lam_q!r} is below the path's end {lam_pts[0]!r}")
        if lam_q > lam_pts[-1]:  # above lambda_max: beta = 0 (closed form)
            return data.point(lam_q, K, np.zeros(n), data.ybar, np.zeros(n, dtype=np.int8), lam_q)
        k = int(np.searchsorted(lam_pts, lam_q, side="right")) - 1
        if lam_q == lam_pts[k]:
            return data.point(lam_q, K, betas[k], beta0s[k], signs_pts[k], lam_q)
        theta = (lam_q - lam_pts[k]) / (lam_pts[k + 1] - lam_pts[k])  # exact linear interpolation
        return data.point(lam_q, K, (1 - theta) * betas[k] + theta * betas[k + 1],
                          (1 - theta) * beta0s[k] + theta * beta0s[k + 1], signs_pts[k + 1], lam_q)

    return ExactPath(
        algorithm="lambda-path (Wang, Qin, Huang)", parameter="lam", lam=None, bandwidth=bw,
        t=lam_pts, beta=betas, beta0=beta0s, signs=signs_pts, cond=conds, events=tuple(events), linear=True,
        linear_solves=solves, max_cond=max_cond, stop_reason=stop, wall_s=time.perf_counter() - t0,
        settings=settings, failed=failed, solution=solution, X=data.X, y=data.y)
