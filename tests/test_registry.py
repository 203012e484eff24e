import re
import types

import pytest

from approxpath import registry
from approxpath.errors import InputError
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
    """A subclass of kernel_svm named ``name`` (its Bound too: the registry refuses other names)."""
    base = get_problem("kernel_svm")
    bound = type("OtherBound", (base.Bound,), {"name": name, "__module__": "somewhere.else"})
    return type("Other", (base,), {"name": name, "Bound": bound, "__module__": "somewhere.else"})


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


def test_an_entry_point_claiming_a_builtins_name_is_skipped_naming_both(monkeypatch):
    """It raised DuplicateProblemError at every lookup of any other name (one plug-in disabled
    every other); now it is skipped with a warning like any plug-in that cannot be loaded, and the
    built-in stays."""
    ep = types.SimpleNamespace(name="kernel_svm", value="pkg.mod:Other", load=lambda: _clone("kernel_svm"),
                               dist=types.SimpleNamespace(name="pkg"))
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items()})
    with pytest.warns(UserWarning, match="skipped the plug-in problem entry point 'kernel_svm' = pkg.mod:Other of pkg: "
                                         "problem name 'kernel_svm' is registered twice: by approxpath.problems"):
        assert "klasso" in available_problems()
    assert get_problem("kernel_svm").__module__ == "approxpath.problems.kernel_svm.problem"


@pytest.mark.parametrize("name,options,hint", [
    ("kernel_svm", dict(bias="dynamc"), "did you mean 'dynamic'"),
    ("klasso", dict(lam=0.1, dual_restoration="movin"), "did you mean 'moving'"),
    ("robust_l1", dict(lam=0.1, dual_restoration="projektion"), "did you mean 'projection'"),
    ("klasso", dict(lamb=0.1), "did you mean 'lam'"),
    ("kernel_svm", dict(C=0.1), "did you mean 'c'"),  # scikit-learn's spelling: one letter, difflib finds none
    ("klasso", dict(LAM=0.1), "did you mean 'lam'"),
])
def test_unknown_choices_suggest_the_closest(name, options, hint):
    import numpy as np

    from approxpath.errors import InputError

    X = np.linspace(-1.0, 1.0, 12)[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.raises(InputError, match=hint):
        get_problem(name)(X, y, **options)


# ---------------------------------------------------------------------------- broken plug-ins
def _fresh_registry(monkeypatch, *eps):
    """The registry as a fresh process sees it with the entry points ``eps`` installed."""
    monkeypatch.setattr(registry, "entry_points", lambda group: list(eps) if group == registry.ENTRY_POINT_GROUP
                        else [])
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _entry_point(name, value, load):
    return types.SimpleNamespace(name=name, value=value, load=load, dist=types.SimpleNamespace(name="pkg"))


def _missing_dual_violation():
    """The toy projection without its dual_violation (a plug-in author's slip)."""
    from approxpath.testing import ToyProjection

    ns = {k: v for k, v in vars(ToyProjection).items() if k not in ("dual_violation", "__dict__", "__weakref__")}
    return type("NoDualViolation", (Problem,), dict(ns, name="no_dual_violation"))


def _bound_without_dual_floor():
    """The toy projection whose Bound lacks dual_floor: it was registered and listed, and its first
    path failed as "internal error in approxpath: please report it" (exit 70)."""
    from approxpath.bound import Bound
    from approxpath.testing import ToyBound, ToyProjection

    ns = {k: v for k, v in vars(ToyBound).items() if k not in ("dual_floor", "__dict__", "__weakref__")}
    bound = type("NoFloorBound", (Bound,), dict(ns, name="bound_no_floor"))
    return type("NoFloor", (ToyProjection,), dict(name="bound_no_floor", Bound=bound))


def _typo():
    from importlib.metadata import EntryPoint

    return EntryPoint("typo", "pkg.problm:Nope", registry.ENTRY_POINT_GROUP).load()  # no module pkg.problm


@pytest.mark.parametrize("name,load,why", [
    ("typo", _typo, "ModuleNotFoundError: No module named 'pkg'"),
    ("lasso_ep", lambda: _clone("key_mismatch"), "the entry point's name is 'lasso_ep' but the class's name is "
                                                  "'key_mismatch'"),
    ("no_dual_violation", _missing_dual_violation, "TypeError: .*NoDualViolation does not implement dual_violation"),
    ("svm_renamed", lambda: type("Renamed", (get_problem("kernel_svm"),), {"name": "svm_renamed"}),
     "is named 'svm_renamed' but its Bound is named 'kernel_svm'"),
    ("bound_no_floor", _bound_without_dual_floor, "TypeError: .*NoFloorBound does not implement dual_floor "
                                                  "\\(required by approxpath.Bound\\)"),
    ("a_module", lambda: types, "it loads module 'types', not a class \\(give module:Class\\)"),
], ids=["module-typo", "name-mismatch", "missing-method", "bound-name-mismatch", "bound-missing-method", "module"])
def test_a_broken_plugin_is_skipped_with_one_warning_and_the_others_stay_usable(monkeypatch, name, load, why):
    """F5/F6: a plug-in that cannot be loaded no longer breaks every lookup (the first one
    raising, the next ones silently seeing a half-loaded registry): it is skipped with a
    one-line warning naming the entry point, its distribution and the error; asking for it by
    name says why it is not there."""
    good = _clone("good_plugin")
    _fresh_registry(monkeypatch, _entry_point(name, f"pkg.problem:{name}", load),
                    _entry_point("good_plugin", "pkg.mod:Good", lambda: good))
    with pytest.warns(UserWarning) as record:
        names = available_problems()
    assert "good_plugin" in names and "kernel_svm" in names
    assert get_problem("good_plugin") is good and registry._loaded
    [warning] = [str(w.message) for w in record]
    assert "\n" not in warning and warning.startswith(f"skipped the plug-in problem entry point {name!r} = "
                                                      f"pkg.problem:{name} of pkg: ")
    assert re.search(why, warning), warning
    assert name not in names
    with pytest.raises(InputError, match=f"problem {name!r} could not be loaded: entry point") as err:
        get_problem(name)
    assert re.search(why, str(err.value)) and "\n" not in str(err.value)
    assert available_problems() == names  # loaded once, completely


def test_register_refuses_a_class_missing_a_method_naming_it():
    with pytest.raises(TypeError, match=r"NoDualViolation does not implement dual_violation \(required by"):
        register(_missing_dual_violation())


def test_register_refuses_a_problem_whose_bound_has_another_name():
    cls = type("Renamed", (get_problem("kernel_svm"),), {"name": "svm_renamed", "__module__": "pkg.problem"})
    with pytest.raises(TypeError, match="pkg.problem.Renamed is named 'svm_renamed' but its Bound is named "
                                        "'kernel_svm'"):
        register(cls)
    assert "svm_renamed" not in registry._REGISTRY


def test_two_entry_points_of_one_name_are_both_skipped_and_the_others_stay(monkeypatch):
    """Which one a lookup got would depend on the order of installation: neither is used, the
    name says why, and a third plug-in is not disabled by the clash."""
    first, second, other = _clone("twin"), _clone("twin"), _clone("third_party")
    _fresh_registry(monkeypatch, _entry_point("twin", "a.mod:Twin", lambda: first),
                    _entry_point("twin", "b.mod:Twin", lambda: second),
                    _entry_point("third_party", "c.mod:Other", lambda: other))
    with pytest.warns(UserWarning, match="2 installed entry points claim the name 'twin'"):
        assert get_problem("third_party") is other
    assert "twin" not in available_problems()
    with pytest.raises(InputError, match="problem 'twin' could not be loaded: entry point 'twin' = b.mod:Twin of pkg: "
                                         "2 installed entry points claim the name 'twin', this one and entry point "
                                         "'twin' = a.mod:Twin of pkg \\(uninstall all but one\\)"):
        get_problem("twin")  # (both named: the error named only the one it was raised for)


def test_registering_a_builtins_name_before_that_problem_is_imported_is_refused():
    """register() of a class named 'kernel_ridge' in a fresh process was accepted (the built-in not
    yet imported): get_problem then returned it, while get_bound and verify used the built-in's."""
    import subprocess
    import sys

    code = ("import approxpath\nfrom approxpath.testing import ToyProjection\n"
            "cls = type('Fake', (ToyProjection,), dict(name='kernel_ridge', Bound=type('FakeBound', "
            "(ToyProjection.Bound,), dict(name='kernel_ridge'))))\n"
            "try:\n    approxpath.register(cls)\nexcept approxpath.registry.DuplicateProblemError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("problem name 'kernel_ridge' is registered twice: by approxpath.problems."
                                 "kernel_ridge"), out.stdout + out.stderr


def test_a_class_defined_again_replaces_the_one_before():
    """A notebook's cell with ``@register class ElasticNet`` run twice: 'registered twice: by
    __main__.ElasticNet and by __main__.ElasticNet'.  A class of another module is still refused."""
    base = get_problem("kernel_svm")

    def define():
        bound = type("AgainBound", (base.Bound,), {"name": "defined_again", "__module__": "notebook"})
        return type("Again", (base,), {"name": "defined_again", "Bound": bound, "__module__": "notebook"})

    try:
        first, second = register(define()), register(define())
        assert first is not second and get_problem("defined_again") is second
        with pytest.raises(DuplicateProblemError, match="by notebook.Again and by elsewhere.Again"):
            register(type("Again", (second,), {"__module__": "elsewhere"}))
    finally:
        registry._REGISTRY.pop("defined_again", None)


def test_a_plugin_that_exits_at_import_is_skipped():
    """``sys.exit()`` in a plug-in's module ended ``approxpath problems`` (SystemExit is no Exception)."""
    import sys

    why = registry._load_entry_point(_entry_point("quits", "q.mod:Q", lambda: sys.exit("plugin refuses to load")))
    assert why == "entry point 'quits' = q.mod:Q of pkg: SystemExit: plugin refuses to load"


def test_the_cli_names_the_broken_plugin_not_approxpath(monkeypatch, capsys, tmp_path):
    from approxpath.cli import main

    _fresh_registry(monkeypatch, _entry_point("typo", "pkg.problm:Nope", _typo))
    assert main(["problems"]) == 0
    out, err = capsys.readouterr()
    assert "kernel_svm" in out and "internal error" not in err and "Traceback" not in err
    assert err.splitlines() == ["approxpath: warning: skipped the plug-in problem entry point 'typo' = pkg.problm:Nope "
                                "of pkg: ModuleNotFoundError: No module named 'pkg'"]
    data = tmp_path / "train.csv"
    data.write_text("1,2\n3,4\n")
    assert main(["path", "typo", "--data", str(data), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and err.splitlines()[-1].startswith(
        "approxpath: error: problem 'typo' could not be loaded: entry point 'typo' = pkg.problm:Nope of pkg: "
        "ModuleNotFoundError")
