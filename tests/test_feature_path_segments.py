"""Certified inner paths between the points of a feature path (approxpath.exact.feature_path.segments).

References: the kernel along a segment against its split-by-sign closed form; the bound of a
piece against the pair's duality gap evaluated directly at many s inside it, against tight
CVXPY solves of the inner problem (weak duality both ways), and a corrupted point."""

import dataclasses
import functools
import math

import numpy as np
import pytest

from approxpath.errors import InputError
from approxpath.exact.feature_path import certify_segments, feature_path
from approxpath.exact.feature_path._kernels import make_kernel
from approxpath.exact.feature_path.segments import _Segment

from exact_helpers import cvxpy_inner, friedman1

C = 300.0  # ~0.1 ||Hy||^2 on the set below: a short path with joins


@pytest.fixture(scope="module", params=["ard-gaussian", "ard-polynomial"])
def path(request):
    X, y = friedman1(30, 5, 3)
    if request.param == "ard-polynomial":
        X = X / np.abs(X).max(axis=0)
        return feature_path(X, y, C=C / 3, kernel="ard-polynomial", degree=3, max_events=4)
    return feature_path(X, y, C=C, max_events=4)


def _segment(p, i):
    return _Segment(p._kern(), p.y, p.C, p.beta[i], p.beta[i + 1], p.alpha[i], p.alpha[i + 1],
                    float(p.alpha0[i]), float(p.alpha0[i + 1]))


def test_gaussian_kernel_along_a_segment_is_fixed_weights_times_exp_split_by_sign():
    X, _ = friedman1(12, 5, 0)
    kern = make_kernel("ard-gaussian", X)
    ba, bb = np.array([0.3, 0.0, 1.2, 0.5, 0.0]), np.array([0.1, 0.7, 1.5, 0.5, 0.2])  # delta of both signs
    delta = bb - ba
    Dp = sum(max(dk, 0.0) * kern.dist(k) for k, dk in enumerate(delta))
    Dm = sum(max(-dk, 0.0) * kern.dist(k) for k, dk in enumerate(delta))
    W = kern.at(ba).K
    for s in (0.0, 0.3, 0.77, 1.0):
        ref = W * np.exp(-s * Dp) * np.exp(s * Dm)
        np.testing.assert_allclose(kern.at((1 - s) * ba + s * bb).K, ref, rtol=1e-13, atol=0)
    # entrywise monotone in s: the middle lies between the ends
    K0, K1, Km = kern.at(ba).K, kern.at(bb).K, kern.at(0.5 * (ba + bb)).K
    assert np.all(Km >= np.minimum(K0, K1) - 1e-15) and np.all(Km <= np.maximum(K0, K1) + 1e-15)


def test_piece_bound_covers_the_pair_gap_at_every_s_and_cvxpy(path):
    rng = np.random.default_rng(7)
    kern = path._kern()
    checked = 0
    for i in rng.choice(len(path) - 1, size=4, replace=False):
        seg = _segment(path, int(i))
        bounds = [seg.interval]
        if path.kernel == "ard-gaussian":
            bounds += [seg.taylor, functools.partial(seg.taylor, exact=True)]
        for (s0, s1), bound in zip(((0.0, 1.0), (0.25, 0.5), (0.9, 1.0)), bounds * 3):
            gap, primal, u = bound(s0, s1)
            assert float(np.sum(u)) == 0.0
            for s in np.linspace(s0, s1, 7):
                alpha, alpha0 = primal(s)
                K = kern.at((1 - s) * path.beta[i] + s * path.beta[i + 1]).K
                assert alpha @ K @ alpha <= path.C  # feasible at every s of the piece
                pobj = float(np.sum((path.y - K @ alpha - alpha0) ** 2))
                dual = 2 * u @ path.y - u @ u - 2 * math.sqrt(path.C * max(u @ K @ u, 0.0))
                assert pobj - dual <= gap
                checked += 1
            s = 0.5 * (s0 + s1)
            alpha, alpha0 = primal(s)
            K = kern.at((1 - s) * path.beta[i] + s * path.beta[i + 1]).K
            opt = cvxpy_inner(K, path.y, path.C)[0]
            tol = 1e-7 * opt
            pobj = float(np.sum((path.y - K @ alpha - alpha0) ** 2))
            dual = 2 * u @ path.y - u @ u - 2 * math.sqrt(path.C * max(u @ K @ u, 0.0))
            assert dual <= opt + tol and opt <= pobj + tol and pobj - opt <= gap + tol
    assert checked == 4 * 3 * 7


def test_second_order_bound_is_second_order(path):
    if path.kernel != "ard-gaussian":
        pytest.skip("the second-order bound is the ARD-Gaussian kernel's")
    seg = _segment(path, len(path) // 2)
    g = [seg.taylor(0.5 - h, 0.5 + h)[0] for h in (0.4, 0.2, 0.1)]
    first = [seg.interval(0.5 - h, 0.5 + h)[0] for h in (0.4, 0.2, 0.1)]
    assert g[2] < first[2] and g[1] < first[1]
    # the gap at the middle is the floor; above it the bound falls ~4x per halving (first order: 2x)
    floor = seg.taylor(0.5, 0.5 + 1e-9)[0]
    assert (g[1] - floor) <= 0.35 * (g[0] - floor) and (g[2] - floor) <= 0.35 * (g[1] - floor)


def test_segments_certified_and_bounds_shrink_with_pieces(path):
    coarse = certify_segments(path, eps=1e-12, max_pieces=1)
    fine = certify_segments(path, eps=1e-12, max_pieces=16)
    assert len(coarse.segments) == len(path) - 1 and not any(s.certified for s in coarse.segments)
    assert all(f.max_gap <= c.max_gap for f, c in zip(fine.segments, coarse.segments))
    rep = certify_segments(path, eps=1e-2, max_pieces=64)
    assert rep.certified_fraction >= 0.9
    assert all(s.certified == (s.max_gap <= 1e-2) for s in rep.segments)


def test_a_corrupted_point_fails_its_two_segments(path):
    k = len(path) // 2
    alpha0 = path.alpha0.copy()
    alpha0[k] += 0.3 * np.std(path.y)  # (an alpha scaled would be undone by the feasibility shrink)
    bad = dataclasses.replace(path, alpha0=alpha0, report=None)
    # from the path's own points only (with exact solves the inner path no longer needs them)
    good = certify_segments(path, eps=1e-2, indices=[k - 2, k - 1, k, k + 1], solves=False)
    rep = certify_segments(bad, eps=1e-2, indices=[k - 2, k - 1, k, k + 1], solves=False)
    assert [s.certified for s in good.segments] == [True] * 4
    assert [s.certified for s in rep.segments] == [True, False, False, True]
    assert rep.uncertified == (k - 1, k)


def test_bad_arguments():
    X, y = friedman1(20, 5, 0)
    p = feature_path(X, y, C=100.0, max_events=1, certify=False)
    with pytest.raises(InputError, match="eps"):
        certify_segments(p, eps=-1)
    with pytest.raises(InputError, match="max_pieces"):
        certify_segments(p, max_pieces=0)
