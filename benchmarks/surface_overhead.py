"""A choice over both parameters on small folds, this tree against another, side by side in one run.

Each case runs ``--k`` times per tree in fresh processes, the trees interleaved (their order alternating),
and the table gives the median CPU and wall seconds, their ratio, and whether the choices agree to the
last bit (t, C, δ, the enclosure, the exact solves):

* ``estimator n=60``: ``KernelPathSVC(C=None, C_range=(0.5, 2), t_range=(0.5, 2), cv=3, cv_tol=0.1,
  random_state=0)`` on ``make_classification(n=60, separation=1.5, seed=1)``;
* ``select_surface n=120``: ``select_surface(kernel_svm, "error", cv=3)`` over t, C in [0.25, 4] on
  ``make_classification(120, d=2, seed=3)`` with ``max_solves=6000``, ``strict=False``.

    OPENBLAS_NUM_THREADS=1 python benchmarks/surface_overhead.py --base /path/to/other/tree [--k 2]

``--base`` is a source tree (its folder is put first on ``PYTHONPATH``; for the problems it needs
``approxpath/problems`` linked to ``problems``, as a clone does with ``ln -s ../problems
approxpath/problems``).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

_CASES = {
    "estimator n=60": """
from approxpath.data import make_classification
from approxpath.sklearn import KernelPathSVC
X, y = make_classification(60, separation=1.5, seed=1)[:2]
m = KernelPathSVC(C=None, C_range=(0.5, 2), t_range=(0.5, 2), cv=3, cv_tol=0.1, random_state=0)
s = run(lambda: m.fit(X, y)).selection_
""",
    "select_surface n=120": """
import warnings
from approxpath.data import make_classification
from approxpath.registry import get_problem
from approxpath.surface import select_surface
X, y = make_classification(120, d=2, seed=3)[:2]
P = get_problem("kernel_svm")(X, y, c=1.0, parameter="bandwidth")
warnings.simplefilter("ignore")
s = run(lambda: select_surface(P, "error", cv=3, bandwidths=(0.25, 4), weights=(0.25, 4), max_solves=6000,
                               strict=False))
""",
}
_PRELUDE = """
import json, time
def run(fn):
    global wall, cpu
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    return out
"""
_REPORT = """
print(json.dumps(dict(wall=wall, cpu=cpu, choice=[repr(s.t), repr(s.w), repr(s.delta), repr(tuple(s.value)),
                                                  s.exact_solves])))
"""


def _once(case, tree):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if tree is not None:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    code = _PRELUDE + _CASES[case] + _REPORT
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=tree or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the other source tree")
    ap.add_argument("--k", type=int, default=2)
    args = ap.parse_args()
    print("| case | base CPU s | this CPU s | CPU ratio | base wall s | this wall s | same choice |")
    print("|---|---|---|---|---|---|---|")
    for case in _CASES:
        runs = {"base": [], "this": []}
        for i in range(args.k):
            for name in (("base", "this") if i % 2 == 0 else ("this", "base")):
                runs[name].append(_once(case, args.base if name == "base" else None))
        med = {name: (statistics.median(r["cpu"] for r in rs), statistics.median(r["wall"] for r in rs))
               for name, rs in runs.items()}
        same = all(r["choice"] == runs["base"][0]["choice"] for rs in runs.values() for r in rs)
        print(f"| {case} | {med['base'][0]:.1f} | {med['this'][0]:.1f} | {med['this'][0] / med['base'][0]:.2f} | "
              f"{med['base'][1]:.1f} | {med['this'][1]:.1f} | {same} |")


if __name__ == "__main__":
    main()
