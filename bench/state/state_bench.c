/*
 * state_bench.c: what the state store costs (docs/performance.md,
 * "State"). Figures, not a test:
 *
 *  1. a count and a score update straight on the built-in store
 *     (vm_store_count, vm_store_score): ns per call, over 100,000 keys
 *     and on one hot key, from one thread and from two threads at once;
 *  2. a request through the default policy with and without
 *     stdlib/rate.clf around it (examples/rate/site.clf against
 *     examples/stances/default/site.clf): median and p99 ns, each request
 *     timed, clients rotating over 10,000 addresses;
 *  3. memory: the process's RSS before the store, with it (64 MiB), and
 *     after a flood of 10,000,000 distinct addresses through the rate
 *     rules, with the store's figures.
 *
 *   build/bench/state/state-bench [FLOOD]     all three, FLOOD addresses (10,000,000)
 *   build/bench/state/state-bench policy      2 only (for a profiler)
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "store.h"

#define NKEYS 100000
#define OPS 2000000

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "state-bench: %s: %s\n", what, err);
    exit(1);
}

/* This thread's CPU time: the machine may be busy with other work, and
 * a call's cost is the CPU it takes. */
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) v = atol(line + 6);
    if (f) fclose(f);
    return v;
}

static char (*keys)[48];
static size_t *keylens;
static clf_store *store;

typedef struct job {
    int score, hot, seed;
    double ns;
} job;

static void *hammer(void *arg)
{
    job *j = arg;
    unsigned x = (unsigned)j->seed * 2654435761u + 1;
    int64_t out;
    double v;
    double t0 = cpu_ns();
    for (int i = 0; i < OPS; i++) {
        x = x * 1103515245u + 12345u;
        unsigned ki = j->hot ? 0 : (x >> 8) % NKEYS;
        const char *k = keys[ki];
        size_t n = keylens[ki];
        if (j->score) vm_store_score(store, k, n, 600, 1, 1700000000000 + i / 1000, &v);
        else vm_store_count(store, k, n, 60, 1, 1700000000000 + i / 1000, &out);
    }
    j->ns = (cpu_ns() - t0) / OPS;
    return NULL;
}

static void store_ops(void)
{
    char err[CLF_ERRMSG_SIZE];
    keys = malloc(sizeof *keys * NKEYS);
    keylens = malloc(sizeof *keylens * NKEYS);
    for (int i = 0; i < NKEYS; i++)
        keylens[i] = (size_t)snprintf(keys[i], sizeof keys[i], "c:60:pages:ip:10.%d.%d.0",
                                      i / 256 % 256, i % 256);
    if (clf_store_new(UINT64_C(64) << 20, NULL, &store, err, sizeof err)) die("store", err);
    printf("1. the store alone: CPU ns per call (64 MiB store, %d calls per thread; with two\n"
           "   threads at once, each thread's, and the wall time per call of both together)\n", OPS);
    printf("   %-34s %12s %12s %12s\n", "", "1 thread", "2 threads", "2 thr. wall");
    for (int score = 0; score < 2; score++)
        for (int hot = 0; hot < 2; hot++) {
            job one = {score, hot, 1, 0};
            hammer(&one); /* warm */
            hammer(&one);
            job two[2] = {{score, hot, 2, 0}, {score, hot, 3, 0}};
            pthread_t t[2];
            double t0 = now_ns();
            for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, hammer, &two[i]);
            for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
            double wall = (now_ns() - t0) / (2.0 * OPS);
            char label[64];
            snprintf(label, sizeof label, "%s, %s", score ? "score_add" : "count",
                     hot ? "one hot key" : "100,000 keys");
            printf("   %-34s %12.1f %12.1f %12.1f\n", label, one.ns, (two[0].ns + two[1].ns) / 2,
                   wall);
        }
    clf_store_free(store);
}

static clf_program *load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) die(path, "cannot open");
    static char buf[32 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    clf_program *p;
    char err[CLF_ERRMSG_SIZE];
    if (clf_program_load(buf, len, NULL, &p, err, sizeof err)) die(path, err);
    return p;
}

static const char *UA =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
    "Safari/537.36";

static void one_request(clf_ctx *ctx, const char *peer, size_t pn, const char *path, int64_t ms)
{
    clf_verdict v;
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, path, strlen(path));
    clf_ctx_set_peer(ctx, peer, pn);
    clf_ctx_add_header(ctx, "Host", 4, "example.com", 11);
    clf_ctx_add_header(ctx, "User-Agent", 10, UA, strlen(UA));
    clf_ctx_add_header(ctx, "Accept", 6, "text/html,application/xhtml+xml", 31);
    clf_ctx_add_header(ctx, "Accept-Language", 15, "en-US,en;q=0.9", 14);
    clf_ctx_add_header(ctx, "Sec-Fetch-Mode", 14, "navigate", 8);
    clf_ctx_set_time_ms(ctx, ms);
    if (clf_eval(ctx, &v) != CLF_OK) die("clf_eval", clf_ctx_errmsg(ctx));
}

#define REQS 200000

static void per_request(const char *name, clf_program *p, clf_store *s, int naddr, double *med,
                        double *p99)
{
    clf_ctx *ctx;
    char err[CLF_ERRMSG_SIZE], peer[32];
    if (clf_ctx_new(p, &ctx, err, sizeof err)) die("ctx", err);
    clf_ctx_set_store(ctx, s);
    double *t = malloc(sizeof *t * REQS), cpu = 0;
    for (int round = 0; round < 2; round++) { /* the first warms */
        cpu = cpu_ns();
        for (int i = 0; i < REQS; i++) {
            int a = i % naddr;
            int n = snprintf(peer, sizeof peer, "198.%d.%d.%d", 18 + a % 2, a / 200 % 100, a / 2 % 100);
            double t0 = now_ns();
            one_request(ctx, peer, (size_t)n, "/blog/post", 1700000000000 + i * 10);
            t[i] = now_ns() - t0;
        }
        cpu = (cpu_ns() - cpu) / REQS;
    }
    qsort(t, REQS, sizeof *t, cmp);
    *med = t[REQS / 2];
    *p99 = t[REQS * 99 / 100];
    printf("   %-44s %10.0f %10.0f %10.0f\n", name, *med, *p99, cpu);
    free(t);
    clf_ctx_free(ctx);
}

static void policy(void)
{
    char err[CLF_ERRMSG_SIZE];
    clf_program *def = load(DEFAULT_RULES), *rate = load(RATE_RULES);
    clf_store *s;
    if (clf_store_new(UINT64_C(64) << 20, NULL, &s, err, sizeof err)) die("store", err);
    printf("\n2. a browser's request, ns (each of %d timed)\n", REQS);
    printf("   %-44s %10s %10s %10s\n", "", "median", "p99", "CPU mean");
    double m0, q0, m1, q1, m2, q2;
    per_request("default policy", def, NULL, 20000, &m0, &q0);
    per_request("default + rate, clients over 20,000 addresses", rate, s, 20000, &m1, &q1);
    per_request("default + rate, clients over 200 addresses", rate, s, 200, &m2, &q2);
    printf("   the rate rules add %.0f ns to the median (%.2fx) over 20,000 addresses, %.0f ns "
           "(%.2fx) over 200\n", m1 - m0, m1 / m0, m2 - m0, m2 / m0);
    clf_store_free(s);
    clf_program_free(def);
    clf_program_free(rate);
}

static void flood(long n)
{
    char err[CLF_ERRMSG_SIZE], peer[48];
    clf_program *rate = load(RATE_RULES);
    clf_ctx *ctx;
    if (clf_ctx_new(rate, &ctx, err, sizeof err)) die("ctx", err);
    one_request(ctx, "192.0.2.1", 9, "/", 0); /* everything but the store resident */
    long before = rss_kib();
    clf_store *s;
    if (clf_store_new(UINT64_C(64) << 20, NULL, &s, err, sizeof err)) die("store", err);
    long with = rss_kib();
    clf_ctx_set_store(ctx, s);
    /* a mark and a heavy client before the flood, to see them after it */
    one_request(ctx, "203.0.113.9", 11, "/clf-trap/", 1700000000000);
    for (int i = 0; i < 200; i++) one_request(ctx, "203.0.113.10", 12, "/x", 1700000000000);
    double t0 = now_ns(), c0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        /* distinct addresses, half IPv4 (each its own /24 until 2^24), half IPv6 */
        int k = i % 2 ? snprintf(peer, sizeof peer, "%ld.%ld.%ld.%ld", 11 + (i >> 25), (i >> 17) & 255,
                                 (i >> 9) & 255, (i >> 1) & 255)
                      : snprintf(peer, sizeof peer, "2001:db8:%lx:%lx::1", (i >> 17) & 0xffff,
                                 (i >> 1) & 0xffff);
        one_request(ctx, peer, (size_t)k, "/page", 1700000000000 + i / 1000); /* 10 s */
    }
    double secs = (now_ns() - t0) / 1e9, csecs = (cpu_ns() - c0) / 1e9;
    long after = rss_kib();
    clf_store_stats st;
    clf_store_get_stats(s, &st);
    int64_t heavy = -1, trap = -1;
    const char *hk = "c:60:rate_pages_addr:ip:203.0.113.10", *tk = "m:3600:rate_trap:ip:203.0.113.9";
    clf_store_peek(s, hk, strlen(hk), 1700000000000, &heavy);
    clf_store_peek(s, tk, strlen(tk), 1700000000000 + n / 100, &trap);
    printf("\n3. memory under a flood of %ld distinct addresses (64 MiB store)\n", n);
    printf("   RSS before the store %ld KiB, with it %ld KiB (+%ld), after the flood %ld KiB (+%ld)\n",
           before, with, with - before, after, after - with);
    printf("   %.2f s wall, %.2f s CPU (%.0f CPU ns a request); entries %llu of %llu, evictions %llu, refused %llu, "
           "busy %llu\n", secs, csecs, csecs * 1e9 / (double)n, (unsigned long long)st.used,
           (unsigned long long)st.capacity, (unsigned long long)st.evictions,
           (unsigned long long)st.refused, (unsigned long long)st.busy);
    printf("   after it: the client counted 200 times reads %lld, the trapped address %s\n",
           (long long)heavy, trap == 1 ? "is still marked" : "lost its mark");
    clf_ctx_free(ctx);
    clf_store_free(s);
    clf_program_free(rate);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "policy") == 0) {
        policy();
        return 0;
    }
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    store_ops();
    policy();
    flood(n);
    return 0;
}
