"""The kernel SVM's points: a primal (w, b) with its slacks, a dual alpha, and content keys of arrays."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SVMPrimal", "SVMDual", "digest"]


@dataclass(frozen=True)
class SVMPrimal:
    """Primal point: ``w`` (n,), the bias ``b`` and the slacks ``xi`` (n,), which
    ``KernelSVM.primal_at`` fills in at a parameter (a stored point leaves them None)."""

    w: np.ndarray
    b: float
    xi: np.ndarray = None


@dataclass(frozen=True)
class SVMDual:
    """Dual point: ``alpha`` (n,).

    ``mix`` (not part of the certificate) records that ``alpha`` equals
    ``(1 - theta) alpha_a + theta alpha_b`` *exactly*, as ``(alpha_a, alpha_b, theta)``, so a
    search computes kernel products of ``alpha`` as combinations of the parents'.  ``interior``
    (neither) counts the exact solves in a row, ending with the one that made it, that reached an
    interior point (Clarabel, SCS; 0 where libSVM's chain answered): the next solves started from
    it try that first while the streak is short (``KernelSVM.solve``).
    """

    alpha: np.ndarray
    mix: tuple = field(default=None, compare=False, repr=False)
    interior: int = field(default=0, compare=False, repr=False)

    def __reduce__(self):  # the parents in ``mix`` are a cache: do not ship them
        return (SVMDual, (self.alpha, None, self.interior))


def digest(a):
    """A key for the content of the array ``a`` (cache keys: equal arrays give equal keys): the 16-byte
    BLAKE2b digest of its bytes alone (C order), not of its shape or dtype."""
    return hashlib.blake2b(np.ascontiguousarray(a), digest_size=16).digest()  # its bytes, not a copy of them
