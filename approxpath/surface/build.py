"""The certified surface of a kernel problem over the bandwidth and its weight
(:func:`approximate_surface`).

The box is tiled by strips ``[w_lo, w_hi] x [t_a, t_b]``.  A strip's pairs are the pieces of a
certified bandwidth path at ``w_lo`` (:class:`~approxpath.surface.engine.Engine`) at a share of
the target, so that the rest is left for the weight; each piece is a cell whose bound is that of
:class:`~approxpath.cells.CellBound`.  Where a run of cells misses the target, the strip is cut
in the weight below which the run's cells meet it (guessed, checked on the cells, guessed
again below): the lower part keeps the pairs, rebounded on the narrower cells; the
upper part gets a new path at the cut, its exact solves started from the nearest ones at any
weight.
"""

from __future__ import annotations

import time

from ..certificate.fields import caller_meta
from ..compute.parallelism import managed, threads
from ..progress import count_bar
from ..errors import BudgetExceededError, InputError
from ..numerics import STORED_PAD, log_mid, log_width, stored_bound
from ..validate import count, flag, is_finite, positive_range, problem_instance
from .engine import Engine, check_weight_range, cut_weight
from .result import Surface, SurfaceCell

__all__ = ["approximate_surface", "surface_meta", "tile"]

# The share of the target the strip's bandwidth path gets (the rest covers the growth of the
# gap with the weight across the strip: a larger share makes fewer exact solves per path and
# more, thinner strips).
_SHARE = 0.5
# A strip is cut where a guess of its cells' bounds reaches this share of the target (below 1:
# a guess a little short still leaves the narrower cells within the target).
_CUT = 0.9
# Strips narrower than this (relative) in the weight are not cut again: their cells stay
# uncovered (the bound no longer falls with the weight's range; e.g. a pair whose own gap at
# the strip's smallest weight is already above the target).
_MIN_WIDTH = 1e-9
# Guesses of the cut (each checked on the run's cells; the next below the last) before the
# lower part is searched again from scratch.
_TRIES = 6
# Runs of failing cells separated by fewer passing cells than this are cut as one (each cut of
# the weight makes a new path over its bandwidths: at least two exact solves, at its ends).
_BRIDGE = 3
# Progress: the bar counts thousandths of the box (in log-log area).
_STEPS = 1000


def _cut(engine, k, run, wl, wh):
    """``(wm, gaps)``: a weight ``wm`` in ``(wl, wh)`` below which the run's cells
    ``[lo, hi] x [wl, wm]`` meet their goals, found by guesses (:func:`~.engine.cut_weight`)
    checked on the cells, each below the last, and their bounds there; ``gaps`` None when
    :data:`_TRIES` guesses did not find one (``wm``: the last guess)."""
    top, gaps, wm = wh, [g for _, g, _ in run], log_mid(wl, wh)
    for _ in range(_TRIES):
        cuts = [cut_weight(wl, top, q.gap, g, _CUT * goal) for (q, _, goal), g in zip(run, gaps) if g > goal]
        wm = min((c for c in cuts if c is not None), default=log_mid(wl, top))
        gaps = [engine.cell_gap(k, q, wl, wm) for q, _, _ in run]
        if all(g <= goal for g, (_, _, goal) in zip(gaps, run)):
            return wm, gaps
        top = wm
    return wm, None


def surface_meta(problem, meta=None):
    """What a surface certificate records about its inputs: the problem, its options without the
    weight, the weight's name, the kernel and the data (as a path's, :func:`approxpath.driver.path_meta`):
    its fields less ``parameter``, ``scale`` and ``sample_levels``, ``options`` less the weight, and
    ``weight``, with the caller's ``meta`` added (checked by :func:`~approxpath.certificate.fields.caller_meta`).
    ``problem`` is over the bandwidth, on a bound with a ``weight``."""
    from ..driver import path_meta

    info = path_meta(problem, meta)
    weight = problem.bound.weight
    info["options"] = {k: v for k, v in info["options"].items() if k != weight}
    for key in ("parameter", "scale", "sample_levels"):  # a path's: a surface has its box instead
        info.pop(key, None)
    info["weight"] = weight
    return info


@managed
def approximate_surface(problem, eps, weights, bandwidths=None, *, relative=False, solver=None, max_solves=20_000,
                        max_cells=200_000, progress=False, meta=None, n_jobs=None):
    """Compute an ε-approximate solution surface of ``problem`` over the bandwidth and the weight.

    Parameters
    ----------
    problem : KernelProblem
        Built with ``parameter="bandwidth"`` (the default) on a bound with cells
        (``weight_convex``: ``kernel_svm``, ``klasso``, ``robust_l1``, ``kernel_ridge``); its own
        weight is replaced cell by cell.
    eps : float
        Admissible gap at every point of the box: absolute, or relative to the optimal value
        with ``relative=True`` (the SVM's objective grows with C: a relative eps keeps the
        strips' count per octave of C bounded).
    relative : bool, default False
        ``eps`` is relative to the optimal value (each cell's gap bound at most ``eps`` times a
        lower bound of the optimal value on the cell).
    weights : (float, float)
        The weight's range (C for ``kernel_svm``, λ for the others).
    bandwidths : (float, float), optional
        The bandwidth's range; the problem's default interval if omitted.
    solver : str or sequence of str, optional
        Exact solvers to try in turn.
    max_solves, max_cells : int
        Limits; past either :class:`~approxpath.errors.BudgetExceededError`.
    progress : bool
        A progress bar (tqdm) over the box's area.
    meta : dict, optional
        Extra provenance for the certificate, as for
        :func:`~approxpath.driver.approximate_path`.
    n_jobs : int, optional
        Threads of the kernel work, in joblib's convention (``-1``: every core; None: the
        default, :func:`approxpath.compute.kernel_threads`); BLAS runs on one thread.

    Returns
    -------
    Surface
    """
    t_start = time.perf_counter()
    problem_instance(problem)
    if not (is_finite(eps) and eps > 0):
        raise InputError(f"eps must be a positive finite number; got {eps!r}")
    relative = flag("relative", relative)
    meta = caller_meta(meta)
    w_lo, w_hi = positive_range("weights", weights)
    t_lo, t_hi = positive_range("bandwidths", problem.default_interval() if bandwidths is None else bandwidths)
    problem.bound.check_interval(t_lo, t_hi)
    count("max_solves", max_solves)
    count("max_cells", max_cells)
    engine = Engine([problem], solver, max_solves)
    engine.cells[0].at(w_lo)  # (the weights' domain checked before any solve)
    engine.cells[0].at(w_hi)
    check_weight_range(problem, "weights", w_lo, w_hi)
    area = log_width(t_lo, t_hi) * log_width(w_lo, w_hi)
    bar = count_bar(progress, _STEPS, f"{problem.name} surface", "thousandths of the box")
    done = [0.0, 0]

    def finished(cell):
        cells.append(cell)
        done[0] += log_width(cell.t_lo, cell.t_hi) * log_width(cell.w_lo, cell.w_hi) / area
        if bar is not None and int(done[0] * _STEPS) > done[1]:
            bar.done(int(done[0] * _STEPS) - done[1])
            done[1] = int(done[0] * _STEPS)

    cells = []
    try:
        with threads(n_jobs):
            tile(engine, 0, ((t_lo, t_hi), (w_lo, w_hi)), eps, relative, max_cells, finished)
    finally:
        if bar is not None:
            bar.close()
    cells.sort(key=lambda c: (c.w_lo, c.t_lo))
    points = sorted(key for solves in engine.solves for key in solves)
    return Surface(problem=problem, eps=float(eps), relative=bool(relative), box=((t_lo, t_hi), (w_lo, w_hi)),
                   cells=tuple(cells), exact_solves=len(points), solve_points=tuple(points),
                   wall_s=time.perf_counter() - t_start, solve_s=engine.solve_s, certify_s=engine.certify_s,
                   meta=surface_meta(problem, meta))


def tile(engine, k, box, eps, relative, max_cells, finished):
    """Tile ``box`` ``((t_lo, t_hi), (w_lo, w_hi))`` with cells of problem ``k`` of ``engine``
    meeting ``eps`` (certified) or, where nothing did, uncovered; each handed to ``finished``
    as it is made.  Returns the number of cells made.  ``engine``: the folds' problems, solves
    and paths (:class:`~approxpath.surface.engine.Engine`); ``relative``: ``eps`` relative to the
    optimal value; ``max_cells``: the most cells made and still to make; ``finished(cell)`` gets each
    :class:`~approxpath.surface.result.SurfaceCell`.

    Raises
    ------
    BudgetExceededError
        After a strip, the cells made and the strips left exceed ``max_cells``.
    """
    (t_lo, t_hi), (w_lo, w_hi) = box
    made = 0
    todo = [(w_lo, w_hi, t_lo, t_hi, None)]

    def done(cell):
        nonlocal made
        made += 1
        finished(cell)

    while todo:
        wl, wh, a, b, pieces = todo.pop()
        if pieces is None:
            pieces = engine.path(k, wl, a, b, eps, relative, share=_SHARE)
        run, passed = [], []  # the failing pieces of a run, and the passing ones since its last
        for p in pieces + [None]:  # (None closes the last run)
            if p is not None:
                g = engine.cell_gap(k, p, wl, wh)
                goal = engine.target(k, p, wl, wh, eps, relative) * (1.0 - STORED_PAD)
                if p.kind == "certified" and g > goal and wh > wl * (1.0 + _MIN_WIDTH):
                    run += [q[:3] for q in passed] + [(p, g, goal)]
                    passed = []
                    continue
                cell = SurfaceCell(p.lo, p.hi, wl, wh, p.primal, p.dual, stored_bound(g, goal) if g <= goal else g,
                                   "certified" if g <= goal else "uncovered", p.anchors)  # (uncovered: no pair,
                if run and g <= goal and len(passed) < _BRIDGE:  # or no room left in the weight)
                    passed.append((p, g, goal, cell))
                    continue
            for q in passed:
                done(q[3])
            passed = []
            if p is not None:
                done(cell)
            if run:
                wm, below = _cut(engine, k, run, wl, wh)
                todo.append((wm, wh, run[0][0].lo, run[-1][0].hi, None))
                if below is None:  # no cut found below which every cell holds: look again there
                    todo.append((wl, wm, run[0][0].lo, run[-1][0].hi, [q[0] for q in run]))
                for (q, _, goal), g in zip(run, below or ()):
                    done(SurfaceCell(q.lo, q.hi, wl, wm, q.primal, q.dual, stored_bound(g, goal), "certified", q.anchors))
                run = []
        if made + len(todo) > max_cells:
            raise BudgetExceededError(f"more than max_cells={max_cells} cells needed: use a larger eps"
                                      f"{'' if relative else ' or relative=True'}, a smaller box, or raise max_cells")
    return made
