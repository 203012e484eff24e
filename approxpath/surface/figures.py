"""The figure of a selection over two parameters (the ``plot`` extra: matplotlib, object API, no
pyplot state): the criterion's enclosure over the box as a heat map, the chosen point and the
region not yet excluded."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_surface_selection"]

# Okabe-Ito colours (as approxpath.plotting): the chosen point, the region not excluded.
_CHOSEN, _REGION = "#D55E00", "#FFFFFF"
_LABELS = {"error": "cross-validation error", "mae": "mean absolute error", "mse": "mean squared error"}
_WEIGHTS = {"c": "C", "lam": "lambda"}


def plot_surface_selection(selection, ax=None, title=None, value=None):
    """Draw the enclosure of ``selection``'s criterion over the box (log-log) as a heat map,
    the chosen point, and the outline of the rectangles not excluded (where a point may still
    be at least as good as the chosen one: :meth:`~approxpath.surface.SurfaceSelection.undecided`).

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

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..plotting import figure_and_axes

    fig, ax = figure_and_axes(ax, (6.4, 4.8))
    s = selection
    if value is None:
        value = "hi" if s.sense == "min" else "lo"
    shown = np.asarray(s.hi if value == "hi" else s.lo, dtype=float)
    finite = shown[np.isfinite(shown)]
    top = float(np.percentile(finite, 95)) if finite.size else 1.0  # far corners would wash out the colours
    mesh = ax.pcolormesh(s.t_edges, s.w_edges, np.where(np.isfinite(shown), shown, top), shading="flat",
                         cmap="viridis", vmin=float(finite.min()) if finite.size else 0.0, vmax=top)
    fig.colorbar(mesh, ax=ax, label=f"{_LABELS.get(s.criterion, s.criterion)} ({'upper' if value == 'hi' else 'lower'} "
                                    "bound of the exact optimum's)")
    tc = np.sqrt(s.t_edges[:-1] * s.t_edges[1:])
    wc = np.sqrt(s.w_edges[:-1] * s.w_edges[1:])
    if tc.size > 1 and wc.size > 1:
        ax.contour(tc, wc, s.undecided().astype(float), levels=[0.5], colors=_REGION, linewidths=1.0)
    ax.plot([s.t], [s.w], marker="*", ms=12, color=_CHOSEN, mec="black", ls="none",
            label=f"chosen t = {s.t:.4g}, {_WEIGHTS.get(s.weight, s.weight)} = {s.w:.4g}")
    ax.plot([], [], color=_REGION, lw=1.0, label="not excluded (may be as good)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bandwidth t")
    ax.set_ylabel(_WEIGHTS.get(s.weight, s.weight))
    ax.set_title(title or f"delta = {s.delta:.3g}: {s.runs}, {s.exact_solves} exact solves")
    ax.legend(loc="best", fontsize=8, framealpha=0.6)
    return fig
