"""The search side of surfaces: certified pieces of bandwidth paths at given weights, with the
exact solves warm-started from the nearest solve at any weight, and their bounds on cells.

A surface is tiled by *strips* ``[w_lo, w_hi] x [t_a, t_b]``, each holding the pieces of one
bandwidth path computed at the strip's smallest weight ``w_lo`` (the driver's interpolating
strategy: moving pairs, exact solves placed adaptively); a piece ``[t_1, t_2]`` of the path is
the cell ``[t_1, t_2] x [w_lo, w_hi]`` with the bound of :class:`~approxpath.cells.CellBound`.
:class:`Engine` makes those paths and bounds for one or several problems (the folds of a
cross-validation) on shared kernels.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..cells import CellBound
from ..driver import MAX_PIECES
from ..driver.run import Budget, Run
from ..driver.strategies import STRATEGIES
from ..errors import BudgetExceededError, EpsilonTooSmallError, InputError
from ..validate import problem_instance

__all__ = ["Engine", "Piece", "check_bandwidth_problem", "check_weight_range", "cut_weight"]


@dataclass(frozen=True, repr=False)
class Piece:
    """A piece of a bandwidth path at the weight ``w``: the pair certified on ``[lo, hi]`` at
    ``w`` with ``gap`` (the path's bound there) and where it came from.

    Attributes
    ----------
    lo, hi : float
    primal, dual
        The stored pair (points, or :class:`~approxpath.moving.Moving` ones).
    w : float
        The weight the pair is feasible at (and every larger one).
    gap : float
        Its bound at ``w`` over ``[lo, hi]``.
    kind : str
        ``certified`` or ``uncovered`` (no exact solve gave a pair there).
    anchors : tuple of (float, float)
        ``(t, w)`` of the exact solves the pair was built from.
    """

    lo: float
    hi: float
    primal: object
    dual: object
    w: float
    gap: float
    kind: str
    anchors: tuple = field(default=())

    def cut(self, lo, hi):
        """The same pair on the part ``[lo, hi]`` of the piece (its bound there is at most
        :attr:`gap`)."""
        return Piece(max(lo, self.lo), min(hi, self.hi), self.primal, self.dual, self.w, self.gap, self.kind,
                     self.anchors)


def cut_weight(w_lo, w_hi, g_lo, g_hi, goal):
    """A guess of the weight in ``(w_lo, w_hi)`` up to which a cell's bound stays below ``goal``,
    given its values ``g_lo`` at ``w_lo`` and ``g_hi > goal`` at ``w_hi``: where the parabola
    :math:`g_{lo} + (g_{hi} - g_{lo})\\,((w - w_{lo})/(w_{hi} - w_{lo}))^2` reaches it (a pair
    optimal at ``w_lo`` has a gap quadratic in the weight when its dual grows with the weight,
    linear when it is held fixed: the caller checks the guess and cuts again below it).  None
    when ``g_lo >= goal``.  That is :math:`w_{lo} + (w_{hi} - w_{lo}) \\sqrt{(goal - g_{lo}) / (g_{hi} - g_{lo})}`
    (``w_lo < w_hi``); None unless ``g_hi > goal > g_lo`` with ``g_hi`` finite, or where the root rounds
    to an end."""
    if not (g_hi > goal > g_lo) or not math.isfinite(g_hi):
        return None
    w = w_lo + (w_hi - w_lo) * math.sqrt((goal - g_lo) / (g_hi - g_lo))
    return w if w_lo < w < w_hi else None


class _Solves(dict):
    """One problem's exact solves, ``(t, w) -> pair``, with the logs of their keys kept in an array
    for :meth:`nearest` (a search makes thousands of solves and asks for the nearest one before
    each new solve: one vectorized pass over them, where a Python loop took most of a search's
    time past a few thousand).  Solves are only added (``d[key] = pair``): what would remove one or
    bypass :meth:`__setitem__` is refused."""

    def __init__(self):
        super().__init__()
        # (room for 16 solves at first, doubled when full: appends in amortized constant time)
        self._logs = np.empty((16, 2))

    def _refused(self, *args, **kw):
        raise TypeError("an engine's solves are only added, one key at a time")

    update = setdefault = pop = popitem = clear = __delitem__ = __ior__ = _refused

    def __setitem__(self, key, pair):
        if key not in self:  # (a key solved again keeps its place, and its row of logs)
            if len(self) == len(self._logs):
                self._logs = np.concatenate([self._logs, np.empty_like(self._logs)])
            self._logs[len(self)] = (math.log(key[0]), math.log(key[1]))
        super().__setitem__(key, pair)

    def __reduce__(self):  # (pickled as its items, each put back through __setitem__: the logs follow)
        return type(self), (), None, None, iter(self.items())

    def nearest(self, log_t, log_w):
        """``(pair, distance)`` of the first solve (in the order they came) with the smallest
        ``|log t - log t'| + |log w - log w'|``; ``(None, None)`` when there is none."""
        if not self:
            return None, None
        logs = self._logs[:len(self)]
        d = np.abs(logs[:, 0] - log_t) + np.abs(logs[:, 1] - log_w)
        k = int(np.argmin(d))
        return next(itertools.islice(self.values(), k, None)), float(d[k])


class _WarmRun(Run):
    """A driver run whose exact solves start from the nearest exact solve at any weight:
    distance ``|log t - log t'| + |log w - log w'|`` (its own solves are at ``w``)."""

    def __init__(self, *args, solves, weight, **kw):
        super().__init__(*args, **kw)
        self._solves, self._log_w = solves, math.log(weight)

    def nearest(self, t):
        s = math.log(t)
        best, key = self._solves.nearest(s, self._log_w)
        for tt, pair in self.anchors.items():
            d = abs(math.log(tt) - s)
            if key is None or d < key:
                best, key = pair, d
        return best


def check_bandwidth_problem(problem):
    """:class:`InputError` unless ``problem`` (a problem instance) sweeps the bandwidth (a surface
    sets its weight): a kernel problem's (a plug-in's bound may sweep no kernel parameter)."""
    if getattr(problem_instance(problem), "sweep", None) is None:
        raise InputError(f"a surface sweeps a kernel problem's bandwidth and weight; {problem.name} has one path "
                         "parameter: use approximate_path or select")
    if not problem.sweep.along_bandwidth:
        raise InputError(f"a surface sweeps the bandwidth and {problem.bound.weight}: build {problem.name} with "
                         "parameter='bandwidth' (its weight is set per cell)")


def check_weight_range(problem, name, lo, hi):
    """:class:`InputError` naming ``name`` (the caller's: ``weights``, ``--weights``) when the
    range's lower end ``lo`` is at or below the weight double precision can tell from 0
    (:meth:`~approxpath.kernel_problem.KernelProblem.check_weights` of ``problem`` at ``lo``):
    refused at once, not after minutes of exact solves or cells with no bound.  The message starts
    with ``name`` and the range ``lo, hi``; ``problem`` is a bandwidth-path problem
    (:meth:`~approxpath.kernel_problem.KernelProblem.with_weight`)."""
    try:
        problem.with_weight(lo).check_weights(lo, hi)
    except InputError as exc:
        raise InputError(f"{name} = ({lo:g}, {hi:g}): {exc}") from None


class Engine:
    """Paths and cell bounds for one problem per fold, on weights chosen by the caller.

    Parameters
    ----------
    problems : list of KernelProblem
        Bandwidth-path problems (``parameter="bandwidth"``) whose bounds have cells
        (``weight_convex``); their own weights are irrelevant.
    solver : str or sequence of str, optional
        Exact solvers (the problem's backends by default).
    max_solves : int
        Exact solves allowed in all; past it :class:`BudgetExceededError`.
    """

    def __init__(self, problems, solver=None, max_solves=20_000):
        self.problems = list(problems)
        for p in self.problems:
            check_bandwidth_problem(p)
        from ..memory import check_problem_fits

        check_problem_fits(max(self.problems, key=lambda p: p.n))  # (the folds' paths, one at a time)
        self.solver = None if solver is None else tuple(self.problems[0].backend_names(solver))
        self.max_solves = int(max_solves)
        self._at = [{} for _ in self.problems]
        self.cells = [CellBound(p.bound, at=lambda w, k=k: self.problem_at(k, w).bound) for k, p in enumerate(self.problems)]
        self.solves = [_Solves() for _ in self.problems]  # (t, w) -> pair
        self.solve_s = self.certify_s = 0.0

    @property
    def n_solves(self):
        """Exact solves made so far (all folds)."""
        return sum(len(s) for s in self.solves)

    def problem_at(self, k, w):
        """Problem ``k`` at the weight ``w`` (one per weight, sharing the kernels)."""
        w = float(w)
        found = self._at[k].get(w)
        if found is None:
            found = self._at[k][w] = self.problems[k].with_weight(w)
        return found

    def path(self, k, w, lo, hi, eps, relative=False, share=1.0):
        """The pieces of a certified bandwidth path of problem ``k`` at the weight ``w`` over
        ``[lo, hi]`` with target ``share * eps`` (:class:`Piece`); an ε too small is named and
        advised in ``eps`` (the caller's)."""
        left = self.max_solves - self.n_solves
        if left <= 0:
            raise self._spent()
        problem = self.problem_at(k, w)
        what = f"the bandwidth path at {problem.bound.weight} = {w:.6g}"
        run = _WarmRun(problem, share * eps, relative, lo, hi, self.solver, Budget(left, MAX_PIECES, None),
                       solves=self.solves[k], weight=w, share=(share, what))
        try:
            pieces = STRATEGIES["interpolate"](run)(None)
        except BudgetExceededError as exc:  # the path's budget is what the engine has left
            if len(run.anchors) - len(run.reused) < left:
                raise
            raise self._spent() from exc
        except EpsilonTooSmallError:  # refused: its exact solves are still made, counted and kept
            self._record(k, w, run)
            raise
        self._record(k, w, run)
        pieces.sort(key=lambda p: p.lo)
        return [Piece(p.lo, p.hi, p.primal, p.dual, float(w), p.gap_bound, "uncovered" if p.kind == "uncovered"
                      else "certified", tuple((a, float(w)) for a in p.anchors)) for p in pieces]

    def _record(self, k, w, run):
        """Keep ``run``'s exact solves (problem ``k`` at the weight ``w``) and its times."""
        self.solve_s += run.solve_s
        self.certify_s += run.certify_s
        for t, pair in run.anchors.items():
            self.solves[k][(t, float(w))] = pair

    def _spent(self):
        which = " (every fold's surface together)" if len(self.problems) > 1 else ""
        return BudgetExceededError(f"more than max_solves={self.max_solves} exact solves needed{which}: raise "
                                   "max_solves, use a larger eps, or a smaller box")

    def cell_gap(self, k, piece, w_lo, w_hi):
        """The bound of ``piece``'s pair on the cell ``[piece.lo, piece.hi] x [w_lo, w_hi]``
        (``w_lo >= piece.w``): :meth:`~approxpath.cells.CellBound.gap`."""
        if piece.kind != "certified":
            return math.inf
        if w_hi == piece.w and w_lo == piece.w:
            return piece.gap
        # a weight near the largest float overflows the bound: inf (or NaN) is never within a goal, and
        # the strip is cut below it (numpy's warnings would only precede that)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.cells[k].gap(piece.primal, piece.dual, piece.lo, piece.hi, w_lo, w_hi)

    def target(self, k, piece, w_lo, w_hi, eps, relative):
        """The target of the cell (:meth:`~approxpath.cells.CellBound.target`)."""
        return self.cells[k].target(piece.dual, piece.lo, piece.hi, w_lo, w_hi, eps, relative)
