"""The subset of CEL that Anubis policies use, parsed and translated to .clf.

Grammar (CEL precedence; anything else is a CelError):

    expr    = or ;                      (no `? :`)
    or      = and { "||" and } ;
    and     = rel { "&&" rel } ;
    rel     = unary [ ("==" | "!=" | "<" | "<=" | ">" | ">=" | "in") unary ] ;
    unary   = "!" unary | "-" unary | member ;
    member  = primary { "." IDENT "(" [ args ] ")" | "[" expr "]" } ;
    primary = IDENT [ "(" [ args ] ")" ] | STRING | INT | "true" | "false" | "(" expr ")" ;

Translation (see translate_bot / translate_threshold). CEL's `&&`/`||` are
commutative over errors (`false && error` is false; `true && error` is an
error), and Anubis answers a request whose rule evaluates to an error
with an error page instead of the site; so every boolean is translated to
two .clf conditions, T (evaluates to true) and F (evaluates to false):
the rule matches on T, and the converter adds an `error:NAME` reject for
"neither" when an error is possible (an unguarded `headers["X"]`).
"""

import re


class CelError(Exception):
    pass


# ------------------------------------------------------------------ lexer

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>[rR]?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<num>\d+\.\d*|\d+[eE]|0[xX][0-9a-fA-F]+|\d+[uU]?)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[<>!()\[\].,?:+\-*/%{}])
""", re.X | re.S)


def _unescape(body, raw):
    if raw:
        return body
    out = []
    i = 0
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
              "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise CelError("string literal ends with a backslash")
        d = body[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif d in "xX" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4] or ""):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif d == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6] or ""):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif d == "U" and re.fullmatch(r"[0-9a-fA-F]{8}", body[i + 2:i + 10] or ""):
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        elif re.fullmatch(r"[0-3][0-7]{2}", body[i + 1:i + 4] or ""):
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            raise CelError("invalid escape sequence `\\%s` in a string literal" % d)
    return "".join(out)


def tokenize(src):
    toks = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise CelError("syntax error at %r" % src[pos:pos + 20])
        pos = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind == "ws":
            continue
        if kind == "str":
            raw = text[0] in "rR"
            t = text[1:] if raw else text
            q = 3 if t[:3] in ("'''", '"""') else 1
            toks.append(("str", _unescape(t[q:-q], raw)))
        elif kind == "num":
            if not text.isdigit():
                raise CelError("only decimal integers are supported, not %r" % text)
            if int(text) > 9223372036854775807:  # cel-go refuses it too
                raise CelError("integer literal %s is out of range (int64)" % text[:30])
            toks.append(("int", int(text)))
        elif kind == "id":
            if text in ("true", "false"):
                toks.append(("bool", text == "true"))
            elif text == "in":
                toks.append(("op", "in"))
            else:
                toks.append(("id", text))
        else:
            toks.append(("op", text))
    toks.append(("eof", None))
    return toks


# ----------------------------------------------------------------- parser

class _Parser:
    def __init__(self, src):
        self.toks = tokenize(src)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, op):
        t = self.next()
        if t != ("op", op):
            raise CelError("expected `%s`, found %s" % (op, _tokdesc(t)))

    def parse(self):
        e = self.expr()
        t = self.peek()
        if t[0] != "eof":
            raise CelError("unexpected %s" % _tokdesc(t))
        return e

    def expr(self):
        e = self.or_()
        if self.peek() == ("op", "?"):
            raise CelError("the conditional operator `? :` is not supported")
        return e

    def or_(self):
        e = self.and_()
        while self.peek() == ("op", "||"):
            self.next()
            e = ("or", e, self.and_())
        return e

    def and_(self):
        e = self.rel()
        while self.peek() == ("op", "&&"):
            self.next()
            e = ("and", e, self.rel())
        return e

    def rel(self):
        e = self.unary()
        t = self.peek()
        if t[0] == "op" and t[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
            self.next()
            r = self.unary()
            e = ("in", e, r) if t[1] == "in" else ("cmp", t[1], e, r)
            t2 = self.peek()
            if t2[0] == "op" and t2[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
                raise CelError("chained comparison with `%s` is not supported" % t2[1])
        elif t[0] == "op" and t[1] in ("+", "-", "*", "/", "%"):
            raise CelError("arithmetic (`%s`) is not supported" % t[1])
        return e

    def unary(self):
        t = self.peek()
        if t == ("op", "!"):
            self.next()
            return ("not", self.unary())
        if t == ("op", "-"):
            self.next()
            v = self.unary()
            if v[0] == "int":
                return ("int", -v[1])
            raise CelError("unary minus is supported on integer literals only")
        return self.member()

    def member(self):
        e = self.primary()
        while True:
            t = self.peek()
            if t == ("op", "."):
                self.next()
                name = self.next()
                if name[0] != "id":
                    raise CelError("expected a method name after `.`, found %s" % _tokdesc(name))
                if self.peek() != ("op", "("):
                    raise CelError("field selection `.%s` is not supported" % name[1])
                self.next()
                e = ("method", e, name[1], self.args())
            elif t == ("op", "["):
                self.next()
                k = self.expr()
                self.expect("]")
                e = ("index", e, k)
            else:
                return e

    def args(self):
        out = []
        if self.peek() == ("op", ")"):
            self.next()
            return out
        while True:
            out.append(self.expr())
            t = self.next()
            if t == ("op", ")"):
                return out
            if t != ("op", ","):
                raise CelError("expected `,` or `)` in arguments, found %s" % _tokdesc(t))

    def primary(self):
        t = self.next()
        if t[0] == "id":
            if self.peek() == ("op", "("):
                self.next()
                return ("call", t[1], self.args())
            return ("ident", t[1])
        if t[0] in ("str", "int", "bool"):
            return t
        if t == ("op", "("):
            e = self.expr()
            self.expect(")")
            return e
        if t in (("op", "["), ("op", "{")):
            raise CelError("list and map literals are not supported")
        raise CelError("unexpected %s" % _tokdesc(t))


def _tokdesc(t):
    if t[0] == "eof":
        return "end of expression"
    if t[0] == "str":
        return "string %r" % t[1]
    return "`%s`" % (t[1],)


def parse(src):
    return _Parser(src).parse()


# ------------------------------------------------------------ translation

def canonical_header(name):
    """Go's textproto.CanonicalMIMEHeaderKey, for names that are tokens."""
    token = re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", name)
    if not token:
        return name
    out, upper = [], True
    for ch in name:
        out.append(ch.upper() if upper else ch.lower())
        upper = ch == "-"
    return "".join(out)


class Bool:
    """t: .clf condition for "true"; f: for "false" (None: exactly `!t`, no
    error possible); facts: headers known present when t holds."""

    def __init__(self, t, f=None, facts=frozenset()):
        self.t = t
        self.f = f
        self.facts = facts

    @property
    def err(self):
        return self.f is not None

    def fcode(self):
        return self.f if self.f is not None else _not(self.t)


class Str:
    def __init__(self, code, defined=(), remote=False, const=None):
        self.code = code
        self.defined = list(defined)   # .clf conditions that must hold, else CEL error
        self.remote = remote           # remoteAddress
        self.const = const             # python str for literals


class Int:
    def __init__(self, code, const=None):
        self.code = code
        self.const = const


def _atomic(code):
    return re.fullmatch(r"[A-Za-z_][\w.]*(\(.*\))?|true|false|\(.*\)|-?\d+", code) is not None and \
        _balanced_single(code)


def _top_level(code):
    """The (index, character) pairs of generated .clf code that lie outside
    string literals and regexes, with the bracket depth before each."""
    depth = 0
    instr = inre = False
    i = 0
    while i < len(code):
        c = code[i]
        if instr:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                instr = False
        elif inre:
            if c == "\\":
                i += 2
                continue
            if c == "/":
                inre = False
        elif c == '"':
            instr = True
        elif c == "/" and i > 0 and code[i - 1] == "(":
            inre = True
        else:
            yield i, c, depth
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
        i += 1


def _balanced_single(code):
    if not code.startswith("("):
        # method chains like req.header("x").matches(/a/) are atomic if no top-level operator
        return not any(d == 0 and c in " &|!=<>" for _, c, d in _top_level(code))
    depth = 0
    for k, c in enumerate(code):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and k != len(code) - 1:
                return False
    return True


def _paren(code):
    return code if _atomic(code) else "(" + code + ")"


def _not(code):
    if code == "true":
        return "false"
    if code == "false":
        return "true"
    if code.startswith("!") and _atomic(code[1:]):
        return code[1:]
    return "!" + _paren(code)


def _and(a, b):
    if a == "false" or b == "false":
        return "false"
    if a == "true":
        return b
    if b == "true":
        return a
    return "%s && %s" % (_wrap_or(a), _wrap_or(b))


def _or(a, b):
    if a == "true" or b == "true":
        return "true"
    if a == "false":
        return b
    if b == "false":
        return a
    return "%s || %s" % (a, b)


def _wrap_or(code):
    # `||` binds looser than `&&`: parenthesize a top-level `||`
    if any(d == 0 and code.startswith("||", i) for i, _, d in _top_level(code)):
        return "(" + code + ")"
    return code


class Translator:
    """Translates one CEL expression. `env` is "bot" or "threshold".
    `regex` is a callback: (re2 pattern) -> .clf regex literal text or
    raises CelError. `notes` collects approximations for comments."""

    STR_VARS = {
        "userAgent": 'req.header("user-agent")',
        "path": "req.path",
        "method": "req.method",
        "host": 'req.header("host")',
    }

    def __init__(self, env, regex, string):
        self.env = env
        self.regex = regex
        self.string = string
        self.notes = []

    def bool(self, e, facts=frozenset()):
        k = e[0]
        if k == "bool":
            return Bool("true" if e[1] else "false")
        if k == "not":
            a = self.bool(e[1], facts)
            if not a.err:
                return Bool(_not(a.t))
            return Bool(a.f, a.t)
        if k == "and":
            a = self.bool(e[1], facts)
            b = self.bool(e[2], facts | a.facts if not a.err else facts)
            if not a.err and not b.err:
                return Bool(_and(a.t, b.t), None, a.facts | b.facts)
            return Bool(_and(a.t, b.t), _or(a.fcode(), b.fcode()), a.facts | b.facts)
        if k == "or":
            a = self.bool(e[1], facts)
            b = self.bool(e[2], facts)
            if not a.err and not b.err:
                return Bool(_or(a.t, b.t))
            return Bool(_or(a.t, b.t), _and(a.fcode(), b.fcode()))
        if k == "in":
            return self.in_(e[1], e[2])
        if k == "cmp":
            return self.cmp(e[1], e[2], e[3], facts)
        if k == "method":
            return self.method(e, facts)
        if k == "call":
            return self.call_bool(e)
        if k == "ident":
            raise CelError("`%s` is not a boolean" % e[1] if e[1] in self.STR_VARS or e[1] in
                           ("headers", "query", "remoteAddress", "weight") else self._unknown(e[1]))
        raise CelError("%s is not a boolean condition" % _desc(e))

    def _unknown(self, name):
        if name in ("load_1m", "load_5m", "load_15m"):
            return "`%s` (system load) cannot be evaluated by a .clf filter" % name
        if name == "contentLength":
            return "`contentLength` is not available to a .clf filter"
        if name == "weight" and self.env == "bot":
            return "`weight` is only defined in threshold expressions"
        return "unknown variable `%s`" % name

    def _guard(self, atom, defined):
        if not defined:
            return Bool(atom)
        d = "true"
        for c in defined:
            d = _and(d, c)
        return Bool(_and(d, atom), _and(d, _not(atom)))

    def in_(self, key, m):
        if m[0] != "ident" or m[1] not in ("headers", "query"):
            raise CelError("`in` is supported on `headers` and `query` only")
        if key[0] != "str":
            raise CelError("the key tested with `in %s` must be a string literal" % m[1])
        name = key[1]
        if self.env != "bot":
            raise CelError(self._unknown(m[1]))
        if m[1] == "headers":
            return self._has_header(name)
        return Bool(self._has_query(name))

    def _has_header(self, name):
        if canonical_header(name) != name or name == "":
            self.notes.append("%r is not a canonical header name (Go stores %r), so Anubis never finds it: false"
                              % (name, canonical_header(name)))
            return Bool("false")
        return Bool("req.has_header(%s)" % self.string(name), None, frozenset([name]))

    def _has_query(self, name):
        if not re.fullmatch(r"[A-Za-z0-9._~-]+", name):
            raise CelError("query parameter name %r: only names of letters, digits and `._~-` are supported" % name)
        self.notes.append("`%r in query` is read as the parameter name appearing unencoded in the query string" % name)
        return "req.query.matches(/(?:^|&)%s(?:[=&]|\\z)/)" % re.sub(r"([.~-])", r"\\\1", name)

    def str_(self, e, facts):
        k = e[0]
        if k == "str":
            return Str(self.string(e[1]), const=e[1])
        if k == "ident":
            if self.env == "bot" and e[1] in self.STR_VARS:
                return Str(self.STR_VARS[e[1]])
            if self.env == "bot" and e[1] == "remoteAddress":
                return Str("req.client_ip", remote=True)
            raise CelError(self._unknown(e[1]))
        if k == "index":
            m, key = e[1], e[2]
            if m[0] != "ident" or m[1] not in ("headers", "query") or self.env != "bot":
                raise CelError("indexing is supported on `headers` and `query` only")
            if key[0] != "str":
                raise CelError("the key of `%s[...]` must be a string literal" % m[1])
            name = key[1]
            if m[1] == "headers":
                if canonical_header(name) != name or name == "":
                    self.notes.append("headers[%r]: not a canonical header name, Anubis never finds it (error)" % name)
                    return Str('""', defined=["false"])
                code = "req.header(%s)" % self.string(name)
                return Str(code, defined=[] if name in facts else ["req.has_header(%s)" % self.string(name)])
            has = self._has_query(name)
            self.notes.append("query[%r] is the first value of the parameter (Anubis joins repeated values with `,`)"
                              % name)
            return Str("req.query_param(%s)" % self.string(name), defined=[has])
        raise CelError("%s is not a string" % _desc(e))

    def int_(self, e):
        if e[0] == "int":
            return Int(str(e[1]), e[1])
        if e[0] == "ident" and e[1] == "weight" and self.env == "threshold":
            return Int("weight")
        if e[0] == "call" and e[1] == "randInt" and self.env == "bot":
            a = e[2]
            if len(a) == 1 and a[0][0] == "int" and a[0][1] == 1:
                self.notes.append("randInt(1) is always 0")
                return Int("0", 0)
            raise CelError("randInt() is random; only randInt(1) (always 0) is supported")
        if e[0] == "ident":
            raise CelError(self._unknown(e[1]))
        raise CelError("%s is not an integer" % _desc(e))

    def _kind(self, e):
        if e[0] == "int" or (e[0] == "ident" and e[1] == "weight") or (e[0] == "call" and e[1] == "randInt"):
            return "int"
        if e[0] == "ident" and e[1] in ("weight", "contentLength"):
            return "int"
        return "str"

    def cmp(self, op, l, r, facts):
        if self._kind(l) == "int" or self._kind(r) == "int":
            a, b = self.int_(l), self.int_(r)
            if a.const is not None and b.const is not None:
                v = eval("%d %s %d" % (a.const, op, b.const))
                return Bool("true" if v else "false")
            return Bool("%s %s %s" % (a.code, op, b.code))
        if op not in ("==", "!="):
            raise CelError("`%s` on strings is not supported" % op)
        a, b = self.str_(l, facts), self.str_(r, facts)
        if a.remote or b.remote:
            other = b if a.remote else a
            if (a.remote and b.remote) or other.const is None:
                raise CelError("remoteAddress can only be compared with a string literal")
            ip = _ip_literal(other.const)
            if ip is None:
                self.notes.append("%r is not an IP address: remoteAddress never equals it" % other.const)
                return Bool("false" if op == "==" else "true")
            return Bool("req.client_ip %s %s" % (op, ip))
        if a.const is not None and b.const is not None:
            v = (a.const == b.const) == (op == "==")
            return Bool("true" if v else "false")
        return self._guard("%s %s %s" % (a.code, op, b.code), a.defined + b.defined)

    def method(self, e, facts):
        _, recv, name, args = e
        if name == "contains" or name == "startsWith" or name == "endsWith" or name == "matches":
            if len(args) != 1:
                raise CelError("%s() takes one argument" % name)
            s = self.str_(recv, facts)
            if s.remote:
                raise CelError("remoteAddress.%s() is not supported (compare it with == instead)" % name)
            if args[0][0] != "str":
                raise CelError("the argument of %s() must be a string literal" % name)
            lit = args[0][1]
            if name == "matches":
                if lit.strip() == "" and lit == "":
                    return self._guard("true", s.defined)
                atom = "%s.matches(%s)" % (s.code, self.regex(lit))
            else:
                clf = {"contains": "contains", "startsWith": "starts_with", "endsWith": "ends_with"}[name]
                atom = "%s.%s(%s)" % (s.code, clf, self.string(lit))
            if s.const is not None:
                raise CelError("method calls on string literals are not supported")
            return self._guard(atom, s.defined)
        raise CelError("method `.%s()` is not supported" % name)

    def call_bool(self, e):
        name, args = e[1], e[2]
        if name == "verifyFCrDNS" and self.env == "bot":
            if not args or args[0] != ("ident", "remoteAddress") or len(args) > 2 or \
                    (len(args) == 2 and args[1][0] != "str"):
                raise CelError("verifyFCrDNS() is supported as verifyFCrDNS(remoteAddress[, \"regex\"]) only")
            if len(args) == 2:
                self.regex(args[1][1])   # still refuse a bad regex
            self.notes.append("verifyFCrDNS() needs DNS lookups, which a .clf filter cannot make: "
                              "treated as false (the client is not verified)")
            return Bool("false")
        if name in ("lookupHost", "reverseDNS", "arpaReverseIP", "segments", "regexSafe"):
            raise CelError("%s() is not supported (it needs DNS or values .clf does not have)" % name)
        raise CelError("function `%s()` is not supported" % name)


def _ip_literal(text):
    import ipaddress
    try:
        a = ipaddress.ip_address(text)
    except ValueError:
        return None
    if a.version == 4:
        return str(a)
    return a.compressed


def _desc(e):
    if e[0] in ("str", "int", "bool"):
        return "literal %r" % (e[1],)
    if e[0] == "ident":
        return "`%s`" % e[1]
    if e[0] == "method":
        return "`.%s()`" % e[2]
    if e[0] == "call":
        return "`%s()`" % e[1]
    return "this %s expression" % e[0]


def translate_bot(src, regex, string):
    """-> (Bool, notes) for a bot rule's expression source."""
    tr = Translator("bot", regex, string)
    b = tr.bool(parse(src))
    return b, tr.notes


def translate_threshold(src, string):
    def no_regex(_):
        raise CelError("regexes are not available in threshold expressions")
    tr = Translator("threshold", no_regex, string)
    b = tr.bool(parse(src))
    return b, tr.notes
