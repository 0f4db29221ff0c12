#!/usr/bin/env python3
"""bench/run.py: build the benchmark's inputs and run classify-bench.

Called by `./run.sh bench` (which builds the project first) as

    python3 bench/run.py BUILD_DIR [--corpora DIR] [--seconds S] [--rounds R] [--no-pin]

Steps:
 1. the workload: every `instances` string of
    crawler-user-agents/crawler-user-agents.json (file order), then every
    `user_agent_string` of uap-core/tests/test_ua.yaml (file order), shuffled
    with random.Random(20240601).shuffle -- the construction of
    /work/shared/notes/peer-baselines.md -- written one per line to
    BUILD_DIR/bench/uas.txt;
 2. examples/main.clf compiled with classifyc -I stdlib to
    BUILD_DIR/bench/rules.bin;
 3. BUILD_DIR/bench/classify-bench RULES UAS stdlib/ai_robots.clf, pinned to
    one CPU with `taskset -c 1` when taskset exists and CPU 1 is usable
    (else CPU 0, else unpinned; the choice is printed).

The corpora directory is --corpora, else $CORPORA, else ../shared/corpora
beside the repository. Without it the run stops with exit status 2.
"""

import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from benchcommon import pick_cpu, show  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 20240601
CRAWLER = os.path.join("crawler-user-agents", "crawler-user-agents.json")
UAP = os.path.join("uap-core", "tests", "test_ua.yaml")


def fail(msg, code=2):
    sys.stderr.write("bench: %s\n" % msg)
    sys.exit(code)


def load_uap_uas(path):
    """The `user_agent_string` values of test_ua.yaml, in file order."""
    try:
        import yaml
    except ImportError:
        fail("python3-yaml is needed to read %s (apt-get install python3-yaml)" % path)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as f:
        doc = yaml.load(f, Loader=loader)
    return [c["user_agent_string"] for c in doc["test_cases"]]


def build_workload(corpora):
    crawler = os.path.join(corpora, CRAWLER)
    uap = os.path.join(corpora, UAP)
    missing = [p for p in (crawler, uap) if not os.path.isfile(p)]
    if missing:
        fail("corpora not found: %s\n"
             "       (pass --corpora DIR or set CORPORA; the default is ../shared/corpora "
             "beside the repository)" % ", ".join(missing))
    with open(crawler, encoding="utf-8") as f:
        entries = json.load(f)
    uas = [ua for e in entries for ua in e.get("instances", [])]
    n_crawler = len(uas)
    uap_uas = load_uap_uas(uap)
    uas += uap_uas
    random.Random(SEED).shuffle(uas)
    for ua in uas:
        if "\n" in ua or "\r" in ua:
            fail("a workload UA contains CR or LF: %r" % ua)
    return uas, n_crawler, len(uap_uas)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--seconds", type=float, default=4.0,
                    help="batch-timing budget per method (per-request timing gets half); default 4")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds the budget is split into, methods interleaved; default 5")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    a = ap.parse_args()

    build = os.path.abspath(a.build_dir)
    corpora = os.path.abspath(a.corpora)
    bench_bin = os.path.join(build, "bench", "classify-bench")
    classifyc = os.path.join(build, "cli", "classifyc")
    for p in (bench_bin, classifyc):
        if not os.access(p, os.X_OK):
            fail("%s not built (run ./run.sh bench, or ninja -C %s; classify-bench needs "
                 "libpcre2-dev)" % (p, a.build_dir))
    if not os.path.isdir(corpora):
        fail("corpora not found at %s\n"
             "       (pass --corpora DIR or set CORPORA; the default is ../shared/corpora "
             "beside the repository)" % corpora)

    out = os.path.join(build, "bench")
    uas, n_crawler, n_uap = build_workload(corpora)
    uas_path = os.path.join(out, "uas.txt")
    with open(uas_path, "wb") as f:
        for ua in uas:
            f.write(ua.encode("utf-8") + b"\n")
    print("bench: workload %s: %d UAs (%d crawler-user-agents instances + %d uap-core "
          "test_ua.yaml), %d unique, shuffled with random.Random(%d)"
          % (show(uas_path), len(uas), n_crawler, n_uap, len(set(uas)), SEED))

    rules = os.path.join(out, "rules.bin")
    subprocess.run([classifyc, "-I", os.path.join(ROOT, "stdlib"),
                    os.path.join(ROOT, "examples", "main.clf"), "-o", rules], check=True)
    print("bench: compiled examples/main.clf -> %s (%d bytes)"
          % (show(rules), os.path.getsize(rules)))

    cmd = [bench_bin, rules, uas_path, os.path.join(ROOT, "stdlib", "ai_robots.clf"),
           "--seconds", str(a.seconds), "--rounds", str(a.rounds)]
    cpu, how = (None, "not pinned (--no-pin)") if a.no_pin else pick_cpu()
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    print("bench: %s" % how)
    print("bench: %s\n" % " ".join(show(c) if os.path.isabs(c) else c for c in cmd))
    sys.stdout.flush()
    rc = subprocess.run(cmd).returncode
    if rc != 0:
        fail("classify-bench exited with status %d" % rc, 1)


if __name__ == "__main__":
    main()
