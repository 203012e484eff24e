"""Opt-in reproductions of the paper's figures on its LIBSVM data (``pytest -m slow``)."""

import sys
from pathlib import Path

import pytest

import approxpath

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
_common = pytest.importorskip("_common")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ionosphere():
    if not (_common.LIBSVM_DIR / "ionosphere_scale").is_file():
        pytest.skip(f"the LIBSVM files are not in {_common.LIBSVM_DIR}: set APPROXPATH_LIBSVM_DIR to their folder")
    return _common.load("ionosphere_scale")


@pytest.mark.parametrize("bias,col", [("dynamic", 0), ("fixed", 1)])
def test_paper_strategy_matches_reference_counts(ionosphere, bias, col):
    X, y = ionosphere
    for eps, ref in zip(_common.EPS_GRID, _common.REFERENCE["ionosphere_scale"]):
        problem = approxpath.get_problem("kernel_svm")(X, y, c=_common.C, bias=bias)
        path = approxpath.approximate_path(problem, eps=eps, interval=_common.INTERVAL, strategy="paper")
        assert _common.within(path.exact_solves, ref[col]), (bias, eps, path.exact_solves, ref[col])
