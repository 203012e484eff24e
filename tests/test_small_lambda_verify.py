"""Lambda paths that reach small lambdas verify: the dual's scale at a piece's end leaves room
for a verifier's own bound of the stored combination, an absolute slack (rounding of the
combination and of K u in another order) that a margin relative to lambda alone did not cover:
klasso and robust_l1 lambda paths down to 1e-4 were written certified and failed ``verify`` by
~1e-14 ("dual infeasible at lambda = 0.0001"), although in exact arithmetic their duals were
feasible."""

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.moving import value_at


@pytest.mark.parametrize("name, bandwidth, eps", [("klasso", 1.0, 1e-3), ("robust_l1", 4.0, 0.1)])
def test_a_lambda_path_down_to_1e_4_verifies(tmp_path, name, bandwidth, eps):
    X, y = make_sinc(n=40, outliers=0.1, seed=0)
    problem = approxpath.get_problem(name)(X, y, parameter="lam", bandwidth=bandwidth)
    path = approxpath.approximate_path(problem, eps=eps, interval=(1e-4, 1.0))
    assert path.certified
    file = tmp_path / "lam.npz"
    path.save(file)
    report = approxpath.verify(file, X, y)
    assert report.ok, report.failures[:3]
    # the first piece's dual at its lower end, with K formed here: feasible with room to spare
    piece = path.pieces[0]
    u = np.asarray(value_at(piece.dual, piece.lo).u, dtype=float)
    K = np.exp(-bandwidth * (X - X.T) ** 2)
    assert np.max(np.abs(K @ u)) < piece.lo
