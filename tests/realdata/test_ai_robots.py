#!/usr/bin/env python3
"""realdata: stdlib/ai_robots.clf vs. ai.robots.txt robots.json (TAP).

    test_ai_robots.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Checks:
  * `tools/gen_ai_robots.py --check` passes (the committed file is what the
    generator writes from the corpora's robots.json now);
  * independent read-back: the string literals of `pub const AGENTS`, with the
    .clf escapes decoded, are exactly the robots.json keys in upstream order;
    `pub const AMBIGUOUS` is Code, Cursor, LCC, Operator, Spider as upstream
    spells them, and `pub const SPECIFIC` is AGENTS minus those, same order
    and comments; header carries commit, MIT and the regeneration command;
    file is ASCII/LF;
  * the generator's escaping round-trips (quote, backslash, control and
    non-ASCII bytes) and is deterministic (upstream's golden test_files input,
    with --ambiguous ''); the curated names match robots.json keys
    case-insensitively; a curated name missing from robots.json is an error;
  * end to end through classifyc/classify-run (examples/main.clf): every
    SPECIFIC name, as a User-Agent alone, inside a UA, upper-cased and
    lower-cased, is rejected as ai-robots-txt, glued to word characters on both
    sides it is not; every AMBIGUOUS name is rejected as NAME/<digit> (any
    case, no word character on its left) and accepted as a bare word, as
    NAME/ without a digit, or glued to word characters.
(That main.clf's regex names exactly ai_robots.AMBIGUOUS is checked by
test_examples.py, which needs no corpora.)
"""

import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True   # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata_common as rc  # noqa: E402

EXPECTED_AGENTS = 166
EXPECTED_AMBIGUOUS = ["Code", "Cursor", "LCC", "Operator", "Spider"]   # AMBIGUOUS_NAMES in the generator
EXPECTED_COMMIT = "738c80df2169027ce0e07c9976fd3f2f57dd8f7b"

decode_clf_string = rc.decode_clf_string
read_entries = rc.read_entries
read_back = rc.read_back


def gen(args, *extra):
    cmd = [sys.executable, os.path.join(args.root, "tools", "gen_ai_robots.py")] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, "$ %s\nexit %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout.decode(), p.stderr.decode())


def main():
    args = rc.parse_args_or_skip()
    tap = rc.Tap()
    robots = args.corpus("ai-robots-txt", "robots.json")
    clf = os.path.join(args.root, "stdlib", "ai_robots.clf")
    with open(robots, encoding="utf-8") as f:
        upstream = list(json.load(f))

    code, diag = gen(args, "--check", robots)
    tap.ok(code == 0, "tools/gen_ai_robots.py --check: stdlib/ai_robots.clf is up to date", diag)

    try:
        names, text = read_back(clf)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        names, text = None, ""
        tap.diag("read-back failed: %s" % e)
    tap.ok(names == upstream and len(names) == EXPECTED_AGENTS,
           "ai_robots.AGENTS = the %d robots.json names, in upstream order" % EXPECTED_AGENTS,
           "got %s names" % (len(names) if names is not None else "no"))
    try:
        agents_e = read_entries(text, "AGENTS")
        specific_e = read_entries(text, "SPECIFIC")
        ambiguous_e = read_entries(text, "AMBIGUOUS")
    except ValueError as e:
        agents_e, specific_e, ambiguous_e = [], None, None
        tap.diag("read-back failed: %s" % e)
    amb_keys = {n.lower() for n in EXPECTED_AMBIGUOUS}
    want_amb = [n for n in upstream if n.lower() in amb_keys]
    tap.ok(ambiguous_e is not None and [n for n, _ in ambiguous_e] == want_amb
           and sorted(n.lower() for n in want_amb) == sorted(amb_keys),
           "ai_robots.AMBIGUOUS = %s, as upstream spells them" % ", ".join(EXPECTED_AMBIGUOUS),
           "got: %r" % (ambiguous_e,))
    tap.ok(specific_e is not None and
           specific_e == [e for e in agents_e if e[0].lower() not in amb_keys] and
           len(specific_e) == EXPECTED_AGENTS - len(want_amb),
           "ai_robots.SPECIFIC = AGENTS minus AMBIGUOUS (%d names), same order and comments"
           % (EXPECTED_AGENTS - len(want_amb)),
           "got %s entries" % (len(specific_e) if specific_e is not None else "no"))
    tap.ok(ambiguous_e is not None and ambiguous_e == [e for e in agents_e if e[0].lower() in amb_keys],
           "ai_robots.AMBIGUOUS entries carry AGENTS' comments")

    raw = open(clf, "rb").read()
    tap.ok(all(b == 0x0A or 0x20 <= b <= 0x7E for b in raw) and raw.endswith(b"}\n"),
           "ai_robots.clf is printable ASCII with LF line endings")
    for needle in (EXPECTED_COMMIT, "github.com/ai-robots-txt/ai.robots.txt", "MIT License", "do not edit",
                   "AMBIGUOUS_NAMES in tools/gen_ai_robots.py",
                   "python3 tools/gen_ai_robots.py ../shared/corpora/ai-robots-txt/robots.json"):
        tap.ok(needle in text, "header mentions %r" % needle)

    with rc.tempdir() as tmp:
        # escaping round trip on synthetic names
        tricky = {'quo"te': {"function": "a\nb"}, "back\\slash": {"function": "x"},
                  "tab\there": {"function": "\u00e9t\u00e9"}, "caf\u00e9 Bot": {"function": ""},
                  "cr\rlf\n": {"function": "y"}, "ctl\x01\x7f": {"function": "z"}}
        tj = os.path.join(tmp, "tricky.json")
        with open(tj, "w", encoding="utf-8") as f:
            json.dump(tricky, f)
        out = os.path.join(tmp, "tricky.clf")
        code, diag = gen(args, tj, "-o", out, "--commit", "0123456", "--ambiguous", "")
        try:
            back = read_back(out)[0] if code == 0 else None
        except ValueError as e:
            back, diag = None, diag + "\n%s" % e
        tap.ok(back == list(tricky), "generator escaping round-trips quote, backslash, control and non-ASCII bytes",
               diag + "\nread back: %r" % (back,))

        # upstream's own golden input, twice: deterministic, complete
        golden = args.corpus("ai-robots-txt", "code", "test_files", "robots.json")
        if os.path.isfile(golden):
            outs = []
            for k in (1, 2):
                o = os.path.join(tmp, "golden%d.clf" % k)
                code, diag = gen(args, golden, "-o", o, "--commit", "0123456", "--ambiguous", "")
                outs.append(open(o, "rb").read() if code == 0 else None)
            with open(golden, encoding="utf-8") as f:
                gnames = list(json.load(f))
            ok = outs[0] is not None and outs[0] == outs[1]
            if ok:
                gtext = outs[0].decode("ascii")
                ok = ([n for n, _ in read_entries(gtext, "AGENTS")] == gnames and
                      read_entries(gtext, "SPECIFIC") == read_entries(gtext, "AGENTS") and
                      read_entries(gtext, "AMBIGUOUS") == [])
            tap.ok(ok, "generator on upstream code/test_files/robots.json (%d names), --ambiguous '': complete, "
                   "deterministic, SPECIFIC = AGENTS, AMBIGUOUS empty" % len(gnames), diag)
        else:
            tap.skip("generator on upstream code/test_files/robots.json", "file not in corpora")

        # the ambiguous split: curated names compared case-insensitively, upstream spelling kept
        split = {"GPTBot": {"function": "a"}, "code": {"function": "b"}, "Cursor": {"function": "c"},
                 "LCC": {"function": "d"}, "Operator": {"function": "e"}, "SPIDER": {"function": "f"},
                 "Other": {"function": "g"}}
        sj = os.path.join(tmp, "split.json")
        with open(sj, "w", encoding="utf-8") as f:
            json.dump(split, f)
        so = os.path.join(tmp, "split.clf")
        code, diag = gen(args, sj, "-o", so, "--commit", "0123456")
        try:
            stext = open(so, encoding="ascii").read() if code == 0 else ""
            got = {c: read_entries(stext, c) for c in ("AGENTS", "SPECIFIC", "AMBIGUOUS")} if code == 0 else None
        except (OSError, ValueError) as e:
            got, diag = None, diag + "\n%s" % e
        want = {"AGENTS": [(n, e["function"]) for n, e in split.items()],
                "SPECIFIC": [("GPTBot", "a"), ("Other", "g")],
                "AMBIGUOUS": [("code", "b"), ("Cursor", "c"), ("LCC", "d"), ("Operator", "e"), ("SPIDER", "f")]}
        tap.ok(got == want, "generator: curated ambiguous names match case-insensitively, keep upstream "
               "spelling and order; SPECIFIC = the rest", diag + "\ngot: %r" % (got,))

        # a curated name that robots.json no longer has is an error, and nothing is written
        del split["LCC"]
        with open(sj, "w", encoding="utf-8") as f:
            json.dump(split, f)
        mo = os.path.join(tmp, "missing.clf")
        code, diag = gen(args, sj, "-o", mo, "--commit", "0123456")
        tap.ok(code == 2 and "'LCC'" in diag and "no longer in robots.json" in diag and "AMBIGUOUS_NAMES" in diag
               and not os.path.exists(mo),
               "generator: a curated ambiguous name missing from robots.json fails (exit 2, names it, writes nothing)",
               diag)

        # end to end: every name through classifyc + classify-run
        rules, diag = rc.compile_main(args, tmp)
        if not tap.ok(rules is not None, "classifyc compiles examples/main.clf (imports ai_robots)", diag):
            tap.finish()
        variants = []
        for n in upstream:
            if n.lower() not in amb_keys:
                # SPECIFIC: the name as a whole word, ASCII case-insensitive
                variants += [(n, "specific", "alone", True),
                             ("Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % n, "specific", "in UA", True),
                             (n.upper(), "specific", "upper-case", True),
                             (n.lower(), "specific", "lower-case", True),
                             ("x%s_" % n, "specific", "glued to word chars", False)]
            else:
                # AMBIGUOUS: only as NAME/<digit> with no word character on the left
                variants += [("Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % n, "ambiguous",
                              "as NAME/<digit> in UA", True),
                             ("%s/2.5" % n.upper(), "ambiguous", "upper-case NAME/<digit>", True),
                             ("x-%s/0" % n.lower(), "ambiguous", "lower-case NAME/<digit> after '-'", True),
                             ("x %s y" % n, "ambiguous", "bare word inside a UA", False),
                             ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.2; %s Internal User - 010)" % n,
                              "ambiguous", "bare word in a browser UA", False),
                             ("Mozilla/5.0 (compatible; %s/beta)" % n, "ambiguous", "NAME/ without a digit", False),
                             ("x%s/1.0" % n, "ambiguous", "word character on the left", False),
                             ("%s_/1.0" % n, "ambiguous", "word character on the right", False)]
        results, diag = rc.classify_uas(args, rules, [v[0] for v in variants], tmp)
        if not tap.ok(results is not None, "classify-run --ua-file --json on %d name variants" % len(variants), diag):
            tap.finish()
    by_kind = {}
    for (ua, which, kind, hit), got in zip(variants, results):
        want = ("reject", rc.AI) if hit else ("accept", None)
        by_kind.setdefault((which, kind, want), []).append((ua, got))
    for (which, kind, want), items in by_kind.items():
        bad = [(ua, got) for ua, got in items if got != want]
        tap.ok(not bad, "%d %s agent names %s: %s" % (len(items), which, kind, rc.fmt(want)),
               "\n".join("%s  %r" % (rc.fmt(g), ua) for ua, g in bad))
    tap.finish()


if __name__ == "__main__":
    main()
