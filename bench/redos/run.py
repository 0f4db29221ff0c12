#!/usr/bin/env python3
"""bench/redos/run.py: linear time on uap-core's ReDoS attack strings (a report, not a test).

    python3 bench/redos/run.py BUILD_DIR [--corpora DIR] [--runs N] [--sections ua[,os,device]]
                               [--bound-us US] [--no-compare] [--no-pin] [--json FILE]

Steps (bench/redos/README.md says more):
 1. tools/gen_uap_regexes.py turns uap-core/regexes.yaml (user_agent_parsers;
    --sections adds os_parsers and device_parsers) into
    BUILD_DIR/bench/redos/uap.clf, leaving out what Hyperscan refuses, and
    BUILD_DIR/cli/classifyc compiles it to BUILD_DIR/bench/redos/uap.bin;
 2. check: the compiled rules must name the same first matching pattern as
    Python's `re` over upstream's regexes, in order, for every User-Agent of
    uap-core/tests/test_ua.yaml (through classify-run) and, after step 4,
    for every attack string at 1 KiB (as the benchmark classified it);
    a disagreement stops the run with exit status 1;
 3. BUILD_DIR/bench/redos/cases.tsv: every recipe of
    uap-core/redos-attack-specs.jsonl (prefix + unit * count + suffix) with
    the count that makes it as long as possible without passing each length
    of the ladder (1, 2, 4, ... 64 KiB), the recipe with upstream's own
    count, and a control per length (ordinary User-Agents, test_ua.yaml
    joined with spaces and cut to the length);
 4. BUILD_DIR/bench/redos/classify-redos-bench times every case --runs times
    (default 21; one thread, pinned with taskset like bench/run.py);
 5. the report: per length the worst median over all recipes, ns per byte,
    the growth from 1 KiB to 64 KiB against the length's growth, a
    least-squares slope, each recipe's growth exponent, whether the fixed
    bound held; then, for context, Python's backtracking `re` on the worst
    recipes (each length in a subprocess killed after a few seconds).

The corpora directory is --corpora, else $CORPORA, else ../shared/corpora
beside the repository; without it the run stops with exit status 2. Exit
status 1 when something fails to build, load or agree; a slow run is
reported, never a failure.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.dont_write_bytecode = True
from benchcommon import pick_cpu, show  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPECS = os.path.join("uap-core", "redos-attack-specs.jsonl")
REGEXES = os.path.join("uap-core", "regexes.yaml")
TEST_UA = os.path.join("uap-core", "tests", "test_ua.yaml")
SECTION_LISTS = {"ua": "user_agent_parsers", "os": "os_parsers", "device": "device_parsers"}
KIB = 1024
LADDER = [1 * KIB, 2 * KIB, 4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB]

# The fixed bound this benchmark reports on (README.md): the median time of
# one classification of any attack User-Agent up to 64 KiB, the library's
# default header-value limit. Chosen once per ruleset from runs on the
# development VM, with room for a slower or busier machine; never tuned per
# run. user_agent_parsers alone: worst median about 2 ms at 64 KiB (about
# 25 ns per byte). With os_parsers and device_parsers (1,269 patterns) the
# worst recipe costs about 0.6-1 us per byte, 40-70 ms at 64 KiB: still
# linear, but a 25x larger constant, hence its own bound.
BOUND_US_UA = 10000.0
BOUND_US_FULL = 250000.0
BOUND_MAX_BYTES = 64 * KIB


def fail(msg, code=2):
    sys.stderr.write("redos-bench: %s\n" % msg)
    sys.exit(code)


def say(msg=""):
    print(msg)
    sys.stdout.flush()


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        fail("python3-yaml is needed (apt-get install python3-yaml)")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, "rb") as f:
        return yaml.load(f, Loader=loader)


def load_specs(path):
    specs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            d = json.loads(line)
            p, u, s = (d[k].encode("utf-8") for k in ("prefix", "unit", "suffix"))
            if not u or not isinstance(d["count"], int) or d["count"] < 1:
                fail("%s line %d: a recipe needs a non-empty unit and a count >= 1" % (path, n))
            specs.append({"line": n, "prefix": p, "unit": u, "suffix": s, "count": d["count"]})
    if not specs:
        fail("%s: no recipes" % path)
    return specs


def build(spec, count):
    return spec["prefix"] + spec["unit"] * count + spec["suffix"]


def count_for(spec, length):
    """The largest count whose attack string is at most `length` bytes (at
    least 1). Upstream's recipes end in the suffix that makes a backtracking
    regex fail, so the string is never cut."""
    fixed = len(spec["prefix"]) + len(spec["suffix"])
    return max(1, (length - fixed) // len(spec["unit"]))


def kib(n):
    return "%d KiB" % (n // KIB) if n % KIB == 0 else "%d B" % n


def esc(b, limit=40):
    """A recipe part for a report line: printable ASCII, escapes otherwise."""
    s = "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x22 else "\\x%02x" % c for c in b)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def recipe(spec):
    return '"%s" + "%s" * N + "%s"' % (esc(spec["prefix"]), esc(spec["unit"]), esc(spec["suffix"]))


# ------------------------------------------------------------ verification

def python_patterns(doc, sections):
    import re
    pats = []
    for sec in sections:
        key = SECTION_LISTS[sec]
        prefix = {"ua": "uap-", "os": "uap-os-", "device": "uap-device-"}[sec]
        for i, e in enumerate(doc[key]):
            try:
                rx = re.compile(e["regex"].encode("utf-8"),
                                re.IGNORECASE if e.get("regex_flag") == "i" else 0)
            except re.error:
                rx = None
            pats.append(("%s%d" % (prefix, i), rx))
    return pats


def first_match(pats, accepted, ua):
    for name, rx in pats:
        if name in accepted and rx is not None and rx.search(ua):
            return name
    return None


def check_agreement(pairs, pats, accepted, what):
    """pairs: (User-Agent, reason from libclassify or None). Exit 1 on the
    first disagreements with Python re."""
    bad = [(ua, g, first_match(pats, accepted, ua)) for ua, g in pairs]
    bad = [b for b in bad if b[1] != b[2]]
    if bad:
        for ua, g, e in bad[:5]:
            sys.stderr.write("redos-bench: disagreement: %r: libclassify %s, Python re %s\n"
                             % (ua[:120], g or "accept", e or "accept"))
        fail("%s: %d of %d User-Agents classified differently from Python re"
             % (what, len(bad), len(pairs)), 1)


def classify_run(classify_run_bin, rules, uas, tmpdir):
    """Reasons given by classify-run --ua-file for each UA (None: accepted)."""
    path = os.path.join(tmpdir, "verify-uas.txt")
    with open(path, "wb") as f:
        for ua in uas:
            f.write(ua + b"\n")
    p = subprocess.run([classify_run_bin, rules, "--ua-file", path, "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        fail("classify-run failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace")), 1)
    out = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    if len(out) != len(uas):
        fail("classify-run returned %d results for %d User-Agents" % (len(out), len(uas)), 1)
    return [o.get("reason") if o.get("verdict") == "reject" else None for o in out]


# ----------------------------------------------------------------- report

def fit_line(xs, ys):
    """Least squares y = a + b x; returns (a, b, r2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return a, b, (1 - ss_res / ss_tot) if ss_tot else 1.0


def exponent(xs, ys):
    """Slope of log y against log x (1 = linear, 2 = quadratic)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1)) for y in ys]
    return fit_line(lx, ly)[1]


PY_TIMER = r"""
import re, sys, time, yaml
doc = yaml.load(open(sys.argv[1], "rb"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
lists = []
for key in sys.argv[2].split(","):
    lists.append([])
    for e in doc[key]:
        try:
            lists[-1].append(re.compile(e["regex"].encode(),
                                        re.I if e.get("regex_flag") == "i" else 0))
        except re.error:
            pass
ua = open(sys.argv[3], "rb").read()
t = time.perf_counter()
for lst in lists:          # a uap-core parser: per list, the first pattern that matches
    for rx in lst:
        if rx.search(ua):
            break
print(time.perf_counter() - t)
"""


def python_re_times(regexes, lists, ua, tmpdir, timeout):
    """Seconds Python's re needs for the uap-core parse of `ua` (for each
    list, the first pattern that matches, in upstream order), in a
    subprocess; None if killed at timeout."""
    path = os.path.join(tmpdir, "py-ua.bin")
    with open(path, "wb") as f:
        f.write(ua)
    try:
        p = subprocess.run([sys.executable, "-c", PY_TIMER, regexes, lists, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        return float("nan")
    return float(p.stdout.decode().strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--sections", default="ua",
                    help="regexes.yaml lists in the ruleset: ua (user_agent_parsers, the default), "
                         "os, device; e.g. ua,os,device for all of them")
    ap.add_argument("--runs", type=int, default=21,
                    help="timed classifications per case (the median is reported); default 21")
    ap.add_argument("--bound-us", type=float, default=None,
                    help="the fixed bound, in microseconds, on the median time of one "
                         "classification of an attack string up to 64 KiB; default %g for "
                         "--sections ua, %g when os or device is included"
                         % (BOUND_US_UA, BOUND_US_FULL))
    ap.add_argument("--no-compare", action="store_true",
                    help="skip the Python re comparison")
    ap.add_argument("--compare-timeout", type=float, default=5.0,
                    help="seconds before a Python re measurement is killed; default 5")
    ap.add_argument("--header-value-limit", type=int, default=None, metavar="BYTES",
                    help="raise the library's header-value limit (64 KiB by default) so that "
                         "upstream's longer recipes (up to 152,000 bytes) are timed too; the "
                         "ladder and the bound stay at 64 KiB")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    ap.add_argument("--json", default=None, help="also write the figures as JSON to FILE")
    a = ap.parse_args()
    t_start = time.time()

    build_dir = os.path.abspath(a.build_dir)
    corpora = os.path.abspath(a.corpora)
    bench_bin = os.path.join(build_dir, "bench", "redos", "classify-redos-bench")
    classifyc = os.path.join(build_dir, "cli", "classifyc")
    crun = os.path.join(build_dir, "cli", "classify-run")
    for p in (bench_bin, classifyc, crun):
        if not os.access(p, os.X_OK):
            fail("%s not built (ninja -C %s; bench/meson.build needs subdir('redos'))"
                 % (p, a.build_dir))
    paths = {k: os.path.join(corpora, v) for k, v in
             (("specs", SPECS), ("regexes", REGEXES), ("test_ua", TEST_UA))}
    missing = [p for p in paths.values() if not os.path.isfile(p)]
    if missing:
        fail("corpora not found: %s\n"
             "       (pass --corpora DIR or set CORPORA; the default is ../shared/corpora "
             "beside the repository)" % ", ".join(missing))
    sections = [s.strip() for s in a.sections.split(",") if s.strip()]
    if not sections or any(s not in SECTION_LISTS for s in sections):
        fail("--sections takes ua, os, device (comma-separated)")
    sections = [s for s in ("ua", "os", "device") if s in sections]
    if a.bound_us is None:
        a.bound_us = BOUND_US_UA if sections == ["ua"] else BOUND_US_FULL
    if a.runs < 1:
        fail("--runs must be at least 1")

    out = os.path.join(build_dir, "bench", "redos")
    os.makedirs(out, exist_ok=True)

    # 1. the ruleset
    clf = os.path.join(out, "uap.clf")
    rules = os.path.join(out, "uap.bin")
    gen_report = os.path.join(out, "uap-gen.json")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_uap_regexes.py"),
                        paths["regexes"], "-o", clf, "--classifyc", classifyc,
                        "--sections", ",".join(sections), "--report", gen_report, "--quiet"])
    if r.returncode != 0:
        fail("tools/gen_uap_regexes.py failed (%d)" % r.returncode, 1)
    with open(gen_report, encoding="utf-8") as f:
        gen = json.load(f)
    r = subprocess.run([classifyc, clf, "-o", rules])
    if r.returncode != 0:
        fail("classifyc could not compile %s" % show(clf), 1)
    say("redos-bench: ruleset %s: %d of %d uap-core patterns (%s) accepted by classifyc, %d refused; "
        "compiled to %s (%d bytes)" % (show(clf), gen["accepted"], gen["total"],
                                       ", ".join(gen["sections"]), gen["refused"], show(rules),
                                       os.path.getsize(rules)))
    for ref in gen["refusals"]:
        say("redos-bench:   refused %s[%d]: %s" % (ref["list"], ref["index"], ref["why"]))

    # 2. check the rules against Python re
    doc = load_yaml(paths["regexes"])
    pats = python_patterns(doc, sections)
    refused = {"%s%d" % ({"user_agent_parsers": "uap-", "os_parsers": "uap-os-",
                           "device_parsers": "uap-device-"}[x["list"]], x["index"])
               for x in gen["refusals"]}
    accepted = {name for name, _ in pats if name not in refused}
    specs = load_specs(paths["specs"])
    test_uas = [c["user_agent_string"].encode("utf-8")
                for c in load_yaml(paths["test_ua"])["test_cases"]]
    test_uas = [u for u in test_uas if b"\n" not in u and b"\r" not in u]
    t0 = time.time()
    got = classify_run(crun, rules, test_uas, out)
    check_agreement([(ua, g) for ua, g in zip(test_uas, got)], pats, accepted, "test_ua.yaml")
    say("redos-bench: check: libclassify (classify-run) names the same first matching pattern as "
        "Python re on all %d test_ua.yaml User-Agents [%.1f s]" % (len(test_uas), time.time() - t0))

    # 3. the cases
    control_text = b" ".join(test_uas)
    while len(control_text) < LADDER[-1]:
        control_text += b" " + control_text
    cases = []   # (id, prefix, unit, count, suffix, cut)
    for k, s in enumerate(specs):
        for length in LADDER:
            cases.append(("s%d/%d" % (k, length), s["prefix"], s["unit"], count_for(s, length),
                          s["suffix"], 0))
        cases.append(("s%d/native" % k, s["prefix"], s["unit"], s["count"], s["suffix"], 0))
    for length in LADDER:
        cases.append(("control/%d" % length, b"", control_text[:length], 1, b"", 0))
    cases_path = os.path.join(out, "cases.tsv")
    with open(cases_path, "w", encoding="ascii") as f:
        for cid, p, u, c, sfx, cut in cases:
            f.write("%s\t%s\t%s\t%d\t%s\t%d\n" % (cid, p.hex(), u.hex(), c, sfx.hex(), cut))
    say("redos-bench: %s: %d recipes from %s x %d lengths (%s .. %s) + each recipe at "
        "upstream's count + %d controls" % (show(cases_path), len(specs), SPECS, len(LADDER),
                                            kib(LADDER[0]), kib(LADDER[-1]), len(LADDER)))

    # 4. time them
    cmd = [bench_bin, rules, cases_path, "--runs", str(a.runs)]
    if a.header_value_limit:
        cmd += ["--header-value-limit", str(a.header_value_limit)]
    cpu, how = (None, "not pinned (--no-pin)") if a.no_pin else pick_cpu()
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    say("redos-bench: %s" % how)
    say("redos-bench: %s" % " ".join(show(c) if os.path.isabs(c) else c for c in cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE)
    if p.returncode != 0:
        fail("classify-redos-bench exited with status %d" % p.returncode, 1)
    comments, rows = [], {}
    for line in p.stdout.decode().splitlines():
        if line.startswith("#"):
            comments.append(line[1:].strip())
            continue
        cid, length, verdict, reason, med, mn, mx = line.split("\t")
        rows[cid] = {"length": int(length), "verdict": verdict, "reason": reason,
                     "median": None if med == "-" else int(med),
                     "min": None if mn == "-" else int(mn), "max": None if mx == "-" else int(mx)}
    for c in comments[:-1]:
        say("redos-bench: %s" % c)

    # the attack strings at 1 KiB, as classify-redos-bench classified them
    t0 = time.time()
    pairs = []
    for k, s in enumerate(specs):
        r = rows["s%d/%d" % (k, LADDER[0])]
        pairs.append((build(s, count_for(s, LADDER[0])),
                      r["reason"] if r["verdict"] == "reject" else None))
    check_agreement(pairs, pats, accepted, "attack strings at %s" % kib(LADDER[0]))
    say("redos-bench: check: same first matching pattern as Python re on all %d attack strings "
        "at %s (%d of them match a pattern) [%.1f s]"
        % (len(specs), kib(LADDER[0]), sum(1 for _, g in pairs if g), time.time() - t0))

    report(a, specs, rows, gen, paths, out, t_start)


def report(a, specs, rows, gen, paths, out, t_start):
    ns = len(specs)
    say()
    say("## Linear time on uap-core's ReDoS attack strings")
    say()
    say("Ruleset: %d uap-core patterns (%s) in one Hyperscan database; %d recipes of "
        "redos-attack-specs.jsonl; median of %d timed classifications per (recipe, length)."
        % (gen["accepted"], ", ".join(gen["sections"]), ns, a.runs))
    say()
    hdr = ("| length | worst median | recipe (line) | worst fastest run | median of medians "
           "| worst ns/byte | median ns/byte | control (ordinary UAs) | slowest single run |")
    say(hdr)
    say("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    per_len = []
    for length in LADDER:
        rs = [(k, rows["s%d/%d" % (k, length)]) for k in range(ns)]
        timed = [(k, r) for k, r in rs if r["median"] is not None]
        refused = len(rs) - len(timed)
        if not timed:
            fail("every attack string of %s was refused by a library limit" % kib(length), 1)
        worst_k, worst = max(timed, key=lambda kr: kr[1]["median"])
        meds = [r["median"] for _, r in timed]
        nspb = [r["median"] / r["length"] for _, r in timed]
        ctl = rows["control/%d" % length]
        slowest = max(r["max"] for _, r in timed)
        worst_min = max(timed, key=lambda kr: kr[1]["min"])
        per_len.append({"length": length, "worst_ns": worst["median"], "worst_len": worst["length"],
                        "worst_min_ns": worst_min[1]["min"], "worst_min_len": worst_min[1]["length"],
                        "worst_min_line": specs[worst_min[0]]["line"],
                        "worst_line": specs[worst_k]["line"], "worst_k": worst_k,
                        "median_ns": statistics.median(meds), "worst_ns_per_byte": max(nspb),
                        "median_ns_per_byte": statistics.median(nspb),
                        "control_ns": ctl["median"], "slowest_single_ns": slowest,
                        "refused": refused})
        say("| %s | %s µs | %d | %s µs | %s µs | %.1f | %.2f | %s µs | %s µs |" % (
            kib(length), fmt_us(worst["median"]), specs[worst_k]["line"],
            fmt_us(worst_min[1]["min"]), fmt_us(statistics.median(meds)), max(nspb), statistics.median(nspb),
            fmt_us(ctl["median"]) if ctl["median"] is not None else "-", fmt_us(slowest)))
    say()
    say("Each attack string is the longest prefix + unit * N + suffix that fits the length (up "
        "to one unit shorter). \"Worst median\": the largest median over the %d recipes, and "
        "its recipe's line in the .jsonl; \"worst fastest run\": the largest per-recipe minimum "
        "(the least noisy figure); ns/byte = median / actual length; \"control\": ordinary "
        "User-Agents (test_ua.yaml joined with spaces) cut to the length; \"slowest single run\": "
        "the largest of all %d x %d samples at that length (where the shared machine's noise shows "
        "first)." % (ns, ns, a.runs))

    # linearity
    first, last = per_len[0], per_len[-1]
    len_ratio = last["worst_len"] / first["worst_len"] if first["worst_len"] else 0
    worst_ratio = last["worst_ns"] / first["worst_ns"]
    xs = [p["worst_len"] for p in per_len]
    ys = [p["worst_ns"] for p in per_len]
    fa, fb, r2 = fit_line(xs, ys)
    min_ratio = last["worst_min_ns"] / first["worst_min_ns"]
    ma, mb, mr2 = fit_line([p["worst_min_len"] for p in per_len], [p["worst_min_ns"] for p in per_len])
    # per recipe: growth 1 KiB -> 64 KiB and the exponent over 4..64 KiB
    growth, expo = [], []
    for k in range(ns):
        lo, hi = rows["s%d/%d" % (k, LADDER[0])], rows["s%d/%d" % (k, LADDER[-1])]
        if lo["median"] and hi["median"]:
            growth.append((hi["median"] / lo["median"], hi["length"] / lo["length"], k))
        pts = [rows["s%d/%d" % (k, L)] for L in LADDER if L >= 4 * KIB]
        pts = [p for p in pts if p["median"] is not None]
        if len(pts) >= 3:
            expo.append((exponent([p["length"] for p in pts], [p["median"] for p in pts]), k))
    gmax = max(growth)
    emax, emin = max(expo), min(expo)
    say()
    say("Linearity:")
    say("- worst recipe per length, %s -> %s: time x%.1f for length x%.1f (linear: x%.0f; "
        "quadratic would be x%.0f)." % (kib(LADDER[0]), kib(LADDER[-1]), worst_ratio, len_ratio,
                                        len_ratio, len_ratio ** 2))
    say("- least-squares line through those worst medians: %.2f µs + %.1f ns/byte x length "
        "(R^2 = %.4f)." % (fa / 1000, fb, r2))
    say("- the same with each recipe's fastest run (less noise): time x%.1f; line %.2f µs + "
        "%.1f ns/byte x length (R^2 = %.4f)." % (min_ratio, ma / 1000, mb, mr2))
    say("- per recipe, %s -> %s: the largest growth is x%.1f (line %d, length x%.1f); "
        "growth exponent (log-log slope over 4..64 KiB) %.2f to %.2f over the %d recipes "
        "(1 = linear, 2 = quadratic; highest: line %d, %s)."
        % (kib(LADDER[0]), kib(LADDER[-1]), gmax[0], specs[gmax[2]]["line"], gmax[1], emin[0],
           emax[0], len(expo), specs[emax[1]]["line"], recipe(specs[emax[1]])))
    worst_overall = max(per_len, key=lambda p: p["worst_ns"])
    wk = worst_overall["worst_k"]
    say("- worst recipe overall: line %d, %s (%s at %s: %s)." % (
        specs[wk]["line"], recipe(specs[wk]), fmt_us(worst_overall["worst_ns"]) + " µs",
        kib(worst_overall["length"]), rows["s%d/%d" % (wk, worst_overall["length"])]["reason"]
        if rows["s%d/%d" % (wk, worst_overall["length"])]["verdict"] == "reject" else "accepted"))

    # upstream's own counts
    nat = [(k, rows["s%d/native" % k]) for k in range(ns)]
    nat_t = [(k, r) for k, r in nat if r["median"] is not None]
    nat_ref = [(k, r) for k, r in nat if r["median"] is None]
    parts = []
    for label, sel in (("up to 64 KiB", lambda r: r["length"] <= BOUND_MAX_BYTES),
                       ("over 64 KiB", lambda r: r["length"] > BOUND_MAX_BYTES)):
        grp = [(k, r) for k, r in nat_t if sel(r)]
        if grp:
            wk, wr = max(grp, key=lambda kr: kr[1]["median"])
            parts.append("%d strings %s classified, worst %s µs (line %d, %d bytes, %.1f ns/byte)"
                         % (len(grp), label, fmt_us(wr["median"]), specs[wk]["line"], wr["length"],
                            wr["median"] / wr["length"]))
    if nat_ref:
        parts.append("%d longer ones (%d..%d bytes) refused by clf_ctx_add_header "
                     "(CLF_E_LIMIT: the header-value limit, 64 KiB by default) before any matching"
                     % (len(nat_ref), min(r["length"] for _, r in nat_ref),
                        max(r["length"] for _, r in nat_ref)))
    say("- the recipes at upstream's own counts (%d..%d bytes; upstream's test wants each under "
        "500 ms): %s." % (min(r["length"] for _, r in nat), max(r["length"] for _, r in nat),
                          "; ".join(parts)))

    # the bound
    within = [rows["s%d/%d" % (k, L)] for k in range(ns) for L in LADDER if L <= BOUND_MAX_BYTES]
    within += [r for _, r in nat_t if r["length"] <= BOUND_MAX_BYTES]
    within = [r for r in within if r["median"] is not None]
    worst_med = max(r["median"] for r in within)
    over_med = sum(1 for r in within if r["median"] > a.bound_us * 1000)
    over_any = sum(1 for r in within if r["max"] > a.bound_us * 1000)
    held = over_med == 0
    say()
    say("Bound: every classification of an attack User-Agent of at most 64 KiB takes under "
        "%s µs (median of %d runs). %s: the worst median was %s µs (%.0f%% of the bound) over "
        "%d strings; %d single runs of %d exceeded it."
        % (fmt_us(a.bound_us * 1000), a.runs, "HELD" if held else "EXCEEDED", fmt_us(worst_med),
           100.0 * worst_med / (a.bound_us * 1000), len(within), over_any, len(within) * a.runs))

    comparison = None
    if not a.no_compare:
        comparison = compare_python(a, specs, rows, gen, paths, out, per_len)

    say()
    say("redos-bench: done in %.0f s" % (time.time() - t_start))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"ruleset": gen, "runs": a.runs, "per_length": per_len,
                       "fit": {"a_ns": fa, "b_ns_per_byte": fb, "r2": r2},
                       "fit_min": {"a_ns": ma, "b_ns_per_byte": mb, "r2": mr2},
                       "growth_max": gmax[0], "exponent_range": [emin[0], emax[0]],
                       "bound_us": a.bound_us, "bound_held": held, "worst_median_ns": worst_med,
                       "python_re": comparison}, f, indent=1)


def fmt_us(ns):
    us = ns / 1000.0
    if us >= 100:
        return "{:,.0f}".format(us)
    if us >= 10:
        return "%.1f" % us
    return "%.2f" % us


def compare_python(a, specs, rows, gen, paths, out, per_len):
    """Python re (a backtracking engine) on the two recipes that are slowest
    for libclassify at 64 KiB, same regexes, same strings."""
    ks = sorted(range(len(specs)), key=lambda k: -(rows["s%d/%d" % (k, LADDER[-1])]["median"] or 0))
    lists = ",".join(gen["sections"])
    res = []
    say()
    say("For context, Python's re (a backtracking engine) parsing the same strings as a uap-core "
        "parser does (for each list, the first of the same regexes that matches, in upstream "
        "order), on the 2 recipes slowest for libclassify; one subprocess per string, killed "
        "after %g s:" % a.compare_timeout)
    say()
    say("| recipe (line) | engine | " + " | ".join(kib(L) for L in LADDER) + " | growth |")
    say("|" + "---|" * (len(LADDER) + 3))
    for k in ks[:2]:
        s = specs[k]
        py = []
        for L in LADDER:
            t = python_re_times(paths["regexes"], lists, build(s, count_for(s, L)), out,
                                a.compare_timeout)
            py.append(t)
            if t is None:
                break
        py += [None] * (len(LADDER) - len(py))
        ours = [rows["s%d/%d" % (k, L)]["median"] for L in LADDER]
        say("| %d | libclassify | %s | x%.0f |" % (
            s["line"], " | ".join(fmt_us(v) + " µs" for v in ours), ours[-1] / ours[0]))
        cells = []
        for t in py:
            cells.append("> %g s" % a.compare_timeout if t is None else fmt_us(t * 1e9) + " µs")
        grow = ("x%.0f" % (py[-1] / py[0])) if py[-1] and py[0] else "-"
        say("| %d | Python re | %s | %s |" % (s["line"], " | ".join(cells), grow))
        res.append({"line": s["line"], "libclassify_ns": ours,
                    "python_s": [t for t in py]})
    return res


if __name__ == "__main__":
    main()
