#!/usr/bin/env python3
"""The rewrite benchmark compares the same work: its peers' outputs are
the engine's, byte for byte (bench/rewrite/run.py --verify-only).

    test_rewrite_bench_peers.py BUILD_DIR SOURCE_ROOT RWTOOL

1. `bench/rewrite/run.py BUILD_DIR --verify-only --pages 4`: every
   installed peer (nginx sub_filter and subs_filter on loopback, sed -E,
   Python re.sub, Rust regex and aho-corasick when Debian's cargo and
   crates are there) rewrites 4 generated pages with every rule set it can
   express, and each output must equal the engine's (rw-bench
   --write-out). One TAP line per cell; a peer that is not installed, or a
   set it cannot express, is a SKIP with the reason.
2. Why the sets are what they are: on overlapping rules the peers' own
   semantics differ from the engine's leftmost-longest (sed and
   subs_filter apply the rules one after the other, Python's alternation
   takes the first alternative), so the benchmark's sets avoid overlaps;
   the translations of peers.py checked on small cases.
3. The conductor's argument errors: a message, exit status 2, no
   traceback.
4. The memory figures are the process's own: rw-body and test_rw_rss,
   started by a parent that holds 256 MiB, report a peak resident set far
   below it (getrusage's ru_maxrss carried the parent's over exec, which
   hid up to the parent's size of growth from the 1 GiB test).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from rwcase import Tool, lit


class Tap:
    def __init__(self):
        self.lines, self.n = [], 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        self.lines.append("%s %d - %s" % ("ok" if cond else "not ok", self.n, name))
        if not cond and diag:
            self.lines += ["# " + x for x in str(diag).splitlines()[-60:]]
        return cond

    def skip(self, name, why):
        self.n += 1
        self.lines.append("ok %d - %s # SKIP %s" % (self.n, name, why))

    def done(self):
        print("1..%d" % self.n)
        print("\n".join(self.lines))


def verify(t, build, root):
    with tempfile.TemporaryDirectory(prefix="rw-bench-verify-") as out:
        r = subprocess.run([sys.executable, os.path.join(root, "bench", "rewrite", "run.py"), build,
                            "--verify-only", "--pages", "4", "--out-dir", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        if not t.ok(r.returncode == 0, "run.py --verify-only: every peer's output is the engine's",
                    r.stdout):
            return
        with open(os.path.join(out, "verify.json")) as f:
            v = json.load(f)
    for c in v["cells"]:
        name = "%s%s%s on %d pages" % (c["peer"], " " + c["set"] if c["set"] else "",
                                        " (%s)" % c["via"] if "via" in c else "", v["pages"])
        if c["result"] == "identical":
            # a floor row (no rules) must give the pages back unchanged
            t.ok(True, name + (": identical to libclassify" if c["set"] else ": the pages unchanged"))
        else:
            t.skip(name, c["result"])
    ran = {c["peer"] for c in v["cells"] if c["result"] == "identical"}
    t.ok({"sed", "python"} <= ran, "sed and Python (always installed) were compared", sorted(ran))


def semantics(t, root, rwtool):
    sys.path.insert(0, os.path.join(root, "bench", "rewrite"))
    import peers
    rules = [peers.Rule(False, b"ab", b"X"), peers.Rule(False, b"abc", b"Y")]
    tool = Tool(rwtool)
    b = tool.build("srw", 8192, [lit("ab", "X"), lit("abc", "Y")])
    tool.input(b"abcab")
    engine = tool.run().out if b.ok else None
    tool.end()
    tool.close()
    t.ok(engine == b"YX", "the engine: leftmost-longest on ab, abc over abcab", engine)
    rx, rep = peers.python_rx(rules)
    t.ok(rx.sub(rep, b"abcab") == b"XcX", "Python's alternation: the first alternative (XcX)")
    with tempfile.NamedTemporaryFile("wb", suffix=".sed") as f:
        f.write(peers.sed_script([peers.Rule(False, b"a", b"b"), peers.Rule(False, b"b", b"c")]))
        f.flush()
        out = subprocess.run(["sed", "-E", "-f", f.name], input=b"ab\n", stdout=subprocess.PIPE,
                             env=dict(os.environ, LC_ALL="C")).stdout
    t.ok(out == b"cc\n", "sed: each rule rewrites the previous rule's output (a->b, b->c on ab)", out)

    t.ok(peers.ere_regex(rb"UA-\d+[\d]x\.y\(") == rb"UA-[0-9]+[0-9]x\.y\(", "ERE: \\d, in a class too")
    for bad in (rb"a+?", rb"(?:a)", rb"\w"):
        try:
            peers.ere_regex(bad)
            t.ok(False, "ERE: %r refused" % bad)
        except peers.NotExpressible:
            t.ok(True, "ERE: %r refused" % bad)
    t.ok(peers.nginx_quote(b'a"b\\d') == '"a\\"b\\\\d"', "nginx quoting of \" and \\")
    t.ok(peers.parse_template(b"x$1${12}$$$0") == [b"x", 1, 12, b"$", 0], "templates: $N ${N} $$")
    lines = peers.nginx_subs_filter([peers.Rule(True, rb"s-(\d+)", b"m-$1")])
    t.ok(lines == ['subs_filter "s-(\\\\d+)" "m-$1" gr;'], "subs_filter line for a regex with $1", lines)
    for rules_, why in (([peers.Rule(True, b"a", b"b")], "with a regex"),
                        ([peers.Rule(False, b"a%d" % i, b"b") for i in range(256)], "256 strings")):
        try:
            peers.nginx_sub_filter(rules_)
            t.ok(False, "sub_filter refuses a set %s" % why)
        except peers.NotExpressible:
            t.ok(True, "sub_filter refuses a set %s" % why)
    plan = peers.plan_text([peers.Rule(True, rb"(a)b", b"<$1>")]).splitlines()
    t.ok(plan == ["rwplan 1 1", "re\t%s\t=3c,$1,=3e" % rb"(a)b".hex()], "the Rust plan format", plan)


def bad_args(t, build, root):
    run_py = os.path.join(root, "bench", "rewrite", "run.py")
    for args, want in ((["--pages", "0"], "--pages must be"), (["--sets", "lit:x"], "is not a rule set"),
                       (["--peers", "perl"], "unknown peer"), (["--memory-sizes", "1Q"], "is not a size"),
                       (["--memory-sizes", "1G,1K"], "increasing order")):
        r = subprocess.run([sys.executable, run_py, build] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        t.ok(r.returncode == 2 and want in r.stderr and "Traceback" not in r.stderr,
             "run.py %s: exit 2, %r" % (" ".join(args), want), r.stderr)
    missing = os.path.join(tempfile.gettempdir(), "no-such-build-dir-for-rw-bench")
    r = subprocess.run([sys.executable, run_py, missing], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    t.ok(r.returncode == 2 and "not built" in r.stderr and not os.path.exists(missing),
         "run.py on a missing build directory: exit 2, nothing made", r.stderr)
    shutil.rmtree(missing, ignore_errors=True)


def own_rss(t, build):
    """Each child's peak RSS figure, started with and without 256 MiB held
    by this process: the two must agree (before the fix, test_rw_rss read
    about 30 MB and 277 MB). Under a sanitizer a child's own shadow memory
    is larger than both, so the figures agree there either way."""
    def figures():
        r = subprocess.run([os.path.join(build, "bench", "rewrite", "rw-body"), "--set", "lit:100",
                            "--bytes", str(1 << 20), "--minified"], stdout=subprocess.PIPE, text=True)
        body = json.loads(r.stdout)["max_rss_kib"] if r.returncode == 0 else None
        r = subprocess.run([os.path.join(build, "tests", "rewrite", "test_rw_rss"), str(32 << 20)],
                           stdout=subprocess.PIPE, text=True)
        m = re.search(r"max RSS (\d+) KiB after 16 MiB, (\d+) KiB at the end", r.stdout)
        return body, int(m.group(2)) if r.returncode == 0 and m else None
    alone = figures()
    ballast = b"\x01" * (256 << 20)  # touched: resident in this process
    held = figures()
    del ballast
    for name, a, b in (("rw-body", alone[0], held[0]), ("test_rw_rss", alone[1], held[1])):
        t.ok(a is not None and b is not None and abs(a - b) < 16 << 10,
             "%s's peak RSS is its own: %s KiB, and %s KiB while its parent holds 256 MiB" % (name, a, b))


def main():
    build, root, rwtool = sys.argv[1:4]
    t = Tap()
    verify(t, os.path.abspath(build), root)
    semantics(t, root, rwtool)
    bad_args(t, build, root)
    own_rss(t, build)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
