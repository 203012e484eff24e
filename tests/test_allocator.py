"""The command line's allocator policy: set for its own process, never for a library caller's."""

import os
import platform
import subprocess
import sys

import pytest

from approxpath import cli
from approxpath.compute import allocator

_GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# 20 blocks of 64 MB (above glibc's largest dynamic mmap threshold, 32 MiB), each written once;
# prints the minor page faults they took
_CHURN = """
import resource, sys
import numpy as np
from approxpath.compute.allocator import keep_freed_memory
if sys.argv[1] == "1":
    assert keep_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    block = np.ones(8_000_000)
    del block
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(keep):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}  # glibc's defaults
    out = subprocess.run([sys.executable, "-c", _CHURN, "1" if keep else "0"], capture_output=True, text=True,
                         check=True, env=env)
    return int(out.stdout)


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallopt")
def test_freed_blocks_are_reused_not_mapped_and_faulted_in_again():
    default = _faults(False)
    # mapped anew, each 64 MB block takes 16,384 faults of 4 KiB pages (here 800 with numpy's
    # huge-page advice); 32 or fewer where every page is huge, too few to tell the two apart
    if default < 20 * 100:
        pytest.skip(f"this system's allocator already reuses the blocks ({default} faults)")
    assert _faults(True) < default / 4


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallopt")
def test_the_users_own_glibc_setting_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert allocator.keep_freed_memory() is False


def test_only_the_command_run_as_its_process_sets_it(monkeypatch):
    calls = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append(1))
    monkeypatch.setattr(sys, "argv", ["approxpath", "--version"])
    assert cli.main(["--version"]) == 0 and calls == []  # called from Python: the caller's allocator
    assert cli.main() == 0 and calls == [1]


def _task_churn():
    """Minor page faults of 20 blocks of 1 MiB (below numpy's huge-page advice, 4 MiB) before,
    inside and after a task's ``task_memory`` block (run on a Dask worker)."""
    import resource

    import numpy as np

    def churn():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(20):
            block = np.ones(131_072)
            del block
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    outside = churn()
    with allocator.task_memory():
        inside = churn()
    return outside, inside, churn(), os.environ.get("MALLOC_TRIM_THRESHOLD_")


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallopt")
def test_a_dask_workers_task_reuses_freed_blocks():
    """Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536 alone, which fixes glibc's
    mmap threshold at 128 KiB: each 1 MiB block is mapped anew (256 faults of 4 KiB pages), but
    not inside a task's block; the worker's own policy again after it."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        outside, inside, after, trim = client.submit(_task_churn).result()
    if trim is None:
        pytest.skip("this Dask version starts its workers without MALLOC_TRIM_THRESHOLD_")
    assert outside >= 20 * 200, outside  # each block mapped and faulted in anew
    assert inside < outside / 4  # reused within the task
    assert after >= 20 * 200  # the worker's own policy again after it


def test_task_memory_changes_only_a_threshold_fixed_by_the_trim_variable(monkeypatch):
    calls = []
    monkeypatch.setattr(allocator, "_on_dask_worker", lambda: True)
    monkeypatch.setattr(allocator, "_mallopt", lambda: lambda param, value: calls.append((param, value)) or 1)
    monkeypatch.setattr(allocator, "_malloc_trim", lambda: calls.append("trim"))
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with allocator.task_memory():  # glibc's dynamic threshold (a local pool's worker, a plain process)
        pass
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    with allocator.task_memory():  # a threshold of the user's own
        pass
    assert calls == []
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    with allocator.task_memory():  # Dask's workers: raised once for tasks that overlap, put back after the last
        with allocator.task_memory():
            assert calls == [(-3, 1 << 30), (-1, 1 << 28)]
        assert len(calls) == 2
    assert calls[2:] == [(-3, 128 * 1024), (-1, 65536), "trim"]
    with pytest.raises(KeyError), allocator.task_memory():  # a task that fails puts it back too
        raise KeyError
    assert calls[-3:] == [(-3, 128 * 1024), (-1, 65536), "trim"] and allocator._TASKS["running"] == 0
    del calls[:]
    for odd in ("²", "4294967296", "64k"):  # not a C int glibc reads: left alone
        monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", odd)
        with allocator.task_memory():
            pass
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setattr(allocator, "_on_dask_worker", lambda: False)
    with allocator.task_memory():  # a caller's own setting, outside a Dask worker: left alone
        pass
    assert calls == []
