"""Path complexity of the kernel regression problems along the bandwidth (Giesen et al. 2014,
section 5: O(1/eps) exact solves for sparse robust l1 kernel regression).

The set-up of the paper's section 6.2 (and of ``examples/robust_regression_bandwidth.py``):
n points of sinc on [-4, 4] (100 in the paper), noise sd 0.1, 10 % outliers, lambda = 0.1,
t in [2^-3, 2^5].  For each eps the certified path is computed (by default with the default
strategy and with the paper's); printed: exact solves, pieces, whether every piece is
certified, wall and solve seconds, the share of the wall time spent certifying, and the
exponent b of a least-squares fit solves ~ (1/eps)^b (the paper's claim for its own
algorithm: b <= 1).  Each path runs after a warm-up path (imports are not timed).

    python benchmarks/robust_regression_solves.py [--problem robust_l1 klasso] [--n 100 200]
        [--strategy interpolate paper] [--restoration projection scaling moving]
        [--eps 1 0.5 ...] [--range LO HI]

Needs no data files (seeded generator).
"""

from __future__ import annotations

import argparse

import numpy as np

import approxpath
from approxpath.data import make_sinc

EPS = (1.0, 0.5, 0.25, 0.125, 0.0625)
INTERVAL = (2.0**-3, 2.0**5)
LAM = 0.1


def fitted_exponent(eps, solves):
    """b of the least-squares fit log(solves) = a + b log(1/eps)."""
    return float(np.polyfit(np.log(1.0 / np.asarray(eps)), np.log(np.asarray(solves, dtype=float)), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", nargs="+", default=["robust_l1"], choices=("robust_l1", "klasso"))
    parser.add_argument("--n", type=int, nargs="+", default=[100])
    parser.add_argument("--eps", type=float, nargs="+", default=list(EPS))
    parser.add_argument("--strategy", nargs="+", default=[approxpath.STRATEGIES[0], "paper"],
                        choices=approxpath.STRATEGIES)
    parser.add_argument("--restoration", nargs="+", default=None, choices=("projection", "scaling", "moving"),
                        help="dual restorations (default: each problem's default; others it lacks are skipped)")
    parser.add_argument("--range", type=float, nargs=2, default=list(INTERVAL), metavar=("LO", "HI"))
    args = parser.parse_args(argv)
    from _common import machine, warm_up

    print(f"lambda = {LAM}, t in [{args.range[0]:g}, {args.range[1]:g}]; {machine()}\n")
    print("| problem | n | strategy | dual restoration | eps | exact solves | pieces | certified | wall s | solve s "
          "| certification share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    fits = []
    for name in args.problem:
        cls = approxpath.get_problem(name)
        restorations = [r for r in args.restoration or cls.Bound.DUAL_RESTORATIONS[:1] if r in cls.Bound.DUAL_RESTORATIONS]
        warm_up(name, lam=LAM)
        for n in args.n:
            X, y = make_sinc(n=n, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=0)
            for strategy in args.strategy:
                for restoration in restorations:
                    problem = cls(X, y, lam=LAM, dual_restoration=restoration)
                    solves = []
                    for eps in args.eps:
                        path = approxpath.approximate_path(problem, eps=eps, interval=tuple(args.range),
                                                           strategy=strategy)
                        solves.append(path.exact_solves)
                        print(f"| {name} | {n} | {strategy} | {restoration} | {eps:g} | {path.exact_solves} "
                              f"| {len(path.pieces)} | {'yes' if path.certified else 'NO'} | {path.wall_s:.1f} "
                              f"| {path.solve_s:.1f} | {path.certify_s / path.wall_s:.0%} |", flush=True)
                    if len(args.eps) > 1:
                        fits.append(f"{name}, n = {n}, {strategy}, {restoration}: "
                                    f"solves ~ (1/eps)^{fitted_exponent(args.eps, solves):.2f}")
    print("\n" + "\n".join(fits))


if __name__ == "__main__":
    main()
