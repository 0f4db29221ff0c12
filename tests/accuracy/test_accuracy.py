#!/usr/bin/env python3
"""The accuracy report's counts have not changed (TAP).

usage: test_accuracy.py BUILD_DIR SOURCE_ROOT CORPORA_DIR

Runs `tools/accuracy.py BUILD_DIR --corpora CORPORA_DIR --check
tests/accuracy/expected.json` (docs/accuracy.md): every count of the report
(bots caught and browsers/devices rejected per package and per reason,
fp-candidates repeated) must equal the committed one, so a change to a
package, to clf-import or to the engine that moves a count fails here.
After an intended change, regenerate and review:

    python3 tools/accuracy.py build --update-expected tests/accuracy/expected.json --update-doc

Skipped when the corpora are absent.
"""
import json
import os
import subprocess
import sys

build, root, corpora = (os.path.abspath(a) if a else "" for a in sys.argv[1:4])
if not corpora or not os.path.isdir(corpora):
    print("1..0 # SKIP corpora not found at %s" % (corpora or "(empty path)"))
    sys.exit(0)
expected = os.path.join(root, "tests", "accuracy", "expected.json")
p = subprocess.run([sys.executable, os.path.join(root, "tools", "accuracy.py"), build, "--corpora", corpora,
                    "--check", expected], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
try:
    diffs = json.loads(p.stdout.decode().strip().splitlines()[-1])["differences"]
except (ValueError, IndexError, KeyError):
    print("1..1\nnot ok 1 - tools/accuracy.py ran (exit %d)" % p.returncode)
    for l in (p.stdout + p.stderr).decode("utf-8", "replace").splitlines()[:40]:
        print("# " + l)
    sys.exit(1)
with open(expected, encoding="utf-8") as f:
    exp = json.load(f)
checks = [("corpora sizes", "corpora.")]
for label in exp["packages"]:
    checks.append(("package %s: every count as in tests/accuracy/expected.json" % label, "packages.%s." % label))
print("1..%d" % (len(checks) + 1))
n = 0
for name, pfx in checks:
    n += 1
    mine = [d for d in diffs if d.startswith(pfx) or d.startswith(pfx.rstrip(".") + ":")]
    print("%s %d - %s" % ("not ok" if mine else "ok", n, name))
    for d in mine:
        print("# " + d)
rest = [d for d in diffs if not any(d.startswith(pfx) or d.startswith(pfx.rstrip(".") + ":") for _, pfx in checks)]
n += 1
print("%s %d - no other differences (new packages or keys)" % ("not ok" if rest else "ok", n))
for d in rest:
    print("# " + d)
if diffs:
    print("# after an intended change: python3 tools/accuracy.py BUILD --update-expected tests/accuracy/expected.json --update-doc")
sys.exit(1 if diffs else 0)
