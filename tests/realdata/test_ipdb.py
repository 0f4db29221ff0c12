#!/usr/bin/env python3
"""ip.asn(), ip.asn_org() and ip.country() against MaxMind's own test
databases (../shared/corpora/asn/maxmind/, TAP).

    python3 test_ipdb.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

1. Every network of GeoLite2-ASN-Test.json (the source the test database
   was built from: the expected answers): its first and last address
   give that network's ASN and organization, through classify-run
   --ipdb and the steps --explain shows.
2. Every network of GeoIP2-Country-Test.json: the country's ISO code, with
   an ASN database first (fields come from the first database that has
   them).
3. Addresses no database knows give 0 and "": TEST-NET-3, and every
   address without a database at all.
4. Every corrupt database of bad-data/ (and the broken test databases):
   refused with an error naming it, or, when libmaxminddb opens it,
   lookups that answer without a crash (the ASan build runs this too).
5. classify-serve --ipdb (the forward-auth listener behind HAProxy's
   recipe, the client named by X-Forwarded-For from a trusted loopback
   proxy): a client in AS15169 rejected with its ASN, one outside
   accepted; a database that is not one fails the start with its name.
"""

import ipaddress
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "serve"))
from realdata_common import Tap, parse_args_or_skip, run  # noqa: E402
import serve_common  # noqa: E402

SERVE_RULES = b'''const GOOGLE = [15169, 36040]
filter main(req: Request) {
    if req.client_ip.asn() in GOOGLE { reject "asn-google" }
    accept "asn-other"
}
'''

RULES = b'''filter main(req: Request) {
    let ip = req.header("user-agent").to_ip()
    let asn = ip.asn()
    let org = ip.asn_org()
    let country = ip.country()
    if asn == 0 && org == "" && country == "" { accept "unknown" }
    accept "known"
}
'''


def lookups(args, rules, dbs, addresses, tmp):
    """{address: (asn, org, country)} from --explain's steps, one run for
    all (each line of a --ua-file is a request whose User-Agent is the
    address)."""
    ua = os.path.join(tmp, "addresses.txt")
    with open(ua, "w") as f:
        f.write("".join(a + "\n" for a in addresses))
    cmd = [args.classify_run, rules, "--json", "--explain", "--ua-file", ua]
    for d in dbs:
        cmd += ["--ipdb", d]
    rc, out, err = run(cmd)
    if rc != 0:
        return None, "exit %d: %s" % (rc, err.decode("utf-8", "replace")[:2000])
    got = {}
    for line in out.decode("utf-8").splitlines():
        o = json.loads(line)
        vals = {}
        for step in o["explain"]:
            t = step["text"]
            for m in ("asn", "asn_org", "country"):
                pre = m + "() of "
                if t.startswith(pre) and " -> " in t:
                    vals[m] = t.rsplit(" -> ", 1)[1]
        got[o["user_agent"]] = (int(vals.get("asn", "0")),
                                json.loads(vals.get("asn_org", '""')),
                                json.loads(vals.get("country", '""')))
    return got, ""


def first_last(cidr):
    n = ipaddress.ip_network(cidr, strict=False)
    return [str(n.network_address), str(n.broadcast_address)]


def main():
    args = parse_args_or_skip()
    t = Tap()
    mm = args.corpus("asn", "maxmind")
    asn_db = os.path.join(mm, "test-data", "GeoLite2-ASN-Test.mmdb")
    cc_db = os.path.join(mm, "test-data", "GeoIP2-Country-Test.mmdb")
    if not os.path.isfile(asn_db):
        t.skip("MaxMind test databases", "not in the corpora at %s" % mm)
        t.finish()
    with tempfile.TemporaryDirectory() as tmp:
        src, rules = os.path.join(tmp, "ipdb.clf"), os.path.join(tmp, "ipdb.bin")
        with open(src, "wb") as f:
            f.write(RULES)
        rc, _, err = run([args.classifyc, src, "-o", rules])
        if not t.ok(rc == 0, "the lookup rules compile", err):
            t.finish()

        # 1. ASN database
        with open(os.path.join(mm, "source-data", "GeoLite2-ASN-Test.json")) as f:
            nets = [(k, v) for d in json.load(f) for k, v in d.items()]
        want = {}
        for cidr, rec in nets:
            for a in first_last(cidr):
                want[a] = (rec.get("autonomous_system_number", 0),
                           rec.get("autonomous_system_organization", ""))
        got, diag = lookups(args, rules, [asn_db], sorted(want), tmp)
        if t.ok(got is not None, "classify-run --ipdb GeoLite2-ASN-Test.mmdb", diag):
            bad = [(a, w, got.get(a)) for a, w in want.items() if got.get(a, (None, None))[:2] != w]
            t.ok(not bad, "the first and last address of each of the %d networks: ASN and "
                 "organization as the source data says (%d addresses)" % (len(nets), len(want)),
                 "\n".join("%s: want %r, got %r" % b for b in bad[:10]))

        # 2. country database, after the ASN one
        with open(os.path.join(mm, "source-data", "GeoIP2-Country-Test.json")) as f:
            cnets = [(k, v) for d in json.load(f) for k, v in d.items()]
        cwant = {}
        for cidr, rec in cnets:
            code = rec.get("country", {}).get("iso_code", "")
            for a in first_last(cidr):
                cwant[a] = code
        got, diag = lookups(args, rules, [asn_db, cc_db], sorted(cwant), tmp)
        if t.ok(got is not None, "classify-run with an ASN and a country database", diag):
            bad = [(a, w, got.get(a)) for a, w in cwant.items() if got.get(a, ("", "", None))[2] != w]
            t.ok(not bad, "%d networks of GeoIP2-Country-Test: the country's ISO code" % len(cnets),
                 "\n".join("%s: want %r, got %r" % b for b in bad[:10]))
            asn_too = [a for a in cwant if a in want and got.get(a, (0,))[0] != want[a][0]]
            t.ok(not asn_too, "and the ASN still comes from the ASN database", asn_too[:5])

        # 3. unknown addresses
        got, diag = lookups(args, rules, [asn_db, cc_db], ["203.0.113.7", "2001:db8::7"], tmp)
        t.ok(got is not None and all(v == (0, "", "") for v in got.values()),
             "TEST-NET-3 and 2001:db8::/32 are unknown: 0 and \"\"", got or diag)
        got, diag = lookups(args, rules, [], ["1.0.0.1"], tmp)
        t.ok(got == {"1.0.0.1": (0, "", "")}, "without a database every address is unknown",
             got or diag)

        # 4. corrupt databases
        bad_dbs = []
        for root, _, files in os.walk(os.path.join(mm, "bad-data")):
            bad_dbs += [os.path.join(root, f) for f in files if f.endswith(".mmdb")]
        bad_dbs += [os.path.join(mm, "test-data", f) for f in sorted(os.listdir(
            os.path.join(mm, "test-data"))) if "Broken" in f or "Invalid" in f]
        refused = answered = 0
        problems = []
        for db in sorted(bad_dbs):
            got, diag = lookups(args, rules, [db], ["1.1.1.1", "::1", "2001:db8::1",
                                                    "255.255.255.255"], tmp)
            if got is None:
                if "--ipdb: error: %s:" % db in diag and "exit 2" in diag:
                    refused += 1
                else:
                    problems.append("%s: %s" % (db, diag[:300]))
            else:
                answered += 1
        t.ok(not problems and refused + answered == len(bad_dbs) and refused > 0,
             "%d corrupt databases: %d refused with their name, %d answered without a crash"
             % (len(bad_dbs), refused, answered), "\n".join(problems))

        # 5. classify-serve
        serve = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.classify_run))),
                             "serve", "classify-serve")
        if not os.path.isfile(serve):
            t.skip("classify-serve --ipdb", "no classify-serve at %s" % serve)
        else:
            check_serve(t, args, serve, asn_db, tmp)

    t.finish()


def check_serve(t, args, serve, asn_db, tmp):
    src, rules = os.path.join(tmp, "serve.clf"), os.path.join(tmp, "serve.bin")
    with open(src, "wb") as f:
        f.write(SERVE_RULES)
    rc, _, err = run([args.classifyc, src, "-o", rules])
    if not t.ok(rc == 0, "classify-serve: the ASN rules compile", err):
        return
    port, admin = serve_common.free_port(), serve_common.free_port()
    p = serve_common.start_serve(serve, [rules, "--ipdb", asn_db, "--trust-proxy", "127.0.0.1",
                                         "--listen-auth", "haproxy=127.0.0.1:%d" % port,
                                         "--listen-admin", "127.0.0.1:%d" % admin, "--threads", "1"],
                                 tmp, admin_port=admin)
    try:
        got = {}
        for client in ("1.0.0.1", "2.125.160.216"):
            r = serve_common.request(port, "/", headers=[("X-Forwarded-For", client),
                                                          ("X-Forwarded-Method", "GET"),
                                                          ("X-Forwarded-Uri", "/")])
            got[client] = (r.header("x-classify-verdict"), r.header("x-classify-reason"))
        t.ok(got == {"1.0.0.1": ("reject", "asn-google"), "2.125.160.216": ("accept", "asn-other")},
             "classify-serve --ipdb: the client's ASN decides (1.0.0.1 is AS15169)", got)
    finally:
        p.stop()
    not_db = os.path.join(tmp, "not-a-db.mmdb")
    with open(not_db, "wb") as f:
        f.write(b"this is no MaxMind database\n" * 10)
    r = subprocess.run([serve, rules, "--ipdb", not_db, "--listen-auth",
                        "haproxy=127.0.0.1:%d" % serve_common.free_port()],
                       capture_output=True, text=True, timeout=30)
    t.ok(r.returncode == 2 and not_db in r.stderr,
         "classify-serve --ipdb NOT-A-DATABASE: exit 2 naming the file",
         "exit %d: %s" % (r.returncode, r.stderr[-400:]))


if __name__ == "__main__":
    main()
