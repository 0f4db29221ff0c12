#!/usr/bin/env python3
"""End-to-end test of classify-run (TAP version 12 on stdout).

    python3 run_e2e.py CLASSIFYC CLASSIFY_RUN E2E_CLF [REQUESTS_DIR]

Compiles E2E_CLF with CLASSIFYC into a temporary directory, then runs
CLASSIFY_RUN on the request files in REQUESTS_DIR (default: requests/ next
to this script) and checks the exact output lines, the --json objects, the
--ua-file mode, standard input, the error lines on stderr and the exit
statuses 0 (all classified), 1 (bad input) and 2 (usage, rules file).
"""

import json
import random
import os
import re
import subprocess
import sys
import tempfile


class Tap:
    """Collects results; prints the plan first, then every line."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        # one ASCII line whatever the locale; '#' would start a directive
        name = re.sub(r"\s+", " ", name).replace("#", "\\x23")
        self.lines.append("%s %d - %s" % ("ok" if cond else "not ok", self.n,
                                          name.encode("ascii", "backslashreplace").decode()))
        if not cond and diag:
            for line in str(diag).splitlines():
                self.lines.append("# " + line.encode("ascii", "backslashreplace").decode())
        return cond

    def eq(self, got, want, name):
        return self.ok(got == want, name, "got:  %r\nwant: %r" % (got, want))

    def done(self):
        print("1..%d" % self.n)
        for line in self.lines:
            print(line)
        sys.stdout.flush()


class Run:
    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err

    # surrogateescape: text output passes bytes that are not UTF-8 through
    def lines(self):
        return self.out.decode("utf-8", "surrogateescape").splitlines()

    def err_lines(self):
        return self.err.decode("utf-8", "surrogateescape").splitlines()

    def __str__(self):
        return "$ %s\nexit %s\nstdout: %r\nstderr: %r" % (
            " ".join(self.argv), self.rc, self.out[:1500], self.err[:1500])


def json_lines(r):
    """The JSON objects of r's stdout, one per line, or None."""
    try:
        return [json.loads(line) for line in r.lines()]
    except ValueError:
        return None


def run(argv, stdin=b""):
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return Run(argv, p.returncode, p.stdout, p.stderr)


# Request files (in REQUESTS_DIR) that classify, with their text output.
GOOD = [
    ("browser.http", "accept"),
    ("gptbot-lf.http", "reject ai-bot"),
    ("no-user-agent.http", "reject no-user-agent"),
    ("probe-absolute-form.http", "reject probe"),
    ("post-without-type.http", "reject post-without-type"),
    ("post-with-type.http", "accept"),
    ("debug-no-blank-line.http", "accept debug"),
    ("repeated-header.http", "reject joined"),
]

# Malformed request files and the message classify-run prints for each.
BAD = [
    ("bad-empty.http", "empty request"),
    ("bad-garbage.http",
     "invalid method encountered at line 1, column 1 (byte offset 0)"),
    ("bad-obs-fold.http",
     "obsolete line folding (a header value continued on the next line) "
     "at line 5, column 1 (byte offset 72)"),
    ("bad-space-before-colon.http",
     "whitespace between header name and colon at line 2, column 5 "
     "(byte offset 19)"),
]

# --ua-file input (bytes) and the expected (text line, JSON object) per line.
UA_FILE = (b"Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0\n"
           b"\n"
           b"gptbot/1.0\n"
           b"curl/8.5.0\r\n"
           b"xGPTBotx\n"
           b"a\tCCBot\n"
           b'say "hi" \\ caf\xc3\xa9 \xff\n'
           b"\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xf0\x9f\x98\x80\n"
           b"ctl\x01\x7f\n"
           b"last line without newline")
UA_EXPECT = [
    ("accept\tMozilla/5.0 (X11; Linux x86_64) Firefox/125.0",
     "Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0", "accept", None),
    ("reject no-user-agent\t", None, "reject", "no-user-agent"),
    ("reject ai-bot\tgptbot/1.0", "gptbot/1.0", "reject", "ai-bot"),
    ("accept\tcurl/8.5.0", "curl/8.5.0", "accept", None),
    ("accept\txGPTBotx", "xGPTBotx", "accept", None),
    ("reject ai-bot\ta\\x09CCBot", "a\tCCBot", "reject", "ai-bot"),
    ('accept\tsay "hi" \\ caf\u00e9 \udcff', 'say "hi" \\ caf\u00e9 \ufffd',
     "accept", None),
    # overlong, surrogate, above U+10FFFF: one U+FFFD per byte; U+1F600 kept
    ("accept\t\udcc0\udcaf \udced\udca0\udc80 \udcf4\udc90\udc80\udc80 \U0001f600",
     "\ufffd\ufffd \ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd \U0001f600",
     "accept", None),
    ("accept\tctl\\x01\\x7f", "ctl\x01\x7f", "accept", None),
    ("accept\tlast line without newline", "last line without newline",
     "accept", None),
]


def check_single_files(tap, cr, rules, req):
    for name, want in GOOD:
        r = run([cr, rules, "--request", req(name)])
        tap.ok(r.rc == 0 and r.lines() == [want] and r.err == b"",
               "%s: %s" % (name, want), r)


def check_many_files(tap, cr, rules, req):
    paths = [req(n) for n, _ in GOOD]
    r = run([cr, rules, "--request"] + paths)
    want = ["%s: %s" % (p, w) for p, (_, w) in zip(paths, GOOD)]
    tap.ok(r.rc == 0 and r.lines() == want and r.err == b"",
           "several files: 'FILE: verdict reason' lines in order", r)


def check_json(tap, cr, rules, req):
    paths = [req(n) for n, _ in GOOD]
    r = run([cr, rules, "--json", "--request"] + paths)
    objs = json_lines(r)
    want = []
    for p, (_, text) in zip(paths, GOOD):
        verdict, _, reason = text.partition(" ")
        want.append({"file": p, "verdict": verdict, "reason": reason or None})
    tap.ok(r.rc == 0 and objs == want, "--json: file, verdict, reason (null)",
           "%s\nparsed: %r" % (r, objs))


def check_malformed(tap, cr, rules, req):
    missing = req("does-not-exist.http")
    files = [req("browser.http")] + [req(n) for n, _ in BAD] + [missing]
    files.append(req("gptbot-lf.http"))
    r = run([cr, rules, "--request"] + files)
    tap.eq(r.rc, 1, "malformed and missing files: exit status 1")
    tap.eq(r.lines(), ["%s: accept" % files[0], "%s: reject ai-bot" % files[-1]],
           "malformed files: the good ones are still classified")
    want = ["classify-run: %s: error: %s" % (req(n), m) for n, m in BAD]
    want.append("classify-run: %s: error: cannot open: No such file or directory"
                % missing)
    tap.eq(r.err_lines(), want, "malformed files: one exact error line each")

    r = run([cr, rules, "--json", "--request", req("bad-garbage.http")])
    tap.ok(r.rc == 1 and r.out == b"" and len(r.err_lines()) == 1,
           "--json, malformed file: exit 1, nothing on stdout, error on stderr", r)


def check_ua_file(tap, cr, rules, tmp):
    path = os.path.join(tmp, "uas.txt")
    with open(path, "wb") as f:
        f.write(UA_FILE)
    r = run([cr, rules, "--ua-file", path])
    got = r.lines() if r.rc == 0 else None
    tap.ok(r.rc == 0 and r.err == b"" and got is not None and len(got) == len(UA_EXPECT),
           "--ua-file: exit 0, one line per input line", r)
    for i, (text, _, _, _) in enumerate(UA_EXPECT):
        tap.eq(got[i] if got and i < len(got) else None, text,
               "--ua-file line %d: %r" % (i + 1, text))

    r = run([cr, rules, "--ua-file", path, "--json"])
    objs = json_lines(r)
    want = [{"line": i + 1, "user_agent": ua, "verdict": v, "reason": why}
            for i, (_, ua, v, why) in enumerate(UA_EXPECT)]
    tap.ok(r.rc == 0 and objs == want,
           "--ua-file --json: line, user_agent (null when empty, U+FFFD for "
           "bad UTF-8), verdict, reason", "%s\nparsed: %r" % (r, objs))

    r = run([cr, rules, "--ua-file", os.path.join(tmp, "nope.txt")])
    tap.ok(r.rc == 1 and r.out == b"" and r.err_lines() ==
           ["classify-run: %s: error: cannot open: No such file or directory"
            % os.path.join(tmp, "nope.txt")],
           "--ua-file on a missing file: exit 1 with an error line", r)

    empty = os.path.join(tmp, "empty.txt")
    open(empty, "wb").close()
    r = run([cr, rules, "--ua-file", empty])
    tap.ok(r.rc == 0 and r.out == b"" and r.err == b"",
           "--ua-file on an empty file: no requests, exit 0", r)


def check_stdin(tap, cr, rules, req):
    with open(req("gptbot-lf.http"), "rb") as f:
        data = f.read()
    r = run([cr, rules, "--request", "-"], stdin=data)
    tap.ok(r.rc == 0 and r.lines() == ["reject ai-bot"], "--request -: reads stdin", r)

    r = run([cr, rules, "--request", req("browser.http"), "-"], stdin=data)
    tap.ok(r.rc == 0 and r.lines() == ["%s: accept" % req("browser.http"),
                                       "(standard input): reject ai-bot"],
           "--request FILE -: stdin is named (standard input)", r)

    r = run([cr, rules, "--json", "--request", "-"], stdin=data)
    tap.ok(r.rc == 0 and json_lines(r) ==
           [{"file": "-", "verdict": "reject", "reason": "ai-bot"}],
           "--json --request -: file is \"-\"", r)

    r = run([cr, rules, "--request", "-"], stdin=b"")
    tap.ok(r.rc == 1 and r.err_lines() ==
           ["classify-run: (standard input): error: empty request"],
           "--request - with empty stdin: exit 1, empty request", r)

    with open(rules, "rb") as f:
        rules_bytes = f.read()
    r = run([cr, "-", "--request", req("gptbot-lf.http")], stdin=rules_bytes)
    tap.ok(r.rc == 0 and r.lines() == ["reject ai-bot"], "RULES '-': reads stdin", r)

    r = run([cr, "-", "--request", "-"], stdin=rules_bytes)
    tap.ok(r.rc == 2 and r.err_lines()[:1] ==
           ["classify-run: error: standard input ('-') can be read only once"],
           "RULES '-' and --request -: usage error", r)

    r = run([cr, rules, "--ua-file", "-"], stdin=b"CCBot/2.0\n\nok\n")
    tap.ok(r.rc == 0 and r.lines() == ["reject ai-bot\tCCBot/2.0",
                                       "reject no-user-agent\t", "accept\tok"],
           "--ua-file -: reads stdin", r)


def check_too_many_headers(tap, cr, rules, tmp):
    # CLF_LIMIT_HEADERS defaults to 256; classify-run refuses, not drops.
    path = os.path.join(tmp, "many-headers.http")
    with open(path, "wb") as f:
        f.write(b"GET / HTTP/1.1\r\n")
        for i in range(300):
            f.write(b"X-H%d: v\r\n" % i)
        f.write(b"\r\n")
    r = run([cr, rules, "--request", path])
    tap.ok(r.rc == 1 and r.out == b"" and r.err_lines() ==
           ["classify-run: %s: error: header 257 (X-H256) refused: "
            "the request has more than 256 headers (CLF_LIMIT_HEADERS)" % path],
           "300 headers: exit 1, header refused", r)


def check_header_value_limit(tap, cr, rules, tmp):
    # CLF_LIMIT_HEADER_VALUE_BYTES defaults to 64 KiB: 65,536 bytes pass,
    # one more is refused (exit 1), never truncated.
    for n, want_rc in ((65536, 0), (65537, 1)):
        path = os.path.join(tmp, "ua-%d.http" % n)
        with open(path, "wb") as f:
            f.write(b"GET / HTTP/1.1\r\nUser-Agent: " + b"a" * n + b"\r\n\r\n")
        r = run([cr, rules, "--request", path])
        if want_rc == 0:
            tap.ok(r.rc == 0 and r.out == b"accept\n", "64 KiB User-Agent: classified", r)
        else:
            tap.ok(r.rc == 1 and r.err_lines() ==
                   ["classify-run: %s: error: header 1 (User-Agent) refused: the value of header "
                    "'User-Agent' is 65537 bytes, over the limit of 65536 "
                    "(CLF_LIMIT_HEADER_VALUE_BYTES)" % path],
                   "64 KiB + 1 User-Agent: exit 1, header refused", r)


def check_unbounded_inputs(tap, cr, rules, req):
    # /dev/zero never ends: every input is read with a bound.
    r = run([cr, "/dev/zero", "--request", req("browser.http")])
    tap.ok(r.rc == 2 and r.err_lines() == ["classify-run: /dev/zero: error: larger than 64 MiB"],
           "rules file /dev/zero: exit 2, larger than 64 MiB", r)
    r = run([cr, rules, "--request", "/dev/zero"])
    tap.ok(r.rc == 1 and r.err_lines() == ["classify-run: /dev/zero: error: larger than 16 MiB"],
           "request file /dev/zero: exit 1, larger than 16 MiB", r)
    r = run([cr, rules, "--ua-file", "/dev/zero"])
    tap.ok(r.rc == 1 and r.out == b"" and r.err_lines() ==
           ["classify-run: /dev/zero:1: error: line is longer than 64 MiB: not a list of "
            "User-Agents, the rest of the file is not read"],
           "--ua-file /dev/zero: exit 1, the file is given up after 64 MiB", r)


def check_json_utf8_like_python(tap, cr, rules, tmp):
    # Regression (issue 12, bug 8): a truncated sequence such as
    # \xf0\x9f\x98 gave one U+FFFD per byte. The rule is Unicode's
    # "maximal subpart", which Python's errors="replace" follows: compare
    # with it on random bytes biased toward UTF-8 lead and continuation
    # bytes.
    rnd = random.Random(12)
    alphabet = [b for b in range(256) if b not in (0x0a, 0x0d)]
    special = [0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed,
               0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x41]
    uas = [b"\xf0\x9f\x98", b"\xf0\x9f\x98 x", b"\xe2\x82x\xe2\x82\xac", b"\xf4\x8f\xbf"]
    for _ in range(400):
        n = rnd.randint(1, 12)
        uas.append(bytes(rnd.choice(special) if rnd.random() < 0.7 else rnd.choice(alphabet)
                         for _ in range(n)))
    path = os.path.join(tmp, "utf8.txt")
    with open(path, "wb") as f:
        f.write(b"\n".join(uas) + b"\n")
    r = run([cr, rules, "--ua-file", path, "--json"])
    objs = json_lines(r) or []
    got = [o["user_agent"] for o in objs]
    want = [ua.decode("utf-8", "replace") for ua in uas]
    bad = [(i + 1, uas[i], got[i], want[i]) for i in range(min(len(got), len(want)))
           if got[i] != want[i]]
    tap.ok(r.rc == 0 and len(got) == len(want) and not bad,
           "--json: invalid UTF-8 replaced as Python's errors='replace' does (maximal "
           "subparts), %d User-Agents" % len(uas), "%s\nfirst differences: %r" % (r, bad[:5]))


def check_request_file_limit(tap, cr, rules, tmp):
    # Regression (issue 12, bug 3): files from 16 MiB + 1 to 32 MiB - 1
    # were classified, the size not being checked again at end of file.
    head = b"GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n"
    for size, ok in ((16 << 20, True), ((16 << 20) + 1, False), ((24 << 20), False)):
        path = os.path.join(tmp, "big-%d.http" % size)
        with open(path, "wb") as f:
            f.write(head + b"b" * (size - len(head)))
        r = run([cr, rules, "--request", path])
        if ok:
            tap.ok(r.rc == 0 and r.out == b"accept\n", "request file of exactly 16 MiB: classified", r)
        else:
            tap.ok(r.rc == 1 and r.out == b"" and r.err_lines() ==
                   ["classify-run: %s: error: larger than 16 MiB" % path],
                   "request file of %d bytes: exit 1, larger than 16 MiB" % size, r)
        os.unlink(path)


def check_ua_file_long_lines(tap, cr, rules, tmp):
    # Regression (issue 12, bug 4): one over-long line dropped the rest of
    # the file, and the 1 MiB limit counted the newline.
    limit = 1 << 20
    path = os.path.join(tmp, "long-lines.txt")
    lines = [b"GPTBot/1.0", b"a" * (limit + 1), b"curl/8.5.0", b"b" * limit,
             b"c" * limit + b"\r", b"d" * (3 * limit), b"CCBot/2.0"]
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    r = run([cr, rules, "--ua-file", path, "--json"])
    objs = json_lines(r) or []
    got = [(o["line"], o["user_agent"], o["verdict"]) for o in objs]
    tap.eq(got, [(1, "GPTBot/1.0", "reject"), (3, "curl/8.5.0", "accept"),
                 (7, "CCBot/2.0", "reject")],
           "--ua-file: the lines after a skipped one are classified")
    # Lines of exactly 1 MiB are read whole (the limit does not count the
    # line ending) and handed to the library, whose header value limit
    # (64 KiB) refuses them; longer ones are skipped by classify-run.
    refused = ("classify-run: %s:%d: error: header 1 (User-Agent) refused: the value of header "
               "'User-Agent' is 1048576 bytes, over the limit of 65536 (CLF_LIMIT_HEADER_VALUE_BYTES)")
    skipped = "classify-run: %s:%d: error: line is longer than 1048576 bytes: skipped"
    tap.ok(r.rc == 1 and r.err_lines() ==
           [skipped % (path, 2), refused % (path, 4), refused % (path, 5), skipped % (path, 6)],
           "--ua-file: over-long lines named and skipped, 1 MiB lines (LF or CRLF) read whole, "
           "exit 1", r)


def check_usage(tap, cr, rules, req):
    f = req("browser.http")
    cases = [
        ([], "missing the RULES file"),
        ([rules], "nothing to classify: give --request, --ua-file or --log"),
        ([rules, "--request"], "option '--request' needs at least one file"),
        ([rules, "--bogus", "--request", f], "unknown option '--bogus'"),
        ([rules, "--ua-file"], "option '--ua-file' needs a file name"),
        ([rules, "--request", f, "--ua-file", f],
         "--request and --ua-file cannot be combined"),
        ([rules, "--request", "-", "-"],
         "standard input ('-') can be read only once"),
        ([rules, f, "--request", f],
         "unexpected argument '%s' (request files follow --request)" % f),
    ]
    for args, msg in cases:
        r = run([cr] + args)
        want = ["classify-run: error: " + msg,
                "Try 'classify-run --help' for more information."]
        tap.ok(r.rc == 2 and r.out == b"" and r.err_lines() == want,
               "usage error, exit 2: %s" % msg, r)

    r = run([cr, "--help"])
    text = r.out.decode("utf-8", "replace")
    tap.ok(r.rc == 0 and text.startswith("Usage: classify-run RULES.bin")
           and "Exit status:" in text and r.err == b"", "--help: exit 0", r)
    r = run([cr, "--version"])
    tap.ok(r.rc == 0 and re.match(r"classify-run \d+\.\d+\.\d+\nlibclassify ",
                                  r.out.decode("utf-8", "replace")) is not None,
           "--version: exit 0", r)
    r = run([cr, rules, "--request", "--", "--json"])
    tap.ok(r.rc == 1 and r.err_lines() ==
           ["classify-run: --json: error: cannot open: No such file or directory"],
           "'--' ends the options", r)


def check_bad_rules(tap, cr, rules, req, tmp):
    with open(rules, "rb") as f:
        good = f.read()
    variants = {
        "missing": None,
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "last byte cut": good[:-1],
        "flipped byte in the header": bytes([good[0] ^ 0x40]) + good[1:],
        "flipped byte in the middle": good[: len(good) // 2]
        + bytes([good[len(good) // 2] ^ 0x01]) + good[len(good) // 2 + 1:],
        "not a rules file": b"filter main(req: Request) { accept }\n",
    }
    for what, data in variants.items():
        path = os.path.join(tmp, "bad-%s.bin" % what.replace(" ", "-"))
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        r = run([cr, path, "--request", req("browser.http")])
        lines = r.err_lines()
        tap.ok(r.rc == 2 and r.out == b"" and len(lines) == 1
               and lines[0].startswith("classify-run: %s: error: " % path)
               and len(lines[0]) > len("classify-run: %s: error: " % path),
               "rules file %s: exit 2, one error line naming it" % what, r)


CLIENT_IP_CLF = '''const OFFICE = [192.0.2.0/24]
filter main(req: Request) {
    if !req.client_ip.valid() { reject "no-client-ip" }
    if req.client_ip in OFFICE { accept "office" }
    accept "outside"
}
'''


def check_client_ip(tap, classifyc, cr, tmp):
    src = os.path.join(tmp, "client_ip.clf")
    rules = os.path.join(tmp, "client_ip.bin")
    reqf = os.path.join(tmp, "xff.http")
    with open(src, "w") as f:
        f.write(CLIENT_IP_CLF)
    with open(reqf, "wb") as f:
        f.write(b"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.5, 10.0.0.2\r\n\r\n")
    r = run([classifyc, src, "-o", rules])
    if not tap.ok(r.rc == 0, "classifyc compiles the client-IP rules", r):
        return
    cases = [
        ([], b"reject no-client-ip\n", "no --remote-addr: the client is unknown"),
        (["--remote-addr", "127.0.0.1"], b"accept outside\n",
         "--remote-addr without --trust-proxy: the peer, X-Forwarded-For ignored"),
        (["--remote-addr", "127.0.0.1", "--trust-proxy", "127.0.0.0/8"], b"accept outside\n",
         "trusted peer: the rightmost untrusted X-Forwarded-For element (10.0.0.2)"),
        (["--remote-addr", "127.0.0.1", "--trust-proxy", "127.0.0.0/8",
          "--trust-proxy", "10.0.0.0/8"], b"accept office\n",
         "--trust-proxy repeated: the walk goes on past 10.0.0.2 to 192.0.2.5"),
        (["--remote-addr", "::ffff:192.0.2.9"], b"accept office\n",
         "an IPv4-mapped peer matches an IPv4 prefix"),
    ]
    for args, want, name in cases:
        r = run([cr, rules] + args + ["--request", reqf])
        tap.ok(r.rc == 0 and r.out == want and r.err == b"", name, r)
    r = run([cr, rules, "--remote-addr", "nope", "--request", reqf])
    tap.ok(r.rc == 2 and r.out == b"" and r.err_lines()[0] ==
           "classify-run: error: --remote-addr: 'nope' is not an IPv4 or IPv6 address",
           "a bad --remote-addr is a usage error", r)
    r = run([cr, rules, "--trust-proxy", "10.0.0.0/33", "--request", reqf])
    tap.ok(r.rc == 2 and r.out == b"" and r.err_lines() ==
           ["classify-run: --trust-proxy: error: trusted proxy '10.0.0.0/33' is not an IP "
            "address or CIDR prefix"], "a bad --trust-proxy is a usage error", r)


RDNS_CLF = b'''filter main(req: Request) {
    if !req.rdns_checked { accept "unknown" }
    if req.rdns.ends_with(".googlebot.com") { accept "googlebot" }
    reject "other"
}
'''


def check_rdns(tap, classifyc, cr, tmp):
    """--rdns NAME: the host's reverse-DNS answer; '' is resolved without a
    name; a name that is not one is a usage error."""
    src = os.path.join(tmp, "rdns.clf")
    rules = os.path.join(tmp, "rdns.bin")
    with open(src, "wb") as f:
        f.write(RDNS_CLF)
    r = run([classifyc, src, "-o", rules])
    if not tap.ok(r.rc == 0, "classifyc compiles the reverse-DNS rules", r):
        return
    for args, want in [([], b"accept unknown\n"),
                       (["--rdns", "CRAWL-1.googlebot.com."], b"accept googlebot\n"),
                       (["--rdns", ""], b"reject other\n"),
                       (["--rdns", "x.evilgooglebot.com"], b"reject other\n")]:
        r = run([cr, rules] + args + ["--request", "-"], stdin=b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        tap.ok(r.rc == 0 and r.out == want, "--rdns %r gives %r" % (args, want), r)
    r = run([cr, rules, "--rdns", "a b", "--request", "-"], stdin=b"GET / HTTP/1.1\r\n\r\n")
    tap.ok(r.rc == 2 and r.out == b"" and b"--rdns: byte 1 of the name is 0x20" in r.err,
           "a bad --rdns is a usage error", r)
    r = run([cr, rules, "--rdns", "a", "--rdns", "b", "--request", "-"])
    tap.ok(r.rc == 2 and b"given more than once" in r.err, "--rdns twice is a usage error", r)


FILTERS_CLF = b'''filter main(req: Request) {
    if req.path == "/admin" { reject "main-admin" }
    accept
}
filter strict(req: Request) {
    if req.header("user-agent") == "" { reject "no-ua" }
    if req.path.starts_with("/admin") { reject "strict-admin" }
    accept "strict-ok"
}
filter helper(req: Request) {
    if req.path == "/h" { reject "h" }
}
'''


def check_filter(tap, classifyc, cr, tmp):
    """--filter NAME: another entry filter decides; a filter that is not an
    entry is a usage error naming why (the library's message)."""
    src = os.path.join(tmp, "filters.clf")
    rules = os.path.join(tmp, "filters.bin")
    with open(src, "wb") as f:
        f.write(FILTERS_CLF)
    r = run([classifyc, src, "-o", rules])
    if not tap.ok(r.rc == 0, "classifyc compiles a file with two entry filters", r):
        return
    uas = b"Mozilla/5.0\n\n"
    r = run([cr, rules, "--ua-file", "-"], uas)
    tap.eq(r.out, b"accept\tMozilla/5.0\naccept\t\n", "without --filter: main decides")
    r = run([cr, rules, "--filter", "strict", "--ua-file", "-"], uas)
    tap.ok(r.rc == 0 and r.out == b"accept strict-ok\tMozilla/5.0\nreject no-ua\t\n",
           "--filter strict: strict decides every request", r)
    reqf = os.path.join(tmp, "admin.http")
    with open(reqf, "wb") as f:
        f.write(b"GET /admin/x HTTP/1.1\r\nHost: x\r\nUser-Agent: Mozilla/5.0\r\n\r\n")
    r = run([cr, rules, "--filter", "strict", "--json", "--request", reqf])
    tap.ok(r.rc == 0 and json_lines(r)[0]["reason"] == "strict-admin", "--filter with --json", r)
    r = run([cr, rules, "--filter", "strict", "--explain", "--request", reqf])
    tap.ok(r.rc == 0 and r.lines()[0] == "reject strict-admin" and
           any('reject "strict-admin"' in line for line in r.lines()[1:]),
           "--filter with --explain explains that filter", r)
    r = run([cr, rules, "--filter", "main", "--request", reqf])
    tap.eq(r.out, b"accept\n", "--filter main is the default")
    r = run([cr, rules, "--filter", "helper", "--request", reqf])
    tap.ok(r.rc == 2 and r.out == b"" and r.err_lines() ==
           ["classify-run: %s: error: --filter: filter 'helper' can end without a verdict (it may "
            "pass, or reach its end): only a filter that accepts or rejects on every path can "
            "decide a request" % rules], "--filter of a filter that may pass: exit 2, why", r)
    r = run([cr, rules, "--filter", "Strict", "--request", reqf])
    tap.ok(r.rc == 2 and r.out == b"" and r.err_lines() ==
           ["classify-run: %s: error: --filter: no filter 'Strict' in the file the rules were "
            "compiled from (entry filters: main, strict)" % rules],
           "--filter of an absent filter: exit 2, the entries listed", r)
    r = run([cr, rules, "--filter", "strict", "--filter", "main", "--request", reqf])
    tap.ok(r.rc == 2 and r.err_lines()[0] == "classify-run: error: option '--filter' given more than once",
           "--filter twice is a usage error", r)
    r = run([cr, rules, "--request", reqf, "--filter"])
    tap.ok(r.rc == 2 and r.err_lines()[0] == "classify-run: error: option '--filter' needs a filter name",
           "--filter without a name is a usage error", r)


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: %s CLASSIFYC CLASSIFY_RUN E2E_CLF [REQUESTS_DIR]\n"
                         % argv[0])
        return 2
    classifyc, cr, clf = (os.path.abspath(a) for a in argv[1:4])
    reqdir = argv[4] if len(argv) == 5 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "requests")

    def req(name):
        return os.path.join(reqdir, name)

    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="classify-run-e2e-") as tmp:
        rules = os.path.join(tmp, "rules.bin")
        r = run([classifyc, clf, "-o", rules])
        if not tap.ok(r.rc == 0 and os.path.isfile(rules),
                      "classifyc compiles e2e.clf", r):
            tap.done()
            return 1
        check_single_files(tap, cr, rules, req)
        check_many_files(tap, cr, rules, req)
        check_json(tap, cr, rules, req)
        check_malformed(tap, cr, rules, req)
        check_ua_file(tap, cr, rules, tmp)
        check_stdin(tap, cr, rules, req)
        check_too_many_headers(tap, cr, rules, tmp)
        check_header_value_limit(tap, cr, rules, tmp)
        check_unbounded_inputs(tap, cr, rules, req)
        check_ua_file_long_lines(tap, cr, rules, tmp)
        check_request_file_limit(tap, cr, rules, tmp)
        check_json_utf8_like_python(tap, cr, rules, tmp)
        check_usage(tap, cr, rules, req)
        check_bad_rules(tap, cr, rules, req, tmp)
        check_client_ip(tap, classifyc, cr, tmp)
        check_filter(tap, classifyc, cr, tmp)
        check_rdns(tap, classifyc, cr, tmp)
    tap.done()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
