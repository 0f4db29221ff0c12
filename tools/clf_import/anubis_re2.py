"""Go RE2 regular expressions (Anubis' `regexp.Compile`) -> Hyperscan
syntax for a .clf regex literal (`/.../`).

`translate(pattern)` returns the body of the literal (without the slashes)
or raises Re2Error with a message saying what RE2 (or Hyperscan, for the
few RE2 features it lacks) refuses. Matching stays "somewhere in the
string", as Go's MatchString. Differences handled:

- `$` outside `(?m)` is end of text in RE2; in PCRE/Hyperscan it also
  matches before a final newline, so it becomes `\\z`;
- `(?U)` (ungreedy) does not change whether a regex matches: dropped;
- `(?P<name>` and `(?<name>` groups become `(?:`;
- `\\Q...\\E` is expanded to escaped characters;
- octal escapes become `\\xHH`; `/`, newlines and non-printable or
  non-ASCII bytes are escaped (a non-ASCII character is grouped so that a
  quantifier applies to all its bytes).

Refused, as RE2 refuses them: unbalanced parentheses or brackets, bad
escapes (`\\Z`, `\\1`...), look-around, repetition of nothing or of a
repetition, counts above 1000. Refused because Hyperscan (without UTF-8
mode) cannot match them as Go does: `\\p`/`\\P` Unicode classes and
non-ASCII characters inside a character class.
"""


class Re2Error(Exception):
    pass


_PERL_CLASSES = set("dDsSwW")
_SIMPLE_ESC = {"a": "\\x07", "f": "\\f", "t": "\\t", "n": "\\n", "r": "\\r", "v": "\\x0B"}


def _lit_byte(b):
    c = chr(b)
    if c.isalnum() or c in " _-,:;'\"!@#%&=<>`~" and c != "/":
        return c
    if 0x20 <= b <= 0x7E:
        return "\\" + c  # punctuation: escaping is always literal
    return "\\x%02X" % b


def _lit_char(ch):
    """A literal character outside a class, as a Hyperscan atom."""
    bs = ch.encode("utf-8", "surrogateescape")
    if len(bs) == 1:
        return _lit_byte(bs[0])
    return "(?:" + "".join("\\x%02X" % b for b in bs) + ")"


def _class_byte(ch):
    b = ord(ch)
    if b > 0x7E or b < 0x20:
        if b > 0x7F:
            raise Re2Error("non-ASCII character %r in a character class: Go matches it as one UTF-8 "
                           "character, Hyperscan here matches bytes" % ch)
        return "\\x%02X" % b
    if ch in "\\]^-[/":
        return "\\" + ch
    return ch


def translate(pat):
    out = []
    i = 0
    n = len(pat)
    # flag stack: multiline per group level
    ml_stack = [False]
    depth = 0
    # can the next token be quantified? 'atom' | 'quant' | None
    last = None

    def need_atom(q):
        if last is None:
            raise Re2Error("missing argument to repetition operator: `%s`" % q)
        if last == "quant":
            raise Re2Error("invalid nested repetition operator: `%s`" % q)

    def parse_escape(i, in_class):
        """pat[i] == '\\'; returns (text, new_i, kind) kind: 'atom' or 'assert'."""
        if i + 1 >= n:
            raise Re2Error("trailing backslash at end of expression")
        c = pat[i + 1]
        if c in _PERL_CLASSES:
            return "\\" + c, i + 2, "atom"
        if c in _SIMPLE_ESC:
            return _SIMPLE_ESC[c], i + 2, "atom"
        if c in "AzbB" and not in_class:
            return "\\" + c, i + 2, "assert"
        if c in "pP":
            raise Re2Error("Unicode class `\\%s` is not supported (Hyperscan runs without UTF-8 mode here)" % c)
        if c == "x":
            j = i + 2
            if j < n and pat[j] == "{":
                k = pat.find("}", j)
                if k < 0:
                    raise Re2Error("invalid escape sequence: `\\x{` without `}`")
                h = pat[j + 1:k]
                try:
                    v = int(h, 16)
                except ValueError:
                    raise Re2Error("invalid escape sequence: `\\x{%s}`" % h)
                if v > 0x10FFFF:
                    raise Re2Error("invalid escape sequence: `\\x{%s}`" % h)
                ch, i2 = chr(v), k + 1
            else:
                h = pat[j:j + 2]
                if len(h) != 2 or any(x not in "0123456789abcdefABCDEF" for x in h):
                    raise Re2Error("invalid escape sequence: `\\x%s`" % h)
                ch, i2 = chr(int(h, 16)), j + 2
            return (_class_byte(ch) if in_class else _lit_char(ch)), i2, "atom"
        if c in "01234567":
            j = i + 1
            if c != "0" and not (j + 1 < n and pat[j + 1] in "01234567"):
                raise Re2Error("invalid escape sequence: `\\%s` (backreferences are not supported by RE2)" % c)
            k = j
            while k < n and k < j + 3 and pat[k] in "01234567":
                k += 1
            ch = chr(int(pat[j:k], 8))
            return (_class_byte(ch) if in_class else _lit_char(ch)), k, "atom"
        if ord(c) < 0x80 and not c.isalnum() and c != "_":
            return (_class_byte(c) if in_class else _lit_char(c)), i + 2, "atom"
        raise Re2Error("invalid escape sequence: `\\%s`" % c)

    while i < n:
        c = pat[i]
        if c == "\\" and pat.startswith("\\Q", i):
            k = pat.find("\\E", i + 2)
            body = pat[i + 2:] if k < 0 else pat[i + 2:k]
            i = n if k < 0 else k + 2
            for ch in body:
                out.append(_lit_char(ch))
                last = "atom"
            continue
        if c == "\\":
            text, i, kind = parse_escape(i, False)
            out.append(text)
            last = "atom"   # RE2 lets assertions be repeated (`^*`, `\\b{2}`)
            continue
        if c == "[":
            j = i + 1
            parts = ["["]
            if j < n and pat[j] == "^":
                parts.append("^")
                j += 1
            first = True
            closed = False
            while j < n:
                d = pat[j]
                if d == "]" and not first:
                    closed = True
                    j += 1
                    break
                first = False
                if d == "[" and pat.startswith("[:", j):
                    k = pat.find(":]", j + 2)
                    if k < 0:
                        raise Re2Error("missing closing ]: `%s`" % pat[i:])
                    name = pat[j + 2:k]
                    if name.lstrip("^") not in ("alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
                                                "lower", "print", "punct", "space", "upper", "word", "xdigit"):
                        raise Re2Error("invalid character class range: `[:%s:]`" % name)
                    parts.append(pat[j:k + 2])
                    j = k + 2
                    continue
                if d == "\\":
                    text, j, _ = parse_escape(j, True)
                    parts.append(text)
                    continue
                if d == "-":
                    parts.append("-")
                    j += 1
                    continue
                parts.append(_class_byte(d))
                j += 1
            if not closed:
                raise Re2Error("missing closing ]: `%s`" % pat[i:])
            parts.append("]")
            out.append("".join(parts))
            i = j
            last = "atom"
            continue
        if c == "(":
            if pat.startswith("(?", i):
                if pat.startswith("(?P<", i) or pat.startswith("(?<", i) and not pat.startswith("(?<=", i) \
                        and not pat.startswith("(?<!", i):
                    k = pat.find(">", i)
                    name = pat[pat.index("<", i) + 1:k] if k > 0 else ""
                    if k < 0 or not name or not all(x.isalnum() or x == "_" for x in name):
                        raise Re2Error("invalid named capture: `%s`" % pat[i:i + 20])
                    out.append("(?:")
                    ml_stack.append(ml_stack[-1])
                    depth += 1
                    i = k + 1
                    last = None
                    continue
                # flags: (?flags) or (?flags:
                j = i + 2
                flags_on, flags_off, neg = "", "", False
                while j < n and pat[j] not in ":)":
                    f = pat[j]
                    if f == "-":
                        if neg:
                            raise Re2Error("invalid or unsupported Perl syntax: `%s`" % pat[i:j + 1])
                        neg = True
                    elif f in "imsU":
                        if neg:
                            flags_off += f
                        else:
                            flags_on += f
                    else:
                        raise Re2Error("invalid or unsupported Perl syntax: `%s`" % pat[i:j + 1])
                    j += 1
                if j >= n:
                    raise Re2Error("missing closing ): `%s`" % pat[i:])
                if neg and not flags_off:
                    raise Re2Error("invalid or unsupported Perl syntax: `%s`" % pat[i:j + 1])
                ml = ml_stack[-1]
                if "m" in flags_on:
                    ml = True
                if "m" in flags_off:
                    ml = False
                on = flags_on.replace("U", "")
                off = flags_off.replace("U", "")
                fl = on + ("-" + off if off else "")
                if pat[j] == ")":
                    if not flags_on and not flags_off:
                        raise Re2Error("missing argument to repetition operator / empty flags: `(?)`")
                    ml_stack[-1] = ml
                    if fl:
                        out.append("(?" + fl + ")")
                    i = j + 1
                    last = None
                    continue
                out.append("(?" + fl + ":")
                ml_stack.append(ml)
                depth += 1
                i = j + 1
                last = None
                continue
            out.append("(")
            ml_stack.append(ml_stack[-1])
            depth += 1
            i += 1
            last = None
            continue
        if c == ")":
            if depth == 0:
                raise Re2Error("unexpected ): `%s`" % pat)
            depth -= 1
            ml_stack.pop()
            out.append(")")
            i += 1
            last = "atom"
            continue
        if c == "|":
            out.append("|")
            i += 1
            last = None
            continue
        if c in "*+?":
            need_atom(c)
            q = c
            i += 1
            if i < n and pat[i] == "?":
                q += "?"
                i += 1
            out.append(q)
            last = "quant"
            continue
        if c == "{":
            k = pat.find("}", i)
            body = pat[i + 1:k] if k > 0 else None
            ok = False
            if body is not None:
                lo, sep, hi = body.partition(",")
                if lo.isdigit() and (hi == "" or hi.isdigit()):
                    ok = True
            if ok:
                need_atom(pat[i:k + 1])
                for v in (lo, hi):
                    if v and int(v) > 1000:
                        raise Re2Error("invalid repeat count: `%s`" % pat[i:k + 1])
                if hi and int(hi) < int(lo):
                    raise Re2Error("invalid repeat count: `%s`" % pat[i:k + 1])
                q = pat[i:k + 1]
                i = k + 1
                if i < n and pat[i] == "?":
                    q += "?"
                    i += 1
                out.append(q)
                last = "quant"
                continue
            out.append("\\{")
            i += 1
            last = "atom"
            continue
        if c == "$":
            out.append("$" if ml_stack[-1] else "\\z")
            i += 1
            last = "atom"
            continue
        if c == "^":
            out.append("^")
            i += 1
            last = "atom"
            continue
        if c == ".":
            out.append(".")
            i += 1
            last = "atom"
            continue
        out.append(_lit_char(c))
        i += 1
        last = "atom"
    if depth:
        raise Re2Error("missing closing ): `%s`" % pat)
    return "".join(out)
