#!/usr/bin/env python3
"""The compiler's cost stays linear in the program on large inputs (TAP).

usage: test_compile_scale.py CLASSIFYC SOURCE_ROOT

Regressions of issue 12: a chain of `||` cost memory quadratic in its
length (gen_jump_or flattened the chain again at every level: eight
9,000-operand chains took 2.7 GB), and name lookup in the type checker
was a scan of every local in scope (60,000 locals took 8 s, 70,000 84 s
on a slower machine). Each case compiles a generated program in a child
process and reads the child's own peak memory and CPU time from
wait4(2), with bounds more than 5x above what the linear code needs
under AddressSanitizer and far below what the quadratic code took, so
the checks neither flake on a loaded machine nor pass on the old code.
"""
import os
import subprocess
import sys
import tempfile

classifyc, root = sys.argv[1:3]
sys.path.insert(0, os.path.join(root, "bench"))
from largeprog import chains, many_locals, true_chain  # noqa: E402

results = []


def check(name, cond, detail=""):
    results.append((bool(cond), name, detail))


def compile_measured(src_text, d, name):
    """Compiles the text; returns (exit status, stderr, peak RSS MiB, CPU s)."""
    src = os.path.join(d, name + ".clf")
    with open(src, "w") as f:
        f.write(src_text)
    p = subprocess.Popen([classifyc, src, "-o", os.path.join(d, name + ".bin")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, ru.ru_maxrss / 1024.0, ru.ru_utime + ru.ru_stime


with tempfile.TemporaryDirectory(prefix="compile-scale-") as d:
    for op in ("||", "&&"):
        rc, err, rss, cpu = compile_measured(chains(op, 8, 9000), d, "chains")
        check("eight 9,000-operand %s chains compile" % op, rc == 0, err[-2000:])
        check("eight 9,000-operand %s chains: peak memory %.0f MiB, under 512 MiB" % (op, rss),
              rss < 512, "%.0f MiB" % rss)

    rc, err, rss, cpu = compile_measured(true_chain(10000), d, "true_chain")
    check("10,000 `true ||` compile", rc == 0, err[-2000:])
    check("10,000 `true ||`: peak memory %.0f MiB, under 256 MiB (was 420 MB)" % rss,
          rss < 256, "%.0f MiB" % rss)

    rc, err, rss, cpu = compile_measured(many_locals(60000), d, "locals")
    check("60,000 locals compile", rc == 0, err[-2000:])
    check("60,000 locals: %.1f s of CPU, under 4 s (was 8 s)" % cpu, cpu < 4, "%.1f s" % cpu)

print("1..%d" % len(results))
for i, (ok, name, detail) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        for line in str(detail).splitlines()[:20]:
            print("# " + line)
sys.exit(0 if all(r[0] for r in results) else 1)
