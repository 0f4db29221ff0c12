/* fuzz_common.c: see fuzz_common.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

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

void fuzz_classify_fixed(const clf_program *prog)
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
