#!/usr/bin/env python3
"""realdata: crawler-user-agents instances vs. examples/main.clf (TAP).

    test_crawler_user_agents.py CLASSIFYC CLASSIFY_RUN SOURCE_ROOT CORPORA_DIR
    test_crawler_user_agents.py --regen CORPORA_DIR   # print reference lists

Scope ("the entry's pattern names an ai.robots.txt agent"), precisely:
  1. take the entry's `pattern` (a regex) and normalise it:
     - drop the backslash of every escape of a non-alphanumeric character
       (`\\/` -> `/`, `\\.` -> `.`, `\\(` -> `(`, `\\ ` -> ` `); `\\s`, `\\d` stay;
     - replace a two-letter class that only differs in case (`[cC]`) by the letter;
  2. the entry is in scope if some robots.json name occurs in the normalised
     pattern as a whole word, ASCII case-insensitively: not preceded or followed
     by [A-Za-z0-9_] (same semantics as contains_word on a `[...]i` set).
  Every `instances` string of an in-scope entry must be rejected with reason
  "ai-robots-txt" when sent as the User-Agent (classify-run --ua-file),
  except the entries of KNOWN_NOT_AI below, whose expected verdict is given.

Snapshot (crawler-user-agents @ 7c7f9f2, ai.robots.txt @ 738c80d):
  117 in-scope entries, 154 instances; 153 -> ai-robots-txt, 1 exception.
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True   # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata_common as rc  # noqa: E402

EXPECTED_SCOPE = (117, 154)   # (entries, instances) for the snapshot above

# In-scope instances that must NOT be rejected as an AI agent, and why.
KNOWN_NOT_AI = {
    # crawler-user-agents' pattern `exabot` (Exalead) matches inside `Alexabot`;
    # the instance does not contain ExaBot as a word, so whole-word matching
    # correctly leaves it alone (a known weak upstream pattern, see notes).
    "Mozilla/5.0 (compatible; Alexabot/1.0; +http://www.alexa.com/help/certifyscan; certifyscan@alexa.com)":
        ("accept", None),
}

# Whole file (all 2,116 instances): exact verdict counts under examples/main.clf.
EXPECTED_COUNTS = {("accept", None): 1914, ("reject", rc.AI): 180, ("reject", "scripted-client"): 22}

# Instances OUTSIDE the scope above that are still rejected as ai-robots-txt:
# (pattern, instance). All are crawlers, but most are hit only through the
# generic robots.json names `Spider` / `Code` (wrong identity, e.g. Baidu's and
# Sogou's search crawlers, Feedly and VirusTotal fetching via App Engine with
# `code.google.com` in the UA); Awario's are its real operator name.
EXPECTED_EXTRA_AI = [
    ("Gigabot", "Gigabot/2.0 (http://www.gigablast.com/spider.html)"),
    ("speedy", "Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US) Speedy Spider (http://www.entireweb.com/about/search_tech/speedy_spider/)"),
    ("speedy", "Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US) Speedy Spider for SpeedyAds (http://www.entireweb.com/about/search_tech/speedy_spider/)"),
    ("speedy", "Mozilla/5.0 (compatible; Speedy Spider; http://www.entireweb.com/about/search_tech/speedy_spider/)"),
    ("speedy", "Speedy Spider (Entireweb; Beta/1.2; http://www.entireweb.com/about/search_tech/speedyspider/)"),
    ("speedy", "Speedy Spider (http://www.entireweb.com/about/search_tech/speedy_spider/)"),
    ("Baiduspider", "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)"),
    ("Baiduspider", "Mozilla/5.0 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)"),
    ("Sogou", "Sogou News Spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)"),
    ("Sogou", "Sogou Pic Spider/3.0(+http://www.sogou.com/docs/help/webmasters.htm#07)"),
    ("Sogou", "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)"),
    ("siteexplorer\\.info", "Mozilla/5.0 (compatible; SiteExplorer/1.1b; +http://siteexplorer.info/Backlink-Checker-Spider/)"),
    ("proximic", "Mozilla/5.0 (compatible; proximic; +http://www.proximic.com/info/spider.php)"),
    ("crawler4j", "crawler4j (http://code.google.com/p/crawler4j/)"),
    ("AppEngine-Google", "AppEngine-Google; (+http://code.google.com/appengine; appid: example)"),
    ("AppEngine-Google", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_13_4) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/65.0.3325.181 Safari/537.36 AppEngine-Google; (+http://code.google.com/appengine; appid: s~feedly-nikon3)"),
    ("seoscanners", "Mozilla/5.0 (compatible; seoscanners.net/1; +spider@seoscanners.net)"),
    ("CheckMarkNetwork\\/", "CheckMarkNetwork/1.0 (+http://www.checkmarknetwork.com/spider.html)"),
    ("AwarioSmartBot", "AwarioSmartBot/1.0 (+https://awario.com/bots.html; bots@awario.com)"),
    ("AwarioRssBot", "AwarioRssBot/1.0 (+https://awario.com/bots.html; bots@awario.com)"),
    ("virustotal", "Mozilla/5.0 (Windows; U; MSIE 9.0; Windows NT 9.0; en-US) AppEngine-Google; (+http://code.google.com/appengine; appid: s~virustotalcloud)"),
    ("virustotal", "AppEngine-Google; (+http://code.google.com/appengine; appid: s~virustotalcloud)"),
    ("AwarioBot", "Mozilla/5.0 (compatible; AwarioBot/1.0; +https://awario.com/bots.html)"),
    ("AwarioRendererBot", "AwarioRendererBot/1.0 (+https://awario.com/bots.html; bots@awario.com)"),
    ("ServerHunterSpider\\/", "Mozilla/5.0 (compatible; ServerHunterSpider/1.1; +https://www.serverhunter.com/spider/)"),
    ("SpiderLing", "Mozilla/5.0 (compatible; SpiderLing (a SPIDER for LINGustic research); +http://nlp.fi.muni.cz/projects/biwec/)"),
    ("WPMU DEV Broken Link Checker", "WPMU DEV Broken Link Checker Spider"),
]


def normalise_pattern(p):
    p = re.sub(r"\\([^A-Za-z0-9])", r"\1", p)
    return re.sub(r"\[([A-Za-z])([A-Za-z])\]",
                  lambda m: m.group(1) if m.group(1).lower() == m.group(2).lower() else m.group(0), p)


def load(corpora):
    with open(os.path.join(corpora, "crawler-user-agents", "crawler-user-agents.json"), encoding="utf-8") as f:
        entries = json.load(f)
    agents = rc.load_agents(corpora)
    per_agent = [(a, rc.word_regex([a])) for a in agents]
    scope = []   # (pattern, [agents named], instance)
    for e in entries:
        named = [a for a, r in per_agent if r.search(normalise_pattern(e["pattern"]))]
        if named:
            scope.append((e["pattern"], named, e["instances"]))
    allinst = [(e["pattern"], i) for e in entries for i in e["instances"]]
    return agents, scope, allinst


def regen(corpora):
    agents, scope, allinst = load(corpora)
    model = rc.reference_model(agents)
    inscope = {i for _, _, insts in scope for i in insts}
    print("# scope: %d entries, %d instances" % (len(scope), len(inscope)))
    for _, _, insts in scope:
        for i in insts:
            if model(i) != ("reject", rc.AI):
                print("# not AI:", repr(i), model(i))
    counts = {}
    for _, i in allinst:
        counts[model(i)] = counts.get(model(i), 0) + 1
    print("EXPECTED_COUNTS =", counts)
    print("EXPECTED_EXTRA_AI = [")
    for p, i in allinst:
        if model(i) == ("reject", rc.AI) and i not in inscope:
            print("    (%r, %r)," % (p, i))
    print("]")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--regen":
        return regen(sys.argv[2])
    args = rc.parse_args_or_skip()
    tap = rc.Tap()
    agents, scope, allinst = load(args.corpora)
    n_inst = sum(len(insts) for _, _, insts in scope)
    tap.ok((len(scope), n_inst) == EXPECTED_SCOPE,
           "scope: %d entries / %d instances name an ai.robots.txt agent (expected %d / %d)"
           % ((len(scope), n_inst) + EXPECTED_SCOPE),
           "corpus snapshot changed? run with --regen and review")

    with rc.tempdir() as tmp:
        rules, diag = rc.compile_main(args, tmp)
        if not tap.ok(rules is not None, "classifyc compiles examples/main.clf", diag):
            tap.finish()
        uas = [i for _, i in allinst]
        results, diag = rc.classify_uas(args, rules, uas, tmp)
        if not tap.ok(results is not None, "classify-run --ua-file --json on %d instances" % len(uas), diag):
            tap.finish()
    got = dict(zip(uas, results))   # instances are unique in the snapshot

    n_ai = n_exc = 0
    for pattern, named, insts in scope:
        for inst in insts:
            want = KNOWN_NOT_AI.get(inst, ("reject", rc.AI))
            if want == ("reject", rc.AI):
                n_ai += 1
            else:
                n_exc += 1
            tap.ok(got[inst] == want,
                   "[%s -> %s] %s: %s" % (pattern, "/".join(named), inst, rc.fmt(want)),
                   "got: %s" % rc.fmt(got[inst]))
    tap.diag("in scope: %d instances of %d entries; %d expected ai-robots-txt, %d known exceptions"
             % (n_inst, len(scope), n_ai, n_exc))

    counts = {}
    for r in results:
        counts[r] = counts.get(r, 0) + 1
    tap.ok(counts == EXPECTED_COUNTS,
           "all %d instances: verdict counts %s" % (len(uas), ", ".join(
               "%s=%d" % (rc.fmt(k), v) for k, v in sorted(EXPECTED_COUNTS.items(), key=str))),
           "got: %s" % ", ".join("%s=%d" % (rc.fmt(k), v) for k, v in sorted(counts.items(), key=str)))

    inscope = {i for _, _, insts in scope for i in insts}
    extra = [(p, i) for p, i in allinst if got[i] == ("reject", rc.AI) and i not in inscope]
    missing = [x for x in EXPECTED_EXTRA_AI if x not in extra]
    unexpected = [x for x in extra if x not in EXPECTED_EXTRA_AI]
    tap.ok(not missing and not unexpected,
           "out-of-scope instances rejected as ai-robots-txt: exactly the %d listed (generic names Spider/Code, Awario)"
           % len(EXPECTED_EXTRA_AI),
           "\n".join(["missing: %r" % (x,) for x in missing] + ["unexpected: %r" % (x,) for x in unexpected]))
    tap.finish()


if __name__ == "__main__":
    main()
