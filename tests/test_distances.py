"""Whole distance matrices (approxpath.compute.distances.pairwise) against scipy's pdist and the formula."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from approxpath.compute import distances, threads
from approxpath.compute.distances import pairwise


@pytest.mark.parametrize("how", ["numpy loop", "cdist rows, 1 thread", "cdist rows, 2 threads"])
@pytest.mark.parametrize("metric", ["sqeuclidean", "cityblock", "weighted"])
def test_pairwise_is_pdist_bit_for_bit_and_the_formula(monkeypatch, how, metric):
    """Both ways of summing, and the row blocks (five of them here) on one thread or two, give
    ``squareform(pdist(X))``'s entries."""
    monkeypatch.setattr(distances, "_LOOP_MAX", 1 << 40 if how == "numpy loop" else 0)
    monkeypatch.setattr(distances, "_CDIST_ROWS", 16)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((70, 6)) * [1, 10, 1e-3, 1, 5, 0.1]
    w = rng.random(6) + 0.1
    with threads(2 if how.endswith("2 threads") else 1):
        D = pairwise(X, weights=w) if metric == "weighted" else pairwise(X, metric)
    if metric == "weighted":
        ref = squareform(pdist(X, "sqeuclidean", w=w))
        formula = (w * (X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    else:
        ref = squareform(pdist(X, metric))
        diff = X[:, None, :] - X[None, :, :]
        formula = (diff**2 if metric == "sqeuclidean" else np.abs(diff)).sum(axis=2)
    assert D.shape == (70, 70)
    np.testing.assert_array_equal(D, ref)
    np.testing.assert_allclose(D, formula, rtol=1e-13, atol=0)
    assert np.all(np.diag(D) == 0) and np.array_equal(D, D.T)


@pytest.mark.parametrize("loop", [True, False], ids=["numpy loop", "cdist rows"])
def test_cross_distances_are_cdist_bit_for_bit_and_the_formula(monkeypatch, loop):
    from scipy.spatial.distance import cdist

    from approxpath.compute.distances import cross_sq_distances

    monkeypatch.setattr(distances, "_LOOP_MAX", 1 << 40 if loop else 0)
    monkeypatch.setattr(distances, "_CDIST_ROWS", 5)
    rng = np.random.default_rng(4)
    scale = [1, 10, 1e-3, 1, 5, 0.1]
    A, B = rng.standard_normal((23, 6)) * scale, rng.standard_normal((70, 6)) * scale
    with threads(2):
        D = cross_sq_distances(A, B)
    assert D.shape == (23, 70)
    np.testing.assert_array_equal(D, cdist(A, B, "sqeuclidean"))
    np.testing.assert_allclose(D, ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2), rtol=1e-13, atol=0)
    np.testing.assert_array_equal(cross_sq_distances(B, B), pairwise(B))  # the same entries as the whole matrix's
