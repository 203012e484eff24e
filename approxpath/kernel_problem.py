"""Search side shared by every problem on a kernel :math:`K_t = \\exp(-tD)`.

A :class:`KernelProblem` gets from its :class:`~approxpath.bound.KernelBound` the checked data,
the options, the kernel (with the caches a search needs) and the :class:`~approxpath.sweep.Sweep`:
which parameter the path sweeps (the bandwidth, or the weight C / λ) and which is fixed.  A
problem writes only its own maps and objectives in terms of ``self.sweep.at(tau)``.

Every kernel problem takes the options ``kernel`` (the family of :math:`D`:
:mod:`approxpath.kernel_families`) and ``feature_weights`` (for ``kernel="ard"``); their domains
come once from :data:`~approxpath.bound.KERNEL_OPTIONS`.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InputError
from .kernel_families import cross_distances
from .compute.kernels import gaussian
from .problem import Problem

__all__ = ["KernelProblem"]


class KernelProblem(Problem):
    """Base of the problems on a kernel :math:`K_t = \\exp(-tD)` (see :class:`~approxpath.Problem`).

    ``problem.sweep`` tells the bandwidth and the weight at a path parameter
    (``t, C = problem.sweep.at(tau)``), ``problem.gram(tau)`` is :math:`K_t` there (cached),
    ``problem.kernels`` the provider of kernel products (:class:`~approxpath.compute.caches.KernelCache`),
    ``problem.kernel`` the family of :math:`D` (the option).
    """

    #: Validation losses that make sense for the predictions (:mod:`approxpath.selection`).
    criteria = ("mae", "mse")

    def make_bound(self, X, y, options):
        return self.Bound(X, y, cache=True, **options)

    sweep = property(lambda self: self.bound.sweep)
    kernels = property(lambda self: self.bound.kernels)
    D = property(lambda self: self.bound.kernels.D)

    def with_weight(self, value):
        """This problem with its weight (C, λ: ``bound.weight``) set to ``value``, on the same
        data and kernel provider (:meth:`~approxpath.bound.KernelBound.with_weight`); the caches
        of its search start afresh (:meth:`__getstate__` says which)."""
        other = object.__new__(type(self))
        # the state without the caches (a problem may drop them; object has __getstate__ from 3.11)
        getstate = getattr(type(self), "__getstate__", None)
        state = dict(self.__dict__ if getstate is None else getstate(self))
        if hasattr(other, "__setstate__"):
            other.__setstate__(state)
        else:
            other.__dict__.update(state)
        other.bound = self.bound.with_weight(value)
        setattr(other, other.bound.weight, other.bound.options[other.bound.weight])
        return other

    def gram(self, tau):
        """:math:`K_t` at the bandwidth of the path parameter ``tau``, shape (n, n) (cached; read only)."""
        return self.bound.gram(tau)

    def cross_kernel(self, tau, X_new):
        """:math:`k_t(x, x_j)` for the rows ``x`` of ``X_new`` (m, d) and the training points:
        shape (m, n), at the bandwidth of ``tau``.  With ``kernel="precomputed"``, ``X_new`` is
        the matrix :math:`D_{new}` (m, n) of distances from the new points to the training points.
        :class:`InputError` for a ``tau`` that is not positive, or ``X_new`` that is not finite
        numbers with the training data's columns."""
        from .validate import check_X, positive

        positive(self.parameter, tau)
        precomputed = self.kernel == "precomputed"
        if precomputed and np.ndim(X_new) == 1 and np.size(X_new) == self.X.shape[1] > 1:
            raise InputError(f"D_new is 1-D ({np.size(X_new)} entries): the distances of one new point are the "
                             "(1, n) array D_new[None, :]")
        X_new = check_X(X_new, "D_new" if precomputed else "X")
        if X_new.shape[1] != self.X.shape[1]:
            if precomputed:
                raise InputError(f"D_new has {X_new.shape[1]} column(s), one per training point is needed "
                                 f"({self.X.shape[1]}): the distances of m new points are an (m, "
                                 f"{self.X.shape[1]}) array, of one point D_new[None, :]")
            raise InputError(f"the new points have {X_new.shape[1]} columns; {self.name} was given "
                             f"{self.X.shape[1]} features")
        D_new = cross_distances(X_new, self.X, self.kernel, self.feature_weights)
        return gaussian(D_new, self.sweep.at(tau)[0])

    def weight_max(self):
        """Where the weight path's default interval ends when no weight is given (a problem
        whose zero solution becomes optimal there overrides this)."""
        raise InputError(f"{self.name}: the {self.sweep.weight_name} path needs its interval, or "
                         f"{self.sweep.weight_name}= (the top of the default interval)")

    def smallest_weight(self):
        """The weight (C, λ) at and below which the problem means nothing in double precision
        (0: no such weight; a problem whose penalty can vanish below the rounding of its loss
        says where, e.g. :func:`approxpath.numerics.weight_resolution`)."""
        return 0.0

    def largest_weight(self):
        """The weight (C, λ) above which the problem's bounds leave double precision (inf: no
        such weight)."""
        return math.inf

    def check_weights(self, lo, hi):
        """:class:`InputError` when the path's weight -- the fixed one of a bandwidth path, the
        lower end ``lo`` of a weight path -- is at or below :meth:`smallest_weight`, or the fixed
        weight or the upper end ``hi`` above :meth:`largest_weight`: refused at once, not after
        minutes of exact solves that cannot succeed."""
        floor, ceiling = self.smallest_weight(), self.largest_weight()
        name = self.sweep.weight_name
        top = self.sweep.weight if self.sweep.along_bandwidth else hi
        if top is not None and top > ceiling:
            raise InputError(f"{self.name}: {name} = {top:g} is above {ceiling:.3g}, where the certificate's bounds "
                             f"leave double precision; use {name} <= {ceiling:.3g}")
        low = self.sweep.weight if self.sweep.along_bandwidth else lo
        if low is not None and floor > 0 and low <= floor:
            where = f"{name} = {low:g}" if self.sweep.along_bandwidth else f"the interval's lower end {name} = {low:g}"
            raise InputError(f"{self.name}: {where} is below {floor:.3g}, the rounding error of the kernel computations "
                             f"that set its scale: in double precision the penalty cannot be told from 0 there; "
                             f"use {name} > {floor:.3g}")

    def default_interval(self):
        """Bandwidth: ``(2**-10, 2**10)``; weight: ``(1e-3 top, top)`` with ``top`` the given
        weight or else :meth:`weight_max`."""
        if self.sweep.along_bandwidth:
            return (2.0**-10, 2.0**10)
        top = self.sweep.weight if self.sweep.weight is not None else self.weight_max()
        return (1e-3 * top, top)
