"""Running a path from the command line: where its work goes (``--workers``, ``--dask``), its
checkpoint, its outputs written, and the line that names ``--workers`` after a long run that kept
one core busy (:func:`one_core_note`)."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import BudgetExceededError, InputError
from .output import progress_wanted

__all__ = ["DASK_TIMEOUT", "dask_client", "checkpoint_of", "default_checkpoint", "run_and_write", "one_core_note",
           "clock"]


#: Seconds ``--dask`` waits for the scheduler to answer (Dask retries a refused connection).
DASK_TIMEOUT = 30
# ... and this much longer for its handshake, which Dask's timeout does not cover
_HANDSHAKE_S = 5


def dask_client(address, workers=1):
    """A ``dask.distributed.Client`` connected to ``address`` (None: None); ``workers``: the
    command's ``--workers``, which says where the same work runs.  ``address``: ``--dask``, the
    scheduler's (``tcp://host:8786``; ``host:port`` is read as tcp), connected within
    :data:`DASK_TIMEOUT` seconds (plus 5 for the handshake); the ``distributed`` loggers are set to
    CRITICAL (a lost worker is said in one line).  :class:`InputError` for ``workers != 1``,
    dask.distributed not installed, an address that is not a scheduler's (a port out of range, no
    port, an unknown protocol), or no scheduler answering in time."""
    if address is None:
        return None
    if workers != 1:
        raise InputError(f"--dask {address} and --workers ({workers} processes) both say where the work runs: pass one")
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError("--dask needs dask.distributed (pip install 'approxpath[dask]')") from None
    import threading
    from urllib.parse import urlsplit

    try:
        urlsplit(address if "://" in address else f"tcp://{address}").port  # a port beyond 65535: at once
        got, gave_up, lock = [], threading.Event(), threading.Lock()

        def connect():  # (a client that connects after the command gave up on it is closed, not left open)
            client = _connect(Client, address)
            with lock:
                if not gave_up.is_set():
                    got.append(client)
                elif not isinstance(client, Exception):
                    client.close()

        # Dask's timeout covers the connection, not the handshake: a port that accepts and never
        # answers as a scheduler (an HTTP server) would hold the command for ever
        trying = threading.Thread(target=connect, daemon=True)
        trying.start()
        trying.join(DASK_TIMEOUT + _HANDSHAKE_S)
    except ValueError as exc:  # a port out of range
        raise InputError(f"--dask: {address!r} is not a scheduler address like tcp://host:8786 ({exc})") from None
    with lock:
        if not got:
            gave_up.set()
    if not got:
        raise InputError(f"--dask: no Dask scheduler answered at {address} within {DASK_TIMEOUT} s (is it a "
                         "scheduler's port?)")
    if isinstance(got[0], ValueError):  # distributed's address parser: no port, an unknown protocol
        raise InputError(f"--dask: {address!r} is not a scheduler address like tcp://host:8786 ({got[0]})")
    if isinstance(got[0], (OSError, TimeoutError)):  # (refused, unreachable, unknown host)
        raise InputError(f"--dask: no Dask scheduler answered at {address} ({got[0]})")
    if isinstance(got[0], Exception):  # the reply was no Dask message (an HTTP server: "unable to allocate 3 EiB")
        raise InputError(f"--dask: what answered at {address} is not a Dask scheduler (its reply could not be read "
                         f"as one: {type(got[0]).__name__})")
    import logging

    # a scheduler or worker gone makes Dask log ~35 lines of tracebacks before the command's one line
    # saying what was lost (ClusterError, exit 6): the command speaks for the cluster
    for name in ["distributed", *[n for n in logging.root.manager.loggerDict if n.startswith("distributed.")]]:
        logging.getLogger(name).setLevel(logging.CRITICAL)  # (Dask's configuration sets some children's levels)
    return got[0]


def _connect(Client, address):
    """``Client(address)``, or why not: the address's error (ValueError), the connection's, without its traceback.

    A client that failed to start lives on in reference cycles (its traceback's frames hold it); collected later
    inside another client's close, its own close waits for the lock that close holds (distributed's loop runners
    share one lock), and the process hangs.  It is collected here, in this thread, holding no lock."""
    import gc

    try:
        return Client(address, timeout=DASK_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - said by dask_client, in the caller's thread
        failed = exc.with_traceback(None)
        failed.__context__ = failed.__cause__ = None
    gc.collect()
    return failed


def checkpoint_of(args):
    """The checkpoint of a run: ``--checkpoint``, else with ``--out`` (one worker) ``OUT.partial.npz``, else None."""
    if args.checkpoint is not None:
        return args.checkpoint
    return f"{args.out}.partial.npz" if args.out and args.workers == 1 else None


def default_checkpoint(args):
    """``[(name, file)]`` of the checkpoint a run makes without ``--checkpoint`` (an output to
    check with the others), or ``[]`` (with ``--checkpoint``, checked as an output already); the
    file is None where the run makes none (:func:`~approxpath.cli.checks.check_outputs` skips it)."""
    return [] if args.checkpoint is not None else [("the checkpoint of --out", checkpoint_of(args))]


def run_and_write(problem, args, meta):
    """The path of ``problem`` as the flags of :func:`~approxpath.cli.commands.add_path_args` ask,
    with its certificate (``--out``) and table (``--export``) written; the checkpoint is removed
    only once they are.  Returns :func:`~approxpath.driver.approximate_path`'s result; ``meta``:
    what the certificate records (the data file, its format, the preprocessing).  :class:`InputError`
    for ``--split-products`` without ``--dask`` or for a path it cannot serve, ``--checkpoint`` or
    ``--resume`` where the segments go to workers (``--workers`` above 1, ``--dask``), ``--resume``
    without a checkpoint, and :func:`dask_client`'s refusals; :class:`BudgetExceededError` at
    ``--max-solves`` or ``--max-pieces`` (its message says to go on with ``--resume`` where a
    checkpoint keeps the work)."""
    from ..compute.distributed import split_refusal
    from ..driver import approximate_path, discard_checkpoint

    interval = tuple(args.range) if args.range else None
    if args.split_products and (args.dask is None or split_refusal(problem) is not None):
        why = "needs --dask ADDRESS" if args.dask is None else f"cannot serve this path: {split_refusal(problem)}"
        raise InputError(f"--split-products {why}; --dask alone hands the segments to the cluster's workers")
    client = dask_client(args.dask, args.workers)  # (--dask with --workers refused first: both say where)
    # workers certify the segments between exact solves (chunks with paper and grid): those of
    # --workers, and --dask's unless the workers hold the distances (--split-products: the search
    # stays here)
    segments = args.workers > 1 or (client is not None and not args.split_products)
    checkpoint = None if segments else checkpoint_of(args)
    refusal = None
    if segments and (args.checkpoint is not None or args.resume):
        flag = "--workers" if args.workers > 1 else "--dask"
        refusal = (f"--checkpoint and --resume are per run: {flag} hands {problem.name}'s segments to worker "
                   f"processes; run without {flag} to keep a checkpoint")
    elif args.resume and checkpoint is None:
        refusal = "--resume needs --checkpoint FILE or --out FILE (whose OUT.partial.npz it reads)"
    if refusal is not None:
        if client is not None:
            client.close()
        raise InputError(refusal)
    try:
        path = approximate_path(problem, eps=args.eps, interval=interval, relative=args.relative,
                                strategy=args.strategy, progress=progress_wanted(args), meta=meta,
                                workers=args.workers, checkpoint=checkpoint, resume=args.resume,
                                max_solves=args.max_solves, max_pieces=args.max_pieces,
                                solve_time_limit=args.solve_time_limit, n_jobs=args.n_jobs, device=args.device,
                                executor=client, split_products=args.split_products,
                                keep_checkpoint=True)
    except BudgetExceededError as exc:  # its exact solves are kept: say so, and how to go on
        if checkpoint is None or not Path(checkpoint).exists():
            raise
        raise BudgetExceededError(f"{exc}; the checkpoint {checkpoint} keeps the work so far: add --resume with a "
                                  "larger --max-solves (or --max-pieces) to go on from it") from None
    finally:
        if client is not None:
            client.close()
    if args.out:
        path.save(args.out)  # atomic
    if args.export:
        from ..export import export_table

        export_table(path, args.export)
    if checkpoint is not None:  # the finished work is stored: the checkpoint has done its job
        discard_checkpoint(checkpoint)
    return path


# A run this long that kept about one core busy is worth running in processes: each worker's
# start (its imports, its own distances and kernels) costs a second or two, small against 20 s.
_ONE_CORE_NOTE_S = 20.0
# ... and "about one core busy": process CPU time at most this many times the wall time (the
# kernel products of robust l1 and kLASSO paths at n = 1000 on two threads, the rest on one:
# 1.1-1.25 on 2 cores, where --workers 2 takes 0.55-0.7 of the time; kernel threads at work on
# a large SVM give ~1.6-2)
_ONE_CORE_RATIO = 1.35


def one_core_note(what, start, does):
    """The line that tells a long run of ``what`` begun at ``start`` (:func:`clock`), a command
    that could have had ``--workers``, that its work kept about one of the machine's cores busy
    (how many on average: CPU over wall time) and what ``--workers N`` ``does`` (``{n}`` there:
    N, the machine's cores); or None: with fewer than 2 cores, a run shorter than 20 s, or CPU
    time above 1.35 times the wall time (more than about one core busy)."""
    from ..compute.parallelism import cores

    (wall, cpu), n = (b - a for a, b in zip(start, clock())), cores()
    if n < 2 or wall < _ONE_CORE_NOTE_S or cpu > _ONE_CORE_RATIO * wall:
        return None
    return (f"approxpath: this {what} kept {cpu / wall:.1f} of {n} cores busy for {wall:.0f} s; "
            f"--workers {n} {does.format(n=n)}")


def clock():
    """``(wall, cpu)`` seconds now, for :func:`one_core_note`."""
    return time.perf_counter(), time.process_time()
