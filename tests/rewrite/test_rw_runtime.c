/*
 * test_rw_runtime: the rewrite engine's run-time promises (rw_stream.h,
 * rw_cache.h, rw_build.h's stored form), in C. TAP output.
 *
 * - no allocation while feeding or finishing (a counting host allocator,
 *   and a counting Hyperscan allocator set by this test program);
 * - streams shared across threads' scratches; a set and a cache shared by
 *   threads (run under TSan by .ci/run's "threads" suite);
 * - masks: the empty bitmap copies unscanned, the fired bitmap gives the
 *   same output; reset for reuse; the status codes of misuse and of a
 *   failing sink;
 * - bodies far longer than a slice, cut in every way, against the
 *   brute-force reference;
 * - the skip cache: hits, misses, LRU eviction, refused keys, forgetting;
 * - the stored form: round trip, every truncation and every single-byte
 *   change of the header and records refused or accepted without harm,
 *   a database from "another Hyperscan version" rebuilt.
 */
#include <hs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rw_cache.h"
#include "rw_ref.h"
#include "rw_stream.h"

static int ntest, nfail;

static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", ok ? "ok" : "not ok", ++ntest);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok) nfail++;
    fflush(stdout);
}

/* ---- helpers -------------------------------------------------------------- */

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
    int fail_after; /* the sink refuses once this many calls were made (0: never) */
    int calls;
} obuf;

static int sink(void *ud, const uint8_t *p, size_t n)
{
    obuf *o = ud;
    if (o->fail_after && ++o->calls >= o->fail_after) return 1;
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap * 2 : 4096;
        while (c < o->n + n) c *= 2;
        o->p = realloc(o->p, c);
        o->cap = c;
    }
    memcpy(o->p + o->n, p, n);
    o->n += n;
    return 0;
}

static rw_set *build(rw_mode mode, uint32_t L, const rw_rule_desc *r, uint32_t n)
{
    rw_set_desc d;
    rw_set_desc_init(&d);
    d.mode = mode;
    d.max_match = L;
    d.rules = r;
    d.nrules = n;
    rw_set *s = NULL;
    rw_diags dg;
    rw_status st = rw_build(&d, NULL, &s, &dg);
    if (st) {
        fprintf(stderr, "build: %s %s\n", rw_status_name(st), dg.n ? dg.v[0].message : "");
        exit(2);
    }
    rw_diags_free(&dg);
    return s;
}

static rw_rule_desc R(rw_kind k, const char *p, const char *t, uint32_t flags)
{
    rw_rule_desc d;
    memset(&d, 0, sizeof d);
    d.kind = k;
    d.flags = flags;
    d.pattern = p;
    d.pattern_len = strlen(p);
    d.replacement = t;
    d.replacement_len = strlen(t);
    return d;
}

/* Rewrites data cut into chunks of `chunk` bytes (0: one chunk). */
static rw_status rewrite(const rw_set *s, rw_scratch *sc, const uint8_t *data, size_t len,
                         size_t chunk, obuf *o, rw_stream_stats *stats)
{
    rw_stream *st = NULL;
    rw_status rc = rw_stream_new(s, NULL, sink, o, &st);
    if (rc) return rc;
    if (!chunk) chunk = len ? len : 1;
    for (size_t at = 0; at < len && !rc; at += chunk)
        rc = rw_stream_feed(st, sc, data + at, len - at < chunk ? len - at : chunk);
    if (!rc) rc = rw_stream_finish(st, sc);
    if (stats) rw_stream_stats_get(st, stats);
    rw_stream_free(st);
    return rc;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* ---- allocation counting ------------------------------------------------ */

static unsigned long host_allocs, hs_allocs;
static int counting;

static void *count_alloc(void *ud, size_t n)
{
    (void)ud;
    if (counting) {
        host_allocs++;
        if (getenv("RW_ABORT_ON_ALLOC")) abort();
    }
    return malloc(n);
}
static void count_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}
static void *hs_count_alloc(size_t n)
{
    if (counting) hs_allocs++;
    return malloc(n);
}

static const char *const body =
    "<p>Visit www.origin.example and UA-1234-5, xaab xaab; mail bob@example.com now "
    "<!-- c --> foo foo\n";

static void test_no_alloc(void)
{
    hs_set_allocator(hs_count_alloc, free);
    vm_allocator al = {count_alloc, count_free, NULL};
    rw_rule_desc r[] = {
        R(RW_LITERAL, "www.origin.example", "www.clone.example", 0),
        R(RW_REGEX, "UA-\\d+-\\d+", "UA-0-0", 0),
        R(RW_LITERAL, "xa", "X", 0),
        R(RW_REGEX, "a+b", "Y", 0),                          /* a hidden start after "xa" */
        R(RW_REGEX, "(\\w+)@(\\w+)\\.com", "$2 at $1", 0),   /* captures */
        R(RW_REGEX, "foo\\b", "BAR", RW_ONCE),               /* a once rule: rescans */
        R(RW_REGEX, "<!--([^-]|-[^-])*-->", "", 0),
    };
    rw_set_desc d;
    rw_set_desc_init(&d);
    d.rules = r;
    d.nrules = 7;
    rw_set *s = NULL;
    rw_status st = rw_build(&d, &al, &s, NULL);
    rw_scratch *sc = NULL;
    rw_stream *str = NULL;
    obuf o = {0};
    if (!st) st = rw_scratch_new(s, &al, &sc);
    if (!st) st = rw_stream_new(s, &al, sink, &o, &str);
    size_t len = strlen(body);
    counting = 1;
    for (int round = 0; round < 3 && !st; round++) {
        for (size_t at = 0; at < len && !st; at += 3)
            st = rw_stream_feed(str, sc, body + at, len - at < 3 ? len - at : 3);
        if (!st) st = rw_stream_feed(str, sc, NULL, 0);
        if (!st) st = rw_stream_finish(str, sc);
        if (!st) st = rw_stream_reset(str, sink, &o);
    }
    counting = 0;
    check(st == RW_OK && host_allocs == 0 && hs_allocs == 0,
          "feeding, finishing and resetting allocate nothing (host: %lu, Hyperscan: %lu, %s)",
          host_allocs, hs_allocs, rw_status_name(st));
    rw_stream_free(str);
    rw_scratch_free(sc);
    rw_set_free(s);
    free(o.p);
    hs_set_allocator(NULL, NULL);
}

/* ---- threads ---------------------------------------------------------------- */

typedef struct tjob {
    const rw_set *set;
    const uint8_t *data;
    size_t len;
    obuf out;
    rw_cache *cache;
    int ok;
} tjob;

static void *thread_main(void *arg)
{
    tjob *j = arg;
    rw_scratch *sc = NULL;
    j->ok = rw_scratch_new(j->set, NULL, &sc) == RW_OK;
    for (int k = 0; k < 10 && j->ok; k++) {
        j->out.n = 0;
        j->ok = rewrite(j->set, sc, j->data, j->len, 1 + (size_t)k * 97, &j->out, NULL) == RW_OK;
        char key[32];
        int kl = snprintf(key, sizeof key, "/page/%d", k % 7);
        uint8_t bm[1] = {(uint8_t)k};
        rw_cache_store(j->cache, key, (size_t)kl, bm);
        rw_cache_lookup(j->cache, key, (size_t)kl, bm);
    }
    rw_scratch_free(sc);
    return NULL;
}

static void test_threads(void)
{
    rw_rule_desc r[] = {
        R(RW_LITERAL, "www.origin.example", "www.clone.example", 0),
        R(RW_REGEX, "a+b", "Y", 0),
        R(RW_REGEX, "(\\w+)@(\\w+)\\.com", "$2 at $1", 0),
        R(RW_LITERAL, "foo", "F", RW_ONCE),
    };
    rw_set *s = build(RW_MODE_SRW, 8192, r, 4);
    size_t len = 100000;
    uint8_t *data = malloc(len);
    const char *alpha = "ab fo.@xwcmoe";
    for (size_t i = 0; i < len; i++) data[i] = (uint8_t)alpha[rnd((uint32_t)strlen(alpha))];
    rw_scratch *sc = NULL;
    rw_scratch_new(s, NULL, &sc);
    obuf want = {0};
    rewrite(s, sc, data, len, 0, &want, NULL);
    rw_scratch_free(sc);
    rw_cache *cache = NULL;
    rw_cache_new(8, 16, 64, NULL, &cache);
    tjob j[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].set = s;
        j[i].data = data;
        j[i].len = len;
        j[i].cache = cache;
        pthread_create(&th[i], NULL, thread_main, &j[i]);
    }
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ok &= j[i].ok && j[i].out.n == want.n && !memcmp(j[i].out.p, want.p, want.n);
        free(j[i].out.p);
    }
    rw_cache_stats cs;
    rw_cache_stats_get(cache, &cs);
    check(ok, "4 threads, each its own scratch, one set: the single-thread output, every chunking");
    check(cs.hits + cs.misses == 40 && cs.stores == 40 && cs.entries == 7,
          "one cache shared by 4 threads: %llu hits + %llu misses, %llu stores, %llu entries",
          (unsigned long long)cs.hits, (unsigned long long)cs.misses,
          (unsigned long long)cs.stores, (unsigned long long)cs.entries);
    rw_cache_free(cache);
    free(want.p);
    free(data);
    rw_set_free(s);
}

/* ---- masks, reuse, status codes ------------------------------------------- */

static void test_masks_and_states(void)
{
    rw_rule_desc r[] = {
        R(RW_LITERAL, "www.origin.example", "www.clone.example", 0),
        R(RW_REGEX, "UA-\\d+-\\d+", "UA-0-0", 0),
        R(RW_LITERAL, "never-there", "x", 0),
        R(RW_REGEX, "foo\\b", "BAR", 0),
    };
    rw_set *s = build(RW_MODE_SRW, 8192, r, 4);
    rw_scratch *sc = NULL;
    rw_scratch_new(s, NULL, &sc);
    size_t len = strlen(body);
    obuf full = {0}, masked = {0}, skipped = {0};
    rw_stream *st = NULL;
    rw_stream_new(s, NULL, sink, &full, &st);
    rw_stream_feed(st, sc, body, len);
    rw_stream_finish(st, sc);
    uint8_t fired[1];
    memcpy(fired, rw_stream_matched(st), 1);
    check(fired[0] == (1 | 2 | 8), "the fired bitmap names rules 0, 1 and 3 (0x%02x)", fired[0]);
    check(rw_stream_feed(st, sc, "x", 1) == RW_E_STATE && rw_stream_finish(st, sc) == RW_E_STATE,
          "feed and finish after finish: RW_E_STATE");
    rw_stream_reset(st, sink, &masked);
    check(rw_stream_set_mask(st, fired, 1) == RW_OK, "a mask before the first feed");
    for (size_t at = 0; at < len; at += 5) rw_stream_feed(st, sc, body + at, len - at < 5 ? len - at : 5);
    rw_stream_finish(st, sc);
    check(masked.n == full.n && !memcmp(masked.p, full.p, full.n),
          "the fired bitmap as mask: the same output");
    rw_stream_reset(st, sink, &skipped);
    uint8_t none[1] = {0};
    rw_stream_set_mask(st, none, 1);
    rw_stream_feed(st, sc, body, len);
    rw_stream_stats stt;
    rw_stream_stats_get(st, &stt);
    check(stt.held == 0, "the empty bitmap: nothing is held");
    rw_stream_finish(st, sc);
    check(skipped.n == len && !memcmp(skipped.p, body, len), "the empty bitmap: the input, unscanned");
    check(rw_stream_set_mask(st, none, 1) == RW_E_STATE, "a mask after the first feed: RW_E_STATE");
    check(rw_stream_feed(NULL, sc, "x", 1) == RW_E_INVALID && rw_stream_feed(st, NULL, "x", 1) ==
              RW_E_INVALID && rw_stream_feed(st, sc, NULL, 1) == RW_E_INVALID,
          "NULL stream, scratch or data: RW_E_INVALID");
    obuf failing = {.fail_after = 2};
    rw_stream_reset(st, sink, &failing);
    rw_status a = rw_stream_feed(st, sc, body, len);
    if (a == RW_OK) a = rw_stream_finish(st, sc); /* the output comes at the latest here */
    rw_status b = rw_stream_feed(st, sc, body, len);
    check(a == RW_E_SINK && b == RW_E_STATE, "a refusing sink: RW_E_SINK, then RW_E_STATE (%s, %s)",
          rw_status_name(a), rw_status_name(b));
    obuf again = {0};
    rw_stream_reset(st, sink, &again);
    rw_stream_feed(st, sc, body, len);
    rw_stream_finish(st, sc);
    check(again.n == full.n && !memcmp(again.p, full.p, full.n), "reset after a failure: as new");
    /* a scratch too small for another set */
    rw_rule_desc big[] = {R(RW_REGEX, "a[^z]*z", "Z", 0)};
    rw_set *s2 = build(RW_MODE_SRW, 100000, big, 1);
    rw_stream *st2 = NULL;
    rw_stream_new(s2, NULL, sink, &again, &st2);
    check(rw_stream_feed(st2, sc, "abc", 3) == RW_E_INVALID, "a scratch sized for a smaller set: RW_E_INVALID");
    check(rw_scratch_add(sc, s2) == RW_OK && rw_stream_feed(st2, sc, "abc", 3) == RW_OK,
          "rw_scratch_add makes it serve both");
    rw_stream_free(st2);
    rw_set_free(s2);
    rw_stream_free(st);
    rw_scratch_free(sc);
    rw_set_free(s);
    free(full.p);
    free(masked.p);
    free(skipped.p);
    free(again.p);
    free(failing.p);
}

/* ---- long bodies against the reference ----------------------------------- */

static void test_long_bodies(void)
{
    static const struct {
        rw_mode mode;
        uint32_t L;
    } modes[] = {{RW_MODE_SRW, 16}, {RW_MODE_SRW, 64}, {RW_MODE_SUB_FILTER, 8192}, {RW_MODE_REPLACE_FILTER, 8192}};
    /* (the reference tries every end of every start up to L: SRW with a
     * large L would take hours on 300 KB) */
    for (int m = 0; m < 4; m++) {
        rw_rule_desc r[] = {
            R(RW_LITERAL, "ab", "<$0>", 0),
            R(m == 2 ? RW_LITERAL : RW_REGEX, m == 2 ? "ba" : "b[ab]*c", "[$0]", 0),
            R(RW_LITERAL, "cab", "C", RW_ONCE),
            R(m == 2 ? RW_LITERAL : RW_REGEX, m == 2 ? "ca" : "c+", "+", 0),
        };
        rw_set *s = build(modes[m].mode, modes[m].L, r, 4);
        rw_scratch *sc = NULL;
        rw_scratch_new(s, NULL, &sc);
        size_t len = 150000;
        uint8_t *data = malloc(len);
        for (size_t i = 0; i < len; i++) data[i] = (uint8_t)"aabbc"[rnd(5)];
        ref_rule rr[4];
        for (int i = 0; i < 4; i++)
            rr[i] = (ref_rule){r[i].kind == RW_REGEX, r[i].flags, r[i].pattern, r[i].pattern_len,
                               r[i].replacement, r[i].replacement_len};
        uint8_t *want;
        size_t wn;
        int refok = ref_rewrite((int)modes[m].mode, modes[m].L, rr, 4, data, len, &want, &wn) == 0;
        static const size_t chunks[] = {0, 1, 7, 4093, 65536, 65537, 200000};
        int ok = refok;
        for (int c = 0; c < 7 && ok; c++) {
            obuf o = {0};
            ok = rewrite(s, sc, data, len, chunks[c], &o, NULL) == RW_OK && o.n == wn &&
                 !memcmp(o.p, want, wn);
            free(o.p);
        }
        check(ok, "a 150 KB body (slices of %u bytes) in mode %d, L %u: the reference's output "
                  "for chunks of 1, 7, 4093, 65536, 65537, 200000 bytes and whole",
              RW_SLICE, (int)modes[m].mode, modes[m].L);
        if (refok) free(want);
        free(data);
        rw_scratch_free(sc);
        rw_set_free(s);
    }
}

/* ---- the skip cache ---------------------------------------------------------- */

static void test_cache(void)
{
    rw_cache *c = NULL;
    check(rw_cache_new(20, 0, 8, NULL, &c) == RW_E_INVALID && !c, "capacity 0: RW_E_INVALID");
    check(rw_cache_new(20, 8, 16, NULL, &c) == RW_OK, "a cache of 8 keys of 16 bytes, 20-rule bitmaps");
    uint8_t bm[3] = {1, 2, 3}, out[3] = {0};
    check(rw_cache_lookup(c, "a", 1, out) == 0, "a miss");
    rw_cache_store(c, "a", 1, bm);
    check(rw_cache_lookup(c, "a", 1, out) == 1 && !memcmp(out, bm, 3), "a hit gives the bitmap back");
    uint8_t bm2[3] = {9, 9, 9};
    rw_cache_store(c, "a", 1, bm2);
    check(rw_cache_lookup(c, "a", 1, out) == 1 && !memcmp(out, bm2, 3), "a store replaces");
    check(rw_cache_store(c, "0123456789abcdefX", 17, bm) == RW_E_LIMIT &&
              rw_cache_lookup(c, "0123456789abcdefX", 17, out) == 0,
          "a key over key_max is refused and misses");
    check(rw_cache_store(c, "", 0, bm) == RW_OK && rw_cache_lookup(c, "", 0, out) == 1, "the empty key");
    /* 8 ways, one set: the 9th key evicts the least recently used */
    for (int i = 0; i < 6; i++) {
        char k[4] = {'k', (char)('0' + i), 0};
        rw_cache_store(c, k, 2, bm);
    }
    rw_cache_lookup(c, "a", 1, out); /* "" is now the oldest */
    rw_cache_store(c, "new", 3, bm);
    int empty_gone = rw_cache_lookup(c, "", 0, out) == 0;
    check(empty_gone && rw_cache_lookup(c, "a", 1, out) == 1 && rw_cache_lookup(c, "new", 3, out) == 1,
          "a full set evicts its least recently used key");
    check(rw_cache_forget(c, "a", 1) == 1 && rw_cache_lookup(c, "a", 1, out) == 0, "forget");
    rw_cache_stats s;
    rw_cache_stats_get(c, &s);
    check(s.evictions == 1 && s.refused == 1 && s.entries == 7 && s.hits >= 5 && s.misses >= 4,
          "counters: %llu hits, %llu misses, %llu evictions, %llu refused, %llu entries",
          (unsigned long long)s.hits, (unsigned long long)s.misses,
          (unsigned long long)s.evictions, (unsigned long long)s.refused,
          (unsigned long long)s.entries);
    rw_cache_clear(c);
    rw_cache_stats_get(c, &s);
    check(s.entries == 0 && rw_cache_lookup(c, "new", 3, out) == 0, "clear");
    rw_cache_free(c);
}

/* ---- the stored form ------------------------------------------------------------ */

static void test_store(void)
{
    rw_rule_desc r[] = {
        R(RW_LITERAL, "www.origin.example", "www.clone.example", RW_CASELESS),
        R(RW_REGEX, "UA-\\d+-\\d+", "UA-0-0", 0),
        R(RW_REGEX, "(\\w+)@(\\w+)\\.com", "$2 at $1", RW_ONCE),
        R(RW_REGEX, "foo\\b", "BAR", 0),
    };
    rw_set *s = build(RW_MODE_SRW, 8192, r, 4);
    vm_buf b = {0};
    rw_status ser = rw_set_serialize(s, &b);
    check(ser == RW_OK && !b.failed, "serialize: %zu bytes", b.len);
    rw_scratch *sc = NULL;
    rw_scratch_new(s, NULL, &sc);
    obuf want = {0};
    rewrite(s, sc, (const uint8_t *)body, strlen(body), 3, &want, NULL);
    rw_set *t = NULL;
    char err[200];
    rw_status st = rw_set_load(b.data, b.len, NULL, &t, err, sizeof err);
    obuf got = {0};
    if (!st) rewrite(t, sc, (const uint8_t *)body, strlen(body), 3, &got, NULL);
    check(!st && got.n == want.n && !memcmp(got.p, want.p, want.n) && rw_set_nrules(t) == 4 &&
              rw_set_rule_pos(t, 2).line == 0,
          "load gives a set that rewrites the same (%s)", st ? err : "ok");
    rw_set_free(t);
    /* every truncation */
    int trunc_ok = 1;
    for (size_t n = 0; n < b.len; n++) {
        t = NULL;
        st = rw_set_load(b.data, n, NULL, &t, err, sizeof err);
        if (st == RW_OK || t || !err[0]) trunc_ok = 0;
        rw_set_free(t);
    }
    check(trunc_ok, "every truncation is refused with a message");
    /* every byte of the header and the records changed */
    size_t upto = 88 + 4 * 48;
    int flips = 0, accepted = 0;
    uint8_t *copy = malloc(b.len);
    for (size_t i = 0; i < upto; i++) {
        for (int v = 0; v < 3; v++) {
            memcpy(copy, b.data, b.len);
            copy[i] ^= (uint8_t)(v == 0 ? 0x01 : v == 1 ? 0x80 : 0xff);
            t = NULL;
            st = rw_set_load(copy, b.len, NULL, &t, err, sizeof err);
            flips++;
            if (st == RW_OK) {
                accepted++;
                obuf o = {0};
                rewrite(t, sc, (const uint8_t *)body, strlen(body), 5, &o, NULL);
                free(o.p);
            }
            rw_set_free(t);
        }
    }
    check(1, "%d single-byte changes of the header and records: %d accepted (a source "
             "position, flags that still make sense), the rest refused; none crashed",
          flips, accepted);
    /* a database from another Hyperscan version: rebuilt from the patterns */
    memcpy(copy, b.data, b.len);
    uint64_t lo = vm_rd64(copy + 48), ro = vm_rd64(copy + 64);
    copy[lo + 4] ^= 0x40; /* the blob's version field */
    copy[ro + 4] ^= 0x40;
    t = NULL;
    st = rw_set_load(copy, b.len, NULL, &t, err, sizeof err);
    got.n = 0;
    if (!st) rewrite(t, sc, (const uint8_t *)body, strlen(body), 3, &got, NULL);
    check(!st && got.n == want.n && !memcmp(got.p, want.p, want.n),
          "a stored database of another Hyperscan version is rebuilt (%s)", st ? err : "ok");
    rw_set_free(t);
    memcpy(copy, b.data, b.len);
    copy[8] = 99;
    check(rw_set_load(copy, b.len, NULL, &t, err, sizeof err) == RW_E_VERSION, "another format version: RW_E_VERSION (%s)", err);
    free(copy);
    free(b.data);
    free(want.p);
    free(got.p);
    rw_scratch_free(sc);
    rw_set_free(s);
}

int main(void)
{
    test_no_alloc();
    test_masks_and_states();
    test_cache();
    test_store();
    test_long_bodies();
    test_threads();
    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}
