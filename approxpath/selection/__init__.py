"""Model selection along certified paths.

* :func:`validation_curve` -- a validation loss of the *path's* models at sampled parameters
  (:mod:`.curve`);
* :func:`select` -- the parameter whose criterion of the *exact optimum* is provably within
  ``delta`` of the best over the whole interval: k-fold cross-validation (``cv=5``, any
  scikit-learn splitter), a hold-out set, or a problem's closed-form criterion (kernel ridge's
  LOOCV, GCV and log marginal likelihood), enclosed on every piece and refined by branch and
  bound (:mod:`.search`, :mod:`.cover`);
* :func:`plot_selection` -- the criterion's enclosure band with the chosen parameter (:mod:`.figures`).

The derivations are in ``docs/certified-selection.md``.
"""

from .curve import CRITERIA, SELECTIONS, ValidationCurve, evaluation_points, validation_curve, validation_loss
from .advice import RangeWarning, ShortfallWarning, SortedFoldsWarning
from .losses import LOSSES

__all__ = ["CRITERIA", "SELECTIONS", "ValidationCurve", "evaluation_points", "validation_curve", "validation_loss",
           "LOSSES", "DEFAULT_EPS", "RangeWarning", "ShortfallWarning", "SortedFoldsWarning", "Selection", "select",
           "plot_selection"]


#: Names of :mod:`.search`, imported at their first use: the search reaches the driver and the
#: solvers, and a verification imports :mod:`.predictions` (numpy only) through this package.
_SEARCH_NAMES = ("DEFAULT_EPS", "Selection", "select")


def __getattr__(name):
    if name == "plot_selection":  # matplotlib only when a figure is asked for
        from .figures import plot_selection

        return plot_selection
    if name in _SEARCH_NAMES:
        from . import search

        return getattr(search, name)
    raise AttributeError(f"module 'approxpath.selection' has no attribute {name!r}")
