"""The paper's projection of a robust :math:`\\ell_1` dual point onto the dual set
(``dual_restoration="projection"``).

:func:`project_dual` moves :math:`u` to the nearest point of :math:`\\{\\lVert v\\rVert_\\infty \\le 1,
\\lVert K_\\tau v\\rVert_\\infty \\le \\lambda\\}` at the ends of a piece, a least-distance program solved
by nonnegative least squares (Lawson and Hanson, ch. 23; ``scipy.optimize.nnls``, imported where it is
used) with the constraints far from active left out until the projected point violates them.  The
result is made feasible on the whole piece afterwards by scaling (in :mod:`.problem`): this
module only brings the point close.
"""

from __future__ import annotations

import numpy as np

from approxpath.compute.parallelism import load_blas

__all__ = ["project_dual"]

# Projection: constraints whose value at u is below this fraction of their bound start out of
# the program (far from active; one the projected point violates is added and it is re-solved).
_NEAR_ACTIVE = 0.9
# ... at most this many re-solves (each adds every violated row; one or two are typical): the
# final scaling makes the point feasible in any case.
_PROJECTION_ROUNDS = 8
# Iteration limit of the NNLS active-set method, per constraint (scipy's default is 3).
_NNLS_ITERATIONS = 5


def project_dual(problem, u, lo, hi):
    """The paper's projection of ``u`` onto the dual set of ``problem`` (a :class:`~.problem.RobustL1`)
    at both ends of the piece ``[lo, hi]``: min ||v - u|| s.t. |v| <= 1 and |(K v)_i| <= lambda, a
    least-distance program solved exactly by nonnegative least squares (Lawson and Hanson, ch. 23;
    ``scipy.optimize.nnls``), ~10x faster than Clarabel on this QP.  Constraints far from active
    (value below 0.9 of its bound at ``u``; e.g. v_i >= -1 where u_i = 1) start out of the program
    and are added, with a re-solve, only if the projected point violates them, so the result is
    the full projection while the program stays small.  Feasibility on the piece is made
    rigorous afterwards by scaling."""
    from scipy.optimize import nnls

    load_blas()  # (scipy's OpenBLAS on one thread from this first use on)
    lam = problem.sweep.weight_floor(lo)
    n = problem.n
    eye = np.eye(n)
    families = [(eye, 1.0), (-eye, 1.0)]
    for t in sorted(set(problem.sweep.bandwidths(lo, hi))):
        K = problem.kernels.get(t)
        families += [(K, lam), (-K, lam)]
    rows = [F @ u >= _NEAR_ACTIVE * b for F, b in families]
    if not any(r.any() for r in rows):
        # every constraint holds with room: u is its own projection.  (Also keeps nnls
        # from an empty program, which aborts the process in SciPy <= 1.17: y = 0.)
        return u
    v = u
    for _ in range(_PROJECTION_ROUNDS):
        # constraints G v <= h; with x = v - u the program is min ||x|| s.t. -G x >= G u - h
        G = np.vstack([F[r] for (F, _), r in zip(families, rows)])
        h = np.concatenate([np.full(int(r.sum()), b) for (_, b), r in zip(families, rows)])
        E = np.vstack([-G.T, (G @ u - h)[None, :]])
        f = np.zeros(n + 1)
        f[n] = 1.0
        try:
            w, _ = nnls(E, f, maxiter=_NNLS_ITERATIONS * E.shape[1])
        except RuntimeError:  # iteration limit: keep the last point, the scaling still applies
            break
        res = E @ w - f
        if not res[n] < 0:  # the program is infeasible (cannot happen: v = 0 is feasible)
            break
        v = u - res[:n] / res[n]
        grown = [r | (F @ v > b) for (F, b), r in zip(families, rows)]
        if all(np.array_equal(g, r) for g, r in zip(grown, rows)):
            break
        rows = grown
    return v
