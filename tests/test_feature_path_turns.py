"""The L1KR path where it turns back in D and where features leave, against independent references.

On Friedman #1 (n = 60, three irrelevant features, C = ||Hy||^2) the path does what the paper's
Figure 3(b) shows: after feature 3 joins it runs on, turns back in D, drops the irrelevant
features 6 and 8 (E2) on the way back and turns forward again.  References: the KKT system (5)
from the definitions (q_j = -alpha'(D_j o K)alpha with D_j built here); the Hessian of the inner
optimal value V(beta) on the active face {sum(beta_A) = D} by second differences of V; SLSQP on
problem (1) at fixed D from perturbed starts; central differences of V for Theorem 1 at E2.
"""

import importlib

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from approxpath.exact.feature_path import feature_path, plot_feature_path
from approxpath.exact.feature_path._kernels import make_kernel
from approxpath.exact.feature_path._kkt import inner_solve

from exact_helpers import friedman1


@pytest.fixture(scope="module")
def case():
    X, y = friedman1(60, 8, 0)
    C = float(np.sum((y - y.mean()) ** 2))
    path = feature_path(X, y, C=C)
    kern = make_kernel("ard-gaussian", X)

    def value(beta):
        """V(beta): the inner kernel ridge optimum at fixed beta (eigendecomposition; the
        CVXPY comparison in test_feature_path checks it)."""
        K = kern.at(beta).K
        a, a0, _ = inner_solve(K, y, C)
        return float(np.sum((y - K @ a - a0) ** 2))

    return path, value


def _face_hessian(value, beta, h):
    """The Hessian of V on the face {beta + Z z}, Z an orthonormal basis of {v : sum(v) = 0}
    on the active features A, by second differences with step h: its eigenvalues, the direction
    (on A) of the smallest, and A."""
    A = np.flatnonzero(beta > 0)
    Z = scipy.linalg.null_space(np.ones((1, A.size)))

    def at(z):
        b = beta.copy()
        b[A] += Z @ z
        return value(b)

    E = h * np.eye(Z.shape[1])
    H = np.empty((Z.shape[1],) * 2)
    for i in range(Z.shape[1]):
        for j in range(i, Z.shape[1]):
            H[i, j] = H[j, i] = (at(E[i] + E[j]) - at(E[i] - E[j]) - at(E[j] - E[i]) + at(-E[i] - E[j])) / (4 * h * h)
    w, U = np.linalg.eigh(H)
    return w, Z @ U[:, 0], A


def _kkt_from_definitions(path, i):
    """(5) and Theorem 1 at point i with the forms built here from their definition."""
    X, a = path.X, path.alpha[i]
    K = np.exp(-sum(path.beta[i, j] * (X[:, j, None] - X[None, :, j]) ** 2 for j in range(X.shape[1])))
    q = np.array([-a @ ((X[:, j, None] - X[None, :, j]) ** 2 * K) @ a for j in range(X.shape[1])])
    act = path.active[i]
    unit = np.max(np.abs(q))
    assert np.ptp(q[act]) <= 1e-6 * unit and np.all(q[~act] <= q[act].mean() + 1e-6 * unit)
    assert abs(a @ K @ a - path.C) <= 1e-8 * path.C and path.lam[i] > 0 and q[act].mean() > 0


def test_turns_back_through_a_fold_between_local_minima_and_saddle_points(case):
    path, value = case
    turns = path.turns
    assert len(turns) == 2, turns
    extrema = [i for i in range(1, len(path) - 1) if (path.D[i] - path.D[i - 1]) * (path.D[i + 1] - path.D[i]) < 0]
    assert list(turns) == extrema
    top, bottom = turns
    assert f"turns in D at {path.D[top]:.4g} (back), {path.D[bottom]:.4g} (forward)" in path.summary()
    assert path.D[top] > max(path.D[top - 1], path.D[top + 1])  # turns back ...
    assert path.D[bottom] < min(path.D[bottom - 1], path.D[bottom + 1])  # ... and forward again
    events = {e.index for e in path.events}
    assert not events & {top - 1, top, top + 1, bottom - 1, bottom, bottom + 1}  # smooth turns, not corners
    # three stationary points at about the same D: before the turn back, between, after the turn forward
    target = 0.5 * (path.D[top] + path.D[bottom])
    branches = [range(0, top), range(top, bottom), range(bottom, len(path))]
    points = [min(r, key=lambda i: abs(path.D[i] - target)) for r in branches]
    for i in points:
        assert abs(path.D[i] - target) <= 0.05 * target
        _kkt_from_definitions(path, i)
    for i in points:  # distinct points, not the path retracing itself
        for j in points:
            if i < j:
                assert np.abs(path.beta[i] - path.beta[j]).sum() >= 0.05 * target
    # the branch between the turns is a branch of saddle points: one negative curvature on the face
    rng = np.random.default_rng(0)
    for k, i in enumerate(points):
        beta, D = path.beta[i], path.D[i]
        w, down, A = _face_hessian(value, beta, 1e-4 * D)
        w_coarse = _face_hessian(value, beta, 3e-4 * D)[0]
        np.testing.assert_allclose(w, w_coarse, rtol=2e-3)  # the differences converged (error ~ h^2)
        assert np.sum(w < 0) == (1 if k == 1 else 0), w
        assert np.min(np.abs(w)) >= 1e-3 * np.max(np.abs(w))  # away from the folds themselves
        # SLSQP at this D: from a minimum it finds nothing better, from the saddle it goes down
        start = beta.copy()
        if k == 1:
            start[A] += 0.02 * D * down[A]
        else:
            start[A] += 1e-3 * D * rng.dirichlet(np.ones(A.size)) - 1e-3 * D / A.size
        res = scipy.optimize.minimize(value, np.maximum(start, 0.0), method="SLSQP", bounds=[(0, None)] * beta.size,
                                      constraints=[{"type": "eq", "fun": lambda b, D=D: np.sum(b) - D}],
                                      options={"ftol": 1e-12, "maxiter": 300})
        if k == 1:
            assert res.fun <= value(beta) * (1 - 1e-4)
        else:
            assert res.fun >= value(beta) * (1 - 1e-7)


def test_features_leave_on_the_way_back_as_theorem_1_requires(case):
    """E2 while D decreases: before the event the leaving feature is stationary on the face, at
    the event too, after it moving budget into the feature increases V (q_k < eta), and the
    path keeps going back in D (the probe did not reverse it)."""
    path, value = case
    left = [e for e in path.events if e.kind == "left"]
    back = [e for e in left if path.D[e.index - 1] > path.D[e.index] > path.D[e.index + 1]]
    assert [e.feature for e in back] == [7, 5]  # features 8 and 6 leave between the turns
    for e in back:
        k, i = e.feature, e.index
        after = [j for j in range(i + 1, i + 4) if path.beta[j, k] == 0.0]
        assert path.beta[i - 1, k] > 0 and path.beta[i, k] == 0.0 and len(after) == 3

        def slope(j):
            """dV/dt along beta + t (e_k - beta/D) (sum(beta) fixed) by central differences,
            and the unit: |dV/dbeta_a| for the largest active a."""
            b = path.beta[j]
            D = b.sum()
            t = 1e-6 * D  # differences of V converge to ~1e-7 relative here (larger t: 3rd-order terms)
            u = -b / D
            u[k] += 1.0
            a = np.zeros(b.size)
            a[np.argmax(b)] = t
            unit = abs(value(b + a) - value(b - a)) / (2 * t)
            return (value(b + t * u) - value(b - t * u)) / (2 * t), unit

        for j in (i - 1, i):
            s, unit = slope(j)
            assert abs(s) <= 1e-6 * unit  # q_k = eta: stationary on the face
        for j in after:
            s, unit = slope(j)
            assert s >= 1e-5 * unit  # q_k < eta: the feature stays out


def test_figure_marks_the_turns_and_magnifies_the_start(case):
    path, _ = case
    top, bottom = path.turns
    fig = plot_feature_path(path, relevant=range(5), detail=float(path.D[top]))
    ax, cx, bx = fig.axes
    for a in (ax, cx):
        dotted = sorted(float(line.get_xdata()[0]) for line in a.lines if line.get_linestyle() == ":")
        assert dotted == sorted([path.D[top], path.D[bottom]])  # the turns, in both panels (both at D <= detail)
    assert cx.get_xlim() == (0.0, path.D[top]) and len(cx.lines) > 5
    assert np.allclose(bx.lines[0].get_ydata(), path.jacobian_calls_at)


@pytest.mark.slow  # a long characterization (tens of seconds): opt in with -m slow
def test_finer_steps_find_the_same_events_and_turns(case, monkeypatch):
    """Step control does not skip events: with steps at most 1/10 as long and targets 5x
    tighter, the events (kind, feature, D) and the turns are the same."""
    path, _ = case
    follower = importlib.import_module("approxpath.exact.feature_path._homotopy")
    monkeypatch.setattr(follower, "_H_MAX", 0.1 * follower._H_MAX)
    for name in ("_TARGET_DIST", "_TARGET_CONTRACTION", "_TARGET_ANGLE"):
        monkeypatch.setattr(follower, name, 0.2 * getattr(follower, name))
    fine = feature_path(path.X, path.y, C=path.C, max_steps=20000, certify=False)
    assert len(fine) >= 3 * len(path)
    assert [(e.kind, e.feature) for e in fine.events] == [(e.kind, e.feature) for e in path.events]
    np.testing.assert_allclose([e.D for e in fine.events], [e.D for e in path.events], rtol=1e-7)
    np.testing.assert_allclose(fine.D[list(fine.turns)], path.D[list(path.turns)], rtol=1e-3)
