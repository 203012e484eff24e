"""This version against the previous release (and the paper's binary, where installed), side by
side in one run: each figure is measured k times per version, the versions interleaved (their
order alternating between repeats), and the table shows the medians and their ratio.

    python benchmarks/compare_release.py --base /path/to/0.4.1/venv/bin/python [--base-label 0.4.1] [--k 3] [--only NAME ...]

The figures:

* ``cli ionosphere``, ``cli heart``, ..., ``cli a4a``: the whole command-line process of the quick
  start on each of the 7 LIBSVM sets,
  ``approxpath path kernel_svm --data SET --c 0.1 --range 2^-10 2^10 --eps 0.125 --no-progress``
  (``--json``: its exact solves and pieces are compared too);
* ``cli klasso sinc``, ``... --out``: the same for klasso on sinc data (n = 100, 10 % outliers,
  lambda = 0.1, eps = 0.01, t in [2^-3, 2^5]) without and with ``--out``; ``--out overhead`` is
  their ratio per version;
* ``a1a dynamic``, ``a1a optimal``: a kernel_svm path on a1a (eps = 0.125) with ``bias="dynamic"``
  and with the default bias, and ``a4a`` with the default bias (wall seconds of the path in a
  process that has run a warm-up path first);
* ``klasso n``, ``robust_l1 n`` for n = 100, 400: sinc with 10 % outliers, eps = 0.05,
  lambda = 0.1, t in [2^-3, 2^5] (path wall seconds, exact solves);
* ``klasso lam 100``, ``robust_l1 lam 100``, ``kernel_ridge lam 100``: paths over lambda in
  [1e-3, 1] at bandwidth 1 on the same sinc data (eps 0.01, 0.1, 0.01); ``kernel_ridge 400`` over
  the bandwidth (eps = 0.05, lambda = 0.1); ``ionosphere c``: kernel_svm over C in [0.05, 10] at
  bandwidth 1 (eps = 0.5);
* ``solves SET``: exact solves and pieces on the 7 LIBSVM sets at eps = 0.125 with the default
  strategy, from ``benchmarks/solves.py`` run by each version's interpreter.

Every run is a fresh process of the version's interpreter with a scratch folder as working
directory (so that one version's imports never see the other's source tree): this script's
interpreter is "main", ``--base`` (or ``APPROXPATH_BASE_PYTHON``) the previous release's; a
version that is not given or not found is skipped with a note.  ``--paper`` (or
``APPROXPATH_PAPER_COMMAND``) is the command line of the paper's reference binary with ``{data}``
for the data file, timed on the two ``cli`` data sets; without it the column is skipped.  The
LIBSVM sets are read from ``APPROXPATH_LIBSVM_DIR``.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import C, DATASETS, INTERVAL, LIBSVM_DIR, machine

HERE = Path(__file__).resolve().parent
SINC = dict(noise=0.1, outliers=0.1, seed=0)  # the regression benchmarks' sinc set-up
REGRESSION_INTERVAL = (2.0**-3, 2.0**5)

# One path in a fresh process: argv[1] is a JSON spec; prints {"wall", "solves", "pieces"}.
_PATH_RUN = """
import json, sys, time
sys.path.insert(0, {here!r})
import approxpath
from approxpath.data import make_sinc
from _common import load, warm_up
spec = json.loads(sys.argv[1])
X, y = make_sinc(n=spec["n"], **spec["sinc"]) if spec["data"] == "sinc" else load(spec["data"])
warm_up(spec["problem"], **spec["options"])
problem = approxpath.get_problem(spec["problem"])(X, y, **spec["options"])
t0 = time.perf_counter()
path = approxpath.approximate_path(problem, eps=spec["eps"], interval=tuple(spec["interval"]))
print(json.dumps(dict(wall=time.perf_counter() - t0, solves=path.exact_solves, pieces=len(path.pieces))))
"""


def _cli(*args):
    return ["-m", "approxpath.cli", *args]


def figures(scratch):
    """``{name: (kind, how)}``: kind "process" (whole-process seconds of a command line), "path"
    (a spec for _PATH_RUN) or "solves" (a data set for solves.py)."""
    sinc = scratch / "sinc.csv"
    out = {}
    for name in DATASETS:
        out[f"cli {name.split('_')[0]}"] = ("process", _cli(
            "path", "kernel_svm", "--data", str(LIBSVM_DIR / name), "--c", "0.1", "--range", "2^-10", "2^10",
            "--eps", "0.125", "--no-progress", "--json"))
    klasso = _cli("path", "klasso", "--data", str(sinc), "--format", "csv", "--lam", "0.1", "--eps", "0.01",
                  "--range", "2^-3", "2^5", "--no-progress")
    out["cli klasso sinc"] = ("process", klasso)
    out["cli klasso sinc --out"] = ("process", [*klasso, "--out", str(scratch / "klasso.npz")])
    svm = dict(problem="kernel_svm", eps=0.125, interval=INTERVAL)
    out["a1a dynamic"] = ("path", dict(svm, data="a1a", options=dict(c=C, bias="dynamic")))
    out["a1a optimal"] = ("path", dict(svm, data="a1a", options=dict(c=C)))
    out["a4a"] = ("path", dict(svm, data="a4a", options=dict(c=C)))
    for problem in ("klasso", "robust_l1"):
        for n in (100, 400):
            out[f"{problem} {n}"] = ("path", dict(problem=problem, data="sinc", n=n, sinc=SINC, eps=0.05,
                                                  interval=REGRESSION_INTERVAL, options=dict(lam=0.1)))
    weights = (("klasso lam", "klasso", (1e-3, 1.0), 0.01), ("robust_l1 lam", "robust_l1", (1e-3, 1.0), 0.1),
               ("kernel_ridge lam", "kernel_ridge", (1e-3, 1.0), 0.01))
    for name, problem, interval, eps in weights:  # paths over the weight at bandwidth 1
        out[f"{name} 100"] = ("path", dict(problem=problem, data="sinc", n=100, sinc=SINC, eps=eps, interval=interval,
                                           options=dict(bandwidth=1.0, parameter="lam")))
    out["kernel_ridge 400"] = ("path", dict(problem="kernel_ridge", data="sinc", n=400, sinc=SINC, eps=0.05,
                                            interval=REGRESSION_INTERVAL, options=dict(lam=0.1)))
    out["ionosphere c"] = ("path", dict(problem="kernel_svm", data="ionosphere_scale", eps=0.5, interval=(0.05, 10.0),
                                        options=dict(bandwidth=1.0, parameter="c")))
    for name in DATASETS:
        out[f"solves {name}"] = ("solves", name)
    return out


def run(python, kind, how, scratch):
    """One measurement: ``{"wall": s, ...}``, or ``{"error": text}``."""
    if kind == "process":
        argv = [python, *how] if python != "paper" else how
    elif kind == "path":
        argv = [python, "-c", _PATH_RUN.format(here=str(HERE)), json.dumps(how)]
    else:
        argv = [python, str(HERE / "solves.py"), "--data", how, "--eps", "0.125", "--strategies", "interpolate"]
    env = dict(os.environ, APPROXPATH_LIBSVM_DIR=str(LIBSVM_DIR))
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=scratch, env=env)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1]}
    if kind == "process":
        last = done.stdout.strip().splitlines()[-1:] if "--json" in how else []
        counts = json.loads(last[0]) if last else {}
        return dict({"wall": wall}, **({"solves": counts["exact_solves"], "pieces": counts["pieces"]} if counts else {}))
    if kind == "path":
        return json.loads(done.stdout.strip().splitlines()[-1])
    # solves.py's row: | data | n | eps | strategy | exact solves | ref | ratio | pieces | certified | share | wall s |
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {how} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    return {"solves": int(cells[4]), "pieces": int(cells[7]), "wall": float(cells[10])}


def _data_file(kind, how):
    """The LIBSVM file a figure reads, or None."""
    if kind == "solves":
        return LIBSVM_DIR / how
    if kind == "path":
        return None if how["data"] == "sinc" else LIBSVM_DIR / how["data"]
    return next((Path(a) for a in how if a.startswith(str(LIBSVM_DIR))), None)


def _median(results, key):
    values = [r[key] for r in results if key in r]
    return statistics.median(values) if values else None


def _cell(results):
    if any("error" in r for r in results):
        return "failed: " + next(r["error"] for r in results if "error" in r)[:60]
    wall = _median(results, "wall")
    if "solves" in results[0]:
        return f"{wall:.2f} s, {results[0]['solves']} solves, {results[0]['pieces']} pieces"
    return f"{wall:.2f} s"


def _ratio(a, b, key="wall"):
    x, y = _median(a, key), _median(b, key)
    return f"{x / y:.2f}" if x is not None and y else "–"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=os.environ.get("APPROXPATH_BASE_PYTHON"),
                    help="the previous release's Python (its venv's bin/python); env APPROXPATH_BASE_PYTHON")
    ap.add_argument("--base-label", default="0.4.1", help="the previous release's column heading (default 0.4.1)")
    ap.add_argument("--paper", default=os.environ.get("APPROXPATH_PAPER_COMMAND"),
                    help="the paper's binary as a command line with {data}; env APPROXPATH_PAPER_COMMAND")
    ap.add_argument("--k", type=int, default=3, help="repeats per figure and version (medians; default 3)")
    ap.add_argument("--only", nargs="+", default=None, help="figure names (or prefixes) to run")
    args = ap.parse_args(argv)

    versions = {"main": sys.executable}
    base = args.base and Path(args.base)
    if base and base.is_file():
        versions[args.base_label] = str(base)
    else:
        print(f"note: the previous release's Python {'was not given' if not base else f'{base} not found'} "
              "(--base or APPROXPATH_BASE_PYTHON): its column is skipped")
    if not args.paper:
        print("note: the paper's binary is not installed (--paper or APPROXPATH_PAPER_COMMAND): its column is skipped")
    print(f"machine: {machine()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; k = {args.k}\n")

    scratch = Path(tempfile.mkdtemp(prefix="approxpath-compare-"))
    from approxpath.data import make_sinc

    import numpy as np

    X, y = make_sinc(n=100, **SINC)
    np.savetxt(scratch / "sinc.csv", np.column_stack([X, y]), delimiter=",")

    names = list(versions) + (["paper"] if args.paper else [])
    head = ["figure", *names, *(f"main / {v}" for v in names[1:])]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    results = {}
    for fig, (kind, how) in figures(scratch).items():
        if args.only and not any(fig == o or fig.startswith(o) for o in args.only):
            continue
        needs = _data_file(kind, how)
        if needs is not None and not needs.is_file():
            print(f"| {fig} | skipped: {needs.name} not in APPROXPATH_LIBSVM_DIR |")
            continue
        runs = {v: [] for v in names}
        repeats = 1 if kind == "solves" else args.k  # counts are deterministic; one wall time
        for r in range(repeats):
            order = names if r % 2 == 0 else names[::-1]
            for v in order:
                if v == "paper":
                    if not fig.startswith("cli ") or "klasso" in fig:
                        continue
                    runs[v].append(run("paper", kind, shlex.split(args.paper.format(data=needs)), scratch))
                else:
                    runs[v].append(run(versions[v], kind, how, scratch))
        results[fig] = runs
        cells = [_cell(runs[v]) if runs[v] else "–" for v in names]
        ratios = [_ratio(runs["main"], runs[v]) if runs[v] else "–" for v in names[1:]]
        if kind == "solves" and len(names) > 1 and runs[names[1]] and "solves" in runs[names[1]][0]:
            ratios[0] = (f"solves {_ratio(runs['main'], runs[names[1]], 'solves')}, "
                         f"pieces {_ratio(runs['main'], runs[names[1]], 'pieces')}")
        if kind == "process" and len(names) > 1 and runs[names[1]] and "solves" in runs["main"][0]:
            a, b = runs["main"][0], runs[names[1]][0]
            same = (a.get("solves"), a.get("pieces")) == (b.get("solves"), b.get("pieces"))
            ratios[0] += " (same solves and pieces)" if same else " (solves or pieces differ)"
        print("| " + " | ".join([fig, *cells, *ratios]) + " |", flush=True)
    if "cli klasso sinc" in results and "cli klasso sinc --out" in results:
        over = {v: _ratio(results["cli klasso sinc --out"][v], results["cli klasso sinc"][v]) for v in versions}
        print("\n--out overhead (whole process with / without): " + ", ".join(f"{v} {r}" for v, r in over.items()))
    print(f"\nload average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
