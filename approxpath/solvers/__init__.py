"""Exact solves: how hard they try, and the one chain that accepts a solver's point.

Whatever a solver reports is only a *candidate*: the problem restores it to exact feasibility
and :func:`solve_exact` accepts it only when the certified gap computed by the problem's
:class:`~approxpath.bound.Bound`, in numpy, is small.  A solver's status or objective is never
used.

How hard a solve tries is set for a block of code by :func:`settings` (:class:`SolveSettings`:
a time limit per solver call, and the second, tighter round of :func:`solve_exact`); every
backend reads them from :func:`current_settings`.  The backends: :mod:`approxpath.solvers.conic`
(Clarabel, SCS, CVXPY) and a problem's own (libSVM for ``kernel_svm``).
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..moving import value_at

__all__ = ["EXACT_GAP", "SolveSettings", "settings", "current_settings", "solve_exact"]

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
        The second round: tighter tolerances, more iterations, and any finite point a
        solver returns is a candidate whatever its status (the certified gap decides).
    """

    time_limit: float | None = None
    tight: bool = False


_SETTINGS = contextvars.ContextVar("approxpath_solve_settings", default=SolveSettings())


def current_settings():
    """The :class:`SolveSettings` in force (see :func:`settings`)."""
    return _SETTINGS.get()


@contextmanager
def settings(value):
    """Run the exact solves of a ``with`` block under ``value`` (a :class:`SolveSettings`)."""
    token = _SETTINGS.set(value)
    try:
        yield value
    finally:
        _SETTINGS.reset(token)


def solve_exact(problem, t, names, time_limit=None, warm=None, enough=None):
    """An optimal pair of ``problem`` at ``t``, made exactly feasible: the backends ``names`` in
    turn (:meth:`~approxpath.Problem.candidate`, then :meth:`~approxpath.Problem.restore`), the
    first pair whose certified gap (``problem.bound.gap``) is at most :data:`EXACT_GAP` relative
    to the dual objective, or at most ``enough(pair)`` (a backend given ``warm`` whose pair misses
    it is tried once more from scratch before the next backend).  If none reaches it, a second
    round tries them again with tighter settings (:class:`SolveSettings`); then the pair with the
    smallest gap is returned.

    Parameters
    ----------
    problem : approxpath.Problem
    t : float
    names : list of str
        Backends of ``problem``.
    time_limit : float, optional
        Seconds per solver call; a backend out of time counts as failed (not retried in the
        tighter round).
    warm : (primal, dual), optional
        An optimal pair nearby, handed to every backend (which may start from it).
    enough : callable, optional
        ``enough(pair)``: a certified gap that already serves the caller (the path driver: a
        small share of its target at ``t``), accepted even above the :data:`EXACT_GAP` mark --
        robust_l1's HiGHS vertex at n = 4000 certifies 1.3e-7 relative, where the next backend
        (an interior point on a dense LP) does not finish.

    Raises
    ------
    SolverError
        When no backend produced a pair at all.
    """
    said, best = [], None
    for tight in (False, True):
        retry = []
        for name in names:
            # a warm start whose pair misses the mark is retried from scratch before the next
            # (slower) backend: robust_l1's HiGHS from a neighbour's basis left a gap of 3e-5 at
            # n = 1000, t = 1.71, where the cold solve certifies 3e-6 in 0.9 s and Clarabel took 74 s
            for start in (warm, None) if warm is not None else (None,):
                label = name + (" (tight)" if tight else "") + (" (cold)" if warm is not None and start is None else "")
                t0 = time.perf_counter()
                try:
                    with settings(SolveSettings(time_limit, tight)):
                        pair = problem.restore(*problem.candidate(name, t, start), t)
                    g = problem.bound.gap(*pair, t)
                except ModuleNotFoundError as exc:  # an optional backend (libSVM: the sklearn extra)
                    said.append(f"{name}: not installed ({exc})")
                    break
                except MemoryError:  # no other backend or point will fit either: stop the run, once
                    raise
                except Exception as exc:  # a failing solver is one more reason to try the next
                    said.append(f"{label}: {type(exc).__name__}: {exc}")
                    if time_limit is None or time.perf_counter() - t0 < time_limit:
                        retry.append(name)  # out of time: a tighter round would be slower still
                    break
                if not np.isfinite(g):
                    said.append(f"{label}: non-finite gap")
                    retry.append(name)
                    break
                if g <= EXACT_GAP * (1.0 + abs(problem.dual_objective(value_at(pair[1], t), t))):
                    return pair
                if enough is not None and g <= enough(pair):
                    return pair
                said.append(f"{label}: gap {g:.3g}")
                if best is None or g < best[0]:
                    best = (g, pair)
            else:
                retry.append(name)
        names = retry
    if best is not None:
        return best[1]
    raise SolverError(f"{problem.name} at t = {t:.6g}: no solver produced a pair (" + "; ".join(said) + ")")
