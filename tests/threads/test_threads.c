/*
 * test_threads.c: the threading contract of classify.h, for the
 * ThreadSanitizer build (TAP). One program is shared by 4 threads; each
 * classifies every request with its own context; every thread's verdicts
 * must equal a single-threaded run's. No test framework: Criterion's own
 * threads do not run under TSan.
 *
 * usage: test_threads RULES.bin UA_FILE
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

#define NTHREADS 4
#define ROUNDS 3

static clf_program *prog;
static char **uas;
static size_t nuas;
static int *expected;

static const char *const paths[] = {"/", "/robots.txt", "/wp-admin/", "/blog/post", "/.env"};

/* verdict * 64 + a hash of the reason, or -1 on error. */
static int classify(clf_ctx *ctx, size_t i)
{
    const char *path = paths[i % 5];
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, path, strlen(path));
    clf_ctx_add_header(ctx, "Host", 4, "example.org", 11);
    if (uas[i][0]) clf_ctx_add_header(ctx, "User-Agent", 10, uas[i], strlen(uas[i]));
    clf_verdict v;
    if (clf_eval(ctx, &v) != CLF_OK) return -1;
    unsigned h = 0;
    for (size_t k = 0; v.reason && k < v.reason_len; k++) h = h * 31 + (unsigned char)v.reason[k];
    return (int)v.verdict * 64 + (int)(h % 64);
}

static void *worker(void *arg)
{
    long *bad = arg;
    clf_ctx *ctx;
    if (clf_ctx_new(prog, &ctx, NULL, 0) != CLF_OK) {
        *bad = -1;
        return NULL;
    }
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < nuas; i++)
            if (classify(ctx, i) != expected[i]) (*bad)++;
    clf_ctx_free(ctx);
    return NULL;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    if (b) b[n] = 0;
    *len = n;
    return b;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_threads RULES.bin UA_FILE\n");
        return 2;
    }
    size_t rlen, ulen;
    char *rules = slurp(argv[1], &rlen), *text = slurp(argv[2], &ulen);
    if (!rules || !text) {
        fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
        return 2;
    }
    char err[CLF_ERRMSG_SIZE];
    if (clf_program_load(rules, rlen, NULL, &prog, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        return 2;
    }
    for (char *p = text; *p; p++) nuas += *p == '\n';
    uas = calloc(nuas + 1, sizeof *uas);
    expected = calloc(nuas + 1, sizeof *expected);
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < nuas; line = strtok(NULL, "\n")) uas[n++] = line;
    nuas = n;

    clf_ctx *ctx;
    if (clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) return 2;
    int errors = 0, rejected = 0;
    for (size_t i = 0; i < nuas; i++) {
        expected[i] = classify(ctx, i);
        errors += expected[i] < 0;
        rejected += expected[i] >= 0 && expected[i] < 64;
    }
    clf_ctx_free(ctx);
    printf("ok 1 - single-threaded run over %zu requests (%d rejected, %d errors)\n", nuas, rejected, errors);

    pthread_t t[NTHREADS];
    long bad[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, worker, &bad[i]);
    int failed = errors != 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        printf("%s %d - thread %d: %d x %zu requests, verdicts equal to the single-threaded run"
               " (%ld differ)\n", bad[i] ? "not ok" : "ok", i + 2, i, ROUNDS, nuas, bad[i]);
        failed |= bad[i] != 0;
    }
    printf("1..%d\n", NTHREADS + 1);
    clf_program_free(prog);
    free(uas);
    free(expected);
    free(text);
    free(rules);
    return failed;
}
