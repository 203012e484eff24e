"""The search side's kernel products of the SVM: :class:`SVMBound` with caches.

A path evaluates the class sums of the same few duals at the same piece ends many times, and
the duals of interpolated pieces are exact mixes of two anchors: their sums are combined from
the parents' (computed together, in one pass).  The verifier never uses this module.
"""

from __future__ import annotations

from collections import OrderedDict

from approxpath.numerics import ELSEWHERE_MARGINS, margins_of

from .bound import SVMBound
from .points import digest

__all__ = ["CachedSVMBound"]

# Class sums rounded otherwise than the direct products a verifier computes from the stored
# alpha -- a mix of two parents combined from the parents' (cached) sums, or products on a device
# (another exp, another order of sums: ``rounded_elsewhere``) -- add ELSEWHERE_MARGINS rounding
# margins instead of one (approxpath.numerics: found by the stress benchmark for mixes, a
# recomputed bound 1.65535e-06 above the stored one by more than its 1e-9 pad; on an H200, n =
# 16,000: 3 of 100 pieces recomputed ~1.5e-10 above the GPU's bound, over a pad of 1.25e-10).

# Kernel products alpha -> exp(-xD) alpha kept for this many (alphas, x) groups.
_SUMS_CACHE = 512


class CachedSVMBound(SVMBound):
    """:class:`SVMBound` with the caches of a search: class sums by (content of the group of
    alphas, x), combined from the parents' for an exact mix (with
    :data:`~approxpath.numerics.ELSEWHERE_MARGINS`, as for products on a device)."""

    _transient = SVMBound._transient + ("_cache",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self._cache = OrderedDict()

    def remember(self, key, compute):
        """``compute()`` kept under ``key`` (least recently used first out)."""
        if self._cache is None:  # after unpickling: the cache is not shipped
            self._cache = OrderedDict()
        cache = self._cache
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
        value = cache[key] = compute()
        while len(cache) > _SUMS_CACHE:
            cache.popitem(last=False)
        return value

    def group_sums(self, alphas, x, order=2):
        # kept with the order computed (an exact solve's point gap needs the sums alone: a pass
        # of a third of the work); a higher order is computed afresh, the sums the same bits
        key = ("sums", tuple(map(digest, alphas)), float(x))
        hit = self.remember(key, lambda: super(CachedSVMBound, self).group_sums(alphas, x, order))
        if len(hit[0]) <= order:
            hit = self._cache[key] = super().group_sums(alphas, x, order)
        return [S[: order + 1] for S in hit]

    def _sums(self, dual, x, order=2):
        if dual.mix is not None:
            aa, ab, th = dual.mix
            pa, pb = self.group_sums((aa, ab), x)
            return tuple((1.0 - th) * Sa + th * Sb for Sa, Sb in zip(pa[: order + 1], pb[: order + 1]))
        return super()._sums(dual, x, order)

    def margin_count(self, dual):
        return ELSEWHERE_MARGINS if getattr(dual, "mix", None) is not None else margins_of(self.kernels)
