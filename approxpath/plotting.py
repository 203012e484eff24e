"""Figures (the ``plot`` extra: matplotlib). Each function returns a ``matplotlib.figure.Figure``."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_bounds", "save_figure"]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'approxpath[plot]'") from exc
    return plt


def plot_bounds(path, n_points=400, ax=None):
    """Upper (primal) and lower (dual) bounds on the optimal value along the path, with the
    exact-solve points (the paper's Figure 2); below, the gap of the path's pair, the stored
    bound of every piece and eps (pieces not certified are shaded).

    Parameters
    ----------
    path : Path
        Must carry its problem (computed here, or loaded with the data).
    n_points : int
        Parameter values per piece-respecting grid (log-spaced) at which to draw the bounds.
    """
    plt = _plt()
    lo, hi = path.interval
    ts = np.unique(np.concatenate([np.geomspace(lo, hi, n_points), [p.lo for p in path.pieces], [hi]]))
    up, low = np.array([path.objectives(t) for t in ts]).T
    if ax is None:
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, height_ratios=(3, 2))
    else:
        fig, ax2 = ax.figure, None
    ax.plot(ts, up, color="C3", lw=1.2, label="primal value (upper bound)")
    ax.plot(ts, low, color="C0", lw=1.2, label="dual value (lower bound)")
    sp = np.array(path.solve_points)
    if sp.size:
        opt = np.array([path.objectives(t)[0] for t in sp])
        ax.plot(sp, opt, "k.", ms=5, label=f"exact solves ({path.exact_solves})")
    xscale = "log" if path.problem.scale == "log" else "linear"
    ax.set_xscale(xscale)
    ax.set_ylabel("objective")
    ax.set_title(f"{path.problem.name} over {path.problem.parameter}: eps = {path.eps:g}, {len(path.pieces)} pieces, "
                 f"{'all certified' if path.certified else 'NOT fully certified'}")
    ax.legend(loc="best", fontsize=8)
    if ax2 is not None:
        ax2.plot(ts, up - low, color="C2", lw=1.0, label="gap of the path's pair")
        edges = np.array([[p.lo, p.hi] for p in path.pieces]).ravel()
        bounds = np.repeat([p.gap_bound for p in path.pieces], 2)
        ax2.plot(edges, bounds, color="k", lw=0.8, alpha=0.7, label="certified bound per piece")
        ax2.axhline(path.eps, color="C3", ls="--", lw=1, label="eps")
        for p in path.pieces:
            if p.kind != "certified":
                ax2.axvspan(p.lo, p.hi, color="orange" if p.kind == "sampled" else "red", alpha=0.25, lw=0)
        ax2.set_xscale(xscale)
        ax2.set_ylim(bottom=0)
        ax2.set_xlabel(f"{path.problem.parameter} t")
        ax2.set_ylabel("duality gap")
        ax2.legend(loc="best", fontsize=8)
    else:
        ax.set_xlabel(f"{path.problem.parameter} t")
    fig.tight_layout()
    return fig


def save_figure(fig, file):
    """Write ``fig`` to ``file`` (format from the extension) and close it."""
    fig.savefig(file, dpi=120)
    _plt().close(fig)
    return file
