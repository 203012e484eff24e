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

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import approxpath
from approxpath.certificate.format import FORMAT_VERSION, KERNEL, KINDS, read_certificate
from approxpath.data import make_classification, make_sinc
from approxpath.moving import Moving
from approxpath.testing import ToyProjection
from certificate_helpers import (array_edits, check_forgeries, elastic_net_example, first_of_each_kind, meta_edits,
                                 moving_edits, negative_bandwidths, point_at, tamper, verify_outcome,
                                 weak_pair_over_negative_bandwidths)

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
            p = problem.primal_at(point_at(primal, tau), tau)
            d = problem.dual_at(point_at(dual, tau), tau)
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


# ------------------------------------------------------------------------------ the forgeries
def _edits_of(file):
    """Every single-field forgery of a path certificate (:mod:`certificate_helpers`)."""
    arrays, meta = read_certificate(file)
    return array_edits(arrays) + meta_edits(meta) + moving_edits(arrays)


def _check_forgeries(certificates, tmp_path, case, select, at_least):
    check_forgeries(certificates, tmp_path, case, select, at_least, edits_of=_edits_of, claim_is_true=_claim_is_true)


@pytest.mark.parametrize("case", [*(c for c in _CASES if c != "elastic_net_cvxpy"), "carried-data"])
def test_no_forged_field_makes_a_false_claim_pass(certificates, tmp_path, case):
    """Every field, every kind of forgery (domain, NaN/inf, dtype, shape, order, missing): the
    first forgery of each kind (the declared problem, whose verification evaluates CVXPY
    expressions, in the slow test; its options and combinations below)."""
    _check_forgeries(certificates, tmp_path, case, first_of_each_kind, 100)


@pytest.mark.slow
@pytest.mark.parametrize("case", [*_CASES, "carried-data"])
def test_no_forgery_at_all_makes_a_false_claim_pass(certificates, tmp_path, case):
    """Every forgery of every field (~550 per problem)."""
    _check_forgeries(certificates, tmp_path, case, list, 400)


@pytest.mark.parametrize("forgery", [negative_bandwidths, weak_pair_over_negative_bandwidths])
def test_the_negative_bandwidth_forgery_fails(certificates, tmp_path, forgery):
    for case in ("kernel_svm-bandwidth", "klasso-bandwidth", "kernel_svm-c"):
        file, X, y = certificates[case]
        report = approxpath.verify(tamper(file, tmp_path / "neg.npz", forgery, rehash=True), X, y)
        assert not report.ok and any("interval lower end must be > 0" in f for f in report.failures), report


@settings(max_examples=40, deadline=None, derandomize=True,  # (the same 40 cases on every run)
          suppress_health_check=[HealthCheck.function_scoped_fixture])
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

    forged = tamper(file, tmp_path / "rand.npz", edit, rehash=True)
    if verify_outcome(forged, X, y):
        assert _claim_is_true(forged, X, y), (case, key, index, value)


# ------------------------------------------------------------------ option domains of declared problems
def _option_domain_edits(file):
    """(label, edit) of every option of a declared problem: each end of an open interval
    ("between") and the floats just outside it, far outside, and the domain's type errors."""
    arrays, meta = read_certificate(file)
    specs = _problem_class(meta["problem"]).Bound.OPTIONS
    edits = [(label, edit) for label, edit in meta_edits(meta) if label.startswith("option ")]
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
    forged = tamper(file, tmp_path / "mix2.npz", lambda a, m: m["options"].__setitem__("mix", 2.0), rehash=True)
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
