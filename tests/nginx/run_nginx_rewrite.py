#!/usr/bin/env python3
"""The body rewriter of ngx_http_classify_module inside real nginx (TAP).

usage: run_nginx_rewrite.py CLASSIFYC CLASSIFY_RUN MODULE.so RW_PAGEGEN SANITIZE CC
       run_nginx_rewrite.py --skip REASON

Starts Debian's nginx (the stock binary) with the module on loopback
ports, in a temporary prefix of its own, with the rewrite sets of
tests/nginx/rewrite.clf, static pages from bench/rewrite's generator
(rw-pagegen) and an origin of its own on loopback (Origin, below) that
sends a page with the framing, piece size, pacing, encoding, type and
validators a request asks for. Every rewritten body is compared byte for
byte with `classify-run RULES --rewrite SET` on the same bytes, and every
replacement count ($classify_rewrite_replacements) with its --stats.
Checks:
  - static files: rewritten, chunked, no Content-Length, Last-Modified
    removed, the ETag weak and tagged; a 304 for that ETag, none for the
    original; a Range request gets the whole rewritten page; HTTP/1.0
    gets it to the connection's end; HEAD gets
    the same headers and no body; nginx's gzip
    compresses the result; 404 and other types pass untouched,
    classify_rewrite_types adds one, classify_rewrite off;
  - proxied: chunked in 7-byte chunks and Content-Length in paced
    100-byte pieces, buffered and with proxy_buffering off, and through
    classify_rewrite_buffers 2 1k read by a slow client; a gzip body and
    Content-Encoding: identity; an origin that pauses mid-body, with a
    slow client, proxy_buffering off and buffered (what is rewritten
    reaches the client meanwhile);
  - buffer sizes (BUFFERS): classify_rewrite_buffers from 1 128 to 2 64k,
    output_buffers, sendfile, aio threads, proxy buffers, each static and
    proxied;
  - the skip cache: no rule fires -> the second response is skipped, with
    the original headers; a changed file (new ETag) is rewritten again;
    without a validator, or with classify_rewrite_cache off, never
    skipped;
  - several sets (leftmost_longest, replace_filter) per location;
  - concurrent responses: each correct, rewriters reused (the debug log
    counts them); clients that reset mid-body give theirs back;
  - `nginx -s reload` with rules whose template changed: a response in
    flight finishes with the old rules, later ones get the new, and the
    old ETag no longer revalidates;
  - a 100 MiB proxied body: correct, and the worker's resident set and
    its peak flat while it streams (VmRSS, VmHWM in /proc/PID/status);
  - `nginx -t` errors: an unknown set (the library's message lists the
    sets), a rules file without sets, no classify_rules, bad directive
    values; and no alert or crit in the error log.
nginx and the origin are stopped at the end, also when a check fails.
"""

import gzip
import hashlib
import http.client
import os
import re
import shutil
import socket
import socketserver
import subprocess
import struct
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
sys.dont_write_bytecode = True
import run_nginx  # noqa: E402
from serve_common import Tap, dechunk, free_port  # noqa: E402

BIG_MIB = 100
PAGES = 4

CONF = """load_module {module};
worker_processes 2;
daemon off;
pid {d}/nginx.pid;
error_log {d}/logs/error.log info;
events {{ worker_connections 512; }}
http {{
    types {{ text/html html; text/plain txt; text/css css; }}
    default_type application/octet-stream;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    log_format rw '$status|$classify_rewrite|$classify_rewrite_replacements|$request_uri';
    access_log {d}/logs/rw.log rw;
    upstream origin {{ server 127.0.0.1:{origin}; }}

    classify_rules {d}/rules.bin;

    server {{
        listen 127.0.0.1:{main};
        root {d}/www;
        classify_rewrite site;
        add_header X-Worker $pid;

        location /static/ {{ }}
        location /legacy/ {{ alias {d}/www/static/; classify_rewrite legacy; }}
        location /nomatch/ {{ alias {d}/www/static/; classify_rewrite nomatch; }}
        location /nocache/ {{ alias {d}/www/static/; classify_rewrite nomatch;
                             classify_rewrite_cache off; }}
        location /plain/ {{ alias {d}/www/static/; classify_rewrite_types text/plain; }}
        location /off/ {{ alias {d}/www/static/; classify_rewrite off; }}
        location /gz/ {{ alias {d}/www/static/; gzip on; gzip_min_length 1; }}
        location /up/ {{ proxy_pass http://origin; }}
        location /upnb/ {{ proxy_pass http://origin/up/; proxy_buffering off; }}
        location /upnomatch/ {{ proxy_pass http://origin/up/; classify_rewrite nomatch; }}
        location /conc/ {{ proxy_pass http://origin/up/; error_log {d}/logs/debug.log debug; }}
{buffers}    }}

    # a small socket send buffer, so that a slow client holds nginx up
    server {{
        listen 127.0.0.1:{small} sndbuf=4096;
        location /small/ {{ proxy_pass http://origin/up/; classify_rewrite literal;
                           classify_rewrite_buffers 2 1k;
                           proxy_buffers 4 4k; proxy_busy_buffers_size 4k;
                           proxy_max_temp_file_size 0; error_log {d}/logs/small.log debug; }}
        location /smallnb/ {{ proxy_pass http://origin/up/; classify_rewrite literal;
                             proxy_buffering off; }}
        location /smallb/ {{ proxy_pass http://origin/up/; classify_rewrite literal; }}
        location /smallbm/ {{ proxy_pass http://origin/up/; classify_rewrite literal;
                             proxy_max_temp_file_size 0; }}
        location /smallb1/ {{ proxy_pass http://origin/up/; classify_rewrite literal;
                             proxy_buffers 4 4k; proxy_busy_buffers_size 4k; }}
    }}
}}
"""


# Buffer sizes, each in a static and a proxied location (/bs/NAME/static/,
# /bs/NAME/up/): the rewriter's output buffers (classify_rewrite_buffers),
# and the input's, the copy filter's (output_buffers, sendfile, aio threads)
# and the upstream's (proxy_buffer_size, proxy_buffers, proxy_buffering).
BUFFERS = [
    ("1x128", "classify_rewrite_buffers 1 128; output_buffers 1 1k; proxy_buffer_size 1k; "
              "proxy_buffers 2 1k; proxy_busy_buffers_size 1k;"),
    ("4x1k", "classify_rewrite_buffers 4 1k; output_buffers 3 4k; proxy_buffering off; "
             "proxy_buffer_size 3k;"),
    ("16x8k", "sendfile on;"),
    ("2x64k", "classify_rewrite_buffers 2 64k; output_buffers 1 64k; sendfile on; aio threads; "
              "proxy_buffers 8 16k; proxy_busy_buffers_size 32k;"),
]


def buffer_locations(d):
    return "".join(
        "        location /bs/{n}/static/ {{ alias {d}/www/static/; {v} }}\n"
        "        location /bs/{n}/up/ {{ proxy_pass http://origin/up/; {v} }}\n".format(n=n, v=v, d=d)
        for n, v in BUFFERS)


# ---------------------------------------------------------------- the origin

class Origin:
    """The site behind nginx, on loopback. GET /up/FILE?QUERY serves
    DIR/FILE, /up/big?mib=N streams N MiB of the pages end to end. The
    query: te=chunked|length (framing; default length), piece=N (bytes per
    chunk or write; default all), delay=MS (after every `every` pieces,
    default 1), ce=gzip|identity, type=MIME (default text/html),
    etag=VALUE, lm=1 (a Last-Modified), gate=N (after N bytes, wait
    until the test sets `gate`). Every response closes its connection.
    `seen` records (path, request headers)."""

    def __init__(self, root, pages):
        self.root, self.pages, self.seen = root, pages, []
        self.gate = threading.Event()
        origin = self

        class H(socketserver.BaseRequestHandler):
            def handle(self):
                origin.serve(self.request)

        class S(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass  # nginx closing early is the test's business

        self.server = S(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def body(self, path, q):
        if path == "/up/big":
            return None, int(q.get("mib", "1")) << 20
        with open(os.path.join(self.root, path[len("/up/"):]), "rb") as f:
            data = f.read()
        if q.get("ce") == "gzip":
            data = gzip.compress(data, mtime=0)
        return data, len(data)

    def pieces(self, data, total, q):
        if data is None:  # the big body: the pages over and over, 64 KiB writes
            blob = b"".join(self.pages)
            sent = 0
            while sent < total:
                n = min(total - sent, len(blob))
                for i in range(0, n, 65536):
                    yield blob[i:min(i + 65536, n)]
                sent += n
            return
        size = int(q.get("piece", "0")) or max(len(data), 1)
        for i in range(0, len(data), size):
            yield data[i:i + size]

    def serve(self, s):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = b""
        while b"\r\n\r\n" not in head:
            d = s.recv(4096)
            if not d:
                return
            head += d
        lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)}
        u = urllib.parse.urlsplit(target)
        q = dict(urllib.parse.parse_qsl(u.query))
        self.seen.append((u.path, headers))
        data, total = self.body(u.path, q)
        chunked = q.get("te") == "chunked"
        out = ["HTTP/1.1 200 OK", "Content-Type: " + q.get("type", "text/html"), "Connection: close"]
        if q.get("ce"):
            out.append("Content-Encoding: " + q["ce"])
        if q.get("etag"):
            out.append("ETag: " + q["etag"])
        if q.get("lm"):
            out.append("Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT")
        out.append("Transfer-Encoding: chunked" if chunked else "Content-Length: %d" % total)
        s.sendall(("\r\n".join(out) + "\r\n\r\n").encode())
        if method == "HEAD":
            return
        delay, every = float(q.get("delay", "0")) / 1000, int(q.get("every", "1"))
        gate, sent = int(q.get("gate", "-1")), 0
        for i, p in enumerate(self.pieces(data, total, q)):
            s.sendall(b"%x\r\n%s\r\n" % (len(p), p) if chunked else p)
            sent += len(p)
            if delay and (i + 1) % every == 0:
                time.sleep(delay)
            if 0 <= gate <= sent:
                self.gate.wait(60)  # the test opens it (a paused origin)
                gate = -1
        if chunked:
            s.sendall(b"0\r\n\r\n")


# ---------------------------------------------------------------- helpers

class Fetch:
    """One keep-alive client connection to nginx (one worker serves it)."""

    def __init__(self, port, timeout=30):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def get(self, path, method="GET", headers=None):
        self.c.request(method, path, headers=headers or {})
        r = self.c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def close(self):
        self.c.close()


def fetch(port, path, method="GET", headers=None):
    f = Fetch(port)
    try:
        return f.get(path, method, headers)
    finally:
        f.close()


class Ref:
    """classify-run --rewrite on the same bytes: (output, replacements)."""

    def __init__(self, classify_run, d):
        self.classify_run, self.d, self.n = classify_run, d, 0

    def __call__(self, rules, name, data):
        self.n += 1
        path = os.path.join(self.d, "ref-%d.in" % self.n)
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([self.classify_run, rules, "--rewrite", name, "--stats", path],
                           capture_output=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("classify-run --rewrite %s: %s" % (name, p.stderr.decode()))
        m = re.search(rb"(\d+) replacements", p.stderr)
        return p.stdout, int(m.group(1))


def log_tail(d, n):
    """The last n lines of the access log, once it has them."""
    path = os.path.join(d, "logs", "rw.log")
    end = time.time() + 5
    while True:
        with open(path) as f:
            lines = [line.rstrip("\n").split("|") for line in f]
        if len(lines) >= n or time.time() > end:
            return lines


class Log:
    """The access log from now on: `since()` gives the lines logged after
    the mark (each `status|$classify_rewrite|replacements|uri`)."""

    def __init__(self, d):
        self.d = d
        self.mark = len(log_tail(d, 0))

    def since(self, n):
        lines = log_tail(self.d, self.mark + n)[self.mark:]
        self.mark += len(lines)
        return lines


def mem_kib(pid):
    """The process's resident set and its peak so far (VmRSS, VmHWM), KiB."""
    with open("/proc/%d/status" % pid) as f:
        status = f.read()
    return tuple(int(re.search(r"%s:\s+(\d+) kB" % k, status).group(1)) for k in ("VmRSS", "VmHWM"))


def read_to_close(s, have=b"", size=65536, pause=0):
    """What the socket sends until its end (after `have`), `size` bytes a
    read, `pause` seconds after each (a slow client); then closed."""
    while True:
        chunk = s.recv(size)
        if not chunk:
            break
        have += chunk
        if pause:
            time.sleep(pause)
    s.close()
    return have


# ---------------------------------------------------------------- checks

def check_static(t, port, d, ref, rules, pages):
    page = pages[0]
    want, nrep = ref(rules, "site", page)
    log = Log(d)
    status, h, body = fetch(port, "/static/page-0000.html")
    t.ok(status == 200 and body == want,
         "static page: byte-identical to classify-run --rewrite site (%d bytes in, %d out)"
         % (len(page), len(want)), (status, len(body), len(want)))
    t.ok(body != page and nrep > 0, "... and the rules did change it (%d replacements)" % nrep)
    t.ok("content-length" not in h and h.get("transfer-encoding") == "chunked",
         "... sent chunked, without Content-Length", h)
    t.ok("last-modified" not in h and "accept-ranges" not in h,
         "... without Last-Modified and Accept-Ranges", h)
    _, orig, _ = fetch(port, "/off/page-0000.html")
    etag = h.get("etag", "")
    t.ok(re.fullmatch(r'W/"%s-rw[0-9a-f]{8}"' % re.escape(orig.get("etag", "?").strip('"')), etag),
         "... the ETag weak and tagged with the rules (%s, the file's %s)" % (etag, orig.get("etag")), h)
    t.eq(log.since(2)[0][1:3], ["rewritten", str(nrep)],
         "$classify_rewrite rewritten, $classify_rewrite_replacements = classify-run --stats")

    status, _, body = fetch(port, "/static/page-0000.html", headers={"If-None-Match": etag})
    t.eq((status, body), (304, b""), "If-None-Match with that ETag: 304")
    status, _, body = fetch(port, "/static/page-0000.html", headers={"If-None-Match": orig["etag"]})
    t.ok(status == 200 and body == want, "If-None-Match with the file's own ETag: 200 and the rewritten page",
         status)
    status, _, body = fetch(port, "/static/page-0000.html",
                            headers={"If-Modified-Since": orig.get("last-modified", "")})
    t.ok(status == 200 and body == want, "If-Modified-Since the file's date: 200 (Last-Modified is not ours to "
                                         "revalidate)", status)
    status, hh, body = fetch(port, "/static/page-0000.html", headers={"Range": "bytes=0-99"})
    _, _, part = fetch(port, "/off/page-0000.html", headers={"Range": "bytes=0-99"})
    t.ok(status == 200 and body == want and "content-range" not in hh and part == page[:100],
         "Range: bytes=0-99: 200 and the whole rewritten page (ranges of the original are not ranges of "
         "the result; classify_rewrite off gives the range)", (status, len(body), hh))
    log.since(2)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET /static/page-0000.html HTTP/1.0\r\n\r\n")
    raw = read_to_close(s)
    head, _, body = raw.partition(b"\r\n\r\n")
    t.ok(head.startswith(b"HTTP/1.1 200") and body == want and b"\r\ncontent-length:" not in head.lower()
         and b"\r\ntransfer-encoding:" not in head.lower(),
         "HTTP/1.0 without Host: the rewritten page, its end the connection's (no Content-Length, not "
         "chunked)", head)
    log.since(1)
    status, hh, body = fetch(port, "/static/page-0000.html", method="HEAD")
    t.ok(status == 200 and body == b"" and "content-length" not in hh and hh.get("etag") == etag
         and "last-modified" not in hh,
         "HEAD: the headers a GET gets (no Content-Length, the same ETag), no body", hh)
    t.eq(log.since(4)[-1][1], "passed", "... logged as passed (no body went through the rewriter)")

    for i, p in enumerate(pages[1:], 1):
        w, _ = ref(rules, "site", p)
        status, _, body = fetch(port, "/static/page-%04d.html" % i)
        t.ok(status == 200 and body == w, "static page %d%s: byte-identical to classify-run"
             % (i, " (minified)" if p.count(b"\n") < 5 else ""), (status, len(body), len(w)))

    w, nrep = ref(rules, "legacy", page)
    status, _, body = fetch(port, "/legacy/page-0000.html")
    t.ok(body == w and body != want, "another set of the same rules file in another location "
                                     "(replace_filter semantics): classify-run --rewrite legacy", len(body))
    t.eq(log.since(len(pages))[-1][1:3], ["rewritten", str(nrep)], "... with its own replacement count")

    status, h, body = fetch(port, "/gz/page-0000.html", headers={"Accept-Encoding": "gzip"})
    t.ok(h.get("content-encoding") == "gzip" and gzip.decompress(body) == want,
         "gzip on: nginx compresses the rewritten page (gunzipped: classify-run's output)", h)
    log.since(1)

    status, h, body = fetch(port, "/static/missing.html")
    t.ok(status == 404 and b"origin-site" not in body, "404: passed untouched", status)
    status, h, body = fetch(port, "/static/notes.txt")
    t.ok(body == pages[0] and h.get("content-length") == str(len(page)),
         "text/plain, not in classify_rewrite_types: untouched, with its Content-Length", h)
    w, _ = ref(rules, "site", page)
    status, h, body = fetch(port, "/plain/notes.txt")
    t.ok(body == w, "classify_rewrite_types text/plain: rewritten", len(body))
    status, h, body = fetch(port, "/plain/page-0000.html")
    t.ok(body == w, "... and text/html still is (always in the list)", len(body))
    status, h, body = fetch(port, "/off/page-0000.html")
    t.ok(body == page and h.get("content-length") == str(len(page)), "classify_rewrite off: untouched", h)
    t.eq([x[1] for x in log.since(5)], ["passed", "passed", "rewritten", "rewritten", "-"],
         "$classify_rewrite: passed for the 404 and the other type, empty where off")


def check_proxied(t, port, small, d, ref, rules, origin, pages):
    page = pages[2]
    want, nrep = ref(rules, "site", page)
    cases = [
        ("/up/page-0002.html?te=chunked&piece=7", "buffered, chunked, 7-byte chunks"),
        ("/up/page-0002.html?te=length&piece=100&delay=1&every=8", "buffered, Content-Length, paced 100-byte writes"),
        ("/upnb/page-0002.html?te=chunked&piece=7", "proxy_buffering off, 7-byte chunks"),
        ("/upnb/page-0002.html?te=length&piece=100&delay=1&every=8",
         "proxy_buffering off, Content-Length, paced 100-byte writes"),
        ("/up/page-0002.html?ce=identity", "Content-Encoding: identity"),
    ]
    log = Log(d)
    for path, what in cases:
        status, h, body = fetch(port, path)
        t.ok(status == 200 and body == want and "content-length" not in h,
             "proxied, %s: byte-identical to classify-run, no Content-Length" % what,
             (status, len(body), len(want), h))
    t.ok(all(x[1:3] == ["rewritten", str(nrep)] for x in log.since(len(cases))),
         "... each logged rewritten with classify-run's %d replacements" % nrep)

    gz = gzip.compress(page, mtime=0)
    n = len(origin.seen)
    status, h, body = fetch(port, "/up/page-0002.html?ce=gzip", headers={"Accept-Encoding": "gzip"})
    t.ok(body == gz and h.get("content-encoding") == "gzip" and h.get("content-length") == str(len(gz)),
         "a gzip body from the upstream: passed byte-identical, with its Content-Length", h)
    t.eq(log.since(1)[0][1], "passed", "... logged as passed")
    t.eq(origin.seen[n][1].get("accept-encoding"), "gzip",
         "(nginx forwards Accept-Encoding: docs/nginx.md says to clear it)")

    status, h, body = fetch(port, "/up/page-0002.html?type=text/plain")
    t.ok(body == page and h.get("content-length") == str(len(page)),
         "proxied text/plain: untouched, with its Content-Length", h)

    # classify_rewrite_buffers 2 1k, read slowly: the output buffers are all
    # downstream most of the time, so the filter holds its input
    want, _ = ref(rules, "literal", page)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", small))
    s.sendall(b"GET /small/page-0002.html?te=chunked&piece=512 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    raw = read_to_close(s, size=1024, pause=0.002)
    head, _, rest = raw.partition(b"\r\n\r\n")
    body = dechunk(rest)
    t.ok(body == want, "classify_rewrite_buffers 2 1k with a slow client: byte-identical (%d bytes)" % len(body),
         (len(body), len(want), head[:300]))
    log.since(1)
    with open(os.path.join(d, "logs", "small.log"), errors="replace") as f:
        dbg = f.read()
    held = len(re.findall(r'classify_rewrite "literal": input held, \d+ buffers downstream', dbg))
    m = re.search(r'classify_rewrite "literal": \d+ bytes in, \d+ out, \d+ replacements, (\d+) buffers', dbg)
    # 2 buffers, plus one for what a 512-byte input buffer writes
    t.ok(held > 0 and m and int(m.group(1)) <= 3,
         "... the filter held its input while its buffers were downstream (%d times), and made %s output "
         "buffers for the %d-byte body" % (held, m.group(1) if m else "?", len(want)), dbg[-2000:])


def check_buffer_sizes(t, port, d, ref, rules, pages):
    """Every page, static and proxied (in 3-byte chunks, and with a
    Content-Length in 1000-byte writes), through each of BUFFERS."""
    want = [ref(rules, "site", p)[0] for p in pages]
    log = Log(d)
    for name, directives in BUFFERS:
        bad = []
        f = Fetch(port)
        try:
            for i in range(len(pages)):
                for q in ("static/page-%04d.html", "up/page-%04d.html?te=chunked&piece=3",
                          "up/page-%04d.html?te=length&piece=1000"):
                    path = "/bs/%s/%s" % (name, q % i)
                    status, h, body = f.get(path)
                    if status != 200 or body != want[i] or "content-length" in h:
                        bad.append((path, status, len(body), len(want[i])))
        finally:
            f.close()
        n = 3 * len(pages)
        outcomes = [x[1] for x in log.since(n)]
        t.ok(not bad and outcomes == ["rewritten"] * n,
             "%s (%s): %d responses, static and proxied, byte-identical to classify-run"
             % (name, directives, n), (bad, outcomes))


def chunked_body_len(raw):
    """How many body bytes the complete chunks of a chunked response so
    far hold (raw: what follows the head)."""
    n, i = 0, 0
    while True:
        j = raw.find(b"\r\n", i)
        if j < 0:
            return n
        size = int(raw[i:j].split(b";")[0], 16)
        if size == 0 or len(raw) < j + 2 + size + 2:
            return n
        n += size
        i = j + 2 + size + 2


def check_paused_origin(t, small, ref, rules, origin):
    """An origin that pauses mid-body, a client that reads: what the
    rewriter has decided must reach the client while the origin waits, as
    the origin's own bytes would without the filter. The origin waits until
    the client has them, so a filter that keeps them stalls the response:
    a check fails after a 20 s wait, never on timing when it works."""
    first = 512 << 10
    big = b"".join(origin.pieces(None, 1 << 20, {}))
    want_first, _ = ref(rules, "literal", big[:first])
    want, _ = ref(rules, "literal", big)
    cases = [
        # a small window, nginx's buffers full when the origin pauses: a
        # call with no input must push what the write filter holds
        ("/smallnb/", "proxy_buffering off"),
        # the same buffered: on a write event the upstream calls the
        # filters again only when its own buffers wait to be sent
        # (proxy_busy_buffers_size), or a temporary file's data; the
        # filter must hold its input until what it made of it is sent, as
        # sub_filter does (its output points into its input)
        ("/smallb/", "buffered"),
        ("/smallbm/", "buffered in memory only (proxy_max_temp_file_size 0)"),
        ("/smallb1/", "buffered, proxy_busy_buffers_size one buffer"),
    ]
    for path, what in cases:
        origin.gate.clear()
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(20)
        s.connect(("127.0.0.1", small))
        s.sendall(b"GET %sbig?mib=1&gate=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                  % (path.encode(), first))
        time.sleep(0.3)  # let nginx's buffers fill (not a condition of the check)
        raw, before = b"", None
        try:
            # the literal set holds back at most its longest literal's length
            while chunked_body_len(raw.partition(b"\r\n\r\n")[2]) < len(want_first) - 64:
                chunk = s.recv(65536)
                if not chunk:
                    break
                raw += chunk
        except socket.timeout:
            before = chunked_body_len(raw.partition(b"\r\n\r\n")[2])
        origin.gate.set()
        s.settimeout(30)
        raw = read_to_close(s, raw)
        t.ok(before is None, "%s, a slow client, the origin paused mid-body: the client gets the rewritten "
                             "bytes so far while it waits (%d of them)" % (what, len(want_first)),
             "stalled after %s body bytes" % before)
        t.ok(dechunk(raw.partition(b"\r\n\r\n")[2]) == want,
             "... and then the rest, byte-identical to classify-run --rewrite literal")


def check_cache(t, port, d, ref, rules):
    log = Log(d)
    f = Fetch(port)  # one connection: one worker, one cache
    try:
        page = open(os.path.join(d, "www", "static", "page-0001.html"), "rb").read()
        s1, h1, b1 = f.get("/nomatch/page-0001.html")
        s2, h2, b2 = f.get("/nomatch/page-0001.html")
        got = [x[1] for x in log.since(2)]
        t.eq(got, ["rewritten", "skipped"], "skip cache: a page no rule fires on is scanned once, then skipped")
        t.ok(b1 == page and b2 == page, "... both responses the page, byte for byte")
        t.ok("content-length" not in h1 and h2.get("content-length") == str(len(page))
             and h2.get("etag", "").startswith('"'),
             "... the skipped one with the original headers (Content-Length, the file's ETag)", (h1, h2))

        # a file that changes: its ETag (mtime, size) changes, so does the key
        path = os.path.join(d, "www", "static", "changing.html")
        with open(path, "wb") as g:
            g.write(b"<p>nothing to rewrite here</p>\n")
        got = [f.get("/static/changing.html")[2] for _ in range(2)]
        v1 = [x[1:3] for x in log.since(2)]
        time.sleep(1.1)  # a new mtime second
        with open(path, "wb") as g:
            g.write(b"<p>now www.origin-site.example is here</p>\n")
        got += [f.get("/static/changing.html")[2] for _ in range(2)]
        v2 = [x[1:3] for x in log.since(2)]
        t.eq(v1, [["rewritten", "0"], ["skipped", "0"]], "a file no rule fires on: rewritten, then skipped")
        t.eq(v2, [["rewritten", "1"], ["rewritten", "1"]],
             "... changed to one a rule fires on (a new ETag): rewritten again, never skipped")
        t.eq(got[3], b"<p>now www.clone-site.example is here</p>\n", "... with the new content rewritten")

        got = [f.get("/upnomatch/page-0001.html")[1] for _ in range(2)]
        t.eq([x[1] for x in log.since(2)], ["rewritten", "rewritten"],
             "no ETag or Last-Modified (proxied): no cache use, rewritten both times")
        for q in ("etag=%22v1%22", "lm=1"):
            f.get("/upnomatch/page-0001.html?" + q)
            f.get("/upnomatch/page-0001.html?" + q)
        t.eq([x[1] for x in log.since(4)], ["rewritten", "skipped"] * 2,
             "proxied with an ETag, and with only a Last-Modified: skipped the second time")
        f.get("/nocache/page-0001.html")
        f.get("/nocache/page-0001.html")
        t.eq([x[1] for x in log.since(2)], ["rewritten", "rewritten"], "classify_rewrite_cache off: never skipped")
    finally:
        f.close()


def check_concurrent(t, port, d, ref, rules, pages):
    want = [ref(rules, "site", p)[0] for p in pages]
    results, lock = [], threading.Lock()

    def one(i):
        try:
            r = fetch(port, "/conc/page-%04d.html?te=chunked&piece=256&delay=2&every=4" % (i % len(pages)))
        except Exception as e:  # noqa: BLE001 - reported below
            r = (None, {}, repr(e).encode())
        with lock:
            results.append((i, r))

    for rnd in range(2):
        threads = [threading.Thread(target=one, args=(i,)) for i in range(12)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    bad = [(i, r[0], len(r[2])) for i, r in results if r[0] != 200 or r[2] != want[i % len(pages)]]
    t.ok(len(results) == 24 and not bad, "24 concurrent proxied responses (12 at a time, twice), each "
                                         "byte-identical to classify-run", bad[:5])
    made = rewriters_made(d)
    t.ok(made and max(made) <= 12, "a worker makes at most one rewriter per response in flight (%d made for "
                                   "24 responses, at most %d in one worker)" % (len(made), max(made or [0])), made)
    for i in range(12):
        fetch(port, "/conc/page-%04d.html?te=chunked&piece=4096" % (i % len(pages)))
    t.eq(len(rewriters_made(d)), len(made), "12 responses one after the other: no new rewriter (the free list's "
                                            "are reused)")


def check_aborts(t, port, d, ref, rules, pages):
    """Clients that go away mid-body (a reset after 256 KiB of a 4 MiB
    response), 20 one after the other: each response's rewriter must go
    back to the free list when its request ends early, or every abort
    would leave one behind and the worker make new ones (after the
    concurrent check each worker has several free, so with a leak at least
    eight of the 20 would be new ones)."""
    made = len(rewriters_made(d))
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
        s.sendall(b"GET /conc/big?mib=4 HTTP/1.1\r\nHost: x\r\n\r\n")
        got = 0
        while got < 256 << 10:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += len(chunk)
        s.close()
    want = ref(rules, "site", pages[1])[0]
    status, _, body = fetch(port, "/conc/page-0001.html?te=chunked&piece=4096")
    new = len(rewriters_made(d)) - made
    t.ok(new <= 2 and status == 200 and body == want,
         "20 clients gone mid-body: their rewriters back on the free list (%d made meanwhile), and the next "
         "response byte-identical" % new, (new, status, len(body)))


def rewriters_made(d):
    """Each rewriter a worker made, as its debug log says: the worker's
    count after making it."""
    with open(os.path.join(d, "logs", "debug.log"), errors="replace") as f:
        return [int(m) for m in re.findall(r'classify_rewrite "site": (\d+) rewriters', f.read())]


def check_reload(t, ngx, port, d, ref, classifyc, src, rules):
    old_want, _ = ref(rules, "site", open(os.path.join(d, "www", "static", "page-0003.html"), "rb").read())
    _, h, _ = fetch(port, "/static/page-0003.html")
    old_etag = h.get("etag")
    # a response in flight across the reload: the origin takes ~2 s
    slow = {}

    def run():
        slow["r"] = fetch(port, "/up/page-0003.html?te=chunked&piece=512&delay=20")

    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.5)
    new_src = src.replace('"www.clone-site.example"   // RELOAD-MARKER', '"www.reloaded.example"')
    new_bin = run_nginx.compile_rules(classifyc, new_src, d, "rules-v2")
    new_want, _ = ref(new_bin, "site", open(os.path.join(d, "www", "static", "page-0003.html"), "rb").read())
    os.replace(new_bin, rules)
    rc, out = ngx.reload()
    t.ok(rc == 0, "nginx -s reload with a rules.bin whose set rewrites differently", out)
    th.join(30)
    r = slow.get("r")
    t.ok(r and r[0] == 200 and r[2] == old_want and b"www.reloaded.example" not in r[2],
         "a response in flight during the reload finishes with the rules it started with",
         (r[0], len(r[2])) if r else None)
    end = time.time() + 10
    body = b""
    while time.time() < end:
        _, h, body = fetch(port, "/static/page-0003.html")
        if body == new_want:
            break
        time.sleep(0.1)
    t.ok(body == new_want and b"www.reloaded.example" in body,
         "after the reload: the new rules' output (classify-run with the new rules.bin)", len(body))
    status, _, _ = fetch(port, "/static/page-0003.html", headers={"If-None-Match": old_etag})
    t.ok(status == 200 and h.get("etag") != old_etag,
         "... a new ETag, and the one of the old rules no longer revalidates (%s -> %s)"
         % (old_etag, h.get("etag")), status)


def check_big(t, port, d, classify_run, rules, origin, sanitize):
    total = BIG_MIB << 20
    big = os.path.join(d, "big.in")
    with open(big, "wb") as f:
        for p in origin.pieces(None, total, {}):
            f.write(p)
    p = subprocess.Popen([classify_run, rules, "--rewrite", "site", big], stdout=subprocess.PIPE)
    h = hashlib.sha256()
    want_len = 0
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        h.update(chunk)
        want_len += len(chunk)
    p.wait()
    want = h.hexdigest()
    os.unlink(big)

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/up/big?mib=%d" % BIG_MIB)
    r = c.getresponse()
    pid = int(r.getheader("X-Worker"))
    h = hashlib.sha256()
    got, samples, t0 = 0, [], time.time()
    next_sample = 0
    while True:
        chunk = r.read(1 << 16)
        if not chunk:
            break
        h.update(chunk)
        got += len(chunk)
        if got >= next_sample:
            samples.append((got >> 20,) + mem_kib(pid))
            next_sample += 4 << 20
    secs = time.time() - t0
    c.close()
    samples.append((got >> 20,) + mem_kib(pid))  # after the last byte
    t.ok(got == want_len and h.hexdigest() == want,
         "a %d MiB proxied body: the same bytes as classify-run (%d bytes out, %.1f s, %.0f MB/s through nginx)"
         % (BIG_MIB, got, secs, got / secs / 1e6), (got, want_len))
    after = [(rss, hwm) for mib, rss, hwm in samples if mib >= 8]
    growth = (max(r for r, _ in after) - after[0][0]) if after else None
    # the peak: a worker's VmHWM only rises, so what it gained after
    # 8 MiB is the body's, even between two samples
    hwm_growth = (after[-1][1] - after[0][1]) if after else None
    note = "worker VmRSS %s KiB at 8 MiB, at most %s KiB after, VmHWM %s -> %s KiB; VmRSS every 12 MiB: %s" % (
        after[0][0] if after else "?", max(r for r, _ in after) if after else "?",
        after[0][1] if after else "?", after[-1][1] if after else "?",
        " ".join(str(r) for _, r, _ in samples[::3]))
    if sanitize not in ("", "none"):
        t.skip("the worker's resident set stays flat while it streams", "a %s build (%s)" % (sanitize, note))
    else:
        t.ok(growth is not None and growth <= 1024 and hwm_growth <= 1024,
             "the worker's resident set stays flat while it streams (VmRSS grew %s KiB and VmHWM %s KiB after "
             "the first 8 MiB; %s)" % (growth, hwm_growth, note), samples)


def check_config_errors(t, nginx, module, d, rules, classify_rules):
    base = "load_module %s;\npid %s/t.pid;\nevents {}\nhttp {\n%%s\n}\n" % (module, d)
    cases = [
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1;\nlocation / { classify_rewrite nope; } }" % rules,
         r'classify_rewrite "nope": no rewrite set \'nope\' in the rules file \(its rewrite sets: site, legacy, '
         r'literal, nomatch\) \(rules "%s"\) in \S+r0.conf:6' % re.escape(rules),
         "classify_rewrite of a set the rules file lacks: the library's message lists the sets"),
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify_rewrite main; }" % classify_rules,
         r"classify_rewrite \"main\": no rewrite set 'main' in the rules file \(its rewrite sets: none\)",
         "classify_rewrite with a rules file that has no rewrite sets"),
        ("server { listen 127.0.0.1:1; classify_rewrite site; }",
         r'classify_rewrite "site" in a server without "classify_rules" \(the server in \S+r2.conf:5\) '
         r'in \S+r2.conf:5',
         "classify_rewrite in a server without classify_rules"),
        ("classify_rewrite_cache 0;",
         r'classify_rewrite_cache "0": must be "off" or a number of keys from 1 to 4294967295',
         "classify_rewrite_cache 0"),
        ("classify_rules \"%s\"; server { listen 127.0.0.1:1; classify_rewrite site; "
         "classify_rewrite_cache 4000000000; }" % rules,
         r'classify_rewrite "site" with classify_rewrite_cache 4000000000: the cache would pass 1 GiB',
         "a skip cache too large for the library"),
        ("classify_rewrite_buffers 0 8k;", r'"classify_rewrite_buffers" directive invalid value',
         "classify_rewrite_buffers 0 8k"),
        ("classify_rewrite a; classify_rewrite b;", r'"classify_rewrite" directive is duplicate',
         "classify_rewrite twice"),
    ]
    run_nginx.check_nginx_t_errors(t, nginx, d, base, cases, "r")


def main(argv):
    t = Tap()
    if len(argv) == 3 and argv[1] == "--skip":
        print("1..0 # SKIP " + argv[2])
        return 0
    if len(argv) != 7:
        sys.stderr.write(__doc__)
        return 2
    nginx, why = run_nginx.find_nginx(argv[5], argv[6])
    if nginx is None:
        print("1..0 # SKIP " + why)
        return 0
    classifyc, classify_run, module, pagegen = (os.path.abspath(a) for a in argv[1:5])
    sanitize = argv[5]
    with open(os.path.join(HERE, "rewrite.clf")) as f:
        src = f.read()
    d = tempfile.mkdtemp(prefix="classify-nginx-rw-")
    origin = ngx = None
    try:
        os.chmod(d, 0o755)  # nginx's workers run as nobody when the tests run as root
        for sub in ("logs", "tmp", "www/static", "origin"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        subprocess.run([pagegen, "pages", os.path.join(d, "www", "static"), "--pages", str(PAGES)], check=True)
        pages = []
        for i in range(PAGES):
            with open(os.path.join(d, "www", "static", "page-%04d.html" % i), "rb") as f:
                pages.append(f.read())
            shutil.copy(os.path.join(d, "www", "static", "page-%04d.html" % i), os.path.join(d, "origin"))
        with open(os.path.join(d, "www", "static", "notes.txt"), "wb") as f:
            f.write(pages[0])
        rules = run_nginx.compile_rules(classifyc, src, d, "rules")
        with open(os.path.join(HERE, "rules.clf")) as f:
            classify_rules = run_nginx.compile_rules(classifyc, f.read(), d, "classify")
        ref = Ref(classify_run, d)
        check_config_errors(t, nginx, module, d, rules, classify_rules)

        origin = Origin(os.path.join(d, "origin"), pages)
        port, small = free_port(), free_port()
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(module=module, d=d, origin=origin.port, main=port, small=small,
                                buffers=buffer_locations(d)))
        ngx = run_nginx.Nginx(nginx, d, conf)
        rc, out = ngx.test()
        if not t.ok(rc == 0, "nginx -t: the configuration with classify_rewrite in several locations", out):
            return 1
        if not t.ok(ngx.start(port), "nginx starts with the module, 2 workers", ngx.error_log()):
            return 1
        check_static(t, port, d, ref, rules, pages)
        check_proxied(t, port, small, d, ref, rules, origin, pages)
        check_paused_origin(t, small, ref, rules, origin)
        check_buffer_sizes(t, port, d, ref, rules, pages)
        check_cache(t, port, d, ref, rules)
        check_concurrent(t, port, d, ref, rules, pages)
        check_aborts(t, port, d, ref, rules, pages)
        check_big(t, port, d, classify_run, rules, origin, sanitize)
        check_reload(t, ngx, port, d, ref, classifyc, src, os.path.join(d, "rules.bin"))
        log = ngx.error_log()
        t.ok("[alert]" not in log and "[crit]" not in log and "[emerg]" not in log,
             "no alert, crit or emerg in the error log", log[-3000:])
    except Exception:
        # a failed check, so that finish() keeps the prefix and its logs
        t.ok(False, "the checks run to the end", traceback.format_exc())
        raise
    finally:
        if ngx is not None:
            ngx.stop()
        if origin is not None:
            origin.stop()
        rc = run_nginx.finish(t, d)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
