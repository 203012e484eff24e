"""A certificate made with another processor's BLAS kernels verifies here, and one made here
verifies there: the last bits of kernel products depend on the BLAS kernel a machine runs
(OpenBLAS picks one per processor), and the bounds allow for that rounding.  The other machine
is played by a child process with ``OPENBLAS_CORETYPE=Nehalem`` (SSE only: no AVX, no FMA),
which every x86-64 processor can run."""

import os
import platform
import subprocess
import sys

import pytest

from approxpath.certificate.format import read_certificate
from approxpath.testing.runs import certificate_differences

# every problem's moving pairs over the bandwidth (klasso, robust l1, the SVM) and kernel
# ridge's Cholesky pairs, on seeded sets small enough for a few seconds each
_CHILD = """
import sys
import approxpath
from approxpath.data import make_classification, make_sinc

PATHS = {
    "kernel_svm": (lambda: make_classification(n=40, d=2, seed=31), {"c": 1.0}, 0.05, (0.25, 8.0), False),
    "klasso": (lambda: make_sinc(n=40, noise=0.1, seed=32), {"lam": 0.1}, 0.05, (0.125, 8.0), False),
    "robust_l1": (lambda: make_sinc(n=40, noise=0.1, outliers=0.1, seed=33), {"lam": 0.1}, 1e-2, (0.5, 4.0), True),
    "kernel_ridge": (lambda: make_sinc(n=40, noise=0.1, seed=34), {"lam": 0.1}, 0.05, (0.125, 8.0), False),
}


def probe():
    import hashlib
    import numpy as np

    rng = np.random.default_rng(0)
    return hashlib.sha256((rng.random((300, 300)) @ rng.random((300, 7))).tobytes()).hexdigest()


def write(folder):
    for name, (data, options, eps, interval, relative) in PATHS.items():
        problem = approxpath.get_problem(name)(*data(), **options)
        path = approxpath.approximate_path(problem, eps, interval=interval, relative=relative)
        path.save(f"{folder}/{name}.npz")


def verify(folder):
    for name in PATHS:
        report = approxpath.verify(f"{folder}/{name}.npz")
        print(name, report.ok, report.certified, len(report.failures))
        assert report.ok and report.certified > 0 and not report.failures, str(report)
"""

_X86 = platform.machine().lower() in ("x86_64", "amd64")


def _other(code, *args):
    """Run ``code`` (after :data:`_CHILD`) in a child with Nehalem's BLAS kernels: its stdout."""
    env = dict(os.environ, OPENBLAS_CORETYPE="Nehalem", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _CHILD + code, *args], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _here():
    namespace = {}
    exec(_CHILD, namespace)  # the same paths and probe in this process
    return namespace


@pytest.mark.skipif(not _X86, reason="OPENBLAS_CORETYPE=Nehalem names an x86-64 kernel")
def test_certificates_verify_across_blas_kernels(tmp_path):
    here = _here()
    if _other("print(probe())").strip() == here["probe"]():
        pytest.skip("this numpy's BLAS gives the same bits under OPENBLAS_CORETYPE=Nehalem (not OpenBLAS with "
                    "DYNAMIC_ARCH, or a processor without AVX)")
    (tmp_path / "there").mkdir()
    (tmp_path / "here").mkdir()
    _other("write(sys.argv[1])", str(tmp_path / "there"))
    here["verify"](str(tmp_path / "there"))
    here["write"](str(tmp_path / "here"))
    out = _other("verify(sys.argv[1])", str(tmp_path / "here")).split()
    assert [out[i] for i in range(0, len(out), 4)] == list(here["PATHS"])  # (each verified: asserted there)
    # the two machines' pieces are made of different bits (else this test proves nothing new): arrays
    # that differ, not only meta (which holds the run's times and machine)
    files = [(tmp_path / "there" / f"{name}.npz", tmp_path / "here" / f"{name}.npz") for name in here["PATHS"]]
    assert any(set(certificate_differences(a, b)) - set(read_certificate(a)[1]) for a, b in files)
    # ... and each file says which kernels made it
    for name in here["PATHS"]:
        there, mine = (read_certificate(tmp_path / side / f"{name}.npz")[1]["machine"]["blas"] for side in ("there", "here"))
        assert "Nehalem" in there and "Nehalem" not in mine, (there, mine)
