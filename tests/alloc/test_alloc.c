/*
 * test_alloc.c: memory discipline, with a counting allocator (TAP).
 *
 *   1. Classifying allocates nothing: neither through the host allocator
 *      (clf_options_set_allocator) nor anywhere in the process (malloc is
 *      interposed below, which also sees Hyperscan's allocations).
 *   2. Every allocation failure while loading a program or making a
 *      context is reported as CLF_E_NOMEM, never a crash, and leaks
 *      nothing: fail the n-th allocation, for every n, through the host
 *      allocator and then through malloc itself (Hyperscan's scratch).
 *
 * usage: test_alloc RULES.bin
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

static clf_status load(clf_program **p, int hooked, char *err)
{
    clf_options *o;
    if (clf_options_new(&o) != CLF_OK) return CLF_E_NOMEM;
    if (hooked) clf_options_set_allocator(o, host_alloc, host_free, NULL);
    clf_status st = clf_program_load(bytes, nbytes, o, p, err, CLF_ERRMSG_SIZE);
    clf_options_free(o);
    return st;
}

static clf_status classify(clf_ctx *ctx, int i, clf_verdict *v)
{
    static const char *const uas[] = {
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36",
        "Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)",
        "CCBot/2.0 (https://commoncrawl.org/faq/)", "python-requests/2.31", "",
        "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727)"};
    static const char *const paths[] = {"/", "/wp-admin/", "/robots.txt", "/a/.env", "/blog"};
    const char *ua = uas[i % 6], *path = paths[i % 5];
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, path, strlen(path));
    clf_ctx_add_header(ctx, "Host", 4, "example.org", 11);
    if (*ua) clf_ctx_add_header(ctx, "User-Agent", 10, ua, strlen(ua));
    clf_ctx_add_header(ctx, "Accept", 6, "text/html", 9);
    clf_ctx_add_header(ctx, "accept", 6, "*/*", 3); /* repeated: joined on use */
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

/* Fails the n-th host allocation for n = 1, 2, ... until load and context
 * creation need fewer than n. */
static void test_host_allocation_failures(void)
{
    char err[CLF_ERRMSG_SIZE];
    int bad = 0;
    long n;
    for (n = 1;; n++) {
        memset(&host, 0, sizeof host);
        host.fail_at = n;
        clf_program *p = NULL;
        clf_ctx *ctx = NULL;
        clf_status st = load(&p, 1, err);
        if (st == CLF_OK) {
            st = clf_ctx_new(p, &ctx, err, sizeof err);
            if (st == CLF_OK) {
                clf_verdict v;
                if (classify(ctx, 1, &v) != CLF_OK || v.verdict != CLF_REJECT) bad++;
                clf_ctx_free(ctx);
            }
            clf_program_free(p);
        }
        if (host.calls < n) break; /* the n-th allocation never happened */
        if (st != CLF_E_NOMEM || host.live != 0) {
            if (bad++ < 5) printf("# n=%ld: status %d (%s), %ld blocks leaked\n", n, st, err, host.live);
        }
    }
    ok(bad == 0, "each of the %ld host allocations of load+context fails cleanly with CLF_E_NOMEM", n - 1);
}

#ifndef NO_INTERPOSE
/* The same through malloc itself: this also reaches Hyperscan's scratch
 * allocation inside clf_ctx_new. */
static void test_malloc_failures(void)
{
    char err[CLF_ERRMSG_SIZE];
    int bad = 0;
    long n;
    for (n = 1;; n++) {
        clf_program *p = NULL;
        clf_ctx *ctx = NULL;
        sys.calls = 0;
        sys.fail_at = n;
        sys.on = 1;
        clf_status st = load(&p, 0, err);
        if (st == CLF_OK) {
            st = clf_ctx_new(p, &ctx, err, sizeof err);
            clf_ctx_free(ctx);
            clf_program_free(p);
        }
        sys.on = 0;
        if (sys.calls < n) break;
        if (st != CLF_E_NOMEM) {
            if (bad++ < 5) printf("# malloc n=%ld: status %d (%s)\n", n, st, err);
        }
    }
    ok(bad == 0, "each of the %ld malloc calls of load+context fails cleanly with CLF_E_NOMEM", n - 1);
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_alloc RULES.bin\n");
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
    test_no_allocation_per_request();
    test_host_allocation_failures();
#ifndef NO_INTERPOSE
    test_malloc_failures();
#endif
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
