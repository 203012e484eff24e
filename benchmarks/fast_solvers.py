"""Per-solve times of the exact solves of ``klasso`` and ``robust_l1``, side by side in one run:
today's solve (``Problem.solve`` with Clarabel: a cold interior-point solve of the Gram-form
QP / the primal LP, klasso's active-set polish, restoration and our gap) against the fast
solvers of ``approxpath.solvers.lasso`` / ``approxpath.solvers.lp``, cold and warm-started
from the previous bandwidth's solution, each followed by the same restoration and gap.

The bandwidths are the exact-solve points of 0.3.2 paths on the set-up of docs/benchmarks.md (sinc data,
10 % outliers, lambda = 0.1, t in [2^-3, 2^5], eps = 0.05: klasso at n = 400, 71 points;
robust_l1 at n = 100, 72 points), walked in increasing order (a path's nearest anchor is the
natural warm start).  Every (problem, n) runs in its own process, which reports its peak
resident memory.  ``--paths N ...`` also runs whole paths at those n with the fast solvers
wired in by a subclass next to 0.3.2's;
``--basis N`` prints how a robust_l1 pair carried by its simplex basis degrades with the
distance from its anchor, against the anchor's own pair.

    python benchmarks/fast_solvers.py [--n 100 400 1000 4000] [--problem klasso robust_l1]
        [--clarabel-points 8] [--clarabel-max-n 1000] [--every 1] [--start 0] [--count K]
        [--paths 100 400] [--basis 100]

Needs no data files (seeded generator).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

# 0.3.2's exact-solve points on the set-up above (rounded to 6 digits)
T_KLASSO = [
    0.125, 0.136313, 0.148651, 0.162105, 0.176777, 0.192776, 0.204608, 0.210224, 0.219532, 0.229251, 0.239401,
    0.25, 0.262105, 0.28475, 0.304167, 0.331255, 0.357324, 0.387584, 0.42585, 0.472654, 0.537681, 0.613339,
    0.710526, 0.797017, 0.911065, 1.0163, 1.18464, 1.42331, 1.7142, 2.01688, 2.31998, 2.57814, 2.8457, 3.01437,
    3.19303, 3.46003, 3.68876, 3.96212, 4.2375, 4.48062, 4.80788, 4.99672, 5.19298, 5.57336, 6.01992, 6.29862,
    6.59022, 7.08461, 7.60761, 8.118, 8.80376, 9.54134, 10.2541, 10.9456, 11.7531, 12.5547, 13.2785, 13.9279,
    14.7763, 15.6782, 16.7855, 18.0331, 19.3776, 20.5883, 21.9278, 23.2315, 25.0351, 27.1227, 29.3507, 31.423,
    32.0]
T_ROBUST = [
    0.125, 0.148651, 0.162105, 0.169282, 0.176777, 0.184603, 0.192776, 0.196998, 0.201311, 0.210224, 0.219532,
    0.229251, 0.25, 0.268263, 0.284203, 0.300975, 0.308761, 0.316748, 0.331412, 0.339043, 0.346851, 0.355415,
    0.364333, 0.372969, 0.380185, 0.387542, 0.395503, 0.40785, 0.420283, 0.433355, 0.454818, 0.474546, 0.495131,
    0.534488, 0.583558, 0.648014, 0.72038, 0.824493, 0.980718, 1.14084, 1.32934, 1.6279, 1.92635, 2.20941,
    2.56635, 3.02794, 3.30935, 3.61692, 4.15928, 4.91082, 5.71846, 6.41589, 7.19921, 8.44334, 9.21833, 10.0645,
    11.1451, 12.2499, 13.2498, 14.5201, 15.7619, 17.1796, 18.9162, 21.2856, 23.7426, 24.7963, 25.8968, 27.2744,
    28.3549, 29.4782, 30.7996, 32.0]
LAM = 0.1
INTERVAL = (2.0**-3, 2.0**5)
EPS = 0.05


def _problem(name, n):
    import approxpath
    from approxpath.data import make_sinc

    X, y = make_sinc(n=n, noise=0.1, outliers=0.1, seed=0)
    return approxpath.get_problem(name)(X, y, lam=LAM)


def _fast(problem, t, warm):
    """The fast solve at ``t`` from ``warm`` as a candidate pair (and the raw solution)."""
    from approxpath.solvers.lasso import solve_klasso
    from approxpath.solvers.lp import solve_robust_l1

    K = problem.kernels.get(t)
    if problem.name == "klasso":
        sol = solve_klasso(K, problem.y, problem.lam, warm=warm)
        return (problem.Primal(sol.beta, sol.beta0), problem.Dual(sol.u)), sol
    sol = solve_robust_l1(K, problem.y, problem.lam, warm=warm)
    return (problem.Primal(sol.beta), problem.Dual(sol.u)), sol


def _relgap(problem, pair, t):
    pair = problem.restore(*pair, t)
    return problem.bound.gap(*pair, t) / (1.0 + abs(problem.dual_objective(pair[1], t)))


def child(name, n, every, clarabel_points, start=0, count=None):
    """One (problem, n): per-solve seconds of the three ways, the largest relative gap of each."""
    problem = _problem(name, n)
    ts = (T_KLASSO if name == "klasso" else T_ROBUST)[start::every][:count]
    out = dict(problem=name, n=n, points=len(ts), cold=[], warm=[], clarabel=[], cold_solver=[], warm_solver=[], gap_cold=0.0, gap_warm=0.0,
               gap_clarabel=0.0, steps_cold=0, steps_warm=0)
    warm = None
    for t in ts:
        problem.kernels.get(t)  # the kernel is not part of any solve's time
        t0 = time.perf_counter()
        pair, sol = _fast(problem, t, None)
        out["cold"].append(time.perf_counter() - t0)
        out["gap_cold"] = max(out["gap_cold"], _relgap(problem, pair, t))
        out["steps_cold"] += sol.iterations
        out["cold_solver"].append(sol.seconds)
        t0 = time.perf_counter()
        pair, sol = _fast(problem, t, warm)
        out["warm"].append(time.perf_counter() - t0)
        out["gap_warm"] = max(out["gap_warm"], _relgap(problem, pair, t))
        out["steps_warm"] += sol.iterations
        out["warm_solver"].append(sol.seconds)
        warm = sol
    for t in ts[:: max(1, len(ts) // clarabel_points)][:clarabel_points] if clarabel_points else []:
        t0 = time.perf_counter()
        pair = problem.solve(t, solver="clarabel")  # today: cold IPM, polish, restore, gap
        out["clarabel"].append(time.perf_counter() - t0)
        out["gap_clarabel"] = max(out["gap_clarabel"], _relgap(problem, pair, t))
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(out))


def _general_class(base):
    """``base`` without its fast backend (feature-sign search for klasso, HiGHS for robust_l1):
    the general conic solvers alone, as before the fast backends (the built-in problems try the
    fast one first, warm-started from the nearest exact solve)."""

    class General(base):
        backends = tuple(b for b in base.backends if b in ("clarabel", "scs"))

    return General


def path_child(name, n, fast):
    import approxpath

    problem = _problem(name, n)
    if not fast:
        problem = _general_class(type(problem))(problem.X, problem.y, lam=LAM)
    path = approxpath.approximate_path(problem, eps=EPS, interval=INTERVAL)
    print(json.dumps(dict(problem=name, n=n, fast=fast, solves=path.exact_solves, pieces=len(path.pieces),
                          certified=bool(path.certified), wall=path.wall_s, solve=path.solve_s,
                          peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)))


def basis_table(n):
    """robust_l1: the gap at t (1 + d) of the anchor's own pair (restored) against the pair
    carried by its optimal basis (basis_primal, basis_dual, then restored)."""
    from approxpath.solvers.lp import basis_dual, basis_primal, solve_robust_l1

    problem = _problem("robust_l1", n)
    y = problem.y
    print(f"\nrobust_l1, n = {n}: gap bound at t (1 + d) of the anchor's pair / the basis-carried pair\n")
    print("| t | basic columns | d = 0.1 % | d = 1 % | d = 3 % |")
    print("|---|---|---|---|---|")
    for t in (0.21, 0.5, 2.0, 10.0):
        sol = solve_robust_l1(problem.kernels.get(t), y, LAM)
        cells = []
        for d in (1e-3, 1e-2, 3e-2):
            tau = t * (1 + d)
            K = problem.kernels.get(tau)
            anchor = problem.restore(problem.Primal(sol.beta), problem.Dual(sol.u), tau)
            carried = problem.restore(problem.Primal(basis_primal(K, y, sol.basis)),
                                      problem.Dual(basis_dual(K, LAM, sol.basis, sol.u)), tau)
            cells.append(f"{problem.bound.gap(*anchor, tau):.3g} / {problem.bound.gap(*carried, tau):.2g}")
        print(f"| {t:g} | {int((sol.basis.col_status == 1).sum())} | " + " | ".join(cells) + " |", flush=True)


def _run(args):
    out = subprocess.run([sys.executable, __file__] + [str(a) for a in args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _med(xs):
    return float(np.median(xs)) if xs else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", nargs="+", default=["klasso", "robust_l1"], choices=("klasso", "robust_l1"))
    parser.add_argument("--n", type=int, nargs="+", default=[100, 400, 1000, 4000])
    parser.add_argument("--every", type=int, default=1, help="use every k-th bandwidth of the sequence")
    parser.add_argument("--start", type=int, default=0, help="first bandwidth of the sequence used")
    parser.add_argument("--count", type=int, default=None, help="number of bandwidths used (default: all)")
    parser.add_argument("--clarabel-points", type=int, default=8, help="bandwidths timed with today's solve")
    parser.add_argument("--clarabel-max-n", type=int, default=1000, help="skip today's solve above this n")
    parser.add_argument("--paths", type=int, nargs="*", default=[], help="n of whole paths, 0.3.2 vs fast")
    parser.add_argument("--basis", type=int, default=0, help="n of the basis-carried pair table (0: none)")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--path-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, n, every, cp, start, count = args.child
        return child(name, int(n), int(every), int(cp), int(start), None if count == "all" else int(count))
    if args.path_child:
        name, n, fast = args.path_child
        return path_child(name, int(n), fast == "1")
    from _common import machine

    if args.basis:
        basis_table(args.basis)
    print(f"sinc data, 10 % outliers, lambda = {LAM}, 0.3.2 path solve points; {machine()}\n")
    print("| problem | n | solves | today (Clarabel) s/solve | fast cold s/solve | fast warm s/solve "
          "| today / warm | cold / warm | solver alone cold / warm s | steps cold / warm per solve "
          "| max rel. gap today / cold / warm | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.problem:
        for n in args.n:
            cp = args.clarabel_points if n <= args.clarabel_max_n else 0
            r = _run(["--child", name, n, args.every, cp, args.start, "all" if args.count is None else args.count])
            today, cold, warm = _med(r["clarabel"]), _med(r["cold"]), _med(r["warm"])
            ran = bool(r["clarabel"])
            print(f"| {name} | {n} | {r['points']} | "
                  + (f"{today:.4f} ({len(r['clarabel'])} solves)" if ran else "not run") + f" | {cold:.4f} | "
                  f"{warm:.4f} | " + (f"{today / warm:.1f}" if ran else "-") + f" | {cold / warm:.1f} | "
                  f"{_med(r.get('cold_solver', [])):.4f} / {_med(r.get('warm_solver', [])):.4f} | "
                  f"{r['steps_cold'] / r['points']:.0f} / {r['steps_warm'] / r['points']:.0f} | "
                  + (f"{r['gap_clarabel']:.1e}" if ran else "-") + f" / {r['gap_cold']:.1e} / "
                  f"{r['gap_warm']:.1e} | {r['peak_rss_mib']:.0f} |", flush=True)
    if args.paths:
        print(f"\nWhole paths (eps = {EPS}, t in [2^-3, 2^5]), 0.3.2's exact solve vs the fast solvers wired in:\n")
        print("| problem | n | solver | exact solves | pieces | certified | wall s | solve s | wall ratio |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name in args.problem:
            for n in args.paths:
                old, new = (_run(["--path-child", name, n, f]) for f in ("0", "1"))
                for r in (old, new):
                    print(f"| {name} | {n} | {'fast' if r['fast'] else '0.3.2'} | {r['solves']} | {r['pieces']} | "
                          f"{'yes' if r['certified'] else 'NO'} | {r['wall']:.1f} | {r['solve']:.1f} | "
                          f"{old['wall'] / r['wall']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
