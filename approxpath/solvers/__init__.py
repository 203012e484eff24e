"""Exact solves: how hard they try, and the one chain that accepts a solver's point.

Whatever a solver reports is only a *candidate*: the problem restores it to exact feasibility
and :func:`solve_exact` accepts it only when the certified gap computed by the problem's
:class:`~approxpath.bound.Bound`, in numpy, is small.  A solver's status or objective is never
used.

How hard a solve tries is set for a block of code by :func:`settings` (:class:`SolveSettings`:
a time limit per solver call, and the tighter tries of :func:`solve_exact`); every
backend reads them from :func:`current_settings`.  The backends: :mod:`approxpath.solvers.conic`
(Clarabel, SCS, CVXPY) and a problem's own (libSVM for ``kernel_svm``).
"""

from __future__ import annotations

import contextvars
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..errors import ClusterError, InputError, SolverError
from ..moving import value_at

__all__ = ["EXACT_GAP", "SolveSettings", "settings", "current_settings", "solve_exact", "at_exact_mark"]

#: An exact solve is accepted when its certified gap is at most this times (1 + |dual objective|);
#: interior-point solves with tolerances 1e-10 reach ~1e-9, libSVM with tol 1e-7 ~1e-8.
EXACT_GAP = 1e-7


@dataclass(frozen=True)
class SolveSettings:
    """How hard an exact solve tries.

    Attributes
    ----------
    time_limit : float or None
        Seconds per solver call (Clarabel's ``time_limit``, SCS's ``time_limit_secs``); a
        solver that runs out of time counts as failed and the next one is tried.  libSVM
        cannot be interrupted: it is bounded by an iteration cap instead.  None: no limit.
    tight : bool
        Tighter tolerances, more iterations, and any finite point a solver returns is a
        candidate whatever its status (the certified gap decides): the try after a backend's
        pair missed the mark, and the last round for backends that failed.
    """

    time_limit: float | None = None
    tight: bool = False


_SETTINGS = contextvars.ContextVar("approxpath_solve_settings", default=SolveSettings())


def current_settings():
    """The :class:`SolveSettings` in force (see :func:`settings`)."""
    return _SETTINGS.get()


@contextmanager
def settings(value):
    """Run the exact solves of a ``with`` block under ``value`` (a :class:`SolveSettings`): it is yielded, and is
    :func:`current_settings` inside the block; the settings before are back after it."""
    token = _SETTINGS.set(value)
    try:
        yield value
    finally:
        _SETTINGS.reset(token)


def solve_exact(problem, t, names, time_limit=None, warm=None, enough=None, need=None):
    """An optimal pair of ``problem`` at ``t``, made exactly feasible: the backends ``names`` in
    turn (:meth:`~approxpath.Problem.candidate`, then :meth:`~approxpath.Problem.restore`), the
    first pair whose certified gap (``problem.bound.gap``), less the bound's rounding allowance
    (``problem.bound.rounding``: no solver reduces it), is at most :data:`EXACT_GAP` relative
    to the dual objective, or at most ``enough(pair)``.  A backend given ``warm`` whose pair misses
    the mark, or which stops without a point, is tried once more from scratch, and a backend
    whose pairs miss it is tried again with tighter settings (:class:`SolveSettings`) before the
    next backend: the first backend is the problem's fast one, the later ones general conic
    solvers (the kernel SVM at C = 2 - 32 on heart: libSVM at tol 1e-7 missed the mark at 30 % of
    the solves, where Clarabel took 64 ms and libSVM at 1e-9 a few).  Backends that failed are
    tried once more with tighter settings at the end; then the pair with the smallest gap is
    returned.

    Parameters
    ----------
    problem : approxpath.Problem
    t : float
    names : list of str
        Backends of ``problem``.
    time_limit : float, optional
        Seconds per solver call; a backend out of time counts as failed (not retried with
        tighter settings).
    warm : (primal, dual), optional
        An optimal pair nearby, handed to every backend (which may start from it).
    enough : callable, optional
        ``enough(pair)``: a certified gap that already serves the caller (the path driver: a
        small share of its target at ``t``), accepted even above the :data:`EXACT_GAP` mark --
        robust_l1's HiGHS vertex at n = 4000 certifies 1.3e-7 relative, where the next backend
        (an interior point on a dense LP) does not finish.
    need : callable, optional
        ``need(pair)``: the largest certified gap the caller can use (the path driver: half its
        target at ``t``).  A pair at the :data:`EXACT_GAP` mark but above it is tried once more
        with the same backend's tighter settings, and the smaller gap returned (the later,
        general backends reach no smaller gap there: a selection's refinement on heart at C = 1
        asked for 1.4e-7 where libSVM's pair, at the mark, certified 2.6e-7, and its tight try
        1.5e-8 like Clarabel's).

    Raises
    ------
    InputError
        When no backend produced a pair and one refused the problem as given (e.g. a kernel
        that does not fit the memory budget): its message, the one thing to change.
    SolverError
        When no backend produced a pair at all.
    """
    said, refused, best = [], [], None
    for last_round in (False, True):
        failed = []
        for name in names:
            for tight in (True,) if last_round else (False, True):
                outcome = _attempt(problem, t, name, tight, time_limit, warm, enough, need, said, refused)
                if outcome[0] == "accepted":
                    return outcome[1]
                if outcome[0] in ("missed", "short"):
                    if best is None or outcome[1] < best[0]:
                        best = outcome[1:]
                    if outcome[0] == "short" and tight:  # at the mark, tight: the best there is
                        return best[1]
                    continue  # tighter settings next, else the next backend
                if outcome[0] == "failed":
                    failed.append(name)
                break  # failed or not installed: the next backend
        names = failed
    if best is not None:
        return best[1]
    from ..progress import shown_name

    at = f"{shown_name(problem.parameter)} = {t:.6g}"
    error = SolverError(f"{problem.name} at {at}: no solver produced a pair ({_grouped(said)})")
    if refused:  # retrying elsewhere cannot help: say the first refusal alone
        raise refused[0] from error
    raise error


def at_exact_mark(problem, pair, t, g):
    """Whether ``pair``, of gap ``g`` at ``t``, is an optimal pair by the solvers' mark: its gap
    less the bound's rounding allowance (which no solver reduces; the SVM's at n = 100,000:
    ~1.8e-2, over every mark; 0 for a bound that does not tell it apart) at most
    :data:`EXACT_GAP` relative to the dual objective:
    :math:`g - \\mathrm{rounding} \\le \\mathrm{EXACT\\_GAP}\\,(1 + |\\mathrm{dual\\ objective}|)`, ``rounding`` =
    ``problem.bound.rounding(*pair, t)``, ``g`` the pair's certified gap at ``t``; each side of ``pair`` is fixed or
    :class:`~approxpath.moving.Moving` (the dual's value at ``t`` is taken)."""
    net = g - problem.bound.rounding(*pair, t)
    return net <= EXACT_GAP * (1.0 + abs(problem.dual_objective(value_at(pair[1], t), t)))


def _attempt(problem, t, name, tight, time_limit, warm, enough, need, said, refused):
    """One backend at one setting, from ``warm`` and then (if its pair misses the mark, or the
    solver stops without a point: :class:`SolverError`) from scratch: ``("accepted", pair)``,
    ``("missed", gap, pair)`` (the smaller gap), ``("short", gap, pair)`` (at the mark but above
    ``need``: not retried from scratch), ``("failed",)`` (an error or a non-finite gap; not when
    out of time), ``("out",)`` (out of time) or ``("missing",)`` (not installed); each miss and
    failure is told in ``said``, and each :class:`InputError` (the problem refused as given) kept
    in ``refused``."""
    missed = None
    # a warm start whose pair misses the mark is retried from scratch before the next (slower)
    # backend: robust_l1's HiGHS from a neighbour's basis left a gap of 3e-5 at n = 1000,
    # t = 1.71, where the cold solve certifies 3e-6 in 0.9 s and Clarabel took 74 s
    for start in (warm, None) if warm is not None else (None,):
        label = name + (" (tight)" if tight else "") + (" (cold)" if warm is not None and start is None else "")
        t0 = time.perf_counter()
        try:
            with settings(SolveSettings(time_limit, tight)):
                pair = problem.restore(*problem.candidate(name, t, start), t)
        except ModuleNotFoundError as exc:  # an optional backend (libSVM: the sklearn extra)
            said.append(f"{name}: not installed ({exc})")
            _tell_missing(problem, name, exc)
            return ("missing",)
        except (MemoryError, ClusterError):  # no other backend or point will fit, or the cluster lost
            raise  # the work of every backend's certification: stop the run, once
        except Exception as exc:  # a failing solver is one more reason to try the next
            said.append(f"{label}: {type(exc).__name__}: {exc}")
            if isinstance(exc, InputError):
                refused.append(exc)
            # out of time: tighter settings would be slower still
            if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                return ("out",)
            # a warm start the solver ran without reaching a point is retried from scratch as
            # well: HiGHS from a basis of another bandwidth can stop without one (sinc, n = 1500,
            # robust l1: from t = 2 at t = 0.13, "no solution (Not Set)"; the cold solve is
            # optimal).  (A backend that declines, the SVM's SMO below 1,000 samples, declines again at once)
            if start is None or not isinstance(exc, SolverError):
                return ("failed",)
            continue
        # outside the solver's try: a bound's arithmetic that raises is a bug (its own, or a plug-in's), not a
        # solver's failure to try the next backend on (it read "no exact solve succeeded anywhere" for each point)
        try:
            g = problem.bound.gap(*pair, t)
        except Exception as exc:  # a pair of the wrong layout: errors() says what gap() could not read
            refused_by = problem.bound.errors(*pair, t, t)
            if refused_by:
                raise RuntimeError(f"{problem.name}: {label}'s restore() returned a pair its bound refuses "
                                   f"({refused_by[0]}), and gap() raised {type(exc).__name__}: {exc}") from exc
            raise
        if not np.isfinite(g):
            said.append(f"{label}: non-finite gap")
            return ("failed",)
        # judged without the bound's rounding allowance, which no solver reduces (at_exact_mark)
        if enough is not None and g - problem.bound.rounding(*pair, t) <= enough(pair):
            return ("accepted", pair)
        if at_exact_mark(problem, pair, t, g):
            needed = None if need is None else need(pair)
            if needed is None or g <= needed:
                return ("accepted", pair)
            said.append(f"{label}: gap {g:.3g}, above the {needed:.3g} needed")
            return ("short", g, pair)
        infeasible = problem.bound.errors(*pair, t, t)  # (asked of a miss alone: a kept pair's pieces are checked)
        if infeasible:  # its gap proves nothing: not an "eps too small" floor
            said.append(f"{label}: restore() returned a pair its bound refuses ({infeasible[0]})")
            return ("failed",)
        said.append(f"{label}: gap {g:.3g}")
        if missed is None or g < missed[1]:
            missed = ("missed", g, pair)
    return missed


_TOLD = set()  # (problem name, backend) whose absence this process has told (a forked worker inherits it)


def _tell_missing(problem, name, exc):
    """A warning, once per process and backend, that an optional backend is not installed: the
    next one solves in its place, often far slower (the SVM's libSVM: Clarabel took 10-30x as long)."""
    if (problem.name, name) not in _TOLD:
        _TOLD.add((problem.name, name))
        warnings.warn(f"{problem.name}: exact solver {name!r} not installed ({exc}); the next one solves in its "
                      "place", stacklevel=2)


def _grouped(said):
    """The backends' messages ``"label: what"`` each said once, after every label that said it
    (a backend's tight retry usually fails as its first try did)."""
    labels = {}
    for line in said:
        label, _, what = line.partition(": ")
        labels.setdefault(what, []).append(label)
    return "; ".join(f"{', '.join(names)}: {what}" for what, names in labels.items())
