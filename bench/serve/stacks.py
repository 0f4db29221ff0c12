"""The whole-server rows of the load test (bench/serve/run.py): the
`default` policy through nginx and through Caddy, each beside the regex
configuration the ai.robots.txt project publishes for that server
(docs/performance.md, "Whole servers").

  nginx-file          stock nginx serving a 2-byte file (open_file_cache):
                      what every nginx row below serves when it accepts
  nginx-ai-robots     the same, with ai.robots.txt's nginx-block-ai-bots.conf
                      included (read in place from the corpora): a regex `if`
                      on $http_user_agent, pcre_jit on
  nginx-module        the same, with ngx_http_classify_module: `classify on`,
                      stdlib/default.clf
  nginx-auth-serve    the same, with docs/classify-serve.md's auth_request
                      recipe to classify-serve (stdlib/default.clf)
  caddy-ok            Caddy, `respond "ok" 200`: what every Caddy row serves
  caddy-ai-robots     the same, after ai.robots.txt's Caddyfile (its @aibots
                      header_regexp matcher, imported in place) and
                      `respond @aibots 403`
  caddy-forward-auth  the same, after the forward_auth recipe
                      (tests/serve/recipes/Caddyfile.forward_auth) to
                      classify-serve (stdlib/default.clf)

The requests are bench/workload.py's 3,717 corpus requests (crawler bots
with an HTTP library's headers, browsers with their browser's headers, 12
paths), sent in order, round robin, by wrk -t1 -c50 from a Lua script.
Before any timing, every request goes through every row once and must get
the status its row predicts: for the libclassify rows, classify-run's
verdict on the same request (behind Caddy, with the X-Forwarded-Proto:
http that forward_auth adds, which the policy reads); for the ai.robots.txt rows, the project's
regex applied here (Python's bytes regex: ASCII \\b, as PCRE's and RE2's),
with nginx's /robots.txt exemption. During the runs, a 403 count further
than the number of connections from what the verdicts predict counts as
failed. Servers on CPU 1, wrk on CPU 0 (taskset), as bench/nginx does;
one nginx worker, one classify-serve thread (--rdns off: like the module
and classify-run, it asks no DNS), GOMAXPROCS=1.

The ai.robots.txt rows check less than the `default` policy (the AI
agents' names only, where default also checks forged crawlers, headless
browsers, HTTP libraries, probes and browser headers): they are the
configuration an operator would otherwise deploy, not the same checks.
"""

import importlib.util
import os
import re
import resource
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AI_NGINX = os.path.join("ai-robots-txt", "nginx-block-ai-bots.conf")
AI_CADDY = os.path.join("ai-robots-txt", "Caddyfile")
CONNS = 50
# (row, group baseline) in the order they run
ROWS = ["nginx-file", "nginx-ai-robots", "nginx-module", "nginx-auth-serve",
        "caddy-ok", "caddy-ai-robots", "caddy-forward-auth"]
BASE = {r: ("nginx-file" if r.startswith("nginx") else "caddy-ok") for r in ROWS}
# each libclassify row against the ai.robots.txt row of its server
PAIRS = [("nginx-module", "nginx-ai-robots"), ("nginx-auth-serve", "nginx-ai-robots"),
         ("caddy-forward-auth", "caddy-ai-robots")]


def nginx_bench():
    """bench/nginx/run.py, whose corpus, pinning and nginx helpers these
    rows share (loaded on use: it loads bench/serve/run.py itself)."""
    spec = importlib.util.spec_from_file_location("nginx_bench", os.path.join(ROOT, "bench", "nginx", "run.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def missing(build, corpora):
    """Why the rows cannot run here, or None."""
    for p in (AI_NGINX, AI_CADDY):
        if not os.path.isfile(os.path.join(corpora, p)):
            return "%s not found in the corpora (%s: --corpora DIR or CORPORA)" % (p, corpora)
    if not os.path.exists(os.path.join(build, "nginx", "ngx_http_classify_module.so")):
        return "%s has no nginx module (install nginx-dev and reconfigure: docs/nginx.md)" % build
    return None


def ai_robots_regex(corpora):
    """The regex of ai.robots.txt's nginx configuration, as nginx reads it
    (a single-quoted string: \\\\ is one backslash), as a bytes regex."""
    with open(os.path.join(corpora, AI_NGINX), encoding="utf-8") as f:
        m = re.search(r"\$http_user_agent ~ '((?:[^'\\]|\\.)*)'", f.read())
    if not m:
        raise RuntimeError("no `if ($http_user_agent ~ '...')` in %s" % AI_NGINX)
    return re.compile(re.sub(r"\\(.)", r"\1", m.group(1)).encode())


def user_agent(req):
    for line in req.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"user-agent":
            return value.strip()
    return b""


class Stacks:
    """Sets up the servers of these rows inside a bench/serve/run.py Bench
    (its start() and stop_all() own the processes), checks their
    verdicts, runs the rows and prints their table."""

    def __init__(self, bench, corpora, seconds):
        self.b = bench
        self.build = bench.build  # read by bench/nginx's Bench.verdicts
        self.corpora = corpora
        self.seconds = seconds
        self.nb = nginx_bench()
        self.sb = self.nb.serve_bench  # parse_wrk, cpu_ticks, med

    def path(self, *p):
        return os.path.join(self.b.tmp, "stacks", *p)

    def start(self, argv, name, port, env=None):
        return self.b.start(self.server_cpu + argv, name, port, env=env)

    def nginx(self, name, servers, module=None):
        d = self.path(name)
        for sub in ("logs", "tmp"):
            os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(self.nb.NGINX.format(d=d, servers=servers,
                                         load="load_module %s;\n" % module if module else ""))
        return ["nginx", "-p", d, "-c", os.path.join(d, "nginx.conf"), "-e", os.path.join(d, "logs", "error.log")]

    def setup(self):
        b, nb = self.b, self.nb
        os.makedirs(self.path())
        os.chmod(b.tmp, 0o755)  # nginx's workers run as nobody under root
        self.server_cpu, self.client_cpu, self.pinned = nb.server_client_cpus(False)
        self.reqs = nb.corpus(self.corpora)
        self.lua = self.path("corpus.lua")
        with open(self.lua, "w") as f:
            f.write(nb.LUA_HEAD + "".join("  %s,\n" % nb.lua_string(r) for r in self.reqs) + nb.LUA_TAIL)
        default = self.path("default.bin")
        subprocess.run([os.path.join(b.build, "cli", "classifyc"), "-I", os.path.join(ROOT, "stdlib"),
                        os.path.join(ROOT, "stdlib", "default.clf"), "-o", default], check=True)
        # what each row must answer: True for a 403
        rx = ai_robots_regex(self.corpora)
        regex = [rx.search(user_agent(r)) is not None for r in self.reqs]
        robots = [r.startswith(b"GET /robots.txt ") for r in self.reqs]
        classify = nb.Bench.verdicts(self, default)
        # Caddy's forward_auth adds X-Forwarded-Proto, "http" here, which
        # the default policy reads: over plain HTTP browsers send no Fetch
        # Metadata (stdlib/browsers.clf, plain_http), so the requests that
        # lack it are not contradictions there
        behind_caddy = self.path("default-behind-caddy.bin")
        os.symlink(default, behind_caddy)  # another name: another classify-run directory
        plain = self.reqs
        self.reqs = [r[:-2] + b"X-Forwarded-Proto: http\r\n\r\n" for r in plain]
        classify_caddy = nb.Bench.verdicts(self, behind_caddy)
        self.reqs = plain
        self.expect = {
            "nginx-file": [False] * len(self.reqs), "caddy-ok": [False] * len(self.reqs),
            "nginx-ai-robots": [x and not y for x, y in zip(regex, robots)],
            "caddy-ai-robots": regex,
            "nginx-module": classify, "nginx-auth-serve": classify, "caddy-forward-auth": classify_caddy}
        P = self.ports = {k: nb.free_port() for k in ROWS + ["serve-nginx", "serve-caddy", "serve-admin"]}
        self.serve = self.start([os.path.join(b.build, "serve", "classify-serve"), default,
                                 "--listen-auth", "nginx=127.0.0.1:%d" % P["serve-nginx"],
                                 "--listen-auth", "caddy=127.0.0.1:%d" % P["serve-caddy"],
                                 "--listen-admin", "127.0.0.1:%d" % P["serve-admin"],
                                 # as the module and classify-run: no DNS, so
                                 # that 127.0.0.1's PTR cannot change a verdict
                                 "--rdns", "off", "--threads", "1"], "stacks-serve", P["serve-admin"])
        www = self.path("www")
        os.makedirs(www)
        with open(os.path.join(www, "ok"), "w") as f:
            f.write("ok")
        os.chmod(self.path(), 0o755)
        file = "location / { try_files /ok =404; }"
        common = ("    root %s;\n    open_file_cache max=16 inactive=600s;\n    open_file_cache_valid 600s;\n"
                  % www)
        stock = (common +
                 "    server { listen 127.0.0.1:%d; %s }\n" % (P["nginx-file"], file) +
                 "    server { listen 127.0.0.1:%d;\n        include %s;\n        %s\n    }\n"
                 % (P["nginx-ai-robots"], os.path.join(self.corpora, AI_NGINX), file) +
                 nb.Bench.auth_request_server(self, P["nginx-auth-serve"], P["serve-nginx"]))
        self.stock = self.start(self.nginx("nginx-stock", stock), "stacks-nginx-stock", P["nginx-file"])
        module = os.path.join(b.build, "nginx", "ngx_http_classify_module.so")
        mod = common + "    server { listen 127.0.0.1:%d; classify_rules %s; classify on; %s }\n" % (
            P["nginx-module"], default, file)
        self.module = self.start(self.nginx("nginx-module", mod, module), "stacks-nginx-module", P["nginx-module"])
        self.caddy = self.start_caddy()
        for r in ROWS:
            nb.wait_port(P[r])
        self.check()

    def start_caddy(self):
        P, d = self.ports, self.path("caddy")
        os.makedirs(d)
        fwd = self.nb.substitute(self.nb.read_recipe(ROOT, "Caddyfile.forward_auth"), {
            # no host: the corpus requests' Host is www.example.org and others
            "example.com": "http://:%d" % P["caddy-forward-auth"],
            "classify:42070": "127.0.0.1:%d" % P["serve-caddy"],
            "reverse_proxy backend:8080": 'respond "ok" 200'})
        with open(os.path.join(d, "Caddyfile"), "w") as f:
            f.write("{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n" % d +
                    'http://:%d {\n\trespond "ok" 200\n}\n' % P["caddy-ok"] +
                    # the project's file holds the @aibots matcher alone
                    'http://:%d {\n\timport %s\n\trespond @aibots 403\n\trespond "ok" 200\n}\n'
                    % (P["caddy-ai-robots"], os.path.join(self.corpora, AI_CADDY)) + fwd)
        env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config",
                   GOMAXPROCS="1")
        return self.start(["caddy", "run", "--config", os.path.join(d, "Caddyfile"), "--adapter", "caddyfile"],
                          "stacks-caddy", P["caddy-ok"], env=env)

    def check(self):
        """Every request through every row, one connection each: the
        status must be the row's prediction (403, or 200 and the body)."""
        for row in ROWS:
            want = self.expect[row]
            for i, req in enumerate(self.reqs):
                data = req.replace(b"Connection: keep-alive", b"Connection: close")
                out = self.nb.raw_exchange(self.ports[row], data)
                status = out.split(b" ", 2)[1] if out.count(b" ") >= 2 else out
                body = out.partition(b"\r\n\r\n")[2]
                if status != (b"403" if want[i] else b"200") or (not want[i] and body != b"ok"):
                    raise RuntimeError("%s: request %d answered %r, expected %s:\n%s" % (
                        row, i, out[:200], 403 if want[i] else 200, req.decode("utf-8", "replace")))
            print("  %-20s %d requests, %d rejected, as predicted" % (row, len(want), sum(want)), flush=True)

    def pids(self, row):
        p = {"nginx": [self.stock.pid], "caddy": [self.caddy.pid]}[row.split("-")[0]]
        if row == "nginx-module":
            p = [self.module.pid]
        if row in ("nginx-auth-serve", "caddy-forward-auth"):
            p = p + [self.serve.pid]
        return p

    def run_one(self, row):
        url = "http://127.0.0.1:%d/" % self.ports[row]
        cmd = ["wrk", "-t1", "-c%d" % CONNS, "-d%ds" % self.seconds, "--latency", "-s", self.lua, url]
        subprocess.run(self.client_cpu + cmd[:3] + ["-d1s"] + cmd[4:], stdout=subprocess.DEVNULL)  # warm-up
        pids = self.pids(row)
        ticks0 = self.sb.cpu_ticks(pids)
        wrk0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        out = subprocess.run(self.client_cpu + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
        secs = time.monotonic() - t0
        wrk1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ticks = self.sb.cpu_ticks(pids) - ticks0
        r = self.sb.parse_wrk(out)
        hz = os.sysconf("SC_CLK_TCK")
        r["cpu_us_per_req"] = ticks * 1e6 / hz / max(r["requests"], 1)
        r["server_busy"] = ticks / hz / secs
        r["wrk_busy"] = (wrk1.ru_utime + wrk1.ru_stime - wrk0.ru_utime - wrk0.ru_stime) / secs
        # the first `requests` requests of the round robin, give or take
        # those in flight when wrk stopped
        want = self.expect[row]
        full, part = divmod(r["requests"], len(want))
        r["expected_rejects"] = full * sum(want) + sum(want[:part])
        r["failed"] = r["socket_errors"]
        if abs(r["non2xx"] - r["expected_rejects"]) > CONNS:
            r["failed"] += abs(r["non2xx"] - r["expected_rejects"])
        r["rejected_pct"] = 100.0 * r["non2xx"] / max(r["requests"], 1)
        print("  %-20s %8.0f req/s  p50 %6.0f us  p99 %6.0f us  CPU %5.1f us/req  403s %4.1f%%  failed %d" % (
            row, r["rps"], r["p50_us"] or 0, r["p99_us"] or 0, r["cpu_us_per_req"], r["rejected_pct"],
            r["failed"]), flush=True)
        return r

    def run_round(self, results, only):
        for row in ROWS:
            if not only or row in only:
                results.setdefault(row, []).append(self.run_one(row))

    def report(self, results):
        """Prints the table and the pairs; returns (summary, failed)."""
        if not results:
            return {}, 0
        med = self.sb.med
        print("\nWhole servers, the default policy (%d corpus requests; %s):" % (len(self.reqs), self.pinned))
        print("\n| row | decides | req/s (median) | req/s min-max | vs baseline, per round | p50 | p99 | "
              "server CPU us/req | CPU vs baseline, per round | busy: server, wrk | 403s | failed |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        decides = {"nginx-file": "-", "caddy-ok": "-", "nginx-ai-robots": "ai.robots.txt regex",
                   "caddy-ai-robots": "ai.robots.txt regex", "nginx-module": "default (module)",
                   "nginx-auth-serve": "default (classify-serve)",
                   "caddy-forward-auth": "default (classify-serve)"}
        summary, bad = {}, 0
        for row in ROWS:
            rs = results.get(row)
            if not rs:
                continue
            base = results.get(BASE[row], [])
            rps = [r["rps"] for r in rs]
            m = summary[row] = {
                "rps": med(rps), "rps_min": min(rps), "rps_max": max(rps),
                "rps_ratio": med([x["rps"] / y["rps"] for x, y in zip(rs, base) if y["rps"]]),
                "cpu_delta_us": med([x["cpu_us_per_req"] - y["cpu_us_per_req"] for x, y in zip(rs, base)]),
                "p50_us": med([r["p50_us"] for r in rs]), "p99_us": med([r["p99_us"] for r in rs]),
                "cpu_us_per_req": med([r["cpu_us_per_req"] for r in rs]),
                "server_busy": med([r["server_busy"] for r in rs]), "wrk_busy": med([r["wrk_busy"] for r in rs]),
                "rejected_pct": med([r["rejected_pct"] for r in rs]),
                "failed": sum(r["failed"] for r in rs), "requests": sum(r["requests"] for r in rs)}
            bad += m["failed"]
            print("| %s | %s | %.0f | %.0f-%.0f | %s | %.0f us | %.0f us | %.1f | %s | %.2f, %.2f | %.1f%% | "
                  "%d of %d |" % (
                      row, decides[row], m["rps"], m["rps_min"], m["rps_max"],
                      "%.3f" % m["rps_ratio"] if m["rps_ratio"] is not None else "-",
                      m["p50_us"] or 0, m["p99_us"] or 0, m["cpu_us_per_req"],
                      "%+.2f us" % m["cpu_delta_us"] if m["cpu_delta_us"] is not None else "-",
                      m["server_busy"], m["wrk_busy"], m["rejected_pct"], m["failed"], m["requests"]))
        print()
        for a, b in PAIRS:
            pairs = list(zip(results.get(a, []), results.get(b, [])))
            if not pairs:
                continue
            summary["%s_vs_%s" % (a, b)] = cmp = {
                "rps_ratio": med([x["rps"] / y["rps"] for x, y in pairs if y["rps"]]),
                "p99_ratio": med([x["p99_us"] / y["p99_us"] for x, y in pairs if y["p99_us"]]),
                "cpu_delta_us": med([x["cpu_us_per_req"] - y["cpu_us_per_req"] for x, y in pairs]),
                "rounds": len(pairs)}
            print("%s against %s, per round: req/s x%.3f, p99 x%.2f, CPU %+.2f us/req (%d rounds)" % (
                a, b, cmp["rps_ratio"], cmp["p99_ratio"], cmp["cpu_delta_us"], cmp["rounds"]))
        return summary, bad
