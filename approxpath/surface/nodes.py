"""A closed-form criterion chosen over both the bandwidth and the weight, with no path
(:func:`select_box`: kernel ridge's LOOCV, GCV and log marginal likelihood over (t, λ), whose
bound has ``box_enclosure``).

The box is tiled by cells in log-log whose corners are exact optima or points predicted between
optima along t (as over one parameter: :class:`~approxpath.selection.nodes.NodeClosedForm`, one
per λ).  A cell's enclosure comes from its two λ edges (``bound.box_edge``: each edge's pair and
gap bound, the facts at the optima around it; ``bound.box_enclosure``: facts monotone in both
parameters, the optimum's residual within a chord in λ).  Where the bound has ``spectrum`` the
optima at the first grid's bandwidths come from one eigendecomposition of the kernel each, shared
by every λ.  A branch and bound as over one parameter
(:mod:`approxpath.selection.branch`): the chosen point is the log-middle of the cell with the
best guaranteed value, enclosed there as a point; every cell that may beat it by more than
``tol`` is halved — across λ where its enclosure is more than twice as wide as its λ edges'
own (λ, not t, limits it), else across t.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict

import numpy as np

from ..driver.run import finite_delta
from ..errors import BudgetExceededError, SelectionInterrupted
from ..numerics import difference_up, log_mid, log_width
from ..selection.branch import oriented
from ..selection.nodes import NodeClosedForm
from .result import SurfaceSelection

__all__ = ["SIDES", "BoxNodes", "WeightNodes", "at_sides", "over_bandwidth", "select_box"]

# The first exact optima are at most this far apart in log t and in log λ (as over one parameter in
# t, two cells between optima; sinc n = 1000, LOOCV, λ in [1e-3, 1]: 0.7, 1.0 and 1.4 apart in log λ
# gave 493, 451 and 550 optima in the end; 0.5 in log t, 452).
_T_WIDTH, _W_WIDTH = 0.35, 1.0
# A cell is halved across λ where its enclosure is more than this many times as wide as either of
# its λ edges' own: the λ direction, not the bandwidth, limits it (the same run: 1.5, 2 and 3 gave
# 497, 451 and 518 optima).
_ACROSS = 2.0
# A cell halved at an optimum gets optima at its ends too when it is this many times narrower
# than the optima around it (its halves' facts would otherwise keep the far optima's values)
_NARROW = 8.0
# Spectra (two n x n arrays each) kept at most in this many bytes: the cells come sorted by
# bandwidth, so a spectrum is wanted again soon after it is computed or not for a round.
_SPECTRA_BYTES = 256 << 20
#: The box's sides (:func:`at_sides`).
SIDES = ("lower bandwidth", "upper bandwidth", "lower weight", "upper weight")
# Rounds of refinement and cells before the search stops with the δ it reached.
_MAX_ROUNDS = 200
_MAX_CELLS = 200_000


class BoxNodes:
    """The exact optima at each λ (a :class:`~approxpath.selection.nodes.NodeClosedForm` per λ:
    which points of its bandwidths are optima and which are predicted between them) and the λ
    edges of the cells: ``make(bound, t1, t2, cache, span)`` of the edge's level (default the
    bound's ``box_edge`` for the criterion ``name``)."""

    folds = 0

    def __init__(self, problem, name, sense, shared=(), share=1.0, inverse=True, make=None):
        self.problem, self.name, self.sense = problem, name, sense
        self._levels = {}
        self._edges = {}  # (t1, t2, w) -> the edge ``make`` built: neighbouring cells share their edges
        self._make = make or (lambda bound, *args: bound.box_edge(name, *args))
        # the kernel's spectrum at the bandwidths ``shared`` (where the bound has one), the last few
        # kept in ``share`` of _SPECTRA_BYTES; elsewhere, without ``inverse``, the optimum from the bound's
        # node_optimum (a Cholesky factor alone) where it has one
        self._shared = {float(t) for t in shared}
        self._spectra = OrderedDict()
        self._kept = max(2, int(share * _SPECTRA_BYTES) // (16 * problem.bound.n ** 2))
        self._inverse = inverse

    def start(self, ts, ws):
        """The exact optima at every bandwidth of ``ts`` and weight of ``ws`` (the first grid);
        the number of cells between neighbouring optima along t."""
        for t in ts:
            for w in ws:
                self.level(w).optimum(t)
        return self.level(ws[0]).between

    def level(self, w):
        """The :class:`~approxpath.selection.nodes.NodeClosedForm` at the weight ``w``: its exact
        optima from the kernel's spectrum at their bandwidths where the bound has ``spectrum``."""
        w = float(w)
        if w not in self._levels:
            problem = self.problem.with_weight(w)
            factor = self._factor(problem.bound) if hasattr(problem.bound, "spectrum") else \
                None if self._inverse else getattr(problem.bound, "node_optimum", None)
            self._levels[w] = NodeClosedForm(problem, self.name, self.sense, factor=factor)
        return self._levels[w]

    def _factor(self, bound):
        """The facts of ``bound``'s λ at a bandwidth, put into a cache, from the spectrum there."""
        def factor(t, cache):
            if float(t) in self._spectra or float(t) in self._shared:
                bound.spectral_facts(t, self._spectrum(t), cache)
            elif not self._inverse and hasattr(bound, "node_optimum"):
                bound.node_optimum(t, cache)
        return factor

    def _spectrum(self, t):
        t = float(t)
        if t in self._spectra:
            self._spectra.move_to_end(t)
        else:
            if len(self._spectra) >= self._kept:
                self._spectra.popitem(last=False)
            self._spectra[t] = self.problem.bound.spectrum(t)
        return self._spectra[t]

    @property
    def solves(self):
        return sum(level.solves for level in self._levels.values())

    def cell(self, t1, t2, w1, w2):
        """``(low, high, edge)``: the criterion (oriented: smaller is better) on the cell and the
        width of its wider λ edge's own enclosure."""
        first, second = self.edge(t1, t2, w1), self.edge(t1, t2, w2)
        low, high = oriented(self.sense, *self.level(w1).problem.bound.box_enclosure(first, second))
        return low, high, max(e.enclosure[1] - e.enclosure[0] for e in (first, second))

    def edge(self, t1, t2, w):
        """The λ edge over the bandwidths ``[t1, t2]`` at the weight ``w`` (kept until :meth:`keep`)."""
        key = (float(t1), float(t2), float(w))
        if key not in self._edges:
            level = self.level(w)
            for t in (t1, t2):
                level.optimum(t, predicted=True)  # (none where optima close around it predict it)
                # the kernel at each end, kept (one provider for every weight): the products of the
                # edges over the same bandwidths at the other weights read it (cells come sorted by t)
                level.problem.bound.gram(t)
            self._edges[key] = self._make(level.problem.bound, t1, t2, level.cache, level.span(t1, t2))
        return self._edges[key]

    def keep(self, cells):
        """Forget the edges no cell of ``cells`` (rows ``(t1, t2, w1, w2)``) has."""
        wanted = {(float(a), float(b), float(w)) for a, b, c, d in cells for w in (c, d)}
        self._edges = {k: v for k, v in self._edges.items() if k in wanted}

    def split(self, t1, t2, w1, w2):
        """Where to halve the cell across t: at the log-middle, an exact optimum at each of its λ
        edges unless that edge's optima predict it there (``NodeClosedForm.predicts``); then at
        the cell's ends too, so that each half's facts come from its own ends (from optima
        further out, the halves nearest them would never narrow)."""
        m = log_mid(t1, t2)
        for w in (w1, w2):
            level = self.level(w)
            if not level.predicts(t1, t2):
                level.optimum(m)
                left, right = level.span(t1, t2)
                if log_width(t1, t2) * _NARROW < log_width(left, right):
                    level.optimum(t1)
                    level.optimum(t2)
        return m

    def point(self, t, w):
        """The criterion (oriented) at the single point ``(t, w)``."""
        self.level(w).optimum(t)
        return oriented(self.sense, *self.edge(t, t, w).enclosure)


class WeightNodes:
    """A closed-form criterion over the weight λ at one bandwidth, with no path: the one-parameter
    search's criterion (``cover``) for a problem that sweeps λ.  Its cells are the box's cells
    of no width in t (:meth:`BoxNodes.cell`: enclosed from the exact optima at their two ends, the
    facts pinched between them), every optimum from the one spectrum at that bandwidth where
    the bound has ``spectrum``.  The first cover puts optima at most _W_WIDTH apart in log λ; a
    refined cell is halved at a new optimum."""

    def __init__(self, problem, name, sense):
        self.name, self.sense = name, sense
        self.t, over_t = over_bandwidth(problem)
        self._nodes = BoxNodes(over_t, name, sense, shared=(self.t,))

    @property
    def solves(self):
        return self._nodes.solves

    def cover(self, a, b):
        """``(edges, low, high, certified)`` on ``[a, b]`` (a point where ``a == b``)."""
        edges = _weight_cells(a, b)
        if a == b:
            lo, hi = np.array([self._nodes.point(self.t, a)]).T
        else:
            lo, hi, _ = np.array([self._nodes.cell(self.t, self.t, u, v) for u, v in zip(edges[:-1], edges[1:])]).T
        lo, hi = oriented(self.sense, lo, hi)  # back from the nodes' orientation (smaller is better)
        return edges, lo, hi, np.ones(lo.size, dtype=bool)


def over_bandwidth(problem):
    """``(t, problem over the bandwidth)``: a problem that sweeps λ at the bandwidth t, rebuilt
    from its options to sweep the bandwidth (at its λ), as the box's cells want it: a new problem of
    the same class on the same data with ``parameter="bandwidth"``."""
    options = problem.options()
    t = float(options.pop("bandwidth"))
    return t, type(problem)(problem.X, problem.y, **dict(options, parameter="bandwidth"))


def _weight_cells(a, b):
    """The ends of the cells a one-parameter search over λ gets on ``[a, b]``: optima at most
    _W_WIDTH apart in log λ (the first cover), else the halves (a refined cell), else the point."""
    if a == b:
        return np.array([a, a])
    return _spaced(a, b, _W_WIDTH) if log_width(a, b) > _W_WIDTH * (1 + 1e-9) else np.array([a, log_mid(a, b), b])


def select_box(problem, name, sense, bandwidths, weights, tol, max_solves, progress_bar, t0, nodes=None,
               t_width=_T_WIDTH):
    """Select ``(t, w)`` over ``bandwidths x weights`` by the closed-form criterion ``name``
    (module docstring), or by the criterion of ``nodes(shared)`` (a :class:`BoxNodes` or one
    like it, e.g. :class:`~.folds.BoxFolds`' validation loss; ``shared`` the first grid's
    bandwidths, at most ``t_width`` apart in log t); ``(selection, sides, reason, spent)``: the
    result, the sides of the box where the criterion may be better beyond (:func:`at_sides`), why
    the search stopped short of ``tol`` (None if it did not or the budget ran out) and the budget
    ``max_solves`` where it was spent (False otherwise).

    ``problem`` is over λ, its bound with ``box_edge`` and ``box_enclosure``; ``sense`` is ``"min"`` or
    ``"max"``; ``bandwidths, weights`` are the box's sides ``(lo, hi)``; ``max_solves`` counts the first
    grid's solves; ``progress_bar`` (or None) gets δ and the solves after each round
    (:func:`~approxpath.progress.delta_bar`); ``t0`` is ``time.perf_counter()`` at the caller's start
    (for ``wall_s``); ``nodes`` defaults to :class:`BoxNodes` of ``name``.  The selection's value and
    enclosures are in the criterion's own orientation; ``sides`` is a subset of :data:`SIDES`.

    Raises
    ------
    BudgetExceededError
        The first grid alone needs more than ``max_solves`` exact solves.
    SelectionInterrupted
        On ``KeyboardInterrupt`` after the first grid's round: the selection of the last round finished.
    """
    (t_lo, t_hi), (w_lo, w_hi) = bandwidths, weights
    ts = _spaced(t_lo, t_hi, t_width)  # exact optima at each first weight, cells between them
    ws = _spaced(w_lo, w_hi, _W_WIDTH)
    # (every first weight wants the optima at ts)
    nodes = BoxNodes(problem, name, sense, shared=ts) if nodes is None else nodes(ts)
    first = ts.size * ws.size * max(1, nodes.folds)  # (the first grid's optima, before any is solved)
    if first > max_solves:
        folds = f" x {nodes.folds} folds" if nodes.folds else ""
        raise BudgetExceededError(f"the first grid needs {first} exact solves ({ts.size} bandwidths x {ws.size} "
                                  f"weights{folds}), more than max_solves = {max_solves}: raise max_solves or choose "
                                  "over a smaller box")
    between = nodes.start(ts, ws)
    ts = np.exp(np.linspace(math.log(t_lo), math.log(t_hi), (ts.size - 1) * between + 1))
    ts[0], ts[-1] = t_lo, t_hi
    cells = np.array(_by_bandwidth([(a, b, c, d) for c, d in zip(ws[:-1], ws[1:]) for a, b in zip(ts[:-1], ts[1:])]))
    enclosed = np.array([nodes.cell(*cell) for cell in cells])
    rounds, reason, spent, state = 0, None, False, None

    def made(state):  # the SurfaceSelection of a finished round's state
        cells, enclosed, _, t, w, value, delta, rounds = state
        value, (lo, hi) = oriented(sense, *value), oriented(sense, *enclosed.T[:2])
        t_edges, w_edges, LO, HI = _overlay(cells, lo, hi)
        return SurfaceSelection(t=t, w=w, weight=problem.bound.weight, value=(float(value[0]), float(value[1])),
                                delta=float(delta), criterion=name, tol=float(tol), t_edges=t_edges, w_edges=w_edges,
                                lo=LO, hi=HI, exact_solves=nodes.solves, refinements=rounds, folds=nodes.folds,
                                cells=len(cells), wall_s=time.perf_counter() - t0, sense=sense, surfaces=False)

    try:
        while True:
            lo, hi, edge = enclosed.T
            i = int(np.argmin(hi))
            t, w = log_mid(cells[i, 0], cells[i, 1]), log_mid(cells[i, 2], cells[i, 3])
            plo, phi = nodes.point(t, w)
            value = (max(plo, lo[i]), min(phi, hi[i]))
            delta = finite_delta(difference_up(value[1], lo.min()), problem,
                                 {"bandwidth": (t_lo, t_hi), problem.bound.weight: (w_lo, w_hi)})
            state = (cells, enclosed, i, t, w, value, delta, rounds)  # (each round makes new arrays)
            if progress_bar is not None:
                progress_bar.update(delta, nodes.solves)
            if delta <= tol:
                break
            if nodes.solves >= max_solves:
                spent = max_solves
                break
            if rounds >= _MAX_ROUNDS or len(cells) > _MAX_CELLS:
                reason = f"the search's refinement limits were reached ({rounds} rounds, {len(cells)} cells)"
                break
            active = np.flatnonzero(lo < value[1] - tol)
            keep = np.setdiff1d(np.arange(len(cells)), active)
            new, parents = _refine(nodes, cells[active], enclosed[active])
            fresh = np.array([nodes.cell(*c) for c in new])
            # a half lies in its cell, whose enclosure holds on it as well: keep the intersection (a
            # half's own enclosure can be wider, and delta rose from 0.061 to 0.107 between rounds)
            parent = enclosed[active][parents]
            fresh[:, 0], fresh[:, 1] = np.maximum(fresh[:, 0], parent[:, 0]), np.minimum(fresh[:, 1], parent[:, 1])
            cells = np.concatenate([cells[keep], np.array(new)])
            enclosed = np.concatenate([enclosed[keep], fresh])
            # the edges of the new cells alone: a cell that cannot win now seldom can later (only if
            # the best upper bound rose), and an edge forgotten is computed again if wanted (n = 1000,
            # 5-fold CV: all cells' edges took 2.6 GB)
            nodes.keep(new)
            rounds += 1
    except KeyboardInterrupt as exc:
        if state is None:
            raise
        raise SelectionInterrupted(made(state)) from exc
    cells, enclosed, i, t, w, value, delta, rounds = state
    sides = at_sides(cells, enclosed[:, 1], value[1], i, (t_lo, t_hi, w_lo, w_hi))
    return made(state), sides, reason, spent


def at_sides(cells, hi, value, chosen, box):
    """The sides of ``box = (t_lo, t_hi, w_lo, w_hi)`` (:data:`SIDES`) where the criterion may be
    better beyond: the chosen cell ``cells[chosen]`` lies there, or a cell there is proven at least
    as good as the choice (its upper bound ``hi`` at most ``value``, the choice's; oriented: smaller
    is better).  ``cells``: rows ``(t1, t2, w1, w2)``, shape (k, 4); ``hi``: shape (k,).  The
    sides are listed in the order of :data:`SIDES`."""
    t_lo, t_hi, w_lo, w_hi = box
    on = np.column_stack([cells[:, 0] <= t_lo, cells[:, 1] >= t_hi, cells[:, 2] <= w_lo, cells[:, 3] >= w_hi])
    flagged = on[chosen] | np.any(on & (np.asarray(hi) <= value)[:, None], axis=0)
    return [side for side, f in zip(SIDES, flagged) if f]


def _by_bandwidth(cells):
    """``cells`` sorted by their bandwidths, then weights: the edges over the same bandwidths at
    every weight one after the other, while the kernels at their ends are kept."""
    return sorted(cells, key=lambda c: (c[0], c[1], c[2], c[3]))


def _spaced(a, b, width):
    """Points from ``a`` to ``b`` (exactly) at most ``width`` apart in log scale, evenly."""
    k = max(1, math.ceil(log_width(a, b) / width))
    x = np.exp(np.linspace(math.log(a), math.log(b), k + 1))
    x[0], x[-1] = a, b
    return x


def _refine(nodes, cells, enclosed):
    """The halves of ``cells`` (rows ``(t1, t2, w1, w2)``), sorted by bandwidth: across λ where
    a cell's enclosure is more than _ACROSS times as wide as its λ edges' (``enclosed`` rows
    ``(low, high, edge)``), else across t (:meth:`BoxNodes.split`); and each half's cell (an
    index into ``cells``)."""
    across = (enclosed[:, 1] - enclosed[:, 0] > _ACROSS * enclosed[:, 2]) | ~(cells[:, 1] > cells[:, 0])
    new = []
    for k, ((t1, t2, w1, w2), by_weight) in enumerate(zip(cells, across)):
        if by_weight:
            m = log_mid(w1, w2)
            new += [(t1, t2, w1, m, k), (t1, t2, m, w2, k)]
        else:
            m = nodes.split(t1, t2, w1, w2)
            new += [(t1, m, w1, w2, k), (m, t2, w1, w2, k)]
    new = _by_bandwidth(new)
    return [c[:4] for c in new], np.array([c[4] for c in new], dtype=int)


def _overlay(cells, lo, hi):
    """``(t_edges, w_edges, LO, HI)``: the cells' enclosures (oriented back by the caller) on
    the grid of every edge; each grid rectangle lies in exactly one cell."""
    t_edges, w_edges = np.unique(cells[:, :2]), np.unique(cells[:, 2:])
    LO = np.full((w_edges.size - 1, t_edges.size - 1), np.nan)
    HI = LO.copy()
    covered = np.zeros(LO.shape, dtype=int)
    for (t1, t2, w1, w2), a, b in zip(cells, lo, hi):
        i0, i1 = np.searchsorted(t_edges, [t1, t2])
        j0, j1 = np.searchsorted(w_edges, [w1, w2])
        LO[j0:j1, i0:i1], HI[j0:j1, i0:i1] = a, b
        covered[j0:j1, i0:i1] += 1
    if not np.all(covered == 1):  # a rectangle missed or counted twice would make a false claim
        raise RuntimeError("internal error: the cells do not tile the box")
    return t_edges, w_edges, LO, HI
