#!/usr/bin/env python3
"""classify-serve --state-redis against a real Redis (TAP on stdout).

    python3 run_redis.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Starts Debian's redis-server on a loopback port (no persistence, no
config file: everything on its command line) and classify-serve
instances sharing their state through it, with --trust-proxy 127.0.0.1 so
that X-Forwarded-For chooses the client address (and so the counter's
key). Checks:
  - two instances see each other's counts: after one sync interval each
    judges a /24 by the fleet's count, and Redis holds the fleet's total;
    a mark set on one (a trap) rejects the client on the other, which only
    tests it, one interval later;
  - Redis stopped mid-run: every request is still answered (a thread
    keeps sending to both instances throughout), the instances say so in
    their logs and /metrics, count alone meanwhile, reconnect when Redis
    is back (empty) and deliver the counts made during the outage;
  - a peer that is not Redis (a raw socket sending what Redis never
    would: replies to no command, an HTTP answer, an endless array, a
    count that is no number, nothing at all) is survived, each counted in
    /metrics by kind, requests answered throughout;
  - Redis absent from the start; a password and a database; a unix
    socket; the option checks.
Reports itself skipped when redis-server is not installed (run.sh
installs it).
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (Proc, Tap, clear_of_window_end, compile_rules, free_port,  # noqa: E402
                          metrics, request, start_serve, wait_port)

# A day-long window: the test never straddles two windows unless it runs
# across midnight UTC, which main() waits out.
WINDOW = 86400
LIMIT = 10
INTERVAL = 0.2  # --state-sync-interval, seconds

RULES = """
filter main(req: Request) {
    if req.path == "/background" { accept "background" }
    if req.path == "/trap" && mark("trap", req.client_ip, 3600) { reject "trapped" }
    if marked("trap", req.client_ip, 3600) { reject "marked" }
    if count("pages", req.client_ip.net(24), %d) > %d { reject "over" }
    accept "ok"
}
""" % (WINDOW, LIMIT)


class Resp:
    """A minimal RESP2 client, to read what the instances wrote."""

    def __init__(self, port=None, unix=None):
        if unix:
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.connect(unix)
        else:
            self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError
            self.buf += d
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return rest.decode()
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode("latin-1")
        if t == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise ValueError(line)

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self._reply()

    def close(self):
        self.s.close()


def start_redis(redis_bin, tmp, port, extra=()):
    argv = [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", tmp, "--daemonize", "no", "--protected-mode", "no"]
    p = Proc(argv + list(extra), os.path.join(tmp, "redis-%d.log" % port))
    if port and not wait_port(port, proc=p.p):
        p.stop()
        raise RuntimeError("redis-server did not start:\n" + p.output())
    return p


def window_key(net):
    k = int(time.time() * 1000) // (WINDOW * 1000)
    return "clf:c:%d:pages:ip:%s:%d" % (WINDOW, net, k)


def get(port, xff, path="/"):
    return request(port, path, ua="test", headers=[("X-Forwarded-For", xff)])


def serve(serve_bin, rules, tmp, name, redis_url, extra=()):
    p = free_port()
    admin = free_port()
    args = [rules, "--listen", "127.0.0.1:%d" % p, "--listen-admin", "127.0.0.1:%d" % admin,
            "--threads", "2", "--trust-proxy", "127.0.0.1",
            "--state-sync-interval", str(INTERVAL)]
    if redis_url:
        args += ["--state-redis", redis_url]
    proc = start_serve(serve_bin, args + list(extra), tmp, name, admin_port=admin)
    proc.port, proc.admin = p, admin
    return proc


def wait_for(cond, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if cond():
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return cond()


def up(inst):
    m = metrics(inst.admin)
    return next((v for k, v in m.items() if k.startswith("classify_state_redis_up")), None)


def sync_wait():
    time.sleep(INTERVAL * 3 + 0.2)


def two_instances(t, a, b, rport):
    """A counts 8 of the /24; B's first request is judged on what B knew
    (1), then B has the fleet's 9: its next is 10 (accepted, not over 10)
    and the one after 11 (rejected). A, which has not seen B's yet, takes
    its 9th, then knows the fleet's 12."""
    net = "198.51.100"
    got = [get(a.port, net + ".7").status for _ in range(8)]
    t.eq(got, [421] * 8, "instance A: 8 requests from %s.0/24 accepted" % net)
    sync_wait()
    r = Resp(rport)
    t.eq(r.cmd("GET", window_key(net + ".0")), "8", "Redis holds A's 8 under the window's key")
    t.ok(0 < r.cmd("PTTL", window_key(net + ".0")) <= 2 * WINDOW * 1000 + 60000,
         "the window's key expires after the next window")
    t.eq(get(b.port, net + ".9").status, 421, "instance B: its first request (1 + what it knew: 0)")
    sync_wait()
    t.eq([get(b.port, net + ".9").status, get(b.port, net + ".10").status], [421, 403],
         "instance B after one interval: 10 accepted, 11 rejected: the fleet's count")
    sync_wait()
    t.eq(r.cmd("GET", window_key(net + ".0")), "11", "Redis holds the fleet's total, 11")
    t.eq(get(a.port, net + ".7").status, 421, "instance A: its 9th, judged on what A knew")
    sync_wait()
    t.eq(get(a.port, net + ".7").status, 403, "instance A after one interval: 13, rejected")
    r.close()
    # a mark set on A, only tested on B: it comes through the marks channel
    trapped = "203.0.113.66"
    t.eq([get(b.port, trapped).status, get(a.port, trapped, "/trap").header("x-classify-reason")],
         [421, "trapped"], "B lets %s through; A's trap marks it" % trapped)
    sync_wait()
    r = Resp(rport)
    pttl = r.cmd("PTTL", "clf:m:3600:trap:ip:" + trapped)
    t.ok(3500000 < pttl <= 3600000, "Redis holds the mark, expiring with it (PTTL %r ms)" % pttl)
    r.close()
    got = get(b.port, trapped)
    t.eq((got.status, got.header("x-classify-reason")), (403, "marked"),
         "instance B, which only tests the mark, rejects %s one interval later" % trapped)
    mb = metrics(b.admin)
    t.ok(mb.get("classify_state_redis_subscribed") == 1 and
         mb.get("classify_state_sync_marks_total{dir=\"received\"}", 0) >= 1 and
         metrics(a.admin).get("classify_state_sync_marks_total{dir=\"sent\"}") == 1,
         "/metrics: A sent one mark, B subscribed and received it", mb)
    for inst, name in ((a, "A"), (b, "B")):
        m = metrics(inst.admin)
        t.ok(m.get("classify_state_sync_merged_total{result=\"merged\"}", 0) >= 2 and
             m.get("classify_state_redis_failures_total{kind=\"protocol\"}") == 0,
             "instance %s /metrics: fleet values merged, no failures" % name, m)


class Traffic(threading.Thread):
    """Requests to each instance in turn until stopped; every answer must
    be a verdict (421 or 403) given within a second."""

    def __init__(self, insts):
        super().__init__(daemon=True)
        self.insts, self.stop_flag = insts, False
        self.n, self.bad = 0, []

    def run(self):
        i = 0
        while not self.stop_flag:
            inst = self.insts[i % len(self.insts)]
            i += 1
            t0 = time.time()
            try:
                r = get(inst.port, "10.9.9.%d" % (i % 250), "/background")
                if r.status != 421 or time.time() - t0 > 1.0:
                    self.bad.append((r.status, time.time() - t0))
            except OSError as e:
                self.bad.append(str(e))
            self.n += 1
            time.sleep(0.01)


def outage(t, a, b, redis_bin, tmp, rport, redis):
    net = "192.0.2"
    traffic = Traffic([a, b])
    traffic.start()
    time.sleep(0.3)
    redis.stop()
    t.ok(wait_for(lambda: up(a) == 0 and up(b) == 0, 10),
         "Redis stopped: both instances' classify_state_redis_up is 0")
    got = [get(a.port, net + ".1").status for _ in range(9)]
    t.eq(got, [421] * 9, "while Redis is down: instance A counts alone (9 accepted)")
    got = [get(a.port, net + ".1").status for _ in range(2)]  # the 10th and 11th
    t.eq(got, [421, 403], "while Redis is down: A's own count still limits (10 accepted, 11 not)")
    t.ok(wait_for(lambda: metrics(a.admin).get(
        "classify_state_sync_ticks_total{result=\"down\"}", 0) > 0, 3) and
        metrics(a.admin).get("classify_state_redis_down_seconds", 0) > 0,
        "/metrics while down: down_seconds > 0, ticks counted as down", metrics(a.admin))
    t.ok("lost" in a.output() and "serving with this instance's counts only" in a.output(),
         "the log says Redis was lost and the instance counts alone", a.output()[-2000:])
    time.sleep(1.0)
    redis = start_redis(redis_bin, tmp, rport)
    t.ok(wait_for(lambda: up(a) == 1 and up(b) == 1, 15),
         "Redis back: both instances reconnect (classify_state_redis_up 1)")
    t.ok("connected again after" in a.output() and "catching up" in a.output(),
         "the log says it reconnected and catches up", a.output()[-2000:])
    sync_wait()
    r = Resp(rport)
    t.eq(r.cmd("GET", window_key(net + ".0")), "11",
         "caught up: the 11 counted during the outage are in the (restarted, empty) Redis")
    r.close()
    t.eq(get(b.port, net + ".2").status, 421, "instance B: first request of the /24 (B knew none)")
    sync_wait()
    t.eq(get(b.port, net + ".2").status, 403, "instance B after one interval: A's outage counts are in")
    traffic.stop_flag = True
    traffic.join(10)
    t.ok(traffic.n > 50 and not traffic.bad,
         "no failed request while Redis stopped and restarted (%d requests)" % traffic.n,
         traffic.bad[:10])
    m = metrics(a.admin)
    t.ok(m.get("classify_state_redis_connects_total") >= 2 and
         m.get("classify_state_redis_failures_total{kind=\"closed\"}", 0) +
         m.get("classify_state_redis_failures_total{kind=\"connect\"}", 0) >= 1,
         "/metrics: two connections, the loss and the failed attempts counted", m)
    return redis


# What the fake Redis sends, one behaviour per connection, in turn.
FAKE_MODES = [
    ("reply to no command", b"+OK\r\n+OK\r\n+OK\r\n", None),
    ("an HTTP answer", None, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
    ("an endless array", None, b"*99999999\r\n:1\r\n"),
    ("silence", None, b""),
    ("a count that is no number", None, "script"),
    ("a bulk string longer than the bound", None, b"$999999999\r\n" + b"x" * (5 << 20)),
]


class FakeRedis(threading.Thread):
    """A raw socket that speaks just enough Redis to get past the
    handshake, then misbehaves as FAKE_MODES says (mode i on connection i)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.served = []
        self.closing = False

    def run(self):
        i = 0
        while not self.closing:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            name, first, after = FAKE_MODES[i % len(FAKE_MODES)]
            i += 1
            self.served.append(name)
            threading.Thread(target=self.one, args=(c, first, after), daemon=True).start()

    def one(self, c, first, after):
        try:
            c.settimeout(10)
            if first is not None:  # before anything is asked
                c.sendall(first)
                time.sleep(2)
                return
            buf = b""
            while b"PING" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            c.sendall(b"+PONG\r\n")
            if after == "script":
                # SCRIPT LOAD twice: two SHA-1s; then a word for a count
                c.sendall(b"$40\r\n" + b"a" * 40 + b"\r\n$40\r\n" + b"b" * 40 + b"\r\n")
                buf = b""
                while b"INCRBY" not in buf and b"GET" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                c.sendall(b"$5\r\nhello\r\n" * 4)
            elif after:
                c.sendall(after)
            time.sleep(3)
        except OSError:
            pass
        finally:
            c.close()

    def stop(self):
        self.closing = True
        self.ls.close()


def garbage(t, serve_bin, rules, tmp):
    fake = FakeRedis()
    fake.start()
    c = serve(serve_bin, rules, tmp, "garbage", "redis://127.0.0.1:%d" % fake.port,
              ["--state-redis-timeout", "0.3", "--state-sync-interval", "0.05"])
    traffic = Traffic([c])
    traffic.start()
    n = 0
    end = time.time() + 20
    # two connections (the sync's, the marks channel's) take the modes in
    # turn: wait for every mode and two more, then for the last handshake
    while time.time() < end and len(fake.served) < len(FAKE_MODES) + 2:
        get(c.port, "100.64.0.%d" % (n % 250))  # counted: something to sync
        n += 1
        time.sleep(0.02)
    time.sleep(0.5)
    traffic.stop_flag = True
    traffic.join(10)
    t.ok(len(fake.served) > len(FAKE_MODES), "every misbehaviour was tried (%s)" %
         ", ".join(fake.served[:len(FAKE_MODES)]), fake.served)
    t.ok(c.p.poll() is None, "classify-serve survived the fake Redis", c.output()[-3000:])
    t.ok(traffic.n > 20 and not traffic.bad,
         "every request answered meanwhile (%d)" % traffic.n, traffic.bad[:10])
    m = metrics(c.admin)
    kinds = {k: m.get("classify_state_redis_failures_total{kind=\"%s\"}" % k, 0)
             for k in ("protocol", "reply", "timeout", "closed")}
    t.ok(kinds["protocol"] >= 3 and kinds["reply"] >= 1 and kinds["timeout"] >= 1,
         "/metrics counts them: protocol %(protocol)d, reply %(reply)d, timeout %(timeout)d" % kinds,
         m)
    t.eq(up(c), 0, "/metrics: classify_state_redis_up 0 with a peer that is not Redis")
    t.ok(m.get("classify_state_redis_connects_total", 0) >= len(FAKE_MODES) - 1,
         "the handshake passed where the fake answered PING with PONG", m)
    out = c.output()
    t.ok("unreachable" in out and ("a reply to no command" in out or "not the Redis protocol" in out),
         "the log names the first failure", out[-2000:])
    t.eq(c.stop(), 0, "it stops cleanly (exit 0; no sanitizer report) with the fake Redis")
    fake.stop()


def absent(t, serve_bin, rules, tmp):
    c = serve(serve_bin, rules, tmp, "absent", "redis://127.0.0.1:%d" % free_port())
    got = [get(c.port, "203.0.113.1").status for _ in range(12)]
    t.eq(got, [421] * 10 + [403] * 2, "Redis absent from the start: the instance counts alone")
    t.ok(wait_for(lambda: metrics(c.admin).get(
        "classify_state_redis_failures_total{kind=\"connect\"}", 0) >= 2, 5),
        "it keeps trying (connect failures counted)")
    t.ok("unreachable (connect: connection refused)" in c.output(), "the log says why",
         c.output()[-1500:])
    t.eq(c.stop(), 0, "it stops cleanly (exit 0) while retrying")


def auth_db_unix(t, serve_bin, redis_bin, rules, tmp):
    port = free_port()
    sock = os.path.join(tmp, "redis.sock")
    rd = start_redis(redis_bin, tmp, port, ["--requirepass", "s3cr@t", "--unixsocket", sock,
                                            "--unixsocketperm", "700"])
    try:
        good = serve(serve_bin, rules, tmp, "auth", "redis://:s3cr%%40t@127.0.0.1:%d/3" % port)
        t.ok(wait_for(lambda: up(good) == 1, 5), "a password (percent-encoded) and database 3: up")
        get(good.port, "198.18.0.1")
        sync_wait()
        r = Resp(port)
        r.cmd("AUTH", "s3cr@t")
        r.cmd("SELECT", "3")
        t.eq(r.cmd("GET", window_key("198.18.0.0")), "1", "the count is in database 3")
        r.close()
        t.ok("s3cr" not in good.output(), "the password is in no log line", good.output())
        good.stop()
        bad = serve(serve_bin, rules, tmp, "badauth", "redis://:wrong@127.0.0.1:%d" % port)
        t.ok(wait_for(lambda: metrics(bad.admin).get(
            "classify_state_redis_failures_total{kind=\"reply\"}", 0) >= 1, 5) and up(bad) == 0,
            "a wrong password: a reply failure, down")
        t.ok("WRONGPASS" in bad.output(), "the log has Redis's answer", bad.output()[-1500:])
        t.eq(bad.stop(), 0, "it stops cleanly (exit 0)")
        ux = serve(serve_bin, rules, tmp, "unix", "unix://:s3cr%%40t@%s?db=3" % sock)
        t.ok(wait_for(lambda: up(ux) == 1, 5), "a unix socket: up")
        ux.stop()
    finally:
        rd.stop()


def options(t, serve_bin, rules):
    def check(*args):
        p = subprocess.run([serve_bin, rules, "--listen", "127.0.0.1:1", "--check"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        return p.returncode, p.stderr.decode()

    rc, err = check("--state-redis", "redis://127.0.0.1:6379/0")
    t.eq(rc, 0, "--check with --state-redis (no connection made)")
    rc, err = check("--state-redis", "http://127.0.0.1")
    t.ok(rc == 2 and "expected redis://" in err, "--state-redis: not a Redis URL", err)
    rc, err = check("--state-redis", "redis://h:99999")
    t.ok(rc == 2 and "at byte 11: the port is not a number" in err,
         "--state-redis: a bad port, with its place", err)
    rc, err = check("--state-redis", "rediss://h")
    t.ok(rc == 2 and "TLS" in err, "--state-redis: rediss:// refused (no TLS in hiredis 0.14)", err)
    rc, err = check("--state-redis", "redis://h", "--state-bytes", "0")
    t.ok(rc == 2 and "--state-bytes is 0" in err, "--state-redis needs a store", err)
    rc, err = check("--state-bytes", "12X")
    t.ok(rc == 2 and "a size from" in err, "--state-bytes: a bad size", err)
    rc, err = check("--state-sync-interval", "0")
    t.ok(rc == 2 and "--state-sync-interval" in err, "--state-sync-interval: at least 0.01 s", err)


def main():
    classifyc, serve_bin, source_root = sys.argv[1:4]
    t = Tap()
    redis_bin = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None)
    if redis_bin is None:
        t.skip("classify-serve --state-redis against redis-server",
               "redis-server is not installed (run.sh installs it)")
        t.done()
        return 0
    clear_of_window_end(WINDOW, 120)
    tmp = tempfile.mkdtemp(prefix="classify-serve-redis-")
    redis, a, b = None, None, None
    try:
        src = os.path.join(tmp, "state.clf")
        with open(src, "w") as f:
            f.write(RULES)
        rules = os.path.join(tmp, "state.bin")
        compile_rules(classifyc, source_root, src, rules)
        rport = free_port()
        redis = start_redis(redis_bin, tmp, rport)
        url = "redis://127.0.0.1:%d" % rport
        a = serve(serve_bin, rules, tmp, "a", url)
        b = serve(serve_bin, rules, tmp, "b", url)
        t.ok(wait_for(lambda: up(a) == 1 and up(b) == 1, 10), "both instances connect to Redis")
        two_instances(t, a, b, rport)
        redis = outage(t, a, b, redis_bin, tmp, rport, redis)
        for inst, name in ((a, "A"), (b, "B")):
            t.eq(inst.stop(), 0, "instance %s stops cleanly (exit 0)" % name)
        a = b = None
        garbage(t, serve_bin, rules, tmp)
        absent(t, serve_bin, rules, tmp)
        auth_db_unix(t, serve_bin, redis_bin, rules, tmp)
        options(t, serve_bin, rules)
    except Exception:
        import traceback
        t.ok(False, "no exception", traceback.format_exc() +
             "".join(p.output()[-2000:] for p in (a, b) if p is not None))
    finally:
        for p in (a, b, redis):
            if p is not None:
                p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
