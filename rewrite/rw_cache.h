/*
 * rw_cache.h: the per-resource skip cache (docs/rewrite.md, "Skip
 * cache"): a bounded table from a caller-supplied key (bytes: URL and
 * ETag, say, so that a key names one version of one resource) to the
 * bitmap of the rules that fired on it (rw_stream_matched). A resource
 * whose bitmap is empty can stream through unscanned next time
 * (rw_stream_set_mask with the empty bitmap); a non-empty bitmap can be
 * used as the stream's mask, which gives the same output for the same
 * body (SRW and sub_filter modes: rules that never fired never decide
 * anything), but saves little: one Hyperscan database holds every rule,
 * so the scan costs the same (bench/rewrite: the "mask" column).
 *
 * Bounds: `capacity` entries (rounded up to a multiple of RW_CACHE_WAYS)
 * of at most `key_max` key bytes each, all allocated by rw_cache_new;
 * nothing is allocated afterwards. Longer keys are not cached (a lookup
 * misses, a store is refused with RW_E_LIMIT and counted).
 *
 * Eviction: the table is RW_CACHE_WAYS-way set-associative; a key's set
 * is chosen by a hash of the key (XXH3-64 with a per-cache random seed,
 * so that keys cannot be chosen to collide), and a store into a full set
 * replaces its least recently used entry (a lookup hit or a store counts
 * as a use).
 *
 * Threads: every function may be called from any number of threads at
 * once on the same cache (one mutex guards the table); rw_cache_free only
 * when no other call is running.
 */
#ifndef RW_CACHE_H
#define RW_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "rw_build.h"

#define RW_CACHE_WAYS 8u

typedef struct rw_cache rw_cache;

typedef struct rw_cache_stats {
    uint64_t hits, misses;  /* lookups */
    uint64_t stores;        /* stores accepted */
    uint64_t evictions;     /* stores that replaced another key */
    uint64_t refused;       /* stores of keys over key_max */
    uint64_t entries;       /* keys held now */
} rw_cache_stats;

/* A cache for bitmaps of nrules rules ((nrules + 7) / 8 bytes), holding
 * up to `capacity` keys of up to key_max bytes. Returns RW_OK and stores
 * it in *out, RW_E_INVALID (NULL out, capacity or key_max 0, more than
 * RW_MAX_RULES rules), RW_E_LIMIT (the table would pass 1 GiB) or
 * RW_E_NOMEM. `al` may be NULL. */
rw_status rw_cache_new(uint32_t nrules, uint32_t capacity, uint32_t key_max,
                       const vm_allocator *al, rw_cache **out);
void rw_cache_free(rw_cache *c);

/* Looks the key up (klen bytes; key may be NULL when klen is 0). On a
 * hit returns 1 and copies the bitmap to bitmap_out (may be NULL); on a
 * miss returns 0. */
int rw_cache_lookup(rw_cache *c, const void *key, size_t klen, uint8_t *bitmap_out);

/* Stores the key's bitmap, replacing an older one for the same key.
 * Returns RW_OK, RW_E_INVALID (NULL cache or bitmap), RW_E_LIMIT (the key
 * is longer than key_max: not stored). */
rw_status rw_cache_store(rw_cache *c, const void *key, size_t klen, const uint8_t *bitmap);

/* Forgets one key (a new version of the resource, say); returns 1 if it
 * was there, 0 otherwise. */
int rw_cache_forget(rw_cache *c, const void *key, size_t klen);
/* Forgets every key (the counters stay). */
void rw_cache_clear(rw_cache *c);

void rw_cache_stats_get(rw_cache *c, rw_cache_stats *out);
/* Bytes the cache allocated. */
size_t rw_cache_size(const rw_cache *c);

#endif
