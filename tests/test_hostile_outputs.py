"""Nothing the user has is lost (each test fails on 0.4.1): every output of every command refuses
every input of the run and every other output, is written atomically, and a run's checkpoint
outlives the final write; one run at a time on a checkpoint; a read-only folder is found before
the run; no message advises deleting the user's files."""

import errno
import os

import numpy as np
import pytest

import approxpath
from approxpath.cli import main
from approxpath.data import make_sinc
from approxpath.compute.distances import sq_distances


@pytest.fixture
def files(sinc_csv, tmp_path):
    """(data CSV, D.npy) of 30 sinc points."""
    D = tmp_path / "D.npy"
    np.save(D, sq_distances(make_sinc(n=30, seed=0)[0]))
    return sinc_csv, D


def _path(data, *extra):
    return ["path", "klasso", "--data", str(data), "--lam", "0.1", "--eps", "0.2", "--range", "1", "4",
            "--no-progress", *extra]


def _snapshot(folder):
    return {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file()}


@pytest.mark.parametrize("clash", ["export=data", "export=out", "out=distances", "export=distances",
                                   "plot=data", "checkpoint=export", "export=checkpoint of out"])
def test_every_output_refuses_every_input_and_every_other_output(files, tmp_path, capsys, clash):
    """0.4.1 checked only --out, --checkpoint and --plot, and only against --data: --export
    overwrote the data, the certificate and D, --out replaced D, each with exit 0."""
    data, D = files
    cert = tmp_path / "cert.npz"
    extra = {"export=data": ["--out", str(cert), "--export", str(data)],
             "export=out": ["--out", str(cert), "--export", str(cert)],
             "out=distances": ["--out", str(D)],
             "export=distances": ["--export", str(D)],
             "plot=data": ["--plot", str(data)],
             "checkpoint=export": ["--checkpoint", str(tmp_path / "c.npz"), "--export", str(tmp_path / "c.npz")],
             "export=checkpoint of out": ["--out", str(cert), "--export", f"{cert}.partial.npz"]}[clash]
    precomputed = ["--kernel", "precomputed", "--distances", str(D)] if "distances" in clash else []
    before = _snapshot(tmp_path)
    capsys.readouterr()
    assert main(_path(data, *precomputed, *extra)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and ("input file" in err or "name the same file" in err)
    assert _snapshot(tmp_path) == before  # nothing written, nothing replaced


def test_demo_refuses_a_figure_over_its_own_data(tmp_path, capsys, monkeypatch):
    """0.4.1: `demo --plot` could overwrite the data `--data-out` wrote."""
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-progress", "--data-out", "d.csv", "--plot", "d.csv", "--out", "c.npz"]) == 2
    assert "name the same file" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_a_table_is_written_atomically(files, tmp_path, capsys, monkeypatch):
    """A full disk while the table is written: the old table stays whole, no temporary file
    is left, status 3 naming the table (0.4.1: write_text over the old one, exit 0)."""
    data, _ = files
    table = tmp_path / "table.csv"
    table.write_text("an older table\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    capsys.readouterr()
    assert main(_path(data, "--export", str(table))) == 3
    err = capsys.readouterr().err
    assert str(table) in err and "No space left" in err
    assert table.read_text() == "an older table\n"
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_the_checkpoint_outlives_a_failed_final_write(files, tmp_path, capsys, monkeypatch):
    """0.4.1 deleted the checkpoint before writing --out: a full disk (or a kill) there lost the
    whole run.  Now the checkpoint is removed only once the certificate is written, and the
    run resumes from it."""
    data, _ = files
    cert = tmp_path / "cert.npz"
    partial = tmp_path / "cert.npz.partial.npz"
    real = approxpath.Path.save

    def full(self, file, *a, **k):
        raise OSError(errno.ENOSPC, f"cannot write {str(file)!r}: No space left on device")

    monkeypatch.setattr(approxpath.Path, "save", full)
    assert main(_path(data, "--out", str(cert))) == 3
    assert partial.exists() and not cert.exists()
    monkeypatch.setattr(approxpath.Path, "save", real)
    solves = []
    problem_cls = approxpath.get_problem("klasso")
    monkeypatch.setattr(problem_cls, "solve", lambda self, t, real=problem_cls.solve, **kw: (
        solves.append(t), real(self, t, **kw))[1])
    assert main(_path(data, "--out", str(cert), "--resume")) == 0
    assert cert.exists() and not partial.exists() and solves == []  # every exact solve came from the checkpoint
    assert approxpath.verify(cert, *make_sinc(n=30, seed=0)).ok


def test_resume_without_a_checkpoint_is_refused(files, tmp_path, capsys):
    """0.4.1 silently started over."""
    data, _ = files
    capsys.readouterr()
    assert main(_path(data, "--out", str(tmp_path / "cert.npz"), "--resume")) == 2
    err = capsys.readouterr().err
    assert "nothing to resume" in err and not (tmp_path / "cert.npz").exists()


def test_a_certificate_given_as_the_checkpoint_is_named_as_such(files, tmp_path, capsys):
    """A finished run's certificate as --checkpoint with --resume was "a checkpoint of another run"."""
    data, _ = files
    cert = tmp_path / "cert.npz"
    assert main(_path(data, "--out", str(cert))) == 0
    before = cert.read_bytes()
    capsys.readouterr()
    assert main(_path(data, "--checkpoint", str(cert), "--resume")) == 2
    assert f"{cert} is a certificate (a finished run's output), not a checkpoint: keep it" in capsys.readouterr().err
    assert cert.read_bytes() == before


def test_one_run_at_a_time_on_a_checkpoint(files, tmp_path, capsys):
    """0.4.1: two runs on one --out shared the checkpoint with no lock."""
    from approxpath.driver.checkpoint import Checkpoint

    data, _ = files
    ckpt = tmp_path / "c.npz"
    X, y = make_sinc(n=30, seed=0)
    holder = Checkpoint(ckpt, approxpath.get_problem("klasso")(X, y, lam=0.1), {})  # another run holds it
    try:
        capsys.readouterr()
        assert main(_path(data, "--checkpoint", str(ckpt))) == 2
        assert "another run is using the checkpoint" in capsys.readouterr().err
    finally:
        holder.release()
    assert main(_path(data, "--checkpoint", str(ckpt))) == 0  # released: the next run goes
    assert not ckpt.exists() and not [f for f in tmp_path.iterdir() if f.name.startswith(".")]


def test_a_read_only_folder_is_found_before_a_parallel_run(files, tmp_path, capsys, monkeypatch):
    """0.4.1 (--workers 2: no checkpoint) found it only when writing --out after the run."""
    from approxpath.cli import commands

    data, _ = files
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o555)
    real = os.open

    def refusing(path, flags, mode=0o777, **kw):  # as the folder would for a user (root writes anyway)
        if str(path).startswith(str(folder)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", refusing)
    monkeypatch.setattr(commands, "run_and_write", lambda *a: pytest.fail("the run started"))
    monkeypatch.setattr(approxpath.driver, "approximate_path", lambda *a, **k: pytest.fail("the run started"))
    try:
        capsys.readouterr()
        assert main(_path(data, "--workers", "2", "--out", str(folder / "cert.npz"))) == 3
        err = capsys.readouterr().err
        assert str(folder / "cert.npz") in err and "Permission denied" in err
    finally:
        os.chmod(folder, 0o755)


def test_no_message_advises_deleting_the_users_files(files, tmp_path, capsys):
    data, _ = files
    ckpt = tmp_path / "c.npz"
    ckpt.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: no checkpoint
    for extra in ([], ["--resume"]):
        capsys.readouterr()
        assert main(_path(data, "--checkpoint", str(ckpt), *extra)) == 2
        err = capsys.readouterr().err
        assert "delete" not in err and "another checkpoint" in err
    assert ckpt.read_bytes() == b"PK\x05\x06" + bytes(18)
