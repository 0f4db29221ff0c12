/*
 * bench.c: nanoseconds per classification of a compiled ruleset
 * (examples/main.clf) over a workload of real User-Agents, beside naive
 * PCRE2-JIT classifiers doing the same checks and, as a floor, one raw
 * Hyperscan scan of the User-Agent. A reporting program, not a test:
 * bench/run.py builds the inputs and runs it (see bench/README.md).
 *
 *   classify-bench RULES.bin UAS.txt AI_ROBOTS.clf [--seconds S] [--rounds R]
 *
 * RULES.bin     examples/main.clf compiled by classifyc
 * UAS.txt       the workload, one User-Agent per line
 * AI_ROBOTS.clf stdlib/ai_robots.clf: the PCRE2 peers and the Hyperscan
 *               floor read the 161 names of its `pub const SPECIFIC`, so
 *               they use exactly the set the rules file was compiled from
 *
 * Every method classifies the same request array, built once before any
 * timing (method GET, a rotating path, 5 or 11 headers). Before timing,
 * every request is classified by this project and by both PCRE2 peers and
 * the (verdict, reason) pairs must be identical; the run stops at the
 * first difference and prints that request.
 *
 * Two measurements per method, interleaved over R rounds so that a burst
 * of noise on the (shared) machine hits every method alike:
 *  - whole passes: clock_gettime(CLOCK_MONOTONIC) around a pass over the
 *    workload; ns/request of the pass = pass time / requests (a mean).
 *    Median and p99 over the passes.
 *  - single requests: clock_gettime(CLOCK_MONOTONIC) around every
 *    request; the cost of an empty timed interval (median of back-to-back
 *    reads, measured at start-up and printed, ~20-30 ns on kvm-clock) is
 *    subtracted from each sample. Median and p99 over all samples.
 *    clock_gettime rather than rdtsc: portable and already in ns; in this
 *    VM a serialized rdtscp read (about 34 ns) was not much cheaper than a
 *    vDSO clock_gettime (about 42 ns in a loop).
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <errno.h>
#include <hs.h>
#include <math.h>
#include <pcre2.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "util.h"

/* ------------------------------------------------------------------ util */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (p in (0,1]) of a sorted array. */
static size_t rank(size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return k == 0 ? 0 : k - 1;
}

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* ------------------------------------------------------------- requests */

typedef struct header {
    const char *name, *value;
    size_t nlen, vlen;
} header;

#define MAX_HEADERS 16

typedef struct request {
    const char *method, *path, *query;
    size_t mlen, plen, qlen;
    header h[MAX_HEADERS];
    int nh;
    const char *ua; /* the User-Agent value (also one of h[]) */
    size_t ualen;
    int browser;    /* got the browser header set */
} request;

/* Paths, rotated over the workload (request i gets PATHS[i % NPATHS]). Two
 * are scanner probes, one is /robots.txt (exempt from the AI rule). */
static const struct {
    const char *path, *query;
} PATHS[] = {
    {"/", ""},
    {"/blog/2024/06/how-we-cache-at-the-edge", ""},
    {"/static/css/site.3f9a1c.css", ""},
    {"/search", "q=trail+running+shoes&page=2"},
    {"/robots.txt", ""},
    {"/products/4711", "ref=home&utm_source=newsletter"},
    {"/wp-admin/", ""},
    {"/images/logo@2x.png", ""},
    {"/.env", ""},
    {"/api/v1/items", "limit=20&offset=40"},
    {"/feed.xml", ""},
    {"/about/team", ""},
};
#define NPATHS (sizeof PATHS / sizeof PATHS[0])

#define H(n, v) {n, v, sizeof n - 1, sizeof v - 1}
static const header BROWSER_HEADERS[] = {
    H("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"),
    H("Accept-Language", "en-US,en;q=0.9,de;q=0.7"),
    H("Accept-Encoding", "gzip, deflate, br"),
    H("Connection", "keep-alive"),
    H("Upgrade-Insecure-Requests", "1"),
    H("Sec-Fetch-Dest", "document"),
    H("Sec-Fetch-Mode", "navigate"),
    H("Sec-Fetch-Site", "none"),
    H("Sec-Fetch-User", "?1"),
};
static const header CLIENT_HEADERS[] = {
    H("Accept", "*/*"),
    H("Accept-Encoding", "gzip"),
    H("Connection", "keep-alive"),
};
#undef H

static int contains_ci(const char *s, size_t n, const char *w)
{
    size_t wn = strlen(w);
    for (size_t i = 0; i + wn <= n; i++)
        if (strncasecmp(s + i, w, wn) == 0) return 1;
    return 0;
}

/* "Browser-looking": a Mozilla/5.0 UA that names no bot. Such requests get
 * a browser's header set (Accept-Language, Sec-Fetch-*), the rest a
 * client's. Only the header count and mix depend on it. */
static int browser_looking(const char *ua, size_t n)
{
    return n >= 13 && memcmp(ua, "Mozilla/5.0 (", 13) == 0 && !contains_ci(ua, n, "bot") &&
           !contains_ci(ua, n, "spider") && !contains_ci(ua, n, "crawl") &&
           !contains_ci(ua, n, "http");
}

static void add_hdr(request *r, const char *n, size_t nl, const char *v, size_t vl)
{
    if (r->nh >= MAX_HEADERS) die("too many headers");
    r->h[r->nh++] = (header){n, v, nl, vl};
}

static void build_request(request *r, size_t i, const char *ua, size_t ualen)
{
    memset(r, 0, sizeof *r);
    r->method = "GET";
    r->mlen = 3;
    r->path = PATHS[i % NPATHS].path;
    r->plen = strlen(r->path);
    r->query = PATHS[i % NPATHS].query;
    r->qlen = strlen(r->query);
    r->ua = ua;
    r->ualen = ualen;
    r->browser = browser_looking(ua, ualen);
    add_hdr(r, "Host", 4, "www.example.org", 15);
    add_hdr(r, "User-Agent", 10, ua, ualen);
    const header *hs = r->browser ? BROWSER_HEADERS : CLIENT_HEADERS;
    size_t nhs = r->browser ? sizeof BROWSER_HEADERS / sizeof *hs
                            : sizeof CLIENT_HEADERS / sizeof *hs;
    for (size_t k = 0; k < nhs; k++) add_hdr(r, hs[k].name, hs[k].nlen, hs[k].value, hs[k].vlen);
}

/* ---------------------------------------------------------------- names */

/* The string literals of `pub const SPECIFIC = [ ... ]` in ai_robots.clf
 * (the names examples/main.clf matches as whole words).
 * The generator writes one literal per line with the escapes \" \\ \n \t
 * \r and \xNN (stdlib/README.md). */
static char **read_agent_names(const char *path, size_t *count)
{
    size_t len;
    char *src = read_file(path, &len);
    const char *p = strstr(src, "\npub const SPECIFIC"); /* the declaration, not a comment */
    if (!p) die("%s: no `pub const SPECIFIC` declaration", path);
    p = strchr(p, '[');
    if (!p) die("%s: no '[' after `pub const SPECIFIC`", path);
    p++;
    char **names = NULL;
    size_t n = 0;
    for (;;) {
        while (*p && *p != '"' && *p != ']') {
            if (p[0] == '/' && p[1] == '/') { /* comment to end of line */
                while (*p && *p != '\n') p++;
            } else {
                p++;
            }
        }
        if (*p != '"') break;
        p++;
        char *out = xmalloc(strlen(p) + 1), *o = out;
        while (*p && *p != '"') {
            if (*p != '\\') { *o++ = *p++; continue; }
            p++;
            switch (*p) {
            case 'n': *o++ = '\n'; p++; break;
            case 't': *o++ = '\t'; p++; break;
            case 'r': *o++ = '\r'; p++; break;
            case 'x': {
                char hex[3] = {p[1], p[2], 0};
                if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]))
                    die("%s: bad \\x escape", path);
                *o++ = (char)strtol(hex, NULL, 16);
                p += 3;
                break;
            }
            case '\0': die("%s: unterminated string", path); break;
            default: *o++ = *p++; break; /* \" and \\ */
            }
        }
        if (*p != '"') die("%s: unterminated string", path);
        p++;
        *o = '\0';
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = out;
    }
    if (*p != ']' || n == 0) die("%s: could not read the SPECIFIC list", path);
    free(src);
    *count = n;
    return names;
}

/* ------------------------------------------------------------- verdicts */

enum reason { R_NONE, R_NO_UA, R_AI, R_PROBE, R_SCRIPTED, R_OTHER, R_COUNT };
static const char *const REASON_NAMES[R_COUNT] = {
    "(accept)", "no-user-agent", "ai-robots-txt", "probe", "scripted-client", "(other)"};

typedef struct result {
    int verdict;           /* 1 accept, 0 reject */
    int reason;            /* enum reason; R_NONE for accept */
    const void *reason_ptr; /* opaque, only fed to the sink */
} result;

static int reason_id(const char *s, size_t n)
{
    if (!s) return R_NONE;
    for (int r = R_NO_UA; r < R_OTHER; r++)
        if (strlen(REASON_NAMES[r]) == n && memcmp(REASON_NAMES[r], s, n) == 0) return r;
    return R_OTHER;
}

/* --------------------------------------------------- method: libclassify */

typedef struct project {
    clf_program *prog;
    clf_ctx *ctx;
} project;

/* What a server does per request: reset, request line, every header,
 * eval. The reason pointer is left opaque (no string compare) here;
 * verification maps it to an id. */
static int project_classify(void *state, const request *r, result *out)
{
    project *P = state;
    clf_ctx *ctx = P->ctx;
    clf_verdict v = {CLF_REJECT, NULL, 0};
    int st = 0;
    clf_ctx_reset(ctx);
    st |= clf_ctx_set_method(ctx, r->method, r->mlen);
    st |= clf_ctx_set_path(ctx, r->path, r->plen);
    st |= clf_ctx_set_query(ctx, r->query, r->qlen);
    for (int k = 0; k < r->nh; k++)
        st |= clf_ctx_add_header(ctx, r->h[k].name, r->h[k].nlen, r->h[k].value, r->h[k].vlen);
    st |= clf_eval(ctx, &v);
    out->verdict = v.verdict == CLF_ACCEPT;
    out->reason_ptr = v.reason;
    out->reason = R_COUNT; /* mapped to an id by project_result() only */
    return st;
}

static void project_result(const project *P, const request *r, result *out)
{
    clf_verdict v;
    clf_ctx_reset(P->ctx);
    clf_ctx_set_method(P->ctx, r->method, r->mlen);
    clf_ctx_set_path(P->ctx, r->path, r->plen);
    clf_ctx_set_query(P->ctx, r->query, r->qlen);
    for (int k = 0; k < r->nh; k++)
        if (clf_ctx_add_header(P->ctx, r->h[k].name, r->h[k].nlen, r->h[k].value, r->h[k].vlen))
            die("clf_ctx_add_header: %s", clf_ctx_errmsg(P->ctx));
    int st = clf_eval(P->ctx, &v);
    if (st != CLF_OK) die("clf_eval: %s: %s", clf_strerror(st), clf_ctx_errmsg(P->ctx));
    out->verdict = v.verdict == CLF_ACCEPT;
    out->reason = out->verdict ? (v.reason ? R_OTHER : R_NONE) : reason_id(v.reason, v.reason_len);
    out->reason_ptr = v.reason;
}

/* ---------------------------------------------------- method: PCRE2-JIT */

/* examples/main.clf, hand-translated. Keep in step with that file: the
 * verification pass fails if the two disagree on any request. */
static const char *const SCRIPTED_PREFIXES[] = {
    "python-requests/", "python-urllib/", "python-httpx/", "go-http-client/", "libwww-perl/"};
#define NSCRIPTED (sizeof SCRIPTED_PREFIXES / sizeof *SCRIPTED_PREFIXES)
static const char PROBE_RE[] = "(^|/)(wp-admin|xmlrpc\\.php|\\.env|\\.git)(/|$)";
/* AMBIGUOUS_AGENT_TOKEN and AMBIGUOUS_AGENT_ALONE, caseless. */
static const char AMBIG_TOKEN_RE[] = "\\b(Code|Cursor|LCC|Operator|Spider)\\/[0-9]";
static const char AMBIG_ALONE_RE[] = "^LCC\\b|[(;] *Spider *[;)]";

/* Two shapes of the same checks:
 *  - loop (the naive peer the target is measured against): one regex per
 *    AI name, tried in upstream order until one matches; one anchored
 *    regex per scripted-client prefix;
 *  - alternation (context): one `(?<!W)(?:n1|n2|...)(?!W)` for the names
 *    (W = [A-Za-z0-9_]) and one anchored `(?:p1|p2|...)` for the prefixes.
 * Both use the one probe regex and pcre2_match() (which runs the JIT code
 * when there is some) with one reused match_data. */
typedef struct peer {
    pcre2_code **names;
    size_t nnames;
    pcre2_code *ambig_token, *ambig_alone;
    pcre2_code *probe;
    pcre2_code **scripted;
    size_t nscripted;
    pcre2_match_data *md;
} peer;

typedef struct strbuf {
    char *p;
    size_t n, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) b->p = xrealloc(b->p, b->cap = (b->n + n + 1) * 2);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(strbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

/* A literal as PCRE2 pattern text: every byte outside [A-Za-z0-9_]
 * escaped (backslash + ASCII punctuation or space is always literal;
 * other bytes as \x{HH}). */
static void sb_literal(strbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char tmp[16];
        if (is_word(c)) {
            tmp[0] = (char)c;
            sb_add(b, tmp, 1);
        } else if (c >= 0x20 && c < 0x7f) {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            sb_add(b, tmp, 2);
        } else {
            snprintf(tmp, sizeof tmp, "\\x{%02x}", c);
            sb_str(b, tmp);
        }
    }
}

/* Whole word exactly as the library defines it: no [A-Za-z0-9_] byte right
 * before or after the name. (For names that begin and end with a word
 * character, as all upstream names do, this is `\bNAME\b`; the two
 * forms ran equally fast in the loop here.) */
#define NOT_AFTER_WORD "(?<![A-Za-z0-9_])"
#define NOT_BEFORE_WORD "(?![A-Za-z0-9_])"

static pcre2_code *pcre_compile_jit(const char *pattern, uint32_t opts)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        die("pcre2_compile(%.80s...) at %zu: %s", pattern, (size_t)eo, (char *)msg);
    }
    int rc = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    if (rc != 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        die("pcre2_jit_compile(%.80s...): %s", pattern, (char *)msg);
    }
    return re;
}

static void peer_init(peer *P, char **names, size_t n, int alternation)
{
    strbuf b = {0};
    P->nnames = alternation ? 1 : n;
    P->names = xmalloc(P->nnames * sizeof *P->names);
    for (size_t i = 0; i < n; i++)
        if (!names[i][0]) die("empty AI agent name");
    if (alternation) {
        /* The boundaries outside the group: with one \b pair per
         * alternative PCRE2 tries all 161 alternatives at every offset
         * (about 18x slower here). Backtracking into the group keeps the
         * meaning "some name occurs as a whole word". */
        sb_str(&b, NOT_AFTER_WORD "(?:");
        for (size_t i = 0; i < n; i++) {
            if (i) sb_str(&b, "|");
            sb_literal(&b, names[i]);
        }
        sb_str(&b, ")" NOT_BEFORE_WORD);
        P->names[0] = pcre_compile_jit(b.p, PCRE2_CASELESS);
    } else {
        for (size_t i = 0; i < n; i++) {
            b.n = 0;
            sb_str(&b, NOT_AFTER_WORD);
            sb_literal(&b, names[i]);
            sb_str(&b, NOT_BEFORE_WORD);
            P->names[i] = pcre_compile_jit(b.p, PCRE2_CASELESS);
        }
    }
    P->ambig_token = pcre_compile_jit(AMBIG_TOKEN_RE, PCRE2_CASELESS);
    P->ambig_alone = pcre_compile_jit(AMBIG_ALONE_RE, PCRE2_CASELESS);
    P->probe = pcre_compile_jit(PROBE_RE, PCRE2_CASELESS);
    P->nscripted = alternation ? 1 : NSCRIPTED;
    P->scripted = xmalloc(P->nscripted * sizeof *P->scripted);
    b.n = 0;
    if (alternation) sb_str(&b, "(?:");
    for (size_t i = 0; i < NSCRIPTED; i++) {
        if (alternation && i) sb_str(&b, "|");
        sb_literal(&b, SCRIPTED_PREFIXES[i]);
        if (!alternation) {
            P->scripted[i] = pcre_compile_jit(b.p, PCRE2_CASELESS | PCRE2_ANCHORED);
            b.n = 0;
        }
    }
    if (alternation) {
        sb_str(&b, ")");
        P->scripted[0] = pcre_compile_jit(b.p, PCRE2_CASELESS | PCRE2_ANCHORED);
    }
    free(b.p);
    P->md = pcre2_match_data_create(4, NULL);
    if (!P->md) die("pcre2_match_data_create failed");
}

static void peer_free(peer *P)
{
    for (size_t i = 0; i < P->nnames; i++) pcre2_code_free(P->names[i]);
    for (size_t i = 0; i < P->nscripted; i++) pcre2_code_free(P->scripted[i]);
    pcre2_code_free(P->probe);
    pcre2_code_free(P->ambig_token);
    pcre2_code_free(P->ambig_alone);
    pcre2_match_data_free(P->md);
    free(P->names);
    free(P->scripted);
}

static int peer_match(const peer *P, const pcre2_code *re, const char *s, size_t n)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, P->md, NULL);
    if (rc >= 0) return 1;
    if (rc != PCRE2_ERROR_NOMATCH) die("pcre2_match failed: %d", rc);
    return 0;
}

static int peer_any_name(const peer *P, const char *ua, size_t n)
{
    for (size_t i = 0; i < P->nnames; i++)
        if (peer_match(P, P->names[i], ua, n)) return 1;
    return peer_match(P, P->ambig_token, ua, n) || peer_match(P, P->ambig_alone, ua, n);
}

/* The rules of examples/main.clf in order. The naive server finds the
 * User-Agent among its headers itself (first one; the workload has one).
 * Rule 2 tests the cheap path condition before the 163 regexes (the .clf
 * evaluates the name set first): that favours the peer on /robots.txt. */
static int peer_classify(void *state, const request *r, result *out)
{
    const peer *P = state;
    const char *ua = "";
    size_t ualen = 0;
    for (int k = 0; k < r->nh; k++)
        if (r->h[k].nlen == 10 && strncasecmp(r->h[k].name, "user-agent", 10) == 0) {
            ua = r->h[k].value;
            ualen = r->h[k].vlen;
            break;
        }
    out->verdict = 0;
    out->reason_ptr = NULL;
    if (ualen == 0) {
        out->reason = R_NO_UA;
        return 0;
    }
    if (!(r->plen == 11 && memcmp(r->path, "/robots.txt", 11) == 0) && peer_any_name(P, ua, ualen)) {
        out->reason = R_AI;
        return 0;
    }
    if (peer_match(P, P->probe, r->path, r->plen)) {
        out->reason = R_PROBE;
        return 0;
    }
    for (size_t i = 0; i < P->nscripted; i++)
        if (peer_match(P, P->scripted[i], ua, ualen)) {
            out->reason = R_SCRIPTED;
            return 0;
        }
    out->verdict = 1;
    out->reason = R_NONE;
    return 0;
}

/* ------------------------------------------- method: Hyperscan UA floor */

typedef struct floor_hs {
    hs_database_t *db;
    hs_scratch_t *scratch;
    size_t db_size;
} floor_hs;

static int on_first(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ud)
{
    (void)id; (void)from; (void)to; (void)flags;
    *(int *)ud = 1;
    return 1; /* stop at the first match */
}

/* One block-mode database of the same names, `\bNAME\b` with \xHH escapes
 * (as the .clf compiler writes them; `\B` on a side where a name has a
 * non-word byte, which no upstream name has), CASELESS | SINGLEMATCH,
 * tuned for this CPU (platform NULL; libclassify stores generic-tuned
 * databases, which ran as fast here). */
static void floor_init(floor_hs *F, char **names, size_t n)
{
    const char **exprs = xmalloc((n + 2) * sizeof *exprs);
    unsigned *flags = xmalloc((n + 2) * sizeof *flags), *ids = xmalloc((n + 2) * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        char *pat = xmalloc(nl * 4 + 64), *o = pat;
        o += sprintf(o, "%s", is_word((unsigned char)names[i][0]) ? "\\b" : "\\B");
        for (size_t k = 0; k < nl; k++) {
            unsigned char c = (unsigned char)names[i][k];
            if (is_word(c)) *o++ = (char)c;
            else o += sprintf(o, "\\x%02x", c);
        }
        sprintf(o, "%s", is_word((unsigned char)names[i][nl - 1]) ? "\\b" : "\\B");
        exprs[i] = pat;
        flags[i] = HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH;
        ids[i] = (unsigned)i;
    }
    /* The two regexes for the ambiguous names, as in examples/main.clf. */
    const char *const extra[2] = {AMBIG_TOKEN_RE, AMBIG_ALONE_RE};
    for (size_t i = 0; i < 2; i++) {
        exprs[n + i] = strcpy(xmalloc(strlen(extra[i]) + 1), extra[i]);
        flags[n + i] = HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH;
        ids[n + i] = (unsigned)(n + i);
    }
    n += 2;
    hs_compile_error_t *ce = NULL;
    if (hs_compile_multi(exprs, flags, ids, (unsigned)n, HS_MODE_BLOCK, NULL, &F->db, &ce) !=
        HS_SUCCESS)
        die("hs_compile_multi: %s", ce && ce->message ? ce->message : "failed");
    F->scratch = NULL;
    if (hs_alloc_scratch(F->db, &F->scratch) != HS_SUCCESS) die("hs_alloc_scratch failed");
    hs_database_size(F->db, &F->db_size);
    for (size_t i = 0; i < n; i++) free((void *)exprs[i]);
    free(exprs);
    free(flags);
    free(ids);
}

static int floor_hit(const floor_hs *F, const char *ua, size_t n)
{
    int hit = 0;
    hs_error_t rc = hs_scan(F->db, ua, (unsigned)n, 0, F->scratch, on_first, &hit);
    if (rc != HS_SUCCESS && rc != HS_SCAN_TERMINATED) die("hs_scan failed: %d", rc);
    return hit;
}

/* Only the UA scan: no request set-up, no other rule. */
static int floor_classify(void *state, const request *r, result *out)
{
    int hit = 0;
    const floor_hs *F = state;
    hs_error_t rc = hs_scan(F->db, r->ua, (unsigned)r->ualen, 0, F->scratch, on_first, &hit);
    out->verdict = !hit;
    out->reason = hit ? R_AI : R_NONE;
    out->reason_ptr = NULL;
    return rc != HS_SUCCESS && rc != HS_SCAN_TERMINATED;
}

/* ----------------------------------------------------------- the timing */

typedef int (*classify_fn)(void *state, const request *r, result *out);

typedef struct method {
    const char *name, *what;
    classify_fn fn;
    void *state;
    double *pass_ns;   /* per pass: ns/request */
    size_t npass, cap_pass;
    /* single requests, timer overhead subtracted: a 1-ns histogram up to
     * HIST_NS, the rarer longer samples kept as they are */
    uint64_t *hist, *over, *pass_buf;
    size_t nover, cap_over, nreq;
    double round_median[64];
    int nrounds;
    uint64_t requests_timed;
} method;

static volatile uintptr_t g_sink;

static void one_pass(method *m, const request *reqs, size_t n)
{
    result res;
    uintptr_t acc = 0;
    int st = 0;
    for (size_t i = 0; i < n; i++) {
        st |= m->fn(m->state, &reqs[i], &res);
        acc += (uintptr_t)res.verdict + (uintptr_t)res.reason_ptr;
    }
    if (st) die("%s: a classification failed during timing", m->name);
    g_sink += acc;
}

/* Batch passes for `budget` seconds (at least one pass). */
static void time_batches(method *m, const request *reqs, size_t n, double budget)
{
    uint64_t end = now_ns() + (uint64_t)(budget * 1e9);
    size_t first = m->npass;
    do {
        uint64_t t0 = now_ns();
        one_pass(m, reqs, n);
        uint64_t t1 = now_ns();
        if (m->npass == m->cap_pass)
            m->pass_ns = xrealloc(m->pass_ns, (m->cap_pass = m->cap_pass * 2 + 64) * sizeof *m->pass_ns);
        m->pass_ns[m->npass++] = (double)(t1 - t0) / (double)n;
        m->requests_timed += n;
    } while (now_ns() < end);
    /* this round's median, for the spread across rounds */
    size_t k = m->npass - first;
    double *tmp = xmalloc(k * sizeof *tmp);
    memcpy(tmp, m->pass_ns + first, k * sizeof *tmp);
    qsort(tmp, k, sizeof *tmp, cmp_dbl);
    if (m->nrounds < 64) m->round_median[m->nrounds++] = tmp[rank(k, 0.5)];
    free(tmp);
}

#define HIST_NS 1000000 /* 1 ms */

/* Whole passes with every request timed alone, for `budget` seconds. A
 * pass's samples go to a buffer, folded into the histogram between
 * passes. */
static void time_requests(method *m, const request *reqs, size_t n, double budget, uint64_t overhead)
{
    uint64_t end = now_ns() + (uint64_t)(budget * 1e9);
    result res;
    uintptr_t acc = 0;
    int st = 0;
    if (!m->hist) {
        m->hist = calloc(HIST_NS, sizeof *m->hist);
        if (!m->hist) die("out of memory");
        m->pass_buf = xmalloc(n * sizeof *m->pass_buf);
    }
    do {
        uint64_t *out = m->pass_buf;
        for (size_t i = 0; i < n; i++) {
            uint64_t t0 = now_ns();
            st |= m->fn(m->state, &reqs[i], &res);
            uint64_t t1 = now_ns();
            acc += (uintptr_t)res.verdict + (uintptr_t)res.reason_ptr;
            uint64_t d = t1 - t0;
            out[i] = d > overhead ? d - overhead : 0;
        }
        for (size_t i = 0; i < n; i++) {
            if (out[i] < HIST_NS) {
                m->hist[out[i]]++;
                continue;
            }
            if (m->nover == m->cap_over)
                m->over = xrealloc(m->over, (m->cap_over = m->cap_over * 2 + 256) * sizeof *m->over);
            m->over[m->nover++] = out[i];
        }
        m->nreq += n;
    } while (now_ns() < end);
    if (st) die("%s: a classification failed during timing", m->name);
    g_sink += acc;
}

/* The nearest-rank percentile p of the single-request samples. */
static uint64_t req_percentile(method *m, double p)
{
    size_t want = rank(m->nreq, p), seen = 0;
    for (uint64_t v = 0; v < HIST_NS; v++) {
        seen += m->hist[v];
        if (seen > want) return v;
    }
    qsort(m->over, m->nover, sizeof *m->over, cmp_u64);
    return m->over[want - seen];
}

/* Median of back-to-back clock_gettime pairs: what one timed interval
 * costs with nothing in it. */
static uint64_t timer_overhead(uint64_t *min_out)
{
    enum { N = 200000 };
    uint64_t *d = xmalloc(N * sizeof *d);
    for (int i = 0; i < N; i++) {
        uint64_t a = now_ns();
        uint64_t b = now_ns();
        d[i] = b - a;
    }
    qsort(d, N, sizeof *d, cmp_u64);
    uint64_t med = d[N / 2];
    *min_out = d[0];
    free(d);
    return med;
}

/* ------------------------------------------------------------ reporting */

static void print_machine(void)
{
    char model[256] = "?", mhz[64] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[1024];
        int got_model = 0, got_mhz = 0;
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            if (!c) continue;
            char *v = c + 1;
            while (*v == ' ') v++;
            v[strcspn(v, "\n")] = '\0';
            if (!got_model && strncmp(line, "model name", 10) == 0) {
                snprintf(model, sizeof model, "%s", v);
                got_model = 1;
            } else if (!got_mhz && strncmp(line, "cpu MHz", 7) == 0) {
                snprintf(mhz, sizeof mhz, "%s", v);
                got_mhz = 1;
            }
        }
        fclose(f);
    }
    char clocksrc[64] = "?";
    f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (fgets(clocksrc, sizeof clocksrc, f)) clocksrc[strcspn(clocksrc, "\n")] = '\0';
        fclose(f);
    }
    char load[128] = "?";
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(load, sizeof load, f)) load[strcspn(load, "\n")] = '\0';
        fclose(f);
    }
    struct utsname u;
    if (uname(&u) != 0) memset(&u, 0, sizeof u);

    char aff[256] = "";
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        size_t o = 0;
        for (int c = 0; c < CPU_SETSIZE && o + 8 < sizeof aff; c++)
            if (CPU_ISSET(c, &set)) o += (size_t)snprintf(aff + o, sizeof aff - o, "%s%d", o ? "," : "", c);
    }
    char pver[64] = "?", jit[128] = "?";
    pcre2_config(PCRE2_CONFIG_VERSION, pver);
    uint32_t have_jit = 0;
    pcre2_config(PCRE2_CONFIG_JIT, &have_jit);
    if (have_jit) pcre2_config(PCRE2_CONFIG_JITTARGET, jit);
    else snprintf(jit, sizeof jit, "no JIT");

    printf("machine: %s, nproc %ld, cpu MHz %s, %s %s %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
           mhz, u.sysname, u.release, u.machine);
    printf("         clocksource %s, running on CPU(s) %s, loadavg %s\n", clocksrc, aff, load);
#if defined(__clang__)
    const char *cc = "clang";
#elif defined(__GNUC__)
    const char *cc = "gcc";
#else
    const char *cc = "cc";
#endif
#ifdef __OPTIMIZE__
    const char *opt = "optimized";
#else
    const char *opt = "NOT optimized";
#endif
    printf("versions: libclassify %s, PCRE2 %s (JIT %s), Hyperscan %s, bench built by %s %s (%s)\n",
           clf_version_string(), pver, jit, hs_version(), cc, __VERSION__, opt);
}

static void usage(void)
{
    fprintf(stderr, "usage: classify-bench RULES.bin UAS.txt AI_ROBOTS.clf [--seconds S] [--rounds R]\n"
                    "  --seconds S  batch-timing budget per method (per-request timing: S/2); default 4\n"
                    "  --rounds R   rounds the budget is split into, methods interleaved; default 5\n");
}

static const char *verdict_str(const result *r)
{
    static char buf[64];
    if (r->verdict && r->reason == R_NONE) return "accept";
    snprintf(buf, sizeof buf, "%s %s", r->verdict ? "accept" : "reject", REASON_NAMES[r->reason]);
    return buf;
}

int main(int argc, char **argv)
{
    bench_prog = "classify-bench";
    double seconds = 4.0;
    int rounds = 5;
    const char *pos[3];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
            if (!(seconds > 0)) die("--seconds wants a positive number");
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
            if (rounds < 1 || rounds > 64) die("--rounds wants 1..64");
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            usage();
            die("unknown option %s", argv[i]);
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            usage();
            return 2;
        }
    }
    if (npos != 3) {
        usage();
        return 2;
    }

    /* ---- the workload: one request per line, built once */
    size_t wlen;
    char *wl = read_file(pos[1], &wlen);
    size_t n = 0;
    for (size_t i = 0; i < wlen; i++) n += wl[i] == '\n';
    if (wlen && wl[wlen - 1] != '\n') n++;
    if (n == 0) die("%s: no User-Agents", pos[1]);
    request *reqs = xmalloc(n * sizeof *reqs);
    size_t *lens = xmalloc(n * sizeof *lens);
    size_t nr = 0, total_ua = 0, nbrowser = 0, nhdrs = 0, nrobots = 0;
    for (char *line = wl; line < wl + wlen;) {
        char *nl = memchr(line, '\n', (size_t)(wl + wlen - line));
        size_t len = nl ? (size_t)(nl - line) : (size_t)(wl + wlen - line);
        if (memchr(line, '\r', len)) die("%s: CR in line %zu", pos[1], nr + 1);
        build_request(&reqs[nr], nr, line, len);
        total_ua += len;
        lens[nr] = len;
        nbrowser += (size_t)reqs[nr].browser;
        nhdrs += (size_t)reqs[nr].nh;
        nrobots += reqs[nr].plen == 11 && memcmp(reqs[nr].path, "/robots.txt", 11) == 0;
        nr++;
        line += len + 1;
    }
    n = nr;
    qsort(lens, n, sizeof *lens, cmp_u64);

    /* ---- this project */
    size_t blen;
    char *bin = read_file(pos[0], &blen);
    project P;
    char err[CLF_ERRMSG_SIZE];
    uint64_t t0 = now_ns();
    int st = clf_program_load(bin, blen, NULL, &P.prog, err, sizeof err);
    if (st) die("%s: %s", pos[0], err);
    double load_ms = (double)(now_ns() - t0) / 1e6;
    free(bin);
    st = clf_ctx_new(P.prog, &P.ctx, err, sizeof err);
    if (st) die("clf_ctx_new: %s", err);

    /* ---- peers */
    size_t nnames;
    char **names = read_agent_names(pos[2], &nnames);
    peer Q, QA;
    t0 = now_ns();
    peer_init(&Q, names, nnames, 0);
    double pcre_loop_ms = (double)(now_ns() - t0) / 1e6;
    t0 = now_ns();
    peer_init(&QA, names, nnames, 1);
    double pcre_alt_ms = (double)(now_ns() - t0) / 1e6;
    floor_hs F;
    t0 = now_ns();
    floor_init(&F, names, nnames);
    double hs_compile_ms = (double)(now_ns() - t0) / 1e6;

    print_machine();
    printf("workload: %zu requests (%s); UA bytes min %zu, median %zu, max %zu, mean %.1f\n"
           "          GET, %zu paths rotated (%zu requests to /robots.txt); %zu browser-looking UAs "
           "get %d headers, %zu others %d (mean %.2f)\n",
           n, pos[1], lens[0], lens[rank(n, 0.5)], lens[n - 1], (double)total_ua / (double)n,
           (size_t)NPATHS, nrobots, nbrowser, 2 + (int)(sizeof BROWSER_HEADERS / sizeof *BROWSER_HEADERS),
           n - nbrowser, 2 + (int)(sizeof CLIENT_HEADERS / sizeof *CLIENT_HEADERS),
           (double)nhdrs / (double)n);
    printf("setup:    rules %s loaded in %.1f ms; %zu AI names read from %s\n"
           "          PCRE2 loop: %zu+1+%zu regexes, compile+JIT %.1f ms; PCRE2 alternation: 1+1+1, "
           "%.1f ms;\n          Hyperscan floor: %zu B database, compile %.1f ms\n",
           pos[0], load_ms, nnames, pos[2], nnames, (size_t)NSCRIPTED, pcre_loop_ms, pcre_alt_ms,
           F.db_size, hs_compile_ms);

    /* ---- verification: identical (verdict, reason) on every request */
    size_t count[R_COUNT] = {0}, floor_hits = 0;
    for (size_t i = 0; i < n; i++) {
        result a, b, c;
        project_result(&P, &reqs[i], &a);
        peer_classify(&Q, &reqs[i], &b);
        peer_classify(&QA, &reqs[i], &c);
        if (a.verdict != b.verdict || a.reason != b.reason || b.verdict != c.verdict ||
            b.reason != c.reason) {
            fprintf(stderr, "classify-bench: MISMATCH on request %zu of %zu; nothing was timed\n"
                            "  path: %.*s\n  UA:   %.*s\n",
                    i + 1, n, (int)reqs[i].plen, reqs[i].path, (int)reqs[i].ualen, reqs[i].ua);
            fprintf(stderr, "  libclassify:       %s\n", verdict_str(&a));
            fprintf(stderr, "  PCRE2 loop:        %s\n", verdict_str(&b));
            fprintf(stderr, "  PCRE2 alternation: %s\n", verdict_str(&c));
            return 1;
        }
        count[a.reason]++;
        int h1 = floor_hit(&F, reqs[i].ua, reqs[i].ualen);
        int h2 = peer_any_name(&Q, reqs[i].ua, reqs[i].ualen);
        if (h1 != h2) {
            fprintf(stderr,
                    "classify-bench: MISMATCH between the Hyperscan floor (%d) and the PCRE2 name "
                    "loop (%d); nothing was timed\n  UA: %.*s\n",
                    h1, h2, (int)reqs[i].ualen, reqs[i].ua);
            return 1;
        }
        floor_hits += (size_t)h1;
    }
    printf("verified: libclassify, the PCRE2 loop and the PCRE2 alternation give the same (verdict, "
           "reason)\n          on all %zu requests; the Hyperscan floor and the PCRE2 name loop agree "
           "on all %zu UAs (%zu contain an AI name)\n", n, n, floor_hits);
    printf("verdicts: accept %zu", count[R_NONE]);
    for (int r = R_NO_UA; r < R_COUNT; r++)
        if (r != R_OTHER || count[r]) printf(", %s %zu", REASON_NAMES[r], count[r]);
    printf(" (rejected %zu of %zu)\n", n - count[R_NONE], n);

    /* ---- timing */
    uint64_t tmin;
    uint64_t overhead = timer_overhead(&tmin);
    printf("timer:    clock_gettime(CLOCK_MONOTONIC); an empty timed interval costs %llu ns (median; "
           "min %llu),\n          subtracted from every single-request sample\n",
           (unsigned long long)overhead, (unsigned long long)tmin);

    method M[] = {
        {.name = "libclassify", .what = "reset + method/path/query + every header + clf_eval",
         .fn = project_classify, .state = &P},
        {.name = "PCRE2-JIT loop", .what = "the same rules: 161 name regexes + 2 in a loop, probe regex, "
                                           "5 anchored prefix regexes",
         .fn = peer_classify, .state = &Q},
        {.name = "PCRE2-JIT alternation", .what = "the same rules: one name alternation, probe "
                                                  "regex, one anchored prefix alternation",
         .fn = peer_classify, .state = &QA},
        {.name = "Hyperscan UA floor", .what = "one hs_scan of the UA against the 161 names + 2 regexes; no "
                                               "request set-up, no other rule",
         .fn = floor_classify, .state = &F},
    };
    const int NM = (int)(sizeof M / sizeof *M);
    for (int k = 0; k < NM; k++) one_pass(&M[k], reqs, n); /* warm-up */
    double per_round = seconds / rounds;
    uint64_t tstart = now_ns();
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NM; k++) {
            time_batches(&M[k], reqs, n, per_round);
            time_requests(&M[k], reqs, n, per_round / 2, overhead);
        }
    double wall = (double)(now_ns() - tstart) / 1e9;
    printf("timing:   %d rounds x (%.2f s of whole passes + %.2f s of single requests) per method, "
           "methods interleaved;\n          %.1f s in all\n\n",
           rounds, per_round, per_round / 2, wall);

    /* ---- results */
    double pass50[8], pass99[8], req50[8], req99[8];
    printf("| method | ns/req, median pass | ns/req, p99 pass | round medians | passes "
           "| single request median ns | single request p99 ns | vs libclassify |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < NM; k++) {
        method *m = &M[k];
        qsort(m->pass_ns, m->npass, sizeof *m->pass_ns, cmp_dbl);
        pass50[k] = m->pass_ns[rank(m->npass, 0.5)];
        pass99[k] = m->pass_ns[rank(m->npass, 0.99)];
        req50[k] = (double)req_percentile(m, 0.5);
        req99[k] = (double)req_percentile(m, 0.99);
        double rmin = m->round_median[0], rmax = m->round_median[0];
        for (int r = 1; r < m->nrounds; r++) {
            if (m->round_median[r] < rmin) rmin = m->round_median[r];
            if (m->round_median[r] > rmax) rmax = m->round_median[r];
        }
        printf("| %s | %.1f | %.1f | %.1f-%.1f | %zu | %.0f | %.0f | %.2fx |\n", m->name, pass50[k],
               pass99[k], rmin, rmax, m->npass, req50[k], req99[k], pass50[k] / pass50[0]);
    }
    printf("\nns/req = time of one whole pass over the %zu requests / %zu (a mean); median and p99 over "
           "the passes.\nsingle request = each request timed alone (whole passes of them), timer cost "
           "subtracted;\n                 median and p99 over all those samples.\nvs libclassify = "
           "ns/req (median pass) of the method / that of libclassify.\n",
           n, n);
    for (int k = 0; k < NM; k++)
        printf("  %-22s %s\n  %-22s (%zu single-request samples)\n", M[k].name, M[k].what, "",
               M[k].nreq);

    printf("\ntarget:   median under 1 us per request: %s (median pass %.1f ns, single-request median "
           "%.0f ns)\n          at least 20x faster than the PCRE2 loop: %s (%.1fx by median pass, "
           "%.1fx by single-request median)\n",
           pass50[0] < 1000 && req50[0] < 1000 ? "MET" : "MISSED", pass50[0], req50[0],
           pass50[1] / pass50[0] >= 20 && req50[1] / req50[0] >= 20 ? "MET" : "MISSED",
           pass50[1] / pass50[0], req50[1] / req50[0]);

    for (int k = 0; k < NM; k++) {
        free(M[k].pass_ns);
        free(M[k].hist);
        free(M[k].over);
        free(M[k].pass_buf);
    }
    clf_ctx_free(P.ctx);
    clf_program_free(P.prog);
    peer_free(&Q);
    peer_free(&QA);
    for (size_t i = 0; i < nnames; i++) free(names[i]);
    free(names);
    hs_free_scratch(F.scratch);
    hs_free_database(F.db);
    free(reqs);
    free(lens);
    free(wl);
    return 0;
}
