"""Exact solves: Clarabel with tight tolerances first, SCS as fallback.

Whatever a solver reports is only a *candidate*: problems repair its point to exact
feasibility and certificates are computed from that point in numpy. A solver that raises,
returns a non-optimal status or a non-finite point is skipped and the next one is tried.

How hard a solve tries is set for a block of code by :func:`settings`
(:class:`SolveSettings`: a time limit per solver call, and a second, tighter round that
:meth:`approxpath.Problem.solve` runs when no solver's point certified); every backend,
including a problem's own (libSVM), reads them from :func:`current_settings`.
"""

from __future__ import annotations

import contextvars
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["QP", "QPSolution", "SolverError", "SolveSettings", "settings", "current_settings", "solve_qp",
           "solve_cvxpy", "DEFAULT_SOLVERS"]

#: Solver chain of every exact solve (first that succeeds wins).
DEFAULT_SOLVERS = ("clarabel", "scs")

# Tight settings for certificates (DESIGN.md section 7): 1e-10 costs one to three more
# interior-point iterations than Clarabel's defaults and leaves gaps of about 1e-9 * scale.
_CLARABEL_TOL = 1e-10
# SCS is first order; 1e-9 is about as far as it converges in reasonable time, and DESIGN.md
# section 7 measured that it needs ~1e-7 to certify at all.
_SCS_EPS = 1e-9
_SCS_MAX_ITERS = 200_000
# The tighter round: 1e-12 is a few ulps of the scaled residuals, about the end of what an
# interior point can reach in double precision (it then stops with AlmostSolved or
# InsufficientProgress, whose point is still a candidate: our gap decides); more iterations
# and iterative-refinement steps for ill-conditioned kernels.
_CLARABEL_TIGHT_TOL = 1e-12
_CLARABEL_TIGHT_ITERS = 500
_CLARABEL_TIGHT_REFINE = 50
_SCS_TIGHT_EPS = 1e-11
_SCS_TIGHT_MAX_ITERS = 1_000_000


@dataclass(frozen=True)
class SolveSettings:
    """How hard an exact solve tries.

    Attributes
    ----------
    time_limit : float or None
        Seconds per solver call (Clarabel's ``time_limit``, SCS's ``time_limit_secs``); a
        solver that runs out of time counts as failed and the next one is tried.  libSVM
        cannot be interrupted: it is bounded by an iteration cap instead.  None: no limit.
    tight : bool
        The second round: tighter tolerances, more iterations, and any finite point a
        solver returns is a candidate whatever its status (the certified gap decides).
    """

    time_limit: float | None = None
    tight: bool = False


_SETTINGS = contextvars.ContextVar("approxpath_solve_settings", default=SolveSettings())


def current_settings():
    """The :class:`SolveSettings` in force (see :func:`settings`)."""
    return _SETTINGS.get()


@contextmanager
def settings(value):
    """Run the exact solves of a ``with`` block under ``value`` (a :class:`SolveSettings`)."""
    token = _SETTINGS.set(value)
    try:
        yield value
    finally:
        _SETTINGS.reset(token)


class SolverError(RuntimeError):
    """No solver in the chain produced an optimal point."""


@dataclass(frozen=True)
class QP:
    """:math:`\\min \\tfrac12 x^\\top P x + q^\\top x` s.t. :math:`Ax + s = b`,
    :math:`s \\in \\{0\\}^{z} \\times \\mathbb{R}_+^{l}`.

    Attributes
    ----------
    P : sparse matrix (m, m), upper triangle (CSC), or None for an LP
    q : ndarray (m,)
    A : sparse matrix (z + l, m), CSC
    b : ndarray (z + l,)
    zero, nonneg : int
        Sizes of the zero cone (equalities, first rows) and the nonnegative cone.
    """

    P: object
    q: np.ndarray
    A: object
    b: np.ndarray
    zero: int
    nonneg: int


@dataclass(frozen=True)
class QPSolution:
    """Primal ``x`` and constraint multipliers ``z`` (Clarabel/SCS sign convention:
    :math:`Px + q + A^\\top z = 0`, ``z >= 0`` on the nonnegative cone)."""

    x: np.ndarray
    z: np.ndarray
    solver: str
    status: str
    seconds: float


def _clarabel_options(cfg):
    """Clarabel settings for ``cfg`` (names of ``clarabel.DefaultSettings``, which CVXPY passes on)."""
    tol = _CLARABEL_TIGHT_TOL if cfg.tight else _CLARABEL_TOL
    out = dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    if cfg.tight:
        out.update(max_iter=_CLARABEL_TIGHT_ITERS, iterative_refinement_max_iter=_CLARABEL_TIGHT_REFINE)
    if cfg.time_limit is not None:
        out["time_limit"] = float(cfg.time_limit)
    return out


def _scs_options(cfg):
    """SCS settings for ``cfg`` (keywords of ``scs.SCS``, which CVXPY passes on)."""
    eps, iters = (_SCS_TIGHT_EPS, _SCS_TIGHT_MAX_ITERS) if cfg.tight else (_SCS_EPS, _SCS_MAX_ITERS)
    out = dict(eps_abs=eps, eps_rel=eps, max_iters=iters)
    if cfg.time_limit is not None:
        out["time_limit_secs"] = float(cfg.time_limit)
    return out


def _clarabel(qp, cfg):
    import clarabel

    s = clarabel.DefaultSettings()
    s.verbose = False
    for key, value in _clarabel_options(cfg).items():
        setattr(s, key, value)
    m = qp.q.size
    P = qp.P if qp.P is not None else sp.csc_matrix((m, m))
    cones = []
    if qp.zero:
        cones.append(clarabel.ZeroConeT(qp.zero))
    if qp.nonneg:
        cones.append(clarabel.NonnegativeConeT(qp.nonneg))
    sol = clarabel.DefaultSolver(sp.csc_matrix(P), qp.q, sp.csc_matrix(qp.A), qp.b, cones, s).solve()
    ok = sol.status == clarabel.SolverStatus.Solved
    return np.asarray(sol.x), np.asarray(sol.z), str(sol.status), ok


def _scs(qp, cfg):
    import scs

    data = dict(A=sp.csc_matrix(qp.A), b=qp.b, c=qp.q)
    if qp.P is not None:
        data["P"] = sp.csc_matrix(qp.P)
    r = scs.SCS(data, dict(z=qp.zero, l=qp.nonneg), verbose=False, **_scs_options(cfg)).solve()
    status = r["info"]["status"]
    return np.asarray(r["x"]), np.asarray(r["y"]), status, r["info"]["status_val"] == 1


_BACKENDS = {"clarabel": _clarabel, "scs": _scs}


def solve_qp(qp, solvers=DEFAULT_SOLVERS):
    """Solve ``qp`` with the first solver of ``solvers`` that reports optimality (in the
    tight round of :class:`SolveSettings`: that returns a finite point).

    Raises
    ------
    SolverError
        Listing what every solver said.
    """
    said = []
    cfg = current_settings()
    for name in solvers:
        t0 = time.perf_counter()
        try:
            x, z, status, ok = _BACKENDS[name](qp, cfg)
        except Exception as exc:  # a solver crash is one more reason to try the next
            said.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if (ok or cfg.tight) and np.all(np.isfinite(x)) and np.all(np.isfinite(z)):
            return QPSolution(x, z, name, status, time.perf_counter() - t0)
        said.append(f"{name}: {status}")
    raise SolverError("no solver succeeded (" + "; ".join(said) + ")")


def solve_cvxpy(problem, solvers=DEFAULT_SOLVERS):
    """Solve a ``cvxpy.Problem`` with Clarabel (tight) and SCS as fallback, under
    :func:`current_settings`; returns the solver name."""
    import cvxpy as cp

    said = []
    cfg = current_settings()
    for name in solvers:
        solver, kw = (cp.CLARABEL, _clarabel_options(cfg)) if name == "clarabel" else (cp.SCS, _scs_options(cfg))
        try:
            with warnings.catch_warnings():  # an inaccurate status is handled below, not a warning
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                problem.solve(solver=solver, **kw)
        except Exception as exc:
            said.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if problem.status == cp.OPTIMAL or (cfg.tight and problem.status == cp.OPTIMAL_INACCURATE):
            return name
        said.append(f"{name}: {problem.status}")
    raise SolverError("no solver succeeded (" + "; ".join(said) + ")")
