"""Writing a certificate (or a checkpoint, a table, a figure, a data set: every output file):
refused over a directory, a device, an input file or another output of the same run, checked
before a long run (the folder must exist and take a new file), written through a temporary file
in the target's folder and an atomic rename, with the umask's permissions; a failure names the
user's file and leaves no temporary file."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..validate import file_name

__all__ = ["check_output", "check_outputs", "remove_stale_temps", "write_atomic", "write_npz"]

# Temporary files of a write: ".<name>.<pid>.tmp" next to the target (a killed writer's file is
# removed by the next write to the same target, once its process is gone).
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.tmp$")


#: A file name to suggest in a directory named as an output, by the flag that named it.
_EXAMPLES = {"--plot": "figure.png", "--export": "table.csv", "--data-out": "data.csv", "--checkpoint": "run.npz"}


def check_output(file, inputs=(), name=None, example=None):
    """:class:`~approxpath.errors.InputError` unless ``file`` may receive a certificate: it is
    not a directory, a device, a pipe or a socket, and not one of the ``inputs`` (the data file;
    None entries and files that do not exist are skipped); ``FileNotFoundError`` when its folder
    does not exist, ``OSError`` naming ``file`` when its folder takes no new file (read-only, full,
    no permission).  ``name``: the flag that named ``file`` (messages name it); ``example``: a file
    name to suggest in a directory (default by ``name``: a figure, a table, a certificate).  Call it
    before a long run."""
    file = file_name("an output file", file)
    if file.exists():
        mode = os.stat(file).st_mode
        if stat.S_ISDIR(mode):
            example = file / (example or _EXAMPLES.get(name, "cert.npz"))
            raise InputError(f"{name or 'output'} {str(file)!r} is a directory: name a file in it, e.g. "
                             f"{str(example)!r}")
        if not stat.S_ISREG(mode):
            raise InputError(f"output {str(file)!r} is not a regular file (a device, pipe or socket): "
                             "refusing to replace it; name a new file")
        for source in inputs:
            if source is not None and Path(source).exists() and os.path.samefile(file, source):
                raise InputError(f"output {str(file)!r} is the input file {str(source)!r}: refusing to overwrite "
                                 "the data; choose another output name")
    folder = file.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {str(file)!r}: the folder {str(folder)!r} does not exist")
    _probe(file)


def _probe(file):
    """``OSError`` naming ``file`` unless its folder takes a new file (read-only, full, no
    permission): found before a run, not after it."""
    probe = file.parent / f".{file.name}.{os.getpid()}.tmp"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return  # this process is writing it now: the folder takes files
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {str(file)!r}: {exc.strerror or exc}") from None
    os.unlink(probe)


def check_outputs(outputs, inputs=()):
    """:func:`check_output` of every file of ``outputs`` (None entries skipped) against every
    one of ``inputs``, and no two outputs the same file: every output of a run refuses every
    input and every other output (``--out`` is not ``--export``, the data, or ``D``).  ``outputs``
    holds ``(name, file)`` pairs, the name (a flag, e.g. ``"--out"``) naming the file in messages;
    two outputs that are one file after resolving links are an ``InputError``."""
    seen = {}
    for name, file in outputs:
        if file is None:
            continue
        check_output(file, inputs, name)
        key = os.path.realpath(file)
        if key in seen:
            raise InputError(f"{name} and {seen[key]} name the same file {str(file)!r}: give each output its own name")
        seen[key] = name


def _pid_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(file):
    """Remove the temporary files that killed writers of ``file`` left behind (their process is
    gone; ``.<name>.<pid>.tmp`` in its folder); returns how many (0 where the folder cannot be
    listed; a file that cannot be removed is skipped)."""
    file = Path(file)
    removed = 0
    try:
        entries = os.listdir(file.parent)
    except OSError:
        return 0
    for entry in entries:
        m = _TEMP.match(entry)
        if m and m["name"] == file.name and not _pid_alive(int(m["pid"])):
            try:
                os.unlink(file.parent / entry)
                removed += 1
            except OSError:
                pass
    return removed


def write_atomic(file, write, inputs=(), durable=True):
    """Write ``file`` atomically: ``write(fh)`` fills a temporary file (binary) in the same folder
    (created with the permissions of the umask, like any new file; an existing target's
    permissions are kept), flushed to disk (``os.fsync``) with ``durable``, then renamed over the
    target: never a half-written file, never a device, a directory or an input (:func:`check_output`).
    Returns ``file`` as a ``Path``.

    Raises
    ------
    InputError
        ``file`` is no file name, is not a regular file or is one of ``inputs``.
    FileNotFoundError
        Its folder does not exist.
    OSError
        The folder cannot be written (full disk, read-only, no permission): the message names
        ``file``, not the temporary file.
    """
    file = file_name("an output file", file)
    check_output(file, inputs)
    remove_stale_temps(file)
    tmp = file.parent / f".{file.name}.{os.getpid()}.tmp"
    try:
        keep = stat.S_IMODE(os.stat(file).st_mode) if file.exists() else None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask applies
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if keep is not None:
            os.chmod(tmp, keep)
        os.replace(tmp, file)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, InputError):
            raise OSError(exc.errno, f"cannot write {str(file)!r}: {exc.strerror or exc}") from None
        raise
    return file


def write_npz(file, arrays, meta, inputs=(), durable=True, compress=True):
    """Write ``arrays`` and ``meta`` (JSON) to ``file`` atomically (:func:`write_atomic`, whose
    ``inputs``, ``durable``, return and errors these are), compressed with ``compress``
    (``np.savez_compressed``, else ``np.savez``).  ``meta`` is the member ``meta``: JSON text with
    sorted keys in a 0-d array (no array may be named ``meta``)."""
    def write(fh):
        save = np.savez_compressed if compress else np.savez
        save(fh, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays)

    return write_atomic(file, write, inputs, durable)
