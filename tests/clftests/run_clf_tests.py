#!/usr/bin/env python3
"""Runs the in-language `test` blocks of every .clf file in stdlib/ and
examples/ that has some (classifyc --test), and reports each test as a
TAP line, so a failing package test fails the suite.

usage: run_clf_tests.py CLASSIFYC SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

DIRS = ["stdlib", "examples"]
LINE = re.compile(r'^(ok|FAIL|ERROR)\s+(.*)$')


def main():
    classifyc, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    files = []
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                if name.endswith(".clf") and re.search(r'^test "', open(path, encoding="utf-8").read(), re.M):
                    files.append(path)
    results = []
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        p = subprocess.run([classifyc, "--test", "-I", os.path.join(root, "stdlib"),
                            "--stdlib", "/nonexistent", rel],
                           cwd=root, capture_output=True, timeout=300)
        out = p.stdout.decode("utf-8", "replace").splitlines()
        lines = [LINE.match(l) for l in out]
        lines = [m for m in lines if m]
        if not lines or p.returncode not in (0, 1):
            results.append((False, "%s: classifyc --test exited %d" % (rel, p.returncode),
                            p.stderr.decode("utf-8", "replace")))
            continue
        for m in lines:
            results.append((m.group(1) == "ok", "%s: %s" % (rel, m.group(2)), ""))
        if p.returncode == 1 and all(m.group(1) == "ok" for m in lines):
            results.append((False, "%s: exit 1 with every test ok" % rel, ""))
    print("1..%d" % len(results))
    for n, (ok, name, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
        for l in detail.splitlines():
            print("# " + l)
    return 0 if all(r[0] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
