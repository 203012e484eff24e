"""The warnings a selection ends with, in the words of whoever asked for it.

:func:`~approxpath.selection.select` and :func:`~approxpath.surface.select_surface` say in their
own keywords (``tol``, ``max_solves``, the interval or the box) why a choice may fall short of
what was asked.  An estimator (``cv_tol``, ``t_range``) or the command line (``--tol``,
``--range``) asks the same warning for its text in its own names (:meth:`ShortfallWarning.text`,
:meth:`RangeWarning.text`) rather than rewording the message.
"""

from __future__ import annotations

import warnings

from ..errors import BudgetExceededError, SelectionStalledError
from ..progress import shown_name

__all__ = ["RangeWarning", "ShortfallWarning", "SortedFoldsWarning", "said_apart", "warn_edge", "surface_outcome"]


def said_apart(values):
    """The numbers ``values`` as text, in 6 significant digits, or all in full (the shortest text
    that reads back as the float) where two different ones would read alike: a range's ends 1 and
    1.0000001 were both "1"."""
    short = [f"{v:.6g}" for v in values]
    return short if len(set(short)) == len(set(values)) else [repr(float(v)) for v in values]


class SortedFoldsWarning(UserWarning):
    """The points are sorted by feature ``feature`` (counted from 1) and the ``k`` unshuffled
    folds are blocks of consecutive points: each holds out one stretch of it, so the criterion
    measures extrapolation.  The message names ``how`` to shuffle them; :meth:`text` says it with
    a caller's own way (an estimator's ``cv`` splitter, the command line's ``--shuffle``)."""

    def __init__(self, feature, k, how=None):
        self.feature, self.k = int(feature), int(k)
        self.how = how or f"shuffle=SEED, or a splitter such as KFold({self.k}, shuffle=True, random_state=0)"
        super().__init__(self.text(self.how))

    def __reduce__(self):  # (pickled as made)
        return type(self), (self.feature, self.k, self.how)

    def text(self, how):
        """The message with ``how`` as the way to shuffle the points."""
        return (f"the points are sorted by feature {self.feature} and the {self.k} folds are blocks of consecutive "
                f"points: each holds out one stretch of it, so the criterion measures extrapolation; shuffle them "
                f"({how})")


class RangeWarning(UserWarning):
    """The choice may be matched at a side of the range searched: the criterion may be better
    beyond it.  Besides its message it says where, for callers that name the range otherwise
    (:meth:`text`): ``choice``, the choice in words (``"the chosen t = 0.5"``), and ``sides``,
    triples ``(parameter, "lower" or "upper", end)`` with the parameter ``"bandwidth"`` (or the
    path's parameter) or the weight's name, and the end's value; ``undecided``: the criterion is
    left undecided at that end (its cell there is wider than both the δ reached and the
    tolerance, and more exact solves settled no more of it), so a wider range would not decide
    it either; ``flat``: the loss is 0 at every point evaluated, the least it can be (a tie
    everywhere, which no wider range breaks)."""

    def __init__(self, message, choice, sides, undecided=False, flat=False):
        super().__init__(message)
        self.choice, self.sides, self.undecided, self.flat = choice, tuple(sides), bool(undecided), bool(flat)

    def __reduce__(self):  # (pickled as made: a worker's warning reaches its caller whole)
        return type(self), (str(self), self.choice, self.sides, self.undecided, self.flat)

    def text(self, who, name):
        """The message said by ``who`` (``"KernelPathSVC"``) with ``name(parameter)`` for the
        range searched over that parameter (``"t_range"``, ``"--weights"``)."""
        names = [(name(parameter), side, end) for parameter, side, end in self.sides]
        ends = " and ".join(f"the {side} end of {range_name}, {end}"
                            for (range_name, side, _), end in zip(names, said_apart([e for *_, e in names])))
        widen = " and ".join(dict.fromkeys(range_name for range_name, *_ in names))
        it = "it" if len(names) == 1 else "them"
        if self.flat:
            return f"{who}: the criterion is 0, the least it can be, at every value evaluated over {widen}, so " \
                   f"{self.choice} ties with {ends}: the validation data tell no value apart (too few validation " \
                   f"points, or targets every model fits alike); widening {widen} would only move the tie"
        if self.undecided:
            return f"{who}: {self.choice} may be matched at {ends}, where the exact solves leave the criterion " \
                   f"undecided: a better value there or beyond {it} is not ruled out, and widening {widen} would not " \
                   f"decide it; narrow {widen} to leave that end out if it is of no interest"
        return f"{who}: {self.choice} may be matched at {ends}: the criterion may be better beyond {it}; widen " \
               f"{widen} past {it}"


class ShortfallWarning(UserWarning):
    """A selection stopped with ``delta > tol`` and returned its result (``strict=False``).

    Attributes
    ----------
    delta, tol : float
        The δ reached (NaN or inf when no bound holds) and the one asked for.
    spent : bool
        The budget ``max_solves`` ran out (more of it may help); False: more exact solves do not
        narrow δ.
    template, fields, names
        The message with the places of the caller's names (``{who}``, ``{tol}``,
        ``{max_solves}``, ``{smaller}``, ``{interval}``), the values of its own, and the names it
        is said with (:meth:`text`, :meth:`renamed`).
    """

    _NAMES = dict(who="select", tol="tol", max_solves="max_solves", smaller="choose over a smaller box",
                  interval="an interval")

    def __init__(self, template, delta, tol, spent, fields=None, names=None):
        self.template, self.fields, self.names = template, dict(fields or {}), {**self._NAMES, **(names or {})}
        self.delta, self.tol, self.spent = float(delta), float(tol), bool(spent)
        super().__init__(self.text())

    def __reduce__(self):  # (pickled as made: a worker's warning reaches its caller whole)
        return type(self), (self.template, self.delta, self.tol, self.spent, self.fields, self.names)

    def text(self, **names):
        """The message with the caller's ``names``: ``who`` says it, ``tol`` and ``max_solves``
        are its tolerance and budget, ``smaller`` the advice to search a smaller region (over
        two parameters), ``interval`` a range searched over one (``"a t_range"``); those not given
        as this warning's (``select``'s by default)."""
        return self.template.format(**{**self.names, **names}, **self.fields)

    def renamed(self, **names):
        """The same warning said with ``names`` (:meth:`text`)."""
        return ShortfallWarning(self.template, self.delta, self.tol, self.spent, self.fields, {**self.names, **names})

    def error(self, selection):
        """The same stop raised (``strict``): :class:`~approxpath.errors.BudgetExceededError` when
        the budget ran out, :class:`~approxpath.errors.SelectionStalledError` (its subclass)
        when more exact solves do not help; ``selection`` (the result reached) travels with it."""
        exc = (BudgetExceededError if self.spent else SelectionStalledError)(
            f"{self.text()}; strict=False returns this result with a warning")
        exc.selection = selection
        return exc


def warn_edge(search, value, delta, t, lo, hi, parameter, spent):
    """Warn when the choice lies in a cell at an end of the interval, or that cell may do at
    least as well as the choice can (:meth:`.branch.Search.open_end`, after the search refined it): the
    criterion may keep improving beyond that end; or, where that cell is wider than both δ and
    tol while the budget was not ``spent`` (exact solves that settle no more), that the
    criterion is undecided there.  (An end cell that only overlaps the choice's enclosure is
    within delta like any other and is not worth a warning.)"""
    edges, open_end = search.edges, search.open_end(t, value)
    for i, end, side, inside in ((0, lo, "lower", t <= edges[1]), (search.lo.size - 1, hi, "upper", t >= edges[-2])):
        if inside or i == open_end:
            undecided = not (inside or spent) and search.hi[i] - search.lo[i] > max(delta, search.tol)
            said = RangeWarning("", f"the chosen {shown_name(parameter)} = {t:.6g}", [(parameter, side, end)],
                                undecided)
            warnings.warn(RangeWarning(said.text("select", lambda _: "the interval"), said.choice, said.sides,
                                       undecided), stacklevel=5)  # (the caller of select's decorator)
            return


def surface_outcome(result, reason, spent, strict, sides, depth=0):
    """``result``, or why its δ is above ``tol``: raised (``strict``) or warned; and a warning
    naming the box's ``sides`` where the criterion may be better beyond (:func:`_warn_sides`).
    ``depth``: the calls between :func:`~approxpath.surface.select_surface` and this one (the
    warnings are the caller's)."""
    _warn_sides(result, sides, depth)
    if not result.delta <= result.tol:  # (NaN is no delta met)
        advice = f"the budget {{max_solves}} = {spent} was spent; raise {{max_solves}} or {{tol}}, or {{smaller}}" \
            if spent else "{why}; more exact solves do not narrow it: raise {tol}, or {smaller}"
        short = ShortfallWarning(f"{{who}}: delta = {result.delta:.4g} > {{tol}} = {result.tol:g} at ({result.t:.6g}, "
                                 f"{result.w:.6g}): {advice}", result.delta, result.tol, bool(spent), dict(why=reason))
        if strict:
            raise short.error(result)
        warnings.warn(short, stacklevel=4 + depth)  # (this, select_surface, its decorator: the caller's line)
    return result


def _warn_sides(s, sides, depth=0):
    """Warn that the criterion may be better beyond the box's ``sides`` (:data:`approxpath.surface.nodes.SIDES`):
    where the chosen cell lies, or a cell is proven at least as good as the choice
    (:func:`approxpath.surface.nodes.at_sides`)."""
    if len(sides):
        choice = f"the choice (t = {s.t:.6g}, {s.weight} = {s.w:.6g})"
        box = {"bandwidth": (s.t_edges[0], s.t_edges[-1]), "weight": (s.w_edges[0], s.w_edges[-1])}
        ends = [(which.replace("weight", s.weight), end, float(box[which][end == "upper"]))
                for end, which in (side.split() for side in sides)]
        named = [f"{end} {which} ({value})" for (which, end, _), value in zip(ends, said_apart([e for *_, e in ends]))]
        where = (f"{named[0]} side" if len(named) == 1 else f"sides {', '.join(named[:-1])} and {named[-1]}")
        it = "it" if len(named) == 1 else "them"
        warnings.warn(RangeWarning(f"select: {choice} may be matched at the box's {where}: the criterion may be "
                                   f"better beyond {it}; widen the box past {it}", choice, ends), stacklevel=5 + depth)
