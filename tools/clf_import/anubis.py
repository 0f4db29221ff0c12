"""Anubis bot policies (botPolicies.yaml / .json) -> .clf.

    convert(policy_path, data_dir=None) -> str    (the whole .clf file)

The semantics follow Anubis' lib/config (loading and validation) and
lib/anubis.go `check` (evaluation):

- `bots:` entries are rules or `import:` statements (never both); imports
  are expanded in place, recursively; `(data)/...` is read from the data
  directory, other paths from the current directory (then the policy's
  directory); glob patterns (`*`, `**`, `?`, `[...]`, `{a,b}`) take their
  matches in natural order;
- a rule matches when all of its checks match: remote_addresses (an IP
  set on req.client_ip), user_agent_regex, path_regex, every entry of
  headers_regex (`.*` alone: the header is non-empty), expression (CEL);
- rules run in order: the first matching ALLOW, DENY, CHALLENGE (or
  DEBUG_BENCHMARK) decides; WEIGH adds `weight.adjust` (default 5);
- then the thresholds, in order, judge the weight (none given: Anubis'
  default `weight > 0` -> CHALLENGE); no threshold matches: allow;
- rules with `geoip` or `asns` need Anubis' Thoth service; without it
  Anubis skips them with a warning, and so does the converter (a comment).

Verdicts: ALLOW -> accept "NAME", DENY -> reject "NAME", CHALLENGE ->
reject "challenge:NAME", DEBUG_BENCHMARK -> reject "benchmark:NAME";
thresholds: accept "threshold:NAME", reject "threshold:NAME", reject
"challenge:threshold:NAME"; a CEL error (Anubis answers with an error
page) -> reject "error:NAME"; nothing decides -> accept "default/allow".
See docs/importers.md.
"""

import ipaddress
import json
import os
import re
import shutil
import subprocess
import tempfile

import yaml

from . import clf_string, comment_text
from . import read_bounded
from .anubis_cel import CelError, translate_bot, translate_threshold, canonical_header
from .anubis_re2 import Re2Error, translate as re2_translate


class ConvertError(Exception):
    """`FILE[:LINE]: rule 'NAME': problem` (str); .path, .line, .msg too."""

    def __init__(self, msg, path=None, line=None):
        self.msg = msg
        self.path = path
        self.line = line
        loc = "%s:%d" % (path, line) if (path and line) else (path or "")
        super().__init__("%s: %s" % (loc, msg) if loc else msg)


# ------------------------------------------------------------------ loading

class LDict(dict):
    line = None


class LList(list):
    line = None


class _Loader(yaml.SafeLoader):
    pass


def _map(loader, node):
    loader.flatten_mapping(node)
    d = LDict(loader.construct_pairs(node, deep=True))
    d.line = node.start_mark.line + 1
    return d


def _seq(loader, node):
    lst = LList(loader.construct_sequence(node, deep=True))
    lst.line = node.start_mark.line + 1
    return lst


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _map)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _seq)


def _load_text(text, path):
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        try:
            return json.loads(text)
        except ValueError:
            pass
        mark = getattr(e, "problem_mark", None)
        raise ConvertError("can't parse policy config: %s" % (getattr(e, "problem", None) or e),
                           path, mark.line + 1 if mark else None)


def _read(path):
    try:
        return read_bounded(path).decode("utf-8", "surrogateescape")
    except OSError as e:
        raise ConvertError("can't read: %s" % (e.strerror or e), path)
    except ValueError as e:
        raise ConvertError("can't read: %s" % e, path)


# Go's encoding/json matches object keys case-insensitively.
def _get(d, key, default=None):
    if key in d:
        return d[key]
    for k in d:
        if isinstance(k, str) and k.lower() == key.lower():
            return d[k]
    return default


def _has(d, key):
    return any(isinstance(k, str) and k.lower() == key.lower() for k in d)


_BOT_KEYS = ("name", "user_agent_regex", "path_regex", "headers_regex", "expression", "challenge",
             "weight", "geoip", "asns", "action", "remote_addresses")
_ACTIONS = ("ALLOW", "DENY", "CHALLENGE", "WEIGH", "DEBUG_BENCHMARK")


class Rule:
    def __init__(self, src, line, index_in_file):
        self.src = src          # display path of the file
        self.line = line
        self.idx = index_in_file
        self.name = ""
        self.action = ""
        self.ua = None
        self.path = None
        self.headers = []       # (name, regex)
        self.addrs = []
        self.expr = None        # CEL source (ExpressionOrList.String())
        self.weight = None
        self.skip = None        # reason (geoip/asns)


class Threshold:
    def __init__(self, name, expr, action, line):
        self.name, self.expr, self.action, self.line = name, expr, action, line


def _natural_key(s):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p != ""]


def _glob_regex(pat):
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            k = pat.find("]", i + 1)
            if k < 0:
                raise ValueError("unterminated [")
            body = pat[i + 1:k]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = k + 1
        elif c == "{":
            k = pat.find("}", i + 1)
            if k < 0:
                raise ValueError("unterminated {")
            out.append("(?:" + "|".join(re.escape(a) for a in pat[i + 1:k].split(",")) + ")")
            i = k + 1
        elif c == "\\" and i + 1 < len(pat):
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z", re.S)


class _Ctx:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.stack = []


def _display(real, ctx):
    if ctx.data_dir:
        dd = os.path.abspath(ctx.data_dir)
        ap = os.path.abspath(real)
        if ap.startswith(dd + os.sep):
            return "(data)/" + os.path.relpath(ap, dd)
    return real


def _resolve_import(imp, ctx, where, line, policy_dir):
    """-> list of real paths."""
    def err(msg):
        raise ConvertError("import %r: %s" % (imp, msg), where, line)
    is_glob = any(c in imp for c in "*?[{")
    if imp.startswith("(data)/"):
        if not ctx.data_dir:
            err("no data directory: give one (--data-dir), or place the policy beside Anubis' data/")
        rel = imp[len("(data)/"):]
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            err("invalid path inside (data)")
        roots = [ctx.data_dir]
    else:
        if os.path.isabs(imp):
            roots, rel = [""], imp
        else:
            roots, rel = [os.getcwd(), policy_dir], imp
    if not is_glob:
        for root in roots:
            p = os.path.join(root, rel) if root else rel
            if os.path.isfile(p):
                return [p]
        err("config.ImportStatement: invalid source file: no such file" +
            ("" if imp.startswith("(data)/") else " (looked in %s)" % ", ".join(sorted(set(roots)))))
    try:
        rx = _glob_regex(rel)
    except (ValueError, re.error) as e:
        err("invalid glob pattern: %s" % e)
    for root in roots:
        base = root or "/"
        matches = []
        for dp, dns, fns in os.walk(base):
            dns.sort()
            for fn in fns:
                full = os.path.join(dp, fn)
                r = os.path.relpath(full, base) if root else full
                if rx.match(r):
                    matches.append((r, full))
        if matches:
            matches.sort(key=lambda m: _natural_key(m[0]))
            return [m[1] for m in matches]
    err("config.ImportStatement: invalid source file: the pattern matches no file")


def _check_regex(rule, field, value):
    if not isinstance(value, str):
        raise ConvertError("rule %r: %s must be a string" % (rule.name, field), rule.src, rule.line)
    if value.endswith("\n"):
        raise ConvertError("rule %r: %s ends with a newline (Anubis refuses it: "
                           "try >- instead of > in YAML): %r" % (rule.name, field, value), rule.src, rule.line)
    try:
        return re2_translate(value.strip())
    except Re2Error as e:
        raise ConvertError("rule %r: invalid %s %r: %s" % (rule.name, field, value, e), rule.src, rule.line)


def _expr_source(rule_or_name, e, where, line):
    """ExpressionOrList -> the CEL source Anubis compiles (String())."""
    name = rule_or_name

    def bad(msg):
        raise ConvertError("%s: expression %s" % (name, msg), where, line)
    if isinstance(e, str):
        if e == "":
            bad("is empty (config: this expression is empty)")
        return e
    if isinstance(e, dict):
        al, an = _get(e, "all") or [], _get(e, "any") or []
        for lst in (al, an):
            if not isinstance(lst, list) or not all(isinstance(x, str) for x in lst):
                bad("all/any must be lists of strings")
        if al and an:
            bad("block can't contain multiple expression types (both all and any)")
        if not al and not an:
            bad("is empty (config: this expression is empty)")
        joiner = " && " if al else " || "
        return joiner.join("( %s )" % p for p in (al or an))
    bad("must be a string or an object")


def _parse_challenge(ch, what, where, line):
    if ch is None:
        return
    if not isinstance(ch, dict):
        raise ConvertError("%s: challenge must be an object" % what, where, line)
    alg = _get(ch, "algorithm", "")
    diff = _get(ch, "difficulty", 0)
    if not isinstance(diff, int) or isinstance(diff, bool):
        raise ConvertError("%s: challenge difficulty must be an integer" % what, where, line)
    if alg == "" or alg is None:
        raise ConvertError("%s: challenge must have algorithm name set" % what, where, line)
    if diff < 0 or diff > 64:
        raise ConvertError("%s: challenge difficulty %d is out of range (0 to 64)" % (what, diff), where, line)


def _parse_bot(d, where, idx):
    line = getattr(d, "line", None)
    r = Rule(where, line, idx)
    name = _get(d, "name", "")
    if not isinstance(name, str):
        raise ConvertError("bot %d: name must be a string" % idx, where, line)
    r.name = name
    label = "rule %r" % name if name else "bot %d" % idx
    if name == "":
        raise ConvertError("bot %d: must set name" % idx, where, line)
    action = _get(d, "action", "")
    if action not in _ACTIONS:
        raise ConvertError("%s: unknown action %r (ALLOW, DENY, CHALLENGE, WEIGH or DEBUG_BENCHMARK)"
                           % (label, action), where, line)
    r.action = action
    ua, path = _get(d, "user_agent_regex"), _get(d, "path_regex")
    hdrs, addrs = _get(d, "headers_regex"), _get(d, "remote_addresses")
    expr, geoip, asns = _get(d, "expression"), _get(d, "geoip"), _get(d, "asns")
    empty = ua is None and path is None and not addrs and not hdrs and asns is None and geoip is None
    if empty and expr is None:
        raise ConvertError("%s: must set one of user_agent_regex, path_regex, headers_regex, remote_addresses, "
                           "expression, asns, or geoip" % label, where, line)
    if ua is not None and path is not None:
        raise ConvertError("%s: must set either user_agent_regex or path_regex, not both" % label, where, line)
    if ua is not None:
        r.ua = _check_regex(r, "user_agent_regex", ua)
    if path is not None:
        r.path = _check_regex(r, "path_regex", path)
    if hdrs:
        if not isinstance(hdrs, dict):
            raise ConvertError("%s: headers_regex must map header names to regexes" % label, where, line)
        for hname, hre in hdrs.items():
            if not isinstance(hname, str) or not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", hname.strip()):
                raise ConvertError("%s: headers_regex: %r is not a header name" % (label, hname), where, line)
            if not isinstance(hre, str):
                raise ConvertError("%s: headers_regex %s must be a string" % (label, hname), where, line)
            if hre == ".*":
                r.headers.append((hname.strip(), None))
            else:
                r.headers.append((hname.strip(), _check_regex(r, "headers_regex %s" % hname, hre)))
    if addrs:
        if not isinstance(addrs, list):
            raise ConvertError("%s: remote_addresses must be a list of CIDRs" % label, where, line)
        for a in addrs:
            if not isinstance(a, str) or "/" not in a:
                raise ConvertError("%s: invalid CIDR %r in remote_addresses" % (label, a), where, line)
            try:
                net = ipaddress.ip_network(a, strict=False)
                ipaddress.ip_address(a.split("/")[0])
            except ValueError as e:
                raise ConvertError("%s: invalid CIDR %r in remote_addresses: %s" % (label, a, e), where, line)
            r.addrs.append(net)
    if expr is not None:
        r.expr = _expr_source(label, expr, where, line)
    ch = _get(d, "challenge")
    if action == "CHALLENGE" and ch is not None:
        _parse_challenge(ch, label, where, line)
    w = _get(d, "weight")
    if w is not None:
        if not isinstance(w, dict):
            raise ConvertError("%s: weight must be an object {adjust: N}" % label, where, line)
        adj = _get(w, "adjust", 0)
        if not isinstance(adj, int) or isinstance(adj, bool):
            raise ConvertError("%s: weight.adjust must be an integer" % label, where, line)
        r.weight = adj
    elif action == "WEIGH":
        r.weight = 5
    if asns is not None or geoip is not None:
        r.skip = "uses %s, which needs Anubis' Thoth service; Anubis skips the rule when no Thoth client is " \
                 "configured, and so does this conversion" % ("asns" if asns is not None else "geoip")
    return r


def _expand(entries, where, ctx, policy_dir, out):
    """Append the rules of a bots list (expanding imports) to `out`."""
    if not isinstance(entries, list):
        raise ConvertError("bots must be a list", where, getattr(entries, "line", None))
    for i, e in enumerate(entries):
        line = getattr(e, "line", None)
        if not isinstance(e, dict):
            raise ConvertError("bot %d: must be an object (a rule or an import)" % i, where, line)
        is_bot = any(_has(e, k) for k in _BOT_KEYS)
        is_imp = _has(e, "import")
        if is_bot and is_imp:
            nm = _get(e, "name")
            raise ConvertError("%sbot %d: can't set bot rules and import values at the same time"
                               % ("rule %r: " % nm if isinstance(nm, str) and nm else "", i), where, line)
        if is_imp:
            imp = _get(e, "import")
            if not isinstance(imp, str):
                raise ConvertError("bot %d: import must be a string" % i, where, line)
            for real in _resolve_import(imp, ctx, where, line, policy_dir):
                key = os.path.realpath(real)
                if key in ctx.stack:
                    raise ConvertError("import %r: import cycle through %s" % (imp, real), where, line)
                disp = _display(real, ctx)
                doc = _load_text(_read(real), disp)
                if doc is None:
                    doc = []
                ctx.stack.append(key)
                _expand(doc, disp, ctx, policy_dir, out)
                ctx.stack.pop()
            continue
        if not is_bot:
            raise ConvertError("bot %d: you must set either bot rules or an import statement" % i, where, line)
        out.append(_parse_bot(e, where, i))


DEFAULT_THRESHOLDS = [Threshold("legacy-anubis-behaviour", "weight > 0", "CHALLENGE", None)]


def _parse_thresholds(lst, where):
    if lst is None or (isinstance(lst, list) and len(lst) == 0):
        return DEFAULT_THRESHOLDS, True
    if not isinstance(lst, list):
        raise ConvertError("thresholds must be a list", where, getattr(lst, "line", None))
    out = []
    for i, t in enumerate(lst):
        line = getattr(t, "line", None)
        if not isinstance(t, dict):
            raise ConvertError("threshold %d: must be an object" % i, where, line)
        name = _get(t, "name", "")
        label = "threshold %r" % name if name else "threshold %d" % i
        if not isinstance(name, str) or name == "":
            raise ConvertError("threshold %d: must set name" % i, where, line)
        expr = _get(t, "expression")
        if expr is None:
            raise ConvertError("%s: must set expression" % label, where, line)
        src = _expr_source(label, expr, where, line)
        action = _get(t, "action", "")
        if action not in _ACTIONS:
            raise ConvertError("%s: unknown action %r" % (label, action), where, line)
        if action == "WEIGH":
            raise ConvertError("%s: a threshold cannot have the WEIGH action" % label, where, line)
        ch = _get(t, "challenge")
        if action == "CHALLENGE" and ch is None:
            raise ConvertError("%s: a threshold with the CHALLENGE action must have challenge set" % label,
                               where, line)
        _parse_challenge(ch, label, where, line)
        out.append(Threshold(name, src, action, line))
    return out, False


def default_data_dir(policy_path):
    """`data/` beside the policy; else the policy's own directory if it is
    Anubis' data directory (has bots/ and meta/); else the nearest
    ancestor's data/ that has bots/."""
    d = os.path.dirname(os.path.abspath(policy_path))
    if os.path.isdir(os.path.join(d, "data")):
        return os.path.join(d, "data")
    if os.path.isdir(os.path.join(d, "bots")) and os.path.isdir(os.path.join(d, "meta")):
        return d
    cur = d
    while True:
        cand = os.path.join(cur, "data")
        if os.path.isdir(os.path.join(cand, "bots")):
            return cand
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


# ------------------------------------------------------------------ emitting

def _regex_lit(body):
    return "/" + body + "/"


def _const_name(name, suffix, used):
    base = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "RULE"
    if base[0].isdigit():
        base = "R_" + base
    cand = "%s_%s" % (base, suffix)
    k = 2
    while cand in used:
        cand = "%s_%s_%d" % (base, suffix, k)
        k += 1
    used.add(cand)
    return cand


def _ip_set(nets):
    return "[" + ", ".join(str(n) for n in nets) + "]"


def _verdict(action, name, threshold=False):
    reason = ("threshold:" if threshold else "") + name
    if action == "ALLOW":
        return "accept %s" % clf_string(reason)
    if action == "DENY":
        return "reject %s" % clf_string(reason)
    if action == "CHALLENGE":
        return "reject %s" % clf_string("challenge:" + reason)
    return "reject %s" % clf_string("benchmark:" + reason)


def convert(policy_path, data_dir=None, check=True):
    """The .clf source for the Anubis policy at `policy_path`. `data_dir`:
    the directory `(data)/...` imports refer to (default: see
    default_data_dir). With `check` (default), the result is compiled with
    classifyc --check when classifyc can be found ($CLASSIFYC, the build
    tree, $PATH), so that a regex Hyperscan refuses is reported here,
    naming its rule. Raises ConvertError."""
    where = policy_path
    ctx = _Ctx(data_dir if data_dir is not None else default_data_dir(policy_path))
    if data_dir is not None and not os.path.isdir(data_dir):
        raise ConvertError("data directory %r does not exist" % data_dir, policy_path)
    doc = _load_text(_read(policy_path), where)
    if not isinstance(doc, dict):
        raise ConvertError("can't parse policy config: the top level must be an object", where)
    bots = _get(doc, "bots")
    if not bots:
        raise ConvertError("config: must define at least one (1) bot rule", where)
    rules = []
    ctx.stack.append(os.path.realpath(policy_path))
    _expand(bots, where, ctx, os.path.dirname(os.path.abspath(policy_path)), rules)
    thresholds, defaulted = _parse_thresholds(_get(doc, "thresholds"), where)
    if not rules:
        raise ConvertError("config: must define at least one (1) bot rule (the imports hold none)", where)
    text, linemap = _emit(policy_path, ctx, rules, thresholds, defaulted)
    if check:
        _classifyc_check(text, linemap, policy_path)
    return text


def _emit(policy_path, ctx, rules, thresholds, defaulted):
    L = []          # output lines
    linemap = []    # (first_line, last_line, rule) for error mapping
    consts = []
    body = []
    used = set()
    has_weigh = any(r.action == "WEIGH" and not r.skip for r in rules)
    skipped = [r for r in rules if r.skip]

    def string(s):
        return clf_string(s)

    for n, r in enumerate(rules, 1):
        loc = "%s:%s" % (r.src, r.line) if r.line else r.src
        head = "// #%d %s: rule %s, %s" % (n, comment_text(loc), comment_text(r.name), r.action)
        if r.action == "WEIGH":
            head += " %+d" % r.weight
        if r.skip:
            body.append((r, [head, "// skipped: rule " + comment_text(r.name) + " " + r.skip]))
            continue
        conds = []
        comments = []
        if r.addrs:
            cn = _const_name(r.name, "ADDRS", used)
            consts.append((r, "const %s = %s   // %d prefixes, rule %s" % (cn, _ip_set(r.addrs), len(r.addrs),
                                                                            comment_text(r.name))))
            conds.append("req.client_ip in %s" % cn)

        def rx(body_):
            lit = _regex_lit(body_)
            if len(lit) > 100:
                cn = _const_name(r.name, "RE", used)
                consts.append((r, "const %s = %s" % (cn, lit)))
                return cn
            return lit
        if r.ua is not None:
            conds.append('req.header("user-agent").matches(%s)' % rx(r.ua) if r.ua else "true")
        if r.path is not None:
            conds.append("req.path.matches(%s)" % rx(r.path) if r.path else "true")
        for hname, hre in r.headers:
            if hre is None:
                conds.append("req.header(%s) != \"\"" % string(hname))
            elif hre == "":
                conds.append("true")
            else:
                conds.append("req.header(%s).matches(%s)" % (string(hname), rx(hre)))
        cel = None
        if r.expr is not None:
            def cel_regex(pat):
                try:
                    b = re2_translate(pat)
                except Re2Error as e:
                    raise CelError("invalid regex %r in matches(): %s" % (pat, e))
                return rx(b) if b else "/(?:)/"
            try:
                cel, notes = translate_bot(r.expr, cel_regex, string)
            except CelError as e:
                raise ConvertError("rule %r: expression %r: %s" % (r.name, r.expr, e), r.src, r.line)
            comments.append("// expression: " + comment_text(r.expr))
            for note in notes:
                comments.append("// note: " + comment_text(note))
            static_conds = [c for c in conds if c != "true"]
            conds.append(cel.t)
        conds = [c for c in conds if c != "true"]
        if "false" in conds:
            cond = "false"
            comments.append("// this rule can never match")
        else:
            cond = (" && ".join(_wrap(c) for c in conds) if len(conds) > 1 else conds[0]) if conds else "true"
        if r.action == "WEIGH":
            act = "weight += %d" % r.weight if r.weight >= 0 else "weight -= %d" % -r.weight
        else:
            act = _verdict(r.action, r.name)
        lines = [head] + comments
        lines.append("if %s {" % cond)
        lines.append("    " + act)
        if cel is not None and cel.err:
            static = static_conds
            econd = " && ".join(_wrap(c) for c in static + [_neg(cel.fcode())]) if static else _neg(cel.fcode())
            lines.append("} else if %s {" % econd)
            lines.append("    // the expression is an error here (a missing key): Anubis answers with an error page")
            lines.append("    reject %s" % string("error:" + r.name))
        lines.append("}")
        body.append((r, lines))

    # header
    L.append("// Converted by clf-import anubis from %s" % comment_text(policy_path))
    if ctx.data_dir:
        L.append("// (data)/ is %s" % comment_text(os.path.abspath(ctx.data_dir)))
    L.append("// Anubis semantics: the rules run in order; the first matching ALLOW, DENY or CHALLENGE")
    L.append("// decides; WEIGH rules add to the weight; then the thresholds judge the weight, in order;")
    L.append("// when nothing decides, the request is allowed. Reasons are the rule names; CHALLENGE")
    L.append("// rejects with \"challenge:NAME\", thresholds with \"threshold:NAME\".")
    L.append("// %d rules (%d skipped: geoip/asns need Thoth), %d thresholds%s." %
             (len(rules), len(skipped), len(thresholds), " (Anubis' default)" if defaulted else ""))
    L.append("")
    for r, c in consts:
        start = len(L) + 1
        L.append(c)
        linemap.append((start, start, r))
    if consts:
        L.append("")
    L.append("filter main(req: Request) {")
    uses_weight = has_weigh or any("weight" in t.expr for t in thresholds)
    if uses_weight:
        L.append("    let %sweight = 0" % ("mut " if has_weigh else ""))
    for r, lines in body:
        L.append("")
        start = len(L) + 1
        L.extend("    " + x for x in lines)
        linemap.append((start, len(L), r))
    L.append("")
    L.append("    // thresholds%s" % (": none given, so Anubis' default" if defaulted else ""))
    for t in thresholds:
        try:
            b, notes = translate_threshold(t.expr, clf_string)
        except CelError as e:
            raise ConvertError("threshold %r: expression %r: %s" % (t.name, t.expr, e), policy_path, t.line)
        loc = "%s:%s" % (policy_path, t.line) if t.line else "Anubis' default thresholds"
        L.append("    // %s: threshold %s: %s" % (comment_text(loc), comment_text(t.name), comment_text(t.expr)))
        L.append("    if %s { %s }" % (b.t, _verdict(t.action, t.name, threshold=True)))
    L.append("    accept \"default/allow\"")
    L.append("}")
    return "\n".join(L) + "\n", linemap


def _wrap(c):
    from .anubis_cel import _wrap_or
    return _wrap_or(c)


def _neg(c):
    from .anubis_cel import _not
    return _not(c)


# ------------------------------------------------------------------ checking

def find_classifyc():
    c = os.environ.get("CLASSIFYC")
    if c and os.access(c, os.X_OK):
        return c
    here = os.path.dirname(os.path.abspath(__file__))
    cand = os.path.join(here, "..", "..", "build", "cli", "classifyc")
    if os.access(cand, os.X_OK):
        return os.path.normpath(cand)
    return shutil.which("classifyc")


_ERR = re.compile(r"^[^\n]*?:(\d+):(\d+): error: (.*)$", re.M)


def _classifyc_check(text, linemap, policy_path):
    exe = find_classifyc()
    if not exe:
        return
    with tempfile.TemporaryDirectory(prefix="clf-anubis-") as d:
        p = os.path.join(d, "policy.clf")
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        try:
            res = subprocess.run([exe, "--check", p], capture_output=True, text=True, errors="replace",
                                 timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return
    if res.returncode == 0:
        return
    m = _ERR.search(res.stderr)
    if not m:
        raise ConvertError("classifyc refuses the converted policy: %s" % res.stderr.strip()[:500], policy_path)
    ln, msg = int(m.group(1)), m.group(3)
    for a, b, r in linemap:
        if a <= ln <= b:
            raise ConvertError("rule %r: %s" % (r.name, msg), r.src, r.line)
    raise ConvertError("classifyc refuses the converted policy (line %d): %s" % (ln, msg), policy_path)
