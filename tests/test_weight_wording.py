"""Paths and selections over the weight (``parameter="c"`` / ``"lam"`` at a fixed bandwidth) name
the weight, not the bandwidth ``t``, in what they print: the driver's errors, the solver's, the
claim ``approxpath verify`` states, and ``approxpath select`` / ``surface``'s usage errors."""

import numpy as np
import pytest

from approxpath import approximate_path
from approxpath.cli import main
from approxpath.data import make_classification
from approxpath.errors import BudgetExceededError, EpsilonTooSmallError, InputError, SolverError
from approxpath.progress import shown_name
from approxpath.registry import get_problem


def _sinc(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 1))
    return X, np.sinc(X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.fixture
def svm_over_c():
    X, y = make_classification(n=24, seed=3, separation=1.5)
    return get_problem("kernel_svm")(X, y, parameter="c", bandwidth=1.0)


@pytest.fixture
def sinc_csv(tmp_path):
    X, y = _sinc()
    f = tmp_path / "sinc.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    return str(f)


def test_eps_too_small_names_the_weight():
    """It said "the exact solve at t = 0.0041" on a path over lam."""
    X, y = _sinc()
    problem = get_problem("klasso")(X, y, parameter="lam", bandwidth=1.0)
    with pytest.raises(EpsilonTooSmallError) as err:
        approximate_path(problem, eps=1e-12)
    assert f"the exact solve at {shown_name(problem.parameter)} = " in str(err.value)
    assert "at t =" not in str(err.value)


def test_max_pieces_names_the_parameter_the_objective_grows_with(svm_over_c):
    """It said "an objective that grows with t, e.g. the SVM over C" on the SVM's path over C."""
    with pytest.raises(BudgetExceededError) as err:
        approximate_path(svm_over_c, eps=0.125, max_pieces=2)
    assert f"grows with {shown_name(svm_over_c.parameter)} " in str(err.value)
    assert "grows with t" not in str(err.value)


def test_relative_eps_at_a_zero_optimum_names_the_weight():
    X, _ = _sinc()
    problem = get_problem("kernel_ridge")(X, np.zeros(len(X)), parameter="lam", bandwidth=1.0)
    with pytest.raises(InputError, match="not proven positive") as err:
        approximate_path(problem, eps=0.1, relative=True)
    assert f"not proven positive at {shown_name(problem.parameter)} = " in str(err.value)


def test_solver_error_names_the_weight(svm_over_c, monkeypatch):
    import approxpath.solvers as solvers

    def fail(problem, t, name, tight, time_limit, warm, enough, need, said, refused):
        said.append(f"{name}: failed")
        return ("failed",)

    monkeypatch.setattr(solvers, "_attempt", fail)
    with pytest.raises(SolverError) as err:
        solvers.solve_exact(svm_over_c, 0.5, ["libsvm"])
    assert f"at {shown_name(svm_over_c.parameter)} = 0.5:" in str(err.value)


def test_verify_s_claim_does_not_list_the_swept_weight_as_an_option(sinc_csv, tmp_path, capsys):
    """The claim read "over lam in [0.0001, 0.1] (bandwidth=2.0, kernel='gaussian', lam=0.1)": the
    weight's constructor value, which the interval replaces, shown as fixed."""
    out = str(tmp_path / "r.npz")
    assert main(["path", "kernel_ridge", "--data", sinc_csv, "--parameter", "lam", "--bandwidth", "2",
                 "--out", out, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["verify", out, "--no-progress"]) == 0
    [claim] = [line for line in capsys.readouterr().out.splitlines() if "claim:" in line]
    assert "over lam in [" in claim and "bandwidth=2.0" in claim
    assert "lam=" not in claim


def test_select_over_the_weight_takes_over_naming_it(sinc_csv, capsys):
    """--over's default named the bandwidth whatever the path's parameter: --over lam was refused
    with a path over lam, and --over bandwidth chose lam."""
    base = ["select", "kernel_ridge", "--data", sinc_csv, "--parameter", "lam", "--bandwidth", "2", "--no-progress",
            "--tol", "1"]
    assert main(base + ["--over", "lam"]) == 0
    assert "lam = " in capsys.readouterr().out
    assert main(base + ["--over", "bandwidth"]) == 2
    assert "--parameter lam" in capsys.readouterr().err
    assert main(base + ["--weights", "0.01", "1"]) == 2
    err = capsys.readouterr().err
    assert "--range" in err and "over the bandwidth alone" not in err
    assert main(base[:4] + ["--no-progress", "--over", "lam"]) == 2
    assert "--parameter lam" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["surface", "--eps", "0.5"], ["select", "--over", "lam,bandwidth"]])
def test_both_parameters_with_a_path_over_the_weight_say_the_flag(sinc_csv, capsys, command):
    """It said "build kernel_ridge with parameter='bandwidth'" (the library's spelling)."""
    assert main([command[0], "kernel_ridge", "--data", sinc_csv, *command[1:], "--parameter", "lam", "--bandwidth",
                 "2", "--weights", "0.01", "1", "--range", "0.5", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "drop --parameter lam" in err and "parameter='bandwidth'" not in err


def test_a_weight_path_without_its_bandwidth_names_no_single_kernel():
    """The refusal quoted the Gaussian kernel's formula whatever the kernel family."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=10, seed=0)
    for kernel in ("gaussian", "laplacian"):
        with pytest.raises(InputError, match=r"needs a fixed positive bandwidth=t of the kernel exp\(-t D\)$"):
            get_problem("klasso")(X, y, parameter="lam", kernel=kernel)


def test_a_point_outside_the_path_names_the_weight(svm_over_c, tmp_path):
    """``path.primal(5.0)`` on a path over C said "t = 5.0 is outside the path's interval"."""
    path = approximate_path(svm_over_c, eps=0.1, interval=(0.1, 1.0))
    with pytest.raises(ValueError, match=r"^C = 5.0 is outside the path's interval \[0.1, 1.0\]"):
        path.primal(5.0)
    with pytest.raises(InputError, match="^C must be one number"):
        path.dual([0.5, 0.6])
    path.save(tmp_path / "c.npz")
    from approxpath import load_path

    with pytest.raises(ValueError, match="^C = 5.0 is outside"):  # a loaded path: the parameter from its file
        load_path(tmp_path / "c.npz").piece_at(5.0)
