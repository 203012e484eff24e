"""``approxpath figure``: the paper's figures (cond, solves, validation) from the command line."""

from __future__ import annotations

import argparse
import math
from pathlib import Path as FsPath

import numpy as np

from ..data import PREPROCESSING, load_data, make_classification, preprocess
from ..errors import InputError
from ..registry import available_problems, get_problem
from .options import add_problem_options, parse_number, problem_kwargs
from .checks import as_advice, check_seed
from .commands import (add_data_args, add_path_args, build_problem, check_outputs, data_format, data_meta,
                       load, load_with_validation, save_plot)
from .output import emit_json

__all__ = ["COMMANDS"]

_N_GRID = 400  # figure validation's grid (--selection grid): fine enough to see the curve's steps


def _figure_cond(args):
    """Figure 1: cond(K_t) of n uniform points in [0, 1]^d."""
    from ..paper_figures import kernel_condition_numbers, plot_condition

    from ..validate import count

    check_seed(args.seed)
    count("--n", args.n)
    count("--d", args.d)
    count("--points", args.points)
    check_outputs(args)
    if args.n < 2:
        raise InputError(f"--n must be at least 2 (a condition number needs a matrix); got {args.n}")
    X = np.random.default_rng(args.seed).uniform(size=(args.n, args.d))
    lo, hi = args.range
    if not 0 < lo < hi:
        raise InputError(f"--range must satisfy 0 < LO < HI; got {lo!r} {hi!r}")
    ts = np.geomspace(lo, hi, args.points)
    cond = kernel_condition_numbers(X, ts)
    if args.json:
        emit_json(dict(n=args.n, d=args.d, seed=args.seed, t=ts.tolist(), cond=cond.tolist()))
    else:
        print(f"{'t':>10} {'cond(K_t)':>12}")
        step = max(1, ts.size // 12)
        for t, c in zip(ts[::step], cond[::step]):
            print(f"{t:10.4g} {c:12.4g}")
    if args.plot:
        save_plot(plot_condition(ts, cond, n=args.n, d=args.d), args)
    return 0


def _power_of_two(v):
    """``v`` as mathtext ``$2^{k}$`` when it is an integer power of two, else ``%.3g``."""
    k = np.log2(v)
    return f"$2^{{{int(k)}}}$" if k == round(k) else f"{v:.3g}"


def _figure_solves(args):
    """Figure 3: exact solves of the path against 1/eps, one line per data file (and strategy)."""
    from ..driver import approximate_path

    cls = get_problem(args.problem)
    kwargs = problem_kwargs(cls, args)
    check_outputs(args)
    if not all(e > 0 and math.isfinite(e) for e in args.eps):
        raise InputError(f"--eps takes positive finite numbers; got {' '.join(f'{e:g}' for e in args.eps)}")
    for file in args.data:  # every file before the first path (a later one missing cost the earlier ones' runs)
        if not FsPath(file).is_file():
            raise InputError(f"data file {file!r} does not exist" if not FsPath(file).exists() else
                             f"data file {file!r} is not a regular file")
    interval = tuple(args.range) if args.range else None
    counts = {}
    for file in args.data:
        X, y = load_data(file, data_format(file, args.format), n_features=args.n_features)
        problem = build_problem(cls, preprocess(X, args.preprocess or "none"), y, args, kwargs)
        for strategy in args.strategy:
            # one colour per file, one line style per strategy (plot_solves)
            label = (FsPath(file).name, strategy) if len(args.strategy) > 1 else FsPath(file).name
            name = ", ".join(np.atleast_1d(label))
            counts[label] = []
            for eps in sorted(args.eps, reverse=True):
                path = approximate_path(problem, eps=eps, interval=interval, relative=args.relative, strategy=strategy)
                counts[label].append((eps, path.exact_solves, path.certified))
                if not args.json:
                    print(f"{name:34s} eps = {eps:<8g} exact solves {path.exact_solves:5d}  pieces {len(path.pieces):5d}  "
                          f"{'certified' if path.certified else 'NOT all certified'}  {path.wall_s:.1f} s", flush=True)
    if args.json:
        counts_json = {", ".join(np.atleast_1d(k)): [list(p) for p in v] for k, v in counts.items()}
        emit_json(dict(problem=args.problem, counts=counts_json))
    if args.plot:
        from ..paper_figures import plot_solves

        opts = ", ".join(f"{k}={v}" for k, v in problem.path_options().items())
        lo, hi = interval or problem.default_interval()
        strategies = f", strategy {args.strategy[0]}" if len(args.strategy) == 1 else ""
        title = f"{args.problem} ({opts}), {problem.parameter} in [{_power_of_two(lo)}, {_power_of_two(hi)}]{strategies}"
        save_plot(plot_solves(counts, title=title), args)
    return 0


# The share of --data held out when no --val-data is given.
_DEFAULT_FRACTION = 0.25


def _check_fraction(args):
    """``--validation-fraction`` is in (0, 1) and splits ``--data``: refused where it would be
    ignored (with ``--val-data``, or without ``--data``: the built-in sets have their own)."""
    fraction = args.validation_fraction
    if fraction is None:
        return
    if not 0 < fraction < 1:
        raise InputError(f"--validation-fraction must be strictly between 0 and 1; got {fraction!r}")
    if args.val_data is not None or args.data is None:
        raise InputError("--validation-fraction splits --data into training and validation data: it goes with "
                         "--data and without --val-data (the built-in sets have their own validation data)")


def _validation_data(args, cls):
    """(X, y, X_val, y_val, meta): files, a split of the training file, or the built-in sets.

    ``meta`` records a data file only where the path's training data are that whole file; the
    training part of a split, and the built-in sets, are carried in the certificate instead
    (``Path.save`` embeds the data where no ``data_file`` is recorded), so that ``approxpath
    verify`` re-checks the file as written; ``data_source`` says where they came from."""
    from ..data import make_sinc

    if args.data is None:
        if cls.criteria[0] == "error":
            X, y = make_classification(n=120, d=2, seed=0)
            X_val, y_val = make_classification(n=400, d=2, seed=1)
            return X, y, X_val, y_val, dict(data_source="synthetic two-class (seeded)")
        # the paper's section 6.2: 100 points of sinc on [-4, 4] with noise and 10 % outliers;
        # validation: 400 fresh points of the same distribution without outliers
        X, y = make_sinc(n=100, noise=0.1, outliers=0.1, seed=0)
        X_val, y_val = make_sinc(n=400, noise=0.1, seed=1)
        return X, y, X_val, y_val, dict(data_source="sinc, 10 % outliers (seeded)")
    if args.val_data is not None:  # (read like --data, scaled with its scaling)
        X, y, X_val, y_val, fmt, prep = load_with_validation(args)
        return X, y, X_val, y_val, data_meta(args, fmt, prep)
    X, y, fmt, prep = load(args)
    return _split(X, y, args, dict(format=fmt, preprocessing=prep))


# Samples the training part of a split keeps at least (a path's problem needs two).
_MIN_TRAINING = 2


def _split(X, y, args, meta):
    """``--data`` split by ``--validation-fraction`` (seeded by ``--seed``): (X, y, X_val, y_val, meta)."""
    fraction = _DEFAULT_FRACTION if args.validation_fraction is None else args.validation_fraction
    n = X.shape[0]
    k = int(np.ceil(fraction * n))
    if n - k < _MIN_TRAINING:
        given = "" if args.validation_fraction is not None else " (the default)"
        raise InputError(f"--validation-fraction {fraction:g}{given} leaves {n - k} of the {n} samples of --data for "
                         f"training; it must leave at least {_MIN_TRAINING}: pass a smaller --validation-fraction, "
                         "more data, or --val-data FILE")
    idx = np.random.default_rng(args.seed).permutation(n)
    meta = dict(meta, data_source=f"{args.data}: training part, {n - k} of {n} rows (--validation-fraction "
                                  f"{fraction:g} --seed {args.seed})")
    return X[idx[k:]], y[idx[k:]], X[idx[:k]], y[idx[:k]], meta


def _values_text(values, shown=5):
    """``values`` (numbers) as ``0, 1, 2``: the first ``shown``, then ``...``."""
    values = np.asarray(values, dtype=float)
    more = ", ..." if values.size > shown else ""
    return f"{', '.join(f'{v:g}' for v in values[:shown])}{more}"


def _validation_targets(problem, y_val):
    """``y_val`` as the problem sees its targets: a classifier's (``problem.labels``, its two
    training classes) mapped as its training labels are
    (:func:`approxpath.validate.as_training_labels`); :class:`InputError` for a label that is not
    a training class (another class was counted as -1, silently)."""
    labels = getattr(problem, "labels", None)
    if labels is None:
        return y_val
    from ..validate import as_training_labels

    y_pm, unknown = as_training_labels(y_val, labels)
    if unknown.size:
        found = np.unique(y_val)
        raise InputError(f"the validation labels must be the training classes ({_values_text(labels)}); found "
                         f"{found.size} value(s) ({_values_text(found)})")
    return y_pm


def _check_validation_args(args):
    """The options of ``figure validation`` checked before the data are read; ``--n-grid`` without
    ``--selection grid`` and ``--seed`` without a split of ``--data`` are refused (they would be
    ignored), and their defaults (400, 0) set."""
    if args.seed is not None and (args.data is None or args.val_data is not None):
        raise InputError("--seed seeds the split of --data into training and validation data: it goes with --data "
                         "and without --val-data")
    args.seed = 0 if args.seed is None else args.seed
    check_seed(args.seed)
    _check_fraction(args)
    if args.n_grid is not None and args.selection != "grid":
        raise InputError(f"--n-grid sets the grid of --selection grid; this is --selection {args.selection}")
    args.n_grid = _N_GRID if args.n_grid is None else args.n_grid
    if args.n_grid < 2:
        raise InputError(f"--n-grid must be an integer >= 2; got {args.n_grid}")


def _figure_validation(args):
    """Figure 4 (right): a validation loss along the path, and the selected parameter."""
    from ..selection import validation_curve

    from .running import default_checkpoint, run_and_write

    cls = get_problem(args.problem)
    _check_validation_args(args)
    check_outputs(args, extra=default_checkpoint(args))
    X, y, X_val, y_val, meta = _validation_data(args, cls)
    problem = build_problem(cls, X, y, args)
    criterion = args.criterion or cls.criteria[0]
    y_val = _validation_targets(problem, y_val)  # (before the run)
    path = run_and_write(problem, args, meta)
    curve = validation_curve(path, X_val, y_val, criterion=criterion, selection=args.selection, n_grid=args.n_grid)
    edge = curve.range_warning(f"the selected {problem.parameter} = {curve.best_t:.6g}", path.interval)
    if edge is not None:  # (as select and the estimators warn)
        import warnings

        warnings.warn(as_advice(edge, who="figure validation"))
    summary = dict(problem=problem.name, criterion=criterion, best_t=curve.best_t, best_loss=curve.best_loss,
                   best_gap_bound=curve.best_gap_bound, best_kind=curve.best_kind, eps=path.eps,
                   exact_solves=path.exact_solves, pieces=len(path.pieces), certified=path.certified,
                   evaluated=int(curve.t.size))
    if args.json:
        emit_json(summary)
    else:
        print(path.summary())
        print(f"selected {problem.parameter} = {curve.best_t:.6g}: {criterion} = {curve.best_loss:.4g} on "
              f"{len(y_val)} validation points, certified gap <= {curve.best_gap_bound:.4g} ({curve.best_kind})")
    if args.plot:
        from ..plotting import plot_validation

        save_plot(plot_validation(curve, path), args)
    return 1 if path.uncovered() else 0


def cmd_figure(args):
    return {"cond": _figure_cond, "solves": _figure_solves, "validation": _figure_validation,
            "exact-path": _figure_exact_path}[args.figure](args)


def _cond_args(q, cls, argv=()):
    q.add_argument("--n", type=int, default=100, help="number of points (default 100)")
    q.add_argument("--d", type=int, default=10, help="dimension (default 10)")
    q.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=(1e-5, 1e2),
                   help="bandwidth interval (default 1e-5 1e2)")
    q.add_argument("--points", type=int, default=60, help="values of t, log-spaced (default 60)")
    q.add_argument("--seed", type=int, default=0, help="random seed of the points (default 0)")
    q.add_argument("--json", action="store_true", help="print t and cond(K_t) as one JSON line")
    q.add_argument("--plot", default=None, metavar="FILE", help="save the figure (needs matplotlib)")


# ``figure solves``'s usage line: the problem first, as the argument list reads it (``--data`` and
# ``--eps`` take several values each: a problem name after them would be one of their values)
_SOLVES_USAGE = ("%(prog)s [-h] [problem] --data FILE [FILE ...] [--format F] [--n-features N] [--preprocess P]\n"
                 "           [problem options] [--eps EPS [EPS ...]] [--strategy S [S ...]] [--relative]\n"
                 "           [--range LO HI] [--json] [--plot FILE]")


def _problem_misplaced(text, flag):
    """:class:`argparse.ArgumentTypeError` when ``text``, read as a value of ``flag``, is the name of
    a registered problem (``figure solves --data F kernel_svm``), else None."""
    if text not in available_problems():
        return None
    return argparse.ArgumentTypeError(f"{text!r} is a problem name, not a value of {flag}: put the problem name "
                                      f"before --data (approxpath figure solves {text} --data FILE ...)")


def _data_file(text):
    """A value of ``figure solves --data``: a file name, not a problem name (unless such a file exists)."""
    misplaced = _problem_misplaced(text, "--data")
    if misplaced is not None and not FsPath(text).exists():
        raise misplaced
    return text


def _eps_value(text):
    """A value of ``figure solves --eps``: a number (:func:`parse_number`), not a problem name."""
    misplaced = _problem_misplaced(text, "--eps")
    if misplaced is not None:
        raise misplaced
    return parse_number(text)


def _solves_args(q, cls, argv=()):
    from ..driver import STRATEGIES

    q.usage = _SOLVES_USAGE
    q.add_argument("problem", nargs="?", default="kernel_svm", help="registered problem (default kernel_svm); it "
                   "goes before --data")
    q.add_argument("--data", nargs="+", required=True, type=_data_file, metavar="FILE",
                   help="data files, one line each")
    q.add_argument("--format", choices=("libsvm", "csv"), default=None,
                   help="data format (default: csv for a .csv file, else libsvm)")
    q.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    q.add_argument("--preprocess", choices=PREPROCESSING, default=None, help="feature scaling (default none)")
    if cls is not None:
        add_problem_options(q, cls)
    q.add_argument("--eps", nargs="+", type=_eps_value, default=[4, 2, 1, 0.5, 0.25, 0.125],
                   help="eps values (default 4 2 1 0.5 0.25 0.125)")
    q.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    q.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="parameter interval, e.g. 2^-10 2^10 (default: the problem's)")
    q.add_argument("--strategy", nargs="+", choices=STRATEGIES, default=[STRATEGIES[0]],
                   help=f"one or more of {', '.join(STRATEGIES)} (one line each; default {STRATEGIES[0]})")
    q.add_argument("--json", action="store_true", help="print the counts as one JSON line")
    q.add_argument("--plot", default=None, metavar="FILE", help="save the figure (needs matplotlib)")


def _validation_args(q, cls, argv=()):
    from ..selection import CRITERIA, SELECTIONS

    q.add_argument("problem", help="registered problem name")
    add_data_args(q, required=False)  # without --data: the built-in seeded sets (see _validation_data)
    q.add_argument("--val-data", default=None, metavar="FILE", help="validation file (same format)")
    q.add_argument("--validation-fraction", type=parse_number, default=None,
                   help=f"without --val-data: share of --data held out, in (0, 1) (default {_DEFAULT_FRACTION})")
    q.add_argument("--seed", type=int, default=None, help="seed of the split of --data (default 0)")
    q.add_argument("--criterion", choices=CRITERIA, default=None, help="loss (default: the problem's first)")
    q.add_argument("--selection", choices=SELECTIONS, default="pieces",
                   help="evaluate at the middle of every piece (default, as validation_curve and the estimators) "
                        "or on a grid of --n-grid points")
    q.add_argument("--n-grid", type=int, default=None, help=f"with --selection grid: grid size (default {_N_GRID})")
    if cls is not None:
        add_problem_options(q, cls)
    add_path_args(q, plot_help="save the figure (needs matplotlib)")


def _exact_path_args(q, cls, argv=()):
    from ..exact.figures import add_arguments

    add_arguments(q)


def _figure_exact_path(args):
    from ..exact.figures import run
    from ..validate import positive_range

    check_seed(args.seed)
    if args.range is not None:  # (as ``approxpath exact``: 0 < LO < HI < inf, LO the lambda-path's end)
        positive_range("--range", tuple(args.range))
    check_outputs(args)  # --plot and --export: writable, not --data, a figure format matplotlib writes
    return run(args)


_FIGURES = {
    "cond": ("cond(K_t) over t of uniform random points (Figure 1)", _cond_args),
    "exact-path": ("an exact kLASSO path: coefficients with breakpoints, active-set size, validation MSE",
                   _exact_path_args),
    "solves": ("exact solves against 1/eps for several data files (Figure 3)", _solves_args),
    "validation": ("validation loss along the path, best parameter (Figure 4, right)", _validation_args),
}


def _figure_args(p, cls, argv=()):
    fig = p.add_subparsers(dest="figure", required=True)
    for name, (text, fill) in _FIGURES.items():
        q = fig.add_parser(name, allow_abbrev=False, help=text)
        if len(argv) > 1 and argv[1] == name:
            fill(q, cls)
    p.set_defaults(func=cmd_figure)


#: The command ``figure`` (see :data:`approxpath.cli.commands.COMMANDS`).
COMMANDS = {"figure": ("figures: the paper's cond (Fig. 1), solves (Fig. 3), validation (Fig. 4); an exact path's "
                       "(exact-path)", _figure_args)}
