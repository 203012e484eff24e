"""The paths of a selection's folds and their refinements at new exact solves: where they run
(here or on an executor, from the exact solves each fold made before), what a round of
refinements may spend (:class:`Refinements`), and why one was refused (:func:`no_smaller_gap`)."""

from __future__ import annotations

import warnings

from ..compute.executors import result, submit
from ..errors import BudgetExceededError, EpsilonTooSmallError
from ..progress import shown_name

__all__ = ["Refinements", "run_paths", "no_smaller_gap"]

# A refinement of one fold's range may take at most this many times the exact solves its path
# had there (and at least _JOB_MIN); past that it is refused as one below the solves' floor is,
# and the search goes on with the others.  (At ¼ of ε a path needs about twice the solves; one
# asking ¼ of a gap already near the rounding of the solves ran past 1,800 exact solves on
# ionosphere over C, and its budget error ended the search at δ = 0.051.)
_JOB_GROWTH, _JOB_MIN = 8, 64


class Refinements:
    """The search's ``solve``: called with a round's refinements ``[(fold, lo, hi, eps), ...]``,
    it returns their paths ``[(fold, path), ...]`` (the refused left out), each started from its
    fold's exact solves ``seeds[fold]``.  The round shares the solves left of ``max_solves``
    (:func:`_shares`, each at most its cap: :data:`_JOB_GROWTH` times the exact solves its range
    had, :data:`_JOB_MIN` at least); one whose share ran out runs again on what the others left.

    Attributes
    ----------
    stuck : list of Exception
        Why refinements were refused: the budget (``left`` set: the search stops), or ε below
        the solves' floor, past its own cap (``cap`` set) or past ``max_pieces``.
    floors : list of tuple
        ``(fold, lo, hi, eps)`` of the refinements refused alone (the others go on); one inside
        them at no larger ε is not asked again.
    """

    def __init__(self, tracks, seeds, executor, path_options, max_solves):
        self.tracks, self.seeds, self.executor = tracks, seeds, executor
        self.path_options, self.max_solves = path_options, max_solves
        self.stuck, self.floors = [], []

    def _refused_before(self, k, a, b, e):
        return any(k == k_ and a_ <= a and b <= b_ and e <= e_ for k_, a_, b_, e_ in self.floors)

    def __call__(self, jobs):
        tracks, max_solves = self.tracks, self.max_solves
        jobs = [j for j in jobs if tracks.solves < max_solves and not self._refused_before(*j)]
        done, spent = [], 0  # (the paths' solves are counted when the search takes them)
        while jobs:  # a refinement whose share ran out runs again on what the others left
            refine = dict(self.path_options, relative=False, max_solves=max(2, max_solves - tracks.solves - spent))
            caps = [max(_JOB_MIN, _JOB_GROWTH * len({x for piece, _, _ in tracks.over(k, a, b) for x in piece.anchors}))
                    for k, a, b, _ in jobs]
            budgets = _shares(caps, refine["max_solves"])
            refused = []
            got = run_paths([tracks.problems[k] for k, *_ in jobs], [(a, b) for _, a, b, _ in jobs],
                            [e for *_, e in jobs], [self.seeds[k] for k, *_ in jobs], self.executor, refine, refused,
                            budgets)
            done += [(k, path) for (k, *_), path in zip(jobs, got) if path is not None]
            spent += sum(path.exact_solves for path in got if path is not None)
            short = []
            for i, exc in refused:
                tracks.solves += len(getattr(exc, "solves", ()))  # (kept as seeds by run_paths)
                solves_out = isinstance(exc, BudgetExceededError) and getattr(exc, "limit", None) == "max_solves"
                if solves_out and budgets[i] < min(caps[i], refine["max_solves"]):
                    short.append((jobs[i], exc))  # its share ran out, not the budget
                    continue
                self.stuck.append(exc)
                if solves_out and budgets[i] < caps[i]:
                    exc.left = refine["max_solves"]  # (the search stops after this round)
                else:  # below the solves' floor, past its own cap, or past max_pieces: refused alone
                    exc.cap = budgets[i] if solves_out else None
                    self.floors.append(jobs[i])
            jobs = [job for job, _ in short]
            if jobs and tracks.solves + spent >= max_solves:  # nothing left for them: the search stops
                for _, exc in short:
                    exc.left = refine["max_solves"]
                    self.stuck.append(exc)
                jobs = []
        return done


def run_paths(problems, intervals, eps, seeds, executor, options, refused=None, budgets=None):
    """Paths of ``problems[k]`` over ``intervals[k]`` at ``eps[k]``, here or on ``executor``; each
    starts from the exact solves ``seeds[k]`` made before this call (the same here and in a
    worker, so that both give the same paths) and adds its own to them after it.  With
    ``refused`` (a list), a path refused with :class:`EpsilonTooSmallError` or
    :class:`BudgetExceededError` is None in the result and ``(k, error)`` is appended there (the
    others are kept; the exact solves it made, ``error.solves``, join the seeds all the same);
    without, the error is raised.  ``budgets[k]``: path ``k``'s ``max_solves`` (default the one
    of ``options``)."""
    from ..driver.parallel import path_in_worker

    def each(k, run):
        try:
            got = run()
            if isinstance(got, Exception):  # (a worker's refusal, returned: see _refusal_returned)
                raise got
            return got
        except (EpsilonTooSmallError, BudgetExceededError) as exc:
            if refused is None:
                raise
            refused.append((k, exc))
            return None, getattr(exc, "solves", {})

    given = [dict(s) for s in seeds]
    opts = [options] * len(problems) if budgets is None else [dict(options, max_solves=b) for b in budgets]
    if executor is None:
        done = []
        for k, (p, iv, e, s) in enumerate(zip(problems, intervals, eps, given)):
            done.append(each(k, lambda: _seeded_path(p, e, iv, seeds=s, **opts[k])))
            _release(p)
    else:
        futures = [submit(executor, path_in_worker, _refusal_returned, p, e, iv, dict(o, seeds=s))
                   for p, iv, e, s, o in zip(problems, intervals, eps, given, opts)]
        done = [each(k, lambda f=f: result(f)) for k, f in enumerate(futures)]
    for (_, found), s in zip(done, seeds):
        s.update(found)
    return [path for path, _ in done]


def _release(problem):
    """Free what a fold's problem keeps until its next path: its kernels (n x n each; a4a's folds
    kept 230 MB each otherwise) and what its exact solves keep (its ``release``, e.g. robust_l1's
    HiGHS instances): one fold's at a time."""
    for release in (getattr(getattr(problem.bound, "kernels", None), "release", None),
                    getattr(problem, "release", None)):
        if release is not None:
            release()


def _seeded_path(problem, eps, interval, seeds=None, **options):
    """:func:`approxpath.approximate_path` from the exact solves ``seeds`` (which it extends):
    ``(path, seeds)``.  Its :class:`~approxpath.driver.UncoveredWarning` is not the caller's: a
    fold's uncovered piece gives its cells the trivial enclosure, which the selection's δ shows."""
    from ..driver import UncoveredWarning, approximate_path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncoveredWarning)
        return approximate_path(problem, eps, interval, seeds=seeds, **options), seeds


def _refusal_returned(problem, eps, interval, seeds=None, **options):
    """:func:`_seeded_path` in a worker, its refusal (:class:`EpsilonTooSmallError`,
    :class:`BudgetExceededError`) returned rather than raised: a Dask worker logs a task that
    raises as a failed computation, with its traceback, though the search takes the refusal in
    its stride."""
    try:
        return _seeded_path(problem, eps, interval, seeds, **options)
    except (EpsilonTooSmallError, BudgetExceededError) as exc:
        return exc


def _shares(caps, left):
    """Exact-solve budgets of one round's refinements: the ``left`` solves shared out, the
    smallest caps first (each at most its cap, and an equal share of what the smaller ones left;
    at least 2, a path's two ends), so that a round spends about what is left, not that for
    each of its refinements."""
    out, rest = [0] * len(caps), int(left)
    for j, i in enumerate(sorted(range(len(caps)), key=caps.__getitem__)):
        out[i] = min(caps[i], max(2, rest // (len(caps) - j)))
        rest = max(rest - out[i], 0)
    return out


def no_smaller_gap(exc, parameter):
    """Why a refinement cannot tighten a path further: the gap the exact solve certifies where
    the refinement needed less (not the driver's "use eps >= ..." advice: the ε it names is the
    refinement's own, not one the user set).  Shared with the search over both parameters
    (:mod:`approxpath.surface.select`)."""
    if getattr(exc, "cap", None) is not None:
        return (f"a refinement of one fold's path needed more than {exc.cap} exact solves, the most one may take "
                f"({_JOB_GROWTH} times those its range had, {_JOB_MIN} at least): the gaps it asked for are near what "
                "its exact solves certify")
    if getattr(exc, "t", None) is None:
        return f"the exact solves certify no smaller gap ({exc})"
    return (f"the exact solves certify no smaller gap (at or next to the exact solve at {shown_name(parameter)} = "
            f"{exc.t:.6g} the gap bound is {exc.gap:.3g}, where the refinement needed {exc.allowed:.3g} or less)")
