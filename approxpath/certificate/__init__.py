"""Certificates: the file (:mod:`.format`), the domains of its fields (:mod:`.fields`) and its
verification (:mod:`.verify`, against the data and options of :mod:`.inputs`).

Nothing here imports a solver or search code: ``approxpath verify`` loads only this package,
the problem's certificate side (:func:`approxpath.get_bound`) and numpy/scipy.
"""

from .fields import layout_errors
from .format import FORMAT_VERSION, KINDS, content_sha256, read_certificate, write_npz
from .claims import claim_failures, claimed_on, target
from .inputs import DataMismatch
from .verify import VerifyReport, verify

__all__ = ["FORMAT_VERSION", "KINDS", "DataMismatch", "VerifyReport", "claim_failures", "claimed_on", "content_sha256",
           "layout_errors", "read_certificate", "target", "verify", "write_npz"]
