"""Certify claimed solutions of any registered problem: exact paths from here or from elsewhere.

Given parameter values :math:`t_1, \\dots, t_k` and claimed primal points, every point gets
the rigorous gap bound of the problem's own declaration: a dual candidate is built from the
claimed primal (:meth:`Problem.dual_from_primal`), made exactly feasible
(:meth:`Problem.restore`) and ``problem.bound.gap`` bounds
:math:`f_t(x) - \\mathrm{opt}(t)` from above, rounding included.  The claimed primal itself is
used as given (only its :math:`t`-dependent fields such as slacks are filled in), so a wrong
coefficient shows up as a gap.

For paths claimed to be linear between consecutive points (the λ-path), each segment is
checked too.  Where the problem offers a rigorous bound over the whole segment
(:meth:`Problem.segment_gap_bound`: ``klasso`` over λ) the segment is *certified*; otherwise
the linear interpolation of the two end points is certified at ``samples`` interior parameter
values only, and the segment is called *sampled*: nothing bounds the gap between the samples.

File format (npz or CSV): ``t`` (points,) and one array per field of the problem's ``Primal``
(``beta`` (points × n) and ``beta0`` (points,) for ``klasso``; ``w``, ``b`` for
``kernel_svm``); fields with defaults (slacks) may be omitted.  CSV: a header line naming the
columns, ``t``, scalar fields by name and vector fields as ``name[0]``, ..., ``name[n-1]``.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from approxpath.certificate.requirements import check_interval_required
from approxpath.compute.parallelism import managed
from approxpath.errors import InputError
from approxpath.moving import value_at
from approxpath.problem import convex_combination
from approxpath.validate import flag, is_count, problem_instance

from ._claimed import read_claimed, write_claimed
from ._report import Check, CrossCheckReport

__all__ = ["Check", "CrossCheckReport", "certify", "crosscheck", "objective_scale", "point_gap", "read_claimed",
           "write_claimed"]

#: Interior parameter values per segment at which a claimed-linear segment is sampled.
DEFAULT_SAMPLES = 8
# A claimed primal counts as infeasible when its constraint violation exceeds this multiple of
# the objective's scale (objective_scale; the threshold of the conformance suite: solver points repaired to
# feasibility satisfy it, a wrong point does not).
_PRIMAL_FEAS_TOL = 1e-9


def objective_scale(problem, dual_value):
    """The unit of a relative tolerance: the larger of ``|dual_value|`` and the problem's zero
    model's objective (``null_objective()``: klasso's ½‖y − ȳ‖²), which does not shrink with the
    fit; without one, :math:`1 + |\\text{dual objective}|`.  That is :math:`\\max(|d|, z)` where
    :math:`z > 0`, else :math:`1 + |d|`.  Scale-free where the problem
    has a zero model: data times 1e-5 once made a path of zeros pass ``--tol 1e-8 --relative``
    (its gap, 5.6e-10, against 1 + a dual objective of ~1e-9)."""
    null = getattr(problem, "null_objective", None)
    zero = float(null()) if null is not None else 0.0
    return max(abs(dual_value), zero) if zero > 0 else 1.0 + abs(dual_value)


def point_gap(problem, primal, tau):
    """Certified gap bound of a claimed ``primal`` at ``tau`` and the unit of a relative
    tolerance there (:func:`objective_scale`): ``(gap, scale, note)``; ``gap`` is ``inf`` with a
    note when the point is infeasible or cannot be evaluated: a violation above :math:`10^{-9}`
    ``scale`` (or NaN), a gap not finite, or a ``ValueError``, ``TypeError``, ``ArithmeticError`` or
    ``LinAlgError`` while evaluating (``scale`` then 1.0); else ``gap`` is ``problem.bound.gap``
    (plus its ``claimed_excess`` where the bound has one: the SVM's reads :math:`w = y\\circ\\alpha` from
    the dual) and ``note`` is ``""``.  ``primal`` is used as given, its dual ``dual_from_primal``
    made feasible by ``restore``."""
    try:
        dual = problem.restore(primal, problem.dual_from_primal(primal, tau), tau)[1]  # the claimed primal as is
        scale = objective_scale(problem, problem.dual_objective(value_at(dual, tau), tau))
        violation = problem.primal_violation(problem.primal_at(primal, tau), tau)
        if not violation <= _PRIMAL_FEAS_TOL * scale:
            return math.inf, scale, f"primal infeasible by {violation:.3g}"
        gap = float(problem.bound.gap(primal, dual, tau))
        excess = getattr(problem.bound, "claimed_excess", None)  # (a bound that reads part of the primal from the dual)
        gap += 0.0 if excess is None else float(excess(primal, dual, tau))
    except (ValueError, TypeError, ArithmeticError, np.linalg.LinAlgError) as exc:  # (1e308: an OverflowError)
        return math.inf, 1.0, f"cannot be evaluated: {exc}"
    if not math.isfinite(gap):
        return math.inf, scale, "non-finite gap"
    return gap, scale, ""


# ``Primal`` field annotations (strings under ``from __future__ import annotations``) that fix a
# field's shape: (n,) arrays or scalars; other fields are told apart by the arrays' own shapes.
_VECTOR_TYPES = ("np.ndarray", "numpy.ndarray", np.ndarray)
_SCALAR_TYPES = ("float", float)


def _primal_arrays(problem, primals):
    """The arrays of a sequence of ``problem.Primal`` points, keyed by field name (one row per
    point), for the checks of :func:`_primals`; fields that are None in every point are left out."""
    bad = next((p for p in primals if not isinstance(p, problem.Primal)), None)
    if bad is not None:
        raise InputError(f"primals must be {problem.Primal.__name__} points of {problem.name} "
                         f"(or a dict of arrays); got {type(bad).__name__}")
    arrays = {}
    for f in dataclasses.fields(problem.Primal):
        values = [getattr(p, f.name) for p in primals]
        if all(v is None for v in values):
            continue
        try:
            arrays[f.name] = np.stack([np.asarray(v, dtype=float) for v in values])
        except (TypeError, ValueError) as exc:
            raise InputError(f"field {f.name!r} of the claimed primals must hold numbers of one shape in every "
                             f"point ({exc})") from None
    return arrays


def _primals(problem, arrays, k):
    """``k`` Primal points from arrays keyed by the problem's Primal field names."""
    fields = dataclasses.fields(problem.Primal)
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [name for name in required if name not in arrays]
    if missing:
        raise InputError(f"{problem.name}: the claimed path lacks the array(s) {', '.join(missing)} "
                         f"(a {problem.name} primal has fields {', '.join(f.name for f in fields)})")
    cols = {}
    for f in fields:
        if f.name not in arrays:
            continue
        if np.iscomplexobj(arrays[f.name]):  # (numpy would drop the imaginary parts with a warning)
            raise InputError(f"array {f.name!r} must hold real numbers; got {np.asarray(arrays[f.name]).dtype}")
        try:
            a = np.asarray(arrays[f.name], dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"array {f.name!r} must hold numbers, one row per parameter value ({exc})") from None
        if a.ndim == 0 or a.shape[0] != k:
            raise InputError(f"array {f.name!r} must have one row per parameter value ({k}); got shape {a.shape}")
        if f.type in _SCALAR_TYPES and a.ndim != 1:
            raise InputError(f"array {f.name!r} must be (points,): one number per point; got shape {a.shape}")
        if not ((a.ndim == 2 and a.shape[1] == problem.n) or (a.ndim == 1 and f.type not in _VECTOR_TYPES)):
            raise InputError(f"array {f.name!r} must be (points x n) with n = {problem.n} samples of the data; "
                             f"got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            row = int(np.argwhere(~np.isfinite(a))[0][0])
            raise InputError(f"array {f.name!r} contains NaN or inf (first at row {row}, as given)")
        cols[f.name] = a
    return [problem.Primal(**{name: (float(a[i]) if a.ndim == 1 else a[i]) for name, a in cols.items()})
            for i in range(k)]


@managed
def crosscheck(problem, t, primals, *, tol=1e-6, relative=False, linear=False, samples=DEFAULT_SAMPLES, cond=None,
               interval=None):
    """Certify claimed solutions of ``problem`` at parameter values ``t``.

    Parameters
    ----------
    problem : Problem
        A registered problem whose path parameter is the one ``t`` refers to.
    t : array_like of shape (k,)
    primals : sequence of ``problem.Primal`` or dict of arrays
        The claimed solutions, or arrays with one row per point keyed by the ``Primal`` field
        names (``beta`` (k, n), ``beta0`` (k,) for ``klasso``).
    tol : float
        A point or segment is flagged when its gap exceeds ``tol`` (``relative``: ``tol``
        times :func:`objective_scale`: the larger of the dual objective and the zero model's
        objective).
    relative : bool, default False
        ``tol`` is relative to the objective's scale (see ``tol``).
    linear : bool
        The path is claimed to be linear in ``t`` between consecutive points (sorted by t):
        the segments are checked too, by the problem's rigorous segment bound if it has one
        ("certified"), else at ``samples`` interior points each ("sampled").
    samples : int
        Interior parameter values per segment where a segment is sampled (a positive integer).
    cond : array_like of shape (k,), optional
        Condition numbers behind the points, carried into the report.
    interval : (float, float), optional
        ``(lo, hi)`` the points must cover (the smallest t at most ``lo``, the largest at least
        ``hi``): a path that stops early fails (:attr:`CrossCheckReport.short`) however small
        its gaps.

    Returns
    -------
    CrossCheckReport
    """
    t0 = time.perf_counter()
    problem_instance(problem)
    relative, linear = flag("relative", relative), flag("linear", linear)
    if np.iscomplexobj(t):
        raise InputError(f"t must hold real numbers; got {np.asarray(t).dtype}")
    t = np.asarray(t, dtype=float).reshape(-1)
    if t.size == 0:
        raise InputError("the claimed path has no points (empty t)")
    if not np.all(np.isfinite(t)):
        raise InputError(f"t contains NaN or inf (first at row {int(np.flatnonzero(~np.isfinite(t))[0])})")
    if not np.all(t > 0):
        raise InputError(f"t must be positive (a path's parameter is a positive scale); got {float(t[~(t > 0)][0])!r}")
    if not (isinstance(tol, (int, float, np.floating)) and tol > 0):
        raise InputError(f"tol must be a positive number; got {tol!r}")
    required = None if interval is None else check_interval_required(interval)
    if not is_count(samples):
        raise InputError(f"samples must be a positive integer (interior points per linear segment, "
                         f"default {DEFAULT_SAMPLES}); got {samples!r}")
    if primals is None or isinstance(primals, (str, bytes)):
        raise InputError(f"primals must be the claimed solutions (a sequence of {problem.name}'s Primal, or a dict of "
                         f"arrays with one row per point); got {primals!r}")
    if not isinstance(primals, dict):
        primals = list(primals)
        if len(primals) != t.size:
            raise InputError(f"{len(primals)} claimed solutions for {t.size} parameter values")
        primals = _primal_arrays(problem, primals)
    primals = _primals(problem, primals, t.size)
    order = np.argsort(t, kind="stable")
    t, primals = t[order], [primals[i] for i in order]
    if cond is not None:
        cond = np.asarray(cond)
        if cond.dtype.kind not in "biuf" or cond.shape != (t.size,):
            raise InputError(f"cond must hold one number per point ({t.size}); got shape {cond.shape} of {cond.dtype}")
        cond = cond.astype(float)[order]

    def limit(scale):
        return tol * scale if relative else tol

    moved = not np.array_equal(order, np.arange(t.size))

    def rows(*i):  # the rows as given, where sorting by t moved them
        return tuple(int(order[k]) for k in i) if moved else ()

    # a huge claim (1e308) overflows on its way to the gap: a non-finite gap, flagged, not a warning
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        checks = []
        for i, (tau, primal) in enumerate(zip(t, primals)):
            gap, scale, note = point_gap(problem, primal, float(tau))
            checks.append(Check("point", i, float(tau), float(tau), gap, float(tau), scale, "certified",
                                not gap <= limit(scale), note, rows(i)))
        if linear:
            thetas = np.arange(1, samples + 1) / (samples + 1)
            segment_bound = getattr(problem, "segment_gap_bound", None)
            interpolate = getattr(problem, "interpolate", convex_combination)
            for i in range(t.size - 1):
                lo, hi = float(t[i]), float(t[i + 1])
                if not lo < hi:
                    continue
                seg_scale = min(checks[i].scale, checks[i + 1].scale)
                failed = None  # why the problem's segment bound gave none (a numerical failure: sampled instead)
                try:
                    bound = segment_bound(primals[i], primals[i + 1], lo, hi) if segment_bound else None
                except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
                    bound, failed = None, f"segment bound failed ({type(exc).__name__}: {exc}); sampled"
                if bound is not None:
                    bound = float(bound) if math.isfinite(bound) else math.inf
                    checks.append(Check("segment", i, lo, hi, bound, math.nan, seg_scale, "certified",
                                        not bound <= limit(seg_scale), "", rows(i, i + 1)))
                    continue
                ends = [(p, problem.dual_from_primal(p, tau)) for p, tau in ((primals[i], lo), (primals[i + 1], hi))]
                worst = None
                for th in thetas:
                    tau = float(lo + th * (hi - lo))
                    gap, scale, note = point_gap(problem, interpolate(ends[0], ends[1], th)[0], tau)
                    if worst is None or (not gap <= limit(scale), gap) > (worst[3], worst[0]):
                        worst = (gap, tau, scale, not gap <= limit(scale), note)
                gap, tau, scale, flagged, note = worst
                note = "; ".join(filter(None, (failed, note)))
                checks.append(Check("segment", i, lo, hi, gap, tau, scale, "sampled", flagged, note, rows(i, i + 1)))
    return CrossCheckReport(problem.name, problem.parameter, float(tol), bool(relative), bool(linear), int(samples),
                            tuple(checks), cond, time.perf_counter() - t0, required)


@managed
def certify(path, *, tol=1e-6, relative=True, samples=DEFAULT_SAMPLES):
    """Certify every solution an exact path returned (and, for a path linear between its
    points, its segments) with the duality gap of the registered problem it solves.

    Parameters
    ----------
    path : ExactPath
        From :func:`approxpath.exact.lambda_path` or :func:`approxpath.exact.kernel_path`.
    tol : float
        Flag points whose gap exceeds ``tol`` (times :func:`objective_scale` when
        ``relative``, the default).
    relative : bool, default True
        ``tol`` is relative to the objective's scale (:func:`crosscheck`).
    samples : int
        Interior parameter values per segment where a linear path's segment is sampled
        (:func:`crosscheck`).

    Returns
    -------
    CrossCheckReport
        With the condition numbers of the linear systems behind the points.
    """
    return crosscheck(path.problem(), path.t, path.primal_arrays(), tol=tol, relative=relative, linear=path.linear,
                      samples=samples, cond=path.cond)
