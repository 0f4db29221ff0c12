/*
 * rw_hs.c: the engine of SRW and sub_filter modes (docs/rewrite.md,
 * "How the engine decides").
 *
 * Hyperscan scans every byte once, in streaming mode, and reports where
 * matches end (and, for rules whose matches vary in width, the leftmost
 * start per end: HS_FLAG_SOM_LEFTMOST). Nothing is decided in its
 * callback: the callback only records, per start offset, the best
 * candidate found so far (the candidate table, a ring indexed by offset),
 * and, per variable-width rule, the span of its reports. Decisions are
 * made after each scan call for the starts below the frontier
 * F = t - W - 1 (W: the widest active rule, at most L): every match of
 * at most W bytes starting there has ended at least one byte before t, so
 * Hyperscan, which may hold back a report that depends on the next byte
 * (`\b`, `$`), has reported it. At the end of data F = t.
 *
 * The decision loop, from pos (the first undecided byte):
 *   1. c = the first start >= pos with a candidate;
 *   2. variable-width rules whose reports were hidden (their leftmost
 *      start lay before pos, where a committed match covers it, or made a
 *      match longer than its width) may match at an unreported start:
 *      their possible starts below c are checked with pcre2_dfa_match
 *      (anchored, so left context is visible; all ends at once); a match
 *      found lowers c;
 *   3. at c, a variable-width rule with a report spanning c may have an
 *      end that Hyperscan attributed to an earlier start: pcre2_dfa_match
 *      gives its longest end at c;
 *   4. the winner (longest, then the earlier rule; sub_filter: the
 *      earlier rule) is written out, captures computed if its template
 *      needs them, and pos moves past it. A once rule that fires becomes
 *      inactive; if it held candidates in the table, the held window is
 *      scanned again (a second Hyperscan stream) so that the candidates
 *      it displaced come back.
 * Bytes below F with no candidate are written out as they are.
 */
#include <string.h>

#include "rw_engine.h"

typedef struct hsctx {
    rw_stream *st;
    rw_scratch *sc;
    uint64_t adj;   /* added to Hyperscan's offsets (rescans) */
    uint64_t limit; /* no report can end past this */
} hsctx;

/* ---- the candidate table ------------------------------------------------ */

static inline int better(int sf, uint32_t rule, uint32_t len, const rw_cand *c)
{
    uint32_t cr = c->rule1 - 1;
    if (sf) return rule < cr;
    return len > c->len || (len == c->len && rule < cr);
}

/* Records the candidate (rule, len) at start b; var: the rule has
 * variable width (its longest report here is kept apart too). */
static inline void ring_put(rw_scratch *sc, int sf, uint64_t b, uint32_t rule, uint32_t len,
                            int var)
{
    size_t i = (size_t)(b & (sc->ring_size - 1));
    uint64_t bit = 1ull << (i & 63);
    uint64_t *w = &sc->rbits[i >> 6];
    rw_cand *c = &sc->ring[i];
    if (!(*w & bit)) {
        *w |= bit;
        c->rule1 = rule + 1;
        c->len = len;
        c->vrule1 = var ? rule + 1 : 0;
        c->vlen = var ? len : 0;
        return;
    }
    if (better(sf, rule, len, c)) {
        c->rule1 = rule + 1;
        c->len = len;
    }
    if (var) {
        if (c->vrule1 == 0 || c->vrule1 == rule + 1) c->vrule1 = rule + 1;
        else c->vrule1 = RW_VMANY;
        if (len > c->vlen) c->vlen = len;
    }
}

/* Copies a kept candidate back in as it was. */
static inline void ring_restore(rw_scratch *sc, uint64_t b, rw_cand c)
{
    size_t i = (size_t)(b & (sc->ring_size - 1));
    sc->rbits[i >> 6] |= 1ull << (i & 63);
    sc->ring[i] = c;
}

/* The first start in [from, to) with a candidate, or `to`. */
static uint64_t ring_next(const rw_scratch *sc, uint64_t from, uint64_t to)
{
    size_t mask = sc->ring_size - 1;
    uint64_t x = from;
    while (x < to) {
        size_t i = (size_t)(x & mask);
        unsigned bit = (unsigned)(i & 63);
        uint64_t w = sc->rbits[i >> 6] >> bit;
        if (w) {
            uint64_t y = x + (uint64_t)__builtin_ctzll(w);
            return y < to ? y : to;
        }
        x += 64 - bit;
    }
    return to;
}

static void ring_clear(rw_scratch *sc, uint64_t from, uint64_t to)
{
    size_t mask = sc->ring_size - 1;
    uint64_t x = from;
    while (x < to) {
        size_t i = (size_t)(x & mask);
        unsigned bit = (unsigned)(i & 63);
        uint64_t n = to - x;
        unsigned span = 64 - bit;
        if (n < span) span = (unsigned)n;
        uint64_t m = span == 64 ? ~0ull : ((1ull << span) - 1) << bit;
        sc->rbits[i >> 6] &= ~m;
        x += span;
    }
}

static inline int ring_has(const rw_scratch *sc, uint64_t b)
{
    size_t i = (size_t)(b & (sc->ring_size - 1));
    return (int)(sc->rbits[i >> 6] >> (i & 63) & 1);
}

static inline rw_cand *ring_at(rw_scratch *sc, uint64_t b)
{
    return &sc->ring[b & (sc->ring_size - 1)];
}

/* ---- hulls and repair ranges -------------------------------------------- */

static void repair_add(rw_stream *st, rw_hull *h, uint64_t a, uint64_t z)
{
    if (a > z) return;
    if (h->rlo > h->rhi) {
        h->rlo = a;
        h->rhi = z;
        st->nrepair++;
        return;
    }
    if (a < h->rlo) h->rlo = a;
    if (z > h->rhi) h->rhi = z;
}

static void repair_drop(rw_stream *st, rw_hull *h)
{
    if (h->rlo <= h->rhi) st->nrepair--;
    h->rlo = 1;
    h->rhi = 0;
}

/* Moves the range's start up to lo, dropping the range once empty. */
static void repair_shrink(rw_stream *st, rw_hull *h, uint64_t lo)
{
    if (h->rlo > h->rhi || lo <= h->rlo) return;
    if (lo > h->rhi) repair_drop(st, h);
    else h->rlo = lo;
}

/* ---- Hyperscan's callback: record only ---------------------------------- */

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx)
{
    (void)flags;
    hsctx *x = ctx;
    rw_stream *st = x->st;
    const rw_set *s = st->set;
    if (id >= s->nrules || !rw_bit(st->active, id)) return 0;
    const rw_rule *r = &s->rules[id];
    uint64_t e = (uint64_t)to + x->adj;
    if (e <= st->pos || e > x->limit || e < r->min_width) return 0;
    int sf = s->mode == RW_MODE_SUB_FILTER;
    if (r->fixed) {
        if (e < r->width) return 0;
        uint64_t b = e - r->width;
        if (b >= st->pos) ring_put(x->sc, sf, b, id, r->width, 0);
        return 0;
    }
    if (r->var_index >= s->nvar) return 0;
    rw_hull *h = &st->hull[r->var_index];
    int known = from != HS_OFFSET_PAST_HORIZON && from <= to;
    uint64_t b = known ? (uint64_t)from + x->adj : 0;
    if (known && b >= st->pos && e - b <= r->width) {
        ring_put(x->sc, sf, b, id, (uint32_t)(e - b), 1);
        return 0;
    }
    /* a match Hyperscan could not report may start in [e - width, e - min] */
    uint64_t a = e > r->width ? e - r->width : 0;
    if (a < st->pos) a = st->pos;
    repair_add(st, h, a, e - r->min_width);
    return 0;
}

/* ---- PCRE2: exact ends and captures -------------------------------------- */

/* The longest end of rule r's matches at start x, at most r->width bytes
 * long: pcre2_dfa_match anchored at x, on a subject that ends two bytes
 * past the longest match (for a trailing \b, $ or \Z) with PCRE2_NOTEOL
 * unless it ends at the end of the data. Returns the length, 0 for no
 * match, -1 when PCRE2 failed. */
static int64_t dfa_longest(rw_stream *st, rw_scratch *sc, const rw_rule *r, uint64_t x, int eod)
{
    uint64_t end = x + r->width + 2;
    if (end > st->t) end = st->t;
    int noteol = !(eod && end == st->t);
    st->stats.dfa_runs++;
    pcre2_set_match_limit(sc->mctx, rw_budget((size_t)(end - x)));
    int rc = pcre2_dfa_match(r->dfa, sc->lin, (PCRE2_SIZE)(end - st->base),
                             (PCRE2_SIZE)(x - st->base),
                             PCRE2_ANCHORED | (noteol ? PCRE2_NOTEOL : 0), sc->md3, sc->mctx,
                             sc->ws, sc->ws_ints);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc < 0) return -1;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md3);
    int n = rc == 0 ? 3 : rc;
    for (int k = 0; k < n; k++) {
        uint64_t me = st->base + ov[2 * k + 1];
        if (me > x && me - x <= r->width) return (int64_t)(me - x);
    }
    return 0;
}

static int pin_end(pcre2_callout_block *cb, void *ud)
{
    rw_scratch *sc = ud;
    return cb->current_position == sc->pin_end ? 0 : 1;
}

/* Groups of rule r for the match [b, e): PCRE2's backtracking matcher,
 * anchored at b, with a callout that fails every path not ending at e, so
 * the groups are those Perl picks for exactly that span. NULL when PCRE2
 * gives up (budget): the groups are then empty. */
static const PCRE2_SIZE *capture(rw_stream *st, rw_scratch *sc, const rw_rule *r, uint64_t b,
                                 uint64_t e, int eod)
{
    uint64_t end = e + 2;
    if (end > st->t) end = st->t;
    int noteol = !(eod && end == st->t);
    st->stats.captures++;
    sc->pin_end = (size_t)(e - st->base);
    pcre2_set_callout(sc->mctx, pin_end, sc);
    pcre2_set_match_limit(sc->mctx, rw_budget((size_t)(end - b)));
    int rc = pcre2_match(r->cap, sc->lin, (PCRE2_SIZE)(end - st->base), (PCRE2_SIZE)(b - st->base),
                         noteol ? PCRE2_NOTEOL : 0, sc->md, sc->mctx); /* anchored by compilation */
    pcre2_set_callout(sc->mctx, NULL, NULL);
    const PCRE2_SIZE *ov = rc > 0 ? pcre2_get_ovector_pointer(sc->md) : NULL;
    if (!ov || ov[0] != b - st->base || ov[1] != e - st->base) {
        st->stats.captures_failed++;
        return NULL;
    }
    return ov;
}

/* ---- deciding ------------------------------------------------------------ */

/* Step 2: possible unreported starts below *c (and F). */
static rw_status repair(rw_stream *st, rw_scratch *sc, uint64_t *c, uint64_t F, int eod)
{
    const rw_set *s = st->set;
    int sf = s->mode == RW_MODE_SUB_FILTER;
    for (uint32_t i = 0; i < s->nrules && st->nrepair; i++) {
        const rw_rule *r = &s->rules[i];
        if (r->var_index >= s->nvar) continue;
        rw_hull *h = &st->hull[r->var_index];
        if (h->rlo > h->rhi) continue;
        if (!rw_bit(st->active, i)) {
            repair_drop(st, h);
            continue;
        }
        repair_shrink(st, h, st->pos);
        if (h->rlo > h->rhi) continue;
        uint64_t lim = *c < F ? *c : F;
        if (h->rhi + 1 < lim) lim = h->rhi + 1;
        uint64_t x = h->rlo;
        for (; x < lim; x++) {
            uint8_t ch = sc->lin[x - st->base];
            if (!(r->first[ch >> 3] >> (ch & 7) & 1)) continue;
            int64_t len = dfa_longest(st, sc, r, x, eod);
            if (len < 0) return RW_E_LIMIT;
            if (len > 0) {
                ring_put(sc, sf, x, i, (uint32_t)len, 1);
                *c = x;
                break;
            }
        }
        repair_shrink(st, h, x < lim ? x + 1 : lim);
    }
    return RW_OK;
}

/* Step 3: hidden ends at c. */
static rw_status zones(rw_stream *st, rw_scratch *sc, uint64_t c, rw_cand *best, int eod)
{
    const rw_set *s = st->set;
    for (uint32_t i = 0; i < s->nrules; i++) {
        const rw_rule *r = &s->rules[i];
        if (r->var_index >= s->nvar || !rw_bit(st->active, i)) continue;
        const rw_hull *h = &st->hull[r->var_index];
        if (!(h->rlo <= c && c <= h->rhi)) continue;
        int64_t len = dfa_longest(st, sc, r, c, eod);
        if (len < 0) return RW_E_LIMIT;
        if (len > 0 && (best->rule1 == 0 || better(0, i, (uint32_t)len, best))) {
            best->rule1 = i + 1;
            best->len = (uint32_t)len;
        }
    }
    return RW_OK;
}

/* Scans the held window [pos - 1, t) again with the rescan streams: after
 * once rule `fired` fired, the candidates at the starts where it was the
 * best are dropped and come back from the scan without it (elsewhere the
 * best stays the best); with fired = UINT32_MAX (a window whose
 * candidates were not kept) every candidate comes back. Matches the
 * held window hid behind an earlier commit are reported from pos - 1 on,
 * so they come back too, or as repair ranges. */
static rw_status rescan(rw_stream *st, rw_scratch *sc, int eod, uint32_t fired)
{
    st->stats.rescans++;
    if (fired == UINT32_MAX) {
        ring_clear(sc, st->pos, st->t);
    } else {
        for (uint64_t b = ring_next(sc, st->pos, st->t); b < st->t;
             b = ring_next(sc, b + 1, st->t))
            if (ring_at(sc, b)->rule1 == fired + 1) ring_clear(sc, b, b + 1);
    }
    uint64_t from = st->pos ? st->pos - 1 : 0;
    hsctx x = {st, sc, from, st->t};
    hs_stream_t *rs[2] = {st->rs_lit, st->rs_re};
    for (int k = 0; k < 2; k++) {
        if (!rs[k]) continue;
        hs_reset_stream(rs[k], 0, NULL, NULL, NULL);
        if (st->t > from &&
            hs_scan_stream(rs[k], (const char *)sc->lin + (from - st->base),
                           (unsigned)(st->t - from), 0, sc->hs, on_match, &x) != HS_SUCCESS)
            return RW_E_BACKEND;
        /* at the end of data, what depends on the end comes now */
        if (eod && hs_reset_stream(rs[k], 0, sc->hs, on_match, &x) != HS_SUCCESS)
            return RW_E_BACKEND;
    }
    return RW_OK;
}

static rw_status commit(rw_stream *st, rw_scratch *sc, uint64_t c, rw_cand best, int eod)
{
    const rw_set *s = st->set;
    uint32_t ri = best.rule1 - 1;
    const rw_rule *r = &s->rules[ri];
    uint64_t e = c + best.len;
    if (rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(c - st->pos))) return RW_E_SINK;
    const PCRE2_SIZE *ov = NULL;
    if (r->uses_groups && r->cap) ov = capture(st, sc, r, c, e, eod);
    if (rw_expand(st, r, sc->lin, (size_t)(c - st->base), (size_t)(e - st->base), ov,
                  sc->md_pairs, 0))
        return RW_E_SINK;
    /* A variable-width rule's report that starts inside [c, e) and ends
     * past e: its leftmost start is now covered, but the rule may match
     * at a later start that Hyperscan did not report (the candidate
     * table holds nothing in [pos, c)). */
    if (s->nvar) {
        for (uint64_t b = c; b < e; b = ring_next(sc, b + 1, e)) {
            if (!ring_has(sc, b)) continue;
            const rw_cand *q = ring_at(sc, b);
            if (q->vrule1 == 0 || b + q->vlen <= e) continue;
            for (uint32_t i = 0; i < s->nrules; i++) {
                const rw_rule *v = &s->rules[i];
                if (v->var_index >= s->nvar || !rw_bit(st->active, i)) continue;
                if (q->vrule1 != RW_VMANY && q->vrule1 != i + 1) continue;
                if (b + q->vlen >= v->min_width)
                    repair_add(st, &st->hull[v->var_index], e, b + q->vlen - v->min_width);
            }
        }
    }
    uint64_t old = st->pos;
    st->pos = e;
    ring_clear(sc, old, e);
    rw_bit_set(st->matched, ri);
    st->stats.replacements++;
    if (r->flags & RW_ONCE) {
        rw_bit_clear(st->active, ri);
        if (st->nactive) st->nactive--;
        if (st->nactive == 0) {
            st->passthrough = 1;
            ring_clear(sc, st->pos, st->t);
            return RW_OK;
        }
        /* did it hold candidates that may hide others? */
        for (uint64_t b = ring_next(sc, st->pos, st->t); b < st->t;
             b = ring_next(sc, b + 1, st->t)) {
            if (ring_at(sc, b)->rule1 == ri + 1) return rescan(st, sc, eod, ri);
        }
    }
    return RW_OK;
}

static rw_status decide(rw_stream *st, rw_scratch *sc, uint64_t F, int eod)
{
    const rw_set *s = st->set;
    while (st->pos < F && !st->passthrough) {
        uint64_t c = ring_next(sc, st->pos, F);
        if (st->nrepair) {
            rw_status rc = repair(st, sc, &c, F, eod);
            if (rc) return rc;
        }
        if (c >= F) break;
        rw_cand best = *ring_at(sc, c);
        if (!ring_has(sc, c)) best.rule1 = 0;
        if (s->nvar) {
            rw_status rc = zones(st, sc, c, &best, eod);
            if (rc) return rc;
        }
        if (best.rule1 == 0) { /* cannot happen: c came with a candidate */
            ring_clear(sc, c, c + 1);
            continue;
        }
        rw_status rc = commit(st, sc, c, best, eod);
        if (rc) return rc;
    }
    uint64_t to = st->passthrough ? st->t : F;
    if (st->pos < to) {
        if (rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(to - st->pos))) return RW_E_SINK;
        ring_clear(sc, st->pos, to);
        st->pos = to;
    }
    return RW_OK;
}

/* ---- feeding ------------------------------------------------------------- */

/* Whether the bytes at `at` (have of them) prove that no match of rule r
 * starts there: they differ from the literal every match begins with. */
static int prefix_differs(const rw_rule *r, const uint8_t *at, uint64_t have)
{
    uint32_t k = r->prefix_len < have ? r->prefix_len : (uint32_t)have;
    int fold = (r->flags & RW_CASELESS) != 0;
    for (uint32_t j = 0; j < k; j++) {
        uint8_t c = at[j], p = r->prefix[j];
        if (fold && (c | 0x20) >= 'a' && (c | 0x20) <= 'z') c |= 0x20;
        if (fold && (p | 0x20) >= 'a' && (p | 0x20) <= 'z') p |= 0x20;
        if (c != p) return 1;
    }
    return 0;
}

/* PCRE2 liveness checks look at most this many bytes past a start. */
#define RW_LIVE_SPAN 256u
/* A PCRE2 check counts as this many prefix checks against the budget. */
#define RW_LIVE_COST 64u

/* The widest match that may still start at s, bytes. At first the widest
 * rule that can start with byte lin[s] (rw_set.wfixed, wvar), at most W.
 * A variable-width rule starting with that byte (`<!--.*-->` at every `<`
 * of a page, `UA-\d+` after every match of it) would hold up to W bytes
 * behind each such start. So, in the feed calls that narrow (rw_hs_feed:
 * tiny ones, and those after a window with more candidates than kept), a
 * variable-width rule stops counting at s
 *   - when the bytes after s contradict the literal its matches begin
 *     with (rw_rule.prefix: `<p` for `<!--`), which costs a few compares;
 *   - or, in calls of fewer than W/3 bytes too, when PCRE2 run anchored at
 *     s with PCRE2_PARTIAL_HARD on [s, s + RW_LIVE_SPAN) finds it cannot
 *     match; a complete match that cannot grow counts with its length.
 * A shorter subject only keeps more rules alive and more data only kills
 * more, so every bound found is safe, and they only shrink. PCRE2 runs at
 * the start where the frontier stops (lv_at) as its bytes double (1, 2,
 * 4, ... 256): at most 9 runs per start and rule. The work per call is
 * bounded (st->live_budget, about W/4 rule checks, a PCRE2 run counting
 * RW_LIVE_COST), so that it stays below what holding W bytes costs; past
 * it a start keeps the uniform bound (docs/rewrite.md, "The frontier",
 * has the measurements). */
static uint32_t start_bound(rw_stream *st, rw_scratch *sc, uint64_t s)
{
    const rw_set *set = st->set;
    const uint8_t *at = sc->lin + (s - st->base);
    uint8_t b = at[0];
    uint32_t w = set->wfixed[b] > set->wvar[b] ? set->wfixed[b] : set->wvar[b];
    if (w > st->W) w = st->W;
    if (set->wvar[b] <= set->wfixed[b] || st->live_budget == 0)
        return w; /* no variable-width rule can lower it, or no time to look */
    if (s != st->lv_at) {
        st->lv_at = s;
        st->lv_len = 0;
        st->lv_w = w;
    }
    uint64_t have = st->t - s;
    if (have > RW_LIVE_SPAN) have = RW_LIVE_SPAN;
    int run = st->live_checks && st->lv_len < RW_LIVE_SPAN &&
              (st->lv_len == 0 || have >= 2 * st->lv_len);
    uint32_t live = set->wfixed[b];
    for (uint32_t k = set->vfirst_at[b]; k < set->vfirst_at[b + 1]; k++) {
        const rw_rule *r = &set->rules[set->vfirst[k]];
        if (r->width <= live) break; /* widest first: none after it is wider */
        if (st->live_budget == 0) return w;
        st->live_budget--;
        if (!rw_bit(st->active, set->vfirst[k]) || prefix_differs(r, at, st->t - s)) continue;
        uint32_t need = r->width; /* alive, or PCRE2 could not tell */
        if (run && have > r->prefix_len) {
            st->live_budget = st->live_budget > RW_LIVE_COST ? st->live_budget - RW_LIVE_COST : 0;
            st->stats.dfa_runs++;
            pcre2_set_match_limit(sc->mctx, rw_budget((size_t)have));
            int rc = pcre2_dfa_match(r->dfa, sc->lin, (PCRE2_SIZE)(s + have - st->base),
                                     (PCRE2_SIZE)(s - st->base),
                                     PCRE2_ANCHORED | PCRE2_PARTIAL_HARD, sc->md3, sc->mctx,
                                     sc->ws, sc->ws_ints);
            if (rc == PCRE2_ERROR_NOMATCH) {
                need = 0;
            } else if (rc >= 0) { /* complete, and no path reached the end: the longest is first */
                uint64_t len = st->base + pcre2_get_ovector_pointer(sc->md3)[1] - s;
                if (len < need) need = (uint32_t)len;
            }
        }
        if (need > live) live = need;
    }
    if (run) {
        st->lv_len = have;
        if (live < st->lv_w) st->lv_w = live;
    }
    if (st->lv_len && live > st->lv_w) live = st->lv_w;
    return live < w ? live : w;
}

/* F: the first start that cannot be decided yet. A start s is decidable
 * once every match that can start there has ended and been reported:
 * such a match is at most w = start_bound(s) bytes long, ends by s + w,
 * and Hyperscan reports it by s + w + 1 (it may wait for one byte past
 * the end, for `\b` or `$`); one byte more, as the uniform frontier
 * t - W - 1 had. Starts are decided in order, so F is the first s >= pos
 * with s + w + 2 > t; it only moves forward as t grows (w only shrinks
 * as the bytes after s come in), and st->hz remembers where the last call stopped. Starts below
 * t - W - 1 are decidable whatever their byte. */
static uint64_t frontier(rw_stream *st, rw_scratch *sc)
{
    uint64_t s = st->hz > st->pos ? st->hz : st->pos;
    if (st->t > (uint64_t)st->W + 1 && s < st->t - st->W - 1) s = st->t - st->W - 1;
    /* not narrowing in this call (rw_hs_feed): the uniform frontier, in
     * O(1), or where an earlier call got further */
    if (st->live_budget == 0) return st->hz = s;
    while (s < st->t && s + start_bound(st, sc, s) + 2 <= st->t) s++;
    st->hz = s;
    return s;
}

/* The held window and its candidates into the scratch: from kept[], or,
 * when they did not fit there, by scanning the window again. */
static rw_status load(rw_stream *st, rw_scratch *sc)
{
    size_t held = (size_t)(st->t - st->base);
    if (held) memcpy(sc->lin, st->win, held);
    for (uint32_t k = 0; k < st->nkept; k++) ring_restore(sc, st->pos + st->kept[k].delta, st->kept[k].c);
    st->nkept = 0;
    if (st->kept_lost) {
        st->kept_lost = 0;
        return rescan(st, sc, 0, UINT32_MAX);
    }
    return RW_OK;
}

/* The held window and its candidates back into the stream; leaves the
 * scratch's table clean for the next stream. */
static void save(rw_stream *st, rw_scratch *sc)
{
    rw_compact(st, sc);
    size_t held = (size_t)(st->t - st->base);
    if (held) memcpy(st->win, sc->lin, held);
    st->nkept = 0;
    for (uint64_t b = ring_next(sc, st->pos, st->t); b < st->t; b = ring_next(sc, b + 1, st->t)) {
        if (st->nkept == st->kcap) {
            st->kept_lost = 1;
            st->nkept = 0;
            break;
        }
        st->kept[st->nkept++] = (rw_kept){(uint32_t)(b - st->pos), *ring_at(sc, b)};
    }
    ring_clear(sc, st->pos, st->t);
}

rw_status rw_hs_feed(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n)
{
    const rw_set *s = st->set;
    /* Narrow the frontier (start_bound) only where holding the window
     * costs more than narrowing would: in tiny feed calls (the window is
     * copied in and out of the scratch every call), and after a window
     * that held more candidates than the stream keeps (it is scanned
     * again every call). Elsewhere a held window costs two copies per
     * call, less than checking starts (measured: +33% instructions with
     * 10 regex rules in 1 KiB chunks when narrowing always). */
    int narrow = st->kept_lost || (uint64_t)n * 64 < st->W;
    rw_status rc = load(st, sc);
    if (rc) return rc;
    st->live_checks = narrow && (uint64_t)n * 3 < st->W;
    st->live_budget = narrow ? st->W / 4 + 64 : 0;
    while (n > 0) {
        if (st->passthrough) {
            ring_clear(sc, st->pos, st->t);
            return rw_pass_rest(st, sc, p, n);
        }
        size_t used;
        size_t k = rw_append_slice(st, sc, p, n, &used);
        hsctx x = {st, sc, 0, st->t + k};
        if (st->hs_lit && hs_scan_stream(st->hs_lit, (const char *)sc->lin + used, (unsigned)k, 0,
                                         sc->hs, on_match, &x) != HS_SUCCESS)
            return RW_E_BACKEND;
        if (st->hs_re && hs_scan_stream(st->hs_re, (const char *)sc->lin + used, (unsigned)k, 0,
                                        sc->hs, on_match, &x) != HS_SUCCESS)
            return RW_E_BACKEND;
        st->t += k;
        p += k;
        n -= k;
        rc = decide(st, sc, frontier(st, sc), 0);
        if (rc) return rc;
    }
    (void)s;
    save(st, sc);
    return RW_OK;
}

rw_status rw_hs_finish(rw_stream *st, rw_scratch *sc)
{
    rw_status lr = load(st, sc);
    if (lr) return lr;
    hsctx x = {st, sc, 0, st->t};
    if (st->hs_lit && hs_reset_stream(st->hs_lit, 0, sc->hs, on_match, &x) != HS_SUCCESS)
        return RW_E_BACKEND;
    if (st->hs_re && hs_reset_stream(st->hs_re, 0, sc->hs, on_match, &x) != HS_SUCCESS)
        return RW_E_BACKEND;
    rw_status rc = decide(st, sc, st->t, 1);
    if (rc) return rc;
    ring_clear(sc, st->pos, st->t);
    st->base = st->pos = st->t;
    return RW_OK;
}
