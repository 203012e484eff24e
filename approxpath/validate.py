"""Argument checks, once: every public entry point validates its input through these.

Each check raises :class:`~approxpath.errors.InputError` with a one-line message that names the
argument, what was given and the fix.  Numpy only (the verifier uses them).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np

from .errors import InputError, did_you_mean

__all__ = ["is_real", "is_finite", "is_count", "is_stored_count", "check_X", "check_y", "check_X_y", "binary_labels",
           "check_validation", "choice", "flag", "number_pair", "positive",
           "positive_range", "count", "finite_number", "check_gram_problem", "real_targets", "nonnegative_weights",
           "problem_instance", "as_training_labels", "file_name"]


def problem_instance(value, name="problem"):
    """``value``, or :class:`InputError` unless it is a problem instance (it has a ``bound``):
    a class, a registry name or None went deep into the run as an AttributeError.  For a class
    the message shows ``Cls(X, y, ...)``."""
    if isinstance(value, type) or not hasattr(value, "bound"):
        make = f"{value.__name__}(X, y, ...)" if isinstance(value, type) else "approxpath.get_problem(name)(X, y, ...)"
        raise InputError(f"{name} must be a problem instance, e.g. {make}; got {_one_line(value)}")
    return value


def file_name(what, value):
    """``value`` as a :class:`~pathlib.Path`, or :class:`InputError` unless it is a non-empty
    name: a str or an ``os.PathLike`` (``None``, a number or ``b"..."`` failed inside pathlib
    with a TypeError; ``""`` is the current folder).  ``what``: the file in the message, e.g.
    ``"an output file"``."""
    import os
    from pathlib import Path

    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise InputError(f"{what} must be a file name (a non-empty str or path), e.g. 'cert.npz'; got {value!r}")
    return Path(value)


def is_real(value):
    """True for a real number: Python or numpy int or float, or a 0-d numeric array (not a bool).
    NaN and inf are real numbers here (:func:`finite_number` refuses them)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def is_count(value):
    """True for a positive integer, Python or numpy (bool is an int subclass: ``workers=True``
    is a mistake, not 1)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1


def is_stored_count(value):
    """True for a count as JSON stores it (a certificate's ``meta``): a Python int >= 0, not a
    bool."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _float(value):
    """``float(value)`` of a real number, ±inf for a Python int beyond double precision (float()
    raises OverflowError there)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_finite(value):
    """True for a finite real number (:func:`is_real`; a Python int beyond double precision is not
    finite here: float() of it raises OverflowError)."""
    return is_real(value) and math.isfinite(_float(value))


def finite_number(name, value, what="a finite number"):
    """``value`` as a float, or :class:`InputError` unless it is a finite real number
    (:func:`is_real`; NaN and inf refused).  ``what``: what the message says it must be."""
    if not is_finite(value):
        raise InputError(f"{name} must be {what}; got {value!r}")
    return float(value)


def positive(name, value):
    """``value`` as a float, or :class:`InputError` unless it is a positive finite number (NaN,
    inf and ``value <= 0`` refused; for a value that is not a real number the message names its type)."""
    if not is_real(value):
        raise InputError(f"{name} must be a number; got {value!r} ({type(value).__name__}): pass e.g. {name}=0.1")
    v = finite_number(name, value, "a positive finite number")
    if not v > 0:
        raise InputError(f"{name} must be a positive finite number; got {value!r}")
    return v


def _one_line(value):
    """``repr(value)`` on one line (numpy wraps a long array's repr over several)."""
    return " ".join(repr(value).split())


def nonnegative_weights(name, value):
    """``value`` (a sequence of numbers, or text ``"1,0.5,2"``) as a tuple of finite nonnegative
    floats, or :class:`InputError`.  Text is split at commas or whitespace; an array is flattened.
    Refused: an empty entry in the text (``"1,,3"``), a bool or complex entry, an entry that is not
    a number, no entries, or an entry that is negative, NaN or inf."""
    if isinstance(value, str):
        items = re.split(r"\s*,\s*|\s+", value.strip()) if value.strip() else []
        if "" in items:  # ("1,,3": two numbers read, where three were meant)
            raise InputError(f"{name} has an empty entry: {value!r} (write e.g. 1,0.5,2)")
        value = items
    try:
        items = np.asarray(value, dtype=object).reshape(-1)
    except (TypeError, ValueError):
        items = ()
    if any(isinstance(v, (bool, np.bool_, complex, np.complexfloating)) for v in items):  # float() would take them
        raise InputError(f"{name} must be real numbers, not True/False or complex values; got {_one_line(value)}")
    try:
        w = np.asarray(value, dtype=float).reshape(-1)
    except OverflowError:  # (an int beyond double precision)
        w = np.array([np.inf])
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a list of nonnegative numbers (e.g. 1,0.5,2); "
                         f"got {_one_line(value)}") from None
    if w.size == 0 or not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise InputError(f"{name} must be a nonempty list of finite nonnegative numbers; got {_one_line(value)}")
    return tuple(float(v) for v in w)


def between(name, value, low, high):
    """``value`` as a float, or :class:`InputError` unless it is a finite number with
    ``low < value < high``."""
    if not is_real(value):
        raise InputError(f"{name} must be a number; got {value!r} ({type(value).__name__})")
    v = finite_number(name, value, f"a finite number in ({low:g}, {high:g})")
    if not low < v < high:
        raise InputError(f"{name} must be strictly between {low:g} and {high:g}; got {value!r}")
    return v


def number_pair(name, value, malformed=None):
    """``value`` as floats ``(lo, hi)``, or :class:`InputError` (``malformed``: its message)
    unless it is two real numbers (text such as ``"0.5"`` too: it is refused as ``eps`` is).
    ``malformed`` defaults to ``"NAME must be a pair (lo, hi) of numbers"`` (``; got ...`` follows)."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        lo = hi = None
    if not (is_real(lo) and is_real(hi)):
        raise InputError(f"{malformed or f'{name} must be a pair (lo, hi) of numbers'}; got {value!r}")
    return _float(lo), _float(hi)


def positive_range(name, value, malformed=None):
    """``value`` as floats ``(lo, hi)``, or :class:`InputError` unless ``0 < lo < hi < inf``
    (``malformed``: the message when it is not a pair of numbers, default ``"NAME must be a pair
    (lo, hi) of positive numbers"``; NaN is refused)."""
    lo, hi = number_pair(name, value, malformed or f"{name} must be a pair (lo, hi) of positive numbers")
    if not (0 < lo < hi < math.inf):
        raise InputError(f"{name} must satisfy 0 < lo < hi < inf; got {value!r}")
    return lo, hi


def count(name, value):
    """``value`` as an int, or :class:`InputError` unless it is a positive integer (:func:`is_count`)."""
    if not is_count(value):
        raise InputError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def flag(name, value):
    """``value`` as a bool, or :class:`InputError` unless it is one (``"no"`` or NaN would be
    true in an ``if``: a silent change of meaning).  A ``numpy.bool_`` is one; 0 and 1 are not."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def choice(name, value, choices):
    """``value`` if it is one of ``choices``, else :class:`InputError` naming the closest
    (:func:`~approxpath.errors.did_you_mean`) and listing ``choices``."""
    if value not in choices:
        raise InputError(f"unknown {name} {value!r}{did_you_mean(value, choices)} (choose one of "
                         f"{', '.join(map(str, choices))})")
    return value


def check_X(X, name="X"):
    """``X`` as a 2-D float array (a 1-D array is one feature; a scipy sparse matrix is densified:
    kernels are dense), or :class:`InputError` when it holds text, complex numbers or other
    objects, or NaN/inf; the messages call it ``name``.  Shapes: ``X`` (n, d) or (n,), returned
    as (n, d) or (n, 1).  Also refused: ragged rows, more than 2 dimensions, no feature columns;
    the NaN/inf message names the first one's row and column."""
    if type(X).__module__.startswith("scipy.sparse") and hasattr(X, "toarray"):
        X = X.toarray()
    try:
        X = np.asarray(X)
    except ValueError as exc:  # ragged rows
        raise InputError(f"{name} must be numeric: an (n_samples, n_features) array of real numbers ({exc})") from None
    if X.dtype.kind == "c":
        raise InputError(f"{name} must be numeric: real numbers, got complex values (dtype {X.dtype}); "
                         f"pass {name}.real if the imaginary parts are 0")
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be numeric: an (n_samples, n_features) array of real numbers ({exc}); "
                         "convert or drop the non-numeric columns first") from None
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise InputError(f"{name} must be a 2-D array (n_samples, n_features); got shape {X.shape}")
    if X.shape[1] == 0:
        raise InputError(f"{name} has no feature columns (shape {X.shape}): a data file of labels only? "
                         "every sample needs its features")
    if not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise InputError(f"{name} contains NaN or inf (first at row {bad[0]}, column {bad[1]}): clean or impute the "
                         "data first")
    return X


# The largest |y| must be at least this: its square (every objective holds ||y||^2 or its terms)
# then stays a normal number by a factor 1/u, room for the gaps below it, so that roundoff is
# relative, as the bounds' allowances assume (subnormal y^2 made klasso's bound fall a few
# subnormal steps below zero: y ~ 1e-159)
_SMALLEST_Y = float(np.sqrt(np.finfo(float).tiny / np.finfo(float).eps))


def check_y(y):
    """``y`` as a 1-D array, checked entry by entry where numpy's dtype does not tell: no None,
    no complex numbers, not numbers and text mixed (a list such as ``['a', 1]`` becomes text in
    numpy), no NaN/inf.  Object arrays of numbers come back as float.  ``y``: shape (n,), targets
    or class labels (numbers, or text).  :class:`InputError` also when ``y`` is not 1-D, or for
    float targets whose squares overflow, or underflow (a nonzero largest :math:`|y|` below
    :math:`\\sqrt{\\text{tiny}/\\varepsilon}`, about 1e-146)."""
    given, y = y, np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"y must be a 1-D array of length n_samples; got shape {y.shape}")
    if y.dtype.kind == "c":
        raise InputError(f"y must be real numbers (or class labels); got complex values (dtype {y.dtype}): "
                         "pass y.real if the imaginary parts are 0")
    if y.dtype.kind in "OUS" and not (y.dtype.kind in "US" and isinstance(given, np.ndarray)):
        y = _entries(given)
    if y.dtype.kind in "f" and not np.all(np.isfinite(y)):
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise InputError(f"y contains NaN or inf (first at index {bad}): drop or impute those samples")
    top = float(np.max(np.abs(y))) if y.dtype.kind in "f" and y.size else 0.0
    with np.errstate(over="ignore"):  # every objective holds ||y||^2 or its terms
        overflows = y.dtype.kind in "f" and not np.isfinite(np.dot(y, y))
    if overflows:
        raise InputError(f"y's squares overflow double precision (largest |y| = {top:.3g}): scale the targets")
    if 0.0 < top < _SMALLEST_Y:
        raise InputError(f"y's squares underflow double precision (largest |y| = {top:.3g}): scale the targets")
    return y


def real_targets(who, y):
    """``y`` (checked by :func:`check_y`) as a float array, or :class:`InputError` naming the
    problem ``who`` where the targets are not numbers (class labels given to a regression)."""
    try:
        return np.asarray(y, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{who} needs real targets y; got dtype {np.asarray(y).dtype}") from None


def _entries(given):
    """An object or text ``y`` checked entry by entry (see :func:`check_y`)."""
    entries = np.asarray(given, dtype=object).reshape(-1)
    kinds = {}
    for i, v in enumerate(entries):
        if v is None:
            raise InputError(f"y contains None (first at index {i}): drop or impute those samples")
        if is_real(v) or isinstance(v, (bool, np.bool_)):
            kind = "number"
        elif isinstance(v, (complex, np.complexfloating)):
            raise InputError(f"y must be real numbers (or class labels); got the complex {v!r} at index {i}")
        elif isinstance(v, (str, bytes, np.str_, np.bytes_)):
            kind = "text"
        else:
            raise InputError(f"y must be real numbers or class labels; got {type(v).__name__} {v!r} at index {i}")
        kinds.setdefault(kind, set()).add(type(v).__name__)
    if len(kinds) > 1:
        names = sorted(set().union(*kinds.values()))
        raise InputError(f"y mixes value types ({', '.join(names)}): use one kind for all targets or labels, "
                         "all numbers or all strings")
    return np.asarray(entries, dtype=float) if "number" in kinds else np.asarray(given)


def check_X_y(X, y):
    """``(X, y)`` checked (:func:`check_X`, :func:`check_y`) and of matching length, n >= 2:
    arrays (n, d) and (n,), or :class:`InputError` (as those two, rows of ``X`` and entries of
    ``y`` that differ in number, or fewer than 2 samples)."""
    X, y = check_X(X), check_y(y)
    if X.shape[0] != y.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries: pass one target per row of X")
    if X.shape[0] < 2:
        raise InputError(f"need at least 2 samples, got {X.shape[0]}")
    return X, y


def check_validation(X_val, y_val, d, optional=False):
    """``(X_val, y_val)``: validation data as float arrays (m, d) and (m,), m >= 1, finite; a 1-D
    ``X_val`` is one feature (``d``: the training features' number of columns).  ``optional``:
    both may be None (returned as they are).  :class:`InputError` for one without the other,
    neither where not ``optional``, text, other shapes, or NaN/inf."""
    if (X_val is None) != (y_val is None):
        raise InputError("validation data needs both X_val and y_val (or neither)")
    if X_val is None:
        if optional:
            return None, None
        raise InputError("pass validation data X_val and y_val")
    try:
        X_val, y_val = np.asarray(X_val, dtype=float), np.asarray(y_val, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"X_val and y_val must be numeric arrays ({exc}); map class labels to numbers "
                         "first") from None
    X_val = X_val[:, None] if X_val.ndim == 1 else X_val
    if X_val.ndim != 2 or y_val.ndim != 1 or X_val.shape != (y_val.size, d) or y_val.size == 0:
        raise InputError(f"validation data must be X_val (m, {d}) and y_val (m,) with the same m >= 1; got "
                         f"{X_val.shape} and {y_val.shape}")
    for name, v in (("X_val", X_val), ("y_val", y_val)):
        if not np.all(np.isfinite(v)):
            raise InputError(f"{name} contains NaN or inf (first at flat index {int(np.flatnonzero(~np.isfinite(v))[0])}):"
                             " clean or impute the validation data first")
    return X_val, y_val


def binary_labels(y, who="kernel_svm"):
    """``(labels, y_pm)``: the two classes of ``y`` (sorted) and ``y`` as -1/+1 floats.

    ``{-1, +1}`` is used as is; any other two labels are mapped to -1 (the smaller) and +1 (the
    larger) with a warning.  :class:`InputError` unless there are exactly two classes.  Shapes:
    ``y`` and ``y_pm`` (n,), ``labels = numpy.unique(y)`` (2,).  ``who``: the problem's name in the
    message and in the warning (a ``UserWarning`` that says which label became -1 and which +1).
    """
    values = np.unique(y)
    if values.size != 2:
        raise InputError(f"{who} needs exactly two classes in y; found {values.size} "
                         f"({', '.join(map(str, values[:5]))}{', ...' if values.size > 5 else ''})")
    try:
        if set(values.astype(float).tolist()) == {-1.0, 1.0}:
            return values, np.asarray(y, dtype=float)
    except (TypeError, ValueError, OverflowError):
        pass
    low, high = values.tolist()  # Python scalars: 0, not np.int64(0)
    warnings.warn(f"{who}: labels {low!r} -> -1 and {high!r} -> +1", stacklevel=4)
    return values, as_training_labels(y, values)[0]


def as_training_labels(y, labels):
    """``(y_pm, unknown)``: ``y`` as -1/+1 floats by the two training classes ``labels`` (sorted,
    as :func:`binary_labels` gives them: ``labels[1]`` to +1, anything else to -1), and the
    values of ``y`` that are neither class (sorted; empty when there are none), for the caller
    to refuse in its own words.  Shapes: ``y`` and ``y_pm`` (m,), ``labels`` (2,)."""
    y = np.asarray(y)
    return np.where(y == labels[1], 1.0, -1.0), np.unique(y[~np.isin(y, labels)])


def check_gram_problem(who, K, y, lam):
    """``(K, y, lam)`` of a problem on a Gram matrix, as float arrays (n, n), (n,) and a float,
    or :class:`InputError` naming ``who`` unless K is square, y matches, both are finite and
    ``lam`` is a positive finite number (that message names ``lam``, not ``who``)."""
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or y.shape != (K.shape[0],):
        raise InputError(f"{who} needs a square K (n, n) and y (n,); got K {K.shape}, y {y.shape}")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(y))):
        raise InputError(f"{who} needs finite K and y")
    if not (is_real(lam) and np.isfinite(lam) and lam > 0):
        raise InputError(f"lam must be a positive finite number; got {lam!r}")
    return K, y, float(lam)
