#!/usr/bin/env python3
"""End-to-end tests of the classifyc command line (TAP).

usage: test_classifyc.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT

Checks the documented exit statuses (0 ok, 1 source errors, 2 usage or
I/O errors), that output is written atomically (a failed compile leaves no
file and leaves an existing one untouched, and no temporary file behind),
the default output name, -I and $CLASSIFY_PATH resolution, --check,
--dump and that --help lists every option the docs mention.
"""
import os
import stat
import subprocess
import sys
import tempfile

classifyc, classify_run, root = sys.argv[1:4]
results = []


def check(name, cond, detail=""):
    results.append((bool(cond), name, detail))


def run(*args, env=None, cwd=None, stdin=None):
    e = dict(os.environ)
    e.pop("CLASSIFY_PATH", None)
    if env:
        e.update(env)
    return subprocess.run([classifyc, *args], capture_output=True, env=e, cwd=cwd,
                          input=stdin, timeout=60)


GOOD = b'filter main(r: Request) { if r.path == "/x" { reject "x" } accept }\n'
BAD = b'filter main(r: Request) { if r.path == 1 { reject } accept }\n'

with tempfile.TemporaryDirectory() as d:
    good = os.path.join(d, "good.clf")
    bad = os.path.join(d, "bad.clf")
    open(good, "wb").write(GOOD)
    open(bad, "wb").write(BAD)

    # Success, default output name, the file loads in classify-run.
    p = run(good)
    check("compile ok exits 0", p.returncode == 0, p.stderr)
    out = os.path.join(d, "good.bin")
    check("default output is FILE.bin", os.path.exists(out))
    mode = stat.S_IMODE(os.stat(out).st_mode)
    check("output mode follows the umask (not mkstemp's 0600)", mode & 0o044 == 0o044, oct(mode))
    r = subprocess.run([classify_run, out, "--ua-file", "-"], input=b"x\n", capture_output=True)
    check("output loads and classifies", r.returncode == 0 and r.stdout.startswith(b"accept"), r.stdout)

    # Source errors: exit 1, nothing written, the old output untouched.
    target = os.path.join(d, "keep.bin")
    open(target, "wb").write(b"old contents")
    p = run(bad, "-o", target)
    check("source error exits 1", p.returncode == 1, p.returncode)
    check("source error message has file:line:col",
          b"bad.clf:1:37: error: cannot compare str with int" in p.stderr, p.stderr)
    check("error count line", p.stderr.rstrip().endswith(b"classifyc: 1 error"), p.stderr)
    check("failed compile leaves the old output untouched", open(target, "rb").read() == b"old contents")
    p = run(bad, "-o", os.path.join(d, "new.bin"))
    check("failed compile creates no output", not os.path.exists(os.path.join(d, "new.bin")))
    check("no temporary files left", not [f for f in os.listdir(d) if f.startswith(".")], os.listdir(d))
    p = run(bad, "-o", os.path.join(d, "x.bin"))

    # Successful compile replaces the old output.
    p = run(good, "-o", target)
    check("compile replaces an existing output", p.returncode == 0 and open(target, "rb").read()[:4] == b"\x89CLF")

    # -o never destroys what is not a rules file.
    p = run(good, "-o", good)
    check("-o onto the input is refused", p.returncode == 2 and b"refusing to overwrite" in p.stderr
          and open(good, "rb").read() == GOOD, p.stderr)
    real = os.path.join(d, "real.bin")
    open(real, "wb").write(b"old")
    link = os.path.join(d, "link.bin")
    os.symlink(real, link)
    p = run(good, "-o", link)
    check("-o through a symlink replaces its target and keeps the link",
          p.returncode == 0 and os.path.islink(link) and open(real, "rb").read()[:4] == b"\x89CLF", p.stderr)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    p = run(good, "-o", fifo)
    check("-o onto a FIFO is refused", p.returncode == 2 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
          and b"refusing to replace" in p.stderr, p.stderr)
    sub = os.path.join(d, "subdir")
    os.mkdir(sub)
    p = run(good, "-o", sub)
    check("-o onto a directory is refused", p.returncode == 2 and os.path.isdir(sub)
          and b"it is a directory" in p.stderr, p.stderr)
    p = run(good, "-o", "")
    check("-o '' is refused", p.returncode == 2 and b"the output file name is empty" in p.stderr, p.stderr)

    # --check writes nothing.
    p = run(good, "--check", "-o", os.path.join(d, "checked.bin"))
    check("--check exits 0 and writes nothing",
          p.returncode == 0 and not os.path.exists(os.path.join(d, "checked.bin")), p.stderr)
    p = run(bad, "--check")
    check("--check reports errors with exit 1", p.returncode == 1)

    # --dump prints disassembly with source lines.
    p = run(good, "--dump")
    check("--dump shows source lines and opcodes",
          p.returncode == 0 and b"; " + good.encode() + b":1:" in p.stdout and b"REJECT" in p.stdout, p.stdout)

    # I/O and usage errors: exit 2.
    p = run(os.path.join(d, "missing.clf"))
    check("missing input exits 2", p.returncode == 2, p.returncode)
    check("missing input message", b"missing.clf: cannot open: No such file or directory" in p.stderr, p.stderr)
    p = run(good, "-o", os.path.join(d, "no", "such", "dir.bin"))
    check("unwritable output exits 2", p.returncode == 2, p.stderr)
    check("unwritable output message", b"cannot create a temporary file beside" in p.stderr, p.stderr)
    p = run("--bogus")
    check("unknown option exits 2", p.returncode == 2 and b"unknown option" in p.stderr)
    p = run()
    check("no input exits 2", p.returncode == 2 and b"no input file" in p.stderr)
    p = run(good, bad)
    check("two inputs exit 2", p.returncode == 2)
    p = run("-o")
    check("-o without a value exits 2", p.returncode == 2)
    p = run(good, "--max-source-bytes", "10")
    check("source limit exits 2 with a message",
          p.returncode == 2 and b"larger than the source limit of 10 bytes" in p.stderr, p.stderr)
    lim = os.path.join(d, "limits.clf")
    open(lim, "wb").write(b'const S = ["a", "b"]\nfilter main(r: Request) { if (r.path.contains(S)) { reject } accept }\n')
    check("limits file compiles with defaults", run(lim, "--check").returncode == 0)
    p = run(lim, "--check", "--max-patterns", "1")
    check("--max-patterns 1 refuses a two-element set",
          p.returncode == 1 and b"limits.clf:1:17: error: the program needs more than 1 patterns "
          b"(classifyc --max-patterns)" in p.stderr, p.stderr)
    p = run(lim, "--check", "--max-nesting", "1")
    check("--max-nesting 1 refuses ( inside { ",
          p.returncode == 1 and b"limits.clf:2:30: error: nesting deeper than 1 levels" in p.stderr, p.stderr)
    regs = os.path.join(d, "regs.clf")
    open(regs, "wb").write(b'filter main(r: Request) { if r.path.len() > 1 { reject } accept }\n')
    p = run(regs, "--check", "--max-registers", "1")
    check("--max-registers 1 refuses a filter that needs 2",
          p.returncode == 1 and b"'main' needs more than 1 registers (classifyc --max-registers)" in p.stderr,
          p.stderr)
    for opt, val in (("--max-registers", "65536"), ("--max-nesting", "0"), ("--max-patterns", "-3"),
                     ("--max-source-bytes", "x")):
        p = run(lim, "--check", opt, val)
        check("%s %s is a usage error" % (opt, val), p.returncode == 2 and b"needs a number" in p.stderr, p.stderr)

    p = run("-", "--check", stdin=GOOD)
    check("- reads standard input", p.returncode == 0, p.stderr)
    p = run("-", stdin=GOOD)
    check("- without -o is a usage error", p.returncode == 2 and b"-o" in p.stderr, p.stderr)

    # Module search: -I, then $CLASSIFY_PATH, then --stdlib.
    mods = os.path.join(d, "mods")
    os.mkdir(mods)
    open(os.path.join(mods, "m.clf"), "wb").write(b'pub const S = ["evil"]i\n')
    user = os.path.join(d, "user.clf")
    open(user, "wb").write(b'import "m"\nfilter main(r: Request) { if r.path.contains(m.S) { reject } accept }\n')
    check("import fails without a search path", run(user, "--check", "--stdlib", d + "/none").returncode == 1)
    check("import through -I", run(user, "--check", "-I", mods).returncode == 0)
    check("import through -IDIR", run(user, "--check", "-I" + mods).returncode == 0)
    check("import through $CLASSIFY_PATH",
          run(user, "--check", env={"CLASSIFY_PATH": d + "/none:" + mods}).returncode == 0)
    check("import through --stdlib", run(user, "--check", "--stdlib", mods).returncode == 0)
    p = run("-I", os.path.join(root, "stdlib"), os.path.join(root, "examples", "main.clf"), "--check")
    check("the bundled default rules compile", p.returncode == 0, p.stderr)

    # Large programs compile (these took minutes when the compiler had
    # quadratic paths; the test's timeout is the guard, not a timer).
    big = os.path.join(d, "big.clf")
    with open(big, "w") as f:
        f.write("const S = [" + ", ".join('"el%06d"' % i for i in range(20000)) + "]i\n")
        f.write("filter main(r: Request) {\n")
        f.write('    if r.header("user-agent").contains(S) { reject "set" }\n')
        for i in range(5000):
            f.write('    if r.path == "/%d" { reject "p%d" }\n' % (i, i))
        f.write("    accept\n}\n")
    p = run(big, "-o", os.path.join(d, "big.bin"))
    check("20,000-element set and 5,000 ifs compile", p.returncode == 0, p.stderr)
    r = subprocess.run([classify_run, os.path.join(d, "big.bin"), "--ua-file", "-"],
                       input=b"x EL019999 y\nel0199\n", capture_output=True)
    check("... and classify", r.stdout == b"reject set\tx EL019999 y\naccept\tel0199\n", r.stdout)
    p = run(big, "--dump")
    check("... with registers reused (3 per filter)", b"filter F0 main (entry): 3 registers" in p.stdout,
          p.stdout[:200])

    # --test: runs the test blocks, prints a line per test and a summary,
    # exits 0 when all pass and 1 when one fails; writes no rules file.
    tdir = os.path.join(d, "tests")
    os.mkdir(tdir)
    TESTED = (b'filter check(req: Request) {\n'
              b'    if req.client_ip in [198.51.100.0/24] { reject "bad-net" }\n'
              b'    if req.cookie("s") == "" { pass }\n'
              b'    if req.query_param("n").to_int() * 2 == 14 { reject "seven" }\n'
              b'}\n'
              b'filter main(req: Request) {\n'
              b'    check(req)\n'
              b'    accept "fine"\n'
              b'}\n'
              b'test "no cookie passes" {\n'
              b'    expect check pass\n'
              b'    expect accept "fine"\n'
              b'}\n'
              b'test "bad net behind a proxy" {\n'
              b'    peer "10.0.0.1"\n'
              b'    trust "10.0.0.0/8"\n'
              b'    header "X-Forwarded-For" "198.51.100.4, 10.0.0.7"\n'
              b'    expect reject "bad-net"\n'
              b'}\n'
              b'test "query and cookie" {\n'
              b'    method "POST"\n'
              b'    target "/p?n=7"\n'
              b'    header "Cookie" "a=1; s=x"\n'
              b'    expect check reject "seven"\n'
              b'    expect reject\n'
              b'}\n')
    passing = os.path.join(tdir, "passing.clf")
    open(passing, "wb").write(TESTED)
    p = run("--test", passing)
    check("--test: all pass exits 0", p.returncode == 0, p.stdout + p.stderr)
    check("--test: one line per test, then the summary",
          p.stdout == (b'ok    test "no cookie passes"\n'
                       b'ok    test "bad net behind a proxy"\n'
                       b'ok    test "query and cookie"\n'
                       b'3 passed, 0 failed\n'), p.stdout)
    check("--test writes no rules file", os.listdir(tdir) == ["passing.clf"], os.listdir(tdir))
    failing = os.path.join(tdir, "failing.clf")
    open(failing, "wb").write(TESTED + b'test "wrong reason" {\n'
                                        b'    expect accept "other"\n'
                                        b'}\n'
                                        b'test "wrong verdict" {\n'
                                        b'    peer "198.51.100.9"\n'
                                        b'    expect check pass\n'
                                        b'}\n')
    p = run("--test", failing)
    check("--test: a failure exits 1", p.returncode == 1, p.returncode)
    check("--test: FAIL lines name the expect line, the filter, what was expected and got",
          p.stdout == (b'ok    test "no cookie passes"\n'
                       b'ok    test "bad net behind a proxy"\n'
                       b'ok    test "query and cookie"\n'
                       b'FAIL  ' + failing.encode() + b':28:5: test "wrong reason": main: '
                       b'expected accept "other", got accept "fine"\n'
                       b'FAIL  ' + failing.encode() + b':32:5: test "wrong verdict": check: '
                       b'expected pass, got reject "bad-net"\n'
                       b'3 passed, 2 failed\n'), p.stdout)
    nomain = os.path.join(tdir, "nomain.clf")
    open(nomain, "wb").write(b'pub filter f(req: Request) { if req.path == "/x" { reject "x" } }\n'
                             b'test "t" { target "/x" expect f reject "x" }\n'
                             b'test "u" { expect f pass }\n')
    p = run("--test", nomain)
    check("--test: a file without main", p.returncode == 0 and p.stdout.endswith(b"2 passed, 0 failed\n"),
          p.stdout + p.stderr)
    notests = os.path.join(tdir, "notests.clf")
    open(notests, "wb").write(GOOD)
    p = run("--test", notests)
    check("--test: a file without tests exits 1",
          p.returncode == 1 and p.stderr == b"classifyc: " + notests.encode() + b" has no test blocks\n",
          p.stderr)
    broken = os.path.join(tdir, "broken.clf")
    open(broken, "wb").write(BAD + b'test "t" { expect accept }\n')
    p = run("--test", broken)
    check("--test: a source error exits 1 and runs nothing",
          p.returncode == 1 and p.stdout == b"" and b"error: cannot compare str with int" in p.stderr,
          p.stdout + p.stderr)
    big = os.path.join(tdir, "bighdr.clf")
    open(big, "wb").write(b'filter main(req: Request) { accept }\n'
                          b'test "big" { header "X" "' + b"a" * 70000 + b'" expect accept }\n'
                          b'test "fine" { expect accept }\n')
    p = run("--test", big)
    check("--test: a test that cannot run is an ERROR line and exit 2",
          p.returncode == 2 and p.stdout == (b'ERROR ' + big.encode() + b':2:14: test "big": the value '
                                             b"of header 'X' is 70000 bytes, over the limit of 65536 "
                                             b'(CLF_LIMIT_HEADER_VALUE_BYTES)\n'
                                             b'ok    test "fine"\n'
                                             b'1 passed, 1 failed\n'), p.stdout)

    # Thousands of errors on one long line: at most 200 are shown, the rest
    # counted (it took 90 s before the cap: each message scans its line).
    many = os.path.join(d, "many.clf")
    with open(many, "w") as f:
        f.write("filter main(req: Request) { " +
                " ".join("if z%d { reject }" % i for i in range(20000)) + " accept }\n")
    p = run("--check", many)
    err = p.stderr.decode("utf-8", "replace")
    check("20,000 errors: 200 shown, the rest counted",
          p.returncode == 1 and err.count(": error: ") == 200 and
          "(19800 more errors not shown)" in err and err.endswith("classifyc: 20000 errors\n"),
          err[-300:])

    # Entry filters: every filter of the compiled file is compiled; those
    # that decide on every path are entries (clf_eval_filter), shown by
    # --dump. An imported filter is never an entry, even one that decides.
    lib = os.path.join(d, "entrylib.clf")
    open(lib, "w").write('pub filter decide(r: Request) { reject "lib" }\n')
    ent = os.path.join(d, "entries.clf")
    open(ent, "w").write(
        'import "entrylib"\n'
        'filter main(r: Request) { check(r)\n entrylib.decide(r)\n accept }\n'
        'filter strict(r: Request) { if r.path == "/a" { reject "a" } else { accept } }\n'
        'filter check(r: Request) { if r.path == "/c" { reject "c" } }\n'
        'filter maybe(r: Request) { if r.path == "/m" { pass } accept }\n'
        'filter only_calls(r: Request) { strict(r) }\n')
    p = run("-I", d, "--no-inline", "--dump", ent)
    out = p.stdout.decode()
    heads = sorted(line for line in out.splitlines() if line.startswith("filter "))
    check("--dump marks the entries: main and the filters of the file that decide on every path",
          p.returncode == 0 and [h.split(":")[0] for h in heads] ==
          ["filter F0 main (entry)", "filter F1 check", "filter F2 decide", "filter F3 strict (entry)",
           "filter F4 maybe", "filter F5 only_calls"], out + p.stderr.decode())

    # --help documents every option.
    p = run("--help")
    for opt in ("-o FILE", "-I DIR", "--check", "--test", "--dump", "--no-inline", "--ast", "--tokens",
                "--max-source-bytes", "--max-nesting", "--max-patterns", "--max-registers",
                "--stdlib", "--version", "CLASSIFY_PATH", "exit status"):
        check("--help mentions " + opt, p.returncode == 0 and opt.encode() in p.stdout)
    p = run("--version")
    check("--version", p.returncode == 0 and p.stdout.startswith(b"classifyc "), p.stdout)

print("1..%d" % len(results))
for i, (ok, name, detail) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok and detail != "":
        for line in str(detail).splitlines()[:20]:
            print("# " + line)
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
