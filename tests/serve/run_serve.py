#!/usr/bin/env python3
"""classify-serve from the outside (TAP on stdout).

    python3 run_serve.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Starts the real binary on loopback ports (and a Unix socket) with the
rules compiled from examples/main.clf and checks: both protocols and their
headers, keep-alive and pipelining, the admin endpoints, bad input (400),
too-large heads (431), slow clients (408), the connection limit, the
config file, --help against docs/classify-serve.md, hot reload (SIGHUP and
file changes, corrupt files refused, no failed request while reloading
under load), the client address from trusted proxies, the access log and
graceful shutdown.
"""

import json
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (BOT_UA, BROWSER_UA, Conn, Response, Tap, compile_rules,  # noqa: E402
                          free_port, metrics, raw_exchange, read_response, request,
                          start_serve, wait_port)


def wait_for(cond, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def protocols(t, P, unix):
    r = request(P["pass"], "/", ua=BROWSER_UA)
    t.eq((r.status, r.header("content-length"), r.body), (421, "0", b""),
         "pass-through accept: 421 with an empty body")
    t.eq((r.header("x-classify-verdict"), r.header("x-classify-reason")), ("accept", ""),
         "pass-through accept: verdict and (empty) reason headers")
    r = request(P["pass"], "/", ua=BOT_UA)
    t.eq((r.status, r.body), (403, b"Forbidden\n"), "pass-through reject: 403 Forbidden")
    t.eq((r.header("x-classify-verdict"), r.header("x-classify-reason")),
         ("reject", "ai-robots-txt"), "pass-through reject: verdict and reason headers")
    r = request(P["pass"], "/")
    t.eq((r.status, r.header("x-classify-reason")), (403, "no-user-agent"),
         "no User-Agent: rejected no-user-agent")
    r = request(P["pass"], "/", ua=BOT_UA, method="HEAD")
    t.eq((r.status, r.header("content-length"), r.body), (403, "10", b""),
         "HEAD: the length of the reject body, not the body")
    r = request(P["auth"], "/", ua=BROWSER_UA, headers=NGINX_VIEW)
    t.eq((r.status, r.header("x-classify-verdict")), (200, "accept"), "forward-auth accept: 200")
    r = request(P["auth"], "/", ua=BOT_UA, headers=NGINX_VIEW)
    t.eq((r.status, r.header("x-classify-reason")), (403, "ai-robots-txt"),
         "forward-auth reject: 403 with the reason")
    r = request(0, "/", ua=BOT_UA, unix=unix)
    t.eq((r.status, r.header("x-classify-reason")), (403, "ai-robots-txt"),
         "a Unix-socket listener classifies")
    r = request(P["pass"], "/", ua=BOT_UA, headers=[("Upgrade", "websocket"), ("Connection", "Upgrade")])
    t.eq(r.status, 403, "an upgrade request is classified, not upgraded")


# What the nginx recipe adds to each forward-auth request (the client's
# method and URI), for the requests below that are not about these headers.
NGINX_VIEW = [("X-Original-Method", "GET"), ("X-Original-URI", "/")]

# The two header families, by the proxies whose listener reads them.
FAMILIES = {"nginx": ("X-Original-Method", "X-Original-URI"),
            "caddy": ("X-Forwarded-Method", "X-Forwarded-Uri")}


def log_lines(path, marker):
    """The access-log lines whose uri holds marker."""
    with open(path) as f:
        return [json.loads(line) for line in f if marker in line]


def forward_auth_headers(t, P, serve_p, access_log):
    """Each forward-auth listener reads the method and URI only from the two
    headers its proxy sets, exactly once each; the other family (which a
    client can send through that proxy) and the request's own target are
    ignored; without the headers there is nothing to classify: 400."""
    for proxy, (own_m, own_u) in FAMILIES.items():
        other_m, other_u = FAMILIES["caddy" if proxy == "nginx" else "nginx"]
        port = P["auth"] if proxy == "nginx" else P["auth_caddy"]
        name = "forward-auth behind %s: " % proxy
        r = request(port, "/", ua=BROWSER_UA, headers=[(own_m, "GET"), (own_u, "/wp-admin/x.php?a=1")])
        t.eq((r.status, r.header("x-classify-reason")), (403, "probe"),
             name + "the URI comes from %s" % own_u)
        r = request(port, "/wp-admin/", ua=BROWSER_UA, headers=[(own_m, "GET"), (own_u, "/fine")])
        t.eq(r.status, 200, name + "%s replaces the request's own target" % own_u)
        r = request(port, "/", ua=BROWSER_UA, headers=[
            (other_u, "/"), (other_m, "GET"), (own_m, "GET"), (own_u, "/wp-admin/install.php"),
            (other_u, "/"), (other_m, "GET")])
        t.eq((r.status, r.header("x-classify-reason")), (403, "probe"),
             name + "%s and %s (the client's, past this proxy) are ignored" % (other_u, other_m))
        r = request(port, "/", ua=BROWSER_UA, headers=[
            (own_m, "GET"), (own_u, "/fine"), (other_u, "/wp-admin/install.php")])
        t.eq(r.status, 200, name + "%s does not make a request a probe either" % other_u)
        r = request(port, "/", ua=BROWSER_UA, headers=[
            (own_m, "GET"), (own_u, "/fine"), (own_u.replace("-", "_"), "/wp-admin/"),
            (own_u.replace("-", "_", 1), "/wp-admin/")])
        t.eq(r.status, 200, name + "%s with underscores is another header (ignored)" % own_u)
        mark = "/view-%s?m=1" % proxy
        r = request(port, "/own-target", ua=BROWSER_UA, method="POST",
                    headers=[(own_m, "DELETE"), (other_m, "PUT"), (own_u, mark)])
        lines = log_lines(access_log, mark)
        t.eq([(l["method"], l["uri"]) for l in lines], [("DELETE", mark)],
             name + "the method comes from %s (access log)" % own_m)
        bad = [
            ([(own_u, "/fine")], "no %s" % own_m),
            ([(own_m, "GET")], "no %s" % own_u),
            ([(own_m, "GET"), (own_u, "")], "an empty %s" % own_u),
            ([(own_m, ""), (own_u, "/fine")], "an empty %s" % own_m),
            ([(other_m, "GET"), (other_u, "/fine")], "only %s and %s" % (other_m, other_u)),
            ([(own_m, "GET"), (own_u, "/fine"), (own_u, "/wp-admin/")], "%s twice" % own_u),
            ([(own_m, "GET"), (own_m.lower(), "GET"), (own_u, "/fine")], "%s twice" % own_m),
            ([(own_m, "GET /x"), (own_u, "/fine")], "a %s that is not a method" % own_m),
            ([(own_m, "GET"), (own_u, "wp-admin/")], "a %s that is not a target" % own_u),
        ]
        for headers, what in bad:
            r = request(port, "/", ua=BROWSER_UA, headers=headers)
            t.ok((r.status, r.header("x-classify-verdict"), r.header("connection")) ==
                 (400, None, "close"), name + "400, no verdict, close: " + what, repr(r))
    out = serve_p.output()
    t.ok(out.count("forward-auth behind nginx): a request with no (or an empty) X-Original-Method"
                   " header, answered 400") == 1,
         "a forward-auth request without the headers is logged once, naming the header", out)
    r = request(P["pass"], "/", ua=BROWSER_UA, headers=[
        ("X-Forwarded-Uri", "/wp-admin/"), ("X-Original-URI", "/wp-admin/"),
        ("X-Forwarded-Method", "DELETE"), ("X-Original-Method", "DELETE")])
    t.eq(r.status, 421, "pass-through: every forwarding header for the URI and method is ignored")


def access_log_long_fields(t, P, access_log):
    """A line stays one JSON object with every field however long the
    request's fields are (long ones are cut, never the line's syntax);
    the head stays under the --max-header-bytes 8192 of this instance."""
    ua = b'"\\' + b"\xe9" * 1500 + b"Mozilla/5.0"  # 9,000 bytes escaped
    target = b"/long-fields/" + b"a" * 2000
    raw_exchange(P["pass"], b"GET " + target + b" HTTP/1.1\r\nUser-Agent: " + ua +
                 b"\r\nHost: " + b"h" * 1500 + b"\r\nX-Forwarded-For: " + b"1" * 1500 +
                 b"\r\nConnection: close\r\n\r\n")
    line = None
    for _ in range(100):
        with open(access_log, "rb") as f:
            line = next((l for l in f if b"/long-fields/" in l), None)
        if line:
            break
        time.sleep(0.02)
    try:
        rec = json.loads(line)
    except (TypeError, ValueError) as e:
        rec = None
        t.ok(False, "access log: a request with long fields gives one JSON object", repr(e))
    if rec is not None:
        t.ok(rec.get("status") == 421 and rec.get("verdict") == "accept" and
             rec.get("duration_us") is not None and
             rec["user_agent"].startswith('"\\\xe9') and rec["uri"].startswith("/long-fields/aaa") and
             len(line) <= 8192,
             "access log: a request with long fields gives one JSON object with every field, "
             "each value cut (%d bytes)" % len(line), repr(rec)[:300])


def keepalive(t, P):
    s = Conn(P["pass"])
    got = []
    for ua in [BROWSER_UA, BOT_UA, BROWSER_UA]:
        s.sendall(("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: %s\r\n\r\n" % ua).encode())
        got.append(read_response(s).status)
    t.eq(got, [421, 403, 421], "keep-alive: three requests on one connection")
    # pipelined, with a body to skip in the middle
    s.sendall(b"GET /a HTTP/1.1\r\nUser-Agent: x\r\n\r\n"
              b"POST /b HTTP/1.1\r\nUser-Agent: x\r\nContent-Length: 5\r\n\r\nhello"
              b"GET /wp-admin/ HTTP/1.1\r\nUser-Agent: x\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"3\r\nabc\r\n0\r\n\r\n"
              b"GET /c HTTP/1.1\r\nUser-Agent: GPTBot/1.0\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    statuses = re.findall(rb"HTTP/1.1 (\d+)", data)
    reasons = re.findall(rb"X-Classify-Reason: ([^\r]*)", data)
    t.eq((statuses, reasons), ([b"421", b"421", b"403", b"403"], [b"", b"", b"probe", b"ai-robots-txt"]),
         "pipelined requests (with bodies) answered in order, then closed")
    r = Response(raw_exchange(P["pass"], b"GET / HTTP/1.0\r\nUser-Agent: x\r\n\r\n"))
    t.eq((r.status, r.header("connection")), (421, "close"), "HTTP/1.0 without keep-alive: closed")


def bad_input(t, P):
    cases = [
        (b"\x00\x01\x02 garbage\r\n\r\n", "binary garbage"),
        (b"GET / HTTP/2.0\r\n\r\n", "HTTP/2.0 request line"),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2 preface"),
        (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", "space before the colon"),
        (b"GET / HTTP/1.1\r\nX-A: a\r\n folded\r\n\r\n", "obsolete line folding"),
        (b"GET / HTTP/1.1\r\nX-A: a\x01b\r\n\r\n", "control byte in a value"),
        (b"GET *?x HTTP/1.1\r\nUser-Agent: x\r\n\r\n", "invalid request target"),
        (b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         "Content-Length with Transfer-Encoding"),
        (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "negative Content-Length"),
    ]
    for data, name in cases:
        r = Response(raw_exchange(P["pass"], data))
        t.eq((r.status, r.header("connection")), (400, "close"), "400 and close: " + name)
    # RFC 9112, 6.3 and 6.1: no verdict, only a 400, then close (not a
    # keep-alive 421 followed by a silent close), on both listeners.
    next_request = b"GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n"
    for te, version in [(b"gzip", b"1.1"), (b"chunked, gzip", b"1.1"), (b"identity", b"1.1"),
                        (b"chunked\r\nTransfer-Encoding: gzip", b"1.1"), (b"", b"1.1"),
                        (b"gzip, chunked", b"1.0")]:
        for listener in ["pass", "auth"]:
            data = (b"POST / HTTP/" + version + b"\r\nUser-Agent: x\r\nX-Original-Method: POST\r\n"
                    b"X-Original-URI: /\r\nTransfer-Encoding: " + te + b"\r\n\r\n0\r\n\r\n" +
                    next_request)
            out = raw_exchange(P[listener], data)
            r = Response(out)
            t.ok((re.findall(rb"HTTP/1.1 (\d+)", out), r.header("connection"),
                  r.header("x-classify-verdict")) == ([b"400"], "close", None),
                 "%s: Transfer-Encoding: %s in HTTP/%s: 400 (no verdict), then close"
                 % (listener, te.decode().replace("\r\n", " / "), version.decode()), repr(out))
    out = raw_exchange(P["pass"], b"POST / HTTP/1.1\r\nUser-Agent: x\r\nTransfer-Encoding: gzip, "
                       b"chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + next_request[:-2] +
                       b"Connection: close\r\n\r\n")
    t.eq(re.findall(rb"HTTP/1.1 (\d+)", out), [b"421", b"421"],
         "Transfer-Encoding: gzip, chunked (chunked last) is read, and the next request answered")
    big = b"GET / HTTP/1.1\r\nUser-Agent: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n"
    r = Response(raw_exchange(P["pass"], big))
    t.eq(r.status, 431, "431: a head over --max-header-bytes (the client reads it, no reset)")
    many = b"GET / HTTP/1.1\r\n" + b"".join(b"X-H%d: 1\r\n" % i for i in range(150)) + b"\r\n"
    r = Response(raw_exchange(P["pass"], many))
    t.eq(r.status, 431, "431: more than --max-headers header lines")
    # slowloris: one header line every 0.3 s never completes the head
    s = socket.create_connection(("127.0.0.1", P["pass"]), timeout=6)
    t0 = time.time()
    out, took = b"", None
    try:
        s.sendall(b"GET / HTTP/1.1\r\n")
        for i in range(30):
            if select.select([s], [], [], 0.3)[0]:
                took = time.time() - t0
                out = s.recv(65536)
                break
            s.sendall(b"X-Slow-%d: 1\r\n" % i)
    except OSError as e:
        out += repr(e).encode()
    s.close()
    t.ok(Response(out).status == 408 and took is not None and took < 2.0,
         "slowloris: 408 after --request-timeout (1 s), took %s s" % took, repr(out[:200]))
    # mutated requests: each gets an HTTP/1.1 answer or a close, none a crash
    rng = random.Random(7)
    seed = (b"POST /a/b?c=d HTTP/1.1\r\nHost: x\r\nUser-Agent: GPTBot/1.0\r\n"
            b"Transfer-Encoding: chunked\r\nX-Forwarded-Uri: /wp-admin\r\nX-Original-Method: GET\r\n"
            b"X-Original-URI: /wp-admin\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    odd = []
    for i in range(300):
        m = bytearray(seed)
        for _ in range(rng.randint(1, 8)):
            op = rng.randint(0, 2)
            pos = rng.randrange(len(m))
            if op == 0:
                m[pos] = rng.randrange(256)
            elif op == 1:
                del m[pos:pos + rng.randint(1, 8)]
            else:
                m[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        out = raw_exchange(P[rng.choice(["pass", "auth"])], bytes(m), timeout=3, half_close=True)
        if out and not out.startswith(b"HTTP/1.1 "):
            odd.append((bytes(m), out[:80]))
    t.ok(not odd, "300 mutated requests: an HTTP/1.1 answer or a close each", odd[:3])
    # the server still works
    t.eq(request(P["pass"], "/", ua=BOT_UA).status, 403, "still serving after the attacks")


def admin(t, P):
    m = metrics(P["admin"])
    t.ok(m.get('classify_requests_total{verdict="reject",reason="ai-robots-txt"}', 0) >= 3,
         "/metrics: requests by verdict and reason", m)
    t.ok(m.get('classify_request_duration_seconds_count', 0) >= 10 and
         'classify_request_duration_seconds_bucket{le="+Inf"}' in m, "/metrics: latency histogram")
    t.ok(m.get('classify_errors_total{kind="bad_request"}', 0) >= 9 and
         m.get('classify_errors_total{kind="headers_too_large"}', 0) >= 2 and
         m.get('classify_errors_total{kind="timeout"}', 0) >= 1, "/metrics: errors by kind", m)
    r = request(P["admin"], "/healthz")
    t.eq((r.status, r.body), (200, b"ok\n"), "/healthz: 200 ok")
    t.eq(request(P["admin"], "/nope").status, 404, "admin: 404 for other paths")
    t.eq(request(P["pass"], "/metrics", ua=BROWSER_UA).status, 421,
         "/metrics on a pass-through listener is just a request to classify")


def help_matches_docs(t, serve):
    out = subprocess.run([serve, "--help"], stdout=subprocess.PIPE, timeout=10).stdout.decode()
    with open(os.path.join(SOURCE_ROOT, "docs", "classify-serve.md")) as f:
        doc = f.read()
    in_help = set(re.findall(r"--[a-z][a-z-]+", out))
    table = re.search(r"## Options\n(.*?)\n## ", doc, re.S)
    in_doc = set(re.findall(r"^\| `(--[a-z][a-z-]+)", table.group(1) if table else "", re.M))
    t.eq(sorted(in_help ^ in_doc), [], "--help and docs/classify-serve.md list the same options")


def config_file(t, serve, rules, tmp):
    page = os.path.join(tmp, "blocked.html")
    with open(page, "w") as f:
        f.write("<h1>blocked</h1>\n")
    port = free_port()
    conf = os.path.join(tmp, "serve.conf")
    with open(conf, "w") as f:
        f.write("# a config file\nrules %s\nlisten 127.0.0.1:%d\nreject-status 451\n"
                "reject-file %s\nthreads 1\nmax-connections 3\nkeepalive-timeout 0.8\n" % (rules, port, page))
    p = start_serve(serve, ["--config", conf], tmp, "conf")
    try:
        wait_port(port, proc=p.p)
        r = request(port, "/", ua=BOT_UA)
        t.eq((r.status, r.header("content-type"), r.body),
             (451, "text/html; charset=utf-8", b"<h1>blocked</h1>\n"),
             "config file: reject-status and reject-file")
        c = Conn(port)
        c.sendall(b"GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n")
        read_response(c)
        t0 = time.time()
        c.sock.settimeout(5)
        closed_at = time.time() - t0 if c.recv(10) == b"" else None
        c.close()
        t.ok(closed_at is not None and 0.6 < closed_at < 1.6,
             "keepalive-timeout 0.8: an idle connection is closed after %s s" % closed_at)
        time.sleep(0.3)  # the connections above are closed by now
        socks = [socket.create_connection(("127.0.0.1", port), timeout=3) for _ in range(5)]
        time.sleep(0.3)
        closed = 0
        for s in socks:
            try:
                s.sendall(b"GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n")
                closed += s.recv(100) == b""
            except OSError:
                closed += 1
            s.close()
        t.eq(closed, 2, "--max-connections 3: the 4th and 5th connections are closed")
    finally:
        p.stop()
    bad = subprocess.run([serve, rules, "--listen", "127.0.0.1:1", "--bogus"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    t.ok(bad.returncode == 2 and b"unknown option '--bogus'" in bad.stderr,
         "unknown option: exit 2 with a message", bad.stderr)
    for value, msg in [("127.0.0.1:1", b"'127.0.0.1:1' does not name the proxy in front: "
                                       b"write PROXY=ADDR"),
                       ("apache=127.0.0.1:1", b"unknown proxy 'apache'"),
                       ("nginx=", b"empty address")]:
        bad = subprocess.run([serve, rules, "--listen-auth", value, "--check"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        t.ok(bad.returncode == 2 and msg in bad.stderr,
             "--listen-auth %s: exit 2 with a message" % value, bad.stderr)
    junk = os.path.join(tmp, "junk.bin")
    with open(junk, "wb") as f:
        f.write(b"not a rules file at all")
    bad = subprocess.run([serve, junk, "--listen", "127.0.0.1:%d" % free_port()],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    t.ok(bad.returncode == 2 and b"junk.bin" in bad.stderr, "a bad rules file at start: exit 2",
         bad.stderr)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    bad = subprocess.run([serve, rules, "--listen", "127.0.0.1:%d" % busy.getsockname()[1]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    busy.close()
    t.ok(bad.returncode == 2 and b"in use" in bad.stderr, "a port in use: exit 2", bad.stderr)


def check_mode(t, serve, rules, tmp):
    """--check refuses what the start refuses (short of binding) and
    leaves nothing behind."""
    def run(args):
        return subprocess.run([serve, rules] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=20)
    port = free_port()
    plain = os.path.join(tmp, "a-file")
    with open(plain, "w") as f:
        f.write("not a socket\n")
    cases = [
        (["--listen", "127.0.0.1:0"], b"--listen 127.0.0.1:0: expected HOST:PORT"),
        (["--listen-auth", "nginx=127.0.0.1:70000"], b"--listen-auth nginx=127.0.0.1:70000: expected"),
        (["--listen", "127.0.0.1:%d" % port, "--listen-admin", "unix:" + plain],
         b"exists and is not a socket"),
        (["--listen", "127.0.0.1:%d" % port, "--access-log", os.path.join(tmp, "no-dir", "a.log")],
         b"cannot open the access log: No such file or directory"),
        (["--listen", "127.0.0.1:%d" % port, "--access-log", tmp], b"cannot open the access log"),
        (["--listen-admin", "127.0.0.1:%d" % port], b"nothing to serve"),
    ]
    for args, msg in cases:
        checked, started = run(args + ["--check"]), run(args)
        t.ok(checked.returncode == 2 and msg in checked.stderr and b"ok" not in checked.stdout
             and started.returncode == 2 and msg in started.stderr,
             "--check %s: refused (exit 2) as the start is" % " ".join(args),
             "check: %r %r\nstart: %r" % (checked.returncode, checked.stderr, started.stderr))
    log = os.path.join(tmp, "check-access.log")
    ok = run(["--listen", "127.0.0.1:%d" % port, "--access-log", log, "--check"])
    t.ok(ok.returncode == 0 and ok.stdout.startswith(rules.encode() + b": ok (") and
         not os.path.exists(log),
         "--check with good settings: ok, and no access log left behind", ok)
    with open(log, "w") as f:
        f.write("kept\n")
    ok = run(["--listen", "127.0.0.1:%d" % port, "--access-log", log, "--check"])
    t.ok(ok.returncode == 0 and open(log).read() == "kept\n",
         "--check with an existing access log: ok, the log untouched", ok)


def reload_tests(t, serve, classifyc, rules_good, tmp):
    other_src = os.path.join(tmp, "other.clf")
    with open(other_src, "w") as f:
        f.write('filter main(req: Request) {\n    reject "reloaded"\n}\n')
    rules_other = os.path.join(tmp, "other.bin")
    compile_rules(classifyc, SOURCE_ROOT, other_src, rules_other)
    live = os.path.join(tmp, "live.bin")
    shutil.copy(rules_good, live)
    port, admin_port = free_port(), free_port()
    p = start_serve(serve, [live, "--listen", "127.0.0.1:%d" % port,
                            "--listen-admin", "127.0.0.1:%d" % admin_port,
                            "--watch-interval", "0.1", "--threads", "2"],
                    tmp, "reload", admin_port=admin_port)
    wait_port(port)

    def replace(src, data=None):
        tmpf = live + ".tmp"
        if data is None:
            shutil.copy(src, tmpf)
        else:
            with open(tmpf, "wb") as f:
                f.write(data)
        os.replace(tmpf, live)

    def reason():
        return request(port, "/", ua=BROWSER_UA).header("x-classify-reason")

    # Load while reloading: keep-alive clients must see no failure.
    failures, done, count = [], threading.Event(), [0]

    def client():
        try:
            s = Conn(port)
            while not done.is_set():
                s.sendall(b"GET / HTTP/1.1\r\nUser-Agent: GPTBot/1.0\r\n\r\n")
                r = read_response(s)
                if r is None or r.status != 403:
                    failures.append(repr(r))
                    return
                count[0] += 1
            s.close()
        except OSError as e:
            failures.append(repr(e))

    threads = [threading.Thread(target=client) for _ in range(4)]
    for th in threads:
        th.start()
    try:
        good = open(rules_good, "rb").read()
        replace(None, good[:1000])  # truncated
        t.ok(wait_for(lambda: metrics(admin_port).get('classify_reloads_total{result="failure"}', 0) >= 1),
             "a truncated rules file is refused")
        t.eq(reason(), "", "the old rules keep serving after a refused file")
        t.ok("refused" in p.output() and "still serving" in p.output(),
             "the refusal is logged", p.output())
        bad = bytearray(good)
        bad[len(bad) // 2] ^= 0xff
        replace(None, bytes(bad))  # corrupt: checksum
        t.ok(wait_for(lambda: metrics(admin_port).get('classify_reloads_total{result="failure"}', 0) >= 2),
             "a corrupt rules file is refused (file change)")
        p.signal(signal.SIGHUP)
        t.ok(wait_for(lambda: metrics(admin_port).get('classify_reloads_total{result="failure"}', 0) >= 3),
             "a corrupt rules file is refused (SIGHUP)")
        replace(rules_other)
        t.ok(wait_for(lambda: reason() == "reloaded"), "a changed rules file is picked up")
        for _ in range(5):
            replace(rules_good)
            p.signal(signal.SIGHUP)
            time.sleep(0.15)
        t.ok(wait_for(lambda: reason() == ""), "SIGHUP reloads")
    finally:
        done.set()
        for th in threads:
            th.join()
    t.ok(not failures and count[0] > 100,
         "no failed request during %d reloads (%d requests)"
         % (metrics(admin_port).get('classify_reloads_total{result="success"}', 0), count[0]),
         failures[:3])
    t.eq(p.stop(), 0, "exit 0 after reloads")


def client_ip(t, serve, classifyc, tmp):
    src = os.path.join(tmp, "ip.clf")
    with open(src, "w") as f:
        f.write('const BAD = [198.51.100.0/24]\n'
                'filter main(req: Request) {\n'
                '    if req.client_ip in BAD { reject "bad-ip" }\n'
                '    accept\n}\n')
    out = os.path.join(tmp, "ip.bin")
    try:
        compile_rules(classifyc, SOURCE_ROOT, src, out)
    except subprocess.CalledProcessError as e:
        t.skip("client address from trusted proxies", "classifyc cannot compile req.client_ip yet: %s"
               % e.stderr.decode(errors="replace").splitlines()[:1])
        return
    port, port2 = free_port(), free_port()
    p = start_serve(serve, [out, "--listen", "127.0.0.1:%d" % port, "--threads", "1",
                            "--trust-proxy", "127.0.0.1"], tmp, "ip")
    p2 = start_serve(serve, [out, "--listen", "127.0.0.1:%d" % port2, "--threads", "1"], tmp, "ip2")
    try:
        wait_port(port)
        wait_port(port2)
        xff = [("X-Forwarded-For", "198.51.100.7")]
        t.eq(request(port, "/", headers=xff).status, 403,
             "--trust-proxy 127.0.0.1: the client address comes from X-Forwarded-For")
        t.eq(request(port2, "/", headers=xff).status, 421,
             "no --trust-proxy: X-Forwarded-For is ignored")
    finally:
        p.stop()
        p2.stop()


def shutdown(t, serve, rules, tmp):
    port = free_port()
    log = os.path.join(tmp, "access.log")
    p = start_serve(serve, [rules, "--listen", "127.0.0.1:%d" % port, "--access-log", log,
                            "--shutdown-timeout", "5"], tmp, "shutdown")
    wait_port(port, proc=p.p)
    idle = Conn(port)
    idle.sendall(b"GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n")
    read_response(idle)
    busy = Conn(port)
    busy.sendall(b"GET /in-flight HTTP/1.1\r\nUser-Agent: GPTBot/1.0\r\n")  # head not finished
    time.sleep(0.2)
    p.signal(signal.SIGTERM)
    time.sleep(0.3)
    t.eq(idle.recv(100), b"", "SIGTERM closes idle keep-alive connections")
    busy.sendall(b"\r\n")
    r = read_response(busy)
    t.ok(r is not None and r.status == 403 and r.header("connection") == "close",
         "SIGTERM: a request in flight is answered (Connection: close)", repr(r))
    t.eq(p.wait(10), 0, "SIGTERM: exit 0 once the requests are done")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        refused = False
    except OSError:
        refused = True
    t.ok(refused, "SIGTERM: the listener is closed")
    lines = [json.loads(l) for l in open(log)]
    t.ok(len(lines) == 2 and lines[1]["uri"] == "/in-flight" and lines[1]["reason"] == "ai-robots-txt"
         and lines[1]["status"] == 403, "access log: one JSON object per request", lines)
    idle.close()
    busy.close()
    p.stop()


def main():
    global SOURCE_ROOT
    classifyc, serve, SOURCE_ROOT = sys.argv[1:4]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-serve-test-")
    p = None
    try:
        rules = os.path.join(tmp, "rules.bin")
        compile_rules(classifyc, SOURCE_ROOT, os.path.join(SOURCE_ROOT, "examples", "main.clf"), rules)
        P = {"pass": free_port(), "auth": free_port(), "auth_caddy": free_port(),
             "admin": free_port()}
        unix = os.path.join(tmp, "serve.sock")
        access_log = os.path.join(tmp, "main-access.log")
        p = start_serve(serve, [rules, "--listen", "127.0.0.1:%d" % P["pass"],
                                "--listen-auth", "nginx=127.0.0.1:%d" % P["auth"],
                                "--listen-auth", "caddy=127.0.0.1:%d" % P["auth_caddy"],
                                "--access-log", access_log,
                                "--listen-admin", "127.0.0.1:%d" % P["admin"],
                                "--listen", "unix:" + unix, "--threads", "2",
                                "--request-timeout", "1", "--max-header-bytes", "8192"],
                        tmp, admin_port=P["admin"])
        for port in (P["pass"], P["auth"], P["auth_caddy"]):
            wait_port(port)
        said = ("listening on 127.0.0.1:%d (forward-auth behind nginx: the method from "
                "X-Original-Method, the URI from X-Original-URI)" % P["auth"])
        t.ok(wait_for(lambda: said in p.output()),
             "the start-up log says which headers each forward-auth listener reads", p.output())
        protocols(t, P, unix)
        forward_auth_headers(t, P, p, access_log)
        access_log_long_fields(t, P, access_log)
        keepalive(t, P)
        bad_input(t, P)
        admin(t, P)
        t.eq(p.stop(), 0, "exit 0 on SIGTERM")
        t.ok(not os.path.exists(unix), "the Unix socket is removed at exit")
        p = None
        help_matches_docs(t, serve)
        config_file(t, serve, rules, tmp)
        check_mode(t, serve, rules, tmp)
        reload_tests(t, serve, classifyc, rules, tmp)
        client_ip(t, serve, classifyc, tmp)
        shutdown(t, serve, rules, tmp)
    except Exception as e:
        import traceback
        t.ok(False, "no exception", traceback.format_exc())
    finally:
        if p is not None:
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
