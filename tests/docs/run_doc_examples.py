#!/usr/bin/env python3
"""Compiles every .clf example in the documentation, so the docs cannot
drift from the language.

Fenced blocks tagged ```clf are whole files; ```clf-stmt blocks are
statements, compiled inside `filter main(req: Request) { ... accept }`.
Each must compile with no error and no warning (classifyc --check -I
stdlib); a whole file with `test` blocks must also pass classifyc --test.
Prints TAP, one line per example, named FILE:LINE.

usage: run_doc_examples.py CLASSIFYC SOURCE_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

DOCS = ["docs/language.md", "README.md", "docs/nginx.md"]
FENCE = re.compile(r"^```(clf|clf-stmt)\s*$")


def examples(root):
    for rel in DOCS:
        path = os.path.join(root, rel)
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            yield rel, start, m.group(1), "\n".join(lines[start:j]) + "\n"
            i = j + 1


def main():
    classifyc, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    found = list(examples(root))
    print("1..%d" % len(found))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (rel, line, kind, text) in enumerate(found, 1):
            if kind == "clf-stmt":
                body = "".join("    " + l + "\n" for l in text.splitlines())
                text = "filter main(req: Request) {\n" + body + "    accept\n}\n"
            src = os.path.join(tmp, "example%d.clf" % n)
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            cmd = [classifyc, "-I", os.path.join(root, "stdlib"), "--stdlib", "/nonexistent"]
            p = subprocess.run(cmd + ["--check", src], capture_output=True, timeout=120)
            ok = p.returncode == 0 and not p.stderr
            detail = p.stderr.decode("utf-8", "replace")
            if ok and re.search(r"^test \"", text, re.M):
                t = subprocess.run(cmd + ["--test", src], capture_output=True, timeout=120)
                ok = t.returncode == 0
                detail = (t.stdout + t.stderr).decode("utf-8", "replace")
            print("%s %d - %s:%d (%s)" % ("ok" if ok else "not ok", n, rel, line, kind))
            if not ok:
                failures += 1
                for l in detail.splitlines():
                    print("# " + l)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
