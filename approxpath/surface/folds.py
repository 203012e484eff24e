"""A validation loss (``mse``, ``mae``, ``error``) of folds or a hold-out set chosen over both the
bandwidth and the weight, or over the weight alone, with no path (kernel ridge, whose bound has
``prediction_edge`` and ``prediction_box``).

Each fold tiles the box as the closed-form criteria do (:class:`~.nodes.BoxNodes`: exact optima at
the cells' corners or predicted between them along t, the first grid's from one spectrum of the
fold's kernel per bandwidth, the others from a Cholesky factor alone; the first grid finer in t,
:data:`FOLD_T_WIDTH`), the same cells in every fold.
A cell's λ edges enclose the fold's held-out predictions at every t of the edge from its pair and
gap bound (``bound.prediction_edge``); between them the bound encloses the predictions at every
(t, λ) of the cell (``bound.prediction_box``: a chord in λ, with its distance bounded in the RKHS).
The fold's total loss is enclosed on each part of the cell, and the folds' totals are pooled over
every held-out point: the cross-validation loss of the exact optima lies in their sum at every
point of the cell.
"""

from __future__ import annotations

import numpy as np

from ..selection.losses import loss_totals, pooled
from ..selection.predictions import new_distances
from .nodes import BoxNodes, WeightNodes, over_bandwidth

__all__ = ["BoxFolds", "WeightFolds", "FOLD_T_WIDTH"]

#: The first exact optima of a validation loss over the box are at most this far apart in log t
#: (closer than the closed forms' 0.35: the held-out predictions' enclosures along t are wide at small
#: λ; sinc, 5 folds, λ in [1e-3, 1], tol 0.01, n = 400: 0.15, 0.2, 0.25 and 0.35 took 104, 108, 109
#: and 131 s; n = 200: 0.2 took 36.5 s against 41–45 s)
FOLD_T_WIDTH = 0.2


class BoxFolds:
    """The nodes of :func:`~.nodes.select_box` for a validation loss: the folds' problems
    (``parameter="bandwidth"``), their held-out rows ``X_vals``, ``y_vals``, the loss
    ``criterion``, the bandwidths ``shared`` whose spectra give the first optima.  The same
    methods as :class:`~.nodes.BoxNodes` (``start``, ``cell``, ``point``, ``split``, ``keep``,
    ``solves``); the loss is smaller-is-better.  Each fold's :class:`~.nodes.BoxNodes` keeps its
    edges, the bound's ``prediction_edge`` s of the fold's held-out rows."""

    def __init__(self, problems, X_vals, y_vals, criterion, shared=()):
        self._folds = []
        for p, X_val, y_val in zip(problems, X_vals, y_vals):
            new_distances(p.bound, X_val)  # the held-out distances once, shared by every weight's bound
            # ("loocv": the level of facts whose pairs move with the optima's derivatives, here with no
            # inverse; every fold's spectra in the closed forms' budget)
            def make(bound, lo, hi, cache, span, X=X_val):
                return bound.prediction_edge(lo, hi, cache, X, span)

            nodes = BoxNodes(p, "loocv", "min", shared, share=1 / len(problems), inverse=False, make=make)
            self._folds.append((nodes, X_val, np.asarray(y_val, dtype=float)))
        self.criterion, self.folds = criterion, len(problems)
        self._count = sum(y.size for *_, y in self._folds)

    @property
    def solves(self):
        return sum(nodes.solves for nodes, *_ in self._folds)

    def start(self, ts, ws):
        return max(nodes.start(ts, ws) for nodes, *_ in self._folds)

    def edge(self, k, t1, t2, w):
        """The fold ``k``'s :class:`~approxpath.problems.kernel_ridge.box.PredictionEdge` over
        ``[t1, t2]`` at ``w`` (:meth:`~.nodes.BoxNodes.edge`)."""
        return self._folds[k][0].edge(t1, t2, w)

    def _pooled(self, enclosures, edges):
        """The pooled loss ``(low, high)`` over the cell from each fold's predictions' enclosures
        ``(low, up)`` (m_k, columns) and the fold's λ ``edges`` there: summed over the folds column
        by column where the columns are the same parts of the cell in every fold (the edges'
        cuts agree: the envelopes' nodes are fixed positions of ``[lo, hi]``), else each fold's
        extremes summed."""
        totals = [loss_totals(self.criterion, y, low, up) for (*_, y), (low, up) in zip(self._folds, enclosures)]
        cuts = [e.cuts for e in edges]
        if all(np.array_equal(cuts[0], c) for c in cuts[1:]):
            low, high = sum(lo for lo, _ in totals), sum(hi for _, hi in totals)
            low, high = float(low.min()), float(high.max())
        else:
            low, high = sum(float(lo.min()) for lo, _ in totals), sum(float(hi.max()) for _, hi in totals)
        return tuple(float(v) for v in pooled(low, high, self._count, len(totals)))  # (rounded outwards)

    def cell(self, t1, t2, w1, w2):
        """``(low, high, edge)``: the pooled loss on the cell and the width of its wider λ edge's own."""
        firsts = [self.edge(k, t1, t2, w1) for k in range(self.folds)]
        seconds = [self.edge(k, t1, t2, w2) for k in range(self.folds)]
        boxes = [nodes.level(w1).problem.bound.prediction_box(a, b)
                 for (nodes, *_), a, b in zip(self._folds, firsts, seconds)]
        low, high = self._pooled(boxes, firsts)
        sides = [self._pooled([(e.low, e.up) for e in side], side) for side in (firsts, seconds)]
        return low, high, max(hi - lo for lo, hi in sides)

    def point(self, t, w):
        """The pooled loss at the single point ``(t, w)``."""
        for nodes, *_ in self._folds:
            nodes.level(w).optimum(t)
        edges = [self.edge(k, t, t, w) for k in range(self.folds)]
        return self._pooled([(e.low, e.up) for e in edges], edges)

    def split(self, t1, t2, w1, w2):
        """Halve the cell across t in every fold (:meth:`~.nodes.BoxNodes.split`): the same point."""
        return [nodes.split(t1, t2, w1, w2) for nodes, *_ in self._folds][0]

    def keep(self, cells):
        """Forget the edges no cell of ``cells`` has, in every fold."""
        for nodes, *_ in self._folds:
            nodes.keep(cells)


class WeightFolds(WeightNodes):
    """A validation loss over the weight λ at one bandwidth, with no path: the one-parameter
    search's criterion (``cover``, as :class:`~.nodes.WeightNodes`) for folds (or a hold-out set)
    of a problem that sweeps λ.  Its cells are :class:`BoxFolds`' cells of no width in t, every
    fold's optima from one spectrum of its kernel at that bandwidth."""

    def __init__(self, problems, X_vals, y_vals, criterion):
        over = [over_bandwidth(p) for p in problems]
        self.name, self.sense, self.t = criterion, "min", over[0][0]
        self._nodes = BoxFolds([p for _, p in over], X_vals, y_vals, criterion, shared=(self.t,))
        self._problems, self._optima = tuple(problems), [{} for _ in problems]

    def fold_pieces(self, edges):
        """Each fold's pieces over λ on the cells between ``edges`` (increasing), for a certificate: on
        each cell the pair moving linearly in λ between the fold problem's exact optima at its two
        ends (the λ path's pairs; exact at every edge, the choice's included), restored, each to be
        certified by a gap bound its writer computes (inf here)."""
        from ..moving import interpolate
        from ..numerics import log_mid
        from ..result import PathPiece

        out = []
        for problem, optima in zip(self._problems, self._optima):
            for x in edges:
                if float(x) not in optima:
                    optima[float(x)] = problem.solve(float(x))
            pieces = []
            for u, v in zip(edges[:-1], edges[1:]):
                u, v, m = float(u), float(v), log_mid(float(u), float(v))
                # (the weight of v linear in λ: (λ - u) / (v - u), as the λ path's)
                pair = interpolate(optima[u], optima[v], (0.0, (m - u) / (v - u), 1.0), (u, m, v), 1)
                primal, dual = problem.restore(*pair, u, v)
                pieces.append(PathPiece(u, v, primal, dual, np.inf, "certified", anchors=(u, v)))
            out.append(tuple(pieces))
        return tuple(out)

    def with_optima(self, points):
        """Itself: a cell's pair comes from the optima at its ends, so new cells (``points`` among
        the edges) bring their own."""
        return self

    @property
    def solves(self):
        return self._spent if self._nodes is None else self._nodes.solves

    def drop_caches(self):
        """The search is over: forget its cells' spectra, edges and optima (a kept choice's file
        needs the folds' problems alone; their count stays)."""
        if self._nodes is not None:
            self._spent, self._nodes = self._nodes.solves, None
