"""Moving SVM pairs on bandwidth pieces (problems/kernel_svm/moving.py): the dual
f_a(t) alpha_a + f_b(t) alpha_b with quadratic weights (the driver's interpolation, approxpath.moving),
checked against gaps computed from explicitly formed kernels, tight CVXPY optima, and the
certificate round trip."""

import math
from dataclasses import replace

import numpy as np
import pytest

import approxpath
from approxpath import bernstein, moving
from approxpath.data import make_classification
from approxpath.moving import Moving, is_moving, value_at
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


def _weights(point, t):
    """The weights at t from their Bernstein coefficients (the definition, evaluated directly)."""
    (t0, t1), W = point.span, point.weights
    s = (t - t0) / (t1 - t0)
    m = W.shape[1] - 1
    return sum(W[:, j] * math.comb(m, j) * s**j * (1 - s) ** (m - j) for j in range(m + 1))


def _bias(primal, t):
    """The bias at t of a (fixed or moving) primal, from the definition."""
    if not is_moving(primal):
        return primal.b
    return float(sum(w * p.b for w, p in zip(_weights(primal, t), primal.points)))


def _moving(p, pa, pb, thetas, a, b):
    """The moving pair through the weights ``thetas`` at a, the middle and b."""
    return moving.interpolate(pa, pb, thetas, (a, 0.5 * (a + b), b), 2)


@pytest.mark.parametrize("thetas", [(0.0, 0.5, 1.0), (0.3, 0.6, 0.7), (0.9, 0.3, 0.2), (0.0, 0.9, 1.0), (0.5, 0.5, 0.5)])
@pytest.mark.parametrize("piece", ["span", "inside"])
def test_moving_bound_dominates_the_gap_sampled_on_the_piece(segment, thetas, piece):
    """The bound holds at 201 bandwidths of the piece (gaps from explicit kernels), is exact
    at the piece's ends up to its rounding allowance, and is within 25 % (plus 1e-3) of the sampled largest
    gap; on a piece inside the weight line's span (weights computed, not stored) as well."""
    p, a, b, pa, pb = segment
    primal, dual = _moving(p, pa, pb, thetas, a, b)
    assert dual.span == (a, b) and np.all(dual.weights >= 0) and np.all(dual.weights.sum(axis=0) <= 1)
    theta = dual.weights[1]
    assert _weights(dual, 0.5 * (a + b))[1] == pytest.approx(thetas[1]) or thetas == (0.0, 0.9, 1.0)  # (clipped)
    lo, hi = (a, b) if piece == "span" else (0.7, 0.9)
    primal, dual = p.restore(primal, dual, lo, hi)
    assert np.array_equal(dual.weights[1], theta)
    assert p.bound.check(primal, dual, lo, hi) == []
    bound = p.bound.gap(primal, dual, lo, hi)
    ts = np.linspace(lo, hi, 201)
    alphas = [w[0] * pa[1].alpha + w[1] * pb[1].alpha for w in (_weights(dual, t) for t in ts)]
    gaps = np.array([_explicit_gap(p, al, _bias(primal, t), t) for al, t in zip(alphas, ts)])
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
    """At random bandwidths of the piece: the dual at t (what Path.dual returns) is in the box,
    y'alpha(t) = 0 to rounding, the primal's w is y * alpha(t), and a tight CVXPY optimum lies
    between the dual and the primal objectives, whose difference is below the piece's bound."""
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.1, 0.6, 0.8), a, b), a, b)
    bound = p.bound.gap(primal, dual, a, b)
    for t in np.random.default_rng(2).uniform(a, b, 6):
        at = value_at(dual, t)
        assert at.alpha.min() >= 0 and at.alpha.max() <= p.c * (1 + 1e-15) and abs(math.fsum(p.y * at.alpha)) < 1e-12
        point = p.primal_at(value_at(primal, t), t)
        np.testing.assert_allclose(point.w, p.y * at.alpha, rtol=0, atol=1e-15)
        decl = p.cvxpy_dual(t)
        solve_cvxpy(decl.problem)
        upper, lower = p.primal_objective(point, t), p.dual_objective(at, t)
        assert lower - 1e-7 <= decl.problem.value <= upper + 1e-7
        assert upper - lower <= bound


def _alpha_b(p, pb, how):
    alpha = pb[1].alpha.copy()
    if how == "shift":
        k = int(np.argmax((alpha > 0) & (alpha < p.c)))
        alpha[k] += 2.0**-30
    else:
        alpha = alpha * 2.0
    return alpha


@pytest.mark.parametrize("change, message", [
    (dict(W=[[1.01, 0.5, 0.5], [-0.01, 0.5, 0.5]]), "negative"),
    (dict(W=[[0.5, 0.5, 0.5], [0.5, 0.5 + 2.0**-40, 0.5]]), "sum to more than 1"),
    # 1 + 2**-54 exactly: fsum of the column alone rounds it to 1.0
    (dict(W=[[0.5, 1.0, 0.5], [0.5, 2.0**-54, 0.5]]), "sum to more than 1"),
    (dict(W=[[0.5, 0.5], [0.5, 0.5]]), "same span, degree and weights"),
    (dict(span=(0.65, 1.1)), "not inside"),
    (dict(span=(-1.5e308, 1.5e308)), "finite positive width"),
    (dict(span=(0.6, float("nan"))), "not 2 finite"),
    (dict(alpha_b="shift"), "not exactly 0"),
    (dict(alpha_b="over"), "exceeds C"),
])
def test_an_infeasible_moving_pair_is_rejected(segment, change, message):
    """Each stored field of a moving pair out of its domain (the weights, the span, the second
    dual) is refused by the verifier's check, the primal changed with the dual as a search would."""
    p, a, b, pa, pb = segment
    primal, dual = p.restore(*_moving(p, pa, pb, (0.2, 0.5, 0.8), a, b), a, b)
    W, span, points = dual.weights, dual.span, dual.points
    W = np.array(change.get("W", W), dtype=float)
    span = change.get("span", span)
    if "alpha_b" in change:
        points = (points[0], type(points[1])(alpha=_alpha_b(p, pb, change["alpha_b"])))
    bad = Moving(points, W, span)
    bad_primal = Moving(tuple(replace(q, w=p.y * d.alpha) for q, d in zip(primal.points, points)) + primal.points[2:],
                        np.vstack([W, primal.weights[2:, :W.shape[1]]]) if W.shape[1] == primal.weights.shape[1]
                        else primal.weights, span)
    errors = p.bound.check(bad_primal, bad, a, b)
    assert any(message in e for e in errors), errors
    # a primal that does not move with its dual
    assert any("does not move" in e or "differs" in e for e in p.bound.check(value_at(primal, a), dual, a, b))


def test_certificate_round_trip_of_moving_and_fixed_pieces(segment):
    """The one layout keeps a moving pair bit for bit and a fixed one fixed; the bound
    recomputed from the arrays (a fresh certificate side, as verify builds it) equals the
    search's; a fixed piece's padding that is not zero is refused, not read as fixed."""
    p, a, b, pa, pb = segment
    moving_pair = p.restore(*_moving(p, pa, pb, (0.25, 0.5, 0.75), a, b), a, b)
    fixed_pair = p.restore(*pa, a, b)
    fresh = approxpath.get_bound("kernel_svm")(p.X, p.y, c=p.c)
    arrays = p.bound.pieces_to_arrays([(*moving_pair, a, b), (*fixed_pair, a, b)])
    rows = [{k: v[i] for k, v in arrays.items()} for i in range(2)]
    primal2, dual2 = fresh.piece_from_arrays(rows[0], a, b)
    assert is_moving(dual2) and np.array_equal(dual2.weights, moving_pair[1].weights) and dual2.span == (a, b)
    np.testing.assert_array_equal(dual2.points[1].alpha, pb[1].alpha)
    assert fresh.check(primal2, dual2, a, b) == []
    assert fresh.gap(primal2, dual2, a, b) == p.bound.gap(*moving_pair, a, b)
    primal3, dual3 = fresh.piece_from_arrays(rows[1], a, b)
    assert not is_moving(dual3) and np.array_equal(dual3.alpha, fixed_pair[1].alpha)
    # a fixed piece whose padding (a second point, a weight beyond its degree) is not all zeros
    for key, value in (("dual_alpha", np.stack([rows[1]["dual_alpha"][0], pb[1].alpha])),
                       ("dual_weights", rows[1]["dual_weights"] + np.array([[0, 0, 0], [0, 0.5, 0]]))):
        with pytest.raises(ValueError, match="zeros"):
            fresh.piece_from_arrays(dict(rows[1], **{key: value}), a, b)


def test_a_path_of_moving_pairs_verifies(tmp_path):
    """The default strategy certifies moving pieces (fewer pieces than fixed pairs need), the
    certificate verifies, and a relative eps (the moving dual's floor) verifies too."""
    X, y = make_classification(n=150, d=4, seed=2)
    for relative, eps in ((False, 0.05), (True, 0.002)):
        path = approxpath.approximate_path(KernelSVM(X, y, c=0.5), eps=eps, interval=(2.0**-4, 2.0**4),
                                           relative=relative)
        assert path.certified and any(is_moving(piece.dual) for piece in path.pieces)
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
    assert not any(is_moving(piece.dual) for piece in paths["fixed"].pieces)
    assert len(paths["moving"].pieces) < len(paths["fixed"].pieces)
    out = tmp_path / "fixed.npz"
    paths["fixed"].save(out)
    assert approxpath.verify(out, X, y).ok
    assert approxpath.load_path(out, X, y).meta["options"]["dual_restoration"] == "fixed"


def test_a_hundredfold_smaller_eps_over_c_adds_solves_near_the_kinks_only(tmp_path):
    """Over C the SVM's dual is piecewise linear, so a pair linear in C between two exact solves
    on one linear part is exact up to rounding.  The steps between exact solves were sized by
    combinations whose weights lie on a grid (2**-8), off that line: they overestimated the gap
    at a segment's middle 7,000-fold (ionosphere), and every step was short, 568 exact solves at
    eps 1e-5 and 4,963 at 1e-7 here.  Sized by the pair the pieces get, eps 100 times smaller
    adds solves only around the path's kinks; both paths verify, and their gaps hold against
    tight CVXPY optima at random C."""
    X, y = make_classification(n=60, seed=1)
    p = KernelSVM(X, y, parameter="c", bandwidth=1.0)
    loose, tight = (approxpath.approximate_path(p, eps, (1.0, 8.0)) for eps in (1e-5, 1e-7))
    assert loose.certified and tight.certified
    assert tight.exact_solves < 3 * loose.exact_solves < 300, (loose.exact_solves, tight.exact_solves)
    out = tmp_path / "c.npz"
    tight.save(out)
    report = approxpath.verify(out, X, y)
    assert report.ok and not report.notes, report
    for C in np.exp(np.random.default_rng(0).uniform(0.0, math.log(8.0), 4)):
        decl = p.cvxpy_dual(C)
        solve_cvxpy(decl.problem)
        upper, lower = p.primal_objective(tight.primal(C), C), p.dual_objective(tight.dual(C), C)
        assert lower - 1e-7 <= decl.problem.value <= upper + 1e-7 and upper - lower <= 1e-7, C


def test_a_c_moving_dual_is_checked_against_the_box_at_both_ends_of_its_piece():
    """A dual moving linearly in C stays in [0, C] on a C piece iff it does at both ends (each
    alpha_i(C) - C is linear).  A piece's own dual is accepted on it; carried below its lower end
    (to half of it), where its entries at the box C of the piece exceed the smaller C, it is
    refused naming that end — the upper end alone would accept it."""
    from approxpath.moving import is_moving

    X, y = make_classification(n=40, seed=2)
    p = KernelSVM(X, y, parameter="c", bandwidth=1.0)
    path = approxpath.approximate_path(p, 0.01, (1.0, 4.0))
    piece = next(q for q in path.pieces if is_moving(q.dual) and q.hi > q.lo)
    assert p.bound.errors(piece.primal, piece.dual, piece.lo, piece.hi) == []
    low = piece.lo / 2
    errors = p.bound.errors(piece.primal, piece.dual, low, piece.hi)
    assert any(e.startswith(f"the moving dual exceeds C = {low:.17g}") for e in errors), errors


def test_a_c_moving_dual_s_weights_sum_to_at_most_one():
    """The allowances for the weights' rounding take 1'alpha(C) <= the points' sums, i.e. weights
    summing to at most 1; on the C path only the box was checked.  Points / 2**30 with weights
    * 2**30 have the same values at every C and passed, with a smaller bound (the allowances
    shrink with the points' sums): now refused."""
    from approxpath.moving import Moving, is_moving
    from approxpath.problems.kernel_svm.points import SVMDual, SVMPrimal

    X, y = make_classification(n=40, seed=2)
    p = KernelSVM(X, y, parameter="c", bandwidth=1.0)
    path = approxpath.approximate_path(p, 0.01, (1.0, 4.0))
    piece = next(q for q in path.pieces if is_moving(q.dual) and q.hi > q.lo)
    k = 2.0**30
    dual = Moving(tuple(SVMDual(alpha=d.alpha / k) for d in piece.dual.points), piece.dual.weights * k,
                  piece.dual.span)
    primal = Moving(tuple(SVMPrimal(w=q.w / k, b=q.b / k) for q in piece.primal.points), piece.primal.weights * k,
                    piece.primal.span)
    assert "the moving dual's weights sum to more than 1 (a coefficient column)" in p.bound.errors(
        primal, dual, piece.lo, piece.hi)


def test_affine_weights_sum_to_at_most_one_exactly():
    """Every column of ``affine_weights`` sums to at most 1 in exact arithmetic (fractions), and
    ``1 - theta`` is the largest float that does: for random weights in [0, 1], tiny ones and
    halves (a sum that rounds to 1.0 but exceeds it by 2**-54 was let through before)."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    theta = np.concatenate([rng.uniform(0.0, 1.0, 3000), [0.0, 1.0, 2.0**-54, 2.0**-60, 0.1, 0.3, 0.5]])
    W = bernstein.affine_weights(theta)
    for x, c in W.T:
        assert Fraction(x) + Fraction(c) <= 1
        assert Fraction(math.nextafter(x, math.inf)) + Fraction(c) > 1


def test_cap_columns_sums_to_at_most_one_exactly_stepping_the_largest():
    """``cap_columns`` leaves each column of three weights summing to at most 1 in exact arithmetic
    (fractions) and changes only the largest entry of a column, by a few floats at most; columns
    within 1 are unchanged."""
    from fractions import Fraction

    rng = np.random.default_rng(1)
    W = rng.dirichlet(np.ones(3), size=2000).T  # float sums within a few ulps of 1, above or below
    capped = bernstein.cap_columns(W)
    changed = 0
    for before, after in zip(W.T, capped.T):
        assert sum(map(Fraction, after)) <= 1
        moved = np.flatnonzero(before != after)
        if sum(map(Fraction, before)) <= 1:
            assert moved.size == 0
        else:
            changed += 1
            assert moved.tolist() == [int(np.argmax(before))]
            assert before[moved[0]] - after[moved[0]] <= 4 * np.spacing(before[moved[0]])
    assert changed > 100  # the test sees columns above 1
