"""Solves on the curve of one KKT system (see ``_kkt``): the tangent, the corrector of a
continuation step and Newton's method (10) at an event.

Variables are scaled to comparable size (α by :math:`\\max|\\alpha|`, β by
:math:`D = \\lVert\\beta\\rVert_1`, λ by λ) and the equations by the system's row scales.  The tangent
at a point is the null vector of the scaled Jacobian: the last column of Q in the Householder QR of
:math:`J^\\top`.  The corrector takes minimum-norm Newton steps :math:`-J^+F` with that factorization
(a chord method) until the update is below ``_STEP_TOL`` (relative) or stagnates at the rounding
floor of the system; at an event the square system (one equation more) is solved by Newton's
method.  :mod:`._homotopy` chooses the steps and locates the events.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

__all__ = ["Corrector", "PathStop"]

# Corrector: stop when the scaled update is below this (relative to the scales of alpha, beta,
# lambda); a few ulps of the condition of the system above the rounding floor.
_STEP_TOL = 1e-11
# Updates within this factor of _STEP_TOL are at the rounding floor: their ratios are noise.
_NOISE = 100.0
# Updates that stop shrinking below this size (relative) are the rounding floor of a badly
# conditioned system (lambda -> 0 near the end of a path); the certificates of the point then
# measure what that accuracy is worth.
_FLOOR = 1e-7
# Corrector iterations per step and per event correction before giving up.
_MAX_ITER = 12
# A corrector contracting slower than this per iteration means the predictor was too far.
_MAX_CONTRACTION = 0.5


def _apply_q(house, tau, c):
    """:math:`Qc` for the orthogonal factor of a Householder QR (LAPACK ``ormqr``), c (m, 1)."""
    out, _, info = scipy.linalg.lapack.dormqr("L", "N", house, tau, c, lwork=max(1, 64 * c.shape[0]))
    if info != 0:  # pragma: no cover - LAPACK argument errors only
        raise RuntimeError(f"dormqr failed (info = {info})")
    return out[:, 0]


class PathStop(Exception):
    """The path cannot continue; the message says why."""


class Corrector:
    """Tangents, corrector steps and event corrections on the curve of ``system``.

    Parameters
    ----------
    system : approxpath.exact.feature_path._kkt.System
        The KKT system: its points, residuals, Jacobians and row scales.

    Attributes
    ----------
    n_corrector : int
        The corrector iterations so far.
    """

    def __init__(self, system):
        self.sys = system
        self.n = system.n
        self.n_corrector = 0

    def _scales(self, p, var):
        """The scales of the variables at ``p``: :math:`\\max|\\alpha|` for α, D for the β of ``var``, λ."""
        sa = max(float(np.max(np.abs(p.alpha))), 1e-300)
        sb = max(float(np.sum(p.beta)), 1e-300)
        return np.concatenate([np.full(self.n, sa), np.full(len(var), sb), [abs(p.lam)]])

    def tangent(self, p, eq, var, prev=None, orient=None):
        """Unit null vector of the scaled Jacobian (scaled coordinates), its QR factors, the
        variable scales and the row scales."""
        rs = self.sys.row_scales(p, eq)
        s = self._scales(p, var)
        J = self.sys.jacobian(p, eq, var, rs) * s[None, :]
        (house, tau), R = scipy.linalg.qr(J.T, mode="raw")
        m = J.shape[0]
        e = np.zeros((m + 1, 1))
        e[-1] = 1.0
        v = _apply_q(house, tau, e)
        if orient is not None:
            if orient(v) < 0:
                v = -v
        elif prev is not None and v @ prev < 0:
            v = -v
        return dict(v=v, house=house, tau=tau, R1=R[:m, :m], s=s, rs=rs)

    def correct(self, z, base, eq, var, tg):
        """Chord corrector from ``z``: (point, first distance, worst contraction) or None."""
        prev = None
        first = None
        worst = 0.0
        for _ in range(_MAX_ITER):
            self.n_corrector += 1
            p = self.sys.unpack(z, base, var)
            if not (np.all(np.isfinite(p.q)) and np.all(np.isfinite(p.Ka)) and p.lam > 0):
                return None
            F = self.sys.residual(p, eq, tg["rs"])
            y = scipy.linalg.solve_triangular(tg["R1"], F, trans="T", lower=False, check_finite=False)
            dz = -_apply_q(tg["house"], tg["tau"], np.append(y, 0.0)[:, None])
            size = float(np.max(np.abs(dz)))
            if not math.isfinite(size):
                return None
            # stagnation at a small size: the rounding floor of an ill-conditioned system
            floor = prev is not None and size <= _FLOOR and size > 0.25 * prev
            if first is None:
                first = size
            elif prev > _NOISE * _STEP_TOL and not floor:  # below, the ratio measures rounding
                worst = max(worst, size / prev)
                if size / prev > _MAX_CONTRACTION and size > _STEP_TOL:
                    return None
            prev = size
            z = z + tg["s"] * dz
            if size <= _STEP_TOL or floor:
                p = self.sys.unpack(z, base, var)
                return (p, first, worst) if np.all(np.isfinite(p.q)) and p.lam > 0 else None
        return None

    def newton(self, p, eq, var):
        """Newton's method (10) on the square system ``eq`` = ``var`` + one equation."""
        base = p.beta.copy()
        prev = math.inf
        for _ in range(_MAX_ITER):
            rs = self.sys.row_scales(p, eq)
            s = self._scales(p, var)
            J = self.sys.jacobian(p, eq, var, rs) * s[None, :]
            F = self.sys.residual(p, eq, rs)
            try:
                dz = -np.linalg.solve(J, F)
            except np.linalg.LinAlgError:
                raise PathStop(f"singular Jacobian at an event (D = {p.beta.sum():.6g})") from None
            p = self.sys.unpack(self.sys.pack(p, var) + s * dz, base, var)
            if not (np.all(np.isfinite(p.q)) and p.lam > 0):
                raise PathStop(f"Newton correction at an event failed (D = {base.sum():.6g})")
            size = float(np.max(np.abs(dz)))
            if size <= _STEP_TOL or (size <= _FLOOR and size > 0.25 * prev):  # converged, or the floor
                return p
            prev = size
        raise PathStop(f"Newton correction at an event did not converge (D = {p.beta.sum():.6g})")
