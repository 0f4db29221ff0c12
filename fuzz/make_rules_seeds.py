#!/usr/bin/env python3
"""Compiles the seed rules files of fuzz_rules.

usage: make_rules_seeds.py CLASSIFYC OUTDIR

Writes into OUTDIR, with CLASSIFYC (any build's cli/classifyc):
  golden-import_ok.bin     tests/golden/check/import_ok.clf with its modules
  source-NAME.bin          every fuzz/corpus/source/NAME.clf that compiles, its
                           "//--- lib.clf" part (fuzz_source.c) written beside
                           it as lib.clf, no stdlib
Only files of at most 64 KiB are kept. That leaves out examples/main.clf
compiled with the real stdlib (184 KB): its mutants whose Hyperscan database
header changed make the loader rebuild 161 word-bounded patterns, about 2 s
each under ASan, which cut fuzz_rules from ~1500 to ~70 execs/s; the
structure it has (several subjects, sets, regexes, headers) is in the
smaller seeds, and fuzz_request loads and runs the real ruleset.

fuzz/run.sh calls this for every run of fuzz_rules, into the scratch corpus,
so that the seeds always match the current compiler and file format. To
refresh the committed seeds on purpose:
    python3 fuzz/make_rules_seeds.py build/cli/classifyc fuzz/corpus/rules
Prints one line per file written; exits 1 if golden-import_ok does not
compile (the others may legitimately fail: most seeds are error cases).
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = b"\n//--- lib.clf\n"
MAX_SEED = 64 * 1024  # see above


def compile_to(classifyc, args, src, out):
    p = subprocess.run([classifyc, "--stdlib", "/nonexistent"] + args + [src, "-o", out],
                       capture_output=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "CLASSIFY_PATH"})
    return p.returncode == 0


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    classifyc = os.path.abspath(sys.argv[1])
    outdir = os.path.abspath(sys.argv[2])
    os.makedirs(outdir, exist_ok=True)
    rc = 0
    named = [
        ("golden-import_ok.bin", ["-I", os.path.join(ROOT, "tests", "golden", "check", "modules")],
         os.path.join(ROOT, "tests", "golden", "check", "import_ok.clf")),
    ]
    for name, args, src in named:
        out = os.path.join(outdir, name)
        if compile_to(classifyc, args, src, out):
            print(out)
        else:
            print("make_rules_seeds: %s does not compile" % src, file=sys.stderr)
            rc = 1
    srcdir = os.path.join(ROOT, "fuzz", "corpus", "source")
    with tempfile.TemporaryDirectory(prefix="clf-seeds-") as tmp:
        for name in sorted(os.listdir(srcdir)):
            if not name.endswith(".clf"):
                continue
            data = open(os.path.join(srcdir, name), "rb").read()
            main_text, lib_text = data, None
            if MARK in data:
                cut = data.index(MARK)
                main_text, lib_text = data[:cut + 1], data[cut + len(MARK):]
            main_path = os.path.join(tmp, "main.clf")
            lib_path = os.path.join(tmp, "lib.clf")
            with open(main_path, "wb") as f:
                f.write(main_text)
            if lib_text is not None:
                with open(lib_path, "wb") as f:
                    f.write(lib_text)
            elif os.path.exists(lib_path):
                os.unlink(lib_path)
            out = os.path.join(outdir, "source-" + name[:-4] + ".bin")
            if compile_to(classifyc, [], main_path, out):
                if os.path.getsize(out) > MAX_SEED:
                    os.unlink(out)
                else:
                    print(out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
