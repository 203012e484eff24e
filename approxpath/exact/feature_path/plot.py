"""The figure of a feature path (the paper's Figure 3), with matplotlib's object API only."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_feature_path"]

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), then greys.
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
            "#999999", "#666666")
_FLAGGED = "#D55E00"
_EVENT_MARK = {"joined": ("o", "E1: joins"), "left": ("x", "E2: leaves"), "start": ("s", "start")}


def plot_feature_path(path, relevant=None, title=None, detail=None, segments=None):
    """β against D with the events marked, and the Jacobian calls against D.

    Parameters
    ----------
    path : FeaturePath
    relevant : sequence of int, optional
        Features (column indices) drawn as solid lines (the rest dashed), e.g. the truly
        relevant ones of a synthetic set.  Lines are labelled x1 ... xd (column 0 is x1).
    title : str, optional
    detail : float, optional
        Add a panel with the part of the path at :math:`D \\le` ``detail``, magnified (the
        paper's Figure 3(b): where the path turns back and features leave).
    segments : SegmentReport, optional
        :func:`~approxpath.exact.feature_path.certify_segments`' result: the stretches of D
        between points whose inner path is not certified are shaded.

    Returns
    -------
    matplotlib.figure.Figure
        (a) every :math:`\\beta_j` along the path against :math:`D = \\lVert\\beta\\rVert_1`,
        events (E1 joins, E2 leaves) and the turns in D marked (the path may turn back in D),
        points whose certificate is flagged marked on the D axis (red ticks);
        (b) with ``detail``, the same for :math:`D \\le` ``detail``; then the cumulative number
        of Jacobian evaluations against D.
    """
    from ...plotting import new_figure

    panels = 2 if detail is None else 3
    fig = new_figure((4.5 * panels, 3.6))
    axes = fig.subplots(1, panels)
    ax, bx = axes[0], axes[-1]
    _weights(ax, path, relevant, segments=segments)
    ax.set_title("(a) feature weights along the path")
    ax.legend(fontsize=7, ncol=2, frameon=False)
    if detail is not None:
        cx = axes[1]
        keep = path.D <= detail
        _weights(cx, path, relevant, keep, segments)
        cx.set_xlim(0.0, detail)
        top = float(path.beta[keep].max()) if keep.any() else 1.0
        cx.set_ylim(-0.03 * top, 1.05 * top)
        cx.set_title(f"(b) detail: D <= {detail:.3g}")
    bx.plot(path.D, path.jacobian_calls_at, color=_COLOURS[0], lw=1.2)
    bx.set_xlabel(r"$D = \|\beta\|_1$")
    bx.set_ylabel("Jacobian calls (cumulative)")
    bx.set_title(f"({'c' if detail is not None else 'b'}) Jacobian evaluations")
    for a in axes:
        a.grid(alpha=0.3, lw=0.5)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def _weights(ax, path, relevant, keep=None, segments=None):
    """Draw every β_j against D on ``ax`` (points ``keep`` only, NaN elsewhere so that lines
    break), the events, the turns in D, the flagged points and the segments not certified."""
    d = path.beta.shape[1]
    solid = set(range(d)) if relevant is None else {int(j) for j in relevant}
    show = np.ones(len(path), dtype=bool) if keep is None else keep
    D = np.where(show, path.D, np.nan)
    for j in range(d):
        if not np.any(path.beta[show, j] > 0):
            continue
        ax.plot(D, path.beta[:, j], lw=1.2 if j in solid else 0.9, ls="-" if j in solid else "--",
                color=_COLOURS[j % len(_COLOURS)], label=f"x{j + 1}")
    seen = set()
    for e in path.events:
        if show[e.index]:
            marker, label = _EVENT_MARK[e.kind]
            ax.plot([e.D], [path.beta[e.index, e.feature]], marker=marker, ls="none", ms=4, color="black",
                    label=None if e.kind in seen else label)
            seen.add(e.kind)
    for i in path.turns:
        if show[i]:
            ax.axvline(path.D[i], color="grey", lw=0.7, ls=":", label=None if "turn" in seen else "turns in D")
            seen.add("turn")
    flagged = np.flatnonzero(~path.certified & show) if path.certified is not None else np.array([], dtype=int)
    if path.certified is None:  # (computed with certify=False: nothing was checked, nothing failed)
        ax.plot([], [], " ", label="points not checked (certify=False)")
    if flagged.size:  # (a figure of a path with failures must not look like a clean one)
        ax.plot(path.D[flagged], np.zeros(flagged.size), "|", color=_FLAGGED, ms=10, mew=1.5,
                transform=ax.get_xaxis_transform(), clip_on=False, label=f"flagged points ({flagged.size})")
    bad = [c for c in (segments.segments if segments is not None else ()) if not c.certified and show[c.index]]
    for k, c in enumerate(bad):
        ax.axvspan(min(c.D), max(c.D), color=_FLAGGED, alpha=0.15, lw=0,
                   label=f"segments not certified ({len(bad)})" if k == 0 else None)
    ax.set_xlabel(r"$D = \|\beta\|_1$")
    ax.set_ylabel(r"$\beta_j$")
