"""The SVM's interpolation between two exact solves (search side): combinations with a fixed
weight on the dyadic grid and the vectorized point gaps that choose the weights (moving pairs
come from the driver, :func:`approxpath.moving.interpolate`, restored by ``KernelSVM.restore``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from approxpath.bernstein import bernstein_values
from approxpath.envelopes import Envelope, hermite_lower, hermite_upper
from approxpath.numerics import dyadic_quantum
from approxpath.problem import restored_gaps

from .points import SVMDual, SVMPrimal, digest
from .repair import free_vectors, optimal_bias

__all__ = ["SVMInterpolation"]

# Interpolation weights are rounded to multiples of 2**-8: a combination of two alphas on the
# 2**-42 grid is then computed exactly (products below 2**51 ulps) and stays exactly feasible.
_THETA_BITS = 8


class SVMInterpolation:
    """The interpolation capabilities of :class:`~.problem.KernelSVM` (a mixin): ``interpolate``,
    ``interpolation_gaps``."""

    def interpolate(self, a, b, theta):
        """Exact convex combination of two duals on the grid (theta rounded to 2**-8)."""
        th = round(float(theta) * 2**_THETA_BITS) / 2**_THETA_BITS
        if th <= 0.0 or th >= 1.0:
            return a if th <= 0.0 else b
        aa, ab = a[1].alpha, b[1].alpha
        alpha = (1.0 - th) * aa + th * ab
        # exact when both parents are exactly feasible multiples of the grid q of C
        exact = self.sweep.along_bandwidth and self._on_grid(aa) and self._on_grid(ab)
        bias = (1.0 - th) * float(a[0].b) + th * float(b[0].b)
        return SVMPrimal(w=self.y * alpha, b=bias), SVMDual(alpha=alpha, mix=(aa, ab, th) if exact else None)

    def _on_grid(self, alpha):
        """Whether ``alpha`` is exactly feasible and a multiple of the grid of C.  Remembered
        by content: the parents of every mix are the same few anchors (a1a: 670 checks, 10 %
        of the certification time, for 13 arrays)."""
        return self._feasible(alpha) and self.bound.remember(
            ("grid", digest(alpha)), lambda: bool(np.all(np.mod(alpha, dyadic_quantum(self.c)) == 0)))

    def _feasible(self, alpha):
        """Whether ``alpha`` is exactly feasible (remembered by content, as :meth:`_on_grid`)."""
        return self.bound.remember(("feasible", digest(alpha)), lambda: bool(self._exactly_feasible(alpha, self.c)))

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """Vectorized over ``thetas``: two kernel products at ``tau`` (or, with ``around``,
        their Hermite estimates from the products at its ends: no kernel at ``tau``), then
        O(n) per theta."""
        if not self.sweep.along_bandwidth:
            return restored_gaps(self, a, b, thetas, tau)
        wa, wb = self.y * a[1].alpha, self.y * b[1].alpha
        alphas = (a[1].alpha, b[1].alpha)
        if around is not None and around[0] < around[1]:
            ma, mb = self._Kw_between(alphas, tau, *around)
        else:
            ma, mb = (F[:, 0] - F[:, 1] for F, *_ in self.bound.group_sums(alphas, tau))
        th = np.asarray(thetas, dtype=float)
        M = np.outer(ma, 1 - th) + np.outer(mb, th)  # K w_theta, one column per theta
        quad = (1 - th) ** 2 * (wa @ ma) + 2 * th * (1 - th) * (wa @ mb) + th**2 * (wb @ mb)
        suma = (1 - th) * a[1].alpha.sum() + th * b[1].alpha.sum()
        if self.bias == "fixed":
            bias = np.full(th.size, float(a[0].b))
        elif self.bias == "dynamic":
            bias = self._dynamic_biases(a[1].alpha, b[1].alpha, th, M)
        else:
            bias = optimal_bias(M, self.y)
        xi = np.maximum(0.0, 1.0 - self.y[:, None] * (M + bias))
        return quad + self.c * xi.sum(axis=0) - suma

    def _dynamic_biases(self, alpha_a, alpha_b, thetas, M):
        """The dynamic rule (:meth:`_rule_bias`) for each combination ``(1 - theta) alpha_a + theta
        alpha_b`` with margins ``M`` (n, k): the median of ``(y - K w)_i`` over its free support
        vectors, the optimal bias where it has none; vectorized over the k weights."""
        C = self.c
        alphas = np.outer(alpha_a, 1 - thetas) + np.outer(alpha_b, thetas)  # (n, k)
        free = free_vectors(alphas, C)
        none = ~free.any(axis=0)
        medians = np.empty(thetas.size)
        if not none.all():  # (nanmedian warns on a column without a free vector: those are below)
            medians[~none] = np.nanmedian(np.where(free[:, ~none], self.y[:, None] - M[:, ~none], np.nan), axis=0)
        if none.any():
            medians[none] = optimal_bias(M[:, none], self.y)
        return medians

    def _Kw_between(self, alphas, tau, lo, hi):
        """:math:`K_\\tau w` for each of ``alphas`` estimated from the class sums at ``lo``
        and ``hi``: the middle of their Hermite enclosure at ``tau``
        (:func:`~approxpath.envelopes.hermite_upper`), off by :math:`O((hi - lo)^5)`."""
        def compute():
            # the enclosure is linear in the six end values: its middle at tau weighs them by
            # the middle of the two polynomials of unit data (derivatives in units of the piece)
            width = hi - lo
            weights = bernstein_values(_hermite_middle(), [(tau - lo) / width])[:, 0] * np.array(
                [1.0, 1.0, width, width, width * width, width * width])
            out = []
            for S_lo, S_hi in zip(self.bound.group_sums(alphas, lo), self.bound.group_sums(alphas, hi)):
                data = (S_lo[0], S_hi[0], S_lo[1], S_hi[1], S_lo[2], S_hi[2])  # the Envelope order
                F = sum(w * x for w, x in zip(weights, data))
                out.append(F[:, 0] - F[:, 1])
            return out
        # the two weight grids of one choice ask for the same estimate
        return self.bound.remember(("between", tuple(map(digest, alphas)), (tau, lo, hi)), compute)


@lru_cache(maxsize=1)
def _hermite_middle():
    """(6, 6): the Bernstein coefficients (columns) of the middle of :func:`hermite_upper` and
    :func:`hermite_lower` for each unit end value (rows, in the order of :class:`Envelope`) on
    a piece of width 1; on width ``w`` the derivative rows scale by ``w`` and ``w**2``."""
    unit = Envelope(0.0, 1.0, *np.eye(6))
    return 0.5 * (hermite_upper(unit) + hermite_lower(unit))
