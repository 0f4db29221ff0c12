/*
 * rw_rf.c: the engine of replace_filter mode (docs/rewrite.md,
 * "replace_filter mode").
 *
 * replace-filter runs all its rules as one alternation in sregex's Pike
 * VM: the leftmost start wins, then the earlier rule, and inside a rule
 * Perl's choice (leftmost-first, greedy or lazy as written). That is not
 * what Hyperscan can report, so this mode runs PCRE2's backtracking
 * matcher (JIT) on the combined pattern "(r0)|(r1)|..." over the held
 * window, with PCRE2_PARTIAL_HARD while the data may go on: PCRE2 then
 * says either "a match, decided" (no path of higher priority reached the
 * end of the data), "no match anywhere", or "undecided from U on", which
 * is exactly sregex's state at a chunk end (its earliest live thread).
 *
 * The buffer cap (replace_filter_max_buffered_size, here max_match L),
 * as replace-filter applies it (ngx_http_replace_parse.c,
 * ngx_http_replace_new_pending_buf): at the end of each chunk, if a match
 * attempt is undecided from U, the bytes it keeps are t - U, less, when
 * no template uses captures and no once rule shares the set ("the
 * non-capturing parse"), the span of the pending match (the best complete
 * match found so far, which need not be kept because its replacement is
 * fixed). More than L: give up, write everything out as it is, and pass
 * the rest of the body through untouched. Independently of chunking, a
 * match attempt may look at most 2L + 4096 bytes past its start
 * (rw_rf_hard_bound), which bounds the memory; past that the engine gives
 * up too.
 */
#include <string.h>

#include "rw_engine.h"

/* Which rule's group is set in a match of the combined pattern. */
static int which_rule(const rw_set *s, const PCRE2_SIZE *ov, uint32_t pairs)
{
    for (uint32_t i = 0; i < s->nrules; i++) {
        uint32_t g = s->rules[i].rf_group;
        if (g < pairs && ov[2 * g] != PCRE2_UNSET) return (int)i;
    }
    return -1;
}

/* Gives up: what is held goes out as it is, and so will the rest. */
static rw_status give_up(rw_stream *st, rw_scratch *sc)
{
    st->gave_up = 1;
    st->passthrough = 1;
    if (st->pos < st->t &&
        rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(st->t - st->pos)))
        return RW_E_SINK;
    st->pos = st->base = st->t;
    return RW_OK;
}

/* Writes rule i's replacement for the match [ms, me) (lin offsets), or
 * the match itself for a once rule that already fired (replace-filter
 * keeps such a rule in the alternation, with the template "$&"). */
static rw_status apply(rw_stream *st, rw_scratch *sc, int i, size_t ms, size_t me,
                       const PCRE2_SIZE *ov)
{
    const rw_set *s = st->set;
    const rw_rule *r = &s->rules[i];
    if ((r->flags & RW_ONCE) && !rw_bit(st->active, (uint32_t)i)) {
        if (rw_emit(st, sc->lin + ms, me - ms)) return RW_E_SINK;
        return RW_OK;
    }
    if (rw_expand(st, r, sc->lin, ms, me, ov, sc->md_pairs, r->rf_group)) return RW_E_SINK;
    rw_bit_set(st->matched, (uint32_t)i);
    st->stats.replacements++;
    if (r->flags & RW_ONCE) {
        rw_bit_clear(st->active, (uint32_t)i);
        if (st->nactive) st->nactive--;
        /* every rule a fired once rule: nothing can change any more */
        if (st->nactive == 0) st->passthrough = 1;
    }
    return RW_OK;
}

/* Decides as much as the held bytes allow (all of them at the end of
 * data). */
static rw_status search(rw_stream *st, rw_scratch *sc, int eod)
{
    const rw_set *s = st->set;
    uint64_t H = rw_rf_hard_bound(s->L);
    while (st->pos < st->t && !st->passthrough) {
        uint64_t from = st->pos, end = st->t;
        if (end - from > H + 1) end = from + H + 1;
        int partial = !eod || end < st->t;
        pcre2_set_match_limit(sc->mctx, rw_budget((size_t)(end - from)));
        int rc = pcre2_match(s->rf_code, sc->lin, (PCRE2_SIZE)(end - st->base),
                             (PCRE2_SIZE)(from - st->base), partial ? PCRE2_PARTIAL_HARD : 0,
                             sc->md, sc->mctx);
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md);
        if (rc > 0) {
            int i = which_rule(s, ov, sc->md_pairs);
            if (i < 0) return RW_E_BACKEND;
            size_t ms = ov[0], me = ov[1];
            if (rw_emit(st, sc->lin + (from - st->base), ms - (size_t)(from - st->base)))
                return RW_E_SINK;
            rw_status a = apply(st, sc, i, ms, me, ov);
            if (a) return a;
            st->pos = st->base + me;
            continue;
        }
        if (rc == PCRE2_ERROR_PARTIAL) {
            uint64_t U = st->base + ov[0];
            if (U > from &&
                rw_emit(st, sc->lin + (from - st->base), (size_t)(U - from)))
                return RW_E_SINK;
            st->pos = U;
            if (end < st->t) {
                /* undecided after H + 1 bytes: the hard bound */
                if (U == from) return give_up(st, sc);
                continue;
            }
            return RW_OK; /* wait for more data */
        }
        if (rc == PCRE2_ERROR_NOMATCH) {
            if (rw_emit(st, sc->lin + (from - st->base), (size_t)(end - from))) return RW_E_SINK;
            st->pos = end;
            continue;
        }
        if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
            rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT ||
            rc == PCRE2_ERROR_NOMEMORY)
            return give_up(st, sc); /* the time budget: docs/rewrite.md */
        return RW_E_BACKEND;
    }
    if (st->passthrough && st->pos < st->t) {
        if (rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(st->t - st->pos)))
            return RW_E_SINK;
        st->pos = st->t;
    }
    return RW_OK;
}

/* The auto-callout that keeps the pending match to what sregex has
 * matched: a path may not test \b, \B, $ or \z at the end of the data
 * (sregex waits for the next byte there). */
static int no_end_assertions(pcre2_callout_block *cb, void *ud)
{
    const rw_scratch *sc = ud;
    if (cb->current_position < cb->subject_length) return 0;
    size_t p = cb->pattern_position;
    const uint8_t *pat = sc->ac_pat;
    if (p < sc->ac_len && pat[p] == '$') return 1;
    if (p + 1 < sc->ac_len && pat[p] == '\\' &&
        (pat[p + 1] == 'b' || pat[p + 1] == 'B' || pat[p + 1] == 'z'))
        return 1;
    return 0;
}

/* replace-filter's pending match at the end of a chunk: the first
 * complete match at or after pos. Returns 1 and sets *ms, *me (lin
 * offsets), *rule; 0 when there is none (or the budget ran out). */
static int pending(rw_stream *st, rw_scratch *sc, size_t *ms, size_t *me, int *rule)
{
    const rw_set *s = st->set;
    sc->ac_pat = s->rf_pattern;
    sc->ac_len = s->rf_pattern_len;
    pcre2_set_callout(sc->mctx, no_end_assertions, sc);
    pcre2_set_match_limit(sc->mctx, rw_budget((size_t)(st->t - st->pos)));
    int rc = pcre2_match(s->rf_code_ac, sc->lin, (PCRE2_SIZE)(st->t - st->base),
                         (PCRE2_SIZE)(st->pos - st->base), 0, sc->md, sc->mctx);
    pcre2_set_callout(sc->mctx, NULL, NULL);
    if (rc <= 0) return 0;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md);
    *rule = which_rule(s, ov, sc->md_pairs);
    if (*rule < 0) return 0;
    *ms = ov[0];
    *me = ov[1];
    return 1;
}

/* The cap, at the end of a chunk that began at chunk_start. */
static rw_status check_cap(rw_stream *st, rw_scratch *sc, uint64_t chunk_start)
{
    const rw_set *s = st->set;
    if (st->passthrough || st->pos >= st->t) return RW_OK;
    uint64_t kept = st->t - st->pos;
    if (kept <= s->L) return RW_OK;
    size_t ms = 0, me = 0;
    int rule = -1, have = 0;
    if (!s->rf_capturing) {
        have = pending(st, sc, &ms, &me, &rule);
        if (have) kept -= me - ms;
    }
    if (kept <= s->L) return RW_OK;
    /* Over the cap. replace-filter writes out what it holds; when the
     * undecided attempt began in an earlier chunk and a complete match is
     * pending, it applies that match first (the NGX_BUSY branches of
     * ngx_http_replace_non_capturing_parse). */
    if (have && st->pos < chunk_start) {
        size_t from = (size_t)(st->pos - st->base);
        if (rw_emit(st, sc->lin + from, ms - from)) return RW_E_SINK;
        rw_status a = apply(st, sc, rule, ms, me, NULL);
        if (a) return a;
        st->pos = st->base + me;
    }
    return give_up(st, sc);
}

rw_status rw_rf_feed(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n)
{
    size_t held = (size_t)(st->t - st->base);
    if (held) memcpy(sc->lin, st->win, held);
    uint64_t chunk_start = st->t;
    while (n > 0) {
        if (st->passthrough) return rw_pass_rest(st, sc, p, n);
        size_t used;
        size_t k = rw_append_slice(st, sc, p, n, &used);
        st->t += k;
        p += k;
        n -= k;
        rw_status rc = search(st, sc, 0);
        if (rc) return rc;
    }
    rw_status rc = st->final ? RW_OK : check_cap(st, sc, chunk_start);
    if (rc) return rc;
    rw_compact(st, sc);
    held = (size_t)(st->t - st->base);
    if (held) memcpy(st->win, sc->lin, held);
    return RW_OK;
}

rw_status rw_rf_finish(rw_stream *st, rw_scratch *sc)
{
    size_t held = (size_t)(st->t - st->base);
    if (held) memcpy(sc->lin, st->win, held);
    rw_status rc = search(st, sc, 1);
    if (rc) return rc;
    if (st->pos < st->t &&
        rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(st->t - st->pos)))
        return RW_E_SINK;
    st->pos = st->base = st->t;
    return RW_OK;
}
