"""Figures and exported tables against the result objects they come from (review of the
figures and tables): what is drawn or written is what the result holds, and says what it is."""

import numpy as np
import pytest

import approxpath
from approxpath.data import make_classification, make_sinc
from approxpath.export import export_table, read_table

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture(scope="module")
def relative_path():
    X, y = make_classification(n=30, d=2, seed=0)
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0, parameter="c", bandwidth=1.0)
    return approxpath.approximate_path(problem, eps=0.05, relative=True, interval=(0.1, 10.0))


@pytest.mark.parametrize("fmt", ["csv", "dat"])
def test_piece_table_rows_are_the_paths_pieces(relative_path, tmp_path, fmt):
    path = relative_path
    table = read_table(export_table(path, tmp_path / f"p.{fmt}"))
    assert list(table) == ["lo", "hi", "gap_bound", "kind", "anchor_lo", "anchor_hi"]
    for name in ("lo", "hi", "gap_bound"):
        assert np.array_equal(table[name], [getattr(p, name) for p in path.pieces])
    assert list(table["kind"]) == [p.kind for p in path.pieces]
    assert np.array_equal(table["anchor_lo"], [p.anchors[0] for p in path.pieces])
    assert np.array_equal(table["anchor_hi"], [p.anchors[-1] for p in path.pieces])


def test_dat_comment_says_whether_eps_is_relative(relative_path, tmp_path):
    """The .dat's comment line states the table's eps: a relative eps must not read as absolute."""
    path = relative_path
    first = export_table(path, tmp_path / "r.dat").read_text().splitlines()[0]
    assert first.startswith("#") and f"eps = {path.eps:g} (relative)" in first
    absolute = approxpath.approximate_path(path.problem, eps=0.5, interval=path.interval)
    first = export_table(absolute, tmp_path / "a.dat").read_text().splitlines()[0]
    assert f"eps = {absolute.eps:g} (absolute)" in first


def _selection(sense, kernel_weight="lam"):
    """A SurfaceSelection over a 6 x 8 grid: values near the best, one far corner 1000x off."""
    from approxpath.surface.result import SurfaceSelection

    rng = np.random.default_rng(1)
    t_edges, w_edges = np.geomspace(0.125, 32, 9), np.geomspace(1e-3, 1, 7)
    base = rng.uniform(0.0, 1.0, (6, 8))
    if sense == "max":  # (a log marginal likelihood: highest best, far corner very low)
        lo = 10.0 - base
        lo[0, 0] = -3000.0
        hi = lo + 0.05
        j, i = np.unravel_index(np.argmax(hi), hi.shape)
        value = (float(lo[j, i]), float(lo[j, i] + 0.01))
    else:
        hi = 1.0 + base
        hi[0, 0] = 3000.0
        lo = hi - 0.05
        j, i = np.unravel_index(np.argmin(lo), lo.shape)
        value = (float(hi[j, i] - 0.01), float(hi[j, i]))
    t, w = float(np.sqrt(t_edges[i] * t_edges[i + 1])), float(np.sqrt(w_edges[j] * w_edges[j + 1]))
    return SurfaceSelection(t=t, w=w, weight=kernel_weight, value=value, delta=0.1, criterion="lml" if sense == "max"
                            else "mse", tol=0.01, t_edges=t_edges, w_edges=w_edges, lo=lo, hi=hi, sense=sense)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_surface_selection_colours_resolve_the_values_near_the_best(sense):
    """The colour scale cuts off the far values on the worse side: for a criterion to maximize
    the far corner is the lowest, and the values near the best stay inside the scale."""
    from approxpath.surface.figures import plot_surface_selection

    s = _selection(sense)
    fig = plot_surface_selection(s)
    mesh = fig.axes[0].collections[0]
    shown = s.hi if sense == "min" else s.lo
    assert np.array_equal(np.asarray(mesh.get_array()).reshape(shown.shape), shown)
    vmin, vmax = mesh.get_clim()
    if sense == "min":
        assert vmin == shown.min() and vmax == np.percentile(shown, 95)
        assert mesh.colorbar.extend == "max"
    else:
        assert vmax == shown.max() and vmin == np.percentile(shown, 5)
        assert mesh.colorbar.extend == "min"
    undecided = s.undecided()
    assert undecided.any()
    # the rectangles that may still win are drawn with their own colours, not the clipped end's
    assert np.all((shown[undecided] >= vmin) & (shown[undecided] <= vmax))
    # the region's white border has a dark edge: visible on bright colours and in the legend on white
    legend = fig.axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert any(t.startswith("border of the region") for t in texts)
    assert [bool(line.get_path_effects()) for line in legend.get_lines() if line.get_color() == "#FFFFFF"] == [True]


def test_surface_selection_label_claims_no_other_kernel():
    """The bandwidth's label gives the formula of the kernel the selection was made with (when
    told), never the Gaussian's for another kernel."""
    from approxpath.surface.figures import plot_surface_selection

    X, y = make_sinc(n=20, seed=0)
    problem = approxpath.get_problem("kernel_ridge")(X, y, kernel="laplacian")
    s = _selection("min")
    unknown = plot_surface_selection(s).axes[0].get_xlabel()
    assert "bandwidth" in unknown and r"\|^2" not in unknown
    told = plot_surface_selection(s, kernel=problem).axes[0].get_xlabel()
    assert r"\|_1" in told and r"\|^2" not in told
    assert r"\|_1" in plot_surface_selection(s, kernel="laplacian").axes[0].get_xlabel()
    # arguments it cannot draw: one line each (kernel=3 raised AttributeError; "bogus" drew the Gaussian's label)
    from approxpath.errors import InputError
    from approxpath.surface.figures import plot_surface

    for kw, match in ((dict(kernel=3), "kernel must be one of gaussian"), (dict(kernel="bogus"), "got 'bogus'"),
                      (dict(value="mid"), "value must be 'hi' or 'lo'")):
        with pytest.raises(InputError, match=match):
            plot_surface_selection(s, **kw)
    with pytest.raises(InputError, match="plot_surface draws a Surface .* got SurfaceSelection .draw a "
                                         "SurfaceSelection with plot_surface_selection"):
        plot_surface(s)


def test_a_selection_over_lam_says_lam_in_its_summary_json_and_figure():
    """A selection over λ (kernel ridge's closed-form criterion, no path) said "t = 0.477 ... no t
    is better" and its figure's axis read "bandwidth t of exp(-t||x - x'||^2)"."""
    from approxpath.plotting import parameter_symbol
    from approxpath.selection import plot_selection, select

    X, y = make_sinc(n=40, seed=0)
    over_lam = approxpath.get_problem("kernel_ridge")(X, y, bandwidth=1.0, parameter="lam")
    s = select(over_lam, criterion="loocv", interval=(1e-3, 1.0))
    assert s.parameter == "lam" and s.to_json()["parameter"] == "lam" and not s.paths
    assert f"lam = {s.t:.6g}" in s.summary() and "no lam is better" in s.summary() and "t =" not in s.summary()
    assert plot_selection(s).axes[0].get_xlabel() == parameter_symbol("lam")
    # over the bandwidth with no path, of a laplacian kernel: the label claims no kernel's formula
    laplacian = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1, kernel="laplacian")
    s = select(laplacian, criterion="loocv", interval=(0.5, 2.0))
    assert s.parameter == "bandwidth" and f"t = {s.t:.6g}" in s.summary()
    assert plot_selection(s).axes[0].get_xlabel() == "bandwidth $t$"
    assert plot_selection(s, parameter=laplacian).axes[0].get_xlabel().endswith(r"\|x - x'\|_1)$")


def test_every_figure_without_matplotlib_says_how_to_install_it(monkeypatch):
    """``plot_surface`` and ``plot_exact_path`` raised ModuleNotFoundError for a submodule
    (``matplotlib.collections``, ``matplotlib.figure``) without the install hint the others give."""
    import sys

    import approxpath
    from approxpath.data import make_sinc
    from approxpath.exact import kernel_path
    from approxpath.exact.figures import plot_exact_path
    from approxpath.plotting import plot_bounds
    from approxpath.surface.figures import plot_surface

    X, y = make_sinc(n=12, seed=0)
    ridge = approxpath.get_problem("kernel_ridge")(X, y, lam=0.1)
    surface = approxpath.approximate_surface(ridge, eps=0.1, weights=(0.05, 0.2), bandwidths=(0.5, 2.0))
    path = approxpath.approximate_path(ridge, eps=0.1, interval=(0.5, 2.0))
    exact = kernel_path(X, y, 0.1, (0.5, 2.0))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    for plot, what in ((plot_surface, surface), (plot_exact_path, exact), (plot_bounds, path)):
        with pytest.raises(ImportError, match=r"^plots need matplotlib: pip install 'approxpath\[plot\]'$"):
            plot(what)


def test_a_path_loaded_unverified_says_so_in_its_figure_and_table(tmp_path):
    """``load_path(..., verify=False)``: the figure's title said "NOT all certified" and the
    table wrote kind=certified, neither saying that nothing was checked."""
    import approxpath
    from approxpath.data import make_sinc
    from approxpath.export import export_table
    from approxpath.plotting import plot_bounds

    X, y = make_sinc(n=12, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), eps=0.1,
                                       interval=(0.5, 2.0))
    file = path.save(tmp_path / "c.npz")
    loaded = approxpath.load_path(file, X, y, verify=False)
    assert "UNVERIFIED (loaded with verify=False)" in plot_bounds(loaded).axes[0].get_title()
    assert "all certified" in plot_bounds(approxpath.load_path(file, X, y)).axes[0].get_title()
    head = export_table(loaded, tmp_path / "t.dat").read_text().splitlines()[0]  # (a .dat table has a comment line)
    assert "UNVERIFIED: the kinds and bounds are the file's claims" in head, head


def test_log_parameter_axes_label_their_ticks_as_plain_numbers_that_do_not_collide():
    """Over [0.25, 8] matplotlib labelled minor ticks "3×10⁻¹" and "4×10⁻¹", drawn over each other
    (a path's bounds, a selection, an exact path): now "0.3", "0.4", each in its own room."""
    from matplotlib.figure import Figure

    from approxpath.plotting import log_x

    fig = Figure(figsize=(6.4, 2.0))
    ax = fig.add_subplot()
    ax.plot([0.25, 8.0], [0.0, 1.0])
    log_x(ax)
    fig.canvas.draw()
    shown = [(t.get_text(), t.get_window_extent()) for t in ax.get_xticklabels(minor=False) + ax.get_xticklabels(
        minor=True) if t.get_text() and 0.25 <= t.get_position()[0] <= 8.0]
    # (which minor ticks are labelled is matplotlib's choice: 3.11 labels 0.3, 0.4, 0.6, 2, 3, 4, 6 here, 3.6 none)
    assert "1" in {text for text, _ in shown} and all(text.replace(".", "").isdigit() for text, _ in shown), shown
    boxes = sorted((box.x0, box.x1) for _, box in shown)
    assert all(a1 < b0 for (_, a1), (b0, _) in zip(boxes, boxes[1:])), boxes


def test_a_sampled_selection_is_drawn_as_its_legend_says():
    """robust_l1's sampled choice showed a tan "sampled values" patch in the legend while its
    values were drawn as a blue line (a fill between equal ends draws nothing)."""
    from matplotlib.colors import to_hex

    from approxpath.data import make_sinc
    from approxpath.selection import plot_selection, select

    X, y = make_sinc(n=30, seed=0)
    s = select(approxpath.get_problem("robust_l1")(X, y, lam=0.1), "mae", cv=2, shuffle=0, interval=(0.5, 2.0))
    assert s.kind == "sampled"
    ax = plot_selection(s).axes[0]
    lines = {line.get_label(): to_hex(line.get_color()) for line in ax.get_lines()}
    from matplotlib.collections import PolyCollection

    assert lines["the path's models' values (sampled)"] == "#e69f00"
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]  # (no band: nothing is enclosed)
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "the path's models' values (sampled)"
    assert "(tol" not in s.summary()  # (a sampled search reaches for no tol)
