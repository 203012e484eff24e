"""Certificate side shared by the kernel regression problems (``klasso``, ``robust_l1``): the
options ``lam``/``bandwidth``/``parameter``, and the rigorous bounds on a piece that their dual
constraint :math:`\\lVert K_t u\\rVert_\\infty \\le \\lambda` and their residuals need.

Private module (the registry skips names starting with ``_``); numpy only.
"""

from __future__ import annotations

import itertools

import numpy as np

from approxpath.bound import KernelBound, Option
from approxpath.envelopes import difference_nodes, envelope_entry_error, max_abs_difference, split_envelope
from approxpath.compute.caches import ProductMemo
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, margins_of
from approxpath.validate import real_targets

__all__ = ["RegressionBound", "KernelEnclosures", "SAFETY", "CHAIN", "combination_slack"]

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
# u (|a| + magnitudes), below fp_margin(n + CHAIN, that) = 1.01 (n + 32) u (|a| + magnitudes).
CHAIN = 16


def combination_slack(U, w):
    """How far a verifier's bound of :math:`\\lVert K\\,U w\\rVert_\\infty` for the stored points ``U``
    and stored weights ``w`` of a moving dual at an end of a lambda piece
    (:meth:`RegressionBound.errors`) can exceed the bound computed here for the combination
    ``d = U @ w`` as computed, per unit of ``w``'s scale.

    It covers the verifier's allowance for the combination, ``fp_margin(k, 1) |U||w|``; the
    rounding between its combination of the scaled weights and the scaled ``d`` (a few u per
    entry: 8u, |K_ij| <= 1); and the sums of :math:`K d` in another order, each within
    ``fp_margin(n, 1)`` of :math:`K|d|` (twice: this one's and the verifier's).  Absolute, so it
    does not shrink with lambda as :data:`SAFETY` does (robust_l1 and klasso lambda paths down
    to lambda = 1e-3 on 80 points failed their own verification by 4e-14 with the relative
    margin alone).

    Parameters
    ----------
    U : ndarray of shape (n, k)
        The dual's stored points (columns).
    w : ndarray of shape (k,)
        Their weights at the end of the piece, before the scaling that makes the dual feasible.

    Returns
    -------
    float
        :math:`(\\mathrm{fp\\_margin}(k, 1) + 8u + 2\\,\\mathrm{fp\\_margin}(n, 1))\\,\\mathbf 1^\\top|U||w|`,
        to be added to :meth:`KernelEnclosures.kernel_sup_norm` of ``d`` (it scales with ``w``).
    """
    mag = float((np.abs(U) @ np.abs(w)).sum())
    return (fp_margin(U.shape[1], 1.0) + 8.0 * UNIT_ROUNDOFF) * mag + 2.0 * fp_margin(U.shape[0], 1.0) * mag


class KernelEnclosures(KernelBound):
    """Rigorous enclosures of kernel products over a bandwidth piece, shared by the kernel
    regression problems and kernel ridge: :math:`\\lVert K_t c\\rVert_\\infty`
    (:meth:`kernel_sup_norm`), residuals :math:`a - K_t\\beta` (:meth:`residual_envelopes`) and
    combinations :math:`K_t \\sum_k w_k(t)\\, c_k` of points whose weights move linearly with the
    bandwidth (:meth:`moving_sup_norms`, :meth:`moving_residual_bounds`), from the memoized kernel
    products of the piece's ends (:meth:`remembered_products`)."""

    #: Kernel products kept (:meth:`remembered_products`): a piece asks for one or two sets at each end,
    #: and the next piece starts where it ends.
    remembered = 8
    _transient = KernelBound._transient + ("_product_memo",)

    def __init__(self, X, y, **options):
        super().__init__(X, y, **options)
        self.y = real_targets(self.name, self.y)  # regression targets: real numbers, not labels

    def _entry_error(self, t_lo, t_hi):
        return envelope_entry_error(t_lo, t_hi, self.entry_terms)

    def remembered_products(self):
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
        products = self.remembered_products()
        P, N = split_envelope(products, c, t_lo, t_hi)
        bound = max_abs_difference(P, N)
        # kernel entries (envelope_entry_error per unit of |c|), then the sums and the
        # polynomials' arithmetic (CHAIN); more margins for a device's products (margins_of)
        allowance = margins_of(products) * (entry + fp_margin(self.n + CHAIN, 1.0) * (P.magnitude() + N.magnitude()))
        return float(np.max(bound + allowance))

    def _lines(self, C, W, err, lo, hi, envelopes=None):
        """The ingredients of :meth:`_combinations`: ``(xs, low, up, w, allowance)`` with ``low``,
        ``up`` (n, K, J + 1) the piecewise linear bounds of :math:`K_t c_k` at the nodes ``xs``
        (:func:`~approxpath.envelopes.difference_nodes`), ``w`` (r, K, J + 1) the weights there
        and ``allowance`` (r, n) the rounding: the kernel entries (per unit of coefficient), the
        sums and the polynomials' arithmetic (``CHAIN``), the few operations of
        :meth:`_combinations` and the weights' error ``err`` plus their evaluation."""
        from approxpath.bernstein import bernstein_at, coefficient_rounding

        C, W = np.asarray(C, dtype=float), np.asarray(W, dtype=float)
        products = self.remembered_products()
        P, N = envelopes or split_envelope(products, C, lo, hi)
        xs, low, up = difference_nodes(P, N)  # (n, K, J + 1)
        w = bernstein_at(W, (xs - lo) / (hi - lo))  # (r, K, J + 1)
        mag = P.magnitude() + N.magnitude()  # (n, K)
        top = np.abs(w).max(axis=-1)  # (r, K)
        err = np.asarray(err, dtype=float) + coefficient_rounding(W)
        entry = self._entry_error(lo, hi) * (top @ np.abs(C).sum(axis=0))  # (r,)
        allowance = margins_of(products) * (entry[:, None] + fp_margin(self.n + CHAIN + 8, 1.0) * (top @ mag.T)) \
            + err @ mag.T
        return xs, low, up, w, allowance

    @staticmethod
    def _combinations(w, low, up, ends=False):
        """Enclosures of :math:`f_i = \\sum_k w_k(t)\\, (K_t c_k)_i` on every sub-interval between
        the nodes of a bandwidth piece, for candidates ``r`` of weights linear in ``t``.

        :math:`(K_t c_k)_i` lies between the lines through ``low`` and ``up`` (:meth:`_lines`).
        On a sub-interval, with each replaced by its upper or its lower line :math:`L_k`,
        :math:`\\sum_k w_k L_k` is a quadratic in the position :math:`\\sigma \\in [0, 1]` whose
        :math:`\\sigma^2` coefficient is :math:`c_2 = \\sum_k \\Delta w_k \\Delta L_k`: its maximum is at
        most the larger end value plus :math:`\\max(0, -c_2)/4` (a concave quadratic exceeds its
        chord by at most that), its minimum at least the smaller minus :math:`\\max(0, c_2)/4`.
        Pointwise :math:`w_k (K_t c_k)_i \\le \\max(w_k U_k, w_k L_k)`, so :math:`f_i` is at most the
        largest over the choices of lines; a choice that another dominates on the sub-interval
        (the lower line where :math:`w_k \\ge 0` at both ends, for an upper bound) is left out.

        Parameters
        ----------
        w : ndarray of shape (r, K, J + 1)
        low, up : ndarray of shape (n, K, J + 1)
        ends : bool
            Also return, per sub-interval, the largest (smallest) value over the choices at
            each end and the largest curvature term: the bound is then at most the larger of two
            lines plus a constant on each sub-interval (convex; :meth:`moving_residual_bounds`).

        Returns
        -------
        upper, lower : ndarray of shape (r, n, J)
            (None with ``ends``: the callers that ask for the ends do not read them)
        (with ``ends``) ends_up, ends_low : (r, n, J, 2); bend_up, bend_low : (r, n, J)
        """
        a, b = w[..., :-1], w[..., 1:]  # (r, K, J): the weights at each sub-interval's ends
        nonneg, nonpos = (a >= 0) & (b >= 0), (a <= 0) & (b <= 0)
        strict_nonpos = nonpos & ~(nonneg & nonpos)
        lines = (up, low)
        terms = {}  # (k, line) -> the products below, computed once for both sides and every choice

        def term(k, li):
            if (k, li) not in terms:
                line = lines[li][:, k]  # (n, J + 1)
                terms[k, li] = (a[:, k, None, :] * line[None, :, :-1], b[:, k, None, :] * line[None, :, 1:],
                                (b - a)[:, k, None, :] * np.diff(line, axis=-1)[None])
            return terms[k, li]

        out = {}
        for side in ("up", "low"):
            # choice 0: the line in the bound's own direction where w >= 0 (the upper line for
            # the upper bound), choice 1 the other; a choice masked on every sub-interval is skipped
            masks = [(~strict_nonpos[:, k], ~nonneg[:, k]) for k in range(w.shape[1])]
            options = [[c for c in (0, 1) if masks[k][c].any()] for k in range(w.shape[1])]
            best = None
            for combo in itertools.product(*options):
                ok = np.logical_and.reduce([masks[k][c] for k, c in enumerate(combo)])[:, None, :]  # (r, 1, J)
                e0 = e1 = c2 = 0.0
                for k, c in enumerate(combo):
                    t0, t1, t2 = term(k, c if side == "up" else 1 - c)
                    e0, e1, c2 = e0 + t0, e1 + t1, c2 + t2
                sign = 1.0 if side == "up" else -1.0  # the lower bound: the upper one's mirror
                far = -sign * np.inf
                bend = np.maximum(0.0, -sign * c2) / 4
                merge = np.maximum if side == "up" else np.minimum
                if ends:  # (the bounds themselves are not asked for)
                    bound = None
                else:
                    edge = np.maximum(e0, e1) if side == "up" else np.minimum(e0, e1)
                    bound = np.where(ok, edge + sign * bend, far)
                if best is None:
                    best = [bound]
                elif not ends:
                    best[0] = merge(best[0], bound)
                if ends:  # the extremes at each end and the largest curvature term, over the choices
                    extreme = (np.where(ok, e0, far), np.where(ok, e1, far), np.where(ok, bend, 0.0))
                    if len(best) == 1:
                        best += list(extreme)
                    else:
                        best[1], best[2], best[3] = merge(best[1], extreme[0]), merge(best[2], extreme[1]), \
                            np.maximum(best[3], extreme[2])
            out[side] = best
        if not ends:
            return out["up"][0], out["low"][0]
        (upper, u0, u1, bu), (lower, l0, l1, bl) = out["up"], out["low"]
        return upper, lower, np.stack([u0, u1], axis=-1), np.stack([l0, l1], axis=-1), bu, bl

    def moving_sup_norms(self, C, W, err, lo, hi, envelopes=None, prune=True):
        """Rigorous upper bounds, one per candidate ``r``, of :math:`\\max_{t\\in[lo,hi]} \\lVert K_t
        \\sum_k w_k(t)\\, c_k\\rVert_\\infty` for weights linear in ``t``, rounding included
        (:meth:`_combinations`).

        Only the rows that may reach the largest bound are bounded exactly: each row's exact
        bound is at most :math:`\\sum_k (\\max|w_k| \\max|L_k| + \\max|\\Delta w_k| \\max|\\Delta L_k|/4)`
        (``cheap``; widened by 2**-40, far more than the few roundings in which the two
        computations differ), so a row whose cheap bound is at most the exact bound of another
        row cannot change the maximum, which is the one over all rows, bit for bit (sinc,
        n = 100: ~30 of 100 rows are bounded).

        Parameters
        ----------
        C : ndarray of shape (n, K)
            The points :math:`c_k` (columns).
        W : ndarray of shape (r, K, 2)
            Each candidate's weights, Bernstein coefficients of degree 1 on ``[lo, hi]``.
        err : ndarray of shape (r, K)
            How far the exact weights may be from those of ``W`` (0 where ``W`` is exact).
        lo, hi : float
            A bandwidth piece, ``lo < hi``.
        envelopes : (Envelope, Envelope), optional
            :func:`~approxpath.envelopes.split_envelope` of ``C``, if already computed.
        prune : bool, default True
            Bound exactly only the rows that may reach the largest bound (the result is the
            same, bit for bit; ``False`` bounds every row, for checking that).

        Returns
        -------
        ndarray of shape (r,)
        """
        _, low, up, w, allowance = self._lines(C, W, err, lo, hi, envelopes)

        def exact(rows):  # (r, len(rows)): the bound of each candidate and row, allowance included
            upper, lower = self._combinations(w, low[rows], up[rows])
            return np.maximum(upper, -lower).max(axis=-1) + allowance[:, rows]

        if not prune:
            return exact(np.arange(self.n)).max(axis=-1)
        size = np.maximum(np.abs(up), np.abs(low)).max(axis=-1)  # (n, K)
        step = np.maximum(np.abs(np.diff(up, axis=-1)), np.abs(np.diff(low, axis=-1))).max(axis=-1)
        wt, dw = np.abs(w).max(axis=-1), np.abs(np.diff(w, axis=-1)).max(axis=-1)  # (r, K)
        cheap = (wt @ size.T + dw @ step.T / 4) * (1 + 2.0**-40) + allowance  # (r, n)
        first = np.unique(np.argmax(cheap, axis=-1))
        reached = exact(first).max(axis=-1)  # (r,)
        rows = np.union1d(first, np.flatnonzero(np.any(cheap > reached[:, None], axis=0)))
        return exact(rows).max(axis=-1)

    def moving_residual_bounds(self, C, W, err, lo, hi):
        """Upper bounds of :math:`\\sum_i |r_i(t)|`, :math:`r(t) = y - K_t \\sum_k w_k(t)\\, c_k` with
        weights linear in ``t`` (arguments as :meth:`moving_sup_norms`), one set per candidate,
        on a bandwidth piece, rounding included.

        On each sub-interval between the nodes (:meth:`_combinations`) every :math:`|r_i|` is at
        most the larger of the lines through its end values (the largest over the choices of
        lines) plus the largest curvature term, a convex function of ``t``, and so is their sum:
        its bound on a sub-interval is the larger of the values returned at the sub-interval's
        two ends.

        Returns
        -------
        xs : ndarray of shape (J + 1,)
        ends : ndarray of shape (r, J, 2)
            Per sub-interval, the bound of the sum at its left and its right end (each row's
            rounding allowance included).
        margin : ndarray of shape (r,)
            The rounding allowance of the sums over the rows.
        """
        xs, low, up, w, allowance = self._lines(C, W, err, lo, hi)
        _, _, ends_up, ends_low, bend_up, bend_low = self._combinations(w, low, up, ends=True)
        y = self.y[None, :, None, None]
        over = ends_up - y + bend_up[..., None]  # upper(K beta(t)) - y
        under = y - ends_low + bend_low[..., None]  # y - lower(K beta(t))
        extra = allowance + fp_margin(self.n + CHAIN + 8, 1.0) * np.abs(self.y)  # (r, n)
        ends = np.maximum(over, under) + extra[:, :, None, None]
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
        # polynomials' arithmetic (CHAIN); more margins for a device's products (margins_of)
        allowance = margins_of(self.kernels) * (entry + fp_margin(self.n + CHAIN, 1.0)
                                                * (np.abs(a) + P.magnitude() + N.magnitude()))
        return xs, a[:, None] - f_up - allowance[:, None], a[:, None] - f_low + allowance[:, None]


class RegressionBound(KernelEnclosures):
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
    # convex for any kernel (a least-squares or l1 loss of K beta): a precomputed D need not be
    # conditionally negative definite
    kernel_psd = False
    # Cells of (t, lam) (approxpath.cells): for a pair fixed in lam the gap is affine in lam with
    # slope ||beta||_1 >= 0, the dual objective does not depend on lam and the dual set
    # {||K_t u||_inf <= lam} only grows with it.
    weight_convex = True
    weight_increasing = True

    def __init_subclass__(cls, **kw):
        cls.OPTIONS = dict(lam=Option("positive", default=None), bandwidth=Option("positive", default=None),
                           dual_restoration=Option("choice", cls.DUAL_RESTORATIONS, cls.DUAL_RESTORATIONS[0]))
        super().__init_subclass__(**kw)  # after: KernelBound adds the kernel options

    @property
    def moving_degrees(self):
        """Scaled points (degree 0) on either path; with ``dual_restoration="moving"`` pairs
        moving linearly in the bandwidth or in lambda."""
        degree = 1 if self.options["dual_restoration"] == "moving" else 0
        return {"bandwidth": degree, "lam": degree}
