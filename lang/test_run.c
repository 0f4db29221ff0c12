/*
 * test_run.c: runs the `test` blocks of a .clf file (classifyc --test).
 *
 * Each test builds one request from its directives (method, target,
 * header, peer, trust, rdns) and runs each `expect`ed filter on it with the
 * same loader and interpreter hosts use; a filter other than main may end
 * without a verdict, which `expect F pass` asserts. A test fails at its
 * first expectation that does not hold, naming that line.
 */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "ctx.h"
#include "test_run.h"

/* The value of a test's first directive named `name`, or NULL. */
static const ast *directive(const ast *test, const char *name)
{
    for (const ast *d = test->b; d; d = d->next)
        if (d->kind == AST_TDIR && strcmp(d->str, name) == 0) return d;
    return NULL;
}

static void where(const src_set *src, const ast *n, char *buf, size_t cap)
{
    src_file *f = &src->files[n->file];
    uint32_t line, col;
    src_linecol(f, n->off, &line, &col);
    snprintf(buf, cap, "%s:%u:%u", f->path, line, col);
}

static void show_verdict(char *buf, size_t cap, int verdict, const char *reason, size_t rlen)
{
    const char *v = verdict == AST_V_ACCEPT ? "accept" : verdict == AST_V_REJECT ? "reject" : "pass";
    if (reason) snprintf(buf, cap, "%s \"%.*s\"", v, (int)(rlen > 200 ? 200 : rlen), reason);
    else snprintf(buf, cap, "%s", v);
}

/* Loads the program with the test's trusted proxies (each `trust`). */
static clf_status load_for(const ast *test, const uint8_t *bin, size_t len, clf_program **prog,
                           char *err, size_t errlen)
{
    clf_options *o;
    clf_status st = clf_options_new(&o);
    if (st) return st;
    size_t n = 0, cap = 1;
    for (const ast *d = test->b; d; d = d->next)
        if (d->kind == AST_TDIR && strcmp(d->str, "trust") == 0) cap += d->a->slen + 1;
    char *list = malloc(cap);
    if (!list) {
        clf_options_free(o);
        return CLF_E_NOMEM;
    }
    for (const ast *d = test->b; d; d = d->next)
        if (d->kind == AST_TDIR && strcmp(d->str, "trust") == 0) {
            memcpy(list + n, d->a->str, d->a->slen);
            n += d->a->slen;
            list[n++] = ',';
        }
    st = clf_options_set_trusted_proxies(o, list, n, err, errlen);
    free(list);
    if (!st) st = clf_program_load(bin, len, o, prog, err, errlen);
    clf_options_free(o);
    return st;
}

/* Runs one test; returns 1 passed, 0 failed, -1 could not run. */
static int run_one(const src_set *src, const cg_test *t, const uint8_t *bin, size_t len,
                   FILE *out)
{
    const ast *test = t->node;
    char err[CLF_ERRMSG_SIZE], at[512];
    clf_program *prog = NULL;
    clf_ctx *ctx = NULL;
    int result = -1;
    if (load_for(test, bin, len, &prog, err, sizeof err) ||
        clf_ctx_new(prog, &ctx, err, sizeof err)) {
        where(src, test, at, sizeof at);
        fprintf(out, "ERROR %s: test \"%s\": %s\n", at, test->a->str, err);
        goto done;
    }
    const ast *m = directive(test, "method"), *tg = directive(test, "target"),
              *peer = directive(test, "peer"), *rdns = directive(test, "rdns");
    clf_ctx_set_method(ctx, m ? m->a->str : "GET", m ? m->a->slen : 3);
    const char *target = tg ? tg->a->str : "/";
    size_t tn = tg ? tg->a->slen : 1;
    const char *q = memchr(target, '?', tn);
    clf_ctx_set_path(ctx, target, q ? (size_t)(q - target) : tn);
    if (q) clf_ctx_set_query(ctx, q + 1, tn - (size_t)(q - target) - 1);
    if (peer) clf_ctx_set_peer(ctx, peer->a->str, peer->a->slen); /* bad text: unknown peer */
    if (rdns) clf_ctx_set_rdns(ctx, rdns->a->slen ? rdns->a->str : NULL, rdns->a->slen); /* checked */
    for (const ast *d = test->b; d; d = d->next)
        if (d->kind == AST_TDIR && strcmp(d->str, "header") == 0 &&
            clf_ctx_add_header(ctx, d->a->str, d->a->slen, d->b->str, d->b->slen)) {
            where(src, d, at, sizeof at);
            fprintf(out, "ERROR %s: test \"%s\": %s\n", at, test->a->str, clf_ctx_errmsg(ctx));
            goto done;
        }
    result = 1;
    for (uint32_t i = 0; i < t->nexpects && result == 1; i++) {
        const cg_test_expect *x = &t->expects[i];
        clf_verdict v;
        vm_outcome how;
        if (vm_run(ctx, x->func, &v, &how) != CLF_OK) {
            where(src, x->node, at, sizeof at);
            fprintf(out, "ERROR %s: test \"%s\": %s\n", at, test->a->str, clf_ctx_errmsg(ctx));
            result = -1;
            break;
        }
        int got = how == VM_PASSED ? AST_V_PASS : v.verdict == CLF_ACCEPT ? AST_V_ACCEPT : AST_V_REJECT;
        int same = got == x->verdict &&
                   (!x->reason || (v.reason && v.reason_len == x->reason_len &&
                                   memcmp(v.reason, x->reason, x->reason_len) == 0));
        if (!same) {
            char want[256], have[256];
            show_verdict(want, sizeof want, x->verdict, x->reason, x->reason_len);
            show_verdict(have, sizeof have, got, got == AST_V_PASS ? NULL : v.reason, v.reason_len);
            where(src, x->node, at, sizeof at);
            fprintf(out, "FAIL  %s: test \"%s\": %s: expected %s, got %s\n", at, test->a->str,
                    x->filter, want, have);
            result = 0;
        }
    }
    if (result == 1) fprintf(out, "ok    test \"%s\"\n", test->a->str);
done:
    clf_ctx_free(ctx);
    clf_program_free(prog);
    return result;
}

int cc_run_tests(const src_set *src, const cg_tests *tests, const uint8_t *bin, size_t len, FILE *out)
{
    unsigned passed = 0, failed = 0, errors = 0;
    for (uint32_t i = 0; i < tests->ntests; i++) {
        int r = run_one(src, &tests->tests[i], bin, len, out);
        if (r == 1) passed++;
        else if (r == 0) failed++;
        else errors++;
    }
    fprintf(out, "%u passed, %u failed\n", passed, failed + errors);
    return errors ? 2 : failed ? 1 : 0;
}
