"""Independent numpy references for kernel ridge's closed-form criteria (shared by the tests)."""

import numpy as np

__all__ = ["dense_criteria", "gram"]


def gram(X, t):
    """The Gaussian kernel exp(-t ||x_i - x_j||^2) (numpy, dense)."""
    return np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def dense_criteria(X, y, t, lam):
    """LOOCV by n refits, GCV by an eigendecomposition, LML by slogdet and a solve (numpy)."""
    n = len(y)
    K = gram(X, t)
    loo = []
    for i in range(n):
        keep = np.arange(n) != i
        c = np.linalg.solve(K[np.ix_(keep, keep)] + lam * np.eye(n - 1), y[keep])
        loo.append(y[i] - K[i, keep] @ c)
    w, V = np.linalg.eigh(K)
    fit = V @ ((w / (w + lam)) * (V.T @ y))  # the hat matrix applied to y
    gcv = n * np.sum((y - fit) ** 2) / np.sum(lam / (w + lam)) ** 2
    A = K + lam * np.eye(n)
    lml = -0.5 * y @ np.linalg.solve(A, y) - 0.5 * np.linalg.slogdet(A)[1] - 0.5 * n * np.log(2 * np.pi)
    return dict(loocv=float(np.mean(np.square(loo))), gcv=float(gcv), lml=float(lml))
