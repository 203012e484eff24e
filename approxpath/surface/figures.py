"""Figures over two parameters (the ``plot`` extra: matplotlib, object API, no pyplot state): a
certified surface's cells coloured by their gap bounds with its exact solves, and a selection's
criterion enclosure over the box as a heat map with the chosen point and the region not yet
excluded."""

from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["plot_surface", "plot_surface_selection"]

# Okabe-Ito colours (as approxpath.plotting): the chosen point, the region not excluded, an
# uncovered cell.
_CHOSEN, _REGION, _UNCOVERED = "#D55E00", "#FFFFFF", "#D55E00"
# Opacity of the white over the excluded rectangles: their colours stay readable beneath it.
_DIM = 0.6
# Rectangles drawn at most this many along each axis: a selection's grid (every fold's cell
# edges) can be thousands by thousands (n = 80, 5 folds, 17,000 cells: its two meshes took
# 24 GB in matplotlib), and a figure is about a thousand pixels across; finer rectangles are
# pooled into display cells of equal width in log scale (:func:`_pooled`).
_DRAWN = 600
_LABELS = {"error": "cross-validation error", "mae": "mean absolute error", "mse": "mean squared error"}
# Above this many cells their white borders (thin cells turn into white stripes), and above this
# many exact solves their dots, would cover the colours (a kernel ridge surface: 13,000 cells,
# 8,500 solves): no borders, smaller dots then.
_BORDERED, _DOTTED = 200, 500


def _log2_axes(ax):
    """Both axes in log base 2 (boxes are given in powers of 2, as grid.py's), ticks at powers
    of 2 (base 10's minor labels collide on boxes of one or two decades)."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)


def _exponent_axes(ax):
    """Axes whose data are base-2 logarithms, labelled as powers of 2: a selection's mesh is
    drawn at log2 t, log2 w on linear axes (on log axes matplotlib transforms a mesh quad by
    quad in Python: 15-30 s to save 160,000 rectangles; on linear axes it is drawn in C)."""
    from matplotlib.ticker import FuncFormatter

    power = FuncFormatter(lambda v, _: f"$2^{{{v:g}}}$")
    ax.xaxis.set_major_formatter(power)
    ax.yaxis.set_major_formatter(power)


def _pooled(edges, most=_DRAWN):
    """``(drawn, starts)``: display edges, at most ``most`` cells of equal width in log scale
    over ``edges`` (the ends kept), and for each display cell the first rectangle of ``edges``
    that overlaps it, the one holding its left edge (the argument of ``ufunc.reduceat``);
    ``(edges, None)`` when there are at most ``most`` rectangles already.  A display cell pools
    the rectangles from that one to the one before the next display cell's first: every
    rectangle counts in at least one display cell it overlaps (one that starts inside a display
    cell and runs into the next counts in the next only: a shift under one display cell)."""
    edges = np.asarray(edges, dtype=float)
    if edges.size - 1 <= most:
        return edges, None
    log = np.log(edges)
    grid = np.linspace(log[0], log[-1], most + 1)
    starts = np.clip(np.searchsorted(log, grid[:-1], side="right") - 1, 0, edges.size - 2)
    drawn = np.exp(grid)
    drawn[0], drawn[-1] = edges[0], edges[-1]
    return drawn, starts


def _pool(a, rows, cols, ufunc):
    """``a`` (W, T) reduced by ``ufunc`` over the rectangles of each display cell (``rows``,
    ``cols``: :func:`_pooled`'s starts, None where not pooled)."""
    a = a if rows is None else ufunc.reduceat(a, rows, axis=0)
    return a if cols is None else ufunc.reduceat(a, cols, axis=1)


def _outline(mask, x_edges, y_edges):
    """The segments, shape (k, 2, 2), of the border of ``mask`` (W, T) on the grid ``x_edges``
    (T + 1,) x ``y_edges`` (W + 1,): every rectangle edge between a cell in the mask and one
    outside it (or the grid's side), so that a single cell is outlined too."""
    padded = np.pad(np.asarray(mask, dtype=bool), 1)
    inside = padded[1:-1, 1:-1]
    x, y = np.asarray(x_edges, dtype=float), np.asarray(y_edges, dtype=float)
    parts = []
    # (the neighbour, the segment's ends as offsets of (i, j): left, right, bottom and top sides)
    for outside, (a, b, c, d) in ((padded[1:-1, :-2], (0, 0, 0, 1)), (padded[1:-1, 2:], (1, 0, 1, 1)),
                                  (padded[:-2, 1:-1], (0, 0, 1, 0)), (padded[2:, 1:-1], (0, 1, 1, 1))):
        j, i = np.nonzero(inside & ~outside)
        parts.append(np.stack([np.stack([x[i + a], y[j + b]], -1), np.stack([x[i + c], y[j + d]], -1)], 1))
    return np.concatenate(parts)


def _drawn(obj, cls, function, makers, other_cls, other):
    """:class:`InputError` unless ``obj`` is a ``cls`` (what ``makers`` return), naming the
    function ``other`` that draws an ``other_cls``."""
    if not isinstance(obj, cls):
        hint = f" (draw a {other_cls.__name__} with {other})" if isinstance(obj, other_cls) else ""
        raise InputError(f"{function} draws a {cls.__name__} ({makers}); got {type(obj).__name__}{hint}")


def plot_surface(surface, ax=None, title=None):
    """Draw ``surface``'s cells over the box (log-log), each coloured by its gap bound (the bound
    at every point of the cell, rounding included), uncovered cells in orange, and the exact
    solves as dots.

    Parameters
    ----------
    surface : Surface
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure otherwise.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..plotting import data_name, figure_and_axes, need_matplotlib, parameter_label, parameter_symbol
    from .result import Surface, SurfaceSelection

    _drawn(surface, Surface, "plot_surface", "approximate_surface or load_surface", SurfaceSelection,
           "plot_surface_selection")
    need_matplotlib()
    from matplotlib.collections import PolyCollection

    fig, ax = figure_and_axes(ax, (6.4, 4.8))
    s = surface
    boxes = [[(c.t_lo, c.w_lo), (c.t_hi, c.w_lo), (c.t_hi, c.w_hi), (c.t_lo, c.w_hi)] for c in s.cells]
    certified = np.array([c.kind == "certified" for c in s.cells])
    gaps = np.array([c.gap_bound for c in s.cells], dtype=float)
    edge = 0.3 if len(boxes) <= _BORDERED else 0.0
    cells = PolyCollection([b for b, ok in zip(boxes, certified) if ok], array=gaps[certified], cmap="viridis",
                           edgecolors="white", linewidths=edge)
    # an absolute eps is the scale's top (every certified bound is below it); a relative eps
    # bounds each cell's gap against its own optimal value, so the bounds set the scale
    cells.set_clim(0.0, s.eps if not s.relative else float(gaps[certified].max()) if certified.any() else 1.0)
    ax.add_collection(cells)
    scale = f"absolute; eps = {s.eps:g} relative" if s.relative else f"eps = {s.eps:g}"
    fig.colorbar(cells, ax=ax, label=f"gap bound on the cell ({scale})")
    if not certified.all():
        ax.add_collection(PolyCollection([b for b, ok in zip(boxes, certified) if not ok], facecolors=_UNCOVERED,
                                         edgecolors="white", linewidths=edge))
        ax.fill([], [], color=_UNCOVERED, label=f"uncovered ({int((~certified).sum())} cells)")
    if s.solve_points:
        t, w = np.asarray(s.solve_points, dtype=float).T
        ax.plot(t, w, ".", color="black", ms=3 if t.size <= _DOTTED else 1, alpha=1.0 if t.size <= _DOTTED else 0.5,
                label=f"exact solves ({s.exact_solves})")
    (t0, t1), (w0, w1) = s.box
    _log2_axes(ax)
    ax.set_xlim(t0, t1)
    ax.set_ylim(w0, w1)
    ax.set_xlabel(parameter_label("bandwidth", (s.meta.get("options") or {}).get("kernel", "gaussian")))
    ax.set_ylabel(parameter_symbol(s.weight))
    where = f" on {data_name(s)}" if data_name(s) else ""
    ax.set_title(title or f"{s.meta.get('problem')}{where}: {len(s.cells)} cells, "
                          f"{'every one certified' if certified.all() else 'not all certified'}")
    if s.solve_points or not certified.all():  # (below the axes: the cells fill them, a legend inside hid some)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=7, frameon=False)
    return fig


def plot_surface_selection(selection, ax=None, title=None, value=None, kernel=None):
    """Draw the enclosure of ``selection``'s criterion over the box (log-log) as a heat map,
    the chosen point, the rectangles proven worse than it dimmed, and the border, along the
    rectangles' edges, of those not excluded (where a point may still be at least as good as
    the chosen one: :meth:`~approxpath.surface.SurfaceSelection.undecided`).

    Parameters
    ----------
    selection : SurfaceSelection
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure otherwise.
    title : str, optional
    value : {"hi", "lo"}, optional
        Which end of the enclosure the colours show; by default what is proven of every point:
        the upper bound of a criterion to minimize (at most that), the lower bound of one to
        maximize (at least that).
    kernel : str or KernelProblem, optional
        The kernel family (``"gaussian"``, ``"laplacian"``, ...) or the problem the selection was
        made on, for the bandwidth's axis label (its kernel's formula); a selection does not
        record its kernel, so without it the label names the bandwidth alone.

    Notes
    -----
    The colour scale leaves out the 5 % of rectangles farthest on the worse side (above the 95th
    percentile of a criterion to minimize, below the 5th of one to maximize: far corners would
    wash out the colours near the best); they, and rectangles with no finite bound, take the end
    colour on that side, and the colour bar's arrow says so.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..kernel_families import FAMILIES
    from ..plotting import figure_and_axes, parameter_label, parameter_symbol
    from .result import Surface, SurfaceSelection

    _drawn(selection, SurfaceSelection, "plot_surface_selection", "select_surface", Surface, "plot_surface")
    if value not in (None, "hi", "lo"):
        raise InputError(f"value must be 'hi' or 'lo' (which end of the enclosure to colour); got {value!r}")
    if not (kernel is None or (isinstance(kernel, str) and kernel in FAMILIES) or hasattr(kernel, "options")):
        raise InputError(f"kernel must be one of {', '.join(FAMILIES)} or the problem the selection was made on; "
                         f"got {kernel!r:.60}")
    fig, ax = figure_and_axes(ax, (6.4, 5.2))
    s = selection
    if value is None:
        value = "hi" if s.sense == "min" else "lo"
    shown = np.asarray(s.hi if value == "hi" else s.lo, dtype=float)
    finite = shown[np.isfinite(shown)]
    # far corners would wash out the colours: the scale stops at the 95th percentile of a criterion
    # to minimize, at the 5th of one to maximize (the worse side), and the bar's arrow says so
    worse_high = s.sense == "min"
    if finite.size:
        lo_c, hi_c = ((float(finite.min()), float(np.percentile(finite, 95))) if worse_high else
                      (float(np.percentile(finite, 5)), float(finite.max())))
    else:
        lo_c, hi_c = 0.0, 1.0
    worst = hi_c if worse_high else lo_c  # (a rectangle with no finite bound: the worse end)
    # a display cell shows the best bound proven in it, and is dimmed only where every rectangle
    # in it is excluded (a single rectangle that may still win stays visible)
    (t_edges, cols), (w_edges, rows) = _pooled(s.t_edges), _pooled(s.w_edges)
    best = np.minimum if s.sense == "min" else np.maximum
    shown = _pool(np.where(np.isfinite(shown), shown, worst), rows, cols, best)
    t_edges, w_edges = np.log2(t_edges), np.log2(w_edges)  # (drawn on exponent axes: _exponent_axes)
    mesh = ax.pcolormesh(t_edges, w_edges, shown, shading="flat", cmap="viridis", vmin=lo_c, vmax=hi_c)
    # (extend: values beyond the percentile take the end colour, and the bar says so)
    fig.colorbar(mesh, ax=ax, extend="max" if worse_high else "min",
                 label=f"{_LABELS.get(s.criterion, s.criterion)} ({'upper' if value == 'hi' else 'lower'} "
                       "bound of the exact optimum's)")
    from matplotlib.collections import LineCollection
    from matplotlib.colors import ListedColormap
    from matplotlib.patheffects import withStroke

    undecided = _pool(s.undecided(), rows, cols, np.logical_or)
    # the rectangles proven worse than the choice, dimmed: what stays bright may still win
    ax.pcolormesh(t_edges, w_edges, np.ma.masked_where(undecided, np.ones(undecided.shape)), shading="flat",
                  cmap=ListedColormap([_REGION]), vmin=0.0, vmax=1.0, alpha=_DIM)
    # a light border with a dark edge: seen on the dark and the bright colours, and in the legend on white
    edge = [withStroke(linewidth=2.2, foreground="0.25")]
    ax.add_collection(LineCollection(_outline(undecided, t_edges, w_edges), colors=_REGION, linewidths=1.0,
                                     path_effects=edge))
    ax.plot([np.log2(s.t)], [np.log2(s.w)], marker="*", ms=12, color=_CHOSEN, mec="black", ls="none", clip_on=False,
            zorder=5, label=f"chosen $t$ = {s.t:.4g}, {parameter_symbol(s.weight)} = {s.w:.4g}")
    ax.plot([], [], color=_REGION, lw=1.0, path_effects=edge, label="border of the region not excluded (may be as good)")
    ax.fill([], [], color=_REGION, alpha=_DIM, ec="grey", label="proven worse than the choice (dimmed)")
    _exponent_axes(ax)
    ax.set_xlim(t_edges[0], t_edges[-1])
    ax.set_ylim(w_edges[0], w_edges[-1])
    if kernel is None:  # (the selection does not record its kernel: no formula claimed)
        ax.set_xlabel("bandwidth $t$")
    else:
        ax.set_xlabel(parameter_label("bandwidth", kernel))
    ax.set_ylabel(parameter_symbol(s.weight))
    ax.set_title(title or f"$\\delta$ = {s.delta:.3g}: {s.runs}, {s.exact_solves} exact solves")
    # below the axes: inside, it covered the chosen point (often at a side of the box)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=7, frameon=False)
    return fig
