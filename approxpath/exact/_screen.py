"""The kernel path's marginal-point speed-up (Wang, Yeung and Lochovsky §3), made safe.

Between events the paper checks condition (13), :math:`|g_i| \\le \\lambda`, only for the
*marginal* inactive points, :math:`|g_i| \\ge \\lambda(1 - \\xi)` at the last event.  A point
outside that set can still cross λ before the next event; it is then found late (or never), the
solutions in between are not optimal and the late event joins a batch of stale points at once.

Here a point outside the marginal set is checked as soon as a bound can no longer exclude its
crossing.  With :math:`g = K_t r` (r the residual) at a reference :math:`t_0` where g was
computed in full, and a trial :math:`t' \\ge t_{lo}`,

.. math::

    |g_i(t') - g_i(t_0)| \\le \\min\\bigl(\\lVert\\Delta r\\rVert_1,\\;
    \\lVert\\Delta r\\rVert_\\infty \\lVert w_i\\rVert_1,\\;
    \\lVert\\Delta r\\rVert_2 \\lVert w_i\\rVert_2\\bigr)
    + |t' - t_0| \\sum_j D_{ij} e^{-t_{lo}D_{ij}} |r_j(t_0)|,

with :math:`w_{ij} = e^{-t_{lo}D_{ij}}`, because :math:`0 < e^{-t'D} \\le e^{-t_{lo}D}` and
:math:`|e^{-t'D} - e^{-t_0D}| \\le |t' - t_0|\\, D\\, e^{-\\min(t', t_0)D}`
(:math:`\\Delta r = r(t') - r(t_0)`, :math:`t_{lo} = t_0` when t increases,
:math:`\\theta^2 t_0` when it decreases; below :math:`t_{lo}` everything is checked).  The
rows whose bound stays below λ (minus the rounding of both g's) cannot violate (13) at
:math:`t'`; every other inactive row is checked with its kernel row at :math:`t'`.  So every
accepted solution satisfies (13) for all points, for every ξ, and the events are those of the
full check; ξ only decides which rows are checked without being asked for (the paper's set).
The reference moves to the solution after every event (as in the paper) and to an accepted
solution when the bound could not clear more than half of the inactive rows outside the
marginal set (computing g in full there costs about one full check and tightens the bound
again).

:class:`TaylorScreen` (the default screen) needs no reference solution: by Taylor's theorem in t
around a centre :math:`t_c`, with :math:`h = t' - t_c`, :math:`E = e^{-t_c D}` and m terms,

.. math::

    g_i(t') = \\sum_{k<m} (-h)^k \\bigl(E \\circ D^k / k!\\bigr)_{i,:}\\, r(t') + \\rho_i,\\qquad
    |\\rho_i| \\le \\frac{|h|^m}{m!} \\max_{x \\ge 0} x^m e^{-\\min(t_c, t') x} \\lVert r(t')\\rVert_1
    = \\frac{1}{m!}\\Bigl(\\frac{m|h|}{e \\min(t_c, t')}\\Bigr)^m \\lVert r(t')\\rVert_1

(Lagrange's remainder of :math:`e^{-hD}`, times :math:`e^{-t_c D}`).  The terms are stored once
per centre, so a trial costs one product with a stored (n, mn) matrix instead of a pass of
exponentials; the rows whose :math:`|\\tilde g_i| + \\rho_i` plus rounding stays at most λ are
cleared and only the others (the points near λ) are checked with their kernel rows.  The centre
moves to the trial when the remainder would no longer be small.
"""

from __future__ import annotations

import math

import numpy as np

from approxpath.compute.kernels import gaussian
from approxpath.numerics import fp_margin, kernel_entry_error

__all__ = []

# The Taylor screen keeps the remainder below this share of lambda (it picks the fewest terms that
# do and moves its centre when three do not).  The rows within it of lambda are checked with their
# kernel rows; a smaller share moves the centre more often (sinc n = 1000, t in [1, 1.5]: 1e-3 made
# 439 centres and checked 0.6 % of the rows, 27.3 s; 1e-2: 283, 2.2 %, 23.2 s; 1e-1: 5, 11 %, 18.8 s).
_REMAINDER_SHARE = 1e-1
# ... and keeps its trials within this fraction of the centre, where
# e^{-(t_c - |h|)D}(1 + t_c D) <= 1.01 for every D >= 0 (which bounds the stored terms' rounding).
_REACH = 0.1
# At most three terms (k = 0, 1, 2): the remainder (3|h|/(e t))^3/6 is 3e-5 of ||r||_1 at the
# default theta's first step (h/t = 0.053) and 4e-10 at h/t = 1e-3.
_TERMS = 3
# The terms are stored only while they take at most this many bytes (n = 3,344); beyond it the
# kernel path checks every inactive row (or uses the marginal-point screen when asked).
_TERMS_BYTES = 256 * 2**20


class Screen:
    """The rows of condition (13) to check explicitly at a trial bandwidth.

    Parameters
    ----------
    data : PathData
        Distances ``D`` (n, n), targets, λ.
    xi : float
        The paper's marginal threshold ξ in (0, 1).
    theta : float
        The kernel path's decay rate (sets :math:`t_{lo}` when t decreases).
    up : bool
        The direction of the trace (t increasing).
    """

    def __init__(self, data, xi, theta, up):
        self.data = data
        self.xi = xi
        self.floor = 1.0 if up else theta**2
        self.up = up
        self.resets = 0
        self.checked = 0  # inactive rows checked explicitly, summed over the trials
        self.inactive = 0  # inactive rows, summed over the trials

    def reset(self, t, beta, beta0, signs):
        """Compute g in full at the accepted solution ``(beta, beta0)`` at ``t`` (the new
        reference); the active set ``signs`` stays the same until the next reset (an event)."""
        d = self.data
        act = np.flatnonzero(signs)
        r = d.residual(gaussian(d.D[:, act], t), beta[act], beta0)
        self.t_ref, self.r_ref, self.r_ref_l1 = t, r, float(np.abs(r).sum())
        self.t_lo = t * self.floor
        self.inactive_idx = np.flatnonzero(signs == 0)
        K = gaussian(d.D[self.inactive_idx], t)  # the inactive rows of K_t
        g_abs = np.abs(K @ r)
        marginal = g_abs >= d.lam * (1.0 - self.xi)
        self.always = self.inactive_idx[marginal]  # the paper's marginal set
        self.out = out = self.inactive_idx[~marginal]  # the rows the bound may clear
        W = K[~marginal] if self.floor == 1.0 else gaussian(d.D[out], self.t_lo)
        self.rowsum = W.sum(axis=1)
        self.rownorm = np.sqrt(np.einsum("ij,ij->i", W, W))
        self.P = (d.D[out] * W) @ np.abs(r)
        # rounding: of a kernel entry (kernel_entry_error, d features) and of a sum of n terms
        # of magnitude 1, per unit of ||r||_1; g's at the reference, r's at a trial
        self.rel = kernel_entry_error(d.X.shape[1]) + fp_margin(d.n, 1.0)
        self.room = d.lam - g_abs[~marginal] - self.rel * self.r_ref_l1
        self.top = (self.rowsum.max(initial=0.0), self.rownorm.max(initial=0.0), self.P.max(initial=0.0),
                    self.room.min(initial=np.inf))
        self.resets += 1

    def rows(self, t, r):
        """Indices (ascending) of the inactive rows to check at the trial ``t`` with residual
        ``r`` (all of them when ``t`` is below :math:`t_{lo}`), and whether the reference
        should move to this trial if it is accepted (same active set as the reference)."""
        n_inactive = self.inactive_idx.size
        self.inactive += n_inactive
        if not t >= self.t_lo:
            self.checked += n_inactive
            return self.inactive_idx, True
        dr = np.abs(r - self.r_ref)
        l1, mx, l2, dt = float(dr.sum()), float(dr.max()), math.sqrt(float(dr @ dr)), abs(t - self.t_ref)
        # the rounding of r at the trial (||r||_1 <= ||r_ref||_1 + ||dr||_1) and of the bound's sums
        slack = self.rel * (self.r_ref_l1 + l1)
        grow = 1.0 + self.rel
        rowsum, rownorm, P, room = self.top
        if (min(l1, mx * rowsum, l2 * rownorm) + dt * P) * grow + slack <= room:  # no row can cross
            self.checked += self.always.size
            return self.always, False
        bound = (np.minimum(np.minimum(l1, mx * self.rowsum), l2 * self.rownorm) + dt * self.P) * grow + slack
        unsafe = self.out[bound > self.room]
        self.checked += self.always.size + unsafe.size
        idx = np.concatenate((self.always, unsafe)) if unsafe.size else self.always  # disjoint sets
        return np.sort(idx), 2 * unsafe.size > self.out.size


class TaylorScreen:
    """The rows of condition (13) to check explicitly at a trial bandwidth, from Taylor's
    expansion of :math:`g = K_t r` in t around a centre (see the module's docstring).

    Parameters
    ----------
    data : PathData
        Distances ``D`` (n, n), targets, λ.
    """

    def __init__(self, data):
        self.data = data
        self.t_c, self.terms = None, None  # the centre and [E, E D, E D^2 / 2], shape (n, 3n)
        self.resets = 0  # the centres formed
        self.checked = 0  # inactive rows checked explicitly, summed over the trials
        self.inactive = 0  # inactive rows, summed over the trials

    @staticmethod
    def fits(n):
        """Whether the terms of ``n`` points fit in the screen's memory."""
        return _TERMS * n * n * 8 <= _TERMS_BYTES

    def reset(self, t, beta, beta0, signs):
        """The active set ``signs`` holds from here (the solution itself is not needed)."""
        self.inactive_idx = np.flatnonzero(signs == 0)

    def release(self):
        """Free the stored terms (24n² bytes; a later trial forms them again)."""
        self.t_c, self.terms = None, None

    def _center(self, t):
        """Store the terms :math:`e^{-tD} \\circ D^k / k!`, k < 3, at the new centre ``t``."""
        d = self.data
        if self.terms is None:
            self.terms = np.empty((d.n, _TERMS * d.n))
        blocks = np.split(self.terms, _TERMS, axis=1)
        gaussian(d.D, t, out=blocks[0])
        for k in range(1, _TERMS):
            np.multiply(blocks[k - 1], d.D, out=blocks[k])
            blocks[k] /= k
        self.t_c = t
        self.resets += 1

    def _remainder(self, t, m, l1):
        """Lagrange's bound on :math:`|\\rho_i|` with ``m`` terms (1.01: its few roundings)."""
        h = abs(t - self.t_c)
        return 1.01 * (m * h / (math.e * min(t, self.t_c))) ** m / math.factorial(m) * l1

    def rows(self, t, r):
        """Indices (ascending) of the inactive rows to check at the trial ``t`` with residual
        ``r`` (the rows Taylor's bound cannot clear), and False (no reference to move).

        Rounding: each stored term is within :math:`(d + 9)(1 + k)(1 + t_c D_{ij})u` of its
        value relative to it (the kernel entry, k products with D, the power of h), and
        :math:`\\sum_k |h|^k D^k e^{-t_c D} (1 + t_c D)/k! \\le e^{-(t_c - |h|)D}(1 + t_c D) \\le
        1.01` within the reach, so the stored terms add at most :math:`3.03(d + 9)u\\lVert r
        \\rVert_1`; the product's sum of 3n terms (absolute values summing to at most
        :math:`1.01\\lVert r\\rVert_1`) and the norm itself are within ``fp_margin``."""
        d, idx = self.data, self.inactive_idx
        l1, limit = float(np.abs(r).sum()), _REMAINDER_SHARE * d.lam
        if (self.t_c is None or abs(t - self.t_c) > _REACH * self.t_c
                or self._remainder(t, _TERMS, l1) > limit):
            self._center(t)
        m = next((k for k in range(1, _TERMS) if self._remainder(t, k, l1) <= limit), _TERMS)
        h = t - self.t_c
        g = self.terms[:, :m * d.n] @ np.concatenate([(-h) ** k * r for k in range(m)])
        bound = np.abs(g[idx]) + self._remainder(t, m, l1) + fp_margin(4 * d.n + 4 * (d.X.shape[1] + 9), 1.02 * l1)
        idx = idx[bound > d.lam]
        self.inactive += self.inactive_idx.size
        self.checked += idx.size
        return idx, False
