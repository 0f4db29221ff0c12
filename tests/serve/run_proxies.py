#!/usr/bin/env python3
"""classify-serve behind real proxies (TAP on stdout).

    python3 run_proxies.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Compiles examples/main.clf, starts a backend and classify-serve on loopback
ports, then for each proxy (Caddy pass-through with the issue's Caddyfile,
Caddy forward_auth, nginx auth_request, HAProxy with a Lua action) writes
its config from tests/serve/recipes/ (the files docs/classify-serve.md
shows verbatim; only addresses are replaced), starts it in a temporary
directory, and sends bot and browser requests through it: the bot gets
the rejection and the reason header, the browser gets the backend's page,
and an accepted POST reaches the backend with its body (a known failure,
TAP "# TODO", with Caddy 2.6's handle_response: docs/classify-serve.md).
A proxy whose binary is missing is reported as skipped
(run.sh installs them all). Also checks that the docs show each recipe.
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (BOT_UA, BROWSER_UA, Backend, Proc, Tap, compile_rules,  # noqa: E402
                          free_port, read_recipe, request, start_serve, substitute, wait_port)


def check_through(t, name, port, backend, reject_status=403, accept_reason_header=None,
                  post_todo=None):
    """The two requests every proxy must get right."""
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


def caddy_test(t, tmp, ports, backend, caddyfile_name, label):
    caddy = shutil.which("caddy")
    if caddy is None:
        t.skip("%s: all checks" % label, "caddy not installed")
        return
    d = os.path.join(tmp, label.replace(" ", "-"))
    os.makedirs(d)
    port = free_port()
    site = substitute(read_recipe(SOURCE_ROOT, caddyfile_name), {
        "example.com": "http://127.0.0.1:%d" % port,
        "classify:42069": "127.0.0.1:%d" % ports["pass"],
        "classify:42070": "127.0.0.1:%d" % ports["auth"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    # Test-only global options: no admin endpoint (port 2019 may be in
    # use), no automatic HTTPS, state under the temporary directory.
    conf = "{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n%s" % (d, site)
    with open(os.path.join(d, "Caddyfile"), "w") as f:
        f.write(conf)
    env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config",
               GOMAXPROCS="2")
    p = Proc([caddy, "run", "--config", os.path.join(d, "Caddyfile"), "--adapter", "caddyfile"],
             os.path.join(d, "caddy.log"), env=env)
    try:
        if not t.ok(wait_port(port, proc=p.p), "%s: caddy starts" % label, p.output()):
            return
        check_through(t, label, port, backend, post_todo=(
            "Caddy 2.6 handle_response: the body went to classify-serve, the backend gets 502"
            if caddyfile_name == "Caddyfile" else None))
    finally:
        p.stop()


def nginx_test(t, tmp, ports, backend):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        t.skip("nginx auth_request: all checks", "nginx not installed")
        return
    d = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    port = free_port()
    server = substitute(read_recipe(SOURCE_ROOT, "nginx.conf"), {
        "listen 80;": "listen 127.0.0.1:%d;" % port,
        "classify:42070": "127.0.0.1:%d" % ports["auth"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    # The recipe is the http-level part; a test-only main context around it.
    conf = ("worker_processes 1;\ndaemon off;\npid %s/nginx.pid;\nerror_log %s/logs/error.log;\n"
            "events { worker_connections 256; }\nhttp {\n"
            "access_log off;\nclient_body_temp_path %s/tmp;\nproxy_temp_path %s/tmp;\n"
            "%s}\n" % (d, d, d, d, server))
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(conf)
    p = Proc([nginx, "-p", d, "-c", os.path.join(d, "nginx.conf"), "-e", os.path.join(d, "logs", "error.log")],
             os.path.join(d, "nginx.out"))
    try:
        if not t.ok(wait_port(port, proc=p.p), "nginx: starts",
                    p.output() + open(os.path.join(d, "logs", "error.log")).read()
                    if os.path.exists(os.path.join(d, "logs", "error.log")) else p.output()):
            return
        check_through(t, "nginx auth_request", port, backend, accept_reason_header="accept")
    finally:
        p.stop(timeout=10)


def haproxy_test(t, tmp, ports, backend):
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if haproxy is None:
        t.skip("haproxy: all checks", "haproxy not installed")
        return
    d = os.path.join(tmp, "haproxy")
    os.makedirs(d)
    port = free_port()
    with open(os.path.join(d, "classify.lua"), "w") as f:
        f.write(read_recipe(SOURCE_ROOT, "classify.lua"))
    conf = substitute(read_recipe(SOURCE_ROOT, "haproxy.cfg"), {
        "/etc/haproxy/classify.lua": os.path.join(d, "classify.lua"),
        "bind :80": "bind 127.0.0.1:%d" % port,
        "127.0.0.1:42070": "127.0.0.1:%d" % ports["auth"],
        "backend:8080": "127.0.0.1:%d" % backend.port,
    })
    with open(os.path.join(d, "haproxy.cfg"), "w") as f:
        f.write(conf)
    p = Proc([haproxy, "-f", os.path.join(d, "haproxy.cfg"), "-db"], os.path.join(d, "haproxy.log"))
    try:
        if not t.ok(wait_port(port, proc=p.p), "haproxy: starts", p.output()):
            return
        check_through(t, "haproxy", port, backend, accept_reason_header="accept")
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


def main():
    global SOURCE_ROOT
    classifyc, serve, SOURCE_ROOT = sys.argv[1:4]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-serve-proxies-")
    backend = serve_p = None
    try:
        rules = os.path.join(tmp, "rules.bin")
        compile_rules(classifyc, SOURCE_ROOT, os.path.join(SOURCE_ROOT, "examples", "main.clf"), rules)
        backend = Backend()
        ports = {"pass": free_port(), "auth": free_port(), "admin": free_port()}
        serve_p = start_serve(serve, [rules, "--listen", "127.0.0.1:%d" % ports["pass"],
                                      "--listen-auth", "127.0.0.1:%d" % ports["auth"],
                                      "--listen-admin", "127.0.0.1:%d" % ports["admin"],
                                      "--trust-proxy", "127.0.0.1", "--threads", "2"],
                              tmp, admin_port=ports["admin"])
        for port in (ports["pass"], ports["auth"]):
            wait_port(port)
        docs_show_recipes(t)
        caddy_test(t, tmp, ports, backend, "Caddyfile", "caddy pass-through")
        caddy_test(t, tmp, ports, backend, "Caddyfile.forward_auth", "caddy forward_auth")
        nginx_test(t, tmp, ports, backend)
        haproxy_test(t, tmp, ports, backend)
        rc = serve_p.stop()
        serve_p = None
        t.eq(rc, 0, "classify-serve exits 0 on SIGTERM")
    except Exception as e:  # report, never hang or leave processes behind
        t.ok(False, "no exception", repr(e))
    finally:
        if serve_p is not None:
            serve_p.stop()
        if backend is not None:
            backend.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
