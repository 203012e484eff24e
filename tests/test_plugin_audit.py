"""A plug-in's bound audited by the driver against the plug-in's own numpy maps (each test fails
on the code before): a ``Bound`` whose gap misses a term certified pieces whose true gap was
far above ε, and ``verify`` -- which trusts the registered bound -- said OK."""

import numpy as np
import pytest

import approxpath
from approxpath.data import make_sinc
from approxpath.driver.audit import BoundContradiction



def _ridge(gap):
    """A kernel ridge plug-in (defined here, outside approxpath) whose bound's gap is ``gap``."""
    base = approxpath.get_problem("kernel_ridge")

    class Bound(base.Bound):
        name = "audited_ridge"

    Bound.gap = gap
    return type("AuditedRidge", (base,), dict(name="audited_ridge", Bound=Bound, __module__=__name__))


def test_a_bound_that_misses_a_term_stops_the_run():
    X, y = make_sinc(n=30, seed=0)
    lying = _ridge(lambda self, primal, dual, lo, hi=None: 0.0)  # "no gap anywhere"
    with pytest.raises(BoundContradiction, match="audited_ridge's Bound certified .* its Bound is no bound"):
        approxpath.approximate_path(lying(X, y, lam=0.1), eps=0.05, interval=(0.5, 4.0))


def test_a_true_bound_passes_the_audit_and_certifies_as_the_built_in_one():
    X, y = make_sinc(n=30, seed=0)
    base = approxpath.get_problem("kernel_ridge")
    honest = _ridge(base.Bound.gap)
    mine = approxpath.approximate_path(honest(X, y, lam=0.1), eps=0.05, interval=(0.5, 4.0))
    builtin = approxpath.approximate_path(base(X, y, lam=0.1), eps=0.05, interval=(0.5, 4.0))
    assert mine.certified and [p.gap_bound for p in mine.pieces] == [p.gap_bound for p in builtin.pieces]
    assert np.isfinite(mine.max_gap_bound)


def test_a_dual_floor_above_the_dual_stops_a_relative_run():
    """A floor above the optimum makes a relative target too loose (a plug-in of a review: true relative gap 0.0174
    certified at 0.01)."""
    X, y = make_sinc(n=30, seed=0)
    base = approxpath.get_problem("kernel_ridge")
    high = _ridge(base.Bound.gap)
    high.Bound.dual_floor = lambda self, dual, lo, hi=None: 10 * base.Bound.dual_floor(self, dual, lo, hi) + 10
    with pytest.raises(BoundContradiction, match="dual_floor\\(\\) is above the dual"):
        approxpath.approximate_path(high(X, y, lam=0.1), eps=0.01, interval=(0.5, 4.0), relative=True)


def test_a_bound_that_reads_the_gap_at_the_middle_only_stops_the_run():
    """A piece bound that is the gap at the piece's middle (its curvature term left out) agrees
    with the pair's gap there: an audit at the middle alone passed it, while the true gap was
    larger elsewhere on the piece.  The audit reads the quartiles too."""
    X, y = make_sinc(n=30, seed=0)
    base = approxpath.get_problem("kernel_ridge")

    def at_the_middle(self, primal, dual, lo, hi=None):
        return base.Bound.gap(self, primal, dual, lo if hi is None else float(np.sqrt(lo * hi)))

    middle = _ridge(at_the_middle)
    problem = middle(X, y, lam=0.1)
    with pytest.raises(BoundContradiction, match="audited_ridge's Bound certified .* but at t = .* a gap of"):
        approxpath.approximate_path(problem, eps=0.05, interval=(0.5, 4.0))


def test_a_bound_that_is_a_share_of_the_true_one_stops_the_run():
    """A piece bound of 0.8 times the true one (a plug-in of a review: wrong only outside the examples' interval, so
    the battery passed it, and verify said OK of a path 1.6 eps from optimal) is below the pair's
    gap where the gap peaks on the piece, often at an end: the audit reads the ends too."""
    X, y = make_sinc(n=30, seed=0)
    base = approxpath.get_problem("kernel_ridge")
    share = _ridge(lambda self, primal, dual, lo, hi=None: 0.8 * base.Bound.gap(self, primal, dual, lo, hi))
    with pytest.raises(BoundContradiction, match="audited_ridge's Bound certified .* but at t = .* a gap of"):
        approxpath.approximate_path(share(X, y, lam=0.1), eps=0.05, interval=(0.5, 4.0))
