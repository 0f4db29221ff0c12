#!/usr/bin/env python3
"""Every rules file stored in the repository is of the current format.

Usage: test_stored_files.py CLASSIFYC SOURCE_ROOT

The regression reproducers (tests/regress/*.bin), the rules fuzzer's
seeds (fuzz/corpus/rules/) and the unit tests' fixtures
(tests/unit/data/) are rules files. When the format version changes, a
file left at the old version is refused by the version check before it
reaches the code it was kept to exercise: a reproducer that no longer
reproduces, a seed that seeds nothing. That happened once
(fuzz_rules_explain_fn_name_control_byte.bin stayed at format 4 through
formats 5 and 6), hence this test. Each failure says how to regenerate
the file.
"""
import glob
import os
import re
import struct
import subprocess
import sys

MAGIC = b"\x89CLF\r\n\x1a\n"
HOW = {
    "tests/regress": "recompile its source and redo the change the file's "
                     "commit message describes (git log -- FILE)",
    "fuzz/corpus/rules": "python3 fuzz/make_rules_seeds.py build/cli/classifyc "
                         "fuzz/corpus/rules (fuzz/README.md)",
    "tests/unit/data": "tests/unit/data/make_matcher_fixtures.sh",
}


def main():
    classifyc, root = sys.argv[1], sys.argv[2]
    out = subprocess.run([classifyc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"rules-file format (\d+)", out)
    if not m:
        print("1..1\nnot ok 1 - classifyc --version names no rules-file format: %r" % out)
        return 1
    want = int(m.group(1))
    files = []
    for d in sorted(HOW):
        files += [(d, f) for f in sorted(glob.glob(os.path.join(root, d, "*.bin")))]
    print("1..%d" % len(files))
    bad = 0
    for i, (d, f) in enumerate(files, 1):
        rel = os.path.relpath(f, root)
        with open(f, "rb") as fh:
            head = fh.read(12)
        if len(head) < 12 or head[:8] != MAGIC:
            print("ok %d - %s is not a rules file (kept as bad input)" % (i, rel))
            continue
        (v,) = struct.unpack("<I", head[8:12])
        if v == want:
            print("ok %d - %s is format %d" % (i, rel, v))
        else:
            bad += 1
            print("not ok %d - %s is format %d, this build writes %d: %s"
                  % (i, rel, v, want, HOW[d]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
