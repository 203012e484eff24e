"""The commands of :mod:`approxpath.cli` for exact paths: ``exact`` (the source papers' exact
kLASSO paths, every returned solution certified) and ``crosscheck`` (certify a path computed
anywhere)."""

from __future__ import annotations

import dataclasses
import json
import sys
import time

import numpy as np

from ..data import data_sha256
from ..errors import InputError
from ..registry import get_problem
from ..validate import finite_number
from .options import add_problem_options, parse_number, problem_kwargs
from .checks import build_problem, check_outputs
from .commands import add_data_args, add_threads_arg, data_meta, load, load_with_validation
from .output import emit_json

__all__ = ["COMMANDS"]


def _fixed_options(cls, args):
    """Constructor keywords for a path over ``--parameter``: the option named like the path
    parameter (``--bandwidth`` on a bandwidth path, ``--lam`` on a lambda path) is the path's
    own coordinate, given by the file, and is dropped."""
    given = problem_kwargs(cls, args)
    given.pop(given.get("parameter", cls.Bound.parameters[0]), None)
    return given


#: The paths of ``exact`` by ``--parameter``, and the options that only one of them reads (flag,
#: argument name): given to the other, they would be ignored without a word.
_PATHS = {"lam": "lambda path", "bandwidth": "kernel path"}
_PATH_ONLY = {"lam": (("--max-landmarks", "max_landmarks"), ("--target-mse", "target_mse"), ("--val-data", "val_data")),
              "bandwidth": (("--theta", "theta"), ("--breakpoint-tol", "breakpoint_tol"), ("--marginal", "marginal"),
                            ("--start", "start"))}


def check_path_flags(args, shared=()):
    """:class:`InputError` for a flag of the other exact path than ``--parameter``'s (``exact`` and
    ``figure exact-path``: it would be ignored without a word); ``shared``: argument names both
    paths use there (the figure's ``val_data``)."""
    other = "bandwidth" if args.parameter == "lam" else "lam"
    ignored = [flag for flag, name in _PATH_ONLY[other] if name not in shared and getattr(args, name, None) is not None]
    if ignored:
        raise InputError(f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} for the {_PATHS[other]} only "
                         f"(--parameter {other}); this is the {_PATHS[args.parameter]}")


def _short_of_request(path, args):
    """Why ``path`` stopped before what the command line asked for, or None when it did not: it
    could not continue (``ExactPath.failed``: a singular system, an active set it cannot
    resolve), or it reached the default event limit, a guard against runaway loops rather than
    a request (``--max-events`` given, that stop was asked for).  Exit status 4 then; the
    certified points computed are still printed and written."""
    if path.failed:
        return path.stop_reason
    limit = path.settings.get("max_events")
    if args.max_events is None and limit is not None and len(path.events) >= limit:
        return f"{path.stop_reason} (the default limit, 50 n events, against runaway loops: raise it with --max-events)"
    return None


def _incomplete_line(path, args, reason):
    """The one line on stderr of a path that stopped short (exit status 4)."""
    if path.parameter == "lam":
        where = f"it ends at lam = {path.t[0]:.6g}, above lam_min = {path.settings.get('lam_min', float('nan')):.6g}"
    else:
        lo, hi = path.settings.get("interval", (float("nan"), float("nan")))
        where = f"it covers t in [{path.t[0]:.6g}, {path.t[-1]:.6g}], not [{lo:.6g}, {hi:.6g}]"
    kept = f"; the {path.t.size} solutions computed up to there are " + (f"written to {args.out}" if args.out else
                                                                          "checked and printed")
    return f"approxpath: incomplete exact path: {where}: {reason}{kept}"


def cmd_exact(args):
    """An exact path of the source papers, every returned solution certified."""
    from ..exact import EXACT_PROBLEMS, ExactPathError, certify, kernel_path, lambda_path, write_claimed
    from ..validate import choice, positive_range

    choice("problem for exact paths", args.problem, EXACT_PROBLEMS)
    if args.max_events is not None and args.max_events < 0:
        raise InputError(f"--max-events must be a nonnegative integer (0: the path's first point only); "
                         f"got {args.max_events}")
    check_outputs(args, [args.data], out_suffixes=(".npz", ".csv"))
    t0 = time.perf_counter()
    lo, hi = positive_range("--range", args.range) if args.range else (None, None)
    check_path_flags(args)
    if args.target_mse is not None and args.val_data is not None:  # (read like --data, scaled with its scaling)
        X, y, X_val, y_val, fmt, prep = load_with_validation(args)
    else:
        (X, y, fmt, prep), X_val, y_val = load(args), None, None
    if args.parameter == "lam":
        if args.bandwidth is None:
            raise InputError("the lambda path needs the fixed kernel: --bandwidth T (t of exp(-t||x-x'||^2))")
        lam_min = lo if lo is not None else args.lam  # --lam alone: the end of the path
        if args.target_mse is not None and args.val_data is None:
            raise InputError("--target-mse needs validation data: --val-data FILE (same format)")
        path = lambda_path(X, y, args.bandwidth, lam_min, max_events=args.max_events, max_landmarks=args.max_landmarks,
                           target_mse=args.target_mse, X_val=X_val, y_val=y_val, nu=args.ridge)
        if path.t[0] == 0.0:  # (no lower end given, and the default 1e-3 lambda_max is 0)
            raise InputError("lambda_max = 0 (y is constant, or the kernel's columns are all alike): beta = 0 is "
                             "optimal for every lambda > 0; give the path's lower end: --lam L or --range LO HI")
        short = _short_of_request(path, args)  # (before restrict, which keeps the range's events only)
        if hi is not None and hi < path.t[0] and short:  # short, above the range asked for
            raise ExactPathError(f"the lambda-path stopped at lam = {path.t[0]:.6g}, above the requested range "
                                 f"[{lam_min:.6g}, {hi:.6g}]: {path.stop_reason}")
        if hi is not None and hi < path.t[-1]:
            path = path.restrict(path.t[0], hi)
    else:
        if args.lam is None:
            raise InputError("the bandwidth path needs the fixed lambda: --lam L")
        if lo is None:
            raise InputError("the bandwidth path needs its range of t: --range LO HI (e.g. 0.1 10 for Wang's "
                             "sigma from 10 to 0.1); --bandwidth T sets where it starts (default LO)")
        given = dict(start_solution=args.start, theta=args.theta, eps=args.breakpoint_tol)  # (None: kernel_path's)
        try:
            path = kernel_path(X, y, args.lam, (lo, hi), start=args.bandwidth, nu=args.ridge, marginal=args.marginal,
                               max_events=args.max_events, **{k: v for k, v in given.items() if v is not None})
        except (ExactPathError, InputError) as exc:  # (its advice and names in the command line's words)
            said = str(exc).replace("start_solution='cvxpy'", "--start cvxpy")
            said = said.replace("eps must", "--breakpoint-tol must").replace("theta must", "--theta must")
            raise type(exc)(said) from None
        short = _short_of_request(path, args)
    t1 = time.perf_counter()
    report = certify(path, tol=args.tol, relative=args.relative)
    t2 = time.perf_counter()
    if args.export:
        from ..export import export_table

        export_table(path, args.export, report=report)
    if args.out:
        from ..machine import describe

        arrays = path.to_arrays()
        meta = dict(problem="klasso", parameter=path.parameter, lam=path.lam, bandwidth=path.bandwidth,
                    algorithm=path.algorithm, settings=path.settings, stop_reason=path.stop_reason,
                    **data_meta(args, fmt, prep), data_sha256=data_sha256(X, y),
                    machine=describe())
        write_claimed(args.out, arrays.pop("t"), {k: arrays.pop(k) for k in ("beta", "beta0")},
                      **({} if str(args.out).lower().endswith(".csv") else dict(arrays, meta=meta)))
    if args.json:
        out = report.to_json()  # ok, points, max_gap (at max_gap_t), max_relative_gap, segments, flagged
        # ok: every returned solution certified and the path complete (ended where it was asked to)
        out.update(ok=bool(report.ok and short is None), complete=short is None,
                   algorithm=path.algorithm, lam=path.lam, bandwidth=path.bandwidth, range=list(path.interval),
                   events=len(path.events), breakpoints=int(path.breakpoints.size), linear_solves=path.linear_solves,
                   max_cond=float(path.max_cond), stop_reason=path.stop_reason,  # (inf: null, by emit_json)
                   path_s=round(t1 - t0, 4), certify_s=round(t2 - t1, 4), wall_s=round(t2 - t0, 4))
        emit_json(out)
    else:
        print(path.summary())
        print(report)
        for what, file in (("path", args.out), ("table", args.export)):
            if file:
                print(f"{what} written to {file}")
    if short is not None:
        print(_incomplete_line(path, args, short), file=sys.stderr)
    if not report.ok:
        return 1
    return 4 if short is not None else 0


def cmd_crosscheck(args):
    """Certify an exact path computed anywhere: gaps at its points (and along claimed-linear segments)."""
    from ..exact import crosscheck, read_claimed
    from ..exact.crosscheck import DEFAULT_SAMPLES

    cls = get_problem(args.problem)
    X, y, _, _ = load(args)
    problem = build_problem(cls, X, y, args, _fixed_options(cls, args))
    arrays = read_claimed(args.path)
    _check_same_path(arrays, problem, args.path)
    linear = bool(np.asarray(arrays.get("linear", False))) if args.linear is None else args.linear
    if args.samples is not None and not linear:  # (it would be ignored without a word)
        raise InputError("--samples samples the segments of a path claimed linear between its points; this path is "
                         "checked at its points only (--not-linear, or a file that does not say linear)")
    fields = [f.name for f in dataclasses.fields(problem.Primal)]
    samples = DEFAULT_SAMPLES if args.samples is None else args.samples
    report = crosscheck(problem, arrays["t"], {k: arrays[k] for k in fields if k in arrays}, tol=args.tol,
                        relative=args.relative, linear=linear, samples=samples, cond=arrays.get("cond"),
                        interval=args.interval)
    if args.json:
        emit_json(report.to_json())
    else:
        print(report)
    return 0 if report.ok else 1


def _check_same_path(arrays, problem, file):
    """:class:`InputError` when the file says (its ``meta``, as ``exact --out`` writes it) that it
    is a path of another problem, over the other parameter, or at another fixed value than the
    problem given: its ``t`` would be read as values of another path's parameter."""
    if "meta" not in arrays:
        return
    try:
        meta = json.loads(str(arrays["meta"]))
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise InputError(f"{str(file)!r}: its 'meta' is not a JSON object (as `approxpath exact --out` writes it)")
    said = meta.get("problem", problem.name)
    if said != problem.name:
        raise InputError(f"{str(file)!r} is a path of {said}, not of {problem.name}: crosscheck it as {said}")
    parameter = meta.get("parameter", problem.parameter)
    if parameter != problem.parameter:
        raise InputError(f"{str(file)!r} is a path over {parameter}, not {problem.parameter}: pass --parameter "
                         f"{parameter} (and its fixed value) to crosscheck it")
    for name in ("lam", "bandwidth"):
        value, given = meta.get(name), getattr(problem, name, None)
        if value is not None:  # (as exact --out writes it: a number)
            finite_number(f"{str(file)!r}: its meta's {name!r}", value)
        if name != parameter and value is not None and given != value:
            other = "" if given is None else f", not {given:g}"
            raise InputError(f"{str(file)!r} is a path at {name} = {value:g}{other}: pass --{name} {value:g}")


# --relative of exact and crosscheck (approxpath.exact.crosscheck.objective_scale)
_RELATIVE_HELP = ("the tolerance is relative to the objective's scale (the larger of |dual objective| and the "
                  "zero model's objective)")


def _exact_args(p, cls, argv=()):
    p.add_argument("problem", help="klasso")
    add_data_args(p)
    add_threads_arg(p)
    p.add_argument("--parameter", choices=("lam", "bandwidth"), default="bandwidth",
                   help="lam: the lambda-path; bandwidth: the kernel path (default bandwidth)")
    p.add_argument("--lam", type=parse_number, default=None,
                   help="bandwidth path: the fixed lambda; lambda path: where it ends (if no --range)")
    p.add_argument("--bandwidth", type=parse_number, default=None,
                   help="lambda path: the fixed t of exp(-t||x-x'||^2); bandwidth path: where it starts (default LO)")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="lambda path: [lam_min, lam_max] (default [1e-3, 1] x lam_max); bandwidth path: the t range")
    p.add_argument("--theta", type=parse_number, default=None, help="kernel path: decay rate of sigma (default 0.95)")
    p.add_argument("--breakpoint-tol", type=parse_number, default=None,
                   help="kernel path: relative tolerance of a breakpoint (the paper's eps, default 1e-6)")
    p.add_argument("--ridge", type=parse_number, default=0.0, help="ridge term nu (default 0)")
    p.add_argument("--marginal", type=parse_number, default=None, metavar="XI",
                   help="kernel path: check only marginal points between events (|g_i| >= lam (1 - XI))")
    p.add_argument("--start", choices=("lambda-path", "cvxpy"), default=None,
                   help="kernel path: the exact start solution (default lambda-path)")
    p.add_argument("--max-events", type=int, default=None,
                   help="record at most this many events, those at one breakpoint included: the lambda path ends "
                        "where the next one would be, the kernel path at the last one (0: the path's first point; "
                        "default 50 n)")
    p.add_argument("--max-landmarks", type=int, default=None, help="lambda path: stop before the active set exceeds K")
    p.add_argument("--target-mse", type=parse_number, default=None, metavar="M",
                   help="lambda path: stop where the validation MSE (--val-data) falls to M")
    p.add_argument("--val-data", default=None, metavar="FILE", help="validation data for --target-mse (same format)")
    p.add_argument("--export", default=None, metavar="FILE",
                   help="write the per-point table (.csv, .txt (as .csv) or .dat)")
    p.add_argument("--tol", type=parse_number, default=1e-6,
                   help="flag solutions whose certified gap exceeds this (default 1e-6)")
    p.add_argument("--relative", action="store_true", help=_RELATIVE_HELP)
    p.add_argument("--out", default=None, help="write the path (.npz, or .csv: t, beta[0..n-1], beta0)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.set_defaults(func=cmd_exact)


def _crosscheck_args(p, cls, argv=()):
    p.add_argument("problem", help="registered problem name (see `approxpath problems`)")
    add_data_args(p)
    add_threads_arg(p)
    if cls is not None:
        add_problem_options(p, cls)
    p.add_argument("--path", required=True, help="npz or csv: t and the primal fields (klasso: beta, beta0)")
    p.add_argument("--tol", type=parse_number, default=1e-6, help="flag gaps above this (default 1e-6)")
    p.add_argument("--relative", action="store_true", help=_RELATIVE_HELP)
    lin = p.add_mutually_exclusive_group()
    lin.add_argument("--linear", dest="linear", action="store_true", default=None,
                     help="the path is linear between its points: check the segments too (certified where the "
                          "problem has a segment bound, e.g. klasso over lambda; else sampled)")
    lin.add_argument("--not-linear", dest="linear", action="store_false", help="check the points only")
    p.add_argument("--samples", type=int, default=None,
                   help="interior samples per linear segment (default 8; a path checked --not-linear has none)")
    p.add_argument("--interval", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="fail unless the points cover at least [LO, HI] (a path that stops early)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.set_defaults(func=cmd_crosscheck)


COMMANDS = {
    "exact": ("an exact path of the source papers (klasso: Wang et al.), certified", _exact_args),
    "crosscheck": ("certify the points (and linear segments) of a path computed anywhere", _crosscheck_args),
}
