/*
 * test_rw_rss: a long body through 100 rules in bounded memory.
 *
 *   test_rw_rss [BYTES]      (default 1 GiB)
 *
 * The body is one stream of the benchmark's generated pages
 * (bench/rewrite/pagegen.c), 64 of them cycled, fed in chunks whose sizes
 * vary from 1 byte to 1 MiB, through 90 literal and 10 regex rules (the
 * benchmark's lit:100 hosts and ids, and its re:10). The peak resident
 * set (peakrss.h: VmHWM) is read after the first 16 MiB and at the end; the
 * test fails when it grew by more than 1 MiB, or when the stream held
 * more than rw_set_holdback bytes between feeds. TAP output, with the
 * figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pagegen.h"
#include "peakrss.h"
#include "rw_stream.h"

static int sink(void *ud, const uint8_t *p, size_t n)
{
    (void)p;
    *(uint64_t *)ud += n;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : (1ull << 30);
    pagegen_rule *lit = pagegen_rules("lit", 90), *re = pagegen_rules("re", 10);
    rw_rule_desc r[100];
    for (int i = 0; i < 100; i++) {
        const pagegen_rule *p = i < 90 ? &lit[i] : &re[i - 90];
        memset(&r[i], 0, sizeof r[i]);
        r[i].kind = p->regex ? RW_REGEX : RW_LITERAL;
        r[i].pattern = p->pattern;
        r[i].pattern_len = strlen(p->pattern);
        r[i].replacement = p->replacement;
        r[i].replacement_len = strlen(p->replacement);
    }
    rw_set_desc d;
    rw_set_desc_init(&d);
    d.rules = r;
    d.nrules = 100;
    rw_set *s = NULL;
    rw_scratch *sc = NULL;
    rw_stream *st = NULL;
    uint64_t out = 0;
    if (rw_build(&d, NULL, &s, NULL) || rw_scratch_new(s, NULL, &sc) ||
        rw_stream_new(s, NULL, sink, &out, &st)) {
        printf("1..1\nnot ok 1 - cannot build the set\n");
        return 1;
    }
    uint8_t *pages = NULL;
    size_t plen = 0, pcap = 0;
    for (uint32_t i = 0; i < 64; i++) pagegen_page(20240611, i, &pages, &plen, &pcap);
    static const size_t sizes[] = {16384, 1, 65536, 7, 1 << 20, 4093, 300000, 0, 131072};
    uint64_t fed = 0, off = 0, max_held = 0;
    long rss_early = 0;
    unsigned k = 0;
    clock_t c0 = clock();
    int ok = 1;
    while (fed < total) {
        size_t n = sizes[k++ % 9];
        if (n > total - fed) n = (size_t)(total - fed);
        /* a chunk is a slice of the cycled pages, wrapping in two feeds */
        size_t first = n < plen - off ? n : (size_t)(plen - off);
        rw_status rc = rw_stream_feed(st, sc, pages + off, first);
        if (!rc && first < n) rc = rw_stream_feed(st, sc, pages, n - first);
        if (rc) {
            printf("1..1\nnot ok 1 - feed: %s\n", rw_status_name(rc));
            return 1;
        }
        off = (off + n) % plen;
        fed += n;
        rw_stream_stats stt;
        rw_stream_stats_get(st, &stt);
        if (stt.held > max_held) max_held = stt.held;
        if (!rss_early && fed >= (16u << 20)) rss_early = peak_rss_kib();
    }
    rw_status rc = rw_stream_finish(st, sc);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    long rss_end = peak_rss_kib();
    if (!rss_early) rss_early = rss_end;
    rw_stream_stats stt;
    rw_stream_stats_get(st, &stt);
    printf("1..3\n");
    printf("%s 1 - %llu bytes in, %llu out, %llu replacements, %.1f s of CPU (%.0f MB/s)\n",
           rc == RW_OK ? "ok" : "not ok", (unsigned long long)fed, (unsigned long long)out,
           (unsigned long long)stt.replacements, secs, secs > 0 ? fed / secs / 1e6 : 0.0);
    ok &= rc == RW_OK;
    int flat = rss_end - rss_early <= 1024;
    printf("%s 2 - max RSS %ld KiB after 16 MiB, %ld KiB at the end (stream %zu bytes, scratch %zu)\n",
           flat ? "ok" : "not ok", rss_early, rss_end, rw_stream_size(st), rw_scratch_size(sc));
    ok &= flat;
    int bounded = max_held <= rw_set_holdback(s);
    printf("%s 3 - at most %llu bytes held between feeds (bound %llu)\n", bounded ? "ok" : "not ok",
           (unsigned long long)max_held, (unsigned long long)rw_set_holdback(s));
    ok &= bounded;
    rw_stream_free(st);
    rw_scratch_free(sc);
    rw_set_free(s);
    free(pages);
    pagegen_free_rules(lit, 90);
    pagegen_free_rules(re, 10);
    return ok ? 0 : 1;
}
