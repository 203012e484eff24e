"""A selection's enclosures hold the exact (rational) values of what they enclose, rounding
included: the pooled losses, the loss totals, the merged covers, the interval products and the
prediction enclosures, each against exact ``Fraction`` arithmetic on the same floats or against
extended precision (a mutation review removed each allowance in turn and the suite still passed)."""

from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from approxpath.numerics import difference_up
from approxpath.selection.cover import merge_covers
from approxpath.selection.losses import loss_totals, pooled
from approxpath.selection.predictions import combination_hull, cross_products, expansion_cover
from approxpath.selection.surface_proof import overlay

_CELL = np.array([[1.0, 2.0, 1.0, 2.0]])  # (t_lo, t_hi, w_lo, w_hi)


def _pooled_cell(values, total):
    """``(LO, HI)`` of one box cell pooled by ``overlay`` over folds whose totals are ``values``."""
    _, _, LO, HI, _ = overlay([_CELL] * len(values), [np.array([[v, v]]) for v in values], total)
    return Fraction(float(LO[0, 0])), Fraction(float(HI[0, 0]))


def test_a_surface_choices_pooled_loss_holds_the_exact_mean():
    """Five folds' totals were pooled as sum / N with one step of the floats after the division:
    with totals that carry no allowance of their own, the sum's four roundings left HI below the
    exact mean (1,706 of 20,000 random cases; a loss's totals from loss_totals carry one); an
    error count's mean k/N is held whichever way k/N rounds."""
    values = [3.2593321493259584, 0.0010786851026829251, 38.79079144980708, 47.001715225540934, 0.006202173587157523]
    lo, hi = _pooled_cell(values, 397.0)
    assert lo <= sum(Fraction(v) for v in values) / 397 <= hi
    rng = np.random.default_rng(0)
    for _ in range(2000):
        values, total = rng.exponential(10.0, int(rng.integers(2, 8))), float(rng.integers(10, 500))
        lo, hi = _pooled_cell(values, total)
        assert lo <= sum(Fraction(float(v)) for v in values) / Fraction(total) <= hi
    for k in (1, 2):  # float(2/3) is above 2/3, float(1/3) below 1/3
        lo, hi = _pooled_cell([float(k)], 3.0)
        assert lo <= Fraction(k, 3) <= hi


def test_pooled_moves_both_ends_outward_and_keeps_losses_nonnegative():
    lo, hi = pooled(np.array([0.0, 3.0]), np.array([1.0, np.inf]), 7.0, 3)
    assert lo[0] == 0.0 and Fraction(float(lo[1])) < Fraction(3, 7) and Fraction(float(hi[0])) > Fraction(1, 7)
    assert hi[1] == np.inf


def test_delta_is_the_difference_rounded_up():
    """δ = U - L rounded to nearest was half an ulp below the proven difference where it rounds down."""
    u, lo = 1.0 + 2.0**-52, 3.0 * 2.0**-54
    assert u - lo == 1.0 and Fraction(difference_up(u, lo)) >= Fraction(u) - Fraction(lo)
    rng = np.random.default_rng(1)
    for a, b in rng.standard_normal((5000, 2)) * np.exp(rng.uniform(-30, 30, (5000, 2))):
        d = difference_up(a, b)
        assert Fraction(d) >= Fraction(float(a)) - Fraction(float(b))
        assert d == a - b or d == np.nextafter(a - b, np.inf)  # one step at most, and only where it rounded down
    assert difference_up(0.5, 0.5) == 0.0 and difference_up(np.inf, 1.0) == np.inf


def test_loss_totals_hold_the_exact_sums():
    rng = np.random.default_rng(0)
    for trial in range(200):
        y = rng.normal(size=7)
        low = rng.normal(size=(7, 1)) * 3
        up = low + rng.random((7, 1)) * 2
        for criterion in ("mae", "mse"):
            lo, hi = loss_totals(criterion, y, low, up)
            near = far = Fraction(0)
            for a, b, v in zip(low[:, 0], up[:, 0], y):
                a, b, v = Fraction(float(a)), Fraction(float(b)), Fraction(float(v))
                n, f = max(a - v, v - b, Fraction(0)), max(abs(a - v), abs(b - v))
                near, far = (near + n * n, far + f * f) if criterion == "mse" else (near + n, far + f)
            assert Fraction(float(lo[0])) <= near and far <= Fraction(float(hi[0])), (trial, criterion)


def test_a_prediction_enclosed_from_zero_is_an_undecided_error():
    """The class is +1 where f > 0: a prediction in [0, 1] of a -1 label may be right (f = 0)."""
    lo, hi = loss_totals("error", np.array([-1.0]), np.array([[0.0]]), np.array([[1.0]]))
    assert (lo[0], hi[0]) == (0.0, 1.0)


def test_merged_covers_hold_the_exact_weighted_sum():
    rng = np.random.default_rng(1)
    for trial in range(300):
        k, total = int(rng.integers(2, 6)), int(rng.integers(3, 200))
        values = rng.integers(0, total, size=k).astype(float)
        covers = [(np.array([0.0, 1.0]), np.array([v]), np.array([v]), np.array([True])) for v in values]
        _, lo, hi, _ = merge_covers(covers, [1.0 / total] * k)
        assert Fraction(float(lo[0])) <= Fraction(int(values.sum()), total) <= Fraction(float(hi[0])), trial


def test_combination_hulls_hold_the_exact_interval_products():
    rng = np.random.default_rng(2)
    for trial in range(100):
        ranges = np.sort(rng.normal(size=(2, 3, 2)), axis=-1)  # (J, K, 2)
        low = rng.normal(size=(3, 3, 2))  # (m, K, J)
        up = low + rng.random((3, 3, 2))
        lo, hi = combination_hull(ranges, low, up)
        for i in range(3):
            for j in range(2):
                small = large = Fraction(0)
                for k in range(3):
                    products = [Fraction(float(w)) * Fraction(float(f)) for w in ranges[j, k] for f in
                                (low[i, k, j], up[i, k, j])]
                    small, large = small + min(products), large + max(products)
                assert Fraction(float(lo[i, j])) <= small and large <= Fraction(float(hi[i, j])), trial


def _expansion(seed):
    rng = np.random.default_rng(seed)
    X, X_new, c = rng.normal(size=(30, 3)), rng.normal(size=(7, 3)), rng.normal(size=30)
    return ((X_new[:, None, :] - X[None, :, :]) ** 2).sum(-1), c


def _extended(D, c, t):
    """The expansion's values in extended precision (x87 long double where numpy has it)."""
    return np.exp(-np.longdouble(t) * D.astype(np.longdouble)) @ c.astype(np.longdouble)


def _holds(low, up, f):
    return np.all(low.astype(np.longdouble) <= f) and np.all(f <= up.astype(np.longdouble))


def test_expansion_covers_hold_the_extended_precision_values():
    """At a point and at the nodes of an interval; the allowance is per unit of |c| (a signed sum
    of c made it negative for all-negative coefficients)."""
    for seed in range(5):
        D, c = _expansion(seed)
        for t in (0.3, 0.5, 0.77):
            _, low, up = expansion_cover(cross_products(D), c, t, t, 3, 30)
            assert _holds(low[:, 0], up[:, 0], _extended(D, c, t))
        edges, low, up = expansion_cover(cross_products(D), c, 0.4, 0.9, 3, 30)
        for j in range(edges.size - 1):
            for t in edges[j:j + 2]:
                assert _holds(low[:, j], up[:, j], _extended(D, c, t)), (seed, j)
    D, c = _expansion(3)
    for coefficients in (-1e3 * np.abs(c), 1e3 * np.abs(c)):
        for a, b in ((0.5, 0.5), (0.4, 0.9)):
            edges, low, up = expansion_cover(cross_products(D), coefficients, a, b, 3, 30)
            assert np.all(up - low > 0) and _holds(low[:, 0], up[:, 0], _extended(D, coefficients, a))


def _exact_totals(y, low, up):
    """The exact sums of the smallest and the largest absolute errors of predictions in [low, up]."""
    near = far = Fraction(0)
    for a, b, v in zip(low, up, y):
        a, b, v = Fraction(float(a)), Fraction(float(b)), Fraction(float(v))
        near, far = near + max(a - v, v - b, Fraction(0)), far + max(abs(a - v), abs(b - v))
    return near, far


def test_the_box_folds_pooled_loss_holds_the_exact_mean():
    """Kernel ridge's folds over both parameters summed and divided their totals with no outward
    rounding of their own (the totals' allowances covered it: this held before too)."""
    from approxpath.surface.folds import BoxFolds

    rng = np.random.default_rng(3)
    cuts = SimpleNamespace(cuts=np.array([0.0, 1.0]))
    for _ in range(500):
        ys = [rng.normal(size=int(rng.integers(1, 5))) * 10 for _ in range(int(rng.integers(2, 6)))]
        lows = [y + rng.normal(size=y.size) for y in ys]
        ups = [low + rng.random(low.size) for low in lows]
        count = sum(y.size for y in ys)
        me = SimpleNamespace(_folds=[(None, y) for y in ys], _count=float(count), criterion="mae")
        lo, hi = BoxFolds._pooled(me, [(low[:, None], up[:, None]) for low, up in zip(lows, ups)], [cuts] * len(ys))
        near, far = (sum(parts, Fraction(0)) / count for parts in zip(*map(_exact_totals, ys, lows, ups)))
        assert Fraction(lo) <= near and far <= Fraction(hi)
