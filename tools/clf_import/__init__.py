"""clf_import: converters from other bot-blocking rule formats to .clf.

The `clf-import` command (tools/clf-import, installed to PREFIX/bin) is the
user interface; docs/importers.md documents it. Modules:

  main.py        argparse front end: `clf-import anubis|robots-txt|verified-bots ...`
  robots_txt.py  robots.txt `User-agent` groups with `Disallow: /` -> a reject set
  anubis.py      Anubis bot policies (botPolicies.yaml/json) -> .clf
  verified_bots.py  crawler operators' IP lists -> the verified_bots package

Python 3 standard library only (anubis.py also needs PyYAML for YAML input).
Each converter returns the whole .clf text or raises an error carrying
the input file and line; nothing here writes files except main.write_output.
"""

__version__ = "0.1.0"


class InputError(Exception):
    """Bad input: `clf-import` prints `clf-import: PATH:LINE: error: MSG`
    (or `PATH: error: MSG` without a line) and exits 1."""

    def __init__(self, msg, path=None, line=None):
        super().__init__(msg)
        self.msg = msg
        self.path = path
        self.line = line

    def location(self):
        if self.path is None:
            return None
        return "%s:%d" % (self.path, self.line) if self.line else str(self.path)


def clf_string(value):
    """A .clf string literal for `value` (str or bytes): printable ASCII as
    is, `"` and `\\` escaped, every other byte as \\xNN (UTF-8 for str;
    surrogate-escaped bytes from a non-UTF-8 input come back unchanged)."""
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    out = []
    for b in value:
        if b == 0x22:
            out.append('\\"')
        elif b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b <= 0x7E:
            out.append(chr(b))
        else:
            out.append("\\x%02X" % b)
    return '"' + "".join(out) + '"'


def comment_text(value):
    """Free text made safe for one `//` comment line (printable ASCII)."""
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    return "".join(chr(b) if 0x20 <= b <= 0x7E else "\\x%02X" % b for b in value)


# The largest input file read (policies, their imports, robots.txt): far
# more than any real one, and what classifyc accepts as a source.
MAX_INPUT_BYTES = 16 << 20


def read_bounded(path, stream=None):
    """The bytes of `path` (or of `stream`), refusing what is not a regular
    file (a FIFO or a device could block or never end) and anything over
    MAX_INPUT_BYTES. Raises OSError or ValueError with the reason."""
    import os
    import stat
    if stream is None:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        with open(path, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    else:
        data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise ValueError("larger than %d MiB" % (MAX_INPUT_BYTES >> 20))
    return data


def read_input(path, stream=None):
    """read_bounded, with its refusals as an InputError naming the file."""
    try:
        return read_bounded(path, stream)
    except OSError as e:
        raise InputError("cannot open: %s" % (e.strerror or e), path)
    except ValueError as e:
        raise InputError("cannot read: %s" % e, path)
