"""What the command line says: warnings and usage errors in one line each, the flags named
(the closest one to a misspelled flag, the option given where an error would mislead), a
selection's advice in the command line's own flags, each recorded warning said once."""

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_classification, make_sinc


def test_warnings_are_one_line(tmp_path, capsys, monkeypatch):
    """A warning on the command line is one ``approxpath: warning:`` line, not Python's file,
    line number and source line."""
    import warnings

    import approxpath.cli.commands as commands

    real = commands.load_data

    def warns(*args, **kwargs):
        warnings.warn("the data look odd", UserWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(commands, "load_data", warns)
    X, y = make_classification(n=30, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["path", "kernel_svm", "--data", str(data), "--eps", "0.5", "--range", "1", "2", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "approxpath: warning: the data look odd" in err
    assert "UserWarning" not in err and ".py:" not in err


def test_a_selection_s_advice_names_the_flags(tmp_path, capsys):
    """``select`` stopped short said "raise max_solves ... or pass strict=False to keep this
    result" (Python's words; the command keeps the result already)."""
    X, y = make_classification(n=40, seed=1)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    assert main(["select", "kernel_svm", "--data", str(data), "--cv", "2", "--range", "1", "2", "--tol", "1e-9",
                 "--max-solves", "8", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "--max-solves" in err and "--tol" in err and "strict=False" not in err


def test_sorted_points_are_told_to_shuffle_with_the_flag(tmp_path, capsys):
    """The warning of unshuffled folds of sorted points said "shuffle=SEED, --shuffle SEED, or a
    splitter": the command line's way alone is --shuffle; with it, no warning."""
    X, y = make_sinc(n=40, seed=0)
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    argv = ["select", "kernel_ridge", "--data", str(data), "--format", "csv", "--criterion", "mse", "--cv", "3",
            "--range", "0.5", "2", "--tol", "1", "--no-progress"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "sorted by feature 1" in err and "shuffle them (--shuffle SEED)" in err and "shuffle=" not in err
    assert main(argv + ["--shuffle", "0"]) == 0
    assert "sorted by feature" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["path", "kernel_svm", "--data", "x.csv", "--bais", "dynamic"],
     "approxpath path: error: unrecognized arguments: --bais dynamic; did you mean '--bias'?"),
    (["verify", "x.npz", "--epz", "1"], "approxpath verify: error: unrecognized arguments: --epz 1; did you mean '--eps'?"),
    (["path", "kernel_svm", "--data", "x.csv", "extra"], "approxpath path: error: unrecognized arguments: extra"),
    (["path", "kernel_svm", "--data", "x.csv", "--bias", "dynamc"],
     "approxpath path: error: argument --bias: invalid choice: 'dynamc'"),
    (["path", "kernel_svm", "--data", "x.csv", "--eps", "abc"], "approxpath path: error: argument --eps: not a finite"),
    (["pth"], "approxpath: error: argument command: invalid choice: 'pth'"),
    (["path", "kernel_svm", "--data", "x.csv", "--kernel", "ard", "--feature-weights", "-1,2"],
     "approxpath path: error: argument --feature-weights: expected one argument; write a value that starts with '-' "
     "as --feature-weights=VALUE"),
    (["path", "kernel_svm", "--data", "x.csv", "--eps"], "approxpath path: error: argument --eps: expected one argument ("),
])
def test_a_usage_error_is_one_line_naming_the_closest_flag(argv, expected, capsys):
    """argparse printed its usage block (3 to 19 lines) before the error, and no closest name."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected), err
    assert err.rstrip().endswith("--help)")


def test_a_flag_that_starts_like_one_names_it(capsys):
    """difflib finds '--data' too unlike '--data-file' (and 'tol' unlike 'tolerance')."""
    assert main(["verify", "x.npz", "--data-file", "d.csv"]) == 2
    assert "did you mean '--data'?" in capsys.readouterr().err


def test_a_selections_advice_names_the_flags():
    """The command line said "widen the interval" where its flags are --range and --weights,
    and "raise max_solves or tol" where they are --max-solves and --tol; ends that differ past 6
    digits read alike (both "0.1")."""
    from approxpath.cli.checks import as_advice
    from approxpath.selection import RangeWarning, ShortfallWarning

    edge = RangeWarning("select: ...", "the chosen t = 2", [("bandwidth", "upper", 2.0)])
    assert as_advice(edge).endswith("at the upper end of --range, 2: the criterion may be better beyond it; widen "
                                    "--range past it")
    box = RangeWarning("select: ...", "the choice", [("bandwidth", "lower", 0.5), ("c", "upper", 8.0)])
    assert as_advice(box, box=True).endswith("at the lower end of --range, 0.5 and the upper end of --weights, 8: the "
                                             "criterion may be better beyond them; widen --range and --weights past "
                                             "them")
    assert as_advice(box).endswith("widen --range past them")  # (select over C: --range is C's)
    near = RangeWarning("select: ...", "the choice", [("c", "lower", 0.1), ("c", "upper", 0.1000001)])
    assert "the lower end of --weights, 0.1 and the upper end of --weights, 0.1000001:" in as_advice(near, box=True)
    short = ShortfallWarning("{who}: delta = 1 > {tol} = 0.1: {why}; raise {max_solves} or {tol}, or {smaller}",
                             1.0, 0.1, True, dict(why="spent {braces}"))
    assert str(short) == ("select: delta = 1 > tol = 0.1: spent {braces}; raise max_solves or tol, or choose over a "
                          "smaller box")
    assert as_advice(short) == ("select: delta = 1 > --tol = 0.1: spent {braces}; raise --max-solves or --tol, or "
                                "choose a smaller --range or --weights")
    assert as_advice(UserWarning("other")) == "other"
    # an end left undecided (held-out points no exact solve settles): widening would not help
    undecided = RangeWarning("select: ...", "the chosen t = 2", [("bandwidth", "upper", 1024.0)], undecided=True)
    assert as_advice(undecided).endswith("at the upper end of --range, 1024, where the exact solves leave the "
                                         "criterion undecided: a better value there or beyond it is not ruled out, "
                                         "and widening --range would not decide it; narrow --range to leave that end "
                                         "out if it is of no interest")
    import pickle  # (scikit-learn's workers send warnings back pickled: they failed to unpickle)

    from approxpath.selection import SortedFoldsWarning

    for w in (edge, box, undecided, short, short.renamed(tol="cv_tol"), SortedFoldsWarning(1, 5, "a custom way")):
        back = pickle.loads(pickle.dumps(w))
        assert type(back) is type(w) and str(back) == str(w) and vars(back) == vars(w)


def test_misleading_errors_name_the_option_given(tmp_path, capsys, monkeypatch):
    """Each once blamed something else: numpy's "expected non-negative integer" for --seed -1;
    "got 0.0" for a range end that underflows; --kernel precomputed (not an option of verify)
    for --distances on a gaussian certificate; an unreadable data file for --n-features."""
    monkeypatch.chdir(tmp_path)

    def error(argv):
        assert main(argv) == 2
        return capsys.readouterr().err.strip()

    assert error(["data", "sinc", "--out", "s.csv", "--seed", "-1"]) == (
        "approxpath: error: --seed must be a non-negative integer; got -1")
    assert main(["data", "classification", "--out", "c.csv", "--n", "30"]) == 0
    for low in ("2^-1100", "1e-400"):
        assert f"argument --range: '{low}' is below the smallest positive double" in error(
            ["path", "kernel_svm", "--data", "c.csv", "--range", low, "1"])
    assert main(["path", "kernel_svm", "--data", "c.csv", "--eps", "0.5", "--range", "1", "2", "--out", "c.npz",
                 "--no-progress"]) == 0
    np.save("D.npy", np.zeros((30, 30)))
    assert error(["verify", "c.npz", "--distances", "D.npy"]) == (
        "approxpath: error: --distances is for a certificate of --kernel precomputed; this one's kernel is gaussian: "
        "drop --distances")
    assert error(["verify", "c.npz", "--n-features", "3"]).endswith(
        "is not readable as csv data with --n-features 3: pass --data FILE or drop --n-features")


def test_recorded_warnings_are_said_once_each_in_order():
    """numpy's overflow warnings, recorded with "always", reached select's JSON 262,818 times."""
    import warnings

    from approxpath.cli.checks import said_once

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for text in ("overflow", "edge", "overflow", "overflow", "budget"):
            warnings.warn(text, RuntimeWarning)
    assert [str(w.message) for w in said_once(caught)] == ["overflow", "edge", "budget"]


class _Raising:
    """A plug-in's objective with a bug (a shape slip raises ValueError, another RuntimeError)."""

    error = ValueError

    def primal_objective(self, primal, tau):
        if self.error is None:  # approxpath's own error, called from the plug-in's code
            from approxpath.numerics import log_mid

            return log_mid("a", tau)
        raise self.error("matmul: Input operand 1 has a mismatch in its core dimension 0")


@pytest.mark.parametrize("error", [ValueError, RuntimeError, None])
def test_a_plugins_own_bug_is_said_to_be_the_plugins_where(error, tmp_path, capsys, monkeypatch):
    """A plug-in's ValueError was "approxpath: error: matmul: ..." (bad input, its check or its
    slip), and any other of its errors "internal error in approxpath: please report it": both now
    name the plug-in's code, file, line and function (the status of bad input, 2, and of a bug, 70);
    approxpath's own error under a plug-in's frame is still approxpath's."""
    from approxpath import registry
    from approxpath.testing import ToyBound, ToyProjection

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    bound = type("BuggyBound", (ToyBound,), dict(name="buggy_objective", __module__=__name__))
    registry.register(type("Buggy", (_Raising, ToyProjection), dict(name="buggy_objective", Bound=bound, error=error,
                                                                     __module__=__name__)))
    X, y = make_sinc(n=12, seed=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    status = main(["path", "buggy_objective", "--data", str(tmp_path / "d.csv"), "--format", "csv", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    if error is None:
        assert status == 70 and err.startswith("approxpath: internal error in approxpath ")
    elif error is ValueError:
        assert status == 2 and err.startswith("approxpath: error: ValueError: matmul: Input operand 1 has a mismatch")
        assert err.endswith(", in primal_objective)") and "(raised in a plug-in problem's own code, test_cli" in err
    else:
        assert status == 70 and err.startswith("approxpath: error in a plug-in problem's own code (test_cli_messages")
        assert f", in primal_objective): {error.__name__}: matmul: Input operand 1" in err and "approxpath 0" not in err


class _GapRaising:
    """A plug-in bound whose gap has a bug."""

    def gap(self, primal, dual, tau):
        raise RuntimeError("operands could not be broadcast together with shapes (12,) (11,)")


def test_a_plugin_bounds_raising_gap_is_its_bug_not_a_solver_failure(tmp_path, capsys, monkeypatch):
    """A plug-in's Bound.gap that raised read "solver failure: no exact solve succeeded anywhere in
    [0.1, 10]: ... RuntimeError: ..." (status 4), as if each backend had failed at each point: it is
    the plug-in's bug, named with its site (status 70), at the first exact solve."""
    from approxpath import registry
    from approxpath.testing import ToyBound, ToyProjection

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    bound = type("GapBound", (_GapRaising, ToyBound), dict(name="buggy_gap", __module__=__name__))
    registry.register(type("BuggyGap", (ToyProjection,), dict(name="buggy_gap", Bound=bound, __module__=__name__)))
    X, y = make_sinc(n=12, seed=0)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    status = main(["path", "buggy_gap", "--data", str(tmp_path / "d.csv"), "--format", "csv", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert status == 70 and err.startswith("approxpath: error in a plug-in problem's own code (test_cli_messages.py:")
    assert err.endswith(", in gap): RuntimeError: operands could not be broadcast together with shapes (12,) (11,); "
                        "report it to the plug-in's authors with the traceback above")
