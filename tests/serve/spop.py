"""SPOP frames for the tests: what HAProxy sends an agent and how to read
what the agent answers (HAProxy's doc/SPOE.txt, section 3), written from
the specification rather than from serve/spop_*.c, so that the tests check
the C codec against an independent reading of it."""

import socket
import struct

HAPROXY_HELLO, HAPROXY_DISCONNECT, NOTIFY = 1, 2, 3
AGENT_HELLO, AGENT_DISCONNECT, ACK = 101, 102, 103
FIN, ABORT = 1, 2
T_NULL, T_BOOL, T_INT32, T_UINT32, T_INT64, T_UINT64, T_IPV4, T_IPV6, T_STR, T_BIN = range(10)


def varint(v):
    if v < 240:
        return bytes([v])
    out = [(v & 0xFF) | 240]
    v = (v - 240) >> 4
    while v >= 128:
        out.append((v & 0xFF) | 128)
        v = (v - 128) >> 7
    out.append(v)
    return bytes(out)


def read_varint(b, i):
    v = b[i]
    i += 1
    if v < 240:
        return v, i
    shift = 4
    while True:
        c = b[i]
        i += 1
        v += c << shift
        shift += 7
        if c < 128:
            return v, i


def string(s):
    if isinstance(s, str):
        s = s.encode()
    return varint(len(s)) + s


def typed(v):
    """A Python value as typed data: None, bool, int (UINT32), str (STR),
    bytes (BIN), or a (type, raw bytes) pair."""
    if v is None:
        return bytes([T_NULL])
    if isinstance(v, bool):
        return bytes([T_BOOL | (0x10 if v else 0)])
    if isinstance(v, int):
        return bytes([T_UINT32]) + varint(v)
    if isinstance(v, str):
        return bytes([T_STR]) + string(v)
    if isinstance(v, bytes):
        return bytes([T_BIN]) + string(v)
    t, raw = v
    return bytes([t]) + raw


def ipv4(addr):
    return (T_IPV4, socket.inet_aton(addr))


def kvlist(items):
    return b"".join(string(k) + typed(v) for k, v in items)


def frame(ftype, payload=b"", flags=FIN, sid=0, fid=0):
    body = bytes([ftype]) + struct.pack(">I", flags) + varint(sid) + varint(fid) + payload
    return struct.pack(">I", len(body)) + body


def hello(max_frame=16380, caps="pipelining,async", versions="2.0", healthcheck=None, extra=()):
    items = []
    if versions is not None:
        items.append(("supported-versions", versions))
    if max_frame is not None:
        items.append(("max-frame-size", max_frame))
    if caps is not None:
        items.append(("capabilities", caps))
    if healthcheck is not None:
        items.append(("healthcheck", healthcheck))
    items += list(extra)
    items.append(("engine-id", "4F2A1C0E-TEST"))
    return frame(HAPROXY_HELLO, kvlist(items))


def hdrs_bin(headers):
    """req.hdrs_bin: name, value pairs, then two empty strings."""
    return b"".join(string(k) + string(v) for k, v in headers) + b"\x00\x00"


def notify(sid, fid, args, message="classify", flags=FIN):
    """args: [(name, value)] as typed() takes them."""
    payload = string(message) + bytes([len(args)]) + kvlist(args)
    return frame(NOTIFY, payload, flags=flags, sid=sid, fid=fid)


def request_args(method="GET", path="/", query=None, headers=(), src="192.0.2.10"):
    return [("method", method), ("path", path), ("query", query),
            ("headers", hdrs_bin(headers)), ("src", ipv4(src) if src else None)]


def parse(body):
    """A frame (without its length): (type, flags, sid, fid, payload)."""
    ftype = body[0]
    flags = struct.unpack(">I", body[1:5])[0]
    sid, i = read_varint(body, 5)
    fid, i = read_varint(body, i)
    return ftype, flags, sid, fid, body[i:]


def read_typed(b, i):
    t = b[i] & 0x0F
    i += 1
    if t == T_NULL:
        return None, i
    if t == T_BOOL:
        return bool(b[i - 1] & 0x10), i
    if t in (T_INT32, T_UINT32, T_INT64, T_UINT64):
        return read_varint(b, i)
    if t == T_IPV4:
        return socket.inet_ntoa(b[i:i + 4]), i + 4
    if t == T_IPV6:
        return socket.inet_ntop(socket.AF_INET6, b[i:i + 16]), i + 16
    n, i = read_varint(b, i)
    v = b[i:i + n]
    return (v.decode("latin-1") if t == T_STR else v), i + n


def read_kvlist(b):
    out, i = {}, 0
    while i < len(b):
        n, i = read_varint(b, i)
        k = b[i:i + n].decode()
        i += n
        out[k], i = read_typed(b, i)
    return out


def read_actions(b):
    """ACK payload: [(scope, name, value)] of its set-var actions."""
    out, i = [], 0
    while i < len(b):
        action, nargs = b[i], b[i + 1]
        i += 2
        assert action == 1 and nargs == 3, (action, nargs)
        scope = b[i]
        n, i = read_varint(b, i + 1)
        name = b[i:i + n].decode()
        v, i = read_typed(b, i + n)
        out.append((scope, name, v))
    return out


class Agent:
    """A raw connection to an SPOA listener, playing HAProxy."""

    def __init__(self, port, timeout=5.0, rcvbuf=None):
        """rcvbuf: a small receive buffer (set before connecting, so that
        the window is small too), for a test of the agent's back-pressure."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_frame(self):
        """The next frame as parse() gives it, or None at EOF."""
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    body, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    return parse(body)
            try:
                d = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                d = b""
            if not d:
                return None
            self.buf += d

    def handshake(self, **kw):
        self.send(hello(**kw))
        f = self.read_frame()
        assert f is not None and f[0] == AGENT_HELLO, f
        return read_kvlist(f[4])

    def eof(self):
        """True when the agent closes (after whatever it still sends)."""
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    return True
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self):
        self.sock.close()
