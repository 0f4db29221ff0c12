"""Helpers shared by the classify-serve tests (imported from this directory).

TAP output, free loopback ports, raw HTTP/1.1 over sockets (so the tests see
exactly what was sent and received), a small backend, and starting and
stopping classify-serve and the proxies, each in its own temporary
directory. Every process started here is stopped by its owner's `stop()`,
also when a test fails.
"""

import http.server
import os
import re
import signal as _signal
import socket
import subprocess
import sys
import threading
import time


class Tap:
    """Collects results and prints each line as it comes, the plan last.

    TAP allows the plan at the end; printing as we go means that a test
    meson kills at its timeout still shows every result it got and so
    where it hung (CI keeps only the log)."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def _emit(self, line):
        self.lines.append(line)
        print(line, flush=True)

    def ok(self, cond, name, diag=None, todo=None):
        """todo: a known bug (TAP "# TODO"), counted as skipped when it fails."""
        self.n += 1
        name = re.sub(r"\s+", " ", name).replace("#", "\\x23")
        if todo:
            name += " # TODO " + todo
        self._emit("%s %d - %s" % ("ok" if cond else "not ok", self.n, name))
        if not cond and diag:
            for line in str(diag).splitlines()[:60]:
                self._emit("# " + line.encode("ascii", "backslashreplace").decode())
        return cond

    def eq(self, got, want, name):
        return self.ok(got == want, name, "got:  %r\nwant: %r" % (got, want))

    def note(self, text):
        """A TAP comment line (a measurement, not a result)."""
        self._emit("# " + text.encode("ascii", "backslashreplace").decode())

    def skip(self, name, why):
        self.n += 1
        self._emit("ok %d - %s # SKIP %s" % (self.n, name, why))

    def done(self):
        print("1..%d" % self.n, flush=True)


def clear_of_window_end(window, need):
    """Sleeps into the next counter window when fewer than `need` seconds
    are left of this one. Counters count in fixed windows of `window`
    seconds numbered from the epoch (docs/state.md), so requests that
    straddle a window's end are estimated low (prev x (W - e)/W + cur),
    and a test that counts its own requests must not cross one."""
    left = window - time.time() % window
    if left < need:
        time.sleep(left + 0.2)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=15.0, proc=None):
    """True once 127.0.0.1:port accepts a connection."""
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


class Response:
    def __init__(self, raw):
        self.raw = raw
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            self.headers.setdefault(name.strip().lower().decode("latin-1"),
                                    value.strip().decode("latin-1"))

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return "Response(%r)" % self.raw[:600]


class Conn:
    """A client connection that keeps bytes read past one response."""

    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.pending = b""

    def sendall(self, data):
        self.sock.sendall(data)

    def recv(self, n):
        if self.pending:
            d, self.pending = self.pending[:n], self.pending[n:]
            return d
        return self.sock.recv(n)

    def close(self):
        self.sock.close()


def read_response(sock, head_only=False):
    """Reads one response (Content-Length framing) from a Conn."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = sock.recv(65536)
        if not d:
            return Response(buf) if buf else None
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    want = 0 if head_only or not m else int(m.group(1))
    while len(rest) < want:
        d = sock.recv(65536)
        if not d:
            break
        rest += d
    sock.pending = rest[want:]
    return Response(head + b"\r\n\r\n" + rest[:want])


def dechunk(data):
    """The body of an HTTP/1.1 chunked message body (RFC 9112, 7.1)."""
    out, pos = b"", 0
    while True:
        end = data.index(b"\r\n", pos)
        n = int(data[pos:end].split(b";")[0], 16)
        if n == 0:
            return out
        out += data[end + 2:end + 2 + n]
        pos = end + 2 + n + 2


def raw_exchange(port, data, timeout=5.0, unix=None, half_close=False, source=None):
    """Sends data (then, with half_close, our FIN), reads until the server
    closes (or timeout); returns bytes. source: the local address to
    connect from (any of 127.0.0.0/8), so that a test can be a client other
    than the trusted proxy at 127.0.0.1."""
    if unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(unix)
    else:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                     source_address=(source, 0) if source else None)
    s.settimeout(timeout)
    out = b""
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        s.close()
    return out


def request(port, path="/", ua=None, headers=(), method="GET", unix=None, timeout=10.0, body=None,
            source=None):
    """One request with Connection: close; returns a Response."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % port]
    if ua is not None:
        lines.append("User-Agent: " + ua)
    lines += ["%s: %s" % h for h in headers]
    if body is not None:
        lines += ["Content-Type: application/x-www-form-urlencoded", "Content-Length: %d" % len(body)]
    lines.append("Connection: close")
    raw = raw_exchange(port, ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""), timeout, unix,
                       source=source)
    return Response(raw)


def metrics(port):
    """GET /metrics on an admin port: {"name{labels}": value}."""
    out = {}
    for line in request(port, "/metrics").body.decode().splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.rpartition(" ")
            out[k] = float(v)
    return out


BOT_UA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
BROWSER_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/124.0.0.0 Safari/537.36")


class Backend:
    """The site behind the proxy: answers 200 'backend page PATH'; `seen`
    lists (method, raw target, headers) of every request it got."""

    def __init__(self):
        seen = self.seen = []

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                seen.append((self.command, self.path, dict(self.headers)))
                body = ("backend page %s\n" % self.path).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                got = self.rfile.read(n) if n else b""
                seen.append((self.command, self.path, dict(self.headers)))
                body = ("backend page %s, body %r\n" % (self.path, got.decode("latin-1"))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        class S(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a proxy that drops a connection is the test's business

        self.server = S(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def compile_rules(classifyc, source_root, clf, out):
    subprocess.run([classifyc, "-I", os.path.join(source_root, "stdlib"), clf, "-o", out],
                   check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


class Proc:
    """A background process with its output in a file."""

    def __init__(self, argv, log_path, env=None, cwd=None):
        self.argv = argv
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=env, cwd=cwd)

    @property
    def pid(self):
        return self.p.pid

    def signal(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, sig=_signal.SIGTERM, timeout=15):
        rc = self.p.poll()
        if rc is None:
            self.p.send_signal(sig)
            rc = self.wait(timeout)
            if rc is None:
                self.p.kill()
                rc = self.p.wait()
        self.log.close()
        return rc

    def output(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def start_serve(serve, args, tmp, name="serve", admin_port=None):
    """Starts classify-serve; waits for its admin /healthz (or a port)."""
    p = Proc([serve] + args, os.path.join(tmp, name + ".log"))
    if admin_port is not None and not wait_port(admin_port, proc=p.p):
        p.stop()
        raise RuntimeError("classify-serve did not start:\n" + p.output())
    return p


def read_recipe(source_root, name):
    with open(os.path.join(source_root, "tests", "serve", "recipes", name)) as f:
        return f.read()


def substitute(text, mapping):
    for k, v in mapping.items():
        text = text.replace(k, v)
    return text
