"""The body rewriter's rows of bench/nginx/run.py (bench/nginx/README.md).

nginx's own sub_filter, the subs_filter module (Debian's
libnginx-mod-http-subs-filter) and the module's classify_rewrite rewrite
the same pages with the same rules: bench/rewrite's 64 generated pages
(rw-pagegen, 3.5 MB, the engine benchmark's) and its literal rule sets
lit:1, lit:10 and lit:100 (`rw-pagegen rules lit N`), each page a static
file served by one nginx worker and asked for in turn by wrk (a Lua
script). Before the timed runs every page goes through every row once:
the classify_rewrite rows must give classify-run --rewrite's bytes (the
run stops otherwise), and for sub_filter and subs_filter the number of
pages that come out the same is reported (their semantics differ:
sub_filter matches case-insensitively, subs_filter line by line).
"""

import os
import subprocess

from serve_common import dechunk, free_port, raw_exchange

SETS = (1, 10, 100)
PAGES = 64
SUBS_MODULE = "/usr/lib/nginx/modules/ngx_http_subs_filter_module.so"

LUA = """-- bench/rewrite's pages, in turn
local paths = {
%s}
local i = 0
function request()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i], {["Host"] = "bench", ["Accept-Encoding"] = "identity"})
end
"""


def nginx_string(s):
    """A single-quoted nginx configuration string."""
    if "$" in s:
        raise ValueError("%r: sub_filter and subs_filter would read a variable" % s)
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def clf_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def get(port, path):
    """The body of GET path (chunked or not)."""
    raw = raw_exchange(port, ("GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n" % path).encode(),
                       timeout=30)
    head, _, body = raw.partition(b"\r\n\r\n")
    if b"\r\n" + b"transfer-encoding: chunked" in head.lower():
        return dechunk(body)
    return body


class Rewrite:
    def __init__(self, bench):
        self.b = bench  # run.py's Bench: paths, the build, compile, start

    def prepare(self):
        b = self.b
        tools = os.path.join(b.build, "bench", "rewrite", "rw-pagegen")
        self.www = b.path("pages")
        os.makedirs(self.www)
        subprocess.run([tools, "pages", self.www, "--pages", str(PAGES)], check=True)
        self.names = ["page-%04d.html" % i for i in range(PAGES)]
        self.pages = []
        for name in self.names:
            with open(os.path.join(self.www, name), "rb") as f:
                self.pages.append(f.read())
        self.mean_bytes = sum(len(p) for p in self.pages) / len(self.pages)
        self.rules = {}
        for n in SETS:
            out = subprocess.run([tools, "rules", "lit", str(n)], check=True, capture_output=True).stdout
            self.rules[n] = [tuple(line.split("\t")[:2]) for line in out.decode().splitlines()]
        clf = b.path("rewrite.clf")
        with open(clf, "w") as f:
            for n in SETS:
                f.write("rewrite lit%d {\n" % n)
                for pat, rep in self.rules[n]:
                    f.write("    %s => %s\n" % (clf_string(pat), clf_string(rep.replace("$", "$$"))))
                f.write("}\n")
        self.bin = b.path("rewrite.bin")
        subprocess.run([os.path.join(b.build, "cli", "classifyc"), clf, "-o", self.bin], check=True)
        self.want = {}
        for n in SETS:
            self.want[n] = [subprocess.run([os.path.join(b.build, "cli", "classify-run"), self.bin,
                                            "--rewrite", "lit%d" % n, os.path.join(self.www, name)],
                                           check=True, capture_output=True).stdout for name in self.names]
        self.lua = b.path("pages.lua")
        with open(self.lua, "w") as f:
            f.write(LUA % "".join('  "/%s",\n' % name for name in self.names))
        self.ports = {k: free_port() for k in
                      ["static"] + ["sub%d" % n for n in SETS] + ["subs%d" % n for n in SETS] +
                      ["cr%d" % n for n in SETS]}

    def server(self, port, body):
        return ("    server { listen 127.0.0.1:%d; root %s; open_file_cache max=128 inactive=600s;\n"
                "             open_file_cache_valid 600s;\n%s    }\n" % (port, self.www, body))

    def stock_servers(self):
        P = self.ports
        out = self.server(P["static"], "")
        for n in SETS:
            out += self.server(P["sub%d" % n], "        sub_filter_once off;\n" + "".join(
                "        sub_filter %s %s;\n" % (nginx_string(p), nginx_string(r)) for p, r in self.rules[n]))
        return out

    def subs_servers(self):
        P = self.ports
        return "".join(self.server(P["subs%d" % n], "".join(
            "        subs_filter %s %s g;\n" % (nginx_string(p), nginx_string(r)) for p, r in self.rules[n]))
            for n in SETS)

    def module_servers(self):
        P = self.ports
        return "".join(self.server(P["cr%d" % n], "        classify_rules %s;\n        classify_rewrite lit%d;\n"
                                   % (self.bin, n)) for n in SETS)

    def verify(self):
        """Every page through every row: {row: pages equal to classify-run's}."""
        P = self.ports
        self.same = {}
        for i, name in enumerate(self.names):
            if get(P["static"], "/" + name) != self.pages[i]:
                raise RuntimeError("page-static: %s is not the file" % name)
        for n in SETS:
            for kind in ("sub", "subs", "cr"):
                row = self.row_name(kind, n)
                same = sum(1 for i, name in enumerate(self.names)
                           if get(P["%s%d" % (kind, n)], "/" + name) == self.want[n][i])
                if kind == "cr" and same != PAGES:
                    raise RuntimeError("%s: %d of %d pages differ from classify-run --rewrite lit%d"
                                       % (row, PAGES - same, PAGES, n))
                self.same[row] = same
        return self.same

    @staticmethod
    def row_name(kind, n):
        return {"sub": "sub_filter", "subs": "subs_filter", "cr": "classify_rewrite"}[kind] + "-%d" % n

    def rows(self, stock, subs, module):
        P = self.ports
        u = lambda port: "http://127.0.0.1:%d/" % port  # noqa: E731
        out = [("page-static", u(P["static"]), stock, "all-200", self.lua)]
        for n in SETS:
            out += [(self.row_name("sub", n), u(P["sub%d" % n]), stock, "all-200", self.lua),
                    (self.row_name("subs", n), u(P["subs%d" % n]), subs, "all-200", self.lua),
                    (self.row_name("cr", n), u(P["cr%d" % n]), module, "all-200", self.lua)]
        return out
