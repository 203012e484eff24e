"""The text formats :func:`approxpath.data.load_data` reads: LIBSVM (sparse ``label idx:val``
lines) and CSV (numbers, the target last, one optional header line), with errors naming the
file, the line and the fix.  Numpy only: the verifier reads data through them."""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["read_libsvm", "read_csv"]


def _bad_line(file, k, line, what, fix):
    shown = line if len(line) <= 40 else line[:37] + "..."
    return InputError(f"{file!r}, line {k}: {what} ({shown!r}); {fix}")


def read_libsvm(text, file, n_features, zero_based="auto"):
    """``(X, y, zero_based)`` of LIBSVM text; indices 1-based unless a 0 appears (as
    scikit-learn's reader: ``zero_based="auto"``) or ``zero_based`` is True (False: an index 0
    is refused).  The third item says which was used.

    A line is ``label index:value ...`` (``#`` starts a comment; ``qid:...`` is skipped).  ``X``
    (n, d) is dense (entries not in the file are 0), ``d = n_features`` (at least the highest
    index's; None: the highest index's); ``y`` (n,): the labels.  :class:`InputError`, naming
    ``file`` and the line, for a line not of the format (a label or value that is not a finite
    number, a token that is not ``index:value``, an index of 2^31 or more or given twice in a
    line), an index 0 with ``zero_based=False``, an index beyond ``n_features``, no samples, or a
    dense ``X`` larger than the memory available.
    """
    from .memory import Estimate, check_fits

    labels, rows, cols, vals = [], [], [], []
    top, first_zero, widest = -1, None, (0, 0)
    for k, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        tokens = body.split()
        try:
            label = float(tokens[0])
        except ValueError:
            hint = "a CSV file? pass --format csv (Python: format='csv')" if "," in tokens[0] else \
                "a LIBSVM line is 'label index:value ...'"
            raise _bad_line(file, k, line, "the label is not a number", hint) from None
        if not np.isfinite(label):
            raise _bad_line(file, k, line, "the label is NaN or inf", "drop or fix that sample")
        seen = set()
        for tok in tokens[1:]:
            name, sep, value = tok.partition(":")
            if name == "qid":
                continue
            if not sep or not (name.isascii() and name.isdigit()):  # ("²" and "١" are digits to str)
                raise _bad_line(file, k, line, f"{tok!r} is not index:value", "a LIBSVM line is 'label index:value ...'")
            index = int(name)
            if index >= 2**31:
                raise _bad_line(file, k, line, f"feature index {index} is too large (>= 2^31)", "check the file")
            try:
                v = float(value)
            except ValueError:
                raise _bad_line(file, k, line, f"the value of feature {index} is not a number", "fix that entry") from None
            if not np.isfinite(v):
                raise _bad_line(file, k, line, f"the value of feature {index} is NaN or inf", "clean or impute it")
            if index in seen:
                raise _bad_line(file, k, line, f"feature index {index} appears twice", "keep one value per index")
            seen.add(index)
            if index == 0 and first_zero is None:
                first_zero = (k, line)
            if index > top:
                top, widest = index, (k, line)
            rows.append(len(labels))
            cols.append(index)
            vals.append(v)
        labels.append(label)
    if not labels:
        raise InputError(f"{file!r} holds no samples (empty, or only comments)")
    if zero_based is False and first_zero is not None:
        raise _bad_line(file, *first_zero, "feature index 0 where indices count from 1 (as the training file's do)",
                        "number this file's features as the training file's")
    zero = first_zero is not None if zero_based == "auto" else bool(zero_based)
    shift = 0 if zero else 1
    width = top + 1 - shift if top >= 0 else 0
    if n_features is not None:
        if n_features < width:
            k, line = widest
            raise _bad_line(file, k, line, f"feature index {top} exceeds n_features = {n_features}",
                            "raise --n-features or check the file")
        width = int(n_features)
    n = len(labels)
    where = f"{file!r}, line {widest[0]}: feature index {top}" if top >= 0 else repr(file)
    check_fits(Estimate(((f"a dense X of {n} rows x {width} columns", 8.0 * n * width),)),
               f"{where} makes a dense X that", "is the index right? approxpath works on dense features: "
               "drop or re-number the unused ones")
    X = np.zeros((n, width))
    if vals:
        X[np.asarray(rows), np.asarray(cols) - shift] = vals
    return X, np.asarray(labels, dtype=float), zero


# Spellings of non-finite numbers float accepts (any case, either sign).
_NON_FINITE = frozenset(("nan", "inf", "infinity"))
_DIGITS = frozenset("0123456789")


def _looks_numeric(cell):
    """Whether a stripped CSV cell is meant as a number, parsed or not: it starts with a digit, a
    sign and a digit or ``.``, or ``.`` and a digit, or is a NaN/inf spelling float accepts."""
    signed = cell[:1] in ("+", "-")
    body = cell[1:] if signed else cell
    if body.lower() in _NON_FINITE:
        return True
    if body[:1] == ".":
        return signed or body[1:2] in _DIGITS  # ".x" may be a name, "-." is not
    return body[:1] in _DIGITS  # not str.isdigit: "²x" is a name


#: Cells that mark a missing value, not a column's name (compared in lower case, quotes removed):
#: a first line whose only cells that are not numbers are these is a sample with a gap.
_MISSING = frozenset(("", "na", "n/a", "null", "none", "?", "-", "--", "."))


def _is_header(line, k, file):
    """True when the first non-blank ``line`` (line ``k``) is a header, False when it is data.

    A header holds names: a cell that fails to parse but looks like a number (``1e``, ``0x1``,
    ``1.2.3``) is a typo in the first sample, which skipping as a header would silently drop,
    so it is refused; a line whose cells are numbers and missing-value marks (``1,NA``,
    ``1,-``, ``1,``) is a sample with a gap, data (refused as such), not a header.  A line of
    names and numbers is refused (``1,2,yes``, ``1,missing,1``: a sample with a typo, which
    skipping would drop), unless its numbers are the positions of their columns from 0, as
    pandas names integer-named columns (``0,1,y``).
    """
    cells = [c.strip() for c in line.split(",")]
    cells[0] = cells[0].lstrip("\ufeff").strip()  # a byte-order mark is not data
    bad, numbers = [], []
    for j, cell in enumerate(cells, start=1):
        try:
            numbers.append((j, float(cell)))
        except ValueError:
            bad.append((j, cell))
    for j, cell in bad:
        if _looks_numeric(cell):
            shown = cell if len(cell) <= 40 else cell[:37] + "..."
            raise InputError(f"{file!r}, line {k}, column {j}: {shown!r} is not a number (a header line holds "
                             "names, not numbers); fix that cell")
    names = [cell for _, cell in bad if cell.strip("\"'").lower() not in _MISSING]
    if names and any(value != j - 1 for j, value in numbers):  # (pandas names columns 0, 1, ... by position)
        raise _bad_line(file, k, line, "numbers and names on the first line",
                        "a header line holds names only (pandas' 0,1,...,y is one: write with index=False) and a "
                        "sample numbers only: fix that line")
    return bool(names)


def read_csv(text, file):
    """``(X, y)`` of CSV text (the target last; an optional header line).

    The first non-blank line is a header when a cell of it is not a number and no such cell
    looks like a mistyped number (:func:`_is_header`, which refuses that line otherwise).  A
    line that starts with ``#`` is a comment; a ``#`` inside a line is refused.  ``X`` (n, d):
    the columns but the last; ``y`` (n,): the last.  :class:`InputError` (naming ``file``, and the
    line where it can) also for no samples (an empty file, a header only), a header whose names
    do not match the rows' cells, a cell that is not a number, or NaN or inf, rows of unequal
    length, fewer than two columns, or a first line of numbers and names.
    """
    lines = text.splitlines()
    if "#" in text:  # lines that start with '#' are comments (numpy's savetxt writes its header so)
        for k, line in enumerate(lines):
            if line.lstrip("\ufeff \t").startswith("#"):
                lines[k] = ""  # (blank: the lines keep their numbers)
            elif "#" in line:  # (numpy's reader would drop the rest of the line, silently: `-1#,9` read as -1)
                raise _bad_line(file, k + 1, line, "a '#' inside a line", "a comment takes a line of its own, "
                                "starting with '#'")
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise InputError(f"{file!r} holds no samples (empty)")
    skip = first + 1 if _is_header(lines[first], first + 1, file) else first
    body = lines[skip:]
    row = next((k for k in range(skip, len(lines)) if lines[k].strip()), None)
    if row is None:
        raise InputError(f"{file!r} holds no samples (a header only)")
    if skip > first and lines[row].count(",") != lines[first].count(","):
        names, cells = lines[first].count(",") + 1, lines[row].count(",") + 1
        raise InputError(f"{file!r}, line {first + 1}: a header of {names} names over rows of {cells} cells (line "
                         f"{row + 1}); give every column one name, or drop the header line")
    try:
        data = np.loadtxt(body, delimiter=",", ndmin=2, dtype=float)
    except ValueError:
        width = None
        for k, line in enumerate(body, start=skip + 1):
            if not line.strip():
                continue
            cells = line.split(",")
            try:
                [float(c) for c in cells]
            except ValueError:
                raise _bad_line(file, k, line, "a cell is not a number",
                                "a CSV file needs numbers only (one optional header line)") from None
            if width is not None and len(cells) != width:
                raise _bad_line(file, k, line, f"{len(cells)} cells where the rows above have {width}",
                                "give every row the same columns")
            width = len(cells)
        raise InputError(f"{file!r}: not a CSV file of numbers; a CSV file needs numbers only (one optional "
                         "header line)") from None
    if data.shape[1] < 2:
        raise InputError(f"{file!r}: a CSV file needs feature columns and a last target column; got one column")
    if not np.all(np.isfinite(data)):
        k = int(np.argwhere(~np.isfinite(data))[0][0])
        row = [line for line in body if line.strip()][k]
        raise _bad_line(file, skip + 1 + body.index(row), row, "a cell is NaN or inf", "clean or impute the data first")
    return data[:, :-1], data[:, -1]
