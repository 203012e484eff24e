"""plot_exact_path (coefficient paths with breakpoints, active-set size, MSE) and the one-command
figures of Wang's sinc set-up, with their exported tables."""

import json
import sys

import numpy as np
import pytest

from approxpath.exact import kernel_path, lambda_path
from approxpath.exact.figures import main, plot_exact_path, wang_sinc
from approxpath.export import read_table
from approxpath.compute.distances import cross_sq_distances
from approxpath.compute.kernels import gaussian

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402


@pytest.fixture(scope="module")
def split():
    return wang_sinc(0)


def _pyplot_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    return None if plt is None else plt.get_fignums()


def test_lambda_path_figure_panels(split):
    X, y, Xv, yv = split
    path = lambda_path(X, y, 1.0, lam_min=1e-3)
    before = _pyplot_figures()
    fig = plot_exact_path(path)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert _pyplot_figures() == before  # the object API only: no pyplot figure was opened
    coef, active = fig.axes
    ever = np.flatnonzero(np.any(path.beta != 0, axis=0))
    curves = [ln for ln in coef.get_lines() if np.size(ln.get_xdata()) > 2]
    breaks = [ln for ln in coef.get_lines() if np.size(ln.get_xdata()) == 2]
    assert len(curves) == ever.size and len(breaks) == path.breakpoints.size
    x, b = curves[0].get_data()
    np.testing.assert_allclose(b[np.isin(x, path.t)], path.beta[np.isin(path.t, x), ever[0]])
    assert coef.get_xscale() == "log" and coef.xaxis_inverted()
    assert np.max(active.get_lines()[-1].get_ydata()) == np.abs(path.signs).sum(axis=1).max()

    fig = plot_exact_path(path, X_val=Xv, y_val=yv)
    assert len(fig.axes) == 3
    mse = fig.axes[2]
    val = [ln for ln in mse.get_lines() if ln.get_label() == "validation MSE"][0]
    K = gaussian(cross_sq_distances(Xv, X), 1.0)
    expect = [np.mean((yv - K @ bb - b0) ** 2) for bb, b0 in zip(path.beta, path.beta0)]
    np.testing.assert_allclose(val.get_ydata(), expect, rtol=1e-12)
    best = [ln for ln in mse.get_lines() if ln.get_label().startswith("minimum")][0]
    assert best.get_xdata()[0] == path.t[int(np.argmin(expect))]


def test_kernel_path_figure_into_given_axes(split):
    X, y, Xv, yv = split
    path = kernel_path(X, y, 0.1, (0.5, 2.0))
    fig = Figure()
    axes = fig.subplots(3, 1)
    assert plot_exact_path(path, X_val=Xv, y_val=yv, ax=axes) is fig
    assert not axes[0].xaxis_inverted() and "bandwidth" in axes[2].get_xlabel()
    with pytest.raises(ValueError, match="3 axes"):
        plot_exact_path(path, X_val=Xv, y_val=yv, ax=axes[:2])


def test_one_command_each_writes_the_figure_and_a_table_that_re_reads(tmp_path, capsys):
    png, dat = tmp_path / "lam.png", tmp_path / "lam.dat"
    assert main(["--parameter", "lam", "--bandwidth", "1", "--range", "1e-3", "1", "--plot", str(png),
                 "--export", str(dat)]) == 0
    assert png.stat().st_size > 10_000
    table = read_table(dat)
    X, y, _, _ = wang_sinc(0)
    path = lambda_path(X, y, 1.0, lam_min=1e-3)
    path = path.restrict(path.t[0], 1.0)  # --range's HI cuts the path, as in ``approxpath exact``
    np.testing.assert_array_equal(table["t"], path.t)
    assert np.all(table["gap"] <= 1e-6) and "val_mse" in table
    assert "OK:" in capsys.readouterr().out

    png, csv = tmp_path / "kernel.png", tmp_path / "kernel.csv"
    assert main(["--parameter", "bandwidth", "--lam", "0.1", "--range", "0.5", "2", "--marginal", "0.1",
                 "--plot", str(png), "--export", str(csv), "--json"]) == 0
    assert png.stat().st_size > 10_000 and read_table(csv)["t"][-1] == 2.0


@pytest.mark.parametrize("argv,match", [
    (["--parameter", "bandwidth"], "--lam L"),
    (["--parameter", "bandwidth", "--lam", "0.1", "--target-mse", "0.01"], "--target-mse is for the lambda path only"),
    (["--parameter", "lam", "--theta", "0.5"], "--theta is for the kernel path only"),
    (["--max-landmarks", "-1"], "max_landmarks"),
    (["--val-data", "x.csv"], "--val-data goes with --data"),
])
def test_bad_command_input_exits_2(argv, match, capsys):
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_the_data_format_follows_the_file_name_as_in_every_command(tmp_path, capsys):
    """A LIBSVM file was read as CSV ("... is not a number"): --format defaulted to csv here
    alone; and 2^-5 was refused where every other command takes it."""
    from approxpath.cli import main as cli

    for name, fmt in (("s.txt", ["--format", "libsvm"]), ("s.csv", [])):
        assert cli(["data", "sinc", "--n", "30", "--out", str(tmp_path / name), *fmt]) == 0
    capsys.readouterr()
    outs = []
    for name in ("s.txt", "s.csv"):
        assert cli(["figure", "exact-path", "--data", str(tmp_path / name), "--range", "2^-5", "1", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["ok"] and outs[0]["points"] == outs[1]["points"] > 2
