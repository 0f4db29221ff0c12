/*
 * rw-bench: throughput and memory of the rewrite engine on generated
 * HTML pages (bench/rewrite/README.md). Figures, not a test.
 *
 *   rw-bench [--pages N] [--seed S] [--chunk BYTES] [--rounds R]
 *            [--set KIND:N]... [--json FILE] [--write-out DIR]
 *
 * For each rule set (default lit:1 lit:10 lit:100 lit:1000 re:10 re:100,
 * SRW mode, max_match 8192): compile it, then rewrite every page as one
 * stream (reset between pages), fed in chunks of --chunk bytes (default
 * 16384), R times; report the median MB/s of one core (input bytes per
 * second, one thread), the slowest and fastest round, the compile time,
 * the stream object's size and the most input bytes it held between two
 * feeds, the replacements per page, and what the skip cache buys: the
 * same pages with each page's "rules that fired" bitmap as the stream's
 * mask, and with an empty bitmap (unscanned copy); and the Hyperscan
 * floor: the set's own databases scanning the same chunks with a callback
 * that only counts (what the engine cannot go below).
 *
 * --write-out DIR times nothing: it writes each set's output for every
 * page, fed in the same chunks, to DIR/KIND-N/page-NNNN.html (the names
 * of rw-pagegen's pages), the reference that bench/rewrite/run.py
 * compares every peer's output with before it times anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "benchset.h"
#include "pagegen.h"
#include "rw_build.h"
#include "rw_set.h" /* the set's Hyperscan databases, for the floor */
#include "rw_stream.h"
#include "util.h"

typedef struct counter {
    uint64_t bytes;
} counter;

static int count_sink(void *ud, const uint8_t *p, size_t n)
{
    counter *c = ud;
    c->bytes += n;
    (void)p;
    return 0;
}

typedef struct pages {
    uint8_t *data;
    size_t len, cap;
    size_t *off; /* npages + 1 offsets */
    uint32_t n;
} pages;

typedef struct work {
    uint64_t dfa, captures, rescans;
} work;

static double run_once(rw_stream *st, rw_scratch *sc, const pages *pg, size_t chunk,
                       uint8_t **masks, size_t nbitmap, uint64_t *max_held, uint64_t *reps,
                       uint8_t *fired_out, counter *c, work *w)
{
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < pg->n; i++) {
        rw_stream_reset(st, count_sink, c);
        if (masks) rw_stream_set_mask(st, masks[i], nbitmap);
        const uint8_t *p = pg->data + pg->off[i];
        size_t len = pg->off[i + 1] - pg->off[i];
        for (size_t at = 0; at < len; at += chunk) {
            size_t k = len - at < chunk ? len - at : chunk;
            rw_status rc = rw_stream_feed(st, sc, p + at, k);
            if (rc) die("feed: %s", rw_status_name(rc));
        }
        rw_status rc = rw_stream_finish(st, sc);
        if (rc) die("finish: %s", rw_status_name(rc));
        rw_stream_stats s;
        rw_stream_stats_get(st, &s);
        if (s.max_held > *max_held) *max_held = s.max_held;
        *reps += s.replacements;
        if (w) {
            w->dfa += s.dfa_runs;
            w->captures += s.captures;
            w->rescans += s.rescans;
        }
        if (fired_out) memcpy(fired_out + (size_t)i * nbitmap, rw_stream_matched(st), nbitmap);
    }
    return (double)(now_ns() - t0) / 1e9;
}

static int count_match(unsigned int id, unsigned long long from, unsigned long long to,
                       unsigned int flags, void *ctx)
{
    (void)id, (void)from, (void)to, (void)flags;
    (*(uint64_t *)ctx)++;
    return 0;
}

/* The Hyperscan floor: the set's own databases over the same pages in
 * the same chunks, a callback that only counts, nothing else. */
static double hs_floor(const rw_set *set, const pages *pg, size_t chunk)
{
    hs_scratch_t *hs = NULL;
    if (set->litdb) hs_alloc_scratch(set->litdb, &hs);
    if (set->redb) hs_alloc_scratch(set->redb, &hs);
    uint64_t n = 0, t0 = now_ns();
    for (uint32_t i = 0; i < pg->n; i++) {
        hs_database_t *dbs[2] = {set->litdb, set->redb};
        for (int k = 0; k < 2; k++) {
            if (!dbs[k]) continue;
            hs_stream_t *st = NULL;
            if (hs_open_stream(dbs[k], 0, &st) != HS_SUCCESS) die("hs_open_stream");
            for (size_t at = pg->off[i]; at < pg->off[i + 1]; at += chunk) {
                size_t len = pg->off[i + 1] - at < chunk ? pg->off[i + 1] - at : chunk;
                hs_scan_stream(st, (const char *)pg->data + at, (unsigned)len, 0, hs, count_match, &n);
            }
            hs_close_stream(st, hs, count_match, &n);
        }
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    hs_free_scratch(hs);
    return secs;
}

typedef struct outbuf {
    uint8_t *p;
    size_t n, cap;
} outbuf;

static int buf_sink(void *ud, const uint8_t *p, size_t n)
{
    outbuf *b = ud;
    if (b->n + n > b->cap) {
        while (b->n + n > b->cap) b->cap = b->cap ? 2 * b->cap : 1 << 16;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

/* --write-out: every page's output under DIR/KIND-N/. */
static void write_outputs(const rw_set *set, const char *spec, const pages *pg, size_t chunk,
                          const char *dir)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, spec);
    char *colon = strrchr(sub, ':');
    if (colon) *colon = '-';
    if (mkdir(sub, 0755) != 0 && errno != EEXIST) die("%s: %s", sub, strerror(errno));
    rw_scratch *sc = NULL;
    rw_stream *st = NULL;
    outbuf b = {0};
    if (rw_scratch_new(set, NULL, &sc) || rw_stream_new(set, NULL, buf_sink, &b, &st))
        die("scratch or stream");
    for (uint32_t i = 0; i < pg->n; i++) {
        b.n = 0;
        rw_stream_reset(st, buf_sink, &b);
        const uint8_t *p = pg->data + pg->off[i];
        size_t len = pg->off[i + 1] - pg->off[i];
        for (size_t at = 0; at < len; at += chunk) {
            rw_status rc = rw_stream_feed(st, sc, p + at, len - at < chunk ? len - at : chunk);
            if (rc) die("feed: %s", rw_status_name(rc));
        }
        rw_status rc = rw_stream_finish(st, sc);
        if (rc) die("finish: %s", rw_status_name(rc));
        char path[4200];
        snprintf(path, sizeof path, "%s/page-%04u.html", sub, i);
        FILE *f = fopen(path, "wb");
        if (!f || (b.n && fwrite(b.p, 1, b.n, f) != b.n) || fclose(f) != 0)
            die("cannot write %s", path);
    }
    free(b.p);
    rw_stream_free(st);
    rw_scratch_free(sc);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    bench_prog = "rw-bench";
    uint32_t npages = 64, rounds = 7;
    uint64_t seed = 20240611;
    size_t chunk = 16384;
    const char *sets[32];
    int nsets = 0;
    const char *json = NULL;
    const char *write_out = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(a, "--pages")) npages = (uint32_t)num_arg(a, v, 1, 100000);
        else if (v && !strcmp(a, "--seed")) seed = num_arg(a, v, 0, UINT64_MAX);
        else if (v && !strcmp(a, "--chunk")) chunk = (size_t)num_arg(a, v, 1, 1u << 30);
        else if (v && !strcmp(a, "--rounds")) rounds = (uint32_t)num_arg(a, v, 1, 1000);
        else if (v && !strcmp(a, "--set") && nsets < 32) sets[nsets++] = v;
        else if (v && !strcmp(a, "--json")) json = v;
        else if (v && !strcmp(a, "--write-out")) write_out = v;
        else {
            fprintf(stderr, "usage: rw-bench [--pages N] [--seed S] [--chunk BYTES] [--rounds R] "
                            "[--set lit:N|re:N]... [--json FILE] [--write-out DIR]\n");
            return 2;
        }
    }
    if (!nsets) {
        static const char *def[] = {"lit:1", "lit:10", "lit:100", "lit:1000", "re:10", "re:100"};
        for (int i = 0; i < 6; i++) sets[nsets++] = def[i];
    }
    pages pg = {0};
    pg.off = xcalloc(npages + 1, sizeof *pg.off);
    for (uint32_t i = 0; i < npages; i++) {
        pg.off[i] = pg.len;
        pagegen_page(seed, i, &pg.data, &pg.len, &pg.cap);
    }
    pg.off[npages] = pg.len;
    pg.n = npages;
    if (write_out) {
        for (int si = 0; si < nsets; si++) {
            rw_set *set = benchset_build(sets[si], NULL, NULL);
            write_outputs(set, sets[si], &pg, chunk, write_out);
            rw_set_free(set);
        }
        free(pg.data);
        free(pg.off);
        return 0;
    }
    printf("# %u pages from seed %llu, %.1f MB, chunks of %zu bytes, %u rounds, one thread\n",
           npages, (unsigned long long)seed, pg.len / 1e6, chunk, rounds);
    printf("%-9s %10s %10s %10s %10s %11s %12s %10s %8s %11s %11s %9s %9s\n", "set", "MB/s", "min",
           "max", "hs floor", "compile ms", "stream bytes", "max held", "rep/page", "mask MB/s", "skip MB/s",
           "dfa/page", "cap/page");
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) die("cannot write %s", json);
    if (jf) fprintf(jf, "{\"pages\": %u, \"bytes\": %zu, \"chunk\": %zu, \"sets\": [", npages, pg.len, chunk);
    for (int si = 0; si < nsets; si++) {
        double compile_ms = 0;
        unsigned n = 0;
        rw_set *set = benchset_build(sets[si], &compile_ms, &n);
        rw_scratch *sc = NULL;
        rw_stream *s = NULL;
        counter cnt = {0};
        if (rw_scratch_new(set, NULL, &sc) || rw_stream_new(set, NULL, count_sink, &cnt, &s))
            die("scratch or stream");
        size_t nb = (n + 7) / 8;
        uint8_t *fired = xcalloc(npages, nb);
        uint64_t held = 0, reps = 0;
        double *t = xcalloc(rounds, sizeof *t);
        work w = {0};
        run_once(s, sc, &pg, chunk, NULL, nb, &held, &reps, fired, &cnt, &w); /* warm-up */
        uint64_t reps_page = reps / npages;
        for (uint32_t r = 0; r < rounds; r++) {
            uint64_t rr = 0;
            t[r] = run_once(s, sc, &pg, chunk, NULL, nb, &held, &rr, NULL, &cnt, NULL);
        }
        qsort(t, rounds, sizeof *t, cmp_double);
        double med = pg.len / t[rounds / 2] / 1e6;
        /* the skip cache: each page's fired bitmap as its mask, and empty */
        uint8_t **masks = xcalloc(npages, sizeof *masks);
        uint8_t *empty = xcalloc(nb ? nb : 1, 1);
        for (uint32_t i = 0; i < npages; i++) masks[i] = fired + (size_t)i * nb;
        double *tm = xcalloc(rounds, sizeof *tm), *te = xcalloc(rounds, sizeof *te),
               *tf = xcalloc(rounds, sizeof *tf);
        uint8_t **emasks = xcalloc(npages, sizeof *emasks);
        for (uint32_t i = 0; i < npages; i++) emasks[i] = empty;
        for (uint32_t r = 0; r < rounds; r++) {
            uint64_t h2 = 0, rr = 0;
            tm[r] = run_once(s, sc, &pg, chunk, masks, nb, &h2, &rr, NULL, &cnt, NULL);
            te[r] = run_once(s, sc, &pg, chunk, emasks, nb, &h2, &rr, NULL, &cnt, NULL);
            tf[r] = hs_floor(set, &pg, chunk);
        }
        qsort(tf, rounds, sizeof *tf, cmp_double);
        double fmed = pg.len / tf[rounds / 2] / 1e6;
        qsort(tm, rounds, sizeof *tm, cmp_double);
        qsort(te, rounds, sizeof *te, cmp_double);
        double mmed = pg.len / tm[rounds / 2] / 1e6, emed = pg.len / te[rounds / 2] / 1e6;
        size_t ssz = rw_stream_size(s);
        printf("%-9s %10.0f %10.0f %10.0f %10.0f %11.1f %12zu %10llu %8llu %11.0f %11.0f %9.1f %9.1f\n",
               sets[si], med, pg.len / t[rounds - 1] / 1e6, pg.len / t[0] / 1e6, fmed, compile_ms,
               ssz, (unsigned long long)held, (unsigned long long)reps_page, mmed, emed,
               (double)w.dfa / npages, (double)w.captures / npages);
        if (jf)
            fprintf(jf,
                    "%s{\"set\": \"%s\", \"mbps\": %.1f, \"mbps_min\": %.1f, \"mbps_max\": %.1f, "
                    "\"compile_ms\": %.2f, \"stream_bytes\": %zu, \"max_held\": %llu, "
                    "\"scratch_bytes\": %zu, \"replacements_per_page\": %llu, "
                    "\"mask_mbps\": %.1f, \"skip_mbps\": %.1f, \"hs_floor_mbps\": %.1f, "
                    "\"dfa_per_page\": %.1f, \"captures_per_page\": %.1f}",
                    si ? ", " : "", sets[si], med, pg.len / t[rounds - 1] / 1e6, pg.len / t[0] / 1e6,
                    compile_ms, ssz, (unsigned long long)held, rw_scratch_size(sc),
                    (unsigned long long)reps_page, mmed, emed, fmed, (double)w.dfa / npages,
                    (double)w.captures / npages);
        free(t);
        free(tm);
        free(te);
        free(tf);
        free(masks);
        free(emasks);
        free(empty);
        free(fired);
        rw_stream_free(s);
        rw_scratch_free(sc);
        rw_set_free(set);
    }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    free(pg.data);
    free(pg.off);
    return 0;
}
