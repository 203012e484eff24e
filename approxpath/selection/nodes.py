"""A closed-form criterion enclosed on cells between exact optima, with no path
(:class:`NodeClosedForm`: kernel ridge's LOOCV, GCV and log marginal likelihood over the
bandwidth, whose bound has ``node_pair``)."""

from __future__ import annotations

import bisect
import copy
import math

import numpy as np

from ..errors import InputError
from ..numerics import log_mid, log_width
from .losses import loss_totals

__all__ = ["BandwidthFolds", "NodeClosedForm"]

# The first exact optima are at most this far apart in log t: 16 cells between them on 2^-3 .. 2^5
# (kernel ridge's LOOCV at n = 1000: 19 factorizations in the end; from optima 0.25, 0.5 or 0.7
# apart 22 – 25, 1.05 – 1.4x the time).
_NODE_WIDTH = 0.35
# A refined cell between optima that close is split at its predicted middle while it is wider
# than this share of their distance (sinc n = 1000, LOOCV: a quarter, two cells between optima
# first: 19 factorizations and 41 cells, 0.8x the time of four cells between optima, 18 and 64;
# an eighth did no better).
_PREDICTED_SPLITS = 4


class NodeClosedForm:
    """A closed-form criterion of the whole data enclosed on cells between exact optima, with no
    path: the bound's ``node_pair(name, lo, hi, cache, span)`` (a pair moving across a cell, from
    the optima at the ends of ``span``, interpolated with their derivatives), its gap bound over
    the cell (``bound.gap``) and ``criterion_enclosure`` as :class:`ClosedForm` (the same
    factorizations serve both).

    The first cover puts ``between`` cells (default: the bound's ``node_cells(name)``, else 1)
    between neighbouring exact optima at most _NODE_WIDTH apart in log t; their inner ends are
    predicted points, not optima.  A cell refined is split at its middle: at a predicted point
    while ``between > 1``, the optima around it are that close and it is wider than
    1/_PREDICTED_SPLITS of their distance, else at a new exact optimum.  ``solves`` counts the
    exact optima computed (one per factorized point), ``cache`` holds their factorizations;
    ``factor(x, cache)``, if given, puts the facts at ``x`` into ``cache`` first (the bound's
    ``node_pair`` then reads them instead of factorizing: a selection over two parameters takes
    them from a spectrum shared by every λ)."""

    def __init__(self, problem, name, sense, between=None, factor=None):
        self.problem, self.name, self.sense = problem, name, sense
        self.cache = {}
        self._factor = factor
        self.between = between or getattr(problem.bound, "node_cells", lambda name: 1)(name)

    @property
    def solves(self):
        return len(self.cache)

    def cover(self, a, b):
        bound = self.problem.bound
        if a == b:  # an exact optimum there (the search's chosen point: the cell refined next splits there)
            self.optimum(a)
            edges, lo, hi = np.array([a, a]), *map(np.atleast_1d, self.enclose(a, a))
        else:
            k = math.ceil(log_width(a, b) / _NODE_WIDTH)
            if k > 2:  # the first cover: optima no further apart than _NODE_WIDTH, cells between them
                nodes, m, predicted = np.exp(np.linspace(math.log(a), math.log(b), k + 1)), self.between, False
            else:  # a refined cell: halves, at a predicted point or at an optimum
                nodes, m, predicted = np.array([a, log_mid(a, b), b]), 1, self.predicts(a, b)
            nodes[0], nodes[-1] = a, b  # (exactly the cell's ends)
            edges, lo, hi = [a], [], []
            self.optimum(a, predicted=True)
            for u, v in zip(nodes[:-1], nodes[1:]):
                # an optimum at v first (left to right: each kernel is fresh for its cells)
                self.optimum(v, predicted=predicted or v == b)
                inner = np.exp(np.linspace(math.log(u), math.log(v), m + 1))
                inner[0], inner[-1] = u, v
                for x in inner:
                    bound.gram(x)  # the kernel at every edge, kept: the cells on both sides read it
                for s, e in zip(inner[:-1], inner[1:]):
                    low, high = self.enclose(s, e)
                    edges.append(e)
                    lo.append(low)
                    hi.append(high)
            edges, lo, hi = np.array(edges), np.array(lo), np.array(hi)
        if a == b and not np.isfinite(hi[0] - lo[0]):  # nothing known even at one point: halving cannot help
            raise InputError(f"{self.problem.name}: {bound.weight} = {bound.sweep.weight:g} is too small: {self.name} "
                             f"cannot be enclosed even at the single parameter {a:.6g} (the factorizations' "
                             f"rounding); raise {bound.weight}")
        return edges, lo, hi, np.ones(lo.size, dtype=bool)

    def _around(self, a, b):
        """``(left, right)``: the nearest computed optima at or below ``a`` and at or above ``b``
        (None where there is none)."""
        known = sorted(self.cache)
        i, j = bisect.bisect_right(known, a) - 1, bisect.bisect_left(known, b)
        return known[i] if i >= 0 else None, known[j] if j < len(known) else None

    def _apart(self, a, b):
        """The log distance between the optima around ``[a, b]`` (inf without one on a side)."""
        left, right = self._around(a, b)
        return math.inf if left is None or right is None else log_width(left, right)

    def predicts(self, a, b):
        """Whether the refined cell ``[a, b]`` is split at a predicted point (class docstring)."""
        span = self._apart(a, b)
        # (the 1e-9: the first optima are _NODE_WIDTH apart up to the rounding of exp)
        return (self.between > 1 and span <= _NODE_WIDTH * (1 + 1e-9)
                and log_width(a, b) * _PREDICTED_SPLITS > span * (1 + 1e-9))

    def optimum(self, x, predicted=False):
        """Compute the exact optimum at ``x`` unless it is known, or (``predicted``) ``x`` lies
        between known optima at most _NODE_WIDTH apart in log t."""
        if x in self.cache or (predicted and self._apart(x, x) <= _NODE_WIDTH * (1 + 1e-9)):
            return
        if self._factor is not None:
            self._factor(x, self.cache)
        self.problem.bound.node_pair(self.name, x, x, self.cache)

    def span(self, u, v):
        """The exact optima around the cell ``[u, v]`` its pair comes from (the nearest computed:
        ``u`` and ``v`` themselves where they are optima)."""
        left, right = self._around(u, v)
        return u if left is None else left, v if right is None else right

    def pair(self, u, v):
        """``(pair, span)``: the pair of the cell ``[u, v]`` and :meth:`span`."""
        span = self.span(u, v)
        return self.problem.bound.node_pair(self.name, u, v, self.cache, span), span

    def enclose(self, u, v):
        """The criterion's enclosure ``(low, high)`` on the cell ``[u, v]``."""
        bound = self.problem.bound
        pair, span = self.pair(u, v)
        with np.errstate(over="ignore", invalid="ignore"):  # (an overflow ends as inf, or NaN: _checked stops it)
            gap = bound.gap(*pair, u, v)
            return self._checked(bound.criterion_enclosure(self.name, *pair, gap, u, v, self.cache, span), gap, u, v)

    def _checked(self, enclosure, gap, u, v):
        """``enclosure`` (low, high) of the cell ``[u, v]``, or :class:`NonFiniteBound` naming the
        cause where it or ``gap`` is NaN (a bandwidth such as 1e200 overflows the bounds: NaN
        compares false with every tolerance, and a search would take it for a delta met)."""
        if gap != gap or np.any(np.isnan(enclosure[0])) or np.any(np.isnan(enclosure[1])):
            from ..driver.run import NonFiniteBound, nan_cause

            raise NonFiniteBound(f"{self.problem.name}: the criterion's bounds on [{u:.6g}, {v:.6g}] are NaN: "
                                 f"{nan_cause(self.problem, u, v)}")
        return enclosure


class _FoldNodes(NodeClosedForm):
    """One fold's cells between exact optima over the bandwidth (as :class:`NodeClosedForm`
    places them, the pairs its bound's ``node_pair`` makes between them), enclosing the fold's
    total validation loss: its held-out predictions from the pair and its gap bound
    (``bound.prediction_enclosure``)."""

    def __init__(self, problem, X_val, y_val, criterion):
        # the pairs of LOOCV's cells (predicted points between optima: the gap limits the
        # predictions as it limits LOOCV), their optima from the bound's node_optimum where it
        # has one (no inverse)
        factor = getattr(problem.bound, "node_optimum", None)
        super().__init__(problem, "loocv", "min", factor=factor)
        self.X_val, self.y_val, self.criterion = X_val, np.asarray(y_val, dtype=float), criterion

    def enclose(self, u, v):
        bound = self.problem.bound
        pair, _ = self.pair(u, v)
        with np.errstate(over="ignore", invalid="ignore"):  # (as NodeClosedForm.enclose)
            gap = bound.gap(*pair, u, v)
            _, low, up = bound.prediction_enclosure(*pair, gap, u, v, self.X_val)
            lo, hi = loss_totals(self.criterion, self.y_val, low, up)
        return self._checked((float(lo.min()), float(hi.max())), gap, u, v)


class BandwidthFolds:
    """A validation loss (of folds or a hold-out set) over the bandwidth, with no path: every
    fold's cells between exact optima (the same cells for every fold, :class:`_FoldNodes`), the
    totals pooled over every held-out point.  For problems whose bound has ``node_pair`` and
    ``prediction_enclosure`` (kernel ridge)."""

    sense = "min"

    def __init__(self, problems, X_vals, y_vals, criterion):
        self._folds = [_FoldNodes(p, X_val, y_val, criterion) for p, X_val, y_val in zip(problems, X_vals, y_vals)]
        self._count = sum(f.y_val.size for f in self._folds)

    @property
    def solves(self):
        return sum(f.solves for f in self._folds)

    def fold_pieces(self, edges):
        """Each fold's pieces on the cells between ``edges`` (increasing), for a certificate: the pairs
        its bound's ``node_pair`` makes there from the exact optima computed (their anchors), each
        to be certified by a gap bound its writer computes (inf here: the bounds cost a quarter of the
        search, the pairs a hundredth)."""
        from ..result import PathPiece

        out = []
        for fold in self._folds:
            pieces = []
            for u, v in zip(edges[:-1], edges[1:]):
                (primal, dual), span = fold.pair(u, v)
                pieces.append(PathPiece(float(u), float(v), primal, dual, np.inf, "certified",
                                        anchors=tuple(sorted(set(span)))))
            out.append(tuple(pieces))
        return tuple(out)

    def with_optima(self, points):
        """A copy whose folds also have their exact optima at ``points`` (their caches copied: these
        folds' are untouched), for a file whose pieces prove less than the search's cells."""
        copied = copy.copy(self)
        copied._folds = []
        for fold in self._folds:
            fold = copy.copy(fold)
            fold.cache = dict(fold.cache)
            for x in points:
                fold.optimum(float(x))
            copied._folds.append(fold)
        return copied

    def cover(self, a, b):
        """``(edges, low, high, certified)`` on ``[a, b]``: the folds' totals summed over the
        cells they share, per held-out point."""
        covers = [f.cover(a, b) for f in self._folds]
        edges = covers[0][0]
        if any(c[0].size != edges.size or np.any(c[0] != edges) for c in covers):
            raise RuntimeError("internal error: the folds' cells differ")
        low = sum(c[1] for c in covers) / self._count
        high = sum(c[2] for c in covers) / self._count
        return edges, low, high, np.ones(low.size, dtype=bool)
