"""Smoke tests of the regression examples (their --quick mode): they run, certify and write a PNG."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script", ["robust_regression_bandwidth.py", "klasso_sinc.py"])
def test_example_quick(script, tmp_path, capsys):
    main = runpy.run_path(str(EXAMPLES / script), run_name="example")["main"]
    out = tmp_path / "figure.png"
    assert main(["--quick", "--out", str(out)]) == 0
    assert out.stat().st_size > 20_000  # a real figure, not an empty canvas
    text = capsys.readouterr().out
    assert "certified" in text and "figure written" in text
