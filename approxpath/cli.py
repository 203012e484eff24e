"""The ``approxpath`` command line.

Exit status: 0 on success; 1 when a path has uncovered pieces or a certificate fails to
verify; 2 for bad input (argparse and :class:`approxpath.InputError`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time

import numpy as np

from . import __version__
from .certificate import failed_report, read_for_verify, verify
from .data import PREPROCESSING, data_sha256, load_data, make_classification, preprocess
from .driver import STRATEGIES, BudgetExceededError, approximate_path
from .problem import InputError
from .registry import available_problems, get_problem
from .solvers import SolverError

__all__ = ["main", "parse_number"]


def parse_number(text):
    """A float from ``0.1``, ``1e-3`` or a power ``2^-10`` (also ``2**-10``)."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(?:\^|\*\*)\s*([0-9.eE+-]+)\s*", str(text))
    try:
        return float(m.group(1)) ** float(m.group(2)) if m else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (use e.g. 0.5, 1e-3 or 2^-10)") from None


def _problem_kwargs(cls, args):
    """Constructor keywords of ``cls`` given on the command line (only those set)."""
    given = {k: getattr(args, k) for k in ("c", "bias", "lam", "bandwidth", "parameter") if getattr(args, k, None) is not None}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--option expects KEY=VALUE; got {item!r}")
        try:
            given[key] = json.loads(value)
        except ValueError:
            given[key] = value
    cls._check_option_names(given)  # before the data is loaded
    return given


def _load(args, meta=None):
    fmt = args.format or (meta or {}).get("format") or "libsvm"
    prep = args.preprocess or (meta or {}).get("preprocessing") or "none"
    X, y = load_data(args.data, fmt, n_features=args.n_features)
    return preprocess(X, prep), y, fmt, prep


def _add_data_args(p, required=True):
    p.add_argument("--data", required=required, help="data file")
    p.add_argument("--format", choices=("libsvm", "csv"), default=None, help="data format (default libsvm)")
    p.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    p.add_argument("--preprocess", choices=PREPROCESSING, default=None,
                   help="feature scaling; global-minmax is the paper's (default none)")


def _add_problem_args(p):
    p.add_argument("--parameter", default=None, help="path parameter (bandwidth, c, lam; problem-dependent)")
    p.add_argument("--c", type=parse_number, default=None, help="kernel_svm: C")
    p.add_argument("--bias", default=None, help="kernel_svm: bias rule fixed|dynamic|optimal")
    p.add_argument("--lam", type=parse_number, default=None, help="regression problems: lambda")
    p.add_argument("--bandwidth", type=parse_number, default=None, help="fixed t of exp(-t||x-x'||^2)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="any other constructor option")


def _add_path_args(p, plot_help="save the bounds figure (needs matplotlib)"):
    p.add_argument("--eps", type=parse_number, default=0.125, help="admissible suboptimality (default 0.125)")
    p.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="parameter interval, e.g. 2^-10 2^10 (default: the problem's)")
    p.add_argument("--strategy", default=STRATEGIES[0], help=f"one of {', '.join(STRATEGIES)}")
    p.add_argument("--out", default=None, help="write the certificate (.npz) here")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the summary")
    p.add_argument("--plot", default=None, metavar="FILE", help=plot_help)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--workers", type=int, default=1, help="local worker processes: they certify the segments between exact solves "
                   "(interpolate, two-sided) or compute chunks of the interval (paper, grid)")
    p.add_argument("--checkpoint", default=None, metavar="FILE",
                   help="write finished work here as the run goes (default with --out: OUT.partial.npz)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its checkpoint")
    p.add_argument("--max-solves", type=int, default=10_000, help="stop past this many exact solves (default 10000)")
    p.add_argument("--max-pieces", type=int, default=200_000, help="stop past this many pieces (default 200000)")
    p.add_argument("--solve-time-limit", type=parse_number, default=None, metavar="SECONDS",
                   help="per exact solver call (Clarabel, SCS); out of time = failed, the next solver is tried")


def _run_path(problem, args, meta):
    interval = tuple(args.range) if args.range else None
    checkpoint = args.checkpoint
    if checkpoint is None and args.out and args.workers == 1:
        checkpoint = f"{args.out}.partial.npz"
    if args.resume and checkpoint is None:
        raise InputError("--resume needs --checkpoint FILE or --out FILE (whose OUT.partial.npz it reads)")
    path = approximate_path(problem, eps=args.eps, interval=interval, relative=args.relative,
                            strategy=args.strategy, progress=not (args.no_progress or args.json), meta=meta,
                            workers=args.workers, checkpoint=checkpoint, resume=args.resume,
                            max_solves=args.max_solves, max_pieces=args.max_pieces,
                            solve_time_limit=args.solve_time_limit)
    if args.out:
        path.save(args.out)  # atomic; the checkpoint was removed when the path completed
    if args.plot:
        from .plotting import plot_bounds, save_figure

        save_figure(plot_bounds(path), args.plot)
    if args.json:
        print(json.dumps(path.to_json()))
    else:
        print(path.summary())
        if args.out:
            print(f"certificate written to {args.out}")
        if args.plot:
            print(f"figure written to {args.plot}")
    return 1 if path.uncovered() else 0


def cmd_path(args):
    cls = get_problem(args.problem)
    X, y, fmt, prep = _load(args)
    problem = cls(X, y, **_problem_kwargs(cls, args))
    meta = dict(data_file=str(args.data), format=fmt, preprocessing=prep)
    return _run_path(problem, args, meta)


def _recorded_data_file(certificate, recorded):
    """The data file a certificate records: as written, or, when that relative path does not
    exist from the current folder, relative to the certificate's folder (where ``path --out``
    may have been run from)."""
    from pathlib import Path as FsPath

    if not isinstance(recorded, str) or not recorded:
        raise InputError(f"the certificate records no data file ({recorded!r}): pass --data FILE")
    tried = [FsPath(recorded)]
    if not tried[0].is_absolute():
        tried.append(FsPath(certificate).parent / recorded)
    for file in tried:
        if file.is_file():
            return str(file)
    where = " or ".join(repr(str(p)) for p in dict.fromkeys(tried))
    raise FileNotFoundError(f"data file {recorded!r} recorded in the certificate does not exist (tried {where}): "
                            "pass --data FILE")


def cmd_verify(args):
    t0 = time.perf_counter()
    _, meta, malformed = read_for_verify(args.certificate)
    if malformed:  # a file that is not a well-formed certificate fails verification
        report = failed_report(*malformed)
    else:
        if args.data is None:
            args.data = _recorded_data_file(args.certificate, meta.get("data_file"))
        X, y, _, _ = _load(args, meta)
        report = verify(args.certificate, X, y)
    if args.json:
        top = report.max_gap_bound
        print(json.dumps(dict(ok=report.ok, certified=report.certified, sampled=report.sampled,
                              uncovered=report.uncovered, failures=list(report.failures),
                              max_gap_bound=top if np.isfinite(top) else None,
                              wall_s=round(time.perf_counter() - t0, 4))))
    else:
        print(report)
    if args.require_certified and (report.sampled or report.uncovered):
        return 1
    return 0 if report.ok else 1


def cmd_problems(args):
    for name in available_problems():
        cls = get_problem(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        bound = "interval bound" if cls.has_interval_bound else "point gaps only (sampled)"
        print(f"{name:14s} parameters: {', '.join(cls.parameters):18s} {bound:28s} {doc}")
    return 0


def cmd_demo(args):
    """A certified SVM bandwidth path on seeded synthetic data, in seconds."""
    X, y = make_classification(n=80, d=2, seed=0)
    np.savetxt(args.data_out, np.column_stack([X, y]), delimiter=",", header="x1,x2,label", comments="")
    problem = get_problem("kernel_svm")(X, y, c=1.0, bias="optimal")
    print(f"demo: kernel_svm on 80 seeded synthetic points (2 Gaussian classes, written to {args.data_out}), "
          f"C = 1, bandwidth t in [2^-6, 2^8], eps = {args.eps:g}")
    path = approximate_path(problem, eps=args.eps, interval=(2.0**-6, 2.0**8), progress=not args.no_progress,
                            meta=dict(data_file=str(args.data_out), format="csv", preprocessing="none"))
    print(path.summary())
    print(f"\n{'lo':>10} {'hi':>10} {'gap bound':>10}  kind       from exact solve at")
    step = max(1, len(path.pieces) // 12)
    for p in path.pieces[::step]:
        print(f"{p.lo:10.4g} {p.hi:10.4g} {p.gap_bound:10.4g}  {p.kind:10s} {', '.join(f'{a:.4g}' for a in p.anchors)}")
    if len(path.pieces) > 12:
        print(f"(every {step}th of {len(path.pieces)} pieces shown)")
    if args.out:
        path.save(args.out)
        print(f"\ncertificate written to {args.out} (sha256 of the data {data_sha256(problem.X, problem.y)[:12]}...)")
    try:
        from .plotting import plot_bounds, save_figure
    except ImportError:
        plot_bounds = None
    if plot_bounds is not None and args.plot:
        try:
            save_figure(plot_bounds(path), args.plot)
            print(f"figure of the upper/lower bounds written to {args.plot}")
        except ImportError:
            print("(install the plot extra for the figure: pip install 'approxpath[plot]')")
    return 0 if path.certified else 1


def _save_plot(fig, args):
    from .plotting import save_figure

    save_figure(fig, args.plot)
    if not args.json:
        print(f"figure written to {args.plot}")


def _figure_cond(args):
    """Figure 1: cond(K_t) of n uniform points in [0, 1]^d."""
    from .plotting import kernel_condition_numbers, plot_condition

    X = np.random.default_rng(args.seed).uniform(size=(args.n, args.d))
    lo, hi = args.range
    if not 0 < lo < hi:
        raise InputError(f"--range must satisfy 0 < LO < HI; got {lo!r} {hi!r}")
    ts = np.geomspace(lo, hi, args.points)
    cond = kernel_condition_numbers(X, ts)
    if args.json:
        print(json.dumps(dict(n=args.n, d=args.d, seed=args.seed, t=ts.tolist(), cond=cond.tolist())))
    else:
        print(f"{'t':>10} {'cond(K_t)':>12}")
        step = max(1, ts.size // 12)
        for t, c in zip(ts[::step], cond[::step]):
            print(f"{t:10.4g} {c:12.4g}")
    if args.plot:
        _save_plot(plot_condition(ts, cond, n=args.n, d=args.d), args)
    return 0


def _power_of_two(v):
    """``v`` as mathtext ``$2^{k}$`` when it is an integer power of two, else ``%.3g``."""
    k = np.log2(v)
    return f"$2^{{{int(k)}}}$" if k == round(k) else f"{v:.3g}"


def _figure_solves(args):
    """Figure 3: exact solves of the path against 1/eps, one line per data file (and strategy)."""
    from pathlib import Path as FsPath

    cls = get_problem(args.problem)
    kwargs = _problem_kwargs(cls, args)
    interval = tuple(args.range) if args.range else None
    counts = {}
    for file in args.data:
        X, y = load_data(file, args.format or "libsvm", n_features=args.n_features)
        problem = cls(preprocess(X, args.preprocess or "none"), y, **kwargs)
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
        print(json.dumps(dict(problem=args.problem, counts=counts_json)))
    if args.plot:
        from .plotting import plot_solves

        opts = ", ".join(f"{k}={v}" for k, v in problem.options().items() if k != "parameter")
        lo, hi = interval or problem.default_interval()
        strategies = f", strategy {args.strategy[0]}" if len(args.strategy) == 1 else ""
        title = f"{args.problem} ({opts}), {problem.parameter} in [{_power_of_two(lo)}, {_power_of_two(hi)}]{strategies}"
        _save_plot(plot_solves(counts, title=title), args)
    return 0


def _validation_data(args, cls):
    """(X, y, X_val, y_val, meta): files, a split of the training file, or the built-in sets."""
    from .data import make_sinc

    if args.data is None:
        if cls.criteria[0] == "error":
            X, y = make_classification(n=120, d=2, seed=0)
            X_val, y_val = make_classification(n=400, d=2, seed=1)
            return X, y, X_val, y_val, dict(data_file="synthetic two-class (seeded)")
        # the paper's section 6.2: 100 points of sinc on [-4, 4] with noise and 10 % outliers;
        # validation: 400 fresh points of the same distribution without outliers
        X, y = make_sinc(n=100, noise=0.1, outliers=0.1, seed=0)
        X_val, y_val = make_sinc(n=400, noise=0.1, seed=1)
        return X, y, X_val, y_val, dict(data_file="sinc, 10 % outliers (seeded)")
    X, y, fmt, prep = _load(args)
    meta = dict(data_file=str(args.data), format=fmt, preprocessing=prep)
    if args.val_data is not None:
        X_val, y_val = load_data(args.val_data, fmt, n_features=args.n_features or X.shape[1])
        return X, y, preprocess(X_val, prep), y_val, meta
    if not 0 < args.validation_fraction < 1:
        raise InputError(f"--validation-fraction must be in (0, 1); got {args.validation_fraction!r}")
    idx = np.random.default_rng(args.seed).permutation(X.shape[0])
    k = int(np.ceil(args.validation_fraction * X.shape[0]))
    return X[idx[k:]], y[idx[k:]], X[idx[:k]], y[idx[:k]], meta


def _figure_validation(args):
    """Figure 4 (right): a validation loss along the path, and the selected parameter."""
    from .selection import validation_curve

    cls = get_problem(args.problem)
    X, y, X_val, y_val, meta = _validation_data(args, cls)
    problem = cls(X, y, **_problem_kwargs(cls, args))
    criterion = args.criterion or cls.criteria[0]
    labels = getattr(problem, "labels", None)
    if criterion == "error" and labels is not None:  # the problem's own label mapping (kernel_svm: -> +-1)
        y_val = np.where(np.asarray(y_val) == labels[1], 1.0, -1.0)
    interval = tuple(args.range) if args.range else None
    path = approximate_path(problem, eps=args.eps, interval=interval, relative=args.relative, strategy=args.strategy,
                            progress=not (args.no_progress or args.json), meta=meta, workers=args.workers,
                            checkpoint=args.checkpoint, resume=args.resume)
    if args.out:
        path.save(args.out)
    curve = validation_curve(path, X_val, y_val, criterion=criterion, selection=args.selection, n_grid=args.n_grid)
    summary = dict(problem=problem.name, criterion=criterion, best_t=curve.best_t, best_loss=curve.best_loss,
                   best_gap_bound=curve.best_gap_bound, best_kind=curve.best_kind, eps=path.eps,
                   exact_solves=path.exact_solves, pieces=len(path.pieces), certified=path.certified,
                   evaluated=int(curve.t.size))
    if args.json:
        print(json.dumps(summary))
    else:
        print(path.summary())
        print(f"selected {problem.parameter} = {curve.best_t:.6g}: {criterion} = {curve.best_loss:.4g} on "
              f"{len(y_val)} validation points, certified gap <= {curve.best_gap_bound:.4g} ({curve.best_kind})")
    if args.plot:
        from .plotting import plot_validation

        _save_plot(plot_validation(curve, path), args)
    return 1 if path.uncovered() else 0


def cmd_figure(args):
    return {"cond": _figure_cond, "solves": _figure_solves, "validation": _figure_validation}[args.figure](args)


def _add_figure_parser(sub):
    from .selection import CRITERIA, SELECTIONS

    p = sub.add_parser("figure", help="the paper's figures: cond (Fig. 1), solves (Fig. 3), validation (Fig. 4)")
    fig = p.add_subparsers(dest="figure", required=True)

    q = fig.add_parser("cond", help="cond(K_t) over t of uniform random points (Figure 1)")
    q.add_argument("--n", type=int, default=100, help="number of points (default 100)")
    q.add_argument("--d", type=int, default=10, help="dimension (default 10)")
    q.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=(1e-5, 1e2),
                   help="bandwidth interval (default 1e-5 1e2)")
    q.add_argument("--points", type=int, default=60, help="values of t, log-spaced (default 60)")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--json", action="store_true")
    q.add_argument("--plot", default=None, metavar="FILE", help="save the figure (needs matplotlib)")

    q = fig.add_parser("solves", help="exact solves against 1/eps for several data files (Figure 3)")
    q.add_argument("problem", nargs="?", default="kernel_svm", help="registered problem (default kernel_svm)")
    q.add_argument("--data", nargs="+", required=True, metavar="FILE", help="data files, one line each")
    q.add_argument("--format", choices=("libsvm", "csv"), default=None, help="data format (default libsvm)")
    q.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    q.add_argument("--preprocess", choices=PREPROCESSING, default=None, help="feature scaling (default none)")
    _add_problem_args(q)
    q.add_argument("--eps", nargs="+", type=parse_number, default=[4, 2, 1, 0.5, 0.25, 0.125],
                   help="eps values (default 4 2 1 0.5 0.25 0.125)")
    q.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    q.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="parameter interval, e.g. 2^-10 2^10 (default: the problem's)")
    q.add_argument("--strategy", nargs="+", choices=STRATEGIES, default=[STRATEGIES[0]],
                   help=f"one or more of {', '.join(STRATEGIES)} (one line each; default {STRATEGIES[0]})")
    q.add_argument("--json", action="store_true", help="print the counts as one JSON line")
    q.add_argument("--plot", default=None, metavar="FILE", help="save the figure (needs matplotlib)")

    q = fig.add_parser("validation", help="validation loss along the path, best parameter (Figure 4, right)")
    q.add_argument("problem", help="registered problem name")
    _add_data_args(q, required=False)  # without --data: the built-in seeded sets (see _validation_data)
    q.add_argument("--val-data", default=None, metavar="FILE", help="validation file (same format)")
    q.add_argument("--validation-fraction", type=float, default=0.25,
                   help="without --val-data: share of --data held out (default 0.25)")
    q.add_argument("--seed", type=int, default=0, help="seed of the split")
    q.add_argument("--criterion", choices=CRITERIA, default=None, help="loss (default: the problem's first)")
    q.add_argument("--selection", choices=SELECTIONS, default="grid", help="evaluate at every piece or on a grid")
    q.add_argument("--n-grid", type=int, default=400, help="grid size (default 400)")
    _add_problem_args(q)
    _add_path_args(q, plot_help="save the figure (needs matplotlib)")
    p.set_defaults(func=cmd_figure)


def _fixed_options(cls, args):
    """Constructor keywords for a path over ``--parameter``: the option named like the path
    parameter (``--bandwidth`` on a bandwidth path, ``--lam`` on a lambda path) is the path's
    own coordinate, given by the file, and is dropped."""
    given = _problem_kwargs(cls, args)
    given.pop(given.get("parameter", cls.parameters[0]), None)
    return given


def cmd_exact(args):
    """An exact path of the source papers, every returned solution certified."""
    from .exact import certify, kernel_path, lambda_path, write_claimed

    if args.problem != "klasso":
        raise InputError(f"exact paths exist for: klasso (Wang et al.); got {args.problem!r}")
    t0 = time.perf_counter()
    X, y, fmt, prep = _load(args)
    lo, hi = args.range if args.range else (None, None)
    if args.parameter == "lam":
        if args.bandwidth is None:
            raise InputError("the lambda path needs the fixed kernel: --bandwidth T (t of exp(-t||x-x'||^2))")
        lam_min = lo if lo is not None else args.lam  # --lam alone: the end of the path
        path = lambda_path(X, y, args.bandwidth, lam_min, max_events=args.max_events, nu=args.ridge)
        if hi is not None and hi < path.t[-1]:
            path = path.restrict(path.t[0], hi)
    else:
        if args.lam is None:
            raise InputError("the bandwidth path needs the fixed lambda: --lam L")
        if lo is None:
            raise InputError("the bandwidth path needs its range of t: --range LO HI (e.g. 0.1 10 for Wang's "
                             "sigma from 10 to 0.1); --bandwidth T sets where it starts (default LO)")
        path = kernel_path(X, y, args.lam, (lo, hi), start=args.bandwidth, start_solution=args.start,
                           theta=args.theta, eps=args.breakpoint_tol, nu=args.ridge, marginal=args.marginal,
                           max_events=args.max_events)
    t1 = time.perf_counter()
    report = certify(path, tol=args.tol, relative=args.relative)
    t2 = time.perf_counter()
    if args.out:
        arrays = path.to_arrays()
        meta = dict(problem="klasso", parameter=path.parameter, lam=path.lam, bandwidth=path.bandwidth,
                    algorithm=path.algorithm, settings=path.settings, stop_reason=path.stop_reason,
                    data_file=str(args.data), format=fmt, preprocessing=prep, data_sha256=data_sha256(X, y))
        write_claimed(args.out, arrays.pop("t"), {k: arrays.pop(k) for k in ("beta", "beta0")},
                      **({} if str(args.out).lower().endswith(".csv") else dict(arrays, meta=meta)))
    if args.json:
        out = report.to_json()  # ok, points, max_gap (at max_gap_t), max_relative_gap, segments, flagged
        out.update(algorithm=path.algorithm, lam=path.lam, bandwidth=path.bandwidth, range=list(path.interval),
                   events=len(path.events), breakpoints=int(path.breakpoints.size), linear_solves=path.linear_solves,
                   max_cond=path.max_cond if np.isfinite(path.max_cond) else None, stop_reason=path.stop_reason,
                   path_s=round(t1 - t0, 4), certify_s=round(t2 - t1, 4), wall_s=round(t2 - t0, 4))
        print(json.dumps(out))
    else:
        print(path.summary())
        print(report)
        if args.out:
            print(f"path written to {args.out}")
    return 0 if report.ok else 1


def cmd_crosscheck(args):
    """Certify an exact path computed anywhere: gaps at its points (and along claimed-linear segments)."""
    from .exact import crosscheck, read_claimed

    cls = get_problem(args.problem)
    X, y, _, _ = _load(args)
    problem = cls(X, y, **_fixed_options(cls, args))
    arrays = read_claimed(args.path)
    linear = bool(np.asarray(arrays.get("linear", False))) if args.linear is None else args.linear
    fields = [f.name for f in dataclasses.fields(problem.Primal)]
    report = crosscheck(problem, arrays["t"], {k: arrays[k] for k in fields if k in arrays}, tol=args.tol,
                        relative=args.relative, linear=linear, samples=args.samples, cond=arrays.get("cond"))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(report)
    return 0 if report.ok else 1


def build_parser():
    parser = argparse.ArgumentParser(prog="approxpath", description="Certified eps-approximate solution paths.")
    parser.add_argument("--version", action="version", version=f"approxpath {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("path", help="compute a certified path")
    p.add_argument("problem", help="registered problem name (see `approxpath problems`)")
    _add_data_args(p)
    _add_problem_args(p)
    _add_path_args(p)
    p.set_defaults(func=cmd_path)

    p = sub.add_parser("verify", help="re-check a certificate with numpy only")
    p.add_argument("certificate")
    _add_data_args(p, required=False)
    p.add_argument("--require-certified", action="store_true", help="fail on sampled pieces too")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("exact", help="an exact path of the source papers (klasso: Wang et al.), certified")
    p.add_argument("problem", help="klasso")
    _add_data_args(p)
    p.add_argument("--parameter", choices=("lam", "bandwidth"), default="bandwidth",
                   help="lam: the lambda-path; bandwidth: the kernel path (default)")
    p.add_argument("--lam", type=parse_number, default=None,
                   help="bandwidth path: the fixed lambda; lambda path: where it ends (if no --range)")
    p.add_argument("--bandwidth", type=parse_number, default=None,
                   help="lambda path: the fixed t of exp(-t||x-x'||^2); bandwidth path: where it starts (default LO)")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="lambda path: [lam_min, lam_max] (default [1e-3, 1] x lam_max); bandwidth path: the t range")
    p.add_argument("--theta", type=parse_number, default=0.95, help="kernel path: decay rate of sigma (default 0.95)")
    p.add_argument("--breakpoint-tol", type=parse_number, default=1e-6,
                   help="kernel path: relative tolerance of a breakpoint (the paper's eps, default 1e-6)")
    p.add_argument("--ridge", type=parse_number, default=0.0, help="ridge term nu (default 0)")
    p.add_argument("--marginal", type=parse_number, default=None, metavar="XI",
                   help="kernel path: check only marginal points between events (|g_i| >= lam (1 - XI))")
    p.add_argument("--start", choices=("lambda-path", "cvxpy"), default="lambda-path",
                   help="kernel path: the exact start solution")
    p.add_argument("--max-events", type=int, default=None)
    p.add_argument("--tol", type=parse_number, default=1e-6, help="flag solutions whose certified gap exceeds this")
    p.add_argument("--relative", action="store_true", help="the tolerance is relative to 1 + |dual objective|")
    p.add_argument("--out", default=None, help="write the path (.npz, or .csv: t, beta0, beta[i])")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.set_defaults(func=cmd_exact)

    p = sub.add_parser("crosscheck", help="certify the points (and linear segments) of a path computed anywhere")
    p.add_argument("problem", help="registered problem name")
    _add_data_args(p)
    _add_problem_args(p)
    p.add_argument("--path", required=True, help="npz or csv: t and the primal fields (klasso: beta, beta0)")
    p.add_argument("--tol", type=parse_number, default=1e-6, help="flag gaps above this (default 1e-6)")
    p.add_argument("--relative", action="store_true", help="the tolerance is relative to 1 + |dual objective|")
    lin = p.add_mutually_exclusive_group()
    lin.add_argument("--linear", dest="linear", action="store_true", default=None,
                     help="the path is linear between its points: check the segments too (certified where the "
                          "problem has a segment bound, e.g. klasso over lambda; else sampled)")
    lin.add_argument("--not-linear", dest="linear", action="store_false", help="check the points only")
    p.add_argument("--samples", type=int, default=8, help="interior samples per linear segment (default 8)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.set_defaults(func=cmd_crosscheck)

    p = sub.add_parser("problems", help="list the registered problems")
    p.set_defaults(func=cmd_problems)

    p = sub.add_parser("demo", help="run on built-in synthetic data")
    p.add_argument("--eps", type=parse_number, default=0.5)
    p.add_argument("--out", default="demo_certificate.npz")
    p.add_argument("--data-out", default="demo_data.csv", help="where the synthetic data are written")
    p.add_argument("--plot", default="demo_bounds.png")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_demo)

    _add_figure_parser(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InputError, KeyError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"approxpath: error: {msg}", file=sys.stderr)
        return 2
    except (ValueError, BudgetExceededError) as exc:
        print(f"approxpath: error: {exc}", file=sys.stderr)
        return 2
    except SolverError as exc:
        print(f"approxpath: solver failure: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
