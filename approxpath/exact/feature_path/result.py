"""The results of :func:`~approxpath.exact.feature_path.feature_path` (points, events,
certificates) and of :func:`~approxpath.exact.feature_path.certify_segments`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from approxpath.errors import InputError
from approxpath.validate import check_X

from ._kernels import make_kernel
from .certify import STATEMENT, crosscheck_feature_path

__all__ = ["FeatureEvent", "FeaturePath", "SegmentCheck", "SegmentReport"]

#: Turns in D the summary lists (the rest are counted; ``FeaturePath.turns`` has them all).
_SHOWN_TURNS = 20


@dataclass(frozen=True)
class FeatureEvent:
    """A change of the active set.

    Attributes
    ----------
    index : int
        The path point where it happened (the point after the Newton correction (10): exact to
        the corrector's tolerance).
    D : float
        :math:`\\lVert\\beta\\rVert_1` there.
    feature : int
        The feature (column of X).
    kind : str
        ``"start"`` (the first feature, at the first point), ``"joined"`` (E1: its
        :math:`q_j` reached the active :math:`\\eta`) or ``"left"`` (E2: its :math:`\\beta_j`
        reached 0).
    """

    index: int
    D: float
    feature: int
    kind: str


@dataclass(frozen=True, repr=False, eq=False)
class FeaturePath:
    """A feature-selection path of Li & Sminchisescu (L1KR), point by point.

    Attributes
    ----------
    kernel : str
        ``"ard-gaussian"`` or ``"ard-polynomial"``.
    degree : int or None
        The power of the ARD-polynomial kernel (None for the Gaussian, which has none).
    C : float
        The bound of :math:`\\alpha^\\top K(\\beta)\\alpha \\le C`.
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    D : ndarray of shape (m,)
        :math:`\\lVert\\beta\\rVert_1` of every point, in path order (not monotone: the path
        can turn back in D).
    beta : ndarray of shape (m, d)
    alpha : ndarray of shape (m, n)
    alpha0 : ndarray of shape (m,)
    lam : ndarray of shape (m,)
        The multiplier λ of :math:`\\alpha^\\top K\\alpha \\le C` (:math:`\\lambda\\alpha` is the
        residual).
    active : ndarray of shape (m, d), bool
        The active set at every point (after the event at an event point).
    events : tuple of FeatureEvent
    jacobian_calls : int
        Evaluations of the Jacobian (6) in total.
    jacobian_calls_at : ndarray of shape (m,)
        Cumulative Jacobian evaluations up to every point (the paper's Figure 3(c)).
    stop_reason : str
    failed : bool
        The path stopped where it could not go on (a singular Jacobian at an event, a step size
        that underflowed: duplicate or nearly collinear features, too few samples), before
        ``d_max``: its points are certified, but it is incomplete.
    steps, rejected : int
        Accepted and rejected continuation steps.
    wall_s : float
        Seconds spent following the path (certificates not included).
    report : FeaturePathReport or None
        The certificates of every point (``certify=True``).
    """

    kernel: str
    degree: int | None
    C: float
    X: np.ndarray
    y: np.ndarray
    D: np.ndarray
    beta: np.ndarray
    alpha: np.ndarray
    alpha0: np.ndarray
    lam: np.ndarray
    active: np.ndarray
    events: tuple
    jacobian_calls: int
    jacobian_calls_at: np.ndarray
    stop_reason: str
    failed: bool = False
    steps: int = 0
    rejected: int = 0
    wall_s: float = 0.0
    report: object = None

    def __len__(self):
        return self.D.size

    def __repr__(self):
        cert = ("not certified" if self.report is None else
                "every point certified" if self.report.ok else f"{len(self.report.flagged)} points flagged")
        return (f"FeaturePath({self.kernel}, C={self.C:g}, {len(self)} points, D in [{self.D.min():.3g}, "
                f"{self.D.max():.3g}], {len(self.events) - 1} events, {self.jacobian_calls} Jacobian calls, {cert})")

    @property
    def certified(self):
        """Boolean mask (points,): the point passed its certificates (None without a report).
        Select among these: ``m = path.mse(Z, t); m[~path.certified] = np.inf``."""
        if self.report is None:
            return None
        mask = np.ones(len(self), dtype=bool)
        mask[list(self.report.flagged)] = False
        return mask

    @property
    def turns(self):
        """Indices of the points where the path turns in D: local maxima and minima of
        :math:`D = \\lVert\\beta\\rVert_1` along the path (steps that leave D unchanged are
        skipped), a tuple.

        Between events the path is a smooth curve; where it turns in D there, it passes a fold of
        the stationary points of problem (1): two stationary points at the same D merge, and the
        Hessian of the inner optimum on the active face is singular (on Friedman #1 a branch of
        local minima meets one of saddle points: tests/test_feature_path_turns.py).  At an event
        the path has a corner and may also turn there.  The paper's Figure 3(b) shows a turn.
        """
        step = np.sign(np.diff(self.D))
        moving = np.flatnonzero(step)  # steps that change D
        later = moving[1:]
        return tuple(int(i) for i in later[step[later] != step[moving[:-1]]])

    def selected(self, index):
        """The active features at point ``index`` (a tuple of column indices)."""
        return tuple(int(j) for j in np.flatnonzero(self.active[index]))

    def predict(self, Z, index=-1):
        """Predictions :math:`\\sum_i \\alpha_i k_\\beta(z, x_i) + \\alpha_0` at point ``index``.

        Parameters
        ----------
        Z : array_like of shape (k, d)
            New inputs, scaled as ``X`` was.
        index : int

        Returns
        -------
        ndarray of shape (k,)
        """
        Z = self._inputs(Z)
        i = self._index(index)
        return self._kern().cross(self.beta[i], Z) @ self.alpha[i] + self.alpha0[i]

    def mse(self, Z, t, indices=None):
        """Mean squared error of the predictions at every point (or at ``indices``) against
        targets ``t`` (k,): the validation curve that selects a point of the path."""
        Z = self._inputs(Z)
        t = np.asarray(t, dtype=float).reshape(-1)
        if t.size != Z.shape[0]:
            raise InputError(f"t has {t.size} targets for {Z.shape[0]} inputs: pass one target per row")
        idx = range(len(self)) if indices is None else [self._index(i) for i in indices]
        kern = self._kern()
        return np.array([np.mean((kern.cross(self.beta[i], Z) @ self.alpha[i] + self.alpha0[i] - t) ** 2)
                         for i in idx])

    def certify(self, tol=1e-8, kkt_tol=1e-6):
        """The certificates of every point (:func:`crosscheck_feature_path` on this path)."""
        return crosscheck_feature_path(self.X, self.y, self.D, self.beta, self.alpha, self.alpha0, C=self.C,
                                       kernel=self.kernel, degree=self.degree, tol=tol, kkt_tol=kkt_tol)

    def certify_segments(self, eps=1e-3, max_pieces=64):
        """The inner problem certified along the segments between points
        (:func:`~approxpath.exact.feature_path.certify_segments`)."""
        from .segments import certify_segments

        return certify_segments(self, eps=eps, max_pieces=max_pieces)

    def table_columns(self, segments=None):
        """``(description, columns)`` of the per-point table (:func:`approxpath.export.export_table`):
        ``point``, ``D``, ``lam``, ``alpha0``, ``active`` (count), ``event_feature`` (the feature
        joining or leaving there, numbered from 1 as the ``beta`` columns: 4 is ``x4``, ``beta4``;
        0 none), ``event`` (1 joined, -1 left, 0 none),
        ``jacobian_calls``; ``rel_gap``, ``kkt`` with a report; ``segment_gap`` (the bound of the
        segment to the next point, NaN at the last) with a :class:`SegmentReport`; then
        ``beta1`` ... ``betad``."""
        m = len(self)
        feat, kind = np.zeros(m), np.zeros(m)
        for e in self.events[1:]:
            feat[e.index], kind[e.index] = e.feature + 1, 1.0 if e.kind == "joined" else -1.0
        cols = dict(point=np.arange(m, dtype=float), D=self.D, lam=self.lam, alpha0=self.alpha0,
                    active=self.active.sum(axis=1).astype(float), event_feature=feat, event=kind,
                    jacobian_calls=self.jacobian_calls_at.astype(float))
        if self.report is not None:
            cols.update(rel_gap=self.report.rel_gap, kkt=self.report.kkt)
        if segments is not None:
            seg = np.full(m, np.nan)
            for c in segments.segments:
                seg[c.index] = c.max_gap
            cols["segment_gap"] = seg
        cols.update({f"beta{j + 1}": self.beta[:, j] for j in range(self.beta.shape[1])})
        return (f"approxpath L1KR feature path ({self.kernel}, C = {self.C:g}): one row per point, D = ||beta||_1"), cols

    def summary(self, max_events=30):
        """A few lines: settings, extent, events, the certificates and what they mean."""
        n, d = self.X.shape
        kern = self.kernel + (f" (degree {self.degree})" if self.kernel == "ard-polynomial" else "")
        turns = ", ".join(f"{self.D[i]:.4g} ({'back' if self.D[i + 1] < self.D[i] else 'forward'})"
                          for i in self.turns[:_SHOWN_TURNS])
        if len(self.turns) > _SHOWN_TURNS:  # (a path that oscillates at one D turns there by the thousand)
            turns += f" and {len(self.turns) - _SHOWN_TURNS} more (path.turns)"
        lines = [f"feature path (L1KR): {kern}, C = {self.C:g}, n = {n}, d = {d}",
                 f"  {len(self)} points, D from {self.D[0]:.4g} to {self.D[-1]:.4g} (largest {self.D.max():.4g}); "
                 f"{self.steps} steps ({self.rejected} rejected), {self.jacobian_calls} Jacobian calls, "
                 f"{self.wall_s:.2f} s",
                 f"  stopped: {self.stop_reason}" + (" -- the path is incomplete: it could not go on" if self.failed
                                                     else ""),
                 f"  turns in D at {turns or 'none (D increases along the path)'}",
                 f"  events ({len(self.events) - 1} after the start):"]
        for e in self.events[:max_events]:
            lines.append(f"    point {e.index:5d}  D = {e.D:10.5g}  {_named(e.feature):>4s} {e.kind:6s}  active now "
                         f"{_names(self.selected(e.index))}")
        if len(self.events) > max_events:
            lines.append(f"    ... {len(self.events) - max_events} more")
        lines.append(f"  final active set {_names(self.selected(-1))} (features numbered from 1, as in the figures and "
                     "tables)")
        if self.report is None:
            lines.append("  not certified (certify=False); call .certify()")
        else:
            r = self.report
            lines.append(f"  certificates: {'all points pass' if r.ok else f'{len(r.flagged)} points flagged'} "
                         f"(inner gap <= {r.tol:g} x ||Hy||^2: largest {r.max_rel_gap:.2g}; KKT residual <= "
                         f"{r.kkt_tol:g}: largest {r.max_kkt:.2g})")
            flagged = [c for c in r.checks if c.flagged]  # which points, and why (the first few)
            lines += [f"    point {c.index} (D = {c.D:.6g}): {'; '.join(c.reasons)}" for c in flagged[:3]]
            if flagged[3:]:
                lines.append(f"    ... and {len(flagged) - 3} more (their indices: report.flagged, --json's flagged)")
            lines.append("  " + STATEMENT)
        return "\n".join(lines)

    # ------------------------------------------------------------------ helpers
    def _kern(self):
        return make_kernel(self.kernel, self.X, self.degree)

    def _index(self, index):
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not -len(self) <= index < len(self):
            raise InputError(f"index must be an integer point index in [-{len(self)}, {len(self) - 1}]; got {index!r}")
        return int(index) % len(self)

    def _inputs(self, Z):
        Z = check_X(Z)
        if Z.shape[1] != self.X.shape[1]:
            raise InputError(f"Z has {Z.shape[1]} features but the path was computed with {self.X.shape[1]}: "
                             "pass the same columns, scaled the same way")
        return Z


@dataclass(frozen=True)
class SegmentCheck:
    """The inner path between points ``index`` and ``index + 1``.

    Attributes
    ----------
    index : int
    D : tuple of float
        :math:`\\lVert\\beta\\rVert_1` at both ends.
    certified : bool
        Every piece's gap bound is at most ε.
    max_gap : float
        The largest gap bound over the segment, relative to :math:`\\lVert y - \\bar y\\rVert^2`.
    pieces : int
        Pieces the segment was cut into.
    mixed_sign : bool
        δ has both signs (the kernel was split by sign).
    """

    index: int
    D: tuple
    certified: bool
    max_gap: float
    pieces: int
    mixed_sign: bool


@dataclass(frozen=True)
class SegmentReport:
    """Certified inner paths along the segments of a feature path (:func:`certify_segments`)."""

    eps: float
    max_pieces: int
    segments: tuple
    wall_s: float = 0.0

    @property
    def certified_fraction(self):
        return float(np.mean([s.certified for s in self.segments])) if self.segments else math.nan

    @property
    def max_gap(self):
        return max((s.max_gap for s in self.segments), default=math.nan)

    @property
    def uncertified(self):
        return tuple(s.index for s in self.segments if not s.certified)

    def __repr__(self):
        return (f"SegmentReport({sum(s.certified for s in self.segments)} of {len(self.segments)} segments certified "
                f"at eps {self.eps:g}, max gap bound {self.max_gap:.2g})")

    def to_json(self):
        return {"eps": self.eps, "segments": len(self.segments), "certified_fraction": self.certified_fraction,
                "max_gap": self.max_gap, "uncertified": list(self.uncertified), "wall_s": round(self.wall_s, 4)}


def _named(j):
    """Feature ``j`` (a column index) as the summary, the figures and the tables name it: x(j+1)."""
    return f"x{j + 1}"


def _names(columns):
    """``"[x2, x4]"``: the features of ``columns`` (indices) by name."""
    return "[" + ", ".join(_named(j) for j in columns) + "]"
