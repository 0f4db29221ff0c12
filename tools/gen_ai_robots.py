#!/usr/bin/env python3
"""Generate stdlib/ai_robots.clf from ai.robots.txt's robots.json.

Usage (from the repository root):

    python3 tools/gen_ai_robots.py [ROBOTS_JSON] [-o OUT] [--commit SHA]
    python3 tools/gen_ai_robots.py --check [ROBOTS_JSON]

ROBOTS_JSON defaults to ../shared/corpora/ai-robots-txt/robots.json relative
to the repository root.  The upstream commit written into the header is read
from LICENSE-NOTE.md next to robots.json ("Commit: <40 hex digits>") unless
--commit is given.

--check regenerates in memory and compares with the committed file: exit 0 if
identical, exit 1 (with a unified diff on stderr) if not.  Exit 2 on usage or
input errors.  Python 3 standard library only.

Output is deterministic: it depends only on the bytes of robots.json and the
upstream commit (no dates, no absolute paths).
"""

import argparse
import difflib
import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT_REL = "../shared/corpora/ai-robots-txt/robots.json"
DEFAULT_OUTPUT_REL = "stdlib/ai_robots.clf"
REGEN_COMMAND = "python3 tools/gen_ai_robots.py " + DEFAULT_INPUT_REL
UPSTREAM_REPO = "github.com/ai-robots-txt/ai.robots.txt"
CONST_NAME = "AGENTS"
# Column at which the per-line `// function` comments start (if the literal is
# shorter); purely cosmetic, but fixed so that output stays deterministic.
COMMENT_COLUMN = 40


class GenError(Exception):
    pass


def clf_string_literal(text):
    """Return `text` as a .clf string literal.

    The .clf lexer knows the escapes \\" \\\\ \\n \\t \\r and \\xNN.  Every byte
    of the UTF-8 encoding outside printable ASCII (0x20..0x7e) is written as
    \\xNN, so the output file is pure ASCII and the literal denotes exactly
    the bytes of the upstream name.
    """
    out = ['"']
    for b in text.encode("utf-8"):
        c = chr(b)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif 0x20 <= b <= 0x7E:
            out.append(c)
        else:
            out.append("\\x%02X" % b)
    out.append('"')
    return "".join(out)


def one_line_comment(text):
    """Sanitize free text for use after `//`: one line, printable ASCII.

    Whitespace runs (including newlines) collapse to one space; other bytes
    outside printable ASCII are shown as \\xNN so nothing is silently lost.
    """
    text = re.sub(r"\s+", " ", text).strip()
    out = []
    for b in text.encode("utf-8"):
        out.append(chr(b) if 0x20 <= b <= 0x7E else "\\x%02X" % b)
    return "".join(out)


def read_commit(robots_json):
    note = robots_json.parent / "LICENSE-NOTE.md"
    try:
        text = note.read_text(encoding="utf-8")
    except OSError as e:
        raise GenError("cannot read %s (%s); pass --commit SHA" % (note, e.strerror))
    m = re.search(r"Commit:\s*`?([0-9a-f]{40})\b", text)
    if not m:
        raise GenError("no 'Commit: <40 hex>' line in %s; pass --commit SHA" % note)
    return m.group(1)


def load_agents(robots_json):
    try:
        raw = robots_json.read_bytes()
    except OSError as e:
        raise GenError("cannot read %s: %s" % (robots_json, e.strerror))
    try:
        # object_pairs_hook keeps upstream order and lets us detect duplicate keys
        pairs = json.loads(raw.decode("utf-8"), object_pairs_hook=lambda p: p)
    except (UnicodeDecodeError, ValueError) as e:
        raise GenError("%s: not valid UTF-8 JSON: %s" % (robots_json, e))
    if not isinstance(pairs, list):
        raise GenError("%s: top level must be a JSON object" % robots_json)
    agents = []
    seen = set()
    for name, entry in pairs:
        if name in seen:
            raise GenError("%s: duplicate agent name %r" % (robots_json, name))
        seen.add(name)
        if name == "":
            raise GenError("%s: empty agent name (the .clf set literal forbids empty elements)" % robots_json)
        fields = dict(entry) if isinstance(entry, list) else None
        if fields is None:
            raise GenError("%s: entry %r is not an object" % (robots_json, name))
        function = fields.get("function", "")
        if not isinstance(function, str):
            function = json.dumps(function)
        agents.append((name, function))
    if not agents:
        raise GenError("%s: no agents" % robots_json)
    return agents, hashlib.sha256(raw).hexdigest()


HEADER = """\
// ai_robots.clf -- AI crawler / assistant / agent names from ai.robots.txt
//
// generated -- do not edit. Regenerate from the repository root with:
//     {regen}
// and check freshness with:
//     python3 tools/gen_ai_robots.py --check
//
// Source: https://{repo}
//   commit {commit}, file robots.json (sha256 {sha})
//   Copyright (c) 2024 ai.robots.txt, MIT License (see LICENSE in the
//   upstream repository). The names below are upstream's data, unchanged.
//
// Contents: pub const {const} = {count} robots.txt product tokens, in upstream
// order, one per line; the trailing comment is the entry's `function` field.
//
// Matching semantics (intended use: ua.contains_word(ai_robots.{const})):
//   * ASCII case-insensitive (the `i` suffix): RFC 9309 section 2.2.1 says
//     crawlers match the robots.txt product token case-insensitively, and the
//     upstream maintainers treat names that way (.htaccess output uses [NC]).
//   * whole words: a name matches only if the byte before and the byte after
//     it are not [A-Za-z0-9_] (or are the start/end of the string). Upstream's
//     FAQ requires whole-word matching; substring matching flagged Internet
//     Explorer's `SLCC1` token as the agent `LCC` (upstream PR #260 introduced
//     \\b...\\b, PR #267 pinned that case). Do not use .contains() with this set.
//   * names may contain spaces, dots and slashes ("Brightbot 1.0",
//     "panscient.com", "iaskspider/2.0"); they are matched literally.
//   * {dupnote}
//
// Known risk: a few names are generic English words that also occur as whole
// words in unrelated User-Agents, e.g. `Spider` (Baiduspider's
// `.../search/spider.html`, many old search-engine crawlers), `Code`
// (`http://code.google.com/...`, an app's `Version Code: 123`), `Cursor`
// (`cursor@easymail.hu`), `Operator`, `Devin`, `Trae`, `YaK`, `LCC`.
// Upstream marks `Code` with has_name_and_version (real UA is `Code/<ver>`);
// this list does not use that hint. Rules needing fewer false positives
// should add context (e.g. a regex like /\\bCode\\/\\d/) instead of editing here.

"""


def render(agents, commit, sha):
    lowered = {}
    for name, _ in agents:
        lowered.setdefault(name.lower(), []).append(name)
    dups = [v for v in lowered.values() if len(v) > 1]
    if dups:
        dupnote = ("%d pairs of names differ only in case; both spellings are kept so\n"
                   "//     the list stays 1:1 with upstream (redundant under `i`):\n" % len(dups) +
                   "\n".join("//       " + " / ".join(v) for v in dups))
    else:
        dupnote = "no two names differ only in case."
    lines = [HEADER.format(regen=REGEN_COMMAND, repo=UPSTREAM_REPO, commit=commit,
                           sha=sha, const=CONST_NAME, count=len(agents), dupnote=dupnote)]
    lines.append("pub const %s = [\n" % CONST_NAME)
    for i, (name, function) in enumerate(agents):
        item = "    " + clf_string_literal(name) + ("," if i + 1 < len(agents) else "")
        comment = one_line_comment(function)
        if comment:
            item = item.ljust(COMMENT_COLUMN - 1) + " // " + comment
        lines.append(item.rstrip() + "\n")
    lines.append("]i\n")
    return "".join(lines)


def write_atomic(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate stdlib/ai_robots.clf from ai.robots.txt robots.json")
    ap.add_argument("robots_json", nargs="?", default=None,
                    help="path of robots.json (default: <repo>/%s)" % DEFAULT_INPUT_REL)
    ap.add_argument("-o", "--output", default=None,
                    help="output file (default: <repo>/%s)" % DEFAULT_OUTPUT_REL)
    ap.add_argument("--commit", default=None,
                    help="upstream commit for the header (default: from LICENSE-NOTE.md beside robots.json)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the output file differs from what would be generated")
    args = ap.parse_args(argv)

    robots_json = Path(args.robots_json) if args.robots_json else REPO_ROOT / DEFAULT_INPUT_REL
    output = Path(args.output) if args.output else REPO_ROOT / DEFAULT_OUTPUT_REL
    try:
        agents, sha = load_agents(robots_json)
        commit = args.commit or read_commit(robots_json)
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
            raise GenError("--commit must be a hex commit id")
        text = render(agents, commit, sha)
    except GenError as e:
        print("gen_ai_robots: error: %s" % e, file=sys.stderr)
        return 2

    if args.check:
        try:
            current = output.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print("gen_ai_robots: %s is missing or unreadable (%s); run: %s"
                  % (output, e, REGEN_COMMAND), file=sys.stderr)
            return 1
        if current == text:
            print("gen_ai_robots: %s is up to date (%d agents)" % (output, len(agents)))
            return 0
        diff = list(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                         str(output) + " (committed)", str(output) + " (generated)"))
        sys.stderr.write("gen_ai_robots: %s is out of date; run: %s\n" % (output, REGEN_COMMAND))
        sys.stderr.writelines(diff[:200])
        if len(diff) > 200:
            sys.stderr.write("... (%d more diff lines)\n" % (len(diff) - 200))
        return 1

    write_atomic(output, text)
    print("gen_ai_robots: wrote %s (%d agents)" % (output, len(agents)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
