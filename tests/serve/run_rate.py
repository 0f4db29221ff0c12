#!/usr/bin/env python3
"""examples/rate/ behind a real Caddy (TAP).

    python3 run_rate.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Compiles examples/rate/site.clf, starts classify-serve with it (one
store, --state-bytes 1M), a site backend and Caddy with the example's own
Caddyfile (only the addresses and the site's folder substituted), then:
robots.txt is served by Caddy to everyone; a reader gets the site; a
scraper that fetches the trap is rejected, then rejected as a browser
from the same address, also after a rules reload (SIGHUP: the store
outlives it), while another address is not; one address's 121st
cookieless page in a minute is rejected and a request with a cookie is
not; /metrics counts the store's entries. Clients come from 127.0.0.2-4
(classify-serve trusts only the proxy at 127.0.0.1). Without Caddy the
test reports itself skipped.
"""

import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (BROWSER_UA, Backend, Tap, clear_of_window_end, compile_rules,  # noqa: E402
                          free_port, metrics, request, start_serve, substitute, wait_port)
from run_stances import caddy_proc  # noqa: E402

SCRAPER_UA = "Mozilla/5.0 (compatible; ExampleScraper/1.0)"


def main():
    classifyc, serve, root = sys.argv[1:4]
    t = Tap()
    if shutil.which("caddy") is None:
        print("1..0 # SKIP caddy is not installed")
        return
    tmp = tempfile.mkdtemp(prefix="classify-rate-")
    site = Backend()
    ex = os.path.join(root, "examples", "rate")
    rules = os.path.join(tmp, "rate.bin")
    compile_rules(classifyc, root, os.path.join(ex, "site.clf"), rules)
    auth, admin, port = free_port(), free_port(), free_port()
    sp = start_serve(serve, [rules, "--listen-auth", "caddy=127.0.0.1:%d" % auth, "--listen-admin",
                             "127.0.0.1:%d" % admin, "--trust-proxy", "127.0.0.1", "--threads", "2",
                             "--state-bytes", "1M", "--watch-interval", "0"],
                     tmp, "serve-rate", admin_port=admin)
    with open(os.path.join(ex, "Caddyfile")) as f:
        conf = substitute(f.read(), {"example.com": "http://127.0.0.1:%d" % port,
                                     "classify:42070": "127.0.0.1:%d" % auth,
                                     "backend:8080": "127.0.0.1:%d" % site.port, "/srv/site": ex})
    p = caddy_proc(tmp, "rate", conf)
    try:
        if not t.ok(wait_port(port, proc=p.p), "caddy starts with the example's Caddyfile", p.output()):
            t.done()
            return

        def get(path, source, ua=BROWSER_UA, headers=()):
            n = len(site.seen)
            r = request(port, path, ua=ua, headers=headers, source=source)
            return r, len(site.seen) - n

        r, hits = get("/robots.txt", "127.0.0.3", SCRAPER_UA)
        t.ok(r.status == 200 and b"Disallow: /clf-trap/" in r.body and hits == 0,
             "robots.txt comes from Caddy, with the trap's Disallow", repr(r))
        r, hits = get("/blog/post", "127.0.0.2")
        t.ok(r.status == 200 and hits == 1, "a reader gets the site", repr(r))
        r, hits = get("/clf-trap/", "127.0.0.3", SCRAPER_UA)
        t.ok(r.status == 403 and r.header("x-classify-reason") == "rate:trap" and hits == 0,
             "the scraper that fetches the trap: 403 rate:trap", repr(r))
        r, hits = get("/blog/post", "127.0.0.3")
        t.ok(r.status == 403 and r.header("x-classify-reason") == "rate:trapped",
             "the same address as a browser: 403 rate:trapped", repr(r))
        r, hits = get("/robots.txt", "127.0.0.3", SCRAPER_UA)
        t.ok(r.status == 200 and hits == 0, "robots.txt still reaches the trapped client", repr(r))
        before = metrics(admin).get('classify_reloads_total{result="success"}', 0)
        sp.signal(signal.SIGHUP)
        deadline = time.time() + 20
        while time.time() < deadline and metrics(admin).get('classify_reloads_total{result="success"}', 0) <= before:
            time.sleep(0.1)
        r, hits = get("/blog/post", "127.0.0.3")
        t.ok(r.status == 403 and r.header("x-classify-reason") == "rate:trapped",
             "after a rules reload the mark is still there", repr(r) + sp.output())
        r, hits = get("/blog/post", "127.0.0.2")
        t.ok(r.status == 200 and hits == 1, "another address of the network is not trapped", repr(r))
        # 121 requests across a minute's end count fewer than 121, and none
        # is rejected (seen under TSan): at least 30 s of the minute left.
        clear_of_window_end(60, 30)
        statuses = [get("/page/%d" % i, "127.0.0.4", "curl/8.5.0")[0] for i in range(121)]
        first_403 = next((i for i, r in enumerate(statuses) if r.status == 403), None)
        t.ok(first_403 == 120 and statuses[120].header("x-classify-reason") == "rate:address",
             "one address's 121st cookieless page in a minute: 403 rate:address",
             "first 403 at %r: %r" % (first_403, statuses[first_403] if first_403 is not None else None))
        r, hits = get("/page/x", "127.0.0.4", "curl/8.5.0", [("Cookie", "session=1")])
        t.ok(r.status == 200 and hits == 1, "with a cookie it is counted, not rejected", repr(r))
        m = metrics(admin)
        t.ok(m.get("classify_state_bytes") == 1 << 20 and m.get('classify_state_entries{of="used"}', 0) == 4
             and m.get("classify_state_busy_total") == 0,
             "/metrics: the store's size, and its 4 entries (a mark, the /24, two addresses)", repr({k: v for k, v in m.items() if "state" in k}))
    finally:
        p.stop(timeout=10)
        sp.stop(timeout=10)
        site.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()


if __name__ == "__main__":
    main()
