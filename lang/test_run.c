/*
 * test_run.c: runs the `test` blocks of a .clf file (classifyc --test).
 *
 * Each test builds one request from its directives (method, target,
 * header, peer, trust, rdns) and runs each `expect`ed filter on it with the
 * same loader and interpreter hosts use; a filter other than main may end
 * without a verdict, which `expect F pass` asserts. A test fails at its
 * first expectation that does not hold, naming that line. A test with
 * `uas "FILE"` runs once per User-Agent line of FILE: its `expect`s must
 * hold for every one, its `expect-rate`s over all of them (the rate of
 * requests with that verdict, at most or at least a percentage).
 *
 * State (docs/language.md, "State in tests"): every test has a store of
 * its own, empty but for its `state` lines; the request's time is its
 * `clock` (TEST_CLOCK without one); `repeat "N"` classifies the request
 * N - 1 times with the first expect's filter before the expects run; and
 * `expect-state` lines are checked on the store afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "ctx.h"
#include "ipaddr.h"
#include "store.h"
#include "test_run.h"

/* A test's time without `clock`: 2023-11-14 22:13:20 UTC, fixed so that
 * windows and half-lives fall the same way on every run. */
#define TEST_CLOCK INT64_C(1700000000)
#define TEST_STORE_BYTES (UINT64_C(1) << 20)

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

/* Sets up the test's request in ctx (reset first), with User-Agent `ua`
 * (n bytes) when ua is not NULL. Returns 0, or -1 with a line printed. */
static int set_request(const src_set *src, const ast *test, clf_ctx *ctx, const char *ua,
                       size_t n, FILE *out)
{
    char at[512];
    clf_ctx_reset(ctx);
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
            return -1;
        }
    if (ua && clf_ctx_add_header(ctx, "user-agent", 10, ua, n)) {
        where(src, directive(test, "uas"), at, sizeof at);
        fprintf(out, "ERROR %s: test \"%s\": User-Agent \"%.80s\": %s\n", at, test->a->str, ua,
                clf_ctx_errmsg(ctx));
        return -1;
    }
    return 0;
}

static int64_t dec(const ast *s)
{
    int64_t v = 0;
    for (uint32_t i = 0; i < s->slen; i++) v = v * 10 + (s->str[i] - '0');
    return v;
}

/* The store key of a `state` or `expect-state` line's "NAME KEY", from
 * the slot of that name in prog; 0 with a line printed when the program
 * has no state of that name or the key does not fit its type. */
static size_t state_key(const src_set *src, const ast *test, const ast *d,
                        const clf_program *prog, char *key, FILE *out)
{
    const char *s = d->a->str, *sp = memchr(s, ' ', d->a->slen);
    size_t nn = (size_t)(sp - s), kn = d->a->slen - nn - 1;
    const char *kt = sp + 1;
    char at[512];
    where(src, d, at, sizeof at);
    for (uint32_t i = 0; i < prog->nslots; i++) {
        const vm_slot *S = &prog->slots[i];
        const vm_const *nm = &prog->consts[S->name];
        if (nm->len != nn || memcmp(nm->str, s, nn) != 0) continue;
        vm_iprange r;
        int64_t iv = 0;
        int ok = 1;
        if (S->keytype == VM_KEY_IP) {
            ok = vm_iprange_parse(kt, kn, &r);
        } else if (S->keytype == VM_KEY_INT) {
            char buf[24], *end;
            ok = kn > 0 && kn < sizeof buf;
            if (ok) {
                memcpy(buf, kt, kn);
                buf[kn] = 0;
                iv = strtoll(buf, &end, 10);
                ok = *end == 0;
            }
        }
        size_t n = ok ? vm_state_key(key, (int)S->kind, S->param, nm->str, nm->len,
                                     (int)S->keytype, S->keytype == VM_KEY_IP ? (const char *)r.lo
                                                                              : kt,
                                     S->keytype == VM_KEY_IP ? 16 : kn, iv)
                      : 0;
        if (!n)
            fprintf(out, "ERROR %s: test \"%s\": \"%.*s\" is not a key of '%.*s' (%s)\n", at,
                    test->a->str, (int)kn, kt, (int)nn, s,
                    S->keytype == VM_KEY_IP ? "an address or network" : S->keytype == VM_KEY_INT
                    ? "an int" : "a str");
        return n;
    }
    fprintf(out, "ERROR %s: test \"%s\": the rules use no state named '%.*s'\n", at,
            test->a->str, (int)nn, s);
    return 0;
}

/* Gives the test's store its `state` lines; -1 (printed) on error. */
static int set_state(const src_set *src, const ast *test, const clf_program *prog,
                     clf_store *store, int64_t now_ms, FILE *out)
{
    char key[CLF_STATE_KEY_MAX];
    for (const ast *d = test->b; d; d = d->next) {
        if (d->kind != AST_TDIR || strcmp(d->str, "state") != 0) continue;
        size_t n = state_key(src, test, d, prog, key, out);
        if (!n) return -1;
        if (clf_store_poke(store, key, n, now_ms, dec(d->b)) != CLF_OK) {
            char at[512];
            where(src, d, at, sizeof at);
            fprintf(out, "ERROR %s: test \"%s\": the store refused this state\n", at,
                    test->a->str);
            return -1;
        }
    }
    return 0;
}

/* Checks the test's `expect-state` lines: 1 all hold, 0 one does not, -1
 * an error (printed). */
static int check_state(const src_set *src, const ast *test, const clf_program *prog,
                       clf_store *store, int64_t now_ms, FILE *out)
{
    char key[CLF_STATE_KEY_MAX], at[512];
    for (const ast *d = test->b; d; d = d->next) {
        if (d->kind != AST_TDIR || strcmp(d->str, "expect-state") != 0) continue;
        size_t n = state_key(src, test, d, prog, key, out);
        if (!n) return -1;
        int64_t v = 0;
        clf_store_peek(store, key, n, now_ms, &v);
        if (v != dec(d->b)) {
            where(src, d, at, sizeof at);
            fprintf(out, "FAIL  %s: test \"%s\": state %.*s is %lld, expected %.*s\n", at,
                    test->a->str, (int)d->a->slen, d->a->str, (long long)v, (int)d->b->slen,
                    d->b->str);
            return 0;
        }
    }
    return 1;
}

/* Runs expectation x on the request in ctx: 1 it holds, 0 not (*got and
 * *v say what happened), -1 the run failed (a line printed). */
static int check_one(const src_set *src, const ast *test, clf_ctx *ctx, const cg_test_expect *x,
                     int *got, clf_verdict *v, FILE *out)
{
    vm_outcome how;
    if (vm_run(ctx, x->func, v, &how) != CLF_OK) {
        char at[512];
        where(src, x->node, at, sizeof at);
        fprintf(out, "ERROR %s: test \"%s\": %s\n", at, test->a->str, clf_ctx_errmsg(ctx));
        return -1;
    }
    *got = how == VM_PASSED ? AST_V_PASS : v->verdict == CLF_ACCEPT ? AST_V_ACCEPT : AST_V_REJECT;
    return *got == x->verdict &&
           (!x->reason || (v->reason && v->reason_len == x->reason_len &&
                           memcmp(v->reason, x->reason, x->reason_len) == 0));
}

static void fail_line(const src_set *src, const ast *test, const cg_test_expect *x, int got,
                      const clf_verdict *v, const char *ua, size_t n, FILE *out)
{
    char want[256], have[256], at[512];
    show_verdict(want, sizeof want, x->verdict, x->reason, x->reason_len);
    show_verdict(have, sizeof have, got, got == AST_V_PASS ? NULL : v->reason, v->reason_len);
    where(src, x->node, at, sizeof at);
    fprintf(out, "FAIL  %s: test \"%s\": %s: expected %s, got %s", at, test->a->str, x->filter,
            want, have);
    if (ua) fprintf(out, " for User-Agent \"%.*s\"", (int)(n > 200 ? 200 : n), ua);
    fputc('\n', out);
}

/* The lines of a test's `uas` file, read relative to the directory of the
 * file the test is in (an absolute path as it is). malloc'd text, or NULL
 * with a line printed. */
static char *read_uas(const src_set *src, const ast *test, const ast *d, size_t *len, FILE *out)
{
    const char *base = src->files[test->file].path, *slash = strrchr(base, '/');
    size_t dn = d->a->str[0] == '/' || !slash ? 0 : (size_t)(slash - base) + 1;
    char *path = malloc(dn + d->a->slen + 1);
    char at[512], err[256];
    if (!path) return NULL;
    memcpy(path, base, dn);
    memcpy(path + dn, d->a->str, d->a->slen);
    path[dn + d->a->slen] = '\0';
    char *text = mod_read_file(path, UINT64_C(1) << 30, len, err, sizeof err);
    if (!text) {
        where(src, d, at, sizeof at);
        fprintf(out, "ERROR %s: test \"%s\": uas %s: %s\n", at, test->a->str, path, err);
    }
    free(path);
    return text;
}

/* Runs one test; returns 1 passed, 0 failed, -1 could not run. Without
 * `uas`, one request; with it, one per User-Agent line: plain expects
 * must hold for each, expect-rate ones over all of them. */
static int run_one(const src_set *src, const cg_test *t, const uint8_t *bin, size_t len,
                   FILE *out)
{
    const ast *test = t->node, *uas = directive(test, "uas");
    char err[CLF_ERRMSG_SIZE], at[512];
    clf_program *prog = NULL;
    clf_ctx *ctx = NULL;
    clf_store *store = NULL;
    const ast *clock = directive(test, "clock"), *rep = directive(test, "repeat");
    int64_t now_ms = (clock ? dec(clock->a) : TEST_CLOCK) * 1000;
    static const uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    char *text = NULL;
    size_t tlen = 0, lines = 0;
    uint64_t *hits = calloc(t->nexpects ? t->nexpects : 1, sizeof *hits);
    int result = -1;
    if (!hits) goto done;
    if (load_for(test, bin, len, &prog, err, sizeof err) ||
        clf_ctx_new(prog, &ctx, err, sizeof err) ||
        clf_store_new(TEST_STORE_BYTES, seed, &store, err, sizeof err)) {
        where(src, test, at, sizeof at);
        fprintf(out, "ERROR %s: test \"%s\": %s\n", at, test->a->str, err);
        goto done;
    }
    clf_ctx_set_store(ctx, store);
    if (set_state(src, test, prog, store, now_ms, out)) goto done;
    if (uas && !(text = read_uas(src, test, uas, &tlen, out))) goto done;
    result = 1;
    for (size_t pos = 0; result == 1 && (uas ? pos < tlen : pos == 0); ) {
        const char *ua = NULL;
        size_t n = 0;
        if (uas) {
            const char *nl = memchr(text + pos, '\n', tlen - pos);
            size_t end = nl ? (size_t)(nl - text) : tlen;
            ua = text + pos;
            n = end - pos;
            pos = end + 1;
            if (n && ua[n - 1] == '\r') n--;
            if (!n) continue;
            lines++;
        } else {
            pos = 1;
        }
        if (set_request(src, test, ctx, ua, n, out)) {
            result = -1;
            break;
        }
        clf_ctx_set_time_ms(ctx, now_ms);
        for (int64_t k = 1; rep && t->nexpects && k < dec(rep->a) && result == 1; k++) {
            int got;
            clf_verdict v;
            if (check_one(src, test, ctx, &t->expects[0], &got, &v, out) < 0) result = -1;
            if (set_request(src, test, ctx, ua, n, out)) result = -1;
            clf_ctx_set_time_ms(ctx, now_ms);
        }
        for (uint32_t i = 0; i < t->nexpects && result == 1; i++) {
            const cg_test_expect *x = &t->expects[i];
            int got;
            clf_verdict v;
            int r = check_one(src, test, ctx, x, &got, &v, out);
            if (r < 0) result = -1;
            else if (x->rate) hits[i] += (uint64_t)r;
            else if (!r) {
                fail_line(src, test, x, got, &v, ua, n, out);
                result = 0;
            }
        }
    }
    char summary[1024] = "";
    for (uint32_t i = 0; i < t->nexpects && result == 1; i++) {
        const cg_test_expect *x = &t->expects[i];
        if (!x->rate) continue;
        double pct = lines ? 100.0 * (double)hits[i] / (double)lines : 0;
        int le = x->rate == AST_F_RATE_LE;
        int holds = lines && (le ? pct <= x->percent : pct >= x->percent);
        char want[256];
        show_verdict(want, sizeof want, x->verdict, x->reason, x->reason_len);
        if (!holds) {
            where(src, x->node, at, sizeof at);
            fprintf(out, "FAIL  %s: test \"%s\": %s: %s for %.3f%% of %zu User-Agents (%llu), "
                         "expected %s %g%%\n", at, test->a->str, x->filter, want, pct, lines,
                    (unsigned long long)hits[i], le ? "at most" : "at least", x->percent);
            result = 0;
        } else {
            size_t k = strlen(summary);
            if (k + 300 < sizeof summary)
                snprintf(summary + k, sizeof summary - k, "%s%.200s %.3f%% of %zu", k ? "; " : ": ",
                         want, pct, lines);
        }
    }
    if (result == 1) result = check_state(src, test, prog, store, now_ms, out);
    if (result == 1) fprintf(out, "ok    test \"%s\"%s\n", test->a->str, summary);
done:
    free(text);
    clf_ctx_free(ctx);
    ctx = NULL;
    clf_store_free(store);
    free(hits);
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
