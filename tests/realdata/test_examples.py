#!/usr/bin/env python3
"""realdata: the bundled examples (examples/main.clf + examples/requests/*.http) (TAP).

    test_examples.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR

Needs no corpora (CORPORA_DIR is accepted for a uniform interface and ignored),
so it also runs where /work/shared/corpora is absent.

Checks:
  * every examples/requests/*.http file gives the verdict listed in
    examples/README.md (EXPECTED_REQUESTS below; the set of files must match);
  * the specific User-Agents of the brief via --ua-file: IE 7 with `SLCC1`
    accepted, `CCBot/2.0 (https://commoncrawl.org/faq/)` rejected as
    ai-robots-txt, plus a few word-boundary / case cases that pin the
    contains_word semantics the stdlib relies on, and the product-token rule
    for the ambiguous names (`Code/1.115.0` rejected, `Version Code: 25454`
    and IE 6's `LCC Internal User` accepted);
  * the names in main.clf's AMBIGUOUS_AGENT_TOKEN regex are exactly those of
    `pub const AMBIGUOUS` in stdlib/ai_robots.clf (both files parsed) and of
    the reference model, so they cannot drift apart.
"""

import os
import sys

sys.dont_write_bytecode = True   # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata_common as rc  # noqa: E402

EXPECTED_REQUESTS = {
    "01-chrome-home.http": ("accept", None),
    "02-firefox-article.http": ("accept", None),
    "03-gptbot.http": ("reject", rc.AI),
    "04-claudebot.http": ("reject", rc.AI),
    "05-ccbot.http": ("reject", rc.AI),
    "06-ie7-slcc1.http": ("accept", None),
    "07-no-user-agent.http": ("reject", "no-user-agent"),
    "08-wp-admin-probe.http": ("reject", "probe"),
    "09-gptbot-robots-txt.http": ("accept", None),
    "10-python-requests.http": ("reject", "scripted-client"),
}

IE7_SLCC1 = "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727)"
CCBOT = "CCBot/2.0 (https://commoncrawl.org/faq/)"

# (User-Agent, expected, why) -- classified as `GET /` via --ua-file.
EXPECTED_UAS = [
    (IE7_SLCC1, ("accept", None), "IE 7 SLCC1 is not the agent LCC (upstream PR #267)"),
    (CCBOT, ("reject", rc.AI), "CCBot"),
    ("ccbot/2.0 (https://commoncrawl.org/faq/)", ("reject", rc.AI), "ASCII case-insensitive"),
    ("Mozilla/5.0 (compatible; ExaBot/3.0)", ("reject", rc.AI), "ExaBot as a word"),
    ("Mozilla/5.0 (compatible; Alexabot/1.0)", ("accept", None), "ExaBot inside Alexabot is not a word"),
    ("Mozilla/5.0 (compatible; GPTBot_test/1.0)", ("accept", None), "`_` is a word character"),
    ("Mozilla/5.0 (compatible; GPTBot2/1.0)", ("accept", None), "digit after the name"),
    ("Mozilla/5.0 (compatible; Brightbot 1.0)", ("reject", rc.AI), "name with a space and dot"),
    # the ambiguous names (ai_robots.AMBIGUOUS) count only as NAME/<digit>
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.115.0 "
     "Chrome/142.0.7444.265 Electron/39.8.5 Safari/537.36", ("reject", rc.AI), "Code/<digit>: GitHub Copilot"),
    ("Mozilla/5.0 (compatible; Operator/1.0; +https://www.example.com/bot.html)", ("reject", rc.AI),
     "Operator/<digit>"),
    ("LCC/1.0", ("reject", rc.AI), "LCC/<digit>"),
    ("cursor/0.50 (x)", ("reject", rc.AI), "Cursor/<digit>, ASCII case-insensitive"),
    ("Mozilla/5.0 (compatible; SPIDER/2.0)", ("reject", rc.AI), "Spider/<digit>, ASCII case-insensitive"),
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.2; LCC Internal User - 010; .NET CLR 1.1.4322)",
     ("accept", None), "IE 6: LCC as a bare word is not the agent"),
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; CaseDOSA/Operator; .NET CLR 1.1.4322)",
     ("accept", None), "IE 6: Operator without /<digit>"),
    ("Android - Plus500 client Version Name: 4.8 Version Code: 25454 Device: GT-S5830i", ("accept", None),
     "Plus500 app: `Version Code: 25454` is not Code/<digit>"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", ("accept", None),
     "Baiduspider: `spider.html` is not Spider/<digit>"),
    ("Kurzor/1.0 (Kurzor; http://adcenter.hu/docs/en/bot.html; cursor@easymail.hu)", ("accept", None),
     "e-mail address cursor@... is not Cursor/<digit>"),
    ("MyCode/1.0", ("accept", None), "word character left of Code/<digit>"),
    ("Code_x/1.0", ("accept", None), "`_` after the name"),
    ("Code/x", ("accept", None), "no digit after the slash"),
    ("Mozilla/5.0 (Linux; Android 14) Chrome/124.0 Mobile Safari/537.36", ("accept", None), "plain mobile Chrome"),
    ("Python-urllib/3.11", ("reject", "scripted-client"), "library default UA, any case"),
    ("Mozilla/5.0 (compatible; RecipeRadar/0.1; python-requests/2.32.3)", ("accept", None),
     "library token not at the start: a client that names itself"),
    ("curl/8.5.0", ("accept", None), "curl deliberately not rejected"),
]


def main():
    args = rc.Args(sys.argv)
    tap = rc.Tap()
    reqdir = os.path.join(args.root, "examples", "requests")
    try:
        present = sorted(f for f in os.listdir(reqdir) if f.endswith(".http"))
    except OSError as e:
        present = []
        tap.diag("cannot list %s: %s" % (reqdir, e))
    tap.ok(present == sorted(EXPECTED_REQUESTS), "examples/requests has exactly the %d listed .http files"
           % len(EXPECTED_REQUESTS), "present: %s" % present)
    crlf_ok = []
    for f in present:
        data = open(os.path.join(reqdir, f), "rb").read()
        crlf_ok.append(data.endswith(b"\r\n\r\n") and b"\n" not in data.replace(b"\r\n", b""))
    tap.ok(present and all(crlf_ok), "every request file uses CRLF line endings and ends with an empty line",
           "bad: %s" % [f for f, ok in zip(present, crlf_ok) if not ok])

    # examples/main.clf lists the ai_robots.AMBIGUOUS names again in a regex (the
    # language cannot build a regex from a set): the lists must not drift apart.
    try:
        token_names, token_flags, main_text = rc.main_clf_token_names(
            os.path.join(args.root, "examples", "main.clf"))
    except (OSError, ValueError) as e:
        token_names, token_flags, main_text = None, "", ""
        tap.diag("examples/main.clf: %s" % e)
    try:
        amb_names = [n for n, _ in rc.read_entries(
            open(os.path.join(args.root, "stdlib", "ai_robots.clf"), encoding="ascii").read(), "AMBIGUOUS")]
    except (OSError, ValueError, UnicodeDecodeError) as e:
        amb_names = None
        tap.diag("stdlib/ai_robots.clf: %s" % e)
    tap.ok(token_names is not None and amb_names is not None and sorted(token_names) == sorted(amb_names)
           and len(set(token_names)) == len(token_names),
           "examples/main.clf AMBIGUOUS_AGENT_TOKEN names exactly the ai_robots.AMBIGUOUS names",
           "regex: %r\nai_robots.AMBIGUOUS: %r" % (token_names, amb_names))
    tap.ok("i" in token_flags, "AMBIGUOUS_AGENT_TOKEN is ASCII case-insensitive like the sets",
           "flags: %r" % token_flags)
    tap.ok(amb_names is not None and sorted(rc.AMBIGUOUS) == sorted(amb_names),
           "the reference model's AMBIGUOUS (realdata_common.py) = ai_robots.AMBIGUOUS",
           "model: %r" % rc.AMBIGUOUS)
    tap.ok("ua.contains_word(ai_robots.SPECIFIC)" in main_text and "ua.matches(AMBIGUOUS_AGENT_TOKEN)" in main_text
           and "ai_robots.AGENTS" not in main_text,
           "examples/main.clf rule 2 uses ai_robots.SPECIFIC and AMBIGUOUS_AGENT_TOKEN, not AGENTS")

    with rc.tempdir() as tmp:
        rules, diag = rc.compile_main(args, tmp)
        if not tap.ok(rules is not None, "classifyc compiles examples/main.clf", diag):
            tap.finish()
        for f in sorted(EXPECTED_REQUESTS):
            want = EXPECTED_REQUESTS[f]
            got, diag = rc.classify_request(args, rules, os.path.join(reqdir, f))
            tap.ok(got == want, "--request examples/requests/%s: %s" % (f, rc.fmt(want)),
                   "got: %s\n%s" % (rc.fmt(got), diag))
        uas = [u for u, _, _ in EXPECTED_UAS]
        results, diag = rc.classify_uas(args, rules, uas, tmp)
        if not tap.ok(results is not None, "classify-run --ua-file --json on %d UAs" % len(uas), diag):
            tap.finish()
    for (ua, want, why), got in zip(EXPECTED_UAS, results):
        tap.ok(got == want, "%s: %s (%s)" % (rc.fmt(want), ua, why), "got: %s" % rc.fmt(got))
    tap.finish()


if __name__ == "__main__":
    main()
