#!/usr/bin/env python3
"""bench/run.py: the benchmark suite's conductor (bench/README.md).

Called by `./run.sh bench` (which builds the project first) as

    python3 bench/run.py BUILD_DIR [--corpora DIR] [--seconds S] [--rounds R]
                         [--no-pin] [--no-scale] [--out-dir DIR] [--verify-only]
                         [--vectorscan-build DIR]

 1. the workload: bench/workload.py -> OUT/requests.txt (3,717 requests
    from the real User-Agent corpora, bots and browsers mixed);
 2. the peers' data: bench/peerdata.py -> OUT/peerdata.txt (the names and
    patterns of stdlib/ai_robots.clf and stdlib/crawlers.clf);
 3. the rules: stdlib/default.clf, bench/rules/ai_robots.clf,
    bench/rules/constant.clf and bench/rules/stdlib_all.clf compiled with
    classifyc;
 4. the peers in other languages: classify-bench-re2 (built by meson when
    libre2-dev was found), the Rust peer (cargo --offline with Debian's
    crates) and the Go peer (Debian's go, standard library), built into
    BUILD_DIR/bench/peers; a peer whose toolchain is missing is left out,
    saying why;
 5. verification: every method classifies every request and the verdict
    files must be identical (libclassify, the PCRE2 loop and alternations,
    RE2, Rust, Go, Lua 5.4 and LuaJIT, per program); the run stops at the
    first difference;
 6. --stats of each rules file: load time, memory, and the allocations
    while classifying the workload, which must be 0 (--verify-only stops
    here); and each peer's compile time and memory of its rules (--stats,
    3 runs);
 7. the compile cost (wall, CPU, peak memory) of the whole standard
    library, the default policy and large generated programs
    (bench/largeprog.py);
 8. R rounds; in each, every method runs once for S/R seconds of whole
    passes and half as long of single requests, as its own process, in
    the same order (so a burst of noise hits them alike);
 9. the table, with ratios, and the targets (MET or MISSED by how much),
    printed and written to OUT/results.md and OUT/results.json;
10. the scaling plots: bench/scale/run.py (skipped with --no-scale).

--vectorscan-build DIR: a second build directory, configured with
-Dmatcher=vectorscan; its classifyc compiles the rules again and its
classify-bench runs the libclassify and Hyperscan-floor rows in the same
rounds, printed as the table's Vectorscan column (without it: "not
measured").

OUT is BUILD_DIR/bench unless --out-dir. The corpora directory is
--corpora, else $CORPORA, else ../shared/corpora beside the repository;
without it the run stops with exit status 2.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from benchcommon import (DEBIAN_GO, DEBIAN_RUSTC, PeerBuildError, WriteError,  # noqa: E402
                         cargo_build, go_build, go_missing, pick_cpu, rust_missing, show,
                         tool_version, write_atomic)
import largeprog  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "bench")

# The targets of issue 6, for this machine class (docs/performance.md).
T_DEFAULT_NS = 1000
T_FLOOR_RATIO = 3.0
T_CONST_NS = 15
T_VS_PCRE2 = 50
T_VS_LUAJIT = 20
T_COMPILE_S = 1.0
T_LOAD_MS = 20
# Issue 17's, against the peers users would pick instead.
T_VS_BEST_PEER = 3.0
T_FLOOR_RATIO_17 = 1.5

# The peers in other languages (bench/peers): key -> the label of their rows.
PEERS = {
    "re2": "C++ RE2::Set per field",
    "rust": "Rust regex::RegexSet + aho-corasick",
    "go": "Go regexp, pattern loops",
}


def fail(msg, code=2):
    sys.stderr.write("bench: %s\n" % msg)
    sys.exit(code)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        fail("%s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, r.stderr.strip()), 1)
    return r.stdout


def pctl(xs, p):
    """Nearest-rank percentile."""
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 1)) - 1))
    return xs[k]


class Methods:
    """The methods: name -> (label, argv without the mode, threads)."""

    def __init__(self, build, out, have_lua, peers, vs_build):
        bench = os.path.join(build, "bench", "classify-bench")
        req = os.path.join(out, "requests.txt")
        pd = os.path.join(out, "peerdata.txt")
        rules = {p: os.path.join(out, p + ".bin") for p in ("default", "ai_robots", "constant")}
        self.rules = rules
        self.m = {}
        for prog in ("default", "ai_robots", "constant"):
            for t in (1, 2):
                self.m["clf/%s/%d" % (prog, t)] = (
                    "libclassify", [bench, req, "--method", "clf", "--rules", rules[prog]], t)
        for prog in ("default", "ai_robots", "constant"):
            self.m["clf-batch/%s/1" % prog] = (
                "libclassify, hand-over in one call (clf_ctx_set_request)",
                [bench, req, "--method", "clf-batch", "--rules", rules[prog]], 1)
        self.m["clf-eval/constant/1"] = (
            "libclassify, clf_eval only",
            [bench, req, "--method", "clf-eval", "--rules", rules["constant"]], 1)
        for prog in ("default", "ai_robots"):
            self.m["pcre2/%s/1" % prog] = (
                "C loop over PCRE2-JIT regexes",
                [bench, req, "--method", "pcre2", "--peerdata", pd, "--program", prog], 1)
            self.m["pcre2-alt/%s/1" % prog] = (
                "PCRE2-JIT, one alternation per field (*MARK)",
                [bench, req, "--method", "pcre2-alt", "--peerdata", pd, "--program", prog], 1)
            for key, exe in peers.items():
                self.m["%s/%s/1" % (key, prog)] = (
                    PEERS[key], [exe, req, "--peerdata", pd, "--program", prog], 1)
            for lua, exe in (("lua54", "classify-bench-lua54"), ("luajit", "classify-bench-luajit")):
                if not have_lua.get(lua):
                    continue
                self.m["%s/%s/1" % (lua, prog)] = (
                    {"lua54": "Lua 5.4 string.find", "luajit": "LuaJIT 2.1 string.find"}[lua],
                    [os.path.join(build, "bench", "lua", exe), req, "--script",
                     os.path.join(HERE, "lua", "peer.lua"), "--peerdata", pd, "--program", prog], 1)
            self.m["floor/%s/1" % prog] = (
                "Hyperscan floor: one scan per inspected field",
                [bench, req, "--method", "hs-floor", "--rules", rules[prog]], 1)
        # The Vectorscan column: the same rows from the second build, on
        # rules its own classifyc compiled (vs_build: (bench, rules dict)).
        if vs_build:
            vbench, vrules = vs_build
            for prog in ("default", "ai_robots", "constant"):
                self.m["clf-vs/%s/1" % prog] = (
                    "libclassify (Vectorscan)",
                    [vbench, req, "--method", "clf", "--rules", vrules[prog]], 1)
                if prog != "constant":
                    self.m["floor-vs/%s/1" % prog] = (
                        "Vectorscan floor",
                        [vbench, req, "--method", "hs-floor", "--rules", vrules[prog]], 1)

    def add_subject_floors(self, stats):
        """One floor row per request field the default program scans."""
        for s in stats["default"]["subjects"]:
            if s["kind"] == "computed":
                continue
            self.m["floor-subject/default/%d" % s["index"]] = (
                "Hyperscan floor, %s (%d pattern%s)" % (
                    "header " + s["name"] if s["kind"] == "header" else s["name"], s["patterns"],
                    "" if s["patterns"] == 1 else "s"),
                self.m["floor/default/1"][1] + ["--subject", str(s["index"])], 1)


def pin(cmd, threads, cpu):
    if cpu is None:
        return cmd
    if threads == 1:
        return ["taskset", "-c", str(cpu)] + cmd
    return cmd  # several threads: every CPU


def verify(methods, out):
    """Verdict files of every method of each program must be identical."""
    got = {}
    for key, (label, argv, t) in methods.m.items():
        meth, prog, threads = key.split("/")
        if threads != "1" or meth.startswith("floor") or meth == "clf-eval":
            continue
        path = os.path.join(out, "verdicts-%s-%s.txt" % (meth, prog))
        run(argv + ["--verdicts", path])
        with open(path, encoding="utf-8") as f:
            got.setdefault(prog, {})[meth] = f.read().splitlines()
    with open(os.path.join(out, "requests.txt"), encoding="utf-8") as f:
        reqs = f.read().split("\n\n")
    summary = {}
    for prog, by in got.items():
        ref = by["clf"]
        for meth, lines in by.items():
            if lines == ref:
                continue
            i = next((k for k in range(min(len(ref), len(lines))) if ref[k] != lines[k]),
                     min(len(ref), len(lines)))
            fail("%s disagrees with libclassify on program %s, request %d:\n%s\n"
                 "  libclassify: %s\n  %s: %s" % (
                     meth, prog, i, reqs[i] if i < len(reqs) else "?",
                     ref[i] if i < len(ref) else "(none)", meth,
                     lines[i] if i < len(lines) else "(none)"), 1)
        rejects = sum(1 for x in ref if x.startswith("reject"))
        summary[prog] = (len(ref), rejects, sorted(by))
    return summary


# The methods whose executable takes --stats (harness.h): the peers.
PEER_METHODS = ("pcre2", "pcre2-alt", "re2", "rust", "go", "luajit", "lua54")


def peer_stats(methods, runs=3):
    """Each peer's compile time of its rules (median of `runs` processes)
    and memory (resident growth, or for Go its live heap: median), by
    method key."""
    out = {}
    for key, (label, argv, t) in methods.m.items():
        if key.split("/")[0] not in PEER_METHODS:
            continue
        xs = [json.loads(run(argv + ["--stats"])) for _ in range(runs)]
        out[key] = {k: statistics.median(x[k] for x in xs)
                    for k in ("compile_ns", "rules_rss_bytes", "pass_rss_bytes")}
    return out


def build_peers(build):
    """The peers in other languages that can run here: key -> executable;
    prints why each other one is left out."""
    peers, why = {}, {}
    re2 = os.path.join(build, "bench", "peers", "classify-bench-re2")
    if os.access(re2, os.X_OK):
        peers["re2"] = re2
    else:
        why["re2"] = ("classify-bench-re2 not built (libre2-dev or g++ missing when %s was "
                      "configured; ./run.sh bench installs them and reconfigures)" % show(build))
    w = rust_missing()
    if w:
        why["rust"] = w
    else:
        try:
            peers["rust"] = cargo_build(
                os.path.join(HERE, "peers", "rust"),
                ("Cargo.toml", os.path.join(".cargo", "config.toml"), os.path.join("src", "main.rs")),
                os.path.join(build, "bench", "peers", "rust"), "classify-bench-rust", "the Rust peer")
        except PeerBuildError as e:
            fail(str(e), 1)
    w = go_missing()
    if w:
        why["go"] = w
    else:
        try:
            peers["go"] = go_build(os.path.join(HERE, "peers", "go"), ("go.mod", "main.go"),
                                   os.path.join(build, "bench", "peers", "go"), "classify-bench-go",
                                   "the Go peer")
        except PeerBuildError as e:
            fail(str(e), 1)
    for k, w in why.items():
        print("bench: %s peer not run: %s" % (PEERS[k], w))
    return peers


def compile_cost(classifyc, src, out, runs=3):
    """Median wall and CPU seconds, and the largest peak memory (MiB), of
    `classifyc -I stdlib src -o out` over `runs` runs; each run's CPU time
    and peak RSS are the child's own, from wait4(2)."""
    walls, cpus, rss = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([classifyc, "-I", os.path.join(ROOT, "stdlib"), src, "-o", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        if os.waitstatus_to_exitcode(status) != 0:
            fail("classifyc %s failed:\n%s" % (src, err.decode("utf-8", "replace")), 1)
        cpus.append(ru.ru_utime + ru.ru_stime)
        rss.append(ru.ru_maxrss / 1024.0)
    return statistics.median(walls), statistics.median(cpus), max(rss)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = []
    for pkg, name in (("libhs", "Hyperscan"), ("libpcre2-8", "PCRE2"), ("lua5.4", "Lua"),
                      ("luajit", "LuaJIT")):
        r = subprocess.run(["pkg-config", "--modversion", pkg], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        if r.returncode == 0:
            versions.append("%s %s" % (name, r.stdout.strip()))
    if os.access(DEBIAN_RUSTC, os.X_OK):
        versions.append(tool_version([DEBIAN_RUSTC, "--version"]).split(" (")[0])
    if os.access(DEBIAN_GO, os.X_OK):
        versions.append(tool_version([DEBIAN_GO, "version"]).replace("go version ", ""))
    r = subprocess.run(["pkg-config", "--modversion", "re2"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode == 0:
        r2 = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libre2-dev"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        versions.append("RE2 %s" % (r2.stdout.strip() or r.stdout.strip()))
    r = subprocess.run(["cc", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    if r.returncode == 0 and r.stdout:
        versions.insert(0, r.stdout.splitlines()[0])
    return "%s, %d CPUs, %s %s; %s" % (model, os.cpu_count() or 0, platform.system(),
                                      platform.release(), ", ".join(versions))


def ns(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="timing budget per method, split over the rounds (single requests get "
                         "half as much again); default 3")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, methods interleaved; default 3")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    ap.add_argument("--no-scale", action="store_true", help="skip the scaling plots")
    ap.add_argument("--out-dir", help="where the inputs and results go; default BUILD_DIR/bench")
    ap.add_argument("--verify-only", action="store_true",
                    help="stop after the verification and the allocation count (the test suite "
                         "runs this: tests/bench)")
    ap.add_argument("--vectorscan-build", metavar="DIR",
                    help="a second build directory configured with -Dmatcher=vectorscan: its "
                         "libclassify and floor rows become the table's Vectorscan column")
    a = ap.parse_args()
    # Each process gets seconds/rounds (classify-bench takes 0 to 3600).
    if not (0 < a.seconds < 3600 * a.rounds) or a.rounds < 1:
        fail("--seconds must be a number above 0 (and under 3600 per round), --rounds at least 1")

    build = os.path.abspath(a.build_dir)
    out = os.path.abspath(a.out_dir or os.path.join(build, "bench"))
    classifyc = os.path.join(build, "cli", "classifyc")
    bench = os.path.join(build, "bench", "classify-bench")
    for p in (bench, classifyc):
        if not os.access(p, os.X_OK):
            fail("%s not built (run ./run.sh bench, or ninja -C %s)" % (p, a.build_dir))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        fail("%s: cannot make the output directory: %s" % (out, e.strerror or e))
    have_lua = {k: os.access(os.path.join(build, "bench", "lua", exe), os.X_OK)
                for k, exe in (("lua54", "classify-bench-lua54"),
                               ("luajit", "classify-bench-luajit"))}
    for k, ok in have_lua.items():
        if not ok:
            print("bench: %s peer not built (liblua5.4-dev / libluajit-5.1-dev missing): "
                  "its rows are left out" % k)

    corpora = os.path.abspath(a.corpora)
    r = subprocess.run([sys.executable, os.path.join(HERE, "workload.py"), "--out",
                        os.path.join(out, "requests.txt"), "--corpora", corpora])
    if r.returncode != 0:
        sys.exit(r.returncode)
    run([sys.executable, os.path.join(HERE, "peerdata.py"), "--out", os.path.join(out, "peerdata.txt")])

    # The rules, and the compile time of the whole standard library.
    sources = {"default": os.path.join(ROOT, "stdlib", "default.clf"),
               "ai_robots": os.path.join(HERE, "rules", "ai_robots.clf"),
               "constant": os.path.join(HERE, "rules", "constant.clf")}
    for prog, src in sources.items():
        run([classifyc, "-I", os.path.join(ROOT, "stdlib"), src, "-o", os.path.join(out, prog + ".bin")])
    all_bin = os.path.join(out, "stdlib_all.bin")
    run([classifyc, "-I", os.path.join(ROOT, "stdlib"), os.path.join(HERE, "rules", "stdlib_all.clf"),
         "-o", all_bin])

    vs_build = None
    if a.vectorscan_build:
        vdir = os.path.abspath(a.vectorscan_build)
        vbench = os.path.join(vdir, "bench", "classify-bench")
        vclassifyc = os.path.join(vdir, "cli", "classifyc")
        for p in (vbench, vclassifyc):
            if not os.access(p, os.X_OK):
                fail("--vectorscan-build: %s not built (ninja -C %s)" % (p, a.vectorscan_build))
        vout = os.path.join(out, "vectorscan")
        os.makedirs(vout, exist_ok=True)
        vrules = {}
        for prog, src in sources.items():
            vrules[prog] = os.path.join(vout, prog + ".bin")
            run([vclassifyc, "-I", os.path.join(ROOT, "stdlib"), src, "-o", vrules[prog]])
        vs_build = (vbench, vrules)
    peers = build_peers(build)
    methods = Methods(build, out, have_lua, peers, vs_build)
    print("bench: verifying: every method classifies the %s requests of %s ..."
          % ("3,717", show(os.path.join(out, "requests.txt"))))
    sys.stdout.flush()
    checked = verify(methods, out)
    for prog, (n, rej, meths) in sorted(checked.items()):
        print("bench:   %s: %d requests, %d rejected, identical verdicts and reasons from %s"
              % (prog, n, rej, ", ".join(meths)))

    stats = {}
    for prog in ("default", "ai_robots", "constant", "stdlib_all"):
        path = all_bin if prog == "stdlib_all" else methods.rules[prog]
        stats[prog] = json.loads(run([bench, "--stats", path, os.path.join(out, "requests.txt")]))
        if stats[prog]["allocations_while_classifying"]:
            fail("%s: %d allocations while classifying the workload (want 0)"
                 % (prog, stats[prog]["allocations_while_classifying"]), 1)
    print("bench: 0 allocations while classifying, for each rules file")
    if a.verify_only:
        return
    pstats = peer_stats(methods)
    print("bench: the peers' compile time and memory measured (%d peer rows)" % len(pstats))
    # Compile cost: the whole standard library, the default policy, and
    # large generated programs (bench/largeprog.py) whose cost once grew
    # faster than the program (issue 12).
    comp = {"stdlib_all": ("the whole standard library (bench/rules/stdlib_all.clf)",
                           compile_cost(classifyc, os.path.join(HERE, "rules", "stdlib_all.clf"),
                                        all_bin)),
            "default": ("stdlib/default.clf",
                        compile_cost(classifyc, sources["default"], os.path.join(out, "default.bin")))}
    for name, what, text in largeprog.reported():
        src = os.path.join(out, "large_%s.clf" % name)
        write_atomic(src, text)
        comp[name] = (what, compile_cost(classifyc, src, os.path.join(out, "large_%s.bin" % name)))
    print("bench: compile cost measured (%s)" % ", ".join(comp))

    methods.add_subject_floors(stats)

    cpu, how = (None, "not pinned (--no-pin)") if a.no_pin else pick_cpu()
    per = a.seconds / a.rounds
    print("bench: %s (2-thread rows unpinned); %d rounds of %.2f s per method"
          % (how, a.rounds, per))
    results = {k: [] for k in methods.m}
    for rnd in range(a.rounds):
        for key, (label, argv, t) in methods.m.items():
            line = run(pin(argv + ["--time", str(per), "--threads", str(t)], t, cpu))
            results[key].append(json.loads(line))
        print("bench:   round %d of %d done" % (rnd + 1, a.rounds))
        sys.stdout.flush()

    agg = {}
    for key, runs in results.items():
        passes = [x for r in runs for x in r["pass_ns"]]
        agg[key] = {
            "label": methods.m[key][0], "threads": methods.m[key][2],
            "pass_median": statistics.median(passes), "pass_p99": pctl(passes, 0.99),
            "passes": len(passes),
            "single_median": statistics.median(r["single_ns"]["median"] for r in runs),
            "single_p99": statistics.median(r["single_ns"]["p99"] for r in runs),
            "throughput_rps": statistics.median(r["throughput_rps"] for r in runs),
        }
    report = build_report(agg, stats, checked, comp, how, a,
                          headers_per_request(os.path.join(out, "requests.txt")), pstats)
    print()
    print(report)
    try:
        write_atomic(os.path.join(out, "results.md"), report + "\n")
        write_atomic(os.path.join(out, "results.json"), json.dumps(
            {"methods": agg, "stats": stats, "peer_stats": pstats,
             "compile": {k: {"what": w, "wall_s": c[0], "cpu_s": c[1], "peak_mib": c[2]}
                         for k, (w, c) in comp.items()},
             "machine": machine()}, indent=1) + "\n")
    except WriteError as e:
        fail(str(e), 1)
    print("bench: wrote %s and %s" % (show(os.path.join(out, "results.md")),
                                      show(os.path.join(out, "results.json"))))
    if not a.no_scale:
        sys.stdout.flush()
        rc = subprocess.run([sys.executable, os.path.join(HERE, "scale", "run.py"), build,
                             "--corpora", corpora, "--out-dir", out]
                            + (["--no-pin"] if a.no_pin else [])).returncode
        if rc != 0:
            fail("bench/scale/run.py exited with status %d" % rc, 1)


def headers_per_request(path):
    """The mean number of headers of the requests file's requests."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return sum(ln.startswith("H\t") for ln in lines) / max(1, sum(ln.startswith("R\t") for ln in lines))


def vs_cell(agg, key, measured):
    """The Vectorscan column of row `key` (clf or floor rows): its pass
    and single medians from the second build."""
    meth, prog, t = key.split("/")
    if t != "1" or meth not in ("clf", "floor"):
        return ""
    if not measured:
        return "not measured"
    v = agg.get("%s-vs/%s/1" % (meth, prog))
    return "%s / %s" % (ns(v["pass_median"]), ns(v["single_median"])) if v else "not measured"


def best_peer(agg, prog):
    """The key of the fastest peer on prog by the pass median, or None."""
    keys = [k for k in agg if k.split("/")[1] == prog and k.split("/")[0] in PEER_METHODS]
    return min(keys, key=lambda k: agg[k]["pass_median"]) if keys else None


def build_report(agg, stats, checked, comp, how, a, hdrs, pstats):
    comp_all = comp["stdlib_all"][1]
    L = []
    L.append("Machine: %s. %s. Command: `./run.sh bench` (--seconds %g --rounds %d)."
             % (machine(), how[0].upper() + how[1:], a.seconds, a.rounds))
    L.append("")
    L.append("ns per classification of one request (reset, method, path, query, every header, "
             "evaluate), 3,717 requests; \"pass\" = a whole pass over them divided by 3,717 (a "
             "mean), median and p99 over the passes; \"single\" = each request timed alone.")
    L.append("")
    measured = bool(a.vectorscan_build)
    L.append("| program | method | threads | pass median | pass p99 | single median | single p99 "
             "| vs libclassify | Vectorscan: pass / single median |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    order = []
    for prog in ("default", "ai_robots", "constant"):
        keys = [k for k in agg if k.split("/")[1] == prog and not k.split("/")[0].endswith("-vs")]
        keys.sort(key=lambda k: (["clf", "clf-batch", "clf-eval", "floor", "floor-subject", "re2", "rust", "go",
                                  "pcre2-alt", "pcre2", "luajit", "lua54"].index(k.split("/")[0]), k))
        order += keys
    for k in order:
        meth, prog, _ = k.split("/")
        x = agg[k]
        base = agg.get("clf/%s/1" % prog)
        q = x["pass_median"] / base["pass_median"]
        ratio = "" if meth == "clf" else "%.2f×" % q if q < 10 else "%.0f×" % q
        label = x["label"]
        if meth == "clf" and x["threads"] == 2:
            label += " (%.2f M classifications/s by both, from the pass times)" % (
                x["throughput_rps"] / 1e6)
        L.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            prog, label, x["threads"], ns(x["pass_median"]), ns(x["pass_p99"]),
            ns(x["single_median"]), ns(x["single_p99"]), ratio, vs_cell(agg, k, measured)))
    L.append("")
    L.append("The peers' rules: compile (from the peer data to a matcher ready to classify; "
             "median of 3 processes) and memory (the process's resident growth while compiling, "
             "and after one more pass over the requests, which lazily built DFAs add to; Go: its "
             "live heap after a collection):")
    L.append("")
    L.append("| program | peer | compile | memory of the rules | after one pass |")
    L.append("|---|---|---:|---:|---:|")
    for k in order:
        if k in pstats:
            x = pstats[k]
            L.append("| %s | %s | %.1f ms | %.0f KiB | %.0f KiB |" % (
                k.split("/")[1], agg[k]["label"], x["compile_ns"] / 1e6,
                x["rules_rss_bytes"] / 1024, x["pass_rss_bytes"] / 1024))
    L.append("")
    L.append("| rules | file | load median | load p99 | program memory | per-context memory "
             "| Hyperscan patterns | allocations while classifying |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for prog in ("default", "ai_robots", "constant", "stdlib_all"):
        s = stats[prog]
        L.append("| %s | %d B | %.2f ms | %.2f ms | %d B | %d B (+ %d B Hyperscan scratch) | %d | %s |" % (
            prog, s["file_bytes"], s["load_ns_median"] / 1e6, s["load_ns_p99"] / 1e6,
            s["program_bytes"] + s["program_hs_bytes"], s["ctx_bytes"], s["ctx_hs_bytes"],
            s["patterns"], "%d in %d" % (s["allocations_while_classifying"], s["classified"])))
    L.append("")
    L.append("Compile cost (classifyc; wall and CPU time the median of 3 runs, peak memory "
             "the largest):")
    L.append("")
    L.append("| program | wall | CPU | peak memory |")
    L.append("|---|---:|---:|---:|")
    for what, (wall, cpu, rss) in comp.values():
        L.append("| %s | %.2f s | %.2f s | %.0f MiB |" % (what, wall, cpu, rss))
    L.append("")
    L.append("Targets:")

    def target(name, ok, detail):
        L.append("- %s: %s (%s)" % (name, "MET" if ok else "MISSED", detail))

    d, f = agg["clf/default/1"], agg["floor/default/1"]
    bp = best_peer(agg, "default")
    if bp:
        b = agg[bp]
        target("default >= 3x the best peer per request (issue 17)",
               b["pass_median"] >= T_VS_BEST_PEER * d["pass_median"] and
               b["single_median"] >= T_VS_BEST_PEER * d["single_median"],
               "best peer %s: %.2f× by the pass median, %.2f× by the single median" % (
                   b["label"], b["pass_median"] / d["pass_median"],
                   b["single_median"] / d["single_median"]))
    target("default within 1.5x of the floor (issue 17)",
           d["single_median"] <= T_FLOOR_RATIO_17 * f["single_median"],
           "single median %.2f× the floor's; pass median %.2f×" % (
               d["single_median"] / f["single_median"], d["pass_median"] / f["pass_median"]))
    target("default median <= 1 us", d["single_median"] <= T_DEFAULT_NS and d["pass_median"] <= T_DEFAULT_NS,
           "single %s ns, pass %s ns" % (ns(d["single_median"]), ns(d["pass_median"])))
    target("default within 3x of the floor", d["single_median"] <= T_FLOOR_RATIO * f["single_median"],
           "single median %.2f× the floor's %s ns; pass median %.2f×" % (
               d["single_median"] / f["single_median"], ns(f["single_median"]),
               d["pass_median"] / f["pass_median"]))
    # By the pass median: a single request this short is within the
    # timer's resolution (about 10 ns steps here).
    c, ce = agg["clf/constant/1"], agg["clf-eval/constant/1"]
    target("constant filter <= 15 ns, clf_eval alone", ce["pass_median"] <= T_CONST_NS,
           "pass median %s ns" % ns(ce["pass_median"]))
    target("constant filter <= 15 ns, with the request's hand-over", c["pass_median"] <= T_CONST_NS,
           "pass median %s ns: reset, 3 fields, %.1f headers on average, clf_eval"
           % (ns(c["pass_median"]), hdrs))
    cb = agg.get("clf-batch/constant/1")
    if cb:
        target("constant filter <= 15 ns, with the hand-over in one call", cb["pass_median"] <= T_CONST_NS,
               "pass median %s ns: clf_ctx_set_request, clf_eval" % ns(cb["pass_median"]))
    for prog in ("default", "ai_robots"):
        base = agg["clf/%s/1" % prog]["pass_median"]
        p = agg.get("pcre2/%s/1" % prog)
        if p:
            target("%s >= 50x the PCRE2 loop" % prog, p["pass_median"] / base >= T_VS_PCRE2,
                   "%.1f×" % (p["pass_median"] / base))
        j = agg.get("luajit/%s/1" % prog)
        if j:
            target("%s >= 20x LuaJIT" % prog, j["pass_median"] / base >= T_VS_LUAJIT,
                   "%.1f×" % (j["pass_median"] / base))
    target("whole standard library compiles in < 1 s", comp_all[0] < T_COMPILE_S,
           "%.2f s wall, %.2f s CPU" % comp_all[:2])
    load = max(stats[p]["load_ns_median"] for p in stats) / 1e6
    target("loads in < 20 ms", load < T_LOAD_MS, "slowest median load %.2f ms" % load)
    allocs = sum(stats[p]["allocations_while_classifying"] for p in stats)
    target("zero allocations per classification", allocs == 0,
           "%d allocations in %d classifications" % (
               allocs, sum(stats[p]["classified"] for p in stats)))
    return "\n".join(L)


if __name__ == "__main__":
    main()
