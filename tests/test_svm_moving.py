"""Moving SVM pairs on bandwidth pieces (problems/kernel_svm/moving.py): the dual
(1 - theta(t)) alpha_a + theta(t) alpha_b with a quadratic weight theta, checked against gaps
computed from explicitly formed kernels, tight CVXPY optima, and the certificate round trip."""

import math
from dataclasses import replace

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification
from approxpath.problems.kernel_svm.bound import Motion
from approxpath.solvers.conic import solve_cvxpy

KernelSVM = approxpath.get_problem("kernel_svm")


@pytest.fixture(scope="module")
def segment():
    """A problem and its exact solves at the two ends of a bandwidth segment."""
    X, y = make_classification(n=70, d=3, seed=5)
    p = KernelSVM(X, y, c=1.0)
    a, b = 0.6, 1.1
    return p, a, b, p.solve(a), p.solve(b)


def _explicit_gap(p, alpha, b, t):
    """The gap of the pair (w = y alpha, bias b) at t from the explicitly formed kernel (numpy
    broadcasting, not the package's distances or products)."""
    X, y = np.asarray(p.X), p.y
    K = np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    Kw = K @ (y * alpha)
    xi = np.maximum(0.0, 1.0 - y * (Kw + b))
    return float((y * alpha) @ Kw + p.c * xi.sum() - alpha.sum())


def _theta(motion, t):
    """The weight at t from its Bernstein coefficients (the definition, evaluated directly)."""
    (t0, t1), (c0, c1, c2) = motion.span, motion.theta
    s = (t - t0) / (t1 - t0)
    return c0 * (1 - s) ** 2 + 2 * c1 * s * (1 - s) + c2 * s * s


def _moving(p, pa, pb, thetas, a, b):
    """The moving pair through the weights ``thetas`` at a, the middle and b."""
    return p.interpolate_moving(pa, pb, thetas, (a, 0.5 * (a + b), b))


@pytest.mark.parametrize("thetas", [(0.0, 0.5, 1.0), (0.3, 0.6, 0.7), (0.9, 0.3, 0.2), (0.0, 0.9, 1.0), (0.5, 0.5, 0.5)])
@pytest.mark.parametrize("piece", ["span", "inside"])
def test_moving_bound_dominates_the_gap_sampled_on_the_piece(segment, thetas, piece):
    """The bound holds at 201 bandwidths of the piece (gaps from explicit kernels), is exact
    at the piece's ends up to its rounding allowance, and is within 25 % (plus 1e-3) of the sampled largest
    gap; on a piece inside the weight line's span (weights computed, not stored) as well."""
    p, a, b, pa, pb = segment
    primal, dual = _moving(p, pa, pb, thetas, a, b)
    assert dual.motion.span == (a, b) and all(0 <= c <= 1 for c in dual.motion.theta)
    assert _theta(dual.motion, 0.5 * (a + b)) == pytest.approx(thetas[1]) or thetas == (0.0, 0.9, 1.0)  # (clipped)
    lo, hi = (a, b) if piece == "span" else (0.7, 0.9)
    primal, dual = p.restore(primal, dual, lo, hi)
    assert p.bound.errors(primal, dual, lo, hi) == []
    bound = p.bound.gap(primal, dual, lo, hi)
    ts = np.linspace(lo, hi, 201)
    alphas = [(1 - th) * pa[1].alpha + th * pb[1].alpha for th in (_theta(dual.motion, t) for t in ts)]
    gaps = np.array([_explicit_gap(p, al, primal.bias(t), t) for al, t in zip(alphas, ts)])
    assert np.all(gaps <= bound)
    assert bound <= 1.25 * gaps.max() + 1e-3
    for t, g in ((lo, gaps[0]), (hi, gaps[-1])):  # the point gap, its rounding allowance included
        assert g <= p.bound.gap(primal, dual, t) <= g + 1e-8


def test_moving_dual_floor_is_below_the_sampled_dual_objective(segment):
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.2, 0.7, 0.9), a, b), a, b)
    floor = p.bound.dual_floor(dual, a, b)
    values = [p.dual_objective(dual, t) for t in np.linspace(a, b, 101)]
    assert floor <= min(values) and floor >= min(values) - 0.05 * abs(min(values))


def test_moving_pair_is_feasible_and_within_its_bound_of_tight_cvxpy(segment):
    """At random bandwidths of the piece: the dual at t (Path.dual's dual_at) is exactly in the
    box, y'alpha(t) = 0 to rounding, and a tight CVXPY optimum lies between the dual and the
    primal objectives, whose difference is below the piece's bound."""
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.1, 0.6, 0.8), a, b), a, b)
    bound = p.bound.gap(primal, dual, a, b)
    for t in np.random.default_rng(2).uniform(a, b, 6):
        at = p.dual_at(dual, t)
        assert at.alpha.min() >= 0 and at.alpha.max() <= p.c and abs(math.fsum(p.y * at.alpha)) < 1e-12
        point = p.primal_at(primal, t)
        np.testing.assert_array_equal(point.w, p.y * at.alpha)
        decl = p.cvxpy_dual(t)
        solve_cvxpy(decl.problem)
        upper, lower = p.primal_objective(point, t), p.dual_objective(dual, t)
        assert lower - 1e-7 <= decl.problem.value <= upper + 1e-7
        assert upper - lower <= bound


@pytest.mark.parametrize("change, message", [
    (dict(theta=(-0.01, 0.5, 0.5)), "coefficients"),
    (dict(theta=(0.5, 1.01, 0.5)), "coefficients"),
    (dict(theta=(0.5, 0.5)), "coefficients"),
    (dict(span=(0.65, 1.1)), "not inside"),
    (dict(span=(0.6, 0.8, 1.1)), "not 2 finite"),
    (dict(span=(0.6, float("nan"))), "not 2 finite"),
    (dict(alpha_b="shift"), "not exactly 0"),
    (dict(alpha_b="over"), "leave"),
])
def test_an_infeasible_moving_pair_is_rejected(segment, change, message):
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.2, 0.5, 0.8), a, b), a, b)
    m = dual.motion
    if change.get("alpha_b") == "shift":
        k = int(np.argmax((m.alpha_b > 0) & (m.alpha_b < p.c)))
        alpha_b = m.alpha_b.copy()
        alpha_b[k] += 2.0**-30
        change = dict(alpha_b=alpha_b)
    elif change.get("alpha_b") == "over":
        change = dict(alpha_b=m.alpha_b * 2.0)
    bad = replace(m, **change)
    errors = p.bound.errors(replace(primal, motion=bad), replace(dual, motion=bad), a, b)
    assert any(message in e for e in errors), errors
    # a primal that does not move with its dual
    assert any("does not move" in e for e in p.bound.errors(replace(primal, motion=None), dual, a, b))


def test_certificate_round_trip_of_moving_and_fixed_pieces(segment):
    """to_arrays/from_arrays keep a moving pair bit for bit and a fixed one fixed; the bound
    recomputed from the arrays (a fresh certificate side, as verify builds it) equals the
    search's; arrays of a file written before pairs could move read as a fixed pair."""
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.25, 0.5, 0.75), a, b), a, b)
    fresh = approxpath.get_bound("kernel_svm")(p.X, p.y, c=p.c)
    arrays = p.bound.to_arrays(primal, dual)
    primal2, dual2 = fresh.from_arrays(arrays)
    assert isinstance(dual2.motion, Motion) and dual2.motion.theta == dual.motion.theta and dual2.motion.span == (a, b)
    np.testing.assert_array_equal(dual2.motion.alpha_b, pb[1].alpha)
    assert fresh.errors(primal2, dual2, a, b) == []
    assert fresh.gap(primal2, dual2, a, b) == p.bound.gap(primal, dual, a, b)
    fixed = p.bound.to_arrays(*p.restore(*pa, a, b))
    assert fresh.from_arrays(fixed)[1].motion is None
    old = {k: fixed[k] for k in ("dual", "bias", "bias_slope")}
    assert fresh.from_arrays(old)[1].motion is None
    # a fixed piece whose second dual, weight or span is not all zeros is not read as fixed
    for key, value in (("dual_b", pb[1].alpha), ("theta", np.array([0.0, 0.5, 0.0])), ("dual_b", np.full(p.n, np.nan))):
        primal3, dual3 = fresh.from_arrays(dict(fixed, **{key: value}))
        assert dual3.motion is not None and fresh.errors(primal3, dual3, a, b), key


def test_a_path_of_moving_pairs_verifies(tmp_path):
    """The default strategy certifies moving pieces (fewer pieces than fixed pairs need), the
    certificate verifies, and a relative eps (the moving dual's floor) verifies too."""
    X, y = make_classification(n=150, d=4, seed=2)
    for relative, eps in ((False, 0.05), (True, 0.002)):
        path = approxpath.approximate_path(KernelSVM(X, y, c=0.5), eps=eps, interval=(2.0**-4, 2.0**4),
                                           relative=relative)
        assert path.certified and any(piece.dual.motion is not None for piece in path.pieces)
        out = tmp_path / f"moving{relative}.npz"
        path.save(out)
        report = approxpath.verify(out, X, y)
        assert report.ok and not report.notes, report


def test_fixed_restoration_keeps_one_weight_per_piece(tmp_path):
    """dual_restoration="fixed" certifies with fixed pairs only (more pieces, the same exact
    solves here); the option is recorded, so versions before moving pairs refuse a moving file
    by naming it."""
    X, y = make_classification(n=150, d=4, seed=2)
    paths = {rule: approxpath.approximate_path(KernelSVM(X, y, c=0.5, dual_restoration=rule), eps=0.05,
                                               interval=(2.0**-4, 2.0**4)) for rule in ("moving", "fixed")}
    assert all(piece.dual.motion is None for piece in paths["fixed"].pieces)
    assert len(paths["moving"].pieces) < len(paths["fixed"].pieces)
    out = tmp_path / "fixed.npz"
    paths["fixed"].save(out)
    assert approxpath.verify(out, X, y).ok
    assert approxpath.load_path(out, X, y).meta["options"]["dual_restoration"] == "fixed"
