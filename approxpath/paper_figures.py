"""The source paper's Figures 1 and 3 (the ``plot`` extra: matplotlib), also offered by
:mod:`approxpath.plotting`:

* :func:`plot_solves` -- exact solves against 1/eps for several data sets (Figure 3):
  ``approxpath figure solves``;
* :func:`kernel_condition_numbers` and :func:`plot_condition` -- cond(K_t) over t (Figure 1):
  ``approxpath figure cond``.
"""

from __future__ import annotations

import numpy as np

from .compute.distances import sq_distances
from .compute.kernels import gaussian
from .numerics import UNIT_ROUNDOFF
from .plotting import parameter_label, styled

__all__ = ["plot_solves", "kernel_condition_numbers", "plot_condition"]

# Okabe-Ito colours (as :mod:`approxpath.plotting`'s): the condition numbers, and the region
# singular to working precision.
_COND, _SINGULAR = "#0072B2", "#D55E00"


def plot_solves(counts, title=None):
    """Exact solves against 1/eps, one line per data set (the paper's Figure 3).

    Parameters
    ----------
    counts : dict
        ``{label: [(eps, exact_solves), ...]}``, or triples ``(eps, exact_solves, certified)``:
        a point whose path is not certified on every piece is drawn hollow.  A label may be a
        pair ``(data set, series)`` (e.g. a strategy): one colour per data set, one line style
        and marker per series.
    title : str, optional

    Notes
    -----
    Both axes are logarithmic; the legend gives the slope of a least-squares line through
    each line's points, i.e. the exponent ``a`` of ``solves ~ (1/eps)^a`` (the paper's
    Theorem 1 says ``a <= 1``); a dotted line of slope 1 is drawn for reference.
    """
    keys = [k if isinstance(k, tuple) else (k, None) for k in counts]
    groups = list(dict.fromkeys(g for g, _ in keys))
    series = list(dict.fromkeys(s for _, s in keys))
    markers, styles = "osD^vP*X", ("-", "--", "-.", ":")
    with styled() as plt:
        fig, ax = plt.subplots(figsize=(6.4 if len(series) > 1 else 5.2, 4.0))
        all_x, hollow = [], False
        for i, ((group, ser), rows) in enumerate(zip(keys, counts.values())):
            rows = sorted(rows, key=lambda r: -r[0])
            eps, solves = np.array([r[:2] for r in rows], dtype=float).T
            certified = np.array([bool(r[2]) if len(r) > 2 else True for r in rows])
            x = 1.0 / eps
            all_x.append(x)
            text = group if ser is None else f"{group}, {ser}"
            if x.size >= 2:
                slope = np.polyfit(np.log(x), np.log(solves), 1)[0]
                text += f" (slope {slope:.2f})" if abs(slope) >= 0.005 else " (slope 0)"  # (not "-0.00")
            k, j = groups.index(group), series.index(ser)
            # markers shrink line after line: a line drawn over an equal one leaves it visible
            size = 4.0 + 1.5 * min(len(keys) - 1 - i, 3)
            style = dict(color=f"C{k}", marker=markers[(k if len(series) == 1 else j) % len(markers)], ms=size)
            ax.plot(x, solves, ls=styles[j % len(styles)], lw=1.2, label=text, **style)
            if not certified.all():
                hollow = True
                ax.plot(x[~certified], solves[~certified], ls="none", mfc="white", **style)
        if hollow:
            ax.plot([], [], ls="none", marker="o", ms=4, mfc="white", mec="0.3",
                    label="hollow: not every piece certified")
        if all_x:
            x = np.unique(np.concatenate(all_x))
            top = max(r[1] for rows in counts.values() for r in rows)
            ax.plot(x, top * x / x.max(), ":", color="0.5", lw=1.0, label=r"slope 1 ($\propto 1/\varepsilon$)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            from matplotlib.ticker import FuncFormatter

            fmt = FuncFormatter(lambda v, _: f"{v:g}")
            ax.xaxis.set_major_formatter(fmt)
            ax.yaxis.set_major_formatter(fmt)
        ax.set_xlabel(r"$1/\varepsilon$")
        ax.set_ylabel("exact solves (path complexity)")
        ax.set_title(title or r"Exact solves against $1/\varepsilon$")
        if len(series) > 1:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        else:
            ax.legend(loc="upper left")
        fig.tight_layout()
    return fig


def kernel_condition_numbers(X, ts):
    """2-norm condition numbers of :math:`K_t = \\exp(-tD)` (computed by SVD) at every ``t``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    ts : array_like of shape (k,)

    Returns
    -------
    ndarray of shape (k,)
        ``inf`` where the smallest computed singular value is zero.
    """
    D = sq_distances(X)
    out = []
    for t in np.asarray(ts, dtype=float):
        s = np.linalg.svd(gaussian(D, t), compute_uv=False)
        out.append(s[0] / s[-1] if s[-1] > 0 else np.inf)
    return np.array(out)


def plot_condition(ts, cond, n=None, d=None):
    """cond(K_t) against t on log-log axes (the paper's Figure 1).

    Above :math:`1/u \\approx 9\\cdot 10^{15}` (``u`` the unit roundoff) the kernel matrix is
    singular to working precision: there the computed values only say "at least that large",
    and linear solves with :math:`K_t` (as exact path algorithms do) lose every digit.

    Parameters
    ----------
    ts, cond : array_like of shape (k,)
    n, d : int, optional
        Number of points and dimension, for the title.
    """
    ts = np.asarray(ts, dtype=float)
    cond = np.asarray(cond, dtype=float)
    limit = 1.0 / UNIT_ROUNDOFF
    with styled() as plt:
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        ax.plot(ts, np.minimum(cond, 1e300), color=_COND, lw=1.4, label=r"cond$(K_t)$ (2-norm, by SVD)")
        ax.axhline(limit, color=_SINGULAR, ls="--", lw=1.0, label=r"$1/u$: singular to working precision")
        top = max(float(np.max(cond[np.isfinite(cond)], initial=limit)), limit) * 30
        ax.axhspan(limit, top, color=_SINGULAR, alpha=0.08, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(0.5, top)
        ax.set_xlabel(parameter_label("bandwidth"))
        ax.set_ylabel("condition number")
        what = f"{n} points uniform in $[0,1]^{{{d}}}$" if n and d else "the data"
        ax.set_title(f"Condition number of the Gaussian kernel matrix: {what}")
        ax.legend(loc="upper right")
        fig.tight_layout()
    return fig
