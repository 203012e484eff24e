"""Kernel products split across the workers of a Dask cluster (approxpath.compute.distributed): the same
numbers as the single-process blocked mode, bit for bit, and the same path."""

import gc
import warnings

import numpy as np
import pytest

import approxpath
from approxpath.moving_layout import fingerprint
from approxpath import InputError
from approxpath.compute.blocked import BlockedKernels
from approxpath.data import make_classification, make_sinc
from approxpath.kernel_families import distances
from approxpath.compute.kernels import Kernels, product_step
from reference_helpers import assert_svm_dual_optimal

distributed = pytest.importorskip("dask.distributed")
from approxpath.compute.distributed import SplitKernels  # noqa: E402

KernelSVM = approxpath.get_problem("kernel_svm")

# 300 samples: product blocks of 109 rows, 3 blocks to a product in one run (of 2048 rows)
_N = 300


@pytest.fixture(scope="module")
def client():
    """Two workers in their own processes: arrays reach them through messages, at any byte
    offset (as on a real cluster; numpy multiplies unaligned matrices without BLAS)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c
        gc.collect()  # a client some test left to the collector, collected inside c.close(), would hang it


def _data(n=_N, d=5, seed=0):
    return make_classification(n=n, d=d, seed=seed)


@pytest.mark.parametrize("family,weights", [("gaussian", None), ("laplacian", None), ("ard", (1.0, 0.5, 2.0, 0.0, 3.0))])
def test_split_products_equal_the_blocked_ones_bit_for_bit(client, monkeypatch, family, weights):
    """Runs of 150 rows stand in for 2048 (so that a product has two, one chunk per worker); a
    product over some rows cuts them where their blocks' rows change chunk.  The products here
    run with BLAS on one thread, as in every entry point of the library and in Dask's workers
    (OpenBLAS 0.3.21, numpy 1.24's, rounds a one-column product differently on two threads)."""
    import approxpath.compute.kernels as kernels
    from approxpath.compute.parallelism import blas_threads

    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 150)
    X, _ = _data()
    assert -(-_N // product_step(_N)) == 3
    split, blocked = SplitKernels(X, family, weights, client), BlockedKernels(X, family, weights)
    D = distances(X, family, weights)
    dense = Kernels(D)
    assert split.mode == "split" and len(split.workers) == 2 and split.chunk == 150
    rng = np.random.default_rng(1)
    some = np.sort(rng.choice(_N, 170, replace=False))  # blocks straddle the chunks
    shuffled = rng.permutation(_N)[:150]  # blocks whose rows lie anywhere
    full = family == "gaussian"  # every layout and order once; the other families' distances once
    with blas_threads(1):
        for rows in (None, some, shuffled) if full else (some,):
            k = _N if rows is None else rows.size
            Cs = ((rng.random(k), rng.random((k, 4)), np.asfortranarray(rng.random((k, 2)))) if full
                  else (rng.random((k, 4)),))
            for C in Cs:
                for x, order in ((2.0**-5, 0), (0.7, 2), (2.0**4, 1)) if full else ((0.7, 2),):
                    got = split.products(x, C, rows, order)
                    assert len(got) == order + 1
                    for A, B, Z in zip(got, blocked.products(x, C, rows, order), dense.products(x, C, rows, order)):
                        assert A.shape == B.shape == (_N,) + C.shape[1:]
                        np.testing.assert_array_equal(A, B)
                        np.testing.assert_array_equal(A, Z)
                    # independent reference: the kernel and its derivative matrices, formed explicitly
                    E = np.exp(-x * D)
                    cols = slice(None) if rows is None else rows
                    for j, A in enumerate(got):
                        np.testing.assert_allclose(A, (D[:, cols] ** j * E[:, cols]) @ C, rtol=1e-12, atol=1e-13)
    empty = split.products(0.5, np.zeros((0, 3)), np.zeros(0, dtype=int), order=1)
    assert [a.shape for a in empty] == [(_N, 3), (_N, 3)] and not any(a.any() for a in empty)
    split.close()


def _path(problem, **options):
    return approxpath.approximate_path(problem, eps=0.1, interval=(2.0**-3, 2.0**3), **options)


def test_a_split_path_equals_the_blocked_path_and_verifies(client, monkeypatch, tmp_path):
    X, y = _data(n=200)  # products of 2 blocks, one run (5 exact solves, 27 products)
    assert -(-200 // product_step(200)) == 2
    monkeypatch.setenv("APPROXPATH_KERNELS", "blocked")
    with pytest.warns(UserWarning, match="APPROXPATH_KERNELS=blocked is set"):
        blocked = _path(KernelSVM(X, y, c=0.1))
    monkeypatch.delenv("APPROXPATH_KERNELS")
    problem = KernelSVM(X, y, c=0.1)
    calls, plain = [], SplitKernels.products
    monkeypatch.setattr(SplitKernels, "products", lambda self, *a, **k: calls.append(a[0]) or plain(self, *a, **k))
    ckpt = tmp_path / "run.ckpt.npz"  # the run is in this process: a checkpoint goes with it
    split = _path(problem, executor=client, split_products=True, checkpoint=ckpt)
    assert not ckpt.exists() and len(calls) > 10  # every product of the search went to the workers
    # the same exact solves (libSVM on its own kernel in both), pieces and bounds, bit for bit
    assert split.solve_points == blocked.solve_points and split.exact_solves > 2
    assert [(p.lo, p.hi, p.gap_bound, p.kind) for p in split.pieces] == [(p.lo, p.hi, p.gap_bound, p.kind)
                                                                          for p in blocked.pieces]
    assert all(fingerprint(p.dual) == fingerprint(q.dual) for p, q in zip(split.pieces, blocked.pieces))
    assert split.meta["distances_sha256"] == blocked.meta["distances_sha256"]
    assert split.certified and problem.kernels.mode != "split"  # the workers' rows are let go after the run
    report = approxpath.verify(split.save(tmp_path / "split.npz"), X, y)
    assert report.ok, report


def test_a_warm_smo_solve_sends_one_product_to_the_workers(client, monkeypatch):
    """Above SMO_MIN_N the exact solves are SMO on entries computed from rows of the distances:
    the first gradient is a product on the workers, the update of the samples left out reads
    the rows of the alpha that moved here (a product on the cluster at every round of 25
    iterations made n = 1500's exact solves 35x slower).  The solve is the blocked mode's, bit
    for bit, and optimal on the kernel formed in numpy."""
    from approxpath.compute.distributed import split_products
    from approxpath.problems.kernel_svm.libsvm import LIBSVM_TOL
    from approxpath.problems.kernel_svm.solves import SMO_MIN_N

    X, y = _data(n=SMO_MIN_N + 100, d=5)
    monkeypatch.setenv("APPROXPATH_KERNELS", "blocked")
    blocked = KernelSVM(X, y, c=0.1)
    assert blocked.bound.blocked
    warm = blocked.candidate("smo", 0.25)
    want = blocked.candidate("smo", 0.5, warm)[1].alpha
    monkeypatch.delenv("APPROXPATH_KERNELS")
    problem = KernelSVM(X, y, c=0.1)
    calls, plain = [], SplitKernels.products
    monkeypatch.setattr(SplitKernels, "products", lambda self, *a, **k: calls.append(a[0]) or plain(self, *a, **k))
    with split_products(problem, client):
        a = problem.candidate("smo", 0.5, warm)[1].alpha
    assert calls == [0.5]
    np.testing.assert_array_equal(a, want)
    assert_svm_dual_optimal(np.exp(-0.5 * distances(X)), y, 0.1, a, LIBSVM_TOL)


def test_a_closed_client_is_refused_in_one_line(tmp_path):
    with distributed.Client(processes=False, n_workers=1, dashboard_address=None) as closed:
        pass
    X, y = _data(n=40)
    for strategy in ("interpolate", "paper"):  # (paper counts the client's threads first)
        with pytest.raises(InputError, match="this Dask client is closed"):
            _path(KernelSVM(X, y, c=0.1), executor=closed, strategy=strategy)


def test_split_products_refuse_what_they_cannot_do(client):
    X, y = _data(n=60)
    problem = KernelSVM(X, y, c=0.1)
    with pytest.raises(InputError, match="give executor"):
        _path(problem, split_products=True)
    with pytest.raises(InputError, match="without workers or chunks"):
        _path(problem, executor=client, split_products=True, chunks=2)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool, pytest.raises(InputError, match="dask.distributed.Client"):
        _path(problem, executor=pool, split_products=True)
    ridge = approxpath.get_problem("kernel_ridge")(X, y, lam=1.0)
    with pytest.raises(InputError, match="kernel products only"):
        _path(ridge, executor=client, split_products=True)
    laplacian = KernelSVM(X, y, c=0.1, kernel="laplacian")  # (0.5.0: a memory budget blamed at the first solve)
    with pytest.raises(InputError, match="serve the gaussian and ard kernels"):
        _path(laplacian, executor=client, split_products=True)
    with pytest.raises(InputError, match="precomputed"):
        SplitKernels(distances(X), "precomputed", None, client)


def test_a_worker_without_memory_for_its_rows_is_refused():
    X, _ = _data(n=60)
    with distributed.LocalCluster(n_workers=1, processes=False, memory_limit="1MB", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        with pytest.raises(InputError, match="on the Dask worker .* add workers"):
            SplitKernels(X, "gaussian", None, client)


@pytest.mark.parametrize("chunk", [150, 200])
def test_split_products_add_the_product_chunks_as_kernels_does(client, monkeypatch, chunk):
    """Past ``product_chunks`` (2048 rows: a product at n > 2048), the runs are summed apart and
    then in order, on the workers as in one process: the same bits (chunks of 150 and 200 rows
    stand in for 2048 here)."""
    import approxpath.compute.kernels as kernels

    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", chunk)
    assert len(kernels.product_chunks(_N)) > 1
    X, _ = _data()
    split, dense = SplitKernels(X, "gaussian", None, client), Kernels(distances(X, "gaussian", None))
    rng = np.random.default_rng(3)
    some = np.sort(rng.choice(_N, 250, replace=False))
    chunked = []
    for rows in (None, some):
        C = rng.random((_N if rows is None else rows.size, 3))
        chunked.append((rows, C, dense.products(0.7, C, rows)))
        for A, Z in zip(split.products(0.7, C, rows), chunked[-1][2]):
            np.testing.assert_array_equal(A, Z)
    # the chunks do change the last bits (so the equality above tells the two orders apart)
    monkeypatch.setattr(kernels, "_PRODUCT_CHUNK", 2048)
    assert any(not np.array_equal(A, Z) for rows, C, got in chunked for A, Z in zip(dense.products(0.7, C, rows), got))


def test_the_command_line_points_a_path_at_a_schedulers_address(client, tmp_path, capsys, monkeypatch):
    """``--dask ADDRESS --split-products``: the products run on that cluster's workers (the path of
    split_products=True: the blocked mode's pieces); a scheduler that does not answer, or an address without a port, is one line."""
    import json

    from approxpath.cli import main

    X, y = _data(n=120, d=3)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    args = ["path", "kernel_svm", "--data", str(data), "--c", "0.1", "--range", "0.25", "4", "--json"]
    assert main([*args, "--dask", client.scheduler.address, "--split-products", "--n-jobs", "1", "--out",
                 str(tmp_path / "p.npz")]) == 0
    split = json.loads(capsys.readouterr().out)
    here = approxpath.approximate_path(KernelSVM(X, y, c=0.1), eps=0.125, interval=(0.25, 4.0), executor=client,
                                       split_products=True)
    assert (split["exact_solves"], split["pieces"]) == (here.exact_solves, len(here.pieces))
    assert approxpath.verify(tmp_path / "p.npz", X, y).ok
    monkeypatch.setattr("approxpath.cli.running.DASK_TIMEOUT", 1)
    monkeypatch.setattr("approxpath.cli.running._HANDSHAKE_S", 0.5)
    assert main([*args, "--dask", "tcp://127.0.0.1:9"]) != 0
    assert "no Dask scheduler answered at tcp://127.0.0.1:9" in capsys.readouterr().err
    assert main([*args, "--dask", "schedulerhost"]) == 2
    err = capsys.readouterr().err
    assert "'schedulerhost' is not a scheduler address like tcp://host:8786" in err and err.count("\n") == 1
    assert main([*args, "--dask", "tcp://127.0.0.1:99999"]) == 2  # (0.5.0: 30 s of retries)
    assert "Port out of range" in capsys.readouterr().err
    import socket
    import time

    with socket.socket() as mute:  # accepts connections (the system's backlog), never answers: 0.5.0 waited for ever
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        t0 = time.monotonic()
        assert main([*args, "--dask", f"tcp://127.0.0.1:{mute.getsockname()[1]}"]) == 2
        assert time.monotonic() - t0 < 30
    assert "no Dask scheduler answered" in capsys.readouterr().err
    import threading

    with socket.socket() as web:  # an HTTP server's reply: it said "no Dask scheduler answered (Unable to
        web.bind(("127.0.0.1", 0))  # allocate 3.07 EiB for an array ...)", a memory problem to the reader
        web.listen()

        def reply():
            for _ in range(8):  # (Dask may connect more than once)
                try:
                    conn, _ = web.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

        threading.Thread(target=reply, daemon=True).start()
        assert main([*args, "--dask", f"tcp://127.0.0.1:{web.getsockname()[1]}"]) == 2
    err = capsys.readouterr().err  # (older Dask releases wait for a handshake instead: a timeout, said as such)
    assert err.count("\n") == 1 and "allocate" not in err
    assert "is not a Dask scheduler (its reply could not be read as one: " in err or "Timed out during handshake" in err


def test_select_encloses_klasso_held_out_predictions_on_a_schedulers_workers(client, monkeypatch):
    """kLASSO's held-out enclosures go to the cluster in runs of pieces (2 here, for a small
    case): the cells, choice and δ of one process, bit for bit."""
    from approxpath.selection import validation

    monkeypatch.setattr(validation, "_TASK_PIECES", 2)
    X, y = make_sinc(n=40, noise=0.1, seed=3)
    problem = approxpath.get_problem("klasso")(X, y, lam=0.1)
    run = dict(cv=2, interval=(0.5, 4.0), tol=0.01, max_solves=60, strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the budget ends the search before tol)
        with distributed.get_task_stream(client) as stream:
            there = approxpath.select(problem, "mae", executor=client, **run)
        here = approxpath.select(problem, "mae", **run)
    assert sum(str(task["key"]).startswith("task_in_worker") for task in stream.data) >= 4
    assert (there.t, there.value, there.delta) == (here.t, here.value, here.delta)
    np.testing.assert_array_equal(np.c_[there.lo, there.hi], np.c_[here.lo, here.hi])


def test_select_runs_the_folds_paths_on_a_schedulers_workers(client, tmp_path, capsys):
    """``approxpath select --dask ADDRESS``: the folds' paths run on the cluster, and the choice,
    its enclosure, δ and the exact solves are those of the same selection in one process."""
    import json

    from approxpath.cli import main

    X, y = _data(n=60, d=3)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    args = ["select", "kernel_svm", "--data", str(data), "--c", "1", "--cv", "3", "--range", "0.25", "4", "--tol",
            "0.05", "--json"]
    with distributed.get_task_stream(client) as stream:
        assert main([*args, "--dask", client.scheduler.address]) in (0, 1)
    there = json.loads(capsys.readouterr().out)
    paths = [task for task in stream.data if str(task["key"]).startswith("path_in_worker")]
    assert len(paths) >= 3  # (at least the 3 folds' first paths ran there)
    assert main(args) in (0, 1)
    here = json.loads(capsys.readouterr().out)
    assert [there[k] for k in ("t", "value", "delta", "exact_solves")] == [here[k] for k in ("t", "value", "delta",
                                                                                             "exact_solves")]
    for command in (args, ["path", *args[1:6], "--range", "0.25", "4"]):  # (path: the scheduler would be ignored)
        assert main([*command, "--dask", client.scheduler.address, "--workers", "2"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--workers (2 processes) both say where the work runs: pass one" in err


def test_the_command_line_hands_segments_to_the_workers(client, tmp_path, capsys):
    """``path --dask``: the segments between exact solves are certified on the cluster's workers,
    for every problem (robust ℓ1 here): the pieces of ``executor=client`` in Python.  A checkpoint
    (one process's run) is refused with them, and so is ``--split-products`` where the products
    cannot be split (robust ℓ1 forms whole kernels; the SVM's laplacian kernel) or without ``--dask``."""
    import json

    from approxpath.cli import main
    from approxpath.data import make_sinc

    X, y = make_sinc(80, seed=1)
    data = tmp_path / "s.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="x,y", comments="")
    args = ["path", "robust_l1", "--data", str(data), "--lam", "0.1", "--range", "0.5", "4", "--relative", "--eps",
            "0.05", "--json", "--out", str(tmp_path / "r.npz"), "--dask", client.scheduler.address]
    with distributed.get_task_stream(client) as stream:
        assert main(args) == 0
    there = json.loads(capsys.readouterr().out)
    assert sum(str(task["key"]).startswith("segment_in_worker") for task in stream.data) >= 1
    problem = approxpath.get_problem("robust_l1")(X, y, lam=0.1)
    here = approxpath.approximate_path(problem, eps=0.05, relative=True, interval=(0.5, 4.0), executor=client)
    assert (there["exact_solves"], there["pieces"]) == (here.exact_solves, len(here.pieces))
    assert there["certified"] is True and approxpath.verify(tmp_path / "r.npz", X, y).ok
    assert not (tmp_path / "r.npz.partial.npz").exists()
    assert main([*args, "--checkpoint", str(tmp_path / "c.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dask hands robust_l1's segments to worker processes" in err
    assert main([*args, "--split-products"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--split-products cannot serve this path: robust_l1 forms whole kernels" in err

    Xc, yc = _data(n=60, d=3)
    data = tmp_path / "c.csv"
    np.savetxt(data, np.column_stack([Xc, yc]), delimiter=",", header="a,b,c,y", comments="")
    svm = ["path", "kernel_svm", "--data", str(data), "--c", "1", "--range", "0.25", "4", "--json"]
    with distributed.get_task_stream(client) as stream:
        assert main([*svm, "--dask", client.scheduler.address]) == 0
    assert json.loads(capsys.readouterr().out)["certified"] is True
    assert sum(str(task["key"]).startswith("segment_in_worker") for task in stream.data) >= 1
    for extra, words in ((["--kernel", "laplacian", "--dask", client.scheduler.address], "kernel='laplacian' needs"),
                         ([], "--split-products needs --dask ADDRESS")):
        assert main([*svm, *extra, "--split-products"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err


def test_workers_with_another_approxpath_are_refused_before_any_work(client, monkeypatch):
    """A worker process imports its own approxpath: one of another version computed the
    products of a split path (or a fold's path) with other code, and when a function was missing
    there the exact solves failed over to a backend that refused with a misleading message."""
    import approxpath.compute.executors as dist

    import re

    dist.check_executor(client)  # the same version: accepted
    theirs = re.escape(approxpath.__version__)
    monkeypatch.setattr(approxpath, "__version__", "0.0.1")  # (this process only: the workers keep theirs)
    X, y = _data(n=60, d=2)
    for run in (lambda: _path(KernelSVM(X, y, c=0.1), executor=client, split_products=True),
                lambda: approxpath.select(KernelSVM(X, y, c=1.0), cv=2, interval=(0.5, 2.0), executor=client)):
        with pytest.raises(InputError, match=rf"the Dask worker tcp://\S+ runs {theirs}, this process approxpath "
                                             r"0\.0\.1 \(2 of 2 workers differ\): install this version"):
            run()
