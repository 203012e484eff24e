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

BOX_C = 2.0 ** np.arange(-5, 16, 2)
BOX_GAMMA = 2.0 ** np.arange(3, -16, -2)


class _Limit(Exception):
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


def _grid(X, y, folds):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    search = GridSearchCV(SVC(kernel="rbf"), {"C": BOX_C, "gamma": BOX_GAMMA}, cv=folds, n_jobs=1).fit(X, y)
    return search.best_params_["C"], search.best_params_["gamma"], 1.0 - search.best_score_


def _approxpath(X, y, folds, limit):
    def stop(signum, frame):
        raise _Limit()

    signal.signal(signal.SIGALRM, stop)
    signal.alarm(limit)
    try:
        problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
        return approxpath.select_surface(problem, cv=folds, bandwidths=(BOX_GAMMA.min(), BOX_GAMMA.max()),
                                         weights=(BOX_C.min(), BOX_C.max()), tol=0.01, strict=False,
                                         max_solves=200_000)
    except _Limit:
        return None
    finally:
        signal.alarm(0)


def main():
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--limit", type=int, default=900, help="seconds allowed to approxpath per data set")
    args = parser.parse_args()
    print(f"# {machine()}; approxpath {approxpath.__version__}")
    for name in args.datasets:
        X, y = load(name)
        y = np.where(y > 0, 1.0, -1.0)
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
        (gc, gg, gerr), g_wall, g_cpu = _timed(lambda: _grid(X, y, folds))
        sel, a_wall, a_cpu = _timed(lambda: _approxpath(X, y, folds, args.limit))
        row = dict(data=name, n=len(y), grid_wall=round(g_wall, 1), grid_cpu=round(g_cpu, 1), grid_C=gc,
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
