#!/usr/bin/env python3
"""Generate stdlib/ai_robots.clf from ai.robots.txt's robots.json.

Usage (from the repository root):

    python3 tools/gen_ai_robots.py [ROBOTS_JSON] [-o OUT] [--commit SHA]
    python3 tools/gen_ai_robots.py --check [ROBOTS_JSON]

ROBOTS_JSON defaults to ../shared/corpora/ai-robots-txt/robots.json relative
to the repository root.  The upstream commit written into the header is read
from LICENSE-NOTE.md next to robots.json ("Commit: <40 hex digits>") unless
--commit is given.

--check regenerates in memory and compares with the committed file: exit 0 if
identical, exit 1 (with a unified diff on stderr) if not.  Exit 2 on usage or
input errors (including a curated AMBIGUOUS_NAMES entry that robots.json no
longer has).  Python 3 standard library only.

The output has three sets: AGENTS (every robots.json name), AMBIGUOUS (the
names of AMBIGUOUS_NAMES below, as upstream spells them) and SPECIFIC (AGENTS
minus AMBIGUOUS, same order); then one set of SPECIFIC names per category (the
`function` field, slugified: see slugify()), a regex per category of its
AMBIGUOUS names in product-token form (NAME/<digit>), and
`pub filter check(req)`, which rejects "ai-robots-txt:<category>" and exempts
/robots.txt, followed by generated `test` blocks.  --ambiguous NAME,NAME,... replaces the curated
list (an empty string: none); it exists for inputs other than upstream's
robots.json (the tests' synthetic and golden files).

Output is deterministic: it depends only on the bytes of robots.json, the
upstream commit and AMBIGUOUS_NAMES (no dates, no absolute paths).
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
DEFAULT_INPUT_REL = "../shared/corpora/ai-robots-txt/robots.json"
DEFAULT_OUTPUT_REL = "stdlib/ai_robots.clf"
REGEN_COMMAND = "python3 tools/gen_ai_robots.py " + DEFAULT_INPUT_REL
# The date of the upstream commit (its LICENSE-NOTE.md says), for classifyc
# --max-data-age, which reads this line of the leading comment.
DATE_LINE = "// data-date: %s (the upstream commit\'s)\n"
UPSTREAM_REPO = "github.com/ai-robots-txt/ai.robots.txt"
CONST_NAME = "AGENTS"            # every robots.json name
SPECIFIC_NAME = "SPECIFIC"       # AGENTS minus the ambiguous names
AMBIGUOUS_NAME = "AMBIGUOUS"     # the ambiguous names

# robots.json names that are also ordinary words: they occur as whole words in
# User-Agents of real people's clients or of classic (non-AI) crawlers, so
# `contains_word` on the bare name rejects the wrong clients (evidence from the
# shared corpora, measured by tests/realdata/).  They go to AMBIGUOUS instead of
# SPECIFIC; rules must add context (examples/main.clf: the product-token form
# NAME/<digit>).  Compared ASCII case-insensitively with the robots.json keys;
# generation fails if one of them is no longer in robots.json (review the list
# then).  Keep each reason on one line: it is copied into the generated header.
AMBIGUOUS_NAMES = (
    ("Code", "Plus500 Android app `Version Code: 25454`; 7 UAs with a code.google.com URL"),
    ("Cursor", "the e-mail address `cursor@easymail.hu` in the Kurzor bot's UA"),
    ("LCC", "two Internet Explorer 6 UAs with `LCC Internal User - 010` / `- 014`"),
    ("Operator", "an Internet Explorer 6 UA with `CaseDOSA/Operator`"),
    ("Spider", "120 uap-core test UAs of classic crawlers (Baiduspider's `.../spider.html`, Sogou, Gigabot)"),
)
# Column at which the per-line `// function` comments start (if the literal is
# shorter); purely cosmetic, but fixed so that output stays deterministic.
COMMENT_COLUMN = 40


def clf_string_literal(text):
    """Return `text` as a .clf string literal.

    The .clf lexer knows the escapes \\" \\\\ \\n \\t \\r and \\xNN.  Every byte
    of the UTF-8 encoding outside printable ASCII (0x20..0x7e) is written as
    \\xNN, so the output file is pure ASCII and the literal denotes exactly
    the bytes of the upstream name.
    """
    out = ['"']
    for b in text.encode("utf-8"):
        c = chr(b)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif 0x20 <= b <= 0x7E:
            out.append(c)
        else:
            out.append("\\x%02X" % b)
    out.append('"')
    return "".join(out)


def load_agents(robots_json):
    try:
        raw = robots_json.read_bytes()
    except OSError as e:
        raise GenError("cannot read %s: %s" % (robots_json, e.strerror))
    try:
        # object_pairs_hook keeps upstream order and lets us detect duplicate keys
        pairs = json.loads(raw.decode("utf-8"), object_pairs_hook=lambda p: p)
    except (UnicodeDecodeError, ValueError) as e:
        raise GenError("%s: not valid UTF-8 JSON: %s" % (robots_json, e))
    if not isinstance(pairs, list):
        raise GenError("%s: top level must be a JSON object" % robots_json)
    agents = []
    seen = set()
    for name, entry in pairs:
        if name in seen:
            raise GenError("%s: duplicate agent name %r" % (robots_json, name))
        seen.add(name)
        if name == "":
            raise GenError("%s: empty agent name (the .clf set literal forbids empty elements)" % robots_json)
        fields = dict(entry) if isinstance(entry, list) else None
        if fields is None:
            raise GenError("%s: entry %r is not an object" % (robots_json, name))
        function = fields.get("function", "")
        if not isinstance(function, str):
            function = json.dumps(function)
        agents.append((name, function))
    if not agents:
        raise GenError("%s: no agents" % robots_json)
    return agents, hashlib.sha256(raw).hexdigest()


HEADER = """\
// ai_robots.clf -- AI crawler / assistant / agent names from ai.robots.txt
//
// generated -- do not edit. Regenerate from the repository root with:
//     {regen}
// and check freshness with:
//     python3 tools/gen_ai_robots.py --check
//
// Source: https://{repo}
//   commit {commit}, file robots.json (sha256 {sha})
{dateline}//   Copyright (c) 2024 ai.robots.txt, MIT License (see LICENSE in the
//   upstream repository). The names below are upstream's data, unchanged.
//
// Contents: three sets of robots.txt product tokens, each `[...]i`, one name
// per line; the trailing comment is the entry's `function` field.
//   pub const {const:<9} = all {count} names, in upstream order (the complete list)
//   pub const {spec:<9} = the {nspec} names of {const} that are not {amb}, same order
//   pub const {amb:<9} = {namb} names that are also ordinary words (as upstream spells them)
// Every name is in exactly one of {spec} and {amb}.
// Then one set per category (CAT_*: the {spec} names whose slugified
// `function` field is that category, {ncat} categories), a CAT_*_TOKEN regex
// for the categories of {amb} names, and `pub filter check(req)`, which
// rejects "ai-robots-txt:<category>" (see its comment below), with tests;
// `pub fn is_agent(req)` is the same test as a boolean ({amb}_TOKEN: the
// {amb} names in product-token form), for rules that give their own reason.
//
// Why {amb} exists: a few names are ordinary words that also occur as whole
// words in User-Agents of real people's clients and of classic (non-AI)
// crawlers, so contains_word() on the bare name rejects browsers and apps, or
// rejects a search-engine crawler as an "AI agent" (wrong identity). Match
// {spec} as whole words; match {amb} only with more context, e.g. the
// product-token form NAME/<digit> as examples/main.clf does (upstream marks
// `Code` with has_name_and_version: its UA carries `Code/<version>`). The
// list is curated (AMBIGUOUS_NAMES in tools/gen_ai_robots.py); the evidence,
// from the uap-core and crawler-user-agents corpora (see tests/realdata/):
{ambnotes}
// Other short names (Devin, Trae, YaK, OpenAI) stay in {spec}: in those
// corpora they occur only in their own agents' UAs.
//
// Matching semantics (intended use: ua.contains_word(ai_robots.{spec})):
//   * ASCII case-insensitive (the `i` suffix): RFC 9309 section 2.2.1 says
//     crawlers match the robots.txt product token case-insensitively, and the
//     upstream maintainers treat names that way (.htaccess output uses [NC]).
//   * whole words: a name matches only if the byte before and the byte after
//     it are not [A-Za-z0-9_] (or are the start/end of the string). Upstream's
//     FAQ requires whole-word matching; substring matching flagged Internet
//     Explorer's `SLCC1` token as the agent `LCC` (upstream PR #260 introduced
//     \\b...\\b, PR #267 pinned that case). Do not use .contains() with these sets.
//   * names may contain spaces, dots and slashes ("Brightbot 1.0",
//     "panscient.com", "iaskspider/2.0"); they are matched literally.
//   * {dupnote}
//
// Other risk: upstream lists Applebot (Apple's search crawler) and
// facebookexternalhit (Facebook link previews); both are in {spec}.

"""


def resolve_ambiguous(agents, curated, source):
    """Split the names: returns (specific, ambiguous, notes).

    `curated` is a sequence of (name, reason); each is compared ASCII
    case-insensitively with the robots.json keys and must match at least one
    (all spellings that match go to AMBIGUOUS).  `specific` and `ambiguous`
    keep upstream order and spelling, with their `function` comments."""
    wanted = {}
    for name, reason in curated:
        key = name.lower()
        if key in wanted:
            raise GenError("ambiguous name %r is listed twice" % name)
        wanted[key] = (name, reason)
    present = {name.lower() for name, _ in agents}
    missing = [wanted[k][0] for k in wanted if k not in present]
    if missing:
        raise GenError("%s: the curated ambiguous name%s %s %s no longer in robots.json; "
                       "review AMBIGUOUS_NAMES in tools/gen_ai_robots.py (or pass --ambiguous)"
                       % (source, "s" if len(missing) > 1 else "",
                          ", ".join(repr(m) for m in missing), "are" if len(missing) > 1 else "is"))
    specific = [a for a in agents if a[0].lower() not in wanted]
    ambiguous = [a for a in agents if a[0].lower() in wanted]
    notes = []
    for name, function in ambiguous:
        reason = wanted[name.lower()][1]
        notes.append("//   %-9s %s" % (one_line_comment(name), one_line_comment(reason)))
    return specific, ambiguous, notes


def render_set(const, items, intro):
    lines = []
    for line in intro:
        lines.append("// " + line + "\n")
    lines.append("pub const %s = [\n" % const)
    seen = set()
    for i, (name, function) in enumerate(items):
        item = "    " + clf_string_literal(name) + ("," if i + 1 < len(items) else "")
        comment = one_line_comment(function)
        if name.lower() in seen:  # upstream's second spelling: classifyc's lint would warn
            comment = (comment + "; " if comment else "") + "second spelling, clf:allow(dead-element)"
        seen.add(name.lower())
        if comment:
            item = item.ljust(COMMENT_COLUMN - 1) + " // " + comment
        lines.append(item.rstrip() + "\n")
    lines.append("]i\n")
    return "".join(lines)


# ------------------------------------------------------------ categories
#
# The reason of `check` names the agent's category: its `function` field,
# slugified.  Upstream's newer entries use short labels ("AI Assistants",
# "AI Data Scrapers"); older ones carry a sentence ("Scrapes data to train
# Anthropic's AI products."), which becomes a longer slug, cut at a word
# boundary to at most SLUG_MAX characters.  Functions that give the same slug
# share one category.
SLUG_MAX = 40
REASON_PREFIX = "ai-robots-txt"
WORD_CHARS = "A-Za-z0-9_"


def slugify(function):
    """'AI Data Scrapers' -> 'ai-data-scrapers'; markdown links keep their text;
    at most SLUG_MAX characters, cut at a '-'; 'uncategorized' if nothing is left."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", function)
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for w in words:
        cand = w if not slug else slug + "-" + w
        if len(cand) > SLUG_MAX:
            break
        slug = cand
    if not slug and words:
        slug = words[0][:SLUG_MAX]
    return slug or "uncategorized"


def const_for(slug):
    return "CAT_" + slug.upper().replace("-", "_")


def word_re(name):
    """contains_word on a `[...]i` set element: no word character around, ASCII case-insensitive."""
    return re.compile(r"(?<![%s])%s(?![%s])" % (WORD_CHARS, re.escape(name), WORD_CHARS), re.I | re.A)


def token_re(name):
    """The product-token form of an ambiguous name: /\bNAME\/[0-9]/i."""
    return re.compile(r"(?<![%s])%s/[0-9]" % (WORD_CHARS, re.escape(name)), re.I | re.A)


def token_regex_literal(names):
    """/\b(NAME|...)\/[0-9]/i as .clf regex text (names escaped for PCRE and the lexer)."""
    alts = []
    for n in names:
        alts.append("".join(c if c.isalnum() or c in "_-" else "\\x%02X" % ord(c) if ord(c) < 0x80
                            else "".join("\\x%02X" % b for b in c.encode("utf-8")) for c in n))
    return "/\\b(%s)\\/[0-9]/i" % "|".join(alts)


def categories(specific, ambiguous):
    """[(slug, [specific (name, function)], [ambiguous names])] in check order.

    Order: a category must come before another when one of its names contains
    a name of the other as a whole word (or, for an ambiguous name, in token
    form): `Applebot-Extended` (one category) contains `Applebot` (another),
    and its UA must be reported under its own category.  Within that
    constraint (a topological sort), categories keep the order in which they
    first appear in robots.json.  If the constraints form a cycle, the rest
    keep first-appearance order (returned as `cycle`, noted in the header)."""
    cats = {}
    for name, function in specific:
        cats.setdefault(slugify(function), ([], []))[0].append((name, function))
    for name, function in ambiguous:
        cats.setdefault(slugify(function), ([], []))[1].append(name)
    order = list(cats)          # first appearance (specific first, then ambiguous)
    first = {}
    for i, (name, function) in enumerate(specific + ambiguous):
        first.setdefault(slugify(function), i)
    order.sort(key=lambda c: first[c])
    members = {c: [(n, word_re(n)) for n, _ in cats[c][0]] + [(n, token_re(n)) for n in cats[c][1]]
               for c in order}
    allnames = {c: [n for n, _ in cats[c][0]] + cats[c][1] for c in order}
    before = {c: set() for c in order}      # c -> categories that must come after c
    indeg = {c: 0 for c in order}
    for a in order:
        for b in order:
            if a == b:
                continue
            if any(r.search(n) for n in allnames[a] for _, r in members[b]):
                if b not in before[a]:
                    before[a].add(b)
                    indeg[b] += 1
    out, cycle = [], []
    ready = [c for c in order if indeg[c] == 0]
    while ready:
        c = min(ready, key=order.index)
        ready.remove(c)
        out.append(c)
        for b in sorted(before[c], key=order.index):
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    if len(out) < len(order):
        cycle = [c for c in order if c not in out]
        out += cycle
    return [(c, cats[c][0], cats[c][1]) for c in out], cycle


def model_reason(cats, ua, path="/"):
    """What the generated `check` decides for a User-Agent (None: pass)."""
    if path == "/robots.txt":
        return None
    for slug, spec, amb in cats:
        if any(word_re(n).search(ua) for n, _ in spec) or any(token_re(n).search(ua) for n in amb):
            return "%s:%s" % (REASON_PREFIX, slug)
    return None


CHECK_DOC = """\
// ---------------------------------------------------------------- check
//
// `check` rejects "{prefix}:<category>" when the User-Agent names an agent of
// <category> (the slugified `function` field: the CAT_* sets above), and
// passes (no verdict) otherwise:
//   * a {spec} name as a whole word, ASCII case-insensitive (contains_word);
//   * an {amb} name only in product-token form NAME/<digit> (the CAT_*_TOKEN
//     regexes), as examples/main.clf does.
// /robots.txt is exempt (check passes): the agents must be able to read the
// Disallow rules meant for them, as in all of upstream's server snippets.
// Categories are tried in the order below; a category whose names contain
// another category's name as a word comes first ("Applebot-Extended" before
// "Applebot"), so a User-Agent is reported under its own agent's category.
// Not in check: the version-less forms of the ambiguous agents (examples/main.clf
// AMBIGUOUS_AGENT_ALONE); see stdlib/README.md, "Known gaps".{cyclenote}
//
// Use:
//     import "ai_robots"
//     filter main(req: Request) {{
//         ai_robots.check(req)
//         accept
//     }}

"""


IS_AGENT_DOC = """\
// The test of `check` as a boolean, for rules that decide themselves (a maze
// reason, an allowlist before it): a {spec} name as a whole word, or an {amb}
// name in product-token form NAME/<digit> ({amb}_TOKEN). Unlike `check` it
// does not exempt /robots.txt: the caller chooses the paths.
"""


def render_is_agent(ambiguous):
    out = [IS_AGENT_DOC.format(spec=SPECIFIC_NAME, amb=AMBIGUOUS_NAME)]
    tests = ["ua.contains_word(%s)" % SPECIFIC_NAME]
    if ambiguous:
        out.append("pub const %s_TOKEN = %s\n" % (AMBIGUOUS_NAME, token_regex_literal([n for n, _ in ambiguous])))
        tests.append("ua.matches(%s_TOKEN)" % AMBIGUOUS_NAME)
    out.append("pub fn is_agent(req: Request) -> bool {\n")
    out.append('    let ua = req.header("user-agent")\n')
    out.append("    return %s\n}\n\n" % " || ".join(tests))
    return "".join(out)


def render_check(cats, cycle, specific, ambiguous):
    lines = [CHECK_DOC.format(prefix=REASON_PREFIX, spec=SPECIFIC_NAME, amb=AMBIGUOUS_NAME,
                              cyclenote=("\n// The ordering constraints form a cycle among: %s (e.g. two spellings of one name, equal ASCII case-insensitively, with different categories: the category\n// first in robots.json wins)."
                                         % ", ".join(cycle)) if cycle else "")]
    for slug, spec, amb in cats:
        if spec:
            lines.append(render_set(const_for(slug), spec,
                                    ["category %s: %d name%s" % (slug, len(spec), "" if len(spec) == 1 else "s")]))
            lines.append("\n")
        if amb:
            lines.append("// category %s, ambiguous names in product-token form (NAME/<digit>)\n" % slug)
            lines.append("pub const %s_TOKEN = %s\n\n" % (const_for(slug), token_regex_literal(amb)))
    lines.append("pub filter check(req: Request) {\n")
    lines.append('    if req.path == "/robots.txt" { pass }\n')
    lines.append('    let ua = req.header("user-agent")\n')
    earlier = set()
    for slug, spec, amb in cats:
        tests = []
        if spec:
            tests.append("ua.contains_word(%s)" % const_for(slug))
        if amb:
            tests.append("ua.matches(%s_TOKEN)" % const_for(slug))
        names = {n.lower() for n, _ in spec}
        # every name already in an earlier category (the cycle above): the
        # line never decides, and classifyc's lint would say so
        allow = "  // clf:allow(shadowed)" if spec and not amb and names <= earlier else ""
        earlier |= names
        lines.append('    if %s { reject "%s:%s" }%s\n' % (" || ".join(tests), REASON_PREFIX, slug, allow))
    lines.append("}\n")
    return "".join(lines)


def render_tests(cats, specific, ambiguous):
    """`test` blocks: one User-Agent per category, the exemption, and negatives."""
    out = ["\n// ---- tests: classifyc --test stdlib/ai_robots.clf (generated; the expected\n"
           "// reasons come from the generator's model of `check`) ----\n"]

    def test(title, ua, want, target=None):
        out.append("\ntest %s {\n" % clf_string_literal(title))
        if target:
            out.append("    target %s\n" % clf_string_literal(target))
        out.append("    header \"User-Agent\" %s\n" % clf_string_literal(ua))
        out.append("    expect check %s\n" % ('reject "%s"' % want if want else "pass"))
        out.append("}\n")

    for slug, spec, amb in cats:
        for name in ([spec[0][0]] if spec else []) + amb:
            ua = ("Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % name)
            test("%s: %s" % (slug, name), ua, model_reason(cats, ua))
    if specific:
        name = specific[0][0]
        ua = "Mozilla/5.0 (compatible; %s/1.0)" % name
        test("/robots.txt is exempt (%s)" % name, ua, model_reason(cats, ua, "/robots.txt"), "/robots.txt")
        test("upper-case %s" % name, name.upper(), model_reason(cats, name.upper()))
        test("%s glued to word characters" % name, "x%s_" % name, model_reason(cats, "x%s_" % name))
    for name in ambiguous:
        ua = "Mozilla/5.0 (compatible; x %s y)" % name[0]
        test("ambiguous %s as a bare word" % name[0], ua, model_reason(cats, ua))
    for title, ua in (("Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
                                 "(KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
                      ("IE 8 with SLCC2", "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; "
                                          "SLCC2; .NET CLR 2.0.50727)")):
        test(title, ua, model_reason(cats, ua))
    return "".join(out)


def render(agents, commit, sha, curated=AMBIGUOUS_NAMES, source="robots.json", date=None):
    specific, ambiguous, notes = resolve_ambiguous(agents, curated, source)
    cats, cycle = categories(specific, ambiguous)
    lowered = {}
    for name, _ in agents:
        lowered.setdefault(name.lower(), []).append(name)
    dups = [v for v in lowered.values() if len(v) > 1]
    if dups:
        dupnote = ("%d pairs of names differ only in case; both spellings are kept so\n"
                   "//     the list stays 1:1 with upstream (redundant under `i`):\n" % len(dups) +
                   "\n".join("//       " + " / ".join(v) for v in dups))
    else:
        dupnote = "no two names differ only in case."
    header = HEADER.format(regen=REGEN_COMMAND, repo=UPSTREAM_REPO, commit=commit, sha=sha,
                           dateline=DATE_LINE % date if date else "",
                           const=CONST_NAME, spec=SPECIFIC_NAME, amb=AMBIGUOUS_NAME,
                           count=len(agents), nspec=len(specific), namb=len(ambiguous),
                           ambnotes="\n".join(notes) if notes else "//   (none)",
                           dupnote=dupnote, ncat=len(cats))
    return "".join([
        header,
        render_set(CONST_NAME, agents, []),
        "\n",
        render_set(SPECIFIC_NAME, specific,
                   ["%s without the %s names: match these as whole words." % (CONST_NAME, AMBIGUOUS_NAME)]),
        "\n",
        render_set(AMBIGUOUS_NAME, ambiguous,
                   ["Ordinary words too: match only with context (see the header)."]),
        "\n",
        render_is_agent(ambiguous),
        render_check(cats, cycle, specific, ambiguous),
        render_tests(cats, specific, ambiguous),
    ])


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate stdlib/ai_robots.clf from ai.robots.txt robots.json")
    ap.add_argument("robots_json", nargs="?", default=None,
                    help="path of robots.json (default: <repo>/%s)" % DEFAULT_INPUT_REL)
    ap.add_argument("-o", "--output", default=None,
                    help="output file (default: <repo>/%s)" % DEFAULT_OUTPUT_REL)
    ap.add_argument("--commit", default=None,
                    help="upstream commit for the header (default: from LICENSE-NOTE.md beside robots.json)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the output file differs from what would be generated")
    ap.add_argument("--ambiguous", default=None, metavar="NAME,NAME,...",
                    help="replace the curated AMBIGUOUS_NAMES (for inputs other than upstream's "
                         "robots.json; an empty string means none)")
    args = ap.parse_args(argv)
    if args.ambiguous is None:
        curated = AMBIGUOUS_NAMES
    else:
        curated = [(n.strip(), "(given with --ambiguous)") for n in args.ambiguous.split(",") if n.strip()]

    robots_json = Path(args.robots_json) if args.robots_json else REPO_ROOT / DEFAULT_INPUT_REL
    output = Path(args.output) if args.output else REPO_ROOT / DEFAULT_OUTPUT_REL
    try:
        agents, sha = load_agents(robots_json)
        commit = args.commit or read_commit(robots_json)
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
            raise GenError("--commit must be a hex commit id")
        date = None if args.commit else read_commit_date(robots_json)
        text = render(agents, commit, sha, curated, str(robots_json), date)
    except GenError as e:
        print("gen_ai_robots: error: %s" % e, file=sys.stderr)
        return 2

    return check_or_write("gen_ai_robots", output, text, "%d agents, %d ambiguous" % (len(agents), len(curated)), args.check, REGEN_COMMAND)

if __name__ == "__main__":
    sys.exit(main())
