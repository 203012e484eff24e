"""Conic backends: Clarabel and SCS on a QP in their standard form, and CVXPY problems.

A backend returns a *candidate*: problems restore its point to exact feasibility and the
certificate is computed from that point in numpy.  A backend that raises, returns a
non-optimal status or a non-finite point raises :class:`~approxpath.errors.SolverError`.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..compute.parallelism import SOLVER_THREADS
from ..errors import SolverError
from . import current_settings

__all__ = ["QP", "QPSolution", "solve_qp", "solve_cvxpy", "CONIC"]

#: The conic backends, in the order a chain tries them.
CONIC = ("clarabel", "scs")

# Tight settings for certificates: 1e-10 costs one to three more interior-point iterations than
# Clarabel's defaults and leaves gaps of about 1e-9 * scale.
_CLARABEL_TOL = 1e-10
# SCS is first order; 1e-9 is about as far as it converges in reasonable time, and it needs
# ~1e-7 to certify at all (measured on the SVM dual, n = 300).
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
    if _clarabel_has_threads():  # (Clarabel 0.10 and later: faer's factorization on rayon's threads)
        out["max_threads"] = SOLVER_THREADS
    return out


@functools.lru_cache(maxsize=1)
def _clarabel_has_threads():
    import clarabel

    return hasattr(clarabel.DefaultSettings(), "max_threads")


def _scs_options(cfg):
    """SCS settings for ``cfg`` (keywords of ``scs.SCS``, which CVXPY passes on)."""
    eps, iters = (_SCS_TIGHT_EPS, _SCS_TIGHT_MAX_ITERS) if cfg.tight else (_SCS_EPS, _SCS_MAX_ITERS)
    out = dict(eps_abs=eps, eps_rel=eps, max_iters=iters)
    if cfg.time_limit is not None:
        out["time_limit_secs"] = float(cfg.time_limit)
    return out


def _clarabel(qp, cfg):
    import clarabel
    import scipy.sparse as sp  # (here: scipy's import is 0.1 s of a small command-line run)

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


def _scs_interrupted(result):
    """``KeyboardInterrupt`` when SCS stopped for Ctrl-C.  SCS installs its own SIGINT handler
    while it solves (its C code's interrupt listener) and returns "interrupted": Python's handler
    never sees the signal, so the interruption is raised here, or the run would go on with the
    next solver and the next point (0.4.1: still running 300 s after Ctrl-C)."""
    import scs

    if result["info"]["status_val"] == scs.SIGINT:
        raise KeyboardInterrupt


def _scs(qp, cfg):
    import scipy.sparse as sp
    import scs

    data = dict(A=sp.csc_matrix(qp.A), b=qp.b, c=qp.q)
    if qp.P is not None:
        data["P"] = sp.csc_matrix(qp.P)
    r = scs.SCS(data, dict(z=qp.zero, l=qp.nonneg), verbose=False, **_scs_options(cfg)).solve()
    _scs_interrupted(r)
    status = r["info"]["status"]
    return np.asarray(r["x"]), np.asarray(r["y"]), status, r["info"]["status_val"] == 1


_BACKENDS = {"clarabel": _clarabel, "scs": _scs}


def solve_qp(qp, backend):
    """Solve ``qp`` with ``backend`` (one of :data:`CONIC`) under :func:`current_settings`.

    Returns a :class:`QPSolution` when the backend reports optimality and its point is finite (in the tight round
    of :class:`~approxpath.solvers.SolveSettings`: any finite point).

    Raises
    ------
    SolverError
        Saying what the backend reported (its status), when it returns no such point.
    """
    cfg = current_settings()
    t0 = time.perf_counter()
    x, z, status, ok = _BACKENDS[backend](qp, cfg)
    if (ok or cfg.tight) and np.all(np.isfinite(x)) and np.all(np.isfinite(z)):
        return QPSolution(x, z, backend, status, time.perf_counter() - t0)
    raise SolverError(f"{backend}: {status}")


def _cvxpy_scs(problem, kw):
    """``problem.solve(solver=SCS, **kw)`` in CVXPY's documented steps (problem data, the
    solver's raw result, unpacking), so that an SCS run stopped by Ctrl-C raises
    ``KeyboardInterrupt`` (:func:`_scs_interrupted`) instead of CVXPY's "solver failed"."""
    import cvxpy as cp

    data, chain, inverse = problem.get_problem_data(cp.SCS, solver_opts=kw)
    result = chain.solve_via_data(problem, data, False, False, kw)  # (no warm start: see solve_cvxpy)
    _scs_interrupted(result)
    problem.unpack_results(result, chain, inverse)


def solve_cvxpy(problem, backends=CONIC):
    """Solve a ``cvxpy.Problem`` with the first of ``backends`` that reports optimality (in the
    tight round: also an inaccurate optimum), under :func:`current_settings`; returns its name.  The
    backends are tried in order (one that raises or reports another status is passed over); the problem is solved
    in place (no warm start): its variables hold the point.

    Raises
    ------
    SolverError
        Listing what every backend said.
    """
    import cvxpy as cp

    said = []
    cfg = current_settings()
    for name in backends:
        solver, kw = (cp.CLARABEL, _clarabel_options(cfg)) if name == "clarabel" else (cp.SCS, _scs_options(cfg))
        try:
            with warnings.catch_warnings():  # an inaccurate status is handled below, not a warning
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                if solver == cp.SCS:
                    _cvxpy_scs(problem, kw)
                else:
                    # no warm start from the declaration's last solve: a solve's result depends on
                    # its parameters alone (last bits too), so a resumed run equals an uninterrupted one
                    problem.solve(solver=solver, warm_start=False, **kw)
        except Exception as exc:  # a solver crash is one more reason to try the next
            said.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if problem.status == cp.OPTIMAL or (cfg.tight and problem.status == cp.OPTIMAL_INACCURATE):
            return name
        said.append(f"{name}: {problem.status}")
    raise SolverError("no solver succeeded (" + "; ".join(said) + ")")
