"""Helpers shared by the benchmark's scripts (bench/run.py, workload.py,
peerdata.py, redos/run.py)."""

import os
import shutil
import tempfile


class WriteError(Exception):
    """An output that could not be written: str() names the file."""


def check_writable(path):
    """Raises WriteError now when write_atomic(path, ...) would certainly
    fail (the path is not a regular file, or its directory is missing or
    not writable), so that a tool can say so before its long work rather
    than after it."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise WriteError("%s: refusing to write: not a regular file" % path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise WriteError("%s: cannot write: no such directory: %s" % (path, d))
    if not os.access(d, os.W_OK | os.X_OK):
        raise WriteError("%s: cannot write: the directory is not writable" % path)


def write_atomic(path, text):
    """Writes `text` (UTF-8, LF) to `path` through a temporary file in the
    same directory, renamed into place once complete: readers see the old
    file or the new one, and a failed write leaves neither a part nor the
    temporary behind. Refuses a path that exists and is not a regular file
    (as root, the rename would replace /dev/full or /dev/null). Raises
    WriteError."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise WriteError("%s: refusing to write: not a regular file" % path)
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    except OSError as e:
        raise WriteError("%s: cannot write: %s" % (path, e.strerror or e))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise WriteError("%s: cannot write: %s" % (path, e.strerror or e))
        raise


def show(path):
    """A path relative to the current directory when it is inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def pick_cpu():
    """The CPU to pin the benchmark to with taskset (1, else 0), or None,
    and a line saying what was done."""
    if not shutil.which("taskset"):
        return None, "taskset not found: not pinned"
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        allowed = set()
    for cpu in (1, 0):
        if cpu in allowed:
            return cpu, "pinned with taskset -c %d" % cpu
    return None, "CPUs 0 and 1 unavailable: not pinned"
