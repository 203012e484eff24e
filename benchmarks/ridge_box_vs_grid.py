"""Kernel ridge's certified choice of (bandwidth, λ) by a closed-form criterion against exact grids,
side by side in one run.

    python benchmarks/ridge_box_vs_grid.py [--n 1000] [--criteria loocv gcv lml] [--tol 0.01 0.01 1]
        [--k 1] [--timeout 1800] [--before DIR] [--fixed-t T]

Sinc (noise 0.2, seed 1), t over [2^-3, 2^5], λ over [1e-3, 1].  Every method is a whole fresh
process (imports included), one BLAS thread, the methods of a criterion one after the other and
the repetitions interleaved (the machine is shared: read the ratios):

* ``cholesky``: the exact criterion on 30 t x 10 λ, log-spaced (a Cholesky factor and its inverse
  each, scipy) -- nothing is known between the points;
* ``eigen``: the same 300 points from one eigendecomposition of K_t per t (every λ of a t then
  costs O(n^2));
* ``approxpath``: ``approxpath select kernel_ridge --over lam,bandwidth --weights 1e-3 1
  --criterion C --tol TOL`` (the choice is certified within delta of the whole box);
* ``approxpath, before``: the same from the source tree ``--before DIR`` (another version, e.g.
  ``git archive <commit> | tar -x -C DIR && ln -s ../problems DIR/approxpath/problems``).

``--fixed-t T``: λ alone at the bandwidth T (30 λ; ``approxpath select kernel_ridge --parameter lam
--bandwidth T --range 1e-3 1``; the check: 2,000 λ from one eigendecomposition).  The criterion
``cv-mse`` is the pooled 5-fold mean squared error (scikit-learn's ``KFold(5)``, the command
line's ``--cv 5 --criterion mse``), over the box or λ alone: the grids factorize (or decompose)
each fold's kernel.

Each row: wall and CPU seconds (the child's user + system time), peak resident memory, the
chosen (t, λ), delta, and the exact criterion at the choice, computed here afterwards, and the
best value of a 60 x 60 exact grid (eigendecompositions) as a check of the claim.
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

from _common import machine

T_RANGE = (2.0**-3, 2.0**5)
W_RANGE = (1e-3, 1.0)


def _sinc(n):
    from approxpath.data import make_sinc

    return make_sinc(n=n, noise=0.2, seed=1)


def _kernel(X, t):
    return np.exp(-t * (X - X.T) ** 2)


def _cholesky(X, y, t, lam, criterion):
    """The criterion at (t, lam) from a Cholesky factor (and its inverse for LOOCV and GCV)."""
    import scipy.linalg

    n = len(y)
    L = scipy.linalg.cho_factor(_kernel(X, t) + lam * np.eye(n), lower=True)
    c = scipy.linalg.cho_solve(L, y)
    if criterion == "lml":
        return float(-0.5 * y @ c - np.sum(np.log(np.diag(L[0]))) - 0.5 * n * np.log(2 * np.pi))
    inv, _ = scipy.linalg.lapack.dpotri(L[0], lower=1)
    d = np.diag(inv)
    if criterion == "loocv":
        return float(np.mean((c / d) ** 2))
    return float(n * np.sum((lam * c) ** 2) / (lam * np.sum(d)) ** 2)


def _eigen(X, y, t, lams, criterion):
    """The criterion at (t, lam) for every lam of ``lams`` from one eigendecomposition of K_t."""
    n = len(y)
    mu, V = np.linalg.eigh(_kernel(X, t))
    mu = np.maximum(mu, 0.0)
    Vy, V2 = V.T @ y, V * V
    out = []
    for lam in lams:
        s = 1.0 / (mu + lam)
        c = V @ (s * Vy)
        if criterion == "lml":
            out.append(float(-0.5 * Vy @ (s * Vy) - 0.5 * np.sum(np.log(mu + lam)) - 0.5 * n * np.log(2 * np.pi)))
        elif criterion == "loocv":
            out.append(float(np.mean((c / (V2 @ s)) ** 2)))
        else:
            out.append(float(n * np.sum((lam * c) ** 2) / (lam * np.sum(s)) ** 2))
    return out


def _folds_mse(X, y, t, lams, method):
    """The pooled 5-fold MSE at ``t`` for every λ of ``lams`` (a Cholesky factor per fold and λ,
    or one eigendecomposition per fold)."""
    import scipy.linalg
    from sklearn.model_selection import KFold

    out = np.zeros(len(lams))
    for train, test in KFold(5).split(X):
        K, K_new = _kernel(X[train], t), np.exp(-t * (X[test] - X[train].T) ** 2)  # (sinc: one feature)
        if method == "eigen":
            mu, V = np.linalg.eigh(K)
            Vy, KV = V.T @ y[train], K_new @ V
        for j, lam in enumerate(lams):
            if method == "eigen":
                pred = KV @ (Vy / (np.maximum(mu, 0.0) + lam))
            else:
                pred = K_new @ scipy.linalg.cho_solve(scipy.linalg.cho_factor(K + lam * np.eye(len(train))), y[train])
            out[j] += np.sum((y[test] - pred) ** 2)
    return out / len(y)


def _child(spec):
    from threadpoolctl import threadpool_limits

    X, y = _sinc(spec["n"])
    crit = spec["criterion"]
    fixed = spec.get("t")
    ts, ws = (np.array([fixed]), np.geomspace(*W_RANGE, 30)) if fixed else (np.geomspace(*T_RANGE, 30),
                                                                             np.geomspace(*W_RANGE, 10))
    with threadpool_limits(1, user_api="blas"):
        if crit == "cv-mse" and spec["method"] != "approxpath":
            values = np.array([_folds_mse(X, y, t, ws, spec["method"]) for t in ts]).T
        elif spec["method"] == "cholesky":
            values = np.array([[_cholesky(X, y, t, w, crit) for t in ts] for w in ws])
        elif spec["method"] == "eigen":
            values = np.array([_eigen(X, y, t, ws, crit) for t in ts]).T
        else:
            from contextlib import redirect_stdout
            from io import StringIO

            from approxpath.cli import main

            out = StringIO()
            over = (["--parameter", "lam", "--bandwidth", str(fixed), "--range", *map(str, W_RANGE)] if fixed else
                    ["--over", "lam,bandwidth", "--weights", *map(str, W_RANGE), "--range", *map(str, T_RANGE)])
            with redirect_stdout(out):
                crit = ["--criterion", "mse", "--cv", "5"] if crit == "cv-mse" else ["--criterion", crit]
                main(["select", "kernel_ridge", "--data", spec["csv"], "--format", "csv", *crit, *over,
                      "--tol", str(spec["tol"]), "--max-solves", "20000", "--json"])
            got = json.loads(out.getvalue().strip().splitlines()[-1])
            t, w = (fixed, got["t"]) if fixed else (got["t"], got["w"])
            return dict(t=t, w=w, delta=got["delta"], solves=got["exact_solves"], cells=got.get("cells", "-"))
    j, i = np.unravel_index(int(np.argmax(values) if crit == "lml" else np.argmin(values)), values.shape)
    return dict(t=float(ts[i]), w=float(ws[j]), delta=None)


def _run(spec, timeout):
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=timeout,
                              env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                                       **({"PYTHONPATH": spec["source"]} if spec.get("source") else {})))
    except subprocess.TimeoutExpired:
        return dict(stopped=True, wall=time.perf_counter() - start, cpu=float("nan"), peak_mb=float("nan"))
    if done.returncode != 0:
        raise SystemExit(f"{spec}: exit {done.returncode}\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - start
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--criteria", nargs="+", default=["loocv", "gcv", "lml"])
    p.add_argument("--tol", nargs="+", type=float, default=[0.01, 0.01, 1.0], help="one per criterion")
    p.add_argument("--k", type=int, default=1, help="interleaved repetitions (medians)")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--before", help="also approxpath from this source tree (another version), interleaved")
    p.add_argument("--fixed-t", type=float, help="choose lambda alone at this bandwidth")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        import resource

        out = _child(json.loads(args.child))
        use = resource.getrusage(resource.RUSAGE_SELF)
        out.update(cpu=use.ru_utime + use.ru_stime, peak_mb=use.ru_maxrss / 1024)
        print(json.dumps(out))
        return
    print(f"# {time.strftime('%Y-%m-%d')}, {machine()}, load average {os.getloadavg()[0]:.1f} at the start; n = {args.n}"
          + (f"; lambda alone at t = {args.fixed_t}" if args.fixed_t else ""))
    print("| criterion | method | wall s | CPU s | wall / Cholesky grid | wall / eigen grid | peak MB | t | lambda | delta | "
          f"criterion at the choice | best of {'2,000 lambda' if args.fixed_t else '60 x 60'} | exact solves | cells |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    X, y = _sinc(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "sinc.csv"
        np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
        for crit, tol in zip(args.criteria, args.tol):
            methods = ("cholesky", "eigen") + (("approxpath, before",) if args.before else ()) + ("approxpath",)
            runs = {m: [] for m in methods}
            for _ in range(args.k):
                for m in methods:
                    spec = dict(method=m.split(",")[0], n=args.n, criterion=crit, csv=str(csv), tol=tol,
                                t=args.fixed_t)
                    if m.endswith("before"):
                        spec["source"] = str(Path(args.before).resolve())
                    runs[m].append(_run(spec, args.timeout))
            if crit == "cv-mse":
                dense = np.array([_folds_mse(X, y, t, np.geomspace(*W_RANGE, 2000 if args.fixed_t else 60), "eigen")
                                  for t in ([args.fixed_t] if args.fixed_t else np.geomspace(*T_RANGE, 60))])
            elif args.fixed_t:
                dense = np.array([_eigen(X, y, args.fixed_t, np.geomspace(*W_RANGE, 2000), crit)])
            else:
                dense = np.array([_eigen(X, y, t, np.geomspace(*W_RANGE, 60), crit) for t in np.geomspace(*T_RANGE, 60)])
            best = dense.max() if crit == "lml" else dense.min()

            def med(m, key):
                return float(np.median([r[key] for r in runs[m]]))

            for m in methods:
                last = runs[m][-1]
                if last.get("stopped"):
                    print(f"| {crit} | {m} | > {med(m, 'wall'):.1f} (stopped) | | | | | | | | | | | |", flush=True)
                    continue
                at = _folds_mse(X, y, last["t"], [last["w"]], "cholesky")[0] if crit == "cv-mse" else \
                    _cholesky(X, y, last["t"], last["w"], crit)
                delta = "none" if last["delta"] is None else f"{last['delta']:.4g}"
                print(f"| {crit} | {m} | {med(m, 'wall'):.1f} | {med(m, 'cpu'):.1f} | "
                      f"{med(m, 'wall') / med('cholesky', 'wall'):.2f} | {med(m, 'wall') / med('eigen', 'wall'):.2f} | "
                      f"{med(m, 'peak_mb'):.0f} | {last['t']:.4g} | {last['w']:.4g} | {delta} | {at:.6g} | {best:.6g} | "
                      f"{last.get('solves', '-')} | {last.get('cells', '-')} |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
