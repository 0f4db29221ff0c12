/*
 * peer_pcre2.c: see peer_pcre2.h. The classifier a C programmer writes by
 * hand with PCRE2: one JIT-compiled regex per name or pattern, tried one
 * after the other, first hit wins; plain C for the literal tests. Or, the
 * best a PCRE2 user does (alternation mode): one JIT-compiled alternation
 * per field, its alternatives in the order the .clf decides, each opened
 * by (*MARK:priority), so that the mark of a match names its alternative.
 *
 * Each step mirrors a line of stdlib/default.clf, ai_robots.clf,
 * headless.clf, crawlers.clf or browsers.clf (named in the comments), with
 * the semantics of docs/language.md:
 *   s.contains(X)        a byte substring ([...]i: ASCII-caseless)
 *   s.contains_word(X)   X with no [A-Za-z0-9_] right before or after it;
 *                        for the AI names the regex
 *                        (?<![A-Za-z0-9_])NAME(?![A-Za-z0-9_]), caseless
 *   s.matches(RE)        a regex search (PCRE2; the .clf's Hyperscan
 *                        syntax is a subset)
 *   s.capture(RE, 1)     group 1 of the leftmost match, "" when none
 *   s.to_int()           the leading decimal, saturating
 *   req.header(N)        the value, "" when absent (no request repeats a
 *                        header, so the first one is the only one)
 */
#define _GNU_SOURCE /* memmem */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_pcre2.h"

/* ------------------------------------------------------------ regexes */

typedef struct rx {
    pcre2_code *re;
    int jit; /* JIT-compiled: matched with pcre2_jit_match */
} rx;

/* Compiles and JIT-compiles `pat` (len bytes) or dies naming `what`. */
static void rx_compile(rx *x, const char *pat, size_t len, uint32_t opts, const char *what,
                       pcre2_compile_context *cctx, uint32_t *max_pairs)
{
    int err;
    PCRE2_SIZE off;
    x->re = pcre2_compile((PCRE2_SPTR)pat, len, opts, &err, &off, cctx);
    if (!x->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        die("peer_pcre2: %s: PCRE2 refuses /%.*s/ at offset %zu: %s", what, (int)len, pat,
               (size_t)off, (const char *)msg);
    }
    x->jit = pcre2_jit_compile(x->re, PCRE2_JIT_COMPLETE) == 0;
    uint32_t groups = 0;
    pcre2_pattern_info(x->re, PCRE2_INFO_CAPTURECOUNT, &groups);
    if (groups + 1 > *max_pairs) *max_pairs = groups + 1;
}

static void rx_free(rx *x)
{
    pcre2_code_free(x->re);
    x->re = NULL;
}

/* 1 on a match, 0 on none, -1 on a matching error. */
static int rx_search(const rx *x, pcre2_match_data *md, const char *s, size_t n)
{
    int rc = x->jit ? pcre2_jit_match(x->re, (PCRE2_SPTR)s, n, 0, 0, md, NULL)
                    : pcre2_match(x->re, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    return -1;
}

/* Group 1 of the leftmost match into *cs and *cn ("" when no match or the
 * group is unset). 0, or -1 on a matching error. */
static int rx_capture1(const rx *x, pcre2_match_data *md, const char *s, size_t n,
                       const char **cs, size_t *cn)
{
    *cs = "";
    *cn = 0;
    int m = rx_search(x, md, s, n);
    if (m <= 0) return m;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (pcre2_get_ovector_count(md) < 2 || ov[2] == PCRE2_UNSET) return 0;
    *cs = s + ov[2];
    *cn = ov[3] - ov[2];
    return 0;
}

/* ------------------------------------------------------- string tests */

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static unsigned char lc(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static int contains(const char *s, size_t n, const char *lit)
{
    return memmem(s, n, lit, strlen(lit)) != NULL;
}

/* Any element of the NULL-terminated list. */
static int contains_any(const char *s, size_t n, const char *const *lits)
{
    for (; *lits; lits++)
        if (contains(s, n, *lits)) return 1;
    return 0;
}

/* ASCII-caseless; `lit` given in lower case. */
static int contains_ci(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (k > n) return 0;
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = 0;
        while (j < k && lc((unsigned char)s[i + j]) == (unsigned char)lit[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

static int contains_any_ci(const char *s, size_t n, const char *const *lits)
{
    for (; *lits; lits++)
        if (contains_ci(s, n, *lits)) return 1;
    return 0;
}

/* Case-sensitive whole word, any occurrence. */
static int contains_word(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    const char *p = s, *end = s + n;
    while ((size_t)(end - p) >= k) {
        const char *q = memmem(p, (size_t)(end - p), lit, k);
        if (!q) return 0;
        if ((q == s || !is_word((unsigned char)q[-1])) &&
            (q + k == end || !is_word((unsigned char)q[k])))
            return 1;
        p = q + 1;
    }
    return 0;
}

static int contains_word_any(const char *s, size_t n, const char *const *lits)
{
    for (; *lits; lits++)
        if (contains_word(s, n, *lits)) return 1;
    return 0;
}

static int starts_with(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n >= k && memcmp(s, lit, k) == 0;
}

static int equals(const char *s, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* docs/language.md to_int: after spaces and tabs, an optional sign, the
 * digits; 0 without a digit; saturating at the int64 range. */
static int64_t to_int(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        v = v > (lim - d) / 10 ? lim : v * 10 + d;
    }
    if (neg) return v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return (int64_t)v;
}

/* req.header(NAME): the value, "" when absent. */
static const char *header(const bh_request *r, const char *lname, size_t *len)
{
    const char *v = bh_header_get(r, lname, len);
    if (!v) {
        *len = 0;
        return "";
    }
    return v;
}

static int has_header(const bh_request *r, const char *lname)
{
    size_t len;
    return bh_header_get(r, lname, &len) != NULL;
}

/* ------------------------------------------------------- the peer data */

/* A growing NUL-terminated string: the alternations' sources. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1) c *= 2;
        b->s = xrealloc(b->s, c);
        b->cap = c;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

typedef struct ai_cat {
    char *name;
    char *reason; /* "ai-robots-txt:<name>" */
    size_t rlen;
    rx *names; /* whole-word name regexes, in order */
    size_t nnames, cap;
    rx token; /* CAT_*_TOKEN, when has_token */
    int has_token;
} ai_cat;

typedef struct crawl_tag {
    char *name;
    char *reason; /* "crawler:<name>" */
    size_t rlen;
    rx *pats; /* in file order */
    size_t npats, cap;
    char **alt; /* alternation mode: the patterns' sources instead */
    size_t nalt, altcap;
} crawl_tag;

enum { PROG_AI_ROBOTS, PROG_DEFAULT };

/* The tags default.clf rejects, in its order. */
static const char *const REJECT_TAGS[] = {"ai-crawler", "browser-automation", "scanner", "seo"};
#define NREJECT (sizeof REJECT_TAGS / sizeof REJECT_TAGS[0])

typedef struct shared {
    int program;
    ai_cat *cats;
    size_t ncats;
    crawl_tag *tags;
    size_t ntags;
    crawl_tag *reject[NREJECT]; /* REJECT_TAGS' entries of tags */
    crawl_tag **other;          /* every other tag, file order */
    size_t nother;
    /* default.clf KEEP_WORKING, its no-user-agent regex, and browsers.clf's */
    rx keep_working, no_ua, chrome_re, firefox_re, safari_re, proto_re, platform_re;
    uint32_t max_pairs; /* ovector pairs the largest regex needs */
    int nojit;          /* regexes PCRE2 could not JIT-compile */
    /* Alternation mode: the User-Agent's alternations (as few as PCRE2
     * compiles, in priority order) and Sec-CH-UA's, instead of the
     * per-pattern regexes of cats and tags, which stay empty. */
    int alt;
    rx *ua_alts, brands_alt;
    size_t nua_alts;
} shared;

struct peer_pcre2 {
    shared *sh;
    int owner; /* from _new: frees sh */
    pcre2_match_data *md;
};

static void *grow(void *p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    p = xrealloc(p, c * sz);
    memset((char *)p + *cap * sz, 0, (c - *cap) * sz);
    *cap = c;
    return p;
}

static char *concat(const char *a, const char *b, size_t blen, size_t *len)
{
    size_t al = strlen(a);
    char *s = xcalloc(al + blen + 1, 1);
    memcpy(s, a, al);
    memcpy(s + al, b, blen);
    *len = al + blen;
    return s;
}

/* The regex matching name (n bytes) literally as a whole word. */
static char *word_regex(const char *name, size_t n, size_t *len)
{
    static const char pre[] = "(?<![A-Za-z0-9_])", post[] = "(?![A-Za-z0-9_])";
    char *s = xcalloc(sizeof pre + 4 * n + sizeof post, 1), *p = s;
    memcpy(p, pre, sizeof pre - 1);
    p += sizeof pre - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (is_word(c)) {
            *p++ = (char)c;
        } else if (c > ' ' && c < 0x7f) { /* ASCII punctuation: \c is c */
            *p++ = '\\';
            *p++ = (char)c;
        } else { /* space, control, non-ASCII: \xHH */
            p += sprintf(p, "\\x%02x", c);
        }
    }
    memcpy(p, post, sizeof post - 1);
    p += sizeof post - 1;
    *len = (size_t)(p - s);
    return s;
}

static ai_cat *find_cat(shared *sh, size_t *cap, const char *name, size_t n)
{
    for (size_t i = 0; i < sh->ncats; i++)
        if (equals(name, n, sh->cats[i].name)) return &sh->cats[i];
    sh->cats = grow(sh->cats, cap, sh->ncats + 1, sizeof *sh->cats);
    ai_cat *c = &sh->cats[sh->ncats++];
    size_t dummy;
    c->name = concat("", name, n, &dummy);
    c->reason = concat("ai-robots-txt:", name, n, &c->rlen);
    return c;
}

static crawl_tag *find_tag(shared *sh, size_t *cap, const char *name, size_t n)
{
    for (size_t i = 0; i < sh->ntags; i++)
        if (equals(name, n, sh->tags[i].name)) return &sh->tags[i];
    sh->tags = grow(sh->tags, cap, sh->ntags + 1, sizeof *sh->tags);
    crawl_tag *t = &sh->tags[sh->ntags++];
    size_t dummy;
    t->name = concat("", name, n, &dummy);
    t->reason = concat("crawler:", name, n, &t->rlen);
    return t;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("peer_pcre2: %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = xcalloc(cap, 1);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) die("peer_pcre2: out of memory reading %s", path);
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    if (ferror(f)) die("peer_pcre2: %s: read error", path);
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Alternation mode: the priorities the marks carry, in the order
 * default.clf decides (lower wins): no User-Agent, the AI categories, the
 * headless tokens, the four rejected crawler tags, any other crawler. */
enum { HL_CHROMIUM, HL_CHROME, HL_LIGHTPANDA, HL_PHANTOMJS, HL_AUTOMATION, NHL };
#define PRIO_NO_UA 0
#define PRIO_AI(sh, i) (1 + (int)(i))
#define PRIO_HL(sh, k) (1 + (int)(sh)->ncats + (k))
#define PRIO_REJECT(sh, k) (1 + (int)(sh)->ncats + NHL + (int)(k))
#define PRIO_OTHER(sh) (1 + (int)(sh)->ncats + NHL + (int)NREJECT)
#define PRIO_NONE INT32_MAX

static const char *const HL_REASON[NHL] = {"headless:chromium", "headless:chrome",
                                           "headless:lightpanda", "headless:phantomjs",
                                           "headless:automation"};
/* headless.clf's tokens as regexes (the brands header: the first three) */
static const char *const HL_RE[NHL] = {
    "HeadlessChromium", "HeadlessChrome", "(?i)lightpanda", "PhantomJS",
    /* parenthesized: one element (clang's -Wstring-concatenation) */
    ("(?<![A-Za-z0-9_])(?:Puppeteer|PuppeteerSharp|Playwright|Selenium|SeleniumBase|"
     "HeadlessShell)(?![A-Za-z0-9_])")};

/* One alternative of an alternation: a regex and the priority its
 * (*MARK) carries. */
typedef struct alt_item {
    int prio;
    const char *flags; /* "(?i)" or "" */
    char *src;
} alt_item;

typedef struct alt_list {
    alt_item *v;
    size_t n, cap;
} alt_list;

static void alt_push(alt_list *l, int prio, const char *flags, const char *src, size_t len)
{
    l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    size_t dummy;
    l->v[l->n++] = (alt_item){prio, flags, concat("", src, len, &dummy)};
}

/* items [i, j) as one regex: each run of one priority and flags under one
 * mark, "(?:(*MARK:p)flags(?:a|b))|(?:(*MARK:q)...)". */
static void alt_source(const alt_list *l, size_t i, size_t j, sbuf *b)
{
    for (size_t k = i; k < j; k++) {
        const alt_item *x = &l->v[k];
        int opens = k == i || x->prio != l->v[k - 1].prio || strcmp(x->flags, l->v[k - 1].flags);
        if (opens) {
            char head[48];
            snprintf(head, sizeof head, "%s(?:(*MARK:%d)%s(?:", k == i ? "" : "))|", x->prio,
                     x->flags);
            sb_puts(b, head);
        } else {
            sb_puts(b, "|");
        }
        sb_puts(b, x->src);
    }
    if (j > i) sb_puts(b, "))");
}

/* Debian's PCRE2 is built with 2-byte links: a compiled regex holds at
 * most 64 KiB, and the User-Agent's ~1,650 alternatives hold more. So the
 * list becomes the fewest alternations that compile, greedily by source
 * length, halving a chunk PCRE2 refuses as too large; they are scanned
 * in priority order (alt_scan_all). */
#define ALT_SOURCE_BUDGET 30000

static void compile_alts(const alt_list *l, rx **out, size_t *nout, const char *what,
                         pcre2_compile_context *cctx, uint32_t *max_pairs)
{
    size_t cap = 0;
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < l->n;) {
        size_t j = i, len = 0;
        while (j < l->n && (j == i || len + strlen(l->v[j].src) < ALT_SOURCE_BUDGET))
            len += strlen(l->v[j++].src) + 24;
        for (;;) {
            sbuf b = {0};
            alt_source(l, i, j, &b);
            int err;
            PCRE2_SIZE off;
            pcre2_code *re = pcre2_compile((PCRE2_SPTR)b.s, b.n, 0, &err, &off, cctx);
            if (!re && err == PCRE2_ERROR_PATTERN_TOO_LARGE && j - i > 1) {
                free(b.s);
                j = i + (j - i) / 2;
                continue;
            }
            pcre2_code_free(re);
            *out = grow(*out, &cap, *nout + 1, sizeof **out);
            rx_compile(&(*out)[(*nout)++], b.s, b.n, 0, what, cctx, max_pairs);
            free(b.s);
            break;
        }
        i = j;
    }
    for (size_t k = 0; k < l->n; k++) free(l->v[k].src);
    free(l->v);
}

static void build_alternations(shared *sh, alt_list *names, pcre2_compile_context *cctx)
{
    /* names: the AI names and tokens, by category, from load() */
    alt_list ua = {0}, brands = {0};
    if (sh->program == PROG_DEFAULT) alt_push(&ua, PRIO_NO_UA, "", "^[ \\t,]*\\z", 11);
    for (size_t k = 0; k < names->n; k++)
        alt_push(&ua, names->v[k].prio, "(?i)", names->v[k].src, strlen(names->v[k].src));
    for (size_t k = 0; k < names->n; k++) free(names->v[k].src);
    free(names->v);
    if (sh->program == PROG_DEFAULT) {
        for (int k = 0; k < NHL; k++) {
            alt_push(&ua, PRIO_HL(sh, k), "", HL_RE[k], strlen(HL_RE[k]));
            if (k <= HL_LIGHTPANDA) alt_push(&brands, PRIO_HL(sh, k), "", HL_RE[k], strlen(HL_RE[k]));
        }
        for (size_t k = 0; k < NREJECT; k++)
            for (size_t i = 0; i < sh->reject[k]->nalt; i++)
                alt_push(&ua, PRIO_REJECT(sh, k), "", sh->reject[k]->alt[i],
                         strlen(sh->reject[k]->alt[i]));
        for (size_t k = 0; k < sh->nother; k++)
            for (size_t i = 0; i < sh->other[k]->nalt; i++)
                alt_push(&ua, PRIO_OTHER(sh), "", sh->other[k]->alt[i],
                         strlen(sh->other[k]->alt[i]));
        size_t one;
        rx *b;
        compile_alts(&brands, &b, &one, "the sec-ch-ua alternation", cctx, &sh->max_pairs);
        sh->brands_alt = b[0];
        free(b);
    }
    compile_alts(&ua, &sh->ua_alts, &sh->nua_alts, "the user-agent alternation", cctx,
                 &sh->max_pairs);
    for (size_t i = 0; i < sh->ntags; i++) {
        for (size_t k = 0; k < sh->tags[i].nalt; k++) free(sh->tags[i].alt[k]);
        free(sh->tags[i].alt);
        sh->tags[i].alt = NULL;
        sh->tags[i].nalt = sh->tags[i].altcap = 0;
    }
}

/* The lowest priority among the alternatives of x that match s anywhere,
 * PRIO_NONE for none; -1 on a matching error. A match reports the
 * leftmost position where an alternative matches and, there, the first
 * such alternative (its mark); searching again from one past that
 * position visits every position where one matches, so the minimum over
 * the matches is the minimum over all alternatives. Stops early at
 * `floor`, the lowest priority x has. */
static int alt_scan(const rx *x, pcre2_match_data *md, const char *s, size_t n, int floor)
{
    int best = PRIO_NONE;
    for (size_t start = 0; start <= n;) {
        int rc = x->jit ? pcre2_jit_match(x->re, (PCRE2_SPTR)s, n, start, 0, md, NULL)
                        : pcre2_match(x->re, (PCRE2_SPTR)s, n, start, 0, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) return -1;
        PCRE2_SPTR mark = pcre2_get_mark(md);
        int prio = mark ? atoi((const char *)mark) : PRIO_NONE;
        if (prio < best) best = prio;
        if (best <= floor) break;
        start = pcre2_get_ovector_pointer(md)[0] + 1;
    }
    return best;
}

/* alt_scan over the User-Agent's alternations in priority order: the
 * first that matches holds the lowest priority (each later one starts at
 * or above the last priority of the one before). */
static int alt_scan_all(const shared *sh, pcre2_match_data *md, const char *s, size_t n,
                        int floor)
{
    for (size_t k = 0; k < sh->nua_alts; k++) {
        int prio = alt_scan(&sh->ua_alts[k], md, s, n, floor);
        if (prio != PRIO_NONE) return prio;
    }
    return PRIO_NONE;
}

static void load(shared *sh, const char *path)
{
    pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
    if (!cctx) die("peer_pcre2: out of memory");
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);

    size_t len, catcap = 0, tagcap = 0, lineno = 0;
    alt_list ai_items = {0}; /* alternation mode: the AI names and tokens */
    char *buf = read_all(path, &len);
    char *p = buf, *end = buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        lineno++;
        /* kind TAB a TAB b (b: the rest of the line) */
        char *t1 = memchr(p, '\t', (size_t)(le - p));
        char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(le - t1 - 1)) : NULL;
        size_t klen = (size_t)((t1 ? t1 : le) - p);
        int ai_name = klen == 7 && memcmp(p, "AI_NAME", 7) == 0;
        int ai_token = klen == 8 && memcmp(p, "AI_TOKEN", 8) == 0;
        int crawler = klen == 7 && memcmp(p, "CRAWLER", 7) == 0;
        if (ai_name || ai_token || crawler) {
            if (!t2 || t2 == t1 + 1 || t2 + 1 == le)
                die("peer_pcre2: %s:%zu: want KIND<TAB>name<TAB>value", path, lineno);
            const char *a = t1 + 1, *b = t2 + 1;
            size_t alen = (size_t)(t2 - a), blen = (size_t)(le - b);
            char what[512];
            snprintf(what, sizeof what, "%s:%zu", path, lineno);
            if (ai_name) {
                ai_cat *c = find_cat(sh, &catcap, a, alen);
                size_t rlen;
                char *re = word_regex(b, blen, &rlen);
                if (sh->alt) {
                    alt_push(&ai_items, PRIO_AI(sh, c - sh->cats), "", re, rlen);
                } else {
                    c->names = grow(c->names, &c->cap, c->nnames + 1, sizeof *c->names);
                    rx_compile(&c->names[c->nnames++], re, rlen, PCRE2_CASELESS, what, cctx,
                               &sh->max_pairs);
                }
                free(re);
            } else if (ai_token) {
                ai_cat *c = find_cat(sh, &catcap, a, alen);
                if (c->has_token) die("peer_pcre2: %s: a second AI_TOKEN for %s", what, c->name);
                if (sh->alt) alt_push(&ai_items, PRIO_AI(sh, c - sh->cats), "", b, blen);
                else rx_compile(&c->token, b, blen, PCRE2_CASELESS, what, cctx, &sh->max_pairs);
                c->has_token = 1;
            } else {
                crawl_tag *t = find_tag(sh, &tagcap, a, alen);
                if (sh->alt) {
                    t->alt = grow(t->alt, &t->altcap, t->nalt + 1, sizeof *t->alt);
                    size_t dummy;
                    t->alt[t->nalt++] = concat("", b, blen, &dummy);
                } else {
                    t->pats = grow(t->pats, &t->cap, t->npats + 1, sizeof *t->pats);
                    rx_compile(&t->pats[t->npats++], b, blen, 0, what, cctx, &sh->max_pairs);
                }
            }
        }
        /* other kinds (LUA_..., future ones): not ours */
        p = nl ? nl + 1 : end;
    }
    free(buf);
    if (sh->ncats == 0) die("peer_pcre2: %s: no AI_NAME lines", path);

    if (sh->program == PROG_DEFAULT) {
        if (sh->ntags == 0) die("peer_pcre2: %s: no CRAWLER lines", path);
        sh->other = xcalloc(sh->ntags, sizeof *sh->other);
        for (size_t i = 0; i < sh->ntags; i++) {
            size_t k = 0;
            while (k < NREJECT && strcmp(sh->tags[i].name, REJECT_TAGS[k]) != 0) k++;
            if (k < NREJECT) sh->reject[k] = &sh->tags[i];
            else sh->other[sh->nother++] = &sh->tags[i];
        }
        for (size_t k = 0; k < NREJECT; k++)
            if (!sh->reject[k])
                die("peer_pcre2: %s: no CRAWLER pattern tagged %s", path, REJECT_TAGS[k]);
        /* default.clf, its regexes as written there */
        static const char keep[] = "^\\/(?:robots\\.txt|sitemap\\.xml|favicon\\.(?:ico|png|gif|jpg|"
                                   "jpeg|svg))\\z|^\\/\\.well-known\\/";
        rx_compile(&sh->keep_working, keep, sizeof keep - 1, 0, "KEEP_WORKING", cctx,
                   &sh->max_pairs);
        rx_compile(&sh->no_ua, "^[ \\t,]*\\z", PCRE2_ZERO_TERMINATED, 0, "no-user-agent", cctx,
                   &sh->max_pairs);
        /* browsers.clf */
        rx_compile(&sh->chrome_re, "(?:Chrome|CriOS)\\/(\\d+)", PCRE2_ZERO_TERMINATED, 0,
                   "chrome_major", cctx, &sh->max_pairs);
        rx_compile(&sh->firefox_re, "Firefox\\/(\\d+)", PCRE2_ZERO_TERMINATED, 0,
                   "firefox_major", cctx, &sh->max_pairs);
        rx_compile(&sh->safari_re, "Version\\/(\\d+)[.0-9]* (?:Mobile\\/\\S+ )?Safari\\/",
                   PCRE2_ZERO_TERMINATED, 0, "safari_version", cctx, &sh->max_pairs);
        rx_compile(&sh->proto_re, "([^,]*)\\z", PCRE2_ZERO_TERMINATED, 0, "plain_http", cctx,
                   &sh->max_pairs);
        rx_compile(&sh->platform_re, "^\"[^\"]*\"$", PCRE2_ZERO_TERMINATED, 0, "check_headers",
                   cctx, &sh->max_pairs);
    }
    if (sh->alt) build_alternations(sh, &ai_items, cctx);
    pcre2_compile_context_free(cctx);

    for (size_t i = 0; i < sh->ncats; i++) {
        for (size_t k = 0; k < sh->cats[i].nnames; k++) sh->nojit += !sh->cats[i].names[k].jit;
        if (sh->cats[i].token.re) sh->nojit += !sh->cats[i].token.jit;
    }
    for (size_t i = 0; i < sh->ntags; i++)
        for (size_t k = 0; k < sh->tags[i].npats; k++) sh->nojit += !sh->tags[i].pats[k].jit;
    for (size_t k = 0; k < sh->nua_alts; k++) sh->nojit += !sh->ua_alts[k].jit;
    if (sh->brands_alt.re) sh->nojit += !sh->brands_alt.jit;
    if (sh->nojit)
        fprintf(stderr, "peer_pcre2: %d regexes without JIT (interpreted)\n", sh->nojit);
}

/* -------------------------------------------------------- the checks */

static int verdict(bh_verdict *out, int reject, const char *reason, size_t rlen)
{
    out->reject = reject;
    out->reason = reason;
    out->rlen = reason ? rlen : 0;
    return 0;
}

#define VERDICT(out, rej, lit) verdict(out, rej, lit, sizeof lit - 1)

/* ai_robots.clf check, after the /robots.txt test: the first category
 * whose names (whole words) or token regex match ua; NULL for none.
 * *err on a matching error. */
static const ai_cat *ai_check(const shared *sh, pcre2_match_data *md, const char *ua,
                              size_t ulen, int *err)
{
    for (size_t i = 0; i < sh->ncats; i++) {
        const ai_cat *c = &sh->cats[i];
        for (size_t k = 0; k < c->nnames; k++) {
            int m = rx_search(&c->names[k], md, ua, ulen);
            if (m) {
                *err = m < 0;
                return c;
            }
        }
        if (c->has_token) {
            int m = rx_search(&c->token, md, ua, ulen);
            if (m) {
                *err = m < 0;
                return c;
            }
        }
    }
    return NULL;
}

/* Any pattern of tag t: 1, 0, or -1 on an error. */
static int tag_match(const crawl_tag *t, pcre2_match_data *md, const char *ua, size_t ulen)
{
    for (size_t k = 0; k < t->npats; k++) {
        int m = rx_search(&t->pats[k], md, ua, ulen);
        if (m) return m;
    }
    return 0;
}

static int classify_ai_robots(peer_pcre2 *p, const bh_request *r, bh_verdict *out)
{
    /* if req.path == "/robots.txt" { pass } */
    if (equals(r->path, r->plen, "/robots.txt")) return verdict(out, 0, NULL, 0);
    size_t ulen;
    const char *ua = header(r, "user-agent", &ulen);
    int err = 0;
    const ai_cat *c = ai_check(p->sh, p->md, ua, ulen, &err);
    if (err) return -1;
    if (c) return verdict(out, 1, c->reason, c->rlen);
    return verdict(out, 0, NULL, 0);
}

static const char *const BAD_PATH[] = {"..", "%2e", "%2f", "%5c", "//", NULL};
static const char *const AUTOMATION[] = {"Puppeteer", "PuppeteerSharp", "Playwright",
                                         "Selenium",  "SeleniumBase",   "HeadlessShell",
                                         NULL};
static const char *const ODD_BUT_REAL[] = {"Kindle/",   "Silk/",   "Kobo",      "; wv)",
                                           "SeaMonkey/", "Falkon/", "PaleMoon/", "Goanna/",
                                           "Waterfox/",  "SamsungBrowser/", NULL};
static const char *const CHROMIUM[] = {"Chrome/", "CriOS/", "EdgiOS/", NULL};
static const char *const IOS[] = {"iPhone", "iPad", NULL};
static const char *const LINUX[] = {"Linux", "X11", NULL};

/* browsers.clf ua_platform */
static const char *ua_platform(const char *ua, size_t ulen)
{
    if (contains(ua, ulen, "Android")) return "Android";
    if (contains(ua, ulen, "CrOS")) return "Chrome OS";
    if (contains_any(ua, ulen, IOS)) return "iOS";
    if (contains(ua, ulen, "Windows")) return "Windows";
    if (contains(ua, ulen, "Macintosh")) return "macOS";
    if (contains_any(ua, ulen, LINUX)) return "Linux";
    return "";
}

/* browsers.clf plain_http: the last comma-separated value of
 * X-Forwarded-Proto, trimmed and lowered, is "http". 1, 0 or -1. */
static int plain_http(const shared *sh, pcre2_match_data *md, const bh_request *r)
{
    size_t n, cn;
    const char *v = header(r, "x-forwarded-proto", &n), *c;
    /* lower() first in the .clf: it changes no comma, so capture, then
     * compare caselessly */
    if (rx_capture1(&sh->proto_re, md, v, n, &c, &cn) < 0) return -1;
    while (cn && (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n')) c++, cn--;
    while (cn && (c[cn - 1] == ' ' || c[cn - 1] == '\t' || c[cn - 1] == '\r' || c[cn - 1] == '\n'))
        cn--;
    return cn == 4 && lc((unsigned char)c[0]) == 'h' && lc((unsigned char)c[1]) == 't' &&
           lc((unsigned char)c[2]) == 't' && lc((unsigned char)c[3]) == 'p';
}

/* A *_major / safari_version function: capture group 1, to_int. */
static int major(const rx *x, pcre2_match_data *md, const char *ua, size_t ulen, int64_t *v)
{
    const char *c;
    size_t cn;
    if (rx_capture1(x, md, ua, ulen, &c, &cn) < 0) return -1;
    *v = to_int(c, cn);
    return 0;
}

/* browsers.clf check_headers: 1 when it rejected (*out set), 0 on pass,
 * -1 on an error. */
static int check_headers(const shared *sh, pcre2_match_data *md, const bh_request *r,
                         const char *ua, size_t ulen, bh_verdict *out)
{
    if (!starts_with(ua, ulen, "Mozilla/5.0 ") || contains_any(ua, ulen, ODD_BUT_REAL)) return 0;
    int ph = plain_http(sh, md, r);
    if (ph) return ph < 0 ? -1 : 0;
    int chromium = contains_any(ua, ulen, CHROMIUM);
    int firefox = contains(ua, ulen, "Firefox/");
    int safari = contains(ua, ulen, "Safari/") && contains(ua, ulen, "Version/") && !chromium;
    int sends_fetch = 0;
    int64_t v;
    if (chromium) {
        if (major(&sh->chrome_re, md, ua, ulen, &v) < 0) return -1;
        sends_fetch = v >= 76;
    }
    if (!sends_fetch && firefox) {
        if (major(&sh->firefox_re, md, ua, ulen, &v) < 0) return -1;
        sends_fetch = v >= 90;
    }
    if (!sends_fetch && safari) {
        if (major(&sh->safari_re, md, ua, ulen, &v) < 0) return -1;
        sends_fetch = v >= 17;
    }
    if (sends_fetch && !has_header(r, "sec-fetch-mode")) {
        VERDICT(out, 1, "fake-browser:no-sec-fetch");
        return 1;
    }
    size_t pn;
    const char *platform = bh_header_get(r, "sec-ch-ua-platform", &pn);
    if (platform) {
        int m = rx_search(&sh->platform_re, md, platform, pn);
        if (m < 0) return -1;
        if (!m) {
            VERDICT(out, 1, "fake-browser:client-hints");
            return 1;
        }
        const char *named = ua_platform(ua, ulen);
        /* platform.substr(1, len - 2): the regex matched, so len >= 2 */
        if (*named && !equals(platform + 1, pn - 2, named)) {
            VERDICT(out, 1, "fake-browser:client-hints");
            return 1;
        }
    }
    size_t bn;
    const char *brands = header(r, "sec-ch-ua", &bn);
    if (bn && contains(brands, bn, "\"Microsoft Edge\"") != contains(ua, ulen, "Edg/")) {
        VERDICT(out, 1, "fake-browser:edge-brand");
        return 1;
    }
    return 0;
}

/* default.clf step 1: the path is one of KEEP_WORKING, and clean. 1, 0,
 * or -1 on a matching error. */
static int well_known_path(const shared *sh, pcre2_match_data *md, const bh_request *r)
{
    int m = rx_search(&sh->keep_working, md, r->path, r->plen);
    if (m <= 0) return m;
    return !contains_any_ci(r->path, r->plen, BAD_PATH);
}

static int classify_default(peer_pcre2 *p, const bh_request *r, bh_verdict *out)
{
    const shared *sh = p->sh;
    pcre2_match_data *md = p->md;
    int m;

    /* 1. KEEP_WORKING, a clean path */
    if ((m = well_known_path(sh, md, r)) != 0) return m < 0 ? -1 : VERDICT(out, 0, "well-known-path");

    /* 2. no User-Agent */
    size_t ulen;
    const char *ua = header(r, "user-agent", &ulen);
    if ((m = rx_search(&sh->no_ua, md, ua, ulen)) < 0) return -1;
    if (m) return VERDICT(out, 1, "no-user-agent");

    /* 3. ai_robots.check */
    if (!equals(r->path, r->plen, "/robots.txt")) {
        int err = 0;
        const ai_cat *c = ai_check(sh, md, ua, ulen, &err);
        if (err) return -1;
        if (c) return verdict(out, 1, c->reason, c->rlen);
    }

    /* 4. headless.check */
    size_t bn;
    const char *brands = header(r, "sec-ch-ua", &bn);
    if (contains(ua, ulen, "HeadlessChromium") || contains(brands, bn, "HeadlessChromium"))
        return VERDICT(out, 1, "headless:chromium");
    if (contains(ua, ulen, "HeadlessChrome") || contains(brands, bn, "HeadlessChrome"))
        return VERDICT(out, 1, "headless:chrome");
    if (contains_ci(ua, ulen, "lightpanda") || contains_ci(brands, bn, "lightpanda"))
        return VERDICT(out, 1, "headless:lightpanda");
    if (contains(ua, ulen, "PhantomJS")) return VERDICT(out, 1, "headless:phantomjs");
    if (contains_word_any(ua, ulen, AUTOMATION)) return VERDICT(out, 1, "headless:automation");

    /* 5. crawlers.check_ai_crawler, _browser_automation, _scanner, _seo */
    for (size_t k = 0; k < NREJECT; k++) {
        const crawl_tag *t = sh->reject[k];
        if ((m = tag_match(t, md, ua, ulen)) < 0) return -1;
        if (m) return verdict(out, 1, t->reason, t->rlen);
    }

    /* 6. crawlers.is_crawler: the four tags above did not match */
    for (size_t k = 0; k < sh->nother; k++) {
        if ((m = tag_match(sh->other[k], md, ua, ulen)) < 0) return -1;
        if (m) return verdict(out, 0, NULL, 0);
    }

    /* 7. browsers.check_headers */
    if ((m = check_headers(sh, md, r, ua, ulen, out)) != 0) return m < 0 ? -1 : 0;

    /* 8. main: accept */
    return verdict(out, 0, NULL, 0);
}

/* Alternation mode, ai_robots: one scan of the User-Agent. */
static int classify_ai_robots_alt(peer_pcre2 *p, const bh_request *r, bh_verdict *out)
{
    const shared *sh = p->sh;
    if (equals(r->path, r->plen, "/robots.txt")) return verdict(out, 0, NULL, 0);
    size_t ulen;
    const char *ua = header(r, "user-agent", &ulen);
    int prio = alt_scan_all(sh, p->md, ua, ulen, PRIO_AI(sh, 0));
    if (prio < 0) return -1;
    if (prio == PRIO_NONE) return verdict(out, 0, NULL, 0);
    const ai_cat *c = &sh->cats[prio - PRIO_AI(sh, 0)];
    return verdict(out, 1, c->reason, c->rlen);
}

/* Alternation mode, default: the path as in the loop, then one scan of
 * the User-Agent and one of Sec-CH-UA decide steps 2 to 6 of
 * classify_default by the lowest priority that matched. */
static int classify_default_alt(peer_pcre2 *p, const bh_request *r, bh_verdict *out)
{
    const shared *sh = p->sh;
    pcre2_match_data *md = p->md;
    int m;
    if ((m = well_known_path(sh, md, r)) != 0) return m < 0 ? -1 : VERDICT(out, 0, "well-known-path");
    /* ai_robots.check skips /robots.txt; step 1 has already accepted it */
    size_t ulen, bn;
    const char *ua = header(r, "user-agent", &ulen);
    const char *brands = header(r, "sec-ch-ua", &bn);
    int prio = alt_scan_all(sh, md, ua, ulen, PRIO_NO_UA);
    if (prio < 0) return -1;
    if (prio > PRIO_HL(sh, 0) && bn) {
        int b = alt_scan(&sh->brands_alt, md, brands, bn, PRIO_HL(sh, 0));
        if (b < 0) return -1;
        if (b < prio) prio = b;
    }
    if (prio == PRIO_NO_UA) return VERDICT(out, 1, "no-user-agent");
    if (prio < PRIO_HL(sh, 0)) {
        const ai_cat *c = &sh->cats[prio - PRIO_AI(sh, 0)];
        return verdict(out, 1, c->reason, c->rlen);
    }
    if (prio < PRIO_REJECT(sh, 0)) {
        const char *why = HL_REASON[prio - PRIO_HL(sh, 0)];
        return verdict(out, 1, why, strlen(why));
    }
    if (prio < PRIO_OTHER(sh)) {
        const crawl_tag *t = sh->reject[prio - PRIO_REJECT(sh, 0)];
        return verdict(out, 1, t->reason, t->rlen);
    }
    if (prio == PRIO_OTHER(sh)) return verdict(out, 0, NULL, 0);
    if ((m = check_headers(sh, md, r, ua, ulen, out)) != 0) return m < 0 ? -1 : 0;
    return verdict(out, 0, NULL, 0);
}

/* ---------------------------------------------------------------- API */

int peer_pcre2_classify(void *state, const bh_request *r, bh_verdict *out)
{
    peer_pcre2 *p = state;
    if (p->sh->alt)
        return p->sh->program == PROG_DEFAULT ? classify_default_alt(p, r, out)
                                              : classify_ai_robots_alt(p, r, out);
    return p->sh->program == PROG_DEFAULT ? classify_default(p, r, out)
                                          : classify_ai_robots(p, r, out);
}

static peer_pcre2 *with_match_data(shared *sh, int owner)
{
    peer_pcre2 *p = xcalloc(1, sizeof *p);
    p->sh = sh;
    p->owner = owner;
    p->md = pcre2_match_data_create(sh->max_pairs, NULL);
    if (!p->md) die("peer_pcre2: out of memory");
    return p;
}

peer_pcre2 *peer_pcre2_new(const char *peerdata_path, const char *program, int alternation)
{
    shared *sh = xcalloc(1, sizeof *sh);
    sh->alt = alternation != 0;
    if (strcmp(program, "ai_robots") == 0) sh->program = PROG_AI_ROBOTS;
    else if (strcmp(program, "default") == 0) sh->program = PROG_DEFAULT;
    else die("peer_pcre2: unknown program '%s' (ai_robots or default)", program);
    sh->max_pairs = 1;
    load(sh, peerdata_path);
    return with_match_data(sh, 1);
}

void *peer_pcre2_clone(void *state)
{
    return with_match_data(((peer_pcre2 *)state)->sh, 0);
}

void peer_pcre2_free(peer_pcre2 *p)
{
    if (!p) return;
    pcre2_match_data_free(p->md);
    if (p->owner) {
        shared *sh = p->sh;
        for (size_t i = 0; i < sh->ncats; i++) {
            ai_cat *c = &sh->cats[i];
            for (size_t k = 0; k < c->nnames; k++) rx_free(&c->names[k]);
            if (c->has_token) rx_free(&c->token);
            free(c->names);
            free(c->name);
            free(c->reason);
        }
        for (size_t i = 0; i < sh->ntags; i++) {
            crawl_tag *t = &sh->tags[i];
            for (size_t k = 0; k < t->npats; k++) rx_free(&t->pats[k]);
            free(t->pats);
            free(t->name);
            free(t->reason);
        }
        rx *fixed[] = {&sh->keep_working, &sh->no_ua,       &sh->chrome_re,
                       &sh->firefox_re,    &sh->safari_re,   &sh->proto_re,
                       &sh->platform_re,   &sh->brands_alt};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (fixed[i]->re) rx_free(fixed[i]);
        for (size_t k = 0; k < sh->nua_alts; k++) rx_free(&sh->ua_alts[k]);
        free(sh->ua_alts);
        free(sh->cats);
        free(sh->tags);
        free(sh->other);
        free(sh);
    }
    free(p);
}
