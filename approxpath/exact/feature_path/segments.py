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

Their difference, plus rounding allowances, bounds the gap at every s of the piece.  This
bound is first order in the piece's length.  For the ARD-Gaussian kernel a second bound
(:meth:`_Segment.taylor`) moves the primal linearly with s and expands the residual and both
quadratic forms to second order around the piece's middle with remainders bounded by the same
entrywise maxima (:math:`|\\Delta|^k\\circ\\overline K`); the linear terms cancel at the inner
optimum (envelope theorem), so it is second order; the smaller bound is used.  Pieces are
halved, the largest bound first, until every bound is at most ε (relative to
:math:`\\lVert y - \\bar y\\rVert^2`) or a budget of pieces is spent: the segment is then
reported *not certified*, with its largest bound.  This certifies the inner (convex) problem
along the segment only, not that the segment follows the path of problem (1).
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from approxpath.compute.parallelism import managed
from approxpath.errors import InputError, SolverError
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, zero_sum
from approxpath.validate import count, positive

from ._kernels import make_kernel
from ._kkt import inner_solve
from .result import SegmentCheck, SegmentReport

__all__ = ["certify_segments"]

# Pieces shorter than this (of a segment) may use exact solves at their ends: by then the
# halving has brought the Taylor remainder below the interpolation's own error (measured on
# Friedman #1: shorter thresholds certify fewer segments, longer ones solve for nothing).
_SOLVE_BELOW = 1.0 / 16


@managed
def certify_segments(path, *, eps=1e-3, max_pieces=64, indices=None, solves=True, progress=False):
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
    solves : bool
        Allow exact inner solves at the ends of short pieces (ARD-Gaussian).  Without them the
        pairs come from the path's own points only, so the report also checks the path's
        claimed solutions between its points.
    progress : bool
        A bar over the segments on stderr (the ``progress`` extra, tqdm; none without it): a
        path of a few hundred points takes tens of seconds.

    Returns
    -------
    SegmentReport
    """
    t0 = time.perf_counter()
    eps, max_pieces = positive("eps", eps), count("max_pieces", max_pieces)
    kern = make_kernel(path.kernel, path.X, path.degree)
    y = path.y
    scale = float(np.sum((y - y.mean()) ** 2))
    idx = range(len(path) - 1) if indices is None else [_segment_index(i, len(path) - 1) for i in indices]
    out = []
    bar = None
    if progress:
        from approxpath.progress import count_bar

        bar = count_bar(True, len(idx), "segments", "segments")
    for i in idx:
        seg = _Segment(kern, y, path.C, path.beta[i], path.beta[i + 1], path.alpha[i], path.alpha[i + 1],
                       float(path.alpha0[i]), float(path.alpha0[i + 1]), solves=solves)
        # halve the piece of the largest bound first, so a spent budget leaves even pieces
        heap = [(-seg.piece(0.0, 1.0, eps * scale)[0] / scale, 0.0, 1.0)]
        while -heap[0][0] > eps and len(heap) < max_pieces:
            _, s0, s1 = heapq.heappop(heap)
            for a, b in ((s0, 0.5 * (s0 + s1)), (0.5 * (s0 + s1), s1)):
                heapq.heappush(heap, (-seg.piece(a, b, eps * scale)[0] / scale, a, b))
        worst, done = -heap[0][0], len(heap)
        delta = path.beta[i + 1] - path.beta[i]
        out.append(SegmentCheck(index=i, D=(float(path.D[i]), float(path.D[i + 1])), certified=bool(worst <= eps),
                                max_gap=float(worst), pieces=done,
                                mixed_sign=bool(np.any(delta > 0) and np.any(delta < 0))))
        if bar is not None:
            bar.done()
    if bar is not None:
        bar.close()
    return SegmentReport(eps=eps, max_pieces=max_pieces, segments=tuple(out), wall_s=time.perf_counter() - t0)


class _Segment:
    """One segment: kernels at piece ends (cached) and the gap bound of a piece."""

    def __init__(self, kern, y, C, beta_a, beta_b, alpha_a, alpha_b, a0_a, a0_b, solves=True):
        self.kern, self.y, self.C, self.solves = kern, y, C, solves
        self.ends = (np.asarray(beta_a, float), np.asarray(beta_b, float))
        self.alphas, self.a0 = (np.asarray(alpha_a, float), np.asarray(alpha_b, float)), (a0_a, a0_b)
        self._K = {}
        self.delta = None
        if hasattr(kern, "dist"):  # the Gaussian, exp(-sum_k beta_k D_k): Delta = sum_k delta_k D_k
            d = self.ends[1] - self.ends[0]
            feats = np.flatnonzero(d)
            n = y.size
            self.delta = sum((d[k] * kern.dist(k) for k in feats), np.zeros((n, n)))
            # the computed Delta: each term 4 roundings (a difference, a square, a product), then
            # the sum of len(feats) terms, relative to sum |delta_k| D_k
            mag = sum((abs(d[k]) * kern.dist(k) for k in feats), np.zeros((n, n)))
            self.delta_err = fp_margin(len(feats) + 4, 1.0) * mag

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

    def piece(self, s0, s1, target=0.0):
        """``(gap bound, primal, u)`` of the piece [s0, s1]: ``primal(s)`` is the pair's
        :math:`(\\alpha, \\alpha_0)` at s, u its dual (fixed); the bound holds at every s.  The
        smaller of the interval bound and (ARD-Gaussian) the second-order bound of
        :meth:`taylor`, the latter with exact solves at the piece's ends when the bound is above
        ``target`` (absolute) with the segment's interpolation."""
        best = self.interval(s0, s1)
        if self.delta is not None and s1 > s0:
            for exact in (False, True):
                # exact solves cost O(n^3): only once halving has left the interpolation's floor
                if exact and (best[0] <= target or not self.solves or s1 - s0 > _SOLVE_BELOW):
                    break
                g = self.taylor(s0, s1, exact=exact)
                if g[0] < best[0]:
                    best = g
        return best

    def _dual(self, K, alpha, alpha0):
        """The centred residual at (K, alpha, alpha0), best scaled, summing to 0 exactly."""
        r = self.y - K @ alpha - alpha0
        u0 = r - r.mean()
        nu = float(u0 @ u0)
        t = 0.0
        if nu > 0:
            t = max(0.0, (float(u0 @ self.y) - math.sqrt(self.C * max(float(u0 @ (K @ u0)), 0.0))) / nu)
        return zero_sum(t * u0)

    def interval(self, s0, s1):
        """The first-order bound (module docstring) of the fixed pair at the piece's middle."""
        n, u_ = self.y.size, UNIT_ROUNDOFF
        (K0, e0), (K1, e1) = self.kernel(s0), self.kernel(s1)
        e = max(e0, e1)
        Klo, Khi = np.minimum(K0, K1) - e, np.maximum(K0, K1) + e
        alpha, alpha0 = self.pair(0.5 * (s0 + s1))
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
        u = self._dual(0.5 * (K0 + K1), alpha, alpha0)
        qu = _quad_up(u, Klo, Khi)
        d_lo = self._dual_value(u, qu)
        gap = p_up - d_lo + fp_margin(2, abs(p_up) + abs(d_lo))
        return gap, (lambda s, a=alpha, a0=alpha0: (a, a0)), u

    def _dual_value(self, u, qu_up):
        """Lower bound of :math:`2u^\\top y - \\lVert u\\rVert^2 - 2\\sqrt{C q}` for every
        :math:`q \\le` ``qu_up``, rounding included."""
        n = self.y.size
        root = math.sqrt(self.C * max(qu_up, 0.0)) * (1.0 + 4 * UNIT_ROUNDOFF)
        d = 2.0 * float(u @ self.y) - float(u @ u) - 2.0 * root
        return d - fp_margin(2 * n + 4, 2.0 * float(np.abs(u) @ np.abs(self.y)) + float(u @ u) + 2.0 * root)

    def solve(self, s):
        """The inner problem at :math:`\\beta(s)` solved exactly (``inner_solve``), cached; None
        where its bound is not active."""
        key = ("solve", s)
        if key not in self._K:
            try:
                self._K[key] = inner_solve(self.kernel(s)[0], self.y, self.C)[:2]
            except SolverError:
                self._K[key] = None
        return self._K[key]

    def taylor(self, s0, s1, exact=False):
        """The second-order bound of the ARD-Gaussian kernel (t = s - s_m, |t| <= tau).

        The primal moves with s, linearly between the segment's two points
        (:math:`\\alpha(s) = \\sigma((1-s)\\alpha_a + s\\alpha_b)`) or, with ``exact``, between
        exact inner solves at the piece's ends; :math:`\\alpha_0(s)` likewise (σ one shrink for
        the piece); u is fixed.  With
        :math:`K(t) = K_m \\circ e^{-t\\Delta}`, :math:`K' = -\\Delta\\circ K`,
        :math:`K'' = \\Delta^2\\circ K`, and every entry of K on the piece at most
        :math:`\\overline K` (monotone entries):

        * :math:`r(t) = r_0 + t r_1 + E`, :math:`r_1 = -\\dot\\alpha_0 + (\\Delta\\circ K_m)\\alpha_m
          - K_m\\dot\\alpha`, :math:`|E_i| \\le \\tfrac12 t^2 \\rho_i`, :math:`\\rho = (\\Delta^2
          \\circ\\overline K)|\\alpha|_{max} + 2(|\\Delta|\\circ\\overline K)|\\dot\\alpha|`;
        * :math:`\\alpha^\\top K\\alpha` and :math:`u^\\top K u` likewise (value, derivative,
          remainder), and :math:`\\sqrt q \\le \\sqrt{q_0} + (q - q_0)/(2\\sqrt{q_0})`;
        * so the gap is below a convex quadratic in t plus constants: its maximum is at
          :math:`t = \\pm\\tau`.  At the inner optimum the linear terms cancel (envelope
          theorem), so the bound is second order in τ.
        """
        n, u_ = self.y.size, UNIT_ROUNDOFF
        sm, tau = 0.5 * (s0 + s1), 0.5 * (s1 - s0)
        (K0, e0), (K1, e1), (Km, em) = self.kernel(s0), self.kernel(s1), self.kernel(sm)
        e = max(e0, e1, em)
        Khi = np.maximum(K0, K1) + e
        Dl, dDl = self.delta, self.delta_err
        aD = np.abs(Dl) + dDl
        D1 = aD * Khi  # bounds |Delta o K| on the piece
        D2 = aD * D1  # bounds |Delta^2 o K|
        dK1 = e * aD + dDl * Khi  # error of each computed entry of Delta o K_m
        if exact:
            ends = self.solve(s0), self.solve(s1)
            if ends[0] is None or ends[1] is None:
                return math.inf, None, None
            (xa, ca), (xb, cb) = ends
            h = s1 - s0
            am, a0m = 0.5 * (xa + xb), 0.5 * (ca + cb)
            ad, a0d = (xb - xa) / h, (cb - ca) / h

            def line(s):
                w = (s - s0) / h
                return (1.0 - w) * xa + w * xb, (1.0 - w) * ca + w * cb

            spread = np.abs(xa) + np.abs(xb)
        else:
            (aa, ab), (a0a, a0b) = self.alphas, self.a0
            am, a0m = self.pair(sm)
            ad, a0d = ab - aa, a0b - a0a
            line = self.pair
            spread = np.abs(aa) + np.abs(ab)
        # the pair is the exact line am + t ad (computed coefficients); evaluating it as line(s)
        # differs by at most 8u (|alpha at the ends|) per entry (a handful of roundings each)
        ev = 8 * u_ * spread
        amax = np.abs(am) + tau * np.abs(ad)
        DKm = Dl * Km
        # alpha(t)' K(t) alpha(t) <= Q0 + tau |Q1| + tau^2 rho_Q / 2
        Q0 = float(am @ (Km @ am))
        Q1 = 2.0 * float(ad @ (Km @ am)) - float(am @ (DKm @ am))
        rhoQ = 2.0 * float(np.abs(ad) @ (Khi @ np.abs(ad))) + 4.0 * float(np.abs(ad) @ (D1 @ amax)) + float(
            amax @ (D2 @ amax))
        a1, d1 = float(np.sum(np.abs(am))), float(np.sum(np.abs(ad)))
        errQ = e * a1 * a1 + 2 * float(np.max(dK1)) * a1 * a1 + 2 * e * a1 * d1 + fp_margin(
            4 * n, float(np.abs(am) @ (Khi @ np.abs(am))) + 2 * float(np.abs(ad) @ (Khi @ np.abs(am)))
            + float(np.abs(am) @ (D1 @ np.abs(am))) + rhoQ)
        # sqrt of the largest alpha'K alpha, plus what the evaluation of alpha(s) (relative error
        # 2u per entry) can add to the K-norm: 2u sqrt(|alpha|'K|alpha|) (triangle inequality)
        root_q = math.sqrt(max(Q0 + tau * abs(Q1) + 0.5 * tau * tau * rhoQ + errQ, 0.0)) + math.sqrt(
            float(ev @ (Khi @ ev)))
        sigma = 1.0 if root_q * (1.0 + 4 * u_) <= math.sqrt(self.C) else math.sqrt(self.C) / root_q * (1.0 - 8 * u_)
        am, ad, amax = sigma * am, sigma * ad, sigma * amax * (1.0 + 2 * u_)
        a1, d1 = sigma * a1 * (1.0 + 2 * u_), sigma * d1 * (1.0 + 2 * u_)
        # the residual: value, derivative, remainder (with the rounding of r0 and r1 folded in)
        Kam = Km @ am
        r0 = self.y - a0m - Kam
        r1 = -a0d + DKm @ am - Km @ ad
        rho = D2 @ amax + 2.0 * (D1 @ np.abs(ad))
        big = float(np.max(np.abs(self.y) + abs(a0m) + np.abs(Kam) + np.abs(DKm) @ np.abs(am)
                           + Khi @ np.abs(ad) + abs(a0d)))
        # errors of r0, r1 (kernel entries, Delta o K_m, sums) and of evaluating alpha(s) itself
        dr = e * a1 + float(np.max(dK1)) * a1 + e * d1 + fp_margin(2 * n + 4, big) + float(np.max(Khi @ ev))
        E = 0.5 * tau * tau * rho * (1.0 + fp_margin(2 * n + 8, 1.0)) + dr * (1.0 + tau)
        p_ends = [float(np.sum((r0 + t * r1) ** 2)) for t in (-tau, tau)]
        p_rem = float(np.sum(2.0 * (np.abs(r0) + tau * np.abs(r1)) * E + E * E))
        # the dual: u fixed, u'K(t)u <= q0 + t q1 + tau^2 rho_u / 2, sqrt linearized at q0
        u = self._dual(Km, am, a0m)
        q0 = float(u @ (Km @ u))
        q1 = -float(u @ (DKm @ u))
        rho_u = float(np.abs(u) @ (D2 @ np.abs(u)))
        u1 = float(np.sum(np.abs(u)))
        errq = e * u1 * u1 + float(np.max(dK1)) * u1 * u1 + fp_margin(
            4 * n, float(np.abs(u) @ (Khi @ np.abs(u))) + float(np.abs(u) @ (D1 @ np.abs(u))) + rho_u)
        q0_lo = q0 - errq
        if not q0_lo > 0:
            return math.inf, None, u
        c0 = self._dual_value(u, 0.0)  # 2u'y - ||u||^2, rounding included
        sc = math.sqrt(self.C)
        root0 = math.sqrt(q0 + errq) * (1.0 + 2 * u_)
        # sqrt(q(t)) <= sqrt(q0) + (t q1 + |err| + tau^2 rho_u / 2) / (2 sqrt(q0_lo))
        lin = sc * (errq * 3 + 0.5 * tau * tau * rho_u) / math.sqrt(q0_lo)  # errq: of q0, and tau <= 1/2 of q1
        ends = [p + t * sc * q1 / math.sqrt(q0_lo) if t * q1 >= 0 else p + t * sc * q1 / root0
                for p, t in zip(p_ends, (-tau, tau))]
        body = max(ends) + p_rem + lin + 2.0 * sc * root0 - c0
        gap = body + fp_margin(2 * n + 16, max(p_ends) + p_rem + lin + 2.0 * sc * root0 + abs(c0)
                               + tau * sc * abs(q1) / math.sqrt(q0_lo))
        def primal(s, sg=sigma):
            a, c = line(s)
            return sg * a, c

        return gap, primal, u


def _quad_up(v, Klo, Khi):
    """Upper bound of :math:`v^\\top K v` over every K with :math:`\\underline K \\le K \\le
    \\overline K` entrywise (positive products at the top, negative at the bottom), rounding
    included."""
    vp, vm = np.maximum(v, 0.0), np.maximum(-v, 0.0)
    q = float(vp @ (Khi @ vp) + vm @ (Khi @ vm) - 2.0 * (vp @ (Klo @ vm)))
    mag = float(np.abs(v) @ (np.abs(Khi) @ np.abs(v))) + float(np.abs(v) @ (np.abs(Klo) @ np.abs(v)))
    return max(q, 0.0) + fp_margin(2 * v.size + 4, mag)


def _segment_index(i, segments):
    """``i`` as a segment index (0 to ``segments`` - 1: segment i joins points i and i + 1), or
    :class:`InputError` (a negative index ran from the last point to the first)."""
    if not (isinstance(i, (int, np.integer)) and not isinstance(i, bool) and 0 <= i < segments):
        raise InputError(f"indices must be segment indices, integers from 0 to {segments - 1} (segment i joins "
                         f"points i and i + 1); got {i!r}")
    return int(i)
