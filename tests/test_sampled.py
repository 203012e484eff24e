"""Problems without an interval bound get sampled paths: placed by every strategy, split only
until the gaps at a piece's sampled points meet eps, of the order of a certified path's size,
and said to be sampled by the path, the certificate, verify and the command line.

References: the toy problem's closed-form optimum, and kernel ridge regression's optimum from a
linear solve written here (numpy, not the problem's Cholesky route)."""

import numpy as np
import pytest

import approxpath
from approxpath.certificate import verify
from approxpath.certificate.claims import SAMPLE_LEVELS, claimed_on
from approxpath.cli import main
from approxpath.data import make_sinc
from approxpath.driver import STRATEGIES
from approxpath.testing import ToyProjection

from certificate_helpers import tamper
import plugin_problems
from plugin_problems import SampledRidge, SampledToy

KernelRidge = approxpath.get_problem("kernel_ridge")


def _toy_data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((12, 1)), rng.standard_normal(12)


def _ridge_optimum(problem, tau):
    """min_c lam c'Kc + ||Kc - y||^2 from (K + lam I) c = y, K built here from the data."""
    t, lam = problem.sweep.at(tau)
    X = problem.X
    K = np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    c = np.linalg.solve(K + lam * np.eye(len(X)), problem.y)
    return lam * c @ K @ c + np.sum((K @ c - problem.y) ** 2)


def _cases():
    X, y = _toy_data()
    Xs, ys = make_sinc(n=30, seed=2)
    return [
        ("toy", ToyProjection(X, y), SampledToy(X, y), (0.1, 3.0), 0.05,
         lambda p, t: p.optimum(t)),
        ("ridge-bandwidth", KernelRidge(Xs, ys, lam=0.1), SampledRidge(Xs, ys, lam=0.1), (2.0**-3, 2.0**3), 0.05,
         _ridge_optimum),
        ("ridge-lam", KernelRidge(Xs, ys, lam=0.1, bandwidth=1.0, parameter="lam"),
         SampledRidge(Xs, ys, lam=0.1, bandwidth=1.0, parameter="lam"), (0.01, 1.0), 0.05, _ridge_optimum),
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name,certified,sampled,interval,eps,optimum", _cases(), ids=[c[0] for c in _cases()])
def test_every_strategy_gives_a_sampled_path_of_a_certified_path_size(name, certified, sampled, interval, eps, optimum,
                                                                      strategy, tmp_path):
    reference = approxpath.approximate_path(certified, eps=eps, interval=interval, strategy=strategy)
    path = approxpath.approximate_path(sampled, eps=eps, interval=interval, strategy=strategy)
    assert reference.certified
    assert {p.kind for p in path.pieces} == {"sampled"} and not path.certified
    assert path.pieces[0].lo == interval[0] and path.pieces[-1].hi == interval[1]
    assert all(a.hi == b.lo for a, b in zip(path.pieces[:-1], path.pieces[1:]))
    assert len(path.pieces) <= 2 * len(reference.pieces), (len(path.pieces), len(reference.pieces))
    assert path.max_gap_bound <= eps
    # what each piece claims holds against the independent optimum, at every sampled point
    for piece in path.pieces:
        for x, _ in claimed_on("sampled", piece.lo, piece.hi):
            sub = sampled.primal_objective(sampled.primal_at(piece.primal, x), x) - optimum(sampled, x)
            assert -1e-9 <= sub <= piece.gap_bound + 1e-9 * (1 + abs(optimum(sampled, x)))
    report = verify(path.save(tmp_path / "cert.npz"), sampled.X, sampled.y)
    assert report.ok and report.sampled == len(path.pieces) and report.certified == 0, str(report)


def test_sampled_pieces_claim_five_points_and_old_files_three():
    lo, hi = 1.0, 16.0
    assert SAMPLE_LEVELS == 2
    assert [x for x, _ in claimed_on("sampled", lo, hi)] == pytest.approx([1.0, 2.0, 4.0, 8.0, 16.0])
    assert [x for x, _ in claimed_on("sampled", lo, hi, levels=1)] == pytest.approx([1.0, 4.0, 16.0])
    assert claimed_on("certified", lo, hi) == [(lo, hi)]


def _sampled_certificate(tmp_path):
    Xs, ys = make_sinc(n=30, seed=2)
    problem = SampledRidge(Xs, ys, lam=0.1)
    path = approxpath.approximate_path(problem, eps=0.05, interval=(2.0**-3, 2.0**3))
    return path.save(tmp_path / "cert.npz"), Xs, ys


def test_a_sampled_piece_relabelled_certified_fails_verification(tmp_path):
    cert, X, y = _sampled_certificate(tmp_path)

    def relabel(arrays, meta):
        arrays["kind"][:] = "certified"
        meta["piece_kinds"] = ["certified"] * arrays["kind"].size

    forged = tamper(cert, tmp_path / "forged.npz", relabel, rehash=True)
    report = verify(forged, X, y)
    assert not report.ok and "no bound valid on a whole piece" in report.failures[0]


def test_a_lowered_sampled_bound_or_a_wider_sampling_claim_fails(tmp_path):
    cert, X, y = _sampled_certificate(tmp_path)
    lowered = tamper(cert, tmp_path / "low.npz", lambda a, m: a["gap_bound"].__imul__(0.5), rehash=True)
    assert not verify(lowered, X, y).ok
    silly = tamper(cert, tmp_path / "levels.npz", lambda a, m: m.__setitem__("sample_levels", 40), rehash=True)
    report = verify(silly, X, y)
    assert not report.ok and "sample_levels" in report.failures[0]


def test_the_command_line_says_sampled(tmp_path, capsys):
    Xs, ys = make_sinc(n=30, seed=2)
    data = tmp_path / "sinc.csv"
    np.savetxt(data, np.column_stack([Xs, ys]), delimiter=",")
    cert = tmp_path / "cert.npz"
    rc = main(["path", "kernel_ridge_sampled", "--data", str(data), "--format", "csv", "--lam", "0.1", "--eps", "0.05",
               "--range", "2^-3", "2^3", "--out", str(cert), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0 and "0 certified" in out and "sampled" in out
    assert main(["verify", str(cert)]) == 0
    assert "0 certified" in capsys.readouterr().out
    assert main(["verify", str(cert), "--require-certified"]) == 1
    capsys.readouterr()
    assert main(["problems"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("kernel_ridge_sampled"))
    assert "sampled" in line


def test_a_surface_of_a_bound_that_holds_at_points_only_is_refused_and_its_file_fails(tmp_path):
    """The surface engine turned the bandwidth paths' sampled pieces into certified cells (490
    "certified" cells, ``surface.certified`` True) and verify passed the file: a cell's bound
    extends a piece's, which such a bound does not prove."""
    Xs, ys = make_sinc(n=20, seed=2)
    box = dict(eps=0.05, weights=(0.05, 0.2), bandwidths=(0.5, 2.0))
    with pytest.raises(approxpath.InputError, match="kernel_ridge_sampled bounds no cells of the bandwidth and a "
                                                    "weight: its bound holds at points only"):
        approxpath.approximate_surface(SampledRidge(Xs, ys, lam=0.1), **box)
    honest = approxpath.approximate_surface(KernelRidge(Xs, ys, lam=0.1), **box).save(tmp_path / "s.npz")
    assert verify(honest, Xs, ys).ok
    forged = tamper(honest, tmp_path / "renamed.npz", lambda a, m: m.__setitem__("problem", "kernel_ridge_sampled"),
                    rehash=True)
    report = verify(forged, Xs, ys)
    assert not report.ok and "its bound holds at points only" in report.failures[0]


class _RipplingBound(plugin_problems.SampledToyBound):
    # a valid, looser bound: the toy's gap plus two crests of 0.02 (two fifths of eps) over
    # [0.1, 3], at a quarter and three quarters of it in ln t, 0 at its ends and its middle
    def _gap(self, primal, dual, t):
        return super()._gap(primal, dual, t) + 0.01 * (1.0 - np.cos(4.0 * np.pi * np.log(t / 0.1) / np.log(30.0)))


class _Rippling(SampledToy):
    Bound = _RipplingBound


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_sampled_piece_stores_the_largest_gap_of_all_its_sampled_points(strategy):
    """Where the gap peaks inside a piece, the stored gap is the largest at every sampled point
    (what verify re-checks), not at the ends alone."""
    X, y = _toy_data()
    problem = _Rippling(X, 0.01 * y)  # the toy's own gaps far below the crests
    path = approxpath.approximate_path(problem, eps=0.05, interval=(0.1, 3.0), strategy=strategy)
    inside = 0
    for piece in path.pieces:
        gaps = [problem.bound.gap(piece.primal, piece.dual, x) for x, _ in claimed_on("sampled", piece.lo, piece.hi)]
        assert piece.kind == "sampled" and max(gaps) <= piece.gap_bound <= 0.05
        inside += max(gaps[1:-1]) > max(gaps[0], gaps[-1]) + 1e-3
    assert inside >= 1  # a piece whose ends alone would understate its gap
