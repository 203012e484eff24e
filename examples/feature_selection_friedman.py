"""Feature selection along the certified L1KR path (Li & Sminchisescu 2010) on Friedman #1.

Friedman #1, y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5, with 5 irrelevant uniform
features x6..x10 (generated here, no data files).  The feature weights beta >= 0 of the ARD
kernel exp(-sum_j beta_j (x_j - z_j)^2) are followed from D = ||beta||_1 ~ 0 by the L1KR homotopy;
every point is certified (inner kernel ridge duality gap, KKT residuals), the point with the
least validation MSE is selected, and its test MSE and features are printed.  Writes the paper's
Figure 3 (beta against D with the events and the turns in D, with ``--detail`` the part at
D <= DETAIL magnified, Jacobian calls against D) to ``--out``.

    python examples/feature_selection_friedman.py [--out FILE] [--n 150] [--kappa 2] [--noise 0]
        [--seed 0] [--detail DETAIL]

Needs matplotlib for its figure: pip install 'approxpath[plot]'.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from approxpath.data import make_friedman1
from approxpath.exact.feature_path import feature_path, normalize_columns, plot_feature_path
from approxpath.plotting import need_matplotlib


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="feature_path_friedman.png", help="PNG file to write")
    parser.add_argument("--n", type=int, default=150, help="training points (the paper: 200)")
    parser.add_argument("--kappa", type=float, default=2.0, help="C = kappa ||y - mean y||^2")
    parser.add_argument("--noise", type=float, default=0.0, help="noise sd on the responses (SNR 10: 1.55)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detail", type=float, default=None, help="also draw the path at D <= DETAIL magnified")
    args = parser.parse_args(argv)
    need_matplotlib()  # (the figure needs the plot extra: said now, not after the run)
    rng = np.random.default_rng(args.seed)
    X, y = make_friedman1(args.n, args.noise, rng)  # training, validation and test sets, drawn in turn
    Xval, yval = make_friedman1(100, args.noise, rng)
    Xtest, ytest = make_friedman1(500, args.noise, rng)
    # the paper's scaling: centred columns of unit norm (validation and test with the training's)
    Xs, Xval_s, Xtest_s = normalize_columns(X), normalize_columns(Xval, X), normalize_columns(Xtest, X)
    C = args.kappa * float(np.sum((y - y.mean()) ** 2))

    t0 = time.perf_counter()
    path = feature_path(Xs, y, C=C)
    print(path.summary(max_events=12))
    print(f"({time.perf_counter() - t0:.1f} s with the certificates)")

    val = path.mse(Xval_s, yval)
    val[~path.certified] = np.inf  # select among certified points only
    i = int(np.argmin(val))
    test = float(np.mean((path.predict(Xtest_s, i) - ytest) ** 2))
    weights = path.beta[i] / path.D[i]
    print(f"\nselected by validation: point {i}, D = {path.D[i]:.4g}; test MSE {test:.4g} "
          f"(variance of y: {np.var(ytest):.3g})")
    print("  share of D per feature: " + ", ".join(f"x{j + 1} {w:.3f}" for j, w in enumerate(weights)))
    print(f"  active features: {[j + 1 for j in path.selected(i)]}; carrying >= 1 % of D: "
          f"{[int(j) + 1 for j in np.flatnonzero(weights >= 0.01)]}")
    c = path.report.checks[i]
    print(f"  certificate of that point: inner gap <= {c.rel_gap:.2g} x ||Hy||^2, KKT residual <= {c.kkt:.2g}")

    fig = plot_feature_path(path, relevant=range(5), detail=args.detail,
                            title=f"Friedman #1, n = {args.n}, C = {args.kappa:g} ||y - mean y||^2 (L1KR path)")
    fig.savefig(args.out, dpi=130)
    print(f"figure written to {args.out}")
    return dict(path=path, index=i, test_mse=test, out=args.out)


if __name__ == "__main__":
    main()
