#!/usr/bin/env python3
"""bench/rewrite/run.py: the rewrite engine against its peers, in one run
(bench/rewrite/README.md, docs/performance.md "Rewriting"). Figures, not a
test: it exits 1 only when a peer's output differs from the engine's, or
something cannot be built or run.

    python3 bench/rewrite/run.py BUILD_DIR [--pages N] [--rounds R] [--seconds S]
        [--peer-seconds S] [--sets LIST] [--peers LIST] [--no-memory]
        [--memory-sizes LIST] [--subs-memory-sizes LIST] [--no-pin]
        [--out-dir DIR] [--verify-only]

 1. the pages (`rw-pagegen pages`, seed 20240611) and the rule sets
    (`rw-pagegen rules`): lit:1 lit:10 lit:100 lit:1000 re:10 re:100;
 2. the peers that can express each set (peers.py says why not):
    libclassify's engine (rw-bench), nginx sub_filter and subs_filter
    (nginx_peer.py), `sed -E`, Python re.sub (peer_re.py), Rust regex and
    aho-corasick (rust/, built offline from Debian's crates);
 3. verification: every peer rewrites every page, and each output must be
    byte-identical to the engine's (rw-bench --write-out); the run stops
    at the first difference (--verify-only stops after this step: the
    test suite runs it on a few pages, tests/rewrite);
 4. R rounds; in each, the engine (rw-bench, all sets), every peer cell
    and every nginx row once, in the same order, each pinned to one CPU;
 5. memory per stream: rw-body on one generated body of each size (1 KiB
    to 1 GiB, never on disk), and subs_filter's worker on the same
    minified body as it grows;
 6. the table, the targets (MET or MISSED), the plot; OUT/results.md,
    OUT/results.json, OUT/rewrite-memory.svg, written atomically.

OUT is BUILD_DIR/bench/rewrite unless --out-dir.
"""

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
from benchcommon import (DEBIAN_RUSTC, PeerBuildError, WriteError, cargo_build, check_writable,  # noqa: E402
                         pick_cpu, rust_missing, show, tool_version, write_atomic)
import peers  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_run", os.path.join(ROOT, "bench", "run.py"))
bench_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_run)

SETS = ["lit:1", "lit:10", "lit:100", "lit:1000", "re:10", "re:100"]
PEERS = ["sub_filter", "subs_filter", "sed", "python", "rust-regex", "rust-aho"]
PEER_LABEL = {
    "libclassify": "libclassify (rw_stream, 16 KiB chunks)",
    "sub_filter": "nginx sub_filter",
    "subs_filter": "nginx subs_filter",
    "sed": "sed -E",
    "python": "Python re.sub",
    "rust-regex": "Rust regex",
    "rust-aho": "Rust aho-corasick",
}
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
MEMORY_SIZES = [KIB, MIB, 100 * MIB, GIB]
SUBS_MEMORY_SIZES = [KIB, MIB, 10 * MIB, 100 * MIB]
MEMORY_SETS = ["lit:100", "re:100"]
TARGET_SET = "lit:100"
T_MBPS = 1000.0       # >= 1 GB/s per core with 100 literal rules
T_VS_SUBS = 10.0      # >= 10x subs_filter on the same rules
T_FLAT_KIB = 1024     # max RSS grows by at most 1 MiB from 1 KiB to 1 GiB
PASS_SECONDS = 0.25   # in-process peers repeat passes this long per round
ENGINE_ROUNDS = 7     # rw-bench --rounds per round: the median of 7 passes


def say(msg=""):
    print("rewrite-bench: %s" % msg if msg else "", flush=True)


def fail(msg, code=2):
    sys.stderr.write("rewrite-bench: %s\n" % msg)
    sys.exit(code)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip()
        fail("%s failed (exit %d):\n%s" % (" ".join(cmd[:6]) + (" ..." if len(cmd) > 6 else ""),
                                           r.returncode, err[-3000:]), 1)
    return r.stdout


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def size_list(text, opt):
    """'1K,1M,100M,1G' -> bytes (K, M, G are powers of 1024)."""
    out = []
    for tok in text.split(","):
        t = tok.strip().upper().rstrip("B").rstrip("I")
        mul = {"K": KIB, "M": MIB, "G": GIB}.get(t[-1:], 1)
        num = t[:-1] if t[-1:] in "KMG" else t
        if not num.isdigit() or int(num) == 0:
            fail("%s: %r is not a size (a number with K, M or G, above 0)" % (opt, tok))
        out.append(int(num) * mul)
    if out != sorted(out):
        fail("%s: give the sizes in increasing order" % opt)
    return out


def fmt_size(n):
    for unit, k in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= k and n % k == 0:
            return "%d %s" % (n // k, unit)
    return "%d B" % n


def fmt_mbps(x):
    if x is None:
        return "-"
    return "{:,.0f}".format(x) if x >= 100 else ("%.1f" % x if x >= 1 else "%.2f" % x)


def first_diff(a, b):
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    return i


# ---------------------------------------------------------------- peers

class Cell:
    """One peer on one rule set: what it runs, or why it cannot."""

    def __init__(self, peer, set_name, na=None):
        self.peer, self.set, self.na = peer, set_name, na
        self.verify_secs = None
        self.pages = None      # the pages timed (a prefix of all)
        self.secs = []         # per round


class Conductor:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build_dir)
        self.out = os.path.abspath(a.out_dir or os.path.join(self.build, "bench", "rewrite"))
        self.tool = {t: os.path.join(self.build, "bench", "rewrite", t)
                     for t in ("rw-bench", "rw-pagegen", "rw-body")}
        for p in self.tool.values():
            if not os.access(p, os.X_OK):
                fail("%s not built (./run.sh bench rewrite, or ninja -C %s)" % (p, a.build_dir))
        try:
            os.makedirs(self.out, exist_ok=True)
        except OSError as e:
            fail("%s: cannot make the output directory: %s" % (self.out, e.strerror or e))
        try:
            for f in ("results.md", "results.json", "rewrite-memory.svg"):
                check_writable(os.path.join(self.out, f))
        except WriteError as e:
            fail(str(e))
        self.tmp = tempfile.mkdtemp(prefix="classify-rewrite-bench-")
        os.chmod(self.tmp, 0o755)  # nginx's worker (nobody) reads the pages
        self.pages_dir = self.p("pages")
        self.nginx = None
        self.missing = {}      # peer -> why it is not run
        if a.no_pin:
            self.cpu, self.pinned = None, "not pinned (--no-pin)"
        else:
            self.cpu, self.pinned = pick_cpu()

    def p(self, *parts):
        return os.path.join(self.tmp, *parts)

    def pin(self, cmd):
        return ["taskset", "-c", str(self.cpu)] + cmd if self.cpu is not None else cmd

    # -- inputs

    def make_inputs(self):
        a = self.a
        os.makedirs(self.pages_dir)
        run([self.tool["rw-pagegen"], "pages", self.pages_dir, "--pages", str(a.pages)])
        self.names = sorted(os.listdir(self.pages_dir))
        self.page_bytes = {n: os.path.getsize(os.path.join(self.pages_dir, n)) for n in self.names}
        self.mean_bytes = sum(self.page_bytes.values()) / len(self.names)
        self.rules, self.tsv = {}, {}
        for s in self.sets:
            kind, n = s.split(":")
            self.tsv[s] = self.p("rules-%s-%s.tsv" % (kind, n))
            with open(self.tsv[s], "wb") as f:
                f.write(run([self.tool["rw-pagegen"], "rules", kind, n]))
            self.rules[s] = peers.read_rules(self.tsv[s])
        os.makedirs(self.p("ref"))
        cmd = [self.tool["rw-bench"], "--pages", str(a.pages), "--write-out", self.p("ref")]
        for s in self.sets:
            cmd += ["--set", s]
        run(cmd)
        say("%d pages (%.1f MB, %.0f bytes on average; %d minified), rule sets %s"
            % (len(self.names), sum(self.page_bytes.values()) / 1e6, self.mean_bytes,
               sum(1 for n in self.names if b"\n" not in self.read_page(n)), " ".join(self.sets)))

    def read_page(self, name):
        with open(os.path.join(self.pages_dir, name), "rb") as f:
            return f.read()

    def ref(self, s, name):
        with open(self.p("ref", s.replace(":", "-"), name), "rb") as f:
            return f.read()

    # -- which peers run

    def find_peers(self):
        have_nginx = shutil.which("nginx") is not None
        if not have_nginx:
            for pr in ("sub_filter", "subs_filter"):
                self.missing[pr] = "nginx is not installed"
        else:
            v = subprocess.run(["nginx", "-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True).stdout
            self.nginx_version = v.splitlines()[0].split("/")[-1] if v else "?"
            if "--with-http_sub_module" not in v:
                self.missing["sub_filter"] = "this nginx is built without ngx_http_sub_module"
            if not os.path.exists(nginx_peer().SUBS_MODULE):
                self.missing["subs_filter"] = ("libnginx-mod-http-subs-filter is not installed "
                                               "(./run.sh bench installs it)")
            if shutil.which("prlimit") is None:
                for pr in ("sub_filter", "subs_filter"):
                    self.missing.setdefault(pr, "prlimit (util-linux) is not installed")
        if not self.a.verify_only and shutil.which("wrk") is None:
            for pr in ("sub_filter", "subs_filter"):
                self.missing.setdefault(pr, "wrk is not installed (./run.sh bench installs it)")
        sed = subprocess.run(["sed", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True) if shutil.which("sed") else None
        if not sed or "GNU sed" not in sed.stdout:
            self.missing["sed"] = "GNU sed is not installed"
        else:
            self.sed_version = sed.stdout.splitlines()[0]
        self.rust_bin = None
        why = rust_missing()
        if why:
            self.missing["rust-regex"] = self.missing["rust-aho"] = why
        else:
            self.rust_bin = self.build_rust()
        for pr in self.peers:
            if pr in self.missing:
                say("%s: not run: %s" % (pr, self.missing[pr]))

    def build_rust(self):
        """bench/rewrite/rust, built offline with Debian's cargo and crates
        (benchcommon.cargo_build) in the build directory."""
        t0 = time.monotonic()
        try:
            exe = cargo_build(os.path.join(HERE, "rust"),
                              ("Cargo.toml", os.path.join(".cargo", "config.toml"),
                               os.path.join("src", "main.rs")),
                              os.path.join(self.build, "bench", "rewrite", "rust"), "rw-peer-rust",
                              "the Rust peer")
        except PeerBuildError as e:
            fail(str(e), 1)
        if time.monotonic() - t0 > 2:
            say("built the Rust peer with %s (%.0f s)" % (self.rust_version(), time.monotonic() - t0))
        return exe

    def rust_version(self):
        return tool_version([DEBIAN_RUSTC, "--version"])

    # -- cells

    def make_cells(self):
        self.cells = []
        for s in self.sets:
            rules = self.rules[s]
            for pr in self.peers:
                na = self.missing.get(pr)
                try:
                    if pr == "sub_filter":
                        peers.nginx_sub_filter(rules)
                    elif pr == "subs_filter":
                        peers.nginx_subs_filter(rules)
                    elif pr == "sed":
                        with open(self.p("sed-%s.sed" % s.replace(":", "-")), "wb") as f:
                            f.write(peers.sed_script(rules))
                    elif pr == "python":
                        peers.python_rx(rules)
                    elif pr.startswith("rust"):
                        if pr == "rust-aho" and any(r.regex for r in rules):
                            raise peers.NotExpressible("aho-corasick: literals only")
                        with open(self.p("plan-%s.rwplan" % s.replace(":", "-")), "w") as f:
                            f.write(peers.plan_text(rules))
                except peers.NotExpressible as e:
                    na = na or str(e)
                self.cells.append(Cell(pr, s, na))

    def nginx_rows(self):
        """The floors, then one row per nginx cell that runs; with the
        proxied variant of the floor and of each peer on TARGET_SET."""
        np = nginx_peer()
        rows = []
        nginx_cells = [c for c in self.cells if c.peer in ("sub_filter", "subs_filter") and not c.na]
        if not nginx_cells:
            return rows
        rows.append(np.Row("nginx, no filter", None, None, sendfile=True))
        rows.append(np.Row("nginx, no filter", None, None))
        for c in nginx_cells:
            f = (peers.nginx_sub_filter if c.peer == "sub_filter" else peers.nginx_subs_filter)(self.rules[c.set])
            rows.append(np.Row(c.peer, c.set, f))
            c.row = rows[-1]
        if not self.a.no_proxied:
            rows.append(np.Row("nginx, no filter", None, None, proxied=True))
            for c in nginx_cells:
                if c.set == TARGET_SET:
                    rows.append(np.Row(c.peer, c.set, c.row.filters, proxied=True))
                    c.proxied_row = rows[-1]
        return rows

    # -- verification

    def peer_outputs(self, c, names, out_dir):
        """Runs the cell's peer over `names`; the outputs into out_dir."""
        pages = [os.path.join(self.pages_dir, n) for n in names]
        tag = c.set.replace(":", "-")
        if c.peer == "python":
            run([sys.executable, os.path.join(HERE, "peer_re.py"), self.tsv[c.set], "--write-out", out_dir] + pages)
        elif c.peer.startswith("rust"):
            run([self.rust_bin, c.peer.split("-")[1], self.p("plan-%s.rwplan" % tag), "--write-out", out_dir]
                + pages)
        elif c.peer == "sed":
            for n, pg in zip(names, pages):
                with open(os.path.join(out_dir, n), "wb") as f:
                    f.write(run(["sed", "-E", "-f", self.p("sed-%s.sed" % tag), pg], env=sed_env()))
        else:
            raise AssertionError(c.peer)

    def check(self, what, got, want_of):
        """got: name -> bytes; want_of(name) -> bytes. Stops the run at
        the first page that differs, keeping both files in OUT/mismatch."""
        for n in self.names:
            want = want_of(n)
            if got[n] == want:
                continue
            d = os.path.join(self.out, "mismatch")
            os.makedirs(d, exist_ok=True)
            stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in what)
            for suffix, data in (("libclassify", want), ("peer", got[n])):
                with open(os.path.join(d, "%s-%s.%s" % (stem, n, suffix)), "wb") as f:
                    f.write(data)
            i = first_diff(got[n], want)
            fail("%s: the output of %s differs from libclassify's at byte %d of %d (peer: %d bytes):\n"
                 "  libclassify: %r\n  peer:        %r\nboth kept in %s"
                 % (what, n, i, len(want), len(got[n]), want[max(0, i - 40):i + 40],
                    got[n][max(0, i - 40):i + 40], show(d)), 1)

    def verify(self):
        say("verifying: every peer rewrites the %d pages; each output must be libclassify's, byte for byte"
            % len(self.names))
        results = []
        for c in self.cells:
            if c.na or c.peer in ("sub_filter", "subs_filter"):
                continue
            d = self.p("out", c.peer, c.set.replace(":", "-"))
            os.makedirs(d)
            t0 = time.perf_counter()
            self.peer_outputs(c, self.names, d)
            c.verify_secs = time.perf_counter() - t0
            got = {}
            for n in self.names:
                with open(os.path.join(d, n), "rb") as f:
                    got[n] = f.read()
            self.check("%s %s" % (c.peer, c.set), got, lambda n, s=c.set: self.ref(s, n))
            say("  %-12s %-8s identical on %d pages (%.1f s)" % (c.peer, c.set, len(self.names), c.verify_secs))
            results.append({"peer": c.peer, "set": c.set, "result": "identical"})
        self.rows = self.nginx_rows()
        if self.rows:
            np = nginx_peer()
            self.nginx = np.Nginx(self.build, self.p("nginx"), self.pages_dir, self.names, self.a.no_pin, self.a.nginx_vm_limit)
            self.nginx.start_rows(self.rows)
            for r in self.rows:
                t0 = time.perf_counter()
                got = self.nginx.fetch_all(r, self.names)
                secs = time.perf_counter() - t0
                if r.is_floor:
                    self.check(r.name, got, self.read_page)
                else:
                    self.check(r.name, got, lambda n, s=r.set: self.ref(s, n))
                say("  %-40s identical on %d pages (%.1f s)" % (r.name, len(self.names), secs))
                results.append({"peer": r.peer, "set": r.set, "via": r.via, "result": "identical"})
        for c in self.cells:
            if c.na:
                results.append({"peer": c.peer, "set": c.set, "result": "n/a: " + c.na})
        return results

    # -- timing

    def plan_timing(self):
        """The pages each cell is timed on: all of them, or for a peer
        that takes longer than --peer-seconds per pass (measured in the
        verification), the first k pages that fit."""
        n = len(self.names)
        for c in self.cells:
            if c.na or c.verify_secs is None:
                continue
            k = n if c.verify_secs <= self.a.peer_seconds else max(1, int(n * self.a.peer_seconds / c.verify_secs))
            c.pages = self.names[:k]

    def time_cell(self, c):
        """A pass over the cell's pages: wall seconds. In-process peers
        repeat passes for PASS_SECONDS (at least two: the first is a
        warm-up) and give the median of the others; sed is one process,
        its start and its reading included."""
        pages = [os.path.join(self.pages_dir, n) for n in c.pages]
        tag = c.set.replace(":", "-")
        if c.peer == "sed":
            t0 = time.perf_counter()
            r = subprocess.run(self.pin(["sed", "-s", "-E", "-f", self.p("sed-%s.sed" % tag)] + pages),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=sed_env())
            secs = time.perf_counter() - t0
            if r.returncode:
                fail("sed failed: %s" % r.stderr.decode("utf-8", "replace"), 1)
            return secs
        if c.peer == "python":
            cmd = [sys.executable, os.path.join(HERE, "peer_re.py"), self.tsv[c.set]]
        else:
            cmd = [self.rust_bin, c.peer.split("-")[1], self.p("plan-%s.rwplan" % tag)]
        j = json.loads(run(self.pin(cmd + ["--time", str(PASS_SECONDS)] + pages)))
        return statistics.median(j["secs"][1:])

    def time_rounds(self):
        a = self.a
        self.engine = {s: [] for s in self.sets}
        self.nginx_runs = {r.name: [] for r in self.rows}
        timed = [c for c in self.cells if c.pages]
        say("timing: %d rounds; %s; nginx rows %d s each with wrk -t1 -c%d" % (
            a.rounds, self.pinned, a.seconds, nginx_peer().CONNS))
        for r in self.rows:  # warm-up: one second of wrk on each row, not counted
            self.nginx.wrk(r, 1, self.mean_bytes)
        for rnd in range(a.rounds):
            jf = self.p("engine-%d.json" % rnd)
            cmd = [self.tool["rw-bench"], "--pages", str(a.pages), "--rounds", str(ENGINE_ROUNDS), "--json", jf]
            for s in self.sets:
                cmd += ["--set", s]
            run(self.pin(cmd))
            with open(jf) as f:
                for x in json.load(f)["sets"]:
                    self.engine[x["set"]].append(x)
            for c in timed:
                c.secs.append(self.time_cell(c))
            for r in self.rows:
                x = self.nginx.wrk(r, a.seconds, self.mean_bytes)
                if x["failed"] or not x["requests"]:
                    fail("%s: wrk had %d failed requests of %d%s" % (r.name, x["failed"], x["requests"],
                                                                    "\n" + x["wrk"] if x["wrk"] else ""), 1)
                self.nginx_runs[r.name].append(x)
            say("  round %d of %d done (load average %.2f)" % (rnd + 1, a.rounds, os.getloadavg()[0]))

    # -- memory

    def memory(self):
        a = self.a
        sizes, subs_sizes = a.memory_sizes, a.subs_memory_sizes
        say("memory: rw-body on one minified body of %s, sets %s"
            % (", ".join(fmt_size(n) for n in sizes), " ".join(self.memory_sets)))
        eng = {}
        for s in self.memory_sets:
            eng[s] = []
            for n in sizes:
                x = json.loads(run(self.pin([self.tool["rw-body"], "--set", s, "--bytes", str(n), "--minified"])))
                eng[s].append(x)
                say("  libclassify %-8s %9s: stream %d bytes, held at most %d, max RSS %.1f MiB, %s MB/s"
                    % (s, fmt_size(n), x["stream_bytes"], x["max_held"], x["max_rss_kib"] / 1024.0,
                       fmt_mbps(x["mbps"])))
        subs = {"set": TARGET_SET, "rows": [], "na": None}
        cell = next((c for c in self.cells if c.peer == "subs_filter" and c.set == TARGET_SET), None)
        if cell is None or cell.na:
            subs["na"] = cell.na if cell else "subs_filter not in --peers or %s not in --sets" % TARGET_SET
        elif subs_sizes:
            blob = self.minified_blob()
            want = {x["bytes"]: x["out_bytes"] for x in eng.get(TARGET_SET, [])}
            for n in subs_sizes:
                if n not in want:
                    want[n] = json.loads(run([self.tool["rw-body"], "--set", TARGET_SET, "--bytes", str(n),
                                              "--minified"]))["out_bytes"]
            say("memory: subs_filter %s on the same body: %s" % (TARGET_SET, ", ".join(fmt_size(n) for n in subs_sizes)))
            rows = nginx_peer().subs_memory(self.nginx, self.rules_filters(TARGET_SET), blob, subs_sizes,
                                            a.subs_timeout)
            for x in rows:
                if not x["error"] and x["out_bytes"] != want[x["bytes"]]:
                    fail("subs_filter on the %s body wrote %d bytes, libclassify %d: not the same work"
                         % (fmt_size(x["bytes"]), x["out_bytes"], want[x["bytes"]]), 1)
                say("  subs_filter %-8s %9s: worker peak RSS %.1f MiB (%.1f before), %.1f s%s"
                    % (TARGET_SET, fmt_size(x["bytes"]), x["worker_max_rss_kib"] / 1024.0,
                       x["worker_rss_before_kib"] / 1024.0, x["secs"],
                       ", " + x["error"] if x["error"] else ""))
            subs["rows"] = rows
        return {"sizes": sizes, "engine": eng, "subs_filter": subs}

    def rules_filters(self, s):
        return peers.nginx_subs_filter(self.rules[s])

    def minified_blob(self):
        """The minified pages among the first 64, in order: rw-body --minified's body."""
        d = self.p("pages64")
        os.makedirs(d, exist_ok=True)
        run([self.tool["rw-pagegen"], "pages", d, "--pages", "64"])
        blob = b""
        for n in sorted(os.listdir(d)):
            with open(os.path.join(d, n), "rb") as f:
                page = f.read()
            if b"\n" not in page:
                blob += page
        return blob

    def stop(self):
        if self.nginx:
            self.nginx.stop_all()
        shutil.rmtree(self.tmp, ignore_errors=True)


def sed_env():
    return dict(os.environ, LC_ALL="C")


_nginx_peer = None


def nginx_peer():
    global _nginx_peer
    if _nginx_peer is None:
        import nginx_peer as m
        _nginx_peer = m
    return _nginx_peer


# --------------------------------------------------------------- report

def summarize(cd):
    """Medians per cell and per nginx row; the filter's own cost per round
    against the floor row of the same transport in the same round."""
    S = {"engine": {}, "cells": {}, "nginx": {}}
    for s, xs in cd.engine.items():
        m = lambda k: med([x[k] for x in xs])  # noqa: E731
        S["engine"][s] = {"mbps": m("mbps"), "mbps_min": min(x["mbps"] for x in xs),
                          "mbps_max": max(x["mbps"] for x in xs), "hs_floor_mbps": m("hs_floor_mbps"),
                          "stream_bytes": xs[0]["stream_bytes"], "max_held": max(x["max_held"] for x in xs),
                          "scratch_bytes": xs[0]["scratch_bytes"], "compile_ms": m("compile_ms"),
                          "replacements_per_page": xs[0]["replacements_per_page"]}
    for c in cd.cells:
        key = "%s %s" % (c.peer, c.set)
        if c.na:
            S["cells"][key] = {"peer": c.peer, "set": c.set, "na": c.na}
            continue
        if c.peer in ("sub_filter", "subs_filter"):
            continue
        b = sum(cd.page_bytes[n] for n in c.pages)
        mbps = [b / t / 1e6 for t in c.secs if t > 0]
        S["cells"][key] = {"peer": c.peer, "set": c.set, "mbps": med(mbps), "mbps_min": min(mbps),
                           "mbps_max": max(mbps), "pages": len(c.pages), "bytes": b}
    floors = {}
    for r in cd.rows:
        if r.is_floor:
            floors[(r.proxied, r.sendfile)] = cd.nginx_runs[r.name]
    for r in cd.rows:
        runs = cd.nginx_runs[r.name]
        x = {"peer": r.peer, "set": r.set, "proxied": r.proxied, "sendfile": r.sendfile,
             "body_mbps": med([u["mbps"] for u in runs]),
             "cpu_ms_per_mb": med([u["cpu_s_per_mb"] * 1e3 for u in runs]),
             "requests": sum(u["requests"] for u in runs)}
        x["worker_mbps_per_core"] = 1e3 / x["cpu_ms_per_mb"] if x["cpu_ms_per_mb"] else None
        if not r.is_floor:
            fl = floors.get((r.proxied, False), [])
            own = [u["cpu_s_per_mb"] - f["cpu_s_per_mb"] for u, f in zip(runs, fl)]
            own_ms = med([o * 1e3 for o in own])
            x["filter_cpu_ms_per_mb"] = own_ms
            x["filter_mbps_per_core"] = 1e3 / own_ms if own_ms and own_ms > 0 else None
            if not r.proxied:
                S["cells"]["%s %s" % (r.peer, r.set)] = {
                    "peer": r.peer, "set": r.set, "mbps": x["filter_mbps_per_core"],
                    "worker_mbps_per_core": x["worker_mbps_per_core"], "nginx": r.name}
        S["nginx"][r.name] = x
    return S


def machine_line(cd):
    extra = ["nginx %s" % getattr(cd, "nginx_version", "-"), getattr(cd, "sed_version", "sed -"),
             "Python %s" % platform.python_version()]
    if cd.rust_bin:
        extra.append("%s (regex 1.7, aho-corasick 0.7: Debian's crates)" % cd.rust_version())
    return "%s; %s" % (bench_run.machine(), ", ".join(extra))


def report(cd, S, mem, load, elapsed):
    a = cd.a
    L = []
    L.append("Machine: %s." % machine_line(cd))
    L.append("Command: `./run.sh bench rewrite` (python3 bench/rewrite/run.py %s --pages %d --rounds %d "
             "--seconds %d --peer-seconds %g); %s. Load average %.2f before, %.2f after (1 min), "
             "%d CPUs; %.0f s in all."
             % (show(cd.build), a.pages, a.rounds, a.seconds, a.peer_seconds, cd.pinned, load[0], load[1],
                os.cpu_count() or 0, elapsed))
    L.append("")
    L.append("%d generated pages (rw-pagegen, seed 20240611), %.1f MB; every peer's output byte-identical "
             "to libclassify's on every page before timing. MB/s of input per core, median of %d rounds "
             "(ratio: libclassify's MB/s over the peer's). nginx rows: the filter's own cost, the nginx "
             "worker's CPU per MB minus the same nginx serving the same files without a filter in the same "
             "round (table below)."
             % (len(cd.names), sum(cd.page_bytes.values()) / 1e6, a.rounds))
    L.append("")
    peers_shown = [p for p in cd.peers]
    L.append("| rule set | libclassify | " + " | ".join(PEER_LABEL[p] for p in peers_shown) + " |")
    L.append("|---|---:|" + "---:|" * len(peers_shown))
    notes = []
    for s in cd.sets:
        e = S["engine"][s]
        cells = []
        for p in peers_shown:
            x = S["cells"].get("%s %s" % (p, s))
            if x is None:
                cells.append("-")
            elif "na" in x:
                if x["na"] not in notes:
                    notes.append(x["na"])
                cells.append("n/a (%d)" % (notes.index(x["na"]) + 1))
            elif x["mbps"] is None:
                cells.append("below noise")
            else:
                cells.append("%s (%s×)" % (fmt_mbps(x["mbps"]), ratio(e["mbps"] / x["mbps"])))
        L.append("| %s | **%s** | %s |" % (s, fmt_mbps(e["mbps"]), " | ".join(cells)))
    L.append("")
    for i, n in enumerate(notes, 1):
        L.append("(%d) %s." % (i, n))
    short = [c for c in cd.cells if c.pages and len(c.pages) < len(cd.names)]
    if short:
        L.append("")
        L.append("Timed on the first pages only (--peer-seconds %g per pass): %s." % (
            a.peer_seconds, ", ".join("%s %s %d" % (c.peer, c.set, len(c.pages)) for c in short)))
    L.append("")
    L.append("libclassify (rw-bench: %d KiB chunks, one stream per page, SRW mode, max_match 8192):" % 16)
    L.append("")
    L.append("| rule set | MB/s (median) | slowest, fastest round | Hyperscan floor | stream bytes | "
             "max held | scratch bytes | compile | replacements per page |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in cd.sets:
        e = S["engine"][s]
        L.append("| %s | %s | %s, %s | %s | %s | %s | %s | %.1f ms | %d |" % (
            s, fmt_mbps(e["mbps"]), fmt_mbps(e["mbps_min"]), fmt_mbps(e["mbps_max"]),
            fmt_mbps(e["hs_floor_mbps"]), "{:,}".format(e["stream_bytes"]), "{:,}".format(e["max_held"]),
            "{:,}".format(e["scratch_bytes"]), e["compile_ms"], e["replacements_per_page"]))
    if S["nginx"]:
        L.append("")
        L.append("nginx %s, one worker%s, wrk -t1 -c%d, %d s per row per round:" % (
            getattr(cd, "nginx_version", "?"), " on CPU 1, wrk on CPU 0" if cd.nginx.server_cpu else "",
            nginx_peer().CONNS, a.seconds))
        L.append("")
        L.append("| row | body MB/s (wrk) | worker CPU ms per MB | worker MB/s per core | "
                 "filter alone: CPU ms per MB | filter alone: MB/s per core | libclassify ÷ filter alone |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for name, x in S["nginx"].items():
            own = x.get("filter_mbps_per_core")
            e = S["engine"].get(x["set"]) if x["set"] else None
            L.append("| %s | %s | %.2f | %s | %s | %s | %s |" % (
                name, fmt_mbps(x["body_mbps"]), x["cpu_ms_per_mb"], fmt_mbps(x["worker_mbps_per_core"]),
                "%.2f" % x["filter_cpu_ms_per_mb"] if x.get("filter_cpu_ms_per_mb") is not None else "-",
                fmt_mbps(own), "%s×" % ratio(e["mbps"] / own) if e and own else "-"))
        L.append("")
        L.append("\"file\": `root` with `sendfile off` (the pages read into memory buffers, as a filter "
                 "needs them; the floor of the file rows); \"sendfile\": the zero-copy floor; \"proxied\": "
                 "through a second nginx with `proxy_buffering off; proxy_buffer_size %s`, so the filter "
                 "sees the body in 4 KiB chunks." % nginx_peer().PROXY_CHUNK)
    L += memory_report(mem)
    L.append("")
    L.append("Targets:")
    for name, ok, detail in targets(cd, S, mem):
        L.append("- %s: %s (%s)" % (name, "MET" if ok else ("MISSED" if ok is False else "NOT MEASURED"), detail))
    return "\n".join(L)


def ratio(q):
    return "%.2f" % q if q < 10 else "{:,.0f}".format(q)


def memory_report(mem):
    if not mem:
        return []
    L = ["", "Memory per stream: one minified body (no line break) of each size, generated on the fly:", ""]
    subs = {x["bytes"]: x for x in mem["subs_filter"]["rows"]}
    sizes = sorted(set(mem["sizes"]) | set(subs))
    head = "| body |"
    for s in mem["engine"]:
        head += " libclassify %s: stream bytes, max held | max RSS |" % s
    head += " subs_filter %s: worker peak RSS |" % mem["subs_filter"]["set"]
    L.append(head)
    L.append("|---|" + "---:|---:|" * len(mem["engine"]) + "---:|")
    for n in sizes:
        row = "| %s |" % fmt_size(n)
        for s, xs in mem["engine"].items():
            x = next((y for y in xs if y["bytes"] == n), None)
            row += (" %s, %s | %.1f MiB |" % ("{:,}".format(x["stream_bytes"]), "{:,}".format(x["max_held"]),
                                             x["max_rss_kib"] / 1024.0)) if x else " - | - |"
        y = subs.get(n)
        if y is None:
            row += " %s |" % ("n/a: " + mem["subs_filter"]["na"] if mem["subs_filter"]["na"] else "-")
        elif y["error"]:
            row += " %s after %.0f s |" % (y["error"], y["secs"])
        else:
            row += " %.1f MiB |" % (y["worker_max_rss_kib"] / 1024.0)
        L.append(row)
    return L


def targets(cd, S, mem):
    out = []
    e = S["engine"].get(TARGET_SET)
    if e:
        out.append(("≥ 1 GB/s per core with 100 literal rules", e["mbps"] >= T_MBPS,
                    "%s MB/s, median of %d rounds" % (fmt_mbps(e["mbps"]), cd.a.rounds)))
    else:
        out.append(("≥ 1 GB/s per core with 100 literal rules", None, "%s not in --sets" % TARGET_SET))
    x = S["cells"].get("subs_filter %s" % TARGET_SET)
    if e and x and "na" not in x and x.get("mbps"):
        q = e["mbps"] / x["mbps"]
        out.append(("≥ 10× subs_filter on the same rules", q >= T_VS_SUBS,
                    "%s× subs_filter's own cost (%s MB/s per core); %s× the whole nginx worker (%s MB/s per core)"
                    % (ratio(q), fmt_mbps(x["mbps"]), ratio(e["mbps"] / x["worker_mbps_per_core"]),
                       fmt_mbps(x["worker_mbps_per_core"]))))
    else:
        out.append(("≥ 10× subs_filter on the same rules", None,
                    x["na"] if x and "na" in x else "subs_filter %s not measured" % TARGET_SET))
    if mem:
        ok, parts = True, []
        for s, xs in mem["engine"].items():
            same = len({x["stream_bytes"] for x in xs}) == 1
            held = all(x["max_held"] <= x["holdback"] for x in xs)
            grow = xs[-1]["max_rss_kib"] - xs[0]["max_rss_kib"]
            ok &= same and held and grow <= T_FLAT_KIB
            parts.append("%s: stream %s bytes at every size, held at most %d of its bound %d, max RSS %+d KiB "
                         "from %s to %s" % (s, "{:,}".format(xs[0]["stream_bytes"]) if same else "NOT the same",
                                            max(x["max_held"] for x in xs), xs[0]["holdback"], grow,
                                            fmt_size(xs[0]["bytes"]), fmt_size(xs[-1]["bytes"])))
        full = mem["sizes"][0] <= KIB and mem["sizes"][-1] >= GIB
        out.append(("memory per stream flat from 1 KiB to 1 GiB", ok if full else None,
                    "; ".join(parts) + ("" if full else "; sizes do not span 1 KiB to 1 GiB (--memory-sizes)")))
    else:
        out.append(("memory per stream flat from 1 KiB to 1 GiB", None, "--no-memory"))
    return out


def gnuplot(mem, out_dir):
    """rewrite-memory.svg: bytes against body size, log-log."""
    tsv = os.path.join(out_dir, "rewrite-memory.tsv")
    lines = ["# body_bytes\tseries\tvalue_bytes"]
    series = []
    for s, xs in mem["engine"].items():
        series.append(("libclassify %s: process max RSS" % s, [(x["bytes"], x["max_rss_kib"] * 1024) for x in xs]))
        series.append(("libclassify %s: bytes held per stream (rw_stream_size)" % s,
                       [(x["bytes"], x["stream_bytes"]) for x in xs]))
    rows = [x for x in mem["subs_filter"]["rows"] if not x["error"]]
    if rows:
        series.append(("nginx subs_filter %s: worker peak RSS" % mem["subs_filter"]["set"],
                       [(x["bytes"], x["worker_max_rss_kib"] * 1024) for x in rows]))
    blocks = []
    for title, pts in series:
        blocks.append("# %s\n" % title + "".join("%d\t%d\n" % p for p in pts))
    write_atomic(tsv, "\n\n".join(blocks))
    styles = ['lc rgb "#1b6ac9" lw 2.5 pt 7', 'lc rgb "#1b6ac9" lw 1.5 dt 2 pt 6',
              'lc rgb "#2f9e44" lw 2.5 pt 9', 'lc rgb "#2f9e44" lw 1.5 dt 2 pt 8',
              'lc rgb "#d9480f" lw 2.5 pt 5']
    plots = ['"rewrite-memory.tsv" index %d using 1:2 with linespoints %s title "%s"'
             % (i, styles[i % len(styles)], t) for i, (t, _) in enumerate(series)]
    xs = sorted({p[0] for _, pts in series for p in pts})
    xt = ", ".join('"%s" %d' % (fmt_size(n).replace(" ", ""), n) for n in xs)
    gp = """# generated by bench/rewrite/run.py; `gnuplot rewrite-memory.gp` in this directory
set encoding utf8
set terminal svg size 900,700 dynamic font "sans,13" background "#ffffff"
set termoption noenhanced
set output "rewrite-memory.svg"
set title "Memory against body size: one minified body (no line break), generated on the fly\\n%s"
set logscale xy
set grid xtics ytics lc rgb "#dddddd"
set key below box
set xlabel "body size"
set ylabel "bytes"
set xrange [%g:%g]
set xtics (%s)
set ytics ("100 B" 100, "1 KB" 1e3, "10 KB" 1e4, "100 KB" 1e5, "1 MB" 1e6, "10 MB" 1e7, "100 MB" 1e8, "1 GB" 1e9, "10 GB" 1e10)
set yrange [100:1e10]
plot %s
""" % (bench_run.machine().split(";")[0], xs[0] / 2.0, xs[-1] * 2.0, xt, ", \\\n     ".join(plots))
    gpf = os.path.join(out_dir, "rewrite-memory.gp")
    write_atomic(gpf, gp)
    if not shutil.which("gnuplot"):
        say("gnuplot not found (apt-get install gnuplot-nox): %s not drawn" % show(gpf))
        return None
    r = subprocess.run(["gnuplot", "rewrite-memory.gp"], cwd=out_dir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        fail("gnuplot failed on %s:\n%s" % (show(gpf), r.stdout), 1)
    return os.path.join(out_dir, "rewrite-memory.svg")


# ----------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--pages", type=int, default=64, help="pages (default 64, 3.5 MB)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, everything interleaved; default 3")
    ap.add_argument("--seconds", type=int, default=2, help="wrk seconds per nginx row per round; default 2")
    ap.add_argument("--peer-seconds", type=float, default=1.0,
                    help="a peer slower than this per pass over the pages is timed on the first pages "
                         "that fit; default 1")
    ap.add_argument("--sets", default=",".join(SETS), help="default " + ",".join(SETS))
    ap.add_argument("--peers", default=",".join(PEERS), help="default " + ",".join(PEERS))
    ap.add_argument("--no-proxied", action="store_true", help="skip the proxied nginx rows")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory part")
    ap.add_argument("--memory-sizes", default="1K,1M,100M,1G", help="rw-body sizes; default 1K,1M,100M,1G")
    ap.add_argument("--subs-memory-sizes", default="1K,1M,10M,100M",
                    help="subs_filter body sizes; default 1K,1M,10M,100M (its worker holds the body whole)")
    ap.add_argument("--subs-timeout", type=int, default=120, help="seconds per subs_filter body; default 120")
    ap.add_argument("--nginx-vm-limit", default="6G", help="prlimit --as for nginx; default 6G")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to CPUs")
    ap.add_argument("--out-dir", help="default BUILD_DIR/bench/rewrite")
    ap.add_argument("--verify-only", action="store_true",
                    help="stop after the verification; writes OUT/verify.json (tests/rewrite runs this)")
    a = ap.parse_args()
    if not 1 <= a.pages <= 10000:
        fail("--pages must be from 1 to 10000")
    if not 1 <= a.rounds <= 100:
        fail("--rounds must be from 1 to 100")
    if not 1 <= a.seconds <= 600:
        fail("--seconds must be a whole number from 1 to 600")
    if not 0 < a.peer_seconds <= 600:
        fail("--peer-seconds must be above 0 and at most 600")
    if not 1 <= a.subs_timeout <= 3600:
        fail("--subs-timeout must be from 1 to 3600")
    a.sets = [s.strip() for s in a.sets.split(",") if s.strip()]
    for s in a.sets:
        kind, _, n = s.partition(":")
        if kind not in ("lit", "re") or not n.isdigit() or not 1 <= int(n) <= 100000:
            fail("--sets: %r is not a rule set (lit:N or re:N, N from 1 to 100000)" % s)
    a.peers = [p.strip() for p in a.peers.split(",") if p.strip()]
    for p in a.peers:
        if p not in PEERS:
            fail("--peers: unknown peer %r (the peers: %s)" % (p, ", ".join(PEERS)))
    a.memory_sizes = size_list(a.memory_sizes, "--memory-sizes")
    a.subs_memory_sizes = size_list(a.subs_memory_sizes, "--subs-memory-sizes") if a.subs_memory_sizes else []
    a.nginx_vm_limit = size_list(a.nginx_vm_limit, "--nginx-vm-limit")[0]
    return a


def main():
    a = parse_args()
    t_start = time.monotonic()
    cd = Conductor(a)
    cd.sets, cd.peers = a.sets, a.peers
    cd.memory_sets = [s for s in MEMORY_SETS if s in a.sets] or a.sets[:1]
    load0 = os.getloadavg()
    try:
        cd.make_inputs()
        cd.find_peers()
        cd.make_cells()
        verified = cd.verify()
        if a.verify_only:
            write_atomic(os.path.join(cd.out, "verify.json"), json.dumps(
                {"pages": len(cd.names), "sets": cd.sets, "cells": verified}, indent=1) + "\n")
            say("verified; wrote %s" % show(os.path.join(cd.out, "verify.json")))
            return 0
        cd.plan_timing()
        cd.time_rounds()
        mem = None if a.no_memory else cd.memory()
    except WriteError as e:
        fail(str(e), 1)
    finally:
        cd.stop()
    load1 = os.getloadavg()
    S = summarize(cd)
    text = report(cd, S, mem, (load0[0], load1[0]), time.monotonic() - t_start)
    print()
    print(text)
    try:
        write_atomic(os.path.join(cd.out, "results.md"), text + "\n")
        write_atomic(os.path.join(cd.out, "results.json"), json.dumps(
            {"machine": machine_line(cd), "pinned": cd.pinned, "loadavg_before": load0, "loadavg_after": load1,
             "args": {k: v for k, v in vars(a).items()}, "pages": len(cd.names),
             "page_bytes": sum(cd.page_bytes.values()), "summary": S, "memory": mem,
             "verified": verified, "engine_runs": cd.engine, "nginx_runs": cd.nginx_runs,
             "cells": {"%s %s" % (c.peer, c.set): {"secs": c.secs, "pages": len(c.pages or [])}
                       for c in cd.cells if c.secs},
             "targets": [{"target": n, "met": ok, "detail": d} for n, ok, d in targets(cd, S, mem)]},
            indent=1) + "\n")
        plot = gnuplot(mem, cd.out) if mem else None
    except WriteError as e:
        fail(str(e), 1)
    say("wrote %s, %s%s" % (show(os.path.join(cd.out, "results.md")), show(os.path.join(cd.out, "results.json")),
                            ", " + show(plot) if plot else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
