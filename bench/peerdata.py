#!/usr/bin/env python3
"""peerdata.py: the data the benchmark's peers (Lua, PCRE2) share with
libclassify, extracted from stdlib/ai_robots.clf and stdlib/crawlers.clf.

    python3 bench/peerdata.py --out peerdata.txt

Writes one record per line, fields separated by one TAB, in this order:

    AI_NAME       <category> <name>     the names of one category, in the
                                        order ai_robots.check tests the
                                        categories; unescaped
    AI_TOKEN      <category> <regex>    the category's CAT_*_TOKEN regex,
                                        if it has one (flags dropped: always
                                        caseless), after its names
    LUA_AI_TOKEN  <category> pattern <lua>
                                        its translation to Lua patterns for
                                        a LOWER-CASED User-Agent (one or
                                        more lines: the regex matches iff
                                        one of them does)
    CRAWLER       <tag> <regex>         every ua.matches(/.../) of
                                        crawlers.clf, tag from the enclosing
                                        `pub fn is_<tag>` (with hyphens), in
                                        file order, case-sensitive
    LUA_CRAWLER   <tag> plain|pattern <lua>
                                        its translation(s): `plain` is a
                                        literal for string.find(s, x, 1,
                                        true), `pattern` a Lua pattern

The regex-to-Lua translator handles the subset these files use (literal
characters and escapes, classes, \\d \\s \\S \\w, [\\s\\S], ^ and \\z or $
anchors, \\b before a word character, quantifiers on one character, and
alternation in groups or at the top, expanded into several patterns whose
union is the regex). A regex outside it stops the script with a list,
unless HAND_TRANSLATED has it.

Exit status: 0 written; 2 the .clf files do not have the expected shape,
or a regex could not be translated.

Python 3.11 standard library only.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
sys.dont_write_bytecode = True
from benchcommon import WriteError, write_atomic  # noqa: E402
from clfgen import clf_string_bytes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AI_ROBOTS = os.path.join(ROOT, "stdlib", "ai_robots.clf")
CRAWLERS = os.path.join(ROOT, "stdlib", "crawlers.clf")

# Regexes the translator cannot do, translated by hand: regex source ->
# list of (kind, lua). Empty: every regex of the current files translates.
HAND_TRANSLATED = {}


class ShapeError(Exception):
    pass


class Untranslatable(Exception):
    pass


# ---------------------------------------------------------------- .clf text

def unescape_string(lit, where):
    """The value of a .clf string literal's body (between the quotes): the
    escapes give bytes (clfgen.clf_string_bytes), and the whole must be
    UTF-8 (the file is)."""
    try:
        return clf_string_bytes(lit).decode("utf-8")
    except ValueError as e:  # UnicodeDecodeError included
        raise ShapeError(f"{where}: {e}") from None


def scan_regex(text, pos, where):
    """text[pos] is the opening '/': returns (source, flags, end)."""
    assert text[pos] == "/"
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "/":
            break
        if c == "\n":
            raise ShapeError(f"{where}: regex runs to the end of the line")
        i += 1
    else:
        raise ShapeError(f"{where}: unterminated regex")
    src = text[pos + 1:i]
    m = re.match(r"[a-z]*", text[i + 1:])
    return src, m.group(0), i + 1 + m.end()


def lineno(text, pos):
    return text.count("\n", 0, pos) + 1


STRING_RE = r'"((?:[^"\\\n]|\\.)*)"'


def parse_set(text, name, path):
    """The elements and the caseless flag of `pub const NAME = [...]`."""
    m = re.search(r"^pub const " + re.escape(name) + r" = \[\n(.*?)^\](i?)\n",
                  text, re.M | re.S)
    if not m:
        raise ShapeError(f"{path}: no string set `pub const {name} = [ ... ]`")
    body, ci = m.group(1), m.group(2) == "i"
    names = []
    for k, line in enumerate(body.split("\n")):
        line = line.strip()
        if not line:
            continue
        lm = re.fullmatch(STRING_RE + r",?\s*(//.*)?", line)
        if not lm:
            raise ShapeError(f"{path}:{lineno(text, m.start(1)) + k}: "
                             f"expected one string per line in {name}, got: {line}")
        names.append(unescape_string(lm.group(1), f"{path}:{lineno(text, m.start(1)) + k}"))
    if not names:
        raise ShapeError(f"{path}: {name} is empty")
    return names, ci


def parse_const_regex(text, name, path):
    m = re.search(r"^pub const " + re.escape(name) + r" = (/)", text, re.M)
    if not m:
        raise ShapeError(f"{path}: no regex `pub const {name} = /.../`")
    src, flags, _ = scan_regex(text, m.start(1), f"{path}:{lineno(text, m.start())}")
    return src, flags


def parse_ai_robots(path):
    """[(category, [names], token_regex or None)] in check's order."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^pub filter check\(req: Request\) \{\n(.*?)^\}\n", text, re.M | re.S)
    if not m:
        raise ShapeError(f"{path}: no `pub filter check(req: Request) {{ ... }}`")
    lines = [l.strip() for l in m.group(1).split("\n") if l.strip()]
    first = lineno(text, m.start(1))
    if len(lines) < 3 or lines[0] != 'if req.path == "/robots.txt" { pass }' \
            or lines[1] != 'let ua = req.header("user-agent")':
        raise ShapeError(f"{path}:{first}: check does not start with the /robots.txt "
                         "pass and `let ua = req.header(\"user-agent\")`")
    cats = []
    for line in lines[2:]:
        lm = re.fullmatch(r'if ua\.contains_word\((CAT_[A-Z0-9_]+)\)'
                          r'(?: \|\| ua\.matches\((CAT_[A-Z0-9_]+_TOKEN)\))?'
                          r' \{ reject "ai-robots-txt:([a-z0-9-]+)" \}'
                          r'(?:\s*// clf:allow\([a-z-]+\))?', line)  # a lint's silencer
        if not lm:
            raise ShapeError(f"{path}: unexpected line in check: {line}")
        setname, tokname, cat = lm.groups()
        names, ci = parse_set(text, setname, path)
        if not ci:
            raise ShapeError(f"{path}: {setname} is not caseless (`]i`)")
        token = None
        if tokname:
            if tokname != setname + "_TOKEN":
                raise ShapeError(f"{path}: {tokname} does not belong to {setname}")
            token, flags = parse_const_regex(text, tokname, path)
            if flags != "i":
                raise ShapeError(f"{path}: {tokname} has flags '{flags}', expected 'i'")
        for n in names:
            if any(c in n for c in "\t\r\n"):
                raise ShapeError(f"{path}: name {n!r} holds a TAB, CR or LF")
        cats.append((cat, names, token))
    if not cats:
        raise ShapeError(f"{path}: check tests no category")
    return cats


def parse_crawlers(path):
    """[(tag, regex)] in file order."""
    text = open(path, encoding="utf-8").read()
    cm = re.search(r"^// Contents: (\d+) of the", text, re.M)
    if not cm:
        raise ShapeError(f"{path}: no `// Contents: N of the ...` header line")
    expected = int(cm.group(1))
    out = []
    fns = list(re.finditer(r"^pub fn is_([a-z_]+)\(req: Request\) -> bool \{\n(.*?)^\}\n",
                           text, re.M | re.S))
    if not fns:
        raise ShapeError(f"{path}: no `pub fn is_<tag>(req: Request) -> bool`")
    tags = []
    for fm in fns:
        tag = fm.group(1)
        body = fm.group(2)
        base = lineno(text, fm.start(2))
        if tag == "crawler":
            continue  # is_crawler: the union of the others, checked below
        tags.append(tag)
        blines = body.split("\n")
        count = 0
        if blines[0].strip() != 'let ua = req.header("user-agent")':
            raise ShapeError(f"{path}:{base}: is_{tag} does not start with "
                             "`let ua = req.header(\"user-agent\")`")
        for k, line in enumerate(blines[1:], 1):
            s = line.strip()
            if not s or s.startswith("//"):
                continue
            where = f"{path}:{base + k}"
            lm = re.match(r"(return |\|\| )ua\.matches\(/", s)
            if not lm:
                raise ShapeError(f"{where}: is_{tag}: expected `ua.matches(/.../)`, got: {s}")
            if (lm.group(1) == "return ") != (count == 0):
                raise ShapeError(f"{where}: is_{tag}: `return` must start the chain")
            src, flags, end = scan_regex(s, lm.end() - 1, where)
            rest = s[end:]
            if not re.fullmatch(r"\)\s*(//.*)?", rest):
                raise ShapeError(f"{where}: unexpected text after the regex: {rest}")
            if flags:
                raise ShapeError(f"{where}: regex with flags '{flags}' (expected none)")
            if any(c in src for c in "\t\r\n"):
                raise ShapeError(f"{where}: regex holds a TAB, CR or LF")
            out.append((tag, src))
            count += 1
    # is_crawler must be the union of all tags, and the chains must be plain.
    im = re.search(r"^pub fn is_crawler\(req: Request\) -> bool \{\n(.*?)^\}\n", text, re.M | re.S)
    if not im:
        raise ShapeError(f"{path}: no `pub fn is_crawler`")
    called = re.findall(r"is_([a-z_]+)\(req\)", im.group(1))
    if called != tags:
        raise ShapeError(f"{path}: is_crawler calls {called}, expected {tags}")
    if len(out) != expected or len(re.findall(r"ua\.matches\(", text)) != expected:
        raise ShapeError(f"{path}: {len(out)} patterns found, the header says {expected}")
    return [(t.replace("_", "-"), r) for t, r in out]


# ------------------------------------------------------- regex -> Lua patterns

LUA_MAGIC = set("^$()%.[]*+-?")
WORD = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
SIMPLE_ESC_CLASS = {"d": "%d", "D": "%D", "s": "%s", "S": "%S", "w": "[%w_]", "W": "[^%w_]"}
# Inside a Lua set, %w is isalnum: ASCII in the C locale the host runs in.
SET_ESC = {"d": "%d", "D": "%D", "s": "%s", "S": "%S", "w": "%w_"}
CTRL_ESC = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}


class Atom:
    """One element of a sequence: a literal character, a class (Lua text),
    an anchor ('^' or '$'), or the word boundary ('\\b')."""

    def __init__(self, kind, text, quant=""):
        self.kind, self.text, self.quant = kind, text, quant

    def lua(self):
        if self.kind == "lit":
            c = self.text
            if c == "\0":
                raise Untranslatable("NUL byte")
            return ("%" + c if c in LUA_MAGIC else c) + self.quant
        if self.kind == "class":
            return self.text + self.quant
        raise AssertionError(self.kind)


class RegexToLua:
    def __init__(self, src, caseless):
        self.s, self.i, self.ci = src, 0, caseless

    def fail(self, why):
        raise Untranslatable(f"{why} at offset {self.i}")

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else None

    def translate(self):
        alts = self.alternation()
        if self.i != len(self.s):
            self.fail("unbalanced ')'")
        out = []
        for seq in alts:
            r = self.emit(seq)
            if r not in out:
                out.append(r)
        return out

    def alternation(self):
        alts = self.sequence()
        while self.peek() == "|":
            self.i += 1
            alts = alts + self.sequence()
        return alts

    def sequence(self):
        """A list of alternatives, each a list of Atoms (groups expanded)."""
        alts = [[]]
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            part = self.piece()
            alts = [a + p for a in alts for p in part]
            if len(alts) > 64:
                self.fail("too many expansions")
        return alts

    def piece(self):
        c = self.s[self.i]
        if c == "(":
            self.i += 1
            if self.s.startswith("?:", self.i):
                self.i += 2
            elif self.peek() == "?":
                self.fail("group syntax (?...)")
            inner = self.alternation()
            if self.peek() != ")":
                self.fail("unclosed group")
            self.i += 1
            if self.peek() is not None and self.peek() in "*+?{":
                self.fail("quantified group")
            return inner
        atom = self.atom()
        q = self.quantifier()
        if q is None:
            return [[atom]]
        if atom.kind not in ("lit", "class"):
            self.fail("quantified anchor")
        lo, hi = q
        if (lo, hi) == (0, None):
            return [[Atom(atom.kind, atom.text, "*")]]
        if (lo, hi) == (1, None):
            return [[Atom(atom.kind, atom.text, "+")]]
        if (lo, hi) == (0, 1):
            return [[Atom(atom.kind, atom.text, "?")]]
        # {n}, {n,}, {n,m}: n copies, then '*' or (m-n) optional copies
        seq = [Atom(atom.kind, atom.text) for _ in range(lo)]
        if hi is None:
            seq.append(Atom(atom.kind, atom.text, "*"))
        else:
            seq += [Atom(atom.kind, atom.text, "?") for _ in range(hi - lo)]
        return [seq]

    def quantifier(self):
        c = self.peek()
        if c is None:
            return None
        q = None
        if c in "*+?":
            self.i += 1
            q = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{":
            m = re.match(r"\{(\d+)(,(\d*))?\}", self.s[self.i:])
            if not m:
                return None
            self.i += m.end()
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo or lo > 16 or (hi or 0) > 16:
                self.fail("repetition count")
            q = (lo, hi)
        if q is not None and self.peek() is not None and self.peek() in "?+":
            # lazy or possessive: the same set of matched strings for a
            # search (matches only asks whether there is one)
            if self.peek() == "+":
                self.fail("possessive quantifier")
            self.i += 1
        return q

    def lit(self, ch):
        if self.ci:
            ch = ch.lower()
        return Atom("lit", ch)

    def atom(self):
        c = self.s[self.i]
        self.i += 1
        if c == "^":
            return Atom("anchor", "^")
        if c == "$":
            # Hyperscan's $ also matches before a final LF; the values
            # (header fields) hold no LF.
            return Atom("anchor", "$")
        if c == ".":
            # Hyperscan's . (no `s` flag) is any byte but LF; the values
            # hold no LF (bench/harness.h), so Lua's . (any byte) is exact
            return Atom("class", ".")
        if c == "[":
            return self.char_class()
        if c in "*+?{":
            self.fail(f"quantifier '{c}' without an operand")
        if c != "\\":
            return self.lit(c)
        e = self.peek()
        if e is None:
            self.fail("trailing backslash")
        self.i += 1
        if e in SIMPLE_ESC_CLASS:
            return Atom("class", SIMPLE_ESC_CLASS[e])
        if e in "zZ":
            return Atom("anchor", "$")
        if e == "A":
            return Atom("anchor", "^")
        if e == "b":
            return Atom("wordb", "")
        if e in CTRL_ESC:
            return self.lit(CTRL_ESC[e])
        if e == "x":
            m = re.match(r"[0-9A-Fa-f]{2}", self.s[self.i:])
            if not m:
                self.fail("\\x without two hex digits")
            self.i += 2
            return self.lit(chr(int(m.group(0), 16)))
        if e.isalnum():
            self.fail(f"escape \\{e}")
        return self.lit(e)

    def set_char(self, ch):
        if self.ci and ch.isalpha():
            ch = ch.lower()
        if ch.isalnum():
            return ch
        if ch == "\0":
            self.fail("NUL in a class")
        return "%" + ch

    def char_class(self):
        if self.s.startswith("\\s\\S]", self.i) or self.s.startswith("\\S\\s]", self.i) \
                or self.s.startswith("\\d\\D]", self.i) or self.s.startswith("\\w\\W]", self.i):
            self.i += 5
            return Atom("class", ".")  # any byte
        neg = False
        if self.peek() == "^":
            neg = True
            self.i += 1
        items = []
        first = True
        while True:
            c = self.peek()
            if c is None:
                self.fail("unclosed class")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            self.i += 1
            if c == "\\":
                e = self.peek()
                if e is None:
                    self.fail("unclosed class")
                self.i += 1
                if e in SET_ESC:
                    items.append(SET_ESC[e])
                    continue
                if e in CTRL_ESC:
                    c = CTRL_ESC[e]
                elif e == "x":
                    m = re.match(r"[0-9A-Fa-f]{2}", self.s[self.i:])
                    if not m:
                        self.fail("\\x without two hex digits")
                    self.i += 2
                    c = chr(int(m.group(0), 16))
                elif e.isalnum():
                    self.fail(f"escape \\{e} in a class")
                else:
                    c = e
            elif c == "[" and self.peek() == ":":
                self.fail("POSIX class")
            # a range?
            if self.peek() == "-" and self.i + 1 < len(self.s) and self.s[self.i + 1] != "]":
                hi = self.s[self.i + 1]
                if hi == "\\":
                    self.fail("range to an escape")
                self.i += 2
                ok = (c.isdigit() and hi.isdigit()) or (c.islower() and hi.islower()) \
                    or (c.isupper() and hi.isupper())
                if not ok or not (c.isascii() and hi.isascii()) or c > hi:
                    self.fail(f"range {c}-{hi}")
                if self.ci:
                    c, hi = c.lower(), hi.lower()
                items.append(f"{c}-{hi}")
                continue
            items.append(self.set_char(c))
        return Atom("class", "[" + ("^" if neg else "") + "".join(items) + "]")

    def emit(self, seq):
        """(kind, lua) for one alternative (a list of Atoms)."""
        start = bool(seq) and seq[0].kind == "anchor" and seq[0].text == "^"
        end = bool(seq) and seq[-1].kind == "anchor" and seq[-1].text == "$"
        body = seq[(1 if start else 0):(len(seq) - 1 if end else len(seq))]
        if not body and (start or end):
            self.fail("a pattern that is only anchors")
        for a in body:
            if a.kind == "anchor":
                self.fail(f"anchor '{a.text}' inside the pattern")
        if not start and not end and all(a.kind == "lit" and not a.quant for a in body):
            return ("plain", "".join(a.text for a in body))
        parts = []
        for k, a in enumerate(body):
            if a.kind == "wordb":
                nxt = body[k + 1] if k + 1 < len(body) else None
                if nxt is None or nxt.kind != "lit" or nxt.quant or nxt.text not in WORD:
                    self.fail("\\b not followed by a word character")
                # before a word character, \b means: the previous byte is no
                # word character (or there is none): Lua's frontier pattern
                parts.append("%f[%w_]")
                continue
            parts.append(a.lua())
        return ("pattern", ("^" if start else "") + "".join(parts) + ("$" if end else ""))


def translate(src, caseless):
    if src in HAND_TRANSLATED:
        return HAND_TRANSLATED[src]
    return RegexToLua(src, caseless).translate()


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description="Write the peers' data file from stdlib/*.clf.")
    ap.add_argument("--out", required=True, help="the file to write (peerdata.txt)")
    args = ap.parse_args()
    try:
        cats = parse_ai_robots(AI_ROBOTS)
        crawlers = parse_crawlers(CRAWLERS)
    except ShapeError as e:
        print(f"peerdata.py: {e}", file=sys.stderr)
        print("peerdata.py: the .clf files do not have the shape this script expects; "
              "update bench/peerdata.py (and the peers) with them", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"peerdata.py: {e}", file=sys.stderr)
        return 2

    lines, bad = [], []
    for cat, names, token in cats:
        for n in names:
            lines.append(f"AI_NAME\t{cat}\t{n}")
        if token is not None:
            lines.append(f"AI_TOKEN\t{cat}\t{token}")
            try:
                for kind, lua in translate(token, True):
                    if any(c in lua for c in "\t\r\n"):
                        raise Untranslatable("TAB, CR or LF in the translation")
                    # the Lua peer matches these on the lower-cased UA with
                    # string.find; a plain literal is a pattern too
                    if kind == "plain":
                        lua = "".join("%" + c if c in LUA_MAGIC else c for c in lua)
                    lines.append(f"LUA_AI_TOKEN\t{cat}\tpattern\t{lua}")
            except Untranslatable as e:
                bad.append(f"ai_robots {cat}: /{token}/i: {e}")
    for tag, rx in crawlers:
        lines.append(f"CRAWLER\t{tag}\t{rx}")
        try:
            for kind, lua in translate(rx, False):
                if any(c in lua for c in "\t\r\n"):
                    raise Untranslatable("TAB, CR or LF in the translation")
                lines.append(f"LUA_CRAWLER\t{tag}\t{kind}\t{lua}")
        except Untranslatable as e:
            bad.append(f"crawlers {tag}: /{rx}/: {e}")
    if bad:
        print("peerdata.py: cannot translate these regexes to Lua patterns "
              "(add them to HAND_TRANSLATED):", file=sys.stderr)
        for b in bad:
            print("  " + b, file=sys.stderr)
        return 2
    try:
        write_atomic(args.out, "\n".join(lines) + "\n")
    except WriteError as e:
        print("peerdata.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
