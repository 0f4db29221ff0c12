#!/usr/bin/env python3
"""End-to-end test of rewrite sets: .clf source -> classifyc -> rules.bin ->
classify-run --rewrite (TAP version 12 on stdout).

    python3 rewrite_e2e.py CLASSIFYC CLASSIFY_RUN REWRITE_TESTS_DIR

1. Every case of the research note (tests/rewrite/test_rewrite_cases.py,
   the engine's own test of them) written as a .clf rewrite set, compiled,
   and run through classify-run with --chunk-lengths: whole, every 2-way
   split, 1-byte chunks, and 1-byte chunks with empty chunks between. The
   output must be the case's expected output every time: this checks the
   language (lexer, parser, checker, lowering), the rules-file section, the
   loader, the public API and the command line together.
2. The command line: usage errors, missing sets and files, bad chunk
   lengths, --output replaced only on success, standard output cut back on
   failure, --stats, and a 256 MiB body streamed in bounded memory.
"""

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import Tap, run  # noqa: E402

CLASSIFYC, CLASSIFY_RUN, RW_TESTS = sys.argv[1:4]
sys.path.insert(0, RW_TESTS)
from rwcase import chunkings  # noqa: E402
from test_rewrite_cases import CASES, RF, SF, SRW  # noqa: E402

MODE_NAMES = {SRW: "leftmost_longest", SF: "sub_filter", RF: "replace_filter"}


def clf_bytes(b, quote):
    """b as the inside of a .clf string (quote '"') or regex (quote '/')."""
    out = []
    for c in b:
        ch = chr(c)
        if quote == '"' and ch in '"\\':
            out.append("\\" + ch)
        elif quote == "/" and ch == "/":
            out.append("\\/")
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        else:
            out.append("\\x%02x" % c)  # a string escape; in a regex, the regex's own
    return "".join(out)


def clf_rule(r):
    if r.kind == "lit":
        pat = '"%s"%s' % (clf_bytes(r.pattern, '"'), "i" if "i" in r.flags else "")
    else:
        pat = "/%s/%s" % (clf_bytes(r.pattern, "/"), "".join(f for f in "ism" if f in r.flags))
    return '    %s => "%s"%s\n' % (pat, clf_bytes(r.template, '"'), " once" if "o" in r.flags else "")


def clf_set(name, mode, L, rules):
    return 'rewrite %s(semantics: "%s", max_match: %d) {\n%s}\n' % (
        name, MODE_NAMES[mode], L, "".join(clf_rule(r) for r in rules))


def compile_clf(tmp, name, text):
    src = os.path.join(tmp, name + ".clf")
    out = os.path.join(tmp, name + ".bin")
    with open(src, "w") as f:
        f.write(text)
    r = run([CLASSIFYC, src, "-o", out])
    return out if r.rc == 0 else None, r


def rewrite(rules, setname, data, lengths, tmp):
    argv = [CLASSIFY_RUN, rules, "--rewrite", setname]
    if lengths is not None:
        lf = os.path.join(tmp, "lengths")
        with open(lf, "w") as f:
            f.write("".join("%d\n" % n for n in lengths))
        argv += ["--chunk-lengths", lf]
    return run(argv, stdin=data)


def note_cases(t, tmp):
    """Part 1: the note's cases through the whole tool chain."""
    k = 0
    for (name, modes, L, rules, chunks, exp) in CASES:
        for mode in modes:
            k += 1
            setname = "case%d" % k
            rules_bin, r = compile_clf(tmp, setname, clf_set(setname, mode, L, rules))
            if not t.ok(rules_bin is not None, "%s [%s]: compiles" % (name, mode), r):
                continue
            data = b"".join(chunks)
            runs = list(chunkings(data)) + [("as in the note", [len(c) for c in chunks])]
            bad = []
            for cname, lengths in runs:
                r = rewrite(rules_bin, setname, data, lengths, tmp)
                if r.rc != 0 or r.out != exp:
                    bad.append("%s: %s" % (cname, r))
            t.ok(not bad, "%s [%s]: %d chunkings give %r" % (name, mode, len(runs), exp),
                 "\n".join(bad[:3]))


RULES = r'''
rewrite site {
    "origin.example" => "clone.example"
    /UA-(\d+)-\d+/ => "UA-$1-0" once
}
rewrite other { "a" => "b" }
filter main(req: Request) { accept }
'''


def limited_fsize(nbytes):
    """A preexec_fn: writes past nbytes fail with EFBIG instead of killing."""
    def f():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return f


def cli_cases(t, tmp):
    """Part 2: the command line."""
    rules, r = compile_clf(tmp, "site", RULES)
    if not t.ok(rules is not None, "the command-line test rules compile", r):
        return
    body = b"<a href=//origin.example/x>UA-12-3 UA-4-5</a>\n"
    want = b"<a href=//clone.example/x>UA-12-0 UA-4-5</a>\n"
    inp = os.path.join(tmp, "body.html")
    with open(inp, "wb") as f:
        f.write(body)

    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", inp])
    t.ok(r.rc == 0 and r.out == want and r.err == b"", "FILE to standard output", r)
    r = run([CLASSIFY_RUN, rules, inp, "--rewrite", "site", "--chunk-size", "3"])
    t.ok(r.rc == 0 and r.out == want, "FILE before --rewrite, --chunk-size 3", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "-"], stdin=body)
    t.ok(r.rc == 0 and r.out == want, "'-' is standard input", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--stats"], stdin=body)
    m = re.search(rb"rewrite site: (\d+) bytes in, (\d+) bytes out, (\d+) replacements; "
                  rb"held at most (\d+) bytes \(hold-back (\d+)\)", r.err)
    t.ok(r.rc == 0 and r.out == want and m is not None and
         [int(x) for x in m.groups()[:3]] == [len(body), len(want), 2] and
         int(m.group(4)) <= int(m.group(5)), "--stats counts bytes and replacements", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site"], stdin=b"")
    t.ok(r.rc == 0 and r.out == b"", "an empty body gives an empty body", r)

    # Errors: exit 2 for usage, the rules and the output; 1 for the input.
    usage = [
        (["--rewrite"], "option '--rewrite' needs a rewrite set name"),
        (["--rewrite", "site", "--json"], "--rewrite cannot be combined with --json"),
        (["--rewrite", "site", "--request", inp], "--rewrite cannot be combined with --request"),
        (["--rewrite", "site", "--filter", "main"], "--rewrite cannot be combined with --filter"),
        (["--rewrite", "site", inp, inp], "--rewrite takes one input FILE"),
        (["--rewrite", "site", "--chunk-size", "0"], "--chunk-size: '0' is not a number of bytes"),
        (["--rewrite", "site", "--chunk-size", "2x"], "--chunk-size: '2x' is not a number"),
        (["--rewrite", "site", "--chunk-size", "1073741825"], "from 1 to 1073741824"),
        (["--rewrite", "site", "--chunk-size", "4", "--chunk-lengths", inp],
         "--chunk-size and --chunk-lengths cannot be combined"),
        (["--rewrite", "site", "--chunk-lengths", "-"], "standard input ('-', or no input FILE"),
        (["--rewrite", "site", "--rewrite", "other"], "option '--rewrite' given more than once"),
        (["--chunk-size", "4", "--request", inp], "option '--chunk-size' goes with --rewrite"),
        (["--output", "x", "--ua-file", inp], "option '--output' goes with --rewrite"),
        (["--request", inp, inp + "2"], None),  # two request files: fine, not a usage error
        ([inp, "--request", inp], "unexpected argument"),
    ]
    for args, msg in usage:
        r = run([CLASSIFY_RUN, rules] + args, stdin=body)
        if msg is None:
            t.ok(r.rc != 2 or b"unexpected" not in r.err, "usage: %s accepted" % args, r)
            continue
        t.ok(r.rc == 2 and msg.encode() in r.err and r.out == b"", "usage: %s" % " ".join(args),
             r)

    r = run([CLASSIFY_RUN, rules, "--rewrite", "nope", inp])
    t.ok(r.rc == 2 and b"no rewrite set 'nope' in the rules file (its rewrite sets: site, other)"
         in r.err and r.out == b"", "an unknown set names the sets, exit 2", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "si\x1bte", inp])
    t.ok(r.rc == 2 and b"\x1b" not in r.err, "a set name is escaped in messages", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", os.path.join(tmp, "missing")])
    t.ok(r.rc == 1 and b"missing: error: cannot open: No such file" in r.err, "a missing input: "
         "exit 1", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", tmp])
    t.ok(r.rc == 1 and b"Is a directory" in r.err and r.out == b"", "a directory input: exit 1",
         r)
    lf = os.path.join(tmp, "badlengths")
    for text, line in [("3\n4\nx\n", 3), ("3\n\n4\n", 2), ("1073741825\n", 1), ("-1\n", 1),
                       (" 3\n", 1)]:
        with open(lf, "w") as f:
            f.write(text)
        r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--chunk-lengths", lf, inp])
        t.ok(r.rc == 1 and ("badlengths:%d: error: not a chunk length" % line).encode() in r.err
             and r.out == b"", "a bad --chunk-lengths line %r names line %d" % (text, line), r)
    with open(lf, "w") as f:
        f.write("0\r\n5\r\n0\r\n0\r\n1")  # CRLF, no final newline, empty chunks
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--chunk-lengths", lf, inp])
    t.ok(r.rc == 0 and r.out == want, "--chunk-lengths with CRLF and empty chunks", r)
    with open(lf, "w") as f:
        f.write("100000\n0\n7\n")  # more than the body: empty chunks after its end
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--chunk-lengths", lf, inp])
    t.ok(r.rc == 0 and r.out == want, "--chunk-lengths past the end of the body", r)

    only, r = compile_clf(tmp, "only", 'rewrite x { "a" => "b" }\n')
    t.ok(only is not None, "a file of rewrite sets only compiles (no main)", r)
    if only:
        r = run([CLASSIFY_RUN, only, "--request", "-"], stdin=b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        t.ok(r.rc == 2 and b"the rules file has no entry filters, only rewrite sets" in r.err and
             b"--filter" not in r.err, "classifying with a file of rewrite sets only says so", r)
        r = run([CLASSIFY_RUN, only, "--rewrite", "x"], stdin=b"banana")
        t.ok(r.rc == 0 and r.out == b"bbnbnb", "and rewriting with it works", r)

    # --output: replaced only when the whole body was rewritten.
    outp = os.path.join(tmp, "out.html")
    with open(outp, "wb") as f:
        f.write(b"OLD")
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--output", outp, inp])
    with open(outp, "rb") as f:
        t.ok(r.rc == 0 and r.out == b"" and f.read() == want, "--output FILE gets the body", r)
    big = os.path.join(tmp, "big.html")
    with open(big, "wb") as f:
        f.write(body * 20000)  # about 1 MB
    with open(outp, "wb") as f:
        f.write(b"OLD")
    p = subprocess.run([CLASSIFY_RUN, rules, "--rewrite", "site", "--output", outp, big],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=limited_fsize(100000), timeout=60)
    with open(outp, "rb") as f:
        kept = f.read()
    left = [n for n in os.listdir(tmp) if n.startswith(".out.html.")]
    t.ok(p.returncode == 2 and b"File too large" in p.stderr and kept == b"OLD" and not left,
         "a write error leaves --output as it was, and no temporary file",
         "exit %s, stderr %r, file %r, left %r" % (p.returncode, p.stderr, kept[:20], left))
    with open(outp, "wb") as f:
        f.write(b"HEAD\n")
    with open(outp, "ab") as f:
        p = subprocess.run([CLASSIFY_RUN, rules, "--rewrite", "site", big], stdout=f,
                           stderr=subprocess.PIPE, preexec_fn=limited_fsize(100000), timeout=60)
    with open(outp, "rb") as f:
        kept = f.read()
    t.ok(p.returncode == 2 and b"cannot write the output" in p.stderr and kept == b"HEAD\n",
         "a failed run cuts standard output (a file, appended to) back to where it was",
         "exit %s, stderr %r, file %d bytes %r" % (p.returncode, p.stderr, len(kept), kept[:20]))
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--output", tmp, inp])
    t.ok(r.rc == 2 and b"refusing to replace" in r.err, "--output refuses a directory", r)
    r = run([CLASSIFY_RUN, rules, "--rewrite", "site", "--output", outp,
             os.path.join(tmp, "missing")])
    with open(outp, "rb") as f:
        t.ok(r.rc == 1 and f.read() == b"HEAD\n", "a missing input leaves --output alone", r)
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as f:
            p = subprocess.run([CLASSIFY_RUN, rules, "--rewrite", "site", inp], stdout=f,
                               stderr=subprocess.PIPE, timeout=60)
        t.ok(p.returncode == 2 and p.stderr.count(b"cannot write the output: No space left") == 1,
             "standard output on /dev/full: one error, exit 2", p.stderr)

    # Streaming: 256 MiB through a pipe, the resident set bounded (the body
    # is never held whole), and the bytes counted.
    chunk = (b"<p>see https://origin.example/page and UA-1-2 here</p>\n" * 1200)[:65536]
    total = 4096 * len(chunk)
    proc = subprocess.Popen([CLASSIFY_RUN, rules, "--rewrite", "site", "--stats"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    import threading
    out_bytes = [0]

    def drain():
        while True:
            b = proc.stdout.read(1 << 20)
            if not b:
                break
            out_bytes[0] += len(b)

    th = threading.Thread(target=drain)
    th.start()
    for _ in range(4096):
        proc.stdin.write(chunk)
    proc.stdin.close()
    th.join()
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    rss_mib = ru.ru_maxrss / 1024.0
    m = re.search(rb"(\d+) bytes in, (\d+) bytes out", err)
    ok = (os.waitstatus_to_exitcode(status) == 0 and m is not None and
          int(m.group(1)) == total and int(m.group(2)) == out_bytes[0])
    t.ok(ok and rss_mib < 64, "256 MiB streamed through a pipe in %.1f MiB resident" % rss_mib,
         err)


def main():
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        note_cases(t, tmp)
        cli_cases(t, tmp)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
