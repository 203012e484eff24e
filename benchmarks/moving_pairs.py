"""Moving pairs against fixed pairs, side by side in one run: exact solves, pieces, wall seconds
and the certificate's size, for every built-in problem over the bandwidth and over its weight.

    python benchmarks/moving_pairs.py [--only NAME ...] [--k 1]

Each row runs the same path twice in this process, interleaved k times (median wall): with the
pairs that move with the parameter across a piece (the default) and with fixed pairs
(``dual_restoration="fixed"`` for the SVM, ``"scaling"`` for kLASSO and robust l1; kernel ridge
has no option, so its fixed run uses a subclass whose bound declares no moving pairs).  Data:
sinc with 10 % outliers (``approxpath data sinc``) for the regression problems, two Gaussian
classes (``make_classification``) for the SVM.  Prints JSON lines.
"""

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import approxpath
from approxpath.data import make_classification, make_sinc

from _common import machine

KernelRidge = approxpath.get_problem("kernel_ridge")


class _FixedRidgeBound(KernelRidge.Bound):
    moving_degrees = {}  # (no moving pairs: the driver hands the problem fixed combinations)


class _FixedRidge(KernelRidge):
    Bound = _FixedRidgeBound


def _sinc(n):
    return make_sinc(n=n, noise=0.1, outliers=0.1, seed=0)


# name -> (problem, data, options, fixed options, interval, eps)
CASES = {
    "kernel_svm bandwidth n=300": ("kernel_svm", lambda: make_classification(n=300, d=5, seed=1), dict(c=1.0),
                                   dict(dual_restoration="fixed"), (2.0**-6, 2.0**4), 0.1),
    "kernel_svm c n=300": ("kernel_svm", lambda: make_classification(n=300, d=5, seed=1),
                           dict(bandwidth=0.5, parameter="c"), dict(dual_restoration="fixed"), (0.05, 10.0), 0.5),
    "klasso bandwidth n=200": ("klasso", lambda: _sinc(200), dict(lam=0.1), dict(dual_restoration="scaling"),
                               (2.0**-3, 2.0**5), 0.05),
    "klasso lam n=200": ("klasso", lambda: _sinc(200), dict(bandwidth=1.0, parameter="lam"),
                         dict(dual_restoration="scaling"), (1e-3, 1.0), 0.01),
    "robust_l1 bandwidth n=200": ("robust_l1", lambda: _sinc(200), dict(lam=0.1), dict(dual_restoration="scaling"),
                                  (2.0**-3, 2.0**5), 0.5),
    "robust_l1 lam n=200": ("robust_l1", lambda: _sinc(200), dict(bandwidth=1.0, parameter="lam"),
                            dict(dual_restoration="scaling"), (1e-3, 1.0), 0.1),
    "kernel_ridge bandwidth n=400": ("kernel_ridge", lambda: _sinc(400), dict(lam=0.1), None, (2.0**-3, 2.0**5), 0.05),
    "kernel_ridge bandwidth n=1000": ("kernel_ridge", lambda: _sinc(1000), dict(lam=0.1), None, (2.0**-3, 2.0**5),
                                      0.05),
    "kernel_ridge lam n=400": ("kernel_ridge", lambda: _sinc(400), dict(bandwidth=1.0, parameter="lam"), None,
                               (1e-3, 1.0), 0.01),
    "kernel_ridge lam n=1000": ("kernel_ridge", lambda: _sinc(1000), dict(bandwidth=1.0, parameter="lam"), None,
                                (1e-3, 1.0), 0.01),
}


def _run(problem, interval, eps, folder):
    t0 = time.perf_counter()
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    wall = time.perf_counter() - t0
    file = path.save(Path(folder) / "cert.npz")
    return dict(wall=wall, solves=path.exact_solves, pieces=len(path.pieces), certified=path.certified,
                kib=round(file.stat().st_size / 1024, 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="names of the rows to run (substrings)")
    ap.add_argument("--k", type=int, default=1, help="repeats per version (median wall)")
    args = ap.parse_args()
    unmatched = [s for s in args.only or () if not any(s in name for name in CASES)]
    if unmatched:
        ap.error(f"--only {' '.join(unmatched)} matches no row (rows: {', '.join(CASES)})")
    print(json.dumps({"machine": machine()}))
    with tempfile.TemporaryDirectory() as folder:
        for name, (problem_name, data, options, fixed, interval, eps) in CASES.items():
            if args.only and not any(s in name for s in args.only):
                continue
            X, y = data()
            cls = approxpath.get_problem(problem_name)
            runs = {"moving": [], "fixed": []}
            for k in range(args.k):
                for kind in (("moving", "fixed") if k % 2 == 0 else ("fixed", "moving")):
                    if kind == "moving":
                        problem = cls(X, y, **options)
                    elif fixed is None:
                        problem = _FixedRidge(X, y, **options)
                    else:
                        problem = cls(X, y, **options, **fixed)
                    runs[kind].append(_run(problem, interval, eps, folder))
            row = {"case": name, "eps": eps, "interval": list(interval)}
            for kind, rs in runs.items():
                row[kind] = dict(rs[0], wall=round(statistics.median(r["wall"] for r in rs), 2))
            row["pieces ratio"] = round(row["fixed"]["pieces"] / row["moving"]["pieces"], 2)
            row["wall ratio"] = round(row["moving"]["wall"] / row["fixed"]["wall"], 2)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
