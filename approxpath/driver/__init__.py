"""The generic ε-path driver.

A strategy (:mod:`.strategies`) decides where to make exact solves ("anchors") in a
:class:`~.run.Run`; the :class:`~.certifier.Certifier` covers the interval with pieces, each
holding one fixed pair restored from the anchors, split (in log scale) until its rigorous gap
bound is at most the target.  :mod:`.parallel` runs segments or chunks in workers,
:mod:`.checkpoint` saves the finished work as it goes.
"""

from __future__ import annotations

import functools
import os
import time
import warnings

import numpy as np

from .. import compute, machine
from ..compute.executors import capacity, submit
from ..certificate.claims import SAMPLE_LEVELS
from ..certificate.fields import caller_meta
from ..data import data_sha256
from ..errors import BudgetExceededError, EpsilonTooSmallError, InputError
from ..registry import source_of
from ..result import Path
from ..validate import count, flag, is_finite, is_real, number_pair, problem_instance
from . import parallel
from .checkpoint import Checkpoint, discard_checkpoint
from .parallel import map_paths
from ..progress import count_bar, path_bar, shown_name
from .run import Budget, Run
from .strategies import STRATEGIES as _STRATEGY_CLASSES

__all__ = ["approximate_path", "map_paths", "discard_checkpoint", "STRATEGIES", "UncoveredWarning"]


class UncoveredWarning(UserWarning):
    """Pieces of the path returned exceed ε (``uncovered``): :meth:`Path.uncovered` lists them,
    and its certificate fails ``verify``."""


#: Strategy names accepted by :func:`approximate_path`; the first is the default.
STRATEGIES = tuple(_STRATEGY_CLASSES)
# a path's default budgets: far above what a path needs (tens to a few thousand solves and
# pieces), low enough that a run that cannot meet its ε stops with BudgetExceededError
MAX_SOLVES, MAX_PIECES = 10_000, 200_000


@compute.managed
def approximate_path(problem, eps, interval=None, *, relative=False, strategy="interpolate", solver=None,
                     progress=False, max_solves=MAX_SOLVES, max_pieces=MAX_PIECES, solve_time_limit=None, meta=None,
                     workers=1, chunks=None, executor=None, split_products=False, checkpoint=None, resume=False,
                     n_jobs=None, device="auto", keep_checkpoint=False, seeds=None):
    """Compute an ε-approximate path of ``problem`` over ``interval``.

    Parameters
    ----------
    problem : Problem
        An instance, e.g. ``get_problem("kernel_svm")(X, y, c=0.1, bias="dynamic")``.
    eps : float
        Admissible suboptimality: absolute (default, as in the paper), or relative to the
        optimal value with ``relative=True``.
    relative : bool, default False
        ``eps`` is relative: every piece's gap bound is at most ``eps`` times a lower bound of
        the optimal value on the piece.
    interval : (float, float), optional
        Parameter range; the problem's default if omitted.
    strategy : str
        One of :data:`STRATEGIES`: ``interpolate`` (default: the fewest exact solves),
        ``two-sided``, ``paper`` (Giesen et al.'s one-sided search) or ``grid`` (a uniform grid
        doubled until certified: the grid search a user would otherwise run).
    solver : str or sequence of str, optional
        Exact solvers to try in turn (default: the problem's ``backends``, e.g.
        ``("smo", "libsvm", "clarabel", "scs")`` for ``kernel_svm``).
    progress : bool
        Show a progress bar (needs the ``progress`` extra, tqdm): the parameter value reached,
        or with chunks the chunks finished (one bar, however many workers).
    max_solves, max_pieces : int
        Limits on exact solves and on pieces; past either the run stops with a
        :class:`~approxpath.errors.BudgetExceededError` saying what to change (a piece stores a
        primal and a dual vector, so 200 000 pieces of n = 1000 take ~3 GB).
    solve_time_limit : float, optional
        Seconds per exact solver call (Clarabel, SCS, HiGHS, klasso's feature-sign search); a
        solver out of time counts as failed and the next one is tried.  libSVM is bounded by an
        iteration cap instead.
    meta : dict, optional
        Extra provenance for the certificate (JSON): your own keys, and the data's ``data_file``,
        ``format`` and ``preprocessing``; the fields approxpath records itself (``problem``,
        ``n``, ``machine``, ...) are refused.
    workers : int
        Local worker processes (joblib's ``n_jobs`` convention: -1 one per core, -2 all but
        one).  With the adaptive strategies (``interpolate``, ``two-sided``) this process
        places the exact solves and the workers certify the segments between them as they come
        (worth it where certification is most of the work); with ``chunks`` or the other
        strategies the interval is split into ``chunks`` (default ``workers``) pieces of equal
        width in log scale, computed concurrently and merged into one path (each cut costs one
        extra exact solve with ``paper`` and ``grid``; the adaptive strategies start their steps
        afresh in every chunk, at more cost).
    chunks : int, optional
        See ``workers``; with ``executor`` and the ``paper`` or ``grid`` strategy, by default as
        many as it runs at once (a Dask cluster's worker threads, a pool's workers).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where to run the segments or chunks instead of a local process pool (anything with
        ``submit(fn, *args)`` returning a future with ``.result()`` and ``.done()``); not with
        ``workers > 1``, since the executor's own workers run the tasks.
    split_products : bool
        With ``executor`` a ``dask.distributed.Client``: the search runs in this process and the
        executor's workers compute the kernel products, each holding rows of the distances
        (:mod:`approxpath.compute.distributed`; the same numbers as the blocked mode, bit for bit).  For
        problems whose bounds need kernel products only (``kernel_svm``); not with ``workers``
        or ``chunks``.
    checkpoint : str or Path, optional
        File where the finished work (exact solves, finished pieces) is written, atomically,
        as the run goes (right after the first exact solve, then at most every 2 s and at most
        5 % of the run's time; an interruption writes the latest state); it is deleted when the
        path is complete.  One run at a time may use a checkpoint (a second is refused).
    resume : bool
        Continue from ``checkpoint`` (written by an interrupted run with the same inputs); the
        result equals an uninterrupted run's.  A checkpoint that does not exist is refused
        (nothing to resume: a finished run removed it).
    n_jobs : int, optional
        Threads of this process's kernel work, in joblib's convention (``-1`` every core, ``-2``
        all but one); None: ``APPROXPATH_NUM_THREADS``, else ``OMP_NUM_THREADS``, else every core
        the process may use.  BLAS runs on one thread meanwhile
        (:mod:`approxpath.compute.parallelism`).  Results do not depend on it.
    device : {"auto", "cpu", "gpu"}
        Where this process's kernel products run: ``"gpu"`` on a GPU (CuPy or PyTorch with CUDA,
        the ``gpu`` extra), ``"cpu"`` here, ``"auto"`` on a GPU when one is present and the
        problem has at least :data:`approxpath.compute.DEVICE_MIN_N` samples.  The SVM's exact
        solves (SMO) read their kernel entries there too; the other solvers run on the CPU.  The
        certificate is the same kind either way (verified with numpy alone).
    keep_checkpoint : bool
        Keep the checkpoint when the path is complete: the caller removes it
        (:func:`discard_checkpoint`) once the result is stored (the command line after writing
        ``--out``), so that no moment of the run leaves the finished work nowhere.
    seeds : dict, optional
        Exact solves of ``problem`` made before (parameter value -> pair), e.g. by a run at a
        larger ε over the same interval: the adaptive strategies end a segment at one where it
        falls within a step and use its pair if it meets this run's target there (not counted
        in ``exact_solves``).  The dict is updated with this run's exact solves.  Serial runs
        only (ignored with ``workers``, ``chunks`` or ``executor``).

    Returns
    -------
    Path

    Raises
    ------
    InputError
        Bad arguments, or a run that needs more memory than the machine has
        (:func:`approxpath.memory.path_bytes`, checked before anything large is allocated), or a
        bound that comes out NaN (the data's scale or the range overflow double precision).
    """
    from ..memory import check_problem_fits

    lo, hi = _check_args(problem, eps, interval)
    relative, progress = flag("relative", relative), flag("progress", progress)
    meta = caller_meta(meta)
    solver = None if solver is None else tuple(problem.backend_names(solver))
    if strategy not in STRATEGIES:
        from ..validate import choice

        choice("strategy", strategy, STRATEGIES)
    workers = compute.parallelism.resolve(workers, default=1, name="workers")
    if chunks is not None:
        count("chunks", chunks)
    parallel.one_place(workers, executor)
    if split_products and (executor is None or workers > 1 or chunks is not None):
        raise InputError("split_products=True runs the search here and the kernel products on executor= (a Dask "
                         "client): give executor, without workers or chunks")
    parallel_run = workers > 1 or (executor is not None and not split_products) or (chunks or 1) > 1
    if parallel_run and checkpoint is not None:
        raise InputError("checkpoints are per run: use them without workers/chunks/executor")
    if resume and checkpoint is None:
        raise InputError("resume=True needs the checkpoint file to resume from")
    if seeds is not None and not (isinstance(seeds, dict) and all(is_real(t) for t in seeds)):
        raise InputError("seeds must be a dict {parameter value: (primal, dual)}, e.g. the one an earlier run "
                         f"filled, or None; got {type(seeds).__name__} {seeds!r:.60}")
    t0 = time.perf_counter()
    budget = Budget(count("max_solves", max_solves), count("max_pieces", max_pieces), solve_time_limit)
    if solve_time_limit is not None and not (is_real(solve_time_limit) and solve_time_limit > 0):
        raise InputError(f"solve_time_limit must be a positive number of seconds or None; got {solve_time_limit!r}")
    check_problem_fits(problem, workers if executor is None else 1)
    args = (float(eps), bool(relative), strategy, solver, budget)
    # the kernel products run where compute.products_on decides (the Dask workers with split_products,
    # a GPU) until the certificate's meta is made
    with compute.threads(n_jobs), compute.products_on(problem, executor if split_products else None, device):
        if not split_products:
            _notice_blocked(problem)
        check_scale(problem)
        if not parallel_run or (chunks is None and _STRATEGY_CLASSES[strategy].adaptive):
            found = _run_here(problem, lo, hi, args, progress, workers, executor, parallel_run, checkpoint, resume, meta,
                              keep_checkpoint, None if parallel_run else seeds)
        else:
            n_chunks = int(chunks or (workers if executor is None else capacity(executor)))
            bar = count_bar(progress, n_chunks, f"{problem.name} ({n_chunks} chunks)", "chunks")
            try:
                found = (*parallel.chunks(run_chunk, problem, lo, hi, args, n_chunks, workers, executor, bar), 0.0)
            finally:
                if bar is not None:
                    bar.close()
        pieces, anchors, solve_s, certify_s, earlier_s = found
        pieces.sort(key=lambda p: p.lo)
        _warn_uncovered(problem, pieces)
        info = path_meta(problem, meta)
    return Path(
        problem=problem,
        eps=float(eps),
        relative=bool(relative),
        interval=(lo, hi),
        pieces=tuple(pieces),
        exact_solves=len(anchors),
        solve_points=tuple(sorted(anchors)),
        strategy=strategy,
        wall_s=time.perf_counter() - t0 + earlier_s,  # (a resumed run: its timings are the whole run's)
        solve_s=solve_s,
        certify_s=certify_s,
        meta=info,
    )


def _run_here(problem, lo, hi, args, progress, workers, executor, parallel_run, checkpoint, resume, meta,
              keep_checkpoint=False, seeds=None):
    """One adaptive run driven from this process (its segments certified here, or by the pool's
    workers), with its checkpoint and progress bar: ``(pieces, anchors, solve_s, certify_s, earlier_s)``,
    the last the wall seconds of the interrupted runs it resumes."""
    eps, relative, strategy = args[:3]
    ckpt = None
    if checkpoint is not None:
        inputs = [meta["data_file"]] if meta and isinstance(meta.get("data_file"), str) else []
        ckpt = Checkpoint(checkpoint, problem, dict(eps=eps, relative=relative, interval=[lo, hi], strategy=strategy),
                          inputs=inputs)
    bar = None
    try:
        bar = path_bar(progress, lo, hi, problem.name, shown_name(problem.parameter))
        with parallel.pool(workers, executor, parallel_run) as p:
            if p is None:
                found = run_chunk(problem, lo, hi, *args, bar, ckpt, resume, seeds=seeds)
            else:  # single-threaded here too: the workers need the cores (measured: 12 % faster)
                found = parallel.single_threaded(run_chunk, problem, lo, hi, *args, bar, None, False,
                                                 functools.partial(submit, p))
        if ckpt is not None and keep_checkpoint:  # complete: it holds the whole run until the caller stores it
            ckpt.flush()
        elif ckpt is not None:
            ckpt.remove()
    except BaseException:
        if ckpt is not None:  # interrupted (Ctrl-C, SIGTERM, an error): keep the latest state
            ckpt.flush()
        raise
    finally:
        if bar is not None:
            bar.close()
        if ckpt is not None:
            ckpt.release()
    return (*found, 0.0 if ckpt is None else ckpt.earlier_wall_s)


def _warn_uncovered(problem, pieces):
    """An :class:`UncoveredWarning`, at the caller's line, when pieces exceed ε (the ``paper``
    strategy's rule, or a solver that failed there): the path is returned, its summary names
    them, and its certificate fails ``verify``."""
    bad = [p for p in pieces if p.kind == "uncovered"]
    if bad:
        warnings.warn(UncoveredWarning(f"{problem.name}: {len(bad)} of {len(pieces)} pieces exceed eps (uncovered, the "
                                       f"first [{bad[0].lo:.6g}, {bad[0].hi:.6g}]): path.uncovered() lists them; a "
                                       "certificate of this path fails verify"),
                      stacklevel=4)  # (this, approximate_path, its decorator: the caller's line)


def path_meta(problem, meta):
    """What a certificate records about the run's inputs: the problem, its options and data, the
    kernel's definition and the sha256 of D, the data file it came from, the machine that
    computes the path (:func:`approxpath.machine.describe`), and ``meta``."""
    info = dict(
        problem=problem.name,
        parameter=problem.parameter,
        options=problem.options(),
        n=problem.n,
        d=problem.X.shape[1],
        data_sha256=data_sha256(problem.X, problem.y),
        preprocessing="none",
        scale="log",
    )
    # a kernel problem's family definition and sha256 of D (none for a problem without a kernel); how many
    # points a sampled piece claims
    info.update(getattr(problem.bound, "kernel_meta", dict)(), sample_levels=SAMPLE_LEVELS)
    info.update(_provenance(problem), machine=machine.describe())
    source = source_of(problem.name)  # (a plug-in's entry point, distribution and version)
    if source is not None:
        info["problem_source"] = source
    info.update(meta or {})
    return info


def run_chunk(problem, lo, hi, eps, relative, strategy, solver, budget, bar=None, checkpoint=None, resume=False,
              submit=None, seeds=None):
    """One strategy run on [lo, hi]: ``(pieces, exact-solve points, solve_s, certify_s)``;
    with ``submit`` (an executor's), its segments are certified through it; ``seeds`` (see
    :func:`approximate_path`) gets this run's exact solves."""
    run = Run(problem, eps, relative, lo, hi, solver, budget, bar, seeds=seeds)
    resumed = None
    if checkpoint is not None:
        run.checkpoint = checkpoint
        if resume and not checkpoint.file.exists():
            raise InputError(f"nothing to resume: the checkpoint {checkpoint.file} does not exist (a finished run "
                             "removes it): run without resume=True (the command line: without --resume)")
        if not resume and checkpoint.file.exists():
            raise InputError(f"{checkpoint.file} exists (an interrupted run's checkpoint, or another file): resume it "
                             "(resume=True; --resume), or give this run another checkpoint file (checkpoint=FILE; "
                             "--checkpoint FILE, or another --out)")
        resumed = checkpoint.load(run) if resume else None
    chosen = _STRATEGY_CLASSES[strategy](run, submit)
    try:
        pieces = chosen(resumed)
    except (EpsilonTooSmallError, BudgetExceededError) as exc:
        # a refused run's own exact solves ``{t: pair}``: a caller that goes on (a selection)
        # counts them and starts its later paths from them
        exc.solves = {t: pair for t, pair in run.anchors.items() if t not in run.reused}
        raise
    if run.failed:
        warnings.warn(f"{problem.name}: no solver produced a pair at {len(run.failed)} point(s) "
                      f"({run.failures_named()}); the regions around them may be uncovered (see path.uncovered())",
                      stacklevel=3)
    if seeds is not None:
        seeds.update(run.anchors)
    return pieces, [t for t in run.anchors if t not in run.reused] + run.remote_solves, run.solve_s, run.certify_s


def _provenance(problem):
    """The data file, format and preprocessing of the problem's data, when they were read by
    :func:`~approxpath.data.load_data` (and :func:`~approxpath.data.preprocess`-ed) and the
    problem's data are what reading and preparing that file again gives (so ``verify`` finds
    them); else nothing (``Path.save`` then stores the data in the certificate)."""
    import warnings

    from ..data import provenance

    found = provenance(problem.X)
    if found is None:
        return {}
    info, y = found
    try:
        with warnings.catch_warnings():  # the label mapping's warning was given once already
            warnings.simplefilter("ignore")
            again = type(problem.bound)(problem.X, y, **problem.options())
    except (InputError, ValueError, TypeError):
        return {}
    return info if data_sha256(again.X, again.y) == data_sha256(problem.X, problem.y) else {}


def _notice_blocked(problem):
    """A one-line warning when ``problem`` will run without whole kernels
    (:func:`approxpath.memory.kernels_mode`: its n x n kernels do not fit the memory)."""
    from ..memory import available_bytes, human, kernels_mode

    mode = kernels_mode(problem.n, blocked_ok=getattr(problem.bound, "blocked_ok", False))
    if mode != "dense":
        have, what = available_bytes()
        how = "from the stored distances" if mode == "distances" else "with the distances recomputed block by block"
        why = (f"APPROXPATH_KERNELS={mode} is set" if os.environ.get("APPROXPATH_KERNELS") else
               f"the n x n kernels do not fit the {human(have)} available under {what}")
        warnings.warn(f"{problem.name} with n = {problem.n}: {why}; kernel products are computed {how} (slower)",
                      stacklevel=3)


def check_scale(problem):
    """:class:`InputError` when the distances between samples overflow double precision (features
    around 1e154, or feature weights that large): every kernel bound would be NaN or meaningless."""
    kernels = getattr(problem, "kernels", None)
    if kernels is not None and not kernels.checks()[0]:
        weights = getattr(problem, "feature_weights", None)
        if weights is not None and max(weights) > 1.0:  # (ard: the weights can be the cause)
            top = float(np.max(np.abs(problem.X)))
            raise InputError(f"{problem.name}: the distances between samples overflow double precision (feature "
                             f"weights up to {max(weights):.3g}, features up to {top:.3g}): use smaller "
                             "feature_weights, or scale the features")
        raise InputError(f"{problem.name}: the distances between samples overflow double precision (features "
                         f"up to {float(np.max(np.abs(problem.X))):.3g}): scale the features (--preprocess "
                         "global-minmax, or approxpath.data.preprocess(X, 'global-minmax'))")


def _check_args(problem, eps, interval):
    problem_instance(problem)
    if not (is_finite(eps) and eps > 0):
        raise InputError(f"eps must be a positive finite number; got {eps!r}")
    lo, hi = number_pair("interval", problem.default_interval() if interval is None else interval)
    problem.bound.check_interval(lo, hi)
    check_weights = getattr(problem, "check_weights", None)  # a weight below double precision's reach
    if check_weights is not None:
        check_weights(lo, hi)
    return lo, hi
