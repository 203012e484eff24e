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
