"""What a certified (C, gamma) choice by the 0-1 error lacks: cells or gaps (an oracle, not a method).

On a box of log2 C x log2 gamma, scikit-learn's ``SVC`` (tol 1e-6) gives the exact held-out signs
of 5-fold CV (the folds of ``surface_vs_grid.py``) on a fine grid.  With those signs known
everywhere -- no gaps at all -- a quadtree of cells, each enclosed by the errors common to all
its grid points, counts the cells a certificate of ``delta`` would need at least.  Then, at a
few points, the held-out decision values of the misclassified points: deciding all of them but
the ``delta`` share is what the certificate needs, so the ``k``-th smallest |f| bounds the gap
(``R rho <= |f|`` with ``rho <= sqrt(2)``: gap <= f^2 / 2), given also against the primal
objective (the mean over the folds).

    APPROXPATH_LIBSVM_DIR=/path/to/libsvm python benchmarks/surface_oracle.py heart_scale \\
        [--log2c 1 3] [--log2g -7 -5] [--levels 5]
"""

import argparse
import time

import numpy as np

from _common import load, machine

# the points where the gaps are read: (log2 C, log2 gamma), across grid.py's box
_POINTS = ((1, -7), (2, -6), (3, -5), (5, -7), (8, -9))


def _folds(y):
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y))


def _wrong(X, y, folds, C, gamma):
    """The held-out points misclassified by the 5 folds' exact SVMs, and their decision values."""
    from sklearn.svm import SVC

    f = np.zeros(len(y))
    objective = []
    for tr, va in folds:
        model = SVC(C=C, gamma=gamma, kernel="rbf", tol=1e-6).fit(X[tr], y[tr])
        f[va] = model.decision_function(X[va])
        a = np.zeros(len(tr))
        a[model.support_] = model.dual_coef_[0]
        K = np.exp(-gamma * ((X[tr][:, None] - X[tr][None]) ** 2).sum(-1))
        margin = y[tr] * (K @ a + model.intercept_[0])
        objective.append(0.5 * a @ K @ a + C * np.maximum(0.0, 1.0 - margin).sum())
    return np.where(f > 0, 1.0, -1.0) != y, f, float(np.mean(objective))


def _cells(wrong, delta):
    """Quadtree leaves whose errors common to all their grid points reach the best minus delta."""
    G, N = wrong.shape[0], wrong.shape[-1]
    target = wrong.sum(-1).min() / N - delta
    count, stack = 0, [(0, G - 1, 0, G - 1)]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        common = wrong[a0:a1 + 1, b0:b1 + 1].reshape(-1, N).all(0).sum() / N
        if common >= target or (a1 - a0 <= 1 and b1 - b0 <= 1):
            count += 1
            continue
        am, bm = (a0 + a1) // 2, (b0 + b1) // 2
        stack += [(a0, am, b0, bm), (am, a1, b0, bm), (a0, am, bm, b1), (am, a1, bm, b1)]
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data")
    parser.add_argument("--log2c", type=float, nargs=2, default=(1.0, 3.0))
    parser.add_argument("--log2g", type=float, nargs=2, default=(-7.0, -5.0))
    parser.add_argument("--levels", type=int, default=5, help="2**levels + 1 grid points a side")
    args = parser.parse_args()
    X, y = load(args.data)
    y = np.where(y > 0, 1.0, -1.0)
    folds, N = _folds(y), len(y)
    G = 2**args.levels + 1
    lc, lg = np.linspace(*args.log2c, G), np.linspace(*args.log2g, G)
    print(machine())
    t0 = time.perf_counter()
    wrong = np.array([[_wrong(X, y, folds, 2.0**c, 2.0**g)[0] for g in lg] for c in lc])  # (G, G, N)
    err = wrong.sum(-1) / N
    patterns = len({w.tobytes() for w in wrong.reshape(-1, N)})
    print(f"{args.data}: log2 C in {list(args.log2c)} x log2 gamma in {list(args.log2g)}, {G} x {G} points "
          f"({time.perf_counter() - t0:.0f} s): CV error {err.min():.4f} - {err.max():.4f}, {patterns} sign patterns")
    for delta in (0.01, 0.02, 0.05):
        print(f"  delta = {delta}: {_cells(wrong, delta)} cells with exact signs")
    allowed = int(np.floor(0.01 * N))  # the points a cell within delta = 0.01 may leave undecided
    print("| log2 C | log2 gamma | CV error | smallest |f| of misclassified points | gap to decide all "
          f"but {allowed} | objective | relative |")
    print("|---|---|---|---|---|---|---|")
    for c, g in _POINTS:
        bad, f, objective = _wrong(X, y, folds, 2.0**c, 2.0**g)
        margins = np.sort(np.abs(f[bad]))
        gap = margins[min(allowed, margins.size - 1)] ** 2 / 2
        print(f"| {c:g} | {g:g} | {bad.mean():.4f} | {', '.join(f'{m:.4f}' for m in margins[:3])} | {gap:.2e} "
              f"| {objective:.1f} | {gap / objective:.1e} |")


if __name__ == "__main__":
    main()
