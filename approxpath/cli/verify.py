"""The ``verify`` command of :mod:`approxpath.cli`: a certificate re-checked with numpy only, on
the data file it records (or ``--data``, or the data it carries)."""

from __future__ import annotations

import time

from ..data import data_sha256
from ..errors import InputError
from .options import parse_number
from .checks import data_format
from .commands import add_data_args, add_threads_arg, distances_arg, load, precomputed
from .output import emit_json, progress_wanted

__all__ = ["cmd_verify", "verify_args"]


def _recorded_data_file(certificate, recorded, flag="--data"):
    """The data file a certificate records: as written, or, when that relative path does not
    exist from the current folder, relative to the certificate's folder (where ``path --out``
    may have been run from)."""
    return _recorded_data_files(certificate, recorded, flag)[0]


def _recorded_data_files(certificate, recorded, flag="--data"):
    """The files the data file a certificate records may be, those that exist, in the order of
    :func:`_recorded_data_file` (at least one, else :class:`FileNotFoundError`)."""
    from pathlib import Path as FsPath

    if not isinstance(recorded, str) or not recorded:
        raise InputError(f"the certificate records no data file and carries no data: pass {flag} FILE")
    tried = [FsPath(recorded)]
    if not tried[0].is_absolute():
        tried.append(FsPath(certificate).parent / recorded)
    found = list(dict.fromkeys(str(file) for file in tried if file.is_file()))
    if found:
        return found
    where = " or ".join(repr(str(p)) for p in dict.fromkeys(tried))
    what = "is not a file" if any(p.exists() for p in tried) else "does not exist"
    raise FileNotFoundError(f"data file {recorded!r} recorded in the certificate {what} (tried {where}): "
                            f"pass {flag} FILE")


def cmd_verify(args):
    import dataclasses as dc

    from ..certificate.format import DATA_FIELDS, read_meta
    from ..certificate.requirements import check_requirements
    from ..certificate.inputs import DataMismatch
    from ..certificate.verify import any_meta_errors, failed_report, verify

    t0 = time.perf_counter()
    if args.weights is not None and args.interval is None:
        raise InputError("--weights LO HI requires a surface's weights; give its bandwidths too (--interval LO HI): "
                         "together they are the box it must cover")
    box = None if args.weights is None else (args.interval, args.weights)
    interval = args.interval if box is None else None
    check_requirements(args.eps, args.relative, interval, args.data_sha256, box, flags=True)
    required = dict(eps=args.eps, relative=args.relative, interval=interval, data_sha256=args.data_sha256, box=box,
                    progress=progress_wanted(args))
    try:  # the meta alone first: what the data are and where; the arrays are read against them
        meta, names = read_meta(args.certificate)
        malformed = any_meta_errors(meta)
    except InputError as exc:
        meta, names, malformed = None, (), [str(exc)]
    if malformed:  # a file that is not a well-formed certificate fails verification
        report = failed_report(*malformed)
    elif args.data is None and set(DATA_FIELDS) & set(names):  # (carrying only one: verify says so)
        report = verify(args.certificate, **required)
    else:
        recorded_data = args.data is None
        candidates = _recorded_data_files(args.certificate, meta.get("data_file")) if recorded_data else [args.data]
        loaded = None
        for args.data in candidates:  # the first whose data are the certificate's, else the first read
            try:
                got = load(args, meta)
            except InputError:
                if not recorded_data:
                    raise
                continue
            loaded = loaded or (args.data, got)
            if data_sha256(*got[:2]) == meta.get("data_sha256"):
                loaded = (args.data, got)
                break
        if loaded is None:
            # the file was named by the certificate, not by the user: say no more of its contents
            given = "" if args.n_features is None else f" with --n-features {args.n_features}"
            raise InputError(f"the data file {args.data!r} the certificate records is not readable as "
                             f"{data_format(args.data, args.format, meta.get('format'))} data{given}: pass --data FILE"
                             + (" or drop --n-features" if given else ""))
        args.data, (X, y, fmt, prep) = loaded
        recorded = (meta.get("options") or {}).get("kernel")
        if args.distances is not None and recorded != "precomputed":
            raise InputError(f"--distances is for a certificate of --kernel precomputed; this one's kernel is "
                             f"{recorded or 'the default'}: drop --distances")
        if args.distances is None and recorded == "precomputed":
            args.distances = _recorded_data_file(args.certificate, meta.get("distances_file"), "--distances")
        D = precomputed({"kernel": recorded}, args.distances)
        source = f"from {args.data} ({fmt}, preprocessing {prep})"
        try:
            report = verify(args.certificate, X if D is None else D, y, **required)
        except DataMismatch as exc:  # a claim about other data: not verified here (status 1, not a usage error)
            report = failed_report(f"{exc} (data {source})")
        if report.claim:
            report = dc.replace(report, claim=dict(report.claim, data=source))
        elif recorded_data and not report.ok:  # (the "data given" of the messages were not given by the user)
            report = dc.replace(report, failures=report.failures + (
                f"the data were read from {args.data!r}, the file the certificate records: pass --data FILE",))
    if args.require_certified and (report.sampled or report.uncovered):
        report = dc.replace(report, ok=False, failures=report.failures + (
            f"--require-certified: {report.sampled} sampled and {report.uncovered} uncovered {report.unit}",))
    if args.json:
        emit_json(dict(report.to_json(), wall_s=round(time.perf_counter() - t0, 4)))
    else:
        print(report)
    return 0 if report.ok else 1


def verify_args(p, cls, argv=()):
    p.add_argument("certificate", help="the .npz written by `approxpath path --out`, `approxpath surface --out` or "
                                       "`approxpath select --out` (or Path.save, Surface.save, Selection.save)")
    add_data_args(p, required=False)
    distances_arg(p)
    add_threads_arg(p)
    p.set_defaults(data=None)
    p.description = ("Re-check a certificate with numpy only, on the data file it records (or --data, or the "
                     "data it carries). Prints what it certifies: problem, options, eps, interval, data sha256.")
    p.add_argument("--require-certified", action="store_true", help="fail on sampled pieces too")
    p.add_argument("--eps", type=parse_number, default=None,
                   help="fail unless the certificate claims at least this eps (its eps <= EPS)")
    p.add_argument("--relative", action="store_true", help="with --eps: the required eps is relative")
    p.add_argument("--interval", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="fail unless the certificate covers at least [LO, HI] (a surface: of the bandwidth)")
    p.add_argument("--weights", nargs=2, type=parse_number, metavar=("LO", "HI"), default=None,
                   help="a surface: fail unless its box covers at least --interval x [LO, HI] (C or lambda)")
    p.add_argument("--data-sha256", default=None, metavar="HEX",
                   help="fail unless the certificate is about the data with this sha256")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--no-progress", action="store_true", help="no progress bar over the pieces")
    p.set_defaults(func=cmd_verify)
