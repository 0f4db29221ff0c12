"""nginx_peer.py: the rewrite benchmark's nginx rows (bench/rewrite/README.md,
"nginx"): nginx's sub_filter (core module) and the subs_filter module
(Debian's libnginx-mod-http-subs-filter, loaded with load_module) serving
the benchmark's pages on loopback, beside the same nginx serving them
without a filter (the transport floor), measured with wrk; and
subs_filter's worker memory on one minified body of growing size.

nginx is Debian's binary with its own prefix, configuration and pid file
in a temporary directory, one worker, started and stopped by pid (the
process helpers of bench/nginx/run.py and tests/serve/serve_common.py),
under `prlimit --as` (subs_filter buffers a line whole, and loops forever
on a regex that matches empty: /work/shared/notes/stream-rewrite.md 4.2).
"""

import http.client
import http.server
import importlib.util
import os
import socket
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_spec = importlib.util.spec_from_file_location("nginx_bench", os.path.join(ROOT, "bench", "nginx", "run.py"))
nginx_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nginx_bench)
serve_bench = nginx_bench.serve_bench
free_port, wait_port = nginx_bench.free_port, nginx_bench.wait_port

SUBS_MODULE = "/usr/lib/nginx/modules/ngx_http_subs_filter_module.so"
CONNS = 8            # wrk connections: the worker is the bottleneck with a filter
PROXY_CHUNK = "4k"   # proxy_buffer_size of the proxied rows: the chunks the filter sees
TYPES = "    types { text/html html; }\n    default_type text/html;\n"


class Row:
    """One nginx configuration: `filters` is a list of directives
    (None: no filter), `proxied` sends the pages through a second nginx
    with proxy_buffering off (chunks of PROXY_CHUNK)."""

    def __init__(self, peer, set_name, filters, proxied=False, sendfile=False):
        self.peer, self.set, self.filters = peer, set_name, filters
        self.proxied, self.sendfile = proxied, sendfile
        self.port = None

    @property
    def via(self):
        return "proxied" if self.proxied else ("file, sendfile" if self.sendfile else "file")

    @property
    def name(self):
        return "%s (%s)" % (" ".join(x for x in (self.peer, self.set) if x), self.via)

    @property
    def is_floor(self):
        return self.filters is None


class Nginx(nginx_bench.Bench):
    """The nginx instances of one run: `main` serves every row, each on
    its own port; `upstream` serves the pages to the proxied rows."""

    def __init__(self, build_dir, tmp, pages_dir, pages, no_pin, vm_limit):
        class A:
            pass
        a = A()
        a.build_dir = build_dir
        super().__init__(a)
        os.rmdir(self.tmp)  # the run's own temporary directory instead
        self.tmp = tmp
        self.pages_dir, self.pages, self.vm_limit = pages_dir, pages, vm_limit
        self.server_cpu, self.client_cpu, self.pinned = nginx_bench.server_client_cpus(no_pin)
        self.main = None

    def limited(self, argv):
        return ["prlimit", "--as=%d" % self.vm_limit, "--"] + argv

    def start_rows(self, rows):
        need_subs = any(r.filters and any(d.startswith("subs_filter ") for d in r.filters) for r in rows)
        up_port = free_port()
        if any(r.proxied for r in rows):
            up = "    server { listen 127.0.0.1:%d; root %s; }\n" % (up_port, self.pages_dir)
            argv = self.nginx("upstream", TYPES + "    keepalive_requests 100000;\n" + up)
            self.procs.append(serve_bench.Proc(self.client_cpu + argv, self.path("upstream.log")))
            if not wait_port(up_port, proc=self.procs[-1].p):
                raise RuntimeError("the upstream nginx did not start:\n" + self.procs[-1].output())
        servers = [TYPES, "    keepalive_requests 100000;\n",
                   "    upstream pages { server 127.0.0.1:%d; keepalive 16; }\n" % up_port]
        for r in rows:
            r.port = free_port()
            body = ["sendfile %s;" % ("on" if r.sendfile else "off")]
            if r.proxied:
                body += ["proxy_pass http://pages;", "proxy_http_version 1.1;",
                         'proxy_set_header Connection "";', 'proxy_set_header Accept-Encoding "";',
                         "proxy_buffering off;", "proxy_buffer_size %s;" % PROXY_CHUNK]
            body += r.filters or []
            servers.append("    server { listen 127.0.0.1:%d; root %s;\n      location / {\n        %s\n      }\n    }\n"
                           % (r.port, self.pages_dir, "\n        ".join(body)))
        argv = self.nginx("main", "".join(servers), SUBS_MODULE if need_subs else None)
        self.main = self.start(self.limited(argv), "nginx-main", rows[0].port)
        for r in rows[1:]:
            if not wait_port(r.port, proc=self.main.p):
                raise RuntimeError("nginx did not listen on %d:\n%s" % (r.port, self.main.output()))

    def fetch_all(self, row, names):
        """The response body of every page (one keep-alive connection)."""
        out = {}
        c = http.client.HTTPConnection("127.0.0.1", row.port, timeout=120)
        try:
            for n in names:
                c.request("GET", "/" + n, headers={"Accept-Encoding": "identity"})
                r = c.getresponse()
                body = r.read()
                if r.status != 200:
                    raise RuntimeError("%s: /%s answered %d" % (row.name, n, r.status))
                out[n] = body
        finally:
            c.close()
        return out

    def write_lua(self):
        path = self.path("pages.lua")
        with open(path, "w") as f:
            f.write("-- the benchmark's pages in order, round robin\nlocal paths = {\n")
            f.write("".join('  "/%s",\n' % n for n in self.pages))
            f.write('}\nlocal i = 0\nfunction request() i = i % #paths + 1; '
                    'return wrk.format("GET", paths[i]) end\n')
        return path

    def wrk(self, row, seconds, mean_bytes):
        """One wrk run of `seconds` (whole seconds: wrk takes no fractions)
        on the row: requests, MB/s of (input) body, and the nginx worker's
        CPU seconds per MB."""
        lua = self.path("pages.lua")
        if not os.path.exists(lua):
            self.write_lua()
        cmd = ["wrk", "-t1", "-c%d" % CONNS, "-d%ds" % seconds, "-s", lua,
               "http://127.0.0.1:%d/" % row.port]
        pids = [self.main.pid]
        t0 = serve_bench.cpu_ticks(pids)
        out = subprocess.run(self.client_cpu + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True).stdout
        ticks = serve_bench.cpu_ticks(pids) - t0
        r = serve_bench.parse_wrk(out)
        mb = r["requests"] * mean_bytes / 1e6
        cpu = ticks / os.sysconf("SC_CLK_TCK")
        return {"requests": r["requests"], "rps": r["rps"], "mbps": r["rps"] * mean_bytes / 1e6,
                "cpu_s": cpu, "cpu_s_per_mb": cpu / mb if mb else None,
                "failed": r["socket_errors"] + r["non2xx"], "wrk": out if not r["requests"] else None}


class BodyUpstream:
    """A loopback HTTP/1.1 server whose GET /mem/N answers N bytes of the
    minified pages cycled (what rw-body --minified feeds the engine),
    text/html with a Content-Length, written in 1 MiB slices."""

    def __init__(self, blob):
        ring = blob * (1 + (1 << 20) // len(blob) + 1)
        period = len(blob)

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                n = int(self.path.rsplit("/", 1)[1])
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(n))
                self.end_headers()
                view, off, left = memoryview(ring), 0, n
                while left:
                    k = min(left, 1 << 20)
                    self.wfile.write(view[off:off + k])
                    off = (off + k) % period
                    left -= k

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def worker_pid(master):
    kids = serve_bench.with_children({master}) - {master}
    if len(kids) != 1:
        raise RuntimeError("nginx master %d has %d workers, want 1" % (master, len(kids)))
    return kids.pop()


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM for %d" % pid)


def subs_memory(ng, filters, blob, sizes, timeout):
    """subs_filter's worker on one body of each size (in order): the
    worker's peak resident set (VmHWM, reset before each request through
    /proc/PID/clear_refs), the response length and the seconds it took.
    Returns a list of dicts; a request that fails or times out ends the
    list with its error."""
    up = BodyUpstream(blob)
    port = free_port()
    body = ["proxy_pass http://127.0.0.1:%d;" % up.port, "proxy_http_version 1.1;",
            'proxy_set_header Accept-Encoding "";', "proxy_buffering off;",
            "proxy_buffer_size 64k;", "proxy_buffers 8 64k;", "proxy_read_timeout %ds;" % timeout,
            "send_timeout %ds;" % timeout] + filters
    conf = TYPES + "    server { listen 127.0.0.1:%d;\n      location / {\n        %s\n      }\n    }\n" % (
        port, "\n        ".join(body))
    proc = ng.start(ng.limited(ng.nginx("memory", conf, SUBS_MODULE)), "nginx-memory", port)
    out = []
    try:
        worker = worker_pid(proc.pid)
        for n in sizes:
            with open("/proc/%d/clear_refs" % worker, "w") as f:
                f.write("5")  # resets VmHWM to the current resident set
            before = vm_hwm_kib(worker)
            t0 = time.perf_counter()
            got, err = 0, None
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            try:
                c.request("GET", "/mem/%d" % n, headers={"Accept-Encoding": "identity"})
                r = c.getresponse()
                while True:
                    d = r.read(1 << 20)
                    if not d:
                        break
                    got += len(d)
                if r.status != 200:
                    err = "answered %d" % r.status
            except (OSError, http.client.HTTPException, socket.timeout) as e:
                err = "%s: %s" % (type(e).__name__, e)
            finally:
                c.close()
            out.append({"bytes": n, "out_bytes": got, "secs": time.perf_counter() - t0,
                        "worker_rss_before_kib": before, "worker_max_rss_kib": vm_hwm_kib(worker),
                        "error": err})
            if err:
                break
    finally:
        up.stop()
        proc.stop()
        ng.procs.remove(proc)
    return out
