"""The pooled validation loss of the exact optima of the folds' problems as a cover
(:mod:`.cover`): each fold's held-out predictions enclosed on cells of the interval from its
path's pieces (``prediction_enclosure``, a capability of the problem's bound), the best
enclosures known kept per fold, and the enclosures handed to workers where a selection has them.
"""

from __future__ import annotations

import bisect
import inspect

import numpy as np

from ..compute.caches import PRODUCT_BYTES, ProductMemo
from .cover import merge_covers
from .losses import loss_totals
from .predictions import halves

__all__ = ["Validation", "enclosed_on_workers"]

# Pieces per task where a selection's workers enclose a fold's held-out predictions: a task
# carries the fold's problem (its data; the worker computes the distances again, ~1 ms at 500
# points) and its pieces' pairs (~12 kB each), small against the enclosures (kLASSO on 160
# points: ~4 ms a piece); a fold with fewer than two tasks' pieces is enclosed here
_TASK_PIECES = 16


def enclosed_on_workers(bound):
    """Whether a selection with workers encloses held-out predictions there with ``bound``: its
    ``prediction_enclosure`` keeps nothing between calls (it takes no ``cache=``); False also
    where ``bound`` has none."""
    enclosure = getattr(bound, "prediction_enclosure", None)
    return enclosure is not None and "cache" not in inspect.signature(enclosure).parameters


def _concat(parts):
    """One cover from consecutive parts ``(edges, lo, hi, certified)`` of an interval."""
    if len(parts) == 1:
        return parts[0]
    edges = np.concatenate([parts[0][0]] + [p[0][1:] for p in parts[1:]])
    return (edges, *(np.concatenate([p[j] for p in parts]) for j in (1, 2, 3)))


class Validation:
    """The pooled validation loss (sum over all held-out points divided by their number) of
    the exact optima of the folds' problems.

    The exact optimum at a parameter does not depend on the path that encloses it: every
    enclosure of a held-out prediction stays true on its cell whatever is computed later.  Each
    fold keeps the best enclosure known for every held-out point on cells of the interval
    (:class:`_Known`); a new enclosure is intersected with it, and for the 0-1 error a point
    whose sign is known there is not computed again.

    Parameters
    ----------
    tracks : Tracks
    X_val, y_val : list of ndarray
        Each fold's held-out points and targets (labels in {-1, +1} for ``error``).
    loss : str
        One of :data:`~approxpath.selection.losses.LOSSES`.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where runs of a fold's pieces are enclosed side by side (a selection's worker pool).
    """

    sense = "min"
    #: Called with a line of text for people after each piece's enclosures (the enclosures
    #: of a round can take minutes): a progress bar's :meth:`~approxpath.progress.DeltaBar.note`.
    progress = None

    def __init__(self, tracks, X_val, y_val, loss, executor=None):
        self.tracks, self.X_val, self.y_val, self.name = tracks, list(X_val), list(y_val), loss
        self.executor = executor
        self.total = float(sum(len(v) for v in self.y_val))
        # the pooled 0-1 error takes only the values k / total: a δ can be snapped to them
        self.levels = int(self.total) if loss == "error" else None
        self.known = [_Known(len(v)) for v in self.y_val]
        # what the problem's enclosure takes beyond the points (a plug-in's may take none),
        # checked once: rows= (a subset of the points), signs= (only the signs are wanted) and
        # cache= (kernel products kept for the refinements of a piece's cells)
        takes = inspect.signature(tracks.problems[0].bound.prediction_enclosure).parameters
        self._rows = "rows" in takes
        self._options = {"signs": True} if loss == "error" and "signs" in takes else {}
        if "cache" in takes:
            self._options["cache"] = ProductMemo(max_bytes=PRODUCT_BYTES)
        bound = tracks.problems[0].bound
        self._many = self._rows and hasattr(bound, "prediction_enclosures")
        self._handout = executor is not None and enclosed_on_workers(bound)

    def _enclose_all(self, k, todo):
        """:func:`_enclose` of fold ``k``'s held-out predictions on every ``(piece, items)`` of
        ``todo`` (items ``(key, part)``): a dict ``key: enclosure``.  With an executor (and
        :func:`enclosed_on_workers`), runs of :data:`_TASK_PIECES` pieces go to its workers, each
        with the fold's problem: the same enclosures, bit for bit (neither the kernel products
        nor the small algebra depend on the threads), computed side by side."""
        todo = list(todo)
        batches = [todo[i:i + _TASK_PIECES] for i in range(0, len(todo), _TASK_PIECES)]
        handout = self._handout and len(batches) > 1
        args = (self.X_val[k], self._rows, self._many, self._options)
        if handout:
            from ..compute.executors import result, submit
            from ..driver.parallel import task_in_worker

            futures = [submit(self.executor, task_in_worker, _enclose_batch, self.tracks.problems[k], *args,
                              [(piece, [part for _, part in items]) for piece, items in batch])
                       for batch in batches]
        got, done = {}, 0
        bound = self.tracks.problems[k].bound
        for b, batch in enumerate(batches):
            outs = result(futures[b]) if handout else [_enclose(bound, piece, [part for _, part in items], *args)
                                                      for piece, items in batch]
            for (piece, items), out in zip(batch, outs):
                got.update(zip((key for key, _ in items), out))
                done += 1
                if self.progress is not None:
                    self.progress(f"held-out predictions of fold {k + 1}/{len(self.tracks)}: piece {done} of "
                                  f"{len(todo)}")
        return got

    def _folds(self, k, cells):
        """Fold ``k``'s covers of ``cells`` (disjoint intervals ``(a, b)``), in that order."""
        known = self.known[k]
        parts = [self.tracks.over(k, a, b) for a, b in cells]
        todo, was = {}, {}  # per piece: the parts with points to enclose; per part: what was known
        for c, over in enumerate(parts):
            for i, (piece, s, e) in enumerate(over):
                was[c, i] = known.hull(s, e)
                rows = np.flatnonzero(~self._settled(*was[c, i]))
                if rows.size:
                    todo.setdefault(id(piece), (piece, []))[1].append(((c, i), (s, e, rows)))
        got = self._enclose_all(k, todo.values())
        out = []
        for c, over in enumerate(parts):
            pieces = []
            for i, (piece, s, e) in enumerate(over):
                was_lo, was_hi = was[c, i]
                if (c, i) in got:
                    edges, low, up, rows = got[c, i]
                else:  # every point known on [s, e]: no enclosure to compute
                    edges, rows = np.array([s, e], dtype=float), np.empty(0, dtype=int)
                    low = up = np.empty((0, 1))
                full_lo = np.repeat(was_lo[:, None], edges.size - 1, axis=1)
                full_hi = np.repeat(was_hi[:, None], edges.size - 1, axis=1)
                full_lo[rows] = np.maximum(full_lo[rows], low)
                full_hi[rows] = np.minimum(full_hi[rows], up)
                # two cells per part (a refinement then doubles the cells instead of multiplying them by J)
                halved, lo, hi = halves(edges, loss_totals(self.name, self.y_val[k], full_lo, full_hi))
                if e > s:
                    known.record(edges, full_lo, full_hi, halved)
                pieces.append((halved, lo, hi, np.full(lo.size, piece.kind == "certified")))
            out.append(_concat(pieces))
        return out

    def _fold(self, k, a, b):
        return self._folds(k, [(a, b)])[0]

    def _settled(self, low, up):
        """Points whose loss an enclosure cannot improve: for the 0-1 error, a known sign."""
        if self.name == "error":
            return (low > 0) | (up <= 0)
        return np.zeros(low.shape, dtype=bool)

    def open_folds(self, a, b):
        """The folds with a point on ``[a, b]`` whose loss is not known exactly."""
        return [k for k, known in enumerate(self.known) if not np.all(self._settled(*known.hull(a, b)))]

    def cover(self, a, b):
        return self.covers([(a, b)])[0]

    def covers(self, cells):
        """:meth:`cover` of each of ``cells`` (disjoint intervals ``(a, b)``), computed together:
        a fold's enclosures on the cells inside one piece in one call where the bound has
        ``prediction_enclosures``."""
        folds = [self._folds(k, cells) for k in range(len(self.tracks))]
        return [merge_covers([f[c] for f in folds], [1.0 / self.total] * len(folds)) for c in range(len(cells))]

    def wide_at(self, asks):
        """For each ``(t, a, b, width)`` of ``asks``: whether the criterion's enclosure at ``t``
        (a point of ``[a, b]``) is at least ``width`` wide.  Each ask encloses the folds at its
        ``t`` one at a time, the widest on ``[a, b]`` first, until its answer is known: a fold's
        width at ``t`` is at most its width on ``[a, b]`` (what is known there holds at ``t``, and
        a loss's width grows with its predictions' enclosures).  The asks go in rounds, each
        fold's points of a round covered together (:meth:`covers`)."""
        caps = np.zeros((len(asks), len(self.known)))
        for q, (_, a, b, _) in enumerate(asks):
            for k, known in enumerate(self.known):
                lo, hi = loss_totals(self.name, self.y_val[k], *(v[:, None] for v in known.hull(a, b)))
                caps[q, k] = float(hi[0] - lo[0]) / self.total
        order = np.argsort(-caps, axis=1, kind="stable")
        got, left = np.zeros(len(asks)), caps.sum(axis=1)
        done = np.zeros(len(asks), dtype=bool)
        for r in range(len(self.known)):
            wanted = {}  # fold: the asks enclosing it this round
            for q, (_, _, _, width) in enumerate(asks):
                if done[q] or got[q] >= width or got[q] + left[q] < width:
                    done[q] = True
                    continue
                k = int(order[q, r])
                left[q] = caps[q, order[q, r + 1:]].sum()  # (not left - cap: inf - inf, a fold unknown, is nan)
                if caps[q, k] > 0:
                    wanted.setdefault(k, []).append(q)
            for k, qs in wanted.items():
                for q, (_, lo, hi, _) in zip(qs, self._folds(k, [(asks[q][0], asks[q][0]) for q in qs])):
                    got[q] += float(hi[0] - lo[0]) / self.total
        return [bool(g >= ask[3]) for g, ask in zip(got, asks)]


def _enclose(bound, piece, parts, X_val, rows_taken, many, options):
    """Enclosures of held-out predictions at ``X_val`` on ``parts``, ``[(s, e, rows), ...]`` of
    one piece: a list of ``(edges, low, up, rows)``, ``low, up`` of the rows ``rows``.  The
    intervals ``s < e`` of a piece go in one call where the bound takes many (``many``), and so
    do its points, on the union of their rows (an enclosure of more points is as true);
    ``rows_taken``: the bound's enclosure takes ``rows=``; ``options``: its other keywords."""
    args = (piece.primal, piece.dual, piece.gap_bound)
    out = [None] * len(parts)
    intervals = [i for i, (s, e, _) in enumerate(parts) if s < e]
    points = [i for i, (s, e, _) in enumerate(parts) if s == e]
    for idx in (intervals, points):
        if many and len(idx) > 1:
            rows = np.unique(np.concatenate([parts[i][2] for i in idx]))
            edges, low, up = bound.prediction_enclosures(*args, np.array([parts[i][0] for i in idx]),
                                                         np.array([parts[i][1] for i in idx]), X_val,
                                                         rows=rows, **options)
            for j, i in enumerate(idx):
                out[i] = (edges[j], low[:, j], up[:, j], rows)
            continue
        for i in idx:
            s, e, rows = parts[i]
            if rows_taken:
                got = bound.prediction_enclosure(*args, s, e, X_val, rows=rows, **options)
            else:
                got = bound.prediction_enclosure(*args, s, e, X_val[rows], **options)
            out[i] = (*got, rows)
    return out


def _enclose_batch(problem, X_val, rows_taken, many, options, batch):
    """:func:`_enclose` of each ``(piece, parts)`` of ``batch`` with ``problem``'s bound (a worker's task)."""
    return [_enclose(problem.bound, piece, parts, X_val, rows_taken, many, options) for piece, parts in batch]


class _Known:
    """The best enclosures known of the m held-out predictions of one fold on cells of the
    interval: sorted, disjoint cells, each with ``(low, up)`` of shape (m,)."""

    def __init__(self, m):
        self.m = m
        self.los, self.his, self.values = [], [], []

    def hull(self, a, b):
        """The hull of the enclosures of the cells meeting ``[a, b]`` in more than a point (a
        point: the cells holding it) when they cover it; else nothing is known, ``(-inf, inf)``."""
        i = bisect.bisect_left(self.his, a)  # the first cell reaching a
        take, reach = [], a
        while i < len(self.los) and (self.los[i] < b or self.los[i] <= a):
            if self.his[i] > a or a == b:
                if self.los[i] > reach:  # a hole
                    take = []
                    break
                take.append(self.values[i])
                reach = max(reach, self.his[i])
            i += 1
        if not take or reach < b:
            return np.full(self.m, -np.inf), np.full(self.m, np.inf)
        return np.min([v[0] for v in take], axis=0), np.max([v[1] for v in take], axis=0)

    def record(self, edges, low, up, cells):
        """Keep the enclosures ``low, up`` (m, J) on the sub-intervals ``edges`` (J + 1,) as the
        hulls over the coarser ``cells`` (a subset of ``edges``), in place of what was known
        there (the parts of older cells outside ``[edges[0], edges[-1]]`` stay)."""
        a, b = float(edges[0]), float(edges[-1])
        new = []
        for u, v in zip(cells[:-1], cells[1:]):
            js = np.flatnonzero((edges[:-1] >= u) & (edges[1:] <= v))
            new.append((float(u), float(v), (low[:, js].min(axis=1), up[:, js].max(axis=1))))
        i = bisect.bisect_right(self.his, a)
        j = bisect.bisect_left(self.los, b)
        keep = []
        for lo, hi, val in zip(self.los[i:j], self.his[i:j], self.values[i:j]):
            if lo < a:  # an older cell straddling an end keeps its part outside [a, b]
                keep.append((lo, a, val))
            if hi > b:
                keep.append((b, hi, val))
        cells_ = sorted(keep + new, key=lambda c: c[0])
        self.los[i:j] = [c[0] for c in cells_]
        self.his[i:j] = [c[1] for c in cells_]
        self.values[i:j] = [c[2] for c in cells_]
