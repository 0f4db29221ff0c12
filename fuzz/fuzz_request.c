/*
 * fuzz_request.c: raw HTTP/1.x request bytes through classify-run's
 * request reader (cli/http_request.c over llhttp), then classification with
 * the bundled ruleset examples/main.clf.
 *
 * The rules are compiled at build time (fuzz/meson.build runs classifyc
 * -I stdlib on examples/main.clf) and read once, by LLVMFuzzerInitialize,
 * from the path compiled in as FUZZ_RULES_PATH, or from $CLF_FUZZ_RULES
 * when set (e.g. to fuzz with another ruleset).
 *
 * Per input, what http_request.h promises is checked:
 *   - on HTTP_PARSE_OK: version 1.0 or 1.1; a non-empty method and target;
 *     path holds no '?' and is not empty; every header name is a non-empty
 *     RFC 9110 token; no value starts or ends with a space or tab, or holds
 *     CR or LF; every byte of every slice is read here (instrumented code),
 *     so AddressSanitizer catches a slice that points outside the request
 *     before it reaches Hyperscan (not instrumented);
 *   - on failure: a NUL-terminated, non-empty message, a byte offset inside
 *     the input when the message gives one, and an empty request;
 *   - http_request_free twice is harmless.
 * A parsed request is classified as classify-run does (cli/classify_run.c):
 * method, path, query, then the headers in order, stopping at the first
 * CLF_E_LIMIT; clf_eval must return CLF_OK (or CLF_E_LIMIT when the string
 * workspace runs out), and clf_eval_explain must agree (fuzz_check_explain).
 * It is classified twice: with the program loaded with the default
 * limits, as classify-run has it, and with the same program loaded with
 * tight per-request limits (tight_limits below), which small inputs can
 * reach. For both, clf_ctx_add_header must return
 * CLF_E_LIMIT exactly when one of CLF_LIMIT_HEADERS,
 * CLF_LIMIT_HEADER_VALUE_BYTES and CLF_LIMIT_HEADER_BYTES is passed.
 * Inputs over 1 MiB are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "http_request.h"

#ifndef FUZZ_RULES_PATH
#error "FUZZ_RULES_PATH: the compiled examples/main.clf (fuzz/meson.build)"
#endif

#define FUZZ_MAX_INPUT (1u << 20)

typedef struct loaded {
    const char *name;
    clf_program *prog;
    clf_ctx *ctx;
    uint64_t max_headers, max_value, max_bytes;
} loaded;

static loaded progs[2] = {{"default limits", NULL, NULL, 0, 0, 0},
                          {"tight limits", NULL, NULL, 0, 0, 0}};

/* Small enough for fuzzed inputs of a few KiB to pass each of them. */
static const struct {
    clf_limit which;
    uint64_t value;
} tight_limits[] = {
    {CLF_LIMIT_HEADERS, 8},
    {CLF_LIMIT_HEADER_VALUE_BYTES, 64},
    {CLF_LIMIT_HEADER_BYTES, 256},
    {CLF_LIMIT_WORKSPACE_BYTES, 96},
};

static void load(loaded *l, const uint8_t *bytes, size_t len, const clf_options *o,
                 const char *path)
{
    char err[CLF_ERRMSG_SIZE];
    if (clf_program_load(bytes, len, o, &l->prog, err, sizeof err) != CLF_OK ||
        clf_ctx_new(l->prog, &l->ctx, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "fuzz_request: %s (%s): %s\n", path, l->name, err);
        exit(1);
    }
    l->max_headers = clf_program_limit(l->prog, CLF_LIMIT_HEADERS);
    l->max_value = clf_program_limit(l->prog, CLF_LIMIT_HEADER_VALUE_BYTES);
    l->max_bytes = clf_program_limit(l->prog, CLF_LIMIT_HEADER_BYTES);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CLF_FUZZ_RULES");
    if (!path || !*path) path = FUZZ_RULES_PATH;
    size_t len = 0;
    uint8_t *bytes = fuzz_read_file(path, &len);
    if (!bytes) {
        perror(path);
        exit(1);
    }
    load(&progs[0], bytes, len, NULL, path);
    clf_options *o = NULL;
    if (clf_options_new(&o) != CLF_OK) exit(1);
    for (size_t i = 0; i < sizeof tight_limits / sizeof tight_limits[0]; i++)
        if (clf_options_set_limit(o, tight_limits[i].which, tight_limits[i].value) != CLF_OK) {
            fprintf(stderr, "fuzz_request: cannot set limit %d\n", (int)tight_limits[i].which);
            exit(1);
        }
    load(&progs[1], bytes, len, o, path);
    clf_options_free(o);
    free(bytes);
    return 0;
}

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Reads every byte of the slice (so ASan checks its bounds). */
static unsigned touch(http_slice s, const char *what)
{
    return fuzz_touch(s.ptr, s.len, what);
}

static void check_parsed(const http_request *r)
{
    volatile unsigned sum = 0;
    if (r->version_major != 1 || r->version_minor > 1)
        FUZZ_FAIL("parsed HTTP version %u.%u", r->version_major, r->version_minor);
    sum += touch(r->method, "method") + touch(r->target, "target") +
           touch(r->path, "path") + touch(r->query, "query");
    if (r->method.len == 0) FUZZ_FAIL("empty method");
    if (r->target.len == 0) FUZZ_FAIL("empty target");
    if (r->path.len == 0) FUZZ_FAIL("empty path (target %.*s)", (int)r->target.len, r->target.ptr);
    if (memchr(r->path.ptr, '?', r->path.len))
        FUZZ_FAIL("path holds a '?': %.*s", (int)r->path.len, r->path.ptr);
    if (r->header_count && !r->headers) FUZZ_FAIL("header_count %zu, no headers", r->header_count);
    for (size_t i = 0; i < r->header_count; i++) {
        const http_header *h = &r->headers[i];
        sum += touch(h->name, "header name") + touch(h->value, "header value");
        if (h->name.len == 0) FUZZ_FAIL("header %zu has an empty name", i);
        for (size_t k = 0; k < h->name.len; k++)
            if (!is_tchar((unsigned char)h->name.ptr[k]))
                FUZZ_FAIL("header %zu's name holds byte 0x%02x", i, (unsigned char)h->name.ptr[k]);
        const char *v = h->value.ptr;
        size_t n = h->value.len;
        if (n && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t'))
            FUZZ_FAIL("header %zu's value is not trimmed", i);
        if (memchr(v, '\r', n) || memchr(v, '\n', n))
            FUZZ_FAIL("header %zu's value holds CR or LF", i);
    }
    (void)sum;
}

static void check_failed(const http_request *r, const char *err, size_t errlen, size_t size)
{
    if (!memchr(err, '\0', errlen) || !err[0])
        FUZZ_FAIL("parse failed without a NUL-terminated message");
    if (r->header_count || r->method.len || r->target.len || r->buf)
        FUZZ_FAIL("parse failed (%s) but the request is not empty", err);
    const char *o = strstr(err, "(byte offset ");
    if (o) {
        unsigned long long off = strtoull(o + 13, NULL, 10);
        if (off >= size)
            FUZZ_FAIL("error offset %llu outside the %zu-byte input: %s", off, size, err);
    }
}

static void classify(const loaded *l, const http_request *r)
{
    clf_ctx *ctx = l->ctx;
    clf_ctx_reset(ctx);
    if (clf_ctx_set_method(ctx, r->method.ptr, r->method.len) != CLF_OK ||
        clf_ctx_set_path(ctx, r->path.ptr, r->path.len) != CLF_OK ||
        clf_ctx_set_query(ctx, r->query.ptr, r->query.len) != CLF_OK)
        FUZZ_FAIL("setting the request line failed: %s", clf_ctx_errmsg(ctx));
    uint64_t bytes = 0;
    for (size_t i = 0; i < r->header_count; i++) {
        const http_header *h = &r->headers[i];
        uint64_t nb = (uint64_t)h->name.len + h->value.len;
        int over = i >= l->max_headers || h->value.len > l->max_value ||
                   bytes + nb > l->max_bytes;
        clf_status st = clf_ctx_add_header(ctx, h->name.ptr, h->name.len, h->value.ptr,
                                           h->value.len);
        if (st != CLF_OK && st != CLF_E_LIMIT)
            FUZZ_FAIL("clf_ctx_add_header returned %d", st);
        if ((st == CLF_E_LIMIT) != over)
            FUZZ_FAIL("%s: header %zu (%zu + %zu bytes, %llu before): clf_ctx_add_header "
                      "returned %d (%s), expected %s",
                      l->name, i, h->name.len, h->value.len, (unsigned long long)bytes, st,
                      clf_ctx_errmsg(ctx), over ? "CLF_E_LIMIT" : "CLF_OK");
        if (st == CLF_E_LIMIT) {
            if (!clf_ctx_errmsg(ctx)[0]) FUZZ_FAIL("CLF_E_LIMIT without a message");
            break; /* classify-run stops here; classify the rest anyway */
        }
        bytes += nb;
    }
    clf_verdict v = {CLF_ACCEPT, NULL, 0};
    clf_status st = clf_eval(ctx, &v);
    fuzz_check_explain(ctx, st, &v, l->name);
    if (st == CLF_E_LIMIT) {
        if (fuzz_verbose()) fprintf(stderr, "fuzz: %s: %s\n", l->name, clf_ctx_errmsg(ctx));
        return;
    }
    if (st != CLF_OK)
        FUZZ_FAIL("%s: clf_eval returned %d (%s): %s", l->name, st, clf_strerror(st),
                  clf_ctx_errmsg(ctx));
    if (v.verdict != CLF_ACCEPT && v.verdict != CLF_REJECT)
        FUZZ_FAIL("clf_eval gave verdict %d", (int)v.verdict);
    if (fuzz_verbose())
        fprintf(stderr, "fuzz: %s: %s %.*s\n", l->name,
                v.verdict == CLF_ACCEPT ? "accept" : "reject",
                v.reason ? (int)v.reason_len : 0, v.reason ? v.reason : "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    if (!progs[0].prog) LLVMFuzzerInitialize(NULL, NULL);
    http_request req;
    char err[512];
    memset(err, 'x', sizeof err);
    http_parse_status st = http_request_parse(&req, (const char *)data, size, err, sizeof err);
    if (st == HTTP_PARSE_OK) {
        check_parsed(&req);
        classify(&progs[0], &req);
        classify(&progs[1], &req);
    } else if (st == HTTP_PARSE_MALFORMED) {
        check_failed(&req, err, sizeof err, size);
        if (fuzz_verbose()) fprintf(stderr, "fuzz: malformed: %s\n", err);
    } else if (st != HTTP_PARSE_NOMEM) {
        FUZZ_FAIL("http_request_parse returned %d", (int)st);
    }
    http_request_free(&req);
    http_request_free(&req);
    return 0;
}
