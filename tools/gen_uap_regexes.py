#!/usr/bin/env python3
"""Generate a .clf ruleset from uap-core's regexes.yaml (the ReDoS benchmark's rules).

Usage (from the repository root):

    python3 tools/gen_uap_regexes.py [REGEXES_YAML] -o OUT.clf
                                     [--classifyc PATH] [--sections ua[,os,device]]
                                     [--commit SHA] [--jobs N] [--report FILE.json]

REGEXES_YAML defaults to ../shared/corpora/uap-core/regexes.yaml relative to
the repository root; the upstream commit written into the header is read from
LICENSE-NOTE.md beside it ("Commit: <40 hex digits>") unless --commit is
given. --classifyc defaults to build/cli/classifyc.

What it does:
 1. reads the parser lists of regexes.yaml (python3-yaml): by default
    `user_agent_parsers` only (--sections ua); `os` and `device` add
    `os_parsers` and `device_parsers`;
 2. translates every `regex` into a .clf regex literal: the body is
    upstream's text with every unescaped `/` written `\\/`, raw CR/LF/TAB,
    NUL and other control bytes written as PCRE escapes (`\\r`, `\\n`,
    `\\t`, `\\xNN`), so the literal stays on one line and means the same
    regex; upstream's `regex_flag: 'i'` becomes the `i` flag;
 3. checks them with the real compiler: the assembled ruleset is
    compiled with `classifyc --check`; while that fails, the pattern the
    error points at is left out (it is also compiled alone, to tell a
    pattern Hyperscan refuses from one refused only together with the
    others) and the rest compiled again. If an error names no pattern,
    every pattern is first checked alone (`--jobs` in parallel). The
    refused patterns (backreferences, look-around, embedded anchors,
    repeats too large, ...) are listed in the header with Hyperscan's
    message (taken from libhs directly when classifyc's message, which
    quotes the whole regex first, was cut short before it); the last,
    successful compile is the proof that the output compiles;
 4. writes OUT.clf: one `const UAP_n = /.../` per accepted pattern of
    user_agent_parsers[n] (UAP_OS_n, UAP_DEVICE_n for the other lists; n is
    the 0-based position in upstream's list), and a `filter main` that
    rejects "uap-n" ("uap-os-n", "uap-device-n") when the User-Agent header
    matches, in upstream order, and otherwise accepts. Every test is on one
    field, so the compiled rules hold one Hyperscan database for the
    User-Agent, scanned at most once per request.

The output depends only on the bytes of regexes.yaml, the sections, the
upstream commit and what the compiler (and its Hyperscan) accepts: no dates,
no absolute paths. --report writes the counts and the refused patterns as
JSON (bench/redos/run.py prints them).

Exit status: 0 written; 1 the assembled ruleset still fails to compile (a
bug); 2 usage or input errors.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from clfgen import GenError, one_line_comment, read_commit, write_atomic  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT_REL = "../shared/corpora/uap-core/regexes.yaml"
DEFAULT_CLASSIFYC_REL = "build/cli/classifyc"
UPSTREAM_REPO = "github.com/ua-parser/uap-core"

# section key -> (regexes.yaml list, const prefix, reason prefix)
SECTIONS = {
    "ua": ("user_agent_parsers", "UAP_", "uap-"),
    "os": ("os_parsers", "UAP_OS_", "uap-os-"),
    "device": ("device_parsers", "UAP_DEVICE_", "uap-device-"),
}
SECTION_ORDER = ("ua", "os", "device")

HS_MSG = "cannot be compiled by Hyperscan: "


# ---------------------------------------------------------------- translate

def clf_regex_body(regex):
    """Upstream regex text -> the body of a .clf regex literal (between the
    slashes), meaning the same regex to Hyperscan.

    The .clf lexer reads a regex as `/` { any byte but `/`, `\\`, LF | `\\`
    and any byte but LF } `/` and passes the body to Hyperscan unchanged;
    PCRE syntax reads `\\/` as `/`. So: an unescaped `/` becomes `\\/` (also
    inside a character class, where `\\/` is still `/`); the byte after a
    `\\` is kept as it is (already escaped), except that a raw control byte
    there, or anywhere else, is written as its PCRE escape so that the
    literal is one line of printable text. Non-ASCII characters are kept as
    UTF-8 bytes (the compiler does not set HS_FLAG_UTF8: bytes are matched
    as bytes, as the .clf language specifies).
    """
    out = []
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

    def ctrl(ch):
        return named.get(ch) or "\\x%02X" % ord(ch)

    i, n = 0, len(regex)
    while i < n:
        ch = regex[i]
        if ch == "\\":
            if i + 1 == n:
                raise GenError("ends with a lone backslash")
            nxt = regex[i + 1]
            if ord(nxt) < 0x20 or nxt == "\x7f":
                # `\<control byte>` is that byte, literally, in PCRE
                out.append(ctrl(nxt))
            else:
                out.append("\\" + nxt)
            i += 2
            continue
        if ch == "/":
            out.append("\\/")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(ctrl(ch))
        else:
            out.append(ch)
        i += 1
    body = "".join(out)
    if not body:
        raise GenError("empty regex (a .clf regex literal needs at least one character)")
    return body


# -------------------------------------------------------------------- input

def load_patterns(yaml_path, sections):
    """[(section, index, regex text, caseless, label)] in upstream order, and
    the sha256 of the file."""
    try:
        import yaml
    except ImportError:
        raise GenError("python3-yaml is needed (apt-get install python3-yaml)")
    try:
        raw = yaml_path.read_bytes()
    except OSError as e:
        raise GenError("cannot read %s: %s" % (yaml_path, e.strerror))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(raw, Loader=loader)
    except yaml.YAMLError as e:
        raise GenError("%s: not valid YAML: %s" % (yaml_path, e))
    pats = []
    for sec in sections:
        key = SECTIONS[sec][0]
        lst = doc.get(key) if isinstance(doc, dict) else None
        if not isinstance(lst, list):
            raise GenError("%s: no `%s` list" % (yaml_path, key))
        for i, entry in enumerate(lst):
            if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
                raise GenError("%s: %s[%d] has no string `regex`" % (yaml_path, key, i))
            flag = entry.get("regex_flag")
            if flag not in (None, "i"):
                raise GenError("%s: %s[%d]: unknown regex_flag %r" % (yaml_path, key, i, flag))
            label = (entry.get("family_replacement") or entry.get("os_replacement")
                     or entry.get("device_replacement") or "")
            pats.append((sec, i, entry["regex"], flag == "i", label))
    return pats, hashlib.sha256(raw).hexdigest()


# ------------------------------------------------------------------- render

def const_name(sec, i):
    return "%s%d" % (SECTIONS[sec][1], i)


def reason(sec, i):
    return "%s%d" % (SECTIONS[sec][2], i)


def literal(body, caseless):
    return "/%s/%s" % (body, "i" if caseless else "")


def render_rules(items):
    """items: [(sec, i, literal text)] -> the consts and the filter (no header).
    Returns (text, {line number: item index}) for mapping compiler errors."""
    lines = []
    where = {}
    for k, (sec, i, lit) in enumerate(items):
        lines.append("const %s = %s" % (const_name(sec, i), lit))
        where[len(lines)] = k
    lines.append("")
    lines.append("filter main(req: Request) {")
    lines.append('    let ua = req.header("user-agent")')
    for sec, i, _ in items:
        lines.append('    if ua.matches(%s) { reject "%s" }' % (const_name(sec, i), reason(sec, i)))
    lines.append("    accept")
    lines.append("}")
    return "\n".join(lines) + "\n", where


def run_check(classifyc, text, tmpdir, tag):
    """`classifyc --check` on `text`; returns (ok, stderr)."""
    path = os.path.join(tmpdir, "p%s.clf" % tag)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    try:
        p = subprocess.run([classifyc, "--check", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
    except subprocess.TimeoutExpired:
        return False, "%s:1:1: error: classifyc --check took more than 300 s" % path
    finally:
        os.unlink(path)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode == 2:
        raise GenError("classifyc failed to run (exit 2): %s" % err.strip())
    return p.returncode == 0, err


def error_message(stderr):
    """The useful part of classifyc's first error: Hyperscan's message when
    there is one, else the whole first error line (without the file name)."""
    first = ""
    for line in stderr.splitlines():
        if ": error: " in line:
            first = line.split(": error: ", 1)[1]
            break
    if HS_MSG in first:
        return "Hyperscan: " + first.split(HS_MSG, 1)[1]
    if first:
        return first
    return stderr.strip().splitlines()[0] if stderr.strip() else "unknown error"


def error_lines(stderr):
    """Line numbers of the errors classifyc reported."""
    return [int(m.group(1)) for m in re.finditer(r"^[^\n]*?\.clf:(\d+):\d+: error: ", stderr, re.M)]


def hyperscan_version():
    try:
        p = subprocess.run(["pkg-config", "--modversion", "libhs"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=30)
        v = p.stdout.decode().strip()
        return v if p.returncode == 0 and v else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


HEADER = """\
// uap-core user-agent regexes as a .clf ruleset (the ReDoS benchmark's rules)
//
// generated -- do not edit. Regenerate from the repository root with:
//     {regen}
//
// Source: https://{repo}
//   commit {commit}, file regexes.yaml (sha256 {sha})
//   Copyright 2009 Google Inc., Apache License 2.0 (see LICENSE in the
//   upstream repository). The regexes below are upstream's, unchanged except
//   that `/` is written `\\/` (and control bytes as escapes) to fit the .clf
//   regex literal; regex_flag 'i' is the `i` flag.
//
// Lists: {lists}
// Accepted by classifyc (Hyperscan {hsver}): {naccepted} of {ntotal} patterns.
// Refused (left out), {nrefused}:
{refused}
//
// Rule n of a list is `const <PREFIX>n` (n = 0-based position in upstream's
// list); `main` rejects with reason "<prefix>n" for the first pattern, in
// upstream order, that matches the User-Agent, and otherwise accepts. All
// the tests read one field, so the compiled rules scan the User-Agent with
// one Hyperscan database, once per request.

"""


def render(pats, results, sections, commit, sha, regen, hsver):
    accepted = [(p, r) for p, r in zip(pats, results) if r["ok"]]
    refused = [(p, r) for p, r in zip(pats, results) if not r["ok"]]
    reflines = []
    for (sec, i, _, _, label), r in refused:
        reflines.append("//   %s[%d]%s: %s" % (SECTIONS[sec][0], i,
                                                 " (%s)" % one_line_comment(label) if label else "",
                                                 one_line_comment(r["why"])))
    lists = ", ".join("%s (%d, const %sn)" % (SECTIONS[s][0], sum(1 for p in pats if p[0] == s),
                                                SECTIONS[s][1]) for s in sections)
    header = HEADER.format(regen=regen, repo=UPSTREAM_REPO, commit=commit, sha=sha, lists=lists,
                           hsver=hsver, naccepted=len(accepted), ntotal=len(pats),
                           nrefused=len(refused), refused="\n".join(reflines) or "//   (none)")
    body, _ = render_rules([(p[0], p[1], r["literal"]) for p, r in accepted])
    return header + body


# --------------------------------------------------------------------- main

def hs_direct_message(body, caseless):
    """Hyperscan's own message for one pattern, compiled through libhs with
    the flags classifyc uses for a regex literal (SINGLEMATCH, ALLOWEMPTY,
    CASELESS for `i`). Only used when classifyc's message was cut short
    before Hyperscan's part (it quotes the whole regex first). None when
    libhs cannot be loaded or the pattern compiles."""
    try:
        import ctypes
        import ctypes.util
        hs = ctypes.CDLL(ctypes.util.find_library("hs") or "libhs.so.5")
    except OSError:
        return None

    class CompileError(ctypes.Structure):
        _fields_ = [("message", ctypes.c_char_p), ("expression", ctypes.c_int)]

    hs.hs_compile.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(ctypes.POINTER(CompileError))]
    hs.hs_free_database.argtypes = [ctypes.c_void_p]
    hs.hs_free_compile_error.argtypes = [ctypes.POINTER(CompileError)]
    db, err = ctypes.c_void_p(), ctypes.POINTER(CompileError)()
    flags = 8 | 16 | (1 if caseless else 0)   # SINGLEMATCH | ALLOWEMPTY | CASELESS
    rc = hs.hs_compile(body.encode("utf-8"), flags, 1, None, ctypes.byref(db), ctypes.byref(err))
    if rc == 0:
        hs.hs_free_database(db)
        return None
    msg = err.contents.message.decode("utf-8", "replace") if err else None
    if err:
        hs.hs_free_compile_error(err)
    return msg


def why_refused(err, pat, lit):
    msg = error_message(err)
    if not msg.startswith("Hyperscan: ") and "cannot be compiled by Hyperscan" not in err \
            and msg.startswith("regex /"):
        direct = hs_direct_message(lit[1:lit.rindex("/")], pat[3])
        if direct:
            msg = "Hyperscan: " + direct
    return msg


def check_all(classifyc, pats, jobs):
    """Marks every pattern accepted or refused (with the reason).

    The assembled ruleset is compiled with `classifyc --check`; while it
    fails, the pattern the error points at is refused (Hyperscan reports the
    first pattern of a database it cannot compile) and the rest compiled
    again. A pattern refused there is compiled alone as well, to tell "refused"
    from "refused only together with the others". If an error names no
    pattern, every pattern is checked alone (`jobs` in parallel) first."""
    results = []
    for sec, i, regex, caseless, _ in pats:
        try:
            results.append({"ok": True, "literal": literal(clf_regex_body(regex), caseless)})
        except GenError as e:
            results.append({"ok": False, "literal": None, "why": "not translated: %s" % e})

    with tempfile.TemporaryDirectory(prefix="gen_uap.") as tmp:
        def alone(k):
            text, _ = render_rules([(pats[k][0], pats[k][1], results[k]["literal"])])
            return k, run_check(classifyc, text, tmp, str(k))

        checked_alone = False
        while True:
            idx = [k for k, r in enumerate(results) if r["ok"]]
            text, where = render_rules([(pats[k][0], pats[k][1], results[k]["literal"]) for k in idx])
            ok, err = run_check(classifyc, text, tmp, "all")
            if ok:
                break
            bad = [idx[where[ln]] for ln in error_lines(err) if ln in where]
            if bad:
                for k in bad:
                    ok1, err1 = alone(k)[1]
                    results[k]["ok"] = False
                    if ok1:
                        results[k]["why"] = ("refused only together with the others: " +
                                             why_refused(err, pats[k], results[k]["literal"]))
                    else:
                        results[k]["why"] = why_refused(err1, pats[k], results[k]["literal"])
                continue
            if checked_alone:
                raise GenError("the assembled ruleset does not compile, and the error names no "
                               "pattern:\n%s" % err)
            checked_alone = True
            with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
                for k, (ok1, err1) in ex.map(alone, idx):
                    if not ok1:
                        results[k]["ok"] = False
                        results[k]["why"] = why_refused(err1, pats[k], results[k]["literal"])
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("regexes_yaml", nargs="?", default=None,
                    help="path of regexes.yaml (default: <repo>/%s)" % DEFAULT_INPUT_REL)
    ap.add_argument("-o", "--output", required=True, help="the .clf file to write")
    ap.add_argument("--classifyc", default=None,
                    help="the compiler used to check each pattern (default: <repo>/%s)"
                    % DEFAULT_CLASSIFYC_REL)
    ap.add_argument("--sections", default="ua",
                    help="comma-separated lists to take: ua (user_agent_parsers), os, device; "
                         "default ua")
    ap.add_argument("--commit", default=None,
                    help="upstream commit for the header (default: from LICENSE-NOTE.md)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="parallel classifyc checks when every pattern has to be checked alone "
                         "(default: the number of CPUs)")
    ap.add_argument("--report", default=None, help="also write counts and refusals as JSON here")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    a = ap.parse_args(argv)

    yaml_path = Path(a.regexes_yaml) if a.regexes_yaml else REPO_ROOT / DEFAULT_INPUT_REL
    classifyc = a.classifyc or str(REPO_ROOT / DEFAULT_CLASSIFYC_REL)
    secs = [s.strip() for s in a.sections.split(",") if s.strip()]
    try:
        for s in secs:
            if s not in SECTIONS:
                raise GenError("unknown section %r (ua, os, device)" % s)
        if not secs:
            raise GenError("--sections is empty")
        sections = [s for s in SECTION_ORDER if s in secs]
        if not os.access(classifyc, os.X_OK):
            raise GenError("%s is not an executable (build first, or pass --classifyc)" % classifyc)
        commit = a.commit or read_commit(yaml_path)
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
            raise GenError("--commit must be a hex commit id")
        pats, sha = load_patterns(yaml_path, sections)
        results = check_all(classifyc, pats, max(1, a.jobs))
    except GenError as e:
        print("gen_uap_regexes: error: %s" % e, file=sys.stderr)
        return 2

    regen = "python3 tools/gen_uap_regexes.py %s%s -o OUT.clf" % (
        DEFAULT_INPUT_REL, "" if sections == ["ua"] else " --sections " + ",".join(sections))
    text = render(pats, results, sections, commit, sha, regen, hyperscan_version())
    out = Path(a.output)
    write_atomic(out, text, encoding="utf-8")

    refused = [(p, r) for p, r in zip(pats, results) if not r["ok"]]
    nacc = len(pats) - len(refused)
    if a.report:
        rep = {
            "sections": [SECTIONS[s][0] for s in sections],
            "total": len(pats), "accepted": nacc, "refused": len(refused),
            "per_section": {SECTIONS[s][0]: {"total": sum(1 for p in pats if p[0] == s),
                                             "accepted": sum(1 for p, r in zip(pats, results)
                                                             if p[0] == s and r["ok"])}
                            for s in sections},
            "refusals": [{"list": SECTIONS[p[0]][0], "index": p[1], "regex": p[2],
                          "why": r["why"]} for p, r in refused],
            "commit": commit, "sha256": sha, "output": str(out),
        }
        Path(a.report).write_text(json.dumps(rep, indent=1) + "\n", encoding="utf-8")
    if not a.quiet:
        for (sec, i, regex, _, _), r in refused:
            short = regex if len(regex) <= 70 else regex[:67] + "..."
            print("gen_uap_regexes: refused %s[%d] %s -- %s" % (SECTIONS[sec][0], i, short, r["why"]))
    print("gen_uap_regexes: wrote %s: %d of %d patterns accepted, %d refused (%s)"
          % (out, nacc, len(pats), len(refused), ", ".join(SECTIONS[s][0] for s in sections)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
