"""The figure of a certified selection (the ``plot`` extra: matplotlib, object API, no pyplot
state): the criterion's enclosure band along the parameter, the chosen parameter and its δ."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_selection"]

# Okabe-Ito colours (as approxpath.plotting): the band, its edges, the chosen point.
_BAND, _EDGE, _CHOSEN, _SAMPLED, _UNBOUNDED = "#56B4E9", "#0072B2", "#D55E00", "#E69F00", "0.85"
_LABELS = {"error": "cross-validation error", "mae": "mean absolute error", "mse": "mean squared error",
           "loocv": "LOOCV", "gcv": "GCV", "lml": "log marginal likelihood"}


def plot_selection(selection, ax=None, title=None, parameter=None):
    """Draw the enclosure band of ``selection`` (a :class:`~approxpath.selection.Selection`)
    along the parameter (log scale) with the chosen parameter, its value's enclosure and the
    band ``value ± delta`` that no parameter beats.

    Parameters
    ----------
    selection : Selection
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure otherwise.
    title : str, optional
    parameter : str, optional
        The parameter's name (``"bandwidth"``, ``"c"``, ``"lam"``: its symbol and axis label), the
        problem (its parameter and kernel) or an axis label; by default the selection's paths'
        parameter, or without paths its ``parameter`` (the bandwidth then without a kernel's
        formula: the selection does not record its kernel).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..plotting import figure_and_axes, log_x, parameter_label, parameter_symbol

    fig, ax = figure_and_axes(ax, (6.4, 4.2))
    s = selection
    if parameter is None:
        parameter = s.paths[0] if s.paths else s.parameter
    unknown_kernel = parameter == "bandwidth" and not s.paths  # (the label claims no formula)
    name = parameter if isinstance(parameter, str) else getattr(parameter, "problem", parameter).parameter
    symbol = parameter_symbol(name)
    edges, lo, hi = np.asarray(s.edges), np.asarray(s.lo), np.asarray(s.hi)
    keep = np.isfinite(lo) & np.isfinite(hi)
    x = np.repeat(edges, 2)[1:-1]
    certified = s.kind == "certified"
    if certified:  # (a sampled selection's cells hold one value each: a line, in its own colour, says so)
        ax.fill_between(x, np.repeat(np.where(keep, lo, np.nan), 2), np.repeat(np.where(keep, hi, np.nan), 2),
                        label="enclosure of the exact optimum's criterion", color=_BAND, alpha=0.45, lw=0)
    runs = np.flatnonzero(np.diff(np.concatenate([[0], (~keep).astype(int), [0]])))  # starts and ends of runs
    for n, (a, b) in enumerate(zip(runs[::2], runs[1::2])):  # cells with no finite bound: nothing proven there
        ax.axvspan(edges[a], edges[b], color=_UNBOUNDED, lw=0, label=None if n else "no finite bound (nothing proven)")
    edge = dict(color=_EDGE, lw=0.6) if certified else dict(color=_SAMPLED, lw=1.2)
    ax.plot(x, np.repeat(np.where(keep, lo, np.nan), 2),
            label=None if certified else "the path's models' values (sampled)", **edge)
    ax.plot(x, np.repeat(np.where(keep, hi, np.nan), 2), **edge)
    ax.errorbar([s.t], [0.5 * (s.value[0] + s.value[1])], yerr=[[0.5 * (s.value[1] - s.value[0])]] * 2,
                fmt="o", color=_CHOSEN, ms=4, capsize=3, label=f"chosen {symbol} = {s.t:.4g}")
    if np.isfinite(s.delta):
        limit = s.value[1] - s.delta if s.sense == "min" else s.value[0] + s.delta
        ax.axhline(limit, color=_CHOSEN, lw=0.8, ls="--",
                   label=f"no {symbol} {'below' if s.sense == 'min' else 'above'} this line ($\\delta$ = {s.delta:.3g})")
    log_x(ax)
    ax.set_xlabel("bandwidth $t$" if unknown_kernel else parameter_label(parameter))
    ax.set_ylabel(_LABELS.get(s.criterion, s.criterion))
    finite, cut = np.concatenate([lo[keep], hi[keep]]), None
    if finite.size:  # focus on the values near the best: far cells can be orders of magnitude off
        span = np.percentile(finite, [0, 90]) if s.sense == "min" else np.percentile(finite, [10, 100])
        pad = 0.05 * (span[1] - span[0] or 1.0)
        ax.set_ylim(span[0] - pad, span[1] + pad)
        if finite.min() < span[0] - pad or finite.max() > span[1] + pad:  # say what the view leaves out
            cut = "above the 90th" if s.sense == "min" else "below the 10th"  # (the side where the view cuts)
    proof = "" if certified else "; sampled: nothing proven between the samples"
    ax.set_title(title or f"{_LABELS.get(s.criterion, s.criterion)}: {s.runs}, {s.exact_solves} exact solves{proof}")
    ax.grid(True, alpha=0.3, lw=0.5)
    handles, labels = ax.get_legend_handles_labels()
    if cut:  # the last line of the legend, without a mark
        handles, labels = [*handles, ax.plot([], [], " ")[0]], [*labels, f"values {cut} percentile are off the axis"]
    # below the axes: a band that fills the view leaves no place inside that hides nothing
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=8, frameon=False)
    return fig
