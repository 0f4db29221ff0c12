#define _DEFAULT_SOURCE 1 /* mkstemps */
/* harness.c: see harness.h. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "harness.h"

int h_no_inline;

uint8_t *h_compile(const char *source, size_t *len, char **diags)
{
    char path[] = "/tmp/clf-test-XXXXXX.clf";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    size_t n = strlen(source);
    cr_assert(write(fd, source, n) == (ssize_t)n);
    close(fd);
    cc_options o;
    cc_options_init(&o);
    o.no_inline = h_no_inline;
    arena ar = {0};
    src_set src = {.ar = &ar};
    uint8_t *bin = NULL;
    *len = 0;
    int rc = cc_compile(path, &o, &src, &ar, NULL, &bin, len);
    if (diags) {
        char *buf = NULL;
        size_t blen = 0;
        FILE *f = open_memstream(&buf, &blen);
        src_print(&src, f);
        fclose(f);
        *diags = buf;
    }
    src_free(&src);
    arena_free(&ar);
    unlink(path);
    return rc == 0 ? bin : NULL;
}

clf_program *h_program(const char *source)
{
    return h_program_opts(source, NULL);
}

clf_program *h_program_opts(const char *source, const clf_options *opts)
{
    size_t len;
    char *diags = NULL;
    uint8_t *bin = h_compile(source, &len, &diags);
    cr_assert(bin != NULL, "compile failed:\n%s", diags ? diags : "");
    free(diags);
    clf_program *p = NULL;
    char err[CLF_ERRMSG_SIZE];
    clf_status st = clf_program_load(bin, len, opts, &p, err, sizeof err);
    free(bin);
    cr_assert_eq(st, CLF_OK, "load failed: %s", err);
    return p;
}

clf_program *h_program_trusted(const char *source, const char *trusted)
{
    clf_options *o = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    cr_assert_eq(clf_options_set_trusted_proxies(o, trusted, strlen(trusted), err, sizeof err),
                 CLF_OK, "trusted proxies \"%s\": %s", trusted, err);
    clf_program *p = h_program_opts(source, o);
    clf_options_free(o);
    return p;
}

h_result h_classify(clf_ctx *ctx, const char *request)
{
    return h_classify_peer(ctx, request, NULL);
}

h_result h_classify_peer(clf_ctx *ctx, const char *request, const char *peer)
{
    /* The slices must outlive clf_eval: keep a copy for the call. */
    static char buf[1 << 16];
    h_result r = {0};
    snprintf(buf, sizeof buf, "%s", request);
    clf_ctx_reset(ctx);
    char *line = buf, *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *sp = strchr(line, ' ');
    cr_assert(sp, "request line needs METHOD PATH");
    *sp = 0;
    clf_ctx_set_method(ctx, line, strlen(line));
    char *target = sp + 1, *q = strchr(target, '?');
    if (q) {
        *q = 0;
        clf_ctx_set_query(ctx, q + 1, strlen(q + 1));
    }
    clf_ctx_set_path(ctx, target, strlen(target));
    while (nl) {
        line = nl + 1;
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (!*line) continue;
        char *colon = strchr(line, ':');
        cr_assert(colon, "header line needs a colon: %s", line);
        char *v = colon + 1;
        while (*v == ' ') v++;
        clf_ctx_add_header(ctx, line, (size_t)(colon - line), v, strlen(v));
    }
    if (peer) clf_ctx_set_peer(ctx, peer, strlen(peer)); /* bad text: unknown peer */
    clf_verdict v;
    r.status = clf_eval(ctx, &v);
    if (r.status == CLF_OK) {
        r.verdict = v.verdict;
        if (v.reason) snprintf(r.reason, sizeof r.reason, "%.*s", (int)v.reason_len, v.reason);
    }
    return r;
}

h_result h_run(const char *source, const char *request)
{
    clf_program *p = h_program(source);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    h_result r = h_classify(ctx, request);
    clf_ctx_free(ctx);
    clf_program_free(p);
    return r;
}

const char *h_verdict_text(const clf_program *p, const char *request)
{
    static char out[160];
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    h_result r = h_classify(ctx, request);
    cr_assert_eq(r.status, CLF_OK, "eval failed: %s", clf_strerror(r.status));
    snprintf(out, sizeof out, "%s:%s", r.verdict == CLF_ACCEPT ? "accept" : "reject", r.reason);
    clf_ctx_free(ctx);
    return out;
}

static void append(void *ud, const char *text, size_t len)
{
    fwrite(text, 1, len, (FILE *)ud);
}

char *h_disasm(const clf_program *prog)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    clf_program_disassemble(prog, append, f);
    fclose(f);
    return buf;
}
