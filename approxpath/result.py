"""Path results: pieces and the :class:`Path` (its certificate file: :mod:`approxpath.path_file`)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from .certificate.format import FORMAT_VERSION, KINDS, content_sha256, write_npz
from .errors import InputError
from .moving import value_at

__all__ = ["PathPiece", "Path", "CertifiedResult", "check_claims"]


class CertifiedResult:
    """What a :class:`Path` and a :class:`~approxpath.surface.Surface` share (a base of frozen
    dataclasses, without fields): parts (pieces, cells: the field :attr:`_parts` names) with a
    ``kind`` and a ``gap_bound`` each, a problem that a result loaded without its data lacks, and a
    certificate file with the data's hash, the versions and the content's hash."""

    _noun = "path"  # what it is called (and loaded by: ``load_path``)
    _parts = "pieces"  # the field holding the parts

    @property
    def certified(self):
        """True if every part is certified for every parameter value in it (False for a file
        loaded without verification: see :attr:`verified`)."""
        return self.verified and all(p.kind == "certified" for p in getattr(self, self._parts))

    @property
    def max_gap_bound(self):
        """The largest ``gap_bound`` of the parts."""
        return max(p.gap_bound for p in getattr(self, self._parts))

    def require_problem(self):
        """The problem this result was computed for; ``RuntimeError`` when it was loaded from a
        file without its data (what needs the problem: predictions, curves, continuing it)."""
        if self.problem is None:
            raise RuntimeError(f"this {self._noun} was loaded without its data: pass X and y to load_{self._noun}")
        return self.problem

    def _times(self):
        return (f"wall {self.wall_s:.2f} s (exact solves {self.solve_s:.2f} s, certification "
                f"{self.certify_s:.2f} s)")

    def _write(self, file, arrays, embed_data, fields, head=()):
        """Write :meth:`_contents` of these arguments."""
        arrays, meta = self._contents(arrays, embed_data, fields, head)
        return write_npz(file, arrays, meta, inputs=[meta.get("data_file")] if meta.get("data_file") else [])

    def _contents(self, arrays, embed_data, fields, head=()):
        """``(arrays, meta)`` of a certificate: ``arrays`` (the data added when ``embed_data``; by default
        when no data file is recorded) with :attr:`meta` updated by ``head``, the versions and ``fields``
        (in order), and the content's hash."""
        problem = self.require_problem()
        meta = dict(self.meta)
        if embed_data is None:
            embed_data = not meta.get("data_file")
        if embed_data:
            arrays.update(data_X=np.asarray(problem.X, dtype=float), data_y=np.asarray(problem.y, dtype=float))
        meta.update(head)
        meta.update(format_version=FORMAT_VERSION, library_version=_version())  # whose bounds wrote gap_bound
        meta.update(fields)
        meta["content_sha256"] = content_sha256(arrays, meta)
        return arrays, meta


def check_claims(file, X, y):
    """Verify the certificate ``file`` on the data ``X, y`` (:func:`approxpath.verify`), of shapes (n, d), (n,).

    Raises
    ------
    InputError
        A claim does not hold (uncovered parts claim nothing: an honest incomplete result loads).
    """
    from .certificate.verify import verify

    report = verify(file, X, y)
    if not report.claims_hold:
        false = [f for f in report.failures if "is uncovered" not in f] or list(report.failures)
        raise InputError(f"{str(file)!r} does not verify ({len(false)} false claim(s); first: "
                         f"{false[0]}): pass verify=False to load it unchecked")


@dataclass(frozen=True, repr=False)
class PathPiece:
    """One piece of a path: a feasible pair and a bound on its gap over ``[lo, hi]``.

    Attributes
    ----------
    lo, hi : float
        The piece, in parameter units.
    primal, dual
        The stored pair: each side a point (the problem's ``Primal`` or ``Dual``, fixed on the
        piece) or a :class:`~approxpath.moving.Moving` point (a combination of stored points
        whose weights are polynomials in the parameter).  The values at a parameter ``t`` are
        :meth:`Path.primal` and :meth:`Path.dual` (slacks and the like filled in there).
    gap_bound : float
        ``certified``: an upper bound on the duality gap valid for every τ in ``[lo, hi]``,
        rounding included. ``sampled``: the largest gap at the piece's sampled points only
        (:func:`~approxpath.certificate.claims.sample_points`: five, lo, the quartiles and
        the middle in log scale, and hi; three, the ends and the middle, in a file that records
        no ``sample_levels``). ``uncovered``: the same, and it exceeds eps.
    kind : str
        One of :data:`KINDS`.
    anchors : tuple of float
        Parameter values of the exact solves the pair was built from.
    """

    lo: float
    hi: float
    primal: object
    dual: object
    gap_bound: float
    kind: str
    anchors: tuple = ()

    def __repr__(self):
        at = ", ".join(f"{a:.6g}" for a in self.anchors)
        return (f"PathPiece([{self.lo:.6g}, {self.hi:.6g}], {self.kind}, gap_bound={self.gap_bound:.4g}"
                f"{', from exact solves at ' + at if at else ''})")


@dataclass(frozen=True, repr=False)
class Path(CertifiedResult):
    """An ε-approximate solution path.

    Attributes
    ----------
    problem : Problem
    eps : float
    relative : bool
        If true the pieces satisfy ``gap_bound <= eps * lower_bound_of_optimum``.
    interval : (float, float)
    pieces : tuple of PathPiece
        Sorted, contiguous, covering ``interval``.
    exact_solves : int
        Number of exact solves the path used.
    solve_points : tuple of float
        Where they were made (sorted).
    strategy : str
    wall_s, solve_s, certify_s : float
        Total wall time, time in exact solves, time computing gaps and bounds (the last two
        summed over the processes that did the work: with workers they may exceed ``wall_s``).
        A run resumed from a checkpoint counts the interrupted runs' seconds too.
    meta : dict
        Provenance recorded in the certificate (data hash, preprocessing, ...).
    verified : bool
        True for a path computed here or a file verified on loading (:func:`load_path`); a file
        loaded without verification is not called certified.
    """

    problem: object
    eps: float
    relative: bool
    interval: tuple
    pieces: tuple
    exact_solves: int
    solve_points: tuple
    strategy: str
    wall_s: float = 0.0
    solve_s: float = 0.0
    certify_s: float = 0.0
    meta: dict = field(default_factory=dict)
    verified: bool = True

    def __repr__(self):
        """One line (``summary()`` has the details): printing a path never floods the screen."""
        counts = {k: sum(p.kind == k for p in self.pieces) for k in KINDS}
        lo, hi = self.interval
        name = self.meta.get("problem") or getattr(self.problem, "name", "?")
        parameter = self.meta.get("parameter") or getattr(self.problem, "parameter", "t")
        kinds = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        status = "" if self.verified else ", UNVERIFIED"
        return (f"<Path {name} over {parameter} in [{lo:.6g}, {hi:.6g}], eps={self.eps:g}"
                f"{' (relative)' if self.relative else ''}: {len(self.pieces)} pieces ({kinds}), "
                f"{self.exact_solves} exact solves{status}>")

    # ------------------------------------------------------------------ queries
    def uncovered(self):
        """``(lo, hi)`` of every piece where nothing reached eps."""
        return [(p.lo, p.hi) for p in self.pieces if p.kind == "uncovered"]

    def _at(self, t):
        """``(t, piece)``: ``t`` checked (one number of the path's interval) as a Python float, and
        the piece containing it (the left one at a shared end point).  (A float32 ``t`` compared
        with the pieces' ends rounded them to float32 under numpy 2's rules, and got the piece
        before one that ends just below it.)"""
        from .progress import shown_name
        from .validate import is_real

        lo, hi = self.interval
        name = shown_name(self.meta.get("parameter") or getattr(self.problem, "parameter", "bandwidth"))
        if not is_real(t):
            raise InputError(f"{name} must be one number (a point of the path's interval); got {t!r}")
        t = float(t)
        if not (lo <= t <= hi):
            raise InputError(f"{name} = {t!r} is outside the path's interval [{lo!r}, {hi!r}]")
        k = bisect.bisect_left([p.hi for p in self.pieces], t)
        piece = self.pieces[min(k, len(self.pieces) - 1)]
        if not (piece.lo <= t <= piece.hi):  # (a file loaded unchecked may have a gap; its pair says nothing there)
            raise InputError(f"{name} = {t!r} lies in no piece of the path (the next piece is [{piece.lo!r}, "
                             f"{piece.hi!r}]): nothing is claimed there")
        return t, piece

    def piece_at(self, t):
        """The piece containing ``t`` (the left one at a shared end point): ``t`` one number."""
        return self._at(t)[1]

    def primal(self, t):
        """The path's primal point at ``t``: its fields are the values at ``t`` (e.g. ``w``,
        ``b``, ``xi`` for ``kernel_svm``), those of the point the piece's bound speaks of."""
        t, piece = self._at(t)
        return self.require_problem().primal_at(value_at(piece.primal, t), t)

    def dual(self, t):
        """The path's dual point at ``t``: its fields are the values at ``t``, computed in floating
        point from exactly feasible stored points (a constraint may be off by its last bits, e.g.
        an SVM's alpha_i above C by one ulp: the piece's bound allows for that rounding)."""
        t, piece = self._at(t)
        return self.require_problem().dual_at(value_at(piece.dual, t), t)

    def gap_bound(self, t):
        """The bound of the piece containing ``t`` (for a sampled piece the largest gap at its
        sampled points; for an uncovered one the same, above its target: no bound over the piece)."""
        return self.piece_at(t).gap_bound

    def objectives(self, t):
        """``(primal objective, dual objective)`` of the path's pair at ``t``: the upper and
        lower bounds on the optimal value that the paper's Figure 2 draws, as computed in
        floating point (no rounding allowance: the certified statement is :meth:`gap_bound`,
        which has one; where the objectives are differences of large terms, e.g. kernel ridge's
        dual at lambda = 1e-6, their computed difference can exceed ``gap_bound`` by ~1e-5
        relative while the exact gap stays below it)."""
        problem, t = self.require_problem(), self._at(t)[0]
        return problem.primal_objective(self.primal(t), t), problem.dual_objective(self.dual(t), t)

    def summary(self):
        """A short human-readable table."""
        counts = {k: sum(p.kind == k for p in self.pieces) for k in KINDS}
        lo, hi = self.interval
        lines = [
            f"{self.problem.describe() if self.problem is not None else self.meta.get('problem')}",
            f"interval [{lo:.6g}, {hi:.6g}], eps = {self.eps:g} ({'relative' if self.relative else 'absolute'}),"
            f" strategy {self.strategy}",
            f"exact solves {self.exact_solves}, pieces {len(self.pieces)} "
            f"({counts['certified']} certified, {counts['sampled']} sampled, {counts['uncovered']} uncovered)",
            f"max gap bound {self.max_gap_bound:.4g}; {self._times()}",
        ]
        if counts["uncovered"]:
            lines.append("UNCOVERED: " + ", ".join(f"[{a:.6g}, {b:.6g}]" for a, b in self.uncovered()))
        if not self.verified:
            lines.append("UNVERIFIED: loaded without checking its claims (load_path with the data, or "
                         "approxpath verify)")
        return "\n".join(lines)

    def to_json(self):
        """The one-line JSON summary of the CLI's ``--json``."""
        return {
            "problem": self.meta.get("problem"),
            "parameter": self.meta.get("parameter"),
            "eps": self.eps,
            "relative": self.relative,
            "range": list(self.interval),
            "strategy": self.strategy,
            "exact_solves": self.exact_solves,
            "pieces": len(self.pieces),
            "max_gap_bound": self.max_gap_bound,
            "certified": self.certified,
            "uncovered": self.uncovered(),
            "wall_s": round(self.wall_s, 4),
            "solve_s": round(self.solve_s, 4),
            "certify_s": round(self.certify_s, 4),
        }

    # ------------------------------------------------------------------ files
    def save(self, file, embed_data=None):
        """Write the certificate (``.npz``) atomically: a temporary file then a rename (never over
        a directory, a device or the recorded data file; new files get the umask's permissions).

        Parameters
        ----------
        file : str or Path
        embed_data : bool, optional
            Store the (preprocessed) data in the certificate, so that ``approxpath verify FILE``
            needs nothing else.  By default
            only when the path records no data file (data built in Python rather than read by
            :func:`~approxpath.data.load_data`): every certificate can then be re-checked as is.
        """
        arrays, fields = self._fields()
        return self._write(file, arrays, embed_data, fields)

    def certificate(self, embed_data=False):
        """``(arrays, meta)``: the contents of the certificate :meth:`save` writes (``embed_data``: with the
        data, by default without), each array by name and ``meta`` a JSON-ready dict."""
        arrays, fields = self._fields()
        return self._contents(arrays, embed_data, fields)

    def _fields(self):  # (the arrays and the fields of meta :meth:`save` writes)
        from .path_file import pieces_to_arrays

        arrays = pieces_to_arrays(self.require_problem().bound, self.pieces)
        return arrays, dict(
            eps=self.eps, relative=self.relative, interval=list(self.interval), strategy=self.strategy,
            exact_solves=self.exact_solves, solve_points=list(self.solve_points),
            piece_kinds=[p.kind for p in self.pieces], wall_s=self.wall_s, solve_s=self.solve_s,
            certify_s=self.certify_s)


def _version():
    from . import __version__  # the package is initialized by the time a path is saved

    return __version__
