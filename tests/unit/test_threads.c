/*
 * test_threads.c: one program shared by four threads, each with its own
 * context, gives exactly the verdicts of a single-threaded run (the
 * threading contract in classify.h). The CI's sanitizer build runs it too.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define NREQ 3000
#define NTHREADS 4

static const char *const SRC =
    "const AI = [\"GPTBot\", \"CCBot\", \"ClaudeBot\", \"LCC\"]i\n"
    "filter main(r: Request) {\n"
    "  let ua = r.header(\"user-agent\")\n"
    "  if ua == \"\" { reject \"no-ua\" }\n"
    "  if ua.contains_word(AI) { reject \"ai\" }\n"
    "  if r.path.matches(/^\\/wp-admin/) { reject \"probe\" }\n"
    "  if ua.lower().contains(\"python\") { reject \"script\" }\n"
    "  if r.header(\"accept\") == \"a, b\" { accept \"joined\" }\n"
    "  accept\n"
    "}\n";

static char uas[NREQ][96];
static char paths[NREQ][32];
static int expected[NREQ]; /* verdict * 8 + reason index */
static clf_program *prog;

static int code(const clf_verdict *v)
{
    static const char *const reasons[] = {"no-ua", "ai", "probe", "script", "joined"};
    int r = 7;
    for (int i = 0; i < 5; i++)
        if (v->reason && strlen(reasons[i]) == v->reason_len &&
            memcmp(v->reason, reasons[i], v->reason_len) == 0)
            r = i;
    return (int)v->verdict * 8 + r;
}

static int classify(clf_ctx *ctx, int i)
{
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, paths[i], strlen(paths[i]));
    if (uas[i][0]) clf_ctx_add_header(ctx, "User-Agent", 10, uas[i], strlen(uas[i]));
    if (i % 3 == 0) {
        clf_ctx_add_header(ctx, "Accept", 6, "a", 1);
        clf_ctx_add_header(ctx, "accept", 6, "b", 1);
    }
    clf_verdict v;
    if (clf_eval(ctx, &v) != CLF_OK) return -1;
    return code(&v);
}

static void *worker(void *arg)
{
    (void)arg;
    clf_ctx *ctx;
    if (clf_ctx_new(prog, &ctx, NULL, 0) != CLF_OK) return (void *)1;
    intptr_t bad = 0;
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < NREQ; i++)
            if (classify(ctx, i) != expected[i]) bad++;
    clf_ctx_free(ctx);
    return (void *)bad;
}

Test(threads, shared_program_private_contexts)
{
    static const char *const words[] = {"Mozilla/5.0", "GPTBot/1.1", "SLCC1", "(LCC)", "python-requests",
                                        "Chrome/120.0", "ccbot", "Safari", "", "Python"};
    for (int i = 0; i < NREQ; i++) {
        snprintf(uas[i], sizeof uas[i], "%s %s %s", words[i % 10], words[(i / 10) % 10], words[(i / 100) % 10]);
        if (i % 17 == 0) uas[i][0] = 0;
        snprintf(paths[i], sizeof paths[i], i % 11 == 0 ? "/wp-admin/%d" : "/page/%d", i);
    }
    prog = h_program(SRC);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(prog, &ctx, NULL, 0), CLF_OK);
    int seen[16] = {0};
    for (int i = 0; i < NREQ; i++) {
        expected[i] = classify(ctx, i);
        cr_assert_geq(expected[i], 0);
        seen[expected[i] % 8]++;
    }
    clf_ctx_free(ctx);
    for (int r = 0; r < 5; r++) cr_assert_gt(seen[r], 0, "reason %d never produced", r);

    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) cr_assert_eq(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < NTHREADS; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        cr_assert_eq((intptr_t)bad, 0, "thread %d disagreed on %ld requests", i, (long)(intptr_t)bad);
    }
    clf_program_free(prog);
}
