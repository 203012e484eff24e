"""Whole distance matrices (approxpath.compute.distances.pairwise) against scipy's pdist and the formula."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

from approxpath.compute import distances
from approxpath.compute.distances import pairwise


@pytest.mark.parametrize("loop", [True, False], ids=["numpy loop", "pdist"])
@pytest.mark.parametrize("metric", ["sqeuclidean", "cityblock", "weighted"])
def test_pairwise_is_pdist_bit_for_bit_and_the_formula(monkeypatch, loop, metric):
    monkeypatch.setattr(distances, "_LOOP_MAX", 1 << 40 if loop else 0)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((70, 6)) * [1, 10, 1e-3, 1, 5, 0.1]
    w = rng.random(6) + 0.1
    if metric == "weighted":
        D, ref = pairwise(X, weights=w), squareform(pdist(X, "sqeuclidean", w=w))
        formula = (w * (X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    else:
        D, ref = pairwise(X, metric), squareform(pdist(X, metric))
        diff = X[:, None, :] - X[None, :, :]
        formula = (diff**2 if metric == "sqeuclidean" else np.abs(diff)).sum(axis=2)
    assert D.shape == (70, 70)
    np.testing.assert_array_equal(D, ref)
    np.testing.assert_allclose(D, formula, rtol=1e-13, atol=0)
    assert np.all(np.diag(D) == 0) and np.array_equal(D, D.T)



@pytest.mark.parametrize("loop", [True, False], ids=["numpy loop", "cdist"])
def test_cross_distances_are_cdist_bit_for_bit_and_the_formula(monkeypatch, loop):
    from scipy.spatial.distance import cdist

    from approxpath.compute.distances import cross_sq_distances

    monkeypatch.setattr(distances, "_LOOP_MAX", 1 << 40 if loop else 0)
    rng = np.random.default_rng(4)
    scale = [1, 10, 1e-3, 1, 5, 0.1]
    A, B = rng.standard_normal((23, 6)) * scale, rng.standard_normal((70, 6)) * scale
    D = cross_sq_distances(A, B)
    assert D.shape == (23, 70)
    np.testing.assert_array_equal(D, cdist(A, B, "sqeuclidean"))
    np.testing.assert_allclose(D, ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2), rtol=1e-13, atol=0)
    np.testing.assert_array_equal(cross_sq_distances(B, B), pairwise(B))  # the same entries as the whole matrix's
