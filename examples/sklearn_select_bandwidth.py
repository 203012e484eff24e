"""Select a Gaussian bandwidth with the scikit-learn estimators, certificate included.

    python examples/sklearn_select_bandwidth.py [--plot validation.png]

A classifier (hinge-loss SVM) on two overlapping Gaussian classes and a regressor (sparse
robust l1 regression) on the sinc data of the Giesen et al. paper (10 % outliers): each fits
a certified bandwidth path on a training part, picks the bandwidth with the smallest
validation loss along the path and reports it with the certified gap of the selected model.
Then kernel ridge regression chooses its bandwidth and lambda together by leave-one-out
cross-validation of the whole data, certified over the whole box (no validation split, no path).
Seeded synthetic data only (runs in seconds, no downloads).

Needs scikit-learn: pip install 'approxpath[sklearn]' (and matplotlib for --plot: 'approxpath[plot]').
"""

import argparse

import numpy as np

from approxpath.data import make_classification, make_sinc
from approxpath.plotting import need_matplotlib
from approxpath.sklearn import KernelPathRegressor, KernelPathRidge, KernelPathSVC


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", default=None, metavar="FILE", help="save the classifier's validation curve")
    args = ap.parse_args(argv)
    if args.plot:
        need_matplotlib()  # (said now, not after the run)

    X, y = make_classification(n=200, d=2, seed=0)
    X_test, y_test = make_classification(n=1000, d=2, seed=1)
    # (the automatic range starts at t = 0.35 and its choice lies near that end, so the estimator
    # would warn that a smaller t might do as well; this range holds the whole valley)
    clf = KernelPathSVC(C=1.0, t_range=(2**-6, 2**6), random_state=0).fit(X, y)
    path = clf.path_
    print(f"KernelPathSVC: path over t in [{clf.t_range_[0]:.3g}, {clf.t_range_[1]:.3g}] with eps = {clf.eps_:g}: "
          f"{path.exact_solves} exact solves, {len(path.pieces)} pieces, certified: {path.certified}")
    print(f"  selected t = {clf.best_t_:.4g} (validation error {clf.best_loss_:.3f}); "
          f"certified gap there <= {clf.best_gap_bound_:.3g}; test accuracy {clf.score(X_test, y_test):.3f}")

    X, y = make_sinc(n=100, noise=0.1, outliers=0.1, seed=0)
    X_test, y_test = make_sinc(n=400, noise=0.0, seed=1)
    reg = KernelPathRegressor(loss="robust_l1", lam=0.1, t_range=(0.25, 8.0), random_state=0).fit(X, y)
    mae = float(np.mean(np.abs(reg.predict(X_test) - y_test)))
    print(f"KernelPathRegressor(robust_l1): {reg.path_.exact_solves} exact solves, certified: {reg.path_.certified}")
    print(f"  selected t = {reg.best_t_:.4g} (validation MAE {reg.best_loss_:.3f}); "
          f"certified gap there <= {reg.best_gap_bound_:.3g}; MAE against sinc on [-4, 4]: {mae:.3f}")

    X, y = make_sinc(n=200, noise=0.2, seed=0)
    ridge = KernelPathRidge(lam=None, lam_range=(1e-3, 1.0), t_range=(0.25, 8.0)).fit(X, y)
    mae = float(np.mean(np.abs(ridge.predict(X_test) - y_test)))
    print(f"KernelPathRidge(lam=None): {ridge.selection_.summary()}")
    print(f"  MAE against sinc on [-4, 4]: {mae:.3f}")

    if args.plot:
        from approxpath.plotting import plot_validation, save_figure

        save_figure(plot_validation(clf.validation_curve_, clf.path_), args.plot)
        print(f"figure written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
