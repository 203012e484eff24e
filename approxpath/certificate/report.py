"""The report of a verification: :class:`VerifyReport`, the claim a certificate makes
(:func:`claim_of`) and the lines that say it (:func:`describe_claim`).

Every verifier (a path's, a surface's, a choice's: :mod:`approxpath.certificate.verify` and its
siblings) ends in a :class:`VerifyReport`: whether every claim of the file holds, what was
counted, the failures and notes, and the claim itself, read from the file's ``meta``;
:func:`failed_report` is the report of a file that cannot be checked at all.  Numpy only (no
solver, no search code); re-exported by :mod:`approxpath.certificate.verify`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .selection import is_selection
from .surface import is_surface
from .surface_selection import is_surface_selection

__all__ = ["VerifyReport", "failed_report", "claim_of", "describe_claim"]


# Failures a verdict lists as text (a forged file can fail at every one of thousands of cells;
# the first ones say what is wrong, the JSON and the report hold them all).
_LISTED = 20


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`~approxpath.certificate.verify.verify`.

    ``ok`` is true when every claim of the file holds: certified pieces for every parameter
    value, sampled pieces at their sampled points, and no piece is uncovered (and, if the
    caller required them, the claim is at least as strong as required); ``claims_hold`` when
    every claim holds and the only failures are uncovered pieces (an honest, incomplete path).

    Attributes
    ----------
    claim : dict
        What the file claims (and what was checked): problem, parameter, options, eps,
        relative, interval, data_sha256, n, d, where the data came from (``data``) and the
        machine that computed the path (``machine``: provenance, not checked).
    """

    ok: bool
    certified: int
    sampled: int
    uncovered: int
    failures: tuple
    max_gap_bound: float
    notes: tuple = ()  # true claims worth knowing about (stored bounds looser than ours)
    claim: dict = field(default_factory=dict)
    claims_hold: bool = False  # every claim made holds (``ok`` but for uncovered pieces, which claim nothing)
    unit: str = "pieces"  # what is counted: a path's pieces, a surface's cells

    def __str__(self):
        head = f"{'OK' if self.ok else 'FAILED'}: "
        if self.certified or self.sampled or self.uncovered or np.isfinite(self.max_gap_bound):
            head += "the file claims " * (not self.ok)  # (its counts and bounds as stored: the failures say what fails)
            head += (f"{self.certified} certified, {self.sampled} sampled, {self.uncovered} uncovered {self.unit}; "
                     f"max gap bound {self.max_gap_bound:.4g}")
        else:
            head += "nothing was checked"
        lines = [head] + [f"  {line}" for line in describe_claim(self.claim)]
        shown = [f"  - {f}" for f in self.failures[:_LISTED]]
        if len(self.failures) > _LISTED:
            shown.append(f"  - ... and {len(self.failures) - _LISTED} more failures (--json, or the report's "
                         "failures, lists them all)")
        return "\n".join(lines + shown + [f"  note: {n}" for n in self.notes])

    def to_json(self):
        """The one-line JSON of ``approxpath verify --json``."""
        top = self.max_gap_bound
        return dict(ok=self.ok, certified=self.certified, sampled=self.sampled, uncovered=self.uncovered,
                    failures=list(self.failures), notes=list(self.notes),
                    max_gap_bound=top if np.isfinite(top) else None, claim=self.claim)


def describe_claim(claim):
    """Lines saying what a certificate claims (empty when nothing is known)."""
    if not claim.get("problem"):
        return []
    swept = ("parameter", claim.get("parameter"))  # (the path's own parameter: its value is the interval's)
    opts = ", ".join(f"{k}={v!r}" for k, v in sorted(claim.get("options", {}).items()) if k not in swept)
    if "criterion" in claim:  # a choice
        (v0, v1), name, weight = claim["value"], claim.get("parameter"), claim.get("weight")
        if claim.get("box"):  # of both parameters
            (t0, t1), (w0, w1) = claim["box"]
            at, rival = f"t = {claim['t']:.6g}, {weight} = {claim['w']:.6g}", "point"
            where = f"t in [{t0:.6g}, {t1:.6g}] x {weight} in [{w0:.6g}, {w1:.6g}]"
        else:
            lo, hi = claim["interval"]
            at, rival, where = f"{name} = {claim['t']:.6g}", name, f"[{lo:.6g}, {hi:.6g}]"
        folds = "hold-out" if claim["folds"] == 1 else f"{claim['folds']}-fold"
        out = [f"claim: {claim['problem']}{f' ({opts})' if opts else ''}, {folds} "
               f"{claim['criterion']} of the exact optima: at {at} in [{v0:.6g}, {v1:.6g}]; "
               f"no {rival} in {where} is better by more than delta = {claim['delta']:.4g}"]
        return out + _provenance(claim)
    eps = f"eps = {claim['eps']:g} ({'relative to the optimal value' if claim['relative'] else 'absolute'})"
    if claim.get("box"):  # a surface
        (t0, t1), (w0, w1) = claim["box"]
        where = f"t in [{t0:.6g}, {t1:.6g}] x {claim.get('weight')} in [{w0:.6g}, {w1:.6g}]"
    else:
        lo, hi = claim["interval"]
        where = f"{claim.get('parameter')} in [{lo:.6g}, {hi:.6g}]"
    return [f"claim: {claim['problem']} over {where}{f' ({opts})' if opts else ''}: gap <= {eps}"] + _provenance(claim)


def _provenance(claim):
    """Lines on the data a claim is about, the plug-in problem's source and the machine that made it."""
    out = []
    if claim.get("problem_source"):
        out.append(f"problem: {claim['problem']} from {claim['problem_source']}")
    if claim.get("data_sha256"):
        # (the sha256 is the certificate's; the data it was checked against may be others)
        out.append(f"data: sha256 {claim['data_sha256']} recorded (n = {claim.get('n')}, d = {claim.get('d')}); "
                   f"checked against the data {claim.get('data', 'as given')}")
    made = claim.get("machine")
    if made:  # (provenance: a path's last bits, so its pieces, depend on the BLAS kernels and packages)
        out.append("made on: " + "; ".join(made[k] for k in ("processor", "system", "blas", "packages") if made.get(k)))
    return out


def failed_report(*failures, claim=None):
    """The :class:`VerifyReport` of a file that cannot be checked at all (unreadable, malformed):
    not ``ok``, nothing counted, ``max_gap_bound`` NaN, ``failures`` the reasons, ``claim`` as
    :func:`claim_of` (``{}`` if omitted)."""
    return VerifyReport(False, 0, 0, 0, tuple(failures), float("nan"), claim=claim or {})


def claim_of(meta, source=None):
    """The claim a (well-formed) ``meta`` makes, as :attr:`VerifyReport.claim`: a path's ``problem``,
    ``parameter`` (from the options where ``meta`` lacks it), ``options``, ``eps``, ``relative``,
    ``interval``, ``data_sha256``, ``n``, ``d``, ``machine`` and ``problem_source`` (None where missing); a
    surface's ``box`` and ``weight`` instead of the interval, its ``parameter`` ``"bandwidth and <weight>"``; a
    choice's ``criterion``, ``t`` (and ``w`` over both parameters), ``value``, ``delta`` and ``folds`` instead
    of the eps; ``source`` (if given) as ``claim["data"]``."""
    two = is_surface(meta) or is_surface_selection(meta)
    choice = is_selection(meta) or is_surface_selection(meta)
    where = ("box", "weight") if two else ("parameter", "interval")
    own = ("criterion", "t") + ("w",) * two + ("value", "delta") if choice else ("eps", "relative")
    claim = {k: meta.get(k) for k in ("problem", "options") + where + own + ("data_sha256", "n", "d", "machine",
                                                                              "problem_source")}
    if two:
        claim["parameter"] = f"bandwidth and {meta.get('weight')}"
    elif claim["parameter"] is None and isinstance(meta.get("options"), dict):
        claim["parameter"] = meta["options"].get("parameter")
    if choice:
        claim["folds"] = len(meta["folds"]) if isinstance(meta.get("folds"), list) else None
    if source is not None:
        claim["data"] = source
    return claim
