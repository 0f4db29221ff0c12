/*
 * test_alloc.c: memory discipline, with a counting allocator (TAP).
 *
 *   1. Classifying allocates nothing: neither through the host allocator
 *      (clf_options_set_allocator) nor anywhere in the process (malloc is
 *      interposed below, which also sees Hyperscan's and PCRE2's
 *      allocations). Run on examples/main.clf and on tests/alloc/v1.clf,
 *      which uses captures, req.client_ip, cookies and query parameters.
 *      The same for clf_eval_explain, which must also give clf_eval's
 *      verdicts.
 *   2. Every allocation failure while loading a program or making a
 *      context is reported as CLF_E_NOMEM, never a crash, and leaks
 *      nothing: fail the n-th allocation, for every n, through the host
 *      allocator and then through malloc itself (Hyperscan's scratch).
 *
 *   3. With --rewrite SET: rewriting allocates nothing either. A rewriter
 *      and scratch made once rewrite thousands of bodies, fed in chunks
 *      of every size, finished, reset, with the skip cache; and every
 *      allocation failure while making the scratch, a rewriter or a cache
 *      is CLF_E_NOMEM without a leak.
 *
 * usage: test_alloc [--jit-fallback] RULES.bin
 *        test_alloc --rewrite SET RULES.bin
 *
 * --jit-fallback is for rules with captures: a failed allocation inside
 * PCRE2's JIT compiler is then allowed to load (the capture runs in
 * PCRE2's interpreter), provided that classifying still works and
 * allocates nothing.
 *
 * Under a sanitizer build, which owns malloc, the interposition is left
 * out (-DNO_INTERPOSE) and only the host-allocator checks run.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

static int tap_n, tap_failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) tap_failed++;
}

/* ---- the host allocator: counts, and fails the n-th call on request ---- */

static struct {
    long calls, live, fail_at; /* fail_at: 0 = never */
} host;

static void *host_alloc(void *ud, size_t size)
{
    (void)ud;
    if (host.fail_at && ++host.calls == host.fail_at) return NULL;
    if (!host.fail_at) host.calls++;
    void *p = malloc(size);
    if (p) host.live++;
    return p;
}

static void host_free(void *ud, void *p)
{
    (void)ud;
    host.live--;
    free(p);
}

/* ---- malloc itself, for allocations the host allocator cannot see ---- */

static struct {
    int on;
    long calls, fail_at;
} sys;

#ifndef NO_INTERPOSE
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

static int sys_fail(void)
{
    if (!sys.on) return 0;
    sys.calls++;
    return sys.fail_at && sys.calls == sys.fail_at;
}

void *malloc(size_t n) { return sys_fail() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t m) { return sys_fail() ? NULL : __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { return sys_fail() ? NULL : __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
#endif

static uint8_t *bytes;
static size_t nbytes;

/* Loads with a trusted proxy (10.0.0.0/8), so that rules reading
 * req.client_ip walk X-Forwarded-For. */
static clf_status load(clf_program **p, int hooked, char *err)
{
    clf_options *o;
    if (clf_options_new(&o) != CLF_OK) return CLF_E_NOMEM;
    if (hooked) clf_options_set_allocator(o, host_alloc, host_free, NULL);
    clf_status st = clf_options_set_trusted_proxies(o, "10.0.0.0/8", 10, err, CLF_ERRMSG_SIZE);
    if (st == CLF_OK) st = clf_program_load(bytes, nbytes, o, p, err, CLF_ERRMSG_SIZE);
    clf_options_free(o);
    return st;
}

/* When set, classify() explains (clf_eval_explain) and counts the steps
 * here. */
static long *explain_steps;

static void count_step(void *ud, const clf_explain_step *step)
{
    (*(long *)ud)++;
    (void)step;
}

static clf_status classify(clf_ctx *ctx, int i, clf_verdict *v)
{
    static const char *const uas[] = {
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36",
        "Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)",
        "CCBot/2.0 (https://commoncrawl.org/faq/)", "python-requests/2.31", "",
        "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727)"};
    static const char *const paths[] = {"/", "/wp-admin/", "/robots.txt", "/a/.env", "/blog"};
    /* For rules that read them (tests/alloc/v1.clf): the peer, a trusted
     * proxy or not, forwarding headers, cookies over two lines, a query
     * to decode, an address to parse, and now and then a value whose
     * capture runs out of PCRE2's JIT stack. */
    static const char *const peers[] = {"10.0.0.1", "203.0.113.9", NULL, "::ffff:10.0.0.2",
                                        "2001:db8::7", "garbage"};
    static const char *const xffs[] = {"198.51.100.7, 10.0.0.3", "", "203.0.113.5",
                                       "junk, 10.1.1.1", "[2001:db8::1]:443", "10.0.0.9"};
    static const char *const queries[] = {"page=2&q=a+b%20c", "", "q=%zz&page=-4", "page",
                                          "x=1&&page=%32"};
    static char slow[3002];
    if (!slow[0]) {
        memset(slow, 'a', 3000);
        slow[3000] = 'c';
    }
    const char *ua = uas[i % 6], *path = paths[i % 5], *peer = peers[i % 6], *xff = xffs[i % 6],
               *query = queries[i % 5];
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, path, strlen(path));
    clf_ctx_set_query(ctx, query, strlen(query));
    if (peer) clf_ctx_set_peer(ctx, peer, strlen(peer)); /* "garbage": unknown peer */
    clf_ctx_add_header(ctx, "Host", 4, "example.org", 11);
    if (*ua) clf_ctx_add_header(ctx, "User-Agent", 10, ua, strlen(ua));
    clf_ctx_add_header(ctx, "Accept", 6, "text/html", 9);
    clf_ctx_add_header(ctx, "accept", 6, "*/*", 3); /* repeated: joined on use */
    if (*xff) clf_ctx_add_header(ctx, "X-Forwarded-For", 15, xff, strlen(xff));
    if (i % 4 == 0) clf_ctx_add_header(ctx, "X-Real-IP", 9, "192.0.2.44", 10);
    clf_ctx_add_header(ctx, "Cookie", 6, "sid=abc; theme=dark", 19);
    if (i % 3) clf_ctx_add_header(ctx, "cookie", 6, "lang=en; sid=second", 19);
    clf_ctx_add_header(ctx, "X-IP", 4, i % 2 ? "192.0.2.1" : "[2001:db8::2]", i % 2 ? 9 : 13);
    if (i % 97 == 0) clf_ctx_add_header(ctx, "X-Slow", 6, slow, 3001);
    if (explain_steps) return clf_eval_explain(ctx, v, count_step, explain_steps);
    return clf_eval(ctx, v);
}

static void test_no_allocation_per_request(void)
{
    char err[CLF_ERRMSG_SIZE];
    clf_program *p;
    clf_ctx *ctx;
    memset(&host, 0, sizeof host);
    ok(load(&p, 1, err) == CLF_OK, "load with the host allocator (%s)", err);
    ok(clf_ctx_new(p, &ctx, err, sizeof err) == CLF_OK, "context with the host allocator");
    ok(host.live > 0, "the host allocator was used (%ld blocks live)", host.live);
    long calls = host.calls, live = host.live;
    sys.calls = 0;
    sys.fail_at = 0;
    sys.on = 1;
    int rejected = 0, errors = 0;
    for (int i = 0; i < 30000; i++) {
        clf_verdict v;
        if (classify(ctx, i, &v) != CLF_OK) errors++;
        else rejected += v.verdict == CLF_REJECT;
    }
    sys.on = 0;
    ok(errors == 0 && rejected > 0 && rejected < 30000, "30,000 classifications (%d rejected)", rejected);
    ok(host.calls == calls && host.live == live, "no host allocation while classifying (%ld calls)",
       host.calls - calls);
#ifndef NO_INTERPOSE
    ok(sys.calls == 0, "no malloc/calloc/realloc at all while classifying (%ld calls)", sys.calls);
#endif
    clf_ctx_free(ctx);
    clf_program_free(p);
    ok(host.live == 0, "everything freed (%ld blocks live)", host.live);
}

/* clf_eval_explain gives clf_eval's results for every request, and
 * allocates nothing either: its text is built on the stack. */
static void test_explain_allocates_nothing(void)
{
    char err[CLF_ERRMSG_SIZE];
    clf_program *p;
    clf_ctx *ctx;
    memset(&host, 0, sizeof host);
    ok(load(&p, 1, err) == CLF_OK && clf_ctx_new(p, &ctx, err, sizeof err) == CLF_OK,
       "explain: load and context (%s)", err);
    long calls = host.calls, live = host.live, steps = 0;
    int differ = 0;
    sys.calls = 0;
    sys.fail_at = 0;
    sys.on = 1;
    for (int i = 0; i < 3000; i++) {
        clf_verdict v, e;
        clf_status sv = classify(ctx, i, &v);
        long before = steps;
        explain_steps = &steps;
        clf_status se = classify(ctx, i, &e);
        explain_steps = NULL;
        if (sv != se || (sv == CLF_OK && (v.verdict != e.verdict || v.reason != e.reason)) ||
            steps == before)
            differ++;
    }
    sys.on = 0;
    ok(differ == 0, "explain: 3,000 requests, the same status and verdict as clf_eval, "
       "%ld steps told (%d differ)", steps, differ);
    ok(host.calls == calls && host.live == live, "explain: no host allocation (%ld calls)",
       host.calls - calls);
#ifndef NO_INTERPOSE
    ok(sys.calls == 0, "explain: no malloc/calloc/realloc at all (%ld calls)", sys.calls);
#endif
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* With --jit-fallback: the rules have captures. PCRE2's JIT compiler
 * allocates through the host allocator too, and when it fails (out of
 * memory, or no executable memory) the capture silently runs in PCRE2's
 * interpreter instead (vm/capture.h): such a failure loads fine. Every
 * other one must still be CLF_E_NOMEM. */
static int jit_fallback;

/* After a load that survived a failed allocation: the program must
 * classify as usual, without allocating. Returns 1 when it does. */
static int still_works(clf_ctx *ctx)
{
    long calls = host.calls;
    long scalls = sys.calls;
    int on = sys.on;
    sys.on = 1;
    int good = 1;
    for (int i = 0; i < 200; i++) {
        clf_verdict v;
        if (classify(ctx, i, &v) != CLF_OK) good = 0;
    }
    clf_verdict v;
    if (classify(ctx, 1, &v) != CLF_OK || v.verdict != CLF_REJECT) good = 0;
    sys.on = on;
#ifndef NO_INTERPOSE
    if (sys.calls != scalls) good = 0;
#endif
    sys.calls = scalls;
    return good && host.calls == calls;
}

/* Fails the n-th host allocation for n = 1, 2, ... until load and context
 * creation need fewer than n. */
static void test_host_allocation_failures(void)
{
    char err[CLF_ERRMSG_SIZE];
    int bad = 0, tolerated = 0;
    long n;
    for (n = 1;; n++) {
        memset(&host, 0, sizeof host);
        host.fail_at = n;
        clf_program *p = NULL;
        clf_ctx *ctx = NULL;
        int works = 1;
        clf_status st = load(&p, 1, err);
        if (st == CLF_OK) {
            st = clf_ctx_new(p, &ctx, err, sizeof err);
            if (st == CLF_OK) {
                works = still_works(ctx);
                clf_ctx_free(ctx);
            }
            clf_program_free(p);
        }
        if (host.calls < n) { /* the n-th allocation never happened */
            if (!works) bad++;
            break;
        }
        if (st == CLF_OK && jit_fallback && works && host.live == 0) {
            tolerated++;
        } else if (st != CLF_E_NOMEM || host.live != 0 || !works) {
            if (bad++ < 5)
                printf("# n=%ld: status %d (%s), %ld blocks leaked%s\n", n, st, err, host.live,
                       works ? "" : ", and classifying then failed or allocated");
        }
    }
    if (!jit_fallback)
        ok(bad == 0, "each of the %ld host allocations of load+context fails cleanly with "
           "CLF_E_NOMEM", n - 1);
    else
        ok(bad == 0 && tolerated > 0, "each of the %ld host allocations of load+context fails "
           "cleanly with CLF_E_NOMEM, but %d in PCRE2's JIT compiler: those load anyway, and "
           "classify without allocating in PCRE2's interpreter", n - 1, tolerated);
}

#ifndef NO_INTERPOSE
/* The same through malloc itself: this also reaches Hyperscan's scratch
 * allocation inside clf_ctx_new. */
static void test_malloc_failures(void)
{
    char err[CLF_ERRMSG_SIZE];
    int bad = 0, tolerated = 0;
    long n;
    for (n = 1;; n++) {
        clf_program *p = NULL;
        clf_ctx *ctx = NULL;
        sys.calls = 0;
        sys.fail_at = n;
        sys.on = 1;
        int works = 1;
        clf_status st = load(&p, 0, err);
        if (st == CLF_OK) {
            st = clf_ctx_new(p, &ctx, err, sizeof err);
            if (st == CLF_OK) {
                long calls = sys.calls;
                sys.fail_at = 0;
                works = still_works(ctx);
                sys.fail_at = n;
                sys.calls = calls;
            }
            clf_ctx_free(ctx);
            clf_program_free(p);
        }
        sys.on = 0;
        if (sys.calls < n) {
            if (!works) bad++;
            break;
        }
        if (st == CLF_OK && jit_fallback && works) {
            tolerated++;
        } else if (st != CLF_E_NOMEM || !works) {
            if (bad++ < 5)
                printf("# malloc n=%ld: status %d (%s)%s\n", n, st, err,
                       works ? "" : ", and classifying then failed or allocated");
        }
    }
    if (!jit_fallback)
        ok(bad == 0, "each of the %ld malloc calls of load+context fails cleanly with CLF_E_NOMEM",
           n - 1);
    else
        ok(bad == 0, "each of the %ld malloc calls of load+context fails cleanly with CLF_E_NOMEM, "
           "but %d in PCRE2's JIT compiler, which load anyway", n - 1, tolerated);
}
#endif

/* ---- rewriting (--rewrite SET) ---- */

static const char *rw_set_name;

typedef struct rw_out {
    uint64_t bytes, hash; /* FNV-1a of the output: no allocation, order-sensitive */
} rw_out;

static int rw_sink(void *ud, const char *p, size_t n)
{
    rw_out *o = ud;
    for (size_t i = 0; i < n; i++) o->hash = (o->hash ^ (uint8_t)p[i]) * 1099511628211u;
    o->bytes += n;
    return 0;
}

/* A body of about 20 KB built from pieces the sets' rules match, body i
 * varying with i (so that some bodies match nothing: the cache skips them). */
static size_t rw_body(int i, char *buf, size_t cap)
{
    static const char *const pieces[] = {
        "<p>see origin.example and ORIGIN.example</p>\n", "UA-1234-5 and UA-9-9\n",
        "<!-- a comment - with dashes -->", "<a href=\"http://www.origin.example/x\">x</a>",
        "abcabcab mail bob@example.com now ", "</head><body>", "</body>\n",
        "plain text that no rule matches at all, repeated to make a page. "};
    size_t n = 0;
    for (int k = 0; n + 200 < cap && k < 300; k++) {
        int w = i % 5 == 0 ? 7 : (i * 7 + k * 13) % 8; /* every fifth body: plain text only */
        size_t l = strlen(pieces[w]);
        memcpy(buf + n, pieces[w], l);
        n += l;
    }
    return n;
}

static void test_rewrite_allocates_nothing(void)
{
    char err[CLF_ERRMSG_SIZE];
    clf_program *p;
    clf_rewrite_scratch *sc = NULL;
    clf_rewriter *rw = NULL;
    clf_rewrite_cache *cache = NULL;
    rw_out out = {0, 1469598103934665603u};
    memset(&host, 0, sizeof host);
    ok(load(&p, 1, err) == CLF_OK, "rewrite: load with the host allocator (%s)", err);
    size_t nl = strlen(rw_set_name);
    ok(clf_rewrite_scratch_new(p, &sc, err, sizeof err) == CLF_OK &&
       clf_rewriter_new(p, rw_set_name, nl, rw_sink, &out, &rw, err, sizeof err) == CLF_OK &&
       clf_rewrite_cache_new(p, rw_set_name, nl, 64, &cache, err, sizeof err) == CLF_OK,
       "rewrite: scratch, rewriter and cache of set '%s' (%s)", rw_set_name, err);
    if (!sc || !rw || !cache) return;
    static char body[20480];
    static const size_t sizes[] = {1, 7, 64, 1000, 4096, 65536};
    long calls = host.calls, live = host.live;
    uint64_t in_total = 0, reps = 0;
    int errors = 0, skipped = 0, differ = 0;
    sys.calls = 0;
    sys.fail_at = 0;
    sys.on = 1;
    for (int i = 0; i < 2000; i++) {
        size_t n = rw_body(i % 40, body, sizeof body);
        char key[16];
        int kl = snprintf(key, sizeof key, "/page/%d", i % 40);
        clf_rewriter_reset(rw, rw_sink, &out);
        out.bytes = 0;
        out.hash = 1469598103934665603u;
        if (clf_rewriter_use_cache(rw, cache, key, (size_t)kl) != CLF_OK) errors++;
        size_t step = sizes[i % 6];
        for (size_t at = 0; at < n; at += step) {
            size_t m = n - at < step ? n - at : step;
            if (clf_rewriter_feed(rw, sc, body + at, m) != CLF_OK) errors++;
            if (i % 3 == 0 && clf_rewriter_feed(rw, sc, NULL, 0) != CLF_OK) errors++;
        }
        if (clf_rewriter_finish(rw, sc) != CLF_OK) errors++;
        clf_rewrite_stats st;
        clf_rewriter_stats(rw, &st);
        if (st.bytes_in != n || st.bytes_out != out.bytes) differ++;
        in_total += st.bytes_in;
        reps += st.replacements;
        skipped += st.skipped;
    }
    sys.on = 0;
    ok(errors == 0 && differ == 0 && reps > 0 && skipped > 0,
       "rewrite: 2,000 bodies (%.1f MB) in chunks of 1 B to 64 KiB, %llu replacements, %d "
       "skipped by the cache (%d errors, %d miscounted)", (double)in_total / 1e6,
       (unsigned long long)reps, skipped, errors, differ);
    ok(host.calls == calls && host.live == live,
       "rewrite: no host allocation while rewriting (%ld calls)", host.calls - calls);
#ifndef NO_INTERPOSE
    ok(sys.calls == 0, "rewrite: no malloc/calloc/realloc at all while rewriting (%ld calls)",
       sys.calls);
#endif
    clf_rewrite_cache_free(cache);
    clf_rewriter_free(rw);
    clf_rewrite_scratch_free(sc);
    clf_program_free(p);
    ok(host.live == 0, "rewrite: everything freed (%ld blocks live)", host.live);
}

/* Makes the scratch, a rewriter and a cache, and rewrites one body: 1
 * when all of it worked and gave `want` (when want is not 0). */
static clf_status rw_make_all(clf_program *p, uint64_t *hash)
{
    char err[CLF_ERRMSG_SIZE];
    clf_rewrite_scratch *sc = NULL;
    clf_rewriter *rw = NULL;
    clf_rewrite_cache *cache = NULL;
    rw_out out = {0, 1469598103934665603u};
    size_t nl = strlen(rw_set_name);
    clf_status st = clf_rewrite_scratch_new(p, &sc, err, sizeof err);
    if (st == CLF_OK) st = clf_rewriter_new(p, rw_set_name, nl, rw_sink, &out, &rw, err, sizeof err);
    if (st == CLF_OK) st = clf_rewrite_cache_new(p, rw_set_name, nl, 16, &cache, err, sizeof err);
    if (st == CLF_OK) {
        static char body[20480];
        size_t n = rw_body(1, body, sizeof body);
        long scalls = sys.calls;
        int on = sys.on;
        sys.on = 0; /* rewriting itself allocates nothing: not counted here */
        if (clf_rewriter_use_cache(rw, cache, "k", 1) != CLF_OK ||
            clf_rewriter_feed(rw, sc, body, n) != CLF_OK || clf_rewriter_finish(rw, sc) != CLF_OK)
            st = CLF_E_BACKEND; /* anything but CLF_E_NOMEM: reported as bad */
        sys.on = on;
        sys.calls = scalls;
        *hash = out.hash;
    }
    clf_rewrite_cache_free(cache);
    clf_rewriter_free(rw);
    clf_rewrite_scratch_free(sc);
    return st;
}

/* Loads the rules (through the host allocator), then rw_make_all. */
static clf_status rw_load_make_all(uint64_t *hash)
{
    char err[CLF_ERRMSG_SIZE];
    clf_program *p = NULL;
    clf_status st = load(&p, 1, err);
    if (st != CLF_OK && st != CLF_E_NOMEM) printf("# load: %s\n", err);
    if (st == CLF_OK) st = rw_make_all(p, hash);
    clf_program_free(p);
    return st;
}

/* Fails the n-th allocation (the host allocator's, then malloc's) made by
 * loading the rules and rw_make_all, for every n. Hyperscan's databases,
 * stream state and scratch and PCRE2's JIT stack come from malloc: the
 * second sweep reaches them. A failure inside PCRE2's JIT compiler may
 * load anyway (the interpreter runs instead): then the output must be
 * the same. */
static void test_rewrite_allocation_failures(void)
{
    uint64_t want = 0, got;
    memset(&host, 0, sizeof host);
    if (rw_load_make_all(&want) != CLF_OK) {
        ok(0, "rewrite: the allocation-failure sweep could not start");
        return;
    }
    for (int via_malloc = 0; via_malloc < 2; via_malloc++) {
#ifdef NO_INTERPOSE
        if (via_malloc) break;
#endif
        int bad = 0;
        long n;
        for (n = 1;; n++) {
            long base_live = host.live;
            if (via_malloc) {
                sys.calls = 0;
                sys.fail_at = n;
                sys.on = 1;
            } else {
                host.calls = 0;
                host.fail_at = n;
            }
            got = 0;
            clf_status st = rw_load_make_all(&got);
            long made = via_malloc ? sys.calls : host.calls;
            sys.on = 0;
            sys.fail_at = 0;
            host.fail_at = 0;
            if (made < n) { /* the n-th allocation never happened */
                if (st != CLF_OK || got != want) bad++;
                break;
            }
            if ((st != CLF_E_NOMEM && !(st == CLF_OK && got == want)) || host.live != base_live) {
                if (bad++ < 5)
                    printf("# %s n=%ld: status %d, %ld blocks leaked\n",
                           via_malloc ? "malloc" : "host", n, st, host.live - base_live);
            }
        }
        ok(bad == 0, "rewrite: each of the %ld %s allocations of loading, scratch, rewriter "
           "and cache fails cleanly with CLF_E_NOMEM", n - 1, via_malloc ? "malloc" : "host");
    }
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--rewrite") == 0) {
        rw_set_name = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc == 3 && strcmp(argv[1], "--jit-fallback") == 0) {
        jit_fallback = 1;
        argv++;
        argc--;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: test_alloc [--jit-fallback | --rewrite SET] RULES.bin\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    static uint8_t buf[1 << 22];
    nbytes = fread(buf, 1, sizeof buf, f);
    fclose(f);
    bytes = buf;
    if (rw_set_name) {
        test_rewrite_allocates_nothing();
        test_rewrite_allocation_failures();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
    }
    test_no_allocation_per_request();
    test_explain_allocates_nothing();
    test_host_allocation_failures();
#ifndef NO_INTERPOSE
    test_malloc_failures();
#endif
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
