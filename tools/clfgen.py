"""Helpers shared by the generators in tools/ (gen_ai_robots.py,
gen_uap_regexes.py): the upstream commit of a corpus, comment text, and
atomic output. Python 3 standard library only."""

import os
import re
import tempfile


class GenError(Exception):
    """A problem with the input; the generator prints it and exits 2."""


def one_line_comment(text):
    """Free text made safe for a `//` comment: one line, printable ASCII.

    Whitespace runs (including newlines) collapse to one space; other bytes
    outside printable ASCII are shown as \\xNN so nothing is silently lost.
    """
    text = re.sub(r"\s+", " ", str(text)).strip()
    return "".join(chr(b) if 0x20 <= b <= 0x7E else "\\x%02X" % b for b in text.encode("utf-8"))


def read_commit(data_path):
    """The upstream commit named by the LICENSE-NOTE.md beside data_path."""
    note = data_path.parent / "LICENSE-NOTE.md"
    try:
        text = note.read_text(encoding="utf-8")
    except OSError as e:
        raise GenError("cannot read %s (%s); pass --commit SHA" % (note, e.strerror))
    m = re.search(r"Commit:\s*`?([0-9a-f]{40})\b", text)
    if not m:
        raise GenError("no 'Commit: <40 hex>' line in %s; pass --commit SHA" % note)
    return m.group(1)


def write_atomic(path, text, encoding="ascii"):
    """Writes text to path through a temporary file in the same directory,
    flushed and renamed into place: readers see the old file or the new
    one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
