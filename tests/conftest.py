"""Shared fixtures: the toy problem is registered for the whole session (so the conformance
suite covers it), and every gap any test computes is checked against weak duality."""

import functools
import warnings

import pytest

from approxpath.registry import get_problem, available_problems, register

from toy_problem import ToyProjection

register(ToyProjection)

#: Weak duality: no computed gap may be below -WEAK_DUALITY_TOL * scale.
WEAK_DUALITY_TOL = 1e-9


def _checked(method):
    @functools.wraps(method)
    def wrapper(self, primal, dual, lo, *args, **kw):
        g = method(self, primal, dual, lo, *args, **kw)
        scale = 1.0 + abs(self.dual_objective(dual, lo))
        assert g >= -WEAK_DUALITY_TOL * scale, (
            f"{self.name}.{method.__name__} = {g!r} violates weak duality (scale {scale:.3g})")
        return g

    wrapper._weak_duality_checked = True
    return wrapper


def check_weak_duality(monkeypatch):
    """Wrap gap and gap_bound of every registered problem with a weak-duality assertion (call
    it again after registering a problem inside a test, e.g. a plug-in)."""
    for name in available_problems():
        cls = get_problem(name)
        for meth in ("gap", "gap_bound"):
            f = getattr(cls, meth)
            if not getattr(f, "_weak_duality_checked", False):
                monkeypatch.setattr(cls, meth, _checked(f))


@pytest.fixture(autouse=True)
def weak_duality(monkeypatch):
    """Every gap any test computes satisfies weak duality."""
    check_weak_duality(monkeypatch)
    yield


@pytest.fixture
def svm_data():
    from approxpath.data import make_classification

    return make_classification(n=40, d=2, seed=1)


def pytest_configure(config):
    warnings.filterwarnings("ignore", message=".*labels.*->.*", category=UserWarning)
