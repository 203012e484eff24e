"""Exact (Wang et al.) vs approximate (Giesen et al.) kLASSO bandwidth paths: cost, agreement,
and what the condition number of K_t does to the exact path.

    min_{beta, beta0} 1/2 ||y - K_t beta - beta0||^2 + lambda ||beta||_1,  K_t = exp(-t ||x - x'||^2)

(Wang's sigma = 1/t).  Three parts, one figure:

1. Wang's sinc set-up (50 of 100 points on [-3, 3], noise sd 0.08, lambda = 0.1, sigma from 10
   to 0.1): the exact kernel path (theta = 0.95, eps = 1e-6) and the certified approximate path
   (eps = 1e-2): linear solves vs exact solves, wall time, and the largest objective difference
   at 200 random sigma.  Every exact point is certified by the same duality gap.
2. Giesen et al.'s Figure 1: cond(K_t) of 100 points drawn uniformly from [0, 1]^10, over t.
3. On those 100 points (targets sin(2 pi x_1) + x_2^2 + noise): the exact kernel path from
   t = 1 down to t = 1e-3 for lambda = 1e-2 and 1e-3, the condition number of each of its
   KKT systems and the certified gap of each of its points, beside the approximate path's
   certified bound (lambda = 1e-3, relative eps = 1e-2) on [1e-3, 0.1], where the exact path
   for that lambda meets KKT condition numbers ~1e11 (it reaches t = 1e-3 with every point
   certified; had it stopped at an active set it could not resolve, the figure would mark where).

Writes a PNG to ``--out`` and prints the numbers.

    python examples/exact_vs_approximate.py [--out FILE] [--quick]

Needs matplotlib for its figure: pip install 'approxpath[plot]'.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import approxpath
from approxpath.data import make_sinc
from approxpath.exact import certify, kernel_path
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import gaussian
from approxpath.numerics import UNIT_ROUNDOFF
from approxpath.plotting import need_matplotlib

KLasso = approxpath.get_problem("klasso")


def wang_sinc():
    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=0)
    train = np.random.default_rng(0).permutation(100)[:50]
    return X[train], y[train]


def part_sinc(eps, n_sigma=200):
    """Exact vs approximate on Wang's set-up (lambda = 0.1, sigma from 10 to 0.1)."""
    X, y = wang_sinc()
    lam, interval = 0.1, (0.1, 10.0)
    exact = kernel_path(X, y, lam, interval, theta=0.95, eps=1e-6)
    report = certify(exact, tol=1e-6, relative=True)
    problem = KLasso(X, y, lam=lam, parameter="bandwidth")
    approx = approxpath.approximate_path(problem, eps=eps, interval=interval)
    sigmas = np.sort(np.exp(np.random.default_rng(2).uniform(np.log(0.1), np.log(10.0), n_sigma)))
    diff = []
    for s in sigmas:
        p = exact(1.0 / s)
        diff.append(problem.primal_objective(approx.primal(1.0 / s), 1.0 / s)
                    - problem.primal_objective(problem.Primal(p.beta, p.beta0), 1.0 / s))
    return dict(exact=exact, report=report, approx=approx, sigmas=sigmas, diff=np.array(diff), eps=eps)


def ten_d_points(n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, 10))
    y = np.sin(2 * np.pi * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(n)
    return X, y


def part_conditioning(n, lams, t_lo, approx_hi, eps_rel):
    """cond(K_t) (Giesen's Figure 1), the exact paths' KKT conditioning and certified gaps, and
    the approximate path's certified bounds on [t_lo, approx_hi]."""
    X, y = ten_d_points(n)
    D = sq_distances(X)
    ts = np.geomspace(1e-3, 1e2, 60)
    cond_K = np.array([np.linalg.cond(gaussian(D, t)) for t in ts])
    exact = {}
    for lam in lams:
        path = kernel_path(X, y, lam, (t_lo, 1.0), start=1.0)
        report = certify(path, tol=1e-6, relative=True)
        exact[lam] = (path, report)
    approx = approxpath.approximate_path(KLasso(X, y, lam=lams[-1], parameter="bandwidth"), eps=eps_rel,
                                         interval=(t_lo, approx_hi), relative=True)
    return dict(ts=ts, cond_K=cond_K, exact=exact, approx=approx, eps=eps_rel, approx_lam=lams[-1], n=n)


def plot(sinc, cond, out):
    from matplotlib.figure import Figure

    from approxpath.plotting import save_figure

    fig = Figure(figsize=(12, 8.5))  # matplotlib's object API: no global backend or pyplot state
    axes = fig.subplots(2, 2)
    ax = axes[0, 0]
    ax.semilogx(sinc["sigmas"], sinc["diff"], ".", ms=4, label="approximate - exact objective")
    ax.axhline(sinc["eps"], color="k", ls="--", lw=1, label=f"eps = {sinc['eps']:g}")
    ax.axhline(0.0, color="0.6", lw=0.8)
    e, a = sinc["exact"], sinc["approx"]
    ax.set_title(f"Wang's sinc, lambda = 0.1: exact {e.linear_solves} linear solves ({e.wall_s:.2f} s), "
                 f"approximate {a.exact_solves} exact solves ({a.wall_s:.1f} s)", fontsize=9)
    ax.set_xlabel("sigma = 1/t")
    ax.set_ylabel("objective difference")
    ax.legend(fontsize=8)

    ax = axes[0, 1]
    ax.loglog(cond["ts"], cond["cond_K"], "o-", ms=3, label=f"cond(K_t), {cond['n']} points in [0,1]^10")
    ax.axhline(1 / UNIT_ROUNDOFF, color="r", ls=":", lw=1, label="1/u (double precision)")
    ax.set_title("Giesen et al., Figure 1: condition number of the Gaussian kernel matrix", fontsize=9)
    ax.set_xlabel("t")
    ax.set_ylabel("condition number")
    ax.legend(fontsize=8)

    ax = axes[1, 0]
    for lam, (path, _) in cond["exact"].items():
        ax.loglog(path.t, path.cond, ".", ms=2, label=f"exact path KKT systems, lambda = {lam:g}")
        if path.t[0] > cond["ts"][0] and "stopped" in path.stop_reason:
            ax.axvline(path.t[0], color="r", lw=1, ls="--")
            ax.annotate(f" lambda = {lam:g}: the exact path stops here\n (active set unresolvable)", (path.t[0], 10.0),
                        fontsize=7, color="r", ha="left", va="bottom")
    ax.loglog(cond["ts"], cond["cond_K"], "-", color="0.5", lw=1, label="cond(K_t)")
    ax.set_xlim(cond["ts"][0], 1.0)
    ax.set_title("condition number (1-norm, LAPACK estimate) of the KKT system behind each exact point", fontsize=9)
    ax.set_xlabel("t")
    ax.legend(fontsize=8)

    ax = axes[1, 1]
    for lam, (path, report) in cond["exact"].items():
        if "stopped" in path.stop_reason:
            ax.axvline(path.t[0], color="r", lw=1, ls="--")
        rel = np.array([c.gap / c.scale for c in report.points])
        ax.loglog([c.lo for c in report.points], np.maximum(rel, 1e-16), ".", ms=2,
                  label=f"exact path, lambda = {lam:g}: certified gap / (1 + |dual|)")
    a = cond["approx"]
    for p in a.pieces:
        scale = max(a.problem.bound.dual_floor(p.dual, p.lo, p.hi), 1e-300)
        ax.plot([p.lo, p.hi], [p.gap_bound / scale] * 2, color="C2", lw=1.5)
    ax.plot([], [], color="C2", label=f"approximate path (lambda = {cond['approx_lam']:g}): bound / optimum, "
                                       "every t certified")
    ax.axhline(cond["eps"], color="k", ls="--", lw=1, label=f"relative eps = {cond['eps']:g}")
    ax.set_xlim(cond["ts"][0], 1.0)
    ax.set_title("certified relative gaps: exact points vs approximate pieces", fontsize=9)
    ax.set_xlabel("t")
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    save_figure(fig, out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="exact_vs_approximate.png", help="PNG file to write")
    parser.add_argument("--quick", action="store_true", help="smaller 10-D set and coarser eps (a few seconds)")
    args = parser.parse_args(argv)
    need_matplotlib()  # (the figure needs the plot extra: said now, not after the run)
    t0 = time.perf_counter()
    sinc = part_sinc(eps=5e-2 if args.quick else 1e-2, n_sigma=50 if args.quick else 200)
    e, a, r = sinc["exact"], sinc["approx"], sinc["report"]
    print("Wang's sinc set-up, lambda = 0.1, sigma from 10 to 0.1:")
    print(f"  exact kernel path:  {len(e.events)} events, {e.t.size} solutions, {e.linear_solves} linear solves, "
          f"{e.wall_s:.2f} s; max cond {e.max_cond:.3g}; certified gaps <= {r.max_gap:.3g} "
          f"(relative {r.max_relative_gap:.3g}), {'all' if r.ok else 'NOT all'} within 1e-6 x scale")
    print(f"  approximate path:   eps = {sinc['eps']:g}, {a.exact_solves} exact solves, {len(a.pieces)} pieces, "
          f"{'certified' if a.certified else 'NOT certified'}, {a.wall_s:.2f} s")
    print(f"  agreement at {sinc['sigmas'].size} random sigma: approximate - exact objective in "
          f"[{sinc['diff'].min():.3g}, {sinc['diff'].max():.3g}] (<= eps = {sinc['eps']:g})")

    n = 40 if args.quick else 100
    cond = part_conditioning(n=n, lams=(1e-2, 1e-3), t_lo=1e-3, approx_hi=0.1, eps_rel=5e-2 if args.quick else 1e-2)
    print(f"{n} points uniform in [0,1]^10: cond(K_t) = {cond['cond_K'][0]:.3g} at t = 1e-3, "
          f"{cond['cond_K'][np.searchsorted(cond['ts'], 1.0)]:.3g} at t = 1, {cond['cond_K'][-1]:.3g} at t = 100")
    for lam, (path, report) in cond["exact"].items():
        print(f"  exact path lambda = {lam:g}, t from 1 down to 1e-3: {len(path.events)} events, "
              f"{path.linear_solves} linear solves, {path.wall_s:.2f} s, max KKT cond {path.max_cond:.3g}, "
              f"largest certified gap {report.max_gap:.3g} (relative {report.max_relative_gap:.3g}) at t = "
              f"{max(report.points, key=lambda c: c.gap).lo:.3g}; reached t = {path.t[0]:.4g} ({path.stop_reason})")
    ap = cond["approx"]
    print(f"  approximate path lambda = {cond['approx_lam']:g} on [1e-3, 0.1], relative eps = {cond['eps']:g}: "
          f"{ap.exact_solves} exact solves, {len(ap.pieces)} pieces, {'certified' if ap.certified else 'NOT certified'}, "
          f"{ap.wall_s:.2f} s")
    plot(sinc, cond, args.out)
    print(f"figure written to {args.out} ({time.perf_counter() - t0:.1f} s in all)")
    return dict(sinc=sinc, cond=cond)


if __name__ == "__main__":
    main()
