#!/usr/bin/env python3
"""The test cases of the research note (../shared/notes/stream-rewrite.md,
section 6, and the checks listed after it), in each mode where they
apply, each run whole, with every 2-way split, in 1-byte chunks and in
1-byte chunks with empty chunks between; every run must give the expected
output, the reference's (rw_ref.c) too, and retain at most the documented
hold-back.

    test_rewrite_cases.py RWTOOL
"""

import sys

from rwcase import Tool, chunkings, lit, rx

SRW, SF, RF = "srw", "sub_filter", "replace_filter"

# (name, mode, L, rules, chunks, expected output)
CASES = [
    ("1 literal across a chunk border", [SRW, SF, RF], 8192, [lit("hello", "HI")],
     [b"say hel", b"lo world"], b"say HI world"),
    ("1b UTF-8 split inside a character", [SRW, SF, RF], 8192, [lit(b"caf\xc3\xa9", "cafe")],
     [b"un caf\xc3", b"\xa9!"], b"un cafe!"),
    ("2 1-byte chunks of ababacd", [SRW, SF, RF], 8192, [lit("abac", "X")],
     [bytes([c]) for c in b"ababacd"], b"abXd"),
    ("3 longest beats priority", [SRW], 8192, [lit("ab", "X"), lit("abc", "Y")],
     [b"a", b"bc"], b"Y"),
    ("3 sub_filter: first configured string", [SF], 8192, [lit("ab", "X"), lit("abc", "Y")],
     [b"a", b"bc"], b"Xc"),
    ("3 replace_filter: configuration order", [RF], 8192, [lit("ab", "X"), lit("abc", "Y")],
     [b"a", b"bc"], b"Xc"),
    ("4 same span: lower index", [SRW, RF], 8192, [lit("Ab", "X", "i"), rx("a[a-z]", "Y")],
     [b"a", b"b!"], b"X!"),
    ("5 leftmost beats longest", [SRW, SF, RF], 8192, [lit("bcdef", "X"), lit("abc", "Y")],
     [b"ab", b"cdef"], b"Ydef"),
    ("6 hidden start after a committed match", [SRW, RF], 8192,
     [lit("xa", "X"), rx("a+b", "Y")], [b"xa", b"ab"], b"XY"),
    ("7 $0 keeps the original case", [SRW, SF, RF], 8192, [lit("hello", "<$0>", "i")],
     [b"HeL", b"lO hello"], b"<HeLlO> <hello>"),
    ("7b ASCII-only case folding", [SRW, SF, RF], 8192,
     [lit(b"\xc3\x89t\xc3\xa9", "E", "i")], [b"\xc3\xa9t\xc3\xa9 \xc3\x89T\xc3\xa9"],
     b"\xc3\xa9t\xc3\xa9 E"),
    ("8 captures across four chunks", [SRW, RF], 8192, [rx(r"(\w+)@(\w+)\.com", "$2 at $1")],
     [b"mail bo", b"b@exa", b"mple.c", b"om now"], b"mail example at bob now"),
    ("8b a group that did not take part is empty", [SRW, RF], 8192,
     [rx(r"(a)|(b)", "[$1|$2|$$]")], [b"ab"], b"[a||$][|b|$]"),
    ("9f deletion", [SRW, RF], 8192, [rx(r"<!--([^-]|-[^-])*-->", "")],
     [b"a<!-", b"- x -->b<!--y-->c"], b"abc"),
    ("9g replace_filter honours lazy quantifiers", [RF], 8192, [rx(r"<!--.*?-->", "")],
     [b"<!--a--> x <!", b"--b-->"], b" x "),
    ("9h greedy swallows both comments", [SRW, RF], 8192, [rx(r"<!--.*-->", "", "s")],
     [b"<!--a--> x <!", b"--b-->"], b""),
    ("10a once then global", [SRW, SF, RF], 8192, [lit("a", "X", "o"), lit("b", "Y")],
     [b"ab", b"ab"], b"XYaY"),
    ("10b a fired once rule does not shadow", [SRW, SF], 8192,
     [lit("ab", "X", "o"), lit("b", "Y")], [b"ab", b"ab"], b"XaY"),
    ("10b replace_filter: a fired once rule still consumes", [RF], 8192,
     [lit("ab", "X", "o"), lit("b", "Y")], [b"ab", b"ab"], b"Xab"),
    ("11 a match longer than L does not exist", [SRW], 8,
     [rx(r"<b>[^<]*</b>", "B"), lit("123", "N")],
     [b"<b>01234", b"56789</", b"b> <b>x</", b"b>"], b"<b>0N456789</b> B"),
    ("12 a run longer than L is cut", [SRW], 4, [rx("a+", "X")],
     [bytes([c]) for c in b"baaaaaab"], b"bXXb"),
    ("12 replace_filter: the pending match is not counted", [RF], 4, [rx("a+", "X")],
     [bytes([c]) for c in b"baaaaaab"], b"bXb"),
    ("13 \\b waits for the next byte", [SRW, RF], 8192, [rx(r"foo\b", "BAR")],
     [b"foo", b"bar foo", b" x"], b"foobar BAR x"),
    ("13b the end of data is a boundary", [SRW, RF], 8192, [rx(r"foo\b", "BAR")],
     [b"x foo"], b"x BAR"),
    ("14 empty chunks", [SRW, SF, RF], 8192, [lit("abc", "X")],
     [b"", b"ab", b"", b"", b"c", b""], b"X"),
    ("14b no chunks", [SRW, SF, RF], 8192, [lit("abc", "X")], [], b""),
    ("15 output is not rescanned", [SRW, SF, RF], 8192, [lit("aa", "a")],
     [b"aaa", b"aa"], b"aaa"),
    ("out-of-order callbacks", [SRW], 8192, [rx("ab|abc", "X"), rx("bcd", "Y")],
     [b"abcd"], b"Xd"),
    ("out-of-order callbacks, replace_filter", [RF], 8192, [rx("ab|abc", "X"), rx("bcd", "Y")],
     [b"abcd"], b"Xcd"),
    ("hidden start inside one rule, too long a span", [SRW], 3, [rx("xa*b", "Y"), rx("a+b", "Z")],
     [b"xaaaab"], b"xaaZ"),
    ("assertions see across borders", [SRW], 8192, [rx(r"\bab", "X"), rx("^c", "Y", "m")],
     [b"a", b"b cab", b"\n", b"c"], b"X cab\nY"),
]


def main():
    tool = Tool(sys.argv[1])
    tests = [(name, mode, L, rules, chunks, exp)
             for (name, modes, L, rules, chunks, exp) in CASES for mode in modes]
    print("1..%d" % len(tests))
    failed = 0
    for i, (name, mode, L, rules, chunks, exp) in enumerate(tests, 1):
        b = tool.build(mode, L, rules)
        if not b.ok:
            failed += 1
            print("not ok %d - %s [%s]: build failed: %s" % (i, name, mode, b.diags or b.error))
            continue
        data = b"".join(chunks)
        tool.input(data)
        problems = []
        ref = tool.ref()
        if ref != exp:
            problems.append("reference gives %r" % (ref,))
        runs = list(chunkings(data))
        runs.append(("as in the note", [len(c) for c in chunks]))
        for cname, ch in runs:
            res = tool.run(ch)
            if res.error:
                problems.append("%s: %s" % (cname, res.error))
            elif res.out != exp:
                problems.append("%s: got %r" % (cname, res.out))
            elif res.held > res.bound:
                problems.append("%s: held %d > %d" % (cname, res.held, res.bound))
        tool.end()
        if problems:
            failed += 1
            print("not ok %d - %s [%s]: %d of %d runs wrong" % (i, name, mode, len(problems), len(runs)))
            for p in problems[:4]:
                print("# " + p)
        else:
            print("ok %d - %s [%s]: %d chunkings give %r" % (i, name, mode, len(runs), exp))
    tool.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
