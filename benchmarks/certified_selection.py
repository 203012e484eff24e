"""Certified model selection (approxpath.selection.select): delta reached, exact solves, time.

    python benchmarks/certified_selection.py [--quick] [--figures docs]

* ionosphere (the paper's settings: C = 0.1, t in [2^-10, 2^10], global min-max scaling),
  5-fold stratified cross-validation error of the SVM, for several tol; as an independent
  reference, scikit-learn's SVC (libSVM, tol 1e-8, gamma = t, the same folds) gives the
  cross-validation error at the chosen t (its bias is the middle of the optimal ones when they
  are not unique, as ours) and on a grid of 400 t, whose best must not beat ours by more than delta;
* sinc regression (n = 200, noise 0.2): kernel ridge (lam = 0.1) 5-fold MSE, and the log
  marginal likelihood's certified maximizer against a grid of 4000 t (dense numpy);
* sinc regression (n = 40): kLASSO (lam = 0.1) 5-fold MSE against a grid of 400 t (the exact
  feature-sign solver).

Each row: tol, delta reached, chosen t, the enclosure of its criterion, exact solves (all
folds, refinements included), paths recomputed, wall seconds; beside them the fine grid search
the reference makes (its best, its solves, its seconds; no delta).  Figures (``--figures DIR``):
``selection_ionosphere.png`` and ``selection_sinc_lml.png``.
"""

import argparse
import time
from pathlib import Path

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.selection import plot_selection, select

from _common import C, INTERVAL, load, machine


def _row(name, s, extra=""):
    print(f"| {name} | {s.tol:g} | {s.delta:.4g} | {s.t:.4g} | [{s.value[0]:.4g}, {s.value[1]:.4g}] | "
          f"{s.exact_solves} | {s.refinements} | {s.wall_s:.1f} | {extra} |", flush=True)


def _grid_row(name, grid, values, seconds, solves, best=np.argmin):
    """The fine grid search beside the certified rows: its best point and value, the exact
    solves it made, its wall seconds; no delta (nothing is known between grid points)."""
    i = int(best(values))
    print(f"| {name}, grid search of {grid.size} t | - | none | {grid[i]:.4g} | {values[i]:.4g} | {solves} | - | "
          f"{seconds:.1f} | the reference's own solves |", flush=True)


def _timed(fn, grid):
    start = time.perf_counter()
    values = np.array([fn(t) for t in grid])
    return values, time.perf_counter() - start


def _libsvm_cv(X, y, folds, t, C):
    from sklearn.svm import SVC

    wrong = 0
    for tr, va in folds:
        clf = SVC(C=C, gamma=t, tol=1e-8).fit(X[tr], y[tr])
        wrong += int(np.sum(np.where(clf.decision_function(X[va]) > 0, 1.0, -1.0) != y[va]))
    return wrong / len(y)


def ionosphere(tols, figures):
    from sklearn.model_selection import StratifiedKFold

    X, y = load("ionosphere_scale")
    problem = approxpath.get_problem("kernel_svm")(X, y, c=C)
    folds = list(StratifiedKFold(5).split(X, problem.y))  # what check_cv(5) gives for labels
    grid = np.geomspace(*INTERVAL, 400)
    ref, seconds = _timed(lambda t: _libsvm_cv(X, problem.y, folds, t, C), grid)
    _grid_row("ionosphere SVM, 5-fold error (libSVM)", grid, ref, seconds, 5 * grid.size)
    for tol in tols:
        s = select(problem, cv=5, interval=INTERVAL, tol=tol, max_solves=4000, strict=False)
        at = _libsvm_cv(X, problem.y, folds, s.t, C)
        ok = s.value[0] <= at <= s.value[1] and ref.min() >= s.value[1] - s.delta - 1e-12
        _row("ionosphere SVM, 5-fold error", s, f"libSVM at t: {at:.4f}, grid best {ref.min():.4f}: "
             f"{'consistent' if ok else 'INCONSISTENT'}")
        if figures and tol == tols[-1]:
            plot_selection(s, parameter="bandwidth t").savefig(Path(figures) / "selection_ionosphere.png", dpi=150)


def _ridge_cv(X, y, folds, t, lam):
    total = 0.0
    for tr, va in folds:
        K = np.exp(-t * (X[tr] - X[tr].T) ** 2)
        c = np.linalg.solve(K + lam * np.eye(len(tr)), y[tr])
        total += float(np.sum((np.exp(-t * (X[va] - X[tr].T) ** 2) @ c - y[va]) ** 2))
    return total / len(y)


def _lml(X, y, t, lam):
    A = np.exp(-t * (X - X.T) ** 2) + lam * np.eye(len(y))
    return -0.5 * y @ np.linalg.solve(A, y) - 0.5 * np.linalg.slogdet(A)[1] - 0.5 * len(y) * np.log(2 * np.pi)


def sinc(tols, lml_tols, figures, n):
    from sklearn.model_selection import KFold

    X, y = make_sinc(n=n, noise=0.2, seed=1)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    folds = list(KFold(5).split(X))
    grid = np.geomspace(0.05, 50.0, 400)
    ref, seconds = _timed(lambda t: _ridge_cv(X, y, folds, t, 0.1), grid)
    _grid_row(f"sinc n={n} kernel ridge, 5-fold MSE (dense numpy)", grid, ref, seconds, 5 * grid.size)
    for tol in tols:
        s = select(problem, "mse", cv=5, interval=(0.05, 50.0), tol=tol, max_solves=4000, strict=False)
        at = _ridge_cv(X, y, folds, s.t, 0.1)
        ok = s.value[0] <= at <= s.value[1] and ref.min() >= s.value[1] - s.delta - 1e-12
        _row(f"sinc n={n} kernel ridge, 5-fold MSE", s, f"dense at t: {at:.5f}, grid best {ref.min():.5f}: "
             f"{'consistent' if ok else 'INCONSISTENT'}")
    grid = np.geomspace(0.05, 50.0, 4000)
    ref, seconds = _timed(lambda t: _lml(X, y, t, 0.1), grid)
    _grid_row(f"sinc n={n} kernel ridge, log marginal likelihood (dense numpy)", grid, ref, seconds, grid.size,
              best=np.argmax)
    for tol in lml_tols:
        s = select(problem, "lml", interval=(0.05, 50.0), tol=tol, max_solves=4000, strict=False)
        at = _lml(X, y, s.t, 0.1)
        ok = s.value[0] <= at <= s.value[1] and ref.max() <= s.value[0] + s.delta + 1e-9
        _row(f"sinc n={n} kernel ridge, log marginal likelihood", s,
             f"dense at t: {at:.5f}, grid best {ref.max():.5f} at {grid[ref.argmax()]:.4g}: "
             f"{'consistent' if ok else 'INCONSISTENT'}")
        if figures and tol == lml_tols[-1]:
            plot_selection(s, parameter="bandwidth t").savefig(Path(figures) / "selection_sinc_lml.png", dpi=150)


def _klasso_cv(X, y, folds, t, lam):
    """Pooled k-fold MSE of the exact kLASSO optima (the feature-sign solver, cold)."""
    from approxpath.solvers.lasso import solve_klasso

    total = 0.0
    for tr, va in folds:
        sol = solve_klasso(np.exp(-t * (X[tr] - X[tr].T) ** 2), y[tr], lam)
        total += float(np.sum((np.exp(-t * (X[va] - X[tr].T) ** 2) @ sol.beta + sol.beta0 - y[va]) ** 2))
    return total / len(y)


def klasso(tols, n):
    from sklearn.model_selection import KFold

    X, y = make_sinc(n=n, noise=0.2, seed=1)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    folds = list(KFold(5).split(X))
    grid = np.geomspace(0.2, 20.0, 400)
    ref, seconds = _timed(lambda t: _klasso_cv(X, y, folds, t, 0.1), grid)
    _grid_row(f"sinc n={n} kLASSO, 5-fold MSE (exact solver)", grid, ref, seconds, 5 * grid.size)
    for tol in tols:
        s = select(problem, "mse", cv=5, interval=(0.2, 20.0), tol=tol, max_solves=4000, strict=False)
        at = _klasso_cv(X, y, folds, s.t, 0.1)
        ok = s.value[0] - 1e-9 <= at <= s.value[1] + 1e-9 and ref.min() >= s.value[1] - s.delta - 1e-9
        _row(f"sinc n={n} kLASSO, 5-fold MSE", s, f"exact solver at t: {at:.5f}, grid best {ref.min():.5f}: "
             f"{'consistent' if ok else 'INCONSISTENT'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one tol per case")
    ap.add_argument("--figures", default=None, metavar="DIR", help="write the figures here")
    args = ap.parse_args(argv)
    print(f"certified selection, {time.strftime('%Y-%m-%d')}, {machine()}\n")
    print("| case | tol | delta | t | criterion at t | exact solves | paths recomputed | wall s | reference |")
    print("|---|---|---|---|---|---|---|---|---|")
    ionosphere((0.02,) if args.quick else (0.02, 0.01, 0.005), args.figures)
    sinc((0.004,) if args.quick else (0.004, 0.002), (0.1,) if args.quick else (0.1, 0.02), args.figures, n=200)
    klasso((0.05,) if args.quick else (0.05, 0.02), n=40)


if __name__ == "__main__":
    main()
