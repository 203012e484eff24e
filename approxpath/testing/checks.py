"""The conformance battery: checks every problem must pass, built-in or plug-in.

Each check takes one :class:`Example` (a problem instance, an interval and an ε, from the
class's ``examples()``) and raises ``AssertionError`` when the problem breaks the contract.
Optional capabilities are checked where present.  References are independent of the code under
test: the CVXPY declarations solved tightly, weak duality, points sampled inside a piece, and
certificates that must fail once tampered with.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .. import moving, moving_layout
from ..moving import value_at
from .assertions import (assert_close, assert_feasible, assert_weak_duality, dual_scale, evaluate_declaration,
                         random_taus)
from .runs import (check_path_is_certified_and_verifies, check_resumed_run_equals_uninterrupted,
                   check_tampered_certificates_fail)

__all__ = ["Example", "CHECKS", "examples_of"]

# Agreement of numpy and CVXPY objective values (CVXPY solves to ~1e-8).
_REL = 1e-6
# Restoration declarations are often projections whose optimal value is ~0: an interior point
# method resolves such a point only to ~sqrt(tol) ~ 1e-5, so maps agree to that.
_REL_MAP = 1e-5
# A pair restored on a piece 2e-6 wide (relative) has a gap at the piece's middle within this
# share of 1 + |dual objective| of the pair restored there alone (the gap's change over such a
# width is ~1e-6 of its derivative; a restoration wrong on pieces is off by far more)
_TENDS = 1e-4


@dataclass(frozen=True)
class Example:
    """One conformance case: ``problem`` on ``interval`` at ``eps``."""

    problem: object
    interval: tuple
    eps: float

    def __repr__(self):
        return f"{self.problem.name}-{self.problem.parameter}"


def examples_of(cls):
    """The :class:`Example` of each of ``cls.examples()``."""
    return [Example(p, tuple(interval), float(eps)) for p, interval, eps in cls.examples()]


def check_options_match_the_bound(ex):
    """The constructor's keyword options are the bound's (``Bound.OPTIONS`` and ``parameter``),
    and ``type(p)(X, y, **p.options())`` rebuilds the same instance."""
    problem = ex.problem
    cls = type(problem)
    names = {k for k, p in inspect.signature(cls.__init__).parameters.items() if p.kind is p.KEYWORD_ONLY}
    want = set(cls.Bound.OPTIONS) | {"parameter"}
    extra, lacking = sorted(names - want), sorted(want - names)
    assert not (extra or lacking), (f"the constructor's keyword-only options are not Bound.OPTIONS plus 'parameter': "
                                    f"{extra} not in Bound.OPTIONS, {lacking} not in the constructor")
    assert problem.parameter in cls.Bound.parameters, f"parameter {problem.parameter!r} is not in Bound.parameters"
    again = cls(problem.X, problem.y, **problem.options())
    assert again.options() == problem.options(), f"rebuilt with {again.options()}, not {problem.options()}"


def check_exact_pair_is_optimal_and_feasible(ex):
    """The exact solve returns a feasible pair whose certified gap is tiny and nonnegative; so
    does each of the problem's backends alone, where it makes a pair (a fast backend with a
    wrong map would otherwise hide behind the general solvers after it), and one that raises
    declines with :class:`~approxpath.errors.SolverError` (another error is a bug the general
    solvers would hide as well)."""
    from ..errors import SolverError, brief

    problem = ex.problem
    t = random_taus(ex.interval, 1, 0)[0]
    for name in problem.backends:
        try:
            primal, dual = problem.solve(t, solver=name)
        except SolverError as refused:
            try:
                problem.candidate(name, t)
            except (SolverError, ModuleNotFoundError):  # declined (outside its range, e.g. a size) or not installed
                continue
            except Exception as exc:
                raise AssertionError(f"backend {name!r} raises {brief(exc)} at {t:.6g}: a backend that does not solve "
                                     "a problem declines with approxpath.errors.SolverError") from exc
            raise AssertionError(f"backend {name!r} makes a pair at {t:.6g} that no exact solve accepts: "
                                 f"{refused}") from refused
        g, scale = problem.bound.gap(primal, dual, t), dual_scale(problem, dual, t)
        assert g <= 1e-6 * scale, (f"backend {name!r} alone gives a pair with certified gap {float(g)!r} at {t:.6g}: "
                                   "its candidate's maps or its stopping rule are wrong")
    for t in random_taus(ex.interval, 3, 0):
        primal, dual = problem.solve(t)
        full = problem.primal_at(primal, t)
        scale = dual_scale(problem, dual, t)
        assert_feasible(problem, full, dual, t, 1e-9 * scale, "the exact solve's pair")
        errors = problem.bound.check(primal, dual, t, t)
        assert errors == [], f"the bound refuses the exact solve's pair at {t:.6g}: {errors}"
        g = problem.bound.gap(primal, dual, t)
        assert_weak_duality(problem, g, scale)
        assert g <= 1e-6 * scale, g
        allowance = problem.bound.rounding(primal, dual, t)  # what exact solves are judged without
        assert 0.0 <= allowance < np.inf, f"rounding part {allowance!r} of the gap at {t:.6g} is not finite and >= 0"


def check_declarations_agree_with_numpy(ex):
    """The numpy objectives equal the CVXPY objective expressions at the same point, and both
    declarations' optima (tight, independent solves of the primal and of the dual) equal the exact
    pair's objective: a dual declaration that lacks a constraint (its optimum above the primal's) or
    bounds too little fails here."""
    problem = ex.problem
    t = random_taus(ex.interval, 1, 1)[0]
    primal, dual = problem.solve(t)
    full = problem.primal_at(primal, t)
    for decl, values, numpy_value in (
        (problem.cvxpy_primal(t), problem.primal_values(full), problem.primal_objective(full, t)),
        (problem.cvxpy_dual(t), problem.dual_values(value_at(dual, t)), problem.dual_objective(dual, t)),
    ):
        assert_close(evaluate_declaration(decl, values)[0], numpy_value, _REL, _REL)
    optimum = problem.primal_objective(full, t)
    for side, decl in (("primal", problem.cvxpy_primal(t)), ("dual", problem.cvxpy_dual(t))):
        decl.problem.solve(solver="CLARABEL")
        wrong = "the declarations are not a primal and its dual" if side == "dual" else "the declaration is wrong"
        assert_close(decl.problem.value, optimum, _REL, _REL,
                     f": the {side} declaration's optimum at {t:.6g} against the exact pair's objective: {wrong}")


def check_restoration(ex):
    """Restored pairs are feasible, the gap satisfies weak duality, and (where the problem
    declares its restoration in CVXPY) the numpy maps reach the declared optimum; restored on a
    piece ``[t / (1 + r), t (1 + r)]``, the exact solve's pair at ``t`` is feasible at the piece's
    ends and middle, and as the piece narrows (``r = 1e-6``) its gap at ``t`` tends to that of the
    pair restored at ``t`` alone (within ``_TENDS`` of the dual objective's scale: a restoration
    wrong on pieces only is found here, not by a path split to dust)."""
    problem = ex.problem
    pair = problem.solve(random_taus(ex.interval, 1, 2)[0])
    t = random_taus(ex.interval, 1, 5)[0]
    exact = problem.solve(t)
    scale, point = dual_scale(problem, exact[1], t), problem.gap(*problem.restore(*exact, t), t)
    for r in (0.1, 1e-6):  # (inside the example's interval: a parameter may have a bounded domain)
        a, b = max(t / (1 + r), ex.interval[0]), min(t * (1 + r), ex.interval[1])
        primal, dual = problem.restore(*exact, a, b)
        for tau in (a, t, b):
            assert_feasible(problem, problem.primal_at(primal, tau), dual, tau, 1e-9 * scale,
                            f"the pair restored on [{a:.6g}, {b:.6g}]")
    narrow = problem.gap(primal, dual, t)
    assert narrow <= point + _TENDS * scale, (
        f"the pair restored on [{a:.8g}, {b:.8g}] has a gap of {narrow!r} at {t:.8g}, the pair restored at {t:.8g} "
        f"alone {point!r}: restore() on a piece does not tend to its pair at a point as the piece narrows")
    for tau in random_taus(ex.interval, 3, 3):
        primal, dual = problem.restore(*pair, tau)
        full = problem.primal_at(primal, tau)
        scale = dual_scale(problem, dual, tau)
        assert_feasible(problem, full, dual, tau, 1e-9 * scale, "a restored pair")
        assert_weak_duality(problem, problem.bound.gap(primal, dual, tau), scale)
        if hasattr(problem, "cvxpy_restore_dual"):
            cvx_dual = problem.cvxpy_restore_dual(pair[1], tau)
            assert_close(problem.dual_objective(dual, tau), problem.dual_objective(cvx_dual, tau), _REL_MAP,
                         _REL_MAP * scale)
        if hasattr(problem, "cvxpy_restore_primal"):
            cvx_primal = problem.primal_at(problem.cvxpy_restore_primal(pair[0], dual, tau), tau)
            assert_close(problem.primal_objective(full, tau), problem.primal_objective(cvx_primal, tau), _REL_MAP,
                         _REL_MAP * scale)


def check_piece_bound_dominates_point_gaps(ex):
    """On pieces around an exact solve, the bound is above the computed gap at 25 points of the
    piece, the pair is feasible at each, the dual floor is below the dual objective, and the
    bound equals the gap where the piece is a point."""
    problem, bound = ex.problem, ex.problem.bound
    if not bound.interval_bound:
        return
    lo, hi = ex.interval
    t0 = random_taus(ex.interval, 1, 4)[0]
    pair = problem.solve(t0)
    edges = np.geomspace(max(lo, t0 / 1.5), min(hi, t0 * 1.5), 4)
    for a, b in zip(edges[:-1], edges[1:]):
        primal, dual = problem.restore(*pair, a, b)
        errors = bound.check(primal, dual, a, b)
        assert errors == [], f"the bound refuses the restored pair on [{a:.6g}, {b:.6g}]: {errors}"
        g = bound.gap(primal, dual, a, b)
        assert_weak_duality(problem, g, 0.0)  # a rigorous bound over a piece
        for tau in np.geomspace(a, b, 25):
            inside = float(problem.gap(primal, dual, tau))
            assert inside <= g, f"the gap {inside!r} at {tau:.6g} exceeds the piece [{a:.6g}, {b:.6g}]'s bound {float(g)!r}"
            assert_feasible(problem, problem.primal_at(primal, tau), dual, tau,
                            1e-12 * dual_scale(problem, pair[1], tau), "a piece's restored pair")
        taus = np.geomspace(a, b, 25)
        floor, least = bound.dual_floor(dual, a, b), min(problem.dual_objective(dual, tau) for tau in taus)
        assert floor <= least, f"dual_floor {floor!r} on [{a:.6g}, {b:.6g}] exceeds the dual objective {least!r} there"
        m = float(np.sqrt(a * b))
        assert_close(bound.gap(primal, dual, m, m), problem.gap(primal, dual, m), 0.0,
                     1e-9 * dual_scale(problem, pair[1], m))


def _pieces_of(ex):
    """``[(primal, dual, lo, hi), ...]``: a piece's pair from an exact solve and, where the
    bound bounds moving pairs, the driver's moving interpolation of two exact solves, restored."""
    problem = ex.problem
    lo, hi = ex.interval
    mid = float(np.sqrt(lo * hi))
    a = problem.solve(lo)
    out = [(*problem.restore(*a, lo, mid), lo, mid) if problem.bound.interval_bound else (*a, lo, lo)]
    degree = min((getattr(problem.bound, "moving_degrees", None) or {}).get(problem.parameter, 0), 2)
    if degree and problem.bound.interval_bound:
        b = problem.solve(mid)
        inner = float(np.sqrt(lo * mid))
        pair = moving.interpolate(a, b, (0.1, 0.5, 0.9), (lo, inner, mid), degree)
        out.append((*problem.restore(*pair, lo, mid), lo, mid))
    return out


def check_arrays_round_trip(ex):
    """A piece's pair (fixed, and moving where the bound bounds moving pairs) survives the
    certificate layout (``Bound.pieces_to_arrays``/``piece_from_arrays``) bit for bit (as
    ``Bound.stored_point`` stores it), and the
    verifier's bound (built from the data and options alone) accepts it and recomputes the same
    gap bound."""
    problem = ex.problem
    pieces = _pieces_of(ex)
    verifier = type(problem).Bound(problem.X, problem.y, **problem.options())
    arrays = problem.bound.pieces_to_arrays(pieces)
    for i, (primal, dual, lo, hi) in enumerate(pieces):
        p2, d2 = verifier.piece_from_arrays({k: v[i] for k, v in arrays.items()}, lo, hi)
        sp, sd = (problem.bound.stored_point(side, x, lo, hi) for side, x in (("primal", primal), ("dual", dual)))
        assert moving_layout.fingerprint(p2) == moving_layout.fingerprint(sp) and \
            moving_layout.fingerprint(d2) == moving_layout.fingerprint(sd), f"piece {i} changes in the layout"
        errors = verifier.check(p2, d2, lo, hi)
        assert errors == [], f"the verifier's bound refuses piece {i} read back: {errors}"
        if problem.bound.interval_bound and lo < hi:
            assert_close(verifier.gap(p2, d2, lo, hi), problem.bound.gap(primal, dual, lo, hi), 1e-9, 1e-12)


def check_point_at_t_is_the_certified_point(ex):
    """At random parameters of random pieces of a path, the point a user reads
    (``path.primal(t)``, ``path.dual(t)``: plain points whose fields are the values at t) is
    the one the piece's bound speaks of: the objectives computed from its fields by the
    problem's own CVXPY declarations equal ``path.objectives(t)``, both points are feasible there,
    and their gap is at most the piece's bound."""
    from ..certificate.claims import SAMPLE_LEVELS, claimed_on
    from ..driver import approximate_path

    problem = ex.problem
    path = approximate_path(problem, eps=ex.eps, interval=ex.interval)
    rng = np.random.default_rng(7)
    for k in rng.choice(len(path.pieces), size=min(6, len(path.pieces)), replace=False):
        piece = path.pieces[int(k)]
        if piece.kind == "certified":
            t = float(np.exp(rng.uniform(np.log(piece.lo), np.log(piece.hi))))
        else:  # a sampled piece claims (and may hold values) only at its sampled points
            t = float(rng.choice([x for x, _ in claimed_on(piece.kind, piece.lo, piece.hi, SAMPLE_LEVELS)]))
        primal, dual = path.primal(t), path.dual(t)
        assert not moving.is_moving(primal) and not moving.is_moving(dual), "path.primal(t) / path.dual(t) still move"
        upper, lower = path.objectives(t)
        scale = 1.0 + abs(lower)
        for decl, values, value in ((problem.cvxpy_primal(t), problem.primal_values(primal), upper),
                                    (problem.cvxpy_dual(t), problem.dual_values(dual), lower)):
            declared, off = evaluate_declaration(decl, values)
            assert_close(declared, value, 1e-9, 1e-9 * scale)
            assert off <= 1e-9 * scale, f"the point at {t:.6g} violates its declared constraints by {off:.3g}"
        assert_feasible(problem, primal, dual, t, 1e-9 * scale, "the point at t")
        if piece.kind == "certified":
            assert upper - lower <= piece.gap_bound * (1 + 1e-9) + 1e-12 * scale, (
                f"the gap {upper - lower!r} at {t:.6g} exceeds its piece's bound {piece.gap_bound!r}")


# Alterations of a stored pair a forger may make: a rounding-sized change (the bound's own
# allowances must cover it) and one large enough to move a gap by a visible amount.
_ALTER_SIZES = (1e-7, 1e-2)


def _alterations(arrays, rng):
    """``(what, arrays)``: each float array of a piece's stored fields changed in turn -- scaled,
    shifted up and down (all entries, and one), and with noise -- at each of ``_ALTER_SIZES``."""
    for key, a in arrays.items():
        if a.dtype.kind != "f" or not a.size:
            continue
        for size in _ALTER_SIZES:
            step = size * (float(np.max(np.abs(a))) + 1.0)
            one = np.zeros(a.shape)
            one.flat[rng.integers(a.size)] = step
            for what, b in (("scaled", a * (1.0 + size)), ("shifted up", a + step), ("shifted down", a - step),
                            ("one entry up", a + one), ("one entry down", a - one),
                            ("with noise", a + step * rng.standard_normal(a.shape))):
                if not np.array_equal(a, b):  # (zeros scaled are no forgery)
                    yield f"{key} {what} by {size:g}", dict(arrays, **{key: b})


def check_altered_pairs_are_refused_or_bounded(ex):
    """Negative check of the bound as a verifier uses it, on pairs no solver made: each piece's
    stored fields (fixed, and moving where the bound bounds moving pairs) altered as a forger
    could (:func:`_alterations`).  A pair the bound accepts (``Bound.check`` empty, a finite gap
    bound that weak duality allows) must be feasible for the problem's CVXPY declarations at
    points of the piece, and its gap there, computed from the declarations' objectives (not the
    problem's numpy maps), at most the bound.  A bound that is exact only at optimal pairs, or a
    feasibility check that misses a constraint, fails here."""
    from ..certificate.claims import weak_duality_violation

    problem, bound = ex.problem, ex.problem.bound
    tolerant = hasattr(bound, "feasibility_tol")  # (a bound that counts pairs feasible to a tolerance)
    rng = np.random.default_rng(11)
    for primal, dual, lo, hi in _pieces_of(ex):
        arrays = {k: v[0] for k, v in bound.pieces_to_arrays([(primal, dual, lo, hi)]).items()}
        taus = sorted({lo, hi, *random_taus((lo, hi), 1, 12)}) if lo < hi else [lo]
        for what, altered in _alterations(arrays, rng):
            try:
                p2, d2 = bound.piece_from_arrays(altered, lo, hi)
            except (KeyError, ValueError):  # outside the layout: the verifier refuses it
                continue
            try:
                if bound.check(p2, d2, lo, hi):
                    continue
                g = bound.gap(p2, d2, lo, hi) if lo < hi else bound.gap(p2, d2, lo)
            except Exception as exc:  # a verifier must refuse a file, not fail on it
                raise AssertionError(f"a pair with {what} on [{lo:.6g}, {hi:.6g}]: the bound raised "
                                     f"{type(exc).__name__}: {exc} (errors() must refuse what gap() cannot bound)") from exc
            if not np.isfinite(g) or weak_duality_violation(bound, g, d2, lo, hi):
                continue
            for tau in taus:
                upper, p_off = evaluate_declaration(problem.cvxpy_primal(tau), problem.primal_values(
                    problem.primal_at(value_at(p2, tau), tau)), tolerant)
                lower, d_off = evaluate_declaration(problem.cvxpy_dual(tau), problem.dual_values(
                    problem.dual_at(value_at(d2, tau), tau)), tolerant)
                scale = 1.0 + abs(lower)
                assert p_off <= 1e-9 * scale and d_off <= 1e-9 * scale, (
                    f"a pair with {what} is accepted on [{lo:.6g}, {hi:.6g}] but violates the declared "
                    f"{'primal' if p_off > d_off else 'dual'} constraints by {max(p_off, d_off):.3g}"
                    f"{' beyond their tolerance' if tolerant else ''} at {tau:.6g}: its feasibility check (errors()) "
                    "misses a constraint")
                assert upper - lower <= g + 1e-9 * scale, (
                    f"a pair with {what} is accepted on [{lo:.6g}, {hi:.6g}] with gap bound {g:.12g}, but its declared "
                    f"gap at {tau:.6g} is {upper - lower:.12g}: the bound is not a bound for every feasible pair")


def check_interpolation_guide(ex):
    """A problem's own vectorized ``interpolation_gaps`` agrees with restoring each combination
    and taking its gap (:func:`~approxpath.problem.restored_gaps`) between two exact solves."""
    from ..problem import restored_gaps

    problem = ex.problem
    if not hasattr(problem, "interpolation_gaps"):
        return
    lo, hi = sorted(random_taus(ex.interval, 2, 3))
    a, b = problem.solve(lo), problem.solve(hi)
    tau = float(np.sqrt(lo * hi))
    thetas = np.arange(9) / 8.0  # dyadic: kernel_svm rounds a weight to 2**-8
    own = problem.interpolation_gaps(a, b, thetas, tau)
    generic = restored_gaps(problem, a, b, thetas, tau)
    np.testing.assert_allclose(own, generic, rtol=0, atol=1e-7 * dual_scale(problem, a[1], tau))


#: Every check, in the order they run.
CHECKS = (check_options_match_the_bound, check_exact_pair_is_optimal_and_feasible, check_declarations_agree_with_numpy,
          check_restoration, check_piece_bound_dominates_point_gaps, check_arrays_round_trip,
          check_path_is_certified_and_verifies, check_point_at_t_is_the_certified_point,
          check_tampered_certificates_fail, check_altered_pairs_are_refused_or_bounded, check_interpolation_guide,
          check_resumed_run_equals_uninterrupted)
