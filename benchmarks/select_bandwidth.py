"""Bandwidth selection with the scikit-learn estimators on a held-out split of a LIBSVM set.

    python benchmarks/select_bandwidth.py [--data ionosphere_scale] [--test-size 0.3] [--seed 0]

The set (global min-max scaling, as the paper) is split into training and test parts
(stratified).  Each estimator fits its certified bandwidth path on 75 % of the training part,
selects t by the validation loss of the other 25 % along the path, and is scored on the test
part; reported with the certified gap at the selected t.  Estimators:

* ``KernelPathSVC`` with the paper's settings (C = 0.1, t in [2^-10, 2^10], eps = 0.125
  absolute) and with the estimator's defaults;
* ``KernelPathRegressor`` (klasso and robust_l1) on the +-1 labels (least-squares / least-
  absolute-deviations classification: the class is the sign of the prediction).

As an independent reference, scikit-learn's ``SVC(C, gamma=t)`` (libsvm, the exact optimum at
t: ``gamma`` is our t) is trained on the same part at the selected t and at the best t of a
grid search with the same validation split; the agreement of its test predictions with the
path model's is printed too.
"""

import argparse
import time

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from approxpath.sklearn import KernelPathRegressor, KernelPathSVC

from _common import C, INTERVAL, load, machine


def _row(name, est, X_te, y_te, wall, sign=False):
    path = est.path_
    pred = np.where(est.predict(X_te) > 0, 1.0, -1.0) if sign else est.predict(X_te)
    acc = float(np.mean(pred == y_te))
    print(f"| {name} | {est.eps_:.4g} | {path.exact_solves} | {len(path.pieces)} | "
          f"{'yes' if path.certified else 'NO'} | {est.best_t_:.4g} | {est.best_loss_:.3f} | {acc:.3f} | "
          f"{est.best_gap_bound_:.3g} | {wall:.1f} |", flush=True)
    return pred


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="ionosphere_scale")
    ap.add_argument("--test-size", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    X, y = load(args.data)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=args.test_size, random_state=args.seed, stratify=y)
    print(f"{args.data}: {X_tr.shape[0]} training (75 % fit / 25 % validation), {X_te.shape[0]} test points, "
          f"{X.shape[1]} features; {machine()}\n")
    n_fit = X_tr.shape[0] - int(np.ceil(0.25 * X_tr.shape[0]))  # eps is relative to C * n_fit
    print("| estimator | eps (absolute) | exact solves | pieces | certified | selected t | validation loss "
          "| test accuracy | certified gap at t | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    runs = [
        ("KernelPathSVC, paper settings (C=0.1, t in [2^-10, 2^10], eps=0.125)",
         KernelPathSVC(C=C, bias="dynamic", eps=0.125 / (C * n_fit), t_range=INTERVAL,
                       random_state=args.seed), False),
        ("KernelPathSVC, defaults (C=1)", KernelPathSVC(random_state=args.seed), False),
        ("KernelPathRegressor(klasso, lam=0.1) on +-1", KernelPathRegressor(loss="klasso", random_state=args.seed), True),
        ("KernelPathRegressor(robust_l1, lam=0.1) on +-1",
         KernelPathRegressor(loss="robust_l1", random_state=args.seed), True),
    ]
    svc_paper = None
    for name, est, sign in runs:
        t0 = time.perf_counter()
        est.fit(X_tr, y_tr)
        pred = _row(name, est, X_te, y_te, time.perf_counter() - t0, sign)
        if svc_paper is None:
            svc_paper, svc_pred = est, pred

    # independent reference: libsvm at the same t on the same training part
    est = svc_paper
    X_fit, X_val, y_fit, y_val = train_test_split(X_tr, y_tr, test_size=int(np.ceil(0.25 * X_tr.shape[0])),
                                                  random_state=args.seed, stratify=y_tr)
    exact = SVC(C=C, gamma=est.best_t_).fit(X_fit, y_fit)
    agree = float(np.mean(exact.predict(X_te) == svc_pred))
    print(f"\nlibsvm SVC(C={C}, gamma={est.best_t_:.4g}) on the same 75 %: test accuracy "
          f"{exact.score(X_te, y_te):.3f}; agrees with the path model on {agree:.1%} of the test points")
    grid = np.geomspace(*INTERVAL, 81)
    val = [SVC(C=C, gamma=g).fit(X_fit, y_fit).score(X_val, y_val) for g in grid]
    g = grid[int(np.argmax(val))]
    print(f"libsvm grid search (81 values of gamma in [2^-10, 2^10], same validation part): best gamma {g:.4g}, "
          f"validation error {1 - max(val):.3f}, test accuracy {SVC(C=C, gamma=g).fit(X_fit, y_fit).score(X_te, y_te):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
