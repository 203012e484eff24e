"""Adversarial check of the certified claim itself: on every certified piece (every certified
cell of a surface) the exact duality gap of the pair the result gives, evaluated densely --
the ends, points within 1e-12 of them and an interior grid -- is at most the stored
``gap_bound``, and the pair is feasible.

The gap is recomputed here from the problems' definitions, independently of the library's maps:
the kernel exp(-t D) from the data in extended precision (``np.longdouble``), the SVM's slacks
set to their optimal values for the given (w, b).  The configurations are the ones an
adversarial search (~1,300 random configurations, ~9 million evaluation points) found closest
to the bound: relative eps down to 1e-5, tiny n with duplicate points, clustered points, the
laplacian and ard kernels, every strategy and dual restoration, bandwidth and weight paths and
the two-parameter surfaces.  Seeded: the same cases on every run."""

import math

import numpy as np
import pytest

import approxpath
from approxpath.cells import CellBound
from approxpath.moving import combine, value_at

LD = np.longdouble
# the reference's own rounding: a few units of extended precision per term (per unit of the
# objectives' size); where longdouble is double this is ~1e-13 relative, above the library's
# padding of tiny bounds, so the comparison then allows for it
REF_ROUNDING = 64 * float(np.finfo(LD).eps)
# infeasibility that is only the rounding of a computed point (a moving or scaled point is a
# floating-point combination of exactly feasible stored points)
FEASIBLE_TOL = 1e-12


def _distances(problem):
    X = np.asarray(problem.X, dtype=float).astype(LD)
    diff = X[:, None, :] - X[None, :, :]
    if problem.kernel == "laplacian":
        return np.abs(diff).sum(-1)
    if problem.kernel == "ard":
        return (diff * diff * np.asarray(problem.feature_weights, dtype=float).astype(LD)).sum(-1)
    return (diff * diff).sum(-1)


class _Reference:
    """Exact-ish gap and constraint violation of a plain pair at (bandwidth, weight)."""

    def __init__(self, problem):
        self.name, self.D = problem.name, _distances(problem)
        self.y64 = np.asarray(problem.y, dtype=float)
        self.y = self.y64.astype(LD)

    def __call__(self, primal, dual, t, weight):
        K, y, lam = np.exp(-LD(t) * self.D), self.y, LD(weight)
        if self.name == "kernel_svm":
            w = np.asarray(primal.w, dtype=float).astype(LD)
            Kw = K @ w
            P = w @ Kw / 2 + lam * np.maximum(LD(0), 1 - y * (Kw + LD(float(primal.b)))).sum()
            a = np.asarray(dual.alpha, dtype=float)
            ya = y * a.astype(LD)
            Dv = a.astype(LD).sum() - ya @ (K @ ya) / 2
            viol = max(0.0, -a.min(), a.max() - weight, abs(math.fsum(self.y64 * a)))
        elif self.name == "klasso":
            beta = np.asarray(primal.beta, dtype=float).astype(LD)
            r = y - K @ beta - LD(float(primal.beta0))
            P = r @ r / 2 + lam * np.abs(beta).sum()
            u = np.asarray(dual.u, dtype=float)
            ul = u.astype(LD)
            Dv = y @ ul - ul @ ul / 2
            viol = max(0.0, float(np.abs(K @ ul).max() - lam), abs(math.fsum(u)))
        elif self.name == "robust_l1":
            beta = np.asarray(primal.beta, dtype=float).astype(LD)
            P = np.abs(y - K @ beta).sum() + lam * np.abs(beta).sum()
            ul = np.asarray(dual.u, dtype=float).astype(LD)
            Dv = y @ ul
            viol = max(0.0, float(np.abs(ul).max() - 1), float(np.abs(K @ ul).max() - lam))
        else:  # kernel_ridge
            c = np.asarray(primal.c, dtype=float).astype(LD)
            Kc = K @ c
            P = lam * (c @ Kc) + ((Kc - y) ** 2).sum()
            a = np.asarray(dual.a, dtype=float).astype(LD)
            Dv = 2 * (a @ y) - a @ a - a @ (K @ a) / lam
            viol = 0.0
        terms = abs(float(P)) + abs(float(Dv)) + 1.0
        return float(P - Dv), viol, terms


def _taus(lo, hi, k, rng):
    w = hi - lo
    pts = [lo, hi, np.nextafter(lo, hi), np.nextafter(hi, lo)]
    for e in (1e-12, 1e-9, 1e-6, 1e-3):
        pts += [lo + e * w, hi - e * w]
    pts += list(np.linspace(lo, hi, k)) + list(lo + w * rng.random(k))
    return np.clip(np.array(pts, dtype=float), lo, hi)


def _data(name, n, d, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "clustered":
        X = rng.uniform(0, 1, (3, d))[rng.integers(0, 3, n)] + 1e-4 * rng.normal(size=(n, d))
    elif kind == "binary":
        X = rng.integers(0, 2, (n, d)).astype(float)
    else:
        X = rng.uniform(0, 1, (n, d))
    if kind == "dups":
        X[-(n // 3):] = X[: n // 3]
    if name == "kernel_svm":
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        rng.shuffle(y)
    else:
        y = np.sin(4 * X[:, 0]) + 0.3 * rng.normal(size=n)
    return X, y


def _problem(name, X, y, kernel, **options):
    if kernel == "ard":
        options["feature_weights"] = tuple(np.linspace(0.2, 3.0, X.shape[1]))
    return approxpath.get_problem(name)(X, y, kernel=kernel, **options)


# (name, data (n, d, kind, seed), kernel, problem options, interval, eps, relative, strategy)
PATHS = [
    ("kernel_svm", (8, 2, "dups", 1), "gaussian", dict(c=1.0, bias="dynamic"),
     (0.5, 8.0), 1e-3, True, "interpolate"),
    ("kernel_svm", (6, 3, "binary", 2), "gaussian", dict(c=1.0, dual_restoration="fixed"),
     (0.5, 8.0), 2e-2, False, "paper"),
    ("kernel_svm", (10, 2, "uniform", 3), "laplacian", dict(c=2.0, bias="fixed"),
     (0.5, 8.0), 1e-2, True, "two-sided"),
    ("kernel_svm", (8, 2, "uniform", 4), "ard", dict(bandwidth=2.0, parameter="c"),
     (0.5, 2.0), 1e-2, True, "grid"),
    ("kernel_svm", (10, 2, "uniform", 5), "gaussian", dict(bandwidth=3.0, parameter="c"),
     (0.5, 20.0), 1e-3, True, "interpolate"),
    ("klasso", (12, 2, "uniform", 6), "gaussian", dict(lam=0.05),
     (0.5, 8.0), 1e-3, False, "interpolate"),
    ("klasso", (6, 1, "dups", 7), "laplacian", dict(lam=0.02, dual_restoration="scaling"),
     (0.5, 3.0), 1e-2, True, "paper"),
    ("klasso", (8, 2, "uniform", 8), "gaussian", dict(bandwidth=4.0, parameter="lam"),
     (0.05, 0.5), 1e-2, True, "grid"),
    ("klasso", (10, 3, "clustered", 9), "ard", dict(bandwidth=1.0, parameter="lam", dual_restoration="scaling"),
     (0.01, 0.3), 1e-3, False, "two-sided"),
    ("robust_l1", (10, 2, "uniform", 10), "gaussian", dict(lam=0.1),
     (0.5, 8.0), 1e-2, False, "interpolate"),
    ("robust_l1", (8, 2, "dups", 11), "laplacian", dict(lam=0.1, dual_restoration="projection"),
     (1.0, 3.0), 3e-2, True, "two-sided"),
    ("robust_l1", (10, 2, "uniform", 12), "gaussian", dict(bandwidth=2.0, parameter="lam"),
     (0.05, 1.0), 1e-3, True, "interpolate"),
    ("robust_l1", (6, 2, "clustered", 13), "ard", dict(bandwidth=2.0, parameter="lam", dual_restoration="scaling"),
     (0.05, 1.0), 1e-2, False, "paper"),
    ("kernel_ridge", (8, 2, "uniform", 14), "gaussian", dict(lam=1e-3),
     (0.5, 4.0), 1e-5, True, "interpolate"),
    ("kernel_ridge", (6, 2, "dups", 15), "laplacian", dict(lam=0.1),
     (0.5, 8.0), 1e-3, False, "paper"),
    ("kernel_ridge", (10, 1, "uniform", 16), "gaussian", dict(bandwidth=5.0, parameter="lam"),
     (1e-4, 1e-1), 1e-4, True, "two-sided"),
    ("kernel_ridge", (8, 3, "clustered", 17), "ard", dict(bandwidth=1.0, parameter="lam"),
     (1e-3, 1.0), 1e-3, True, "grid"),
]


def _check_pair(ref, primal, dual, t, weight, bound):
    g, viol, terms = ref(primal, dual, t, weight)
    assert viol <= FEASIBLE_TOL * terms, (t, weight, viol)
    assert g <= bound + REF_ROUNDING * terms, (t, weight, g, bound, g / bound)
    return g / bound if bound > 0 else 0.0


def _path_id(case):
    return f"{case[0]}-{case[3].get('parameter', 'bandwidth')}-{case[7]}-{case[2]}-{case[1][2]}"


@pytest.mark.parametrize("case", PATHS, ids=_path_id)
def test_certified_pieces_hold_their_bound_everywhere(case):
    name, (n, d, kind, seed), kernel, options, interval, eps, relative, strategy = case
    X, y = _data(name, n, d, kind, seed)
    problem = _problem(name, X, y, kernel, **options)
    path = approxpath.approximate_path(problem, eps=eps, interval=interval, relative=relative,
                                       strategy=strategy, max_pieces=4000)
    ref = _Reference(problem)
    rng = np.random.default_rng(seed)
    pieces = [p for p in path.pieces if p.kind == "certified"]
    assert pieces
    k = max(4, 1500 // len(pieces))
    worst = 0.0
    for piece in pieces:
        for tau in _taus(piece.lo, piece.hi, k, rng):
            bw, weight = problem.sweep.at(tau)
            primal, dual = value_at(piece.primal, tau), value_at(piece.dual, tau)
            worst = max(worst, _check_pair(ref, primal, dual, bw, weight, piece.gap_bound))
    assert worst > 0.5  # the check reached the bound's scale (the bound is tight at the pieces' ends)


SURFACES = [
    ("kernel_svm", (8, 2, "dups", 21), "gaussian", dict(bias="dynamic"), (1.0, 2.0), (0.5, 2.0), 5e-2, True),
    ("klasso", (8, 2, "uniform", 22), "laplacian", dict(), (1.0, 2.0), (0.05, 0.2), 2e-2, True),
    ("robust_l1", (8, 2, "clustered", 23), "gaussian", dict(dual_restoration="scaling"), (1.0, 2.0), (0.1, 0.5), 1e-1,
     False),
    ("kernel_ridge", (8, 2, "uniform", 24), "ard", dict(), (1.0, 2.0), (0.05, 0.1), 1e-2, True),
]


@pytest.mark.parametrize("case", SURFACES, ids=lambda c: c[0])
def test_certified_cells_hold_their_bound_everywhere(case):
    name, (n, d, kind, seed), kernel, options, bandwidths, weights, eps, relative = case
    X, y = _data(name, n, d, kind, seed)
    weight = "c" if name == "kernel_svm" else "lam"
    problem = _problem(name, X, y, kernel, **{weight: weights[0]}, **options)
    surface = approxpath.approximate_surface(problem, eps, weights=weights, bandwidths=bandwidths,
                                             relative=relative, max_cells=3000)
    ref = _Reference(problem)
    cells = CellBound(problem.bound)
    rng = np.random.default_rng(seed)
    certified = [c for c in surface.cells if c.kind == "certified"]
    assert certified
    k = max(4, 1200 // len(certified))
    worst = 0.0
    for c in certified:
        ts = [c.t_lo, c.t_hi, np.nextafter(c.t_hi, c.t_lo)] + list(c.t_lo + (c.t_hi - c.t_lo) * rng.random(k))
        ws = [c.w_lo, c.w_hi, np.nextafter(c.w_hi, c.w_lo)] + list(c.w_lo + (c.w_hi - c.w_lo) * rng.random(k))
        points = [(t, w) for t in ts[:3] for w in ws[:3]] + list(zip(ts[3:], ws[3:]))
        for t, w in points:
            scale = cells.dual_scale(w, c.w_lo)
            dual = value_at(combine([value_at(c.dual, t)], [[scale]], (t, t)), t)
            worst = max(worst, _check_pair(ref, value_at(c.primal, t), dual, t, w, c.gap_bound))
    assert worst > 0.5
