"""What a caller may require of a certificate's claim (numpy only: the verifier imports it):
checks that a requirement is well formed (a usage error, before a file is read) and the ways a
claim falls short of one."""

from __future__ import annotations

import re

import numpy as np

from ..errors import InputError
from ..validate import flag, is_real, number_pair

__all__ = ["check_interval_required", "check_requirements", "requirement_failures"]


def check_interval_required(interval):
    """``(lo, hi)`` of an interval a caller requires, or :class:`InputError` unless it is two
    finite real numbers with ``lo <= hi`` (a reversed interval is contained in every interval: it
    would require nothing)."""
    lo, hi = number_pair("the required interval", interval)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise InputError(f"the required interval must satisfy lo <= hi, both finite; got [{lo!r}, {hi!r}]: "
                         "swap the ends")
    return lo, hi


def check_requirements(eps=None, relative=False, interval=None, data_sha256=None, box=None, flags=False):
    """:class:`InputError` unless what a caller requires of a claim is well formed: ``eps`` a
    positive finite number, ``relative`` a bool that qualifies a given ``eps``, ``interval`` and
    each side of ``box`` ``((t_lo, t_hi), (w_lo, w_hi))`` as :func:`check_interval_required`,
    ``data_sha256`` 64 hex digits (either case).  A usage error, not a failed verification.
    ``flags``: the messages name the command line's flags (``--eps``)."""
    name = (lambda key: f"--{key.replace('_', '-')}") if flags else (lambda key: key)
    if eps is not None and not (is_real(eps) and 0 < float(eps) < np.inf):
        raise InputError(f"{name('eps')} must be a positive finite number (the eps the certificate must meet); "
                         f"got {eps!r}")
    flag(name("relative"), relative)
    if relative and eps is None:
        raise InputError(f"{name('relative')} qualifies a required {name('eps')}: give {name('eps')} too "
                         f"(or leave {name('relative')} out)")
    if interval is not None:
        check_interval_required(interval)
    if box is not None:
        try:
            sides = [check_interval_required(side) for side in box]
        except (InputError, TypeError):  # (a side not a pair; a box that is no sequence)
            sides = []
        if len(sides) != 2:
            raise InputError(f"the required box must be ((t_lo, t_hi), (w_lo, w_hi)), finite, lo <= hi; got {box!r}")
    if data_sha256 is not None and not (isinstance(data_sha256, str) and re.fullmatch(r"[0-9a-fA-F]{64}", data_sha256)):
        raise InputError(f"{name('data_sha256')} must be the data's sha256, 64 hex digits; got {data_sha256!r}")


def requirement_failures(meta, eps=None, relative=False, interval=None, data_sha256=None):
    """Why the claim of ``meta`` is weaker than required: ``eps`` (the claim's must be at most
    this, and relative exactly when ``relative``), ``interval`` (the claim's must contain it),
    ``data_sha256`` (must be it, compared in lower case).  A list of messages (empty: the claim is
    strong enough); a malformed ``interval`` raises as in :func:`check_interval_required`."""
    out = []
    if eps is not None:
        if bool(meta["relative"]) != bool(relative):
            kind = "relative" if meta["relative"] else "absolute"
            out.append(f"required a{' relative' if relative else 'n absolute'} eps <= {eps:g}, but the certificate's "
                       f"eps is {kind} ({meta['eps']:g})")
        elif not meta["eps"] <= eps:
            out.append(f"required eps <= {eps:g}, but the certificate claims only eps = {meta['eps']:g}")
    if interval is not None:
        lo, hi = check_interval_required(interval)
        c_lo, c_hi = meta["interval"]
        if not (c_lo <= lo and hi <= c_hi):
            out.append(f"required the interval [{lo:.6g}, {hi:.6g}], but the certificate covers [{c_lo:.6g}, {c_hi:.6g}]")
    if data_sha256 is not None and str(data_sha256).lower() != meta.get("data_sha256"):
        out.append(f"required data sha256 {data_sha256}, but the certificate is for {meta.get('data_sha256')}")
    return out
