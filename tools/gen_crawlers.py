#!/usr/bin/env python3
"""Generate stdlib/crawlers.clf from crawler-user-agents.json.

Usage (from the repository root):

    python3 tools/gen_crawlers.py [CRAWLERS_JSON] [-o OUT] [--commit SHA]
    python3 tools/gen_crawlers.py --check [CRAWLERS_JSON]

CRAWLERS_JSON defaults to ../shared/corpora/crawler-user-agents/crawler-user-agents.json
relative to the repository root.  The upstream commit written into the header
is read from LICENSE-NOTE.md next to it ("Commit: <40 hex digits>") unless
--commit is given.

--check regenerates in memory and compares with the committed file: exit 0 if
identical, exit 1 (with a unified diff on stderr) if not.  Exit 2 on usage or
input errors.  Python 3 standard library only.

What is generated (see the header the script writes):
  * per tag (the entry's FIRST tag; entries without tags: "untagged"), a
    `pub fn is_<tag>(req: Request) -> bool` that tests the User-Agent with
    `ua.matches(/PATTERN/)` for each pattern of the tag, in upstream order;
  * per tag a `pub filter check_<tag>(req)` that rejects "crawler:<tag>";
  * `pub fn is_crawler(req)` (any tag) and `pub filter check(req)` (all the
    check_<tag> filters, in TAG_ORDER);
  * `test` blocks (one real instance per tag, and a browser that passes).

Patterns are converted, not rewritten: upstream writes them in Go/RE2 syntax
and matches them case-SENSITIVELY, unanchored (its validation checks every
instance case-sensitively since upstream PR #65; the Go and JS wrappers match
without flags).  The conversion to a Hyperscan regex literal only
  * escapes every unescaped `/` (the .clf regex delimiter) as `\\/`,
  * writes `$` outside a character class as `\\z` (RE2's `$` without the m
    flag is the end of the text; Hyperscan's `$` would also match before a
    final newline),
and leaves the rest byte for byte (flags: none, so case-sensitive).  A pattern
that uses a construct Hyperscan lacks (look-around, backreferences, \\Q..\\E,
\\C, Unicode classes, possessive or lazy-only features that change matching)
or that Python cannot parse is skipped, with a comment naming the reason, and
counted in the summary.

Output is deterministic: it depends only on the bytes of the JSON, the commit
and this script.
"""

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from clfgen import GenError, check_or_write, one_line_comment, read_commit, read_commit_date  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT_REL = "../shared/corpora/crawler-user-agents/crawler-user-agents.json"
DEFAULT_OUTPUT_REL = "stdlib/crawlers.clf"
REGEN_COMMAND = "python3 tools/gen_crawlers.py " + DEFAULT_INPUT_REL
# The date of the upstream commit (its LICENSE-NOTE.md says), for classifyc
# --max-data-age, which reads this line of the leading comment.
DATE_LINE = "// data-date: %s (the upstream commit\'s)\n"
UPSTREAM_REPO = "github.com/monperrus/crawler-user-agents"
REASON_PREFIX = "crawler"

# The order in which `check` tries the tags (first match decides the reason).
# Tags that say most about intent first: AI crawlers and agents, automated
# browsers, vulnerability/security scanners, HTTP libraries, then the classic
# crawler kinds, search engines last (an instance that both an AI pattern and
# a search-engine pattern match is reported as ai-crawler).  Unknown tags
# follow, sorted; "untagged" last.
TAG_ORDER = ("ai-crawler", "browser-automation", "scanner", "http-library", "seo", "advertising",
             "academic", "archiver", "feed-reader", "social-preview", "monitoring", "search-engine")

# Constructs Hyperscan does not support (or that would change the meaning):
# (regex over the pattern text, reason for the skip comment).
UNSUPPORTED = (
    (r"\(\?[=!]|\(\?<[=!]", "look-around"),
    (r"\\[1-9]", "backreference"),
    (r"\\[QE]", "\\Q...\\E quoting"),
    (r"\\C", "\\C (any byte)"),
    (r"\\[pP]", "Unicode class"),
    (r"[*+?}][+]", "possessive quantifier"),
    (r"\(\?[a-zA-Z]*[^a-zA-Z:)\-ismx<P]", "unknown group syntax"),
)


def convert(pattern):
    """(regex literal text or None, skip reason or None)."""
    if pattern == "":
        return None, "empty pattern"
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in pattern):
        return None, "bytes outside printable ASCII"
    for rx, why in UNSUPPORTED:
        if re.search(rx, pattern):
            return None, why
    try:
        re.compile(pattern)
    except re.error as e:
        return None, "does not parse (%s)" % e
    out = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            if c == "/":
                c = "\\/"
            out.append(c)
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                if pattern[i:i + 1] == "]":
                    out.append("]")
                    i += 1
                continue
            out.append("[")
            if pattern[i + 1:i + 2] == "]":
                out.append("]")
                i += 1
        elif c == "/":
            out.append("\\/")
        elif c == "$":
            out.append("\\z")
        else:
            out.append(c)
        i += 1
    if in_class:
        return None, "unterminated character class"
    return "/" + "".join(out) + "/", None


def load(path):
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise GenError("cannot read %s: %s" % (path, e.strerror))
    try:
        entries = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise GenError("%s: not valid UTF-8 JSON: %s" % (path, e))
    if not isinstance(entries, list) or not entries:
        raise GenError("%s: top level must be a non-empty JSON array" % path)
    for n, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("pattern"), str):
            raise GenError("%s: entry %d has no string `pattern`" % (path, n))
    return entries, hashlib.sha256(raw).hexdigest()


def first_tag(entry):
    tags = entry.get("tags") or []
    return tags[0] if tags and isinstance(tags[0], str) else "untagged"


def tag_ident(tag):
    return re.sub(r"[^a-z0-9]+", "_", tag.lower()).strip("_") or "untagged"


def ordered_tags(entries):
    present = {first_tag(e) for e in entries}
    known = [t for t in TAG_ORDER if t in present]
    rest = sorted(t for t in present if t not in TAG_ORDER and t != "untagged")
    return known + rest + (["untagged"] if "untagged" in present else [])


def model(entries):
    """ua -> reason the generated `check` gives (None: pass), by Python re."""
    tags = ordered_tags(entries)
    groups = [(t, [re.compile(e["pattern"]) for e in entries
                   if first_tag(e) == t and convert(e["pattern"])[0]]) for t in tags]

    def reason(ua):
        for t, rxs in groups:
            if any(r.search(ua) for r in rxs):
                return "%s:%s" % (REASON_PREFIX, t)
        return None
    return reason


def clf_string_literal(text):
    out = ['"']
    for b in text.encode("utf-8"):
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= b <= 0x7E:
            out.append(c)
        else:
            out.append("\\x%02X" % b)
    out.append('"')
    return "".join(out)


HEADER = """\
// crawlers.clf -- crawler, bot and HTTP-library User-Agents from crawler-user-agents
//
// generated -- do not edit. Regenerate from the repository root with:
//     {regen}
// and check freshness with:
//     python3 tools/gen_crawlers.py --check
//
// Source: https://{repo}
//   commit {commit}, file crawler-user-agents.json (sha256 {sha})
{dateline}//   Copyright (c) 2017 Martin Monperrus, MIT License (see LICENSE in the
//   upstream repository). The patterns below are upstream's data; see
//   "Conversion" for the only changes.
//
// Contents: {nconv} of the {ntotal} upstream patterns ({nskip} skipped, each with a
// comment saying why), grouped by the entry's FIRST tag:
{tagtable}
//   pub fn is_<tag>(req) -> bool      the User-Agent matches a pattern of <tag>
//   pub filter check_<tag>(req)       rejects "crawler:<tag>" on a match, passes otherwise
//   pub fn is_crawler(req) -> bool    any pattern
//   pub filter check(req)             every check_<tag>, in the order of the table
// The functions take the Request, not the User-Agent string: a test on a
// header read inside the function joins the User-Agent's Hyperscan database
// (all {nconv} patterns, scanned once per request), while a test on a `str`
// parameter would be a separate scan per pattern.
//
// Matching: each pattern is searched (unanchored) in the User-Agent,
// CASE-SENSITIVELY, as upstream does (its validation checks instances
// case-sensitively since upstream PR #65: the `Pinterest` app vs the
// `pinterest` bot). Patterns that want both cases say so (`[wW]get`).
// Conversion from upstream's Go/RE2 syntax: every unescaped `/` is written
// `\\/`, `$` outside a class is written `\\z` (RE2's `$` is the end of the
// text); nothing else changes.
//
// False-positive risks (measured on uap-core's real-device User-Agents, see
// the shared notes): `WhatsApp` (the app itself), `Butterfly` (HTC phones),
// `Sonic` (ViewSonic), `008\\/` (Opera Mini builds), `Code\\/1\\.` (VS Code /
// Electron), `exabot` (inside `Alexabot`); the http-library tag includes curl,
// Wget, okhttp and axios, which people, uptime checks and mobile apps use;
// scanner includes services site owners run on purpose (Let's Encrypt, SSL
// Labs, Sucuri, VaultPress). Every declared crawler is here, good or bad:
// choose the tags you reject (stdlib/default.clf rejects only some).

"""


# Upstream patterns left out on purpose: they match real people's
# devices (docs/accuracy.md measures it on uap-core's browser and device
# User-Agents). Each is listed in the generated file with the reason.
EXCLUDED = {
    "AP3A\\.240617\\.008":
        "an Android 15 build id (OPPO, OnePlus and other phones), not a crawler: "
        "it rejects real devices (uap-core's HeyTap Browser UA)",
    "Butterfly":
        "a plain word: it rejects HTC Butterfly phones and their apps",
    "Sonic":
        "a plain word: it rejects ViewSonic tablets and phones like the Lucky Ultra Sonic",
    "008\\/":
        "three digits and a slash: it rejects Opera Mini builds (4.4.39008/) and "
        "devices such as sprd-L008/",
    "WordPress\\/":
        "WordPress sites fetching pingbacks and embeds, and device sites built on it",
}


def render(entries, commit, sha, date=None):
    tags = ordered_tags(entries)
    conv = {}
    skipped = []
    for n, e in enumerate(entries):
        if e["pattern"] in EXCLUDED:
            skipped.append((n, "excluded: " + EXCLUDED[e["pattern"]]))
            continue
        lit, why = convert(e["pattern"])
        if lit:
            conv[n] = lit
        else:
            skipped.append((n, why))
    counts = {t: sum(1 for n in conv if first_tag(entries[n]) == t) for t in tags}
    tagtable = "\n".join("//   %-20s %4d patterns  reason \"%s:%s\"" % (t, counts[t], REASON_PREFIX, t)
                         for t in tags)
    out = [HEADER.format(regen=REGEN_COMMAND, repo=UPSTREAM_REPO, commit=commit, sha=sha,
                           dateline=DATE_LINE % date if date else "",
                         nconv=len(conv), ntotal=len(entries), nskip=len(skipped), tagtable=tagtable)]
    for t in tags:
        ident = tag_ident(t)
        members = [n for n in range(len(entries)) if first_tag(entries[n]) == t]
        out.append("// ---- %s: %d patterns\n" % (t, counts[t]))
        out.append("pub fn is_%s(req: Request) -> bool {\n" % ident)
        out.append('    let ua = req.header("user-agent")\n')
        lines = []
        for n in members:
            e = entries[n]
            desc = one_line_comment(e.get("description", ""))[:100]
            extra = (" [tags: %s]" % ", ".join(e["tags"])) if len(e.get("tags") or []) > 1 else ""
            if n in conv:
                lines.append(("ua.matches(%s)" % conv[n], desc + extra))
            else:
                why = dict(skipped)[n]
                lines.append((None, "SKIPPED %s: %s" % (one_line_comment(e["pattern"]), why)))
        first = True
        for test, comment in lines:
            if test is None:
                out.append("    // %s\n" % comment)
                continue
            text = ("    return " if first else "        || ") + test
            out.append((text.ljust(60) + " // " + comment).rstrip() + "\n" if comment else text + "\n")
            first = False
        if first:
            out.append("    return false\n")
        out.append("}\n\n")
        out.append("pub filter check_%s(req: Request) {\n" % ident)
        out.append('    if is_%s(req) { reject "%s:%s" }\n' % (ident, REASON_PREFIX, t))
        out.append("}\n\n")
    out.append("// Any pattern of any tag.\n")
    out.append("pub fn is_crawler(req: Request) -> bool {\n")
    out.append("    return " + "\n        || ".join("is_%s(req)" % tag_ident(t) for t in tags) + "\n}\n\n")
    out.append("// Rejects \"%s:<tag>\" for the first tag (in the order above) one of whose\n"
               "// patterns matches the User-Agent; passes otherwise.\n" % REASON_PREFIX)
    out.append("pub filter check(req: Request) {\n")
    for t in tags:
        out.append("    check_%s(req)\n" % tag_ident(t))
    out.append("}\n")

    # tests: per tag, the first instance that the model reports under that tag
    reason = model(entries)
    out.append("\n// ---- tests: classifyc --test stdlib/crawlers.clf (generated from upstream's\n"
               "// instances; the expected reasons come from the generator's model of `check`) ----\n")
    for t in tags:
        want = "%s:%s" % (REASON_PREFIX, t)
        inst = next((i for n in conv if first_tag(entries[n]) == t
                     for i in entries[n].get("instances") or []
                     if isinstance(i, str) and i and "\n" not in i and reason(i) == want), None)
        if inst is None:
            continue
        out.append("\ntest %s {\n    header \"User-Agent\" %s\n    expect check reject \"%s\"\n"
                   "    expect check_%s reject \"%s\"\n}\n"
                   % (clf_string_literal("%s: an upstream instance" % t), clf_string_literal(inst),
                      want, tag_ident(t), want))
    for title, ua in (("a current Chrome is no crawler",
                       "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/131.0.0.0 Safari/537.36"),
                      ("a current Firefox is no crawler",
                       "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")):
        if reason(ua) is None:
            out.append("\ntest %s {\n    header \"User-Agent\" %s\n    expect check pass\n}\n"
                       % (clf_string_literal(title), clf_string_literal(ua)))
    if reason("GOOGLEBOT/2.1") is None and reason("Googlebot/2.1") is not None:
        out.append('\ntest "matching is case-sensitive, as upstream" {\n'
                   '    header "User-Agent" "GOOGLEBOT/2.1"\n    expect check pass\n}\n')
    return "".join(out), len(conv), skipped


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate stdlib/crawlers.clf from crawler-user-agents.json")
    ap.add_argument("crawlers_json", nargs="?", default=None,
                    help="path of crawler-user-agents.json (default: <repo>/%s)" % DEFAULT_INPUT_REL)
    ap.add_argument("-o", "--output", default=None, help="output file (default: <repo>/%s)" % DEFAULT_OUTPUT_REL)
    ap.add_argument("--commit", default=None,
                    help="upstream commit for the header (default: from LICENSE-NOTE.md beside the JSON)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the output file differs from what would be generated")
    args = ap.parse_args(argv)
    src = Path(args.crawlers_json) if args.crawlers_json else REPO_ROOT / DEFAULT_INPUT_REL
    output = Path(args.output) if args.output else REPO_ROOT / DEFAULT_OUTPUT_REL
    try:
        entries, sha = load(src)
        commit = args.commit or read_commit(src)
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
            raise GenError("--commit must be a hex commit id")
        date = None if args.commit else read_commit_date(src)
        text, nconv, skipped = render(entries, commit, sha, date)
    except GenError as e:
        print("gen_crawlers: error: %s" % e, file=sys.stderr)
        return 2
    summary = "%d patterns: %d converted, %d skipped" % (len(entries), nconv, len(skipped))
    for n, why in skipped:
        summary += "\n  skipped #%d %r: %s" % (n, entries[n]["pattern"], why)
    return check_or_write("gen_crawlers", output, text, summary, args.check, REGEN_COMMAND)

if __name__ == "__main__":
    sys.exit(main())
