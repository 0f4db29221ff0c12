#!/usr/bin/env python3
"""Golden tests for the compiler front end.

Each CASE.clf under lex/, parse/, check/ and lint/ is run through
classifyc (--tokens, --ast, --check and --check) from inside this
directory, with the options of a first line `// lint-args: ...`, so
that file names in messages are stable; stdout, stderr and the exit status
are compared with CASE.out. Prints TAP.

usage: run_golden.py CLASSIFYC [--update]
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"lex": "--tokens", "parse": "--ast", "check": "--check", "lint": "--check"}


def run(classifyc, mode, rel):
    with open(os.path.join(HERE, rel), "rb") as f:
        first = f.readline().decode("utf-8", "replace")
    extra = first.split()[2:] if first.startswith("// lint-args:") else []
    p = subprocess.run([classifyc, MODES[mode]] + extra + ["-I", "check/modules", "-I", "lint/modules",
                        "--stdlib", "/nonexistent/stdlib", rel],
                       cwd=HERE, capture_output=True, timeout=60,
                       env=dict({k: v for k, v in os.environ.items() if k != "CLASSIFY_PATH"},
                                SOURCE_DATE_EPOCH="1796083200"))  # 2026-12-01: data-age
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    text = ""
    if out:
        text += out
    if err:
        text += "--- stderr\n" + err
    return text + "--- exit %d\n" % p.returncode


def main():
    classifyc = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv
    cases = []
    for mode in sorted(MODES):
        for name in sorted(os.listdir(os.path.join(HERE, mode))):
            if name.endswith(".clf"):
                cases.append((mode, os.path.join(mode, name)))
    print("1..%d" % len(cases))
    failed = 0
    for i, (mode, rel) in enumerate(cases, 1):
        got = run(classifyc, mode, rel)
        gold = os.path.join(HERE, rel[:-4] + ".out")
        if update:
            with open(gold, "w") as f:
                f.write(got)
        want = open(gold).read() if os.path.exists(gold) else None
        if got == want:
            print("ok %d - %s" % (i, rel))
        else:
            failed += 1
            print("not ok %d - %s" % (i, rel))
            for line in ("--- want\n" + (want or "(missing golden file)\n") + "--- got\n" + got).splitlines():
                print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
