"""Kernelized LASSO regularization paths on Wang's sinc set-up (Wang, Yeung, Lochovsky 2007,
section 5, Figures 4-5), certified.

100 points x uniform on [-3, 3], y = sinc(x) + Gaussian noise (sd 0.08), split at random into
50 training and 50 validation points.  For three bandwidths t = 0.1, 1, 10 of
K_t = exp(-t ||x - x'||^2) (Wang's sigma = 10, 1, 0.1 for exp(-||x - x'||^2 / sigma)) the
certified eps-path of

    min_{beta, beta0} 1/2 ||y - K_t beta - beta0||^2 + lambda ||beta||_1

over lambda in [1e-4, lambda_max(t)] gives, for EVERY lambda, a fit within eps of the optimum;
the validation MSE and the number of landmarks (nonzero beta) are tracked along each path.

Writes a PNG (best fit per bandwidth, validation MSE vs lambda, landmarks vs lambda) to ``--out``.

    python examples/klasso_sinc.py [--out FILE] [--eps 1e-3] [--quick]

Needs matplotlib for its figure: pip install 'approxpath[plot]'.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.plotting import need_matplotlib, save_figure

BANDWIDTHS = (0.1, 1.0, 10.0)
LAM_MIN = 1e-4  # Wang et al. stop the lambda path at 1e-4


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="klasso_sinc.png", help="PNG file to write")
    parser.add_argument("--eps", type=float, default=1e-3, help="admissible suboptimality (default 1e-3)")
    parser.add_argument("--quick", action="store_true", help="eps = 0.02 and lambda >= 0.003 (seconds)")
    args = parser.parse_args(argv)
    need_matplotlib()  # (the figure needs the plot extra: said now, not after the run)
    eps, lam_min = (2e-2, 3e-3) if args.quick else (args.eps, LAM_MIN)

    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=0)
    order = np.random.default_rng(1).permutation(100)
    train, val = order[:50], order[50:]
    KLasso = approxpath.get_problem("klasso")

    t0 = time.perf_counter()
    results = []
    for t in BANDWIDTHS:
        problem = KLasso(X[train], y[train], bandwidth=t, parameter="lam")
        interval = (lam_min, problem.lam_max())
        path = approxpath.approximate_path(problem, eps=eps, interval=interval)
        lams = np.geomspace(*interval, 300)
        points = [path.primal(lam) for lam in lams]
        mse = np.array([np.mean((problem.predict(p, lam, X[val]) - y[val]) ** 2) for p, lam in zip(points, lams)])
        landmarks = np.array([np.count_nonzero(p.beta) for p in points])
        k = int(np.argmin(mse))
        print(f"t = {t:5g}: {path.exact_solves:4d} exact solves, {len(path.pieces):5d} pieces, "
              f"{'certified' if path.certified else 'NOT certified'}, {path.wall_s:5.1f} s; best validation MSE "
              f"{mse[k]:.5f} at lambda = {lams[k]:.3g} with {landmarks[k]} landmarks")
        results.append((t, problem, path, lams, mse, landmarks, k))
    print(f"wall {time.perf_counter() - t0:.1f} s")

    from matplotlib.figure import Figure  # matplotlib's object API: no global backend or pyplot state

    fig = Figure(figsize=(15, 4.6))
    ax, ax2, ax3 = fig.subplots(1, 3)
    grid = np.linspace(-3, 3, 600)
    ax.plot(grid, np.sinc(grid), "k--", lw=1, label="sinc(x)")
    ax.plot(X[train, 0], y[train], ".", color="0.3", ms=6, label="training (50)")
    ax.plot(X[val, 0], y[val], "o", mfc="none", color="0.6", ms=4, label="validation (50)")
    for c, (t, problem, path, lams, mse, landmarks, k) in enumerate(results):
        ax.plot(grid, problem.predict(path.primal(lams[k]), lams[k], grid), color=f"C{c}", lw=1.6,
                label=f"t = {t:g}: lambda = {lams[k]:.2g}, MSE {mse[k]:.4f}")
        ax2.plot(lams, mse, color=f"C{c}", lw=1.4, label=f"t = {t:g} ({path.exact_solves} exact solves)")
        ax2.plot(lams[k], mse[k], "o", color=f"C{c}", ms=5)
        ax3.step(lams, landmarks, where="mid", color=f"C{c}", lw=1.4, label=f"t = {t:g}")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("best fit on the validation set per bandwidth")
    ax.legend(loc="lower center", ncol=2, fontsize=7.5, frameon=False)
    ax.set_ylim(-1.0, 1.25)
    for a in (ax2, ax3):
        a.set_xscale("log")
        a.set_xlabel("lambda")
    ax2.set_yscale("log")
    ax2.set_ylabel("validation MSE")
    ax2.set_title(f"certified lambda paths, eps = {eps:g}")
    ax2.legend(loc="upper left", fontsize=8)
    ax3.set_ylabel("landmarks (nonzero beta)")
    ax3.set_title("nonzero beta of the paths' (eps-optimal) points")
    ax3.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"figure written to {args.out}")
    return 0 if all(r[2].certified for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
