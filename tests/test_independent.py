"""Independent check of default paths, for every registered problem: at 200 random parameter
values drawn across the whole interval (for a problem with sampled pieces: at every sampled point),
the path's point is feasible and its objective is within eps of a tight pointwise CVXPY optimum
(solved from the problem's own declarations, not from the driver's exact solver)."""

import numpy as np
import pytest

import approxpath
from approxpath.registry import available_problems, get_problem

from regression_helpers import tight_optimum


def _cases():
    out = []
    for name in available_problems():
        seen = set()
        for k, (problem, interval, eps) in enumerate(get_problem(name).examples()):
            # one instance per parameter, and one with features on a lattice (kernel products
            # through level histograms) where the problem has such an example
            key = (problem.parameter, getattr(getattr(problem, "kernels", None), "lattice", None) is not None)
            if key not in seen:
                seen.add(key)
                out.append(pytest.param(problem, interval, eps,
                                        id=f"{name}-{problem.parameter}" + ("-lattice" if key[1] else "")))
    return out


@pytest.mark.parametrize("problem,interval,eps", _cases())
def test_default_path_at_200_random_parameters(problem, interval, eps):
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    if problem.bound.interval_bound:
        assert path.certified, path.summary()
    lo, hi = interval
    rng = np.random.default_rng(2024)
    taus = np.exp(rng.uniform(np.log(lo), np.log(hi), 200))
    if not problem.bound.interval_bound:  # sampled pieces claim nothing between their points
        from approxpath.certificate.claims import claimed_on

        taus = sorted({x for p in path.pieces for x, _ in claimed_on(p.kind, p.lo, p.hi)})
    worst = -np.inf
    for t in taus:
        point = path.primal(t)
        scale = 1.0 + abs(problem.dual_objective(path.dual(t), t))
        assert problem.primal_violation(point, t) <= 1e-9 * scale
        assert problem.dual_violation(path.dual(t), t) <= 1e-9 * scale
        sub = problem.primal_objective(point, t) - tight_optimum(problem, t)
        assert sub <= eps + 1e-6 * scale, (t, sub)
        worst = max(worst, sub)
    assert worst > 0.01 * eps  # the check has teeth: the path is not trivially exact
