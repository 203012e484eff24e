"""What a verification checks a certificate against: the data (given or carried by the file)
and the problem's certificate side built with the file's options.

:func:`bound_from_meta` builds the problem's :class:`~approxpath.bound.Bound` (numpy only: no
solver, no search code) on the data with the options the file records, and :func:`check_data`
refuses data whose sha256 is not the file's; :func:`kernel_failures` compares the kernel the file
records with the one the options build.  :class:`BadOptions` is a failure of the file,
:class:`DataMismatch` one of the data.
"""

from __future__ import annotations

from ..data import data_sha256
from ..errors import InputError
from .format import DATA_FIELDS

__all__ = ["BadOptions", "DataMismatch", "bound_from_meta", "carried_data_failures", "check_data", "embedded_data",
           "given_data", "kernel_failures", "shape_of"]


class BadOptions(InputError):
    """The options a file records are outside the problem's domain."""


class DataMismatch(InputError):
    """The data given are not the data a certificate was computed on (its sha256 differs)."""


def given_data(X, y):
    """:class:`InputError` unless both of ``X, y`` are given or neither (one alone was ignored:
    the certificate was checked on its own data while the caller believed it was on theirs)."""
    if (X is None) != (y is None):
        raise InputError(f"{'y' if y is None else 'X'} is missing: pass both X and y, or neither (the data the "
                         "certificate carries)")


def embedded_data(arrays):
    """``(X, y)`` a certificate carries (``data_X`` of shape ``(n, d)``, ``data_y`` of shape
    ``(n,)``), or None (also where ``arrays`` is None)."""
    if arrays is None or not set(DATA_FIELDS) <= set(arrays):
        return None
    return arrays["data_X"], arrays["data_y"]


def carried_data_failures(arrays, meta):
    """``["the data the certificate carries do not match its data_sha256"]`` where the data it
    carries (:func:`embedded_data`) are not those of ``meta["data_sha256"]``, else ``[]``."""
    carried = embedded_data(arrays)
    if carried is not None and data_sha256(*carried) != meta.get("data_sha256"):
        return ["the data the certificate carries do not match its data_sha256"]
    return []


def bound_from_meta(meta, X, y):
    """The certificate side of the file's problem on data ``X, y`` (checked by
    :func:`~approxpath.validate.check_X_y` and against the stored hash), with the file's options:
    an instance of the problem's :class:`~approxpath.bound.Bound`.

    Raises
    ------
    InputError
        Bad data, an unknown problem, options outside their domains (a failure of the file, not
        of the data: the message starts with "options"), or data that do not match the file.
        The unknown problem and the options raise ``BadOptions``, the data that do not match
        (or a file without ``data_sha256``) :class:`DataMismatch`: both subclasses.
    """
    from ..registry import get_bound
    from ..validate import check_X_y

    X, y = check_X_y(X, y)
    try:
        cls = get_bound(meta["problem"])
    except KeyError as exc:
        raise BadOptions(exc.args[0]) from None
    unknown = sorted(set(meta["options"]) - set(cls.OPTIONS) - {"parameter"})
    if unknown:  # (a keyword of the constructor that is no option, "X" or "cache": a crash, or unchecked)
        raise BadOptions(f"options: {unknown[0]!r} is not an option of {meta['problem']} (its options: "
                         f"{', '.join(sorted(cls.OPTIONS) + ['parameter'])})")
    try:
        bound = cls(X, y, **meta["options"])
    except InputError as exc:
        raise BadOptions(f"options: {exc}") from None
    return check_data(meta, bound)


def check_data(meta, model):
    """``model`` (a bound or a problem, built on the data) if its preprocessed arrays are the
    ones the certificate ``meta`` was computed on (their sha256), else an :class:`InputError`."""
    digest = data_sha256(model.X, model.y)
    if meta.get("data_sha256") is None:
        raise DataMismatch("the certificate records no 'data_sha256': no data can be checked against it")
    if digest != meta["data_sha256"]:
        raise DataMismatch(
            "the data do not match the certificate (sha256 of the preprocessed arrays differs): "
            f"certificate {meta.get('data_sha256')}, data {digest}; check the file and --preprocess"
        )
    return model


def kernel_failures(bound, meta):
    """``(failures, notes)`` of the kernel a file records against the one its options build here:
    the family's definition (``kernel``) must match, and the sha256 of :math:`D`
    (``distances_sha256``, from 0.4.0) must match for a precomputed :math:`D` (data); a computed
    :math:`D` whose last bits differ from the writer's (another scipy, another summation order)
    is only noted, since every bound allows for the rounding of :math:`D`.  Files without the
    fields (0.3.2 and older) are gaussian and have nothing to compare, nor has a ``bound`` without
    ``kernel_meta``."""
    describe = getattr(bound, "kernel_meta", None)
    if describe is None or ("kernel" not in meta and "distances_sha256" not in meta):
        return [], []
    mine = describe()
    failures, notes = [], []
    if "kernel" in meta and meta["kernel"] != mine["kernel"]:
        failures.append(f"the file's kernel {meta['kernel']!r} is not the one its options build ({mine['kernel']!r})")
    recorded = meta.get("distances_sha256")
    if recorded is not None and recorded != mine["distances_sha256"]:
        if bound.family == "precomputed":
            failures.append("the precomputed D differs from the one the certificate was written with (sha256)")
        else:
            notes.append(f"the {bound.family} distances computed here differ in their last bits from the writer's "
                         "(sha256); the bounds allow for that rounding")
    return failures, notes


def shape_of(X, y):
    """``(n, d)`` of the data ``X, y`` as :func:`~approxpath.validate.check_X_y` makes them
    (:class:`InputError` for data that are no data)."""
    from ..validate import check_X_y

    X, y = check_X_y(X, y)
    return X.shape
