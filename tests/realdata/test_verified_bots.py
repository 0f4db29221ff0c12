#!/usr/bin/env python3
"""realdata: stdlib/verified_bots.clf against the crawler operators' lists (TAP).

    test_verified_bots.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Skipped without CORPORA_DIR/verified-bots. Checks:

- the committed stdlib/verified_bots.clf is exactly what `clf-import
  verified-bots CORPORA_DIR/verified-bots` writes now;
- the addresses of the lists, read here with Python's ipaddress straight
  from the publishers' files (not through the converter): the first and last
  address of every prefix of every list, IPv4 and IPv6, with the crawler's
  documented User-Agent, is verified (check_verified accepts
  "verified:TOKEN"); the address just before and after each prefix, when in
  none of the family's lists, is forged (check_forged rejects
  "forged:TOKEN"), or unverifiable for a list LICENSE-NOTE.md says is
  trimmed; the reverse-DNS method for the crawlers that document one:
  a name in each documented domain verifies an address outside the ranges,
  a look-alike or no name forges it, none checked leaves Yandex
  unverifiable;
- the claim: every distinct User-Agent of crawler-user-agents' instances
  and uap-core's test_ua.yaml gets from verified_bots.claim the token the
  converter's Python model (claim_model) predicts, and the comparisons of the
  corpora (`like Googlebot`, `compatible with Googlebot`, `Following
  Mediapartners-Google`, `like FeedFetcher-Google`) claim nothing.

Each group is one .clf file of `test` blocks run by `classifyc --test` (the
project's test format), one TAP line per group and list.
"""
import html
import ipaddress
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from realdata_common import Tap, parse_args_or_skip, run  # noqa: E402

args = parse_args_or_skip()
CORPUS = args.corpus("verified-bots")
if not os.path.isdir(CORPUS):
    print("1..0 # SKIP %s not found" % CORPUS)
    sys.exit(0)
sys.path.insert(0, os.path.join(args.root, "tools"))
sys.dont_write_bytecode = True
from clf_import import clf_string  # noqa: E402
from clf_import import verified_bots as vb  # noqa: E402

t = Tap()
tmp = tempfile.TemporaryDirectory(prefix="clf-vbots-real-")
PKG = os.path.join(args.root, "stdlib", "verified_bots.clf")

# ---- the committed package is the converter's output
rc, so, se = run([os.path.join(args.root, "tools", "clf-import"), "verified-bots", CORPUS])
committed = open(PKG, encoding="utf-8").read()
t.ok(rc == 0 and so.decode("utf-8") == committed,
     "stdlib/verified_bots.clf is what clf-import verified-bots writes from the corpora",
     "exit %d %s; regenerate: clf-import verified-bots ../shared/corpora/verified-bots -o stdlib/verified_bots.clf"
     % (rc, se.decode("utf-8", "replace")))


# ---- the lists, read here
def raw_prefixes(path):
    text = open(path, encoding="utf-8").read()
    if text.lstrip().startswith("<"):
        text = html.unescape(text)
        text = text[text.index("{"):text.rindex("}") + 1]
    return [ipaddress.ip_network(p.get("ipv4Prefix") or p.get("ipv6Prefix"))
            for p in json.loads(text)["prefixes"]]


note = open(os.path.join(CORPUS, "LICENSE-NOTE.md"), encoding="utf-8").read()
TRIMMED = {l["id"] for l in vb.LISTS
           if re.search(r"^\| %s \|.*\b(trimmed|fixture)\b" % re.escape(l["corpus"]), note, re.M | re.I)
           or "fixture" in l["corpus"]}
t.ok(TRIMMED == {"amazonbot", "anthropic", "ccbot"}, "LICENSE-NOTE.md marks Amazon's, Anthropic's and "
     "Common Crawl's copies as trimmed", sorted(TRIMMED))
RAW = {l["id"]: raw_prefixes(os.path.join(CORPUS, l["corpus"])) for l in vb.LISTS}
FAM = {f["id"]: f for f in vb.FAMILIES}


def in_any(a, nets):
    return any(a in n for n in nets)


def test_block(name, ua, peer=None, rdns=None, expects=()):
    s = "test %s {\n    header \"User-Agent\" %s\n" % (clf_string(name), clf_string(ua))
    if peer is not None:
        s += "    peer \"%s\"\n" % peer
    if rdns is not None:
        s += "    rdns %s\n" % clf_string(rdns)
    return s + "".join("    expect %s\n" % e for e in expects) + "}\n"


HEAD = '''import "verified_bots"
filter state(req: Request) {
    let s = verified_bots.state(req)
    if s == "verified" { accept "verified" }
    if s == "forged" { reject "forged" }
    if s == "unverifiable" { accept "unverifiable" }
    accept "none"
}
'''


def verified(tok):
    return ['state accept "verified"', 'verified_bots.check_verified accept "verified:%s"' % tok,
            'verified_bots.check accept "verified:%s"' % tok, "verified_bots.check_forged pass"]


def forged(tok):
    return ['state reject "forged"', 'verified_bots.check_forged reject "forged:%s"' % tok,
            'verified_bots.check reject "forged:%s"' % tok, "verified_bots.check_verified pass"]


UNVERIFIABLE = ['state accept "unverifiable"', "verified_bots.check pass"]


def run_tests(label, blocks, extra=""):
    """classifyc --test on HEAD + extra + blocks (each one test); (passed, failed lines)."""
    path = os.path.join(tmp.name, re.sub(r"\W+", "_", label) + ".clf")
    with open(path, "w", encoding="ascii") as f:
        f.write(HEAD + extra + "\n".join(blocks))
    rc, so, se = run([args.classifyc, "--test", "-I", os.path.join(args.root, "stdlib"),
                      "--stdlib", "/nonexistent", path], timeout=600)
    out = so.decode("utf-8", "replace")
    bad = [l for l in out.splitlines() if l.startswith(("FAIL", "ERROR"))]
    ok = rc == 0 and re.search(r"^%d passed, 0 failed$" % len(blocks), out, re.M)
    return bool(ok), (bad[:20] or [out[-1500:], se.decode("utf-8", "replace")[-1500:]])


for fam in vb.FAMILIES:
    ids = [i for i in fam["lists"]]
    if not ids:
        continue
    union = [n for i in ids for n in RAW[i]]
    complete = not any(i in TRIMMED for i in ids)
    tok = vb.claim_model(fam)(fam["ua"])
    for i in ids:
        blocks, nv4, nv6, nout = [], 0, 0, 0
        for n in RAW[i]:
            for a in {n.network_address, n.broadcast_address}:
                blocks.append(test_block("%s %s in %s" % (tok, a, n), fam["ua"], a, expects=verified(tok)))
                nv4, nv6 = nv4 + (a.version == 4), nv6 + (a.version == 6)
            for a in (n.network_address - 1, n.broadcast_address + 1):
                if in_any(a, union):
                    continue
                nout += 1
                blocks.append(test_block("%s %s next to %s" % (tok, a, n), fam["ua"], a,
                                         expects=forged(tok) if complete else UNVERIFIABLE))
        ok, diag = run_tests(i, blocks)
        t.ok(ok, "%s: %d IPv4 and %d IPv6 first/last addresses of its %d prefixes verified, %d neighbours %s"
             % (i, nv4, nv6, len(RAW[i]), nout, "forged" if complete else "unverifiable (a trimmed copy)"),
             "\n".join(diag))

# ---- reverse DNS
blocks = []
OUTSIDE = ipaddress.ip_address("203.0.113.9")
for fam in vb.FAMILIES:
    if not fam["domains"]:
        continue
    tok = vb.claim_model(fam)(fam["ua"])
    for d in fam["domains"]:
        blocks.append(test_block("%s, rdns in %s" % (tok, d), fam["ua"], OUTSIDE, "crawl-203-0-113-9." + d,
                                 verified(tok)))
        blocks.append(test_block("%s, rdns %s with a suffix" % (tok, d), fam["ua"], OUTSIDE,
                                 "crawl-203-0-113-9.%s.attacker.example" % d, forged(tok)))
        blocks.append(test_block("%s, rdns ending in %s without the dot" % (tok, d), fam["ua"], OUTSIDE,
                                 "crawl.evil" + d, forged(tok)))
    blocks.append(test_block("%s, rdns resolved without a name" % tok, fam["ua"], OUTSIDE, "", forged(tok)))
    if not fam["lists"]:
        blocks.append(test_block("%s, rdns not resolved" % tok, fam["ua"], OUTSIDE, None, UNVERIFIABLE))
    else:
        inside = RAW[fam["lists"][0]][0].network_address
        blocks.append(test_block("%s from its ranges with a wrong rdns" % tok, fam["ua"], inside,
                                 "host.attacker.example", verified(tok)))
ok, diag = run_tests("rdns", blocks)
t.ok(ok, "reverse DNS: %d cases over the %d crawlers that document domains"
     % (len(blocks), sum(1 for f in vb.FAMILIES if f["domains"])), "\n".join(diag))


# ---- claims on the corpora's User-Agents
def corpus_uas():
    uas = []
    with open(args.corpus("crawler-user-agents", "crawler-user-agents.json"), encoding="utf-8") as f:
        for e in json.load(f):
            uas += e.get("instances", [])
    try:
        import yaml
        with open(args.corpus("uap-core", "tests", "test_ua.yaml"), encoding="utf-8") as f:
            cases = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["test_cases"]
        uas += [c["user_agent_string"] for c in cases]
    except ImportError:
        t.skip("uap-core's User-Agents", "python3-yaml missing")
    seen, out = set(), []
    for u in uas:
        if u and u not in seen and u == u.strip() and all(0x20 <= ord(c) != 0x7F for c in u):
            seen.add(u)
            out.append(u)
    return out


def model_claim(ua):
    for fam in vb.FAMILIES:
        c = vb.claim_model(fam)(ua)
        if c:
            return c
    return ""


uas = corpus_uas()
names = sorted({vb.token_name(x) for x in vb.all_tokens()})
probe = "filter claim(req: Request) {\n    let c = verified_bots.claim(req)\n    if c == \"\" { accept \"none\" }\n"
probe += "".join("    if c == %s { accept %s }\n" % (clf_string(n), clf_string(n)) for n in names)
probe += "    reject \"unknown\"\n}\n"
blocks, claimed = [], 0
for n, ua in enumerate(uas):
    c = model_claim(ua)
    claimed += bool(c)
    blocks.append(test_block("ua %d" % n, ua, expects=['claim accept "%s"' % (c or "none")]))
ok, diag = run_tests("claims", blocks, probe)
t.ok(ok and blocks, "verified_bots.claim gives the model's token for all %d distinct corpus User-Agents "
     "(%d claim a crawler)" % (len(uas), claimed), "\n".join(diag))
COMPARISONS = [u for u in uas if re.search(r"\b(like|with|following) (Googlebot|FeedFetcher-Google|"
                                           r"Mediapartners-Google)", u, re.I) and not model_claim(u)]
t.ok(len(COMPARISONS) >= 5, "the corpora's comparisons claim nothing (%d: FreshRSS, Feedly, Feedspot, SentiBot, "
     "Daumoa, acapbot)" % len(COMPARISONS), COMPARISONS)
t.finish()
