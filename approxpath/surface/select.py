"""Certified selection of both the bandwidth and the weight (:func:`select_surface`).

Every fold's problem gets a certified surface over the box (:func:`~.build.tile`, one
:class:`~.engine.Engine` for all folds, so exact solves are warm-started across folds and
weights).  A cell's pair has a gap at most its bound at every point of the cell, so the
problem's ``prediction_enclosure`` (told the cell's weights) encloses the exact optimum's
predictions at every point of the cell, and :func:`~approxpath.selection.losses.loss_totals`
the fold's validation loss.  The folds' cells are overlaid on the grid of every edge (each grid
rectangle lies in one cell of every fold): the pooled loss of the exact optima lies in
``[LO, HI]`` on every rectangle.  With ``U`` the smallest ``HI`` (the chosen rectangle; its
middle is the chosen point) and ``L`` the smallest ``LO``, no point of the box has a loss below
``U - δ``, ``δ = U - L`` (for the 0-1 error, a count over the held-out points: the largest ``k / N`` not
above it).  While ``δ > tol``, every fold's cells under a rectangle that may still beat
``U - tol`` are tiled again at a quarter of their eps (new exact solves), the most promising
first (:func:`_promising`: the lowest middles and the lowest lower bounds); a cell whose tiling is refused (its exact solves certify no smaller gap) stays as it is
and is not tiled again, while the others go on.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..compute.parallelism import managed
from ..driver.run import finite_delta
from ..progress import delta_bar
from ..errors import BudgetExceededError, EpsilonTooSmallError, InputError, SelectionInterrupted
from ..numerics import difference_up, log_mid
from ..selection.losses import default_tol, error_levels
from ..selection.folds import default_criterion, fold_problems, validation_given
from ..selection.advice import surface_outcome
from ..selection.refine import no_smaller_gap
from ..selection.surface_proof import SurfaceProof, cell_totals, overlay
from ..selection.search import default_eps
from ..validate import positive_range
from .build import tile
from .engine import Engine, check_bandwidth_problem, check_weight_range
from .nodes import at_sides, select_box
from .result import SurfaceSelection

__all__ = ["select_surface", "SurfaceSelection"]

# Refinements tile cells again at this share of the eps they were tiled at.
_TIGHTEN = 0.25
# Rounds of refinement before the search stops with the δ it reached.
_MAX_ROUNDS = 40
# Each round refines the active rectangles (those that may still beat the chosen one) whose
# enclosure's middle is among this share of the lowest, and the chosen one: the promising
# region is made finer first, so that a good upper bound prunes the rest before it is refined.
_PROMISING = 0.25
# Cells per fold before the search stops with the δ it reached.
_MAX_CELLS = 50_000


class _Fold:
    """One fold's cells and, per cell, its validation loss totals over its bandwidth sub-intervals."""

    def __init__(self, engine, k, X_val, y_val, loss):
        self.engine, self.k, self.X_val, self.y_val, self.loss = engine, k, X_val, y_val, loss
        self.cells, self.covers, self.levels = [], [], []  # levels: the eps each cell was tiled at
        self.final = []  # per cell: tiling it again at a smaller eps was refused (EpsilonTooSmallError)

    def add(self, cell, level):
        self.cells.append(cell)
        self.covers.append(self._cover(cell))
        self.levels.append(level)
        self.final.append(False)

    def _cover(self, cell):
        """``(lo, hi)`` of the fold's loss total at every point of ``cell``."""
        if cell.kind != "certified":
            # nothing known: every point may be wrong (an error count is at most the points')
            return 0.0, float(len(self.y_val)) if self.loss == "error" else math.inf
        return cell_totals(self.engine.cells[self.k], cell.primal, cell.dual, cell.gap_bound,
                           (cell.t_lo, cell.t_hi, cell.w_lo, cell.w_hi), self.X_val, self.y_val, self.loss)

    def replace(self, indices, new_cells):
        keep = sorted(set(range(len(self.cells))) - set(indices))
        self.cells = [self.cells[i] for i in keep]
        self.covers = [self.covers[i] for i in keep]
        self.levels = [self.levels[i] for i in keep]
        self.final = [self.final[i] for i in keep]
        for cell, level in new_cells:
            self.add(cell, level)


def _overlay(folds, total):
    """:func:`~approxpath.selection.surface_proof.overlay` of the folds' cells: ``(t_edges, w_edges, LO,
    HI, owners)``."""
    rects = [np.array([(c.t_lo, c.t_hi, c.w_lo, c.w_hi) for c in f.cells], dtype=float) for f in folds]
    return overlay(rects, [np.array(f.covers, dtype=float) for f in folds], total)


def _promising(LO, HI, limit, chosen, stuck):
    """Mask of the rectangles to refine: those with ``LO < limit`` and not ``stuck`` (every
    fold's cell there final) whose enclosure's middle or whose lower bound is among
    :data:`_PROMISING` of the lowest of them, and ``chosen`` unless stuck.  (By the middle
    alone, the rectangles that hold the smallest lower bound, wide ones, were never refined,
    and δ never fell below what they hold.)"""
    active = (LO < limit) & ~stuck
    mid = 0.5 * (LO + np.minimum(HI, np.nanmax(np.where(np.isfinite(HI), HI, np.nan))))
    mask = np.zeros(LO.shape, dtype=bool)
    if active.any():
        mask = active & ((mid <= np.quantile(mid[active], _PROMISING)) | (LO <= np.quantile(LO[active], _PROMISING)))
    mask[chosen] = not stuck[chosen]
    return mask


def _stuck(folds, owners, shape):
    """Mask of the grid's rectangles under a final cell (:attr:`_Fold.final`) in every fold."""
    stuck = np.ones(shape, dtype=bool)
    for f, slices in zip(folds, owners):
        free = np.zeros(shape, dtype=bool)
        for (j0, j1, i0, i1), final in zip(slices, f.final):
            free[j0:j1, i0:i1] |= not final
        stuck &= ~free
    return stuck


def _refine(folds, engine, owners, active, relative, max_cells, refused):
    """Tile again, at :data:`_TIGHTEN` of the eps they were tiled at, every fold's cells that
    meet an active rectangle (consecutive cells of one weight band together); the number of
    cells replaced.  A run whose tiling is refused (:class:`EpsilonTooSmallError`: its exact
    solves certify no smaller gap) keeps its cells, marked final, and its error is appended to
    ``refused``: the other runs go on."""
    replaced = 0
    for f, slices in zip(folds, owners):
        hit = [i for i, (j0, j1, i0, i1) in enumerate(slices) if active[j0:j1, i0:i1].any() and not f.final[i]]
        groups = {}
        for i in sorted(hit, key=lambda i: (f.cells[i].w_lo, f.cells[i].t_lo)):
            c = f.cells[i]
            band = groups.setdefault((c.w_lo, c.w_hi), [])
            if band and band[-1][-1][1] == c.t_lo:
                band[-1].append((i, c.t_hi))
            else:
                band.append([(i, c.t_lo), (i, c.t_hi)])
        gone, new = [], []
        try:
            for (wl, wh), runs in groups.items():
                for run in runs:
                    idx = sorted({i for i, _ in run})
                    level, made = _TIGHTEN * min(f.levels[i] for i in idx), []
                    try:
                        tile(engine, f.k, ((run[0][1], run[-1][1]), (wl, wh)), level, relative, max_cells,
                             lambda cell, lv=level: made.append((cell, lv)))
                    except EpsilonTooSmallError as exc:
                        refused.append(exc)
                        for i in idx:
                            f.final[i] = True
                        continue
                    new += made
                    gone += idx
        except Exception:  # (the budget ran out: the runs tiled again are kept)
            f.replace(gone, new)
            raise
        # (not on Ctrl-C: the new cells' held-out enclosures took up to 10 s, for a round then dropped)
        f.replace(gone, new)  # (at once: the indices are the cells' before any replacement)
        replaced += len(gone)
    return replaced


@managed
def select_surface(problem, criterion=None, *, cv=None, X_val=None, y_val=None, groups=None, shuffle=None,
                   eps=None, bandwidths=None, weights=None, tol=None, relative=False, max_solves=20_000, strict=True,
                   solver=None, progress=False):
    """Select the bandwidth and the weight (C, λ) by a validation loss or a closed-form criterion
    of the exact optimum, with a guarantee over the whole box.

    Parameters
    ----------
    problem : KernelProblem
        On the full training data, ``parameter="bandwidth"``, of a problem with cells
        (:class:`~approxpath.cells.CellBound`) and a ``prediction_enclosure``; or, without
        ``cv`` and ``X_val``, one whose bound has ``box_enclosure`` (kernel ridge).  Where the
        bound has ``prediction_box`` (kernel ridge) a validation loss needs no surfaces either:
        each fold's cells between exact optima (:class:`~.folds.BoxFolds`).
    criterion : str, optional
        A validation loss (``error``, ``mae``, ``mse``; with ``cv`` or ``X_val``), default the
        problem's first; or without them a closed-form criterion of the problem's bound (kernel
        ridge's ``loocv``, ``gcv``, ``lml``; default its first): enclosed on cells between
        exact optima at their corners, with no folds and no path (:func:`~.nodes.select_box`).
    cv, X_val, y_val, groups, shuffle
        As :func:`approxpath.selection.select` (one of ``cv`` or ``X_val, y_val`` for a
        validation loss).
    eps : float, optional
        Gap of the first surfaces (absolute unless ``relative``; unused with no surfaces); default
        :func:`~approxpath.selection.search.default_eps` of the problem at the smallest weight.
    relative : bool, default False
        ``eps`` is relative to the optimal value.
    bandwidths, weights : (float, float)
        The box; bandwidths default to the problem's interval; ``weights`` is required.
    tol : float, optional
        Stop when ``delta <= tol`` (criterion units; default as :func:`~approxpath.selection.select`'s,
        :func:`~approxpath.selection.losses.default_tol`).
    max_solves : int
        Exact solves allowed in all, checked between rounds: a round of refinements once started
        runs to its end, so it may overspend a budget it starts below (as :func:`approxpath.select`'s).
    strict : bool
        If the search stops before ``delta <= tol``: raise :class:`BudgetExceededError` when
        ``max_solves`` was spent, :class:`SelectionStalledError` (its subclass) when more exact
        solves would not help (the ``selection`` attribute of either holds the result), or, when
        False, warn (a :class:`~approxpath.selection.ShortfallWarning`) and return it.  A budget
        spent while the folds' first surfaces are built raises :class:`BudgetExceededError`
        either way: until every fold's cells cover the box there is no choice (no enclosure
        holds over the whole box) to return; so does a
        closed-form search with no path whose first grid of exact optima alone needs more than
        ``max_solves`` (before any is solved).
    solver : str, optional
    progress : bool
        A progress bar (the ``progress`` extra, tqdm) from the first δ down to ``tol``, with δ and
        the exact solves so far.

    Returns
    -------
    SurfaceSelection

    Raises
    ------
    SelectionInterrupted
        On Ctrl-C once the search has begun (the first surfaces or the first grid are done): a
        ``KeyboardInterrupt`` whose ``selection`` is the choice at the last round finished, with
        the δ proven there.
    """
    from ..validate import count, flag, positive

    t0 = time.perf_counter()
    check_bandwidth_problem(problem)
    strict = flag("strict", strict)
    if solver is not None:
        problem.backend_names(solver)  # (a name checked before the first solve, not at it)
    closed = getattr(problem.bound, "CLOSED_FORM_CRITERIA", {})
    validation = validation_given(cv, X_val, y_val, shuffle)
    if not validation and not hasattr(problem.bound, "box_enclosure"):
        raise InputError(f"selection over two parameters of {problem.name} needs a validation loss: pass cv=5 (or "
                         "X_val, y_val)")
    if weights is None:
        raise InputError(f"pass weights=(lo, hi): the range of {problem.bound.weight}")
    w_lo, w_hi = positive_range("weights", weights)
    check_weight_range(problem, "weights", w_lo, w_hi)
    t_lo, t_hi = positive_range("bandwidths", problem.default_interval() if bandwidths is None else bandwidths)
    problem.bound.check_interval(t_lo, t_hi)
    if tol is not None:
        positive("tol", tol)
    relative = flag("relative", relative)
    if eps is not None:  # (checked where the closed forms need no path as well: never silently unused)
        positive("eps", eps)
    elif relative:  # the default is absolute: a relative one would be silently dropped
        raise InputError("relative=True needs eps= as well (the default eps is absolute: 1e-3 of the zero model's "
                         "objective)")
    count("max_solves", max_solves)
    if not validation:
        criterion = default_criterion(problem, criterion, False, closed)
        tol = default_tol(criterion, problem.y) if tol is None else float(tol)
        return _no_path(problem, criterion, closed[criterion], (t_lo, t_hi), (w_lo, w_hi), tol, max_solves,
                        strict, progress, t0)
    if not hasattr(problem.bound, "prediction_enclosure"):
        raise InputError(f"{problem.name} cannot be selected over two parameters by a validation loss: its bound "
                         "encloses no predictions (no prediction_enclosure; kernel_svm, klasso and kernel_ridge have "
                         "one); choose over one parameter, where its loss is sampled")
    criterion = default_criterion(problem, criterion, True, closed)
    tol = default_tol(criterion, problem.y) if tol is None else float(tol)
    problems, X_vals, y_vals, splits = fold_problems(problem, cv, X_val, y_val, groups, criterion, shuffle)
    if hasattr(problem.bound, "prediction_box"):  # each fold's cells between exact optima, no surface
        from .folds import FOLD_T_WIDTH, BoxFolds

        return _no_path(problem, criterion, "min", (t_lo, t_hi), (w_lo, w_hi), tol, max_solves, strict, progress, t0,
                        nodes=lambda ts: BoxFolds(problems, X_vals, y_vals, criterion, shared=ts), t_width=FOLD_T_WIDTH)
    if eps is None:
        eps = default_eps(problem.with_weight(w_lo))
        relative = False
    engine = Engine(problems, solver, max_solves)
    folds = [_Fold(engine, k, X_vals[k], y_vals[k], criterion) for k in range(len(problems))]
    total = float(sum(len(v) for v in y_vals))
    box = ((t_lo, t_hi), (w_lo, w_hi))

    def proof(cells):  # what a certificate file is made of: the folds (or a hold-out set) and their cells
        kept = None if splits is None else tuple(splits)
        return SurfaceProof(problem, tuple(problems), kept, tuple(X_vals), tuple(y_vals), cells, float(eps), relative,
                            box)

    bar = delta_bar(progress, tol, f"select {problem.name} over two parameters", f"first surfaces ({len(folds)})")
    try:
        try:
            def add(cell, f):
                f.add(cell, eps)
                if bar is not None:  # (minutes a fold: say how far it got)
                    bar.note(f"first surface of fold {f.k + 1}/{len(folds)}: {len(f.cells)} cells, "
                             f"{engine.n_solves} exact solves")

            for f in folds:
                tile(engine, f.k, box, eps, relative, _MAX_CELLS, lambda cell, f=f: add(cell, f))
        except BudgetExceededError as exc:  # a fold's cells do not cover the box: no choice, nothing to return
            raise BudgetExceededError(f"{exc} (while the first surfaces were built: there is no choice yet to "
                                      "return)") from exc
        rounds, reason, spent, refused, state = 0, None, False, [], None
        try:
            while True:
                t_edges, w_edges, LO, HI, owners = _overlay(folds, total)
                j, i = np.unravel_index(int(np.argmin(HI)), HI.shape)
                U, L = float(HI[j, i]), float(LO.min())
                levels = int(total) if criterion == "error" else None  # (an error rate takes the values k / total)
                delta = finite_delta(error_levels(difference_up(U, L), levels), problem,
                                     {"bandwidth": box[0], problem.bound.weight: box[1]})
                state = (t_edges, w_edges, LO, HI, (j, i), delta, rounds,  # (a round's arrays: new each round)
                         tuple(tuple(f.cells) for f in folds))
                if bar is not None:
                    bar.update(delta, engine.n_solves)
                if delta <= tol or spent:
                    break
                if rounds >= _MAX_ROUNDS:
                    reason = f"the search stopped after {_MAX_ROUNDS} rounds of refinement"
                    break
                if max(len(f.cells) for f in folds) > _MAX_CELLS:
                    reason = f"a fold needed more than {_MAX_CELLS} cells"
                    break
                before = len(refused)
                try:
                    mask = _promising(LO, HI, U - tol, (j, i), _stuck(folds, owners, LO.shape))
                    changed = _refine(folds, engine, owners, mask, relative, _MAX_CELLS, refused)
                except BudgetExceededError:  # (the round's runs done are kept: the overlay once more)
                    spent = max_solves
                    continue
                if not changed and len(refused) == before:  # (refused ones: the next round tries others)
                    reason = "no cell could be made finer (every cell that may still win is at its limit" + \
                        (f"; {no_smaller_gap(refused[0], 'bandwidth')})" if refused else ")")
                    break
                rounds += 1
        except KeyboardInterrupt as exc:
            if state is None:
                raise
            raise SelectionInterrupted(_made(state, problem, criterion, tol, engine, proof, t0)) from exc
    finally:
        if bar is not None:
            bar.close()
    result = _made(state, problem, criterion, tol, engine, proof, t0)
    t_edges, w_edges, _, HI, (j, i), *_ = state
    # the grid's rectangles as cells, oriented as the loss is (smaller is better)
    T, W = np.meshgrid(np.arange(t_edges.size - 1), np.arange(w_edges.size - 1))
    rects = np.column_stack([t_edges[T.ravel()], t_edges[T.ravel() + 1], w_edges[W.ravel()], w_edges[W.ravel() + 1]])
    sides = at_sides(rects, HI.ravel(), result.value[1], j * (t_edges.size - 1) + i,
                     (t_edges[0], t_edges[-1], w_edges[0], w_edges[-1]))
    return surface_outcome(result, reason, spent, strict, sides)


def _made(state, problem, criterion, tol, engine, proof, t0):
    """The :class:`SurfaceSelection` of a finished round's ``state``: its grid's edges, the
    rectangles' bounds ``LO``, ``HI`` (shape (w cells, t cells)), the chosen rectangle ``(j, i)``,
    δ, the rounds so far and the folds' cells then; ``proof(cells)``: what its certificate is made
    of (None where it has none)."""
    t_edges, w_edges, LO, HI, (j, i), delta, rounds, cells = state
    return SurfaceSelection(
        t=log_mid(t_edges[i], t_edges[i + 1]), w=log_mid(w_edges[j], w_edges[j + 1]), weight=problem.bound.weight,
        value=(float(LO[j, i]), float(HI[j, i])), delta=delta, criterion=criterion, tol=float(tol),
        t_edges=t_edges, w_edges=w_edges, lo=LO, hi=HI, exact_solves=engine.n_solves, refinements=rounds,
        folds=len(cells), cells=sum(map(len, cells)), wall_s=time.perf_counter() - t0, proof=proof(cells))


def _no_path(problem, criterion, sense, bandwidths, weights, tol, max_solves, strict, progress, t0, **box):
    """A closed-form criterion (or the validation loss of ``box``'s ``nodes``, with its first
    spacing ``t_width``) over the box, from exact optima at the cells' corners
    (:func:`~.nodes.select_box`)."""
    from ..memory import check_problem_fits

    check_problem_fits(problem)
    bar = delta_bar(progress, tol, f"select {problem.name} over two parameters", "first cells")
    try:
        result, sides, reason, spent = select_box(problem, criterion, sense, bandwidths, weights, tol, max_solves,
                                                  bar, t0, **box)
    finally:
        if bar is not None:
            bar.close()
    return surface_outcome(result, reason, spent, strict, sides, depth=1)
