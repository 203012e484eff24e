"""``approxpath select``: the path parameter chosen by k-fold cross-validation (or a problem's
closed-form criterion) with a certified δ (:func:`approxpath.selection.select`)."""

from __future__ import annotations

import sys
from pathlib import Path as FsPath

from .options import add_problem_options, parse_number
from .checks import as_advice, build_problem, check_outputs, interrupted, selecting, written_note
from .commands import add_data_args, add_threads_arg, budget, holdout_targets, load_choice, save_plot, worker_count
from .output import emit_json, progress_wanted
from .running import clock, dask_client, one_core_note

__all__ = ["COMMANDS"]


def cmd_select(args):
    from ..errors import InputError
    from ..registry import get_problem
    from ..selection import select
    from ..selection.search import certificate_refusal
    from ..selection.validation import enclosed_on_workers

    cls = get_problem(args.problem)
    if args.val_data is not None and args.cv is not None:
        raise InputError("--val-data is a hold-out set in place of --cv K's folds: drop one of them")
    if args.cv is None and args.val_data is None and not getattr(cls.Bound, "CLOSED_FORM_CRITERIA", None):
        raise InputError(f"{cls.name} has no closed-form criterion: pass --cv K (e.g. --cv 5) to select by a "
                         "cross-validation loss, or --val-data FILE (a hold-out set)")  # (the library says cv=5)
    if args.shuffle is not None and args.cv is None:
        raise InputError("--shuffle SEED shuffles the points before --cv K splits them: pass --cv K")
    check_outputs(args, [args.data])  # before the data are read and the folds' paths run
    weight, parameter = getattr(cls.Bound, "weight", None), getattr(args, "opt_parameter", None) or "bandwidth"
    if weight is None and (args.over or args.weights is not None):  # (a plug-in's bound sweeping no kernel)
        raise InputError(f"--over and --weights choose a kernel problem's bandwidth and weight; {cls.name}'s path has "
                         "one parameter, which select chooses: drop them")
    named = [v.strip() for v in args.over.split(",")] if args.over else [parameter]
    if len(set(named)) < len(named):
        raise InputError(f"--over names a parameter twice ({args.over}): name each once, e.g. --over "
                         f"{weight},bandwidth")
    over = set(named)
    if over != {parameter}:
        from .surface import select_over_two

        if args.workers != 1 or args.dask is not None:  # (the surface search has no paths to hand out)
            raise InputError("--workers and --dask run the folds' paths of a choice over one parameter; a choice "
                             f"over both (--over {args.over}) runs in this process: drop them")

        if over == {"bandwidth"}:  # (a path over the weight, --parameter WEIGHT, chooses the weight)
            raise InputError(f"--over bandwidth chooses the bandwidth, but --parameter {parameter} makes {parameter} "
                             f"the path's parameter: drop --parameter {parameter}, or pass --over {parameter}")
        if over == {weight}:  # (the weight alone is a path over it, at a fixed bandwidth)
            raise InputError(f"--over {weight} chooses {weight} alone: pass --parameter {weight} --bandwidth T")
        if over != {"bandwidth", weight}:
            raise InputError(f"--over takes {parameter} or bandwidth,{weight} for {cls.name}; got {args.over!r}")
        return select_over_two(args, cls)
    if args.weights is not None:  # (the weight is the problem's option here: --weights would be ignored)
        alone = (f"over the bandwidth alone, set --{weight}" if parameter == "bandwidth" else
                 f"over {weight} alone (--parameter {weight}), give its range with --range")
        raise InputError(f"--weights is the range of --{weight} when both parameters are chosen "
                         f"(--over bandwidth,{weight}); {alone}")
    X, y, X_val, y_val, fmt, prep = load_choice(args)
    problem = build_problem(cls, X, y, args)
    y_val = holdout_targets(problem, y_val)
    refused = certificate_refusal(problem, args.cv, held_out=X_val is not None) if args.out else None
    if refused:
        raise InputError(f"--out: {refused}")
    interval = tuple(args.range) if args.range else None
    client = dask_client(args.dask, args.workers)
    start = clock()
    try:
        s, caught, stopped = selecting(lambda: select(
            problem, args.criterion, cv=args.cv, X_val=X_val, y_val=y_val, shuffle=args.shuffle, eps=args.eps,
            relative=args.relative, interval=interval, tol=args.tol, strict=False, workers=args.workers,
            executor=client, **budget(args),
            progress=progress_wanted(args)))
    finally:
        if client is not None:
            client.close()
    # (an interrupted run writes no file: Ctrl-C asked for an end, and enclosing every cell again takes a while)
    written = s.save(args.out) if args.out and not stopped else None
    if args.json:
        # the options held fixed (a paper's reader needs the C or λ of a bandwidth's choice) and the data's scaling
        out = dict(problem=cls.name, data_file=str(args.data), preprocess=prep, options=problem.path_options(),
                   range=[float(s.edges[0]), float(s.edges[-1])], eps=args.eps, cv=args.cv,
                   val_data=args.val_data, shuffle=args.shuffle,
                   **s.to_json())
        # what stderr says too, for a script that reads the JSON alone (a choice at an end of the range)
        out["warnings"] = [as_advice(w.message) for w in caught]
        if stopped:
            out["interrupted"] = True
        if written is not None:
            out["certificate"] = dict(written, out=args.out)
        emit_json(out)
    else:
        print(problem.describe())
        print(s.summary())
        if written is not None:
            print(written_note(args, written))
    for w in caught:  # why delta > tol (the budget, or a stalled enclosure), a choice at an end of the range
        print(f"approxpath: {as_advice(w.message)}", file=sys.stderr)
    if stopped:  # (no figure: Ctrl-C asked for an end)
        return interrupted(s)
    # (without paths, or with enclosures that stay here, the workers would have little to do)
    if args.workers == 1 and args.dask is None and s.paths and enclosed_on_workers(problem.bound) and not args.json:
        note = one_core_note("selection", start, "runs the folds' paths and the enclosures of their held-out "
                             "predictions in {n} processes, with the same result")
        if note is not None:
            print(note, file=sys.stderr)
    if args.plot:
        from ..selection.figures import plot_selection

        save_plot(plot_selection(s, parameter=problem), args, head=f"{cls.name} on {FsPath(args.data).name}")
    return 0 if (s.kind == "sampled" or s.reached) else 1


def _select_args(p, cls, argv=()):
    p.add_argument("problem", help="registered problem name; `approxpath select PROBLEM --help` lists its options")
    add_data_args(p)
    add_threads_arg(p)
    if cls is not None:
        add_problem_options(p, cls)
    p.add_argument("--criterion", default=None,
                   help="error, mae, mse (with --cv) or a closed-form criterion of the problem (kernel_ridge: "
                        "loocv, gcv, lml); default: the problem's first")
    p.add_argument("--cv", type=int, default=None, metavar="K",
                   help="K-fold cross-validation (stratified for the 0-1 error); without it the problem's "
                        "closed-form criterion")
    p.add_argument("--val-data", default=None, metavar="FILE", help="a hold-out set in place of --cv: validation "
                   "data in --data's format, scaled as --data is by --preprocess")
    p.add_argument("--shuffle", type=int, default=None, metavar="SEED",
                   help="shuffle the points before --cv splits them, as scikit-learn's KFold(K, shuffle=True, "
                        "random_state=SEED) (default: folds of consecutive points, as in the file)")
    p.add_argument("--eps", type=parse_number, default=None, help="eps of the first paths (default: 1e-3 of the "
                   "zero model's objective, 1e-3 relative over C or lam; unused where kernel_ridge needs no path: "
                   "its closed-form criteria, its losses over lam)")
    p.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="parameter interval, e.g. 2^-10 2^10 (default: the problem's)")
    p.add_argument("--tol", type=parse_number, default=None,
                   help="stop when delta <= TOL, in the criterion's units (default: 0.01 for error and lml, 1%% of "
                        "the targets' variance for mse, loocv and gcv, of their standard deviation for mae)")
    p.add_argument("--max-solves", type=int, default=None,
                   help="exact solves allowed in all (default 2000 over one parameter, 20000 over both)")
    p.add_argument("--workers", type=worker_count, default=1, help="local processes (-1 one per core) for the folds' "
                   "paths and (klasso) the enclosures of their held-out predictions (none where the criterion needs "
                   "no path)")
    p.add_argument("--dask", default=None, metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786): its workers "
                   "run the folds' paths and enclosures as --workers does")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (none with --json either)")
    p.add_argument("--over", default=None, help="the parameters to choose: the path's parameter (default: "
                   "bandwidth, or the weight with --parameter c|lam), or both, e.g. c,bandwidth (kernel_svm) or "
                   "lam,bandwidth (needs --weights; --cv, --val-data, or kernel_ridge's closed-form criterion)")
    p.add_argument("--weights", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="with --over WEIGHT,bandwidth: the weight's range, e.g. 2^-5 2^15")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the criterion's enclosure band (needs matplotlib)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the choice's certificate (.npz; with --cv or "
                   "--val-data): the folds, their paths and the criterion's cells, for approxpath verify FILE")
    p.set_defaults(func=cmd_select)


#: name -> (help, function adding its arguments), merged by :func:`approxpath.cli.build_parser`.
COMMANDS = {"select": ("choose the parameter by cross-validation with a certified delta", _select_args)}
