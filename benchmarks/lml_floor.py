"""What a certified maximizer of kernel ridge's log marginal likelihood must cost, at best.

The marginal likelihood LML(t) of kernel ridge (sinc, noise 0.2, lambda = 0.1, t over
[2^-3, 2^5], the setting of ``selection_vs_grid.py``) is computed exactly (one Cholesky factor
per point) on a fine grid of log t, and its second derivative in log t is taken from that grid.
Two branch-and-bound schemes are then run on these values with an *oracle*: on every cell they
are given the true largest |LML''| (times a fudge factor that stands for a rigorous bound's
looseness), which no certified method has.  They count the exact evaluations a certificate of
``delta <= tol`` needs:

* *two-point*: cells share their ends; a cell's enclosure is ``max(f(a), f(b)) + M w^2 / 8``
  (values only: one Cholesky factor per node, the cost of one grid point);
* *middle*: a value and a slope at each cell's middle, ``f(m) + |f'(m)| s + M s^2 / 2`` (the
  slope needs the inverse: a second factorization's cost).

It also times, at the same n and on one BLAS thread, one grid point (kernel, Cholesky factor,
solve), the inverse from the factor, and one n x n matrix product: what a rigorous bound of
LML'' over a cell needs at least (the trace terms tr(K~^-1 B K~^-1 B) cancel to ~1/4 of their
size, so bounds that drop the inverse are 10^4 - 10^7 times too wide at n = 1000).

    OPENBLAS_NUM_THREADS=1 python benchmarks/lml_floor.py [--n 1000] [--points 2001]
"""

import argparse
import time

import numpy as np
import scipy.linalg

from _common import machine

from approxpath.data import make_sinc

LAM = 0.1
INTERVAL = (2.0**-3, 2.0**5)


def _lml(D, y, t):
    n = len(y)
    L = scipy.linalg.cho_factor(np.exp(-t * D) + LAM * np.eye(n), lower=True)
    return float(-0.5 * y @ scipy.linalg.cho_solve(L, y) - np.sum(np.log(np.diag(L[0]))) - 0.5 * n * np.log(2 * np.pi))


def _two_point(v, curv, h, tol):
    """Nodes a two-point branch and bound evaluates (cells share their ends)."""
    seen, cells = {0, len(v) - 1}, [(0, len(v) - 1)]
    while True:
        best = max(v[i] for i in seen)
        wide = [(i, j) for i, j in cells if j - i > 1 and max(v[i], v[j]) + curv[i:j + 1].max() * ((j - i) * h) ** 2 / 8 > best + tol]
        if not wide:
            return len(seen)
        for i, j in wide:
            m = (i + j) // 2
            cells.remove((i, j))
            cells += [(i, m), (m, j)]
            seen.add(m)


def _middle(v, slope, curv, h, tol):
    """Nodes a branch and bound with a value and a slope at each cell's middle evaluates."""
    cells, nodes, best = [(0, len(v) - 1)], 0, -np.inf
    while cells:
        tops = []
        for i, j in cells:
            m, s = (i + j) // 2, (j - i) * h / 2
            nodes += 1
            best = max(best, v[m])
            tops.append(((i, j), v[m] + abs(slope[m]) * s + 0.5 * curv[i:j + 1].max() * s * s))
        cells = [c for (i, j), top in tops if top > best + tol and j - i > 1
                 for c in ((i, (i + j) // 2), ((i + j) // 2, j))]
    return nodes


def _seconds(fn, repeat=5):
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--points", type=int, default=2001, help="the fine grid of log t (odd)")
    args = p.parse_args()
    X, y = make_sinc(n=args.n, noise=0.2, seed=1)
    D = (X - X.T) ** 2
    u = np.linspace(*np.log(INTERVAL), args.points)
    v = np.array([_lml(D, y, t) for t in np.exp(u)])
    h = u[1] - u[0]
    slope = np.gradient(v, h)
    curv = np.abs(np.gradient(slope, h))
    grid30 = max(_lml(D, y, t) for t in np.geomspace(*INTERVAL, 30))
    print(f"# {machine()}; n = {args.n}, {args.points} points in log t")
    print(f"max LML {v.max():.5f} at t = {np.exp(u[v.argmax()]):.4g}; the 30-point grid's best {grid30:.5f}; "
          f"|LML''| in log t at the max {curv[v.argmax()]:.1f}, largest {curv.max():.1f}")
    print("\n| tol | fudge on |LML''| | two-point nodes (values) | middle nodes (value + slope) |")
    print("|---|---|---|---|")
    for fudge in (1.0, 3.0, 10.0):
        for tol in (0.01, 0.1, 1.0):
            print(f"| {tol} | {fudge:g} | {_two_point(v, fudge * curv, h, tol)} | {_middle(v, slope, fudge * curv, h, tol)} |")
    t = float(np.exp(u[v.argmax()]))
    A = np.exp(-t * D) + LAM * np.eye(args.n)
    L = scipy.linalg.cho_factor(A, lower=True)[0]
    point = _seconds(lambda: _lml(D, y, t))
    inverse = _seconds(lambda: scipy.linalg.lapack.dpotri(L, lower=1))
    product = _seconds(lambda: A @ A)
    print(f"\nCPU s (best of 5): one grid point {point:.4f}; the inverse from its factor {inverse:.4f} "
          f"({inverse / point:.2f} points); one n x n product {product:.4f} ({product / point:.2f} points)")


if __name__ == "__main__":
    main()
