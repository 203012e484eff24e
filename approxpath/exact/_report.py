"""The report of :func:`approxpath.exact.crosscheck`: one :class:`Check` per point or segment,
and whether the claimed path covers the interval it was required to."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Check", "CrossCheckReport"]


@dataclass(frozen=True)
class Check:
    """One checked point or segment.

    Attributes
    ----------
    kind : str
        ``"point"`` or ``"segment"``.
    index : int
        The point (sorted by t), or the first point of the segment.
    lo, hi : float
        The parameter value (``lo == hi``) or the segment.
    gap : float
        Certified gap bound at the point; for a segment the bound over the whole segment
        (certified) or the largest over its samples (sampled).
    where : float
        Parameter value of ``gap`` (nan for a certified segment: the bound covers all of it).
    scale : float
        The unit of a relative tolerance there (:func:`objective_scale`).
    status : str
        ``"certified"`` (a rigorous bound at the point or over the whole segment) or
        ``"sampled"`` (a segment checked at ``samples`` interior points only).
    flagged : bool
        The gap exceeds the tolerance (or the point is infeasible / cannot be evaluated).
    note : str
        Why a point could not be certified, if so; for a sampled segment of a problem with a
        segment bound, why that bound failed.
    rows : tuple of int
        The point's row in the claimed path as given (a segment's: both ends'), where the rows
        were not in the order of t (a homotopy's λ decreasing); empty otherwise.
    """

    kind: str
    index: int
    lo: float
    hi: float
    gap: float
    where: float
    scale: float
    status: str
    flagged: bool
    note: str = ""
    rows: tuple = ()

    def describe(self, tol, relative):
        given = f" (row {' and '.join(map(str, self.rows))} as given)" if self.rows else ""
        what = (f"point {self.index}{given} at t = {self.lo:.8g}" if self.kind == "point"
                else f"segment {self.index}-{self.index + 1}{given} [{self.lo:.8g}, {self.hi:.8g}] ({self.status})")
        limit = tol * self.scale if relative else tol
        at = ("" if self.kind == "point" else " over the whole segment" if self.status == "certified"
              else f" at t = {self.where:.8g}")
        extra = f" ({self.note})" if self.note else ""
        return f"{what}: gap {self.gap:.3g}{at} > tolerance {limit:.3g}{extra}"


@dataclass(frozen=True)
class CrossCheckReport:
    """Outcome of :func:`crosscheck`.

    ``ok`` is true when no point or segment is flagged and the points cover ``required`` (if
    given: :attr:`short`).  ``cond`` (if given, e.g. by an exact path) holds the condition
    numbers of the linear systems behind each point.
    """

    problem: str
    parameter: str
    tol: float
    relative: bool
    linear: bool
    samples: int
    checks: tuple
    cond: np.ndarray = None
    wall_s: float = 0.0
    required: tuple = None

    @property
    def interval(self):
        """``(lo, hi)``: the smallest and largest parameter value of the points."""
        return min(c.lo for c in self.points), max(c.hi for c in self.points)

    @property
    def short(self):
        """Whether the points fail to cover the ``required`` interval (a path that stops early)."""
        if self.required is None:
            return False
        lo, hi = self.interval
        return not (lo <= self.required[0] and self.required[1] <= hi)

    @property
    def points(self):
        return tuple(c for c in self.checks if c.kind == "point")

    @property
    def segments(self):
        return tuple(c for c in self.checks if c.kind == "segment")

    @property
    def flagged(self):
        return tuple(c for c in self.checks if c.flagged)

    @property
    def ok(self):
        return not self.flagged and not self.short

    def _shortfall(self):
        lo, hi = self.interval
        return (f"the points cover {self.parameter} in [{lo:.8g}, {hi:.8g}], not the required "
                f"[{self.required[0]:.8g}, {self.required[1]:.8g}]")

    @staticmethod
    def _worst(checks):
        return max(checks, key=lambda c: (c.gap, c.gap / c.scale), default=None)

    @property
    def max_gap(self):
        """Largest certified gap bound over the points."""
        w = self._worst(self.points)
        return float("nan") if w is None else w.gap

    @property
    def max_relative_gap(self):
        """Largest gap / the objective's scale (:func:`objective_scale`) over the points."""
        return max((c.gap / c.scale for c in self.points), default=float("nan"))

    @property
    def max_cond(self):
        if self.cond is None or not np.any(np.isfinite(self.cond)):
            return float("nan")
        return float(np.nanmax(self.cond))

    def __str__(self):
        p = self._worst(self.points)
        lo, hi = self.interval
        lines = [f"{'OK' if self.ok else 'FLAGGED'}: {len(self.points)} points of {self.problem} over "
                 f"{self.parameter} in [{lo:.8g}, {hi:.8g}] checked, tolerance {self.tol:g}"
                 f"{' x the objective scale' if self.relative else ''}"]
        if p is not None:
            lines.append(f"  largest certified point gap {p.gap:.3g} (relative {p.gap / p.scale:.3g}) at t = {p.lo:.8g}"
                         f" (point {p.index})")
        s = self._worst(self.segments)
        if s is not None:
            cert = sum(c.status == "certified" for c in self.segments)
            parts = [f"{cert} certified over their whole length"] if cert else []
            if cert < len(self.segments):
                parts.append(f"{len(self.segments) - cert} sampled at {self.samples} interior points "
                             "(not certified between them)")
            where = "" if s.status == "certified" else f" at t = {s.where:.8g}"
            lines.append(f"  segments: {', '.join(parts)}; largest gap {s.gap:.3g}{where}")
        elif not self.linear:
            lines.append("  segments: not checked (the path is not claimed to be linear between points)")
        if self.cond is not None:
            k = int(np.nanargmax(self.cond)) if np.any(np.isfinite(self.cond)) else None
            if k is not None:
                lines.append(f"  largest condition number of the linear systems behind the points, as the path "
                             f"states it (not checked): {self.max_cond:.3g} (point {k})")
        lines += ["  - " + c.describe(self.tol, self.relative) for c in self.flagged]
        if self.short:
            lines.append(f"  - {self._shortfall()}")
        return "\n".join(lines)

    def to_json(self):
        """A dict for one JSON line (non-finite numbers as ``None``)."""
        p = self._worst(self.points)
        s = self._worst(self.segments)
        out = {
            "problem": self.problem,
            "parameter": self.parameter,
            "ok": self.ok,
            "points": len(self.points),
            "interval": list(self.interval),
            "required_interval": None if self.required is None else list(self.required),
            "segments": len(self.segments),
            "segment_check": ("none" if not self.segments else
                              "/".join(sorted({c.status for c in self.segments}))),
            "tol": self.tol,
            "relative": self.relative,
            "max_gap": None if p is None else p.gap,
            "max_relative_gap": None if p is None else self.max_relative_gap,
            "max_gap_t": None if p is None else p.lo,
            "max_segment_gap": None if s is None else s.gap,
            "max_segment_gap_t": None if s is None else s.where,
            "max_cond": self.max_cond,
            "flagged": [c.describe(self.tol, self.relative) for c in self.flagged]
            + ([self._shortfall()] if self.short else []),
            "wall_s": round(self.wall_s, 4),
        }
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}
