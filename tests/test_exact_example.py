"""Smoke test of examples/exact_vs_approximate.py (quick mode)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "exact_vs_approximate.py"


@pytest.mark.slow  # a long characterization (tens of seconds): opt in with -m slow
def test_exact_vs_approximate_example_runs_and_writes_its_figure(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("exact_vs_approximate", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    png = tmp_path / "figure.png"
    out = module.main(["--quick", "--out", str(png)])
    assert png.stat().st_size > 10_000
    sinc = out["sinc"]
    assert sinc["report"].ok and sinc["approx"].certified
    assert np.all(sinc["diff"] <= sinc["eps"]) and np.all(sinc["diff"] >= -1e-8)
    assert out["cond"]["cond_K"][0] > 1e6 > out["cond"]["cond_K"][-1]  # Giesen's Figure 1: cond falls with t
    assert "exact kernel path" in capsys.readouterr().out
