"""Certified selection against the grid searches users run instead, side by side in one run.

    APPROXPATH_LIBSVM_DIR=/path/to/libsvm python benchmarks/selection_vs_grid.py \
        [--data ionosphere_scale a2a a4a] [--ridge-n 200 1000] [--k 1] [--only svm ridge] [--box] [--grid-points 30 100] [--timeout 900]
        [--criteria loocv gcv lml] [--before DIR]

Every method runs as a whole fresh process (imports included), the methods of a case one after
the other and the repetitions interleaved (the machine is shared: read the ratios).  Each row:
wall and CPU seconds (the child's own user + system time), peak resident memory, the chosen
parameter, the certified delta, and the criterion at the choice computed here afterwards.

* SVM (C = 0.1, gamma = t over [2^-10, 2^10], global min-max scaling), 5-fold stratified CV on
  the folds ``check_cv(5)`` gives: scikit-learn's ``GridSearchCV(SVC(kernel="rbf", C=0.1))`` over
  30 and 100 gammas log-spaced over the interval, ``approxpath select kernel_svm --cv 5`` (the
  command line) and ``KernelPathSVC(C=0.1, cv=5, cv_tol=0.01, t_range=...)``; the CV error of
  each choice is the pooled error of libSVM (``SVC(tol=1e-8)``) on the same folds.
* Kernel ridge (sinc, noise 0.2, lambda = 0.1, t over [2^-3, 2^5]): LOOCV, GCV and the log
  marginal likelihood, ``approxpath select kernel_ridge --criterion ...`` against the exact
  criterion on 30 t log-spaced over the interval (a Cholesky factor each, numpy/scipy).
* ``--before DIR``: ``approxpath select`` also from the source tree ``DIR`` (another version:
  ``git archive <commit> | tar -x -C DIR``, then ``ln -s ../problems DIR/approxpath/problems``,
  the layout the package installs), interleaved with the others.
* ``--box``: LIBSVM's tools/grid.py box (log2 C in -5..15 step 2, log2 gamma in 3..-15 step -2)
  through GridSearchCV on the same folds (:func:`box_rows`; the certified 2-D selection over
  that box is ``benchmarks/surface_vs_grid.py``'s).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import C, INTERVAL, LIBSVM_DIR, N_FEATURES, load, machine

RIDGE_INTERVAL = (2.0**-3, 2.0**5)
RIDGE_LAM = 0.1
CRITERIA = ("loocv", "gcv", "lml")
# LIBSVM's tools/grid.py default box: log2 C from -5 to 15 step 2, log2 gamma from 3 to -15 step -2
GRID_PY_LOG2C = tuple(range(-5, 16, 2))
GRID_PY_LOG2GAMMA = tuple(range(3, -16, -2))


# ------------------------------------------------------------------ children (one method each)
def _svm_data(name):
    X, y = load(name)  # (one line, not a traceback, when the folder is missing)
    return X, np.where(y == np.max(y), 1.0, -1.0)


def _folds(X, y):
    from sklearn.model_selection import check_cv

    return list(check_cv(5, y, classifier=True).split(X, y))


def _child(spec):
    """Run one method; its result as a dict (printed by the child)."""
    kind = spec["method"]
    if kind.startswith("grid"):
        from sklearn.model_selection import GridSearchCV
        from sklearn.svm import SVC

        X, y = _svm_data(spec["data"])
        grid = {"gamma": np.geomspace(*INTERVAL, spec["points"])}
        if "box" in spec:
            grid = {"C": 2.0 ** np.array(GRID_PY_LOG2C), "gamma": 2.0 ** np.array(GRID_PY_LOG2GAMMA)}
        search = GridSearchCV(SVC(kernel="rbf", C=C), grid, cv=_folds(X, y)).fit(X, y)
        best = search.best_params_
        return dict(t=float(best["gamma"]), C=float(best.get("C", C)), delta=None, value=None,
                    own=1.0 - float(search.best_score_))
    if kind == "select":
        from contextlib import redirect_stdout
        from io import StringIO

        from approxpath.cli import main

        out = StringIO()
        with redirect_stdout(out):
            rc = main(["select", "kernel_svm", "--data", str(LIBSVM_DIR / spec["data"]), "--preprocess",
                       "global-minmax", "--c", str(C), "--cv", "5", "--range", "2^-10", "2^10", "--json"]
                      + (["--n-features", str(N_FEATURES[spec["data"]])] if spec["data"] in N_FEATURES else []))
        got = json.loads(out.getvalue().strip().splitlines()[-1])
        return dict(t=got["t"], delta=got["delta"], value=got["value"], solves=got["exact_solves"], rc=rc,
                    cells=got["cells"])
    if kind == "estimator":
        from approxpath.sklearn import KernelPathSVC

        X, y = _svm_data(spec["data"])
        s = KernelPathSVC(C=C, cv=5, cv_tol=0.01, t_range=INTERVAL).fit(X, y).selection_
        return dict(t=s.t, delta=s.delta, value=list(s.value), solves=s.exact_solves, cells=int(s.lo.size))
    if kind == "ridge-grid":
        from threadpoolctl import threadpool_limits

        X, y = _sinc(spec["n"])
        ts = np.geomspace(*RIDGE_INTERVAL, 30)
        with threadpool_limits(1, user_api="blas"):  # its fastest here: BLAS threads on 2 busy cores spin
            values = np.array([_ridge_criterion(X, y, t, spec["criterion"]) for t in ts])
        i = int(np.argmax(values) if spec["criterion"] == "lml" else np.argmin(values))
        return dict(t=float(ts[i]), delta=None, value=None, own=float(values[i]))
    if kind == "ridge-select":
        from contextlib import redirect_stdout
        from io import StringIO

        from approxpath.cli import main

        out = StringIO()
        with redirect_stdout(out):
            rc = main(["select", "kernel_ridge", "--data", spec["csv"], "--format", "csv", "--lam", str(RIDGE_LAM),
                       "--criterion", spec["criterion"], "--range", "2^-3", "2^5", "--tol", "0.01", "--json"])
        got = json.loads(out.getvalue().strip().splitlines()[-1])
        return dict(t=got["t"], delta=got["delta"], value=got["value"], solves=got["exact_solves"], rc=rc)
    raise SystemExit(f"unknown method {kind!r}")


def _sinc(n):
    from approxpath.data import make_sinc

    return make_sinc(n=n, noise=0.2, seed=1)


def _ridge_criterion(X, y, t, criterion, lam=RIDGE_LAM):
    """LOOCV, GCV or the log marginal likelihood of kernel ridge at t, exactly (Cholesky)."""
    import scipy.linalg

    n = len(y)
    A = np.exp(-t * (X - X.T) ** 2) + lam * np.eye(n)
    L = scipy.linalg.cho_factor(A, lower=True)
    c = scipy.linalg.cho_solve(L, y)
    if criterion == "lml":
        return float(-0.5 * y @ c - np.sum(np.log(np.diag(L[0]))) - 0.5 * n * np.log(2 * np.pi))
    inv, _ = scipy.linalg.lapack.dpotri(L[0], lower=1)
    inv = np.tril(inv) + np.tril(inv, -1).T
    if criterion == "loocv":
        return float(np.mean((c / np.diag(inv)) ** 2))
    return float(n * np.sum((lam * c) ** 2) / (lam * np.trace(inv)) ** 2)


# ------------------------------------------------------------------ the parent
def _run(spec, timeout):
    """One method in a fresh process: its result with wall seconds (``stopped`` with the wall
    time only, when it ran past ``timeout`` seconds and was killed).  ``spec["source"]``: the
    source tree to import approxpath from instead of the installed one."""
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=spec["source"]) if spec.get("source") else None
    try:
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True,
                              text=True, cwd=Path(__file__).parent, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(stopped=True, wall=time.perf_counter() - start, cpu=float("nan"), peak_mb=float("nan"),
                    t=float("nan"), delta=None, value=None)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{spec}: exit {done.returncode}\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def _pooled_error(X, y, folds, t, c=C):
    """The pooled 5-fold error of libSVM's optima at gamma = t (tol 1e-8)."""
    from sklearn.svm import SVC

    wrong = 0
    for tr, va in folds:
        f = SVC(C=c, gamma=t, tol=1e-8).fit(X[tr], y[tr]).decision_function(X[va])
        wrong += int(np.sum(np.where(f > 0, 1.0, -1.0) != y[va]))
    return wrong / len(y)


def _median(runs, key):
    return float(np.median([r[key] for r in runs]))


def _wall(runs):
    """The median wall seconds, as "> s (stopped)" when a run was killed at the timeout."""
    text = f"{_median(runs, 'wall'):.1f}"
    return f"> {text} (stopped)" if any(r.get("stopped") for r in runs) else text


def _timing(runs, base):
    """The columns every row shares: median wall and CPU seconds, their ratios to the runs
    ``base``'s, and the last run's delta."""
    delta = runs[-1]["delta"]
    return (f"{_wall(runs)} | {_median(runs, 'cpu'):.1f} | {_median(runs, 'wall') / _median(base, 'wall'):.2f} | "
            f"{_median(runs, 'cpu') / _median(base, 'cpu'):.2f}", "none" if delta is None else f"{delta:.4g}")


def svm_rows(names, k, timeout, points=(30, 100), before=None):
    methods = [(f"GridSearchCV, {q} gamma", dict(method="grid", points=q)) for q in points]
    if before:
        methods.append(("approxpath select --cv 5, before", dict(method="select", source=str(Path(before).resolve()))))
    methods += [("approxpath select --cv 5", dict(method="select")),
                ("KernelPathSVC(cv=5)", dict(method="estimator"))]
    print(f"| data | method | wall s | CPU s | wall / grid {points[0]} | CPU / grid {points[0]} | peak MB | gamma | delta | "
          "CV error at gamma (libSVM) | exact solves | cells |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        runs = {label: [] for label, _ in methods}
        for _ in range(k):  # interleaved repetitions
            for label, spec in methods:
                runs[label].append(_run(dict(spec, data=name), timeout))
        X, y = _svm_data(name)
        folds = _folds(X, y)
        for label, _ in methods:
            r, last = runs[label], runs[label][-1]
            timing, delta = _timing(r, runs[methods[0][0]])
            error = "-" if last.get("stopped") else f"{_pooled_error(X, y, folds, last['t']):.4f}"
            print(f"| {name} | {label} | {timing} | {_median(r, 'peak_mb'):.0f} | {last['t']:.4g} | {delta} | {error} | "
                  f"{last.get('solves', '-')} | {last.get('cells', '-')} |", flush=True)


def box_rows(names, k, timeout):
    """The grid.py box: GridSearchCV over its 110 (C, gamma) on the same folds (the certified
    2-D selection over it: ``benchmarks/surface_vs_grid.py``)."""
    print("| data | method | wall s | CPU s | C | gamma | CV error (own) |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        runs = [_run(dict(method="grid", points=0, box=True, data=name), timeout) for _ in range(k)]
        last = runs[-1]
        print(f"| {name} | GridSearchCV, grid.py box (110 points) | {_median(runs, 'wall'):.1f} | "
              f"{_median(runs, 'cpu'):.1f} | {last['C']:g} | {last['t']:.4g} | {last['own']:.4f} |", flush=True)


def ridge_rows(sizes, k, timeout, criteria=CRITERIA, before=None):
    print("| n | criterion | method | wall s | CPU s | wall / grid | CPU / grid | t | delta | criterion at t (exact) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            X, y = _sinc(n)
            csv = Path(tmp) / f"sinc{n}.csv"
            np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
            for criterion in criteria:
                grid, sel, old = [], [], []
                for _ in range(k):
                    grid.append(_run(dict(method="ridge-grid", n=n, criterion=criterion), timeout))
                    if before:
                        old.append(_run(dict(method="ridge-select", csv=str(csv), criterion=criterion,
                                             source=str(Path(before).resolve())), timeout))
                    sel.append(_run(dict(method="ridge-select", csv=str(csv), criterion=criterion), timeout))
                rows = [("exact grid, 30 t", grid)] + ([("approxpath select, before", old)] if before else [])
                for label, r in rows + [("approxpath select", sel)]:
                    timing, delta = _timing(r, grid)
                    at = "-" if r[-1].get("stopped") else f"{_ridge_criterion(X, y, r[-1]['t'], criterion):.6g}"
                    print(f"| {n} | {criterion} | {label} | {timing} | {r[-1]['t']:.4g} | {delta} | {at} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", nargs="+", default=["ionosphere_scale", "a2a", "a4a"])
    p.add_argument("--ridge-n", nargs="+", type=int, default=[200, 1000])
    p.add_argument("--k", type=int, default=1, help="interleaved repetitions (medians)")
    p.add_argument("--only", nargs="+", choices=("svm", "ridge"), default=("svm", "ridge"))
    p.add_argument("--criteria", nargs="+", choices=CRITERIA, default=CRITERIA, help="kernel ridge's criteria")
    p.add_argument("--box", action="store_true", help="also the grid.py (C, gamma) box through GridSearchCV")
    p.add_argument("--grid-points", nargs="+", type=int, default=[30, 100],
                   help="GridSearchCV's gammas (the first is the ratios' base)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds after which a method is stopped")
    p.add_argument("--before", help="also `select` from this source tree (another version), interleaved")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        import resource

        spec = json.loads(args.child)
        out = _child(spec)
        use = resource.getrusage(resource.RUSAGE_SELF)
        out.update(cpu=use.ru_utime + use.ru_stime, peak_mb=use.ru_maxrss / 1024)
        print(json.dumps(out))
        return
    print(f"# {time.strftime('%Y-%m-%d')}, {machine()}, load average {os.getloadavg()[0]:.1f} at the start")
    if "svm" in args.only:
        svm_rows(args.data, args.k, args.timeout, args.grid_points, args.before)
        if args.box:
            box_rows(args.data, args.k, args.timeout)
    if "ridge" in args.only:
        ridge_rows(args.ridge_n, args.k, args.timeout, args.criteria, args.before)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
