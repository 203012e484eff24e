"""Feature-weighted (ARD) kernels and their derivatives in the feature weights β.

Two kernels of Li & Sminchisescu (2010), both with :math:`\\beta \\ge 0`:

* ARD-Gaussian :math:`k_\\beta(x, z) = \\exp(-\\sum_k \\beta_k (x_k - z_k)^2)`, so
  :math:`K(\\beta) = \\exp(-\\sum_k \\beta_k D_k)` with :math:`(D_k)_{ij} = (x_{ik} - x_{jk})^2`,
  :math:`\\partial_k K = -D_k \\odot K` and :math:`\\partial_k\\partial_l K = D_k \\odot D_l \\odot K`;
* normalized ARD-polynomial :math:`k_\\beta(x, z) = (1 + s)^m`,
  :math:`s = \\sum_k \\beta_k x_k z_k / (1 + \\sum_k \\beta_k)`, so with :math:`B = \\sum_k\\beta_k`,
  :math:`M_k = x_k x_k^\\top` and :math:`S = \\sum_k \\beta_k M_k/(1 + B)`:
  :math:`\\partial_k S = (M_k - S)/(1 + B)`, :math:`\\partial_k\\partial_l S = -(\\partial_k S +
  \\partial_l S)/(1 + B)`, :math:`\\partial_k K = m(1+S)^{m-1}\\odot\\partial_k S` and
  :math:`\\partial_k\\partial_l K = m(m-1)(1+S)^{m-2}\\odot\\partial_k S\\odot\\partial_l S +
  m(1+S)^{m-1}\\odot\\partial_k\\partial_l S` (powers entrywise).

:meth:`at` returns the kernel at one β with the quantities the homotopy and the certificates
need: the Gram matrix, the derivative matrices of the features in use and the quadratic forms
:math:`q_j = \\alpha^\\top \\partial_j K \\alpha` of *all* features (one BLAS-3 product).
"""

from __future__ import annotations

import numpy as np

from approxpath.errors import InputError
from approxpath.numerics import UNIT_ROUNDOFF, fp_margin, kernel_entry_error

__all__ = ["KERNELS", "make_kernel", "kernel_degree"]

#: Kernel names accepted by :func:`make_kernel`.
KERNELS = ("ard-gaussian", "ard-polynomial")


def kernel_degree(kernel, degree):
    """The power m of ``kernel``: ``degree`` for the ARD-polynomial kernel (2, the paper's
    quadratic kernel, when None; not checked here: :func:`make_kernel` checks it); a degree given
    with the ARD-Gaussian kernel, which has none, is refused with :class:`InputError` (it would be
    silently unused)."""
    if degree is not None and kernel != "ard-polynomial":
        raise InputError(f"degree is the power of the ard-polynomial kernel; the {kernel} kernel has none")
    return 2 if degree is None else degree


def make_kernel(name, X, degree=2):
    """The kernel ``name`` (one of :data:`KERNELS`: ``"ard-gaussian"``, ``"ard-polynomial"``) on training
    inputs ``X`` (n, d), of power m = ``degree`` if ARD-polynomial: its ``at(beta)`` evaluates it at one
    β (module docstring).

    Raises
    ------
    InputError
        An unknown ``name``, or for the ARD-polynomial kernel a ``degree`` that is not a positive integer.
    """
    if name == "ard-gaussian":
        return _ArdGaussian(X)
    if name == "ard-polynomial":
        if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
            raise InputError(f"degree must be a positive integer (the power m of the ARD-polynomial kernel); "
                             f"got {degree!r}")
        return _ArdPolynomial(X, int(degree))
    raise InputError(f"unknown kernel {name!r}: use 'ard-gaussian' or 'ard-polynomial'")


class _ArdGaussian:
    """:math:`K(\\beta) = \\exp(-\\sum_k \\beta_k D_k)` on ``X`` (n, d)."""

    name = "ard-gaussian"

    def __init__(self, X):
        self.X = np.asarray(X, dtype=float)
        # the squared differences do not change when a column is shifted; centred columns keep
        # the sums of the all-feature forms (below) small
        self._Xc = self.X - self.X.mean(axis=0)
        self._D = {}
        self._stacked = (None, None)
        # dL/dbeta_k scales as the squares of the features (beta_k D_k is what the kernel sees): the
        # end test lambda*eta <= g_tol ||Hy||^2 is taken in units of the largest centred column's
        # squared norm (1 in the paper's scaling), so that it does not depend on the features' units
        norms = np.sum(self._Xc**2, axis=0)
        self.gradient_unit = float(norms.max()) if norms.size and norms.max() > 0 else 1.0

    @property
    def d(self):
        return self.X.shape[1]

    def dist(self, k):
        """:math:`D_k` (n, n), cached."""
        if k not in self._D:
            x = self.X[:, k]
            self._D[k] = (x[:, None] - x[None, :]) ** 2
        return self._D[k]

    def stack(self, feats):
        """:math:`(D_k)_{k \\in feats}` as one (len(feats), n*n) array; the last one is kept
        (the active set changes only at events)."""
        key = tuple(int(k) for k in feats)
        if self._stacked[0] != key:
            n = self.X.shape[0]
            out = np.empty((len(key), n * n))
            for i, k in enumerate(key):
                out[i] = self.dist(k).ravel()
            self._stacked = (key, out)
        return self._stacked[1]

    def at(self, beta):
        return _GaussianAt(self, np.asarray(beta, dtype=float))

    def cross(self, beta, Z):
        """:math:`k_\\beta(z_a, x_i)` (m, n) for new inputs ``Z`` (m, d)."""
        E = np.zeros((Z.shape[0], self.X.shape[0]))
        for k in np.flatnonzero(beta):
            E += beta[k] * (Z[:, k][:, None] - self.X[:, k][None, :]) ** 2
        return np.exp(-E)


class _KernelAt:
    """What the kernels at one β share: the first derivatives' products from :meth:`first`."""

    def first_vectors(self, alpha, feats):
        """:math:`\\partial_k K\\alpha` for the features ``feats``, shape (len(feats), n)."""
        return np.stack([self.first(k) @ alpha for k in feats]) if len(feats) else np.zeros((0, alpha.size))


class _GaussianAt(_KernelAt):
    """The ARD-Gaussian kernel at one β."""

    def __init__(self, kern, beta):
        self.kern, self.beta = kern, beta
        self.support = np.flatnonzero(beta)
        n = kern.X.shape[0]
        E = beta[self.support] @ kern.stack(self.support) if self.support.size else np.zeros(n * n)
        self.K = np.exp(-E).reshape(n, n)
        self._first = {}

    def first(self, k):
        """:math:`\\partial_k K = -D_k \\odot K`."""
        if k not in self._first:
            self._first[k] = -self.kern.dist(k) * self.K
        return self._first[k]

    def second(self, k, l):
        """:math:`\\partial_k \\partial_l K = -D_l \\odot \\partial_k K`."""
        return -self.kern.dist(l) * self.first(k)

    def second_forms(self, alpha, rows, cols):
        """:math:`\\alpha^\\top \\partial_k\\partial_l K\\alpha` for k in ``rows``, l in
        ``cols``: :math:`\\sum_{im} A_{im} (D_k)_{im} (D_l)_{im}` with
        :math:`A = \\alpha\\alpha^\\top \\odot K`, one matrix product of the stacked
        :math:`D_k`."""
        A = (np.outer(alpha, alpha) * self.K).ravel()
        if set(cols) <= set(rows):
            R = self.kern.stack(rows)
            index = {k: i for i, k in enumerate(rows)}
            return (R * A) @ R[[index[l] for l in cols]].T
        R = np.stack([self.kern.dist(k).ravel() for k in rows])
        Cm = np.stack([self.kern.dist(l).ravel() for l in cols])
        return (R * A) @ Cm.T

    def forms(self, alpha):
        """:math:`q_j = \\alpha^\\top \\partial_j K \\alpha` for every feature j, shape (d,).

        :math:`\\alpha^\\top (D_j \\odot K)\\alpha = 2[(\\alpha\\odot x_j^2)^\\top K\\alpha -
        (\\alpha\\odot x_j)^\\top K(\\alpha\\odot x_j)]` (expand :math:`(x_{ij} - x_{lj})^2`)."""
        Xc = self.kern._Xc
        Ka = self.K @ alpha
        W = alpha[:, None] * Xc
        KW = self.K @ W
        return -2.0 * ((Xc * Xc).T @ (alpha * Ka) - np.einsum("ij,ij->j", W, KW))

    def form_magnitude(self, alpha):
        """A bound on :math:`|\\alpha|^\\top (|D_j| \\odot K)|\\alpha|` for all j, the
        magnitude of the sums behind :meth:`forms` (for rounding allowances), shape (d,)."""
        a = np.abs(alpha)
        Xc = self.kern._Xc
        W = a[:, None] * np.abs(Xc)
        return 2.0 * ((Xc * Xc).T @ (a * (self.K @ a)) + np.einsum("ij,ij->j", W, self.K @ W))

    def form_error(self, alpha):
        """Bound on the rounding error of every computed :meth:`forms` entry, shape (d,): the
        kernel entries' error (:meth:`entry_error`) times :math:`\\max_i x_{ij}^2
        \\lVert\\alpha\\rVert_1^2` for each of the two sums, plus the rounding of sums of
        length :math:`2n + 2` over :meth:`form_magnitude`."""
        n = alpha.size
        a1 = float(np.sum(np.abs(alpha)))
        x2 = np.max(self.kern._Xc**2, axis=0)
        return 4.0 * self.entry_error() * x2 * a1 * a1 + 2.0 * fp_margin(2 * n + 2, 1.0) * self.form_magnitude(alpha)

    def entry_error(self):
        """Bound on the absolute error of every computed entry of ``K``: the exponent sums
        ``len(support)`` products :math:`\\beta_k (x_{ik} - x_{jk})^2` of relative error 4u
        each (see :func:`approxpath.numerics.kernel_entry_error`, one term of slack)."""
        return kernel_entry_error(len(self.support) + 1)


class _ArdPolynomial:
    """:math:`K(\\beta) = (1 + S)^m`, :math:`S = X\\operatorname{diag}(\\beta)X^\\top/(1 + \\sum\\beta)`."""

    name = "ard-polynomial"

    def __init__(self, X, degree):
        self.X = np.asarray(X, dtype=float)
        self.degree = degree
        self.gradient_unit = 1.0  # (|x| <= 1: the features' units are fixed)
        if not np.all(np.abs(self.X) <= 1.0):
            # |s| <= max x^2 sum(beta)/(1 + sum(beta)) < 1 keeps 1 + s > 0: the kernel is then
            # smooth and positive for every beta >= 0
            raise InputError("the ARD-polynomial kernel needs every |x| <= 1 (so that 1 + s > 0): scale X first, "
                             "e.g. centre each column and divide it by its Euclidean norm")

    @property
    def d(self):
        return self.X.shape[1]

    def at(self, beta):
        return _PolynomialAt(self, np.asarray(beta, dtype=float))

    def cross(self, beta, Z):
        S = (Z * beta) @ self.X.T / (1.0 + beta.sum())
        return (1.0 + S) ** self.degree


class _PolynomialAt(_KernelAt):
    """The ARD-polynomial kernel at one β."""

    def __init__(self, kern, beta):
        self.kern, self.beta = kern, beta
        self.support = np.flatnonzero(beta)
        X, m = kern.X, kern.degree
        self.B1 = 1.0 + beta.sum()
        self.S = (X * beta) @ X.T / self.B1
        T = 1.0 + self.S
        self.G1 = m * T ** (m - 1)  # dK/dS
        self.G2 = m * (m - 1) * T ** (m - 2) if m > 1 else np.zeros_like(T)  # d2K/dS2
        self.K = T ** m
        self._dS = {}

    def _ds(self, k):
        if k not in self._dS:
            x = self.kern.X[:, k]
            self._dS[k] = (np.outer(x, x) - self.S) / self.B1
        return self._dS[k]

    def first(self, k):
        return self.G1 * self._ds(k)

    def second(self, k, l):
        dk, dl = self._ds(k), self._ds(l)
        return self.G2 * dk * dl - self.G1 * (dk + dl) / self.B1

    def second_forms(self, alpha, rows, cols):
        """:math:`\\alpha^\\top \\partial_k\\partial_l K\\alpha` (rows x cols): with
        :math:`A_r = \\alpha\\alpha^\\top\\odot G_r`, :math:`\\sum A_2 \\odot \\partial_k S\\odot
        \\partial_l S - (\\sum A_1\\odot\\partial_k S + \\sum A_1\\odot\\partial_l S)/(1+B)`."""
        aa = np.outer(alpha, alpha)
        A1, A2 = aa * self.G1, aa * self.G2
        R = np.stack([self._ds(k).ravel() for k in rows]) if len(rows) else np.zeros((0, aa.size))
        Cm = np.stack([(self._ds(l) * A2).ravel() for l in cols]) if len(cols) else np.zeros((0, aa.size))
        r1 = R @ A1.ravel()
        c1 = np.array([np.sum(self._ds(l) * A1) for l in cols])
        return R @ Cm.T - (r1[:, None] + c1[None, :]) / self.B1

    def forms(self, alpha):
        """:math:`q_j = \\tfrac{1}{1+B}[(\\alpha\\odot x_j)^\\top G_1(\\alpha\\odot x_j) -
        \\alpha^\\top(G_1\\odot S)\\alpha]`, :math:`G_1 = m(1+S)^{m-1}`, for every j."""
        W = alpha[:, None] * self.kern.X
        common = alpha @ ((self.G1 * self.S) @ alpha)
        return (np.einsum("ij,ij->j", W, self.G1 @ W) - common) / self.B1

    def form_magnitude(self, alpha):
        a = np.abs(alpha)
        W = a[:, None] * np.abs(self.kern.X)
        G1 = np.abs(self.G1)
        return (np.einsum("ij,ij->j", W, G1 @ W) + a @ ((G1 * np.abs(self.S)) @ a)) / self.B1

    def form_error(self, alpha):
        """Bound on the rounding error of every computed :meth:`forms` entry, shape (d,).

        :math:`G_1` inherits the relative error of :math:`1 + S` times :math:`m - 1` (plus 2u
        for the power), :math:`S` the bound of :meth:`entry_error`; both enter sums weighted by
        at most :math:`\\lVert\\alpha\\rVert_1^2 \\max(x_j^2, |S|)`; the sums themselves
        are rounded as any of length :math:`2n + 2`."""
        n, m = alpha.size, self.kern.degree
        a1 = float(np.sum(np.abs(alpha)))
        T = np.abs(1.0 + self.S)
        ds = self._s_error()
        g1 = float(np.max(np.abs(self.G1)))
        dg1 = g1 * ((m - 1) * ds / float(np.min(T)) + 2 * UNIT_ROUNDOFF)
        w = np.maximum(np.max(self.kern.X**2, axis=0), float(np.max(np.abs(self.S))))
        return ((2.0 * dg1 * w + g1 * ds) * a1 * a1 / self.B1
                + 2.0 * fp_margin(2 * n + 2, 1.0) * self.form_magnitude(alpha) / self.B1)

    def _s_error(self):
        p = len(self.support)
        return ((2 * p + 4) * UNIT_ROUNDOFF * float(np.max(self.kern.X**2))
                + UNIT_ROUNDOFF * float(np.max(np.abs(1.0 + self.S))))

    def entry_error(self):
        """Bound on the absolute error of every computed entry of ``K``.

        :math:`s` sums ``p`` products of three numbers (2u each) and is divided by a rounded
        :math:`1 + B` (relative error :math:`(p + 1)u`): :math:`|\\delta s| \\le (2p + 4)u\\,
        \\max|x|^2`; then :math:`1 + s` (u) and the power (2u relative, numpy's ``power``
        is accurate to well under an ulp)."""
        m = self.kern.degree
        T = np.abs(1.0 + self.S)
        ds = self._s_error()
        return float(np.max(m * T ** (m - 1)) * ds * 1.01 + 2 * UNIT_ROUNDOFF * np.max(np.abs(self.K)))
