"""What checkpoints cost (opt-in): a path without a checkpoint, with the throttled checkpoint
(what ``approxpath path --out`` does), and with a checkpoint rewritten after every exact solve
and segment (0.3.2's policy), run alternately in one process so the machine's noise hits all
three alike; the certificate is written once at the end in every variant.

    python benchmarks/checkpoint_cost.py [--n 100] [--eps 0.01] [--repeats 5]

Prints the median wall and CPU time of each variant and their ratios to the run without a
checkpoint (CPU time is less noisy on a shared machine; wall time includes waiting for the disk).
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import approxpath
from approxpath.data import make_sinc
from approxpath.driver import checkpoint as ck


def _run(X, y, eps, folder, mode):
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    file = None if mode == "none" else Path(folder) / "run.partial.npz"
    saved = ck.EVERY, ck._COST_SHARE, ck._COMPRESS
    if mode == "every step":  # 0.3.2: a full rewrite (compressed, synced) after every step
        ck.EVERY, ck._COST_SHARE, ck._COMPRESS = 0.0, 0, True
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        path = approxpath.approximate_path(problem, eps=eps, interval=(2.0**-3, 2.0**5), checkpoint=file)
        path.save(Path(folder) / "k.npz")
        return time.perf_counter() - t0, time.process_time() - c0, path
    finally:
        ck.EVERY, ck._COST_SHARE, ck._COMPRESS = saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="samples of sinc (default 100)")
    parser.add_argument("--eps", type=float, default=0.01, help="absolute eps (default 0.01)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each variant (default 5)")
    args = parser.parse_args()
    X, y = make_sinc(n=args.n, seed=0)
    modes = ("none", "throttled", "every step")
    wall, cpu = {m: [] for m in modes}, {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as folder:
        _run(X, y, args.eps, folder, "none")  # warm-up: imports, caches
        for _ in range(args.repeats):
            for mode in modes:
                w, c, path = _run(X, y, args.eps, folder, mode)
                wall[mode].append(w)
                cpu[mode].append(c)
    base_w, base_c = statistics.median(wall["none"]), statistics.median(cpu["none"])
    print(f"klasso, sinc n = {args.n}, lam = 0.1, eps = {args.eps:g}, t in [2^-3, 2^5]: "
          f"{path.exact_solves} exact solves, {len(path.pieces)} pieces; median of {args.repeats} runs")
    print(f"{'checkpoint':12s} {'wall s':>8s} {'ratio':>6s} {'cpu s':>8s} {'ratio':>6s}")
    for mode in modes:
        w, c = statistics.median(wall[mode]), statistics.median(cpu[mode])
        print(f"{mode:12s} {w:8.2f} {w / base_w:6.2f} {c:8.2f} {c / base_c:6.2f}")


if __name__ == "__main__":
    main()
