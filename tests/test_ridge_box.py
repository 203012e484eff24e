"""Kernel ridge's closed-form criteria over both the bandwidth and λ, with no path: cells of the
(t, λ) plane enclosed from the exact optima at their corners.  References: dense numpy values
(LOOCV by n refits, GCV by an eigendecomposition, LML by slogdet) at random points of random
cells, the chord lemma against a random spectrum, and the choice against a dense grid."""

import json
import math

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.errors import InputError

from ridge_helpers import dense_criteria, gram

pytestmark = pytest.mark.usefixtures("one_blas_thread")

CRITERIA = ("loocv", "gcv", "lml")


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=60, noise=0.2, seed=3)


def _log_uniform(rng, lo, hi, size=None):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


@pytest.mark.parametrize("name", CRITERIA)
def test_cells_contain_the_dense_criterion_at_random_points(sinc, name):
    X, y = sinc
    rng = np.random.default_rng(CRITERIA.index(name))
    base = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    for _ in range(5):
        t1 = float(_log_uniform(rng, 0.2, 30.0))
        t2 = t1 * math.exp(rng.uniform(0.02, 0.6))
        w1 = float(_log_uniform(rng, 1e-3, 1.0))
        w2 = w1 * math.exp(rng.uniform(0.01, 0.7))
        b1, b2 = base.with_weight(w1).bound, base.with_weight(w2).bound
        first, second = b1.box_edge(name, t1, t2, {}), b2.box_edge(name, t1, t2, {})
        low, high = b1.box_enclosure(first, second)
        assert low <= high
        for e, w in ((first, w1), (second, w2)):  # each edge's own enclosure, at its lambda
            t = float(_log_uniform(rng, t1, t2))
            assert e.enclosure[0] <= dense_criteria(X, y, t, w)[name] <= e.enclosure[1]
            assert low <= e.enclosure[1] and e.enclosure[0] <= high
        for t, w in zip(_log_uniform(rng, t1, t2, 3), _log_uniform(rng, w1, w2, 3)):
            value = dense_criteria(X, y, t, w)[name]
            assert low <= value <= high, (name, t1, t2, w1, w2, t, w, low, value, high)
        # the corners too (where the enclosure is tightest)
        for t, w in ((t1, w1), (t2, w2)):
            assert low <= dense_criteria(X, y, t, w)[name] <= high


def test_the_chord_lemma_against_a_spectrum():
    """rho*(lam) = lam (K + lam I)^-1 y is within (Delta / lam_1)^2 ||y|| / 27 of its chord on
    [lam_1, lam_2]; the worst eigenvalue is lam_1 / 2."""
    rng = np.random.default_rng(0)
    for lam1, ratio in ((0.1, 1.5), (1e-3, 2.0), (0.3, 1.05)):
        lam2 = lam1 * ratio
        mu = np.concatenate([[lam1 / 2], _log_uniform(rng, 1e-6, 1e3, 50)])
        V, _ = np.linalg.qr(rng.standard_normal((mu.size, mu.size)))
        K = (V * mu) @ V.T
        y = V[:, 0] + 0.1 * rng.standard_normal(mu.size)  # mostly along mu = lam1 / 2

        def rho(lam):
            return lam * np.linalg.solve(K + lam * np.eye(mu.size), y)

        bound = ((lam2 - lam1) / lam1) ** 2 * np.linalg.norm(y) / 27
        worst = 0.0
        for phi in np.linspace(0, 1, 21):
            lam = lam1 + phi * (lam2 - lam1)
            worst = max(worst, np.linalg.norm(rho(lam) - ((1 - phi) * rho(lam1) + phi * rho(lam2))))
        assert worst <= bound
        assert worst >= 0.1 * bound  # the eigenvalue lam1 / 2 makes the bound nearly attained for small ratios


def test_the_chord_share_and_the_pinched_facts_against_a_spectrum():
    """On each sub-interval [a, b] of [lam_1, lam_2] (box._share, box._pinched, box._log_det): rho*
    within s * ||rho*(lam_2) - rho*(lam_1)|| of its chord, lam d_i and lam tr K~^-1 between their
    pinched bounds, log det between its chord and its tangents -- from the exact values at the two
    ends, tight at the ends (random spectra with many eigenvalues below lam: the hard case)."""
    from approxpath.problems.kernel_ridge.box import _PARTS, _log_det, _pinched, _share

    rng = np.random.default_rng(1)
    for lam1, ratio, low in ((1e-3, 1.3, 1e-9), (1e-3, 4.0, 1e-9), (0.1, 1.5, 1e-9), (0.3, 1.05, 1e-9), (1e-3, 4.0, 10.0)):
        lam2 = lam1 * ratio
        mu = np.concatenate([_log_uniform(rng, low, 1e-2 + low, 30), _log_uniform(rng, 1e-2 + low, 1e2 + low, 20)])
        V, _ = np.linalg.qr(rng.standard_normal((mu.size, mu.size)))
        y = rng.standard_normal(mu.size)

        def exact(lam):
            inv = (V / (mu + lam)) @ V.T
            return lam * inv @ y, lam * np.diag(inv), lam * np.trace(inv), float(np.sum(np.log(mu + lam)))

        (r1, d1, T1, ld1), (r2, d2, T2, ld2) = exact(lam1), exact(lam2)
        lam = np.geomspace(lam1, lam2, _PARTS + 1)
        lam[0], lam[-1] = lam1, lam2
        la, lb = lam[:-1], lam[1:]
        share = _share(la, lb, lam1, lam2)
        d_lo, d_hi = _pinched((d1, d1), (d2, d2), la[:, None], lb[:, None], lam1, lam2)
        T_lo, T_hi = _pinched((T1, T1), (T2, T2), la, lb, lam1, lam2)
        ld_lo, ld_hi = _log_det((None, (T1, T1), (ld1, ld1)), (None, (T2, T2), (ld2, ld2)), la, lb, lam1, lam2)
        change = np.linalg.norm(r2 - r1)
        for j, (a, b) in enumerate(zip(la, lb)):
            for x in np.geomspace(a, b, 7):
                rho, d, T, ld = exact(x)
                phi = (x - lam1) / (lam2 - lam1)
                assert np.linalg.norm(rho - (1 - phi) * r1 - phi * r2) <= share[j] * change * (1 + 1e-9) + 1e-15
                assert np.all(d_lo[j] <= d * (1 + 1e-12)) and np.all(d <= d_hi[j] * (1 + 1e-12))
                assert T_lo[j] <= T * (1 + 1e-12) and T <= T_hi[j] * (1 + 1e-12)
                assert ld_lo[j] - 1e-9 <= ld <= ld_hi[j] + 1e-9
        # pinched: exact at the two ends, and much narrower than the hull of the ends inside
        assert share[0] < 0.5 * share.max() and share[-1] < 0.5 * share.max()
        if low > lam2:  # every eigenvalue above lam: lam d_i and lam tr ~ lam, pinched to ~ a PARTS-th
            assert np.all(np.sum(d_hi - d_lo, axis=1) < 0.3 * np.sum(d2 - d1)) and np.all(T_hi - T_lo < 0.3 * (T2 - T1))


@pytest.fixture(scope="module")
def chosen(sinc):
    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    return {name: approxpath.select_surface(problem, name, bandwidths=(0.5, 16.0), weights=(0.01, 1.0),
                                            tol=0.02 if name != "lml" else 0.5)
            for name in CRITERIA}


@pytest.mark.parametrize("name", CRITERIA)
def test_the_choice_is_within_delta_of_a_dense_grid(sinc, chosen, name):
    X, y = sinc
    s = chosen[name]
    assert s.reached and s.kind == "certified" and s.folds == 0 and s.weight == "lam"
    assert s.sense == ("max" if name == "lml" else "min")
    here = dense_criteria(X, y, s.t, s.w)[name]
    assert s.value[0] <= here <= s.value[1]
    ts, ws = np.geomspace(0.5, 16.0, 25), np.geomspace(0.01, 1.0, 25)
    grid = np.array([[dense_criteria(X, y, t, w)[name] for t in ts] for w in ws])
    sign = 1.0 if s.sense == "min" else -1.0
    # no grid point is better than the choice's guaranteed value by more than delta
    assert np.all(sign * grid >= sign * (s.value[1] if s.sense == "min" else s.value[0]) - s.delta)
    # every grid point lies in its rectangle's enclosure
    for j, w in enumerate(ws):
        for i, t in enumerate(ts):
            a = min(np.searchsorted(s.t_edges, t, side="right") - 1, s.t_edges.size - 2)
            b = min(np.searchsorted(s.w_edges, w, side="right") - 1, s.w_edges.size - 2)
            assert s.lo[b, a] <= grid[j, i] <= s.hi[b, a]
    assert "no path: cells between exact optima" in s.summary()


def test_the_undecided_region_holds_the_choice(chosen):
    for s in chosen.values():
        mask = s.undecided()
        i = np.searchsorted(s.t_edges, s.t) - 1
        j = np.searchsorted(s.w_edges, s.w) - 1
        assert mask[j, i]


def test_the_command_line_chooses_lambda_and_the_bandwidth(sinc, tmp_path, capsys):
    from approxpath.cli import main

    X, y = sinc
    data = tmp_path / "sinc.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    rc = main(["select", "kernel_ridge", "--data", str(data), "--format", "csv", "--criterion", "gcv",
               "--over", "lam,bandwidth", "--weights", "0.01", "1", "--range", "0.5", "16", "--tol", "0.02", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["reached"] and out["weight"] == "lam" and out["folds"] == 0
    assert out["value"][0] <= dense_criteria(X, y, out["t"], out["w"])["gcv"] <= out["value"][1]


def test_a_choice_that_may_be_matched_beyond_the_box_is_flagged(sinc):
    """GCV's best on this set is near t = 11, lam = 0.28 (0.0514 on a dense grid): on a box below
    it the search warns at its upper sides, and the criterion there is indeed better than any
    point of the box; on a box around it, no warning."""
    import warnings

    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    with pytest.warns(UserWarning, match="may be matched at the box's .*upper") as caught:
        s = approxpath.select_surface(problem, "gcv", bandwidths=(0.5, 4.0), weights=(0.01, 0.1), tol=0.005)
    assert "widen the box" in str(caught[0].message)
    assert caught[0].filename == __file__  # the caller's line (not the library's)
    assert dense_criteria(X, y, 11.38, 0.2807)["gcv"] < s.value[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = approxpath.select_surface(problem, "gcv", bandwidths=(2.0, 40.0), weights=(0.03, 3.0), tol=0.005)
    assert s.reached and s.value[0] <= dense_criteria(X, y, s.t, s.w)["gcv"] <= s.value[1]


def test_bad_requests_are_refused_at_once(sinc):
    X, y = sinc
    ridge = approxpath.get_problem("kernel_ridge")
    box = dict(bandwidths=(0.5, 4.0), weights=(0.01, 1.0))
    with pytest.raises(InputError, match="parameter='bandwidth'"):  # a lambda path's problem
        approxpath.select_surface(ridge(X, y, bandwidth=1.0, lam=0.1, parameter="lam"), "loocv", **box)
    with pytest.raises(InputError, match="unknown kernel_ridge criterion"):
        approxpath.select_surface(ridge(X, y, lam=0.1), "mse", **box)
    with pytest.raises(InputError, match="drop cv"):
        approxpath.select_surface(ridge(X, y, lam=0.1), "loocv", cv=3, **box)
    with pytest.raises(InputError, match="weights"):
        approxpath.select_surface(ridge(X, y, lam=0.1), "loocv", bandwidths=(0.5, 4.0))


def test_problems_without_closed_forms_still_need_a_validation_loss():
    X, y = make_sinc(n=20, noise=0.1, seed=0)
    labels = np.where(y > np.median(y), 1.0, -1.0)
    svm = approxpath.get_problem("kernel_svm")(X, labels, c=1.0)
    with pytest.raises(InputError, match="needs a validation loss: pass cv=5"):
        approxpath.select_surface(svm, weights=(0.1, 1.0))


def test_the_reference_kernel_is_the_problems():
    X, _ = make_sinc(n=5, noise=0.1, seed=0)
    problem = approxpath.get_problem("kernel_ridge")(X, X[:, 0], lam=0.1)
    assert np.allclose(gram(X, 0.7), problem.gram(0.7))


def _sloppy_eigh(how, noise):
    """numpy's eigh made inaccurate by ``noise``: its eigenvectors and eigenvalues perturbed at
    random (``random``: K - VMV' grows), or the eigenvectors scaled by 1 + noise and the
    eigenvalues by its inverse square (``scaled``: VMV' stays K, V'V leaves I).  The spectrum's
    error bounds must cover whatever eigh returns."""
    def eigh(K):
        rng = np.random.default_rng(1)
        mu, V = np.linalg.eigh(K)
        if how == "scaled":
            return mu / (1 + noise) ** 2, V * (1 + noise)
        return np.sort(mu * (1 + noise * rng.standard_normal(mu.size))), V + noise * rng.standard_normal(V.shape)
    return eigh


@pytest.mark.parametrize("how, noise", [("random", 0.0), ("random", 1e-9), ("random", 1e-6), ("scaled", 1e-7)])
def test_spectral_facts_contain_the_dense_inverse(sinc, how, noise):
    from approxpath.problems.kernel_ridge.facts import spectral_facts, spectrum

    X, y = sinc
    base = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    for t in (0.13, 1.0, 30.0):
        spec = spectrum(base.bound, t, eigh=_sloppy_eigh(how, noise))
        assert spec.h > noise * 0.1 and spec.f > 0
        for lam in (1e-3, 0.1, 1.0):
            facts = spectral_facts(base.with_weight(lam).bound, t, spec)
            A = gram(X, t) + lam * np.eye(len(y))
            d = np.diag(np.linalg.inv(A))
            assert np.all(facts.diag_lo <= d) and np.all(d <= facts.diag_hi)
            assert facts.trace[0] <= d.sum() <= facts.trace[1]
            assert facts.logdet[0] <= np.linalg.slogdet(A)[1] <= facts.logdet[1]
            if noise == 0.0:  # tight where eigh is accurate, and the optimum and its derivative are numpy's
                assert np.all(facts.diag_hi - facts.diag_lo <= 1e-5 * d)
                c = np.linalg.solve(A, y)
                assert np.allclose(facts.solution, c, rtol=1e-7, atol=1e-9 * np.abs(c).max())
                D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
                dc = np.linalg.solve(A, (D * gram(X, t)) @ c)
                assert np.allclose(facts.derivative, dc, rtol=1e-6, atol=1e-8 * np.abs(dc).max())


def test_delta_never_grows_and_the_cells_hold_the_dense_criterion(sinc):
    # a half's own enclosure can be wider than its cell's: delta rose from 0.061 to 0.107 between
    # rounds of a selection by the log marginal likelihood; a half keeps the intersection
    import time

    from approxpath.surface.nodes import select_box

    X, y = sinc
    problem = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    deltas = []

    class Recorder:
        def update(self, delta, solves):
            deltas.append(delta)

    box = ((0.3, 3.0), (1e-2, 1.0))
    selection, *_ = select_box(problem, "lml", "max", *box, 1e-3, 600, Recorder(), time.perf_counter())
    assert len(deltas) > 3 and all(b <= a for a, b in zip(deltas, deltas[1:]))
    rng = np.random.default_rng(7)
    for t, w in zip(_log_uniform(rng, *box[0], 40), _log_uniform(rng, *box[1], 40)):
        i = min(np.searchsorted(selection.t_edges, t) - 1, selection.t_edges.size - 2)
        j = min(np.searchsorted(selection.w_edges, w) - 1, selection.w_edges.size - 2)
        value = dense_criteria(X, y, t, w)["lml"]
        assert selection.lo[j, i] - 1e-9 <= value <= selection.hi[j, i] + 1e-9
