"""The certificate side of a problem: the only problem code the verifier builds and trusts.

A :class:`Bound` holds a problem's data and options and answers, for a stored primal-dual pair
and a piece :math:`[lo, hi]` of the path parameter:

* :meth:`Bound.errors` -- why the pair is not feasible for *every* :math:`\\tau` of the piece
  (exact checks; an empty list when it is);
* :meth:`Bound.gap` -- an upper bound, rounding included, of the duality gap at every
  :math:`\\tau` of the piece (``lo == hi``: at a point);
* :meth:`Bound.dual_floor` -- a lower bound of the dual objective over the piece, hence of the
  optimal value there (the denominator of a relative ε);

and maps a pair to and from a certificate's per-piece arrays (:mod:`approxpath.moving_layout`: a pair
that moves with the parameter across its piece is a :class:`~approxpath.moving.Moving` point).  Numpy only: no solver, no search
code, no cache (a search may hand a kernel provider with caches to a kernel problem's bound).

:class:`KernelBound` is the base of every problem on a kernel :math:`K_t = \\exp(-tD)`: the data,
the kernel provider and the :class:`Sweep` (which parameter the path sweeps, which is fixed).
"""

from __future__ import annotations

import abc
import copy
import dataclasses
from contextlib import contextmanager
from typing import ClassVar

import numpy as np

from . import kernel_families, moving, moving_layout
from .bound_options import REQUIRED, Option
from .errors import InputError
from .numerics import kernel_entry_error
from .sweep import Sweep
from .validate import check_X_y

__all__ = ["Option", "Bound", "KernelBound", "KERNEL_OPTIONS", "REQUIRED"]


class Bound(abc.ABC):
    """Base of every problem's certificate side.

    Subclasses set the class attributes and implement :meth:`errors`, :meth:`gap` and
    :meth:`dual_floor`; the stored pair of a piece (fixed or moving points) is laid out in a
    certificate by :meth:`pieces_to_arrays` and :meth:`piece_from_arrays`, the one layout of
    :mod:`approxpath.moving_layout`.

    Attributes
    ----------
    name : str
        The registry key of the problem.
    Primal, Dual : type
        Frozen dataclasses of the pair (shared with the search side).
    parameters : tuple of str
        Path parameters; the first is the default.  Every one is a positive scale.
    OPTIONS : dict of str to Option
        Every constructor option of the problem but ``parameter`` and its domain
        (:meth:`check_options` adds ``parameter``: one of :attr:`parameters`, the first by
        default).
    interval_bound : bool
        :meth:`gap` holds for every :math:`\\tau` of a piece; otherwise only at points, and
        pieces are "sampled".
    moving_degrees : dict of str to int, optional
        Present on a bound that bounds *moving* pairs (:class:`~approxpath.moving.Moving`: points
        whose weights are polynomials in the path parameter): per path parameter, the largest
        degree of the weights it bounds.  The driver's interpolating strategy then hands the
        problem pairs that move (:func:`~approxpath.moving.interpolate`), and :meth:`check`
        refuses moving points elsewhere.
    weight_convex : bool, optional
        Present (True) on a kernel problem's bound whose pairs certify *cells* of the bandwidth
        and the weight (:mod:`approxpath.cells`): for a pair held fixed in the weight
        :math:`w` (C, λ), the gap is convex in :math:`w` at every bandwidth, the dual objective
        concave in :math:`w`, and the feasible sets only grow with :math:`w` (a pair feasible at
        the cell's smallest weight is feasible on the whole cell).  The bandwidth bounds at the
        cell's two weights then bound the cell.
    weight_increasing : bool, optional
        With ``weight_convex``: the gap's slope in the weight is nonnegative (the SVM's
        :math:`\\mathbf 1^\\top\\xi`, the regressions' :math:`\\lVert\\beta\\rVert_1`), so the bound at the
        cell's largest weight alone bounds the cell.
    """

    name: ClassVar[str]
    Primal: ClassVar[type]
    Dual: ClassVar[type]
    parameters: ClassVar[tuple] = ("t",)
    OPTIONS: ClassVar[dict] = {}
    interval_bound: ClassVar[bool] = True

    def __init__(self, X, y, **options):
        self.X, self.y = check_X_y(X, y)
        self.options = self.check_options(options)
        self.parameter = self.options.get("parameter", self.parameters[0])

    @classmethod
    def check_options(cls, options):
        """All options (:attr:`OPTIONS`, defaults filled in, ``parameter`` included) with their
        domains checked; :class:`InputError` for an unknown name or a value out of its domain."""
        from .errors import did_you_mean

        specs = dict(cls.OPTIONS, parameter=Option("choice", cls.parameters, cls.parameters[0]))
        for key in options:
            if key not in specs:
                raise InputError(f"{cls.name}: unknown option {key!r}{did_you_mean(key, specs)}"
                                 f" (options: {', '.join(specs)})")
        out = {}
        for key, spec in specs.items():
            if key not in options and spec.default is REQUIRED:
                raise InputError(f"{cls.name}: option {key} is required")
            out[key] = spec.check(key, options.get(key, spec.default))
        return out

    def check_interval(self, lo, hi):
        """:class:`InputError` unless ``lo < hi`` are finite and inside the parameter's domain
        (every built-in parameter is positive)."""
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise InputError(f"interval must be finite; got ({lo!r}, {hi!r})")
        if lo <= 0:
            raise InputError(f"interval lower end must be > 0 for the parameter {self.parameter!r}; got {lo!r}")
        if not lo < hi:
            raise InputError(f"interval must satisfy lo < hi; got ({lo!r}, {hi!r}) — swap or widen it")

    @property
    def n(self):
        """Number of samples."""
        return self.X.shape[0]

    @abc.abstractmethod
    def errors(self, primal, dual, lo, hi):
        """Why ``(primal, dual)`` is not feasible for every :math:`\\tau \\in [lo, hi]`: a list of
        messages (empty when it is), from exact checks (shapes, finiteness, equalities with
        ``math.fsum``, inequalities with rigorous bounds over the whole piece)."""

    @abc.abstractmethod
    def gap(self, primal, dual, lo, hi=None):
        """An upper bound, rounding included, of the duality gap of the pair at every
        :math:`\\tau \\in [lo, hi]` (``hi`` omitted: at the point ``lo``), for a pair that
        :meth:`errors` accepts."""

    def rounding(self, primal, dual, t):
        """The part of :meth:`gap` at the point ``t`` that allows for rounding, which no solver's
        pair can reduce (0: not told apart).  An exact solve is judged by the gap less this part
        (:func:`approxpath.solvers.solve_exact`): at n = 100,000 the SVM's allowance alone is
        ~1.8e-2, above every share of eps = 0.125 a solve was asked to meet."""
        return 0.0

    @abc.abstractmethod
    def dual_floor(self, dual, lo, hi=None):
        """A lower bound, rounding included, of the dual objective of ``dual`` over
        ``[lo, hi]``, hence of the optimal value there."""

    # -------------------------------------------------------------- the certificate layout
    def pieces_to_arrays(self, pairs):
        """The stored fields of pieces ``pairs`` (a list of ``(primal, dual, lo, hi)``) in the one
        layout of :mod:`approxpath.moving_layout` (:func:`~approxpath.moving_layout.pack`): per side, every
        field the points set, weights, count, degree and span."""
        out = {}
        for side, k in (("primal", 0), ("dual", 1)):
            stored = [self.stored_point(side, pair[k], pair[2], pair[3]) for pair in pairs]
            point_type = self.Primal if k == 0 else self.Dual
            fields = moving_layout.stored_fields(point_type, stored[0] if stored else None)
            out.update(moving_layout.pack(side, stored, fields, [(pair[2], pair[3]) for pair in pairs]))
        return out

    def stored_point(self, side, point, lo, hi):
        """``point`` (of ``side``, on the piece ``[lo, hi]``) as :meth:`pieces_to_arrays` stores
        it: itself (a bound whose pieces' points may differ in shape makes them alike here)."""
        return point

    def piece_from_arrays(self, arrays, lo, hi):
        """Inverse of :meth:`pieces_to_arrays` for one piece (``arrays``: its rows): ``(primal,
        dual)``, each a point or a :class:`~approxpath.moving.Moving` one.  ``KeyError`` naming a
        missing array, ``ValueError`` for a count, degree or padding outside the layout."""
        pair = []
        for side, point_type in (("primal", self.Primal), ("dual", self.Dual)):
            fields = [f for f in moving_layout.stored_fields(point_type) if f"{side}_{f}" in arrays]
            required = [f.name for f in dataclasses.fields(point_type)
                        if f.compare and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
            for name in required:
                if name not in fields:
                    raise KeyError(f"{side}_{name}")
            pair.append(moving_layout.unpack(side, arrays, point_type, fields, lo, hi))
        return tuple(pair)

    def check(self, primal, dual, lo, hi):
        """Why the stored pair does not hold on ``[lo, hi]``: the domain of a moving point's
        stored fields (:meth:`~approxpath.moving.Moving.errors`), moving points only where the
        bound bounds them (:attr:`moving_degrees`), then :meth:`errors` (the problem's
        feasibility over the piece).  A list of messages, empty when the pair holds."""
        errors = []
        for side, point in (("primal", primal), ("dual", dual)):
            if not moving.is_moving(point):
                continue
            most = (getattr(self, "moving_degrees", None) or {}).get(self.parameter)
            if most is None:
                return [f"{self.name} bounds no moving {side} over {self.parameter}"]
            errors += [f"the moving {side}: {e}" for e in point.errors(lo, hi)]
            if point.degree > most:
                errors.append(f"the moving {side}'s weights have degree {point.degree}; {self.name} bounds "
                              f"degree <= {most} over {self.parameter}")
        return errors or list(self.errors(primal, dual, lo, hi))

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._transient}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for key in self._transient:
            self.__dict__.setdefault(key, None)

    #: Attributes dropped when a bound is pickled (derived from the data, rebuilt on use).
    _transient: ClassVar[tuple] = ()

    def drop_caches(self):
        """Empty every cache of :attr:`_transient` (each is rebuilt on use): what a result kept after its
        search need not hold (a fold's stored kernels: hundreds of MB at n = 1000)."""
        for key in self._transient:
            self.__dict__[key] = None


#: The options every kernel problem has (added to each :class:`KernelBound` subclass's OPTIONS):
#: the family of :math:`D` (:mod:`approxpath.kernel_families`) and the ARD weights.
KERNEL_OPTIONS = dict(kernel=Option("choice", kernel_families.FAMILIES, kernel_families.FAMILIES[0]),
                      feature_weights=Option("weights", default=None))


class KernelBound(Bound):
    """Base of the certificate side of problems on a kernel :math:`K_t = \\exp(-tD)`.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data; with ``kernel="precomputed"`` the matrix :math:`D` (n, n) itself.
    y : ndarray of shape (n,)
    cache : bool, default False
        Kernels and kernel products come from a :class:`~approxpath.compute.caches.KernelCache` (a
        search) instead of being computed from scratch (:class:`~approxpath.compute.kernels.Kernels`,
        the verifier): the same values, bit for bit.
    **options
        As :attr:`Bound.OPTIONS`; ``bandwidth`` and the weight (:attr:`weight`) per
        :class:`Sweep`; ``kernel`` (the family of :math:`D`, :mod:`approxpath.kernel_families`)
        and ``feature_weights`` (the weights of ``kernel="ard"``), which every kernel problem has.

    Attributes
    ----------
    kernel_psd : bool
        The problem is convex only for :math:`K_t \\succeq 0`: a precomputed :math:`D` must be
        conditionally negative definite (checked once, here).  True unless a subclass says
        otherwise (the regression problems are convex for any kernel).
    """

    #: Name of the weight option (``"c"``, ``"lam"``).
    weight: ClassVar[str]
    kernel_psd: ClassVar[bool] = True
    #: The bound needs kernel products only (never a whole kernel): it can run on
    #: :class:`~approxpath.compute.blocked.BlockedKernels` when the n x n arrays do not fit.
    blocked_ok: ClassVar[bool] = False
    _transient = ("_kernels", "_new_points")  # rebuilt on use (new_points: a selection's held-out distances)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.OPTIONS = {**cls.OPTIONS, **KERNEL_OPTIONS}

    def __init__(self, X, y, *, cache=False, **options):
        super().__init__(X, y, **options)
        self.sweep = Sweep(self.parameter, self.weight, self.options.get("bandwidth"), self.options[self.weight])
        self.cache = cache
        self._kernels = None
        family, weights = self.options["kernel"], self.options["feature_weights"]
        if (weights is not None) != (family == "ard"):
            raise InputError("feature_weights= goes with kernel='ard' (and kernel='ard' needs it); "
                             f"got kernel={family!r}, feature_weights={weights!r}")
        if weights is not None:
            kernel_families.check_weights(weights, self.X.shape[1])
        if family == "precomputed":
            kernel_families.check_precomputed(self.X, "X (the precomputed D)")
            if self.kernel_psd:
                kernel_families.check_cnd(self.X, self.name)

    def with_weight(self, value):
        """This bound with the weight option (:attr:`weight`: C or λ) set to ``value``: the same
        data, the same kernel provider and the same held-out distances (kernels, kernel products
        and distances do not depend on the weight: computed once for every weight; a selection
        over the box asks for dozens of weights per fold); every other cache (:attr:`_transient`)
        starts afresh.  :class:`InputError` for a weight outside its domain."""
        other = copy.copy(self)
        other.options = self.check_options({**self.options, self.weight: value})
        other.sweep = Sweep(self.parameter, self.weight, other.options.get("bandwidth"), other.options[self.weight])
        other._kernels = self.kernels
        other._fresh_caches()
        return other

    def _fresh_caches(self):
        """Every cache of :attr:`_transient` but the kernel provider and the held-out distances
        emptied (each is rebuilt on use): what was computed from another weight's or another
        provider's products is not used again."""
        for key in self._transient:
            if key not in ("_kernels", "_new_points"):
                self.__dict__[key] = None

    @property
    def family(self):
        """The kernel family (``gaussian``, ``laplacian``, ``ard`` or ``precomputed``)."""
        return self.options["kernel"]

    def loewner_factor(self, lo, hi):
        """A number c with :math:`K_t \\preceq c\\,K_{hi}` for every t of the bandwidths ``[lo, hi]``
        (:func:`~approxpath.kernel_families.loewner_factor`; ``inf`` where none is known)."""
        return kernel_families.loewner_factor(self.family, self.X, self.options["feature_weights"], hi / lo)

    def distances(self):
        """:math:`D` (n, n) of the kernel family on the data (computed; a precomputed one is ``X``)."""
        return kernel_families.distances(self.X, self.family, self.options["feature_weights"])

    @property
    def kernels(self):
        """The kernel provider, built on first use where :func:`approxpath.compute.provider`
        decides (dense, from stored distances, or blocked: the bound never needs to know)."""
        if self._kernels is None:
            from .compute import provider

            self._kernels = provider(self.X, self.family, self.options["feature_weights"], self.distances,
                                     search=self.cache, blocked_ok=self.blocked_ok)
        return self._kernels

    @contextmanager
    def kernels_from(self, provider):
        """Kernel products from ``provider`` inside a ``with`` block (the same numbers computed
        elsewhere: :class:`approxpath.compute.distributed.SplitKernels`); the previous provider after it."""
        previous, self._kernels = self._kernels, provider
        self._fresh_caches()  # (their values are the provider's: a device's are rounded otherwise)
        try:
            yield provider
        finally:
            self._kernels = previous
            self._fresh_caches()

    @property
    def blocked(self):
        """Whether whole kernels are never formed (:class:`~approxpath.compute.blocked.BlockedKernels`)."""
        return self.kernels.mode != "dense"

    @property
    def entry_terms(self):
        """Rounded terms per distance entry, the argument of
        :func:`~approxpath.numerics.kernel_entry_error`: a computed entry of :math:`D` is within
        ``(entry_terms + 2) u`` relative of exact (:func:`~approxpath.kernel_families.entry_terms`;
        the number of features for squared Euclidean distances)."""
        return kernel_families.entry_terms(self.family, self.X.shape[1])

    @property
    def entry_error(self):
        """Absolute error bound of one computed kernel entry."""
        return kernel_entry_error(self.entry_terms)

    def gram(self, tau):
        """:math:`K_t`, shape (n, n), at the bandwidth of the path parameter ``tau``."""
        return self.kernels.get(self.sweep.at(tau)[0])

    def kernel_meta(self):
        """What a certificate records about the kernel: ``kernel`` (the family's definition) and
        ``distances_sha256`` (of :math:`D` as computed here; :func:`~approxpath.certificate.verify.verify`
        compares it with its own)."""
        return dict(kernel=kernel_families.DESCRIPTIONS[self.family],
                    distances_sha256=self.kernels.summary()[2])
