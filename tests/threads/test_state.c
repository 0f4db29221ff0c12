/*
 * test_state.c: the state store under threads (TSan in .ci/run): four
 * threads classify with contexts of their own on one store, on 16 keys
 * they all share, while a fifth collects the changes for a sync layer.
 * Afterwards every count is there (exactly: one window, a fixed clock),
 * and the collected deltas add up to the counts. Prints TAP.
 *
 * usage: test_state RULES.bin
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

#define THREADS 4
#define PER_THREAD 20000
#define KEYS 16
#define NOW_MS INT64_C(1700000000000)

static clf_program *prog;
static clf_store *store;
static atomic_int done;
static uint64_t collected;

static void *worker(void *arg)
{
    clf_ctx *ctx;
    char err[CLF_ERRMSG_SIZE], path[16];
    if (clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) return (void *)1;
    clf_ctx_set_store(ctx, store);
    uintptr_t bad = 0;
    for (int i = 0; i < PER_THREAD; i++) {
        int n = snprintf(path, sizeof path, "/k%d", (i + (int)(uintptr_t)arg) % KEYS);
        clf_verdict v;
        clf_ctx_reset(ctx);
        clf_ctx_set_path(ctx, path, (size_t)n);
        clf_ctx_set_time_ms(ctx, NOW_MS);
        if (clf_eval(ctx, &v) != CLF_OK || v.verdict != CLF_ACCEPT) bad++;
    }
    clf_ctx_free(ctx);
    return (void *)bad;
}

static void on_delta(void *ud, const clf_state_delta *d)
{
    (void)ud;
    if (d->kind == CLF_STATE_COUNTER) collected += d->cur + d->prev;
}

static void *collector(void *arg)
{
    (void)arg;
    uint32_t cursor = 0;
    while (!atomic_load(&done)) clf_store_collect(store, &cursor, 64, on_delta, NULL);
    for (int pass = 0; pass < 2; pass++) { /* the rest, from wherever it stopped */
        do clf_store_collect(store, &cursor, 64, on_delta, NULL);
        while (cursor != 0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    FILE *f = fopen(argv[1], "rb");
    static char buf[1 << 20];
    size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    char err[CLF_ERRMSG_SIZE];
    printf("1..4\n");
    if (clf_program_load(buf, len, NULL, &prog, err, sizeof err) != CLF_OK ||
        clf_store_new(UINT64_C(1) << 20, NULL, &store, err, sizeof err) != CLF_OK) {
        printf("Bail out! %s\n", err);
        return 1;
    }
    pthread_t t[THREADS], c;
    pthread_create(&c, NULL, collector, NULL);
    for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    uintptr_t bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (uintptr_t)r;
    }
    atomic_store(&done, 1);
    pthread_join(c, NULL);
    printf("%s 1 - %d threads classified %d requests each, all accepted (%lu not)\n",
           bad ? "not ok" : "ok", THREADS, PER_THREAD, (unsigned long)bad);
    int exact = 1;
    for (int k = 0; k < KEYS; k++) {
        char key[64];
        int64_t v = -1, marked = -1;
        int n = snprintf(key, sizeof key, "c:60:hits:str:/k%d", k);
        clf_store_peek(store, key, (size_t)n, NOW_MS, &v);
        n = snprintf(key, sizeof key, "m:3600:seen:str:/k%d", k);
        clf_store_peek(store, key, (size_t)n, NOW_MS, &marked);
        if (v != THREADS * PER_THREAD / KEYS || marked != 1) {
            exact = 0;
            printf("# key /k%d: count %lld, marked %lld\n", k, (long long)v, (long long)marked);
        }
    }
    printf("%s 2 - every key counted %d times, exactly, and marked\n", exact ? "ok" : "not ok",
           THREADS * PER_THREAD / KEYS);
    printf("%s 3 - the collected deltas add up to the counts (%llu)\n",
           collected == THREADS * PER_THREAD ? "ok" : "not ok", (unsigned long long)collected);
    clf_store_stats st;
    clf_store_get_stats(store, &st);
    printf("%s 4 - no state call gave up on a lock (%llu), %llu entries\n",
           st.busy == 0 && st.used == 3 * KEYS ? "ok" : "not ok", (unsigned long long)st.busy,
           (unsigned long long)st.used);
    clf_store_free(store);
    clf_program_free(prog);
    return 0;
}
