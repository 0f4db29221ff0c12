#!/usr/bin/env python3
"""realdata: stdlib/ai_robots.clf vs. ai.robots.txt robots.json (TAP).

    test_ai_robots.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Checks:
  * `tools/gen_ai_robots.py --check` passes (the committed file is what the
    generator writes from the corpora's robots.json now);
  * independent read-back: the string literals of `pub const AGENTS`, with the
    .clf escapes decoded, are exactly the robots.json keys in upstream order;
    header carries commit, MIT and the regeneration command; file is ASCII/LF;
  * the generator's escaping round-trips (quote, backslash, control and
    non-ASCII bytes) and is deterministic (upstream's golden test_files input);
  * end to end through classifyc/classify-run: every one of the 166 names, as
    a User-Agent alone, inside a UA, upper-cased and lower-cased, is rejected
    as ai-robots-txt; glued to word characters on both sides it is not.
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
EXPECTED_COMMIT = "738c80df2169027ce0e07c9976fd3f2f57dd8f7b"

_ESC = {'"': b'"', "\\": b"\\", "n": b"\n", "t": b"\t", "r": b"\r"}


def decode_clf_string(body):
    """Decode the inside of a .clf "..." literal to bytes."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("ascii")
            i += 1
        elif body[i + 1] in _ESC:
            out += _ESC[body[i + 1]]
            i += 2
        elif body[i + 1] == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", body[i + 2:i + 4]):
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        else:
            raise ValueError("bad escape in %r" % body)
    return bytes(out)


def read_back(path, const="AGENTS"):
    """Names of `pub const CONST = [ ... ]i` in a generated file, decoded to str."""
    text = open(path, encoding="ascii").read()
    m = re.search(r"^pub const %s = \[\n(.*?)^\]i\n" % const, text, re.M | re.S)
    if not m:
        raise ValueError("no `pub const %s = [...]i` block" % const)
    names = []
    for line in m.group(1).splitlines():
        lm = re.match(r'^    "((?:[^"\\]|\\.)*)",?(?:\s+//.*)?$', line)
        if not lm:
            raise ValueError("unexpected line in the set: %r" % line)
        names.append(decode_clf_string(lm.group(1)).decode("utf-8"))
    return names, text


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
    raw = open(clf, "rb").read()
    tap.ok(all(b == 0x0A or 0x20 <= b <= 0x7E for b in raw) and raw.endswith(b"]i\n"),
           "ai_robots.clf is printable ASCII with LF line endings")
    for needle in (EXPECTED_COMMIT, "github.com/ai-robots-txt/ai.robots.txt", "MIT License", "do not edit",
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
        code, diag = gen(args, tj, "-o", out, "--commit", "0123456")
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
                code, diag = gen(args, golden, "-o", o, "--commit", "0123456")
                outs.append(open(o, "rb").read() if code == 0 else None)
            with open(golden, encoding="utf-8") as f:
                gnames = list(json.load(f))
            ok = outs[0] is not None and outs[0] == outs[1] and read_back(os.path.join(tmp, "golden1.clf"))[0] == gnames
            tap.ok(ok, "generator on upstream code/test_files/robots.json (%d names): complete and deterministic"
                   % len(gnames), diag)
        else:
            tap.skip("generator on upstream code/test_files/robots.json", "file not in corpora")

        # end to end: every name through classifyc + classify-run
        rules, diag = rc.compile_main(args, tmp)
        if not tap.ok(rules is not None, "classifyc compiles examples/main.clf (imports ai_robots)", diag):
            tap.finish()
        variants = []
        for n in upstream:
            variants += [(n, "alone", True),
                         ("Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % n, "in UA", True),
                         (n.upper(), "upper-case", True),
                         (n.lower(), "lower-case", True),
                         ("x%s_" % n, "glued to word chars", False)]
        results, diag = rc.classify_uas(args, rules, [v[0] for v in variants], tmp)
        if not tap.ok(results is not None, "classify-run --ua-file --json on %d name variants" % len(variants), diag):
            tap.finish()
    by_kind = {}
    for (ua, kind, hit), got in zip(variants, results):
        want = ("reject", rc.AI) if hit else ("accept", None)
        by_kind.setdefault((kind, want), []).append((ua, got))
    for (kind, want), items in by_kind.items():
        bad = [(ua, got) for ua, got in items if got != want]
        tap.ok(not bad, "%d agent names %s: %s" % (len(items), kind, rc.fmt(want)),
               "\n".join("%s  %r" % (rc.fmt(g), ua) for ua, g in bad))
    tap.finish()


if __name__ == "__main__":
    main()
