"""Data: LIBSVM and CSV loaders, the paper's preprocessing, seeded synthetic sets, hashes.

Nothing here needs downloaded data: the demo and the default tests run on the seeded
generators below.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .errors import InputError

__all__ = [
    "PREPROCESSING",
    "load_data",
    "preprocess",
    "make_sinc",
    "make_classification",
    "data_sha256",
]

#: Names accepted by :func:`preprocess` (and the CLI's ``--preprocess``).
PREPROCESSING = ("none", "global-minmax")


def load_data(path, format="libsvm", n_features=None):
    """Read a data file into a dense ``X`` (n, d) and ``y`` (n,).

    Parameters
    ----------
    path : str or Path
    format : {"libsvm", "csv"}
        ``libsvm``: sparse ``label idx:val ...`` lines, read with scikit-learn's
        ``load_svmlight_file`` (the ``sklearn`` extra). ``csv``: comma-separated numbers, one
        sample per row, the target in the last column; a first line that is not numeric is
        taken as a header.
    n_features : int, optional
        LIBSVM only: the number of columns (the highest index present is used otherwise).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    if format == "libsvm":
        try:
            from sklearn.datasets import load_svmlight_file
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "reading LIBSVM files uses scikit-learn's load_svmlight_file: "
                "pip install 'approxpath[sklearn]' (or pass --format csv)"
            ) from exc
        X, y = load_svmlight_file(str(path), n_features=n_features)
        return np.asarray(X.toarray(), dtype=float), np.asarray(y, dtype=float)
    if format == "csv":
        with open(path) as fh:
            first = fh.readline()
        try:
            [float(v) for v in first.strip().split(",")]
            skip = 0
        except ValueError:
            skip = 1
        try:
            data = np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2, dtype=float)
        except ValueError as exc:  # text cells, ragged rows
            raise InputError(f"{str(path)!r}: a cell is not a number or a row has another length ({exc}); "
                             "a CSV file needs numbers only (one optional header line)") from None
        if data.shape[1] < 2:
            raise ValueError(f"{str(path)!r}: a CSV file needs feature columns and a last target column")
        return data[:, :-1], data[:, -1]
    raise ValueError(f"unknown data format {format!r}: use 'libsvm' or 'csv'")


def preprocess(X, method="none"):
    """Scale features.

    ``global-minmax`` is the scaling of the paper's own code:
    :math:`X \\leftarrow (X - \\min X) / \\max(X - \\min X)` over *all* entries, so the
    geometry (and hence the bandwidth axis) is only rescaled, never distorted per feature.
    """
    X = np.asarray(X, dtype=float)
    if method == "none":
        return X
    if method == "global-minmax":
        shifted = X - X.min()
        top = shifted.max()
        return shifted / top if top > 0 else shifted
    raise ValueError(f"unknown preprocessing {method!r}: use one of {PREPROCESSING}")


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
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(low, high, n))
    y = np.sinc(x) + noise * rng.standard_normal(n)  # np.sinc is sin(pi x)/(pi x)
    k = int(outliers * n)
    if k:
        idx = rng.choice(n, size=k, replace=False)
        u = rng.uniform(-1.0, 1.0, k)
        y[idx] = np.sinc(x[idx]) + outlier_scale * (u + np.sign(u))
    return x[:, None], y


def make_classification(n=80, d=2, separation=1.0, seed=0):
    """Two overlapping Gaussian classes labelled -1 and +1 (the demo's built-in data).

    Returns ``X`` of shape (n, d) scaled into [0, 1] and ``y`` of shape (n,).
    """
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
