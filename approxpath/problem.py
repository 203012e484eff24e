"""The problem contract: what a parameterized convex problem declares to be path-followed.

A problem is one class (one file in ``problems/``) that declares, at a path parameter
:math:`t`:

* its primal and its dual in CVXPY (:meth:`Problem.cvxpy_primal`, :meth:`Problem.cvxpy_dual`),
  whose variable names are the field names of the problem's ``Primal`` and ``Dual``
  dataclasses, so any numpy point can be plugged into the declaration and checked;
* an exact solve returning an optimal primal-dual pair (:meth:`Problem.solve`);
* restoration maps that carry a pair to a pair feasible at :math:`\\tau` (or on a whole
  piece :math:`[lo, hi]`), declared in CVXPY as "re-optimize the free part with the carried
  part fixed" (:meth:`Problem.cvxpy_restore_primal`, :meth:`Problem.cvxpy_restore_dual`) with
  fast numpy overrides (:meth:`Problem.restore_primal`, :meth:`Problem.restore_dual`);
* numpy objectives, feasibility measures and a rigorous gap bound
  (:meth:`Problem.gap_bound`), valid for every :math:`\\tau` in a piece when the class sets
  ``has_interval_bound = True``.

The conformance suite (``tests/test_conformance.py``) runs on every registered class.
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
import inspect
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .kernels import UNIT_ROUNDOFF, KernelCache, sq_distances

__all__ = ["Problem", "Declaration", "InputError", "did_you_mean", "fp_margin", "to_scale", "from_scale", "scale_mid"]


#: An exact solve is accepted when its certified gap is at most this times (1 + |dual objective|);
#: interior-point solves with tolerances 1e-10 reach ~1e-9, libSVM with tol 1e-7 ~1e-8.
EXACT_GAP = 1e-7


class InputError(ValueError):
    """Bad user input: the message names the argument and the fix."""


def did_you_mean(value, choices, n=1):
    """``"; did you mean 'x'?"`` naming the closest of ``choices`` to ``value`` (up to ``n`` of
    them), or ``""`` when none is close: the tail of every unknown-name error."""
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=n)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


@dataclass(frozen=True)
class Declaration:
    """A CVXPY problem and its variables by name (the names of a ``Primal``/``Dual`` field)."""

    problem: Any
    variables: dict


def fp_margin(n_ops, magnitude):
    """Rigorous allowance for floating-point rounding.

    A sum of ``m`` terms computed in floating point is within :math:`\\gamma_m \\sum |x_i|`
    of the exact sum, :math:`\\gamma_m = m u/(1 - m u) \\le 1.01\\, m u` for :math:`mu <
    0.01`.  ``n_ops`` is the longest chain of dependent operations in a bound and
    ``magnitude`` dominates the absolute values of everything summed along it.
    """
    return 1.01 * (n_ops + 16) * UNIT_ROUNDOFF * float(magnitude)


def _is_real(value):
    """True for a real number: Python or numpy int or float, or a 0-d numeric array (not a bool)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _is_count(value):
    """True for a positive integer, Python or numpy (bool is an int subclass: ``workers=True``
    is a mistake, not 1)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1


def _numeric_X(X):
    """``X`` as a float array, or :class:`InputError` when it holds text, complex numbers or
    other objects (None becomes NaN, caught by the finite check)."""
    try:
        X = np.asarray(X)
    except ValueError as exc:  # ragged rows
        raise InputError(f"X must be numeric: an (n_samples, n_features) array of real numbers ({exc})") from None
    if X.dtype.kind == "c":
        raise InputError(f"X must be numeric: real numbers, got complex values (dtype {X.dtype}); "
                         "pass X.real if the imaginary parts are 0")
    try:
        return np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"X must be numeric: an (n_samples, n_features) array of real numbers ({exc}); "
                         "convert or drop the non-numeric columns first") from None


def _checked_y(given, y):
    """The 1-D array ``y`` (``np.asarray(given)``) checked entry by entry where numpy's dtype
    does not tell: no None, no complex numbers, and not numbers and text mixed (a list such as
    ``['a', 1]`` becomes text in numpy).  Object arrays of numbers come back as float."""
    if y.dtype.kind == "c":
        raise InputError(f"y must be real numbers (or class labels); got complex values (dtype {y.dtype}): "
                         "pass y.real if the imaginary parts are 0")
    if y.dtype.kind not in "OUS" or (y.dtype.kind in "US" and isinstance(given, np.ndarray)):
        return y
    entries = np.asarray(given, dtype=object).reshape(-1)
    kinds = {}
    for i, v in enumerate(entries):
        if v is None:
            raise InputError(f"y contains None (first at index {i}): drop or impute those samples")
        if _is_real(v) or isinstance(v, (bool, np.bool_)):
            kind = "number"
        elif isinstance(v, (complex, np.complexfloating)):
            raise InputError(f"y must be real numbers (or class labels); got the complex {v!r} at index {i}")
        elif isinstance(v, (str, bytes, np.str_, np.bytes_)):
            kind = "text"
        else:
            raise InputError(f"y must be real numbers or class labels; got {type(v).__name__} {v!r} at index {i}")
        kinds.setdefault(kind, set()).add(type(v).__name__)
    if len(kinds) > 1:
        names = sorted(set().union(*kinds.values()))
        raise InputError(f"y mixes value types ({', '.join(names)}): use one kind for all targets or labels, "
                         "all numbers or all strings")
    return np.asarray(entries, dtype=float) if "number" in kinds else y


def to_scale(t, scale):
    """Map a parameter value to the coordinate the driver searches in (``log`` or ``linear``)."""
    return np.log(t) if scale == "log" else np.asarray(t, dtype=float)


def from_scale(s, scale):
    """Inverse of :func:`to_scale`."""
    return np.exp(s) if scale == "log" else np.asarray(s, dtype=float)


def scale_mid(lo, hi, scale):
    """The middle of ``[lo, hi]`` in the given scale (geometric mean for ``log``), inside [lo, hi]."""
    m = float(from_scale(0.5 * (to_scale(lo, scale) + to_scale(hi, scale)), scale))
    return min(max(m, lo), hi)


class Problem(abc.ABC):
    """Base class of every path-followed problem.

    Subclasses set the class attributes below, implement the abstract methods and register
    with :func:`approxpath.register`.  Instances hold the data and the fixed options; the path
    parameter is chosen by ``parameter`` (one of :attr:`parameters`).

    Attributes
    ----------
    name : str
        Registry key, equal to the module name (``kernel_svm`` in ``problems/kernel_svm.py``).
    parameters : tuple of str
        Path parameters the problem supports; the first is the default.
    has_interval_bound : bool
        :meth:`gap_bound` is valid for every :math:`\\tau` in ``[lo, hi]``; otherwise only at
        points, and pieces are labelled "sampled".
    dual_set_depends_on : frozenset of str
        Parameters whose value moves the dual feasible set (the dual must be restored).
    weighing_depth : int
        The ``interpolate`` strategy chooses the weight of a combination of two exact solves
        by :meth:`interpolation_gaps` on a grid of weights at the middles of the first
        ``weighing_depth`` bisections of a segment (between them the weight is interpolated);
        0 takes the position in the segment.  Lower it where a restoration is costly.
    criteria : tuple of str
        Validation losses that make sense for the problem's predictions
        (:mod:`approxpath.selection`); the first is the default.
    Primal, Dual : type
        Frozen dataclasses; field names equal the CVXPY variable names of the declarations.
    """

    name: ClassVar[str]
    parameters: ClassVar[tuple] = ("bandwidth",)
    has_interval_bound: ClassVar[bool] = False
    dual_set_depends_on: ClassVar[frozenset] = frozenset()
    weighing_depth: ClassVar[int] = 4
    criteria: ClassVar[tuple] = ("mae", "mse")
    Primal: ClassVar[type]
    Dual: ClassVar[type]
    #: Exact solvers tried in turn by :meth:`solve` (names understood by :meth:`_solve_with`).
    exact_solvers: ClassVar[tuple] = ("clarabel", "scs")

    # ------------------------------------------------------------------ data
    @classmethod
    def _check_option_names(cls, names):
        """Raise :class:`InputError` for a keyword the constructor does not take (with the
        closest name); a constructor with ``**kwargs`` takes any."""
        params = inspect.signature(cls.__init__).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return
        accepted = [k for k in params if k not in ("self", "X", "y")]
        for key in names:
            if key not in accepted:
                raise InputError(f"{cls.name}: unknown option {key!r}{did_you_mean(key, accepted)}"
                                 f" (options: {', '.join(accepted)})")

    def __new__(cls, *args, **kwargs):
        # unknown keyword options get a clear error with the closest name, for every problem
        cls._check_option_names(k for k in kwargs if k not in ("X", "y"))  # the data may come as keywords
        params = inspect.signature(cls.__init__).parameters
        # an option whose default is a number takes a number (not '0.1', None or [1]); so does an
        # option named like a path parameter (its fixed value on another path), or None
        for key, value in kwargs.items():
            default = params[key].default if key in params else None
            if not _is_real(value) and (_is_real(default) or (key in cls.parameters and value is not None)):
                example = f"e.g. {key}={default!r}" if _is_real(default) else f"e.g. {key}=0.1"
                raise InputError(f"{cls.name}: option {key} must be a number; got {value!r} "
                                 f"({type(value).__name__}): pass {example}")
        return super().__new__(cls)

    def __init__(self, X, y, *, parameter=None):
        X = _numeric_X(X)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise InputError(f"X must be a 2-D array (n_samples, n_features); got shape {X.shape}")
        y_given, y = y, np.asarray(y)
        if y.ndim != 1:
            raise InputError(f"y must be a 1-D array of length n_samples; got shape {y.shape}")
        y = _checked_y(y_given, y)
        if X.shape[0] != y.shape[0]:
            raise InputError(
                f"X has {X.shape[0]} rows but y has {y.shape[0]} entries: pass one target per row of X"
            )
        if X.shape[0] < 2:
            raise InputError(f"need at least 2 samples, got {X.shape[0]}")
        if not np.all(np.isfinite(X)):
            bad = np.argwhere(~np.isfinite(X))[0]
            raise InputError(f"X contains NaN or inf (first at row {bad[0]}, column {bad[1]}): clean or impute the data first")
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            bad = int(np.flatnonzero(~np.isfinite(y))[0])
            raise InputError(f"y contains NaN or inf (first at index {bad}): drop or impute those samples")
        if parameter is None:
            parameter = self.parameters[0]
        if parameter not in self.parameters:
            raise InputError(
                f"{self.name}: unknown parameter {parameter!r}; choose one of {', '.join(self.parameters)}"
            )
        self.X = X
        self.y = y
        self.parameter = parameter
        self._init_transient()

    def _init_transient(self):
        """(Re)create what is derived from the data and not worth pickling (distances, kernel
        cache); subclasses with caches of their own extend this and :attr:`_transient`."""
        self._D = None
        self._kernels = None

    #: Attributes dropped when an instance is pickled (e.g. sent to a worker process).
    _transient = ("_D", "_kernels")

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._transient}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_transient()

    @property
    def n(self):
        """Number of samples."""
        return self.X.shape[0]

    @property
    def D(self):
        """Squared distances, shape (n, n), computed once."""
        if self._D is None:
            self._D = sq_distances(self.X)
        return self._D

    @property
    def kernels(self):
        """The :class:`~approxpath.kernels.KernelCache` of the data: Gaussian kernels (and the
        factors of their derivatives) by bandwidth, since a path evaluates the same piece ends
        many times."""
        if self._kernels is None:
            self._kernels = KernelCache(self.D)
        return self._kernels

    @property
    def scale(self):
        """Coordinate of the parameter the driver searches in: every built-in parameter is a
        positive scale (bandwidth, weight), so ``log``."""
        return "log"

    @property
    def dual_set_depends_on_t(self):
        """Whether the dual feasible set moves with the current path parameter."""
        return self.parameter in self.dual_set_depends_on

    @abc.abstractmethod
    def options(self):
        """Keyword arguments that rebuild this instance: ``type(p)(X, y, **p.options())``."""

    def default_interval(self):
        """A sensible ``(lo, hi)`` for the path parameter."""
        return (2.0**-10, 2.0**10)

    @classmethod
    def examples(cls):
        """Small instances for the conformance suite: a list of ``(problem, (lo, hi), eps)``,
        covering every path parameter and option that changes the maps.  Each must solve in
        well under a second."""
        raise NotImplementedError(f"{cls.__name__} defines no examples() for the conformance suite")

    # ------------------------------------------------------------------ CVXPY declarations
    @abc.abstractmethod
    def cvxpy_primal(self, t):
        """The primal at ``t`` as a :class:`Declaration` (variables named like ``Primal``'s fields)."""

    @abc.abstractmethod
    def cvxpy_dual(self, t):
        """The dual at ``t`` as a :class:`Declaration` (variables named like ``Dual``'s fields)."""

    @abc.abstractmethod
    def cvxpy_restore_primal(self, primal, dual, tau):
        """Restoration declared in CVXPY: re-optimize the free part of the primal at ``tau``
        with the carried part fixed; returns a ``Primal``."""

    @abc.abstractmethod
    def cvxpy_restore_dual(self, dual, tau):
        """Restoration declared in CVXPY: the best dual at ``tau`` reachable from ``dual`` by
        the problem's restoration (projection, scaling); returns a ``Dual``."""

    def primal_values(self, primal):
        """Values of the CVXPY primal variables at ``primal`` (default: its fields)."""
        return {f.name: getattr(primal, f.name) for f in dataclasses.fields(primal)}

    def dual_values(self, dual):
        """Values of the CVXPY dual variables at ``dual`` (default: its fields)."""
        return {f.name: getattr(dual, f.name) for f in dataclasses.fields(dual)}

    # ------------------------------------------------------------------ exact solve
    def solver_names(self, solver=None):
        """``solver`` (one name or several; default :attr:`exact_solvers`) as a list of names,
        each checked against :attr:`exact_solvers` (:class:`InputError` otherwise)."""
        names = [solver] if isinstance(solver, str) else list(solver or self.exact_solvers)
        for name in names:
            if name not in self.exact_solvers:
                raise InputError(f"unknown exact solver {name!r} for {self.name}; "
                                 f"choose from {', '.join(self.exact_solvers)}")
        return names

    def solve(self, t, solver=None, time_limit=None):
        """An optimal primal-dual pair at ``t``, made exactly feasible.

        Tries the solvers of ``solver`` (default: :attr:`exact_solvers` that are installed) in
        turn and returns the first pair whose certified gap (computed here, in numpy) is at
        most ``EXACT_GAP`` relative to the dual objective.  If none reaches it, a second round
        tries them again with tighter settings (:class:`approxpath.solvers.SolveSettings`);
        then the pair with the smallest gap is returned.  A solver's reported status or
        objective is never used.

        Parameters
        ----------
        t : float
        solver : str or sequence of str, optional
            Names from :attr:`exact_solvers`.
        time_limit : float, optional
            Seconds per solver call; a solver out of time counts as failed (not retried in
            the tighter round).

        Raises
        ------
        approxpath.SolverError
            When no solver produced a pair at all.
        """
        from .solvers import SolveSettings, SolverError, settings

        said, best = [], None
        names = self.solver_names(solver)
        for tight in (False, True):
            retry = []
            for name in names:
                label = f"{name} (tight)" if tight else name
                t0 = time.perf_counter()
                try:
                    with settings(SolveSettings(time_limit, tight)):
                        pair = self.restore(*self._solve_with(name, t), t)
                    g = self.gap_bound(*pair, t)
                except ImportError as exc:
                    said.append(f"{name}: not installed ({exc})")
                    continue
                except Exception as exc:  # a failing solver is one more reason to try the next
                    said.append(f"{label}: {type(exc).__name__}: {exc}")
                    if time_limit is None or time.perf_counter() - t0 < time_limit:
                        retry.append(name)  # out of time: a tighter round would be slower still
                    continue
                if not np.isfinite(g):
                    said.append(f"{label}: non-finite gap")
                    retry.append(name)
                    continue
                if g <= EXACT_GAP * (1.0 + abs(self.dual_objective(pair[1], t))):
                    return pair
                said.append(f"{label}: gap {g:.3g}")
                retry.append(name)
                if best is None or g < best[0]:
                    best = (g, pair)
            names = retry
        if best is not None:
            return best[1]
        raise SolverError(f"{self.name} at t = {t:.6g}: no solver produced a pair (" + "; ".join(said) + ")")

    def _solve_with(self, name, t):
        """A candidate ``(primal, dual)`` at ``t`` from solver ``name`` (one of
        :attr:`exact_solvers`); it need not be exactly feasible (``solve`` restores it)."""
        raise NotImplementedError(f"{self.name} has no exact solver {name!r}")

    # ------------------------------------------------------------------ numpy maps
    def restore_primal(self, primal, dual, lo, hi=None):
        """A primal point feasible for every :math:`\\tau \\in [lo, hi]` (``hi`` defaults to ``lo``).

        Default: the CVXPY declaration, at points only.
        """
        if hi is not None and hi != lo:
            raise NotImplementedError(f"{self.name}: restoration on an interval needs a numpy override")
        return self.cvxpy_restore_primal(primal, dual, lo)

    def restore_dual(self, dual, lo, hi=None):
        """A dual point feasible for every :math:`\\tau \\in [lo, hi]`. Default: the CVXPY declaration."""
        if hi is not None and hi != lo:
            raise NotImplementedError(f"{self.name}: restoration on an interval needs a numpy override")
        return self.cvxpy_restore_dual(dual, lo)

    def restore(self, primal, dual, lo, hi=None):
        """Both restorations: a pair feasible on ``[lo, hi]``."""
        dual = self.restore_dual(dual, lo, hi)
        return self.restore_primal(primal, dual, lo, hi), dual

    def dual_from_primal(self, primal, tau):
        """A dual candidate built from a primal point alone (e.g. ``alpha = y * w`` for the SVM,
        the residual for regression), for certifying solutions computed elsewhere (the
        cross-check); pass it through :meth:`restore_dual` before use."""
        raise NotImplementedError(f"{self.name} cannot build a dual from a primal point")

    def predict(self, primal, tau, X_new):
        """Predictions of a primal point at ``tau`` on the rows of ``X_new`` (m, d): shape (m,)
        (regression values; for a classifier the decision values, whose sign is the class).
        Needed for model selection (:mod:`approxpath.selection`)."""
        raise NotImplementedError(f"{self.name} defines no predict(primal, tau, X_new)")

    def primal_at(self, primal, tau):
        """Fill the fields of a carried primal that are functions of :math:`\\tau` (e.g. slacks)."""
        return primal

    @abc.abstractmethod
    def primal_objective(self, primal, tau):
        """Primal objective at ``tau`` of a (completed) primal point, in numpy."""

    @abc.abstractmethod
    def dual_objective(self, dual, tau):
        """Dual objective at ``tau``, in numpy."""

    @abc.abstractmethod
    def primal_violation(self, primal, tau):
        """Largest constraint violation of a (completed) primal point at ``tau`` (0 if feasible)."""

    @abc.abstractmethod
    def dual_violation(self, dual, tau):
        """Largest constraint violation of a dual point at ``tau`` (0 if feasible)."""

    def gap(self, primal, dual, tau):
        """Duality gap of a pair at ``tau`` as computed in floating point (no rounding allowance)."""
        return self.primal_objective(self.primal_at(primal, tau), tau) - self.dual_objective(dual, tau)

    def gap_bound(self, primal, dual, lo, hi=None):
        """An upper bound on the duality gap of the pair, rounding included.

        Valid for every :math:`\\tau \\in [lo, hi]` when ``has_interval_bound``; the default
        handles points only (``hi`` omitted or equal to ``lo``).
        """
        if hi is not None and hi != lo:
            raise NotImplementedError(f"{self.name} has no interval bound")
        p = self.primal_objective(self.primal_at(primal, lo), lo)
        d = self.dual_objective(dual, lo)
        return (p - d) + fp_margin(4 * self.n * self.n, abs(p) + abs(d) + 1.0)

    def dual_lower_bound(self, dual, lo, hi=None):
        """A lower bound on the dual objective of ``dual`` over ``[lo, hi]``, hence on the
        optimal value there (the denominator of a relative eps).  Default: points only."""
        if hi is not None and hi != lo:
            raise NotImplementedError(f"{self.name} has no interval bound")
        d = self.dual_objective(dual, lo)
        return d - fp_margin(4 * self.n * self.n, abs(d) + 1.0)

    def certificate_errors(self, primal, dual, lo, hi):
        """Exact checks of a certificate piece's stored pair (feasibility that must hold for
        every :math:`\\tau` in the piece, independent of the gap). Returns a list of messages."""
        errors = []
        for tau in sorted({lo, hi}):
            pv = self.primal_violation(self.primal_at(primal, tau), tau)
            dv = self.dual_violation(dual, tau)
            if pv > 0:
                errors.append(f"primal infeasible at {tau:.6g} by {pv:.3g}")
            if dv > 0:
                errors.append(f"dual infeasible at {tau:.6g} by {dv:.3g}")
        return errors

    def segment_gap_bound(self, primal_a, primal_b, lo, hi):
        """An upper bound, rounding included, on the duality gap of the primal that is linear in
        the parameter from ``primal_a`` at ``lo`` to ``primal_b`` at ``hi`` (a claimed linear
        path segment, with a dual the problem builds from the two ends), valid at every
        :math:`\\tau \\in [lo, hi]`.  ``None`` (the default) when the problem has no such bound:
        the cross-check then samples the segment and says so."""
        return None

    def interpolate(self, a, b, theta):
        """Convex combination ``(1 - theta) a + theta b`` of two carried pairs (restore it after)."""
        def mix(u, v):
            return type(u)(**{
                f.name: (1.0 - theta) * np.asarray(getattr(u, f.name)) + theta * np.asarray(getattr(v, f.name))
                for f in dataclasses.fields(u)
                if getattr(u, f.name) is not None
            })
        return mix(a[0], b[0]), mix(a[1], b[1])

    def interpolation_gaps(self, a, b, thetas, tau, around=None):
        """Point gaps at ``tau`` of the restored combinations ``(1 - theta) a + theta b`` for
        each of ``thetas`` (shape (k,)), as computed in floating point: a cheap guide for
        choosing a combination (the chosen pair is restored and bounded rigorously after).
        ``around``: a piece ``(lo, hi)`` around ``tau`` whose ends a problem may interpolate
        instead of evaluating at ``tau`` (ignored here).  Problems may override this with a
        vectorized version."""
        out = []
        for th in thetas:
            p, d = self.restore(*self.interpolate(a, b, th), tau)
            out.append(self.gap(p, d, tau))
        return np.array(out)

    # ------------------------------------------------------------------ certificate arrays
    def to_arrays(self, primal, dual):
        """The stored fields of one certificate piece: a dict of arrays/floats."""
        out = {}
        for side, point in (("primal", primal), ("dual", dual)):
            for f in dataclasses.fields(point):
                v = getattr(point, f.name)
                if v is not None:
                    out[f"{side}_{f.name}"] = np.asarray(v, dtype=float)
        return out

    def from_arrays(self, arrays):
        """Inverse of :meth:`to_arrays`: ``(primal, dual)``."""
        def build(cls, side):
            kw = {}
            for f in dataclasses.fields(cls):
                key = f"{side}_{f.name}"
                if key in arrays:
                    v = np.asarray(arrays[key], dtype=float)
                    kw[f.name] = float(v) if v.ndim == 0 else v
            return cls(**kw)
        return build(self.Primal, "primal"), build(self.Dual, "dual")

    def describe(self):
        """One line for summaries: problem, parameter and options."""
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items() if k != "parameter")
        return f"{self.name} over {self.parameter} (n={self.n}; {opts})"
