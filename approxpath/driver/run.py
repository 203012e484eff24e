"""The state of one path computation: its settings, the exact solves made so far ("anchors"),
the budget, the target a piece must meet, timings and progress.

Every parameter is a positive scale: the driver searches in log t (:meth:`Run.s`, :meth:`Run.t`).
The errors a run's bounds stop it with are :mod:`.bound_errors`'s (importable from here too).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..certificate.claims import target, weak_duality_violation
from ..errors import BudgetExceededError, EpsilonTooSmallError, InputError, SolverError
from ..numerics import STORED_PAD, log_mid, round_up
from ..progress import shown_name
from ..registry import built_in
from ..solvers import EXACT_GAP, at_exact_mark
from .bound_errors import NonFiniteBound, WeakDualityError, finite_delta, nan_cause

__all__ = ["Budget", "Run", "NonFiniteBound", "WeakDualityError", "finite_delta", "nan_cause"]

# Where every solver fails at a point, this many other points are tried before a region is
# left uncovered.
_SOLVE_RETRIES = 4
# An anchor whose own gap exceeds this fraction of eps cannot carry a path: eps is too small
# for what the exact solves certify.
_ANCHOR_SHARE = 0.5
# An exact solve is accepted once its gap is this fraction of the target at its point, even above
# the solvers' EXACT_GAP mark: it then takes at most 0.1 % of eps from the pieces around it.
_EXACT_SHARE = 1e-3
# The points where no solver produced a pair that a message names (the rest are counted).
_NAMED_FAILURES = 5


@dataclass(frozen=True)
class Budget:
    """Limits of one path (see :func:`approxpath.approximate_path`)."""

    max_solves: int
    max_pieces: int
    solve_time_limit: float | None


class _FiniteBound:
    """The problem's :class:`~approxpath.bound.Bound` for a run: every gap bound and dual floor it
    computes is checked, and a NaN stops the run at once naming the cause
    (:class:`NonFiniteBound`) instead of splitting pieces forever (NaN compares false with every
    target)."""

    def __init__(self, bound, problem):
        self._bound, self._problem = bound, problem

    def __getattr__(self, name):
        return getattr(self._bound, name)

    def gap(self, primal, dual, lo, hi=None):
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow ends as inf (not <= eps) or NaN (stops)
            g = self._checked(self._bound.gap(primal, dual, lo, hi), "gap bound", lo, hi)
        contradiction = weak_duality_violation(self._bound, g, dual, lo, hi)
        if contradiction:  # no eps can be met by a wrong dual's bounds: stop, naming the declaration
            refused = self._bound.errors(primal, dual, lo, lo if hi is None else hi)
            if refused:  # (the driver reads a restored pair's gap alone: errors() is asked here, once it matters)
                raise WeakDualityError(f"{self._problem.name}: the gap bound on {_where(lo, hi, self._problem)} is "
                                       f"{g:.6g} < 0 for a pair its Bound's errors() refuses ({refused[0]}): its "
                                       "restore() returns pairs that are not feasible")
            raise WeakDualityError(f"{self._problem.name}: {contradiction}")
        return g

    def dual_floor(self, dual, lo, hi=None):
        with np.errstate(over="ignore", invalid="ignore"):  # as in gap: NaN stops the run, naming the cause
            return self._checked(self._bound.dual_floor(dual, lo, hi), "lower bound of the optimal value", lo, hi)

    def _checked(self, value, what, lo, hi):
        if value != value:
            raise NonFiniteBound(f"{self._problem.name}: the {what} on {_where(lo, hi, self._problem)} is NaN: "
                                 f"{nan_cause(self._problem, lo, hi)}")
        return value


def _where(lo, hi, problem):
    return f"{shown_name(problem.parameter)} = {lo:.6g}" if hi is None or hi == lo else f"[{lo:.6g}, {hi:.6g}]"


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
        With ``update_to(t)``: everything up to ``t`` is done (a
        :class:`~approxpath.progress.PathBar`).
    anchors : dict, optional
        Exact solves already made: parameter value -> pair.
    seeds : dict, optional
        Exact solves of the same problem made by an earlier run (parameter value -> pair, e.g.
        at a larger ε): used where a strategy asks for that point (:meth:`exact`, if the pair
        meets this run's target there; not counted as a solve of this run), and
        :meth:`next_seed` offers them as segment ends.
    share : (float, str), optional
        ``(s, what)``: this run is ``what`` (e.g. "the bandwidth path at lam = 0.5"), given the
        share ``s`` of the caller's ε (``eps`` is ``s`` times it).  Messages about ε then name
        and advise the caller's ε (every need is linear in ``eps``, absolute or relative).
    """

    def __init__(self, problem, eps, relative, lo, hi, solver, budget, progress=None, anchors=None, seeds=None,
                 share=(1.0, "")):
        self.problem, self.bound = problem, _FiniteBound(problem.bound, problem)
        self.eps, self.relative, self.lo, self.hi = eps, relative, lo, hi
        self.share = share
        self.solver, self.budget, self.progress = solver, budget, progress
        self.anchors = dict(anchors or {})
        self.seeds = {t: pair for t, pair in (seeds or {}).items() if lo <= t <= hi and t not in self.anchors}
        self.reused = set()  # seeds taken as anchors (not solves of this run)
        self.remote_solves = []  # where segment tasks elsewhere (workers) made exact solves, so far
        self.stored = {}  # t -> pair of an interrupted run's exact solve (a checkpoint), used when asked for
        self.failed = {}  # t -> why no solver produced a pair there
        self.solve_s = self.certify_s = 0.0
        self.n_pieces = 0  # pieces made so far (against budget.max_pieces)
        self.checkpoint = None  # a Checkpoint, or None
        self._finished = ([], {}, [])  # the strategy's pieces, state and exact solves at its last save

    def failures_named(self, skip=0):
        """The points where no solver produced a pair, in order and less the first ``skip``, as a
        message names them: the first :data:`_NAMED_FAILURES`, then "..."."""
        ts = sorted(self.failed)[skip:]
        return ", ".join(f"{t:.6g}" for t in ts[:_NAMED_FAILURES]) + (", ..." if ts[_NAMED_FAILURES:] else "")

    # -------------------------------------------------------------- the log scale
    @staticmethod
    def s(t):
        """The coordinate the driver searches in: log t."""
        return float(np.log(t))

    @staticmethod
    def t(s):
        """Inverse of :meth:`s` (inf past the largest float: :meth:`ahead` clips it to the end)."""
        with np.errstate(over="ignore"):
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
    def nearest(self, t):
        """The pair of the exact solve nearest to ``t`` in log scale (a warm start), or None."""
        if not self.anchors:
            return None
        return self.anchors[min(self.anchors, key=lambda a: (abs(self.s(a) - self.s(t)), a))]

    def exact(self, t):
        """The pair of the exact solve at ``t`` (made now if new; a seed's if it meets the target)."""
        if t in self.anchors:
            return self.anchors[t]
        seed = self.seeds.pop(t, None)
        if seed is not None:
            g, goal = self.point(seed, t)
            if g <= _ANCHOR_SHARE * goal:
                self.anchors[t] = seed
                self.reused.add(t)
                return seed
        if len(self.anchors) - len(self.reused) >= self.budget.max_solves:
            fix = "use a larger eps" + ("" if self.relative else " or relative=True")
            exc = BudgetExceededError(
                f"more than max_solves={self.budget.max_solves} exact solves needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"({self._eps_text()}): raise max_solves, {fix}, or a narrower interval")
            # (a selection shares its solves among paths: max_pieces is another stop)
            exc.limit, exc.budget = "max_solves", self.budget.max_solves
            raise exc
        stored = t in self.stored
        if stored:  # an interrupted run solved here: the same pair, bit for bit
            pair = self.stored.pop(t)
        else:
            t0 = time.perf_counter()
            pair = self.problem.solve(t, solver=self.solver, time_limit=self.budget.solve_time_limit,
                                      warm=self.nearest(t), enough=lambda p: _EXACT_SHARE * self.target(p, t, t),
                                      need=lambda p: _ANCHOR_SHARE * self.target(p, t, t))
            self.solve_s += time.perf_counter() - t0
        g, goal = self.point(pair, t)
        if self.relative and not goal > 0:
            lower = f"the exact solve's dual objective there, its proven lower bound, is {goal / self.eps:.3g}"
            # (a solver stopping short, libSVM at its iteration limit at C = 1e10, read as targets all 0)
            why = (f"{lower}; the optimum is 0 where the zero model is optimal, e.g. targets y all 0"
                   if at_exact_mark(self.problem, pair, t, g) else
                   f"the best pair the solvers found there is not optimal: its gap bound is {g:.3g}, and {lower}")
            raise InputError(f"relative=True measures eps against the optimal value, which is not proven positive "
                             f"at {shown_name(self.problem.parameter)} = {t:.6g} ({why}): use an absolute eps")
        if not g <= _ANCHOR_SHARE * goal and stored:  # (it passed this check when it was made and saved)
            raise InputError(f"the checkpoint's exact solve at {shown_name(self.problem.parameter)} = {t:.6g} "
                             f"certifies a gap of {g:.3g}, above the {_ANCHOR_SHARE * goal:.3g} its run allows: "
                             "the file was edited or damaged, or its solve is rounded otherwise here (another "
                             "machine or device); start a new run with another checkpoint")
        if not g <= _ANCHOR_SHARE * goal:
            why = self._too_small(g, goal, t)
            if not math.isfinite(g):  # (no eps helps: say what makes a gap bound infinite)
                why = self._not_finite(pair, g, t)
            elif not at_exact_mark(self.problem, pair, t, g):  # (no eps makes it optimal: say what else might)
                why += (f" (the best pair the solvers found there is not optimal: its gap is above {EXACT_GAP:g} of "
                        "the objective, as a solver stopping short, a dual that is not the problem's tight dual, "
                        "or a restore() that moves an optimal pair away from the optimum leaves it)")
            exc = EpsilonTooSmallError(f"{self._eps_text()} {'is too small' if math.isfinite(g) else 'cannot be met'}: "
                                       f"{why}")
            # (a selection and an estimator word their own stop from these; ``needed``: the
            # absolute eps, of the caller's, that would carry the solve)
            exc.t, exc.gap, exc.allowed, exc.needed = t, g, _ANCHOR_SHARE * goal, g / _ANCHOR_SHARE / self.share[0]
            raise exc
        self.anchors[t] = pair
        if self.checkpoint is not None:
            self.checkpoint.save(self, *self._finished)
        return pair

    def _not_finite(self, pair, g, t):
        """Why the exact solve's ``pair`` at ``t`` has the gap bound ``g`` (inf or NaN): the pair
        restored there is infeasible (the first of the Bound's ``check`` messages), or the Bound's
        ``gap`` is not finite on a feasible pair."""
        name, errors = self.problem.name, self.bound.check(*self.problem.restore(*pair, t), t, t)
        cause = (f"{name}'s restore() leaves it infeasible there ({errors[0]})" if errors else
                 f"{name}'s Bound.gap() is not finite on it (the pair is feasible by the Bound's errors())")
        return (f"the exact solve's pair at {shown_name(self.problem.parameter)} = {t:.6g} has a gap bound of {g}: "
                f"{cause}; no eps helps (approxpath.testing.check_problem tests a problem's maps)")

    def _eps_text(self):
        """``"eps = 0.1"`` (``relative``), in the caller's ε: with a :attr:`share`, what gets which
        share of it."""
        s, what = self.share
        text = f"eps = {self.eps / s:g}" + (" relative" if self.relative else "")
        return text if s == 1.0 else f"{text} ({what} gets {s:g} of it)"

    def _advise(self, need):
        """``"eps >= x"``: the caller's ε that carries a need of ``need`` in this run's."""
        return f"eps >= {round_up(need / self.share[0]):.3g}"

    def _too_small(self, g, goal, t):
        """Why an exact solve with gap ``g`` cannot carry a path whose target there is ``goal``."""
        at = f"the exact solve at {shown_name(self.problem.parameter)} = {t:.6g}"
        if not self.relative:
            return f"{at} only certifies a gap of {g:.3g}; use {self._advise(g / _ANCHOR_SHARE)}"
        floor = goal / self.eps  # the proven lower bound of the optimal value there
        need = g / _ANCHOR_SHARE / floor
        if need >= 1:  # a relative eps of 100 % or more says nothing: the optimum is ~0 there
            return (f"{at} certifies a gap of {g:.3g} while the optimal value is only "
                    f"proven >= {floor:.3g} there (nearly 0), so no relative eps below 1 holds: use an absolute "
                    f"{self._advise(g / _ANCHOR_SHARE)}")
        return (f"{at} only certifies a gap of {g:.3g} (relative {g / floor:.3g} of the "
                f"optimal value's lower bound {floor:.3g}); use {self._advise(need)}")

    def below_floor(self, t, ratio):
        """The :class:`EpsilonTooSmallError` where no piece next to the exact solve at ``t``,
        however narrow, is certified: the best bound there is ``ratio`` times the target."""
        need = ratio * self.eps / _ANCHOR_SHARE
        at = f"no piece next to the exact solve at {shown_name(self.problem.parameter)} = {t:.6g} is certified"
        # (a plug-in's restoration may be the cause; a built-in's is tested with approxpath)
        plugin = not built_in(type(self.problem))
        restored = (f"the pairs {self.problem.name}'s restore() gives on pieces may not tend to the exact solve's "
                    "own as the pieces narrow (approxpath.testing.check_problem tests restorations)")
        if not math.isfinite(need):  # (a target of 0, or pairs infeasible on pieces: no eps helps)
            why = (f"{self._eps_text()} cannot be met: {at} however narrow (its target there is 0, or the pairs "
                   "restored on pieces next to it are infeasible or their bound is not finite"
                   f"{'; ' + restored if plugin else ''})")
        elif self.bound.interval_bound:
            why = (f"{self._eps_text()} is too small: {at} however narrow (the best bound there is {ratio:.3g} times "
                   "the target: its rounding allowances do not shrink with the piece"
                   f"{', or ' + restored if plugin else ''}); use {self._advise(need)}")
        else:  # (sampled pieces: their gaps at points, no allowance for a piece's width)
            why = (f"{self._eps_text()} is too small: {at} however narrow (the pairs restored on pieces next to it "
                   f"have gaps {ratio:.3g} times the target at the pieces' sampled points, while the exact solve's "
                   f"own pair meets it{': ' + restored if plugin else ''}); use {self._advise(need)}")
        exc = EpsilonTooSmallError(why)
        goal = self.target(self.anchors[t], t, t)
        exc.t, exc.gap, exc.allowed = t, ratio * goal, goal  # (as in exact)
        exc.needed = ratio * goal / _ANCHOR_SHARE / self.share[0]
        return exc

    def next_seed(self, a, b):
        """The first seed in ``(a, b]``, or None."""
        return min((x for x in self.seeds if a < x <= b), default=None)

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
            grows = shown_name(self.problem.parameter)
            why = "" if self.relative else (f" (an absolute eps on an objective that grows with {grows} needs "
                                            "relative=True, e.g. the SVM's over C)")
            fix = "use a larger eps" + ("" if self.relative else ", relative=True")
            exc = BudgetExceededError(
                f"more than max_pieces={self.budget.max_pieces} pieces needed on [{self.lo:.6g}, {self.hi:.6g}] "
                f"({self._eps_text()}): the gap moves faster than eps allows{why}; {fix}, "
                "a narrower interval, or raise max_pieces")
            exc.limit, exc.budget = "max_pieces", self.budget.max_pieces
            raise exc

    def advance(self, a, b):
        """Report everything up to ``b`` as done to the progress bar (``[a, b]`` was the last part)."""
        if self.progress is not None:
            self.progress.update_to(b, len(self.anchors) - len(self.reused) + len(self.remote_solves))

    def save(self, pieces, state):
        """Write the finished work to the checkpoint (if any): the strategy's ``pieces`` and
        ``state`` at the end of a segment (exact solves in between are saved with them, see
        :meth:`exact`)."""
        self._finished = (list(pieces), dict(state), sorted(self.anchors))  # copies: the lists grow on
        if self.checkpoint is not None:
            self.checkpoint.save(self, *self._finished)
