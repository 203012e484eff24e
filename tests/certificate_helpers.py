"""Forging certificates, shared by the verification tests."""

import json

import numpy as np

from approxpath.certificate.format import content_sha256, read_certificate


def tamper(src, dst, edit, rehash):
    """``src`` with its arrays and meta edited by ``edit(arrays, meta)``, written to ``dst``;
    with ``rehash`` the content hash is recomputed (a careful forger: then only the
    mathematics or the layout checks can catch it)."""
    arrays, meta = read_certificate(src)
    arrays = {k: v.copy() for k, v in arrays.items()}
    edit(arrays, meta)
    if rehash:
        meta["content_sha256"] = content_sha256(arrays, meta)
    np.savez(dst, meta=np.array(json.dumps(meta)), **arrays)
    return dst
