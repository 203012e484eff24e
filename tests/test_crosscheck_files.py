"""`approxpath crosscheck --path FILE` on files that are not path files: one line on stderr naming
the file and what is wrong with it, status 2 (3: a file that exists but cannot be read), never a
traceback (0.5.0: exit 70 on a truncated or empty .npz or a single .npy array), never a numpy
message about pickles or a codec, never a numpy warning."""

import os
import re
import warnings

import numpy as np
import pytest

from approxpath.cli import main
from approxpath.exact import _claimed, read_claimed

from exact_helpers import sinc_csv


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``(folder, data file, a good .npz path file written by `exact`)``."""
    root = tmp_path_factory.mktemp("crosscheck_files")
    data = sinc_csv(root / "sinc50.csv")
    good = root / "lam.npz"
    assert main(["exact", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam", "--bandwidth", "1",
                 "--range", "1e-3", "2", "--out", str(good), "--json"]) == 0
    return root, data, good


def _crosscheck(data, path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning would leak to the user: here it fails the run
        return main(["crosscheck", "klasso", "--data", str(data), "--format", "csv", "--parameter", "lam",
                     "--bandwidth", "1", "--path", str(path)])


def _holding(name, content):
    """A maker of the file ``name`` holding ``content`` (bytes, or text written as UTF-8)."""
    def make(d, good):
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
        return d / name

    make.__name__ = f"_{name.replace('.', '_')}"
    return make


def _noise(seed):
    return np.random.default_rng(seed).integers(0, 256, 4000, dtype=np.uint8).tobytes()


def _truncated(d, good):
    (d / "trunc.npz").write_bytes(good.read_bytes()[:3000])
    return d / "trunc.npz"


def _npy(d, good):
    np.save(d / "arr.npy", np.arange(3))
    return d / "arr.npy"


def _folder(d, good):
    (d / "folder.npz").mkdir(exist_ok=True)
    return d / "folder.npz"


def _npz_as_csv(d, good):
    (d / "zip.csv").write_bytes(good.read_bytes())
    return d / "zip.csv"


def _objects(d, good):
    np.savez(d / "obj.npz", t=np.array([1.0, 2.0], dtype=object))
    return d / "obj.npz"


def _bad_crc(d, good):
    f = d / "crc.npz"
    t = np.array([0.25, 0.5, 0.75])
    np.savez(f, t=t, beta=np.zeros((3, 50)), beta0=np.zeros(3))  # stored, not compressed
    raw = bytearray(f.read_bytes())
    at = bytes(raw).index(t.tobytes())
    raw[at] ^= 0xFF
    f.write_bytes(bytes(raw))
    return f


def _cond_of_another_length(d, good):
    np.savez(d / "cond.npz", t=np.arange(1.0, 4.0), beta=np.zeros((3, 50)), beta0=np.zeros(3), cond=np.ones(2))
    return d / "cond.npz"


def _fifo(d, good):
    f = d / "fifo.npz"
    if not f.exists():
        os.mkfifo(f)
    return f


@pytest.mark.parametrize("make,match", [
    (_truncated, "a damaged or truncated zip archive"),
    (_holding("empty.npz", b""), "it is empty (0 bytes)"),
    (_npy, "it holds one .npy array, not an .npz archive"),
    (_folder, "it is a directory"),
    (_holding("rand.npz", _noise(0)), "it is not an .npz (zip) archive"),
    (_holding("csv.npz", "0.1,0.5\n0.2,0.7\n"), "it is text, not an .npz (zip) archive (a CSV path file? its name must end in .csv)"),
    (_holding("rand.csv", b"\xad" + _noise(1)), "line 1: not UTF-8 text (a binary file?)"),
    (_holding("empty.csv", ""), "it is empty (no header line"),
    (_holding("header.csv", "t,beta0\n"), "it has a header but no rows"),
    (_npz_as_csv, "it is a zip archive, not CSV text"),
    (_holding("nan.csv", "t,beta0\n0.5,0\n1,abc\n"), "line 3: 'abc' is not a number"),
    (_holding("ragged.csv", "t,beta0,beta[0]\n0.5,0,0\n1,2\n"), "line 3: 2 values but the header names 3 columns"),
    # 0.5.0: TypeError (None < int), exit 70
    (_holding("mixed.csv", "t,beta,beta[0]\n0.5,0,0\n"), "column 'beta' is repeated or also given as beta[i]"),
    # (said "must be numbered 0..1", naming neither column)
    (_holding("gap.csv", "t,beta0,beta[0],beta[2]\n0.5,0,0,0\n"), "0, 1, 2, ... once each: beta[1] is missing"),
    (_holding("twice.csv", "t,beta0,beta[0],beta[1],beta[1]\n0.5,0,0,0,0\n"), "once each: beta[1] is repeated"),
    (_objects, "member 't.npy' holds Python objects"),
    (_bad_crc, "member 't.npy' is no readable array (BadZipFile: Bad CRC-32"),
    (_cond_of_another_length, "array 'cond' must hold one number per point (3)"),
    (_fifo, "it is not a regular file"),
], ids=lambda v: getattr(v, "__name__", "")[1:] if callable(v) else "")
def test_a_bad_path_file_is_one_line_and_status_2(files, capsys, make, match):
    root, data, good = files
    bad = make(root, good)
    capsys.readouterr()
    assert _crosscheck(data, bad) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("approxpath: error: "), err
    assert repr(str(bad)) in err and match in err, err
    for leak in ("Traceback", "pickled", "allow_pickle", "codec", "Warning", "internal error"):
        assert leak not in err, err


def test_a_path_file_that_cannot_be_read_is_status_3(files, capsys, monkeypatch):
    root, data, good = files

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    (root / "denied.csv").write_text("t,beta0\n1,0\n")
    monkeypatch.setattr(_claimed, "open", denied, raising=False)  # (root reads any file: chmod cannot say no)
    for name in ("lam.npz", "denied.csv"):
        capsys.readouterr()
        assert _crosscheck(data, root / name) == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"cannot read path file {str(root / name)!r}: Permission denied" in err, err


def test_a_missing_path_file_still_says_so(files, capsys):
    root, data, _ = files
    assert _crosscheck(data, root / "missing.npz") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "path file" in err and "does not exist" in err


def test_good_path_files_still_check(files, capsys):
    """The npz `exact` wrote and its CSV form (a byte-order mark, blank and '#' lines allowed)."""
    root, data, good = files
    assert _crosscheck(data, good) == 0
    arrays = read_claimed(good)
    header = "t,beta0," + ",".join(f"beta[{i}]" for i in range(arrays["beta"].shape[1]))
    rows = "\n".join(",".join(f"{v:.17g}" for v in (t, b0, *b))
                     for t, b0, b in zip(arrays["t"], arrays["beta0"], arrays["beta"]))
    csv = root / "lam.csv"
    csv.write_text("\ufeff" + header + "\n\n# a comment\n" + rows + "\n", encoding="utf-8")
    assert _crosscheck(data, csv) == 0
    again = read_claimed(csv)
    np.testing.assert_array_equal(again["beta"], arrays["beta"])
    np.testing.assert_array_equal(again["t"], arrays["t"])
    assert "OK" in capsys.readouterr().out


@pytest.mark.parametrize("options, match", [
    (["--lam", "0.1"], r"'lam.npz' is a path over lam, not bandwidth: pass --parameter lam \(and its fixed value\)"),
    (["--parameter", "lam", "--bandwidth", "2"], r"'lam.npz' is a path at bandwidth = 1, not 2: pass --bandwidth 1"),
])
def test_a_path_file_of_another_path_is_refused_not_read_as_this_one(files, capsys, monkeypatch, options, match):
    """`exact --out` records its path's parameter and fixed value; crosscheck read a lambda path's
    t as bandwidths (--lam 0.1, the default parameter) and flagged it with a gap of 30."""
    root, data, good = files
    monkeypatch.chdir(root)
    assert main(["crosscheck", "klasso", "--data", str(data), "--format", "csv", *options, "--path", good.name]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("approxpath: error: ")
    assert re.search(match, err), err


def test_a_claimed_nan_and_a_meta_value_that_is_no_number_are_named(files, capsys):
    """NaN said "array 'beta' contains NaN or inf" without the row; a meta 'bandwidth' of "1"
    said "Unknown format code 'g' for object of type 'str'"."""
    root, data, good = files
    arrays = dict(np.load(good))
    beta = arrays["beta"].copy()
    beta[2, 3] = np.nan
    np.savez(root / "nan.npz", **dict(arrays, beta=beta))
    assert _crosscheck(data, root / "nan.npz") == 2
    assert "array 'beta' contains NaN or inf (first at row 2, as given)" in capsys.readouterr().err
    np.savez(root / "meta.npz", **dict(arrays, meta='{"problem": "klasso", "parameter": "lam", "bandwidth": "1"}'))
    assert _crosscheck(data, root / "meta.npz") == 2
    assert capsys.readouterr().err == (f"approxpath: error: {str(root / 'meta.npz')!r}: its meta's 'bandwidth' must be "
                                       "a finite number; got '1'\n")
