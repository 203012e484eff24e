"""Criteria as *covers*: enclosures of the exact optimum's criterion on cells of the parameter
interval, computed from certified paths, and made finer on request.

A :class:`Tracks` holds the pieces of one path per fold (one path for a criterion of the whole
data) and replaces pieces by those of a new path at a smaller ε where asked (more exact
solves).  A criterion answers :meth:`cover`: for ``[a, b]``, cells ``edges`` (k + 1,) and
``lo, hi`` (k,) such that the criterion of the exact optimum at every parameter of cell i lies
in ``[lo[i], hi[i]]`` (``certified[i]`` says whether the pieces used were certified):

* :class:`~.validation.Validation` (:mod:`.validation`) -- the pooled validation loss of the
  folds (hold-out: one fold), from each problem's ``prediction_enclosure`` (a capability of its
  bound);
* :class:`ClosedForm` -- a criterion of the whole data with its own enclosure
  (``criterion_enclosure``: kernel ridge's LOOCV, GCV, log marginal likelihood);
* :class:`~.nodes.NodeClosedForm` (:mod:`.nodes`) -- the same with no path: each cell's pair from
  the exact optima around it (``node_pair``: kernel ridge's criteria over the bandwidth);
* :class:`Sampled` -- a problem without an enclosure: the loss of the path's own model at one
  point per cell, ``lo == hi``, never certified.
"""

from __future__ import annotations

import bisect

import numpy as np

from ..moving import value_at
from ..numerics import fp_margin, log_mid
from .losses import loss_totals

__all__ = ["Tracks", "ClosedForm", "Sampled", "merge_covers"]

class Tracks:
    """The current pieces of one path per fold, sorted and tiling the interval.

    Parameters
    ----------
    problems : list of Problem
    paths : list of Path
        Their certified paths over the same interval.
    """

    def __init__(self, problems, paths):
        self.problems = list(problems)
        self.pieces = [list(p.pieces) for p in paths]
        self.solves = sum(p.exact_solves for p in paths)

    def __len__(self):
        return len(self.problems)

    def over(self, k, a, b):
        """Pieces of track ``k`` meeting ``[a, b]`` in more than a point (for ``a == b``: the
        one containing ``a``), each with its part ``(s, e)`` of ``[a, b]``."""
        pieces = self.pieces[k]
        his = [p.hi for p in pieces]
        i = min(bisect.bisect_left(his, a), len(pieces) - 1)
        if a == b:
            return [(pieces[i], a, a)]
        out = []
        while i < len(pieces) and pieces[i].lo < b:
            p = pieces[i]
            s, e = max(a, p.lo), min(b, p.hi)
            if e > s:
                out.append((p, s, e))
            i += 1
        return out

    def replace(self, k, path):
        """Put the pieces of ``path`` (over a union of whole pieces of track ``k``) in place of
        the pieces it covers."""
        lo, hi = path.interval
        keep = [p for p in self.pieces[k] if p.hi <= lo or p.lo >= hi]
        self.pieces[k] = sorted(keep + list(path.pieces), key=lambda p: p.lo)
        self.solves += path.exact_solves


def merge_covers(covers, weights=None):
    """One cover from per-track covers of the same interval: cells on the union of the edges,
    values summed (times ``weights``, 1 if omitted), certified where all are.

    Parameters
    ----------
    covers : list of (ndarray, ndarray, ndarray, ndarray)
        Per track ``(edges, lo, hi, certified)``: edges of shape (k_j + 1,), the others (k_j,).

    Returns
    -------
    edges : ndarray of shape (k + 1,)
        The sorted union of the edges (one repeated point where they all are that point).
    lo, hi : ndarray of shape (k,)
        :math:`\\sum_j w_j` of each cover's value on the cell holding the cell's middle, moved
        outward by :func:`~approxpath.numerics.fp_margin` ``(2 len(covers), 1)`` times its magnitude.
    certified : ndarray of bool, shape (k,)
    """
    edges = np.unique(np.concatenate([c[0] for c in covers]))
    if edges.size == 1:
        edges = np.array([edges[0], edges[0]])
    mids = 0.5 * (edges[:-1] + edges[1:])
    lo = np.zeros(mids.size)
    hi = np.zeros(mids.size)
    cert = np.ones(mids.size, dtype=bool)
    for j, (e, l, h, c) in enumerate(covers):
        w = 1.0 if weights is None else weights[j]
        idx = np.clip(np.searchsorted(e, mids, side="right") - 1, 0, len(l) - 1)
        lo += w * l[idx]
        hi += w * h[idx]
        cert &= c[idx]
    # a product and a sum per cover, rounded: moved outward by that allowance
    pad = fp_margin(2 * len(covers), 1.0)
    return edges, lo - pad * np.abs(lo), hi + pad * np.abs(hi), cert


class ClosedForm:
    """A criterion of the whole data enclosed by the problem's bound
    (``bound.criterion_enclosure(name, primal, dual, gap_bound, lo, hi, cache)``)."""

    def __init__(self, tracks, name, sense):
        self.tracks, self.name, self.sense = tracks, name, sense
        self._cache = {}

    def cover(self, a, b):
        bound = self.tracks.problems[0].bound
        edges, lo, hi, cert = [a], [], [], []
        parts = self.tracks.over(0, a, b)
        for piece, s, e in parts:
            # a refinement (inside one piece) gives the two halves in log scale, split at the middle the
            # search evaluates (one node); a cover of several pieces takes each whole (a factorization
            # per cell edge: the search splits where it must)
            cuts = [s, s] if s == e else [s, e] if len(parts) > 1 else [s, log_mid(s, e), e]
            for u, v in zip(cuts[:-1], cuts[1:]):
                low, high = bound.criterion_enclosure(self.name, piece.primal, piece.dual, piece.gap_bound, u, v,
                                                      self._cache)
                edges.append(v)
                lo.append(low)
                hi.append(high)
                cert.append(piece.kind == "certified")
        return np.array(edges, dtype=float), np.array(lo), np.array(hi), np.array(cert, dtype=bool)


class Sampled:
    """The pooled validation loss of the *path's* models (not the exact optima) at the middle
    of each cell: for problems without a prediction enclosure.  Never certified."""

    sense = "min"
    # a cell's value is the sum of each fold's loss at the middle of its piece there: no bound
    # on the loss at any other point of the cell (:meth:`.branch.Search.best`)
    encloses = False

    def __init__(self, tracks, X_val, y_val, loss):
        self.tracks, self.X_val, self.y_val, self.name = tracks, list(X_val), list(y_val), loss
        self.total = float(sum(len(v) for v in self.y_val))

    def _fold(self, k, a, b):
        problem = self.tracks.problems[k]
        edges, vals = [a], []
        for piece, s, e in self.tracks.over(k, a, b):
            t = log_mid(s, e)
            f = problem.predict(problem.primal_at(value_at(piece.primal, t), t), t, self.X_val[k])
            f = f[:, None]
            vals.append(loss_totals(self.name, self.y_val[k], f, f)[0][0])
            edges.append(e)
        v = np.array(vals)
        return np.array(edges, dtype=float), v, v, np.zeros(v.size, dtype=bool)

    def cover(self, a, b):
        covers = [self._fold(k, a, b) for k in range(len(self.tracks))]
        edges, lo, hi, cert = merge_covers(covers, [1.0 / self.total] * len(covers))
        return edges, lo, hi, cert
