#!/usr/bin/env python3
"""classify-serve's reverse DNS against a real DNS server (TAP on stdout).

    python3 run_rdns.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

Starts Debian's dnsmasq on a loopback port (never the system's resolver:
--no-resolv, --no-hosts, and only the records below) and classify-serve
with --resolver pointing at it, behind a forward-auth listener as the
HAProxy recipe calls it (X-Forwarded-Method, X-Forwarded-Uri), trusting
127.0.0.1 so that X-Forwarded-For chooses the client address. Checks:
a genuine crawler name is verified; forged PTRs (a name without an
address, a real crawler's name on another address, hostile names) are
not; an address without a PTR is resolved without a name; the first
request is classified at once as not known and a following one gets the
answer; IPv6 clients; a resolver that is down or silent never holds a
request; rules that do not read req.rdns make no lookup; --rdns off; the
bounded cache; the config-file keys; --check of --resolver; /metrics.
With stdlib/default.clf (issue 16's done-when through classify-serve):
Googlebot's User-Agent from Google's published ranges is accepted
"verified:googlebot", from another address rejected "forged:googlebot",
and from an address outside the ranges whose PTR confirms into
googlebot.com verified once the answer is in.
Reports itself skipped when dnsmasq is not installed (run.sh installs it).
"""

import os
import pwd
import grp
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (Proc, Tap, compile_rules, free_port, metrics, request,  # noqa: E402
                          start_serve, wait_port)

GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

RULES = """
filter main(req: Request) {
    if !req.rdns_checked { accept "rdns-unknown" }
    if req.rdns == "" { reject "rdns-none" }
    if req.rdns == "crawl-66-249-66-1.googlebot.com" { accept "rdns-googlebot-66" }
    if req.rdns.ends_with(".googlebot.com") { accept "rdns-googlebot" }
    accept "rdns-other"
}
"""

# Rules that never read the reverse DNS: classify-serve must not resolve.
NO_RDNS_RULES = """
filter main(req: Request) {
    if req.client_ip in [198.51.100.0/24] { reject "bad-ip" }
    accept "fine"
}
"""

LONG = ".".join(["a" * 60] * 4) + ".googlebot.com"  # 257 bytes: longer than a DNS name
LONG_OK = ".".join(["b" * 59] * 4) + ".googlebot.com"  # 253 bytes: the longest there is

# dnsmasq's records. --host-record makes the A/AAAA record and its PTR;
# --ptr-record a PTR alone. --local makes dnsmasq answer these zones itself
# (NXDOMAIN for what it does not know) instead of looking for upstreams.
RECORDS = [
    "--local=/in-addr.arpa/", "--local=/ip6.arpa/", "--local=/googlebot.com/",
    "--local=/example/",
    # (a) genuine: PTR and A agree
    "--host-record=crawl-66-249-66-1.googlebot.com,66.249.66.1",
    # (b) forged: a PTR into googlebot.com whose name has no address
    "--ptr-record=9.113.0.203.in-addr.arpa,crawl-203-0-113-9.googlebot.com",
    # (b) forged: a real crawler's name, whose A record is another address
    "--ptr-record=10.113.0.203.in-addr.arpa,crawl-66-249-66-1.googlebot.com",
    # several PTRs: a forged one first, then one that confirms (dnsmasq
    # answers a name's PTR records last configured first)
    "--ptr-record=20.113.0.203.in-addr.arpa,crawl-203-0-113-20.googlebot.com",
    "--ptr-record=20.113.0.203.in-addr.arpa,fake-20.googlebot.com",
    "--address=/crawl-203-0-113-20.googlebot.com/203.0.113.20",
    # hostile names: too long, and bytes no host name has, each with an
    # address that would confirm it
    "--ptr-record=30.113.0.203.in-addr.arpa," + LONG,
    "--address=/" + LONG + "/203.0.113.30",
    "--ptr-record=31.113.0.203.in-addr.arpa,bad!name.googlebot.com",
    "--address=/bad!name.googlebot.com/203.0.113.31",
    # the longest name there is still confirms
    "--host-record=" + LONG_OK + ",203.0.113.32",
    # (e) IPv6: genuine, and a crawler's name without an AAAA record
    "--host-record=crawl-2001-db8--1.googlebot.com,2001:db8::1",
    "--ptr-record=2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa,"
    "crawl-66-249-66-1.googlebot.com",
    # an address whose name is not googlebot's
    "--host-record=host-7.example,198.51.100.7",
    # the bounded cache's addresses
    "--host-record=c1.example,192.0.2.101", "--host-record=c2.example,192.0.2.102",
    "--host-record=c3.example,192.0.2.103",
]


# (client address, the reason the rules give once the answer is in, what it shows)
CASES = [
    ("203.0.113.9", "rdns-none", "(b) a PTR into googlebot.com whose name has no address: no confirmed name"),
    ("203.0.113.10", "rdns-none",
     "(b) a PTR naming a real crawler whose A record is another address: no confirmed name"),
    ("203.0.113.20", "rdns-googlebot", "several PTR names: the first that confirms (after a forged one)"),
    ("203.0.113.30", "rdns-none", "a PTR name longer than 253 bytes (with an address) is never confirmed"),
    ("203.0.113.31", "rdns-none",
     "a PTR name with a byte no host name has (with an address) is never confirmed"),
    ("203.0.113.32", "rdns-googlebot", "a PTR name of 253 bytes, the longest there is, confirms"),
    ("192.0.2.1", "rdns-none", "(c) no PTR (NXDOMAIN): resolved, no name"),
    ("198.51.100.7", "rdns-other", "a confirmed name of another domain"),
    ("2001:db8::1", "rdns-googlebot", "(e) an IPv6 client: PTR in ip6.arpa and AAAA confirm"),
    ("2001:db8::2", "rdns-none",
     "(e) an IPv6 client whose PTR names a host with only an IPv4 address: not confirmed"),
]


def free_udp_tcp_port():
    """A port free on 127.0.0.1 for both UDP and TCP (dnsmasq takes both)."""
    for _ in range(50):
        port = free_port()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            u.close()
    raise RuntimeError("no free port")


def dns_answers(port, name, qtype=12, timeout=0.3):
    """Sends one query; True when a response comes back."""
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    q += struct.pack(">HH", qtype, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(q, ("127.0.0.1", port))
        return s.recv(4096)[:2] == b"\x42\x42"
    except OSError:
        return False
    finally:
        s.close()


def start_dnsmasq(dnsmasq, tmp):
    port = free_udp_tcp_port()
    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    argv = [dnsmasq, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--no-poll", "--port=%d" % port, "--listen-address=127.0.0.1", "--bind-interfaces",
            "--user=" + user, "--group=" + group, "--pid-file=" + os.path.join(tmp, "dnsmasq.pid"),
            "--log-queries", "--log-facility=-"] + RECORDS
    p = Proc(argv, os.path.join(tmp, "dnsmasq.log"))
    end = time.time() + 10
    while time.time() < end and p.p.poll() is None:
        if dns_answers(port, "1.66.249.66.in-addr.arpa"):
            return p, port
        time.sleep(0.05)
    out = p.output()
    p.stop()
    raise RuntimeError("dnsmasq did not start:\n" + out)


def ask(port, client, ua=GOOGLEBOT_UA):
    """One forward-auth request as the HAProxy recipe sends it, for `client`."""
    t0 = time.time()
    r = request(port, "/", ua=ua, headers=[("X-Forwarded-Method", "GET"), ("X-Forwarded-Uri", "/page"),
                                           ("X-Forwarded-For", client)])
    return r.header("x-classify-reason"), time.time() - t0


def settle(port, client, timeout=5.0):
    """Asks until the answer is no longer "not known" (bounded); the reason."""
    end = time.time() + timeout
    reason = None
    while time.time() < end:
        reason, _ = ask(port, client)
        if reason != "rdns-unknown":
            return reason
        time.sleep(0.02)
    return reason


def serve(serve_bin, rules, tmp, name, extra):
    port, admin = free_port(), free_port()
    p = start_serve(serve_bin, [rules, "--listen-auth", "haproxy=127.0.0.1:%d" % port,
                                "--listen-admin", "127.0.0.1:%d" % admin,
                                "--trust-proxy", "127.0.0.1"] + extra, tmp, name, admin_port=admin)
    wait_port(port, proc=p.p)
    return p, port, admin


def log_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def verification(t, serve_bin, rules, tmp, dns_port, dns_log):
    p, port, admin = serve(serve_bin, rules, tmp, "rdns", ["--resolver", "127.0.0.1:%d" % dns_port,
                                                          "--threads", "2"])
    try:
        # (d) the first request is answered at once, without the answer
        reason, took = ask(port, "66.249.66.1")
        t.eq(reason, "rdns-unknown", "the first request from an address: req.rdns_checked is false")
        t.ok(took < 1.0, "... and it did not wait for DNS (%.3f s)" % took)
        t.eq(settle(port, "66.249.66.1"), "rdns-googlebot-66",
             "(a) a later request: the forward-confirmed name (crawl-66-249-66-1.googlebot.com)")
        t.eq(ask(port, "66.249.66.1")[0], "rdns-googlebot-66", "the answer is cached")
        for client, want, what in CASES:
            t.eq(settle(port, client), want, what)
        log = log_text(dns_log)
        fake = log.find("query[A] fake-20.googlebot.com")
        t.ok(0 <= fake < log.find("query[A] crawl-203-0-113-20.googlebot.com"),
             "several PTR names are tried in the answer's order", log[-2000:])
        r = request(port, "/", ua=GOOGLEBOT_UA, headers=[("X-Forwarded-Method", "GET"),
                                                         ("X-Forwarded-Uri", "/")])
        t.eq(r.header("x-classify-reason"), "rdns-unknown",
             "the proxy's own address (127.0.0.1, no PTR served) is looked up too; first not known")
        m = metrics(admin)
        t.ok(m.get("classify_rdns_results_total{result=\"confirmed\"}", 0) >= 5 and
             m.get("classify_rdns_results_total{result=\"unconfirmed\"}", 0) >= 6 and
             m.get("classify_rdns_cache_hits_total", 0) >= 12 and
             m.get("classify_rdns_lookups_total", 0) == 12, "/metrics: lookups, hits, results", m)
        # one lookup per address, whichever worker asked
        before = m.get("classify_rdns_lookups_total", 0)
        for _ in range(10):
            ask(port, "66.249.66.1")
        t.eq(metrics(admin).get("classify_rdns_lookups_total", 0), before,
             "cached answers start no lookup, on any worker")
    finally:
        t.eq(p.stop(), 0, "exit 0 on SIGTERM")
    out = log_text(p.log_path)
    t.ok("reverse DNS for the rules' req.rdns: resolver 127.0.0.1:%d" % dns_port in out,
         "the start-up log names the resolver", out)


def default_policy(t, serve_bin, classifyc, tmp, dns_port):
    src = os.path.join(SOURCE_ROOT, "stdlib", "default.clf")
    rules = os.path.join(tmp, "default.bin")
    compile_rules(classifyc, SOURCE_ROOT, src, rules)
    p, port, _ = serve(serve_bin, rules, tmp, "default", ["--resolver", "127.0.0.1:%d" % dns_port])
    try:
        got = {c: ask(port, c)[0] for c in ("66.249.66.1", "203.0.113.5")}
        t.ok(got == {"66.249.66.1": "verified:googlebot", "203.0.113.5": "forged:googlebot"},
             "default.clf in classify-serve: Googlebot from Google's ranges verified, from "
             "elsewhere forged", got)
        # outside the ranges, with a PTR that confirms: verified once DNS answers
        first, _ = ask(port, "203.0.113.20")
        end, later = time.time() + 5, first
        while time.time() < end and later != "verified:googlebot":
            time.sleep(0.02)
            later, _ = ask(port, "203.0.113.20")
        t.ok(first == "forged:googlebot" and later == "verified:googlebot",
             "default.clf: a Googlebot outside the ranges is forged until its PTR confirms "
             "into googlebot.com, then verified", (first, later))
    finally:
        p.stop()


def resolver_down(t, serve_bin, rules, tmp):
    # nothing listens: the kernel refuses (ICMP port unreachable)
    closed = free_udp_tcp_port()
    # a socket that reads queries and never answers: the time-out
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    for what, port in (("a resolver port nobody listens on", closed),
                       ("a resolver that never answers", silent.getsockname()[1])):
        p, lport, admin = serve(serve_bin, rules, tmp, "down", [
            "--resolver", "127.0.0.1:%d" % port, "--rdns-timeout", "0.2", "--threads", "1"])
        try:
            worst, reasons = 0.0, set()
            end = time.time() + 3
            while time.time() < end:
                reason, took = ask(lport, "66.249.66.1")
                reasons.add(reason)
                worst = max(worst, took)
                if metrics(admin).get("classify_rdns_results_total{result=\"failed\"}", 0) >= 1:
                    break
                time.sleep(0.05)
            reason, took = ask(lport, "66.249.66.1")
            reasons.add(reason)
            worst = max(worst, took)
            t.eq(sorted(reasons), ["rdns-unknown"], "(f) %s: every request not known" % what)
            t.ok(worst < 1.0, "(f) %s: no request waited (slowest %.3f s)" % (what, worst))
            m = metrics(admin)
            t.ok(m.get("classify_rdns_results_total{result=\"failed\"}", 0) >= 1 and
                 m.get("classify_rdns_lookups_total", 0) == 1,
                 "(f) %s: counted as a failure, remembered (one lookup)" % what, m)
        finally:
            t.eq(p.stop(), 0, "(f) %s: exit 0 on SIGTERM" % what)
    silent.close()


def not_asked(t, serve_bin, classifyc, rules, tmp, dns_port):
    src = os.path.join(tmp, "no-rdns.clf")
    with open(src, "w") as f:
        f.write(NO_RDNS_RULES)
    other = os.path.join(tmp, "no-rdns.bin")
    compile_rules(classifyc, SOURCE_ROOT, src, other)
    p, port, admin = serve(serve_bin, other, tmp, "norules", ["--resolver", "127.0.0.1:%d" % dns_port])
    try:
        t.eq(ask(port, "66.249.66.1")[0], "fine", "rules without req.rdns classify as before")
        t.eq(ask(port, "198.51.100.7")[0], "bad-ip", "... with the client address from X-Forwarded-For")
        t.eq(metrics(admin).get("classify_rdns_lookups_total", -1), 0,
             "rules that do not read req.rdns or req.rdns_checked make no lookup")
    finally:
        p.stop()
    p, port, admin = serve(serve_bin, rules, tmp, "off", ["--rdns", "off"])
    try:
        reasons = {ask(port, "66.249.66.1")[0] for _ in range(3)}
        t.eq(sorted(reasons), ["rdns-unknown"], "--rdns off: req.rdns_checked is always false")
        t.ok("classify_rdns_lookups_total" not in metrics(admin), "--rdns off: no reverse-DNS metrics")
    finally:
        p.stop()
    out = log_text(p.log_path)
    t.ok("--rdns is off: req.rdns_checked is always false" in out,
         "--rdns off with rules that read req.rdns: a warning at start", out)


def bounded_cache(t, serve_bin, rules, tmp, dns_port):
    conf = os.path.join(tmp, "rdns.conf")
    with open(conf, "w") as f:
        f.write("# reverse DNS from a config file\nresolver 127.0.0.1:%d\nrdns-cache 2\n"
                "rdns-min-ttl 30\nrdns-max-ttl 60\nrdns-timeout 1\nthreads 1\n" % dns_port)
    p, port, admin = serve(serve_bin, rules, tmp, "small", ["--config", conf])
    try:
        got = [settle(port, "192.0.2.%d" % n) for n in (101, 102, 103)]
        t.eq(got, ["rdns-other"] * 3, "the config-file keys resolver, rdns-cache, rdns-*-ttl, rdns-timeout")
        m = metrics(admin)
        t.eq(m.get("classify_rdns_cache_entries"), 2.0, "--rdns-cache 2: at most 2 answers kept")
        before = m.get("classify_rdns_lookups_total", 0)
        t.eq(ask(port, "192.0.2.101")[0], "rdns-unknown",
             "the least recently used answer was dropped: asked again")
        t.eq(ask(port, "192.0.2.103")[0], "rdns-other", "the most recent one is still there")
        t.eq(metrics(admin).get("classify_rdns_lookups_total", 0), before + 1, "one lookup more")
    finally:
        p.stop()


def check_resolver(t, serve_bin, rules):
    def check(*extra):
        r = subprocess.run([serve_bin, rules, "--listen", "127.0.0.1:1", "--check"] + list(extra),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        return r.returncode, r.stderr.decode()
    rc, err = check("--resolver", "127.0.0.1:5353")
    t.eq(rc, 0, "--check accepts --resolver ADDR:PORT")
    rc, err = check("--resolver", "[::1]:5353")
    t.eq(rc, 0, "--check accepts --resolver [IPV6]:PORT")
    rc, err = check("--resolver", "not a server")
    t.ok(rc == 2 and "--resolver: 'not a server' is not" in err, "--check refuses a bad --resolver", err)
    rc, err = check("--rdns-min-ttl", "100", "--rdns-max-ttl", "50")
    t.ok(rc == 2 and "--rdns-min-ttl" in err, "--rdns-min-ttl longer than --rdns-max-ttl: usage error", err)
    rc, err = check("--rdns", "maybe")
    t.ok(rc == 2 and "expected 'on' or 'off'" in err, "--rdns takes on or off", err)


def main():
    global SOURCE_ROOT
    classifyc, serve_bin, SOURCE_ROOT = sys.argv[1:4]
    t = Tap()
    dnsmasq = shutil.which("dnsmasq") or next(
        (p for p in ("/usr/sbin/dnsmasq", "/sbin/dnsmasq") if os.access(p, os.X_OK)), None)
    if dnsmasq is None:
        t.skip("reverse DNS against dnsmasq", "dnsmasq is not installed (run.sh installs dnsmasq-base)")
        t.done()
        return 0
    tmp = tempfile.mkdtemp(prefix="classify-serve-rdns-")
    dns = None
    try:
        src = os.path.join(tmp, "rdns.clf")
        with open(src, "w") as f:
            f.write(RULES)
        rules = os.path.join(tmp, "rdns.bin")
        compile_rules(classifyc, SOURCE_ROOT, src, rules)
        dns, dns_port = start_dnsmasq(dnsmasq, tmp)
        verification(t, serve_bin, rules, tmp, dns_port, dns.log_path)
        default_policy(t, serve_bin, classifyc, tmp, dns_port)
        resolver_down(t, serve_bin, rules, tmp)
        not_asked(t, serve_bin, classifyc, rules, tmp, dns_port)
        bounded_cache(t, serve_bin, rules, tmp, dns_port)
        check_resolver(t, serve_bin, rules)
    except Exception:
        import traceback
        t.ok(False, "no exception", traceback.format_exc() + (dns.output()[-3000:] if dns else ""))
    finally:
        if dns is not None:
            dns.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
