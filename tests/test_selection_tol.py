"""A selection's default tol is in the criterion's scale: the choice does not depend on the
targets' units (a fixed 0.01 let a choice 3.3 times the best MSE pass as certified on targets in ±0.01)."""

import numpy as np
import pytest

from approxpath import get_problem, select
from approxpath.data import make_sinc
from approxpath.selection.losses import default_tol
from approxpath.surface import select_surface


def test_default_tol_is_a_hundredth_of_the_criterions_scale():
    y = np.array([1.0, 3.0, 2.0, 6.0])
    assert default_tol("error", y) == default_tol("lml", y) == 0.01  # a rate; nats
    for criterion in ("mse", "loocv", "gcv"):
        assert default_tol(criterion, y) == pytest.approx(0.01 * np.var(y), rel=1e-15)
    assert default_tol("mae", y) == pytest.approx(0.01 * np.std(y), rel=1e-15)
    assert default_tol("mse", np.full(5, 3.0)) == default_tol("mae", np.full(5, 3.0)) == 1e-6  # constant targets


def test_the_choice_does_not_depend_on_the_targets_units():
    """The same bandwidth, δ and exact solves in the targets' units, for y and 0.01 y (with the old
    fixed default the small targets' search stopped at once, at another t)."""
    X, y = make_sinc(n=40, noise=0.2, seed=0)
    ridge = get_problem("kernel_ridge")
    big, small = (select(ridge(X, scale * y, lam=0.001), "mse", cv=4, shuffle=0, interval=(0.125, 32.0), strict=False)
                  for scale in (1.0, 0.01))
    assert small.tol == pytest.approx(1e-4 * big.tol, rel=1e-12) and big.tol == pytest.approx(0.01 * np.var(y))
    assert small.t == big.t and small.exact_solves == big.exact_solves
    assert small.delta == pytest.approx(1e-4 * big.delta, rel=1e-6) and big.delta <= big.tol


def test_a_surface_choice_takes_the_same_default():
    X, y = make_sinc(n=30, noise=0.2, seed=1)
    s = select_surface(get_problem("kernel_ridge")(X, 0.01 * y, lam=0.01), "loocv", weights=(0.01, 1.0),
                       bandwidths=(0.5, 4.0), strict=False)
    assert s.tol == pytest.approx(0.01 * np.var(0.01 * y), rel=1e-12)
