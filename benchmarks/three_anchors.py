"""Does a third exact solve make the SVM's interpolated pairs better between two solves?

Between exact duals at t_a and t_b = r t_a the path's pairs are convex combinations of the two
(a moving pair: weights that follow t).  A third dual, at t_c = r t_b or t_a / r, could enter the
combination too (nonnegative weights summing to at most 1 keep it feasible).  This measures the
best *point* gap (optimal bias, no bound's slack) at interior points of [t_a, t_b] of the best
combination of two duals and of three, over a grid of weights: if the third dual helped, wider
pieces (fewer solves and kernel passes) would follow.

    python benchmarks/three_anchors.py [--n 1000]

Needs scikit-learn (the exact solves: libSVM, tol 1e-9).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.svm import SVC

from approxpath.data import make_classification, preprocess

C = 0.1  # the SVM set-up of the scaling benchmarks (C = 0.1, d = 20, global min-max)


def _dual(D, y, t):
    K = np.exp(-t * D)
    fit = SVC(C=C, kernel="precomputed", tol=1e-9).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[fit.support_] = np.abs(fit.dual_coef_[0])
    return alpha


def _gaps(D, y, alphas, W, t):
    """The SVM's duality gap at t of the combinations ``alphas @ W`` (one per column of W), each
    with its best bias: alpha'Q alpha + C sum hinge - 1'alpha."""
    A = alphas @ W
    M = np.exp(-t * D) @ (y[:, None] * A)
    quad = np.einsum("im,im->m", y[:, None] * A, M)
    out = np.empty(A.shape[1])
    for j in range(A.shape[1]):
        # the hinge sum is piecewise linear in the bias with kinks at y_i - M_ij: its minimum is at one
        kinks = np.sort(y - M[:, j])
        hinge = np.maximum(0.0, 1.0 - y[:, None] * (M[:, j][:, None] + kinks[None, :])).sum(axis=0)
        out[j] = quad[j] + C * hinge.min() - A[:, j].sum()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    X, y = make_classification(n=args.n, d=20, seed=0)
    D = cdist(preprocess(X, "global-minmax"), preprocess(X, "global-minmax"), "sqeuclidean")
    grid = np.linspace(0.0, 1.0, 21)
    two = np.array([1.0 - grid, grid])
    three = np.array([[1.0 - p - q, p, q] for p in grid for q in grid[:11] if p + q <= 1.0]).T
    print("| t_a | r | position in [t_a, t_b] (log) | best gap, two duals | best gap, three duals | "
          "third dual's weight at the best |")
    print("|---|---|---|---|---|---|")
    for t_a, r in [(0.5, 1.5), (0.5, 2.0), (2.0, 1.5), (2.0, 2.0)]:
        a, b = _dual(D, y, t_a), _dual(D, y, t_a * r)
        others = [_dual(D, y, t_a * r * r), _dual(D, y, t_a / r)]
        for s in (0.25, 0.5, 0.75):
            t = t_a * r**s
            g2 = _gaps(D, y, np.column_stack([a, b]), two, t).min()
            g3, w3 = min((g.min(), three[2, int(np.argmin(g))]) for c in others
                         for g in [_gaps(D, y, np.column_stack([a, b, c]), three, t)])
            print(f"| {t_a} | {r} | {s} | {g2:.4g} | {g3:.4g} | {w3:g} |", flush=True)


if __name__ == "__main__":
    main()
