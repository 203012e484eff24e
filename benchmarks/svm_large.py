"""Kernel SVM past n = 16,000: time and peak memory of a certified path and of its verification.

Two-class data from :func:`approxpath.data.make_classification` (20 features, global min-max
scaling), C = 0.1, eps = 0.125, t in [2^-10, 2^10], the optimal bias.  Each path and each
``approxpath verify`` runs in its own process under ``/usr/bin/time -f %M`` (peak resident
memory), with its wall and CPU seconds (``cpu``: all threads; on a shared machine the wall time
depends on the load, the CPU time much less); ``--memory BYTES`` sets ``APPROXPATH_MEMORY`` for both (the budget that picks how
kernel products are computed: dense, from stored distances, or blocked) and ``--kernels MODE``
forces the mode (``APPROXPATH_KERNELS``).  ``--progress`` shows the path's progress bar
(stderr).

    python benchmarks/svm_large.py --n 4000 8000 16000 [--memory 8e9] [--kernels blocked] [--out results.jsonl]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

C, EPS, INTERVAL, D = 0.1, 0.125, (2.0**-10, 2.0**10), 20


def _child_path(n, cert, progress=False):
    import approxpath
    from approxpath.data import make_classification

    X, y = make_classification(n=n, d=D, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=C)
    t0, c0 = time.perf_counter(), time.process_time()
    path = approxpath.approximate_path(problem, eps=EPS, interval=INTERVAL, progress=progress)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    path.save(cert)
    mode = problem.kernels.mode
    print(json.dumps(dict(n=n, wall=round(wall, 2), cpu=round(cpu, 2), solve=round(path.solve_s, 2), certify=round(path.certify_s, 2),
                          solves=path.exact_solves, pieces=len(path.pieces), certified=bool(path.certified),
                          kernels=mode)))


def _child_verify(n, cert, progress=False):
    import approxpath

    t0, c0 = time.perf_counter(), time.process_time()
    report = approxpath.verify(cert)
    print(json.dumps(dict(verify_s=round(time.perf_counter() - t0, 2), verify_cpu=round(time.process_time() - c0, 2),
                          verify_ok=bool(report.ok),
                          verify_kernels=_verify_mode(n))))


def _verify_mode(n):
    from approxpath.memory import kernels_mode

    return kernels_mode(n, search=False)


def _timed(args, env):
    """Run this script with ``args`` under /usr/bin/time: (its JSON line, peak RSS in GiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, sys.executable, __file__, *args],
                             env=env, stdout=subprocess.PIPE, text=True)  # stderr: the progress bar, errors
        if out.returncode:
            raise SystemExit(f"{args[:2]} failed ({out.returncode})")
        peak_kb = float(tf.read().strip().splitlines()[-1])
    return json.loads(out.stdout.strip().splitlines()[-1]), round(peak_kb / 2**20, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[4000, 8000, 16000])
    parser.add_argument("--memory", help="APPROXPATH_MEMORY for the runs (bytes, e.g. 8e9)")
    parser.add_argument("--kernels", choices=("dense", "distances", "blocked"), help="APPROXPATH_KERNELS for the runs")
    parser.add_argument("--progress", action="store_true", help="show the path's progress bar")
    parser.add_argument("--out", help="append the result lines (JSON) to this file")
    parser.add_argument("--child", choices=("path", "verify"), help=argparse.SUPPRESS)
    parser.add_argument("--cert", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return (_child_path if args.child == "path" else _child_verify)(args.n[0], args.cert, args.progress)
    env = dict(os.environ)
    if args.memory:
        env["APPROXPATH_MEMORY"] = args.memory
    if args.kernels:
        env["APPROXPATH_KERNELS"] = args.kernels
    more = ["--progress"] if args.progress else []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            cert = str(Path(tmp) / f"svm{n}.npz")
            row, peak = _timed(["--child", "path", "--n", str(n), "--cert", cert, *more], env)
            row["peak_gib"] = peak
            vrow, vpeak = _timed(["--child", "verify", "--n", str(n), "--cert", cert], env)
            row.update(vrow, verify_peak_gib=vpeak, memory=args.memory, forced=args.kernels, load=os.getloadavg()[0])
            print(json.dumps(row), flush=True)
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
