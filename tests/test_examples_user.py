"""Smoke tests of the user-side examples: they run, report and write their figure."""

import runpy
import warnings
from pathlib import Path

import pytest


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")


def test_sklearn_select_bandwidth(tmp_path, capsys):
    main = runpy.run_path(str(EXAMPLES / "sklearn_select_bandwidth.py"), run_name="example")["main"]
    png = tmp_path / "validation.png"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["--plot", str(png)]) == 0
    ours = [str(w.message) for w in caught if w.category.__module__.startswith("approxpath")]
    assert not ours, ours  # (a RangeWarning said the choice sat at the range's end; others' deprecations aside)
    text = capsys.readouterr().out
    assert text.count("certified: True") == 2 and "test accuracy" in text and png.stat().st_size > 20_000
    assert "KernelPathRidge(lam=None): loocv" in text and "no point of the box is better by more than" in text


def test_kernel_ridge_loocv_example(tmp_path, capsys):
    main = runpy.run_path(str(EXAMPLES / "kernel_ridge_loocv.py"), run_name="example")["main"]
    png = tmp_path / "loocv.png"
    box = tmp_path / "box.png"
    assert main(["--eps", "0.01", "--plot", str(png), "--plot-box", str(box), "--box-tol", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "LOOCV along the path" in text and "certified" in text and png.stat().st_size > 20_000
    assert "certified choice of (t, lam) by LOOCV" in text and "no point of the box is better by more than" in text
    assert box.stat().st_size > 20_000


@pytest.mark.parametrize("example, args", [
    ("klasso_sinc.py", ["--quick"]),
    ("robust_regression_bandwidth.py", []),
    ("exact_vs_approximate.py", []),
    ("feature_selection_friedman.py", []),
    ("kernel_ridge_loocv.py", ["--plot", "f.png"]),
    ("sklearn_select_bandwidth.py", ["--plot", "f.png"]),
])
def test_an_example_without_matplotlib_says_so_before_its_work(example, args, tmp_path, monkeypatch, capsys):
    """Without the plot extra an example whose figure is asked for stops at once, naming the
    extra (four of them ended in a traceback of matplotlib's import after their whole run)."""
    import sys

    main = runpy.run_path(str(EXAMPLES / example), run_name="example")["main"]
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ImportError, match=r"^plots need matplotlib: pip install 'approxpath\[plot\]'$"):
        main(args)
    assert capsys.readouterr().out == "" and list(tmp_path.iterdir()) == []
