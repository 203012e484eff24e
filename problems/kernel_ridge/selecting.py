"""What kernel ridge's bound offers a certified selection by a closed-form criterion (numpy only):
the criteria's enclosures (:mod:`.criteria`), the pairs from exact optima that need no path, the
facts from a spectrum shared by every λ (:mod:`.facts`), and the cells of the (t, λ) plane
(:mod:`.box`).  Each capability is found by its presence on the bound
(:mod:`approxpath.selection`, :mod:`approxpath.surface`)."""

from __future__ import annotations

__all__ = ["ClosedFormSelection"]

# Cells between two exact optima in a selection with no path (:meth:`ClosedFormSelection.node_cells`).
_NODE_CELLS = {"loocv": 2, "gcv": 2}


class ClosedFormSelection:
    """Methods of :class:`~.bound.RidgeBound` (a mixin without state) for selecting by LOOCV,
    GCV or the log marginal likelihood."""

    #: Closed-form selection criteria (:mod:`.criteria`): ``"min"`` or ``"max"`` is better.
    CLOSED_FORM_CRITERIA = {"loocv": "min", "gcv": "min", "lml": "max"}

    def criterion_enclosure(self, name, primal, dual, gap_bound, lo, hi, cache=None, span=None):
        """``(low, high)``: the closed-form criterion ``name`` of the exact optimum for every
        parameter of ``[lo, hi]``, given a pair whose gap is at most ``gap_bound`` there
        (:func:`.criteria.criterion_enclosure`; ``cache`` a dict of point factorizations, ``span``
        an interval around ``[lo, hi]`` at whose ends they are taken)."""
        from .criteria import criterion_enclosure

        return criterion_enclosure(self, name, primal, dual, gap_bound, lo, hi, cache, span)

    def spectrum(self, tau):
        """:func:`.facts.spectrum`: :math:`K_t` at ``tau`` diagonalized, with its error bounds."""
        from .facts import spectrum

        return spectrum(self, tau)

    def spectral_facts(self, tau, spectrum, cache):
        """Put :func:`.facts.spectral_facts` at ``tau`` and this λ into ``cache`` (as
        :meth:`criterion_enclosure`'s): the optimum there without a factorization."""
        from .facts import remember, spectral_facts

        remember(cache, tau, spectral_facts(self, tau, spectrum))

    def box_edge(self, name, lo, hi, cache, span=None):
        """:func:`.box.edge`: what a cell of the (t, λ) plane takes from its edge at this λ."""
        from .box import edge

        return edge(self, name, lo, hi, cache, span)

    def box_enclosure(self, first, second):
        """:func:`.box.box_enclosure`: the criterion on the cell between two :meth:`box_edge`
        (with it a selection over the bandwidth and λ needs no path:
        :func:`approxpath.surface.select_surface` without ``cv``)."""
        from .box import box_enclosure

        return box_enclosure(self, first, second)

    def node_optimum(self, tau, cache):
        """Put the exact optimum at ``tau`` and its derivative along the bandwidth into ``cache``
        (as :meth:`node_pair` reads them), from a Cholesky factor alone: held-out predictions want
        no inverse (its diagonal is a third of a selection's time).  The diagonal and trace stay
        unknown there, ``(0, inf)``."""
        from .criteria import END_LEVEL
        from .facts import point_facts, remember

        if float(tau) not in cache:
            remember(cache, tau, point_facts(self, tau, slope=False, inverse=False, derivative=True), END_LEVEL["loocv"])

    def prediction_edge(self, lo, hi, cache, X_new, span=None):
        """:func:`.box.prediction_edge`: the exact optima over the bandwidths ``[lo, hi]`` (a point
        where they agree) at this λ, from the optima ``cache`` holds at the ends of ``span``, with
        their held-out predictions' enclosures."""
        from .box import prediction_edge

        return prediction_edge(self, lo, hi, cache, X_new, span)

    def prediction_box(self, first, second):
        """:func:`.box.prediction_box`: the held-out predictions on the cell between two
        :meth:`prediction_edge` s at two λ (with it a validation loss over λ, or over both λ and
        the bandwidth, needs no path: :mod:`approxpath.surface.folds`)."""
        from .box import prediction_box

        return prediction_box(self, first, second)

    def node_cells(self, name):
        """Cells between two neighbouring exact optima in a selection by the criterion ``name``
        with no path, their inner ends predicted (:meth:`node_pair`); a cell refined there is
        split at a predicted point first (:class:`approxpath.selection.nodes.NodeClosedForm`).
        The data term's gap bound limits LOOCV and GCV on a cell, and a predicted point cuts it
        as well as an exact optimum there would (sinc n = 1000, LOOCV: 19 factorizations
        instead of 36, 0.65x the time; n = 100 – 600: 0.6–0.9x).  The marginal likelihood is
        limited by log det's values at the optima around a cell, which predicted points do not
        narrow (n = 1000, four cells between optima: 273 factorizations instead of 417, but
        1.15x the time): one cell, every refinement at a new optimum."""
        return _NODE_CELLS.get(name, 1)

    def node_pair(self, name, lo, hi, cache, span=None):
        """``(primal, dual)`` over the bandwidth interval ``[lo, hi]`` from the exact optima at the
        ends of ``span`` (default ``(lo, hi)``), computed by the factorizations the criterion
        ``name`` needs there anyway (``cache`` as :meth:`criterion_enclosure`'s), interpolated
        inside it with their derivatives (:func:`.criteria.node_pair`).  With it a certified
        selection by a closed-form criterion over the bandwidth needs no path
        (:class:`approxpath.selection.nodes.NodeClosedForm`)."""
        from .criteria import node_pair

        return node_pair(self, name, lo, hi, cache, span)
