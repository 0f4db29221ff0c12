/* harness.c: see harness.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ------------------------------------------------------------ workload */

/* Splits the line at p (NUL-terminated, no LF) at TABs into at most
 * `max` fields; returns how many. */
static size_t split_tabs(char *p, char **f, size_t *len, size_t max)
{
    size_t n = 0;
    for (;;) {
        char *t = strchr(p, '\t');
        if (n == max - 1 || !t) {
            f[n] = p;
            len[n] = strlen(p);
            return n + 1;
        }
        *t = 0;
        f[n] = p;
        len[n] = (size_t)(t - p);
        n++;
        p = t + 1;
    }
}

void bh_workload_load(const char *path, bh_workload *w)
{
    memset(w, 0, sizeof *w);
    size_t len;
    char *buf = read_file(path, &len);
    const char *nul = memchr(buf, 0, len);
    if (nul) {
        size_t line = 1;
        for (const char *q = buf; q < nul; q++) line += *q == '\n';
        die("%s:%zu: a NUL byte", path, line);
    }

    /* Counts first, so that the arrays are allocated once. */
    size_t nreq = 0, nhdr = 0;
    for (size_t i = 0; i < len; i++) {
        if ((i == 0 || buf[i - 1] == '\n') && buf[i + 1] == '\t') {
            nreq += buf[i] == 'R';
            nhdr += buf[i] == 'H';
        }
    }
    w->buf = buf;
    w->req = xcalloc(nreq, sizeof *w->req);
    w->hdrs = xcalloc(nhdr, sizeof *w->hdrs);

    bh_request *cur = NULL;
    size_t lineno = 0, hi = 0;
    char *p = buf;
    while (*p) {
        char *nl = strchr(p, '\n');
        if (!nl) die("%s:%zu: the last line has no line end", path, lineno + 1);
        *nl = 0;
        lineno++;
        if (strchr(p, '\r')) die("%s:%zu: a CR in the line (the format has none)", path, lineno);
        char *fld[4];
        size_t fl[4];
        if (*p == 0) {
            if (!cur) die("%s:%zu: an empty line outside a request", path, lineno);
            cur = NULL;
        } else if (p[0] == 'R' && p[1] == '\t') {
            if (cur) die("%s:%zu: a request starts before the last one ended", path, lineno);
            if (split_tabs(p + 2, fld, fl, 4) != 3)
                die("%s:%zu: want R<TAB>method<TAB>path<TAB>query", path, lineno);
            cur = &w->req[w->n++];
            cur->method = fld[0], cur->mlen = fl[0];
            cur->path = fld[1], cur->plen = fl[1];
            cur->query = fld[2], cur->qlen = fl[2];
            cur->h = &w->hdrs[hi];
        } else if (p[0] == 'H' && p[1] == '\t') {
            if (!cur) die("%s:%zu: a header outside a request", path, lineno);
            if (split_tabs(p + 2, fld, fl, 3) != 2 || fl[0] == 0)
                die("%s:%zu: want H<TAB>name<TAB>value, with a name", path, lineno);
            w->hdrs[hi++] = (bh_header){fld[0], fld[1], fl[0], fl[1]};
            cur->nh++;
        } else {
            die("%s:%zu: a line starting with neither R, H nor an empty line", path, lineno);
        }
        p = nl + 1;
    }
    if (cur) die("%s: the last request has no empty line after it", path);
    if (w->n == 0) die("%s: no requests", path);
}

void bh_workload_free(bh_workload *w)
{
    free(w->req);
    free(w->hdrs);
    free(w->buf);
    memset(w, 0, sizeof *w);
}

const char *bh_header_get(const bh_request *r, const char *lname, size_t *len)
{
    size_t n = strlen(lname);
    for (size_t i = 0; i < r->nh; i++) {
        const bh_header *h = &r->h[i];
        if (h->nlen != n) continue;
        size_t k = 0;
        while (k < n) {
            unsigned char c = (unsigned char)h->name[k];
            if (c >= 'A' && c <= 'Z') c += 32;
            if (c != (unsigned char)lname[k]) break;
            k++;
        }
        if (k == n) {
            *len = h->vlen;
            return h->value;
        }
    }
    *len = 0;
    return NULL;
}

/* ------------------------------------------------------------ verdicts */

static void classify_or_die(const bh_method *m, void *state, const bh_workload *w, size_t i,
                            bh_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (m->classify(state, &w->req[i], v) != 0)
        die("%s failed on request %zu (%.*s)", m->name, i, (int)w->req[i].plen, w->req[i].path);
}

/* The verdict file being written, removed at exit unless it was renamed
 * into place: a run that stops half-way leaves no partial file. */
static char pending[4096];

static void remove_pending(void)
{
    if (pending[0]) unlink(pending);
}

void bh_write_verdicts(const bh_method *m, const bh_workload *w, const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        die("%s: refusing to write: not a regular file", path);
    if (snprintf(pending, sizeof pending, "%s.tmp", path) >= (int)sizeof pending)
        die("%s: path too long", path);
    atexit(remove_pending);
    FILE *f = fopen(pending, "w");
    if (!f) {
        int e = errno;
        pending[0] = 0;
        die("%s: %s", path, strerror(e));
    }
    for (size_t i = 0; i < w->n; i++) {
        bh_verdict v;
        classify_or_die(m, m->state, w, i, &v);
        fprintf(f, "%s\t%.*s\n", v.reject ? "reject" : "accept", (int)(v.reason ? v.rlen : 0),
                v.reason ? v.reason : "");
    }
    int bad = fflush(f) != 0 || ferror(f);
    if (fclose(f) != 0 || bad) die("%s: write error", path);
    if (rename(pending, path) != 0) die("%s: %s", path, strerror(errno));
    pending[0] = 0;
}

/* --------------------------------------------------------------- timing */

typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

static void push(samples *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const samples *s, double p)
{
    if (s->n == 0) return 0;
    size_t k = (size_t)ceil(p * (double)s->n);
    return s->v[k == 0 ? 0 : k - 1];
}

/* The cost of an empty timed interval: median of back-to-back reads. */
static double timer_overhead(void)
{
    enum { N = 20001 };
    static double d[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = now_ns(), b = now_ns();
        d[i] = (double)(b - a);
    }
    qsort(d, N, sizeof *d, cmp_dbl);
    return d[N / 2];
}

typedef struct worker {
    const bh_method *m;
    void *state;
    const bh_workload *w;
    double seconds, overhead;
    pthread_barrier_t *start;
    samples pass, single;
    uint64_t requests, pass_ns;
    /* A sink the compiler cannot see through, so that no classification
     * is optimized away; one per thread, as a shared one would bounce
     * its cache line between the threads on every request. */
    volatile size_t sink;
    char pad[64];
} worker;

static void *work(void *arg)
{
    worker *k = arg;
    const bh_workload *w = k->w;
    bh_verdict v;
    for (size_t i = 0; i < w->n; i++) classify_or_die(k->m, k->state, w, i, &v); /* warm-up */
    if (k->start) pthread_barrier_wait(k->start);

    uint64_t budget = (uint64_t)(k->seconds * 1e9), t0 = now_ns(), t = t0;
    do {
        uint64_t a = now_ns();
        for (size_t i = 0; i < w->n; i++) {
            k->m->classify(k->state, &w->req[i], &v);
            k->sink += v.rlen;
        }
        t = now_ns();
        push(&k->pass, (double)(t - a) / (double)w->n);
        k->requests += w->n;
    } while (t - t0 < budget);
    k->pass_ns = t - t0;

    budget /= 2;
    t0 = now_ns();
    size_t i = 0;
    do {
        for (size_t j = 0; j < 64; j++) {
            uint64_t a = now_ns();
            k->m->classify(k->state, &w->req[i], &v);
            uint64_t b = now_ns();
            k->sink += v.rlen;
            push(&k->single, (double)(b - a) - k->overhead);
            if (++i == w->n) i = 0;
        }
    } while (now_ns() - t0 < budget);
    return NULL;
}

void bh_time(const bh_method *m, const bh_workload *w, double seconds, int threads)
{
    if (threads < 1) threads = 1;
    if (threads > 1 && !m->clone) die("%s cannot run on several threads", m->name);
    double overhead = timer_overhead();
    worker *k = xcalloc((size_t)threads, sizeof *k);
    pthread_barrier_t bar;
    if (threads > 1) pthread_barrier_init(&bar, NULL, (unsigned)threads);
    pthread_t *tid = xcalloc((size_t)threads, sizeof *tid);
    for (int t = 0; t < threads; t++) {
        k[t] = (worker){.m = m, .w = w, .seconds = seconds, .overhead = overhead,
                        .start = threads > 1 ? &bar : NULL};
        k[t].state = t == 0 ? m->state : m->clone(m->state);
        if (!k[t].state) die("%s: could not make the state of thread %d", m->name, t);
    }
    if (threads == 1) {
        work(&k[0]);
    } else {
        for (int t = 0; t < threads; t++)
            if (pthread_create(&tid[t], NULL, work, &k[t]) != 0) die("pthread_create failed");
        for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    }
    samples pass = {0}, single = {0};
    double rps = 0;
    for (int t = 0; t < threads; t++) {
        for (size_t i = 0; i < k[t].pass.n; i++) push(&pass, k[t].pass.v[i]);
        for (size_t i = 0; i < k[t].single.n; i++) push(&single, k[t].single.v[i]);
        rps += (double)k[t].requests / ((double)k[t].pass_ns / 1e9);
        free(k[t].pass.v);
        free(k[t].single.v);
        if (t > 0 && m->release) m->release(k[t].state);
    }
    qsort(single.v, single.n, sizeof *single.v, cmp_dbl);
    printf("{\"method\": \"%s\", \"threads\": %d, \"requests\": %zu, \"pass_ns\": [", m->name,
           threads, w->n);
    for (size_t i = 0; i < pass.n; i++) printf("%s%.2f", i ? ", " : "", pass.v[i]);
    printf("], \"single_ns\": {\"n\": %zu, \"median\": %.1f, \"p99\": %.1f}, "
           "\"overhead_ns\": %.1f, \"throughput_rps\": %.0f}\n",
           single.n, pct(&single, 0.5), pct(&single, 0.99), overhead, rps);
    fflush(stdout);
    free(pass.v);
    free(single.v);
    free(tid);
    free(k);
    if (threads > 1) pthread_barrier_destroy(&bar);
}

/* ---------------------------------------------------------------- stats */

static uint64_t compile_t0, compile_ns;
static size_t compile_rss0, compile_rss;

size_t bh_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return ok && page > 0 ? (size_t)resident * (size_t)page : 0;
}

void bh_compile_begin(void)
{
    compile_rss0 = bh_rss_bytes();
    compile_t0 = now_ns();
}

void bh_compile_end(void)
{
    compile_ns = now_ns() - compile_t0;
    size_t r = bh_rss_bytes();
    compile_rss = r > compile_rss0 ? r - compile_rss0 : 0;
}

static void print_stats(const bh_method *m, const bh_workload *w)
{
    bh_verdict v;
    for (size_t i = 0; i < w->n; i++) classify_or_die(m, m->state, w, i, &v);
    size_t r = bh_rss_bytes();
    printf("{\"method\": \"%s\", \"compile_ns\": %llu, \"rules_rss_bytes\": %zu, "
           "\"pass_rss_bytes\": %zu}\n",
           m->name, (unsigned long long)compile_ns, compile_rss,
           compile_t0 && r > compile_rss0 ? r - compile_rss0 : 0);
    fflush(stdout);
}

int bh_main(const bh_method *m, const bh_workload *w, int argc, char **argv, int first)
{
    const char *verdicts = NULL;
    double seconds = -1;
    int threads = 1;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "--stats") == 0) {
            if (i + 1 != argc || i != first) die("--stats takes no other mode");
            print_stats(m, w);
            return 0;
        }
        if ((strcmp(argv[i], "--verdicts") == 0 || strcmp(argv[i], "--time") == 0 ||
             strcmp(argv[i], "--threads") == 0) && i + 1 == argc)
            die("%s needs a value", argv[i]);
        if (strcmp(argv[i], "--verdicts") == 0 && i + 1 < argc) {
            verdicts = argv[++i];
        } else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
            char *end;
            seconds = strtod(argv[++i], &end);
            if (*end || !(seconds > 0 && seconds < 3600)) die("--time: want seconds in (0, 3600)");
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || t > 64) die("--threads: want 1 to 64");
            threads = (int)t;
        } else {
            die("unknown argument '%s' (want --verdicts FILE | --time SECONDS [--threads N] | "
                "--stats)", argv[i]);
        }
    }
    if (!verdicts == (seconds < 0)) die("want exactly one of --verdicts FILE and --time SECONDS");
    if (verdicts) bh_write_verdicts(m, w, verdicts);
    else bh_time(m, w, seconds, threads);
    return 0;
}
