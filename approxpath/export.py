"""Tables of paths for spreadsheets and for TikZ/pgfplots: write them, and read them back.

* an exact path (:class:`approxpath.exact.ExactPath`): one row per returned solution —
  ``t`` (λ on a λ-path, the bandwidth on a kernel path), ``active`` (active-set size), ``events``
  (events recorded at that ``t``; the active set is that of the linear system behind the
  solution), ``beta0``, ``l1`` (:math:`\\lVert\\beta\\rVert_1`),
  ``objective`` (the ``klasso`` objective :math:`\\tfrac12\\lVert r\\rVert^2 +
  \\lambda\\lVert\\beta\\rVert_1`), ``train_mse``, ``cond``, and when given ``gap`` (the certified
  gap bound of :func:`approxpath.exact.certify`'s report) and ``val_mse`` (validation data);
* an approximate path (:class:`approxpath.Path`): one row per piece — ``lo``, ``hi``,
  ``gap_bound``, ``kind``, ``anchor_lo``, ``anchor_hi`` (the columns of its certificate).

Formats: ``csv`` (a header row of column names, comma-separated) and ``dat``
(whitespace-separated columns under a header row, after one ``#`` comment line saying what the
table is: pgfplots skips it and reads the header, ``\\addplot table[x=t, y=active] {path.dat};``).
Numbers are written with 17 significant digits, so :func:`read_table` gets them back exactly.
"""

from __future__ import annotations

from pathlib import Path as _FsPath

import numpy as np

from .errors import InputError
from .validate import check_validation
from .compute.distances import cross_sq_distances, sq_distances

__all__ = ["FORMATS", "exact_path_table", "export_table", "read_table", "table_format"]

#: Table formats: comma-separated with a header row, or pgfplots' whitespace-separated columns.
FORMATS = ("csv", "dat")


def exact_path_table(path, *, report=None, X_val=None, y_val=None):
    """The per-point columns of an exact path (see the module docstring).

    Parameters
    ----------
    path : ExactPath
    report : CrossCheckReport, optional
        ``certify(path)``: adds the column ``gap`` (its certified gap bound at every point).
    X_val : ndarray of shape (k, d), optional
    y_val : ndarray of shape (k,), optional
        Validation data: adds ``val_mse``.

    Returns
    -------
    dict of str to ndarray of shape (points,)
    """
    X, y = path.X, path.y
    X_val, y_val = check_validation(X_val, y_val, X.shape[1], optional=True)
    D = sq_distances(X)
    Dv = None if X_val is None else cross_sq_distances(X_val, X)
    k = path.t.size
    obj, mse, vmse = np.empty(k), np.empty(k), np.empty(k)
    for i in range(k):
        lam, bw = (path.t[i], path.bandwidth) if path.parameter == "lam" else (path.lam, path.t[i])
        act = np.flatnonzero(path.beta[i])
        beta_a, beta0 = path.beta[i, act], path.beta0[i]
        r = y - np.exp(-bw * D[:, act]) @ beta_a - beta0  # only the active columns of K_t
        obj[i] = 0.5 * float(r @ r) + lam * float(np.abs(beta_a).sum())
        mse[i] = float(r @ r) / r.size
        if Dv is not None:
            e = y_val - np.exp(-bw * Dv[:, act]) @ beta_a - beta0
            vmse[i] = float(e @ e) / e.size
    event_t = np.array([e.t for e in path.events], dtype=float)
    cols = dict(t=np.asarray(path.t, dtype=float), active=np.abs(path.signs).sum(axis=1).astype(float),
                events=np.array([np.count_nonzero(event_t == t) for t in path.t], dtype=float),
                beta0=np.asarray(path.beta0, dtype=float), l1=np.abs(path.beta).sum(axis=1),
                objective=obj, train_mse=mse, cond=np.asarray(path.cond, dtype=float))
    if report is not None:
        points = report.points
        if len(points) != k or not np.array_equal([c.lo for c in points], path.t):
            raise InputError("report must be certify(path) of this path (its points are not the path's)")
        cols["gap"] = np.array([c.gap for c in points], dtype=float)
    if Dv is not None:
        cols["val_mse"] = vmse
    return cols


def _piece_table(path):
    pieces = path.pieces
    return dict(lo=np.array([p.lo for p in pieces], dtype=float), hi=np.array([p.hi for p in pieces], dtype=float),
                gap_bound=np.array([p.gap_bound for p in pieces], dtype=float),
                kind=np.array([p.kind for p in pieces], dtype=str),
                anchor_lo=np.array([p.anchors[0] if p.anchors else np.nan for p in pieces], dtype=float),
                anchor_hi=np.array([p.anchors[-1] if p.anchors else np.nan for p in pieces], dtype=float))


def table_format(file, format=None, flag="file"):
    """The table format of ``file``: ``format`` if given, else its suffix's (``csv`` without
    one, or ``.txt``).

    Parameters
    ----------
    file : str or path-like
    format : {"csv", "dat"}, optional
    flag : str, default "file"
        What the error calls the file (a command-line flag).

    Returns
    -------
    str
        ``"csv"`` or ``"dat"``.

    Raises
    ------
    InputError
        Another suffix or format (``t.xyz`` and ``t.tsv`` were written as comma-separated values
        without a word).
    """
    if format is None:
        suffix = _FsPath(file).suffix.lower().lstrip(".")
        if suffix and suffix not in (*FORMATS, "txt"):
            raise InputError(f"{flag} {file}: a table is written as .csv (or .txt) or .dat (pgfplots), not .{suffix}")
        format = suffix if suffix in FORMATS else "csv"
    if format not in FORMATS:
        raise InputError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    return format


def _cell(v):
    if isinstance(v, str):
        return v
    return "nan" if np.isnan(v) else ("inf" if v == np.inf else "-inf" if v == -np.inf else f"{v:.17g}")


def export_table(obj, file, format=None, *, report=None, X_val=None, y_val=None):
    """Write the per-point table of an exact path or the per-piece table of an approximate path.

    Parameters
    ----------
    obj : ExactPath or Path
        An exact path (:func:`approxpath.exact.lambda_path`, :func:`~approxpath.exact.kernel_path`)
        or an approximate one (:func:`approxpath.approximate_path`, :func:`approxpath.load_path`).
    file : str or path-like
    format : {"csv", "dat"}, optional
        Default: from the file's suffix (``.dat``; ``.csv``, ``.txt`` or none: ``csv``; another
        is refused).
    report, X_val, y_val
        Exact paths only: extra columns (see :func:`exact_path_table`).

    Returns
    -------
    pathlib.Path
        The file written (atomically: a temporary file renamed over it).
    """
    format = table_format(file, format)
    if hasattr(obj, "pieces"):
        if report is not None or X_val is not None or y_val is not None:
            raise InputError("report, X_val and y_val add columns to an exact path's table, not to an approximate path's")
        cols = _piece_table(obj)
        what = (f"approxpath approximate path of {obj.meta.get('problem', '?')} over "
                f"{obj.meta.get('parameter', '?')}: one row per piece, eps = {obj.eps:g}"
                f"{' (relative)' if getattr(obj, 'relative', False) else ' (absolute)'}"
                + ("" if getattr(obj, "verified", True) else "; UNVERIFIED: the kinds and bounds are the file's claims"))
    elif hasattr(obj, "events") and hasattr(obj, "signs"):
        cols = exact_path_table(obj, report=report, X_val=X_val, y_val=y_val)
        fixed = f"bandwidth t = {obj.bandwidth:g}" if obj.parameter == "lam" else f"lam = {obj.lam:g}"
        what = (f"approxpath {obj.algorithm}, {fixed}: one row per solution, t = "
                f"{'lambda' if obj.parameter == 'lam' else 'bandwidth'}")
    elif hasattr(obj, "table_columns"):  # a feature path: report = its SegmentReport, if any
        what, cols = obj.table_columns(segments=report)
    else:
        raise InputError(f"export_table needs an exact path (ExactPath) or an approximate path (Path); got "
                         f"{type(obj).__name__}")
    names = list(cols)
    rows = zip(*(cols[c].tolist() for c in names))
    sep = "," if format == "csv" else " "
    lines = [] if format == "csv" else [f"# {what}"]
    lines.append(sep.join(names))
    lines += [sep.join(_cell(v) for v in row) for row in rows]
    from .certificate.output import write_atomic

    text = ("\n".join(lines) + "\n").encode()
    return write_atomic(file, lambda fh: fh.write(text))  # never half a table, never over a device


def read_table(file):
    """Read a table written by :func:`export_table` (either format).

    Blank lines and lines starting with ``#`` are skipped; the first other line is the header,
    comma-separated if it holds a comma (``csv``), else whitespace-separated (``dat``).

    Returns
    -------
    dict of str to ndarray
        One array per column, float where every entry is a number, else str (``kind``).

    Raises
    ------
    FileNotFoundError
        ``file`` is not a file.
    InputError
        No header row, or a row whose number of entries is not the header's.
    """
    file = _FsPath(file)
    if not file.is_file():
        raise FileNotFoundError(f"table {str(file)!r} does not exist")
    lines = [ln for ln in file.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise InputError(f"{str(file)!r} has no header row")
    sep = "," if "," in lines[0] else None
    names = [c.strip() for c in lines[0].split(sep)]
    rows = [ln.split(sep) for ln in lines[1:]]
    bad = next((i for i, r in enumerate(rows) if len(r) != len(names)), None)
    if bad is not None:
        raise InputError(f"{str(file)!r}: row {bad + 1} has {len(rows[bad])} entries for {len(names)} columns")
    cols = {}
    for j, name in enumerate(names):
        values = [r[j].strip() for r in rows]
        try:
            cols[name] = np.array([float(v) for v in values], dtype=float)
        except ValueError:
            cols[name] = np.array(values, dtype=str)
    return cols
