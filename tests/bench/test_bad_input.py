#!/usr/bin/env python3
"""tests/bench/test_bad_input.py: the benchmark's tools on bad input (TAP).

    python3 test_bad_input.py BUILD_DIR SOURCE_ROOT

One check per bug a new user's attack found: every bad input gets a
message naming the place and the problem and a non-zero exit status, no
traceback, no partial output, and nothing that is not a regular file is
ever replaced by an output (as root, a rename over /dev/full replaced the
device; FIFOs stand in for devices here).
"""
import os
import subprocess
import sys
import tempfile

results = []


def check(name, ok, detail=""):
    results.append((bool(ok), name, detail))


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", **kw)


def clean_error(p, *want):
    """Failed with each of `want` in stderr and no Python traceback."""
    return (p.returncode != 0 and "Traceback" not in p.stderr and
            all(w in p.stderr for w in want))


def main():
    build, root = sys.argv[1:3]
    py = sys.executable
    bench = os.path.join(build, "bench", "classify-bench")
    classifyc = os.path.join(build, "cli", "classifyc")
    with tempfile.TemporaryDirectory(prefix="bench-bad-") as t:
        fifo = os.path.join(t, "fifo")
        os.mkfifo(fifo)
        rules = os.path.join(t, "constant.bin")
        p = run([classifyc, os.path.join(root, "bench", "rules", "constant.clf"), "-o", rules])
        check("the constant rules compile", p.returncode == 0, p.stderr)
        good = os.path.join(t, "good.txt")
        with open(good, "w") as f:
            f.write("R\tGET\t/\t\nH\tUser-Agent\tcurl/8\n\n")

        # The Python scripts: atomic outputs, no device replaced, no traceback.
        # The output is checked before the corpora are read, so these hold
        # with and without them (issue 12, bug 9: without the corpora,
        # workload.py failed on them instead of on --out).
        nocorpora = ["--corpora", os.path.join(t, "no-corpora")]
        for script, extra in (("workload.py", []), ("workload.py", nocorpora),
                              ("peerdata.py", [])):
            name = script + (" (no corpora)" if extra else "")
            p = run([py, os.path.join(root, "bench", script), "--out", fifo] + extra)
            check("%s --out FIFO: refused, the FIFO left alone" % name,
                  clean_error(p, fifo, "not a regular file") and
                  os.path.exists(fifo) and not os.path.isfile(fifo), p.stderr)
            bad = os.path.join(t, "no", "such", "dir", "x.txt")
            p = run([py, os.path.join(root, "bench", script), "--out", bad] + extra)
            check("%s --out in a missing directory: a message" % name,
                  clean_error(p, bad) and not os.path.exists(bad), p.stderr)
        p = run([py, os.path.join(root, "bench", "run.py"), os.path.join(t, "nobuild")])
        check("run.py on a missing build directory: a message, nothing created",
              clean_error(p, "not built") and not os.path.exists(os.path.join(t, "nobuild")),
              p.stderr)
        for bad in ("nan", "inf", "0", "-1"):
            p = run([py, os.path.join(root, "bench", "run.py"), build, "--seconds", bad])
            check("run.py --seconds %s: refused before any work" % bad,
                  p.returncode == 2 and "--seconds" in p.stderr and "Traceback" not in p.stderr,
                  p.stderr)

        # classify-bench's arguments.
        base = [bench, good, "--method", "clf", "--rules", rules]
        cases = [
            ("--rules naming a directory", [bench, good, "--method", "clf", "--rules", t,
                                            "--verdicts", os.path.join(t, "v")],
             [t, "not a regular file"]),
            ("--subject that is not a number",
             [bench, good, "--method", "hs-floor", "--rules", rules, "--subject", "abc",
              "--time", "0.1"], ["--subject", "abc"]),
            ("--subject -1", [bench, good, "--method", "hs-floor", "--rules", rules,
                              "--subject", "-1", "--time", "0.1"], ["--subject"]),
            ("an unknown option", base + ["--bogus", "1", "--time", "0.1"], ["--bogus"]),
            ("--verdicts without a value", base + ["--verdicts"], ["--verdicts needs a value"]),
            ("an option of another method", base + ["--subject", "1", "--time", "0.1"],
             ["does not take"]),
            ("--verdicts onto a FIFO", base + ["--verdicts", fifo], [fifo, "not a regular file"]),
        ]
        for name, cmd, want in cases:
            p = run(cmd)
            check("classify-bench, %s: a message" % name, clean_error(p, *want), p.stderr)
        p = run([bench, "--help"])
        check("classify-bench --help: usage on stdout, status 0",
              p.returncode == 0 and "--method" in p.stdout and "--subject" in p.stdout)

        # Requests files the format does not allow, each named by file:line.
        bad_files = {
            "cr.txt": ("R\tGET\t/\t\nH\tA\tb\rc\n\n", ":2: a CR"),
            "nul.txt": ("R\tGET\t/\t\nH\tA\tb\0c\n\n", ":2: a NUL byte"),
            "noname.txt": ("R\tGET\t/\t\nH\t\tb\n\n", ":2: want H<TAB>name<TAB>value"),
            "open.txt": ("R\tGET\t/\t\nH\tA\tb\n", "no empty line after it"),
        }
        for fname, (text, want) in bad_files.items():
            path = os.path.join(t, fname)
            with open(path, "w", newline="") as f:
                f.write(text)
            out = os.path.join(t, fname + ".verdicts")
            p = run([bench, path, "--method", "clf", "--rules", rules, "--verdicts", out])
            check("requests file %s: refused at its line" % fname,
                  clean_error(p, want) and not os.path.exists(out), p.stderr)
        p = run([bench, "--stats", rules, os.path.join(t, "cr.txt")])
        check("--stats with a bad requests file: a message and no partial JSON",
              clean_error(p, ":2: a CR") and p.stdout == "", p.stdout)

        # A run that fails half-way leaves no verdicts file: the 3rd request
        # has more headers than CLF_LIMIT_HEADERS (256), so clf_eval fails.
        many = os.path.join(t, "many.txt")
        with open(many, "w") as f:
            f.write("R\tGET\t/\t\n\n" * 2)
            f.write("R\tGET\t/\t\n" + "".join("H\tX-%d\tv\n" % i for i in range(300)) + "\n")
        out = os.path.join(t, "many.verdicts")
        p = run([bench, many, "--method", "clf", "--rules", rules, "--verdicts", out])
        check("a classification that fails: a message naming the request, no verdicts file",
              clean_error(p, "request 2") and not os.path.exists(out) and
              not os.path.exists(out + ".tmp"), p.stderr)

    print("1..%d" % len(results))
    for i, (ok, name, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok and detail:
            for line in str(detail).splitlines()[:20]:
                print("# " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
