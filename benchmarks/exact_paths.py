"""Exact Wang paths vs the certified approximate path on Wang's sinc set-up, side by side.

Wang, Yeung, Lochovsky (2007) section 5: 100 points x uniform on [-3, 3], y = sinc(x) + noise
(sd 0.08), 50 random training points; lambda in {1, 0.1, 0.01}; sigma from 10 to 0.1 (t from
0.1 to 10); theta = 0.95, eps = 1e-6; the kernel path starts from the lambda-path at sigma = 10.
Prints markdown tables: the exact kernel paths (events, solutions, linear solves, condition
numbers, certified gaps, wall time), the lambda-paths at sigma = 10, 1, 0.1, and the approximate
paths at the given eps (exact solves, pieces, wall time, agreement with the exact path at 50
random sigma).  Synthetic data only (no ../shared needed).

    python benchmarks/exact_paths.py [--eps 1e-2 1e-3] [--strategy interpolate]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.exact import certify, kernel_path, lambda_path

try:
    from _common import machine
except ImportError:  # run from elsewhere
    import platform

    def machine():
        return platform.platform()


def wang_sinc():
    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=0)
    train = np.random.default_rng(0).permutation(100)[:50]
    return X[train], y[train]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eps", type=float, nargs="+", default=[1e-2, 1e-3], help="eps of the approximate paths")
    parser.add_argument("--strategy", default=approxpath.STRATEGIES[0], help="driver strategy of the approximate paths")
    args = parser.parse_args(argv)
    X, y = wang_sinc()
    KLasso = approxpath.get_problem("klasso")
    print(f"machine: {machine()}\n")
    print("| lambda | events (joined/left) | solutions | linear solves | max cond | max certified gap (relative) "
          "| path s | certify s |")
    print("|---|---|---|---|---|---|---|---|")
    paths = {}
    for lam in (1.0, 0.1, 0.01):
        path = kernel_path(X, y, lam, (0.1, 10.0), theta=0.95, eps=1e-6)
        t0 = time.perf_counter()
        rep = certify(path, tol=1e-6, relative=True)
        cs = time.perf_counter() - t0
        joined = sum(e.kind == "joined" for e in path.events)
        print(f"| {lam:g} | {len(path.events)} ({joined}/{len(path.events) - joined}) | {path.t.size} | "
              f"{path.linear_solves} | {path.max_cond:.2g} | {rep.max_gap:.2g} ({rep.max_relative_gap:.2g}) | "
              f"{path.wall_s:.2f} | {cs:.2f} |")
        assert rep.ok and path.stop_reason == "end of range"
        paths[lam] = path
    print("\n| sigma (t) | lambda-path events | breakpoints | lambda range | max cond | max point gap | "
          "max segment bound | s |")
    print("|---|---|---|---|---|---|---|---|")
    for t in (0.1, 1.0, 10.0):
        lp = lambda_path(X, y, t, lam_min=1e-4)
        rep = certify(lp, tol=1e-8, relative=True)
        seg = max(c.gap for c in rep.segments)
        print(f"| {1 / t:g} ({t:g}) | {len(lp.events)} | {lp.breakpoints.size} | [{lp.t[0]:.3g}, {lp.t[-1]:.3g}] | "
              f"{lp.max_cond:.2g} | {rep.max_gap:.2g} | {seg:.2g} | {lp.wall_s:.3f} |")
    print(f"\napproximate paths, strategy {args.strategy!r}:\n")
    print("| lambda | eps | exact solves | pieces | approximate s | exact path s | max (approx - exact) "
          "at 50 sigma |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    sigmas = np.exp(rng.uniform(np.log(0.1), np.log(10.0), 50))
    for eps in args.eps:
        for lam, path in paths.items():
            problem = KLasso(X, y, lam=lam, parameter="bandwidth")
            try:
                ap = approxpath.approximate_path(problem, eps=eps, interval=(0.1, 10.0), strategy=args.strategy)
            except Exception as exc:  # report, do not hide: eps below what the exact solves certify, ...
                print(f"| {lam:g} | {eps:g} | failed: {exc} | | | {path.wall_s:.2f} | |")
                continue
            diff = []
            for s in sigmas:
                p = path(1.0 / s)
                diff.append(problem.primal_objective(ap.primal(1.0 / s), 1.0 / s)
                            - problem.primal_objective(problem.Primal(p.beta, p.beta0), 1.0 / s))
            print(f"| {lam:g} | {eps:g} | {ap.exact_solves} | {len(ap.pieces)} | {ap.wall_s:.1f} | {path.wall_s:.2f} | "
                  f"{max(diff):.2g} (min {min(diff):.1g}) |")


if __name__ == "__main__":
    main()
