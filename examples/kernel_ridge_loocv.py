"""Kernel ridge regression along a certified bandwidth path, with leave-one-out cross-validation.

    python examples/kernel_ridge_loocv.py [--plot loocv.png] [--plot-box box.png] [--box-tol 0.005]

Kernel ridge regression on noisy sinc data: the certified eps-path over the bandwidth t, the
fast leave-one-out cross-validation statistic (Bindel's closed form) of the path's model at every
piece with its certified error bar, the selected t, and the exact LOOCV there.  Then t and lambda
chosen together by the exact optimum's LOOCV, certified within delta of every point of the box
(no path: cells between exact optima).

The figures (--plot, --plot-box) need matplotlib: pip install 'approxpath[plot]'.
"""

import argparse

import approxpath
from approxpath.data import make_sinc
from approxpath.plotting import need_matplotlib
from approxpath.problems.kernel_ridge.loocv import loocv, loocv_curve


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--plot", default=None, metavar="FILE", help="save the LOOCV curve")
    ap.add_argument("--plot-box", default=None, metavar="FILE", help="save the LOOCV enclosure over (t, lambda)")
    ap.add_argument("--box-tol", type=float, default=0.005, help="delta to reach over (t, lambda) (default 0.005)")
    args = ap.parse_args(argv)
    if args.plot or args.plot_box:
        need_matplotlib()  # (said now, not after the run)
    X, y = make_sinc(n=60, noise=0.1, seed=0)
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    path = approxpath.approximate_path(problem, eps=args.eps, interval=(0.05, 20.0))
    print(path.summary())
    curve = loocv_curve(path)
    k = curve.best_index
    print(f"LOOCV along the path ({curve.t.size} pieces): best t = {curve.best_t:.4g}, "
          f"LOOCV {curve.best_loss:.5f} +- {curve.loss_error[k]:.2g} (certified), "
          f"exact LOOCV there {loocv(problem, curve.best_t):.5f}; certified gap <= {curve.best_gap_bound:.3g}")
    if args.plot:
        from approxpath.plotting import plot_validation, save_figure

        save_figure(plot_validation(curve, path), args.plot)
        print(f"figure written to {args.plot}")
    choice = approxpath.select_surface(problem, "loocv", bandwidths=(0.05, 20.0), weights=(1e-3, 1.0),
                                       tol=args.box_tol)
    print(f"certified choice of (t, lam) by LOOCV: {choice.summary()}")
    if args.plot_box:
        from approxpath.plotting import save_figure
        from approxpath.surface.figures import plot_surface_selection

        save_figure(plot_surface_selection(choice), args.plot_box)
        print(f"figure written to {args.plot_box}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
