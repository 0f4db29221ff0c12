"""Shared helpers for the tests/realdata/*.py TAP tests (python3 stdlib only).

Every test script is called as

    python3 test_X.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

and prints TAP version 12 (plan line first, then `ok N - name` /
`not ok N - name` / `ok N - name # SKIP reason`, diagnostics as `# ...`).
If CORPORA_DIR does not exist it prints `1..0 # SKIP corpora not found at
PATH` and exits 0.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
sys.dont_write_bytecode = True
from clfgen import clf_string_bytes  # noqa: E402

# ---------------------------------------------------------------- arguments


class Args:
    def __init__(self, argv):
        if len(argv) != 5:
            sys.stderr.write("usage: %s CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR\n" % argv[0])
            sys.exit(2)
        self.classifyc = os.path.abspath(argv[1])
        self.classify_run = os.path.abspath(argv[2])
        self.root = os.path.abspath(argv[3])
        self.corpora = os.path.abspath(argv[4]) if argv[4] else ""

    def corpus(self, *parts):
        return os.path.join(self.corpora, *parts)


def parse_args_or_skip(argv=None):
    """Parse argv; print the whole-file SKIP plan and exit 0 if the corpora are missing."""
    args = Args(sys.argv if argv is None else argv)
    if not args.corpora or not os.path.isdir(args.corpora):
        print("1..0 # SKIP corpora not found at %s" % (args.corpora or "(empty path)"))
        sys.stdout.flush()
        sys.exit(0)
    return args


# ---------------------------------------------------------------------- TAP


class Tap:
    """Collects results, then prints the plan first and all lines (TAP 12)."""

    def __init__(self):
        self.lines = []
        self.n = 0
        self.failed = 0

    @staticmethod
    def _clean(name):
        # a TAP description must be one line and must not contain '#'
        return re.sub(r"\s+", " ", name).replace("#", "\\x23").strip()

    def ok(self, cond, name, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        self.lines.append("%s %d - %s" % ("ok" if cond else "not ok", self.n, self._clean(name)))
        if diag and not cond:
            self.diag(diag)
        return cond

    def todo(self, cond, name, reason, diag=None):
        """A known bug: `not ok ... # TODO reason` does not fail the run; an
        unexpected pass (`ok ... # TODO`) tells the maintainer to update it."""
        self.n += 1
        self.lines.append("%s %d - %s # TODO %s" % ("ok" if cond else "not ok", self.n,
                                                     self._clean(name), self._clean(reason)))
        if diag and not cond:
            self.diag(diag)

    def skip(self, name, reason):
        self.n += 1
        self.lines.append("ok %d - %s # SKIP %s" % (self.n, self._clean(name), self._clean(reason)))

    def diag(self, text):
        for line in str(text).splitlines() or [""]:
            self.lines.append("# " + line)

    def finish(self):
        out = sys.stdout
        out.write("1..%d\n" % self.n)
        for line in self.lines:
            out.write(line + "\n")
        out.flush()
        # the TAP lines carry the verdict; exit status mirrors it for direct use
        sys.exit(1 if self.failed else 0)


# ----------------------------------------------------------- the binaries

AI = "ai-robots-txt"


def child_env():
    env = dict(os.environ)
    env.pop("CLASSIFY_PATH", None)   # only the -I we pass decides what is imported
    return env


def run(cmd, timeout=240, stdin=None):
    try:
        p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=child_env())
    except FileNotFoundError as e:
        return 127, b"", str(e).encode()
    except subprocess.TimeoutExpired:
        return 124, b"", ("timeout after %ds" % timeout).encode()
    return p.returncode, p.stdout, p.stderr


def compile_main(args, tmpdir):
    """classifyc -I ROOT/stdlib ROOT/examples/main.clf -o TMP/rules.bin.

    Returns (path or None, diagnostic text)."""
    out = os.path.join(tmpdir, "rules.bin")
    cmd = [args.classifyc, "-I", os.path.join(args.root, "stdlib"),
           os.path.join(args.root, "examples", "main.clf"), "-o", out]
    rc, so, se = run(cmd)
    diag = "$ %s\nexit %d\n%s%s" % (" ".join(cmd), rc, so.decode("utf-8", "replace"),
                                     se.decode("utf-8", "replace"))
    if rc != 0 or not os.path.isfile(out):
        return None, diag
    return out, diag


def _parse_json_lines(stdout):
    objs = []
    for raw in stdout.decode("utf-8", "replace").splitlines():
        raw = raw.strip()
        if not raw:
            continue
        objs.append(json.loads(raw))
    return objs


def _norm_reason(r):
    return None if r in (None, "") else r


def classify_uas(args, rules, uas, tmpdir, name="uas.txt"):
    """Run `classify-run RULES --ua-file FILE --json` on `uas` (one per line).

    Returns (list of (verdict, reason) aligned with `uas`, None) or
    (None, diagnostic) if the run or its output is unusable."""
    for u in uas:
        if "\n" in u or "\r" in u or u == "":
            raise ValueError("UA not representable in a --ua-file: %r" % u)
    path = os.path.join(tmpdir, name)
    with open(path, "wb") as f:
        f.write("".join(u + "\n" for u in uas).encode("utf-8"))
    cmd = [args.classify_run, rules, "--ua-file", path, "--json"]
    rc, so, se = run(cmd)
    head = "$ %s\nexit %d\nstderr: %s" % (" ".join(cmd), rc, se.decode("utf-8", "replace")[:2000])
    if rc != 0:
        return None, head
    try:
        objs = _parse_json_lines(so)
    except ValueError as e:
        return None, head + "\nstdout is not one JSON object per line: %s\n%s" % (
            e, so.decode("utf-8", "replace")[:2000])
    if len(objs) != len(uas):
        return None, head + "\nexpected %d JSON lines, got %d" % (len(uas), len(objs))
    results = [None] * len(uas)
    for i, o in enumerate(objs):
        line = o.get("line", i + 1)
        if not isinstance(line, int) or not 1 <= line <= len(uas) or results[line - 1] is not None:
            return None, head + "\nbad or duplicate \"line\" in %r" % (o,)
        results[line - 1] = (o.get("verdict"), _norm_reason(o.get("reason")))
    return results, None


def classify_request(args, rules, request_file):
    """Run `classify-run RULES --request FILE --json`; returns ((verdict, reason), diag)."""
    cmd = [args.classify_run, rules, "--request", request_file, "--json"]
    rc, so, se = run(cmd)
    head = "$ %s\nexit %d\nstdout: %s\nstderr: %s" % (" ".join(cmd), rc, so.decode("utf-8", "replace")[:2000],
                                                      se.decode("utf-8", "replace")[:2000])
    if rc != 0:
        return None, head
    try:
        objs = _parse_json_lines(so)
    except ValueError as e:
        return None, head + "\nnot JSON: %s" % e
    if len(objs) != 1:
        return None, head + "\nexpected exactly one JSON object"
    return (objs[0].get("verdict"), _norm_reason(objs[0].get("reason"))), head


def fmt(v):
    if v is None:
        return "(none)"
    verdict, reason = v
    return verdict if reason is None else "%s %s" % (verdict, reason)


# --------------------------------------------- reference model (for --regen)
#
# A Python model of examples/main.clf for a request `GET <path>` with the given
# User-Agent, used only to (re)compute the explicit expectation lists when the
# ruleset or the corpora change (see `--regen` in the test scripts).  The tests
# themselves assert the hard-coded lists against the real binaries.

WORD = "A-Za-z0-9_"


def word_regex(names):
    """contains_word(set)i: a name with no [A-Za-z0-9_] right before/after, ASCII case-insensitive."""
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![%s])(?:%s)(?![%s])" % (WORD, alt, WORD), re.I | re.A)


def load_agents(corpora):
    with open(os.path.join(corpora, "ai-robots-txt", "robots.json"), encoding="utf-8") as f:
        return list(json.load(f))


SCRIPTED_CLIENTS = ["python-requests/", "python-urllib/", "python-httpx/", "go-http-client/", "libwww-perl/"]
PROBE = re.compile(r"(^|/)(wp-admin|xmlrpc\.php|\.env|\.git)(/|$)", re.I)

# The ai.robots.txt names that main.clf matches only in product-token form
# (AMBIGUOUS_AGENT_TOKEN there, ai_robots.AMBIGUOUS in the stdlib; a test in
# test_ai_robots.py checks that the three lists agree).
AMBIGUOUS = ["Code", "Cursor", "LCC", "Operator", "Spider"]


def split_agents(agents, ambiguous=AMBIGUOUS):
    """(specific, ambiguous) names of robots.json, compared ASCII case-insensitively."""
    amb = {a.lower() for a in ambiguous}
    return [a for a in agents if a.lower() not in amb], [a for a in agents if a.lower() in amb]


def token_regex(names):
    """/\b(NAME|...)\/[0-9]/i: a name with no word character on its left, then "/" and a digit."""
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![%s])(?:%s)/[0-9]" % (WORD, alt), re.I | re.A)


def ai_hits(agents):
    """A function ua -> list of why rule 2 fires ("word GPTBot", "token Spider/"), for --regen comments."""
    specific, ambiguous = split_agents(agents)
    per = ([("word " + a, word_regex([a])) for a in specific] +
           [("token %s/" % a, token_regex([a])) for a in ambiguous])
    return lambda ua: [why for why, r in per if r.search(ua)]


# examples/main.clf AMBIGUOUS_AGENT_ALONE: the version-less forms of two real
# AI agents (Leipzig's LCC crawler, spider.com's Spider).
ALONE_RE = re.compile(r"^LCC\b|[(;] *Spider *[;)]", re.I | re.A)


def reference_model(agents):
    specific, ambiguous = split_agents(agents)
    specific_re = word_regex(specific)
    token_re = token_regex(ambiguous)

    def verdict(ua, path="/"):
        if ua == "":
            return ("reject", "no-user-agent")
        if (specific_re.search(ua) or token_re.search(ua) or ALONE_RE.search(ua)) and path != "/robots.txt":
            return ("reject", AI)
        if PROBE.search(path):
            return ("reject", "probe")
        if any(ua.lower().startswith(p) for p in SCRIPTED_CLIENTS):
            return ("reject", "scripted-client")
        return ("accept", None)
    return verdict


# ------------------------------------------- reading .clf sources back

# Decode the inside of a .clf "..." literal to bytes: the generators' own
# reader (tools/clfgen.py).
decode_clf_string = clf_string_bytes


def read_entries(text, const):
    """[(name, comment)] of `pub const CONST = [ ... ]i` in a generated file's text."""
    m = re.search(r"^pub const %s = \[\n(.*?)^\]i\n" % const, text, re.M | re.S)
    if not m:
        raise ValueError("no `pub const %s = [...]i` block" % const)
    entries = []
    for line in m.group(1).splitlines():
        lm = re.match(r'^    "((?:[^"\\]|\\.)*)",?(?:\s+//(.*))?$', line)
        if not lm:
            raise ValueError("unexpected line in the set: %r" % line)
        entries.append((decode_clf_string(lm.group(1)).decode("utf-8"), (lm.group(2) or "").strip()))
    return entries


def read_back(path, const="AGENTS"):
    """Names of `pub const CONST = [ ... ]i` in a generated file, decoded to str."""
    text = open(path, encoding="ascii").read()
    return [n for n, _ in read_entries(text, const)], text


def main_clf_token_names(path):
    """The names of the AMBIGUOUS_AGENT_TOKEN regex in examples/main.clf, and its flags.

    The regex must have the form /\b(NAME|NAME|...)\/[0-9]/FLAGS."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^const AMBIGUOUS_AGENT_TOKEN = /((?:[^/\\\n]|\\.)*)/([a-z]*)", text, re.M)
    if not m:
        raise ValueError("no `const AMBIGUOUS_AGENT_TOKEN = /.../` line in %s" % path)
    body = re.fullmatch(r"\\b\(([A-Za-z0-9_-]+(?:\|[A-Za-z0-9_-]+)*)\)\\/\[0-9\]", m.group(1))
    if not body:
        raise ValueError("AMBIGUOUS_AGENT_TOKEN is not of the form /\\b(NAME|...)\\/[0-9]/: /%s/" % m.group(1))
    return body.group(1).split("|"), m.group(2), text


def tempdir():
    return tempfile.TemporaryDirectory(prefix="clf-realdata-")
