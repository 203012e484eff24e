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
on the piece.  The primal keeps :math:`\\beta` and refits :math:`\\beta_0 = \\text{mean}(y - K_\\tau\\beta)`
(once per piece, at its middle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from approxpath.kernels import gaussian
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


@dataclass(frozen=True)
class KLassoPrimal:
    """Primal point: coefficients ``beta`` (n,) and intercept ``beta0``."""

    beta: np.ndarray
    beta0: float


@dataclass(frozen=True)
class KLassoDual:
    """Dual point ``scale * u``: ``u`` (n,) with ``1'u = 0`` exactly, ``scale >= 0``."""

    u: np.ndarray
    scale: float = 1.0


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
    """

    name = "klasso"
    Primal = KLassoPrimal
    Dual = KLassoDual

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

    def interpolate(self, a, b, theta):
        """Convex combination of the dual points ``scale * u`` themselves (restore after)."""
        (pa, da), (pb, db) = a, b
        primal = KLassoPrimal(beta=(1 - theta) * pa.beta + theta * pb.beta,
                              beta0=(1 - theta) * pa.beta0 + theta * pb.beta0)
        return primal, KLassoDual(u=(1 - theta) * da.scale * da.u + theta * db.scale * db.u, scale=1.0)

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
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        return s * float(self.y @ u) - 0.5 * s * s * float(u @ u)

    def primal_violation(self, primal, tau):
        ok = np.all(np.isfinite(primal.beta)) and np.isfinite(primal.beta0)
        return 0.0 if ok else float("inf")

    def dual_violation(self, dual, tau):
        bw, lam = self._bw_lam(tau)
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        return float(max(0.0, -s, s * np.max(np.abs(self._kernel(tau) @ u)) - lam, s * abs(math.fsum(u))))

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
        bound = s * self.kernel_sup_norm(u, lo, hi)
        if not bound <= self._lam_floor(lo):
            errors.append(f"dual infeasible on the piece: scale * max ||K u||_inf <= {bound:.17g} "
                          f"exceeds lambda = {self._lam_floor(lo):.17g}")
        return errors

    # -------------------------------------------------------------- certificate arrays
    def to_arrays(self, primal, dual):
        return {"beta": np.asarray(primal.beta, dtype=float), "beta0": float(primal.beta0),
                "dual": np.asarray(dual.u, dtype=float), "dual_scale": float(dual.scale)}

    def from_arrays(self, arrays):
        return (KLassoPrimal(beta=np.asarray(arrays["beta"], dtype=float), beta0=float(arrays["beta0"])),
                KLassoDual(u=np.asarray(arrays["dual"], dtype=float), scale=float(arrays["dual_scale"])))

    # -------------------------------------------------------------- gap bounds
    def _dual_value_bound(self, dual):
        """(dual objective, rounding allowance)."""
        s, u = float(dual.scale), np.asarray(dual.u, dtype=float)
        d = self.dual_objective(dual, None)
        return d, fp_margin(2 * self.n, s * float(np.abs(self.y) @ np.abs(u)) + s * s * float(u @ u))

    def dual_lower_bound(self, dual, lo, hi=None):
        d, margin = self._dual_value_bound(dual)  # the dual objective depends on neither parameter
        return d - margin

    def _primal_upper(self, primal, lo, hi, lam):
        """Upper bound of the primal objective on the piece ``[lo, hi]`` at ``lam``, rounding
        included: with the residual enclosures of :meth:`residual_envelopes`,
        :math:`\\tfrac12 r_i^2 \\le \\tfrac12\\max(\\text{low}_i^2, \\text{up}_i^2)`, maximized over the
        breakpoints (convex between them)."""
        beta = np.asarray(primal.beta, dtype=float)
        xs, low, up = self.residual_envelopes(beta, self.y - float(primal.beta0), lo, hi)
        sq = 0.5 * np.maximum(low * low, up * up).sum(axis=0)
        reg = lam * float(np.abs(beta).sum())
        return float(sq.max()) + reg + fp_margin(2 * self.n, float(sq.max()) + reg)

    def gap_bound(self, primal, dual, lo, hi=None):
        hi = lo if hi is None else hi
        d, margin = self._dual_value_bound(dual)
        # on the lambda path the primal is increasing in lambda and the dual does not depend on it
        p = self._primal_upper(primal, lo, hi, self._bw_lam(hi)[1])
        return p - d + margin
