"""``approxpath data``: write the seeded synthetic data sets of :mod:`approxpath.data` to a file,
so that every command of the documentation runs without downloading anything."""

from __future__ import annotations

import numpy as np

__all__ = ["COMMANDS", "write_data"]

#: The data sets: name -> (what it is, its generator's keyword arguments from the command line).
SETS = {
    "sinc": "noisy samples of sinc(x) on [-4, 4] (regression: klasso, robust_l1, kernel_ridge)",
    "classification": "two overlapping Gaussian classes labelled -1/+1, features in [0, 1] (kernel_svm)",
    "friedman1": "Friedman #1, 5 relevant and 5 irrelevant features in [0, 1] (the feature path: features)",
}


def write_data(name, out, n, seed, d=2, noise=0.1, outliers=0.0, fmt="csv"):
    """Write the data set ``name`` to ``out`` (CSV with a header line, the target last; or
    LIBSVM): ``(X, y)``, arrays (n, d) and (n,).

    Parameters
    ----------
    name : {"sinc", "classification", "friedman1"}
        The set (:data:`SETS`); any other name writes ``classification``.
    out : str or path-like
        Written atomically (:func:`~approxpath.certificate.output.write_atomic`).
    n, seed : int
        The number of samples and the generator's seed.
    d : int, default 2
        ``classification``'s number of features (``sinc`` has 1, ``friedman1`` 10).
    noise, outliers : float, default 0.1 and 0.0
        The noise of ``sinc`` and ``friedman1``; ``sinc``'s fraction of outliers.
    fmt : {"csv", "libsvm"}, default "csv"
        A header line ``x1,...,xd,y`` and a sample per row, or LIBSVM lines ``y j:v ...`` (indices
        from 1, zero entries left out); numbers in ``%.17g``.
    """
    from ..certificate.output import write_atomic
    from ..data import make_classification, make_friedman1, make_sinc

    if name == "sinc":
        X, y = make_sinc(n=n, noise=noise, outliers=outliers, seed=seed)
    elif name == "friedman1":
        X, y = make_friedman1(n=n, noise=noise, seed=seed)
    else:
        X, y = make_classification(n=n, d=d, seed=seed)

    def write(fh):
        if fmt == "csv":
            header = ",".join([f"x{j + 1}" for j in range(X.shape[1])] + ["y"])
            np.savetxt(fh, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.17g")
        else:
            for xi, yi in zip(X, y):
                fh.write((f"{yi:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(xi) if v != 0)
                          + "\n").encode())

    write_atomic(out, write)
    return X, y


def cmd_data(args):
    from ..certificate.output import check_output
    from ..validate import count

    from ..errors import InputError
    from .checks import check_seed, data_format

    # (an option of the other set would be ignored without a word)
    foreign = {"sinc": [("--d", args.d)], "classification": [("--noise", args.noise), ("--outliers", args.outliers)],
               "friedman1": [("--d", args.d), ("--outliers", args.outliers)]}
    given = [flag for flag, value in foreign[args.set] if value is not None]
    if given:
        raise InputError(f"{' and '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to the {args.set} set")
    d = 2 if args.d is None else args.d
    noise = (0.0 if args.set == "friedman1" else 0.1) if args.noise is None else args.noise
    outliers = 0.0 if args.outliers is None else args.outliers
    count("--n", args.n)
    count("--d", d)
    check_seed(args.seed)
    if args.n < 2:
        raise InputError(f"--n must be at least 2; got {args.n}")
    if not (noise >= 0 and 0 <= outliers <= 1):
        raise InputError(f"--noise must be >= 0 and --outliers in [0, 1]; got {noise!r} and {outliers!r}")
    args.format = data_format(args.out, args.format)  # (written as --data FILE will read it)
    check_output(args.out, name="--out", example="data.csv")
    X, y = write_data(args.set, args.out, args.n, args.seed, d=d, noise=noise, outliers=outliers, fmt=args.format)
    fmt = f" --format {args.format}"
    use = f"approxpath features {args.out}{fmt}" if args.set == "friedman1" else f"--data {args.out}{fmt}"
    print(f"{args.set}: {X.shape[0]} samples, {X.shape[1]} feature(s) written to {args.out} (use it with {use})")
    return 0


def _data_args(p, cls, argv=()):
    from .options import parse_number

    p.add_argument("set", choices=tuple(SETS), help="; ".join(f"{k}: {v}" for k, v in SETS.items()))
    p.add_argument("--out", required=True, help="file to write (CSV with a header line, the target last; or "
                   "LIBSVM's format with --format libsvm)")
    p.add_argument("--format", choices=("csv", "libsvm"), default=None,
                   help="file format (default: csv for a name ending in .csv, else libsvm, as --data reads it)")
    p.add_argument("--n", type=int, default=100, help="number of samples (default 100)")
    p.add_argument("--d", type=int, default=None, help="classification: number of features (default 2)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--noise", type=parse_number, default=None,
                   help="sinc, friedman1: noise standard deviation (default 0.1; friedman1 0)")
    p.add_argument("--outliers", type=parse_number, default=None,
                   help="sinc: fraction of samples with gross errors (default 0)")
    p.set_defaults(func=cmd_data)


#: The command ``data`` (merged by :func:`approxpath.cli.build_parser`).
COMMANDS = {"data": ("write a seeded synthetic data set (sinc, classification, friedman1) to a file", _data_args)}
