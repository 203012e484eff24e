"""Certificates of a choice over both parameters, the bandwidth and the weight, by k folds or a hold-out
set (:meth:`approxpath.surface.SurfaceSelection.save`), and their verification with numpy alone
(``docs/certificate-format.md``).

Arrays: ``train`` and ``test`` (k, n) booleans (each fold's training and held-out points of the data; a
hold-out set's data: the training points, then the held-out ones) and
each fold's surface certificate, its arrays named ``fold<k>.<name>`` (``k`` from 0) and its ``meta`` the
entry ``k`` of ``meta["folds"]``; optionally the data (``data_X``, ``data_y``).  ``meta`` says
``certificate = "surface_selection"``, ``selection_format``, the problem, its options without the
weight, ``weight``, ``box``, the data's hash and size, ``criterion``, ``sense``, and the claim: the choice
``t``, ``w``, ``value`` ``[lo, hi]`` (the exact optimum's criterion there) and ``delta`` (no point of the
box has a criterion below ``value[0] - delta``).

:func:`verify_surface_selection` checks every field against its domain, that the folds split the data,
each fold's surface as a surface certificate on its training points (every cell certified, the cells
tiling the box), then encloses the criterion again on the grid of every fold's cells and at ``(t, w)``
(:func:`approxpath.selection.surface_proof.surface_claims`, the writer's function) and checks that the
stored value contains what it recomputes and that it proves ``delta``.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..selection.losses import LOSSES
from ..selection.proof import delta_of, held_out, stored_claims
from ..selection.surface_proof import surface_claims
from .fields import finite_number
from .folds import (CLAIM_FIELDS, MASKS, choice_contents, choice_layout_errors, choice_meta_errors, choice_split,
                    data_failures, fold_checks, write_choice)
from .surface import BOX_FIELDS, SURFACE, bound_at_box, pair_arrays, surface_layout_errors, verify_surface

__all__ = ["SURFACE_SELECTION", "SURFACE_SELECTION_FORMAT", "is_surface_selection", "surface_selection_certificate",
           "write_surface_selection", "surface_selection_meta_errors", "surface_selection_layout_errors",
           "verify_surface_selection"]

#: The value of ``meta["certificate"]`` that marks a choice over both parameters.
SURFACE_SELECTION = "surface_selection"
#: Newest layout of such a file this version reads and writes.
SURFACE_SELECTION_FORMAT = 1

_OWN = {**CLAIM_FIELDS, **BOX_FIELDS, "w": (True, finite_number, "a finite number")}


def is_surface_selection(meta):
    """Whether a certificate's ``meta`` (any parsed JSON) marks a choice over both parameters."""
    return isinstance(meta, dict) and meta.get("certificate") == SURFACE_SELECTION


def _no_file(selection, why=None):
    why = why or ("it has no surfaces (cells between exact optima)" if not selection.surfaces else
                  "its criterion is not a validation loss" if selection.criterion not in LOSSES else
                  "it holds no proof (proof=None)")
    return InputError(f"this choice has no certificate file: {why}")


def surface_selection_certificate(selection, embed_data=None):
    """``(arrays, meta)`` of the certificate of ``selection`` (a
    :class:`~approxpath.surface.SurfaceSelection` with a ``proof``): each fold's cells as a surface
    certificate claiming the first surfaces' eps, and the criterion enclosed again from them
    (:func:`~approxpath.selection.surface_proof.surface_claims`), padded outward
    (:func:`~approxpath.selection.proof.stored_claims`), with the δ it proves; ``embed_data``: store the
    data (default: where no data file is recorded)."""
    from ..cells import CellBound
    from ..surface.build import surface_meta
    from ..surface.result import Surface

    proof, loss = selection.proof, selection.criterion
    if proof is None:
        raise _no_file(selection)
    if any(c.kind != "certified" for cells in proof.cells for c in cells):
        raise _no_file(selection, "a fold's surface has cells no pair certified (uncovered): no enclosure holds there")
    try:
        problem, train, test = choice_split(proof)
    except InputError as exc:
        raise _no_file(selection, str(exc)) from None
    arrays, folds = dict(train=train, test=test), []
    for j, (fold_problem, cells) in enumerate(zip(proof.problems, proof.cells)):
        points = tuple(sorted({a for c in cells for a in c.anchors}))
        surface = Surface(problem=fold_problem, eps=proof.eps, relative=proof.relative, box=proof.box, cells=cells,
                          exact_solves=len(points), solve_points=points, meta=surface_meta(fold_problem))
        fold_arrays_, fold_meta = surface.certificate(embed_data=False)
        arrays.update({f"fold{j}.{key}": v for key, v in fold_arrays_.items()})
        folds.append(fold_meta)
    pairs = [[(c.primal, c.dual) for c in cells] for cells in proof.cells]
    rects = [np.array([(c.t_lo, c.t_hi, c.w_lo, c.w_hi) for c in cells], dtype=float) for cells in proof.cells]
    gaps = [np.array([c.gap_bound for c in cells], dtype=float) for cells in proof.cells]
    value, low, _ = surface_claims([CellBound(p.bound) for p in proof.problems], pairs, rects, gaps, proof.X_vals,
                                   proof.y_vals, loss, selection.t, selection.w)
    _, _, value, delta = stored_claims([low], [low], value, loss, held_out(proof.y_vals))
    return choice_contents(selection, problem, arrays, surface_meta(problem), embed_data, folds,
                           certificate=SURFACE_SELECTION, selection_format=SURFACE_SELECTION_FORMAT,
                           box=[list(map(float, r)) for r in proof.box], w=float(selection.w), value=list(value),
                           delta=delta)


def write_surface_selection(selection, file, embed_data=None):
    """Write :func:`surface_selection_certificate` to ``file`` atomically; the file's claim ``{"t",
    "w", "value", "delta"}``."""
    return write_choice(file, *surface_selection_certificate(selection, embed_data), ("t", "w", "value", "delta"))


def surface_selection_meta_errors(meta):
    """What is wrong with the ``meta`` of a choice over both parameters (a dict), each field against its
    domain (:func:`~approxpath.certificate.folds.choice_meta_errors`)."""
    return choice_meta_errors(meta, _OWN, SURFACE_SELECTION_FORMAT, "a choice over both parameters", SURFACE)


def surface_selection_layout_errors(arrays, meta):
    """What makes such a file unusable before any of it is used: ``meta`` fields outside their domains,
    the masks' and the data's layout, unknown arrays, each fold's surface layout
    (:func:`~approxpath.certificate.surface.surface_layout_errors`).  A list of messages, empty when
    sound."""
    return surface_selection_meta_errors(meta) or choice_layout_errors(arrays, meta, MASKS, surface_layout_errors)


def verify_surface_selection(arrays, meta, X, y, *, source="as given", eps=None, relative=False, interval=None,
                             data_sha256=None, box=None):
    """Re-check the certificate of a choice over both parameters already read (``arrays``, ``meta``, whose
    layout :func:`surface_selection_layout_errors` accepts) on the data ``X, y``.

    Parameters
    ----------
    source : str
        Where the data came from, for the report.
    eps, relative
        A choice claims a δ, not an eps: one required fails.
    interval, box
        Require the claim's box to contain this interval of bandwidths, this box.
    data_sha256
        As for :func:`~approxpath.certificate.verify.verify`.

    Returns
    -------
    VerifyReport
        Counting the folds' cells; ``claim`` has ``criterion``, ``t``, ``w``, ``value``, ``delta``, ``folds``.

    Raises
    ------
    InputError
        Data that do not match the file (:class:`~approxpath.certificate.inputs.DataMismatch`).
    """
    from ..cells import CellBound
    from ..validate import check_X_y
    from .surface import box_requirement_failures
    from .verify import VerifyReport, claim_of, failed_report

    claim = claim_of(meta, source)
    X, y, failures, fatal = data_failures(arrays, meta, *check_X_y(X, y), data_sha256, bound_at_box)
    if fatal:
        return failed_report(*failures, claim=claim)
    failures += box_requirement_failures(meta["box"], box, interval)
    if eps is not None:
        failures.append("required an eps, but the certificate is a choice: it claims a delta (its folds' surfaces "
                        "claim their own gap bounds)")
    (t_lo, t_hi), (w_lo, w_hi) = meta["box"]
    if not (t_lo <= meta["t"] <= t_hi and w_lo <= meta["w"] <= w_hi):
        failures.append(f"the choice ({meta['t']!r}, {meta['w']!r}) is outside the box {meta['box']!r}")
    if failures:
        return failed_report(*failures, claim=claim)

    def read(arrays_k, fold_meta, X_tr, y_tr):  # (the arrays verify_surface checked)
        base, per_cell = bound_at_box(fold_meta, X_tr, y_tr), pair_arrays(arrays_k)
        ends = [arrays_k[key] for key in ("t_lo", "t_hi", "w_lo", "w_hi")]
        pairs = [base.piece_from_arrays({key: v[i] for key, v in per_cell.items()}, float(ends[0][i]),
                                        float(ends[1][i])) for i in range(ends[0].size)]
        return CellBound(base), pairs, np.column_stack(ends), arrays_k["gap_bound"]

    failures, got, X_vals, y_vals, notes, counted, top = fold_checks(
        arrays, meta, X, y, ("problem", "options", "weight", "box"),
        lambda a, m, X_, y_, _: verify_surface(a, m, X_, y_), read)
    if not failures:
        failures = _claim_failures(meta, [list(g) for g in zip(*got)], X_vals, y_vals)
    return VerifyReport(not failures, counted, 0, 0, tuple(failures), top, tuple(notes), claim,
                        claims_hold=not failures, unit="cells of the folds' surfaces")


def _claim_failures(meta, folds, X_vals, y_vals):
    """Why the stored choice is not what the folds' cells prove (empty when it is); ``folds``: the
    folds' ``CellBound``, pairs, cells and gap bounds, each a list over the folds."""
    loss, stored = meta["criterion"], meta["value"]
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            value, low, _ = surface_claims(*folds, X_vals, y_vals, loss, float(meta["t"]), float(meta["w"]))
    except Exception as exc:  # a pair the enclosure cannot evaluate proves nothing: say why
        return [f"the criterion cannot be enclosed from the folds' cells ({type(exc).__name__}: {exc})"]
    out = []
    if not (stored[0] <= value[0] and value[1] <= stored[1]):
        out.append(f"at ({meta['t']!r}, {meta['w']!r}) the stored value {stored!r} does not contain the recomputed "
                   f"{list(value)!r}")
    proven = delta_of(stored, np.array([low]), loss, held_out(y_vals))
    if not meta["delta"] >= proven:
        out.append(f"delta = {meta['delta']!r}, but the folds' cells prove only {proven!r}")
    return out
