#!/usr/bin/env python3
"""`clf-import verified-bots` on lists written here (TAP; always runs).

usage: test_verified_bots_import.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

A corpus directory is laid out as ../shared/corpora/verified-bots is (each
list at its `corpus` path, a LICENSE-NOTE.md table), with small lists in the
publishers' formats and quirks. Each bad file is then put in its place, one
at a time: the converter must exit 1 with `clf-import: FILE[:LINE]: error:
...` naming the file and the problem, and leave the -o file as it was.
"""
import json
import os
import shutil
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
CLF_IMPORT = os.path.join(ROOT, "tools", "clf-import")
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True
from clf_import import verified_bots as vb  # noqa: E402

t = Tap()
tmp = tempfile.TemporaryDirectory(prefix="clf-vbots-")
TMP = tmp.name


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, env=child_env())
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def doc(prefixes, ct="2026-08-21T14:45:42.000000", **extra):
    d = {"creationTime": ct}
    d.update(extra)
    d["prefixes"] = [{"ipv6Prefix" if ":" in p else "ipv4Prefix": p} for p in prefixes]
    return json.dumps(d, indent=2)


# One small list per publisher file, each in one of the real quirks
# (tests/realdata reads the real ones): the four creationTime shapes, a
# leading newline, no trailing newline, one-line JSON, Amazon's HTML page
# with bare addresses, extra keys, a zero-width space inside a prefix, and
# overlapping lists.
LISTS = {
    "google/googlebot.json": doc(["66.249.64.0/27", "66.249.64.32/27", "2001:4860:4801:10::/64"]),
    "google/special-crawlers.json": doc(["72.14.199.0/24"]),
    "google/user-triggered-fetchers.json": doc(["107.178.192.0/26", "2600:1900:0:2::/64"]),
    "google/user-triggered-fetchers-google.json": doc(["8.8.4.0/27"]),
    "bing/bingbot.json": doc(["157.55.39.0/24", "207.46.13.0/\u200b24"], ct="2024-01-03T10:00:00.121331"),
    "apple/applebot.json": doc(["17.241.208.0/22"]),
    "duckduckgo/duckduckbot.json": doc(["20.191.45.212/32"]),
    "openai/gptbot.json": doc(["4.227.36.0/25", "20.125.66.80/28"]),
    "openai/searchbot.json": doc(["4.227.36.0/25", "74.7.175.128/25"]),
    "openai/chatgpt-user.json": json.dumps({"creationTime": "2026-04-29T21:03:15.207621",
                                            "prefixes": [{"ipv4Prefix": "23.98.142.176/28"}]}),
    "perplexity/perplexitybot.json": "\n" + doc(["18.97.9.96/29"], ct="2025-02-07T16:56:00.000000"),
    "perplexity/perplexity-user.json": "\n" + doc(["18.97.9.96/29", "18.97.1.224/28"]),
    "commoncrawl/ccbot.json": doc(["18.97.9.168/29", "2600:1f28:365:8000::/56"], ct="2026-08-11T13:40:00Z",
                                  synctoken="1", notes="FCrDNS is also recommended"),
    "anthropic/bots.json": doc(["216.73.216.0/22"], ct="2026-08-12T01:43:14Z"),
    "amazon/amazonbot-fixture.html": "<html><body><pre>%s</pre></body></html>"
                                     % doc(["3.81.245.78", "3.81.253.213"],
                                           ct="2026-09-08T05:24:10.610952+00:00").replace('"', "&quot;"),
}
assert set(LISTS) == {l["corpus"] for l in vb.LISTS}


def license_note(skip=None, trimmed=("amazon/amazonbot-fixture.html",)):
    rows = ["| file here | publisher | source repo : path | commit | how copied | mirror license | data date |",
            "|---|---|---|---|---|---|---|"]
    for n, path in enumerate(sorted(LISTS)):
        if path == skip:
            continue
        how = "index text; a trimmed copy" if path in trimmed else "git"
        repo = "example/mirror-%d : %s" % (n, path) if n % 2 == 0 else "same repo : %s" % path
        rows.append("| %s | Pub | %s | %s | %s | MIT (repo) | 2026 |" % (path, repo, "%040x" % n, how))
    return "# provenance\n\n" + "\n".join(rows) + "\n"


def make_corpus(name, replace=None, note=True, drop=None, note_text=None):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    for path, text in LISTS.items():
        if path == drop:
            continue
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        data = (replace or {}).get(path, text)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    if note:
        with open(os.path.join(d, "LICENSE-NOTE.md"), "w", encoding="utf-8") as f:
            f.write(note_text if note_text is not None else license_note())
    return d


# ---- a good corpus: converts, compiles, its generated tests pass
good = make_corpus("good")
out = os.path.join(TMP, "verified_bots.clf")
rc, so, se = run([CLF_IMPORT, "verified-bots", good, "-o", out])
t.ok(rc == 0 and so == "" and se == "", "a corpus directory with every quirk converts", "exit %d\n%s" % (rc, se))
text = open(out, encoding="ascii").read() if os.path.exists(out) else ""
rc2, so2, _ = run([CLF_IMPORT, "verified-bots", good])
t.ok(rc2 == 0 and so2 == text, "standard output gets the same text, and it is deterministic")
for path in sorted(LISTS):
    t.ok(("file %s," % path) in text, "the header names %s" % path)
t.ok("copied from example/mirror-0 : " in text and "licence: MIT (repo)" in text,
     "the header gives each file's source, commit and licence from LICENSE-NOTE.md")
t.ok("same repo" not in text, "'same repo' is the previous row's repository")
t.ok("1 with zero-width characters removed" in text, "a zero-width space inside a prefix is removed and counted")
t.ok("    207.46.13.0/24,\n" in text, "the cleaned prefix is in the ranges")
t.ok("    3.81.245.78/32,\n" in text, "Amazon's bare addresses are /32")
t.ok("AMAZON_RANGES (2 IPv4 + 0 IPv6, INCOMPLETE" in text, "a row that says trimmed marks the list incomplete")
t.ok(text.count("    4.227.36.0/25,\n") == 2, "a block in two lists is in both families' ranges")
t.ok("    66.249.64.0/26,\n" in text, "adjacent blocks are merged")
t.ok(all(ord(c) < 128 for c in text), "the output is ASCII")
rc, so, se = run([CLASSIFYC, "--test", out])
t.ok(rc == 0 and " 0 failed" in so, "the output's generated tests pass", so[-2000:] + se)

# ---- bad files: exit 1, the file and the problem named, -o untouched
with open(out, "w") as f:
    f.write("previous\n")
BAD = [
    ("openai/gptbot.json", "{\"creationTime\": \"2026-01-01T00:00:00Z\",\n \"prefixes\": [\n", ":3: error: bad JSON"),
    ("openai/gptbot.json", doc(["10.0.0.1/8"]), "host bits set (the network is 10.0.0.0/8)"),
    ("openai/gptbot.json", doc(["10.0.0.0/33"]), "prefixes[0]: ipv4Prefix \"10.0.0.0/33\""),
    ("openai/gptbot.json", doc(["not-an-address"]), "prefixes[0]: ipv4Prefix \"not-an-address\""),
    ("openai/gptbot.json", json.dumps({"creationTime": "2026-01-01T00:00:00Z",
                                       "prefixes": [{"ipv4Prefix": "2001:db8::/32"}]}), "is an IPv6 prefix"),
    ("openai/gptbot.json", json.dumps({"creationTime": "2026-01-01T00:00:00Z",
                                       "prefixes": [{"ipv4Prefix": "1.2.3.0/24", "ipv6Prefix": "::/0"}]}),
     "has both of"),
    ("openai/gptbot.json", json.dumps({"creationTime": "2026-01-01T00:00:00Z", "prefixes": [{"x": 1}]}),
     "has neither of"),
    ("openai/gptbot.json", json.dumps({"creationTime": "2026-01-01T00:00:00Z", "prefixes": []}),
     "\"prefixes\" is empty"),
    ("openai/gptbot.json", json.dumps({"prefixes": [{"ipv4Prefix": "1.2.3.0/24"}]}), "missing key \"creationTime\""),
    ("openai/gptbot.json", json.dumps({"creationTime": "yesterday", "prefixes": [{"ipv4Prefix": "1.2.3.0/24"}]}),
     "creationTime \"yesterday\" is not a date"),
    ("openai/gptbot.json", "[1, 2]", "the document is not a JSON object"),
    ("openai/gptbot.json", b"\xff\xfe{}", "not UTF-8"),
    ("amazon/amazonbot-fixture.html", "<html><body>moved</body></html>", "no JSON document with \"prefixes\""),
]
for n, (path, data, want) in enumerate(BAD):
    d = make_corpus("bad%d" % n, replace={path: data})
    rc, so, se = run([CLF_IMPORT, "verified-bots", d, "-o", out])
    full = os.path.join(d, path)
    t.ok(rc == 1 and se.startswith("clf-import: %s" % full) and want in se and se.count("\n") == 1,
         "bad %s (%s): exit 1, one line naming the file and the problem" % (path, want), "exit %d: %s" % (rc, se))
    t.ok(open(out).read() == "previous\n", "... and the -o file is left as it was")
t.ok(not [f for f in os.listdir(TMP) if f.endswith(".tmp")], "no temporary file is left behind")

d = make_corpus("missing", drop="bing/bingbot.json")
rc, so, se = run([CLF_IMPORT, "verified-bots", d, "-o", out])
t.ok(rc == 1 and "bing/bingbot.json" in se and "--partial" in se, "a missing list is an error naming it", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", d, "--partial"])
t.ok(rc == 0 and "bingbot (Microsoft Bing): not given" in so and "BING_RANGES" not in so.split("// ---- every")[1],
     "--partial goes without it: Bing has no ranges", se)
d = make_corpus("norow", note_text=license_note(skip="apple/applebot.json"))
rc, so, se = run([CLF_IMPORT, "verified-bots", d, "-o", out])
t.ok(rc == 1 and "LICENSE-NOTE.md: error: no row for apple/applebot.json" in se,
     "LICENSE-NOTE.md without a row for a file read is an error", se)
d = make_corpus("nonote", note=False)
rc, so, se = run([CLF_IMPORT, "verified-bots", d])
t.ok(rc == 0 and "copied from" not in so and "AMAZON_RANGES (2 IPv4 + 0 IPv6, complete" in so,
     "without LICENSE-NOTE.md: no provenance, and no list is known to be trimmed", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", d, "--incomplete", "amazonbot", "--incomplete", "gptbot"])
t.ok(rc == 0 and "AMAZON_RANGES (2 IPv4 + 0 IPv6, INCOMPLETE" in so and "OPENAI_GPTBOT_RANGES (2 IPv4 + 0 IPv6, INCOMPLETE" in so,
     "--incomplete marks lists", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", d, "--incomplete", "nosuch"])
t.ok(rc == 2 and "unknown list 'nosuch'" in se, "--incomplete with an unknown list is a usage error", se)

# ---- files mode
NAMED = {"amazon/amazonbot-fixture.html": "amazonbot", "anthropic/bots.json": "anthropic"}
files = [os.path.join(good, p) for p in sorted(LISTS)]
rc, so, se = run([CLF_IMPORT, "verified-bots"] + files)
t.ok(rc == 1 and "amazonbot-fixture.html: error: cannot tell which list" in se and "LIST=" in se,
     "a file whose name is not a list's needs LIST=FILE", se)
files = [("%s=%s" % (NAMED[p], os.path.join(good, p))) if p in NAMED else os.path.join(good, p)
         for p in sorted(LISTS)]
rc, so, se = run([CLF_IMPORT, "verified-bots", "--incomplete", "amazonbot"] + files)
body = lambda s: [l for l in s[s.index("// ---- every token"):].splitlines() if not l.startswith("//")]
t.ok(rc == 0 and body(so) == body(text), "files recognized by name, and LIST=FILE, give the same package", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", files[-1], files[-1]])
t.ok(rc == 1 and "given twice" in se, "a list given twice is an error", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", "nosuch=" + files[0]])
t.ok(rc == 2 and "unknown list 'nosuch'" in se, "an unknown LIST= is a usage error", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", good, files[0]])
t.ok(rc == 2 and "a directory is the only input" in se, "a directory with other inputs is a usage error", se)
rc, so, se = run([CLF_IMPORT, "verified-bots"])
t.ok(rc == 2, "no input is a usage error", se)
rc, so, se = run([CLF_IMPORT, "verified-bots", "--lists"])
t.ok(rc == 0 and all(l["id"] in so and l["corpus"] in so for l in vb.LISTS), "--lists names every list and its path")
t.finish()
