#!/usr/bin/env python3
"""ngx_http_classify_module inside real nginx (TAP).

usage: run_nginx.py CLASSIFYC CLASSIFY_RUN MODULE.so SOURCE_ROOT CORPORA_DIR SANITIZE CC
       run_nginx.py --skip REASON

SANITIZE is meson's b_sanitize. In a sanitizer build the module and
libclassify need the sanitizer's runtime, which the stock nginx binary
lacks: nginx runs with the compiler CC's shared runtime in LD_PRELOAD, and
without leak detection (nginx does not free its configuration at exit; the
module's memory is checked by the unit and alloc tests), so that any other
report aborts a worker and fails the test.

Starts Debian's nginx (the stock binary) with the module on loopback ports,
in a temporary prefix of its own (configuration, pid file, logs), with the
rules of tests/nginx/rules.clf, and checks:
  - corpus requests (bots and browsers from bench/workload.py, or
    examples/requests/ without the corpora) get the status and the logged
    $classify_reason that classify-run gives the same bytes;
  - req.path is nginx's normalised URI (/x/../wp-admin/, %77p-admin, //);
  - $classify_reason and $classify_verdict reach an upstream (a loopback
    backend started here), a map and a server-level `if`;
  - classify off, classify_filter, classify_reject_status,
    classify_reject_location (a named location proxying to the backend),
    error_page to a page under `classify on`, and that a request is
    classified once across rewrites, internal redirects, named locations
    and subrequests; classify_trusted_proxies;
  - `nginx -s reload` with a new rules.bin under load: every request
    answered, and the new rules decide afterwards;
  - a corrupt rules.bin (and every other configuration error the module
    reports) fails `nginx -t` with the loader's message, and a reload with
    it leaves the running configuration serving.
nginx is stopped at the end, also when a check fails.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
from serve_common import (Backend, Conn, Proc, Tap, free_port, raw_exchange,  # noqa: E402
                          read_response, request, wait_port)

FORMAT_VERSION = None  # the rules-file format version, read from classifyc's output in main()
BROWSER_UA = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/124.0.0.0 Safari/537.36")
BOT_UA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
# What Chrome 124 sends on a navigation besides Host and User-Agent (the
# default policy checks them: stdlib/browsers.clf).
BROWSER_HEADERS = [
    ("sec-ch-ua", '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"'),
    ("sec-ch-ua-mobile", "?0"), ("sec-ch-ua-platform", '"Windows"'),
    ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ("Accept-Language", "en-US,en;q=0.9"), ("Upgrade-Insecure-Requests", "1"),
    ("Sec-Fetch-Site", "none"), ("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-User", "?1"),
    ("Sec-Fetch-Dest", "document")]
RELOAD_UA = "ReloadProbe/2.0"
NGINX_ENV = None  # the environment nginx runs in (sanitizer_env)
RELOAD_RULE = '    if req.header("user-agent").contains("ReloadProbe") { reject "new-rules" }\n'

CONF = """load_module {module};
worker_processes 2;
daemon off;
pid {d}/nginx.pid;
error_log {d}/logs/error.log info;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    log_format classify '$status|$classify_verdict|$classify_reason|$uri';
    map $classify_verdict $is_bot {{ reject 1; default 0; }}
    upstream backend {{ server 127.0.0.1:{backend}; }}

    classify_rules {d}/rules.bin;

    server {{
        listen 127.0.0.1:{main};
        access_log {d}/logs/classify.log classify;
        root {d}/www;
        classify on;

        location / {{ return 200 "page\\n"; }}
        location /off/ {{ classify off; return 200 "off\\n"; }}
        location /strict/ {{ classify_filter strict; return 200 "strict\\n"; }}
        location /teapot/ {{ classify_reject_status 418; return 200 "teapot\\n"; }}
        location = /robots.txt {{
            proxy_pass http://backend;
            proxy_set_header X-Classify-Reason $classify_reason;
        }}
        location /up/ {{
            proxy_pass http://backend;
            proxy_set_header X-Classify-Reason $classify_reason;
            proxy_set_header X-Classify-Verdict $classify_verdict;
        }}
        location /tarpit/ {{ classify_reject_location @tarpit; return 200 "real page\\n"; }}
        location @tarpit {{
            proxy_pass http://backend;
            proxy_set_header X-Classify-Reason $classify_reason;
        }}
        location /pretty/ {{ error_page 403 /blocked.html; return 200 "pretty\\n"; }}
        location = /blocked.html {{ }}
        location /map/ {{ add_header X-Is-Bot $is_bot always; return 200 "map\\n"; }}
        location /sub/ {{ auth_request /auth; return 200 "sub\\n"; }}
        location = /auth {{ internal; classify_filter deny_all; return 204; }}
        location /rw/ {{ rewrite ^ /strict/x last; }}
        location /chain/ {{ try_files /nonexistent @strict; }}
        location @strict {{ classify_filter strict; return 200 "chained\\n"; }}
        location /reload/ {{ return 200 "reload\\n"; }}
        location /late/ {{ classify off; try_files /nonexistent /trap; }}
        location = /trap {{ return 200 "trap\\n"; }}
    }}

    server {{
        listen 127.0.0.1:{lazy};
        classify on;
        if ($classify_reason = "probe") {{ return 410; }}
        location / {{ return 200 "lazy $classify_verdict\\n"; }}
    }}

    server {{
        listen 127.0.0.1:{trust};
        classify_trusted_proxies 127.0.0.0/8 ::1;
        classify on;
        classify_filter office;
        location / {{ return 200 "$classify_reason\\n"; }}
    }}
}}
"""


def raw_request(method, target, headers):
    lines = ["%s %s HTTP/1.1" % (method, target)] + ["%s: %s" % h for h in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")


def browser(target="/", extra=()):
    return raw_request("GET", target, [("Host", "localhost"), ("User-Agent", BROWSER_UA)] +
                       BROWSER_HEADERS + list(extra) + [("Connection", "close")])


def send(port, data, timeout=10.0):
    """One raw request on its own connection; the parsed response."""
    from serve_common import Response
    return Response(raw_exchange(port, data, timeout))


class Nginx:
    def __init__(self, nginx, d, conf):
        self.nginx, self.d, self.conf = nginx, d, conf
        self.proc = None
        self.seen = set()  # every worker seen, stopped at the end if orphaned

    def args(self, *more):
        return [self.nginx, "-p", self.d, "-c", self.conf, "-e", os.path.join(self.d, "logs", "error.log")] + list(more)

    def test(self):
        """`nginx -t`: (exit status, its output)."""
        p = subprocess.run(self.args("-t"), capture_output=True, timeout=60, env=NGINX_ENV)
        return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")

    def start(self, port):
        self.proc = Proc(self.args(), os.path.join(self.d, "nginx.out"), env=NGINX_ENV)
        return wait_port(port, proc=self.proc.p)

    def master_pid(self):
        with open(os.path.join(self.d, "nginx.pid")) as f:
            return int(f.read().strip())

    def workers(self):
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True).stdout
        pids = sorted(int(x) for x in out.split())
        self.seen.update(pids)
        return pids

    def reload(self):
        p = subprocess.run(self.args("-s", "reload"), capture_output=True, timeout=60, env=NGINX_ENV)
        return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")

    def error_log(self):
        try:
            with open(os.path.join(self.d, "logs", "error.log"), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None:
            self.seen.update(self.workers())
            self.proc.stop(signal.SIGQUIT, timeout=15)
            self.proc = None
        # Workers outlive a master that crashed: stop those still running.
        time.sleep(0.2)
        for pid in self.seen:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if f.read().startswith(b"nginx: worker"):
                        os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def compile_rules(classifyc, src_text, d, name):
    src = os.path.join(d, name + ".clf")
    with open(src, "w") as f:
        f.write(src_text)
    out = os.path.join(d, name + ".bin")
    p = subprocess.run([classifyc, "-I", os.path.join(ROOT, "stdlib"), src, "-o", out],
                       capture_output=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("classifyc %s: %s" % (name, p.stderr.decode()))
    return out


def log_lines(d):
    with open(os.path.join(d, "logs", "classify.log")) as f:
        return [line.rstrip("\n").split("|") for line in f]


def wait_log(d, n, timeout=5.0):
    """The access log once it has n lines (the log is written after the
    response, so a client may see the response first)."""
    end = time.time() + timeout
    while True:
        lines = log_lines(d)
        if len(lines) >= n or time.time() > end:
            return lines
        time.sleep(0.02)


# ---------------------------------------------------------------- corpus

def corpus_requests(corpora, tap):
    """[(label, raw request bytes)]: a sample of the benchmark's corpus
    requests, or the bundled examples when the corpora are absent."""
    try:
        import workload
        uas = workload.load_uas(corpora)
        reqs = workload.requests(uas)[::29]
        out = []
        for method, path, query, hdrs in reqs:
            hdrs = [h for h in hdrs if h[0].lower() != "connection"] + [("Connection", "keep-alive")]
            if any(ord(c) < 0x20 or c == "\x7f" for _, v in hdrs for c in v):
                continue
            out.append(("corpus %s %s" % (path, hdrs[1][1][:60]),
                        raw_request(method, path + ("?" + query if query else ""), hdrs)))
        return out, "%d corpus requests (bench/workload.py, every 29th)" % len(out)
    except Exception as e:  # the corpora or PyYAML are missing
        tap.note("corpora not usable (%s): examples/requests instead" % e)
        d = os.path.join(ROOT, "examples", "requests")
        out = []
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), "rb") as f:
                data = f.read().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            head = data.split(b"\r\n\r\n")[0]
            head = re.sub(rb"(?im)^connection:.*\r\n?", b"", head + b"\r\n").rstrip(b"\r\n")
            out.append((name, head + b"\r\nConnection: keep-alive\r\n\r\n"))
        return out, "%d example requests" % len(out)


def reference_verdicts(classify_run, rules, reqs, d):
    """classify-run on the same bytes: [(verdict, reason)]."""
    import json
    files = []
    for i, (_, data) in enumerate(reqs):
        p = os.path.join(d, "ref-%d.http" % i)
        with open(p, "wb") as f:
            f.write(data)
        files.append(p)
    p = subprocess.run([classify_run, rules, "--json", "--remote-addr", "127.0.0.1", "--request"] + files,
                       capture_output=True, timeout=300)
    out = [json.loads(line) for line in p.stdout.decode().splitlines()]
    return [(o["verdict"], o.get("reason") or "") for o in out], p


def check_corpus(t, port, d, classify_run, rules, corpora):
    reqs, what = corpus_requests(corpora, t)
    ref, p = reference_verdicts(classify_run, rules, reqs, d)
    if not t.ok(len(ref) == len(reqs), "classify-run classifies the %s" % what, p.stderr):
        return
    before = len(log_lines(d))
    c = Conn(port, timeout=10)
    got = []
    try:
        for _, data in reqs:
            c.sendall(data)
            got.append(read_response(c))
    finally:
        c.close()
    lines = wait_log(d, before + len(reqs))[before:]
    bad = []
    for (label, _), (verdict, reason), resp, line in zip(reqs, ref, got, lines + [None] * len(reqs)):
        want_status = 403 if verdict == "reject" else 200
        logged = (line[1], line[2]) if line else None
        want_log = (verdict, reason or "-")
        if resp is None or resp.status != want_status or logged != want_log:
            bad.append("%s: want %d %s, got %s %s" % (label, want_status, want_log,
                                                      resp.status if resp else None, logged))
    rejected = sum(1 for v, _ in ref if v == "reject")
    t.ok(not bad and len(got) == len(reqs),
         "%s on one keep-alive connection: status and logged $classify_verdict/$classify_reason "
         "match classify-run (%d rejected, %d accepted)" % (what, rejected, len(ref) - rejected),
         "\n".join(bad[:30]))
    t.ok(rejected > 0 and len(ref) - rejected > 0, "the sample holds both bots and browsers",
         "%d rejected of %d" % (rejected, len(ref)))


# ---------------------------------------------------------------- behaviour

def check_paths(t, port, classify_run, rules, d):
    """req.path is nginx's normalised URI: the raw request target would not
    match /wp-admin/ for these."""
    for target in ["/wp-admin/", "/x/../wp-admin/", "/%77p-admin/install.php", "//wp-admin//",
                   "/a/./b/../../wp-admin/", "/x/%2e%2e/wp-admin/"]:
        r = send(port, browser(target))
        t.eq(r.status, 403, "path %s: rejected as probe (nginx's normalised path)" % target)
    line = wait_log(d, 0)[-1]
    t.eq(line[2], "probe", "... and logged with the reason probe")
    f = os.path.join(d, "dotdot.http")
    with open(f, "wb") as fh:
        fh.write(browser("/x/../wp-admin/"))
    p = subprocess.run([classify_run, rules, "--request", f], capture_output=True)
    t.eq(p.stdout, b"accept\n", "the raw target /x/../wp-admin/ would have been accepted "
                                "(classify-run on the same bytes)")
    r = send(port, browser("/?q=1"))
    t.eq((r.status, r.body), (200, b"page\n"), "a browser with a query string gets the page")


def check_locations(t, port, backend, d):
    r = send(port, browser("/"))
    t.eq((r.status, r.body), (200, b"page\n"), "browser: 200 and the page")
    bot = raw_request("GET", "/", [("Host", "localhost"), ("User-Agent", BOT_UA), ("Connection", "close")])
    r = send(port, bot)
    t.eq(r.status, 403, "GPTBot: 403 (classify_reject_status default)")
    line = wait_log(d, 0)[-1]
    # From 127.0.0.1, outside OpenAI's published ranges, the GPTBot claim
    # is forged (stdlib/verified_bots.clf, default.clf step 3).
    t.ok(line[1] == "reject" and line[2] == "forged:gptbot",
         "GPTBot: the access log has reject and the reason forged:gptbot", line)

    r = send(port, bot.replace(b"GET / ", b"GET /off/x "))
    t.eq((r.status, r.body), (200, b"off\n"), "classify off in a location: GPTBot gets the page")
    t.eq(wait_log(d, 0)[-1][1:3], ["-", "-"], "classify off: $classify_verdict and $classify_reason are empty")

    r = send(port, bot.replace(b"GET / ", b"GET /teapot/ "))
    t.eq(r.status, 418, "classify_reject_status 418 in a location")

    r = send(port, browser("/strict/x"))
    t.eq(r.status, 403, "classify_filter strict: a browser without the key is rejected")
    t.eq(wait_log(d, 0)[-1][2], "strict", "... with strict's reason")
    r = send(port, browser("/strict/x", [("X-Test-Key", "letmein")]))
    t.eq((r.status, r.body), (200, b"strict\n"), "classify_filter strict: the key lets it in")

    n = len(backend.seen)
    r = send(port, browser("/up/page"))
    t.eq(r.status, 200, "proxied: a browser reaches the backend")
    seen = backend.seen[n:]
    t.ok(seen and seen[-1][2].get("X-Classify-Verdict") == "accept" and "X-Classify-Reason" not in seen[-1][2],
         "proxy_set_header: the upstream gets X-Classify-Verdict accept and no empty reason header",
         seen[-1][2] if seen else "no request")
    n = len(backend.seen)
    r = send(port, bot.replace(b"GET / ", b"GET /robots.txt "))
    seen = backend.seen[n:]
    t.ok(r.status == 200 and seen and seen[-1][2].get("X-Classify-Reason") == "well-known-path",
         "proxy_set_header X-Classify-Reason $classify_reason: GPTBot's robots.txt is accepted and "
         "the upstream gets the reason well-known-path", seen[-1][2] if seen else r)

    n = len(backend.seen)
    r = send(port, bot.replace(b"GET / ", b"GET /tarpit/page "))
    seen = backend.seen[n:]
    t.ok(r.status == 200 and r.body == b"backend page /tarpit/page\n",
         "classify_reject_location @tarpit: a rejected request is served by the named location", r)
    t.ok(seen and seen[-1][2].get("X-Classify-Reason", "") == "forged:gptbot",
         "... which proxies it with its reason", seen[-1][2] if seen else "no request")
    r = send(port, browser("/tarpit/page"))
    t.eq((r.status, r.body), (200, b"real page\n"), "classify_reject_location: a browser gets the real page")

    r = send(port, bot.replace(b"GET / ", b"GET /pretty/ "))
    t.eq((r.status, r.body), (403, b"blocked\n"),
         "error_page 403 to a page under classify on: the page, not a loop (classified once)")

    r = send(port, bot.replace(b"GET / ", b"GET /map/ "))
    t.eq(r.header("x-is-bot"), "1", "map $classify_verdict: 1 for a bot (add_header always)")
    r = send(port, browser("/map/"))
    t.eq(r.header("x-is-bot"), "0", "map $classify_verdict: 0 for a browser")

    r = send(port, browser("/sub/"))
    t.eq((r.status, r.body), (200, b"sub\n"), "auth_request: the subrequest to a deny_all location is "
                                              "not classified")
    r = send(port, browser("/rw/"))
    t.eq((r.status, r.body), (200, b"strict\n"), "rewrite ... last into a classify_filter strict location: "
                                                 "classified once, by the first location")
    r = send(port, bot.replace(b"GET / ", b"GET /late/ "))
    t.eq(r.status, 403, "classify off, then an internal redirect (try_files) to a location with classify on: "
                        "classified there")
    r = send(port, browser("/late/"))
    t.eq((r.status, r.body), (200, b"trap\n"), "... and a browser gets that location's page")
    r = send(port, browser("/chain/"))
    t.eq((r.status, r.body), (200, b"chained\n"), "try_files to a named location with another filter: "
                                                  "classified once")


def check_lazy(t, port):
    r = send(port, browser("/wp-admin/"))
    t.eq(r.status, 410, "a server-level if on $classify_reason classifies before any location")
    r = send(port, browser("/x"))
    t.eq((r.status, r.body), (200, b"lazy accept\n"), "... and a browser gets the page with its verdict")
    r = send(port, raw_request("GET", "/x", [("Host", "localhost"), ("User-Agent", BOT_UA),
                                            ("Connection", "close")]))
    t.eq(r.status, 403, "... and the verdict is still enforced in the location")


def check_trust(t, trust_port, main_port):
    xff = [("X-Forwarded-For", "192.0.2.7")]
    r = send(trust_port, browser("/", xff))
    t.eq(r.body, b"office\n", "classify_trusted_proxies: the client in X-Forwarded-For (192.0.2.7)")
    r = send(trust_port, browser("/"))
    t.eq(r.body, b"outside\n", "classify_trusted_proxies: without the header, the peer")


# ---------------------------------------------------------------- reload

class Load:
    """Requests in a loop on new connections until stopped, from a few
    threads; every answer recorded."""

    def __init__(self, port, data, threads=4):
        self.port, self.data = port, data
        self.results, self.errors = [], []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]
        for th in self.threads:
            th.start()

    def run(self):
        while not self.stopping.is_set():
            try:
                raw = raw_exchange(self.port, self.data, timeout=10)
                head = raw.split(b"\r\n", 1)[0]
                m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
                with self.lock:
                    if m:
                        self.results.append((time.time(), int(m.group(1))))
                    else:
                        self.errors.append((time.time(), raw[:200]))
            except OSError as e:
                with self.lock:
                    self.errors.append((time.time(), repr(e)))

    def stop(self):
        self.stopping.set()
        for th in self.threads:
            th.join(30)


def check_reload(t, ngx, port, d, classifyc, src):
    rules = os.path.join(d, "rules.bin")
    probe = raw_request("GET", "/reload/", [("Host", "localhost"), ("User-Agent", RELOAD_UA),
                                           ("Connection", "close")])
    r = send(port, probe)
    t.eq(r.status, 200, "before the reload: the old rules accept " + RELOAD_UA)
    new = compile_rules(classifyc, src.replace("    // RELOAD-MARKER", RELOAD_RULE + "    //"), d, "rules-v2")
    old_workers = ngx.workers()
    load = Load(port, probe)
    time.sleep(1.0)
    os.replace(new, rules)  # atomically, as a deployment should
    rc, out = ngx.reload()
    t.ok(rc == 0, "nginx -s reload with the new rules.bin", out)
    end = time.time() + 20
    while time.time() < end and not load.errors:
        with load.lock:
            if any(s == 403 for _, s in load.results[-20:]) and \
               sum(1 for _, s in load.results if s == 403) >= 200:
                break
        time.sleep(0.05)
    time.sleep(0.5)
    load.stop()
    statuses = [s for _, s in load.results]
    switched = [i for i, s in enumerate(statuses) if s == 403]
    t.ok(not load.errors, "under load (%d requests on new connections, 4 threads): no failed request"
         % (len(statuses) + len(load.errors)), load.errors[:5])
    t.ok(set(statuses) <= {200, 403}, "every answer is the old or the new verdict", sorted(set(statuses)))
    t.ok(switched and statuses.count(200) > 0 and all(s == 403 for s in statuses[switched[-1] - 100:])
         if len(switched) > 100 else False,
         "the new rules decide after the reload (%d answers by the old rules, %d by the new)"
         % (statuses.count(200), statuses.count(403)))
    end = time.time() + 20
    while time.time() < end and set(ngx.workers()) & set(old_workers):
        time.sleep(0.1)
    t.ok(not set(ngx.workers()) & set(old_workers), "the old workers exit", (old_workers, ngx.workers()))
    line = None
    r = send(port, probe)
    line = wait_log(d, 0)[-1]
    t.eq((r.status, line[2]), (403, "new-rules"), "after the reload: " + RELOAD_UA + " rejected, "
                                                  "reason new-rules")


def check_corrupt_reload(t, ngx, port, d):
    rules = os.path.join(d, "rules.bin")
    with open(rules, "rb") as f:
        good = f.read()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0x40
    with open(rules + ".tmp", "wb") as f:
        f.write(bad)
    os.replace(rules + ".tmp", rules)
    rc, out = ngx.test()
    t.ok(rc != 0 and re.search(r'\[emerg\] classify_rules "%s": checksum mismatch: the file is corrupt '
                               r'\(XXH3-64 [0-9a-f]{16}, stored [0-9a-f]{16}\) in %s:\d+' %
                               (re.escape(rules), re.escape(ngx.conf)), out),
         "nginx -t with a corrupt rules.bin fails with the loader's message and the directive's line", out)
    workers = ngx.workers()
    log_before = len(ngx.error_log())
    rc, out = ngx.reload()
    end = time.time() + 10
    while time.time() < end and "checksum mismatch" not in ngx.error_log()[log_before:]:
        time.sleep(0.05)
    t.ok("checksum mismatch" in ngx.error_log()[log_before:],
         "nginx -s reload with it: the master logs the loader's message", ngx.error_log()[log_before:][-2000:])
    time.sleep(0.5)
    t.eq(ngx.workers(), workers, "... and keeps the running workers")
    r = send(port, browser("/"))
    t.eq((r.status, r.body), (200, b"page\n"), "... which still serve: a browser gets the page")
    r = send(port, raw_request("GET", "/reload/", [("Host", "localhost"), ("User-Agent", RELOAD_UA),
                                                  ("Connection", "close")]))
    t.eq(r.status, 403, "... with the rules loaded before (new-rules)")
    with open(rules + ".tmp", "wb") as f:
        f.write(good)
    os.replace(rules + ".tmp", rules)


# ---------------------------------------------------------------- nginx -t

def check_config_errors(t, nginx, module, d, rules, helper_rules):
    """Each configuration error the module reports, from `nginx -t`."""
    base = ("load_module %s;\npid %s/t.pid;\nevents {}\nhttp {\n%%s\n}\n" % (module, d))
    cases = [
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify on; classify_filter helper; }" % rules,
         r'classify_filter "helper": filter \'helper\' can end without a verdict \(it may pass, or reach '
         r'its end\): only a filter that accepts or rejects on every path can decide a request \(rules "%s"\) '
         r'in \S+t0.conf:5' % re.escape(rules),
         "classify_filter of a filter that may pass"),
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify on;\nclassify_filter nope; }" % rules,
         r"classify_filter \"nope\": no filter 'nope' in the file the rules were compiled from \(entry "
         r"filters: main, strict, deny_all, office\)",
         "classify_filter of an absent filter names the entries"),
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify on; "
         "classify_reject_location @missing; }" % rules,
         r'classify_reject_location "@missing": no such named location in its server \(\S+t2.conf:5\) '
         r'in \S+t2.conf:5',
         "classify_reject_location of a missing named location"),
        ("classify_reject_location tarpit;",
         r'classify_reject_location "tarpit": must name a named location \("@name"\)',
         "classify_reject_location without @"),
        ("server { listen 127.0.0.1:1; classify on; }",
         r'"classify on" in a server without "classify_rules" \(the server in \S+t4.conf:5\)',
         "classify on without classify_rules"),
        ("classify_rules \"%s/none.bin\"; server { listen 127.0.0.1:1; }" % d,
         r'classify_rules "%s/none.bin": open\(\) failed \(2: No such file or directory\) in \S+t5.conf:5'
         % re.escape(d),
         "a missing rules file"),
        ("classify_rules \"%s\"; classify_trusted_proxies 10.0.0.0/33;" % rules,
         r"classify_trusted_proxies: trusted proxy '10.0.0.0/33' is not an IP address or CIDR prefix",
         "a bad classify_trusted_proxies value (the library's parser)"),
        ("classify_reject_status 200;",
         r'classify_reject_status "200": must be a status between 400 and 599',
         "classify_reject_status outside 400-599"),
        ("classify_reject_status 403; classify_reject_location @x;",
         r'"classify_reject_location" directive conflicts with "classify_reject_status"',
         "classify_reject_status and classify_reject_location together"),
        ("classify_rules \"%s\"; classify_rules \"%s\";" % (rules, rules),
         r'"classify_rules" directive is duplicate', "classify_rules twice"),
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; }" % helper_rules,
         r'classify_rules "%s": unsupported format version 3 \(this library reads version %d\)' %
         (re.escape(helper_rules), FORMAT_VERSION), "a rules file of another format version"),
    ]
    check_nginx_t_errors(t, nginx, d, base, cases, "t")
    conf = os.path.join(d, "t-ok.conf")
    with open(conf, "w") as f:
        f.write(base % ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify on; "
                        "classify_filter strict; location @x {} location / { classify_reject_location @x; } }"
                        % rules))
    p = subprocess.run([nginx, "-t", "-p", d, "-c", conf, "-e", os.path.join(d, "logs", "t.log")],
                       capture_output=True, timeout=60, env=NGINX_ENV)
    t.ok(p.returncode == 0, "nginx -t: a good configuration passes", p.stderr)


def check_nginx_t_errors(t, nginx, d, base, cases, prefix):
    """Each case (text for `base % text`, a regex, its name) in a
    configuration of its own, D/PREFIXi.conf: `nginx -t` must fail with
    output the regex finds."""
    for i, (text, want, name) in enumerate(cases):
        conf = os.path.join(d, "%s%d.conf" % (prefix, i))
        with open(conf, "w") as f:
            f.write(base % text)
        p = subprocess.run([nginx, "-t", "-p", d, "-c", conf, "-e", os.path.join(d, "logs", "t.log")],
                           capture_output=True, timeout=60, env=NGINX_ENV)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        t.ok(p.returncode != 0 and re.search(want, out), "nginx -t: " + name, out)


def sanitizer_env(sanitize, cc):
    """(environment for nginx, None) or (None, why nginx cannot run the
    module) for meson's b_sanitize value."""
    env = dict(os.environ)
    if sanitize in ("", "none"):
        return env, None
    kinds = set(sanitize.split(","))
    if "thread" in kinds or "memory" in kinds:
        return None, "a %s build: its runtime cannot be preloaded into the stock nginx" % sanitize
    clang = "clang" in os.path.basename(cc)
    if "address" in kinds:
        lib = "libclang_rt.asan-x86_64.so" if clang else "libasan.so"
    else:
        lib = "libclang_rt.ubsan_standalone-x86_64.so" if clang else "libubsan.so"
    p = subprocess.run([cc, "-print-file-name=" + lib], capture_output=True)
    path = p.stdout.decode().strip()
    if p.returncode != 0 or not os.path.isabs(path) or not os.path.exists(path):
        return None, "%s build: %s's runtime %s not found" % (sanitize, cc, lib)
    env["LD_PRELOAD"] = path
    opts = [o for o in env.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")]
    env["ASAN_OPTIONS"] = ":".join(opts + ["detect_leaks=0"])
    return env, None


def doc_block(tag):
    """The first ```TAG block of docs/nginx.md."""
    with open(os.path.join(ROOT, "docs", "nginx.md"), encoding="utf-8") as f:
        m = re.search(r"^```%s\n(.*?)^```$" % tag, f.read(), re.S | re.M)
    return m.group(1) if m else None


def check_doc_example(t, nginx, module, classifyc, d):
    """docs/nginx.md's complete example: its rules compile, and its
    configuration passes nginx -t (with this build's paths)."""
    rules_src, conf = doc_block("clf"), doc_block("nginx")
    if not t.ok(rules_src and conf, "docs/nginx.md has its example rules and configuration"):
        return
    try:
        rules = compile_rules(classifyc, rules_src, d, "doc")
    except RuntimeError as e:
        t.ok(False, "docs/nginx.md: the example rules compile", e)
        return
    conf = conf.replace("load_module modules/ngx_http_classify_module.so;", "load_module %s;" % module)
    conf = conf.replace("/etc/nginx/rules.bin", rules).replace("/var/log/nginx/", d + "/logs/")
    conf = conf.replace("events {}", "pid %s/doc.pid;\nevents {}" % d)
    path = os.path.join(d, "doc.conf")
    with open(path, "w") as f:
        f.write(conf)
    p = subprocess.run([nginx, "-t", "-p", d, "-c", path, "-e", os.path.join(d, "logs", "t.log")],
                       capture_output=True, timeout=60, env=NGINX_ENV)
    t.ok(p.returncode == 0, "docs/nginx.md: the example configuration passes nginx -t", p.stderr)


def find_nginx(sanitize, cc):
    """(the nginx binary, None), with NGINX_ENV set for meson's b_sanitize
    value and the compiler; or (None, why nginx cannot run the module)."""
    global NGINX_ENV
    NGINX_ENV, why = sanitizer_env(sanitize, cc)
    if NGINX_ENV is None:
        return None, why
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        return None, "nginx is not installed (apt-get install nginx)"
    return nginx, None


def main(argv):
    t = Tap()
    if len(argv) == 3 and argv[1] == "--skip":
        print("1..0 # SKIP " + argv[2])
        return 0
    if len(argv) != 8:
        sys.stderr.write(__doc__)
        return 2
    nginx, why = find_nginx(argv[6], argv[7])
    if nginx is None:
        print("1..0 # SKIP " + why)
        return 0
    classifyc, classify_run, module = (os.path.abspath(a) for a in argv[1:4])
    corpora = argv[5]
    with open(os.path.join(HERE, "rules.clf")) as f:
        src = f.read()
    d = tempfile.mkdtemp(prefix="classify-nginx-")
    backend = Backend()
    ngx = None
    try:
        # nginx's workers run as nobody when the tests run as root
        os.chmod(d, 0o755)
        for sub in ("logs", "tmp", "www"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(os.path.join(d, "www", "blocked.html"), "w") as f:
            f.write("blocked\n")
        rules = compile_rules(classifyc, src, d, "rules")
        v3 = os.path.join(d, "v3.bin")
        with open(rules, "rb") as f, open(v3, "wb") as g:
            b = bytearray(f.read())
            global FORMAT_VERSION
            FORMAT_VERSION = int.from_bytes(b[8:12], "little")  # what classifyc writes
            b[8] = 3
            g.write(b)
        check_config_errors(t, nginx, module, d, rules, v3)
        check_doc_example(t, nginx, module, classifyc, d)

        ports = {"main": free_port(), "lazy": free_port(), "trust": free_port()}
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(module=module, d=d, backend=backend.port, **ports))
        ngx = Nginx(nginx, d, conf)
        rc, out = ngx.test()
        if not t.ok(rc == 0, "nginx -t: the test configuration loads the module and the rules", out):
            return 1
        if not t.ok(ngx.start(ports["main"]) and wait_port(ports["lazy"]) and wait_port(ports["trust"]),
                    "nginx starts with the module, 2 workers", ngx.error_log()):
            return 1
        t.ok("[alert]" not in ngx.error_log() and "[emerg]" not in ngx.error_log(),
             "no alert in the error log (each worker made its context)", ngx.error_log())
        check_corpus(t, ports["main"], d, classify_run, rules, corpora)
        check_paths(t, ports["main"], classify_run, rules, d)
        check_locations(t, ports["main"], backend, d)
        check_lazy(t, ports["lazy"])
        check_trust(t, ports["trust"], ports["main"])
        check_reload(t, ngx, ports["main"], d, classifyc, src)
        check_corrupt_reload(t, ngx, ports["main"], d)
        t.ok("[alert]" not in ngx.error_log() and "[crit]" not in ngx.error_log(),
             "no alert or crit in the error log at the end", ngx.error_log()[-3000:])
    finally:
        if ngx is not None:
            ngx.stop()
        backend.stop()
        rc = finish(t, d)
    return rc


def finish(t, d):
    """The end of a run: the TAP plan, the temporary prefix removed (kept
    when a check failed, for inspection); the exit status."""
    t.done()
    if all(not line.startswith("not ok") for line in t.lines):
        shutil.rmtree(d, ignore_errors=True)
        return 0
    print("# kept %s for inspection" % d)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
