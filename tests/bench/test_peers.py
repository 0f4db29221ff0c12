#!/usr/bin/env python3
"""tests/bench/test_peers.py: the benchmark's verification as a test (TAP).

    python3 test_peers.py BUILD_DIR SOURCE_ROOT CORPORA_DIR

Runs `bench/run.py BUILD_DIR --verify-only`: on the 3,717 requests built
from the real corpora, libclassify (per-field calls and the one-call
hand-over), the C loop over PCRE2-JIT regexes and its alternations, the
RE2, Rust and Go peers (those whose toolchain is installed) and the Lua
5.4 and LuaJIT peers must give the same verdict and reason for
every request, for stdlib/default.clf and the ai_robots package, and
libclassify must allocate nothing while classifying. The peers are
independent implementations of the same rules, so this is a differential
test of the compiler and the interpreter on real data, and it keeps the
benchmark runnable. Skipped when the corpora are absent.
"""
import os
import subprocess
import sys
import tempfile


def main():
    build, root, corpora = sys.argv[1:4]
    if not os.path.isdir(corpora):
        print("1..0 # SKIP corpora not found at %s" % corpora)
        return 0
    print("1..1")
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as out:
        r = subprocess.run([sys.executable, os.path.join(root, "bench", "run.py"), build,
                            "--verify-only", "--corpora", corpora, "--out-dir", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ok = r.returncode == 0
    print("%s 1 - every benchmark method gives libclassify's verdicts on the real workload"
          % ("ok" if ok else "not ok"))
    for line in r.stdout.splitlines():
        print("# " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
