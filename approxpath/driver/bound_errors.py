"""The errors a run stops with when its bounds prove nothing: a negative gap bound
(:class:`WeakDualityError`: the dual is not the primal's) and a NaN one (:class:`NonFiniteBound`),
with the cause of a NaN in the user's terms (:func:`nan_cause`, :func:`finite_delta`).

:class:`~approxpath.driver.run.Run` checks every bound it computes against them.
"""

from __future__ import annotations

from ..errors import InputError
from ..progress import shown_name

__all__ = ["NonFiniteBound", "WeakDualityError", "finite_delta", "nan_cause"]


class WeakDualityError(InputError):
    """A gap bound came out negative: the problem's dual is not a dual of its primal (a wrong
    declaration), or its restoration returns pairs its bound refuses as infeasible, so none of
    its gap bounds proves anything."""


class NonFiniteBound(InputError):
    """A gap bound or a lower bound of the optimum came out NaN: the data's scale or the range of
    the parameter overflow double precision (never "not yet <= eps": the run stops)."""


def nan_cause(problem, lo, hi=None):
    """Why bounds come out NaN, in the user's terms: the squared distances (the features' scale)
    or their products with the parameter overflow double precision: the cause and what to change (scale the
    features, or narrow the parameter's range), naming ``hi`` (None: the point ``lo``) and, for a problem with
    ``kernels``, the largest squared distance of its data."""
    hi = lo if hi is None else hi
    kernels = getattr(problem, "kernels", None)
    if kernels is not None and problem.parameter != "bandwidth":  # (a path over a weight: its size overflows)
        return (f"{shown_name(problem.parameter)} up to {hi:.3g} overflows double precision in the bounds; "
                "narrow its range")
    if kernels is not None:
        top = kernels.checks()[1]
        head = (f"the largest squared distance between samples is {top:.3g} and t up to {hi:.3g}: the kernel's "
                "derivatives t^k D^k overflow double precision; ")
        range_ = "use a range of t that keeps t * max D near 1"
        # features in [0, 1] (global-minmax) have squared distances up to d: scaling cannot lower a D already
        # at or below that (nor a precomputed D, which has no features)
        X = getattr(problem, "X", None)
        if problem.options().get("kernel") == "precomputed" or X is None or top <= X.shape[1]:
            return head + range_
        return (head + "scale the features (--preprocess global-minmax, or approxpath.data.preprocess(X, "
                f"'global-minmax')) or {range_}")
    return ("the data's scale or the parameter's range overflows double precision: rescale the data or narrow the "
            f"range (or {problem.name}'s own bound returns NaN: a plug-in's gap() or dual_floor())")


def finite_delta(delta, problem, searched):
    """``delta``, a selection's δ, or :class:`NonFiniteBound` naming the cause where it is NaN (its
    bounds came out NaN): NaN compares false with every tolerance, so the search would run to its
    budget and report a choice with no bound.  ``searched``: ``{parameter: (lo, hi)}``, the ranges
    searched ("bandwidth" or a weight's name; one for a selection over the path's parameter, two
    over a box)."""
    if delta == delta:
        return delta
    where = " x ".join(f"{shown_name(name)} in [{a:.6g}, {b:.6g}]" for name, (a, b) in searched.items())
    if len(searched) == 1:
        cause = nan_cause(problem, *next(iter(searched.values())))
    else:
        cause = "a bandwidth or weight that large overflows double precision in the bounds; narrow the box"
    raise NonFiniteBound(f"{problem.name}: the criterion's bounds came out NaN over {where}: {cause}")
