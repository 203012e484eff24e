"""Following the L1KR path: predictor-corrector continuation along the null direction of (6),
events located by a safeguarded interpolation search, Newton correction (10) at events.

One step from a point z on the curve of the current system (see ``_kkt``), variables scaled to
comparable size (α by :math:`\\max|\\alpha|`, β by :math:`D = \\lVert\\beta\\rVert_1`, λ by λ):

1. predictor :math:`z + hv + \\tfrac12 h^2 c`: v the unit tangent at z, c the change of the
   tangent over the last step divided by its length (the curvature; 0 after an event);
2. tangent and factorization at the predicted point: the null vector of the Jacobian is the last
   column of Q in the Householder QR of :math:`J^\\top`, oriented along v;
3. corrector: minimum-norm Newton steps :math:`-J^+F` with that factorization until the update
   is below a relative tolerance or stagnates at the rounding floor of the system; the new
   point's tangent is the one of step 2 (the solves of steps 2 and 3 and of the events:
   :mod:`._corrector`);
4. step control: rejected (h halved) when the corrector diverges or contracts slowly or the
   tangent turns too much; otherwise h grows or shrinks by the asymptotic estimates of
   Allgower and Georg (first corrector distance, contraction rate, tangent angle);
5. events: a monitored function changing sign inside the step (E1: an inactive
   :math:`q_j` above the active :math:`\\eta`; E2: an active :math:`\\beta_k` below 0; the end
   :math:`D = d_{max}`; :math:`\\eta < 0`) is located by the Illinois variant of regula falsi on
   the step length (linear interpolation safeguarded against one-sided convergence: the paper's
   interpolation and bisection, §3.1), then the square system with the event's extra equation is
   solved by Newton's method (10).

After E1 the tangent is oriented so that the new :math:`\\beta_j` grows (β ≥ 0, Theorem 1(b));
after E2 both orientations are probed with a short step and the one that keeps the left
feature's :math:`q_k` below :math:`\\eta` (Theorem 1(a)) is taken.
"""

from __future__ import annotations

import math

import numpy as np

from approxpath.compute.parallelism import blas_threads
from approxpath.errors import SolverError

from ._corrector import Corrector, PathStop
from ._kkt import inner_solve

__all__ = ["follow"]

# Targets of the step-size control (Allgower & Georg, sec. 6.1): first corrector distance,
# contraction rate and tangent angle (radians) per step.
_TARGET_DIST, _TARGET_CONTRACTION, _TARGET_ANGLE = 0.02, 0.1, 0.1
# Steps are rejected when the tangent turns by more than this (radians).
_MAX_ANGLE = 0.5
# After this many rejections of one step the tangent is recomputed at the current point.
_REFRESH_AFTER = 2
# Limits of the step (scaled arc length): the largest keeps every variable's relative change
# per step moderate so that two events rarely fall into one step.
_H_MIN, _H_MAX, _H0 = 1e-12, 0.25, 1e-3
# A stalled path stalls because the budget stops binding where the K-norm of the least-squares fit
# at its beta is within this fraction of C (lambda -> 0 there; measured: 1.000005 C at kappa = 100).
# lambda itself cannot tell: regular paths at C = 2 ||Hy||^2 pass lambda = 3e-8
_UNBOUND_SHARE = 1e-3
# Eigenvalues of H K H below this fraction of the largest are the null space of the fit's K-norm
_FIT_RCOND = 1e-13
# Step of the probes after E2 (scaled arc length).
_H_PROBE = 1e-4
# Event location: |monitor| below this ends the search (relative units), or 60 iterations.
_LOCATE_TOL = 1e-10
# The start: beta_i = b0 with b0 * max|dK/dbeta_i at 0| = this (the kernel differs from the
# all-ones matrix by ~0.1 %: close to D = 0 yet well conditioned) ...
_START_SHIFT = 1e-3
# ... divided by 10 up to this many times until the first feature still leads there.
_START_SHRINKS = 8


class _Follower(Corrector):
    """The steps, events and start of the path, on the :class:`Corrector`'s solves (:func:`follow`)."""

    def __init__(self, system, d_max, max_events, max_steps, g_tol):
        super().__init__(system)
        self.d_max, self.max_events, self.max_steps, self.g_tol = d_max, max_events, max_steps, g_tol
        self.records = []
        self.events = []
        self.stop_reason = ""
        self.failed = False  # stopped where the path could not go on (FeaturePath.failed)
        self.n_rejected = self.n_steps = 0

    # ------------------------------------------------------------------ helpers
    def _record(self, p, var):
        mask = np.zeros(p.beta.size, dtype=bool)
        mask[list(var)] = True
        self.records.append((p.alpha.copy(), p.beta.copy(), p.lam, self.sys.intercept(p), mask,
                             self.sys.jacobian_calls))

    def _monitors(self, p, eq, var, skip, ref):
        """(value, feature, kind): the largest monitored function (negative: no event).

        ``ref`` = (D, η) at the start of the step: the units of the β and η monitors."""
        scale_b, eta_ref = ref
        eta = p.eta(eq)
        best = (-math.inf, -1, "")
        out = [j for j in range(p.beta.size) if j not in eq and j not in skip]
        if out:
            # in units of the step's first eta (nonzero there, else the path had ended): the
            # current eta vanishes at the path's end
            m = (p.q[out] - eta) / abs(eta_ref)
            k = int(np.argmax(m))
            best = max(best, (float(m[k]), out[k], "joined"))
        inside = [k for k in var if k not in skip]
        if inside:
            m = -p.beta[inside] / scale_b
            k = int(np.argmax(m))
            best = max(best, (float(m[k]), inside[k], "left"))
        if self.d_max is not None:
            best = max(best, ((p.beta.sum() - self.d_max) / scale_b, -1, "end"))
        # eta = 0: a stationary point of the problem without the l1 budget, the path's end
        best = max(best, (-eta / abs(eta_ref), -1, "stationary"))
        return best

    # ------------------------------------------------------------------ the path
    def start(self):
        sys, kern = self.sys, self.sys.kern
        d = kern.d
        ev0 = kern.at(np.zeros(d))
        i = int(np.argmax(ev0.forms(sys.yc)))  # Lemma 1: the largest |alpha' dK_j alpha| at beta = 0
        b0 = _START_SHIFT / max(float(np.max(np.abs(ev0.first(i)))), 1e-300)
        for _ in range(_START_SHRINKS):
            beta = np.zeros(d)
            beta[i] = b0
            alpha, _, lam = inner_solve(kern.at(beta).K, sys.y, sys.C)
            p = sys.point(alpha, beta, lam)
            if np.argmax(p.q) == i:  # feature i still leads: no event between 0 and b0
                break
            b0 *= 0.1  # a decade closer to beta = 0, where feature i leads (_START_SHRINKS decades at most)
        else:
            raise PathStop(f"feature {i} leads at beta = 0 but not at beta_{i} = {b0:.3g}: the start is degenerate (at "
                        f"C = {sys.C:.3g} the constraint alpha'K alpha <= C binds with a multiplier of only {lam:.3g}; "
                        "a smaller C, e.g. kappa = 2, may start)")
        p = self.newton(p, [i], [])  # polish the eigen-solution at fixed beta (square: F1 and F3)
        self.events.append(("start", i, 0))
        self._record(p, [i])
        return p, [i]

    def run(self):
        try:
            p, act = self.start()
        except PathStop as stop:
            raise SolverError(f"the feature path cannot start: {stop}") from None
        eq, var = list(act), list(act)
        last = act[0]
        tg = self.tangent(p, eq, var, orient=lambda v: v[self.n + var.index(last)])
        h, skip = _H0, {last}
        try:
            while True:
                if self.n_steps >= self.max_steps:
                    self.stop_reason = f"max_steps = {self.max_steps} reached"
                    break
                self.n_steps += 1
                h, (p, tg, event) = self._step(p, eq, var, tg, h, skip)
                skip = set()
                if event is None or event[0] in ("end", "stationary"):
                    self._record(p, var)
                    if event is not None:
                        self.stop_reason = (f"d_max = {self.d_max:g} reached" if event[0] == "end" else
                                            "stationary point of the problem without the l1 budget (eta = 0)")
                        break
                else:
                    kind, j = event
                    p, eq, var, tg = self._event(p, eq, var, kind, j, tg)
                    skip = {j}
                    h = max(min(h, _H0), _H_MIN * 10)
                    if self.max_events is not None and len(self.events) - 1 >= self.max_events:
                        self.stop_reason = f"max_events = {self.max_events} reached"
                        break
                g = p.lam * p.eta(eq)
                if g <= self.g_tol * float(self.sys.yc @ self.sys.yc) * self.sys.kern.gradient_unit:
                    self.stop_reason = f"stationary: lambda * max_j q_j = {g:.3g} (g_tol reached)"
                    break
        except PathStop as stop:
            self.stop_reason, self.failed = str(stop), True
        return self

    def _budget_unbound(self, p):
        """Whether the least-squares fit at ``p.beta`` has a K-norm of at least C (1 - _UNBOUND_SHARE):
        alpha'K alpha <= C then barely binds and lambda -> 0 (one symmetric eigendecomposition)."""
        K = p.ev.K
        M = K - K.mean(axis=0)
        M = M - M.mean(axis=1)[:, None]  # H K H
        w, Q = np.linalg.eigh(0.5 * (M + M.T))
        keep = w > _FIT_RCOND * w[-1]
        c = Q[:, keep].T @ self.sys.yc
        return float(np.sum(c * c / w[keep])) >= (1.0 - _UNBOUND_SHARE) * self.sys.C

    def _step(self, p, eq, var, tg, h, skip):
        """One accepted step from ``p``: (new h, (point, tangent there, event or None))."""
        z0 = self.sys.pack(p, var)
        base = p.beta
        ref = (max(float(p.beta.sum()), 1e-300), p.eta(eq))
        fails = 0
        while True:
            if fails:
                # retry shorter, without the curvature term; the second time with the exact
                # tangent at p (the one carried over was computed at the last predicted point,
                # off where the path turns sharply)
                self.n_rejected += 1
                h *= 0.5
                tg = dict(tg, curv=None)
                if fails == _REFRESH_AFTER:
                    tg = self.tangent(p, eq, var, prev=tg["v"])
            if h < _H_MIN and self._budget_unbound(p):
                raise PathStop(f"step size underflow at D = {p.beta.sum():.6g}, where lambda = {p.lam:.2g}: the budget "
                            "alpha'K alpha <= C barely binds there (the least-squares fit's K-norm reaches C); a "
                            "smaller C keeps it binding")
            if h < _H_MIN:
                raise PathStop(f"step size underflow at D = {p.beta.sum():.6g} (the path is singular there)")
            fails += 1
            trial = self._try(z0, base, eq, var, tg, h)
            if trial is None:
                continue
            q, first, worst, tg_new = trial
            mon = self._monitors(q, eq, var, skip, ref)
            taken = h
            if mon[0] > 0:
                located = self._locate(z0, base, eq, var, tg, h, skip, ref, mon)
                if located is None:  # a shorter step brackets the event more closely
                    continue
                q, mon, taken, tg_new = located
            cos = float(np.clip(abs(tg_new["v"] @ tg["v"]), -1.0, 1.0))
            angle = math.acos(cos)
            if angle > _MAX_ANGLE and mon[0] <= 0:
                continue
            # curvature of the path in the variables, for the next predictor
            tg_new["curv"] = (tg_new["s"] * tg_new["v"] - tg["s"] * tg["v"]) / taken
            f = max(math.sqrt(first / _TARGET_DIST) if first > 0 else 0.0,
                    worst / _TARGET_CONTRACTION, angle / _TARGET_ANGLE, 0.5)
            h_next = min(h / min(f, 2.0), _H_MAX)
            event = (mon[2], mon[1]) if mon[0] > -_LOCATE_TOL and mon[2] else None
            return h_next, (q, tg_new, event)

    def _try(self, z0, base, eq, var, tg, h):
        """Predictor (tangent plus the curvature of the last step), then the corrector with the
        Jacobian at the predicted point, whose null vector is the next tangent:
        (point, first distance, worst contraction, tangent) or None."""
        z = z0 + h * tg["s"] * tg["v"]
        if tg.get("curv") is not None:
            z = z + 0.5 * h * h * tg["curv"]
        pred = self.sys.unpack(z, base, var)
        if not (pred.lam > 0 and np.all(np.isfinite(pred.q)) and np.all(np.isfinite(pred.Ka))):
            return None
        tg_new = self.tangent(pred, eq, var, prev=tg["v"])
        out = self.correct(z, base, eq, var, tg_new)
        return None if out is None else out + (tg_new,)

    def _locate(self, z0, base, eq, var, tg, h, skip, ref, mon):
        """The step length where the largest monitor crosses 0 (Illinois regula falsi):
        (point, monitor, step length, tangent), or None when a trial step fails."""
        a, fa = 0.0, self._monitors(self.sys.unpack(z0, base, var), eq, var, skip, ref)[0]
        b, fb = h, mon[0]
        best = best_lo = None
        side = 0
        for _ in range(60):  # regula falsi with bisection: 60 halvings reach 1e-18 of h, below the stop below
            c = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
            if not (a < c < b):
                c = 0.5 * (a + b)
            trial = self._try(z0, base, eq, var, tg, c)
            if trial is None:
                c = 0.5 * (a + b)
                trial = self._try(z0, base, eq, var, tg, c)
                if trial is None:
                    return None
            q = trial[0]
            m = self._monitors(q, eq, var, skip, ref)
            if m[0] > 0:
                b, fb = c, m[0]
                best = (q, m, c, trial[3])
                if side == 1:
                    fa *= 0.5
                side = 1
            else:
                a, fa = c, m[0]
                best_lo = (q, m, c, trial[3])
                if side == -1:
                    fb *= 0.5
                side = -1
                if abs(m[0]) <= _LOCATE_TOL:
                    return best_lo
            if abs(fb) <= _LOCATE_TOL:
                return best
            if b - a <= 1e-15 * h:  # the bracket at a few units of roundoff of the step: nothing left to locate
                break
        return best if best is not None else best_lo

    def _event(self, p, eq, var, kind, j, tg):
        """Newton correction (10) at an event, the new active set and the new tangent."""
        if kind == "joined":
            p = self.newton(p, eq + [j], var)
            eq = var = eq + [j]
            self._record_event(p, var, kind, j)
            tg = self.tangent(p, eq, var, orient=lambda v: v[self.n + var.index(j)])
            return p, list(eq), list(var), tg
        # left: beta_k = 0 exactly, its q stays in the chain while Newton finds the crossing
        beta = p.beta.copy()
        beta[j] = 0.0
        p = self.sys.point(p.alpha, beta, p.lam)
        rest = [k for k in var if k != j]
        if not rest:
            raise PathStop("the last active feature left the path (D -> 0)")
        p = self.newton(p, eq, rest)
        eq = var = rest
        self._record_event(p, var, kind, j)
        return p, list(eq), list(var), self._probe(p, eq, var, j)

    def _probe(self, p, eq, var, k):
        """After E2: the orientation whose short step keeps :math:`q_k < \\eta` (Theorem 1(a))."""
        tg = self.tangent(p, eq, var)
        z0 = self.sys.pack(p, var)
        results = []
        for sign in (1.0, -1.0):
            t = dict(tg, v=sign * tg["v"])
            trial = self._try(z0, p.beta, eq, var, t, _H_PROBE)
            if trial is None:
                results.append((math.inf, sign))
                continue
            q = trial[0]
            results.append(((q.q[k] - q.eta(eq)) / abs(q.eta(eq)), sign))
        results.sort()
        if not results[0][0] < 0:
            raise PathStop(f"no direction keeps feature {k} out after it left (D = {p.beta.sum():.6g})")
        tg["v"] = results[0][1] * tg["v"]
        return tg

    def _record_event(self, p, var, kind, j):
        self._record(p, var)
        self.events.append((kind, j, len(self.records) - 1))


def follow(system, *, d_max=None, max_events=None, max_steps=2000, g_tol=1e-8):
    """Run the L1KR path; returns the follower (records, events, stop reason).

    BLAS runs on one thread: the factorizations are small (n + p + 1) and many; multithreaded
    Householder QR was measured 30x slower than one thread at n = 200 on the shared 2-core
    machine (107 vs 3 ms), and not faster on an idle one.

    ``system`` is the KKT system (:class:`~approxpath.exact.feature_path._kkt.System`: kernel, ``y``,
    ``C``).  The path stops where :math:`D = \\lVert\\beta\\rVert_1` reaches ``d_max`` (the last point is
    there), after ``max_events`` events after the start or ``max_steps`` continuation steps, where
    :math:`\\lambda\\eta \\le` ``g_tol`` :math:`\\lVert y - \\bar y\\rVert^2`, or where :math:`\\eta` reaches 0.
    The follower has ``records`` (per point ``(alpha, beta, lam, alpha0, active mask, Jacobian calls so
    far)``), ``events`` (``(kind, feature, record index)``, kind ``"start"``, ``"joined"`` or ``"left"``),
    ``stop_reason``, ``failed`` (stopped where the path could not go on; the records up to there kept),
    ``n_steps``, ``n_rejected``, ``n_corrector``.

    Raises
    ------
    SolverError
        The path cannot start (for one, ``C`` too large for the constraint to be active).
    """
    with blas_threads(1):
        return _Follower(system, d_max, max_events, max_steps, g_tol).run()
