"""Property-based tests (hypothesis) over random small data, for every registered problem."""

import json

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import approxpath  # noqa: E402
from approxpath.certificate.format import read_certificate  # noqa: E402
from approxpath.errors import InputError  # noqa: E402
from approxpath.registry import available_problems, get_problem  # noqa: E402

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _templates():
    out = []
    for name in available_problems():
        seen = set()
        for problem, interval, eps in get_problem(name).examples():
            if problem.parameter not in seen:
                seen.add(problem.parameter)
                out.append(pytest.param(problem, interval, eps, id=f"{name}-{problem.parameter}"))
    return out


@st.composite
def _data(draw, template):
    n = draw(st.integers(6, 14))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, d))
    if draw(st.booleans()):  # duplicate points must not break anything
        X[1] = X[0]
    if set(np.unique(template.y).tolist()) <= {-1.0, 1.0}:
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        rng.shuffle(y)
    else:
        y = rng.normal(0.0, 1.0, n)
    return X, y


def _instance(template, X, y):
    try:
        return type(template)(X, y, **template.options())
    except InputError:
        hypothesis.assume(False)


def _taus(interval, rng, k):
    lo, hi = interval
    return np.exp(rng.uniform(np.log(lo), np.log(hi), k))


@pytest.mark.parametrize("template,interval,eps", _templates())
def test_restored_points_feasible_and_bounds_dominate(template, interval, eps):
    @SETTINGS
    @given(data=_data(template), frac=st.floats(0.05, 0.95), width=st.floats(0.01, 0.6))
    def check(data, frac, width):
        problem = _instance(template, *data)
        lo, hi = interval
        s_lo, s_hi = np.log(lo), np.log(hi)
        t0 = float(np.exp(s_lo + frac * (s_hi - s_lo)))
        pair = problem.solve(t0)
        a = t0
        b = float(np.exp(min(np.log(t0) + width * (s_hi - s_lo), s_hi)))
        primal, dual = problem.restore(*pair, a, b)
        bound = problem.bound.gap(primal, dual, a, b) if problem.bound.interval_bound else None
        for tau in np.geomspace(a, b, 7):
            scale = 1.0 + abs(problem.dual_objective(dual, tau))
            point = problem.primal_at(primal, tau)
            assert problem.primal_violation(point, tau) <= 1e-9 * scale
            assert problem.dual_violation(dual, tau) <= 1e-9 * scale
            g = problem.gap(primal, dual, tau)  # >= -tiny: asserted by the conftest wrapper
            if bound is not None:
                assert g <= bound

    check()


@pytest.mark.parametrize("template,interval,eps", _templates())
def test_verify_rejects_any_single_field_tampering(template, interval, eps, tmp_path_factory):
    problem = template
    lo, hi = interval
    path = approxpath.approximate_path(problem, eps=eps, interval=(lo, lo * (hi / lo) ** 0.3))
    file = path.save(tmp_path_factory.mktemp("t") / "c.npz")
    arrays, meta = read_certificate(file)
    assert approxpath.verify(file, problem.X, problem.y).ok
    fields = sorted(arrays) + ["meta"]

    @SETTINGS
    @given(field=st.sampled_from(fields), where=st.floats(0, 1), factor=st.sampled_from([-1.0, 0.5, 1 + 1e-12, 2.0]))
    def check(field, where, factor):
        a = {k: v.copy() for k, v in arrays.items()}
        m = json.loads(json.dumps(meta))
        if field == "meta":
            key = sorted(k for k in m if k != "content_sha256")[int(where * (len(m) - 2))]
            m[key] = "tampered" if not isinstance(m[key], (int, float)) or isinstance(m[key], bool) else m[key] * factor + 1
        else:
            v = a[field].reshape(-1)
            i = int(where * (v.size - 1))
            if v.dtype.kind == "U":
                v[i] = "sampled" if v[i] != "sampled" else "certified"
            else:
                old = v[i]
                v[i] = old * factor if old != 0 and old * factor != old else old + 1.0
        bad = file.parent / "bad.npz"
        np.savez(bad, meta=np.array(json.dumps(m)), **a)
        try:
            report = approxpath.verify(bad, problem.X, problem.y)
        except (ValueError, KeyError, TypeError):
            return  # refused outright (e.g. the data hash or the problem options no longer match)
        assert not report.ok

    check()


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 24), bias=st.sampled_from(["fixed", "dynamic", "optimal"]),
       log_c=st.floats(-3.0, 2.0), dual_restoration=st.sampled_from(["moving", "fixed"]))
def test_degenerate_pieces_never_crash_an_svm_path(seed, n, bias, log_c, dual_restoration):
    """Random small two-class problems, every bias rule, C from 1e-3 to 100, moving and fixed
    pairs: the path completes (pieces a few floats wide, coincident solves and all), tiles the
    interval, and what it certifies verifies."""
    from approxpath.data import make_classification

    X, y = make_classification(n=n, d=2, seed=seed)
    problem = get_problem("kernel_svm")(X, y, c=10.0**log_c, bias=bias, dual_restoration=dual_restoration)
    path = approxpath.approximate_path(problem, eps=0.1, interval=(2.0**-3, 2.0**3))
    assert path.pieces[0].lo == 2.0**-3 and path.pieces[-1].hi == 2.0**3
    assert all(a.hi == b.lo for a, b in zip(path.pieces[:-1], path.pieces[1:]))
    for piece in path.pieces[:: max(1, len(path.pieces) // 5)]:
        if piece.kind == "certified":
            assert problem.bound.check(piece.primal, piece.dual, piece.lo, piece.hi) == []


def test_the_review_case_of_a_piece_7e_15_wide():
    """The case of the review: make_classification(n=40, d=2, seed=0), C = 0.5, the fixed bias,
    eps = 0.05 over [2**-4, 2**4] (0.4.1 stopped with ZeroDivisionError on a piece 7e-15 wide)."""
    from approxpath.data import make_classification

    X, y = make_classification(n=40, d=2, seed=0)
    path = approxpath.approximate_path(get_problem("kernel_svm")(X, y, c=0.5, bias="fixed"), eps=0.05,
                                       interval=(2.0**-4, 2.0**4))
    assert path.certified
