"""Parallel paths (segments certified in workers, or chunks merged into one certificate),
locally and through Dask."""

import functools

import numpy as np
import pytest

import approxpath
from approxpath import InputError
from process_helpers import default_sigint


@pytest.fixture(scope="module")
def svm():
    from approxpath.data import make_classification

    X, y = make_classification(n=50, d=2, seed=4)
    return approxpath.get_problem("kernel_svm")(X, y, c=1.0)


def _check(path, problem, tmp_path):
    assert path.certified
    assert path.pieces[0].lo == path.interval[0] and path.pieces[-1].hi == path.interval[1]
    assert all(a.hi == b.lo for a, b in zip(path.pieces[:-1], path.pieces[1:]))
    report = approxpath.verify(path.save(tmp_path / "c.npz"), problem.X, problem.y)
    assert report.ok, str(report)


def test_local_processes(svm, tmp_path):
    serial = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6))
    par = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), workers=2, chunks=3)
    _check(par, svm, tmp_path)
    # a cut is solved by both neighbours: at most one extra solve per cut (2 cuts), and only at cuts
    dupes = [t for t in set(par.solve_points) if par.solve_points.count(t) > 1]
    assert len(par.solve_points) - len(set(par.solve_points)) <= 2
    cuts = np.exp(np.linspace(np.log(2.0**-4), np.log(2.0**6), 4))[1:-1]
    assert all(np.isclose(t, cuts).any() for t in dupes)
    assert abs(par.exact_solves - serial.exact_solves) <= 2 + serial.exact_solves // 2


@pytest.mark.parametrize("strategy", ["interpolate", "two-sided"])
def test_segments_in_workers(svm, tmp_path, strategy):
    serial = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), strategy=strategy)
    par = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), strategy=strategy, workers=2)
    _check(par, svm, tmp_path)
    # every solve is made once (here or in a worker), and the same inputs give the same path
    assert len(set(par.solve_points)) == par.exact_solves
    again = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), strategy=strategy, workers=2)
    assert [(p.lo, p.hi, p.gap_bound) for p in again.pieces] == [(p.lo, p.hi, p.gap_bound) for p in par.pieces]
    # the next solve's step comes from the placed segment, not from its certification: the
    # placement may differ from a serial run's, the effort hardly
    assert abs(par.exact_solves - serial.exact_solves) <= 2 + serial.exact_solves // 4


@pytest.mark.parametrize("chunks", [None, 2])
def test_dask_in_process_cluster(svm, tmp_path, chunks):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        path = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), chunks=chunks, executor=client)
    _check(path, svm, tmp_path)


def test_workers_follow_joblibs_convention(svm, tmp_path, monkeypatch, capsys):
    """-1 is a worker per core and -k all but k - 1 (at least one), as n_jobs is: the same path as that count's,
    in Python and on the command line (where the count decides which flags go with it).  0.5.x refused -1."""
    from approxpath.cli import main
    from approxpath.compute import parallelism

    monkeypatch.setattr(parallelism, "cores", lambda: 2)
    run = functools.partial(approxpath.approximate_path, svm, eps=0.3, interval=(2.0**-4, 2.0**6))
    pieces = [(p.lo, p.hi, p.gap_bound) for p in run(workers=2).pieces]
    assert [(p.lo, p.hi, p.gap_bound) for p in run(workers=-1).pieces] == pieces
    assert [(p.lo, p.hi, p.gap_bound) for p in run(workers=-5).pieces] == [(p.lo, p.hi, p.gap_bound)
                                                                          for p in run(workers=1).pieces]
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([svm.X, svm.y]), delimiter=",", header="a,b,y", comments="")
    args = ["path", "kernel_svm", "--data", str(data), "--range", "0.5", "2"]
    assert main([*args, "--workers", "-1", "--checkpoint", str(tmp_path / "c.npz")]) == 2
    assert "--workers hands kernel_svm's segments to worker processes" in capsys.readouterr().err
    for bad in ("0", "two"):
        assert main([*args, "--workers", bad]) == 2
        assert f"argument --workers: a nonzero integer (-1: one per core, -2: all but one); got '{bad}'" in \
            capsys.readouterr().err


def test_bad_workers(svm, tmp_path, capsys):
    with pytest.raises(InputError, match="workers"):
        approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=0)
    with pytest.raises(InputError, match="checkpoints are per run"):  # (the pieces come back out of order)
        approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=2, checkpoint=tmp_path / "c.npz")
    from approxpath.cli import main

    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([svm.X, svm.y]), delimiter=",", header="a,b,y", comments="")
    for flag in ("--checkpoint", "--resume"):
        args = ["path", "kernel_svm", "--data", str(data), "--range", "0.5", "2", "--workers", "2", flag]
        assert main(args + ([str(tmp_path / "c.npz")] if flag == "--checkpoint" else ["--out", str(tmp_path / "o.npz")])) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--workers hands kernel_svm's segments to worker processes" in err
    assert not list(tmp_path.glob("*.npz"))


def test_workers_with_an_executor_are_refused(svm):
    """The executor's own workers run the tasks: a count beside it would be ignored, so the pair
    is refused before any work (paths, chunks, several paths, a selection)."""
    from concurrent.futures import ThreadPoolExecutor

    submitted = []

    class Watched(ThreadPoolExecutor):
        def submit(self, *args, **kwargs):
            submitted.append(args[0])
            return super().submit(*args, **kwargs)

    runs = [lambda ex: approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=2, executor=ex),
            lambda ex: approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=2, chunks=2,
                                                   executor=ex),
            lambda ex: approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=2, strategy="paper",
                                                   executor=ex),  # (one chunk: the executor runs one at once)
            lambda ex: approxpath.map_paths([svm], eps=0.3, interval=(0.5, 2.0), workers=2, executor=ex),
            lambda ex: approxpath.select(svm, cv=2, eps=0.1, interval=(0.5, 2.0), workers=2, executor=ex)]
    with Watched(1) as ex:
        for run in runs:
            with pytest.raises(InputError, match=r"^workers \(2 processes\) and executor: give one of them"):
                run(ex)
        assert submitted == []
        path = approxpath.approximate_path(svm, eps=0.3, interval=(0.5, 2.0), workers=1, executor=ex)
    assert path.certified and submitted  # one worker's count with an executor is the default


def test_chunks_default_to_what_an_executor_runs_at_once(svm, tmp_path):
    """``paper`` and ``grid`` cut the interval into chunks: with an executor, as many as it runs at
    once (one chunk on one worker before: no parallelism, without a word)."""
    from concurrent.futures import ThreadPoolExecutor

    submitted = []

    class Watched(ThreadPoolExecutor):
        def submit(self, *args, **kwargs):
            submitted.append(args)
            return super().submit(*args, **kwargs)

    with Watched(3) as ex:
        path = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), strategy="paper", executor=ex)
    assert len(submitted) == 3
    _check(path, svm, tmp_path)
    three = approxpath.approximate_path(svm, eps=0.3, interval=(2.0**-4, 2.0**6), strategy="paper", workers=3)
    assert [(p.lo, p.hi) for p in path.pieces] == [(p.lo, p.hi) for p in three.pieces]  # the 3 chunks of workers=3


def test_map_paths_over_a_grid_of_c(svm):
    Cls = type(svm)
    problems = [Cls(svm.X, svm.y, c=c) for c in (0.5, 1.0, 2.0)]
    paths = approxpath.map_paths(problems, eps=0.5, interval=(0.5, 4.0), workers=2)
    assert [p.problem.c for p in paths] == [0.5, 1.0, 2.0]
    assert all(p.certified for p in paths)
    serial = approxpath.approximate_path(problems[1], eps=0.5, interval=(0.5, 4.0))
    assert paths[1].exact_solves == serial.exact_solves  # same inputs, same path
    assert [(q.lo, q.hi) for q in paths[1].pieces] == [(q.lo, q.hi) for q in serial.pieces]


def _two_workers_at_work(tmp_path, strategy="paper"):
    """``(proc, session)``: a long ``approxpath path`` command with ``--workers 2``, in a session of
    its own, once it and its two workers are at work (skipped if it finished first), and a
    function listing the session's live processes (not the zombies a killed parent leaves for
    init to reap); ``strategy``: paper's chunks, or an adaptive strategy's segments."""
    import subprocess
    import sys
    import time

    from approxpath.data import make_classification

    X, y = make_classification(n=400, d=3, seed=11)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    proc = subprocess.Popen([sys.executable, "-m", "approxpath.cli", "path", "kernel_svm", "--data", str(data),
                             "--c", "1", "--eps", "0.0005", "--range", "2^-10", "2^10", "--no-progress",
                             "--workers", "2", "--strategy", strategy], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)

    def session():
        out = subprocess.run(["ps", "-o", "pid=,stat=", "-s", str(proc.pid)], capture_output=True, text=True).stdout
        return [int(pid) for pid, stat in (line.split() for line in out.splitlines()) if not stat.startswith("Z")]

    deadline = time.time() + 120
    while len(session()) < 3 and time.time() < deadline and proc.poll() is None:  # the command and 2 workers
        time.sleep(0.05)
    time.sleep(1.0)  # the chunks under way (each takes tens of seconds)
    if proc.poll() is not None:
        pytest.skip("the run finished before its workers were at work")
    return proc, session


@pytest.mark.parametrize("signal_name,code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_to_a_run_of_chunks_stops_it_and_its_workers_at_once(tmp_path, signal_name, code):
    """``kill`` of the command (its process only) while workers computed chunks: it waited for
    the chunks (48 s; the signal went to a thread of the pool, the main thread slept on its wait),
    and the workers, keeping the command's SIGTERM handler, outlived it, deaf to ``kill``."""
    import os
    import signal
    import time

    proc, session = _two_workers_at_work(tmp_path)
    sent = time.time()
    proc.send_signal(getattr(signal, signal_name))
    try:
        _, err = proc.communicate(timeout=60)
        took = time.time() - sent
        time.sleep(0.5)
        left = session()
    finally:
        for pid in session():
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == code and "Traceback" not in err, err
    assert took < 30, f"{took:.1f} s after the signal"  # (0.04 s idle, 0.1 s loaded; the defect took 48 s)
    assert not left, f"processes left: {left}"


def test_a_worker_process_that_dies_is_a_clusters_lost_work():
    """A pool whose worker ended abruptly (its task's process exited) is broken: one line, not
    concurrent.futures' BrokenProcessPool (the command line's 'internal error', exit 70)."""
    import os
    from concurrent.futures import ProcessPoolExecutor

    from approxpath.compute.executors import result
    from approxpath.errors import ClusterError

    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(ClusterError, match="a worker process of this run died before returning its work"):
            result(pool.submit(os._exit, 3))


@pytest.mark.parametrize("line", range(1, 41))
def test_an_interrupt_anywhere_in_the_wait_leaves_the_future_free(line):
    """Ctrl-C while the command waits for a worker's result: with concurrent.futures.wait, an
    interrupt just after it took the future's lock left the lock held (the pool's thread, which
    takes it to fail the future, and with it the interpreter's exit, waited for ever: a --workers
    run did not stop) or raised RuntimeError 'release unlocked lock'.  KeyboardInterrupt raised
    at the ``line``-th line the wait runs (its own, concurrent.futures' and threading's) must leave
    the future's lock free and reach the caller as KeyboardInterrupt."""
    import gc
    import os
    import sys
    import threading
    from concurrent.futures import Future

    from approxpath.compute.executors import result

    future, done = Future(), Future()
    done.set_result(0)
    assert result(done) == 0  # (the wait's imports done before the lines are counted)
    count = [0]
    wait_files = (os.path.join("compute", "executors.py"), os.path.join("concurrent", "futures", "_base.py"),
                  "threading.py")

    def tracer(frame, event, arg):  # (the wait's lines only: not a finalizer run meanwhile, which swallows it)
        if event == "line" and frame.f_code.co_filename.endswith(wait_files):
            count[0] += 1
            if count[0] == line:
                raise KeyboardInterrupt
        return tracer

    timer = threading.Timer(2.0, future.set_result, (1,))  # (an end, had no interrupt been raised)
    timer.start()
    gc.disable()  # (no collection's finalizers in this thread meanwhile)
    try:
        with pytest.raises(KeyboardInterrupt):
            sys.settrace(tracer)
            result(future)
    finally:
        sys.settrace(None)
        gc.enable()
        timer.cancel()
    assert count[0] == line
    assert future._condition.acquire(blocking=False)  # not held (by another thread) ...
    future._condition.release()
    assert not future._condition._is_owned()  # ... nor still by this one


@pytest.mark.parametrize("strategy", ["paper", "interpolate"])
def test_a_killed_worker_ends_the_command_with_exit_6(tmp_path, strategy):
    """SIGKILL of a --workers process (what the system's out-of-memory killer sends): the command
    said 'internal error' with a traceback (exit 70); now one line, exit 6, and no process left.
    With an adaptive strategy's segments, the next segment's hand-over met the broken pool first
    (concurrent.futures' BrokenProcessPool from ``submit``, exit 70, 15 of 15 runs)."""
    import os
    import signal
    import time

    proc, session = _two_workers_at_work(tmp_path, strategy)
    try:
        os.kill(max(p for p in session() if p != proc.pid), signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        time.sleep(0.5)
        left = session()
    finally:
        for pid in session():
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 6 and "Traceback" not in err, err
    assert "a worker process of this run died before returning its work" in err and len(err.splitlines()) == 1, err
    assert not left, f"processes left: {left}"


def test_a_command_killed_outright_takes_its_workers_with_it(tmp_path):
    """SIGKILL of the command itself (its workers cannot be told): the workers went on, holding
    their kernels' memory (97 MB each at n = 300, alive a minute later); now each ends within
    a second or two of its parent."""
    import os
    import signal
    import time

    proc, session = _two_workers_at_work(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        deadline = time.time() + 10
        while session() and time.time() < deadline:
            time.sleep(0.1)
        left = session()
    finally:
        for pid in session():
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left: {left}"


def test_handing_work_to_a_pool_that_cannot_take_it_is_a_clusters_lost_work():
    """``submit`` itself raised the pool's own exceptions (BrokenProcessPool after a worker's
    death; RuntimeError after a shutdown) before ``result`` could translate them."""
    import os
    from concurrent.futures import ProcessPoolExecutor

    from approxpath.compute.executors import result, submit
    from approxpath.errors import ClusterError

    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(ClusterError, match="a worker process of this run died"):
            result(submit(pool, os._exit, 3))
        with pytest.raises(ClusterError, match="a worker process of this run died"):
            submit(pool, abs, -1)
    with ProcessPoolExecutor(max_workers=1) as pool:
        pass
    with pytest.raises(ClusterError, match="the executor was shut down during the run"):
        submit(pool, abs, -1)


def test_a_worker_killed_while_writing_its_result_does_not_hang_the_run():
    """A worker SIGKILLed in the middle of writing a result leaves the pool reading the rest of
    it forever (the standard library's pool does not notice the death then): the run waited
    without end, or hung at the interpreter's exit (1 in 16 kills of a --workers 2 run).  The
    wait now sees the dead worker, and the pool's end closes its side of the results' pipe."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os, signal, struct, time
        from approxpath.compute.executors import result, submit
        from approxpath.driver.parallel import pool
        from approxpath.errors import ClusterError

        try:
            with pool(2, None) as p:
                future = submit(p, time.sleep, 20)
                time.sleep(1.0)  # (the workers up, one at its task)
                # a result's header and the first bytes of it, as a worker killed while writing leaves them
                os.write(p._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
                time.sleep(0.5)
                os.kill(next(iter(p._processes)), signal.SIGKILL)
                result(future)
        except ClusterError as exc:
            print("ClusterError:", exc)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("ClusterError: a worker process of this run died"), done


def test_a_users_pool_that_retires_its_workers_is_not_a_lost_worker():
    """A pool with max_tasks_per_child retires workers with status 0 after their result: the
    watch for dead workers took that for a death (2 of 3 map_paths runs failed with ClusterError)."""
    import sys
    from concurrent.futures import ProcessPoolExecutor

    if sys.version_info < (3, 11):
        pytest.skip("max_tasks_per_child is Python 3.11's")
    from approxpath.data import make_sinc

    X, y = make_sinc(n=20, seed=0)
    problems = [approxpath.get_problem("kernel_ridge")(X, y, lam=0.05 * (1 + i)) for i in range(8)]
    with ProcessPoolExecutor(2, max_tasks_per_child=1) as pool:
        paths = approxpath.map_paths(problems, eps=0.5, interval=(1.0, 1.5), relative=True, executor=pool)
    assert all(p.certified for p in paths)


def test_clarabels_solves_in_a_worker_process_do_not_wait_for_the_parents_threads(tmp_path):
    """Clarabel (0.10 and later) factors on rayon's threads; a worker forked from a process whose
    solves started them has none: its first solve large enough to run in parallel (the SVM at
    n = 200, when scikit-learn and libSVM are not installed) waited forever.  Clarabel now runs on
    one thread (``max_threads``: compute.parallelism.SOLVER_THREADS): the path ends and certifies."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import approxpath
        from approxpath.data import make_classification

        X, y = make_classification(n=200, d=2, seed=0)
        problem = approxpath.get_problem("kernel_svm")(X, y, c=1.0)
        approxpath.approximate_path(problem, eps=0.5, interval=(2.0**-6, 2.0**8), solver=["clarabel"])  # (threads)
        path = approxpath.approximate_path(problem, eps=0.05, interval=(2.0**-6, 2.0**8), workers=2,
                                           solver=["clarabel"])
        print(path.certified, approxpath.verify(path.save({str(tmp_path / "c.npz")!r}), X, y).ok)
    """)
    # (~6 s; the old code waited forever)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["True", "True"], done


def test_a_dask_worker_without_this_versions_modules_is_said_to_run_another_approxpath():
    """A worker asked for its version loads the asking function from this version's module: an
    older approxpath has no such module (or function) and was said to run no approxpath."""
    from approxpath import InputError
    from approxpath.compute.executors import check_executor

    class Client:  # (what check_executor reads of a dask.distributed.Client)
        status = "running"

        def __init__(self, answer):
            self.answer = answer

        def submit(self, *args):  # pragma: no cover - never called
            raise AssertionError

        def run(self, fn, on_error):
            return {"tcp://w1": approxpath.__version__, "tcp://w2": self.answer}

    older = ModuleNotFoundError("No module named 'approxpath.compute.executors'", name="approxpath.compute.executors")
    none = ModuleNotFoundError("No module named 'approxpath'", name="approxpath")
    for answer, said in ((older, "another approxpath, without this version's approxpath.compute.executors "
                                 r"\(ModuleNotFoundError: No module named 'approxpath.compute.executors'\)"),
                         (AttributeError("module has no attribute '_version'"), "another approxpath, without"),
                         (none, r"no approxpath \(ModuleNotFoundError: No module named 'approxpath'\)"),
                         ("0.4.1", "0.4.1")):
        with pytest.raises(InputError, match=rf"the Dask worker tcp://w2 runs {said}.* \(1 of 2 workers differ\)"):
            check_executor(Client(answer))
    check_executor(Client(approxpath.__version__))


def test_a_problem_worker_processes_cannot_load_is_one_line():
    """A problem class defined inside a function cannot be pickled for the workers: one line naming
    the fix, not the pickle module's traceback."""
    from approxpath.data import make_sinc

    base = approxpath.get_problem("kernel_ridge")

    class Local(base):
        pass

    X, y = make_sinc(n=30, seed=0)
    with pytest.raises(InputError, match="top level of a module, or run without workers"):
        approxpath.approximate_path(Local(X, y, lam=0.1), eps=0.05, interval=(0.5, 4.0), workers=2)
