"""Certified surfaces over two parameters, the bandwidth t and the weight (C, λ), and the
choice of both with a certified δ.

* :func:`approximate_surface` -- cells of (t, weight) tiling a box, each with a pair and a
  rigorous bound on its gap over the whole cell (:mod:`.build`; the cells' mathematics:
  :mod:`approxpath.cells`), a :class:`Surface` whose certificate ``approxpath verify`` re-checks
  (:mod:`approxpath.certificate.surface`);
* :func:`select_surface` -- the (t, weight) whose criterion of the exact optimum (k-fold
  cross-validation, a hold-out set, kernel ridge's closed forms) is within ``delta`` of the best
  over the whole box (:mod:`.select`);
* :func:`plot_surface` -- a surface's cells coloured by their gap bounds, with its exact solves;
* :func:`plot_surface_selection` -- the criterion's enclosure over the box as a heat map.

The derivations are in ``docs/surfaces.md``.
"""

from .build import approximate_surface
from .result import Surface, SurfaceCell, SurfaceSelection, load_surface
from .select import select_surface

__all__ = ["approximate_surface", "Surface", "SurfaceCell", "SurfaceSelection", "load_surface", "select_surface",
           "plot_surface", "plot_surface_selection"]


def __getattr__(name):
    if name in ("plot_surface", "plot_surface_selection"):  # matplotlib only when a figure is asked for
        from . import figures

        return getattr(figures, name)
    raise AttributeError(f"module 'approxpath.surface' has no attribute {name!r}")
