"""Publishers' crawler IP lists -> .clf: the verified_bots package.

    clf-import verified-bots DIR [--partial] [-o verified_bots.clf]
    clf-import verified-bots [LIST=]FILE... [--incomplete LIST] [--partial] [-o OUT.clf]

stdlib/verified_bots.clf is this converter's output for the shared corpora
(`clf-import verified-bots ../shared/corpora/verified-bots -o
stdlib/verified_bots.clf`); an operator runs it on fresh copies of the lists.
docs/importers.md documents the command, stdlib/README.md the package.

The facts (LISTS, FAMILIES below) are curated from each publisher's own
documentation (the page is named per family): the User-Agent tokens a crawler
claims, the IP list files it is published in and the reverse-DNS domains the
publisher documents. The addresses come only from the files given.

The input format is the publishers' common JSON (Google, Bing, Apple,
DuckDuckGo, OpenAI, Perplexity, Common Crawl, Anthropic):

    {"creationTime": "...", "prefixes": [{"ipv4Prefix": "a.b.c.d/n"}, {"ipv6Prefix": "x::/n"}, ...]}

with other top-level keys ignored (Common Crawl adds `synctoken`, `notes`),
and Amazon's HTML page with the same document embedded in it. Accepted as
the publishers write them: any of the four creationTime shapes
(`...T10:00:00.121331`, `.000000`, `...Z`, `+00:00`), a leading newline, no
trailing newline, bare addresses without `/32` (Amazon). Refused, naming the
file and the entry: bad JSON (with its line and column), a missing or
mistyped key, an entry with no or both prefix keys, a prefix that does not
parse, a prefix length out of range, host bits set, an IPv6 prefix under
`ipv4Prefix` (or the reverse), an empty list. Zero-width characters inside a
prefix (U+200B, U+FEFF: Bing's list carried U+200B in 2022) are removed and
counted in the output's provenance comment.

A directory is read as the shared corpora lay it out (each list at its
`corpus` path below) with its LICENSE-NOTE.md, whose table gives each
file's source and licence for the output's header; a row whose "how
copied" column says the copy is trimmed marks the list incomplete.

Python 3 standard library only.
"""

import hashlib
import html
import ipaddress
import json
import os
import re
import textwrap

from . import InputError, clf_string, comment_text, read_input

# ---------------------------------------------------------------- the facts

# The publishers' files. `id` is what `LIST=FILE` names on the command line;
# `names` are the file names the list is known by (the last part of its URL,
# older names, the shared corpora's), from which a FILE without `LIST=` is
# recognized; `corpus` is its path in a corpus directory.
LISTS = [
    {"id": "google-common", "publisher": "Google",
     "url": "https://developers.google.com/static/crawling/ipranges/common-crawlers.json",
     "names": ("common-crawlers.json", "googlebot.json"), "corpus": "google/googlebot.json"},
    {"id": "google-special", "publisher": "Google",
     "url": "https://developers.google.com/static/crawling/ipranges/special-crawlers.json",
     "names": ("special-crawlers.json",), "corpus": "google/special-crawlers.json"},
    {"id": "google-user-triggered", "publisher": "Google",
     "url": "https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers.json",
     "names": ("user-triggered-fetchers.json",), "corpus": "google/user-triggered-fetchers.json"},
    {"id": "google-user-triggered-google", "publisher": "Google",
     "url": "https://www.gstatic.com/ipranges/user-triggered-fetchers-google.json",
     "names": ("user-triggered-fetchers-google.json",),
     "corpus": "google/user-triggered-fetchers-google.json"},
    {"id": "bingbot", "publisher": "Microsoft Bing", "url": "https://www.bing.com/toolbox/bingbot.json",
     "names": ("bingbot.json",), "corpus": "bing/bingbot.json"},
    {"id": "applebot", "publisher": "Apple", "url": "https://search.developer.apple.com/applebot.json",
     "names": ("applebot.json",), "corpus": "apple/applebot.json"},
    {"id": "duckduckbot", "publisher": "DuckDuckGo", "url": "https://duckduckgo.com/duckduckbot.json",
     "names": ("duckduckbot.json",), "corpus": "duckduckgo/duckduckbot.json"},
    {"id": "gptbot", "publisher": "OpenAI", "url": "https://openai.com/gptbot.json",
     "names": ("gptbot.json",), "corpus": "openai/gptbot.json"},
    {"id": "searchbot", "publisher": "OpenAI", "url": "https://openai.com/searchbot.json",
     "names": ("searchbot.json",), "corpus": "openai/searchbot.json"},
    {"id": "chatgpt-user", "publisher": "OpenAI", "url": "https://openai.com/chatgpt-user.json",
     "names": ("chatgpt-user.json",), "corpus": "openai/chatgpt-user.json"},
    {"id": "perplexitybot", "publisher": "Perplexity AI", "url": "https://www.perplexity.ai/perplexitybot.json",
     "names": ("perplexitybot.json",), "corpus": "perplexity/perplexitybot.json"},
    {"id": "perplexity-user", "publisher": "Perplexity AI", "url": "https://www.perplexity.ai/perplexity-user.json",
     "names": ("perplexity-user.json",), "corpus": "perplexity/perplexity-user.json"},
    {"id": "ccbot", "publisher": "Common Crawl Foundation", "url": "https://index.commoncrawl.org/ccbot.json",
     "names": ("ccbot.json",), "corpus": "commoncrawl/ccbot.json"},
    {"id": "anthropic", "publisher": "Anthropic", "url": "https://claude.com/crawling/bots.json",
     "names": ("anthropic.json", "claude-bots.json"), "corpus": "anthropic/bots.json"},
    {"id": "amazonbot", "publisher": "Amazon",
     "url": "https://developer.amazon.com/amazonbot/ip-addresses/ (JSON inside the HTML page)",
     "names": ("amazonbot.html", "amazonbot.json"), "corpus": "amazon/amazonbot-fixture.html"},
]
LIST_BY_ID = {l["id"]: l for l in LISTS}

# One family per verification method: the crawlers (User-Agent tokens) that
# share the same lists and reverse-DNS domains. The check order is this
# order. `domains` are the documented forward-confirmed reverse-DNS domains
# (a name must end in ".DOMAIN"); `ua` is a documented full User-Agent of
# the first token, for the generated tests.
#
# Google: one family for all its crawlers and fetchers, verified by the
# union of its four lists. Google documents which list each crawler uses,
# but has moved crawlers between them (Google-InspectionTool, FeedFetcher);
# every address in any of them is Google's own, and a crawler put in the
# wrong group here would be called forged. The reverse-DNS names are those
# Google documents for these crawlers (crawl-*.googlebot.com,
# rate-limited-proxy-*.google.com, google-proxy-*.google.com,
# *.gae.googleusercontent.com), not the whole of googleusercontent.com:
# anyone's Compute Engine VM has a name under bc.googleusercontent.com.
FAMILIES = [
    {"id": "google", "what": "Google's crawlers and fetchers",
     "lists": ("google-common", "google-special", "google-user-triggered", "google-user-triggered-google"),
     "domains": ("googlebot.com", "google.com", "gae.googleusercontent.com"),
     "tokens": ("Googlebot", "Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Storebot-Google",
                "Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video",
                "Google-CloudVertexBot", "APIs-Google", "AdsBot-Google", "AdsBot-Google-Mobile",
                "Mediapartners-Google", "Google-Safety", "FeedFetcher-Google", "GoogleProducer",
                "Google-Read-Aloud", "Google-Site-Verification", "Google-NotebookLM", "Google-Pinpoint",
                "Google-CWS"),
     "ua": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
     "doc": "https://developers.google.com/crawling/docs/crawlers-fetchers/verifying-googlebot"},
    {"id": "google_agent", "what": "Google-Agent (Google's list for it, user-triggered-agents.json, is not read)",
     "lists": (), "domains": (), "tokens": ("Google-Agent",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-Agent; "
           "+https://developers.google.com/crawling/docs/crawlers-fetchers/google-agent) "
           "Chrome/131.0.0.0 Safari/537.36",
     "doc": "https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers"},
    {"id": "bing", "what": "Bing's crawlers", "lists": ("bingbot",), "domains": ("search.msn.com",),
     "tokens": ("bingbot", "adidxbot", "BingPreview", "MicrosoftPreview"),
     "ua": "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
     "doc": "https://www.bing.com/webmaster/help/how-to-verify-bingbot-3905dc26"},
    {"id": "apple", "what": "Applebot", "lists": ("applebot",), "domains": ("applebot.apple.com",),
     "tokens": ("Applebot",),
     "ua": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
           "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
     "doc": "https://support.apple.com/en-us/119829"},
    {"id": "duckduckgo", "what": "DuckDuckBot", "lists": ("duckduckbot",), "domains": (),
     "tokens": ("DuckDuckBot", "DuckDuckBot-Https"),
     "ua": "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
     "doc": "https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot"},
    {"id": "openai_gptbot", "what": "OpenAI's GPTBot", "lists": ("gptbot",), "domains": (),
     "tokens": ("GPTBot",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot",
     "doc": "https://platform.openai.com/docs/bots"},
    {"id": "openai_searchbot", "what": "OpenAI's OAI-SearchBot", "lists": ("searchbot",), "domains": (),
     "tokens": ("OAI-SearchBot",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; "
           "+https://openai.com/searchbot",
     "doc": "https://platform.openai.com/docs/bots"},
    {"id": "openai_user", "what": "OpenAI's ChatGPT-User", "lists": ("chatgpt-user",), "domains": (),
     "tokens": ("ChatGPT-User",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
     "doc": "https://platform.openai.com/docs/bots"},
    {"id": "perplexity_bot", "what": "PerplexityBot", "lists": ("perplexitybot",), "domains": (),
     "tokens": ("PerplexityBot",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; "
           "+https://perplexity.ai/perplexitybot)",
     "doc": "https://docs.perplexity.ai/docs/resources/perplexity-crawlers"},
    {"id": "perplexity_user", "what": "Perplexity-User", "lists": ("perplexity-user",), "domains": (),
     "tokens": ("Perplexity-User",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; "
           "+https://perplexity.ai/perplexity-user)",
     "doc": "https://docs.perplexity.ai/docs/resources/perplexity-crawlers"},
    {"id": "commoncrawl", "what": "Common Crawl's CCBot", "lists": ("ccbot",),
     "domains": ("crawl.commoncrawl.org",), "tokens": ("CCBot",),
     "ua": "CCBot/2.0 (https://commoncrawl.org/faq/)",
     "doc": "https://commoncrawl.org/ccbot"},
    {"id": "anthropic", "what": "Anthropic's crawlers", "lists": ("anthropic",), "domains": (),
     "tokens": ("ClaudeBot", "Claude-User", "Claude-SearchBot"),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
     "doc": "https://support.claude.com/en/articles/8896518"},
    {"id": "amazon", "what": "Amazonbot", "lists": ("amazonbot",), "domains": ("crawl.amazonbot.amazon",),
     "tokens": ("Amazonbot",),
     "ua": "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; "
           "+https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36",
     "doc": "https://developer.amazon.com/support/amazonbot"},
    {"id": "yandex", "what": "Yandex's robots (no published list)", "lists": (),
     "domains": ("yandex.ru", "yandex.net", "yandex.com"),
     "tokens": ("YandexBot", "YandexImages", "YandexMobileBot", "YandexMetrika", "YandexAccessibilityBot",
                "YandexFavicons", "YandexMarket", "YandexNews", "YandexMedia", "YandexVideo"),
     "ua": "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
     "doc": "https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html"},
    {"id": "meta", "what": "Meta's crawlers (no published list or domain)", "lists": (), "domains": (),
     "tokens": ("meta-externalagent", "meta-externalfetcher", "facebookexternalhit"),
     "ua": "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
     "doc": "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers"},
]

# A bare mention of a token right after one of these words is a comparison,
# not a claim (`like FeedFetcher-Google`, `compatible with Googlebot`,
# `Following Mediapartners-Google`: Feedly, FreshRSS, Daumoa in the
# corpora), unless the token is also written as a product, TOKEN/VERSION.
COMPARISON_WORDS = ("like", "with", "following")


def _minimal(phrases):
    """The phrases no shorter one is inside (ASCII case-insensitively), in
    their order: COMPARED is a `contains` prefilter, where `like Googlebot`
    already finds every `like Googlebot-Image` (classifyc's dead-element
    lint says so)."""
    low = [p.lower() for p in phrases]
    return [p for i, p in enumerate(phrases)
            if not any(j != i and low[j] in low[i] and (len(low[j]) < len(low[i]) or j < i)
                       for j in range(len(phrases)))]


def token_name(token):
    """The crawler's name in reasons: the token in lower case."""
    return token.lower()


def family_const(fam, what):
    return "%s_%s" % (fam["id"].upper(), what)


def claim_order(fam):
    """The family's tokens in the order the claim names them (the first
    found in the lowered User-Agent): list order, except that a token comes
    after every token containing it (Googlebot-Image, Googlebot-News,
    Googlebot-Video, Googlebot, ...), so the common one is found early."""
    out = []
    for t in fam["tokens"]:
        for longer in fam["tokens"]:
            if longer != t and t.lower() in longer.lower() and longer not in out:
                out.append(longer)
        if t not in out:
            out.append(t)
    return out


def _lower(s):
    """str.lower(): ASCII letters only."""
    return "".join(c.lower() if c.isascii() else c for c in s)


def _contains_word(text, word):
    """str.contains_word with an ASCII case-insensitive one-element set."""
    low, w = _lower(text), _lower(word)
    i = low.find(w)
    while i >= 0:
        before = low[i - 1] if i else ""
        after = low[i + len(w)] if i + len(w) < len(low) else ""
        if not re.match(r"\w", before, re.A) and not re.match(r"\w", after, re.A):
            return True
        i = low.find(w, i + 1)
    return False


def all_tokens():
    return [t for fam in FAMILIES for t in fam["tokens"]]


def claim_model(fam):
    """The family's claim in Python: ua -> the claimed token's name or "".
    The generated tests and tests/realdata compare the package with it."""
    def claimed(ua):
        if not any(_contains_word(ua, t) for t in fam["tokens"]):
            return ""
        low = _lower(ua)
        if _compared(fam, low):
            return ""
        for t in claim_order(fam):
            if _lower(t) in low:
                return token_name(t)
        raise AssertionError("unreachable")
    return claimed


def _compared(fam, low):
    """The family's tokens are only compared with in the lowered UA: `like
    TOKEN` (or with, following), and no TOKEN/."""
    if any(_lower(t) + "/" in low for t in fam["tokens"]):
        return False
    return any("%s %s" % (w, _lower(t)) in low for t in fam["tokens"] for w in COMPARISON_WORDS)


def _check_facts():
    """Tokens must not overlap across families (a token that contains
    another family's as a word would claim both)."""
    seen = {}
    for fam in FAMILIES:
        for t in fam["tokens"]:
            for other, ofam in seen.items():
                if ofam != fam["id"] and (_contains_word(t, other) or _contains_word(other, t)):
                    raise AssertionError("token %s (%s) overlaps %s (%s)" % (t, fam["id"], other, ofam))
            seen[t] = fam["id"]


_check_facts()

# ------------------------------------------------------------- the input

class ListData:
    """One publisher file, parsed: its prefixes and provenance."""

    def __init__(self, list_id, display, sha256, creation_time, v4, v6, cleaned):
        self.list_id = list_id
        self.display = display              # the file as named in the output
        self.sha256 = sha256
        self.creation_time = creation_time
        self.v4 = v4                        # [ipaddress.IPv4Network], in file order
        self.v6 = v6
        self.cleaned = cleaned              # entries with zero-width characters removed
        self.incomplete = False             # a trimmed copy: outside it is not forged
        self.provenance = None              # the LICENSE-NOTE.md row of a corpus directory


# creationTime as the publishers write it: seconds, optional fraction,
# optional Z or +HH:MM / -HH:MM.
_CREATION_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})?$")
_INVISIBLE = ("\u200b", "\ufeff", "\u200c", "\u200d", "\u2060")
_KEYS = {"ipv4Prefix": 4, "ipv6Prefix": 6}


def _line_of(text, value):
    """The line of the first occurrence of the JSON string `value` in text, or None."""
    i = text.find(json.dumps(value)[1:-1])
    return text.count("\n", 0, i) + 1 if i >= 0 else None


def _embedded_document(text, path):
    """The JSON object with a "prefixes" key inside an HTML page (Amazon
    publishes its lists as JSON inside the page), entities decoded."""
    text = html.unescape(text)
    dec = json.JSONDecoder()
    i = text.find("{")
    while i >= 0:
        try:
            obj, _ = dec.raw_decode(text, i)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "prefixes" in obj:
            return obj, text
        i = text.find("{", i + 1)
    raise InputError("no JSON document with \"prefixes\" in this HTML page", path)


def parse(data, path, list_id, display=None):
    """ListData for the bytes of one publisher file. Raises InputError naming
    the file (and the line or entry) for anything it cannot take."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError("not UTF-8 (byte %d)" % e.start, path, data.count(b"\n", 0, e.start) + 1)
    if text.startswith("\ufeff"):
        text = text[1:]
    head = text.lstrip()
    if head.startswith("<"):
        doc, text = _embedded_document(text, path)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError("bad JSON: %s (column %d)" % (e.msg, e.colno), path, e.lineno)
        except RecursionError:
            raise InputError("bad JSON: nested too deeply", path)
    if not isinstance(doc, dict):
        raise InputError("the document is not a JSON object", path)
    if "prefixes" not in doc:
        raise InputError("missing key \"prefixes\"", path)
    if "creationTime" not in doc:
        raise InputError("missing key \"creationTime\"", path)
    ct = doc["creationTime"]
    if not isinstance(ct, str) or not _CREATION_TIME.match(ct):
        raise InputError("creationTime %s is not a date and time like 2026-08-21T14:45:42.000000"
                         % json.dumps(ct)[:80], path, _line_of(text, "creationTime"))
    prefixes = doc["prefixes"]
    if not isinstance(prefixes, list):
        raise InputError("\"prefixes\" is not a list", path, _line_of(text, "prefixes"))
    if not prefixes:
        raise InputError("\"prefixes\" is empty: an empty list would make every claim forged", path)
    v4, v6, cleaned = [], [], 0
    for n, entry in enumerate(prefixes):
        where = "prefixes[%d]" % n
        if not isinstance(entry, dict):
            raise InputError("%s is not an object" % where, path)
        keys = [k for k in entry if k in _KEYS]
        if len(keys) != 1:
            raise InputError("%s has %s of \"ipv4Prefix\" and \"ipv6Prefix\"" %
                             (where, "neither" if not keys else "both"), path)
        key = keys[0]
        value = entry[key]
        if not isinstance(value, str):
            raise InputError("%s: %s is not a string" % (where, key), path)
        line = _line_of(text, value)
        clean = value
        for ch in _INVISIBLE:
            clean = clean.replace(ch, "")
        clean = clean.strip()
        if clean != value.strip():
            cleaned += 1
        try:
            net = ipaddress.ip_network(clean, strict=True)
        except ValueError as e:
            msg = str(e)
            if "has host bits set" in msg:
                msg = "host bits set (the network is %s)" % ipaddress.ip_network(clean, strict=False)
            raise InputError("%s: %s %s: %s" % (where, key, json.dumps(value), msg), path, line)
        if net.version != _KEYS[key]:
            raise InputError("%s: %s %s is an IPv%d prefix" % (where, key, json.dumps(value), net.version),
                             path, line)
        (v4 if net.version == 4 else v6).append(net)
    return ListData(list_id, display or str(path), hashlib.sha256(data).hexdigest(), ct, v4, v6, cleaned)


def read_list(path, list_id, display=None):
    return parse(read_input(path), path, list_id, display)


def list_for_file(path):
    """The list id a file name is known by, or None."""
    base = os.path.basename(path).lower()
    for l in LISTS:
        if base in l["names"]:
            return l["id"]
    return None



# ------------------------------------------------------------ a corpus directory

LICENSE_NOTE = "LICENSE-NOTE.md"


def read_license_note(path):
    """{corpus path: {"source", "commit", "licence", "trimmed"}} from the
    table of a corpus directory's LICENSE-NOTE.md (columns: file here,
    publisher, source repo : path, commit, how copied, mirror license,
    data date). "same repo" in the source column is the previous row's."""
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError("not UTF-8 (byte %d)" % e.start, path)
    rows, repo = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or not line.lstrip().startswith("|") or not re.match(r"^[\w.-]+/[\w.-]+$", cells[0]):
            continue
        src = cells[2]
        m = re.match(r"^(same repo|[\w.-]+/[\w.-]+)\s*:\s*(\S+)$", src)
        if not m:
            raise InputError("the source of %s is not REPO : PATH (%r)" % (cells[0], src), path, n)
        if m.group(1) == "same repo":
            if repo is None:
                raise InputError("'same repo' for %s, with no repository before it" % cells[0], path, n)
        else:
            repo = m.group(1)
        commit = re.search(r"\b[0-9a-f]{40}\b", cells[3])
        rows[cells[0]] = {"source": "%s : %s" % (repo, m.group(2)), "commit": commit and commit.group(0),
                          "licence": cells[5], "line": n,
                          "trimmed": bool(re.search(r"\b(?:trimmed|fixture)\b", cells[0] + " " + cells[4], re.I))}
    return rows


def read_corpus(directory, partial=False):
    """{list id: ListData} for a corpus directory: each list at its corpus
    path, its provenance and licence from LICENSE-NOTE.md there (which must
    name every file read). A missing list is an error unless partial."""
    if not os.path.isdir(directory):
        raise InputError("not a directory", directory)
    note_path = os.path.join(directory, LICENSE_NOTE)
    note = read_license_note(note_path) if os.path.exists(note_path) else None
    lists = {}
    for l in LISTS:
        path = os.path.join(directory, l["corpus"])
        if not os.path.exists(path):
            if partial:
                continue
            raise InputError("the %s list (%s) is missing; --partial goes without it" % (l["id"], l["corpus"]),
                             path)
        d = read_list(path, l["id"], l["corpus"])
        if note is not None:
            row = note.get(l["corpus"])
            if row is None:
                raise InputError("no row for %s in the table" % l["corpus"], note_path)
            if not row["commit"] or not row["licence"]:
                raise InputError("the row of %s names no 40-hex commit or no licence" % l["corpus"], note_path,
                                 row["line"])
            d.provenance = row
            d.incomplete = row["trimmed"]
        lists[l["id"]] = d
    return lists


# ------------------------------------------------------------ the output

def merged(lists):
    """(v4 networks, v6 networks) of the union of ListData, CIDR-merged, sorted."""
    v4 = list(ipaddress.collapse_addresses([n for l in lists for n in l.v4]))
    v6 = list(ipaddress.collapse_addresses([n for l in lists for n in l.v6]))
    return v4, v6


def _wrap(text, indent, width=78):
    return "".join("%s%s\n" % (indent if i == 0 else indent + "  ", l)
                   for i, l in enumerate(textwrap.wrap(text, width - len(indent) - 2,
                                                       break_on_hyphens=False, break_long_words=False)))


class _Fam:
    """A family with the lists it was given."""

    def __init__(self, fam, lists_by_id):
        self.f = fam
        self.id = fam["id"]
        self.given = [lists_by_id[i] for i in fam["lists"] if i in lists_by_id]
        self.v4, self.v6 = merged(self.given)
        self.ranges = bool(self.given)
        self.complete = self.ranges and len(self.given) == len(fam["lists"]) and \
            not any(d.incomplete for d in self.given)
        self.domains = tuple("." + d for d in fam["domains"])

    def method(self):
        parts = []
        if self.ranges:
            parts.append("%s (%d IPv4 + %d IPv6, %s)" % (family_const(self.f, "RANGES"), len(self.v4), len(self.v6),
                                                        "complete" if self.complete else "INCOMPLETE: "
                                                        "outside them is unverifiable, not forged"))
        elif self.f["lists"]:
            parts.append("no ranges (list%s %s not given)" % ("s" if len(self.f["lists"]) > 1 else "",
                                                              ", ".join(self.f["lists"])))
        if self.domains:
            parts.append("reverse DNS %s" % ", ".join("*" + d for d in self.domains))
        return "; ".join(parts) or "no published method here"


HEADER = """\
// verified_bots.clf -- is a crawler's User-Agent claim true? The crawler
// operators' own IP lists and reverse-DNS domains, as a verified / forged /
// unverifiable state per claim (stdlib/README.md, verified_bots).
//
// Generated by clf-import verified-bots -- do not edit. Regenerate with
//     clf-import verified-bots DIR -o verified_bots.clf
// DIR holding the lists below (stdlib/verified_bots.clf: from the repository
// root, clf-import verified-bots ../shared/corpora/verified-bots -o
// stdlib/verified_bots.clf; tests/realdata checks that it is up to date).
//
// A request CLAIMS a crawler when its User-Agent has one of the crawler's
// tokens as a word (ASCII case-insensitive, no letter, digit or _ next to
// it), except a comparison: `like TOKEN`, `with TOKEN`, `following TOKEN`,
// unless a token is also written TOKEN/. A claim is
//   verified      the client address is in the crawler's published ranges,
//                 or the host's forward-confirmed reverse-DNS name
//                 (req.rdns) ends in one of its documented domains;
//   forged        not verified, and: the host checked reverse DNS for a
//                 crawler that documents domains, or the client address is
//                 outside the crawler's published (complete) ranges;
//   unverifiable  neither: no method published (or given here), no client
//                 address, or an incomplete list and no reverse-DNS answer.
// Reasons name the token in lower case: "forged:googlebot".
//
//   pub filter check_forged(req)    rejects "forged:TOKEN" (first forged claim)
//   pub filter check_verified(req)  accepts "verified:TOKEN" when state is verified
//   pub filter check(req)           both, in that order
//   pub fn state(req) -> str        "forged" if any claim is, else "verified" if
//                                   any is, else "unverifiable"; "" for no claim
//   pub fn claim(req) -> str        the first claimed token (lower case) or ""
//   pub fn FAMILY(req) -> str       "" when FAMILY is not claimed, else its state
//   pub fn FAMILY_claim(req) -> str the claimed token of FAMILY, or ""
//   pub fn FAMILY_state(req) -> str the state, were FAMILY claimed
//   pub const FAMILY_TOKENS, FAMILY_RANGES, FAMILY_DOMAINS; CLAIM_TOKENS (all)
//
// Families, in check order (tokens; method; documentation):
{families}//
// Source files{note}:
{sources}
"""


def _header(fams, lists_by_id):
    fam_lines = []
    for F in fams:
        fam_lines.append("//   %s: %s\n" % (F.id, F.f["what"]))
        fam_lines.append(_wrap(", ".join(F.f["tokens"]), "//     "))
        fam_lines.append(_wrap(F.method(), "//     "))
        fam_lines.append("//     %s\n" % F.f["doc"])
    src = []
    for l in LISTS:
        d = lists_by_id.get(l["id"])
        if d is None:
            src.append("//   %s (%s): not given\n" % (l["id"], l["publisher"]))
            continue
        mv4, mv6 = merged([d])
        src.append("//   %s: %s, %s\n" % (l["id"], l["publisher"], l["url"]))
        src.append("//     file %s, creationTime %s\n" % (comment_text(d.display), d.creation_time))
        src.append("//     sha256 %s\n" % d.sha256)
        src.append("//     %d IPv4 + %d IPv6 entries, %d + %d after merging%s%s\n"
                   % (len(d.v4), len(d.v6), len(mv4), len(mv6),
                      ("; %d with zero-width characters removed" % d.cleaned) if d.cleaned else "",
                      "; INCOMPLETE (a trimmed copy)" if d.incomplete else ""))
        if d.provenance:
            p = d.provenance
            src.append(_wrap(comment_text("copied from %s at %s; licence: %s"
                                          % (p["source"], p["commit"], p["licence"])), "//     "))
    note = " (provenance and licences: LICENSE-NOTE.md of DIR)" if any(
        d.provenance for d in lists_by_id.values()) else ""
    src.append("//   The publishers attach no licence to the lists: they publish them so\n"
               "//   that sites can verify their crawlers; a mirror's licence covers the\n"
               "//   mirror repository, not the publisher's data.\n")
    header = HEADER.format(families="".join(fam_lines), note=note, sources="".join(src).rstrip("\n"))
    # classifyc --max-data-age reads this line: the stalest list's date
    dates = sorted(d.creation_time[:10] for d in lists_by_id.values() if d.creation_time)
    if not dates:
        return header
    return _with_dateline(header, "// data-date: %s (the oldest list's creationTime)\n" % dates[0])


def _with_dateline(header, dateline):
    """The header with the data-date line after its first paragraph."""
    first, sep, rest = header.partition("\n//\n")
    return first + "\n" + dateline + sep[1:] + rest if sep else header + dateline


def _set(items, ci, indent=None):
    """A string-set literal; with indent, wrapped to lines under 100 columns."""
    close = "]i" if ci else "]"
    one = "[" + ", ".join(clf_string(s) for s in items) + close
    if indent is None or len(indent) + len(one) < 100:
        return one
    body, line = [], ""
    for s in items:
        item = clf_string(s) + ","
        if line and len(indent) + 4 + len(line) + 1 + len(item) > 100:
            body.append(line)
            line = ""
        line = (line + " " + item) if line else item
    body.append(line)
    return "[\n" + "".join("%s    %s\n" % (indent, l) for l in body) + indent + close


def _state_fn(F):
    """The body of FAMILY_state(req)."""
    rng = family_const(F.f, "RANGES")
    out = []
    if F.ranges:
        out.append("    if req.client_ip in %s { return \"verified\" }\n" % rng)
    if F.domains:
        # One string per test: a byte comparison. A set would be a
        # Hyperscan database of its own at every place this is inlined.
        tests = " ||\n            ".join("req.rdns.ends_with(%s)" % clf_string(d) for d in F.domains)
        out.append("    if req.rdns_checked {\n"
                   "        if %s { return \"verified\" }\n"
                   "        return \"forged\"\n    }\n" % tests)
    if F.ranges and F.complete:
        out.append("    if !req.client_ip.valid() { return \"unverifiable\" }\n")
        out.append("    return \"forged\"\n")
    else:
        out.append("    return \"unverifiable\"\n")
    return "".join(out)


# Every request goes through check_forged and state: one literal test on
# the User-Agent (any token anywhere) skips the families' tests for the
# requests that claim nothing.
GATE = "    if !req.header(\"user-agent\").contains(CLAIM_GATE) { %s }\n"


def render(lists_by_id):
    """The package text for {list id: ListData} (a family whose lists are
    missing from it has no ranges: none of its addresses are verified)."""
    fams = [_Fam(f, lists_by_id) for f in FAMILIES]
    out = [_header(fams, lists_by_id)]
    out.append("\n// ---- every token\n\npub const CLAIM_TOKENS = %s\n"
               % _set(all_tokens(), True, ""))
    out.append("// The cheap first test of every claim: the tokens no shorter one is inside\n"
               "// (`Googlebot` finds `Googlebot-Image` under contains).\n"
               "const CLAIM_GATE = %s\n" % _set(_minimal(all_tokens()), True, ""))
    out.append("\n// Comparisons with any token (`like Googlebot`); the family's own are then\n"
               "// byte tests on the lowered User-Agent.\n")
    out.append("const COMPARED = %s\n" % _set(_minimal(["%s %s" % (w, t) for t in all_tokens()
                                                         for w in COMPARISON_WORDS]), True, ""))


    for F in fams:
        fid, f = F.id, F.f
        out.append("\n// ---- %s: %s\n" % (fid, f["what"]))
        out.append(_wrap(F.method(), "// ") + "\n")
        out.append("pub const %s = %s\n" % (family_const(f, "TOKENS"), _set(f["tokens"], True, "")))
        if F.domains:
            out.append("pub const %s = %s\n" % (family_const(f, "DOMAINS"), _set(F.domains, False)))
        if F.ranges:
            for d in F.given:
                out.append("// %s: creationTime %s\n" % (comment_text(d.display), d.creation_time))
            out.append("pub const %s = [\n" % family_const(f, "RANGES"))
            out.extend("    %s,\n" % n for n in F.v4 + F.v6)
            out.append("]\n")
        order = claim_order(f)
        low = lambda s: clf_string(_lower(s))
        out.append("\n// Whether the lowered User-Agent only compares itself with %s: `like\n"
                   "// TOKEN` (or with, following) and no TOKEN/.\n" % fid)
        out.append("fn %s_compared(low: str) -> bool {\n" % fid)
        out.append("    if %s { return false }\n" % " ||\n        ".join(
            "low.contains(%s)" % low(t + "/") for t in order))
        out.append("    return %s\n}\n" % " ||\n        ".join(
            "low.contains(%s)" % low("%s %s" % (w, t)) for t in f["tokens"] for w in COMPARISON_WORDS))
        out.append("\n// The %s token the User-Agent claims, in lower case; \"\" for none.\n" % fid)
        out.append("pub fn %s_claim(req: Request) -> str {\n" % fid)
        out.append("    let ua = req.header(\"user-agent\")\n")
        out.append("    if !ua.contains_word(%s) { return \"\" }\n" % family_const(f, "TOKENS"))
        out.append("    if ua.contains(COMPARED) && %s_compared(ua.lower()) { return \"\" }\n" % fid)
        for t in order[:-1]:
            out.append("    if ua.contains(%s) { return %s }\n" % (_set([t], True), clf_string(token_name(t))))
        out.append("    return %s\n}\n\n" % clf_string(token_name(order[-1])))
        out.append("// The state of a claim of %s (whether or not the User-Agent makes it).\n" % fid)
        out.append("pub fn %s_state(%sreq: Request) -> str {\n" % (fid, "" if (F.ranges or F.domains) else "_"))
        out.append(_state_fn(F))
        out.append("}\n\n")
        out.append("// \"\" when the User-Agent does not claim %s, else the claim's state.\n" % fid)
        out.append("pub fn %s(req: Request) -> str {\n" % fid)
        out.append("    if %s_claim(req) == \"\" { return \"\" }\n" % fid)
        out.append("    return %s_state(req)\n}\n" % fid)

    out.append("\n// ---- the whole package\n\n")
    out.append("// \"forged\" if any claim is forged, else \"verified\" if any is verified, else\n"
               "// \"unverifiable\" if the User-Agent claims a crawler, else \"\".\n")
    out.append("pub fn state(req: Request) -> str {\n")
    out.append(GATE % "return \"\"")
    out.append("    let mut seen = \"\"\n")
    for F in fams:
        out.append("    let s_%s = %s(req)\n" % (F.id, F.id))
        out.append("    if s_%s == \"forged\" { return \"forged\" }\n" % F.id)
        out.append("    if s_%s == \"verified\" || (s_%s != \"\" && seen == \"\") { seen = s_%s }\n"
                   % (F.id, F.id, F.id))
    out.append("    return seen\n}\n\n")
    out.append("// The first claimed token, in family order, in lower case; \"\" for none.\n")
    out.append("pub fn claim(req: Request) -> str {\n")
    out.append(GATE % "return \"\"")
    for F in fams[:-1]:
        out.append("    let c_%s = %s_claim(req)\n    if c_%s != \"\" { return c_%s }\n" % ((F.id,) * 4))
    out.append("    return %s_claim(req)\n}\n\n" % fams[-1].id)

    def one_pass(name, forged, verified):
        """A filter that computes each family's claim and state once:
        `forged` is what a forged claim does (reject, or pass), `verified`
        whether the first verified claim is accepted once no claim is
        forged."""
        s = "pub filter %s(req: Request) {\n" % name
        s += GATE % "pass"
        if verified:
            s += "    let mut vf = 0\n    let mut vt = \"\"\n"
        acc = []
        for i, F in enumerate(fams, 1):
            can_forge = bool(F.domains) or F.complete
            can_verify = F.ranges or bool(F.domains)
            if not can_verify or (not verified and not can_forge):
                continue                # never in the state this filter acts on
            s += "    let c_%s = %s_claim(req)\n" % (F.id, F.id)
            s += "    if c_%s != \"\" {\n        let s_%s = %s_state(req)\n" % (F.id, F.id, F.id)
            if can_forge and forged == "pass":
                s += "        if s_%s == \"forged\" { pass }\n" % F.id
            elif can_forge:
                s += "        if s_%s == \"forged\" {\n" % F.id
                for tok in claim_order(F.f):
                    n = token_name(tok)
                    s += "            if c_%s == %s { reject %s }\n" % (F.id, clf_string(n), clf_string("forged:" + n))
                s += "        }\n"
            if verified:
                s += "        if s_%s == \"verified\" && vf == 0 {\n            vf = %d\n            vt = c_%s\n" \
                     "        }\n" % (F.id, i, F.id)
                acc.append((i, F))
            s += "    }\n"
        for i, F in acc:
            s += "    if vf == %d {\n" % i
            for tok in claim_order(F.f):
                n = token_name(tok)
                s += "        if vt == %s { accept %s }\n" % (clf_string(n), clf_string("verified:" + n))
            s += "    }\n"
        return s + "}\n\n"

    out.append("// Rejects \"forged:TOKEN\" for the first forged claim.\n")
    out.append(one_pass("check_forged", "reject", False))
    out.append("// Accepts \"verified:TOKEN\" for the first verified claim when no claim is\n"
               "// forged (state(req) is \"verified\"); no verdict otherwise.\n")
    out.append(one_pass("check_verified", "pass", True))
    out.append("// check_forged, then check_verified, in one pass.\n")
    out.append(one_pass("check", "reject", True))
    out.append(_tests(fams))
    return "".join(out)


# ------------------------------------------------------------ the generated tests

def _outside(nets):
    """An address just outside the first of nets that is in none of them."""
    for n in nets:
        for cand in (n.network_address - 1, n.broadcast_address + 1):
            if not any(cand in m for m in nets):
                return cand
    return None


def _picks(nets):
    """First and last addresses of the first, middle and last network."""
    out = []
    for n in (nets[0], nets[len(nets) // 2], nets[-1]):
        for a in (n.network_address, n.broadcast_address):
            if a not in out:
                out.append(a)
    return out


def _tests(fams):
    out = ["\n// ---- tests: classifyc --test verified_bots.clf (generated from the lists)\n\n"
           "// The state as a verdict, for the tests below.\n"
           "filter state_verdict(req: Request) {\n"
           "    let s = state(req)\n"
           "    if s == \"verified\" { accept \"verified\" }\n"
           "    if s == \"forged\" { reject \"forged\" }\n"
           "    if s == \"unverifiable\" { accept \"unverifiable\" }\n"
           "    accept \"no-claim\"\n}\n"]

    def test(name, ua, peer=None, rdns=None, state=None, token=None):
        s = "\ntest %s {\n" % clf_string(name)
        s += "    header \"User-Agent\" %s\n" % clf_string(ua)
        if peer is not None:
            s += "    peer \"%s\"\n" % peer
        if rdns is not None:
            s += "    rdns %s\n" % clf_string(rdns)
        s += "    expect state_verdict %s\n" % {"verified": 'accept "verified"', "forged": 'reject "forged"',
                                                 "unverifiable": 'accept "unverifiable"',
                                                 None: 'accept "no-claim"'}[state]
        if state == "forged":
            s += "    expect check_forged reject \"forged:%s\"\n" % token
        elif state is not None:
            s += "    expect check_forged pass\n"
        if state == "verified":
            s += "    expect check_verified accept \"verified:%s\"\n" % token
        else:
            s += "    expect check_verified pass\n"
        return s + "}\n"

    for F in fams:
        f = F.f
        model = claim_model(f)
        tok = model(f["ua"])
        assert tok, f["ua"]
        first = f["tokens"][0]
        nets = F.v4 + F.v6
        good = None
        if F.ranges:
            for v in (F.v4, F.v6):
                for a in (_picks(v) if v else ()):
                    good = good or a
                    out.append(test("%s from %s, in %s" % (tok, a, family_const(f, "RANGES")), f["ua"], a,
                                    state="verified", token=tok))
            outside = [a for a in (_outside(F.v4), _outside(F.v6)) if a is not None]
            for a in outside:
                st = "forged" if F.complete else "unverifiable"
                out.append(test("%s from %s, outside %s: %s" % (tok, a, family_const(f, "RANGES"), st),
                                f["ua"], a, state=st, token=tok))
        else:
            outside = [ipaddress.ip_address("192.0.2.1")]
        bad = outside[0] if outside else ipaddress.ip_address("192.0.2.1")
        if F.domains:
            dom = F.domains[0]
            out.append(test("%s from %s, reverse DNS in %s: verified" % (tok, bad, dom), f["ua"], bad,
                            rdns="crawl-1%s" % dom, state="verified", token=tok))
            out.append(test("%s from %s, reverse DNS a look-alike of %s: forged" % (tok, bad, dom), f["ua"], bad,
                            rdns="crawl-1%s.evil.example" % dom,
                            state="forged", token=tok))
            out.append(test("%s from %s, reverse DNS ending in %s without the dot: forged" % (tok, bad, dom),
                            f["ua"], bad, rdns="crawl.evil" + dom.lstrip("."), state="forged", token=tok))
            out.append(test("%s from %s, no reverse-DNS name: forged" % (tok, bad), f["ua"], bad,
                            rdns="", state="forged", token=tok))
            if good is not None:
                out.append(test("%s from %s in the ranges, whatever reverse DNS says: verified" % (tok, good),
                                f["ua"], good, rdns="", state="verified", token=tok))
            if not F.ranges:
                out.append(test("%s from %s, reverse DNS not checked: unverifiable" % (tok, bad), f["ua"], bad,
                                state="unverifiable", token=tok))
        elif not F.ranges:
            out.append(test("%s from %s: no method, unverifiable" % (tok, bad), f["ua"], bad,
                            rdns="crawl-1.example", state="unverifiable", token=tok))
        out.append(test("%s without a client address: unverifiable" % tok, f["ua"], state="unverifiable", token=tok))
        # every token is claimed under its own name
        for t in f["tokens"]:
            ua = "Mozilla/5.0 (compatible; %s/1.0; +https://example.com/bot)" % t
            assert model(ua) == token_name(t), (ua, model(ua))
            if good is not None:
                out.append(test("%s/1.0 from %s: verified:%s" % (t, good, token_name(t)), ua, good,
                                state="verified", token=token_name(t)))
            elif F.domains:
                out.append(test("%s/1.0 with reverse DNS in %s: verified:%s" % (t, F.domains[0], token_name(t)),
                                ua, bad, rdns="crawl-1" + F.domains[0], state="verified", token=token_name(t)))
            else:
                out.append(test("%s/1.0: unverifiable" % t, ua, bad, state="unverifiable", token=token_name(t)))
        # comparisons and longer names are not claims
        cmp_ua = "ExampleReader/2.0 (+https://reader.example; like %s)" % first
        assert model(cmp_ua) == ""
        out.append(test("like %s is a comparison, not a claim" % first, cmp_ua, bad))
        prod_ua = cmp_ua + " %s/1.0" % first
        if F.ranges or F.domains:
            st = "forged" if (F.ranges and F.complete) else "unverifiable"
            assert model(prod_ua) == token_name(first)
            out.append(test("like %s, but also %s/1.0: a claim (%s)" % (first, first, st), prod_ua, bad,
                            state=st, token=token_name(first)))
        longer = "Mozilla/5.0 (compatible; X%s/1.0)" % first
        assert model(longer) == ""
        out.append(test("X%s is another name" % first, longer, bad))
    out.append(test("a browser claims nothing",
                    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                    "Chrome/131.0.0.0 Safari/537.36", "192.0.2.1"))
    g = fams[0]
    if g.ranges and g.complete:
        inside = g.v4[0].network_address
        two = "Mozilla/5.0 (compatible; Googlebot/2.1; GPTBot/1.1)"
        gpt = next(F for F in fams if F.id == "openai_gptbot")
        if gpt.ranges and gpt.complete and not any(inside in n for n in gpt.v4):
            out.append(test("Googlebot and GPTBot from a Google address: the GPTBot claim is forged",
                            two, inside, state="forged", token="gptbot"))
    return "".join(out)
