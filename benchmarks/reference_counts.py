"""Exact solves of the `paper` strategy against the paper's reference code (benchmarks/_common.py).

    python benchmarks/reference_counts.py [--data ionosphere_scale ...] [--eps 4 2 1 ...]

Settings of the paper: C = 0.1, t in [2^-10, 2^10], global min-max scaling, dynamic and fixed
bias. Prints a Markdown table: our count, the reference count, and whether it is within 20 %
(or +-2) of it.
"""

import argparse
import time

import approxpath

from _common import C, EPS_GRID, INTERVAL, REFERENCE, load, machine, within


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", default=["ionosphere_scale"])
    ap.add_argument("--eps", nargs="+", type=float, default=list(EPS_GRID))
    args = ap.parse_args(argv)
    print(f"machine: {machine()}\n")
    print("| data | bias | eps | exact solves | reference | within 20 % or ±2 | pieces (certified/sampled/uncovered) | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    ok = True
    for name in args.data:
        X, y = load(name)
        for bias, col in (("dynamic", 0), ("fixed", 1)):
            for eps in args.eps:
                problem = approxpath.get_problem("kernel_svm")(X, y, c=C, bias=bias)
                t0 = time.perf_counter()
                path = approxpath.approximate_path(problem, eps=eps, interval=INTERVAL, strategy="paper")
                wall = time.perf_counter() - t0
                ref = REFERENCE.get(name, [None] * len(EPS_GRID))[EPS_GRID.index(eps)] if eps in EPS_GRID else None
                ref = ref[col] if ref else None
                good = "n/a" if ref is None else ("yes" if within(path.exact_solves, ref) else "NO")
                ok &= good != "NO"
                kinds = [sum(p.kind == k for p in path.pieces) for k in ("certified", "sampled", "uncovered")]
                print(f"| {name} | {bias} | {eps:g} | {path.exact_solves} | {ref if ref is not None else '–'} | {good} "
                      f"| {len(path.pieces)} ({'/'.join(map(str, kinds))}) | {wall:.1f} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
