"""The result of a certified selection (:func:`approxpath.selection.select`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Selection", "SelectionResult"]

# A delta within this many units of double precision's resolution of the criterion's scale is
# the rounding allowance of the enclosures' sums alone, and is said so (not "better by 1.4e-15").
_ROUNDING = 64 * np.finfo(float).eps


class SelectionResult:
    """What a :class:`Selection` and a :class:`~approxpath.surface.SurfaceSelection` share (a base
    of frozen dataclasses, without fields): :attr:`reached` and the summary line."""

    _runs = "path"  # what a fold's computation is called in the summary
    # ``_rival``: what a claim is about (a subclass's: the parameter's name, "point of the box")

    @property
    def reached(self):
        """Whether ``delta <= tol``."""
        return bool(self.delta <= self.tol)

    def _point(self):
        return f"{self._rival} = {self.t:.6g}"

    def _scope(self):
        return f"{self.folds} {self._runs}{'s' if self.folds > 1 else ''}"

    def _work(self):
        return f"{self.exact_solves} exact solves"

    def summary(self):
        """One line for people."""
        best = "lowest" if self.sense == "min" else "highest"
        if self.kind != "certified":
            claim = "sampled: nothing is proven between the sampled points"
        elif self.delta == 0:
            claim = f"no {self._rival} is better (delta = 0)"
        elif self.delta <= _ROUNDING * max(1.0, *np.abs(self.value)):
            claim = f"no {self._rival} is better (delta = {self.delta:.2g}, the rounding of the enclosures)"
        else:
            claim = f"no {self._rival} is better by more than delta = {self.delta:.4g}"
        # (a sampled criterion's value is the path's model's loss, no enclosure of the exact optimum's)
        value = (f"its model's value {self.value[1]:.6g}" if self.kind != "certified" and np.isnan(self.delta)
                 else f"value in [{self.value[0]:.6g}, {self.value[1]:.6g}]")
        tol = f" (tol {self.tol:g})" if self.kind == "certified" else ""  # (a sampled search reaches for none)
        return (f"{self.criterion} ({best} is best, {self._scope()}): {self._point()}, {value}; {claim}{tol}; "
                f"{self._work()}, {self.wall_s:.2f} s")


@dataclass(frozen=True)
class Selection(SelectionResult):
    """A selected parameter with its guarantee.

    Attributes
    ----------
    t : float
        The chosen parameter.
    value : (float, float)
        Enclosure of the exact optimum's criterion at ``t``; for a sampled criterion, the loss
        of the path's models at ``t`` (both ends, up to a rounding allowance).
    delta : float
        No parameter of the interval has a criterion better than the one at ``t`` by more than
        ``delta``: to minimize, every one has at least ``value[0] - delta`` (``nan`` for a
        sampled criterion: nothing is proven).
    criterion : str
    sense : {"min", "max"}
    tol : float
    kind : {"certified", "sampled"}
        ``certified`` when every cell's enclosure came from certified pieces and the
        criterion has an enclosure.
    edges, lo, hi : ndarray
        The final cover: cells ``[edges[i], edges[i + 1]]`` and the criterion's enclosure there.
    exact_solves : int
        Exact solves of all paths (the folds' first paths and every refinement); for a
        criterion enclosed with no path (:class:`~.nodes.NodeClosedForm`), the exact optima the
        cells between them come from.
    refinements : int
        Paths recomputed at a smaller ε during the search.
    folds : int
        Paths the criterion uses (1: hold-out or a criterion of the whole data).
    wall_s : float
    paths : tuple of Path
        The first paths (one per fold), as computed before refinement; empty for a criterion
        enclosed with no path.
    parameter : str
        The parameter ``t`` is a value of: the problem's path parameter (``"bandwidth"``,
        ``"c"``, ``"lam"``).
    proof : SelectionProof or None
        What :meth:`save` writes: the folds (or the hold-out set) and their paths' pieces when the
        search ended (None where there is no file to write: a criterion of the whole data or one
        enclosed with no path, a sampled criterion).
    """

    t: float
    value: tuple
    delta: float
    criterion: str
    sense: str
    tol: float
    kind: str
    edges: np.ndarray = field(repr=False)
    lo: np.ndarray = field(repr=False)
    hi: np.ndarray = field(repr=False)
    exact_solves: int = 0
    refinements: int = 0
    folds: int = 1
    wall_s: float = 0.0
    paths: tuple = field(default=(), repr=False)
    parameter: str = "bandwidth"
    proof: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        # an enclosure whose ends are reversed holds nothing: a fault of the search, not of the input
        # (RuntimeError: the command line reports it as an internal error, not as bad input)
        if self.value[0] > self.value[1]:
            raise RuntimeError(f"Selection: value = [{self.value[0]!r}, {self.value[1]!r}] has its lower end "
                             f"above its upper end")
        bad = np.flatnonzero(np.asarray(self.lo) > np.asarray(self.hi))
        if bad.size:
            i = int(bad[0])
            raise RuntimeError(f"Selection: {bad.size} cell(s) with lo > hi; first [{self.edges[i]:.6g}, "
                             f"{self.edges[i + 1]:.6g}]: [{self.lo[i]!r}, {self.hi[i]!r}]")

    def save(self, file, embed_data=None):
        """Write the selection's certificate (``.npz``) atomically: the data's folds (a hold-out set's
        data: the training points, then the held-out ones), each fold's path, the cells with the
        criterion's enclosures and the choice with its δ, all re-proven by ``approxpath verify FILE``
        with numpy alone.  The file's enclosures come from the final
        pieces of the folds' paths, computed again on the final cells, so its δ may differ from
        :attr:`delta` either way (the search kept what earlier versions of the paths proved, on cells
        enclosed when they were made); the returned claim and :func:`approxpath.verify` say the file's.

        Parameters
        ----------
        file : str or Path
        embed_data : bool, optional
            Store the data (default: when no data file is recorded), so that verifying needs
            nothing else.

        Returns
        -------
        dict
            The file's claims: ``t``, ``value``, ``delta``.

        Raises
        ------
        InputError
            A selection with no certificate (:attr:`proof` is None: says why).
        """
        from ..certificate.selection import write_selection

        return write_selection(self, file, embed_data)

    @property
    def runs(self):
        """What was computed, for people: ``"5 paths"`` (one per fold), or ``"5 folds, no path"``
        (cells between exact optima; ``"no path"`` without folds)."""
        if self.paths:
            return super()._scope()
        return f"{self.folds} folds, " * (self.folds > 1) + "no path"

    def _scope(self):
        return self.runs if self.paths else f"{self.runs}: cells between exact optima"

    @property
    def _rival(self):
        from ..progress import shown_name

        return shown_name(self.parameter)

    def to_json(self):
        """A JSON-ready dict of the scalars."""
        return dict(criterion=self.criterion, sense=self.sense, parameter=self.parameter, t=self.t,
                    value=list(self.value),
                    delta=None if np.isnan(self.delta) else self.delta, tol=self.tol, reached=self.reached,
                    kind=self.kind, folds=self.folds, exact_solves=self.exact_solves,
                    refinements=self.refinements, cells=int(self.lo.size), wall_s=round(self.wall_s, 4))
