"""The generic ε-path driver.

A strategy decides where to make exact solves ("anchors"); the certifier then covers the
interval with pieces, each holding one fixed pair restored from the anchors, and splits a
piece (in the parameter's scale) until its gap bound is at most ε.  A problem without an
interval bound yields "sampled" pieces; nothing is ever called certified without a bound
valid for every parameter value of the piece.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .certificate import stored_bound
from .data import data_sha256
from .path import KERNEL, Path, PathPiece
from .problem import InputError, from_scale, scale_mid, to_scale

__all__ = ["approximate_path", "STRATEGIES", "EpsilonTooSmallError"]

#: Strategy names accepted by :func:`approximate_path`.
STRATEGIES = ("paper",)

# Binary search of the paper strategy: stop when the bracket is this fraction of the whole
# interval (in the parameter's scale); 2**-14 of ln(2**20) is ~1e-3, i.e. 0.1 % in t.
_SEARCH_TOL = 2.0**-14
# Certifier: give up splitting a piece below this fraction of the interval (in scale) and
# label it "sampled" (or "uncovered"); 2**-30 is far below any piece a bound needs.
_MIN_PIECE = 2.0**-30
# ... and stop splitting a piece whose middle no anchor covers once it is below this fraction:
# uncovered regions are then located to ~0.4 % of the interval without splitting them to dust.
_RESOLUTION = 2.0**-8
# An anchor whose own gap exceeds this fraction of eps cannot carry a path: eps is too small
# for what the exact solves certify.
_ANCHOR_SHARE = 0.5


class EpsilonTooSmallError(ValueError):
    """ε is below the duality gap the exact solves themselves achieve."""


@dataclass
class _Run:
    problem: object
    eps: float
    relative: bool
    lo: float
    hi: float
    solver: object
    max_solves: int
    progress: object
    anchors: dict = field(default_factory=dict)  # t -> (primal, dual)
    solve_s: float = 0.0
    certify_s: float = 0.0

    # -------------------------------------------------------------- scale helpers
    def s(self, t):
        return float(to_scale(t, self.problem.scale))

    def t(self, s):
        return float(from_scale(s, self.problem.scale))

    def mid(self, a, b):
        return scale_mid(a, b, self.problem.scale)

    # -------------------------------------------------------------- exact solves
    def exact(self, t):
        if t in self.anchors:
            return self.anchors[t]
        if len(self.anchors) >= self.max_solves:
            raise RuntimeError(f"more than max_solves={self.max_solves} exact solves needed")
        t0 = time.perf_counter()
        pair = self.problem.solve(t, solver=self.solver)
        self.solve_s += time.perf_counter() - t0
        g = self.point_bound(pair, t)
        target = self.target(pair, t, t)
        if not g <= _ANCHOR_SHARE * target:
            raise EpsilonTooSmallError(
                f"eps = {self.eps:g} is too small: the exact solve at t = {t:.6g} only certifies a gap "
                f"of {g:.3g}; use eps >= {g / _ANCHOR_SHARE / (target / self.eps if target > 0 else 1):.3g}"
            )
        self.anchors[t] = pair
        return pair

    # -------------------------------------------------------------- gaps
    def target(self, pair, lo, hi):
        """The largest admissible gap bound on [lo, hi]: eps, or eps times a lower bound on
        the optimal value there (relative mode)."""
        if not self.relative:
            return self.eps
        # 1e-9 below what a verifier recomputes, in case its BLAS rounds the last bits differently
        return self.eps * max(0.0, self.problem.dual_lower_bound(pair[1], lo, hi)) * (1 - 1e-9)

    def point_bound(self, pair, tau):
        t0 = time.perf_counter()
        p, d = self.problem.restore(pair[0], pair[1], tau)
        g = self.problem.gap_bound(p, d, tau)
        self.certify_s += time.perf_counter() - t0
        return g

    def point_ok(self, pair, tau):
        t0 = time.perf_counter()
        p, d = self.problem.restore(pair[0], pair[1], tau)
        ok = self.problem.gap_bound(p, d, tau) <= self.target((p, d), tau, tau)
        self.certify_s += time.perf_counter() - t0
        return ok

    # -------------------------------------------------------------- certifier
    def cover(self, lo, hi, anchor_ts):
        """Pieces covering [lo, hi] with pairs restored from the anchors at ``anchor_ts``."""
        pieces = []
        stack = [(lo, hi)]
        min_width = _MIN_PIECE * (self.s(self.hi) - self.s(self.lo))
        resolution = _RESOLUTION * (self.s(self.hi) - self.s(self.lo))
        while stack:
            l, h = stack.pop()
            piece = self._try_piece(l, h, anchor_ts)
            if piece is not None:
                pieces.append(piece)
                continue
            m = self.mid(l, h)
            width = self.s(h) - self.s(l)
            if width > min_width and l < m < h and (width > resolution or self._any_point_ok(m, anchor_ts)):
                stack += [(m, h), (l, m)]
                continue
            # no bound certifies [l, h] and no anchor is eps-good at its middle: give up here
            # (sampled or uncovered) rather than splitting an uncoverable region to dust.
            pieces.append(self._sampled_piece(l, h, anchor_ts))
        return pieces

    def _any_point_ok(self, tau, anchor_ts):
        return any(self.point_ok(self.anchors[ta], tau) for ta in anchor_ts)

    def _try_piece(self, l, h, anchor_ts):
        problem = self.problem
        if not problem.has_interval_bound and l != h:
            return None
        t0 = time.perf_counter()
        try:
            # nearest anchor first: its pair is usually the one that certifies
            for ta in sorted(anchor_ts, key=lambda a: abs(self.s(a) - 0.5 * (self.s(l) + self.s(h)))):
                p, d = problem.restore(*self.anchors[ta], l, h)
                bound = stored_bound(problem.gap_bound(p, d, l, h))
                if bound <= self.target((p, d), l, h):
                    return PathPiece(l, h, p, d, float(bound), "certified", (ta,))
            return None
        finally:
            self.certify_s += time.perf_counter() - t0

    def _sampled_piece(self, l, h, anchor_ts):
        """Best anchor by the gaps at l, middle and h with the pair fixed on the piece."""
        problem = self.problem
        t0 = time.perf_counter()
        best = None
        for ta in anchor_ts:
            if problem.has_interval_bound or l == h:
                p, d = problem.restore(*self.anchors[ta], l, h)
            else:
                p, d = problem.restore(*self.anchors[ta], self.mid(l, h))
            pts = sorted({l, self.mid(l, h), h})
            g = max(stored_bound(problem.gap_bound(p, d, x)) for x in pts)
            ok = all(g <= self.target((p, d), x, x) for x in pts)
            if best is None or (ok, -g) > (best[0], -best[1]):
                best = (ok, g, p, d, ta)
        self.certify_s += time.perf_counter() - t0
        ok, g, p, d, ta = best
        return PathPiece(l, h, p, d, float(g), "sampled" if ok else "uncovered", (ta,))

    # -------------------------------------------------------------- strategies
    def paper(self):
        """Giesen et al.: exact solve, binary search forward for the furthest point whose
        restored gap is <= eps, next exact solve there."""
        tol = _SEARCH_TOL * (self.s(self.hi) - self.s(self.lo))
        t = self.lo
        ts = [t]
        self.exact(t)
        while t < self.hi:
            pair = self.anchors[t]
            a, b = self.s(t), self.s(self.hi)
            while b - a > tol:  # bisection in the parameter's scale, as the paper's code
                m = 0.5 * (a + b)
                if self.point_ok(pair, self.t(m)):
                    a = m
                else:
                    b = m
            if b == self.s(self.hi) and self.point_ok(pair, self.hi):
                nxt = self.hi
            else:
                nxt = self.t(a)
                if nxt <= t:  # the restored pair fails at once: step by the tolerance
                    nxt = min(self.t(self.s(t) + tol), self.hi)
            if nxt < self.hi:
                self.exact(nxt)
            ts.append(nxt)
            self._advance(t, nxt)
            t = nxt
        pieces = []
        for a, b in zip(ts[:-1], ts[1:]):
            pieces += self.cover(a, b, [x for x in (a, b) if x in self.anchors])
        return pieces

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


def approximate_path(problem, eps, interval=None, *, relative=False, strategy="paper", solver=None,
                     progress=False, max_solves=10_000, meta=None):
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
        One of :data:`STRATEGIES`.
    solver : sequence of str, optional
        Exact-solver chain (default ``("clarabel", "scs")``).
    progress : bool
        Show a progress bar (needs the ``progress`` extra, tqdm).
    max_solves : int
        Safety limit on exact solves.
    meta : dict, optional
        Extra provenance for the certificate (data file, preprocessing, ...).

    Returns
    -------
    Path
    """
    lo, hi = _check_args(problem, eps, interval)
    if strategy not in STRATEGIES:
        import difflib

        close = difflib.get_close_matches(str(strategy), STRATEGIES, n=1)
        raise InputError(f"unknown strategy {strategy!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                         + f" (choose from {', '.join(STRATEGIES)})")
    t0 = time.perf_counter()
    bar = _progress_bar(progress, float(to_scale(hi, problem.scale) - to_scale(lo, problem.scale)), problem.name)
    run = _Run(problem, float(eps), bool(relative), lo, hi, solver, max_solves, bar)
    try:
        pieces = getattr(run, strategy.replace("-", "_"))()
    finally:
        if bar is not None:
            bar.close()
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
        exact_solves=len(run.anchors),
        solve_points=tuple(sorted(run.anchors)),
        strategy=strategy,
        wall_s=time.perf_counter() - t0,
        solve_s=run.solve_s,
        certify_s=run.certify_s,
        meta=info,
    )
