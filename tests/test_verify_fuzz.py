"""A hostile review of ``verify``: every stored field of a certificate of every problem (a
CVXPY-declared one included) is forged -- out of its domain, NaN/inf, another shape, another
dtype, another order, missing; one field at a time and several together -- and the content hash
recomputed (so only the domain and mathematical checks can catch it).  No forged file may be
accepted whose claim is false.

The reference that decides whether an accepted claim is false is independent of the verifier:
the domains are restated here (eps > 0 finite, 0 < lo < hi finite, the options the problem's
search side accepts and, for a declared problem, the domains its mathematics needs
(:data:`_MATH_DOMAINS`), the recorded n and d, the kernel), the pieces must tile the interval, and
every claimed pair is checked with the problem's search-side numpy objectives and violations
(``Problem.primal_objective``, ``dual_objective``, ``primal_violation``, ``dual_violation``: the
specification, not the rigorous bounds) at the ends, the middle and random points of each
piece.  verify must also fail cleanly: an ``InputError`` (data that do not match) or a FAILED
report, never another exception.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import approxpath
from approxpath import InputError
from approxpath.certificate.format import FORMAT_VERSION, KERNEL, KINDS, content_sha256, read_certificate
from approxpath.data import make_classification, make_sinc
from approxpath.moving import Moving
from approxpath.testing import ToyProjection
from certificate_helpers import elastic_net_example

# forged values overflow inside the bounds (verify then fails the claim): numpy's warnings are noise
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def weak_duality():
    """Overrides conftest's weak-duality wrapper: a forged pair may make a bound NaN or negative,
    which verify must reject, not the wrapper."""
    yield


# Slack of the pointwise reference: an honest pair's computed gap and violations are within
# rounding (~1e-15 relative) of the true ones; 1e-9 relative is far above that and far below
# any forged change that matters.
_SLACK = 1e-9

# The formats before the current one (docs/certificate-format.md, "Older layouts"): these
# problems stored their pairs in arrays of their own there; every other problem stored one fixed
# pair per piece as ``primal_<field>`` and ``dual_<field>``, as the current format stores a fixed
# pair, so a file of fixed pairs relabelled to an older format makes the same claim.
_OLDER_FORMATS = (1, 2)
_OWN_OLDER_LAYOUTS = ("kernel_svm", "klasso", "robust_l1")

# name -> (problem, options, data, eps, relative, interval)
_CASES = {
    "kernel_svm-bandwidth": ("kernel_svm", dict(c=1.0, bias="dynamic"), "classes", 0.5, False, (0.5, 8.0)),
    "kernel_svm-c": ("kernel_svm", dict(parameter="c", bandwidth=1.0), "classes", 0.1, True, (0.1, 2.0)),
    "klasso-bandwidth": ("klasso", dict(lam=0.1), "sinc", 0.05, False, (0.5, 8.0)),
    "klasso-lam": ("klasso", dict(parameter="lam", bandwidth=1.0), "sinc", 0.02, False, (0.05, 1.0)),
    "robust_l1-bandwidth": ("robust_l1", dict(lam=0.1), "sinc", 0.2, False, (0.5, 8.0)),
    "kernel_ridge-bandwidth": ("kernel_ridge", dict(lam=0.1), "sinc", 2e-3, False, (0.5, 4.0)),
    "toy_projection": ("toy_projection", dict(), "sinc", 0.05, False, (0.1, 10.0)),
    "elastic_net_cvxpy": ("elastic_net_cvxpy", dict(mix=0.5), "linear", 0.02, False, (0.05, 1.0)),
}

#: The domains of a declared problem's options as its mathematics needs them, restated
#: independently of its ``OPTIONS``: the elastic net's dual divides by 1 - mix, and for mix > 1
#: the penalty is not convex (the optimum is -inf for large lambda: a forged mix = 2 claimed a gap
#: 3,394 eps below the truth in 0.4.1).
_MATH_DOMAINS = {"elastic_net_cvxpy": {"mix": lambda v: 0 < v < 1}}


def _data(kind):
    if kind == "linear":
        rng = np.random.default_rng(0)
        X = rng.standard_normal((12, 3))
        return X, X @ np.array([1.0, -1.0, 0.0]) + 0.3 * rng.standard_normal(12)
    return make_classification(n=12, d=2, seed=1) if kind == "classes" else make_sinc(n=12, seed=2)


def _problem_class(name):
    if name == "elastic_net_cvxpy":
        return elastic_net_example().ElasticNet  # registers it (verify looks it up)
    return ToyProjection if name == "toy_projection" else approxpath.get_problem(name)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """name -> (file, X, y): an honest certificate of every case (and one carrying its data)."""
    root = tmp_path_factory.mktemp("fuzz")
    out = {}
    for name, (problem_name, options, data, eps, relative, interval) in _CASES.items():
        X, y = _data(data)
        problem = _problem_class(problem_name)(X, y, **options)
        path = approxpath.approximate_path(problem, eps=eps, interval=interval, relative=relative)
        assert path.certified or not problem.bound.interval_bound and not path.uncovered(), name
        out[name] = (path.save(root / f"{name}.npz", embed_data=False), X, y)
    name, X, y = "kernel_svm-bandwidth", *_data("classes")
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.5, interval=(0.5, 8.0))
    out["carried-data"] = (path.save(root / "carried.npz"), None, None)
    return out


# ------------------------------------------------------------------------------ the reference
def _at(point, tau):
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


def _claim_is_true(file, X, y):
    """Whether what ``file`` claims holds, decided without the verifier (see the module doc)."""
    arrays, meta = read_certificate(file)
    if X is None:
        X, y = arrays.get("data_X"), arrays.get("data_y")
        if X is None or y is None:
            return False
    eps, relative, interval = meta.get("eps"), meta.get("relative"), meta.get("interval")
    if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and math.isfinite(eps) and eps > 0):
        return False
    if not isinstance(relative, bool) or not (isinstance(interval, list) and len(interval) == 2):
        return False
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in interval):
        return False
    t_lo, t_hi = interval
    if not 0 < t_lo < t_hi:
        return False
    name = meta.get("problem")
    try:
        problem = _problem_class(name)(np.asarray(X), np.asarray(y), **meta["options"])
    except Exception:
        return False
    for option, inside in _MATH_DOMAINS.get(name, {}).items():
        if not inside(problem.options()[option]):
            return False
    if meta.get("kernel", KERNEL) != KERNEL or meta.get("n", problem.n) != problem.n \
            or meta.get("d", problem.X.shape[1]) != problem.X.shape[1] \
            or meta.get("parameter", problem.parameter) != problem.parameter:
        return False
    lo, hi, kind = arrays["lo"], arrays["hi"], arrays["kind"]
    if lo.dtype.kind != "f" or hi.dtype.kind != "f" or lo.shape != hi.shape or lo.size == 0:
        return False
    if not (lo[0] == t_lo and hi[-1] == t_hi and np.all(hi[:-1] == lo[1:]) and np.all(lo <= hi)):
        return False
    version = meta.get("format_version")
    if type(version) is not int or version not in (*_OLDER_FORMATS, FORMAT_VERSION):
        return False
    older = version != FORMAT_VERSION
    if older and name in _OWN_OLDER_LAYOUTS:
        return False  # those formats stored these problems' pairs in other arrays
    rng = np.random.default_rng(0)
    per = {k: v for k, v in arrays.items() if k not in ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi")}
    for i in range(lo.size):
        if str(kind[i]) not in KINDS or str(kind[i]) == "uncovered":
            return False
        a, b = float(lo[i]), float(hi[i])
        try:
            primal, dual = problem.bound.piece_from_arrays({k: v[i] for k, v in per.items()}, a, b)
        except (KeyError, ValueError, TypeError, IndexError):
            return False
        if older and (isinstance(primal, Moving) or isinstance(dual, Moving)):
            return False  # the older formats store one fixed pair per piece for the other problems
        for point in (primal, dual):  # a moving point is defined on its span only
            if isinstance(point, Moving) and not (np.all(np.isfinite(point.weights)) and point.span[0] <= a
                                                  and b <= point.span[1] and math.isfinite(point.span[1] - point.span[0])):
                return False
        taus = [a, b, math.sqrt(a * b)] if kind[i] == "sampled" else \
            [a, b, math.sqrt(a * b), *np.exp(rng.uniform(np.log(a), np.log(b), 6))]
        for tau in taus:
            p = problem.primal_at(_at(primal, tau), tau)
            d = problem.dual_at(_at(dual, tau), tau)
            pv, dv = problem.primal_objective(p, tau), problem.dual_objective(d, tau)
            scale = 1.0 + abs(pv) + abs(dv)
            if problem.primal_violation(p, tau) > _SLACK * scale or problem.dual_violation(d, tau) > _SLACK * scale:
                return False
            goal = eps * dv if relative else eps
            if not pv - dv <= goal + _SLACK * scale:
                return False
            if not pv - dv <= float(arrays["gap_bound"][i]) + _SLACK * scale:
                return False
    return True


def _verify_outcome(file, X, y):
    """True when verify accepts ``file``, False when it rejects it cleanly."""
    try:
        report = approxpath.verify(file, X, y)
    except InputError:  # data that do not match the file, a file without data: not accepted
        return False
    assert isinstance(report.failures, tuple) and str(report)  # the verdict prints
    return report.ok


def _forge(src, dst, edit):
    arrays, meta = read_certificate(src)
    arrays = {k: v.copy() for k, v in arrays.items()}
    edit(arrays, meta)
    meta["content_sha256"] = content_sha256({k: np.asarray(v) for k, v in arrays.items()}, meta)
    np.savez(dst, meta=np.array(json.dumps(meta)), **arrays)
    return dst


# ------------------------------------------------------------------------------ the forgeries
_BAD_NUMBERS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "neg": -1.0, "zero": 0.0, "huge": 1e300,
                "tiny": 1e-300, "text": "0.5", "bool": True, "none": None, "list": [1.0], "object": {"a": 1}}


def _array_edits(arrays):
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


def _meta_edits(meta):
    """(label, edit) of every meta field (and of every option): values out of the domain,
    NaN/inf, other types, other valid values, missing, and a few fields added."""
    edits = []
    for key, value in meta.items():
        if key == "content_sha256":
            continue
        for label, bad in _BAD_NUMBERS.items():
            edits.append((f"meta {key}:{label}", lambda a, m, key=key, bad=bad: m.__setitem__(key, bad)))
        edits.append((f"meta {key}:missing", lambda a, m, key=key: m.pop(key)))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for label, f in (("x0.5", lambda v: v * 0.5), ("x2", lambda v: v * 2), ("+1", lambda v: v + 1),
                             ("-1", lambda v: v - 1), ("negated", lambda v: -v)):
                edits.append((f"meta {key}:{label}", lambda a, m, key=key, f=f: m.__setitem__(key, f(m[key]))))
        if isinstance(value, bool):
            edits.append((f"meta {key}:flipped", lambda a, m, key=key: m.__setitem__(key, not m[key])))
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
    edits.append(("meta interval+pieces:negative", _negative_bandwidths))
    edits.append(("crafted: weak pair over negative t", _weak_pair_over_negative_bandwidths))
    for opt, value in meta["options"].items():
        for label, bad in dict(_BAD_NUMBERS, other="dynamic", fixed="fixed").items():
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


def _negative_bandwidths(arrays, meta):
    """The forgery of the hostile review: the whole certificate mirrored onto negative
    parameters (K_t = exp(-tD) is indefinite there, no point is eps-optimal)."""
    mirrored = {"lo": -arrays["hi"][::-1], "hi": -arrays["lo"][::-1], "anchor_lo": -arrays["anchor_hi"][::-1],
                "anchor_hi": -arrays["anchor_lo"][::-1]}
    for key, v in list(arrays.items()):
        arrays[key] = mirrored[key].copy() if key in mirrored else v[::-1].copy()
    meta["interval"] = [-meta["interval"][1], -meta["interval"][0]]
    meta["piece_kinds"] = meta["piece_kinds"][::-1]
    meta["solve_points"] = sorted(-t for t in meta["solve_points"])


def _weak_pair_over_negative_bandwidths(arrays, meta):
    """A crafted forgery: the zero dual (a gap bound of C sum(xi) whatever t is, no kernel
    involved) with a large eps, over negative bandwidths -- every bound holds arithmetically,
    only the domain t > 0 tells the claim is false (the primal is unbounded below there)."""
    _negative_bandwidths(arrays, meta)
    for key in arrays:
        if key not in ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi"):
            arrays[key] = np.zeros_like(arrays[key])
    meta["eps"] = 1e6
    arrays["gap_bound"] = np.full_like(arrays["gap_bound"], 1e5)


def _moving_edits(arrays):
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


def _edits_of(file):
    arrays, meta = read_certificate(file)
    return _array_edits(arrays) + _meta_edits(meta) + _moving_edits(arrays)


# The kind of each forgery (by its label's suffix): the default suite tries the first forgery of
# every kind on every field, the slow one all of them.
_KINDS = {"domain": ("neg", "zero", "huge", "tiny", "x0.5", "x2", "+1e-6", "+1", "-1", "negated", "flipped", "other kind",
                     "unknown kind", "wider", "narrower", "from 0", "point", "negative", "added"),
          "nonfinite": ("nan", "inf", "-inf", "to inf"),
          "dtype": ("float32", "int", "complex", "big-endian", "str", "bool", "bytes", "text", "none", "list", "object"),
          "shape": ("drop last", "repeat last", "2-D", "0-d", "extra column", "three"),
          "order": ("reversed", "swap 0 1", "columns reversed", "swapped"),
          "missing": ("missing",),
          "moving": ("span overflow", "span outside", "span reversed", "weights nan", "weights bump", "other point",
                     "review", "all at once")}


def _kind_of(label):
    suffix = label.rsplit(":", 1)[-1]
    return next((k for k, suffixes in _KINDS.items() if suffix in suffixes), "value")


def _first_of_each_kind(edits):
    seen, out = set(), []
    for label, edit in edits:
        if _kind_of(label) == "moving":  # every combination of the moving fields
            out.append((label, edit))
            continue
        key = (label.rsplit(":", 1)[0], _kind_of(label))
        if key not in seen:
            seen.add(key)
            out.append((label, edit))
    return out


def _check_forgeries(certificates, tmp_path, case, select, at_least, edits_of=None, claim_is_true=None,
                     what="files"):
    """Forge ``select(edits_of(file))`` of the honest file ``certificates[case]`` one at a time
    and fail on any that ``verify`` accepts while its claim is false (``claim_is_true``, the
    reference); at least ``at_least`` forgeries must be storable.  Surfaces pass their own."""
    edits_of, claim_is_true = edits_of or _edits_of, claim_is_true or _claim_is_true
    file, X, y = certificates[case]
    assert _verify_outcome(file, X, y) and claim_is_true(file, X, y)  # the honest file and the reference agree
    accepted_false, tried = [], 0
    for label, edit in select(edits_of(file)):
        try:
            forged = _forge(file, tmp_path / "forged.npz", edit)
        except (TypeError, ValueError, KeyError, IndexError):  # numpy/json cannot even store it
            continue
        tried += 1
        if _verify_outcome(forged, X, y) and not claim_is_true(forged, X, y):
            accepted_false.append(label)
    assert tried >= at_least, tried
    assert accepted_false == [], f"{case}: forged {what} accepted with a false claim: {accepted_false}"


@pytest.mark.parametrize("case", [*(c for c in _CASES if c != "elastic_net_cvxpy"), "carried-data"])
def test_no_forged_field_makes_a_false_claim_pass(certificates, tmp_path, case):
    """Every field, every kind of forgery (domain, NaN/inf, dtype, shape, order, missing): the
    first forgery of each kind (the declared problem, whose verification evaluates CVXPY
    expressions, in the slow test; its options and combinations below)."""
    _check_forgeries(certificates, tmp_path, case, _first_of_each_kind, 100)


@pytest.mark.slow
@pytest.mark.parametrize("case", [*_CASES, "carried-data"])
def test_no_forgery_at_all_makes_a_false_claim_pass(certificates, tmp_path, case):
    """Every forgery of every field (~550 per problem)."""
    _check_forgeries(certificates, tmp_path, case, list, 400)


@pytest.mark.parametrize("forgery", [_negative_bandwidths, _weak_pair_over_negative_bandwidths])
def test_the_negative_bandwidth_forgery_fails(certificates, tmp_path, forgery):
    for case in ("kernel_svm-bandwidth", "klasso-bandwidth", "kernel_svm-c"):
        file, X, y = certificates[case]
        report = approxpath.verify(_forge(file, tmp_path / "neg.npz", forgery), X, y)
        assert not report.ok and any("interval lower end must be > 0" in f for f in report.failures), report


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(sorted(_CASES)), data=st.data())
def test_random_value_perturbations(certificates, tmp_path, case, data):
    """Hypothesis picks an array, an entry and a new value (any float, NaN and inf included)."""
    file, X, y = certificates[case]
    arrays, _ = read_certificate(file)
    key = data.draw(st.sampled_from(sorted(k for k, v in arrays.items() if v.dtype.kind == "f")))
    index = data.draw(st.integers(0, arrays[key].size - 1))
    value = data.draw(st.floats(allow_nan=True, allow_infinity=True))

    def edit(ar, m):
        ar[key].reshape(-1)[index] = value

    forged = _forge(file, tmp_path / "rand.npz", edit)
    if _verify_outcome(forged, X, y):
        assert _claim_is_true(forged, X, y), (case, key, index, value)


# ------------------------------------------------------------------ option domains of declared problems
def _option_domain_edits(file):
    """(label, edit) of every option of a declared problem: each end of an open interval
    ("between") and the floats just outside it, far outside, and the domain's type errors."""
    arrays, meta = read_certificate(file)
    specs = _problem_class(meta["problem"]).Bound.OPTIONS
    edits = [(label, edit) for label, edit in _meta_edits(meta) if label.startswith("option ")]
    for name, spec in specs.items():
        if spec.kind != "between":
            continue
        low, high = spec.bounds
        for label, value in (("low", low), ("high", high), ("below", math.nextafter(low, -math.inf)),
                             ("above", math.nextafter(high, math.inf)), ("twice high", 2 * high), ("-high", -high)):
            edits.append((f"option {name}:{label}", lambda a, m, o=name, v=value: m["options"].__setitem__(o, v)))
    return edits


def test_option_domains_of_a_declared_problem_are_checked(certificates, tmp_path):
    """The elastic net declares mix in (0, 1) (0.4.1: "positive", and a file forged with mix = 2
    verified while its claim was 3,394 eps off): every option forgery is refused or true."""
    file, X, y = certificates["elastic_net_cvxpy"]
    _check_forgeries(certificates, tmp_path, "elastic_net_cvxpy", lambda edits: _option_domain_edits(file), 20)
    forged = _forge(file, tmp_path / "mix2.npz", lambda a, m: m["options"].__setitem__("mix", 2.0))
    report = approxpath.verify(forged, X, y)
    assert not report.ok and "mix must be strictly between 0 and 1" in report.failures[0]


# ------------------------------------------------------------------ several fields at once
def _moved(factor):
    """The whole certificate moved to other parameter values (interval, pieces, exact solves,
    solve points scaled together: the tiling stays consistent, only the mathematics can tell)."""
    def edit(arrays, meta):
        for key in ("lo", "hi", "anchor_lo", "anchor_hi"):
            arrays[key] = arrays[key] * factor
        meta["interval"] = [v * factor for v in meta["interval"]]
        meta["solve_points"] = [v * factor for v in meta["solve_points"]]
    return edit


def _relabel(kind):
    """Every piece relabelled ``kind`` in both the array and meta."""
    def edit(arrays, meta):
        arrays["kind"] = np.full_like(arrays["kind"], kind)
        meta["piece_kinds"] = [kind] * arrays["kind"].size
    return edit


def _claim_and_bounds(scale):
    """eps and every stored gap bound scaled together (a stronger claim, consistent numbers)."""
    def edit(arrays, meta):
        meta["eps"] = meta["eps"] * scale
        arrays["gap_bound"] = arrays["gap_bound"] * scale
    return edit


def _swap_pairs(arrays, meta):
    """The pairs of the first and the last piece exchanged, their spans kept."""
    for key, v in arrays.items():
        if key not in ("lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi") and v.shape[0] > 1:
            v[[0, -1]] = v[[-1, 0]]


def _combine(*edits):
    def edit(arrays, meta):
        for e in edits:
            e(arrays, meta)
    return edit


_COHERENT = {"moved x2": _moved(2.0), "moved x0.5": _moved(0.5), "moved x1e3": _moved(1e3),
             "all certified": _relabel("certified"), "all sampled": _relabel("sampled"),
             "eps and bounds x0.5": _claim_and_bounds(0.5), "eps and bounds x0.01": _claim_and_bounds(0.01),
             "pairs swapped": _swap_pairs, "moved x2, all certified": _combine(_moved(2.0), _relabel("certified")),
             "pairs swapped, eps x0.5": _combine(_swap_pairs, _claim_and_bounds(0.5))}


@pytest.mark.parametrize("case", [*_CASES, "carried-data"])
def test_no_combination_of_forged_fields_makes_a_false_claim_pass(certificates, tmp_path, case):
    """Coherent forgeries of several fields (the certificate moved to other parameters, every
    kind relabelled, eps and the bounds lowered together, pairs exchanged) and 12 random pairs
    of single-field forgeries (seeded)."""
    def select(edits):
        rng = np.random.default_rng(sum(map(ord, case)))
        picks = [rng.choice(len(edits), 2, replace=False) for _ in range(12)]
        return [*_COHERENT.items(), *((f"{edits[i][0]} + {edits[j][0]}", _combine(edits[i][1], edits[j][1]))
                                      for i, j in picks)]

    _check_forgeries(certificates, tmp_path, case, select, 15)
