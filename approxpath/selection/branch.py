"""Branch and bound over the cells of a criterion's cover (:class:`Search`).

With ``U`` the chosen point's upper bound (minimizing) and ``L`` the smallest lower bound of any
cell, no parameter has a criterion below ``U - δ`` with ``δ = U - L``.  Every cell whose lower
bound is below ``U - tol`` ("active") is made finer (a cover of the cell: two halves).  Where
that cannot help because the certified gap, not the cell's width, limits the enclosure, the
folds' paths are recomputed there at a quarter of the pieces' gap bound (new exact solves): in
the chosen cell when the chosen point's own enclosure is wider than ``tol / 2``, and where a
halved cell kept most of its width and the enclosure at its middle point is as wide.  Where
the chosen point's enclosure stops narrowing as the gaps shrink (a held-out prediction near 0
there), its cell is halved so that the next choice is another point, a few times before the
search gives up.  Cells refined :data:`_DEPTH` times in a row without narrowing are left as they
are; once they hold the smallest lower bound the search stops.  A criterion enclosed with no
path (:class:`~.nodes.NodeClosedForm`) only halves.  A range covered again keeps what its
cells proved (both covers hold the criterion of the exact optimum: they are intersected on the
cells of both edge sets), so δ never grows; a round that changes nothing ends the search.
"""

from __future__ import annotations

import numpy as np

from ..numerics import difference_up, log_mid
from .losses import error_levels

__all__ = ["Search", "oriented"]

# A refined cell whose enclosure kept more than this share of its parent's width "stalled";
# if the enclosure at its middle point is at least half as wide, its gap is the limit.
_STALL = 0.7
# New paths are computed at this share of the largest gap bound of the pieces they replace,
# which differ by at most the factor _SIMILAR (so that every gap shrinks by 2 at least).
_TIGHTEN = 0.25
_SIMILAR = 2.0
# A cell refined this many times in a row without narrowing (each time to at least _STALL of its
# width when the run began) is left as it is: 2**_DEPTH cells where it was one, and the criterion
# there needs narrower cells still, or jumps.  (An SVM's 0-1 error over bandwidths where every
# held-out prediction is within 1e-4 of 0 split such cells on and on: 195,907 cells and 555 CPU s
# for the δ it had after 10 s.)
_DEPTH = 10
# Where the chosen point's enclosure stalls (a held-out prediction there is near 0, whatever the
# gap), its cell is halved so that the next choice is another point, this many times at most.
_MOVES = 3


def oriented(sense, lo, hi):
    """Bounds of the loss to minimize (the criterion, or minus it when it is maximized): ``(lo, hi)``
    where ``sense`` is ``"min"``, else (``"max"``) ``(-hi, -lo)``; floats or arrays."""
    return (lo, hi) if sense == "min" else (-hi, -lo)


class Search:
    """Branch and bound over the cells of a criterion's cover."""

    def __init__(self, crit, lo, hi, tol, solve):
        self.crit, self.tol, self.solve = crit, tol, solve
        # a criterion enclosed from paths (tracks) can tighten them; one with no path only halves
        self.tightens = getattr(crit, "tracks", None) is not None
        # whether a cell's [lo, hi] holds the criterion at every point of the cell (False for a
        # sampled criterion: a cell's value is a sample at other points, no bound at the choice)
        self.encloses = getattr(crit, "encloses", True)
        self.edges, lo_, hi_, self.cert = crit.cover(lo, hi)
        self.lo, self.hi = oriented(crit.sense, lo_, hi_)
        self.parent = np.full(self.lo.size, np.inf)  # width of the cell each cell was refined from
        # refinements in a row that left each cell at least _STALL of ``base`` wide (its width when the run began)
        self.depth, self.base = np.zeros(self.lo.size, dtype=int), self.hi - self.lo
        self.parked = None  # where the cells left at _DEPTH lie, when they stopped the search (:meth:`_parked`)
        self.refinements = 0
        self.widths = []  # the chosen point's enclosure width at each global tightening
        self.reason = None  # why the chosen point's enclosure stopped narrowing, while it has not narrowed since
        self.moves = 0  # times the chosen point's enclosure stalled and its cell was halved

    def best(self):
        """``(t, (low, high), delta)`` in oriented units.

        Where the criterion encloses, the point's enclosure at ``t`` and its cell's both hold the
        criterion at ``t``: their intersection does too.  A sampled criterion's cell value is the
        loss at other points of the cell (each fold's at the middle of its piece there), no bound
        at ``t``: the value at ``t`` is the sample at ``t`` alone (``low == high`` up to the
        rounding allowance)."""
        i = int(np.argmin(self.hi))
        t = log_mid(self.edges[i], self.edges[i + 1])
        _, plo, phi, _ = self.crit.cover(t, t)
        plo, phi = oriented(self.crit.sense, plo, phi)
        if self.encloses:
            value = (max(float(plo[0]), float(self.lo[i])), min(float(phi[0]), float(self.hi[i])))
        else:
            value = (float(plo[0]), float(phi[0]))
        return t, value, error_levels(difference_up(value[1], self.lo.min()), getattr(self.crit, "levels", None))

    def open_end(self, t, value):
        """The index of a cell at an end of the interval that may do at least as well as the
        choice can (its optimistic bound reaches ``value[0]``, oriented units) while the choice
        ``t`` lies inside neither end cell, or None: the criterion may be better beyond that end,
        unless refining the cell rules it out."""
        edges = self.edges
        for i, inside in ((0, t <= edges[1]), (self.lo.size - 1, t >= edges[-2])):
            if not inside and self.lo[i] <= value[0]:
                return i
        return None

    def step(self, value, only=None):
        """Refine every cell that may beat ``value[1] - tol`` (``value``: the chosen point's
        enclosure), or the cells ``only``; False when nothing can be done.  Cells refined
        :data:`_DEPTH` times in a row without narrowing are left as they are (:attr:`parked`); once
        one of them holds the smallest lower bound, nothing the search does lowers δ but a better
        choice, and it stops."""
        active = np.flatnonzero(self.lo < value[1] - self.tol) if only is None else np.asarray(only, dtype=int)
        deep, self.parked = self.depth[active] >= _DEPTH, None
        if np.any(deep):
            cells = active[deep]
            active = active[~deep]
            # they hold δ (no refinement raises L), or nothing else is left: the search stops on them
            if active.size == 0 or (only is None and self.lo[cells].min() <= self.lo.min()):
                self.parked = self._parked(cells, value)
                return False
        if active.size == 0:
            return False
        if not self.tightens:  # cells between exact optima, no path: halve (NodeClosedForm decides where)
            ranges = [(self.edges[i], self.edges[i + 1]) for i in active if self.edges[i + 1] > self.edges[i]]
            return any([self._replace(a, b, self.crit.cover(a, b)) for a, b in ranges])
        width = value[1] - value[0]
        tighten, moved = [], None
        if width > 0.5 * self.tol and only is None:
            # the gap limits the chosen point itself: tighten the chosen cell (the other active
            # cells are split or tightened below, as their own enclosures show), unless the last
            # two tightenings shrank the gaps at the chosen point (by 4 at least) and not its
            # enclosure (then the width is not the gaps')
            chosen = int(np.argmin(self.hi))
            t = log_mid(self.edges[chosen], self.edges[chosen + 1])
            gap = max(p.gap_bound for k in range(len(self.crit.tracks)) for p, _, _ in self.crit.tracks.over(k, t, t))
            self.widths.append((width, gap))
            if len(self.widths) >= 3:
                (w0, g0), (w1, g1) = self.widths[-3], self.widths[-1]
                if w1 > _STALL * w0 and g1 <= _TIGHTEN * g0:  # (a held-out prediction near 0 there)
                    self.reason = (f"the criterion's enclosure at the chosen point stopped narrowing as the gaps "
                                   f"did (width {w0:.4g} -> {w1:.4g} while the gap there went {g0:.3g} -> "
                                   f"{g1:.3g})" + (f", at {self.moves + 1} points in turn" if self.moves else ""))
                    if self.moves == _MOVES:
                        return False
                    self.moves += 1  # halve the cell: the next choice is another point
                    self.widths.clear()
                    moved = chosen
                elif w1 <= _STALL * w0:  # the chosen point narrows again: an earlier stall is no cause
                    self.reason = None
            if moved is None:
                tighten.append(chosen)
        elif only is None:  # the chosen point's enclosure is narrow: an earlier stall is no cause
            self.reason = None
        width = self.hi[active] - self.lo[active]
        stalled = active[width >= _STALL * self.parent[active]]
        stalled = [i for i in stalled if i not in tighten and i != moved]  # (a moved cell is halved)
        tighten += [i for i, wide in zip(stalled, self._wide_at_middles(stalled)) if wide]
        split = np.union1d(np.setdiff1d(active, tighten), [] if moved is None else [moved]).astype(int)
        changed = self._tighten(tighten) if tighten else []
        parts = [(self.edges[i], self.edges[i + 1]) for i in split if self.edges[i + 1] > self.edges[i]]
        parts = [p for p in parts if not any(a <= p[0] and p[1] <= b for a, b in changed)]
        ranges = changed + parts
        covers = getattr(self.crit, "covers", lambda cells: [self.crit.cover(a, b) for a, b in cells])(ranges)
        news = [self._replace(a, b, cover) for (a, b), cover in zip(ranges, covers)]
        return bool(changed) or any(news)

    def _wide_at_middles(self, cells):
        """For each of ``cells``, whether the criterion's enclosure at its middle is at least half
        as wide as the cell's (the criterion's :meth:`~.validation.Validation.wide_at` where it has
        one: it stops enclosing folds once an answer is known, and asks for many points at once)."""
        asks = [(log_mid(self.edges[i], self.edges[i + 1]), self.edges[i], self.edges[i + 1],
                 0.5 * (self.hi[i] - self.lo[i])) for i in cells]
        wide_at = getattr(self.crit, "wide_at", None)
        if wide_at is not None:
            return wide_at(asks) if asks else []
        out = []
        for t, _, _, width in asks:
            _, plo, phi, _ = self.crit.cover(t, t)
            out.append(float(phi[0] - plo[0]) >= width)
        return out

    def _parked(self, cells, value):
        """:attr:`parked` of the parked ``cells``: ``(count, lo, hi, _DEPTH, run_lo, run_hi,
        stretches)``, where they lie, the run of cells that may still beat ``value[1] - tol`` around
        them (leaving out the parked cells alone moves the stall to the interval's new end) and the
        number of stretches of adjacent cells they form."""
        cells = np.sort(cells)
        settled = np.flatnonzero(self.lo >= value[1] - self.tol)
        left, right = settled[settled < cells[0]], settled[settled > cells[-1]]
        run = (left[-1] + 1 if left.size else 0, right[0] if right.size else self.lo.size)
        return (cells.size, float(self.edges[cells[0]]), float(self.edges[cells[-1] + 1]), _DEPTH,
                float(self.edges[run[0]]), float(self.edges[run[1]]), 1 + int(np.count_nonzero(np.diff(cells) > 1)))

    def _replace(self, a, b, cover):
        """Put ``cover``, the criterion's cover of ``[a, b]``, in place of the cells inside it,
        keeping what they proved (:meth:`_kept`); whether that changed them.  A cover that neither
        splits nor narrows the cells (as the criterion of a parameter that is not the bandwidth
        may give) marks them stalled, a change the first time only."""
        i, j = np.searchsorted(self.edges, a, side="left"), np.searchsorted(self.edges, b, side="left")
        old = float(np.max(self.hi[i:j] - self.lo[i:j])) if j > i else np.inf
        edges, lo, hi, cert = cover
        lo, hi = oriented(self.crit.sense, lo, hi)
        if self.encloses and j > i:
            edges, lo, hi, cert = self._kept(i, j, edges, lo, hi, cert)
        if (edges.size == j - i + 1 and np.array_equal(edges, self.edges[i:j + 1]) and np.all(lo <= self.lo[i:j])
                and np.all(hi >= self.hi[i:j]) and np.array_equal(cert, self.cert[i:j])):
            widths = self.hi[i:j] - self.lo[i:j]  # stalled now (only a tightening can narrow them)
            fresh = not np.array_equal(self.parent[i:j], widths)
            self.parent[i:j] = widths
            return fresh
        depth, base = self._lineage(i, j, edges, hi - lo)  # (from the cells replaced: before they are)
        self.edges = np.concatenate([self.edges[:i], edges, self.edges[j + 1:]])
        self.lo = np.concatenate([self.lo[:i], lo, self.lo[j:]])
        self.hi = np.concatenate([self.hi[:i], hi, self.hi[j:]])
        self.cert = np.concatenate([self.cert[:i], cert, self.cert[j:]])
        self.parent = np.concatenate([self.parent[:i], np.full(lo.size, old), self.parent[j:]])
        self.depth = np.concatenate([self.depth[:i], depth, self.depth[j:]])
        self.base = np.concatenate([self.base[:i], base, self.base[j:]])
        return True

    def _lineage(self, i, j, edges, widths):
        """``depth, base`` of new cells (``edges``, their ``widths``) in place of cells ``i:j``
        (called before they are replaced): each new cell's from the old cell holding its middle —
        its width narrowed below :data:`_STALL` of that cell's ``base`` (or none left): depth 0
        and its own width as base; the old cell again, as it was (a range covered again around
        it): unchanged; else one more refinement without narrowing."""
        if j <= i:
            return np.zeros(widths.size, dtype=int), widths
        mids = 0.5 * (edges[:-1] + edges[1:])
        o = np.clip(np.searchsorted(self.edges[i:j + 1], mids, side="right") - 1, 0, j - i - 1) + i
        narrowed = (widths < _STALL * self.base[o]) | (widths <= 0)
        same = ((edges[:-1] == self.edges[o]) & (edges[1:] == self.edges[o + 1])
                & (widths == self.hi[o] - self.lo[o]))
        depth = np.where(narrowed, 0, np.where(same, self.depth[o], self.depth[o] + 1))
        return depth, np.where(narrowed, widths, self.base[o])

    def _kept(self, i, j, edges, lo, hi, cert):
        """A new cover of cells ``i:j`` intersected with theirs on the cells of both edges: the
        criterion at a point lies in both enclosures where both are certified (a coarser new
        cover, from tightened paths, no longer undoes what finer cells proved; δ never grows).
        A certified enclosure is kept where the other is not; edges not strictly increasing (a
        point cell) leave the new cover as it is."""
        own = self.edges[i:j + 1]
        if np.any(np.diff(edges) <= 0) or np.any(np.diff(own) <= 0):
            return edges, lo, hi, cert
        both = np.union1d(edges, own)
        mids = 0.5 * (both[:-1] + both[1:])
        n = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, lo.size - 1)
        o = np.clip(np.searchsorted(own, mids, side="right") - 1, 0, j - i - 1) + i
        n_cert, o_cert = cert[n], self.cert[o]
        # each side's bounds where it is certified (the other's where it is not, new where neither is)
        lo_n, hi_n = np.where(n_cert | ~o_cert, lo[n], -np.inf), np.where(n_cert | ~o_cert, hi[n], np.inf)
        lo_o, hi_o = np.where(o_cert, self.lo[o], -np.inf), np.where(o_cert, self.hi[o], np.inf)
        return both, np.maximum(lo_n, lo_o), np.minimum(hi_n, hi_o), n_cert | o_cert

    def _tighten(self, cells):
        """Recompute the paths under ``cells`` at a smaller ε; the changed ranges."""
        tracks = self.crit.tracks
        # a fold whose every held-out loss is known on a cell gains nothing there from new solves
        open_folds = getattr(self.crit, "open_folds", lambda a, b: range(len(tracks)))
        wanted = [set(open_folds(self.edges[i], self.edges[i + 1])) for i in cells]
        jobs = []
        for k in range(len(tracks)):
            groups = []
            for i in (i for i, ks in zip(cells, wanted) if k in ks):
                for piece, _, _ in tracks.over(k, self.edges[i], self.edges[i + 1]):
                    g = piece.gap_bound
                    # one path over neighbouring pieces of similar gaps (within _SIMILAR): its ε is
                    # then below every gap it replaces, and no part gets looser
                    if groups and piece.lo <= groups[-1][1] and max(g, groups[-1][2]) <= _SIMILAR * min(g, groups[-1][3]):
                        a, b, top, bottom = groups[-1]
                        groups[-1] = (a, max(b, piece.hi), max(top, g), min(bottom, g))
                    elif not groups or piece.hi > groups[-1][1]:
                        groups.append((piece.lo, piece.hi, g, g))
            jobs += [(k, lo, hi, _TIGHTEN * g) for lo, hi, g, _ in groups]
        done = self.solve(jobs)
        self.refinements += len(done)
        ranges = []
        for k, path in done:
            tracks.replace(k, path)
            ranges.append(path.interval)
        ranges.sort()
        merged = []
        for a, b in ranges:
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        # a range must start and end on cell edges: widen it to the cells it meets
        out = []
        for a, b in merged:
            i = max(np.searchsorted(self.edges, a, side="right") - 1, 0)
            j = min(np.searchsorted(self.edges, b, side="left"), self.edges.size - 1)
            out.append((float(self.edges[i]), float(self.edges[j])))
        return out
