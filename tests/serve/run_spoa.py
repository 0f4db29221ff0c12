#!/usr/bin/env python3
"""classify-serve as HAProxy's SPOE agent (--listen-spoa), TAP on stdout.

    python3 run_spoa.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Compiles examples/main.clf and starts classify-serve with an SPOA
listener, then:

Through Debian's HAProxy (2.6), with the recipe of docs/classify-serve.md
(tests/serve/recipes/haproxy-spoe.cfg and classify-spoe.conf, only the
addresses replaced): a bot gets 403 and the reason, a browser the
backend's page with the verdict header, the URI and the client address
(the access log's uri and peer) are the request's (and with req.hdrs,
the text block, instead of req.hdrs_bin), a request over
--max-headers (50 here) is rejected (classify-serve-431) and never reaches the
backend; the rules reloaded 25 times while clients send requests, no
request failed or got another verdict; the agent stopped and started
again: while it is away requests are let through (fail open, the
recipe as it is) or refused with 503 (fail closed, the recipe's
commented line), HAProxy's health check marks the server down and up, and
bots are rejected again once it is back (the times are printed).

From a raw socket playing HAProxy (tests/serve/spop.py, written from
SPOE.txt): the HELLO negotiation (version, max-frame-size, capabilities,
health checks), ten NOTIFY frames sent before reading (pipelining),
100,000 sent while the agent's ACKs are left unread (its writes back up), and
two connections used at once (async), each ACK with its ids; req.hdrs as
text; a NOTIFY without method; and bad input, each answered with
AGENT-DISCONNECT and the protocol's status code, then closed: frames too
big (3), malformed (4), HELLO without each mandatory item (5, 6, 7), an
unsupported version (8), a small max-frame-size (9), fragments (10), a
silent connection (2); garbage never crashes the agent.
"""

import os
import random
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spop  # noqa: E402
from serve_common import (BOT_UA, BROWSER_UA, Backend, Proc, Tap, compile_rules,  # noqa: E402
                          free_port, metrics, read_recipe, request, start_serve, substitute,
                          wait_port)

CLIENT_IP = "127.0.0.2"


def wait_for(cond, timeout=10.0, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def log_lines(path, marker):
    import json
    with open(path) as f:
        return [json.loads(line) for line in f if marker in line]


class Setup:
    def __init__(self, classifyc, serve, root, tmp):
        self.serve, self.root, self.tmp = serve, root, tmp
        self.rules = os.path.join(tmp, "rules.bin")
        compile_rules(classifyc, root, os.path.join(root, "examples", "main.clf"), self.rules)
        self.spoa, self.admin = free_port(), free_port()
        self.log = os.path.join(tmp, "access.log")
        self.p = None

    def start(self):
        self.p = start_serve(self.serve, [
            self.rules, "--listen-spoa", "127.0.0.1:%d" % self.spoa,
            "--listen-admin", "127.0.0.1:%d" % self.admin, "--trust-proxy", "127.0.0.1",
            "--threads", "2", "--access-log", self.log, "--watch-interval", "0",
            "--request-timeout", "2", "--max-headers", "50"], self.tmp, "serve-%d" % time.time(), admin_port=self.admin)
        wait_port(self.spoa)
        return self.p


def start_haproxy(tmp, setup, backend, fail_closed=False, text_headers=False):
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if haproxy is None:
        return None
    d = tempfile.mkdtemp(prefix="haproxy-spoe-", dir=tmp)
    port = free_port()
    spoe = read_recipe(setup.root, "classify-spoe.conf")
    if text_headers:  # the text block instead of the binary one
        assert "headers=req.hdrs_bin" in spoe
        spoe = spoe.replace("headers=req.hdrs_bin", "headers=req.hdrs")
    with open(os.path.join(d, "classify-spoe.conf"), "w") as f:
        f.write(spoe)
    conf = substitute(read_recipe(setup.root, "haproxy-spoe.cfg"), {
        "/etc/haproxy/classify-spoe.conf": os.path.join(d, "classify-spoe.conf"),
        "bind :80": "bind 127.0.0.1:%d" % port,
        "backend:8080": "127.0.0.1:%d" % backend.port,
        "classify:42071": "127.0.0.1:%d" % setup.spoa,
    })
    if fail_closed:
        line = "    #   http-request deny deny_status 503"
        assert line in conf
        conf = conf.replace(line, "    http-request deny deny_status 503")
    with open(os.path.join(d, "haproxy.cfg"), "w") as f:
        f.write(conf)
    p = Proc([haproxy, "-f", os.path.join(d, "haproxy.cfg"), "-db"], os.path.join(d, "haproxy.log"))
    return p, port


def seen_with(backend, marker):
    return [(m, p) for m, p, _ in backend.seen if marker in p]


# ---------------------------------------------------------------------------
# Through HAProxy.

def through_haproxy(t, s, port, backend):
    before = len(backend.seen)
    r = request(port, "/article", ua=BOT_UA)
    t.eq((r.status, r.header("x-classify-verdict"), r.header("x-classify-reason")),
         (403, "reject", "ai-robots-txt"), "haproxy spoe: a bot is rejected with the reason")
    t.ok(len(backend.seen) == before, "haproxy spoe: the backend never sees the bot")
    r = request(port, "/article?id=7", ua=BROWSER_UA)
    t.eq((r.status, r.body, r.header("x-classify-verdict")),
         (200, b"backend page /article?id=7\n", "accept"),
         "haproxy spoe: a browser gets the backend's page, verdict accept")
    r = request(port, "/wp-admin/setup.php", ua=BROWSER_UA)
    t.eq((r.status, r.header("x-classify-reason")), (403, "probe"),
         "haproxy spoe: the path is classified (probe)")
    r = request(port, "/form", ua=BOT_UA, method="POST", body=b"a=1")
    t.eq((r.status, r.header("x-classify-reason")), (403, "ai-robots-txt"),
         "haproxy spoe: a bot's POST is rejected")
    r = request(port, "/form", ua=BROWSER_UA, method="POST", body=b"a=1&b=2")
    t.eq((r.status, r.body), (200, b"backend page /form, body 'a=1&b=2'\n"),
         "haproxy spoe: an accepted POST reaches the backend with its body")
    mark = "spoe-uri-mark"
    r = request(port, "/search?q=%s&x=1" % mark, ua=BROWSER_UA, source=CLIENT_IP,
                headers=[("X-Forwarded-For", "198.51.100.7")])
    ok = wait_for(lambda: log_lines(s.log, mark), 3)
    lines = log_lines(s.log, mark) if ok else []
    t.eq([(l["listener"], l["method"], l["uri"], l["peer"], l["verdict"]) for l in lines],
         [("spoa", "GET", "/search?q=%s&x=1" % mark, CLIENT_IP, "accept")],
         "haproxy spoe: the rules saw the method, path and query, and src as the peer "
         "(the client's address, not its X-Forwarded-For)")
    t.ok(lines and lines[0]["user_agent"] == BROWSER_UA and lines[0]["x_forwarded_for"] == "198.51.100.7"
         and lines[0]["host"] == "127.0.0.1:%d" % port,
         "haproxy spoe: the headers reached the rules (req.hdrs_bin): user-agent, host, "
         "x-forwarded-for in the access log", repr(lines))
    mark = "too-many-headers-spoe"
    r = request(port, "/article?%s" % mark, ua=BROWSER_UA,
                headers=[("X-Pad-%d" % i, "1") for i in range(60)])
    t.ok((r.status, r.header("x-classify-reason")) == (403, "classify-serve-431") and
         not seen_with(backend, mark),
         "haproxy spoe: a request over --max-headers is rejected (classify-serve-431), "
         "not let through", repr(r))


def text_headers(t, s, tmp, backend):
    """The SPOE message with headers=req.hdrs (HAProxy's text block)."""
    p, port = start_haproxy(tmp, s, backend, text_headers=True)
    try:
        if not t.ok(wait_port(port, proc=p.p), "haproxy spoe (req.hdrs): starts", p.output()):
            return
        r = request(port, "/t", ua=BOT_UA)
        t.eq((r.status, r.header("x-classify-reason")), (403, "ai-robots-txt"),
             "haproxy spoe (req.hdrs): a bot is rejected")
        mark = "text-headers-mark"
        r = request(port, "/t?%s" % mark, ua=BROWSER_UA)
        lines = log_lines(s.log, mark) if wait_for(lambda: log_lines(s.log, mark), 3) else []
        t.ok(r.status == 200 and lines and lines[0]["user_agent"] == BROWSER_UA and
             lines[0]["host"] == "127.0.0.1:%d" % port,
             "haproxy spoe (req.hdrs): a browser is accepted, its headers read from the text block",
             repr((r, lines)))
    finally:
        p.stop(timeout=10)


def reload_under_load(t, s, port):
    """Clients through HAProxy while the rules are reloaded: every answer
    must be the expected verdict."""
    stop = threading.Event()
    count, bad = [0], []

    def client(i):
        while not stop.is_set():
            bot = (count[0] + i) % 2 == 0
            try:
                r = request(port, "/r%d" % i, ua=BOT_UA if bot else BROWSER_UA, timeout=10)
                want = (403, "ai-robots-txt") if bot else (200, "")
                got = (r.status, r.header("x-classify-reason"))
                if got != want:
                    bad.append((want, got))
            except OSError as e:
                bad.append(("request", repr(e)))
            count[0] += 1
    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    reloads_before = metrics(s.admin).get('classify_reloads_total{result="success"}', 0)
    for k in range(25):
        time.sleep(0.12)
        if k % 2:
            s.p.signal(signal.SIGHUP)
        else:
            shutil.copy(s.rules, s.rules + ".new")
            os.replace(s.rules + ".new", s.rules)
            s.p.signal(signal.SIGHUP)
    time.sleep(0.3)
    stop.set()
    for th in threads:
        th.join()
    n = metrics(s.admin).get('classify_reloads_total{result="success"}', 0) - reloads_before
    t.ok(not bad and n >= 20 and count[0] > 50,
         "haproxy spoe: %d requests during %d rules reloads, none failed or got another verdict"
         % (count[0], n), repr(bad[:5]))


def restart(t, s, tmp, backend):
    """The agent stopped and started again behind fail-open and
    fail-closed configurations (the recipe and its commented line)."""
    hp = start_haproxy(tmp, s, backend)
    hc = start_haproxy(tmp, s, backend, fail_closed=True)
    procs = [x[0] for x in (hp, hc)]
    try:
        (p_open, port_open), (p_closed, port_closed) = hp, hc
        ok = wait_port(port_open, proc=p_open.p) and wait_port(port_closed, proc=p_closed.p)
        if not t.ok(ok, "haproxy spoe (restart): both configurations start",
                    p_open.output() + p_closed.output()):
            return
        for port in (port_open, port_closed):
            r = request(port, "/", ua=BOT_UA)
            t.eq(r.status, 403, "haproxy spoe (restart): the bot is rejected before (port %s)"
                 % ("fail-open" if port == port_open else "fail-closed"))
        t.eq(s.p.stop(), 0, "classify-serve exits 0 on SIGTERM with HAProxy connected")
        t0 = time.time()
        r = request(port_open, "/down-open", ua=BOT_UA, timeout=15)
        took_open = time.time() - t0
        t.eq((r.status, r.header("x-classify-verdict"), r.body),
             (200, "", b"backend page /down-open\n"),
             "haproxy spoe (restart): agent away, fail open: the bot is let through, no verdict")
        t0 = time.time()
        r = request(port_closed, "/down-closed", ua=BROWSER_UA, timeout=15)
        took_closed = time.time() - t0
        t.eq(r.status, 503, "haproxy spoe (restart): agent away, fail closed: even a browser gets 503")
        t.note("agent away: a request waited %.2f s (fail open) and %.2f s (fail closed): "
               "`timeout processing` (1s), or less once the health check marks the server down"
               % (took_open, took_closed))
        down = wait_for(lambda: "is DOWN" in p_open.output(), 10)
        t.ok(down, "haproxy spoe (restart): option spop-check marks the agent DOWN",
             p_open.output()[-2000:])
        t0 = time.time()
        r = request(port_open, "/down-open2", ua=BOT_UA, timeout=15)
        t.note("agent marked down: a request waited %.2f s" % (time.time() - t0))
        s.start()
        t0 = time.time()
        back = wait_for(lambda: request(port_open, "/back", ua=BOT_UA).status == 403, 15, 0.1)
        t.ok(back, "haproxy spoe (restart): bots are rejected again once the agent is back")
        t.note("agent back: the first bot rejected %.2f s after it started listening"
               % (time.time() - t0))
        t.ok(wait_for(lambda: "is UP" in p_open.output(), 10),
             "haproxy spoe (restart): the health check marks the agent UP again",
             p_open.output()[-2000:])
        r = request(port_closed, "/", ua=BROWSER_UA)
        t.eq(r.status, 200, "haproxy spoe (restart): fail closed: a browser gets through again")
        r = request(port_open, "/article", ua=BROWSER_UA)
        t.eq((r.status, r.header("x-classify-verdict")), (200, "accept"),
             "haproxy spoe (restart): browser accepted after the restart")
    finally:
        for p in procs:
            p.stop(timeout=10)


# ---------------------------------------------------------------------------
# A raw socket playing HAProxy.

def answers(port, data, handshake=True, half_close=False):
    """Sends data after a HELLO (then, with half_close, our FIN); returns
    the frames received until EOF."""
    a = spop.Agent(port)
    try:
        if handshake:
            a.handshake()
        a.send(data)
        if half_close:
            a.sock.shutdown(socket.SHUT_WR)
        out = []
        while True:
            f = a.read_frame()
            if f is None:
                return out
            out.append(f)
    finally:
        a.close()


def disconnected_with(t, port, data, status, name, handshake=True):
    frames = answers(port, data, handshake)
    last = frames[-1] if frames else None
    got = None
    if last is not None and last[0] == spop.AGENT_DISCONNECT:
        kv = spop.read_kvlist(last[4])
        got = (kv.get("status-code"), kv.get("message"))
    t.ok(got is not None and got[0] == status,
         "spoa raw: %s: AGENT-DISCONNECT status %d, then closed" % (name, status),
         "frames: %r" % frames)


def raw_tests(t, s):
    P = s.spoa
    a = spop.Agent(P)
    kv = a.handshake()
    t.eq(kv, {"version": "2.0", "max-frame-size": 16380, "capabilities": "pipelining,async"},
         "spoa raw: AGENT-HELLO: version 2.0, HAProxy's max-frame-size, pipelining and async "
         "(not fragmentation)")
    # pipelining: ten NOTIFYs before reading anything
    uas = [BOT_UA if i % 2 == 0 else BROWSER_UA for i in range(10)]
    a.send(b"".join(spop.notify(100 + i, i + 1, spop.request_args(
        path="/p%d" % i, headers=[("host", "example.com"), ("user-agent", uas[i])]))
        for i in range(10)))
    got = []
    for i in range(10):
        f = a.read_frame()
        got.append((f[0], f[2], f[3], spop.read_actions(f[4])) if f else None)
    want = [(spop.ACK, 100 + i, i + 1,
             [(2, "verdict", "reject" if i % 2 == 0 else "accept"),
              (2, "reason", "ai-robots-txt" if i % 2 == 0 else "")]) for i in range(10)]
    t.eq(got, want, "spoa raw: ten pipelined NOTIFY frames: ten ACKs, in order, with their "
         "stream and frame ids and the verdicts")
    # back-pressure: 100,000 NOTIFY frames sent while nothing is read for a
    # second, on a connection with a small receive window: the ACKs (5.7
    # MB) fill the socket, the agent's writes go through uv_write and its
    # reading stops until they are out
    bp = spop.Agent(P, rcvbuf=2048, timeout=30)
    bp.handshake()
    n = 100000
    uas = [spop.hdrs_bin([("user-agent", BOT_UA)]), spop.hdrs_bin([("user-agent", BROWSER_UA)])]
    data = b"".join(spop.notify(i + 1, 1, [("method", "GET"), ("path", "/bp"), ("headers", uas[i % 2])])
                    for i in range(n))
    sender = threading.Thread(target=bp.send, args=(data,))
    sender.start()
    time.sleep(1)
    good = 0
    for i in range(n):
        f = bp.read_frame()
        if f is None:
            break
        want = "reject" if i % 2 == 0 else "accept"
        good += f[2] == i + 1 and spop.read_actions(f[4])[0][2] == want
    sender.join()
    bp.close()
    t.eq(good, n, "spoa raw: %d NOTIFY frames (%d MB) sent while the ACKs are not read: every "
         "ACK, in order, once read" % (n, len(data) >> 20))
    # async: two connections used at once, frames of one stream on both
    b = spop.Agent(P)
    b.handshake(max_frame=100000)
    b.send(spop.notify(7, 1, spop.request_args(headers=[("user-agent", BOT_UA)])))
    a.send(spop.notify(7, 2, spop.request_args(headers=[("user-agent", BROWSER_UA)])))
    fa, fb = a.read_frame(), b.read_frame()
    t.eq([(fb[2], fb[3], spop.read_actions(fb[4])[0][2]), (fa[2], fa[3], spop.read_actions(fa[4])[0][2])],
         [(7, 1, "reject"), (7, 2, "accept")],
         "spoa raw: two connections at once (async): each ACK on its NOTIFY's connection")
    # text headers (req.hdrs), a missing method, an unknown frame type skipped
    a.send(spop.notify(8, 1, [("method", "GET"), ("path", "/"),
                              ("headers", "host: x\r\nuser-agent: %s\r\n\r\n" % BOT_UA),
                              ("src", spop.ipv4("192.0.2.1"))]))
    f = a.read_frame()
    t.eq(spop.read_actions(f[4]), [(2, "verdict", "reject"), (2, "reason", "ai-robots-txt")],
         "spoa raw: headers as req.hdrs (the text block) are read too")
    a.send(spop.frame(50, b"whatever", sid=1, fid=1) +
           spop.notify(9, 1, [("path", "/"), ("headers", spop.hdrs_bin([]))]))
    f = a.read_frame()
    t.eq((f[0], f[2], f[3], f[4]), (spop.ACK, 9, 1, b""),
         "spoa raw: an unknown frame type is skipped; a NOTIFY without method gets an ACK "
         "that sets nothing")
    a.close()
    b.close()
    # max-frame-size: ours (--max-header-bytes) when HAProxy offers more
    c = spop.Agent(P)
    kv = c.handshake(max_frame=1 << 20)
    t.eq(kv.get("max-frame-size"), 32768, "spoa raw: max-frame-size is ours (--max-header-bytes) "
         "when HAProxy offers more")
    c.close()
    # health check
    c = spop.Agent(P)
    kv = c.handshake(healthcheck=True)
    t.ok(kv.get("version") == "2.0" and c.eof(),
         "spoa raw: a health check (healthcheck true) gets AGENT-HELLO, then the close")
    c.close()
    # HAProxy's own DISCONNECT
    frames = answers(P, spop.frame(spop.HAPROXY_DISCONNECT,
                                   spop.kvlist([("status-code", 0), ("message", "normal")])))
    t.eq([(f[0], spop.read_kvlist(f[4])) for f in frames],
         [(spop.AGENT_DISCONNECT, {"status-code": 0, "message": "normal"})],
         "spoa raw: HAPROXY-DISCONNECT is answered with AGENT-DISCONNECT (0, normal), then closed")

    before = metrics(s.admin)
    cases = [
        (spop.notify(1, 1, spop.request_args()), 4, "a NOTIFY before the HELLO", False),
        (spop.hello(versions=None), 5, "HELLO without supported-versions", False),
        (spop.hello(max_frame=None), 6, "HELLO without max-frame-size", False),
        (spop.hello(caps=None), 7, "HELLO without capabilities", False),
        (spop.hello(versions="1.0, 3.0"), 8, "HELLO with versions 1.0 and 3.0 only", False),
        (spop.hello(max_frame=255), 9, "HELLO with max-frame-size 255", False),
        (b"\x7f\xff\xff\xff" + b"\x01" * 100, 3, "a frame of 2 GiB before the HELLO", False),
        (b"\x00\x00\x3f\xfd" + b"\x03" * 100, 3, "a frame over the max-frame-size agreed (16381)", True),
        (spop.notify(1, 1, spop.request_args(), flags=0), 10, "a NOTIFY without FIN (fragmented)", True),
        (spop.frame(0, b"rest", sid=1, fid=1), 10, "an UNSET frame (a later fragment)", True),
        (b"\x00\x00\x00\x02\x03\x00", 4, "a frame shorter than its metadata", True),
        (spop.frame(spop.NOTIFY, spop.string("m") + b"\x05" + spop.string("path") + b"\x08\x01/",
                    sid=1, fid=1), 4, "a NOTIFY announcing 5 arguments with 1", True),
        (spop.notify(1, 1, [("method", "GET"), ("path", "/"), ("headers", b"\x04host\x01x")]), 4,
         "req.hdrs_bin without its end marker", True),
        (spop.notify(1, 1, [("method", "GET"), ("path", (11, b""))]), 4, "a reserved data type", True),
        (spop.hello(), 4, "a second HELLO", True),
        (spop.frame(spop.ACK, b"", sid=1, fid=1), 4, "an ACK sent to the agent", True),
    ]
    for data, status, name, hs in cases:
        disconnected_with(t, P, data, status, name, handshake=hs)
    c = spop.Agent(P, timeout=6)
    t0 = time.time()
    f = c.read_frame()
    kv = spop.read_kvlist(f[4]) if f else {}
    t.ok(f is not None and kv.get("status-code") == 2 and 1.5 < time.time() - t0 < 5 and c.eof(),
         "spoa raw: no HELLO within --request-timeout (2 s): AGENT-DISCONNECT status 2, closed",
         repr((f, time.time() - t0)))
    c.close()
    after = metrics(s.admin)
    key = 'classify_spoa_disconnects_total{status="%d"}'
    counts = {st: after.get(key % st, 0) - before.get(key % st, 0) for st in (2, 3, 4, 10)}
    t.eq(counts, {2: 1, 3: 2, 4: 7, 10: 2}, "spoa raw: /metrics counts the DISCONNECT frames by status")

    # garbage: random bytes after a HELLO, random frames; the agent stays up
    rnd = random.Random(20)
    for i in range(150):
        body = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400)))
        if i % 3 == 0:
            data = spop.frame(spop.NOTIFY, body, sid=i, fid=1)
        elif i % 3 == 1:
            data = body
        else:
            data = struct_len(body) + body
        try:
            answers(P, data, handshake=i % 2 == 0, half_close=True)
        except (OSError, AssertionError):
            pass
    r = request(s.admin, "/healthz")
    a = spop.Agent(P)
    a.handshake()
    a.send(spop.notify(1, 1, spop.request_args(headers=[("user-agent", BOT_UA)])))
    f = a.read_frame()
    a.close()
    t.ok(r.status == 200 and s.p.p.poll() is None and f is not None and f[0] == spop.ACK,
         "spoa raw: after 150 garbage inputs the agent is up and answers")


def struct_len(body):
    import struct
    return struct.pack(">I", len(body))


def docs_show_recipes(t, root):
    with open(os.path.join(root, "docs", "classify-serve.md")) as f:
        doc = f.read()
    for name in ["haproxy-spoe.cfg", "classify-spoe.conf"]:
        t.ok(read_recipe(root, name).strip() in doc,
             "docs/classify-serve.md shows tests/serve/recipes/%s verbatim" % name)


def main():
    classifyc, serve, root = sys.argv[1:4]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-serve-spoa-")
    backend = s = None
    hp = None
    try:
        docs_show_recipes(t, root)
        backend = Backend()
        s = Setup(classifyc, serve, root, tmp)
        s.start()
        raw_tests(t, s)
        started = start_haproxy(tmp, s, backend)
        if started is None:
            t.skip("haproxy spoe: all checks", "haproxy is not installed")
        else:
            hp, port = started
            if t.ok(wait_port(port, proc=hp.p), "haproxy spoe: starts", hp.output()):
                through_haproxy(t, s, port, backend)
                reload_under_load(t, s, port)
            hp.stop(timeout=10)
            hp = None
            text_headers(t, s, tmp, backend)
            restart(t, s, tmp, backend)
        t.eq(s.p.stop(), 0, "classify-serve exits 0 on SIGTERM")
        s.p = None
    except Exception:  # report, never hang or leave processes behind
        import traceback
        t.ok(False, "no exception", traceback.format_exc())
    finally:
        if hp is not None:
            hp.stop()
        if s is not None and s.p is not None:
            s.p.stop()
        if backend is not None:
            backend.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
