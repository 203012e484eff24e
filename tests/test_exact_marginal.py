"""The kernel path's screens (the default Taylor screen, and the marginal-point speed-up for
every xi): the whole interval, every returned solution certified by klasso's duality gap, the
events and solutions of the full check; each screen's bound against the g it bounds (computed
here in full); a point joining and leaving inside one window."""

import numpy as np
import pytest

from approxpath.data import make_sinc
from approxpath.exact import certify, kernel_path
from approxpath.exact._common import PathData
from approxpath.exact._kernel import _KernelTracer
from approxpath.exact._screen import Screen, TaylorScreen
from approxpath.compute.kernels import gaussian

XIS = (0.01, 0.1, 0.3, 0.5)


def _check_against_full(X, y, lam, xis, interval=(0.1, 10.0)):
    full = kernel_path(X, y, lam, interval, screen=False)
    assert full.stop_reason == "end of range" and not full.settings["screen"]
    for xi in (None,) + tuple(xis):  # None: the default, Taylor's screen
        fast = kernel_path(X, y, lam, interval, marginal=xi)
        assert fast.stop_reason == "end of range" and fast.interval == interval, (xi, fast.stop_reason)
        report = certify(fast, tol=1e-6, relative=True)
        assert report.ok and len(report.points) == fast.t.size, (xi, str(report))
        assert [(e.index, e.kind) for e in fast.events] == [(e.index, e.kind) for e in full.events]
        np.testing.assert_array_equal(fast.t, full.t)
        np.testing.assert_allclose(fast.beta, full.beta, rtol=0, atol=1e-12)
        assert 0 < fast.settings["marginal_rows_checked"] < 1


def test_marginal_every_xi_covers_the_interval_certified():
    """make_sinc(n=50, seed=0), lam = 0.1, t in [0.1, 10]: before, every xi stopped near
    t = 0.2-0.3 ("point ... would join and leave within the refinement window") with gaps up
    to 1.2 at the returned points."""
    X, y = make_sinc(n=50, seed=0)
    _check_against_full(X, y, 0.1, (0.01, 0.5))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("lam", [0.1, 0.01, 1.0])
def test_marginal_every_xi_several_sets(seed, lam):
    X, y = make_sinc(n=50, seed=seed)
    _check_against_full(X, y, lam, XIS)


@pytest.mark.slow
def test_marginal_both_directions_and_larger_set():
    X, y = make_sinc(n=120, low=-3.0, high=3.0, noise=0.08, seed=7)
    for start in (1.0, 10.0):  # decreasing t uses the bound's floor theta^2 t_ref
        full = kernel_path(X, y, 0.1, (0.1, 10.0), start=start, screen=False)
        for fast in (kernel_path(X, y, 0.1, (0.1, 10.0), start=start, marginal=0.05),
                     kernel_path(X, y, 0.1, (0.1, 10.0), start=start)):
            assert fast.stop_reason == full.stop_reason == "end of range"
            assert [(e.index, e.kind) for e in fast.events] == [(e.index, e.kind) for e in full.events]
            np.testing.assert_array_equal(fast.t, full.t)
            assert certify(fast, tol=1e-6, relative=True).ok


def _middle_solution():
    """A sinc set's data, lambda and the solution ``(t0, beta, beta0, signs)`` in the middle of
    its exact kernel path over [0.3, 3] (the reference both screens are tested around)."""
    X, y = make_sinc(n=60, low=-3.0, high=3.0, noise=0.08, seed=3)
    lam = 0.1
    path = kernel_path(X, y, lam, (0.3, 3.0))
    k = path.t.size // 2
    return PathData(X, y, lam, 0.0), lam, (path.t[k], path.beta[k], path.beta0[k], path.signs[k])


@pytest.mark.parametrize("up", [True, False])
def test_screen_bound_dominates_the_change_of_g(up):
    """At trial bandwidths around a reference, with the reference's active set: every row the
    screen does not check satisfies (13), and the bound dominates |g_i(t') - g_i(t0)| for
    every row (g computed here in full, independently of the screen)."""
    data, lam, (t0, beta, beta0, signs) = _middle_solution()
    screen = Screen(data, 0.01, 0.95, up)
    screen.reset(t0, beta, beta0, signs)
    tracer = _KernelTracer(data, 0.95, 1e-6, None, 100)
    act = np.flatnonzero(signs)
    g0 = gaussian(data.D, t0) @ data.residual(gaussian(data.D[:, act], t0), beta[act], beta0)
    cleared_somewhere = False
    for step in (1.0005, 1.005, 1.02, 1.0526):
        t1 = t0 * step if up else t0 / step
        b, b0, _, KA = tracer.solve(t1, signs, beta, beta0)
        r = data.residual(KA, b[act], b0)
        g1 = gaussian(data.D, t1) @ r
        idx, _ = screen.rows(t1, r)
        rest = np.setdiff1d(np.flatnonzero(signs == 0), idx)
        assert np.all(np.abs(g1[rest]) <= lam)
        cleared_somewhere |= rest.size > 0
        dr = np.abs(r - screen.r_ref)
        first = np.minimum(np.minimum(dr.sum(), dr.max() * screen.rowsum), np.sqrt(dr @ dr) * screen.rownorm)
        out = screen.out  # the rows outside the marginal set, which the bound may clear
        assert np.all(np.abs(g1 - g0)[out] <= first + abs(t1 - t0) * screen.P + 1e-12)
    assert cleared_somewhere  # the screen saves something here


@pytest.mark.parametrize("up", [True, False])
def test_taylor_screen_bounds_g_at_trials_around_its_centre(up):
    """Taylor's expansion with m terms from the stored terms is within the stated remainder of
    g = K_t r computed in full (for m = 1, 2, 3, steps up to the reach, residuals of trial
    solutions), and every inactive row the screen does not ask for satisfies (13)."""
    data, lam, (t0, beta, beta0, signs) = _middle_solution()
    tracer = _KernelTracer(data, 0.95, 1e-6, None, 100)
    act = np.flatnonzero(signs)
    screen = TaylorScreen(data)
    screen.reset(t0, beta, beta0, signs)
    cleared_somewhere = False
    for step in (1.0 + 1e-6, 1.0005, 1.005, 1.02, 1.0526, 1.099):
        screen._center(t0)
        t1 = t0 * step if up else t0 / step
        b, b0, _, KA = tracer.solve(t1, signs, beta, beta0)
        r = data.residual(KA, b[act], b0)
        g1 = gaussian(data.D, t1) @ r
        h, l1 = t1 - t0, np.abs(r).sum()
        for m in (1, 2, 3):
            g = screen.terms[:, :m * data.n] @ np.concatenate([(-h) ** j * r for j in range(m)])
            assert np.all(np.abs(g - g1) <= screen._remainder(t1, m, l1) + 1e-13 * l1), (step, m)
        idx, move = screen.rows(t1, r)
        assert not move and screen.t_c == t0  # every step here is within the reach of the centre
        rest = np.setdiff1d(np.flatnonzero(signs == 0), idx)
        assert np.all(np.abs(g1[rest]) <= lam)
        cleared_somewhere |= rest.size > 0
    assert cleared_somewhere


def test_taylor_screen_moves_its_centre_when_the_remainder_grows():
    """A trial beyond the reach (or where three terms leave too large a remainder) becomes the
    centre; its rows are then decided from e^{-tD} itself (the first term, no remainder)."""
    X, y = make_sinc(n=40, seed=1)
    data = PathData(X, y, 0.1, 0.0)
    screen = TaylorScreen(data)
    screen.reset(1.0, None, None, np.zeros(40, np.int8))
    r = np.random.default_rng(0).standard_normal(40) * 0.05
    screen.rows(1.0, r)
    assert screen.t_c == 1.0 and screen.resets == 1
    idx, _ = screen.rows(1.2, r)  # beyond the reach: re-centred at 1.2
    assert screen.t_c == 1.2 and screen.resets == 2
    g = gaussian(data.D, 1.2) @ r
    np.testing.assert_array_equal(idx, np.flatnonzero(np.abs(g) > 0.1 - 1e-9 * np.abs(r).sum()))


def test_a_point_joining_and_leaving_inside_the_window_records_both_events():
    """A point told to join that the new solution drops again: the inactive point closest to
    |g_j| = lam, joining with the sign of g_j although it satisfies (13) (as a crossing and
    its return inside one refinement window leave it), gets a coefficient of the wrong sign.
    Both events are recorded at that t and the returned solution is the valid one, the same
    as without the point (before, this ended the path with ExactPathError)."""
    X, y = make_sinc(n=40, low=-3.0, high=3.0, noise=0.08, seed=2)
    lam = 0.1
    path = kernel_path(X, y, lam, (0.5, 0.6))
    k = path.t.size // 2
    t, beta, beta0, signs = path.t[k], path.beta[k], path.beta0[k], path.signs[k]
    data = PathData(X, y, lam, 0.0)
    act = np.flatnonzero(signs)
    g = gaussian(data.D, t) @ data.residual(gaussian(data.D[:, act], t), beta[act], beta0)
    inactive = np.flatnonzero(signs == 0)
    j = int(inactive[np.argmax(np.abs(g[inactive]))])
    assert np.abs(g[j]) < lam
    tracer = _KernelTracer(data, 0.95, 1e-6, None, 100)
    b, b0, new_signs, _ = tracer.event(t, beta, beta0, signs, [], [(j, 1 if g[j] > 0 else -1)], 1.0)
    assert [(e.index, e.kind) for e in tracer.events] == [(j, "joined"), (j, "left")]
    assert all(e.t == t for e in tracer.events)
    np.testing.assert_array_equal(new_signs, signs)
    np.testing.assert_allclose(b, beta, atol=1e-12)
    assert data.point(t, gaussian(data.D, t), b, b0, new_signs, lam).valid
