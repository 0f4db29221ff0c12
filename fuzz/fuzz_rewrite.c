/*
 * fuzz_rewrite.c: random rule sets, bodies and chunkings through the
 * rewrite engine (rewrite/), with the brute-force reference
 * (tests/rewrite/rw_ref.c) as the oracle.
 *
 * Input layout (every byte is used modulo what it selects, so that
 * mutations stay meaningful):
 *   byte 0       mode (% 3: SRW, replace_filter, sub_filter)
 *   byte 1       max_match, from {1, 2, 3, 4, 6, 8, 16, 64, 8192}
 *   byte 2       number of rules (% 6 + 1)
 *   per rule     a byte: bit 0 regex, bits 1-4 flags i, s, m, once;
 *                a byte n % 16 and n pattern bytes; a byte m % 8 and m
 *                template bytes
 *   the rest     the body (at most 512 bytes); chunk k's length is
 *                body[k % len] % 7 (0: an empty chunk, 1 after an empty one)
 *
 * Checks (FUZZ_FAIL aborts, so libFuzzer keeps the input): a set that
 * builds must stream; the statuses are those rw_stream.h lists; the
 * output is the same whole and chunked, and the reference's, except in
 * replace_filter mode where the buffer cap (chunking-dependent by
 * design) or PCRE2's time budget made the engine give up; no stream ever
 * holds more than rw_set_holdback; the stored form loads back and
 * rewrites the same. A set that does not build must come with
 * diagnostics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "rw_ref.h"
#include "rw_stream.h"

#define MAX_BODY 512

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

typedef struct obuf {
    uint8_t p[1 << 16];
    size_t n;
    int overflow;
} obuf;

static int sink(void *ud, const uint8_t *p, size_t n)
{
    obuf *o = ud;
    if (n > sizeof o->p - o->n) {
        o->overflow = 1;
        return 0;
    }
    memcpy(o->p + o->n, p, n);
    o->n += n;
    return 0;
}

static int ok_status(rw_status st)
{
    return st == RW_OK || st == RW_E_LIMIT;
}

/* Runs the body through a stream; chunked: lengths from the body bytes. */
static rw_status run(const rw_set *s, rw_scratch *sc, const uint8_t *body, size_t len, int chunked,
                     obuf *o, rw_stream_stats *stt)
{
    rw_stream *st = NULL;
    o->n = 0;
    o->overflow = 0;
    rw_status rc = rw_stream_new(s, NULL, sink, o, &st);
    if (rc) return rc;
    size_t at = 0, k = 0;
    int zeros = 0;
    while (!rc && at < len) {
        size_t n = chunked ? body[k++ % len] % 7 : len;
        /* an empty chunk, but never two in a row: the loop must end */
        if (n == 0 && zeros++) n = 1;
        if (n) zeros = 0;
        if (n > len - at) n = len - at;
        rc = rw_stream_feed(st, sc, body + at, n);
        at += n;
        rw_stream_stats_get(st, stt);
        if (stt->held > rw_set_holdback(s))
            FUZZ_FAIL("a stream holds %llu bytes, more than the hold-back %llu",
                      (unsigned long long)stt->held, (unsigned long long)rw_set_holdback(s));
    }
    if (!rc) rc = rw_stream_finish(st, sc);
    rw_stream_stats_get(st, stt);
    rw_stream_free(st);
    return rc;
}

static obuf whole, chunked, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t Ls[] = {1, 2, 3, 4, 6, 8, 16, 64, 8192};
    if (size < 3) return 0;
    rw_set_desc d;
    rw_set_desc_init(&d);
    d.mode = (rw_mode)(data[0] % 3);
    d.max_match = Ls[data[1] % 9];
    uint32_t n = data[2] % 6 + 1;
    rw_rule_desc r[6];
    ref_rule rr[6];
    size_t at = 3;
    for (uint32_t i = 0; i < n; i++) {
        if (at + 2 > size) return 0;
        uint8_t kf = data[at++];
        memset(&r[i], 0, sizeof r[i]);
        r[i].kind = kf & 1 ? RW_REGEX : RW_LITERAL;
        r[i].flags = (kf >> 1) & RW_FLAGS_ALL;
        size_t pl = data[at++] % 16;
        if (at + pl + 1 > size) return 0;
        r[i].pattern = data + at;
        r[i].pattern_len = pl;
        at += pl;
        size_t tl = data[at++] % 8;
        if (at + tl > size) return 0;
        r[i].replacement = data + at;
        r[i].replacement_len = tl;
        at += tl;
        rr[i] = (ref_rule){r[i].kind == RW_REGEX, r[i].flags, r[i].pattern, pl, r[i].replacement, tl};
    }
    const uint8_t *body = data + at;
    size_t blen = size - at;
    if (blen > MAX_BODY) return 0;
    d.rules = r;
    d.nrules = n;
    rw_set *s = NULL;
    rw_diags dg;
    rw_status st = rw_build(&d, NULL, &s, &dg);
    if (fuzz_verbose()) fprintf(stderr, "fuzz: build: %s (%u diagnostics)\n", rw_status_name(st), dg.n);
    if (st != RW_OK) {
        if (st != RW_E_RULES && st != RW_E_NOMEM) FUZZ_FAIL("rw_build returned %s", rw_status_name(st));
        if (st == RW_E_RULES && dg.n == 0) FUZZ_FAIL("a rejected set without a diagnostic");
        if (s) FUZZ_FAIL("a failed build left a set");
        rw_diags_free(&dg);
        return 0;
    }
    rw_diags_free(&dg);
    rw_scratch *sc = NULL;
    if (rw_scratch_new(s, NULL, &sc) != RW_OK) FUZZ_FAIL("rw_scratch_new failed");
    rw_stream_stats sw, sch;
    rw_status a = run(s, sc, body, blen, 0, &whole, &sw);
    rw_status b = run(s, sc, body, blen, 1, &chunked, &sch);
    if (!ok_status(a) || !ok_status(b))
        FUZZ_FAIL("stream statuses %s, %s", rw_status_name(a), rw_status_name(b));
    int gave_up = sw.gave_up || sch.gave_up;
    int comparable = a == RW_OK && b == RW_OK && !gave_up && !whole.overflow && !chunked.overflow;
    if (comparable && (whole.n != chunked.n || memcmp(whole.p, chunked.p, whole.n)))
        FUZZ_FAIL("the output depends on the chunking (%zu vs %zu bytes)", whole.n, chunked.n);
    if (comparable && (d.mode != RW_MODE_SRW || d.max_match <= 64)) {
        /* the reference tries every end up to L: cheap enough here */
        uint8_t *ro;
        size_t rn;
        if (ref_rewrite((int)d.mode, d.max_match, rr, n, body, blen, &ro, &rn) == 0) {
            if (rn != whole.n || memcmp(ro, whole.p, rn))
                FUZZ_FAIL("the output differs from the reference's (%zu vs %zu bytes)", whole.n, rn);
            free(ro);
        }
    }
    /* the stored form rewrites the same */
    vm_buf sb = {0};
    if (rw_set_serialize(s, &sb) == RW_OK) {
        rw_set *t = NULL;
        char err[200];
        rw_status lt = rw_set_load(sb.data, sb.len, NULL, &t, err, sizeof err);
        if (lt != RW_OK && lt != RW_E_NOMEM) FUZZ_FAIL("a serialized set does not load: %s", err);
        if (t) {
            rw_stream_stats sa;
            rw_status c = run(t, sc, body, blen, 0, &again, &sa);
            if (c == RW_OK && a == RW_OK && !sa.gave_up && !sw.gave_up &&
                (again.n != whole.n || memcmp(again.p, whole.p, whole.n)))
                FUZZ_FAIL("the reloaded set rewrites differently");
            rw_set_free(t);
        }
    }
    free(sb.data);
    rw_scratch_free(sc);
    rw_set_free(s);
    return 0;
}
