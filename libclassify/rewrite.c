/*
 * rewrite.c: the public rewrite API (classify.h, "Rewriting response
 * bodies") over the engine (rewrite/rw_stream.h, rw_cache.h). Like
 * classify.c, it checks arguments and owns lifetimes; the work happens
 * in rewrite/.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <xxhash.h>

#include "classify.h"
#include "explain_text.h"
#include "program.h"
#include "rw_cache.h"
#include "rw_stream.h"

struct clf_rewrite_scratch {
    const clf_program *prog;
    rw_scratch *sc;
};

struct clf_rewrite_cache {
    const clf_program *prog;
    const vm_rewrite *set;
    rw_cache *c;
    uint64_t seed; /* for hashing keys to 128 bits */
};

struct clf_rewriter {
    const clf_program *prog;
    const vm_rewrite *set;
    rw_stream *st;
    clf_sink_fn sink;
    void *ud;
    clf_rewrite_cache *cache; /* clf_rewriter_use_cache, for this body */
    uint8_t key[16];          /* the key's hash */
    int skipped;              /* the cache said no rule fires */
    char errmsg[160];
};

/* The rewrite set of `prog` named `name`, or NULL with a message that
 * lists the sets. Names come from the caller and from the file: escaped
 * (vm_text_name), as clf_program_find_filter does. */
static const vm_rewrite *find_set(const clf_program *prog, const char *name, size_t len,
                                  char *err, size_t errlen)
{
    for (uint32_t i = 0; i < prog->nrewrites; i++) {
        const vm_const *k = &prog->consts[prog->rewrites[i].name];
        if (k->len == len && memcmp(k->str, name, len) == 0) return &prog->rewrites[i];
    }
    char msg[CLF_ERRMSG_SIZE];
    vm_text t;
    vm_text_init(&t, msg, sizeof msg);
    vm_text_str(&t, "no rewrite set '");
    vm_text_name(&t, name, len);
    vm_text_str(&t, "' in the rules file (its rewrite sets: ");
    if (!prog->nrewrites) vm_text_str(&t, "none");
    for (uint32_t i = 0; i < prog->nrewrites; i++) {
        const vm_const *k = &prog->consts[prog->rewrites[i].name];
        if (i) vm_text_str(&t, ", ");
        vm_text_name(&t, k->str, k->len);
    }
    vm_text_str(&t, ")");
    vm_text_done(&t);
    vm_errf(err, errlen, "%s", msg);
    return NULL;
}

static const char *status_text(rw_status st)
{
    switch (st) {
    case RW_E_SINK: return "the output sink asked to stop";
    case RW_E_STATE: return "the body is finished or failed: reset the rewriter first";
    case RW_E_BACKEND: return "a Hyperscan scan failed";
    case RW_E_LIMIT: return "a PCRE2 workspace limit was reached (docs/rewrite.md)";
    case RW_E_NOMEM: return "out of memory";
    default: return "invalid argument";
    }
}

CLF_API clf_status clf_rewrite_scratch_new(const clf_program *prog, clf_rewrite_scratch **out,
                                           char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!prog || !out) {
        vm_errf(err, errlen, "NULL program or output");
        return CLF_E_INVALID;
    }
    *out = NULL;
    if (!prog->nrewrites) {
        vm_errf(err, errlen, "the rules file has no rewrite sets");
        return CLF_E_INVALID;
    }
    const vm_allocator *al = &prog->opts.alloc;
    clf_rewrite_scratch *s = vm_calloc(al, 1, sizeof *s);
    if (!s) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    s->prog = prog;
    rw_status st = rw_scratch_new(prog->rewrites[0].set, al, &s->sc);
    for (uint32_t i = 1; i < prog->nrewrites && st == RW_OK; i++)
        st = rw_scratch_add(s->sc, prog->rewrites[i].set);
    if (st != RW_OK) {
        clf_rewrite_scratch_free(s);
        vm_errf(err, errlen, "cannot make the rewrite scratch: %s", status_text(st));
        return (clf_status)st;
    }
    *out = s;
    return CLF_OK;
}

CLF_API void clf_rewrite_scratch_free(clf_rewrite_scratch *sc)
{
    if (!sc) return;
    rw_scratch_free(sc->sc);
    vm_free(&sc->prog->opts.alloc, sc);
}

/* The engine's sink calls the host's. */
static int to_host(void *ud, const uint8_t *p, size_t n)
{
    clf_rewriter *rw = ud;
    return rw->sink(rw->ud, (const char *)p, n);
}

CLF_API clf_status clf_rewriter_new(const clf_program *prog, const char *name, size_t name_len,
                                    clf_sink_fn sink, void *ud, clf_rewriter **out, char *err,
                                    size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!prog || (!name && name_len) || !sink || !out) {
        vm_errf(err, errlen, "NULL program, name, sink or output");
        return CLF_E_INVALID;
    }
    *out = NULL;
    const vm_rewrite *set = find_set(prog, name ? name : "", name_len, err, errlen);
    if (!set) return CLF_E_INVALID;
    const vm_allocator *al = &prog->opts.alloc;
    clf_rewriter *rw = vm_calloc(al, 1, sizeof *rw);
    if (!rw) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    rw->prog = prog;
    rw->set = set;
    rw->sink = sink;
    rw->ud = ud;
    rw_status st = rw_stream_new(set->set, al, to_host, rw, &rw->st);
    if (st != RW_OK) {
        vm_free(al, rw);
        vm_errf(err, errlen, "cannot make the rewriter: %s", status_text(st));
        return (clf_status)st;
    }
    *out = rw;
    return CLF_OK;
}

CLF_API void clf_rewriter_free(clf_rewriter *rw)
{
    if (!rw) return;
    rw_stream_free(rw->st);
    vm_free(&rw->prog->opts.alloc, rw);
}

static clf_status done(clf_rewriter *rw, rw_status st)
{
    if (st == RW_OK) rw->errmsg[0] = 0;
    else vm_errf(rw->errmsg, sizeof rw->errmsg, "%s", status_text(st));
    return (clf_status)st;
}

CLF_API clf_status clf_rewriter_feed(clf_rewriter *rw, clf_rewrite_scratch *sc, const char *p,
                                     size_t n)
{
    if (!rw || !sc || (!p && n)) return CLF_E_INVALID;
    if (sc->prog != rw->prog) return done(rw, RW_E_INVALID);
    return done(rw, rw_stream_feed(rw->st, sc->sc, p, n));
}

/* After the end of a body: the rules that fired go into the cache. Not
 * after replace_filter gave up at its buffer cap: the rest of the body
 * went through unscanned, so "no rule fired" would not be known, and a
 * later request would skip a body its rules do rewrite. */
static void store(clf_rewriter *rw, rw_status st)
{
    if (st == RW_OK && rw->cache && !rw->skipped) {
        rw_stream_stats s;
        rw_stream_stats_get(rw->st, &s);
        if (!s.gave_up)
            rw_cache_store(rw->cache->c, rw->key, sizeof rw->key, rw_stream_matched(rw->st));
    }
    rw->cache = NULL;
}

CLF_API clf_status clf_rewriter_finish(clf_rewriter *rw, clf_rewrite_scratch *sc)
{
    if (!rw || !sc) return CLF_E_INVALID;
    if (sc->prog != rw->prog) return done(rw, RW_E_INVALID);
    rw_status st = rw_stream_finish(rw->st, sc->sc);
    store(rw, st);
    return done(rw, st);
}

CLF_API clf_status clf_rewriter_feed_final(clf_rewriter *rw, clf_rewrite_scratch *sc,
                                           const char *p, size_t n)
{
    if (!rw || !sc || (!p && n)) return CLF_E_INVALID;
    if (sc->prog != rw->prog) return done(rw, RW_E_INVALID);
    rw_status st = rw_stream_feed_final(rw->st, sc->sc, p, n);
    store(rw, st);
    return done(rw, st);
}

CLF_API clf_status clf_rewriter_reset(clf_rewriter *rw, clf_sink_fn sink, void *ud)
{
    if (!rw || !sink) return CLF_E_INVALID;
    rw->sink = sink;
    rw->ud = ud;
    rw->cache = NULL;
    rw->skipped = 0;
    return done(rw, rw_stream_reset(rw->st, to_host, rw));
}

CLF_API uint64_t clf_rewriter_holdback(const clf_rewriter *rw)
{
    return rw ? rw_set_holdback(rw->set->set) : 0;
}

CLF_API size_t clf_rewriter_size(const clf_rewriter *rw)
{
    return rw ? rw_stream_size(rw->st) + sizeof *rw : 0;
}

CLF_API clf_status clf_rewriter_stats(const clf_rewriter *rw, clf_rewrite_stats *out)
{
    if (!rw || !out) return CLF_E_INVALID;
    rw_stream_stats s;
    rw_stream_stats_get(rw->st, &s);
    out->bytes_in = s.bytes_in;
    out->bytes_out = s.bytes_out;
    out->replacements = s.replacements;
    out->max_held = s.max_held;
    out->captures_failed = s.captures_failed;
    out->gave_up = s.gave_up;
    out->skipped = rw->skipped;
    return CLF_OK;
}

CLF_API const char *clf_rewriter_errmsg(const clf_rewriter *rw)
{
    return rw ? rw->errmsg : "no rewriter";
}

CLF_API clf_status clf_rewrite_cache_new(const clf_program *prog, const char *name,
                                         size_t name_len, uint32_t capacity,
                                         clf_rewrite_cache **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!prog || (!name && name_len) || !out || capacity == 0) {
        vm_errf(err, errlen, "NULL program, name or output, or a capacity of 0");
        return CLF_E_INVALID;
    }
    *out = NULL;
    const vm_rewrite *set = find_set(prog, name ? name : "", name_len, err, errlen);
    if (!set) return CLF_E_INVALID;
    const vm_allocator *al = &prog->opts.alloc;
    clf_rewrite_cache *c = vm_calloc(al, 1, sizeof *c);
    if (!c) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    c->prog = prog;
    c->set = set;
    if (getrandom(&c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed)
        c->seed = (uint64_t)(uintptr_t)c ^ 0x9e3779b97f4a7c15ull;
    rw_status st = rw_cache_new(rw_set_nrules(set->set), capacity, 16, al, &c->c);
    if (st != RW_OK) {
        vm_free(al, c);
        vm_errf(err, errlen, st == RW_E_LIMIT ? "the cache would pass 1 GiB" : "%s",
                status_text(st));
        return st == RW_E_LIMIT ? CLF_E_INVALID : (clf_status)st;
    }
    *out = c;
    return CLF_OK;
}

CLF_API void clf_rewrite_cache_free(clf_rewrite_cache *c)
{
    if (!c) return;
    rw_cache_free(c->c);
    vm_free(&c->prog->opts.alloc, c);
}

CLF_API clf_status clf_rewriter_use_cache(clf_rewriter *rw, clf_rewrite_cache *cache,
                                          const void *key, size_t klen)
{
    if (!rw || !cache || (!key && klen)) return CLF_E_INVALID;
    if (cache->set != rw->set) return done(rw, RW_E_INVALID);
    rw_stream_stats s;
    rw_stream_stats_get(rw->st, &s);
    if (s.bytes_in) return done(rw, RW_E_STATE);
    XXH128_hash_t h = XXH3_128bits_withSeed(key ? key : "", klen, cache->seed);
    XXH128_canonicalFromHash((XXH128_canonical_t *)rw->key, h);
    rw->cache = cache;
    rw->skipped = 0;
    uint32_t nbytes = (rw_set_nrules(rw->set->set) + 7) / 8;
    uint8_t bits[RW_MAX_RULES / 8 + 1];
    if (rw_cache_lookup(cache->c, rw->key, sizeof rw->key, bits)) {
        int any = 0;
        for (uint32_t i = 0; i < nbytes; i++) any |= bits[i];
        if (!any) {
            /* No rule fired on this version of the resource: copy it. */
            rw_status st = rw_stream_set_mask(rw->st, bits, nbytes);
            if (st != RW_OK) return done(rw, st);
            rw->skipped = 1;
        }
    }
    return done(rw, RW_OK);
}

CLF_API clf_status clf_rewrite_cache_stats_get(clf_rewrite_cache *c,
                                               clf_rewrite_cache_stats *out)
{
    if (!c || !out) return CLF_E_INVALID;
    rw_cache_stats s;
    rw_cache_stats_get(c->c, &s);
    out->hits = s.hits;
    out->misses = s.misses;
    out->stores = s.stores;
    out->evictions = s.evictions;
    return CLF_OK;
}
