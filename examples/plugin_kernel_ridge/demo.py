"""The kernel ridge plug-in at work: a certified bandwidth path and LOOCV along it.

    pip install examples/plugin_kernel_ridge      # once (or run from the source folder)
    python examples/plugin_kernel_ridge/demo.py [--plot loocv.png]

Kernel ridge regression on noisy sinc data: the certified eps-path over the bandwidth t, the
fast leave-one-out cross-validation statistic (Bindel's notes) of the path's model at every
piece with its certified error bar, the selected t, and the exact LOOCV there.
"""

import argparse
import sys
from pathlib import Path

import approxpath
from approxpath.data import make_sinc


def _kernel_ridge():
    """The registered class; without an installed plug-in, the one in this folder."""
    try:
        return approxpath.get_problem("kernel_ridge")
    except KeyError:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from approxpath_kernel_ridge import KernelRidge

        print("(plug-in not installed: registering it from the source folder)")
        return approxpath.register(KernelRidge)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--plot", default=None, metavar="FILE", help="save the LOOCV curve")
    args = ap.parse_args(argv)
    KernelRidge = _kernel_ridge()
    from approxpath_kernel_ridge import loocv, loocv_curve

    X, y = make_sinc(n=60, noise=0.1, seed=0)
    problem = KernelRidge(X, y, lam=0.1)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
