"""The certificate side of *cells* of two parameters, the bandwidth and the weight (numpy only:
the verifier of surface certificates builds it).

A cell is a rectangle :math:`[t_1, t_2] \\times [w_1, w_2]` of the bandwidth :math:`t` of
:math:`K_t = \\exp(-tD)` and the weight :math:`w` of a kernel problem (C of the SVM, λ of the
regressions).  Its pair is held fixed in the weight (it may move with the bandwidth,
:class:`~approxpath.moving.Moving`).  For a bound with the capability ``weight_convex``
(:class:`~approxpath.bound.Bound`):

* feasibility: the feasible sets only grow with the weight, so a pair feasible at :math:`w_1`
  for every :math:`t \\in [t_1, t_2]` (the bandwidth bound's own check, at the weight
  :math:`w_1`) is feasible on the whole cell;
* the gap: at every bandwidth :math:`t` the gap :math:`g(t, w)` is convex in :math:`w`, so
  :math:`g(t, w) \\le \\max(g(t, w_1), g(t, w_2)) \\le \\max(B_1, B_2)` with :math:`B_k` the
  bandwidth bound over :math:`[t_1, t_2]` at the weight :math:`w_k`; with
  ``weight_increasing`` (a nonnegative slope) :math:`B_2` alone;
* the dual objective is concave in :math:`w` (constant for the SVM and the regressions), so
  the smaller of its two bandwidth floors bounds it below on the cell.

A bound with ``scaled_gap(primal, dual, lo, hi, base)`` and ``scaled_dual_floor(dual, lo, hi,
base)`` (the SVM's) lets a cell's dual grow with the weight: at the weight :math:`w` it is
:math:`(w / w_1)` times the stored dual, feasible wherever the stored one is at :math:`w_1` (the
feasible set is a cone scaled by the weight: :math:`0 \\le \\alpha \\le C`, :math:`y^\\top\\alpha = 0`).
The primal's objective is affine in :math:`w` and the scaled dual's objective concave in it, so
the gap is still convex in :math:`w` and the larger of the bounds at the two ends (the end
:math:`w_2` with the dual scaled by :math:`w_2/w_1`) bounds the cell; at an optimum for
:math:`w_1` it grows like :math:`(w/w_1 - 1)^2` where a dual held fixed pays a first-order term.

Each :math:`B_k` is a rigorous bound (rounding included) of the exact gap at the weight
:math:`w_k` as stored, and the inequalities hold for the exact gap, so the cell's bound is
rigorous.  The derivation, problem by problem: ``docs/surfaces.md``.
"""

from __future__ import annotations

from .errors import InputError

__all__ = ["CellBound"]


class CellBound:
    """Bounds of a problem's pairs on cells of (bandwidth, weight).

    Parameters
    ----------
    bound : KernelBound
        A bandwidth path's bound (``parameter="bandwidth"``) with the capability
        ``weight_convex``; its own weight is one of the weights it is asked at.
    at : callable, optional
        ``at(w)``: the bound at the weight ``w`` (a search hands its own, with caches); default
        ``bound.with_weight(w)``, one per weight.

    Raises
    ------
    InputError
        The bound has no cells (no ``weight_convex``) or is not a bandwidth path's.
    """

    def __init__(self, bound, at=None):
        if not getattr(bound, "weight_convex", False):
            raise InputError(f"{bound.name} bounds no cells of the bandwidth and a weight (its bound lacks "
                             "weight_convex: the gap convex and the feasible sets growing in the weight)")
        if not bound.sweep.along_bandwidth:
            raise InputError(f"cells need the bandwidth path's bound; got parameter={bound.parameter!r}")
        if not bound.interval_bound:  # (a cell's bound extends a piece's: one that holds at points proves no cell)
            raise InputError(f"{bound.name} bounds no cells of the bandwidth and a weight: its bound holds at points "
                             "only (its pieces are sampled), so no piece's, and no cell's, is proven")
        self.base = bound
        self.scaled = hasattr(bound, "scaled_gap") and hasattr(bound, "scaled_dual_floor")
        self.increasing = bool(getattr(bound, "weight_increasing", False)) and not self.scaled
        self._bounds = {float(bound.sweep.weight): bound}
        self._at = at

    @property
    def name(self):
        """The problem's name."""
        return self.base.name

    @property
    def weight(self):
        """The name of the weight option (``c``, ``lam``)."""
        return self.base.weight

    def at(self, w):
        """The bandwidth bound at the weight ``w`` (one per weight, sharing the kernel provider)."""
        w = float(w)
        if self._at is not None:
            return self._at(w)
        found = self._bounds.get(w)
        if found is None:
            found = self._bounds[w] = self.base.with_weight(w)
        return found

    def check(self, primal, dual, t_lo, t_hi, w_lo, w_hi):
        """Why the pair does not hold on the cell: the bandwidth bound's check at ``w_lo`` over
        ``[t_lo, t_hi]`` (the feasible sets grow with the weight); empty when it holds."""
        return self.at(w_lo).check(primal, dual, t_lo, t_hi)

    def gap(self, primal, dual, t_lo, t_hi, w_lo, w_hi):
        """An upper bound of the pair's gap at every point of the cell (a pair :meth:`check`
        accepts): the bandwidth bound at ``w_hi`` (``weight_increasing``) or the larger of those
        at ``w_lo`` and ``w_hi`` (there with the dual scaled by ``w_hi / w_lo`` where it grows)."""
        if w_lo == w_hi:
            return self.at(w_lo).gap(primal, dual, t_lo, t_hi)
        top = self.at(w_hi)
        top = top.scaled_gap(primal, dual, t_lo, t_hi, w_lo) if self.scaled else top.gap(primal, dual, t_lo, t_hi)
        if self.increasing:
            return top
        return max(top, self.at(w_lo).gap(primal, dual, t_lo, t_hi))

    def dual_floor(self, dual, t_lo, t_hi, w_lo, w_hi):
        """A lower bound of the dual objective on the cell, hence of the optimal value there:
        the smaller of the bandwidth floors at the two weights (concave in the weight)."""
        low = self.at(w_lo).dual_floor(dual, t_lo, t_hi)
        if w_lo == w_hi:
            return low
        top = self.at(w_hi)
        top = top.scaled_dual_floor(dual, t_lo, t_hi, w_lo) if self.scaled else top.dual_floor(dual, t_lo, t_hi)
        return min(low, top)

    def dual_scale(self, w, w_lo):
        """The factor of the stored dual at the weight ``w`` of a cell starting at ``w_lo``:
        ``w / w_lo`` where the dual grows with the weight, else 1."""
        return w / w_lo if self.scaled else 1.0

    def target(self, dual, t_lo, t_hi, w_lo, w_hi, eps, relative, pad=0.0):
        """The largest gap bound the cell may claim: ``eps``, or with ``relative`` ``eps`` times
        :meth:`dual_floor`, ``pad`` smaller (relative), as
        :func:`~approxpath.certificate.claims.target` for a piece."""
        if not relative:
            return eps
        return eps * max(0.0, self.dual_floor(dual, t_lo, t_hi, w_lo, w_hi)) * (1 - pad)

    def prediction_enclosure(self, primal, dual, gap, t_lo, t_hi, w_lo, w_hi, X_new):
        """Where the exact optimum's predictions at the rows of ``X_new`` lie at every point of
        the cell, given a pair whose gap is at most ``gap`` there: ``(edges, low, up)`` over
        ``[t_lo, t_hi]`` (the problem's ``prediction_enclosure`` at ``w_lo``, told the cell's
        weights: ``weight_range``)."""
        return self.at(w_lo).prediction_enclosure(primal, dual, gap, t_lo, t_hi, X_new, weight_range=(w_lo, w_hi))
