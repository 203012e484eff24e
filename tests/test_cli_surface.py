"""``approxpath surface`` and ``approxpath select --over c,bandwidth``: the certificate written
verifies (``approxpath verify``), the selection prints its delta, bad ``--over`` is a usage error."""

import json
import os

import numpy as np
import pytest

from approxpath.cli import main


def test_surface_writes_a_certificate_that_verifies(classes_csv, tmp_path, capsys):
    out = str(tmp_path / "s.npz")
    assert main(["surface", "kernel_svm", "--data", classes_csv, "--eps", "0.1", "--relative", "--range", "0.5", "2",
                 "--weights", "0.5", "2", "--out", out, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"] and summary["weight"] == "c" and summary["cells"] >= 1
    assert main(["verify", out, "--data", classes_csv]) == 0
    assert "certified" in capsys.readouterr().out
    # a box required of it: --interval (the bandwidths) with --weights; a wider weight range fails
    assert main(["verify", out, "--data", classes_csv, "--interval", "0.5", "2", "--weights", "0.5", "2"]) == 0
    capsys.readouterr()
    assert main(["verify", out, "--data", classes_csv, "--interval", "0.5", "2", "--weights", "0.5", "4"]) == 1
    assert "required the box [0.5, 2] x [0.5, 4], but the certificate covers [0.5, 2] x [0.5, 2]" in \
        capsys.readouterr().out
    assert main(["verify", out, "--data", classes_csv, "--weights", "0.5", "2"]) == 2
    assert "--weights LO HI requires a surface's weights; give its bandwidths too" in capsys.readouterr().err


def test_select_over_two_parameters(classes_csv, capsys):
    pytest.importorskip("sklearn")
    code = main(["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--over", "c,bandwidth", "--range", "0.5",
                 "2", "--weights", "0.5", "2", "--eps", "0.1", "--relative", "--tol", "0.5", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == (0 if result["reached"] else 1)
    assert result["weight"] == "c" and 0.5 <= result["w"] <= 2 and 0.5 <= result["t"] <= 2
    assert result["sense"] == "min"  # (as over one parameter: lml's is "max")
    main(["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--over", "c,bandwidth", "--range", "0.5", "2",
          "--weights", "0.5", "2", "--eps", "0.1", "--relative", "--tol", "0.5", "--no-progress"])
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("kernel_svm over the bandwidth and c (n=") and "c=" not in head  # (it showed c=0.5)


def test_over_names_the_problem_s_weight(classes_csv, capsys):
    assert main(["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--over", "lam,bandwidth"]) == 2
    assert "--over" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--workers", "2"], ["--dask", "tcp://127.0.0.1:9"]])
def test_a_choice_over_both_refuses_the_folds_processes_it_would_not_use(classes_csv, capsys, extra):
    """--workers and --dask run the folds' paths of a choice over one parameter; with --over
    c,bandwidth they were ignored without a word."""
    assert main(["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--over", "c,bandwidth", "--weights",
                 "0.5", "2", *extra]) == 2
    err = capsys.readouterr().err
    assert "--workers and --dask run the folds' paths of a choice over one parameter" in err and err.count("\n") == 1


def test_the_surface_figure_shows_every_cell_and_solve(classes_csv, tmp_path, capsys):
    """``surface --plot``: the figure file is written, and ``plot_surface`` draws one polygon
    per certified cell coloured by its gap bound (the scale's top eps for an absolute eps) and
    a dot per exact solve."""
    pytest.importorskip("matplotlib")
    from approxpath import load_surface
    from approxpath.surface import plot_surface

    out, fig_file = str(tmp_path / "s.npz"), tmp_path / "cells.png"
    assert main(["surface", "kernel_svm", "--data", classes_csv, "--eps", "0.5", "--range", "0.5", "2",
                 "--weights", "0.5", "2", "--out", out, "--plot", str(fig_file), "--no-progress"]) == 0
    assert f"figure written to {fig_file}" in capsys.readouterr().out
    assert fig_file.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = np.loadtxt(classes_csv, delimiter=",")
    surface = load_surface(out, table[:, :-1], table[:, -1])
    assert surface.verified and surface.certified
    ax = plot_surface(surface).axes[0]
    assert ax.get_title().startswith(f"kernel_svm on {os.path.basename(classes_csv)}: ")
    (cells,) = ax.collections
    assert len(cells.get_paths()) == len(surface.cells) and cells.get_clim() == (0.0, 0.5)
    assert np.array_equal(cells.get_array(), [c.gap_bound for c in surface.cells])
    (dots,) = ax.lines
    assert len(dots.get_xdata()) == surface.exact_solves and ax.get_xscale() == ax.get_yscale() == "log"


@pytest.mark.parametrize("over, target, given", [("c,bandwidth", "approxpath.surface.select_surface", None),
                                                 ("c,bandwidth", "approxpath.surface.select_surface", "7"),
                                                 ("bandwidth", "approxpath.selection.select", None),
                                                 ("bandwidth", "approxpath.selection.select", "7")])
def test_select_keeps_the_api_s_budget_unless_given(classes_csv, capsys, monkeypatch, over, target, given):
    """Without ``--max-solves`` the command passes no budget, so ``select`` and
    ``select_surface`` keep their own defaults (2000 and 20000: the command once gave both
    parameters 2000, a tenth of the function's); with it, the number given."""
    from approxpath.errors import InputError

    seen = {}

    def record(*args, **kwargs):
        seen.update(kwargs)
        raise InputError("recorded")

    monkeypatch.setattr(target, record)
    argv = ["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--over", over]
    argv += ["--weights", "0.5", "2"] if over != "bandwidth" else []
    assert main(argv + ([] if given is None else ["--max-solves", given])) == 2
    assert "recorded" in capsys.readouterr().err
    assert seen.get("max_solves") == (None if given is None else int(given))


def test_weights_without_both_parameters_is_refused(classes_csv, capsys):
    """``--weights`` over the bandwidth alone would be ignored (C is the problem's option there):
    one line, exit 2, before any path runs."""
    assert main(["select", "kernel_svm", "--data", classes_csv, "--cv", "2", "--weights", "0.5", "2"]) == 2
    err = capsys.readouterr().err
    assert "--weights" in err and "--over bandwidth,c" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["surface", "kernel_svm", "--eps", "0.5"],
                                     ["select", "kernel_svm", "--cv", "2", "--over", "c,bandwidth"]])
def test_the_weight_s_own_flag_is_refused_over_both_parameters(classes_csv, capsys, command):
    """Over both parameters C is set cell by cell: ``--c 5`` was ignored without a word."""
    assert main([*command[:2], "--data", classes_csv, *command[2:], "--weights", "0.5", "2", "--range", "0.5", "2",
                 "--c", "5"]) == 2
    err = capsys.readouterr().err
    assert "--c is set cell by cell" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command, said", [
    (["select", "kernel_ridge", "--criterion", "loocv", "--over", "lam,bandwidth", "--weights", "0.1", "1", "--range",
      "2", "1"], "--range must satisfy 0 < lo < hi"),
    (["select", "kernel_ridge", "--criterion", "loocv", "--lam", "0.1", "--cv", "3"], "whole data: drop --cv"),
    (["select", "klasso", "--over", "lam,bandwidth", "--weights", "0.1", "1", "--cv", "2", "--relative"],
     "--relative needs --eps as well"),
    (["select", "kernel_ridge", "--criterion", "loocv", "--over", "lam,bandwidth", "--weights", "1e-3", "1",
      "--max-solves", "1"], "more than --max-solves = 1: raise --max-solves or choose a smaller --range or --weights"),
    (["path", "klasso", "--lam", "0.1", "--max-solves", "1", "--relative", "--eps", "1e-3"],
     "more than --max-solves = 1 exact solves needed on [0.000976562, 1024] (eps = 0.001 relative): raise "
     "--max-solves, use a larger eps, or a narrower interval"),
    (["path", "klasso", "--lam", "0.1", "--range", "2", "1"], "--range must satisfy lo < hi"),
    # the closed forms need no path, and took any --eps without a word
    (["select", "kernel_ridge", "--criterion", "loocv", "--over", "lam,bandwidth", "--weights", "0.1", "1", "--eps",
      "-5"], "--eps must be a positive finite number; got -5.0"),
])
def test_errors_name_the_flags_not_the_python_keywords(sinc_csv, capsys, command, said):
    """The library's errors said max_solves=, relative=True, cv/X_val or bandwidths on the
    command line, whose words are --max-solves, --relative, --cv and --range; an --eps unused by
    the closed forms is checked as well."""
    assert main([*command, "--data", str(sinc_csv), "--format", "csv", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1
    assert not any(word in err for word in ("max_solves", "relative=", "X_val", "bandwidths must", "eps="))


def test_verify_s_interval_is_named_as_its_own_flag(sinc_csv, tmp_path, capsys):
    """verify's required interval is --interval (the path's wording would have said --range)."""
    cert = str(tmp_path / "c.npz")
    assert main(["path", "klasso", "--lam", "0.1", "--range", "1", "2", "--data", str(sinc_csv), "--format", "csv",
                 "--out", cert, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["verify", cert, "--interval", "2", "1", "--data", str(sinc_csv), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "--interval must satisfy lo <= hi" in err and err.count("\n") == 1
    # a box of both parameters required of a path is not met (it was ignored: OK)
    assert main(["verify", cert, "--interval", "1", "2", "--weights", "0.05", "0.2", "--data", str(sinc_csv),
                 "--format", "csv", "--no-progress"]) == 1
    assert "required a box of both parameters, but the certificate is a path over bandwidth" in capsys.readouterr().out


def test_a_shortfall_over_both_parameters_names_the_budget_s_flag(sinc_csv, capsys):
    """The budget's reason said "the budget max_solves = 400 was spent" beside --max-solves."""
    assert main(["select", "kernel_ridge", "--criterion", "loocv", "--over", "lam,bandwidth", "--weights", "1e-3",
                 "1", "--max-solves", "330", "--tol", "1e-9", "--data", str(sinc_csv), "--format", "csv",
                 "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "the budget --max-solves = 330 was spent; raise --max-solves or --tol" in err and "max_solves" not in err


def test_over_naming_a_parameter_twice_is_refused(sinc_csv, capsys):
    """--over lam,bandwidth,bandwidth ran as lam,bandwidth; bandwidth,bandwidth gave a --weights message."""
    for over in ("lam,bandwidth,bandwidth", "bandwidth,bandwidth"):
        assert main(["select", "kernel_ridge", "--data", str(sinc_csv), "--over", over, "--weights", "1e-2", "1"]) == 2
        assert f"--over names a parameter twice ({over})" in capsys.readouterr().err
