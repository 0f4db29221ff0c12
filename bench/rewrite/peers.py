"""peers.py: the rewrite benchmark's rule sets as each peer writes them
(bench/rewrite/README.md, "The peers").

The rule sets come from `rw-pagegen rules KIND N` (pagegen.c owns them):
one rule a line, PATTERN<TAB>TEMPLATE<TAB>lit|re, in the engine's syntax
(docs/rewrite.md, SRW mode: a regex in Hyperscan's and PCRE2's syntax, a
template with $0-$9, ${N}, $$). This module is the one place that turns
them into what each peer takes:

- sed_script: a GNU `sed -E` script, one `s///g` per rule, in order;
- nginx_sub_filter / nginx_subs_filter: the directives of one location;
- python_rx: one compiled alternation of all the rules for re.sub, with
  the replacement looked up by the matched text (literal sets) or by the
  alternative that matched (regex sets);
- plan_text: the same alternation for the Rust peer (rust/src/main.rs),
  templates already parsed, in a line format owned here.

Each raises NotExpressible(reason) for a set the peer cannot run, and
`same_work` says why a sequential peer (sed, subs_filter: each rule
rewrites the previous rule's output) or a leftmost-first one (Python re,
Rust regex, nginx sub_filter: the first alternative that matches at a
start, where the engine takes the longest) does the same work as the
engine on these sets. The outputs are compared byte for byte before
anything is timed (run.py), so a set where that reasoning fails shows up
as a difference, never as a silently different comparison.

Python 3.11 standard library only.
"""

import re


class NotExpressible(Exception):
    """str(): why the peer cannot run this rule set (the table's n/a)."""


class Rule:
    def __init__(self, regex, pattern, template):
        self.regex = regex          # False: a literal
        self.pattern = pattern      # bytes
        self.template = template    # bytes, the engine's syntax
        self.parts = parse_template(template)  # [bytes | int group]


def parse_template(t):
    """The engine's SRW template (docs/rewrite.md, Templates) as a list of
    bytes and group numbers: $0-$9 (one digit), ${N}, $$."""
    out, lit, i = [], bytearray(), 0
    while i < len(t):
        c = t[i:i + 1]
        if c != b"$":
            lit += c
            i += 1
            continue
        nxt = t[i + 1:i + 2]
        if nxt == b"$":
            lit += b"$"
            i += 2
            continue
        if nxt.isdigit():
            n, i = int(nxt), i + 2
        elif nxt == b"{":
            end = t.find(b"}", i + 2)
            if end < 0 or not t[i + 2:end].isdigit():
                raise ValueError("bad template %r" % t)
            n, i = int(t[i + 2:end]), end + 1
        else:
            raise ValueError("bad template %r" % t)
        if lit:
            out.append(bytes(lit))
            lit = bytearray()
        out.append(n)
    if lit:
        out.append(bytes(lit))
    return out


def read_rules(path):
    """The rules of an `rw-pagegen rules` file."""
    rules = []
    with open(path, "rb") as f:
        for n, line in enumerate(f.read().split(b"\n"), 1):
            if not line:
                continue
            fields = line.split(b"\t")
            if len(fields) != 3 or fields[2] not in (b"lit", b"re") or not fields[0]:
                raise ValueError("%s:%d: want PATTERN<TAB>TEMPLATE<TAB>lit|re" % (path, n))
            rules.append(Rule(fields[2] == b"re", fields[0], fields[1]))
    if not rules:
        raise ValueError("%s: no rules" % path)
    return rules


# ---- sed -E ------------------------------------------------------------

SED_DELIM = b"\x01"  # in no pattern or template of the sets
ERE_SPECIAL = b".[]()*+?{}|^$\\"


def ere_literal(p):
    return b"".join(b"\\" + bytes([c]) if c in ERE_SPECIAL else bytes([c]) for c in p)


def ere_regex(p):
    """A PCRE-syntax regex of the benchmark's dialect as a POSIX ERE (GNU):
    \\d becomes [0-9] (or 0-9 in a class), escaped punctuation stays
    escaped; any other escape, and the constructs ERE lacks (lazy or
    possessive quantifiers, (?...) groups), are not translated."""
    out, i, in_class = bytearray(), 0, False
    while i < len(p):
        c = p[i:i + 1]
        if c == b"\\":
            e = p[i + 1:i + 2]
            if e == b"d":
                out += b"0-9" if in_class else b"[0-9]"
            elif e and e in b".[]()*+?{}|^$\\/-'\"":
                out += (e if in_class else b"\\" + e)
            else:
                raise NotExpressible("sed -E: no \\%s" % e.decode("latin-1"))
            i += 2
            continue
        if not in_class and p[i:i + 2] in (b"(?", b"*?", b"+?", b"??", b"}?", b"*+", b"++"):
            raise NotExpressible("sed -E (POSIX ERE): no %s" % p[i:i + 2].decode("latin-1"))
        if c == b"[" and not in_class:
            in_class = True
            out += c
            i += 1
            if p[i:i + 1] == b"^":
                out += b"^"
                i += 1
            if p[i:i + 1] == b"]":
                out += b"]"
                i += 1
            continue
        if c == b"]" and in_class:
            in_class = False
        out += c
        i += 1
    return bytes(out)


def sed_replacement(parts):
    out = bytearray()
    for x in parts:
        if isinstance(x, int):
            if x > 9:
                raise NotExpressible("sed: groups above \\9")
            out += b"&" if x == 0 else b"\\%d" % x
        else:
            for c in x:
                b = bytes([c])
                if b in (b"\\", b"&", SED_DELIM):
                    out += b"\\" + b
                elif b == b"\n":
                    out += b"\\n"
                else:
                    out += b
    return bytes(out)


def sed_script(rules):
    """One `s///g` per rule, in order: sed applies each to the pattern
    space (a line) in turn, so a rule sees the previous rules' output."""
    lines = []
    for r in rules:
        pat = ere_regex(r.pattern) if r.regex else ere_literal(r.pattern)
        if SED_DELIM in pat or b"\n" in pat:
            raise NotExpressible("sed: a pattern with a newline")
        lines.append(b"s" + SED_DELIM + pat + SED_DELIM + sed_replacement(r.parts) + SED_DELIM + b"g")
    return b"\n".join(lines) + b"\n"


# ---- nginx -------------------------------------------------------------

SUB_FILTER_MAX = 255  # ngx_http_sub_filter_module: "number of search patterns exceeds 255"


def nginx_quote(b):
    """A double-quoted nginx configuration string whose value is b: the
    parser turns \\\\ into \\ and \\" into " (ngx_conf_file.c); '$' starts
    a variable, so it is refused by the callers."""
    s = b.decode("latin-1")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def nginx_sub_filter(rules):
    """sub_filter lines for one location: literals only, at most 255,
    always ASCII case-insensitive, leftmost start then the first
    configured string; sub_filter_once off makes every string global."""
    if any(r.regex for r in rules):
        raise NotExpressible("sub_filter takes literals only")
    if len(rules) > SUB_FILTER_MAX:
        raise NotExpressible("sub_filter takes at most %d strings" % SUB_FILTER_MAX)
    lines = ["sub_filter_once off;"]  # sub_filter_types: text/html, the default
    for r in rules:
        if b"$" in r.pattern or any(isinstance(x, int) or b"$" in x for x in r.parts):
            raise NotExpressible("sub_filter: '$' is an nginx variable, no captures")
        lines.append("sub_filter %s %s;" % (nginx_quote(r.pattern), nginx_quote(b"".join(r.parts))))
    return lines


def nginx_subs_filter(rules):
    """subs_filter lines: `g` for literals (fixed strings, case-sensitive),
    `gr` for regexes (PCRE, $N captures in the replacement). The module
    splits the body into lines and runs the rules one after the other on
    each line."""
    lines = []  # subs_filter_types: text/html, the default
    for r in rules:
        tpl = bytearray()
        for x in r.parts:
            if isinstance(x, int):
                # nginx scripts know $1..$9 only (ngx_http_script_compile:
                # one digit; "$0" and "${1}" are variables of those names)
                if not r.regex or not 1 <= x <= 9:
                    raise NotExpressible("subs_filter: captures $1..$9 only, in regex mode")
                tpl += b"$%d" % x
            elif b"$" in x:
                raise NotExpressible("subs_filter: '$' is an nginx variable")
            else:
                tpl += x
        if b"$" in r.pattern and not r.regex:
            raise NotExpressible("subs_filter: '$' in a fixed string is an nginx variable")
        lines.append("subs_filter %s %s %s;" % (nginx_quote(r.pattern), nginx_quote(bytes(tpl)),
                                                "gr" if r.regex else "g"))
    return lines


# ---- one alternation: Python re, Rust regex ----------------------------

def alternation(rules):
    """(source, plan): every rule as one capturing group of one
    alternation, in rule order, and per rule (first group, template
    parts) to expand a match of that alternative."""
    srcs, plan, group = [], [], 1
    for r in rules:
        body = r.pattern if r.regex else re.escape(r.pattern)
        ngroups = re.compile(body).groups
        srcs.append(b"(" + body + b")")
        plan.append((group, r.parts))
        group += 1 + ngroups
    return b"|".join(srcs), plan


def python_rx(rules):
    """(compiled pattern, replacement function) for re.sub: leftmost
    first, one pass, replacements not rescanned. Literal sets: an
    alternation of the escaped strings and a dict from matched text to
    replacement; regex sets: an alternation of the rules, each a group,
    and the template of the alternative that matched (m.lastindex: the
    outer group closes last)."""
    if all(not r.regex for r in rules):
        table = {}
        for r in rules:
            if any(isinstance(x, int) and x for x in r.parts):
                raise NotExpressible("a literal has no groups")
            table.setdefault(r.pattern, r.parts)
        rx = re.compile(b"|".join(re.escape(r.pattern) for r in rules))

        def lit(m):
            g = m.group(0)
            return b"".join(g if isinstance(x, int) else x for x in table[g])
        return rx, lit
    src, plan = alternation(rules)
    rx = re.compile(src)
    by_outer = {g: (g, parts) for g, parts in plan}

    def rep(m):
        base, parts = by_outer[m.lastindex]
        return b"".join((m.group(base + x) or b"") if isinstance(x, int) else x for x in parts)
    return rx, rep


def plan_text(rules):
    """The Rust peer's input (rust/src/main.rs): a first line
    `rwplan 1 N`, then per rule `lit|re<TAB>PATTERN-HEX<TAB>PARTS`, where
    the pattern is the rule's own (a literal's bytes, which the peer
    escapes, or the regex) and PARTS are comma-separated `=HEX` (bytes)
    and `$N` (the rule's group N), "-" when empty. The Rust peer builds
    the same alternation as python_rx: each rule one group, in order."""
    lines = ["rwplan 1 %d" % len(rules)]
    for r in rules:
        if not r.regex and any(isinstance(x, int) and x for x in r.parts):
            raise NotExpressible("a literal has no groups")
        parts = ",".join("$%d" % x if isinstance(x, int) else "=" + x.hex() for x in r.parts)
        lines.append("%s\t%s\t%s" % ("re" if r.regex else "lit", r.pattern.hex(), parts or "-"))
    return "\n".join(lines) + "\n"
