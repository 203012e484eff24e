"""The lambda-path's up/down-dated Cholesky factor against the LU version it replaces, the factor
against a fresh factorization of the matrix it represents, and the refactorization rule."""

import numpy as np
import pytest
import scipy.linalg

from approxpath.data import make_sinc
from approxpath.exact import certify
from approxpath.exact._lambda import _lambda_path
from approxpath.exact._lambda_rate import RateEngine
from approxpath.exact._linalg import ActiveFactor, kkt_matrix, kkt_solve
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import gaussian
from exact_helpers import wang_sinc


def _five_d(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    return X, np.sin(X[:, 0]) + X[:, 1] ** 2 / 4 + 0.1 * rng.standard_normal(n)


# well-conditioned paths (largest condition estimate of the systems <= 1e8)
WELL = [("wang0", 1.0), ("wang0", 10.0), ("wang1", 1.0), ("wang1", 20.0), ("sinc30", 1.0), ("sinc30", 10.0),
        ("five_d", 0.5)]


@pytest.fixture(scope="module")
def sets():
    return {"wang0": wang_sinc(0), "wang1": wang_sinc(1),
            "sinc30": make_sinc(n=30, low=-3.0, high=3.0, noise=0.08, seed=1), "five_d": _five_d()}


def _same_events(a, b):
    return [(e.index, e.kind, e.sign) for e in a.events] == [(e.index, e.kind, e.sign) for e in b.events]


@pytest.mark.parametrize("name,bw", WELL)
def test_updates_match_the_lu_version_to_their_conditioning(sets, name, bw):
    """Two backward-stable solvers of the same systems agree to cond u (times the solution's
    size): that is the tolerance, not a fixed one.  Measured at most 0.031 of it with
    OpenBLAS's SkylakeX, Haswell and Nehalem kernels; a fixed 1e-10 held on the first two and
    failed on Nehalem's (wang0 at bandwidth 10: 1.19e-10, cond 4.8e7)."""
    X, y = sets[name]
    lu = _lambda_path(X, y, bw, factor="lu")
    up = _lambda_path(X, y, bw, factor="update")
    assert lu.max_cond <= 1e8 and up.stop_reason == lu.stop_reason == "lam_min"
    assert _same_events(lu, up) and len(up.events) > 10
    np.testing.assert_allclose(up.t, lu.t, rtol=0, atol=1e-10)  # the breakpoints (lambda_max ~ 1-5; at most 6e-13)
    tol = lu.max_cond * 2.0**-53 * np.abs(lu.beta).max()
    np.testing.assert_allclose(up.beta, lu.beta, rtol=0, atol=tol)
    np.testing.assert_allclose(up.beta0, lu.beta0, rtol=0, atol=tol)
    assert up.settings["lu_fallbacks"] == 0


@pytest.mark.parametrize("name,bw", [("wang0", 0.1), ("sinc30", 0.1)])
def test_ill_conditioned_paths_agree_to_their_conditioning_and_are_certified(sets, name, bw):
    """cond ~1e11-1e12: two backward-stable solvers differ by ~cond u; both are certified."""
    X, y = sets[name]
    lu = _lambda_path(X, y, bw, factor="lu")
    up = _lambda_path(X, y, bw, factor="update")
    assert lu.max_cond > 1e10 and _same_events(lu, up)
    scale = np.abs(lu.beta).max()
    assert np.abs(up.beta - lu.beta).max() <= 1e3 * lu.max_cond * 2.0**-53 * scale
    for p in (lu, up):
        assert certify(p, tol=1e-8, relative=True).ok


def test_factor_updates_equal_a_fresh_factorization():
    X, y = _five_d(80, seed=1)
    K = gaussian(sq_distances(X), 0.5)
    KcT = np.ascontiguousarray((K - K.mean(axis=0)).T)
    nu = 1e-4
    f = ActiveFactor(KcT, nu)
    rng = np.random.default_rng(0)
    active = []
    for step in range(60):  # joins and leaves in random order, as along a path
        if active and (len(active) > 25 or rng.random() < 0.3):
            j = active.pop(int(rng.integers(len(active))))
            f.delete(j)
        else:
            j = int(rng.choice(np.setdiff1d(np.arange(80), active)))
            active.append(j)
            f.append(j)
        assert f.order == active
        if not active:
            continue
        H = KcT[active] @ KcT[active].T + nu * np.eye(len(active))  # the matrix, formed here
        np.testing.assert_allclose(f.H, H, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(f.R.T @ f.R, H, rtol=0, atol=1e-12 * np.abs(H).max())
        b = rng.standard_normal(len(active))
        np.testing.assert_allclose(f.solve(b), np.linalg.solve(H, b), rtol=1e-9)
        true = np.linalg.cond(H, 1)
        assert true / 10 <= f.cond() <= true * (1 + 1e-8)  # LAPACK's estimate is a lower bound


def test_a_drifted_factor_is_refactored_and_the_rate_is_the_lu_rate():
    X, y = wang_sinc(0)
    K = gaussian(sq_distances(X), 10.0)  # narrow kernel: a well-conditioned system
    engine = RateEngine(K, 0.0, "update")
    signs = np.zeros(50, dtype=np.int8)
    for j, s in ((3, 1), (17, -1), (29, 1), (41, -1), (8, 1)):
        signs[j] = s
        engine.joined(j)
    engine.active.R[1, 3] *= 1 + 1e-6  # an update that lost accuracy
    act, rA, r0, a, cond, solves = engine.rate(signs)
    assert engine.active.refactors == 1 and solves == 2
    rate, _ = kkt_solve(kkt_matrix(K[:, act], 0.0), np.concatenate(([0.0], signs[act].astype(float))))
    np.testing.assert_allclose(rA, rate[1:], rtol=1e-10)
    assert r0 == pytest.approx(rate[0], rel=1e-10)
    np.testing.assert_allclose(a, K @ (K[:, act] @ rA + r0), rtol=1e-10, atol=1e-12)
    # an intact factor is used as it is
    engine.rate(signs)
    assert engine.active.refactors == 1


def test_duplicate_points_singular_system_and_ridge():
    """A copy of the first point to join: once both are active the reduced matrix is singular.
    Without a ridge a version stops there saying so, or, where rounding leaves the second copy
    just short of joining (a tie: its correlation is the first's, on the boundary), runs to
    lam_min with one copy standing for both, which is as optimal; every solution returned is
    certified either way (measured: the updated factor's pivot of the two copies was tiny and
    positive, not zero, and that version ran to lam_min with points certify rejected, until it
    handed such segments to LU; the oldest numpy's OpenBLAS on an Intel Xeon runs the updated
    version to lam_min, the newest stops singular).  With a ridge they run to the end and agree."""
    X, y = wang_sinc(2)
    j0 = int(np.argmax(np.abs(gaussian(sq_distances(X), 1.0) @ (y - y.mean()))))
    X, y = np.vstack([X, X[j0:j0 + 1]]), np.concatenate([y, y[j0:j0 + 1]])
    copy = len(y) - 1  # the appended copy's index
    lu = _lambda_path(X, y, 1.0, factor="lu")
    up = _lambda_path(X, y, 1.0, factor="update")
    # the two copies taken as one point, the same events up to the shorter path's last (a copy
    # joining the other: numpy 2.4, 8 of 9 events, the versions' last two copies swapped; numpy
    # 1.24 and scipy 1.10, the LU version's second copy joins at once, its second event)
    def seen(e):
        return ("a copy" if e.index in (j0, copy) else e.index, e.kind)

    k = min(len(up.events), len(lu.events)) - 1
    assert k >= 1 and list(map(seen, up.events[:k])) == list(map(seen, lu.events[:k]))
    for p in (lu, up):
        assert certify(p, tol=1e-8, relative=True).ok
        if "singular" in p.stop_reason:
            last = p.events[-1]  # the second copy joins the first: the system is singular there
            other = copy if last.index == j0 else j0
            assert last.kind == "joined" and last.index in (j0, copy) and p.signs[0][other] != 0
        else:  # the tie went the other way: never both copies active
            assert p.stop_reason == "lam_min" and not any(s[j0] and s[copy] for s in p.signs)
    lu = _lambda_path(X, y, 1.0, factor="lu", nu=1e-3)
    up = _lambda_path(X, y, 1.0, factor="update", nu=1e-3)
    assert up.stop_reason == lu.stop_reason == "lam_min" and _same_events(lu, up)
    np.testing.assert_allclose(up.beta, lu.beta, rtol=0, atol=1e-10)


def test_copies_are_found_bit_for_bit_and_named_in_pairs_of_active_points():
    """Points 0, 3 and 5 equal, 2 a near copy of 0 (1e-6 apart): with 3 and 5 active the
    refusal names those two (not the group's first, 0); 0 with 2 is no copy."""
    from approxpath.exact._common import ExactPathError
    from approxpath.exact._linalg import column_copies, refuse_copies

    X, _ = wang_sinc(0)
    X = X[:8].copy()
    X[3] = X[5] = X[0]
    X[2] = X[0] + 1e-6
    K = gaussian(sq_distances(X), 1.0)
    copy_of = column_copies(K)
    assert [int(c) for c in copy_of] == [0, 1, 2, 0, 4, 0, 6, 7]
    assert column_copies(K[np.ix_([0, 1, 2], [0, 1, 2])]) is None
    with pytest.raises(ExactPathError, match="points 3 and 5 are copies"):
        refuse_copies(copy_of, np.array([1, 3, 5]))
    refuse_copies(copy_of, np.array([0, 1, 2, 4]))


def test_cholesky_of_the_reduced_matrix_is_the_bordered_system():
    """The reduced matrix (centred kernel columns) gives the bordered system's solution: the
    elimination of the bias that the update version relies on."""
    X, y = wang_sinc(0)
    K = gaussian(sq_distances(X), 1.0)
    act = np.array([2, 11, 23, 37])
    s = np.array([1.0, -1.0, -1.0, 1.0])
    nu = 1e-3
    Kc = K - K.mean(axis=0)
    x = scipy.linalg.solve(Kc[:, act].T @ Kc[:, act] + nu * np.eye(4), s, assume_a="pos")
    rate, _ = kkt_solve(kkt_matrix(K[:, act], nu), np.concatenate(([0.0], s)))
    np.testing.assert_allclose(x, rate[1:], rtol=1e-9)
    assert -K[:, act].mean(axis=0) @ x == pytest.approx(rate[0], rel=1e-9)
