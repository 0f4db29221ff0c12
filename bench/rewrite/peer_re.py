#!/usr/bin/env python3
"""peer_re.py: the rewrite benchmark's Python peer: re.sub with one
alternation of all the rules (peers.python_rx), over each whole page.

    python3 peer_re.py RULES.tsv --write-out DIR PAGE...
    python3 peer_re.py RULES.tsv --time S PAGE...

RULES.tsv is an `rw-pagegen rules` file. --write-out writes each page's
output to DIR/BASENAME (bench/rewrite/run.py compares it with the
engine's). --time reads the pages into memory, then rewrites all of them
again and again until S seconds have passed (at least twice: the first
pass is a warm-up) and prints one JSON line: {"bytes": input bytes of one
pass, "secs": [wall seconds of each pass]} (time.perf_counter around the
passes only: no reading, no compiling).

Exit status: 0; 1 a rule set it cannot run (the reason on standard error);
2 bad arguments or unreadable files.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import peers  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rules")
    ap.add_argument("pages", nargs="+")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write-out", metavar="DIR")
    g.add_argument("--time", type=float, metavar="S")
    a = ap.parse_args()
    if a.time is not None and not 0 <= a.time <= 3600:
        ap.error("--time must be from 0 to 3600 seconds")
    try:
        rules = peers.read_rules(a.rules)
        data = []
        for p in a.pages:
            with open(p, "rb") as f:
                data.append(f.read())
    except (OSError, ValueError) as e:
        print("peer_re: %s" % e, file=sys.stderr)
        return 2
    try:
        rx, rep = peers.python_rx(rules)
    except peers.NotExpressible as e:
        print("peer_re: %s" % e, file=sys.stderr)
        return 1
    if a.write_out:
        for p, d in zip(a.pages, data):
            with open(os.path.join(a.write_out, os.path.basename(p)), "wb") as f:
                f.write(rx.sub(rep, d))
        return 0
    secs = []
    while len(secs) < 2 or sum(secs) < a.time:
        t0 = time.perf_counter()
        for d in data:
            rx.sub(rep, d)
        secs.append(time.perf_counter() - t0)
    print(json.dumps({"bytes": sum(map(len, data)), "secs": secs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
