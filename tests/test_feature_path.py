"""The L1KR feature path (approxpath.exact.feature_path) against independent references.

References: a CVXPY (Clarabel) solve of the inner kernel ridge problem at fixed beta; finite
differences of the inner optimal value (envelope theorem: dV/dbeta_j = -lambda q_j); a local
optimizer (SLSQP) of problem (1) at fixed D started from the path's beta; weak duality; the
closed-form start of Lemma 1.
"""

import math

import numpy as np
import pytest
import scipy.optimize

from approxpath.errors import InputError, SolverError
from approxpath.exact import crosscheck_feature_path, feature_path
from approxpath.exact.feature_path import (RESIDUALS, normalize_columns, plot_feature_path, read_feature_path,
                                           write_feature_path)
from approxpath.exact.feature_path._kernels import make_kernel
from approxpath.exact.feature_path._kkt import inner_solve
from exact_helpers import cvxpy_inner, friedman1

C_GAUSS = 1000.0  # alpha'K alpha <= C: ~0.3 ||Hy||^2 on the set below, a path with joins and leaves


@pytest.fixture(scope="module")
def gauss():
    X, y = friedman1(50, 8, 1)
    return feature_path(X, y, C=C_GAUSS)


@pytest.fixture(scope="module")
def poly():
    X, y = friedman1(50, 8, 1)
    return feature_path(X, y, C=300.0, kernel="ard-polynomial", degree=4)


def test_every_point_certified_inner_gap_and_kkt(gauss, poly):
    for path in (gauss, poly):
        rep = path.report
        assert rep.ok and len(rep.checks) == len(path) >= 50
        assert rep.max_rel_gap <= 1e-8 and rep.max_kkt <= 1e-6
        # the certified gap is an upper bound: never below the plain difference primal - dual
        assert all(c.gap >= c.primal - c.dual - 1e-9 * (1 + abs(c.primal)) for c in rep.checks)
        assert all(c.shrink < 1e-6 for c in rep.checks)
    assert {e.kind for e in gauss.events} == {"start", "joined", "left"}  # the fixture exercises E2 too


def test_twenty_points_match_an_independent_cvxpy_solve_at_fixed_beta(gauss):
    kern = make_kernel("ard-gaussian", gauss.X)
    scale = float(np.sum((gauss.y - gauss.y.mean()) ** 2))
    for i in np.linspace(0, len(gauss) - 1, 20).astype(int):
        K = kern.at(gauss.beta[i]).K
        opt, fit_ref, a0_ref, lam_ref = cvxpy_inner(K, gauss.y, C_GAUSS)
        check = gauss.report.checks[i]
        # our point's objective is the optimum; our certified dual bound lies below it
        assert abs(check.primal - opt) <= 1e-8 * scale
        assert check.dual <= opt + 1e-8 * scale
        assert check.primal - opt <= check.gap + 1e-8 * scale
        # the same fitted function (and intercept, up to the solver's accuracy) and multiplier
        fit = K @ gauss.alpha[i] + gauss.alpha0[i]
        assert np.max(np.abs(fit - fit_ref)) <= 1e-4 * np.max(np.abs(gauss.y))
        assert abs(gauss.lam[i] - lam_ref) <= 1e-4 * gauss.lam[i] + 1e-6 * np.max(gauss.lam)
        # (5) and Theorem 1 from the definitions: q_j = -alpha'(D_j o K)alpha with D_j built here
        a = gauss.alpha[i]
        q = np.array([-a @ ((gauss.X[:, j, None] - gauss.X[None, :, j]) ** 2 * K) @ a for j in range(gauss.X.shape[1])])
        act = gauss.active[i]
        unit = np.max(np.abs(q))
        assert np.ptp(q[act]) <= 1e-6 * unit and np.all(q[~act] <= q[act].mean() + 1e-6 * unit)
        assert abs(a @ K @ a - C_GAUSS) <= 1e-8 * C_GAUSS and gauss.lam[i] > 0 and q[act].mean() >= 0


@pytest.mark.parametrize("kernel", ["ard-gaussian", "ard-polynomial"])
def test_forms_are_the_gradient_of_the_inner_optimum(kernel):
    """Envelope theorem: V(beta) = min inner loss has dV/dbeta_j = -lambda alpha' dK_j alpha;
    second derivatives of the forms by central differences."""
    X, y = friedman1(30, 6, 3)
    kern = make_kernel(kernel, X, degree=3)
    C = 50.0
    beta = np.array([3.0, 2.0, 0.5, 1.0, 0.0, 0.0])

    def value(b):
        K = kern.at(b).K
        a, a0, lam = inner_solve(K, y, C)
        return float(np.sum((y - K @ a - a0) ** 2)), a, lam

    _, a, lam = value(beta)
    ev = kern.at(beta)
    g = -lam * ev.forms(a)
    for j in range(6):
        e = np.zeros(6)
        e[j] = 1e-5
        fd = ((value(beta + e)[0] - value(beta - e)[0]) / 2e-5 if beta[j] > 0
              else (-3 * value(beta)[0] + 4 * value(beta + e)[0] - value(beta + 2 * e)[0]) / 2e-5)
        assert fd == pytest.approx(g[j], rel=1e-4, abs=1e-6 * np.max(np.abs(g)))
    rows, cols = [0, 1, 3, 4], [0, 1, 3]
    h = ev.second_forms(a, rows, cols)
    for r, k in enumerate(rows):
        for c, l in enumerate(cols):
            e = np.zeros(6)
            e[l] = 1e-6
            fd = (kern.at(beta + e).forms(a)[k] - kern.at(beta - e).forms(a)[k]) / 2e-6
            assert fd == pytest.approx(h[r, c], rel=1e-5, abs=1e-8 * np.max(np.abs(h)))
            assert h[r, c] == pytest.approx(a @ ev.second(k, l) @ a, rel=1e-10, abs=1e-12 * np.max(np.abs(h)))


def test_points_are_local_minima_of_problem_1_at_their_budget(gauss):
    """SLSQP on min_beta V(beta) s.t. sum(beta) = D, beta >= 0, started at the path's beta,
    finds nothing better (the KKT points of the path are local minima here)."""
    kern = make_kernel("ard-gaussian", gauss.X)

    def value(b):
        K = kern.at(np.maximum(b, 0.0)).K
        a, a0, _ = inner_solve(K, gauss.y, C_GAUSS)
        return float(np.sum((gauss.y - K @ a - a0) ** 2))

    for i in (len(gauss) // 3, 2 * len(gauss) // 3, len(gauss) - 1):
        b0, D = gauss.beta[i], gauss.D[i]
        res = scipy.optimize.minimize(value, b0, method="SLSQP", bounds=[(0, None)] * b0.size,
                                      constraints=[{"type": "eq", "fun": lambda b, D=D: np.sum(b) - D}],
                                      options={"ftol": 1e-12, "maxiter": 200})
        assert res.fun >= value(b0) * (1 - 1e-7)


def test_start_is_lemma_1_and_events_change_the_active_set(gauss):
    X, y = gauss.X, gauss.y
    first = gauss.events[0]
    assert first.kind == "start" and first.index == 0
    assert first.feature == int(np.argmax(np.abs(X.T @ (y - y.mean()))))  # alpha(0) ~ Hy: q_j ~ (x_j'Hy)^2
    assert gauss.selected(0) == (first.feature,)
    kern = make_kernel("ard-gaussian", X)
    for e in gauss.events[1:]:
        before, after = set(gauss.selected(e.index - 1)), set(gauss.selected(e.index))
        assert after == (before | {e.feature} if e.kind == "joined" else before - {e.feature})
        q = kern.at(gauss.beta[e.index]).forms(gauss.alpha[e.index])
        eta = np.mean(q[list(before)])
        assert abs(q[e.feature] - eta) <= 1e-8 * np.max(np.abs(q))  # the event equation (9) holds
        if e.kind == "left":
            assert gauss.beta[e.index, e.feature] == 0.0
            assert q[e.feature] >= q[list(after)].mean() - 1e-8 * np.max(np.abs(q))
        if e.index + 1 < len(gauss):  # the probe / orientation chose the side Theorem 1 allows
            nxt = kern.at(gauss.beta[e.index + 1]).forms(gauss.alpha[e.index + 1])
            if e.kind == "joined":
                assert gauss.beta[e.index + 1, e.feature] > 0
            else:
                assert nxt[e.feature] < nxt[list(after)].mean()
    assert np.all(gauss.beta >= 0) and np.all(gauss.beta[~gauss.active] == 0)
    assert np.all(np.diff(gauss.jacobian_calls_at) >= 0) and gauss.jacobian_calls == gauss.jacobian_calls_at[-1]


def test_crosscheck_flags_exactly_the_corrupted_point(gauss):
    X, y = gauss.X, gauss.y
    args = dict(C=C_GAUSS, kernel="ard-gaussian")
    clean = crosscheck_feature_path(X, y, gauss.D, gauss.beta, gauss.alpha, gauss.alpha0, **args)
    assert clean.ok and np.allclose(clean.rel_gap, gauss.report.rel_gap)
    i, j = len(gauss) // 2, len(gauss) // 3
    act = np.flatnonzero(gauss.beta[i])
    beta = gauss.beta.copy()
    beta[i, act[0]] *= 1.01  # one weight 1 % off, D kept consistent
    D = beta.sum(axis=1)
    rep = crosscheck_feature_path(X, y, D, beta, gauss.alpha, gauss.alpha0, **args)
    assert rep.flagged == (i,)
    assert rep.checks[i].residual("equal") > 1e-6
    alpha = gauss.alpha.copy()
    alpha[j] *= 1 + 1e-4 * np.sin(np.arange(alpha.shape[1]))
    rep = crosscheck_feature_path(X, y, gauss.D, gauss.beta, alpha, gauss.alpha0, **args)
    assert rep.flagged == (j,) and rep.checks[j].residual("stationarity") > 1e-6
    alpha0 = gauss.alpha0.copy()
    alpha0[j] += 1e-3
    rep = crosscheck_feature_path(X, y, gauss.D, gauss.beta, gauss.alpha, alpha0, **args)
    assert rep.flagged == (j,) and rep.checks[j].rel_gap > 1e-8
    beta = gauss.beta.copy()
    out = np.flatnonzero(beta[i] == 0)
    if out.size:  # an inactive feature switched on
        beta[i, out[0]] = 0.05 * gauss.D[i]
        rep = crosscheck_feature_path(X, y, beta.sum(axis=1), beta, gauss.alpha, gauss.alpha0, **args)
        assert rep.flagged == (i,)
    D = gauss.D.copy()
    D[j] *= 1.001  # a claimed budget that is not ||beta||_1
    rep = crosscheck_feature_path(X, y, D, gauss.beta, gauss.alpha, gauss.alpha0, **args)
    assert rep.flagged == (j,) and rep.checks[j].residual("l1") > 1e-6
    assert "point" in str(rep) and rep.to_json()["flagged"] == [j]


def test_inner_gap_bounds_the_suboptimality_of_any_feasible_point():
    """Weak duality with an independent optimum: for perturbed points the certified gap is
    at least P(point) - P* (CVXPY), and the dual bound at most P*."""
    from approxpath.exact.feature_path.certify import check_point

    X, y = friedman1(30, 5, 4)
    kern = make_kernel("ard-gaussian", X)
    beta = np.array([4.0, 4.0, 1.0, 1.0, 0.5])
    K = kern.at(beta).K
    opt, _, a0_ref, _ = cvxpy_inner(K, y, 40.0)
    a_ref, _, _ = inner_solve(K, y, 40.0)
    rng = np.random.default_rng(0)
    for scale in (1e-6, 1e-3, 1e-1):
        a = a_ref * (1 + scale * rng.standard_normal(a_ref.size))
        c = check_point(kern, y, 40.0, beta.sum(), beta, a, a0_ref + scale)
        assert c.dual <= opt + 1e-8 * opt and c.primal >= opt - 1e-8 * opt
        assert c.gap >= c.primal - opt - 1e-8 * opt
        assert c.gap <= 1e3 * (c.primal - c.dual) + 1e-9  # not vacuous either


def test_predict_and_mse_along_the_path(gauss):
    X, y = gauss.X, gauss.y
    i = len(gauss) - 1
    K = make_kernel("ard-gaussian", X).at(gauss.beta[i]).K
    assert np.allclose(gauss.predict(X, i), K @ gauss.alpha[i] + gauss.alpha0[i])
    m = gauss.mse(X, y)
    assert m.shape == (len(gauss),) and m[-1] < m[0]
    assert gauss.certified.shape == (len(gauss),) and gauss.certified.all()
    assert "feature path (L1KR)" in gauss.summary() and "NOT certified" in gauss.summary()
    assert repr(gauss).startswith("FeaturePath(ard-gaussian")


def test_stopping_rules():
    X, y = friedman1(40, 6, 2)
    p = feature_path(X, y, C=300.0, d_max=2.0, certify=False)
    assert p.report is None and p.stop_reason.startswith("d_max") and p.D[-1] == pytest.approx(2.0, rel=1e-6)
    p = feature_path(X, y, C=300.0, max_events=2, certify=False)
    assert len(p.events) == 3 and p.stop_reason.startswith("max_events")
    p = feature_path(X, y, C=300.0, max_steps=5, certify=False)
    assert p.steps == 5 and len(p) == 6


def test_bad_input_is_one_clear_error():
    X, y = friedman1(20, 5, 0)
    with pytest.raises(InputError, match="kernel"):
        feature_path(X, y, C=10.0, kernel="ard-gauss")
    with pytest.raises(InputError, match="C must be a positive"):
        feature_path(X, y, C=-1.0)
    with pytest.raises(InputError, match="degree"):
        feature_path(X, y, C=10.0, kernel="ard-polynomial", degree=0)
    with pytest.raises(InputError, match="degree is the power of the ard-polynomial kernel; the ard-gaussian kernel"):
        feature_path(X, y, C=10.0, degree=7)  # (ignored before: a path of the Gaussian kernel came back)
    with pytest.raises(InputError, match=r"\|x\| <= 1"):
        feature_path(10 * X, y, C=10.0, kernel="ard-polynomial")
    with pytest.raises(InputError, match="constant"):
        feature_path(X, np.ones(20), C=10.0)
    K = 1.0 + np.outer(X[:, 0], X[:, 0])  # rank 2: the least-squares fit has a finite K-norm
    with pytest.raises(SolverError, match="smaller C"):
        inner_solve(K, y, 1e9)
    p = feature_path(X, y, C=10.0, max_steps=3)
    with pytest.raises(InputError, match="features"):
        p.predict(X[:, :3])
    with pytest.raises(InputError, match="index"):
        p.predict(X, 99)
    good = (p.D, p.beta, p.alpha, p.alpha0)
    for k, bad, pattern in [(1, p.beta[:, :2], "columns"), (2, p.alpha[:2], "rows"), (1, -p.beta, ">= 0"),
                            (3, np.full(len(p), np.nan), "NaN")]:
        args = list(good)
        args[k] = bad
        with pytest.raises(InputError, match=pattern):
            crosscheck_feature_path(X, y, *args, C=10.0)
    # a degree with the Gaussian kernel was silently unused (the path's own certify passes none)
    with pytest.raises(InputError, match="^degree is the power of the ard-polynomial kernel; the ard-gaussian kernel "
                                         "has none$"):
        crosscheck_feature_path(X, y, *good, C=10.0, degree=3)


def test_figure_is_built_with_the_object_api(gauss):
    fig = plot_feature_path(gauss, relevant=range(5), title="Friedman #1")
    ax, bx = fig.axes
    assert len(ax.lines) >= 5 and len(bx.lines) == 1
    assert np.allclose(bx.lines[0].get_ydata(), gauss.jacobian_calls_at)


def test_the_figure_shows_flagged_points_and_segments_not_certified(gauss):
    """A path with failures drew the same image as a clean one (305 of 324 segments not
    certified, byte for byte)."""
    from dataclasses import replace

    from approxpath.exact.feature_path.result import SegmentCheck, SegmentReport

    clean = [t.get_text() for t in plot_feature_path(gauss).axes[0].get_legend().get_texts()]
    assert not any("flagged" in t or "not certified" in t for t in clean)
    checks = tuple(replace(c, flagged=c.index in (1, 2)) for c in gauss.report.checks)
    report = replace(gauss.report, checks=checks)
    segments = SegmentReport(eps=1e-3, max_pieces=4, segments=(SegmentCheck(0, (gauss.D[0], gauss.D[1]), False, 0.1, 4, False),))
    fig = plot_feature_path(replace(gauss, report=report), segments=segments)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "flagged points (2)" in texts and "segments not certified (1)" in texts


def test_file_round_trip_and_crosscheck_from_file(gauss, tmp_path):
    f = tmp_path / "fp.npz"
    write_feature_path(gauss, f, data_file="friedman1")
    data = read_feature_path(f)
    meta = data["meta"]
    assert meta["kernel"] == "ard-gaussian" and meta["C"] == C_GAUSS and meta["points_certified"]
    assert [tuple(e) for e in data["events"]] == [(e.index, e.feature, ("start", "joined", "left").index(e.kind))
                                                  for e in gauss.events]
    rep = crosscheck_feature_path(gauss.X, gauss.y, data["D"], data["beta"], data["alpha"], data["alpha0"],
                                  C=data["meta"]["C"], kernel=data["meta"]["kernel"], degree=data["meta"]["degree"])
    assert rep.ok and np.array_equal(rep.rel_gap, data["rel_gap"])
    assert gauss.degree is None and data["meta"]["degree"] is None  # (the Gaussian has none: it stored 2)
    np.savez(tmp_path / "bad.npz", D=data["D"])
    with pytest.raises(InputError, match="lacks"):
        read_feature_path(tmp_path / "bad.npz")
    with pytest.raises(InputError, match="does not exist"):
        read_feature_path(tmp_path / "none.npz")
    arrays = {k: data[k] for k in ("D", "beta", "alpha", "alpha0")}
    for meta, match in (("{not json", "meta is not JSON"), ("[1, 2]", "meta is a JSON list")):
        np.savez(tmp_path / "bad_meta.npz", meta=np.array(meta), **arrays)
        with pytest.raises(InputError, match=match):
            read_feature_path(tmp_path / "bad_meta.npz")


def test_an_old_file_s_degree_of_a_gaussian_path_reads_as_none(gauss, tmp_path):
    """Files before 0.5.0 stored degree 2 for the Gaussian kernel, which crosscheck_feature_path
    now refuses with it."""
    import json

    f = tmp_path / "old.npz"
    write_feature_path(gauss, f)
    with np.load(f) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["meta"] = np.array(json.dumps(dict(json.loads(str(arrays["meta"])), degree=2)))
    np.savez(f, **arrays)
    assert read_feature_path(f)["meta"]["degree"] is None


def test_residual_names_are_stable():
    assert RESIDUALS == ("stationarity", "budget", "equal", "maximality", "sign", "l1")
    assert math.isclose(normalize_columns(np.array([[1.0, 2.0], [3.0, 2.0]]))[0, 0], -2 ** -0.5)


@pytest.mark.slow
def test_friedman1_paper_setting_test_mse_within_factor_2_of_table_1():
    """The paper's Friedman #1 clean set-up (200 training points, 5 irrelevant features): the
    certified point chosen on 100 validation points has test MSE <= 0.04 (Table 1: 0.02) and the
    five relevant features carry almost all of the budget."""
    X, y = friedman1(800, 10, 11, raw=True)
    Xtr, ytr = normalize_columns(X[:200]), y[:200]  # validation and test scaled as the training rows
    C = 8.0 * float(np.sum((ytr - ytr.mean()) ** 2))
    path = feature_path(Xtr, ytr, C=C, max_steps=3000)
    val = path.mse(normalize_columns(X[200:300], X[:200]), y[200:300])
    val[~path.certified] = np.inf
    i = int(np.argmin(val))
    test = float(np.mean((path.predict(normalize_columns(X[300:], X[:200]), i) - y[300:]) ** 2))
    assert path.certified[i] and test <= 0.04
    assert path.beta[i, :5].sum() >= 0.95 * path.D[i]


def test_the_summary_and_the_table_number_features_as_the_figure_does():
    """The summary said "feature 3 start" and the table's event_feature 1 (Python's indices) beside
    the columns beta1 ... betad and the figure's x1 ... xd, which count from 1."""
    X, y = friedman1(40, 10, 0)
    path = feature_path(normalize_columns(X), y, C=2.0 * np.sum((y - y.mean()) ** 2), max_events=2)
    first, joined = path.events[0], path.events[1]
    summary = path.summary()
    assert f"x{first.feature + 1} start   active now [x{first.feature + 1}]" in summary, summary
    _, cols = path.table_columns()
    assert cols["event_feature"][joined.index] == joined.feature + 1
    assert cols[f"beta{joined.feature + 1}"][joined.index - 1] == 0 < cols[f"beta{joined.feature + 1}"][-1]
    assert cols["event_feature"][0] == 0 and np.count_nonzero(cols["event_feature"]) == len(path.events) - 1
