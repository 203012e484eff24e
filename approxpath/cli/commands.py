"""The commands of :mod:`approxpath.cli` path, problems and demo (verify: :mod:`.verify`; running a path:
:mod:`.running`; exact paths: :mod:`.exact`; figures: :mod:`.figures`; data: :mod:`.datasets`)."""

from __future__ import annotations

import sys

from ..data import PREPROCESSING, data_sha256, load_data, load_train_validation, preprocess
from ..errors import InputError
from ..registry import available_problems, get_problem
from .options import add_problem_options, parse_number, problem_kwargs
from .checks import build_problem, check_outputs, data_format  # noqa: F401 (figures use them too)
from .output import emit_json, progress_wanted
from .running import clock, default_checkpoint, one_core_note, run_and_write

__all__ = ["COMMANDS", "load", "data_meta", "add_data_args", "add_threads_arg", "budget", "add_path_args",
           "save_plot", "distances_arg", "precomputed"]


def save_plot(fig, args, head=None):
    """Save ``fig`` to ``--plot`` (and say so, but under ``--json``); ``head``: a first line put
    above the title of its first axes (the problem and the data file, which a selection's own
    title cannot know)."""
    from ..plotting import save_figure

    if head:
        ax = fig.axes[0]
        ax.set_title(f"{head}\n{ax.get_title()}")
    save_figure(fig, args.plot)
    if not args.json:
        print(f"figure written to {args.plot}")


def load(args, meta=None):
    """``(X, y, format, preprocessing)`` of ``--data`` (format and preprocessing as given, else
    as ``meta`` records them).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line: ``data``, ``format``, ``n_features`` and ``preprocess``.
    meta : dict, optional
        A certificate's metadata: its ``"format"`` and ``"preprocessing"``.

    Returns
    -------
    X : ndarray of shape (n, d)
        Read by :func:`~approxpath.data.load_data`, scaled by :func:`~approxpath.data.preprocess`.
    y : ndarray of shape (n,)
    format : str
        ``"libsvm"`` or ``"csv"`` (:func:`~approxpath.cli.checks.data_format`).
    preprocessing : str
        One of :data:`~approxpath.data.PREPROCESSING` (``"none"`` if neither gives one).
    """
    fmt = data_format(args.data, args.format, (meta or {}).get("format"))
    prep = args.preprocess or (meta or {}).get("preprocessing") or "none"
    n_features = args.n_features if args.n_features is not None else (meta or {}).get("n_features")
    X, y = load_data(args.data, fmt, n_features=n_features)
    return preprocess(X, prep), y, fmt, prep


def data_meta(args, fmt, prep):
    """What a certificate records of where its data came from: ``--data``, its format, the
    preprocessing and ``--n-features`` where given (``verify`` reads the file again with them)."""
    meta = dict(data_file=str(args.data), format=fmt, preprocessing=prep)
    if getattr(args, "n_features", None) is not None:
        meta["n_features"] = int(args.n_features)
    return meta


def load_choice(args):
    """``(X, y, X_val, y_val, format, preprocessing)`` of a choice: ``--data`` as :func:`load` gives it
    and, with ``--val-data``, its hold-out set (:func:`load_with_validation`; else ``X_val, y_val`` None)."""
    if getattr(args, "val_data", None) is None:
        X, y, fmt, prep = load(args)
        return X, y, None, None, fmt, prep
    return load_with_validation(args)


def holdout_targets(problem, y_val):
    """``y_val`` (``--val-data``'s targets, or None) as ``problem`` takes targets: a classifier's classes
    (its ``labels``) as -1 and +1; :class:`InputError` for a class ``--data`` has not."""
    from ..validate import as_training_labels

    labels = getattr(problem, "labels", None)
    if labels is None or y_val is None:
        return y_val
    mapped, unknown = as_training_labels(y_val, labels)
    if unknown.size:
        raise InputError(f"--val-data has the label(s) {', '.join(map(str, unknown[:3]))}, which --data has not "
                         f"(its classes: {', '.join(map(str, labels))})")
    return mapped


def load_with_validation(args):
    """``(X, y, X_val, y_val, format, preprocessing)``: ``--data`` as :func:`load` gives it and
    ``--val-data`` read like it (:func:`~approxpath.data.load_train_validation`) and scaled with
    its scaling (``--preprocess``: the training data's minimum and range, not its own)."""
    fmt = data_format(args.data, args.format)
    prep = getattr(args, "preprocess", None) or "none"
    X, y, X_val, y_val = load_train_validation(args.data, args.val_data, fmt, n_features=args.n_features)
    return preprocess(X, prep), y, preprocess(X_val, prep, like=X), y_val, fmt, prep


def add_data_args(p, required=True):
    """Add the data flags ``--data`` (needed where ``required``), ``--format``, ``--n-features`` and
    ``--preprocess`` (read by :func:`load`) to the command's parser ``p``."""
    p.add_argument("--data", required=required, help="data file")
    p.add_argument("--format", choices=("libsvm", "csv"), default=None,
                   help="data format (default: csv for a .csv file, else libsvm)")
    p.add_argument("--n-features", type=int, default=None, help="LIBSVM: number of features")
    p.add_argument("--preprocess", choices=PREPROCESSING, default=None,
                   help="feature scaling; global-minmax is the paper's (default none)")


def worker_count(text):
    """The ``type`` of ``--workers``: a process count in joblib's ``n_jobs`` convention (-1 one per core,
    -2 all but one), resolved here so that every check of the command reads the count it runs."""
    import argparse

    from ..compute.parallelism import resolve

    try:
        return resolve(int(text), default=1, name="--workers")
    except (ValueError, InputError):
        why = f"a nonzero integer (-1: one per core, -2: all but one); got {text!r}"
        raise argparse.ArgumentTypeError(why) from None


def add_threads_arg(p):
    """``--n-jobs``: the command's kernel threads (:func:`approxpath.cli.main` runs the command
    inside :func:`approxpath.compute.threads`); an int, default None (``APPROXPATH_NUM_THREADS``,
    ``OMP_NUM_THREADS`` or every core; -1 every core, -2 all but one)."""
    p.add_argument("--n-jobs", type=int, default=None, metavar="N", help="threads of the kernel work (-1 every "
                   "core, -2 all but one; default: APPROXPATH_NUM_THREADS, OMP_NUM_THREADS or every core)")


def budget(args):
    """``max_solves`` as a keyword argument where ``--max-solves`` was given; none otherwise, so
    that the function called keeps its own default (``select``: 2000 over one parameter, 20000
    over two)."""
    return {} if args.max_solves is None else dict(max_solves=args.max_solves)


def add_path_args(p, plot_help="save the bounds figure (needs matplotlib)"):
    """Add the flags of a path run to the command's parser ``p``: ``--eps``, ``--relative``, ``--range``,
    ``--strategy``, the outputs (``--out``, ``--export``, ``--json``, ``--plot``, whose help text is
    ``plot_help``, ``--checkpoint``, ``--resume``), the workers (``--workers``, ``--n-jobs``, ``--device``,
    ``--dask``, ``--split-products``), the limits (``--max-solves``, ``--max-pieces``,
    ``--solve-time-limit``) and ``--no-progress``."""
    from ..driver import MAX_PIECES, MAX_SOLVES, STRATEGIES

    p.add_argument("--eps", type=parse_number, default=0.125, help="admissible suboptimality (default 0.125)")
    p.add_argument("--relative", action="store_true", help="eps is relative to the optimal value")
    p.add_argument("--range", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="parameter interval, e.g. 2^-10 2^10 (default: the problem's)")
    p.add_argument("--strategy", default=STRATEGIES[0], choices=STRATEGIES, help="where the exact solves go "
                   f"(default {STRATEGIES[0]})")
    p.add_argument("--out", default=None, help="write the certificate (.npz) here")
    p.add_argument("--export", default=None, metavar="FILE",
                   help="write the per-piece table (.csv, .txt (as .csv) or .dat)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the summary")
    p.add_argument("--plot", default=None, metavar="FILE", help=plot_help)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--workers", type=worker_count, default=1, help="local worker processes (-1 one per core): they "
                   "certify the segments between exact solves (interpolate, two-sided) or compute chunks of the "
                   "interval (paper, grid)")
    add_threads_arg(p)
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"), help="where kernel products run: gpu "
                   "(CUDA with CuPy or PyTorch), cpu, or auto (a GPU when present and n >= 4096)")
    p.add_argument("--dask", default=None, metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786): its workers "
                   "certify the segments between exact solves (chunks with paper and grid), as --workers does")
    p.add_argument("--split-products", action="store_true", help="with --dask: the workers hold rows of the "
                   "distances and compute the kernel products while the search runs here, for distances that do "
                   "not fit one machine (kernel_svm, gaussian or ard kernel)")
    p.add_argument("--checkpoint", default=None, metavar="FILE",
                   help="write finished work here as the run goes (default with --out: OUT.partial.npz)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its checkpoint")
    p.add_argument("--max-solves", type=int, default=MAX_SOLVES,
                   help=f"stop past this many exact solves (default {MAX_SOLVES})")
    p.add_argument("--max-pieces", type=int, default=MAX_PIECES,
                   help=f"stop past this many pieces (default {MAX_PIECES})")
    p.add_argument("--solve-time-limit", type=parse_number, default=None, metavar="SECONDS",
                   help="per exact solver call (Clarabel, SCS, HiGHS, the feature-sign search); out of time = "
                   "failed, the next solver is tried")


def _run_path(problem, args, meta):
    start = clock()
    path = run_and_write(problem, args, meta)
    note = None
    # (paper and grid: --workers cuts the interval into chunks, another path)
    if args.workers == 1 and args.dask is None and args.strategy in ("interpolate", "two-sided"):
        note = one_core_note("path", start, "certifies its segments in {n} processes (the same pieces and bounds "
                             "for any --workers K > 1)")
    if args.plot:
        from ..plotting import plot_bounds, save_figure

        save_figure(plot_bounds(path), args.plot)
    if args.json:
        emit_json(path.to_json())
    else:
        print(path.summary())
        for what, file in (("certificate", args.out), ("table", args.export), ("figure", args.plot)):
            if file:
                print(f"{what} written to {file}")
        if note is not None:
            print(note, file=sys.stderr)
    return 1 if path.uncovered() else 0


def precomputed(kwargs, file):
    """The matrix D of ``--distances FILE.npy`` (which goes with ``--kernel precomputed``), or None."""
    from ..data import load_distances

    if (file is not None) != (kwargs.get("kernel") == "precomputed"):
        raise InputError("--kernel precomputed takes the n x n matrix D from --distances FILE.npy (and --distances "
                         "needs --kernel precomputed); --data then gives the targets y")
    return None if file is None else load_distances(file)


def _unused_preprocessing(D, prep):
    """``--preprocess`` scales the features of ``--data``; with ``--distances`` they are not used."""
    if D is not None and prep != "none":
        raise InputError(f"--preprocess {prep} scales the features of --data, which --kernel precomputed does not use "
                         "(D comes from --distances): scale before computing D, and drop --preprocess")


def cmd_path(args):
    cls = get_problem(args.problem)
    check_outputs(args, extra=default_checkpoint(args))  # before the data are read and the run starts
    X, y, fmt, prep = load(args)
    kwargs = problem_kwargs(cls, args)
    D = precomputed(kwargs, args.distances)
    _unused_preprocessing(D, prep)
    problem = build_problem(cls, X if D is None else D, y, args, kwargs)
    own = kwargs.get(problem.parameter)  # (a weight path's weight: the top of the default interval)
    if own is not None and args.range is not None:
        flag = f"--{problem.parameter.replace('_', '-')}"
        raise InputError(f"{flag} {own:g} is not used: the path runs over {problem.parameter} in --range "
                         f"{args.range[0]:g} {args.range[1]:g}; drop {flag} (alone it sets the range's top)")
    meta = data_meta(args, fmt, prep)
    if D is not None:
        meta["distances_file"] = str(args.distances)
    return _run_path(problem, args, meta)


def cmd_problems(args):
    import re

    names = available_problems()
    wide = max([14, *map(len, names)])  # (the columns line up past a plug-in's long name)
    for name in names:
        cls = get_problem(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        doc = re.sub(r":math:`([^`]*)`|``([^`]*)``", lambda m: m.group(1) or m.group(2), doc)
        bound = "interval bound" if cls.Bound.interval_bound else "point gaps only (sampled)"
        print(f"{name:{wide}s} parameters: {', '.join(cls.Bound.parameters):18s} {bound:28s} {doc}")
    return 0


_DEMO_FIGURE = "demo_bounds.png"


def cmd_demo(args):
    """A certified SVM bandwidth path on seeded synthetic data, in seconds."""
    from ..driver import approximate_path
    from ..validate import positive

    from .datasets import write_data

    asked = args.plot is not None  # (a figure asked for is refused without matplotlib; the default one skipped)
    args.plot = args.plot if asked else _DEMO_FIGURE
    check_outputs(args, plot_optional=not asked)  # --out, --plot and --data-out: three different files
    positive("eps", args.eps)  # (before the banner: a usage error prints nothing on standard output)
    X, y = write_data("classification", args.data_out, 80, 0, d=2)
    problem = get_problem("kernel_svm")(X, y, c=1.0, bias="optimal")
    print(f"demo: kernel_svm on 80 seeded synthetic points (2 Gaussian classes, written to {args.data_out}), "
          f"C = 1, bandwidth t in [2^-6, 2^8], eps = {args.eps:g}")
    path = approximate_path(problem, eps=args.eps, interval=(2.0**-6, 2.0**8), progress=progress_wanted(args),
                            meta=dict(data_file=str(args.data_out), format="csv", preprocessing="none"))
    print(path.summary())
    print(f"\n{'lo':>10} {'hi':>10} {'gap bound':>10}  kind       from exact solve at")
    step = max(1, len(path.pieces) // 12)
    for p in path.pieces[::step]:
        print(f"{p.lo:10.4g} {p.hi:10.4g} {p.gap_bound:10.4g}  {p.kind:10s} {', '.join(f'{a:.4g}' for a in p.anchors)}")
    if step > 1:
        print(f"(one piece in {step} of {len(path.pieces)} shown)")
    if args.out:
        path.save(args.out)
        print(f"\ncertificate written to {args.out} (sha256 of the data {data_sha256(problem.X, problem.y)[:12]}...)")
    try:
        from ..plotting import plot_bounds, save_figure
    except ImportError:
        plot_bounds = None
    if plot_bounds is not None and args.plot:
        try:
            save_figure(plot_bounds(path), args.plot)
            print(f"figure of the upper/lower bounds written to {args.plot}")
        except ImportError:
            print("(install the plot extra for the figure: pip install 'approxpath[plot]')")
    return 0 if path.certified else 1


def _path_args(p, cls, argv=()):
    p.add_argument("problem", help="registered problem name (see `approxpath problems`); "
                   "`approxpath path PROBLEM --help` lists its options")
    add_data_args(p)
    distances_arg(p)
    if cls is not None:
        add_problem_options(p, cls)
    add_path_args(p)
    p.set_defaults(func=cmd_path)


def distances_arg(p):
    p.add_argument("--distances", default=None, metavar="FILE.npy",
                   help="with --kernel precomputed: the n x n matrix D of K_t = exp(-t D) (numpy .npy); "
                        "--data then gives the targets")


def _verify_args(p, cls, argv=()):
    from .verify import verify_args

    verify_args(p, cls, argv)


def _problems_args(p, cls, argv=()):
    p.set_defaults(func=cmd_problems)


def _demo_args(p, cls, argv=()):
    p.add_argument("--eps", type=parse_number, default=0.5, help="admissible suboptimality (default 0.5)")
    p.add_argument("--out", default="demo_certificate.npz", help="certificate file (default demo_certificate.npz)")
    p.add_argument("--data-out", default="demo_data.csv", help="where the synthetic data are written "
                   "(default demo_data.csv)")
    p.add_argument("--plot", default=None, help=f"figure of the bounds (default {_DEMO_FIGURE}, skipped without "
                   "matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo)


#: The commands: name -> (help, function adding its arguments to a parser, given the named problem).
COMMANDS = {
    "path": ("compute a certified path", _path_args),
    "verify": ("re-check a certificate with numpy only", _verify_args),
    "problems": ("list the registered problems", _problems_args),
    "demo": ("run on built-in synthetic data", _demo_args),
}
