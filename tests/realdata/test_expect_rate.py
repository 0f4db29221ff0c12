#!/usr/bin/env python3
"""`expect-rate` gates on stdlib/default.clf with the corpora (TAP).

    python3 test_expect_rate.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

The policy's own text with test blocks appended is run by classifyc
--test, as an operator's CI would run theirs:
1. the AI agents: the crawler-user-agents instances in the scope of
   test_crawler_user_agents.py (the entry's pattern names an ai.robots.txt
   agent): at least 95% rejected; the rate classifyc prints is the one
   classify-run --ua-file gives for the same file;
2. real browsers (uap-core, as tools/accuracy.py picks them), one test per
   set of synthesized headers (each Chrome version sends its own
   sec-ch-ua, so about 150 tests): each at most 2% rejected, and over all
   of them (from the figures the tests print) at most 0.1%;
3. a gate that does not hold fails the run (exit 1) and says by how much.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
from realdata_common import Tap, parse_args_or_skip, run, tempdir  # noqa: E402
import accuracy  # noqa: E402
import test_crawler_user_agents as cua  # noqa: E402


def clf_str(s):
    """A .clf string literal of an ASCII header name or value."""
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def main():
    args = parse_args_or_skip()
    t = Tap()
    _, scope, _ = cua.load(args.corpora)
    ai = list(dict.fromkeys(i for _, _, insts in scope for i in insts if accuracy.usable(i)))
    groups = collections.OrderedDict()
    for ua, _ in accuracy.browser_uas(args.corpora):
        family, headers = accuracy.synthesize_headers(ua)
        groups.setdefault((family, tuple(headers)), []).append(ua)
    policy = open(os.path.join(args.root, "stdlib", "default.clf"), encoding="utf-8").read()
    with tempdir() as tmp:
        def write(name, uas):
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write("\n".join(uas) + "\n")
        write("ai.txt", ai)
        tests = ['test "AI agents are rejected" {\n    uas "ai.txt"\n'
                 '    expect-rate reject >= "95%"\n}\n']
        total = 0
        for i, ((family, headers), uas) in enumerate(groups.items()):
            write("b%d.txt" % i, uas)
            total += len(uas)
            lines = ['    header %s %s' % (clf_str(n), clf_str(v)) for n, v in headers]
            tests.append('test "%s browsers (%d, header set %d) pass" {\n    uas "b%d.txt"\n%s\n'
                         '    expect-rate reject <= "2%%"\n}\n'
                         % (family, len(uas), i, i, "\n".join(lines)))
        src = os.path.join(tmp, "policy_gates.clf")
        with open(src, "w", encoding="utf-8") as f:
            f.write(policy + "\n" + "\n".join(tests))
        rc, out, err = run([args.classifyc, "--test", "-I", os.path.join(args.root, "stdlib"),
                            "--stdlib", "/nonexistent", src])
        out = out.decode("utf-8", "replace")
        t.ok(rc == 0, "default.clf meets its gates: %d AI agents, %d browsers in %d header sets"
             % (len(ai), total, len(groups)), out + err.decode("utf-8", "replace")[-2000:])
        figures = re.findall(r'ok    test "\w+ browsers .*": reject ([0-9.]+)% of (\d+)', out)
        rejected_b = sum(round(float(p) * int(n) / 100) for p, n in figures)
        t.ok(len(figures) == len(groups) and rejected_b <= total * 0.001,
             "over all browsers: %d of %d rejected (%.3f%%), at most 0.1%%"
             % (rejected_b, total, 100.0 * rejected_b / max(total, 1)), "%d figures" % len(figures))
        m = re.search(r'ok    test "AI agents are rejected": reject ([0-9.]+)% of (\d+)', out)
        # the same file through classify-run: the rate must agree
        bin_path = os.path.join(tmp, "default.bin")
        run([args.classifyc, "-I", os.path.join(args.root, "stdlib"), "--stdlib", "/nonexistent",
             os.path.join(args.root, "stdlib", "default.clf"), "-o", bin_path])
        rc2, so, _ = run([args.classify_run, bin_path, "--ua-file", os.path.join(tmp, "ai.txt"),
                          "--json"])
        rejected = sum(1 for l in so.decode().splitlines() if json.loads(l)["verdict"] == "reject")
        want = "%.3f" % (100.0 * rejected / len(ai))
        t.ok(m is not None and m.group(1) == want and int(m.group(2)) == len(ai),
             "the AI rate classifyc prints (%s%%) is classify-run's: %d of %d rejected"
             % (m.group(1) if m else "?", rejected, len(ai)), out[:600])

        # 3. a gate that fails
        with open(src, "w", encoding="utf-8") as f:
            f.write(policy + '\ntest "too strict a gate" {\n    uas "ai.txt"\n'
                    '    expect-rate reject <= "50%"\n}\n')
        rc, out, _ = run([args.classifyc, "--test", "-I", os.path.join(args.root, "stdlib"),
                          "--stdlib", "/nonexistent", src])
        out = out.decode("utf-8", "replace")
        t.ok(rc == 1 and re.search(r"FAIL .*too strict a gate.*reject for %s%% of %d User-Agents "
                                   r"\(%d\), expected at most 50%%" % (re.escape(want), len(ai), rejected), out),
             "a gate that does not hold fails with the figures", out)
    t.finish()


if __name__ == "__main__":
    main()
