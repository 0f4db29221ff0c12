#!/usr/bin/env python3
"""realdata: stdlib/crawlers.clf and ai_robots.check against the corpora (TAP).

    test_crawlers.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Checks:
  * `tools/gen_crawlers.py --check` passes (stdlib/crawlers.clf is what the
    generator writes from the corpora's crawler-user-agents.json now), and
    every upstream pattern was converted (none skipped);
  * every `instances` User-Agent of every crawler-user-agents entry is
    rejected by `crawlers.check` (through classify-run on a one-line main),
    with the reason "crawler:<tag>" that the generator's model (Python `re`
    on upstream's patterns, tags in TAG_ORDER) predicts: the first tag in
    that order one of whose patterns matches. Exclusions: none at this
    snapshot (EXCLUDED below lists instances that cannot be rejected and why);
  * every ai.robots.txt name, as a bot User-Agent `Mozilla/5.0 (compatible;
    NAME/1.0; +https://example.com/bot)`, is rejected by `ai_robots.check`
    with "ai-robots-txt:<category>" as the generator's model predicts, and
    `ai_robots.check` passes on /robots.txt.
"""

import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata_common as rc  # noqa: E402

EXPECTED = (1498, 2116)   # entries, instances at crawler-user-agents @ 7c7f9f2
# Instances that crawlers.check does not reject with the model's reason, and why.
# Instances not rejected on purpose: those of the patterns that
# tools/gen_crawlers.py leaves out (its EXCLUDED says why).


def compile_with(args, tmp, body, name):
    src = os.path.join(tmp, name + ".clf")
    with open(src, "w") as f:
        f.write(body)
    out = os.path.join(tmp, name + ".bin")
    cmd = [args.classifyc, "-I", os.path.join(args.root, "stdlib"), src, "-o", out]
    code, so, se = rc.run(cmd)
    diag = "$ %s\nexit %d\n%s%s" % (" ".join(cmd), code, so.decode("utf-8", "replace"), se.decode("utf-8", "replace"))
    return (out if code == 0 else None), diag


def main():
    args = rc.parse_args_or_skip()
    sys.path.insert(0, os.path.join(args.root, "tools"))
    import gen_crawlers
    import gen_ai_robots
    tap = rc.Tap()

    code, so, se = rc.run([sys.executable, os.path.join(args.root, "tools", "gen_crawlers.py"), "--check",
                           args.corpus("crawler-user-agents", "crawler-user-agents.json")])
    tap.ok(code == 0, "tools/gen_crawlers.py --check: stdlib/crawlers.clf is up to date",
           (so + se).decode("utf-8", "replace")[:4000])
    tap.ok(("%d skipped" % len(gen_crawlers.EXCLUDED)).encode() in so,
           "every upstream pattern is converted, except the %d excluded on purpose"
           % len(gen_crawlers.EXCLUDED), so.decode("utf-8", "replace"))

    path = args.corpus("crawler-user-agents", "crawler-user-agents.json")
    entries = json.load(open(path, encoding="utf-8"))
    insts = [(e["pattern"], i) for e in entries for i in e["instances"]]
    tap.ok((len(entries), len(insts)) == EXPECTED, "snapshot: %d entries, %d instances (expected %d / %d)"
           % ((len(entries), len(insts)) + EXPECTED))
    model = gen_crawlers.model(entries)

    agents_raw = json.load(open(args.corpus("ai-robots-txt", "robots.json"), encoding="utf-8"))
    agents = [(n, e.get("function", "")) for n, e in agents_raw.items()]
    specific, ambiguous, _ = gen_ai_robots.resolve_ambiguous(agents, gen_ai_robots.AMBIGUOUS_NAMES, "robots.json")
    cats, _ = gen_ai_robots.categories(specific, ambiguous)

    with rc.tempdir() as tmp:
        rules, diag = compile_with(args, tmp, 'import "crawlers"\nfilter main(req: Request) {\n'
                                   '    crawlers.check(req)\n    accept\n}\n', "crawlers_main")
        if not tap.ok(rules is not None, "classifyc compiles a main calling crawlers.check", diag):
            tap.finish()
        uas = [i for _, i in insts]
        results, diag = rc.classify_uas(args, rules, uas, tmp, "instances.txt")
        if not tap.ok(results is not None, "classify-run on %d instances" % len(uas), diag):
            tap.finish()
        bad = []
        n_ok = 0
        excluded = {ua for p, ua in insts if p in gen_crawlers.EXCLUDED}
        for (pattern, ua), got in zip(insts, results):
            want = ("reject", model(ua))
            if ua in excluded:
                continue
            if got == want and want[1] is not None:
                n_ok += 1
            else:
                bad.append("[%s] %r: got %s, want %s" % (pattern, ua, rc.fmt(got), rc.fmt(want)))
        tap.ok(not bad, "all %d instances rejected by crawlers.check with the model's crawler:<tag> (%d excluded)"
               % (len(uas) - len(excluded), len(excluded)), "\n".join(bad[:50]))
        tap.diag("%d instances rejected as predicted" % n_ok)

        rules, diag = compile_with(args, tmp, 'import "ai_robots"\nfilter main(req: Request) {\n'
                                   '    ai_robots.check(req)\n    accept\n}\n', "ai_main")
        if not tap.ok(rules is not None, "classifyc compiles a main calling ai_robots.check", diag):
            tap.finish()
        names = [n for n, _ in agents]
        uas = ["Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % n for n in names]
        results, diag = rc.classify_uas(args, rules, uas, tmp, "agents.txt")
        if not tap.ok(results is not None, "classify-run on %d agent UAs" % len(uas), diag):
            tap.finish()
        bad = ["%r: got %s, want reject %s" % (ua, rc.fmt(got), gen_ai_robots.model_reason(cats, ua))
               for ua, got in zip(uas, results)
               if got != ("reject", gen_ai_robots.model_reason(cats, ua))
               or not (got[1] or "").startswith("ai-robots-txt:")]
        tap.ok(not bad, "every ai.robots.txt name (%d) is rejected by ai_robots.check as "
               "ai-robots-txt:<its category>, as the generator's model predicts" % len(uas), "\n".join(bad[:50]))
        own = sum(1 for (n, f), ua in zip(agents, uas)
                  if gen_ai_robots.model_reason(cats, ua) == "ai-robots-txt:" + gen_ai_robots.slugify(f))
        tap.diag("%d of %d names are reported under their own function's category "
                 "(the rest share a name with another spelling or contain another agent's name)" % (own, len(uas)))

        req = os.path.join(tmp, "robots.http")
        with open(req, "wb") as f:
            f.write(b"GET /robots.txt HTTP/1.1\r\nHost: example.org\r\nUser-Agent: GPTBot/1.2\r\n\r\n")
        got, diag = rc.classify_request(args, rules, req)
        tap.ok(got == ("accept", None), "ai_robots.check passes GPTBot on /robots.txt", diag)
    tap.finish()


if __name__ == "__main__":
    main()
