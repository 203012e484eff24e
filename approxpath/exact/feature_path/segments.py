"""Certified inner paths between consecutive points of a feature path.

Between points a and b of a path take the straight segment of feature weights
:math:`\\beta(s) = (1 - s)\\beta_a + s\\beta_b`, :math:`s \\in [0, 1]`, and its inner problem (the
kernel ridge regression with intercept of :mod:`.certify`, at the kernel :math:`K(\\beta(s))`).
It is convex for every s, so a primal-dual pair held fixed on a piece :math:`[s_0, s_1]` is
ε-optimal there when an upper bound of its duality gap over the whole piece is at most ε.

**The kernel along a segment.**  With :math:`\\delta = \\beta_b - \\beta_a` the ARD-Gaussian
kernel is

.. math::

    K(\\beta(s)) = W \\circ \\exp(-s D_{\\delta^+}) \\circ \\exp(+s D_{\\delta^-}),
    \\qquad W = K(\\beta_a) > 0,\\quad D_{\\delta^\\pm} = \\sum_k \\delta_k^\\pm D_k \\ge 0,

with :math:`\\delta^\\pm` the positive and negative parts of δ and :math:`(D_k)_{ij} = (x_{ik} -
x_{jk})^2`.  Where δ ≥ 0 (no feature loses weight: monotone) this is :math:`\\exp(-s D_\\delta)`
times fixed positive weights, the form of every bandwidth bound of the package; where δ has
both signs the split by sign leaves each entry :math:`W_{ij} e^{-s\\Delta_{ij}}`,
:math:`\\Delta = D_{\\delta^+} - D_{\\delta^-}`, still monotone in s (increasing or
decreasing by the sign of :math:`\\Delta_{ij}`).  The ARD-polynomial kernel's entries are
:math:`(1 + S_{ij}(s))^m` with :math:`S_{ij}` a ratio of two affine functions of s whose
denominator :math:`1 + \\lVert\\beta(s)\\rVert_1` is positive, and :math:`1 + S > 0`: monotone
too.  So on a piece every entry lies between its values at the piece's ends (each widened by
twice the kernel's own rounding bound, which also covers the rounding of :math:`\\beta(s)`).

**The bound of a piece.**  The pair is the linear interpolation of the two points' solutions
at the piece's middle (primal :math:`(\\alpha, \\alpha_0)`; the dual u is the centred residual
there, best scaled, with :math:`\\mathbf 1^\\top u = 0` exactly).  With entrywise bounds
:math:`\\underline K \\le K(s) \\le \\overline K` on the piece and sums split by sign:

* feasibility for every s: :math:`\\alpha^\\top K(s)\\alpha \\le \\sum (\\alpha\\alpha^\\top)^+
  \\circ\\overline K - \\sum(\\alpha\\alpha^\\top)^-\\circ\\underline K =: Q_\\alpha`, and α is
  shrunk by :math:`\\sqrt{C/Q_\\alpha}` when :math:`Q_\\alpha > C`;
* primal: :math:`r(s) = y - \\alpha_0 - K(s)\\alpha` lies in an interval per entry, so
  :math:`\\lVert r(s)\\rVert^2 \\le \\sum_i \\max(\\underline r_i^2, \\overline r_i^2)`;
* dual: :math:`2u^\\top y - \\lVert u\\rVert^2 - 2\\sqrt{C\\,u^\\top K(s)u}` is at least its value
  with :math:`u^\\top K(s) u` replaced by its upper bound :math:`Q_u`.

Their difference, plus rounding allowances, bounds the gap at every s of the piece.  The bound
is first order in the piece's length, so pieces are halved until it is at most ε (relative to
:math:`\\lVert y - \\bar y\\rVert^2`) or a budget of pieces is spent: the segment is then
reported *not certified*, with its largest bound.  This certifies the inner (convex) problem
along the segment only, not that the segment follows the path of problem (1).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, zero_sum
from approxpath.validate import count, positive

__all__ = ["SegmentCheck", "SegmentReport", "certify_segments"]


@dataclass(frozen=True)
class SegmentCheck:
    """The inner path between points ``index`` and ``index + 1``.

    Attributes
    ----------
    index : int
    D : tuple of float
        :math:`\\lVert\\beta\\rVert_1` at both ends.
    certified : bool
        Every piece's gap bound is at most ε.
    max_gap : float
        The largest gap bound over the segment, relative to :math:`\\lVert y - \\bar y\\rVert^2`.
    pieces : int
        Pieces the segment was cut into.
    mixed_sign : bool
        δ has both signs (the kernel was split by sign).
    """

    index: int
    D: tuple
    certified: bool
    max_gap: float
    pieces: int
    mixed_sign: bool


@dataclass(frozen=True)
class SegmentReport:
    """Certified inner paths along the segments of a feature path (:func:`certify_segments`)."""

    eps: float
    max_pieces: int
    segments: tuple
    wall_s: float = 0.0

    @property
    def certified_fraction(self):
        return float(np.mean([s.certified for s in self.segments])) if self.segments else math.nan

    @property
    def max_gap(self):
        return max((s.max_gap for s in self.segments), default=math.nan)

    @property
    def uncertified(self):
        return tuple(s.index for s in self.segments if not s.certified)

    def __repr__(self):
        return (f"SegmentReport({sum(s.certified for s in self.segments)} of {len(self.segments)} segments certified "
                f"at eps {self.eps:g}, max gap bound {self.max_gap:.2g})")

    def to_json(self):
        return {"eps": self.eps, "segments": len(self.segments), "certified_fraction": self.certified_fraction,
                "max_gap": self.max_gap, "uncertified": list(self.uncertified), "wall_s": round(self.wall_s, 4)}


def certify_segments(path, *, eps=1e-3, max_pieces=64, indices=None):
    """Certify the inner kernel ridge problem along segments of a feature path.

    Parameters
    ----------
    path : FeaturePath
    eps : float
        A piece is certified when its gap bound is at most ``eps`` times
        :math:`\\lVert y - \\bar y\\rVert^2`.
    max_pieces : int
        Pieces per segment at most (halving); a segment needing more is not certified.
    indices : sequence of int, optional
        Segments to check (segment i joins points i and i + 1); all by default.

    Returns
    -------
    SegmentReport
    """
    t0 = time.perf_counter()
    eps, max_pieces = positive("eps", eps), count("max_pieces", max_pieces)
    kern = path._kern()
    y = path.y
    scale = float(np.sum((y - y.mean()) ** 2))
    idx = range(len(path) - 1) if indices is None else [int(i) for i in indices]
    out = []
    for i in idx:
        seg = _Segment(kern, y, path.C, path.beta[i], path.beta[i + 1], path.alpha[i], path.alpha[i + 1],
                       float(path.alpha0[i]), float(path.alpha0[i + 1]))
        # halve the piece of the largest bound first, so a spent budget leaves even pieces
        heap = [(-seg.piece(0.0, 1.0)[0] / scale, 0.0, 1.0)]
        while -heap[0][0] > eps and len(heap) < max_pieces:
            _, s0, s1 = heapq.heappop(heap)
            for a, b in ((s0, 0.5 * (s0 + s1)), (0.5 * (s0 + s1), s1)):
                heapq.heappush(heap, (-seg.piece(a, b)[0] / scale, a, b))
        worst, done = -heap[0][0], len(heap)
        delta = path.beta[i + 1] - path.beta[i]
        out.append(SegmentCheck(index=i, D=(float(path.D[i]), float(path.D[i + 1])), certified=bool(worst <= eps),
                                max_gap=float(worst), pieces=done,
                                mixed_sign=bool(np.any(delta > 0) and np.any(delta < 0))))
    return SegmentReport(eps=eps, max_pieces=max_pieces, segments=tuple(out), wall_s=time.perf_counter() - t0)


class _Segment:
    """One segment: kernels at piece ends (cached) and the gap bound of a piece."""

    def __init__(self, kern, y, C, beta_a, beta_b, alpha_a, alpha_b, a0_a, a0_b):
        self.kern, self.y, self.C = kern, y, C
        self.ends = (np.asarray(beta_a, float), np.asarray(beta_b, float))
        self.alphas, self.a0 = (np.asarray(alpha_a, float), np.asarray(alpha_b, float)), (a0_a, a0_b)
        self._K = {}

    def kernel(self, s):
        """(K, entry error) at :math:`\\beta(s)`; the error is twice the kernel's own bound (the
        rounding of :math:`\\beta(s)` moves each exponent term by 3u relative, less than the 4u
        per product the kernel's bound already allows)."""
        if s not in self._K:
            a, b = self.ends
            beta = a if s == 0.0 else b if s == 1.0 else np.maximum((1.0 - s) * a + s * b, 0.0)
            ev = self.kern.at(beta)
            self._K[s] = (ev.K, 2.0 * ev.entry_error())
        return self._K[s]

    def pair(self, s):
        """The interpolated primal :math:`(\\alpha, \\alpha_0)` at s."""
        aa, ab = self.alphas
        return (1.0 - s) * aa + s * ab, (1.0 - s) * self.a0[0] + s * self.a0[1]

    def piece(self, s0, s1):
        """(gap bound, alpha, alpha0, u) of the piece [s0, s1]: the bound holds at every s."""
        n, u_ = self.y.size, UNIT_ROUNDOFF
        (K0, e0), (K1, e1) = self.kernel(s0), self.kernel(s1)
        e = max(e0, e1)
        Klo, Khi = np.minimum(K0, K1) - e, np.maximum(K0, K1) + e
        sm = 0.5 * (s0 + s1)
        alpha, alpha0 = self.pair(sm)
        Kmid = 0.5 * (K0 + K1)
        # feasibility over the piece, then the shrink (its own 4 roundings covered by 8u)
        qa = _quad_up(alpha, Klo, Khi)
        if qa > self.C:
            alpha = alpha * (math.sqrt(self.C / qa) * (1.0 - 8 * u_))
        ap, am = np.maximum(alpha, 0.0), np.maximum(-alpha, 0.0)
        ka_lo, ka_hi = Klo @ ap - Khi @ am, Khi @ ap - Klo @ am
        mag = Khi @ np.abs(alpha)
        # each product sum is two sums of length n; then two subtractions (and room for one more)
        dr = fp_margin(2 * n, float(np.max(mag))) + fp_margin(3, float(np.max(np.abs(self.y) + abs(alpha0) + mag)))
        r_lo = self.y - alpha0 - ka_hi - dr
        r_hi = self.y - alpha0 - ka_lo + dr
        p_up = float(np.sum(np.maximum(r_lo * r_lo, r_hi * r_hi)))
        p_up += fp_margin(n + 2, p_up)
        # the dual: centred residual at the middle, best scaled, summing to 0 exactly
        r = self.y - Kmid @ alpha - alpha0
        u0 = r - r.mean()
        nu = float(u0 @ u0)
        t = 0.0
        if nu > 0:
            t = max(0.0, (float(u0 @ self.y) - math.sqrt(self.C * max(float(u0 @ (Kmid @ u0)), 0.0))) / nu)
        u = zero_sum(t * u0)
        qu = _quad_up(u, Klo, Khi)
        d_lo = 2.0 * float(u @ self.y) - float(u @ u) - 2.0 * math.sqrt(self.C * qu) * (1.0 + 4 * u_)
        d_lo -= fp_margin(2 * n + 4, 2.0 * float(np.abs(u) @ np.abs(self.y)) + float(u @ u)
                          + 2.0 * math.sqrt(self.C * qu))
        gap = p_up - d_lo
        return gap + fp_margin(2, abs(p_up) + abs(d_lo)), alpha, alpha0, u


def _quad_up(v, Klo, Khi):
    """Upper bound of :math:`v^\\top K v` over every K with :math:`\\underline K \\le K \\le
    \\overline K` entrywise (positive products at the top, negative at the bottom), rounding
    included."""
    vp, vm = np.maximum(v, 0.0), np.maximum(-v, 0.0)
    q = float(vp @ (Khi @ vp) + vm @ (Khi @ vm) - 2.0 * (vp @ (Klo @ vm)))
    mag = float(np.abs(v) @ (np.abs(Khi) @ np.abs(v))) + float(np.abs(v) @ (np.abs(Klo) @ np.abs(v)))
    return max(q, 0.0) + fp_margin(2 * v.size + 4, mag)
