/*
 * rw_stream.c: streams and scratches (rw_stream.h): their memory, their
 * life cycle, the output and the template expansion. The matching itself
 * is in rw_hs.c (SRW, sub_filter) and rw_rf.c (replace_filter).
 */
#include <string.h>

#include "rw_engine.h"

/* ---- scratch ------------------------------------------------------------ */

static void *p2_malloc(PCRE2_SIZE n, void *ud) { return vm_malloc(ud, n); }
static void p2_free(void *p, void *ud) { vm_free(ud, p); }

static size_t pow2_at_least(size_t n)
{
    size_t p = 64;
    while (p < n) p *= 2;
    return p;
}

/* What a set needs of a scratch. */
typedef struct needs {
    size_t lin, ring, ws;
    uint32_t pairs;
} needs;

static needs needs_of(const rw_set *s)
{
    needs n;
    n.lin = (size_t)s->W + 2 + RW_SLICE;
    n.ring = s->mode == RW_MODE_REPLACE_FILTER ? 0 : pow2_at_least(n.lin);
    n.ws = s->dfa_ws_ints;
    n.pairs = s->maxgroups + 1;
    return n;
}

static void scratch_release(rw_scratch *sc)
{
    vm_free(&sc->al, sc->lin);
    vm_free(&sc->al, sc->ring);
    vm_free(&sc->al, sc->rbits);
    vm_free(&sc->al, sc->ws);
    pcre2_match_data_free(sc->md);
    pcre2_match_data_free(sc->md3);
    pcre2_match_context_free(sc->mctx);
    if (sc->jit) pcre2_jit_stack_free(sc->jit);
    pcre2_general_context_free(sc->gctx);
    hs_free_scratch(sc->hs);
}

void rw_scratch_free(rw_scratch *sc)
{
    if (!sc) return;
    scratch_release(sc);
    vm_allocator al = sc->al;
    vm_free(&al, sc);
}

/* Hyperscan's allocation failures are ours (HS_NOMEM: its allocator,
 * malloc by default, returned NULL); anything else is the backend's. */
static rw_status hs_status(hs_error_t hr)
{
    return hr == HS_NOMEM ? RW_E_NOMEM : RW_E_BACKEND;
}

/* Opens a stream of db when there is one. */
static rw_status open_stream(const hs_database_t *db, hs_stream_t **out)
{
    if (!db) return RW_OK;
    hs_error_t hr = hs_open_stream(db, 0, out);
    return hr == HS_SUCCESS ? RW_OK : hs_status(hr);
}

/* Grows what needs more room; on failure leaves sc as it was. */
static rw_status scratch_fit(rw_scratch *sc, const rw_set *s)
{
    needs n = needs_of(s);
    const vm_allocator *al = &sc->al;
    hs_scratch_t *hs = sc->hs;
    hs_error_t hr = s->litdb ? hs_alloc_scratch(s->litdb, &hs) : HS_SUCCESS;
    if (hr != HS_SUCCESS) return hs_status(hr);
    hr = s->redb ? hs_alloc_scratch(s->redb, &hs) : HS_SUCCESS;
    if (hr != HS_SUCCESS) {
        sc->hs = hs;
        return hs_status(hr);
    }
    sc->hs = hs;
    if (!sc->gctx) {
        sc->gctx = pcre2_general_context_create(p2_malloc, p2_free, &sc->al);
        if (!sc->gctx) return RW_E_NOMEM;
    }
    if (!sc->mctx) {
        sc->mctx = pcre2_match_context_create(sc->gctx);
        if (!sc->mctx) return RW_E_NOMEM;
    }
    if (!sc->md3) {
        sc->md3 = pcre2_match_data_create(3, sc->gctx);
        if (!sc->md3) return RW_E_NOMEM;
    }
    uint32_t has_jit = 0;
    pcre2_config(PCRE2_CONFIG_JIT, &has_jit);
    if (has_jit && !sc->jit) {
        sc->jit = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, sc->gctx);
        if (!sc->jit) return RW_E_NOMEM;
        pcre2_jit_stack_assign(sc->mctx, NULL, sc->jit);
    }
    if (n.pairs > sc->md_pairs) {
        pcre2_match_data *md = pcre2_match_data_create(n.pairs, sc->gctx);
        if (!md) return RW_E_NOMEM;
        pcre2_match_data_free(sc->md);
        sc->md = md;
        sc->md_pairs = n.pairs;
    }
    if (n.lin > sc->lin_cap) {
        uint8_t *l = vm_malloc(al, n.lin);
        if (!l) return RW_E_NOMEM;
        vm_free(al, sc->lin);
        sc->lin = l;
        sc->lin_cap = n.lin;
    }
    if (n.ring > sc->ring_size) {
        rw_cand *r = vm_calloc(al, n.ring, sizeof *r);
        uint64_t *b = vm_calloc(al, n.ring / 64, sizeof *b);
        if (!r || !b) {
            vm_free(al, r);
            vm_free(al, b);
            return RW_E_NOMEM;
        }
        vm_free(al, sc->ring);
        vm_free(al, sc->rbits);
        sc->ring = r;
        sc->rbits = b;
        sc->ring_size = n.ring;
    }
    if (n.ws > sc->ws_ints) {
        int *w = vm_calloc(al, n.ws, sizeof *w);
        if (!w) return RW_E_NOMEM;
        vm_free(al, sc->ws);
        sc->ws = w;
        sc->ws_ints = n.ws;
    }
    size_t hsz = 0;
    if (sc->hs) hs_scratch_size(sc->hs, &hsz);
    sc->bytes = sizeof *sc + sc->lin_cap + sc->ring_size * sizeof(rw_cand) + sc->ring_size / 8 +
                sc->ws_ints * sizeof(int) + (size_t)sc->md_pairs * 16 + hsz;
    return RW_OK;
}

rw_status rw_scratch_new(const rw_set *set, const vm_allocator *al, rw_scratch **out)
{
    if (out) *out = NULL;
    if (!set || !out) return RW_E_INVALID;
    rw_scratch *sc = vm_calloc(al, 1, sizeof *sc);
    if (!sc) return RW_E_NOMEM;
    if (al) sc->al = *al;
    rw_status st = scratch_fit(sc, set);
    if (st) {
        rw_scratch_free(sc);
        return st;
    }
    *out = sc;
    return RW_OK;
}

rw_status rw_scratch_add(rw_scratch *sc, const rw_set *set)
{
    if (!sc || !set) return RW_E_INVALID;
    return scratch_fit(sc, set);
}

size_t rw_scratch_size(const rw_scratch *sc) { return sc ? sc->bytes : 0; }

static int scratch_serves(const rw_scratch *sc, const rw_set *s)
{
    needs n = needs_of(s);
    if (n.lin > sc->lin_cap || n.ring > sc->ring_size || n.ws > sc->ws_ints ||
        n.pairs > sc->md_pairs || !sc->mctx || !sc->md3)
        return 0;
    if ((s->litdb || s->redb) && !sc->hs) return 0;
    return 1;
}

/* ---- stream ------------------------------------------------------------- */

static void compute_width(rw_stream *st)
{
    const rw_set *s = st->set;
    st->W = 0;
    st->nactive = 0;
    for (uint32_t i = 0; i < s->nrules; i++) {
        if (!rw_bit(st->active, i)) continue;
        st->nactive++;
        if (s->rules[i].width > st->W) st->W = s->rules[i].width;
    }
    if (s->mode == RW_MODE_REPLACE_FILTER) st->W = s->W;
    st->passthrough = st->nactive == 0;
}

static void clear_body(rw_stream *st)
{
    const rw_set *s = st->set;
    st->state = RW_ST_OPEN;
    st->started = 0;
    st->gave_up = 0;
    st->t = st->pos = st->base = st->hz = st->lv_len = 0;
    st->lv_at = UINT64_MAX; /* no start checked */
    st->nkept = 0;
    st->kept_lost = 0;
    st->nrepair = 0;
    memset(st->active, 0, st->nbitmap);
    for (uint32_t i = 0; i < s->nrules; i++) rw_bit_set(st->active, i);
    memset(st->matched, 0, st->nbitmap);
    for (uint32_t i = 0; i < s->nvar; i++) {
        st->hull[i].rlo = 1;
        st->hull[i].rhi = 0;
    }
    memset(&st->stats, 0, sizeof st->stats);
    compute_width(st);
}

void rw_stream_free(rw_stream *st)
{
    if (!st) return;
    if (st->hs_lit) hs_close_stream(st->hs_lit, NULL, NULL, NULL);
    if (st->hs_re) hs_close_stream(st->hs_re, NULL, NULL, NULL);
    if (st->rs_lit) hs_close_stream(st->rs_lit, NULL, NULL, NULL);
    if (st->rs_re) hs_close_stream(st->rs_re, NULL, NULL, NULL);
    vm_allocator al = st->al;
    vm_free(&al, st->win);
    vm_free(&al, st->kept);
    vm_free(&al, st->active);
    vm_free(&al, st->matched);
    vm_free(&al, st->hull);
    vm_free(&al, st);
}

rw_status rw_stream_new(const rw_set *set, const vm_allocator *al, rw_sink_fn sink, void *ud,
                        rw_stream **out)
{
    if (out) *out = NULL;
    if (!set || !sink || !out) return RW_E_INVALID;
    rw_stream *st = vm_calloc(al, 1, sizeof *st);
    if (!st) return RW_E_NOMEM;
    if (al) st->al = *al;
    st->set = set;
    st->sink = sink;
    st->ud = ud;
    st->nbitmap = (set->nrules + 7) / 8;
    st->wcap = (size_t)set->holdback;
    st->win = vm_malloc(al, st->wcap);
    st->active = vm_calloc(al, st->nbitmap ? st->nbitmap : 1, 1);
    st->matched = vm_calloc(al, st->nbitmap ? st->nbitmap : 1, 1);
    st->hull = vm_calloc(al, set->nvar ? set->nvar : 1, sizeof *st->hull);
    if (set->mode != RW_MODE_REPLACE_FILTER) {
        st->kcap = set->W + 2 < RW_KEPT_MAX ? set->W + 2 : RW_KEPT_MAX;
        st->kept = vm_calloc(al, st->kcap, sizeof *st->kept);
    }
    rw_status rc = RW_E_NOMEM;
    if (!st->win || !st->active || !st->matched || !st->hull ||
        (set->mode != RW_MODE_REPLACE_FILTER && !st->kept))
        goto fail;
    if ((rc = open_stream(set->litdb, &st->hs_lit)) != RW_OK ||
        (rc = open_stream(set->redb, &st->hs_re)) != RW_OK)
        goto fail;
    /* the rescan streams: after a once rule fired, and for a window whose
     * candidates did not fit in kept[] */
    if ((set->nonce || set->W + 2 > RW_KEPT_MAX) &&
        ((rc = open_stream(set->litdb, &st->rs_lit)) != RW_OK ||
         (rc = open_stream(set->redb, &st->rs_re)) != RW_OK))
        goto fail;
    clear_body(st);
    *out = st;
    return RW_OK;
fail:
    rw_stream_free(st);
    return rc;
}

size_t rw_stream_size(const rw_stream *st)
{
    if (!st) return 0;
    size_t n = sizeof *st + st->wcap + (size_t)st->kcap * sizeof *st->kept + 2 * st->nbitmap +
               (size_t)st->set->nvar * sizeof *st->hull;
    size_t hs = 0;
    if (st->hs_lit && hs_stream_size(st->set->litdb, &hs) == HS_SUCCESS) n += hs * (st->rs_lit ? 2 : 1);
    if (st->hs_re && hs_stream_size(st->set->redb, &hs) == HS_SUCCESS) n += hs * (st->rs_re ? 2 : 1);
    return n;
}

rw_status rw_stream_reset(rw_stream *st, rw_sink_fn sink, void *ud)
{
    if (!st || !sink) return RW_E_INVALID;
    if (st->hs_lit) hs_reset_stream(st->hs_lit, 0, NULL, NULL, NULL);
    if (st->hs_re) hs_reset_stream(st->hs_re, 0, NULL, NULL, NULL);
    st->sink = sink;
    st->ud = ud;
    clear_body(st);
    return RW_OK;
}

rw_status rw_stream_set_mask(rw_stream *st, const uint8_t *bitmap, size_t nbytes)
{
    if (!st) return RW_E_INVALID;
    if (st->started || st->state != RW_ST_OPEN) return RW_E_STATE;
    const rw_set *s = st->set;
    if (!bitmap) {
        for (uint32_t i = 0; i < s->nrules; i++) rw_bit_set(st->active, i);
        compute_width(st);
        return RW_OK;
    }
    if (nbytes < st->nbitmap) return RW_E_INVALID;
    int any = 0;
    for (uint32_t i = 0; i < s->nrules; i++) any |= rw_bit(bitmap, i);
    for (uint32_t i = 0; i < s->nrules; i++) {
        /* replace_filter: a rule that never fired can still decide where
         * the buffer cap is hit, so only "none fired" restricts */
        int on = s->mode == RW_MODE_REPLACE_FILTER ? any : rw_bit(bitmap, i);
        if (on) rw_bit_set(st->active, i);
        else rw_bit_clear(st->active, i);
    }
    compute_width(st);
    return RW_OK;
}

const uint8_t *rw_stream_matched(const rw_stream *st) { return st ? st->matched : NULL; }

void rw_stream_stats_get(const rw_stream *st, rw_stream_stats *out)
{
    if (!out) return;
    if (!st) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = st->stats;
    out->held = st->t - st->base;
    if (st->state != RW_ST_OPEN) out->held = 0;
    out->gave_up = st->gave_up;
}

void rw_fail(rw_stream *st, rw_status why)
{
    (void)why;
    st->state = RW_ST_FAILED;
}

int rw_emit(rw_stream *st, const uint8_t *p, size_t n)
{
    if (n == 0) return 0;
    if (st->sink(st->ud, p, n) != 0) {
        rw_fail(st, RW_E_SINK);
        return -1;
    }
    st->stats.bytes_out += n;
    return 0;
}

int rw_expand(rw_stream *st, const rw_rule *r, const uint8_t *lin, size_t ms, size_t me,
              const PCRE2_SIZE *ov, uint32_t ovpairs, uint32_t ovbase)
{
    if (r->nops == 0) return 0; /* an empty template: set->ops may be NULL */
    const rw_op *op = st->set->ops + r->op_first;
    for (uint32_t k = 0; k < r->nops; k++, op++) {
        if (op->kind == RW_OP_LIT) {
            if (rw_emit(st, r->tpl + op->a, op->b)) return -1;
            continue;
        }
        uint32_t g = op->a;
        if (g == 0) {
            if (rw_emit(st, lin + ms, me - ms)) return -1;
            continue;
        }
        if (!ov || g > r->ngroups || (uint64_t)ovbase + g >= ovpairs) continue;
        PCRE2_SIZE a = ov[2 * (ovbase + g)], b = ov[2 * (ovbase + g) + 1];
        if (a == PCRE2_UNSET || b == PCRE2_UNSET || b < a) continue;
        if (rw_emit(st, lin + a, b - a)) return -1;
    }
    return 0;
}

void rw_compact(rw_stream *st, rw_scratch *sc)
{
    uint64_t keep = st->pos ? st->pos - 1 : 0;
    if (keep <= st->base) return;
    size_t drop = (size_t)(keep - st->base), len = (size_t)(st->t - keep);
    if (len) memmove(sc->lin, sc->lin + drop, len);
    st->base = keep;
}

size_t rw_append_slice(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n, size_t *at)
{
    rw_compact(st, sc);
    size_t used = (size_t)(st->t - st->base);
    size_t k = sc->lin_cap - used;
    if (k > RW_SLICE) k = RW_SLICE;
    if (k > n) k = n;
    memcpy(sc->lin + used, p, k);
    *at = used;
    return k;
}

rw_status rw_pass_rest(rw_stream *st, rw_scratch *sc, const uint8_t *p, size_t n)
{
    rw_compact(st, sc);
    if (st->pos < st->t &&
        rw_emit(st, sc->lin + (st->pos - st->base), (size_t)(st->t - st->pos)))
        return RW_E_SINK;
    st->t += n;
    st->pos = st->base = st->t;
    return rw_emit(st, p, n) ? RW_E_SINK : RW_OK;
}

/* A stream with nothing left to match copies its input out. */
static rw_status pass(rw_stream *st, const uint8_t *p, size_t n)
{
    st->t += n;
    st->pos = st->base = st->t;
    st->stats.bytes_in += n;
    return rw_emit(st, p, n) ? RW_E_SINK : RW_OK;
}

rw_status rw_stream_feed(rw_stream *st, rw_scratch *sc, const void *p, size_t n)
{
    if (!st || !sc || (!p && n)) return RW_E_INVALID;
    if (st->state != RW_ST_OPEN) return RW_E_STATE;
    if (n == 0) return RW_OK;
    st->started = 1;
    if (st->passthrough && st->pos == st->t) return pass(st, p, n);
    if (!scratch_serves(sc, st->set)) return RW_E_INVALID;
    st->stats.bytes_in += n;
    rw_status rc = st->set->mode == RW_MODE_REPLACE_FILTER ? rw_rf_feed(st, sc, p, n)
                                                           : rw_hs_feed(st, sc, p, n);
    if (rc) {
        rw_fail(st, rc);
        return rc;
    }
    uint64_t held = st->t - st->base;
    if (held > st->stats.max_held) st->stats.max_held = held;
    return RW_OK;
}

rw_status rw_stream_feed_final(rw_stream *st, rw_scratch *sc, const void *p, size_t n)
{
    if (!st) return RW_E_INVALID;
    st->final = 1;
    rw_status rc = rw_stream_feed(st, sc, p, n);
    st->final = 0;
    if (rc) return rc;
    return rw_stream_finish(st, sc);
}

rw_status rw_stream_finish(rw_stream *st, rw_scratch *sc)
{
    if (!st || !sc) return RW_E_INVALID;
    if (st->state != RW_ST_OPEN) return RW_E_STATE;
    st->started = 1;
    rw_status rc = RW_OK;
    if (!(st->passthrough && st->pos == st->t)) {
        if (!scratch_serves(sc, st->set)) return RW_E_INVALID;
        rc = st->set->mode == RW_MODE_REPLACE_FILTER ? rw_rf_finish(st, sc)
                                                     : rw_hs_finish(st, sc);
    }
    if (rc) {
        rw_fail(st, rc);
        return rc;
    }
    st->state = RW_ST_DONE;
    return RW_OK;
}
