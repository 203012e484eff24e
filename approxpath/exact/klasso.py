"""Exact kLASSO paths of Wang et al.: the regularization (λ) path and the kernel path.

.. math::

    \\min_{\\beta, \\beta_0}\\; \\tfrac12 \\lVert y - K_t\\beta - \\beta_0 \\mathbf 1\\rVert^2
    + \\lambda \\lVert \\beta \\rVert_1, \\qquad K_t = \\exp(-tD),

which is the objective of the registered ``klasso`` problem and, term by term, eq. (3) of
Wang, Qin and Huang and eq. (2) of Wang, Yeung and Lochovsky (both have the ½ on the loss and
λ on the ℓ1 norm, no 1/n): **λ needs no conversion**.  Their RBF kernel is
:math:`\\exp(-\\lVert x - x'\\rVert^2/\\sigma)`, so **σ = 1/t**; the kernel path moves σ by the
decay rate θ (σ ← θσ is t ← t/θ) and reports t.

Optimality (their (12)–(13)): with :math:`g = K_t(y - K_t\\beta - \\beta_0\\mathbf 1)` and
:math:`\\beta_0 = \\bar y - \\mathbf 1^\\top K_t\\beta/n` (the bias is eliminated by its own
stationarity, eq. (3)/(4) of the papers),

.. math::

    i \\in \\mathcal A \\Rightarrow g_i = \\operatorname{sgn}(\\beta_i)\\lambda, \\qquad
    i \\notin \\mathcal A \\Rightarrow |g_i| \\le \\lambda .

For a fixed active set :math:`\\mathcal A` with signs :math:`s` they are the linear system of
the papers (eq. (17) of the λ-path paper, eq. (20) of the kernel-path paper)

.. math::

    \\begin{bmatrix} 1 & \\mathbf 1^\\top K_{\\mathcal A}/n \\\\
    K_{\\mathcal A}^\\top \\mathbf 1 & K_{\\mathcal A}^\\top K_{\\mathcal A} + \\nu I\\end{bmatrix}
    \\begin{bmatrix}\\beta_0 \\\\ \\beta_{\\mathcal A}\\end{bmatrix} =
    \\begin{bmatrix}\\bar y \\\\ K_{\\mathcal A}^\\top y - \\lambda s\\end{bmatrix},

where ν is the ridge term of eqs. (22)–(23) (ν = 0 is kLASSO; ν > 0 solves kLASSO plus
:math:`\\tfrac\\nu2\\lVert\\beta\\rVert^2`, which the certificates then measure as suboptimality).
Nothing here is trusted: :func:`approxpath.exact.certify` puts every returned point through the
``klasso`` duality gap.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.linalg

from approxpath.errors import InputError
from approxpath.kernels import gaussian, sq_distances
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin

__all__ = ["Event", "ExactPoint", "ExactPath", "ExactPathError", "lambda_path", "kernel_path"]

# Validity of (13): |g_i| <= lam (1 + _KKT_REL) + rounding of g.  A real crossing found by the
# kernel path's refinement to eps = 1e-6 violates (13) by ~1e-6 lam, far above 1e-10 lam; the
# rounding of one entry of g = K r is at most n u ||r||_1 (|K_ij| <= 1), see _g_slack.
_KKT_REL = 1e-10
# A start solution from a solver: beta_i counts as active when |beta_i| exceeds this fraction of
# max |beta| (interior-point solutions leave ~1e-9 relative on zero coefficients).
_ACTIVE_REL = 1e-6
# Default limit on events: Wang et al. saw 0.5n - 5n events along kernel paths; 50n is far above
# any path seen and only stops runaway loops.
_EVENTS_PER_POINT = 50


def _one_blas_thread(func):
    """Run ``func`` with one BLAS thread (threadpoolctl, installed with scikit-learn, if present).

    The exact paths multiply and factor small dense matrices (n up to a few hundred) thousands
    of times; OpenBLAS's threads were measured 10x slower than one thread for n = 100 on a
    loaded 2-core machine, and not faster on an idle one."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - depends on the environment
            return func(*args, **kwargs)
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


class ExactPathError(RuntimeError):
    """The exact path cannot continue (a singular system or an unresolvable active set)."""


@dataclass(frozen=True)
class Event:
    """A change of the active set.

    Attributes
    ----------
    t : float
        Parameter value (λ, or the bandwidth t = 1/σ) of the first solution with the new set.
        Exact on the λ-path; on the kernel path within a factor :math:`1 \\pm 2\\epsilon`
        of the true breakpoint (the refinement tolerance).
    index : int
        The sample whose coefficient joined or left.
    kind : str
        ``"joined"`` (an inactive :math:`|g_i|` reached λ) or ``"left"`` (an active coefficient
        reached 0).
    sign : int
        Sign of the coefficient while active.
    """

    t: float
    index: int
    kind: str
    sign: int


@dataclass(frozen=True)
class ExactPoint:
    """The exact solution at one parameter value, as returned by calling an :class:`ExactPath`.

    ``signs`` (n,) are the active set and signs of the solution's linear system (0 = inactive);
    ``valid`` says whether conditions (12)–(13) hold there (they can fail inside the
    refinement window of a kernel-path breakpoint, or where an event was missed);
    ``kkt_residual`` is :math:`\\max_i(|g_i| - \\lambda)_+/\\lambda` over inactive ``i`` and
    :math:`|g_i - \\nu\\beta_i - s_i\\lambda|/\\lambda` over active ``i``.
    """

    t: float
    beta: np.ndarray
    beta0: float
    signs: np.ndarray
    valid: bool
    kkt_residual: float

    @property
    def active(self):
        """Indices of the active set the solution was computed with."""
        return tuple(int(i) for i in np.flatnonzero(self.signs))


@dataclass(frozen=True, eq=False)
class ExactPath:
    """An exact kLASSO path: solutions at breakpoints (and at the kernel path's steps).

    Attributes
    ----------
    algorithm : str
    parameter : str
        ``"lam"`` (λ-path, fixed ``bandwidth``) or ``"bandwidth"`` (kernel path, fixed ``lam``).
    lam, bandwidth : float or None
        The fixed one of the two.
    t : ndarray of shape (k,)
        Parameter values of the returned solutions, ascending (λ, or t = 1/σ).
    beta : ndarray of shape (k, n)
    beta0 : ndarray of shape (k,)
    signs : ndarray of shape (k, n), int8
        Active set and signs of the linear system each solution came from (0 = inactive).
    cond : ndarray of shape (k,)
        1-norm condition number of that system (LAPACK's ``gecon`` estimate from the LU factors
        of the solve; within a small factor of the 2-norm one).  λ-path: the system of the
        segment below the point (the last point: above it); nan where none was solved.
    events : tuple of Event
        In the order the algorithm met them.
    linear : bool
        True when the exact solution is linear in ``t`` between consecutive points (λ-path).
    linear_solves : int
        Linear systems solved (the kernel path also counts rejected trial steps).
    max_cond : float
        Largest condition number (as ``cond``) of all systems solved, rejected trial steps included.
    stop_reason : str
    wall_s : float
    settings : dict
        The algorithm's settings (θ, ε, ν, ...).
    solution : callable
        ``t -> ExactPoint``; also available as ``path(t)``.
    X, y : ndarray
        The data (for :meth:`problem` and :func:`approxpath.exact.certify`).
    """

    algorithm: str
    parameter: str
    lam: float | None
    bandwidth: float | None
    t: np.ndarray
    beta: np.ndarray
    beta0: np.ndarray
    signs: np.ndarray
    cond: np.ndarray
    events: tuple
    linear: bool
    linear_solves: int
    max_cond: float
    stop_reason: str
    wall_s: float
    settings: dict = field(default_factory=dict)
    solution: Callable = field(default=None, repr=False)
    X: np.ndarray = field(default=None, repr=False)
    y: np.ndarray = field(default=None, repr=False)

    def __call__(self, t):
        """The exact solution at ``t`` (an :class:`ExactPoint`)."""
        return self.solution(float(t))

    @property
    def breakpoints(self):
        """Sorted parameter values at which the active set changed."""
        return np.unique([e.t for e in self.events])

    @property
    def interval(self):
        return float(self.t[0]), float(self.t[-1])

    def restrict(self, lo, hi):
        """The path on ``[lo, hi]`` (inside its range): its points there plus the exact solutions
        at ``lo`` and ``hi`` (from the callable; their ``cond`` is nan: no system was solved)."""
        lo, hi = max(lo, self.t[0]), min(hi, self.t[-1])
        if not lo <= hi:
            raise InputError(f"[{lo!r}, {hi!r}] does not meet the path's range [{self.t[0]!r}, {self.t[-1]!r}]")
        keep = (self.t > lo) & (self.t < hi)
        ends = [self(v) for v in sorted({lo, hi})]
        order = np.argsort(np.concatenate((self.t[keep], [p.t for p in ends])), kind="stable")

        def cat(a, extra):
            return np.concatenate((a[keep], np.asarray(extra, dtype=a.dtype)))[order]

        return dataclasses.replace(
            self, t=cat(self.t, [p.t for p in ends]), beta=cat(self.beta, [p.beta for p in ends]),
            beta0=cat(self.beta0, [p.beta0 for p in ends]), signs=cat(self.signs, [p.signs for p in ends]),
            cond=cat(self.cond, [np.nan] * len(ends)), events=tuple(e for e in self.events if lo <= e.t <= hi))

    def primal_arrays(self):
        """The solutions as arrays named like the fields of ``klasso``'s primal."""
        return {"beta": self.beta, "beta0": self.beta0}

    def problem(self):
        """The registered ``klasso`` problem this path solves, over the same parameter."""
        from approxpath.registry import get_problem

        fixed = dict(bandwidth=self.bandwidth) if self.parameter == "lam" else dict(lam=self.lam)
        return get_problem("klasso")(self.X, self.y, parameter=self.parameter, **fixed)

    def to_arrays(self):
        """Arrays of the path file (``approxpath exact --out``): ``t``, ``beta``, ``beta0`` and the
        algorithm's record (``signs``, ``cond``, ``linear``, the events)."""
        return dict(t=self.t, beta=self.beta, beta0=self.beta0, signs=self.signs, cond=self.cond,
                    linear=np.array(self.linear),
                    event_t=np.array([e.t for e in self.events], dtype=float),
                    event_index=np.array([e.index for e in self.events], dtype=np.int64),
                    event_kind=np.array([e.kind for e in self.events], dtype="<U6"),
                    event_sign=np.array([e.sign for e in self.events], dtype=np.int8))

    def summary(self):
        joined = sum(e.kind == "joined" for e in self.events)
        fixed = f"t = {self.bandwidth:g}" if self.parameter == "lam" else f"lam = {self.lam:g}"
        return (f"{self.algorithm} ({fixed}): {len(self.events)} events ({joined} joined, "
                f"{len(self.events) - joined} left), {self.breakpoints.size} breakpoints, {self.t.size} solutions "
                f"on [{self.t[0]:.6g}, {self.t[-1]:.6g}]; {self.linear_solves} linear solves, max cond "
                f"{self.max_cond:.3g}; stopped: {self.stop_reason}; {self.wall_s:.3f} s")


# ---------------------------------------------------------------------------- linear algebra
def _kkt_matrix(KA, nu):
    """The papers' matrix :math:`[1, \\mathbf 1^\\top K_A/n; K_A^\\top\\mathbf 1, K_A^\\top K_A + \\nu I]`."""
    n, m = KA.shape
    col = KA.sum(axis=0)
    M = np.empty((m + 1, m + 1))
    M[0, 0] = 1.0
    M[0, 1:] = col / n
    M[1:, 0] = col
    # a contiguous copy of K_A' first: OpenBLAS's threaded path for the transposed-view product
    # was measured 5-20x slower here (n = 100)
    M[1:, 1:] = np.ascontiguousarray(KA.T) @ KA + nu * np.eye(m)
    return M


def _solve(M, b):
    """``M^{-1} b`` by LU with partial pivoting, and the 1-norm condition number of ``M``
    estimated by LAPACK (``gecon``) from the same factors; ``ExactPathError`` when ``M`` is
    singular or the solution is not finite."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # a zero pivot is reported below
        lu, piv = scipy.linalg.lu_factor(M, check_finite=False)
    if not np.all(np.diag(lu) != 0):
        raise ExactPathError(f"the KKT system of {M.shape[0] - 1} active points is singular; "
                             "add a ridge term nu > 0 or stop the path earlier")
    x = scipy.linalg.lu_solve((lu, piv), b, check_finite=False)
    if not np.all(np.isfinite(x)):
        raise ExactPathError("the KKT system produced non-finite values; add a ridge term nu > 0")
    gecon = scipy.linalg.get_lapack_funcs("gecon", (lu,))
    rcond, _ = gecon(lu, float(np.abs(M).sum(axis=0).max()), norm="1")
    return x, (1.0 / rcond if rcond > 0 else math.inf)


def _g_slack(lam, r):
    """Tolerance of the check |g_i| <= lam: relative 1e-10 plus the rounding of g = K r."""
    return _KKT_REL * lam + 2.0 * r.size * UNIT_ROUNDOFF * float(np.abs(r).sum())


def _kkt_residual(g, beta, signs, lam, nu):
    act = signs != 0
    res = np.zeros_like(g)
    res[~act] = np.maximum(np.abs(g[~act]) - lam, 0.0)
    res[act] = np.abs(g[act] - nu * beta[act] - signs[act] * lam)
    return float(res.max() / lam) if lam > 0 else float(res.max())


class _Data:
    """Distances, targets and the fixed settings shared by both algorithms."""

    def __init__(self, X, y, lam, nu):
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        y = np.asarray(y, dtype=float)
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.size:
            raise InputError(f"X must be (n, d) and y (n,) with the same n; got {X.shape} and {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise InputError("X and y must be finite: clean or impute the data first")
        if not (math.isfinite(nu) and nu >= 0):
            raise InputError(f"ridge nu must be >= 0 and finite; got {nu!r}")
        self.X = X
        self.D = sq_distances(X)
        self.y = y
        self.n = y.size
        self.ybar = float(y.mean())
        self.lam = lam
        self.nu = float(nu)

    def residual(self, K_cols, beta_A, beta0):
        return self.y - K_cols @ beta_A - beta0

    def point(self, t, K, beta, beta0, signs, lam):
        """An ExactPoint with its validity check at ``t`` (full kernel ``K``)."""
        act = np.flatnonzero(signs)
        r = self.residual(K[:, act], beta[act], beta0)
        g = K @ r
        inactive_ok = np.all(np.abs(g[signs == 0]) <= lam + _g_slack(lam, r))
        sign_ok = np.all(signs[act] * beta[act] >= 0)  # beta_i = 0 with g_i = s_i lam is optimal
        return ExactPoint(t, beta, float(beta0), signs, bool(inactive_ok and sign_ok),
                          _kkt_residual(g, beta, signs, lam, self.nu))


def _check_events(value):
    """``max_events`` as a positive int (0 events would still record the first)."""
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1):
        raise InputError(f"max_events must be a positive integer; got {value!r}")
    return int(value)


def _lam_max_rounding(K, y, ybar):
    """Rounding allowance of the computed :math:`\\lVert K(y - \\bar y)\\rVert_\\infty`: the residual
    :math:`y - \bar y` carries the error of the mean (n + 2 roundings of :math:`|y|`-sized terms)
    and the n-term products their own (:func:`~approxpath.numerics.fp_margin`); the kernel's
    entries are at most 1 and within 1 ulp-scale of exact, a relative error covered likewise."""
    r = np.abs(y - ybar)
    mean_error = fp_margin(y.size, float(np.abs(y).sum()) / y.size)
    return float(np.max(fp_margin(y.size, 1.0) * (K @ (r + mean_error)) + K @ np.full(y.size, mean_error)))


def _check_positive(name, value):
    if value is None or not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be a positive finite number; got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------- λ-path
@_one_blas_thread
def lambda_path(X, y, bandwidth, lam_min=None, *, max_events=None, nu=0.0):
    """The exact kLASSO regularization path of Wang, Qin and Huang (§3), for fixed bandwidth.

    Starts at :math:`\\lambda_{max} = \\lVert K_t(y - \\bar y\\mathbf 1)\\rVert_\\infty` with
    β = 0, β0 = ȳ (the closed form for λ ≥ λ_max) and decreases λ.  Between breakpoints the
    solution moves linearly with the moving rate :math:`r = D^{-1}[0; s]` (eq. (18)); the next
    breakpoint is the nearest of "an active coefficient reaches 0" and "an inactive
    :math:`|g_j|` reaches λ" (eq. (22)), both in closed form; the update is eqs. (23)–(25).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    bandwidth : float
        t of :math:`K_t = \\exp(-tD)` (Wang's σ = 1/t).
    lam_min : float, optional
        Stop at this λ (default :math:`10^{-3}\\lambda_{max}`); the last point is the exact
        solution there.
    max_events : int, optional
        Stop after this many events (default 50 n).
    nu : float
        Ridge term ν of eqs. (22)–(23) of the kernel-path paper (0: plain kLASSO).

    Returns
    -------
    ExactPath
        ``parameter == "lam"``, points at λ_max, every breakpoint and the end, ``linear``.
    """
    t0 = time.perf_counter()
    bw = _check_positive("bandwidth", bandwidth)
    data = _Data(X, y, None, nu)
    n = data.n
    K = gaussian(data.D, bw)
    max_events = _EVENTS_PER_POINT * n if max_events is None else _check_events(max_events)
    beta = np.zeros(n)
    beta0 = data.ybar
    g = K @ (data.y - beta0)
    lam = float(np.max(np.abs(g)))
    # K (y - mean y) is 0 up to rounding (constant X: K = 1 1'): the true lambda_max is 0 and
    # beta = 0 optimal for every lambda >= 0 (an active set's system would be singular)
    degenerate = lam <= _lam_max_rounding(K, data.y, beta0)
    if lam_min is None:
        # default: 1e-3 lambda_max; a degenerate path has no scale of its own: 1e-3 of the largest
        # lambda_max a residual of this size could have, || K |y - mean y| ||_inf
        lam_min = 1e-3 * (float(np.max(K @ np.abs(data.y - beta0))) if degenerate else lam)
    lam_min = float(lam_min)
    if not (math.isfinite(lam_min) and lam_min >= 0):
        raise InputError(f"lam_min must be >= 0 and finite; got {lam_min!r}")
    signs = np.zeros(n, dtype=np.int8)
    events = []
    solves, max_cond, stop = 0, 1.0, "lam_min"
    # a point is [lambda, beta, beta0, signs, cond]: the signs and the condition number of the
    # system of the segment below it (towards smaller lambda; the last point: the one above)
    points = []
    if degenerate:
        stop = (f"lam_max = 0 up to rounding (computed {lam:.3g}: K_t (y - mean y) vanishes, e.g. constant X "
                "or y): beta = 0 for every lambda > 0")
        points.append([lam_min, beta.copy(), beta0, signs.copy(), 1.0])
    elif lam <= lam_min:
        stop = "lam_min >= lam_max: beta = 0 on the whole range"
        lam_min = min(lam_min, lam)
        points.append([lam, beta.copy(), beta0, signs.copy(), 1.0])
    else:
        j = int(np.argmax(np.abs(g)))
        signs[j] = 1 if g[j] > 0 else -1  # eqs. (12)-(13)
        events.append(Event(lam, j, "joined", int(signs[j])))
        points.append([lam, beta.copy(), beta0, signs.copy(), np.nan])
        just_joined, just_left = {j}, set()
        at_limit = len(events) >= max_events  # the first event is the last allowed: the path ends at lambda_max
        if at_limit:
            stop = f"max_events = {max_events}"
            points[-1][4] = 1.0
        while not at_limit:
            act = np.flatnonzero(signs)
            c = np.concatenate(([0.0], signs[act].astype(float)))
            try:
                rate, cond = _solve(_kkt_matrix(K[:, act], data.nu), c)  # moving rate, eq. (18)
            except ExactPathError as exc:
                stop = f"singular system at lam = {lam:.6g}: {exc}"
                break
            solves += 1
            max_cond = max(max_cond, cond)
            points[-1][4] = cond
            r0, rA = rate[0], rate[1:]
            a = K @ (K[:, act] @ rA + r0)  # g(lam - d) = g - d a; a_i = s_i + nu r_i on the active set
            # "a coefficient reaches 0": beta_i + d r_i = 0, d > 0 (moving towards zero)
            toward = (signs[act] * rA < 0) & ~np.isin(act, list(just_joined))
            d_leave = np.full(act.size, np.inf)
            d_leave[toward] = np.abs(beta[act][toward]) / np.abs(rA[toward])
            # "an inactive |g_j| reaches lambda", eq. (22): g_j - d a_j = +-(lam - d)
            inact = np.flatnonzero(signs == 0)
            inact = inact[~np.isin(inact, list(just_left))]
            d_join = np.full((2, inact.size), np.inf)
            for row, sgn in enumerate((1.0, -1.0)):
                den = 1.0 - sgn * a[inact]
                ok = den > 0
                d_join[row, ok] = np.maximum(lam - sgn * g[inact][ok], 0.0) / den[ok]
            d_l = d_leave.min(initial=np.inf)
            d_j = d_join.min(initial=np.inf)
            d = min(d_l, d_j)
            final = lam - d <= lam_min
            if final:
                d = lam - lam_min
            beta[act] += d * rA  # eq. (24)
            beta0 += d * r0  # eq. (25)
            lam = lam_min if final else lam - d  # eq. (23)
            just_joined, just_left = set(), set()
            if not final and d_l <= d_j:
                i = int(act[int(np.argmin(d_leave))])
                events.append(Event(lam, i, "left", int(signs[i])))
                beta[i] = 0.0
                signs[i] = 0
                just_left = {i}
            elif not final:
                row, k = np.unravel_index(int(np.argmin(d_join)), d_join.shape)
                j = int(inact[k])
                signs[j] = 1 if row == 0 else -1
                events.append(Event(lam, j, "joined", int(signs[j])))
                just_joined = {j}
            points.append([lam, beta.copy(), beta0, signs.copy(), cond if final else np.nan])
            if final:
                break
            if len(events) >= max_events:
                stop = f"max_events = {max_events}"
                break
            act = np.flatnonzero(signs)
            g = K @ data.residual(K[:, act], beta[act], beta0)
    points.reverse()  # ascending lambda
    lam_pts = np.array([p[0] for p in points])
    betas = np.array([p[1] for p in points])
    beta0s = np.array([p[2] for p in points])
    signs_pts = np.array([p[3] for p in points], dtype=np.int8)
    conds = np.array([p[4] for p in points])

    def solution(lam_q):
        if not lam_q >= lam_pts[0]:
            raise ValueError(f"lambda = {lam_q!r} is below the path's end {lam_pts[0]!r}")
        if lam_q > lam_pts[-1]:  # above lambda_max: beta = 0 (closed form)
            return data.point(lam_q, K, np.zeros(n), data.ybar, np.zeros(n, dtype=np.int8), lam_q)
        k = int(np.searchsorted(lam_pts, lam_q, side="right")) - 1
        if lam_q == lam_pts[k]:
            return data.point(lam_q, K, betas[k], beta0s[k], signs_pts[k], lam_q)
        theta = (lam_q - lam_pts[k]) / (lam_pts[k + 1] - lam_pts[k])  # exact linear interpolation
        return data.point(lam_q, K, (1 - theta) * betas[k] + theta * betas[k + 1],
                          (1 - theta) * beta0s[k] + theta * beta0s[k + 1], signs_pts[k + 1], lam_q)

    return ExactPath(
        algorithm="lambda-path (Wang, Qin, Huang)", parameter="lam", lam=None, bandwidth=bw,
        t=lam_pts, beta=betas, beta0=beta0s, signs=signs_pts, cond=conds, events=tuple(events), linear=True,
        linear_solves=solves, max_cond=max_cond, stop_reason=stop, wall_s=time.perf_counter() - t0,
        settings=dict(bandwidth=bw, lam_min=lam_min, max_events=max_events, nu=data.nu), solution=solution,
        X=data.X, y=data.y)


# ---------------------------------------------------------------------------- kernel path
class _KernelTracer:
    """State shared by both directions of one kernel path (counters, events, settings)."""

    def __init__(self, data, theta, eps, marginal, max_events):
        self.data = data
        self.theta = theta
        self.eps = eps
        self.marginal = marginal
        self.max_events = max_events
        self.events = []
        self.solves = 0
        self.max_cond = 1.0

    def kernel(self, t, rows=None):
        return gaussian(self.data.D if rows is None else self.data.D[rows], t)

    def solve(self, t, signs, beta, beta0):
        """Eq. (21): the solution at ``t`` for the active set and signs ``signs``, as the update
        of (beta, beta0) by :math:`A^{-1}b^a` (eqs. (20), (22)-(23))."""
        d = self.data
        act = np.flatnonzero(signs)
        KA = gaussian(d.D[:, act], t)
        M = _kkt_matrix(KA, d.nu)
        rhs = np.concatenate(([d.ybar], KA.T @ d.y - d.lam * signs[act]))
        prev = np.concatenate(([beta0], beta[act]))
        delta, cond = _solve(M, rhs - M @ prev)
        self.solves += 1
        self.max_cond = max(self.max_cond, cond)
        new = np.zeros(d.n)
        new[act] = prev[1:] + delta[1:]
        return new, float(prev[0] + delta[0]), cond, KA

    def violations(self, t, beta, beta0, signs, KA, rows=None):
        """Violations of (12)-(13) at ``t``: (indices leaving, [(index, sign) joining]).

        ``rows`` restricts the check of (13) to those inactive points (the marginal set)."""
        d = self.data
        act = np.flatnonzero(signs)
        r = d.residual(KA, beta[act], beta0)
        idx = np.flatnonzero(signs == 0) if rows is None else rows[signs[rows] == 0]
        g_idx = self.kernel(t, idx) @ r
        bad = np.abs(g_idx) > d.lam + _g_slack(d.lam, r)
        leave = [int(i) for i in act[signs[act] * beta[act] < 0]]
        join = [(int(i), 1 if gi > 0 else -1) for i, gi in zip(idx[bad], g_idx[bad])]
        return leave, join

    def marginal_rows(self, t, beta, beta0, signs):
        """Inactive points with |g_i| >= lam (1 - xi): the only ones checked between events."""
        d = self.data
        act = np.flatnonzero(signs)
        g = self.kernel(t) @ d.residual(gaussian(d.D[:, act], t), beta[act], beta0)
        return np.flatnonzero((signs == 0) & (np.abs(g) >= d.lam * (1.0 - self.marginal)))

    def event(self, t_fail, beta, beta0, signs, leave, join, cond):
        """Update the active set with the violators found at ``t_fail`` (within a factor
        (1 - eps)^2 of the last valid point) and return the first solution with the new set,
        at ``t_fail``; several events inside the refinement window are resolved together.
        A point that would have to change twice means the signs of near-zero coefficients are
        rounding noise (the system's condition number ``cond`` times u exceeds the change
        across the window): ``ExactPathError``."""
        signs, beta = signs.copy(), beta.copy()
        changed = set()
        for _ in range(self.data.n + 1):
            twice = changed & (set(leave) | {j for j, _ in join})
            if twice:
                raise ExactPathError(
                    f"point {min(twice)} would join and leave within the refinement window at t = {t_fail:.8g} "
                    f"(KKT system condition number {cond:.2g}: the signs of near-zero coefficients are likely rounding noise); "
                    "use a larger eps or a ridge term nu > 0")
            for i in leave:
                self.events.append(Event(t_fail, i, "left", int(signs[i])))
                signs[i] = 0
                beta[i] = 0.0
            for j, sg in join:
                self.events.append(Event(t_fail, j, "joined", sg))
                signs[j] = sg
            changed |= set(leave) | {j for j, _ in join}
            b, b0, cond, KA = self.solve(t_fail, signs, beta, beta0)
            leave, join = self.violations(t_fail, b, b0, signs, KA)  # full check after an event
            if not (leave or join):
                return b, b0, signs, cond
        raise ExactPathError(f"the active set could not be resolved at t = {t_fail:.8g}")  # pragma: no cover

    def trace(self, t, beta, beta0, signs, t_end):
        """Table 1 of Wang et al. from ``t`` to ``t_end`` (either direction): returns the
        accepted points and the reason it stopped."""
        up = t_end > t  # t increasing = sigma decreasing (the paper's table)
        points = []
        rows = self.marginal_rows(t, beta, beta0, signs) if self.marginal is not None else None
        try:
            while t != t_end:
                r, fail = self.theta, None
                while r < 1.0 - self.eps:
                    t_new = min(t / r, t_end) if up else max(t * r, t_end)  # sigma <- sigma r
                    b, b0, cond, KA = self.solve(t_new, signs, beta, beta0)
                    leave, join = self.violations(t_new, b, b0, signs, KA, rows)
                    if not (leave or join):  # a valid solution: accept, keep the rate
                        t, beta, beta0 = t_new, b, b0
                        points.append((t, beta, beta0, signs.copy(), cond))
                        if t == t_end:
                            break
                    else:
                        fail = (t_new, leave, join, cond)
                        r = math.sqrt(r)
                if t == t_end:
                    break
                t, (beta, beta0, signs, cond) = fail[0], self.event(fail[0], beta, beta0, signs, *fail[1:])
                points.append((t, beta, beta0, signs.copy(), cond))
                if rows is not None:
                    rows = self.marginal_rows(t, beta, beta0, signs)
                if len(self.events) >= self.max_events:
                    return points, f"max_events = {self.max_events} at t = {t:.6g}"
        except ExactPathError as exc:
            return points, f"stopped at t = {t:.6g}: {exc}"
        return points, "end of range"

    def polish(self, t, beta, beta0):
        """Active set and signs of a solver's solution at ``t``, re-solved exactly by eq. (21)."""
        beta = np.asarray(beta, dtype=float)
        top = float(np.abs(beta).max(initial=0.0))
        signs = np.where(np.abs(beta) > _ACTIVE_REL * top, np.sign(beta), 0).astype(np.int8)
        beta = np.where(signs != 0, beta, 0.0)
        b, b0, cond, KA = self.solve(t, signs, beta, float(beta0))
        leave, join = self.violations(t, b, b0, signs, KA)
        if leave or join:
            raise ExactPathError(
                f"the start solution at t = {t:.6g} does not fix a valid active set (leaving {leave}, joining "
                f"{[j for j, _ in join]}); start from the lambda-path instead")
        return b, b0, signs, cond


@_one_blas_thread
def kernel_path(X, y, lam, interval, *, start=None, start_solution="lambda-path", theta=0.95, eps=1e-6,
                nu=0.0, marginal=None, max_events=None):
    """The exact kLASSO kernel path of Wang, Yeung and Lochovsky (§3, Table 1), for fixed λ.

    From an exact solution at ``start``, the bandwidth is moved by the decay rate θ
    (σ ← θσ, i.e. t ← t/θ, towards ``interval[1]``; σ ← σ/θ towards ``interval[0]``: both
    directions).  Each trial solution comes from eq. (21) with the current active set; if it
    violates (12)–(13) the rate is refined r ← √r until r ≥ 1 − ε, the active set is updated
    with the violators (a coefficient that crossed 0 leaves, an inactive point whose |g_i|
    passed λ joins) and the path continues from the first solution with the new set.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        The fixed λ.
    interval : (float, float)
        Range ``(lo, hi)`` of the bandwidth t of :math:`\\exp(-t\\lVert x - x'\\rVert^2)`
        (Wang's σ from 1/lo down to 1/hi).
    start : float, optional
        Where the path starts (default ``lo``: the largest σ, where Wang's table starts).
    start_solution : {"lambda-path", "cvxpy"} or (beta, beta0)
        The exact solution at ``start``: the end point of :func:`lambda_path` at λ (default),
        the ``klasso`` problem's exact solve, or a given pair; the last two are polished by
        eq. (21) with the active set they define.
    theta : float
        Decay rate in (0, 1) (the paper: 0.95).
    eps : float
        Breakpoint tolerance: an event is located within a factor :math:`(1-\\epsilon)^2`
        (the paper: 1e-6).
    nu : float
        Ridge term ν of eqs. (22)–(23).
    marginal : float, optional
        The marginal-point speed-up: between events only inactive points with
        :math:`|g_i| \\ge \\lambda(1 - \\xi)` are checked against (13) (ξ = ``marginal``;
        every active sign is checked, it costs nothing); the full check runs at every event.
        Faster, but an event of a point outside the set is found late: the certificate shows it.
    max_events : int, optional
        Stop after this many events (default 50 n).

    Returns
    -------
    ExactPath
        ``parameter == "bandwidth"``; every accepted step is a returned solution (each is the
        exact solution for its active set), ``linear`` is False.
    """
    t_start = time.perf_counter()
    lam = _check_positive("lam", lam)
    try:
        lo, hi = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise InputError(f"interval must be a pair (lo, hi) of bandwidths t; got {interval!r}") from None
    if not (0 < lo < hi and math.isfinite(hi)):
        raise InputError(f"interval must satisfy 0 < lo < hi < inf; got ({lo!r}, {hi!r})")
    t0 = lo if start is None else float(start)
    if not lo <= t0 <= hi:
        raise InputError(f"start = {t0!r} must lie in the interval [{lo!r}, {hi!r}]")
    if not 0 < theta < 1:
        raise InputError(f"theta must lie in (0, 1); got {theta!r}")
    if not 0 < eps < 1 - theta:
        raise InputError(f"eps must lie in (0, 1 - theta); got {eps!r}")
    if marginal is not None and not 0 < marginal < 1:
        raise InputError(f"marginal (xi) must lie in (0, 1); got {marginal!r}")
    data = _Data(X, y, lam, nu)
    max_events = _EVENTS_PER_POINT * data.n if max_events is None else _check_events(max_events)
    tracer = _KernelTracer(data, float(theta), float(eps), marginal, max_events)

    if isinstance(start_solution, str) and start_solution == "lambda-path":
        lp = lambda_path(X, y, t0, lam, nu=nu)
        if lp.t[0] > lam:
            raise ExactPathError(f"the lambda-path at t = {t0:.6g} stopped above lam ({lp.stop_reason}); "
                                 "use start_solution='cvxpy'")
        p = lp(lam)
        beta, beta0, signs, cond0 = p.beta, p.beta0, p.signs.copy(), float(lp.cond[0])
        tracer.solves += lp.linear_solves
        tracer.max_cond = max(tracer.max_cond, lp.max_cond)
    elif isinstance(start_solution, str) and start_solution == "cvxpy":
        from approxpath.registry import get_problem

        primal, _ = get_problem("klasso")(X, y, lam=lam, parameter="bandwidth").solve(t0)
        beta, beta0, signs, cond0 = tracer.polish(t0, primal.beta, primal.beta0)
    elif isinstance(start_solution, str):
        raise InputError(f"start_solution must be 'lambda-path', 'cvxpy' or a pair (beta, beta0); got {start_solution!r}")
    else:
        beta, beta0, signs, cond0 = tracer.polish(t0, *start_solution)

    up, why_up = tracer.trace(t0, beta, beta0, signs, hi) if t0 < hi else ([], "end of range")
    down, why_down = tracer.trace(t0, beta, beta0, signs, lo) if t0 > lo else ([], "end of range")
    points = down[::-1] + [(t0, beta, beta0, signs, cond0)] + up
    ts = np.array([p[0] for p in points])
    betas = np.array([p[1] for p in points])
    beta0s = np.array([p[2] for p in points])
    signs_pts = np.array([p[3] for p in points], dtype=np.int8)
    stop = why_up if why_up == why_down else f"increasing t: {why_up}; decreasing t: {why_down}"

    def solution(t_q):
        if not ts[0] <= t_q <= ts[-1]:
            raise ValueError(f"t = {t_q!r} is outside the path's range [{ts[0]!r}, {ts[-1]!r}]")
        k = int(np.searchsorted(ts, t_q))
        if ts[k] == t_q:
            return data.point(t_q, gaussian(data.D, t_q), betas[k], beta0s[k], signs_pts[k], lam)
        # between two returned solutions: eq. (21) with the active set of either end; the
        # valid one is the exact solution (both can fail only inside a refinement window)
        best = None
        for j in (k, k - 1):
            b, b0, _, _ = tracer.solve(t_q, signs_pts[j], betas[j], beta0s[j])
            p = data.point(t_q, gaussian(data.D, t_q), b, b0, signs_pts[j], lam)
            if p.valid:
                return p
            best = p if best is None or p.kkt_residual < best.kkt_residual else best
        return best

    return ExactPath(
        algorithm="kernel path (Wang, Yeung, Lochovsky)", parameter="bandwidth", lam=lam, bandwidth=None,
        t=ts, beta=betas, beta0=beta0s, signs=signs_pts, cond=np.array([p[4] for p in points]),
        events=tuple(tracer.events), linear=False, linear_solves=tracer.solves, max_cond=tracer.max_cond,
        stop_reason=stop, wall_s=time.perf_counter() - t_start,
        settings=dict(lam=lam, interval=[lo, hi], start=t0, theta=float(theta), eps=float(eps), nu=data.nu,
                      marginal=marginal, max_events=max_events,
                      start_solution=start_solution if isinstance(start_solution, str) else "given"),
        solution=solution, X=data.X, y=data.y)
