#!/usr/bin/env python3
"""`clf-import robots-txt` end to end (TAP).

usage: test_robots.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Golden part (skipped when CORPORA_DIR/anubis/cmd/robots2policy/testdata is
absent): for each NAME.robots.txt there, the expected NAME.yaml (and
NAME.json) are parsed; the agents named by their DENY rules with only
userAgent conditions (robots2policy's "blacklist" rules: a whole-site deny)
must be rejected, in several spellings and as product tokens, and every other
agent the expected policy names (CHALLENGE/WEIGH rules, `*`'s
global-restriction) must be accepted -- by the real classifyc/classify-run
on the converted file.

Edge-case part (always runs): small robots.txt texts written here.
"""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "realdata"))
from realdata_common import Tap, child_env  # noqa: E402

if len(sys.argv) != 5:
    sys.stderr.write("usage: %s CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR\n" % sys.argv[0])
    sys.exit(2)
CLASSIFYC, CLASSIFY_RUN, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
CORPORA = os.path.abspath(sys.argv[4]) if sys.argv[4] else ""
CLF_IMPORT = os.path.join(ROOT, "tools", "clf-import")
GOLDEN = os.path.join(CORPORA, "anubis", "cmd", "robots2policy", "testdata")
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

t = Tap()
tmp = tempfile.TemporaryDirectory(prefix="clf-robots-")
TMP = tmp.name


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, env=child_env())
    return p.returncode, p.stdout, p.stderr


def convert(robots_path, extra=()):
    """clf-import robots-txt -> compiled rules; (rules.bin or None, clf text, diag)."""
    base = os.path.join(TMP, os.path.basename(robots_path).replace(".", "_"))
    clf, rules = base + ".clf", base + ".bin"
    rc, so, se = run([CLF_IMPORT, "robots-txt", robots_path, "-o", clf] + list(extra))
    if rc != 0:
        return None, "", "clf-import exit %d: %s" % (rc, se.decode("utf-8", "replace"))
    text = open(clf, encoding="ascii").read()
    rc, so, se = run([CLASSIFYC, clf, "-o", rules])
    if rc != 0:
        return None, text, "classifyc exit %d: %s\n%s" % (rc, se.decode("utf-8", "replace"), text)
    return rules, text, ""


def classify(rules, uas):
    path = os.path.join(TMP, "uas.txt")
    with open(path, "wb") as f:
        f.write(b"".join(u.encode("utf-8", "surrogateescape") + b"\n" for u in uas))
    rc, so, se = run([CLASSIFY_RUN, rules, "--ua-file", path, "--json"])
    if rc != 0:
        raise RuntimeError("classify-run exit %d: %s" % (rc, se.decode("utf-8", "replace")))
    res = [None] * len(uas)
    for line in so.decode().splitlines():
        o = json.loads(line)
        res[o["line"] - 1] = (o["verdict"], o["reason"])
    return res


def spellings(name):
    """UAs that name the agent as robots.txt product tokens are sent."""
    return [name, name.lower(), name.upper(),
            "Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot.html)" % name,
            "%s/2.1 (+https://example.com)" % name.lower()]


def check_agents(rules, label, rejected, accepted, reason="robots-txt"):
    """rejected/accepted: agent names; browsers are always accepted."""
    cases = []
    for n in rejected:
        cases += [(u, ("reject", reason), "%s rejected" % n) for u in spellings(n)]
    for n in accepted:
        cases += [(u, ("accept", None), "%s accepted" % n) for u in spellings(n)]
    cases.append((BROWSER, ("accept", None), "a browser accepted"))
    got = classify(rules, [c[0] for c in cases])
    bad = ["%r: expected %s, got %s" % (u, e, g) for (u, e, _), g in zip(cases, got) if tuple(g) != e]
    t.ok(not bad, "%s: %d agents rejected (%s), %d accepted (%s), in %d UAs" % (
        label, len(rejected), ", ".join(rejected) or "none", len(accepted),
        ", ".join(accepted) or "none", len(cases)), "\n".join(bad[:20]))


def request_verdict(rules, path, ua):
    req = os.path.join(TMP, "req.http")
    with open(req, "w") as f:
        f.write("GET %s HTTP/1.1\r\nHost: example.org\r\nUser-Agent: %s\r\n\r\n" % (path, ua))
    rc, so, se = run([CLASSIFY_RUN, rules, "--request", req, "--json"])
    o = json.loads(so.decode())
    return o["verdict"], o["reason"]


# ------------------------------------------------------ golden (robots2policy)

UA_CALL = re.compile(r'^userAgent\.contains\("((?:[^"\\]|\\.)*)"\)$')


def conditions(expr):
    """The CEL strings of an expression (string, or {single|all|any: ...})."""
    if isinstance(expr, str):
        return [expr]
    out = []
    for k in ("single", "all", "any"):
        v = expr.get(k)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out += v
    return out


def expected_agents(rules):
    """(whole-site denied agents, other agents named) of a robots2policy output."""
    deny, other = [], []
    for r in rules:
        conds = conditions(r.get("expression", ""))
        names = [json.loads('"%s"' % m.group(1)) for m in map(UA_CALL.match, conds) if m]
        if r.get("action") == "DENY" and names and len(names) == len(conds):
            deny += names
        else:
            other += names
    return deny, [n for n in dict.fromkeys(other) if n not in deny]


def load_expected(path):
    with open(path, encoding="utf-8") as f:
        if path.endswith(".json"):
            return json.load(f)
        import yaml
        return yaml.safe_load(f) or []


if not os.path.isdir(GOLDEN):
    t.skip("robots2policy golden files", "corpora not found at %s" % (CORPORA or "(empty path)"))
else:
    robots = sorted(f for f in os.listdir(GOLDEN) if f.endswith(".robots.txt"))
    t.ok(len(robots) >= 6, "robots2policy testdata has its robots.txt files (%d)" % len(robots))
    for f in robots:
        stem = f[:-len(".robots.txt")]
        expects = [os.path.join(GOLDEN, stem + ext) for ext in (".yaml", ".json")
                   if os.path.isfile(os.path.join(GOLDEN, stem + ext))]
        if not expects:
            t.skip(f, "no expected .yaml/.json beside it")
            continue
        rules, text, diag = convert(os.path.join(GOLDEN, f))
        if not t.ok(rules, "%s: converts and compiles" % f, diag):
            continue
        for e in expects:
            deny, other = expected_agents(load_expected(e))
            listed = re.findall(r'^    "((?:[^"\\]|\\.)*)",', text, re.M)
            t.ok(listed == deny, "%s: the AGENTS set is the DENY agents of %s, in order" % (
                f, os.path.basename(e)), "set %r, expected %r" % (listed, deny))
            check_agents(rules, "%s vs %s" % (f, os.path.basename(e)), deny, other)
        if any("*" == a for a in re.findall(r"(?im)^\s*user-agent\s*:\s*(\S*)", open(os.path.join(GOLDEN, f)).read())):
            t.ok(request_verdict(rules, "/admin", BROWSER) == ("accept", None),
                 "%s: `User-agent: *` path rules are not converted (browser on /admin accepted)" % f)

# ------------------------------------------------------------- edge cases

EDGE = [
    # (name, robots.txt text, rejected, accepted, note)
    ("star-in-group", "User-agent: *\nUser-agent: MixedBot\nDisallow: /\n",
     ["MixedBot"], ["Googlebot"], "`*` with Disallow: / rejects nobody; named agents in its group are rejected"),
    ("star-alone", "User-agent: *\nDisallow: /\n", [], ["AnyBot"], "`*` + Disallow: / alone: empty set"),
    ("comments", "# top\nUser-agent: CommentBot # the bot\nDisallow: / # everything\n\nUser-agent: PathBot\nDisallow: /private # x\n",
     ["CommentBot"], ["PathBot"], "inline # comments are stripped (RFC 9309)"),
    ("disallow-star", "User-agent: StarPathBot\nDisallow: /*\n", [], ["StarPathBot"], "Disallow: /* is a path rule, as in robots2policy"),
    ("allow-too", "User-agent: AllowBot\nAllow: /\nDisallow: /\n", ["AllowBot"], [], "Allow lines are ignored, as in robots2policy"),
    ("sitemap-between", "User-agent: FirstBot\nSitemap: https://example.org/s.xml\nUser-agent: SecondBot\nDisallow: /\n",
     ["FirstBot", "SecondBot"], [], "unknown directives do not end a group's User-agent lines"),
    ("new-group", "User-agent: KeptBot\nDisallow: /a\nUser-agent: GoneBot\nDisallow: /\n",
     ["GoneBot"], ["KeptBot"], "a User-agent after a rule line starts a new group"),
    ("rule-before-agent", "Disallow: /\nUser-agent: LateBot\nDisallow: /x\n", [], ["LateBot"], "rules before any User-agent are ignored"),
    ("case-dupes", "User-agent: DupBot\nDisallow: /\n\nUser-agent: dupbot\nDisallow: /\n", ["DupBot"], [], "case-insensitive duplicates kept once"),
    ("crlf-bom-case", "\ufeffUSER-AGENT: CrlfBot\r\ndisallow: /\r\n", ["CrlfBot"], [], "CRLF, BOM, directive case"),
    ("spaces-and-punct", 'User-agent: Download Ninja\nUser-agent: odd"name\\x\nUser-agent: site.example/2\nDisallow: /\n',
     ["Download Ninja", 'odd"name\\x', "site.example/2"], [], "names with spaces, quotes, backslashes, dots, slashes"),
    ("no-word-inside", "User-agent: BadBot\nDisallow: /\n", ["BadBot"], ["SuperBadBot", "BadBotter"],
     "whole words: SuperBadBot is another agent"),
]

for name, text, rejected, accepted, note in EDGE:
    path = os.path.join(TMP, name + ".robots.txt")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    rules, clf, diag = convert(path)
    if t.ok(rules, "edge %s: converts and compiles" % name, diag):
        check_agents(rules, "edge %s (%s)" % (name, note), rejected, accepted)
        if name == "case-dupes":
            t.ok(clf.count('"DupBot"') + clf.count('"dupbot"') == 1, "edge case-dupes: one entry")

# the set in the generated file, and robots.txt itself stays reachable
rules, clf, diag = convert(os.path.join(TMP, "no-word-inside.robots.txt"))
t.ok(rules and request_verdict(rules, "/robots.txt", "BadBot/1.0") == ("accept", None),
     "a rejected agent may still read /robots.txt")
t.ok(rules and request_verdict(rules, "/page", "BadBot/1.0") == ("reject", "robots-txt"),
     "a rejected agent gets reject robots-txt elsewhere")
rules, clf, diag = convert(os.path.join(TMP, "no-word-inside.robots.txt"), ["--name", "our-robots"])
t.ok(rules and request_verdict(rules, "/", "BadBot/1.0") == ("reject", "our-robots"),
     "--name NAME sets the reason", diag)

# non-UTF-8 agent names are kept byte for byte
path = os.path.join(TMP, "latin1.robots.txt")
with open(path, "wb") as f:
    f.write(b"User-agent: Cr\xe9Bot\nDisallow: /\n")
rules, clf, diag = convert(path)
t.ok(rules and '"Cr\\xE9Bot"' in clf, "a non-UTF-8 name is written as \\xNN", diag or clf)
if rules:
    got = classify(rules, ["Cr\udce9Bot/1.0", "CrBot/1.0"])
    t.ok(got == [("reject", "robots-txt"), ("accept", None)], "the non-UTF-8 name matches its bytes", got)

# clf-import as a module of another file: AGENTS and check are pub
mod = os.path.join(TMP, "blocked.clf")
run([CLF_IMPORT, "robots-txt", os.path.join(TMP, "comments.robots.txt"), "-o", mod])
user = os.path.join(TMP, "user.clf")
with open(user, "w") as f:
    f.write('import "blocked.clf"\nfilter main(req: Request) {\n    blocked.check(req)\n'
            '    if req.header("user-agent").contains(blocked.AGENTS) { reject "sub" }\n    accept\n}\n')
rc, so, se = run([CLASSIFYC, user, "-o", os.path.join(TMP, "user.bin")])
t.ok(rc == 0, "the output imports as a module (pub AGENTS, pub filter check)", se)

# ------------------------------------------------------------ errors and CLI


def err_case(label, args, stdin=None, rc_want=1, pattern=None):
    rc, so, se = run([CLF_IMPORT] + args, stdin=stdin)
    msg = se.decode("utf-8", "replace")
    good = rc == rc_want and (pattern is None or re.search(pattern, msg, re.M))
    shown = "" if pattern is None else ", " + pattern.replace(re.escape(TMP), "TMP")
    t.ok(good and so == b"", "%s: exit %d%s" % (label, rc_want, shown),
         "exit %d\nstdout %r\nstderr %s" % (rc, so[:200], msg))


empty_ua = os.path.join(TMP, "empty-ua.robots.txt")
with open(empty_ua, "w") as f:
    f.write("# x\nUser-agent: Fine\nUser-agent:\nDisallow: /\n")
err_case("empty User-agent in a Disallow: / group", ["robots-txt", empty_ua],
         pattern=r"^clf-import: %s:3: error: empty User-agent" % re.escape(empty_ua))
nul = os.path.join(TMP, "nul.robots.txt")
with open(nul, "wb") as f:
    f.write(b"User-agent: A\nDisallow: /\x00\n")
err_case("NUL byte", ["robots-txt", nul], pattern=r"^clf-import: %s:2: error: NUL byte" % re.escape(nul))
missing = os.path.join(TMP, "missing.txt")
err_case("missing input", ["robots-txt", missing],
         pattern=r"^clf-import: %s: error: cannot open: No such file" % re.escape(missing))
err_case("no arguments", [], rc_want=2, pattern=r"^clf-import: error: ")
err_case("unknown format", ["apache", "x"], rc_want=2, pattern=r"clf-import: error: .*invalid choice")
err_case("robots-txt without a file", ["robots-txt"], rc_want=2, pattern=r"clf-import: error: ")
err_case("unknown option", ["robots-txt", empty_ua, "--bogus"], rc_want=2, pattern=r"clf-import: error: ")
err_case("empty --name", ["robots-txt", os.path.join(TMP, "comments.robots.txt"), "--name", ""], rc_want=2,
         pattern=r"clf-import: error: --name must not be empty")

# -o is atomic: a failed conversion leaves the old file, no temporary file
out = os.path.join(TMP, "outdir")
os.mkdir(out)
target = os.path.join(out, "rules.clf")
with open(target, "w") as f:
    f.write("old\n")
rc, so, se = run([CLF_IMPORT, "robots-txt", empty_ua, "-o", target])
t.ok(rc == 1 and open(target).read() == "old\n" and os.listdir(out) == ["rules.clf"],
     "-o: a failed conversion leaves the existing file and no temporary file", (rc, os.listdir(out)))
rc, so, se = run([CLF_IMPORT, "robots-txt", os.path.join(TMP, "comments.robots.txt"), "-o", target])
rc2, so2, _ = run([CLF_IMPORT, "robots-txt", os.path.join(TMP, "comments.robots.txt")])
t.ok(rc == 0 and rc2 == 0 and so == b"" and open(target, "rb").read() == so2 and os.listdir(out) == ["rules.clf"],
     "-o writes what standard output gets, and nothing else", (rc, rc2, os.listdir(out)))
rc, so, se = run([CLF_IMPORT, "robots-txt", os.path.join(TMP, "comments.robots.txt"),
                  "-o", os.path.join(TMP, "no-such-dir", "x.clf")])
t.ok(rc == 1 and re.match(rb"clf-import: .*x\.clf: error: cannot write", se), "-o in a missing directory: exit 1", se)
rc, so, se = run([CLF_IMPORT, "robots-txt", "-"], stdin=b"User-agent: StdinBot\nDisallow: /\n")
t.ok(rc == 0 and b'"StdinBot",' in so, "reads standard input for -", se)

# Found by attacking the importer: each was a traceback, a hang, a device
# replaced by a file, or an output that did not compile.
err_case("a non-regular input (/dev/zero would never end)", ["robots-txt", "/dev/zero"],
         pattern=r"^clf-import: /dev/zero: error: cannot read: not a regular file")
fifo = os.path.join(TMP, "fifo")
os.mkfifo(fifo)
err_case("a FIFO is refused, not waited on", ["robots-txt", fifo],
         pattern=r"error: cannot read: not a regular file")
fifo_out = os.path.join(TMP, "fifo-out")
os.mkfifo(fifo_out)
err_case("-o onto something that is not a regular file is refused",
         ["robots-txt", os.path.join(TMP, "comments.robots.txt"), "-o", fifo_out],
         pattern=r"error: refusing to write: not a regular file")
t.ok(stat.S_ISFIFO(os.stat(fifo_out).st_mode), "... and the FIFO is still a FIFO")
long_ua = os.path.join(TMP, "long-ua.robots.txt")
with open(long_ua, "w") as f:
    f.write("User-agent: %s\nDisallow: /\n" % ("a" * 16000))
err_case("a 16,000-byte User-agent (Hyperscan refuses such literals)", ["robots-txt", long_ua],
         pattern=r"^clf-import: %s:1: error: User-agent of 16000 bytes" % re.escape(long_ua))

rc, so, se = run([CLF_IMPORT, "--help"])
h = so.decode()
t.ok(rc == 0 and "anubis" in h and "robots-txt" in h and "exit status" in h, "--help documents both converters", h)
rc, so, se = run([CLF_IMPORT, "robots-txt", "--help"])
t.ok(rc == 0 and "--name" in so.decode() and "-o" in so.decode(), "robots-txt --help", so)
rc, so, se = run([CLF_IMPORT, "--version"])
t.ok(rc == 0 and re.match(rb"^clf-import \d+\.\d+\.\d+\n$", so), "--version", so + se)

tmp.cleanup()
t.finish()
