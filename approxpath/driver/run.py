"""The state of one path computation: its settings, the exact solves made so far ("anchors"),
the budget, the target a piece must meet, timings and progress.

Every parameter is a positive scale: the driver searches in log t (:meth:`Run.s`, :meth:`Run.t`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..certificate.verify import target
from ..errors import BudgetExceededError, EpsilonTooSmallError, InputError, SolverError
from ..numerics import STORED_PAD, log_mid

__all__ = ["Budget", "Run"]

# Where every solver fails at a point, this many other points are tried before a region is
# left uncovered.
_SOLVE_RETRIES = 4
# An anchor whose own gap exceeds this fraction of eps cannot carry a path: eps is too small
# for what the exact solves certify.
_ANCHOR_SHARE = 0.5


@dataclass(frozen=True)
class Budget:
    """Limits of one path (see :func:`approxpath.approximate_path`)."""

    max_solves: int
    max_pieces: int
    solve_time_limit: float | None


class Run:
    """One path computation on ``[lo, hi]``.

    Parameters
    ----------
    problem : approxpath.Problem
    eps : float
    relative : bool
    lo, hi : float
        The part of the interval this run covers.
    solver : tuple of str or None
        Exact solvers to try (None: the problem's backends).
    budget : Budget
    progress : object, optional
        With ``update(amount)`` in units of log t (a tqdm bar).
    anchors : dict, optional
        Exact solves already made: parameter value -> pair.
    """

    def __init__(self, problem, eps, relative, lo, hi, solver, budget, progress=None, anchors=None):
        self.problem, self.bound = problem, problem.bound
        self.eps, self.relative, self.lo, self.hi = eps, relative, lo, hi
        self.solver, self.budget, self.progress = solver, budget, progress
        self.anchors = dict(anchors or {})
        self.failed = {}  # t -> why no solver produced a pair there
        self.solve_s = self.certify_s = 0.0
        self.n_pieces = 0  # pieces made so far (against budget.max_pieces)
        self.checkpoint = None  # a Checkpoint, or None

    # -------------------------------------------------------------- the log scale
    @staticmethod
    def s(t):
        """The coordinate the driver searches in: log t."""
        return float(np.log(t))

    @staticmethod
    def t(s):
        """Inverse of :meth:`s`."""
        return float(np.exp(s))

    @staticmethod
    def mid(a, b):
        """The middle of ``[a, b]`` in log scale."""
        return log_mid(a, b)

    def ahead(self, a, ds):
        """The point ``ds`` beyond ``a`` in log scale, at least the next float after ``a`` (a step
        below the resolution of the floats near ``a`` would not move) and at most the end."""
        return min(max(self.t(self.s(a) + ds), math.nextafter(a, math.inf)), self.hi)

    @property
    def width(self):
        """The whole interval's width in log scale."""
        return self.s(self.hi) - self.s(self.lo)

    # -------------------------------------------------------------- exact solves
    def exact(self, t):
        """The pair of the exact solve at ``t`` (made now if new)."""
        if t in self.anchors:
            return self.anchors[t]
        if len(self.anchors) >= self.budget.max_solves:
            raise BudgetExceededError(
                f"more than max_solves={self.budget.max_solves} exact solves needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"(eps = {self.eps:g}): raise max_solves, use a larger eps or relative=True, or a narrower interval")
        t0 = time.perf_counter()
        pair = self.problem.solve(t, solver=self.solver, time_limit=self.budget.solve_time_limit)
        self.solve_s += time.perf_counter() - t0
        g, goal = self.point(pair, t)
        if self.relative and not goal > 0:
            raise InputError(
                f"relative=True measures eps against the optimal value, which is not proven positive at "
                f"t = {t:.6g} (it is 0 for targets y that are all 0 or, for klasso, constant): use an absolute eps")
        if not g <= _ANCHOR_SHARE * goal:
            raise EpsilonTooSmallError(
                f"eps = {self.eps:g} is too small: the exact solve at t = {t:.6g} only certifies a gap "
                f"of {g:.3g}; use eps >= {g / _ANCHOR_SHARE / (goal / self.eps if goal > 0 else 1):.3g}"
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

    def first_solvable(self, a, b):
        """The first point of a geometric march from a to b (in log scale) where a solve works."""
        for k in range(1, _SOLVE_RETRIES + 1):
            t = self.t(self.s(a) + (self.s(b) - self.s(a)) * 2.0 ** (k - _SOLVE_RETRIES))
            if self.solvable(t) is not None:
                return t
        return None

    # -------------------------------------------------------------- gaps
    def target(self, pair, lo, hi):
        """The largest admissible gap bound on [lo, hi] (:func:`~approxpath.certificate.target`,
        aimed :data:`~approxpath.numerics.STORED_PAD` below what a verifier recomputes)."""
        return target(self.bound, pair[1], lo, hi, self.eps, self.relative, pad=STORED_PAD)

    def point(self, pair, tau):
        """``(gap bound, admissible bound)`` of ``pair`` restored at the point ``tau``."""
        t0 = time.perf_counter()
        restored = self.problem.restore(*pair, tau)
        out = self.bound.gap(*restored, tau), self.target(restored, tau, tau)
        self.certify_s += time.perf_counter() - t0
        return out

    def point_ok(self, pair, tau, share=1.0):
        """Whether ``pair`` restored at ``tau`` meets ``share`` of the target there."""
        g, goal = self.point(pair, tau)
        return g <= share * goal

    # -------------------------------------------------------------- bookkeeping
    def count(self, n):
        """Account for ``n`` more pieces; stop the run once there are more than max_pieces."""
        self.n_pieces += n
        if self.n_pieces > self.budget.max_pieces:
            raise BudgetExceededError(
                f"more than max_pieces={self.budget.max_pieces} pieces needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"(eps = {self.eps:g}): the gap moves faster than eps allows (an absolute eps on an objective "
                "that grows with t, e.g. the SVM over C, needs relative=True); use a larger eps, relative=True, "
                "a narrower interval, or raise max_pieces")

    def advance(self, a, b):
        """Report ``[a, b]`` as done to the progress bar."""
        if self.progress is not None:
            self.progress.update(self.s(b) - self.s(a))

    def save(self, pieces, state):
        """Write the finished work to the checkpoint (if any)."""
        if self.checkpoint is not None:
            self.checkpoint.save(self, pieces, state)
