"""Selection certificates: the file of a k-fold selection (:meth:`approxpath.selection.Selection.save`)
and its verification with numpy alone (``docs/certificate-format.md``).

Arrays: ``train`` and ``test`` (k, n) booleans (each fold's training and held-out points of the data),
``edges`` (c + 1,) the cells of the parameter interval, ``cell_lo`` and ``cell_hi`` (c,) the criterion's
enclosure on each, and each fold's path certificate, its arrays named ``fold<k>.<name>`` (``k`` from
0) and its ``meta`` the entry ``k`` of ``meta["folds"]``; optionally the data (``data_X``,
``data_y``).  ``meta`` says ``certificate = "selection"``, ``selection_format``, the problem, its
options, ``parameter``, ``interval``, the data's hash and size, ``criterion``, ``sense``, and the claim:
the choice ``t``, ``value`` ``[lo, hi]`` (the exact optimum's criterion at ``t``) and ``delta`` (no
parameter of the interval has a criterion below ``value[0] - delta``).

:func:`verify_selection` checks every field against its domain, that the folds split the data (each
point held out by one fold, trained on by the others), each fold's path as a path certificate on its
training points (every piece certified), then
encloses the criterion again on every cell and at ``t`` from those pieces
(:func:`approxpath.selection.proof.claims`) and checks that the stored enclosures contain what it
recomputes and that they prove ``delta``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from ..errors import InputError
from ..selection.losses import LOSSES, check_loss
from ..selection.proof import claims, delta_of, held_out, stored_claims
from .fields import META_FIELDS, field_errors, finite_number, layout_errors, number_array_errors
from .format import DATA_FIELDS, FORMAT_VERSION, MAX_MEMBERS, content_sha256, size_mismatches, write_npz
from .inputs import bound_from_meta, carried_data_failures, check_data

__all__ = ["SELECTION", "SELECTION_FORMAT", "SELECTION_FIELDS", "MAX_CELLS", "is_selection", "selection_certificate",
           "write_selection", "selection_meta_errors", "selection_layout_errors", "fold_arrays", "verify_selection"]

#: The value of ``meta["certificate"]`` that marks a selection.
SELECTION = "selection"
#: Newest selection layout this version reads and writes.
SELECTION_FORMAT = 1
#: Arrays of a selection besides the folds' and the data.
SELECTION_FIELDS = ("train", "test", "edges", "cell_lo", "cell_hi")

#: Cells a selection's file holds at most: the search stops past 400,000 and a file halves at most
#: as many again (a forged file of millions would make verify enclose each of them).
MAX_CELLS = 1_000_000

_FOLD = re.compile(r"fold(0|[1-9][0-9]*)\.(.+)")
_SHARED = ("format_version", "problem", "options", "interval", "parameter", "kernel", "n", "d", "data_sha256",
           "distances_sha256", "content_sha256", "preprocessing", "format", "data_file", "library_version", "wall_s",
           "exact_solves", "machine")
_OWN = {
    "selection_format": (True, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                         "a positive integer"),
    "criterion": (True, lambda v: v in LOSSES, f"a validation loss ({', '.join(LOSSES)})"),
    "sense": (True, lambda v: v == "min", "min (a loss)"),
    "t": (True, finite_number, "a finite number"),
    "value": (True, lambda v: isinstance(v, list) and len(v) == 2 and all(finite_number(x) for x in v)
              and v[0] <= v[1], "[lo, hi], finite, lo <= hi"),
    "delta": (True, lambda v: finite_number(v) and v >= 0, "a finite number >= 0"),
    "tol": (False, lambda v: finite_number(v) and v > 0, "a positive finite number"),
    "search_delta": (False, lambda v: v is None or finite_number(v), "a finite number or null"),
    "folds": (True, lambda v: isinstance(v, list) and len(v) >= 2 and all(isinstance(m, dict) for m in v),
              "a list of the folds' path meta (2 at least)"),
    # (required here: the masks' width and the claim's wording rest on them)
    "n": (True, META_FIELDS["n"][1], META_FIELDS["n"][2]),
    "parameter": (True, META_FIELDS["parameter"][1], META_FIELDS["parameter"][2]),
}


def is_selection(meta):
    """Whether a certificate's ``meta`` (any parsed JSON) marks a selection."""
    return isinstance(meta, dict) and meta.get("certificate") == SELECTION


# ------------------------------------------------------------------------------ writing
def _no_file(selection):
    why = ("its criterion is sampled: nothing is proven" if selection.kind != "certified" else
           "its criterion is not a validation loss" if selection.criterion not in LOSSES else
           "it has no path (cells between exact optima)" if not selection.paths else
           "it was chosen on a hold-out set" if selection.folds == 1 else "it holds no proof (proof=None)")
    return InputError(f"this selection has no certificate file: {why}; one is written for a k-fold selection "
                      "(cv=K) by a validation loss enclosed from the folds' paths")


def selection_certificate(selection, embed_data=None):
    """``(arrays, meta)`` of the certificate of ``selection`` (a :class:`~approxpath.selection.Selection`
    with a :attr:`~approxpath.selection.Selection.proof`): the criterion enclosed again on its cells
    from the folds' final pieces (:func:`~approxpath.selection.proof.claims`), padded outward
    (:func:`~approxpath.selection.proof.stored_claims`), with the δ those prove; ``embed_data``: store
    the data (default: where no data file is recorded)."""
    from ..driver import path_meta
    from .. import __version__

    proof = selection.proof
    if proof is None or selection.kind != "certified":  # (uncertified pieces: their folds' paths prove nothing)
        raise _no_file(selection)
    problem, loss = proof.problem, selection.criterion
    k, n = len(proof.splits), problem.X.shape[0]
    train, test = np.zeros((k, n), dtype=bool), np.zeros((k, n), dtype=bool)
    for j, (tr, te) in enumerate(proof.splits):
        train[j, tr], test[j, te] = True, True
    unsplit = _split_failures(train, test)
    if unsplit:
        raise InputError(f"this selection has no certificate file: {unsplit[0]}, as a k-fold splitter's folds do")
    edges = np.unique(np.asarray(selection.edges, dtype=float))  # (a point cell adds nothing its neighbours lack)
    bounds = [p.bound for p in proof.problems]
    edges, lo, hi, value, _ = claims(bounds, proof.pieces, proof.X_vals, proof.y_vals, loss, edges, selection.t,
                                     selection.delta)
    lo, hi, value, delta = stored_claims(lo, hi, value, loss, held_out(proof.y_vals))
    arrays = dict(train=train, test=test, edges=edges, cell_lo=lo, cell_hi=hi)
    folds = []
    for j, (path, pieces) in enumerate(zip(selection.paths, proof.pieces)):  # (the first paths' records)
        anchors = tuple(sorted({a for p in pieces for a in p.anchors}))
        # a tightened path's pieces claim their own gap bounds, below the first path's eps (absolute);
        # a relative eps is a bound of another piece's optimal value: the fold claims the largest gap
        eps = max(p.gap_bound for p in pieces) if path.relative else path.eps
        fold = replace(path, pieces=tuple(pieces), eps=eps, relative=False, exact_solves=len(anchors),
                       solve_points=anchors)
        fold_arrays_, fold_meta = fold.certificate(embed_data=False)
        arrays.update({f"fold{j}.{key}": v for key, v in fold_arrays_.items()})
        folds.append(fold_meta)
    meta = path_meta(problem, None)
    meta.pop("distances_sha256", None)  # (the folds' paths record their own D's, and verify checks those)
    if embed_data if embed_data is not None else not meta.get("data_file"):
        arrays.update(data_X=np.asarray(problem.X, dtype=float), data_y=np.asarray(problem.y, dtype=float))
    meta.update(certificate=SELECTION, selection_format=SELECTION_FORMAT, format_version=FORMAT_VERSION,
                library_version=__version__, interval=[float(edges[0]), float(edges[-1])], criterion=loss,
                sense=selection.sense, t=float(selection.t), value=list(value), delta=delta, tol=selection.tol,
                search_delta=None if np.isnan(selection.delta) else float(selection.delta),
                exact_solves=selection.exact_solves, wall_s=selection.wall_s, folds=folds)
    meta["content_sha256"] = content_sha256(arrays, meta)
    if len(arrays) + 1 > MAX_MEMBERS:
        raise InputError(f"this selection's certificate would hold {len(arrays) + 1} arrays, more than a certificate "
                         f"may ({MAX_MEMBERS}): use fewer folds (100 fit)")
    return arrays, meta


def write_selection(selection, file, embed_data=None):
    """Write :func:`selection_certificate` to ``file`` atomically; the file's claim ``{"t", "value",
    "delta"}``."""
    arrays, meta = selection_certificate(selection, embed_data)
    write_npz(file, arrays, meta, inputs=[meta["data_file"]] if isinstance(meta.get("data_file"), str) else [])
    return {key: meta[key] for key in ("t", "value", "delta")}


# ------------------------------------------------------------------------------ reading
def fold_arrays(arrays, k):
    """Fold ``k``'s path certificate arrays (``fold<k>.<name>`` as ``<name>``)."""
    head = f"fold{k}."
    return {key[len(head):]: v for key, v in arrays.items() if key.startswith(head)}


def selection_meta_errors(meta):
    """What is wrong with a selection file's ``meta`` (a dict), each field against its domain: a
    ``selection_format`` above :data:`SELECTION_FORMAT` alone; else the fields, then a
    ``format_version`` (the folds' pairs' layout) other than the one this version writes."""
    if isinstance(meta.get("selection_format"), int) and meta["selection_format"] > SELECTION_FORMAT:
        return [f"written by a newer approxpath (selection format {meta['selection_format']}); this version reads "
                f"selection formats <= {SELECTION_FORMAT}: upgrade approxpath to verify it"]
    errors = field_errors(meta, {**{key: META_FIELDS[key] for key in _SHARED}, **_OWN})
    if errors:
        return errors
    if meta["format_version"] != FORMAT_VERSION:
        errors.append(f"meta 'format_version' must be {FORMAT_VERSION} in a selection; got {meta['format_version']!r}")
    if meta["parameter"] != meta["options"].get("parameter", "bandwidth"):
        errors.append(f"meta 'parameter' = {meta['parameter']!r} but the options say "
                      f"{meta['options'].get('parameter', 'bandwidth')!r}")
    for j, fold in enumerate(meta["folds"]):  # (the folds' pairs are read in the layout this version writes)
        if fold.get("format_version") != FORMAT_VERSION:
            errors.append(f"fold {j + 1}: meta 'format_version' must be {FORMAT_VERSION} in a selection; got "
                          f"{fold.get('format_version')!r}")
        if fold.get("kernel") != meta.get("kernel"):
            errors.append(f"fold {j + 1}: meta 'kernel' differs from the selection's")
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
    k, n = len(meta["folds"]), meta.get("n")
    for key in ("train", "test"):
        a = arrays[key]
        if a.dtype != bool or a.ndim != 2 or a.shape[0] != k or (n is not None and a.shape[1] != n):
            errors.append(f"array {key!r} must be booleans of shape ({k}, n = {n}); got {a.dtype} {a.shape}")
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
    for key in DATA_FIELDS:
        if key in arrays:
            errors += number_array_errors(key, arrays[key])
    if any(key in arrays for key in DATA_FIELDS) and not set(DATA_FIELDS) <= set(arrays):
        errors.append(f"a selection carrying its data needs both {' and '.join(DATA_FIELDS)}")
    for key in arrays:
        match = _FOLD.fullmatch(key)
        if key not in SELECTION_FIELDS and key not in DATA_FIELDS and not (match and int(match[1]) < k):
            errors.append(f"unknown array {key!r} (a selection of {k} folds stores fold0. to fold{k - 1}.)")
    for j, fold_meta in enumerate(meta["folds"]):
        errors += [f"fold {j + 1}: {e}" for e in layout_errors(fold_arrays(arrays, j), fold_meta)]
    return errors


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
    from ..validate import check_X_y
    from .requirements import requirement_failures
    from .verify import VerifyReport, claim_of, failed_report

    claim = claim_of(meta, source)
    X, y = check_X_y(X, y)
    check_data(meta, SimpleNamespace(X=X, y=y))
    failures = (requirement_failures(meta, None, False, interval, data_sha256) + size_mismatches(meta, *X.shape)
                + carried_data_failures(arrays, meta))
    try:
        check_loss(meta["criterion"], y)
    except InputError as exc:
        failures.append(f"meta 'criterion': {exc}")
    if eps is not None or box is not None:
        failures.append("required " + ("an eps" if eps is not None else "a box") + ", but the certificate is a "
                        "selection: it claims a delta (its folds' paths claim their own gap bounds)")
    if content_sha256(arrays, meta) != meta.get("content_sha256"):
        failures.append("the file was modified after it was written (content sha256 differs)")
    train, test, edges = arrays["train"], arrays["test"], arrays["edges"]
    t_lo, t_hi = meta["interval"]
    precomputed = meta["options"].get("kernel") == "precomputed"  # (X is D: a fold takes its rows and columns)
    if train.shape[1] != X.shape[0] or (precomputed and X.shape[0] != X.shape[1]):
        return failed_report(f"the folds' masks have {train.shape[1]} columns, for {X.shape[0]} points of data "
                             f"of shape {X.shape}", *failures, claim=claim)
    if precomputed:  # D itself, as the problem checks it (a fold's D and held-out rows are parts of it)
        try:
            bound_from_meta(meta, X, y)
        except InputError as exc:
            return failed_report(f"the data: {exc}", *failures, claim=claim)
    failures += _split_failures(train, test)
    if not (edges[0] == t_lo and edges[-1] == t_hi and np.all(np.diff(edges) > 0)):
        failures.append(f"the cells' edges must increase from {t_lo!r} to {t_hi!r} (the interval)")
    if not t_lo <= meta["t"] <= t_hi:
        failures.append(f"the choice t = {meta['t']!r} is outside the interval [{t_lo!r}, {t_hi!r}]")
    if failures:
        return failed_report(*failures, claim=claim)
    folds = _fold_checks(arrays, meta, X, y, precomputed)
    failures += folds[0]
    if not failures:
        failures = _claim_failures(arrays, meta, *folds[1:5])
    return VerifyReport(not failures, folds[6], 0, 0, tuple(failures), folds[7], tuple(folds[5]), claim,
                        claims_hold=not failures, unit="pieces of the folds' paths")


def _split_failures(train, test):
    """Why the folds' masks ``train``, ``test`` (k, n) are not a split of the data: each point held out
    by one fold and trained on by the others, each fold training on 2 points at least and holding out
    1; empty when they are."""
    out = []
    if np.any(train & test):
        first = int(np.flatnonzero(np.any(train & test, axis=1))[0])
        out.append(f"fold {first + 1} trains on a point it holds out")
    elif not (np.all(test.sum(axis=0) == 1) and np.array_equal(train, ~test)):
        out.append("the folds do not split the data: each point must be held out by one fold and trained on by "
                   "the others")
    if not (np.all(train.sum(axis=1) >= 2) and np.all(test.any(axis=1))):
        out.append("every fold must train on 2 points at least and hold out 1")
    return out


def _fold_checks(arrays, meta, X, y, precomputed):
    """Each fold's path verified on its training points, its pieces read: ``(failures, bounds, pieces,
    X_vals, y_vals, notes, certified pieces, largest gap bound)``.  A precomputed D (checked whole) is
    not checked again fold by fold: a fold's is a principal submatrix of it
    (:func:`~approxpath.kernel_families.submatrices_of_checked`)."""
    from ..kernel_families import submatrices_of_checked
    from ..path_file import pieces_from_arrays
    from .verify import verify_path

    train, test = arrays["train"], arrays["test"]
    failures, bounds, pieces, X_vals, y_vals, notes, counted, top = [], [], [], [], [], [], 0, -np.inf
    with submatrices_of_checked() if precomputed else contextlib.nullcontext():
        for k, fold_meta in enumerate(meta["folds"]):
            tr, te = np.flatnonzero(train[k]), np.flatnonzero(test[k])
            X_tr = X[np.ix_(tr, tr)] if precomputed else X[tr]
            X_vals.append(X[np.ix_(te, tr)] if precomputed else X[te])
            y_vals.append(y[te])
            same = {key: fold_meta.get(key) for key in ("problem", "options", "interval")}
            if same != {key: meta[key] for key in same}:
                failures.append(f"fold {k + 1}: its path's problem, options or interval differ from the selection's")
                continue
            arrays_k = fold_arrays(arrays, k)
            try:
                report = verify_path(arrays_k, fold_meta, X_tr, y[tr], f"fold {k + 1}'s training points")
            except InputError as exc:  # (the fold's records, not the caller's data, are at fault: they matched)
                failures.append(f"fold {k + 1}: its path was not computed on the fold's training points ({exc})")
                continue
            failures += [f"fold {k + 1}: {f}" for f in report.failures]
            notes += [f"fold {k + 1}: {f}" for f in report.notes]
            if report.sampled or report.uncovered:
                failures.append(f"fold {k + 1}: {report.sampled + report.uncovered} of its path's pieces are not "
                                "certified: the criterion is not enclosed there")
            counted, top = counted + report.certified, max(top, report.max_gap_bound)
            if report.ok:
                try:
                    bound = bound_from_meta(fold_meta, X_tr, y[tr])
                    pieces.append(pieces_from_arrays(bound, arrays_k))  # (format 3: the arrays verify_path checked)
                except Exception as exc:  # (verify_path read them: a failure here is no claim proven)
                    failures.append(f"fold {k + 1}: its pieces cannot be read again ({type(exc).__name__}: {exc})")
                    continue
                bounds.append(bound)
    return failures, bounds, pieces, X_vals, y_vals, notes, counted, float(top)


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
