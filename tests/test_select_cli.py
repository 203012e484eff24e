"""The command line's select (approxpath select): the choice, its JSON and its figure, the
shuffled folds, and what a long run says, against the Python selection on the same data."""


import json

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.data import make_classification, make_sinc

from selection_helpers import ridge_cv_loss

LAM = 0.1


pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(scope="module")
def sinc():
    return make_sinc(n=30, noise=0.1, seed=2)


@pytest.fixture
def sinc_csv(tmp_path, sinc):
    X, y = sinc
    f = tmp_path / "sinc.csv"
    np.savetxt(f, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    return f


def test_cli_select_figure_names_the_problem_and_the_data(sinc_csv, tmp_path, monkeypatch):
    """A selection's figure said which criterion and folds but not which problem or data file."""
    pytest.importorskip("matplotlib")
    import approxpath.plotting

    titles = []
    monkeypatch.setattr(approxpath.plotting, "save_figure", lambda fig, file: titles.append(fig.axes[0].get_title()))
    assert main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1",
                 "--criterion", "lml", "--range", "0.2", "20", "--tol", "0.05", "--plot", str(tmp_path / "f.png")]) == 0
    assert titles[0].startswith("kernel_ridge on sinc.csv\n") and "exact solves" in titles[0]


def test_cli_select(sinc_csv, tmp_path, capsys, sinc):
    fig = tmp_path / "select.png"
    rc = main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--cv", "5",
               "--criterion", "mse", "--eps", "1e-4", "--range", "0.2", "20", "--tol", "0.005", "--json",
               "--plot", str(fig)])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["reached"] and out["kind"] == "certified" and out["folds"] == 5
    assert out["problem"] == "kernel_ridge" and out["range"] == [0.2, 20.0] and fig.stat().st_size > 0
    X, y = sinc
    from sklearn.model_selection import KFold

    folds = list(KFold(5).split(X))
    at = ridge_cv_loss(X, y, folds, out["t"], LAM)
    assert out["value"][0] <= at <= out["value"][1] and out["delta"] <= 0.005
    assert min(ridge_cv_loss(X, y, folds, t, LAM) for t in np.geomspace(0.2, 20.0, 200)) >= at - out["delta"] - 1e-12
    rc = main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1",
               "--criterion", "lml", "--range", "0.2", "20", "--tol", "0.05"])
    text = capsys.readouterr().out
    assert rc == 0 and "lml" in text and "delta" in text
    rc = main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--cv", "5",
               "--criterion", "mse", "--range", "0.2", "20", "--tol", "1e-9", "--max-solves", "15"])
    captured = capsys.readouterr()
    assert rc == 1 and "the budget --max-solves = 15 is spent" in captured.err, captured.err
    assert main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--criterion", "aicc"]) == 2


def test_cli_select_shuffle(sinc_csv, capsys, sinc):
    """``--shuffle SEED``: the folds of ``KFold(5, shuffle=True, random_state=SEED)``, the seed in
    the JSON; without ``--cv`` refused in the command line's words."""
    from sklearn.model_selection import KFold

    rc = main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1", "--cv", "5",
               "--shuffle", "3", "--criterion", "mse", "--range", "0.2", "20", "--tol", "0.005", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["reached"] and out["shuffle"] == 3
    X, y = sinc
    folds = list(KFold(5, shuffle=True, random_state=3).split(X))
    at = ridge_cv_loss(X, y, folds, out["t"], LAM)
    assert out["value"][0] <= at <= out["value"][1]
    assert min(ridge_cv_loss(X, y, folds, t, LAM) for t in np.geomspace(0.2, 20.0, 200)) >= at - out["delta"] - 1e-12
    unshuffled = list(KFold(5).split(X))
    assert not out["value"][0] <= ridge_cv_loss(X, y, unshuffled, out["t"], LAM) <= out["value"][1]
    for extra in (["--shuffle", "3"], ["--cv", "5", "--shuffle", "-2"]):
        assert main(["select", "kernel_ridge", "--data", str(sinc_csv), "--format", "csv", "--lam", "0.1",
                     "--criterion", "mse" if "--cv" in extra else "loocv", *extra]) == 2
        err = capsys.readouterr().err
        assert ("pass --cv K" if "--cv" not in extra else "seed from 0") in err and "cv=" not in err


def test_a_long_one_core_selection_names_workers_where_they_enclose(sinc_csv, tmp_path, capsys, monkeypatch):
    """`select` names --workers after a long one-core run where the workers would take the
    folds' paths and enclosures (kLASSO), not where the enclosures stay here (the SVM)."""
    from approxpath.cli import running

    monkeypatch.setattr(running, "_ONE_CORE_NOTE_S", 0.0)
    monkeypatch.setattr(running, "_ONE_CORE_RATIO", 1e9)
    monkeypatch.setattr("approxpath.compute.parallelism.cores", lambda: 2)
    klasso = ["select", "klasso", "--data", str(sinc_csv), "--lam", "0.1", "--cv", "2", "--criterion", "mae",
              "--range", "0.5", "4", "--max-solves", "40", "--no-progress"]
    main(klasso)
    assert "--workers 2 runs the folds' paths and the enclosures" in capsys.readouterr().err
    X, y = make_classification(n=40, d=2, seed=4)
    np.savetxt(tmp_path / "c.csv", np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="")
    main(["select", "kernel_svm", "--data", str(tmp_path / "c.csv"), "--c", "1", "--cv", "2", "--range", "0.5", "4",
          "--max-solves", "40", "--no-progress"])
    captured = capsys.readouterr()
    assert "delta" in captured.out and "busy" not in captured.err


def test_cli_select_without_cv_names_the_flag(sinc_csv, capsys):
    """Without --cv a problem with no closed-form criterion said "pass cv=5 (or X_val, y_val)":
    Python's words."""
    for over in ([], ["--over", "lam,bandwidth", "--weights", "0.01", "1"]):
        assert main(["select", "klasso", "--data", str(sinc_csv), "--format", "csv", *over]) == 2
        err = capsys.readouterr().err
        assert "pass --cv K (e.g. --cv 5)" in err and "cv=5" not in err and "X_val" not in err


def test_json_carries_the_edge_warning(tmp_path, capsys):
    """A script that reads --json alone sees what standard error says of the choice."""
    X, y = make_sinc(n=50, noise=0.1, seed=0)
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    assert main(["select", "kernel_ridge", "--data", str(data), "--lam", "0.1", "--criterion", "loocv",
                 "--range", "0.5", "4", "--tol", "0.01", "--json"]) in (0, 1)
    captured = capsys.readouterr()
    out = json.loads(captured.out.strip().splitlines()[-1])
    assert any("may be matched at the lower end of --range" in w for w in out["warnings"])
    # the fixed λ, the kernel and the scaling a paper's reader needs (the choice is of the bandwidth alone)
    assert (out["options"], out["preprocess"], out["cv"], out["tol"]) == ({"lam": 0.1, "kernel": "gaussian"}, "none",
                                                                          None, 0.01)
    assert [line for line in captured.err.splitlines() if line.startswith("approxpath: ")] == \
        [f"approxpath: {w}" for w in out["warnings"]]
