"""Surface certificates: the file of a certified surface over (bandwidth, weight) and its
verification with numpy alone (``docs/surfaces.md``).

Arrays, one row per cell: ``t_lo``, ``t_hi``, ``w_lo``, ``w_hi`` (the cell
:math:`[t_{lo}, t_{hi}] \\times [w_{lo}, w_{hi}]`), ``gap_bound``, ``kind`` (``certified`` or
``uncovered``), ``anchor_lo``, ``anchor_hi``, ``anchor_w`` (the bandwidths and the weight of the
exact solves the pair came from; NaN when none) and the pairs in the one layout of
:mod:`approxpath.moving` (``Bound.pieces_to_arrays``, each side's span containing
``[t_lo, t_hi]``).  ``meta`` says ``certificate = "surface"`` (the kind a reader dispatches on),
``surface_format``, the problem, its ``options`` without the weight, ``weight`` (the weight
option's name), ``eps``, ``relative``, ``box`` ``[[t_lo, t_hi], [w_lo, w_hi]]``, the data's
hash and size, the kernel, the cells' kinds and provenance, as a path's certificate does.

:func:`verify_surface` builds only the problem's certificate side at the weights of the cells
(:class:`~approxpath.cells.CellBound`), checks every field against its domain, that the cells
tile the box, and every cell's claim: its pair feasible at the cell's smallest weight over its
bandwidths, its gap bound recomputed on the whole cell at most the stored one, which is at most
the target.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..progress import count_bar
from .fields import (META_FIELDS, PROVENANCE_FIELDS, field_errors, finite_number, number_array_errors,
                     unknown_arrays)
from .format import DATA_FIELDS, FORMAT_VERSION, content_sha256, read_certificate, size_mismatches
from .inputs import BadOptions, bound_from_meta, kernel_failures

__all__ = ["SURFACE", "SURFACE_FORMAT", "CELL_FIELDS", "CELL_KINDS", "BOX_FIELDS", "is_surface",
           "surface_layout_errors", "surface_meta_errors", "tiling_errors", "box_requirement_failures", "bound_at_box",
           "pair_arrays", "verify_surface"]

#: The value of ``meta["certificate"]`` that marks a surface.
SURFACE = "surface"
#: Newest surface layout this version reads and writes.
SURFACE_FORMAT = 1
#: Per-cell arrays every surface has (the pairs add theirs).
CELL_FIELDS = ("t_lo", "t_hi", "w_lo", "w_hi", "gap_bound", "kind", "anchor_lo", "anchor_hi", "anchor_w")
#: Cell kinds: certified on the whole cell, or uncovered (nothing reached the target there).
CELL_KINDS = ("certified", "uncovered")

# meta fields a surface shares with a path's beyond every file's (fields.py's domains)
_SHARED = PROVENANCE_FIELDS + ("eps", "relative", "solve_s", "certify_s")
_OWN = {
    "surface_format": (True, lambda v: _int(v) and v >= 1, "a positive integer"),
    "weight": (True, lambda v: isinstance(v, str) and v != "", "the name of the weight option"),
    "box": (True, lambda v: isinstance(v, list) and len(v) == 2 and all(
        isinstance(r, list) and len(r) == 2 and all(finite_number(x) for x in r) for r in v),
        "[[t_lo, t_hi], [w_lo, w_hi]] of finite numbers"),
    "cell_kinds": (False, lambda v: isinstance(v, list) and all(k in CELL_KINDS for k in v), "a list of cell kinds"),
    "solve_points": (False, lambda v: isinstance(v, list) and all(
        isinstance(p, list) and len(p) == 2 and all(finite_number(x) for x in p) for p in v), "a list of [t, w] pairs"),
}
#: The ``meta`` fields of the box a surface (and a choice over both parameters) covers.
BOX_FIELDS = {key: _OWN[key] for key in ("weight", "box")}
# A stored bound above the recomputed one by more than this share of (bound + eps) is noted
# (a weaker claim, still proven; as for paths).
_INFLATION = 1e-3


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_surface(meta):
    """Whether a certificate's ``meta`` (any parsed JSON) marks a surface: a dict whose
    ``certificate`` is :data:`SURFACE`."""
    return isinstance(meta, dict) and meta.get("certificate") == SURFACE


def surface_meta_errors(meta):
    """What is wrong with a surface file's ``meta``, each field against its domain.
    Empty when sound.  A ``surface_format`` above :data:`SURFACE_FORMAT` alone; else the shared fields
    (as a path's) and the surface's own against their domains, and, only when those hold, a
    ``format_version`` other than :data:`~approxpath.certificate.format.FORMAT_VERSION`."""
    if _int(meta.get("surface_format")) and meta["surface_format"] > SURFACE_FORMAT:
        return [f"written by a newer approxpath (surface format {meta['surface_format']}); this version reads "
                f"surface formats <= {SURFACE_FORMAT}: upgrade approxpath to verify it"]
    errors = field_errors(meta, {**{k: META_FIELDS[k] for k in _SHARED}, **_OWN})
    if not errors and meta["format_version"] != FORMAT_VERSION:
        errors.append(f"meta 'format_version' (the pairs' layout) must be {FORMAT_VERSION} in a surface; "
                      f"got {meta['format_version']!r}")
    return errors


def surface_layout_errors(arrays, meta):
    """What makes a surface file unusable before any of it is used: ``meta`` fields outside
    their domains, missing arrays, wrong dtypes or shapes, NaN or inf where a number is claimed.
    A list of messages (empty when the layout is sound): :func:`surface_meta_errors`, then the
    arrays': every array of :data:`CELL_FIELDS` present, ``t_lo`` of one axis (checks stop here
    without it), ``kind`` text, the others float64 with one row per cell (the data excepted), no NaN
    in ``gap_bound``, no inf in the ``anchor_*`` arrays (NaN: no exact solve), neither elsewhere;
    both data arrays or none."""
    errors = surface_meta_errors(meta)
    errors += [f"surface lacks array {k!r}" for k in CELL_FIELDS if k not in arrays]
    if "t_lo" not in arrays or arrays["t_lo"].ndim != 1:
        return errors + ["array 't_lo' must have one entry per cell"]
    cells = arrays["t_lo"].shape[0]
    for key, a in arrays.items():
        if key == "kind":
            if a.dtype.kind != "U" or a.shape != (cells,):
                errors.append(f"array 'kind' must be text, one entry per cell; got {a.dtype} {a.shape}")
            continue
        wrong = number_array_errors(key, a)
        errors += wrong
        if wrong or key in DATA_FIELDS:
            continue
        if a.ndim == 0 or a.shape[0] != cells or (key in CELL_FIELDS and a.ndim != 1):
            errors.append(f"array {key!r} has shape {a.shape}, expected {cells} rows (one per cell)")
            continue
        bad = (np.isnan(a) if key == "gap_bound" else ~np.isfinite(a) & ~np.isnan(a) if key.startswith("anchor_")
               else ~np.isfinite(a))
        if np.any(bad):
            errors.append(f"array {key!r} holds {'NaN' if key == 'gap_bound' else 'NaN or inf'} "
                          f"(first at cell {int(np.argwhere(bad)[0][0])})")
    if any(k in arrays for k in DATA_FIELDS) and not set(DATA_FIELDS) <= set(arrays):
        errors.append(f"a surface carrying its data needs both {' and '.join(DATA_FIELDS)}")
    return errors


def tiling_errors(t_lo, t_hi, w_lo, w_hi, box):
    """Why the cells do not tile ``box`` ``((t_lo, t_hi), (w_lo, w_hi))`` exactly: every cell
    of positive size inside the box, and in every slab between consecutive weights among the
    cells' edges, the cells spanning it meet end to end from the box's smallest bandwidth to its
    largest (no gap, no overlap; comparisons of the stored numbers only).  Empty when they do.
    The cells' ends ``t_lo, t_hi, w_lo, w_hi`` have shape ``(m,)``, ``m >= 1``.  Cells empty or
    outside the box give one message and stop the checks; else weights not spanning the box's, and
    a message per slab not tiled (at most 5, then a note that more are not listed)."""
    (bt0, bt1), (bw0, bw1) = box
    errors = []
    bad = np.flatnonzero(~((bt0 <= t_lo) & (t_lo < t_hi) & (t_hi <= bt1) & (bw0 <= w_lo) & (w_lo < w_hi)
                           & (w_hi <= bw1)))
    if bad.size:
        i = int(bad[0])
        return [f"{bad.size} cell(s) are empty or outside the box (first: cell {i}, t in [{float(t_lo[i])!r}, {float(t_hi[i])!r}], "
                f"w in [{float(w_lo[i])!r}, {float(w_hi[i])!r}])"]
    levels = np.unique(np.concatenate([w_lo, w_hi]))
    if levels[0] != bw0 or levels[-1] != bw1:
        errors.append(f"the cells cover the weights [{float(levels[0])!r}, {float(levels[-1])!r}], not the box's [{bw0!r}, {bw1!r}]")
    order = np.argsort(t_lo, kind="stable")
    t_lo, t_hi, w_lo, w_hi = t_lo[order], t_hi[order], w_lo[order], w_hi[order]
    for a, b in zip(levels[:-1].tolist(), levels[1:].tolist()):
        span = (w_lo <= a) & (w_hi >= b)  # a cell meets the slab only by spanning it: its edges are levels
        lo, hi = t_lo[span], t_hi[span]
        if lo.size == 0 or lo[0] != bt0 or hi[-1] != bt1 or np.any(hi[:-1] != lo[1:]):
            errors.append(f"the cells over the weights [{a!r}, {b!r}] do not tile the bandwidths [{bt0!r}, {bt1!r}] "
                          "end to end")
            if len(errors) >= 5:
                errors.append("(further slabs not listed)")
                break
    return errors


def bound_at_box(meta, X, y):
    """The problem's certificate side at the box's smallest weight, on ``X, y`` checked against
    the recorded hash; the options outside their domain raise ``BadOptions``."""
    options = dict(meta["options"])
    if meta["weight"] in options:
        raise BadOptions(f"options: a surface's options exclude its weight {meta['weight']!r} (set per cell)")
    options[meta["weight"]] = meta["box"][1][0]
    return bound_from_meta(dict(meta, options=options), X, y)


def box_requirement_failures(claimed, box=None, interval=None):
    """Why the box ``claimed`` ``[[t_lo, t_hi], [w_lo, w_hi]]`` does not cover a required ``box`` or
    ``interval`` of bandwidths (empty when it does, or nothing is required)."""
    (bt0, bt1), (bw0, bw1) = claimed
    required = ([] if box is None else [box]) + ([] if interval is None else [(interval, (bw0, bw1))])
    out = []
    for (a0, a1), (b0, b1) in required:  # a box, and an interval of bandwidths: each must be covered
        if not (bt0 <= a0 and a1 <= bt1 and bw0 <= b0 and b1 <= bw1):
            out.append(f"required the box [{a0:.6g}, {a1:.6g}] x [{b0:.6g}, {b1:.6g}], but the certificate covers "
                       f"[{bt0:.6g}, {bt1:.6g}] x [{bw0:.6g}, {bw1:.6g}]")
    return out


def pair_arrays(arrays):
    """The arrays of a surface's pairs: neither the cells' own fields nor the data."""
    return {key: v for key, v in arrays.items() if key not in CELL_FIELDS and key not in DATA_FIELDS}


def verify_surface(arrays, meta, X, y, *, eps=None, relative=False, box=None, interval=None, data_sha256=None,
                   progress=False):
    """Re-check a surface certificate already read (``arrays``, ``meta``, whose layout
    :func:`surface_layout_errors` accepts) on the data ``X, y``.

    Parameters
    ----------
    eps, relative, data_sha256
        As for :func:`~approxpath.certificate.verify.verify`.
    box : ((float, float), (float, float)), optional
        Require the claim's box to contain this one.
    interval : (float, float), optional
        Require the claim's bandwidths to contain this interval.

    Returns
    -------
    VerifyReport
        Counting cells; ``claim`` has ``box`` and ``weight``.
    """
    from ..cells import CellBound
    from .requirements import requirement_failures
    from .verify import VerifyReport, claim_of, failed_report

    claim = claim_of(meta, "as given")
    try:
        base = bound_at_box(meta, X, y)
    except BadOptions as exc:
        return failed_report(str(exc), claim=claim)
    try:
        cells = CellBound(base)
    except InputError as exc:  # a problem without cells, or options not of a bandwidth path
        return failed_report(str(exc), claim=claim)
    if meta["weight"] != base.weight or base.parameter != "bandwidth":
        return failed_report(f"meta 'weight' = {meta['weight']!r}, but {base.name}'s weight is {base.weight!r} "
                             "and a surface's options must say parameter='bandwidth'", claim=claim)
    (bt0, bt1), (bw0, bw1) = meta["box"]
    try:
        base.check_interval(bt0, bt1)
        base.check_interval(bw0, bw1)
    except InputError as exc:
        return failed_report(f"meta 'box': {exc}", claim=claim)
    failures = requirement_failures(meta, eps, relative, None, data_sha256) + box_requirement_failures(
        meta["box"], box, interval)
    kernel_bad, notes = kernel_failures(base, meta)
    failures += kernel_bad
    failures += size_mismatches(meta, *base.X.shape)
    if content_sha256(arrays, meta) != meta.get("content_sha256"):
        failures.append("the file was modified after it was written (content sha256 differs)")
    t_lo, t_hi, w_lo, w_hi = (arrays[k] for k in ("t_lo", "t_hi", "w_lo", "w_hi"))
    stored, kind = arrays["gap_bound"], arrays["kind"]
    m = t_lo.size
    if m == 0:
        return failed_report("the surface has no cells", *failures, claim=claim)
    tiling = tiling_errors(t_lo, t_hi, w_lo, w_hi, meta["box"])
    failures += tiling
    if list(map(str, kind)) != list(meta.get("cell_kinds", [])):
        failures.append("the kinds in 'meta' differ from the 'kind' array")
    for key, (lo_, hi_) in (("anchor_lo", (bt0, bt1)), ("anchor_hi", (bt0, bt1)), ("anchor_w", (bw0, bw1))):
        a = arrays[key]
        bad = np.flatnonzero(~np.isnan(a) & ~((lo_ <= a) & (a <= hi_)))
        if bad.size:
            failures.append(f"array {key!r}: cell {int(bad[0])}'s exact solve {float(a[bad[0]])!r} is outside the box")
    for p in meta.get("solve_points", []):
        if not (bt0 <= p[0] <= bt1 and bw0 <= p[1] <= bw1):
            failures.append(f"meta 'solve_points' has a point outside the box ({p!r})")
            break
    eps_claim, relative_claim = float(meta["eps"]), bool(meta["relative"])
    per_cell = pair_arrays(arrays)
    failures += unknown_arrays(per_cell, base)
    counts = dict.fromkeys(CELL_KINDS, 0)
    if tiling and any("outside the box" in f for f in tiling):
        return VerifyReport(False, 0, 0, 0, tuple(failures), float(np.max(stored)), tuple(notes), claim)
    bar = count_bar(progress, m, "verify", "cells")
    for i in range(m):
        if bar is not None and i:
            bar.done()  # (the cells before i)
        k = str(kind[i])
        where = f"cell {i} [{t_lo[i]:.6g}, {t_hi[i]:.6g}] x [{w_lo[i]:.6g}, {w_hi[i]:.6g}]"
        if k not in CELL_KINDS:
            failures.append(f"{where}: unknown kind {k!r}")
            continue
        counts[k] += 1
        if k == "uncovered":
            failures.append(f"{where} is uncovered (gap {stored[i]:.3g} above its target)")
            continue
        args = (float(t_lo[i]), float(t_hi[i]), float(w_lo[i]), float(w_hi[i]))
        try:
            primal, dual = base.piece_from_arrays({key: v[i] for key, v in per_cell.items()}, args[0], args[1])
        except KeyError as exc:
            failures.append(f"surface lacks array {exc.args[0]!r} (needed by {base.name})")
            counts[k] -= 1
            break
        except Exception as exc:
            failures.append(f"{where}: cannot rebuild its pair ({exc})")
            continue
        errors = cells.check(primal, dual, *args)
        if errors:
            failures += [f"{where}: {e}" for e in errors]
            continue
        recomputed, s = cells.gap(primal, dual, *args), float(stored[i])
        goal = cells.target(dual, *args, eps_claim, relative_claim)
        if not recomputed <= s:  # NaN fails too
            failures.append(f"{where}: recomputed gap bound {recomputed:.6g} exceeds the stored {s:.6g}")
        elif not s <= recomputed + _INFLATION * (abs(recomputed) + eps_claim):
            notes.append(f"{where}: stored gap bound {s:.6g} is looser than the recomputed {recomputed:.6g}")
        if not s <= goal:
            failures.append(f"{where}: stored gap bound {s:.6g} exceeds eps target {goal:.6g}")
    if bar is not None:
        bar.done()
        bar.close()
    return VerifyReport(not failures, counts["certified"], 0, counts["uncovered"], tuple(failures),
                        float(np.max(stored)), tuple(notes), claim, claims_hold=len(failures) == counts["uncovered"],
                        unit="cells")


def read_surface(file):
    """``(arrays, meta)`` of a surface certificate, :class:`InputError` when the file is not a
    well-formed one (:func:`surface_layout_errors`)."""
    arrays, meta = read_certificate(file)
    if not is_surface(meta):
        raise InputError(f"{str(file)!r} is not a surface certificate (a path's? read it with load_path)")
    errors = surface_layout_errors(arrays, meta)
    if errors:
        raise InputError(f"{str(file)!r} is not a valid surface certificate: " + "; ".join(errors))
    return arrays, meta
