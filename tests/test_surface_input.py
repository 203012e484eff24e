"""The input a surface (``approximate_surface``, ``select_surface``, ``approxpath surface``) is
given, refused at once in the caller's own words: an eps too small named and advised in the
caller's units (not the share a strip's path gets), a weight range starting below double
precision's reach, and a weight range that is not positive named as the option given."""

import re
import warnings

import numpy as np
import pytest

import approxpath
from approxpath.cli import main
from approxpath.data import make_sinc
from approxpath.driver.run import _ANCHOR_SHARE
from approxpath.errors import EpsilonTooSmallError, InputError
from approxpath.surface.build import _SHARE

# Far below the gaps klasso's exact solves certify on 40 sinc points (about 3e-12 at t = 1)
_TINY = 1e-12
_BOX = dict(bandwidths=(1.0, 4.0), weights=(1e-3, 0.5))


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=40)


@pytest.fixture
def sinc_csv(sinc, tmp_path):
    f = tmp_path / "sinc.csv"
    np.savetxt(f, np.column_stack(sinc), delimiter=",")
    return str(f)


def _advice(message):
    return float(re.search(r"use eps >= (\S+)$", message).group(1))


@pytest.mark.parametrize("relative", [False, True])
def test_a_surface_s_eps_too_small_is_named_and_advised_in_the_caller_s_units(sinc, relative):
    """The strips' paths get half of eps: their refusal said ``eps = 5e-13`` (never given) and
    advised an eps the path would need, half of what the surface needs (``--eps 0.13`` was told
    ``use eps >= 0.123``).  The advice now carries the exact solve it names (and just below it,
    the same solve is refused again)."""
    problem = approxpath.get_problem("klasso")(*sinc, lam=1e-3)
    with pytest.raises(EpsilonTooSmallError) as info:
        approxpath.approximate_surface(problem, _TINY, relative=relative, max_solves=50, **_BOX)
    text, exc = str(info.value), info.value
    assert text.startswith(f"eps = {_TINY:g}{' relative' * relative} (the bandwidth path at lam = ")
    assert " gets 0.5 of it) is too small: " in text
    assert "5e-13" not in text
    advice = _advice(text)
    assert exc.allowed * advice / _TINY >= exc.gap  # the solve's allowance at the advised eps holds its gap
    assert exc.needed == pytest.approx(exc.gap / _ANCHOR_SHARE / _SHARE, rel=1e-12)  # (absolute, as the path's)
    one = dict(bandwidths=(exc.t, exc.t * 1.0001), weights=_BOX["weights"])
    for eps, refused_there in ((advice, False), (0.9 * advice, True)):
        try:
            approxpath.approximate_surface(problem, eps, relative=relative, max_solves=50, **one)
            where = None
        except EpsilonTooSmallError as again:
            where = again.t
        assert (where == exc.t) == refused_there


def test_a_selection_s_first_surfaces_name_the_eps_given(sinc):
    problem = approxpath.get_problem("klasso")(*sinc, lam=1e-3)
    with pytest.raises(EpsilonTooSmallError, match=rf"^eps = {_TINY:g} \(the bandwidth path at lam = [\d.]+ gets 0.5 "
                                                   r"of it\) is too small") as info:
        approxpath.select_surface(problem, cv=2, eps=_TINY, max_solves=50, **_BOX)
    assert info.value.allowed * _advice(str(info.value)) / _TINY >= info.value.gap


def test_the_command_names_and_advises_the_eps_given(sinc_csv, capsys):
    assert main(["surface", "klasso", "--data", sinc_csv, "--eps", f"{_TINY:g}", "--weights", "1e-3", "0.5",
                 "--range", "1", "4", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: eps = {_TINY:g} (the bandwidth path at lam = " in err
    assert "5e-13" not in err and ") is too small: " in err


@pytest.mark.parametrize("name, eps", [("klasso", 0.13), ("kernel_ridge", 0.1), ("robust_l1", 0.1)])
def test_a_weight_range_below_double_precision_is_refused_at_once(sinc, name, eps):
    """``weights=(1e-300, 0.5)``: klasso ran for minutes or stopped on a halved eps; kernel_ridge
    returned 445 uncovered cells (max gap bound inf), its selection a delta of inf: the floor of
    a path's weight (``check_weights``) now holds for a surface's range, in both entry points."""
    problem = approxpath.get_problem(name)(*sinc, lam=0.5)
    floor = problem.smallest_weight()
    message = rf"^weights = \(1e-300, 0.5\): {name}: lam = 1e-300 is below {floor:.3g}.*use lam > {floor:.3g}$"
    with pytest.raises(InputError, match=message):
        approxpath.approximate_surface(problem, eps, bandwidths=(1, 4), weights=(1e-300, 0.5))
    with pytest.raises(InputError, match=message):
        approxpath.select_surface(problem, bandwidths=(1, 4), weights=(1e-300, 0.5), strict=False, max_solves=50,
                                  cv=None if name == "kernel_ridge" else 2)  # (kernel_ridge: its closed forms)


def test_a_weight_range_past_double_precision_stops_naming_it_not_certified(sinc, sinc_csv, capsys):
    """λ up to 1e155: kernel_ridge's LOOCV bounds came out NaN; the search ran to its budget and
    reported λ = 6e154 as "certified" with delta NaN (LOOCV 0.101, against 0.023 inside the range)."""
    from approxpath.driver.run import NonFiniteBound

    path_over_lam = approxpath.get_problem("kernel_ridge")(*sinc, lam=1.0, bandwidth=1.8, parameter="lam")
    with pytest.raises(NonFiniteBound, match=r"NaN over lam in \[1, 1e\+155\]: lam up to 1e\+155 overflows"):
        approxpath.select(path_over_lam, "loocv", interval=(1.0, 1e155), strict=False)
    problem = approxpath.get_problem("kernel_ridge")(*sinc, lam=0.5)
    with pytest.raises(NonFiniteBound, match=r"NaN over t in \[1, 2\] x lam in \[1, 1e\+160\]: .* narrow the box"):
        approxpath.select_surface(problem, "loocv", bandwidths=(1.0, 2.0), weights=(1.0, 1e160), strict=False)
    assert main(["select", "kernel_ridge", "--data", sinc_csv, "--criterion", "loocv", "--over", "lam,bandwidth",
                 "--weights", "1", "1e160", "--range", "1", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "came out NaN" in err
    # lam from 1e200: the rounding of K + lam I squared raised OverflowError (a traceback, exit 70)
    for kw in (dict(), dict(cv=3, shuffle=0)):
        with pytest.raises(NonFiniteBound, match=r"lam in \[1e\+200, 1e\+201\]: .* narrow the box"):
            approxpath.select_surface(problem, "mse" if kw else "loocv", bandwidths=(0.5, 2.0), weights=(1e200, 1e201),
                                      **kw)


def test_the_command_refuses_a_weight_range_below_double_precision(sinc_csv, capsys):
    assert main(["surface", "kernel_ridge", "--data", sinc_csv, "--eps", "0.1", "--weights", "1e-300", "0.5",
                 "--range", "1", "4", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: --weights = (1e-300, 0.5): kernel_ridge: lam = 1e-300 is below" in err


@pytest.mark.parametrize("command", [["surface", "kernel_svm", "--eps", "0.1"],
                                     ["surface", "klasso", "--eps", "0.1"],
                                     ["select", "klasso", "--over", "lam,bandwidth", "--cv", "2"]])
@pytest.mark.parametrize("weights", [["0", "1"], ["1", "0.5"]])
def test_the_command_names_weights_not_the_weight_it_sets(sinc_csv, classes_csv, capsys, command, weights):
    """``--weights 0 1`` said ``c must be a positive finite number`` (no --c was given), ``--weights 1
    0.5`` named ``weights``."""
    data = classes_csv if command[1] == "kernel_svm" else sinc_csv
    assert main([*command, "--data", data, "--weights", *weights, "--range", "1", "4", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: --weights must satisfy 0 < lo < hi < inf" in err


def test_the_library_names_its_weights_parameter(sinc):
    problem = approxpath.get_problem("klasso")(*sinc, lam=0.5)
    for call in (lambda: approxpath.approximate_surface(problem, 0.1, (0, 1)),
                 lambda: approxpath.select_surface(problem, weights=(0, 1), cv=2)):
        with pytest.raises(InputError, match=r"^weights must satisfy 0 < lo < hi < inf"):
            call()


@pytest.mark.parametrize("weights", [(0.01, 1e300), (1e9, 1e300)])
def test_weights_up_to_the_largest_floats_end_on_the_budget_not_an_inf_weight(sinc, weights):
    """A strip's cut at the geometric middle of weights whose product overflows was inf ("lam
    must be a positive finite number; got inf", never given), after numpy's overflow warnings;
    now the middle is taken in logs, bounds that overflow are inf (cut below) without a
    warning, and such a box ends on the budget like any box too wide for it."""
    problem = approxpath.get_problem("kernel_ridge")(*sinc, lam=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(approxpath.BudgetExceededError, match="more than max_solves=300"):
            approxpath.approximate_surface(problem, 0.01, bandwidths=(1, 2), weights=weights, max_solves=300)


def test_a_problem_without_enclosed_predictions_is_refused_in_plain_words(sinc):
    problem = approxpath.get_problem("robust_l1")(*sinc, lam=0.1)
    with pytest.raises(InputError, match="robust_l1 cannot be selected over two parameters by a validation loss: "
                                         "its bound encloses no predictions"):
        approxpath.select_surface(problem, cv=3, shuffle=0, bandwidths=(0.5, 2.0), weights=(0.05, 0.5))
