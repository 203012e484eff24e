"""Every error approxpath raises on purpose, and the tail of every unknown-name message.

Each is a subclass of a built-in exception, so ``except ValueError`` still catches bad input.
"""

from __future__ import annotations

import difflib

__all__ = [
    "InputError",
    "SolverError",
    "EpsilonTooSmallError",
    "BudgetExceededError",
    "SelectionStalledError",
    "SelectionInterrupted",
    "DuplicateProblemError",
    "ClusterError",
    "did_you_mean",
    "brief",
]


class InputError(ValueError):
    """Bad user input: the message names the argument and the fix."""


class SolverError(RuntimeError):
    """No exact solver produced a usable point."""


class ClusterError(RuntimeError):
    """Work handed to other processes was lost: a worker process of ``workers=`` died, or a Dask
    cluster's workers died, or it has had none for a while."""


class EpsilonTooSmallError(ValueError):
    """ε is below the duality gap the exact solves themselves achieve.  Raised by a path's
    driver with ``t`` (where), ``gap`` (the gap the exact solve there certifies) and ``allowed``
    (the largest gap an exact solve there may have to carry the path) as attributes."""


class BudgetExceededError(RuntimeError):
    """A path needs more exact solves or pieces than allowed (``max_solves``, ``max_pieces``)."""


class SelectionStalledError(BudgetExceededError):
    """A certified selection cannot bring δ down to ``tol``: its criterion's enclosure stopped
    narrowing as the gaps did, or the exact solves certify no smaller gap (more solves do not
    help; ``selection`` holds the result reached).  A :class:`BudgetExceededError`, as a
    selection that stops short of ``tol`` was before it had its own cause."""


class SelectionInterrupted(KeyboardInterrupt):
    """Ctrl-C (or ``KeyboardInterrupt``) stopped a selection once its search had begun:
    ``selection`` holds the choice at the last round it finished, with the δ proven there (a
    :class:`~approxpath.Selection` or :class:`~approxpath.SurfaceSelection`, usually short of
    ``tol``).  A ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops."""

    def __init__(self, selection):
        self.selection = selection
        super().__init__(f"interrupted after {selection.exact_solves} exact solves; the choice so far: "
                         f"{selection.summary()}")

    def __reduce__(self):  # (pickled as made)
        return type(self), (self.selection,)


class DuplicateProblemError(ValueError):
    """Two different classes claim the same registry name."""


def did_you_mean(value, choices, n=1):
    """``"; did you mean 'x'?"`` naming the closest of ``choices`` to ``value`` (up to ``n`` of
    them), or ``""`` when none is close: the tail of every unknown-name error.  Close: the same
    name in other case (``C`` for ``c``, as scikit-learn spells it), else similar
    (:func:`difflib.get_close_matches`), else one name the start of the other (``tolerance``
    for ``tol``, ``--data-file`` for ``--data``; three characters past any dashes at least).
    Names are compared as ``str``; several read ``'x' or 'y'``."""
    value, names = str(value), [str(c) for c in choices]
    close = [c for c in names if c.lower() == value.lower()][:n] or difflib.get_close_matches(value, names, n=n)
    if not close and len(value.lstrip("-")) >= 3:
        close = [c for c in names if len(c.lstrip("-")) >= 3 and (value.startswith(c) or c.startswith(value))][:n]
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def brief(exc):
    """``"TypeName: the first line of its message"``: an exception from someone else's code (a
    plug-in's, a solver's) in one line (their messages may go on with whole matrices); nothing
    follows the colon for an empty message."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
