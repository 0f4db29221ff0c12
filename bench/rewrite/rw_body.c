/*
 * rw-body: one body of any size through one stream, generated on the fly,
 * for the memory part of the rewrite benchmark (bench/rewrite/README.md,
 * "Memory per stream"). Figures, not a test (tests/rewrite/test_rw_rss.c
 * is the test).
 *
 *   rw-body --set KIND:N --bytes N [--minified] [--chunk BYTES] [--seed S]
 *
 * The body is the benchmark's generated pages (pagegen.h) cycled until N
 * bytes: all of the first 64, or with --minified only those among them
 * without a line break (the pages a line-buffering filter such as
 * subs_filter must hold whole). It is fed in --chunk-byte chunks (default
 * 16384, as an nginx body filter sees a file) from one page buffer, never
 * materialised, to a sink that counts. Prints one JSON line: the input and
 * output bytes, replacements, the CPU seconds of the feeding and MB/s of
 * input, the stream object's size (rw_stream_size) and the scratch's, the
 * most input bytes held between two feeds and the set's bound on it
 * (rw_set_holdback), and the process's maximum resident set (VmHWM)
 * after the set, scratch, stream and pages were made (before the first
 * byte) and at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchset.h"
#include "pagegen.h"
#include "peakrss.h"
#include "rw_stream.h"
#include "util.h"

static double cpu_secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int sink(void *ud, const uint8_t *p, size_t n)
{
    (void)p;
    *(uint64_t *)ud += n;
    return 0;
}

int main(int argc, char **argv)
{
    bench_prog = "rw-body";
    const char *spec = NULL;
    uint64_t total = 0, seed = 20240611;
    size_t chunk = 16384;
    int minified = 0, have_bytes = 0;
    for (int i = 1; i < argc;) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--minified")) {
            minified = 1;
            i++;
            continue;
        }
        if (v && !strcmp(a, "--set")) spec = v;
        else if (v && !strcmp(a, "--bytes")) total = num_arg(a, v, 1, 1ull << 40), have_bytes = 1;
        else if (v && !strcmp(a, "--chunk")) chunk = (size_t)num_arg(a, v, 1, 1u << 30);
        else if (v && !strcmp(a, "--seed")) seed = num_arg(a, v, 0, UINT64_MAX);
        else {
            fprintf(stderr, "usage: rw-body --set lit:N|re:N --bytes N [--minified] [--chunk BYTES] "
                            "[--seed S]\n");
            return 2;
        }
        i += 2;
    }
    if (!spec || !have_bytes) die("--set and --bytes are required");
    rw_set *set = benchset_build(spec, NULL, NULL);
    rw_scratch *sc = NULL;
    rw_stream *st = NULL;
    uint64_t out = 0;
    if (rw_scratch_new(set, NULL, &sc) || rw_stream_new(set, NULL, sink, &out, &st))
        die("cannot make the scratch or the stream");

    /* The pages the body cycles through, one after the other in one buffer. */
    uint8_t *pages = NULL, *page = NULL;
    size_t plen = 0, pcap = 0, len = 0, cap = 0;
    for (uint32_t i = 0; i < 64; i++) {
        len = 0;
        pagegen_page(seed, i, &page, &len, &cap);
        if (minified && memchr(page, '\n', len)) continue;
        if (plen + len > pcap) {
            while (plen + len > pcap) pcap = pcap ? 2 * pcap : 1 << 20;
            pages = xrealloc(pages, pcap);
        }
        memcpy(pages + plen, page, len);
        plen += len;
    }
    free(page);
    if (!plen) die("no page without a line break among the first 64 of seed %llu",
                   (unsigned long long)seed);

    long rss_setup = peak_rss_kib();
    uint64_t fed = 0, off = 0;
    double c0 = cpu_secs();
    while (fed < total) {
        size_t n = total - fed < chunk ? (size_t)(total - fed) : chunk;
        /* a chunk is a slice of the cycled pages, wrapping in two feeds */
        size_t first = n < plen - off ? n : (size_t)(plen - off);
        rw_status rc = rw_stream_feed(st, sc, pages + off, first);
        if (!rc && first < n) rc = rw_stream_feed(st, sc, pages, n - first);
        if (rc) die("feed: %s", rw_status_name(rc));
        off = (off + n) % plen;
        fed += n;
    }
    rw_status rc = rw_stream_finish(st, sc);
    if (rc) die("finish: %s", rw_status_name(rc));
    double secs = cpu_secs() - c0;
    rw_stream_stats s;
    rw_stream_stats_get(st, &s);
    printf("{\"set\": \"%s\", \"bytes\": %llu, \"minified\": %s, \"chunk\": %zu, \"out_bytes\": %llu, "
           "\"replacements\": %llu, \"cpu_secs\": %.6f, \"mbps\": %.1f, \"stream_bytes\": %zu, "
           "\"scratch_bytes\": %zu, \"max_held\": %llu, \"holdback\": %llu, "
           "\"rss_setup_kib\": %ld, \"max_rss_kib\": %ld}\n",
           spec, (unsigned long long)fed, minified ? "true" : "false", chunk,
           (unsigned long long)out, (unsigned long long)s.replacements, secs,
           secs > 0 ? (double)fed / secs / 1e6 : 0.0, rw_stream_size(st), rw_scratch_size(sc),
           (unsigned long long)s.max_held, (unsigned long long)rw_set_holdback(set), rss_setup,
           peak_rss_kib());
    free(pages);
    rw_stream_free(st);
    rw_scratch_free(sc);
    rw_set_free(set);
    return 0;
}
