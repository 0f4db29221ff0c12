#!/usr/bin/env python3
"""End-to-end test of classify-run --explain (TAP version 12 on stdout).

    python3 explain_e2e.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR [--update]

From SOURCE_ROOT (so that the rules name their source examples/main.clf,
which classify-run can then read back), compiles examples/main.clf with
-I stdlib and checks:

- golden: `classify-run --explain --request F` on each bundled request
  examples/requests/F.http prints exactly tests/cli/explain/F.out. After
  a deliberate change to the rules, the stdlib or the explain texts, run
  with --update to rewrite the .out files, and review the diff;
- the verdict line is the one printed without --explain;
- --json --explain: the same verdicts, and an "explain" array holding the
  steps of the text output;
- the verdicts with --explain are those without it, for every User-Agent
  of the corpora (crawler-user-agents instances, uap-core's test_ua.yaml
  when python3-yaml is there); skipped without CORPORA_DIR;
- run from elsewhere, the steps are printed without the source lines.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from run_e2e import Tap, json_lines, run  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "explain")
STEP = re.compile(r"^( +)(\S+):(\d+): (.*)$")
SOURCE = re.compile(r"^ +\d+ \| ")


def steps_of(lines):
    """(file, line, indent, text) of the step lines of a request's output."""
    out = []
    for line in lines:
        m = STEP.match(line)
        if m and not SOURCE.match(line):
            out.append((m.group(2), int(m.group(3)), len(m.group(1)), m.group(4)))
    return out


def check_golden(tap, cr, rules, requests, update):
    for path in requests:
        name = os.path.splitext(os.path.basename(path))[0]
        golden = os.path.join(GOLDEN, name + ".out")
        r = run([cr, rules, "--explain", "--request", path])
        if update:
            with open(golden, "wb") as f:
                f.write(r.out)
        try:
            with open(golden, "rb") as f:
                want = f.read()
        except OSError as e:
            want = ("(cannot read %s: %s)" % (golden, e)).encode()
        tap.ok(r.rc == 0 and r.err == b"" and r.out == want,
               "golden: --explain on %s" % os.path.basename(path),
               "%s\nwant:\n%s" % (r, want.decode("utf-8", "replace")))

        plain = run([cr, rules, "--request", path])
        lines = r.lines()
        tap.ok(plain.rc == 0 and lines[:1] == plain.lines() and len(lines) > 1
               and all(line.startswith("  ") for line in lines[1:]),
               "%s: the verdict line first, as without --explain, then indented steps"
               % os.path.basename(path), "%s\n%s" % (r, plain))


def check_gptbot(tap, cr, rules):
    path = os.path.join("examples", "requests", "03-gptbot.http")
    lines = run([cr, rules, "--explain", "--request", path]).lines()
    # The || of contains_word and matches on the User-Agent is one
    # merged test (docs/classify-run.md).
    tap.ok(any(l.startswith("  examples/main.clf:74: any of [") and
               l.endswith('-> true: matched "GPTBot"') for l in lines),
           "03-gptbot: the set element that matched, at main.clf:74", "\n".join(lines))
    tap.ok("     74 | if (ua.contains_word(ai_robots.SPECIFIC) || "
           "ua.matches(AMBIGUOUS_AGENT_TOKEN) ||" in lines,
           "03-gptbot: the source line, trimmed, under its first step", "\n".join(lines))
    tap.ok(lines[-2:] == ['  examples/main.clf:76: reject "ai-robots-txt"',
                          '     76 | reject "ai-robots-txt"'],
           "03-gptbot: ends with the reject and its line", "\n".join(lines))


def check_json(tap, cr, rules, requests):
    r = run([cr, rules, "--explain", "--json", "--request"] + requests)
    plain = json_lines(run([cr, rules, "--json", "--request"] + requests))
    objs = json_lines(r)
    tap.ok(r.rc == 0 and objs is not None and plain is not None and len(objs) == len(plain)
           and all({k: o[k] for k in ("file", "verdict", "reason")} == p
                   for o, p in zip(objs, plain)),
           "--json --explain: the same file, verdict and reason as --json", r)
    good = objs is not None
    for o, path in zip(objs or [], requests):
        text = steps_of(run([cr, rules, "--explain", "--request", path]).lines())
        ex = o.get("explain")
        good = good and isinstance(ex, list) and [
            (s["file"], s["line"], 2 + 2 * s["depth"], s["text"]) for s in ex] == text
        good = good and all(list(s) == ["file", "line", "col", "depth", "text"]
                            and s["col"] > 0 for s in ex)
    tap.ok(good, "--json --explain: \"explain\" holds the text output's steps, "
           "as {file, line, col, depth, text}", r)


def corpus_uas(corpora):
    """User-Agents of the corpora, and a note on what was left out."""
    uas, notes = [], []
    crawler = os.path.join(corpora, "crawler-user-agents", "crawler-user-agents.json")
    with open(crawler, encoding="utf-8") as f:
        for entry in json.load(f):
            uas.extend(entry.get("instances", []))
    uap = os.path.join(corpora, "uap-core", "tests", "test_ua.yaml")
    try:
        import yaml
        with open(uap, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        uas.extend(c["user_agent_string"] for c in doc["test_cases"])
    except ImportError:
        notes.append("uap-core left out: no python3-yaml")
    # --ua-file reads lines: a UA with a line break would be two requests
    return [u for u in uas if "\n" not in u and "\r" not in u], notes


def check_corpora(tap, cr, rules, corpora, tmp):
    name = "--ua-file --explain: the same verdicts as without, on the corpora's User-Agents"
    if not corpora or not os.path.isdir(corpora):
        tap.n += 1  # Tap.ok escapes '#', which a SKIP directive needs
        tap.lines.append("ok %d - %s # SKIP corpora not found at %s"
                         % (tap.n, name, corpora or "(empty path)"))
        return
    uas, notes = corpus_uas(corpora)
    path = os.path.join(tmp, "uas.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(u + "\n" for u in uas))
    plain = json_lines(run([cr, rules, "--json", "--ua-file", path]))
    r = run([cr, rules, "--json", "--explain", "--ua-file", path])
    objs = json_lines(r)
    bad = [i for i, (o, p) in enumerate(zip(objs or [], plain or []))
           if {k: o[k] for k in p} != p or not o["explain"]
           or not o["explain"][-1]["text"].startswith(o["verdict"])]
    tap.ok(r.rc == 0 and objs is not None and plain is not None and len(objs) == len(uas)
           and len(plain) == len(uas) and not bad,
           "%s (%d%s)" % (name, len(uas), "; " + "; ".join(notes) if notes else ""),
           "%s\nfirst differences: %r" % (r, [(objs[i], plain[i]) for i in bad[:3]]))


def check_elsewhere(tap, cr, rules, tmp):
    req = os.path.abspath(os.path.join("examples", "requests", "01-chrome-home.http"))
    p = subprocess.run([cr, rules, "--explain", "--request", req], cwd=tmp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    lines = p.stdout.decode("utf-8", "replace").splitlines()
    tap.ok(p.returncode == 0 and len(lines) > 1 and lines[0] == "accept"
           and len(steps_of(lines)) == len(lines) - 1,
           "source files not readable from the current directory: steps only",
           "\n".join(lines))


def check_help(tap, cr):
    r = run([cr, "--help"])
    tap.ok(r.rc == 0 and b"--explain" in r.out, "--help describes --explain", r)


def main(argv):
    update = "--update" in argv
    argv = [a for a in argv if a != "--update"]
    if len(argv) != 5:
        sys.stderr.write("usage: %s CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR [--update]\n"
                         % argv[0])
        return 2
    classifyc, cr, root = (os.path.abspath(a) for a in argv[1:4])
    corpora = os.path.abspath(argv[4]) if argv[4] else ""
    os.chdir(root)
    requests = sorted(glob.glob(os.path.join("examples", "requests", "*.http")))

    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="classify-run-explain-") as tmp:
        rules = os.path.join(tmp, "rules.bin")
        r = run([classifyc, "-I", "stdlib", os.path.join("examples", "main.clf"), "-o", rules])
        if not tap.ok(r.rc == 0 and os.path.isfile(rules) and requests,
                      "classifyc compiles examples/main.clf", r):
            tap.done()
            return 1
        check_golden(tap, cr, rules, requests, update)
        check_gptbot(tap, cr, rules)
        check_json(tap, cr, rules, requests)
        check_corpora(tap, cr, rules, corpora, tmp)
        check_elsewhere(tap, cr, rules, tmp)
        check_help(tap, cr)
    tap.done()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
