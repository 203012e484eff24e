"""Exact Wang paths vs the certified approximate path on Wang's sinc set-up, side by side.

Wang, Yeung, Lochovsky (2007) section 5: 100 points x uniform on [-3, 3], y = sinc(x) + noise
(sd 0.08), 50 random training points; lambda in {1, 0.1, 0.01}; sigma from 10 to 0.1 (t from
0.1 to 10); theta = 0.95, eps = 1e-6; the kernel path starts from the lambda-path at sigma = 10.
Prints markdown tables: the exact kernel paths (events, solutions, linear solves, condition
numbers, certified gaps, wall time), the lambda-paths at sigma = 10, 1, 0.1, the approximate
paths at the given eps (exact solves, pieces, wall time, agreement with the exact path at 50
random sigma), and side by side in one run: the lambda-path's events/s with the LU
refactorization at every breakpoint (before) and with the up/down-dated factor (after), and the
kernel path's wall time with the full check and with the marginal-point screen.  Synthetic data
only (no LIBSVM files needed).

    python benchmarks/exact_paths.py [--eps 1e-2 1e-3] [--strategy interpolate] [--sections ...] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.exact import certify, kernel_path, lambda_path
from approxpath.exact._lambda import _lambda_path

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


def _five_d(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    return X, np.sin(X[:, 0]) + X[:, 1] ** 2 / 4 + 0.1 * rng.standard_normal(n)


def _same_events(a, b):
    return [(e.index, e.kind) for e in a.events] == [(e.index, e.kind) for e in b.events]


def updates(repeats):
    """lambda-path events/s: LU refactorization vs up/down-dated factor, interleaved runs, medians."""
    sets = [("Wang sinc n=50", wang_sinc(), 1.0)]
    for n in (200, 400, 800):
        sets.append((f"sinc n={n}", make_sinc(n=n, low=-3.0, high=3.0, noise=0.08, seed=0), 30.0))
    sets += [(f"5-d n={n}", _five_d(n), 0.5) for n in (200, 400)]
    print("\nlambda-path, lam_min = 1e-3 lambda_max (default): LU at every breakpoint (before) vs up/down-dated Cholesky "
          f"factor (after), median of {repeats} interleaved runs\n")
    print("| data | t | events | max active | max cond | same events | max abs beta diff | LU events/s "
          "| update events/s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (X, y), bw in sets:
        walls, paths = {"lu": [], "update": []}, {}
        for _ in range(repeats):
            for factor in ("lu", "update"):
                paths[factor] = _lambda_path(X, y, bw, factor=factor)
                walls[factor].append(paths[factor].wall_s)
        lu, up = paths["lu"], paths["update"]
        diff = np.abs(lu.beta - up.beta).max() if lu.beta.shape == up.beta.shape else float("nan")
        e = len(up.events)
        r_lu, r_up = e / statistics.median(walls["lu"]), e / statistics.median(walls["update"])
        print(f"| {name} | {bw:g} | {e} | {int(np.abs(up.signs).sum(axis=1).max())} | {lu.max_cond:.1g} | "
              f"{_same_events(lu, up)} | {diff:.1g} | {r_lu:.0f} | {r_up:.0f} | {r_up / r_lu:.2f} |")


def marginal(repeats):
    """Kernel path wall time: every inactive row checked at every trial (screen=False) vs the
    Taylor screen (the default) vs the marginal-point screen (xi = 0.01, 0.5)."""
    print(f"\nkernel path, lam = 0.1: full check vs the screens, median of {repeats} interleaved runs\n")
    print("| data | t range | events | full s | Taylor s (rows checked) | xi = 0.01 s (rows checked) | "
          "xi = 0.5 s (rows checked) | same events, all certified | full / Taylor | full / xi 0.01 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    sinc = [make_sinc(n=n, low=-3.0, high=3.0, noise=0.08, seed=0) for n in (200, 800)]
    sets = [("Wang sinc n=50", wang_sinc(), (0.1, 10.0)), ("sinc n=50 seed 3", make_sinc(n=50, seed=3), (0.1, 10.0)),
            ("sinc n=200", sinc[0], (0.1, 10.0)), ("sinc n=800", sinc[1], (1.0, 1.5)),
            ("`approxpath data sinc --n 1000`", make_sinc(n=1000), (1.0, 1.5))]
    runs = {"full": dict(screen=False), "taylor": {}, 0.01: dict(marginal=0.01), 0.5: dict(marginal=0.5)}
    for name, (X, y), interval in sets:
        walls, paths = {}, {}
        for _ in range(repeats):
            for key, kw in runs.items():
                paths[key] = kernel_path(X, y, 0.1, interval, **kw)
                walls.setdefault(key, []).append(paths[key].wall_s)
        ok = all(_same_events(paths["full"], paths[k]) and certify(paths[k]).ok for k in runs if k != "full")
        med = {k: statistics.median(w) for k, w in walls.items()}
        share = {k: paths[k].settings["marginal_rows_checked"] for k in runs if k != "full"}
        print(f"| {name} | [{interval[0]:g}, {interval[1]:g}] | {len(paths['full'].events)} | {med['full']:.2f} | "
              + " | ".join(f"{med[k]:.2f} ({share[k]:.0%})" for k in ("taylor", 0.01, 0.5))
              + f" | {ok} | {med['full'] / med['taylor']:.2f} | {med['full'] / med[0.01]:.2f} |")


SECTIONS = ("paths", "updates", "marginal")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eps", type=float, nargs="+", default=[1e-2, 1e-3], help="eps of the approximate paths")
    parser.add_argument("--strategy", default=approxpath.STRATEGIES[0], help="driver strategy of the approximate paths")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                        help="paths: the kernel, lambda and approximate paths; updates: lambda-path events/s, "
                             "LU vs updates; marginal: kernel path, full check vs the screens")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs per timing (medians)")
    args = parser.parse_args(argv)
    X, y = wang_sinc()
    KLasso = approxpath.get_problem("klasso")
    print(f"machine: {machine()}\n")
    if "updates" in args.sections:
        updates(args.repeats)
    if "marginal" in args.sections:
        marginal(args.repeats)
    if "paths" not in args.sections:
        return
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
