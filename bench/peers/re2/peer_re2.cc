/*
 * bench/peers/re2/peer_re2.cc: classify-bench-re2, the RE2 peer
 * (bench/README.md): the `default` and `ai_robots` checks as a C++
 * programmer writes them with RE2, Google's linear-time engine. One
 * RE2::Set per request field: the User-Agent's holds every AI name and
 * token, the headless tokens, every crawler pattern and the browser
 * facts of browsers.clf; Sec-CH-UA's and the path's the few of theirs.
 * One Match per field reports every pattern that matches, and the
 * verdict is the one of the lowest priority among them, in the order
 * default.clf decides (as bench/peer_pcre2.c's alternation mode). Three
 * capture regexes read browser versions, only for browser User-Agents.
 *
 *     classify-bench-re2 REQUESTS --peerdata PEERDATA.txt
 *         --program ai_robots|default MODE       (MODE: harness.h)
 *
 * RE2 is run on bytes (Latin-1), as Hyperscan reads them; its memory
 * budget is raised to 256 MiB, as the sets' DFAs outgrow the default.
 */
#include <re2/re2.h>
#include <re2/set.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <strings.h> /* strncasecmp */
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using re2::RE2;
using re2::StringPiece;

/* Browser facts of the User-Agent (browsers.clf), as bits. */
enum : uint32_t {
    B_MOZ = 1u << 0,      /* starts with "Mozilla/5.0 " */
    B_ODD = 1u << 1,      /* one of ODD_BUT_REAL */
    B_CHROMIUM = 1u << 2, /* Chrome/ CriOS/ EdgiOS/ */
    B_FIREFOX = 1u << 3,
    B_SAFARI = 1u << 4,
    B_VERSION = 1u << 5,
    B_EDG = 1u << 6,
    B_ANDROID = 1u << 7,
    B_CROS = 1u << 8,
    B_IOS = 1u << 9,
    B_WINDOWS = 1u << 10,
    B_MAC = 1u << 11,
    B_LINUX = 1u << 12,
    B_EDGE_BRAND = 1u << 13, /* Sec-CH-UA holds "Microsoft Edge" */
};

const char *const HL_REASON[] = {"headless:chromium", "headless:chrome", "headless:lightpanda",
                                 "headless:phantomjs", "headless:automation"};
const int NHL = 5;
const char *const REJECT_TAGS[] = {"ai-crawler", "browser-automation", "scanner", "seo"};
const int NREJECT = 4;
const int PRIO_NONE = INT32_MAX;

/* A pattern of a set stands for a priority (lower wins) or browser bits. */
struct fact {
    int prio;
    uint32_t bits;
};

struct field_set {
    std::unique_ptr<RE2::Set> set;
    std::vector<fact> facts;

    void add(const std::string &re, fact f)
    {
        std::string err;
        if (set->Add(re, &err) < 0) die("re2: /%s/: %s", re.c_str(), err.c_str());
        facts.push_back(f);
    }
};

RE2::Options options()
{
    RE2::Options o;
    o.set_encoding(RE2::Options::EncodingLatin1);
    o.set_max_mem(256 << 20);
    o.set_log_errors(false);
    o.set_never_capture(true);
    return o;
}

void new_set(field_set *f)
{
    f->set.reset(new RE2::Set(options(), RE2::UNANCHORED));
}

void compile(field_set *f, const char *what)
{
    if (!f->set->Compile()) die("re2: the %s set does not compile (out of memory?)", what);
}

std::string quote(const char *s)
{
    return RE2::QuoteMeta(StringPiece(s));
}

/* Any of the NULL-terminated literals, as one regex. */
std::string any_of(const char *const *lits)
{
    std::string r;
    for (; *lits; lits++) r += (r.empty() ? "" : "|") + quote(*lits);
    return r;
}

const char *const ODD_BUT_REAL[] = {"Kindle/",   "Silk/",   "Kobo",      "; wv)",
                                    "SeaMonkey/", "Falkon/", "PaleMoon/", "Goanna/",
                                    "Waterfox/",  "SamsungBrowser/", nullptr};
const char *const CHROMIUM[] = {"Chrome/", "CriOS/", "EdgiOS/", nullptr};

struct peer {
    bool is_default = false;
    std::vector<std::string> cat_reason, tag_reason; /* by AI category, by REJECT_TAGS */
    int ncats = 0;
    field_set ua, brands, path;
    std::unique_ptr<RE2> chrome_re, firefox_re, safari_re;
    /* per thread: the match lists */
    std::vector<int> hits;
    std::string reason;

    int prio_ai(int i) const { return 1 + i; }
    int prio_hl(int k) const { return 1 + ncats + k; }
    int prio_reject(int k) const { return 1 + ncats + NHL + k; }
    int prio_other() const { return 1 + ncats + NHL + NREJECT; }
};

void load(peer *p, const char *path, const char *program)
{
    if (std::strcmp(program, "default") == 0) p->is_default = true;
    else if (std::strcmp(program, "ai_robots") != 0)
        die("--program: want ai_robots or default, not '%s'", program);
    size_t len;
    char *buf = read_file(path, &len);
    struct item {
        int cat_or_tag;
        std::string re;
        bool ai;
    };
    std::vector<item> items;
    std::map<std::string, int> cats, tags;
    std::vector<std::string> tag_names;
    size_t lineno = 0;
    for (char *line = buf; line && *line;) {
        char *nl = std::strchr(line, '\n');
        if (nl) *nl = 0;
        lineno++;
        char *t1 = std::strchr(line, '\t'), *t2 = t1 ? std::strchr(t1 + 1, '\t') : nullptr;
        std::string kind(line, t1 ? (size_t)(t1 - line) : std::strlen(line));
        if (kind == "AI_NAME" || kind == "AI_TOKEN" || kind == "CRAWLER") {
            if (!t2) die("%s:%zu: want KIND<TAB>name<TAB>value", path, lineno);
            std::string a(t1 + 1, (size_t)(t2 - t1 - 1)), b(t2 + 1);
            if (kind == "CRAWLER") {
                auto it = tags.emplace(a, (int)tags.size()).first;
                if ((size_t)it->second == tag_names.size()) tag_names.push_back(a);
                items.push_back({it->second, b, false});
            } else {
                auto it = cats.emplace(a, (int)cats.size()).first;
                if ((size_t)it->second == p->cat_reason.size())
                    p->cat_reason.push_back("ai-robots-txt:" + a);
                /* a name: a whole word, caselessly; RE2 has no lookbehind, so
                 * the neighbours are matched (a set only asks whether) */
                std::string re = kind == "AI_NAME" ? "(?:^|[^A-Za-z0-9_])" + RE2::QuoteMeta(b) +
                                                         "(?:[^A-Za-z0-9_]|$)"
                                                   : "(?:" + b + ")";
                items.push_back({it->second, "(?i)" + re, true});
            }
        }
        line = nl ? nl + 1 : nullptr;
    }
    std::free(buf);
    p->ncats = (int)cats.size();
    if (!p->ncats) die("%s: no AI_NAME lines", path);

    /* crawler tag -> priority: the rejected four in default.clf's order,
     * then every other tag */
    std::vector<int> tag_prio(tag_names.size(), p->prio_other());
    for (int k = 0; k < NREJECT; k++) {
        auto it = tags.find(REJECT_TAGS[k]);
        if (it == tags.end()) die("%s: no CRAWLER pattern tagged %s", path, REJECT_TAGS[k]);
        tag_prio[(size_t)it->second] = p->prio_reject(k);
        p->tag_reason.push_back(std::string("crawler:") + REJECT_TAGS[k]);
    }

    new_set(&p->ua);
    if (p->is_default) p->ua.add("^[ \\t,]*$", {0, 0});
    for (const item &it : items)
        if (it.ai) p->ua.add(it.re, {p->prio_ai(it.cat_or_tag), 0});
    if (p->is_default) {
        const char *hl[] = {"HeadlessChromium", "HeadlessChrome", "(?i)lightpanda", "PhantomJS",
                            ("(?:^|[^A-Za-z0-9_])(?:Puppeteer|PuppeteerSharp|Playwright|"
                             "Selenium|SeleniumBase|HeadlessShell)(?:[^A-Za-z0-9_]|$)")};
        for (int k = 0; k < NHL; k++) p->ua.add(hl[k], {p->prio_hl(k), 0});
        for (const item &it : items)
            if (!it.ai) p->ua.add(it.re, {tag_prio[(size_t)it.cat_or_tag], 0});
        const std::pair<std::string, uint32_t> bits[] = {
            {"^Mozilla/5\\.0 ", B_MOZ},   {any_of(ODD_BUT_REAL), B_ODD},
            {any_of(CHROMIUM), B_CHROMIUM}, {"Firefox/", B_FIREFOX},
            {"Safari/", B_SAFARI},        {"Version/", B_VERSION},
            {"Edg/", B_EDG},              {"Android", B_ANDROID},
            {"CrOS", B_CROS},             {"iPhone|iPad", B_IOS},
            {"Windows", B_WINDOWS},       {"Macintosh", B_MAC},
            {"Linux|X11", B_LINUX}};
        for (const auto &b : bits) p->ua.add(b.first, {PRIO_NONE, b.second});

        new_set(&p->brands);
        for (int k = 0; k < 3; k++) p->brands.add(hl[k], {p->prio_hl(k), 0});
        p->brands.add("\"Microsoft Edge\"", {PRIO_NONE, B_EDGE_BRAND});
        compile(&p->brands, "sec-ch-ua");

        /* default.clf KEEP_WORKING (prio 0) and the unclean-path literals */
        new_set(&p->path);
        p->path.add("^/(?:robots\\.txt|sitemap\\.xml|favicon\\.(?:ico|png|gif|jpg|jpeg|svg))$|"
                    "^/\\.well-known/",
                    {0, 0});
        p->path.add("(?i)\\.\\.|%2e|%2f|%5c|//", {1, 0});
        compile(&p->path, "path");

        RE2::Options o = options();
        o.set_never_capture(false);
        p->chrome_re.reset(new RE2("(?:Chrome|CriOS)/(\\d+)", o));
        p->firefox_re.reset(new RE2("Firefox/(\\d+)", o));
        p->safari_re.reset(new RE2("Version/(\\d+)[.0-9]* (?:Mobile/\\S+ )?Safari/", o));
        for (RE2 *r : {p->chrome_re.get(), p->firefox_re.get(), p->safari_re.get()})
            if (!r->ok()) die("re2: %s: %s", r->pattern().c_str(), r->error().c_str());
    }
    compile(&p->ua, "user-agent");
}

/* The lowest priority and the union of the bits of the set's patterns
 * that match s. -1 when RE2 gives up (its memory budget). */
int scan(peer *p, const field_set &f, const char *s, size_t n, int *prio, uint32_t *bits)
{
    RE2::Set::ErrorInfo ei;
    p->hits.clear();
    if (!f.set->Match(StringPiece(s, n), &p->hits, &ei) && ei.kind != RE2::Set::kNoError)
        return -1;
    for (int i : p->hits) {
        const fact &x = f.facts[(size_t)i];
        if (x.prio < *prio) *prio = x.prio;
        *bits |= x.bits;
    }
    return 0;
}

int verdict(bh_verdict *out, int reject, const char *reason)
{
    out->reject = reject;
    out->reason = reason;
    out->rlen = reason ? std::strlen(reason) : 0;
    return 0;
}

const char *header(const bh_request *r, const char *name, size_t *n)
{
    const char *v = bh_header_get(r, name, n);
    return v ? v : "";
}

/* docs/language.md to_int of a run of digits, saturating. */
int64_t digits(const StringPiece &d)
{
    uint64_t v = 0;
    for (char c : d) v = v > ((uint64_t)INT64_MAX - (uint64_t)(c - '0')) / 10
                             ? (uint64_t)INT64_MAX
                             : v * 10 + (uint64_t)(c - '0');
    return (int64_t)v;
}

int64_t major(const RE2 &re, const char *ua, size_t n)
{
    StringPiece d;
    return RE2::PartialMatch(StringPiece(ua, n), re, &d) ? digits(d) : 0;
}

/* browsers.clf plain_http: the last comma-separated value of
 * X-Forwarded-Proto, trimmed, is "http" in any case. */
bool plain_http(const bh_request *r)
{
    size_t n;
    const char *v = header(r, "x-forwarded-proto", &n);
    const char *c = v;
    for (size_t i = 0; i < n; i++)
        if (v[i] == ',') c = v + i + 1;
    size_t cn = n - (size_t)(c - v);
    while (cn && std::strchr(" \t\r\n", *c)) c++, cn--;
    while (cn && std::strchr(" \t\r\n", c[cn - 1])) cn--;
    return cn == 4 && strncasecmp(c, "http", 4) == 0;
}

/* browsers.clf check_headers on the facts; the reason or nullptr. */
const char *check_headers(const peer *p, const bh_request *r, const char *ua, size_t ulen,
                          uint32_t b)
{
    if (!(b & B_MOZ) || (b & B_ODD) || plain_http(r)) return nullptr;
    bool safari = (b & B_SAFARI) && (b & B_VERSION) && !(b & B_CHROMIUM);
    bool fetch = (b & B_CHROMIUM) && major(*p->chrome_re, ua, ulen) >= 76;
    if (!fetch && (b & B_FIREFOX)) fetch = major(*p->firefox_re, ua, ulen) >= 90;
    if (!fetch && safari) fetch = major(*p->safari_re, ua, ulen) >= 17;
    size_t n;
    if (fetch && !bh_header_get(r, "sec-fetch-mode", &n)) return "fake-browser:no-sec-fetch";
    const char *pl = bh_header_get(r, "sec-ch-ua-platform", &n);
    if (pl) {
        /* /^"[^"]*"$/ */
        if (n < 2 || pl[0] != '"' || pl[n - 1] != '"' || std::memchr(pl + 1, '"', n - 2))
            return "fake-browser:client-hints";
        const char *named = (b & B_ANDROID)   ? "Android"
                            : (b & B_CROS)    ? "Chrome OS"
                            : (b & B_IOS)     ? "iOS"
                            : (b & B_WINDOWS) ? "Windows"
                            : (b & B_MAC)     ? "macOS"
                            : (b & B_LINUX)   ? "Linux"
                                              : "";
        if (*named && (n - 2 != std::strlen(named) || std::memcmp(pl + 1, named, n - 2)))
            return "fake-browser:client-hints";
    }
    header(r, "sec-ch-ua", &n);
    if (n && !(b & B_EDGE_BRAND) != !(b & B_EDG)) return "fake-browser:edge-brand";
    return nullptr;
}

int classify(void *state, const bh_request *r, bh_verdict *out)
{
    peer *p = static_cast<peer *>(state);
    bool robots = r->plen == 11 && std::memcmp(r->path, "/robots.txt", 11) == 0;
    if (p->is_default) {
        int prio = PRIO_NONE;
        uint32_t b = 0;
        if (scan(p, p->path, r->path, r->plen, &prio, &b) < 0) return -1;
        /* prio 0: KEEP_WORKING; both it and 1: not clean */
        if (prio == 0 && p->hits.size() == 1) return verdict(out, 0, "well-known-path");
    } else if (robots) {
        return verdict(out, 0, nullptr);
    }
    /* default: step 1 accepted /robots.txt (ai_robots.check skips it) */
    size_t ulen, bn;
    const char *ua = header(r, "user-agent", &ulen);
    int prio = PRIO_NONE;
    uint32_t b = 0;
    if (scan(p, p->ua, ua, ulen, &prio, &b) < 0) return -1;
    if (!p->is_default) {
        return prio == PRIO_NONE ? verdict(out, 0, nullptr)
                                 : verdict(out, 1, p->cat_reason[(size_t)(prio - 1)].c_str());
    }
    const char *brands = header(r, "sec-ch-ua", &bn);
    if (bn && scan(p, p->brands, brands, bn, &prio, &b) < 0) return -1;
    if (prio == 0) return verdict(out, 1, "no-user-agent");
    if (prio < p->prio_hl(0)) return verdict(out, 1, p->cat_reason[(size_t)(prio - 1)].c_str());
    if (prio < p->prio_reject(0)) return verdict(out, 1, HL_REASON[prio - p->prio_hl(0)]);
    if (prio < p->prio_other())
        return verdict(out, 1, p->tag_reason[(size_t)(prio - p->prio_reject(0))].c_str());
    if (prio == p->prio_other()) return verdict(out, 0, nullptr);
    const char *why = check_headers(p, r, ua, ulen, b);
    return verdict(out, why != nullptr, why);
}

[[noreturn]] void usage()
{
    std::fprintf(stderr, "usage: classify-bench-re2 REQUESTS --peerdata PEERDATA.txt "
                         "--program ai_robots|default\n"
                         "           (--verdicts FILE | --time SECONDS | --stats)\n");
    std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
    bench_prog = "classify-bench-re2";
    if (argc < 2 || argv[1][0] == '-') usage();
    const char *peerdata = nullptr, *program = nullptr;
    int first = 2;
    while (first + 1 < argc) {
        if (std::strcmp(argv[first], "--peerdata") == 0) peerdata = argv[first + 1];
        else if (std::strcmp(argv[first], "--program") == 0) program = argv[first + 1];
        else break;
        first += 2;
    }
    if (!peerdata || !program) usage();
    bh_workload w;
    bh_workload_load(argv[1], &w);
    peer *p = new peer;
    bh_compile_begin();
    load(p, peerdata, program);
    bh_compile_end();
    bh_method m = {"re2", classify, p, nullptr, nullptr};
    int rc = bh_main(&m, &w, argc, argv, first);
    delete p;
    bh_workload_free(&w);
    return rc;
}
