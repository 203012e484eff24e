"""What the certificate of a choice over both parameters claims and its verifier re-proves: the pooled
validation loss of the exact optima enclosed on the grid of every fold's cells, from those cells'
certified pairs, and the choice's δ from those enclosures alone (numpy only: :func:`approxpath.verify`
imports it; :func:`approxpath.surface.select_surface` encloses its cells with the same functions).

A fold's cell :math:`R` of (bandwidth, weight) has a pair whose gap is at most its bound at every
point of :math:`R`, so the problem's ``prediction_enclosure`` (told the cell's weights) encloses the
exact optimum's held-out predictions, and :func:`~.losses.loss_totals` the fold's summed loss, at
every point of :math:`R`: :func:`cell_totals`.  The grid of every edge of every fold's cells has each
of its rectangles inside one cell of each fold; there the pooled loss (the folds' totals summed, over
the held-out points' number) lies in ``[LO, HI]`` (:func:`overlay`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .losses import loss_totals, pooled
from .proof import delta_of, held_out

__all__ = ["SurfaceProof", "cell_totals", "overlay", "surface_claims"]

# Bytes a rectangle of the grid takes while it is overlaid: LO and HI (float64), the count of the cells
# over it (int32), and what pooling them makes (the quotients, three temporaries, the results: float64).
_RECT_BYTES = 20 + 7 * 8


@dataclass(frozen=True)
class SurfaceProof:
    """What a certificate of a k-fold choice over both parameters (or one on a hold-out set) is made of.

    Attributes
    ----------
    problem : Problem
        On all the data (the training data of a hold-out set's; ``parameter="bandwidth"``).
    problems : tuple of Problem
        The folds' (trained on ``splits[k][0]``).
    splits : tuple of (ndarray, ndarray) or None
        Each fold's training and held-out indices into the data; None for a hold-out set (``problems``
        is ``(problem,)``, ``X_vals[0]`` not part of its data).
    X_vals, y_vals : tuple of ndarray
        The held-out points of each fold.
    cells : tuple of tuple of SurfaceCell
        Each fold's cells when the choice was made, tiling ``box``.
    eps : float
        The first surfaces' eps: every cell's gap bound meets it (refined cells a smaller one).
    relative : bool
    box : ((float, float), (float, float))
    """

    problem: object = field(repr=False)
    problems: tuple = field(repr=False)
    splits: tuple = field(repr=False)
    X_vals: tuple = field(repr=False)
    y_vals: tuple = field(repr=False)
    cells: tuple = field(repr=False)
    eps: float = 0.0
    relative: bool = False
    box: tuple = ()


def cell_totals(cells, primal, dual, gap, rect, X_val, y_val, loss):
    """Bounds of one fold's summed held-out loss at every point of a cell.

    Parameters
    ----------
    cells : CellBound
        The fold's.
    primal, dual
        The cell's pair, its gap at most ``gap`` on the whole cell.
    gap : float
    rect : (float, float, float, float)
        The cell ``(t_lo, t_hi, w_lo, w_hi)``.
    X_val : ndarray of shape (m, d)
    y_val : ndarray of shape (m,)
    loss : str

    Returns
    -------
    lo, hi : float
        The summed loss of the exact optimum lies in ``[lo, hi]`` at every point of the cell (the
        hull over the enclosure's sub-intervals of the bandwidth).
    """
    _, low, up = cells.prediction_enclosure(primal, dual, gap, *rect, X_val)
    lo, hi = loss_totals(loss, y_val, low, up)
    # (one hull per cell: the cells' own edges make the grid, which the sub-intervals would multiply; a
    # cell too wide for its enclosure is tiled again by the search where it matters)
    return float(lo.min()), float(hi.max())


def overlay(rects, totals, total):
    """The pooled loss enclosed on the grid of every edge of the folds' cells.

    Parameters
    ----------
    rects : sequence of ndarray of shape (m_k, 4)
        Each fold's cells ``(t_lo, t_hi, w_lo, w_hi)``, tiling one box.
    totals : sequence of ndarray of shape (m_k, 2)
        Each fold's summed loss ``(lo, hi)`` on its cells.
    total : float
        The number of held-out points.

    Returns
    -------
    t_edges, w_edges : ndarray of shape (T + 1,), (W + 1,)
    LO, HI : ndarray of shape (W, T)
        The pooled loss lies in ``[LO[j, i], HI[j, i]]`` on the rectangle
        ``[t_edges[i], t_edges[i + 1]] x [w_edges[j], w_edges[j + 1]]`` (rounding of the sums and the
        division included: :func:`~.losses.pooled`).
    owners : list of list of (int, int, int, int)
        Per fold, each cell's slice ``(j0, j1, i0, i1)`` of the grid.

    Raises
    ------
    ValueError
        A rectangle of the grid not covered by exactly one cell of each fold.
    InputError
        A grid larger than the memory available holds (:func:`~approxpath.memory.check_fits`): its
        rectangles are the product of the folds' distinct edges, a file's cells as a forger chose them.
    """
    t_edges, w_edges = _grid(rects, "choose over a smaller box or to a larger tol")
    shape = (w_edges.size - 1, t_edges.size - 1)
    LO = np.zeros(shape)
    HI, covered, owners = np.zeros_like(LO), np.zeros(shape, dtype=np.int32), []
    for r, tot in zip(rects, totals):
        i0s, i1s = np.searchsorted(t_edges, r[:, 0]), np.searchsorted(t_edges, r[:, 1])
        j0s, j1s = np.searchsorted(w_edges, r[:, 2]), np.searchsorted(w_edges, r[:, 3])
        slices = list(zip(j0s.tolist(), j1s.tolist(), i0s.tolist(), i1s.tolist()))
        for (j0, j1, i0, i1), (lo, hi) in zip(slices, tot.tolist()):
            LO[j0:j1, i0:i1] += lo
            HI[j0:j1, i0:i1] += hi
            covered[j0:j1, i0:i1] += 1
        owners.append(slices)
    if not np.all(covered == len(rects)):  # a rectangle missed or counted twice would make a false claim
        raise ValueError("the folds' cells do not tile one box")
    return (t_edges, w_edges, *pooled(LO, HI, total, len(rects)), owners)


def _grid(rects, fix):
    """``(t_edges, w_edges)``: every edge of the cells ``rects``; :class:`InputError` (saying ``fix``) where
    the grid's rectangles would not fit in the memory available (:func:`~approxpath.memory.check_fits`)."""
    from ..memory import Estimate, check_fits

    t_edges = np.unique(np.concatenate([r[:, :2].ravel() for r in rects]))
    w_edges = np.unique(np.concatenate([r[:, 2:].ravel() for r in rects]))
    rows, cols = w_edges.size - 1, t_edges.size - 1
    check_fits(Estimate(((f"{rows:,} x {cols:,} rectangles", float(rows * cols * _RECT_BYTES)),)),
               "enclosing the criterion on the grid of the folds' cells", fix)
    return t_edges, w_edges


def surface_claims(cells, pairs, rects, gaps, X_vals, y_vals, loss, t, w):
    """The pooled loss enclosed on the grid of the folds' cells and at the choice ``(t, w)``, and the δ
    they prove.

    Parameters
    ----------
    cells : sequence of CellBound
        One per fold.
    pairs : sequence of sequence of (primal, dual)
        Each fold's cells' pairs.
    rects : sequence of ndarray of shape (m_k, 4)
        Each fold's cells, tiling one box.
    gaps : sequence of ndarray of shape (m_k,)
        Each fold's cells' gap bounds.
    X_vals, y_vals : sequences of ndarray
        Each fold's held-out points.
    loss : str
    t, w : float
        The choice, a point of the box.

    Returns
    -------
    value : (float, float)
        The enclosure of the rectangle holding ``(t, w)`` (the lowest upper end where it is on an edge).
    low : float
        The smallest lower end of all rectangles: no point of the box has a loss below it.
    delta : float
        ``value[1] - low`` rounded up; for the 0-1 error the largest multiple of ``1/N`` not above
        it (:func:`~.proof.delta_of`).
    """
    _grid(rects, "verify it on a machine with more memory")  # (before any cell is enclosed: a forged file's grid)
    totals = [np.array([cell_totals(c, p, d, g, tuple(r), X_val, y_val, loss) for (p, d), r, g
                        in zip(fold_pairs, rs.tolist(), gs.tolist())]).reshape(-1, 2)
              for c, fold_pairs, rs, gs, X_val, y_val in zip(cells, pairs, rects, gaps, X_vals, y_vals)]
    t_edges, w_edges, LO, HI, _ = overlay(rects, totals, held_out(y_vals))
    cols = np.flatnonzero((t_edges[:-1] <= t) & (t <= t_edges[1:]))
    rows = np.flatnonzero((w_edges[:-1] <= w) & (w <= w_edges[1:]))
    held = HI[np.ix_(rows, cols)]
    j, i = np.unravel_index(int(np.argmin(held)), held.shape)
    value = (float(LO[rows[j], cols[i]]), float(HI[rows[j], cols[i]]))
    low = float(LO.min())
    return value, low, delta_of(value, np.array([low]), loss, held_out(y_vals))
