"""``approxpath surface``: a certified surface over the bandwidth and the weight
(:func:`approxpath.approximate_surface`), and the two-parameter mode of ``approxpath select``
(``--over c,bandwidth``: :func:`approxpath.select_surface`)."""

from __future__ import annotations

import sys
from pathlib import Path as FsPath

from ..errors import InputError
from .options import add_problem_options, parse_number, problem_kwargs
from .checks import as_advice, build_problem, check_outputs, interrupted, selecting, written_note
from .commands import add_data_args, add_threads_arg, budget, data_meta, holdout_targets, load_choice, save_plot
from .output import emit_json, progress_wanted

__all__ = ["COMMANDS", "select_over_two"]


def _problem(args, cls, weights):
    """The problem on ``--data`` with its weight set to the range's lower end (a surface sets
    it per cell: the weight's own flag, which would be ignored, is refused); ``--weights``
    checked first (its errors name it, not the weight it sets)."""
    from ..surface.engine import check_weight_range
    from ..validate import positive_range

    options = problem_kwargs(cls, args)
    weight = getattr(cls.Bound, "weight", None)
    if weight is None:  # (a plug-in's bound that sweeps no kernel parameter)
        raise InputError(f"a surface sweeps a kernel problem's bandwidth and weight; {cls.name} has one path "
                         "parameter: use approxpath path or select")
    if options.get(weight) is not None:
        raise InputError(f"--{weight} is set cell by cell over both parameters: give its range with --weights LO HI "
                         f"(not --{weight})")
    if options.get("parameter", "bandwidth") != "bandwidth":  # (the library's message names parameter=)
        fixed = " and --bandwidth" if options.get("bandwidth") is not None else ""
        raise InputError(f"a surface sweeps the bandwidth (--range) and {weight} (--weights): drop --parameter "
                         f"{options['parameter']}{fixed}")
    lo, hi = positive_range("--weights", weights)
    X, y, X_val, y_val, fmt, prep = load_choice(args)
    options[weight] = lo
    problem = build_problem(cls, X, y, args, options)
    check_weight_range(problem, "--weights", lo, hi)
    return problem, fmt, prep, X_val, holdout_targets(problem, y_val)


def cmd_surface(args):
    from ..registry import get_problem
    from ..surface import approximate_surface

    cls = get_problem(args.problem)
    check_outputs(args, [args.data])
    problem, fmt, prep, _, _ = _problem(args, cls, args.weights)
    meta = data_meta(args, fmt, prep)
    s = approximate_surface(problem, args.eps, tuple(args.weights), tuple(args.range) if args.range else None,
                            relative=args.relative, max_solves=args.max_solves,
                            progress=progress_wanted(args), meta=meta)
    if args.out:
        s.save(args.out)
    if args.json:
        emit_json(dict(s.to_json(), out=args.out))
    else:
        print(s.summary())
        if args.out:
            print(f"certificate written to {args.out} (check it: approxpath verify {args.out} --data {args.data})")
    if args.plot:
        from ..surface.figures import plot_surface

        save_plot(plot_surface(s), args)
    return 0 if s.certified else 1


def select_over_two(args, cls):
    """``approxpath select ... --over c,bandwidth``: both parameters by k-fold CV (or, without
    ``--cv``, by a closed-form criterion of the problem: kernel ridge's).  ``--weights LO HI``: the
    weight's range; ``--range``: the bandwidths'.  Returns the exit status: 0 where the selection
    reached ``delta <= tol``, else 1 (its warnings printed to standard error as
    :func:`~approxpath.cli.checks.as_advice` words them).  :class:`InputError` for no ``--weights``,
    the weight's own flag, a ``--parameter`` other than the bandwidth, or a ``--weights`` range that
    is not positive or whose lower end double precision cannot tell from 0."""
    from ..selection.search import certificate_refusal
    from ..surface import select_surface

    if args.weights is None:
        raise InputError(f"--over {args.over} needs --weights LO HI (the range of --{cls.Bound.weight})")
    problem, _, prep, X_val, y_val = _problem(args, cls, args.weights)
    refused = certificate_refusal(problem, args.cv, both=True, held_out=X_val is not None) if args.out else None
    if refused:
        raise InputError(f"--out: {refused}")
    s, caught, stopped = selecting(lambda: select_surface(
        problem, args.criterion, cv=args.cv, X_val=X_val, y_val=y_val, shuffle=args.shuffle, eps=args.eps,
        relative=args.relative, bandwidths=tuple(args.range) if args.range else None, weights=tuple(args.weights),
        tol=args.tol, strict=False, **budget(args), progress=progress_wanted(args)))
    written = s.save(args.out) if args.out and not stopped else None  # (none for an interrupted run, as over one)
    if args.json:
        fixed = {k: v for k, v in problem.path_options().items() if k != cls.Bound.weight}  # (the weight is chosen)
        emit_json(dict(problem=cls.name, data_file=str(args.data), preprocess=prep, options=fixed, eps=args.eps,
                       cv=args.cv, val_data=args.val_data, shuffle=args.shuffle, **s.to_json(),
                       warnings=[as_advice(w.message, box=True) for w in caught],  # (what stderr says too)
                       **({"interrupted": True} if stopped else {}),
                       **({} if written is None else {"certificate": dict(written, out=args.out)})))
    else:
        print(problem.describe(chosen=s.weight))
        print(s.summary())
        if written is not None:
            print(written_note(args, written))
    for w in caught:  # stopped before delta <= tol
        print(f"approxpath: {as_advice(w.message, box=True)}", file=sys.stderr)
    if stopped:  # (no figure: Ctrl-C asked for an end)
        return interrupted(s)
    if args.plot:
        from ..surface.figures import plot_surface_selection

        save_plot(plot_surface_selection(s, kernel=problem), args, head=f"{cls.name} on {FsPath(args.data).name}")
    return 0 if s.reached else 1


def _surface_args(p, cls, argv=()):
    p.add_argument("problem", help="kernel_svm, klasso, robust_l1 or kernel_ridge; `approxpath surface PROBLEM "
                                   "--help` lists its options")
    add_data_args(p)
    add_threads_arg(p)
    if cls is not None:
        add_problem_options(p, cls)
    p.add_argument("--eps", type=parse_number, required=True, help="admissible gap at every point of the box")
    p.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="bandwidths, e.g. 2^-15 2^3 (default: the problem's interval)")
    p.add_argument("--weights", nargs=2, type=parse_number, metavar=("LO", "HI"), required=True,
                   help="the weight's range (C of kernel_svm, lambda of the others), e.g. 2^-5 2^15")
    p.add_argument("--max-solves", type=int, default=20_000, help="exact solves allowed (default 20000)")
    p.add_argument("--out", default=None, help="write the surface certificate (.npz) here")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="save the figure of the cells coloured by their gap bounds (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_surface)


#: name -> (help, function adding its arguments), merged by :func:`approxpath.cli.build_parser`.
COMMANDS = {"surface": ("certified surface over the bandwidth and the weight (C, lambda)", _surface_args)}
