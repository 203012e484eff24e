"""Certificate side shared by the kernel regression problems (``klasso``, ``robust_l1``): the
options ``lam``/``bandwidth``/``parameter``, and the rigorous bounds on a piece that their dual
constraint :math:`\\lVert K_t u\\rVert_\\infty \\le \\lambda` and their residuals need.

Private module (the registry skips names starting with ``_``); numpy only.
"""

from __future__ import annotations

import numpy as np

from approxpath.bound import KernelBound, Option
from approxpath.envelopes import difference_nodes, envelope_entry_error, max_abs_difference, split_envelope
from approxpath.compute.caches import ProductMemo
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin
from approxpath.validate import real_targets

__all__ = ["RegressionBound", "SAFETY"]

# The dual scale is chosen this much (relative) below the largest feasible one, so that a
# verifier whose BLAS rounds the last bits differently still finds the stored dual feasible.
# 1e-10 is far above any such difference (~n u) and changes the gap by ~1e-10 relative.
SAFETY = 1e-10
# Rounding of a bound on a piece (beyond the kernel entries' own error, envelope_entry_error):
# the n-term sums of nonnegative products (and D, D^2 factors) are within (n + 3) u of their
# values, which moves the Bernstein coefficients by at most that times P.magnitude() +
# N.magnitude() (the magnitudes dominate every coefficient; the lift is computed from the
# coefficients as rounded and is valid for them).  After the sums come at most 18 dependent
# operations (a coefficient: w, w^2, products, quotients, sums, degree elevation: 9; the
# difference: 1; a node value: 6, with Bernstein basis values within 3u of theirs, exact at
# k/16; lift and offset a: 2), each off by u of a value at most 1.04 (|a| + magnitudes) (the
# lift is at most 1/25 of the largest coefficient; computing it adds ~0.2 u): at most (n + 26)
# u (|a| + magnitudes), below fp_margin(n + _CHAIN, that) = 1.01 (n + 32) u (|a| + magnitudes).
_CHAIN = 16


class RegressionBound(KernelBound):
    """Base of the certificate side of the kernel regression problems over the bandwidth ``t``
    (fixed ``lam``) or over ``lam`` (fixed ``bandwidth``).

    Options: ``lam`` (:math:`\\lambda > 0`; on the lambda path, optional, the top of the
    default interval), ``bandwidth`` (:math:`t > 0`, fixed on the lambda path), ``parameter``
    and ``dual_restoration`` (one of :attr:`DUAL_RESTORATIONS`, a search option recorded in the
    certificate).
    """

    parameters = ("bandwidth", "lam")
    weight = "lam"
    #: The values of the option ``dual_restoration``; the first is the default.
    DUAL_RESTORATIONS: tuple = ()
    #: Kernel products kept (:meth:`_products`): a piece asks for one or two sets at each end,
    #: and the next piece starts where it ends.
    remembered = 8
    _transient = KernelBound._transient + ("_product_memo",)

    # convex for any kernel (a least-squares or l1 loss of K beta): a precomputed D need not be
    # conditionally negative definite
    kernel_psd = False

    def __init_subclass__(cls, **kw):
        cls.OPTIONS = dict(lam=Option("positive", default=None), bandwidth=Option("positive", default=None),
                           dual_restoration=Option("choice", cls.DUAL_RESTORATIONS, cls.DUAL_RESTORATIONS[0]))
        super().__init_subclass__(**kw)  # after: KernelBound adds the kernel options

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.y = real_targets(self.name, self.y)

    def _entry_error(self, t_lo, t_hi):
        return envelope_entry_error(t_lo, t_hi, self.entry_terms)

    def _products(self):
        """The kernel products the envelopes use (:meth:`~approxpath.compute.kernels.Kernels.products`),
        the last :attr:`remembered` of them kept (:class:`~approxpath.compute.caches.ProductMemo`:
        the same values, bit for bit): the moving pairs between two exact solves share their
        vectors, so consecutive pieces meet at a point where the products are the same."""
        memo = getattr(self, "_product_memo", None)
        if memo is None:
            memo = self._product_memo = ProductMemo(self.kernels.products, self.remembered)
        return memo

    def kernel_sup_norm(self, c, lo, hi=None):
        """A rigorous upper bound of :math:`\\max_{\\tau\\in[lo,hi]} \\lVert K_\\tau c\\rVert_\\infty`
        (the bandwidth at ``tau``), rounding included; exact up to that allowance at a point.

        Each :math:`(K_x c)_i = P_i(x) - N_i(x)` splits into two nonnegative exponential sums;
        :func:`approxpath.envelopes.max_abs_difference` bounds its absolute value on the piece by
        Hermite polynomials of the difference, which keep the cancellation between
        :math:`P_i` and :math:`N_i` (large for a dual with entries of both signs).
        """
        hi = lo if hi is None else hi
        t_lo, t_hi = self.sweep.bandwidths(lo, hi)
        c = np.asarray(c, dtype=float)
        if not np.any(c):
            return 0.0
        entry = self._entry_error(t_lo, t_hi) * float(np.abs(c).sum())
        if t_lo == t_hi:  # a point: |K c| itself, the summed magnitudes are K |c|
            K = self.gram(lo)
            return float(np.max(np.abs(K @ c) + entry + fp_margin(self.n, 1.0) * (K @ np.abs(c))))
        P, N = split_envelope(self._products(), c, t_lo, t_hi)
        bound = max_abs_difference(P, N)
        # kernel entries (envelope_entry_error per unit of |c|), then the sums and the
        # polynomials' arithmetic (_CHAIN)
        allowance = entry + fp_margin(self.n + _CHAIN, 1.0) * (P.magnitude() + N.magnitude())
        return float(np.max(bound + allowance))

    def moving_sup_norms(self, c, slope, rates, at, lo, hi, prune=True, offset=0.0, envelopes=None):
        """Rigorous upper bounds, one per rate :math:`\\rho` of ``rates``, of
        :math:`\\max_{t\\in[lo,hi]} \\lVert K_t (c + (o + \\rho (t - at))\\, s)\\rVert_\\infty` with ``s`` the
        vector ``slope`` and ``o`` the ``offset`` (bandwidth path: ``t`` is the bandwidth),
        rounding included.

        :math:`K_t c` and :math:`K_t s` lie between the piecewise linear bounds of
        :func:`~approxpath.envelopes.difference_nodes` (one kernel pass per end for both, four
        columns), ``A`` and ``B``.  On a sub-interval between two nodes, with :math:`x = \\rho(t -
        at)` linear and ``B`` replaced by its upper or its lower line, :math:`A + xB` is a
        quadratic in the position :math:`\\sigma \\in [0, 1]` whose :math:`\\sigma^2` coefficient is
        :math:`c_2 = \\rho h \\Delta B`: its maximum is at most the larger end value plus
        :math:`\\max(0, -c_2)/4` (a concave quadratic exceeds its chord by at most that), its
        minimum at least the smaller minus :math:`\\max(0, c_2)/4`; :math:`xB` lies between the
        products with the two lines whatever the sign of ``x``.

        Parameters
        ----------
        c, slope : ndarray of shape (n,)
        rates : ndarray of shape (r,)
        at : float
        lo, hi : float
            A bandwidth piece (``lo <= hi``).
        prune : bool, default True
            Bound exactly only the rows that may reach the largest bound (the result is the
            same, bit for bit; ``False`` bounds every row, for checking that).
        offset : float, default 0
            The weight of ``slope`` at ``at`` (0: ``c`` is the vector there).
        envelopes : (Envelope, Envelope), optional
            :func:`~approxpath.envelopes.split_envelope` of ``[c, slope]`` (two columns) if
            already computed (a search bounding several slopes with one kernel pass).

        Returns
        -------
        ndarray of shape (r,)
        """
        c, slope = np.asarray(c, dtype=float), np.asarray(slope, dtype=float)
        rates = np.asarray(rates, dtype=float)
        P, N = envelopes or split_envelope(self._products(), np.column_stack([c, slope]), lo, hi)
        xs, low, up = difference_nodes(P, N)  # (n, 2, nodes): K_t c and K_t slope
        low_a, up_a, low_b, up_b = low[:, 0], up[:, 0], low[:, 1], up[:, 1]
        x = offset + rates[:, None] * (xs - at)  # (r, nodes)
        h = rates[:, None] * np.diff(xs)  # (r, nodes - 1): the change of x between nodes
        # allowances: the kernel entries (per unit of coefficient), the sums and the polynomials'
        # arithmetic (_CHAIN) and the few operations here, and the rounding of x itself
        reach = abs(offset) + np.abs(rates) * max(abs(lo - at), abs(hi - at))  # (r,): the largest |x|
        x_error = 4 * UNIT_ROUNDOFF * (np.abs(rates) * (abs(lo) + abs(hi) + abs(at)) + abs(offset))
        mag = P.magnitude() + N.magnitude()  # (n, 2)
        entry = self._entry_error(lo, hi) * (np.abs(c).sum() + reach * np.abs(slope).sum())
        allowance = (entry[:, None] + fp_margin(self.n + _CHAIN + 8, 1.0) * (mag[:, 0] + reach[:, None] * mag[:, 1])
                     + x_error[:, None] * mag[:, 1])  # (r, n)

        def exact(rows):  # (r, len(rows)): the bound of each rate and row, allowance included
            upper, lower = -np.inf, np.inf
            for b in (up_b[rows], low_b[rows]):
                xb = x[:, None, :] * b  # (r, rows, nodes)
                q_up, q_low = up_a[rows] + xb, low_a[rows] + xb
                c2 = h[:, None, :] * np.diff(b, axis=-1)
                upper = np.maximum(upper, (np.maximum(q_up[..., :-1], q_up[..., 1:]) + np.maximum(0.0, -c2) / 4).max(axis=-1))
                lower = np.minimum(lower, (np.minimum(q_low[..., :-1], q_low[..., 1:]) - np.maximum(0.0, c2) / 4).min(axis=-1))
            return np.maximum(upper, -lower) + allowance[:, rows]

        if not prune:
            return exact(np.arange(self.n)).max(axis=-1)
        # Only the rows that may reach the largest bound are bounded exactly: each row's exact
        # bound is at most |A| + |x| |B| + the quadratic's term (``cheap``; widened by 2**-40,
        # far more than the few roundings in which the two computations differ), so a row whose
        # cheap bound is at most the exact bound of another row cannot change the maximum, which
        # is the one over all rows, bit for bit (sinc, n = 100: ~30 of 100 rows are bounded).
        size_a = np.maximum(up_a, -low_a).max(axis=-1)
        size_b = np.maximum(np.abs(up_b), np.abs(low_b)).max(axis=-1)
        step_b = np.maximum(np.abs(np.diff(up_b, axis=-1)), np.abs(np.diff(low_b, axis=-1))).max(axis=-1)
        cheap = (size_a + np.abs(x).max(axis=-1)[:, None] * size_b
                 + np.abs(h).max(axis=-1)[:, None] * step_b / 4) * (1 + 2.0**-40) + allowance
        first = np.unique(np.argmax(cheap, axis=-1))
        reached = exact(first).max(axis=-1)  # (r,)
        rows = np.union1d(first, np.flatnonzero(np.any(cheap > reached[:, None], axis=0)))
        return exact(rows).max(axis=-1)

    def moving_residual_bounds(self, beta, slope, offset, rates, at, lo, hi):
        """Upper bounds of :math:`\\sum_i |r_i(t)|`, :math:`r(t) = y - K_t(\\beta + x(t)\\, w)` with
        :math:`x(t) = o + \\rho (t - at)` (``w = slope``, ``o = offset``), one set per rate
        :math:`\\rho` of ``rates``, on a bandwidth piece, rounding included.

        :math:`K_t\\beta` and :math:`K_t w` lie between the piecewise linear bounds of
        :func:`~approxpath.envelopes.difference_nodes` (one pass over the kernel per end); on
        the sub-interval between two nodes, with ``B`` replaced by either of its lines,
        :math:`A + xB` is a quadratic whose excess over its chord is at most
        :math:`\\max(0, \\mp c_2)/4` (as in :meth:`moving_sup_norms`; the larger of the two
        lines' terms, and :math:`xB` between the larger and the smaller of the products with
        the two lines at the nodes).  So every :math:`|r_i|` is at most the larger of two
        lines plus constants there, convex in ``t``, and so is their sum: its bound on a
        sub-interval is the larger of the values returned at the sub-interval's two ends.

        Parameters
        ----------
        beta, slope : ndarray of shape (n,)
        offset : float
        rates : ndarray of shape (r,)
        at, lo, hi : float

        Returns
        -------
        xs : ndarray of shape (m,)
            The nodes (``lo`` and ``hi`` at the ends).
        ends : ndarray of shape (r, m - 1, 2)
            Per sub-interval, the bound of the sum at its left and its right end (each row's
            rounding allowance included).
        margin : ndarray of shape (r,)
            The rounding allowance of the sums over the rows.
        """
        beta, slope = np.asarray(beta, dtype=float), np.asarray(slope, dtype=float)
        rates = np.asarray(rates, dtype=float)
        P, N = split_envelope(self._products(), np.column_stack([beta, slope]), lo, hi)
        xs, low, up = difference_nodes(P, N)  # (n, 2, nodes): K_t beta and K_t slope
        low_a, up_a, low_b, up_b = low[:, 0], up[:, 0], low[:, 1], up[:, 1]
        x = offset + rates[:, None, None] * (xs - at)  # (r, 1, nodes)
        h = rates[:, None, None] * np.diff(xs)  # (r, 1, nodes - 1)
        # allowances as in moving_sup_norms, with |y| in the magnitudes (r = y - ...)
        reach = abs(offset) + np.abs(rates) * max(abs(lo - at), abs(hi - at))  # (r,)
        x_error = 4 * UNIT_ROUNDOFF * (np.abs(rates) * (abs(lo) + abs(hi) + abs(at)) + abs(offset))
        mag = P.magnitude() + N.magnitude()  # (n, 2)
        entry = self._entry_error(lo, hi) * (np.abs(beta).sum() + reach * np.abs(slope).sum())
        allowance = (entry[:, None] + fp_margin(self.n + _CHAIN + 8, 1.0) * (np.abs(self.y) + mag[:, 0]
                     + reach[:, None] * mag[:, 1]) + x_error[:, None] * mag[:, 1])  # (r, n)
        # x B between the products with B's two lines, the quadratics' terms the larger of the two
        xb_up, xb_low = x * up_b, x * low_b  # (r, n, nodes)
        c2_up, c2_low = h * np.diff(up_b, axis=-1), h * np.diff(low_b, axis=-1)
        up_term = np.maximum(0.0, -np.minimum(c2_up, c2_low)) / 4
        low_term = np.maximum(0.0, np.maximum(c2_up, c2_low)) / 4
        over = up_a + np.maximum(xb_up, xb_low) - self.y[:, None]  # upper(K beta(t)) - y at the nodes
        under = self.y[:, None] - low_a - np.minimum(xb_up, xb_low)  # y - lower(K beta(t))
        ends = np.stack([np.maximum(over[..., :-1] + up_term, under[..., :-1] + low_term),
                         np.maximum(over[..., 1:] + up_term, under[..., 1:] + low_term)], axis=-1)
        ends = ends + allowance[:, :, None, None]  # (r, n, nodes - 1, 2)
        margin = fp_margin(self.n, 1.0) * np.abs(ends).sum(axis=1).max(axis=(-2, -1))
        return xs, ends.sum(axis=1), margin

    def residual_envelopes(self, beta, a, lo, hi=None):
        """Rigorous bounds of the residuals :math:`r_i(x) = a_i - (K_x\\beta)_i` for every
        bandwidth ``x`` of the piece ``[lo, hi]``.

        :math:`(K_x\\beta)_i = P_i(x) - N_i(x)` splits into nonnegative exponential sums, which
        lie between Hermite polynomials (:mod:`approxpath.envelopes`), so :math:`a_i -
        \\text{upper}(P_i) + \\text{lower}(N_i) \\le r_i \\le a_i - \\text{lower}(P_i) +
        \\text{upper}(N_i)`; both sides are replaced by their values at 19 breakpoints ``xs``,
        moved apart by a curvature term so that the linear interpolants between breakpoints
        still enclose the polynomials (:func:`~approxpath.envelopes.difference_nodes`: exact at
        the ends up to :math:`2^{-27}` of the second derivative in units of the piece, off by
        :math:`O(w^5)` and 1/256 of a chord's curvature term inside, where chords and tangents
        are off by :math:`O(w^2)`).  The
        returned values are widened by the rounding allowance (kernel entries, sums, the
        polynomials' arithmetic), so that the linear interpolants of ``low`` and ``up`` through
        ``xs`` enclose every :math:`r_i(x)`.  For any convex :math:`\\phi` (:math:`r^2`,
        :math:`|r|`), :math:`\\phi(r_i(x)) \\le \\max(\\phi(\\text{low}_i), \\phi(\\text{up}_i))`
        interpolated, which is convex between breakpoints: a sum of such functions is largest
        at one of the ``xs``.

        Parameters
        ----------
        beta : ndarray (n,)
        a : ndarray (n,)
            Offsets (``y`` or ``y - beta0``).
        lo, hi : float
            The piece, in path-parameter units (a point on the lambda path).

        Returns
        -------
        xs : ndarray (m,)
        low, up : ndarray (n, m)
        """
        hi = lo if hi is None else hi
        t_lo, t_hi = self.sweep.bandwidths(lo, hi)
        beta, a = np.asarray(beta, dtype=float), np.asarray(a, dtype=float)
        entry = self._entry_error(t_lo, t_hi) * float(np.abs(beta).sum())
        S = np.flatnonzero(beta)
        if t_lo == t_hi:  # a point: the residual itself, the summed magnitudes are |a| + K |beta|
            K = self.kernels.columns(t_lo, S)
            r = a - K @ beta[S]
            allowance = entry + fp_margin(self.n, 1.0) * (np.abs(a) + K @ np.abs(beta[S]))
            return np.array([t_lo]), (r - allowance)[:, None], (r + allowance)[:, None]
        # (not memoized: a piece's own coefficients, met again only on the same piece)
        P, N = split_envelope(self.kernels.products, beta, t_lo, t_hi)
        xs, f_low, f_up = difference_nodes(P, N)  # enclose K_x beta
        # kernel entries (envelope_entry_error per unit of |beta|), then the sums and the
        # polynomials' arithmetic (_CHAIN)
        allowance = entry + fp_margin(self.n + _CHAIN, 1.0) * (np.abs(a) + P.magnitude() + N.magnitude())
        return xs, a[:, None] - f_up - allowance[:, None], a[:, None] - f_low + allowance[:, None]
