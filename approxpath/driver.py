"""The generic ε-path driver.

A strategy decides where to make exact solves ("anchors"); the certifier then covers the
interval with pieces, each holding one fixed pair restored from the anchors, and splits a
piece (in the parameter's scale) until its gap bound is at most ε.  A problem without an
interval bound yields "sampled" pieces; nothing is ever called certified without a bound
valid for every parameter value of the piece.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .certificate import claim_failures, claimed_on, stored_bound
from .data import data_sha256
from .path import KERNEL, Path, PathPiece, _version, content_sha256
from .problem import InputError, _is_count, did_you_mean, from_scale, scale_mid, to_scale
from .solvers import SolverError

__all__ = ["approximate_path", "map_paths", "STRATEGIES", "EpsilonTooSmallError", "BudgetExceededError"]

#: Strategy names accepted by :func:`approximate_path`.
STRATEGIES = ("interpolate", "two-sided", "paper", "grid")
# Strategies that place exact solves one segment ahead: with workers, each segment between two
# solves is certified in a worker while the next solves are placed.
_ADAPTIVE = ("interpolate", "two-sided")

# Binary search of the paper strategy: stop when the bracket is this fraction of the whole
# interval (in the parameter's scale); 2**-14 of ln(2**20) is ~1e-3, i.e. 0.1 % in t.
_SEARCH_TOL = 2.0**-14
# Certifier: give up splitting a piece below this fraction of the interval (in scale) and
# label it "sampled" (or "uncovered"); 2**-30 is far below any piece a bound needs.
_MIN_PIECE = 2.0**-30
# ... and stop splitting a piece whose middle no anchor covers once it is below this fraction:
# uncovered regions are then located to ~0.4 % of the interval without splitting them to dust.
_RESOLUTION = 2.0**-8
# Interpolation weight: chosen on a grid of _THETA_GRID values, then refined once, at the
# middles of the pieces of the first Problem.weighing_depth bisections of a segment and linear
# in between (measured on ionosphere/heart/diabetes: ~10 % fewer exact solves than the linear
# position).
_THETA_GRID = 9
# Adaptive strategies: the first step and the smallest segment as fractions of the interval
# (in scale); the next step aims the interpolated gap in the middle of a segment at
# _STEP_TARGET * eps (it grows like the square of the length), by a factor within
# [_GROW_MIN, _GROW_MAX] of the last segment.
_FIRST_STEP = 1.0 / 8
_MIN_STEP = 2.0**-20
_STEP_TARGET = 0.5
_GROW_MIN, _GROW_MAX = 0.5, 3.0
# A fail-fast cover splits a piece at most down to 2**-_FAIL_DEPTH of its segment, and stops
# at once where the best pair's point gap in a failing piece's middle exceeds _HOPELESS * eps
# (bounds shrink to the point gap as pieces shrink: there a new exact solve is the way on).
_FAIL_DEPTH = 10
_HOPELESS = 0.9
# With workers, a segment whose middle's gap exceeds _SHORTEN * eps is halved by an exact solve
# before a worker gets it (a worker stuck on a long segment idles the other); above 1 because a
# worker places its own solves better, where the cover gets stuck (a1a, eps = 0.03, 2 workers:
# 0.9 -> 30 solves, 11.5 s; 1.5 -> 24 solves, 9.0-9.3 s; 3 -> 22 solves, 9.4 s).
_SHORTEN = 1.5
# Where every solver fails at a point, this many other points are tried before a region is
# left uncovered.
_SOLVE_RETRIES = 4
# An anchor whose own gap exceeds this fraction of eps cannot carry a path: eps is too small
# for what the exact solves certify.
_ANCHOR_SHARE = 0.5


class EpsilonTooSmallError(ValueError):
    """ε is below the duality gap the exact solves themselves achieve."""


class BudgetExceededError(RuntimeError):
    """A path needs more exact solves or pieces than allowed (``max_solves``, ``max_pieces``)."""


@dataclass(frozen=True)
class _Budget:
    """Limits of one path (see :func:`approximate_path`)."""

    max_solves: int
    max_pieces: int
    solve_time_limit: float | None


@dataclass
class _Run:
    problem: object
    eps: float
    relative: bool
    lo: float
    hi: float
    solver: object
    budget: _Budget
    progress: object
    anchors: dict = field(default_factory=dict)  # t -> (primal, dual)
    solve_s: float = 0.0
    certify_s: float = 0.0
    failed: dict = field(default_factory=dict)  # t -> why no solver produced a pair there
    checkpoint: object = None  # _Checkpoint or None
    resumed: dict = None  # strategy state read from a checkpoint
    resumed_pieces: list = None
    submit: object = None  # executor.submit: certify segments there (adaptive strategies)
    remote_solves: list = field(default_factory=list)  # exact solves made by those tasks
    n_pieces: int = 0  # pieces made so far (against budget.max_pieces)
    weighed: dict = field(default_factory=dict)  # (a, b, tau, around) -> _best_theta's answer

    def save(self, pieces, state):
        """Write the finished work to the checkpoint (if any)."""
        if self.checkpoint is not None:
            self.checkpoint.save(self, pieces, state)

    # -------------------------------------------------------------- scale helpers
    def s(self, t):
        return float(to_scale(t, self.problem.scale))

    def t(self, s):
        return float(from_scale(s, self.problem.scale))

    def mid(self, a, b):
        return scale_mid(a, b, self.problem.scale)

    def ahead(self, a, ds):
        """The point ``ds`` beyond ``a`` in the parameter's scale, at least the next float after
        ``a`` (a step below the resolution of the floats near ``a`` would not move) and at most
        the interval's end."""
        return min(max(self.t(self.s(a) + ds), math.nextafter(a, math.inf)), self.hi)

    # -------------------------------------------------------------- exact solves
    def exact(self, t):
        if t in self.anchors:
            return self.anchors[t]
        if len(self.anchors) >= self.budget.max_solves:
            raise BudgetExceededError(
                f"more than max_solves={self.budget.max_solves} exact solves needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"(eps = {self.eps:g}): raise max_solves, use a larger eps or relative=True, or a narrower interval")
        t0 = time.perf_counter()
        limit = self.budget.solve_time_limit  # passed only when set: solve() overrides may predate it
        pair = self.problem.solve(t, solver=self.solver, **({} if limit is None else {"time_limit": limit}))
        self.solve_s += time.perf_counter() - t0
        g, target = self._point(pair, t)
        if self.relative and not target > 0:
            raise InputError(
                f"relative=True measures eps against the optimal value, which is not proven positive at "
                f"t = {t:.6g} (it is 0 for targets y that are all 0 or, for klasso, constant): use an absolute eps")
        if not g <= _ANCHOR_SHARE * target:
            raise EpsilonTooSmallError(
                f"eps = {self.eps:g} is too small: the exact solve at t = {t:.6g} only certifies a gap "
                f"of {g:.3g}; use eps >= {g / _ANCHOR_SHARE / (target / self.eps if target > 0 else 1):.3g}"
            )
        self.anchors[t] = pair
        return pair

    def solvable(self, t):
        """:meth:`exact` at ``t``, or None where every solver fails (recorded in ``failed``)."""
        try:
            return self.exact(t)
        except SolverError as exc:
            self.failed[t] = str(exc)
            return None

    def _first_solvable(self, a, b):
        """The first point of a geometric march from a to b (in scale) where a solve works."""
        for k in range(1, _SOLVE_RETRIES + 1):
            t = self.t(self.s(a) + (self.s(b) - self.s(a)) * 2.0 ** (k - _SOLVE_RETRIES))
            if self.solvable(t) is not None:
                return t
        return None

    # -------------------------------------------------------------- gaps
    def target(self, pair, lo, hi):
        """The largest admissible gap bound on [lo, hi]: eps, or eps times a lower bound on
        the optimal value there (relative mode)."""
        if not self.relative:
            return self.eps
        # 1e-9 below what a verifier recomputes, in case its BLAS rounds the last bits differently
        return self.eps * max(0.0, self.problem.dual_lower_bound(pair[1], lo, hi)) * (1 - 1e-9)

    def _point(self, pair, tau):
        """``(gap bound, admissible bound)`` of ``pair`` restored at the point ``tau``."""
        t0 = time.perf_counter()
        restored = self.problem.restore(*pair, tau)
        out = self.problem.gap_bound(*restored, tau), self.target(restored, tau, tau)
        self.certify_s += time.perf_counter() - t0
        return out

    def point_bound(self, pair, tau):
        return self._point(pair, tau)[0]

    def point_ok(self, pair, tau, share=1.0):
        g, target = self._point(pair, tau)
        return g <= share * target

    # -------------------------------------------------------------- certifier
    def candidates(self, a, b, interpolate):
        """Candidate pairs for sub-pieces of [a, b] from the anchors at a and/or b.

        Returns a function of a sub-piece ``(l, h)`` giving ``[(pair, anchors), ...]``: the
        two anchors' pairs, the nearer first; with ``interpolate``, for a sub-piece inside
        (a, b), only the convex combination of the two pairs with the weight of smallest gap
        (restored afterwards).
        """
        ends = [x for x in (a, b) if x in self.anchors]
        profile = {0.0: 0.0, 1.0: 1.0}  # position in [a, b] (scale) -> best combination weight

        def weight(pos, width, tau, around):
            # optimize at the middles of the pieces of the first weighing_depth bisections
            # (estimated from the piece's ends where the problem can); deeper pieces
            # interpolate those weights
            if width >= 2.0 ** (1 - self.problem.weighing_depth) and pos not in profile:
                profile[pos] = self._best_theta(a, b, tau, pos, around)[0]
            if pos in profile:
                return profile[pos]
            xs = sorted(profile)
            return float(np.interp(pos, xs, [profile[x] for x in xs]))

        def cands(l, h):
            m = self.s(self.mid(l, h))
            out = sorted(((self.anchors[x], (x,)) for x in ends), key=lambda c: abs(self.s(c[1][0]) - m))
            if interpolate and len(ends) == 2:
                pos = min(max((m - self.s(a)) / (self.s(b) - self.s(a)), 0.0), 1.0)
                if 0.0 < pos < 1.0:
                    # the combination alone: it certifies ~92 % of the pieces the three
                    # candidates do (measured on ionosphere) at a third of the cost of failures
                    width = (self.s(h) - self.s(l)) / (self.s(b) - self.s(a))
                    theta = weight(pos, width, self.t(m), (l, h) if l < h else None)
                    return [(self.problem.interpolate(self.anchors[a], self.anchors[b], theta), (a, b))]
            return out

        return cands

    def _best_theta(self, a, b, tau, theta0, around=None):
        """``(weight, gap)``: the combination weight with the smallest point gap at ``tau``
        (or its estimate from the piece ``around``) and that gap (as computed, no rounding
        allowance): a grid, then a finer grid around the best (the gap is not convex in theta
        once the bias rule acts)."""
        key = (a, b, tau, around)  # a segment's middle: weighed for its first piece and its next step
        if key in self.weighed:
            return self.weighed[key]
        pair_a, pair_b = self.anchors[a], self.anchors[b]
        grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, _THETA_GRID), [theta0]]))
        gaps = self.problem.interpolation_gaps(pair_a, pair_b, grid, tau, around)
        k = int(np.argmin(gaps))
        step = 1.0 / (_THETA_GRID - 1)
        fine = np.clip(grid[k] + np.linspace(-step, step, _THETA_GRID), 0.0, 1.0)
        gaps2 = self.problem.interpolation_gaps(pair_a, pair_b, fine, tau, around)
        best = (float(fine[int(np.argmin(gaps2))]), float(gaps2.min())) if gaps2.min() < gaps[k] else \
            (float(grid[k]), float(gaps[k]))
        self.weighed[key] = best
        return best

    def cover(self, lo, hi, cands, fail_fast=False):
        """Pieces covering [lo, hi] left to right, each certified by one of ``cands(l, h)``
        (split in the parameter's scale until a bound holds).

        A sub-piece that no candidate can certify and whose middle no candidate covers even
        pointwise is hopeless.  With ``fail_fast`` the cover stops there and returns the pieces
        so far and where it stopped (the caller adds an exact solve); otherwise the sub-piece
        becomes a "sampled" or "uncovered" piece.  Returns ``(pieces, stopped_at_or_None)``.
        """
        pieces = []
        stack = [(lo, hi)]
        full = self.s(self.hi) - self.s(self.lo)
        min_width = _MIN_PIECE * full
        # fail-fast covers give up once a sub-piece is 2**-_FAIL_DEPTH of the segment: an exact
        # solve is cheaper than splitting further
        resolution = (self.s(hi) - self.s(lo)) * 2.0**-_FAIL_DEPTH if fail_fast else _RESOLUTION * full
        while stack:
            l, h = stack.pop()
            piece = self._try_piece(l, h, cands)
            if piece is not None:
                pieces.append(piece)
                self._count(1)
                continue
            m = self.mid(l, h)
            width = self.s(h) - self.s(l)
            splittable = width > min_width and l < m < h
            if fail_fast:
                # splitting helps only where the pair itself is good: bounds shrink to the
                # point gap as pieces shrink, so a middle already near eps means a new solve
                if splittable and width > resolution and self._any_point_ok(m, cands, _HOPELESS):
                    stack += [(m, h), (l, m)]
                    continue
                return pieces, l
            if splittable and (width > resolution or self._any_point_ok(m, cands)):
                stack += [(m, h), (l, m)]
                continue
            # no bound certifies [l, h] and no candidate is eps-good at its middle: give up
            # here (sampled or uncovered) rather than splitting an uncoverable region to dust.
            pieces.append(self._sampled_piece(l, h, cands))
            self._count(1)
        return pieces, None

    def _count(self, n):
        """Account for ``n`` more pieces; stop the run once there are more than max_pieces."""
        self.n_pieces += n
        if self.n_pieces > self.budget.max_pieces:
            raise BudgetExceededError(
                f"more than max_pieces={self.budget.max_pieces} pieces needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"(eps = {self.eps:g}): the gap moves faster than eps allows (an absolute eps on an objective "
                "that grows with t, e.g. the SVM over C, needs relative=True); use a larger eps, relative=True, "
                "a narrower interval, or raise max_pieces")

    def _any_point_ok(self, tau, cands, share=1.0):
        return any(self.point_ok(pair, tau, share) for pair, _ in cands(tau, tau))

    def _try_piece(self, l, h, cands):
        problem = self.problem
        if not problem.has_interval_bound and l != h:
            return None
        t0 = time.perf_counter()
        try:
            for pair, anchors in cands(l, h):
                p, d = problem.restore(*pair, l, h)
                if l != h and self._end_fails(p, d, l, h):
                    continue
                bound = stored_bound(problem.gap_bound(p, d, l, h))
                if bound <= self.target((p, d), l, h):
                    return PathPiece(l, h, p, d, float(bound), "certified", anchors)
            return None
        finally:
            self.certify_s += time.perf_counter() - t0

    def _end_fails(self, p, d, l, h):
        """Whether the pair's gap at an end of [l, h] already exceeds the target there: then
        no bound on [l, h] can meet it, and the interval bound (several times the cost of two
        point gaps) is skipped.  Skipping only ever splits a piece further; nothing is
        certified without the interval bound (ionosphere, eps = 0.125: 21 of the 62 failing
        pieces are caught here, and their bound is not computed; 88 of 101 where the SVM's
        bias was constant on a piece)."""
        return any(self.problem.gap_bound(p, d, x) > self.target((p, d), x, x) for x in (h, l))

    def _sampled_piece(self, l, h, cands):
        """Best candidate by the gaps at l, middle and h with the pair fixed on the piece."""
        problem = self.problem
        t0 = time.perf_counter()
        best = None
        pts = [x for x, _ in claimed_on(problem, "sampled", l, h)]  # what verify re-checks
        for pair, anchors in cands(l, h):
            if problem.has_interval_bound or l == h:
                p, d = problem.restore(*pair, l, h)
            else:
                p, d = problem.restore(*pair, self.mid(l, h))
            g = max(stored_bound(problem.gap_bound(p, d, x)) for x in pts)
            ok = all(g <= self.target((p, d), x, x) for x in pts)
            if best is None or (ok, -g) > (best[0], -best[1]):
                best = (ok, g, p, d, anchors)
        self.certify_s += time.perf_counter() - t0
        ok, g, p, d, anchors = best
        return PathPiece(l, h, p, d, float(g), "sampled" if ok else "uncovered", anchors)

    # -------------------------------------------------------------- strategies
    def paper(self):
        """Giesen et al.: exact solve, search forward for the furthest point whose restored gap
        is <= eps, next exact solve there.  The search gallops (the step doubles from the
        tolerance until the gap exceeds eps) and then bisects: it finds the first crossing, as
        the paper's binary search presumes a gap growing with the distance; bisecting the whole
        remaining interval could land beyond a region where the gap exceeds eps (ionosphere,
        dynamic bias, eps = 2: 2 exact solves and 108 uncovered pieces instead of the reference
        code's 5).  The segments are then certified with the pairs of the exact solves at both
        of their ends."""
        tol = _SEARCH_TOL * (self.s(self.hi) - self.s(self.lo))
        t = self.lo
        ts = [t]
        self.exact(t)
        while t < self.hi:
            pair = self.anchors[t]
            a, top, step = self.s(t), self.s(self.hi), tol
            b = None  # the first probe that fails
            while b is None and a < top:
                x = min(a + step, top)
                if self.point_ok(pair, self.t(x)):
                    a, step = x, 2 * step
                else:
                    b = x
            if b is None:
                nxt = self.hi
            else:
                while b - a > tol:  # bisection in the parameter's scale, as the paper's code
                    m = 0.5 * (a + b)
                    if self.point_ok(pair, self.t(m)):
                        a = m
                    else:
                        b = m
                nxt = self.t(a)
                if nxt <= t:  # the restored pair fails at once: step by the tolerance
                    nxt = self.ahead(t, tol)
            if nxt < self.hi:
                self.exact(nxt)
                self.save([], {})  # the anchors are the state: a resumed run replays with them
            ts.append(nxt)
            self._advance(t, nxt)
            t = nxt
        pieces = []
        for a, b in zip(ts[:-1], ts[1:]):
            pieces += self.cover(a, b, self.candidates(a, b, interpolate=False))[0]
        return pieces

    def grid(self):
        """A certified grid search, the baseline users would otherwise run: exact solves on a
        uniform grid (in the parameter's scale), doubled until the pairs of the grid points
        certify every segment between them (nested grids reuse their solves)."""
        s_lo, s_hi = self.s(self.lo), self.s(self.hi)
        k = 2
        while True:
            # (a set: on an interval a few floats wide, grid points coincide)
            ts = sorted({self.lo, self.hi, *(self.t(s_lo + (i / k) * (s_hi - s_lo)) for i in range(1, k))})
            for t in ts:
                self.exact(t)
            pieces, self.n_pieces = [], 0  # a finer grid starts its pieces afresh
            for a, b in zip(ts[:-1], ts[1:]):
                got, stuck = self.cover(a, b, self.candidates(a, b, interpolate=False),
                                        fail_fast=(s_hi - s_lo) / k > _MIN_STEP * (s_hi - s_lo))
                if stuck is not None:
                    break
                pieces += got
            else:
                return pieces
            k *= 2

    def two_sided(self):
        """Every exact solve certifies backwards as well as forwards: a segment between two
        exact solves is covered by the nearer one's pair; where it cannot be, the segment is
        split by a new solve.  The next solve is placed one adaptive step ahead."""
        return self._adaptive(interpolate=False)

    def interpolate(self):
        """Between two exact solves, the convex combination of their pairs (in the parameter's
        scale) is restored and certified; segments that fail are split by a new solve."""
        return self._adaptive(interpolate=True)

    def _adaptive(self, interpolate):
        full = self.s(self.hi) - self.s(self.lo)
        step = full * _FIRST_STEP
        a = self.lo
        pieces, pending = [], []  # pending: (a, b, future) of segments certified elsewhere
        mid_gap = None  # the _mid_gap of the segment last handed to a worker
        if self.resumed:  # continue after the last finished segment of an interrupted run
            a, step, pieces = float(self.resumed["a"]), float(self.resumed["step"]), list(self.resumed_pieces)
            self._advance(self.lo, a)
        if self.solvable(a) is None:  # no solver works at lo: start at the first point that does
            first = self._first_solvable(a, self.t(self.s(a) + step)) or self._first_solvable(a, self.hi)
            if first is None:
                raise SolverError(f"no exact solve succeeded anywhere in [{self.lo:.6g}, {self.hi:.6g}]: "
                                  + "; ".join(self.failed.values()))
            pieces += self.cover(a, first, self.candidates(a, first, interpolate))[0]
            a = first
        while a < self.hi:
            b = self.ahead(a, step)
            if self.s(self.hi) - self.s(b) < 0.25 * step:  # do not leave a sliver
                b = self.hi
            if self.solvable(b) is None:  # no solver works at b: the nearest point beyond that does
                b = self._first_solvable(b, self.hi)
                if b is None:
                    pieces += self.cover(a, self.hi, self.candidates(a, self.hi, interpolate))[0]
                    break
            if self.submit is None:
                got, last = self._segment(a, b, interpolate)
                pieces += got
                self._advance(a, b)
            else:  # a worker certifies [a, b] while the next exact solves are placed here
                b, mid_gap = self._shorten(a, b, interpolate)
                anchors = {a: self.anchors[a], b: self.anchors[b]}
                settings = (self.eps, self.relative, self.lo, self.hi, self.solver, self.budget)
                pending.append((a, b, self.submit(_segment_in_worker, self.problem, settings, anchors, interpolate)))
                last = (a, b)
                pieces += self._collect(pending, wait=False)
            step = max(self._next_step(*last, interpolate, mid_gap), full * _MIN_STEP)
            a = b
            self.save(pieces, dict(a=a, step=step))
        return pieces + self._collect(pending, wait=True)

    def _collect(self, pending, wait):
        """Pieces of the finished segment tasks at the front of ``pending`` (all with ``wait``)."""
        pieces = []
        while pending and (wait or pending[0][2].done()):
            a, b, future = pending.pop(0)
            got, solves, solve_s, certify_s, failed = future.result()
            pieces += got
            self._count(len(got))
            self.remote_solves += solves
            self.solve_s += solve_s
            self.certify_s += certify_s
            self.failed.update(failed)
            self._advance(a, b)
        return pieces

    def _mid_gap(self, a, b, interpolate):
        """``(gap, target)``: the best restored pair's gap in the middle of the segment [a, b]
        between two exact solves (for interpolation, the best combination's gap as the problem
        estimates it from the two ends), and the target ε there."""
        m = self.mid(a, b)
        if interpolate:
            t0 = time.perf_counter()
            if self.problem.weighing_depth > 0:
                g = self._best_theta(a, b, m, 0.5, (a, b))[1]
            else:  # the weight is the position: the middle's
                g = float(self.problem.interpolation_gaps(self.anchors[a], self.anchors[b], [0.5], m, (a, b))[0])
            self.certify_s += time.perf_counter() - t0
        else:
            g = min((self.point_bound(pair, m) for pair, _ in self.candidates(a, b, False)(m, m)), default=0.0)
        return g, self.target(self.anchors[b], m, m)

    def _next_step(self, a, b, interpolate, mid_gap=None):
        """Step for the next segment from the last anchor-to-anchor segment [a, b] that
        certified in one go: the restored pair's gap in the middle of a segment grows like the
        square of its length, so aim that gap at _STEP_TARGET * eps.  ``mid_gap``: the
        :meth:`_mid_gap` of [a, b] if already known."""
        g, target = mid_gap or self._mid_gap(a, b, interpolate)
        factor = math.sqrt(_STEP_TARGET * target / g) if g > 0 else _GROW_MAX
        return (self.s(b) - self.s(a)) * min(max(factor, _GROW_MIN), _GROW_MAX)

    def _shorten(self, a, b, interpolate):
        """Halve [a, b] (an exact solve in the middle) while the gap in its middle exceeds
        _SHORTEN * eps, before the segment is handed to a worker.

        Returns the new end and its :meth:`_mid_gap` (None if not computed)."""
        min_step = _MIN_STEP * (self.s(self.hi) - self.s(self.lo))
        mid_gap = None
        while self.s(b) - self.s(a) > 2 * min_step:
            mid_gap = self._mid_gap(a, b, interpolate)
            m = self.mid(a, b)
            if mid_gap[0] <= _SHORTEN * mid_gap[1] or self.solvable(m) is None:
                break
            b, mid_gap = m, None
        return b, mid_gap

    def _segment(self, a, b, interpolate):
        """Cover [a, b] (exact solves at both ends) left to right with pairs from the anchors
        around each point; where a cover gets stuck at f, a new exact solve goes in the middle
        of what is left, [f, b], and the cover resumes at f.

        Returns the pieces and the last anchor-to-anchor segment covered without a new solve.
        """
        self.exact(a)
        self.exact(b)
        pieces, last = [], (a, b)
        start, left, right = a, a, b  # cover [start, right] with the anchors at left, right
        min_step = _MIN_STEP * (self.s(self.hi) - self.s(self.lo))
        while start < b:
            too_small = self.s(right) - self.s(left) <= min_step
            got, stuck = self.cover(start, right, self.candidates(left, right, interpolate), fail_fast=not too_small)
            pieces += got
            if stuck is None:
                if start == left:
                    last = (left, right)
                start = left = right
                right = min((x for x in self.anchors if right < x <= b), default=b)
                continue
            m = self.mid(stuck, right)
            if not stuck < m < right:
                m = self.mid(left, right)
            if self.solvable(m) is None:  # nothing solves there: cover what we can, mark the rest
                pieces += self.cover(stuck, right, self.candidates(left, right, interpolate))[0]
                start = left = right
                right = min((x for x in self.anchors if right < x <= b), default=b)
                continue
            start, right = stuck, m
            if start <= left:
                start = left
        return pieces, last

    def _advance(self, a, b):
        if self.progress is not None:
            self.progress.update(self.s(b) - self.s(a))


def _progress_bar(enabled, total, desc):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="ln t", bar_format="{l_bar}{bar}| {n:.2f}/{total:.2f} [{elapsed}<{remaining}]")


def _check_args(problem, eps, interval):
    if not (isinstance(eps, (int, float, np.floating)) and math.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be a positive finite number; got {eps!r}")
    if interval is None:
        interval = problem.default_interval()
    try:
        lo, hi = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise InputError(f"interval must be a pair (lo, hi) of numbers; got {interval!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputError(f"interval must be finite; got ({lo!r}, {hi!r})")
    if problem.scale == "log" and lo <= 0:
        raise InputError(f"interval lower end must be > 0 for the log-scale parameter {problem.parameter!r}; got {lo!r}")
    if not lo < hi:
        raise InputError(f"interval must satisfy lo < hi; got ({lo!r}, {hi!r}) — swap or widen it")
    return lo, hi


def approximate_path(problem, eps, interval=None, *, relative=False, strategy="interpolate", solver=None,
                     progress=False, max_solves=10_000, max_pieces=200_000, solve_time_limit=None, meta=None,
                     workers=1, chunks=None, executor=None, checkpoint=None, resume=False):
    """Compute an ε-approximate path of ``problem`` over ``interval``.

    Parameters
    ----------
    problem : Problem
        An instance, e.g. ``get_problem("kernel_svm")(X, y, c=0.1, bias="dynamic")``.
    eps : float
        Admissible suboptimality: absolute (default, as in the paper), or relative to the
        optimal value with ``relative=True``.
    interval : (float, float), optional
        Parameter range; the problem's default if omitted.
    strategy : str
        One of :data:`STRATEGIES`: ``interpolate`` (default: the fewest exact solves),
        ``two-sided``, ``paper`` (Giesen et al.'s one-sided search) or ``grid`` (a uniform grid
        doubled until certified: the grid search a user would otherwise run).
    solver : str or sequence of str, optional
        Exact solvers to try in turn (default: the problem's ``exact_solvers``, e.g.
        ``("libsvm", "clarabel", "scs")`` for ``kernel_svm``).
    progress : bool
        Show a progress bar (needs the ``progress`` extra, tqdm).
    max_solves, max_pieces : int
        Limits on exact solves and on pieces; past either the run stops with a
        :class:`BudgetExceededError` saying what to change (a piece stores a primal and a dual
        vector, so 200 000 pieces of n = 1000 take ~3 GB).
    solve_time_limit : float, optional
        Seconds per exact solver call (Clarabel, SCS); a solver out of time counts as failed
        and the next one is tried.  libSVM is bounded by an iteration cap instead.
    meta : dict, optional
        Extra provenance for the certificate (data file, preprocessing, ...).
    workers : int
        Local worker processes.  With the adaptive strategies (``interpolate``,
        ``two-sided``) this process places the exact solves and the workers certify the
        segments between them as they come (worth it where certification is most of the
        work); with ``chunks`` or the other strategies the interval is split into ``chunks`` (default
        ``workers``) pieces of equal width in the parameter's scale, computed concurrently and
        merged into one path (each cut costs at most one extra exact solve).
    chunks : int, optional
        See ``workers``.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where to run the segments or chunks instead of a local process pool (anything with
        ``submit(fn, *args)`` returning a future with ``.result()`` and ``.done()``).
    checkpoint : str or Path, optional
        File where the finished work (exact solves, finished pieces) is written, atomically,
        as the run goes; it is deleted when the path is complete.
    resume : bool
        Continue from ``checkpoint`` (written by an interrupted run with the same inputs); the
        result equals an uninterrupted run's.

    Returns
    -------
    Path
    """
    lo, hi = _check_args(problem, eps, interval)
    solver = None if solver is None else tuple(problem.solver_names(solver))
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}{did_you_mean(strategy, STRATEGIES)}"
                         f" (choose from {', '.join(STRATEGIES)})")
    if not _is_count(workers):
        raise InputError(f"workers must be a positive integer; got {workers!r}")
    if chunks is not None and not _is_count(chunks):
        raise InputError(f"chunks must be a positive integer or None; got {chunks!r}")
    parallel = workers > 1 or executor is not None or (chunks or 1) > 1
    if parallel and checkpoint is not None:
        raise InputError("checkpoints are per run: use them without workers/chunks/executor")
    if resume and checkpoint is None:
        raise InputError("resume=True needs the checkpoint file to resume from")
    t0 = time.perf_counter()
    for name, value in (("max_solves", max_solves), ("max_pieces", max_pieces)):
        if not _is_count(value):
            raise InputError(f"{name} must be a positive integer; got {value!r}")
    if solve_time_limit is not None and not (isinstance(solve_time_limit, (int, float)) and solve_time_limit > 0):
        raise InputError(f"solve_time_limit must be a positive number of seconds or None; got {solve_time_limit!r}")
    args = (float(eps), bool(relative), strategy, solver, _Budget(int(max_solves), int(max_pieces), solve_time_limit))
    if not parallel or (chunks is None and strategy in _ADAPTIVE):
        ckpt = None
        if checkpoint is not None:
            ckpt = _Checkpoint(checkpoint, problem, dict(eps=float(eps), relative=bool(relative),
                                                         interval=[lo, hi], strategy=strategy))
        bar = _progress_bar(progress, float(to_scale(hi, problem.scale) - to_scale(lo, problem.scale)), problem.name)
        try:
            with _pool(workers, executor, parallel) as pool:
                if pool is None:
                    pieces, anchors, solve_s, certify_s = _chunk(problem, lo, hi, *args, bar, ckpt, resume)
                else:  # single-threaded here too: the workers need the cores (measured: 12 % faster)
                    pieces, anchors, solve_s, certify_s = _single_threaded(
                        _chunk, problem, lo, hi, *args, bar, None, False, pool.submit)
        finally:
            if bar is not None:
                bar.close()
        if ckpt is not None:
            ckpt.remove()
    else:
        pieces, anchors, solve_s, certify_s = _parallel(problem, lo, hi, args, int(chunks or workers), workers,
                                                        executor, progress)
    pieces.sort(key=lambda p: p.lo)
    info = dict(
        problem=problem.name,
        parameter=problem.parameter,
        options=problem.options(),
        kernel=KERNEL,
        n=problem.n,
        d=problem.X.shape[1],
        data_sha256=data_sha256(problem.X, problem.y),
        preprocessing="none",
        scale=problem.scale,
    )
    info.update(meta or {})
    return Path(
        problem=problem,
        eps=float(eps),
        relative=bool(relative),
        interval=(lo, hi),
        pieces=tuple(pieces),
        exact_solves=len(anchors),
        solve_points=tuple(sorted(anchors)),
        strategy=strategy,
        wall_s=time.perf_counter() - t0,
        solve_s=solve_s,
        certify_s=certify_s,
        meta=info,
    )


def _chunk(problem, lo, hi, eps, relative, strategy, solver, budget, bar=None, checkpoint=None, resume=False,
           submit=None):
    """One strategy run on [lo, hi]: ``(pieces, exact-solve points, solve_s, certify_s)``;
    with ``submit`` (an executor's), its segments are certified through it."""
    run = _Run(problem, eps, relative, lo, hi, solver, budget, bar, checkpoint=checkpoint, submit=submit)
    if checkpoint is not None:
        state = checkpoint.load(run) if resume else None
        if state is None and checkpoint.file.exists() and not resume:
            raise InputError(f"{checkpoint.file} holds an interrupted run: resume it (--resume) or delete it")
        run.resumed = state
    pieces = getattr(run, strategy.replace("-", "_"))()
    if run.failed:
        import warnings

        warnings.warn(f"{problem.name}: no solver produced a pair at {len(run.failed)} point(s); "
                      "the regions around them may be uncovered (see path.uncovered())", stacklevel=3)
    return pieces, list(run.anchors) + run.remote_solves, run.solve_s, run.certify_s


class _Checkpoint:
    """The finished work of a run in an ``.npz``: its exact solves (``anchor_t`` and the pairs'
    arrays prefixed ``anchor__``), its finished pieces (prefixed ``piece__``) and the
    strategy's state; rewritten atomically after every exact solve or finished segment.

    A resumed run reuses the stored pairs bit for bit instead of solving again and continues
    from the stored state, so its result equals an uninterrupted run's.
    """

    def __init__(self, file, problem, run_key):
        from pathlib import Path as _P

        self.file = _P(file)
        self.problem = problem
        self.key = dict(run_key, problem=problem.name, options=problem.options(),
                        data_sha256=data_sha256(problem.X, problem.y))

    def save(self, run, pieces, state):
        from .path import pieces_to_arrays, write_npz

        ts = sorted(run.anchors)
        arrays = {"anchor_t": np.array(ts, dtype=float)}
        per = [self.problem.to_arrays(*run.anchors[t]) for t in ts]
        for k in per[0] if per else ():
            arrays[f"anchor__{k}"] = np.stack([np.asarray(d[k], dtype=float) for d in per])
        if pieces:
            for k, v in pieces_to_arrays(self.problem, pieces).items():
                arrays[f"piece__{k}"] = v
        meta = dict(run=self.key, state=state, solve_s=run.solve_s, certify_s=run.certify_s)
        write_npz(self.file, arrays, dict(meta, content_sha256=content_sha256(arrays, meta)))

    def load(self, run):
        """Fill ``run`` with the stored exact solves; returns the strategy state (or None)."""
        if not self.file.exists():
            return None
        from .path import pieces_from_arrays, read_certificate

        try:
            arrays, meta = read_certificate(self.file)
        except InputError as exc:  # truncated, empty or foreign files (read_certificate names the cause)
            raise InputError(f"{self.file} is not a readable checkpoint ({exc}): delete it and run again") from None
        if json.loads(json.dumps(self.key)) != meta.get("run"):
            raise InputError(f"{self.file} is a checkpoint of another run (problem, data, eps, interval or "
                             "strategy differ): delete it or drop --resume")
        if content_sha256(arrays, meta) != meta.get("content_sha256"):
            raise InputError(f"{self.file} was modified after it was written (content sha256 differs): "
                             "delete it and run again")
        per = {k[len("anchor__"):]: v for k, v in arrays.items() if k.startswith("anchor__")}
        for i, t in enumerate(arrays["anchor_t"]):
            run.anchors[float(t)] = self.problem.from_arrays({k: v[i] for k, v in per.items()})
        pieces = {k[len("piece__"):]: v for k, v in arrays.items() if k.startswith("piece__")}
        run.resumed_pieces = pieces_from_arrays(self.problem, pieces) if pieces else []
        for i, piece in enumerate(run.resumed_pieces):  # a resumed claim is re-proven, never trusted
            why = _unproven(run, piece)
            if why:
                raise InputError(f"{self.file}: resumed piece {i} [{piece.lo:.6g}, {piece.hi:.6g}] does not re-prove "
                                 f"({why}): delete the checkpoint and run again")
        run.solve_s, run.certify_s = meta.get("solve_s", 0.0), meta.get("certify_s", 0.0)
        return meta.get("state") or None

    def remove(self):
        if self.file.exists():
            self.file.unlink()


def _unproven(run, piece):
    """Why ``piece`` (read back from a file) does not hold its claim on ``run``'s problem, or
    None (:func:`~approxpath.certificate.claim_failures`, against the run's target)."""
    if piece.kind == "uncovered":
        return None  # claims nothing
    if not (run.lo <= piece.lo <= piece.hi <= run.hi):
        return f"not inside [{run.lo:.6g}, {run.hi:.6g}]"
    pair = (piece.primal, piece.dual)
    failures, _ = claim_failures(run.problem, *pair, piece.kind, piece.lo, piece.hi, piece.gap_bound,
                                 lambda a, b: run.target(pair, a, b), run.eps, _version())
    return "; ".join(failures) or None


@contextmanager
def _pool(workers, executor, wanted=True):
    """``executor`` if given, else a local process pool of ``workers`` (shut down on exit);
    None when not ``wanted``."""
    if not wanted or executor is not None:
        yield executor if wanted else None
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield pool


def _single_threaded(fn, *args):
    """``fn(*args)`` with one BLAS thread and one kernel thread, so that workers do not compete."""
    from contextlib import nullcontext

    from . import kernels

    try:
        from threadpoolctl import threadpool_limits

        limit = threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        limit = nullcontext()
    before, kernels.THREADS = kernels.THREADS, 1
    try:
        with limit:
            return fn(*args)
    finally:
        kernels.THREADS = before


# The last problem a worker process certified segments of, with its warm kernel cache: the
# segments of one path arrive one by one, each with a fresh copy of the same problem.
_WORKER_PROBLEM = [None, None]


def _segment_in_worker(problem, settings, anchors, interpolate):
    """Certify the segment between the two exact solves ``anchors`` (a worker's task).

    Returns ``(pieces, new exact-solve points, solve_s, certify_s, failed)``.
    """
    key = (type(problem).__qualname__, problem.parameter, repr(problem.options()), data_sha256(problem.X, problem.y))
    if _WORKER_PROBLEM[0] == key:
        problem = _WORKER_PROBLEM[1]
    else:
        _WORKER_PROBLEM[:] = [key, problem]
    eps, relative, lo, hi, solver, budget = settings
    run = _Run(problem, eps, relative, lo, hi, solver, budget, None, anchors=dict(anchors))
    a, b = sorted(anchors)
    pieces, _ = _single_threaded(run._segment, a, b, interpolate)
    return pieces, [t for t in run.anchors if t not in anchors], run.solve_s, run.certify_s, run.failed


def _chunk_in_worker(problem, lo, hi, *args):
    """:func:`_chunk` in a worker process."""
    return _single_threaded(_chunk, problem, lo, hi, *args)


def _parallel(problem, lo, hi, args, chunks, workers, executor, progress):
    """Chunks of equal width in the parameter's scale, computed concurrently and merged.

    Neighbouring chunks both solve at their common cut (one extra solve per cut); every
    chunk's pieces are certified on their own, so the union is a valid path.
    """
    s_lo, s_hi = float(to_scale(lo, problem.scale)), float(to_scale(hi, problem.scale))
    cuts = [lo] + [float(from_scale(s_lo + k * (s_hi - s_lo) / chunks, problem.scale)) for k in range(1, chunks)] + [hi]
    with _pool(min(workers, chunks), executor) as pool:
        futures = [pool.submit(_chunk_in_worker, problem, a, b, *args) for a, b in zip(cuts[:-1], cuts[1:])]
        bar = _progress_bar(progress, float(chunks), f"{problem.name} ({chunks} chunks)")
        results = []
        for f in futures:
            results.append(f.result())
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    pieces, anchors = [], []
    for got, ts, _, _ in results:
        pieces += got
        anchors += ts  # a cut solved by both neighbours counts twice: it was solved twice
    # distinct points for solve_points; the count keeps the duplicates
    return pieces, anchors, sum(r[2] for r in results), sum(r[3] for r in results)


def map_paths(problems, eps, interval=None, *, workers=1, executor=None, **options):
    """Paths of several problems (a grid of fixed options: several C or lambda, cross-validation
    folds, ...) computed concurrently, one per task.

    Parameters
    ----------
    problems : sequence of Problem
    eps, interval, **options
        As for :func:`approximate_path` (the same for every problem).
    workers : int
        Local processes (ignored when ``executor`` is given).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional

    Returns
    -------
    list of Path
        In the order of ``problems``.
    """
    problems = list(problems)
    own = executor is None
    if own:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(max_workers=max(1, min(int(workers), len(problems))))
    try:
        futures = [executor.submit(_path_in_worker, p, eps, interval, options) for p in problems]
        return [f.result() for f in futures]
    finally:
        if own:
            executor.shutdown()


def _path_in_worker(problem, eps, interval, options):
    return _single_threaded(lambda: approximate_path(problem, eps, interval, **options))
