#!/usr/bin/env python3
"""bench/workload.py: the benchmark's requests, built from the real corpora.

    python3 bench/workload.py --out REQUESTS.txt [--corpora DIR]

The User-Agents: every `instances` string of
crawler-user-agents/crawler-user-agents.json (2,116, file order), then every
`user_agent_string` of uap-core/tests/test_ua.yaml (1,601, file order),
shuffled with random.Random(20240601).shuffle: the construction of
/work/shared/notes/peer-baselines.md, so its figures compare.

Each becomes one request, as a server would hand it over:
  - method GET and one of 12 paths, rotating (request i gets PATHS[i % 12]):
    two scanner probes (/wp-admin/, /.env), /robots.txt, a query string on
    three of them;
  - Host, then User-Agent, then
      a crawler-user-agents instance (a bot): the headers of an HTTP
      client library: Accept: */*, Accept-Encoding: gzip, Connection:
      keep-alive;
      a uap-core User-Agent (browsers, apps, devices): the headers its
      browser family and version send on a top-level navigation, from
      tools/accuracy.py's synthesize_headers (Accept, Accept-Language,
      Accept-Encoding; Sec-Fetch-* from Chrome 76, Firefox 90, Safari 16.4;
      client hints from Chrome 89), then Connection: keep-alive.
No request repeats a header. The format is in bench/harness.h.
"""

import argparse
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
from accuracy import synthesize_headers  # noqa: E402
from benchcommon import WriteError, check_writable, write_atomic  # noqa: E402

SEED = 20240601
CRAWLER = os.path.join("crawler-user-agents", "crawler-user-agents.json")
UAP = os.path.join("uap-core", "tests", "test_ua.yaml")

PATHS = [
    ("/", ""),
    ("/blog/2024/06/how-we-cache-at-the-edge", ""),
    ("/static/css/site.3f9a1c.css", ""),
    ("/search", "q=trail+running+shoes&page=2"),
    ("/robots.txt", ""),
    ("/products/4711", "ref=home&utm_source=newsletter"),
    ("/wp-admin/", ""),
    ("/images/logo@2x.png", ""),
    ("/.env", ""),
    ("/api/v1/items", "limit=20&offset=40"),
    ("/feed.xml", ""),
    ("/about/team", ""),
]
CLIENT = [("Accept", "*/*"), ("Accept-Encoding", "gzip"), ("Connection", "keep-alive")]


class Missing(Exception):
    pass


def load_uas(corpora):
    """[(ua, is_bot)], shuffled; raises Missing naming absent files."""
    crawler, uap = os.path.join(corpora, CRAWLER), os.path.join(corpora, UAP)
    missing = [p for p in (crawler, uap) if not os.path.isfile(p)]
    if missing:
        raise Missing(", ".join(missing))
    with open(crawler, encoding="utf-8") as f:
        uas = [(ua, True) for e in json.load(f) for ua in e.get("instances", [])]
    import yaml
    with open(uap, encoding="utf-8") as f:
        doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    uas += [(c["user_agent_string"], False) for c in doc["test_cases"]]
    random.Random(SEED).shuffle(uas)
    return uas


def requests(uas):
    """The requests, each (method, path, query, [(name, value)])."""
    out = []
    for i, (ua, bot) in enumerate(uas):
        path, query = PATHS[i % len(PATHS)]
        hdrs = [("Host", "www.example.org"), ("User-Agent", ua)]
        hdrs += CLIENT if bot else synthesize_headers(ua)[1] + [("Connection", "keep-alive")]
        out.append(("GET", path, query, hdrs))
    return out


def write(reqs, path):
    """Writes the requests file atomically (benchcommon.write_atomic)."""
    out = []
    for method, p, q, hdrs in reqs:
        fields = [method, p, q] + [x for h in hdrs for x in h]
        for s in fields:
            if any(c in s for c in "\t\r\n\0"):
                raise ValueError("a TAB, CR, LF or NUL in a workload field: %r" % s)
        out.append("R\t%s\t%s\t%s\n" % (method, p, q))
        out += ["H\t%s\t%s\n" % h for h in hdrs]
        out.append("\n")
    write_atomic(path, "".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    a = ap.parse_args()
    try:
        check_writable(a.out)
    except WriteError as e:
        sys.stderr.write("workload: %s\n" % e)
        return 1
    try:
        uas = load_uas(a.corpora)
    except Missing as e:
        sys.stderr.write("workload: corpora not found: %s\n"
                         "          (pass --corpora DIR or set CORPORA)\n" % e)
        return 2
    reqs = requests(uas)
    try:
        write(reqs, a.out)
    except (WriteError, ValueError) as e:
        sys.stderr.write("workload: %s\n" % e)
        return 1
    bots = sum(1 for _, b in uas if b)
    print("workload: %d requests (%d bots, %d browsers and devices) -> %s"
          % (len(reqs), bots, len(reqs) - bots, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
