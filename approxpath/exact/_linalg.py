"""The linear systems of the exact paths: the papers' KKT matrix by LU, and the λ-path's
reduced system kept as a Cholesky factor updated one active point at a time.

Eliminating the bias from the papers' system (its first row gives
:math:`\\beta_0 = \\bar y - \\mathbf 1^\\top K_{\\mathcal A}\\beta_{\\mathcal A}/n`) leaves the
symmetric positive definite system

.. math::

    H\\beta_{\\mathcal A} = \\tilde K_{\\mathcal A}^\\top y - \\lambda s, \\qquad
    H = \\tilde K_{\\mathcal A}^\\top \\tilde K_{\\mathcal A} + \\nu I, \\qquad
    \\tilde K = (I - \\mathbf 1\\mathbf 1^\\top/n) K

(:math:`\\tilde K` has centred columns; :math:`K^\\top K - K^\\top\\mathbf 1\\mathbf 1^\\top K/n
= \\tilde K^\\top\\tilde K` because the centring is a projection).  A point joining the active
set borders :math:`H` by one row and column, a point leaving deletes one: the Cholesky factor
:math:`H = R^\\top R` follows in :math:`O(nm + m^2)` instead of the :math:`O(nm^2 + m^3)` of
forming and factoring the system afresh (Wang, Qin and Huang §3 name the
Sherman–Morrison–Woodbury block up/down-dating; a factor is updated here instead of an inverse,
which is the numerically stable form of the same idea).

Without a ridge (:math:`\\nu = 0`) two copies of a point among the active ones make either system
exactly singular; they are found bit for bit in the kernel's columns (:func:`column_copies`), not
left to the rounding of a pivot.
"""

from __future__ import annotations

import hashlib
import math
import warnings

import numpy as np
import scipy.linalg

from ._common import ExactPathError

__all__ = []

_TRTRS = scipy.linalg.lapack.dtrtrs


def kkt_matrix(KA, nu):
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


def kkt_solve(M, b):
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


def column_copies(K):
    """``c`` of shape (n,): ``c[j]`` is the first column of ``K`` (symmetric: a kernel, or the
    distances of every kernel of a path) identical to column ``j`` bit for bit; None when every
    column is unique.  Two such copies among the active points make the KKT system exactly
    singular without a ridge: LU finds that as an exact zero pivot (identical rows), an updated
    Cholesky factor only as a tiny positive one (measured: the λ-path ran on through it to
    lam_min, with points certify rejected)."""
    n = K.shape[0]
    first, c = {}, np.arange(n)
    for j in range(n):  # row j is column j, keyed by a 16-byte digest (equality checked)
        i = first.setdefault(hashlib.blake2b(np.ascontiguousarray(K[j]), digest_size=16).digest(), j)
        if i != j and np.array_equal(K[i], K[j]):
            c[j] = i
    return c if np.any(c != np.arange(n)) else None


def refuse_copies(copy_of, act):
    """``ExactPathError`` naming two copies (:func:`column_copies`) among the active points ``act``."""
    labels, at = np.unique(copy_of[act], return_index=True)
    if labels.size < act.size:
        j = int(np.setdiff1d(act, act[at])[0])
        i = int(act[at][np.searchsorted(labels, copy_of[j])])
        raise ExactPathError(f"points {i} and {j} are copies (identical kernel columns): the KKT system of the "
                             "active points is singular; add a ridge term nu > 0 or remove the duplicate points")


class FactorBroken(Exception):
    """The updated factor cannot represent :math:`H` (not numerically positive definite)."""


class ActiveFactor:
    """:math:`H = \\tilde K_{\\mathcal A}^\\top\\tilde K_{\\mathcal A} + \\nu I = R^\\top R` for
    the active points in the order they joined, bordered and deleted one point at a time.

    Parameters
    ----------
    KcT : ndarray of shape (n, n), C order
        :math:`\\tilde K^\\top`, the kernel matrix with centred columns, transposed (row j is
        column j: contiguous).
    nu : float
        Ridge term.

    Attributes
    ----------
    order : list of int
        The active points, in the order of the factor's rows.
    H : ndarray of shape (m, m)
        The matrix itself (its entries are computed afresh for every joining point, so they
        carry no accumulated rounding): the source of a refactorization.
    R : ndarray of shape (m, m), Fortran order
        Upper triangular, :math:`H = R^\\top R` (diagonal entries of either sign after a deletion).
    updates : int
        Up/down-dates since the last factorization from ``H``.
    refactors : int
        Factorizations from ``H`` (the first one of an active set counts too).
    """

    def __init__(self, KcT, nu):
        self.KcT = KcT
        self.nu = float(nu)
        self.order = []
        self.H = np.empty((0, 0))
        self.R = np.empty((0, 0), order="F")
        self.updates = 0
        self.refactors = 0

    def append(self, j):
        """Border :math:`H` with point ``j``: :math:`R \\leftarrow [R, w; 0, \\rho]` with
        :math:`R^\\top w = h`, :math:`\\rho = \\sqrt{\\eta - w^\\top w}`; ``FactorBroken`` when
        :math:`\\eta - w^\\top w` is not positive (the refactorization or LU decides then)."""
        kj = self.KcT[j]
        h = self.KcT[self.order] @ kj if self.order else np.empty(0)
        eta = float(kj @ kj) + self.nu
        m = len(self.order)
        H = np.empty((m + 1, m + 1))
        H[:m, :m], H[:m, m], H[m, :m], H[m, m] = self.H, h, h, eta
        self.H = H
        self.order.append(int(j))
        R = np.zeros((m + 1, m + 1), order="F")
        R[:m, :m] = self.R
        self.R = R
        if m:
            w, info = _TRTRS(self.R[:m, :m], h, lower=0, trans=1)
            rho2 = eta - float(w @ w) if info == 0 else -math.inf
        else:
            w, rho2 = h, eta
        if not rho2 > 0:
            raise FactorBroken(f"bordering by point {j} leaves {rho2:.3g} on the diagonal")
        R[:m, m] = w
        R[m, m] = math.sqrt(rho2)
        self.updates += 1

    def delete(self, j):
        """Delete point ``j``: the factor without its column is upper Hessenberg below it and
        Givens rotations (LAPACK through :func:`scipy.linalg.qr_delete`) make it triangular
        again: :math:`O(m^2)`."""
        k = self.order.index(int(j))
        m = len(self.order)
        self.order.pop(k)
        self.H = np.delete(np.delete(self.H, k, axis=0), k, axis=1)
        # R_{-k} = Q1 R1 with Q1 orthogonal, so R_{-k}' R_{-k} = R1' R1; R1's last row is 0
        _, R1 = scipy.linalg.qr_delete(np.eye(m, order="F"), self.R, k, which="col", overwrite_qr=True,
                                       check_finite=False)
        self.R = np.asfortranarray(R1[: m - 1, : m - 1])
        self.updates += 1

    def refactor(self):
        """Cholesky of ``H`` from scratch; ``FactorBroken`` if it is not numerically positive definite."""
        self.refactors += 1
        self.updates = 0
        if not self.order:
            self.R = np.empty((0, 0), order="F")
            return
        try:
            self.R = np.asfortranarray(scipy.linalg.cholesky(self.H, lower=False, check_finite=False))
        except np.linalg.LinAlgError as exc:
            raise FactorBroken(str(exc)) from None

    def solve(self, b):
        """:math:`H^{-1}b` (``b`` in the order of ``order``) by two triangular solves (LAPACK's
        ``trtrs`` directly: scipy's wrapper costs more than the solve at these sizes)."""
        z, info = _TRTRS(self.R, b, lower=0, trans=1)
        x, info2 = _TRTRS(self.R, z, lower=0, trans=0)
        return x if info == info2 == 0 else np.full(len(b), np.nan)  # a zero on the diagonal

    def cond(self):
        """1-norm condition number of ``H`` estimated by LAPACK (``pocon``) from the factor."""
        if not self.order:
            return 1.0
        R = self.R * np.sign(np.diag(self.R))[:, None]  # pocon wants the Cholesky factor: diagonal > 0
        pocon = scipy.linalg.get_lapack_funcs("pocon", (R,))
        rcond, _ = pocon(R, float(np.abs(self.H).sum(axis=0).max()), uplo="U")
        return 1.0 / rcond if rcond > 0 else math.inf
