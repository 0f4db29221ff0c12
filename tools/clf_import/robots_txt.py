"""robots.txt -> .clf: the agents a robots.txt disallows from the whole site.

    clf-import robots-txt ROBOTS.txt [-o OUT.clf] [--name NAME]

Which agents are rejected follows Anubis' `robots2policy` (cmd/robots2policy;
its golden files are tests/importers/robots/ test data), which turns exactly
these groups into DENY rules:

* Lines are trimmed; empty lines and lines starting with `#` are skipped; a
  line without `:` is ignored; the directive (before the first `:`) is
  compared case-insensitively. Unknown directives (Sitemap, Host, ...) are
  ignored.
* A group is one or more consecutive `User-agent` lines followed by its
  rule lines (`Disallow`, `Allow`, `Crawl-delay`); a `User-agent` line after
  a rule line starts a new group (robots2policy groups consecutive agents
  the same way: testdata/consecutive.*).
* A group disallows the whole site when one of its `Disallow` values is
  exactly `/`. `Allow` lines do not change that (robots2policy ignores
  them); `Disallow: /*` is a path rule there, not a whole-site deny, and so
  it is here.
* `User-agent: *` is never rejected: robots2policy turns `*` + `Disallow: /`
  into a weight adjustment ("global-restriction"), not a deny. Named agents
  in the same group are still rejected.

Differences, on purpose (docs/importers.md):

* Agent names are matched with `contains_word`, ASCII case-insensitively
  (RFC 9309 section 2.2.1: the product token is matched case-insensitively),
  where robots2policy emits a case-sensitive substring test
  (`userAgent.contains("BadBot")`). "SuperBadBot" is not "BadBot".
* `#` starts a comment anywhere on a line (RFC 9309 section 2.2); robots2policy
  keeps it in the value, so `Disallow: / # all` would be a path rule there.
* Path rules (`Disallow: /admin`) and Crawl-delay are not converted: a
  classifier has no "challenge" or "weight"; the file lists how many were left.
* /robots.txt itself stays reachable for everyone, so the rejected agents can
  read the rules meant for them.
"""

import os

from . import InputError, read_input, clf_string, comment_text

DEFAULT_REASON = "robots-txt"
RULE_DIRECTIVES = ("disallow", "allow", "crawl-delay")


class Group:
    def __init__(self):
        self.agents = []        # [(name, line)]
        self.disallows = []     # [(value, line)], non-empty values only
        self.allows = []
        self.crawl_delay = None
        self.has_rules = False  # a rule line was seen: the next User-agent starts a new group

    def blocks_site(self):
        return any(v == "/" for v, _ in self.disallows)


# The longest User-agent name converted (bytes).
MAX_AGENT = 1000

def _strip_comment(value):
    i = value.find("#")
    return (value if i < 0 else value[:i]).strip()


def parse(text, path="robots.txt"):
    """The groups of a robots.txt text (str), in file order."""
    if "\x00" in text:
        line = text[:text.index("\x00")].count("\n") + 1
        raise InputError("NUL byte: not a robots.txt text file", path, line)
    if text.startswith("\ufeff"):
        text = text[1:]
    groups = []
    cur = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if ":" not in line:
            continue
        directive, value = line.split(":", 1)
        directive = directive.strip().lower()
        value = _strip_comment(value)
        if directive == "user-agent":
            if len(value) > MAX_AGENT:
                # Hyperscan refuses very long literals; no real product
                # token comes near this.
                raise InputError("User-agent of %d bytes: longer than %d" % (len(value), MAX_AGENT),
                                 path, lineno)
            if cur is None or cur.has_rules:
                cur = Group()
                groups.append(cur)
            cur.agents.append((value, lineno))
        elif directive in RULE_DIRECTIVES:
            if cur is None:
                continue            # a rule outside any group (RFC 9309: ignored)
            cur.has_rules = True
            if directive == "disallow" and value:
                cur.disallows.append((value, lineno))
            elif directive == "allow" and value:
                cur.allows.append((value, lineno))
            elif directive == "crawl-delay":
                cur.crawl_delay = value
    return groups


def blocked_agents(groups, path="robots.txt"):
    """([(name, line)] rejected, deduplicated case-insensitively, first
    spelling kept; [line] of `User-agent: *` lines in whole-site groups)."""
    out, seen, star = [], set(), []
    for g in groups:
        if not g.blocks_site():
            continue
        for name, line in g.agents:
            if name == "*":
                star.append(line)
                continue
            if name == "":
                raise InputError("empty User-agent in a group with `Disallow: /` "
                                 "(it would match every request)", path, line)
            key = name.lower()
            if key not in seen:
                seen.add(key)
                out.append((name, line))
    return out, star


def read_text(path):
    """The file (or standard input for "-") as str; non-UTF-8 bytes are kept
    as surrogate escapes and written back as \\xNN."""
    if path == "-":
        import sys
        data = read_input(path, sys.stdin.buffer)
    else:
        data = read_input(path)
    return data.decode("utf-8", "surrogateescape")


def convert(path, name=None):
    """The .clf text for the robots.txt at `path` ("-": standard input)."""
    reason = name or DEFAULT_REASON
    text = read_text(path)
    groups = parse(text, path)
    agents, star = blocked_agents(groups, path)
    shown = "<stdin>" if path == "-" else os.path.basename(path)
    path_rules = sum(len(g.disallows) for g in groups if not g.blocks_site())
    delays = sum(1 for g in groups if g.crawl_delay)

    out = []
    w = out.append
    w("// generated by clf-import robots-txt from %s -- do not edit; regenerate with:" % comment_text(shown))
    w("//     clf-import robots-txt %s%s -o OUT.clf" % (
        comment_text(shown), "" if name is None else " --name " + comment_text(name)))
    w("//")
    w("// The %d user agent%s whose robots.txt group disallows the whole site" % (
        len(agents), "" if len(agents) == 1 else "s"))
    w("// (`Disallow: /`), matched as whole words, ASCII case-insensitively")
    w("// (RFC 9309 section 2.2.1). Rejected with reason %s, except for" % comment_text(clf_string(reason)))
    w("// /robots.txt itself. Selection as Anubis' robots2policy makes its DENY rules.")
    for line in star:
        w("// `User-agent: *` with `Disallow: /` (line %d): not rejected (it would block" % line)
        w("// every client; robots2policy makes it a weight adjustment, not a deny).")
    if path_rules or delays:
        w("// Not converted: %d path Disallow rule%s (in groups that do not disallow the whole\n// site) and %d Crawl-delay line%s." % (
            path_rules, "" if path_rules == 1 else "s", delays, "" if delays == 1 else "s"))
    w("")
    if agents:
        w("pub const AGENTS = [")
        width = max(len(clf_string(n)) for n, _ in agents) + 1
        for n, line in agents:
            w("    %s// line %d" % ((clf_string(n) + ",").ljust(width + 1), line))
        w("]i")
    else:
        w("pub const AGENTS = []i")
    w("")
    w("// Rejects a request whose User-Agent names one of AGENTS; no verdict otherwise.")
    w("pub filter check(req: Request) {")
    if agents:
        w('    if req.path != "/robots.txt" && req.header("user-agent").contains_word(AGENTS) {')
        w("        reject %s" % clf_string(reason))
        w("    }")
    else:
        w("    pass")
    w("}")
    w("")
    w("filter main(req: Request) {")
    w("    check(req)")
    w("    accept")
    w("}")
    return "\n".join(out) + "\n"
