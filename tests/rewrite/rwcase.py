"""rwcase: drives build/tests/rewrite/rwtool (its line protocol is
described in rwtool.c) for the rewrite tests, and the chunkings they use."""

import subprocess


def hx(b):
    return b.hex() if b else "-"


class Rule:
    """A rule: kind 'lit' or 're', flags a string of 'i', 's', 'm', 'o'
    (once)."""

    def __init__(self, kind, pattern, template, flags=""):
        self.kind = kind
        self.pattern = pattern if isinstance(pattern, bytes) else pattern.encode("latin-1")
        self.template = template if isinstance(template, bytes) else template.encode("latin-1")
        self.flags = flags

    def __repr__(self):
        return "%s(%r=>%r,%s)" % (self.kind, self.pattern, self.template, self.flags)


def lit(p, t, flags=""):
    return Rule("lit", p, t, flags)


def rx(p, t, flags=""):
    return Rule("re", p, t, flags)


class Built:
    def __init__(self, ok, holdback=0, diags=None, error=None):
        self.ok, self.holdback, self.diags, self.error = ok, holdback, diags or [], error


class Result:
    def __init__(self, line):
        parts = line.split()
        self.error = None
        if parts[0] == "error":
            self.error = " ".join(parts[1:])
            self.out = None
            return
        self.out = bytes.fromhex(parts[1]) if parts[1] != "-" else b""
        kv = dict(p.split("=") for p in parts[2:])
        self.held = int(kv["held"])
        self.bound = int(kv["bound"])
        self.rep = int(kv["rep"])
        self.gaveup = int(kv["gaveup"])
        self.dfa = int(kv.get("dfa", 0))
        self.captures = int(kv.get("cap", 0))
        self.rescans = int(kv.get("rescans", 0))
        self.capfail = int(kv.get("capfail", 0))


class Tool:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)

    def _send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def _recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("rwtool exited (status %s)" % self.p.poll())
        return line.rstrip("\n")

    def build(self, mode, L, rules):
        self._send("set %s %d" % (mode, L))
        for r in rules:
            self._send("rule %s %s %s %s" % (r.kind, r.flags or "-", hx(r.pattern), hx(r.template)))
        self._send("build")
        line = self._recv()
        if line.startswith("ok"):
            return Built(True, int(line.split()[1]))
        if line.startswith("rules"):
            n = int(line.split()[1])
            diags = []
            for _ in range(n):
                d = self._recv().split(" ", 5)
                diags.append({"rule": int(d[1]), "where": d[2], "offset": int(d[3]),
                              "code": d[4], "message": d[5]})
            return Built(False, diags=diags)
        return Built(False, error=line)

    def roundtrip(self):
        self._send("roundtrip")
        return self._recv()

    def input(self, data):
        self._send("input %s" % hx(data))

    def run(self, chunks=None, final=False):
        """chunks: None (one chunk) or a list of lengths (0 = empty chunk);
        the rest of the input goes in a last chunk. final: that last chunk
        goes with rw_stream_feed_final."""
        self._send("%s %s" % ("runf" if final else "run",
                              "-" if chunks is None else ",".join(map(str, chunks)) or "-"))
        return Result(self._recv())

    def ref(self):
        self._send("ref")
        line = self._recv()
        if line == "ref error":
            return None
        h = line.split()[1]
        return b"" if h == "-" else bytes.fromhex(h)

    def end(self):
        self._send("end")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def chunkings(data, two_way=True, single=True):
    """The chunkings every case is run with: one chunk, every 2-way split,
    1-byte chunks, and 1-byte chunks with empty chunks between."""
    n = len(data)
    yield "whole", None
    if two_way:
        for k in range(0, n + 1):
            yield "split@%d" % k, [k]
    if single:
        yield "1-byte", [1] * n
        yield "1-byte+empty", [x for _ in range(n) for x in (0, 1)] + [0]
