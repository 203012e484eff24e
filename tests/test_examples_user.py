"""Smoke tests of the user-side examples: they run, report and write their figure."""

import runpy
import sys
from pathlib import Path

import pytest

from approxpath import registry

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")


def test_sklearn_select_bandwidth(tmp_path, capsys):
    main = runpy.run_path(str(EXAMPLES / "sklearn_select_bandwidth.py"), run_name="example")["main"]
    png = tmp_path / "validation.png"
    assert main(["--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert text.count("certified: True") == 2 and "test accuracy" in text and png.stat().st_size > 20_000


def test_plugin_demo_from_the_source_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    main = runpy.run_path(str(EXAMPLES / "plugin_kernel_ridge" / "demo.py"), run_name="example")["main"]
    png = tmp_path / "loocv.png"
    assert main(["--eps", "0.01", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "LOOCV along the path" in text and "certified" in text and png.stat().st_size > 20_000
