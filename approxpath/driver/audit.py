"""The audit of a plug-in's interval bound against the plug-in's own numpy maps.

A bound that lies certifies anything (``errors()`` missing a constraint, ``gap()`` a term, a dual
floor too high), and ``verify``, which trusts the registered bound, would say OK.  The
:class:`~approxpath.driver.certifier.Certifier` of a plug-in (not tested with approxpath; the
built-in problems' bounds are tested instead) therefore checks the first certified piece of each
cover here (:func:`audit_cover`), and a contradiction stops the run (:class:`BoundContradiction`).
"""

from __future__ import annotations

from ..errors import InputError
from ..progress import shown_name

__all__ = ["BoundContradiction", "audit_cover"]

# The audit of a plug-in's bound allows the numpy maps' own rounding: this share of 1 + |dual
# objective| (the conformance battery allows 1e-12 and the declarations' comparisons 1e-9)
_AUDIT_TOL = 1e-9


class BoundContradiction(InputError):
    """A problem's bound certified a piece whose pair, by the problem's own numpy objectives
    and violations, has a larger gap or is infeasible: its ``Bound`` proves nothing."""


def audit_cover(run, pieces):
    """A plug-in's bound (not tested with approxpath) against its own numpy maps, on the first
    certified piece of a cover, at its ends, middle and quartiles (log scale: a bound read at
    the middle or the ends with its curvature term left out agrees with the gap there, not
    between; one that is a share of the true bound is below the gap where the gap peaks,
    often an end): the pair's gap (primal minus dual objective) at most the piece's bound, both
    sides feasible, and the bound's dual floor on the piece at most the dual objective, up
    to :data:`_AUDIT_TOL` of the dual objective's scale; else :class:`BoundContradiction` (a
    bound that lies certifies anything: ``errors()`` missing a constraint, ``gap()`` a term,
    a floor too high).

    Parameters
    ----------
    run : approxpath.driver.run.Run
        The run whose problem and bound are audited.
    pieces : list of approxpath.result.PathPiece
        The pieces of one cover; nothing is checked where none is a certified interval.

    Raises
    ------
    BoundContradiction
        The bound certified the piece, but the problem's own maps contradict it.
    """
    piece = next((p for p in pieces if p.kind == "certified" and p.lo < p.hi), None)
    if piece is None:
        return
    mid = run.mid(piece.lo, piece.hi)
    floor = float(run.bound.dual_floor(piece.dual, piece.lo, piece.hi))
    for tau in (piece.lo, run.mid(piece.lo, mid), mid, run.mid(mid, piece.hi), piece.hi):
        _audit_at(run.problem, piece, tau, floor)


def _audit_at(problem, piece, tau, floor):
    """:func:`audit_cover` at one ``tau`` of ``piece`` (``floor``: the bound's dual floor on it)."""
    value = float(problem.dual_objective(piece.dual, tau))
    tol = _AUDIT_TOL * (1.0 + abs(value))
    inside = float(problem.gap(piece.primal, piece.dual, tau))
    off = max(float(problem.primal_violation(problem.primal_at(piece.primal, tau), tau)),
              float(problem.dual_violation(piece.dual, tau)))
    if not (inside <= piece.gap_bound + tol and off <= tol and floor <= value + tol):
        raise BoundContradiction(
            f"{problem.name}'s Bound certified [{piece.lo:.6g}, {piece.hi:.6g}] with a gap bound of "
            f"{piece.gap_bound:.6g} and a dual floor of {floor:.6g}, but at {shown_name(problem.parameter)} = "
            f"{tau:.6g} its own numpy maps give the pair a gap of {inside:.6g}, a constraint violation of "
            f"{off:.3g} and a dual objective of {value:.6g}: its Bound is no bound (errors() misses a "
            f"constraint, gap() a term, or dual_floor() is above the dual); run approxpath.testing.check_problem "
            f"on it with an example whose interval holds {shown_name(problem.parameter)} = {tau:.6g} (the battery "
            "checks a bound on its examples' intervals only)")
