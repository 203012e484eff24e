"""What a piece claims and whether its pair holds it: the one definition that the driver, the
checkpoint and :func:`~approxpath.certificate.verify.verify` share (numpy only).

A certified piece claims its gap bound on the whole piece, a sampled one at the points of a few
bisections (:func:`claimed_on`); the bound a piece may claim is its target (:func:`target`);
a negative gap contradicts weak duality (:func:`weak_duality_violation`); :func:`claim_failures`
re-proves one piece's claim.
"""

from __future__ import annotations

import numpy as np

from ..numerics import log_mid

__all__ = ["target", "claimed_on", "sample_points", "claim_failures", "weak_duality_violation", "SAMPLE_LEVELS",
           "WEAK_DUALITY_TOL"]

# A stored bound may exceed the verifier's recomputation by the pad (1e-9 relative) and by a few
# rounding margins (a bound computed from cached products of a mix adds 3 margins instead of 1,
# see problems/kernel_svm/cache.py; a4a, n = 4781, eps = 0.125: up to 8e-6 of bound + eps, median 3e-7).  Only a bound
# looser by more than this share of (bound + eps) is noted (e.g. written by an older version
# whose bound was less tight: a weaker claim, still proven); 1e-3 is far above any rounding
# allowance and far below the looseness worth knowing about (older bounds: 10 % and more).
_INFLATION = 1e-3


#: Weak duality: no gap is negative.  A bound with rigorous rounding (``interval_bound``) is never
#: below 0; a bound without (a CVXPY declaration evaluated without error bounds, its points
#: feasible to a tolerance of 1e-8) may dip below 0 by rounding, at most this times 1 + |dual
#: objective| (far above the 2**-32 allowance and the solvers' 1e-10, far below any gap that
#: disproves a declared dual: a dual off by a factor 2 gave -0.08).
WEAK_DUALITY_TOL = 1e-9


def target(bound, dual, lo, hi, eps, relative, pad=0.0):
    """The largest gap bound a piece ``[lo, hi]`` may claim: ``eps``, or with ``relative``
    ``eps`` times a lower bound of the optimal value on the piece (``bound.dual_floor``), made
    ``pad`` smaller (relative) -- the driver aims ``STORED_PAD`` below what a verifier whose
    BLAS rounds the last bits differently recomputes: :math:`\\epsilon \\max(0, f)\\,(1 - \\mathrm{pad})`
    with :math:`f` = ``bound.dual_floor(dual, lo, hi)``, ``dual`` the piece's dual point (or a
    :class:`~approxpath.moving.Moving` one); ``lo == hi``: a point."""
    if not relative:
        return eps
    return eps * max(0.0, bound.dual_floor(dual, lo, hi)) * (1 - pad)


#: A sampled piece claims its gap at the 2**SAMPLE_LEVELS + 1 points of this many bisections of
#: the piece in log scale: its ends, quartiles and middle.  Between them nothing is proven; the
#: points are where a gap that is convex, or has at most one hump, between the ends would show a
#: violation (five point gaps per piece where 0.3.2 took three).  Certificates record it
#: (``sample_levels``); files without it were written with 1 (ends and middle).
SAMPLE_LEVELS = 2


def claimed_on(kind, lo, hi, levels=SAMPLE_LEVELS):
    """Where a piece of ``kind`` claims its gap bound: ``[(lo, hi)]`` for a certified piece (the
    whole of it), the points ``(x, x)`` of ``levels`` bisections in log scale
    (:func:`~approxpath.numerics.log_mid`, the driver's middle) for a sampled one: its ends and
    ``2**levels - 1`` interior points, increasing.  Any ``kind`` but ``"certified"`` is sampled; a
    point that repeats (:func:`sample_points`) is listed once."""
    if kind == "certified":
        return [(lo, hi)]
    return [(x, x) for x in sorted(set(sample_points(lo, hi, levels)))]


def sample_points(lo, hi, levels=SAMPLE_LEVELS):
    """The ``2**levels + 1`` points of ``levels`` bisections of ``[lo, hi]`` (``0 < lo <= hi``) in
    log scale, in order (a point repeats where a piece is too narrow to bisect in floating point)."""
    pts = [lo, hi]
    for _ in range(levels):
        pts = [x for a, b in zip(pts[:-1], pts[1:]) for x in (a, log_mid(a, b))] + [hi]
    return pts


def weak_duality_violation(bound, gap, dual, lo, hi=None):
    """Why ``gap`` (``bound.gap`` of a pair with dual ``dual`` on ``[lo, hi]``; ``hi`` None: the point
    ``lo``) contradicts weak duality, or None: a rigorous bound (``bound.interval_bound``) below 0, another
    below ``-WEAK_DUALITY_TOL (1 + |dual objective|)`` (a NaN gap does neither).  A negative gap means the
    problem's dual is not a dual of its primal (a wrong declaration), or a bound that is not rigorous: the
    message blames the CVXPY declaration of the dual for a declared problem, the ``Bound`` otherwise."""
    if not gap < 0:
        return None
    if not bound.interval_bound:
        floor = bound.dual_floor(dual, lo, hi)
        if np.isfinite(floor) and gap >= -WEAK_DUALITY_TOL * (1.0 + abs(floor)):
            return None
    where = f"t = {lo:.6g}" if hi is None or hi == lo else f"[{lo:.6g}, {hi:.6g}]"
    said = f"weak duality fails on {where}: the gap bound is {gap:.6g} < 0"
    if getattr(bound, "declare", None) is not None:  # a CVXPY-declared problem (CvxpyBound)
        return f"{said}, so {bound.name}'s dual is not a dual of its primal (its declaration of the dual is wrong)"
    return (f"{said}, so {bound.name}'s Bound is wrong: errors() accepts a pair that is not feasible (a dual "
            "constraint it does not check?), or gap() is not a bound of the primal minus the dual objective")


def claim_failures(bound, primal, dual, kind, lo, hi, stored, target_of, eps, version, levels=SAMPLE_LEVELS):
    """``(failures, notes)`` of one piece's claim: why the pair does not hold it (its exact
    feasibility, then its gap bound recomputed where the piece claims it, against the ``stored``
    bound and ``target_of(a, b)``), and true claims worth a note (a stored bound looser than
    ours by more than rounding).  ``version`` wrote the stored bound (named when only the stored
    number fails); ``levels``: the sampling of sampled pieces (:func:`claimed_on`).

    Returns
    -------
    failures : list of str
        Empty when the claim holds.  A certified piece of a bound without ``interval_bound`` fails at once;
        infeasibility (``bound.check``) stops before any gap is recomputed; otherwise, per claimed point or
        interval: a weak-duality violation, a recomputed gap above ``stored`` (or NaN), ``stored`` above the target.
    notes : list of str
        Certified pieces only: ``stored`` looser than the recomputed bound by more than
        :math:`10^{-3}` of ``|recomputed| + eps``.
    """
    if kind == "certified" and lo != hi and not bound.interval_bound:
        return [f"{bound.name} has no bound valid on a whole piece: its pieces are sampled, not certified"], []
    errors = bound.check(primal, dual, lo, hi)
    if errors:
        return list(errors), []
    failures, notes = [], []
    for a, b in claimed_on(kind, lo, hi, levels):
        recomputed = bound.gap(primal, dual, a, b)
        goal = target_of(a, b)
        contradiction = weak_duality_violation(bound, recomputed, dual, a, b)
        if contradiction:
            failures.append(contradiction)
            continue
        if not recomputed <= stored:  # NaN fails too
            # a claim we cannot re-prove fails, even when eps itself holds (say so: a file
            # written by another version's tighter bound is not a forgery)
            holds = f"; this version's bound meets the eps target {goal:.6g}, the stored number is not re-proven " \
                f"(written by approxpath {version})" if recomputed <= goal else ""
            mine, theirs = _apart(recomputed, stored)
            failures.append(f"recomputed gap bound {mine} on [{a:.6g}, {b:.6g}] exceeds the stored {theirs}{holds}")
        elif kind == "certified" and not stored <= recomputed + _INFLATION * (abs(recomputed) + eps):
            notes.append(f"stored gap bound {stored:.6g} is looser than the recomputed {recomputed:.6g}")
        if not stored <= goal:
            failures.append("stored gap bound {} exceeds eps target {}".format(*_apart(stored, goal)))
    return failures, notes


def _apart(a, b):
    """``a, b`` as text to 6 digits, or to every digit where 6 show them equal (a stored bound one
    float above its target read "0.5 exceeds eps target 0.5")."""
    short = f"{a:.6g}", f"{b:.6g}"
    return short if short[0] != short[1] else (repr(float(a)), repr(float(b)))
