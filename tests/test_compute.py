"""The compute layer: thread counts (ours and the BLAS's, one home), products and paths the same
on any number of threads, work in the background (the device backend: test_compute_device.py)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import approxpath
from approxpath import compute
from approxpath.compute import blocked
from approxpath.compute import parallelism as th
from approxpath.compute.blocked import BlockedKernels
from approxpath.compute.distances import sq_distances
from approxpath.compute.kernels import Kernels
from approxpath.data import make_classification, make_sinc
from approxpath.errors import InputError

def _blas_threads():
    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


# -- threads ---------------------------------------------------------------------------------

def test_n_jobs_follows_joblibs_convention(monkeypatch):
    monkeypatch.setattr(th, "cores", lambda: 8)
    assert [th.resolve(j) for j in (1, 3, -1, -2, -8, -100)] == [1, 3, 8, 7, 1, 1]
    assert th.resolve(None) == 8 and th.resolve(None, default=1) == 1
    for bad in (0, 1.5, "2", True):
        with pytest.raises(InputError, match="n_jobs"):
            th.resolve(bad)


def test_cores_come_from_the_affinity_mask_and_a_cgroup_quota(monkeypatch):
    assert 1 <= th.cores() <= len(os.sched_getaffinity(0))
    monkeypatch.setattr(th, "_cgroup_quota", lambda: 1)
    th.cores.cache_clear()
    try:
        assert th.cores() == 1
    finally:
        th.cores.cache_clear()


def test_cgroup_quota_files_are_read(monkeypatch, tmp_path):
    files = {"/sys/fs/cgroup/cpu.max": "150000 100000\n"}
    real_open = open

    def fake_open(path, *a, **k):
        if path in files:
            return real_open(_write(tmp_path, files[path]), *a, **k)
        if str(path).startswith("/sys/fs/cgroup"):
            raise OSError(path)
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", fake_open)
    assert th._cgroup_quota() == 2  # 1.5 CPUs, rounded up
    files["/sys/fs/cgroup/cpu.max"] = "max 100000\n"
    assert th._cgroup_quota() is None


def _write(tmp_path, text):
    path = tmp_path / "quota"
    path.write_text(text)
    return path


def _threads_in_a_worker():
    import os

    return os.environ.get("OMP_NUM_THREADS"), th.kernel_threads()


def test_omp_num_threads_is_the_default_where_approxpath_s_own_is_unset(monkeypatch):
    """joblib's process workers (scikit-learn's ``n_jobs``: GridSearchCV, cross_val_score) and
    Dask's set OMP_NUM_THREADS to their share of the cores; 0.5.0 ran every core's kernel threads
    in each of them (16 workers of 16 threads on 16 cores)."""
    monkeypatch.delenv("APPROXPATH_NUM_THREADS", raising=False)
    started = {}  # the process's starting environment, as _started_with reads it
    monkeypatch.setattr(th, "_started_with", lambda name: started.get(name, ""))
    for value, expected in (("1", 1), ("2,1", min(2, th.cores())), ("999", th.cores()), ("", th.cores()),
                            ("0", th.cores()), ("many", th.cores()), ("-1", th.cores())):
        started["OMP_NUM_THREADS"] = value
        assert th.kernel_threads() == expected, value  # (not our variable: what it cannot be is not refused)
    started["OMP_NUM_THREADS"] = "1"
    with compute.threads(2):
        assert th.kernel_threads() == 2
    monkeypatch.setenv("APPROXPATH_NUM_THREADS", "2")
    assert th.kernel_threads() == 2
    monkeypatch.delenv("APPROXPATH_NUM_THREADS")
    del started["OMP_NUM_THREADS"]
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # set after the start (Dask's LocalCluster does): not read
    assert th.kernel_threads() == th.cores()
    monkeypatch.undo()
    monkeypatch.delenv("APPROXPATH_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    joblib = pytest.importorskip("joblib")
    with joblib.parallel_config(backend="loky", inner_max_num_threads=1):
        got = joblib.Parallel(n_jobs=2)(joblib.delayed(_threads_in_a_worker)() for _ in range(2))
    assert got == [("1", 1)] * 2


def test_the_kernel_threads_setting_and_its_environment_default(monkeypatch):
    monkeypatch.delenv("APPROXPATH_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert th.kernel_threads() == th.cores()
    monkeypatch.setenv("APPROXPATH_NUM_THREADS", "3")
    assert th.kernel_threads() == 3
    with compute.threads(1):
        assert th.kernel_threads() == 1
    assert th.kernel_threads() == 3
    monkeypatch.setenv("APPROXPATH_NUM_THREADS", "many")
    with pytest.raises(InputError, match="APPROXPATH_NUM_THREADS"):
        th.kernel_threads()
    # refused when an entry point starts, also where no kernel pass would read it (0.5.0 ran
    # small problems with the bad value and refused it only at the first pass of a large one)
    X, y = make_sinc(n=20, seed=0)
    for value in ("0", "many"):
        monkeypatch.setenv("APPROXPATH_NUM_THREADS", value)
        with pytest.raises(InputError, match="APPROXPATH_NUM_THREADS must be a nonzero integer"):
            approxpath.approximate_path(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), eps=0.5,
                                        interval=(0.5, 2.0))
        with pytest.raises(InputError, match="APPROXPATH_NUM_THREADS must be a nonzero integer"):  # (0.5.0: ran)
            approxpath.approximate_surface(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), 0.5, (0.05, 0.2),
                                           (0.5, 2.0))
        # a call's own n_jobs is read before the variable (as --n-jobs is): it is not read at all
        assert approxpath.approximate_path(approxpath.get_problem("kernel_ridge")(X, y, lam=0.1), eps=0.5,
                                           interval=(0.5, 2.0), n_jobs=2).certified


def test_passes_of_any_size_share_one_pool_per_setting():
    """Passes of 2 to 9 items on 6 kernel threads take threads of one pool of 5 (a pool per count of
    items left one pool per size behind: 45 idle threads after two paths on 16 cores)."""
    import os

    before = set(th._POOLS)
    with compute.threads(6):
        for k in range(2, 10):
            assert th.parallel_map(lambda x: x + 1, range(k)) == list(range(1, k + 1))
    assert set(th._POOLS) - before <= {(os.getpid(), 5)}


def test_the_first_exact_solve_of_a_call_runs_on_one_blas_thread():
    """scipy's own OpenBLAS is loaded with scipy.linalg, often inside a call's first exact solve:
    it is put on one thread before that solve, not at the next kernel pass (the first solves of a
    command line ran on the library's default threads, their last bits the machine's).  In a fresh
    process (scipy.linalg not loaded before the call) with the libraries' default threads."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "import approxpath\n"
        "from approxpath.data import make_sinc\n"
        "loaded = 'scipy.linalg' in sys.modules\n"
        "problem = approxpath.get_problem('kernel_ridge')(*make_sinc(n=20, seed=0), lam=0.1)\n"
        "real, seen = type(problem).candidate, []\n"
        "def candidate(self, backend, t, warm=None):\n"
        "    from threadpoolctl import threadpool_info\n"
        "    pair = real(self, backend, t, warm)  # (its factorization's library loaded by now)\n"
        "    seen.append([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'])\n"
        "    return pair\n"
        "type(problem).candidate = candidate\n"
        "approxpath.approximate_path(problem, eps=0.5, interval=(0.5, 2.0))\n"
        "print(json.dumps([loaded, seen[0]]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    loaded, first = json.loads(done.stdout.splitlines()[-1])
    assert not loaded and first and set(first) == {1}, (loaded, first)


def test_a_blas_library_that_keeps_its_threads_is_named_once(monkeypatch):
    """OpenBLAS ignores a thread count set from a thread other than the main one: the call says so
    once (how to get one thread: OPENBLAS_NUM_THREADS=1, or the main thread) and goes on."""
    import warnings

    class Stubborn:
        filepath = "/lib/libstubborn.so"

        def get_num_threads(self):
            return 4

        def set_num_threads(self, count):
            pass

    monkeypatch.setattr(th, "_SAID", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        th._unpinned(Stubborn())
        th._unpinned(Stubborn())
    said = [str(w.message) for w in caught if "kept 4 threads" in str(w.message)]
    assert len(said) == 1 and "libstubborn.so" in said[0] and "OPENBLAS_NUM_THREADS=1" in said[0]


def test_parallel_map_works_in_the_calling_thread_too_and_keeps_the_order():
    """On k threads the caller is one of them (it takes items rather than wait); the results come
    back in the items' order, the same as one thread's."""
    import threading
    import time

    who = []

    def slow(i):
        who.append(threading.current_thread().name)
        time.sleep(0.01)  # long enough that the caller and the helper each take an item
        return i * i

    with compute.threads(2):
        assert th.parallel_map(slow, range(6)) == [i * i for i in range(6)]
    assert threading.current_thread().name in who and any(w.startswith("approxpath-kernels") for w in who)
    with compute.threads(3):
        assert th.parallel_map(slow, iter(range(7))) == [i * i for i in range(7)]  # any iterable
    with compute.threads(1):
        who.clear()
        assert th.parallel_map(slow, range(3)) == [0, 1, 4] and set(who) == {threading.current_thread().name}

    def nested(i):  # an item's own parallel_map runs in the item's thread, the caller's as a pool's
        time.sleep(0.01)
        return threading.current_thread().name, th.parallel_map(lambda j: threading.current_thread().name, range(3))

    with compute.threads(2):
        outer = th.parallel_map(nested, range(4))
    assert all(inner == [name] * 3 for name, inner in outer) and len({name for name, _ in outer}) == 2


def test_parallel_map_raises_the_first_failure_once_every_thread_has_stopped():
    """An item that raises: its exception (the first in the items' order among those that
    failed) reaches the caller after no thread runs an item any more; the pool works on."""
    import threading
    import time

    running, lock = [0], threading.Lock()

    def item(i):
        with lock:
            running[0] += 1
        try:
            time.sleep(0.005)
            if i in (2, 5):
                raise ValueError(f"item {i}")
            return i
        finally:
            with lock:
                running[0] -= 1

    with compute.threads(2):
        with pytest.raises(ValueError, match="item 2"):
            th.parallel_map(item, range(40))
        assert running[0] == 0
        assert th.parallel_map(lambda i: -i, range(5)) == [0, -1, -2, -3, -4]


def test_entry_points_run_blas_on_one_thread_and_give_it_back():
    """Inside a managed call (every public entry point) each loaded BLAS runs one thread, also
    inside the threaded products; after the call each has its count back."""
    before = _blas_threads()
    seen = {}

    @th.managed
    def inside():
        seen["entry"] = _blas_threads()
        D = sq_distances(np.random.default_rng(0).standard_normal((64, 2)))
        th_ = []
        with compute.threads(2):
            Kernels(D).products(0.5, np.ones((64, 2)))
            th.parallel_map(lambda _: th_.append(_blas_threads()), [0, 1])
        seen["pool"] = th_

    with th.blas_threads(2):  # a user's setting around the call is restored
        two = _blas_threads()
        inside()
        assert _blas_threads() == two
    assert set(seen["entry"].values()) == {1} and all(set(s.values()) == {1} for s in seen["pool"])
    assert _blas_threads() == before


@pytest.mark.parametrize("trigger", ["with blas_threads(1):\n        pass", "parallel_map(abs, [1])"])
def test_a_blas_loaded_during_a_managed_call_gets_one_thread_too(trigger):
    """scipy's own OpenBLAS is loaded with scipy.linalg, often after an entry point began (the
    kernel ridge's exact solve imports it): the next blas_threads call or kernel pass inside
    puts it on one thread for the rest of the call."""
    code = f"""
import numpy
from threadpoolctl import threadpool_info
from approxpath.compute.parallelism import blas_threads, managed, parallel_map
def counts():
    return sorted(l["num_threads"] for l in threadpool_info() if l["user_api"] == "blas")
@managed
def run():
    import scipy.linalg
    before = counts()
    {trigger}
    return before, counts()
before, inside = run()
print(before, inside, len(counts()))
"""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    _, inside, libraries = out.rsplit("] ", 2)
    assert set(eval(inside + "]")) == {1} and len(eval(inside + "]")) == int(libraries)


def test_products_are_the_same_on_any_number_of_threads(monkeypatch):
    import approxpath.compute.kernels as kernels

    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 16)
    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK_FINE", 64)  # 120 rows: chunks of 8
    monkeypatch.setattr(kernels, "_THREADED_MIN", 1)
    assert [len(r) for r in kernels.product_chunks(120)] == [8] * 15
    assert [len(r) for r in kernels.product_chunks(64)] == [16] * 4
    D = sq_distances(np.random.default_rng(4).standard_normal((120, 3)))
    C = np.random.default_rng(5).standard_normal((120, 2))
    with compute.threads(1):
        one = Kernels(D).products(0.7, C)
    with compute.threads(-1), th.blas_threads(1):
        many = Kernels(D).products(0.7, C)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)


# -- a device through the array API ------------------------------------------------------------

def test_kernel_rows_are_the_kernel_rows_product_on_any_number_of_threads(monkeypatch):
    import approxpath.compute.kernels as kernels

    monkeypatch.setattr(kernels, "_THREADED_MIN", 1)
    monkeypatch.setattr(kernels, "_PRODUCT_BLOCK_BYTES", 8 * 90 * 7)  # blocks of 7 rows
    D = sq_distances(np.random.default_rng(7).standard_normal((90, 2)))
    r, rows = np.random.default_rng(8).standard_normal(90), np.arange(3, 90, 2)
    with compute.threads(1):
        one = kernels.kernel_rows(D, 0.8, r, rows)
    for count in (2, 3):
        with compute.threads(count):
            np.testing.assert_array_equal(kernels.kernel_rows(D, 0.8, r, rows), one)
    np.testing.assert_allclose(one, np.exp(-0.8 * D[rows]) @ r, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(kernels.kernel_rows(D, 0.8, np.ones((90, 2)))[:, 1], np.exp(-0.8 * D).sum(axis=1))


def test_a_path_is_the_same_on_one_thread_and_on_several(monkeypatch):
    """n_jobs changes where the kernel work runs, never the numbers: the same exact solves,
    pieces and bounds bit for bit (products forced into several chunks on the threads)."""
    import approxpath.compute.kernels as kernels

    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 32)
    monkeypatch.setattr(kernels, "_THREADED_MIN", 1)
    X, y = make_classification(n=100, d=3, seed=4)
    paths = [approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=0.1), eps=0.125,
                                         interval=(2**-3, 2**3), n_jobs=j) for j in (1, 3)]
    one, three = ([(p.lo, p.hi, p.gap_bound, p.kind) for p in path.pieces] for path in paths)
    assert one == three and paths[0].solve_points == paths[1].solve_points
    with pytest.raises(InputError, match="n_jobs"):
        approxpath.approximate_path(approxpath.get_problem("kernel_svm")(X, y, c=0.1), eps=0.125, n_jobs=0)


def test_background_work_returns_its_value_raises_its_error_and_finishes_before_a_fork():
    """``background``: the caller gets the value, or the exception in its own thread; a fork
    waits for the work still running (checked in a forked child: its copy has finished)."""
    import threading

    release = threading.Event()
    slow = th.background(lambda: (release.wait(10.0), "done")[1])
    threading.Timer(0.3, release.set).start()
    pid = os.fork()  # the parent's fork hook waits for `slow` first
    if pid == 0:
        os._exit(0 if slow.done() and slow.result() == "done" else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert slow.result() == "done"

    def fails():
        raise ValueError("in the background")

    with pytest.raises(ValueError, match="in the background"):
        th.background(fails).result()


def test_background_work_runs_with_the_callers_kernel_threads():
    """The caller's ``threads(n)`` (a worker process's one thread, a user's ``n_jobs``) holds in
    its background work too: a thread of its own starts in a copy of the caller's context."""
    for count in (1, 3):
        with th.threads(count):
            assert th.background(th.kernel_threads).result() == count


def test_clarabel_runs_on_one_thread_whatever_the_kernel_threads():
    """Clarabel's own threads (rayon's, 0.10 and later) are the exact solvers' one thread
    (``SOLVER_THREADS``), whatever ``n_jobs`` says: its points then do not depend on the thread
    count (at n = 600 they differed in the last bits between one and two threads), and a forked
    worker has no pool of the parent's to wait for."""
    import clarabel

    from approxpath.solvers import SolveSettings
    from approxpath.solvers.conic import _clarabel_options

    has_threads = hasattr(clarabel.DefaultSettings(), "max_threads")
    for count in (1, 3):
        with th.threads(count):
            assert _clarabel_options(SolveSettings()).get("max_threads") == (1 if has_threads else None)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the non-finite X below
def test_the_distances_checks_come_first_and_their_sha256_after(monkeypatch):
    """``checks()`` (finite, largest) without waiting for the hash; ``summary()`` adds the
    sha256 of D, the one :func:`distances_sha256` gives; the blocked mode, without D stored,
    gives the same three from its own pass."""
    from approxpath.kernel_families import distances_sha256

    X = np.random.default_rng(11).standard_normal((70, 3))
    D = sq_distances(X)
    k = Kernels(D)
    assert k.checks() == (True, float(D.max()))
    assert k.summary() == (True, float(D.max()), distances_sha256(D))
    b = BlockedKernels(X)
    assert b.checks() == k.checks() and b.summary() == k.summary()
    D2 = D.copy()
    D2[3, 5] = D2[5, 3] = np.inf
    assert Kernels(D2).checks()[0] is False
    X2 = X.copy()
    X2[3, 1] = np.inf
    assert BlockedKernels(X2).checks()[0] is False  # inf - inf in the differences: NaN, reported
    b = BlockedKernels(np.vstack([X] * 40))  # 2,800 rows: several blocks, on the kernel threads
    windows, parallel_map = [], blocked.parallel_map
    monkeypatch.setattr(blocked, "parallel_map", lambda fn, items: windows.append(len(items)) or parallel_map(fn, items))
    with compute.threads(2):
        assert b.summary() == (True, float(sq_distances(np.vstack([X] * 40)).max()),
                               distances_sha256(sq_distances(np.vstack([X] * 40))))
    assert windows == [2, 2]  # the hash's four blocks, two at a time on the two threads
