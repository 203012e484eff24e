"""The result of a selection over a surface: :class:`SurfaceSelection`, a bandwidth and a weight
chosen by a validation loss (or a closed-form criterion) of the exact optimum, with its guarantee
over the whole box.

:func:`~approxpath.surface.select.select_surface` makes it; it holds the chosen point, the
enclosure of its loss, the grid of the final cover with the loss's bounds on each of its
rectangles, and what its certificate file is made of (:meth:`SurfaceSelection.save`,
:mod:`approxpath.certificate.surface_selection`).  Re-exported by :mod:`approxpath.surface.result`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..selection.result import SelectionResult

__all__ = ["SurfaceSelection"]


@dataclass(frozen=True)
class SurfaceSelection(SelectionResult):
    """A bandwidth and a weight chosen by a validation loss of the exact optimum, with its
    guarantee over the whole box (:func:`~approxpath.surface.select.select_surface`).

    Attributes
    ----------
    t, w : float
        The chosen bandwidth and weight (C, λ).
    weight : str
        The weight's name (``c``, ``lam``).
    value : (float, float)
        Enclosure of the exact optimum's loss at ``(t, w)``.
    delta : float
        No point of the box has a loss below the chosen point's by more than ``delta``.
    criterion : str
    tol : float
    t_edges, w_edges : ndarray of shape (T + 1,), (W + 1,)
        The grid of the final cover.
    lo, hi : ndarray of shape (W, T)
        The exact optimum's loss lies in ``[lo[j, i], hi[j, i]]`` at every point of the
        rectangle ``[t_edges[i], t_edges[i + 1]] x [w_edges[j], w_edges[j + 1]]``.
    exact_solves, refinements, folds, cells : int
        Exact solves (all folds), rounds of refinement, folds, cells of all folds' surfaces; for
        a closed-form criterion (no folds: ``folds = 0``) or cells with no path, the exact optima
        at the cells' corners and the cells between them.
    wall_s : float
    sense : {"min", "max"}
        Whether the criterion is minimized (a validation loss, LOOCV, GCV) or maximized (the
        log marginal likelihood).
    surfaces : bool
        Whether each fold had its certified surface; False: cells between exact optima, with no
        path (:attr:`runs`).
    proof : SurfaceProof or None
        What its certificate file (:meth:`save`) is made of: a choice by a validation loss (k folds
        or a hold-out set), from the folds' surfaces
        (:class:`~approxpath.selection.surface_proof.SurfaceProof`); None for the others.
    """

    t: float
    w: float
    weight: str
    value: tuple
    delta: float
    criterion: str
    tol: float
    t_edges: np.ndarray = field(repr=False)
    w_edges: np.ndarray = field(repr=False)
    lo: np.ndarray = field(repr=False)
    hi: np.ndarray = field(repr=False)
    exact_solves: int = 0
    refinements: int = 0
    folds: int = 1
    cells: int = 0
    wall_s: float = 0.0
    sense: str = "min"
    surfaces: bool = True
    proof: object = field(default=None, repr=False, compare=False)

    kind = "certified"  # every rectangle's enclosure is rigorous (an uncovered cell's is the trivial one)
    _runs, _rival = "fold", "point of the box"

    def save(self, file, embed_data=None):
        """Write the certificate of this choice (``.npz``) atomically: each fold's surface and the
        claim, which ``approxpath verify FILE`` re-proves with numpy alone (as
        :meth:`approxpath.selection.Selection.save`).

        Parameters
        ----------
        file : str or Path
        embed_data : bool, optional
            Store the data (default: when no data file is recorded).

        Returns
        -------
        dict
            The file's claims: ``t``, ``w``, ``value``, ``delta``.

        Raises
        ------
        InputError
            A choice with no certificate (:attr:`proof` is None: says why).
        """
        from ..certificate.surface_selection import write_surface_selection

        return write_surface_selection(self, file, embed_data)

    def undecided(self):
        """Mask (W, T) of the rectangles not excluded: where some point may still have a loss at
        most the chosen point's (``lo <= value[1]``; a criterion to maximize: ``hi >= value[0]``);
        every other point is worse than it."""
        return self.lo <= self.value[1] if self.sense == "min" else self.hi >= self.value[0]

    @property
    def runs(self):
        """What was computed, for people: ``"5 folds"`` (a certified surface each), or ``"5 folds,
        no path"`` (cells between exact optima; ``"no path"`` without folds)."""
        if self.surfaces and self.folds:
            return super()._scope()
        return f"{self.folds} folds, " * (self.folds > 1) + "no path"

    def _scope(self):
        return self.runs if self.surfaces and self.folds else f"{self.runs}: cells between exact optima"

    def _point(self):
        return f"t = {self.t:.6g}, {self.weight} = {self.w:.6g}"

    def _work(self):
        return f"{self.exact_solves} exact solves, {self.cells} cells"

    def to_json(self):
        """A JSON-ready dict of the scalars."""
        return dict(criterion=self.criterion, sense=self.sense, t=self.t, weight=self.weight, w=self.w,
                    value=list(self.value),
                    delta=self.delta, tol=self.tol, reached=self.reached, kind=self.kind, folds=self.folds,
                    exact_solves=self.exact_solves, refinements=self.refinements, cells=self.cells,
                    box=[[float(self.t_edges[0]), float(self.t_edges[-1])],
                         [float(self.w_edges[0]), float(self.w_edges[-1])]], wall_s=round(self.wall_s, 4))
