"""Certified model selection: the parameter whose criterion is provably within δ of the best
over the whole interval (:func:`select`).

The criterion of the exact optimum is enclosed on cells of the interval (:mod:`.cover`,
:mod:`.nodes`).  With ``U`` the chosen point's upper bound (minimizing) and ``L`` the smallest
lower bound of any cell, no parameter has a criterion below ``U - δ`` with ``δ = U - L``; a
branch and bound makes ``δ`` small (:mod:`.branch`).  This module runs it: the folds' first
paths and their refinements at new exact solves (:mod:`.refine`), the end cells, the result and
why it stopped.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ..compute.parallelism import managed, resolve
from ..errors import InputError, SelectionInterrupted
from ..numerics import round_up
from ..driver.parallel import pool, single_threaded
from ..driver.run import finite_delta
from ..progress import delta_bar, shown_name
from .advice import RangeWarning, ShortfallWarning, warn_edge
from .branch import Search, oriented
from .cover import ClosedForm, Sampled, Tracks
from .folds import default_criterion, fold_problems, validation_given
from .losses import default_tol
from .nodes import BandwidthFolds, NodeClosedForm
from .proof import SelectionProof
from .validation import Validation
from . import refine
from .result import Selection

__all__ = ["Selection", "select", "DEFAULT_EPS", "RangeWarning", "ShortfallWarning", "default_eps"]

#: Default ε of the first paths, relative to the zero model's objective: enclosures from gaps
#: much larger than this are too wide to decide much (the search refines where it matters).
DEFAULT_EPS = 1e-3
# Refinements of an end cell that may match the choice, once δ <= tol, before the search warns
# that the criterion may be better beyond that end (each halves it, or tightens its paths).
_END_ROUNDS = 8
# Rounds of refinement and cells kept before the run stops with the δ it reached.
_MAX_ROUNDS = 400
_MAX_CELLS = 400_000


def default_eps(problem):
    """The absolute ε of a selection's first paths when none is given: :data:`DEFAULT_EPS`
    times ``problem.null_objective()`` (the zero model's objective), or :data:`DEFAULT_EPS`
    itself where that objective is 0 (constant targets: every scale is as good).  (A path over
    the weight takes :data:`DEFAULT_EPS` relative instead: :func:`select`.)

    Raises
    ------
    InputError
        A problem without ``null_objective()`` (no scale to take a fraction of: pass ``eps``).
    """
    if not hasattr(problem, "null_objective"):
        raise InputError(f"{problem.name} has no null_objective(): pass eps")
    return DEFAULT_EPS * float(problem.null_objective()) or DEFAULT_EPS


@managed
def select(problem, criterion=None, *, cv=None, X_val=None, y_val=None, groups=None, shuffle=None, eps=None,
           interval=None, tol=None, relative=False, max_solves=2_000, strict=True, workers=1, executor=None,
           progress=False, **path_options):
    """Select the path parameter by a criterion of the exact optimum, with a guarantee.

    Parameters
    ----------
    problem : Problem
        Built on the full training data; folds are built with ``type(problem)(X[train],
        y[train], **problem.options())`` (a precomputed :math:`D`: ``X[train][:, train]``, and
        the held-out rows ``X[test][:, train]``).
    criterion : str, optional
        A validation loss (``error``, ``mae``, ``mse``; with ``cv`` or ``X_val``) or a closed-form
        criterion of the problem's bound (``CLOSED_FORM_CRITERIA``: kernel ridge's ``loocv``,
        ``gcv``, ``lml``).  Default: the problem's first ``criteria`` with ``cv``/``X_val``, else
        its first closed-form criterion.
    cv : int or cross-validation splitter, optional
        As scikit-learn's ``cv`` (:func:`sklearn.model_selection.check_cv`: an int is a
        stratified k-fold for a classifier's labels, else k-fold, unshuffled, and needs no
        scikit-learn; a splitter or an iterable of ``(train, test)`` index arrays).  The
        criterion is the pooled loss over all held-out points.
    X_val, y_val : ndarray, optional
        One hold-out set instead of ``cv`` (targets as the problem sees them: labels {-1, +1}).
    groups : array-like, optional
        Passed to the splitter.
    shuffle : int, optional
        With an int ``cv``, a seed: the points are shuffled before they are split, as by
        ``KFold(cv, shuffle=True, random_state=shuffle)`` (``StratifiedKFold`` for labels; the
        same folds).  Default None: the folds are blocks of consecutive points, so data sorted
        by a feature (``make_sinc``'s, by x) give folds that each leave out one stretch of it.
    eps : float, optional
        ε of the first paths (absolute, or relative with ``relative=True``); refinements use
        absolute values a quarter of the pieces' gap bounds they replace.  Default:
        :func:`default_eps` (:data:`DEFAULT_EPS` times the zero model's objective); on a path
        over the weight (C, λ), :data:`DEFAULT_EPS` relative (of the optimal value at each
        weight: the SVM's objective grows with C, and the zero model's at the ``c`` option the
        path replaces would set another scale for each ``c``).
        Unused where the criterion needs no path (kernel ridge's: cells between exact optima):
        a closed-form criterion over the bandwidth of a problem whose bound has ``node_pair``, or
        over λ of one whose bound has ``box_enclosure``
        (:class:`~approxpath.surface.nodes.WeightNodes`: one spectrum at the bandwidth); a
        validation loss over the bandwidth where the bound also has ``prediction_enclosure``
        (:class:`~.nodes.BandwidthFolds`), over λ where it has ``prediction_box``
        (:class:`~approxpath.surface.folds.WeightFolds`).
    interval : (float, float), optional
        The problem's default if omitted.
    tol : float, optional
        Stop when ``delta <= tol`` (criterion units).  Default
        (:func:`~approxpath.selection.losses.default_tol`): 0.01 for the 0-1 error and the log
        marginal likelihood, 1 % of the targets' variance for ``mse``, ``loocv`` and ``gcv``, of
        their standard deviation for ``mae``.
    relative : bool, default False
        ``eps`` (given) is relative to the optimal value.
    max_solves : int
        Exact solves allowed in all, first paths included. It is checked between rounds: the
        folds' first paths, and a round of solves once started, run to their end, so a budget
        smaller than they need is overspent by them (the error says so).
    strict : bool
        If the search stops before ``delta <= tol``: raise :class:`BudgetExceededError` where the
        budget ran out, :class:`SelectionStalledError` (a subclass) where more solves cannot
        narrow it (no cell can be made finer; or a refinement was refused, as one asking a
        fold's path for an ε below what its exact solves certify is, while the chosen point's
        enclosure stopped narrowing as the gaps did); its ``selection`` attribute holds the
        result so far.  When False, warn (a :class:`.ShortfallWarning`) and return it.  A
        refused refinement alone (one that needs more than 8 times the exact solves its range
        had is refused too) leaves its cells as they are while the search goes on with the
        others.
    workers, executor
        Local processes or an executor (a ``dask.distributed.Client``) for the folds' paths
        and their refinements (one of them: ``workers > 1`` with an executor is refused).
    progress : bool
        A progress bar (the ``progress`` extra, tqdm) from the first δ down to ``tol``, with δ and
        the exact solves so far.
    **path_options
        Passed to :func:`approxpath.approximate_path` (``strategy``, ``solver``, ...).

    Returns
    -------
    Selection

    Raises
    ------
    SelectionInterrupted
        On Ctrl-C once the search has begun (the folds' first paths are done): a
        ``KeyboardInterrupt`` whose ``selection`` is the choice at the last round finished, with
        the δ proven there.
    """
    from ..validate import count, flag, number_pair, positive, problem_instance

    t0 = time.perf_counter()
    problem_instance(problem)
    _check_path_options(path_options)
    relative, strict = flag("relative", relative), flag("strict", strict)
    if eps is None:
        if relative:  # (a relative flag without its eps would be silently dropped or taken as the default)
            raise InputError("relative=True needs eps= as well (the default eps is 1e-3 of the zero model's "
                             "objective, or 1e-3 relative on a path over the weight)")
        eps, relative = default_eps(problem), False
        # over the weight the objective's scale moves along the path (the SVM's C n): 1e-3 of the
        # optimal value at each weight, not of the zero model's at the weight option it replaces
        sweep = getattr(problem.bound, "sweep", None)
        if sweep is not None and not sweep.along_bandwidth and problem.null_objective() > 0:
            eps, relative = DEFAULT_EPS, True
    positive("eps", eps)
    lo, hi = number_pair("interval", problem.default_interval() if interval is None else interval)
    problem.bound.check_interval(lo, hi)
    if tol is not None:
        positive("tol", tol)
    max_solves = count("max_solves", max_solves)
    workers = resolve(workers, default=1, name="workers")
    bound = problem.bound
    closed = getattr(bound, "CLOSED_FORM_CRITERIA", {})
    validation = validation_given(cv, X_val, y_val, shuffle)
    criterion = default_criterion(problem, criterion, validation, closed)
    tol = default_tol(criterion, problem.y) if tol is None else float(tol)
    if validation:
        problems, X_vals, y_vals, splits = fold_problems(problem, cv, X_val, y_val, groups, criterion, shuffle)
    else:
        problems, X_vals, y_vals, splits = [problem], None, None, None
    options = dict(path_options, relative=relative)
    # no path where the bound encloses the criterion between exact optima: a closed-form one or a
    # validation loss, over the bandwidth (pairs from the optima's factorizations) or over λ
    no_path = _without_paths(bound, validation)
    if no_path:  # (the paths check their own)
        from ..memory import check_problem_fits

        check_problem_fits(problem)
    bar = delta_bar(progress, tol, f"select {problem.name}",
                    "first cells" if no_path else f"first paths ({len(problems)})")
    try:
        # one pool for every path; none where there is no path to hand out (nor its share of the caches)
        with pool(workers, executor, (workers > 1 or executor is not None) and not no_path) as executor:
            return _select(problem, criterion, validation, closed, problems, X_vals, y_vals, eps, lo, hi, tol,
                           max_solves, strict, executor, options, path_options, t0, bar, no_path, splits)
    finally:
        if bar is not None:
            bar.close()


def _select(problem, criterion, validation, closed, problems, X_vals, y_vals, eps, lo, hi, tol, max_solves,
            strict, executor, options, path_options, t0, bar, no_path, splits):
    bound = problem.bound
    seeds = [{} for _ in problems]  # every exact solve of each fold, reused by its refinements
    paths = []
    if no_path:  # (the criterion counts its solves as Tracks)
        from ..surface.folds import WeightFolds
        from ..surface.nodes import WeightNodes

        if validation:
            over = BandwidthFolds if bound.sweep.along_bandwidth else WeightFolds
            crit = tracks = over(problems, X_vals, y_vals, criterion)
        else:
            over = NodeClosedForm if bound.sweep.along_bandwidth else WeightNodes
            crit = tracks = over(problem, criterion, closed[criterion])
    else:
        paths = refine.run_paths(problems, [(lo, hi)] * len(problems), [eps] * len(problems), seeds, executor, options)
        tracks = Tracks(problems, paths)
        if bar is not None:
            bar.note(f"first paths done, {tracks.solves} exact solves; enclosing the criterion")
        if not validation:
            crit = ClosedForm(tracks, criterion, closed[criterion])
        elif hasattr(bound, "prediction_enclosure"):
            crit = Validation(tracks, X_vals, y_vals, criterion, executor=executor)
        else:
            crit = Sampled(tracks, X_vals, y_vals, criterion)
        if bar is not None and hasattr(crit, "progress"):
            crit.progress = bar.note

    solve = refine.Refinements(tracks, seeds, executor, path_options, max_solves)
    stuck = solve.stuck

    sampled = isinstance(crit, Sampled)
    # (folds enclosed from their paths' pieces, or from the pairs of cells between exact optima)
    certified_folds = isinstance(crit, Validation) or hasattr(crit, "fold_pieces")

    def best(search):
        t, value, delta = search.best()
        return t, value, finite_delta(delta, problem, {problem.parameter: (lo, hi)})

    def made(state):  # the Selection of a finished round's ``state`` (:func:`_kept`)
        edges, lo_, hi_, cert, refinements, t, value, delta = state
        value, (low, high) = oriented(crit.sense, *value), oriented(crit.sense, lo_, hi_)
        certified = not sampled and bool(np.all(cert))
        return Selection(t=float(t), value=(float(value[0]), float(value[1])),
                         delta=float("nan") if sampled else float(delta), criterion=criterion, sense=crit.sense,
                         tol=float(tol), kind="certified" if certified else "sampled", edges=edges, lo=low,
                         hi=high, exact_solves=int(tracks.solves), refinements=refinements,
                         folds=len(problems), wall_s=time.perf_counter() - t0, paths=tuple(paths),
                         parameter=problem.parameter, proof=proof())

    def proof():  # what a certificate file is made of: the folds (or a hold-out set) and their pieces
        if not certified_folds:
            return None
        for fold in problems:  # (the search is over: a kept choice need not hold the folds' kernels)
            if fold is not problem:
                fold.bound.drop_caches()
        if hasattr(crit, "drop_caches"):  # (nor a criterion's own, with no path)
            crit.drop_caches()
        kept = None if splits is None else tuple(splits)
        # (with no path, the writer makes the pieces from the cells' pairs: ``nodes``)
        pieces = None if no_path else tuple(tuple(p) for p in tracks.pieces)
        return SelectionProof(problem, tuple(problems), kept, tuple(X_vals), tuple(y_vals), pieces,
                              nodes=crit if no_path else None)

    def run():  # small dense algebra: one BLAS thread (two threads on small matrices spin: 100x slower)
        search = Search(crit, lo, hi, tol, solve)
        t, value, delta = best(search)
        state, ends = _kept(search, t, value, delta), 0
        try:
            for _ in range(_MAX_ROUNDS):
                if bar is not None and not sampled:
                    bar.update(delta, tracks.solves)
                # the budget is spent; or a refinement was refused (eps below what the exact solves
                # certify) while the chosen point's enclosure stopped narrowing as the gaps did
                over = any(getattr(exc, "left", None) for exc in stuck) or (bool(stuck) and bool(search.reason))
                if sampled or tracks.solves >= max_solves or search.lo.size > _MAX_CELLS or over:
                    break
                if delta <= tol:
                    # an end cell that may match the choice is refined a little before the user is
                    # told to widen the interval: most such warnings came from loose wide end cells
                    end = search.open_end(t, value)
                    if end is None or ends == _END_ROUNDS or not search.step(value, only=[end]):
                        break
                    ends += 1
                elif not search.step(value):
                    break
                t, value, delta = best(search)
                state = _kept(search, t, value, delta)
        except KeyboardInterrupt as exc:  # (mid-round, the cells may be half replaced: the last whole round's)
            raise SelectionInterrupted(made(state)) from exc
        return search, state

    search, state = single_threaded(run)
    t, value, delta = state[-3:]
    if not sampled:
        spent = tracks.solves >= max_solves or any(getattr(exc, "left", None) for exc in stuck)
        warn_edge(search, value, delta, t, lo, hi, problem.parameter, spent)
    result = made(state)
    if not sampled and not delta <= tol:  # (NaN is no delta met)
        short = _shortfall(search, stuck, tracks.solves, max_solves, delta, tol, t, problem.parameter)
        if strict:
            raise short.error(result)
        warnings.warn(short, stacklevel=4)  # (_select, select, its decorator: the caller's line)
    return result


# Folds a certificate file holds at most: 2,048 arrays (the archive's limit) of up to 20 per fold.
_FILED_FOLDS = 100


def _without_paths(bound, validation):
    """Whether :func:`select` encloses the criterion with ``bound`` (a problem's) between exact optima,
    with no path (``validation``: a validation loss, else a closed-form criterion)."""
    sweep = getattr(bound, "sweep", None)
    if sweep is None:  # a plug-in's bound that sweeps no kernel parameter: its paths, a sampled loss
        return False
    if sweep.along_bandwidth:
        return hasattr(bound, "node_pair") and (not validation or hasattr(bound, "prediction_enclosure"))
    return hasattr(bound, "prediction_box" if validation else "box_enclosure")


def certificate_refusal(problem, cv, both=False, held_out=False):
    """Why :meth:`Selection.save` (``both``: :meth:`~approxpath.surface.SurfaceSelection.save`) will have
    no file to write for a choice of ``problem`` with ``cv`` (None: a hold-out set where ``held_out``,
    else a criterion of the whole data), or None where it will (a validation loss enclosed from the
    folds' paths or surfaces): for the command line's ``--out``, before a run."""
    if cv is None and not held_out:
        return "a certificate file is written for a choice by a validation loss: pass --cv K or --val-data FILE"
    if isinstance(cv, int) and cv > _FILED_FOLDS:
        return f"a certificate file holds {_FILED_FOLDS} folds at most: pass --cv {_FILED_FOLDS} or fewer"
    bound = problem.bound
    # (over one parameter, cells between exact optima are written as the folds' pieces; over both, boxes)
    if both and hasattr(bound, "prediction_box"):
        return (f"{problem.name} chooses both parameters on boxes between exact optima, with no pairs to write: no "
                f"certificate file (a choice of its bandwidth or {bound.weight} alone has one)")
    if not hasattr(problem.bound, "prediction_enclosure"):
        return f"{problem.name}'s criterion is sampled (no enclosure of the exact optimum's): nothing to certify"
    return None


def _kept(search, t, value, delta):
    """A finished round of ``search``, copied (the next round replaces its cells in place): its
    cells' edges, oriented bounds and certified flags, its refinements, the choice ``t``, its
    enclosure ``value`` and ``delta``."""
    return (np.array(search.edges, dtype=float), search.lo.copy(), search.hi.copy(), np.array(search.cert, dtype=bool),
            search.refinements, t, value, delta)


def _check_path_options(options):
    """``TypeError`` for a keyword neither :func:`select` nor :func:`approximate_path` takes (a
    misspelled ``tol`` would otherwise be dropped where no path is computed)."""
    import inspect

    from ..driver import approximate_path
    from ..errors import did_you_mean

    names = {k for k, p in inspect.signature(approximate_path).parameters.items() if p.kind is p.KEYWORD_ONLY}
    mine = {k for k, p in inspect.signature(select).parameters.items() if p.kind is p.KEYWORD_ONLY}
    for key in options:
        if key not in names:
            raise TypeError(f"select() got an unexpected keyword argument {key!r}{did_you_mean(key, names | mine)}")


def _shortfall(search, stuck, solves, max_solves, delta, tol, t, parameter="bandwidth"):
    """The :class:`.ShortfallWarning` saying why ``delta > tol``, with what would help: the
    budget ran out, or more solves cannot help (the criterion's enclosure stopped narrowing, or
    the exact solves certify no smaller gap)."""
    head = f"{{who}}: delta = {delta:.4g} > {{tol}} = {tol:g} at {{name}} = {t:.6g} after {solves} exact solves"
    raise_tol = (f"raise {{tol}} to {round_up(delta, 2):g} or more (the delta reached)" if math.isfinite(delta)
                 else "")  # (an unbounded delta: no tol helps)
    fields = dict(name=shown_name(parameter))  # (a plug-in's parameter name: a field, not part of the template)
    floors = [exc for exc in stuck if getattr(exc, "left", None) is None]  # (refused alone)
    if solves >= max_solves or len(floors) < len(stuck):
        left = [exc.left for exc in stuck if getattr(exc, "left", None) is not None]
        if solves < max_solves:  # (a refinement needed more than was left)
            over = f" (a refinement of one fold's path needed more than the {min(left)} exact solves left)"
        else:
            over = (" (the folds' first paths, and a round of solves once started, run to their end)"
                    if solves > max_solves else "")
        return ShortfallWarning(f"{head}: the budget {{max_solves}} = {max_solves} is spent{{over}}; raise "
                                f"{{max_solves}}{', or ' if raise_tol else ''}{raise_tol}", delta, tol, True,
                                dict(fields, over=over))
    def said(text):  # (a cause's own text in the template, braces kept as they are)
        return text.replace("{", "{{").replace("}", "}}")

    causes = [said(search.reason)] if search.reason else []  # (the chosen point's stall first: it is the cause)
    if search.parked is not None:
        cells, a, b, times, lo_run, hi_run, stretches = search.parked
        where = f"in {stretches} stretches " if stretches > 1 else ""  # (cells that narrow lie between them)
        causes.append(f"the criterion's enclosure on {cells} cells {where}between {{name}} = {a:.6g} and {b:.6g} did "
                      f"not narrow as they were refined {times} times in a row (the criterion may jump there, or need "
                      "far narrower cells: for the 0-1 error, held-out predictions near 0), and the cells around them "
                      f"that may still beat the choice reach from {{name}} = {lo_run:.6g} to {hi_run:.6g}; "
                      f"{{interval}} without that stretch may avoid it")
    if floors:
        causes.append(said(refine.no_smaller_gap(floors[0], parameter)))
    why = "; ".join(causes) or "the search's refinement limits were reached"
    return ShortfallWarning(f"{head} (of {{max_solves}} = {max_solves}): {why}; more exact solves do not narrow it"
                            f"{', so ' if raise_tol else ''}{raise_tol}", delta, tol, False, fields)
