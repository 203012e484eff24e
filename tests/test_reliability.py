"""Interrupted runs, determinism, solver trouble, awkward inputs."""

import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_classification
from approxpath.certificate.format import read_certificate
from certificate_helpers import same_certificate

def test_same_inputs_same_path(tmp_path):
    X, y = make_classification(n=60, d=2, seed=7)
    files = []
    for k in range(2):
        p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
        files.append(approxpath.approximate_path(p, eps=0.2, interval=(2.0**-5, 2.0**6)).save(tmp_path / f"{k}.npz"))
    same_certificate(*files)


def test_resume_in_python_equals_uninterrupted(tmp_path, monkeypatch):
    X, y = make_classification(n=60, d=2, seed=7)
    ref = approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.2,
                                      interval=(2.0**-5, 2.0**6)).save(tmp_path / "ref.npz")
    ckpt = tmp_path / "run.partial.npz"
    from approxpath.driver.strategies import TwoSided

    calls = {"n": 0}
    real = TwoSided.segment

    def dying(self, a, b):  # the run dies after two finished segments
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, a, b)

    monkeypatch.setattr(TwoSided, "segment", dying)
    from approxpath.driver import certifier

    fast = certifier.stored_bound  # the interrupted run's certification is slow: its seconds show in the resumed run
    monkeypatch.setattr(certifier, "stored_bound", lambda *a: (time.sleep(0.02), fast(*a))[1])
    with pytest.raises(KeyboardInterrupt):
        approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.2,
                                    interval=(2.0**-5, 2.0**6), checkpoint=ckpt)
    monkeypatch.setattr(TwoSided, "segment", real)
    monkeypatch.setattr(certifier, "stored_bound", fast)
    assert ckpt.exists()
    report = approxpath.verify(ckpt, X, y)  # a checkpoint is named as such, not as a certificate with gaps
    assert not report.ok and report.failures == (
        "the checkpoint of an unfinished run (--checkpoint, or OUT.partial.npz beside --out OUT), not a "
        "certificate: finish the run (the same command with --resume), then verify what it writes",)
    with pytest.raises(InputError, match="interrupted run"):
        approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.2,
                                    interval=(2.0**-5, 2.0**6), checkpoint=ckpt)
    with pytest.raises(InputError, match=r"a checkpoint of another run \(they differ in eps\)"):
        approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=1.0), eps=0.3,
                                    interval=(2.0**-5, 2.0**6), checkpoint=ckpt, resume=True)
    with pytest.raises(InputError, match=r"a checkpoint of another run \(they differ in options\)"):  # (unnamed)
        approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=0.5), eps=0.2,
                                    interval=(2.0**-5, 2.0**6), checkpoint=ckpt, resume=True)
    solved = []
    problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    monkeypatch.setattr(type(problem), "solve", lambda self, t, real=type(problem).solve, **kw: (
        solved.append(t), real(self, t, **kw))[1])
    path = approxpath.approximate_path(problem, eps=0.2, interval=(2.0**-5, 2.0**6), checkpoint=ckpt, resume=True)
    assert not ckpt.exists()
    assert len(solved) < path.exact_solves  # the stored solves were reused
    # its timings are the whole run's, both parts: one process's solves and certification within its wall time
    assert path.certify_s > 0.1 and path.wall_s >= path.solve_s + path.certify_s
    same_certificate(path.save(tmp_path / "resumed.npz"), ref)


def _cli(tmp_path, *extra):
    data = tmp_path / "data.csv"
    if not data.exists():
        # long enough (~2 s) to be killed after its first checkpoint
        X, y = make_classification(n=300, d=3, seed=11)
        np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    return [sys.executable, "-m", "approxpath.cli", "path", "kernel_svm", "--data", str(data), "--format", "csv",
            "--c", "1", "--eps", "0.01", "--range", "2^-6", "2^8", "--no-progress", *extra]


def test_sigkill_then_resume_equals_uninterrupted(tmp_path):
    out, ref = tmp_path / "cert.npz", tmp_path / "ref.npz"
    partial = tmp_path / "cert.npz.partial.npz"
    proc = subprocess.Popen(_cli(tmp_path, "--out", str(out)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not partial.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert partial.exists(), "the run finished before a checkpoint could be interrupted"
    # killed at its first checkpoint, at once: the run goes on ~1.3 s after it on an idle 2-core
    # machine, and a 0.3 s wait here left less than 1 s for a faster one
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()  # no half-written certificate
    arrays, meta = read_certificate(partial, layout=False)  # the checkpoint itself is complete and readable
    assert arrays["anchor_t"].size >= 1 and meta["run"]["problem"] == "kernel_svm"
    done = subprocess.run(_cli(tmp_path, "--out", str(out), "--resume"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not partial.exists()
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]  # a temp file of the killed write is gone
    subprocess.run(_cli(tmp_path, "--out", str(ref)), check=True, capture_output=True)
    same_certificate(out, ref)


def test_duplicate_points_are_fine(tmp_path):
    X, y = make_classification(n=30, d=2, seed=3)
    X, y = np.vstack([X, X[:10]]), np.concatenate([y, y[:10]])
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    path = approxpath.approximate_path(p, eps=0.3, interval=(0.1, 50.0))
    assert path.certified
    assert approxpath.verify(path.save(tmp_path / "d.npz"), X, y).ok


def test_a_failing_solver_falls_back(monkeypatch):
    X, y = make_classification(n=30, d=2, seed=3)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    Cls = type(p)
    real = Cls.candidate

    def broken_libsvm(self, name, t, warm=None):
        if name == "libsvm":
            raise RuntimeError("libsvm crashed")
        return real(self, name, t, warm)

    monkeypatch.setattr(Cls, "candidate", broken_libsvm)
    pair = p.solve(1.0)
    assert p.bound.gap(*pair, 1.0) <= 1e-6
    path = approxpath.approximate_path(p, eps=0.5, interval=(0.5, 4.0))
    assert path.certified


def test_no_solver_at_all_is_a_clear_error(monkeypatch):
    X, y = make_classification(n=30, d=2, seed=3)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    monkeypatch.setattr(type(p), "candidate", lambda self, name, t, warm=None: (_ for _ in ()).throw(RuntimeError("down")))
    with pytest.raises(approxpath.SolverError, match=r"\(smo, .*libsvm, .*clarabel, .*: RuntimeError: down\)$"):
        p.solve(1.0)  # one message, said once after every backend (and retry) that said it
    with pytest.raises(approxpath.SolverError) as caught:
        approxpath.approximate_path(p, eps=0.5, interval=(0.5, 4.0))
    text = str(caught.value)  # the first point's reasons, then the other points (not all reasons again)
    assert text.count("RuntimeError: down") == 1 and re.search(r"the same or alike at \d+ more point\(s\), ", text)


def test_solver_failures_leave_explicit_uncovered_intervals(monkeypatch, tmp_path):
    """Where no solver works and no neighbouring solve certifies, the path says "uncovered"
    (and the CLI exits 1) instead of claiming coverage."""
    X, y = make_classification(n=40, d=2, seed=3)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    Cls = type(p)
    real = Cls.candidate

    def down_between_1_and_30(self, name, t, warm=None):
        if 1.0 <= t <= 30.0:
            raise RuntimeError("solver down")
        return real(self, name, t, warm)

    monkeypatch.setattr(Cls, "candidate", down_between_1_and_30)
    with pytest.warns(UserWarning, match="no solver produced a pair") as caught:
        path = approxpath.approximate_path(p, eps=0.05, interval=(2.0**-4, 2.0**8))
    named = re.search(r"at \d+ point\(s\) \(([^)]*)\)", str(caught[0].message)).group(1)
    assert all(1.0 <= float(t) <= 30.0 for t in named.replace(", ...", "").split(", "))  # the points are named
    assert not path.certified and path.uncovered()
    lo, hi = path.uncovered()[0][0], path.uncovered()[-1][1]
    assert 1.0 <= hi and lo <= 30.0  # the trouble is where the solver was down
    assert all(pc.kind == "certified" for pc in path.pieces if pc.hi < 0.5 or pc.lo > 60.0)
    report = approxpath.verify(path.save(tmp_path / "u.npz"), X, y)
    assert not report.ok and report.uncovered == len(path.uncovered())



def test_inaccurate_solves_are_retried_with_tighter_settings(monkeypatch):
    """A backend whose points do not certify (libSVM stopped at a loose tolerance) is tried
    again with tighter settings, before the next backend; without it the loose pair would be
    returned."""
    from approxpath.solvers import EXACT_GAP
    from approxpath.solvers import current_settings

    X, y = make_classification(n=60, d=2, seed=3)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    monkeypatch.setattr(sys.modules["approxpath.problems.kernel_svm.libsvm"], "LIBSVM_TOL", 0.5)  # loose first round
    rounds = []
    real = type(p).candidate

    def spy(self, name, t, warm=None):
        rounds.append(current_settings().tight)
        return real(self, name, t, warm)

    monkeypatch.setattr(type(p), "candidate", spy)
    pair = p.solve(1.0, solver=("libsvm",))
    assert rounds == [False, True]
    assert p.bound.gap(*pair, 1.0) <= EXACT_GAP * (1 + abs(p.dual_objective(pair[1], 1.0)))
    # tighter settings of the same backend come before the next, slower one
    calls = []

    def named(self, name, t, warm=None):
        calls.append((name, current_settings().tight))
        return real(self, name, t, warm)

    monkeypatch.setattr(type(p), "candidate", named)
    pair = p.solve(2.0, solver=("libsvm", "clarabel"))
    assert calls == [("libsvm", False), ("libsvm", True)]
    assert p.bound.gap(*pair, 2.0) <= EXACT_GAP * (1 + abs(p.dual_objective(pair[1], 2.0)))


def _warm_start_spoiled(monkeypatch, spoil):
    """robust_l1 solved at t = 1 from its solve at 0.8, its candidate from the warm start passed
    through ``spoil(primal, dual)``: the backends called ``(name, warm)`` and whether the pair
    returned is at the exact mark."""
    from approxpath.data import make_sinc
    from approxpath.solvers import EXACT_GAP

    X, y = make_sinc(n=60, seed=1)
    p = approxpath.get_problem("robust_l1")(X, y, lam=0.1, parameter="bandwidth")
    warm = p.solve(0.8)
    calls = []
    real = type(p).candidate

    def spy(self, name, t, start=None):
        calls.append((name, start is not None))
        pair = real(self, name, t, start)
        return spoil(*pair) if start is not None else pair

    monkeypatch.setattr(type(p), "candidate", spy)
    pair = p.solve(1.0, warm=warm)
    return calls, p.bound.gap(*pair, 1.0) <= EXACT_GAP * (1 + abs(p.dual_objective(pair[1], 1.0)))


def test_a_warm_start_that_misses_the_mark_is_retried_cold_before_the_next_backend(monkeypatch):
    """robust_l1's HiGHS from a neighbour's basis can leave a gap above the acceptance mark where
    the cold solve reaches it: the same backend is tried from scratch before Clarabel."""
    # a warm solve stopped early: a pair far from optimal
    calls, exact = _warm_start_spoiled(monkeypatch, lambda primal, dual: (type(primal)(beta=0.5 * primal.beta), dual))
    assert calls == [("highs", True), ("highs", False)] and exact


def test_a_warm_start_that_fails_is_retried_cold_before_the_next_backend(monkeypatch):
    """HiGHS from a basis of another bandwidth can stop without a point: the same backend is
    tried from scratch before Clarabel, and its pair is optimal."""
    from approxpath.errors import SolverError

    def no_point(primal, dual):
        raise SolverError("highspy: no solution (Not Set)")

    calls, exact = _warm_start_spoiled(monkeypatch, no_point)
    assert calls == [("highs", True), ("highs", False)] and exact


def test_a_pair_that_serves_the_path_is_accepted_above_the_exact_mark(monkeypatch):
    """robust_l1 at n = 4000: HiGHS's vertex certifies just above EXACT_GAP while the next backend
    (an interior point on a dense LP) does not finish.  A pair whose gap is a small share of the
    path's target at t (``enough``) is taken; the path's pieces stay certified and verify."""
    from approxpath.data import make_sinc
    from approxpath.solvers import EXACT_GAP

    X, y = make_sinc(n=60, seed=1)
    p = approxpath.get_problem("robust_l1")(X, y, lam=0.1, parameter="bandwidth")
    calls = []
    real = type(p).candidate

    def spy(self, name, t, start=None):
        calls.append(name)
        primal, dual = real(self, name, t, start)
        if name == "highs":  # a vertex a little off: a gap above the mark, far below eps
            primal = type(primal)(beta=primal.beta * (1 - 1e-5))
        return primal, dual

    monkeypatch.setattr(type(p), "candidate", spy)
    pair = p.solve(1.0, solver=("highs", "clarabel"))
    assert calls == ["highs", "highs", "clarabel"]  # without ``enough``, the off vertex (also tight) is passed over
    calls.clear()
    share = 1e-3  # of the dual objective: 1e4 times the mark

    def enough(pair):
        return share * abs(p.dual_objective(pair[1], 1.0))

    pair = p.solve(1.0, solver=("highs", "clarabel"), enough=enough)
    g = p.bound.gap(*pair, 1.0)
    assert calls == ["highs"] and EXACT_GAP * (1 + abs(p.dual_objective(pair[1], 1.0))) < g <= enough(pair)
    calls.clear()
    path = approxpath.approximate_path(p, eps=1e-2, relative=True, interval=(0.5, 2.0), solver=("highs", "clarabel"))
    assert set(calls) == {"highs"} and all(pc.kind == "certified" for pc in path.pieces)


def test_a_solver_out_of_time_falls_back_and_is_not_retried():
    X, y = make_classification(n=200, d=3, seed=0)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    # Clarabel stops at once (MaxTime); libSVM, which no time limit reaches, answers
    pair = p.solve(1.0, solver=("clarabel", "libsvm"), time_limit=1e-6)
    assert p.bound.gap(*pair, 1.0) <= 1e-6
    with pytest.raises(approxpath.SolverError, match=r"MaxTime.*reached time_limit") as info:
        p.solve(1.0, solver=("clarabel", "scs"), time_limit=1e-6)
    assert "(tight)" not in str(info.value)  # out of time: no slower tighter round


def test_timeouts_reach_the_solvers_of_a_path(monkeypatch):
    X, y = make_classification(n=60, d=2, seed=3)
    p = approxpath.get_problem("klasso")(X, y, lam=0.1)
    with pytest.raises(approxpath.SolverError, match="MaxTime"):
        approxpath.approximate_path(p, eps=0.1, interval=(0.5, 2.0), solve_time_limit=1e-7)


def test_piece_explosion_stops_with_a_clear_error():
    """An absolute eps on the SVM over C (objective ~ C) needs ever more pieces: the budget
    stops the run and says what to change instead of running for hours."""
    X, y = make_classification(n=40, d=2, seed=1)
    p = approxpath.get_problem("kernel_svm")(X, y, parameter="c", bandwidth=1.0)
    with pytest.raises(approxpath.BudgetExceededError, match="max_pieces=50 .*relative=True"):
        approxpath.approximate_path(p, eps=1e-3, interval=(0.01, 100.0), max_pieces=50)
    with pytest.raises(approxpath.BudgetExceededError, match="max_solves=3"):
        approxpath.approximate_path(p, eps=1e-3, interval=(0.01, 100.0), max_solves=3)
    assert approxpath.approximate_path(p, eps=1e-3, interval=(0.01, 100.0), relative=True).certified


def test_solver_by_name_and_unknown_names(monkeypatch):
    # one name as a plain string means that solver alone (not its letters); unknown names are an
    # InputError naming the choices, before any work
    X, y = make_classification(n=40, d=2, seed=3)
    p = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
    used = []
    real = type(p).candidate

    def spy(self, name, t, warm=None):
        used.append(name)
        return real(self, name, t, warm)

    monkeypatch.setattr(type(p), "candidate", spy)
    path = approxpath.approximate_path(p, eps=0.5, interval=(0.5, 2.0), solver="clarabel")
    assert path.certified and set(used) == {"clarabel"}
    for bad in ("gurobi", ("libsvm", "cplex")):
        with pytest.raises(approxpath.InputError, match=r"unknown exact solver .* \(choose one of smo, libsvm, clarabel, scs\)"):
            approxpath.approximate_path(p, eps=0.5, interval=(0.5, 2.0), solver=bad)
        with pytest.raises(approxpath.InputError, match="unknown exact solver"):
            p.solve(1.0, solver=bad)
