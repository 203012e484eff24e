"""The driver end to end on a problem with a closed-form optimal path, and its argument checks."""

import re

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.errors import EpsilonTooSmallError

from approxpath.testing import ToyBound, ToyProjection
from approxpath.testing.toy import ToyDual, ToyPrimal


@pytest.fixture
def toy():
    rng = np.random.default_rng(5)
    return ToyProjection(rng.standard_normal((20, 1)), rng.standard_normal(20))


@pytest.mark.parametrize("strategy,eps", [(s, e) for s in approxpath.STRATEGIES for e in (0.5, 0.05)
                                          if not (s == "grid" and e == 0.05)])  # the grid's 0.05 run is slow
def test_toy_path_is_eps_optimal_against_closed_form(toy, eps, strategy):
    path = approxpath.approximate_path(toy, eps=eps, interval=(0.1, 10.0), strategy=strategy)
    assert path.certified
    rng = np.random.default_rng(0)
    for t in np.exp(rng.uniform(np.log(0.1), np.log(10.0), 200)):
        x = path.primal(t).x
        assert x.min() >= 0  # feasible
        sub = toy.primal_objective(path.primal(t), t) - toy.optimum(t)
        assert -1e-9 <= sub <= eps
        assert sub <= path.gap_bound(t) + 1e-12


@pytest.mark.slow  # a long characterization (tens of seconds): opt in with -m slow
def test_interpolation_needs_fewer_solves(toy):
    # x*(t) = max(0, t c) is linear in t: combinations of two exact pairs are nearly exact
    counts = {s: approxpath.approximate_path(toy, eps=0.01, interval=(0.1, 10.0), strategy=s).exact_solves
              for s in ("interpolate", "two-sided", "paper")}
    assert counts["interpolate"] < counts["two-sided"] <= counts["paper"]


@pytest.mark.slow  # a long characterization (tens of seconds): opt in with -m slow
def test_toy_solve_count_follows_one_over_eps(toy):
    # The gap of the pair solved at t grows like (tau - t)^2 ||c_-||^2 / 2 here, so the
    # one-sided search needs about (range) * ||c_-|| / sqrt(2 eps) solves: O(eps^-1/2).
    counts = [approxpath.approximate_path(toy, eps=e, interval=(0.1, 10.0), strategy="paper").exact_solves
              for e in (0.4, 0.1, 0.025)]
    assert counts[0] < counts[1] < counts[2]
    assert 1.5 <= counts[2] / counts[1] <= 2.5


def test_relative_eps(toy):
    path = approxpath.approximate_path(toy, eps=0.01, interval=(0.5, 5.0), relative=True)
    assert path.certified and path.relative
    for t in np.geomspace(0.5, 5.0, 50):
        assert toy.primal_objective(path.primal(t), t) - toy.optimum(t) <= 0.01 * toy.optimum(t) + 1e-12


def test_path_queries(toy):
    path = approxpath.approximate_path(toy, eps=0.1, interval=(0.1, 10.0))
    p = path.pieces[len(path.pieces) // 2]
    t = 0.5 * (p.lo + p.hi)
    assert path.piece_at(t) is p
    assert path.gap_bound(t) == p.gap_bound
    assert path.dual(t) is p.dual
    with pytest.raises(ValueError, match="outside"):
        path.primal(20.0)
    assert path.solve_points[0] == 0.1 and len(path.solve_points) == path.exact_solves
    assert "certified" in path.summary()
    js = path.to_json()
    assert {"problem", "eps", "range", "exact_solves", "pieces", "max_gap_bound", "certified", "wall_s"} <= set(js)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf"), "0.1"])
def test_bad_eps(toy, eps):
    with pytest.raises(InputError, match="eps"):
        approxpath.approximate_path(toy, eps=eps, interval=(0.1, 1.0))


@pytest.mark.parametrize("interval,match", [((1.0, 0.1), "lo < hi"), ((0.5, 0.5), "lo < hi"),
                                            ((0.0, 1.0), "> 0"), ((-1.0, 1.0), "> 0"),
                                            ((0.1, float("inf")), "finite"), ((1.0,), "pair")])
def test_bad_interval(toy, interval, match):
    with pytest.raises(InputError, match=match):
        approxpath.approximate_path(toy, eps=0.1, interval=interval)


def test_unknown_strategy(toy):
    with pytest.raises(InputError, match="did you mean 'paper'"):
        approxpath.approximate_path(toy, eps=0.1, interval=(0.1, 1.0), strategy="papr")


def test_eps_below_solver_precision(toy, monkeypatch):
    solve = ToyProjection.solve

    def sloppy(self, t, solver=None, time_limit=None, warm=None, enough=None, need=None):
        primal, dual = solve(self, t)
        return type(primal)(x=primal.x + 1e-3), dual

    monkeypatch.setattr(ToyProjection, "solve", sloppy)
    with pytest.raises(EpsilonTooSmallError, match="use eps >="):
        approxpath.approximate_path(toy, eps=1e-8, interval=(0.1, 1.0))


def test_a_solve_at_the_solvers_mark_but_above_what_the_path_needs_is_tightened(toy, monkeypatch):
    # a backend whose default settings leave a gap inside the EXACT_GAP mark (~5e-8 here, the
    # mark ~1e-6) and whose tight settings are exact: a path at eps = 2e-8 needs its solves'
    # gaps below 1e-8.  The pair at the mark was accepted, and the path refused
    # (EpsilonTooSmallError); the tight try is now made.
    from approxpath.solvers import current_settings

    tried = []

    def candidate(self, backend, t, warm=None):
        tight = current_settings().tight
        tried.append(tight)
        primal = ToyPrimal(x=np.maximum(0.0, t * self.c) + (0.0 if tight else 1e-8))
        return primal, ToyDual(mu=np.maximum(0.0, -t * self.c))

    monkeypatch.setattr(ToyProjection, "candidate", candidate)
    path = approxpath.approximate_path(toy, eps=2e-8, interval=(0.5, 0.6))
    assert path.certified and True in tried
    for t in np.linspace(0.5, 0.6, 11):  # against the closed form
        assert toy.primal_objective(path.primal(t), t) - toy.optimum(t) <= 2e-8
    tried.clear()
    path = approxpath.approximate_path(toy, eps=1e-3, interval=(0.5, 0.6))  # loose: no tight try
    assert path.certified and tried and True not in tried


def test_interpolation_weights_are_weighed_to_the_problems_depth(toy, monkeypatch):
    # weighing_depth levels of bisection middles per segment get a weighed combination; 0: none,
    # the weight is the position in the segment
    import approxpath.driver.certifier as certifier

    calls = []
    original = certifier.restored_gaps  # the generic guide (the toy has no vectorized one)

    def spy(problem, *args):
        if len(args[2]) > 1:  # a grid of weights (a single weight is a gap estimate)
            calls.append(args)
        return original(problem, *args)

    monkeypatch.setattr(certifier, "restored_gaps", spy)
    counts, segments = {}, {}
    for depth in (0, 1, 4):
        monkeypatch.setattr(type(toy), "weighing_depth", depth, raising=False)
        calls.clear()
        path = approxpath.approximate_path(toy, eps=0.01, interval=(0.1, 10.0))
        assert path.certified
        counts[depth], segments[depth] = len(calls), path.exact_solves - 1
    assert counts[0] == 0
    # a grid and a refinement at each segment's middle, for its first piece and for the step
    # to the next solve (once where the two coincide)
    assert 0 < counts[1] <= 4 * segments[1]
    assert counts[4] > counts[1]


def _covers(path, lo, hi):
    ends = [(p.lo, p.hi) for p in path.pieces]
    return ends[0][0] == lo and ends[-1][1] == hi and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("strategy", ["two-sided", "interpolate"])
def test_marching_cover_is_eps_optimal_against_closed_form(toy, monkeypatch, order, strategy):
    # a problem that states how its bound grows with a piece's width gets pieces sized from
    # the last bound tried: they still cover the interval end to end, each within eps
    monkeypatch.setattr(type(toy), "piece_bound_order", order, raising=False)
    path = approxpath.approximate_path(toy, eps=0.05, interval=(0.1, 10.0), strategy=strategy)
    assert path.certified and _covers(path, 0.1, 10.0)
    for t in np.exp(np.random.default_rng(1).uniform(np.log(0.1), np.log(10.0), 200)):
        sub = toy.primal_objective(path.primal(t), t) - toy.optimum(t)
        assert -1e-9 <= sub <= min(0.05, path.gap_bound(t) + 1e-12)


class _PaddedBound(ToyBound):
    # the toy's bound on a piece plus 0.98 of eps = 0.5 (a valid, looser bound): every piece
    # certified has a bound above the march's aim however narrow it is
    def gap(self, primal, dual, lo, hi=None):
        g = super().gap(primal, dual, lo, hi)
        return g + 0.49 if hi is not None and hi > lo else g


def test_marching_cover_never_shrinks_after_a_certified_piece(toy, monkeypatch):
    # sized by the bound alone, each next piece would shrink (the bound is above the aim on
    # every certified piece) until the pieces were a float wide: more than max_pieces.  The
    # march grows a piece after a certified one whatever its bound, so it ends (4,392 pieces
    # where halving needs 688: a bound that hides the width gives the march nothing to size
    # pieces by; a problem states piece_bound_order only where its bound does not)
    monkeypatch.setattr(ToyProjection, "Bound", _PaddedBound)
    monkeypatch.setattr(ToyProjection, "piece_bound_order", 2, raising=False)
    problem = ToyProjection(toy.X, toy.y)
    path = approxpath.approximate_path(problem, eps=0.5, interval=(0.1, 10.0), strategy="two-sided",
                                       max_pieces=20000)
    assert path.certified and _covers(path, 0.1, 10.0)


def test_paper_search_stops_at_the_first_crossing(toy, monkeypatch):
    # a restored gap that exceeds eps from 0.5 to 2 (in ln t) past each solve and is below it
    # again further on: the one-sided search must stop before the first crossing, not jump past
    from approxpath.driver.run import Run

    real = Run.point_ok

    def point_ok(self, pair, tau, share=1.0):
        t = next(t for t, p in self.anchors.items() if p is pair)
        d = self.s(tau) - self.s(t)
        return real(self, pair, tau, share) and (d < 0.5 or d > 2.0)

    monkeypatch.setattr(Run, "point_ok", point_ok)
    path = approxpath.approximate_path(toy, eps=100.0, interval=(0.1, 10.0), strategy="paper")
    steps = np.diff(np.log(path.solve_points))
    assert path.certified and len(path.solve_points) >= 9 and steps.max() <= 0.5 + 1e-3


@pytest.mark.parametrize("strategy", approxpath.STRATEGIES)
def test_interval_one_float_wide(toy, strategy):
    """A step below the floats' resolution near lo must still move (it looped forever)."""
    interval = (1.0, np.nextafter(1.0, 2.0))
    path = approxpath.approximate_path(toy, eps=0.05, interval=interval, strategy=strategy)
    assert path.certified
    assert path.pieces[0].lo == interval[0] and path.pieces[-1].hi == interval[1]
    assert all(p.lo < p.hi for p in path.pieces)


def test_relative_eps_needs_a_positive_optimum():
    """y = 0: the optimal value is 0, so no relative bound can be met; say so at once (klasso
    split pieces without end, robust_l1 asked for a smaller eps)."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=20, seed=3)
    for name in ("klasso", "robust_l1"):
        p = approxpath.get_problem(name)(X, np.zeros_like(y), lam=0.1)
        with pytest.raises(InputError, match=r"not proven positive at t = [\d.]+ \(the exact solve's dual objective "
                           r"there, its proven lower bound, is -?0;"):
            approxpath.approximate_path(p, eps=0.05, interval=(0.5, 8.0), relative=True)


@pytest.fixture
def interrupted(tmp_path, monkeypatch):
    """A checkpoint of a klasso run that died after two finished segments, and a function
    running the resume."""
    from approxpath.data import make_sinc
    from approxpath.driver.strategies import TwoSided

    X, y = make_sinc(n=30, seed=3, outliers=0.1)
    ckpt = tmp_path / "run.partial.npz"
    real, calls = TwoSided.segment, []

    def dying(self, a, b):
        calls.append(a)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, a, b)

    def run(resume):
        p = approxpath.get_problem("klasso")(X, y, lam=0.1)
        return approxpath.approximate_path(p, eps=0.05, interval=(0.5, 8.0), checkpoint=ckpt, resume=resume)

    monkeypatch.setattr(TwoSided, "segment", dying)
    with pytest.raises(KeyboardInterrupt):
        run(False)
    monkeypatch.setattr(TwoSided, "segment", real)
    return ckpt, run


def _rewrite(ckpt, edit, rehash=True):
    from approxpath.certificate.format import content_sha256, read_certificate, write_npz

    arrays, meta = read_certificate(ckpt)
    edit(arrays)
    meta.pop("content_sha256")
    write_npz(ckpt, arrays, dict(meta, content_sha256=content_sha256(arrays, meta)) if rehash else meta)


def _rewrite_meta(ckpt, edit):
    from approxpath.certificate.format import content_sha256, read_certificate, write_npz

    arrays, meta = read_certificate(ckpt)
    meta.pop("content_sha256")
    edit(arrays, meta)
    write_npz(ckpt, arrays, dict(meta, content_sha256=content_sha256(arrays, meta)))


@pytest.mark.parametrize("edit, match", [
    (lambda a, m: m["state"].update(a=7.5), "its saved position 7.5 is not where its pieces end"),
    (lambda a, m: m.update(state={"zz": 1}), "its saved state {'zz': 1} is not a position a and a step"),
    (lambda a, m: m["state"].update(step=-1.0), "or its step is not positive"),
    (lambda a, m: a.update({k: v[1:] for k, v in a.items() if k.startswith("piece__")}),
     r"its pieces leave \[0.5, [\d.]+\] uncovered"),
])
def test_resume_refuses_a_position_its_pieces_do_not_reach(interrupted, edit, match):
    """A checkpoint edited and re-hashed with its position moved (to 100, 1.0, 0.2) or pieces
    deleted resumed to ``certified: True`` with part of the interval in no piece, where
    ``gap_bound(t)`` then returned another piece's bound (robust_l1: suboptimality 503.7 at t =
    10 against a claimed 0.0141)."""
    ckpt, run = interrupted
    _rewrite_meta(ckpt, edit)
    with pytest.raises(InputError, match=match):
        run(True)


def test_an_edited_exact_solve_of_a_checkpoint_is_named_not_blamed_on_eps(interrupted):
    """An exact solve of the checkpoint altered (and the file re-hashed) said "eps = 0.05 is too
    small: ... use eps >= 161", blaming the user's eps for the file."""
    ckpt, run = interrupted
    _rewrite_meta(ckpt, lambda a, m: a.update({k: 3.0 * v for k, v in a.items() if k == "anchor__primal_beta"}))
    with pytest.raises(InputError, match=r"the checkpoint's exact solve at t = [\d.]+ certifies a gap of .*: the file "
                                         "was edited or damaged"):
        run(True)


def test_a_point_in_no_piece_is_refused_not_given_the_next_pieces_bound(interrupted):
    """A path with a gap between pieces (a file loaded without verification) gave a point of the
    gap the next piece's pair and bound."""
    import dataclasses

    ckpt, run = interrupted
    path = run(True)
    gap = dataclasses.replace(path, pieces=path.pieces[:2] + path.pieces[3:])
    t = 0.5 * (path.pieces[2].lo + path.pieces[2].hi)
    for query in (gap.gap_bound, gap.primal, gap.dual, gap.piece_at):
        with pytest.raises(InputError, match="lies in no piece of the path"):
            query(t)
    assert path.gap_bound(t) == path.pieces[2].gap_bound


def test_resume_reproves_the_stored_pieces(interrupted):
    """A checkpoint's pieces are claims like a certificate's: a forged one (hash recomputed)
    fails its re-proof, an edited one its hash; an intact one resumes."""
    ckpt, run = interrupted
    good = ckpt.read_bytes()
    _rewrite(ckpt, lambda a: a.__setitem__("piece__primal_beta", 100 * a["piece__primal_beta"]))
    with pytest.raises(InputError, match="does not re-prove"):
        run(True)
    ckpt.write_bytes(good)
    _rewrite(ckpt, lambda a: a.__setitem__("piece__gap_bound", 0.5 * a["piece__gap_bound"]))
    with pytest.raises(InputError, match="does not re-prove"):
        run(True)
    ckpt.write_bytes(good)
    _rewrite(ckpt, lambda a: a.__setitem__("piece__primal_beta", 100 * a["piece__primal_beta"]), rehash=False)
    with pytest.raises(InputError, match="modified after it was written"):
        run(True)
    for garbage in (b"", b"not a zip file", good[: len(good) // 2]):
        ckpt.write_bytes(garbage)
        with pytest.raises(InputError, match="not a readable checkpoint"):
            run(True)
    ckpt.write_bytes(good)
    assert run(True).certified


@pytest.mark.parametrize("kw,match", [(dict(workers=True), "workers"), (dict(workers=0), "workers"),
                                      (dict(chunks=0), "chunks"), (dict(chunks=-1, workers=2), "chunks"),
                                      (dict(max_solves=True), "max_solves")])
def test_bad_counts(toy, kw, match):
    with pytest.raises(InputError, match=match):
        approxpath.approximate_path(toy, eps=0.5, interval=(0.1, 10.0), **kw)


def test_a_float32_parameter_gets_the_piece_and_the_pair_of_its_value():
    """A float32 t just past a piece's end got the piece before it: numpy 2 rounded the float64
    ends to float32 to compare them, and the pair returned was evaluated outside the interval
    its bound covers (at one end its computed gap exceeded the bound returned by 1.7e-10)."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=40, seed=0)
    path = approxpath.approximate_path(approxpath.get_problem("klasso")(X, y, lam=0.1), eps=0.01, interval=(0.5, 4.0))
    past = [np.nextafter(np.float32(p.hi), np.float32(10.0)) for p in path.pieces[:-1]]
    assert all(float(t) > p.hi for t, p in zip(past, path.pieces))  # each just past its piece's end
    for t32 in past:
        t = float(t32)
        assert path.piece_at(t32) is path.piece_at(t) and path.gap_bound(t32) == path.gap_bound(t)
        np.testing.assert_array_equal(path.primal(t32).beta, path.primal(t).beta)
        np.testing.assert_array_equal(path.dual(t32).u, path.dual(t).u)
    with pytest.raises(InputError, match="outside the path's interval"):
        path.primal(np.float32(4.5))


@pytest.mark.parametrize("bad", [None, "klasso", "class"])
def test_a_problem_that_is_not_an_instance_is_one_line(bad):
    """A class, a registry name or None went into the run: AttributeError ('bound',
    'default_interval') or TypeError (a method without self) from deep inside."""
    from approxpath.exact import crosscheck

    klass = approxpath.get_problem("klasso")
    bad = klass if bad == "class" else bad
    make = "KLasso(X, y, ...)" if bad is klass else "approxpath.get_problem(name)(X, y, ...)"
    for run in (lambda: approxpath.approximate_path(bad, 0.1), lambda: approxpath.select(bad, cv=2),
                lambda: approxpath.approximate_surface(bad, 0.1, weights=(0.1, 1.0)),
                lambda: crosscheck(bad, [1.0], {})):
        with pytest.raises(InputError, match=rf"^problem must be a problem instance, e\.g\. {re.escape(make)}; got "):
            run()


@pytest.mark.parametrize("solver", [3, (), []])
def test_a_solver_that_names_none_is_one_line(solver):
    """solver=3 was "TypeError: 'int' object is not iterable" from inside; an empty sequence
    silently meant every backend."""
    from approxpath.data import make_sinc

    problem = approxpath.get_problem("klasso")(*make_sinc(n=20), lam=0.1)
    with pytest.raises(InputError, match=r"^solver must be a name or a non-empty sequence of names \(feature_sign, "):
        approxpath.approximate_path(problem, 0.1, interval=(1.0, 2.0), solver=solver)


def test_a_folder_as_the_checkpoint_is_named(toy, tmp_path):
    """checkpoint=a folder said "holds an interrupted run: resume it (--resume)"."""
    with pytest.raises(InputError, match=rf"^the checkpoint {re.escape(str(tmp_path))} is a folder: name a file in it"):
        approxpath.approximate_path(toy, eps=0.1, interval=(0.5, 2.0), checkpoint=tmp_path)


def test_flags_and_names_that_were_accepted_silently_are_refused(tmp_path):
    """Each was taken as true (a non-empty string, a nonzero number) or not checked at all."""
    from approxpath.data import make_sinc
    from approxpath.exact import crosscheck
    from approxpath.surface import select_surface

    X, y = make_sinc(n=20)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    path = approxpath.approximate_path(problem, 0.2, interval=(1.0, 2.0))
    file = path.save(tmp_path / "c.npz")
    refused = [(lambda: approxpath.approximate_path(problem, 0.2, interval=(1.0, 2.0), progress="x"), "progress"),
               (lambda: approxpath.select(problem, "mae", cv=2, strict="no"), "strict"),
               (lambda: approxpath.load_path(file, verify="yes"), "verify"),
               (lambda: crosscheck(problem, [1.0], {"beta": path.primal(1.0).beta[None],
                                                    "beta0": [path.primal(1.0).beta0]}, relative="yes"), "relative"),
               (lambda: select_surface(problem, "mae", cv=2, weights=(0.1, 1.0), strict=3), "strict")]
    for run, name in refused:
        with pytest.raises(InputError, match=rf"^{name} must be True or False"):
            run()
    with pytest.raises(InputError, match="unknown exact solver for klasso 'x'"):
        select_surface(problem, "mae", cv=2, weights=(0.1, 1.0), solver="x")


def test_pieces_above_eps_are_warned_at_the_caller_s_line():
    """The paper strategy's rule left 87 of 1,599 robust l1 pieces above eps with no Python
    warning (only the summary and path.uncovered() said so)."""
    from approxpath.data import make_sinc

    X, y = make_sinc(n=40, outliers=0.1, seed=1)
    problem = approxpath.get_problem("robust_l1")(X, y, lam=0.1)
    with pytest.warns(approxpath.driver.UncoveredWarning, match=r"^robust_l1: \d+ of \d+ pieces exceed eps "
                                                                r"\(uncovered, the first") as got:
        path = approxpath.approximate_path(problem, eps=0.1, interval=(2**-4, 2**5), strategy="paper")
    assert path.uncovered() and got[0].filename == __file__
    assert str(len(path.uncovered())) in str(got[0].message)
