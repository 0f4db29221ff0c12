#!/usr/bin/env python3
"""Load test of ngx_http_classify_module with wrk on loopback
(docs/performance.md, "nginx"). Not a timed test: it prints figures, and
exits 1 only when a run had failed requests or unexpected verdicts.

    python3 bench/nginx/run.py BUILD_DIR [--seconds S] [--rounds N] [--only ROWS]

Rows, each run --rounds times, interleaved so that background load hits
every row alike (the tables give medians). Classifying requests:
  nginx-200          stock nginx, `return 200 "ok"` (no module loaded)
  nginx-ai-robots    stock nginx with ai.robots.txt's own nginx-block-ai-bots.conf
                     (a server-level regex `if` on $http_user_agent, pcre_jit on),
                     then `return 200 "ok"`
  module-ai-robots   nginx with the module, `classify on`, bench/rules/ai_robots.clf
                     (stdlib/ai_robots.clf's check), then `return 200 "ok"`
  module-default     the same with stdlib/default.clf
  nginx-limit-req    stock nginx, limit_req on $binary_remote_addr (a 10m zone,
                     a rate it never reaches), then `return 200 "ok"`
  module-rate        nginx with the module, classify_state_zone (16m) and
                     bench/rules/rate.clf (count() per client address, a limit it
                     never reaches), then `return 200 "ok"`: every request is one
                     count on one key (all come from 127.0.0.1), as with limit_req
  nginx-file         stock nginx serving a 2-byte file ("ok") through
                     open_file_cache: the content-phase answer the next row needs
  auth-request-serve stock nginx, auth_request to classify-serve (stdlib/default.clf;
                     the recipe of docs/classify-serve.md), then the same file:
                     auth_request runs in the access phase, after `return`, so
                     `return 200` would never ask classify-serve
Rewriting response bodies (rewrite_rows.py): bench/rewrite's 64 pages
(rw-pagegen) as static files, and its literal rule sets of 1, 10 and 100
rules (`rw-pagegen rules lit N`):
  page-static        stock nginx serving the pages (open_file_cache)
  sub_filter-N       nginx's sub_filter with the N rules, sub_filter_once off
  subs_filter-N      the subs_filter module (libnginx-mod-http-subs-filter), flag g
  classify_rewrite-N the module's classify_rewrite with a rewrite set of the N rules
each page in turn (a wrk Lua script), Accept-Encoding identity; MB/s is the
pages' bytes (the rewriters' input) per second. `--only classify` and
`--only rewrite` run one group.

The classification rows get the same requests: bench/workload.py's corpus mix (the
crawler-user-agents bots with an HTTP library's headers, the uap-core
browsers with their browser's headers, 12 paths), pre-built in a wrk Lua
script and sent in order, over 50 keep-alive connections (wrk -t1 -c50).
One nginx worker, one classify-serve thread, all on CPU 1 (taskset), and
wrk on CPU 0, so that every row's server side has the same one core (left
to the scheduler, a worker that lands on wrk's core serves half as many
requests per second for the same CPU time); --no-pin leaves placement to
the scheduler. Rejected requests get nginx's 403 page, as with the regex
configuration.

"failed" counts wrk's socket errors and, for the rows whose verdicts are
known (the module and classify-serve rows: classify-run gives them for the
same requests), any 403 count further than the number of connections from
what those verdicts predict for the requests answered; for nginx-200,
every non-2xx answer.
"""

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
from serve_common import free_port, raw_exchange, read_recipe, substitute, wait_port  # noqa: E402
import workload  # noqa: E402
sys.path.insert(0, HERE)
import rewrite_rows  # noqa: E402

# The classify-serve load test's wrk helpers (parse_wrk, cpu_ticks, med) and
# its process handling (Bench.start, Bench.stop_all).
_spec = importlib.util.spec_from_file_location("serve_bench", os.path.join(ROOT, "bench", "serve", "run.py"))
serve_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serve_bench)

AI_ROBOTS_CONF = os.path.join("ai-robots-txt", "nginx-block-ai-bots.conf")
CONNS = 50

LUA_HEAD = """-- the corpus requests of bench/workload.py, in order, round robin
local reqs = {
"""
LUA_TAIL = """}
local i = 0
function request() i = i % #reqs + 1; return reqs[i] end
"""

NGINX = """worker_processes 1;
daemon off;
worker_rlimit_nofile 8192;
pid {d}/nginx.pid;
error_log {d}/logs/error.log;
pcre_jit on;
{load}events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp;
    proxy_temp_path {d}/tmp;
{servers}}}
"""


def lua_string(b):
    out = ['"']
    for c in b:
        if c in (0x22, 0x5c):
            out.append("\\" + chr(c))
        elif 0x20 <= c < 0x7f:
            out.append(chr(c))
        else:
            out.append("\\%03d" % c)
    out.append('"')
    return "".join(out)


def corpus(corpora):
    """The raw requests (bytes), in workload order, without the few whose
    User-Agent holds a byte that cannot be sent in a header."""
    out = []
    for method, path, query, hdrs in workload.requests(workload.load_uas(corpora)):
        if any(ord(ch) < 0x20 or ch == "\x7f" for _, v in hdrs for ch in v):
            continue
        lines = ["%s %s%s HTTP/1.1" % (method, path, "?" + query if query else "")]
        lines += ["%s: %s" % h for h in hdrs]
        out.append(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape"))
    return out


def server_client_cpus(no_pin):
    """(server prefix, client prefix, what was done): the servers on CPU 1
    and the load generator on CPU 0 with taskset, when both CPUs are ours."""
    if no_pin:
        return [], [], "not pinned (--no-pin)"
    if shutil.which("taskset") is None:
        return [], [], "not pinned: taskset not found"
    if not {0, 1} <= os.sched_getaffinity(0):
        return [], [], "not pinned: CPUs 0 and 1 are not both available"
    return ["taskset", "-c", "1"], ["taskset", "-c", "0"], "servers on CPU 1, wrk on CPU 0 (taskset)"


class Bench(serve_bench.Bench):
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.tmp = tempfile.mkdtemp(prefix="classify-nginx-bench-")
        os.chmod(self.tmp, 0o755)  # nginx's workers run as nobody under root
        self.procs = []
        self.server_cpu = []
        self.rewrite = rewrite_rows.Rewrite(self)

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def start(self, argv, name, port):
        return super().start(self.server_cpu + argv, name, port)

    def compile(self, clf, name):
        out = self.path(name + ".bin")
        subprocess.run([os.path.join(self.build, "cli", "classifyc"), "-I", os.path.join(ROOT, "stdlib"),
                        os.path.join(ROOT, clf), "-o", out], check=True)
        return out

    def nginx(self, name, servers, module=None):
        d = self.path(name)
        for sub in ("logs", "tmp"):
            os.makedirs(os.path.join(d, sub))
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX.format(d=d, servers=servers,
                                 load="load_module %s;\n" % module if module else ""))
        return ["nginx", "-p", d, "-c", conf, "-e", os.path.join(d, "logs", "error.log")]

    def setup(self):
        a = self.args
        self.server_cpu, self.client_cpu, self.pinned = server_client_cpus(a.no_pin)
        self.reqs = corpus(a.corpora)
        with open(self.path("corpus.lua"), "w") as f:
            f.write(LUA_HEAD + "".join("  %s,\n" % lua_string(r) for r in self.reqs) + LUA_TAIL)
        module = os.path.join(self.build, "nginx", "ngx_http_classify_module.so")
        default = self.compile("stdlib/default.clf", "default")
        ai = self.compile("bench/rules/ai_robots.clf", "ai_robots")
        rate = self.compile("bench/rules/rate.clf", "rate")
        self.expect_default = self.verdicts(default)
        self.expect_ai = self.verdicts(ai)
        P = self.ports = {k: free_port() for k in
                          ["n200", "nai", "file", "mai", "mdef", "auth", "serve_auth", "serve_admin",
                           "nlim", "mrate"]}
        ok = 'location / { return 200 "ok"; }'
        os.makedirs(self.path("www"))
        with open(self.path("www", "ok"), "w") as f:
            f.write("ok")
        stock = (
            "    root %s;\n    open_file_cache max=16 inactive=600s;\n    open_file_cache_valid 600s;\n" % self.path("www") +
            "    server { listen 127.0.0.1:%d; %s }\n" % (P["n200"], ok) +
            "    server { listen 127.0.0.1:%d; location / { try_files /ok =404; } }\n" % P["file"] +
            "    server { listen 127.0.0.1:%d;\n        include %s;\n        %s\n    }\n"
            % (P["nai"], os.path.join(a.corpora, AI_ROBOTS_CONF), ok) +
            "    limit_req_zone $binary_remote_addr zone=bench:10m rate=100000000r/s;\n" +
            "    server { listen 127.0.0.1:%d; limit_req zone=bench burst=1000000 nodelay; %s }\n"
            % (P["nlim"], ok) +
            self.auth_request_server(P["auth"], P["serve_auth"]))
        rw = self.rewrite
        rw.prepare()
        stock += rw.stock_servers()
        self.stock = self.start(self.nginx("stock", stock), "nginx-stock", P["n200"])
        mod = ("    classify_state_zone bench 16m;\n" +
               "    server { listen 127.0.0.1:%d; classify_rules %s; classify on; %s }\n"
               % (P["mai"], ai, ok) +
               "    server { listen 127.0.0.1:%d; classify_rules %s; classify on; %s }\n"
               % (P["mrate"], rate, ok) +
               "    server { listen 127.0.0.1:%d; classify_rules %s; classify on; %s }\n"
               % (P["mdef"], default, ok) + rw.module_servers())
        self.module = self.start(self.nginx("module", mod, module), "nginx-module", P["mai"])
        self.subs = self.start(self.nginx("subs", rw.subs_servers(), rewrite_rows.SUBS_MODULE),
                               "nginx-subs", rw.ports["subs1"])
        self.serve = self.start([os.path.join(self.build, "serve", "classify-serve"), default,
                                 "--listen-auth", "nginx=127.0.0.1:%d" % P["serve_auth"],
                                 "--listen-admin", "127.0.0.1:%d" % P["serve_admin"],
                                 "--threads", "1"], "serve", P["serve_admin"])
        for p in [P["nai"], P["file"], P["mdef"], P["auth"], P["nlim"], P["mrate"]] + list(rw.ports.values()):
            wait_port(p)
        self.check()
        rw.verify()

    def auth_request_server(self, port, serve_port):
        """docs/classify-serve.md's nginx recipe (tests/serve/recipes/nginx.conf),
        its proxy_pass replaced by the file of the nginx-file row."""
        text = substitute(read_recipe(ROOT, "nginx.conf"), {
            "listen 80;": "listen 127.0.0.1:%d;" % port,
            "classify:42070": "127.0.0.1:%d" % serve_port,
            "proxy_pass http://backend:8080;": "try_files /ok =404;"})
        return "    " + text.replace("\n", "\n    ").rstrip() + "\n"

    def verdicts(self, rules):
        """classify-run's verdict for every request: a list of bools (reject)."""
        d = self.path("ref-" + os.path.basename(rules))
        os.makedirs(d)
        files = []
        for i, r in enumerate(self.reqs):
            p = os.path.join(d, "%d.http" % i)
            with open(p, "wb") as f:
                f.write(r)
            files.append(p)
        p = subprocess.run([os.path.join(self.build, "cli", "classify-run"), rules, "--json",
                            "--remote-addr", "127.0.0.1", "--request"] + files,
                           capture_output=True, check=True)
        out = [json.loads(line)["verdict"] == "reject" for line in p.stdout.decode().splitlines()]
        if len(out) != len(self.reqs):
            raise RuntimeError("classify-run gave %d verdicts for %d requests" % (len(out), len(self.reqs)))
        return out

    def check(self):
        """A sample of the requests through each row, against the verdicts."""
        P = self.ports
        for row, port, expect in [("module-default", P["mdef"], self.expect_default),
                                  ("module-ai-robots", P["mai"], self.expect_ai),
                                  ("auth-request-serve", P["auth"], self.expect_default)]:
            for i in range(0, len(self.reqs), 97):
                data = self.reqs[i].replace(b"Connection: keep-alive", b"Connection: close")
                got = raw_exchange(port, data).split(b" ", 2)[1]
                want = b"403" if expect[i] else b"200"
                if got != want:
                    raise RuntimeError("%s: request %d answered %s, classify-run says %s:\n%s"
                                       % (row, i, got, want, self.reqs[i].decode("utf-8", "replace")))

    def rows(self):
        P = self.ports
        u = lambda port: "http://127.0.0.1:%d/" % port  # noqa: E731
        stock, module, serve = [self.stock.pid], [self.module.pid], [self.serve.pid]
        corpus = self.path("corpus.lua")
        return [
            ("nginx-200", u(P["n200"]), stock, "all-200", corpus),
            ("nginx-ai-robots", u(P["nai"]), stock, None, corpus),
            ("module-ai-robots", u(P["mai"]), module, self.expect_ai, corpus),
            ("module-default", u(P["mdef"]), module, self.expect_default, corpus),
            ("nginx-limit-req", u(P["nlim"]), stock, "all-200", corpus),
            ("module-rate", u(P["mrate"]), module, "all-200", corpus),
            ("nginx-file", u(P["file"]), stock, "all-200", corpus),
            ("auth-request-serve", u(P["auth"]), stock + serve, self.expect_default, corpus),
        ] + self.rewrite.rows(stock, [self.subs.pid], module)

    def run_one(self, name, url, pids, expect, script):
        a = self.args
        cmd = ["wrk", "-t1", "-c%d" % CONNS, "-d%ds" % a.seconds, "--latency", "-s", script, url]
        if script == self.rewrite.lua:
            # subs_filter with 100 rules answers in over 2 s (wrk's default
            # timeout) at the 99th percentile: slow, not failed
            cmd[-1:-1] = ["--timeout", "30s"]
        subprocess.run(self.client_cpu + cmd[:3] + ["-d1s"] + cmd[4:], stdout=subprocess.DEVNULL)  # warm-up
        cmd = self.client_cpu + cmd
        ticks0 = serve_bench.cpu_ticks(pids)
        wrk0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
        secs = time.monotonic() - t0
        wrk1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ticks = serve_bench.cpu_ticks(pids) - ticks0
        r = serve_bench.parse_wrk(out)
        r["cpu_us_per_req"] = ticks * 1e6 / os.sysconf("SC_CLK_TCK") / max(r["requests"], 1)
        # the servers' and wrk's share of a core over the run: near 1 for
        # wrk, it is wrk that sets the req/s
        r["server_busy"] = ticks / os.sysconf("SC_CLK_TCK") / secs
        r["wrk_busy"] = (wrk1.ru_utime + wrk1.ru_stime - wrk0.ru_utime - wrk0.ru_stime) / secs
        r["failed"] = r["socket_errors"]
        if expect == "all-200":
            r["failed"] += r["non2xx"]
        elif expect is not None:
            # the first `requests` requests of the round robin, give or take
            # those in flight when wrk stopped
            n = len(expect)
            full, part = divmod(r["requests"], n)
            want = full * sum(expect) + sum(expect[:part])
            r["expected_rejects"] = want
            if abs(r["non2xx"] - want) > CONNS:
                r["failed"] += abs(r["non2xx"] - want)
        r["rejected_pct"] = 100.0 * r["non2xx"] / max(r["requests"], 1)
        if script == self.rewrite.lua:
            r["mb_s"] = r["rps"] * self.rewrite.mean_bytes / 1e6
            # what one core of the server would rewrite: a shared machine
            # gives the worker part of its core, and wrk may be the limit
            r["mb_s_core"] = self.rewrite.mean_bytes / r["cpu_us_per_req"] if r["cpu_us_per_req"] else 0
            print("  %-20s %8.0f req/s %7.1f MB/s  p50 %6.0f us  p99 %6.0f us  CPU %6.1f us/req  busy: server "
                  "%.2f, wrk %.2f  failed %d" % (
                      name, r["rps"], r["mb_s"], r["p50_us"] or 0, r["p99_us"] or 0, r["cpu_us_per_req"],
                      r["server_busy"], r["wrk_busy"], r["failed"]), flush=True)
            return r
        print("  %-20s %8.0f req/s  p50 %6.0f us  p99 %6.0f us  CPU %5.1f us/req  403s %4.1f%%  failed %d" % (
            name, r["rps"], r["p50_us"] or 0, r["p99_us"] or 0, r["cpu_us_per_req"],
            r["rejected_pct"], r["failed"]), flush=True)
        return r


def row_summary(rs, base, med):
    """A row's rounds in one: medians, the req/s spread, its CPU per
    request against the base row's in the same round, failures."""
    rps = [r["rps"] for r in rs]
    return {"rps": med(rps), "rps_min": min(rps), "rps_max": max(rps),
            "cpu_delta_us": med([x["cpu_us_per_req"] - y["cpu_us_per_req"] for x, y in zip(rs, base)]),
            "p50_us": med([r["p50_us"] for r in rs]), "p99_us": med([r["p99_us"] for r in rs]),
            "cpu_us_per_req": med([r["cpu_us_per_req"] for r in rs]),
            "failed": sum(r["failed"] for r in rs), "requests": sum(r["requests"] for r in rs)}


def compare_rows(summary, results, row, peer, med):
    """The module's row against nginx's own way to the same end, round by
    round (background load moves both alike), into summary and printed."""
    pairs = list(zip(results.get(row, []), results.get(peer, [])))
    if not pairs:
        return
    summary["%s_vs_%s" % (row, peer)] = cmp = {
        "rps_ratio": med([x["rps"] / y["rps"] for x, y in pairs if y["rps"]]),
        "cpu_delta_us": med([x["cpu_us_per_req"] - y["cpu_us_per_req"] for x, y in pairs]),
        "rounds_cheaper": sum(1 for x, y in pairs if x["cpu_us_per_req"] < y["cpu_us_per_req"]),
        "rounds": len(pairs)}
    print("\n%s against %s, per round: req/s x%.3f, CPU %+.2f us/req (cheaper in %d of %d rounds)" % (
        row, peer, cmp["rps_ratio"], cmp["cpu_delta_us"], cmp["rounds_cheaper"], cmp["rounds"]))


def rewrite_table(results, same, med):
    """The rewrite rows' table, and classify_rewrite against subs_filter
    and sub_filter, round by round."""
    if not results:
        return {}, 0
    print("\n| row | req/s (median) | req/s min-max | MB/s | p50 | p99 | server CPU us/req | MB/s per core | "
          "CPU vs page-static, per round | busy: server, wrk | pages as classify-run | failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = results.get("page-static", [])
    summary, bad = {}, 0
    for name, rs in results.items():
        m = row_summary(rs, base, med)
        m.update(mb_s=med([r["mb_s"] for r in rs]), mb_s_core=med([r["mb_s_core"] for r in rs]),
                 server_busy=med([r["server_busy"] for r in rs]), wrk_busy=med([r["wrk_busy"] for r in rs]),
                 same_pages=same.get(name))
        summary[name] = m
        bad += m["failed"]
        print("| %s | %.0f | %.0f-%.0f | %.1f | %.0f us | %.0f us | %.1f | %.0f | %s | %.2f, %.2f | %s | %d of %d |" % (
            name, m["rps"], m["rps_min"], m["rps_max"], m["mb_s"], m["p50_us"] or 0, m["p99_us"] or 0,
            m["cpu_us_per_req"], m["mb_s_core"],
            "%+.1f us" % m["cpu_delta_us"] if m["cpu_delta_us"] is not None else "-",
            m["server_busy"], m["wrk_busy"],
            "%d of %d" % (same[name], rewrite_rows.PAGES) if name in same else "-", m["failed"],
            m["requests"]))
    print()
    for n in rewrite_rows.SETS:
        cr = results.get("classify_rewrite-%d" % n, [])
        for peer in ("subs_filter-%d" % n, "sub_filter-%d" % n):
            pr = results.get(peer, [])
            pairs = [(x, y) for x, y in zip(cr, pr) if y["rps"] and x["cpu_us_per_req"]]
            if not pairs:
                continue
            summary["classify_rewrite-%d_vs_%s" % (n, peer)] = cmp = {
                "rps_ratio": med([x["rps"] / y["rps"] for x, y in pairs]),
                "cpu_ratio": med([y["cpu_us_per_req"] / x["cpu_us_per_req"] for x, y in pairs]),
                "rounds": len(pairs)}
            print("classify_rewrite-%d against %s, per round: req/s x%.2f, per core (server CPU per request) "
                  "x%.2f (%d rounds)" % (n, peer, cmp["rps_ratio"], cmp["cpu_ratio"], cmp["rounds"]))
    return summary, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    # whole seconds: wrk refuses a fraction ("-d2.5s" prints its usage)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated row names, or classify or rewrite")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the servers and wrk to CPUs")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    args = ap.parse_args()
    for tool in ["wrk", "nginx"]:
        if shutil.which(tool) is None:
            print("bench/nginx: %s is not installed (./run.sh bench installs it)" % tool, file=sys.stderr)
            return 2
    if not os.path.exists(os.path.join(args.build_dir, "nginx", "ngx_http_classify_module.so")):
        print("bench/nginx: %s has no nginx module (install nginx-dev and reconfigure: docs/nginx.md)"
              % args.build_dir, file=sys.stderr)
        return 2
    if not os.path.exists(rewrite_rows.SUBS_MODULE):
        print("bench/nginx: %s is missing (apt-get install libnginx-mod-http-subs-filter; ./run.sh bench "
              "installs it)" % rewrite_rows.SUBS_MODULE, file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(args.corpora, AI_ROBOTS_CONF)):
        print("bench/nginx: corpora not found at %s (--corpora DIR or CORPORA)" % args.corpora,
              file=sys.stderr)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))

    b = Bench(args)
    results = {}
    load_before = os.getloadavg()
    try:
        b.setup()
        print("%d corpus requests; classify-run rejects %d (default) and %d (ai_robots); %s" % (
            len(b.reqs), sum(b.expect_default), sum(b.expect_ai), b.pinned), flush=True)
        same = b.rewrite.same
        print("%d pages of %.0f bytes on average; pages that come out as classify-run --rewrite gives them: %s"
              % (len(b.rewrite.pages), b.rewrite.mean_bytes,
                 ", ".join("%s %d" % (k, v) for k, v in same.items())), flush=True)
        only = set(args.only.split(",")) if args.only else set()
        rows = [r for r in b.rows() if not only or r[0] in only or
                ("rewrite" if r[4] == b.rewrite.lua else "classify") in only]
        for rnd in range(args.rounds):
            print("round %d/%d" % (rnd + 1, args.rounds), flush=True)
            for name, url, pids, expect, script in rows:
                results.setdefault(name, []).append(b.run_one(name, url, pids, expect, script))
    finally:
        b.stop_all()
        shutil.rmtree(b.tmp, ignore_errors=True)
    load_after = os.getloadavg()

    med = serve_bench.med
    print("\nload average before %.2f, after %.2f (1 min); %d CPUs" % (
        load_before[0], load_after[0], os.cpu_count()))
    rewrite = {k: v for k, v in results.items() if "mb_s" in v[0]}
    results = {k: v for k, v in results.items() if "mb_s" not in v[0]}
    # Background load moves every row of a round alike: the ratios to
    # nginx-200 are taken within each round, then their median.
    if results:
        print("\n| row | req/s (median) | req/s min-max | vs nginx-200, per round | p50 | p99 | "
              "server CPU us/req | CPU vs nginx-200, per round | 403s | failed |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = results.get("nginx-200", [])
    summary, bad = {}, 0
    for name, rs in results.items():
        m = row_summary(rs, base, med)
        m.update(rps_ratio=med([x["rps"] / y["rps"] for x, y in zip(rs, base) if y["rps"]]),
                 rejected_pct=med([r["rejected_pct"] for r in rs]))
        summary[name] = m
        bad += m["failed"]
        print("| %s | %.0f | %.0f-%.0f | %s | %.0f us | %.0f us | %.1f | %s | %.1f%% | %d of %d |" % (
            name, m["rps"], m["rps_min"], m["rps_max"],
            "%.3f" % m["rps_ratio"] if m["rps_ratio"] is not None else "-",
            m["p50_us"] or 0, m["p99_us"] or 0, m["cpu_us_per_req"],
            "%+.2f us" % m["cpu_delta_us"] if m["cpu_delta_us"] is not None else "-",
            m["rejected_pct"], m["failed"], m["requests"]))
    for row, peer in (("module-ai-robots", "nginx-ai-robots"), ("module-rate", "nginx-limit-req")):
        compare_rows(summary, results, row, peer, med)
    summary_rw, bad_rw = rewrite_table(rewrite, b.rewrite.same, med)
    summary.update(summary_rw)
    bad += bad_rw
    results.update(rewrite)
    out_dir = os.path.join(os.path.abspath(args.build_dir), "bench-nginx")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"args": vars(args), "pinned": b.pinned, "loadavg_before": load_before,
                   "loadavg_after": load_after,
                   "rows": summary, "runs": results}, f, indent=1)
    print("\nraw results: %s" % os.path.join(out_dir, "results.json"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
