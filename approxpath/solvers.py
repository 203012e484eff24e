"""Exact solves: Clarabel with tight tolerances first, SCS as fallback.

Whatever a solver reports is only a *candidate*: problems repair its point to exact
feasibility and certificates are computed from that point in numpy. A solver that raises,
returns a non-optimal status or a non-finite point is skipped and the next one is tried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["QP", "QPSolution", "SolverError", "solve_qp", "solve_cvxpy", "DEFAULT_SOLVERS"]

#: Solver chain of every exact solve (first that succeeds wins).
DEFAULT_SOLVERS = ("clarabel", "scs")

# Tight settings for certificates (DESIGN.md section 7): 1e-10 costs one to three more
# interior-point iterations than Clarabel's defaults and leaves gaps of about 1e-9 * scale.
_CLARABEL_TOL = 1e-10
# SCS is first order; 1e-9 is about as far as it converges in reasonable time, and DESIGN.md
# section 7 measured that it needs ~1e-7 to certify at all.
_SCS_EPS = 1e-9
_SCS_MAX_ITERS = 200_000


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


def _clarabel(qp, time_limit):
    import clarabel

    s = clarabel.DefaultSettings()
    s.verbose = False
    s.tol_gap_abs = s.tol_gap_rel = s.tol_feas = _CLARABEL_TOL
    if time_limit is not None:
        s.time_limit = float(time_limit)
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


def _scs(qp, time_limit):
    import scs

    data = dict(A=sp.csc_matrix(qp.A), b=qp.b, c=qp.q)
    if qp.P is not None:
        data["P"] = sp.csc_matrix(qp.P)
    kw = dict(eps_abs=_SCS_EPS, eps_rel=_SCS_EPS, max_iters=_SCS_MAX_ITERS, verbose=False)
    if time_limit is not None:
        kw["time_limit_secs"] = float(time_limit)
    r = scs.SCS(data, dict(z=qp.zero, l=qp.nonneg), **kw).solve()
    status = r["info"]["status"]
    return np.asarray(r["x"]), np.asarray(r["y"]), status, r["info"]["status_val"] == 1


_BACKENDS = {"clarabel": _clarabel, "scs": _scs}


def solve_qp(qp, solvers=DEFAULT_SOLVERS, time_limit=None):
    """Solve ``qp`` with the first solver of ``solvers`` that reports optimality.

    Raises
    ------
    SolverError
        Listing what every solver said.
    """
    said = []
    for name in solvers:
        t0 = time.perf_counter()
        try:
            x, z, status, ok = _BACKENDS[name](qp, time_limit)
        except Exception as exc:  # a solver crash is one more reason to try the next
            said.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if ok and np.all(np.isfinite(x)) and np.all(np.isfinite(z)):
            return QPSolution(x, z, name, status, time.perf_counter() - t0)
        said.append(f"{name}: {status}")
    raise SolverError("no solver succeeded (" + "; ".join(said) + ")")


def solve_cvxpy(problem, solvers=DEFAULT_SOLVERS, time_limit=None):
    """Solve a ``cvxpy.Problem`` with Clarabel (tight) and SCS as fallback; returns the solver name."""
    import cvxpy as cp

    said = []
    for name in solvers:
        if name == "clarabel":
            kw = dict(tol_gap_abs=_CLARABEL_TOL, tol_gap_rel=_CLARABEL_TOL, tol_feas=_CLARABEL_TOL)
            if time_limit is not None:
                kw["time_limit"] = float(time_limit)
            solver = cp.CLARABEL
        else:
            kw = dict(eps_abs=_SCS_EPS, eps_rel=_SCS_EPS, max_iters=_SCS_MAX_ITERS)
            if time_limit is not None:
                kw["time_limit_secs"] = float(time_limit)
            solver = cp.SCS
        try:
            problem.solve(solver=solver, **kw)
        except Exception as exc:
            said.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if problem.status == cp.OPTIMAL:
            return name
        said.append(f"{name}: {problem.status}")
    raise SolverError("no solver succeeded (" + "; ".join(said) + ")")
