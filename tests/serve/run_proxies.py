#!/usr/bin/env python3
"""classify-serve behind real proxies (TAP on stdout).

    python3 run_proxies.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Compiles examples/main.clf, starts a backend and two classify-serve
processes on loopback ports (one with examples/main.clf and an access
log, one with rules that look only at req.client_ip), then for each proxy
(Caddy pass-through with the issue's Caddyfile, Caddy forward_auth, nginx
auth_request, HAProxy with a Lua action) writes its config from
tests/serve/recipes/ (the files docs/classify-serve.md shows verbatim;
only addresses are replaced), starts it in a temporary directory, and
sends requests through it:

- a bot gets the rejection and the reason header, a browser gets the
  backend's page, and an accepted POST reaches the backend with its body
  (a known failure, TAP "# TODO", with Caddy 2.6's handle_response:
  docs/classify-serve.md);
- a client that adds X-Forwarded-Uri, X-Forwarded-Method, X-Original-URI,
  X-Original-Method, X-Forwarded-For and X-Real-IP of its own gets the
  verdict for the request the proxy serves: the method and URI the rules
  saw (the access log) are those the backend received, and req.client_ip
  is the client's address (the client connects from 127.0.0.2 or
  127.0.0.3; only the proxies' 127.0.0.1 is a trusted proxy);
- URIs that a backend may normalise (dot segments, percent-encoding,
  absolute-form) reach the rules as the backend receives them;
- a request classify-serve refuses (431: too many headers) is not let
  through to the backend.

Traefik is not in Debian: its forwardAuth request (what Traefik 2 and 3
send, from their source: pkg/middlewares/auth/forward.go and
forwardedheaders) is built here and sent directly. A proxy whose binary is
missing is reported as skipped (run.sh installs them all). Also checks
that the docs show each recipe.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (BOT_UA, BROWSER_UA, Backend, Proc, Response, Tap,  # noqa: E402
                          compile_rules, free_port, raw_exchange, read_recipe, request,
                          start_serve, substitute, wait_port)

# The client's addresses: neither is a trusted proxy (only 127.0.0.1 is,
# the address the proxies connect to classify-serve from).
CLIENT_IP, OTHER_CLIENT_IP = "127.0.0.2", "127.0.0.3"

# Rules that look only at the client address the library derived.
CLIENT_IP_RULES = """const FORGED = [198.51.100.0/24, 203.0.113.0/24]
filter main(req: Request) {
    if req.client_ip in FORGED { reject "forged-client-ip" }
    if req.client_ip == 127.0.0.3 { reject "client-127.0.0.3" }
    if req.client_ip != 127.0.0.2 { reject "not-the-client" }
    accept
}
"""


def spoofed(uri, method, xff="198.51.100.7", real_ip="203.0.113.8"):
    """Every forwarding header a forward-auth or pass-through listener
    could read, as a client would forge them."""
    return [("X-Forwarded-Uri", uri), ("X-Forwarded-Method", method),
            ("X-Original-URI", uri), ("X-Original-Method", method),
            ("X-Forwarded-For", xff), ("X-Real-IP", real_ip)]


# A proxy that honoured it would drop the headers it sets (RFC 9110,
# section 7.6.1: the Connection options are hop-by-hop).
HOP_BY_HOP = ("Connection", "X-Forwarded-For, X-Real-IP, X-Forwarded-Uri, X-Forwarded-Method, "
              "X-Original-URI, X-Original-Method")


def wait_log(path, marker, timeout=3.0):
    """The access-log lines whose uri holds marker (the line is written
    just after the answer, so it may trail the proxy's answer)."""
    end = time.time() + timeout
    while True:
        with open(path) as f:
            lines = [json.loads(line) for line in f if marker in line]
        if lines or time.time() > end:
            return lines
        time.sleep(0.02)


def seen_with(backend, marker):
    return [(m, p) for m, p, _ in backend.seen if marker in p]


def check_through(t, name, port, backend, reject_status=403, accept_reason_header=None,
                  post_todo=None):
    """The requests every proxy must get right."""
    before = len(backend.seen)
    r = request(port, "/article", ua=BOT_UA)
    t.eq(r.status, reject_status, "%s: bot is rejected with %d" % (name, reject_status))
    t.eq(r.header("x-classify-reason"), "ai-robots-txt", "%s: bot: the reason header" % name)
    t.eq(r.header("x-classify-verdict"), "reject", "%s: bot: the verdict header" % name)
    t.ok(b"backend page" not in r.body and len(backend.seen) == before,
         "%s: bot: the backend never sees the request" % name, repr(r))

    r = request(port, "/article?id=7", ua=BROWSER_UA)
    t.eq(r.status, 200, "%s: browser gets 200" % name)
    t.eq(r.body, b"backend page /article?id=7\n", "%s: browser gets the backend's page" % name)
    if accept_reason_header is not None:
        t.eq(r.header("x-classify-verdict"), accept_reason_header,
             "%s: browser: the verdict header" % name)

    r = request(port, "/wp-admin/setup.php", ua=BROWSER_UA)
    t.eq((r.status, r.header("x-classify-reason")), (reject_status, "probe"),
         "%s: the original URI is classified (probe)" % name)

    r = request(port, "/form", ua=BROWSER_UA, method="POST", body=b"a=1&b=2")
    t.ok((r.status, r.body) == (200, b"backend page /form, body 'a=1&b=2'\n"),
         "%s: an accepted POST reaches the backend with its body" % name, repr(r), todo=post_todo)
    r = request(port, "/form", ua=BOT_UA, method="POST", body=b"a=1&b=2")
    t.eq((r.status, r.header("x-classify-reason")), (reject_status, "ai-robots-txt"),
         "%s: a bot's POST is rejected" % name)


def spoofed_request(t, name, port, backend, access_log):
    """The client's own forwarding headers never change what is classified:
    the verdict is the one for the request the proxy serves."""
    for i, (target, h) in enumerate([
            ("/", spoofed("/", "GET")),
            ("/article", spoofed("/article", "GET")),
            ("/", spoofed("/", "GET") + spoofed("/", "GET")),
            ("/", [(k.lower(), v) for k, v in spoofed("/", "GET")]),
            ("/", spoofed("/", "GET") + [HOP_BY_HOP])]):
        mark = "spoof-probe-%d-%s" % (i, name.replace(" ", "-"))
        r = request(port, "/wp-admin/install.php?%s" % mark, ua=BROWSER_UA, source=CLIENT_IP,
                    headers=h)
        t.ok((r.status, r.header("x-classify-reason")) == (403, "probe") and
             not seen_with(backend, mark),
             "%s: GET /wp-admin/install.php stays rejected (probe) with the client's "
             "forwarding headers saying %s%s" % (name, target, [" (twice)", " (lower case)"][i - 2]
                                                 if i in (2, 3) else
                                                 " (and Connection naming the proxy's headers)"
                                                 if i == 4 else ""), repr(r))
    mark = "spoof-article-" + name.replace(" ", "-")
    r = request(port, "/article?%s" % mark, ua=BROWSER_UA, source=CLIENT_IP,
                headers=spoofed("/wp-admin/install.php", "DELETE"))
    t.ok((r.status, r.body) == (200, ("backend page /article?%s\n" % mark).encode()),
         "%s: GET /article is accepted although the client's forwarding headers say "
         "DELETE /wp-admin/install.php" % name, repr(r))
    lines = wait_log(access_log, mark)
    t.eq([(l["method"], l["uri"]) for l in lines], seen_with(backend, mark),
         "%s: the method and URI the rules saw are those the backend received" % name)


def client_ip(t, name, port, backend):
    """req.client_ip is the address the client connects from, whatever
    X-Forwarded-For and X-Real-IP it sends (rules: CLIENT_IP_RULES)."""
    r = request(port, "/ip", ua=BROWSER_UA, source=OTHER_CLIENT_IP)
    t.eq((r.status, r.header("x-classify-reason")), (403, "client-127.0.0.3"),
         "%s: req.client_ip is the client's address (%s)" % (name, OTHER_CLIENT_IP))
    forged = [
        ("X-Forwarded-For and X-Real-IP", [("X-Forwarded-For", "198.51.100.7"),
                                           ("X-Real-IP", "203.0.113.8")]),
        ("X-Real-IP alone", [("X-Real-IP", "203.0.113.8")]),
        ("X-Forwarded-For ending in the trusted proxy's address",
         [("X-Forwarded-For", "198.51.100.7, 127.0.0.1")]),
        ("two X-Forwarded-For lines", [("X-Forwarded-For", "198.51.100.7"),
                                       ("X-Forwarded-For", "198.51.100.9")]),
        ("X-Forwarded-For 127.0.0.2 from 127.0.0.3", [("X-Forwarded-For", CLIENT_IP)]),
        ("a Connection header naming X-Forwarded-For and X-Real-IP from 127.0.0.3",
         [HOP_BY_HOP, ("X-Real-IP", CLIENT_IP)]),
    ]
    for what, h in forged:
        src = OTHER_CLIENT_IP if "from 127.0.0.3" in what else CLIENT_IP
        want = (403, "client-127.0.0.3") if src == OTHER_CLIENT_IP else (200, None)
        r = request(port, "/ip", ua=BROWSER_UA, source=src, headers=h)
        got = (r.status, r.header("x-classify-reason") if r.status == 403 else None)
        t.ok(got == want, "%s: forged by the client, %s: req.client_ip unchanged" % (name, what),
             repr(r))


# URIs a backend may read otherwise than as sent. The rules must see what
# the backend receives: then a rule can at least allow for the forms.
ODD_URIS = ["/x/../wp-admin/install.php", "/./wp-admin/install.php", "//wp-admin/install.php",
            "/wp%2Dadmin/install.php", "/wp-admin%2Finstall.php", "/%77p-admin/install.php",
            "/WP-ADMIN/install.php", "/article?q=/wp-admin/", "/a%20b", "/x/../article",
            "/wp-admin/install.php#x", "/article#x", "ABSOLUTE/wp-admin/install.php",
            "ABSOLUTE/article"]


def strip_authority(uri):
    m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?]*", uri)
    return uri[m.end():] or "/" if m else uri


def odd_uris(t, name, port, backend, access_log):
    """For each ODD_URIS entry: what the proxy answers, what the backend
    receives and what the rules saw (printed as TAP comments; the table in
    docs/classify-serve.md, "URI normalisation", comes from them); the
    rules must have seen exactly what the backend received."""
    rows, mismatches = [], []
    for i, uri in enumerate(ODD_URIS):
        mark = "odd%d%s" % (i, name.replace(" ", ""))
        if uri.startswith("ABSOLUTE"):
            uri = "http://127.0.0.1:%d" % port + uri[len("ABSOLUTE"):]
        base, frag = uri.split("#", 1) if "#" in uri else (uri, None)
        target = base + ("&" if "?" in base else "?") + "m=" + mark + ("#" + frag if frag else "")
        raw = raw_exchange(port, ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: %s\r\n"
                                  "Connection: close\r\n\r\n" % (target, port, BROWSER_UA)).encode(),
                           source=CLIENT_IP)
        r = Response(raw)
        got = seen_with(backend, mark)
        lines = wait_log(access_log, mark, timeout=0.5 if not got else 3.0)
        saw = [strip_authority(l["uri"]) for l in lines]
        rows.append("%s: %-34s -> %s %-10s backend %-44s rules %s" % (
            name, uri.replace("127.0.0.1:%d" % port, "HOST"), r.status,
            r.header("x-classify-reason") or "", [strip_authority(p) for _, p in got] or "-",
            saw or "-"))
        if got and [strip_authority(p) for _, p in got] != saw:
            mismatches.append(rows[-1])
    t.ok(not mismatches, "%s: the rules saw every odd URI exactly as the backend received it"
         % name, "\n".join(mismatches))
    for row in rows:
        t.note(row)


def refused_is_not_let_through(t, name, port, backend):
    """A request classify-serve refuses to classify (431 here: more header
    lines than --max-headers, under the proxy's own limit) must not reach
    the backend unclassified."""
    mark = "too-many-headers-" + name.replace(" ", "-")
    h = [("X-Pad-%d" % i, "1") for i in range(96)]
    r = request(port, "/article?%s" % mark, ua=BOT_UA, headers=h, source=CLIENT_IP)
    t.ok(r.status is not None and r.status >= 400 and not seen_with(backend, mark),
         "%s: a request classify-serve answers 431 does not reach the backend (got %s)"
         % (name, r.status), repr(r))


# ---------------------------------------------------------------------------
# The proxies. Each start_* returns (Proc, port) or None when the proxy is
# not installed; `serve` holds the classify-serve ports it is to use.

def start_caddy(tmp, label, recipe, serve, backend):
    caddy = shutil.which("caddy")
    if caddy is None:
        return None
    d = tempfile.mkdtemp(prefix=label.replace(" ", "-") + "-", dir=tmp)
    port = free_port()
    site = substitute(read_recipe(SOURCE_ROOT, recipe), {
        "example.com": "http://127.0.0.1:%d" % port,
        "classify:42069": "127.0.0.1:%d" % serve["pass"],
        "classify:42070": "127.0.0.1:%d" % serve["caddy"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    # Test-only global options: no admin endpoint (port 2019 may be in
    # use), no automatic HTTPS, state under the temporary directory.
    conf = "{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n%s" % (d, site)
    with open(os.path.join(d, "Caddyfile"), "w") as f:
        f.write(conf)
    env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config",
               GOMAXPROCS="2")
    return Proc([caddy, "run", "--config", os.path.join(d, "Caddyfile"), "--adapter", "caddyfile"],
                os.path.join(d, "caddy.log"), env=env), port


def start_nginx(tmp, label, serve, backend):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        return None
    d = tempfile.mkdtemp(prefix="nginx-", dir=tmp)
    os.makedirs(os.path.join(d, "logs"))
    port = free_port()
    server = substitute(read_recipe(SOURCE_ROOT, "nginx.conf"), {
        "listen 80;": "listen 127.0.0.1:%d;" % port,
        "classify:42070": "127.0.0.1:%d" % serve["nginx"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    # The recipe is the http-level part; a test-only main context around it.
    conf = ("worker_processes 1;\ndaemon off;\npid %s/nginx.pid;\nerror_log %s/logs/error.log;\n"
            "events { worker_connections 256; }\nhttp {\n"
            "access_log off;\nclient_body_temp_path %s/tmp;\nproxy_temp_path %s/tmp;\n"
            "%s}\n" % (d, d, d, d, server))
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(conf)
    return Proc([nginx, "-p", d, "-c", os.path.join(d, "nginx.conf"), "-e",
                 os.path.join(d, "logs", "error.log")], os.path.join(d, "nginx.out")), port


def start_haproxy(tmp, label, serve, backend):
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if haproxy is None:
        return None
    d = tempfile.mkdtemp(prefix="haproxy-", dir=tmp)
    port = free_port()
    with open(os.path.join(d, "classify.lua"), "w") as f:
        f.write(read_recipe(SOURCE_ROOT, "classify.lua"))
    conf = substitute(read_recipe(SOURCE_ROOT, "haproxy.cfg"), {
        "/etc/haproxy/classify.lua": os.path.join(d, "classify.lua"),
        "bind :80": "bind 127.0.0.1:%d" % port,
        "127.0.0.1:42070": "127.0.0.1:%d" % serve["haproxy"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    with open(os.path.join(d, "haproxy.cfg"), "w") as f:
        f.write(conf)
    return Proc([haproxy, "-f", os.path.join(d, "haproxy.cfg"), "-db"],
                os.path.join(d, "haproxy.log")), port


class Traefik:
    """Stands in for Traefik in front of the traefik= listener: sends what
    Traefik's forwardAuth sends (forward.go writeHeader, trustForwardHeader
    false, the default), after its entry point stripped the X-Forwarded-*
    and X-Real-Ip headers of a client that is not in
    forwardedHeaders.trustedIPs and set X-Real-Ip (forwarded_header.go).
    The client's X-Original-* pass, as every header Traefik does not
    manage does. Answers as the client would get it: the auth answer
    when it is not 2xx, else the backend's."""

    MANAGED = {"x-forwarded-proto", "x-forwarded-for", "x-forwarded-host", "x-forwarded-port",
               "x-forwarded-server", "x-forwarded-uri", "x-forwarded-method",
               "x-forwarded-prefix", "x-forwarded-tls-client-cert",
               "x-forwarded-tls-client-cert-info", "x-real-ip"}

    def __init__(self, auth_port, backend):
        self.auth_port = auth_port
        self.backend = backend

    def request(self, path, ua=None, headers=(), method="GET", source=CLIENT_IP, body=None):
        h = [(k, v) for k, v in headers if k.lower() not in self.MANAGED]
        if ua is not None:
            h.append(("User-Agent", ua))
        h += [("X-Real-Ip", source), ("X-Forwarded-For", source),
              ("X-Forwarded-Method", method), ("X-Forwarded-Proto", "http"),
              ("X-Forwarded-Host", "example.com"), ("X-Forwarded-Uri", path)]
        r = request(self.auth_port, "/", headers=h)
        if r.status is None or not 200 <= r.status < 300:
            return r
        return request(self.backend.port, path, ua=ua, headers=headers, method=method, body=body)


def run_proxy(t, label, start, check):
    """Starts a proxy, runs check(port) and stops it."""
    started = start()
    if started is None:
        t.skip("%s: all checks" % label, "not installed")
        return
    p, port = started
    try:
        if t.ok(wait_port(port, proc=p.p), "%s: starts" % label, p.output()):
            check(port)
    finally:
        p.stop(timeout=10)


def docs_show_recipes(t):
    try:
        with open(os.path.join(SOURCE_ROOT, "docs", "classify-serve.md")) as f:
            doc = f.read()
    except OSError as e:
        doc = ""
        t.ok(False, "docs/classify-serve.md is readable", repr(e))
    for name in ["Caddyfile", "Caddyfile.forward_auth", "nginx.conf", "haproxy.cfg", "classify.lua"]:
        t.ok(read_recipe(SOURCE_ROOT, name).strip() in doc,
             "docs/classify-serve.md shows tests/serve/recipes/%s verbatim" % name)


def start_classify(serve, rules, tmp, name, access_log=None):
    ports = {k: free_port() for k in ["pass", "nginx", "caddy", "haproxy", "traefik", "admin"]}
    args = [rules, "--listen", "127.0.0.1:%d" % ports["pass"],
            "--listen-admin", "127.0.0.1:%d" % ports["admin"],
            "--trust-proxy", "127.0.0.1", "--threads", "2"]
    for proxy in ["nginx", "caddy", "haproxy", "traefik"]:
        args += ["--listen-auth", "%s=127.0.0.1:%d" % (proxy, ports[proxy])]
    if access_log:
        args += ["--access-log", access_log]
    p = start_serve(serve, args, tmp, name, admin_port=ports["admin"])
    for port in ports.values():
        wait_port(port)
    return p, ports


def main():
    global SOURCE_ROOT
    classifyc, serve, SOURCE_ROOT = sys.argv[1:4]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-serve-proxies-")
    backend = main_p = ip_p = None
    try:
        rules = os.path.join(tmp, "rules.bin")
        compile_rules(classifyc, SOURCE_ROOT, os.path.join(SOURCE_ROOT, "examples", "main.clf"), rules)
        ip_src = os.path.join(tmp, "client-ip.clf")
        with open(ip_src, "w") as f:
            f.write(CLIENT_IP_RULES)
        ip_rules = os.path.join(tmp, "client-ip.bin")
        compile_rules(classifyc, SOURCE_ROOT, ip_src, ip_rules)
        backend = Backend()
        log = os.path.join(tmp, "access.log")
        main_p, M = start_classify(serve, rules, tmp, "serve-main", access_log=log)
        ip_p, I = start_classify(serve, ip_rules, tmp, "serve-client-ip")
        docs_show_recipes(t)

        def proxied(label, post_todo=None, accept_header=None):
            def check(port):
                check_through(t, label, port, backend, post_todo=post_todo,
                              accept_reason_header=accept_header)
                spoofed_request(t, label, port, backend, log)
                odd_uris(t, label, port, backend, log)
                refused_is_not_let_through(t, label, port, backend)
            return check

        def ip_check(label):
            return lambda port: client_ip(t, label + " (client address)", port, backend)

        for recipe, label, todo in [
                ("Caddyfile", "caddy pass-through",
                 "Caddy 2.6 handle_response: the body went to classify-serve, the backend gets 502"),
                ("Caddyfile.forward_auth", "caddy forward_auth", None)]:
            run_proxy(t, label, lambda: start_caddy(tmp, label, recipe, M, backend),
                      proxied(label, post_todo=todo))
            run_proxy(t, label + " (client address)",
                      lambda: start_caddy(tmp, label, recipe, I, backend), ip_check(label))
        run_proxy(t, "nginx auth_request", lambda: start_nginx(tmp, "nginx", M, backend),
                  proxied("nginx auth_request", accept_header="accept"))
        run_proxy(t, "nginx auth_request (client address)",
                  lambda: start_nginx(tmp, "nginx", I, backend), ip_check("nginx auth_request"))
        run_proxy(t, "haproxy", lambda: start_haproxy(tmp, "haproxy", M, backend),
                  proxied("haproxy", accept_header="accept"))
        run_proxy(t, "haproxy (client address)", lambda: start_haproxy(tmp, "haproxy", I, backend),
                  ip_check("haproxy"))

        def unreachable(port):
            r = request(port, "/article?unreachable", ua=BOT_UA)
            t.eq((r.status, r.header("x-classify-verdict"), r.header("x-classify-reason"), r.body),
                 (200, "error", "", b"backend page /article?unreachable\n"),
                 "haproxy: classify-serve unreachable: verdict error, let through (fail open, "
                 "as documented)")
        run_proxy(t, "haproxy (classify-serve unreachable)",
                  lambda: start_haproxy(tmp, "haproxy", {"haproxy": free_port()}, backend),
                  unreachable)

        tr = Traefik(M["traefik"], backend)
        r = tr.request("/wp-admin/install.php", ua=BROWSER_UA,
                       headers=spoofed("/", "GET") + [("X-Original-URI", "/")])
        t.eq((r.status, r.header("x-classify-reason")), (403, "probe"),
             "traefik-style forwardAuth: GET /wp-admin/install.php stays rejected (probe) with "
             "the client's forwarding headers saying /")
        r = tr.request("/article", ua=BROWSER_UA, headers=spoofed("/wp-admin/install.php", "GET"))
        t.eq((r.status, r.body), (200, b"backend page /article\n"),
             "traefik-style forwardAuth: GET /article is accepted whatever the client's "
             "X-Original-URI says")
        tr = Traefik(I["traefik"], backend)
        r = tr.request("/ip", ua=BROWSER_UA, source=OTHER_CLIENT_IP,
                       headers=[("X-Forwarded-For", "198.51.100.7"), ("X-Real-IP", "203.0.113.8")])
        t.eq((r.status, r.header("x-classify-reason")), (403, "client-127.0.0.3"),
             "traefik-style forwardAuth: req.client_ip is the client's, not its forged "
             "X-Forwarded-For or X-Real-IP")
        for name, p in [("main", main_p), ("client-address", ip_p)]:
            rc = p.stop()
            t.eq(rc, 0, "classify-serve (%s rules) exits 0 on SIGTERM" % name)
        main_p = ip_p = None
    except Exception:  # report, never hang or leave processes behind
        import traceback
        t.ok(False, "no exception", traceback.format_exc())
    finally:
        for p in (main_p, ip_p):
            if p is not None:
                p.stop()
        if backend is not None:
            backend.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
