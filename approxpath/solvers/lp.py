"""Exact solves of sparse robust l1 kernel regression as a linear program (HiGHS).

.. math::

    \\min_{\\beta}\\; \\lVert y - K\\beta\\rVert_1 + \\lambda \\lVert\\beta\\rVert_1
    \\;=\\;
    \\max_{u}\\; y^\\top u \\quad\\text{s.t.}\\quad -1 \\le u \\le 1,\\;
    -\\lambda \\le K u \\le \\lambda

(``K`` symmetric, e.g. a Gaussian kernel).  The *dual* is the smaller LP: n columns with
bounds and n ranged rows, against 3n columns and 4n rows for the primal in
:math:`(\\beta, e, a)`.  Its row multipliers are the primal coefficients: with HiGHS's
convention for the minimization of :math:`-y^\\top u`, :math:`\\beta = -` (row duals).

Two routes:

* ``"highspy"`` (the ``highspy`` package, which recent CVXPY releases install): dual simplex, warm-started
  from the basis of a neighbouring solve (:class:`LPBasis`; the basis stays a valid start when
  ``K`` changes: HiGHS refactors it and repairs infeasibility with a few pivots);
* ``"scipy"`` (always installed): the same LP through ``scipy.optimize.linprog`` (HiGHS's
  dual simplex); scipy exposes no basis, so every solve is cold.

Nothing here is trusted by a certificate: the caller restores the point and computes its
own duality gap.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from approxpath.compute.parallelism import SOLVER_THREADS
from approxpath.errors import InputError, SolverError
from approxpath.validate import check_gram_problem

__all__ = ["HighsPool", "LPBasis", "LPSolution", "solve_robust_l1", "basis_dual", "basis_primal", "LP_SOLVERS"]

#: Routes of :func:`solve_robust_l1`, in the order ``solver=None`` tries them.
LP_SOLVERS = ("highspy", "scipy")
# The LP's rows |K u| <= lam are scaled to lam in [0.5, 1) below this lam (y scaled to [0.5, 1)).
# Unscaled, HiGHS's vertex missed the exact solves' 1e-7 mark (relative gaps ~1e-6) at lam = 2e-3
# and 1e-2 at 18 and 11 of 25 bandwidths (sinc, n = 100; n = 400, lam = 0.01: 7 of 9), each then
# solved by Clarabel (seconds to a minute at n = 1000); scaled, at none.  From lam = 0.03 on none
# missed unscaled, and paths at lam >= 2^-4 (the usual 0.1) keep their solves bit for bit.
_ROWS_BELOW = 2.0**-4

# HiGHS basis status codes (``highspy.HighsBasisStatus``), stored as plain integers
_AT_LOWER, _BASIC, _AT_UPPER = 0, 1, 2


@dataclass(frozen=True)
class LPBasis:
    """A simplex basis of the dual LP: HiGHS status codes (``HighsBasisStatus`` values:
    0 at the lower bound, 1 basic, 2 at the upper bound, ...) of the n columns (``u``) and the
    n rows (``K u``).  Plain arrays, so it pickles (workers, checkpoints)."""

    col_status: np.ndarray
    row_status: np.ndarray


@dataclass(frozen=True)
class LPSolution:
    """What :func:`solve_robust_l1` returns.

    Attributes
    ----------
    beta : ndarray (n,)
        Primal coefficients (the row multipliers).
    u : ndarray (n,)
        Dual point, clipped into the box :math:`|u| \\le 1` (the simplex leaves bounded
        variables on their bounds; the clip only removes rounding).
    basis : LPBasis or None
        The optimal basis (a warm start for the next solve); None from ``"scipy"``.
    iterations : int
        Simplex iterations.
    status : str
        The solver's model status (for messages only; the caller's gap decides).
    solver : str
    seconds : float
    """

    beta: np.ndarray
    u: np.ndarray
    basis: LPBasis | None
    iterations: int
    status: str
    solver: str
    seconds: float


def _check(K, y, lam, warm):
    K, y, lam = check_gram_problem("solve_robust_l1", K, y, lam)
    if warm is not None:
        basis = getattr(warm, "basis", warm)
        if basis is not None and not (isinstance(basis, LPBasis) and basis.col_status.shape == y.shape
                                      and basis.row_status.shape == y.shape):
            raise InputError(f"warm must be an LPSolution or LPBasis of {y.size} columns and rows")
        warm = basis
    return K, y, float(lam), warm


def _time_limit(time_limit):
    if time_limit is not None:
        return float(time_limit)
    from approxpath.solvers import current_settings

    return current_settings().time_limit


_BANNER_SHOWN = []


def _quiet_highs(highspy):
    """A silent ``highspy.Highs``: the first one a process builds prints a licence banner on
    the C-level stdout before any option can be set, so that one is built with fd 1 on null."""
    if _BANNER_SHOWN:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _BANNER_SHOWN.append(True)
    h.silent()
    return h


def _pass_lp(highspy, h, K, y, lam):
    """Give ``h`` the dual LP: min -y'u over -1 <= u <= 1, -lam <= K u <= lam, K column-wise
    (column j of K is its row j: K is symmetric).  From the numpy arrays directly where highspy
    takes them (one copy: 0.5 s for a dense K at n = 4000, against 1.7 s through a ``HighsLp``'s fields,
    which pybind11 converts entry by entry); through a ``HighsLp`` where it does not."""
    n = y.size
    start = np.arange(0, n * n + 1, n, dtype=np.int32)
    index = np.tile(np.arange(n, dtype=np.int32), n)
    value = np.ascontiguousarray(K).ravel()
    ends = (-y, np.full(n, -1.0), np.full(n, 1.0), np.full(n, -lam), np.full(n, lam))  # HiGHS minimizes
    try:
        status = h.passModel(n, n, n * n, int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize),
                             0.0, *ends, start, index, value, np.zeros(n, dtype=np.int32))  # all continuous
        # kWarning: HiGHS dropped entries of K at or below its small_matrix_value (1e-9) as zeros,
        # the same model the HighsLp route gives; only kError means the overload failed
        if status != highspy.HighsStatus.kError:
            return
    except TypeError:  # a highspy without this overload
        pass
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, n
    lp.col_cost_, lp.col_lower_, lp.col_upper_, lp.row_lower_, lp.row_upper_ = ends
    a = lp.a_matrix_
    a.format_, a.start_, a.index_, a.value_ = highspy.MatrixFormat.kColwise, start, index, value
    h.passModel(lp)


class HighsPool:
    """HiGHS instances kept between the solves of :func:`solve_robust_l1` (its ``pool``): a solve
    takes an idle one (or makes one) and gives it back.  A new instance per solve allocated its
    factor's work arrays anew, and the kernel zeroed their pages: at n = 4000 (sinc, 10 %
    outliers) ~440,000 page faults and 0.7 s of system time a warm solve of 2.4-3 s; reused,
    ~47,000 and 0.1 s, the same iterations and solution bit for bit.  What an idle instance holds
    (its LP, the kernel's n^2 entries, and their factor's arrays) stays allocated until
    :meth:`clear` or the pool's end.  A pool pickles empty: a worker process keeps its own."""

    def __init__(self):
        self._idle = []

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self._idle = []

    def __len__(self):
        """The idle instances."""
        return len(self._idle)

    def clear(self):
        """Free the idle instances."""
        self._idle.clear()


def _new_highs(highspy):
    """A silent ``highspy.Highs`` with the options every solve here uses."""
    h = _quiet_highs(highspy)
    h.setOptionValue("solver", "simplex")
    # (the dense LP's simplex gained nothing from HiGHS's parallel dual simplex on two shared cores)
    h.setOptionValue("threads", SOLVER_THREADS)
    # feasibility tolerances at HiGHS's smallest (default 1e-7): with the default, a vertex at
    # sinc n = 1000 (10 % outliers), t = 0.292 certified a gap of 2.6e-4 against the acceptance
    # mark 3.9e-5, and Clarabel (51 s, failed) and SCS (37 s) were tried after it; with 1e-10, 2.4e-7
    for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(option, 1e-10)
    return h


def _set_basis(highspy, h, warm):
    """Start ``h`` from ``warm``.  A basis of n basic variables (of the 2n; every basis HiGHS
    gives) is passed as HiGHS's own, not alien: the solve factorizes it once, where an alien
    one was also factorized by ``setBasis``, checking it (n = 4000: ~0.25 s and ~40 % of the
    page faults of a warm solve); a singular one is repaired by the solve's factorization as well."""
    basis = highspy.HighsBasis()
    basis.col_status = [highspy.HighsBasisStatus(int(s)) for s in warm.col_status]
    basis.row_status = [highspy.HighsBasisStatus(int(s)) for s in warm.row_status]
    basis.valid = True
    basis.alien = int((warm.col_status == _BASIC).sum() + (warm.row_status == _BASIC).sum()) != warm.row_status.size
    h.setBasis(basis)


def _highspy(K, y, lam, warm, time_limit, pool):
    import highspy

    try:  # (list.pop and append are atomic: solves side by side take different instances)
        h = _new_highs(highspy) if pool is None else pool._idle.pop()
    except IndexError:  # none idle
        h = _new_highs(highspy)
    try:
        return _run_highs(highspy, h, K, y, lam, warm, time_limit)
    finally:
        if pool is not None:
            pool._idle.append(h)


def _run_highs(highspy, h, K, y, lam, warm, time_limit):
    h.setOptionValue("time_limit", float("inf") if time_limit is None else float(time_limit))
    # presolve would discard the basis; the LP is small and dense, presolve finds nothing
    h.setOptionValue("presolve", "choose" if warm is None else "off")
    _pass_lp(highspy, h, K, y, lam)
    if warm is not None:
        _set_basis(highspy, h, warm)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    sol = h.getSolution()
    if not sol.value_valid or not sol.dual_valid:
        raise SolverError(f"highspy: no solution ({status})")
    b = h.getBasis()
    basis = LPBasis(np.array([int(s) for s in b.col_status], dtype=np.int8),
                    np.array([int(s) for s in b.row_status], dtype=np.int8)) if b.valid else None
    return (-np.asarray(sol.row_dual, dtype=float), np.asarray(sol.col_value, dtype=float), basis,
            int(h.getInfo().simplex_iteration_count), status)


def _scipy(K, y, lam, time_limit):
    from scipy.optimize import linprog

    n = y.size
    options = {} if time_limit is None else {"time_limit": time_limit}
    res = linprog(-y, A_ub=np.vstack([K, -K]), b_ub=np.full(2 * n, lam), bounds=(-1.0, 1.0),
                  method="highs-ds", options=options)
    if res.x is None or res.ineqlin is None:
        raise SolverError(f"scipy linprog: no solution ({res.message})")
    m = np.asarray(res.ineqlin.marginals, dtype=float)  # d(-y'u)/d(bound) <= 0 per row
    return m[n:] - m[:n], np.asarray(res.x, dtype=float), None, int(res.nit), str(res.message)


def solve_robust_l1(K, y, lam, *, warm=None, solver=None, time_limit=None, pool=None):
    """Solve the robust l1 kernel regression LP (its dual form, see the module docstring).

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric kernel matrix.
    y : ndarray (n,)
    lam : float
        :math:`\\lambda > 0`.
    warm : LPSolution or LPBasis, optional
        The basis of a neighbouring solve (``"highspy"`` only; ignored by ``"scipy"``).
    solver : {"highspy", "scipy"}, optional
        Default: ``"highspy"`` when installed, else ``"scipy"``.
    time_limit : float, optional
        Seconds (default: :func:`approxpath.solvers.current_settings`'s limit).
    pool : HighsPool, optional
        Where the HiGHS instance comes from and goes back to (``"highspy"``; default: a new one,
        freed after the solve).

    Returns
    -------
    LPSolution

    Raises
    ------
    approxpath.errors.SolverError
        When the solver returns no point (e.g. out of time before any).
    """
    t0 = time.perf_counter()
    K, y, lam, warm = _check(K, y, lam, warm)
    if solver is None:
        solver = "highspy" if importlib.util.find_spec("highspy") else "scipy"
    if solver not in LP_SOLVERS:
        raise InputError(f"unknown LP solver {solver!r} (choose one of {', '.join(LP_SOLVERS)})")
    limit = _time_limit(time_limit)
    # The solvers' tolerances are absolute (1e-10): the LP is scaled by powers of two (exact), u
    # unchanged, beta scaled back.  y to its largest entry in [0.5, 1): at y * 1e-12 the reduced
    # costs were within the tolerance at a poor vertex (a relative gap of 0.12, where y itself
    # gives 1e-9).  The rows |K u| <= lam to lam in [0.5, 1) where lam is below _ROWS_BELOW: at
    # lam = 1e-6 a row 1e-10 past its bound left a gap of 7e-4 of the optimum.  By 2^20 at most
    # (K's entries up to 1e6): by 2^30 or 2^40 HiGHS's simplex ended "Unknown" at lam = 1e-13
    # (relative gap 0.84; 0.01 by 2^20, 0.999 unscaled; HiGHS refuses entries above 1e15).  Not the
    # rows at a large lam: HiGHS drops matrix entries below 1e-9, and K's would fall there.
    exponent = int(np.frexp(np.max(np.abs(y)))[1]) if y.size else 0
    y = np.ldexp(y, -exponent)
    rows = max(int(np.frexp(lam)[1]), -20) if lam < _ROWS_BELOW else 0
    if rows:
        K, lam = np.ldexp(K, -rows), float(np.ldexp(lam, -rows))
    if solver == "highspy":
        beta, u, basis, iterations, status = _highspy(K, y, lam, warm, limit, pool)
    else:
        beta, u, basis, iterations, status = _scipy(K, y, lam, limit)
    beta = np.ldexp(beta, exponent - rows)
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(u))):
        raise SolverError(f"{solver}: non-finite point ({status})")
    return LPSolution(beta=beta, u=np.clip(u, -1.0, 1.0), basis=basis, iterations=iterations, status=status,
                      solver=solver, seconds=time.perf_counter() - t0)


def basis_dual(K, lam, basis, u):
    """The dual point of an optimal basis carried to another kernel: the vertex where the
    basis's bound columns keep their bounds and its active rows stay active.

    With ``F`` the basic columns, ``U`` the columns at a bound (:math:`u_U = \\pm 1` as in
    ``u``) and ``R`` the rows at a bound (:math:`(Ku)_R = \\pm\\lambda`; :math:`|R| = |F|`),
    :math:`u_F` solves :math:`K_{RF}\\, u_F = \\lambda s_R - K_{RU} u_U`.  At the kernel of
    the solve this is ``u`` itself; at a nearby bandwidth it is the optimum as long as the
    basis stays optimal, and it moves smoothly (a continuation of the dual along the path,
    against the anchor's fixed ``u``, which loses its active rows at once).  The point need
    not be feasible: the caller restores it (clip, projection, scaling) and bounds its gap.

    Parameters
    ----------
    K : ndarray (n, n)
        The kernel at the new bandwidth (symmetric).
    lam : float
    basis : LPBasis
        From :func:`solve_robust_l1` (``"highspy"``).
    u : ndarray (n,)
        That solve's dual point (it gives the bound columns' values).

    Returns
    -------
    ndarray (n,), or None when the basis matrix :math:`K_{RF}` is singular at ``K``.
    """
    K = np.asarray(K, dtype=float)
    u = np.asarray(u, dtype=float)
    F = np.flatnonzero(basis.col_status == _BASIC)
    U = np.flatnonzero(basis.col_status != _BASIC)
    R = np.flatnonzero((basis.row_status == _AT_LOWER) | (basis.row_status == _AT_UPPER))
    if R.size != F.size:
        return None
    out = u.copy()
    out[U] = np.sign(u[U])
    if F.size == 0:
        return out
    rhs = lam * np.where(basis.row_status[R] == _AT_UPPER, 1.0, -1.0) - K[np.ix_(R, U)] @ out[U]
    try:
        out[F] = np.linalg.solve(K[np.ix_(R, F)], rhs)
    except np.linalg.LinAlgError:
        return None
    return out if np.all(np.isfinite(out)) else None


def basis_primal(K, y, basis):
    """The primal point of an optimal basis carried to another kernel: the coefficients on
    the active rows ``R`` that keep the fit exact on the basic columns ``F``
    (:math:`(y - K\\beta)_F = 0`, the optimality condition of an interior :math:`u_j`):
    :math:`K_{FR}\\,\\beta_R = y_F`, :math:`\\beta = 0` elsewhere.  The companion of
    :func:`basis_dual` (see there); None when :math:`K_{FR}` is singular.

    Parameters
    ----------
    K, y : ndarray (n, n), array_like (n,)
        The kernel at the new bandwidth, the targets.
    basis : LPBasis
        From :func:`solve_robust_l1` (``"highspy"``).

    Returns
    -------
    ndarray (n,), or None where :math:`K_{FR}` is singular or not square (:math:`|R| \\ne |F|`), or not finite.
    """
    K = np.asarray(K, dtype=float)
    F = np.flatnonzero(basis.col_status == _BASIC)
    R = np.flatnonzero((basis.row_status == _AT_LOWER) | (basis.row_status == _AT_UPPER))
    beta = np.zeros(K.shape[0])
    if R.size != F.size:
        return None
    if F.size:
        try:
            beta[R] = np.linalg.solve(K[np.ix_(F, R)], np.asarray(y, dtype=float)[F])
        except np.linalg.LinAlgError:
            return None
    return beta if np.all(np.isfinite(beta)) else None
