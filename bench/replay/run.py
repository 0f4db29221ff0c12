#!/usr/bin/env python3
"""bench/replay/run.py: classify-run --log throughput (a report, not a test).

    python3 bench/replay/run.py BUILD_DIR [--corpora DIR] [--lines N] [--rounds R]
                                [--no-pin] [--keep] [--write-log FILE]

Steps:
 1. the log: N lines (default 1,000,000) of nginx's `combined` format, made
    reproducibly (random.Random(20240601)) from the benchmark workload's
    User-Agents (bench/workload.py: crawler-user-agents' instances and
    uap-core's test_ua.yaml), the workload's 12 rotating paths, client
    addresses from the documentation ranges, a fixed clock advancing one
    second per 100 lines, and the status and size of each path; one line in
    1,000 is left malformed (a TLS handshake as nginx logs it) so that the
    malformed-line path is timed too. Also gzip'd (level 6), and the same
    requests as Caddy's JSON access log (with the workload's full headers);
 2. stdlib/default.clf compiled with BUILD_DIR/cli/classifyc;
 3. `classify-run default.bin --log LOG` (the summary table, to /dev/null)
    R rounds (default 5) per log, pinned to one CPU with taskset (benchcommon
    pick_cpu, as bench/run.py), wall time around the process: lines per
    second = N / wall, the median of the rounds reported, with min and max.
    `--json` (one object per request, to /dev/null) is timed too on the
    plain log, and the constant policy (`accept`, nothing else) on the plain
    and Caddy logs: what reading, parsing, handing over and summing up cost
    without the rules. Lines per CPU-second (the child's user + system
    time) is printed beside the wall-clock rate, since on a shared machine
    the two differ by the time the process waits for a CPU.

The corpora directory is --corpora, else $CORPORA, else ../shared/corpora
beside the repository; without it the run prints why and exits 0 (skipped).
Exit status 1 when classify-run fails or its counts are not the log's.
"""

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
import workload  # noqa: E402
from benchcommon import pick_cpu  # noqa: E402

SEED = 20240601
STATUS = {"/wp-admin/": (404, 153), "/.env": (404, 153), "/robots.txt": (200, 67)}
MALFORMED_EVERY = 1000
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def esc(s):
    """nginx's default log escaping: '"', '\\' and bytes outside 0x20-0x7e as \\xHH."""
    out = []
    for b in s.encode("utf-8"):
        out.append("\\x%02X" % b if b < 0x20 or b > 0x7e or b in (0x22, 0x5c) else chr(b))
    return "".join(out)


def client(rng):
    if rng.random() < 0.1:
        return "2001:db8:%x:%x::%x" % (rng.randrange(16), rng.randrange(256), rng.randrange(1, 65536))
    return "%s.%d" % (rng.choice(["192.0.2", "198.51.100", "203.0.113"]), rng.randrange(1, 255))


def make_logs(reqs, n, plain, caddy):
    """Writes n lines of combined log to plain and of Caddy JSON to caddy;
    returns the number of malformed lines."""
    rng = random.Random(SEED)
    bad = 0
    t0 = 1717200000  # 2024-06-01 00:00:00 UTC
    with open(plain, "w", encoding="ascii") as f, open(caddy, "w", encoding="utf-8") as c:
        for i in range(n):
            method, path, query, hdrs = reqs[rng.randrange(len(reqs))]
            addr = client(rng)
            ts = t0 + i // 100
            tm = time.gmtime(ts)
            when = "%02d/%s/%d:%02d:%02d:%02d +0000" % (tm.tm_mday, MONTHS[tm.tm_mon - 1],
                                                         tm.tm_year, tm.tm_hour, tm.tm_min, tm.tm_sec)
            if i % MALFORMED_EVERY == MALFORMED_EVERY - 1:
                f.write('%s - - [%s] "\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xFC\\x03\\x03" 400 157 "-" "-"\n'
                        % (addr, when))
                c.write('{"level":"info","ts":%d.5,"logger":"http.log.access.log0",'
                        '"msg":"handled request","request":{"remote_ip":"%s"' % (ts, addr) + "\n")
                bad += 1
                continue
            target = path + ("?" + query if query else "")
            status, size = STATUS.get(path, (200, 5120 + (i % 7) * 311))
            h = dict(hdrs)
            f.write('%s - - [%s] "%s %s HTTP/1.1" %d %d "%s" "%s"\n'
                    % (addr, when, method, esc(target), status, size,
                       esc(h.get("Referer", "-")), esc(h.get("User-Agent", "-"))))
            entry = {"level": "info", "ts": ts + 0.5, "logger": "http.log.access.log0",
                     "msg": "handled request",
                     "request": {"remote_ip": addr, "remote_port": "%d" % (20000 + i % 40000),
                                 "client_ip": addr, "proto": "HTTP/1.1", "method": method,
                                 "host": h.get("Host", ""), "uri": target,
                                 "headers": {k: [v] for k, v in hdrs if k != "Host"}},
                     "bytes_read": 0, "user_id": "", "duration": 0.0004, "size": size,
                     "status": status, "resp_headers": {"Server": ["Caddy"]}}
            c.write(json.dumps(entry, separators=(",", ":")) + "\n")
    return bad


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_run(cmd, rounds, cpu):
    """Wall and CPU seconds (user + system, of the child) of each round."""
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
    walls, cpus = [], []
    out = None
    for _ in range(rounds):
        c = child_cpu()
        t = time.perf_counter()
        with open(os.devnull, "wb") as null:
            p = subprocess.run(pin + cmd, stdout=subprocess.PIPE if not cmd[-1] == "--json" else null,
                               stderr=subprocess.PIPE)
        walls.append(time.perf_counter() - t)
        cpus.append(child_cpu() - c)
        if p.returncode not in (0, 1):
            sys.stderr.write("replay bench: %s: exit %d\n%s" % (" ".join(cmd), p.returncode,
                                                                p.stderr.decode(errors="replace")))
            sys.exit(1)
        out = p.stdout
    return walls, cpus, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--corpora", default=os.environ.get("CORPORA") or
                    os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-pin", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--write-log", help="only write the nginx log to FILE, then exit")
    a = ap.parse_args()
    try:
        uas = workload.load_uas(a.corpora)
    except workload.Missing as e:
        print("replay bench: skipped: corpora not found: %s (pass --corpora DIR or set CORPORA)" % e)
        return 0
    reqs = workload.requests(uas)
    tmp = tempfile.mkdtemp(prefix="replay-bench-")
    try:
        plain = a.write_log or os.path.join(tmp, "access.log")
        caddy = os.path.join(tmp, "caddy.log")
        bad = make_logs(reqs, a.lines, plain, caddy)
        if a.write_log:
            print("replay bench: wrote %d lines (%d malformed) to %s" % (a.lines, bad, plain))
            return 0
        gz = plain + ".gz"
        with open(plain, "rb") as f, gzip.open(gz, "wb", compresslevel=6) as g:
            shutil.copyfileobj(f, g)
        rules = os.path.join(tmp, "default.bin")
        subprocess.run([os.path.join(a.build, "cli", "classifyc"), "-I", os.path.join(ROOT, "stdlib"),
                        os.path.join(ROOT, "stdlib", "default.clf"), "-o", rules], check=True)
        run = os.path.join(a.build, "cli", "classify-run")
        cpu, pinned = (None, "not pinned (--no-pin)") if a.no_pin else pick_cpu()
        print("replay bench: %d lines (%d malformed), %s plain, %s gzip'd, %s Caddy JSON; "
              "%d rounds, %s" % (a.lines, bad, size(plain), size(gz), size(caddy), a.rounds, pinned))
        const = os.path.join(tmp, "constant.bin")
        with open(os.path.join(tmp, "constant.clf"), "w") as f:
            f.write("filter main(req: Request) { accept }\n")
        subprocess.run([os.path.join(a.build, "cli", "classifyc"), os.path.join(tmp, "constant.clf"),
                        "-o", const], check=True)
        print("| rules | log | output | lines/s (wall) median | min | max | lines per CPU-second median | wall median |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for name, rf, label, log, extra in [
                ("default", rules, "nginx combined", plain, []),
                ("default", rules, "nginx combined, gzip'd", gz, []),
                ("default", rules, "Caddy JSON", caddy, []),
                ("default", rules, "nginx combined", plain, ["--json"]),
                ("constant", const, "nginx combined", plain, []),
                ("constant", const, "Caddy JSON", caddy, [])]:
            walls, cpus, out = time_run([run, rf, "--log", log] + extra, a.rounds, cpu)
            if not extra:
                first = out.decode().splitlines()[0]
                want = "%s lines, %s requests" % (format(a.lines, ","), format(a.lines - bad, ","))
                if want not in first:
                    sys.stderr.write("replay bench: %s: expected '%s' in '%s'\n" % (log, want, first))
                    return 1
            rates = sorted(a.lines / w for w in walls)
            print("| %s | %s | %s | %s | %s | %s | %s | %.2f s |"
                  % (name, label, "--json" if extra else "summary", format(int(statistics.median(rates)), ","),
                     format(int(rates[0]), ","), format(int(rates[-1]), ","),
                     format(int(statistics.median(a.lines / c for c in cpus)), ","), statistics.median(walls)))
            sys.stdout.flush()
        return 0
    finally:
        if a.keep:
            print("replay bench: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def size(path):
    return "%.1f MiB" % (os.path.getsize(path) / 1048576.0)


if __name__ == "__main__":
    sys.exit(main())
