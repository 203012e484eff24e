"""Shared fixtures: the known-answer toy problem and the tests' plug-in problems
(``plugin_problems``) are registered for the whole session, before any test file is collected
(so the registry-wide tests cover the same problems in every file order), every gap any test
computes is checked against weak duality, and no test sees the data files another one read."""

import functools
import warnings
from collections import OrderedDict

import pytest

from approxpath.registry import available_problems, get_problem, register
from approxpath.testing import ToyProjection

from plugin_problems import PROBLEMS

for _cls in (ToyProjection, *PROBLEMS):
    register(_cls)

#: Weak duality: no computed gap may be below -WEAK_DUALITY_TOL * scale.
WEAK_DUALITY_TOL = 1e-9


def _checked(method, dual_objective):
    @functools.wraps(method)
    def wrapper(self, primal, dual, lo, *args, **kw):
        g = method(self, primal, dual, lo, *args, **kw)
        scale = 1.0 + abs(dual_objective(self, dual, lo))
        assert g != g or g >= -WEAK_DUALITY_TOL * scale, (  # (NaN is no number below 0: NonFiniteBound's to stop)
            f"{type(self).__name__}.{method.__name__} = {g!r} violates weak duality (scale {scale:.3g})")
        return g

    wrapper._weak_duality_checked = True
    return wrapper


def check_weak_duality(monkeypatch):
    """Wrap ``Problem.gap`` and ``Bound.gap`` of every registered problem (and its search-side
    bound classes) with a weak-duality assertion (call it again after registering a problem
    inside a test, e.g. a plug-in)."""
    for name in available_problems():
        cls = get_problem(name)
        if not getattr(cls.gap, "_weak_duality_checked", False):
            monkeypatch.setattr(cls, "gap", _checked(cls.gap, lambda self, d, t: self.dual_objective(d, t)))
        for bound_cls in {cls.Bound, *cls.Bound.__subclasses__()}:
            if not getattr(bound_cls.gap, "_weak_duality_checked", False):
                monkeypatch.setattr(bound_cls, "gap", _checked(bound_cls.gap, lambda self, d, t: self.dual_floor(d, t)))


@pytest.fixture(autouse=True)
def weak_duality(request, monkeypatch):
    """Every gap any test computes satisfies weak duality -- except in the conformance check that
    hands the bounds forged pairs (a negative gap is then the verifier's reason to refuse one) and
    in tests marked ``infeasible_pairs`` (a plug-in's broken restoration, which the driver names);
    and every test starts with no data files remembered (:func:`approxpath.data.provenance` finds
    data by content: a file another test read would otherwise name a test's in-memory data of
    the same content, by test order)."""
    from approxpath.testing.checks import check_altered_pairs_are_refused_or_bounded

    params = getattr(getattr(request.node, "callspec", None), "params", {})
    check = getattr(params.get("check"), "__wrapped__", None)  # (the battery's checks come wrapped)
    if check is not check_altered_pairs_are_refused_or_bounded and not request.node.get_closest_marker(
            "infeasible_pairs"):
        check_weak_duality(monkeypatch)
    monkeypatch.setattr("approxpath.data._PROVENANCE", OrderedDict())
    yield


@pytest.fixture
def sinc_csv(tmp_path):
    """A CSV file of 30 seeded sinc points (the target last)."""
    import numpy as np

    from approxpath.data import make_sinc

    X, y = make_sinc(n=30, seed=0)
    file = tmp_path / "sinc.csv"
    np.savetxt(file, np.column_stack([X, y]), delimiter=",")
    return file


@pytest.fixture
def classes_csv(tmp_path):
    """A CSV file of 24 seeded points of two classes labelled -1 and +1 (the label last)."""
    import numpy as np

    from approxpath.data import make_classification

    X, y = make_classification(n=24, seed=3, separation=1.5)
    file = tmp_path / "cls.csv"
    np.savetxt(file, np.column_stack([X, y]), delimiter=",")
    return str(file)


@pytest.fixture
def svm_data():
    from approxpath.data import make_classification

    return make_classification(n=40, d=2, seed=1)


def pytest_configure(config):
    warnings.filterwarnings("ignore", message=".*labels.*->.*", category=UserWarning)


@pytest.fixture(scope="module")
def one_blas_thread():
    """Small dense algebra (references of a few dozen points) runs ~100x slower when OpenBLAS
    spreads it over threads on a busy machine: one thread for a module that asks for it."""
    from approxpath.compute.parallelism import blas_threads

    with blas_threads(1):
        yield


def pytest_addoption(parser):
    parser.addoption("--reverse-order", action="store_true",
                     help="run the collected tests last to first (CI's check that no test leans on another's state)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--reverse-order"):
        items.reverse()
