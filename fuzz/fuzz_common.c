/* fuzz_common.c: see fuzz_common.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "program.h"
#include "rw_build.h"

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("fuzz: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

int fuzz_verbose(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("FUZZ_VERBOSE");
        v = e && *e;
    }
    return v;
}

/* The fixed requests: between them every request field is set, a header
 * is repeated (joined with ", "), a known AI crawler and a probe path
 * appear, one request has no User-Agent and one carries bytes that are
 * neither ASCII nor text. Slices are given with explicit lengths, so the
 * NUL inside the last User-Agent is part of the value. */
typedef struct fixed_header {
    const char *name;
    const char *value;
    size_t value_len; /* 0: strlen(value) */
} fixed_header;

typedef struct fixed_request {
    const char *method, *path, *query;
    fixed_header headers[8];
} fixed_request;

static const char odd_ua[] = "Mozilla/5.0 \xff\xfe\x00GPTBot\x80/1.0 (\x01;\t)";

static const fixed_request fixed[] = {
    {"GET", "/index.html", "q=1&debug=1",
     {{"Host", "www.example.org", 0},
      {"User-Agent",
       "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; "
       "GPTBot/1.2; +https://openai.com/gptbot) Chrome/124.0.0.0 Safari/537.36", 0},
      {"Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8", 0},
      {"X-Test", "first", 0},
      {"x-test", "joined, second", 0},
      {"Content-Type", "text/plain", 0},
      {NULL, NULL, 0}}},
    {"POST", "/wp-admin/xmlrpc.php", "",
     {{"Host", "example.org", 0},
      {"Accept-Language", "en-US,en;q=0.9", 0},
      {"Content-Length", "0", 0},
      {NULL, NULL, 0}}},
    {"GET", "/robots.txt", "",
     {{"user-agent", odd_ua, sizeof odd_ua - 1},
      {"USER-AGENT", "python-requests/2.32.3", 0},
      {"Referer", "", 0},
      {NULL, NULL, 0}}},
};

static int run_one(clf_ctx *ctx, const fixed_request *r, clf_verdict *v)
{
    clf_ctx_reset(ctx);
    if (clf_ctx_set_method(ctx, r->method, strlen(r->method)) != CLF_OK ||
        clf_ctx_set_path(ctx, r->path, strlen(r->path)) != CLF_OK ||
        clf_ctx_set_query(ctx, r->query, strlen(r->query)) != CLF_OK)
        FUZZ_FAIL("setting the request line failed: %s", clf_ctx_errmsg(ctx));
    for (const fixed_header *h = r->headers; h->name; h++) {
        size_t vl = h->value_len ? h->value_len : strlen(h->value);
        clf_status st = clf_ctx_add_header(ctx, h->name, strlen(h->name), h->value, vl);
        if (st != CLF_OK)
            FUZZ_FAIL("clf_ctx_add_header(%s) returned %d (%s) under the default limit",
                      h->name, st, clf_ctx_errmsg(ctx));
    }
    return clf_eval(ctx, v);
}

static void check_step(void *ud, const clf_explain_step *s)
{
    (void)ud;
    if (!s->text || s->text[s->text_len] != '\0' || strlen(s->text) != s->text_len)
        FUZZ_FAIL("explain: a step's text is not NUL-terminated at text_len %zu", s->text_len);
    for (size_t i = 0; i < s->text_len; i++)
        if ((unsigned char)s->text[i] < 0x20 || (unsigned char)s->text[i] > 0x7e)
            FUZZ_FAIL("explain: byte 0x%02x in step \"%s\"", (unsigned char)s->text[i], s->text);
    if (s->file && strlen(s->file) > 1u << 20) /* reads every byte of it */
        FUZZ_FAIL("explain: a file name of over 1 MiB");
}

void fuzz_check_explain(clf_ctx *ctx, clf_status st, const clf_verdict *v, const char *what)
{
    clf_verdict e = {CLF_ACCEPT, NULL, 0};
    clf_status se = clf_eval_explain(ctx, &e, check_step, NULL);
    if (se != st)
        FUZZ_FAIL("%s: clf_eval_explain returned %d, clf_eval %d", what, se, st);
    if (st == CLF_OK && (e.verdict != v->verdict || e.reason != v->reason))
        FUZZ_FAIL("%s: clf_eval_explain gave another verdict than clf_eval", what);
}

void fuzz_classify_fixed(const clf_program *prog, int as_compiled)
{
    char err[CLF_ERRMSG_SIZE] = "";
    clf_ctx *ctx = NULL;
    clf_status st = clf_ctx_new(prog, &ctx, err, sizeof err);
    if (st == CLF_E_NOMEM) return;
    if (st != CLF_OK || !ctx)
        FUZZ_FAIL("clf_ctx_new on a loaded program returned %d (%s): %s", st,
                  clf_strerror(st), err);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        clf_verdict v = {CLF_ACCEPT, NULL, 0};
        st = run_one(ctx, &fixed[i], &v);
        fuzz_check_explain(ctx, st, &v, "a fixed request");
        if (st == CLF_E_STATE && prog->entry == VM_NO_ENTRY) continue; /* rewrite sets only */
        if (st == CLF_E_LIMIT) { /* the program outgrew the workspace */
            if (fuzz_verbose())
                fprintf(stderr, "fuzz: fixed request %zu: %s\n", i, clf_ctx_errmsg(ctx));
            continue;
        }
        if (st != CLF_OK)
            FUZZ_FAIL("clf_eval of fixed request %zu returned %d (%s): %s", i, st,
                      clf_strerror(st), clf_ctx_errmsg(ctx));
        if (v.verdict != CLF_ACCEPT && v.verdict != CLF_REJECT)
            FUZZ_FAIL("clf_eval gave verdict %d", (int)v.verdict);
        if (fuzz_verbose())
            fprintf(stderr, "fuzz: fixed request %zu: %s %.*s\n", i,
                    v.verdict == CLF_ACCEPT ? "accept" : "reject",
                    v.reason ? (int)v.reason_len : 0, v.reason ? v.reason : "");
        if (v.reason) {
            /* Read every byte of the reason (ASan checks the bounds). */
            volatile unsigned char sum = 0;
            for (size_t k = 0; k < v.reason_len; k++) sum ^= (unsigned char)v.reason[k];
            (void)sum;
            if (v.reason[v.reason_len] != '\0')
                FUZZ_FAIL("the reason is not NUL-terminated at reason_len");
        } else if (v.reason_len) {
            FUZZ_FAIL("no reason, but reason_len %zu", v.reason_len);
        }
        if (clf_ctx_errmsg(ctx)[0])
            FUZZ_FAIL("clf_eval succeeded but left an error message: %s",
                      clf_ctx_errmsg(ctx));
    }
    clf_ctx_free(ctx);
    fuzz_rewrite_fixed(prog, as_compiled);
}

/* ---- rewrite sets ---- */

typedef struct rw_out {
    uint64_t n, hash;
} rw_out;

static int rw_sink(void *ud, const char *p, size_t n)
{
    rw_out *o = ud;
    if (n == 0) FUZZ_FAIL("a rewriter's sink was called with 0 bytes");
    for (size_t i = 0; i < n; i++) o->hash = (o->hash ^ (uint8_t)p[i]) * 1099511628211u;
    o->n += n;
    return 0;
}

/* A body with bytes most rules look for: markup, words, digits, a
 * comment, line breaks, a NUL and bytes that are not ASCII. */
static const char rw_body[] =
    "<html><head><title>Origin Example</title></head>\n<body class=\"x\">\r\n"
    "<a href=\"http://www.origin.example/a?b=1&c=2\">origin.example</a> UA-12345-6\n"
    "<!-- a comment -- with dashes --> abcabc ABC aaaa bbbb ab ba\n"
    "caf\xc3\xa9 \xff\x80 \x00 mail bob@example.com 2024-06-11 $1 ${1}\n"
    "<script>var s = 'origin.example';</script></body></html>\n";

void fuzz_rewrite_fixed(const clf_program *prog, int as_compiled)
{
    if (!prog->nrewrites) return;
    char err[CLF_ERRMSG_SIZE] = "";
    clf_rewrite_scratch *sc = NULL;
    clf_status st = clf_rewrite_scratch_new(prog, &sc, err, sizeof err);
    if (st == CLF_E_NOMEM) return;
    if (st != CLF_OK) FUZZ_FAIL("clf_rewrite_scratch_new on a loaded program: %d (%s)", st, err);
    static const size_t steps[] = {sizeof rw_body - 1, 1, 7, 64};
    for (uint32_t s = 0; s < prog->nrewrites; s++) {
        const vm_const *name = &prog->consts[prog->rewrites[s].name];
        clf_rewriter *rw = NULL;
        rw_out out = {0, 0};
        st = clf_rewriter_new(prog, name->str, name->len, rw_sink, &out, &rw, err, sizeof err);
        if (st == CLF_E_NOMEM) continue;
        if (st != CLF_OK) FUZZ_FAIL("clf_rewriter_new of set %u: %d (%s)", s, st, err);
        int rf = rw_set_mode(prog->rewrites[s].set) == RW_MODE_REPLACE_FILTER;
        rw_out first = {0, 0};
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            clf_rewriter_reset(rw, rw_sink, &out);
            out.n = 0;
            out.hash = 1469598103934665603u;
            size_t n = sizeof rw_body - 1;
            for (size_t at = 0; at < n && st == CLF_OK; at += steps[k])
                st = clf_rewriter_feed(rw, sc, rw_body + at, n - at < steps[k] ? n - at : steps[k]);
            if (st == CLF_OK) st = clf_rewriter_finish(rw, sc);
            if (st == CLF_E_LIMIT) break; /* a PCRE2 workspace limit: documented */
            if (st != CLF_OK)
                FUZZ_FAIL("set %u, chunks of %zu: %d (%s)", s, steps[k], st,
                          clf_rewriter_errmsg(rw));
            clf_rewrite_stats rs;
            clf_rewriter_stats(rw, &rs);
            if (rs.bytes_in != n || rs.bytes_out != out.n)
                FUZZ_FAIL("set %u: counted %llu in, %llu out; fed %zu, got %llu", s,
                          (unsigned long long)rs.bytes_in, (unsigned long long)rs.bytes_out, n,
                          (unsigned long long)out.n);
            if (rs.max_held > clf_rewriter_holdback(rw))
                FUZZ_FAIL("set %u held %llu bytes, over its hold-back %llu", s,
                          (unsigned long long)rs.max_held,
                          (unsigned long long)clf_rewriter_holdback(rw));
            /* split invariance (replace_filter: unless its buffer cap was hit) */
            if (rf && rs.gave_up) break;
            if (!as_compiled) continue;
            if (k == 0) first = out;
            else if (out.n != first.n || out.hash != first.hash)
                FUZZ_FAIL("set %u: chunks of %zu give another output than one chunk", s,
                          steps[k]);
        }
        clf_rewriter_free(rw);
    }
    clf_rewrite_scratch_free(sc);
}

static void count_bytes(void *ud, const char *text, size_t len)
{
    volatile unsigned char sum = 0;
    for (size_t i = 0; i < len; i++) sum ^= (unsigned char)text[i];
    (void)sum;
    *(size_t *)ud += len;
}

void fuzz_disassemble(const clf_program *prog)
{
    size_t n = 0;
    clf_status st = clf_program_disassemble(prog, count_bytes, &n);
    if (st != CLF_OK) FUZZ_FAIL("clf_program_disassemble returned %d", st);
}

unsigned fuzz_touch(const char *p, size_t n, const char *what)
{
    if (!p) FUZZ_FAIL("%s: NULL slice", what);
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += (unsigned char)p[i];
    return sum;
}

uint8_t *fuzz_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}
