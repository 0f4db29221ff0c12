#!/usr/bin/env python3
"""End-to-end test of classify-run --log and --diff (TAP version 12 on stdout).

    python3 replay_e2e.py CLASSIFYC CLASSIFY_RUN

Compiles two small rulesets (OLD and NEW below) and runs the real binary on
logs written here with known requests: nginx combined (with malformed lines,
an empty line, a line over 64 KiB, a bad client address, nginx's \\xHH
escapes), its gzip'd copy (under a name without .gz, and cut short), a
custom log_format template, standard input, and a Caddy JSON log written by
a real Caddy (started on a loopback port with JSON access logging, when
caddy is installed; skipped otherwise). It checks the exact verdict of every
line (--json), the summary's counts, networks and User-Agents, the malformed
line numbers, the --diff groups (text and --json), and the exit statuses.
"""

import gzip
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
sys.dont_write_bytecode = True
from run_e2e import Tap  # noqa: E402
from serve_common import free_port, wait_port  # noqa: E402

OLD = """
filter main(req: Request) {
    if req.client_ip in [10.0.0.0/8] { accept "internal" }
    let ua = req.header("user-agent")
    if ua == "" { reject "no-user-agent" }
    if ua.contains("GPTBot") { reject "ai-bot" }
    if req.path.starts_with("/wp-admin") { reject "probe" }
    accept
}
"""
# NEW: GPTBot under another reason, curl rejected, /wp-admin no longer a
# probe, and browsers without Accept-Language rejected.
NEW = """
filter main(req: Request) {
    if req.client_ip in [10.0.0.0/8] { accept "internal" }
    let ua = req.header("user-agent")
    if ua == "" { reject "no-user-agent" }
    if ua.contains("GPTBot") { reject "ai-crawler" }
    if ua.starts_with("curl/") { reject "scripted" }
    if ua.starts_with("Mozilla/") && !req.has_header("accept-language") { reject "no-language" }
    accept
}
"""

CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0.0.0 Safari/537.36")
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
WHEN = "[10/Oct/2024:13:55:36 +0000]"


def combined(addr, request, ua, status=200, referer="-"):
    return '%s - - %s "%s" %d 512 "%s" "%s"' % (addr, WHEN, request, status, referer, ua)


# (line, expected old verdict, new verdict) for every line of the log;
# None: malformed (no verdict), "": an empty line (skipped).
NGINX = [
    (combined("203.0.113.7", "GET /blog/post HTTP/1.1", CHROME), "accept", "reject no-language"),
    (combined("198.51.100.23", "GET /article?id=3 HTTP/1.1", GPTBOT), "reject ai-bot", "reject ai-crawler"),
    (combined("198.51.100.24", "GET /feed HTTP/1.1", GPTBOT), "reject ai-bot", "reject ai-crawler"),
    ("this is not a log line", None, None),
    ("", "", ""),
    (combined("2001:db8::1", "GET /wp-admin/ HTTP/1.1", "-", 404), "reject no-user-agent", "reject no-user-agent"),
    (combined("192.0.2.1", "\\x16\\x03\\x01\\x02\\x00", "-", 400), None, None),
    (combined("192.0.2.2", "GET /x?q=1 HTTP/1.1", "curl/8.5.0 \\x22quoted\\x22"), "accept", "reject scripted"),
    (combined("2001:db8:1:2::9", "POST /wp-admin/install.php HTTP/1.1", "curl/8.5.0"), "reject probe", "reject scripted"),
    (combined("10.1.2.3", "GET /metrics HTTP/1.1", "curl/8.5.0"), "accept internal", "accept internal"),
    (combined("not-an-address", "GET / HTTP/1.1", "curl/8.5.0"), None, None),
    (combined("192.0.2.3", "GET /wp-admin/ HTTP/1.0", "Wget/1.21"), "reject probe", "accept"),
    (combined("192.0.2.4", "GET /" + "a" * 70000 + " HTTP/1.1", "curl/8.5.0"), None, None),
    (combined("192.0.2.5", "GET /wp-admin/x HTTP/1.1", "Wget/1.21"), "reject probe", "accept"),
]
MALFORMED_LINES = [i + 1 for i, (_, o, _) in enumerate(NGINX) if o is None]


def verdicts(entries, which):
    """{line: "verdict[ reason]"} expected for classified lines."""
    return {i + 1: e[which] for i, e in enumerate(entries) if e[which]}


def got_verdicts(out):
    res = {}
    for line in out.decode().splitlines():
        o = json.loads(line)
        res[o["line"]] = o["verdict"] + (" " + o["reason"] if o["reason"] is not None else "")
    return res


def run(argv, stdin=None):
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def caddy_log(tmp):
    """Starts Caddy with a JSON access log, sends the CADDY requests, stops
    it; returns the log's path, or None when caddy is not installed."""
    caddy = shutil.which("caddy")
    if caddy is None:
        return None
    d = os.path.join(tmp, "caddy")
    os.makedirs(d)
    port = free_port()
    log = os.path.join(d, "access.log")
    # Test-only global options: no admin endpoint, no automatic HTTPS,
    # state under the temporary directory.
    with open(os.path.join(d, "Caddyfile"), "w") as f:
        f.write("{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n"
                "http://127.0.0.1:%d {\n\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n"
                "\trespond \"ok\"\n}\n" % (d, port, log))
    env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config",
               GOMAXPROCS="1")
    with open(os.path.join(d, "caddy.out"), "w") as out:
        p = subprocess.Popen([caddy, "run", "--config", os.path.join(d, "Caddyfile"),
                              "--adapter", "caddyfile"], stdout=out, stderr=out, env=env)
    try:
        if not wait_port(port, proc=p):
            raise RuntimeError("caddy did not start: " + open(os.path.join(d, "caddy.out")).read())
        for path, headers in CADDY:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.putrequest("GET", path, skip_accept_encoding=True)
            for k, v in headers:
                c.putheader(k, v)
            c.endheaders()
            c.getresponse().read()
            c.close()
        # Caddy writes each entry when the request is done; give the last
        # one a moment to reach the file.
        for _ in range(50):
            if os.path.exists(log) and sum(1 for _ in open(log)) >= len(CADDY):
                break
            time.sleep(0.1)
    finally:
        p.terminate()
        p.wait(timeout=10)
    return log


# Requests sent to Caddy: (target, headers); Caddy logs every header.
CADDY = [
    ("/blog/post", [("User-Agent", CHROME), ("Accept-Language", "en-GB,en;q=0.9")]),
    ("/blog/post", [("User-Agent", CHROME)]),
    ("/a?b=1", [("User-Agent", GPTBOT)]),
    ("/wp-admin/", [("User-Agent", "curl/8.5.0")]),
]
CADDY_EXPECT = [("accept", "accept"), ("accept", "reject no-language"),
                ("reject ai-bot", "reject ai-crawler"), ("reject probe", "reject scripted")]


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    classifyc, crun = sys.argv[1:3]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-replay-e2e-")
    try:
        rules = {}
        for name, src in (("old", OLD), ("new", NEW)):
            clf = os.path.join(tmp, name + ".clf")
            with open(clf, "w") as f:
                f.write(src)
            rules[name] = os.path.join(tmp, name + ".bin")
            subprocess.run([classifyc, clf, "-o", rules[name]], check=True)
        old, new = rules["old"], rules["new"]

        log = os.path.join(tmp, "access.log")
        with open(log, "w") as f:
            f.write("".join(e[0] + "\n" for e in NGINX))

        # --- replay, --json: every line's verdict -----------------------
        rc, out, err = run([crun, old, "--log", log, "--json"])
        t.eq(rc, 1, "--log --json: exit 1 (malformed lines)")
        t.eq(got_verdicts(out), verdicts(NGINX, 1), "--log --json: every line's verdict, old rules")
        objs = [json.loads(x) for x in out.decode().splitlines()]
        first = objs[0]
        t.eq(list(first), ["line", "verdict", "reason", "method", "path", "ua", "client"],
             "--json: the keys, in order")
        t.eq((first["method"], first["path"], first["ua"], first["client"]),
             ("GET", "/blog/post", CHROME, "203.0.113.7"), "--json: method, path, ua, client")
        curl = [o for o in objs if o["line"] == 8][0]
        t.eq((curl["path"], curl["ua"]), ("/x", 'curl/8.5.0 "quoted"'),
             "nginx's \\x22 escapes are decoded; the query is not the path")
        t.eq([o["ua"] for o in objs if o["line"] == 6], [None], "\"-\": no User-Agent (null)")
        t.eq([o["client"] for o in objs if o["line"] == 9], ["2001:db8:1:2::9"], "an IPv6 client")
        named = [int(m) for m in re.findall(r"access\.log:(\d+): (?:malformed|error):", err)]
        t.eq(named, MALFORMED_LINES, "each malformed line is named on stderr with its number")
        t.ok("longer than 65536 bytes" in err, "a line over 64 KiB is malformed", err)
        t.ok("the client address 'not-an-address' is not an IPv4 or IPv6 address" in err,
             "a bad client address is reported", err)
        t.ok("the request line '\\x16\\x03\\x01\\x02\\x00' is not METHOD TARGET PROTOCOL" in err,
             "a TLS handshake as nginx logs it: malformed, shown escaped", err)
        rc, out_new, _ = run([crun, new, "--log", log, "--json"])
        t.eq(got_verdicts(out_new), verdicts(NGINX, 2), "--log --json: every line's verdict, new rules")

        # --- the summary --------------------------------------------------
        rc, out, err = run([crun, old, "--log", log])
        text = out.decode()
        t.eq(rc, 1, "summary: exit 1 (malformed lines)")
        t.ok(text.startswith("log %s (nginx-combined): 14 lines, 9 requests, 1 empty\n" % log),
             "summary: lines, requests, empty lines; the format detected", text)
        t.ok("4 lines malformed or not classified (lines %s)\n" % ", ".join(map(str, MALFORMED_LINES))
             in text, "summary: the malformed line numbers", text)
        rows = dict(re.findall(r"^\s*(\S[^\n]*?)\s+([\d,]+)\s+[\d.]+%$", text, re.M))
        t.eq(rows, {"accepted": "3", "(no reason)": "2", "internal": "1", "rejected": "6",
                    "probe": "3", "ai-bot": "2", "no-user-agent": "1"},
             "summary: accepted and rejected by reason")
        t.ok("\nreject probe: 3 requests\n  top User-Agents\n"
             "               2  66.7%  Wget/1.21\n               1  33.3%  curl/8.5.0\n"
             "  top client networks\n               2  66.7%  192.0.2.0/24\n"
             "               1  33.3%  2001:db8:1::/48\n" in text,
             "summary: top User-Agents and networks (/24, /48) of a reason", text)

        # --- gzip: detected by the bytes, not the name; cut short --------
        gz = os.path.join(tmp, "access.log.1")
        with open(log, "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        rc, out, err = run([crun, old, "--log", gz, "--json"])
        t.eq((rc, got_verdicts(out)), (1, verdicts(NGINX, 1)), "a gzip'd log named without .gz")
        cut = os.path.join(tmp, "cut.gz")
        with open(gz, "rb") as f, open(cut, "wb") as g:
            data = f.read()
            g.write(data[:len(data) * 2 // 3])
        rc, out, err = run([crun, old, "--log", cut])
        t.ok(rc == 1 and "error: cannot read after line" in err and out.startswith(b"log "),
             "a gzip'd log cut short: an error naming where, the summary of what was read",
             "rc %d\n%s" % (rc, err))

        # --- standard input ----------------------------------------------
        with open(log, "rb") as f:
            rc, out, err = run([crun, old, "--log", "-", "--json"], stdin=f.read())
        t.eq(got_verdicts(out), verdicts(NGINX, 1), "--log -: standard input")

        # --- a log_format template ----------------------------------------
        tmpl = '$remote_addr [$time_local] "$request" $status "$http_user_agent" "$http_accept_language"'
        custom = os.path.join(tmp, "custom.log")
        with open(custom, "w") as f:
            f.write('192.0.2.9 %s "GET / HTTP/1.1" 200 "%s" "en-US"\n' % (WHEN, CHROME))
            f.write('192.0.2.9 %s "GET / HTTP/1.1" 200 "%s" "-"\n' % (WHEN, CHROME))
            f.write('192.0.2.9 %s "GET / HTTP/1.1" 200 "%s"\n' % (WHEN, CHROME))
        rc, out, err = run([crun, new, "--log", custom, "--log-format", tmpl, "--json"])
        t.eq((rc, got_verdicts(out)), (1, {1: "accept", 2: "reject no-language"}),
             "a log_format template: $http_accept_language is the Accept-Language header")
        t.ok(re.search(r"custom\.log:3: malformed: no '\" \"' after \$http_user_agent", err) is not None,
             "a template line missing a field names the variable", err)
        noaddr = os.path.join(tmp, "noaddr.log")
        with open(noaddr, "w") as f:
            f.write('GET /metrics HTTP/1.1|curl/8.5.0\n')
        rc, out, err = run([crun, old, "--log", noaddr, "--log-format", "$request|$http_user_agent",
                            "--remote-addr", "10.9.9.9", "--json"])
        t.eq((rc, got_verdicts(out)), (0, {1: "accept internal"}),
             "--remote-addr is the peer of lines that log no client")

        # --- Caddy: a real Caddy's JSON access log ------------------------
        clog = None
        try:
            clog = caddy_log(tmp)
        except Exception as e:  # noqa: BLE001 - reported as a failure below
            t.ok(False, "caddy: start and log", str(e))
        if clog is None:
            t.ok(True, "# SKIP caddy is not installed")
        else:
            for fmt in ([], ["--log-format", "caddy-json"]):
                rc, out, err = run([crun, old, "--log", clog, "--json"] + fmt)
                t.eq((rc, got_verdicts(out)), (0, {i + 1: e[0] for i, e in enumerate(CADDY_EXPECT)}),
                     "Caddy's JSON log %s: every request's verdict" % (fmt[1] if fmt else "(detected)"))
            rc, out, err = run([crun, new, "--log", clog, "--json"])
            objs = [json.loads(x) for x in out.decode().splitlines()]
            t.eq(got_verdicts(out), {i + 1: e[1] for i, e in enumerate(CADDY_EXPECT)},
                 "Caddy: every header is there (Accept-Language decides)")
            t.eq([(o["method"], o["path"], o["client"]) for o in objs[2:3]],
                 [("GET", "/a", "127.0.0.1")], "Caddy: method, path without the query, client")
            rc, out, err = run([crun, old, "--log", clog])
            t.ok(out.decode().startswith("log %s (caddy-json): 4 lines, 4 requests" % clog),
                 "Caddy: the summary names the detected format", out.decode())
            bad = os.path.join(tmp, "caddy-bad.log")
            with open(clog) as f, open(bad, "w") as g:
                lines = f.read().splitlines()
                g.write(lines[0] + "\n" + lines[0][:50] + "\n" +
                        '{"level":"info","msg":"server running"}\n' + lines[1] + "\n")
            rc, out, err = run([crun, old, "--log", bad, "--json"])
            t.ok(rc == 1 and len(out.splitlines()) == 2 and "caddy-bad.log:2: malformed: not JSON" in err
                 and "caddy-bad.log:3: malformed: no \"request\" object" in err,
                 "Caddy: a cut line and a non-access entry are malformed", err)

        # --- diff ------------------------------------------------------
        rc, out, err = run([crun, "--diff", old, new, "--log", log, "--json"])
        t.eq(rc, 1, "--diff: exit 1 when something changed")
        d = json.loads(out)
        t.eq((d["requests"], d["changed"], d["unchanged"], d["accept_to_reject"], d["reject_to_accept"],
              d["reason_changed"], d["bad_lines"], d["bad_line_numbers"]),
             (9, 7, 2, 2, 2, 3, 4, MALFORMED_LINES), "--diff --json: the counts")
        groups = [(g["change"], g["old"]["reason"], g["new"]["reason"], g["count"],
                   [e["line"] for e in g["examples"]]) for g in d["groups"]]
        t.eq(groups, [("accept->reject", None, "no-language", 1, [1]),
                      ("accept->reject", None, "scripted", 1, [8]),
                      ("reject->accept", "probe", None, 2, [12, 14]),
                      ("reason", "ai-bot", "ai-crawler", 2, [2, 3]),
                      ("reason", "probe", "scripted", 1, [9])],
             "--diff --json: the groups, their counts and example lines")
        g0 = d["groups"][0]
        t.ok(g0["old"]["explain"][-1]["text"] == "accept" and
             g0["new"]["explain"][-1]["text"] == 'reject "no-language"',
             "--diff --json: each group's example explained with both rules files", json.dumps(g0))
        rc, out, err = run([crun, "--diff", old, new, "--log", log])
        text = out.decode()
        t.ok(rc == 1 and "\nreject probe -> accept: 2 requests\n  line 12: " in text
             and "\nreason changed: reject ai-bot -> reject ai-crawler: 2 requests\n" in text
             and "  explain line 2 with %s (reject ai-crawler):\n" % new in text,
             "--diff: the text groups, examples and explains", text)
        t.ok(text.startswith("diff %s -> %s on %s (nginx-combined): 9 requests, 7 changed" % (old, new, log)),
             "--diff: the headline", text)
        rc, out, err = run([crun, "--diff", old, old, "--log", log])
        t.ok(rc == 0 and " 0 changed " in out.decode(), "--diff of a file with itself: exit 0",
             out.decode())
        rc, out, err = run([crun, "--diff", old, new, "--log", os.path.join(tmp, "missing.log")])
        t.ok(rc == 2 and "missing.log: error: cannot open" in err, "--diff: a missing log is exit 2", err)
        rc, out, err = run([crun, "--diff", old, os.path.join(tmp, "missing.bin"), "--log", log])
        t.eq(rc, 2, "--diff: a missing rules file is exit 2")

        # --- diff over request files (--request) -------------------------
        reqs = []
        for name, text in [("gptbot.http", "GET /a HTTP/1.1\nHost: x\nUser-Agent: %s\n" % GPTBOT),
                           ("curl.http", "GET /b HTTP/1.1\nHost: x\nUser-Agent: curl/8.5.0\n"),
                           ("bad.http", "NOT A REQUEST\n"),
                           ("lang.http", "GET / HTTP/1.1\nUser-Agent: %s\nAccept-Language: en\n" % CHROME)]:
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            reqs.append(path)
        rc, out, err = run([crun, "--diff", old, new, "--request"] + reqs + ["--json"])
        d = json.loads(out) if out else {}
        t.ok(rc == 1 and d.get("log", 1) is None and
             (d["requests"], d["changed"], d["unchanged"], d["bad_line_numbers"]) == (3, 2, 1, [3]) and
             [(g["change"], g["new"]["reason"], [e["text"] for e in g["examples"]]) for g in d["groups"]] ==
             [("accept->reject", "scripted", [reqs[1]]), ("reason", "ai-crawler", [reqs[0]])] and
             "bad.http: error: invalid method" in err,
             "--diff --request: request files, grouped; a malformed one named", out.decode() + err)
        rc, out, err = run([crun, "--diff", old, new, "--request"] + reqs)
        t.ok(rc == 1 and ("\naccept -> reject scripted: 1 request\n  %s\n  explain %s with %s (accept):\n"
                          % (reqs[1], reqs[1], old)) in out.decode(),
             "--diff --request: the text names the files", out.decode())

        # --- usage errors ------------------------------------------------
        for argv, msg in [
            ([old, "--log", log, "--request", "x.http"], "--log cannot be combined with --request"),
            ([old, "--log-format", "caddy-json", "--request", "x.http"], "--log-format goes with --log"),
            ([old, "--log", log, "--explain"], "--explain goes with --request or --ua-file"),
            (["--diff", old, new], "--diff needs --log FILE or --request FILE..."),
            (["--diff", old, new, "--log", log, "--request", "x.http"], "--log cannot be combined with --request"),
            (["--diff", old, new, "--request", "x.http", "--log-format", "caddy-json"], "--log-format goes with --log"),
            (["--diff", old, new, old, "--log", log], "--diff takes the two rules files"),
            ([old, "--log", log, "--log-format", "apache"], "is none of nginx-combined, caddy-json"),
            ([old, "--log", log, "--log-format", "$remote_addr$remote_user"], "cannot be told apart"),
            (["--log", "-", "--diff", "-", new], "can be read only once"),
        ]:
            rc, out, err = run([crun] + argv)
            t.ok(rc == 2 and msg in err and out == b"", "usage error, exit 2: %s" % msg, err)
        rc, out, err = run([crun, "--help"])
        help_text = out.decode()
        t.ok(all(o in help_text for o in ["--log FILE", "--log-format F", "--diff OLD NEW"]),
             "--help names --log, --log-format and --diff")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
