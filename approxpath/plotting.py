"""Figures (the ``plot`` extra: matplotlib).  Each ``plot_*`` function returns a
``matplotlib.figure.Figure``; the CLI writes them with ``--plot FILE``.

* :func:`plot_bounds` — upper and lower bounds along a path with the exact solves (the
  paper's Figure 2): ``approxpath path ... --plot FILE``;
* :func:`plot_solves` — exact solves against 1/eps for several data sets (Figure 3):
  ``approxpath figure solves``;
* :func:`plot_validation` — a validation loss along a path (Figure 4, right):
  ``approxpath figure validation``;
* :func:`plot_condition` — cond(K_t) over t (Figure 1): ``approxpath figure cond``.

The last two (and :func:`kernel_condition_numbers`) are defined in :mod:`approxpath.paper_figures`.
"""

from __future__ import annotations

import textwrap
from contextlib import contextmanager
from pathlib import Path as _FsPath

import numpy as np


# the source paper's Figures 1 and 3, offered here from their own module (:mod:`approxpath.paper_figures`)
_PAPER = ("plot_solves", "plot_condition", "kernel_condition_numbers")
__all__ = ["plot_bounds", "plot_validation", "save_figure", "figure_and_axes", "parameter_label", "parameter_symbol",
           "need_matplotlib", "data_name", "log_x", "styled", *_PAPER]

# Colours of the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies).
_UPPER, _LOWER, _GAP, _EPS, _SOLVE = "#D55E00", "#0072B2", "#009E73", "#CC79A7", "black"


def __getattr__(name):
    if name in _PAPER:
        from . import paper_figures

        return getattr(paper_figures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_KIND_COLOUR = {"sampled": "#E69F00", "uncovered": "#D55E00"}
_RC = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8, "xtick.labelsize": 8,
       "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
       "axes.spines.top": False, "axes.spines.right": False, "legend.frameon": False}
# The kernel of each family (approxpath.kernel_families), for the bandwidth's axis label.
_KERNEL_FORMULA = {"gaussian": r"\exp(-t\,\|x - x'\|^2)", "laplacian": r"\exp(-t\,\|x - x'\|_1)",
                   "ard": r"\exp(-t\,\sum_k w_k (x_k - x'_k)^2)", "precomputed": r"\exp(-t\,D_{xx'})"}
_SYMBOL = {"bandwidth": "$t$", "c": "$C$", "lam": r"$\lambda$"}
# Characters of a title's line: wider titles widen a figure saved with a tight bounding box.
_TITLE_WIDTH = 72
_LOG_SPAN = 30  # relative ε per piece that differ by more than this factor: the gap axis is logarithmic


class _Figures:
    """Figures through matplotlib's object API (:class:`matplotlib.figure.Figure`): neither the
    global backend nor pyplot's state is touched (a notebook keeps its inline backend, a script
    its own), and a figure nobody holds is freed like any object."""

    @staticmethod
    def subplots(nrows=1, ncols=1, figsize=None, **kw):
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize)
        return fig, fig.subplots(nrows, ncols, **kw)


def figure_and_axes(ax=None, figsize=(6.4, 4.8)):
    """``(figure, axes)``: ``ax`` and its figure, or a new constrained-layout figure of
    ``figsize`` inches with one axes (matplotlib's object API; pyplot is not touched).  Without
    ``ax``, ``ImportError`` where matplotlib is not installed (the message says how to install it)."""
    fig = ax.figure if ax is not None else new_figure(figsize)
    return fig, ax if ax is not None else fig.add_subplot()


def new_figure(figsize):
    """A new constrained-layout figure of ``figsize`` inches (matplotlib's object API), or
    ImportError saying how to install matplotlib."""
    need_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def need_matplotlib():
    """``matplotlib``, or ImportError saying how to install it (before a figure's first import
    of a submodule, which would name that submodule alone)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'approxpath[plot]'") from exc
    return matplotlib


def log_x(ax):
    """A log-scale x axis labelled with plain numbers ("0.3", "2", "1e-06"), its labelled minor
    ticks chosen as matplotlib's: its "3×10⁻¹" and "4×10⁻¹" overlapped on ranges of one or two
    decades (a path or a selection over [0.25, 8])."""
    from matplotlib.ticker import LogFormatter

    class _Plain(LogFormatter):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(_Plain())
    ax.xaxis.set_minor_formatter(_Plain(labelOnlyBase=False))


@contextmanager
def styled():
    """Figures drawn under approxpath's font sizes: yields an object with pyplot's ``subplots``
    signature that makes :class:`matplotlib.figure.Figure` objects (pyplot is not touched)."""
    matplotlib = need_matplotlib()
    with matplotlib.rc_context(_RC):
        yield _Figures


def parameter_symbol(name):
    """The symbol of a path parameter in a figure (``$t$``, ``$C$``, ``$\\lambda$``; another name as it is):
    matplotlib mathtext for ``"bandwidth"``, ``"c"`` and ``"lam"``."""
    return _SYMBOL.get(name, name)


def parameter_label(path_or_name, kernel="gaussian"):
    """The axis label of a path parameter (a name, or a path or problem: its parameter): the
    bandwidth with its kernel's formula (``kernel``: a name, or a problem: its own; a path's or
    problem's own by default), C or λ.  The kernel families: ``"gaussian"``, ``"laplacian"``,
    ``"ard"``, ``"precomputed"`` (another, or a problem without a ``kernel`` option, is drawn as
    the Gaussian); a path or problem as ``path_or_name`` has its own kernel used, whatever
    ``kernel`` says.  The bandwidth's label is ``bandwidth $t$ of $k_t(x, x') = ...$``, another
    parameter's its :func:`parameter_symbol`."""
    if not isinstance(path_or_name, str):
        problem = getattr(path_or_name, "problem", path_or_name)
        kernel, path_or_name = problem, problem.parameter
    if not isinstance(kernel, str):  # a problem: its own kernel
        kernel = kernel.options().get("kernel") or "gaussian"
    if path_or_name == "bandwidth":
        return f"bandwidth $t$ of $k_t(x, x') = {_KERNEL_FORMULA.get(kernel, _KERNEL_FORMULA['gaussian'])}$"
    return parameter_symbol(path_or_name)


def _title_of(path):
    """``problem on DATA (the options the path uses, not the swept one)`` and its ε, relative or not."""
    where = f" on {data_name(path)}" if data_name(path) else ""
    opts = ", ".join(f"{k}={v}" for k, v in path.problem.path_options().items())
    eps = f"$\\varepsilon$ = {path.eps:g}{' (relative)' if path.relative else ''}"
    return textwrap.fill(f"{path.problem.name}{where} ({opts})", _TITLE_WIDTH, break_long_words=False), eps


def _targets(path):
    """Each piece's largest admissible gap bound: ε, or with a relative ε, ε times a lower bound
    of the optimal value on the piece (what the certificate claims the bound is below)."""
    from .certificate.claims import target

    bound = path.problem.bound
    return np.array([target(bound, p.dual, p.lo, p.hi, path.eps, path.relative) for p in path.pieces])


def _gap_panel(ax, path, extra_top=0.0):
    """The lower panel of a path's figure: the certified bound of every piece, the ε it is
    below (per piece for a relative ε; on a log axis when those ε span more than ``_LOG_SPAN``),
    pieces not certified shaded; returns the shading's legend handles."""
    edges = np.array([[p.lo, p.hi] for p in path.pieces]).ravel()
    bounds = np.array([p.gap_bound for p in path.pieces])
    certified = np.array([p.kind != "uncovered" for p in path.pieces])
    sampled = any(p.kind == "sampled" for p in path.pieces)
    proven = "bound (or sampled gap) per piece" if sampled else "bound per piece"
    ax.plot(edges, np.repeat(np.where(certified, bounds, np.nan), 2), color="0.2", lw=0.8, label=proven)
    targets = _targets(path)
    label = r"$\varepsilon \times$ lower bound of the optimum" if path.relative else r"$\varepsilon$"
    ax.plot(edges, np.repeat(targets, 2), color=_EPS, ls="--", lw=1.0, label=label)
    extra = _shade_kinds(ax, path.pieces)
    top = np.nanmax(np.concatenate([targets, np.where(certified, bounds, np.nan), [extra_top]]))
    low = np.min(targets[targets > 0], initial=np.inf)
    if path.relative and top > _LOG_SPAN * low:  # a relative ε that spans decades: small pieces would lie flat
        ax.set_yscale("log")
        ax.set_ylim(low / 100, 30 * top)  # (gaps two decades below the smallest ε; a decade and a half for the legend)
    else:
        ax.set_ylim(0, 1.4 * top if top > 0 else 1.0)
    ax.set_xlabel(parameter_label(path))
    return extra


def data_name(result):
    """The name of the data file a path or surface was computed on (its ``meta["data_file"]``
    without the folders), or None."""
    f = result.meta.get("data_file")
    return _FsPath(f).name if f else None


def _shade_kinds(ax, pieces):
    """Shade pieces that are not certified; returns legend handles for the kinds present."""
    from matplotlib.patches import Patch

    seen = {}
    for p in pieces:
        if p.kind in _KIND_COLOUR:
            ax.axvspan(p.lo, p.hi, color=_KIND_COLOUR[p.kind], alpha=0.2, lw=0)
            seen[p.kind] = Patch(color=_KIND_COLOUR[p.kind], alpha=0.3, label=f"{p.kind} piece")
    return list(seen.values())


def _piecewise_objectives(path, n_points):
    """``(ts, up, low)``: the objectives of each piece's own pair at its two ends and at the points
    of ``n_points`` log-spaced ones inside it, pieces apart by NaN (a line drawn across a piece end
    joins two pairs: from a large gap at the end of one piece down to the next one's, it passed
    above the next piece's bound).  Piece ends are where the pairs change, so every end is drawn
    from both sides."""
    from .moving import value_at

    problem = path.require_problem()
    grid = np.geomspace(*path.interval, n_points)
    ts, up, low = [], [], []
    for p in path.pieces:
        for t in (p.lo, *grid[(grid > p.lo) & (grid < p.hi)], p.hi):
            ts.append(t)
            up.append(problem.primal_objective(problem.primal_at(value_at(p.primal, t), t), t))
            low.append(problem.dual_objective(problem.dual_at(value_at(p.dual, t), t), t))
        ts, up, low = ts + [np.nan], up + [np.nan], low + [np.nan]
    return np.array(ts), np.array(up), np.array(low)


def plot_bounds(path, n_points=400, ax=None):
    """Upper (primal) and lower (dual) bounds on the optimal value along the path, with the
    exact-solve points (the paper's Figure 2); below, the gap of the path's pair, the
    certified bound of every piece and eps (pieces not certified are shaded).

    Parameters
    ----------
    path : Path
        Must carry its problem (computed here, or loaded with the data).
    n_points : int
        Parameter values (spaced in log scale, plus every piece end) at which the
        bounds are drawn.
    ax : matplotlib Axes, optional
        Draw only the top panel into it.
    """
    ts, up, low = _piecewise_objectives(path, n_points)
    with styled() as plt:
        if ax is None:
            fig, (ax, ax2) = plt.subplots(2, 1, figsize=(6.4, 5.2), sharex=True, height_ratios=(3, 2))
        else:
            fig, ax2 = ax.figure, None
        ax.plot(ts, up, color=_UPPER, lw=1.2, label="primal value of the path (upper bound)")
        ax.plot(ts, low, color=_LOWER, lw=1.2, label="dual value of the path (lower bound)")
        sp = np.array(path.solve_points)
        if sp.size:
            ax.plot(sp, [path.objectives(t)[0] for t in sp], "o", color=_SOLVE, ms=3,
                    label=f"exact solves ({path.exact_solves})")
        log_x(ax)
        ax.set_ylabel("objective value")
        head, eps = _title_of(path)
        status = ("all certified" if path.certified else "NOT all certified" if path.verified
                  else "UNVERIFIED (loaded with verify=False)")
        ax.set_title(f"{head}, strategy {path.strategy}\n{eps}: {path.exact_solves} exact solves, "
                     f"{len(path.pieces)} pieces, {status}")
        ax.legend(loc="best")
        if ax2 is None:
            ax.set_xlabel(parameter_label(path))
        else:
            ax2.plot(ts, up - low, color=_GAP, lw=0.9, label="gap of the pair")
            shading = _gap_panel(ax2, path, float(np.nanmax(up - low)))
            handles = ax2.get_legend_handles_labels()[0] + shading
            ax2.set_ylabel("duality gap")
            ax2.legend(handles=handles, loc="upper center", ncol=min(3, len(handles)))
            fig.tight_layout()  # (only a figure made here: a caller's axes keep their figure's layout)
    return fig


_CRITERION_LABEL = {"error": "validation error rate", "mae": "validation MAE", "mse": "validation MSE",
                    "loocv": "LOOCV (mean squared LOO residual)"}


def plot_validation(curve, path=None, title=None):
    """A validation loss along a path (the paper's Figure 4, right), the selected parameter
    marked; with ``path``, a lower panel with the certified gap bound at every evaluated
    parameter, eps and the exact solves.

    Parameters
    ----------
    curve : approxpath.selection.ValidationCurve
    path : Path, optional
    title : str, optional
    """
    with styled() as plt:
        if path is not None:
            fig, (ax, ax2) = plt.subplots(2, 1, figsize=(6.4, 4.8), sharex=True, height_ratios=(3, 1.3))
        else:
            fig, ax = plt.subplots(figsize=(6.4, 3.6))
            ax2 = None
        label = _CRITERION_LABEL.get(curve.criterion, curve.criterion)
        # (dots: the parameters evaluated, e.g. the pieces' middles; the line only joins them)
        ax.plot(curve.t, curve.loss, color=_LOWER, lw=1.0, marker=".", ms=3, label=f"{label} of the path's model")
        if curve.loss_error is not None:
            ax.fill_between(curve.t, curve.loss - curve.loss_error, curve.loss + curve.loss_error, color=_LOWER,
                            alpha=0.2, lw=0, label="certified error bar")
        ax.axvline(curve.best_t, color=_UPPER, ls="--", lw=1.0)
        symbol = parameter_symbol(curve.parameter)
        ax.plot([curve.best_t], [curve.best_loss], "o", color=_UPPER, ms=5,
                label=f"selected {symbol} = {curve.best_t:.4g}: {curve.criterion} {curve.best_loss:.4g}, "
                      f"certified gap $\\leq$ {curve.best_gap_bound:.3g}")
        log_x(ax)
        ax.set_ylabel(label)
        ax.legend(loc="best")
        if title is None and path is not None:
            head, eps = _title_of(path)
            title = f"{head}:\n{label} along the {eps} path"
        if title:
            ax.set_title(title)
        if ax2 is None:
            ax.set_xlabel(parameter_label(path if path is not None else curve.parameter))
        else:
            shading = _gap_panel(ax2, path)
            sp = np.array(path.solve_points)
            ax2.vlines(sp, 0, 0.15 * ax2.get_ylim()[1], color=_UPPER, lw=1.0, label=f"exact solves ({sp.size})")
            ax2.set_ylabel("gap")
            handles = ax2.get_legend_handles_labels()[0] + shading
            ax2.legend(handles=handles, loc="upper center", ncol=min(4, len(handles)))
        fig.tight_layout()
    return fig


def save_figure(fig, file):
    """Write ``fig`` to ``file`` (format from the extension; atomically, never over a device or a
    directory); a figure of pyplot's (drawn into an ``ax`` the caller made with pyplot) is
    closed there.  Saved at 150 dpi with a tight bounding box; the format is the lowercase suffix
    (matplotlib's default, png, without one); :func:`~approxpath.certificate.output.write_atomic`
    refuses a directory, a device, a missing or read-only folder.  Returns ``file`` as given."""
    import sys

    from pathlib import Path

    from .certificate.output import write_atomic

    kind = Path(file).suffix.lower().lstrip(".") or None  # matplotlib's default (png) without one
    write_atomic(file, lambda fh: fig.savefig(fh, format=kind, dpi=150, bbox_inches="tight"))
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None and getattr(fig.canvas, "manager", None) is not None:  # pyplot's own figure
        plt.close(fig)
    return file
