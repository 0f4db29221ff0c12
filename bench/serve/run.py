#!/usr/bin/env python3
"""Load test of classify-serve with wrk on loopback (docs/performance.md,
"classify-serve"). Not a timed test: it prints figures, and exits 1 only
when a run had errors or failed requests.

    python3 bench/serve/run.py BUILD_DIR [--seconds S] [--rounds N] [--workers N]

Rows, each run --rounds times (interleaved, so background load hits every
row alike; the table gives medians):
  nginx-200       nginx `return 200 "ok"` (the practical limit), c50
  serve           classify-serve pass-through, examples/main.clf, c50
  serve-auth      classify-serve forward-auth listener (nginx=), c50
  nginx-200-c1000 / serve-c1000   the same with 1,000 connections
  serve-reload    serve, c50, while the rules are reloaded every second
                  (alternately by SIGHUP and by replacing the file)
  caddy           Caddy `reverse_proxy` to the nginx backend, c50
  caddy-classify  Caddy with the issue's Caddyfile: classify-serve first,
                  the nginx backend on 421, c50
  haproxy         HAProxy 2.6 proxying to the nginx backend, c50
  haproxy-spoe    HAProxy with the SPOE recipe (tests/serve/recipes/
                  haproxy-spoe.cfg): classify-serve --listen-spoa asked
                  over SPOP, bots denied by HAProxy, c50
  haproxy-lua     HAProxy with the Lua recipe (haproxy.cfg, classify.lua):
                  classify-serve's forward-auth listener asked over HTTP, c50
Then the whole-server rows of stacks.py (its docstring): stdlib/default.clf
through nginx (the module, auth_request to classify-serve) and Caddy
(forward_auth to classify-serve) beside ai.robots.txt's own nginx and Caddy
configurations, on the corpus requests of bench/workload.py, in a table of
their own; skipped, saying why, without the corpora or the nginx module.
Requests rotate over 20 User-Agents, 10 AI crawlers (rejected
"ai-robots-txt") and 10 browsers (accepted), checked before the runs.
"Failed" counts wrk's socket errors plus, for classify-serve, answers
that are not the expected verdict (from its /metrics).
"""

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
from serve_common import (Proc, free_port, metrics, read_recipe, request, substitute,  # noqa: E402
                          wait_port)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import stacks  # noqa: E402

BOTS = [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
    "CCBot/2.0 (https://commoncrawl.org/faq/)",
    "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/8.0.2 Safari/600.2.5 (Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)",
    "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
    "Mozilla/5.0 (compatible; Google-Extended)",
]
BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/109.0.0.0",
    "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0",
]

LUA = """-- 20 pre-built requests, bot and browser alternating; with the script
-- argument "nginx-auth", as nginx's auth_request recipe sends them (the
-- client's method and URI in X-Original-Method and X-Original-URI)
local uas = {%s}
local reqs, i = {}, 0
function init(args)
  for k, ua in ipairs(uas) do
    local h = {["User-Agent"] = ua}
    if args[1] == "nginx-auth" then h["X-Original-Method"] = "GET"; h["X-Original-URI"] = "/" end
    reqs[k] = wrk.format("GET", "/", h)
  end
end
function request() i = i %% #reqs + 1; return reqs[i] end
"""


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def with_children(pids):
    """pids and their children (nginx's workers)."""
    out = set(pids)
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid in pids:
                out.add(int(d))
    return out


def cpu_ticks(pids):
    total = 0
    for pid in with_children(pids):
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            pass
    return total


def parse_wrk(out):
    r = {"rps": 0.0, "p50_us": None, "p99_us": None, "requests": 0, "socket_errors": 0,
         "non2xx": 0}

    def us(v):
        for suf, mul in (("us", 1), ("ms", 1000), ("s", 1000000)):
            if v.endswith(suf):
                return float(v[:-len(suf)]) * mul
        return None
    for line in out.splitlines():
        w = line.split()
        if line.startswith("Requests/sec:"):
            r["rps"] = float(w[1])
        elif len(w) == 2 and w[0] == "50%":
            r["p50_us"] = us(w[1])
        elif len(w) == 2 and w[0] == "99%":
            r["p99_us"] = us(w[1])
        elif "requests in" in line:
            r["requests"] = int(w[0])
        elif line.strip().startswith("Socket errors:"):
            nums = [int(x.strip(",")) for x in w if x.strip(",").isdigit()]
            r["socket_errors"] = sum(nums)
        elif "Non-2xx or 3xx responses:" in line:
            r["non2xx"] = int(w[-1])
    return r


def verdict_counts(m):
    good = m.get('classify_requests_total{verdict="reject",reason="ai-robots-txt"}', 0) + \
        m.get('classify_requests_total{verdict="accept",reason=""}', 0)
    total = sum(v for k, v in m.items() if k.startswith("classify_requests_total"))
    errors = sum(v for k, v in m.items() if k.startswith("classify_errors_total"))
    return good, total, errors


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.tmp = tempfile.mkdtemp(prefix="classify-serve-bench-")
        self.procs = []

    def start(self, argv, name, port, env=None):
        p = Proc(argv, os.path.join(self.tmp, name + ".log"), env=env)
        self.procs.append(p)
        if not wait_port(port, proc=p.p):
            raise RuntimeError("%s did not start:\n%s" % (name, p.output()))
        return p

    def stop_all(self):
        for p in reversed(self.procs):
            p.stop()
        self.procs = []

    def setup(self):
        a = self.args
        t = self.tmp
        self.rules = os.path.join(t, "rules.bin")
        subprocess.run([os.path.join(self.build, "cli", "classifyc"), "-I", os.path.join(ROOT, "stdlib"),
                        os.path.join(ROOT, "examples", "main.clf"), "-o", self.rules], check=True)
        self.lua = os.path.join(t, "ua20.lua")
        uas = [u for pair in zip(BOTS, BROWSERS) for u in pair]
        with open(self.lua, "w") as f:
            f.write(LUA % ", ".join(lua_string(u) for u in uas))
        P = self.ports = {k: free_port() for k in
                          ["nginx", "backend", "pass", "auth", "admin", "caddy", "caddy_cls",
                           "auth_haproxy", "spoa", "haproxy", "haproxy_spoe", "haproxy_lua"]}
        os.makedirs(os.path.join(t, "nginx", "logs"))
        with open(os.path.join(t, "nginx", "nginx.conf"), "w") as f:
            f.write("worker_processes %d;\ndaemon off;\nworker_rlimit_nofile 8192;\npid %s/nginx/nginx.pid;\n"
                    "error_log %s/nginx/logs/error.log;\nevents { worker_connections 4096; }\n"
                    "http { access_log off;\n"
                    "  server { listen 127.0.0.1:%d; location / { return 200 \"ok\"; } }\n"
                    "  server { listen 127.0.0.1:%d; location / { return 200 \"backend page\"; } }\n}\n"
                    % (a.workers, t, t, P["nginx"], P["backend"]))
        self.nginx = self.start(["nginx", "-p", os.path.join(t, "nginx"), "-c",
                                 os.path.join(t, "nginx", "nginx.conf"), "-e",
                                 os.path.join(t, "nginx", "logs", "error.log")], "nginx", P["nginx"])
        self.serve = self.start([os.path.join(self.build, "serve", "classify-serve"), self.rules,
                                 "--listen", "127.0.0.1:%d" % P["pass"],
                                 "--listen-auth", "nginx=127.0.0.1:%d" % P["auth"],
                                 "--listen-auth", "haproxy=127.0.0.1:%d" % P["auth_haproxy"],
                                 "--listen-spoa", "127.0.0.1:%d" % P["spoa"],
                                 "--listen-admin", "127.0.0.1:%d" % P["admin"],
                                 "--threads", str(a.workers), "--watch-interval", "0.25"],
                                "serve", P["admin"])
        site = substitute(read_recipe(ROOT, "Caddyfile"), {
            "example.com": "http://127.0.0.1:%d" % P["caddy_cls"],
            "classify:42069": "127.0.0.1:%d" % P["pass"],
            "backend:8080": "127.0.0.1:%d" % P["backend"]})
        cd = os.path.join(t, "caddy")
        os.makedirs(cd)
        with open(os.path.join(cd, "Caddyfile"), "w") as f:
            f.write("{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n%s\n"
                    "http://127.0.0.1:%d {\n\treverse_proxy 127.0.0.1:%d\n}\n"
                    % (cd, site, P["caddy"], P["backend"]))
        env = dict(os.environ, HOME=cd, XDG_DATA_HOME=cd + "/data", XDG_CONFIG_HOME=cd + "/config",
                   GOMAXPROCS=str(a.workers))
        self.caddy = self.start(["caddy", "run", "--config", os.path.join(cd, "Caddyfile"),
                                 "--adapter", "caddyfile"], "caddy", P["caddy"], env=env)
        wait_port(P["caddy_cls"])
        self.start_haproxy()
        self.check_verdicts()

    def start_haproxy(self):
        """Three HAProxy processes, each with nbthread = --workers and no
        request log (the SPOE recipe logs every request to stdout)."""
        a, P, t = self.args, self.ports, self.tmp
        hd = os.path.join(t, "haproxy")
        os.makedirs(hd)
        glob = "global\n    nbthread %d\n" % a.workers
        plain = (glob + "defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n"
                 "    timeout server 30s\n\nfrontend web\n    bind 127.0.0.1:%d\n"
                 "    default_backend app\n\nbackend app\n    server app1 127.0.0.1:%d\n"
                 % (P["haproxy"], P["backend"]))
        spoe_conf = os.path.join(hd, "classify-spoe.conf")
        with open(spoe_conf, "w") as f:
            f.write(read_recipe(ROOT, "classify-spoe.conf"))
        spoe = glob + substitute(read_recipe(ROOT, "haproxy-spoe.cfg"), {
            "    log stdout format raw local0\n": "",
            "/etc/haproxy/classify-spoe.conf": spoe_conf,
            "bind :80": "bind 127.0.0.1:%d" % P["haproxy_spoe"],
            "backend:8080": "127.0.0.1:%d" % P["backend"],
            "classify:42071": "127.0.0.1:%d" % P["spoa"]})
        lua_file = os.path.join(hd, "classify.lua")
        with open(lua_file, "w") as f:
            f.write(read_recipe(ROOT, "classify.lua"))
        lua = substitute(read_recipe(ROOT, "haproxy.cfg"), {
            "global\n": glob,
            "/etc/haproxy/classify.lua": lua_file,
            "bind :80": "bind 127.0.0.1:%d" % P["haproxy_lua"],
            "127.0.0.1:42070": "127.0.0.1:%d" % P["auth_haproxy"],
            "backend:8080": "127.0.0.1:%d" % P["backend"]})
        self.haproxy = []
        for name, conf, port in [("haproxy", plain, P["haproxy"]),
                                 ("haproxy-spoe", spoe, P["haproxy_spoe"]),
                                 ("haproxy-lua", lua, P["haproxy_lua"])]:
            path = os.path.join(hd, name + ".cfg")
            with open(path, "w") as f:
                f.write(conf)
            self.haproxy.append(self.start(["haproxy", "-f", path, "-db"], name, port))

    def check_verdicts(self):
        P = self.ports
        for ua in BOTS:
            r = request(P["pass"], "/", ua=ua)
            if (r.status, r.header("x-classify-reason")) != (403, "ai-robots-txt"):
                raise RuntimeError("bot UA not rejected ai-robots-txt: %r -> %r" % (ua, r))
        for ua in BROWSERS:
            r = request(P["pass"], "/", ua=ua)
            if r.status != 421:
                raise RuntimeError("browser UA not accepted: %r -> %r" % (ua, r))
            r = request(P["caddy_cls"], "/", ua=ua)
            if r.status != 200 or r.body != b"backend page":
                raise RuntimeError("Caddy did not serve the backend: %r" % r)
            for k in ("haproxy_spoe", "haproxy_lua"):
                r = request(P[k], "/", ua=ua)
                if r.status != 200 or r.body != b"backend page" or \
                        r.header("x-classify-verdict") != "accept":
                    raise RuntimeError("%s did not serve the backend: %r" % (k, r))
        for ua in BOTS:
            for k in ("haproxy_spoe", "haproxy_lua"):
                r = request(P[k], "/", ua=ua)
                if (r.status, r.header("x-classify-reason")) != (403, "ai-robots-txt"):
                    raise RuntimeError("%s did not reject a bot: %r" % (k, r))

    def rows(self):
        P = self.ports
        u = lambda port: "http://127.0.0.1:%d/" % port  # noqa: E731
        nginx = [self.nginx.pid]
        serve = [self.serve.pid]
        caddy = [self.caddy.pid, self.nginx.pid]
        hp = [p.pid for p in self.haproxy]
        haproxy = [hp[0], self.nginx.pid]
        return [
            ("nginx-200", u(P["nginx"]), 50, nginx, None),
            ("serve", u(P["pass"]), 50, serve, "serve"),
            ("serve-auth", u(P["auth"]), 50, serve, "serve"),
            ("nginx-200-c1000", u(P["nginx"]), 1000, nginx, None),
            ("serve-c1000", u(P["pass"]), 1000, serve, "serve"),
            ("serve-reload", u(P["pass"]), 50, serve, "reload"),
            ("caddy", u(P["caddy"]), 50, caddy, None),
            ("caddy-classify", u(P["caddy_cls"]), 50, caddy + serve, "serve"),
            ("haproxy", u(P["haproxy"]), 50, haproxy, None),
            ("haproxy-spoe", u(P["haproxy_spoe"]), 50, [hp[1], self.nginx.pid] + serve, "serve"),
            ("haproxy-lua", u(P["haproxy_lua"]), 50, [hp[2], self.nginx.pid] + serve, "serve"),
        ]

    def reloader(self, stop, counter):
        """Every second, a reload: SIGHUP, then a replaced file, in turn."""
        tmpf = self.rules + ".new"
        n = 0
        while not stop.wait(1.0):
            if n % 2 == 0:
                self.serve.signal(signal.SIGHUP)
            else:
                shutil.copy(self.rules, tmpf)
                os.replace(tmpf, self.rules)
            n += 1
        counter.append(n)

    def run_one(self, name, url, conns, pids, kind):
        a = self.args
        cmd = ["wrk", "-t1", "-c%d" % conns, "-d%ds" % a.seconds, "--latency", "-s", self.lua, url]
        if url == "http://127.0.0.1:%d/" % self.ports["auth"]:
            cmd += ["--", "nginx-auth"]
        subprocess.run(cmd[:3] + ["-d1s"] + cmd[4:], stdout=subprocess.DEVNULL)  # warm-up
        before = metrics(self.ports["admin"]) if kind else None
        ticks0 = cpu_ticks(pids)
        stop, counter = threading.Event(), []
        th = None
        if kind == "reload":
            th = threading.Thread(target=self.reloader, args=(stop, counter))
            th.start()
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
        if th:
            stop.set()
            th.join()
        ticks = cpu_ticks(pids) - ticks0
        r = parse_wrk(out)
        r["cpu_us_per_req"] = ticks * 1e6 / os.sysconf("SC_CLK_TCK") / max(r["requests"], 1)
        r["failed"] = r["socket_errors"]
        if kind:
            after = metrics(self.ports["admin"])
            g0, t0, e0 = verdict_counts(before)
            g1, t1, e1 = verdict_counts(after)
            r["unexpected_verdicts"] = int((t1 - t0) - (g1 - g0) + (e1 - e0))
            r["failed"] += r["unexpected_verdicts"]
            key = 'classify_reloads_total{result="success"}'
            r["reloads"] = int(after.get(key, 0) - before.get(key, 0))
            r["reload_failures"] = int(after.get('classify_reloads_total{result="failure"}', 0) -
                                       before.get('classify_reloads_total{result="failure"}', 0))
            r["failed"] += r["reload_failures"]
        if kind is None:
            r["failed"] += r["non2xx"]  # every answer there must be a 200
        elif name.startswith("caddy") or name.startswith("haproxy"):
            # bots get classify-serve's 403 through Caddy (HAProxy's own
            # 403 from the verdict), browsers the
            # backend's 200: the non-2xx count is the reject count (give or
            # take the requests in flight when wrk stops)
            rejects = after.get('classify_requests_total{verdict="reject",reason="ai-robots-txt"}', 0) - \
                before.get('classify_requests_total{verdict="reject",reason="ai-robots-txt"}', 0)
            r["unexpected_statuses"] = max(0, int(abs(r["non2xx"] - rejects)) - conns)
            r["failed"] += r["unexpected_statuses"]
        print("  %-16s %9.0f req/s  p50 %7.0f us  p99 %7.0f us  failed %d%s" % (
            name, r["rps"], r["p50_us"] or 0, r["p99_us"] or 0, r["failed"],
            "  reloads %d" % r["reloads"] if kind == "reload" else ""), flush=True)
        return r


def stack_rows(b, args, only):
    """stacks.py's servers, set up and checked inside b; None (saying why)
    when they cannot run here or --only names none of their rows."""
    if only and not only & set(stacks.ROWS):
        return None
    why = stacks.missing(b.build, args.corpora)
    if why:
        print("bench/serve: skipping the whole-server rows: %s" % why, flush=True)
        return None
    st = stacks.Stacks(b, args.corpora, args.seconds)
    st.setup()
    return st


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    # whole seconds: wrk refuses a fraction ("-d2.5s" prints its usage)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1,
                    help="nginx worker_processes = classify-serve --threads = Caddy GOMAXPROCS")
    ap.add_argument("--only", default="", help="comma-separated row names (also stacks.py's)")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    args = ap.parse_args()
    for tool in ["wrk", "nginx", "caddy", "haproxy"]:
        if shutil.which(tool) is None:
            print("bench/serve: %s is not installed (./run.sh installs it)" % tool, file=sys.stderr)
            return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))

    b = Bench(args)
    results, stack_results = {}, {}
    only = set(args.only.split(",")) if args.only else set()
    st = None
    load_before = os.getloadavg()
    try:
        b.setup()
        rows = [r for r in b.rows() if not only or r[0] in only]
        st = stack_rows(b, args, only)
        for rnd in range(args.rounds):
            print("round %d/%d" % (rnd + 1, args.rounds), flush=True)
            for name, url, conns, pids, kind in rows:
                results.setdefault(name, []).append(b.run_one(name, url, conns, pids, kind))
            if st:
                st.run_round(stack_results, only)
    finally:
        b.stop_all()
        shutil.rmtree(b.tmp, ignore_errors=True)

    print("\nload average before %.2f, after %.2f (1 min); %d CPUs" % (
        load_before[0], os.getloadavg()[0], os.cpu_count()))
    if results:
        print("\n| row | connections | req/s (median) | req/s min-max | vs nginx-200 | p50 | p99 | "
              "server CPU us/req | failed |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = med([r["rps"] for r in results.get("nginx-200", [])]) or 0
    conns = {"nginx-200-c1000": 1000, "serve-c1000": 1000}
    summary = {}
    bad = 0
    for name, rs in results.items():
        rps = [r["rps"] for r in rs]
        m = {"rps": med(rps), "rps_min": min(rps), "rps_max": max(rps),
             "p50_us": med([r["p50_us"] for r in rs]), "p99_us": med([r["p99_us"] for r in rs]),
             "cpu_us_per_req": med([r["cpu_us_per_req"] for r in rs]),
             "failed": sum(r["failed"] for r in rs), "requests": sum(r["requests"] for r in rs),
             "reloads": sum(r.get("reloads", 0) for r in rs)}
        summary[name] = m
        bad += m["failed"]
        print("| %s | %d | %.0f | %.0f-%.0f | %s | %.0f us | %.0f us | %.1f | %d of %d%s |" % (
            name, conns.get(name, 50), m["rps"], m["rps_min"], m["rps_max"],
            "%.2f" % (m["rps"] / base) if base else "-", m["p50_us"] or 0, m["p99_us"] or 0,
            m["cpu_us_per_req"], m["failed"], m["requests"],
            " (%d reloads)" % m["reloads"] if m["reloads"] else ""))
    stack_summary, stack_bad = st.report(stack_results) if st else ({}, 0)
    bad += stack_bad
    out_dir = os.path.join(os.path.abspath(args.build_dir), "bench-serve")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"args": vars(args), "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                   "rows": summary, "runs": results,
                   "stacks": {"rows": stack_summary, "runs": stack_results}}, f, indent=1)
    print("\nraw results: %s" % os.path.join(out_dir, "results.json"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
