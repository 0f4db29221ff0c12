#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_rewrite (fuzz/corpus/rewrite/, in the
input layout fuzz_rewrite.c describes) and fuzz_rwload
(fuzz/corpus/rwload/: stored sets written by tests/rewrite/rwtool's
"save" command). Run it again after a change of either layout:

    fuzz/make_rewrite_seeds.py build/tests/rewrite/rwtool
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"srw": 0, "replace_filter": 1, "sub_filter": 2}
LS = [1, 2, 3, 4, 6, 8, 16, 64, 8192]
FLAGS = {"i": 1, "s": 2, "m": 4, "o": 8}

# (name, mode, L, [(kind, flags, pattern, template)], body)
SEEDS = [
    ("notes-6-hidden-start", "srw", 8192, [("lit", "", b"xa", b"X"), ("re", "", b"a+b", b"Y")], b"xaab xaaab"),
    ("notes-3-longest", "srw", 8192, [("lit", "", b"ab", b"X"), ("lit", "", b"abc", b"Y")], b"abcab abc"),
    ("notes-12-cap", "srw", 4, [("re", "", b"a+", b"X")], b"baaaaaab"),
    ("notes-13-boundary", "srw", 8192, [("re", "", b"foo\\b", b"BAR")], b"foobar foo x foo"),
    ("captures", "srw", 16, [("re", "", b"(\\w+)@(\\w+)", b"$2 at $1"), ("lit", "o", b"at", b"@")],
     b"mail bob@example now at"),
    ("once-rescan", "srw", 8, [("lit", "o", b"ab", b"X"), ("lit", "", b"b", b"Y"), ("re", "m", b"^b+", b"Z")],
     b"abab\nbbab"),
    ("caseless-multiline", "srw", 64, [("re", "im", b"^ab$", b"L"), ("lit", "i", b"AB", b"-")], b"ab\nAB\naB x"),
    ("rf-tokenizer", "replace_filter", 8192, [("re", "", b"ab|abc", b"X"), ("re", "", b"bcd", b"Y")], b"abcd abcd"),
    ("rf-lazy", "replace_filter", 8192, [("re", "s", b"<!--.*?-->", b"")], b"<!--a--> x <!--b-->"),
    ("rf-cap", "replace_filter", 2, [("re", "", b"abce|b", b"X")], b"abcdabce"),
    ("rf-once-verbatim", "replace_filter", 8192, [("lit", "o", b"ab", b"X"), ("lit", "", b"b", b"Y")], b"abab"),
    ("sf-first-string", "sub_filter", 8192, [("lit", "", b"ab", b"X"), ("lit", "o", b"abc", b"Y")], b"abcabc"),
]


def encode(mode, L, rules, body):
    out = bytearray([MODES[mode], LS.index(L), len(rules) - 1])
    for kind, flags, pat, tpl in rules:
        kf = (1 if kind == "re" else 0) | sum(FLAGS[f] for f in flags) << 1
        out += bytes([kf, len(pat)]) + pat + bytes([len(tpl)]) + tpl
    return bytes(out + body)


def main():
    rwtool = sys.argv[1]
    rdir = os.path.join(HERE, "corpus", "rewrite")
    ldir = os.path.join(HERE, "corpus", "rwload")
    for name, mode, L, rules, body in SEEDS:
        with open(os.path.join(rdir, name + ".in"), "wb") as f:
            f.write(encode(mode, L, rules, body))
        script = ["set %s %d" % (mode, L)]
        for kind, flags, pat, tpl in rules:
            script.append("rule %s %s %s %s" % (kind, flags or "-", pat.hex() or "-", tpl.hex() or "-"))
        script += ["build", "save " + os.path.join(ldir, name + ".set"), "end"]
        res = subprocess.run([rwtool], input="\n".join(script) + "\n", capture_output=True, text=True,
                             check=True)
        if "error" in res.stdout:
            raise SystemExit("%s: %s" % (name, res.stdout))
    print("%d seeds each in %s and %s" % (len(SEEDS), rdir, ldir))


if __name__ == "__main__":
    main()
