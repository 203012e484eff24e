"""Forged certificates that ``verify`` must handle: a pair its bound cannot evaluate is refused,
not a crash (klasso's lambda bound read a moving primal of degree 0 -- a weighted constant point,
no solver makes one -- as a point and raised AttributeError; any bound that raises on a stored
pair gives a failed report naming the piece); and pieces weakened to "sampled" are noted."""

import numpy as np

import approxpath
from approxpath.data import make_sinc

from certificate_helpers import tamper


def path_degrees(path):
    return [p.primal.degree for p in path.pieces if hasattr(p.primal, "degree")]


def _klasso_lambda_certificate(tmp_path):
    X, y = make_sinc(n=24, low=-3.0, high=3.0, noise=0.1, seed=5)
    problem = approxpath.get_problem("klasso")(X, y, bandwidth=1.0, parameter="lam")
    path = approxpath.approximate_path(problem, eps=0.05, interval=(0.01, 1.0), strategy="two-sided", progress=False)
    assert not np.any(path_degrees(path))  # fixed pairs, stored with the weight 1
    return X, y, path.save(tmp_path / "cert.npz")


def test_a_weighted_constant_primal_on_the_lambda_path_is_bounded(tmp_path):
    X, y, cert = _klasso_lambda_certificate(tmp_path)

    def weigh(arrays, meta):  # every fixed primal becomes 1.5 times itself, as a moving point of degree 0
        arrays["primal_weights"][:, 0, 0] *= 1.5

    forged = tamper(cert, tmp_path / "forged.npz", weigh, rehash=True)
    report = approxpath.verify(forged, X, y)
    assert not report.ok and any("exceeds" in f for f in report.failures), report.failures
    assert not any("cannot be evaluated" in f for f in report.failures)


def test_a_bound_that_raises_fails_the_piece(tmp_path, monkeypatch):
    X, y, cert = _klasso_lambda_certificate(tmp_path)
    assert approxpath.verify(cert, X, y).ok
    cls = approxpath.get_problem("klasso").Bound

    def broken(self, primal, dual, lo, hi=None):
        raise ZeroDivisionError("a forged field")

    for bound_cls in {cls, *cls.__subclasses__()}:
        monkeypatch.setattr(bound_cls, "gap", broken)
    report = approxpath.verify(cert, X, y)
    assert not report.ok and report.failures
    assert all("its bound cannot be evaluated (ZeroDivisionError: a forged field)" in f for f in report.failures)
    assert np.isfinite(report.max_gap_bound)


def test_pieces_weakened_to_sampled_are_noted(tmp_path):
    """A file whose certified pieces were relabelled "sampled" still states true claims (at its
    sample points) and verifies, but approxpath never writes such pieces for a problem whose
    bound holds on whole pieces: the report says so, and --require-certified refuses it."""
    from approxpath.cli import main

    X, y, cert = _klasso_lambda_certificate(tmp_path)

    def weaken(arrays, meta):
        arrays["kind"] = np.array(["sampled"] * arrays["kind"].size)
        meta["piece_kinds"] = ["sampled"] * arrays["kind"].size

    forged = tamper(cert, tmp_path / "sampled.npz", weaken, rehash=True)
    report = approxpath.verify(forged, X, y)
    assert report.ok and report.sampled > 0 and report.certified == 0
    assert any("claim their gap only at sampled points" in n for n in report.notes), report.notes
    assert not any("sampled points" in n for n in approxpath.verify(cert, X, y).notes)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    assert main(["verify", str(forged), "--data", str(tmp_path / "d.csv"), "--format", "csv",
                 "--require-certified"]) == 1
