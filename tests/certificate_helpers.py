"""Certificates in the tests: forging them, shared by the verification tests (and the worked
example of a CVXPY-declared problem, whose certificates they forge too), and comparing two
(:func:`same_certificate`).  Edited copies of a file (:func:`tamper`), a stored point's value
from the definition, the forgeries of every array, meta field and moving point of the hostile
reviews of ``verify`` (paths and surfaces), and the loop that fails on any forged file
``verify`` accepts while its claim is false (the claim decided by a test's own reference)."""

import importlib
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

import approxpath
from approxpath import InputError
from approxpath.certificate.format import content_sha256, read_certificate
from approxpath.moving import Moving
from approxpath.testing.runs import certificate_differences


def tamper(src, dst, edit, rehash):
    """``src`` with its arrays and meta edited by ``edit(arrays, meta)``, written to ``dst``;
    with ``rehash`` the content hash is recomputed (a careful forger: then only the
    mathematics or the layout checks can catch it)."""
    arrays, meta = read_certificate(src)
    arrays = {k: v.copy() for k, v in arrays.items()}
    edit(arrays, meta)
    if rehash:
        meta["content_sha256"] = content_sha256({k: np.asarray(v) for k, v in arrays.items()}, meta)
    np.savez(dst, meta=np.array(json.dumps(meta)), **arrays)
    return dst


def member_data_start(raw, member):
    """Where the (compressed) data of the zip member ``member`` (a ``ZipInfo``) begins in the
    archive's bytes ``raw``: after its local header, whose name and extra field have the lengths
    stored at bytes 26-29 of it."""
    name_len, extra_len = struct.unpack("<HH", raw[member.header_offset + 26:member.header_offset + 30])
    return member.header_offset + 30 + name_len + extra_len


def same_certificate(a, b):
    """Assert that the certificate files ``a`` and ``b`` hold the same arrays bit for bit and the
    same meta but for :data:`~approxpath.testing.runs.TIMING`."""
    differ = certificate_differences(a, b)
    assert not differ, f"the certificates {a} and {b} differ in {differ}"


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "elastic_net_cvxpy.py"


def elastic_net_example():
    """The worked example ``examples/elastic_net_cvxpy.py`` as a module imported by its name from
    ``sys.path`` (it registers ``ElasticNet``): workers unpickle its classes by that name, and a
    worker started with 'spawn' or 'forkserver' (Python 3.14's default) imports it anew."""
    if str(EXAMPLE.parent) not in sys.path:
        sys.path.append(str(EXAMPLE.parent))
    return importlib.import_module(EXAMPLE.stem)


def point_at(point, tau):
    """A stored point's value at ``tau`` from the definition (Bernstein weights on the span,
    evaluated directly; a fixed point is its own value)."""
    if not isinstance(point, Moving):
        return point
    (t0, t1), W = point.span, point.weights
    m = W.shape[1] - 1
    s = 0.0 if m == 0 else (tau - t0) / (t1 - t0)
    w = [sum(W[k, j] * math.comb(m, j) * s**j * (1 - s) ** (m - j) for j in range(m + 1)) for k in range(len(point.points))]
    first = point.points[0]
    values = {}
    for name in first.__dataclass_fields__:
        if not first.__dataclass_fields__[name].compare:
            continue
        parts = [getattr(q, name) for q in point.points]
        values[name] = None if parts[0] is None else sum(wk * np.asarray(v, dtype=float) for wk, v in zip(w, parts))
    return type(first)(**values)


def verify_outcome(file, X, y):
    """True when verify accepts ``file``, False when it rejects it cleanly."""
    try:
        report = approxpath.verify(file, X, y)
    except InputError:  # data that do not match the file, a file without data: not accepted
        return False
    assert isinstance(report.failures, tuple) and str(report)  # the verdict prints
    return report.ok


BAD_NUMBERS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "neg": -1.0, "zero": 0.0, "huge": 1e300,
                "tiny": 1e-300, "text": "0.5", "bool": True, "none": None, "list": [1.0], "object": {"a": 1}}


def array_edits(arrays):
    """(label, edit) of every array: values out of their domain and NaN/inf, another dtype,
    another shape, another order, missing."""
    edits = []
    for key, a in arrays.items():
        def setter(f, key=key):
            return lambda ar, m: ar.__setitem__(key, f(ar[key]))

        def entry(value, key=key):
            def f(v):
                v = v.copy()
                v.reshape(-1)[v.size // 2] = value
                return v
            return setter(f, key)

        if a.dtype.kind == "f":
            for label, value in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf), ("neg", None), ("zero", 0.0),
                                 ("huge", 1e300), ("tiny", 1e-300)):
                if label == "neg":
                    edits.append((f"{key}:neg", setter(lambda v: -v, key)))
                else:
                    edits.append((f"{key}:{label}", entry(value, key)))
            edits += [(f"{key}:x0.5", setter(lambda v: v * 0.5, key)), (f"{key}:x2", setter(lambda v: v * 2.0, key)),
                      (f"{key}:+1e-6", setter(lambda v: v + 1e-6 * (1 + np.abs(v)), key)),
                      (f"{key}:float32", setter(lambda v: v.astype(np.float32), key)),
                      (f"{key}:int", setter(lambda v: v.astype(np.int64), key)),
                      (f"{key}:complex", setter(lambda v: v.astype(complex), key)),
                      (f"{key}:big-endian", setter(lambda v: v.astype(">f8"), key))]
        else:
            edits += [(f"{key}:other kind", entry("certified" if a.reshape(-1)[a.size // 2] != "certified" else "sampled", key)),
                      (f"{key}:unknown kind", entry("proven", key)),
                      (f"{key}:bytes", setter(lambda v: v.astype("S9"), key))]
        edits += [(f"{key}:str", setter(lambda v: v.astype(str), key)),
                  (f"{key}:bool", setter(lambda v: v.astype(bool), key)),
                  (f"{key}:drop last", setter(lambda v: v[:-1], key)),
                  (f"{key}:repeat last", setter(lambda v: np.concatenate([v, v[-1:]]), key)),
                  (f"{key}:2-D", setter(lambda v: v[:, None] if v.ndim == 1 else v[:, :, None], key)),
                  (f"{key}:0-d", setter(lambda v: np.asarray(v.reshape(-1)[0]), key)),
                  (f"{key}:reversed", setter(lambda v: v[::-1].copy(), key)),
                  (f"{key}:swap 0 1", setter(lambda v: v[[1, 0, *range(2, len(v))]] if len(v) > 1 else v, key)),
                  (f"{key}:missing", lambda ar, m, key=key: ar.pop(key))]
        if a.ndim == 2:
            edits += [(f"{key}:extra column", setter(lambda v: np.column_stack([v, v[:, :1]]), key)),
                      (f"{key}:columns reversed", setter(lambda v: v[:, ::-1].copy(), key))]
    return edits


#: Changes of a numeric meta field (label, change).
NUMBER_CHANGES = (("x0.5", lambda v: v * 0.5), ("x2", lambda v: v * 2), ("+1", lambda v: v + 1),
                  ("-1", lambda v: v - 1), ("negated", lambda v: -v))


def meta_field_edits(key, value, changes=NUMBER_CHANGES):
    """(label, edit) of the meta field ``key`` (holding ``value``) that every certificate's
    fields get: each of :data:`BAD_NUMBERS`, missing, ``changes`` of a number, a flipped bool."""
    edits = [(f"meta {key}:{label}", lambda a, m, key=key, bad=bad: m.__setitem__(key, bad))
             for label, bad in BAD_NUMBERS.items()]
    edits.append((f"meta {key}:missing", lambda a, m, key=key: m.pop(key)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for label, f in changes:
            edits.append((f"meta {key}:{label}", lambda a, m, key=key, f=f: m.__setitem__(key, f(m[key]))))
    if isinstance(value, bool):
        edits.append((f"meta {key}:flipped", lambda a, m, key=key: m.__setitem__(key, not m[key])))
    return edits


def meta_edits(meta):
    """(label, edit) of every meta field (and of every option): values out of the domain,
    NaN/inf, other types, other valid values, missing, and a few fields added."""
    edits = []
    for key, value in meta.items():
        if key == "content_sha256":
            continue
        edits += meta_field_edits(key, value)
        if isinstance(value, list):
            edits += [(f"meta {key}:reversed", lambda a, m, key=key: m.__setitem__(key, m[key][::-1])),
                      (f"meta {key}:drop last", lambda a, m, key=key: m.__setitem__(key, m[key][:-1])),
                      (f"meta {key}:repeat last", lambda a, m, key=key: m.__setitem__(key, m[key] + m[key][-1:])),
                      (f"meta {key}:text", lambda a, m, key=key: m.__setitem__(key, [str(v) for v in m[key]]))]
        if isinstance(value, str):
            for other in ("kernel_svm", "klasso", "robust_l1", "kernel_ridge", "bandwidth", "c", "lam", "t",
                          "global-minmax", "none", "csv", "libsvm", "laplacian: exp(-t |x - x'|)", "0" * 64, ""):
                if other != value:
                    edits.append((f"meta {key}:{other or 'empty'}", lambda a, m, key=key, o=other: m.__setitem__(key, o)))
    interval = meta["interval"]
    lo, hi = interval
    for label, new in (("negative", [-hi, -lo]), ("from 0", [0.0, hi]), ("swapped", [hi, lo]), ("to inf", [lo, math.inf]),
                       ("nan", [math.nan, hi]), ("wider", [lo / 2, 2 * hi]), ("narrower", [lo * 1.5, hi]),
                       ("point", [lo, lo]), ("three", [lo, hi, 2 * hi])):
        edits.append((f"meta interval:{label}", lambda a, m, new=new: m.__setitem__("interval", new)))
    edits.append(("meta interval+pieces:negative", negative_bandwidths))
    edits.append(("crafted: weak pair over negative t", weak_pair_over_negative_bandwidths))
    for opt, value in meta["options"].items():
        for label, bad in dict(BAD_NUMBERS, other="dynamic", fixed="fixed").items():
            edits.append((f"option {opt}:{label}", lambda a, m, o=opt, b=bad: m["options"].__setitem__(o, b)))
        edits.append((f"option {opt}:missing", lambda a, m, o=opt: m["options"].pop(o)))
        if isinstance(value, float):
            for label, f in (("x0.5", lambda v: v * 0.5), ("x2", lambda v: v * 2), ("negated", lambda v: -v)):
                edits.append((f"option {opt}:{label}", lambda a, m, o=opt, f=f: m["options"].__setitem__(o, f(m["options"][o]))))
    edits += [("option unknown:added", lambda a, m: m["options"].__setitem__("gamma", 1.0)),
              ("meta format_version:1", lambda a, m: m.__setitem__("format_version", 1)),
              ("meta format_version:2", lambda a, m: m.__setitem__("format_version", 2)),
              ("meta format_version:4", lambda a, m: m.__setitem__("format_version", 4))]
    return edits


def negative_bandwidths(arrays, meta):
    """The forgery of the hostile review: the whole certificate mirrored onto negative
    parameters (K_t = exp(-tD) is indefinite there, no point is eps-optimal)."""
    mirrored = {"lo": -arrays["hi"][::-1], "hi": -arrays["lo"][::-1], "anchor_lo": -arrays["anchor_hi"][::-1],
                "anchor_hi": -arrays["anchor_lo"][::-1]}
    for key, v in list(arrays.items()):
        arrays[key] = mirrored[key].copy() if key in mirrored else v[::-1].copy()
    meta["interval"] = [-meta["interval"][1], -meta["interval"][0]]
    meta["piece_kinds"] = meta["piece_kinds"][::-1]
    meta["solve_points"] = sorted(-t for t in meta["solve_points"])


def weak_pair_over_negative_bandwidths(arrays, meta):
    """A crafted forgery: the zero dual (a gap bound of C sum(xi) whatever t is, no kernel
    involved) with a large eps, over negative bandwidths -- every bound holds arithmetically,
    only the domain t > 0 tells the claim is false (the primal is unbounded below there)."""
    negative_bandwidths(arrays, meta)
    for key in arrays:
        if key not in ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi"):
            arrays[key] = np.zeros_like(arrays[key])
    meta["eps"] = 1e6
    arrays["gap_bound"] = np.full_like(arrays["gap_bound"], 1e5)


def moving_edits(arrays):
    """(label, edit) of the moving pieces' fields together (a combination, not one field at a
    time): every side with moving pieces gets a span whose width overflows, a span that does not
    contain its piece, reversed, NaN weights, a bump in the weights' middle (the pair leaves the
    feasible set mid-piece), another point, and the forgery of the hostile review (the span
    overflowing, the weights a bump, a poor second point)."""
    edits = []
    for side in ("primal", "dual"):
        if f"{side}_degree" not in arrays:
            continue
        rows = np.flatnonzero(arrays[f"{side}_degree"] > 0)
        if not rows.size:
            continue
        i = int(rows[len(rows) // 2])
        point_keys = [k for k in arrays if k.startswith(f"{side}_") and k[len(side) + 1:] not in
                      ("weights", "count", "degree", "span")]

        def edit(f, i=i, side=side, keys=point_keys):
            def apply(ar, m):
                span, W = ar[f"{side}_span"], ar[f"{side}_weights"]
                f(span, W, [ar[k] for k in keys], i)
            return apply

        def overflow(span, W, P, i):
            span[i] = [-1.5e308, 1.5e308]

        def outside(span, W, P, i):
            span[i] = [span[i][0] * 1.01 + 1e-3, span[i][1]]

        def reverse(span, W, P, i):
            span[i] = span[i][::-1]

        def nan_weights(span, W, P, i):
            W[i, 0, 0] = np.nan

        def bump(span, W, P, i):
            W[i, :, :] = 0.0
            W[i, 0, 0] = W[i, 0, -1] = 1.0
            W[i, -1, W.shape[2] // 2] = 1.0  # all weight on the last point mid-piece, none at the ends

        def other_point(span, W, P, i):
            for v in P:
                v[i, -1] = v[i, -1] * 0.5 + 0.25 * (np.abs(v[i]).max() + 1.0)

        def review(span, W, P, i):  # the hostile review's forgery, in this layout
            overflow(span, W, P, i)
            bump(span, W, P, i)
            for v in P:
                v[i, -1] = 0.0

        def all_at_once(span, W, P, i):
            outside(span, W, P, i)
            bump(span, W, P, i)
            other_point(span, W, P, i)

        for label, f in (("span overflow", overflow), ("span outside", outside), ("span reversed", reverse),
                         ("weights nan", nan_weights), ("weights bump", bump), ("other point", other_point),
                         ("review", review), ("all at once", all_at_once)):
            edits.append((f"moving {side}:{label}", edit(f)))
    return edits


# The kind of each forgery (by its label's suffix): the default suite tries the first forgery of
# every kind on every field, the slow one all of them.
FORGERY_KINDS = {"domain": ("neg", "zero", "huge", "tiny", "x0.5", "x2", "+1e-6", "+1", "-1", "negated", "flipped", "other kind",
                     "unknown kind", "wider", "narrower", "from 0", "point", "negative", "added"),
          "nonfinite": ("nan", "inf", "-inf", "to inf"),
          "dtype": ("float32", "int", "complex", "big-endian", "str", "bool", "bytes", "text", "none", "list", "object"),
          "shape": ("drop last", "repeat last", "2-D", "0-d", "extra column", "three"),
          "order": ("reversed", "swap 0 1", "columns reversed", "swapped"),
          "missing": ("missing",),
          "moving": ("span overflow", "span outside", "span reversed", "weights nan", "weights bump", "other point",
                     "review", "all at once")}


def kind_of(label):
    suffix = label.rsplit(":", 1)[-1]
    return next((k for k, suffixes in FORGERY_KINDS.items() if suffix in suffixes), "value")


def first_of_each_kind(edits):
    seen, out = set(), []
    for label, edit in edits:
        if kind_of(label) == "moving":  # every combination of the moving fields
            out.append((label, edit))
            continue
        key = (label.rsplit(":", 1)[0], kind_of(label))
        if key not in seen:
            seen.add(key)
            out.append((label, edit))
    return out


def check_forgeries(certificates, tmp_path, case, select, at_least, edits_of, claim_is_true, what="files"):
    """Forge ``select(edits_of(file))`` of the honest file ``certificates[case]`` one at a time
    and fail on any that ``verify`` accepts while its claim is false (``claim_is_true``, the
    reference); at least ``at_least`` forgeries must be storable."""
    file, X, y = certificates[case]
    assert verify_outcome(file, X, y) and claim_is_true(file, X, y)  # the honest file and the reference agree
    accepted_false, tried = [], 0
    for label, edit in select(edits_of(file)):
        try:
            forged = tamper(file, tmp_path / "forged.npz", edit, rehash=True)
        except (TypeError, ValueError, KeyError, IndexError):  # numpy/json cannot even store it
            continue
        tried += 1
        if verify_outcome(forged, X, y) and not claim_is_true(forged, X, y):
            accepted_false.append(label)
    assert tried >= at_least, tried
    assert accepted_false == [], f"{case}: forged {what} accepted with a false claim: {accepted_false}"
