"""Plug-in paths measured side by side: sampled against certified pieces, kernel families, and
problems declared only in CVXPY.

    python benchmarks/plugin.py [--part sampled families cvxpy] [--repeat 3]

* ``sampled``: the toy problem and kernel ridge regression with their interval bound switched
  off, against the same problems certified, on every strategy (pieces, exact solves, wall).
* ``families``: paths of the kernel problems with the gaussian, laplacian and precomputed
  kernels (ionosphere for the SVM when the LIBSVM files are there, else synthetic data).
* ``cvxpy``: the worked CVXPY elastic net and lasso over lambda and a kernel smoother over the
  bandwidth (every piece sampled), against the built-in klasso/kernel ridge where comparable.

Wall times are medians of ``--repeat`` runs, interleaved; read them as ratios within one table.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.driver import STRATEGIES

from _common import LIBSVM_DIR, load, machine, warm_up

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def _run(problem, repeat, **kw):
    walls, path = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        path = approxpath.approximate_path(problem, **kw)
        walls.append(time.perf_counter() - t0)
    kinds = {k: sum(p.kind == k for p in path.pieces) for k in ("certified", "sampled", "uncovered")}
    return path, statistics.median(walls), kinds


def sampled(repeat):
    from test_sampled import _cases

    print("| problem | strategy | certified: solves / pieces / wall s | sampled: solves / pieces / wall s | pieces ratio |")
    print("|---|---|---|---|---|")
    for name, certified, bound_less, interval, eps, _ in _cases():
        for strategy in STRATEGIES:
            a, wa, _ = _run(certified, repeat, eps=eps, interval=interval, strategy=strategy)
            b, wb, kinds = _run(bound_less, repeat, eps=eps, interval=interval, strategy=strategy)
            assert kinds["sampled"] == len(b.pieces)
            print(f"| {name} | {strategy} | {a.exact_solves} / {len(a.pieces)} / {wa:.2f} | "
                  f"{b.exact_solves} / {len(b.pieces)} / {wb:.2f} | {len(b.pieces) / len(a.pieces):.2f} |")


def _l1(X):
    return np.abs(X[:, None, :] - X[None, :, :]).sum(-1)


def families(repeat):
    if (LIBSVM_DIR / "ionosphere_scale").is_file():
        Xc, yc = load("ionosphere_scale")
        svm = ("kernel_svm ionosphere", Xc, yc, dict(c=0.1), (2.0**-10, 2.0**10), 0.125)
    else:
        Xc, yc = make_classification(n=200, d=5, seed=0)
        svm = ("kernel_svm synthetic", Xc, yc, dict(c=0.1), (2.0**-10, 2.0**10), 0.125)
    Xs, ys = make_sinc(n=100, noise=0.1, seed=0)
    Xo, yo = make_sinc(n=100, noise=0.1, outliers=0.1, seed=0)
    cases = [svm, ("klasso sinc", Xs, ys, dict(lam=0.1), (2.0**-3, 2.0**5), 0.05),
             ("robust_l1 sinc", Xo, yo, dict(lam=0.1), (1.0, 4.0), 0.5),
             ("kernel_ridge sinc", Xs, ys, dict(lam=0.1), (2.0**-3, 2.0**5), 0.05)]
    print("| problem | kernel | exact solves | pieces | certified | wall s | D check s |")
    print("|---|---|---|---|---|---|---|")
    for label, X, y, options, interval, eps in cases:
        name = label.split()[0]
        for kernel in ("gaussian", "laplacian", "precomputed"):
            data = _l1(X) if kernel == "precomputed" else X  # the l1 distance: CND, so the SVM takes it
            t0 = time.perf_counter()
            problem = approxpath.get_problem(name)(data, y, kernel=kernel, **options)
            check_s = time.perf_counter() - t0
            path, wall, kinds = _run(problem, repeat, eps=eps, interval=interval)
            print(f"| {label} | {kernel} | {path.exact_solves} | {len(path.pieces)} | {path.certified} | {wall:.2f} | "
                  f"{check_s:.3f} |")


def cvxpy(repeat):
    from elastic_net_cvxpy import ElasticNet
    from plugin_problems import Lasso, Smoother, regression

    X, y = regression(n=60, d=8, seed=0)
    Xs, ys = make_sinc(n=30, seed=2)
    cases = [("elastic net (CVXPY) over lam", ElasticNet(X, y, mix=0.5), dict(eps=1e-3, interval=(1e-3, 1.0))),
             ("lasso (CVXPY) over lam", Lasso(X, y), dict(eps=1e-3, interval=(1e-3, 1.0))),
             ("kernel smoother (CVXPY) over t", Smoother(Xs, ys, lam=0.1), dict(eps=0.05, interval=(0.5, 8.0))),
             ("kernel_ridge (built in) over t", approxpath.get_problem("kernel_ridge")(Xs, ys, lam=0.1),
              dict(eps=0.05, interval=(0.5, 8.0)))]
    print("| problem | exact solves | pieces | kinds | wall s | exact solves s | certification s |")
    print("|---|---|---|---|---|---|---|")
    for label, problem, kw in cases:
        path, wall, kinds = _run(problem, repeat, **kw)
        k = ", ".join(f"{v} {key}" for key, v in kinds.items() if v)
        print(f"| {label} | {path.exact_solves} | {len(path.pieces)} | {k} | {wall:.2f} | {path.solve_s:.2f} | "
              f"{path.certify_s:.2f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", nargs="+", default=["sampled", "families", "cvxpy"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"machine: {machine()}; approxpath {approxpath.__version__}\n")
    warm_up()
    for part in args.part:
        print(f"\n### {part}\n")
        {"sampled": sampled, "families": families, "cvxpy": cvxpy}[part](args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
