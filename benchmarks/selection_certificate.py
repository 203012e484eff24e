"""The certificate of a certified choice: what writing it and verifying it cost beside the search,
and its δ beside the search's.

    APPROXPATH_LIBSVM_DIR=/path/to/libsvm python benchmarks/selection_certificate.py [--quick | --both | --ridge]

Cases: the SVM's 5-fold error on heart and ionosphere (global min-max scaling) over the bandwidth
(C = 1 and C = 0.1, t in [2^-10, 2^10]) and over C (bandwidth 1), kLASSO's 5-fold MSE on sinc
(n = 100, shuffled folds, tol 0.005) over the bandwidth; ``--quick``: heart and sinc only.  ``--both``:
choices over both parameters instead (``select_surface``, 3 shuffled folds, eps 0.1 relative): the SVM's
error on ``make_classification(n=40, separation=1.5, seed=3)`` over t and C in [0.5, 4] (tol 0.1), kLASSO's
MAE on ``make_sinc(n=40)`` over t in [0.5, 4] and lam in [0.05, 0.5] (tol 0.2).  ``--ridge``: kernel ridge's
5-fold MSE over the bandwidth (lam = 0.1, t in [2^-3, 2^5]) and over lam (bandwidth 1, lam in [1e-3, 1]),
shuffled folds, tol 0.001, on ``make_sinc``'s n = 200 and 1000, cells between exact optima with no path.  Each row: the
search's wall seconds, δ, exact solves and cells (over both parameters: of all folds' surfaces);
``save``'s seconds, the file's size and δ; ``approxpath.verify``'s seconds and verdict (in this process,
one after the other).
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.selection import select
from approxpath.surface import select_surface

from _common import load, machine


def _case(name, problem, choose=select, **kw):
    s = choose(problem, strict=False, **kw)
    cells = s.lo.size if choose is select else s.cells
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "choice.npz"
        start = time.perf_counter()
        claim = s.save(file)
        wrote = time.perf_counter() - start
        start = time.perf_counter()
        report = approxpath.verify(file, problem.X, problem.y)
        checked = time.perf_counter() - start
        size = os.path.getsize(file) / 2**20
    print(f"| {name} | {s.wall_s:.1f} | {s.delta:.4g} | {s.exact_solves} | {cells} | {wrote:.1f} | {size:.1f} | "
          f"{claim['delta']:.4g} | {checked:.1f} | {'OK' if report.ok else 'FAILED'} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="heart and sinc only")
    parser.add_argument("--both", action="store_true", help="choices over both parameters")
    parser.add_argument("--ridge", action="store_true", help="kernel ridge over the bandwidth and over lam (no path)")
    args = parser.parse_args()
    print(machine())
    print("| case | search s | search δ | exact solves | cells | save s | file MiB | file δ | verify s | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if args.ridge:
        ridge = approxpath.get_problem("kernel_ridge")
        for n in (200, 1000):
            X, y = make_sinc(n=n, seed=0)
            _case(f"sinc n = {n}, kernel ridge bandwidth (lam = 0.1), MSE", ridge(X, y, lam=0.1), criterion="mse",
                  cv=5, shuffle=0, interval=(2.0**-3, 2.0**5), tol=0.001)
            _case(f"sinc n = {n}, kernel ridge lam (bandwidth = 1), MSE", ridge(X, y, bandwidth=1.0, parameter="lam"),
                  criterion="mse", cv=5, shuffle=0, interval=(1e-3, 1.0), tol=0.001)
        return
    if args.both:
        X, y = make_classification(n=40, d=2, separation=1.5, seed=3)
        _case("classification n = 40, SVM error over t and C", approxpath.get_problem("kernel_svm")(X, y, c=1.0),
              select_surface, cv=3, shuffle=0, eps=0.1, relative=True, bandwidths=(0.5, 4.0), weights=(0.5, 4.0),
              tol=0.1)
        X, y = make_sinc(n=40, seed=0)
        _case("sinc n = 40, klasso MAE over t and lam", approxpath.get_problem("klasso")(X, y, lam=0.1),
              select_surface, criterion="mae", cv=3, shuffle=0, eps=0.1, relative=True, bandwidths=(0.5, 4.0),
              weights=(0.05, 0.5), tol=0.2)
        return
    svm = approxpath.get_problem("kernel_svm")
    for data in ("heart_scale",) + (() if args.quick else ("ionosphere_scale",)):
        X, y = load(data)
        _case(f"{data}, bandwidth (C = 1)", svm(X, y, c=1.0), cv=5, interval=(2.0**-10, 2.0**10), tol=0.01)
        _case(f"{data}, C in [0.001, 1] (t = 1)", svm(X, y, bandwidth=1.0, parameter="c"), cv=5,
              interval=(0.001, 1.0), tol=0.01)
        if not args.quick:
            _case(f"{data}, bandwidth (C = 0.1)", svm(X, y, c=0.1), cv=5, interval=(2.0**-10, 2.0**10), tol=0.01)
    X, y = make_sinc(n=100, noise=0.2, seed=0)
    _case("sinc n = 100, klasso bandwidth (lam = 0.1), MSE", approxpath.get_problem("klasso")(X, y, lam=0.1),
          criterion="mse", cv=5, shuffle=0, interval=(0.25, 16.0), tol=0.005)


if __name__ == "__main__":
    main()
