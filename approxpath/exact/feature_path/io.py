"""A feature path as an ``.npz`` file, and back (for the CLI and for paths computed elsewhere).

Arrays: ``D`` (m,), ``beta`` (m, d), ``alpha`` (m, n), ``alpha0`` (m,) — all that
:func:`~approxpath.exact.feature_path.crosscheck_feature_path` needs — and, when written from a
:class:`FeaturePath`, ``lam`` (m,), ``active`` (m, d), ``jacobian_calls_at`` (m,), ``events``
(k, 3: point index, feature, kind 0 start / 1 joined / 2 left), ``rel_gap`` and ``kkt`` (m,, the
certificates, if any) and ``meta`` (a JSON string: kernel, degree, C, stop reason, counts,
``points_certified``; from the command line also the data file and, with ``--segments``, the
segments' report).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from approxpath.errors import InputError

__all__ = ["write_feature_path", "read_feature_path"]

_KINDS = ("start", "joined", "left")
_REQUIRED = ("D", "beta", "alpha", "alpha0")


def write_feature_path(path, file, **meta):
    """Write ``path`` (a FeaturePath) to ``file`` (.npz); ``meta`` adds JSON-able entries (data
    file, scaling, ...) to the ``meta`` record, which also says which machine wrote it
    (:func:`approxpath.machine.describe`).  The arrays (module docstring; ``rel_gap`` and ``kkt``
    where the path has a ``report``) are written compressed and atomically
    (:func:`~approxpath.certificate.output.write_atomic`, whose errors these are)."""
    from ...machine import describe

    info = dict(kernel=path.kernel, degree=path.degree, C=path.C, stop_reason=path.stop_reason, steps=path.steps,
                rejected=path.rejected, jacobian_calls=path.jacobian_calls, wall_s=path.wall_s, machine=describe(),
                **meta)
    arrays = dict(D=path.D, beta=path.beta, alpha=path.alpha, alpha0=path.alpha0, lam=path.lam, active=path.active,
                  jacobian_calls_at=path.jacobian_calls_at,
                  events=np.array([(e.index, e.feature, _KINDS.index(e.kind)) for e in path.events], dtype=np.int64))
    if path.report is not None:
        arrays.update(rel_gap=path.report.rel_gap, kkt=path.report.kkt)
        # (every point's inner problem and KKT conditions; the segments, where checked, come in meta)
        info.update(points_certified=path.report.ok, tol=path.report.tol, kkt_tol=path.report.kkt_tol)
    from ...certificate.output import write_atomic

    write_atomic(file, lambda fh: np.savez_compressed(fh, meta=np.array(json.dumps(info)), **arrays))


def read_feature_path(file):
    """The arrays of a feature-path file as a dict (``meta`` decoded to a dict; ``{}`` if absent; no
    pickles); the ``degree`` of an ``ard-gaussian`` path is None (files before 0.5.0 stored 2).

    Raises
    ------
    InputError
        When the file does not exist (or is not a regular file), is not an npz file, lacks ``D``,
        ``beta``, ``alpha`` or ``alpha0``, or its ``meta`` is not a JSON object.
    """
    file = Path(file)
    if not file.is_file():
        raise InputError(f"feature path file {str(file)!r} does not exist")
    try:
        with np.load(file, allow_pickle=False) as data:
            out = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"{str(file)!r} is not a feature path (.npz) file: {exc}") from None
    missing = [k for k in _REQUIRED if k not in out]
    if missing:
        raise InputError(f"{str(file)!r} lacks the array(s) {', '.join(missing)} (a feature path needs "
                         f"{', '.join(_REQUIRED)})")
    try:
        out["meta"] = json.loads(str(out["meta"])) if "meta" in out else {}
    except ValueError as exc:
        raise InputError(f"{str(file)!r}: its meta is not JSON ({exc})") from None
    if not isinstance(out["meta"], dict):
        raise InputError(f"{str(file)!r}: its meta is a JSON {type(out['meta']).__name__}, not an object")
    if out["meta"].get("kernel") == "ard-gaussian":  # (files before 0.5.0 stored degree 2 for it)
        out["meta"]["degree"] = None
    return out
