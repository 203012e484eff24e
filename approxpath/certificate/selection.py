"""Selection certificates: the file of a selection by a validation loss, k folds or a hold-out set
(:meth:`approxpath.selection.Selection.save`), and its verification with numpy alone
(``docs/certificate-format.md``).

Arrays: ``train`` and ``test`` (k, n) booleans (each fold's training and held-out points of the data),
``edges`` (c + 1,) the cells of the parameter interval, ``cell_lo`` and ``cell_hi`` (c,) the criterion's
enclosure on each, and each fold's path certificate, its arrays named ``fold<k>.<name>`` (``k`` from
0) and its ``meta`` the entry ``k`` of ``meta["folds"]`` (a choice made with no path: the fold's cells
between exact optima as its path of their pairs); optionally the data (``data_X``, ``data_y``; a
hold-out set's: the training points, then the held-out ones).  ``meta`` says ``certificate =
"selection"``, ``selection_format``, the problem, its options, ``parameter``, ``interval``, the data's
hash and size, ``criterion``, ``sense``, and the claim:
the choice ``t``, ``value`` ``[lo, hi]`` (the exact optimum's criterion at ``t``) and ``delta`` (no
parameter of the interval has a criterion below ``value[0] - delta``).

:func:`verify_selection` checks every field against its domain, that the folds split the data (each
point held out by one fold, trained on by the others; one fold: each point trained on or held out),
each fold's path as a path certificate on its
training points (every piece certified), then
encloses the criterion again on every cell and at ``t`` from those pieces
(:func:`approxpath.selection.proof.claims`) and checks that the stored enclosures contain what it
recomputes and that they prove ``delta``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..selection.losses import LOSSES
from ..numerics import log_mid
from ..selection.proof import claims, delta_of, held_out, short_cells, stored_claims
from .fields import META_FIELDS, layout_errors, number_array_errors
from .folds import (CLAIM_FIELDS, MASKS, choice_contents, choice_layout_errors, choice_meta_errors, choice_split,
                    data_failures, fold_checks, write_choice)
from .inputs import bound_from_meta

__all__ = ["SELECTION", "SELECTION_FORMAT", "SELECTION_FIELDS", "MAX_CELLS", "is_selection", "selection_certificate",
           "write_selection", "selection_meta_errors", "selection_layout_errors", "verify_selection"]

#: The value of ``meta["certificate"]`` that marks a selection.
SELECTION = "selection"
#: Newest selection layout this version reads and writes.
SELECTION_FORMAT = 1
#: Arrays of a selection besides the folds' and the data.
SELECTION_FIELDS = (*MASKS, "edges", "cell_lo", "cell_hi")

#: Rounds of new exact optima a file of a choice made with no path adds where its pieces prove less than
#: the search's cells (kernel ridge's 5-fold MSE, sinc n = 1000: δ 0.00129 from the search's pieces, 0.00096
#: after such rounds, the search's 0.00099; writing 13 s, then 25 s, for a search of 36 s).
_NODE_ROUNDS = 4
#: Cells a selection's file holds at most: the search stops past 400,000 and a file halves at most
#: as many again (a forged file of millions would make verify enclose each of them).
MAX_CELLS = 1_000_000

_OWN = {
    **CLAIM_FIELDS,
    "interval": META_FIELDS["interval"],
    # (required here: the claim's wording rests on it)
    "parameter": (True, META_FIELDS["parameter"][1], META_FIELDS["parameter"][2]),
}


def is_selection(meta):
    """Whether a certificate's ``meta`` (any parsed JSON) marks a selection."""
    return isinstance(meta, dict) and meta.get("certificate") == SELECTION


# ------------------------------------------------------------------------------ writing
def _no_file(selection, why=None):
    why = why or ("its criterion is sampled: nothing is proven" if selection.kind != "certified" else
                  "its criterion is not a validation loss" if selection.criterion not in LOSSES else
                  "it holds no proof (proof=None)")
    return InputError(f"this selection has no certificate file: {why}")


def selection_certificate(selection, embed_data=None):
    """``(arrays, meta)`` of the certificate of ``selection`` (a :class:`~approxpath.selection.Selection`
    with a :attr:`~approxpath.selection.Selection.proof`): the criterion enclosed again on its cells
    from the folds' final pieces (:func:`~approxpath.selection.proof.claims`), padded outward
    (:func:`~approxpath.selection.proof.stored_claims`), with the δ those prove; ``embed_data``: store
    the data (default: where no data file is recorded)."""
    from ..driver import path_meta

    proof = selection.proof
    if proof is None or selection.kind != "certified":  # (uncertified pieces: their folds' paths prove nothing)
        raise _no_file(selection)
    loss = selection.criterion
    try:
        problem, train, test = choice_split(proof)
    except InputError as exc:
        raise _no_file(selection, str(exc)) from None
    edges = np.unique(np.asarray(selection.edges, dtype=float))  # (a point cell adds nothing its neighbours lack)
    bounds = [p.bound for p in proof.problems]
    folds_pieces = proof.pieces if proof.nodes is None else _node_pieces(selection, bounds, edges)
    edges, lo, hi, value, _ = claims(bounds, folds_pieces, proof.X_vals, proof.y_vals, loss, edges, selection.t,
                                     selection.delta)
    lo, hi, value, delta = stored_claims(lo, hi, value, loss, held_out(proof.y_vals))
    arrays = dict(train=train, test=test, edges=edges, cell_lo=lo, cell_hi=hi)
    folds = []
    for j, pieces in enumerate(folds_pieces):
        anchors = tuple(sorted({a for p in pieces for a in p.anchors}))
        fold = _fold_path(selection, j, proof.problems[j], pieces, anchors, (float(edges[0]), float(edges[-1])))
        fold_arrays_, fold_meta = fold.certificate(embed_data=False)
        arrays.update({f"fold{j}.{key}": v for key, v in fold_arrays_.items()})
        folds.append(fold_meta)
    return choice_contents(selection, problem, arrays, path_meta(problem, None), embed_data, folds,
                           certificate=SELECTION, selection_format=SELECTION_FORMAT,
                           interval=[float(edges[0]), float(edges[-1])], value=list(value), delta=delta)


def _node_pieces(selection, bounds, edges):
    """The folds' pieces of a choice made with no path (cells between exact optima): their cells' pairs
    with gap bounds (each computed once), and where those prove a δ above the search's (whose cells kept
    the enclosures of every cover they were refined from), new exact optima in the middle of the pieces
    that keep it there, :data:`_NODE_ROUNDS` times at most (the search's own folds untouched)."""
    proof, t, goal = selection.proof, selection.t, selection.delta
    nodes, cells, gaps, before = proof.nodes, np.union1d(edges, [t]), {}, np.inf

    def bounded(k, p):  # (a piece whose pair and span are unchanged keeps its gap bound)
        key = (k, p.lo, p.hi, p.anchors)
        if key not in gaps:
            gaps[key] = bounds[k].gap(p.primal, p.dual, p.lo, p.hi)
        return replace(p, gap_bound=gaps[key])

    for round_ in range(_NODE_ROUNDS + 1):
        pieces = [tuple(bounded(k, p) for p in fold) for k, fold in enumerate(nodes.fold_pieces(cells))]
        if round_ == _NODE_ROUNDS or not np.isfinite(goal):
            break
        _, lo, _, value, delta = claims(bounds, pieces, proof.X_vals, proof.y_vals, selection.criterion, edges, t)
        short = short_cells(value, lo, selection.criterion, held_out(proof.y_vals), goal)
        if not short.size or short.size >= before:  # (new optima help where they leave fewer such cells each round)
            break
        before = short.size
        # the pieces (cells) overlapping a short cell: an optimum at each one's middle
        inside = [k for k in range(cells.size - 1)
                  if np.any((cells[k] < edges[short + 1]) & (edges[short] < cells[k + 1]))]
        middles = np.array([log_mid(cells[k], cells[k + 1]) for k in inside])
        nodes, cells = nodes.with_optima(middles), np.union1d(cells, middles)
    return pieces


def _fold_path(selection, j, problem, pieces, anchors, interval):
    """Fold ``j``'s path of ``pieces`` as its certificate claims it: the first path's records (a
    tightened path's pieces claim their own gap bounds, below its eps, absolute; a relative eps bounds
    another piece's optimal value: the fold claims the largest gap bound), or, with no path (cells
    between exact optima), a path of the cells' pairs claiming their largest gap bound."""
    from ..driver import path_meta
    from ..result import Path

    # (a fold whose optima are exact, all targets 0, has gap bounds 0: an eps must be positive)
    largest = max(max(p.gap_bound for p in pieces), np.finfo(float).tiny)
    if not selection.paths:
        return Path(problem=problem, eps=largest, relative=False, interval=interval, pieces=pieces,
                    exact_solves=len(anchors), solve_points=anchors, strategy="nodes", meta=path_meta(problem, None))
    path = selection.paths[j]
    return replace(path, pieces=pieces, eps=largest if path.relative else path.eps, relative=False,
                   exact_solves=len(anchors), solve_points=anchors)


def write_selection(selection, file, embed_data=None):
    """Write :func:`selection_certificate` to ``file`` atomically; the file's claim ``{"t", "value",
    "delta"}``."""
    return write_choice(file, *selection_certificate(selection, embed_data), ("t", "value", "delta"))


# ------------------------------------------------------------------------------ reading
def selection_meta_errors(meta):
    """What is wrong with a selection file's ``meta`` (a dict), each field against its domain
    (:func:`~approxpath.certificate.folds.choice_meta_errors`), and its parameter against its options."""
    errors = choice_meta_errors(meta, _OWN, SELECTION_FORMAT, "a selection")
    if not errors and meta["parameter"] != meta["options"].get("parameter", "bandwidth"):
        errors.append(f"meta 'parameter' = {meta['parameter']!r} but the options say "
                      f"{meta['options'].get('parameter', 'bandwidth')!r}")
    return errors


def selection_layout_errors(arrays, meta):
    """What makes a selection file unusable before any of it is used: ``meta`` fields outside their
    domains, missing arrays, wrong dtypes or shapes, NaN or inf; each fold's path layout
    (:func:`~approxpath.certificate.fields.layout_errors`).  A list of messages, empty when sound."""
    errors = selection_meta_errors(meta)
    if errors:
        return errors
    errors = [f"selection lacks array {key!r}" for key in SELECTION_FIELDS if key not in arrays]
    if errors:
        return errors
    edges, lo, hi = arrays["edges"], arrays["cell_lo"], arrays["cell_hi"]
    for key, a in (("edges", edges), ("cell_lo", lo), ("cell_hi", hi)):
        errors += number_array_errors(key, a)
        if a.dtype == np.float64 and (a.ndim != 1 or not np.all(np.isfinite(a))):
            errors.append(f"array {key!r} must be finite numbers in one dimension; got shape {a.shape}")
    if not errors and edges.size > MAX_CELLS + 1:
        errors.append(f"'edges' has {edges.size} entries: a selection has {MAX_CELLS} cells at most")
    if not errors and (edges.size < 2 or lo.shape != (edges.size - 1,) or hi.shape != lo.shape):
        errors.append(f"'edges' has {edges.size} entries: 'cell_lo' and 'cell_hi' must have one fewer each (one "
                      f"per cell); got {lo.shape} and {hi.shape}")
    return errors + choice_layout_errors(arrays, meta, SELECTION_FIELDS, layout_errors)


# ------------------------------------------------------------------------------ verifying
# Cells named in a report's failures at most (the rest counted): a forged file can fail at thousands.
_NAMED = 5


def verify_selection(arrays, meta, X, y, *, source="as given", eps=None, relative=False, interval=None,
                     data_sha256=None, box=None):
    """Re-check a selection certificate already read (``arrays``, ``meta``, whose layout
    :func:`selection_layout_errors` accepts) on the data ``X, y``.

    Parameters
    ----------
    source : str
        Where the data came from, for the report.
    eps, relative, box
        A selection claims a δ, not an eps or a box: any of them required fails.
    interval, data_sha256
        As for :func:`~approxpath.certificate.verify.verify`.

    Returns
    -------
    VerifyReport
        Counting the folds' pieces; ``claim`` has ``criterion``, ``t``, ``value``, ``delta``, ``folds``.

    Raises
    ------
    InputError
        Data that do not match the file (:class:`~approxpath.certificate.inputs.DataMismatch`).
    """
    from ..path_file import pieces_from_arrays
    from ..validate import check_X_y
    from .requirements import requirement_failures
    from .verify import VerifyReport, claim_of, failed_report, verify_path

    claim = claim_of(meta, source)
    X, y, failures, fatal = data_failures(arrays, meta, *check_X_y(X, y), data_sha256, bound_from_meta)
    if fatal:
        return failed_report(*failures, claim=claim)
    failures += requirement_failures(meta, interval=interval)
    if eps is not None or box is not None:
        failures.append("required " + ("an eps" if eps is not None else "a box") + ", but the certificate is a "
                        "selection: it claims a delta (its folds' paths claim their own gap bounds)")
    edges, (t_lo, t_hi) = arrays["edges"], meta["interval"]
    if not (edges[0] == t_lo and edges[-1] == t_hi and np.all(np.diff(edges) > 0)):
        failures.append(f"the cells' edges must increase from {t_lo!r} to {t_hi!r} (the interval)")
    if not t_lo <= meta["t"] <= t_hi:
        failures.append(f"the choice t = {meta['t']!r} is outside the interval [{t_lo!r}, {t_hi!r}]")
    if failures:
        return failed_report(*failures, claim=claim)

    def read(arrays_k, fold_meta, X_tr, y_tr):  # (format 3: the arrays verify_path checked)
        bound = bound_from_meta(fold_meta, X_tr, y_tr)
        return bound, pieces_from_arrays(bound, arrays_k)

    failures, got, X_vals, y_vals, notes, counted, top = fold_checks(
        arrays, meta, X, y, ("problem", "options", "interval"), verify_path, read)
    if not failures:
        failures = _claim_failures(arrays, meta, [b for b, _ in got], [p for _, p in got], X_vals, y_vals)
    return VerifyReport(not failures, counted, 0, 0, tuple(failures), top, tuple(notes), claim,
                        claims_hold=not failures, unit="pieces of the folds' paths")


def _claim_failures(arrays, meta, bounds, pieces, X_vals, y_vals):
    """Why the stored cover and choice are not what the folds' pieces prove (empty when they are)."""
    edges, lo, hi, loss = arrays["edges"], arrays["cell_lo"], arrays["cell_hi"], meta["criterion"]
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            _, got_lo, got_hi, got, _ = claims(bounds, pieces, X_vals, y_vals, loss, edges, float(meta["t"]))
    except Exception as exc:  # a pair the enclosure cannot evaluate proves nothing: say why
        return [f"the criterion cannot be enclosed from the folds' pieces ({type(exc).__name__}: {exc})"]
    out = []
    bad = np.flatnonzero(~((lo <= got_lo) & (got_hi <= hi)))
    for i in bad[:_NAMED]:
        out.append(f"cell {i} [{edges[i]:.6g}, {edges[i + 1]:.6g}]: the stored enclosure [{float(lo[i])!r}, "
                   f"{float(hi[i])!r}] does not contain the recomputed [{float(got_lo[i])!r}, {float(got_hi[i])!r}]")
    if bad.size > _NAMED:
        out.append(f"... and {bad.size - _NAMED} more cells whose stored enclosure does not contain the recomputed")
    value = meta["value"]
    if not (value[0] <= got[0] and got[1] <= value[1]):
        out.append(f"at t = {meta['t']!r} the stored value {value!r} does not contain the recomputed {list(got)!r}")
    proven = delta_of(value, lo, loss, held_out(y_vals))
    if not meta["delta"] >= proven:
        out.append(f"delta = {meta['delta']!r}, but the cells prove only {proven!r}")
    return out
