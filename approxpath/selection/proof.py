"""What a selection's certificate claims and its verifier re-proves: the pooled validation loss of
the exact optima enclosed on given cells, from given certified pieces of each fold's path, and the
choice's δ from those enclosures alone (numpy only: :func:`approxpath.verify` imports it).

The search itself (:mod:`.search`) keeps the best enclosures it ever computed, from every version of
a fold's path, on cells enclosed when they were made; a file keeps one version, the last, so
:func:`claims` encloses the final cells again from the final pieces, and halves the cells where
those alone prove less.  The file's δ may still differ from the search's either way
(larger where only earlier paths proved it, smaller where the last paths enclose cells better than
those they were first enclosed from); the file states its own.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

from ..numerics import STORED_PAD, difference_up, log_mid
from .cover import merge_covers
from .losses import error_levels, loss_totals

__all__ = ["SelectionProof", "fold_cover", "claims", "short_cells", "delta_of", "held_out", "stored_claims"]

# Times :func:`claims` halves the cells that keep a file's δ above the search's (as the search
# refines a cell 10 times in a row at most before it leaves it as it is).
_ROUNDS = 10
# Intervals of one piece enclosed in one call of a bound's ``prediction_enclosures``: its output is
# (held-out points, intervals, 19 sub-intervals) floats; 256 intervals of 500 points are 20 MB.
_BATCH = 256


@dataclass(frozen=True)
class SelectionProof:
    """What a certificate of a k-fold selection (or one on a hold-out set) is made of.

    Attributes
    ----------
    problem : Problem
        On all the data (the training data of a hold-out set's).
    problems : tuple of Problem
        The folds' (trained on ``splits[k][0]``).
    splits : tuple of (ndarray, ndarray) or None
        Each fold's training and held-out indices into the data; None for a hold-out set (``problems``
        is ``(problem,)``, ``X_vals[0]`` not part of its data).
    X_vals, y_vals : tuple of ndarray
        The held-out points of each fold.
    pieces : tuple of tuple of PathPiece
        Each fold's pieces when the search ended (those of its tightened paths in place of the
        first ones), tiling the interval; None with no path (``nodes`` makes them).
    nodes : BandwidthFolds or None
        With no path: the folds' cells between exact optima, whose ``fold_pieces`` (the cells' pairs)
        and ``with_optima`` a writer makes the pieces with.
    """

    problem: object = field(repr=False)
    problems: tuple = field(repr=False)
    splits: tuple = field(repr=False)
    X_vals: tuple = field(repr=False)
    y_vals: tuple = field(repr=False)
    pieces: tuple = field(repr=False)
    nodes: object = field(default=None, repr=False)


def fold_cover(bound, pieces, X_val, y_val, loss, edges, only=None):
    """Bounds of one fold's summed held-out loss on every cell.

    Parameters
    ----------
    bound : Bound
        The fold's (``prediction_enclosure``; ``prediction_enclosures`` where it has it).
    pieces : sequence of PathPiece
        Certified pieces tiling ``[edges[0], edges[-1]]``.
    X_val : ndarray of shape (m, d)
    y_val : ndarray of shape (m,)
    loss : str
        One of :data:`~approxpath.selection.losses.LOSSES`.
    edges : ndarray of shape (c + 1,)
        Strictly increasing.
    only : ndarray of int, optional
        The cells to enclose (the others are left at ``inf, -inf``); default all.

    Returns
    -------
    lo, hi : ndarray of shape (c,)
        On cell ``[edges[i], edges[i + 1]]`` the summed loss of the exact optima lies in
        ``[lo[i], hi[i]]``: the hull of its enclosures on the cell's parts in each piece.
    """
    cells = edges.size - 1
    lo, hi = np.full(cells, np.inf), np.full(cells, -np.inf)
    options = _options(bound, loss)
    # (one call for one cell too: a cell's numbers are then the same whichever cells go with it)
    many = getattr(bound, "prediction_enclosures", None)
    for p in pieces:
        first = max(int(np.searchsorted(edges, p.lo, side="right")) - 1, 0)
        idx = np.arange(first, int(np.searchsorted(edges, p.hi, side="left")))
        if only is not None:
            idx = idx[np.isin(idx, only)]
        s, e = np.maximum(edges[idx], p.lo), np.minimum(edges[idx + 1], p.hi)
        idx, s, e = idx[e > s], s[e > s], e[e > s]
        args = (p.primal, p.dual, p.gap_bound)
        for b in range(0, idx.size, _BATCH):
            part = slice(b, b + _BATCH)
            if many is not None:
                _, low, up = many(*args, s[part], e[part], X_val, **options)  # (m, q, J)
                m, q, parts = low.shape
                tl, th = loss_totals(loss, y_val, low.reshape(m, q * parts), up.reshape(m, q * parts))
                tl, th = tl.reshape(q, parts).min(axis=1), th.reshape(q, parts).max(axis=1)
            else:
                got = [bound.prediction_enclosure(*args, u, v, X_val, **options) for u, v in zip(s[part], e[part])]
                totals = [loss_totals(loss, y_val, low, up) for _, low, up in got]
                tl, th = np.array([t[0].min() for t in totals]), np.array([t[1].max() for t in totals])
            np.minimum.at(lo, idx[part], tl)
            np.maximum.at(hi, idx[part], th)
    return lo, hi


def _options(bound, loss):
    """The keywords of ``bound``'s enclosure for ``loss``: ``signs=True`` for the 0-1 error where it takes
    it (only the signs count)."""
    takes = inspect.signature(bound.prediction_enclosure).parameters
    return {"signs": True} if loss == "error" and "signs" in takes else {}


def _point_totals(bound, pieces, X_val, y_val, loss, t):
    """Bounds of one fold's summed held-out loss at ``t``: the tightest from the pieces holding it (two
    where ``t`` is an edge; each encloses the same optimum's), each pair's gap bounded at ``t`` alone
    (where the cells' pairs come from exact optima, ``t`` is one: its gap there is the optimum's)."""
    lo, hi = -np.inf, np.inf
    for p in pieces:
        if p.lo <= t <= p.hi:
            with np.errstate(over="ignore", invalid="ignore"):
                at = bound.gap(p.primal, p.dual, t)
            gap = min(p.gap_bound, at) if at == at else p.gap_bound
            _, low, up = bound.prediction_enclosure(p.primal, p.dual, gap, t, t, X_val, **_options(bound, loss))
            tl, th = loss_totals(loss, y_val, low, up)
            lo, hi = max(lo, float(tl.min())), min(hi, float(th.max()))
    return lo, hi


def claims(bounds, pieces, X_vals, y_vals, loss, edges, t, goal=float("nan")):
    """The pooled validation loss (all held-out losses summed, divided by their number) enclosed
    on the cells ``edges`` and at the choice ``t``, and the δ they prove.

    The search's cells kept enclosures of earlier versions of the folds' paths; enclosed again from
    the last pieces alone, a few of them prove less until they are narrower (a 5-fold SVM error on 80
    points: δ = 0 in the search, 1/80 on its 908 cells, 0 again with 13 cells more).  With a finite
    ``goal`` (the search's δ), every cell that keeps δ above it is halved (in log scale) and its
    halves enclosed, :data:`_ROUNDS` times at most (no new exact solve), while each round leaves
    fewer such cells and the cells at most double.

    Parameters
    ----------
    bounds, pieces, X_vals, y_vals : sequences, one entry per fold
        As :func:`fold_cover` takes them.
    loss : str
    edges : ndarray of shape (c + 1,)
        Strictly increasing.
    t : float
        The choice, in ``[edges[0], edges[-1]]``.
    goal : float, optional
        The δ to reach by halving cells; NaN (default): the cells as given.

    Returns
    -------
    edges : ndarray of shape (c' + 1,)
        The cells (``edges`` itself unless halved).
    lo, hi : ndarray of shape (c',)
        The criterion of the exact optimum on each cell (rounding of the pooling included).
    value : (float, float)
        At ``t``: its own enclosure intersected with that of the cell holding ``t`` (the tighter
        where ``t`` is an edge).
    delta : float
        ``value[1] - min(lo)`` rounded up; for the 0-1 error the largest multiple of ``1/N`` not
        above it (``N`` held-out points): no parameter's criterion is below ``value[0] - delta``.
    """
    folds, total = (bounds, pieces, X_vals, y_vals, loss), held_out(y_vals)
    lo, hi = _pooled(*folds, edges)
    point = _point(*folds, t)
    value = _at(point, edges, lo, hi, t)
    cells, before = edges.size - 1, np.inf
    for _ in range(_ROUNDS if np.isfinite(goal) else 0):
        short = short_cells(value, lo, loss, total, goal)
        # halving helps where it leaves fewer such cells each round (not where the value at t is the cause)
        if short.size >= before or edges.size + short.size > 2 * cells + 1:
            break
        before = short.size
        new = np.union1d(edges, [log_mid(edges[i], edges[i + 1]) for i in short])
        if new.size == edges.size:  # (none, or cells too narrow to halve)
            break
        old = np.searchsorted(edges, 0.5 * (new[:-1] + new[1:]), side="right") - 1
        fresh = np.flatnonzero(np.isin(old, short))
        # (a cell's enclosure does not depend on the others enclosed with it: these are verify's numbers)
        lo, hi, edges = lo[old], hi[old], new
        got_lo, got_hi = _pooled(*folds, edges, only=fresh)
        lo[fresh], hi[fresh] = got_lo[fresh], got_hi[fresh]
        value = _at(point, edges, lo, hi, t)
    return edges, lo, hi, value, delta_of(value, lo, loss, total)


def short_cells(value, lo, loss, total, goal):
    """The cells whose lower bounds ``lo`` keep δ (:func:`delta_of`) above ``goal``, indices."""
    near = np.flatnonzero(lo < value[1] - goal)  # (only these can)
    return near[[delta_of(value, lo[i:i + 1], loss, total) > goal for i in near]]


def held_out(y_vals):
    """The number of held-out points of all folds (``y_vals``: each fold's targets), a float."""
    return float(sum(len(v) for v in y_vals))


def _pooled(bounds, pieces, X_vals, y_vals, loss, edges, only=None):
    """The pooled loss's ``lo, hi`` on the cells ``edges`` (those of ``only``; the others meaningless)."""
    covers = [fold_cover(bounds[k], pieces[k], X_vals[k], y_vals[k], loss, edges, only) for k in range(len(bounds))]
    if only is not None:  # (the cells left out as 0, not inf: their sums stay numbers)
        out = np.setdiff1d(np.arange(edges.size - 1), only)
        for lo, hi in covers:
            lo[out], hi[out] = 0.0, 0.0
    every = np.ones(edges.size - 1, dtype=bool)
    _, lo, hi, _ = merge_covers([(edges, lo, hi, every) for lo, hi in covers], [1.0 / held_out(y_vals)] * len(covers))
    return lo, hi


def _point(bounds, pieces, X_vals, y_vals, loss, t):
    """The pooled loss's ``(lo, hi)`` at ``t``."""
    points = [_point_totals(bounds[k], pieces[k], X_vals[k], y_vals[k], loss, t) for k in range(len(bounds))]
    _, plo, phi, _ = merge_covers([(np.array([t, t]), np.array([a]), np.array([b]), np.ones(1, dtype=bool))
                                   for a, b in points], [1.0 / held_out(y_vals)] * len(points))
    return float(plo[0]), float(phi[0])


def _at(point, edges, lo, hi, t):
    """The enclosure at ``t``: ``point`` intersected with that of the cell holding ``t`` (the tighter
    where ``t`` is an edge)."""
    held = np.flatnonzero((edges[:-1] <= t) & (t <= edges[1:]))
    i = int(held[np.argmin(hi[held])])
    return max(point[0], float(lo[i])), min(point[1], float(hi[i]))


def delta_of(value, lo, loss, total):
    """δ of a choice with enclosure ``value`` and the cells' lower bounds ``lo``: ``value[1] - min(lo)``
    rounded up, snapped to the 0-1 error's levels ``k / total``
    (:func:`~approxpath.selection.losses.error_levels`)."""
    return float(error_levels(difference_up(value[1], float(np.min(lo))), int(total) if loss == "error" else None))


def stored_claims(lo, hi, value, loss, total):
    """What a file stores of :func:`claims`: the enclosures moved outward by
    :data:`~approxpath.numerics.STORED_PAD` of their size (so that a verifier whose kernel products
    round their last bits otherwise still finds them inside what it recomputes) and the δ they
    prove: ``(lo, hi, value, delta)``."""
    down = lambda v: v - STORED_PAD * np.abs(v)  # noqa: E731
    up = lambda v: v + STORED_PAD * np.abs(v)  # noqa: E731
    lo, hi = down(np.asarray(lo, dtype=float)), up(np.asarray(hi, dtype=float))
    value = (float(down(value[0])), float(up(value[1])))
    return lo, hi, value, delta_of(value, lo, loss, total)
