"""What the certificates of a k-fold choice share, over one parameter
(:mod:`~approxpath.certificate.selection`) or both (:mod:`~approxpath.certificate.surface_selection`):
the folds' masks ``train`` and ``test`` (k, n), each fold's certificate stored as arrays
``fold<k>.<name>`` with its ``meta`` the entry ``k`` of ``meta["folds"]``, the claim's fields, and the
checks of all of it against the data before any fold is verified (numpy only)."""

from __future__ import annotations

import contextlib
import re

import numpy as np

from ..errors import InputError
from ..selection.losses import LOSSES, check_loss
from .fields import META_FIELDS, PROVENANCE_FIELDS, field_errors, finite_number
from .format import DATA_FIELDS, FORMAT_VERSION, MAX_MEMBERS, content_sha256, size_mismatches, write_npz
from .inputs import BadOptions, DataMismatch, carried_data_failures

__all__ = ["MASKS", "CLAIM_FIELDS", "fold_arrays", "fold_masks", "split_failures", "choice_split",
           "choice_contents", "write_choice", "choice_meta_errors", "choice_layout_errors", "data_failures",
           "fold_checks"]

#: The folds' masks: each fold's training and held-out points of the data, (k, n) booleans.
MASKS = ("train", "test")
#: A choice's own ``meta`` fields: ``name: (required, domain, description)``.
CLAIM_FIELDS = {
    "selection_format": (True, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                         "a positive integer"),
    "criterion": (True, lambda v: v in LOSSES, f"a validation loss ({', '.join(LOSSES)})"),
    "sense": (True, lambda v: v == "min", "min (a loss)"),
    "t": (True, finite_number, "a finite number"),
    "value": (True, lambda v: isinstance(v, list) and len(v) == 2 and all(finite_number(x) for x in v)
              and v[0] <= v[1], "[lo, hi], finite, lo <= hi"),
    "delta": (True, lambda v: finite_number(v) and v >= 0, "a finite number >= 0"),
    "tol": (False, lambda v: finite_number(v) and v > 0, "a positive finite number"),
    "search_delta": (False, lambda v: v is None or (finite_number(v) and v >= 0), "a finite number >= 0 or null"),
    "folds": (True, lambda v: isinstance(v, list) and len(v) >= 1 and all(isinstance(m, dict) for m in v),
              "a list of the folds' meta (one: a hold-out set)"),
    # (required here: the masks' width and the claim's wording rest on it)
    "n": (True, META_FIELDS["n"][1], META_FIELDS["n"][2]),
}

_FOLD = re.compile(r"fold(0|[1-9][0-9]*)\.(.+)")


def fold_arrays(arrays, k):
    """Fold ``k``'s certificate arrays (``fold<k>.<name>`` as ``<name>``)."""
    head = f"fold{k}."
    return {key[len(head):]: v for key, v in arrays.items() if key.startswith(head)}


def fold_masks(splits, n):
    """``train, test``: (k, n) booleans of the folds' training and held-out indices ``splits``."""
    train, test = np.zeros((len(splits), n), dtype=bool), np.zeros((len(splits), n), dtype=bool)
    for j, (tr, te) in enumerate(splits):
        train[j, tr], test[j, te] = True, True
    return train, test


def split_failures(train, test):
    """Why the folds' masks ``train``, ``test`` (k, n) are not a split of the data: k folds, each point
    held out by one fold and trained on by the others; one fold (a hold-out set), each point trained on
    or held out; each fold training on 2 points at least and holding out 1.  Empty when they are."""
    out = []
    if np.any(train & test):
        first = int(np.flatnonzero(np.any(train & test, axis=1))[0])
        out.append(f"fold {first + 1} trains on a point it holds out")
    elif not (np.array_equal(train, ~test) and (train.shape[0] == 1 or np.all(test.sum(axis=0) == 1))):
        out.append("the folds do not split the data: each point must be " + (
            "trained on or held out" if train.shape[0] == 1 else "held out by one fold and trained on by the others"))
    if not (np.all(train.sum(axis=1) >= 2) and np.all(test.any(axis=1))):
        out.append("every fold must train on 2 points at least and hold out 1")
    return out


def choice_split(proof):
    """``(problem, train, test)``: the problem on a choice's data and the folds' masks (k, n).

    The data of a k-fold choice are its problem's; those of a hold-out set (``proof.splits`` None) are
    the training points followed by the held-out ones, the one fold training on the first.

    Raises
    ------
    InputError
        Masks that do not split the data; a hold-out set of a precomputed D (its rows hold no kernel
        among the held-out points); training and held-out points the problem refuses together.
    """
    problem = proof.problem
    if proof.splits is not None:
        train, test = fold_masks(proof.splits, problem.X.shape[0])
        unsplit = split_failures(train, test)
        if unsplit:
            raise InputError(f"{unsplit[0]}, as a k-fold splitter's folds do")
        return problem, train, test
    options = problem.options()
    if options.get("kernel") == "precomputed":
        raise InputError("a precomputed D's hold-out rows hold no distances among the held-out points, so no file "
                         "can carry all the points as one D (choose by cv=K on the whole D for a file)")
    X = np.vstack([problem.X, proof.X_vals[0]])
    try:
        whole = type(problem)(X, np.concatenate([problem.y, proof.y_vals[0]]), **options)
    except InputError as exc:
        raise InputError(f"the problem refuses the training and held-out points together ({exc})") from None
    train = np.zeros((1, X.shape[0]), dtype=bool)
    train[0, :problem.X.shape[0]] = True
    return whole, train, ~train


def choice_contents(selection, problem, arrays, meta, embed_data, folds, **claim):
    """``(arrays, meta)`` of a choice's file, finished: ``meta`` (``problem``'s, on all the data) with the
    choice's fields, ``claim`` (its own: the kind, the ranges, the claim's value and δ) and ``folds``
    (each fold's certificate ``meta``), the data added to ``arrays`` where ``embed_data`` (by default where
    no data file is recorded), and the content's hash; :class:`InputError` for more members than a
    certificate may hold."""
    from .. import __version__

    meta.pop("distances_sha256", None)  # (the folds' certificates record their own D's, and verify checks those)
    if embed_data if embed_data is not None else not meta.get("data_file"):
        arrays.update(data_X=np.asarray(problem.X, dtype=float), data_y=np.asarray(problem.y, dtype=float))
    meta.update(format_version=FORMAT_VERSION, library_version=__version__, criterion=selection.criterion,
                sense=selection.sense, t=float(selection.t), tol=selection.tol,
                search_delta=None if np.isnan(selection.delta) else float(selection.delta),
                exact_solves=selection.exact_solves, wall_s=selection.wall_s, **claim, folds=folds)
    meta["content_sha256"] = content_sha256(arrays, meta)
    if len(arrays) + 1 > MAX_MEMBERS:
        raise InputError(f"this choice's certificate would hold {len(arrays) + 1} arrays, more than a certificate "
                         f"may ({MAX_MEMBERS}): use fewer folds (100 fit)")
    return arrays, meta


def write_choice(file, arrays, meta, keys):
    """Write a choice's file (:func:`choice_contents`) to ``file`` atomically; its claim, the entries
    ``keys`` of ``meta``."""
    write_npz(file, arrays, meta, inputs=[meta["data_file"]] if isinstance(meta.get("data_file"), str) else [])
    return {key: meta[key] for key in keys}


def choice_meta_errors(meta, fields, newest, kind, fold_kind=None):
    """What is wrong with a choice file's ``meta``, each field against its domain (``fields``: the
    file's own besides :data:`~.fields.PROVENANCE_FIELDS`): a ``selection_format`` above ``newest``
    alone; else the fields, then a ``format_version`` (the folds' pairs' layout) other than the one this version
    writes, in the file or a fold, a fold's kernel other than the file's and a fold's ``certificate``
    other than ``fold_kind`` (None: absent, a path's).  ``kind``: what the file is called in messages."""
    if isinstance(meta.get("selection_format"), int) and meta["selection_format"] > newest:
        return [f"written by a newer approxpath (selection format {meta['selection_format']}); this version reads "
                f"selection formats <= {newest}: upgrade approxpath to verify it"]
    errors = field_errors(meta, {**{key: META_FIELDS[key] for key in PROVENANCE_FIELDS}, **fields})
    if errors:
        return errors
    for j, fold in enumerate([meta] + meta["folds"]):  # (the folds' pairs are read in the layout this version writes)
        where = "" if j == 0 else f"fold {j}: "
        if fold.get("format_version") != FORMAT_VERSION:
            errors.append(f"{where}meta 'format_version' must be {FORMAT_VERSION} in {kind}; got "
                          f"{fold.get('format_version')!r}")
        if j and fold.get("kernel") != meta.get("kernel"):
            errors.append(f"{where}meta 'kernel' differs from the choice's")
        if j and fold.get("certificate") != fold_kind:
            must = "be absent (a path)" if fold_kind is None else f"be {fold_kind!r}"
            errors.append(f"{where}meta 'certificate' must {must} in {kind}; got {fold.get('certificate')!r}")
    return errors


def choice_layout_errors(arrays, meta, own, fold_layout):
    """The layout errors of the arrays of a choice's file whose ``meta`` is sound: the masks' dtype and
    shape, the data's, arrays other than ``own``, the masks, the data and the folds', and each fold's
    layout (``fold_layout(fold arrays, fold meta)``, a list of messages)."""
    from .fields import number_array_errors

    errors = [f"the file lacks array {key!r}" for key in MASKS if key not in arrays]
    k, n = len(meta["folds"]), meta["n"]
    for key in MASKS:
        a = arrays.get(key)
        if a is not None and (a.dtype != bool or a.ndim != 2 or a.shape[0] != k or a.shape[1] != n):
            errors.append(f"array {key!r} must be booleans of shape ({k}, n = {n}); got {a.dtype} {a.shape}")
    for key in DATA_FIELDS:
        if key in arrays:
            errors += number_array_errors(key, arrays[key])
    if any(key in arrays for key in DATA_FIELDS) and not set(DATA_FIELDS) <= set(arrays):
        errors.append(f"a choice's file carrying its data needs both {' and '.join(DATA_FIELDS)}")
    for key in arrays:
        match = _FOLD.fullmatch(key)
        if key not in own and key not in MASKS and key not in DATA_FIELDS and not (match and int(match[1]) < k):
            errors.append(f"unknown array {key!r} (a choice of {k} folds stores fold0. to fold{k - 1}.)")
    for j, fold_meta in enumerate(meta["folds"]):
        errors += [f"fold {j + 1}: {e}" for e in fold_layout(fold_arrays(arrays, j), fold_meta)]
    return errors


def data_failures(arrays, meta, X, y, data_sha256, whole):
    """The checks of a choice's file against the data ``X, y`` before its folds.

    Parameters
    ----------
    arrays, meta
        The file, its layout sound.
    X, y : ndarray
        The data, as given (checked as arrays).
    data_sha256 : str or None
        A required data hash.
    whole : callable
        ``whole(meta, X, y)``: the problem's certificate side on all the data, as the file's options
        build it (:func:`~approxpath.certificate.inputs.bound_from_meta`; its data checked against
        the file's hash).

    Returns
    -------
    X, y : ndarray
        The data as the problem takes them (its labels mapped, a precomputed D checked whole): what
        the folds' rows come from.
    failures : list of str
    fatal : bool
        True where the folds cannot be read from these data at all (options that build no problem,
        masks of another width).

    Raises
    ------
    DataMismatch
        Other data than the file's.
    """
    from .requirements import requirement_failures

    failures = (requirement_failures(meta, None, False, None, data_sha256) + size_mismatches(meta, *X.shape)
                + carried_data_failures(arrays, meta))
    if content_sha256(arrays, meta) != meta.get("content_sha256"):
        failures.append("the file was modified after it was written (content sha256 differs)")
    try:
        bound = whole(meta, X, y)
    except DataMismatch:
        raise
    except BadOptions as exc:  # (options outside their domains, or data the problem refuses: "options: ...")
        return X, y, [str(exc)] + failures, True
    X, y = bound.X, bound.y
    try:
        check_loss(meta["criterion"], y)
    except InputError as exc:
        failures.append(f"meta 'criterion': {exc}")
    train, test = arrays["train"], arrays["test"]
    if train.shape[1] != X.shape[0]:
        wrong = f"the folds' masks have {train.shape[1]} columns, for {X.shape[0]} points of data"
        return X, y, [wrong] + failures, True
    return X, y, failures + split_failures(train, test), False


def _precomputed(meta):
    return meta["options"].get("kernel") == "precomputed"  # (X is D: a fold takes its rows and columns)


def fold_checks(arrays, meta, X, y, same, verify_fold, read_fold):
    """Each fold's certificate verified on its training points, and read where it holds.

    Parameters
    ----------
    arrays, meta
        The choice's file, sound by :func:`data_failures`.
    X, y : ndarray
        Its data.
    same : tuple of str
        ``meta`` fields each fold's must equal (its problem, options, parameters' ranges).
    verify_fold : callable
        ``verify_fold(arrays, meta, X, y, source)``: a fold's :class:`~approxpath.certificate.verify.VerifyReport`.
    read_fold : callable
        ``read_fold(arrays, meta, X, y)``: what the claim is enclosed from (a verified fold's pieces, cells).

    Returns
    -------
    failures, read, X_vals, y_vals, notes : lists
        ``read`` one entry per fold that verified.
    certified : int
        The folds' certified pieces (cells).
    top : float
        Their largest gap bound.

    Notes
    -----
    A precomputed D (checked whole by :func:`data_failures`) is not checked again fold by fold: a fold's
    is a principal submatrix of it (:func:`~approxpath.kernel_families.submatrices_of_checked`).
    """
    from ..kernel_families import submatrices_of_checked

    failures, read, X_vals, y_vals, notes, counted, top = [], [], [], [], [], 0, -np.inf
    precomputed = _precomputed(meta)
    with submatrices_of_checked() if precomputed else contextlib.nullcontext():
        for k, fold_meta in enumerate(meta["folds"]):
            tr, te = np.flatnonzero(arrays["train"][k]), np.flatnonzero(arrays["test"][k])
            X_tr = X[np.ix_(tr, tr)] if precomputed else X[tr]
            X_vals.append(X[np.ix_(te, tr)] if precomputed else X[te])
            y_vals.append(y[te])
            if {key: fold_meta.get(key) for key in same} != {key: meta[key] for key in same}:
                failures.append(f"fold {k + 1}: its problem, options or {same[-1]} differ from the choice's")
                continue
            arrays_k = fold_arrays(arrays, k)
            try:
                report = verify_fold(arrays_k, fold_meta, X_tr, y[tr], f"fold {k + 1}'s training points")
            except InputError as exc:  # (the fold's records, not the caller's data, are at fault: they matched)
                failures.append(f"fold {k + 1}: it was not computed on the fold's training points ({exc})")
                continue
            failures += [f"fold {k + 1}: {f}" for f in report.failures]
            notes += [f"fold {k + 1}: {f}" for f in report.notes]
            if report.sampled or report.uncovered:
                failures.append(f"fold {k + 1}: {report.sampled + report.uncovered} of its {report.unit} are not "
                                "certified: the criterion is not enclosed there")
            counted, top = counted + report.certified, max(top, report.max_gap_bound)
            if report.ok:
                try:
                    read.append(read_fold(arrays_k, fold_meta, X_tr, y[tr]))
                except Exception as exc:  # (verified, so read before: a failure here is no claim proven)
                    failures.append(f"fold {k + 1}: it cannot be read again ({type(exc).__name__}: {exc})")
    return failures, read, X_vals, y_vals, notes, counted, float(top)
