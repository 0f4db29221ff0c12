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
    contains_word semantics the stdlib relies on.
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
    ("LCC (+http://corpora.informatik.uni-leipzig.de/crawler_faq.html)", ("reject", rc.AI), "LCC as a word"),
    ("Mozilla/5.0 (compatible; ExaBot/3.0)", ("reject", rc.AI), "ExaBot as a word"),
    ("Mozilla/5.0 (compatible; Alexabot/1.0)", ("accept", None), "ExaBot inside Alexabot is not a word"),
    ("Mozilla/5.0 (compatible; GPTBot_test/1.0)", ("accept", None), "`_` is a word character"),
    ("Mozilla/5.0 (compatible; GPTBot2/1.0)", ("accept", None), "digit after the name"),
    ("Mozilla/5.0 (compatible; Brightbot 1.0)", ("reject", rc.AI), "name with a space and dot"),
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
