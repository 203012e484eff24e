"""The figure of a feature path (the paper's Figure 3), with matplotlib's object API only."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_feature_path"]

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), then greys.
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
            "#999999", "#666666")
_EVENT_MARK = {"joined": ("o", "E1: joins"), "left": ("x", "E2: leaves"), "start": ("s", "start")}


def plot_feature_path(path, relevant=None, title=None):
    """β against D with the events marked, and the Jacobian calls against D.

    Parameters
    ----------
    path : FeaturePath
    relevant : sequence of int, optional
        Features drawn as solid lines (the rest dashed), e.g. the truly relevant ones of a
        synthetic set.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: (a) every :math:`\\beta_j` along the path against
        :math:`D = \\lVert\\beta\\rVert_1` (the path may turn back in D), events marked;
        (b) the cumulative number of Jacobian evaluations against D.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'approxpath[plot]'") from exc
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    ax, bx = fig.subplots(1, 2)
    d = path.beta.shape[1]
    solid = set(range(d)) if relevant is None else {int(j) for j in relevant}
    for j in range(d):
        if not np.any(path.beta[:, j] > 0):
            continue
        ax.plot(path.D, path.beta[:, j], lw=1.2 if j in solid else 0.9, ls="-" if j in solid else "--",
                color=_COLOURS[j % len(_COLOURS)], label=f"feature {j}")
    seen = set()
    for e in path.events:
        marker, label = _EVENT_MARK[e.kind]
        ax.plot([e.D], [path.beta[e.index, e.feature]], marker=marker, ls="none", ms=4, color="black",
                label=None if e.kind in seen else label)
        seen.add(e.kind)
    ax.set_xlabel(r"$D = \|\beta\|_1$")
    ax.set_ylabel(r"$\beta_j$")
    ax.set_title("(a) feature weights along the path")
    ax.legend(fontsize=7, ncol=2, frameon=False)
    bx.plot(path.D, path.jacobian_calls_at, color=_COLOURS[0], lw=1.2)
    bx.set_xlabel(r"$D = \|\beta\|_1$")
    bx.set_ylabel("Jacobian calls (cumulative)")
    bx.set_title("(b) Jacobian evaluations")
    for a in (ax, bx):
        a.grid(alpha=0.3, lw=0.5)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
