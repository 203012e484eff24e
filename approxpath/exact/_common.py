"""Shared by the exact kLASSO paths of Wang et al.: results, data and the optimality check.

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
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from approxpath.compute.distances import sq_distances
from approxpath.numerics import UNIT_ROUNDOFF
from approxpath.errors import InputError, SolverError

__all__ = ["Event", "ExactPoint", "ExactPath", "ExactPathError"]

# Validity of (13): |g_i| <= lam (1 + _KKT_REL) + rounding of g.  A real crossing found by the
# kernel path's refinement to eps = 1e-6 violates (13) by ~1e-6 lam, far above 1e-10 lam; the
# rounding of one entry of g = K r is at most n u ||r||_1 (|K_ij| <= 1), see g_slack.
_KKT_REL = 1e-10
# A start solution from a solver: beta_i counts as active when |beta_i| exceeds this fraction of
# max |beta| (interior-point solutions leave ~1e-9 relative on zero coefficients).
ACTIVE_REL = 1e-6
# Default limit on events: Wang et al. saw 0.5n - 5n events along kernel paths; 50n is far above
# any path seen and only stops runaway loops.
EVENTS_PER_POINT = 50


class ExactPathError(SolverError):
    """The exact path cannot continue (a singular system or an unresolvable active set): a
    solver failure (exit status 4 of the command line)."""


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
        1-norm condition number of that system, LAPACK's estimate from the factors of the solve
        (within a small factor of the 2-norm one): the kernel path's bordered matrix (``gecon``
        from LU); the λ-path's reduced matrix :math:`\\tilde K_{\\mathcal A}^\\top\\tilde
        K_{\\mathcal A} + \\nu I` (``pocon`` from its Cholesky factor; the bordered matrix's
        ``gecon`` where the LU reference or fallback solved it) of the segment below the point
        (the last point: above it); nan where none was solved.
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
    failed : bool
        True when the path stopped because it could not continue (a singular system, an active
        set it cannot resolve): before what its stopping rules asked for (``stop_reason`` says
        where and why).
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
    failed: bool = False
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
            raise InputError(f"[{float(lo):.6g}, {float(hi):.6g}] does not meet the path's range "
                             f"[{float(self.t[0]):.6g}, {float(self.t[-1]):.6g}]")
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



def g_slack(lam, r):
    """Tolerance of the check |g_i| <= lam: relative 1e-10 plus the rounding of g = K r."""
    return _KKT_REL * lam + 2.0 * r.size * UNIT_ROUNDOFF * float(np.abs(r).sum())


def _kkt_residual(g, beta, signs, lam, nu):
    act = signs != 0
    res = np.zeros_like(g)
    res[~act] = np.maximum(np.abs(g[~act]) - lam, 0.0)
    res[act] = np.abs(g[act] - nu * beta[act] - signs[act] * lam)
    return float(res.max() / lam) if lam > 0 else float(res.max())


class PathData:
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
        if isinstance(nu, bool) or not (isinstance(nu, (int, float, np.floating)) and math.isfinite(nu) and nu >= 0):
            raise InputError(f"ridge nu must be >= 0 and finite; got {nu!r}")
        from ..memory import check_exact_fits

        check_exact_fits(y.size, "lam" if lam is None else "bandwidth")
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
        inactive_ok = np.all(np.abs(g[signs == 0]) <= lam + g_slack(lam, r))
        sign_ok = np.all(signs[act] * beta[act] >= 0)  # beta_i = 0 with g_i = s_i lam is optimal
        return ExactPoint(t, beta, float(beta0), signs, bool(inactive_ok and sign_ok),
                          _kkt_residual(g, beta, signs, lam, self.nu))


def check_positive(name, value):
    if isinstance(value, bool) or value is None or not (isinstance(value, (int, float, np.floating))
                                                        and math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be a positive finite number; got {value!r}")
    return float(value)


def count_or_none(name, value):
    """``value`` as a non-negative int, None stays None; ``InputError`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer (or None: no limit); got {value!r}")
    return int(value)

