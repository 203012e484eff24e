"""``approxpath features DATA``: the L1KR feature-selection path (Li & Sminchisescu) of a data
file, with its certificates (every point; with ``--segments``, the inner paths between points).

Exit status as every command: 0 every point certified (and every segment, with
``--segments``); 1 something is flagged; 2 bad input; 3 a file cannot be read or written; 4 the
path cannot start (the bound C is not active: choose a smaller C).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["COMMANDS", "cmd_features"]

#: Input scalings: the paper's (columns centred, unit Euclidean norm), by largest |x| (what the
#: ARD-polynomial kernel needs, |x| <= 1), or none.
SCALINGS = ("paper", "max-abs", "none")
#: --segment-eps's default, a fraction of ||y - mean(y)||^2: looser than the function's 1e-3, so
#: that a first look at the segments from the command line stays a matter of seconds.
_SEGMENT_EPS = 1e-2


def _scale(X, how):
    from ..exact.feature_path import normalize_columns

    if how == "paper":
        return normalize_columns(X)
    if how == "max-abs":
        Xc = X - X.mean(axis=0)
        top = np.abs(Xc).max(axis=0)
        return Xc / np.where(top > 0, top, 1.0)
    return X


def cmd_features(args):
    """Run ``approxpath features``: read and scale the data, follow and certify the feature path
    (:func:`~approxpath.exact.feature_path.feature_path`; with ``--segments`` also
    :func:`~approxpath.exact.feature_path.certify_segments`), write ``--out``, ``--export`` and
    ``--plot``, and print the summary or ``--json``'s document.  Without ``--C``,
    :math:`C = \\kappa \\|y - \\bar y\\|^2` with ``--kappa`` (default 2).

    Returns the exit status: 1 where the path's report is not ok (a claim flagged) or, with
    ``--segments``, a segment is uncertified; else 4 where the path stopped short; else 0.
    :class:`~approxpath.errors.InputError` for ``--C`` and ``--kappa`` both given; ``--C``, ``--kappa``
    or ``--segment-eps`` not positive; ``--segment-eps`` or ``--segment-pieces`` without
    ``--segments``; ``--degree`` with another kernel than ``ard-polynomial``; ``--segment-pieces``
    below 1; constant targets without ``--C``; and the outputs
    :func:`~approxpath.cli.checks.check_outputs` refuses.
    """
    from ..data import data_sha256, load_data
    from ..errors import InputError
    from ..exact.feature_path import certify_segments, feature_path, write_feature_path
    from .output import emit_json, progress_wanted
    from .checks import check_outputs, data_format

    from ..validate import positive

    if args.C is not None and args.kappa is not None:
        raise InputError("give --C or --kappa, not both")
    for flag, value in (("--C", args.C), ("--kappa", args.kappa), ("--segment-eps", args.segment_eps)):
        if value is not None:
            positive(flag, value)
    for flag, value in (("--segment-eps", args.segment_eps), ("--segment-pieces", args.segment_pieces)):
        if value is not None and not args.segments:  # (it would be silently unused)
            raise InputError(f"{flag} sets how the segments are certified: it needs --segments")
    if args.degree is not None and args.kernel != "ard-polynomial":  # (it would be silently unused)
        raise InputError(f"--degree is the power of --kernel ard-polynomial; the {args.kernel} kernel has none")
    if args.segment_pieces is not None and args.segment_pieces < 1:
        raise InputError(f"--segment-pieces must be a positive integer; got {args.segment_pieces}")
    check_outputs(args)  # --out, --export, --plot: writable, not --data, not each other
    fmt = data_format(args.data, args.format)
    X, y = load_data(args.data, fmt, n_features=args.n_features)
    scaling = args.scale or ("max-abs" if args.kernel == "ard-polynomial" else "paper")
    Xs = _scale(np.asarray(X, dtype=float), scaling)
    y = np.asarray(y, dtype=float)
    yc2 = float(np.sum((y - y.mean()) ** 2))
    if args.C is None and not yc2 > 0:
        raise InputError(f"the targets of {args.data!r} are all equal: no feature explains a constant, and there is "
                         "no path to follow")
    C = args.C if args.C is not None else (2.0 if args.kappa is None else args.kappa) * yc2
    power = {} if args.degree is None else dict(degree=args.degree)  # (none given: feature_path's)
    path = feature_path(Xs, y, C=C, kernel=args.kernel, d_max=args.d_max, max_events=args.max_events,
                        max_steps=args.max_steps, tol=args.tol, kkt_tol=args.kkt_tol, **power)
    segments = None
    if args.segments:
        pieces = {} if args.segment_pieces is None else {"max_pieces": args.segment_pieces}
        eps = _SEGMENT_EPS if args.segment_eps is None else args.segment_eps
        segments = certify_segments(path, eps=eps, **pieces, progress=progress_wanted(args))
    if args.out:
        checked = {} if segments is None else {"segments": segments.to_json()}
        write_feature_path(path, args.out, data_file=str(args.data), format=fmt, scaling=scaling,
                           data_sha256=data_sha256(X, y), **checked)
    if args.export:
        from ..export import export_table

        export_table(path, args.export, report=segments)
    if args.plot:
        from ..exact.feature_path import plot_feature_path
        from ..plotting import save_figure

        save_figure(plot_feature_path(path, segments=segments), args.plot)
    ok = path.report.ok and (segments is None or not segments.uncertified)
    if args.json:  # (ok: every claim holds and the path is complete, as exact's)
        out = dict(path.report.to_json(), C=C, kappa=C / yc2 if yc2 > 0 else None, D_max=float(path.D.max()),
                   events=len(path.events) - 1, jacobian_calls=path.jacobian_calls, stop_reason=path.stop_reason,
                   final_active=list(path.selected(-1)), path_s=round(path.wall_s, 4), ok=ok and not path.failed,
                   failed=path.failed)
        if segments is not None:
            out["segments"] = segments.to_json()
        emit_json(out)
    else:
        print(path.summary())
        if segments is not None:
            print(f"  inner paths between points: {segments!r}; uncertified segments (first 20): "
                  f"{list(segments.uncertified[:20])}")
        for name, file in (("path", args.out), ("table", args.export), ("figure", args.plot)):
            if file:
                print(f"{name} written to {file}")
    if path.failed:  # (exit 4, as an exact path's that stopped short)
        points = f"{len(path)} point{'s' * (len(path) != 1)}"
        cause = ("; duplicate or nearly collinear features, or too few samples, make the path singular there"
                 if "singular" in path.stop_reason else "")
        print(f"approxpath: incomplete feature path: it ends at D = {path.D[-1]:.6g} ({points}): {path.stop_reason}"
              f"{cause}", file=sys.stderr)
    if not ok:
        return 1
    return 4 if path.failed else 0


def _features_args(p, cls=None, argv=()):
    from ..exact.feature_path import KERNELS
    from .options import parse_number

    p.description = ("Follow the L1KR feature-selection path (ARD kernel weights beta >= 0 under ||beta||_1 <= D, "
                     "kernel ridge with alpha'K alpha <= C) and certify every point: the inner kernel ridge "
                     "problem to a duality gap and the KKT conditions to residuals. The problem is not convex in "
                     "beta: global optimality is not certified.")
    p.add_argument("data", help="data file (CSV with the target last, or LIBSVM)")
    p.add_argument("--format", choices=("libsvm", "csv"), default=None,
                   help="data format (default: csv for a .csv file, else libsvm)")
    p.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    p.add_argument("--C", type=parse_number, default=None, help="the bound of alpha'K alpha <= C")
    p.add_argument("--kappa", type=parse_number, default=None,
                   help="C = KAPPA ||y - mean(y)||^2 instead of --C (default 2)")
    p.add_argument("--kernel", choices=KERNELS, default=KERNELS[0], help=f"default {KERNELS[0]}")
    p.add_argument("--degree", type=int, default=None, help="ard-polynomial: the power (default 2)")
    p.add_argument("--scale", choices=SCALINGS, default=None,
                   help="input scaling: paper (centred, unit-norm columns; default for ard-gaussian), max-abs "
                        "(centred, largest |x| = 1; default for ard-polynomial) or none")
    p.add_argument("--d-max", type=parse_number, default=None, help="stop where ||beta||_1 reaches D_MAX")
    p.add_argument("--max-events", type=int, default=None, help="stop after this many events")
    p.add_argument("--max-steps", type=int, default=2000, help="stop after this many steps (default 2000)")
    p.add_argument("--tol", type=parse_number, default=1e-8,
                   help="flag points whose inner gap exceeds TOL ||y - mean(y)||^2 (default 1e-8)")
    p.add_argument("--kkt-tol", type=parse_number, default=1e-6, help="flag KKT residuals above this (default 1e-6)")
    p.add_argument("--segments", action="store_true",
                   help="also certify the inner problem along the straight segment between consecutive points")
    p.add_argument("--segment-eps", type=parse_number, default=None,
                   help="--segments: certified where the gap bound is <= EPS ||y - mean(y)||^2 "
                   f"(default {_SEGMENT_EPS:g})")
    p.add_argument("--segment-pieces", type=int, default=None,
                   help="--segments: pieces per segment at most (default 64)")
    p.add_argument("--out", default=None,
                   help="write the path (.npz; re-check it in Python: approxpath.exact.crosscheck_feature_path)")
    p.add_argument("--export", default=None, metavar="FILE",
                   help="write the per-point table (.csv, .txt (as .csv) or .dat)")
    p.add_argument("--plot", default=None, metavar="FILE", help="save beta and Jacobian calls against D "
                   "(needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the summary")
    p.add_argument("--no-progress", action="store_true", help="no progress bar over the segments (none with --json either)")
    p.set_defaults(func=cmd_features)


#: The command ``features`` (registered in :data:`approxpath.cli.commands.COMMANDS`).
COMMANDS = {"features": ("the L1KR feature-selection path (Li & Sminchisescu), every point certified",
                         _features_args)}
