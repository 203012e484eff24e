"""kLASSO bandwidth paths on sinc data, this checkout side by side with another source tree
(``--before DIR``: e.g. the release before the primal moved with the bandwidth), interleaved.

Every run is one ``approxpath path klasso ... --json`` process (its wall seconds from outside;
exact solves, pieces and certification seconds from its JSON), then ``approxpath verify`` of its
certificate from the same tree.  Prints one Markdown row per set-up and tree: the median of
``--rounds`` runs.

    python benchmarks/klasso_primal.py [--before DIR] [--rounds 2] [--n 100 1000] [--setups 0 1 2]

``DIR`` is a source tree: ``git archive <commit> | tar -x -C DIR``, then
``ln -s ../problems DIR/approxpath/problems`` (the layout the package installs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (lambda, eps, relative): the documented set-up (0.1, 0.05 absolute), a tight relative eps, and
# a small lambda, where the solution moves fastest with the bandwidth
SETUPS = [(0.1, 0.05, False), (0.1, 1e-3, True), (1e-3, 1e-3, True)]
RANGE = ("2^-3", "2^5")
CLI = "import sys; from approxpath.cli import main; sys.exit(main(sys.argv[1:]))"


def _run(args, source, cwd):
    """``(exit status, stdout, wall seconds)`` of the command line ``args`` from ``source``
    (a source tree, or None: this checkout's installation)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if source:
        env["PYTHONPATH"] = source
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CLI, *args], cwd=cwd, env=env, capture_output=True, text=True)
    return done.returncode, done.stdout, time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", help="a source tree to compare with")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--setups", type=int, nargs="+", default=list(range(len(SETUPS))), help="indices into SETUPS")
    args = p.parse_args()
    trees = [("this checkout", None)] + ([("before", str(Path(args.before).resolve()))] if args.before else [])
    work = Path(tempfile.mkdtemp(prefix="klasso_primal_"))
    print("| n | λ | ε | tree | exact solves | pieces | wall s | certification s | verify |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        data = work / f"sinc{n}.csv"
        _run(["data", "sinc", "--n", str(n), "--outliers", "0.1", "--seed", "0", "--out", str(data)], None, work)
        for lam, eps, relative in (SETUPS[i] for i in args.setups):
            runs = {label: [] for label, _ in trees}
            for r in range(args.rounds):
                for label, source in trees:
                    out = work / f"c{n}_{lam}_{eps}_{r}_{label[0]}.npz"
                    cmd = ["path", "klasso", "--data", str(data), "--lam", str(lam), "--eps", str(eps), "--range", *RANGE,
                           "--no-progress", "--json", "--out", str(out)] + (["--relative"] if relative else [])
                    status, stdout, wall = _run(cmd, source, work)
                    got = json.loads(stdout.strip().splitlines()[-1]) if status == 0 else {}
                    verified = _run(["verify", str(out), "--no-progress"], source, work)[0] == 0 if status == 0 else False
                    runs[label].append((wall, got, verified))
            for label, _ in trees:
                walls = [w for w, _, _ in runs[label]]
                got = runs[label][-1][1]
                ok = "OK" if all(v for _, _, v in runs[label]) else "FAILED"
                print(f"| {n} | {lam:g} | {eps:g}{' rel.' if relative else ''} | {label} | {got.get('exact_solves', '-')} | "
                      f"{got.get('pieces', '-')} | {statistics.median(walls):.1f} | {got.get('certify_s', float('nan')):.1f} | {ok} |",
                      flush=True)


if __name__ == "__main__":
    main()
