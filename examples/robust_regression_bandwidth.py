"""Sparse robust l1 kernel regression along the Gaussian bandwidth (Giesen, Laue, Wieschollek
2014, section 6.2 and Figure 4).

100 training points of sinc(x) = sin(pi x)/(pi x) on [-4, 4] with Gaussian noise (sd 0.1) and
10 % gross outliers; lambda = 0.1.  The certified eps-path of

    min_beta ||y - K_t beta||_1 + lambda ||beta||_1,     K_t = exp(-t ||x - x'||^2),

over t in [2^-3, 2^5] gives, for EVERY t, a fit whose objective is within eps of the optimum;
the test-set mean absolute error (200 fresh points, same noise, no outliers) is tracked along
it.  For comparison, the kernelized LASSO (squared loss) at the best bandwidth, with its own
lambda chosen on the test set along a certified lambda path: the outliers pull it away.

Writes a PNG (left: data and fits, right: MAE along the path) to ``--out``.

    python examples/robust_regression_bandwidth.py [--out FILE] [--eps 1.0] [--quick]

Needs matplotlib for its figure: pip install 'approxpath[plot]'.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.plotting import need_matplotlib, save_figure

LAM = 0.1
INTERVAL = (2.0**-3, 2.0**5)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="robust_regression_bandwidth.png", help="PNG file to write")
    parser.add_argument("--eps", type=float, default=1.0, help="admissible suboptimality (default 1)")
    parser.add_argument("--quick", action="store_true", help="a narrower bandwidth range, larger eps (seconds)")
    args = parser.parse_args(argv)
    need_matplotlib()  # (the figure needs the plot extra: said now, not after the run)
    interval, eps, lasso_eps = ((0.5, 2.0), 2.0, 1.0) if args.quick else (INTERVAL, args.eps, 0.1)

    X, y = make_sinc(n=100, low=-4.0, high=4.0, noise=0.1, outliers=0.1, seed=0)
    X_test, y_test = make_sinc(n=200, low=-4.0, high=4.0, noise=0.1, seed=1)
    clean = np.abs(y - np.sinc(X[:, 0])) < 0.5  # the outliers of make_sinc are at least 2 off

    t0 = time.perf_counter()
    robust = approxpath.get_problem("robust_l1")(X, y, lam=LAM)
    path = approxpath.approximate_path(robust, eps=eps, interval=interval)
    print(path.summary())

    ts = np.geomspace(*interval, 400)
    mae = np.array([np.mean(np.abs(robust.predict(path.primal(t), t, X_test) - y_test)) for t in ts])
    best = int(np.argmin(mae))
    t_best = float(ts[best])
    beta = path.primal(t_best).beta
    print(f"\nbest test MAE {mae[best]:.4f} at t = {t_best:.4g} "
          f"({np.count_nonzero(np.abs(beta) > 1e-6)} of {robust.n} coefficients nonzero)")
    print(f"test MAE at the ends of the range: t = {ts[0]:.3g}: {mae[0]:.4f}, t = {ts[-1]:.3g}: {mae[-1]:.4f}")

    # kernelized LASSO at the same bandwidth, lambda chosen on the test set along a certified path
    lasso = approxpath.get_problem("klasso")(X, y, bandwidth=t_best, parameter="lam")
    lo_lam, hi_lam = lasso.default_interval()
    # eps = 0.1 on an objective of ~30 (the outliers' squares): fits indistinguishable by eye
    lasso_path = approxpath.approximate_path(lasso, eps=lasso_eps, interval=(max(lo_lam, 1e-3), hi_lam))
    lams = np.geomspace(max(lo_lam, 1e-3), hi_lam, 200)
    lasso_mae = np.array([np.mean(np.abs(lasso.predict(lasso_path.primal(lam), lam, X_test) - y_test)) for lam in lams])
    lam_best = float(lams[int(np.argmin(lasso_mae))])
    print(f"kLASSO at t = {t_best:.4g}: best test MAE {lasso_mae.min():.4f} at lambda = {lam_best:.3g} "
          f"({lasso_path.exact_solves} exact solves, certified: {lasso_path.certified})")
    print(f"wall {time.perf_counter() - t0:.1f} s")

    from matplotlib.figure import Figure  # matplotlib's object API: no global backend or pyplot state

    fig = Figure(figsize=(12, 5.2))
    ax, ax2 = fig.subplots(1, 2)
    grid = np.linspace(-4, 4, 600)
    ax.plot(grid, np.sinc(grid), "k--", lw=1, label="sinc(x)")
    ax.plot(X[clean, 0], y[clean], ".", color="0.45", ms=5, label="training data")
    ax.plot(X[~clean, 0], y[~clean], "x", color="C3", ms=6, mew=1.5, label="outliers (10 %)")
    ax.plot(grid, robust.predict(path.primal(t_best), t_best, grid), color="C0", lw=2,
            label=f"robust l1 (t = {t_best:.3g}), MAE {mae[best]:.3f}")
    ax.plot(grid, lasso.predict(lasso_path.primal(lam_best), lam_best, grid), color="C1", lw=1.5,
            label=f"kLASSO (same t, best lambda), MAE {lasso_mae.min():.3f}")
    ax.set_ylim(min(-1.0, y.min() - 0.2), max(1.6, y.max() + 0.2))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"data and fits (lambda = {LAM:g} for robust l1)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)

    ax2.plot(ts, mae, color="C0", lw=1.5, label="test MAE along the certified path")
    ax2.plot(path.solve_points, np.full(path.exact_solves, 0.02), "|", color="k", ms=8,
             transform=ax2.get_xaxis_transform(), label=f"exact solves ({path.exact_solves})")
    ax2.axvline(t_best, color="C0", ls=":", lw=1, label=f"best t = {t_best:.3g}")
    ax2.set_ylim(mae.min() - 0.12 * (mae.max() - mae.min()), None)  # room for the rug of solves
    ax2.set_xscale("log")
    ax2.set_xlabel("bandwidth t of exp(-t ||x - x'||^2)")
    ax2.set_ylabel("mean absolute error (test)")
    kind = "all certified" if path.certified else "NOT fully certified"
    ax2.set_title(f"eps = {eps:g}: {len(path.pieces)} pieces, {kind}")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"figure written to {args.out}")
    return 0 if path.certified else 1


if __name__ == "__main__":
    raise SystemExit(main())
