#!/usr/bin/env python3
"""Runs test_threads over the real User-Agent corpora (TAP).

usage: run_threads.py TEST_THREADS RULES.bin CORPORA_DIR

The requests are every `instances` string of crawler-user-agents.json and
every `user_agent_string` of uap-core tests/test_ua.yaml. Without the
corpora the test reports itself as skipped.
"""
import json
import os
import subprocess
import sys
import tempfile

exe, rules, corpora = sys.argv[1:4]
cua = os.path.join(corpora, "crawler-user-agents", "crawler-user-agents.json")
uap = os.path.join(corpora, "uap-core", "tests", "test_ua.yaml")
if not os.path.exists(cua):
    print("1..0 # SKIP corpora not found at %s" % corpora)
    sys.exit(0)
uas = [i for e in json.load(open(cua, encoding="utf-8")) for i in e.get("instances", [])]
try:
    import yaml
    uas += [c["user_agent_string"] for c in yaml.safe_load(open(uap, encoding="utf-8"))["test_cases"]]
except ImportError:
    pass
uas = [u.replace("\n", " ").replace("\r", " ") for u in uas]
with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
    f.write("\n".join(uas) + "\n")
try:
    p = subprocess.run([exe, rules, f.name], capture_output=True, text=True, timeout=600)
finally:
    os.unlink(f.name)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
sys.exit(p.returncode)
