"""Data: files read (LIBSVM and CSV, :mod:`approxpath.text_formats`; numpy only, errors naming
the file and the line), the paper's preprocessing, seeded synthetic sets, hashes, and the
provenance of arrays read here.

The demo and the default tests run on the seeded generators below.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .errors import InputError
from .text_formats import read_csv, read_libsvm

__all__ = [
    "PREPROCESSING",
    "FORMATS",
    "load_data",
    "load_train_validation",
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
    was read by :func:`load_data` and possibly :func:`preprocess`-ed since; else None.  ``X``
    (n, d) is found by a sha256 of its shape and float64 bytes among the last 32 arrays read or
    preprocessed; ``info`` is a copy; ``y`` is of shape (n,)."""
    got = _PROVENANCE.get(_key(X))
    return None if got is None else (dict(got[0]), got[1])


def read_text(path, what, hint):
    """The UTF-8 text of the file ``path`` (a byte-order mark is not part of it): ``OSError``
    naming the ``what`` file when it cannot be read, :class:`InputError` naming the line of the
    first byte that is not UTF-8, with ``hint`` (what the file should be).  Decoded as
    ``utf-8-sig``; the ``OSError`` keeps its errno (``what="data"``: "cannot read data file ...")."""
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
        is a name: not a number, nor a missing-value mark (``NA``, ``-``, ``?``, an empty
        cell: ``1,NA`` is a sample with a gap, refused), none of its cells looks like a
        mistyped number (starts with a digit, a sign and a digit or ``.``, or ``.`` and a
        digit, as ``1e``, ``0x1`` or ``1.2.3``) and its numbers, if any, are the positions of
        their columns from 0 (pandas' ``0,1,y``); a first row that is neither is refused, not
        skipped as a header (``1,2,yes``). Names such as ``x1,x2,y`` make a header, which must
        name as many columns as the rows hold; a UTF-8 byte-order mark is not part of it. A
        line that starts with ``#`` is a comment (``numpy.savetxt``'s header); a ``#`` inside a
        line is refused.
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
    X, y, _ = _read(path, format, n_features)
    return X, y


def load_train_validation(path, val_path, format="libsvm", n_features=None):
    """Read a training file and its validation file alike: ``(X, y, X_val, y_val)``.

    As :func:`load_data` reads each, except that the validation file follows the training
    file: its LIBSVM indices count from 0 exactly when the training file's do (read alone, a
    validation file without an index 0 would count from 1 and shift every column of a
    0-based set; an index 0 in the validation file of a 1-based training file is refused), and
    it has the training file's columns (``n_features``, else the training file's).

    Parameters
    ----------
    path, val_path : str or path-like
        The training and the validation file.
    format : {"libsvm", "csv"}, default "libsvm"
    n_features : int, optional
        Columns of both (LIBSVM); default the training file's largest index.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    X_val : ndarray of shape (m, d)
    y_val : ndarray of shape (m,)
    """
    X, y, zero = _read(path, format, n_features)
    X_val, y_val, _ = _read(val_path, format, n_features or X.shape[1], zero, like=None if n_features else path)
    return X, y, X_val, y_val


def _read(path, format, n_features, zero_based="auto", like=None):
    """:func:`load_data`'s ``(X, y)`` and whether LIBSVM indices counted from 0 (``zero_based``:
    :func:`~approxpath.text_formats.read_libsvm`'s); ``like``: the training file whose columns
    ``n_features`` are (a validation file's), for the messages."""
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
    zero = False
    if format == "libsvm":
        X, y, zero = read_libsvm(text, str(path), n_features, zero_based)
    else:
        X, y = read_csv(text, str(path))
        if n_features is not None and n_features != X.shape[1]:
            wanted = ("asked for; a CSV file's columns give the features" if like is None else
                      f"of the training file {str(like)!r}: give both the same columns")
            raise InputError(f"{str(path)!r} has {X.shape[1]} feature column(s) (the target is the last column), "
                             f"not the {n_features} {wanted}")
    _remember(X, y, dict(data_file=str(path), format=format, preprocessing="none"))
    return X, y, zero


def load_distances(path):
    """The matrix :math:`D` (n, n) of ``kernel="precomputed"`` from a numpy ``.npy`` file.

    Only a regular file is opened (a pipe or a device would block or never end), its header is
    read before anything else and the array must fit in memory.  The file is one written by
    :func:`numpy.save` (no pickles); ``D`` comes back as float64, of the file's 2-D shape
    (squareness is not checked here).

    Raises
    ------
    FileNotFoundError
        No such file, or not a regular file (a folder, a pipe or a device).
    InputError
        Not a ``.npy`` file of one 2-D array of real numbers (integer or float), or larger than
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


def preprocess(X, method="none", like=None):
    """Scale features.

    ``global-minmax`` is the scaling of the paper's own code:
    :math:`X \\leftarrow (X - \\min X) / \\max(X - \\min X)` over *all* entries, so the
    geometry (and hence the bandwidth axis) is only rescaled, never distorted per feature.
    The result of scaling an ``X`` read by :func:`load_data` remembers the file and the method
    (:func:`provenance`), which a certificate then records.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    method : {"none", "global-minmax"}, default "none"
    like : ndarray of shape (m, d), optional
        The training features, as read: the minimum and the range are taken from it, not from
        ``X`` (validation data are scaled as the data the model was trained on).

    Returns
    -------
    ndarray of shape (n, d)
    """
    from .validate import choice

    choice("preprocessing", method, PREPROCESSING)
    X = np.asarray(X, dtype=float)
    if method == "none":
        return X
    source = provenance(X) if like is None else None
    ref = X if like is None else np.asarray(like, dtype=float)
    if like is not None and not (ref.size and np.all(np.isfinite(ref))):
        raise InputError("like (the training features whose scaling X takes) must be non-empty and finite")
    low = ref.min()
    shifted = X - low
    top = (shifted if like is None else ref - low).max()
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
    low, high : float
        The interval of the inputs.
    noise : float
        Standard deviation of the Gaussian noise added to every target.
    outliers : float
        Fraction of points (rounded down) whose target is replaced by a gross error of
        size ``outlier_scale`` times a uniform draw on [-1, 1] plus the sign of that draw.
    outlier_scale : float
        The size of the gross errors (above).
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
    test set): :math:`y = 10\sin(\pi x_1 x_2) + 20(x_3 - 1/2)^2 + 10x_4 + 5x_5 + \text{noise}`.

    Parameters
    ----------
    n : int, default 150
    noise : float, default 0.0
        Standard deviation of the Gaussian noise.
    seed : int or numpy.random.Generator, default 0
        A ``Generator``'s draws continue from it (a training, a validation and a test set).

    Returns
    -------
    X : ndarray of shape (n, 10)
        Uniform on [0, 1].
    y : ndarray of shape (n,)
    """
    from .validate import count

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(count("n", n), 10))
    f = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return X, f + noise * rng.standard_normal(n)


def make_classification(n=80, d=2, separation=1.0, seed=0):
    """Two overlapping Gaussian classes labelled -1 and +1 (the demo's built-in data).

    Parameters
    ----------
    n : int, default 80
        Samples, alternately +1 and -1.
    d : int, default 2
        Features.
    separation : float, default 1.0
        Distance between the class means along the first feature, in units of the classes'
        standard deviation (1).
    seed : int, default 0

    Returns
    -------
    X : ndarray of shape (n, d)
        Scaled into [0, 1].
    y : ndarray of shape (n,)
        Labels -1.0 and +1.0.
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
    """sha256 of the (preprocessed) arrays as C-ordered float64 bytes, shapes included: the hex
    digest of ``repr(X.shape)``, ``X``'s bytes, ``repr(y.shape)`` and ``y``'s bytes (``X`` (n, d), ``y`` (n,))."""
    h = hashlib.sha256()
    for a in (np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)):
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()
