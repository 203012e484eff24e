"""Whole bandwidth paths of ``klasso`` and ``robust_l1`` on the sinc set-up (10 % outliers,
lambda = 0.1, t in [2^-3, 2^5], eps = 0.05 absolute, the default interpolating strategy), this
checkout side by side with 0.3.2 (n <= --base-max-n; above, 0.3.2 takes minutes to hours) and,
for robust_l1, with the previous default restoration (``--dual-restoration projection``).

Every run is one ``approxpath path ... --json`` process (wall and CPU seconds of the whole
process and its peak resident memory, from ``os.wait4``; the solve and certification seconds
are the path's own), interleaved per n so that the machine's load hits all alike; the
certificate of every run of this checkout is then re-checked by ``approxpath verify`` (timed
too).  Prints one table row per run and, per n, the wall and CPU ratios to the base version
(0.3.2 by default; ``--base`` and ``--base-label`` name another installation's script).

    python benchmarks/regression_speed.py [--n 100 400 1000 4000] [--problem klasso robust_l1]
        [--base /work/base032/.venv/bin/approxpath] [--base-label 0.3.2] [--base-max-n 400]
        [--timeout 1800] [--no-projection] [--workdir DIR]

Needs no data files (``approxpath data sinc`` writes them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAM, EPS, INTERVAL, OUTLIERS = 0.1, 0.05, (0.125, 32.0), 0.1


def _run(cmd, cwd, timeout):
    """``(stdout, seconds, CPU seconds, peak RSS in bytes, finished)`` of ``cmd`` (killed past
    ``timeout``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            return "", time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, False
        time.sleep(0.2)
    out = proc.stdout.read()
    proc.stdout.close()
    proc.stderr.close()
    return (out, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024,
            os.waitstatus_to_exitcode(status) == 0)


def _path(cli, problem, data, cert, workdir, timeout, extra=()):
    cmd = [cli, "path", problem, "--data", str(data), "--format", "csv", "--parameter", "bandwidth",
           "--lam", str(LAM), "--range", str(INTERVAL[0]), str(INTERVAL[1]), "--eps", str(EPS),
           "--no-progress", "--json", "--out", str(cert), *extra]
    out, seconds, cpu, rss, ok = _run(cmd, workdir, timeout)
    row = dict(seconds=seconds, cpu_s=cpu, rss_mb=rss / 2**20, finished=ok)
    if ok:
        line = [x for x in out.splitlines() if x.startswith("{")][-1]
        row.update(json.loads(line))
    return row


def _verify(cli, cert, data, workdir, timeout):
    """``("OK" or "FAILED", wall seconds, CPU seconds)`` of ``approxpath verify``."""
    out, seconds, cpu, _, ok = _run([cli, "verify", str(cert), "--data", str(data), "--format", "csv"], workdir, timeout)
    return ("OK" if ok and out.startswith("OK") else "FAILED"), seconds, cpu


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 400, 1000, 4000])
    ap.add_argument("--problem", nargs="+", default=["klasso", "robust_l1"])
    ap.add_argument("--base", default="/work/base032/.venv/bin/approxpath", help="the base version's approxpath script")
    ap.add_argument("--base-label", default="0.3.2", help="the base version's name in the table")
    ap.add_argument("--base-max-n", type=int, default=400)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    ap.add_argument("--no-projection", action="store_true", help="skip robust_l1 with the previous default")
    ap.add_argument("--workdir", default=None, help="where data and certificates go (default: a temporary one)")
    args = ap.parse_args(argv)
    cli = str(Path(sys.executable).parent / "approxpath")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="regression_speed_"))
    workdir.mkdir(parents=True, exist_ok=True)
    base = args.base if args.base and Path(args.base).exists() else None
    if args.base and base is None:
        print(f"(no base version: {args.base} does not exist; pass --base to compare)", flush=True)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"workdir {workdir}", flush=True)
    print("| problem | n | version | exact solves | pieces | wall s | CPU s | solves s | certification s "
          "| peak RSS MB | certified | verify | verify wall / CPU s |", flush=True)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for n in args.n:
        data = workdir / f"sinc{n}.csv"
        subprocess.run([cli, "data", "sinc", "--n", str(n), "--outliers", str(OUTLIERS), "--out", str(data)],
                       check=True, capture_output=True)
        for problem in args.problem:
            runs = [("this", cli, ())]
            if problem == "robust_l1" and not args.no_projection:
                runs.append(("this, projection", cli, ("--dual-restoration", "projection")))
            if base is not None and n <= args.base_max_n:
                runs.append((args.base_label, base, ()))
            walls = {}
            for label, exe, extra in runs:
                cert = workdir / f"{problem}-{n}-{label.replace(' ', '_')}.npz"
                for stale in (cert, Path(str(cert) + ".partial.npz")):
                    stale.unlink(missing_ok=True)
                row = _path(exe, problem, data.resolve(), cert.resolve(), "/tmp" if exe == base else workdir,
                            args.timeout, extra)
                verified, v_wall, v_cpu = "-", "-", "-"
                if row["finished"] and exe == cli:
                    verified, v_wall, v_cpu = _verify(cli, cert, data, workdir, args.timeout)
                    v_wall, v_cpu = f"{v_wall:.1f}", f"{v_cpu:.1f}"
                if not row["finished"]:
                    print(f"| {problem} | {n} | {label} | - | - | > {args.timeout:.0f} (stopped) | {row['cpu_s']:.1f} | - "
                          f"| - | {row['rss_mb']:.0f} | - | - | - |", flush=True)
                    continue
                walls[label] = (row["seconds"], row["cpu_s"])
                print(f"| {problem} | {n} | {label} | {row['exact_solves']} | {row['pieces']} | {row['seconds']:.1f} | "
                      f"{row['cpu_s']:.1f} | {row['solve_s']:.1f} | {row['certify_s']:.1f} | {row['rss_mb']:.0f} | "
                      f"{'yes' if row['certified'] else 'no'} | {verified} | {v_wall} / {v_cpu} |", flush=True)
            if args.base_label in walls and "this" in walls:
                (bw, bc), (tw, tc) = walls[args.base_label], walls["this"]
                print(f"|  |  | ratio {args.base_label} / this | | | {bw / tw:.1f}x | {bc / tc:.1f}x | | | | | | |",
                      flush=True)
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
