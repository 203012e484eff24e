"""Certified choice of (C, gamma) over LIBSVM grid.py's box against the 110-point grid walk.

Side by side in one process, per data set: scikit-learn's ``GridSearchCV(SVC(kernel="rbf"))``
over grid.py's default box (log2 C in {-5, -3, ..., 15} x log2 gamma in {3, 1, ..., -15}, 5-fold
CV) and :func:`approxpath.select_surface` over the same box (gamma is approxpath's bandwidth t:
``exp(-t ||x - x'||^2)``) on the same folds, with ``tol=0.01``.  Reports wall and CPU seconds
and their ratio, the chosen (C, gamma), approxpath's delta, and the CV error of both chosen
points recomputed by SVC on the same folds.  approxpath's run is stopped after ``--limit``
seconds (reported as such, with no choice).

    APPROXPATH_LIBSVM_DIR=/path/to/libsvm python benchmarks/surface_vs_grid.py heart_scale ionosphere_scale a2a
"""

import argparse
import json
import signal
import time

import numpy as np

from _common import load, machine

import approxpath

# grid.py's defaults (log2 C from -5 to 15, log2 gamma from 3 to -15, steps of 2)
BOX_C = (-5, 15)
BOX_GAMMA = (-15, 3)


def _axis(ends):
    return 2.0 ** np.arange(ends[0], ends[1] + 1, 2)


class _Limit(BaseException):  # not caught by the library's handlers of solver errors
    pass


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _cv_error(X, y, folds, C, gamma):
    from sklearn.svm import SVC

    wrong = 0
    for tr, va in folds:
        model = SVC(kernel="rbf", C=C, gamma=gamma).fit(X[tr], y[tr])
        wrong += int(np.sum(model.predict(X[va]) != y[va]))
    return wrong / len(y)


def _grid(X, y, folds, box_c, box_gamma):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    search = GridSearchCV(SVC(kernel="rbf"), {"C": _axis(box_c), "gamma": _axis(box_gamma)}, cv=folds, n_jobs=1).fit(X, y)
    return search.best_params_["C"], search.best_params_["gamma"], 1.0 - search.best_score_


def _approxpath(X, y, folds, limit, box_c, box_gamma):
    def stop(signum, frame):
        raise _Limit()

    signal.signal(signal.SIGALRM, stop)
    signal.alarm(limit)
    try:
        problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
        return approxpath.select_surface(problem, cv=folds, bandwidths=(2.0 ** box_gamma[0], 2.0 ** box_gamma[1]),
                                         weights=(2.0 ** box_c[0], 2.0 ** box_c[1]), tol=0.01, strict=False,
                                         max_solves=200_000)
    except _Limit:
        return None
    finally:
        signal.alarm(0)


def main():
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--limit", type=int, default=900, help="seconds allowed to approxpath per data set")
    parser.add_argument("--log2c", nargs=2, type=int, default=BOX_C, help="a smaller box: log2 C from, to")
    parser.add_argument("--log2g", nargs=2, type=int, default=BOX_GAMMA, help="a smaller box: log2 gamma from, to")
    args = parser.parse_args()
    print(f"# {machine()}; approxpath {approxpath.__version__}")
    for name in args.datasets:
        X, y = load(name)
        y = np.where(y > 0, 1.0, -1.0)
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
        (gc, gg, gerr), g_wall, g_cpu = _timed(lambda: _grid(X, y, folds, args.log2c, args.log2g))
        sel, a_wall, a_cpu = _timed(lambda: _approxpath(X, y, folds, args.limit, args.log2c, args.log2g))
        row = dict(data=name, n=len(y), log2c=list(args.log2c), log2g=list(args.log2g), grid_wall=round(g_wall, 1), grid_cpu=round(g_cpu, 1), grid_C=gc,
                   grid_gamma=gg, grid_cv_error=round(gerr, 4), ap_wall=round(a_wall, 1), ap_cpu=round(a_cpu, 1),
                   wall_ratio=round(a_wall / g_wall, 2))
        if sel is None:
            row.update(ap="stopped at the limit, no choice")
        else:
            row.update(ap_C=sel.w, ap_gamma=sel.t, ap_delta=sel.delta, ap_value=list(sel.value),
                       ap_solves=sel.exact_solves, ap_cells=sel.cells,
                       ap_cv_error_svc=round(_cv_error(X, y, folds, sel.w, sel.t), 4))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
