/*
 * fuzz_logline.c: one access log line through classify-run's log parsers
 * (cli/log_nginx.c, cli/log_caddy.c, cli/log_parse.c), then classification
 * with the bundled ruleset examples/main.clf as classify-run --log does.
 *
 * The first byte picks the parser:
 *   0  nginx-combined              3  "$request_method $request_uri ..."
 *   1  caddy-json                  4  "$uri?$args ..." (no request line)
 *   2  auto (the line decides)     5  a template from the input: the bytes
 *                                     up to the first '\n', then the line
 * and the rest (without its last '\n', as log_read.c hands lines over) is
 * the line. The rules come from FUZZ_RULES_PATH or $CLF_FUZZ_RULES, as
 * for fuzz_request.
 *
 * Checked per input, beyond "does not crash":
 *   - a template that compiles parses; one that does not says why;
 *   - on success: a non-empty method and path, no '?' in the path, at most
 *     LOG_MAX_HEADERS headers, each with a non-empty name; every byte of
 *     every slice is read here (instrumented), so AddressSanitizer catches
 *     a slice outside the line, its unescaped copy or the JSON arena;
 *   - on failure: a NUL-terminated, non-empty message;
 *   - log_record_classify returns 0 with a verdict in range, or -1 with a
 *     message; clf_eval_explain agrees with clf_eval (fuzz_check_explain).
 * Inputs over 128 KiB are skipped (a line is at most 64 KiB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "log_read.h"
#include "log_record.h"

#ifndef FUZZ_RULES_PATH
#error "FUZZ_RULES_PATH: the compiled examples/main.clf (fuzz/meson.build)"
#endif

#define FUZZ_MAX_INPUT (128u << 10)

static clf_program *prog;
static clf_ctx *ctx;
static uint32_t main_filter;
static char *line; /* LOG_MAX_LINE + 1, as log_read.c's lines are writable */

static const char *const formats[] = {
    "nginx-combined",
    "caddy-json",
    NULL,
    "$remote_addr $request_method $request_uri \"$http_user_agent\" \"${http_x_forwarded_for}\"",
    "$remote_addr|$uri?$args|$host|$http_accept_language|$status",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CLF_FUZZ_RULES");
    if (!path || !*path) path = FUZZ_RULES_PATH;
    size_t len = 0;
    uint8_t *bytes = fuzz_read_file(path, &len);
    char err[CLF_ERRMSG_SIZE];
    if (!bytes) {
        perror(path);
        exit(1);
    }
    if (clf_program_load(bytes, len, NULL, &prog, err, sizeof err) != CLF_OK ||
        clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK ||
        clf_program_find_filter(prog, "main", 4, &main_filter, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "fuzz_logline: %s: %s\n", path, err);
        exit(1);
    }
    free(bytes);
    line = malloc(LOG_MAX_LINE + 1);
    if (!line) exit(1);
    return 0;
}

static unsigned touch(http_slice s, const char *what)
{
    return fuzz_touch(s.ptr, s.len, what);
}

static void check_record(const log_record *r)
{
    volatile unsigned sum = 0;
    sum += touch(r->method, "method") + touch(r->target, "target") + touch(r->path, "path") +
           touch(r->query, "query") + touch(r->client, "client") + touch(r->ua, "ua");
    if (r->method.len == 0) FUZZ_FAIL("empty method");
    if (r->path.len == 0) FUZZ_FAIL("empty path");
    if (memchr(r->path.ptr, '?', r->path.len))
        FUZZ_FAIL("path holds a '?': %.*s", (int)r->path.len, r->path.ptr);
    if (r->nheaders > LOG_MAX_HEADERS) FUZZ_FAIL("%zu headers", r->nheaders);
    for (size_t i = 0; i < r->nheaders; i++) {
        sum += touch(r->headers[i].name, "header name") + touch(r->headers[i].value, "header value");
        if (r->headers[i].name.len == 0) FUZZ_FAIL("header %zu has an empty name", i);
    }
    (void)sum;
}

static void check_message(const char *err, size_t errlen, const char *what)
{
    if (!memchr(err, '\0', errlen) || !err[0])
        FUZZ_FAIL("%s failed without a NUL-terminated message", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > FUZZ_MAX_INPUT) return 0;
    if (!prog) LLVMFuzzerInitialize(NULL, NULL);
    unsigned pick = data[0] % 6;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    char tmpl[512];
    const char *format = pick < 5 ? formats[pick] : NULL;
    if (pick == 5) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n >= sizeof tmpl || memchr(p, '\0', n)) return 0;
        memcpy(tmpl, p, n);
        tmpl[n] = '\0';
        format = tmpl;
        p = nl ? nl + 1 : end;
    }
    size_t len = (size_t)(end - p);
    if (len > 0 && p[len - 1] == '\n') len--;
    if (len > LOG_MAX_LINE) return 0;
    memcpy(line, p, len);
    line[len] = '\0';

    char err[256];
    memset(err, 'x', sizeof err);
    /* The fixed formats' parsers are made once (Caddy's holds a 4 MiB
     * arena); auto decides on its first line and a template is the
     * input's: those are new each time. */
    static log_parser *fixed[5];
    int cached = pick != 2 && pick < 5;
    log_parser *parser = cached ? fixed[pick] : NULL;
    if (parser == NULL && log_parser_new(format, &parser, err, sizeof err) != 0) {
        check_message(err, sizeof err, "log_parser_new");
        if (pick < 5) FUZZ_FAIL("the built-in format %d does not compile: %s", pick, err);
        return 0;
    }
    static log_record rec; /* 6 KiB: not on the stack of every call */
    memset(err, 'x', sizeof err);
    if (log_parser_parse(parser, line, len, &rec, err, sizeof err) != 0) {
        check_message(err, sizeof err, "log_parser_parse");
        if (fuzz_verbose()) fprintf(stderr, "fuzz: malformed: %s\n", err);
        if (cached) fixed[pick] = parser;
        else log_parser_free(parser);
        return 0;
    }
    check_record(&rec);
    clf_verdict v = {CLF_ACCEPT, NULL, 0};
    char cerr[CLF_ERRMSG_SIZE + 128];
    memset(cerr, 'x', sizeof cerr);
    if (log_record_classify(ctx, main_filter, &rec, NULL, NULL, NULL, &v, cerr, sizeof cerr) != 0) {
        check_message(cerr, sizeof cerr, "log_record_classify");
        if (fuzz_verbose()) fprintf(stderr, "fuzz: not classified: %s\n", cerr);
    } else {
        if (v.verdict != CLF_ACCEPT && v.verdict != CLF_REJECT)
            FUZZ_FAIL("verdict %d", (int)v.verdict);
        fuzz_check_explain(ctx, CLF_OK, &v, "log line");
        if (fuzz_verbose())
            fprintf(stderr, "fuzz: %s %.*s\n", v.verdict == CLF_ACCEPT ? "accept" : "reject",
                    v.reason ? (int)v.reason_len : 0, v.reason ? v.reason : "");
    }
    if (cached) fixed[pick] = parser;
    else log_parser_free(parser);
    return 0;
}
