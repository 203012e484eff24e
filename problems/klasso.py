"""Kernelized LASSO (kLASSO) over the Gaussian bandwidth or over lambda.

.. math::

    \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K_t\\beta - \\beta_0 \\mathbf 1\\rVert^2
    + \\lambda \\lVert\\beta\\rVert_1,

    \\max_{u}\\; y^\\top u - \\tfrac12 \\lVert u\\rVert^2
    \\quad\\text{s.t.}\\quad \\lVert K_t u\\rVert_\\infty \\le \\lambda,\\; \\mathbf 1^\\top u = 0,

with :math:`K_t = \\exp(-tD)`; at the optimum :math:`u` is the residual.  Both parameters
move the dual set, so the dual is restored by scaling: a carried dual is :math:`s\\,u` with
:math:`\\mathbf 1^\\top u = 0` exactly (``u`` on a dyadic grid) and the best feasible
:math:`s = \\min(y^\\top u/\\lVert u\\rVert^2, \\lambda / \\max_\\tau\\lVert K_\\tau u\\rVert_\\infty)`
on the piece; on a piece of the bandwidth path an interpolated dual instead moves with
:math:`t` (its combination weight drifts, :meth:`KLasso.restore`) and is scaled feasible on
the whole piece.  The primal keeps :math:`\\beta` and refits :math:`\\beta_0 = \\text{mean}(y -
K_\\tau\\beta)` (once per piece, at its middle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from approxpath.kernels import UNIT_ROUNDOFF, gaussian
from approxpath.problem import Declaration, fp_margin, scale_mid
from approxpath.registry import register
from approxpath.solvers import QP, solve_cvxpy, solve_qp

from ._kernel_regression import SAFETY, KernelRegression

__all__ = ["KLasso", "KLassoPrimal", "KLassoDual"]

# u is stored on the dyadic grid 2**(floor(log2 max|u|) - 42): the entries are integers times
# a power of two, so 1'u = 0 holds exactly (a verifier checks it with math.fsum); 2**-42
# relative perturbs the dual objective by ~1e-12 relative.
_GRID_BITS = 42
# Solver output: coefficient j counts as active when |(K r)_j| >= lam (1 - 1e-6); an inactive
# one below 1e-6 of max |beta| is an interior-point remnant (Clarabel at 1e-10 leaves up to
# ~1e-8 where the dual slack is ~1e-3) and is set exactly to 0, so the support, and the cost
# of the interval bounds, is the true one.  The gap is computed afterwards either way.
_ACTIVE_TOL = 1e-6
# Polish: the active sets |(K r)_j| >= lam (1 - 10**-k) and |beta_j| > 10**-k max |beta| for
# these k start the active-set steps (the solver's residual can be off by ~1e-4 relative
# where K_t is nearly singular, so no single threshold is right everywhere).
_POLISH_DIGITS = (2, 3, 4, 5, 6)
# ... and an active set whose [K_A, 1] has |R_jj| below 1e-13 max |R_jj| is rank deficient.
_RANK_TOL = 1e-13
# Active-set steps per starting set (one or two are typical; each costs a QR of n x |A|).
_POLISH_STEPS = 4
# How far the combination weight of an interpolated dual may move across a bandwidth piece
# (:meth:`KLasso.restore` keeps the best): 0 (a fixed dual) and 2**-4 .. 1 (sinc, n = 100: smaller
# drifts, 2**-6 and 2**-5, or steps of sqrt(2) certify the same pieces, give or take 2 %)
_DRIFTS = np.array([0.0] + [2.0**-k for k in range(4, -1, -1)])


@dataclass(frozen=True)
class KLassoPrimal:
    """Primal point: coefficients ``beta`` (n,) and intercept ``beta0``."""

    beta: np.ndarray
    beta0: float


@dataclass(frozen=True)
class KLassoDual:
    """Dual point ``scale * u``: ``u`` (n,) with ``1'u = 0`` exactly, ``scale >= 0``.

    A *moving* dual (``slope`` set; bandwidth path) is :math:`s\\,(u + \\rho\\,(t - a)\\,v)` at the
    bandwidth ``t``, with ``s = scale``, ``v = slope`` (``1'v = 0`` exactly), :math:`\\rho` =
    ``rate`` and ``a = at``: the combination weight of an interpolated dual moving with ``t``
    (:meth:`KLasso.restore`).  ``parents`` (not part of the certificate) are the two scaled
    duals an interpolated dual combines.
    """

    u: np.ndarray
    scale: float = 1.0
    slope: np.ndarray = None
    rate: float = 0.0
    at: float = 0.0
    parents: tuple = field(default=None, compare=False, repr=False)

    def __reduce__(self):  # the parents are only needed where the pair is restored: do not ship them
        return (KLassoDual, (self.u, self.scale, self.slope, self.rate, self.at))

    def value(self, t):
        """The dual vector at the bandwidth ``t``, shape (n,)."""
        u = np.asarray(self.u, dtype=float)
        if self.slope is None:
            return float(self.scale) * u
        return float(self.scale) * (u + (float(self.rate) * (float(t) - float(self.at))) * np.asarray(self.slope, dtype=float))


def _zero_sum(u):
    """``u`` minus its mean, rounded to a dyadic grid so that the sum is exactly 0."""
    u = np.nan_to_num(np.asarray(u, dtype=float))
    u = u - u.mean()
    top = float(np.max(np.abs(u))) if u.size else 0.0
    if top == 0.0:
        return np.zeros_like(u)
    q = 2.0 ** (math.floor(math.log2(top)) - _GRID_BITS)
    m = np.rint(u / q).astype(np.int64)
    excess = int(m.sum())
    while excess:  # take one grid step off the entries pointing the excess's way, largest first
        step = 1 if excess > 0 else -1
        idx = np.argsort(-step * m, kind="stable")[: min(abs(excess), m.size)]
        m[idx] -= step
        excess = int(m.sum())
    return m.astype(float) * q


@register
class KLasso(KernelRegression):
    """Kernelized LASSO; path over the bandwidth ``t`` (fixed ``lam``) or over ``lam`` (fixed ``bandwidth``).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        :math:`\\lambda` (required for ``parameter="bandwidth"``).
    bandwidth : float
        :math:`t` (required for ``parameter="lam"``).
    parameter : {"bandwidth", "lam"}
    dual_restoration : {"moving", "scaling"}, default "moving"
        ``moving``: on a piece of the bandwidth path an interpolated dual's combination weight
        moves with ``t`` (:meth:`restore`; sinc, n = 100, eps = 0.01: 5918 -> 330 pieces,
        same 109 exact solves, 9.5 -> 2.6 s).  ``scaling``: every dual is a fixed ``s u`` on its
        piece (the only restoration before 0.3.0).  Either way the dual is scaled feasible on
        the whole piece.
    """

    name = "klasso"
    Primal = KLassoPrimal
    Dual = KLassoDual
    DUAL_RESTORATIONS = ("moving", "scaling")
    _transient = KernelRegression._transient + ("_nodes_memo",)

    def _init_transient(self):
        super()._init_transient()
        # the last _primal_nodes: restore chooses a moving dual's drift with them and the
        # driver's gap_bound of the same pair on the same piece follows (sinc, n = 100, eps =
        # 0.05: 258 of 1527 calls)
        self._nodes_memo = None

    def lam_max(self, t=None):
        """:math:`\\lVert K_t(y - \\bar y)\\rVert_\\infty` (``t`` defaults to the fixed bandwidth): from
        there on :math:`\\beta = 0`, :math:`\\beta_0 = \\bar y` is optimal."""
        t = self.bandwidth if t is None else t
        return float(np.max(np.abs(self.kernels.get(t) @ (self.y - self.y.mean()))))

    @classmethod
    def examples(cls):
        from approxpath.data import make_sinc

        X, y = make_sinc(n=24, low=-3.0, high=3.0, noise=0.1, seed=5)
        return [
            (cls(X, y, lam=0.1), (0.5, 8.0), 0.05),
            (cls(X, y, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05),
        ]

    # -------------------------------------------------------------- CVXPY declarations
    def cvxpy_primal(self, t):
        import cvxpy as cp

        bw, lam = self._bw_lam(t)
        K = self._kernel(t)
        beta = cp.Variable(self.n, name="beta")
        beta0 = cp.Variable(name="beta0")
        obj = 0.5 * cp.sum_squares(self.y - K @ beta - beta0) + lam * cp.norm1(beta)
        return Declaration(cp.Problem(cp.Minimize(obj)), dict(beta=beta, beta0=beta0))

    def cvxpy_dual(self, t):
        import cvxpy as cp

        bw, lam = self._bw_lam(t)
        u = cp.Variable(self.n, name="u")
        obj = self.y @ u - 0.5 * cp.sum_squares(u)
        cons = [cp.norm_inf(self._kernel(t) @ u) <= lam, cp.sum(u) == 0]
        return Declaration(cp.Problem(cp.Maximize(obj), cons), dict(u=u))

    def dual_values(self, dual):
        return {"u": dual.scale * np.asarray(dual.u, dtype=float)}

    def cvxpy_restore_primal(self, primal, dual, tau):
        import cvxpy as cp

        beta0 = cp.Variable()  # beta is carried; the intercept is refitted
        fit = self.y - self._kernel(tau) @ primal.beta
        solve_cvxpy(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(fit - beta0))))
        return KLassoPrimal(beta=np.asarray(primal.beta, dtype=float), beta0=float(beta0.value))

    def cvxpy_restore_dual(self, dual, tau):
        import cvxpy as cp

        bw, lam = self._bw_lam(tau)
        u = _zero_sum(dual.u)
        s = cp.Variable(nonneg=True)  # best scaling s * u inside ||K_tau v||_inf <= lam
        sup = float(np.max(np.abs(self._kernel(tau) @ u)))
        obj = s * float(self.y @ u) - 0.5 * float(u @ u) * cp.square(s)
        solve_cvxpy(cp.Problem(cp.Maximize(obj), [s * sup <= lam]))
        return KLassoDual(u=u, scale=float(s.value))

    # -------------------------------------------------------------- exact solve
    def exact_qp(self, t):
        """Gram form in ``x = [beta (n), beta0, a (n)]``, ``|beta| <= a`` (DESIGN.md section 7):
        min 1/2 z'M'Mz - (M'y)'z + lam 1'a with ``z = [beta; beta0]``, ``M = [K_t, 1]``."""
        bw, lam = self._bw_lam(t)
        n = self.n
        K = self._kernel(t)
        k1 = K.sum(axis=0)
        G = np.zeros((n + 1, n + 1))
        G[:n, :n] = K @ K
        G[:n, n] = k1
        G[n, n] = n
        P = sp.block_diag([sp.csc_matrix(np.triu(G)), sp.csc_matrix((n, n))]).tocsc()
        q = np.concatenate((-(K @ self.y), [-self.y.sum()], np.full(n, lam)))
        eye = sp.eye(n)
        zero_col = sp.csc_matrix((n, 1))
        A = sp.vstack([sp.hstack([eye, zero_col, -eye]), sp.hstack([-eye, zero_col, -eye])]).tocsc()
        return QP(P=P, q=q, A=A, b=np.zeros(2 * n), zero=0, nonneg=2 * n)

    def _solve_with(self, name, t):
        """Solver ``name`` on :meth:`exact_qp`, then a polish by a few active-set steps.

        Given an active set :math:`A` and signs :math:`\\sigma`, the optimality conditions
        :math:`K_A^\\top r = \\lambda\\sigma`, :math:`\\mathbf 1^\\top r = 0`,
        :math:`r = y - K_A\\beta_A - \\beta_0` are a linear system (:meth:`_kkt_point`).  Where
        :math:`K_t` is nearly singular (small t and lambda, :math:`\\lVert\\beta\\rVert_1` in the
        thousands) the solver's point is only accurate to ~1e-4 relative in
        :math:`\\lVert K r\\rVert_\\infty` and its small coefficients are unreliable; the steps
        drop a coefficient whose sign disagrees or add the most violated constraint, starting
        from the sets :math:`|K_t r| \\ge \\lambda(1 - 10^{-k})` (signs of :math:`K_t r`) and from
        the supports :math:`|\\beta| > 10^{-k}\\max|\\beta|` (signs of :math:`\\beta`), k = 2..6.
        Of every point met and the solver's own (inactive remnants zeroed), the pair with the
        smallest gap bound wins.
        """
        bw, lam = self._bw_lam(t)
        K = self._kernel(t)
        beta = solve_qp(self.exact_qp(t), solvers=(name,)).x[: self.n].copy()
        r = self.y - K @ beta
        g = K @ (r - r.mean())
        support = np.abs(beta) > _ACTIVE_TOL * np.max(np.abs(beta), initial=0.0)
        beta[~support & (np.abs(g) < lam * (1.0 - _ACTIVE_TOL))] = 0.0
        candidates = [(beta, None)]
        starts = {}
        for k in _POLISH_DIGITS:  # active sets by the solver's |K r| and by its support
            for active, sign in ((np.abs(g) >= lam * (1.0 - 10.0**-k), np.sign(g)),
                                 (np.abs(beta) > 10.0**-k * np.max(np.abs(beta), initial=0.0), np.sign(beta))):
                starts[active.tobytes()] = (active, sign)
        for active, sign in starts.values():
            for _ in range(_POLISH_STEPS):  # one change per step: drop a wrong sign, else add a violation
                cand, u = self._kkt_point(K, active, sign, lam)
                if cand is None:
                    break
                candidates.append((cand, u))
                wrong = np.flatnonzero(active & (np.sign(cand) != sign))
                gu = K @ u
                over = np.flatnonzero(~active & (np.abs(gu) > lam))
                active = active.copy()
                if wrong.size:  # the one the solver found least active
                    active[wrong[np.argmin(np.abs(g[wrong]))]] = False
                elif over.size:
                    j = over[np.argmax(np.abs(gu[over]))]
                    active[j], sign = True, np.where(np.arange(self.n) == j, np.sign(gu), sign)
                else:
                    break
        best = None
        for cand, u in candidates:
            primal = self.restore_primal(KLassoPrimal(beta=cand, beta0=0.0), None, t)
            dual = self.dual_from_primal(primal, t) if u is None else KLassoDual(u=u)
            pair = (primal, self.restore_dual(dual, t))
            gap = self.gap_bound(*pair, t)
            if best is None or gap < best[0]:
                best = (gap, pair)
        return best[1]

    def _kkt_point(self, K, active, sign, lam):
        """``(beta, r)`` solving the optimality conditions on the active set (see :meth:`_solve_with`)
        by a QR factorization :math:`[K_A, \\mathbf 1] = QR`: with :math:`R^\\top w = c`,
        :math:`c = (\\lambda\\sigma_A, 0)`, the residual is :math:`r = y - QQ^\\top y + Qw`
        (accurate even when :math:`\\beta` is huge) and :math:`Rz = Q^\\top y - w`.
        ``(None, None)`` when the system is singular."""
        from scipy.linalg import solve_triangular

        A = np.flatnonzero(active)
        M = np.column_stack([K[:, A], np.ones(self.n)])
        Q, R = np.linalg.qr(M)
        diag = np.abs(np.diag(R))
        if A.size >= self.n or not diag.min() > _RANK_TOL * diag.max():
            return None, None
        w = solve_triangular(R, np.concatenate((lam * sign[A], [0.0])), trans="T")
        qy = Q.T @ self.y
        z = solve_triangular(R, qy - w)
        beta = np.zeros(self.n)
        beta[A] = z[:-1]
        r = self.y - Q @ qy + Q @ w
        ok = np.all(np.isfinite(beta)) and np.all(np.isfinite(r))
        return (beta, r) if ok else (None, None)

    # -------------------------------------------------------------- numpy maps
    def dual_from_primal(self, primal, tau):
        """The residual :math:`y - K_\\tau\\beta - \\beta_0` (the optimal dual at an optimal primal)."""
        r = self.y - self._kernel(tau) @ np.asarray(primal.beta, dtype=float) - float(primal.beta0)
        return KLassoDual(u=r, scale=1.0)

    def restore_dual(self, dual, lo, hi=None):
        """Best scaling of ``u`` (put on the zero-sum grid) feasible for every parameter in ``[lo, hi]``."""
        hi = lo if hi is None else hi
        u = _zero_sum(dual.u)
        uu, yu = float(u @ u), float(self.y @ u)
        if uu == 0.0 or yu <= 0.0:
            return KLassoDual(u=u, scale=0.0)
        s = yu / uu  # maximizer of s y'u - s^2 ||u||^2 / 2
        sup = self.kernel_sup_norm(u, lo, hi)
        limit = self._lam_floor(lo) * (1.0 - SAFETY)
        if s * sup > limit:
            s = limit / sup
        return KLassoDual(u=u, scale=float(s))

    def restore_primal(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        beta = np.asarray(primal.beta, dtype=float)
        mid = scale_mid(lo, hi, self.scale)
        S = np.flatnonzero(beta)
        fit = self.y - gaussian(self.D[:, S], self._bw_lam(mid)[0]) @ beta[S]
        return KLassoPrimal(beta=beta, beta0=float(np.mean(fit)))

    def restore(self, primal, dual, lo, hi=None):
        """As :meth:`~approxpath.problem.Problem.restore`; on a piece of the bandwidth path an
        interpolated dual :math:`(1 - \\theta) u_a + \\theta u_b` becomes a *moving* dual whose
        weight drifts with ``t`` (:class:`KLassoDual`): :math:`u_\\theta + \\rho (t - m)(u_b - u_a)`
        with ``m`` the piece's middle, the rate :math:`\\rho` that gives the smallest gap bound
        among the drifts :data:`_DRIFTS` across the piece, and the largest scale feasible on
        the whole piece (:meth:`moving_sup_norms`).

        A fixed dual loses feasibility at first order as ``t`` moves (the rows where
        :math:`|K_t u| = \\lambda` drift), and its scaling costs a gap linear in the piece's
        width; the combination of the two anchors' duals whose weight follows ``t`` stays
        nearly feasible across a segment (sinc, n = 100, gap at a fifth of a segment: 0.02-0.06
        against 0.07-0.25 for the best fixed weight).
        """
        hi = lo if hi is None else hi
        if hi == lo or self.parameter != "bandwidth" or dual.parents is None or self.dual_restoration != "moving":
            return super().restore(primal, dual, lo, hi)
        primal = self.restore_primal(primal, dual, lo, hi)
        u = _zero_sum(dual.u)
        slope = _zero_sum(dual.parents[1] - dual.parents[0])
        uu, yu = float(u @ u), float(self.y @ u)
        if uu == 0.0 or yu <= 0.0 or not slope.any():
            return primal, self.restore_dual(dual, lo, hi)
        at = scale_mid(lo, hi, self.scale)
        rates = _DRIFTS / (hi - lo)
        sups = self.moving_sup_norms(u, slope, rates, at, lo, hi)
        limit = self._lam_floor(lo) * (1.0 - SAFETY)
        with np.errstate(divide="ignore"):
            scales = np.minimum(yu / uu, limit / sups)
        xs, sq, reg, _ = self._primal_nodes(primal, lo, hi, self._bw_lam(hi)[1])
        k = int(np.argmin((sq + reg - self._moving_dual_values(u, slope, scales, rates, at, xs)[0]).max(axis=1)))
        return primal, KLassoDual(u=u, scale=float(scales[k]), slope=slope, rate=float(rates[k]), at=float(at))

    def interpolate(self, a, b, theta):
        """Convex combination of the dual points ``scale * u`` themselves (restore after); the
        dual keeps its two parents (fixed duals) for :meth:`restore`."""
        (pa, da), (pb, db) = a, b
        primal = KLassoPrimal(beta=(1 - theta) * pa.beta + theta * pb.beta,
                              beta0=(1 - theta) * pa.beta0 + theta * pb.beta0)
        ua, ub = (d.scale * np.asarray(d.u, dtype=float) for d in (da, db))
        fixed = da.slope is None and db.slope is None
        return primal, KLassoDual(u=(1 - theta) * ua + theta * ub, scale=1.0, parents=(ua, ub) if fixed else None)

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """:meth:`~approxpath.problem.Problem.interpolation_gaps` vectorized over ``thetas``
        (k,): the kernel products of the combinations are the combinations of the two ends'
        (two products with :math:`K_\\tau` per side), then each weight's restoration at
        ``tau`` (best dual scale, refitted intercept) and gap in O(n), as computed.  A guide
        for choosing the weight (the chosen pair is restored and bounded after): the dual's
        zero-sum rounding (~2**-42 relative) is skipped.  The generic version restores each
        of ~20 weights per choice (sinc, n = 100, eps = 0.05: 585 choices, 2.0 of the run's
        5.9 profiled seconds)."""
        bw, lam = self._bw_lam(tau)
        th = np.asarray(thetas, dtype=float)
        mix = np.stack([1.0 - th, th])  # (2, k): column j weighs the two ends for thetas[j]
        U = np.column_stack([float(d.scale) * np.asarray(d.u, dtype=float) for _, d in (a, b)])
        B = np.column_stack([np.asarray(p.beta, dtype=float) for p, _ in (a, b)])
        K = self._kernel(tau)
        KU, U = (K @ U) @ mix, U @ mix
        uu, yu = np.einsum("ik,ik->k", U, U), self.y @ U
        with np.errstate(divide="ignore", invalid="ignore"):  # as restore_dual: 0 where uu = 0 or yu <= 0
            limit = self._lam_floor(tau) * (1.0 - SAFETY) / np.abs(KU).max(axis=0)
            s = np.where((uu > 0) & (yu > 0), np.minimum(yu / uu, limit), 0.0)
        fit = self.y[:, None] - (K @ B) @ mix
        r = fit - fit.mean(axis=0)  # the refitted intercept
        primal = 0.5 * np.einsum("ik,ik->k", r, r) + lam * np.abs(B @ mix).sum(axis=0)
        return primal - (s * yu - 0.5 * s * s * uu)

    def segment_gap_bound(self, primal_a, primal_b, lo, hi):
        """Lambda path: a bound on the gap of the primal linear in lambda on ``[lo, hi]``.

        With :math:`\\theta = (\\lambda - lo)/(hi - lo)`: the residual of the interpolated
        primal is :math:`(1-\\theta) r_a + \\theta r_b`, its norm term
        :math:`\\lVert\\beta(\\theta)\\rVert_1 \\le (1-\\theta)N_a + \\theta N_b`, and the dual
        :math:`v(\\theta) = (1-\\theta)p + \\theta q` of the restored end duals (``p`` feasible
        at ``lo``, ``q`` at ``hi``) satisfies :math:`\\lVert K v\\rVert_\\infty \\le \\lambda` and
        :math:`\\mathbf 1^\\top v = 0` exactly.  The gap is then at most a quadratic in
        :math:`\\theta`, maximized exactly; the residuals enter through their rigorous enclosures
        (:meth:`residual_envelopes`).  Exact (up to the dual's safety factor) on a segment of
        the exact lambda-path, where signs do not change.  ``None`` on the bandwidth path.
        """
        if self.parameter != "lam" or not hi > lo:
            return None
        mids, rads, norms, duals = [], [], [], []
        for primal, lam in ((primal_a, lo), (primal_b, hi)):
            beta = np.asarray(primal.beta, dtype=float)
            _, low, up = self.residual_envelopes(beta, self.y - float(primal.beta0), lam, lam)
            mids.append(0.5 * (low[:, 0] + up[:, 0]))
            rads.append(float(np.linalg.norm(0.5 * (up[:, 0] - low[:, 0]))) * (1 + fp_margin(self.n, 1.0)))
            norms.append(float(np.abs(beta).sum()))
            d = self.restore_dual(self.dual_from_primal(primal, lam), lam)
            duals.append(float(d.scale) * np.asarray(d.u, dtype=float))
        (ma, mb), (p, q), (na, nb) = mids, duals, norms
        dl, dn = hi - lo, nb - na
        A, B, C = float(ma @ ma), float(ma @ mb), float(mb @ mb)
        P, PQ, Q = float(p @ p), float(p @ q), float(q @ q)
        yp, yq = float(self.y @ p), float(self.y @ q)
        # gap(theta) <= c0 + c1 theta + c2 theta^2 (+ the residual enclosure's radius below)
        c0 = 0.5 * A + lo * na - yp + 0.5 * P
        c1 = (B - A) + (lo * dn + dl * na) - (yq - yp) + (PQ - P)
        c2 = 0.5 * (A - 2 * B + C) + dl * dn + 0.5 * (P - 2 * PQ + Q)
        thetas = [0.0, 1.0] + ([-c1 / (2 * c2)] if c2 < 0 and 0 < -c1 / (2 * c2) < 1 else [])
        best = max(c0 + c1 * th + c2 * th * th for th in thetas)
        R = max(rads)  # ||r(theta)|| <= ||m(theta)|| + R, so 1/2||r||^2 <= 1/2||m||^2 + R max||m|| + R^2/2
        magnitude = A + C + P + Q + float(np.abs(self.y) @ (np.abs(p) + np.abs(q))) + hi * (na + nb)
        return best + R * max(A, C) ** 0.5 + 0.5 * R * R + fp_margin(4 * self.n, magnitude)

    def primal_objective(self, primal, tau):
        bw, lam = self._bw_lam(tau)
        r = self.y - self._kernel(tau) @ primal.beta - primal.beta0
        return 0.5 * float(r @ r) + lam * float(np.abs(primal.beta).sum())

    def dual_objective(self, dual, tau):
        if dual.slope is not None:
            v = dual.value(tau)
            return float(self.y @ v) - 0.5 * float(v @ v)
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        return s * float(self.y @ u) - 0.5 * s * s * float(u @ u)

    def primal_violation(self, primal, tau):
        ok = np.all(np.isfinite(primal.beta)) and np.isfinite(primal.beta0)
        return 0.0 if ok else float("inf")

    def dual_violation(self, dual, tau):
        bw, lam = self._bw_lam(tau)
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        total = math.fsum(u)  # 1'u, and 1'slope, are exactly 0 on their grids
        if dual.slope is not None:
            total += float(dual.rate) * (float(tau) - float(dual.at)) * math.fsum(dual.slope)
        return float(max(0.0, -s, np.max(np.abs(self._kernel(tau) @ dual.value(tau))) - lam, s * abs(total)))

    def certificate_errors(self, primal, dual, lo, hi):
        u, s = np.asarray(dual.u, dtype=float), float(dual.scale)
        beta = np.asarray(primal.beta, dtype=float)
        if u.shape != (self.n,) or not np.all(np.isfinite(u)):
            return [f"u must be {self.n} finite numbers"]
        if beta.shape != (self.n,) or not np.all(np.isfinite(beta)) or not np.isfinite(primal.beta0):
            return [f"beta must be {self.n} finite numbers and beta0 finite"]
        errors = []
        if not (np.isfinite(s) and s >= 0):
            errors.append(f"dual scale must be finite and >= 0; got {s!r}")
        if math.fsum(u) != 0.0:
            errors.append(f"1'u = {math.fsum(u):.3g} is not exactly 0")
        if dual.slope is not None:
            v = np.asarray(dual.slope, dtype=float)
            if self.parameter != "bandwidth":
                return errors + ["a moving dual (slope) is only defined on the bandwidth path"]
            if v.shape != (self.n,) or not np.all(np.isfinite(v)) or not np.isfinite(dual.rate) \
                    or not np.isfinite(dual.at):
                return errors + [f"the dual's slope must be {self.n} finite numbers, its rate and at finite"]
            if math.fsum(v) != 0.0:
                errors.append(f"1'slope = {math.fsum(v):.3g} is not exactly 0")
            bound = s * float(self.moving_sup_norms(u, v, [dual.rate], dual.at, lo, hi)[0])
        else:
            bound = s * self.kernel_sup_norm(u, lo, hi)
        if not bound <= self._lam_floor(lo):
            errors.append(f"dual infeasible on the piece: scale * max ||K u||_inf <= {bound:.17g} "
                          f"exceeds lambda = {self._lam_floor(lo):.17g}")
        return errors

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        # every piece stores a slope (zeros for a fixed dual): pieces stack into one array per field
        slope = np.zeros(self.n) if dual.slope is None else np.asarray(dual.slope, dtype=float)
        return {"beta": np.asarray(primal.beta, dtype=float), "beta0": float(primal.beta0),
                "dual": np.asarray(dual.u, dtype=float), "dual_scale": float(dual.scale),
                "dual_slope": slope, "dual_rate": float(dual.rate), "dual_at": float(dual.at)}

    def from_arrays(self, arrays):
        # certificates written before the dual could move have no slope
        slope = np.asarray(arrays["dual_slope"], dtype=float) if "dual_slope" in arrays else None
        moving = slope is not None and bool(np.any(slope))
        dual = KLassoDual(u=np.asarray(arrays["dual"], dtype=float), scale=float(arrays["dual_scale"]),
                          slope=slope if moving else None, rate=float(arrays["dual_rate"]) if moving else 0.0,
                          at=float(arrays["dual_at"]) if moving else 0.0)
        return KLassoPrimal(beta=np.asarray(arrays["beta"], dtype=float), beta0=float(arrays["beta0"])), dual

    # -------------------------------------------------------------- gap bounds
    def _dual_value_bound(self, dual):
        """(dual objective, rounding allowance)."""
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        d = self.dual_objective(dual, None)
        return d, fp_margin(2 * self.n, s * float(np.abs(self.y) @ np.abs(u)) + s * s * float(u @ u))

    def dual_lower_bound(self, dual, lo, hi=None):
        hi = lo if hi is None else hi
        if dual.slope is not None:  # concave in t: least at an end
            values, margin = self._moving_dual_values(dual.u, dual.slope, dual.scale, dual.rate, dual.at,
                                                      np.array([lo, hi], dtype=float))
            return float(values.min()) - margin
        d, margin = self._dual_value_bound(dual)  # the dual objective depends on neither parameter
        return d - margin

    def _moving_dual_values(self, u, slope, scale, rate, at, xs):
        """Dual objectives of the moving dual :math:`s(u + \\rho(t - a)v)` at the bandwidths
        ``xs`` (k,) and their rounding allowance: a concave quadratic in :math:`x = \\rho(t - a)`,
        :math:`s(y^\\top u + x\\, y^\\top v) - \\tfrac12 s^2 (u^\\top u + 2x\\, u^\\top v + x^2 v^\\top v)`
        (the allowance covers the dot products, the few operations after them and the
        rounding of ``x``).  ``scale`` and ``rate`` may be arrays of shape (r,) (several duals
        along the same ``u`` and ``v``): values (r, k) and allowances (r,)."""
        u, v = np.asarray(u, dtype=float), np.asarray(slope, dtype=float)
        s, rate = np.asarray(scale, dtype=float)[..., None], np.asarray(rate, dtype=float)[..., None]
        x = rate * (np.asarray(xs, dtype=float) - at)
        yu, yv, uu, uv, vv = (float(a @ b) for a, b in ((self.y, u), (self.y, v), (u, u), (u, v), (v, v)))
        values = s * (yu + x * yv) - 0.5 * s * s * (uu + 2 * x * uv + x * x * vv)
        X = np.abs(x).max(axis=-1, keepdims=True)
        au, av, ay = np.abs(u), np.abs(v), np.abs(self.y)
        yau, yav, aa, ab, bb = (float(a @ b) for a, b in ((ay, au), (ay, av), (au, au), (au, av), (av, av)))
        magnitude = s * (yau + X * yav) + s * s * (aa + 2 * X * ab + X * X * bb)
        x_error = 4 * UNIT_ROUNDOFF * np.abs(rate) * (float(np.abs(xs).max()) + abs(at))
        slope_bound = s * yav + s * s * (ab + X * bb)  # |d values / dx|
        margin = (fp_margin(2 * self.n + 16, 1.0) * magnitude + x_error * slope_bound)[..., 0]
        return values, margin if margin.ndim else float(margin)

    def _primal_nodes(self, primal, lo, hi, lam):
        """``(xs, sq, reg, margin)``: the primal objective on the piece ``[lo, hi]`` at ``lam`` is
        at most ``sq + reg`` at the nodes ``xs`` and convex between them (rounding: ``margin``
        on top): with the residual enclosures of :meth:`residual_envelopes`,
        :math:`\\tfrac12 r_i^2 \\le \\tfrac12\\max(\\text{low}_i^2, \\text{up}_i^2)` (interpolated)."""
        key = (lo, hi, lam)
        memo = self._nodes_memo  # the primal itself is kept, so identity cannot be reused
        if memo is not None and memo[0] is primal and memo[1] == key:
            return memo[2]
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y - float(primal.beta0), lo, hi)
        sq = 0.5 * np.maximum(low * low, up * up).sum(axis=0)
        reg = lam * float(np.abs(beta).sum())
        out = xs, sq, reg, fp_margin(2 * self.n, float(sq.max()) + reg)
        if hi > lo:  # (the point checks in between are cheap and would evict it)
            self._nodes_memo = (primal, key, out)
        return out

    def _primal_upper(self, primal, lo, hi, lam):
        """Upper bound of the primal objective on the piece ``[lo, hi]`` at ``lam``, rounding
        included (:meth:`_primal_nodes`, maximized over the nodes)."""
        xs, sq, reg, margin = self._primal_nodes(primal, lo, hi, lam)
        return float(sq.max()) + reg + margin

    def gap_bound(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        if dual.slope is not None:
            # the primal bound is convex between the nodes and the moving dual's objective
            # concave in t: their difference is largest at a node
            xs, sq, reg, margin = self._primal_nodes(primal, lo, hi, self._bw_lam(hi)[1])
            d, d_margin = self._moving_dual_values(dual.u, dual.slope, dual.scale, dual.rate, dual.at, xs)
            gap = sq + reg - d
            return float(gap.max()) + margin + d_margin + fp_margin(2, float(np.abs(gap).max() + np.abs(d).max()))
        d, margin = self._dual_value_bound(dual)
        # on the lambda path the primal is increasing in lambda and the dual does not depend on it
        p = self._primal_upper(primal, lo, hi, self._bw_lam(hi)[1])
        return p - d + margin
