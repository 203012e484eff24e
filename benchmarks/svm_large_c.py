"""The kernel SVM at a large C: the exact solves' backend order, side by side in one run.

    python benchmarks/svm_large_c.py [--n 200] [--c 1000 10000] [--eps 1e-2] [--solves-n 200 1000]

From ``INTERIOR_FIRST_C`` on, an SVM exact solve started from one that reached Clarabel tries
Clarabel first (the default); libSVM's chain first (``solver=["smo", "libsvm", "clarabel",
"scs"]``) is what smaller C use.  Each row runs the orders in this process, one after the other:

* ``solves``: three exact solves (t = 0.25, 1, 4) with the path driver's acceptance at a
  relative target of 1e-3 (a gap of 1e-6 of the objective suffices), total wall seconds,
  Clarabel first against libSVM's chain;
* ``path``: the certified bandwidth path on [2^-6, 2^4] at relative ``--eps``: wall seconds,
  exact solves, pieces and the largest gap bound of the default and of libSVM's chain.

Data: two Gaussian classes (``make_classification(n, d=5, seed=0)``).  Prints JSON lines.
"""

import argparse
import json
import time

import approxpath
from approxpath.data import make_classification

from _common import machine

CHAIN = ["smo", "libsvm", "clarabel", "scs"]  # the order below INTERIOR_FIRST_C
INTERIOR = ["clarabel", "smo", "libsvm", "scs"]


def _solves(problem, solver):
    t0 = time.perf_counter()
    for t in (0.25, 1.0, 4.0):
        problem.solve(t, solver=solver, enough=lambda pair, t=t: 1e-6 * abs(problem.dual_objective(pair[1], t)))
    return round(time.perf_counter() - t0, 3)


def _path(problem, solver, eps):
    t0 = time.perf_counter()
    path = approxpath.approximate_path(problem, eps=eps, relative=True, interval=(2.0**-6, 2.0**4), solver=solver)
    return dict(wall_s=round(time.perf_counter() - t0, 2), certified=path.certified, solves=path.exact_solves,
                pieces=len(path.pieces), max_gap_bound=path.max_gap_bound)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="samples of the paths")
    parser.add_argument("--c", type=float, nargs="+", default=[1000.0, 10000.0])
    parser.add_argument("--eps", type=float, default=1e-2, help="relative eps of the paths")
    parser.add_argument("--solves-n", type=int, nargs="*", default=[200, 1000], help="samples of the single solves")
    args = parser.parse_args()
    print(json.dumps({"machine": machine()}), flush=True)
    for n in args.solves_n:
        X, y = make_classification(n=n, d=5, seed=0)
        for C in args.c:
            problem = approxpath.get_problem("kernel_svm")(X, y, c=C)
            print(json.dumps(dict(kind="solves", n=n, C=C, interior_first_s=_solves(problem, INTERIOR),
                                  libsvm_chain_s=_solves(problem, CHAIN))), flush=True)
    X, y = make_classification(n=args.n, d=5, seed=0)
    for C in args.c:
        problem = approxpath.get_problem("kernel_svm")(X, y, c=C)
        print(json.dumps(dict(kind="path", n=args.n, C=C, eps=args.eps, default=_path(problem, None, args.eps),
                              libsvm_chain=_path(problem, CHAIN, args.eps))), flush=True)


if __name__ == "__main__":
    main()
