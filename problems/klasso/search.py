"""The search side's memos of the kernelized LASSO (:class:`SearchBound`): kernel products by
content, the vectors of the moving duals of a segment, the last piece's primal node values.
The verifier never uses this module.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from approxpath.envelopes import split_envelope
from approxpath.moving import value_at
from approxpath.numerics import fp_margin, zero_sum

from .bound import KLassoBound

__all__ = ["SearchBound"]

# Kernel products remembered (:class:`SearchBound`): one entry per point and set of
# coefficients; a segment's cover revisits the nodes of the last few pieces and their halves
_MEMO = 64
# ... and the moving duals' vectors of this many pairs of exact solves (the segment being
# covered and its neighbours)
_BASES = 4


class SearchBound(KLassoBound):
    """:class:`KLassoBound` with the memos of a search: kernel products by content
    (:class:`~approxpath.compute.caches.ProductMemo`: the moving duals of a segment share their
    vectors, so each node of the segment is one pass over :math:`D`, shared by the pieces that
    meet there, a failed piece's halves, the weighing and the choice of a drift) and the last
    piece's primal node values (:meth:`KLasso.restore` chooses a drift with them and the
    driver's bound of the same pair on the same piece follows)."""

    _transient = KLassoBound._transient + ("_memo", "_bases", "_ends")
    remembered = _MEMO

    def moving_basis(self, da, db):
        """``(u, v)``: the vectors of the moving duals between two exact solves with the duals
        ``da``, ``db`` (fixed or scaled :class:`KLassoDual`) on the zero-sum grid, :math:`u \\approx s_a u_a`,
        :math:`v \\approx s_b u_b - s_a u_a`: the same for every piece of their segment (kept
        for the last few pairs of exact solves)."""
        bases = getattr(self, "_bases", None)
        if bases is None:
            bases = self._bases = OrderedDict()
        key = (id(da), id(db))  # the duals themselves are kept with it: the ids stay theirs
        hit = bases.get(key)
        if hit is None or hit[0] is not da or hit[1] is not db:
            ua, ub = (np.asarray(value_at(d, 0.0).u, dtype=float) for d in (da, db))
            hit = bases[key] = (da, db, zero_sum(ua), zero_sum(ub - ua))
            while len(bases) > _BASES:
                bases.popitem(last=False)
        return hit[2], hit[3]

    def point_parts(self, u, v, x):
        """``(P, N)``, each (n, 2): :math:`K_x` times the positive and the negative parts of
        ``u`` and ``v`` (columns), from the memoized products at the bandwidth ``x`` (what the
        pieces meeting at ``x`` use)."""
        P, N = split_envelope(self.remembered_products(), np.column_stack([u, v]), x, x)
        return P.f_lo, N.f_lo

    def point_sup_norm(self, u, v, theta, x):
        """A rigorous upper bound of :math:`\\lVert K_x (u + \\theta v)\\rVert_\\infty` at the
        bandwidth ``x`` from the memoized products of ``[u, v]`` there (what the pieces meeting
        at ``x`` use): the combination of the signed parts' sums, plus the kernel entries' error
        per unit of :math:`\\lVert u\\rVert_1 + |\\theta|\\lVert v\\rVert_1` and the rounding of the
        n-term sums and the few operations after them over the sums of the absolute values (as
        :meth:`kernel_sup_norm` at a point).  ``theta``: a float, or an array (r,) for as many
        bounds."""
        (pu, pv), (nu, nv) = (f.T for f in self.point_parts(u, v, x))
        theta = np.asarray(theta, dtype=float)[..., None]
        Kc = (pu - nu) + theta * (pv - nv)
        magnitude = (pu + nu) + np.abs(theta) * (pv + nv)
        entry = self._entry_error(x, x) * (float(np.abs(u).sum()) + np.abs(theta[..., 0]) * float(np.abs(v).sum()))
        bound = np.max(np.abs(Kc) + fp_margin(self.n + 8, 1.0) * magnitude, axis=-1) + entry
        return float(bound) if bound.ndim == 0 else bound

    def primal_nodes(self, primal, lo, hi, lam):
        return self._last("_memo", super().primal_nodes, primal, lo, hi, lam)

    def moving_primal_ends(self, primal, lo, hi, lam):
        return self._last("_ends", super().moving_primal_ends, primal, lo, hi, lam)

    def _last(self, name, compute, primal, lo, hi, lam):
        """``compute(primal, lo, hi, lam)``, remembered in the attribute ``name`` for the last
        piece's primal (by identity: the primal itself is kept, so its id cannot be reused):
        restore's choice of a drift, then the driver's bound of the same pair on the same piece."""
        key = (lo, hi, lam)
        memo = getattr(self, name, None)
        if memo is not None and memo[0] is primal and memo[1] == key:
            return memo[2]
        out = compute(primal, lo, hi, lam)
        if hi > lo:  # (the point checks in between are cheap and would evict it)
            setattr(self, name, (primal, key, out))
        return out
