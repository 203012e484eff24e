"""The SVM's prediction enclosures are tight where their proofs are: an instance on which the
radius of the exact optimum's RKHS function, and so one end of an enclosure, is attained.

Two points x1 (y = +1) and x2 (y = -1), k = k_t(x1, x2), and C = a* = 1 / (1 - k): the dual
2a - (1 - k) a^2 on alpha = (a, a) is maximized at a* = C, on its box; the margins there are
exactly 1, so the optimal bias is 0 and the optimum's decision values are +1 and -1 (closed form,
checked by a tight CVXPY solve).  The pair w = y * alpha, alpha = (a, a) with a < a* has
P - P* = D* - D = (1 - k)(a* - a)^2 = ||f - f*||^2 / 2 exactly (both objectives are quadratic
along the segment), so the radius sqrt(gap) of a path's pair, and sqrt(2 (P - P*)) of a cell's,
is exactly ||f - f*||: the enclosure's upper end of f*(x1) is 1, and the lower end of f*(x2) is
-1.  A radius smaller than proven (sqrt(gap / 2), or a cell's without the factor 2) leaves the
optimum outside by ~0.06."""

import numpy as np
import pytest

import approxpath
from approxpath.cells import CellBound
from approxpath.problems.kernel_svm.enclosure import prediction_enclosure
from approxpath.problems.kernel_svm.points import SVMDual, SVMPrimal

from selection_helpers import svm_predict

cp = pytest.importorskip("cvxpy")

_X = np.array([[0.0, 0.0], [1.0, 0.5]])
_Y = np.array([1.0, -1.0])
_T = 0.7
# The enclosure's rounding allowances and the cell's width in C move its ends by far less.
_TIGHT = 1e-5


def _instance(fraction):
    k = float(np.exp(-_T * np.sum((_X[0] - _X[1]) ** 2)))
    a_star = 1.0 / (1.0 - k)
    a = fraction * a_star
    return k, a_star, SVMPrimal(w=np.array([a, -a]), b=0.0), SVMDual(alpha=np.array([a, a]))


def _assert_reached(low, up):
    """The enclosures (2, 1) hold the optimum's values +1 and -1, the upper end of the first and the
    lower end of the second at them (attained: the radius cannot shrink)."""
    f = np.array([1.0, -1.0])
    assert np.all(low[:, 0] <= f) and np.all(f <= up[:, 0])
    assert up[0, 0] - 1.0 <= _TIGHT and -1.0 - low[1, 0] >= -_TIGHT


def test_the_instance_is_what_its_closed_form_says():
    k, a_star, primal, dual = _instance(0.9)
    problem = approxpath.get_problem("kernel_svm")(_X, _Y, c=a_star)
    np.testing.assert_allclose(svm_predict(_X, _Y, _T, a_star, _X), [1.0, -1.0], atol=1e-6)
    P = problem.primal_objective(problem.primal_at(primal, _T), _T)
    D = problem.dual_objective(dual, _T)
    half = (1.0 - k) * (0.1 * a_star) ** 2  # ||f - f*||^2 / 2
    assert P - a_star == pytest.approx(half, rel=1e-9) and a_star - D == pytest.approx(half, rel=1e-9)


@pytest.mark.parametrize("fraction", [0.9, 0.5])
def test_a_pairs_enclosure_reaches_the_optimum_exactly(fraction):
    k, a_star, primal, dual = _instance(fraction)
    problem = approxpath.get_problem("kernel_svm")(_X, _Y, c=a_star)
    gap = problem.bound.gap(primal, dual, _T, _T)
    assert gap == pytest.approx(2.0 * (1.0 - k) * ((1.0 - fraction) * a_star) ** 2, rel=1e-9)
    _, low, up = prediction_enclosure(problem.bound, primal, gap, _T, _T, _X)
    _assert_reached(low, up)


def test_a_cells_enclosure_reaches_the_optimum_exactly():
    """On a cell [a*, a* (1 + 1e-7)] in C the optimum stays (+1, -1) (alpha* = (a*, a*) is
    inside the box) and the primal's suboptimality is largest at the upper C; the cell's radius
    sqrt(2 (P - P*)) from it is ||f - f*|| up to the cell's width."""
    k, a_star, primal, dual = _instance(0.9)
    c_hi = a_star * (1.0 + 1e-7)
    problem = approxpath.get_problem("kernel_svm")(_X, _Y, c=a_star)
    np.testing.assert_allclose(svm_predict(_X, _Y, _T, c_hi, _X), [1.0, -1.0], atol=1e-6)
    hinge = 2.0 * (1.0 - 0.9 * a_star * (1.0 - k))  # both margins 0.9 < 1
    excess = (1.0 - k) * (0.9 * a_star) ** 2 + c_hi * hinge - a_star  # P - P* at c_hi (P* = a* there too)
    _, low, up = CellBound(problem.bound).prediction_enclosure(primal, dual, excess * (1 + 1e-12), _T, _T,
                                                               a_star, c_hi, _X)
    _assert_reached(low, up)
