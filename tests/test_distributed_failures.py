"""A Dask cluster that loses a run's work (its workers die, its client closes, its scheduler goes
away, it has no workers): the run stops with a ClusterError in one line, never waits forever nor
blames the next backend (approxpath.compute.executors); a local cluster leaves its creator's
kernel threads as they were."""

import pytest

import approxpath
from approxpath import InputError
from approxpath.data import make_classification

distributed = pytest.importorskip("dask.distributed")

KernelSVM = approxpath.get_problem("kernel_svm")


def test_a_cluster_that_lost_its_work_or_workers_stops_the_run(monkeypatch):
    """0.5.0 waited forever on a cluster whose workers were all gone, and reported work the
    cluster cancelled as a memory refusal of the next backend; a string or a closed client
    failed with an AttributeError."""
    from concurrent.futures import CancelledError

    from approxpath import ClusterError
    from approxpath.compute import executors as dist
    from approxpath.compute.executors import check_executor, result

    class Client:
        status = "running"

        def __init__(self, workers):
            self.workers = workers

        def nthreads(self):
            return self.workers

        def submit(self, *args):  # pragma: no cover - never called
            raise AssertionError

    class Future:
        def __init__(self, client, error):
            self.client, self.error = client, error

        def result(self, timeout=None):
            raise self.error

    monkeypatch.setattr(dist, "_POLL_S", 0.001)
    monkeypatch.setattr(dist, "_NO_WORKERS_S", 0.05)
    with pytest.raises(ClusterError, match="has had no workers for 0 s"):
        result(Future(Client({}), TimeoutError()))
    if hasattr(distributed.client, "FutureCancelledError"):  # (a CancelledError; distributed 2023.1 has none)
        with pytest.raises(ClusterError, match="lost work of this run .FutureCancelledError"):
            result(Future(Client({"w": 1}), distributed.client.FutureCancelledError("k", "gone")))
    with pytest.raises(ClusterError, match="lost work of this run .CancelledError"):
        result(Future(Client({"w": 1}), CancelledError()))
    with pytest.raises(ZeroDivisionError):  # the task's own error, as it is
        result(Future(Client({"w": 1}), ZeroDivisionError()))
    closed = Client({"w": 1})
    closed.status = "closed"
    for bad, match in (("tcp://127.0.0.1:1", "executor must be a concurrent.futures executor"),
                       (closed, "this Dask client is closed")):
        with pytest.raises(InputError, match=match):
            check_executor(bad)
    X, y = make_classification(n=40, d=2)
    with pytest.raises(InputError, match="executor must be"):
        approxpath.approximate_path(KernelSVM(X, y, c=0.1), eps=0.5, interval=(0.5, 4.0), executor="tcp://127.0.0.1:1")


def test_lost_work_is_not_a_backend_failure(monkeypatch):
    """A backend whose certification lost its work on the cluster stops the solve (the next
    backends would lose theirs too): not a SolverError listing them, nor another's refusal."""
    from approxpath import ClusterError

    X, y = make_classification(n=40, d=2)
    problem = KernelSVM(X, y, c=0.1)

    def lost(*args, **kwargs):
        raise ClusterError("the Dask cluster lost work of this run")

    monkeypatch.setattr(type(problem), "candidate", lost)
    with pytest.raises(ClusterError, match="lost work"):
        problem.solve(1.0)


_CLUSTER_HERE = """
import os
from dask.distributed import Client, LocalCluster
from approxpath.compute import kernel_threads

if __name__ == "__main__":
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \\
            Client(cluster) as client:
        there = client.submit(kernel_threads).result()
    print(os.environ.get("OMP_NUM_THREADS"), kernel_threads(), there)
"""


def test_a_local_cluster_leaves_its_creators_kernel_threads_as_they_were(tmp_path):
    """Dask's LocalCluster sets OMP_NUM_THREADS=1 in the process that creates it (and leaves it):
    that process's own paths keep every core; its workers, started with it, run one thread."""
    import os
    import subprocess
    import sys

    from approxpath.compute import cores

    script = tmp_path / "cluster_here.py"
    script.write_text(_CLUSTER_HERE)
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "APPROXPATH_NUM_THREADS")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    leaked, here, there = out.stdout.split()
    assert (here, there) == (str(cores()), "1")
    assert leaked in ("1", "None")  # (1 where this Dask version leaves it set)


def test_a_client_closed_during_a_run_is_a_clusters_lost_work():
    """A Dask client closed while a run handed it work raised Dask's ClosedClientError from
    ``submit`` (or CommClosedError), not the documented ClusterError (exit 6)."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from approxpath.compute.executors import submit
    from approxpath.errors import ClusterError

    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        client = Client(cluster)
        client.close()
        with pytest.raises(ClusterError, match="the Dask client or its scheduler went away during the run"):
            submit(client, abs, -1)


@pytest.mark.parametrize("reason, who", [("scheduler-connection-lost", "its scheduler went away"),
                                         ("lost dependencies", "its workers died")])
def test_lost_work_says_whether_the_scheduler_or_the_workers_went(reason, who):
    """A scheduler killed under a --dask run was reported as "its workers died", on two lines
    (Dask's message holds a newline), after ~35 lines of Dask's logged tracebacks."""
    pytest.importorskip("distributed")
    import types
    from concurrent.futures import CancelledError

    from approxpath.compute.executors import result
    from approxpath.errors import ClusterError

    def cancelled(timeout=None):
        raise CancelledError(f"task cancelled for reason: {reason}.\nPlease re-run your work.")

    future = types.SimpleNamespace(client=types.SimpleNamespace(nthreads=lambda: {"w": 1}), result=cancelled)
    with pytest.raises(ClusterError) as err:
        result(future)
    assert who in str(err.value) and "\n" not in str(err.value)


def test_a_closed_stream_or_client_under_a_wait_is_a_clusters_lost_work():
    """A scheduler killed during a wait raised CommClosedError (an OSError: the command line
    exited 3, "a file cannot be read or written"); a client closed during a run had its futures
    cancelled and "its workers died" blamed."""
    pytest.importorskip("distributed")
    import types
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError

    from approxpath.compute.executors import result
    from approxpath.errors import ClusterError

    def closed_stream(timeout=None):
        raise CommClosedError("in <TCP (closed) ConnectionPool.gather>: Stream is closed")

    def cancelled(timeout=None):
        raise CancelledError("task cancelled for reason: unknown.")

    running = types.SimpleNamespace(nthreads=lambda: {"w": 1}, status="running")
    with pytest.raises(ClusterError, match="CommClosedError: .*: its scheduler went away"):
        result(types.SimpleNamespace(client=running, result=closed_stream))
    gone = types.SimpleNamespace(nthreads=lambda: {"w": 1}, status="closed")
    with pytest.raises(ClusterError, match="^the Dask client was closed during the run$"):
        result(types.SimpleNamespace(client=gone, result=cancelled))


def test_the_command_leaves_a_lost_cluster_to_its_one_line(monkeypatch):
    """``--dask``: Dask's loggers (some set to their own levels by its configuration) are quiet
    in the command, which says in one line what the cluster lost."""
    pytest.importorskip("distributed")
    import logging

    from approxpath.cli import running

    monkeypatch.setattr(running, "_connect", lambda Client, address: "a client")
    levels = {n: logging.getLogger(n).level for n in ["distributed", "distributed.client"]}
    try:
        assert running.dask_client("tcp://127.0.0.1:8786") == "a client"
        assert all(logging.getLogger(n).getEffectiveLevel() == logging.CRITICAL for n in levels)
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def test_a_client_that_failed_to_connect_is_gone_before_the_command_goes_on():
    """A --dask client that failed to start lived on in reference cycles; collected later inside another
    client's close (a module's cluster fixture), its own close waited for the lock that close held (Dask's loop
    runners share one): the process hung.  None is left to be collected."""
    import gc

    from approxpath.cli.running import dask_client

    def clients():
        return sum(isinstance(o, distributed.Client) for o in gc.get_objects())

    gc.collect()
    before = clients()
    gc.disable()  # (no collection but the command's own between the two counts)
    try:
        with pytest.raises(InputError, match="is not a scheduler address"):
            dask_client("schedulerhost", 1)
        assert clients() == before
    finally:
        gc.enable()


def test_a_client_that_connects_after_the_command_gave_up_is_closed(monkeypatch):
    """--dask gives up on a scheduler that has not answered in time; one answering later left its client open
    (a caller of the command in the same process kept a connection it was told had failed)."""
    import threading
    import time

    from approxpath.cli import running

    closed = threading.Event()

    class Late:
        def close(self):
            closed.set()

    monkeypatch.setattr(running, "DASK_TIMEOUT", 0.1)
    monkeypatch.setattr(running, "_HANDSHAKE_S", 0.1)
    monkeypatch.setattr(running, "_connect", lambda Client, address: (time.sleep(0.5), Late())[1])
    with pytest.raises(InputError, match="no Dask scheduler answered at tcp://127.0.0.1:8786 within 0.1 s"):
        running.dask_client("tcp://127.0.0.1:8786", 1)
    assert closed.wait(5)
