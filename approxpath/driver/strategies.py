"""Where the exact solves go: the strategies of :func:`approxpath.approximate_path`.

A strategy is an object over a :class:`~approxpath.driver.run.Run` (the anchors, the budget)
and a :class:`~approxpath.driver.certifier.Certifier`; calling it returns the pieces.  Its state
between segments (the adaptive strategies: where the next segment starts and its step) is what
a checkpoint stores.
"""

from __future__ import annotations

import math
import time

from ..compute.executors import result
from ..errors import SolverError
from .certifier import Certifier

__all__ = ["Strategy", "Paper", "Grid", "TwoSided", "Interpolate", "STRATEGIES"]

# Binary search of the paper strategy: stop when the bracket is this fraction of the whole
# interval (in log scale); 2**-14 of ln(2**20) is ~1e-3, i.e. 0.1 % in t.
_SEARCH_TOL = 2.0**-14
# Adaptive strategies: the first step and the smallest segment as fractions of the interval
# (in log scale); the next step aims the interpolated gap in the middle of a segment at
# _STEP_TARGET * eps (it grows like the square of the length), by a factor within
# [_GROW_MIN, _GROW_MAX] of the last segment.
_FIRST_STEP = 1.0 / 8
_MIN_STEP = 2.0**-20
_STEP_TARGET = 0.5
_GROW_MIN, _GROW_MAX = 0.5, 3.0
# With workers, a segment whose middle's gap exceeds _SHORTEN * eps is halved by an exact solve
# before a worker gets it (a worker stuck on a long segment idles the other); above 1 because a
# worker places its own solves better, where the cover gets stuck (a1a, eps = 0.03, 2 workers:
# 0.9 -> 30 solves, 11.5 s; 1.5 -> 24 solves, 9.0-9.3 s; 3 -> 22 solves, 9.4 s).
_SHORTEN = 1.5


class Strategy:
    """Base of the strategies.

    Parameters
    ----------
    run : Run
    submit : callable, optional
        An executor's ``submit``: adaptive strategies certify their segments through it.
    """

    #: Places its exact solves one segment ahead: segments can be certified in workers.
    adaptive = False

    def __init__(self, run, submit=None):
        self.run = run
        self.certifier = Certifier(run)
        self.submit = submit
        self._floors = set()  # the exact solves whose narrowest piece was tried

    def _refuse_below_floor(self, left, cands):
        """:class:`EpsilonTooSmallError` where no piece next to the exact solve ``left``, however
        narrow, is certified by ``cands`` (tried once per exact solve)."""
        if left in self._floors:
            return
        self._floors.add(left)
        ratio = self.certifier.floor_ratio(left, cands)
        if ratio is not None and ratio > 1.0:
            raise self.run.below_floor(left, ratio)

    def __call__(self, resumed=None):
        """The pieces of the run's interval; ``resumed``: ``(state, pieces)`` of a checkpoint."""
        raise NotImplementedError


class Paper(Strategy):
    """Giesen et al.: exact solve, search forward for the furthest point whose restored gap
    is <= eps, next exact solve there.  The search gallops (the step doubles from the
    tolerance until the gap exceeds eps) and then bisects: it finds the first crossing, as
    the paper's binary search presumes a gap growing with the distance; bisecting the whole
    remaining interval could land beyond a region where the gap exceeds eps (ionosphere,
    dynamic bias, eps = 2: 2 exact solves and 108 uncovered pieces instead of the reference
    code's 5).  The segments are then certified with the pairs of the exact solves at both
    of their ends.  (A resumed run replays the search with the stored anchors.)"""

    def __call__(self, resumed=None):
        run = self.run
        tol = _SEARCH_TOL * run.width
        t = run.lo
        ts = [t]
        run.exact(t)
        while t < run.hi:
            pair = run.anchors[t]
            a, top, step = run.s(t), run.s(run.hi), tol
            b = None  # the first probe that fails
            while b is None and a < top:
                x = min(a + step, top)
                if run.point_ok(pair, run.t(x)):
                    a, step = x, 2 * step
                else:
                    b = x
            if b is None:
                nxt = run.hi
            else:
                while b - a > tol:  # bisection in log scale, as the paper's code
                    m = 0.5 * (a + b)
                    if run.point_ok(pair, run.t(m)):
                        a = m
                    else:
                        b = m
                nxt = run.t(a)
                if nxt <= t:  # the restored pair fails at once: step by the tolerance
                    nxt = run.ahead(t, tol)
            if nxt < run.hi:
                run.exact(nxt)
                run.save([], {})  # the anchors are the state: a resumed run replays with them
            ts.append(nxt)
            run.advance(t, nxt)
            t = nxt
        pieces = []
        for a, b in zip(ts[:-1], ts[1:]):
            pieces += self.certifier.cover(a, b, self.certifier.candidates(a, b, interpolate=False))[0]
        return pieces


class Grid(Strategy):
    """A certified grid search, the baseline users would otherwise run: exact solves on a
    uniform grid (in log scale), doubled until the pairs of the grid points certify every
    segment between them (nested grids reuse their solves)."""

    def __call__(self, resumed=None):
        run, cert = self.run, self.certifier
        s_lo, s_hi = run.s(run.lo), run.s(run.hi)
        k = 2
        while True:
            # (a set: on an interval a few floats wide, grid points coincide)
            ts = sorted({run.lo, run.hi, *(run.t(s_lo + (i / k) * (s_hi - s_lo)) for i in range(1, k))})
            for t in ts:
                run.exact(t)
            pieces, run.n_pieces = [], 0  # a finer grid starts its pieces afresh
            for a, b in zip(ts[:-1], ts[1:]):
                cands = cert.candidates(a, b, interpolate=False)
                got, stuck = cert.cover(a, b, cands, fail_fast=(s_hi - s_lo) / k > _MIN_STEP * (s_hi - s_lo))
                if stuck == a:  # (a finer grid would not certify a piece next to a either)
                    self._refuse_below_floor(a, cands)
                if stuck is not None:
                    break
                pieces += got
            else:
                return pieces
            k *= 2


class TwoSided(Strategy):
    """Every exact solve certifies backwards as well as forwards: a segment between two exact
    solves is covered by the nearer one's pair; where it cannot be, the segment is split by a
    new solve.  The next solve is placed one adaptive step ahead."""

    adaptive = True
    interpolate = False

    def __call__(self, resumed=None):
        run, cert, interpolate = self.run, self.certifier, self.interpolate
        step = run.width * _FIRST_STEP
        a = run.lo
        pieces, pending = [], []  # pending: (a, b, future) of segments certified elsewhere
        mid_gap = None  # the _mid_gap of the segment last handed to a worker
        if resumed is not None:  # continue after the last finished segment of an interrupted run
            state, done = resumed
            a, step, pieces = float(state["a"]), float(state["step"]), list(done)
            run.advance(run.lo, a)
        if run.solvable(a) is None:  # no solver works at lo: start at the first point that does
            first = run.first_solvable(a, run.t(run.s(a) + step)) or run.first_solvable(a, run.hi)
            if first is None:
                others = len(run.failed) - 1  # (the first point's reasons; the others' points)
                more = f"; the same or alike at {others} more point(s), {run.failures_named(skip=1)}"
                raise SolverError(f"no exact solve succeeded anywhere in [{run.lo:.6g}, {run.hi:.6g}]: "
                                  + run.failed[min(run.failed)] + (more if others else ""))
            pieces += cert.cover(a, first, cert.candidates(a, first, interpolate))[0]
            a = first
        while a < run.hi:
            b = run.ahead(a, step)
            if run.s(run.hi) - run.s(b) < 0.25 * step:  # do not leave a sliver
                b = run.hi
            # an earlier run's solve within half a step more ends the segment instead of a new one
            b = run.next_seed(a, run.ahead(a, 1.5 * step)) or b
            if run.solvable(b) is None:  # no solver works at b: the nearest point beyond that does
                b = run.first_solvable(b, run.hi)
                if b is None:
                    pieces += cert.cover(a, run.hi, cert.candidates(a, run.hi, interpolate))[0]
                    break
            if self.submit is None:
                got, last = self.segment(a, b)
                pieces += got
                run.advance(a, b)
            else:  # a worker certifies [a, b] while the next exact solves are placed here
                from .parallel import segment_in_worker

                b, mid_gap = self._shorten(a, b)
                anchors = {a: run.anchors[a], b: run.anchors[b]}
                settings = (run.eps, run.relative, run.lo, run.hi, run.solver, run.budget)
                pending.append((a, b, self.submit(segment_in_worker, run.problem, settings, anchors, interpolate)))
                last = (a, b)
                pieces += self._collect(pending, wait=False)
            step = max(self._next_step(*last, mid_gap), run.width * _MIN_STEP)
            a = b
            run.save(pieces, dict(a=a, step=step))
        return pieces + self._collect(pending, wait=True)

    def _collect(self, pending, wait):
        """Pieces of the finished segment tasks at the front of ``pending`` (all with ``wait``)."""
        run = self.run
        pieces = []
        while pending and (wait or pending[0][2].done()):
            a, b, future = pending.pop(0)
            got, solves, solve_s, certify_s, failed = result(future)
            pieces += got
            run.count(len(got))
            run.remote_solves += solves
            run.solve_s += solve_s
            run.certify_s += certify_s
            run.failed.update(failed)
            run.advance(a, b)
        return pieces

    def _mid_gap(self, a, b):
        """``(gap, target)``: the best restored pair's gap in the middle of the segment [a, b]
        between two exact solves (for interpolation, the best combination's gap as the problem
        estimates it from the two ends), and the target ε there."""
        run, cert = self.run, self.certifier
        m = run.mid(a, b)
        if self.interpolate:
            t0 = time.perf_counter()
            if cert.linear_in_parameter and cert.moving_degree:
                # the pair the pieces get, its weights linear in the parameter (the guide's
                # combinations have weights on a grid: off the line by up to 2**-9, they
                # overestimated the gap 7,000-fold on an SVM's C path, and every step was short)
                g = run.bound.gap(*run.problem.restore(*cert.on_line(a, b, a, m, b), m, m), m, m)
            elif cert.weighing_depth > 0:
                g = cert.best_theta(a, b, m, 0.5, (a, b))[1]
            else:  # the weight is the position: the middle's
                g = float(cert.guide(run.anchors[a], run.anchors[b], [0.5], m, (a, b))[0])
            run.certify_s += time.perf_counter() - t0
        else:
            g = min((run.point(pair, m)[0] for pair, _ in cert.candidates(a, b, False)(m, m)), default=0.0)
        return g, run.target(run.anchors[b], m, m)

    def _next_step(self, a, b, mid_gap=None):
        """Step for the next segment from the last anchor-to-anchor segment [a, b] that
        certified in one go: the restored pair's gap in the middle of a segment grows like the
        square of its length, so aim that gap at _STEP_TARGET * eps.  ``mid_gap``: the
        :meth:`_mid_gap` of [a, b] if already known."""
        run = self.run
        g, goal = mid_gap or self._mid_gap(a, b)
        factor = math.sqrt(_STEP_TARGET * goal / g) if g > 0 else _GROW_MAX
        return (run.s(b) - run.s(a)) * min(max(factor, _GROW_MIN), _GROW_MAX)

    def _shorten(self, a, b):
        """Halve [a, b] (an exact solve in the middle) while the gap in its middle exceeds
        _SHORTEN * eps, before the segment is handed to a worker.

        Returns the new end and its :meth:`_mid_gap` (None if not computed)."""
        run = self.run
        min_step = _MIN_STEP * run.width
        mid_gap = None
        while run.s(b) - run.s(a) > 2 * min_step:
            mid_gap = self._mid_gap(a, b)
            m = run.mid(a, b)
            if mid_gap[0] <= _SHORTEN * mid_gap[1] or run.solvable(m) is None:
                break
            b, mid_gap = m, None
        return b, mid_gap

    def segment(self, a, b):
        """Cover [a, b] (exact solves at both ends) left to right with pairs from the anchors
        around each point; where a cover gets stuck at f, a new exact solve goes in the middle
        of what is left, [f, b], and the cover resumes at f.

        Returns the pieces and the last anchor-to-anchor segment covered without a new solve.
        """
        run, cert, interpolate = self.run, self.certifier, self.interpolate
        run.exact(a)
        run.exact(b)
        pieces, last = [], (a, b)
        start, left, right = a, a, b  # cover [start, right] with the anchors at left, right
        min_step = _MIN_STEP * run.width
        while start < b:
            too_small = run.s(right) - run.s(left) <= min_step
            cands = cert.candidates(left, right, interpolate)
            if too_small and start == left:
                # the narrowest segment, whose cover cannot add solves: where not even a piece next
                # to left is certified (the bound's rounding allowances above eps), it would be
                # halved into sampled pieces, and so would the next segment after one more solve
                self._refuse_below_floor(left, cands)
            got, stuck = cert.cover(start, right, cands, fail_fast=not too_small)
            pieces += got
            if stuck is None:
                if start == left:
                    last = (left, right)
                start = left = right
                right = min((x for x in run.anchors if right < x <= b), default=b)
                continue
            m = run.mid(stuck, right)
            if not stuck < m < right:  # a few floats apart: the log middle rounds to an end
                m = stuck + 0.5 * (right - stuck)
            # no float between them (the middle of [left, right] would lie below stuck: a reversed
            # cover), or nothing solves there: cover what we can, mark the rest
            if not stuck < m < right or run.solvable(m) is None:
                pieces += cert.cover(stuck, right, cert.candidates(left, right, interpolate))[0]
                start = left = right
                right = min((x for x in run.anchors if right < x <= b), default=b)
                continue
            start, right = stuck, m
            if start <= left:
                start = left
        return pieces, last


class Interpolate(TwoSided):
    """Between two exact solves, the convex combination of their pairs (in log scale) is
    restored and certified; segments that fail are split by a new solve (the default: the
    fewest exact solves)."""

    interpolate = True


#: The strategies by name; the first is the default.
STRATEGIES = {"interpolate": Interpolate, "two-sided": TwoSided, "paper": Paper, "grid": Grid}
