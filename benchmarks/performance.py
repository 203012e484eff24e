"""Wall time, peak memory, scaling and parallel speed-up, measured side by side in one run.

    python benchmarks/performance.py [--sections datasets scaling workers grid] [--data ...]

* datasets: every LIBSVM set at the paper's settings (C = 0.1, t in [2^-10, 2^10], global
  min-max scaling, eps = 0.125) with the default strategy, each in a fresh process (peak RSS
  is that process's; timed after a warm-up path on a tiny problem, so that imports do not
  count as solve time), next to the reference code's wall time (benchmarks/_common.py) and to the
  `paper` strategy run in the same process.
* scaling: subsamples of a4a (n = 500, 1000, 2000, 4000): one exact solve (libSVM, and
  Clarabel up to n = 2000) and a whole path; fitted exponents of time vs n.
* workers: the same long path with 1 and 2 worker processes.
* grid: the default strategy against a grid search certified to the same eps (the `grid`
  strategy: a uniform grid doubled until every segment certifies) and the `paper` strategy.
"""

import argparse
import multiprocessing as mp
import os
import resource
import time

import numpy as np

import approxpath

from _common import C, DATASETS, INTERVAL, REFERENCE_WALL, load, machine, warm_up

EPS = 0.125


def _path_job(name, strategy, eps, n, workers, seed, chunks=None, single_thread=False):
    """Run one path in this (fresh) process; returns its numbers and the peak RSS in MiB."""
    X, y = load(name)
    if n is not None and n < X.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, y = X[idx], y[idx]
    bias = "dynamic" if strategy == "paper" else "optimal"
    problem = approxpath.get_problem("kernel_svm")(X, y, c=C, bias=bias)
    warm_up()
    t0 = time.perf_counter()
    run = lambda: approxpath.approximate_path(problem, eps=eps, interval=INTERVAL, strategy=strategy,  # noqa: E731
                                              workers=workers, chunks=chunks)
    if single_thread:  # one BLAS thread and one kernel thread, as each parallel worker runs
        from approxpath.driver.parallel import single_threaded as _single_threaded

        path = _single_threaded(run)
    else:
        path = run()
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return dict(n=X.shape[0], solves=path.exact_solves, pieces=len(path.pieces), certified=path.certified,
                wall=wall, solve=path.solve_s, certify=path.certify_s, rss=rss)


def _fresh(fn, *args):
    """``fn(*args)`` in a fresh (spawned, non-daemonic: it may start workers) process."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def _span(lo, hi):
    """``"1.1"`` or ``"1.1-2.0"``: a stored range of times (or of their ratios)."""
    return f"{lo:.1f}" if lo == hi else f"{lo:.1f}-{hi:.1f}"


def section_datasets(names):
    print("### Paper settings, eps = 0.125, each data set in a fresh process (timed after a warm-up path on "
          "24 points: imports excluded)\n")
    print("(reference wall s: the paper's code, whole process, the range of its runs on another day, stored in "
          "_common.REFERENCE_WALL; it is not run here)\n")
    print("| data | n | exact solves | pieces | certified | wall s | exact solves s | certification share "
          "| peak RSS MiB | reference wall s (stored) | reference / ours | `paper` strategy wall s | default / paper |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        r = _fresh(_path_job, name, "interpolate", EPS, None, 1, 0)
        ref = REFERENCE_WALL.get(name)
        paper = _fresh(_path_job, name, "paper", EPS, None, 1, 0) if r["n"] <= 2500 else None
        ref_cells = (_span(*ref), _span(*(x / r["wall"] for x in ref)) + "x") if ref else ("–", "–")
        paper_cells = (f"{paper['wall']:.2f}", f"{r['wall'] / paper['wall']:.2f}") if paper else ("–", "–")
        print(f"| {name} | {r['n']} | {r['solves']} | {r['pieces']} | {'yes' if r['certified'] else 'NO'} "
              f"| {r['wall']:.2f} | {r['solve']:.2f} | {r['certify'] / r['wall']:.0%} | {r['rss']:.0f} "
              f"| {ref_cells[0]} | {ref_cells[1]} | {paper_cells[0]} | {paper_cells[1]} |", flush=True)


def _solve_job(n, solver, seed=0):
    X, y = load("a4a")
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    problem = approxpath.get_problem("kernel_svm")(X[idx], y[idx], c=C)
    problem.D  # distances are set-up, not the solve
    times = []
    for t in (2.0**-4, 1.0, 2.0**4):
        t0 = time.perf_counter()
        problem.solve(t, solver=(solver,))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def section_scaling():
    print("\n### Scaling over n (subsamples of a4a; eps = 0.125)\n")
    sizes = (500, 1000, 2000, 4000)
    rows = []
    for n in sizes:
        lib = _fresh(_solve_job, n, "libsvm")
        cla = _fresh(_solve_job, n, "clarabel") if n <= 2000 else float("nan")
        r = _fresh(_path_job, "a4a", "interpolate", EPS, n, 1, 0)
        rows.append((n, lib, cla, r))
        print(f"n = {n}: one exact solve libSVM {lib:.3f} s, Clarabel {cla:.2f} s; path {r['wall']:.1f} s "
              f"({r['solves']} solves, {r['pieces']} pieces, peak {r['rss']:.0f} MiB)", flush=True)
    n = np.array([r[0] for r in rows], dtype=float)
    fit = lambda v: np.polyfit(np.log(n[np.isfinite(v)]), np.log(np.asarray(v)[np.isfinite(v)]), 1)[0]  # noqa: E731
    print(f"\nfitted exponents (time ~ n^p): libSVM solve {fit([r[1] for r in rows]):.2f}, "
          f"Clarabel solve {fit([r[2] for r in rows]):.2f}, whole path {fit([r[3]['wall'] for r in rows]):.2f}")


def section_workers(name, eps):
    print(f"\n### Parallel: {name}, eps = {eps}\n")
    runs = [("1 process, threaded kernels and BLAS (the default)", dict()),
            ("1 process, single-threaded", dict(single_thread=True)),
            ("2 worker processes certifying segments (the default with workers=2)", dict(workers=2)),
            ("2 worker processes, 2 chunks of equal width", dict(workers=2, chunks=2))]
    walls = {}
    print("| run | exact solves | wall s | speed-up vs single-threaded | vs the default |")
    print("|---|---|---|---|---|")
    for k, (label, kw) in enumerate(runs):
        r = _fresh(_path_job, name, "interpolate", eps, None, kw.get("workers", 1), 0, kw.get("chunks"),
                   kw.get("single_thread", False))
        walls[k] = r["wall"]
        speed = (f"{walls[1] / r['wall']:.2f}x" if k >= 1 else "–", f"{walls[0] / r['wall']:.2f}x")
        print(f"| {label} | {r['solves']} | {r['wall']:.1f} | {speed[0]} | {speed[1]} |", flush=True)


def section_grid(names):
    print("\n### Against a grid search certified to the same eps (0.125)\n")
    print("| data | default: solves / wall s | paper: solves / wall s | certified grid: solves / wall s |")
    print("|---|---|---|---|")
    for name in names:
        res = [_fresh(_path_job, name, s, EPS, None, 1, 0) for s in ("interpolate", "paper", "grid")]
        print(f"| {name} | " + " | ".join(f"{r['solves']} / {r['wall']:.1f}" for r in res) + " |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sections = ["datasets", "scaling", "workers", "grid"]
    ap.add_argument("--sections", nargs="+", choices=sections, default=sections)
    ap.add_argument("--data", nargs="+", default=list(DATASETS))
    ap.add_argument("--workers-data", nargs="+", default=["a1a", "a2a", "a3a"])
    ap.add_argument("--workers-eps", type=float, default=0.03)
    args = ap.parse_args(argv)
    print(f"machine: {machine()}; load average at start {os.getloadavg()[0]:.1f}\n")
    if "datasets" in args.sections:
        section_datasets(args.data)
    if "scaling" in args.sections:
        section_scaling()
    if "workers" in args.sections:
        for name in args.workers_data:
            section_workers(name, args.workers_eps)
    if "grid" in args.sections:
        section_grid([d for d in args.data if d in ("ionosphere_scale", "heart_scale", "diabetes_scale")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
