"""Kernel SVM past n = 16,000: time and peak memory of a certified path and of its verification.

Two-class data from :func:`approxpath.data.make_classification` (20 features, global min-max
scaling), C = 0.1, eps = 0.125, t in [2^-10, 2^10], the optimal bias.  Each path and each
``approxpath verify`` runs in its own process under ``/usr/bin/time -f %M`` (peak resident
memory), with its wall and CPU seconds (``cpu``: all threads; on a shared machine the wall time
depends on the load, the CPU time much less); ``--memory BYTES`` sets ``APPROXPATH_MEMORY`` for both (the budget that picks how
kernel products are computed: dense, from stored distances, or blocked) and ``--kernels MODE``
forces the mode (``APPROXPATH_KERNELS``).  ``--progress`` shows the path's progress bar
(stderr).

``--dask-workers K``: for each n, the path with its kernel products split across a
``LocalCluster`` of K worker processes (``split_products=True``) side by side with the
single-process blocked mode (or ``--kernels MODE``), ``--rounds`` times each, alternating; the
split path's certificate is verified, and both paths' pieces are compared bit for bit.  The
split rows add the workers' CPU seconds and peak memory, and what went over the wire: kernel
products (passes over D) per piece, bytes to the workers and running-sum hops per pass.

    python benchmarks/svm_large.py --n 4000 8000 16000 [--memory 8e9] [--kernels blocked] [--out results.jsonl]
    python benchmarks/svm_large.py --n 4000 8000 --dual-restoration moving fixed    # pairs side by side
    python benchmarks/svm_large.py --n 4000 --dask-workers 2 [--rounds 2]

``--one-product`` (with ``--dask-workers K``): one kernel product (p = 4 columns, order 2; all
rows, and 1000 sorted rows as a support-vector subset) in the blocked mode and split, five times
each, alternating, with this process's and the workers' CPU seconds; and the latency of a chain
of as many trivial tasks alternating between the workers as a product has hops.

    python benchmarks/svm_large.py --n 4000 --dask-workers 2 --one-product
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


def _child_path(n, cert, progress=False, dask_workers=0, dual_restoration="moving"):
    import hashlib
    import resource

    import approxpath
    from approxpath.data import make_classification
    from approxpath.moving_layout import fingerprint

    X, y = make_classification(n=n, d=D, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=C, dual_restoration=dual_restoration)
    traffic = _count_products()
    cluster = client = None
    options = {}
    if dask_workers:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=dask_workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(cluster)
        options = dict(executor=client, split_products=True)
        worker_cpu0 = sum(client.run(time.process_time).values())
    t0, c0 = time.perf_counter(), time.process_time()
    path = approxpath.approximate_path(problem, eps=EPS, interval=INTERVAL, progress=progress, **options)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    path.save(cert)
    pieces = hashlib.sha256(repr([(p.lo, p.hi, p.gap_bound, p.kind) for p in path.pieces]).encode()
                            + b"".join(fingerprint(p.dual) for p in path.pieces)).hexdigest()[:16]
    row = dict(n=n, wall=round(wall, 2), cpu=round(cpu, 2), solve=round(path.solve_s, 2),
               certify=round(path.certify_s, 2), solves=path.exact_solves, pieces=len(path.pieces),
               certified=bool(path.certified), dual_restoration=dual_restoration, kernels="split" if dask_workers else problem.kernels.mode,
               pieces_sha=pieces, passes=traffic["passes"],
               passes_per_piece=round(traffic["passes"] / len(path.pieces), 1),
               own_peak_gib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2))
    if dask_workers:
        passes = max(traffic["passes"], 1)
        worker_cpu = sum(client.run(time.process_time).values()) - worker_cpu0
        row.update(workers=dask_workers, workers_cpu=round(worker_cpu, 2),
                   worker_peaks_gib=[round(v / 2**20, 2) for v in client.run(_peak_kib).values()],
                   mb_out_per_pass=round(traffic["out"] / passes / 1e6, 3),
                   hops_per_pass=round(traffic["hops"] / passes, 1),
                   mb_sums_per_pass=round(traffic["sums"] / passes / 1e6, 3))
        client.close()
        cluster.close()
    print(json.dumps(row))


def _peak_kib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _count_products():
    """Count the kernel products (passes over D) of the providers and, for the split one, what
    goes over the wire: coefficients and row indices to the workers (8 k (p + 1) bytes), and the
    running sum (8 (order + 1) p n bytes) per task hop, the last hop to this process."""
    import numpy as np

    from approxpath.compute.distributed import SplitKernels
    from approxpath.compute.kernels import Kernels, product_step

    traffic = dict(passes=0, out=0, hops=0, sums=0)

    def counted(cls):
        plain = cls.__dict__["products"]

        def products(self, x, C, rows=None, order=2):
            traffic["passes"] += 1
            if isinstance(self, SplitKernels):
                C2 = np.asarray(C)
                k, p = C2.shape[0], 1 if C2.ndim == 1 else C2.shape[1]
                starts = np.arange(0, k, product_step(self.n))
                chunks = (starts if rows is None else np.asarray(rows)[starts]) // self.chunk
                hops = int(np.count_nonzero(np.diff(chunks))) + 1 if k else 0
                traffic["out"] += 8 * k * (p + (rows is not None))
                traffic["hops"] += hops
                traffic["sums"] += hops * 8 * (order + 1) * p * self.n
            return plain(self, x, C, rows, order)

        cls.products = products

    for cls in (Kernels, SplitKernels):  # the blocked mode's is Kernels.products
        counted(cls)
    return traffic


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[4000, 8000, 16000])
    parser.add_argument("--memory", help="APPROXPATH_MEMORY for the runs (bytes, e.g. 8e9)")
    parser.add_argument("--kernels", choices=("dense", "distances", "blocked"), help="APPROXPATH_KERNELS for the runs")
    parser.add_argument("--progress", action="store_true", help="show the path's progress bar")
    parser.add_argument("--dual-restoration", nargs="+", choices=("moving", "fixed"), default=["moving"],
                        help="the SVM's pairs on a piece (several: each n with each, side by side)")
    parser.add_argument("--out", help="append the result lines (JSON) to this file")
    parser.add_argument("--dask-workers", type=int, default=0,
                        help="split the kernel products across a LocalCluster of this many workers, side by side with "
                             "the single-process blocked mode (or --kernels)")
    parser.add_argument("--rounds", type=int, default=1, help="with --dask-workers: runs of each, alternating")
    parser.add_argument("--one-product", action="store_true", help="with --dask-workers: time single products")
    parser.add_argument("--child", choices=("path", "verify"), help=argparse.SUPPRESS)
    parser.add_argument("--cert", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "path":
        return _child_path(args.n[0], args.cert, args.progress, args.dask_workers, args.dual_restoration[0])
    if args.child:
        return _child_verify(args.n[0], args.cert, args.progress)
    env = dict(os.environ)
    if args.memory:
        env["APPROXPATH_MEMORY"] = args.memory
    more = ["--progress"] if args.progress else []
    if args.dask_workers and args.one_product:
        return [_one_product(n, args.dask_workers, args.out) for n in args.n]
    if args.dask_workers:
        return _side_by_side(args, env, more)
    if args.kernels:
        env["APPROXPATH_KERNELS"] = args.kernels
    with tempfile.TemporaryDirectory() as tmp:
        for n, pairs in ((n, pairs) for n in args.n for pairs in args.dual_restoration):
            cert = str(Path(tmp) / f"svm{n}.npz")
            row, peak = _timed(["--child", "path", "--n", str(n), "--cert", cert, "--dual-restoration", pairs, *more], env)
            row["peak_gib"] = peak
            vrow, vpeak = _timed(["--child", "verify", "--n", str(n), "--cert", cert], env)
            row.update(vrow, verify_peak_gib=vpeak, memory=args.memory, forced=args.kernels, load=os.getloadavg()[0])
            _emit(row, args.out)


def _side_by_side(args, env, more):
    """The split path against the single-process mode, alternating, with the ratios."""
    import statistics

    single = dict(env, APPROXPATH_KERNELS=args.kernels or "blocked")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            runs = {"single": [], "split": []}
            for r in range(args.rounds):
                for which in ("single", "split") if r % 2 == 0 else ("split", "single"):
                    cert = str(Path(tmp) / f"svm{n}-{which}.npz")
                    extra = ["--dask-workers", str(args.dask_workers)] if which == "split" else []
                    load0 = os.getloadavg()[0]
                    row, peak = _timed(["--child", "path", "--n", str(n), "--cert", cert, *extra, *more],
                                       env if which == "split" else single)
                    row.update(run=which, round=r, peak_gib=peak, load=[load0, os.getloadavg()[0]])
                    runs[which].append(row)
                    _emit(row, args.out)
            split_cert = str(Path(tmp) / f"svm{n}-split.npz")
            vrow, vpeak = _timed(["--child", "verify", "--n", str(n), "--cert", split_cert], env)
            a, b = runs["single"], runs["split"]
            ratio = statistics.median(x["wall"] for x in b) / statistics.median(x["wall"] for x in a)
            cpu = statistics.median(x["cpu"] + x["workers_cpu"] for x in b) / statistics.median(x["cpu"] for x in a)
            certify = statistics.median(x["certify"] for x in b) / statistics.median(x["certify"] for x in a)
            _emit(dict(n=n, split_over_single_wall=round(ratio, 3), split_over_single_cpu=round(cpu, 3),
                       split_over_single_certify=round(certify, 3),
                       same_pieces=len({x["pieces_sha"] for x in a + b}) == 1, split_verify=vrow,
                       split_verify_peak_gib=vpeak), args.out)


def _one_product(n, workers, out):
    """Single products, blocked and split, alternating; and the latency of a chain of hops."""
    import numpy as np
    from dask.distributed import Client, LocalCluster

    from approxpath.compute.blocked import BlockedKernels
    from approxpath.data import make_classification
    from approxpath.compute.distributed import SplitKernels

    X, _ = make_classification(n=n, d=D, seed=0)
    rng = np.random.default_rng(0)
    C, some = rng.random((n, 4)), np.sort(rng.choice(n, min(n, 1000), replace=False))
    row = dict(n=n, workers=workers, load=os.getloadavg()[0])
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        blocked, split = BlockedKernels(X), SplitKernels(X, "gaussian", None, client)
        for name, kernels in (("blocked", blocked), ("split", split)) * 2:
            for label, args in (("all rows", (C, None)), ("1000 rows", (C[:some.size], some))):
                w0, t0, c0 = sum(client.run(time.process_time).values()), time.perf_counter(), time.process_time()
                for _ in range(5):
                    kernels.products(0.7, *args)
                times = dict(wall=(time.perf_counter() - t0) / 5, cpu=(time.process_time() - c0) / 5)
                if name == "split":
                    times["workers_cpu"] = (sum(client.run(time.process_time).values()) - w0) / 5
                row.setdefault(f"{name}, {label}", []).append({k: round(v, 3) for k, v in times.items()})
        hops = -(-n // split.chunk)
        t0 = time.perf_counter()
        for _ in range(20):
            total = None
            for c in range(hops):
                total = client.submit(_step, total, workers=[split.workers[c % workers]], pure=False)
            total.result()
        row[f"chain of {hops} trivial hops"] = round((time.perf_counter() - t0) / 20, 3)
    _emit(row, out)


def _step(total):
    return 0 if total is None else total + 1


def _emit(row, out):
    print(json.dumps(row), flush=True)
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
