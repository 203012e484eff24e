"""The figures: each plotting function returns a Figure, each CLI `figure` command writes its
PNG, and the numbers behind them are checked against independent references."""

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import approxpath
from approxpath.cli import main
from approxpath.data import make_classification
from approxpath.plotting import (kernel_condition_numbers, plot_bounds, plot_condition, plot_solves,
                                 plot_validation, save_figure)
from approxpath.selection import validation_curve


@pytest.fixture(scope="module")
def svm_path():
    X, y = make_classification(n=40, d=2, seed=1)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    return approxpath.approximate_path(problem, eps=0.5, interval=(0.5, 8.0))


@pytest.fixture
def libsvm_files(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    files = []
    for seed in (2, 3):
        X, y = make_classification(n=40, d=2, seed=seed)
        f = tmp_path / f"set{seed}.libsvm"
        dump_svmlight_file(X, y, str(f))
        files.append(str(f))
    return files


def test_condition_numbers_against_the_two_point_closed_form():
    # K = [[1, e], [e, 1]] with e = exp(-t d^2): eigenvalues 1 +- e, cond = (1 + e) / (1 - e)
    X = np.array([[0.0, 0.0], [0.3, 0.4]])
    ts = np.array([0.1, 1.0, 10.0])
    e = np.exp(-ts * 0.25)
    np.testing.assert_allclose(kernel_condition_numbers(X, ts), (1 + e) / (1 - e), rtol=1e-10)


def test_every_plot_returns_a_figure(svm_path, tmp_path):
    from matplotlib.figure import Figure

    X, y = make_classification(n=60, d=2, seed=4)
    curve = validation_curve(svm_path, X, y)
    figures = [plot_bounds(svm_path), plot_validation(curve, svm_path), plot_validation(curve),
               plot_condition(np.geomspace(0.1, 10, 5), np.geomspace(1e20, 1.0, 5), n=5, d=2),
               plot_solves({"a": [(1.0, 4), (0.5, 8), (0.25, 16)], "b": [(1.0, 3, False), (0.5, 4, True)]})]
    for k, fig in enumerate(figures):
        assert isinstance(fig, Figure)
        assert save_figure(fig, tmp_path / f"{k}.png").stat().st_size > 5000


def test_plot_solves_reports_the_fitted_exponent():
    fig = plot_solves({"linear": [(1.0, 4), (0.5, 8), (0.25, 16)], "sqrt": [(1.0, 4), (0.25, 8), (1 / 16, 16)]})
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "linear (slope 1.00)" in labels and "sqrt (slope 0.50)" in labels


def test_validation_curve_is_the_argmin_of_independent_errors(svm_path):
    X, y = make_classification(n=60, d=2, seed=4)
    curve = validation_curve(svm_path, X, y, selection="grid", n_grid=30)
    problem = svm_path.problem
    for k in range(0, 30, 7):
        t = curve.t[k]
        p = svm_path.primal(t)
        K = np.exp(-t * ((X[:, None, :] - problem.X[None, :, :]) ** 2).sum(-1))
        assert curve.loss[k] == pytest.approx(np.mean(np.sign(K @ p.w + p.b) != y))
    assert curve.best_loss == curve.loss.min() and curve.best_t == curve.t[np.argmin(curve.loss)]
    assert curve.best_gap_bound == svm_path.gap_bound(curve.best_t) and curve.best_kind == "certified"


def test_cli_figure_cond(tmp_path, capsys):
    png = tmp_path / "cond.png"
    assert main(["figure", "cond", "--n", "20", "--d", "3", "--points", "6", "--plot", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 5000 and len(out["cond"]) == 6
    X = np.random.default_rng(0).uniform(size=(20, 3))
    np.testing.assert_allclose(out["cond"], [np.linalg.cond(np.exp(-t * ((X[:, None] - X[None]) ** 2).sum(-1)))
                                             for t in out["t"]], rtol=1e-6)


def test_cli_figure_solves(libsvm_files, tmp_path, capsys):
    png = tmp_path / "solves.png"
    argv = ["figure", "solves", "kernel_svm", "--data", *libsvm_files, "--c", "1", "--eps", "2", "1",
            "--range", "0.5", "8", "--strategy", "paper", "interpolate", "--plot", str(png), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 5000
    assert set(out["counts"]) == {f"set{k}.libsvm, {s}" for k in (2, 3) for s in ("paper", "interpolate")}
    from approxpath.data import load_data

    X, y = load_data(libsvm_files[0])
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    for strategy in ("paper", "interpolate"):
        direct = approxpath.approximate_path(problem, eps=1.0, interval=(0.5, 8.0), strategy=strategy)
        assert out["counts"][f"set2.libsvm, {strategy}"][1] == [1.0, direct.exact_solves, direct.certified]


def test_cli_figure_validation_files(libsvm_files, tmp_path, capsys):
    png = tmp_path / "val.png"
    argv = ["figure", "validation", "kernel_svm", "--data", libsvm_files[0], "--val-data", libsvm_files[1],
            "--c", "1", "--eps", "0.5", "--range", "0.5", "8", "--selection", "pieces", "--plot", str(png), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 5000 and out["certified"] and out["criterion"] == "error"
    assert out["best_gap_bound"] <= 0.5 and out["evaluated"] == out["pieces"]


def test_cli_figure_validation_builtin_sinc(tmp_path, capsys):
    """Without --data: the paper's robust regression set-up (Figure 4, right)."""
    png = tmp_path / "val.png"
    argv = ["figure", "validation", "robust_l1", "--lam", "0.1", "--eps", "2", "--range", "0.5", "2",
            "--selection", "grid", "--n-grid", "20", "--plot", str(png), "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "selected bandwidth" in out and "mae" in out and png.stat().st_size > 5000


def test_cli_figure_validation_warns_at_the_range_end(capsys):
    """A choice in the last piece of the range gets the edge warning select and the estimators give."""
    argv = ["figure", "validation", "robust_l1", "--lam", "0.1", "--eps", "1", "--range", "2^-3", "2^-2", "--no-progress"]
    assert main(argv) == 0
    assert "may be matched at the upper end of --range, 0.25" in capsys.readouterr().err


def test_edge_sides_count_ties():
    """Ties go to the smallest t, so a tie at the upper end is not the best index, but it is an edge."""
    from approxpath.selection.curve import ValidationCurve

    def curve(loss):
        k = len(loss)
        return ValidationCurve(np.arange(1.0, k + 1), np.array(loss), np.zeros(k), np.array(["certified"] * k), "error")

    assert curve([0.4, 0.3, 0.3]).edge_sides() == ["upper"]
    assert curve([0.3, 0.4, 0.3]).edge_sides() == ["lower", "upper"]
    assert curve([0.4, 0.3, 0.5]).edge_sides() == []
    assert curve([0.3]).edge_sides() == []


def test_estimator_warns_of_a_tie_at_the_upper_end():
    from approxpath.selection import RangeWarning
    from approxpath.sklearn import KernelPathSVC

    X, y = make_classification(n=60, d=2, seed=0)
    with pytest.warns(RangeWarning, match="upper end of t_range, 8"):
        clf = KernelPathSVC(C=1.0, eps=0.1, t_range=(0.5, 8), random_state=0).fit(X, y)
    loss = clf.validation_curve_.loss
    assert loss[-1] == loss.min() and clf.validation_curve_.best_index < loss.size - 1


def test_cli_figure_bad_input(capsys):
    assert main(["figure", "cond", "--range", "1", "0.5"]) == 2
    assert "0 < LO < HI" in capsys.readouterr().err
    assert main(["figure", "validation", "kernel_svm", "--validation-fraction", "0", "--data", "/nonexistent"]) == 2


def test_a_relative_eps_is_drawn_per_piece_and_every_bound_is_below_it():
    """0.5.0 drew a relative eps of 0.05 as a line at 0.05 on the axis of absolute gaps: every
    certified bound (0.7-2.6) looked far above it."""
    X, y = make_classification(n=60, d=2, seed=3)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.05, relative=True,
                                       interval=(0.5, 8.0))
    fig = plot_bounds(path)
    lower = fig.axes[1]
    lines = {line.get_label(): line for line in lower.get_lines()}
    target = lines[r"$\varepsilon \times$ lower bound of the optimum"].get_ydata()[::2]
    bound = lines["bound per piece"].get_ydata()[::2]
    assert np.all(bound <= target) and np.all(target > 10 * path.eps)  # absolute targets, each above its bound
    assert "(relative)" in fig.axes[0].get_title()
    assert lower.get_ylim()[1] >= target.max()


def test_a_relative_eps_spanning_decades_is_drawn_on_a_log_axis():
    """On a linear axis the pieces of a relative-eps C path at small C (eps times an optimum
    ~1000 times smaller) lay flat on zero."""
    X, y = make_classification(n=40, d=2, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0, parameter="c", bandwidth=1.0)
    path = approxpath.approximate_path(problem, eps=0.1, relative=True, interval=(0.01, 10.0))
    lower = plot_bounds(path).axes[1]
    target = {line.get_label(): line for line in lower.get_lines()}[
        r"$\varepsilon \times$ lower bound of the optimum"].get_ydata()
    assert target.max() > 100 * target.min() > 0
    assert lower.get_yscale() == "log" and lower.get_ylim()[0] < target.min() and lower.get_ylim()[1] >= target.max()


def test_labels_name_the_kernel_and_the_swept_parameter():
    """The axis always said exp(-t||x - x'||^2) (a Laplacian kernel too), and a C path's title
    showed the C it sweeps as a fixed option (c=1.0)."""
    X, y = make_classification(n=40, d=2, seed=3)
    lap = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0, kernel="laplacian"), eps=0.5,
                                      interval=(0.5, 4.0))
    assert r"\|x - x'\|_1" in plot_bounds(lap).axes[1].get_xlabel()
    c_path = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0, parameter="c", bandwidth=1.0),
                                         eps=0.5)
    fig = plot_bounds(c_path)
    assert "c=" not in fig.axes[0].get_title() and fig.axes[1].get_xlabel() == "$C$"


def test_drawing_into_a_callers_axes_leaves_its_figure_layout_alone(svm_path):
    """plot_bounds(path, ax=...) called tight_layout on the caller's figure (a warning, and its
    layout engine replaced)."""
    from matplotlib.figure import Figure

    fig = Figure(layout="constrained")
    axes = fig.subplots(1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plot_bounds(svm_path, ax=axes[0]) is fig
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"


def test_a_selection_names_its_parameter():
    from approxpath.selection import plot_selection

    X, y = make_classification(n=40, d=2, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0, parameter="c", bandwidth=1.0)
    s = approxpath.select(problem, cv=2, interval=(0.1, 1.0), tol=0.5, strict=False)
    ax = plot_selection(s).axes[0]
    assert ax.get_xlabel() == "$C$" and any(t.get_text().startswith("chosen $C$") for t in ax.get_legend().get_texts())


def test_a_validation_curve_over_lambda_is_labelled_lambda_without_its_path():
    """plot_validation(curve) without the path labelled a λ curve "bandwidth t"."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=40, seed=0)
    Xv, yv = make_sinc(n=40, seed=1)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_ridge")(X, y, bandwidth=1.0, parameter="lam"),
                                       eps=0.1, interval=(0.01, 1.0))
    curve = validation_curve(path, Xv, yv, criterion="mse")
    assert curve.parameter == "lam"
    ax = plot_validation(curve).axes[0]
    assert ax.get_xlabel() == r"$\lambda$"
    assert any(t.get_text().startswith(r"selected $\lambda$") for t in ax.get_legend().get_texts())


def test_cells_with_no_finite_bound_are_shaded_and_named():
    """Cells whose enclosure is not finite were left blank, unexplained; now each run of them is
    one shaded span, named once in the legend."""
    from dataclasses import replace

    from approxpath.selection import plot_selection

    X, y = make_classification(n=40, d=2, seed=3)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0, parameter="c", bandwidth=1.0)
    s = approxpath.select(problem, cv=2, interval=(0.1, 1.0), tol=0.5, strict=False)
    edges = np.geomspace(0.1, 1.0, 6)
    lo, hi = np.array([0.2, -np.inf, -np.inf, 0.3, -np.inf]), np.array([0.4, 0.5, 0.6, 0.5, np.inf])
    ax = plot_selection(replace(s, edges=edges, lo=lo, hi=hi)).axes[0]
    spans = [p for p in ax.patches if p.get_facecolor()[:3] == (0.85, 0.85, 0.85)]
    assert len(spans) == 2  # cells 1-2 and cell 4
    # a span's x range from its outline (matplotlib 3.9 draws an axvspan as a Rectangle, 3.6 as a Polygon)
    xs = [p.get_patch_transform().transform(p.get_path().vertices)[:, 0] for p in spans]
    got = np.array(sorted((x.min(), x.max()) for x in xs))
    assert np.allclose(got, [(edges[1], edges[3]), (edges[4], edges[5])], rtol=1e-12)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts.count("no finite bound (nothing proven)") == 1


def test_the_gap_drawn_on_a_piece_stays_below_that_piece_s_bound():
    """The gap was sampled across piece ends and joined by straight lines: from a large gap at the
    end of one piece down into the next, the line passed above the next piece's bound (robust l1
    with outliers: 0.69 drawn over a piece bounded by 0.091).  Each piece is drawn from its own pair."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=60, noise=0.1, outliers=0.1, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem("robust_l1")(X, y, lam=0.1), eps=1.0,
                                       interval=(2.0**-3, 2.0**5))
    fig = plot_bounds(path)
    line = next(x for x in fig.axes[1].get_lines() if x.get_label() == "gap of the pair")
    t, g = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    drawn = 0
    for k in np.flatnonzero(np.isfinite(g[:-1]) & np.isfinite(g[1:])):  # every segment of the line
        piece = path.piece_at(float(np.sqrt(t[k] * t[k + 1])))
        assert max(g[k], g[k + 1]) <= piece.gap_bound * (1 + 1e-9), (t[k], t[k + 1])
        drawn += 1
    assert drawn > 300 and len(path.pieces) > 10
