#!/usr/bin/env python3
"""Compile errors of the build API (rw_build), message by message, against
a golden file: every case of CASES is built and each diagnostic printed as
"rule R, WHERE, offset O: CODE: message". The later compiler phase turns
these into file:line:col errors.

    test_rewrite_errors.py RWTOOL GOLDEN [--update]
"""

import sys

from rwcase import Tool, lit, rx

SRW, SF, RF = "srw", "sub_filter", "replace_filter"

CASES = [
    # the research note's 9a-9e
    ("empty match x*", SRW, 8192, [rx("x*", "X")]),
    ("empty match (ab)?", SRW, 8192, [rx("(ab)?", "X")]),
    ("lazy quantifier", SRW, 8192, [rx("<!--.*?-->", "")]),
    ("no such group", SRW, 8192, [rx("(a)b", "$2")]),
    ("empty pattern", SRW, 8192, [rx("", "X"), lit("", "Y")]),
    # unsupported constructs, each at its offset
    ("look-ahead", SRW, 8192, [rx("a(?=b)", "X"), rx("a(?!b)", "X")]),
    ("look-behind", SRW, 8192, [rx("(?<=a)b", "X"), rx("(?<!a)b", "X")]),
    ("backreference", SRW, 8192, [rx(r"(a)\1", "X"), rx(r"(?<n>a)\k<n>", "X"), rx(r"(a)\g1", "X")]),
    ("reset match start", SRW, 8192, [rx(r"a\Kb", "X")]),
    ("atomic and possessive", SRW, 8192, [rx("(?>a+)b", "X"), rx("a++b", "X"), rx("a{2,}+b", "X")]),
    ("lazy forms", SRW, 8192, [rx("a+?b", "X"), rx("a??b", "X"), rx("a{1,3}?b", "X")]),
    ("lazy-looking text that is not lazy", SRW, 8192,
     [rx(r"[*?]x", "X"), rx(r"\*?x", "X"), rx(r"\Q+?\Ex", "X"), rx(r"(?#+?)x", "X"), rx(r"a{,3}?", "X")]),
    ("conditionals, recursion, callouts, verbs", SRW, 8192,
     [rx("(a)?(?(1)b|c)", "X"), rx("a(?R)?", "X"), rx("a(?C1)b", "X"), rx("(*UTF)a", "X"), rx("a(*SKIP)b", "X")]),
    ("escapes", SRW, 8192, [rx(r"a\Gb", "X"), rx(r"a\Cb", "X"), rx(r"a\Rb", "X"), rx(r"\p{L}", "X")]),
    ("options", SRW, 8192, [rx("(?x)a b", "X"), rx("(?U)a+", "X"), rx("(?i)ab", "X")]),
    ("syntax errors", SRW, 8192, [rx("(a", "X"), rx("a)", "X"), rx("[a", "X"), rx("a{2,1}", "X")]),
    ("NUL in a regex", SRW, 8192, [rx(b"a\x00b", "X")]),
    ("flags", SRW, 8192, [lit("a", "X", "s"), lit("a", "X", "m"), rx("a", "X", "X")]),
    ("too long for max_match", SRW, 4, [lit("abcdef", "X"), rx("a{5}", "X"), rx("a{2,9}", "X")]),
    ("too large with SOM, other rules fine", SRW, 8192,
     [lit("fine", "ok"), rx(r"\b[a-zA-Z0-9_ -]{5,30}@[a-zA-Z0-9_ -]{1,20}(\.[a-zA-Z0-9_ -]{1,20}){1,5}\b", "X"),
      rx("also[0-9]+fine", "ok")]),
    ("templates", SRW, 8192,
     [lit("a", "$x"), lit("a", "$"), lit("a", "${1}"), rx("(a)", "${1"), rx("(a)", "${x}"), rx("(a)", "$10"),
      lit("a", "$$ $0 ${0}")]),
    ("max_match out of range", SRW, 0, [lit("a", "b")]),
    ("max_match too big", SRW, (1 << 20) + 1, [lit("a", "b")]),
    ("unknown mode", "bogus", 8192, [lit("a", "b")]),
    # sub_filter
    ("sub_filter takes literals only", SF, 8192, [rx("a+", "X"), lit("a", "$1"), lit("a", "$0!")]),
    # replace_filter: sregex's syntax
    ("replace_filter: empty matches refused", RF, 8192, [rx("[0-9]*", "X"), rx("a|", "X"), rx(r"\b", "X")]),
    ("replace_filter: what sregex lacks", RF, 8192,
     [rx("(?i)a", "X"), rx(r"a\Zb", "X"), rx(r"(a)\k<1>", "X"), rx(r"[[:alpha:]]", "X"), rx(r"\Qa\E", "X")]),
    ("replace_filter: sregex syntax errors", RF, 8192,
     [rx("a{600}", "X"), rx("a{3,2}", "X"), rx("*a", "X"), rx("a**", "X"), rx("(a", "X"), rx("a)", "X"),
      rx("[b-a]", "X"), rx(r"\x{123}", "X"), rx(r"\o{9}", "X"), rx(b"a\x00", "X")]),
    ("replace_filter: templates", RF, 8192,
     [rx("a", "$host"), rx("a", "${host}"), rx("a", "$"), rx("a", "${&"), rx("a", "$5 $& ${&} $$ $10 $0")]),
]


def render(built):
    if built.ok:
        return ["accepted"]
    if built.error:
        return [built.error]
    return ["rule %d, %s, offset %d: %s: %s" % (d["rule"], d["where"], d["offset"], d["code"], d["message"])
            for d in built.diags]


def main():
    tool = Tool(sys.argv[1])
    golden = sys.argv[2]
    lines = []
    for name, mode, L, rules in CASES:
        lines.append("== %s (%s, max_match %d)" % (name, mode, L))
        for k, r in enumerate(rules):
            lines.append("   rule %d: %s %r => %r%s" % (k, r.kind, r.pattern, r.template,
                                                     " (" + r.flags + ")" if r.flags else ""))
        lines += ["   " + x for x in render(tool.build(mode, L, rules))]
    tool.close()
    text = "\n".join(lines) + "\n"
    if "--update" in sys.argv:
        with open(golden, "w") as f:
            f.write(text)
        print("1..0 # SKIP golden file written: " + golden)
        return 0
    with open(golden) as f:
        want = f.read()
    print("1..1")
    if text == want:
        print("ok 1 - %d cases give the diagnostics of %s" % (len(CASES), golden))
        return 0
    import difflib
    print("not ok 1 - diagnostics differ from %s" % golden)
    for d in difflib.unified_diff(want.splitlines(), text.splitlines(), "golden", "now", lineterm=""):
        print("# " + d)
    return 1


if __name__ == "__main__":
    sys.exit(main())
