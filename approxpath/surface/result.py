"""Surface results: cells of (bandwidth, weight), the :class:`Surface` and its certificate file
(:mod:`approxpath.certificate.surface`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..certificate.surface import CELL_FIELDS, CELL_KINDS, SURFACE, SURFACE_FORMAT, pair_arrays, read_surface
from ..errors import InputError
from ..moving import combine, value_at
from ..result import CertifiedResult, check_claims
from .selection_result import SurfaceSelection

__all__ = ["SurfaceCell", "Surface", "SurfaceSelection", "load_surface"]


@dataclass(frozen=True, repr=False)
class SurfaceCell:
    """One cell of a surface: a pair and a bound on its gap over ``[t_lo, t_hi] x [w_lo, w_hi]``.

    Attributes
    ----------
    t_lo, t_hi : float
        The bandwidths.
    w_lo, w_hi : float
        The weights (C, λ); the pair is feasible at ``w_lo``, hence on the whole cell.
    primal, dual
        The stored pair (fixed in the weight; either side may move with the bandwidth:
        :class:`~approxpath.moving.Moving`).
    gap_bound : float
        ``certified``: a bound on the gap at every point of the cell, rounding included;
        ``uncovered``: the best bound found, above the target.
    kind : str
        One of :data:`~approxpath.certificate.surface.CELL_KINDS`.
    anchors : tuple of (float, float)
        ``(t, w)`` of the exact solves the pair was built from.
    """

    t_lo: float
    t_hi: float
    w_lo: float
    w_hi: float
    primal: object
    dual: object
    gap_bound: float
    kind: str
    anchors: tuple = ()

    def __repr__(self):
        return (f"SurfaceCell(t in [{self.t_lo:.6g}, {self.t_hi:.6g}], w in [{self.w_lo:.6g}, {self.w_hi:.6g}], "
                f"{self.kind}, gap_bound={self.gap_bound:.4g})")

    def contains(self, t, w):
        """Whether ``(t, w)`` lies in the cell (edges included)."""
        return self.t_lo <= t <= self.t_hi and self.w_lo <= w <= self.w_hi


@dataclass(frozen=True, repr=False)
class Surface(CertifiedResult):
    """An ε-approximate solution surface over the bandwidth t and the weight (C or λ).

    Attributes
    ----------
    problem : KernelProblem
        The problem (``parameter="bandwidth"``; the weight is set per cell), or None when loaded
        without data.
    eps : float
    relative : bool
    box : ((float, float), (float, float))
        ``((t_lo, t_hi), (w_lo, w_hi))``.
    cells : tuple of SurfaceCell
        Tiling the box.
    exact_solves : int
    solve_points : tuple of (float, float)
        ``(t, w)`` of the exact solves.
    wall_s, solve_s, certify_s : float
    meta : dict
        What the certificate records (the problem, its options without the weight, the data's
        hash, ...).
    verified : bool
        True for a surface computed here or verified on loading.
    """

    _noun, _parts = "surface", "cells"

    problem: object
    eps: float
    relative: bool
    box: tuple
    cells: tuple
    exact_solves: int
    solve_points: tuple
    wall_s: float = 0.0
    solve_s: float = 0.0
    certify_s: float = 0.0
    meta: dict = field(default_factory=dict)
    verified: bool = True

    def __repr__(self):
        (t0, t1), (w0, w1) = self.box
        kinds = ", ".join(f"{sum(c.kind == k for c in self.cells)} {k}" for k in CELL_KINDS
                          if any(c.kind == k for c in self.cells))
        return (f"<Surface {self.meta.get('problem')} over t in [{t0:.6g}, {t1:.6g}] x {self.weight} in [{w0:.6g}, "
                f"{w1:.6g}], eps={self.eps:g}{' (relative)' if self.relative else ''}: {len(self.cells)} cells "
                f"({kinds}), {self.exact_solves} exact solves{'' if self.verified else ', UNVERIFIED'}>")

    @property
    def weight(self):
        """The name of the weight option (``c``, ``lam``)."""
        return self.meta.get("weight")

    def _at(self, t, w):
        """``(t, w, cell)``: the point checked (two numbers of the box) as Python floats, and a
        cell containing it (the first found where edges are shared; a float32 point compared
        with the cells' edges would round them)."""
        from ..validate import is_real

        (t0, t1), (w0, w1) = self.box
        if not (is_real(t) and is_real(w)):
            raise InputError(f"t and {self.weight} must be one number each (a point of the box); got {t!r}, {w!r}")
        t, w = float(t), float(w)
        if not (t0 <= t <= t1 and w0 <= w <= w1):
            raise InputError(f"({t!r}, {w!r}) is outside the surface's box [{t0!r}, {t1!r}] x [{w0!r}, {w1!r}]")
        for c in self.cells:
            if c.contains(t, w):
                return t, w, c
        raise ValueError(f"no cell contains ({t!r}, {w!r}): the cells do not tile the box")

    def cell_at(self, t, w):
        """A cell containing ``(t, w)`` (the first found where edges are shared)."""
        return self._at(t, w)[2]

    def _problem_at(self, w):
        return self.require_problem().with_weight(w)

    def primal(self, t, w):
        """The surface's primal point at ``(t, w)`` (slacks and the like filled in there)."""
        t, w, cell = self._at(t, w)
        return self._problem_at(w).primal_at(value_at(cell.primal, t), t)

    def dual(self, t, w):
        """The surface's dual point at ``(t, w)`` (the cell's dual there: scaled by ``w / w_lo``
        where it grows with the weight, :class:`~approxpath.cells.CellBound`)."""
        from ..cells import CellBound

        t, w, cell = self._at(t, w)
        scale = CellBound(self.problem.bound).dual_scale(w, cell.w_lo)
        point = value_at(combine([value_at(cell.dual, t)], [[scale]], (t, t)), t)
        return self._problem_at(w).dual_at(point, t)

    def gap_bound(self, t, w):
        """The bound of the cell containing ``(t, w)``."""
        return self.cell_at(t, w).gap_bound

    def objectives(self, t, w):
        """``(primal objective, dual objective)`` of the surface's pair at ``(t, w)``."""
        t, w, _ = self._at(t, w)
        problem = self._problem_at(w)
        return problem.primal_objective(self.primal(t, w), t), problem.dual_objective(self.dual(t, w), t)

    def summary(self):
        """A short human-readable table."""
        (t0, t1), (w0, w1) = self.box
        counts = {k: sum(c.kind == k for c in self.cells) for k in CELL_KINDS}
        widths = sorted({(c.w_lo, c.w_hi) for c in self.cells})
        return "\n".join([
            f"{self.meta.get('problem')} over t in [{t0:.6g}, {t1:.6g}] x {self.weight} in [{w0:.6g}, {w1:.6g}]",
            f"eps = {self.eps:g} ({'relative' if self.relative else 'absolute'}); {len(self.cells)} cells "
            f"({counts['certified']} certified, {counts['uncovered']} uncovered) in {len(widths)} weight bands",
            f"exact solves {self.exact_solves}; max gap bound {self.max_gap_bound:.4g}; {self._times()}"
            + ("" if self.verified else "\nUNVERIFIED: loaded without checking its claims")])

    def to_json(self):
        """The one-line JSON summary of the CLI's ``--json``."""
        return dict(problem=self.meta.get("problem"), weight=self.weight, box=[list(r) for r in self.box], eps=self.eps,
                    relative=self.relative, cells=len(self.cells), exact_solves=self.exact_solves,
                    max_gap_bound=self.max_gap_bound, certified=self.certified,
                    uncovered=sum(c.kind == "uncovered" for c in self.cells), wall_s=round(self.wall_s, 4),
                    solve_s=round(self.solve_s, 4), certify_s=round(self.certify_s, 4))

    def save(self, file, embed_data=None):
        """Write the surface certificate (``.npz``) atomically (as :meth:`approxpath.Path.save`);
        ``embed_data``: store the data (default: when no data file is recorded)."""
        arrays, fields, head = self._fields()
        return self._write(file, arrays, embed_data, fields, head)

    def certificate(self, embed_data=False):
        """``(arrays, meta)``: the contents of the certificate :meth:`save` writes (``embed_data``: with the
        data, by default without)."""
        arrays, fields, head = self._fields()
        return self._contents(arrays, embed_data, fields, head)

    def _fields(self):  # (the arrays, the fields of meta and its head :meth:`save` writes)
        arrays = cells_to_arrays(self.require_problem().bound, self.cells)
        return arrays, dict(
            eps=self.eps, relative=self.relative, box=[list(map(float, r)) for r in self.box],
            cell_kinds=[c.kind for c in self.cells], exact_solves=self.exact_solves,
            solve_points=[list(p) for p in self.solve_points], wall_s=self.wall_s, solve_s=self.solve_s,
            certify_s=self.certify_s), dict(certificate=SURFACE, surface_format=SURFACE_FORMAT)


def cells_to_arrays(bound, cells):
    """The certificate arrays of ``cells``: the per-cell fields and the pairs in the one layout
    (``bound.pieces_to_arrays``, each over the cell's bandwidths)."""
    arrays = bound.pieces_to_arrays([(c.primal, c.dual, c.t_lo, c.t_hi) for c in cells])
    clash = set(CELL_FIELDS) & set(arrays)
    if clash:
        raise ValueError(f"{bound.name}.pieces_to_arrays uses reserved names {sorted(clash)}")

    def anchor(c, k, j):
        return float(c.anchors[k][j]) if c.anchors else math.nan

    arrays.update(
        t_lo=np.array([c.t_lo for c in cells], dtype=float), t_hi=np.array([c.t_hi for c in cells], dtype=float),
        w_lo=np.array([c.w_lo for c in cells], dtype=float), w_hi=np.array([c.w_hi for c in cells], dtype=float),
        gap_bound=np.array([c.gap_bound for c in cells], dtype=float),
        kind=np.array([c.kind for c in cells], dtype="<U9"),
        anchor_lo=np.array([anchor(c, 0, 0) for c in cells], dtype=float),
        anchor_hi=np.array([anchor(c, -1, 0) for c in cells], dtype=float),
        anchor_w=np.array([anchor(c, 0, 1) for c in cells], dtype=float))
    return arrays


def load_surface(file, X=None, y=None, verify=True):
    """Read a surface certificate written by :meth:`Surface.save` (as :func:`approxpath.load_path`:
    verified first when the data are given or carried; else unverified, without a problem).

    Parameters
    ----------
    file : str or path-like
        The ``.npz`` surface certificate.
    X : ndarray of shape (n, d), optional
        The data it was computed on (with ``y``); else the data the file carries, if any.
    y : ndarray of shape (n,), optional
    verify : bool, default True
        Verify before loading (:func:`approxpath.verify`); False loads unverified
        (``verified`` False, nothing reported as certified).

    Returns
    -------
    Surface

    Raises
    ------
    InputError
        Not a well-formed surface certificate, or one that does not verify.
    """
    from ..certificate.inputs import check_data, embedded_data, given_data
    from ..registry import get_problem

    given_data(X, y)
    arrays, meta = read_surface(file)
    if X is None and embedded_data(arrays) is not None:
        X, y = embedded_data(arrays)
    problem = None
    if X is not None:
        options = dict(meta["options"], **{meta["weight"]: meta["box"][1][0]})
        problem = check_data(meta, get_problem(meta["problem"])(X, y, **options))
        if verify:
            check_claims(file, X, y)
    bound = problem.bound if problem is not None else None
    per_cell = pair_arrays(arrays)
    cells = []
    for i in range(arrays["t_lo"].size):
        t0, t1 = float(arrays["t_lo"][i]), float(arrays["t_hi"][i])
        primal = dual = None
        if bound is not None:
            primal, dual = bound.piece_from_arrays({k: v[i] for k, v in per_cell.items()}, t0, t1)
        a, b, w = (float(arrays[k][i]) for k in ("anchor_lo", "anchor_hi", "anchor_w"))
        anchors = () if math.isnan(a) else (((a, w),) if a == b else ((a, w), (b, w)))
        cells.append(SurfaceCell(t0, t1, float(arrays["w_lo"][i]), float(arrays["w_hi"][i]), primal, dual,
                                 float(arrays["gap_bound"][i]), str(arrays["kind"][i]), anchors))
    (t0, t1), (w0, w1) = meta["box"]
    return Surface(problem=problem, eps=float(meta["eps"]), relative=bool(meta["relative"]), box=((t0, t1), (w0, w1)),
                   cells=tuple(cells), exact_solves=int(meta.get("exact_solves", 0)),
                   solve_points=tuple(tuple(p) for p in meta.get("solve_points", ())),
                   wall_s=float(meta.get("wall_s", 0.0)), solve_s=float(meta.get("solve_s", 0.0)),
                   certify_s=float(meta.get("certify_s", 0.0)), meta=meta, verified=problem is not None and verify)
