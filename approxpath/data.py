"""Data: LIBSVM and CSV readers (numpy only, errors naming the file and the line), the paper's
preprocessing, seeded synthetic sets, hashes, and the provenance of arrays read here.

The demo and the default tests run on the seeded generators below.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .errors import InputError

__all__ = [
    "PREPROCESSING",
    "FORMATS",
    "load_data",
    "read_text",
    "load_distances",
    "provenance",
    "preprocess",
    "make_sinc",
    "make_friedman1",
    "make_classification",
    "data_sha256",
]

#: Names accepted by :func:`preprocess` (and the CLI's ``--preprocess``).
PREPROCESSING = ("none", "global-minmax")
#: Formats :func:`load_data` reads.
FORMATS = ("libsvm", "csv")
# Arrays read by load_data (and preprocessed): the last few are remembered by content.
_REMEMBERED = 32
_PROVENANCE = OrderedDict()  # key of X -> (provenance dict, y as read)


def _key(X):
    X = np.ascontiguousarray(X, dtype=np.float64)
    return hashlib.sha256(repr(X.shape).encode() + X.tobytes()).hexdigest()


def _remember(X, y, info):
    _PROVENANCE[_key(X)] = (info, np.array(y, copy=True))
    while len(_PROVENANCE) > _REMEMBERED:
        _PROVENANCE.popitem(last=False)


def provenance(X):
    """Where the features ``X`` came from: ``(info, y)`` with ``info`` a dict (``data_file``,
    ``format``, ``preprocessing``) and ``y`` the targets read with them, when ``X`` (by content)
    was read by :func:`load_data` and possibly :func:`preprocess`-ed since; else None."""
    got = _PROVENANCE.get(_key(X))
    return None if got is None else (dict(got[0]), got[1])


def read_text(path, what, hint):
    """The UTF-8 text of the file ``path`` (a byte-order mark is not part of it): ``OSError``
    naming the ``what`` file when it cannot be read, :class:`InputError` naming the line of the
    first byte that is not UTF-8, with ``hint`` (what the file should be)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise OSError(exc.errno, f"cannot read {what} file {str(path)!r}: {exc.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"{str(path)!r}, line {line}: not UTF-8 text (a binary file?); {hint}") from None


def load_data(path, format="libsvm", n_features=None):
    """Read a data file into a dense ``X`` (n, d) and ``y`` (n,).

    The file is remembered (:func:`provenance`): a path computed on these arrays (or on
    :func:`preprocess` of them) records the file, its format and the preprocessing in its
    certificate, so ``approxpath verify cert.npz`` finds and prepares the data by itself.

    Parameters
    ----------
    path : str or Path
    format : {"libsvm", "csv"}
        ``libsvm``: sparse ``label idx:val ...`` lines (indices from 1, or from 0 when a 0
        appears; ``#`` starts a comment). ``csv``: comma-separated numbers, one sample per row,
        the target in the last column. The first non-blank line is a header when a cell of it
        is not a number and none of those cells looks like a mistyped number (starts with a
        digit, a sign and a digit or ``.``, or ``.`` and a digit, as ``1e``, ``0x1`` or
        ``1.2.3``): a first row with such a cell is refused, not skipped as a header. Names
        such as ``x1,x2,y`` or pandas' ``0,1,y`` make a header; a UTF-8 byte-order mark is not
        part of it.
    n_features : int, optional
        LIBSVM: the number of columns (the highest index present is used otherwise). CSV: the
        file's feature columns must be this many (a check; the columns give ``d`` anyway).

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        A line that is not of the format (the message names the file, the line and the fix),
        a CSV file whose feature columns are not ``n_features``, or a LIBSVM index that would
        make a dense ``X`` larger than the memory available.
    """
    from .validate import choice

    path = Path(path)
    choice("data format", format, FORMATS)
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist" if not path.exists()
                                else f"data file {str(path)!r} is not a regular file")
    text = read_text(path, "data", f"pass a {format} text file")
    if n_features is not None:
        from .validate import count

        count("n_features", n_features)
    if format == "libsvm":
        X, y = _read_libsvm(text, str(path), n_features)
    else:
        X, y = _read_csv(text, str(path))
        if n_features is not None and n_features != X.shape[1]:
            raise InputError(f"{str(path)!r} has {X.shape[1]} feature column(s) (the target is the last column), "
                             f"not the {n_features} asked for; a CSV file's columns give the features")
    _remember(X, y, dict(data_file=str(path), format=format, preprocessing="none"))
    return X, y


def load_distances(path):
    """The matrix :math:`D` (n, n) of ``kernel="precomputed"`` from a numpy ``.npy`` file.

    Only a regular file is opened (a pipe or a device would block or never end), its header is
    read before anything else and the array must fit in memory.

    Raises
    ------
    FileNotFoundError
        No such file.
    InputError
        Not a regular file, not a ``.npy`` file of one 2-D array of real numbers, or larger than
        the memory available.
    """
    from .memory import Estimate, check_fits

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"distances file {str(path)!r} does not exist" if not path.exists()
                                else f"distances file {str(path)!r} is not a regular file (a folder, a pipe or a "
                                "device): save D with numpy.save and pass that file")
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
            if len(shape) != 2 or dtype.kind not in "iuf" or dtype.hasobject:
                raise InputError(f"{str(path)!r} holds an array of shape {shape} and dtype {dtype}: --distances needs "
                                 "the n x n matrix D of real numbers")
            check_fits(Estimate(((f"D of {shape[0]} x {shape[1]}", 8.0 * shape[0] * shape[1]),)),
                       f"reading {str(path)!r}", "use fewer samples or a machine with more memory")
            fh.seek(0)
            return np.asarray(np.lib.format.read_array(fh, allow_pickle=False), dtype=float)
    except (ValueError, EOFError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{str(path)!r} is not a numpy .npy file of D ({exc}): save D with numpy.save") from None


def _bad_line(file, k, line, what, fix):
    shown = line if len(line) <= 40 else line[:37] + "..."
    return InputError(f"{file!r}, line {k}: {what} ({shown!r}); {fix}")


def _read_libsvm(text, file, n_features):
    """``(X, y)`` of LIBSVM text; indices 1-based unless a 0 appears (as scikit-learn's reader)."""
    from .memory import Estimate, check_fits

    labels, rows, cols, vals = [], [], [], []
    top, zero, widest = -1, False, (0, 0)
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
            if not sep or not name.isdigit():
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
            zero |= index == 0
            if index > top:
                top, widest = index, (k, line)
            rows.append(len(labels))
            cols.append(index)
            vals.append(v)
        labels.append(label)
    if not labels:
        raise InputError(f"{file!r} holds no samples (empty, or only comments)")
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
    return X, np.asarray(labels, dtype=float)


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


def _is_header(line, k, file):
    """True when the first non-blank ``line`` (line ``k``) is a header, False when it is data.

    A header holds names: a cell that fails to parse but looks like a number (``1e``, ``0x1``,
    ``1.2.3``) is a typo in the first sample, which skipping as a header would silently drop,
    so it is refused. Cells that parse (pandas writes ``0,1,y`` for integer-named columns) do
    not make a line data by themselves.
    """
    cells = [c.strip() for c in line.split(",")]
    cells[0] = cells[0].lstrip("\ufeff").strip()  # a byte-order mark is not data
    bad = []
    for j, cell in enumerate(cells, start=1):
        try:
            float(cell)
        except ValueError:
            bad.append((j, cell))
    for j, cell in bad:
        if _looks_numeric(cell):
            shown = cell if len(cell) <= 40 else cell[:37] + "..."
            raise InputError(f"{file!r}, line {k}, column {j}: {shown!r} is not a number (a header line holds "
                             "names, not numbers); fix that cell")
    return bool(bad)


def _read_csv(text, file):
    """``(X, y)`` of CSV text (the target last; an optional header line).

    The first non-blank line is a header when a cell of it is not a number and no such cell
    looks like a mistyped number (:func:`_is_header`, which refuses that line otherwise).
    """
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise InputError(f"{file!r} holds no samples (empty)")
    skip = first + 1 if _is_header(lines[first], first + 1, file) else first
    body = lines[skip:]
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
    if data.size == 0:
        raise InputError(f"{file!r} holds no samples (a header only)")
    if data.shape[1] < 2:
        raise InputError(f"{file!r}: a CSV file needs feature columns and a last target column; got one column")
    if not np.all(np.isfinite(data)):
        k = int(np.argwhere(~np.isfinite(data))[0][0])
        row = [line for line in body if line.strip()][k]
        raise _bad_line(file, skip + 1 + body.index(row), row, "a cell is NaN or inf", "clean or impute the data first")
    return data[:, :-1], data[:, -1]


def preprocess(X, method="none"):
    """Scale features.

    ``global-minmax`` is the scaling of the paper's own code:
    :math:`X \\leftarrow (X - \\min X) / \\max(X - \\min X)` over *all* entries, so the
    geometry (and hence the bandwidth axis) is only rescaled, never distorted per feature.
    The result of scaling an ``X`` read by :func:`load_data` remembers the file and the method
    (:func:`provenance`), which a certificate then records.
    """
    from .validate import choice

    choice("preprocessing", method, PREPROCESSING)
    X = np.asarray(X, dtype=float)
    if method == "none":
        return X
    source = provenance(X)
    shifted = X - X.min()
    top = shifted.max()
    out = shifted / top if top > 0 else shifted
    if source is not None and source[0]["preprocessing"] == "none":  # remembered: the file and this step
        _remember(out, source[1], dict(source[0], preprocessing=method))
    return out


def make_sinc(n=100, low=-4.0, high=4.0, noise=0.1, outliers=0.0, outlier_scale=2.0, seed=0):
    """Noisy samples of :math:`\\operatorname{sinc}(x) = \\sin(\\pi x)/(\\pi x)`.

    Parameters
    ----------
    n : int
        Number of points, drawn uniformly on ``[low, high]``.
    noise : float
        Standard deviation of the Gaussian noise added to every target.
    outliers : float
        Fraction of points (rounded down) whose target is replaced by a gross error of
        size ``outlier_scale`` times a uniform draw on [-1, 1] plus the sign of that draw.
    seed : int

    Returns
    -------
    X : ndarray of shape (n, 1)
    y : ndarray of shape (n,)
    """
    from .validate import count, is_real

    n = count("n", n)
    if not (is_real(outliers) and 0.0 <= outliers <= 1.0):
        raise InputError(f"outliers is a fraction of the points, from 0 to 1; got {outliers!r}")
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(low, high, n))
    y = np.sinc(x) + noise * rng.standard_normal(n)  # np.sinc is sin(pi x)/(pi x)
    k = int(outliers * n)
    if k:
        idx = rng.choice(n, size=k, replace=False)
        u = rng.uniform(-1.0, 1.0, k)
        y[idx] = np.sinc(x[idx]) + outlier_scale * (u + np.sign(u))
    return x[:, None], y


def make_friedman1(n=150, noise=0.0, seed=0):
    r"""Friedman's first regression problem with five irrelevant features (the feature path's
    test set): :math:`y = 10\sin(\pi x_1 x_2) + 20(x_3 - 1/2)^2 + 10x_4 + 5x_5 + \text{noise}`,
    ``X`` of shape (n, 10) uniform on [0, 1], ``y`` of shape (n,); ``seed`` an int or a numpy
    ``Generator`` (draws continue from it: a training, a validation and a test set)."""
    from .validate import count

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(count("n", n), 10))
    f = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return X, f + noise * rng.standard_normal(n)


def make_classification(n=80, d=2, separation=1.0, seed=0):
    """Two overlapping Gaussian classes labelled -1 and +1 (the demo's built-in data).

    Returns ``X`` of shape (n, d) scaled into [0, 1] and ``y`` of shape (n,).
    """
    from .validate import count

    n, d = count("n", n), count("d", d)
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    centers = np.zeros((n, d))
    centers[:, 0] = 0.5 * separation * y
    X = centers + rng.standard_normal((n, d))
    return preprocess(X, "global-minmax"), y


def data_sha256(X, y):
    """sha256 of the (preprocessed) arrays as C-ordered float64 bytes, shapes included."""
    h = hashlib.sha256()
    for a in (np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)):
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()
