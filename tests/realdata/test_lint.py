#!/usr/bin/env python3
"""classifyc's corpus lints (lang/lint.c) against the real User-Agents of
the corpora (TAP).

    python3 test_lint.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

1. The stdlib packages and examples lint clean against the 2,000-odd
   crawler-user-agents instances and the uap-core test User-Agents.
2. The LightPanda class: a misspelt `contains("BingBot")` is warned, with
   the number of User-Agents that have it only ignoring case, counted
   here independently; the right spelling is not.
3. `contains("Go")`: the number of User-Agents where "Go" occurs but never
   as a whole word, counted here with a regex, is the one the warning
   gives; `contains_word("Go")` gets none.
"""
import glob
import json
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realdata_common import Tap, parse_args_or_skip, run, tempdir  # noqa: E402


def corpus_uas(args):
    uas = []
    with open(args.corpus("crawler-user-agents", "crawler-user-agents.json"), encoding="utf-8") as f:
        for e in json.load(f):
            uas += e.get("instances", [])
    for path in sorted(glob.glob(args.corpus("uap-core", "test_resources", "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for c in (yaml.safe_load(f) or {}).get("test_cases", []) or []:
                if c.get("user_agent_string"):
                    uas.append(c["user_agent_string"])
    return [u for u in dict.fromkeys(uas) if u and "\n" not in u and "\r" not in u]


def check(args, src, uas_file, tmp, name="t.clf"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(src)
    rc, _, err = run([args.classifyc, "--check", "--ua-corpus", uas_file, path])
    return rc, err.decode("utf-8", "replace")


def main():
    args = parse_args_or_skip()
    t = Tap()
    uas = corpus_uas(args)
    with tempdir() as tmp:
        uas_file = os.path.join(tmp, "uas.txt")
        with open(uas_file, "w", encoding="utf-8") as f:
            f.write("\n".join(uas) + "\n")

        # 1. our own packages lint clean
        noisy = []
        files = sorted(glob.glob(os.path.join(args.root, "stdlib", "*.clf")) +
                       glob.glob(os.path.join(args.root, "examples", "**", "*.clf"), recursive=True))
        for path in files:
            # a package without main is compiled with its tests (--test)
            with open(path, encoding="utf-8") as f:
                mode = "--check" if re.search(r"^filter main\(", f.read(), re.M) else "--test"
            rc, _, err = run([args.classifyc, mode, "-I", os.path.join(args.root, "stdlib"),
                              "--stdlib", "/nonexistent", "--ua-corpus", uas_file, path])
            err = err.decode("utf-8", "replace")
            if rc != 0 or "warning:" in err:
                noisy.append("%s: exit %d\n%s" % (os.path.relpath(path, args.root), rc, err[:800]))
        t.ok(not noisy, "%d stdlib packages and examples lint clean against %d User-Agents"
             % (len(files), len(uas)), "\n".join(noisy))

        # 2. the LightPanda class: Bingbot's User-Agent says "bingbot"
        exact = sum(1 for u in uas if "BingBot" in u)
        folded = sum(1 for u in uas if "bingbot" in u.lower())
        rc, err = check(args, 'filter main(req: Request) {\n'
                              '    if req.header("user-agent").contains("BingBot") { accept "b" }\n'
                              '    accept\n}\n', uas_file, tmp)
        want = "matches no User-Agent of the corpus as written, but %d ignoring case" % folded
        t.ok(exact == 0 and folded > 0 and rc == 0 and want in err,
             "contains(\"BingBot\"): %s" % want, "as written: %d\n%s" % (exact, err))
        # The real spelling, which the corpus has, is not warned.
        rc, err = check(args, 'filter main(req: Request) {\n'
                              '    if req.header("user-agent").contains("Googlebot") { accept "g" }\n'
                              '    accept\n}\n', uas_file, tmp)
        t.ok(rc == 0 and "warning" not in err, "contains(\"Googlebot\"): no warning", err)

        # 3. short tokens inside longer words
        word = re.compile(r"(?<![A-Za-z0-9_])Go(?![A-Za-z0-9_])")
        inside = sum(1 for u in uas if "Go" in u and not word.search(u))
        rc, err = check(args, 'filter main(req: Request) {\n'
                              '    if req.header("user-agent").contains("Go") { reject "go" }\n'
                              '    accept\n}\n', uas_file, tmp)
        want = "also matches inside longer words in %d of the %d User-Agents" % (inside, len(uas))
        t.ok(inside > 0 and rc == 0 and want in err, "contains(\"Go\"): %s" % want, err)
        rc, err = check(args, 'filter main(req: Request) {\n'
                              '    if req.header("user-agent").contains_word("Go") { reject "go" }\n'
                              '    accept\n}\n', uas_file, tmp)
        t.ok(rc == 0 and "warning" not in err, "contains_word(\"Go\"): no warning", err)
    t.finish()


if __name__ == "__main__":
    main()
