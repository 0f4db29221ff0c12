/*
 * rw_cache.c: the skip cache (rw_cache.h).
 *
 * One slab: nsets * RW_CACHE_WAYS slots, each a header (hash, last use,
 * key length) followed by key_max key bytes and the bitmap. The hash
 * picks the set and is compared before the key bytes.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <xxhash.h>

#include "rw_cache.h"

typedef struct slot {
    uint64_t hash;
    uint64_t used;   /* last use (the clock below); 0: empty */
    uint32_t klen;
    uint32_t pad;
} slot;

struct rw_cache {
    vm_allocator al;
    pthread_mutex_t lock;
    uint8_t *slab;
    size_t slot_size;  /* header + key_max + bitmap, 8-aligned */
    uint32_t nsets;    /* a power of two */
    uint32_t key_max;
    uint32_t nbitmap;
    uint64_t seed;
    uint64_t clock;
    rw_cache_stats st;
    size_t bytes;
};

static slot *slot_at(const rw_cache *c, uint32_t set, uint32_t way)
{
    return (slot *)(c->slab + ((size_t)set * RW_CACHE_WAYS + way) * c->slot_size);
}

static uint8_t *key_of(slot *s) { return (uint8_t *)(s + 1); }

rw_status rw_cache_new(uint32_t nrules, uint32_t capacity, uint32_t key_max,
                       const vm_allocator *al, rw_cache **out)
{
    if (out) *out = NULL;
    if (!out || capacity == 0 || key_max == 0 || nrules > RW_MAX_RULES) return RW_E_INVALID;
    uint32_t nsets = 1;
    while ((uint64_t)nsets * RW_CACHE_WAYS < capacity) {
        if (nsets > (1u << 26)) return RW_E_LIMIT;
        nsets *= 2;
    }
    uint32_t nb = (nrules + 7) / 8;
    size_t ss = (sizeof(slot) + key_max + nb + 7) & ~(size_t)7;
    uint64_t total = (uint64_t)nsets * RW_CACHE_WAYS * ss;
    if (total > ((uint64_t)1 << 30)) return RW_E_LIMIT;
    rw_cache *c = vm_calloc(al, 1, sizeof *c);
    if (!c) return RW_E_NOMEM;
    if (al) c->al = *al;
    c->slab = vm_calloc(al, (size_t)total, 1);
    if (!c->slab || pthread_mutex_init(&c->lock, NULL) != 0) {
        vm_free(al, c->slab);
        vm_free(al, c);
        return RW_E_NOMEM;
    }
    c->slot_size = ss;
    c->nsets = nsets;
    c->key_max = key_max;
    c->nbitmap = nb;
    c->bytes = sizeof *c + (size_t)total;
    /* a random seed: keys from the internet cannot be made to share a set */
    if (getrandom(&c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed)
        c->seed = (uint64_t)(uintptr_t)c ^ 0x9e3779b97f4a7c15ull;
    *out = c;
    return RW_OK;
}

void rw_cache_free(rw_cache *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->lock);
    vm_allocator al = c->al;
    vm_free(&al, c->slab);
    vm_free(&al, c);
}

/* The slot holding the key in its set, or NULL; the lock is held. */
static slot *find(rw_cache *c, uint64_t h, const void *key, size_t klen, uint32_t *set)
{
    *set = (uint32_t)(h >> 32) & (c->nsets - 1);
    for (uint32_t w = 0; w < RW_CACHE_WAYS; w++) {
        slot *s = slot_at(c, *set, w);
        if (s->used && s->hash == h && s->klen == klen && (klen == 0 || !memcmp(key_of(s), key, klen)))
            return s;
    }
    return NULL;
}

int rw_cache_lookup(rw_cache *c, const void *key, size_t klen, uint8_t *bitmap_out)
{
    if (!c || (!key && klen)) return 0;
    if (klen > c->key_max) {
        pthread_mutex_lock(&c->lock);
        c->st.misses++;
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    uint64_t h = XXH3_64bits_withSeed(key ? key : "", klen, c->seed);
    pthread_mutex_lock(&c->lock);
    uint32_t set;
    slot *s = find(c, h, key, klen, &set);
    if (s) {
        s->used = ++c->clock;
        if (bitmap_out) memcpy(bitmap_out, key_of(s) + c->key_max, c->nbitmap);
        c->st.hits++;
    } else {
        c->st.misses++;
    }
    pthread_mutex_unlock(&c->lock);
    return s != NULL;
}

rw_status rw_cache_store(rw_cache *c, const void *key, size_t klen, const uint8_t *bitmap)
{
    if (!c || !bitmap || (!key && klen)) return RW_E_INVALID;
    if (klen > c->key_max) {
        pthread_mutex_lock(&c->lock);
        c->st.refused++;
        pthread_mutex_unlock(&c->lock);
        return RW_E_LIMIT;
    }
    uint64_t h = XXH3_64bits_withSeed(key ? key : "", klen, c->seed);
    pthread_mutex_lock(&c->lock);
    uint32_t set;
    slot *s = find(c, h, key, klen, &set);
    if (!s) {
        /* an empty way, else the least recently used one */
        slot *victim = NULL;
        for (uint32_t w = 0; w < RW_CACHE_WAYS; w++) {
            slot *x = slot_at(c, set, w);
            if (!x->used) {
                victim = x;
                break;
            }
            if (!victim || x->used < victim->used) victim = x;
        }
        s = victim;
        if (s->used) c->st.evictions++;
        else c->st.entries++;
        s->hash = h;
        s->klen = (uint32_t)klen;
        if (klen) memcpy(key_of(s), key, klen);
    }
    memcpy(key_of(s) + c->key_max, bitmap, c->nbitmap);
    s->used = ++c->clock;
    c->st.stores++;
    pthread_mutex_unlock(&c->lock);
    return RW_OK;
}

int rw_cache_forget(rw_cache *c, const void *key, size_t klen)
{
    if (!c || (!key && klen) || klen > c->key_max) return 0;
    uint64_t h = XXH3_64bits_withSeed(key ? key : "", klen, c->seed);
    pthread_mutex_lock(&c->lock);
    uint32_t set;
    slot *s = find(c, h, key, klen, &set);
    if (s) {
        s->used = 0;
        c->st.entries--;
    }
    pthread_mutex_unlock(&c->lock);
    return s != NULL;
}

void rw_cache_clear(rw_cache *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    for (uint32_t set = 0; set < c->nsets; set++)
        for (uint32_t w = 0; w < RW_CACHE_WAYS; w++) slot_at(c, set, w)->used = 0;
    c->st.entries = 0;
    pthread_mutex_unlock(&c->lock);
}

void rw_cache_stats_get(rw_cache *c, rw_cache_stats *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}

size_t rw_cache_size(const rw_cache *c) { return c ? c->bytes : 0; }
