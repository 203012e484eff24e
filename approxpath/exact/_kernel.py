"""The exact kLASSO kernel (bandwidth) path of Wang, Yeung and Lochovsky (§3, Table 1)."""

from __future__ import annotations

import math
import time

import numpy as np

from approxpath.compute.parallelism import managed
from approxpath.compute.kernels import gaussian, kernel_rows
from approxpath.numerics import weight_resolution
from approxpath.validate import flag, is_real, positive_range

from ._common import (ACTIVE_REL, EVENTS_PER_POINT, Event, ExactPath, ExactPathError, InputError, check_positive,
                      count_or_none, PathData, g_slack)
from ._lambda import lambda_path
from ._linalg import column_copies, kkt_matrix, refuse_copies, kkt_solve
from ._screen import Screen, TaylorScreen

__all__ = ["kernel_path"]


class _KernelTracer:
    """State shared by both directions of one kernel path (counters, events, settings)."""

    def __init__(self, data, theta, eps, marginal, max_events, screen=True):
        self.data = data
        self.taylor = TaylorScreen(data) if screen and marginal is None else None  # both directions'
        self.theta = theta
        self.eps = eps
        self.marginal = marginal
        self.max_events = max_events
        self.failed = False  # a direction stopped on an ExactPathError (ExactPath.failed)
        self.events = []
        self.solves = 0
        self.max_cond = 1.0
        self.screens = [] if self.taylor is None else [self.taylor]  # the screens used (their counters)
        # copies of D's rows: of K_t's columns at every t
        self.copy_of = column_copies(data.D) if data.nu == 0 else None

    def solve(self, t, signs, beta, beta0):
        """Eq. (21): the solution at ``t`` for the active set and signs ``signs``, as the update
        of (beta, beta0) by :math:`A^{-1}b^a` (eqs. (20), (22)-(23))."""
        d = self.data
        act = np.flatnonzero(signs)
        if self.copy_of is not None:
            refuse_copies(self.copy_of, act)
        KA = gaussian(d.D[:, act], t)
        M = kkt_matrix(KA, d.nu)
        rhs = np.concatenate(([d.ybar], KA.T @ d.y - d.lam * signs[act]))
        prev = np.concatenate(([beta0], beta[act]))
        delta, cond = kkt_solve(M, rhs - M @ prev)
        self.solves += 1
        self.max_cond = max(self.max_cond, cond)
        new = np.zeros(d.n)
        new[act] = prev[1:] + delta[1:]
        return new, float(prev[0] + delta[0]), cond, KA

    def violations(self, t, beta, beta0, signs, KA, screen=None):
        """Violations of (12)-(13) at ``t``: (indices leaving, [(index, sign) joining], move),
        ``move`` telling the screen to take this solution as its reference if it is accepted.

        ``screen`` (the marginal-point speed-up) restricts the check of (13) to the inactive
        rows that its bound cannot clear; without it every inactive row is checked."""
        d = self.data
        act = np.flatnonzero(signs)
        r = d.residual(KA, beta[act], beta0)
        idx, move = (np.flatnonzero(signs == 0), False) if screen is None else screen.rows(t, r)
        g_idx = kernel_rows(d.D, t, r, idx)  # the rows idx of K_t r, without forming them
        bad = np.abs(g_idx) > d.lam + g_slack(d.lam, r)
        leave = [int(i) for i in act[signs[act] * beta[act] < 0]]
        join = [(int(i), 1 if gi > 0 else -1) for i, gi in zip(idx[bad], g_idx[bad])]
        return leave, join, move

    def event(self, t_fail, beta, beta0, signs, leave, join, cond):
        """Update the active set with the violators found at ``t_fail`` (within a factor
        (1 - eps)^2 of the last valid point) and return the first solution with the new set,
        at ``t_fail`` (every inactive row checked, by the Taylor screen where it is on); several
        events inside the refinement window are resolved together, in order: a point that joins
        and must leave again (or leaves and must join again) within the window records both
        events.  A point that would change a third time
        means the signs of near-zero coefficients are rounding noise (the system's condition
        number ``cond`` times u exceeds the change across the window): ``ExactPathError``."""
        signs, beta = signs.copy(), beta.copy()
        changes, most = {}, np.count_nonzero(signs)
        for _ in range(2 * self.data.n + 2):  # every point changes at most twice
            third = [i for i in set(leave) | {j for j, _ in join} if changes.get(i, 0) >= 2]
            most = max(most, np.count_nonzero(signs))
            if third and most >= self.data.n - 1:  # (a swap at a saturated active set: rounding is not the cause)
                raise ExactPathError(
                    f"point {min(third)} would join or leave a third time at t = {t_fail:.8g}, where the active set "
                    f"reaches {most} of the {self.data.n} points: this algorithm cannot resolve an event with all "
                    "points but at most one active; use the approximate path (approximate_path, or approxpath path "
                    "klasso)")
            if third:
                raise ExactPathError(
                    f"point {min(third)} would join or leave a third time within the refinement window at "
                    f"t = {t_fail:.8g} (KKT system condition number {cond:.2g}: the signs of near-zero coefficients "
                    "are likely rounding noise); use a larger eps or a ridge term nu > 0")
            for i in leave:
                self.events.append(Event(t_fail, i, "left", int(signs[i])))
                signs[i] = 0
                beta[i] = 0.0
                changes[i] = changes.get(i, 0) + 1
            for j, sg in join:
                self.events.append(Event(t_fail, j, "joined", sg))
                signs[j] = sg
                changes[j] = changes.get(j, 0) + 1
            b, b0, cond, KA = self.solve(t_fail, signs, beta, beta0)
            if self.taylor is not None:  # its bound is rigorous: only the rows it cannot clear are checked
                self.taylor.reset(t_fail, b, b0, signs)
            leave, join, _ = self.violations(t_fail, b, b0, signs, KA, self.taylor)  # every row after an event
            if not (leave or join):
                return b, b0, signs, cond
        raise ExactPathError(f"the active set could not be resolved at t = {t_fail:.8g}")  # pragma: no cover

    def trace(self, t, beta, beta0, signs, t_end):
        """Table 1 of Wang et al. from ``t`` to ``t_end`` (either direction): returns the
        accepted points and the reason it stopped."""
        up = t_end > t  # t increasing = sigma decreasing (the paper's table)
        points = []
        screen = None
        if self.marginal is not None:
            screen = Screen(self.data, self.marginal, self.theta, up)
            self.screens.append(screen)
        else:
            screen = self.taylor
        if screen is not None:
            screen.reset(t, beta, beta0, signs)
        try:
            while t != t_end:
                r, fail = self.theta, None
                while r < 1.0 - self.eps:
                    t_new = min(t / r, t_end) if up else max(t * r, t_end)  # sigma <- sigma r
                    b, b0, cond, KA = self.solve(t_new, signs, beta, beta0)
                    leave, join, move = self.violations(t_new, b, b0, signs, KA, screen)
                    if not (leave or join):  # a valid solution: accept, keep the rate
                        t, beta, beta0 = t_new, b, b0
                        points.append((t, beta, beta0, signs.copy(), cond))
                        if move:
                            screen.reset(t, beta, beta0, signs)
                        if t == t_end:
                            break
                    else:
                        fail = (t_new, leave, join, cond)
                        r = math.sqrt(r)
                if t == t_end:
                    break
                t, (beta, beta0, signs, cond) = fail[0], self.event(fail[0], beta, beta0, signs, *fail[1:])
                points.append((t, beta, beta0, signs.copy(), cond))
                if screen is not None:
                    screen.reset(t, beta, beta0, signs)
                if len(self.events) >= self.max_events:
                    return points, f"max_events = {self.max_events} at t = {t:.6g}"
        except ExactPathError as exc:
            self.failed = True
            return points, f"stopped at t = {t:.6g}: {exc}"
        return points, "end of range"

    def polish(self, t, beta, beta0):
        """Active set and signs of a solver's solution at ``t``, re-solved exactly by eq. (21)."""
        beta = np.asarray(beta, dtype=float)
        top = float(np.abs(beta).max(initial=0.0))
        signs = np.where(np.abs(beta) > ACTIVE_REL * top, np.sign(beta), 0).astype(np.int8)
        beta = np.where(signs != 0, beta, 0.0)
        b, b0, cond, KA = self.solve(t, signs, beta, float(beta0))
        leave, join, _ = self.violations(t, b, b0, signs, KA)
        if leave or join:
            raise ExactPathError(
                f"the start solution at t = {t:.6g} does not fix a valid active set (leaving {leave}, joining "
                f"{[j for j, _ in join]}); start from the lambda-path instead")
        return b, b0, signs, cond


def _screen_stats(screens):
    """Settings entries of the marginal-point screens: the share of inactive rows checked
    explicitly over all trial steps, and how often the reference g was computed in full."""
    if not screens:
        return {}
    inactive = sum(s.inactive for s in screens)
    return dict(marginal_rows_checked=sum(s.checked for s in screens) / inactive if inactive else 0.0,
                marginal_resets=sum(s.resets for s in screens))


@managed
def kernel_path(X, y, lam, interval, *, start=None, start_solution="lambda-path", theta=0.95, eps=1e-6,
                nu=0.0, marginal=None, screen=True, max_events=None):
    """The exact kLASSO kernel path of Wang, Yeung and Lochovsky (§3, Table 1), for fixed λ.

    From an exact solution at ``start``, the bandwidth is moved by the decay rate θ
    (σ ← θσ, i.e. t ← t/θ, towards ``interval[1]``; σ ← σ/θ towards ``interval[0]``: both
    directions).  Each trial solution comes from eq. (21) with the current active set; if it
    violates (12)–(13) the rate is refined r ← √r until r ≥ 1 − ε, the active set is updated
    with the violators (a coefficient that crossed 0 leaves, an inactive point whose |g_i|
    passed λ joins) and the path continues from the first solution with the new set.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        The fixed λ.
    interval : (float, float)
        Range ``(lo, hi)`` of the bandwidth t of :math:`\\exp(-t\\lVert x - x'\\rVert^2)`
        (Wang's σ from 1/lo down to 1/hi).
    start : float, optional
        Where the path starts (default ``lo``: the largest σ, where Wang's table starts).
    start_solution : {"lambda-path", "cvxpy"} or (beta, beta0)
        The exact solution at ``start``: the end point of :func:`lambda_path` at λ (default),
        the ``klasso`` problem's exact solve, or a given pair; the last two are polished by
        eq. (21) with the active set they define.
    theta : float
        Decay rate in (0, 1) (the paper: 0.95).
    eps : float
        Breakpoint tolerance: an event is located within a factor :math:`(1-\\epsilon)^2`
        (the paper: 1e-6).
    nu : float
        Ridge term ν of eqs. (22)–(23).
    marginal : float, optional
        The marginal-point speed-up, ξ in (0, 1): between events the inactive points with
        :math:`|g_i| \\ge \\lambda(1 - \\xi)` at the last event are checked against (13), and
        any other point as soon as a bound on the change of its :math:`g_i` no longer excludes
        a crossing (see :mod:`approxpath.exact._screen`); every active sign is checked, it costs
        nothing, and the full check runs at every event.  The events and solutions are those of
        the full check for every ξ; the saving is the kernel rows not evaluated (the share
        checked is ``settings["marginal_rows_checked"]``).
    screen : bool
        Between events, clear the inactive points that a bound on :math:`g_i` (Taylor's theorem
        in t, from terms stored at a centre that moves along; see :mod:`approxpath.exact._screen`)
        shows cannot violate (13), and check only the others with their kernel rows (the
        default, for n up to 3,344: its terms take 24 n² bytes).  False checks every inactive
        point at every trial (the reference the screen is tested against: the events and
        solutions are the same).  A given ``marginal`` uses the marginal-point screen instead.
    max_events : int, optional
        Stop after this many events (default 50 n).

    Returns
    -------
    ExactPath
        ``parameter == "bandwidth"``; every accepted step is a returned solution (each is the
        exact solution for its active set), ``linear`` is False.
    """
    t_start = time.perf_counter()
    lam = check_positive("lam", lam)
    lo, hi = positive_range("interval", interval, "interval must be a pair (lo, hi) of bandwidths t")
    t0 = lo if start is None else check_positive("start", start)
    if not lo <= t0 <= hi:
        raise InputError(f"start = {t0!r} must lie in the interval [{lo!r}, {hi!r}]")
    if not (is_real(theta) and 0 < theta < 1):
        raise InputError(f"theta must lie in (0, 1); got {theta!r}")
    if not (is_real(eps) and 0 < eps < 1 - theta):
        raise InputError(f"eps must lie in (0, 1 - theta); got {eps!r}")
    screen = flag("screen", screen)
    if marginal is not None and not (is_real(marginal) and 0 < marginal < 1):
        raise InputError(f"marginal (xi) must lie in (0, 1); got {marginal!r}")
    data = PathData(X, y, lam, nu)
    floor = weight_resolution(data.y - data.ybar)
    if lam <= floor:  # the same floor as the certified klasso path's (KernelProblem.check_weights)
        raise InputError(f"lam = {lam:g} is below {floor:.3g}, the rounding error of the loss's gradient: in double "
                         f"precision the penalty cannot be told from 0 there; use lam > {floor:.3g}")
    max_events = count_or_none("max_events", max_events)
    max_events = EVENTS_PER_POINT * data.n if max_events is None else max_events
    tracer = _KernelTracer(data, float(theta), float(eps), marginal, max_events,
                           screen=screen and TaylorScreen.fits(data.n))

    if isinstance(start_solution, str) and start_solution == "lambda-path":
        lp = lambda_path(X, y, t0, lam, nu=nu)
        if lp.t[0] > lam:
            raise ExactPathError(f"the lambda-path at t = {t0:.6g} stopped above lam ({lp.stop_reason}); "
                                 "use start_solution='cvxpy'")
        p = lp(lam)
        beta, beta0, signs, cond0 = p.beta, p.beta0, p.signs.copy(), float(lp.cond[0])
        tracer.solves += lp.linear_solves
        tracer.max_cond = max(tracer.max_cond, lp.max_cond)
    elif isinstance(start_solution, str) and start_solution == "cvxpy":
        from approxpath.registry import get_problem

        primal, _ = get_problem("klasso")(X, y, lam=lam, parameter="bandwidth").solve(t0)
        beta, beta0, signs, cond0 = tracer.polish(t0, primal.beta, primal.beta0)
    elif isinstance(start_solution, str):
        raise InputError(f"start_solution must be 'lambda-path', 'cvxpy' or a pair (beta, beta0); got {start_solution!r}")
    else:
        beta, beta0, signs, cond0 = tracer.polish(t0, *start_solution)

    up, why_up = tracer.trace(t0, beta, beta0, signs, hi) if t0 < hi else ([], "end of range")
    down, why_down = tracer.trace(t0, beta, beta0, signs, lo) if t0 > lo else ([], "end of range")
    if tracer.taylor is not None:  # the returned path keeps the tracer (for solution()), not the terms
        tracer.taylor.release()
    points = down[::-1] + [(t0, beta, beta0, signs, cond0)] + up
    ts = np.array([p[0] for p in points])
    betas = np.array([p[1] for p in points])
    beta0s = np.array([p[2] for p in points])
    signs_pts = np.array([p[3] for p in points], dtype=np.int8)
    stop = why_up if why_up == why_down else f"increasing t: {why_up}; decreasing t: {why_down}"

    def solution(t_q):
        if not ts[0] <= t_q <= ts[-1]:
            raise ValueError(f"t = {t_q!r} is outside the path's range [{ts[0]!r}, {ts[-1]!r}]")
        k = int(np.searchsorted(ts, t_q))
        if ts[k] == t_q:
            return data.point(t_q, gaussian(data.D, t_q), betas[k], beta0s[k], signs_pts[k], lam)
        # between two returned solutions: eq. (21) with the active set of either end; the
        # valid one is the exact solution (both can fail only inside a refinement window)
        best = None
        for j in (k, k - 1):
            b, b0, _, _ = tracer.solve(t_q, signs_pts[j], betas[j], beta0s[j])
            p = data.point(t_q, gaussian(data.D, t_q), b, b0, signs_pts[j], lam)
            if p.valid:
                return p
            best = p if best is None or p.kkt_residual < best.kkt_residual else best
        return best

    return ExactPath(
        algorithm="kernel path (Wang, Yeung, Lochovsky)", parameter="bandwidth", lam=lam, bandwidth=None,
        t=ts, beta=betas, beta0=beta0s, signs=signs_pts, cond=np.array([p[4] for p in points]),
        events=tuple(tracer.events), linear=False, linear_solves=tracer.solves, max_cond=tracer.max_cond,
        stop_reason=stop, wall_s=time.perf_counter() - t_start, failed=tracer.failed,
        settings=dict(lam=lam, interval=[lo, hi], start=t0, theta=float(theta), eps=float(eps), nu=data.nu,
                      marginal=marginal, screen=tracer.taylor is not None, max_events=max_events,
                      **_screen_stats(tracer.screens),
                      start_solution=start_solution if isinstance(start_solution, str) else "given"),
        solution=solution, X=data.X, y=data.y)
