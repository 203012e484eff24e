"""The figures of an exact path (Wang, Qin and Huang Figures 2 and 4; Wang, Yeung and Lochovsky
Figures 1, 5 and 6), and the command that draws them for Wang's sinc set-up or a data file.

:func:`plot_exact_path` draws, against λ (a λ-path) or the bandwidth t (a kernel path, σ = 1/t),
both on a log axis: the coefficient paths with the breakpoints as vertical lines, the active-set
size, and with validation data the training and validation MSE (the minimum marked).

The command (``python -m approxpath.exact.figures``; proposed as ``approxpath figure
exact-path``) computes one exact path, certifies it, draws it and optionally exports its table::

    python -m approxpath.exact.figures --parameter lam --bandwidth 1 --plot lam.png --export lam.dat
    python -m approxpath.exact.figures --parameter bandwidth --lam 0.1 --range 0.1 10 --plot kernel.png

Without ``--data`` the data are Wang's sinc set-up (:func:`wang_sinc`): 100 points, x uniform on
[-3, 3], y = sinc(x) + N(0, 0.08²), a random half for training and the other half for validation.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from approxpath import errors
from approxpath.data import load_data, load_train_validation, make_sinc

from ._common import InputError

__all__ = ["plot_exact_path", "wang_sinc", "add_arguments", "run", "main"]

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies)
_TRAIN, _VAL, _ACTIVE, _BREAK = "#0072B2", "#D55E00", "#009E73", "0.75"
# interior points per λ-path segment for drawing: the path is linear in λ, the axis logarithmic
_SEGMENT_SAMPLES = 8
# beyond this many breakpoints the vertical lines would cover the panel: they are left out
_MAX_BREAK_LINES = 400


def wang_sinc(seed=0):
    """Wang et al.'s sinc set-up: ``(X_train, y_train, X_val, y_val)``, 50 points each.

    100 points with x uniform on [-3, 3] and y = sin(πx)/(πx) + N(0, 0.08²) (Wang, Yeung and
    Lochovsky §5), split at random into halves (the seeded permutation ``seed``, which also seeds
    :func:`~approxpath.data.make_sinc`): ``X_*`` of shape (50, 1), ``y_*`` of shape (50,)."""
    X, y = make_sinc(n=100, low=-3.0, high=3.0, noise=0.08, seed=seed)
    perm = np.random.default_rng(seed).permutation(100)
    return X[perm[:50]], y[perm[:50]], X[perm[50:]], y[perm[50:]]


def _dense(path):
    """``(x, beta)`` to draw: the points, plus interior points of each linear λ-path segment."""
    if not path.linear:
        return path.t, path.beta
    xs, bs = [path.t[:1]], [path.beta[:1]]
    th = np.linspace(0.0, 1.0, _SEGMENT_SAMPLES + 2)[1:]
    for k in range(path.t.size - 1):
        xs.append(path.t[k] + th * (path.t[k + 1] - path.t[k]))
        bs.append(path.beta[k] + th[:, None] * (path.beta[k + 1] - path.beta[k]))
    return np.concatenate(xs), np.concatenate(bs)


def plot_exact_path(path, *, X_val=None, y_val=None, ax=None):
    """Coefficient paths with breakpoints, active-set size and (with validation data) MSE.

    Parameters
    ----------
    path : ExactPath
        From :func:`approxpath.exact.lambda_path` or :func:`approxpath.exact.kernel_path`.
    X_val : ndarray of shape (k, d), optional
    y_val : ndarray of shape (k,), optional
        Validation data: adds a panel with the training and validation MSE.
    ax : sequence of matplotlib Axes, optional
        Where to draw: two axes (three with validation data), top to bottom; default a new
        :class:`matplotlib.figure.Figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from approxpath.export import exact_path_table

    from ..plotting import log_x

    table = exact_path_table(path, X_val=X_val, y_val=y_val)
    panels = 3 if "val_mse" in table else 2
    if ax is None:
        from ..plotting import new_figure

        fig = new_figure((6.4, 2.0 + 1.6 * panels))
        axes = fig.subplots(panels, 1, sharex=True)
    else:
        axes = list(ax)
        if len(axes) != panels:
            raise InputError(f"ax must hold {panels} axes (coefficients, active set{', MSE' if panels == 3 else ''}); "
                             f"got {len(axes)}")
        fig = axes[0].figure
    lam_path = path.parameter == "lam"
    x, beta = _dense(path)
    ever = np.flatnonzero(np.any(path.beta != 0, axis=0))
    a0 = axes[0]
    for i in ever:
        a0.plot(x, beta[:, i], lw=0.9)
    breaks = path.breakpoints
    if breaks.size <= _MAX_BREAK_LINES:
        for b in breaks:
            for a in axes:
                a.axvline(b, color=_BREAK, lw=0.5, zorder=0)
    fixed = f"$t = {path.bandwidth:g}$" if lam_path else rf"$\lambda = {path.lam:g}$"
    name = r"$\lambda$-path" if lam_path else "kernel path"
    a0.set_title(f"exact {name}, {fixed}: {len(path.events)} events, {breaks.size} breakpoints", fontsize=10)
    a0.set_ylabel(r"coefficients $\beta_i$")
    # a lambda-path point carries the active set of the segment below it (pre); a kernel path
    # point the set its solution was computed with, from there on
    axes[1].step(table["t"], table["active"], where="pre" if lam_path else "post", color=_ACTIVE)
    axes[1].set_ylabel("active-set size")
    from matplotlib.ticker import MaxNLocator

    axes[1].yaxis.set_major_locator(MaxNLocator(integer=True))  # (a count: no ticks at 2.5)
    if panels == 3:
        a2 = axes[2]
        a2.plot(table["t"], table["train_mse"], color=_TRAIN, label="training MSE")
        a2.plot(table["t"], table["val_mse"], color=_VAL, label="validation MSE")
        k = int(np.argmin(table["val_mse"]))
        a2.plot([table["t"][k]], [table["val_mse"][k]], "o", color=_VAL, ms=4,
                label=f"minimum {table['val_mse'][k]:.3g} at {table['t'][k]:.3g}")
        a2.set_ylabel("MSE")
        a2.set_yscale("log")
        a2.legend(frameon=False, fontsize=8)
    for a in axes:
        log_x(a)
        a.grid(True, alpha=0.3, lw=0.5)
    if lam_path:
        axes[0].invert_xaxis()  # shared: the path runs from lambda_max (left) down to lam_min (right)
    axes[-1].set_xlabel(r"$\lambda$ (log scale)" if lam_path else
                        r"bandwidth $t$ of $\exp(-t\|x - x'\|^2)$, the papers' $\sigma = 1/t$ (log scale)")
    return fig


# ---------------------------------------------------------------------------- the command
def add_arguments(p):
    """The options of ``approxpath figure exact-path`` (an ``argparse`` parser): ``--data``,
    ``--parameter``, ``--range``, ``--plot``, ``--export``, ... added to ``p``, which is returned."""
    from ..cli import parse_number
    p.add_argument("--data", default=None, help="training data file (default: Wang's sinc set-up)")
    p.add_argument("--format", choices=("libsvm", "csv"), default=None,
                   help="data format (default: csv for a .csv file, else libsvm)")
    p.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    p.add_argument("--val-data", default=None, help="validation data file (same format)")
    p.add_argument("--seed", type=int, default=0, help="seed of Wang's sinc set-up (default 0)")
    p.add_argument("--parameter", choices=("lam", "bandwidth"), default="lam",
                   help="lam: the lambda-path at --bandwidth (default lam); bandwidth: the kernel path at --lam")
    p.add_argument("--bandwidth", type=parse_number, default=None,
                   help="t of exp(-t||x-x'||^2): the lambda-path's kernel (default 1), the kernel path's start")
    p.add_argument("--lam", type=parse_number, default=None, help="the kernel path's lambda (required there)")
    p.add_argument("--range", type=parse_number, nargs=2, metavar=("LO", "HI"), default=None,
                   help="lambda-path: stop at LO (lam_min); kernel path: the bandwidths (default 0.1 10)")
    p.add_argument("--max-landmarks", type=int, default=None, help="lambda-path: stop before the set exceeds K")
    p.add_argument("--target-mse", type=parse_number, default=None,
                   help="lambda-path: stop where the validation MSE falls to M (needs validation data)")
    p.add_argument("--max-events", type=int, default=None, help="stop after this many events")
    p.add_argument("--theta", type=parse_number, default=None, help="kernel path: decay rate (default 0.95)")
    p.add_argument("--breakpoint-tol", type=parse_number, default=None, help="kernel path: eps (default 1e-6)")
    p.add_argument("--marginal", type=parse_number, default=None, help="kernel path: the marginal-point speed-up xi")
    p.add_argument("--ridge", type=parse_number, default=0.0, help="ridge term nu (default 0)")
    p.add_argument("--plot", default=None, metavar="FILE", help="write the figure (png, pdf, svg)")
    p.add_argument("--export", default=None, metavar="FILE",
                   help="write the per-point table (.csv, .txt (as .csv) or .dat)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    return p


def run(args):
    """Compute, certify, draw and export one exact path; 0 when every point is certified, else 1.

    Where none is flagged but the path could not continue, 4 (the part computed is drawn, and stderr
    says why).  ``args``: the options of :func:`add_arguments`.

    Raises
    ------
    InputError
        ``--val-data`` without ``--data``, ``--target-mse`` without validation data, a kernel path
        without ``--lam`` or with ``--max-landmarks`` or ``--target-mse`` (and bad data or
        parameters, from the path's functions).
    """
    from approxpath.export import export_table

    from ..cli.exact import check_path_flags
    from ..cli.output import emit_json
    from ._kernel import kernel_path
    from ._lambda import lambda_path
    from .crosscheck import certify

    if args.data is None:
        if args.val_data is not None:
            raise InputError("--val-data goes with --data (Wang's sinc set-up brings its own validation half)")
        X, y, X_val, y_val = wang_sinc(args.seed)
    else:
        from ..cli.checks import data_format

        fmt = data_format(args.data, args.format)
        if args.val_data is not None:  # (read like --data)
            X, y, X_val, y_val = load_train_validation(args.data, args.val_data, fmt, n_features=args.n_features)
        else:
            (X, y), X_val, y_val = load_data(args.data, fmt, n_features=args.n_features), None, None
        if args.target_mse is not None and X_val is None:
            raise InputError("--target-mse needs validation data: --val-data FILE (same format)")
    check_path_flags(args, shared=("val_data",))  # (the validation MSE is drawn along either path)
    if args.parameter == "lam":
        lam_min = args.range[0] if args.range else None
        with_val = args.target_mse is not None
        path = lambda_path(X, y, 1.0 if args.bandwidth is None else args.bandwidth, lam_min,
                           max_events=args.max_events, max_landmarks=args.max_landmarks, target_mse=args.target_mse,
                           X_val=X_val if with_val else None, y_val=y_val if with_val else None, nu=args.ridge)
        if args.range and args.range[1] < path.t[-1]:  # HI cuts the output, as in ``approxpath exact``
            path = path.restrict(path.t[0], args.range[1])
    else:
        if args.lam is None:
            raise InputError("the kernel path needs its fixed lambda: --lam L")
        given = {k: v for k, v in dict(theta=args.theta, eps=args.breakpoint_tol).items() if v is not None}
        path = kernel_path(X, y, args.lam, tuple(args.range) if args.range else (0.1, 10.0), start=args.bandwidth,
                           nu=args.ridge, marginal=args.marginal, max_events=args.max_events, **given)
    report = certify(path, relative=False)  # (``approxpath exact``'s default tolerance: 1e-6, absolute)
    if args.plot:
        from ..plotting import save_figure

        save_figure(plot_exact_path(path, X_val=X_val, y_val=y_val), args.plot)
    if args.export:
        export_table(path, args.export, report=report, X_val=X_val, y_val=y_val)
    if args.json:
        out = report.to_json()  # (ok: every point certified and the path complete, as exact's)
        out.update(ok=bool(report.ok and not path.failed), complete=not path.failed,
                   algorithm=path.algorithm, range=list(path.interval), events=len(path.events),
                   breakpoints=int(path.breakpoints.size), stop_reason=path.stop_reason, plot=args.plot,
                   export=args.export)
        emit_json(out)
    else:
        print(path.summary())
        print(report)
        for what, f in (("figure", args.plot), ("table", args.export)):
            if f:
                print(f"{what} written to {f}")
    if path.failed:  # it could not continue: the figure shows the part computed (exit status 4)
        print(f"approxpath: incomplete exact path: {path.stop_reason}", file=sys.stderr)
    return 1 if not report.ok else 4 if path.failed else 0


def main(argv=None):
    """``python -m approxpath.exact.figures``: exit 0 (certified), 1 (a point flagged), 2 (bad input), 4 (the
    path could not continue: the part computed is drawn).  ``argv``: ``sys.argv[1:]`` if omitted; 2 is
    for an :class:`InputError` or a missing file, with the message on stderr."""
    parser = add_arguments(argparse.ArgumentParser(prog="python -m approxpath.exact.figures",
                                                   description=run.__doc__.splitlines()[0]))
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (InputError, errors.InputError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
