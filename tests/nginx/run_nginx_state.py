#!/usr/bin/env python3
"""The rules' state in nginx: classify_state_zone (TAP).

usage: run_nginx_state.py CLASSIFYC MODULE.so SANITIZE CC
       run_nginx_state.py --skip REASON

Starts Debian's nginx (as run_nginx.py does: a temporary prefix, loopback
ports, the sanitizer's runtime preloaded in a sanitizer build) with
worker_processes 2, `classify_state_zone` and rules that count requests
per client address (count(), a limit of LIMIT), and checks:
  - LIMIT requests from one address, each on its own connection, spread
    over both workers (`listen ... reuseport`; each response names the
    worker's pid), are accepted, and the next one is rejected: the count
    is shared by the workers;
  - another address has its own count;
  - `nginx -s reload` (new workers) keeps the counts: an address that made
    HALF requests before the reload is rejected at exactly its LIMIT+1th;
  - without the directive the same rules never reject (the "absent"
    count of docs/state.md);
  - a zone too small, a bad size, a duplicate and the directive in a
    server block fail `nginx -t` with a clear message.
"""

import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import run_nginx  # noqa: E402
from run_nginx import Nginx, check_nginx_t_errors, compile_rules, find_nginx  # noqa: E402
from serve_common import Tap, clear_of_window_end, free_port, request, wait_port  # noqa: E402

LIMIT = 20
HALF = 10
# A day's window: a run of seconds crosses a window boundary (where the
# two-window estimate may round one request down) once in ~10,000 runs.
RULES = """filter main(req: Request) {
    if count("nginx_test", req.client_ip, 86400) > %d { reject "too-many" }
    accept "ok"
}
""" % LIMIT

CONF = """load_module {module};
worker_processes 2;
daemon off;
pid {d}/nginx.pid;
error_log {d}/logs/error.log info;
events {{ worker_connections 128; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    {zone}
    classify_rules {rules};
    server {{
        listen 127.0.0.1:{port} reuseport;
        classify on;
        classify_reject_status 429;
        location / {{ return 200 "$pid $classify_reason\\n"; }}
    }}
}}
"""


def burst(port, source, n):
    """n requests from `source`, each on its own connection: [(status,
    pid of the worker that answered, or None)]."""
    out = []
    for _ in range(n):
        r = request(port, "/", source=source)
        body = r.body.decode("utf-8", "replace").split()
        out.append((r.status, int(body[0]) if r.status == 200 and body else None))
    return out


def check_shared(t, port):
    got = burst(port, "127.0.0.2", LIMIT + 1)
    statuses = [s for s, _ in got]
    pids = {p for s, p in got if s == 200}
    t.eq(statuses[:LIMIT], [200] * LIMIT, "%d requests from 127.0.0.2 on %d connections: all accepted"
         % (LIMIT, LIMIT))
    t.ok(len(pids) == 2, "... served by both workers", pids)
    t.eq(statuses[LIMIT], 429, "... and request %d is rejected: the count is shared by the workers" % (LIMIT + 1))
    t.eq([s for s, _ in burst(port, "127.0.0.3", 2)], [200, 200], "another address has its own count")


def check_reload(t, ngx, port):
    first = [s for s, _ in burst(port, "127.0.0.4", HALF)]
    t.eq(first, [200] * HALF, "%d requests from 127.0.0.4 before a reload: accepted" % HALF)
    old = ngx.workers()
    rc, out = ngx.reload()
    t.ok(rc == 0, "nginx -s reload", out)
    end = time.time() + 20
    while time.time() < end and (set(ngx.workers()) & set(old) or len(ngx.workers()) < 2):
        time.sleep(0.1)
    t.ok(not set(ngx.workers()) & set(old), "the old workers exit", (old, ngx.workers()))
    got = burst(port, "127.0.0.4", LIMIT - HALF + 1)
    statuses = [s for s, _ in got]
    pids = {p for s, p in got if p is not None}
    t.ok(pids and not pids & set(old), "the new workers answer", (pids, old))
    t.eq(statuses, [200] * (LIMIT - HALF) + [429],
         "after the reload the count goes on: %d more accepted, request %d rejected"
         % (LIMIT - HALF, LIMIT + 1))
    t.eq(burst(port, "127.0.0.2", 1)[0][0], 429, "... and 127.0.0.2 is still over its limit")


def check_absent(t, nginx, module, d, rules):
    port = free_port()
    conf = os.path.join(d, "nozone.conf")
    sub = os.path.join(d, "nozone")
    for s in ("logs", "tmp"):
        os.makedirs(os.path.join(sub, s), exist_ok=True)
    with open(conf, "w") as f:
        f.write(CONF.format(module=module, d=sub, zone="", rules=rules, port=port))
    ngx = Nginx(nginx, sub, conf)
    try:
        if not t.ok(ngx.start(port), "nginx starts without classify_state_zone", ngx.error_log()):
            return
        statuses = [s for s, _ in burst(port, "127.0.0.5", LIMIT + 5)]
        t.eq(statuses, [200] * (LIMIT + 5), "without the zone the rules' count is 0: %d requests accepted"
             % (LIMIT + 5))
    finally:
        ngx.stop()


def check_errors(t, nginx, module, d, rules):
    base = CONF.format(module=module, d=d, zone="%s", rules=rules, port=free_port())
    base = base.replace("%", "%%").replace("%%s", "%s", 1)
    check_nginx_t_errors(t, nginx, d, base, [
        ("classify_state_zone tiny 32k;",
         r'classify_state_zone "tiny": size 32k is too small: at least \d+k', "a zone too small"),
        ("classify_state_zone big lots;", r'classify_state_zone "big": invalid size "lots"', "a bad size"),
        ("classify_state_zone a 1m; classify_state_zone b 1m;",
         r'"classify_state_zone" directive is duplicate', "two zones"),
    ], "state-bad")
    srv = CONF.format(module=module, d=d, zone="", rules=rules, port=free_port()).replace("%", "%%")
    srv = srv.replace("classify on;", "classify on; %s", 1)
    check_nginx_t_errors(t, nginx, d, srv, [
        ("classify_state_zone s 1m;", r'"classify_state_zone" directive is not allowed here',
         "classify_state_zone in a server block")], "state-srv")


def main(argv):
    t = Tap()
    if len(argv) == 3 and argv[1] == "--skip":
        print("1..0 # SKIP " + argv[2])
        return 0
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    nginx, why = find_nginx(argv[3], argv[4])
    if nginx is None:
        print("1..0 # SKIP " + why)
        return 0
    classifyc, module = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    # The rules count over a day's window: the test, seconds long, does
    # not start in its last minute.
    clear_of_window_end(86400, 60)
    d = tempfile.mkdtemp(prefix="classify-nginx-state-")
    ngx = None
    try:
        os.chmod(d, 0o755)  # nginx's workers run as nobody when the tests run as root
        for sub in ("logs", "tmp"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        rules = compile_rules(classifyc, RULES, d, "rules")
        check_errors(t, nginx, module, d, rules)
        port = free_port()
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(module=module, d=d, zone="classify_state_zone clfstate 1m;", rules=rules,
                                port=port))
        ngx = Nginx(nginx, d, conf)
        rc, out = ngx.test()
        if not t.ok(rc == 0, "nginx -t: classify_state_zone clfstate 1m", out):
            return 1
        if not t.ok(ngx.start(port) and wait_port(port), "nginx starts, 2 workers", ngx.error_log()):
            return 1
        check_shared(t, port)
        check_reload(t, ngx, port)
        ngx.stop()
        ngx = None
        check_absent(t, nginx, module, d, rules)
        log = open(os.path.join(d, "logs", "error.log"), errors="replace").read()
        t.ok("[alert]" not in log and "[crit]" not in log and "[emerg]" not in log,
             "no alert, crit or emerg in the error log", log[-3000:])
    finally:
        if ngx is not None:
            ngx.stop()
        rc = run_nginx.finish(t, d)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
