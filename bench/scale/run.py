#!/usr/bin/env python3
"""bench/scale/run.py: ns per classification against the number of patterns
and against the User-Agent length, libclassify beside a PCRE2-JIT loop,
drawn with gnuplot (a report, not a test).

    python3 bench/scale/run.py BUILD_DIR [--corpora DIR] [--out-dir DIR] [--quick]
                               [--seconds S] [--no-pin]

Steps (bench/scale/README.md says more):
 1. the workload: every `instances` string of crawler-user-agents.json, then
    every `user_agent_string` of uap-core/tests/test_ua.yaml, shuffled with
    random.Random(20240601) (as bench/run.py); the first 1,000 are timed;
 2. the pattern pool, in this order: the 166 names of ai_robots.clf's
    `pub const AGENTS` as caseless whole words (\\bNAME\\b, i), the 1,498
    crawler-user-agents `pattern` regexes (converted as
    tools/gen_crawlers.py does, case-sensitive), then synthetic product
    tokens from random.Random(20261130) up to 20,000. Before use, every
    real pattern is compiled alone by Hyperscan and by PCRE2 and run on all
    3,717 corpus User-Agents (classify-scale --check-pool); a pattern the
    two engines disagree on, or one refuses, is left out and named;
 3. pattern sweep: for N in 10 .. 20,000, the first N patterns of the pool
    become one rule (`if ua.matches(/p1/) || ... { reject }`, chained
    1,000 tests per `if`), compiled by BUILD_DIR/cli/classifyc, and
    classify-scale times it against N PCRE2-JIT regexes in a loop;
 4. User-Agent length sweep: `ua.contains_word(ai_robots.AGENTS)` (166
    names, caseless whole words, as ai_robots.check matches them) against
    the PCRE2 loop over the same names, on User-Agents of exactly L bytes
    (100 B .. 64 KiB): a Firefox UA padded with real browser tokens that
    match no name (everything is scanned), and the same with " GPTBot/1.2"
    as its last bytes;
 5. BUILD_DIR/bench (or --out-dir): the .tsv data, scaling.gp, and
    gnuplot's scaling-patterns.svg and scaling-ua-length.svg (the generated
    inputs go to its subdirectory scale-inputs/); the figures are printed
    as a table.

classify-scale runs under `taskset -c 1` when possible (see
bench/benchcommon.py). The corpora directory is --corpora, else $CORPORA,
else ../shared/corpora beside the repository; without it the run stops with
exit status 2 (also when the build is missing). Exit status 1 when the two
classifiers disagree on a verdict, a real pattern cannot be checked, or a
program fails. A slow machine is never an error; nor is a missing gnuplot
(the data and the script are written, the plots are not drawn).
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True
from benchcommon import pick_cpu, show  # noqa: E402
from clfgen import clf_string_bytes  # noqa: E402
from gen_crawlers import convert  # noqa: E402
from workload import SEED, Missing, load_uas  # noqa: E402

SYNTH_SEED = 20261130    # the synthetic product tokens
CRAWLER = os.path.join("crawler-user-agents", "crawler-user-agents.json")
WORKLOAD = 1000
PATTERN_COUNTS = [10, 30, 100, 300, 1000, 3000, 10000, 20000]
KIB = 1024
LENGTHS = [100, 300, 1 * KIB, 4 * KIB, 16 * KIB, 64 * KIB]
VARIANTS = 32            # User-Agents per length (different paddings)
CHAIN = 1000             # tests per `if` (classifyc nests at most 10,000 operators)
HIT_NAME = "GPTBot"
HIT_TOKEN = " GPTBot/1.2"


def fail(msg, code=2):
    sys.stderr.write("scale-bench: %s\n" % msg)
    sys.exit(code)


def say(msg=""):
    print(msg)
    sys.stdout.flush()


# ---------------------------------------------------------------- inputs

def load_corpora(corpora):
    """The crawler-user-agents entries and the benchmark's User-Agents,
    shuffled as bench/workload.py shuffles them (the same order)."""
    try:
        uas = [ua for ua, _ in load_uas(corpora)]
    except Missing as e:
        fail("corpora not found: %s\n"
             "       (pass --corpora DIR or set CORPORA; the default is ../shared/corpora "
             "beside the repository)" % e)
    with open(os.path.join(corpora, CRAWLER), encoding="utf-8") as f:
        entries = json.load(f)
    return entries, [ua for ua in uas if "\n" not in ua and "\r" not in ua]


def ai_agents():
    """The names of `pub const AGENTS` in stdlib/ai_robots.clf, in order."""
    path = os.path.join(ROOT, "stdlib", "ai_robots.clf")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^pub const AGENTS = \[(.*?)^\]i", text, re.S | re.M)
    if not m:
        fail("%s: no `pub const AGENTS = [...]i`" % path, 1)
    names = [clf_string_bytes(s).decode("utf-8") for s in re.findall(r'^\s*"((?:[^"\\]|\\.)*)"', m.group(1), re.M)]
    if not names:
        fail("%s: AGENTS is empty" % path, 1)
    return names


def is_word(c):
    return c.isascii() and (c.isalnum() or c == "_")


def word_regex(name):
    """NAME as a caseless whole word in the syntax Hyperscan, PCRE2 and a
    .clf regex literal all read alike: non-word bytes as \\xHH."""
    if not (is_word(name[0]) and is_word(name[-1])):
        fail("AI name %r does not begin and end with a word character: \\b would not "
             "mean contains_word's whole word" % name, 1)
    return "\\b" + "".join(chr(b) if is_word(chr(b)) else "\\x%02x" % b
                           for b in name.encode("utf-8")) + "\\b"


def synthetic(count, taken):
    """`count` product tokens such as `Xorbly-Fetch/`, as literal regexes
    (`Xorbly-Fetch\\/`), deterministic, distinct from each other and from
    `taken`."""
    rng = random.Random(SYNTH_SEED)
    cons, vows = "bcdfghjklmnprstvwxz", "aeiou"
    suffixes = ["-Fetch", "Bot", "-Crawler", "Spider", "-Agent", "-Indexer", "-Scan", "Reader",
                "-Preview", "", "", ""]
    out, seen = [], set(taken)
    while len(out) < count:
        w = "".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.randint(3, 4)))
        tok = w.capitalize() + rng.choice(suffixes) + "\\/"
        if tok not in seen:
            seen.add(tok)
            out.append(tok)
    return out


# ------------------------------------------------------------- programs

def write_tsv(path, pats):
    with open(path, "w", encoding="ascii") as f:
        for flags, rx in pats:
            f.write("%s\t%s\n" % ("i" if "i" in flags else "-", rx))


def write_uas(path, uas):
    with open(path, "wb") as f:
        for ua in uas:
            f.write((ua.encode("utf-8") if isinstance(ua, str) else ua) + b"\n")


def write_pattern_rules(path, pats):
    lines = ["// generated by bench/scale/run.py: the User-Agent matches one of %d patterns"
             % len(pats), "filter main(req: Request) {", '    let ua = req.header("user-agent")']
    for k in range(0, len(pats), CHAIN):
        chunk = pats[k:k + CHAIN]
        tests = ["ua.matches(/%s/%s)" % (rx, "i" if "i" in fl else "") for fl, rx in chunk]
        lines.append("    if " + "\n        || ".join(tests) + ' { reject "pattern" }')
    lines += ["    accept", "}", ""]
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines))


def write_length_rules(path):
    with open(path, "w", encoding="ascii") as f:
        f.write("// generated by bench/scale/run.py: the 166 ai.robots.txt names, whole words\n"
                'import "ai_robots"\n'
                "filter main(req: Request) {\n"
                '    if req.header("user-agent").contains_word(ai_robots.AGENTS) { reject "ai" }\n'
                "    accept\n}\n")


def compile_rules(classifyc, src, out):
    t0 = time.monotonic()
    p = subprocess.run([classifyc, "-I", os.path.join(ROOT, "stdlib"), src, "-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail("classifyc %s failed (%d):\n%s" % (show(src), p.returncode,
                                               p.stderr.decode(errors="replace")[-2000:]), 1)
    return time.monotonic() - t0


def run_scale(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        sys.stderr.write(err)
        fail("%s exited with status %d" % (" ".join(show(c) for c in cmd), p.returncode), 1)
    res = {"comments": []}
    for line in p.stdout.decode().splitlines():
        f = line.split("\t")
        if line.startswith("#"):
            res["comments"].append(line[1:].strip())
        elif f[0] == "verify":
            res["requests"], res["rejected"] = int(f[2]), int(f[3])
        elif f[0] == "result":
            res[f[1]] = {"median": float(f[2]), "p99": float(f[3]), "min": float(f[4]),
                         "passes": int(f[5])}
    for k in ("requests", "libclassify", "pcre2", "hs-floor"):
        if k not in res:
            fail("no %s in the output of %s" % (k, cmd[-1]), 1)
    return res


# -------------------------------------------------------------- lengths

# Real browser product tokens and comments, none of them an ai.robots.txt
# name (the run checks that no padded User-Agent is rejected).
BASE_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
PAD_TOKENS = [
    " (Windows NT 10.0; Win64; x64)", " AppleWebKit/537.36 (KHTML, like Gecko)",
    " Chrome/131.0.0.0", " Safari/537.36", " Edg/131.0.2903.86", " OPR/115.0.0.0",
    " (Macintosh; Intel Mac OS X 10_15_7)", " Version/17.4.1", " Mobile/15E148",
    " (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv)", " SamsungBrowser/26.0",
    " YaBrowser/24.10.0.0", " Vivaldi/6.9.3447.54", " (iPhone; CPU iPhone OS 17_5 like Mac OS X)",
    " UCBrowser/13.4.0.1306", " [FBAN/FBIOS;FBAV/489.0.0.38.109;FBBV/650123456;FBDV/iPhone15,3]",
    " Gecko/20100101", " Firefox/133.0", " (X11; Ubuntu; Linux x86_64; rv:133.0)",
    " Instagram 357.0.0.25.101 (iPhone15,3; iOS 17_5; en_US; en; scale=3.00; 1290x2796)",
]


def reps(length):
    """How often the VARIANTS User-Agents of `length` bytes repeat in a
    pass: short ones fill at least 256 KiB, so that a pass lasts tens of
    microseconds or more and the clock reads around it cost under 1%."""
    return max(1, 8 * KIB // length)


def padded(length, variant, hit):
    """A User-Agent of exactly `length` bytes: BASE_UA, then PAD_TOKENS
    from position `variant` on, cut to the length; with `hit`, its last
    bytes are HIT_TOKEN."""
    parts, n, i = [BASE_UA], len(BASE_UA), variant
    while n < length:
        t = PAD_TOKENS[i % len(PAD_TOKENS)]
        parts.append(t)
        n += len(t)
        i += 1
    ua = "".join(parts)[:length]
    if hit:
        ua = ua[:length - len(HIT_TOKEN)] + HIT_TOKEN
    assert len(ua) == length
    return ua


# ------------------------------------------------------------- reporting

def fmt_ns(ns):
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e4:
        return "%.1f us" % (ns / 1e3)
    if ns >= 1e3:
        return "%.2f us" % (ns / 1e3)
    return "%.0f ns" % ns


def fmt_len(n):
    return "%d KiB" % (n // KIB) if n % KIB == 0 else "%d B" % n


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def gp_str(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def decade_range(values):
    """[10^a, 10^b]: the decades around the values (log axis limits)."""
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))
    return lo, hi if hi > lo else lo * 10


def ns_label(ns):
    for unit, scale in (("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return "%g %s" % (ns / scale, unit)
    return "%g ns" % ns


def gnuplot_script(cpu, how, pat_rows, len_rows, n_ai, n_crawler, nuas):
    """scaling.gp: two log-log plots, libclassify and the PCRE2 loop."""
    def plot(out, rows, title, xlabel, xtics, xr, data, lib_title, pcre_title):
        lo, hi = decade_range([r[k]["median"] for _, r in rows for k in ("libclassify", "pcre2")])
        ytics = []
        v = lo
        while v <= hi * 1.001:
            ytics.append('"%s" %g' % (ns_label(v), v))
            v *= 10
        return """
set output "{out}"
set title {title}
set xlabel "{xlabel}"
set xrange [{x0}:{x1}]
set xtics ({xtics})
set yrange [{y0:g}:{y1:g}]  # the decades around the data, with a margin
set ytics ({ytics})
plot "{data}" using 1:2 with linespoints ls 1 title "{lt}", \\
     "" using 1:6 with linespoints ls 2 title "{pt}"
""".format(out=out, title=gp_str(title), xlabel=xlabel, x0=xr[0], x1=xr[1], xtics=xtics,
           y0=lo * 0.8, y1=hi * 1.25, ytics=", ".join(ytics), data=data, lt=lib_title, pt=pcre_title)

    def k(n):
        return "%dk" % (n // 1000) if n >= 1000 and n % 1000 == 0 else str(n)
    head = """# generated by bench/scale/run.py; run `gnuplot scaling.gp` in this directory
set encoding utf8
set terminal svg size 900,560 dynamic font "sans,13" background "#ffffff"
set termoption noenhanced
set logscale xy
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque
set ylabel "time per classification (median of passes)"
set style line 1 lc rgb "#1b6ac9" lw 2.5 pt 7 ps 1.1
set style line 2 lc rgb "#d9480f" lw 2.5 pt 5 ps 1.1
"""
    return head + plot(
        "scaling-patterns.svg", pat_rows,
        "Time per classification vs number of patterns\n"
        "%s, one thread, %s; %s real User-Agents\n"
        "patterns: %d AI names, %s crawler-user-agents regexes, then synthetic tokens"
        % (cpu, how, "{:,}".format(nuas), n_ai, "{:,}".format(n_crawler)),
        "patterns in the rule (N)", ", ".join('"%s" %d' % (k(n), n) for n in PATTERN_COUNTS),
        (7, 30000), "scaling-patterns.tsv", "libclassify (one Hyperscan scan + bytecode)",
        "PCRE2-JIT loop (N regexes, stops at the first hit)") + plot(
        "scaling-ua-length.svg", len_rows,
        "Time per classification vs User-Agent length\n"
        "%s, one thread, %s\n"
        "%d ai.robots.txt names, caseless whole words; padded browser UAs that match none"
        % (cpu, how, n_ai),
        "User-Agent length", ", ".join('"%s" %d' % (fmt_len(n), n) for n in LENGTHS),
        (70, 100000), "scaling-ua-length.tsv", "libclassify (contains_word over %d names)" % n_ai,
        "PCRE2-JIT loop (%d regexes)" % n_ai)


TSV_HEAD = ("# x\tlib_median_ns\tlib_p99_ns\tlib_min_ns\tlib_passes\tpcre2_median_ns\tpcre2_p99_ns"
            "\tpcre2_min_ns\tpcre2_passes\tratio_pcre2_over_lib\trequests\trejected"
            "\ths_floor_median_ns\ths_floor_p99_ns\n")


def tsv_row(x, r):
    L, P, F = r["libclassify"], r["pcre2"], r["hs-floor"]
    return "%d\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%d\t%.2f\t%d\t%d\t%.1f\t%.1f\n" % (
        x, L["median"], L["p99"], L["min"], L["passes"], P["median"], P["p99"], P["min"],
        P["passes"], P["median"] / L["median"], r["requests"], r["rejected"], F["median"], F["p99"])


def table(title, label, rows, extra=None):
    """Medians and p99s of libclassify and the PCRE2 loop, their ratio,
    the Hyperscan floor's median, then each row's note."""
    say(title)
    head = "  %-8s %11s %10s  %11s %10s  %9s  %10s  %s" % (
        label, "libclassify", "p99", "PCRE2 loop", "p99", "PCRE2/lib", "HS floor", extra or "")
    say(head.rstrip())
    for x, r in rows:
        L, P, F = r["libclassify"], r["pcre2"], r["hs-floor"]
        say(("  %-8s %11s %10s  %11s %10s  %8.1fx  %10s  %s" % (
            x, fmt_ns(L["median"]), fmt_ns(L["p99"]), fmt_ns(P["median"]), fmt_ns(P["p99"]),
            P["median"] / L["median"], fmt_ns(F["median"]), r.get("note", ""))).rstrip())
    say()


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--out-dir", help="where the data and plots go (default BUILD_DIR/bench)")
    ap.add_argument("--quick", action="store_true",
                    help="a quarter of the timing budget (noisier; about 30 s)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="timing budget per method and point (default 0.8, --quick 0.2)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    a = ap.parse_args()
    if a.seconds is not None and not 0 < a.seconds <= 60:
        fail("--seconds must be a number above 0 and at most 60")
    t_start = time.monotonic()

    build = os.path.abspath(a.build_dir)
    classifyc = os.path.join(build, "cli", "classifyc")
    scale_bin = os.path.join(build, "bench", "scale", "classify-scale")
    for p in (classifyc, scale_bin):
        if not os.access(p, os.X_OK):
            fail("%s not built (ninja -C %s; classify-scale needs libpcre2-dev and "
                 "subdir('scale') in bench/meson.build)" % (p, a.build_dir))
    corpora = os.path.abspath(a.corpora)
    if not os.path.isdir(corpora):
        fail("corpora not found at %s\n"
             "       (pass --corpora DIR or set CORPORA; the default is ../shared/corpora "
             "beside the repository)" % corpora)
    out = os.path.abspath(a.out_dir or os.path.join(build, "bench"))
    work = os.path.join(out, "scale-inputs")
    try:
        os.makedirs(work, exist_ok=True)
    except OSError as e:
        fail("%s: cannot make the output directory: %s" % (work, e.strerror or e))
    seconds = a.seconds if a.seconds else (0.2 if a.quick else 0.8)
    cpu, how = (None, "not pinned (--no-pin)") if a.no_pin else pick_cpu()
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    say("scale-bench: %s; %.2f s of timing per method and point, 3 rounds; inputs in %s"
        % (how, seconds, show(work)))

    # 1. workload
    entries, all_uas = load_corpora(corpora)
    sample = all_uas[:WORKLOAD]
    all_path = os.path.join(work, "corpus-uas.txt")
    sample_path = os.path.join(work, "uas-sample.txt")
    write_uas(all_path, all_uas)
    write_uas(sample_path, sample)
    say("scale-bench: workload: the first %d of %d corpus User-Agents shuffled with "
        "random.Random(%d) (%d unique; mean %.0f bytes)"
        % (len(sample), len(all_uas), SEED, len(set(sample)),
           sum(len(u.encode()) for u in sample) / len(sample)))

    # 2. pattern pool
    names = ai_agents()
    real = [("i", word_regex(n), "ai-robots %r" % n) for n in names]
    not_converted = []
    for n, e in enumerate(entries):
        lit, why = convert(e["pattern"])
        if lit:
            real.append(("", lit[1:-1], "crawler #%d %r" % (n, e["pattern"])))
        else:
            not_converted.append("crawler #%d %r: %s" % (n, e["pattern"], why))
    pool_path = os.path.join(work, "pool-real.tsv")
    write_tsv(pool_path, [(f, rx) for f, rx, _ in real])
    p = subprocess.run([scale_bin, "--check-pool", pool_path, all_path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        fail("classify-scale --check-pool failed (%d)" % p.returncode, 1)
    drop, checked = {}, None
    for line in p.stdout.decode().splitlines():
        f = line.split("\t")
        if f[0] == "refused":
            drop[int(f[1])] = "%s refuses it: %s" % (f[2], f[3])
        elif f[0] == "disagree":
            ua = all_uas[int(f[2]) - 1]
            drop[int(f[1])] = "Hyperscan %s, PCRE2 %s on %r" % (
                "matches" if f[3] == "1" else "no match", "matches" if f[4] == "1" else "no match",
                ua[:100])
        elif f[0] == "checked":
            checked = f
    if not checked:
        fail("classify-scale --check-pool printed no summary", 1)
    for why in not_converted:
        say("scale-bench: left out %s" % why)
    for i in sorted(drop):
        say("scale-bench: left out %s: %s" % (real[i][2], drop[i]))
    real = [r for i, r in enumerate(real) if i not in drop]
    n_ai = sum(1 for r in real if r[2].startswith("ai-robots"))
    pool = [(f, rx) for f, rx, _ in real]
    pool += [("", t) for t in synthetic(PATTERN_COUNTS[-1] - len(pool), {rx for _, rx in pool})]
    write_tsv(os.path.join(work, "pool.tsv"), pool)
    say("scale-bench: pattern pool: %d AI names + %d crawler regexes (checked alone with both "
        "engines on all %d corpus User-Agents: %d left out) + %d synthetic tokens = %d"
        % (n_ai, len(real) - n_ai, len(all_uas), len(drop) + len(not_converted),
           len(pool) - len(real), len(pool)))
    say()

    # 3. pattern sweep
    pat_rows = []
    for n in PATTERN_COUNTS:
        pats = pool[:n]
        tsv = os.path.join(work, "patterns-%d.tsv" % n)
        src = os.path.join(work, "patterns-%d.clf" % n)
        rules = os.path.join(work, "patterns-%d.bin" % n)
        write_tsv(tsv, pats)
        write_pattern_rules(src, pats)
        ct = compile_rules(classifyc, src, rules)
        r = run_scale(pin + [scale_bin, rules, tsv, sample_path, "--seconds", str(seconds)])
        r["note"] = "%d of %d rejected; classifyc %.1f s, %s" % (
            r["rejected"], r["requests"], ct, "{:,} bytes".format(os.path.getsize(rules)))
        pat_rows.append((n, r))
        say("scale-bench: N=%-6d libclassify %10s  PCRE2 loop %10s  HS floor %10s  (%s)"
            % (n, fmt_ns(r["libclassify"]["median"]), fmt_ns(r["pcre2"]["median"]),
               fmt_ns(r["hs-floor"]["median"]), r["note"]))

    # 4. User-Agent length sweep
    src = os.path.join(work, "ua-length.clf")
    rules = os.path.join(work, "ua-length.bin")
    write_length_rules(src)
    compile_rules(classifyc, src, rules)
    tsv = os.path.join(work, "ua-length-patterns.tsv")
    write_tsv(tsv, [("i", word_regex(nm)) for nm in names])
    hit_index = next(i for i, nm in enumerate(names) if nm == HIT_NAME)
    len_rows, hit_rows = [], []
    for length in LENGTHS:
        for hit in (False, True):
            # Repeated so that one timed pass holds at least 256 KiB.
            uas = [padded(length, v, hit) for v in range(VARIANTS)] * reps(length)
            path = os.path.join(work, "ua-%d%s.txt" % (length, "-hit" if hit else ""))
            write_uas(path, uas)
            r = run_scale(pin + [scale_bin, rules, tsv, path, "--seconds", str(seconds / 2 if hit else seconds)])
            want = len(uas) if hit else 0
            if r["rejected"] != want:
                fail("padded User-Agents of %d bytes%s: %d of %d rejected, expected %d (a padding "
                     "token matches an AI name?)" % (length, " with a hit" if hit else "",
                                                    r["rejected"], len(uas), want), 1)
            r["note"] = "%d UAs per pass (%d variants x %d)" % (len(uas), VARIANTS, reps(length))
            (hit_rows if hit else len_rows).append((length, r))
        say("scale-bench: L=%-7s libclassify %10s  PCRE2 loop %10s  (with %s at the end: %s / %s)"
            % (fmt_len(length), fmt_ns(len_rows[-1][1]["libclassify"]["median"]),
               fmt_ns(len_rows[-1][1]["pcre2"]["median"]), HIT_NAME,
               fmt_ns(hit_rows[-1][1]["libclassify"]["median"]), fmt_ns(hit_rows[-1][1]["pcre2"]["median"])))

    # 5. data, plots, table
    with open(os.path.join(out, "scaling-patterns.tsv"), "w") as f:
        f.write("# patterns (N)\n" + TSV_HEAD)
        for x, r in pat_rows:
            f.write(tsv_row(x, r))
    with open(os.path.join(out, "scaling-ua-length.tsv"), "w") as f:
        f.write("# User-Agent length (bytes), no match\n" + TSV_HEAD)
        for x, r in len_rows:
            f.write(tsv_row(x, r))
    with open(os.path.join(out, "scaling-ua-length-hit.tsv"), "w") as f:
        f.write("# User-Agent length (bytes), %r as the last bytes\n" % HIT_TOKEN + TSV_HEAD)
        for x, r in hit_rows:
            f.write(tsv_row(x, r))
    model = cpu_model()
    gp = os.path.join(out, "scaling.gp")
    with open(gp, "w", encoding="utf-8") as f:
        f.write(gnuplot_script(model, how, pat_rows, len_rows, len(names), len(real) - n_ai,
                               len(sample)))
    svgs = [os.path.join(out, "scaling-patterns.svg"), os.path.join(out, "scaling-ua-length.svg")]
    plotted = False
    if shutil.which("gnuplot"):
        p = subprocess.run(["gnuplot", "scaling.gp"], cwd=out, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.stderr.write(p.stderr.decode(errors="replace"))
            fail("gnuplot failed (%d) on %s" % (p.returncode, show(gp)), 1)
        plotted = True

    say()
    say("CPU: %s; one thread, %s. Median and p99 over timed passes of the workload "
        "(ns/classification = pass time / requests)." % (model, how))
    say()
    table("Patterns (one rule over N patterns; %s real User-Agents):" % "{:,}".format(len(sample)), "N",
          [("{:,}".format(x), r) for x, r in pat_rows])
    table("User-Agent length (%d AI names, whole words; %d padded UAs per length, no match):"
          % (len(names), VARIANTS), "length", [(fmt_len(x), r) for x, r in len_rows])
    for _, r in hit_rows:
        r["note"] = ""
    table("User-Agent length, %r as the last bytes (the PCRE2 loop stops at name %d of %d):"
          % (HIT_TOKEN, hit_index + 1, len(names)), "length", [(fmt_len(x), r) for x, r in hit_rows])
    if plotted:
        say("scale-bench: plots %s" % ", ".join(show(s) for s in svgs))
    else:
        say("scale-bench: gnuplot not found (apt-get install gnuplot-nox): plots not drawn; "
            "run `gnuplot scaling.gp` in %s" % show(out))
    say("scale-bench: data %s; %.0f s in all"
        % (", ".join(show(os.path.join(out, n)) for n in
                     ("scaling-patterns.tsv", "scaling-ua-length.tsv", "scaling-ua-length-hit.tsv",
                      "scaling.gp")), time.monotonic() - t_start))


if __name__ == "__main__":
    main()
