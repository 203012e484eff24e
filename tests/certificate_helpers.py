"""Forging certificates, shared by the verification tests (and the worked example of a
CVXPY-declared problem, whose certificates they forge too)."""

import importlib.util
import json
import sys
from pathlib import Path

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


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "elastic_net_cvxpy.py"


def elastic_net_example():
    """The worked example ``examples/elastic_net_cvxpy.py`` as an importable module (it
    registers ``ElasticNet``; workers unpickle its classes by name)."""
    if "elastic_net_cvxpy" not in sys.modules:
        spec = importlib.util.spec_from_file_location("elastic_net_cvxpy", EXAMPLE)
        module = importlib.util.module_from_spec(spec)
        sys.modules["elastic_net_cvxpy"] = module
        spec.loader.exec_module(module)
    return sys.modules["elastic_net_cvxpy"]
