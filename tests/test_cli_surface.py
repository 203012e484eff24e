"""``approxpath surface`` and ``approxpath select --over c,bandwidth``: the certificate written
verifies (``approxpath verify``), the selection prints its delta, bad ``--over`` is a usage error."""

import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_classification


@pytest.fixture
def data(tmp_path):
    X, y = make_classification(n=24, seed=3, separation=1.5)
    f = tmp_path / "cls.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",")
    return str(f)


def test_surface_writes_a_certificate_that_verifies(data, tmp_path, capsys):
    out = str(tmp_path / "s.npz")
    assert main(["surface", "kernel_svm", "--data", data, "--eps", "0.1", "--relative", "--range", "0.5", "2",
                 "--weights", "0.5", "2", "--out", out, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"] and summary["weight"] == "c" and summary["cells"] >= 1
    assert main(["verify", out, "--data", data]) == 0
    assert "certified" in capsys.readouterr().out


def test_select_over_two_parameters(data, capsys):
    pytest.importorskip("sklearn")
    code = main(["select", "kernel_svm", "--data", data, "--cv", "2", "--over", "c,bandwidth", "--range", "0.5", "2",
                 "--weights", "0.5", "2", "--eps", "0.1", "--relative", "--tol", "0.5", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == (0 if result["reached"] else 1)
    assert result["weight"] == "c" and 0.5 <= result["w"] <= 2 and 0.5 <= result["t"] <= 2


def test_over_names_the_problem_s_weight(data, capsys):
    assert main(["select", "kernel_svm", "--data", data, "--cv", "2", "--over", "lam,bandwidth"]) == 2
    assert "--over" in capsys.readouterr().err
