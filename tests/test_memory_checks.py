"""Selections without paths and surfaces are refused before anything large is allocated when
their estimate (a path's: :func:`approxpath.memory.path_bytes`) exceeds the memory available,
as paths are; a budget above the estimate lets them run."""

import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.errors import InputError
from approxpath.memory import path_bytes


@pytest.fixture
def ridge():
    X, y = make_sinc(n=60, seed=0)
    return approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)


def _budget(monkeypatch, problem, share):
    """The memory available at ``share`` of what the refusal rule (90 %) needs for ``problem``
    (the machine's own free memory left out: the runs above the estimate are small)."""
    have = share * path_bytes(problem).total / 0.9
    monkeypatch.setattr("approxpath.memory.available_bytes", lambda: (have, "a test's budget"))


CALLS = {
    "select, closed form": lambda p: approxpath.select(p, "loocv", interval=(0.5, 2.0), tol=0.5),
    "select_surface, closed form": lambda p: approxpath.select_surface(p, "loocv", bandwidths=(0.5, 2.0),
                                                                       weights=(0.05, 0.2), tol=0.5),
    "select_surface, 3 folds": lambda p: approxpath.select_surface(p, "mse", cv=3, shuffle=0, bandwidths=(0.5, 2.0),
                                                                   weights=(0.05, 0.2), tol=0.5),
    "approximate_surface": lambda p: approxpath.approximate_surface(p, 0.5, (0.05, 0.2), (0.5, 2.0)),
}


@pytest.mark.filterwarnings("ignore::approxpath.selection.RangeWarning")  # (a choice at the small box's side)
@pytest.mark.parametrize("name", CALLS)
def test_refused_below_the_estimate_and_run_above_it(name, ridge, monkeypatch):
    _budget(monkeypatch, ridge, 0.99)
    with pytest.raises(InputError, match="kernel_ridge with n = 60 needs about .* more than 90% of the .* available "
                                         "under a test's budget"):
        CALLS[name](ridge)
    _budget(monkeypatch, ridge, 1.01)
    assert CALLS[name](ridge) is not None
