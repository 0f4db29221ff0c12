#!/usr/bin/env python3
"""rw-pagegen writes the same pages whatever the compiler (TAP).

usage: test_pagegen.py RW_PAGEGEN

The rewrite benchmarks (bench/rewrite, and the nginx module's in
bench/nginx) compare engines on these pages, so they must be the bytes
the published figures were measured on: 64 pages of the default seed,
checked against their SHA-256. The regression of a page generator that
drew several random numbers in the arguments of one call, whose order
of evaluation gcc and clang do not share.
"""

import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
sys.dont_write_bytecode = True
from serve_common import Tap  # noqa: E402

PAGES = 64
SHA256 = "b10160f706aa17ca9782d21189085bd211a607a5b8a5f22d0b1cf113234d4f12"
SIZE = 3460671


def main(argv):
    t = Tap()
    with tempfile.TemporaryDirectory(prefix="classify-pagegen-") as d:
        p = subprocess.run([argv[1], "pages", d, "--pages", str(PAGES)], capture_output=True, timeout=120)
        t.eq(p.returncode, 0, "rw-pagegen pages DIR --pages %d" % PAGES)
        names = sorted(os.listdir(d))
        t.eq(names, ["page-%04d.html" % i for i in range(PAGES)], "... writes page-0000.html to page-0063.html")
        h, size = hashlib.sha256(), 0
        for name in names:
            with open(os.path.join(d, name), "rb") as f:
                data = f.read()
            h.update(data)
            size += len(data)
        t.eq((size, h.hexdigest()), (SIZE, SHA256),
             "the pages are the published ones (%d bytes, SHA-256 %s...)" % (SIZE, SHA256[:16]))
    t.done()
    return 0 if all(not line.startswith("not ok") for line in t.lines) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
