#!/usr/bin/env python3
"""Compiles every .clf example in the documentation (docs/language.md,
README.md, docs/nginx.md, stdlib/README.md), so the docs cannot drift from
the language.

Fenced blocks tagged ```clf are whole files; ```clf-stmt blocks are
statements, compiled inside `filter main(req: Request) { ... accept }`.
Each must compile with no error and no warning (classifyc --check -I
stdlib); a whole file with `test` blocks must also pass classifyc --test.
A ```clf-rewrite SET block is a body for rewrite set SET of the last
```clf file, and the ```clf-rewritten block after it what classify-run
--rewrite SET must make of it, byte for byte.
Prints TAP, one line per example, named FILE:LINE.

usage: run_doc_examples.py CLASSIFYC SOURCE_ROOT [CLASSIFY_RUN]
"""
import os
import re
import subprocess
import sys
import tempfile

DOCS = ["docs/language.md", "README.md", "docs/nginx.md", "stdlib/README.md", "docs/changing-policy.md"]
FENCE = re.compile(r"^```(clf|clf-stmt|clf-rewrite|clf-rewritten)(?:[ \t]+(\S+))?\s*$")


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
            yield rel, start, m.group(1), m.group(2), "\n".join(lines[start:j]) + "\n"
            i = j + 1


def rewrite_example(cmd, classify_run, tmp, source, setname, body, want):
    """Compiles source and rewrites body with set setname: (ok, detail)."""
    if classify_run is None:
        return False, "no CLASSIFY_RUN given"
    if source is None or want is None:
        return False, "a clf-rewrite block needs a clf block before it and a clf-rewritten after"
    src, out = os.path.join(tmp, "rewrite.clf"), os.path.join(tmp, "rewrite.bin")
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    p = subprocess.run(cmd + [src, "-o", out], capture_output=True, timeout=120)
    if p.returncode != 0:
        return False, p.stderr.decode("utf-8", "replace")
    r = subprocess.run([classify_run, out, "--rewrite", setname], input=body.encode(),
                       capture_output=True, timeout=120)
    got = r.stdout.decode("utf-8", "replace")
    if r.returncode != 0 or got != want:
        return False, "exit %d, stderr %r\ngot:  %r\nwant: %r" % (r.returncode, r.stderr, got, want)
    return True, ""


def main():
    classifyc, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    classify_run = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    found = [e for e in examples(root) if e[2] != "clf-rewritten"]
    print("1..%d" % len(found))
    failures = 0
    everything = list(examples(root))
    with tempfile.TemporaryDirectory() as tmp:
        last_file = None
        n = 0
        for k, (rel, line, kind, arg, text) in enumerate(everything):
            if kind == "clf-rewritten":
                continue
            n += 1
            cmd = [classifyc, "-I", os.path.join(root, "stdlib"), "--stdlib", "/nonexistent"]
            if kind == "clf-rewrite":
                nxt = everything[k + 1] if k + 1 < len(everything) else None
                want = nxt[4] if nxt and nxt[2] == "clf-rewritten" else None
                ok, detail = rewrite_example(cmd, classify_run, tmp, last_file, arg, text, want)
                print("%s %d - %s:%d (%s %s)" % ("ok" if ok else "not ok", n, rel, line, kind, arg))
                if not ok:
                    failures += 1
                    for l in detail.splitlines():
                        print("# " + l)
                continue
            if kind == "clf-stmt":
                body = "".join("    " + l + "\n" for l in text.splitlines())
                text = "filter main(req: Request) {\n" + body + "    accept\n}\n"
            else:
                last_file = text
            src = os.path.join(tmp, "example%d.clf" % n)
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
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
