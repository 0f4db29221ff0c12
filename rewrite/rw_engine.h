/*
 * rw_engine.h: the stream and scratch objects as the engine's files see
 * them (private to rewrite/). rw_stream.c owns their life cycle, the
 * output and the template expansion; rw_hs.c is the Hyperscan-driven
 * engine of SRW and sub_filter modes, rw_rf.c the PCRE2-driven engine of
 * replace_filter mode.
 */
#ifndef RW_ENGINE_H
#define RW_ENGINE_H

#include "rw_set.h"
#include "rw_stream.h"

/* A candidate match in the candidate table: the best match found so far
 * at one start offset (rule1 = rule index + 1; 0: none), and the longest
 * match a variable-width rule reported there (vrule1 = its index + 1,
 * RW_VMANY when several variable-width rules reported there): when a
 * committed match ends inside that one, the rule may match again at an
 * unreported start. */
typedef struct rw_cand {
    uint32_t rule1;
    uint32_t len;
    uint32_t vrule1;
    uint32_t vlen;
} rw_cand;
#define RW_VMANY UINT32_MAX

/* Per variable-width rule (SRW): where a match Hyperscan could not report
 * may start, [rlo, rhi] (empty when rlo > rhi): the hull of the ranges
 * its hidden reports imply, checked with pcre2_dfa_match. */
typedef struct rw_hull {
    uint64_t rlo, rhi;
} rw_hull;

/* A candidate kept between two feed calls: start offset and candidate. */
typedef struct rw_kept {
    uint32_t delta; /* start - pos */
    rw_cand c;
} rw_kept;
/* Candidates a stream keeps between feed calls without rescanning. */
#define RW_KEPT_MAX 64u

enum { RW_ST_OPEN = 0, RW_ST_DONE = 1, RW_ST_FAILED = 2 };

struct rw_stream {
    const rw_set *set;
    vm_allocator al;
    rw_sink_fn sink;
    void *ud;
    int state;
    int started;            /* something was fed */
    int passthrough;        /* no rule can fire any more: copy input out */
    int gave_up;            /* replace_filter: buffer cap exceeded */
    int final;              /* feeding the last chunk: no cap check */
    uint64_t t;             /* bytes fed */
    uint64_t pos;           /* first byte neither written out nor decided */
    uint64_t base;          /* stream offset of win[0] */
    uint8_t *win;           /* held bytes [base, t) between feed calls */
    size_t wcap;
    rw_kept *kept;          /* candidates in [pos, t) between feed calls */
    uint32_t nkept, kcap;
    int kept_lost;          /* more than kcap: rescan the window when loading */
    uint32_t W;             /* widest active rule (SRW, sub_filter) */
    uint64_t hz;            /* the frontier so far (rw_hs.c): starts below it are decidable */
    uint64_t lv_at;         /* the start PCRE2 last checked for live rules (rw_hs.c, start_bound) */
    uint64_t lv_len;        /* the bytes after it checked (0: none yet) */
    uint32_t lv_w;          /* its bound: the widest rule still alive there */
    int live_checks;        /* this feed call runs PCRE2 liveness checks (< W/3 bytes) */
    uint32_t live_budget;   /* rule checks left in this feed call (rw_hs.c, start_bound) */
    uint32_t nactive;       /* active rules */
    uint32_t nbitmap;       /* bytes of each rule bitmap */
    uint8_t *active;        /* rules that may still fire */
    uint8_t *matched;       /* rules that fired */
    rw_hull *hull;          /* set->nvar entries */
    uint32_t nrepair;       /* hulls with a pending repair range */
    hs_stream_t *hs_lit, *hs_re;   /* the scanning streams */
    hs_stream_t *rs_lit, *rs_re;   /* rescans after a once rule fired */
    rw_stream_stats stats;
};

struct rw_scratch {
    vm_allocator al;
    hs_scratch_t *hs;
    uint8_t *lin;           /* the window and the slice, contiguous */
    size_t lin_cap;
    rw_cand *ring;          /* candidates by start offset & mask */
    uint64_t *rbits;        /* which ring entries are set */
    size_t ring_size;       /* a power of two */
    pcre2_general_context *gctx;
    pcre2_match_context *mctx;
    pcre2_match_data *md;   /* captures: maxgroups + 1 pairs */
    pcre2_match_data *md3;  /* DFA ends: 3 pairs */
    pcre2_jit_stack *jit;
    int *ws;                /* pcre2_dfa_match workspace */
    size_t ws_ints;
    uint32_t md_pairs;
    size_t bytes;           /* our allocations */
    /* the callouts' state */
    size_t pin_end;         /* capture: the end a match must reach */
    const uint8_t *ac_pat;  /* replace_filter pending match: the pattern */
    size_t ac_len;
};

/* rw_stream.c: output. */
int rw_emit(rw_stream *st, const uint8_t *p, size_t n);
/* Writes rule r's replacement for the match [ms, me) of lin (offsets in
 * lin); groups g >= 1 from ov pairs ovbase + g (NULL: every group
 * empty). Returns 0, or -1 when the sink refused (the stream is failed). */
int rw_expand(rw_stream *st, const rw_rule *r, const uint8_t *lin, size_t ms, size_t me,
              const PCRE2_SIZE *ov, uint32_t ovpairs, uint32_t ovbase);
void rw_fail(rw_stream *st, rw_status why);
/* Drops the scratch window's bytes before pos - 1 (the left context). */
void rw_compact(rw_stream *st, rw_scratch *sc);
/* Compacts the scratch window and appends the next slice of p[0..n) to
 * it (at most RW_SLICE bytes, as many as fit); returns its length and
 * stores where it starts in lin in *at. t is not advanced. */
size_t rw_append_slice(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n, size_t *at);
/* Nothing can match any more: writes out what is held, then p[0..n),
 * and leaves the stream empty. Returns RW_OK or RW_E_SINK. */
rw_status rw_pass_rest(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n);

/* The match limit of one PCRE2 call over n bytes: linear in n, so that a
 * pattern doing linear work always finishes and a pathological one stops
 * in time linear in the body (docs/rewrite.md, "Time"). */
static inline uint32_t rw_budget(size_t n)
{
    uint64_t b = 1000000u + 64u * (uint64_t)n;
    return b > 100000000u ? 100000000u : (uint32_t)b;
}

/* rw_hs.c */
rw_status rw_hs_feed(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n);
rw_status rw_hs_finish(rw_stream *st, rw_scratch *sc);
/* rw_rf.c */
rw_status rw_rf_feed(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n);
rw_status rw_rf_finish(rw_stream *st, rw_scratch *sc);

#endif
