import types

import pytest

from approxpath import registry
from approxpath.problem import Problem
from approxpath.registry import DuplicateProblemError, available_problems, get_problem, register


def test_builtin_problems_are_registered():
    assert "kernel_svm" in available_problems()
    cls = get_problem("kernel_svm")
    assert cls.__name__ == "KernelSVM" and cls.__module__ == "approxpath.problems.kernel_svm.problem"


def test_unknown_name_suggests_the_closest():
    with pytest.raises(KeyError, match="did you mean 'kernel_svm'"):
        get_problem("kernel_svn")


def _clone(name):
    base = get_problem("kernel_svm")
    return type("Other", (base,), {"name": name, "__module__": "somewhere.else"})


def test_duplicate_name_names_both_sources():
    with pytest.raises(DuplicateProblemError) as exc:
        register(_clone("kernel_svm"))
    msg = str(exc.value)
    assert "approxpath.problems.kernel_svm.problem.KernelSVM" in msg and "somewhere.else.Other" in msg


def test_same_class_twice_is_fine():
    cls = get_problem("kernel_svm")
    assert register(cls) is cls


def test_rejects_non_problems():
    with pytest.raises(TypeError):
        register(int)
    with pytest.raises(TypeError, match="no registry name"):
        register(type("Nameless", (Problem,), {}))


def test_entry_point_discovery(monkeypatch):
    """A third-party problem arrives through the entry-point group approxpath.problems."""
    cls = _clone("third_party_svm")
    ep = types.SimpleNamespace(name="third_party_svm", value="pkg.mod:Other", load=lambda: cls,
                               dist=types.SimpleNamespace(name="pkg"))
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == registry.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    assert "third_party_svm" in available_problems()
    assert get_problem("third_party_svm") is cls


def test_entry_point_duplicate_names_the_distribution(monkeypatch):
    ep = types.SimpleNamespace(name="kernel_svm", value="pkg.mod:Other", load=lambda: _clone("kernel_svm"),
                               dist=types.SimpleNamespace(name="pkg"))
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items()})
    with pytest.raises(DuplicateProblemError, match="entry point 'kernel_svm' = pkg.mod:Other of pkg"):
        available_problems()


@pytest.mark.parametrize("name,options,hint", [
    ("kernel_svm", dict(bias="dynamc"), "did you mean 'dynamic'"),
    ("klasso", dict(lam=0.1, dual_restoration="movin"), "did you mean 'moving'"),
    ("robust_l1", dict(lam=0.1, dual_restoration="projektion"), "did you mean 'projection'"),
    ("klasso", dict(lamb=0.1), "did you mean 'lam'"),
])
def test_unknown_choices_suggest_the_closest(name, options, hint):
    import numpy as np

    from approxpath.errors import InputError

    X = np.linspace(-1.0, 1.0, 12)[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.raises(InputError, match=hint):
        get_problem(name)(X, y, **options)
