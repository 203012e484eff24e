"""Covering a segment with pieces: each piece holds one fixed pair restored from the exact solves
around it, split (in log scale) until the pair's rigorous bound meets the target.

A problem whose bound holds only at points (``Bound.interval_bound = False``) gets "sampled"
pieces, placed by the same strategies: a piece is split until its pair's gaps at the piece's
sampled points (:func:`~approxpath.certificate.claims.claimed_on`: the ends and the points of
two bisections in log scale, five in all) meet the target there.  Nothing is called certified
without a bound valid for every parameter of the piece.
"""

from __future__ import annotations

import time

import numpy as np

from .. import moving
from ..certificate.claims import claimed_on
from ..numerics import stored_bound
from ..problem import convex_combination, restored_gaps
from ..registry import built_in
from ..result import PathPiece
from .audit import audit_cover

__all__ = ["Certifier"]

# Give up splitting a piece below this fraction of the interval (in log scale) and label it
# "sampled" (or "uncovered"); 2**-30 is far below any piece a bound needs.
_MIN_PIECE = 2.0**-30
# ... and stop splitting a piece whose middle no anchor covers once it is below this fraction:
# uncovered regions are then located to ~0.4 % of the interval without splitting them to dust.
_RESOLUTION = 2.0**-8
# ... and, below the resolution, split a piece only while halving cuts its best bound by at
# least 1 - _PROGRESS (its ratio to the target): a bound with a floor that does not shrink with
# the width (rounding allowances) above a target the point gaps meet would otherwise be halved
# down to _MIN_PIECE, 2**22 pieces per resolution cell (an SVM C path at eps = 2e-11: its
# bound's floor was 1.27 eps at every width; a bound of order p >= 1 halves its width term).
_PROGRESS = 0.99
# Interpolation weight: chosen on a grid of _THETA_GRID values, then refined once, at the
# middles of the pieces of the first ``weighing_depth`` bisections of a segment and linear in
# between (measured on ionosphere/heart/diabetes: ~10 % fewer exact solves than the linear
# position).
_THETA_GRID = 9
# The default weighing depth of a problem that does not set its own ``weighing_depth`` (a
# problem whose restoration is costly lowers it).
_WEIGHING_DEPTH = 4
# A fail-fast cover splits a piece at most down to 2**-_FAIL_DEPTH of its segment, and stops
# at once where the best pair's point gap in a failing piece's middle exceeds _HOPELESS * eps
# (bounds shrink to the point gap as pieces shrink: there a new exact solve is the way on).
_FAIL_DEPTH = 10
_HOPELESS = 0.9
# A marching cover (:meth:`Certifier._march`) aims the next piece's bound at _AIM of the
# target (robust l1, n = 1000, four sub-intervals: 272 tries for 193 pieces; 0.9: 283 for
# 187), grows a piece at most _GROW times after a certified one, and shrinks it by
# _SHRINK after a refused one: never to dust on one bad bound, always by enough to matter.
_AIM = 0.8
_GROW = 2.0
# ... and grows it at least _PROBE times: a bound made of the pair's point gap hardly moves
# with the width, so shrinking on it would never stop and staying would never recover from
# one narrow piece (robust l1, n = 1000, four sub-intervals: 275 tries; at least 1x: 272,
# at least 1.1x: 285)
_PROBE = 1.05
_SHRINK = (0.125, 0.7)


class Certifier:
    """Pieces for a :class:`~approxpath.driver.run.Run` from its anchors.

    The problem's optional capabilities are looked up once here: ``interpolate`` (else a
    convex combination field by field), ``interpolation_gaps`` (else each weight restored and
    its gap taken), ``weighing_depth``, ``piece_bound_order`` (pieces sized by marching,
    :meth:`_march`, else by halving), and its bound's ``moving_degrees``: where the bound
    bounds moving pairs over the run's parameter, the interpolating candidate is a pair whose
    weight moves along the piece (:func:`approxpath.moving.interpolate`), which the problem
    restores; ``known_gap``: a bound already computed for the pair the problem just restored
    (such a pair is not screened at the piece's ends first).
    """

    def __init__(self, run):
        self.run = run
        problem = run.problem
        self.interpolate = getattr(problem, "interpolate", convex_combination)
        degrees = getattr(run.bound, "moving_degrees", None) or {}
        self.moving_degree = min(degrees.get(run.bound.parameter, 0), 2)
        # On a weight path (C, lambda: the kernel fixed) the moving pair's weight is the linear
        # interpolation in the parameter between the two exact solves: the built-in problems'
        # exact paths are linear, or nearly, in the weight between breakpoints, and for the SVM
        # it keeps the combination inside the growing box [0, C].  On a bandwidth path it goes
        # through the weights chosen in the piece (they are not linear in t).
        sweep = getattr(run.bound, "sweep", None)
        self.linear_in_parameter = sweep is not None and not sweep.along_bandwidth
        guide = getattr(problem, "interpolation_gaps", None)
        self.guide = guide or (lambda a, b, thetas, tau, around=None: restored_gaps(problem, a, b, thetas, tau))
        self.weighing_depth = getattr(problem, "weighing_depth", _WEIGHING_DEPTH)
        self.weighed = {}  # (a, b, tau, around) -> best_theta's answer
        self.known_gap = getattr(run.bound, "known_gap", None)
        self.order = getattr(problem, "piece_bound_order", None)
        # a plug-in's interval bound is audited (:func:`.audit.audit_cover`); the built-in ones are tested here
        self.audit = run.bound.interval_bound and not built_in(type(problem))

    def candidates(self, a, b, interpolate):
        """Candidate pairs for sub-pieces of [a, b] from the anchors at a and/or b.

        Returns a function of a sub-piece ``(l, h)`` giving ``[(pair, anchors), ...]``: the
        two anchors' pairs, the nearer first; with ``interpolate``, for a sub-piece inside
        (a, b), only the convex combination of the two pairs with the weight of smallest gap
        (restored afterwards) or, where the bound bounds moving pairs, the pair whose weight
        moves along the piece through the weights at its two ends and its middle (degree 2) or
        through the middle's with the slope between the ends' (degree 1).
        """
        run = self.run
        ends = [x for x in (a, b) if x in run.anchors]
        profile = {0.0: 0.0, 1.0: 1.0}  # position in [a, b] (log scale) -> best combination weight

        def weight(pos, width, tau, around):
            # optimize at the middles of the pieces of the first weighing_depth bisections
            # (estimated from the piece's ends where the problem can); deeper pieces
            # interpolate those weights
            if width >= 2.0 ** (1 - self.weighing_depth) and pos not in profile:
                profile[pos] = self.best_theta(a, b, tau, pos, around)[0]
            return profiled(pos)

        def profiled(pos):
            if pos in profile:
                return profile[pos]
            xs = sorted(profile)
            return float(np.interp(pos, xs, [profile[x] for x in xs]))

        def position(x):
            return min(max((run.s(x) - run.s(a)) / (run.s(b) - run.s(a)), 0.0), 1.0)

        def cands(l, h):
            m = run.s(run.mid(l, h))
            out = sorted(((run.anchors[x], (x,)) for x in ends), key=lambda c: abs(run.s(c[1][0]) - m))
            if interpolate and len(ends) == 2:
                pos = min(max((m - run.s(a)) / (run.s(b) - run.s(a)), 0.0), 1.0)
                if 0.0 < pos < 1.0:
                    # the combination alone: it certifies ~92 % of the pieces the three
                    # candidates do (measured on ionosphere) at a third of the cost of failures
                    if self.moving_degree and l < h and self.linear_in_parameter:  # no weighing: the line
                        return [(self.on_line(a, b, l, run.t(m), h), (a, b))]
                    width = (run.s(h) - run.s(l)) / (run.s(b) - run.s(a))
                    pair_a, pair_b = run.anchors[a], run.anchors[b]
                    theta = weight(pos, width, run.t(m), (l, h) if l < h else None)
                    if self.moving_degree and l < h:
                        thetas = (profiled(position(l)), theta, profiled(position(h)))
                        pair = moving.interpolate(pair_a, pair_b, thetas, (l, run.t(m), h), self.moving_degree)
                        return [(pair, (a, b))]
                    return [(self.interpolate(pair_a, pair_b, theta), (a, b))]
            return out

        return cands

    def on_line(self, a, b, lo, mid, hi):
        """The moving pair on ``[lo, hi]`` (``mid`` between) of the anchors at ``a`` and ``b``
        whose weight is linear in the parameter, ``(t - a) / (b - a)``: on a path over a weight,
        where the exact optimum's dual is linear between the path's kinks."""
        thetas = tuple((x - a) / (b - a) for x in (lo, mid, hi))
        return moving.interpolate(self.run.anchors[a], self.run.anchors[b], thetas, (lo, mid, hi), self.moving_degree)

    def best_theta(self, a, b, tau, theta0, around=None):
        """``(weight, gap)``: the combination weight with the smallest point gap at ``tau``
        (or its estimate from the piece ``around``) and that gap (as computed, no rounding
        allowance): a grid, then a finer grid around the best (the gap is not convex in theta
        once the bias rule acts)."""
        key = (a, b, tau, around)  # a segment's middle: weighed for its first piece and its next step
        if key in self.weighed:
            return self.weighed[key]
        pair_a, pair_b = self.run.anchors[a], self.run.anchors[b]
        grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, _THETA_GRID), [theta0]]))
        gaps = self.guide(pair_a, pair_b, grid, tau, around)
        k = int(np.argmin(gaps))
        step = 1.0 / (_THETA_GRID - 1)
        fine = np.clip(grid[k] + np.linspace(-step, step, _THETA_GRID), 0.0, 1.0)
        gaps2 = self.guide(pair_a, pair_b, fine, tau, around)
        best = (float(fine[int(np.argmin(gaps2))]), float(gaps2.min())) if gaps2.min() < gaps[k] else \
            (float(grid[k]), float(gaps[k]))
        self.weighed[key] = best
        return best

    def cover(self, lo, hi, cands, fail_fast=False):
        """Pieces covering [lo, hi] left to right, each certified by one of ``cands(l, h)``: the
        whole of [lo, hi] first, then halves in log scale until a bound holds, or, where the
        problem states how its bound grows with a piece's width (``piece_bound_order``),
        pieces sized from the last bound tried (:meth:`_march`).

        A sub-piece that no candidate can certify and whose middle no candidate covers even
        pointwise is hopeless.  With ``fail_fast`` the cover stops there and returns the pieces
        so far and where it stopped (the caller adds an exact solve); otherwise the sub-piece
        becomes a "sampled" or "uncovered" piece.  Returns ``(pieces, stopped_at_or_None)``.
        """
        run = self.run
        # fail-fast covers give up once a sub-piece is 2**-_FAIL_DEPTH of the segment: an exact
        # solve is cheaper than splitting further
        resolution = (run.s(hi) - run.s(lo)) * 2.0**-_FAIL_DEPTH if fail_fast else _RESOLUTION * run.width
        covered = (self._march if self.order is not None else self._halving)(lo, hi, cands, fail_fast, resolution)
        if self.audit:
            audit_cover(run, covered[0])
        return covered

    def _halving(self, lo, hi, cands, fail_fast, resolution):
        """:meth:`cover` by halving in log scale (problems without ``piece_bound_order``)."""
        run = self.run
        pieces = []
        stack = [(lo, hi, None)]
        while stack:
            l, h, parent = stack.pop()
            piece, ratio = self._try_piece(l, h, cands)
            if piece is not None:
                pieces.append(piece)
                run.count(1)
                continue
            if self._narrower(l, h, cands, fail_fast, resolution, _stalled(ratio, parent)):
                m = run.mid(l, h)
                stack += [(m, h, ratio), (l, m, ratio)]
                continue
            if fail_fast:
                return pieces, l
            pieces.append(self._sampled_piece(l, h, cands))
            run.count(1)
        return pieces, None

    def _march(self, lo, hi, cands, fail_fast, resolution):
        """:meth:`cover` with each next piece starting where the last certified one ends and
        its width from the last bound ``g`` tried against its target ``T``: the last width
        ``w`` becomes :math:`w\\,(a T / g)^{1/p}` (``a``: :data:`_AIM`, ``p``: the problem's
        ``piece_bound_order``), between :data:`_PROBE` and :data:`_GROW` times ``w`` after a
        certified piece and within :data:`_SHRINK` of it after a refused one."""
        run = self.run
        pieces = []
        # the first try: the whole of [lo, hi] (starting from the last cover's width instead
        # took 3,567 pieces and 35 exact solves for robust l1's n = 1000 path against 2,866
        # and 30: the pieces next to an exact solve are wide)
        x, w = lo, run.s(hi) - run.s(lo)
        refused = None  # the ratio of the last refused try at x
        while x < hi:
            h = run.ahead(x, w)
            if run.s(hi) - run.s(h) < 0.25 * w:  # do not leave a sliver
                h = hi
            piece, ratio = self._try_piece(x, h, cands)
            width = run.s(h) - run.s(x)
            aimed = (_AIM / ratio) ** (1.0 / self.order) if ratio else None  # (no bound, or 0)
            if piece is not None:
                pieces.append(piece)
                run.count(1)
                x, refused = h, None
                w = width * (_GROW if aimed is None else float(np.clip(aimed, _PROBE, _GROW)))
                continue
            w = width * (0.5 if aimed is None else float(np.clip(aimed, *_SHRINK)))  # (no aim: halve)
            stalled, refused = _stalled(ratio, refused), ratio
            if self._narrower(x, h, cands, fail_fast, resolution, stalled):
                continue
            if fail_fast:
                return pieces, x
            pieces.append(self._sampled_piece(x, h, cands))
            run.count(1)
            x, refused = h, None
        return pieces, None

    def floor_ratio(self, l, cands):
        """The best bound-to-target ratio of ``cands`` on the narrowest piece a cover tries from
        ``l`` (:data:`_MIN_PIECE` of the interval; a sampled piece's: its sampled points' gaps), or
        None where one certifies it or none has a bound there: above 1, no piece starting at ``l``
        is ever certified (the bound's terms that do not shrink with the width, its rounding
        allowances, exceed the target; or the pairs restored on pieces are not the point's)."""
        run = self.run
        h = run.ahead(l, _MIN_PIECE * run.width)
        if not l < h:
            return None
        piece, ratio = self._try_piece(l, h, cands)
        return None if piece is not None else ratio

    def _narrower(self, l, h, cands, fail_fast, resolution, stalled=False):
        """Whether a narrower piece than the refused ``[l, h]`` is worth trying: it is wider
        than the resolution of the cover (in log scale) or, below it, a candidate is eps-good
        at its middle and the bound still shrinks with the width (not ``stalled``, see
        :func:`_stalled`).  In a fail-fast cover both must hold, and the candidate must be well
        inside eps (:data:`_HOPELESS`): bounds shrink to the point gap as pieces shrink, so a
        middle already near eps means a new exact solve."""
        run = self.run
        m = run.mid(l, h)
        width = run.s(h) - run.s(l)
        if not (width > _MIN_PIECE * run.width and l < m < h):
            return False
        if fail_fast:
            return width > resolution and self._any_point_ok(m, cands, _HOPELESS)
        # below the resolution, a piece whose middle no candidate covers is given up (sampled
        # or uncovered) rather than an uncoverable region split to dust
        return width > resolution or (not stalled and self._any_point_ok(m, cands))

    def _any_point_ok(self, tau, cands, share=1.0):
        return any(self.run.point_ok(pair, tau, share) for pair, _ in cands(tau, tau))

    def _try_piece(self, l, h, cands):
        """``(piece or None, ratio)``: the first candidate whose bound meets the target on
        ``[l, h]``, and the smallest ratio of a bound to its target (a point gap's where the
        pair already fails at an end of the piece; for a sampled piece, the largest of its sampled
        points' gaps to their targets, inf where the pair is infeasible on it)."""
        run, bound = self.run, self.run.bound
        t0 = time.perf_counter()
        ratio = None
        # an overflow in a candidate, its restoration or its bound ends as inf (not <= the target) or NaN, which
        # stops the run at the gap naming the cause (driver.run._FiniteBound): numpy's warnings would only precede it
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                for pair, anchors in cands(l, h):
                    p, d = run.problem.restore(*pair, l, h)
                    if not bound.interval_bound and l != h:
                        g, failed = self._sampled_gap(p, d, l, h)
                        if g is not None:
                            return PathPiece(l, h, p, d, g, "sampled", anchors), None
                        ratio = failed if ratio is None else min(ratio, failed)
                        continue
                    # a bound already at hand needs no screening at the ends
                    screen = l != h and (self.known_gap is None or self.known_gap(p, d, l, h) is None)
                    failed = self._end_fails(p, d, l, h) if screen else None
                    if failed is None:
                        goal = run.target((p, d), l, h)
                        bound_value = stored_bound(bound.gap(p, d, l, h), goal)
                        if bound_value <= goal:
                            return PathPiece(l, h, p, d, float(bound_value), "certified", anchors), bound_value / goal
                        failed = bound_value / goal if goal > 0 else None
                    if failed is not None:
                        ratio = failed if ratio is None else min(ratio, failed)
                return None, ratio
        finally:
            run.certify_s += time.perf_counter() - t0

    def _end_fails(self, p, d, l, h):
        """The ratio of the pair's gap to the target at an end of [l, h] where the gap already
        exceeds the target (else None): then no bound on [l, h] can meet it, and the interval
        bound (several times the cost of two point gaps) is skipped.  Skipping only ever splits a
        piece further; nothing is certified without the interval bound (ionosphere, eps = 0.125:
        21 of the 62 failing pieces are caught here, and their bound is not computed; 88 of 101
        where the SVM's bias was constant on a piece)."""
        run = self.run
        for x in (h, l):
            g, goal = run.bound.gap(p, d, x), run.target((p, d), x, x)
            if g > goal:
                return g / goal if goal > 0 else float("inf")
        return None

    def _sampled_gap(self, p, d, l, h):
        """``(gap, None)``: the stored gap of a sampled piece [l, h] holding the pair ``(p, d)``,
        the largest gap at the piece's sampled points; or ``(None, ratio)`` where a gap exceeds its
        target there (the largest gap-to-target ratio of its points) or the pair is infeasible on
        the piece (inf)."""
        run, bound = self.run, self.run.bound
        if bound.check(p, d, l, h):
            return None, float("inf")
        top, worst = -np.inf, 0.0
        for x, _ in claimed_on("sampled", l, h):  # what verify re-checks
            goal = run.target((p, d), x, x)
            g = stored_bound(bound.gap(p, d, x), goal)
            top = max(top, g)
            if not g <= goal:
                worst = max(worst, g / goal if goal > 0 else float("inf"))
        return (float(top), None) if worst == 0.0 else (None, worst)

    def _sampled_piece(self, l, h, cands):
        """Best candidate by the gaps at the piece's sampled points with the pair fixed on the
        piece ("uncovered" where none meets the target at all of them)."""
        run, bound = self.run, self.run.bound
        t0 = time.perf_counter()
        best = None
        pts = [x for x, _ in claimed_on("sampled", l, h)]  # what verify re-checks
        for pair, anchors in cands(l, h):
            p, d = run.problem.restore(*pair, l, h)
            goals = [run.target((p, d), x, x) for x in pts]
            gaps = [stored_bound(bound.gap(p, d, x), goal) for x, goal in zip(pts, goals)]
            g = max(gaps)
            ok = not bound.check(p, d, l, h) and all(gx <= goal for gx, goal in zip(gaps, goals))
            if best is None or (ok, -g) > (best[0], -best[1]):
                best = (ok, g, p, d, anchors)
        run.certify_s += time.perf_counter() - t0
        ok, g, p, d, anchors = best
        return PathPiece(l, h, p, d, float(g), "sampled" if ok else "uncovered", anchors)


def _stalled(ratio, before):
    """Whether a refused piece's best bound-to-target ``ratio`` is not below :data:`_PROGRESS`
    times ``before``, the ratio of the wider piece refused just before it (None: unknown)."""
    return ratio is not None and before is not None and ratio >= _PROGRESS * before
