"""Helpers shared by the generators in tools/ (gen_ai_robots.py,
gen_crawlers.py, gen_uap_regexes.py): the upstream commit of a corpus,
comment text, atomic output and the --check mode; and the reading of a
.clf string literal, for the scripts that read generated files back
(bench/, tests/realdata/). Python 3 standard library only."""

import difflib
import os
import re
import sys
import tempfile


class GenError(Exception):
    """A problem with the input; the generator prints it and exits 2."""


_CLF_ESCAPES = {'"': 0x22, "\\": 0x5C, "n": 0x0A, "r": 0x0D, "t": 0x09}


def clf_string_bytes(body):
    """The bytes of a .clf string literal's body (the text between the
    quotes): the escapes \\" \\\\ \\n \\r \\t and \\xNN of docs/language.md,
    every other character as UTF-8. Raises ValueError naming a bad or
    unfinished escape, as the lexer refuses them."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
        elif i + 1 < len(body) and body[i + 1] in _CLF_ESCAPES:
            out.append(_CLF_ESCAPES[body[i + 1]])
            i += 2
        elif i + 1 < len(body) and body[i + 1] == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}",
                                                                       body[i + 2:i + 4]):
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        else:
            raise ValueError("bad escape %r in the string %r" % (body[i:i + 4], body))
    return bytes(out)


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


def read_commit_date(data_path):
    """The date (YYYY-MM-DD) of the upstream commit the LICENSE-NOTE.md beside
    data_path names ("Commit: SHA (2026-08-22, ...)"), or None. Generated
    packages write it as `// data-date:`, which classifyc --max-data-age
    reads."""
    try:
        text = (data_path.parent / "LICENSE-NOTE.md").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"Commit:\s*`?[0-9a-f]{40}`?\s*\((\d{4}-\d{2}-\d{2})", text)
    return m.group(1) if m else None


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


def check_or_write(prog, output, text, summary, check, regen_command):
    """The end of a generator's main: with `check`, compare `output` with
    `text` (exit status 0 when equal, 1 with a diff and the regeneration
    command when not, or when the file is missing); otherwise write it
    atomically. `summary` ends the status line. Returns the exit status."""
    if not check:
        write_atomic(output, text)
        print("%s: wrote %s (%s)" % (prog, output, summary))
        return 0
    try:
        current = output.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print("%s: %s is missing or unreadable (%s); run: %s" % (prog, output, e, regen_command),
              file=sys.stderr)
        return 1
    if current == text:
        print("%s: %s is up to date (%s)" % (prog, output, summary))
        return 0
    diff = list(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                     str(output) + " (committed)", str(output) + " (generated)"))
    sys.stderr.write("%s: %s is out of date; run: %s\n" % (prog, output, regen_command))
    sys.stderr.writelines(diff[:200])
    if len(diff) > 200:
        sys.stderr.write("... (%d more diff lines)\n" % (len(diff) - 200))
    return 1

